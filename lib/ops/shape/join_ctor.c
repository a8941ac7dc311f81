/* The constructors over Join and Subtensor: concatenate (mixed dtypes cast
 * to their promotion, as np.concatenate), stack (each input gains the new
 * axis through a DimShuffle view, then Join) and split (several Subtensor
 * views of x: their gradients are IncSubtensors into zeros, summed, which is
 * the concatenation of the parts' gradients with zeros for a part not
 * reaching the cost). */
#include <stdlib.h>
#include <string.h>

#include "array_int.h"
#include "graph/ctor_int.h"
#include "ops_int.h"
#include "weft/array_ops.h"
#include "weft/elemwise.h"
#include "weft/shape_ops.h"


weft_status_t weft__array_check_inputs(weft_graph_t *g, const char *name, size_t n,
                                       weft_var_t *const *xs, int min_ndim, const char *file,
                                       int line, int *ndim, weft_dtype_t *dt)
{
    if (n == 0 || !xs) {
        return weft_graph_set_error(g, WEFT_EINVAL, "%s (at %s:%d): needs at least one input",
                                    name, file, line);
    }
    for (size_t i = 0; i < n; i++) {
        if (!xs[i]) {
            return weft__ctor_status(g) != WEFT_OK ? weft__ctor_status(g) : WEFT_EINVAL;
        }
        char vb[256];
        weft_var_print(xs[i], vb, sizeof vb);
        const weft_type_t *t = weft_var_type(xs[i]);
        if (weft_var_graph(xs[i]) != g) {
            return weft_graph_set_error(g, WEFT_EFOREIGN, "%s (at %s:%d): input %zu %s belongs "
                                        "to another graph context", name, file, line, i, vb);
        }
        if (weft_type_kind(t) != WEFT_TYPE_TENSOR || weft_type_ndim(t) < min_ndim ||
            weft_type_ndim(t) != weft_type_ndim(weft_var_type(xs[0]))) {
            return weft_graph_set_error(g, WEFT_ETYPE, "%s (at %s:%d): input %zu %s is not a "
                                        "tensor with the ndim of input 0 (at least %d)", name,
                                        file, line, i, vb, min_ndim);
        }
        *dt = i == 0 ? weft_type_dtype(t) : weft_dtype_promote(*dt, weft_type_dtype(t));
    }
    *ndim = weft_type_ndim(weft_var_type(xs[0]));
    return WEFT_OK;
}

weft_status_t weft__array_norm_axis(weft_graph_t *g, const char *name, int axis, int ndim,
                                    const char *file, int line, int *out)
{
    *out = axis < 0 ? axis + ndim : axis;
    if (*out < 0 || *out >= ndim) {
        return weft_graph_set_error(g, WEFT_EINVAL, "%s (at %s:%d): axis %d out of range for "
                                    "%d dims", name, file, line, axis, ndim);
    }
    return WEFT_OK;
}

/* Join of xs (converted to dt) on axis a. */
static weft_status_t join_build(weft_graph_t *g, size_t n, weft_var_t *const *xs, int a,
                                int ndim, weft_dtype_t dt, const char *file, int line,
                                weft_var_t **out)
{
    weft_var_t **cs = malloc(n * sizeof *cs);
    if (!cs) {
        return weft_graph_set_error(g, WEFT_ENOMEM, "concatenate: out of memory");
    }
    weft_status_t st = WEFT_OK;
    for (size_t i = 0; st == WEFT_OK && i < n; i++) {
        cs[i] = xs[i];
        if (weft_type_dtype(weft_var_type(xs[i])) != dt) {
            st = weft__got(g, cs[i] = weft_cast_at(g, xs[i], dt, file, line));
        }
    }
    const int32_t props[2] = {a, ndim};
    const weft_op_t *op = NULL;
    if (st == WEFT_OK) {
        st = weft_op_create(g, &weft__join_class, props, &op);
    }
    if (st == WEFT_OK) {
        st = weft__got(g, *out = weft_op_call_at(g, op, n, cs, file, line));
    }
    free(cs);
    return st;
}

static weft_status_t concat_impl(weft_graph_t *g, size_t n, weft_var_t *const *xs, int axis,
                                 const char *file, int line, weft_var_t **out)
{
    int ndim = 0, a = 0;
    weft_dtype_t dt = WEFT_BOOL;
    weft_status_t st = weft__array_check_inputs(g, "concatenate", n, xs, 1, file, line, &ndim, &dt);
    if (st == WEFT_OK) {
        st = weft__array_norm_axis(g, "concatenate", axis, ndim, file, line, &a);
    }
    return st == WEFT_OK ? join_build(g, n, xs, a, ndim, dt, file, line, out) : st;
}

weft_var_t *weft_concatenate_at(weft_graph_t *g, size_t n, weft_var_t *const *xs, int axis,
                                const char *file, int line)
{
    weft_var_t *out = NULL;
    if (!g) {
        return NULL;
    }
    weft__ctor_begin(g);
    weft_status_t st = concat_impl(g, n, xs, axis, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_concatenate", file, line);
}

/* xs[i] with a new length-1 axis at a, for stack. */
static weft_status_t stack_parts(weft_graph_t *g, size_t n, weft_var_t *const *xs, int a,
                                 int ndim, const char *file, int line, weft_var_t **parts)
{
    int order[WEFT_MAX_NDIM];
    for (int d = 0, k = 0; d <= ndim; d++) {
        order[d] = d == a ? WEFT_DIMSHUFFLE_NEW : k++;
    }
    for (size_t i = 0; i < n; i++) {
        weft_status_t st =
            weft__got(g, parts[i] = weft_dimshuffle_at(g, xs[i], ndim + 1, order, file, line));
        if (st != WEFT_OK) {
            return st;
        }
    }
    return WEFT_OK;
}

static weft_status_t stack_impl(weft_graph_t *g, size_t n, weft_var_t *const *xs, int axis,
                                const char *file, int line, weft_var_t **out)
{
    int ndim = 0, a = 0;
    weft_dtype_t dt = WEFT_BOOL;
    weft_status_t st = weft__array_check_inputs(g, "stack", n, xs, 0, file, line, &ndim, &dt);
    if (st == WEFT_OK && ndim >= WEFT_MAX_NDIM) {
        st = weft_graph_set_error(g, WEFT_EINVAL, "stack (at %s:%d): inputs have %d dims, "
                                  "the most is %d", file, line, ndim, WEFT_MAX_NDIM - 1);
    }
    if (st == WEFT_OK) {
        st = weft__array_norm_axis(g, "stack", axis, ndim + 1, file, line, &a);
    }
    weft_var_t **parts = st == WEFT_OK ? malloc(n * sizeof *parts) : NULL;
    if (st == WEFT_OK && !parts) {
        st = weft_graph_set_error(g, WEFT_ENOMEM, "stack: out of memory");
    }
    if (st == WEFT_OK) {
        st = stack_parts(g, n, xs, a, ndim, file, line, parts);
    }
    if (st == WEFT_OK) {
        st = join_build(g, n, parts, a, ndim + 1, dt, file, line, out);
    }
    free(parts);
    return st;
}

weft_var_t *weft_stack_at(weft_graph_t *g, size_t n, weft_var_t *const *xs, int axis,
                          const char *file, int line)
{
    weft_var_t *out = NULL;
    if (!g) {
        return NULL;
    }
    weft__ctor_begin(g);
    weft_status_t st = stack_impl(g, n, xs, axis, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_stack", file, line);
}

weft_status_t weft__array_axis_slice(weft_graph_t *g, weft_var_t *x, int a, int64_t from,
                                     int64_t to, int64_t step, const char *file, int line,
                                     weft_var_t **out)
{
    weft_slice_t idx[WEFT_MAX_NDIM];
    for (int d = 0; d <= a; d++) {
        weft_slice_t all = WEFT_SLICE_ALL, part = WEFT_SLICE(from, to < 0 ? WEFT_SLICE_NONE : to,
                                                             step);
        idx[d] = d == a ? part : all;
    }
    return weft__got(g, *out = weft_subtensor_at(g, x, (size_t)a + 1, idx, file, line));
}

/* outs[k] = x[..., bounds[k]:bounds[k+1]] on axis a, k < n_out. */
static weft_status_t split_parts(weft_graph_t *g, weft_var_t *x, int a, size_t n_out,
                                 const int64_t *bounds, const char *file, int line,
                                 weft_var_t **outs)
{
    weft_status_t st = WEFT_OK;
    for (size_t k = 0; st == WEFT_OK && k < n_out; k++) {
        st = weft__array_axis_slice(g, x, a, bounds[k], bounds[k + 1], 1, file, line, &outs[k]);
    }
    return st;
}

/* Shared by both splits: x checked, axis normalized, *len its static length. */
static weft_status_t split_begin(weft_graph_t *g, weft_var_t *x, int axis, const char *file,
                                 int line, int *a, int64_t *len)
{
    int ndim = 0;
    weft_dtype_t dt = WEFT_BOOL;
    weft_status_t st = weft__array_check_inputs(g, "split", 1, &x, 1, file, line, &ndim, &dt);
    if (st == WEFT_OK) {
        st = weft__array_norm_axis(g, "split", axis, ndim, file, line, a);
    }
    if (st == WEFT_OK && (*len = weft_type_dim(weft_var_type(x), *a)) < 0) {
        char vb[256];
        weft_var_print(x, vb, sizeof vb);
        st = weft_graph_set_error(g, WEFT_ESHAPE, "split (at %s:%d): input %s has no static "
                                  "length on axis %d", file, line, vb, *a);
    }
    return st;
}

static weft_status_t split_impl(weft_graph_t *g, weft_var_t *x, int axis, size_t n_sections,
                                weft_var_t **outs, const char *file, int line)
{
    int a = 0;
    int64_t len = 0;
    if (!outs || n_sections == 0 || n_sections > (size_t)INT32_MAX) {
        return weft_graph_set_error(g, WEFT_EINVAL, "split (at %s:%d): needs n_sections >= 1 "
                                    "and outs", file, line);
    }
    weft_status_t st = split_begin(g, x, axis, file, line, &a, &len);
    if (st == WEFT_OK && len % (int64_t)n_sections != 0) {
        st = weft_graph_set_error(g, WEFT_ESHAPE, "split (at %s:%d): length %lld on axis %d "
                                  "does not divide into %zu equal sections", file, line,
                                  (long long)len, a, n_sections);
    }
    int64_t *bounds = st == WEFT_OK ? malloc((n_sections + 1) * sizeof *bounds) : NULL;
    if (st == WEFT_OK && !bounds) {
        st = weft_graph_set_error(g, WEFT_ENOMEM, "split: out of memory");
    }
    for (size_t k = 0; st == WEFT_OK && k <= n_sections; k++) {
        bounds[k] = (int64_t)k * (len / (int64_t)n_sections);
    }
    if (st == WEFT_OK) {
        st = split_parts(g, x, a, n_sections, bounds, file, line, outs);
    }
    free(bounds);
    return st;
}

weft_var_t *weft_split_at(weft_graph_t *g, weft_var_t *x, size_t n_sections, int axis,
                          weft_var_t **outs, const char *file, int line)
{
    if (!g) {
        return NULL;
    }
    weft__ctor_begin(g);
    weft_status_t st = x ? split_impl(g, x, axis, n_sections, outs, file, line)
                         : weft__ctor_status(g);
    return weft__ctor_end(g, st, st == WEFT_OK ? outs[0] : NULL, "weft_split", file, line);
}

/* NumPy's bounds of split at indices: each index taken like a slice bound
 * (negative from the end, clamped to [0, len]); a bound below the previous
 * gives an empty part, as NumPy. */
static void index_bounds(size_t n_idx, const int64_t *indices, int64_t len, int64_t *bounds)
{
    bounds[0] = 0;
    for (size_t k = 0; k < n_idx; k++) {
        int64_t b = indices[k] < 0 ? indices[k] + len : indices[k];
        b = b < 0 ? 0 : (b > len ? len : b);
        bounds[k + 1] = b;
    }
    bounds[n_idx + 1] = len;
}

static weft_status_t split_idx_impl(weft_graph_t *g, weft_var_t *x, int axis, size_t n_idx,
                                    const int64_t *indices, weft_var_t **outs, const char *file,
                                    int line)
{
    int a = 0;
    int64_t len = 0;
    if (!outs || (n_idx > 0 && !indices) || n_idx >= (size_t)INT32_MAX) {
        return weft_graph_set_error(g, WEFT_EINVAL, "split (at %s:%d): NULL indices or outs",
                                    file, line);
    }
    weft_status_t st = split_begin(g, x, axis, file, line, &a, &len);
    int64_t *bounds = st == WEFT_OK ? malloc((n_idx + 2) * sizeof *bounds) : NULL;
    if (st == WEFT_OK && !bounds) {
        st = weft_graph_set_error(g, WEFT_ENOMEM, "split: out of memory");
    }
    if (st == WEFT_OK) {
        index_bounds(n_idx, indices, len, bounds);
        st = split_parts(g, x, a, n_idx + 1, bounds, file, line, outs);
    }
    free(bounds);
    return st;
}

weft_var_t *weft_split_indices_at(weft_graph_t *g, weft_var_t *x, size_t n_idx,
                                  const int64_t *indices, int axis, weft_var_t **outs,
                                  const char *file, int line)
{
    if (!g) {
        return NULL;
    }
    weft__ctor_begin(g);
    weft_status_t st = x ? split_idx_impl(g, x, axis, n_idx, indices, outs, file, line)
                         : weft__ctor_status(g);
    return weft__ctor_end(g, st, st == WEFT_OK ? outs[0] : NULL, "weft_split_indices", file,
                          line);
}
