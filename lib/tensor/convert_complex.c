/* The dtype conversion row kernels (operand 0 <- operand 1) where either
 * side is complex64 or complex128, with NumPy's results (docs/dtypes.md,
 * "Complex numbers"):
 * - complex to complex: each part converted as float64 <-> float32 is;
 * - complex to bool: re != 0 || im != 0 (NaN parts are true);
 * - complex to another real dtype: the real part, converted from float32
 *   (complex64) or float64 (complex128) by the real conversion kernel, so
 *   every rule of weft/tensor.h's "Conversions" applies to it (NumPy drops
 *   the imaginary part too, with a ComplexWarning; weft does not warn);
 * - a real dtype to complex: the value converted to float32 (complex64) or
 *   float64 (complex128) by the real kernel, imaginary part +0.
 * The real side goes through the real kernels (weft__convert_fn) a block of
 * CX_BLOCK elements at a time, in a buffer on the stack, so a real dtype
 * gains its complex conversions with its real ones. */
#include <complex.h>

#include "tensor/tensor_int.h"

typedef float _Complex cx64;
typedef double _Complex cx128;

#define CX_BLOCK 256

/* complex <- complex: TD from TS, part by part. */
#define DEF_CX_CX(name, TD, TP, TS)                                                   \
    static void name(size_t n, char *const *p, const int64_t *s, void *arg)          \
    {                                                                                \
        (void)arg;                                                                   \
        TP *o = (TP *)p[0];                                                          \
        const TS *a = (const TS *)p[1];                                              \
        for (size_t i = 0; i < n; i++) {                                             \
            TS x = a[(int64_t)i * s[1]];                                             \
            o[2 * (int64_t)i * s[0]] = (TP)creal(x);                                 \
            o[2 * (int64_t)i * s[0] + 1] = (TP)cimag(x);                             \
        }                                                                            \
    }
DEF_CX_CX(conv_c64_c64, cx64, float, cx64)
DEF_CX_CX(conv_c64_c128, cx64, float, cx128)
DEF_CX_CX(conv_c128_c64, cx128, double, cx64)
DEF_CX_CX(conv_c128_c128, cx128, double, cx128)

/* bool <- complex */
#define DEF_CX_BOOL(name, TS)                                                         \
    static void name(size_t n, char *const *p, const int64_t *s, void *arg)          \
    {                                                                                \
        (void)arg;                                                                   \
        unsigned char *o = (unsigned char *)p[0];                                    \
        const TS *a = (const TS *)p[1];                                              \
        for (size_t i = 0; i < n; i++) {                                             \
            TS x = a[(int64_t)i * s[1]];                                             \
            o[(int64_t)i * s[0]] = creal(x) != 0 || cimag(x) != 0;                   \
        }                                                                            \
    }
DEF_CX_BOOL(conv_b_c64, cx64)
DEF_CX_BOOL(conv_b_c128, cx128)

/* real <- complex: the real parts into a block of TP, then the real kernel
 * from the part dtype to the target. */
#define DEF_REAL_FROM_CX(name, TP)                                           \
    static void name##_run(size_t n, char *const *p, const int64_t *s, weft__row_fn f, \
                           size_t osz)                                                \
    {                                                                                 \
        TP buf[CX_BLOCK];                                                             \
        const TP *a = (const TP *)p[1];                                               \
        for (size_t i0 = 0; i0 < n; i0 += CX_BLOCK) {                                 \
            size_t m = n - i0 < CX_BLOCK ? n - i0 : CX_BLOCK;                         \
            for (size_t j = 0; j < m; j++) buf[j] = a[2 * (int64_t)(i0 + j) * s[1]];  \
            char *q[2] = {p[0] + (int64_t)i0 * s[0] * (int64_t)osz, (char *)buf};     \
            int64_t qs[2] = {s[0], 1};                                                \
            f(m, q, qs, NULL);                                                        \
        }                                                                             \
    }
DEF_REAL_FROM_CX(real_from_c64, float)
DEF_REAL_FROM_CX(real_from_c128, double)

/* complex <- real: the real kernel from the source into a block of TP, then
 * the parts (imaginary +0). */
#define DEF_CX_FROM_REAL(name, TP)                                                    \
    static void name##_run(size_t n, char *const *p, const int64_t *s, weft__row_fn f, \
                           size_t isz)                                                \
    {                                                                                 \
        TP buf[CX_BLOCK];                                                             \
        TP *o = (TP *)p[0];                                                           \
        for (size_t i0 = 0; i0 < n; i0 += CX_BLOCK) {                                 \
            size_t m = n - i0 < CX_BLOCK ? n - i0 : CX_BLOCK;                         \
            char *q[2] = {(char *)buf, p[1] + (int64_t)i0 * s[1] * (int64_t)isz};     \
            int64_t qs[2] = {1, s[1]};                                                \
            f(m, q, qs, NULL);                                                        \
            for (size_t j = 0; j < m; j++) {                                          \
                o[2 * (int64_t)(i0 + j) * s[0]] = buf[j];                             \
                o[2 * (int64_t)(i0 + j) * s[0] + 1] = 0;                              \
            }                                                                         \
        }                                                                             \
    }
DEF_CX_FROM_REAL(cx64_from_real, float)
DEF_CX_FROM_REAL(cx128_from_real, double)

/* One row function per (complex dtype, real dtype) pair and direction,
 * since a row kernel's arg belongs to its caller: every real dtype but bool,
 * one line each. A pair is offered only when the real kernel it goes
 * through exists (weft__convert_complex_fn), so a real dtype gets its
 * complex conversions as soon as it has its float32/float64 ones.
 * X(short name, dtype). */
#define CX_REAL_DTYPES(X)  \
    X(i8, WEFT_INT8)       \
    X(i16, WEFT_INT16)     \
    X(i32, WEFT_INT32)     \
    X(i64, WEFT_INT64)     \
    X(u8, WEFT_UINT8)      \
    X(u16, WEFT_UINT16)    \
    X(u32, WEFT_UINT32)    \
    X(u64, WEFT_UINT64)    \
    X(f16, WEFT_FLOAT16)   \
    X(f32, WEFT_FLOAT32)   \
    X(f64, WEFT_FLOAT64)

#define DEF_FROM_CX(sn, D)                                                               \
    static void conv_##sn##_c64(size_t n, char *const *p, const int64_t *s, void *arg)    \
    {                                                                                    \
        (void)arg;                                                                       \
        real_from_c64_run(n, p, s, weft__convert_fn(D, WEFT_FLOAT32), weft__dtype_size(D)); \
    }                                                                                    \
    static void conv_##sn##_c128(size_t n, char *const *p, const int64_t *s, void *arg)   \
    {                                                                                    \
        (void)arg;                                                                       \
        real_from_c128_run(n, p, s, weft__convert_fn(D, WEFT_FLOAT64), weft__dtype_size(D)); \
    }
#define DEF_TO_CX(sn, D)                                                                 \
    static void conv_c64_##sn(size_t n, char *const *p, const int64_t *s, void *arg)      \
    {                                                                                    \
        (void)arg;                                                                       \
        cx64_from_real_run(n, p, s, weft__convert_fn(WEFT_FLOAT32, D), weft__dtype_size(D)); \
    }                                                                                    \
    static void conv_c128_##sn(size_t n, char *const *p, const int64_t *s, void *arg)     \
    {                                                                                    \
        (void)arg;                                                                       \
        cx128_from_real_run(n, p, s, weft__convert_fn(WEFT_FLOAT64, D), weft__dtype_size(D)); \
    }
CX_REAL_DTYPES(DEF_FROM_CX)
CX_REAL_DTYPES(DEF_TO_CX)
DEF_TO_CX(b, WEFT_BOOL) /* bool <- complex tests both parts (above) */

#define PAIR_CELLS(sn, D)                                                      \
    [WEFT_COMPLEX64][D] = conv_c64_##sn, [WEFT_COMPLEX128][D] = conv_c128_##sn, \
    [D][WEFT_COMPLEX64] = conv_##sn##_c64, [D][WEFT_COMPLEX128] = conv_##sn##_c128,

static const weft__row_fn cx_table[WEFT_DTYPE_COUNT][WEFT_DTYPE_COUNT] = {
    CX_REAL_DTYPES(PAIR_CELLS)
    [WEFT_COMPLEX64][WEFT_BOOL] = conv_c64_b,
    [WEFT_COMPLEX128][WEFT_BOOL] = conv_c128_b,
    [WEFT_BOOL][WEFT_COMPLEX64] = conv_b_c64,
    [WEFT_BOOL][WEFT_COMPLEX128] = conv_b_c128,
    [WEFT_COMPLEX64][WEFT_COMPLEX64] = conv_c64_c64,
    [WEFT_COMPLEX64][WEFT_COMPLEX128] = conv_c64_c128,
    [WEFT_COMPLEX128][WEFT_COMPLEX64] = conv_c128_c64,
    [WEFT_COMPLEX128][WEFT_COMPLEX128] = conv_c128_c128,
};

/* The real dtype of a complex dtype's parts. */
static weft_dtype_t part_of(weft_dtype_t cx)
{
    return cx == WEFT_COMPLEX64 ? WEFT_FLOAT32 : WEFT_FLOAT64;
}

weft__row_fn weft__convert_complex_fn(weft_dtype_t dst, weft_dtype_t src)
{
    if ((unsigned)dst >= WEFT_DTYPE_COUNT || (unsigned)src >= WEFT_DTYPE_COUNT) return NULL;
    bool cd = weft__dtype_is_complex(dst), cs = weft__dtype_is_complex(src);
    /* a real side needs the real kernel the pair goes through */
    if (cs && !cd && dst != WEFT_BOOL && !weft__convert_fn(dst, part_of(src))) return NULL;
    if (cd && !cs && !weft__convert_fn(part_of(dst), src)) return NULL;
    return cx_table[dst][src];
}
