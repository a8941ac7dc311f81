/* A branch-free exp for double that vectorizes (no libm call, no table):
 * used by the reduction kernels (LogSumExp) where libm's exp per element
 * costs more than the memory traffic. Private to lib/ops/reduce.
 *
 * x = k ln2 + r with k = round(x / ln2) (the 1.5*2^52 rounding trick, so k
 * comes out of the double's bits without a double->int64 conversion, which
 * AVX2 lacks), |r| <= ln2/2, r computed with a two-part ln2 (Cody-Waite);
 * exp(r) by its degree-13 Taylor polynomial (truncation below 2^-60
 * relative) in Horner form, then scaled by 2^k built from k's bits. Measured
 * error <= 2 ulp for x in [-708, 709.78] (tests/ops/test_reduce_more.c
 * checks it against libm on a sweep); below -708 (results under 3.3e-308) the result is 0 (the
 * subnormal range is flushed: LogSumExp adds these terms to a sum >= 1, where
 * they vanish anyway), above 709.78 +inf, NaN gives NaN. */
#ifndef WEFT_OPS_REDUCE_VEXP_INT_H
#define WEFT_OPS_REDUCE_VEXP_INT_H

#include <stdint.h>
#include <string.h>

static inline double weft__vexp(double x)
{
    const double shifter = 0x1.8p52, log2e = 0x1.71547652b82fep0;
    const double ln2_hi = 0x1.62e42fee00000p-1, ln2_lo = 0x1.a39ef35793c76p-33;
    /* clamp for the arithmetic; the blends below restore the limits */
    double xc = x < -708.0 ? -708.0 : x;
    xc = xc > 709.78 ? 709.78 : xc;
    double t = xc * log2e + shifter;
    double kd = t - shifter;
    uint64_t tb;
    memcpy(&tb, &t, sizeof tb);
    double r = (xc - kd * ln2_hi) - kd * ln2_lo;
    double p = 1.0 / 6227020800.0;
    p = p * r + 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    /* k = tb - bits(shifter) fits in the low bits; 2^k = (k + 1023) << 52.
     * k in [-1021, 1024]: 2^1024 is not a double, so scale by 2^(k-1) * 2. */
    uint64_t sb = (tb - UINT64_C(0x4338000000000000) + 1022u) << 52;
    double scale;
    memcpy(&scale, &sb, sizeof scale);
    double y = p * scale * 2.0;
    y = x < -708.0 ? 0.0 : y;
    y = x > 709.78 ? __builtin_inf() : y;
    return y;
}

#endif /* WEFT_OPS_REDUCE_VEXP_INT_H */
