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

/* NumPy has no logsumexp: the usual max-shifted form, as SciPy computes it. */
#define NUMPY_LOGSUMEXP \
    "(lambda m: np.log(np.sum(np.exp(a - m[:, None]), axis=-1)) + m)(np.max(a, axis=-1))"

/* bytes_per_elem: 8 per float64 read of a plus 8 per element written at a's
 * size; b (8 KB) and reduced outputs (n / OB_COLS elements) are left out. */
static const ob_row_t rows[] = {
    {"exp", 1, build_exp, "np.exp(a, out=out)", 16.0, false},
    {"add_bcast", 2, build_add_bcast, "np.add(a, b, out=out)", 16.0, true},
    {"sum", 1, build_sum, "np.sum(a, axis=-1, out=out)", 8.0, true},
    {"max", 1, build_max, "np.max(a, axis=-1, out=out)", 8.0, true},
    {"expm1", 1, build_expm1, "np.expm1(a, out=out)", 16.0, false},
    {"arctan2", 2, build_arctan2, "np.arctan2(a, b, out=out)", 16.0, false},
    {"logsumexp", 1, build_logsumexp, NUMPY_LOGSUMEXP, 8.0, false},
    {"cumsum", 1, build_cumsum, "np.cumsum(a, axis=-1, out=out)", 16.0, true},
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
