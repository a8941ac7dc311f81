/* The diagonal-tile kernel of the tile Cholesky demos (tile_cholesky,
 * tile_cholesky_mpi, cholesky_mpi_sim): the Cholesky factor of one tile and,
 * in the same pass, its inverse, by recursive halving on dtrmm and dsyrk.
 *
 * Why not LAPACK's dpotrf + dtrtri: with one OpenBLAS thread they run at
 * 20-30 GFLOP/s on 256-512 tiles (their inner triangular solves are slow),
 * against 70-80 for dtrmm and dsyrk, and the diagonal tile is on the
 * factorization's critical path at every step. Halving until a block of
 * CHOL_TILE_BASE leaves LAPACK only the small blocks and does the rest as
 * products: 2-2.6x faster on this machine (docs/distributed.md §8).
 *
 * Only BLAS and LAPACKE: no weft types, so the simulator times the same
 * code the demos run. Thread: any (no shared state). */
#ifndef WEFT_DEMOS_TILE_CHOLESKY_KERNEL_H
#define WEFT_DEMOS_TILE_CHOLESKY_KERNEL_H

/* Blocks of at most this order go to LAPACK (dpotrf, dtrtri). */
enum { CHOL_TILE_BASE = 16 };

/* a: an n x n row-major tile with row stride lda; its lower triangle becomes
 * L with L L^T = A (the strict upper triangle is left as it was). w: n x n
 * row-major with row stride ldw, not overlapping a: with `inverse`, its
 * lower triangle becomes L^-1 (the strict upper triangle is undefined);
 * without, it is scratch. Returns 0, or i > 0 when the leading minor of
 * order i is not positive definite (as LAPACK's info; a and w are then
 * partly overwritten), or -1 for a bad argument (n < 0, lda or ldw < n). */
int chol_tile_factor(double *a, int lda, double *w, int ldw, int n, int inverse);

#endif
