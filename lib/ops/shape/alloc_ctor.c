/* Constructors over Alloc (alloc.c): broadcast_to / alloc, full / zeros /
 * ones (a 0-d constant broadcast), and, composed with DimShuffle, Reshape,
 * Subtensor and Join, tile, repeat and pad over static lengths; an input
 * with an unknown length goes through symshape_ops.c (AxisIndex + Take). */
#include <string.h>

#include "array_int.h"
#include "graph/ctor_int.h"
#include "ops_int.h"
#include "symshape_int.h"
#include "weft/array_ops.h"
#include "weft/shape_ops.h"

static weft_status_t check_shape(weft_graph_t *g, const char *name, int ndim,
                                 const int64_t *shape, const char *file, int line)
{
    if (ndim < 0 || ndim > WEFT_MAX_NDIM || (ndim > 0 && !shape)) {
        return weft_graph_set_error(g, WEFT_EINVAL, "%s (at %s:%d): ndim %d outside [0, %d] or "
                                    "NULL shape", name, file, line, ndim, WEFT_MAX_NDIM);
    }
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0) {
            return weft_graph_set_error(g, WEFT_EINVAL, "%s (at %s:%d): shape[%d] is %lld",
                                        name, file, line, d, (long long)shape[d]);
        }
    }
    return WEFT_OK;
}

/* The sizes of the symbolic form: integer 0-d variables, none a negative
 * constant. */
static weft_status_t check_sizes(weft_graph_t *g, const char *name, int ndim,
                                 weft_var_t *const *sizes, const char *file, int line)
{
    for (int d = 0; d < ndim; d++) {
        int64_t c;
        weft_status_t st = weft__check_size_input(g, name, (size_t)d + 1, sizes[d], true, file,
                                                  line);
        if (st == WEFT_OK && weft__const_int_at(sizes[d], 0, &c) && c < 0) {
            st = weft_graph_set_error(g, WEFT_EINVAL, "%s (at %s:%d): size %d is %lld", name,
                                      file, line, d, (long long)c);
        }
        if (st != WEFT_OK) {
            return st;
        }
    }
    return WEFT_OK;
}

weft_status_t weft__alloc_build(weft_graph_t *g, const char *name, weft_var_t *v, int ndim,
                                const int64_t *shape, weft_var_t *const *sizes,
                                const char *file, int line, weft_var_t **out)
{
    int nd = 0;
    weft_dtype_t dt = WEFT_BOOL;
    weft_status_t st = weft__array_check_inputs(g, name, 1, &v, 0, file, line, &nd, &dt);
    if (st == WEFT_OK) {
        st = sizes ? (ndim < 0 || ndim > WEFT_MAX_NDIM
                          ? weft_graph_set_error(g, WEFT_EINVAL, "%s (at %s:%d): ndim %d "
                                                 "outside [0, %d]", name, file, line, ndim,
                                                 WEFT_MAX_NDIM)
                          : check_sizes(g, name, ndim, sizes, file, line))
                   : check_shape(g, name, ndim, shape, file, line);
    }
    if (st == WEFT_OK && nd > ndim) {
        char vb[256];
        weft_var_print(v, vb, sizeof vb);
        st = weft_graph_set_error(g, WEFT_EINVAL, "%s (at %s:%d): input %s has more than %d "
                                  "dims", name, file, line, vb, ndim);
    }
    weft__alloc_props_t p;
    memset(&p, 0, sizeof p);
    p.ndim = ndim;
    p.sym = sizes != NULL;
    weft_var_t *in[WEFT_MAX_NDIM + 1] = {v};
    for (int d = 0; st == WEFT_OK && d < ndim; d++) {
        if (sizes) {
            in[d + 1] = sizes[d];
        } else {
            p.shape[d] = shape[d];
        }
    }
    const weft_op_t *op = NULL;
    if (st == WEFT_OK) {
        st = weft_op_create(g, &weft__alloc_class, &p, &op);
    }
    size_t n_in = sizes ? (size_t)ndim + 1 : 1;
    return st == WEFT_OK ? weft__got(g, *out = weft_op_call_at(g, op, n_in, in, file, line)) : st;
}

static weft_status_t alloc_build(weft_graph_t *g, const char *name, weft_var_t *v, int ndim,
                                 const int64_t *shape, const char *file, int line,
                                 weft_var_t **out)
{
    return weft__alloc_build(g, name, v, ndim, shape, NULL, file, line, out);
}

weft_var_t *weft_broadcast_to_at(weft_graph_t *g, weft_var_t *x, int ndim, const int64_t *shape,
                                 const char *file, int line)
{
    weft_var_t *out = NULL;
    if (!g) {
        return NULL;
    }
    weft__ctor_begin(g);
    weft_status_t st = alloc_build(g, "broadcast_to", x, ndim, shape, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_broadcast_to", file, line);
}

weft_var_t *weft_full_at(weft_graph_t *g, int ndim, const int64_t *shape, double value,
                         weft_dtype_t dtype, const char *file, int line)
{
    weft_var_t *out = NULL, *c = NULL;
    if (!g) {
        return NULL;
    }
    weft__ctor_begin(g);
    weft_status_t st = weft__got(g, c = weft_constant_scalar_at(g, dtype, value, file, line));
    if (st == WEFT_OK) {
        st = alloc_build(g, "full", c, ndim, shape, file, line, &out);
    }
    return weft__ctor_end(g, st, out, "weft_full", file, line);
}

/* x's static shape into shape (WEFT_ESHAPE naming x when one is unknown). */
static weft_status_t static_shape(weft_graph_t *g, const char *name, weft_var_t *x,
                                  const char *file, int line, int *nd, int64_t *shape)
{
    weft_dtype_t dt = WEFT_BOOL;
    weft_status_t st = weft__array_check_inputs(g, name, 1, &x, 0, file, line, nd, &dt);
    for (int d = 0; st == WEFT_OK && d < *nd; d++) {
        if ((shape[d] = weft_type_dim(weft_var_type(x), d)) < 0) {
            char vb[256];
            weft_var_print(x, vb, sizeof vb);
            st = weft_graph_set_error(g, WEFT_ESHAPE, "%s (at %s:%d): input %s has no static "
                                      "length on axis %d", name, file, line, vb, d);
        }
    }
    return st;
}

/* x (static shape s, nd axes) with a new axis before each axis d,
 * broadcast to reps[d], then merged with it: np.tile's order. */
static weft_status_t interleave(weft_graph_t *g, weft_var_t *x, int nd, const int64_t *s,
                                const int64_t *reps, const char *file, int line,
                                weft_var_t **out)
{
    int order[2 * WEFT_MAX_NDIM], k = 0;
    int64_t wide[2 * WEFT_MAX_NDIM], merged[WEFT_MAX_NDIM];
    for (int d = 0; d < nd; d++) {
        order[k] = WEFT_DIMSHUFFLE_NEW;
        order[k + 1] = d;
        wide[k] = reps[d];
        wide[k + 1] = s[d];
        merged[d] = reps[d] * s[d];
        k += 2;
    }
    if (k > WEFT_MAX_NDIM) {
        return weft_graph_set_error(g, WEFT_EINVAL, "tile (at %s:%d): %d dims needed "
                                    "on the way, the most is %d", file, line, k, WEFT_MAX_NDIM);
    }
    weft_var_t *e = NULL, *b = NULL;
    weft_status_t st = weft__got(g, e = weft_dimshuffle_at(g, x, k, order, file, line));
    if (st == WEFT_OK) {
        st = alloc_build(g, "tile", e, k, wide, file, line, &b);
    }
    return st == WEFT_OK ? weft__got(g, *out = weft_reshape_at(g, b, nd, merged, file, line))
                         : st;
}

static weft_status_t tile_impl(weft_graph_t *g, weft_var_t *x, int n_reps, const int64_t *reps,
                               const char *file, int line, weft_var_t **out)
{
    int nd = 0;
    int64_t s[WEFT_MAX_NDIM], r[WEFT_MAX_NDIM];
    bool dyn = x && weft__has_unknown_dim(x);
    weft_status_t st = dyn ? weft__array_check_inputs(g, "tile", 1, &x, 0, file, line, &nd,
                                                      &(weft_dtype_t){WEFT_BOOL})
                           : static_shape(g, "tile", x, file, line, &nd, s);
    if (st == WEFT_OK && (n_reps < 0 || n_reps > WEFT_MAX_NDIM || (n_reps > 0 && !reps))) {
        st = weft_graph_set_error(g, WEFT_EINVAL, "tile (at %s:%d): bad reps", file, line);
    }
    if (st != WEFT_OK) {
        return st;
    }
    int d_out = nd > n_reps ? nd : n_reps;
    for (int d = 0; d < d_out; d++) {
        int xi = d - (d_out - nd), ri = d - (d_out - n_reps);
        r[d] = ri >= 0 ? reps[ri] : 1;
        s[d] = xi >= 0 ? weft_type_dim(weft_var_type(x), xi) : 1;
        if (r[d] < 0) {
            return weft_graph_set_error(g, WEFT_EINVAL, "tile (at %s:%d): reps[%d] is %lld",
                                        file, line, ri, (long long)r[d]);
        }
    }
    if (dyn) {
        return weft__tile_dyn(g, x, d_out, r, file, line, out);
    }
    weft_var_t *xp = NULL;
    st = weft__got(g, xp = weft_pad_left_at(g, x, d_out, file, line));
    return st == WEFT_OK ? interleave(g, xp, d_out, s, r, file, line, out) : st;
}

weft_var_t *weft_tile_at(weft_graph_t *g, weft_var_t *x, int n_reps, const int64_t *reps,
                         const char *file, int line)
{
    weft_var_t *out = NULL;
    if (!g) {
        return NULL;
    }
    weft__ctor_begin(g);
    weft_status_t st = tile_impl(g, x, n_reps, reps, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_tile", file, line);
}

static weft_status_t repeat_impl(weft_graph_t *g, weft_var_t *x, int64_t repeats, int axis,
                                 const char *file, int line, weft_var_t **out)
{
    int nd = 0, a = 0;
    int64_t s[WEFT_MAX_NDIM];
    bool dyn = x && weft__has_unknown_dim(x);
    weft_status_t st = dyn ? weft__array_check_inputs(g, "repeat", 1, &x, 0, file, line, &nd,
                                                      &(weft_dtype_t){WEFT_BOOL})
                           : static_shape(g, "repeat", x, file, line, &nd, s);
    if (st == WEFT_OK) {
        st = weft__array_norm_axis(g, "repeat", axis, nd, file, line, &a);
    }
    if (st == WEFT_OK && repeats < 0) {
        st = weft_graph_set_error(g, WEFT_EINVAL, "repeat (at %s:%d): repeats %lld < 0", file,
                                  line, (long long)repeats);
    }
    if (st != WEFT_OK || dyn) {
        return st == WEFT_OK ? weft__repeat_dyn(g, x, repeats, a, file, line, out) : st;
    }
    /* only axis a gets a new axis: the others are merged with a length 1 */
    int order[WEFT_MAX_NDIM], k = 0;
    int64_t wide[WEFT_MAX_NDIM], merged[WEFT_MAX_NDIM];
    if (nd + 1 > WEFT_MAX_NDIM) {
        return weft_graph_set_error(g, WEFT_EINVAL, "repeat (at %s:%d): too many dims", file,
                                    line);
    }
    for (int d = 0; d < nd; d++) {
        merged[d] = d == a ? s[d] * repeats : s[d];
        order[k] = d;
        wide[k++] = s[d];
        if (d == a) {
            order[k] = WEFT_DIMSHUFFLE_NEW;
            wide[k++] = repeats;
        }
    }
    weft_var_t *e = NULL, *b = NULL;
    st = weft__got(g, e = weft_dimshuffle_at(g, x, k, order, file, line));
    if (st == WEFT_OK) {
        st = alloc_build(g, "repeat", e, k, wide, file, line, &b);
    }
    return st == WEFT_OK ? weft__got(g, *out = weft_reshape_at(g, b, nd, merged, file, line))
                         : st;
}

weft_var_t *weft_repeat_at(weft_graph_t *g, weft_var_t *x, int64_t repeats, int axis,
                           const char *file, int line)
{
    weft_var_t *out = NULL;
    if (!g) {
        return NULL;
    }
    weft__ctor_begin(g);
    weft_status_t st = repeat_impl(g, x, repeats, axis, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_repeat", file, line);
}

/* The block of w elements added on one side of axis a of cur (static shape
 * s): a constant, the edge row broadcast, or the rows mirrored. */
static weft_status_t pad_side(weft_graph_t *g, weft_var_t *cur, int nd, const int64_t *s, int a,
                              int64_t w, bool after, weft_pad_mode_t mode, double value,
                              const char *file, int line, weft_var_t **out)
{
    int64_t bs[WEFT_MAX_NDIM], n = s[a];
    memcpy(bs, s, (size_t)nd * sizeof *s);
    bs[a] = w;
    weft_var_t *edge = NULL;
    weft_status_t st = WEFT_OK;
    switch (mode) {
    case WEFT_PAD_CONSTANT:
        return weft__got(g, *out = weft_full_at(g, nd, bs, value,
                                                weft_type_dtype(weft_var_type(cur)), file,
                                                line));
    case WEFT_PAD_EDGE:
        st = weft__array_axis_slice(g, cur, a, after ? n - 1 : 0, after ? n : 1, 1, file, line, &edge);
        return st == WEFT_OK ? alloc_build(g, "pad", edge, nd, bs, file, line, out) : st;
    default: /* reflect: rows w..1 before, n-2..n-1-w after */
        return after ? weft__array_axis_slice(g, cur, a, n - 2, n - 2 - w, -1, file, line, out)
                     : weft__array_axis_slice(g, cur, a, w, 0, -1, file, line, out);
    }
}

static weft_status_t pad_axis(weft_graph_t *g, weft_var_t **cur, int nd, int64_t *s, int a,
                              const int64_t *wd, weft_pad_mode_t mode, double value,
                              const char *file, int line)
{
    if (wd[0] == 0 && wd[1] == 0) {
        return WEFT_OK;
    }
    if (mode != WEFT_PAD_CONSTANT && s[a] == 0) {
        return weft_graph_set_error(g, WEFT_EINVAL, "pad (at %s:%d): axis %d of length 0 "
                                    "cannot be padded by (%lld, %lld) in this mode", file, line,
                                    a, (long long)wd[0], (long long)wd[1]);
    }
    weft_status_t st = WEFT_OK;
    if (mode == WEFT_PAD_REFLECT && (wd[0] >= s[a] || wd[1] >= s[a])) {
        /* NumPy reflects repeatedly: the source indices of AxisIndex */
        st = weft__reflect_axis(g, *cur, a, wd[0], wd[1], file, line, cur);
        s[a] += wd[0] + wd[1];
        return st;
    }
    weft_var_t *parts[3] = {NULL, *cur, NULL};
    if (wd[0] > 0) {
        st = pad_side(g, *cur, nd, s, a, wd[0], false, mode, value, file, line, &parts[0]);
    }
    if (st == WEFT_OK && wd[1] > 0) {
        st = pad_side(g, *cur, nd, s, a, wd[1], true, mode, value, file, line, &parts[2]);
    }
    if (st != WEFT_OK) {
        return st;
    }
    weft_var_t *list[3];
    size_t k = 0;
    for (int i = 0; i < 3; i++) {
        if (parts[i]) {
            list[k++] = parts[i];
        }
    }
    s[a] += wd[0] + wd[1];
    return weft__got(g, *cur = weft_concatenate_at(g, k, list, a, file, line));
}

static weft_status_t pad_impl(weft_graph_t *g, weft_var_t *x, int n, const int64_t *widths,
                              weft_pad_mode_t mode, double value, const char *file, int line,
                              weft_var_t **out)
{
    int nd = 0;
    int64_t s[WEFT_MAX_NDIM];
    bool dyn = x && weft__has_unknown_dim(x);
    weft_status_t st = dyn ? weft__array_check_inputs(g, "pad", 1, &x, 0, file, line, &nd,
                                                      &(weft_dtype_t){WEFT_BOOL})
                           : static_shape(g, "pad", x, file, line, &nd, s);
    if (st == WEFT_OK && (!widths || (n != nd && n != 1) || (unsigned)mode > WEFT_PAD_REFLECT)) {
        st = weft_graph_set_error(g, WEFT_EINVAL, "pad (at %s:%d): needs 1 or %d (before, "
                                  "after) pairs and a known mode, got %d pairs", file, line, nd,
                                  n);
    }
    for (int i = 0; st == WEFT_OK && i < 2 * n; i++) {
        if (widths[i] < 0) {
            st = weft_graph_set_error(g, WEFT_EINVAL, "pad (at %s:%d): width %lld < 0", file,
                                      line, (long long)widths[i]);
        }
    }
    if (st == WEFT_OK && dyn) {
        return weft__pad_dyn(g, x, nd, widths, n == 1 ? 0 : 2, mode, value, file, line, out);
    }
    *out = x;
    for (int d = 0; st == WEFT_OK && d < nd; d++) {
        st = pad_axis(g, out, nd, s, d, widths + 2 * (n == 1 ? 0 : d), mode, value, file, line);
    }
    return st;
}

weft_var_t *weft_pad_at(weft_graph_t *g, weft_var_t *x, int n_pairs, const int64_t *pad_width,
                        weft_pad_mode_t mode, double value, const char *file, int line)
{
    weft_var_t *out = NULL;
    if (!g) {
        return NULL;
    }
    weft__ctor_begin(g);
    weft_status_t st = pad_impl(g, x, n_pairs, pad_width, mode, value, file, line, &out);
    return weft__ctor_end(g, st, st == WEFT_OK ? out : NULL, "weft_pad", file, line);
}
