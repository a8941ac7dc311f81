/* The accuracy of vm_tanh (lib/ops/elemwise/ew_vmath.h, the Tanh kernel)
 * against tanhl, whose long double result is exact to a small fraction of a
 * float64 ulp: at most 0.75 ulp over a dense sweep (uniform ranges around 0,
 * across the cut at |x| = 20 where the result becomes 1, magnitudes down to
 * the subnormals, random bit patterns), and the exact special values: +-0
 * with their sign, NaN, +-1 at +-inf and beyond |x| = 20, x itself for
 * |x| < 2^-30 within the same bound. float32 (rounded once from float64)
 * within 0.501 ulp of the correctly rounded tanh on every 1021st float32
 * bit pattern. Built as the kernel file is (-O3, no contraction). */
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

static double vm_tanh_fn(double x)
{
    return vm_tanh(x);
}

static double worst_over(const char *name, size_t n, vmath_gen_fn gen)
{
    return worst_of("tanh", name, n, gen, vm_tanh_fn, tanhl);
}

static double gen_small(size_t i, uint64_t *s)
{
    return (i % 2 ? 1.0 : 0.125) * (2 * unit(s) - 1);
}

static double gen_wide(size_t i, uint64_t *s)
{
    (void)i;
    return 44 * unit(s) - 22; /* across the cut at +-20 */
}

static double gen_tiny(size_t i, uint64_t *s) /* 2^-1074 .. 2^-1 */
{
    double m = ldexp(1.0 + unit(s), -(int)(1 + i % 1073));
    return i % 3 ? m : -m;
}

static double gen_bits(size_t i, uint64_t *s) /* random finite bit patterns */
{
    (void)i;
    double x;
    do {
        uint64_t u = next_u64(s);
        memcpy(&x, &u, sizeof x);
    } while (!isfinite(x));
    return x;
}

static void test_tanh_within_0_75_ulp(void **state)
{
    (void)state;
    assert_true(worst_over("small", N, gen_small) <= 0.75);
    assert_true(worst_over("wide", N, gen_wide) <= 0.75);
    assert_true(worst_over("tiny", N, gen_tiny) <= 0.75);
    assert_true(worst_over("bits", N, gen_bits) <= 0.75);
}

static void test_tanh_specials(void **state)
{
    (void)state;
    assert_true(signbit(vm_tanh(-0.0)) && vm_tanh(-0.0) == 0.0);
    assert_true(!signbit(vm_tanh(0.0)) && vm_tanh(0.0) == 0.0);
    assert_true(isnan(vm_tanh(NAN)));
    assert_true(vm_tanh(INFINITY) == 1.0 && vm_tanh(-INFINITY) == -1.0);
    assert_true(vm_tanh(20.5) == 1.0 && vm_tanh(-1e300) == -1.0 && vm_tanh(DBL_MAX) == 1.0);
    assert_true(vm_tanh(0x1p-1074) == 0x1p-1074);
    assert_true(vm_tanh(-0x1p-1022) == -0x1p-1022);
}

static void test_tanhf_rounds_once(void **state)
{
    (void)state;
    double worst = 0;
    for (uint64_t u = 0; u < (1ull << 32); u += 1021) {
        uint32_t b = (uint32_t)u;
        float x;
        memcpy(&x, &b, sizeof x);
        if (!isfinite(x)) continue;
        float got = (float)vm_tanh((double)x);
        double err = ulps_off(tanhl((long double)x), got, 24, -125);
        if (!(err <= worst)) worst = err;
    }
    printf("tanhf max %.4f ulp\n", worst);
    assert_true(worst <= 0.501);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tanh_within_0_75_ulp),
        cmocka_unit_test(test_tanh_specials),
        cmocka_unit_test(test_tanhf_rounds_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
