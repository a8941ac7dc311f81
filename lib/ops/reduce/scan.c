/* CumSum / CumProd{ndim, axis, reverse} (weft/reduce.h "Scans"): constructor,
 * type inference, perform (scan_kernels.c), JSON props and gradients. */
#include <stdio.h>
#include <string.h>

#include "graph/ctor_int.h"
#include "props_fields_int.h"
#include "reduce_ops_int.h"
#include "scan_int.h"
#include "weft/elemwise.h"

typedef struct scan_props {
    int32_t ndim, axis, reverse;
} scan_props_t;

static bool is_prod_op(const weft_op_t *op)
{
    return weft_op_class(op) == &weft__cumprod_class;
}

static weft_status_t scan_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                    weft_var_t *const *inputs, size_t *n_out,
                                    const weft_type_t **out_types)
{
    const scan_props_t *p = weft_op_props(op);
    int64_t shape[WEFT_MAX_NDIM];
    weft_status_t st = weft__axis_op_input(g, op, p->ndim, p->axis, n_in, inputs, shape);
    if (st != WEFT_OK) {
        return st;
    }
    *n_out = 1;
    weft_dtype_t dt = weft__scan_out_dtype(weft_type_dtype(weft_var_type(inputs[0])));
    return weft_type_tensor(g, dt, p->ndim, shape, &out_types[0]);
}

static weft_status_t scan_perform(const weft_apply_t *node, weft_tensor_t *const *inputs,
                                  weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    const weft_op_t *op = weft_apply_op(node);
    const scan_props_t *p = weft_op_props(op);
    const weft_tensor_t *x = inputs[0];
    if (!x || weft_tensor_ndim(x) != p->ndim || !weft__lred_dtype_ok(weft_tensor_dtype(x))) {
        return weft_kernel_error(ctx, WEFT_ESHAPE, "%s: input has %d dims or an unsupported "
                                 "dtype, expected %d dims", weft_op_name(op),
                                 x ? weft_tensor_ndim(x) : -1, (int)p->ndim);
    }
    weft_status_t st =
        weft_kernel_alloc_output(ctx, &outputs[0], weft__scan_out_dtype(weft_tensor_dtype(x)),
                                 p->ndim, weft_tensor_shape(x));
    return st != WEFT_OK ? st
                         : weft__scan_run(ctx, is_prod_op(op), p->reverse != 0, p->axis, x,
                                          outputs[0]);
}

/* CumSum: the reverse scan of gz. CumProd (PyTensor's formula):
 * reverse_cumsum(cumprod(x) * gz) / x; NaN or inf where x is 0. */
static weft_status_t scan_grad(weft_graph_t *g, const weft_apply_t *node,
                               weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    const weft_op_t *op = weft_apply_op(node);
    const scan_props_t *p = weft_op_props(op);
    weft_var_t *x = weft_apply_input(node, 0), *gz = output_grads[0];
    weft_dtype_t dt = weft_type_dtype(weft_var_type(x));
    input_grads[0] = NULL;
    if (!gz || (dt != WEFT_FLOAT32 && dt != WEFT_FLOAT64)) {
        return WEFT_OK;
    }
    const char *file;
    int line;
    weft_apply_trace(node, &file, &line);
    bool rev = p->reverse == 0;
    if (!is_prod_op(op)) {
        return weft__got(g, input_grads[0] = weft_cumop_at(g, false, gz, p->axis, rev, file, line));
    }
    weft_var_t *prod = weft_binary(g, WEFT_ELEMWISE_MUL, weft_apply_output(node, 0), gz);
    weft_var_t *back = weft_cumop_at(g, false, prod, p->axis, rev, file, line);
    return weft__got(g, input_grads[0] = weft_binary(g, WEFT_ELEMWISE_DIV, back, x));
}

static int scan_props_print(const void *props, char *buf, size_t cap)
{
    const scan_props_t *p = props;
    return snprintf(buf, cap, "axis=%d, reverse=%d", (int)p->axis, p->reverse ? 1 : 0);
}

/* JSON props: {"ndim": 2, "axis": 1, "reverse": false}. */
static const weft__props_fields_t scan_fields = {
    sizeof(scan_props_t),
    {WEFT__PROPS_FIELD("ndim", WEFT__FIELD_I32, scan_props_t, ndim),
     WEFT__PROPS_FIELD("axis", WEFT__FIELD_I32, scan_props_t, axis),
     WEFT__PROPS_FIELD("reverse", WEFT__FIELD_I32_BOOL, scan_props_t, reverse)},
};
WEFT__PROPS_FIELDS_HOOKS(scan, scan_fields)

#define SCAN_CLASS(var, cname)                    \
    const weft_op_class_t var = {                 \
        .size = sizeof(weft_op_class_t),          \
        .name = cname,                            \
        .props_size = sizeof(scan_props_t),       \
        .props_print = scan_props_print,          \
        .props_to_json = scan_to_json,            \
        .props_from_json = scan_from_json,        \
        .make_node = scan_make_node,              \
        .perform = scan_perform,                  \
        .grad = scan_grad,                        \
    };
SCAN_CLASS(weft__cumsum_class, "CumSum")
SCAN_CLASS(weft__cumprod_class, "CumProd")

weft_status_t weft__axis_op_input(weft_graph_t *g, const weft_op_t *op, int ndim, int axis,
                                  size_t n_in, weft_var_t *const *inputs, int64_t *shape)
{
    weft__reduce_props_t r = {0, ndim, 0, 0};
    weft_status_t st = weft__lred_check_input(g, weft_op_name(op), &r, n_in, inputs);
    if (st == WEFT_OK && (axis < 0 || axis >= ndim)) {
        st = weft_graph_set_error(g, WEFT_EINVAL, "%s: axis %d out of range for %d dims",
                                  weft_op_name(op), axis, ndim);
    }
    for (int d = 0; st == WEFT_OK && d < ndim; d++) {
        shape[d] = weft_type_dim(weft_var_type(inputs[0]), d);
    }
    return st;
}

weft_status_t weft__axis_error(weft_graph_t *g, const char *name, weft_var_t *x, int axis,
                               const char *what, int ndim, const char *file, int line)
{
    char vb[256];
    weft_var_print(x, vb, sizeof vb);
    const char *vf = NULL;
    int vl = 0;
    weft_var_trace(x, &vf, &vl);
    return weft_graph_set_error(g, WEFT_EINVAL, "%s (at %s:%d): axis %d %s for input %s with "
                                "%d dims (created at %s:%d)", name, file, line, axis, what, vb,
                                ndim, vf ? vf : "?", vl);
}

weft_status_t weft__axis_arg(weft_graph_t *g, weft_var_t *x, const char *name, int axis,
                             const char *file, int line, int *ndim, int *out_axis)
{
    if (!g || !x) {
        return g ? weft_graph_set_error(g, WEFT_EINVAL, "%s (at %s:%d): NULL argument", name,
                                        file ? file : "?", line)
                 : WEFT_EINVAL;
    }
    weft_status_t st = weft__lred_input_type(g, x, name, file, line, ndim);
    int a = axis < 0 ? axis + *ndim : axis;
    if (st == WEFT_OK && (a < 0 || a >= *ndim)) {
        return weft__axis_error(g, name, x, axis, "out of range", *ndim, file, line);
    }
    *out_axis = a;
    return st;
}

static weft_status_t cumop_impl(weft_graph_t *g, bool is_prod, weft_var_t *x, int axis,
                                bool reverse, const char *file, int line, weft_var_t **out)
{
    *out = NULL;
    scan_props_t p = {0, 0, reverse ? 1 : 0};
    weft_status_t st = weft__axis_arg(g, x, is_prod ? "CumProd" : "CumSum", axis, file, line,
                                      &p.ndim, &p.axis);
    const weft_op_t *op = NULL;
    if (st == WEFT_OK) {
        st = weft_op_create(g, is_prod ? &weft__cumprod_class : &weft__cumsum_class, &p, &op);
    }
    return st == WEFT_OK ? weft__got(g, *out = weft_op_call_at(g, op, 1, &x, file, line)) : st;
}

weft_var_t *weft_cumop_at(weft_graph_t *g, bool is_prod, weft_var_t *x, int axis, bool reverse,
                          const char *file, int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t st = cumop_impl(g, is_prod, x, axis, reverse, file, line, &out);
    return weft__ctor_end(g, st, out, is_prod ? "weft_cumprod" : "weft_cumsum", file, line);
}
