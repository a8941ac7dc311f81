/* Reductions: Sum, Mean, Max, Min, Prod over any set of axes, Argmax and
 * Argmin; the lane reductions (Any, All, Var, Std, LogSumExp, NanSum,
 * NanMean, NanMax, NanMin, Argmax/Argmin over several axes); the scans
 * CumSum and CumProd; Sort, Argsort and Topk. The rules below (axes,
 * ownership, errors) hold for every constructor of this header; each
 * section adds its own.
 *
 * Axes: `axes` lists n_axes axis indices of x (negative ones count from the
 * end, -1 is the last); axes == NULL reduces every axis (n_axes must then be
 * 0); an empty list (axes != NULL, n_axes == 0) reduces nothing (the op then
 * copies x). keepdims keeps each reduced axis as a length-1 axis.
 *
 * dtypes: every real dtype (docs/dtypes.md §3); complex64/complex128 for
 * Sum, Mean and Prod (keeping x's dtype; split over the pool as the real
 * ones), refused by Max, Min, Argmax and Argmin (WEFT_ETYPE, "complex
 * numbers have no order in weft"; docs/dtypes.md "Complex numbers"). As
 * NumPy: Sum and Prod of bool and
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
 * Determinism (Sum, Mean, Max, Min, Prod): a reduction of at least 131072
 * elements is cut along one axis into at most 16 fixed chunks (at least
 * 65536 elements each) chosen from x's shape and strides, never from the
 * worker count; chunks of a kept axis write disjoint outputs (the unsplit
 * result, bit for bit), chunks of a reduced axis fold into partials merged
 * left to right (float32 partials are float32). Results are the same at any
 * worker count and in the evaluator; sums round differently from NumPy's
 * pairwise sum by a few ulps of the partial sums (docs/execution.md §5).
 *
 * Gradients (weft/grad.h): Sum broadcasts the output gradient back; Mean
 * also divides by the reduced element count; Max/Min send each group's
 * gradient to the first position holding the extreme value (the argmax in
 * C order; ties get nothing else); Prod is exact with zeros: with no zero in
 * a group the gradient is g*prod/x, with exactly one zero only that position
 * gets g*(product of the others), with two or more zeros it is 0. The
 * gradient nodes themselves have gradients only for Sum and Mean (second
 * order through Max/Min/Prod reports WEFT_ENOGRAD). Argmax and Argmin have no gradient
 * (its output is integer; weft_grad treats it as disconnected).
 *
 * Constructors are macros recording the creation site (__FILE__/__LINE__).
 * Ownership: borrow g, x and axes; the output is borrowed, owned by g.
 * Errors (every constructor): returns the output, or NULL with the first
 * error kept on g (weft_graph_error, weft_graph_error_message; weft/graph.h
 * "Errors"); a NULL variable argument (an earlier constructor's failure)
 * adds no second error.
 * Statuses: WEFT_EINVAL (NULL g/x, axes == NULL with n_axes != 0, an axis
 * out of range or repeated, bad kind), WEFT_ETYPE (a non-tensor x, or bool
 * x for Sum/Mean/Max/Min/Prod: the other ops take bool), WEFT_EFOREIGN,
 * WEFT_ENOMEM; messages name the axis and creation site.
 * Thread: one thread per graph context. */
#ifndef WEFT_REDUCE_H
#define WEFT_REDUCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* Argmin: as Argmax with the first minimum (a NaN counts as the minimum). */
#define weft_argmin(g, x, axis, keepdims) \
    weft_argmin_at((g), (x), (axis), (keepdims), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_argmin_at(weft_graph_t *g, weft_var_t *x, int axis, bool keepdims,
                                    const char *file, int line);

/* ---- More reductions (lib/ops/reduce/lred*.c) ------------------------------
 *
 * Axes and keepdims as for weft_reduce_at (axes NULL with n_axes 0: every
 * axis; an empty list: none). Every real dtype is accepted (a complex x is
 * WEFT_ETYPE). Output dtypes (NumPy's):
 *   ARGMAX, ARGMIN   int64: the flat C-order index into the reduced axes'
 *                    sub-block (PyTensor's Argmax over several axes: the
 *                    reduced axes moved last, in their order, and flattened);
 *                    one axis: the position along it; the first extreme wins,
 *                    the first NaN counts as the extreme. Empty reduced axis:
 *                    the node fails with WEFT_ESHAPE.
 *   ANY, ALL         bool (x != 0; NaN is true). Empty: false / true.
 *   VAR, STD         float16/float32 for float16/float32 x, else float64;
 *                    divisor max(n - ddof, 0) (NumPy: 0 divisor gives inf
 *                    or NaN).
 *   LOGSUMEXP        as VAR (scipy's dtypes); max-shifted:
 *                    every term -inf (or no term) -> -inf, a +inf term ->
 *                    +inf, a NaN -> NaN.
 *   NANSUM           NaNs count as 0; bool and signed x -> int64, unsigned
 *                    -> uint64 (wrapping); a float keeps its dtype.
 *   NANMEAN          NaNs skipped; all-NaN or empty -> NaN; dtypes as VAR.
 *   NANMAX, NANMIN   NaNs skipped; all-NaN -> NaN (NumPy warns, weft does
 *                    not); x's dtype; empty reduced axis: WEFT_ESHAPE.
 * Float results are computed in double (float16/float32 rounded once at the
 * end: NumPy rounds float16 var/std/nanmean after each step, float32 ones in
 * float32 arithmetic, so they may differ by an ulp). Integer folds
 * (argmax/argmin, nansum, nanmax/nanmin) are exact for every integer dtype,
 * uint64 beyond 2^63 included.
 * Determinism: each group's elements (its lane, C order over the reduced
 * axes) are cut into fixed blocks of 65536 elements, each block into pieces
 * of 1024; pieces fold left to right within a block, block results left to
 * right within the lane. Blocks run on any worker, so results are the same
 * bits at any worker count; they may differ from NumPy's pairwise sums by
 * rounding (docs/execution.md §5).
 * Gradients: VAR/STD, LOGSUMEXP (softmax * gz), NANSUM/NANMEAN (0 at NaNs),
 * NANMAX/NANMIN (gz to the first non-NaN extreme, as Max; an all-NaN group,
 * whose result is NaN, sends gz to its first element); integer outputs and
 * ANY/ALL have none (disconnected).
 * Errors (besides the header's): an axis out of range or repeated is
 * WEFT_EINVAL naming the op, the axis, the input and the input's creation
 * site ("Var (at f.c:5): axis -3 out of range for input x with 2 dims
 * (created at model.c:7)"); ddof not finite: WEFT_EINVAL; NANMAX/NANMIN/
 * ARGMAX/ARGMIN over an empty axis fail the node with WEFT_ESHAPE. */
typedef enum weft_lreduce_kind {
    WEFT_LREDUCE_ARGMAX = 0,
    WEFT_LREDUCE_ARGMIN = 1,
    WEFT_LREDUCE_ANY = 2,
    WEFT_LREDUCE_ALL = 3,
    WEFT_LREDUCE_VAR = 4,
    WEFT_LREDUCE_STD = 5,
    WEFT_LREDUCE_LOGSUMEXP = 6,
    WEFT_LREDUCE_NANSUM = 7,
    WEFT_LREDUCE_NANMEAN = 8,
    WEFT_LREDUCE_NANMAX = 9,
    WEFT_LREDUCE_NANMIN = 10,
} weft_lreduce_kind_t;
#define WEFT_LREDUCE_KIND_COUNT 11

/* The general constructor; ddof is used by VAR and STD only (0 otherwise). */
WEFT_API weft_var_t *weft_lreduce_at(weft_graph_t *g, weft_lreduce_kind_t kind, weft_var_t *x,
                                     size_t n_axes, const int *axes, double ddof, bool keepdims,
                                     const char *file, int line);

#define WEFT__LRED(k, g, x, n, a, keep) \
    weft_lreduce_at((g), (k), (x), (n), (a), 0.0, (keep), __FILE__, __LINE__)
#define weft_argmax_axes(g, x, n_axes, axes, keepdims) \
    WEFT__LRED(WEFT_LREDUCE_ARGMAX, g, x, n_axes, axes, keepdims)
#define weft_argmin_axes(g, x, n_axes, axes, keepdims) \
    WEFT__LRED(WEFT_LREDUCE_ARGMIN, g, x, n_axes, axes, keepdims)
#define weft_any(g, x, n_axes, axes, keepdims) \
    WEFT__LRED(WEFT_LREDUCE_ANY, g, x, n_axes, axes, keepdims)
#define weft_all(g, x, n_axes, axes, keepdims) \
    WEFT__LRED(WEFT_LREDUCE_ALL, g, x, n_axes, axes, keepdims)
#define weft_logsumexp(g, x, n_axes, axes, keepdims) \
    WEFT__LRED(WEFT_LREDUCE_LOGSUMEXP, g, x, n_axes, axes, keepdims)
#define weft_nansum(g, x, n_axes, axes, keepdims) \
    WEFT__LRED(WEFT_LREDUCE_NANSUM, g, x, n_axes, axes, keepdims)
#define weft_nanmean(g, x, n_axes, axes, keepdims) \
    WEFT__LRED(WEFT_LREDUCE_NANMEAN, g, x, n_axes, axes, keepdims)
#define weft_nanmax(g, x, n_axes, axes, keepdims) \
    WEFT__LRED(WEFT_LREDUCE_NANMAX, g, x, n_axes, axes, keepdims)
#define weft_nanmin(g, x, n_axes, axes, keepdims) \
    WEFT__LRED(WEFT_LREDUCE_NANMIN, g, x, n_axes, axes, keepdims)
#define weft_var(g, x, n_axes, axes, ddof, keepdims)                                        \
    weft_lreduce_at((g), WEFT_LREDUCE_VAR, (x), (n_axes), (axes), (ddof), (keepdims), __FILE__, \
                    __LINE__)
#define weft_std(g, x, n_axes, axes, ddof, keepdims)                                        \
    weft_lreduce_at((g), WEFT_LREDUCE_STD, (x), (n_axes), (axes), (ddof), (keepdims), __FILE__, \
                    __LINE__)

/* ---- Scans (lib/ops/reduce/scan*.c) ----------------------------------------
 *
 * Cumsum / Cumprod along one axis (negative from the end); reverse scans
 * from the end of the axis (used by the gradient; NumPy has no such flag).
 * Output shape x's; dtype NumPy's: bool and signed integers -> int64,
 * unsigned -> uint64 (wrapping), a float keeps its dtype (float32
 * accumulates in float32; float16 rounds every partial result to half, in
 * float32 arithmetic, strictly left to right as NumPy: NumPy's bits, and
 * each float16 lane is one block, scanned by one worker). Determinism: each
 * lane is cut into fixed blocks of 65536 elements; block b starts from the
 * left-to-right fold of the earlier blocks' totals (each total folded in 8
 * interleaved chains, combined in a fixed tree); the rounding therefore
 * differs from NumPy's strictly sequential sum by a few ulps of the partial
 * sums, and is the same at any worker count.
 * Gradients: Cumsum: the reverse cumsum of gz. Cumprod: PyTensor's formula,
 * reverse_cumsum(cumprod(x) * gz) / x, which is NaN or inf where x has a zero
 * (the caveat PyTensor documents too).
 * Errors (besides the header's): axis out of range: WEFT_EINVAL naming the
 * op, the input and its creation site. */
WEFT_API weft_var_t *weft_cumop_at(weft_graph_t *g, bool is_prod, weft_var_t *x, int axis,
                                   bool reverse, const char *file, int line);
#define weft_cumsum(g, x, axis) weft_cumop_at((g), false, (x), (axis), false, __FILE__, __LINE__)
#define weft_cumprod(g, x, axis) weft_cumop_at((g), true, (x), (axis), false, __FILE__, __LINE__)

/* ---- Sorting (lib/ops/reduce/sort*.c) --------------------------------------
 *
 * Sort and Argsort along one axis, ascending, stable (equal keys keep their
 * order; -0.0 and 0.0 are equal), NaN last (NumPy's order). Every real dtype;
 * keys compare exactly (int64 and uint64 as integers, uint64 beyond 2^63
 * included). Sort keeps x's dtype, Argsort gives int64 indices. Topk: the k largest along the axis,
 * as TWO ops on the same input (weft_topk_values: x's dtype, weft_topk_indices:
 * int64), sorted descending, equal values by lower index first, NaN counted
 * largest (first); k must be 0..length of the axis (checked at build time when
 * the length is static, else when run: WEFT_ESHAPE).
 * Gradients: Sort scatters gz back through the argsort permutation; Topk
 * values scatter gz to the chosen positions (0 elsewhere); the index outputs
 * have none (float16, float32 and float64 inputs; float16 gradients are
 * float16). The scatter op (AxisScatter) has no gradient of its own, so
 * second order through Sort/Topk reports WEFT_ENOGRAD.
 * Lanes are sorted one per task (a stable merge sort, O(n log n)); one long
 * lane is sorted by one worker.
 * Errors (besides the header's): axis out of range: WEFT_EINVAL naming the
 * op, the input and its creation site; k out of range: WEFT_ESHAPE. */
WEFT_API weft_var_t *weft_sort_at(weft_graph_t *g, weft_var_t *x, int axis, bool want_indices,
                                  const char *file, int line);
#define weft_sort(g, x, axis) weft_sort_at((g), (x), (axis), false, __FILE__, __LINE__)
#define weft_argsort(g, x, axis) weft_sort_at((g), (x), (axis), true, __FILE__, __LINE__)
WEFT_API weft_var_t *weft_topk_at(weft_graph_t *g, weft_var_t *x, int axis, int64_t k,
                                  bool want_indices, const char *file, int line);
#define weft_topk_values(g, x, axis, k) \
    weft_topk_at((g), (x), (axis), (k), false, __FILE__, __LINE__)
#define weft_topk_indices(g, x, axis, k) \
    weft_topk_at((g), (x), (axis), (k), true, __FILE__, __LINE__)

#ifdef __cplusplus
}
#endif
#endif /* WEFT_REDUCE_H */
