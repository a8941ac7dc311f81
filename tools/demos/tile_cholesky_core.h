/* The tile_cholesky demo, shared by the tool (tile_cholesky.c) and its test
 * (tests/demos): the Cholesky factor of an n x n SPD matrix computed by a
 * weft graph of in-place tile ops, and the references it is checked and timed
 * against.
 *
 * The matrix is cut into nb x nb tiles (the last row / column of tiles may be
 * smaller). Every tile (i, j) of the lower triangle (i >= j) is a separate
 * mutable input variable; the graph is the right-looking tile algorithm
 *
 *   for k: A_kk <- potrf(A_kk)                 (and W = L_kk^-1 in the same
 *                                              node while k < nt - 1)
 *          A_ik <- A_ik L_kk^-T                 (trsm, i > k: done as
 *                                              A_ik <- A_ik W^T with trmm)
 *          A_ii <- A_ii - A_ik A_ik^T           (syrk, i > k)
 *          A_ij <- A_ij - A_ik A_jk^T           (gemm, i > j > k)
 *
 * each op overwriting its tile in place (destroy_map; W is a new tile); potrf
 * (TilePotrf, TilePotrfInv), trmm and syrk are this demo's op classes
 * (tile_cholesky_ops.c), the gemm is weft's Gemm{inplace} with a transposed
 * view. The function is compiled with
 * accept_inplace, so a DestroyHandler orders the in-place ops, and every tile
 * is updated with its final value (no copy: the value lives in the tile).
 *
 * Thread: one thread per object. */
#ifndef WEFT_DEMOS_TILE_CHOLESKY_CORE_H
#define WEFT_DEMOS_TILE_CHOLESKY_CORE_H

#include <stdint.h>

#include "weft/weft.h"

typedef struct chol_tiles chol_tiles_t;

/* The demo's op classes (borrowed, static). */
extern const weft_op_class_t chol_potrf_class;     /* A <- chol(A), lower, in place */
extern const weft_op_class_t chol_potrf_inv_class; /* the same, and a new tile L^-1 */
extern const weft_op_class_t chol_trmm_class;  /* (W, A): A <- A W^T, in place on A */
extern const weft_op_class_t chol_syrk_class;  /* (C, A): C <- C - A A^T (lower), on C */

/* A seeded symmetric positive definite n x n matrix, row-major: off-diagonal
 * entries uniform in [-1, 1], diagonal n (diagonally dominant). */
weft_status_t chol_make_spd(int n, uint64_t seed, double **out);

/* The compiled tile factorization of an n x n matrix with nb x nb tiles on
 * `pool` (borrowed, must outlive the object). Errors: WEFT_EINVAL (NULL
 * args, n < 1, nb < 1), WEFT_ENOMEM, the compile's status (message printed to
 * stderr). Returns new, free with chol_tiles_destroy. */
weft_status_t chol_tiles_create(int n, int nb, weft_pool_t *pool, chol_tiles_t **out);
void chol_tiles_destroy(chol_tiles_t *t);

/* Copies a's lower triangle into the tiles (outside any timed region). */
void chol_tiles_load(chol_tiles_t *t, const double *a);
/* Factors the tiles in place (one weft_function_call). */
weft_status_t chol_tiles_run(chol_tiles_t *t);
/* Writes the factor L (zeros above the diagonal) into l (n x n). */
void chol_tiles_store(const chol_tiles_t *t, double *l);
weft_function_t *chol_tiles_function(const chol_tiles_t *t);

/* LAPACKE_dpotrf of a (n x n, row-major, lower) with OpenBLAS on `threads`
 * threads (restored after); zeros the upper triangle. Returns LAPACK's info. */
int chol_lapacke(double *a, int n, int threads);

/* ||A - L L^T||_F / ||A||_F (L lower, n x n; A symmetric, only its lower
 * triangle read). Uses OpenBLAS with `threads` threads. NaN when out of
 * memory. */
double chol_residual(const double *a, const double *l, int n, int threads);
/* max |x - y| over n x n entries. */
double chol_max_diff(const double *x, const double *y, int n);

/* GFLOP/s of two 1-thread dgemms of order m run at once on two threads (the
 * practical peak of two cores): the best of `reps` runs. NaN on failure. */
double chol_dgemm_peak(int m, int reps);

#endif /* WEFT_DEMOS_TILE_CHOLESKY_CORE_H */
