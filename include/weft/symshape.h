/* Symbolic shapes (issue 18; docs/shapes.md): shapes that are values of the
 * graph, known only at run time, instead of constants of the constructor.
 *
 * - Shape(x) is x's shape as an int64 vector of length ndim; Shape_i{i}(x)
 *   its length i as an int64 0-d (PyTensor's Shape and Shape_i). Neither
 *   reads x's elements. They have no gradient (x is disconnected through
 *   them, as in PyTensor).
 * - Sizes elsewhere in this header are variables: 0-d tensors of any integer
 *   dtype (a shape_i, an arithmetic of them, a constant). A shape vector
 *   (weft_reshape_sym) is a 1-d integer tensor of STATIC length (the result's
 *   ndim): weft_shape of another variable, or 0-d sizes joined by weft_stack.
 * - Static lengths: each output length that the graph fixes (a constant size,
 *   a static length read through Shape_i) is filled in at construction, and
 *   the canonicalize rewrites (fast_run) replace a Shape_i of a static length
 *   by a constant, a Shape of a fully static variable by a constant vector,
 *   shape(x)[i] by shape_i(x, i), and a Reshape or an Alloc whose sizes are
 *   all constants by the static form of weft/shape_ops.h / weft/array_ops.h.
 * - Errors at run time (a size that does not fit, a negative size, element
 *   counts that differ) fail the node; the runtime's message names the node
 *   (weft_apply_describe) before the kernel's text.
 *
 * Ownership (every constructor): borrows g and the variables; the output is
 * borrowed, owned by g. Errors (every constructor): returns the output, or
 * NULL with the first error kept on g (weft/graph.h "Errors"); a NULL
 * variable argument (an earlier constructor's failure) adds no second
 * error. Messages name the op, the input (number and variable) and the
 * creation site.
 * Thread: as g. */
#ifndef WEFT_SYMSHAPE_H
#define WEFT_SYMSHAPE_H

#include <stdbool.h>
#include <stdint.h>

#include "weft/export.h"
#include "weft/graph.h"
#include "weft/op.h"
#include "weft/type.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Shape, Shape_i ---------------------------------------------------------- */

/* x.shape as an int64[ndim] vector (int64[0] for a 0-d x).
 * Errors: WEFT_ETYPE (x not a tensor), WEFT_EFOREIGN, WEFT_ENOMEM. */
#define weft_shape(g, x) weft_shape_at((g), (x), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_shape_at(weft_graph_t *g, weft_var_t *x, const char *file, int line);

/* x.shape[i] as an int64 0-d; i in [-ndim, ndim) (negative from the end).
 * Errors: WEFT_EINVAL (i out of range), WEFT_ETYPE, WEFT_EFOREIGN,
 * WEFT_ENOMEM. */
#define weft_shape_i(g, x, i) weft_shape_i_at((g), (x), (i), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_shape_i_at(weft_graph_t *g, weft_var_t *x, int i, const char *file,
                                     int line);

/* ---- Reshape to a symbolic shape ---------------------------------------------- */

/* np.reshape(x, shape) with shape a variable (pytensor.tensor.reshape with a
 * symbolic shape): a 1-d integer tensor of static length n, the output's
 * ndim; one entry may be -1 (inferred from the element count). The op is
 * Reshape in its "shape input" form: a view when the strides allow it, else
 * a copy (as weft_reshape); its gradient reshapes gz to x's run-time shape.
 * Static output lengths: per entry of a constant shape or of sizes joined
 * by weft_stack (constants, static Shape_i lengths; a -1 inferred when the
 * rest is static), or from a weft_shape(g, y) shape (y's static lengths),
 * else unknown (docs/shapes.md §2). At run time:
 * WEFT_EINVAL for an entry below -1 or two -1 entries, WEFT_ESHAPE when the
 * counts differ or a -1 cannot be inferred, WEFT_EOVERFLOW for a target too
 * big.
 * Errors: WEFT_ETYPE (x not a tensor, shape not a 1-d integer tensor),
 * WEFT_ESHAPE (shape's length is not static or above WEFT_MAX_NDIM; a
 * static entry below -1 or a second -1; static entries that do not fit x's
 * static element count),
 * WEFT_EFOREIGN, WEFT_ENOMEM. */
#define weft_reshape_sym(g, x, shape) weft_reshape_sym_at((g), (x), (shape), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_reshape_sym_at(weft_graph_t *g, weft_var_t *x, weft_var_t *shape,
                                         const char *file, int line);

/* ---- Alloc with symbolic sizes ------------------------------------------------ */

/* PyTensor's Alloc(value, *shape): value broadcast (right-aligned, as
 * np.broadcast_to) to the n sizes shape[0..n), each an integer 0-d variable.
 * weft_broadcast_to_sym is the same op. The gradient wrt value sums gz over
 * the new leading axes and value's axes of static length 1; the sizes have
 * none (disconnected). At run time: WEFT_EINVAL for a negative size,
 * WEFT_ESHAPE when value does not broadcast.
 * Errors: WEFT_EINVAL (n outside [0, WEFT_MAX_NDIM], NULL shape with n > 0,
 * value with more than n dims, a negative constant size), WEFT_ETYPE (a size
 * not an integer 0-d, value not a tensor), WEFT_ESHAPE (a static length of
 * value that does not broadcast to a constant size), WEFT_EFOREIGN,
 * WEFT_ENOMEM. */
#define weft_alloc_sym(g, value, n, shape) \
    weft_alloc_sym_at((g), (value), (n), (shape), __FILE__, __LINE__)
#define weft_broadcast_to_sym(g, x, n, shape) \
    weft_alloc_sym_at((g), (x), (n), (shape), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_alloc_sym_at(weft_graph_t *g, weft_var_t *value, int n,
                                       weft_var_t *const *shape, const char *file, int line);

/* np.full(shape, value, dtype), np.zeros, np.ones with symbolic sizes: a
 * 0-d constant of dtype broadcast by weft_alloc_sym. Errors: as
 * weft_alloc_sym, plus weft_constant_scalar's. */
#define weft_full_sym(g, n, shape, value, dtype) \
    weft_full_sym_at((g), (n), (shape), (value), (dtype), __FILE__, __LINE__)
#define weft_zeros_sym(g, n, shape, dtype) \
    weft_full_sym_at((g), (n), (shape), 0.0, (dtype), __FILE__, __LINE__)
#define weft_ones_sym(g, n, shape, dtype) \
    weft_full_sym_at((g), (n), (shape), 1.0, (dtype), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_full_sym_at(weft_graph_t *g, int n, weft_var_t *const *shape,
                                      double value, weft_dtype_t dtype, const char *file,
                                      int line);

/* ---- Ranges with symbolic arguments -------------------------------------------- */

/* np.arange(start, stop, step, dtype) (an ARange{dtype} node) and
 * np.linspace(start, stop, num, endpoint, dtype) (Linspace{endpoint,
 * dtype}) whose arguments are 0-d variables of any integer or float dtype
 * (num: integer), with the values of weft_arange / weft_linspace
 * (weft/array_ops.h: NumPy's rules, computed in float64 then converted).
 * The length is static when every argument is a constant (the node then
 * folds to the constant). At run time: WEFT_EINVAL for a step of 0 or NaN,
 * a negative num, a length above 2^31.
 * np.eye(n, m, k, dtype) with integer 0-d n, m, k: (arange(n)[:, None] + k
 * == arange(m)[None, :]) cast to dtype.
 * Gradients (float outputs), the length held fixed: arange's wrt start
 * sum(gz) and step sum(i gz), linspace's wrt start sum((1 - t) gz) and stop
 * sum(t gz) with t = i / max(num - endpoint, 1); arange's stop and num have
 * none (disconnected). eye has none (integer arithmetic, then Cast).
 * Errors: WEFT_ETYPE (an argument not a 0-d real tensor; num, n, m, k not
 * integers; a bad dtype), WEFT_EFOREIGN, WEFT_ENOMEM. */
#define weft_arange_sym(g, start, stop, step, dtype) \
    weft_arange_sym_at((g), (start), (stop), (step), (dtype), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_arange_sym_at(weft_graph_t *g, weft_var_t *start, weft_var_t *stop,
                                        weft_var_t *step, weft_dtype_t dtype, const char *file,
                                        int line);
#define weft_linspace_sym(g, start, stop, num, endpoint, dtype) \
    weft_linspace_sym_at((g), (start), (stop), (num), (endpoint), (dtype), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_linspace_sym_at(weft_graph_t *g, weft_var_t *start, weft_var_t *stop,
                                          weft_var_t *num, bool endpoint, weft_dtype_t dtype,
                                          const char *file, int line);
#define weft_eye_sym(g, n, m, k, dtype) \
    weft_eye_sym_at((g), (n), (m), (k), (dtype), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_eye_sym_at(weft_graph_t *g, weft_var_t *n, weft_var_t *m, weft_var_t *k,
                                     weft_dtype_t dtype, const char *file, int line);

/* ---- Repeat with per-element counts -------------------------------------------- */

/* np.repeat(x, repeats, axis) with repeats a 1-d integer tensor of x's
 * length on axis, or of length 1 (then every element that many times):
 * Take of x with the source indices AxisIndex{repeat_vec} builds from the
 * counts at run time. The output's length on axis is static only when
 * repeats is a constant (and x's length static); gradient: Take's, the sum
 * of each element's copies. At run time: WEFT_ESHAPE for a negative count
 * or a length that is neither x's nor 1. (weft_tile, weft_repeat, weft_pad
 * and weft_roll of weft/array_ops.h take x with unknown lengths the same
 * way; docs/shapes.md §4.)
 * Errors: WEFT_EINVAL (axis out of range), WEFT_ETYPE (x not a tensor of
 * ndim >= 1, repeats not a 1-d integer tensor), WEFT_ESHAPE (static lengths
 * that differ, neither being 1), WEFT_EFOREIGN, WEFT_ENOMEM. */
#define weft_repeat_vec(g, x, repeats, axis) \
    weft_repeat_vec_at((g), (x), (repeats), (axis), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_repeat_vec_at(weft_graph_t *g, weft_var_t *x, weft_var_t *repeats,
                                        int axis, const char *file, int line);

/* ---- Queries for rewrites (docs/shapes.md) --------------------------------------- */

/* Whether op is Shape (*i = -1) or Shape_i (*i its axis). i may be NULL. */
WEFT_API bool weft_shape_op_info(const weft_op_t *op, int *i);
/* Whether op is a Subtensor of one integer index (x[index]); sets *index
 * (as given: negative counts from the end). */
WEFT_API bool weft_subtensor_index_op_info(const weft_op_t *op, int64_t *index);
/* Whether op is Reshape in its symbolic form (target shape = input 1's
 * values). */
WEFT_API bool weft_reshape_sym_op_info(const weft_op_t *op);
/* Whether op is Alloc in its symbolic form (sizes = inputs 1..ndim); *ndim
 * may be NULL. */
WEFT_API bool weft_alloc_sym_op_info(const weft_op_t *op, int *ndim);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_SYMSHAPE_H */
