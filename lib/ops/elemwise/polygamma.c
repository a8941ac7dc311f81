/* Polygamma(n, x), the n-th derivative of digamma (weft/elemwise.h): its
 * dtype rule, its float64 value (the kernels of elemwise_math_kernels.c call
 * it per element) and its gradient.
 *
 * Values. n = 0 and n = 1 are digamma and trigamma (ew_special.c). For
 * n >= 2, psi_n(x) = (-1)^(n+1) n! zeta(n + 1, x), zeta(s, x) = sum over
 * k >= 0 of (x + k)^-s (Abramowitz and Stegun 6.4.10): for x > 0 the terms
 * are summed up to x + k >= s + 16, then the Euler-Maclaurin tail
 * a^-s (a / (s-1) + 1/2 + sum_j B2j / (2j)! s (s+1) ... (s+2j-2) a^-(2j-1))
 * with B2..B20 (its first omitted term is below 1e-17 relative there). For
 * a negative non-integer x the reflection psi_n(x) = (-1)^n psi_n(1 - x) -
 * pi^(n+1) P_n(cot(pi x)), from differentiating psi(1 - x) - psi(x) =
 * pi cot(pi x) n times (A&S 6.4.7), where P_0(c) = c and P_(k+1)(c) =
 * -(1 + c^2) P_k'(c); P_n's coefficients share one sign, so it sums without
 * cancellation, and pi x is reduced as in ew_special.c. The poles (the
 * integers <= 0) give (-1)^(n+1) inf, +inf gives (-1)^(n+1) 0, -inf and
 * NaN NaN, as scipy.special.polygamma; a negative or non-integral n is NaN.
 * n! and the terms overflow for large n as scipy's gamma(n + 1) zeta(n + 1,
 * x) does (inf). */
#include <math.h>

#include "graph/ctor_int.h"
#include "ops_int.h"

#define PI 3.14159265358979323846
/* n beyond which n! is inf in float64 (170! ~ 7.3e306) */
#define MAX_FINITE_N 170

/* B2j / (2j)!, j = 1..10 */
static const double bern_over_fact[10] = {
    1.0 / 12,
    -1.0 / 720,
    1.0 / 30240,
    -1.0 / 1209600,
    1.0 / 47900160,
    -691.0 / 1307674368000.0,
    1.0 / 74724249600.0,
    -3617.0 / 10670622842880000.0,
    43867.0 / 5109094217170944000.0,
    -174611.0 / 802857662698291200000.0,
};

/* zeta(s, x) for x > 0, s >= 3 an integer. */
static double hurwitz_zeta(double s, double x)
{
    double acc = 0.0, a = x;
    for (; a < s + 16.0; a += 1.0) acc += pow(a, -s);
    double inv2 = 1.0 / (a * a), p = s / a, ser = a / (s - 1.0) + 0.5;
    for (int j = 1; j <= 10; j++) {
        ser += bern_over_fact[j - 1] * p;
        p *= (s + 2 * j - 1) * (s + 2 * j) * inv2;
    }
    return acc + pow(a, -s) * ser;
}

/* pi^(n+1) P_n(c), P_n as in the file comment (n <= MAX_FINITE_N). */
static double cot_derivative(int n, double c)
{
    double p[MAX_FINITE_N + 3] = {0.0, 1.0}; /* P_0 = c: coefficient of c^i in p[i] */
    for (int k = 0; k < n; k++) {            /* P_(k+1) = -(1 + c^2) P_k' */
        double d[MAX_FINITE_N + 3] = {0.0};
        for (int i = 0; i <= k; i++) d[i] = (i + 1) * p[i + 1];
        for (int i = k + 2; i >= 0; i--) p[i] = -(d[i] + (i >= 2 ? d[i - 2] : 0.0));
    }
    double v = 0.0;
    for (int i = n + 1; i >= 0; i--) v = v * c + p[i];
    return pow(PI, n + 1) * v;
}

/* n >= 2, x not NaN. */
static double polygamma_high(int n, double x)
{
    double sign = n % 2 ? 1.0 : -1.0; /* (-1)^(n+1) */
    if (x == INFINITY) return sign * 0.0;
    if (x == -INFINITY) return NAN;
    double r = x - round(x);
    if (x <= 0.0 && r == 0.0) return sign * INFINITY;
    if (x < 0.0) {
        if (n > MAX_FINITE_N) return NAN; /* an inf difference */
        double c = cos(PI * r) / sin(PI * r);
        return (n % 2 ? -1.0 : 1.0) * polygamma_high(n, 1.0 - x) - cot_derivative(n, c);
    }
    double fact = 1.0;
    for (int k = 2; k <= n && k <= MAX_FINITE_N + 1; k++) fact *= k;
    return sign * fact * hurwitz_zeta(n + 1.0, x);
}

double weft__polygamma(double n, double x)
{
    if (isnan(n) || isnan(x) || n < 0.0 || n != floor(n)) return NAN;
    if (n == 0.0) return weft__digamma(x);
    if (n == 1.0) return weft__trigamma(x);
    /* beyond MAX_FINITE_N + 1, n! is inf: an int of n's parity (the sign) does */
    if (n > MAX_FINITE_N + 1) n = MAX_FINITE_N + 2 + (fmod(n, 2.0) != 0.0);
    return polygamma_high((int)n, x);
}

weft_status_t weft__polygamma_dtype(weft_graph_t *g, weft_var_t *const *inputs,
                                    weft_dtype_t *out)
{
    weft_dtype_t n = weft_type_dtype(weft_var_type(inputs[0]));
    weft_dtype_t x = weft_type_dtype(weft_var_type(inputs[1]));
    int kn = weft_dtype_kind(n);
    if (kn != WEFT_KIND_INT && kn != WEFT_KIND_UINT && kn != WEFT_KIND_FLOAT && n != WEFT_BOOL)
        return weft_graph_set_error(g, WEFT_ETYPE, "Polygamma: the order n (input 0) is %s; "
                                    "an integer (or float) order is required",
                                    weft_dtype_name(n));
    if (x == WEFT_BOOL)
        return weft_graph_set_error(g, WEFT_ETYPE, "Polygamma: x (input 1) is bool; a number "
                                    "is required");
    *out = weft_dtype_float_of(x); /* PyTensor's: x's float dtype, whatever n's */
    return WEFT_OK;
}

weft_status_t weft__polygamma_partial(weft_graph_t *g, size_t i, const weft_apply_t *node,
                                      weft_var_t *gz, weft_var_t **o)
{
    *o = NULL;
    if (i == 0) return WEFT_OK; /* the order: integral, no gradient */
    weft_var_t *n = weft_apply_input(node, 0), *x = weft_apply_input(node, 1);
    weft_dtype_t dn = weft_type_dtype(weft_var_type(n));
    if (weft_dtype_kind(dn) != WEFT_KIND_FLOAT) /* n + 1 without bool or narrow wrapping */
        n = weft_cast_at(g, n, WEFT_INT64, __FILE__, __LINE__);
    weft_var_t *one = n ? weft_constant_scalar_at(g, weft_type_dtype(weft_var_type(n)), 1.0,
                                                  __FILE__, __LINE__)
                        : NULL;
    weft_var_t *n1 = weft_binary_at(g, WEFT_ELEMWISE_ADD, n, one, __FILE__, __LINE__);
    weft_var_t *d = weft_binary_at(g, WEFT_ELEMWISE_POLYGAMMA, n1, x, __FILE__, __LINE__);
    return weft__got(g, *o = weft_binary_at(g, WEFT_ELEMWISE_MUL, gz, d, __FILE__, __LINE__));
}
