/* Tests of the nn ops (weft/nn.h): Softmax/LogSoftmax values at extreme
 * inputs (the constants computed with NumPy), the composed activations
 * against a 900-digit reference (Python's decimal), the cross-entropies and
 * layer norm, dtypes and error messages, gradients through weft_verify_grad,
 * same bits at 1/2/4 workers, JSON, and the stabilization rewrites of
 * fast_run (lib/rewrite/stabilize.c: they fire, are logged, and turn an
 * overflow into a finite value). */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ops_check.h"
#include "ops_threads.h"

static weft_graph_t *G;

static int setup(void **state)
{
    (void)state;
    assert_int_equal(weft_graph_create(NULL, &G), WEFT_OK);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    weft_graph_destroy(G);
    return 0;
}

/* ck_expect_eval on the file's graph */
/* (variadic: the arguments hold compound literals, whose commas split
 * macro arguments) */
#define expect(...) ck_expect_eval(G, __VA_ARGS__)

/* Each element of y(x) within `ulps` units in the last place of want
 * (subnormal and zero results exactly). */
static void expect_ulps(weft_var_t *x, weft_tensor_t *xv, weft_var_t *y, size_t n,
                        const double *want, int ulps)
{
    weft_tensor_t *r = NULL;
    assert_non_null(y);
    assert_int_equal(ck_eval(G, 1, &x, &xv, y, &r), WEFT_OK);
    const double *got = weft_tensor_data(r);
    for (size_t i = 0; i < n; i++) {
        double tol = want[i] == 0 || fabs(want[i]) < 2.3e-308
                         ? 0
                         : ulps * (nextafter(fabs(want[i]), INFINITY) - fabs(want[i]));
        if (!(got[i] == want[i] || fabs(got[i] - want[i]) <= tol)) {
            print_error("element %zu: got %.17g, want %.17g\n", i, got[i], want[i]);
            fail();
        }
    }
    weft_tensor_release(r);
}

/* ---- Softmax / LogSoftmax ---------------------------------------------- */

static void test_softmax_values_at_extreme_inputs(void **state)
{
    (void)state;
    int64_t s[2] = {2, 4};
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT64, 2, s,
                                  (double[]){1, 2, 3, 4, 1000, -1000, 0, -INFINITY});
    weft_var_t *x = ck_var(G, WEFT_FLOAT64, 2, s);
    expect(x, xv, weft_softmax(G, x, -1), WEFT_FLOAT64, 2, s,
           (double[]){0.03205860328008498, 0.08714431874203256, 0.23688281808991016,
                      0.6439142598879724, 1.0, 0.0, 0.0, 0.0}, 1e-15);
    expect(x, xv, weft_log_softmax(G, x, 1), WEFT_FLOAT64, 2, s,
           (double[]){-3.4401896985611953, -2.4401896985611953, -1.4401896985611953,
                      -0.44018969856119533, 0.0, -2000.0, -1000.0, -INFINITY}, 1e-15);
    expect(x, xv, weft_softmax(G, x, 0), WEFT_FLOAT64, 2, s,
           (double[]){0.0, 1.0, 0.9525741268224334, 1.0, 1.0, 0.0, 0.04742587317756678, 0.0},
           1e-15);
    expect(x, xv, weft_log_softmax(G, x, -2), WEFT_FLOAT64, 2, s,
           (double[]){-999.0, 0.0, -0.04858735157374197, 0.0, 0.0, -1002.0, -3.048587351573742,
                      -INFINITY}, 1e-15);
    weft_tensor_release(xv);
}

/* NumPy's formula: a lane holding NaN, +inf, or only -inf is NaN. */
static void test_softmax_nan_and_infinite_lanes(void **state)
{
    (void)state;
    int64_t s[2] = {3, 3};
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT64, 2, s,
                                  (double[]){NAN, 0, 1, INFINITY, 0, 1, -INFINITY, -INFINITY,
                                             -INFINITY});
    weft_var_t *x = ck_var(G, WEFT_FLOAT64, 2, s);
    double nan9[9] = {NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN};
    expect(x, xv, weft_softmax(G, x, 1), WEFT_FLOAT64, 2, s, nan9, 0);
    expect(x, xv, weft_log_softmax(G, x, 1), WEFT_FLOAT64, 2, s, nan9, 0);
    weft_tensor_release(xv);
}

static void test_softmax_float32_and_middle_axis(void **state)
{
    (void)state;
    int64_t s[3] = {2, 3, 2};
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT32, 3, s,
                                  (double[]){0, 1, 1, 2, 2, 3, 100, -100, 100, -100, 100, -100});
    weft_var_t *x = ck_var(G, WEFT_FLOAT32, 3, s);
    double a = 0.09003057317038046, b = 0.24472847105479767, c = 0.6652409557748219;
    expect(x, xv, weft_softmax(G, x, 1), WEFT_FLOAT32, 3, s,
           (double[]){a, a, b, b, c, c, 1.0 / 3, 1.0 / 3, 1.0 / 3, 1.0 / 3, 1.0 / 3, 1.0 / 3},
           1e-7);
    expect(x, xv, weft_log_softmax(G, x, 1), WEFT_FLOAT32, 3, s,
           (double[]){log(a), log(a), log(b), log(b), log(c), log(c), -log(3), -log(3), -log(3),
                      -log(3), -log(3), -log(3)}, 1e-7);
    weft_tensor_release(xv);
}

static void test_softmax_errors(void **state)
{
    (void)state;
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    const weft_type_t *ti = NULL, *tf = NULL;
    assert_int_equal(weft_type_tensor(g, WEFT_INT32, 2, NULL, &ti), WEFT_OK);
    assert_int_equal(weft_type_tensor(g, WEFT_FLOAT64, 2, NULL, &tf), WEFT_OK);
    weft_var_t *xi = weft_var_create_at(g, ti, "xi", "model.c", 4);
    assert_null(weft_softmax_op_at(g, false, xi, 1, "f.c", 9));
    assert_int_equal(weft_graph_error(g), WEFT_ETYPE);
    assert_string_equal(weft_graph_error_message(g),
                        "Softmax (at f.c:9): input xi (created at model.c:4) has dtype int32 "
                        "(need float32 or float64; cast it first)");
    weft_graph_destroy(g);
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    assert_int_equal(weft_type_tensor(g, WEFT_FLOAT64, 2, NULL, &tf), WEFT_OK);
    weft_var_t *x = weft_var_create_at(g, tf, "x", "model.c", 5);
    assert_null(weft_softmax_op_at(g, true, x, 2, "f.c", 9));
    assert_int_equal(weft_graph_error(g), WEFT_EINVAL);
    assert_string_equal(weft_graph_error_message(g),
                        "LogSoftmax (at f.c:9): axis 2 out of range for input x with 2 dims "
                        "(created at model.c:5)");
    assert_null(weft_softmax(g, NULL, 0)); /* a NULL input adds no second error */
    assert_string_equal(weft_graph_error_message(g),
                        "LogSoftmax (at f.c:9): axis 2 out of range for input x with 2 dims "
                        "(created at model.c:5)");
    weft_graph_destroy(g);
}

/* ---- the composed activations ------------------------------------------- */

#define N_PTS 16
static const double pts[N_PTS] = {-1000, -800, -745, -40, -1, -1e-20, 0, 1e-20,
                                  0.5,   1,    20,   37,  40, 709,    710, 1000};

static void test_softplus_and_log_sigmoid_never_overflow(void **state)
{
    (void)state;
    int64_t s[1] = {N_PTS};
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT64, 1, s, pts);
    weft_var_t *x = ck_var(G, WEFT_FLOAT64, 1, s);
    expect_ulps(x, xv, weft_softplus(G, x), N_PTS,
                (double[]){0.0, 0.0, 5e-324, 4.248354255291589e-18, 0.3132616875182228,
                           0.6931471805599453, 0.6931471805599453, 0.6931471805599453,
                           0.9740769841801067, 1.3132616875182228, 20.000000002061153, 37.0,
                           40.0, 709.0, 710.0, 1000.0}, 1);
    expect_ulps(x, xv, weft_log_sigmoid(G, x), N_PTS,
                (double[]){-1000.0, -800.0, -745.0, -40.0, -1.3132616875182228,
                           -0.6931471805599453, -0.6931471805599453, -0.6931471805599453,
                           -0.4740769841801067, -0.3132616875182228, -2.061153620314381e-09,
                           -8.533047625744066e-17, -4.248354255291589e-18,
                           -1.216780750623423e-308, -4.47628622567513e-309, -0.0}, 1);
    weft_tensor_release(xv);
}

static void test_silu_gelu_and_binary_cross_entropy(void **state)
{
    (void)state;
    int64_t s[1] = {5};
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT64, 1, s, (double[]){-1000, -1, 0, 1, 1000});
    weft_var_t *x = ck_var(G, WEFT_FLOAT64, 1, s);
    expect_ulps(x, xv, weft_silu(G, x), 5,
                (double[]){-0.0, -0.2689414213699951, 0.0, 0.7310585786300049, 1000.0}, 1);
    /* torch.nn.functional.gelu(x, approximate="tanh") in float64 */
    expect(x, xv, weft_gelu(G, x, true), WEFT_FLOAT64, 1, s,
           (double[]){-0.0, -0.15880800939172324, 0.0, 0.8411919906082768, 1000.0}, 1e-15);
    weft_var_t *ge = weft_gelu(G, x, false);
    if (weft_ops_find_class("Erf")) { /* the float math kinds are in this build */
        expect(x, xv, ge, WEFT_FLOAT64, 1, s,
               (double[]){-0.0, -0.15865525393145707, 0.0, 0.8413447460685429, 1000.0}, 1e-15);
    } else {
        weft_graph_t *g = NULL;
        assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
        weft_var_t *y = ck_var(g, WEFT_FLOAT64, 1, s);
        assert_null(weft_activation_at(g, WEFT_ACT_GELU, y, "f.c", 3));
        assert_int_equal(weft_graph_error(g), WEFT_ENOTIMPL);
        assert_string_equal(weft_graph_error_message(g),
                            "weft_gelu (at f.c:3): the exact gelu needs the Erf elementwise "
                            "kind, not in this build (pass approximate = true for the tanh "
                            "form)");
        weft_graph_destroy(g);
    }
    /* BCE(z, y) for y = 0.25: softplus(z) - z/4 */
    weft_var_t *y = weft_scalar_add(G, 0.25, weft_zeros_like(G, x));
    expect_ulps(x, xv, weft_binary_cross_entropy_with_logits(G, x, y), 5,
                (double[]){250.0, 0.5632616875182228, 0.6931471805599453, 1.0632616875182228,
                           750.0}, 1);
    weft_tensor_release(xv);
}

/* ---- cross-entropy and layer norm --------------------------------------- */

static void test_softmax_cross_entropy_float_and_int_labels(void **state)
{
    (void)state;
    int64_t s[2] = {2, 3}, s1[1] = {2};
    weft_tensor_t *zv = ck_tensor(WEFT_FLOAT64, 2, s, (double[]){1, 2, 3, 1000, -1000, 0});
    weft_var_t *z = ck_var(G, WEFT_FLOAT64, 2, s);
    /* class indices (argmin: 0 and 1) -> -log_softmax there */
    weft_var_t *lab = weft_cast(G, weft_argmin(G, z, 1, false), WEFT_INT32);
    expect(z, zv, weft_softmax_cross_entropy(G, z, lab, -1), WEFT_FLOAT64, 1, s1,
           (double[]){2.40760596444438, 2000.0}, 1e-15);
    /* one-hot probabilities (classes 2 and 1) */
    const weft_type_t *t = NULL;
    assert_int_equal(weft_type_tensor(G, WEFT_FLOAT64, 2, s, &t), WEFT_OK);
    double oh[6] = {0, 0, 1, 0, 1, 0};
    weft_var_t *p = weft_constant_create(G, t, oh, sizeof oh);
    expect(z, zv, weft_softmax_cross_entropy(G, z, p, 1), WEFT_FLOAT64, 1, s1,
           (double[]){0.40760596444438, 2000.0}, 1e-15);
    weft_tensor_release(zv);
}

static void test_cross_entropy_errors(void **state)
{
    (void)state;
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    const weft_type_t *tf = NULL, *ti = NULL;
    assert_int_equal(weft_type_tensor(g, WEFT_FLOAT64, 2, NULL, &tf), WEFT_OK);
    assert_int_equal(weft_type_tensor(g, WEFT_INT64, 2, NULL, &ti), WEFT_OK);
    weft_var_t *z = weft_var_create_at(g, tf, "z", "model.c", 4);
    weft_var_t *y = weft_var_create_at(g, ti, "y", "model.c", 5);
    assert_null(weft_softmax_cross_entropy_at(g, z, y, 1, "f.c", 7));
    assert_int_equal(weft_graph_error(g), WEFT_ESHAPE);
    assert_string_equal(weft_graph_error_message(g),
                        "weft_softmax_cross_entropy (at f.c:7): integer labels y (created at "
                        "model.c:5) need 1 dims (logits have 2)");
    weft_graph_destroy(g);
}

static void test_layer_norm_values(void **state)
{
    (void)state;
    int64_t s[2] = {2, 4}, s1[1] = {4};
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT64, 2, s,
                                  (double[]){1, 2, 3, 4, 1e8 + 1, 1e8 + 2, 1e8 + 3, 1e8 + 4});
    weft_var_t *x = ck_var(G, WEFT_FLOAT64, 2, s);
    const weft_type_t *t = NULL;
    assert_int_equal(weft_type_tensor(G, WEFT_FLOAT64, 1, s1, &t), WEFT_OK);
    weft_var_t *sc = weft_constant_create(G, t, ((double[]){1, 2, 1, 2}), 4 * sizeof(double));
    weft_var_t *b = weft_constant_create(G, t, ((double[]){0, 0, 10, 10}), 4 * sizeof(double));
    /* np: (x - m) / np.sqrt(x.var(-1, keepdims=True) + 1e-5) * sc + b */
    double k = 1.0 / sqrt(1.25 + 1e-5);
    expect(x, xv, weft_layer_norm(G, x, 1, sc, b, 1e-5), WEFT_FLOAT64, 2, s,
           (double[]){-1.5 * k, -1.0 * k, 10 + 0.5 * k, 10 + 3.0 * k, -1.5 * k, -1.0 * k,
                      10 + 0.5 * k, 10 + 3.0 * k}, 1e-12);
    weft_tensor_release(xv);
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    weft_var_t *y = ck_var(g, WEFT_FLOAT64, 2, s);
    assert_null(weft_layer_norm_at(g, y, 3, NULL, NULL, 1e-5, "f.c", 8));
    assert_string_equal(weft_graph_error_message(g),
                        "weft_layer_norm (at f.c:8): n_axes 3 out of range for an input with 2 "
                        "dims (need 1..2)");
    weft_graph_destroy(g);
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    y = ck_var(g, WEFT_FLOAT64, 2, s);
    assert_null(weft_layer_norm_at(g, y, 1, NULL, NULL, -1.0, "f.c", 9));
    assert_string_equal(weft_graph_error_message(g),
                        "weft_layer_norm (at f.c:9): eps -1 must be finite and >= 0");
    weft_graph_destroy(g);
}

/* ---- gradients ----------------------------------------------------------- */

static weft_var_t *f_softmax(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    (void)n;
    int axis = *(const int *)user;
    return weft_mul(g, weft_softmax(g, in[0], axis), weft_sin(g, in[0]));
}
static weft_var_t *f_log_softmax(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    (void)n;
    int axis = *(const int *)user;
    return weft_mul(g, weft_log_softmax(g, in[0], axis), weft_cos(g, in[0]));
}
static weft_var_t *f_act(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    (void)n;
    return weft_activation_at(g, *(const weft_activation_t *)user, in[0], __FILE__, __LINE__);
}
static weft_var_t *f_xent(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    (void)n;
    (void)user;
    return weft_softmax_cross_entropy(g, in[0], weft_softmax(g, in[1], 1), 1);
}
static weft_var_t *f_bce(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    (void)n;
    (void)user;
    return weft_binary_cross_entropy_with_logits(g, in[0], weft_sigmoid(g, in[1]));
}
static weft_var_t *f_layer_norm(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    (void)n;
    (void)user;
    return weft_layer_norm(g, in[0], 1, in[1], in[2], 1e-3);
}

static void test_gradients(void **state)
{
    (void)state;
    int64_t s[2] = {3, 4}, s1[1] = {4};
    weft_tensor_t *xv = ck_random(WEFT_FLOAT64, 2, s, -2, 2, ck_seed("nn_grad"));
    weft_tensor_t *yv = ck_random(WEFT_FLOAT64, 2, s, -2, 2, ck_seed("nn_grad2"));
    weft_tensor_t *sv = ck_random(WEFT_FLOAT64, 1, s1, 0.5, 2, ck_seed("nn_grad3"));
    weft_tensor_t *bv = ck_random(WEFT_FLOAT64, 1, s1, -1, 1, ck_seed("nn_grad4"));
    for (int axis = -1; axis <= 0; axis++) {
        ck_verify(f_softmax, &axis, 1, &xv);
        ck_verify(f_log_softmax, &axis, 1, &xv);
    }
    for (int a = WEFT_ACT_SOFTPLUS; a <= WEFT_ACT_GELU_TANH; a++) {
        weft_activation_t act = (weft_activation_t)a;
        if (act != WEFT_ACT_GELU || weft_ops_find_class("Erf")) ck_verify(f_act, &act, 1, &xv);
    }
    ck_verify(f_xent, NULL, 2, (weft_tensor_t *[]){xv, yv});
    ck_verify(f_bce, NULL, 2, (weft_tensor_t *[]){xv, yv});
    ck_verify(f_layer_norm, NULL, 3, (weft_tensor_t *[]){xv, sv, bv});
    weft_tensor_release(xv);
    weft_tensor_release(yv);
    weft_tensor_release(sv);
    weft_tensor_release(bv);
}

/* The softmax cross-entropy's gradient is softmax - onehot (rows of p sum
 * to 1), exactly as PyTensor's crossentropy_softmax_1hot grad. */
static void test_cross_entropy_gradient_is_softmax_minus_onehot(void **state)
{
    (void)state;
    int64_t s[2] = {2, 3};
    weft_tensor_t *zv = ck_tensor(WEFT_FLOAT64, 2, s, (double[]){1, 2, 3, 1000, -1000, 0});
    weft_var_t *z = ck_var(G, WEFT_FLOAT64, 2, s);
    weft_var_t *lab = weft_cast(G, weft_argmin(G, z, 1, false), WEFT_INT64);
    weft_var_t *loss = weft_sum(G, weft_softmax_cross_entropy(G, z, lab, 1), 0, NULL, false);
    weft_var_t *gz = weft_grad(G, loss, z);
    expect(z, zv, gz, WEFT_FLOAT64, 2, s,
           (double[]){0.09003057317038046 - 1, 0.24472847105479767, 0.6652409557748219, 1.0,
                      -1.0, 0.0}, 1e-15);
    weft_tensor_release(zv);
}

/* ---- same bits at 1, 2 and 4 workers; JSON ------------------------------ */

static void test_large_softmax_same_bits_at_1_2_4_workers(void **state)
{
    (void)state;
    int64_t s[3] = {40, 301, 70}; /* 70 columns: one full block of 64 and a short one */
    weft_tensor_t *xv = ck_random(WEFT_FLOAT64, 3, s, -30, 30, ck_seed("nn_threads"));
    weft_var_t *x = ck_var(G, WEFT_FLOAT64, 3, s);
    weft_var_t *outs[4] = {weft_softmax(G, x, -1), weft_log_softmax(G, x, 1),
                           weft_softmax(G, x, 0), weft_log_softmax(G, x, 2)};
    ck_same_bits_at_1_2_4(G, x, xv, 4, outs);
    weft_tensor_release(xv);
}

static void test_json_round_trip(void **state)
{
    (void)state;
    int64_t s[2] = {2, 3};
    weft_graph_t *g = NULL, *g2 = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    weft_var_t *x = ck_var(g, WEFT_FLOAT64, 2, s);
    weft_var_t *outs[2] = {weft_softmax(g, x, 0), weft_log_softmax(g, x, -1)};
    weft_graph_io_t io = {1, &x, NULL, 2, outs, 0, NULL}, back;
    char *text = NULL;
    assert_int_equal(weft_graph_io_save(&io, &text), WEFT_OK);
    assert_non_null(strstr(text, "{\"op\":\"Softmax\",\"props\":{\"ndim\":2,\"axis\":0,\"inplace\":false}"));
    assert_non_null(strstr(text, "\"LogSoftmax\",\"props\":{\"ndim\":2,\"axis\":1,\"inplace\":false}"));
    assert_int_equal(weft_graph_create(NULL, &g2), WEFT_OK);
    assert_int_equal(weft_graph_io_load(g2, text, strlen(text), NULL, &back), WEFT_OK);
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT64, 2, s, (double[]){0.5, -2, 3, 7, 1, -1});
    weft_tensor_t *r1[2] = {NULL}, *r2[2] = {NULL};
    assert_int_equal(weft_eval(g, 1, &x, &xv, 2, outs, r1), WEFT_OK);
    assert_int_equal(weft_eval(g2, 1, back.inputs, &xv, 2, back.outputs, r2), WEFT_OK);
    for (int i = 0; i < 2; i++) {
        assert_memory_equal(weft_tensor_data(r1[i]), weft_tensor_data(r2[i]), 6 * sizeof(double));
        weft_tensor_release(r1[i]);
        weft_tensor_release(r2[i]);
    }
    weft_tensor_release(xv);
    weft_graph_io_clear(&back);
    weft_graph_io_free_text(text);
    weft_graph_destroy(g);
    weft_graph_destroy(g2);
}

/* fast_run makes Softmax/LogSoftmax of an intermediate in place (into the
 * buffer of x * 2), with mode none's bits, along the last and a middle axis. */
static void test_softmax_in_place(void **state)
{
    (void)state;
    int64_t s[3] = {3, 70, 5};
    weft_tensor_t *xv = ck_random(WEFT_FLOAT64, 3, s, -300, 300, ck_seed("nn_inplace"));
    weft_var_t *x = ck_var(G, WEFT_FLOAT64, 3, s);
    for (int k = 0; k < 4; k++) {
        weft_var_t *y = weft_softmax_op_at(G, k & 1, weft_mul_scalar(G, x, 2.0), k < 2 ? -1 : 1,
                                           __FILE__, __LINE__);
        weft_tensor_t *r[2] = {NULL, NULL};
        for (int m = 0; m < 2; m++) {
            weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
            o.mode = m ? "fast_run" : "none";
            weft_function_t *fn = NULL;
            assert_int_equal(weft_function_compile(1, &x, 1, &y, 0, NULL, &o, &fn), WEFT_OK);
            char *prog = NULL;
            size_t n = 0;
            FILE *pf = open_memstream(&prog, &n);
            assert_int_equal(weft_function_print(fn, pf), WEFT_OK);
            fclose(pf);
            bool in_place = strstr(prog, "Softmax{axis=2, inplace=0}") ||
                            strstr(prog, "Softmax{axis=1, inplace=0}");
            assert_true(in_place == (m == 1));
            free(prog);
            assert_int_equal(weft_function_call(fn, 1, &xv, 1, &r[m]), WEFT_OK);
            assert_int_equal(weft_function_destroy(fn), WEFT_OK);
        }
        assert_memory_equal(weft_tensor_data(r[0]), weft_tensor_data(r[1]),
                            weft_tensor_size(r[0]) * sizeof(double));
        weft_tensor_release(r[0]);
        weft_tensor_release(r[1]);
    }
    weft_tensor_release(xv);
}

/* The composed activations run as one fused loop in fast_run. */
static void test_activations_fuse_into_one_node(void **state)
{
    (void)state;
    weft_var_t *x = ck_var(G, WEFT_FLOAT64, 1, (int64_t[]){8});
    for (int a = WEFT_ACT_SOFTPLUS; a <= WEFT_ACT_GELU_TANH; a++) {
        if (a == WEFT_ACT_GELU && !weft_ops_find_class("Erf")) continue;
        weft_var_t *y = weft_activation_at(G, (weft_activation_t)a, x, __FILE__, __LINE__);
        weft_function_t *fn = NULL;
        assert_int_equal(weft_function_compile(1, &x, 1, &y, 0, NULL, NULL, &fn), WEFT_OK);
        assert_int_equal(weft_function_n_nodes(fn), 1);
        assert_int_equal(weft_function_destroy(fn), WEFT_OK);
    }
}

/* ---- stabilization rewrites (fast_run) ---------------------------------- */

/* Compiles out(x) in fast_run (exclude: NULL or one name/tag), logging the
 * rewrites; checks the log names `rewrite` (NULL: no check), the compiled
 * graph holds `op` and not `gone` (either NULL: no check), and evaluates at
 * xv into *res. */
static void compile_check(weft_var_t *x, weft_var_t *out, const char *exclude, const char *rewrite,
                          const char *op, const char *gone, weft_tensor_t *xv,
                          weft_tensor_t **res)
{
    char *logbuf = NULL, *prog = NULL;
    size_t logn = 0, progn = 0;
    FILE *log = open_memstream(&logbuf, &logn);
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.rewrite_log = log;
    o.n_exclude = exclude ? 1 : 0;
    o.exclude = exclude ? (const char *const[]){exclude} : NULL;
    weft_function_t *fn = NULL;
    assert_int_equal(weft_function_compile(1, &x, 1, &out, 0, NULL, &o, &fn), WEFT_OK);
    fclose(log);
    FILE *pf = open_memstream(&prog, &progn);
    assert_int_equal(weft_function_print(fn, pf), WEFT_OK);
    fclose(pf);
    if (rewrite) {
        char want[128];
        snprintf(want, sizeof want, "rewriting: rewrite %s replaces", rewrite);
        if (!strstr(logbuf, want)) {
            print_error("no '%s' in the log:\n%s", want, logbuf);
            fail();
        }
    }
    if ((op && !strstr(prog, op)) || (gone && strstr(prog, gone))) {
        print_error("compiled graph (want %s, not %s):\n%s", op ? op : "-", gone ? gone : "-",
                    prog);
        fail();
    }
    *res = NULL; /* a non-NULL output would be written into */
    assert_int_equal(weft_function_call(fn, 1, &xv, 1, res), WEFT_OK);
    assert_int_equal(weft_function_destroy(fn), WEFT_OK);
    free(logbuf);
    free(prog);
}

/* out(x) at xv in fast_run equals want (rewritten); with fast_math excluded
 * it is mode none's `plain` (the overflowing value). */
static void stab_case(weft_var_t *x, weft_var_t *out, const char *rewrite, const char *op,
                      const char *gone, int n, const double *xs, const double *want,
                      const double *plain)
{
    int64_t s[1] = {n};
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT64, 1, s, xs), *r = NULL;
    compile_check(x, out, NULL, rewrite, op, gone, xv, &r);
    ck_expect(r, 1, s, want, 1e-15);
    weft_tensor_release(r);
    compile_check(x, out, "fast_math", NULL, NULL, NULL, xv, &r);
    ck_expect(r, 1, s, plain, 0);
    weft_tensor_release(r);
    weft_tensor_release(xv);
}

static void test_rewrite_log_sigmoid(void **state)
{
    (void)state;
    weft_var_t *x = ck_var(G, WEFT_FLOAT64, 1, (int64_t[]){3});
    stab_case(x, weft_log(G, weft_sigmoid(G, x)), "local_log_sigmoid", "Log1p", "Sigmoid", 3,
              (double[]){-800, 0, 800}, (double[]){-800, -0.6931471805599453, 0},
              (double[]){-INFINITY, -0.6931471805599453, 0});
}

static void test_rewrite_log1p(void **state)
{
    (void)state;
    weft_var_t *x = ck_var(G, WEFT_FLOAT64, 1, (int64_t[]){2});
    stab_case(x, weft_log(G, weft_scalar_add(G, 1.0, x)), "local_log1p", "Log1p", NULL, 2,
              (double[]){1e-20, 1}, (double[]){1e-20, 0.6931471805599453},
              (double[]){0, 0.6931471805599453});
    weft_var_t *y = ck_var(G, WEFT_FLOAT64, 1, (int64_t[]){2});
    stab_case(y, weft_log(G, weft_add_scalar(G, y, 1.0)), "local_log1p", "Log1p", NULL, 2,
              (double[]){-1e-30, 3}, (double[]){-1e-30, 1.3862943611198906},
              (double[]){0, 1.3862943611198906});
}

static void test_rewrite_log_softmax(void **state)
{
    (void)state;
    weft_var_t *x = ck_var(G, WEFT_FLOAT64, 1, (int64_t[]){3});
    stab_case(x, weft_log(G, weft_softmax(G, x, 0)), "local_log_softmax", "LogSoftmax",
              ": Softmax", 3, (double[]){0, 1000, -1000}, (double[]){-1000, 0, -2000},
              (double[]){-INFINITY, 0, -INFINITY});
}

static void test_rewrite_log_sum_exp(void **state)
{
    (void)state;
    int64_t s[2] = {1, 2};
    weft_var_t *x = ck_var(G, WEFT_FLOAT64, 1, (int64_t[]){2});
    /* log(sum(exp(x))) over the only axis, keepdims */
    int a0 = 0;
    weft_var_t *lse = weft_log(G, weft_sum(G, weft_exp(G, x), 1, &a0, true));
    (void)s;
    int64_t s1[1] = {1};
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT64, 1, (int64_t[]){2}, (double[]){1000, 1000}), *r = NULL;
    compile_check(x, lse, NULL, "local_log_sum_exp", "LogSumExp", "Exp(", xv, &r);
    ck_expect(r, 1, s1, (double[]){1000.6931471805599453}, 1e-15);
    weft_tensor_release(r);
    compile_check(x, lse, "fast_math", NULL, NULL, "LogSumExp", xv, &r);
    ck_expect(r, 1, s1, (double[]){INFINITY}, 0);
    weft_tensor_release(r);
    /* the max-shifted form m + log(sum(exp(x - m))) becomes one LogSumExp */
    weft_var_t *m = weft_max(G, x, 1, &a0, true);
    weft_var_t *sh = weft_add(G, m, weft_log(G, weft_sum(G, weft_exp(G, weft_sub(G, x, m)), 1,
                                                         &a0, true)));
    compile_check(x, sh, NULL, "local_log_sum_exp_shifted", "LogSumExp", "Max{", xv, &r);
    ck_expect(r, 1, s1, (double[]){1000.6931471805599453}, 1e-15);
    weft_tensor_release(r);
    weft_tensor_release(xv);
}

/* exp(x) - 1 -> expm1(x) once the Expm1 kind is in the build; before, the
 * graph is left as it is. */
static void test_rewrite_expm1(void **state)
{
    (void)state;
    weft_var_t *x = ck_var(G, WEFT_FLOAT64, 1, (int64_t[]){1});
    weft_var_t *y = weft_sub_scalar(G, weft_exp(G, x), 1.0);
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT64, 1, (int64_t[]){1}, (double[]){1e-20}), *r = NULL;
    bool have = weft_ops_find_class("Expm1") != NULL;
    compile_check(x, y, NULL, have ? "local_expm1" : NULL, have ? "Expm1" : "Exp", NULL, xv, &r);
    ck_expect(r, 1, (int64_t[]){1}, (double[]){have ? 1e-20 : 0.0}, 0);
    weft_tensor_release(r);
    weft_tensor_release(xv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_softmax_values_at_extreme_inputs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_softmax_nan_and_infinite_lanes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_softmax_float32_and_middle_axis, setup, teardown),
        cmocka_unit_test(test_softmax_errors),
        cmocka_unit_test_setup_teardown(test_softplus_and_log_sigmoid_never_overflow, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_silu_gelu_and_binary_cross_entropy, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_softmax_cross_entropy_float_and_int_labels, setup,
                                        teardown),
        cmocka_unit_test(test_cross_entropy_errors),
        cmocka_unit_test_setup_teardown(test_layer_norm_values, setup, teardown),
        cmocka_unit_test(test_gradients),
        cmocka_unit_test_setup_teardown(test_cross_entropy_gradient_is_softmax_minus_onehot,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_large_softmax_same_bits_at_1_2_4_workers, setup,
                                        teardown),
        cmocka_unit_test(test_json_round_trip),
        cmocka_unit_test_setup_teardown(test_softmax_in_place, setup, teardown),
        cmocka_unit_test_setup_teardown(test_activations_fuse_into_one_node, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rewrite_log_sigmoid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rewrite_log1p, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rewrite_log_softmax, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rewrite_log_sum_exp, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rewrite_expm1, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
