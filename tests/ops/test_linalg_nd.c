/* Tests of weft_pinv and weft_matrix_power (weft/linalg_lapack.h) on stacks
 * with two batch axes: values against NumPy 1.24 constants, the error for
 * unknown lengths above one batch axis, and gradients through
 * weft_verify_grad. */
#include "ops_check.h"
#include "ops_fixture.h" /* fx_setup, fx_teardown: *state is the graph */
#include "weft/linalg_lapack.h"

static const int64_t s2222[4] = {2, 2, 2, 2};
static const double A[16] = {1, 2, 0, 1, 2, -1, 1, 1, 0, 1, 1, 1, 3, 0, 1, 2};

static weft_tensor_t *run1(weft_graph_t *g, weft_var_t *x, weft_tensor_t *xv, weft_var_t *out)
{
    weft_tensor_t *r = NULL;
    assert_non_null(out);
    assert_int_equal(ck_eval(g, 1, &x, &xv, out, &r), WEFT_OK);
    return r;
}

/* np.linalg.matrix_power(A, 3) and (A, -2) for A (2, 2, 2, 2) */
static void test_matrix_power_two_batch_axes(void **state)
{
    weft_graph_t *g = *state;
    static const double p3[16] = {1, 6, 0, 1, 3, -6, 6, -3, 1, 2, 2, 3, 27, 0, 19, 8};
    static const double m2[16] = {1, -4, 0, 1, 0, 0.3333333333333333, -0.3333333333333333,
                                  0.3333333333333333, 2, -1, -1, 1, 0.1111111111111111, 0,
                                  -0.1388888888888889, 0.25};
    weft_tensor_t *av = ck_tensor(WEFT_FLOAT64, 4, s2222, A);
    weft_var_t *a = ck_var(g, WEFT_FLOAT64, 4, s2222);
    weft_tensor_t *r = run1(g, a, av, weft_matrix_power(g, a, 3));
    ck_expect(r, 4, s2222, p3, 0);
    weft_tensor_release(r);
    r = run1(g, a, av, weft_matrix_power(g, a, -2));
    ck_expect(r, 4, s2222, m2, 1e-15);
    weft_tensor_release(r);
    weft_tensor_release(av);
}

/* np.linalg.pinv(P) for P (2, 1, 2, 3): x (2, 1, 3, 2) */
static void test_pinv_two_batch_axes(void **state)
{
    weft_graph_t *g = *state;
    static const int64_t sp[4] = {2, 1, 2, 3}, sx[4] = {2, 1, 3, 2};
    static const double p[12] = {1, 2, 3, 0, 1, 4, 2, 0, 1, 1, 1, 1};
    static const double x[12] = {0.40476190476190477, -0.3333333333333333, 0.4761904761904764,
                                 -0.3333333333333335, -0.119047619047619, 0.3333333333333334,
                                 0.5000000000000002, -0.16666666666666666, -0.5000000000000003,
                                 0.8333333333333337, 0, 0.3333333333333334};
    weft_tensor_t *pv = ck_tensor(WEFT_FLOAT64, 4, sp, p);
    weft_var_t *pp = ck_var(g, WEFT_FLOAT64, 4, sp);
    weft_tensor_t *r = run1(g, pp, pv, weft_pinv(g, pp, 1e-15));
    ck_expect(r, 4, sx, x, 1e-14);
    weft_tensor_release(r);
    weft_tensor_release(pv);
}

/* The graph's error: code, then exactly "msg (ctor at <this file>:<line>)". */
static void expect_msg(weft_graph_t *g, weft_status_t code, const char *msg, const char *ctor)
{
    const char *got = weft_graph_error_message(g);
    char head[256];
    assert_int_equal(weft_graph_error(g), code);
    snprintf(head, sizeof head, "%s (%s at ", msg, ctor);
    if (strncmp(got, head, strlen(head)) != 0) {
        print_error("message: %s\n", got);
    }
    assert_int_equal(strncmp(got, head, strlen(head)), 0);
    assert_non_null(strstr(got + strlen(head), "test_linalg_nd.c:"));
    weft_graph_clear_error(g);
}

static void test_errors(void **state)
{
    weft_graph_t *g = *state;
    int64_t su[4] = {2, 2, 2, WEFT_DIM_UNKNOWN};
    weft_var_t *u = ck_var(g, WEFT_FLOAT64, 4, su);
    weft_var_t *v = ck_var(g, WEFT_FLOAT64, 1, (int64_t[]){2});
    assert_null(weft_matrix_power(g, u, 2));
    expect_msg(g, WEFT_ENOTIMPL, "MatrixPower: input 0 has 4 dims and its last two lengths are "
                                 "not both static (a stack with more than one batch axis needs "
                                 "them)", "weft_matrix_power");
    assert_null(weft_pinv(g, u, 1e-15));
    expect_msg(g, WEFT_ENOTIMPL, "Pinv: input 0 has 4 dims and its last two lengths are not "
                                 "both static (a stack with more than one batch axis needs "
                                 "them)", "weft_pinv");
    assert_null(weft_pinv(g, v, 1e-15));
    expect_msg(g, WEFT_ETYPE, "Pinv: input 0 has 1 dims (need 2 or more)", "weft_pinv");
}

/* Batch lengths known only at run time: the same values as the static case. */
static void test_unknown_batch_lengths(void **state)
{
    weft_graph_t *g = *state;
    static const double p3[16] = {1, 6, 0, 1, 3, -6, 6, -3, 1, 2, 2, 3, 27, 0, 19, 8};
    int64_t su[4] = {WEFT_DIM_UNKNOWN, WEFT_DIM_UNKNOWN, 2, 2};
    weft_tensor_t *av = ck_tensor(WEFT_FLOAT64, 4, s2222, A);
    weft_var_t *a = ck_var(g, WEFT_FLOAT64, 4, su);
    weft_var_t *x = weft_matrix_power(g, a, 3);
    assert_int_equal(weft_type_dim(weft_var_type(x), 0), WEFT_DIM_UNKNOWN);
    weft_tensor_t *r = run1(g, a, av, x);
    ck_expect(r, 4, s2222, p3, 0);
    weft_tensor_release(r);
    x = weft_pinv(g, a, 1e-15);
    r = run1(g, a, av, x);
    weft_tensor_t *r2 = run1(g, a, av, weft_matrix_power(g, a, -1));
    ck_expect(r, 4, s2222, weft_tensor_data(r2), 1e-14); /* pinv = inv for invertible a */
    weft_tensor_release(r);
    weft_tensor_release(r2);
    weft_tensor_release(av);
}

/* Empty matrices (order 0) keep their stack shape, as NumPy's. */
static void test_empty_matrices(void **state)
{
    weft_graph_t *g = *state;
    int64_t s0[4] = {2, 3, 0, 0}, sp[4] = {2, 3, 2, 0}, st[4] = {2, 3, 0, 2};
    weft_tensor_t *av = ck_tensor(WEFT_FLOAT64, 4, s0, NULL);
    weft_tensor_t *pv = ck_tensor(WEFT_FLOAT64, 4, sp, NULL);
    weft_var_t *a = ck_var(g, WEFT_FLOAT64, 4, s0), *p = ck_var(g, WEFT_FLOAT64, 4, sp);
    weft_tensor_t *r = run1(g, a, av, weft_matrix_power(g, a, 3));
    ck_expect(r, 4, s0, NULL, 0);
    weft_tensor_release(r);
    r = run1(g, p, pv, weft_pinv(g, p, 1e-15));
    ck_expect(r, 4, st, NULL, 0);
    weft_tensor_release(r);
    weft_tensor_release(av);
    weft_tensor_release(pv);
}

/* ---- gradients -------------------------------------------------------------------- */

static weft_var_t *nd_fn(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    int k = *(const int *)user;
    (void)n;
    if (k == 2) {
        return weft_pinv(g, in[0], 1e-15);
    }
    /* a + 3 I: well conditioned for the inverse */
    static const double id[4] = {3, 0, 0, 3};
    const weft_type_t *mt = NULL;
    assert_int_equal(weft_type_tensor(g, WEFT_FLOAT64, 2, (int64_t[]){2, 2}, &mt), WEFT_OK);
    weft_var_t *a = weft_add(g, in[0], weft_constant_create(g, mt, id, sizeof id));
    return weft_matrix_power(g, a, k == 0 ? 3 : -2);
}

static void test_grads_verify(void **state)
{
    (void)state;
    static const int64_t sp[4] = {2, 2, 3, 2};
    for (int k = 0; k < 3; k++) {
        weft_tensor_t *pt = ck_random(WEFT_FLOAT64, 4, k == 2 ? sp : s2222, -1, 1, 300 + k);
        ck_verify(nd_fn, &k, 1, &pt);
        weft_tensor_release(pt);
    }
}

#define T(name) cmocka_unit_test_setup_teardown(name, fx_setup, fx_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_matrix_power_two_batch_axes),
        T(test_pinv_two_batch_axes),
        T(test_errors),
        T(test_unknown_batch_lengths),
        T(test_empty_matrices),
        cmocka_unit_test(test_grads_verify),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
