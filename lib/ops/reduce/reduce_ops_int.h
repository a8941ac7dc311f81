/* Internal interface shared by the reduction op files (reduce.c,
 * reduce_grad.c, argmax.c, reduce_json.c): the props layout and helpers. */
#ifndef WEFT_OPS_REDUCE_OPS_INT_H
#define WEFT_OPS_REDUCE_OPS_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "reduce_int.h"
#include "weft/graph.h"
#include "weft/kernel.h"
#include "weft/op.h"
#include "weft/reduce.h"
#include "weft/tensor.h"

/* Props of Reduce, ReduceGrad and Argmax: fixed-width fields, no padding
 * (compared bytewise). axes: bit d set when axis d of the input is reduced. */
typedef struct weft__reduce_props {
    int32_t kind; /* weft_reduce_kind_t (Argmax: WEFT_REDUCE_MAX) */
    int32_t ndim; /* the input's rank */
    uint32_t axes;
    int32_t keepdims;
} weft__reduce_props_t;

extern const weft_op_class_t weft__reduce_class_sum, weft__reduce_class_mean,
    weft__reduce_class_max, weft__reduce_class_min, weft__reduce_class_prod;
extern const weft_op_class_t weft__reduce_grad_class, weft__argmax_class;

const weft_op_class_t *weft__reduce_class(weft_reduce_kind_t kind);
const char *weft__reduce_kind_name(weft_reduce_kind_t kind);
bool weft__reduce_dtype_ok(weft_dtype_t dt);
int weft__reduce_props_print(const void *props, char *buf, size_t cap);
/* The JSON props hooks of every class with these props (reduce_json.c). */
weft_status_t weft__reduce_props_to_json(const weft_op_t *op, weft_json_props_t *p);
weft_status_t weft__reduce_props_from_json(weft_graph_t *g, const weft_op_class_t *cls,
                                           const weft_json_props_t *p, const weft_op_t **out);
/* Shape after reducing `shape` (static or run-time lengths); returns the rank. */
int weft__reduce_out_shape(const weft__reduce_props_t *p, const int64_t *shape, int64_t *out);
void weft__reduce_c_strides(int ndim, const int64_t *shape, int64_t *strides);
/* Fills the loop for x: x strides, output strides out_strides over the output
 * axes (0 on reduced axes), g_strides likewise (NULL: 0). */
void weft__reduce_loop_init(const weft__reduce_props_t *p, const weft_tensor_t *x,
                            const int64_t *out_strides, const int64_t *g_strides,
                            weft__rloop_t *l);
/* Number of x elements folded into each output element. */
int64_t weft__reduce_group_size(const weft__reduce_props_t *p, const weft_tensor_t *x);
/* Run-time check of Max, Min and Argmax: a reduced axis of length 0 leaves
 * groups with no extreme, an error even when the output is empty as well, as
 * NumPy raises (WEFT_ESHAPE on ctx: "Max: zero-size array to reduction
 * operation maximum which has no identity (reduced axis 0 has length 0)"). */
weft_status_t weft__reduce_check_nonempty(weft_kernel_ctx_t *ctx, const char *opname,
                                          const char *operation,
                                          const weft__reduce_props_t *p, const weft_tensor_t *x);
/* make_node check: input count, a supported tensor dtype, rank == p->ndim. */
weft_status_t weft__reduce_check_input(weft_graph_t *g, const char *opname,
                                       const weft__reduce_props_t *p, size_t n_in,
                                       weft_var_t *const *inputs, size_t want_in);
/* make_node check of the orderings (orders: Max, Min, Argmax): a complex
 * input is WEFT_ETYPE naming the op and type (reduce_complex.c). */
weft_status_t weft__reduce_check_complex(weft_graph_t *g, const char *opname, bool orders,
                                         const weft_type_t *t);
/* Run-time check: x's rank is p->ndim (WEFT_ESHAPE on ctx). */
weft_status_t weft__reduce_check_tensor(weft_kernel_ctx_t *ctx, const char *opname,
                                        const weft__reduce_props_t *p, const weft_tensor_t *x);
/* Constructor check of x (same context, supported tensor type); sets *ndim. */
weft_status_t weft__reduce_input_type(weft_graph_t *g, weft_var_t *x, const char *opname,
                                      const char *file, int line, int *ndim);
/* Builds ReduceGrad{p}(x, gz): the gradient of Reduce{p}(x) given gz. */
weft_status_t weft__reduce_grad_build(weft_graph_t *g, const weft__reduce_props_t *p,
                                      weft_var_t *x, weft_var_t *gz, const char *file, int line,
                                      weft_var_t **out);

#endif /* WEFT_OPS_REDUCE_OPS_INT_H */
