/* weft-ops-bench's op rows: one per op, each a weft graph on the inputs a
 * (n / OB_COLS, OB_COLS) and b (OB_COLS,), the NumPy expression that computes
 * the same result, the bytes the op must move and whether it is memory-bound
 * (only those are held to 0.8x memcpy bandwidth). Adding an op is adding a
 * builder and a row. */
#include <string.h>

#include "opsbench.h"

static const int last_axis[1] = {-1};

static weft_var_t *build_exp(weft_graph_t *g, weft_var_t *const *in)
{
    return weft_exp(g, in[0]);
}

static weft_var_t *build_add_bcast(weft_graph_t *g, weft_var_t *const *in)
{
    return weft_add(g, in[0], in[1]);
}

static weft_var_t *build_sum(weft_graph_t *g, weft_var_t *const *in)
{
    return weft_sum(g, in[0], 1, last_axis, false);
}

static weft_var_t *build_max(weft_graph_t *g, weft_var_t *const *in)
{
    return weft_max(g, in[0], 1, last_axis, false);
}

/* The issue-17 target rows (expm1, arctan2 with broadcasting, logsumexp over
 * the last axis, cumsum along it). */
static weft_var_t *build_expm1(weft_graph_t *g, weft_var_t *const *in)
{
    return weft_expm1(g, in[0]);
}

static weft_var_t *build_arctan2(weft_graph_t *g, weft_var_t *const *in)
{
    return weft_arctan2(g, in[0], in[1]);
}

static weft_var_t *build_logsumexp(weft_graph_t *g, weft_var_t *const *in)
{
    return weft_logsumexp(g, in[0], 1, last_axis, false);
}

static weft_var_t *build_cumsum(weft_graph_t *g, weft_var_t *const *in)
{
    return weft_cumsum(g, in[0], -1);
}

/* Issue 18's rows: softmax over the last axis of (4096, 1024); solve with
 * one right-hand side and the singular values at n = 512. */
static weft_var_t *build_softmax(weft_graph_t *g, weft_var_t *const *in)
{
    return weft_softmax(g, in[0], -1);
}

static weft_var_t *build_solve(weft_graph_t *g, weft_var_t *const *in)
{
    return weft_solve(g, in[0], in[1]);
}

static weft_var_t *build_svd(weft_graph_t *g, weft_var_t *const *in)
{
    return weft_svd(g, in[0], false, false, NULL, NULL);
}

/* take/gather of 10^6 rows: a (10^6, 16) table gathered by 10^6 random
 * int64 row indices; concatenate of 8 blocks: a's 8 rows (1250000,) each,
 * views of a, joined along axis 0. */
static weft_var_t *build_take(weft_graph_t *g, weft_var_t *const *in)
{
    return weft_take(g, in[0], in[1], 0);
}

static weft_var_t *build_concat8(weft_graph_t *g, weft_var_t *const *in)
{
    weft_var_t *blocks[8];
    for (int64_t i = 0; i < 8; i++) {
        weft_slice_t row = WEFT_SLICE_AT(i);
        blocks[i] = weft_subtensor(g, in[0], 1, &row);
    }
    return weft_concatenate(g, 8, blocks, 0);
}

#define NUMPY_SOFTMAX \
    "(lambda e: np.divide(e, e.sum(axis=-1, keepdims=True), out=out))" \
    "(np.exp(a - a.max(axis=-1, keepdims=True)))"

/* NumPy has no logsumexp: the usual max-shifted form, as SciPy computes it. */
#define NUMPY_LOGSUMEXP \
    "(lambda m: np.log(np.sum(np.exp(a - m[:, None]), axis=-1)) + m)(np.max(a, axis=-1))"

/* bytes_per_elem: 8 per float64 read of a plus 8 per element written at a's
 * size; b (8 KB) and reduced outputs (n / OB_COLS elements) are left out. */
static const ob_row_t rows[] = {
    {"exp", 1, build_exp, "np.exp(a, out=out)", 16.0, false, 0, 0, false},
    {"add_bcast", 2, build_add_bcast, "np.add(a, b, out=out)", 16.0, true, 0, 0, false},
    {"sum", 1, build_sum, "np.sum(a, axis=-1, out=out)", 8.0, true, 0, 0, false},
    {"max", 1, build_max, "np.max(a, axis=-1, out=out)", 8.0, true, 0, 0, false},
    {"expm1", 1, build_expm1, "np.expm1(a, out=out)", 16.0, false, 0, 0, false},
    {"arctan2", 2, build_arctan2, "np.arctan2(a, b, out=out)", 16.0, false, 0, 0, false},
    {"logsumexp", 1, build_logsumexp, NUMPY_LOGSUMEXP, 8.0, false, 0, 0, false},
    {"cumsum", 1, build_cumsum, "np.cumsum(a, axis=-1, out=out)", 16.0, true, 0, 0, false},
    {"softmax", 1, build_softmax, NUMPY_SOFTMAX, 16.0, false, 4096, 1024, false},
    {"solve", 2, build_solve, "np.linalg.solve(a, b)", 8.0, false, 512, 512, false},
    {"svd", 1, build_svd, "np.linalg.svd(a, compute_uv=False)", 8.0, false, 512, 512, false},
    /* take: 16 doubles read and written per row, plus its 8-byte index */
    {"take", 2, build_take, "np.take(a, b, axis=0, out=out)", 16.5, false, 1000000, 16, true},
    {"concat8", 1, build_concat8, "np.concatenate(list(a), out=out)", 16.0, true, 8, 1250000,
     false},
};

const ob_row_t *ob_rows(size_t *n)
{
    *n = sizeof rows / sizeof rows[0];
    return rows;
}

const ob_row_t *ob_row_find(const char *name)
{
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        if (strcmp(rows[i].name, name) == 0) {
            return &rows[i];
        }
    }
    return NULL;
}
