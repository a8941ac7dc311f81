/* Advanced indexing along one axis: Take (NumPy's np.take(x, idx, axis), the
 * same as x[..., idx, ...] with an integer array at position axis) and its
 * updates AdvancedSetSubtensor / AdvancedIncSubtensor (x[..., idx, ...] = y
 * and np.add.at(x, (..., idx, ...), y)), out of place or, as the inplace
 * rewrite's variants (class inplace_variant hook, input 0 only), overwriting
 * x (destroy_map {0: [0]}); and, composed of those, np.put and one_hot.
 *
 * Indices: a tensor of any integer dtype and any shape; Take's output has
 * shape x.shape[:axis] + idx.shape + x.shape[axis+1:] and x's dtype. A
 * negative index counts from the end (-1 the last); an index outside
 * [-len, len) fails the node at run time with WEFT_ERANGE and the message
 * "<Op>: index I is out of bounds for axis A with size N" (NumPy's
 * IndexError). The kernels move elements by size, so every dtype works.
 *
 * Duplicate indices: inc_at ACCUMULATES every y slice sent to one position
 * (np.add.at, not x[idx] += y), in index order, so the result has the same
 * bits at any worker count (the work is split by destination rows, never by
 * index chunks). set_at writes the LAST y slice sent to a position (NumPy's
 * x[idx] = y, which in practice keeps the last assignment).
 *
 * Gradients: Take's is inc_at into zeros of x's shape for x (none for the
 * indices); inc_at's is gz for x and take(gz) for y; set_at's is gz with the
 * set positions zeroed for x and take(gz) for y, zero for the y slices a
 * later duplicate overwrites (a Take{last}: only the last copy reaches the
 * output).
 *
 * Ownership (every constructor): borrows g and the variables; the output is
 * borrowed, owned by g. Errors (every constructor): returns the output, or
 * NULL with the first error kept on g (weft_graph_error,
 * weft_graph_error_message; weft/graph.h "Errors"); a NULL variable argument
 * (an earlier constructor's failure) adds no second error. Messages name the
 * op, the input and the creation site.
 * Thread: as g. */
#ifndef WEFT_INDEX_OPS_H
#define WEFT_INDEX_OPS_H

#include "weft/export.h"
#include "weft/graph.h"
#include "weft/status.h"
#include "weft/type.h"

#ifdef __cplusplus
extern "C" {
#endif

/* np.take(x, indices, axis): axis in [-ndim, ndim) of x (rank >= 1).
 * Errors: WEFT_EINVAL (NULL g), WEFT_ERANGE (axis out of range),
 * WEFT_ETYPE (x or indices not a tensor, indices not of an integer dtype -
 * bool included: use a mask op for masks), WEFT_EFOREIGN, WEFT_ENOMEM. */
#define weft_take(g, x, indices, axis) \
    weft_take_at((g), (x), (indices), (axis), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_take_at(weft_graph_t *g, weft_var_t *x, weft_var_t *indices, int axis,
                                  const char *file, int line);

/* A copy of x with take(x, indices, axis)'s elements replaced by y (set_at)
 * or increased by y (inc_at, duplicates accumulating). y broadcasts to
 * take(x, indices, axis)'s shape (NumPy rules) and is converted to x's
 * dtype, which must hold it safely (weft_dtype_promote(x's, y's) is x's).
 * Errors: as weft_take, plus WEFT_ETYPE (y's dtype larger than x's, a bool
 * x for inc_at) and WEFT_ESHAPE (y does not broadcast; at run time: y's
 * shape differs from the taken shape). */
#define weft_set_at(g, x, indices, y, axis) \
    weft_set_at_at((g), (x), (indices), (y), (axis), false, __FILE__, __LINE__)
#define weft_inc_at(g, x, indices, y, axis) \
    weft_set_at_at((g), (x), (indices), (y), (axis), true, __FILE__, __LINE__)
WEFT_API weft_var_t *weft_set_at_at(weft_graph_t *g, weft_var_t *x, weft_var_t *indices,
                                    weft_var_t *y, int axis, bool inc, const char *file,
                                    int line);

/* np.put(x, indices, v) on a copy of x: the flattened x (C order) with
 * x.flat[indices] = v, v broadcast to indices' shape (NumPy's np.put
 * repeats a shorter v cyclically instead: broadcast v first), duplicates:
 * the last wins; out-of-range indices fail the node as take's (np.put's
 * mode='raise'). A Reshape, an AdvancedSetSubtensor along axis 0 and a
 * Reshape back. Errors: as weft_set_at. */
#define weft_put(g, x, indices, v) weft_put_at((g), (x), (indices), (v), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_put_at(weft_graph_t *g, weft_var_t *x, weft_var_t *indices,
                                 weft_var_t *v, const char *file, int line);

/* One-hot rows: np.eye(depth, dtype=dtype)[indices], of shape indices.shape
 * + (depth,), for any depth >= 0 whose output fits memory (composed of
 * Arange, Take, Eq and Cast: no depth x depth identity is built). Negative
 * indices count from the end (-1 is class depth - 1), others outside
 * [-depth, depth) fail the node at run time as take's (depth 0: every
 * index). Errors: as weft_take, plus WEFT_EINVAL ("one_hot (at f:l): depth
 * d is negative") and WEFT_ETYPE (dtype not a real dtype). */
#define weft_one_hot(g, indices, depth, dtype) \
    weft_one_hot_at((g), (indices), (depth), (dtype), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_one_hot_at(weft_graph_t *g, weft_var_t *indices, int64_t depth,
                                     weft_dtype_t dtype, const char *file, int line);

/* x[mask] for a bool mask of x's leading k dimensions (k = mask's rank,
 * 1 .. x's rank): a tensor of shape (count,) + x.shape[k:] with the
 * selected rows in C order (NumPy's x[mask]); count is data-dependent, its
 * static length unknown. x's dimensions after the mask need static lengths.
 * Composed of Nonzero (np.flatnonzero), Reshape and Take, so its gradient
 * is an inc_at. Errors: WEFT_ETYPE (mask not bool, rank 0 or above x's),
 * WEFT_ESHAPE (a static mask length differs from x's, naming the
 * dimension; at run time: the lengths differ), WEFT_ENOMEM. */
#define weft_mask_take(g, x, mask) weft_mask_take_at((g), (x), (mask), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_mask_take_at(weft_graph_t *g, weft_var_t *x, weft_var_t *mask,
                                       const char *file, int line);
/* x[mask] = y (set) / x[mask] += y (inc) on a copy of x: y broadcasts to
 * x[mask]'s shape. Errors: as weft_mask_take and weft_set_at. */
#define weft_mask_set(g, x, mask, y) \
    weft_mask_set_at((g), (x), (mask), (y), false, __FILE__, __LINE__)
#define weft_mask_inc(g, x, mask, y) \
    weft_mask_set_at((g), (x), (mask), (y), true, __FILE__, __LINE__)
WEFT_API weft_var_t *weft_mask_set_at(weft_graph_t *g, weft_var_t *x, weft_var_t *mask,
                                      weft_var_t *y, bool inc, const char *file, int line);

#ifdef __cplusplus
}
#endif

#endif /* WEFT_INDEX_OPS_H */
