/* The branch-free Expm1, Arctan2 and Tanh of lib/ops/elemwise/ew_vmath.h give the
 * same bits in every ISA clone of the kernels (default, x86-64-v3,
 * x86-64-v4: ew_kernel_gen.h): the same loops compiled here for each ISA,
 * with the kernel file's -O3 -ffp-contract=off, over 2^20 inputs (random
 * bit patterns, the polynomial ranges, the reduction boundaries of every k,
 * Expm1's half-scale and overflow ranges and the specials), compared bit
 * for bit, float64 and Expm1's float32 path (vm_expm1f). A clone the processor cannot run is
 * skipped. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "elemwise/ew_vmath.h"

enum { N = 1 << 20 };

#if defined(__x86_64__) && defined(__GNUC__)
#define VM_X86_CLONES 1
#define LOOPS(SUFFIX, ATTR)                                                          \
    ATTR static void expm1_##SUFFIX(size_t n, double *o, const double *a)            \
    {                                                                                \
        for (size_t i = 0; i < n; i++) o[i] = vm_expm1(a[i]);                        \
    }                                                                                \
    ATTR static void expm1f_##SUFFIX(size_t n, float *o, const float *a)             \
    {                                                                                \
        for (size_t i = 0; i < n; i++) o[i] = vm_expm1f(a[i]);                       \
    }                                                                                \
    ATTR static void tanh_##SUFFIX(size_t n, double *o, const double *a)             \
    {                                                                                \
        for (size_t i = 0; i < n; i++) o[i] = vm_tanh(a[i]);                         \
    }                                                                                \
    ATTR static void atan2_##SUFFIX(size_t n, double *o, const double *a, const double *b) \
    {                                                                                \
        for (size_t i = 0; i < n; i++) o[i] = vm_atan2(a[i], b[i]);                  \
    }
LOOPS(base, )
LOOPS(v3, __attribute__((target("arch=x86-64-v3"))))
LOOPS(v4, __attribute__((target("arch=x86-64-v4"))))
#else
#define VM_X86_CLONES 0
#endif

static uint64_t next_u64(uint64_t *s) /* xorshift64 */
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static const double edges[] = {0.0,     -0.0,   INFINITY, -INFINITY, NAN,       0x1p-1074, -0x1p-1074,
                               1e-310,  0.5,    2.0,      -0.5,      -2.0,      1.0,       -1.0,
                               0x1p1000, 1e308, -1e308,   0x1p-1022, 709.78,    710.0,     -40.0,
                               -745.2,  0.34657359027997264, 0x1.fffffffffffffp1023,
                               /* expm1's half-scale switch (37) and 2^1024 range (k = 1024 above
                                * 709.436) */
                               37.0,    0x1.2000000000001p5, 0x1.1ffffffffffffp5, -37.0,
                               709.4367, 709.782712893384, 709.7827128933841, -37.42994775023704};

/* a fifth each: random bits, [-800, 800], [-3, 3], scaled copies of the
 * other operand near the boundaries 1/2, 1 and 2 of atan2's reduction, and
 * points within 2^-40 relative of expm1's reduction boundaries (k + 1/2) ln2,
 * k in [-64, 1087] (every k of the clamped range, the half-scale switch at
 * k = 53 and k = 1024 among them); the edges first */
static void fill(double *v, const double *other, uint64_t seed)
{
    for (size_t i = 0; i < N; i++) {
        uint64_t u = next_u64(&seed);
        double f = (double)(u >> 11) * 0x1p-53;
        switch (i % 5) {
        case 0: v[i] = vm_from_bits(u); break;
        case 1: v[i] = 1600 * f - 800; break;
        case 2: v[i] = 6 * f - 3; break;
        case 3:
            v[i] = other ? other[i] * ((double)(1 + u % 4) * 0.5) * (1 + (f - 0.5) * 0x1p-40) : f;
            break;
        default:
            v[i] = ((double)(int)(u % 1152) - 63.5) * 0.69314718055994530942 *
                   (1 + (f - 0.5) * 0x1p-40);
            break;
        }
    }
    size_t ne = sizeof edges / sizeof edges[0];
    for (size_t i = 0; i < ne * ne; i++) v[i] = other ? edges[i / ne] : edges[i % ne];
}

/* F's loop in the x86-64-v3 (and, with v4 set, x86-64-v4) clone gives the
 * default clone's bits: R0 and R1 are scratch outputs of N elements */
#define SAME_IN_CLONES(F, R0, R1, ...)                      \
    do {                                                    \
        F##_base(N, R0, __VA_ARGS__);                       \
        F##_v3(N, R1, __VA_ARGS__);                         \
        assert_memory_equal(R0, R1, N * sizeof *(R0));      \
        if (v4) {                                           \
            F##_v4(N, R1, __VA_ARGS__);                     \
            assert_memory_equal(R0, R1, N * sizeof *(R0));  \
        }                                                   \
    } while (0)

static void test_vmath_clones_same_bits(void **state)
{
    (void)state;
#if VM_X86_CLONES
    __builtin_cpu_init();
    bool v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"),
         v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
              __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq");
    if (!v3) skip();
    double *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b), *r0 = malloc(N * sizeof *r0),
           *r1 = malloc(N * sizeof *r1);
    assert_true(a && b && r0 && r1);
    fill(b, NULL, 3);
    fill(a, b, 7);
    SAME_IN_CLONES(expm1, r0, r1, a);
    /* float32 Expm1 (vm_expm1f) */
    float *af = malloc(N * sizeof *af), *f0 = malloc(N * sizeof *f0), *f1 = malloc(N * sizeof *f1);
    assert_true(af && f0 && f1);
    for (size_t i = 0; i < N; i++) af[i] = (float)a[i];
    SAME_IN_CLONES(expm1f, f0, f1, af);
    free(af);
    free(f0);
    free(f1);
    SAME_IN_CLONES(atan2, r0, r1, a, b);
    /* Tanh (vm_tanh) over the same inputs and over [-22, 22] */
    SAME_IN_CLONES(tanh, r0, r1, a);
    for (size_t i = 0; i < N; i++) b[i] = -22.0 + 44.0 * (double)i / N;
    SAME_IN_CLONES(tanh, r0, r1, b);
    free(a);
    free(b);
    free(r0);
    free(r1);
#else
    skip();
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_vmath_clones_same_bits)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
