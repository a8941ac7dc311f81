/* Reading the parameters of built-in shape and reduction ops: the axis order
 * of a DimShuffle, the kind, axes and keepdims of a reduction (Sum, Mean,
 * Max, Min, Prod) and the summed axes of SumAxes. Rewrites use these instead
 * of parsing the printed props (weft_op_print), whose text is for people.
 *
 * Every function: borrows op and writes the caller's out-arguments; on an
 * error the out-arguments are left untouched.
 * Errors: WEFT_EINVAL (a NULL argument), WEFT_ETYPE (op is not of the op
 * class the function reads).
 * Thread: ops are immutable; any thread may call these concurrently. */
#ifndef WEFT_OP_INFO_H
#define WEFT_OP_INFO_H

#include <stdbool.h>

#include "weft/export.h"
#include "weft/op.h"
#include "weft/reduce.h"
#include "weft/status.h"
#include "weft/type.h" /* WEFT_MAX_NDIM */

#ifdef __cplusplus
extern "C" {
#endif

/* The order of a DimShuffle op (weft/shape_ops.h): *n_order output axes,
 * order[k] the input axis of output axis k or WEFT_DIMSHUFFLE_NEW for an
 * inserted length-1 axis. order must have room for WEFT_MAX_NDIM entries.
 * Ownership: borrows op; writes order and *n_order.
 * Errors: WEFT_EINVAL (NULL op, order or n_order), WEFT_ETYPE (op is not a
 * DimShuffle).
 * Thread: any. */
WEFT_API weft_status_t weft_dimshuffle_op_info(const weft_op_t *op, int *order, int *n_order);

/* The parameters of a reduction op (weft/reduce.h: Sum, Mean, Max, Min,
 * Prod): its kind, the reduced input axes in increasing order (axes[0..
 * *n_axes), room for WEFT_MAX_NDIM entries; a reduction over every axis lists
 * every axis of its input) and whether reduced axes are kept as length 1.
 * Argmax and the reductions' gradient op are not reductions here.
 * Ownership: borrows op; writes *kind, axes, *n_axes, *keepdims.
 * Errors: WEFT_EINVAL (a NULL argument), WEFT_ETYPE (op is not a reduction).
 * Thread: any. */
WEFT_API weft_status_t weft_reduce_op_info(const weft_op_t *op, weft_reduce_kind_t *kind,
                                           int *axes, int *n_axes, bool *keepdims);

/* The same for a reduction's gradient op (ReduceGrad{kind, axes, keepdims},
 * built by weft_grad through a reduction): the reduction it differentiates.
 * Errors: WEFT_EINVAL (a NULL argument), WEFT_ETYPE (op is not a ReduceGrad).
 * Thread: any. */
WEFT_API weft_status_t weft_reduce_grad_op_info(const weft_op_t *op, weft_reduce_kind_t *kind,
                                                int *axes, int *n_axes, bool *keepdims);

/* The summed axes of a SumAxes op (the gradient helper that sums a
 * broadcast gradient back, keeping the summed axes as length 1), in
 * increasing order; axes has room for WEFT_MAX_NDIM entries.
 * Ownership: borrows op; writes axes and *n_axes.
 * Errors: WEFT_EINVAL (a NULL argument), WEFT_ETYPE (op is not a SumAxes).
 * Thread: any. */
WEFT_API weft_status_t weft_sum_axes_op_info(const weft_op_t *op, int *axes, int *n_axes);

#ifdef __cplusplus
}
#endif

#endif /* WEFT_OP_INFO_H */
