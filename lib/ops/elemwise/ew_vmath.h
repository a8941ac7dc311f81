/* Branch-free expm1, atan2 and tanh for the elementwise kernels
 * (elemwise_math_kernels.c: Expm1, Arctan2; elemwise_kernels.c: Tanh):
 * straight-line code, every case a select, so GCC -O3 vectorizes the
 * kernel loops that call them (libm's scalar calls cost about 10-15 ns an
 * element). atan2 is within 2 ulp of the true value, expm1 within 1, tanh
 * within 0.75, specials (+-0, +-inf, NaN, subnormals, the overflow
 * threshold) included (tests/ops/test_elemwise_math.c checks >= 10^6
 * inputs against libm, tests/ops/test_vmath_expm1.c and test_vmath_tanh.c
 * dense sweeps). The including files are built with -ffp-contract=off, so
 * every ISA clone computes the same IEEE operations and gives the same bits
 * (test_vmath_clones.c); the polynomials use explicit fma(), exactly
 * rounded everywhere (one instruction in the x86-64-v3/v4 clones, glibc's
 * fma in the default one), which halves their operations.
 * float32 computes in float64 and rounds once at the end: atan2 through
 * vm_atan2 (at most 0.5 ulp of float32 more), tanh through vm_tanh, expm1
 * through the shorter vm_expm1f. */
#ifndef WEFT_OPS_EW_VMATH_H
#define WEFT_OPS_EW_VMATH_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* The two entry points are inlined into every loop (a row kernel has four
 * loops per ISA clone; GCC would otherwise call one scalar copy from some). */
#if defined(__GNUC__)
#define VM_INLINE static inline __attribute__((always_inline))
#else
#define VM_INLINE static inline
#endif

static inline double vm_from_bits(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static inline uint64_t vm_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

/* c ? a : b as bit operations: a ternary on a clamped input lets GCC thread
 * the clamp's constants into separate branches, and then the loop no longer
 * vectorizes (seen with the AVX2 clone). */
static inline double vm_select(bool c, double a, double b)
{
    uint64_t m = (uint64_t)0 - (uint64_t)c;
    return vm_from_bits((vm_bits(a) & m) | (vm_bits(b) & ~m));
}

/* ---- expm1 ---------------------------------------------------------------------------
 * Cody and Waite's reduction x = k ln2 + r, |r| <= ln2/2, with ln2 split in
 * fdlibm's ln2_hi (32 significant bits, so k ln2_hi and x - k ln2_hi are
 * exact) and ln2_lo; r is kept as r + r_lo. expm1(r) = r + r^2 q(r) with q
 * a polynomial fit (below), by Horner's rule in fma.
 * Then expm1(x) = (t - 1) + t expm1(r), t = 2^k, summed as
 * s + e = (t - 1) + t r exactly (Fast2Sum, with the exact product inside
 * fma: |t - 1| >= |t r| for every k) plus t (r^2 q + r_lo (1 + r)), so the
 * result is rounded about once (at most 0.9 ulp from expm1 over the whole
 * domain, tests/ops/test_vmath_expm1.c).
 * t - 1 is exact for k <= 53 only (2^54 - 1 rounds to 2^54, an error of
 * half an ulp of the result), and 2^1024 overflows for x in
 * (709.44, 709.78]. Both go away above x = 37 (k >= 53): there the sum is
 * formed at half scale, t = 2^(k-1) with the -1/2 moved from t - 1/2 into
 * the small error term e, and doubled at the end (exact, or the overflow to
 * inf that expm1 itself has). Three selects on one compare; the alternative
 * of a two-sum error for t - 1 and a separate scale for k = 1024 costs more
 * operations.
 * Clamping x to [-40, 710] keeps k in [-58, 1024] and gives the right
 * limits: expm1(x < -40) rounds to -1, expm1(x > 709.79) overflows to inf.
 * A NaN x fails both clamps and stays NaN through the arithmetic (its k is
 * garbage but only ever bits). */
#define VM_INV_LN2 1.44269504088896338700e+00
#define VM_LN2_HI 6.93147180369123816490e-01 /* 0x3fe62e42fee00000 */
#define VM_LN2_LO 1.90821492927058770002e-10
#define VM_ROUND_SHIFT 0x1.8p52 /* adding it rounds to an integer in the low bits */
#define VM_EXPM1_HALF_SCALE 37.0 /* k >= 53 above it */

/* c[0] r^(n-1) + ... + c[n-1] by Horner's rule in fma (a constant n: the
 * loop unrolls into straight code) */
static inline double vm_horner(double r, const double *c, int n)
{
    double p = c[0];
    for (int i = 1; i < n; i++) p = fma(p, r, c[i]);
    return p;
}

/* (e^r - 1 - r)/r^2 for |r| <= ln2/2: the Chebyshev fit of degree 10
 * (error below 0.01 ulp of expm1(r) with these rounded coefficients; degree
 * 9 would leave about 0.2 ulp), highest degree first. */
static const double vm_expm1_q[11] = {
    2.09146793765839349e-09, 2.51052063739570109e-08, 2.75572736613486373e-07,
    2.75572554257464351e-06, 2.48015873255333634e-05, 1.98412698748004929e-04,
    1.38888888888837525e-03, 8.33333333332614105e-03, 4.16666666666666713e-02,
    1.66666666666666713e-01, 5.00000000000000000e-01};

/* expm1(xc) for xc in [-40, 710], unrounded: returns s with *lo the rest,
 * expm1(xc) = (s + *lo) * *m (*m 2 at half scale, else 1). vm_expm1 rounds
 * the sum, vm_tanh keeps the pair. */
VM_INLINE double vm_expm1_core(double xc, double *lo_out, double *m)
{
    /* k = round(x / ln2) in the low bits of z */
    double z = fma(xc, VM_INV_LN2, VM_ROUND_SHIFT);
    double kd = z - VM_ROUND_SHIFT;
    bool half = xc > VM_EXPM1_HALF_SCALE;
    /* t = 2^k, or 2^(k-1) at half scale: k << 52 is z's bits << 52 (the
     * shift's own bits leave the word), added to the exponent of 1 or 1/2 */
    double t = vm_from_bits((vm_bits(z) << 52) + vm_bits(vm_select(half, 0.5, 1.0)));
    double y = fma(-kd, VM_LN2_HI, xc); /* exact */
    double r = fma(-kd, VM_LN2_LO, y);
    double r_lo = fma(-kd, VM_LN2_LO, y - r);
    /* expm1(r + r_lo) - r */
    double lo = fma(r * r, vm_horner(r, vm_expm1_q, 11), fma(r_lo, r, r_lo));
    double u = t - vm_select(half, 0.0, 1.0);                   /* exact */
    double s = fma(t, r, u);
    double e = fma(t, r, u - s) - vm_select(half, 0.5, 0.0); /* s + e = u + t r (- 1/2) */
    *lo_out = fma(t, lo, e);
    *m = vm_select(half, 2.0, 1.0);
    return s;
}

VM_INLINE double vm_expm1(double x)
{
    double xc = vm_select(x < -40.0, -40.0, vm_select(x > 710.0, 710.0, x)), lo, m;
    double s = vm_expm1_core(xc, &lo, &m);
    /* expm1 keeps x's sign, so -0 stays -0 (a select on x == 0 would not
     * vectorize in the AVX2 clone) */
    return copysign((s + lo) * m, x);
}

/* ---- expm1 for float32 ----------------------------------------------------------------
 * In float64 with the reduction above, but without its care, which float32
 * does not need: ln2 in one double (|k| <= 145 here, so r is within 2^-48
 * of x - k ln2), a degree-6 fit, and (t - 1) + t expm1(r) in one fma,
 * whose exact product leaves one rounding (t - 1 rounds only for k >= 54,
 * 2^-54 relative). The float64 result is within 2^-34 of expm1(x)
 * relative, so rounding it to float32 gives at most 0.51 ulp (every
 * float32 result is finite in float64: no half scale). Clamping to
 * [-40, 100] keeps k in [-58, 145]; above 88.73 the float32 result
 * overflows to inf. About half the operations of vm_expm1. */
#define VM_LN2 6.93147180559945286227e-01

/* (e^r - 1 - r)/r^2 for |r| <= ln2/2: the Chebyshev fit of degree 6
 * (relative error of r + r^2 q below 2^-36), highest degree first */
static const double vm_expm1f_q[7] = {2.48595783333601008e-05, 1.98992740694345452e-04,
                                      1.38888540494818183e-03, 8.33329848362182775e-03,
                                      4.16666667189811435e-02, 1.66666667189978079e-01,
                                      5.00000000000000000e-01};

VM_INLINE float vm_expm1f(float xf)
{
    double x = xf;
    double xc = vm_select(x < -40.0, -40.0, vm_select(x > 100.0, 100.0, x));
    double z = fma(xc, VM_INV_LN2, VM_ROUND_SHIFT);
    double kd = z - VM_ROUND_SHIFT;
    double t = vm_from_bits((vm_bits(z) << 52) + vm_bits(1.0)); /* 2^k */
    double r = fma(-kd, VM_LN2, xc);
    double res = fma(t, fma(r * r, vm_horner(r, vm_expm1f_q, 7), r), t - 1.0);
    /* -0 stays -0, as in vm_expm1 */
    return copysignf((float)res, xf);
}

/* ---- atan2 ---------------------------------------------------------------------------
 * z = |y|/|x| is reduced to |t| <= 1/2 with three cases only (fewer
 * compares and selects than fdlibm's five, s_atan.c): atan(z) = atan(t)
 * with t = z for z < 1/2, pi/4 + atan(t) with t = (|y| - |x|)/(|y| + |x|)
 * for z in [1/2, 2] (the numerator exact by Sterbenz's lemma, so t is
 * rounded twice), pi/2 + atan(t) with t = -|x|/|y| above 2; one division,
 * and the two constants split hi + lo. atan(t) = t - t z p(z), z = t^2,
 * p a degree-12 fit (below). The quadrant as fdlibm's e_atan2.c: pi - a
 * for a negative (or -0) x, then y's sign. One select instead of its
 * special-case branches: the NaN quotient of 0/0 and inf/inf becomes 0
 * (giving +-0, +-pi, +-pi/4, +-3pi/4 as C99 Annex F), and operands above 2^1000 are
 * scaled by 2^-8 so |x| + |y| cannot overflow (subnormal operands need no
 * scaling: their sums, differences and 2|x| are exact). */
#define VM_ATAN_HI_2 7.85398163397448278999e-01 /* atan(1) */
#define VM_ATAN_HI_4 1.57079632679489655800e+00 /* atan(inf) */
#define VM_ATAN_LO_2 3.06161699786838301793e-17
#define VM_ATAN_LO_4 6.12323399573676603587e-17
#define VM_PI_HI 3.14159265358979311600e+00
#define VM_PI_LO 1.2246467991473531772e-16

/* t z p(t^2) for |t| <= 1/2, z = t^2: atan(t) = t - this. p is the
 * Chebyshev fit of degree 12 to (t - atan(t)) / t^3 on z in [0, 1/4]
 * (relative error of t - t z p below 0.05 ulp with these rounded
 * coefficients), evaluated as fdlibm does in two halves in w = z^2. */
static inline double vm_atan_poly(double t)
{
    double z = t * t, w = z * z;
    double s1 = fma(w, 9.21579204708985848e-03, 3.80665367205736613e-02);
    s1 = fma(w, s1, 5.24009950799471311e-02);
    s1 = fma(w, s1, 6.66643567723594760e-02);
    s1 = fma(w, s1, 9.09090862032252284e-02);
    s1 = fma(w, s1, 1.42857142855991881e-01);
    s1 = fma(w, s1, 3.33333333333333315e-01);
    double s2 = fma(w, -2.50065035664895075e-02, -4.62802486857015333e-02);
    s2 = fma(w, s2, -5.87957842958242508e-02);
    s2 = fma(w, s2, -7.69229471254028463e-02);
    s2 = fma(w, s2, -1.11111111009173757e-01);
    s2 = fma(w, s2, -1.99999999999994876e-01);
    return t * fma(z, s1, w * s2);
}

VM_INLINE double vm_atan2(double y, double x)
{
    double ax = fabs(x), ay = fabs(y);
    /* above 2^1000 both are scaled by 2^-8, so |x| + |y| cannot overflow */
    double m = ax > ay ? ax : ay;
    double scale = vm_select(m > 0x1p1000, 0x1p-8, 1.0);
    ax *= scale;
    ay *= scale;
    /* the three cases; 2|y| and 2|x| are exact (an overflow to inf still
     * compares right), where 0.5|x| would round a subnormal to 0 */
    /* (two zeros take case 0, two infinities case 1: their quotient is
     * replaced below) */
    bool gb = (ay + ay > ax) | (ay == INFINITY), gd = ay > ax + ax;
    double hi = vm_select(gd, VM_ATAN_HI_4, vm_select(gb, VM_ATAN_HI_2, 0.0));
    double lo = vm_select(gd, VM_ATAN_LO_4, vm_select(gb, VM_ATAN_LO_2, 0.0));
    double num = vm_select(gd, -ax, vm_select(gb, ay - ax, ay));
    double den = vm_select(gd, ay, vm_select(gb, ay + ax, ax));
    double t = num / den;
    /* 0/0 (both zero, case 1) and inf/inf (both infinite, case 2) are the
     * only NaN quotients of non-NaN operands: t = 0 there gives +-0, +-pi,
     * +-pi/4 and +-3pi/4 as C99 Annex F */
    bool nan_in = (x != x) | (y != y);
    t = vm_select((t != t) & !nan_in, 0.0, t);
    double e = (vm_atan_poly(t) - lo) - t; /* atan(|y|/|x|) = hi - e */
    /* x < 0 or -0: pi - (hi - e), summed as (pi_hi - hi) + (pi_lo + e) so the
     * small part is not rounded away first (pi_hi - pi/2_hi is exact: x = -0
     * or y = +-inf beside a finite x gives pi/2 exactly) */
    bool neg_x = (int64_t)vm_bits(x) < 0; /* signbit(x), which does not vectorize */
    double a = vm_select(neg_x, (VM_PI_HI - hi) + (VM_PI_LO + e), hi - e);
    return copysign(a, y);
}

/* ---- tanh ------------------------------------------------------------------------------
 * tanh|x| = E / (E + 2) with E = expm1(2|x|) (2|x| exact). E comes as the
 * unrounded pair of vm_expm1's last sum (vm_expm1_core), renormalized
 * to S + L with |L| <= ulp(S) / 2, E + 2 as
 * hi + lo exactly (TwoSum), and the quotient S / hi is corrected once by
 * its remainder (fma(-q, hi, S) is exact): within 0.72 ulp over the
 * test's sweeps, where rounding E first cost up to 1.47 ulp near |x| = 0.03
 * (the quotient passes E's error on with the factor 2 / (E + 2), 1 near 0)
 * (tests/ops/test_vmath_tanh.c). glibc's scalar tanh, called per element,
 * cost about 15 ns an element and kept the loop from vectorizing: the
 * largest share of an RNN step. |x| > 20 gives 1 (tanh(20) is 1 - 8.5e-18,
 * which rounds to 1) and keeps E finite; NaN passes through (the compare is
 * false), -0 stays -0, infinities give +-1. */

VM_INLINE double vm_tanh(double x)
{
    double ax = fabs(x), L0, m;
    double S0 = vm_expm1_core(vm_select(ax > 20.0, 40.0, ax + ax), &L0, &m);
    S0 *= m; /* exact: m is 1 or 2 */
    L0 *= m;
    /* S + L = S0 + L0 with |L| <= ulp(S) / 2 (TwoSum: L0 is not small) */
    double S = S0 + L0;
    double c = S - S0;
    double L = (S0 - (S - c)) + (L0 - c);
    double hi = S + 2.0;
    double b = hi - S;
    double lo = (S - (hi - b)) + (2.0 - b) + L; /* hi + lo = S + L + 2 */
    double q = S / hi;
    double r = fma(-q, hi, S) + (L - q * lo); /* (S + L) - q (hi + lo) */
    return copysign(q + r / hi, x);
}

#endif /* WEFT_OPS_EW_VMATH_H */
