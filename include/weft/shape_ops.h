/* Shape and indexing ops: DimShuffle, Reshape, Subtensor (basic slicing),
 * SetSubtensor and IncSubtensor.
 *
 * DimShuffle, Reshape and Subtensor return views of their input (view_map
 * {0: [0]}): at run time the output tensor shares the input's buffer (Reshape
 * copies only when the strides make a view impossible). SetSubtensor and
 * IncSubtensor compute a new tensor out of place; their in-place variants
 * (class inplace_variant hook, input 0 only) overwrite input 0 (destroy_map
 * {0: [0]}).
 *
 * Indexing follows numpy's basic indexing: per axis either a slice
 * start:stop:step (negative start/stop count from the end, out-of-range bounds
 * are clamped, negative steps walk backwards, omitted bounds are
 * WEFT_SLICE_NONE) or an integer index (negative counts from the end) that
 * drops the axis. Axes after the given entries are taken whole.
 *
 * Ownership (every constructor): borrows g and the variables; the output is
 * borrowed, owned by g. Errors (every constructor): returns the output, or
 * NULL with the first error kept on g (weft_graph_error,
 * weft_graph_error_message; weft/graph.h "Errors"); a NULL
 * variable argument (an earlier constructor's failure) adds no second error.
 * The statuses are listed per function; the messages name the input, axis,
 * lengths and the creation site.
 * Thread: as g. */
#ifndef WEFT_SHAPE_OPS_H
#define WEFT_SHAPE_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "weft/export.h"
#include "weft/graph.h"
#include "weft/op.h"
#include "weft/status.h"
#include "weft/type.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- DimShuffle ------------------------------------------------------------ */

/* In a DimShuffle order, a new broadcastable axis of length 1. */
#define WEFT_DIMSHUFFLE_NEW ((int)-1)

/* Output axis k is input axis order[k], or a new length-1 axis where
 * order[k] == WEFT_DIMSHUFFLE_NEW. Input axes missing from order are dropped
 * and must have static length 1. Transpose of a matrix: order {1, 0}.
 * Errors: WEFT_EINVAL (NULL args, n_order > WEFT_MAX_NDIM, an entry < -1 or
 * >= x's ndim, an axis listed twice), WEFT_ESHAPE (dropping an axis whose
 * static length is not 1), WEFT_ETYPE (x not a tensor), WEFT_EFOREIGN,
 * WEFT_ENOMEM. */
#define weft_dimshuffle(g, x, n_order, order) \
    weft_dimshuffle_at((g), (x), (n_order), (order), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_dimshuffle_at(weft_graph_t *g, weft_var_t *x, int n_order,
                                        const int *order, const char *file, int line);
/* Reverses the axes (DimShuffle {n-1, ..., 0}). Errors as weft_dimshuffle. */
#define weft_transpose(g, x) weft_transpose_at((g), (x), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_transpose_at(weft_graph_t *g, weft_var_t *x, const char *file, int line);
/* Adds leading length-1 axes up to ndim (x itself when it has ndim already).
 * Errors as weft_dimshuffle, plus WEFT_EINVAL when x has more than ndim. */
#define weft_pad_left(g, x, ndim) weft_pad_left_at((g), (x), (ndim), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_pad_left_at(weft_graph_t *g, weft_var_t *x, int ndim, const char *file,
                                      int line);

/* ---- Reshape --------------------------------------------------------------- */

/* x with the constant shape[0..ndim); one entry may be -1 (inferred from the
 * element count). Runs as a view when the input's strides allow it, else
 * copies.
 * Errors: WEFT_EINVAL (NULL args, ndim outside [0, WEFT_MAX_NDIM], two -1
 * entries, an entry < -1), WEFT_ESHAPE (x's static element count differs from
 * the target's; at run time: counts differ), WEFT_ETYPE, WEFT_EFOREIGN,
 * WEFT_ENOMEM. */
#define weft_reshape(g, x, ndim, shape) \
    weft_reshape_at((g), (x), (ndim), (shape), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_reshape_at(weft_graph_t *g, weft_var_t *x, int ndim, const int64_t *shape,
                                     const char *file, int line);
/* x reshaped to the run-time shape of like (a Reshape with a second input
 * whose value is not read, only its shape: used by Reshape's gradient).
 * The output type has x's dtype and like's ndim and static lengths.
 * Errors: as weft_reshape. */
#define weft_reshape_like(g, x, like) weft_reshape_like_at((g), (x), (like), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_reshape_like_at(weft_graph_t *g, weft_var_t *x, weft_var_t *like,
                                          const char *file, int line);

/* ---- Subtensor ------------------------------------------------------------- */

typedef enum weft_slice_kind {
    WEFT_SLICE_RANGE = 0, /* start:stop:step */
    WEFT_SLICE_INDEX = 1, /* a single index in `start`; drops the axis */
} weft_slice_kind_t;

/* An omitted slice bound (start or stop). */
#define WEFT_SLICE_NONE INT64_MIN

typedef struct weft_slice {
    weft_slice_kind_t kind;
    int64_t start; /* WEFT_SLICE_NONE: from the first (step > 0) / last element */
    int64_t stop;  /* WEFT_SLICE_NONE: to the end (step > 0) / past the first */
    int64_t step;  /* non-zero; ignored for WEFT_SLICE_INDEX */
} weft_slice_t;

/* Initializers: `weft_slice_t s[] = {WEFT_SLICE_ALL, WEFT_SLICE_AT(2)};` */
#define WEFT_SLICE_ALL {WEFT_SLICE_RANGE, WEFT_SLICE_NONE, WEFT_SLICE_NONE, 1}
#define WEFT_SLICE_AT(i) {WEFT_SLICE_INDEX, (i), 0, 1}
#define WEFT_SLICE(start, stop, step) {WEFT_SLICE_RANGE, (start), (stop), (step)}

/* x[idx[0], ..., idx[n_idx-1]] (a view).
 * Errors: WEFT_EINVAL (NULL args, n_idx > x's ndim, a step of 0, a bad kind),
 * WEFT_ERANGE (an integer index outside a known static length; at run time:
 * outside the actual length), WEFT_ETYPE, WEFT_EFOREIGN, WEFT_ENOMEM. */
#define weft_subtensor(g, x, n_idx, idx) \
    weft_subtensor_at((g), (x), (n_idx), (idx), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_subtensor_at(weft_graph_t *g, weft_var_t *x, size_t n_idx,
                                       const weft_slice_t *idx, const char *file, int line);

/* A copy of x with x[idx] replaced by y (set) or increased by y (inc); y is
 * broadcast to the shape of x[idx] (lower-rank y is left-padded; then each of
 * y's dimensions must have static length 1 or match). y is converted to x's
 * dtype, which must hold y's safely: weft_dtype_promote(x's, y's) is x's
 * (int8 into int16 or float16; not int64 into float32, uint8 into int8).
 * Errors: as weft_subtensor, plus WEFT_ESHAPE (y does not broadcast to x[idx];
 * at run time: y's length differs and its static length is not 1),
 * WEFT_ETYPE (y's dtype larger than x's by that rule, y's ndim larger than
 * x[idx]'s, a bool x for IncSubtensor). */
#define weft_set_subtensor(g, x, y, n_idx, idx) \
    weft_set_subtensor_at((g), (x), (y), (n_idx), (idx), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_set_subtensor_at(weft_graph_t *g, weft_var_t *x, weft_var_t *y,
                                           size_t n_idx, const weft_slice_t *idx, const char *file,
                                           int line);
#define weft_inc_subtensor(g, x, y, n_idx, idx) \
    weft_inc_subtensor_at((g), (x), (y), (n_idx), (idx), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_inc_subtensor_at(weft_graph_t *g, weft_var_t *x, weft_var_t *y,
                                           size_t n_idx, const weft_slice_t *idx, const char *file,
                                           int line);

/* The Subtensor / SetSubtensor / IncSubtensor op for idx (inplace: the
 * SetSubtensor/IncSubtensor variant destroying x; ignored for Subtensor).
 * Ownership: returns borrowed, owned by g. Errors: WEFT_EINVAL (NULL args,
 * n_idx > WEFT_MAX_NDIM, step 0, bad kind), WEFT_ENOMEM. */
WEFT_API weft_status_t weft_subtensor_op(weft_graph_t *g, size_t n_idx, const weft_slice_t *idx,
                                         const weft_op_t **out);
WEFT_API weft_status_t weft_set_subtensor_op(weft_graph_t *g, size_t n_idx,
                                             const weft_slice_t *idx, bool inc, bool inplace,
                                             const weft_op_t **out);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_SHAPE_OPS_H */
