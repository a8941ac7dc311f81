/* Shared by the accuracy tests of ew_vmath.h's kernels (test_vmath_expm1.c,
 * test_vmath_tanh.c): a seeded xorshift64 stream, errors in ulps against a
 * long double reference, and the worst error over a generated sweep. */
#ifndef WEFT_TESTS_VMATH_CHECK_H
#define WEFT_TESTS_VMATH_CHECK_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

static uint64_t next_u64(uint64_t *s) /* xorshift64 */
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static double unit(uint64_t *s)
{
    return (double)(next_u64(s) >> 11) * 0x1p-53;
}

/* |got - want| in ulps of want's binade at `bits` significand bits, the
 * subnormal ulp below 2^min_exp (float64: 53, -1021; float32: 24, -125) */
static double ulps_off(long double want, long double got, int bits, int min_exp)
{
    int e;
    frexpl(want, &e);
    long double ulp = ldexpl(1.0L, (e < min_exp ? min_exp : e) - bits);
    return (double)(fabsl(got - want) / ulp);
}

typedef double (*vmath_gen_fn)(size_t i, uint64_t *s);

/* The worst float64 error of f against ref over n inputs from gen (a NaN
 * error counts as worst); prints it with the input. */
static double worst_of(const char *fname, const char *name, size_t n, vmath_gen_fn gen,
                       double (*f)(double), long double (*ref)(long double))
{
    uint64_t seed = 0x9e3779b97f4a7c15u;
    double worst = 0, at = 0;
    for (size_t i = 0; i < n; i++) {
        double x = gen(i, &seed), err = ulps_off(ref((long double)x), f(x), 53, -1021);
        if (!(err <= worst)) worst = err, at = x;
    }
    printf("%s %-12s max %.4f ulp (at %a)\n", fname, name, worst, at);
    return worst;
}

#endif /* WEFT_TESTS_VMATH_CHECK_H */
