/* The reduction ops Sum, Mean, Max, Min, Prod (one class each, props: axes
 * mask, rank, keepdims): constructors (weft/reduce.h), type inference,
 * perform and grad hooks. The gradient op ReduceGrad lives in reduce_grad.c,
 * Argmax in argmax.c, the split over the pool in reduce_split.c, the
 * strided loops in reduce_kernels.c. */
#include <stdio.h>
#include <string.h>

#include "graph/ctor_int.h"
#include "reduce_ops_int.h"

static const char *const reduce_names[WEFT_REDUCE_KIND_COUNT] = {"Sum", "Mean", "Max", "Min",
                                                                 "Prod"};

const char *weft__reduce_kind_name(weft_reduce_kind_t kind)
{
    return (unsigned)kind < WEFT_REDUCE_KIND_COUNT ? reduce_names[kind] : "Reduce";
}

int weft__reduce_props_print(const void *props, char *buf, size_t cap)
{
    const weft__reduce_props_t *p = props;
    char axes[WEFT_MAX_NDIM * 4 + 4] = "";
    size_t len = 0;
    for (int d = 0; d < p->ndim; d++) {
        if (p->axes & (1u << d)) {
            len += (size_t)snprintf(axes + len, sizeof axes - len, len ? ",%d" : "%d", d);
        }
    }
    return snprintf(buf, cap, "axes=(%s), keepdims=%d", axes, p->keepdims ? 1 : 0);
}

int weft__reduce_out_shape(const weft__reduce_props_t *p, const int64_t *shape, int64_t *out)
{
    int k = 0;
    for (int d = 0; d < p->ndim; d++) {
        if (!(p->axes & (1u << d))) {
            out[k++] = shape[d];
        } else if (p->keepdims) {
            out[k++] = 1;
        }
    }
    return k;
}

weft_status_t weft__input_check(weft_graph_t *g, const char *opname,
                                const weft__reduce_props_t *p, size_t n_in,
                                weft_var_t *const *inputs, size_t want_in, bool with_bool)
{
    if (n_in != want_in) {
        return weft_graph_set_error(g, WEFT_EINVAL, "%s: takes %zu input(s), got %zu", opname,
                                    want_in, n_in);
    }
    const weft_type_t *t = weft_var_type(inputs[0]);
    weft_dtype_t dt = weft_type_dtype(t);
    if (weft_type_kind(t) != WEFT_TYPE_TENSOR ||
        !(weft__reduce_dtype_ok(dt) || (with_bool && dt == WEFT_BOOL))) {
        char tb[64];
        weft_type_print(t, tb, sizeof tb);
        return weft_graph_set_error(g, WEFT_ETYPE, "%s: input 0 has type %s (%s is not "
                                    "supported by %s)", opname, tb,
                                    weft_dtype_name(weft_type_dtype(t)), opname);
    }
    if (weft_type_ndim(t) != p->ndim) {
        return weft_graph_set_error(g, WEFT_ETYPE, "%s: input 0 has %d dims, the op was "
                                    "built for %d", opname, weft_type_ndim(t), (int)p->ndim);
    }
    return WEFT_OK;
}

weft_status_t weft__reduce_check_input(weft_graph_t *g, const char *opname,
                                       const weft__reduce_props_t *p, size_t n_in,
                                       weft_var_t *const *inputs, size_t want_in)
{
    return weft__input_check(g, opname, p, n_in, inputs, want_in, false);
}

static weft_status_t reduce_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                      weft_var_t *const *inputs, size_t *n_out,
                                      const weft_type_t **out_types)
{
    const weft__reduce_props_t *p = weft_op_props(op);
    weft_status_t st = weft__reduce_check_input(g, weft_op_name(op), p, n_in, inputs, 1);
    if (st == WEFT_OK) {
        st = weft__reduce_check_complex(g, weft_op_name(op), p->kind == WEFT_REDUCE_MAX ||
                                        p->kind == WEFT_REDUCE_MIN, weft_var_type(inputs[0]));
    }
    if (st != WEFT_OK) {
        return st;
    }
    const weft_type_t *t = weft_var_type(inputs[0]);
    int64_t shape[WEFT_MAX_NDIM], out_shape[WEFT_MAX_NDIM];
    for (int d = 0; d < p->ndim; d++) {
        shape[d] = weft_type_dim(t, d);
    }
    int nd = weft__reduce_out_shape(p, shape, out_shape);
    weft_dtype_t dt = weft__reduce_out_dtype((weft_reduce_kind_t)p->kind, weft_type_dtype(t));
    *n_out = 1;
    return weft_type_tensor(g, dt, nd, out_shape, &out_types[0]);
}

void weft__reduce_c_strides(int ndim, const int64_t *shape, int64_t *strides)
{
    int64_t s = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        strides[d] = s;
        s *= shape[d] > 0 ? shape[d] : 1;
    }
}

void weft__reduce_loop_init(const weft__reduce_props_t *p, const weft_tensor_t *x,
                            const int64_t *out_strides, const int64_t *g_strides,
                            weft__rloop_t *l)
{
    l->ndim = p->ndim;
    int k = 0;
    for (int d = 0; d < p->ndim; d++) {
        bool red = (p->axes & (1u << d)) != 0;
        l->shape[d] = weft_tensor_dim(x, d);
        l->sx[d] = weft_tensor_stride(x, d);
        l->so[d] = red ? 0 : out_strides[k];
        l->sg[d] = red || !g_strides ? 0 : g_strides[k];
        if (!red || p->keepdims) {
            k++;
        }
    }
}

int64_t weft__reduce_group_size(const weft__reduce_props_t *p, const weft_tensor_t *x)
{
    int64_t n = 1;
    for (int d = 0; d < p->ndim; d++) {
        if (p->axes & (1u << d)) {
            n *= weft_tensor_dim(x, d);
        }
    }
    return n;
}

weft_status_t weft__reduce_check_tensor(weft_kernel_ctx_t *ctx, const char *opname,
                                        const weft__reduce_props_t *p, const weft_tensor_t *x)
{
    if (!x || weft_tensor_ndim(x) != p->ndim || !weft__reduce_dtype_ok(weft_tensor_dtype(x))) {
        return weft_kernel_error(ctx, WEFT_ESHAPE, "%s: input has %d dims or an unsupported "
                                 "dtype, expected %d dims", opname, weft_tensor_ndim(x),
                                 (int)p->ndim);
    }
    return WEFT_OK;
}

weft_status_t weft__reduce_check_nonempty(weft_kernel_ctx_t *ctx, const char *opname,
                                          const char *operation,
                                          const weft__reduce_props_t *p, const weft_tensor_t *x)
{
    for (int d = 0; d < p->ndim; d++) {
        if ((p->axes & (1u << d)) && weft_tensor_dim(x, d) == 0) {
            return weft_kernel_error(ctx, WEFT_ESHAPE, "%s: zero-size array to reduction "
                                     "operation %s which has no identity (reduced axis %d "
                                     "has length 0)", opname, operation, d);
        }
    }
    return WEFT_OK;
}

static weft_status_t reduce_perform(const weft_apply_t *node, weft_tensor_t *const *inputs,
                                    weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    const weft_op_t *op = weft_apply_op(node);
    const weft__reduce_props_t *p = weft_op_props(op);
    weft_reduce_kind_t kind = (weft_reduce_kind_t)p->kind;
    const weft_tensor_t *x = inputs[0];
    weft_status_t st = weft__reduce_check_tensor(ctx, weft_op_name(op), p, x);
    bool is_max = kind == WEFT_REDUCE_MAX;
    if (st == WEFT_OK && (is_max || kind == WEFT_REDUCE_MIN)) {
        st = weft__reduce_check_nonempty(ctx, weft_op_name(op), is_max ? "maximum" : "minimum",
                                         p, x);
    }
    if (st != WEFT_OK) {
        return st;
    }
    int64_t out_shape[WEFT_MAX_NDIM], out_strides[WEFT_MAX_NDIM];
    int nd = weft__reduce_out_shape(p, weft_tensor_shape(x), out_shape);
    weft_dtype_t dx = weft_tensor_dtype(x), dout = weft__reduce_out_dtype(kind, dx);
    st = weft_kernel_alloc_output(ctx, &outputs[0], dout, nd, out_shape);
    if (st != WEFT_OK) {
        return st;
    }
    int64_t n_out = (int64_t)weft_tensor_size(outputs[0]);
    int64_t group = weft__reduce_group_size(p, x);
    weft__reduce_c_strides(nd, out_shape, out_strides);
    weft__rloop_t loop;
    weft__reduce_loop_init(p, x, out_strides, NULL, &loop);
    void *out = weft_tensor_data(outputs[0]);
    st = weft__reduce_run(ctx, kind, dx, weft_tensor_data(x), dout, out, n_out, &loop);
    if (st == WEFT_OK && kind == WEFT_REDUCE_MEAN) {
        weft__reduce_divide(dout, out, n_out, (double)group); /* 0 / 0: NaN */
    }
    return st;
}

/* d reduce / d x = ReduceGrad(x, gz) for float x; integer inputs carry no
 * gradient (left NULL: disconnected). */
static weft_status_t reduce_grad(weft_graph_t *g, const weft_apply_t *node,
                                 weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    weft_var_t *x = weft_apply_input(node, 0);
    weft_dtype_t dt = weft_type_dtype(weft_var_type(x));
    if (!output_grads[0] || weft_dtype_kind(dt) != WEFT_KIND_FLOAT) {
        return WEFT_OK;
    }
    const weft__reduce_props_t *p = weft_op_props(weft_apply_op(node));
    const char *file;
    int line;
    weft_apply_trace(node, &file, &line);
    return weft__reduce_grad_build(g, p, x, output_grads[0], file, line, &input_grads[0]);
}

#define REDUCE_CLASS(kname, cname)                                  \
    const weft_op_class_t weft__reduce_class_##kname = {           \
        .size = sizeof(weft_op_class_t),                           \
        .name = cname,                                              \
        .props_size = sizeof(weft__reduce_props_t),                \
        .props_print = weft__reduce_props_print,                   \
        .props_to_json = weft__reduce_props_to_json,               \
        .props_from_json = weft__reduce_props_from_json,           \
        .make_node = reduce_make_node,                             \
        .perform = reduce_perform,                                 \
        .grad = reduce_grad,                                       \
    };

REDUCE_CLASS(sum, "Sum")
REDUCE_CLASS(mean, "Mean")
REDUCE_CLASS(max, "Max")
REDUCE_CLASS(min, "Min")
REDUCE_CLASS(prod, "Prod")

const weft_op_class_t *weft__reduce_class(weft_reduce_kind_t kind)
{
    static const weft_op_class_t *const classes[WEFT_REDUCE_KIND_COUNT] = {
        &weft__reduce_class_sum, &weft__reduce_class_mean, &weft__reduce_class_max,
        &weft__reduce_class_min, &weft__reduce_class_prod};
    return (unsigned)kind < WEFT_REDUCE_KIND_COUNT ? classes[kind] : NULL;
}

weft_status_t weft__reduce_axes_mask(weft_graph_t *g, const char *opname, int ndim,
                                     size_t n_axes, const int *axes, const char *file, int line,
                                     uint32_t *mask)
{
    *mask = 0;
    if (!axes) {
        if (n_axes != 0) {
            return weft_graph_set_error(g, WEFT_EINVAL, "%s (at %s:%d): NULL axes with "
                                        "n_axes %zu", opname, file, line, n_axes);
        }
        *mask = ndim > 0 ? (uint32_t)((1ull << ndim) - 1) : 0;
        return WEFT_OK;
    }
    for (size_t i = 0; i < n_axes; i++) {
        int a = axes[i] < 0 ? axes[i] + ndim : axes[i];
        if (a < 0 || a >= ndim || (*mask & (1u << a))) {
            return weft_graph_set_error(g, WEFT_EINVAL, "%s (at %s:%d): axis %d %s for an "
                                        "input with %d dims", opname, file, line, axes[i],
                                        (a >= 0 && a < ndim) ? "repeated" : "out of range",
                                        ndim);
        }
        *mask |= 1u << a;
    }
    return WEFT_OK;
}

weft_status_t weft__input_type_check(weft_graph_t *g, weft_var_t *x, const char *opname,
                                     const char *file, int line, bool with_bool, int *ndim)
{
    if (weft_var_graph(x) != g) {
        char vb[256];
        weft_var_print(x, vb, sizeof(vb));
        return weft_graph_set_error(g, WEFT_EFOREIGN,
                                    "%s (at %s:%d): input %s belongs to another graph context",
                                    opname, file, line, vb);
    }
    const weft_type_t *t = weft_var_type(x);
    weft_dtype_t dt = weft_type_dtype(t);
    if (weft_type_kind(t) != WEFT_TYPE_TENSOR ||
        !(weft__reduce_dtype_ok(dt) || (with_bool && dt == WEFT_BOOL))) {
        char tb[64];
        weft_type_print(t, tb, sizeof tb);
        return weft_graph_set_error(g, WEFT_ETYPE, "%s (at %s:%d): input has type %s (%s is "
                                    "not supported by %s)", opname, file, line, tb,
                                    weft_dtype_name(weft_type_dtype(t)), opname);
    }
    *ndim = weft_type_ndim(t);
    return WEFT_OK;
}

weft_status_t weft__reduce_input_type(weft_graph_t *g, weft_var_t *x, const char *opname,
                                      const char *file, int line, int *ndim)
{
    return weft__input_type_check(g, x, opname, file, line, false, ndim);
}

static weft_status_t reduce_impl(weft_graph_t *g, weft_reduce_kind_t kind, weft_var_t *x,
                                 size_t n_axes, const int *axes, bool keepdims, const char *file,
                                 int line, weft_var_t **out)
{
    if (out) {
        *out = NULL;
    }
    if (!g || !x || !out || (unsigned)kind >= WEFT_REDUCE_KIND_COUNT) {
        return g ? weft_graph_set_error(g, WEFT_EINVAL, "reduce (at %s:%d): NULL argument or "
                                        "bad kind", file ? file : "?", line)
                 : WEFT_EINVAL;
    }
    const char *name = reduce_names[kind];
    int ndim = 0;
    weft_status_t st = weft__reduce_input_type(g, x, name, file, line, &ndim);
    weft__reduce_props_t p;
    memset(&p, 0, sizeof p);
    p.kind = (int32_t)kind;
    p.ndim = ndim;
    p.keepdims = keepdims ? 1 : 0;
    if (st == WEFT_OK) {
        st = weft__reduce_axes_mask(g, name, ndim, n_axes, axes, file, line, &p.axes);
    }
    const weft_op_t *op = NULL;
    if (st == WEFT_OK) {
        st = weft_op_create(g, weft__reduce_class(kind), &p, &op);
    }
    return st == WEFT_OK ? weft__got(g, *out = weft_op_call_at(g, op, 1, &x, file, line)) : st;
}

weft_var_t *weft_reduce_at(weft_graph_t *g, weft_reduce_kind_t kind, weft_var_t *x, size_t n_axes,
                           const int *axes, bool keepdims, const char *file, int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t st = reduce_impl(g, kind, x, n_axes, axes, keepdims, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_reduce", file, line);
}
