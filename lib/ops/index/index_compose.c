/* The indexing constructors composed of Take and its updates
 * (weft/index_ops.h): np.put on the flattened array and one_hot (NumPy's
 * np.eye(depth, dtype=dtype)[indices]). They add no op class: their graphs
 * are Reshape, AdvancedSetSubtensor, Take and a constant. */
#include "graph/ctor_int.h"
#include "index/index_int.h"
#include "ops_int.h"
#include "weft/array_ops.h"

weft_var_t *weft_put_at(weft_graph_t *g, weft_var_t *x, weft_var_t *indices, weft_var_t *v,
                        const char *file, int line)
{
    weft_var_t *out = NULL, *flat = NULL, *set = NULL;
    const int64_t all = -1;
    weft__ctor_begin(g);
    weft_status_t st = (!x || !indices || !v) ? WEFT_EINVAL : WEFT_OK;
    if (st == WEFT_OK) st = weft__got(g, flat = weft_reshape_at(g, x, 1, &all, file, line));
    if (st == WEFT_OK) {
        st = weft__got(g, set = weft_set_at_at(g, flat, indices, v, 0, false, file, line));
    }
    if (st == WEFT_OK) st = weft__got(g, out = weft_reshape_like_at(g, set, x, file, line));
    return weft__ctor_end(g, st, out, "weft_put", file, line);
}

/* one_hot(indices, depth) as np.eye(depth, dtype)[indices] without the
 * depth^2 identity (so any depth that fits memory): Take of arange(depth)
 * normalizes each index (negative ones count from the end) and fails the
 * node on one outside [-depth, depth) with Take's error; the rows are then
 * Eq(index[..., None], arange(depth)), cast to dtype. Elementwise on the
 * output, so the fixed blocking of Elemwise gives the same bits at any
 * worker count. */
static weft_status_t one_hot_rows(weft_graph_t *g, weft_var_t *indices, int64_t depth,
                                  weft_dtype_t dtype, const char *file, int line,
                                  weft_var_t **out)
{
    weft_var_t *classes = NULL, *idx = NULL, *col = NULL, *hit = NULL;
    weft_status_t st = weft__got(g, classes = weft_arange_at(g, 0.0, (double)depth, 1.0,
                                                             WEFT_INT64, file, line));
    if (st == WEFT_OK) st = weft__got(g, idx = weft_take_at(g, classes, indices, 0, file, line));
    if (st == WEFT_OK) {
        int nd = weft_type_ndim(weft_var_type(idx)), order[WEFT_MAX_NDIM];
        for (int d = 0; d < nd; d++) order[d] = d;
        order[nd] = WEFT_DIMSHUFFLE_NEW;
        st = weft__got(g, col = weft_dimshuffle_at(g, idx, nd + 1, order, file, line));
    }
    if (st == WEFT_OK) {
        st = weft__got(g, hit = weft_binary_at(g, WEFT_ELEMWISE_EQ, col, classes, file, line));
    }
    if (st == WEFT_OK) st = weft__got(g, *out = weft_cast_at(g, hit, dtype, file, line));
    return st;
}

weft_var_t *weft_one_hot_at(weft_graph_t *g, weft_var_t *indices, int64_t depth,
                            weft_dtype_t dtype, const char *file, int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t st = indices ? WEFT_OK : WEFT_EINVAL;
    if (st == WEFT_OK && depth < 0) {
        st = weft_graph_set_error(g, WEFT_EINVAL, "one_hot (at %s:%d): depth %lld is negative",
                                  file, line, (long long)depth);
    }
    if (st == WEFT_OK && ((int)dtype < 0 || (int)dtype >= WEFT_DTYPE_COUNT ||
                          weft_dtype_kind(dtype) == WEFT_KIND_COMPLEX)) {
        st = weft_graph_set_error(g, WEFT_ETYPE, "one_hot (at %s:%d): dtype %d is not a real "
                                  "dtype", file, line, (int)dtype);
    }
    if (st == WEFT_OK) st = one_hot_rows(g, indices, depth, dtype, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_one_hot", file, line);
}
