/* The N-d strided iterator: collapses a broadcast/strided geometry to the
 * fewest dimensions and drives a row kernel over the innermost one (the
 * dtype conversion row kernels: convert.c).
 *
 * Collapsing: length-1 axes are dropped (their stride never matters); then,
 * walking from the outermost axis inwards, axis d merges into the previous
 * kept axis when every operand satisfies stride[prev] == stride[d] * len[d].
 * A C-contiguous operand set collapses to one axis, and so does a contiguous
 * output with a scalar (all-zero strides) input: both become a single row
 * kernel call over every element. The last two remaining axes form a plane
 * walked row by row, in tiles when an operand's rows are strided. */
#include <string.h>

#include "tensor/tensor_int.h"

typedef struct iter_geom {
    int nd;
    int64_t len[WEFT_MAX_NDIM];
    int64_t st[WEFT__ITER_MAX_OPS][WEFT_MAX_NDIM];
} iter_geom_t;

/* Returns false when some axis is empty (nothing to do). */
static bool iter_collapse(int ndim, const int64_t *shape, int nop,
                          const int64_t *const *strides, iter_geom_t *g)
{
    g->nd = 0;
    for (int d = 0; d < ndim; d++)
        if (shape[d] == 0) return false;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] == 1) continue;
        int j = g->nd;
        bool merge = j > 0;
        for (int k = 0; k < nop && merge; k++) {
            int64_t span; /* checked: a borrowed geometry's strides may be huge */
            merge = !__builtin_mul_overflow(strides[k][d], shape[d], &span) &&
                    g->st[k][j - 1] == span;
        }
        if (merge) { /* the kept axis absorbs d and takes d's (inner) stride */
            g->len[j - 1] *= shape[d];
            for (int k = 0; k < nop; k++) g->st[k][j - 1] = strides[k][d];
            continue;
        }
        g->len[j] = shape[d];
        for (int k = 0; k < nop; k++) g->st[k][j] = strides[k][d];
        g->nd++;
    }
    return true;
}

/* Tiles of TILE x TILE elements over the last two axes when some operand
 * walks its innermost axis with a non-unit stride (e.g. x + x.T): each tile
 * then touches TILE rows of that operand's memory instead of one element per
 * page per row, which keeps the TLB and cache working. */
#define TILE 64

static bool iter_needs_tiles(const iter_geom_t *g, int nop)
{
    if (g->nd < 2 || g->len[g->nd - 1] <= TILE || g->len[g->nd - 2] <= TILE) return false;
    for (int k = 0; k < nop; k++) {
        int64_t s = g->st[k][g->nd - 1];
        if (s != 0 && s != 1 && s != -1) return true;
    }
    return false;
}

/* The last two axes (rows r, columns c) from the pointers p. */
static void iter_plane(const iter_geom_t *g, int nop, char *const *p, const size_t *isz,
                       bool tiled, weft__row_fn fn, void *arg)
{
    int r = g->nd - 2, c = g->nd - 1;
    int64_t s[WEFT__ITER_MAX_OPS], tile_r = tiled ? TILE : g->len[r];
    int64_t tile_c = tiled ? TILE : g->len[c];
    char *q[WEFT__ITER_MAX_OPS];
    for (int k = 0; k < nop; k++) s[k] = g->st[k][c];
    for (int64_t i0 = 0; i0 < g->len[r]; i0 += tile_r) {
        int64_t i1 = i0 + tile_r < g->len[r] ? i0 + tile_r : g->len[r];
        for (int64_t j0 = 0; j0 < g->len[c]; j0 += tile_c) {
            int64_t n = j0 + tile_c < g->len[c] ? tile_c : g->len[c] - j0;
            for (int64_t i = i0; i < i1; i++) {
                for (int k = 0; k < nop; k++)
                    q[k] = p[k] + (i * g->st[k][r] + j0 * s[k]) * (int64_t)isz[k];
                fn((size_t)n, q, s, arg);
            }
        }
    }
}

void weft__iter_rows(int ndim, const int64_t *shape, int nop, char *const *base,
                     const int64_t *const *strides, const size_t *isz, weft__row_fn fn,
                     void *arg)
{
    iter_geom_t g;
    if (!iter_collapse(ndim, shape, nop, strides, &g)) return;
    char *p[WEFT__ITER_MAX_OPS];
    int64_t s[WEFT__ITER_MAX_OPS] = {0};
    for (int k = 0; k < nop; k++) p[k] = base[k];
    if (g.nd <= 1) { /* one row: every element (n = 1 for 0-d) */
        for (int k = 0; k < nop && g.nd == 1; k++) s[k] = g.st[k][0];
        fn(g.nd == 1 ? (size_t)g.len[0] : 1, p, s, arg);
        return;
    }
    bool tiled = iter_needs_tiles(&g, nop);
    int64_t idx[WEFT_MAX_NDIM] = {0};
    for (;;) {
        iter_plane(&g, nop, p, isz, tiled, fn, arg);
        /* odometer over the axes outside the plane, moving pointers by bytes */
        int d = g.nd - 3;
        for (; d >= 0; d--) {
            for (int k = 0; k < nop; k++) p[k] += g.st[k][d] * (int64_t)isz[k];
            if (++idx[d] < g.len[d]) break;
            for (int k = 0; k < nop; k++) p[k] -= g.st[k][d] * g.len[d] * (int64_t)isz[k];
            idx[d] = 0;
        }
        if (d < 0) return;
    }
}

bool weft__iter_one_row(int ndim, const int64_t *shape, int nop, const int64_t *const *strides,
                        size_t *n, int64_t *s)
{
    iter_geom_t g;
    for (int k = 0; k < nop; k++) s[k] = 0;
    if (!iter_collapse(ndim, shape, nop, strides, &g)) {
        *n = 0;
        return true;
    }
    if (g.nd > 1) return false;
    for (int k = 0; k < nop && g.nd == 1; k++) s[k] = g.st[k][0];
    *n = g.nd == 1 ? (size_t)g.len[0] : 1;
    return true;
}
