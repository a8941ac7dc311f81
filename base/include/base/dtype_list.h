/* The real dtypes as X-macro lists, one line per dtype, and the float16
 * element type. Every per-dtype table in lib/tensor and lib/ops (conversion
 * kernels, elementwise and reduction kernels, their dispatch rows) is
 * generated from these lists, so a kernel family covers a new dtype when
 * its line is added here (docs/dtypes.md §1). Complex dtypes are in no list:
 * their tables are filled separately. In base/ so that every module (graph
 * constants, io, tensor, ops) sees it. Not part of the API. */
#ifndef WEFT_BASE_DTYPE_LIST_H
#define WEFT_BASE_DTYPE_LIST_H

#include <stdint.h>

#include "weft/type.h"

/* float16 is IEEE binary16. GCC (12 and later) and clang provide _Float16 on
 * x86-64 (with SSE2) and aarch64; its conversions round to nearest even and
 * keep subnormals, infinities and NaN (libgcc's soft-float routines where
 * the processor has no half instructions), which is what NumPy's
 * npy_float_to_half / npy_double_to_half do. __extension__: ISO C11 has no
 * _Float16, and -Wpedantic would say so. */
#if !defined(__FLT16_MAX__)
#error "weft needs the _Float16 type (GCC >= 12 or clang on x86-64 or aarch64) for float16"
#endif
__extension__ typedef _Float16 weft__f16;

typedef unsigned char weft__bool_el; /* bool elements: one byte, 0 or 1 */

/* Each list takes the callback X and two arguments A, B handed to every call
 * unchanged (a kernel's name and expression, say; pass ~ when unused): the
 * preprocessor offers no other way to give a list's callback more than its
 * columns. */

/* Signed integers: X(A, B, C type, its unsigned twin, short name, dtype).
 * Integer arithmetic is computed in the unsigned twin so it wraps as NumPy's
 * does. */
#define WEFT__SINT_DTYPES(X, A, B)               \
    X(A, B, int8_t, uint8_t, i8, WEFT_INT8)      \
    X(A, B, int16_t, uint16_t, i16, WEFT_INT16)  \
    X(A, B, int32_t, uint32_t, i32, WEFT_INT32)  \
    X(A, B, int64_t, uint64_t, i64, WEFT_INT64)

/* Unsigned integers: same columns (the twin is the type itself). */
#define WEFT__UINT_DTYPES(X, A, B)                  \
    X(A, B, uint8_t, uint8_t, u8, WEFT_UINT8)       \
    X(A, B, uint16_t, uint16_t, u16, WEFT_UINT16)   \
    X(A, B, uint32_t, uint32_t, u32, WEFT_UINT32)   \
    X(A, B, uint64_t, uint64_t, u64, WEFT_UINT64)

/* Floats a kernel computes in natively: X(A, B, C type, short name, dtype).
 * float16 is not here: its kernels load into float32 and round back
 * (weft__half_rows in lib/tensor, docs/dtypes.md §4); lists of every float
 * add X(A, B, weft__f16, f16, WEFT_FLOAT16) themselves. */
#define WEFT__FLOAT_DTYPES(X, A, B)       \
    X(A, B, float, f32, WEFT_FLOAT32)     \
    X(A, B, double, f64, WEFT_FLOAT64)

#endif /* WEFT_BASE_DTYPE_LIST_H */
