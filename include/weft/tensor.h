/* Tensors: the run-time values that Variables stand for.
 *
 * A tensor is a strided N-d view (dtype, ndim <= WEFT_MAX_NDIM, shape,
 * strides, a pointer to element [0,...,0]) onto a buffer.
 *
 * Strides are counted in ELEMENTS of the tensor's dtype (not bytes), as
 * int64_t. They may be negative (reversed views, e.g. x[::-1]) or zero (a
 * broadcast view). Element (i0, .., ik) lives at data + sum(i_d * stride_d)
 * elements. "Contiguous" means C order: the last stride is 1 and each stride
 * is the product of the later lengths (strides of length-1 dimensions are
 * ignored; an empty tensor is contiguous).
 *
 * Reference counting: both the tensor handle and its buffer are counted
 * atomically, so handles and views may be shared across threads:
 * - weft_tensor_retain/release count handles (graph storage cells, callers and
 *   kernels each hold a reference);
 * - a buffer is owned by every tensor that views it: a view holds a reference
 *   to its base's buffer, so releasing the base keeps the memory alive until
 *   the last view goes.
 * The memory of a buffer is either owned (weft_tensor_empty/zeros/..., aligned
 * to WEFT_TENSOR_ALIGN bytes, small ones less: WEFT_TENSOR_SMALL_BYTES; or
 * handed over with a free callback, weft_tensor_wrap) or borrowed user memory (weft_tensor_from_data: never
 * freed by weft; the caller keeps it alive while any tensor viewing it lives).
 *
 * Conversions between dtypes (weft_tensor_copy_as/copy/fill/full/set, the
 * Cast op and every implicit upcast of weft/elemwise.h) follow one rule, the
 * one NumPy follows on x86-64 (docs/dtypes.md):
 * - to bool: value != 0 (NaN is true);
 * - float to an integer: truncation toward zero when the result fits the
 *   target; NaN, +-inf and values out of its range give what NumPy 1.24
 *   gives there (docs/dtypes.md §2): int32/int64 their minimum
 *   ("integer indefinite": Cast of log(-1) to int32 is -2147483648, of 3e9
 *   to int32 too, of 3e9 to int64 3000000000); int8/int16/uint8/uint16 the
 *   int32 result modulo 2^bits (300.0 to int8: 44); uint32 the int64 result
 *   modulo 2^32; uint64 the int64 result modulo 2^64 below 2^63, above it
 *   that of x - 2^63 plus 2^63 (NaN: 2^63, +inf: 0);
 * - integer to integer: modulo 2^bits of the target (wraps); integer to
 *   float: rounded to nearest even; float to a narrower float (float16 is
 *   IEEE binary16): rounded to nearest even, subnormals kept, out of range
 *   -> +-inf. get/set/fill/full/flat_get/to_f64 go through double (exact for
 *   every dtype but 64-bit integers beyond 2^53; a complex element's real
 *   part);
 * - complex (complex64: two float32, complex128: two float64, real part
 *   first, as C's float/double _Complex and NumPy): to bool, re != 0 ||
 *   im != 0; to another real dtype, the real part converted as a float32 /
 *   float64 (the imaginary part is dropped, as NumPy does with a warning);
 *   a real value to complex: the value as float32 / float64, imaginary +0;
 *   complex64 <-> complex128 part by part.
 * No conversion is undefined behaviour.
 *
 * Errors: functions return a status; since they have no context object, the
 * text of the last error (naming the dimension, shape or dtype at fault) is
 * kept per thread: weft_tensor_last_error().
 *
 * Thread: retain/release may be called from any thread concurrently. Reading
 * one tensor's elements from several threads is safe; writing elements while
 * others read them is the caller's (the scheduler's) business. */
#ifndef WEFT_TENSOR_H
#define WEFT_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/export.h"
#include "weft/status.h"
#include "weft/type.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_tensor weft_tensor_t;

/* Alignment in bytes of the memory of owned tensors (one cache line; enough
 * for any vector width the compiler uses). */
#define WEFT_TENSOR_ALIGN 64

/* Owned tensors of at most this many bytes of elements (0-d values, short
 * vectors) keep them next to their handle, in its cache line, aligned to
 * 16 bytes only (one line per small value on large graphs). */
#define WEFT_TENSOR_SMALL_BYTES 16

/* Frees user-handed memory when the last tensor viewing it is released. */
typedef void (*weft_tensor_free_fn)(void *user, void *data);

/* ---- creation ------------------------------------------------------------- */

/* A new C-contiguous tensor with uninitialized elements, its memory aligned to
 * WEFT_TENSOR_ALIGN bytes (16 bytes when it holds at most
 * WEFT_TENSOR_SMALL_BYTES bytes). shape may be NULL when ndim is 0.
 * Ownership: borrows shape; returns new (refcount 1), free with
 * weft_tensor_release.
 * Errors: WEFT_EINVAL (NULL out, bad dtype, ndim < 0 or > WEFT_MAX_NDIM, NULL
 * shape with ndim > 0, a negative length), WEFT_EOVERFLOW (the byte size does
 * not fit in size_t / int64), WEFT_ENOMEM. */
WEFT_API weft_status_t weft_tensor_empty(weft_dtype_t dtype, int ndim, const int64_t *shape,
                                         weft_tensor_t **out);
/* As weft_tensor_empty, every element 0 (false). */
WEFT_API weft_status_t weft_tensor_zeros(weft_dtype_t dtype, int ndim, const int64_t *shape,
                                         weft_tensor_t **out);
/* As weft_tensor_empty, every element `value` converted to dtype (see
 * "Conversions" above: NaN or 1e30 as int64 is INT64_MIN). */
WEFT_API weft_status_t weft_tensor_full(weft_dtype_t dtype, int ndim, const int64_t *shape,
                                        double value, weft_tensor_t **out);

/* A tensor over user memory, NOT copied: data points at element [0,..,0];
 * strides in elements (NULL: C-contiguous). weft never frees data.
 * Ownership: borrows data, which must stay valid (and not be freed) while the
 * returned tensor or any view of it lives; returns new, free with
 * weft_tensor_release.
 * Errors: WEFT_EINVAL (NULL data with a non-empty shape, NULL out, bad dtype,
 * bad ndim, NULL shape with ndim > 0, negative length), WEFT_EOVERFLOW,
 * WEFT_ENOMEM. */
WEFT_API weft_status_t weft_tensor_from_data(weft_dtype_t dtype, int ndim,
                                             const int64_t *shape, const int64_t *strides,
                                             void *data, weft_tensor_t **out);
/* As weft_tensor_from_data, but takes data: free_fn(user, data) is called
 * once when the last tensor viewing it is released (also on this function's
 * own failure, except WEFT_EINVAL for a NULL out or free_fn, where nothing was
 * taken). Used by buffer pools (weft/kernel.h allocation hook).
 * Errors: as weft_tensor_from_data, plus WEFT_EINVAL (NULL free_fn). */
WEFT_API weft_status_t weft_tensor_wrap(weft_dtype_t dtype, int ndim, const int64_t *shape,
                                        const int64_t *strides, void *data,
                                        weft_tensor_free_fn free_fn, void *user,
                                        weft_tensor_t **out);

/* A view of base: same buffer, element [0..] at base's element offset
 * `offset` (in elements, may be negative), the given shape and strides (in
 * elements). Every element the view can reach must lie within the memory
 * base's buffer covers.
 * Ownership: borrows base, shape and strides; returns new, holding a
 * reference to base's buffer (base may be released first); free with
 * weft_tensor_release.
 * Errors: WEFT_EINVAL (NULL args, bad ndim, negative length), WEFT_ERANGE (the
 * view reaches outside the buffer), WEFT_EOVERFLOW, WEFT_ENOMEM. */
WEFT_API weft_status_t weft_tensor_view(weft_tensor_t *base, int ndim, const int64_t *shape,
                                        const int64_t *strides, int64_t offset,
                                        weft_tensor_t **out);

/* The same elements with a new shape (same element count). One length may be
 * -1: inferred from the others. Returns a view when the strides allow it
 * (always for a contiguous source), else a C-contiguous copy.
 * Ownership: borrows t and shape; returns new, free with weft_tensor_release.
 * Errors: WEFT_EINVAL (NULL args, bad ndim, two -1 entries, a length < -1),
 * WEFT_ESHAPE (element counts differ, or -1 cannot be inferred), WEFT_EOVERFLOW,
 * WEFT_ENOMEM. */
WEFT_API weft_status_t weft_tensor_reshape(weft_tensor_t *t, int ndim, const int64_t *shape,
                                           weft_tensor_t **out);

/* A C-contiguous copy of src converted to dtype ("Conversions" above).
 * Ownership: borrows src; returns new, free with weft_tensor_release.
 * Errors: WEFT_EINVAL (NULL args, bad dtype), WEFT_ENOMEM. */
WEFT_API weft_status_t weft_tensor_copy_as(const weft_tensor_t *src, weft_dtype_t dtype,
                                           weft_tensor_t **out);
/* A C-contiguous copy of src with the same dtype. As weft_tensor_copy_as. */
WEFT_API weft_status_t weft_tensor_clone(const weft_tensor_t *src, weft_tensor_t **out);
/* src itself (retained) when it is contiguous, else a contiguous copy.
 * Ownership: borrows src; returns new reference, free with weft_tensor_release.
 * Errors: WEFT_EINVAL, WEFT_ENOMEM. */
WEFT_API weft_status_t weft_tensor_contiguous(weft_tensor_t *src, weft_tensor_t **out);

/* ---- reference counting --------------------------------------------------- */

/* Adds a reference; returns t. NULL: no-op, returns NULL. Thread: any. */
WEFT_API weft_tensor_t *weft_tensor_retain(weft_tensor_t *t);
/* Drops a reference; the last one frees the handle and drops its buffer
 * reference (the memory is freed with the buffer's last reference).
 * NULL: no-op. Thread: any. */
WEFT_API void weft_tensor_release(weft_tensor_t *t);
/* Current handle reference count (a snapshot; for tests and diagnostics). */
WEFT_API size_t weft_tensor_refcount(const weft_tensor_t *t);
/* Current number of tensors holding t's buffer (a snapshot). */
WEFT_API size_t weft_tensor_buffer_refcount(const weft_tensor_t *t);
/* True when t is the only handle and its buffer has no other viewer, so its
 * elements may be overwritten without anyone noticing (output reuse). */
WEFT_API bool weft_tensor_is_exclusive(const weft_tensor_t *t);
/* True when a and b view the same buffer. */
WEFT_API bool weft_tensor_shares_buffer(const weft_tensor_t *a, const weft_tensor_t *b);

/* ---- accessors (NULL yields 0 / NULL / false) ------------------------------- */

WEFT_API weft_dtype_t weft_tensor_dtype(const weft_tensor_t *t);
WEFT_API int weft_tensor_ndim(const weft_tensor_t *t);
/* Length of dimension i (0 for i out of range). */
WEFT_API int64_t weft_tensor_dim(const weft_tensor_t *t, int i);
/* Stride of dimension i in elements (0 for i out of range). */
WEFT_API int64_t weft_tensor_stride(const weft_tensor_t *t, int i);
/* The shape / strides arrays (ndim entries). Returns borrowed, valid while t
 * lives. */
WEFT_API const int64_t *weft_tensor_shape(const weft_tensor_t *t);
WEFT_API const int64_t *weft_tensor_strides(const weft_tensor_t *t);
/* Pointer to element [0,..,0]. Returns borrowed, valid while t lives. */
WEFT_API void *weft_tensor_data(const weft_tensor_t *t);
/* Number of elements (product of the lengths; 1 for 0-d). */
WEFT_API size_t weft_tensor_size(const weft_tensor_t *t);
/* C-contiguous (see the header comment). */
WEFT_API bool weft_tensor_is_contiguous(const weft_tensor_t *t);
/* Same dtype, ndim and lengths (strides may differ). */
WEFT_API bool weft_tensor_same_shape(const weft_tensor_t *a, const weft_tensor_t *b);
/* "float64[3,4]". snprintf-like. */
WEFT_API int weft_tensor_print_type(const weft_tensor_t *t, char *buf, size_t cap);

/* ---- element helpers (for tests, tools and slow paths) ---------------------- */

/* Sets every element to value (converted as weft_tensor_full).
 * Errors: WEFT_EINVAL (NULL t). */
WEFT_API weft_status_t weft_tensor_fill(weft_tensor_t *t, double value);
/* Copies src's elements into dst (same shape; dtypes converted as
 * weft_tensor_copy_as). dst must not partially overlap src.
 * Errors: WEFT_EINVAL (NULL args), WEFT_ESHAPE (shapes differ). */
WEFT_API weft_status_t weft_tensor_copy(weft_tensor_t *dst, const weft_tensor_t *src);
/* Reads / writes the element at index[0..ndim) as a double.
 * Errors: WEFT_EINVAL (NULL args), WEFT_ERANGE (an index out of bounds). */
WEFT_API weft_status_t weft_tensor_get(const weft_tensor_t *t, const int64_t *index,
                                       double *value);
WEFT_API weft_status_t weft_tensor_set(weft_tensor_t *t, const int64_t *index, double value);
/* Reads / writes the element at index[0..ndim) as a complex number (re, im):
 * any dtype, converted through complex128 ("Conversions": a real element
 * reads with im 0; writing a real element stores re and drops im, as
 * NumPy's complex-to-real cast; a bool element stores re != 0 || im != 0).
 * weft_tensor_get on a complex element reads its real part.
 * Errors: WEFT_EINVAL (NULL args), WEFT_ERANGE (an index out of bounds),
 * WEFT_ETYPE (t's dtype has no conversion to complex128 yet, named). */
WEFT_API weft_status_t weft_tensor_get_complex(const weft_tensor_t *t, const int64_t *index,
                                               double *re, double *im);
WEFT_API weft_status_t weft_tensor_set_complex(weft_tensor_t *t, const int64_t *index, double re,
                                               double im);
/* Element i in C order (flat index over the logical shape) as a double;
 * NaN when i is out of range or t is NULL. */
WEFT_API double weft_tensor_flat_get(const weft_tensor_t *t, size_t i);
/* Copies the elements in C order into dst, converted to double (dst holds
 * weft_tensor_size(t) entries). Errors: WEFT_EINVAL. */
WEFT_API weft_status_t weft_tensor_to_f64(const weft_tensor_t *t, double *dst);
/* Element-wise |a - b| <= atol + rtol * |b| over equal shapes (any dtypes;
 * where one is complex, |.| is the complex modulus); NaNs equal NaNs (a
 * complex value is NaN when either part is). WEFT_ETYPE when one is complex
 * and the other's dtype has no conversion to complex128 yet. *equal false for different shapes.
 * Errors: WEFT_EINVAL (NULL args). */
WEFT_API weft_status_t weft_tensor_allclose(const weft_tensor_t *a, const weft_tensor_t *b,
                                            double rtol, double atol, bool *equal);

/* Text of the last error raised by a weft_tensor_* or weft_kernel_alloc_output
 * call on the calling thread ("" if none). Returns borrowed, valid until the
 * thread's next such call. */
WEFT_API const char *weft_tensor_last_error(void);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_TENSOR_H */
