/* Reductions: Sum, Mean, Max, Min, Prod over any set of axes, and Argmax.
 *
 * Axes: `axes` lists n_axes axis indices of x (negative ones count from the
 * end, -1 is the last); axes == NULL reduces every axis (n_axes must then be
 * 0); an empty list (axes != NULL, n_axes == 0) reduces nothing (the op then
 * copies x). keepdims keeps each reduced axis as a length-1 axis.
 *
 * dtypes: every real dtype (docs/dtypes.md §3); a complex x is WEFT_ETYPE
 * ("complex64 is not supported by Sum"). As NumPy: Sum and Prod of bool and
 * signed integers give int64, of unsigned integers uint64 (wrapping); Mean
 * of integers and bool gives float64, the sum divided by the count (not
 * multiplied by its inverse: NumPy's bits); otherwise the output has x's
 * dtype (Max/Min of bool is bool, Mean of float16 float16). float32
 * Sum/Mean/Prod accumulate in double when the reduced axis is the innermost
 * one, float16 in float32 (rounded to half once per output element there,
 * after each step along a kept inner axis, as NumPy's half loops). Max/Min
 * propagate NaN. Argmax takes every real dtype (64-bit integers compared
 * exactly). Sum and Prod over an empty axis give 0 and 1, Mean gives
 * NaN; Max/Min/Argmax over an empty axis fail the node with WEFT_ESHAPE
 * ("zero-size array to reduction operation maximum which has no identity",
 * naming the axis), even when the output is empty too (shape (0,0) over axis
 * 0), as NumPy raises.
 *
 * Gradients (weft/grad.h): Sum broadcasts the output gradient back; Mean
 * also divides by the reduced element count; Max/Min send each group's
 * gradient to the first position holding the extreme value (the argmax in
 * C order; ties get nothing else); Prod is exact with zeros: with no zero in
 * a group the gradient is g*prod/x, with exactly one zero only that position
 * gets g*(product of the others), with two or more zeros it is 0. The
 * gradient nodes themselves have gradients only for Sum and Mean (second
 * order through Max/Min/Prod reports WEFT_ENOGRAD). Argmax has no gradient
 * (its output is integer; weft_grad treats it as disconnected).
 *
 * Constructors are macros recording the creation site (__FILE__/__LINE__).
 * Ownership: borrow g, x and axes; the output is borrowed, owned by g.
 * Errors (every constructor): returns the output, or NULL with the first
 * error kept on g (weft_graph_error, weft_graph_error_message; weft/graph.h
 * "Errors"); a NULL variable argument (an earlier constructor's failure)
 * adds no second error.
 * Statuses: WEFT_EINVAL (NULL g/x, axes == NULL with n_axes != 0, an axis
 * out of range or repeated, bad kind), WEFT_ETYPE (bool or non-tensor x),
 * WEFT_EFOREIGN, WEFT_ENOMEM; messages name the axis and creation site.
 * Thread: one thread per graph context. */
#ifndef WEFT_REDUCE_H
#define WEFT_REDUCE_H

#include <stdbool.h>
#include <stddef.h>

#include "weft/export.h"
#include "weft/graph.h"
#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum weft_reduce_kind {
    WEFT_REDUCE_SUM = 0,
    WEFT_REDUCE_MEAN = 1,
    WEFT_REDUCE_MAX = 2,
    WEFT_REDUCE_MIN = 3,
    WEFT_REDUCE_PROD = 4,
} weft_reduce_kind_t;
#define WEFT_REDUCE_KIND_COUNT 5

/* The general constructor behind the macros below. */
WEFT_API weft_var_t *weft_reduce_at(weft_graph_t *g, weft_reduce_kind_t kind, weft_var_t *x,
                                    size_t n_axes, const int *axes, bool keepdims, const char *file,
                                    int line);

#define weft_sum(g, x, n_axes, axes, keepdims) \
    weft_reduce_at((g), WEFT_REDUCE_SUM, (x), (n_axes), (axes), (keepdims), __FILE__, __LINE__)
#define weft_mean(g, x, n_axes, axes, keepdims) \
    weft_reduce_at((g), WEFT_REDUCE_MEAN, (x), (n_axes), (axes), (keepdims), __FILE__, __LINE__)
#define weft_max(g, x, n_axes, axes, keepdims) \
    weft_reduce_at((g), WEFT_REDUCE_MAX, (x), (n_axes), (axes), (keepdims), __FILE__, __LINE__)
#define weft_min(g, x, n_axes, axes, keepdims) \
    weft_reduce_at((g), WEFT_REDUCE_MIN, (x), (n_axes), (axes), (keepdims), __FILE__, __LINE__)
#define weft_prod(g, x, n_axes, axes, keepdims) \
    weft_reduce_at((g), WEFT_REDUCE_PROD, (x), (n_axes), (axes), (keepdims), __FILE__, __LINE__)

/* Argmax over one axis, or over the flattened tensor (C order) with
 * WEFT_ARGMAX_FLAT; int64 output; the first maximum wins, a NaN counts as the
 * maximum (the first NaN wins). "First" is in the order of x's indices, as
 * NumPy: for a reversed or transposed view, the view's order, not memory's.
 * keepdims as above (flattened: every axis kept with length 1). */
#define WEFT_ARGMAX_FLAT (-1000)
#define weft_argmax(g, x, axis, keepdims) \
    weft_argmax_at((g), (x), (axis), (keepdims), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_argmax_at(weft_graph_t *g, weft_var_t *x, int axis, bool keepdims,
                                    const char *file, int line);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_REDUCE_H */
