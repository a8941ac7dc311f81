/* Row kernels of the rounding, integer and logical kinds (issue 17: Floor
 * ... Clip, weft/elemwise.h), and Abs of bool; generated per dtype from the
 * type lists below, so a new dtype is one line in a list (the expressions
 * are written for any signed or unsigned integer type).
 *
 * Semantics are NumPy 1.24's on x86-64, bit for bit:
 * - Mod / FloorDivide on floats: npy_divmod (fmod, then the sign fix-up
 *   and the snap of the quotient), with npy_remainder's and
 *   npy_floor_divide's cases for a zero divisor (fmod's NaN, a / b);
 * - on integers: a zero divisor gives 0; MIN // -1 wraps to MIN and
 *   MIN % -1 is 0 (NumPy warns; weft has no warnings);
 * - shifts by a negative amount or by the type's width or more: 0, and a
 *   right shift of a negative value -1 (npy_lshift / npy_rshift);
 * - Clip is minimum(maximum(x, lo), hi) with NaN-propagating maximum and
 *   minimum (NumPy's _NPY_MAX/_NPY_MIN): clip(0.0, -0.0, 1) is -0.0;
 *   float16 compares with >= and <= as NumPy's half loop does (0.0 there);
 * - Round and Rint are rint in the default rounding mode: half to even.
 * The file is built like elemwise_kernels.c (-O3, -ffp-contract=off, the
 * ISA clones of ew_kernel_gen.h). */
#include <float.h>
#include <tgmath.h>

#include "base/dtype_list.h"
#include "ew_kernel_gen.h"

/* One integer expression serves the signed and the unsigned dtypes: for an
 * unsigned type its sign tests (x < 0) are constant false, which is what
 * they mean there; the compiler's warning about that is not a defect. */
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wtautological-unsigned-zero-compare"
#elif defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wtype-limits"
#endif

/* X(k, E, T, UT, s, D): kernel k##_##s on type T (UT its unsigned twin;
 * T itself for floats and bool) of weft dtype D; expression E(T, UT, s). */
#define BOOL_TYPES(X, k, E) X(k, E, bool_el, bool_el, b, WEFT_BOOL)
#define INT_TYPES(X, k, E) WEFT__SINT_DTYPES(X, k, E) WEFT__UINT_DTYPES(X, k, E)
#define FLOAT_TYPES(X, k, E) \
    X(k, E, float, float, f32, WEFT_FLOAT32) X(k, E, double, double, f64, WEFT_FLOAT64)

/* Clip's loop: x, lo, hi (operands 1..3); fast paths for every operand
 * contiguous and for contiguous x with scalar bounds (clip(x, 0, 1)). */
#define TERNARY_KERNEL(name, T, EXPR)                                                   \
    KERNEL_CLONES static void name(size_t n, char *const *p, const int64_t *s, void *arg) \
    {                                                                                   \
        (void)arg;                                                                      \
        T *o = (T *)p[0];                                                               \
        const T *a = (const T *)p[1], *b = (const T *)p[2], *c = (const T *)p[3];       \
        if (s[0] == 1 && s[1] == 1 && s[2] == 0 && s[3] == 0) {                         \
            const T y = b[0], z = c[0];                                                 \
            WEFT_IVDEP for (size_t i = 0; i < n; i++)                                   \
            {                                                                           \
                T x = a[i];                                                             \
                o[i] = (EXPR);                                                          \
            }                                                                           \
            return;                                                                     \
        }                                                                               \
        if (s[0] == 1 && s[1] == 1 && s[2] == 1 && s[3] == 1) {                         \
            WEFT_IVDEP for (size_t i = 0; i < n; i++)                                   \
            {                                                                           \
                T x = a[i], y = b[i], z = c[i];                                         \
                o[i] = (EXPR);                                                          \
            }                                                                           \
            return;                                                                     \
        }                                                                               \
        for (size_t i = 0; i < n; i++) {                                                \
            T x = a[(int64_t)i * s[1]], y = b[(int64_t)i * s[2]], z = c[(int64_t)i * s[3]]; \
            o[(int64_t)i * s[0]] = (EXPR);                                              \
        }                                                                               \
    }

#define GEN_UN(k, E, T, UT, s, D) UNARY_KERNEL(k##_##s, T, T, E(T, UT, s))
#define GEN_UN_BOOL(k, E, T, UT, s, D) UNARY_KERNEL(k##_##s, T, bool_el, E(T, UT, s))
#define GEN_BIN(k, E, T, UT, s, D) BINARY_KERNEL(k##_##s, T, T, E(T, UT, s))
#define GEN_BIN_BOOL(k, E, T, UT, s, D) BINARY_KERNEL(k##_##s, T, bool_el, E(T, UT, s))
#define GEN_TER(k, E, T, UT, s, D) TERNARY_KERNEL(k##_##s, T, E(T, UT, s))
#define ENTRY(k, E, T, UT, s, D) [D] = k##_##s,

/* ---- scalar helpers, one per type ----------------------------------------------- */

/* npy_divmod: the floored quotient, *mod the remainder with b's sign. */
#define DEF_FLOAT_DIVMOD(k, E, T, UT, s, D)                         \
    static inline T divmod_##s(T a, T b, T *mod)                    \
    {                                                               \
        T m = fmod(a, b), div;                                      \
        if (!b) {                                                   \
            *mod = m;                                               \
            return a / b;                                           \
        }                                                           \
        div = (a - m) / b;                                          \
        if (m) {                                                    \
            if ((b < 0) != (m < 0)) {                               \
                m += b;                                             \
                div -= (T)1;                                        \
            }                                                       \
        } else {                                                    \
            m = copysign((T)0, b);                                  \
        }                                                           \
        *mod = m;                                                   \
        if (!div) return copysign((T)0, a / b);                     \
        T fl = floor(div);                                          \
        return div - fl > (T)0.5 ? fl + (T)1 : fl;                  \
    }                                                               \
    static inline T fmod_floor_##s(T a, T b)                        \
    {                                                               \
        T m;                                                        \
        if (!b) return fmod(a, b);                                  \
        divmod_##s(a, b, &m);                                       \
        return m;                                                   \
    }                                                               \
    static inline T fdiv_floor_##s(T a, T b)                        \
    {                                                               \
        T m;                                                        \
        return b ? divmod_##s(a, b, &m) : a / b;                    \
    }
FLOAT_TYPES(DEF_FLOAT_DIVMOD, _, _)

/* (T)-1 < 0: a signed type, where b == -1 would trap for a == MIN. */
#define NEG_ONE(T, b) ((T)-1 < 0 && (b) == (T)-1)
#define DEF_INT_DIVMOD(k, E, T, UT, s, D)                                      \
    static inline T imod_##s(T a, T b)                                         \
    {                                                                          \
        if (b == 0 || NEG_ONE(T, b)) return 0;                                 \
        T r = a % b;                                                           \
        return (r != 0 && ((r < 0) != (b < 0))) ? (T)(r + b) : r;              \
    }                                                                          \
    static inline T idiv_floor_##s(T a, T b)                                   \
    {                                                                          \
        if (b == 0) return 0;                                                  \
        if (NEG_ONE(T, b)) return (T)((UT)0 - (UT)a); /* MIN // -1 wraps */    \
        T q = a / b;                                                           \
        return (((a < 0) != (b < 0)) && q * b != a) ? (T)(q - 1) : q;          \
    }                                                                          \
    static inline T ifmod_##s(T a, T b)                                        \
    {                                                                          \
        return (b == 0 || NEG_ONE(T, b)) ? 0 : (T)(a % b);                     \
    }
INT_TYPES(DEF_INT_DIVMOD, _, _)

/* ---- expressions E(T, UT, s) over x, y, z ---------------------------------------- */

#define F_MAX(T) ((T)_Generic((T)0, float: FLT_MAX, default: DBL_MAX))
#define E_FLOOR(T, UT, s) floor(x)
#define E_CEIL(T, UT, s) ceil(x)
#define E_TRUNC(T, UT, s) trunc(x)
#define E_RINT(T, UT, s) rint(x)
#define E_SAME(T, UT, s) x
#define E_ISNAN_F(T, UT, s) (x != x)
#define E_ISINF_F(T, UT, s) (fabs(x) == (T)INFINITY)
#define E_ISFINITE_F(T, UT, s) (fabs(x) <= F_MAX(T))
#define E_FALSE(T, UT, s) ((void)x, 0)
#define E_TRUE(T, UT, s) ((void)x, 1)
#define E_LNOT(T, UT, s) (x == 0)
#define E_INVERT_I(T, UT, s) (T)(~x)
#define E_INVERT_B(T, UT, s) (x ^ 1)
#define E_NAN_TO_NUM(T, UT, s) \
    (x != x ? (T)0 : x == (T)INFINITY ? F_MAX(T) : x == -(T)INFINITY ? -F_MAX(T) : x)
#define E_MOD_F(T, UT, s) fmod_floor_##s(x, y)
#define E_FDIV_F(T, UT, s) fdiv_floor_##s(x, y)
#define E_FMOD_F(T, UT, s) fmod(x, y)
#define E_MOD_I(T, UT, s) imod_##s(x, y)
#define E_FDIV_I(T, UT, s) idiv_floor_##s(x, y)
#define E_FMOD_I(T, UT, s) ifmod_##s(x, y)
#define E_LAND(T, UT, s) ((x != 0) & (y != 0))
#define E_LOR(T, UT, s) ((x != 0) | (y != 0))
#define E_LXOR(T, UT, s) ((x != 0) ^ (y != 0))
#define E_BAND(T, UT, s) (T)(x & y)
#define E_BOR(T, UT, s) (T)(x | y)
#define E_BXOR(T, UT, s) (T)(x ^ y)
/* Shifts: computed in UT (no undefined behaviour); a count outside [0, width)
 * gives 0, or -1 for a right shift of a negative value (NumPy). */
#define WIDTH(T, UT) ((UT)(sizeof(T) * 8))
#define E_LSHIFT(T, UT, s) ((UT)y < WIDTH(T, UT) ? (T)((UT)x << ((UT)y & (WIDTH(T, UT) - 1))) : (T)0)
#define E_RSHIFT(T, UT, s) \
    ((UT)y < WIDTH(T, UT) ? (T)(x >> ((UT)y & (WIDTH(T, UT) - 1))) : (x < 0 ? (T)-1 : (T)0))
/* NaN-propagating maximum then minimum (a NaN x or bound wins, as in
 * elemwise_kernels.c's E_MAX / E_MIN). */
#define CLIP_LO(x, y) ((x > y || x != x) ? x : y)
#define E_CLIP(T, UT, s) (CLIP_LO(x, y) < z || CLIP_LO(x, y) != CLIP_LO(x, y) ? CLIP_LO(x, y) : z)
/* float16: NumPy's half loop compares with >= and <= (npy_half_ge/le), so
 * a bound equal to x keeps x's zero: clip(-0.0, 0.0, 1) is -0.0 there. */
#define CLIP_LO_H(x, y) ((x >= y || x != x) ? x : y)
#define E_CLIP_H(T, UT, s) \
    (CLIP_LO_H(x, y) <= z || CLIP_LO_H(x, y) != CLIP_LO_H(x, y) ? CLIP_LO_H(x, y) : z)

/* ---- kernels -------------------------------------------------------------------- */

FLOAT_TYPES(GEN_UN, k_floor, E_FLOOR)
FLOAT_TYPES(GEN_UN, k_ceil, E_CEIL)
FLOAT_TYPES(GEN_UN, k_trunc, E_TRUNC)
FLOAT_TYPES(GEN_UN, k_rint, E_RINT)
INT_TYPES(GEN_UN, k_same, E_SAME)
BOOL_TYPES(GEN_UN, k_same, E_SAME)
FLOAT_TYPES(GEN_UN, k_nan_to_num, E_NAN_TO_NUM)

FLOAT_TYPES(GEN_UN_BOOL, k_isnan, E_ISNAN_F)
FLOAT_TYPES(GEN_UN_BOOL, k_isinf, E_ISINF_F)
FLOAT_TYPES(GEN_UN_BOOL, k_isfinite, E_ISFINITE_F)
INT_TYPES(GEN_UN_BOOL, k_false, E_FALSE)
BOOL_TYPES(GEN_UN_BOOL, k_false, E_FALSE)
INT_TYPES(GEN_UN_BOOL, k_true, E_TRUE)
BOOL_TYPES(GEN_UN_BOOL, k_true, E_TRUE)
INT_TYPES(GEN_UN_BOOL, k_lnot, E_LNOT)
FLOAT_TYPES(GEN_UN_BOOL, k_lnot, E_LNOT)
INT_TYPES(GEN_UN, k_invert, E_INVERT_I)
BOOL_TYPES(GEN_UN, k_invert, E_INVERT_B)

FLOAT_TYPES(GEN_BIN, k_mod, E_MOD_F)
INT_TYPES(GEN_BIN, k_mod, E_MOD_I)
FLOAT_TYPES(GEN_BIN, k_fdiv, E_FDIV_F)
INT_TYPES(GEN_BIN, k_fdiv, E_FDIV_I)
FLOAT_TYPES(GEN_BIN, k_fmod, E_FMOD_F)
INT_TYPES(GEN_BIN, k_fmod, E_FMOD_I)

#define ANY_TYPES(X, k, E) BOOL_TYPES(X, k, E) INT_TYPES(X, k, E) FLOAT_TYPES(X, k, E)
#define BITS_TYPES(X, k, E) BOOL_TYPES(X, k, E) INT_TYPES(X, k, E)
#define NUM_TYPES(X, k, E) INT_TYPES(X, k, E) FLOAT_TYPES(X, k, E)

ANY_TYPES(GEN_BIN_BOOL, k_land, E_LAND)
ANY_TYPES(GEN_BIN_BOOL, k_lor, E_LOR)
ANY_TYPES(GEN_BIN_BOOL, k_lxor, E_LXOR)
BITS_TYPES(GEN_BIN, k_band, E_BAND)
BITS_TYPES(GEN_BIN, k_bor, E_BOR)
BITS_TYPES(GEN_BIN, k_bxor, E_BXOR)
INT_TYPES(GEN_BIN, k_lshift, E_LSHIFT)
INT_TYPES(GEN_BIN, k_rshift, E_RSHIFT)
NUM_TYPES(GEN_TER, k_clip, E_CLIP)
GEN_TER(k_clip_h, E_CLIP_H, float, float, f32, WEFT_FLOAT32) /* float16's, in float32 */

/* float16: the float32 kernel through float32 scratch (weft__half_rows);
 * mask: the operands that are float16 (bit 0 the output) */
#define HALF_K(k, nop, mask)                                                     \
    static void k##_f16(size_t n, char *const *p, const int64_t *s, void *arg)    \
    {                                                                            \
        weft__half_rows(n, p, s, arg, nop, mask, k##_f32);                       \
    }
HALF_K(k_floor, 2, 3u)
HALF_K(k_ceil, 2, 3u)
HALF_K(k_trunc, 2, 3u)
HALF_K(k_rint, 2, 3u)
HALF_K(k_nan_to_num, 2, 3u)
HALF_K(k_isnan, 2, 2u)
HALF_K(k_isinf, 2, 2u)
HALF_K(k_isfinite, 2, 2u)
HALF_K(k_lnot, 2, 2u)
HALF_K(k_mod, 3, 7u)
HALF_K(k_fdiv, 3, 7u)
HALF_K(k_fmod, 3, 7u)
HALF_K(k_land, 3, 6u)
HALF_K(k_lor, 3, 6u)
HALF_K(k_lxor, 3, 6u)
HALF_K(k_clip_h, 4, 15u)

/* ---- dispatch ------------------------------------------------------------------- */

#define ROW(LIST, k) {LIST(ENTRY, k, _)}

static const weft__row_fn kernels[WEFT_ELEMWISE_KIND_COUNT][WEFT_DTYPE_COUNT] = {
    [WEFT_ELEMWISE_ABS] = ROW(BOOL_TYPES, k_same),
    [WEFT_ELEMWISE_FLOOR] = {FLOAT_TYPES(ENTRY, k_floor, _)[WEFT_FLOAT16] = k_floor_f16,},
    [WEFT_ELEMWISE_CEIL] = {FLOAT_TYPES(ENTRY, k_ceil, _)[WEFT_FLOAT16] = k_ceil_f16,},
    [WEFT_ELEMWISE_TRUNC] = {FLOAT_TYPES(ENTRY, k_trunc, _)[WEFT_FLOAT16] = k_trunc_f16,},
    [WEFT_ELEMWISE_ROUND] = {FLOAT_TYPES(ENTRY, k_rint, _)[WEFT_FLOAT16] = k_rint_f16, INT_TYPES(ENTRY, k_same, _)},
    [WEFT_ELEMWISE_RINT] = {FLOAT_TYPES(ENTRY, k_rint, _)[WEFT_FLOAT16] = k_rint_f16,},
    [WEFT_ELEMWISE_ISNAN] = {FLOAT_TYPES(ENTRY, k_isnan, _)[WEFT_FLOAT16] = k_isnan_f16, BITS_TYPES(ENTRY, k_false, _)},
    [WEFT_ELEMWISE_ISINF] = {FLOAT_TYPES(ENTRY, k_isinf, _)[WEFT_FLOAT16] = k_isinf_f16, BITS_TYPES(ENTRY, k_false, _)},
    [WEFT_ELEMWISE_ISFINITE] = {FLOAT_TYPES(ENTRY, k_isfinite, _)[WEFT_FLOAT16] = k_isfinite_f16, BITS_TYPES(ENTRY, k_true, _)},
    [WEFT_ELEMWISE_LOGICAL_NOT] = {NUM_TYPES(ENTRY, k_lnot, _)[WEFT_FLOAT16] = k_lnot_f16,
                                       BOOL_TYPES(ENTRY, k_invert, _)},
    [WEFT_ELEMWISE_INVERT] = ROW(BITS_TYPES, k_invert),
    [WEFT_ELEMWISE_NAN_TO_NUM] = {FLOAT_TYPES(ENTRY, k_nan_to_num, _)[WEFT_FLOAT16] = k_nan_to_num_f16,
                                      BITS_TYPES(ENTRY, k_same, _)},
    [WEFT_ELEMWISE_MOD] = {NUM_TYPES(ENTRY, k_mod, _)[WEFT_FLOAT16] = k_mod_f16,},
    [WEFT_ELEMWISE_FLOOR_DIVIDE] = {NUM_TYPES(ENTRY, k_fdiv, _)[WEFT_FLOAT16] = k_fdiv_f16,},
    [WEFT_ELEMWISE_FMOD] = {NUM_TYPES(ENTRY, k_fmod, _)[WEFT_FLOAT16] = k_fmod_f16,},
    [WEFT_ELEMWISE_LOGICAL_AND] = {ANY_TYPES(ENTRY, k_land, _)[WEFT_FLOAT16] = k_land_f16,},
    [WEFT_ELEMWISE_LOGICAL_OR] = {ANY_TYPES(ENTRY, k_lor, _)[WEFT_FLOAT16] = k_lor_f16,},
    [WEFT_ELEMWISE_LOGICAL_XOR] = {ANY_TYPES(ENTRY, k_lxor, _)[WEFT_FLOAT16] = k_lxor_f16,},
    [WEFT_ELEMWISE_BITWISE_AND] = ROW(BITS_TYPES, k_band),
    [WEFT_ELEMWISE_BITWISE_OR] = ROW(BITS_TYPES, k_bor),
    [WEFT_ELEMWISE_BITWISE_XOR] = ROW(BITS_TYPES, k_bxor),
    [WEFT_ELEMWISE_LEFT_SHIFT] = ROW(INT_TYPES, k_lshift),
    [WEFT_ELEMWISE_RIGHT_SHIFT] = ROW(INT_TYPES, k_rshift),
    [WEFT_ELEMWISE_CLIP] = {NUM_TYPES(ENTRY, k_clip, _)[WEFT_FLOAT16] = k_clip_h_f16,},
};

weft__row_fn weft__elemwise_int_kernel(weft_elemwise_kind_t kind, weft_dtype_t dt)
{
    if ((unsigned)kind >= WEFT_ELEMWISE_KIND_COUNT || (unsigned)dt >= WEFT_DTYPE_COUNT)
        return NULL;
    return kernels[kind][dt];
}
