/* Internal layout of tensors and buffers, the per-thread error text, the N-d
 * strided iterator and the dtype conversion kernels shared by lib/tensor and
 * lib/ops. Not part of the API. */
#ifndef WEFT_TENSOR_INT_H
#define WEFT_TENSOR_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/tensor.h"

/* Memory shared by a base tensor and its views. [lo, hi) is the byte range it
 * covers (views are bounds-checked against it). free_fn NULL: borrowed user
 * memory, or (block) owned memory: the base handle, its elements and this
 * header live in one aligned block (weft_tensor_empty). */
typedef struct weft_buffer {
    atomic_size_t refs; /* one per tensor handle viewing the buffer */
    uintptr_t lo, hi;
    void *data;         /* what free_fn receives */
    weft_tensor_free_fn free_fn;
    void *free_user;
    void *block;        /* owned: the aligned_alloc block to free, else NULL */
} weft_buffer_t;

/* A handle is sized by its ndim: shape and strides point into dims[], right
 * after the fixed fields, so a handle of ndim <= 1 fits one cache line. An
 * owned tensor's base handle starts its buffer's block; small elements
 * (<= WEFT_TENSOR_SMALL_BYTES) follow it in the same line, so a node that
 * reuses a small output touches one line for the handle and the data. */
struct weft_tensor {
    atomic_size_t refs; /* handle references */
    weft_buffer_t *buf;
    char *data;         /* element [0,..,0] */
    weft_dtype_t dtype;
    int ndim;
    int64_t *shape;     /* dims[0 .. ndim) */
    int64_t *strides;   /* dims[ndim .. 2 ndim), in elements */
    int64_t dims[];
};

/* Bytes of a handle of ndim dimensions. */
static inline size_t weft__tensor_handle_bytes(int ndim)
{
    return sizeof(struct weft_tensor) + 2 * (size_t)ndim * sizeof(int64_t);
}

/* dtype size and name without depending on lib/graph (where the public
 * weft_dtype_size/weft_dtype_name live): lib/tensor depends on weft_base only. */
static inline size_t weft__dtype_size(weft_dtype_t d)
{
    static const size_t sizes[WEFT_DTYPE_COUNT] = {1, 4, 8, 4, 8, 1, 2, 1, 2, 4, 8, 2, 8, 16};
    return (unsigned)d < WEFT_DTYPE_COUNT ? sizes[d] : 0;
}
static inline const char *weft__dtype_name(weft_dtype_t d)
{
    static const char *const names[WEFT_DTYPE_COUNT] = {
        "bool", "int32", "int64", "float32", "float64", "int8", "int16", "uint8", "uint16", "uint32", "uint64", "float16", "complex64", "complex128"};
    return (unsigned)d < WEFT_DTYPE_COUNT ? names[d] : "?";
}

/* True when t is the handle allocated together with its buffer (the base of
 * weft_tensor_empty's block), not a view or a handle on user memory: the
 * compiled runtime parks only such handles in its buffer pool. */
static inline bool weft__tensor_is_block_base(const weft_tensor_t *t)
{
    return t && t->buf && t->buf->block == (const void *)t;
}

/* Records the calling thread's error text and returns status. Only failures
 * write it (like errno). */
weft_status_t weft__tensor_error(weft_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Checks dtype/ndim/shape and computes the element count (overflow-checked,
 * also against the byte size). Errors recorded with weft__tensor_error. */
weft_status_t weft__tensor_check_shape(weft_dtype_t dtype, int ndim, const int64_t *shape,
                                       size_t *count);
/* Fills strides with the C-contiguous strides of shape. */
void weft__tensor_contig_strides(int ndim, const int64_t *shape, int64_t *strides);
/* A new view handle on t's buffer with the given geometry (no bounds check:
 * internal callers derive geometry from t's own). Returns NULL on ENOMEM. */
weft_tensor_t *weft__tensor_view_unchecked(weft_tensor_t *t, int ndim, const int64_t *shape,
                                           const int64_t *strides, char *data);

/* weft_tensor_view's checks of a view's geometry against base's buffer; on
 * success *data is the view's first element. Errors recorded with
 * weft__tensor_error: WEFT_EINVAL, WEFT_EOVERFLOW, WEFT_ERANGE. */
weft_status_t weft__tensor_view_check(const weft_tensor_t *base, int ndim, const int64_t *shape,
                                      const int64_t *strides, int64_t offset, char **data);

/* Recycled view handles: a runtime keeps the handle of a view it no longer
 * needs (weft__tensor_detach: the buffer reference is dropped, the memory
 * kept as a "raw" handle of the same ndim, buf NULL) and builds its next view
 * of that ndim in it (weft__tensor_view_at), so a steady-state call makes
 * its views without malloc. A raw handle is not a tensor: only these
 * functions take it. */

/* A view of base (geometry checked by the caller) built in raw (a raw handle
 * of ndim dimensions) or, raw NULL, in new memory. NULL: out of memory. */
weft_tensor_t *weft__tensor_view_at(weft_tensor_t *raw, weft_tensor_t *base, int ndim,
                                    const int64_t *shape, const int64_t *strides, char *data);
/* True when nothing but the caller's reference holds t's handle and t is
 * not the base handle allocated with its buffer: the caller may rewrite
 * (weft__tensor_repoint) or detach it. */
bool weft__tensor_handle_alone(const weft_tensor_t *t);
/* Turns t (weft__tensor_handle_alone, t != base) into a view of base with
 * t's ndim; its previous buffer reference is dropped. */
void weft__tensor_repoint(weft_tensor_t *t, weft_tensor_t *base, const int64_t *shape,
                          const int64_t *strides, char *data);
/* When weft__tensor_handle_alone(t): drops t's buffer reference and returns
 * t as a raw handle; else NULL, t untouched. */
weft_tensor_t *weft__tensor_detach(weft_tensor_t *t);
/* Frees a raw handle (NULL: nothing). */
void weft__tensor_handle_free(weft_tensor_t *raw);

/* weft_tensor_reshape's plan: checks ndim/shape against t (a -1 length
 * resolved into res) and says whether the result can be a view of t (*view;
 * then strides are its element strides, else C-contiguous strides of res).
 * Errors recorded with weft__tensor_error: WEFT_EINVAL, WEFT_ESHAPE,
 * WEFT_EOVERFLOW. */
weft_status_t weft__tensor_reshape_plan(const weft_tensor_t *t, int ndim, const int64_t *shape,
                                       int64_t *res, int64_t *strides, bool *view);
/* Writes src's elements in C order into C-contiguous dst of the same element
 * count (any shape), converting dtypes. */
void weft__tensor_copy_c_order(weft_tensor_t *dst, const weft_tensor_t *src);

/* ---- N-d iteration ---------------------------------------------------------
 * A row kernel processes n elements of each operand: p[k] points at operand
 * k's first element, s[k] is its stride in elements. Operand 0 is the output
 * by convention. */
#define WEFT__ITER_MAX_OPS 8 /* an output and up to 7 inputs (Composite) */
typedef void (*weft__row_fn)(size_t n, char *const *p, const int64_t *s, void *arg);

/* Calls fn once per innermost row over shape[0..ndim), operand k starting at
 * base[k] with element strides strides[k][0..ndim) (0 on broadcast axes) and
 * elements of isz[k] bytes. Length-1 axes are skipped and axes that are
 * contiguous with their inner neighbour in every operand are merged, so a
 * contiguous (or scalar-broadcast) case is ONE call with n = element count.
 * Nothing is called for an empty shape; a 0-d shape is one call with n = 1. */
void weft__iter_rows(int ndim, const int64_t *shape, int nop, char *const *base,
                     const int64_t *const *strides, const size_t *isz, weft__row_fn fn,
                     void *arg);

/* Whether weft__iter_rows over this geometry makes at most one row call:
 * then *n is that call's element count (0: no call, an empty shape) and
 * s[0..nop) its strides, exactly as weft__iter_rows would pass them, so a
 * caller that decided this once may call the row kernel itself. */
bool weft__iter_one_row(int ndim, const int64_t *shape, int nop, const int64_t *const *strides,
                        size_t *n, int64_t *s);

/* The row kernel converting operand 1 (dtype src) into operand 0 (dtype dst)
 * (convert.c; NULL for a pair it does not convert). */
weft__row_fn weft__convert_fn(weft_dtype_t dst, weft_dtype_t src);

/* complex64 / complex128 (lib/graph's weft_dtype_kind without the
 * dependency). */
static inline bool weft__dtype_is_complex(weft_dtype_t d)
{
    return d == WEFT_COMPLEX64 || d == WEFT_COMPLEX128;
}
/* The address of the element at index[0..ndim) (bounds-checked; errors
 * recorded with weft__tensor_error: WEFT_EINVAL, WEFT_ERANGE). */
weft_status_t weft__tensor_element_ptr(const weft_tensor_t *t, const int64_t *index, char **p);
/* weft_tensor_allclose where a or b is complex (tensor_complex.c): both
 * parts compared, |a - b| the complex modulus. */
weft_status_t weft__tensor_allclose_complex(const weft_tensor_t *a, const weft_tensor_t *b,
                                            double rtol, double atol, bool *equal);
/* weft__convert_fn for a pair with a complex side (convert_complex.c). */
weft__row_fn weft__convert_complex_fn(weft_dtype_t dst, weft_dtype_t src);
/* Runs the float32 row kernel f32 over a row whose operands k with bit k
 * of half_mask set are float16 (half_rows.c): chunks of those are converted
 * to float32 scratch, f32 runs on the chunk, a float16 output (bit 0) is
 * rounded back to nearest even. Operands without the bit are bool (a
 * comparison's output, Switch's condition) and are passed through with
 * their strides. In-place safe: an output chunk is written after the
 * kernel read its inputs' chunk. */
void weft__half_rows(size_t n, char *const *p, const int64_t *s, void *arg, int nop,
                     unsigned half_mask, weft__row_fn f32);

/* Loop pragmas: tell the vectorizer the iterations are independent. Used
 * instead of restrict because in-place kernels write exactly onto an input
 * (out == in, element for element), which restrict would make undefined but
 * which carries no loop dependence. */
#if defined(__clang__)
#define WEFT_IVDEP _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__)
#define WEFT_IVDEP _Pragma("GCC ivdep")
#else
#define WEFT_IVDEP
#endif

/* Blocks of at least this many bytes are advised to use transparent huge
 * pages (tensor_huge.c; NumPy's threshold). */
#define WEFT__TENSOR_HUGE_MIN ((size_t)4 << 20)
/* madvise(MADV_HUGEPAGE) on the whole pages of a block of `bytes` when it is
 * large enough; a no-op elsewhere or on failure (it is advice). Call before
 * the block is first touched. */
void weft__tensor_advise_huge(void *block, size_t bytes);

#endif /* WEFT_TENSOR_INT_H */
