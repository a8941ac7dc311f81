/* The dtype conversion row kernels (operand 0 <- operand 1) for every pair
 * of real dtypes, with NumPy's results on x86-64 (docs/dtypes.md §2):
 * - to bool: x != 0 (NaN is true);
 * - integer to integer: the value modulo 2^bits of the target (two's
 *   complement), as C's conversions on GCC and NumPy's casts;
 * - to a float: rounded to nearest even; to float16 from an integer through
 *   float32 (the same result: an integer that float32 would round is beyond
 *   float16's range), from float32/float64 directly (no double rounding);
 * - float to integer: truncation toward zero when the result fits. NaN,
 *   infinities and values out of range give what NumPy 1.24 gives on
 *   x86-64 for most array lengths (its SIMD loops give other values for
 *   some unsigned cases; NumPy calls all of them undefined and warns):
 *   int32: INT32_MIN; int64: INT64_MIN; int8/int16/uint8/uint16: the int32
 *   result modulo 2^bits (NaN: 0; 300.0 to int8: 44); uint32: the int64
 *   result modulo 2^32; uint64: below 2^63 the int64 result modulo 2^64,
 *   else the int64 result of x - 2^63 plus 2^63 modulo 2^64 (NaN: 2^63,
 *   +inf: 0, -inf: 2^63).
 * Every float-to-integer rule is evaluated in double, exactly: float16 and
 * float32 convert to double without rounding. The range is tested before
 * converting (a C conversion that does not fit is undefined); the selects
 * still vectorize. */
#include "base/dtype_list.h"
#include "tensor/tensor_int.h"

/* x86-64's cvttsd2si: the truncated value, or the minimum when it does not
 * fit. The bounds are exact doubles (-2^31 - 1 is one; every double above
 * it truncates to at least -2^31). */
static inline int32_t f_to_i32(double x)
{
    return x > -0x1.00000002p31 && x < 0x1p31 ? (int32_t)x : INT32_MIN;
}
static inline int64_t f_to_i64(double x)
{
    return x >= -0x1p63 && x < 0x1p63 ? (int64_t)x : INT64_MIN;
}
static inline uint64_t f_to_u64(double x)
{
    if (x >= 0x1p63) return (uint64_t)f_to_i64(x - 0x1p63) ^ ((uint64_t)1 << 63);
    return (uint64_t)f_to_i64(x);
}

/* From a float source (F) or an integer / bool source (I), per target. */
#define CONV_F_b(x) ((x) != 0)
#define CONV_I_b(x) ((x) != 0)
#define CONV_F_i8(x) ((int8_t)f_to_i32((double)(x)))
#define CONV_F_i16(x) ((int16_t)f_to_i32((double)(x)))
#define CONV_F_i32(x) (f_to_i32((double)(x)))
#define CONV_F_i64(x) (f_to_i64((double)(x)))
#define CONV_F_u8(x) ((uint8_t)f_to_i32((double)(x)))
#define CONV_F_u16(x) ((uint16_t)f_to_i32((double)(x)))
#define CONV_F_u32(x) ((uint32_t)f_to_i64((double)(x)))
#define CONV_F_u64(x) (f_to_u64((double)(x)))
#define CONV_I_i8(x) (x)
#define CONV_I_i16(x) (x)
#define CONV_I_i32(x) (x)
#define CONV_I_i64(x) (x)
#define CONV_I_u8(x) (x)
#define CONV_I_u16(x) (x)
#define CONV_I_u32(x) (x)
#define CONV_I_u64(x) (x)
#define CONV_F_f16(x) (x)
#define CONV_I_f16(x) ((float)(x))
#define CONV_F_f32(x) (x)
#define CONV_I_f32(x) (x)
#define CONV_F_f64(x) (x)
#define CONV_I_f64(x) (x)

#define DEF_CONV(TD, dn, TS, sn, CLS, ES)                                                  \
    static void conv_##dn##_##sn(size_t n, char *const *p, const int64_t *s, void *arg)    \
    {                                                                                      \
        (void)arg;                                                                         \
        TD *o = (TD *)p[0];                                                                \
        const TS *a = (const TS *)p[1];                                                    \
        if (s[0] == 1 && s[1] == 1) {                                                      \
            WEFT_IVDEP for (size_t i = 0; i < n; i++) o[i] = (TD)CONV_##CLS##_##dn(a[i]);  \
            return;                                                                        \
        }                                                                                  \
        for (size_t i = 0; i < n; i++)                                                     \
            o[(int64_t)i * s[0]] = (TD)CONV_##CLS##_##dn(a[(int64_t)i * s[1]]);            \
    }

/* Every real dtype, as a conversion source: X(target's C type, target's
 * short name, C type, short name, class (F float / I integer or bool),
 * dtype). The preprocessor cannot expand one list inside itself, so the
 * targets have their own list (CONV_DSTS) of the same dtypes. */
#define CONV_SRCS(X, TD, dn)                         \
    X(TD, dn, weft__bool_el, b, I, WEFT_BOOL)        \
    X(TD, dn, int8_t, i8, I, WEFT_INT8)              \
    X(TD, dn, int16_t, i16, I, WEFT_INT16)           \
    X(TD, dn, int32_t, i32, I, WEFT_INT32)           \
    X(TD, dn, int64_t, i64, I, WEFT_INT64)           \
    X(TD, dn, uint8_t, u8, I, WEFT_UINT8)            \
    X(TD, dn, uint16_t, u16, I, WEFT_UINT16)         \
    X(TD, dn, uint32_t, u32, I, WEFT_UINT32)         \
    X(TD, dn, uint64_t, u64, I, WEFT_UINT64)         \
    X(TD, dn, weft__f16, f16, F, WEFT_FLOAT16)       \
    X(TD, dn, float, f32, F, WEFT_FLOAT32)           \
    X(TD, dn, double, f64, F, WEFT_FLOAT64)

#define CONV_DSTS(Y)                      \
    Y(weft__bool_el, b, WEFT_BOOL)        \
    Y(int8_t, i8, WEFT_INT8)              \
    Y(int16_t, i16, WEFT_INT16)           \
    Y(int32_t, i32, WEFT_INT32)           \
    Y(int64_t, i64, WEFT_INT64)           \
    Y(uint8_t, u8, WEFT_UINT8)            \
    Y(uint16_t, u16, WEFT_UINT16)         \
    Y(uint32_t, u32, WEFT_UINT32)         \
    Y(uint64_t, u64, WEFT_UINT64)         \
    Y(weft__f16, f16, WEFT_FLOAT16)       \
    Y(float, f32, WEFT_FLOAT32)           \
    Y(double, f64, WEFT_FLOAT64)

#define DEF_CONV_ROW(TD, dn, ED) CONV_SRCS(DEF_CONV, TD, dn)
CONV_DSTS(DEF_CONV_ROW)

#define CONV_CELL(TD, dn, TS, sn, CLS, ES) [ES] = conv_##dn##_##sn,
#define CONV_ROW(TD, dn, ED) [ED] = {CONV_SRCS(CONV_CELL, TD, dn)},

/* Complex rows and columns stay NULL here: weft__convert_fn hands a pair
 * with a complex side to convert_complex.c. */
static const weft__row_fn conv_table[WEFT_DTYPE_COUNT][WEFT_DTYPE_COUNT] = {CONV_DSTS(CONV_ROW)};

weft__row_fn weft__convert_fn(weft_dtype_t dst, weft_dtype_t src)
{
    if ((unsigned)dst >= WEFT_DTYPE_COUNT || (unsigned)src >= WEFT_DTYPE_COUNT) return NULL;
    if (weft__dtype_is_complex(dst) || weft__dtype_is_complex(src))
        return weft__convert_complex_fn(dst, src); /* convert_complex.c */
    return conv_table[dst][src];
}
