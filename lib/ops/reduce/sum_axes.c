/* SumAxes: sums a float or complex tensor over a set of axes, keeping them as length-1
 * axes. The elementwise/indexing gradients use it to fold a broadcast
 * gradient back onto its input's shape (weft__grad_reduce_to), so this module
 * does not depend on the general reductions (weft/reduce.h). Its gradient
 * broadcasts the output gradient back (Second(x, gz)). */
#include <stdio.h>

#include "graph/ctor_int.h"
#include "ops_int.h"
#include "props_fields_int.h"
#include "weft/kernel.h"

typedef struct sum_axes_props {
    uint32_t mask; /* bit d: axis d is summed */
} sum_axes_props_t;

static weft_status_t sa_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                  weft_var_t *const *inputs, size_t *n_out,
                                  const weft_type_t **out_types)
{
    const sum_axes_props_t *p = weft_op_props(op);
    if (n_in != 1)
        return weft_graph_set_error(g, WEFT_EINVAL, "SumAxes takes 1 input, got %zu", n_in);
    const weft_type_t *xt = weft_var_type(inputs[0]);
    weft_dtype_t dt = weft_type_dtype(xt);
    /* complex: the gradient of a complex operand broadcast into a complex node */
    if (weft_type_kind(xt) != WEFT_TYPE_TENSOR ||
        !(weft__dtype_is_float(dt) || weft_dtype_kind(dt) == WEFT_KIND_COMPLEX))
        return weft_graph_set_error(g, WEFT_ETYPE, "SumAxes: input 0 is not a float or complex "
                                    "tensor");
    int nd = weft_type_ndim(xt);
    if (nd < 32 && (p->mask >> nd) != 0)
        return weft_graph_set_error(g, WEFT_EINVAL, "SumAxes: axis mask 0x%x beyond %d axes",
                                    (unsigned)p->mask, nd);
    int64_t shape[WEFT_MAX_NDIM];
    for (int d = 0; d < nd; d++) shape[d] = (p->mask >> d) & 1u ? 1 : weft_type_dim(xt, d);
    *n_out = 1;
    return weft_type_tensor(g, dt, nd, shape, &out_types[0]);
}

/* out = 0, then out[...] += x[...] with stride 0 on the summed axes: the
 * iterator's rows then hit the Add kernel's sequential strided loop. */
static weft_status_t sa_perform(const weft_apply_t *node, weft_tensor_t *const *inputs,
                                weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    const sum_axes_props_t *p = weft_op_props(weft_apply_op(node));
    weft_tensor_t *x = inputs[0];
    int nd = weft_tensor_ndim(x);
    weft_dtype_t dt = weft_tensor_dtype(x);
    int64_t shape[WEFT_MAX_NDIM], ost[WEFT_MAX_NDIM];
    for (int d = 0; d < nd; d++) shape[d] = (p->mask >> d) & 1u ? 1 : weft_tensor_dim(x, d);
    weft_status_t st = weft_kernel_alloc_output(ctx, &outputs[0], dt, nd, shape);
    if (st != WEFT_OK) return st;
    weft_tensor_t *o = outputs[0];
    weft_tensor_fill(o, 0.0);
    for (int d = 0; d < nd; d++) ost[d] = (p->mask >> d) & 1u ? 0 : weft_tensor_stride(o, d);
    char *base[3] = {weft_tensor_data(o), weft_tensor_data(o), weft_tensor_data(x)};
    const int64_t *sts[3] = {ost, ost, weft_tensor_strides(x)};
    size_t isz[3] = {weft_dtype_size(dt), weft_dtype_size(dt), weft_dtype_size(dt)};
    weft__iter_rows(nd, weft_tensor_shape(x), 3, base, sts, isz,
                    weft__elemwise_kernel(WEFT_ELEMWISE_ADD, dt), NULL);
    return WEFT_OK;
}

static int sa_props_print(const void *props, char *buf, size_t cap)
{
    const sum_axes_props_t *p = props;
    char tmp[WEFT_MAX_NDIM * 4 + 4];
    int n = 0;
    tmp[0] = '\0';
    for (int d = 0; d < WEFT_MAX_NDIM; d++)
        if ((p->mask >> d) & 1u)
            n += snprintf(tmp + n, sizeof tmp - (size_t)n, n ? ",%d" : "%d", d);
    return snprintf(buf, cap, "axes=(%s)", tmp);
}

static weft_status_t sa_grad(weft_graph_t *g, const weft_apply_t *node,
                             weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    input_grads[0] = NULL;
    if (!output_grads[0]) return WEFT_OK;
    return weft__got(g, input_grads[0] =
                            weft_binary_at(g, WEFT_ELEMWISE_SECOND, weft_apply_input(node, 0),
                                           output_grads[0], __FILE__, __LINE__));
}

/* JSON props: {"axes": [0, 2]}. */
static const weft__props_fields_t sa_fields = {
    sizeof(sum_axes_props_t),
    {WEFT__PROPS_FIELD("axes", WEFT__FIELD_MASK, sum_axes_props_t, mask)},
};
WEFT__PROPS_FIELDS_HOOKS(sa, sa_fields)

const weft_op_class_t weft__sum_axes_class = {
    .size = sizeof(weft_op_class_t),
    .name = "SumAxes",
    .props_size = sizeof(sum_axes_props_t),
    .props_print = sa_props_print,
    .props_to_json = sa_to_json,
    .props_from_json = sa_from_json,
    .make_node = sa_make_node,
    .perform = sa_perform,
    .grad = sa_grad,
};

weft_status_t weft__sum_axes(weft_graph_t *g, weft_var_t *x, uint32_t mask, const char *file,
                             int line, weft_var_t **out)
{
    sum_axes_props_t p = {mask};
    const weft_op_t *op;
    weft_status_t st = weft_op_create(g, &weft__sum_axes_class, &p, &op);
    return st ? st : weft__got(g, *out = weft_op_call_at(g, op, 1, &x, file, line));
}
