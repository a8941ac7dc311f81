/* Argmax / Argmin{axes, keepdims}: int64 index of the first maximum /
 * minimum over a set of axes: the flat C-order index into the reduced axes'
 * sub-block (PyTensor's Argmax; one axis: the position along it; every axis:
 * NumPy's flattened argmax). Shares the reduction props (kind WEFT_REDUCE_MAX
 * or WEFT_REDUCE_MIN) and runs on the lane engine (lred_kernels.c), split
 * over the pool by fixed blocks.
 * Its output is an integer, so it has no gradient: the grad hook and the
 * connection pattern leave the input disconnected. */
#include <string.h>

#include "graph/ctor_int.h"
#include "lred_int.h"
#include "reduce_ops_int.h"

static weft_status_t argmax_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                      weft_var_t *const *inputs, size_t *n_out,
                                      const weft_type_t **out_types)
{
    const weft__reduce_props_t *p = weft_op_props(op);
    /* complex first: its refusal says why (no order), not only "not supported" */
    weft_status_t st = weft__input_check(g, weft_op_name(op), p, n_in, inputs, 1, true);
    if (st == WEFT_OK) {
        st = weft__reduce_check_complex(g, weft_op_name(op), true, weft_var_type(inputs[0]));
    }
    if (st == WEFT_OK) {
        st = weft__lred_check_input(g, weft_op_name(op), p, n_in, inputs);
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
    bool is_max = p->kind == WEFT_REDUCE_MAX;
    return weft__lred_perform(ctx, is_max ? WEFT_LREDUCE_ARGMAX : WEFT_LREDUCE_ARGMIN, p, 0.0,
                              inputs[0], outputs);
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

#define ARG_CLASS(var, cname)                            \
    const weft_op_class_t var = {                        \
        .size = sizeof(weft_op_class_t),                 \
        .name = cname,                                   \
        .props_size = sizeof(weft__reduce_props_t),      \
        .props_print = weft__reduce_props_print,         \
        .props_to_json = weft__reduce_props_to_json,     \
        .props_from_json = weft__reduce_props_from_json, \
        .make_node = argmax_make_node,                   \
        .perform = argmax_perform,                       \
        .connection_pattern = argmax_connected,          \
        .grad = argmax_grad,                             \
    };
ARG_CLASS(weft__argmax_class, "Argmax")
ARG_CLASS(weft__argmin_class, "Argmin")

/* Argmax (is_max) or Argmin of x over the axes in mask. */
weft_status_t weft__arg_build(weft_graph_t *g, bool is_max, weft_var_t *x, uint32_t mask,
                              int ndim, bool keepdims, const char *file, int line,
                              weft_var_t **out)
{
    weft__reduce_props_t p;
    memset(&p, 0, sizeof p);
    p.kind = is_max ? WEFT_REDUCE_MAX : WEFT_REDUCE_MIN;
    p.ndim = ndim;
    p.axes = mask;
    p.keepdims = keepdims ? 1 : 0;
    const weft_op_t *op = NULL;
    weft_status_t st =
        weft_op_create(g, is_max ? &weft__argmax_class : &weft__argmin_class, &p, &op);
    return st == WEFT_OK ? weft__got(g, *out = weft_op_call_at(g, op, 1, &x, file, line)) : st;
}

static weft_status_t arg_impl(weft_graph_t *g, bool is_max, weft_var_t *x, int axis,
                              bool keepdims, const char *file, int line, weft_var_t **out)
{
    const char *name = is_max ? "Argmax" : "Argmin";
    *out = NULL;
    if (!g || !x) {
        return g ? weft_graph_set_error(g, WEFT_EINVAL, "%s (at %s:%d): NULL argument", name,
                                        file ? file : "?", line)
                 : WEFT_EINVAL;
    }
    int ndim = 0;
    /* complex first: its refusal says why (no order), not only "not supported" */
    weft_status_t st = weft__reduce_check_complex(g, name, true, weft_var_type(x));
    if (st == WEFT_OK) {
        st = weft__lred_input_type(g, x, name, file, line, &ndim);
    }
    if (st != WEFT_OK) {
        return st;
    }
    uint32_t mask = ndim > 0 ? (uint32_t)((1ull << ndim) - 1) : 0;
    if (axis != WEFT_ARGMAX_FLAT) {
        int a = axis < 0 ? axis + ndim : axis;
        if (a < 0 || a >= ndim) {
            return weft_graph_set_error(g, WEFT_EINVAL, "%s (at %s:%d): axis %d out of "
                                        "range for an input with %d dims", name, file, line,
                                        axis, ndim);
        }
        mask = 1u << a;
    }
    return weft__arg_build(g, is_max, x, mask, ndim, keepdims, file, line, out);
}

weft_var_t *weft_argmax_at(weft_graph_t *g, weft_var_t *x, int axis, bool keepdims,
                           const char *file, int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t st = arg_impl(g, true, x, axis, keepdims, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_argmax", file, line);
}

weft_var_t *weft_argmin_at(weft_graph_t *g, weft_var_t *x, int axis, bool keepdims,
                           const char *file, int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t st = arg_impl(g, false, x, axis, keepdims, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_argmin", file, line);
}
