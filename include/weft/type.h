/* Types: what values a Variable may hold.
 *
 * A tensor type is a dtype, a rank (ndim) and a static length per dimension,
 * known (>= 0) or unknown (WEFT_DIM_UNKNOWN). A known length of 1 means the
 * dimension is broadcastable. Two more kinds exist for gradients: the null
 * type (an undefined gradient; importing it into a FunctionGraph is a type
 * error) and the disconnected type.
 *
 * Ownership: types are interned in a graph context (weft/graph.h): equal
 * types made in one context are the same pointer; they live until the context
 * is destroyed. Types of different contexts compare by value. */
#ifndef WEFT_TYPE_H
#define WEFT_TYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/export.h"
#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_graph weft_graph_t;
typedef struct weft_type weft_type_t;

typedef enum weft_dtype {
    WEFT_BOOL = 0,
    WEFT_INT32 = 1,
    WEFT_INT64 = 2,
    WEFT_FLOAT32 = 3,
    WEFT_FLOAT64 = 4,
    WEFT_INT8 = 5,
    WEFT_INT16 = 6,
    WEFT_UINT8 = 7,
    WEFT_UINT16 = 8,
    WEFT_UINT32 = 9,
    WEFT_UINT64 = 10,
    WEFT_FLOAT16 = 11, /* IEEE binary16, stored as half, computed in float32 */
    WEFT_COMPLEX64 = 12, /* two float32: real, imaginary (C's float complex) */
    WEFT_COMPLEX128 = 13, /* two float64 (C's double complex) */
} weft_dtype_t;
#define WEFT_DTYPE_COUNT 14

typedef enum weft_type_kind {
    WEFT_TYPE_TENSOR = 0,
    WEFT_TYPE_NULL = 1,         /* undefined gradient */
    WEFT_TYPE_DISCONNECTED = 2, /* gradient of a disconnected input */
} weft_type_kind_t;

#define WEFT_DIM_UNKNOWN ((int64_t)-1)
#define WEFT_MAX_NDIM 16

/* NumPy's name: "bool", "int32", "int64", "float32", "float64", "int8",
 * "int16", "uint8", "uint16", "uint32", "uint64", "float16", "complex64",
 * "complex128"; NULL for an invalid dtype. */
WEFT_API const char *weft_dtype_name(weft_dtype_t dtype);
/* Bytes per element (bool is 1); 0 for an invalid dtype. */
WEFT_API size_t weft_dtype_size(weft_dtype_t dtype);
/* Parses a dtype name. Errors: WEFT_EINVAL (NULL), WEFT_ENOTFOUND (unknown). */
WEFT_API weft_status_t weft_dtype_parse(const char *name, weft_dtype_t *out);

/* A dtype's kind, as NumPy's dtype.kind: b, i, u, f, c. */
typedef enum weft_dtype_kind {
    WEFT_KIND_BOOL = 0,
    WEFT_KIND_INT = 1,     /* signed integers */
    WEFT_KIND_UINT = 2,    /* unsigned integers */
    WEFT_KIND_FLOAT = 3,
    WEFT_KIND_COMPLEX = 4,
} weft_dtype_kind_t;

/* dtype's kind; -1 for an invalid dtype. */
WEFT_API int weft_dtype_kind(weft_dtype_t dtype);
/* NumPy's type promotion of two operand dtypes (np.result_type on arrays,
 * docs/dtypes.md §3): the smallest dtype both convert to safely; bool below
 * every number; a signed and an unsigned integer give the signed one twice
 * as wide as the unsigned (uint64 with a signed integer: float64); an
 * integer with a float: the float at least as wide as the smallest float
 * holding the integer exactly (8 bits: float16, 16: float32, 32 and 64:
 * float64); complex likewise with complex64 / complex128. WEFT_DTYPE_COUNT
 * when either is invalid. */
WEFT_API weft_dtype_t weft_dtype_promote(weft_dtype_t a, weft_dtype_t b);
/* The dtype a float-only function (exp, sin, true division, ...) computes a
 * dtype in: itself for floats and complexes, else weft_dtype_promote(d,
 * float16) (bool and 8-bit integers: float16, 16-bit: float32, wider:
 * float64), as NumPy's ufunc loops choose. WEFT_DTYPE_COUNT when invalid. */
WEFT_API weft_dtype_t weft_dtype_float_of(weft_dtype_t dtype);

/* The tensor type (dtype, ndim, shape). shape may be NULL (every length
 * unknown); entries are >= 0 or WEFT_DIM_UNKNOWN. As in NumPy, the product of
 * the known non-zero lengths times the dtype's size must fit in int64 (a
 * tensor of that shape must be possible; docs/dtypes.md).
 * Ownership: borrows g and shape; returns borrowed, valid until g is destroyed.
 * Errors: WEFT_EINVAL (NULL g/out, bad dtype, ndim < 0 or > WEFT_MAX_NDIM,
 * a length < -1), WEFT_EOVERFLOW (the shape is too big), WEFT_ENOMEM. */
WEFT_API weft_status_t weft_type_tensor(weft_graph_t *g, weft_dtype_t dtype, int ndim,
                                        const int64_t *shape, const weft_type_t **out);
/* The null type (undefined gradient) and the disconnected type.
 * Ownership/Errors as weft_type_tensor. */
WEFT_API weft_status_t weft_type_null(weft_graph_t *g, const weft_type_t **out);
WEFT_API weft_status_t weft_type_disconnected(weft_graph_t *g, const weft_type_t **out);

/* Accessors; all take a valid type (NULL returns 0 / false / WEFT_TYPE_NULL). */
WEFT_API weft_type_kind_t weft_type_kind(const weft_type_t *t);
WEFT_API weft_dtype_t weft_type_dtype(const weft_type_t *t);
WEFT_API int weft_type_ndim(const weft_type_t *t);
/* Static length of dimension i, or WEFT_DIM_UNKNOWN (also for i out of range). */
WEFT_API int64_t weft_type_dim(const weft_type_t *t, int i);
/* Static length 1. */
WEFT_API bool weft_type_is_broadcastable(const weft_type_t *t, int i);
/* Every length known. */
WEFT_API bool weft_type_is_static(const weft_type_t *t);

/* Equality by value (kind, dtype, ndim, every static length). */
WEFT_API bool weft_type_equal(const weft_type_t *a, const weft_type_t *b);
WEFT_API uint64_t weft_type_hash(const weft_type_t *t);
/* True when every value of `other` is a value of `self`, i.e. a variable of
 * type `other` may replace one of type `self`: same kind, dtype and ndim, and
 * each of self's lengths is unknown or equal to other's. */
WEFT_API bool weft_type_is_super(const weft_type_t *self, const weft_type_t *other);
/* Same family: same kind, dtype and ndim (static lengths may differ). */
WEFT_API bool weft_type_in_same_class(const weft_type_t *a, const weft_type_t *b);

/* Printed form, e.g. "float64[3,?]", "int32[]" (0-d), "NullType",
 * "DisconnectedType". Writes at most cap bytes (NUL-terminated when cap > 0);
 * returns the length the full text needs, like snprintf. */
WEFT_API int weft_type_print(const weft_type_t *t, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_TYPE_H */
