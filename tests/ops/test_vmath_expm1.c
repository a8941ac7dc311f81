/* The accuracy of vm_expm1 (lib/ops/elemwise/ew_vmath.h, the Expm1 kernel)
 * against expm1l, whose long double result is exact to a small fraction of
 * a float64 ulp: at most 1 ulp over a dense sweep of the domain (uniform
 * ranges, both sides of every reduction boundary (k + 1/2) ln2 of the
 * clamped range, the half-scale switch at 37, the k = 1024 range below the
 * overflow threshold, magnitudes down to the subnormals, random bit
 * patterns), and the exact special values: +-0 with their sign, NaN,
 * -1 for x <= -40 and -inf, inf above 709.7827128933841 and at +inf,
 * x itself for |x| < 2^-54. The same for vm_expm1f (float32): within
 * 0.501 ulp of the correctly rounded expm1 on every 1021st float32 bit
 * pattern (all 2^32 gave 0.5002 at most when measured once). Built as the
 * kernel file is (-O3, no contraction); test_vmath_clones.c checks that
 * every ISA clone gives these bits. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "elemwise/ew_vmath.h"
#include "vmath_check.h"

enum { N = 1 << 20 };

#define LN2 0.69314718055994530942

static double vm_expm1_fn(double x)
{
    return vm_expm1(x);
}

static double worst_over(const char *name, size_t n, vmath_gen_fn gen)
{
    return worst_of("expm1", name, n, gen, vm_expm1_fn, expm1l);
}

static double gen_wide(size_t i, uint64_t *s)
{
    (void)i;
    return -45 + 754.78 * unit(s); /* [-45, 709.78) */
}

static double gen_small(size_t i, uint64_t *s)
{
    double w = i % 2 ? 2.0 : 0.75; /* k in {-3..3}, and k = 0 and +-1 */
    return w * (2 * unit(s) - 1);
}

/* within 2^-30 relative of (k + 1/2) ln2, k in [-60, 1023]: both sides of
 * every boundary (the last ones lie in the k = 1024 range) */
static double gen_boundary(size_t i, uint64_t *s)
{
    double k = (double)(int)(i % 1084) - 60;
    return (k + 0.5) * LN2 * (1 + (unit(s) - 0.5) * 0x1p-30);
}

/* the half-scale switch and the top: [36, 38] and [709.43, 709.7827] */
static double gen_switch(size_t i, uint64_t *s)
{
    return i % 2 ? 36 + 2 * unit(s) : 709.43 + 0.3527128933 * unit(s);
}

/* every magnitude from 2^-1074 to 2^5, either sign */
static double gen_magnitude(size_t i, uint64_t *s)
{
    double m = ldexp(1 + unit(s), -(int)(next_u64(s) % 1080));
    return i % 2 ? -m : m;
}

/* random bit patterns of finite values below the overflow threshold */
static double gen_bits(size_t i, uint64_t *s)
{
    (void)i;
    double x = vm_from_bits(next_u64(s));
    return isfinite(x) && x < 709.78 ? x : 1.0;
}

static void test_expm1_within_1_ulp(void **state)
{
    (void)state;
    assert_true(worst_over("[-45,709.78]", N, gen_wide) <= 1.0);
    assert_true(worst_over("[-2,2]", N, gen_small) <= 1.0);
    assert_true(worst_over("boundaries", N, gen_boundary) <= 1.0);
    assert_true(worst_over("37, 709.4+", N, gen_switch) <= 1.0);
    assert_true(worst_over("magnitudes", N, gen_magnitude) <= 1.0);
    assert_true(worst_over("bits", N, gen_bits) <= 1.0);
}

static void assert_same(double x, double want)
{
    double got = vm_expm1(x);
    if (isnan(want)) {
        assert_true(isnan(got));
        return;
    }
    if (got != want || signbit(got) != signbit(want)) {
        printf("expm1(%a) = %a, want %a\n", x, got, want);
        fail();
    }
}

static void test_expm1_specials(void **state)
{
    (void)state;
    assert_same(0.0, 0.0);
    assert_same(-0.0, -0.0);
    assert_same(NAN, NAN);
    assert_same(-NAN, NAN);
    assert_same(INFINITY, INFINITY);
    assert_same(-INFINITY, -1.0);
    assert_same(-40.0, -1.0);
    assert_same(-745.2, -1.0);
    assert_same(-DBL_MAX, -1.0);
    assert_same(709.7827128933841, INFINITY); /* the first double above ln(DBL_MAX) */
    assert_same(710.0, INFINITY);
    assert_same(DBL_MAX, INFINITY);
    assert_same(709.782712893384, 0x1.fffffffffff2ap+1023); /* the last finite one */
    /* |x| < 2^-54: expm1(x) rounds to x, subnormals included */
    const double tiny[] = {0x1p-1074, 0x1.8p-1073, 1e-310, 0x1p-1022, 0x1.fffffffffffffp-1022,
                           0x1.2345p-600, 0x1.fffffffffffffp-55};
    for (size_t i = 0; i < sizeof tiny / sizeof tiny[0]; i++) {
        assert_same(tiny[i], tiny[i]);
        assert_same(-tiny[i], -tiny[i]);
    }
}

/* vm_expm1f on every 1021st float32 bit pattern (a prime stride: every
 * exponent, both signs, NaNs and infinities): within 0.501 ulp of
 * expm1l, the specials exact */
static void test_expm1f_within_half_ulp(void **state)
{
    (void)state;
    double worst = 0;
    float at = 0;
    for (uint64_t u = 0; u < (UINT64_C(1) << 32); u += 1021) {
        uint32_t w = (uint32_t)u;
        float x, got;
        memcpy(&x, &w, sizeof x);
        got = vm_expm1f(x);
        long double want = expm1l((long double)x);
        if (isnan(x) || isinf((float)want)) {
            assert_true(isnan(x) ? isnan(got) : got == (float)want);
            continue;
        }
        assert_true(isfinite(got));
        if (got == 0.0f) assert_true(signbit(got) == signbit(x)); /* +-0 keep their sign */
        double err = ulps_off(want, got, 24, -125);
        if (!(err <= worst)) worst = err, at = x;
    }
    printf("expm1f sampled       max %.4f ulp (at %a)\n", worst, (double)at);
    assert_true(worst <= 0.501);
    assert_true(vm_expm1f(-INFINITY) == -1.0f && vm_expm1f(-40.0f) == -1.0f);
    assert_true(vm_expm1f(88.7228394f) == INFINITY && vm_expm1f(INFINITY) == INFINITY);
    assert_true(isfinite(vm_expm1f(88.7228316f)));
    assert_true(signbit(vm_expm1f(-0.0f)) && vm_expm1f(-0.0f) == 0.0f);
    assert_true(vm_expm1f(0x1p-149f) == 0x1p-149f && vm_expm1f(-0x1p-149f) == -0x1p-149f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_expm1_within_1_ulp),
                                       cmocka_unit_test(test_expm1_specials),
                                       cmocka_unit_test(test_expm1f_within_half_ulp)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
