/* Shape and Shape_i{i} (PyTensor's): a tensor's run-time shape as an int64
 * vector, or one length as an int64 0-d. The kernels read only the input's
 * shape (never its elements), so they serve every dtype and are O(ndim): no
 * split over the pool. Both are disconnected from their input for gradients
 * (connection_pattern false, no input gradient), as in PyTensor. */
#include <stdio.h>
#include <string.h>

#include "array_int.h"
#include "graph/ctor_int.h"
#include "ops_int.h"
#include "symshape_int.h"
#include "weft/json_props.h"
#include "weft/kernel.h"
#include "weft/symshape.h"

typedef struct shape_i_props {
    int32_t i; /* the axis, in [0, ndim) */
} shape_i_props_t;

static weft_status_t one_tensor(weft_graph_t *g, const char *name, size_t n_in,
                                weft_var_t *const *inputs)
{
    if (n_in != 1)
        return weft_graph_set_error(g, WEFT_EINVAL, "%s takes 1 input, got %zu", name, n_in);
    if (weft_type_kind(weft_var_type(inputs[0])) != WEFT_TYPE_TENSOR)
        return weft_graph_set_error(g, WEFT_ETYPE, "%s: input 0 is not a tensor", name);
    return WEFT_OK;
}

static weft_status_t shape_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                     weft_var_t *const *inputs, size_t *n_out,
                                     const weft_type_t **out_types)
{
    (void)op;
    weft_status_t st = one_tensor(g, "Shape", n_in, inputs);
    if (st != WEFT_OK) return st;
    int64_t n = weft_type_ndim(weft_var_type(inputs[0]));
    *n_out = 1;
    return weft_type_tensor(g, WEFT_INT64, 1, &n, &out_types[0]);
}

static weft_status_t shape_perform(const weft_apply_t *node, weft_tensor_t *const *inputs,
                                   weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    (void)node;
    int64_t n = weft_tensor_ndim(inputs[0]);
    weft_status_t st = weft_kernel_alloc_output(ctx, &outputs[0], WEFT_INT64, 1, &n);
    if (st == WEFT_OK && n > 0)
        memcpy(weft_tensor_data(outputs[0]), weft_tensor_shape(inputs[0]),
               (size_t)n * sizeof(int64_t));
    return st;
}

static bool disconnected(const weft_apply_t *node, size_t in, size_t out)
{
    (void)node;
    (void)in;
    (void)out;
    return false;
}

static weft_status_t no_grad(weft_graph_t *g, const weft_apply_t *node,
                             weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    (void)g;
    (void)node;
    (void)output_grads;
    input_grads[0] = NULL;
    return WEFT_OK;
}

const weft_op_class_t weft__shape_class = {
    .size = sizeof(weft_op_class_t),
    .name = "Shape",
    .make_node = shape_make_node,
    .perform = shape_perform,
    .connection_pattern = disconnected,
    .grad = no_grad,
};

static weft_status_t shape_i_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                       weft_var_t *const *inputs, size_t *n_out,
                                       const weft_type_t **out_types)
{
    const shape_i_props_t *p = weft_op_props(op);
    weft_status_t st = one_tensor(g, "Shape_i", n_in, inputs);
    if (st != WEFT_OK) return st;
    int nd = weft_type_ndim(weft_var_type(inputs[0]));
    if (p->i < 0 || p->i >= nd)
        return weft_graph_set_error(g, WEFT_EINVAL, "Shape_i: axis %d out of range for %d dims",
                                    (int)p->i, nd);
    *n_out = 1;
    return weft_type_tensor(g, WEFT_INT64, 0, NULL, &out_types[0]);
}

static weft_status_t shape_i_perform(const weft_apply_t *node, weft_tensor_t *const *inputs,
                                     weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    const shape_i_props_t *p = weft_op_props(weft_apply_op(node));
    if (p->i >= weft_tensor_ndim(inputs[0]))
        return weft_kernel_error(ctx, WEFT_ESHAPE, "Shape_i: axis %d of a %d-d input",
                                 (int)p->i, weft_tensor_ndim(inputs[0]));
    weft_status_t st = weft_kernel_alloc_output(ctx, &outputs[0], WEFT_INT64, 0, NULL);
    if (st == WEFT_OK) *(int64_t *)weft_tensor_data(outputs[0]) = weft_tensor_dim(inputs[0], p->i);
    return st;
}

static int shape_i_print(const void *props, char *buf, size_t cap)
{
    return snprintf(buf, cap, "i=%d", (int)((const shape_i_props_t *)props)->i);
}

static weft_status_t shape_i_to_json(const weft_op_t *op, weft_json_props_t *p)
{
    return weft_json_props_put_int(p, "i", ((const shape_i_props_t *)weft_op_props(op))->i);
}

static weft_status_t shape_i_from_json(weft_graph_t *g, const weft_op_class_t *cls,
                                       const weft_json_props_t *p, const weft_op_t **out)
{
    int64_t i = 0;
    weft_status_t st = weft_json_props_get_int(p, "i", &i);
    if (st != WEFT_OK) return st;
    if (i < 0 || i >= WEFT_MAX_NDIM)
        return weft_json_props_error(p, WEFT_EINVAL, "i: axis %lld outside [0, %d)", (long long)i,
                                     WEFT_MAX_NDIM);
    shape_i_props_t s = {(int32_t)i};
    return weft_op_create(g, cls, &s, out);
}

const weft_op_class_t weft__shape_i_class = {
    .size = sizeof(weft_op_class_t),
    .name = "Shape_i",
    .props_size = sizeof(shape_i_props_t),
    .props_print = shape_i_print,
    .props_to_json = shape_i_to_json,
    .props_from_json = shape_i_from_json,
    .make_node = shape_i_make_node,
    .perform = shape_i_perform,
    .connection_pattern = disconnected,
    .grad = no_grad,
};

/* x checked as a tensor of g (weft__array_check_inputs's messages). */
static weft_status_t check_x(weft_graph_t *g, const char *name, weft_var_t *x, const char *file,
                             int line)
{
    int nd;
    weft_dtype_t dt;
    return weft__array_check_inputs(g, name, 1, &x, 0, file, line, &nd, &dt);
}

weft_var_t *weft_shape_at(weft_graph_t *g, weft_var_t *x, const char *file, int line)
{
    weft_var_t *out = NULL;
    if (!g) return NULL;
    weft__ctor_begin(g);
    const weft_op_t *op = NULL;
    weft_status_t st = check_x(g, "shape", x, file, line);
    if (st == WEFT_OK) st = weft_op_create(g, &weft__shape_class, NULL, &op);
    if (st == WEFT_OK) st = weft__got(g, out = weft_op_call_at(g, op, 1, &x, file, line));
    return weft__ctor_end(g, st, out, "weft_shape", file, line);
}

weft_var_t *weft_shape_i_at(weft_graph_t *g, weft_var_t *x, int i, const char *file, int line)
{
    weft_var_t *out = NULL;
    if (!g) return NULL;
    weft__ctor_begin(g);
    const weft_op_t *op = NULL;
    weft_status_t st = check_x(g, "shape_i", x, file, line);
    int nd = st == WEFT_OK ? weft_type_ndim(weft_var_type(x)) : 0;
    if (st == WEFT_OK && (i < -nd || i >= nd))
        st = weft_graph_set_error(g, WEFT_EINVAL, "shape_i (at %s:%d): axis %d out of range for "
                                  "%d dims", file, line, i, nd);
    shape_i_props_t p = {(int32_t)(i < 0 ? i + nd : i)};
    if (st == WEFT_OK) st = weft_op_create(g, &weft__shape_i_class, &p, &op);
    if (st == WEFT_OK) st = weft__got(g, out = weft_op_call_at(g, op, 1, &x, file, line));
    return weft__ctor_end(g, st, out, "weft_shape_i", file, line);
}

bool weft_shape_op_info(const weft_op_t *op, int *i)
{
    const weft_op_class_t *cls = op ? weft_op_class(op) : NULL;
    if (cls != &weft__shape_class && cls != &weft__shape_i_class) return false;
    if (i) *i = cls == &weft__shape_class ? -1 : ((const shape_i_props_t *)weft_op_props(op))->i;
    return true;
}

bool weft_subtensor_index_op_info(const weft_op_t *op, int64_t *index)
{
    if (!op || weft_op_class(op) != &weft__subtensor_class) return false;
    const weft__subtensor_props_t *p = weft_op_props(op);
    if (p->n != 1 || p->idx[0].kind != WEFT_SLICE_INDEX) return false;
    if (index) *index = p->idx[0].start;
    return true;
}
