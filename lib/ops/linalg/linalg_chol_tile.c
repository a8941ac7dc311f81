/* The tile Cholesky factorization of large matrices inside the Cholesky
 * kernel (the algorithm of examples/tile_cholesky.c, run on the node's pool
 * rather than as a graph): the row-major matrix is cut into tiles of
 * CHOL_TILE x CHOL_TILE (the last row / column of tiles shorter), and for
 * each diagonal tile k in turn
 *   potrf  L(k,k)  = chol(A(k,k))
 *   trsm   L(i,k)  = A(i,k) L(k,k)^-T                 (every i > k, in parallel)
 *   update A(i,j) -= L(i,k) L(j,k)^T  (syrk for i == j, every k < j <= i, in parallel)
 * with one one-thread BLAS / LAPACK call per tile. The tiles are fixed by n
 * alone and each tile sees its updates in the order of k, so the factor has
 * the same bits at any worker count (weft_kernel_parallel_for's rule); they
 * differ from one ?potrf call's to rounding (another blocking). */
#include "linalg_int.h"

#define CHOL_TILE 256

bool weft__chol_tiled_applies(weft_dtype_t dt, int64_t n)
{
    /* one-thread calls per tile: not when LAPACK nodes are set to several
     * OpenBLAS threads (or the pool's free workers) */
    return (dt == WEFT_FLOAT32 || dt == WEFT_FLOAT64) && n >= WEFT__CHOL_TILE_MIN_ORDER &&
           weft_blas_get_threads(WEFT_BLAS_KIND_LAPACK) == 1;
}

typedef struct chol_tiles {
    weft_dtype_t dt;
    char *a;
    int64_t n, k, nt; /* order, current diagonal tile, tiles per side */
    size_t es;
} chol_tiles_t;

static int64_t tile_len(const chol_tiles_t *c, int64_t t)
{
    int64_t rest = c->n - t * CHOL_TILE;
    return rest < CHOL_TILE ? rest : CHOL_TILE;
}

static char *tile_at(const chol_tiles_t *c, int64_t i, int64_t j)
{
    return c->a + (size_t)((i * c->n + j) * CHOL_TILE) * c->es;
}

/* Ranges over the tiles i = k + 1 + r below the diagonal tile k. */
static weft_status_t trsm_range(void *arg, size_t begin, size_t end)
{
    const chol_tiles_t *c = arg;
    for (size_t r = begin; r < end; r++) {
        int64_t i = c->k + 1 + (int64_t)r;
        weft__blas_trsm(c->dt, true, true, true, false, tile_len(c, i), tile_len(c, c->k), 1.0,
                        tile_at(c, c->k, c->k), c->n, tile_at(c, i, c->k), c->n);
    }
    return WEFT_OK;
}

/* Ranges over the trailing tiles (i, j), k < j <= i, numbered row by row. */
static weft_status_t update_range(void *arg, size_t begin, size_t end)
{
    const chol_tiles_t *c = arg;
    int64_t bk = tile_len(c, c->k);
    for (size_t p = begin; p < end; p++) {
        int64_t i = c->k + 1, left = (int64_t)p;
        while (left >= i - c->k) { /* row i holds i - k tiles */
            left -= i - c->k;
            i++;
        }
        int64_t j = c->k + 1 + left;
        if (i == j) {
            weft__blas_syrk(c->dt, true, false, tile_len(c, i), bk, -1.0, tile_at(c, i, c->k),
                            c->n, 1.0, tile_at(c, i, i), c->n);
        } else {
            weft__blas_gemm(c->dt, false, true, tile_len(c, i), tile_len(c, j), bk, -1.0,
                            tile_at(c, i, c->k), c->n, tile_at(c, j, c->k), c->n, 1.0,
                            tile_at(c, i, j), c->n);
        }
    }
    return WEFT_OK;
}

weft_status_t weft__chol_tiled(weft_kernel_ctx_t *ctx, weft_dtype_t dt, int64_t n, void *a,
                               int *info)
{
    chol_tiles_t c = {dt, a, n, 0, (n + CHOL_TILE - 1) / CHOL_TILE, weft_dtype_size(dt)};
    *info = 0;
    for (c.k = 0; c.k < c.nt; c.k++) {
        int r = weft__lapack_potrf(dt, true, tile_len(&c, c.k), tile_at(&c, c.k, c.k), n);
        if (r != 0) { /* a failing minor's order counts from the matrix's start */
            *info = r > 0 ? (int)(c.k * CHOL_TILE) + r : r;
            return WEFT_OK;
        }
        size_t below = (size_t)(c.nt - c.k - 1);
        if (below == 0) {
            break;
        }
        weft_status_t st = weft_kernel_parallel_for(ctx, below, 1, trsm_range, &c);
        if (st == WEFT_OK) {
            st = weft_kernel_parallel_for(ctx, below * (below + 1) / 2, 1, update_range, &c);
        }
        if (st != WEFT_OK) {
            return st;
        }
    }
    return WEFT_OK;
}
