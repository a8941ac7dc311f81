/* Building and reshaping arrays (issue 18): concatenate, stack, split,
 * flip, roll, squeeze, expand_dims, swapaxes, moveaxis, broadcast_to /
 * alloc, full / zeros / ones, tile, repeat, pad, arange, linspace, eye,
 * matmul.
 *
 * concatenate and stack build a Join{axis, ndim} node (a new tensor: the
 * kernel copies blocks with memcpy, by element size, so every dtype is
 * served; large outputs are split over the pool in fixed byte ranges, the
 * same bits at any worker count). Mixed input dtypes are cast to their
 * promotion first (weft_dtype_promote, as np.concatenate). Join's gradient
 * gives input i the slice of the output gradient it filled (a Subtensor),
 * which needs each input's static length on the axis (else WEFT_ENOGRAD
 * from weft_grad, naming the input).
 * split returns several Subtensor views of x (no new op): their gradient is
 * the sum of the parts' gradients each placed at its offset (IncSubtensor
 * into zeros), a disconnected part contributing zeros.
 * flip, squeeze, expand_dims, swapaxes and moveaxis are views (a Subtensor
 * with step -1, a DimShuffle): no copy, and their ops' gradients. roll is
 * two Subtensor views joined (Join's copy and gradient).
 *
 * Ownership (every constructor): borrows g and the variables; the outputs
 * are borrowed, owned by g. Errors (every constructor): returns the (first)
 * output, or NULL with the first error kept on g (weft/graph.h "Errors"); a
 * NULL variable argument (an earlier constructor's failure) adds no second
 * error. Messages name the op, the input (number and variable) and the
 * creation site.
 * Thread: as g. */
#ifndef WEFT_ARRAY_OPS_H
#define WEFT_ARRAY_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/export.h"
#include "weft/graph.h"
#include "weft/type.h"

#ifdef __cplusplus
extern "C" {
#endif

/* np.concatenate(xs[0..n), axis): inputs of one ndim >= 1 (negative axis
 * counts from the end), equal lengths on every other axis.
 * Errors: WEFT_EINVAL (n 0 or xs NULL, axis out of range), WEFT_ETYPE (an
 * input not a tensor, 0-d, or of another ndim than input 0), WEFT_ESHAPE (two
 * known lengths differ off the axis; at run time: any lengths differ),
 * WEFT_EFOREIGN, WEFT_ENOMEM. */
#define weft_concatenate(g, n, xs, axis) \
    weft_concatenate_at((g), (n), (xs), (axis), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_concatenate_at(weft_graph_t *g, size_t n, weft_var_t *const *xs,
                                         int axis, const char *file, int line);

/* np.stack(xs[0..n), axis): inputs of one shape joined along a new axis
 * (axis in [-(ndim+1), ndim]). Errors as weft_concatenate (0-d inputs
 * allowed; WEFT_EINVAL for inputs of WEFT_MAX_NDIM dims). */
#define weft_stack(g, n, xs, axis) weft_stack_at((g), (n), (xs), (axis), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_stack_at(weft_graph_t *g, size_t n, weft_var_t *const *xs, int axis,
                                   const char *file, int line);

/* np.split(x, n_sections, axis): writes the n_sections equal parts to
 * outs[0..n_sections) and returns outs[0]. x needs a static length on axis
 * that n_sections divides.
 * Errors: WEFT_EINVAL (outs NULL, n_sections 0, axis out of range),
 * WEFT_ESHAPE (no static length, or not divisible), WEFT_ETYPE (x not a
 * tensor of ndim >= 1), WEFT_EFOREIGN, WEFT_ENOMEM. On error outs is
 * unspecified. */
#define weft_split(g, x, n_sections, axis, outs) \
    weft_split_at((g), (x), (n_sections), (axis), (outs), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_split_at(weft_graph_t *g, weft_var_t *x, size_t n_sections, int axis,
                                   weft_var_t **outs, const char *file, int line);

/* np.split(x, indices, axis): the n_idx + 1 parts x[:i0], x[i0:i1], ...,
 * x[i_last:] on axis (indices as slice bounds: negative from the end,
 * clamped; a decreasing pair gives an empty part) in outs[0..n_idx].
 * Errors as weft_split (no divisibility rule). */
#define weft_split_indices(g, x, n_idx, indices, axis, outs) \
    weft_split_indices_at((g), (x), (n_idx), (indices), (axis), (outs), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_split_indices_at(weft_graph_t *g, weft_var_t *x, size_t n_idx,
                                           const int64_t *indices, int axis, weft_var_t **outs,
                                           const char *file, int line);

/* np.flip(x, axes): axes[0..n_axes) reversed (n_axes 0: every axis).
 * Errors: WEFT_EINVAL (an axis out of range or repeated, axes NULL with
 * n_axes > 0), WEFT_ETYPE, WEFT_EFOREIGN, WEFT_ENOMEM. */
#define weft_flip(g, x, n_axes, axes) weft_flip_at((g), (x), (n_axes), (axes), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_flip_at(weft_graph_t *g, weft_var_t *x, size_t n_axes, const int *axes,
                                  const char *file, int line);

/* np.squeeze(x, axes): drops axes[0..n_axes), each of static length 1
 * (n_axes 0: every axis of static length 1; an unknown length is kept).
 * Errors: as weft_flip, plus WEFT_ESHAPE (a listed axis whose static length
 * is not 1). */
#define weft_squeeze(g, x, n_axes, axes) \
    weft_squeeze_at((g), (x), (n_axes), (axes), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_squeeze_at(weft_graph_t *g, weft_var_t *x, size_t n_axes,
                                     const int *axes, const char *file, int line);

/* np.expand_dims(x, axis): a new length-1 axis at axis of the result
 * (in [-(ndim+1), ndim]). np.swapaxes(x, axis1, axis2). np.moveaxis(x,
 * source, destination) for one axis. Errors: WEFT_EINVAL (an axis out of
 * range, a result above WEFT_MAX_NDIM dims), WEFT_ETYPE, WEFT_EFOREIGN,
 * WEFT_ENOMEM. */
#define weft_expand_dims(g, x, axis) weft_expand_dims_at((g), (x), (axis), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_expand_dims_at(weft_graph_t *g, weft_var_t *x, int axis,
                                         const char *file, int line);
#define weft_swapaxes(g, x, axis1, axis2) \
    weft_swapaxes_at((g), (x), (axis1), (axis2), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_swapaxes_at(weft_graph_t *g, weft_var_t *x, int axis1, int axis2,
                                      const char *file, int line);
#define weft_moveaxis(g, x, source, destination) \
    weft_moveaxis_at((g), (x), (source), (destination), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_moveaxis_at(weft_graph_t *g, weft_var_t *x, int source,
                                      int destination, const char *file, int line);

/* np.roll(x, shift, axis) along one axis (x itself when shift is a multiple
 * of its static length); an axis of unknown length is read through the
 * index map of docs/shapes.md §4 (AxisIndex + Take). np.roll's axis=None
 * (the flattened array) is weft_reshape first.
 * Errors: WEFT_EINVAL (axis out of range), WEFT_ETYPE (x not a tensor of ndim >= 1), WEFT_EFOREIGN, WEFT_ENOMEM. */
#define weft_roll(g, x, shift, axis) weft_roll_at((g), (x), (shift), (axis), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_roll_at(weft_graph_t *g, weft_var_t *x, int64_t shift, int axis,
                                  const char *file, int line);

/* np.broadcast_to(x, shape) as a new tensor: an Alloc{shape} node
 * (PyTensor's Alloc; weft_alloc is the same). x's axes align to the right of
 * shape; each has length 1 or shape's. Alloc's kernel copies by element size
 * (every dtype) over fixed ranges of output rows on the pool; its gradient
 * sums gz over the new and the broadcast axes (an input axis of unknown
 * static length is taken as not broadcast).
 * Errors: WEFT_EINVAL (ndim outside [0, WEFT_MAX_NDIM], NULL shape, a
 * negative length, x with more dims), WEFT_ESHAPE (a static length that does
 * not broadcast; at run time: any), WEFT_ETYPE, WEFT_EFOREIGN, WEFT_ENOMEM. */
#define weft_broadcast_to(g, x, ndim, shape) \
    weft_broadcast_to_at((g), (x), (ndim), (shape), __FILE__, __LINE__)
#define weft_alloc(g, value, ndim, shape) \
    weft_broadcast_to_at((g), (value), (ndim), (shape), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_broadcast_to_at(weft_graph_t *g, weft_var_t *x, int ndim,
                                          const int64_t *shape, const char *file, int line);

/* np.full(shape, value, dtype), np.zeros, np.ones: a 0-d constant of dtype
 * (value converted as weft_constant_scalar does) broadcast by Alloc.
 * Errors: as weft_broadcast_to, plus weft_constant_scalar's. */
#define weft_full(g, ndim, shape, value, dtype) \
    weft_full_at((g), (ndim), (shape), (value), (dtype), __FILE__, __LINE__)
#define weft_zeros(g, ndim, shape, dtype) \
    weft_full_at((g), (ndim), (shape), 0.0, (dtype), __FILE__, __LINE__)
#define weft_ones(g, ndim, shape, dtype) \
    weft_full_at((g), (ndim), (shape), 1.0, (dtype), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_full_at(weft_graph_t *g, int ndim, const int64_t *shape, double value,
                                  weft_dtype_t dtype, const char *file, int line);

/* np.tile(x, reps[0..n_reps)) and np.repeat(x, repeats, axis) with a scalar
 * repeats: DimShuffle, Alloc, Reshape (their gradients) over static
 * lengths; when x has an unknown length, Take along each repeated axis with
 * the index map of docs/shapes.md §4 (Take's gradient: the sum of the
 * copies). A repeats vector: weft_repeat_vec (weft/symshape.h).
 * Errors: WEFT_EINVAL (negative reps/repeats, axis out of range, more than
 * WEFT_MAX_NDIM dims on the way: the static tile uses twice the result's),
 * WEFT_ETYPE, WEFT_EFOREIGN, WEFT_ENOMEM. */
#define weft_tile(g, x, n_reps, reps) weft_tile_at((g), (x), (n_reps), (reps), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_tile_at(weft_graph_t *g, weft_var_t *x, int n_reps,
                                  const int64_t *reps, const char *file, int line);
#define weft_repeat(g, x, repeats, axis) \
    weft_repeat_at((g), (x), (repeats), (axis), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_repeat_at(weft_graph_t *g, weft_var_t *x, int64_t repeats, int axis,
                                    const char *file, int line);

typedef enum weft_pad_mode {
    WEFT_PAD_CONSTANT = 0, /* value, converted to x's dtype */
    WEFT_PAD_EDGE = 1,     /* the edge element repeated */
    WEFT_PAD_REFLECT = 2,  /* mirrored without the edge, repeated for wide widths */
} weft_pad_mode_t;

/* np.pad(x, pad_width, mode, constant_values=value): pad_width holds
 * n_pairs (before, after) pairs, one per axis or one for every axis. Built
 * from Alloc / Subtensor blocks joined axis by axis (their gradients) over
 * static lengths (x itself when every width is 0); when x has an unknown
 * length, constant mode sets x into a weft_full_sym block and edge /
 * reflect read x through the index map of docs/shapes.md §4 (which does
 * NumPy's repeated reflection for wide widths; at run time WEFT_ESHAPE for
 * edge/reflect of an empty axis). A reflect width at or above a static
 * length takes that index map too, on that axis (NumPy's values; the
 * output lengths stay static).
 * Errors: WEFT_EINVAL (bad n_pairs, NULL pad_width, a negative width, an
 * unknown mode, with static lengths: edge/reflect of an empty axis),
 * WEFT_ETYPE, WEFT_EFOREIGN, WEFT_ENOMEM. */
#define weft_pad(g, x, n_pairs, pad_width, mode, value) \
    weft_pad_at((g), (x), (n_pairs), (pad_width), (mode), (value), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_pad_at(weft_graph_t *g, weft_var_t *x, int n_pairs,
                                 const int64_t *pad_width, weft_pad_mode_t mode, double value,
                                 const char *file, int line);

/* np.arange(start, stop, step, dtype), np.linspace(start, stop, num,
 * endpoint, dtype) and np.eye(n, m, k, dtype) with constant arguments: graph
 * constants (static shapes) computed with NumPy's rules - arange's length
 * ceil((stop - start) / step) (0 when negative), its values a + i * d with
 * a = start and d = (start + step) - start both taken in the dtype (int64
 * arange(1, 3, 0.5) is all 1s, as NumPy); linspace's start + i * step with step = (stop -
 * start) / (num - endpoint), the endpoint exactly stop - in float64, then
 * converted to dtype (integers truncated toward 0 as NumPy 1.x's astype;
 * NumPy 2 floors linspace's integers). Symbolic lengths (from a run-time
 * shape) are not supported yet.
 * Errors: WEFT_EINVAL (step 0 or NaN, a length above 2^31 or NaN, negative
 * sizes), WEFT_ENOMEM, and weft_constant_create's. */
#define weft_arange(g, start, stop, step, dtype) \
    weft_arange_at((g), (start), (stop), (step), (dtype), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_arange_at(weft_graph_t *g, double start, double stop, double step,
                                    weft_dtype_t dtype, const char *file, int line);
#define weft_linspace(g, start, stop, num, endpoint, dtype) \
    weft_linspace_at((g), (start), (stop), (num), (endpoint), (dtype), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_linspace_at(weft_graph_t *g, double start, double stop, int64_t num,
                                      bool endpoint, weft_dtype_t dtype, const char *file,
                                      int line);
#define weft_eye(g, n, m, k, dtype) weft_eye_at((g), (n), (m), (k), (dtype), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_eye_at(weft_graph_t *g, int64_t n, int64_t m, int64_t k,
                                 weft_dtype_t dtype, const char *file, int line);

/* np.matmul(a, b): up to 2-d on both sides, weft_dot (Dot); above, the
 * batch axes (all but the last two) broadcast against each other (Alloc
 * where an operand's differ), merged by Reshape into the batched Dot
 * (b,m,k)@(b,k,n), and reshaped back; a 1-d a gains a leading and a 1-d b a
 * trailing length-1 axis, dropped from the result (np.matmul's rules). The
 * N-d path needs static lengths. Gradients: those of Dot, Alloc, Reshape.
 * Errors: WEFT_ETYPE (a 0-d operand, or Dot's: dtypes, inner lengths),
 * WEFT_ESHAPE (batch lengths that do not broadcast, an unknown length on the
 * N-d path), WEFT_EFOREIGN, WEFT_ENOMEM. */
#define weft_matmul(g, a, b) weft_matmul_at((g), (a), (b), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_matmul_at(weft_graph_t *g, weft_var_t *a, weft_var_t *b,
                                    const char *file, int line);

#ifdef __cplusplus
}
#endif

#endif /* WEFT_ARRAY_OPS_H */
