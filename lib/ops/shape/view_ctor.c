/* Constructors of NumPy's axis-rearranging functions, each composed of
 * existing view ops, so each costs no copy and inherits its gradient:
 * flip (a Subtensor with step -1), squeeze / expand_dims / swapaxes /
 * moveaxis (DimShuffle), and roll (two Subtensor views joined). */
#include "array_int.h"
#include "graph/ctor_int.h"
#include "ops_int.h"
#include "weft/array_ops.h"
#include "weft/shape_ops.h"

/* x checked (a tensor of g); *nd its ndim. */
static weft_status_t one_input(weft_graph_t *g, const char *name, weft_var_t *x,
                               const char *file, int line, int *nd)
{
    weft_dtype_t dt = WEFT_BOOL;
    return weft__array_check_inputs(g, name, 1, &x, 0, file, line, nd, &dt);
}

/* Bit set of axes[0..n) (negative from the end; none: every axis). */
static weft_status_t axis_mask(weft_graph_t *g, const char *name, int nd, size_t n,
                               const int *axes, const char *file, int line, uint32_t *mask)
{
    *mask = n == 0 ? (nd > 0 ? (uint32_t)((1ull << nd) - 1) : 0) : 0;
    for (size_t i = 0; i < n; i++) {
        int a = 0;
        weft_status_t st = weft__array_norm_axis(g, name, axes[i], nd, file, line, &a);
        if (st == WEFT_OK && (*mask >> a & 1u)) {
            st = weft_graph_set_error(g, WEFT_EINVAL, "%s (at %s:%d): axis %d repeated", name,
                                      file, line, axes[i]);
        }
        if (st != WEFT_OK) {
            return st;
        }
        *mask |= 1u << a;
    }
    return WEFT_OK;
}

static weft_status_t flip_impl(weft_graph_t *g, weft_var_t *x, size_t n, const int *axes,
                               const char *file, int line, weft_var_t **out)
{
    int nd = 0;
    uint32_t mask = 0;
    weft_status_t st = one_input(g, "flip", x, file, line, &nd);
    if (st == WEFT_OK && n > 0 && !axes) {
        st = weft_graph_set_error(g, WEFT_EINVAL, "flip (at %s:%d): NULL axes", file, line);
    }
    if (st == WEFT_OK) {
        st = axis_mask(g, "flip", nd, n, axes, file, line, &mask);
    }
    if (st != WEFT_OK) {
        return st;
    }
    weft_slice_t idx[WEFT_MAX_NDIM];
    for (int d = 0; d < nd; d++) {
        weft_slice_t all = WEFT_SLICE_ALL, rev = WEFT_SLICE(WEFT_SLICE_NONE, WEFT_SLICE_NONE, -1);
        idx[d] = (mask >> d & 1u) ? rev : all;
    }
    return weft__got(g, *out = weft_subtensor_at(g, x, (size_t)nd, idx, file, line));
}

weft_var_t *weft_flip_at(weft_graph_t *g, weft_var_t *x, size_t n_axes, const int *axes,
                         const char *file, int line)
{
    weft_var_t *out = NULL;
    if (!g) {
        return NULL;
    }
    weft__ctor_begin(g);
    weft_status_t st = flip_impl(g, x, n_axes, axes, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_flip", file, line);
}

static weft_status_t squeeze_impl(weft_graph_t *g, weft_var_t *x, size_t n, const int *axes,
                                  const char *file, int line, weft_var_t **out)
{
    int nd = 0, order[WEFT_MAX_NDIM], k = 0;
    uint32_t mask = 0;
    weft_status_t st = one_input(g, "squeeze", x, file, line, &nd);
    if (st == WEFT_OK && n > 0 && !axes) {
        st = weft_graph_set_error(g, WEFT_EINVAL, "squeeze (at %s:%d): NULL axes", file, line);
    }
    if (st == WEFT_OK) {
        st = axis_mask(g, "squeeze", nd, n, axes, file, line, &mask);
    }
    for (int d = 0; st == WEFT_OK && d < nd; d++) {
        bool one = weft_type_dim(weft_var_type(x), d) == 1, drop = (mask >> d & 1u) != 0;
        if (drop && !one && n > 0) {
            char vb[256];
            weft_var_print(x, vb, sizeof vb);
            st = weft_graph_set_error(g, WEFT_ESHAPE, "squeeze (at %s:%d): axis %d of input %s "
                                      "does not have static length 1", file, line, d, vb);
        } else if (!(drop && one)) {
            order[k++] = d;
        }
    }
    return st == WEFT_OK
               ? weft__got(g, *out = weft_dimshuffle_at(g, x, k, order, file, line))
               : st;
}

weft_var_t *weft_squeeze_at(weft_graph_t *g, weft_var_t *x, size_t n_axes, const int *axes,
                            const char *file, int line)
{
    weft_var_t *out = NULL;
    if (!g) {
        return NULL;
    }
    weft__ctor_begin(g);
    weft_status_t st = squeeze_impl(g, x, n_axes, axes, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_squeeze", file, line);
}

/* The DimShuffle of x with order built by kind: 0 expand_dims(a), 1
 * swapaxes(a, b), 2 moveaxis(a -> b). */
static weft_status_t permute_impl(weft_graph_t *g, const char *name, int kind, weft_var_t *x,
                                  int a0, int b0, const char *file, int line, weft_var_t **out)
{
    int nd = 0, a = 0, b = 0, order[WEFT_MAX_NDIM];
    weft_status_t st = one_input(g, name, x, file, line, &nd);
    int out_nd = kind == 0 ? nd + 1 : nd;
    if (st == WEFT_OK && out_nd > WEFT_MAX_NDIM) {
        st = weft_graph_set_error(g, WEFT_EINVAL, "%s (at %s:%d): the result would have %d "
                                  "dims, the most is %d", name, file, line, out_nd,
                                  WEFT_MAX_NDIM);
    }
    if (st == WEFT_OK) {
        st = weft__array_norm_axis(g, name, a0, out_nd, file, line, &a);
    }
    if (st == WEFT_OK && kind != 0) {
        st = weft__array_norm_axis(g, name, b0, out_nd, file, line, &b);
    }
    if (st != WEFT_OK) {
        return st;
    }
    for (int d = 0, k = 0; d < out_nd; d++) {
        order[d] = d;
        if (kind == 0) {
            order[d] = d == a ? WEFT_DIMSHUFFLE_NEW : k++;
        } else if (kind == 1) {
            order[d] = d == a ? b : (d == b ? a : d);
        }
    }
    if (kind == 2) { /* take axis a out, put it back at b */
        for (int d = 0, k = 0; d < nd; d++) {
            k += k == a;
            order[d] = d == b ? a : k++;
        }
    }
    return weft__got(g, *out = weft_dimshuffle_at(g, x, out_nd, order, file, line));
}

weft_var_t *weft_expand_dims_at(weft_graph_t *g, weft_var_t *x, int axis, const char *file,
                                int line)
{
    weft_var_t *out = NULL;
    if (!g) {
        return NULL;
    }
    weft__ctor_begin(g);
    weft_status_t st = permute_impl(g, "expand_dims", 0, x, axis, 0, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_expand_dims", file, line);
}

weft_var_t *weft_swapaxes_at(weft_graph_t *g, weft_var_t *x, int axis1, int axis2,
                             const char *file, int line)
{
    weft_var_t *out = NULL;
    if (!g) {
        return NULL;
    }
    weft__ctor_begin(g);
    weft_status_t st = permute_impl(g, "swapaxes", 1, x, axis1, axis2, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_swapaxes", file, line);
}

weft_var_t *weft_moveaxis_at(weft_graph_t *g, weft_var_t *x, int source, int destination,
                             const char *file, int line)
{
    weft_var_t *out = NULL;
    if (!g) {
        return NULL;
    }
    weft__ctor_begin(g);
    weft_status_t st = permute_impl(g, "moveaxis", 2, x, source, destination, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_moveaxis", file, line);
}

/* np.roll along one axis of static length n: x[n-s:] then x[:n-s]; of
 * unknown length, AxisIndex + Take. */
static weft_status_t roll_impl(weft_graph_t *g, weft_var_t *x, int64_t shift, int axis,
                               const char *file, int line, weft_var_t **out)
{
    int nd = 0, a = 0;
    weft_status_t st = one_input(g, "roll", x, file, line, &nd);
    if (st == WEFT_OK) {
        st = weft__array_norm_axis(g, "roll", axis, nd, file, line, &a);
    }
    int64_t n = st == WEFT_OK ? weft_type_dim(weft_var_type(x), a) : 0;
    if (st == WEFT_OK && n < 0) { /* the length at run time: symshape_ops.c */
        return weft__roll_dyn(g, x, shift, a, file, line, out);
    }
    if (st != WEFT_OK) {
        return st;
    }
    int64_t s = n > 0 ? ((shift % n) + n) % n : 0;
    weft_var_t *parts[2] = {NULL, NULL};
    if (s == 0) {
        *out = x;
        return WEFT_OK;
    }
    st = weft__array_axis_slice(g, x, a, n - s, n, 1, file, line, &parts[0]);
    if (st == WEFT_OK) {
        st = weft__array_axis_slice(g, x, a, 0, n - s, 1, file, line, &parts[1]);
    }
    if (st != WEFT_OK) {
        return st;
    }
    return weft__got(g, *out = weft_concatenate_at(g, 2, parts, a, file, line));
}

weft_var_t *weft_roll_at(weft_graph_t *g, weft_var_t *x, int64_t shift, int axis,
                         const char *file, int line)
{
    weft_var_t *out = NULL;
    if (!g) {
        return NULL;
    }
    weft__ctor_begin(g);
    weft_status_t st = roll_impl(g, x, shift, axis, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_roll", file, line);
}
