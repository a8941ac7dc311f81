/* Row kernels of the float math kinds (issue 17: Tan .. Nextafter, the
 * table's "float math" block), float32 and float64, from the generators of
 * ew_kernel_gen.h (the fast paths, streaming stores and ISA clones described
 * in elemwise_kernels.c).
 *
 * Most call libm, as NumPy does, so values follow its domain rules: NaN
 * outside the domain (arcsin(2), arccosh(0.5), log2(-1)), +-inf at the
 * poles (arctanh(+-1), log10(0) = -inf). Expm1 and Arctan2 are the
 * branch-free polynomials of ew_vmath.h, so their loops vectorize (libm's
 * scalar expm1/atan2 would be several times slower than NumPy's SIMD code).
 * Gammaln is log|Gamma(x)| through lgamma_r (lgamma writes the global
 * signgam: a data race between workers). Erfinv, Digamma and Trigamma are
 * ew_special.c's, Polygamma polygamma.c's. float32 kinds without a float libm function, and Expm1 /
 * Arctan2, compute in float64 and round once. */
#define _DEFAULT_SOURCE /* lgamma_r, lgammaf_r */
#include <math.h>

/* 64 lines (4 KB) ahead (ew_kernel_gen.h): with the faster Expm1 (about 6 ns
 * a line) 16 lines no longer cover the memory latency; 10^7 float64, one
 * worker, weft-ops-bench's bw_ratio 0.85 -> 0.91..0.99 over 16 alternated
 * rounds (0 lines: 0.45, 32: about 16's upper end, 128: no better than 16),
 * Arctan2 unchanged within the noise (docs/performance-notes.md) */
#define EW_PREFETCH_LINES 64
#include "ew_kernel_gen.h"
#include "ew_vmath.h"
#include "ops_int.h"

static inline float gammaln_f32(float x)
{
    int sign;
    return lgammaf_r(x, &sign);
}

static inline double gammaln_f64(double x)
{
    int sign;
    return lgamma_r(x, &sign);
}

#define VIA_F64(f, x) ((float)f((double)(x)))

FLOAT_UNARY(k_tan, tanf(x), tan(x))
FLOAT_UNARY(k_arcsin, asinf(x), asin(x))
FLOAT_UNARY(k_arccos, acosf(x), acos(x))
FLOAT_UNARY(k_arctan, atanf(x), atan(x))
FLOAT_BINARY(k_arctan2, (float)vm_atan2((double)x, (double)y), vm_atan2(x, y))
FLOAT_UNARY(k_sinh, sinhf(x), sinh(x))
FLOAT_UNARY(k_cosh, coshf(x), cosh(x))
FLOAT_UNARY(k_arcsinh, asinhf(x), asinh(x))
FLOAT_UNARY(k_arccosh, acoshf(x), acosh(x))
FLOAT_UNARY(k_arctanh, atanhf(x), atanh(x))
FLOAT_UNARY(k_exp2, exp2f(x), exp2(x))
FLOAT_UNARY(k_expm1, vm_expm1f(x), vm_expm1(x))
FLOAT_UNARY(k_log2, log2f(x), log2(x))
FLOAT_UNARY(k_log10, log10f(x), log10(x))
FLOAT_BINARY(k_hypot, hypotf(x, y), hypot(x, y))
FLOAT_UNARY(k_erf, erff(x), erf(x))
FLOAT_UNARY(k_erfc, erfcf(x), erfc(x))
FLOAT_UNARY(k_erfinv, VIA_F64(weft__erfinv, x), weft__erfinv(x))
FLOAT_UNARY(k_gammaln, gammaln_f32(x), gammaln_f64(x))
FLOAT_UNARY(k_digamma, VIA_F64(weft__digamma, x), weft__digamma(x))
FLOAT_UNARY(k_trigamma, VIA_F64(weft__trigamma, x), weft__trigamma(x))
FLOAT_BINARY(k_polygamma, (float)weft__polygamma((double)x, (double)y), weft__polygamma(x, y))
FLOAT_BINARY(k_copysign, copysignf(x, y), copysign(x, y))
FLOAT_BINARY(k_nextafter, nextafterf(x, y), nextafter(x, y))

#define MATH_KIND_ROW_(kind, k) [WEFT_ELEMWISE_##kind - WEFT_ELEMWISE_TAN] = ROW_F(k),
#define MATH_KINDS(X)                                                                        \
    X(TAN, k_tan) X(ARCSIN, k_arcsin) X(ARCCOS, k_arccos) X(ARCTAN, k_arctan)               \
    X(ARCTAN2, k_arctan2) X(SINH, k_sinh) X(COSH, k_cosh) X(ARCSINH, k_arcsinh)             \
    X(ARCCOSH, k_arccosh) X(ARCTANH, k_arctanh) X(EXP2, k_exp2) X(EXPM1, k_expm1)           \
    X(LOG2, k_log2) X(LOG10, k_log10) X(HYPOT, k_hypot) X(ERF, k_erf) X(ERFC, k_erfc)       \
    X(ERFINV, k_erfinv) X(GAMMALN, k_gammaln) X(DIGAMMA, k_digamma) X(TRIGAMMA, k_trigamma) \
    X(POLYGAMMA, k_polygamma) X(COPYSIGN, k_copysign) X(NEXTAFTER, k_nextafter)

#define N_MATH (WEFT_ELEMWISE_NEXTAFTER - WEFT_ELEMWISE_TAN + 1)
static const weft__row_fn math_kernels[N_MATH][WEFT_DTYPE_COUNT] = {MATH_KINDS(MATH_KIND_ROW_)};

weft__row_fn weft__elemwise_math_kernel(weft_elemwise_kind_t kind, weft_dtype_t dt)
{
    if (!weft__elemwise_is_math(kind) || (unsigned)dt >= WEFT_DTYPE_COUNT) return NULL;
    return math_kernels[kind - WEFT_ELEMWISE_TAN][dt];
}
