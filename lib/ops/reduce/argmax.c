/* Argmax{axes, keepdims}: int64 index of the first maximum along one axis or
 * over the flattened tensor (C order). Shares the reduction props (kind is
 * unused, always WEFT_REDUCE_MAX) and the strided visit of reduce_kernels.c.
 * Its output is an integer, so it has no gradient: the grad hook and the
 * connection pattern leave the input disconnected. */
#include <string.h>

#include "graph/ctor_int.h"
#include "reduce_ops_int.h"

static weft_status_t argmax_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                      weft_var_t *const *inputs, size_t *n_out,
                                      const weft_type_t **out_types)
{
    const weft__reduce_props_t *p = weft_op_props(op);
    weft_status_t st = weft__reduce_check_input(g, "Argmax", p, n_in, inputs, 1);
    if (st == WEFT_OK) {
        st = weft__reduce_check_complex(g, "Argmax", true, weft_var_type(inputs[0]));
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
    *n_out = 1;
    return weft_type_tensor(g, WEFT_INT64, nd, out_shape, &out_types[0]);
}

static weft_status_t argmax_perform(const weft_apply_t *node, weft_tensor_t *const *inputs,
                                    weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    const weft__reduce_props_t *p = weft_op_props(weft_apply_op(node));
    const weft_tensor_t *x = inputs[0];
    weft_status_t st = weft__reduce_check_tensor(ctx, "Argmax", p, x);
    if (st == WEFT_OK) {
        st = weft__reduce_check_nonempty(ctx, "Argmax", "argmax", p, x);
    }
    if (st != WEFT_OK) {
        return st;
    }
    int64_t out_shape[WEFT_MAX_NDIM], out_strides[WEFT_MAX_NDIM];
    int nd = weft__reduce_out_shape(p, weft_tensor_shape(x), out_shape);
    st = weft_kernel_alloc_output(ctx, &outputs[0], WEFT_INT64, nd, out_shape);
    if (st != WEFT_OK) {
        return st;
    }
    int64_t n_out = (int64_t)weft_tensor_size(outputs[0]);
    weft__reduce_c_strides(nd, out_shape, out_strides);
    weft__rloop_t loop;
    weft__reduce_loop_init(p, x, out_strides, NULL, &loop);
    int64_t small[64]; /* the usual small outputs need no pool scratch */
    weft_tensor_t *scratch = NULL;
    const int64_t len[1] = {n_out};
    if (n_out > 64 && (st = weft_kernel_scratch(ctx, WEFT_INT64, 1, len, &scratch)) != WEFT_OK)
        return st;
    weft__reduce_argmax(weft_tensor_dtype(x), weft_tensor_data(x), weft_tensor_data(outputs[0]),
                        scratch ? weft_tensor_data(scratch) : small, n_out, &loop);
    weft_kernel_scratch_done(ctx, scratch);
    return WEFT_OK;
}

/* An integer output: the input gets no gradient (disconnected). */
static weft_status_t argmax_grad(weft_graph_t *g, const weft_apply_t *node,
                                 weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    (void)g;
    (void)node;
    (void)output_grads;
    input_grads[0] = NULL;
    return WEFT_OK;
}

static bool argmax_connected(const weft_apply_t *node, size_t in, size_t out)
{
    (void)node;
    (void)in;
    (void)out;
    return false;
}

const weft_op_class_t weft__argmax_class = {
    .size = sizeof(weft_op_class_t),
    .name = "Argmax",
    .props_size = sizeof(weft__reduce_props_t),
    .props_print = weft__reduce_props_print,
    .props_to_json = weft__reduce_props_to_json,
    .props_from_json = weft__reduce_props_from_json,
    .make_node = argmax_make_node,
    .perform = argmax_perform,
    .connection_pattern = argmax_connected,
    .grad = argmax_grad,
};

static weft_status_t argmax_impl(weft_graph_t *g, weft_var_t *x, int axis, bool keepdims,
                                 const char *file, int line, weft_var_t **out)
{
    if (out) {
        *out = NULL;
    }
    if (!g || !x || !out) {
        return g ? weft_graph_set_error(g, WEFT_EINVAL, "Argmax (at %s:%d): NULL argument",
                                        file ? file : "?", line)
                 : WEFT_EINVAL;
    }
    int ndim = 0;
    weft_status_t st = weft__reduce_input_type(g, x, "Argmax", file, line, &ndim);
    if (st != WEFT_OK) {
        return st;
    }
    weft__reduce_props_t p;
    memset(&p, 0, sizeof p);
    p.kind = WEFT_REDUCE_MAX;
    p.ndim = ndim;
    p.keepdims = keepdims ? 1 : 0;
    if (axis == WEFT_ARGMAX_FLAT) {
        p.axes = ndim > 0 ? (uint32_t)((1ull << ndim) - 1) : 0;
    } else {
        int a = axis < 0 ? axis + ndim : axis;
        if (a < 0 || a >= ndim) {
            return weft_graph_set_error(g, WEFT_EINVAL, "Argmax (at %s:%d): axis %d out of "
                                        "range for an input with %d dims", file, line, axis,
                                        ndim);
        }
        p.axes = 1u << a;
    }
    const weft_op_t *op = NULL;
    st = weft_op_create(g, &weft__argmax_class, &p, &op);
    return st == WEFT_OK ? weft__got(g, *out = weft_op_call_at(g, op, 1, &x, file, line)) : st;
}

weft_var_t *weft_argmax_at(weft_graph_t *g, weft_var_t *x, int axis, bool keepdims,
                           const char *file, int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t st = argmax_impl(g, x, axis, keepdims, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_argmax", file, line);
}
