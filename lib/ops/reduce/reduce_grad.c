/* ReduceGrad{kind, axes, keepdims}(x, gz): the gradient of a reduction with
 * respect to its input (see weft/reduce.h for the rule per kind). One op for
 * every kind keeps the gradient graph small: the broadcast back (Sum, Mean),
 * the argmax mask (Max, Min) and the zero-aware product rule (Prod) are each
 * one pass over x. Its own gradient exists for Sum/Mean (it is linear in gz:
 * the same reduction of the incoming gradient); for Max/Min/Prod it is the
 * null type (undefined), so second order through them reports WEFT_ENOGRAD. */
#include <stdio.h>
#include <string.h>

#include "graph/ctor_int.h"
#include "ops_int.h"
#include "reduce_ops_int.h"

static bool rgrad_float(const weft_type_t *t)
{
    weft_dtype_t dt = weft_type_dtype(t);
    return weft_type_kind(t) == WEFT_TYPE_TENSOR && weft_dtype_kind(dt) == WEFT_KIND_FLOAT;
}

static weft_status_t rgrad_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                     weft_var_t *const *inputs, size_t *n_out,
                                     const weft_type_t **out_types)
{
    const weft__reduce_props_t *p = weft_op_props(op);
    weft_status_t st = weft__reduce_check_input(g, "ReduceGrad", p, n_in, inputs, 2);
    if (st != WEFT_OK) {
        return st;
    }
    const weft_type_t *tx = weft_var_type(inputs[0]), *tg = weft_var_type(inputs[1]);
    int64_t shape[WEFT_MAX_NDIM], out_shape[WEFT_MAX_NDIM];
    for (int d = 0; d < p->ndim; d++) {
        shape[d] = weft_type_dim(tx, d);
    }
    int nd = weft__reduce_out_shape(p, shape, out_shape);
    if (!rgrad_float(tx) || !rgrad_float(tg) || weft_type_dtype(tx) != weft_type_dtype(tg) ||
        weft_type_ndim(tg) != nd) {
        char bx[64], bg[64];
        weft_type_print(tx, bx, sizeof bx);
        weft_type_print(tg, bg, sizeof bg);
        return weft_graph_set_error(g, WEFT_ETYPE, "ReduceGrad: input 0 %s and input 1 %s "
                                    "(need one float dtype, input 1 of rank %d)", bx, bg, nd);
    }
    for (int d = 0; d < nd; d++) {
        int64_t a = out_shape[d], b = weft_type_dim(tg, d);
        if (a != WEFT_DIM_UNKNOWN && b != WEFT_DIM_UNKNOWN && a != b) {
            return weft_graph_set_error(g, WEFT_ETYPE, "ReduceGrad: input 1 dim %d is %lld, "
                                        "the reduction gives %lld", d, (long long)b,
                                        (long long)a);
        }
    }
    *n_out = 1;
    out_types[0] = tx;
    return WEFT_OK;
}

static weft_status_t rgrad_check_gz(weft_kernel_ctx_t *ctx, const weft__reduce_props_t *p,
                                    const weft_tensor_t *x, const weft_tensor_t *gz)
{
    int64_t want[WEFT_MAX_NDIM];
    int nd = weft__reduce_out_shape(p, weft_tensor_shape(x), want);
    bool ok = gz && weft_tensor_ndim(gz) == nd && weft_tensor_dtype(gz) == weft_tensor_dtype(x)
              && weft_dtype_kind(weft_tensor_dtype(x)) == WEFT_KIND_FLOAT;
    for (int d = 0; ok && d < nd; d++) {
        ok = weft_tensor_dim(gz, d) == want[d];
    }
    if (!ok) {
        return weft_kernel_error(ctx, WEFT_ESHAPE, "ReduceGrad: the output gradient does not "
                                 "have the reduction's shape and dtype");
    }
    return WEFT_OK;
}

/* Prod / Max / Min gradients: per-group scratch (a value and a count) from
 * the kernel context, so warm calls allocate nothing. */
static weft_status_t rgrad_with_scratch(weft_kernel_ctx_t *ctx, const weft__reduce_props_t *p,
                                        weft_dtype_t dt, const void *xd, const void *gd,
                                        void *dx, int64_t n_out, const weft__rloop_t *loop)
{
    const int64_t len[1] = {n_out > 0 ? n_out : 1};
    weft_tensor_t *acc = NULL, *cnt = NULL;
    weft_status_t st = weft_kernel_scratch(ctx, WEFT_FLOAT64, 1, len, &acc);
    if (st == WEFT_OK) st = weft_kernel_scratch(ctx, WEFT_INT64, 1, len, &cnt);
    if (st == WEFT_OK && p->kind == WEFT_REDUCE_PROD)
        weft__reduce_grad_prod(dt, xd, gd, dx, n_out, weft_tensor_data(acc),
                               weft_tensor_data(cnt), loop);
    else if (st == WEFT_OK)
        weft__reduce_grad_extreme(dt, p->kind == WEFT_REDUCE_MAX, xd, gd, dx, n_out,
                                  weft_tensor_data(acc), weft_tensor_data(cnt), loop);
    weft_kernel_scratch_done(ctx, acc);
    weft_kernel_scratch_done(ctx, cnt);
    return st;
}

static weft_status_t rgrad_perform(const weft_apply_t *node, weft_tensor_t *const *inputs,
                                   weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    const weft__reduce_props_t *p = weft_op_props(weft_apply_op(node));
    const weft_tensor_t *x = inputs[0], *gz = inputs[1];
    weft_status_t st = weft__reduce_check_tensor(ctx, "ReduceGrad", p, x);
    if (st == WEFT_OK) {
        st = rgrad_check_gz(ctx, p, x, gz);
    }
    weft_dtype_t dt = weft_tensor_dtype(x);
    if (st == WEFT_OK) {
        st = weft_kernel_alloc_output(ctx, &outputs[0], dt, p->ndim, weft_tensor_shape(x));
    }
    if (st != WEFT_OK) {
        return st;
    }
    int64_t out_shape[WEFT_MAX_NDIM], out_strides[WEFT_MAX_NDIM];
    int nd = weft__reduce_out_shape(p, weft_tensor_shape(x), out_shape);
    weft__reduce_c_strides(nd, out_shape, out_strides);
    weft__rloop_t loop;
    weft__reduce_loop_init(p, x, out_strides, weft_tensor_strides(gz), &loop);
    int64_t n_out = (int64_t)weft_tensor_size(gz), group = weft__reduce_group_size(p, x);
    const void *xd = weft_tensor_data(x), *gd = weft_tensor_data(gz);
    void *dx = weft_tensor_data(outputs[0]);
    switch ((weft_reduce_kind_t)p->kind) {
    case WEFT_REDUCE_SUM:
        weft__reduce_grad_broadcast(dt, gd, dx, 1.0, &loop);
        break;
    case WEFT_REDUCE_MEAN:
        weft__reduce_grad_broadcast(dt, gd, dx, 1.0 / (double)group, &loop);
        break;
    default:
        st = rgrad_with_scratch(ctx, p, dt, xd, gd, dx, n_out, &loop);
        break;
    }
    return st;
}

static weft_status_t rgrad_grad(weft_graph_t *g, const weft_apply_t *node,
                                weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    const weft__reduce_props_t *p = weft_op_props(weft_apply_op(node));
    if (!output_grads[0]) {
        return WEFT_OK;
    }
    if (p->kind != WEFT_REDUCE_SUM && p->kind != WEFT_REDUCE_MEAN) {
        weft_status_t st = weft__grad_null(g, node, &input_grads[0]);
        return st == WEFT_OK ? weft__grad_null(g, node, &input_grads[1]) : st;
    }
    /* Linear in gz, independent of x's values: d/dgz is the same reduction. */
    int axes[WEFT_MAX_NDIM], n = 0;
    for (int d = 0; d < p->ndim; d++) {
        if (p->axes & (1u << d)) {
            axes[n++] = d;
        }
    }
    const char *file;
    int line;
    weft_apply_trace(node, &file, &line);
    return weft__got(g, input_grads[1] =
                            weft_reduce_at(g, (weft_reduce_kind_t)p->kind, output_grads[0],
                                           (size_t)n, axes, p->keepdims != 0, file, line));
}

static int rgrad_props_print(const void *props, char *buf, size_t cap)
{
    const weft__reduce_props_t *p = props;
    int n = snprintf(buf, cap, "kind=%s, ", weft__reduce_kind_name((weft_reduce_kind_t)p->kind));
    size_t used = n > 0 && (size_t)n < cap ? (size_t)n : cap;
    int m = weft__reduce_props_print(props, buf ? buf + used : NULL, cap - used);
    return n + m;
}

const weft_op_class_t weft__reduce_grad_class = {
    .size = sizeof(weft_op_class_t),
    .name = "ReduceGrad",
    .props_size = sizeof(weft__reduce_props_t),
    .props_print = rgrad_props_print,
    .props_to_json = weft__reduce_props_to_json,
    .props_from_json = weft__reduce_props_from_json,
    .make_node = rgrad_make_node,
    .perform = rgrad_perform,
    .grad = rgrad_grad,
};

weft_status_t weft__reduce_grad_build(weft_graph_t *g, const weft__reduce_props_t *p,
                                      weft_var_t *x, weft_var_t *gz, const char *file, int line,
                                      weft_var_t **out)
{
    const weft_op_t *op = NULL;
    weft_status_t st = weft_op_create(g, &weft__reduce_grad_class, p, &op);
    weft_var_t *in[2] = {x, gz};
    return st == WEFT_OK ? weft__got(g, *out = weft_op_call_at(g, op, 2, in, file, line)) : st;
}
