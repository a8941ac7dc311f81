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
extern const weft_op_class_t weft__reduce_grad_class, weft__argmax_class, weft__argmin_class;
/* The lane reductions (lred.c), in weft_lreduce_kind_t order from ANY. */
extern const weft_op_class_t weft__lred_classes[];
/* Scans (scan.c) and sorting (sort.c). */
extern const weft_op_class_t weft__cumsum_class, weft__cumprod_class, weft__sort_class,
    weft__topk_class, weft__axis_scatter_class;

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
/* make_node check: input count, an int32/int64/float32/float64 tensor (or
 * bool too when with_bool), rank == p->ndim. */
weft_status_t weft__input_check(weft_graph_t *g, const char *opname,
                                const weft__reduce_props_t *p, size_t n_in,
                                weft_var_t *const *inputs, size_t want_in, bool with_bool);
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
/* Constructor check of x (same context, an int32/int64/float32/float64
 * tensor, or bool too when with_bool); sets *ndim. */
weft_status_t weft__input_type_check(weft_graph_t *g, weft_var_t *x, const char *opname,
                                     const char *file, int line, bool with_bool, int *ndim);
/* Constructor check of x (same context, supported tensor type); sets *ndim. */
weft_status_t weft__reduce_input_type(weft_graph_t *g, weft_var_t *x, const char *opname,
                                      const char *file, int line, int *ndim);
/* Normalizes axes (negative from the end; NULL with n_axes 0: all) into a
 * mask, rejecting out-of-range and repeated axes (WEFT_EINVAL naming the
 * axis and the call site). */
weft_status_t weft__reduce_axes_mask(weft_graph_t *g, const char *opname, int ndim,
                                     size_t n_axes, const int *axes, const char *file, int line,
                                     uint32_t *mask);
/* ---- lane reductions (lred.c) ---- */
/* Props of Any, All, Var, Std, LogSumExp, NanSum, NanMean, NanMax, NanMin:
 * r.kind is the weft_lreduce_kind_t; ddof is used by Var/Std (0 otherwise). */
typedef struct weft__lred_props {
    weft__reduce_props_t r;
    double ddof;
} weft__lred_props_t;
/* The dtypes the lane reductions take (bool, int32/64, float32/64). */
bool weft__lred_dtype_ok(weft_dtype_t dt);
/* make_node check as weft__reduce_check_input (one input) with those dtypes. */
weft_status_t weft__lred_check_input(weft_graph_t *g, const char *opname,
                                     const weft__reduce_props_t *p, size_t n_in,
                                     weft_var_t *const *inputs);
/* Constructor check as weft__reduce_input_type with those dtypes. */
weft_status_t weft__lred_input_type(weft_graph_t *g, weft_var_t *x, const char *opname,
                                    const char *file, int line, int *ndim);
/* The perform of every lane reduction (kind over p's axes of x). */
weft_status_t weft__lred_perform(weft_kernel_ctx_t *ctx, weft_lreduce_kind_t kind,
                                 const weft__reduce_props_t *p, double ddof,
                                 const weft_tensor_t *x, weft_tensor_t **outputs);
/* The error of an axis argument: "NAME (at FILE:LINE): axis A WHAT for input
 * X with N dims (created at F:L)", WEFT_EINVAL (scan.c). */
weft_status_t weft__axis_error(weft_graph_t *g, const char *name, weft_var_t *x, int axis,
                               const char *what, int ndim, const char *file, int line);
/* make_node of the one-axis ops (scans, sorting): one input of a supported
 * dtype and rank ndim, axis in range; fills shape with the input's static
 * lengths. */
weft_status_t weft__axis_op_input(weft_graph_t *g, const weft_op_t *op, int ndim, int axis,
                                  size_t n_in, weft_var_t *const *inputs, int64_t *shape);
/* Resolves axis (negative from the end) of x for op name: *ndim its rank,
 * *out_axis the axis; checks x as weft__lred_input_type (scan.c). */
weft_status_t weft__axis_arg(weft_graph_t *g, weft_var_t *x, const char *name, int axis,
                             const char *file, int line, int *ndim, int *out_axis);
/* Argmax (is_max) / Argmin node over mask (argmax.c). */
weft_status_t weft__arg_build(weft_graph_t *g, bool is_max, weft_var_t *x, uint32_t mask,
                              int ndim, bool keepdims, const char *file, int line,
                              weft_var_t **out);
/* Builds ReduceGrad{p}(x, gz): the gradient of Reduce{p}(x) given gz. */
weft_status_t weft__reduce_grad_build(weft_graph_t *g, const weft__reduce_props_t *p,
                                      weft_var_t *x, weft_var_t *gz, const char *file, int line,
                                      weft_var_t **out);

#endif /* WEFT_OPS_REDUCE_OPS_INT_H */
