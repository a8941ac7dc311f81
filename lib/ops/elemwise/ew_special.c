/* Special functions that libm lacks, for the Erfinv, Digamma and Trigamma
 * kinds (ops_int.h): float64, scalar (the kernels call them per element;
 * float32 goes through float64 and rounds once).
 *
 * erfinv: M. Giles, "Approximating the erfinv function" (GPU Computing Gems
 * Jade, 2010), its single-precision polynomial as the first guess, then two
 * Halley steps on erf(y) = |x| (cubic convergence: ~1e-7 -> below 1e-16).
 * The residual uses erf for |x| <= 1/2 and erfc above, where 1 - |x| is
 * exact, so it keeps its digits up to |x| = 1 - 2^-53.
 *
 * digamma and trigamma: the recurrences psi(x) = psi(x + 1) - 1/x and
 * psi1(x) = psi1(x + 1) + 1/x^2 up to x >= 10, then the asymptotic (Stirling)
 * series with Bernoulli numbers B2..B14 (digamma) and B2..B16 (trigamma),
 * whose first omitted term is below 3e-17 relative at x = 10 (Abramowitz and
 * Stegun 6.3.18, 6.4.12); for x <= 0 the reflection formulas
 * psi(x) = psi(1 - x) - pi cot(pi x) and psi1(x) = pi^2 / sin^2(pi x) -
 * psi1(1 - x) (A&S 6.3.7, 6.4.7), with pi x reduced to (-pi/2, pi/2] first
 * (x - round(x) is exact) so large |x| loses nothing there. Near digamma's
 * positive root (1.4616...) the relative error grows as the value goes to 0,
 * as for any method summing terms of both signs. */
#include <math.h>

#include "ops_int.h"

#define SQRT_PI_2 0.88622692545275801365 /* sqrt(pi) / 2 */
#define PI 3.14159265358979323846

/* Giles (2010), single precision: erfinv(a) ~ a p(w), w = -log(1 - a^2). */
static double erfinv_guess(double a)
{
    double w = a < 0.5 ? -log1p(-a * a) : -log((1.0 - a) * (1.0 + a)), p;
    if (w < 5.0) {
        w -= 2.5;
        p = 2.81022636e-08;
        p = 3.43273939e-07 + p * w;
        p = -3.5233877e-06 + p * w;
        p = -4.39150654e-06 + p * w;
        p = 0.00021858087 + p * w;
        p = -0.00125372503 + p * w;
        p = -0.00417768164 + p * w;
        p = 0.246640727 + p * w;
        p = 1.50140941 + p * w;
    } else {
        w = sqrt(w) - 3.0;
        p = -0.000200214257;
        p = 0.000100950558 + p * w;
        p = 0.00134934322 + p * w;
        p = -0.00367342844 + p * w;
        p = 0.00573950773 + p * w;
        p = -0.0076224613 + p * w;
        p = 0.00943887047 + p * w;
        p = 1.00167406 + p * w;
        p = 2.83297682 + p * w;
    }
    return p * a;
}

double weft__erfinv(double x)
{
    double a = fabs(x);
    if (isnan(x)) return x;
    if (a > 1.0) return NAN;
    if (a == 1.0) return copysign(INFINITY, x);
    if (a == 0.0) return x; /* keeps -0 */
    double y = erfinv_guess(a);
    for (int it = 0; it < 2; it++) {
        double r = a <= 0.5 ? erf(y) - a : (1.0 - a) - erfc(y); /* erf(y) - a */
        double u = r / (exp(-y * y) / SQRT_PI_2);               /* r / erf'(y) */
        y -= u / (1.0 + y * u);                                 /* Halley: erf'' = -2y erf' */
    }
    return copysign(y, x);
}

/* pi cot(pi r) for r in [-1/2, 1/2], r != 0: near +-1/2 as pi tan(pi (1/2 -
 * |r|)) (1/2 - |r| exact there), so cot(pi/2) is 0 and not 6e-17. */
static double pi_cot_pi(double r)
{
    double a = fabs(r);
    double c = a <= 0.25 ? PI / tan(PI * a) : PI * tan(PI * (0.5 - a));
    return copysign(c, r);
}

double weft__digamma(double x)
{
    if (isnan(x) || x == INFINITY) return x;
    if (x == 0.0) return copysign(INFINITY, -x); /* the pole's side: psi(+0) = -inf */
    if (x == -INFINITY) return NAN;
    double acc = 0.0;
    if (x < 0.0) {
        double r = x - round(x);
        if (r == 0.0) return NAN; /* a negative integer: a pole from both sides */
        acc = -pi_cot_pi(r);
        x = 1.0 - x;
    }
    for (; x < 10.0; x += 1.0) acc -= 1.0 / x;
    double z = 1.0 / (x * x);
    double s = z * (1.0 / 12 -
                    z * (1.0 / 120 -
                         z * (1.0 / 252 -
                              z * (1.0 / 240 - z * (1.0 / 132 - z * (691.0 / 32760 - z / 12))))));
    return acc + ((log(x) - 0.5 / x) - s);
}

double weft__trigamma(double x)
{
    if (isnan(x)) return x;
    if (x == INFINITY) return 0.0;
    if (x == -INFINITY) return NAN;
    double refl = 0.0, sign = 1.0, acc = 0.0;
    if (x <= 0.0) {
        double r = x - round(x);
        if (r == 0.0) return INFINITY; /* 1/(x + n)^2 from both sides */
        double s = sin(PI * r);
        refl = PI * PI / (s * s);
        sign = -1.0;
        x = 1.0 - x;
    }
    for (; x < 10.0; x += 1.0) acc += 1.0 / (x * x);
    double z = 1.0 / (x * x);
    double b = z * (1.0 / 6 -
                    z * (1.0 / 30 -
                         z * (1.0 / 42 -
                              z * (1.0 / 30 -
                                   z * (5.0 / 66 -
                                        z * (691.0 / 2730 - z * (7.0 / 6 - z * 3617.0 / 510)))))));
    double series = (1.0 + 0.5 / x + b) / x; /* 1/x + 1/(2x^2) + sum B2k / x^(2k+1) */
    return refl + sign * (acc + series);
}
