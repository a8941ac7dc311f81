/* Softmax / LogSoftmax{ndim, axis, inplace} (weft/nn.h): constructors, type
 * inference, perform (softmax_kernels.c), the in-place variants (destroy_map
 * {0: [0]}: the kernel reads each element before writing it, so x may be
 * its own output), JSON props and gradients (composed from existing ops, so
 * they have gradients of their own). */
#include <stdio.h>
#include <string.h>

#include "graph/ctor_int.h"
#include "nn_int.h"
#include "props_fields_int.h"
#include "reduce/reduce_ops_int.h"
#include "weft/elemwise.h"
#include "weft/nn.h"

typedef struct smax_props {
    int32_t ndim, axis, inplace;
} smax_props_t;

static bool is_log_op(const weft_op_t *op)
{
    return weft_op_class(op) == &weft__log_softmax_class;
}

static bool is_float(weft_dtype_t dt)
{
    return dt == WEFT_FLOAT32 || dt == WEFT_FLOAT64;
}

/* "Softmax: input x has dtype int32 (need float32 or float64; cast it
 * first)", naming the input's creation site. */
weft_status_t weft__nn_float_error(weft_graph_t *g, const char *name, const char *file, int line,
                                   weft_var_t *x)
{
    char site[300] = "";
    if (file) snprintf(site, sizeof site, " (at %s:%d)", file, line);
    char vb[256];
    const char *vf = NULL;
    int vl = 0;
    weft_var_print(x, vb, sizeof vb);
    weft_var_trace(x, &vf, &vl);
    return weft_graph_set_error(g, WEFT_ETYPE, "%s%s: input %s (created at %s:%d) has dtype "
                                "%s (need float32 or float64; cast it first)", name, site, vb,
                                vf ? vf : "?", vl,
                                weft_dtype_name(weft_type_dtype(weft_var_type(x))));
}

static weft_status_t smax_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                    weft_var_t *const *inputs, size_t *n_out,
                                    const weft_type_t **out_types)
{
    const smax_props_t *p = weft_op_props(op);
    int64_t shape[WEFT_MAX_NDIM];
    weft_status_t st = weft__axis_op_input(g, op, p->ndim, p->axis, n_in, inputs, shape);
    if (st != WEFT_OK) return st;
    weft_dtype_t dt = weft_type_dtype(weft_var_type(inputs[0]));
    if (!is_float(dt)) return weft__nn_float_error(g, weft_op_name(op), NULL, 0, inputs[0]);
    *n_out = 1;
    return weft_type_tensor(g, dt, p->ndim, shape, &out_types[0]);
}

/* In place: the kernel runs on x itself, or on a contiguous copy copied
 * back; the output cell then holds x. */
static weft_status_t smax_perform(const weft_apply_t *node, weft_tensor_t *const *inputs,
                                  weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    const weft_op_t *op = weft_apply_op(node);
    const smax_props_t *p = weft_op_props(op);
    weft_tensor_t *x = inputs[0], *xc = NULL;
    if (!x || weft_tensor_ndim(x) != p->ndim || !is_float(weft_tensor_dtype(x))) {
        return weft_kernel_error(ctx, WEFT_ESHAPE, "%s: input has %d dims or a non-float "
                                 "dtype, expected %d dims", weft_op_name(op),
                                 x ? weft_tensor_ndim(x) : -1, (int)p->ndim);
    }
    weft_status_t st = WEFT_OK;
    if (!p->inplace)
        st = weft_kernel_alloc_output(ctx, &outputs[0], weft_tensor_dtype(x), p->ndim,
                                      weft_tensor_shape(x));
    if (st == WEFT_OK) st = weft_kernel_contiguous(ctx, x, &xc);
    weft_tensor_t *y = p->inplace ? xc : outputs[0];
    if (st == WEFT_OK) st = weft__softmax_run(ctx, is_log_op(op), p->axis, xc, y);
    if (st == WEFT_OK && p->inplace && xc != x) st = weft_tensor_copy(x, xc);
    weft_kernel_contiguous_done(ctx, x, xc);
    if (st == WEFT_OK && p->inplace) weft_kernel_set_output(ctx, &outputs[0], weft_tensor_retain(x));
    return st;
}

static size_t smax_destroy_map(const weft_op_t *op, weft_op_alias_t *out, size_t cap)
{
    const smax_props_t *p = weft_op_props(op);
    if (!p->inplace || cap < 1) return 0;
    out[0].output = 0;
    out[0].input = 0;
    return 1;
}

static weft_status_t smax_inplace_variant(weft_graph_t *g, const weft_op_t *op, size_t input,
                                          const weft_op_t **out)
{
    smax_props_t q = *(const smax_props_t *)weft_op_props(op);
    if (input != 0 || q.inplace)
        return weft_graph_set_error(g, WEFT_ENOTIMPL, "%s: no in-place variant for input %zu",
                                    weft_op_name(op), input);
    q.inplace = 1;
    return weft_op_create(g, weft_op_class(op), &q, out);
}

/* Softmax: y (gz - sum(gz y)); LogSoftmax: gz - exp(y) sum(gz); the sums
 * over the axis, kept as a length-1 axis. */
static weft_status_t smax_grad(weft_graph_t *g, const weft_apply_t *node,
                               weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    const weft_op_t *op = weft_apply_op(node);
    const smax_props_t *p = weft_op_props(op);
    weft_var_t *y = weft_apply_output(node, 0), *gz = output_grads[0];
    input_grads[0] = NULL;
    if (!gz) return WEFT_OK;
    int axis = p->axis;
    if (is_log_op(op)) {
        weft_var_t *s = weft_sum(g, gz, 1, &axis, true);
        return weft__got(g, input_grads[0] = weft_sub(g, gz, weft_mul(g, weft_exp(g, y), s)));
    }
    weft_var_t *s = weft_sum(g, weft_mul(g, gz, y), 1, &axis, true);
    return weft__got(g, input_grads[0] = weft_mul(g, y, weft_sub(g, gz, s)));
}

static int smax_props_print(const void *props, char *buf, size_t cap)
{
    const smax_props_t *p = props;
    return snprintf(buf, cap, p->inplace ? "axis=%d, inplace=0" : "axis=%d", (int)p->axis);
}

/* JSON props: {"ndim": 2, "axis": 1, "inplace": false}. */
static const weft__props_fields_t smax_fields = {
    sizeof(smax_props_t),
    {WEFT__PROPS_FIELD("ndim", WEFT__FIELD_I32, smax_props_t, ndim),
     WEFT__PROPS_FIELD("axis", WEFT__FIELD_I32, smax_props_t, axis),
     WEFT__PROPS_FIELD("inplace", WEFT__FIELD_I32_BOOL, smax_props_t, inplace)},
};
WEFT__PROPS_FIELDS_HOOKS(smax, smax_fields)

#define SMAX_CLASS(var, cname)                    \
    const weft_op_class_t var = {                 \
        .size = sizeof(weft_op_class_t),          \
        .name = cname,                            \
        .props_size = sizeof(smax_props_t),       \
        .props_print = smax_props_print,          \
        .props_to_json = smax_to_json,            \
        .props_from_json = smax_from_json,        \
        .make_node = smax_make_node,              \
        .perform = smax_perform,                  \
        .destroy_map = smax_destroy_map,          \
        .inplace_variant = smax_inplace_variant,  \
        .grad = smax_grad,                        \
    };
SMAX_CLASS(weft__softmax_class, "Softmax")
SMAX_CLASS(weft__log_softmax_class, "LogSoftmax")

static weft_status_t smax_impl(weft_graph_t *g, bool is_log, weft_var_t *x, int axis,
                               const char *file, int line, weft_var_t **out)
{
    *out = NULL;
    const char *name = is_log ? "LogSoftmax" : "Softmax";
    smax_props_t p = {0, 0, 0};
    weft_status_t st = weft__axis_arg(g, x, name, axis, file, line, &p.ndim, &p.axis);
    if (st == WEFT_OK && !is_float(weft_type_dtype(weft_var_type(x))))
        st = weft__nn_float_error(g, name, file, line, x);
    const weft_op_t *op = NULL;
    if (st == WEFT_OK)
        st = weft_op_create(g, is_log ? &weft__log_softmax_class : &weft__softmax_class, &p, &op);
    return st == WEFT_OK ? weft__got(g, *out = weft_op_call_at(g, op, 1, &x, file, line)) : st;
}

weft_var_t *weft_softmax_op_at(weft_graph_t *g, bool is_log, weft_var_t *x, int axis,
                               const char *file, int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t st = smax_impl(g, is_log, x, axis, file, line, &out);
    return weft__ctor_end(g, st, out, is_log ? "weft_log_softmax" : "weft_softmax", file, line);
}

bool weft_softmax_op_info(const weft_op_t *op, bool *is_log, int *axis)
{
    const weft_op_class_t *cls = op ? weft_op_class(op) : NULL;
    if (cls != &weft__softmax_class && cls != &weft__log_softmax_class) return false;
    if (is_log) *is_log = cls == &weft__log_softmax_class;
    if (axis) *axis = ((const smax_props_t *)weft_op_props(op))->axis;
    return true;
}
