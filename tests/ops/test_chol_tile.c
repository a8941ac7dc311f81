/* The tile Cholesky behind weft_cholesky for orders >= 1024
 * (lib/ops/linalg/linalg_chol_tile.c): the same bits in compiled functions on
 * 1, 2 and 4 workers, agreement to rounding with one one-thread ?potrf
 * call (in other bits: the tiles ran), L L^T = A on sampled
 * entries with a zero upper triangle, and the not-positive-definite error
 * naming the failing minor's order counted from the matrix's start. */
#include <lapacke.h>
#include <math.h>

#include "ops_check.h"
#include "ops_fixture.h" /* fx_setup, fx_teardown: *state is the graph */
#include "weft/function.h"
#include "weft/linalg.h"

#define ORDER 1100 /* 4 full tiles of 256 and a short one */

/* spd = x x^T / ORDER + I for x uniform in [-1, 1), evaluated once. */
static weft_tensor_t *spd_matrix(weft_graph_t *g)
{
    int64_t s[2] = {ORDER, ORDER};
    weft_tensor_t *xv = ck_random(WEFT_FLOAT64, 2, s, -1, 1, 91), *av = NULL;
    weft_var_t *x = ck_var(g, WEFT_FLOAT64, 2, s);
    weft_var_t *spd = weft_add(g, weft_syrk(g, x, false, 1.0 / ORDER),
                               weft_eye(g, ORDER, ORDER, 0, WEFT_FLOAT64));
    assert_int_equal(ck_eval(g, 1, &x, &xv, spd, &av), WEFT_OK);
    weft_tensor_release(xv);
    return av;
}

static weft_tensor_t *call_on(int threads, weft_var_t *a, weft_var_t *l, weft_tensor_t *av)
{
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.threads = threads;
    weft_function_t *fn = NULL;
    weft_tensor_t *r = NULL;
    assert_int_equal(weft_function_compile(1, &a, 1, &l, 0, NULL, &o, &fn), WEFT_OK);
    assert_int_equal(weft_function_call(fn, 1, &av, 1, &r), WEFT_OK);
    assert_int_equal(weft_function_destroy(fn), WEFT_OK);
    return r;
}

static void test_same_bits_any_workers_and_reconstruction(void **state)
{
    weft_graph_t *g = *state;
    int64_t s[2] = {ORDER, ORDER};
    weft_tensor_t *av = spd_matrix(g);
    weft_var_t *x = ck_var(g, WEFT_FLOAT64, 2, s), *lv = weft_cholesky(g, x);
    weft_tensor_t *l1 = call_on(1, x, lv, av);
    size_t bytes = (size_t)ORDER * ORDER * sizeof(double);
    for (int t = 2; t <= 4; t += 2) {
        weft_tensor_t *lt = call_on(t, x, lv, av);
        assert_memory_equal(weft_tensor_data(lt), weft_tensor_data(l1), bytes);
        weft_tensor_release(lt);
    }
    const double *l = weft_tensor_data(l1), *a = weft_tensor_data(av);
    uint64_t rng = 7;
    for (int k = 0; k < 400; k++) {
        int64_t i = (int64_t)(ck_rand(&rng) % ORDER), j = (int64_t)(ck_rand(&rng) % ORDER);
        if (j > i) {
            assert_true(l[i * ORDER + j] == 0.0);
            int64_t t = i;
            i = j;
            j = t;
        }
        double sum = 0;
        for (int64_t c = 0; c <= j; c++) {
            sum += l[i * ORDER + c] * l[j * ORDER + c];
        }
        assert_true(fabs(sum - a[i * ORDER + j]) < 1e-12 * ORDER);
    }
    /* one one-thread ?potrf call agrees to rounding, in other bits (another
     * blocking: the tiles did run) */
    weft_tensor_t *lp = NULL;
    weft_blas_scope_t scope;
    assert_int_equal(weft_tensor_clone(av, &lp), WEFT_OK);
    double *p = weft_tensor_data(lp);
    assert_int_equal(weft_blas_scope_enter(&scope, 1), WEFT_OK);
    assert_int_equal(LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', ORDER, p, ORDER), 0);
    weft_blas_scope_exit(&scope);
    bool differs = false;
    for (int64_t i = 0; i < ORDER; i++) {
        for (int64_t j = 0; j <= i; j++) {
            double v = p[i * ORDER + j], w = l[i * ORDER + j];
            assert_true(fabs(v - w) <= 1e-12 * (1.0 + fabs(w)));
            differs |= v != w;
        }
    }
    assert_true(differs);
    weft_tensor_release(lp);
    weft_tensor_release(l1);
    weft_tensor_release(av);
}

static void test_not_positive_definite_names_the_minor(void **state)
{
    weft_graph_t *g = *state;
    int64_t s[2] = {ORDER, ORDER};
    weft_tensor_t *av = NULL, *r = NULL;
    assert_int_equal(weft_tensor_zeros(WEFT_FLOAT64, 2, s, &av), WEFT_OK);
    double *a = weft_tensor_data(av);
    for (int64_t i = 0; i < ORDER; i++) {
        a[i * ORDER + i] = i == 700 ? -1.0 : 1.0;
    }
    weft_var_t *x = ck_var(g, WEFT_FLOAT64, 2, s);
    assert_int_equal(ck_eval(g, 1, &x, &av, weft_cholesky(g, x), &r), WEFT_ERANGE);
    const char *msg = weft_graph_last_error(g);
    const char *want = "Cholesky: the matrix is not positive definite (leading minor of order "
                       "701)";
    assert_non_null(strstr(msg, want));
    assert_null(r);
    weft_tensor_release(av);
}

#define T(name) cmocka_unit_test_setup_teardown(name, fx_setup, fx_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_same_bits_any_workers_and_reconstruction),
        T(test_not_positive_definite_names_the_minor),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
