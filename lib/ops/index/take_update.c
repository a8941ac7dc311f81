/* AdvancedSetSubtensor{axis} / AdvancedIncSubtensor{axis}(x, indices, y):
 * x with take(x, indices, axis)'s elements replaced by / increased by y
 * (weft/index_ops.h) - constructor, type inference, kernel, gradient,
 * in-place variants, JSON props.
 *
 * Determinism: the indices are bucketed by destination (a stable counting
 * sort), and the pool splits the work by destination rows in blocks fixed by
 * the shape; each destination row adds its y rows in index order (inc) or
 * copies the last one (set). No two tasks write one row, and a row's result
 * does not depend on the split, so the bits are the same at any worker
 * count, duplicates included. Rows move by byte size (set) or through a
 * typed add per dtype (inc), so every dtype works. */
#include <complex.h>
#include <stdio.h>
#include <string.h>

#include "base/dtype_list.h"
#include "graph/ctor_int.h"
#include "index/index_int.h"
#include "ops_int.h"
#include "props_fields_int.h"

static bool is_inc(const weft_op_t *op)
{
    return weft_op_class(op) == &weft__adv_inc_class;
}

/* ---- kernel ------------------------------------------------------------------ */

/* dst[0..m) += src[0..m) in dtype dt (integers wrap as NumPy's, in the
 * unsigned twin; float16 adds in float32 and rounds, as NumPy). */
static void add_row(weft_dtype_t dt, char *dst, const char *src, int64_t m)
{
#define ADD_INT(A, B, T, U, sfx, DT)                                        \
    case DT: {                                                              \
        U *restrict d = (U *)(void *)dst;                                   \
        const U *restrict s = (const U *)(const void *)src;                 \
        for (int64_t i = 0; i < m; i++) d[i] = (U)(d[i] + s[i]);            \
        return;                                                             \
    }
#define ADD_FLOAT(A, B, T, sfx, DT)                                         \
    case DT: {                                                              \
        T *restrict d = (T *)(void *)dst;                                   \
        const T *restrict s = (const T *)(const void *)src;                 \
        for (int64_t i = 0; i < m; i++) d[i] = (T)(d[i] + s[i]);            \
        return;                                                             \
    }
    switch (dt) {
        WEFT__SINT_DTYPES(ADD_INT, ~, ~)
        WEFT__UINT_DTYPES(ADD_INT, ~, ~)
        WEFT__FLOAT_DTYPES(ADD_FLOAT, ~, ~)
        ADD_FLOAT(~, ~, float complex, c64, WEFT_COMPLEX64)
        ADD_FLOAT(~, ~, double complex, c128, WEFT_COMPLEX128)
    case WEFT_FLOAT16: {
        weft__f16 *d = (weft__f16 *)(void *)dst;
        const weft__f16 *s = (const weft__f16 *)(const void *)src;
        for (int64_t i = 0; i < m; i++) d[i] = (weft__f16)((float)d[i] + (float)s[i]);
        return;
    }
    default: return; /* bool: refused by make_node */
    }
#undef ADD_INT
#undef ADD_FLOAT
}

typedef struct scatter {
    char *out;
    const char *y;
    const int64_t *start, *order; /* bucket t: order[start[t] .. start[t+1]) */
    int64_t n, len, inner;        /* index count, axis length, row elements */
    size_t esz;
    weft_dtype_t dt;
    bool inc;
} scatter_t;

/* Destination rows [begin, end), row r = (o, t) of the output. */
static weft_status_t scatter_range(void *arg, size_t begin, size_t end)
{
    const scatter_t *c = arg;
    size_t row = (size_t)c->inner * c->esz;
    for (size_t r = begin; r < end; r++) {
        int64_t o = (int64_t)r / c->len, t = (int64_t)r % c->len;
        int64_t j0 = c->start[t], j1 = c->start[t + 1];
        if (j0 == j1) continue;
        char *dst = c->out + r * row;
        if (!c->inc) {
            memcpy(dst, c->y + (size_t)(o * c->n + c->order[j1 - 1]) * row, row);
            continue;
        }
        for (int64_t j = j0; j < j1; j++) {
            add_row(c->dt, dst, c->y + (size_t)(o * c->n + c->order[j]) * row, c->inner);
        }
    }
    return WEFT_OK;
}

/* Stable counting sort of the n indices by destination: start[len + 1]
 * bucket bounds, order[n] index positions (in one scratch of len + 1 + n). */
static void bucket(const int64_t *ix, int64_t n, int64_t len, int64_t *start, int64_t *order)
{
    memset(start, 0, (size_t)(len + 1) * sizeof *start);
    for (int64_t k = 0; k < n; k++) start[ix[k] + 1]++;
    for (int64_t t = 0; t < len; t++) start[t + 1] += start[t];
    for (int64_t k = 0; k < n; k++) order[start[ix[k]]++] = k;
    /* start[t] now ends bucket t: shift back */
    for (int64_t t = len; t > 0; t--) start[t] = start[t - 1];
    start[0] = 0;
}

/* The output: x itself in place when x is contiguous, else a contiguous copy
 * (an in-place node on a strided view of x still computes correctly; it
 * only loses the saving). */
static weft_status_t update_output(bool inplace, weft_tensor_t *x, weft_tensor_t **cell,
                                   weft_kernel_ctx_t *ctx)
{
    if (inplace && weft_tensor_is_contiguous(x)) {
        weft_kernel_set_output(ctx, cell, weft_tensor_retain(x));
        return WEFT_OK;
    }
    weft_status_t st = weft_kernel_alloc_output(ctx, cell, weft_tensor_dtype(x),
                                                weft_tensor_ndim(x), weft_tensor_shape(x));
    if (st == WEFT_OK) weft_tensor_copy(*cell, x);
    return st;
}

/* y must have take(x, indices)'s shape exactly (the constructor broadcast it). */
static weft_status_t check_y(const char *name, const weft_tensor_t *x, const weft_tensor_t *idx,
                             const weft_tensor_t *y, int axis, weft_kernel_ctx_t *ctx)
{
    int64_t shape[WEFT_MAX_NDIM];
    int nd = weft__take_shape(weft_tensor_ndim(x), weft_tensor_shape(x), weft_tensor_ndim(idx),
                              weft_tensor_shape(idx), axis, shape);
    bool ok = nd == weft_tensor_ndim(y) && weft_tensor_dtype(y) == weft_tensor_dtype(x);
    for (int d = 0; ok && d < nd; d++) ok = shape[d] == weft_tensor_dim(y, d);
    return ok ? WEFT_OK
              : weft_kernel_error(ctx, WEFT_ESHAPE, "%s: y's shape or dtype differs from "
                                  "x[indices]'s", name);
}

static weft_status_t update_perform(const weft_apply_t *node, weft_tensor_t *const *inputs,
                                    weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    const weft_op_t *op = weft_apply_op(node);
    const weft__take_props_t *p = weft_op_props(op);
    const char *name = weft_op_name(op);
    weft_tensor_t *x = inputs[0], *y = inputs[2], *yc = NULL, *ix = NULL, *bk = NULL;
    if (weft_tensor_ndim(x) <= p->axis) {
        return weft_kernel_error(ctx, WEFT_ESHAPE, "%s: x has %d dims, axis is %d", name,
                                 weft_tensor_ndim(x), (int)p->axis);
    }
    weft__take_geom_t gm = weft__take_geom(x, p->axis);
    int64_t n = (int64_t)weft_tensor_size(inputs[1]), nb = gm.len + 1 + n;
    /* everything is checked before x (maybe destroyed) is written */
    weft_status_t st = check_y(name, x, inputs[1], y, p->axis, ctx);
    if (st == WEFT_OK) st = weft__take_indices(ctx, name, inputs[1], p->axis, gm.len, &ix);
    if (st == WEFT_OK) st = weft_kernel_scratch(ctx, WEFT_INT64, 1, &nb, &bk);
    if (st == WEFT_OK) st = weft_kernel_contiguous(ctx, y, &yc);
    if (st == WEFT_OK) st = update_output(p->inplace != 0, x, &outputs[0], ctx);
    if (st == WEFT_OK) {
        int64_t *start = weft_tensor_data(bk);
        bucket(weft_tensor_data(ix), n, gm.len, start, start + gm.len + 1);
        weft_dtype_t dt = weft_tensor_dtype(x);
        scatter_t c = {weft_tensor_data(outputs[0]), weft_tensor_data(yc), start,
                       start + gm.len + 1, n, gm.len, gm.inner, weft_dtype_size(dt), dt,
                       is_inc(op)};
        size_t rows = (size_t)(gm.outer * gm.len), row = (size_t)gm.inner * c.esz;
        if (rows > 0 && row > 0 && n > 0) {
            st = weft_kernel_parallel_for(ctx, rows, weft__take_grain(row), scatter_range, &c);
        }
    }
    weft_kernel_contiguous_done(ctx, y, yc);
    weft_kernel_scratch_done(ctx, bk);
    weft_kernel_scratch_done(ctx, ix);
    return st;
}

/* ---- class ------------------------------------------------------------------- */

static weft_status_t update_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                      weft_var_t *const *inputs, size_t *n_out,
                                      const weft_type_t **out_types)
{
    const weft__take_props_t *p = weft_op_props(op);
    const char *name = weft_op_name(op);
    if (n_in != 3) {
        return weft_graph_set_error(g, WEFT_EINVAL, "%s: takes 3 inputs, got %zu", name, n_in);
    }
    const weft_type_t *xt = weft_var_type(inputs[0]), *it = weft_var_type(inputs[1]),
                      *yt = weft_var_type(inputs[2]);
    weft_dtype_t dt = weft_type_dtype(xt);
    if (weft_type_kind(xt) != WEFT_TYPE_TENSOR || weft_type_kind(it) != WEFT_TYPE_TENSOR ||
        weft_type_kind(yt) != WEFT_TYPE_TENSOR || p->axis < 0 ||
        p->axis >= weft_type_ndim(xt) || weft_type_dtype(yt) != dt ||
        (weft_dtype_kind(weft_type_dtype(it)) != WEFT_KIND_INT &&
         weft_dtype_kind(weft_type_dtype(it)) != WEFT_KIND_UINT) ||
        weft_type_ndim(yt) != weft_type_ndim(xt) - 1 + weft_type_ndim(it) ||
        (is_inc(op) && dt == WEFT_BOOL)) {
        return weft_graph_set_error(g, WEFT_ETYPE, "%s: needs x of rank > %d, integer indices "
                                    "and y of x's dtype and x[indices]'s rank (not bool for "
                                    "inc)", name, (int)p->axis);
    }
    *n_out = 1;
    out_types[0] = xt;
    return WEFT_OK;
}

/* gx: gz (inc) or gz with the set positions zeroed (set); gy: take(gz)
 * (set: Take{last}, zero for the overwritten duplicates). */
static weft_status_t update_grad(weft_graph_t *g, const weft_apply_t *node,
                                 weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    const weft_op_t *op = weft_apply_op(node);
    const weft__take_props_t *p = weft_op_props(op);
    weft_var_t *x = weft_apply_input(node, 0), *idx = weft_apply_input(node, 1), *gz;
    weft_var_t *zero;
    input_grads[0] = input_grads[1] = input_grads[2] = NULL;
    if (!(gz = output_grads[0]) || !weft__dtype_is_float(weft_type_dtype(weft_var_type(x)))) {
        return WEFT_OK;
    }
    const char *file;
    int line;
    weft_apply_trace(node, &file, &line);
    weft_status_t st = WEFT_OK;
    input_grads[0] = gz;
    if (!is_inc(op) &&
        !(st = weft__got(g, zero = weft_constant_scalar_at(g, weft_type_dtype(weft_var_type(x)),
                                                           0.0, file, line)))) {
        st = weft__got(g, input_grads[0] = weft_set_at_at(g, gz, idx, zero, p->axis, false,
                                                          file, line));
    }
    if (st != WEFT_OK) return st;
    /* set: only each destination's last y slice reaches the output */
    return weft__got(g, input_grads[2] = is_inc(op) ? weft_take_at(g, gz, idx, p->axis, file, line)
                                                    : weft__take_last_at(g, gz, idx, p->axis,
                                                                         file, line));
}

static bool update_connected(const weft_apply_t *node, size_t in, size_t out)
{
    (void)node;
    (void)out;
    return in != 1;
}

static size_t update_destroy_map(const weft_op_t *op, weft_op_alias_t *out, size_t cap)
{
    const weft__take_props_t *p = weft_op_props(op);
    if (!p->inplace || cap < 1) return p->inplace ? 1 : 0;
    out[0] = (weft_op_alias_t){0, 0};
    return 1;
}

static weft_status_t update_inplace_variant(weft_graph_t *g, const weft_op_t *op, size_t input,
                                            const weft_op_t **out)
{
    if (input != 0) {
        return weft_graph_set_error(g, WEFT_ENOTIMPL, "%s has no in-place variant for input %zu",
                                    weft_op_name(op), input);
    }
    weft__take_props_t q = *(const weft__take_props_t *)weft_op_props(op);
    q.inplace = 1;
    return weft_op_create(g, weft_op_class(op), &q, out);
}

/* JSON props: {"axis": 0, "inplace": false}. */
static const weft__props_fields_t update_fields = {
    sizeof(weft__take_props_t),
    {WEFT__PROPS_FIELD("axis", WEFT__FIELD_I32, weft__take_props_t, axis),
     WEFT__PROPS_FIELD("inplace", WEFT__FIELD_I32_BOOL, weft__take_props_t, inplace)}};
WEFT__PROPS_FIELDS_HOOKS(update, update_fields)

#define UPDATE_CLASS(cname)                             \
    {                                                   \
        .size = sizeof(weft_op_class_t),                \
        .name = cname,                                  \
        .props_size = sizeof(weft__take_props_t),       \
        .props_print = weft__take_props_print,              \
        .props_to_json = update_to_json,                \
        .props_from_json = update_from_json,            \
        .make_node = update_make_node,                  \
        .perform = update_perform,                      \
        .destroy_map = update_destroy_map,              \
        .connection_pattern = update_connected,         \
        .grad = update_grad,                            \
        .inplace_variant = update_inplace_variant,      \
    }
const weft_op_class_t weft__adv_set_class = UPDATE_CLASS("AdvancedSetSubtensor");
const weft_op_class_t weft__adv_inc_class = UPDATE_CLASS("AdvancedIncSubtensor");

/* ---- constructor ------------------------------------------------------------- */

/* y converted to x's dtype and broadcast to x[indices]'s type (pad_left,
 * then Second against take(x, indices) when a length-1 axis must stretch
 * or a length is not static). */
static weft_status_t prepare_y(weft_graph_t *g, const char *name, weft_var_t *x,
                               weft_var_t *idx, weft_var_t **y, int axis, bool inc,
                               const char *file, int line)
{
    const weft_type_t *xt = weft_var_type(x), *yt = weft_var_type(*y), *it = weft_var_type(idx);
    weft_dtype_t xd = weft_type_dtype(xt), yd = weft_type_dtype(yt);
    if (weft_type_kind(yt) != WEFT_TYPE_TENSOR || weft_dtype_promote(xd, yd) != xd ||
        (inc && xd == WEFT_BOOL)) {
        return weft_graph_set_error(g, WEFT_ETYPE, "%s (at %s:%d): y is %s, x %s (y must "
                                    "convert to x's dtype safely; no inc into bool)", name,
                                    file, line, weft_dtype_name(yd), weft_dtype_name(xd));
    }
    int nd = weft_type_ndim(xt) - 1 + weft_type_ndim(it), ynd = weft_type_ndim(yt);
    if (ynd > nd) {
        return weft_graph_set_error(g, WEFT_ESHAPE, "%s (at %s:%d): y has %d dims, "
                                    "x[indices] %d", name, file, line, ynd, nd);
    }
    weft_status_t st = WEFT_OK;
    if (yd != xd) st = weft__got(g, *y = weft_cast_at(g, *y, xd, file, line));
    if (st == WEFT_OK) st = weft__got(g, *y = weft_pad_left_at(g, *y, nd, file, line));
    if (st != WEFT_OK) return st;
    int64_t xs[WEFT_MAX_NDIM], is[WEFT_MAX_NDIM], ts[WEFT_MAX_NDIM];
    for (int d = 0; d < weft_type_ndim(xt); d++) xs[d] = weft_type_dim(xt, d);
    for (int d = 0; d < weft_type_ndim(it); d++) is[d] = weft_type_dim(it, d);
    weft__take_shape(weft_type_ndim(xt), xs, weft_type_ndim(it), is, axis, ts);
    const weft_type_t *pt = weft_var_type(*y);
    bool exact = true;
    for (int d = 0; d < nd; d++) {
        int64_t a = weft_type_dim(pt, d), b = ts[d];
        if (a != WEFT_DIM_UNKNOWN && a != 1 && b != WEFT_DIM_UNKNOWN && a != b) {
            return weft_graph_set_error(g, WEFT_ESHAPE, "%s (at %s:%d): y has length %lld in "
                                        "dimension %d, x[indices] %lld", name, file, line,
                                        (long long)a, d, (long long)b);
        }
        exact = exact && a == b && a != WEFT_DIM_UNKNOWN;
    }
    weft_var_t *t;
    if (exact) return WEFT_OK;
    if ((st = weft__got(g, t = weft_take_at(g, x, idx, axis, file, line))) != WEFT_OK) return st;
    return weft__got(g, *y = weft_binary_at(g, WEFT_ELEMWISE_SECOND, t, *y, file, line));
}

weft_var_t *weft_set_at_at(weft_graph_t *g, weft_var_t *x, weft_var_t *indices, weft_var_t *y,
                           int axis, bool inc, const char *file, int line)
{
    const char *name = inc ? "AdvancedIncSubtensor" : "AdvancedSetSubtensor";
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft__take_props_t p = {0, 0, 0};
    const weft_op_t *op = NULL;
    weft_status_t st = (!x || !indices || !y)
                           ? WEFT_EINVAL
                           : weft__take_args(g, name, x, indices, axis, file, line, &p.axis);
    if (st == WEFT_OK) st = prepare_y(g, name, x, indices, &y, p.axis, inc, file, line);
    if (st == WEFT_OK) {
        st = weft_op_create(g, inc ? &weft__adv_inc_class : &weft__adv_set_class, &p, &op);
    }
    if (st == WEFT_OK) {
        weft_var_t *in[3] = {x, indices, y};
        st = weft__got(g, out = weft_op_call_at(g, op, 3, in, file, line));
    }
    return weft__ctor_end(g, st, out, inc ? "weft_inc_at" : "weft_set_at", file, line);
}
