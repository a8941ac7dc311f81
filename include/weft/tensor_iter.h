/* Walking strided tensors broadcast together: the helper a kernel author
 * uses instead of writing an N-d loop over shapes and strides.
 *
 * weft_tensor_iter_rows calls a row function once per innermost row of a
 * set of tensors (operand 0 sets the shape, usually the output; the others
 * broadcast to it as in NumPy: shapes aligned on the right, each length
 * equal or 1, missing leading axes count as 1). A row is n elements; the row
 * function gets each operand's pointer to its first element of the row and
 * its stride in elements along the row (0 for a broadcast operand). Axes of
 * length 1 are skipped and axes contiguous in every operand are merged, so
 * C-contiguous operands (or a contiguous output with scalar inputs) make ONE
 * call over every element.
 *
 *     static void add_rows(size_t n, char *const *p, const int64_t *s, void *arg)
 *     {
 *         double *o = (double *)p[0];
 *         const double *a = (const double *)p[1], *b = (const double *)p[2];
 *         for (size_t i = 0; i < n; i++)
 *             o[(int64_t)i * s[0]] = a[(int64_t)i * s[1]] + b[(int64_t)i * s[2]];
 *     }
 *     weft_tensor_t *ops[3] = {out, a, b};
 *     weft_tensor_iter_rows(3, ops, add_rows, NULL);
 *
 * Order: rows are visited in an order fixed by the shapes and strides alone
 * (outer axes as an odometer, large strided planes in 64 x 64 tiles), so a
 * kernel built on it gives the same bits on every run. Dtypes are the
 * caller's business: each operand's elements keep its own dtype
 * (weft_tensor_dtype).
 *
 * Thread: any; the function reads only the handles it is given. */
#ifndef WEFT_TENSOR_ITER_H
#define WEFT_TENSOR_ITER_H

#include <stddef.h>
#include <stdint.h>

#include "weft/export.h"
#include "weft/status.h"
#include "weft/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Operands of one walk: an output and up to 7 inputs. */
#define WEFT_TENSOR_ITER_MAX 8

/* One row: n elements; p[k] points at operand k's first element of the row
 * (cast it to the operand's element type), s[k] is its stride in elements. */
typedef void (*weft_tensor_row_fn)(size_t n, char *const *p, const int64_t *s, void *arg);

/* Calls fn over every element of ts[0], the other operands broadcast to its
 * shape (see above). Nothing is called when ts[0] is empty; a 0-d ts[0] is
 * one call with n = 1.
 * Ownership: borrows ts and arg.
 * Errors (text: weft_tensor_last_error): WEFT_EINVAL (n < 1 or above
 * WEFT_TENSOR_ITER_MAX, NULL ts, fn or entry), WEFT_ESHAPE (an operand does
 * not broadcast to ts[0]'s shape, or has more axes: both shapes named);
 * nothing is called on error. */
WEFT_API weft_status_t weft_tensor_iter_rows(size_t n, weft_tensor_t *const *ts,
                                             weft_tensor_row_fn fn, void *arg);

/* The NumPy broadcast shape of ts[0..n): *ndim axes (the largest ndim) into
 * shape[0..WEFT_MAX_NDIM). Ownership: borrows ts.
 * Errors (text: weft_tensor_last_error): WEFT_EINVAL (NULL args, n < 1 or
 * above WEFT_TENSOR_ITER_MAX),
 * WEFT_ESHAPE (two lengths differ and neither is 1: both named). */
WEFT_API weft_status_t weft_tensor_broadcast_shape(size_t n, weft_tensor_t *const *ts,
                                                   int *ndim, int64_t *shape);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_TENSOR_ITER_H */
