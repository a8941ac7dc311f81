/* Gradients through the holomorphic elementwise kinds on complex numbers
 * (Exp, Log, Sqrt, Sqr, Sin, Cos, Tanh, Div, Pow; docs/dtypes.md "Complex
 * numbers"): verify_grad on real inputs through complex intermediates at
 * complex64 and complex128, mixed real / complex operands of Div and Pow,
 * and exact values against the closed forms of PyTensor's convention
 * (d C / d re(z) + i d C / d im(z)). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "ops_check.h"

#define N_UNARY 7
static const weft_elemwise_kind_t unary_kinds[N_UNARY] = {
    WEFT_ELEMWISE_EXP, WEFT_ELEMWISE_LOG, WEFT_ELEMWISE_SQRT, WEFT_ELEMWISE_SQR,
    WEFT_ELEMWISE_SIN, WEFT_ELEMWISE_COS, WEFT_ELEMWISE_TANH};

/* real(w) + 0.3 imag(w): both parts of w reach the cost. */
static weft_var_t *parts_cost(weft_graph_t *g, weft_var_t *w)
{
    return weft_add(g, weft_real(g, w), weft_mul_scalar(g, weft_imag(g, w), 0.3));
}

/* kind(complex(a, b)) seen through parts_cost (user: the kind). */
static weft_var_t *cost_unary(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    (void)n;
    weft_elemwise_kind_t k = *(const weft_elemwise_kind_t *)user;
    return parts_cost(g, weft_unary_at(g, k, weft_complex(g, in[0], in[1]), __FILE__, __LINE__));
}

/* |kind(complex(a, b))|^2: Abs after the kind. */
static weft_var_t *cost_abs2(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    (void)n;
    weft_elemwise_kind_t k = *(const weft_elemwise_kind_t *)user;
    weft_var_t *w = weft_unary_at(g, k, weft_complex(g, in[0], in[1]), __FILE__, __LINE__);
    return weft_sqr(g, weft_abs(g, w));
}

/* Div and Pow of z = complex(a, b) and w = complex(b, a) / 2. */
static weft_var_t *cost_binary(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    (void)n;
    weft_elemwise_kind_t k = *(const weft_elemwise_kind_t *)user;
    weft_var_t *z = weft_complex(g, in[0], in[1]);
    weft_var_t *w = weft_mul_scalar(g, weft_complex(g, in[1], in[0]), 0.5);
    return parts_cost(g, weft_binary_at(g, k, z, w, __FILE__, __LINE__));
}

/* Real operands of complex nodes: a^w, w^a, a / w and w / b with w =
 * complex(b, a) (the real inputs get the real part of their partials). */
static weft_var_t *cost_mixed(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    (void)n;
    (void)user;
    weft_var_t *a = in[0], *b = in[1], *w = weft_complex(g, b, a);
    weft_var_t *s = weft_add(g, weft_pow(g, a, w), weft_pow(g, w, a));
    s = weft_add(g, s, weft_add(g, weft_div(g, a, w), weft_div(g, w, b)));
    return parts_cost(g, s);
}

/* The points: a in [0.5, 1.5) (Log and Sqrt away from their cut, Div away
 * from 0), b in [-1, 1). */
static void points(weft_dtype_t dt, uint64_t seed, weft_tensor_t **p)
{
    int64_t shape[1] = {5};
    p[0] = ck_random(dt, 1, shape, 0.5, 1.5, seed);
    p[1] = ck_random(dt, 1, shape, -1.0, 1.0, seed + 1);
}

static void verify_at(weft_dtype_t dt, weft_verify_grad_fn fn, weft_elemwise_kind_t k,
                      weft_tensor_t *const *p)
{
    weft_verify_grad_result_t r;
    weft_status_t st = weft_verify_grad(fn, &k, 2, p, NULL, &r);
    if (st != WEFT_OK)
        fail_msg("%s %s: %s: %s", weft_dtype_name(dt), weft_elemwise_name(k),
                 weft_status_name(st), r.message);
    assert_true(r.n_evals > 0);
}

/* float64 points: complex128; float32 points: complex64 (verify_grad's
 * float32 step and tolerances). */
static void test_verify_grad_holomorphic_kinds(void **state)
{
    (void)state;
    const weft_dtype_t dts[2] = {WEFT_FLOAT64, WEFT_FLOAT32};
    const weft_elemwise_kind_t bin[2] = {WEFT_ELEMWISE_DIV, WEFT_ELEMWISE_POW};
    for (int d = 0; d < 2; d++) {
        weft_tensor_t *p[2];
        points(dts[d], ck_seed("complex_grad") + (uint64_t)d * 7, p);
        for (int i = 0; i < N_UNARY; i++) {
            verify_at(dts[d], cost_unary, unary_kinds[i], p);
            verify_at(dts[d], cost_abs2, unary_kinds[i], p);
        }
        for (int i = 0; i < 2; i++) verify_at(dts[d], cost_binary, bin[i], p);
        verify_at(dts[d], cost_mixed, WEFT_ELEMWISE_POW, p);
        weft_tensor_release(p[0]);
        weft_tensor_release(p[1]);
    }
}

/* d/dx, d/dy of sum(f(complex(x, y))) evaluated at the 3 points (x, y). */
static void grads_of(weft_var_t *(*f)(weft_graph_t *, weft_var_t *), const double *x,
                     const double *y, weft_tensor_t **gx, weft_tensor_t **gy)
{
    weft_graph_t *g;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    int64_t shape[1] = {3};
    weft_var_t *vx = ck_var(g, WEFT_FLOAT64, 1, shape), *vy = ck_var(g, WEFT_FLOAT64, 1, shape);
    weft_var_t *c = weft_sum(g, f(g, weft_complex(g, vx, vy)), 0, NULL, false);
    weft_var_t *wrt[2] = {vx, vy}, *gr[2] = {NULL, NULL}, *in[2] = {vx, vy};
    assert_non_null(weft_grads(g, c, 2, wrt, NULL, gr));
    weft_tensor_t *tv[2] = {ck_tensor(WEFT_FLOAT64, 1, shape, x),
                            ck_tensor(WEFT_FLOAT64, 1, shape, y)};
    assert_int_equal(ck_eval(g, 2, in, tv, gr[0], gx), WEFT_OK);
    assert_int_equal(ck_eval(g, 2, in, tv, gr[1], gy), WEFT_OK);
    weft_tensor_release(tv[0]);
    weft_tensor_release(tv[1]);
    weft_graph_destroy(g);
}

static weft_var_t *real_exp(weft_graph_t *g, weft_var_t *z)
{
    return weft_real(g, weft_exp(g, z));
}

/* imag(z^3) = 3 x^2 y - y^3 (Pow by an integral exponent: repeated Mul). */
static weft_var_t *imag_cube(weft_graph_t *g, weft_var_t *z)
{
    return weft_imag(g, weft_pow(g, z, weft_constant_scalar(g, WEFT_COMPLEX128, 3.0)));
}

/* re(1 / z) = x / (x^2 + y^2) */
static weft_var_t *real_recip(weft_graph_t *g, weft_var_t *z)
{
    return weft_real(g, weft_div(g, weft_constant_scalar(g, WEFT_COMPLEX128, 1.0), z));
}

/* The closed forms at (x, y): real(exp(z)) = e^x cos y has gradient
 * (e^x cos y, -e^x sin y); imag(z^3) (6 x y, 3 x^2 - 3 y^2); re(1/z)
 * ((y^2 - x^2) / r^4, -2 x y / r^4). */
static void want_exp(double x, double y, double *w)
{
    w[0] = exp(x) * cos(y);
    w[1] = -exp(x) * sin(y);
}

static void want_cube(double x, double y, double *w)
{
    w[0] = 6 * x * y;
    w[1] = 3 * x * x - 3 * y * y;
}

static void want_recip(double x, double y, double *w)
{
    double r2 = x * x + y * y;
    w[0] = (y * y - x * x) / (r2 * r2);
    w[1] = -2 * x * y / (r2 * r2);
}

static void test_exact_gradients(void **state)
{
    (void)state;
    static const struct {
        weft_var_t *(*f)(weft_graph_t *, weft_var_t *);
        void (*want)(double, double, double *);
        double tol;
    } cases[3] = {{real_exp, want_exp, 1e-15}, {imag_cube, want_cube, 1e-14},
                  {real_recip, want_recip, 1e-15}};
    static const double x[3] = {0.5, -1.25, 2.0}, y[3] = {1.0, 0.75, -0.5};
    int64_t shape[1] = {3};
    for (int c = 0; c < 3; c++) {
        weft_tensor_t *gx, *gy;
        grads_of(cases[c].f, x, y, &gx, &gy);
        double w[2], wx[3], wy[3];
        for (int i = 0; i < 3; i++) {
            cases[c].want(x[i], y[i], w);
            wx[i] = w[0];
            wy[i] = w[1];
        }
        ck_expect(gx, 1, shape, wx, cases[c].tol);
        ck_expect(gy, 1, shape, wy, cases[c].tol);
        weft_tensor_release(gx);
        weft_tensor_release(gy);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verify_grad_holomorphic_kinds),
        cmocka_unit_test(test_exact_gradients),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
