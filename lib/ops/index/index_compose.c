/* The indexing constructors composed of Take and its updates
 * (weft/index_ops.h): np.put on the flattened array and one_hot (NumPy's
 * np.eye(depth, dtype=dtype)[indices]). They add no op class: their graphs
 * are Reshape, AdvancedSetSubtensor, Take and a constant. */
#include "graph/ctor_int.h"
#include "index/index_int.h"
#include "ops_int.h"

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

/* The depth x depth identity of dtype dt as a constant. */
static weft_status_t eye_const(weft_graph_t *g, weft_dtype_t dt, int64_t depth, const char *file,
                               int line, weft_var_t **out)
{
    const int64_t shape[2] = {depth, depth};
    weft_tensor_t *t = NULL;
    const weft_type_t *ty;
    weft_status_t st = weft_tensor_zeros(dt, 2, shape, &t);
    for (int64_t i = 0; st == WEFT_OK && i < depth; i++) {
        const int64_t at[2] = {i, i};
        st = weft_tensor_set(t, at, 1.0);
    }
    if (st == WEFT_OK) st = weft_type_tensor(g, dt, 2, shape, &ty);
    if (st == WEFT_OK) {
        st = weft__got(g, *out = weft_constant_create_at(g, ty, weft_tensor_data(t),
                                                        weft_tensor_size(t) *
                                                            weft_dtype_size(dt),
                                                        file, line));
    }
    weft_tensor_release(t);
    return st == WEFT_ENOMEM ? weft_graph_set_error(g, st, "one_hot (at %s:%d): out of memory "
                                                    "for the %lld x %lld identity", file, line,
                                                    (long long)depth, (long long)depth)
                             : st;
}

weft_var_t *weft_one_hot_at(weft_graph_t *g, weft_var_t *indices, int64_t depth,
                            weft_dtype_t dtype, const char *file, int line)
{
    weft_var_t *out = NULL, *eye = NULL;
    weft__ctor_begin(g);
    weft_status_t st = indices ? WEFT_OK : WEFT_EINVAL;
    if (st == WEFT_OK && (depth < 1 || depth > WEFT__ONE_HOT_MAX_DEPTH)) {
        st = weft_graph_set_error(g, WEFT_EINVAL, "one_hot (at %s:%d): depth %lld outside "
                                  "[1, %d]", file, line, (long long)depth,
                                  WEFT__ONE_HOT_MAX_DEPTH);
    }
    if (st == WEFT_OK && ((int)dtype < 0 || (int)dtype >= WEFT_DTYPE_COUNT ||
                          weft_dtype_kind(dtype) == WEFT_KIND_COMPLEX)) {
        st = weft_graph_set_error(g, WEFT_ETYPE, "one_hot (at %s:%d): dtype %d is not a real "
                                  "dtype", file, line, (int)dtype);
    }
    if (st == WEFT_OK) st = eye_const(g, dtype, depth, file, line, &eye);
    if (st == WEFT_OK) st = weft__got(g, out = weft_take_at(g, eye, indices, 0, file, line));
    return weft__ctor_end(g, st, out, "weft_one_hot", file, line);
}
