/* The float math kinds of issue 17 (Tan .. Nextafter, weft/elemwise.h):
 * values at known points and NumPy's domain rules, erfinv / gammaln /
 * digamma / trigamma against high-precision references, Expm1 and Arctan2
 * within 2 ulp of libm on 10^6 random and edge inputs (float64 and
 * float32), dtype errors, gradients against finite differences, in-place
 * variants, fusion into a Composite, and a JSON round trip. */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <math.h>

#include "ops_fixture.h"
#include "weft/eval.h"
#include "weft/function.h"
#include "weft/grad.h"
#include "weft/graph_io.h"

#define N_MATH (WEFT_ELEMWISE_NEXTAFTER - WEFT_ELEMWISE_TAN + 1)
static const int64_t S34[2] = {3, 4}, S14[2] = {1, 4};

/* Evaluates kind on float64 (or float32) values; returns new. */
static weft_tensor_t *eval_kind(weft_graph_t *g, weft_elemwise_kind_t k, weft_dtype_t dt,
                                size_t n, const double *a, const double *b)
{
    int64_t shape[1] = {(int64_t)n};
    size_t ar = weft_elemwise_arity(k);
    weft_var_t *in[2] = {fx_var(g, dt, 1, shape), ar == 2 ? fx_var(g, dt, 1, shape) : NULL};
    weft_tensor_t *v[2] = {fx_tensor(dt, 1, shape, a), ar == 2 ? fx_tensor(dt, 1, shape, b) : NULL};
    weft_var_t *y;
    assert_non_null(y = weft_elemwise(g, k, ar, in));
    weft_tensor_t *r = fx_eval(g, ar, in, v, y);
    assert_int_equal(weft_tensor_dtype(r), dt);
    for (size_t i = 0; i < ar; i++) weft_tensor_release(v[i]);
    return r;
}

/* Same value, or both NaN; a zero's sign counts. */
static void expect_same(double got, double want, const char *what, size_t i)
{
    bool ok = isnan(want) ? isnan(got) : (got == want && signbit(got) == signbit(want));
    if (!ok) fprintf(stderr, "%s[%zu]: got %a want %a\n", what, i, got, want);
    assert_true(ok);
}

/* ---- values ------------------------------------------------------------------------- */

typedef double (*unary_fn)(double);

static const struct {
    weft_elemwise_kind_t kind;
    unary_fn ref;
} libm_unary[] = {
    {WEFT_ELEMWISE_TAN, tan},       {WEFT_ELEMWISE_ARCSIN, asin},   {WEFT_ELEMWISE_ARCCOS, acos},
    {WEFT_ELEMWISE_ARCTAN, atan},   {WEFT_ELEMWISE_SINH, sinh},     {WEFT_ELEMWISE_COSH, cosh},
    {WEFT_ELEMWISE_ARCSINH, asinh}, {WEFT_ELEMWISE_ARCCOSH, acosh}, {WEFT_ELEMWISE_ARCTANH, atanh},
    {WEFT_ELEMWISE_EXP2, exp2},     {WEFT_ELEMWISE_LOG2, log2},     {WEFT_ELEMWISE_LOG10, log10},
    {WEFT_ELEMWISE_ERF, erf},       {WEFT_ELEMWISE_ERFC, erfc},
};

/* The libm-backed kinds give libm's bits (NumPy calls the same functions),
 * including NaN outside the domain and the infinities at the poles. */
static void test_math_libm_kinds_give_libm_values_and_domains(void **state)
{
    weft_graph_t *g = *state;
    const double x[] = {0.0, -0.0, 0.5, -0.75, 1.0, -1.0, 2.0, 30.0, 1e-300, INFINITY, -INFINITY,
                        NAN};
    size_t n = sizeof x / sizeof x[0];
    for (size_t k = 0; k < sizeof libm_unary / sizeof libm_unary[0]; k++) {
        weft_tensor_t *r = eval_kind(g, libm_unary[k].kind, WEFT_FLOAT64, n, x, NULL);
        for (size_t i = 0; i < n; i++)
            expect_same(weft_tensor_flat_get(r, i), libm_unary[k].ref(x[i]),
                        weft_elemwise_name(libm_unary[k].kind), i);
        weft_tensor_release(r);
    }
    /* NumPy's domain behaviour, spelled out */
    const double d[] = {2.0, -1.0, 1.0, -1.0, 0.5, 0.0};
    const weft_elemwise_kind_t dk[] = {WEFT_ELEMWISE_ARCSIN,  WEFT_ELEMWISE_LOG2,
                                       WEFT_ELEMWISE_ARCTANH, WEFT_ELEMWISE_ARCTANH,
                                       WEFT_ELEMWISE_ARCCOSH, WEFT_ELEMWISE_LOG10};
    const double want[] = {NAN, NAN, INFINITY, -INFINITY, NAN, -INFINITY};
    for (size_t i = 0; i < 6; i++) {
        weft_tensor_t *r = eval_kind(g, dk[i], WEFT_FLOAT64, 1, &d[i], NULL);
        expect_same(weft_tensor_flat_get(r, 0), want[i], weft_elemwise_name(dk[i]), 0);
        weft_tensor_release(r);
    }
}

static void test_math_float32_kinds_give_float_libm_values(void **state)
{
    weft_graph_t *g = *state;
    const double x[] = {0.25, -0.5, 0.875, 3.0};
    weft_tensor_t *r = eval_kind(g, WEFT_ELEMWISE_TAN, WEFT_FLOAT32, 4, x, NULL);
    for (size_t i = 0; i < 4; i++)
        expect_same(weft_tensor_flat_get(r, i), (double)tanf((float)x[i]), "tan f32", i);
    weft_tensor_release(r);
    r = eval_kind(g, WEFT_ELEMWISE_ERFC, WEFT_FLOAT32, 4, x, NULL);
    for (size_t i = 0; i < 4; i++)
        expect_same(weft_tensor_flat_get(r, i), (double)erfcf((float)x[i]), "erfc f32", i);
    weft_tensor_release(r);
}

/* Relative error at most tol (exact match for infinities, zeros and NaN). */
static void expect_rel(const weft_tensor_t *r, const double *want, size_t n, double tol,
                       const char *what)
{
    for (size_t i = 0; i < n; i++) {
        double got = weft_tensor_flat_get(r, i);
        if (isnan(want[i]) || isinf(want[i]) || want[i] == 0) {
            expect_same(got, want[i], what, i);
        } else if (!(fabs(got - want[i]) <= tol * fabs(want[i]))) {
            fprintf(stderr, "%s[%zu]: got %.17g want %.17g (rel %.3g)\n", what, i, got, want[i],
                    fabs(got - want[i]) / fabs(want[i]));
            fail();
        }
    }
}

/* References: 110-digit decimal arithmetic (erfinv by Newton on a series
 * erf; digamma/trigamma/lgamma from closed forms: -gamma - 2 ln 2,
 * pi^2/2 + 8 Catalan, ln(99!), the recurrences), rounded to double. */
static void test_math_special_functions_match_known_values(void **state)
{
    weft_graph_t *g = *state;
    const double ex[] = {0.5, 0.9, -0.3, 0.999, 1e-10, 0.999999999, 0.1,
                         1.0, -1.0, 2.0, -0.0, NAN};
    const double ew[] = {0.4769362762044699, 1.1630871536766743, -0.2724627147267543,
                         2.3267537655135246, 8.862269254527581e-11, 4.320005388105362,
                         0.08885599049425769, INFINITY, -INFINITY, NAN, -0.0, NAN};
    weft_tensor_t *r = eval_kind(g, WEFT_ELEMWISE_ERFINV, WEFT_FLOAT64, 12, ex, NULL);
    expect_rel(r, ew, 12, 1e-14, "erfinv");
    weft_tensor_release(r);

    const double dx[] = {1, 0.5, 0.25, 0.75, 10, 100, -0.5, -2.5, 0.0, -0.0, -3.0, INFINITY};
    const double dw[] = {-0.5772156649015329, -1.9635100260214235, -4.2274535333762655,
                         -1.0858608797864722, 2.251752589066721,   4.600161852738087,
                         0.03648997397857652, 1.103156640645243,   -INFINITY,
                         INFINITY,            NAN,                 INFINITY};
    r = eval_kind(g, WEFT_ELEMWISE_DIGAMMA, WEFT_FLOAT64, 12, dx, NULL);
    expect_rel(r, dw, 12, 1e-14, "digamma");
    weft_tensor_release(r);

    const double tx[] = {1, 0.5, 0.25, 10, 100, -0.5, -1.5, 0.0, -2.0, INFINITY};
    const double tw[] = {1.6449340668482264, 4.934802200544679,  17.19732915450711,
                         0.10516633568168575, 0.010050166663333571, 8.934802200544679,
                         9.379246644989124,  INFINITY,           INFINITY, 0.0};
    r = eval_kind(g, WEFT_ELEMWISE_TRIGAMMA, WEFT_FLOAT64, 10, tx, NULL);
    expect_rel(r, tw, 10, 1e-14, "trigamma");
    weft_tensor_release(r);

    const double gx[] = {0.5, 10, -0.5, -1.5, 100, 3, 1, 0.0, -2.0};
    const double gw[] = {0.5723649429247001, 12.801827480081469, 1.2655121234846454,
                         0.860047015376481,  359.1342053695754,  0.6931471805599453,
                         0.0,                INFINITY,           INFINITY};
    r = eval_kind(g, WEFT_ELEMWISE_GAMMALN, WEFT_FLOAT64, 9, gx, NULL);
    expect_rel(r, gw, 9, 1e-14, "gammaln");
    weft_tensor_release(r);
}

/* Polygamma against 50-digit decimal sums of (-1)^(n+1) n! (x + k)^-(n+1)
 * (direct up to x + k >= 60 + 2 n, then Euler-Maclaurin with B2..B40,
 * negative x summed directly, no reflection), rounded to double; the
 * closed forms psi_2(1) = -2 zeta(3), psi_3(1/2) = pi^4 agree. */
static void test_math_polygamma_known_values(void **state)
{
    weft_graph_t *g = *state;
    static const double pn[] = {2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 5, 5, 10, 10, 4, 7,
                                2, 20, 40, 0, 1};
    static const double px[] = {1, 0.5, 0.25, 10, 100, -0.5, -1.5, 3.7, 1e-3, 1, 0.5, -0.5,
                                2.5, 0.3, 7, 1.5, -2.3, -0.3, -5.75, -10.2, 0.8, 3, 0.5, 0.5};
    static const double pw[] = {
        -2.4041138063191885, -16.82879664423432, -129.32773993753693, -0.011049834970802067,
        -0.00010100499983335, -0.82879664423432, -0.2362040516417274, -0.09539530872855403,
        -2000000002.3976321, 6.493939402266829, 97.40909103400244, 193.40909103400244,
        0.22390584881725206, 164634.84609922304, 0.0020094931750490293, -42108.85876897549,
        2048284893010.9443, 9731.83495623352, 330352695.85368866, 247.03920499486458,
        -2.6377577487428456e+20, -2.2370562304678765e+28, -1.9635100260214235,
        4.934802200544679};
    size_t n = sizeof pn / sizeof pn[0];
    weft_tensor_t *r = eval_kind(g, WEFT_ELEMWISE_POLYGAMMA, WEFT_FLOAT64, n, pn, px);
    for (size_t i = 0; i < n; i++) { /* x < 0: the reflection's two terms cancel in part */
        weft_tensor_t *one = NULL;
        assert_int_equal(weft_tensor_full(WEFT_FLOAT64, 0, NULL, weft_tensor_flat_get(r, i), &one),
                         WEFT_OK);
        expect_rel(one, &pw[i], 1, px[i] < 0 ? 5e-14 : 1e-14, "polygamma");
        weft_tensor_release(one);
    }
    weft_tensor_release(r);
    /* float32: float64's value at the float32 x, rounded once */
    double pxf[sizeof px / sizeof px[0]];
    for (size_t i = 0; i < n; i++) pxf[i] = (float)px[i];
    r = eval_kind(g, WEFT_ELEMWISE_POLYGAMMA, WEFT_FLOAT32, n, pn, px);
    weft_tensor_t *r64 = eval_kind(g, WEFT_ELEMWISE_POLYGAMMA, WEFT_FLOAT64, n, pn, pxf);
    for (size_t i = 0; i < n; i++)
        expect_same(weft_tensor_flat_get(r, i), (double)(float)weft_tensor_flat_get(r64, i),
                    "polygamma f32", i);
    weft_tensor_release(r);
    weft_tensor_release(r64);
    /* poles, infinities, NaN, and orders that are not non-negative integers */
    static const double en[] = {2, 3, 2, 3, 2, 2, -1, 1.5, NAN, 4, 0, 1};
    static const double exv[] = {0.0, -2.0, INFINITY, INFINITY, -INFINITY, NAN, 1, 1, 1, -0.0,
                                 -0.0, -3.0};
    static const double ew[] = {-INFINITY, INFINITY, -0.0, 0.0, NAN, NAN, NAN, NAN, NAN,
                                -INFINITY, INFINITY, INFINITY};
    n = sizeof en / sizeof en[0];
    r = eval_kind(g, WEFT_ELEMWISE_POLYGAMMA, WEFT_FLOAT64, n, en, exv);
    for (size_t i = 0; i < n; i++) expect_same(weft_tensor_flat_get(r, i), ew[i], "edges", i);
    weft_tensor_release(r);
}

/* erfinv inverts erf across (-1, 1), float32 through float64. */
static void test_math_erfinv_inverts_erf(void **state)
{
    weft_graph_t *g = *state;
    enum { N = 2001 };
    static double x[N];
    for (int i = 0; i < N; i++) x[i] = -0.9999 + 1.9998 * i / (N - 1);
    weft_tensor_t *r = eval_kind(g, WEFT_ELEMWISE_ERFINV, WEFT_FLOAT64, N, x, NULL);
    for (int i = 0; i < N; i++) {
        double y = weft_tensor_flat_get(r, i);
        /* |erf(y) - x| within erf's own rounding at x, plus y's one ulp */
        double slope = exp(-y * y) * 1.1283791670955126;
        assert_true(fabs(erf(y) - x[i]) <= 2e-16 + slope * fabs(y) * 2.3e-16);
    }
    weft_tensor_release(r);
    r = eval_kind(g, WEFT_ELEMWISE_ERFINV, WEFT_FLOAT32, N, x, NULL);
    for (int i = 0; i < N; i++) {
        float xf = (float)x[i];
        expect_same(weft_tensor_flat_get(r, i), (double)(float)weft_tensor_flat_get(r, i),
                    "f32", (size_t)i);
        assert_true(fabs(erf(weft_tensor_flat_get(r, i)) - xf) <= 2e-7);
    }
    weft_tensor_release(r);
}

static void test_math_binary_kinds_values(void **state)
{
    weft_graph_t *g = *state;
    /* C99 Annex F's atan2 table */
    const double ay[] = {0.0, -0.0, 0.0, -0.0, 1.0, -1.0, INFINITY, -INFINITY, INFINITY,
                         INFINITY, 1.0, -1.0, 1.0, 2.0, NAN, 1.0};
    const double ax[] = {0.0, 0.0, -0.0, -0.0, 0.0, -0.0, 5.0, 5.0, INFINITY,
                         -INFINITY, INFINITY, -INFINITY, -1.0, 1e-300, 1.0, NAN};
    size_t n = sizeof ay / sizeof ay[0];
    weft_tensor_t *r = eval_kind(g, WEFT_ELEMWISE_ARCTAN2, WEFT_FLOAT64, n, ay, ax);
    for (size_t i = 0; i < n; i++)
        expect_same(weft_tensor_flat_get(r, i), atan2(ay[i], ax[i]), "arctan2", i);
    weft_tensor_release(r);
    const double h1[] = {3, -5, INFINITY, NAN, 1e300}, h2[] = {4, 12, NAN, INFINITY, 1e300};
    const double hw[] = {5, 13, INFINITY, INFINITY, hypot(1e300, 1e300)};
    r = eval_kind(g, WEFT_ELEMWISE_HYPOT, WEFT_FLOAT64, 5, h1, h2);
    for (size_t i = 0; i < 5; i++) expect_same(weft_tensor_flat_get(r, i), hw[i], "hypot", i);
    weft_tensor_release(r);
    const double c1[] = {3, -3, 2, NAN}, c2[] = {-0.0, 1, -INFINITY, -1};
    const double cw[] = {-3, 3, -2, -NAN};
    r = eval_kind(g, WEFT_ELEMWISE_COPYSIGN, WEFT_FLOAT64, 4, c1, c2);
    for (size_t i = 0; i < 4; i++) expect_same(weft_tensor_flat_get(r, i), cw[i], "copysign", i);
    assert_true(signbit(weft_tensor_flat_get(r, 3)));
    weft_tensor_release(r);
    const double n1[] = {1, 1, 0, 2}, n2[] = {2, 0, -1, 2};
    const double nw[] = {1 + 0x1p-52, 1 - 0x1p-53, -0x1p-1074, 2};
    r = eval_kind(g, WEFT_ELEMWISE_NEXTAFTER, WEFT_FLOAT64, 4, n1, n2);
    for (size_t i = 0; i < 4; i++) expect_same(weft_tensor_flat_get(r, i), nw[i], "nextafter", i);
    weft_tensor_release(r);
    r = eval_kind(g, WEFT_ELEMWISE_NEXTAFTER, WEFT_FLOAT32, 1, n1, n2);
    expect_same(weft_tensor_flat_get(r, 0), 1 + 0x1p-23, "nextafter f32", 0);
    weft_tensor_release(r);
}

/* ---- Expm1 and Arctan2 against libm ------------------------------------------------ */

/* |got - want| in ulps of want (0 for equal values and matching NaNs;
 * huge for a NaN, infinity or zero-sign mismatch). */
static double ulp_err(double got, double want, bool f32)
{
    if (isnan(want) || isnan(got)) return isnan(want) && isnan(got) ? 0 : 1e30;
    if (got == want) return signbit(got) == signbit(want) ? 0 : 1e30;
    if (isinf(got) || isinf(want)) return 1e30;
    int e;
    frexp(want, &e);
    int min_e = f32 ? -125 : -1021, mant = f32 ? 24 : 53;
    return fabs(got - want) / ldexp(1.0, (e < min_e ? min_e : e) - mant);
}

static double bits_to_double(uint64_t u, bool f32)
{
    if (f32) {
        uint32_t w = (uint32_t)(u >> 32);
        float f;
        memcpy(&f, &w, sizeof f);
        return f;
    }
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

enum { N_RAND = 1 << 20 };

/* Inputs: the edge values, then random ones from four families: uniform
 * over the interesting range, uniform in [-2, 2], random bit patterns
 * (every exponent, NaNs, infinities, subnormals), and tiny magnitudes. */
static void fill_inputs(double *v, size_t n, const double *edges, size_t n_edges, double lo,
                        double hi, bool f32, uint64_t seed)
{
    for (size_t i = 0; i < n; i++) {
        double u = fx_rand(&seed), s = fx_rand(&seed) < 0.5 ? -1 : 1;
        uint64_t bits = (uint64_t)(fx_rand(&seed) * 0x1p53) << 11 ^ (uint64_t)(u * 0x1p53);
        switch (i % 4) {
        case 0: v[i] = lo + (hi - lo) * u; break;
        case 1: v[i] = 4 * u - 2; break;
        case 2: v[i] = bits_to_double(bits, f32); break;
        default: v[i] = s * ldexp(u, -(int)(fx_rand(&seed) * (f32 ? 140 : 1070))); break;
        }
        if (f32) v[i] = (float)v[i];
    }
    if (n_edges) memcpy(v, edges, n_edges * sizeof *edges);
}

static const double expm1_edges[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 0x1p-1074, -0x1p-1074,
                                     1e-310, -1e-20, 0x1p-54, 709.782712893384,
                                     709.7827128933841, 709.78, 710, 88.72283, 88.72284,
                                     -37.42994775023704, -745.2, 0.34657359027997264,
                                     -0.34657359027997264, 0.5, 1.0, -1.0, 1e308};

static void test_math_expm1_within_2_ulp_of_libm(void **state)
{
    weft_graph_t *g = *state;
    double *x = malloc(N_RAND * sizeof *x);
    for (int f32 = 0; f32 < 2; f32++) {
        size_t n_edges = sizeof expm1_edges / sizeof expm1_edges[0];
        fill_inputs(x, N_RAND, expm1_edges, n_edges, -760, 760, f32, 77 + (uint64_t)f32);
        weft_tensor_t *r = eval_kind(g, WEFT_ELEMWISE_EXPM1, f32 ? WEFT_FLOAT32 : WEFT_FLOAT64,
                                     N_RAND, x, NULL);
        double worst = 0, at = 0;
        for (size_t i = 0; i < N_RAND; i++) {
            double want = f32 ? (double)expm1f((float)x[i]) : expm1(x[i]);
            double e = ulp_err(weft_tensor_flat_get(r, i), want, f32);
            if (e > worst) worst = e, at = x[i];
        }
        printf("expm1 %s: max %.3f ulp from libm (at %a)\n", f32 ? "float32" : "float64", worst,
               at);
        assert_true(worst <= 2.0);
        weft_tensor_release(r);
    }
    free(x);
}

static const double atan2_edges[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1.0, -1.0, 0x1p-1074,
                                     -0x1p-1074, 1e308, -1e308, 0x1p1000, 0x1p-1022, 2.0,
                                     0.5, 0x1.0000000000001p+1, 0x1.fffffffffffffp-2};

static void test_math_arctan2_within_2_ulp_of_libm(void **state)
{
    weft_graph_t *g = *state;
    double *y = malloc(N_RAND * sizeof *y), *x = malloc(N_RAND * sizeof *x);
    size_t ne = sizeof atan2_edges / sizeof atan2_edges[0];
    for (int f32 = 0; f32 < 2; f32++) {
        fill_inputs(y, N_RAND, NULL, 0, -3, 3, f32, 5 + (uint64_t)f32);
        fill_inputs(x, N_RAND, NULL, 0, -3, 3, f32, 11 + (uint64_t)f32);
        for (size_t i = 0; i < ne * ne; i++) { /* every pair of edges */
            y[i] = atan2_edges[i / ne];
            x[i] = atan2_edges[i % ne];
        }
        weft_tensor_t *r = eval_kind(g, WEFT_ELEMWISE_ARCTAN2, f32 ? WEFT_FLOAT32 : WEFT_FLOAT64,
                                     N_RAND, y, x);
        double worst = 0;
        size_t at = 0;
        for (size_t i = 0; i < N_RAND; i++) {
            double want = f32 ? (double)atan2f((float)y[i], (float)x[i]) : atan2(y[i], x[i]);
            double e = ulp_err(weft_tensor_flat_get(r, i), want, f32);
            if (e > worst) worst = e, at = i;
        }
        printf("arctan2 %s: max %.3f ulp from libm (at y=%a x=%a)\n",
               f32 ? "float32" : "float64", worst, y[at], x[at]);
        assert_true(worst <= 2.0);
        weft_tensor_release(r);
    }
    free(y);
    free(x);
}

/* ---- dtypes ----------------------------------------------------------------------- */

static void test_math_dtype_rules_and_errors(void **state)
{
    weft_graph_t *g = *state;
    weft_var_t *i32 = fx_var(g, WEFT_INT32, 1, S14 + 1), *i64 = fx_var(g, WEFT_INT64, 1, S14 + 1);
    weft_var_t *f32 = fx_var(g, WEFT_FLOAT32, 1, S14 + 1), *b = fx_var(g, WEFT_BOOL, 1, S14 + 1);
    /* integers and bool compute in weft_dtype_float_of, as NumPy's loops */
    const struct {
        weft_var_t *y;
        weft_dtype_t want;
    } rules[] = {{weft_tan(g, i32), WEFT_FLOAT64},
                 {weft_erfinv(g, b), WEFT_FLOAT16},
                 {weft_arctan2(g, i32, i64), WEFT_FLOAT64},
                 {weft_nextafter(g, b, i32), WEFT_FLOAT64}};
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        assert_non_null(rules[i].y);
        assert_int_equal(weft_type_dtype(weft_var_type(rules[i].y)), rules[i].want);
    }
    weft_var_t *y;
    assert_non_null(y = weft_hypot(g, i32, f32)); /* int32 with float32: float64 */
    assert_int_equal(weft_type_dtype(weft_var_type(y)), WEFT_FLOAT64);
    assert_non_null(y = weft_gammaln(g, f32));
    assert_int_equal(weft_type_dtype(weft_var_type(y)), WEFT_FLOAT32);
    /* Polygamma: x's float dtype, whatever the order's (PyTensor's) */
    assert_non_null(y = weft_polygamma(g, i64, f32));
    assert_int_equal(weft_type_dtype(weft_var_type(y)), WEFT_FLOAT32);
    assert_non_null(y = weft_polygamma(g, b, i32));
    assert_int_equal(weft_type_dtype(weft_var_type(y)), WEFT_FLOAT64);
    assert_non_null(y = weft_polygamma(g, f32, weft_cast(g, i32, WEFT_FLOAT16)));
    assert_int_equal(weft_type_dtype(weft_var_type(y)), WEFT_FLOAT16);
    fx_expect_error(g, weft_polygamma(g, i32, b), WEFT_ETYPE,
                    "Polygamma: x (input 1) is bool; a number is required");
    fx_expect_error(g, weft_polygamma(g, weft_cast(g, i32, WEFT_COMPLEX64), f32), WEFT_ETYPE,
                    "Polygamma: input 0 is complex64; Polygamma is not defined for complex "
                    "numbers");
    fx_expect_error(g, weft_elemwise(g, WEFT_ELEMWISE_COPYSIGN, 1, &f32), WEFT_EINVAL,
                    "Copysign takes 2 inputs, got 1");
    assert_string_equal(weft_elemwise_name(WEFT_ELEMWISE_ARCTAN2), "Arctan2");
    assert_int_equal(weft_elemwise_arity(WEFT_ELEMWISE_HYPOT), 2);
    assert_int_equal(weft_elemwise_arity(WEFT_ELEMWISE_DIGAMMA), 1);
}

/* ---- gradients ---------------------------------------------------------------------- */

/* Each differentiable kind at points inside its domain, away from poles;
 * the last input broadcast, so the gradient is summed back. */
static void test_math_grads_match_finite_differences(void **state)
{
    weft_graph_t *g = *state;
    uint64_t seed = 4321;
    printf("seed=%llu\n", (unsigned long long)seed);
    static const struct {
        weft_elemwise_kind_t kind;
        double lo, hi;
    } cases[] = {
        {WEFT_ELEMWISE_TAN, -1.2, 1.2},      {WEFT_ELEMWISE_ARCSIN, -0.9, 0.9},
        {WEFT_ELEMWISE_ARCCOS, -0.9, 0.9},   {WEFT_ELEMWISE_ARCTAN, -3, 3},
        {WEFT_ELEMWISE_ARCTAN2, -2, 2},      {WEFT_ELEMWISE_SINH, -2, 2},
        {WEFT_ELEMWISE_COSH, -2, 2},         {WEFT_ELEMWISE_ARCSINH, -3, 3},
        {WEFT_ELEMWISE_ARCCOSH, 1.2, 4},     {WEFT_ELEMWISE_ARCTANH, -0.9, 0.9},
        {WEFT_ELEMWISE_EXP2, -2, 2},         {WEFT_ELEMWISE_EXPM1, -2, 2},
        {WEFT_ELEMWISE_LOG2, 0.3, 4},        {WEFT_ELEMWISE_LOG10, 0.3, 4},
        {WEFT_ELEMWISE_HYPOT, -2, 2},        {WEFT_ELEMWISE_ERF, -2, 2},
        {WEFT_ELEMWISE_ERFC, -2, 2},         {WEFT_ELEMWISE_ERFINV, -0.9, 0.9},
        {WEFT_ELEMWISE_GAMMALN, 0.3, 6},     {WEFT_ELEMWISE_DIGAMMA, 0.3, 6},
        {WEFT_ELEMWISE_COPYSIGN, -2, 2},     {WEFT_ELEMWISE_NEXTAFTER, -2, 2},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        weft_elemwise_kind_t k = cases[c].kind;
        size_t ar = weft_elemwise_arity(k);
        weft_var_t *in[2];
        weft_tensor_t *v[2];
        for (size_t i = 0; i < ar; i++) {
            const int64_t *shape = i == ar - 1 && ar > 1 ? S14 : S34;
            in[i] = fx_var(g, WEFT_FLOAT64, 2, shape);
            /* away from 0: the kinks of hypot and copysign, atan2's origin */
            v[i] = fx_random(WEFT_FLOAT64, 2, shape, cases[c].lo, cases[c].hi,
                             cases[c].lo < 0 ? 0.2 : 0, &seed);
        }
        weft_var_t *y;
        assert_non_null(y = weft_elemwise(g, k, ar, in));
        fx_check_grad(g, y, ar, in, v, seed);
        for (size_t i = 0; i < ar; i++) weft_tensor_release(v[i]);
    }
}

/* The grad hook of the binary node making out, with a fresh gz. */
static void hook_grads(weft_graph_t *g, weft_var_t *out, weft_var_t **grads)
{
    weft_apply_t *node = weft_var_owner(out);
    weft_var_t *gz = weft_var_create(g, weft_var_type(out), "gz");
    assert_int_equal(weft_op_class(weft_apply_op(node))->grad(g, node, &gz, grads), WEFT_OK);
}

/* Copysign's sign input and Nextafter's direction are disconnected. */
static void test_math_grad_disconnected_inputs(void **state)
{
    weft_graph_t *g = *state;
    weft_var_t *a = fx_var(g, WEFT_FLOAT64, 2, S34), *b = fx_var(g, WEFT_FLOAT64, 2, S34);
    weft_var_t *outs[2] = {weft_copysign(g, a, b), weft_nextafter(g, a, b)}, *grads[2];
    for (int k = 0; k < 2; k++) {
        hook_grads(g, outs[k], grads);
        assert_non_null(grads[0]);
        assert_null(grads[1]);
    }
}

/* polygamma(n, x) for the order in user (an int64 n) */
static weft_var_t *polygamma_of(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    (void)n;
    double order = *(const double *)user;
    return weft_polygamma(g, weft_constant_scalar(g, WEFT_INT64, order), in[0]);
}

static weft_var_t *trigamma_of(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    (void)n;
    (void)user;
    return weft_trigamma(g, in[0]);
}

/* Trigamma's gradient is Polygamma(2, x), Polygamma(n, x)'s Polygamma(n + 1,
 * x) (positive and negative x, away from the poles); the order gets none,
 * an integer order is disconnected, a float one (fusable) too. */
static void test_math_trigamma_and_polygamma_grads(void **state)
{
    weft_graph_t *g = *state;
    int64_t shape[1] = {6};
    const double lo[2] = {0.3, -0.8}, hi[2] = {4.0, -0.2}, orders[4] = {0, 1, 2, 5};
    for (int d = 0; d < 2; d++) {
        weft_tensor_t *p = NULL;
        assert_int_equal(weft_verify_grad_random(WEFT_FLOAT64, 1, shape, lo[d], hi[d], 7, &p),
                         WEFT_OK);
        weft_verify_grad_result_t r;
        weft_verify_grad_options_t o = WEFT_VERIFY_GRAD_OPTIONS_INIT;
        o.rel_tol = 1e-5;
        if (weft_verify_grad(trigamma_of, NULL, 1, &p, &o, &r) != WEFT_OK)
            fail_msg("Trigamma: %s", r.message);
        for (int k = 0; k < 4; k++)
            if (weft_verify_grad(polygamma_of, (void *)&orders[k], 1, &p, &o, &r) != WEFT_OK)
                fail_msg("Polygamma(%g): %s", orders[k], r.message);
        weft_tensor_release(p);
    }
    weft_var_t *n = fx_var(g, WEFT_INT32, 2, S34), *nf = fx_var(g, WEFT_FLOAT64, 2, S34);
    weft_var_t *x = fx_var(g, WEFT_FLOAT64, 2, S34);
    weft_var_t *outs[2] = {weft_polygamma(g, n, x), weft_polygamma(g, nf, x)}, *grads[2];
    for (int k = 0; k < 2; k++) {
        hook_grads(g, outs[k], grads);
        assert_null(grads[0]);
        assert_non_null(grads[1]);
        char buf[64];
        weft_op_print(weft_apply_op(weft_var_owner(grads[1])), buf, sizeof buf);
        assert_string_equal(buf, "Mul"); /* gz * Polygamma(n + 1, x) */
    }
}

/* ---- in place ----------------------------------------------------------------------- */

static void test_math_inplace_variants_match_out_of_place(void **state)
{
    weft_graph_t *g = *state;
    uint64_t seed = 9;
    for (int k = WEFT_ELEMWISE_TAN; k <= WEFT_ELEMWISE_NEXTAFTER; k++) {
        size_t ar = weft_elemwise_arity((weft_elemwise_kind_t)k);
        for (size_t target = 0; target < ar; target++) {
            weft_var_t *in[2];
            weft_tensor_t *v1[2], *v2[2];
            for (size_t i = 0; i < ar; i++) {
                in[i] = fx_var(g, WEFT_FLOAT64, 2, S34);
                v1[i] = fx_random(WEFT_FLOAT64, 2, S34, 0.1, 0.9, 0, &seed);
                weft_tensor_clone(v1[i], &v2[i]);
            }
            const weft_op_t *op, *ip;
            assert_int_equal(weft_elemwise_op(g, (weft_elemwise_kind_t)k, -1, WEFT_BOOL, &op),
                             WEFT_OK);
            assert_int_equal(weft_op_class(op)->inplace_variant(g, op, target, &ip), WEFT_OK);
            weft_var_t *y = weft_op_call(g, op, ar, in), *yi = weft_op_call(g, ip, ar, in);
            weft_tensor_t *r = fx_eval(g, ar, in, v1, y), *ri = fx_eval(g, ar, in, v2, yi);
            for (size_t j = 0; j < 12; j++)
                expect_same(weft_tensor_flat_get(ri, j), weft_tensor_flat_get(r, j),
                            weft_elemwise_name((weft_elemwise_kind_t)k), j);
            assert_true(weft_tensor_shares_buffer(ri, v2[target]));
            weft_tensor_release(r);
            weft_tensor_release(ri);
            for (size_t i = 0; i < ar; i++) {
                weft_tensor_release(v1[i]);
                weft_tensor_release(v2[i]);
            }
        }
    }
}

/* ---- fusion -------------------------------------------------------------------------- */

/* A chain of every new kind, values kept inside each domain. */
static weft_var_t *math_chain(weft_graph_t *g, weft_var_t *x, weft_var_t *z)
{
    weft_var_t *s = weft_mul_scalar(g, weft_tanh(g, x), 0.5); /* (-0.5, 0.5) */
    weft_var_t *t = weft_add(g, weft_arcsin(g, s), weft_arccos(g, s));
    t = weft_add(g, t, weft_arctan(g, weft_tan(g, s)));
    t = weft_add(g, t, weft_arctan2(g, s, z));
    t = weft_add(g, t, weft_arcsinh(g, weft_sinh(g, s)));
    t = weft_add(g, t, weft_arccosh(g, weft_cosh(g, weft_add_scalar(g, s, 1.5))));
    t = weft_add(g, t, weft_arctanh(g, s));
    t = weft_add(g, t, weft_log2(g, weft_exp2(g, s)));
    t = weft_add(g, t, weft_log10(g, weft_add_scalar(g, weft_expm1(g, s), 2.0)));
    t = weft_add(g, t, weft_hypot(g, s, z));
    t = weft_add(g, t, weft_erfinv(g, weft_erf(g, s)));
    t = weft_add(g, t, weft_erfc(g, s));
    weft_var_t *p = weft_add_scalar(g, z, 3.0); /* z in (0.5, 1.5): p > 3 */
    t = weft_add(g, t, weft_gammaln(g, p));
    t = weft_add(g, t, weft_digamma(g, p));
    t = weft_add(g, t, weft_trigamma(g, p));
    t = weft_add(g, t, weft_polygamma(g, weft_constant_scalar(g, WEFT_FLOAT64, 3.0), p));
    t = weft_add(g, t, weft_copysign(g, s, weft_neg(g, z)));
    return weft_add(g, t, weft_nextafter(g, s, z));
}

/* Inputs x, z of length n, out = math_chain(x, z), and values for x (any)
 * and z (in [0.5, 1.5)). */
static weft_var_t *chain_setup(weft_graph_t *g, int64_t n, weft_var_t **in, weft_tensor_t **v,
                               uint64_t seed)
{
    in[0] = fx_var(g, WEFT_FLOAT64, 1, &n);
    in[1] = fx_var(g, WEFT_FLOAT64, 1, &n);
    v[0] = fx_random(WEFT_FLOAT64, 1, &n, -3, 3, 0, &seed);
    v[1] = fx_random(WEFT_FLOAT64, 1, &n, 0.5, 1.5, 0, &seed);
    weft_var_t *out = math_chain(g, in[0], in[1]);
    assert_non_null(out);
    return out;
}

/* Compiles out = chain(x, z); returns the printed function in *text (new). */
static weft_function_t *compile_chain(weft_var_t **in, weft_var_t *out, bool fuse, char **text)
{
    const char *ex[] = {"fusion"};
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.threads = 1;
    o.n_exclude = fuse ? 0 : 1;
    o.exclude = ex;
    weft_function_t *f;
    assert_int_equal(weft_function_compile(2, in, 1, &out, 0, NULL, &o, &f), WEFT_OK);
    size_t len;
    FILE *m = open_memstream(text, &len);
    assert_non_null(m);
    assert_int_equal(weft_function_print(f, m), WEFT_OK);
    fclose(m);
    return f;
}

static void test_math_kinds_fuse_and_match_unfused(void **state)
{
    weft_graph_t *g = *state;
    weft_var_t *in[2];
    weft_tensor_t *v[2], *r[2] = {NULL, NULL};
    weft_var_t *out = chain_setup(g, 1000, in, v, 3);
    for (int fuse = 0; fuse < 2; fuse++) {
        char *text = NULL;
        weft_function_t *f = compile_chain(in, out, fuse, &text);
        const char *names[] = {"Arctan2", "Erfinv", "Trigamma", "Polygamma", "Nextafter"};
        for (int k = 0; k < 5; k++) assert_non_null(strstr(text, names[k]));
        assert_true((strstr(text, "Composite") != NULL) == (fuse == 1));
        if (fuse) assert_non_null(strstr(text, "Arctan2(i"));
        free(text);
        assert_int_equal(weft_function_call(f, 2, v, 1, &r[fuse]), WEFT_OK);
        weft_function_destroy(f);
    }
    for (size_t i = 0; i < 1000; i++) {
        assert_false(isnan(weft_tensor_flat_get(r[0], i)));
        expect_same(weft_tensor_flat_get(r[1], i), weft_tensor_flat_get(r[0], i), "fused", i);
    }
    for (int k = 0; k < 2; k++) {
        weft_tensor_release(v[k]);
        weft_tensor_release(r[k]);
    }
}

/* ---- JSON --------------------------------------------------------------------------- */

static void test_math_json_round_trip(void **state)
{
    weft_graph_t *g = *state;
    weft_var_t *in[2];
    weft_tensor_t *v[2];
    weft_var_t *out = chain_setup(g, 8, in, v, 8);
    weft_graph_io_t io = {.n_inputs = 2, .inputs = in, .n_outputs = 1, .outputs = &out};
    char *text = NULL;
    assert_int_equal(weft_graph_io_save(&io, &text), WEFT_OK);
    for (int k = WEFT_ELEMWISE_TAN; k <= WEFT_ELEMWISE_NEXTAFTER; k++) {
        char quoted[64];
        snprintf(quoted, sizeof quoted, "\"%s\"", weft_elemwise_name((weft_elemwise_kind_t)k));
        assert_non_null(strstr(text, quoted));
    }
    weft_graph_io_t back;
    assert_int_equal(weft_graph_io_load(g, text, strlen(text), "math.json", &back), WEFT_OK);
    weft_tensor_t *a = fx_eval(g, 2, in, v, out);
    weft_tensor_t *b = fx_eval(g, 2, back.inputs, v, back.outputs[0]);
    for (size_t i = 0; i < 8; i++)
        expect_same(weft_tensor_flat_get(b, i), weft_tensor_flat_get(a, i), "loaded", i);
    weft_tensor_release(a);
    weft_tensor_release(b);
    weft_tensor_release(v[0]);
    weft_tensor_release(v[1]);
    weft_graph_io_clear(&back);
    weft_graph_io_free_text(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)
        T(test_math_libm_kinds_give_libm_values_and_domains),
        T(test_math_float32_kinds_give_float_libm_values),
        T(test_math_special_functions_match_known_values),
        T(test_math_erfinv_inverts_erf),
        T(test_math_binary_kinds_values),
        T(test_math_expm1_within_2_ulp_of_libm),
        T(test_math_arctan2_within_2_ulp_of_libm),
        T(test_math_dtype_rules_and_errors),
        T(test_math_grads_match_finite_differences),
        T(test_math_grad_disconnected_inputs),
        T(test_math_trigamma_and_polygamma_grads),
        T(test_math_polygamma_known_values),
        T(test_math_inplace_variants_match_out_of_place),
        T(test_math_kinds_fuse_and_match_unfused),
        T(test_math_json_round_trip),
#undef T
    };
    _Static_assert(N_MATH == 24, "a new float math kind needs its cases here");
    return cmocka_run_group_tests(tests, NULL, NULL);
}
