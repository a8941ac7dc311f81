/* tile, repeat, pad and roll over axes WITHOUT static lengths, and repeat
 * with a repeats vector (weft/symshape.h, docs/shapes.md §4): each reads x
 * along one axis through the source indices AxisIndex computes from the
 * run-time length (axis_index.c) with Take, whose gradient accumulates
 * every copy (the sum of the repeated slices). Constant padding is a
 * SetSubtensor of x into a full block of symbolic size instead (its
 * gradient: gz's middle block). The static constructors (alloc_ctor.c,
 * view_ctor.c) come here when x lacks a static length they need. */
#include <string.h>

#include "array_int.h"
#include "graph/ctor_int.h"
#include "ops_int.h"
#include "symshape_int.h"
#include "weft/array_ops.h"
#include "weft/elemwise.h"
#include "weft/index_ops.h"
#include "weft/shape_ops.h"
#include "weft/symshape.h"

bool weft__has_unknown_dim(const weft_var_t *x)
{
    const weft_type_t *t = weft_var_type(x);
    for (int d = 0; d < weft_type_ndim(t); d++)
        if (weft_type_dim(t, d) == WEFT_DIM_UNKNOWN) return true;
    return false;
}

/* Axis d's length plus `add` as an int64 0-d: a constant when static. */
static weft_status_t size_of(weft_graph_t *g, weft_var_t *x, int d, int64_t add,
                             const char *file, int line, weft_var_t **out)
{
    int64_t n = weft_type_dim(weft_var_type(x), d);
    if (n >= 0) return weft__got(g, *out = weft_constant_scalar_at(g, WEFT_INT64,
                                                                   (double)(n + add), file, line));
    weft_var_t *s, *c;
    weft_status_t st = weft__got(g, s = weft_shape_i_at(g, x, d, file, line));
    if (st != WEFT_OK || add == 0) return st == WEFT_OK ? (*out = s, WEFT_OK) : st;
    st = weft__got(g, c = weft_constant_scalar_at(g, WEFT_INT64, (double)add, file, line));
    return st == WEFT_OK
               ? weft__got(g, *out = weft_binary_at(g, WEFT_ELEMWISE_ADD, s, c, file, line))
               : st;
}

/* take(x, AxisIndex{mode, a, b}(len(x, axis)[, reps]), axis). */
static weft_status_t axis_take(weft_graph_t *g, weft_var_t *x, int axis, int mode, int64_t a,
                               int64_t b, weft_var_t *reps, const char *file, int line,
                               weft_var_t **out)
{
    weft__axis_index_props_t p = {mode, a, b};
    weft_var_t *in[2] = {NULL, reps}, *idx;
    const weft_op_t *op;
    weft_status_t st = size_of(g, x, axis, 0, file, line, &in[0]);
    if (st == WEFT_OK) st = weft_op_create(g, &weft__axis_index_class, &p, &op);
    if (st == WEFT_OK)
        st = weft__got(g, idx = weft_op_call_at(g, op, reps ? 2 : 1, in, file, line));
    return st == WEFT_OK ? weft__got(g, *out = weft_take_at(g, x, idx, axis, file, line)) : st;
}

weft_status_t weft__tile_dyn(weft_graph_t *g, weft_var_t *x, int d_out, const int64_t *r,
                             const char *file, int line, weft_var_t **out)
{
    weft_status_t st = weft__got(g, *out = weft_pad_left_at(g, x, d_out, file, line));
    for (int d = 0; st == WEFT_OK && d < d_out; d++)
        if (r[d] != 1) st = axis_take(g, *out, d, WEFT__AXIS_TILE, r[d], 0, NULL, file, line, out);
    return st;
}

weft_status_t weft__repeat_dyn(weft_graph_t *g, weft_var_t *x, int64_t repeats, int a,
                               const char *file, int line, weft_var_t **out)
{
    return axis_take(g, x, a, WEFT__AXIS_REPEAT, repeats, 0, NULL, file, line, out);
}

weft_status_t weft__roll_dyn(weft_graph_t *g, weft_var_t *x, int64_t shift, int a,
                             const char *file, int line, weft_var_t **out)
{
    return axis_take(g, x, a, WEFT__AXIS_ROLL, shift, 0, NULL, file, line, out);
}

weft_status_t weft__reflect_axis(weft_graph_t *g, weft_var_t *x, int a, int64_t before,
                                 int64_t after, const char *file, int line, weft_var_t **out)
{
    return axis_take(g, x, a, WEFT__AXIS_REFLECT, before, after, NULL, file, line, out);
}

/* Constant padding: x set into the middle of full(value) of the padded
 * sizes (slices before:-after, after 0 meaning to the end). */
static weft_status_t pad_constant(weft_graph_t *g, weft_var_t *x, int nd, const int64_t *wd,
                                  int step, double value, const char *file, int line,
                                  weft_var_t **out)
{
    weft_var_t *sz[WEFT_MAX_NDIM], *block;
    weft_slice_t idx[WEFT_MAX_NDIM];
    weft_status_t st = WEFT_OK;
    for (int d = 0; st == WEFT_OK && d < nd; d++) {
        const int64_t *w = wd + step * d;
        st = size_of(g, x, d, w[0] + w[1], file, line, &sz[d]);
        idx[d] = (weft_slice_t)WEFT_SLICE(w[0], w[1] > 0 ? -w[1] : WEFT_SLICE_NONE, 1);
    }
    if (st == WEFT_OK)
        st = weft__got(g, block = weft_full_sym_at(g, nd, sz, value,
                                                   weft_type_dtype(weft_var_type(x)), file,
                                                   line));
    return st == WEFT_OK ? weft__got(g, *out = weft_set_subtensor_at(g, block, x, (size_t)nd, idx,
                                                                    file, line))
                         : st;
}

weft_status_t weft__pad_dyn(weft_graph_t *g, weft_var_t *x, int nd, const int64_t *wd, int step,
                            weft_pad_mode_t mode, double value, const char *file, int line,
                            weft_var_t **out)
{
    if (mode == WEFT_PAD_CONSTANT) return pad_constant(g, x, nd, wd, step, value, file, line, out);
    *out = x;
    weft_status_t st = WEFT_OK;
    int m = mode == WEFT_PAD_EDGE ? WEFT__AXIS_EDGE : WEFT__AXIS_REFLECT;
    for (int d = 0; st == WEFT_OK && d < nd; d++) {
        const int64_t *w = wd + step * d;
        if (w[0] > 0 || w[1] > 0) st = axis_take(g, *out, d, m, w[0], w[1], NULL, file, line, out);
    }
    return st;
}

static weft_status_t repeat_vec_impl(weft_graph_t *g, weft_var_t *x, weft_var_t *repeats,
                                     int axis, const char *file, int line, weft_var_t **out)
{
    int nd = 0, a = 0;
    weft_dtype_t dt;
    weft_status_t st = weft__array_check_inputs(g, "repeat_vec", 1, &x, 1, file, line, &nd, &dt);
    if (st == WEFT_OK) st = weft__array_norm_axis(g, "repeat_vec", axis, nd, file, line, &a);
    if (st != WEFT_OK) return st;
    if (!repeats) return weft__ctor_status(g) != WEFT_OK ? weft__ctor_status(g) : WEFT_EINVAL;
    const weft_type_t *rt = weft_var_type(repeats);
    char vb[256];
    weft_var_print(repeats, vb, sizeof vb);
    if (weft_var_graph(repeats) != g)
        return weft_graph_set_error(g, WEFT_EFOREIGN, "repeat_vec (at %s:%d): input 1 %s belongs "
                                    "to another graph context", file, line, vb);
    if (weft_type_kind(rt) != WEFT_TYPE_TENSOR || weft_type_ndim(rt) != 1 ||
        !weft__dtype_is_int(weft_type_dtype(rt)))
        return weft_graph_set_error(g, WEFT_ETYPE, "repeat_vec (at %s:%d): input 1 %s is not a "
                                    "1-d integer tensor", file, line, vb);
    int64_t n = weft_type_dim(weft_var_type(x), a), nr = weft_type_dim(rt, 0);
    if (n >= 0 && nr >= 0 && nr != n && nr != 1)
        return weft_graph_set_error(g, WEFT_ESHAPE, "repeat_vec (at %s:%d): %lld repeats for an "
                                    "axis of length %lld", file, line, (long long)nr,
                                    (long long)n);
    return axis_take(g, x, a, WEFT__AXIS_REPEAT_VEC, 0, 0, repeats, file, line, out);
}

weft_var_t *weft_repeat_vec_at(weft_graph_t *g, weft_var_t *x, weft_var_t *repeats, int axis,
                               const char *file, int line)
{
    weft_var_t *out = NULL;
    if (!g) return NULL;
    weft__ctor_begin(g);
    weft_status_t st = repeat_vec_impl(g, x, repeats, axis, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_repeat_vec", file, line);
}
