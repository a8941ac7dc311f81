/* Tests of Solve and CholeskySolve (weft/linalg_lapack.h) on stacks whose
 * batch axes broadcast as NumPy 1.24's np.linalg.solve: b a stack of
 * vectors when its rank is a's - 1, else of matrices; values against
 * NumPy-computed constants, the static and run-time errors with their exact
 * messages, and gradients (summed over the broadcast axes) through
 * weft_verify_grad. */
#include "ops_check.h"
#include "ops_fixture.h" /* fx_setup, fx_teardown: *state is the graph */
#include "weft/linalg_lapack.h"

/* the creation site every error message names */
#define SITE "test_solve_bcast.c:"

static const int64_t sa[4] = {2, 1, 2, 2}, sbm[4] = {1, 3, 2, 1}, sbv[3] = {1, 3, 2};
static const double A[8] = {4, 1, 2, 5, 3, -1, 1, 2};
static const double B[6] = {1, 2, 0, 1, -3, 4};
/* NumPy 1.24: np.linalg.solve(A, B) for B (1,3,2,1) and (1,3,2) */
static const double X[12] = {0.16666666666666669, 0.3333333333333333, -0.05555555555555555,
                             0.2222222222222222,  -1.0555555555555556, 1.2222222222222223,
                             0.5714285714285715,  0.7142857142857143,  0.14285714285714285,
                             0.42857142857142855, -0.28571428571428575, 2.142857142857143};
/* np.linalg.solve(L @ L^T, B), L = np.tril(A) */
static const double XC[12] = {0.0325, 0.06, -0.02, 0.04, -0.2975, 0.22, -0.027777777777777783,
                              0.4166666666666667, -0.08333333333333333, 0.25, -0.75, 1.25};

static weft_var_t *var_like(weft_graph_t *g, const weft_tensor_t *t)
{
    return ck_var(g, weft_tensor_dtype(t), weft_tensor_ndim(t), weft_tensor_shape(t));
}

static void expect_solved(weft_graph_t *g, weft_var_t *a, weft_var_t *b, weft_tensor_t *av,
                          weft_tensor_t *bv, weft_var_t *x, int nd, const int64_t *shape,
                          const double *want, double tol)
{
    weft_tensor_t *r = NULL;
    assert_non_null(x);
    assert_int_equal(ck_eval(g, 2, (weft_var_t *[]){a, b}, (weft_tensor_t *[]){av, bv}, x, &r),
                     WEFT_OK);
    ck_expect(r, nd, shape, want, tol);
    weft_tensor_release(r);
}

/* a (2,1,2,2) against b (1,3,2,1) (matrices) and (1,3,2) (vectors): x
 * (2,3,2,1) and (2,3,2), in float64 and float32. */
static void test_broadcast_matches_numpy(void **state)
{
    weft_graph_t *g = *state;
    static const int64_t sxm[4] = {2, 3, 2, 1}, sxv[3] = {2, 3, 2};
    for (int f = 0; f < 2; f++) {
        weft_dtype_t dt = f ? WEFT_FLOAT32 : WEFT_FLOAT64;
        double tol = f ? 1e-6 : 1e-15;
        weft_tensor_t *av = ck_tensor(dt, 4, sa, A), *bm = ck_tensor(dt, 4, sbm, B);
        weft_tensor_t *bv = ck_tensor(dt, 3, sbv, B);
        weft_var_t *a = var_like(g, av), *m = var_like(g, bm), *v = var_like(g, bv);
        expect_solved(g, a, m, av, bm, weft_solve(g, a, m), 4, sxm, X, tol);
        expect_solved(g, a, v, av, bv, weft_solve(g, a, v), 3, sxv, X, tol);
        expect_solved(g, a, m, av, bm, weft_cholesky_solve(g, a, m), 4, sxm, XC, tol);
        expect_solved(g, a, v, av, bv, weft_cholesky_solve(g, a, v), 3, sxv, XC, tol);
        weft_tensor_release(av);
        weft_tensor_release(bm);
        weft_tensor_release(bv);
    }
}

/* One matrix against a stack of b (3,2,2): NumPy 1.24's values. */
static void test_one_matrix_many_rhs(void **state)
{
    weft_graph_t *g = *state;
    static const int64_t s22[2] = {2, 2}, s322[3] = {3, 2, 2};
    static const double b[12] = {1, 2, 0, 1, -3, 4, 2, 2, 1, 0, 0, 1};
    static const double x[12] = {0.2777777777777778, 0.5, -0.1111111111111111, 0.0,
                                 -0.9444444444444444, 1.0, 0.7777777777777777, 0.0,
                                 0.2777777777777778, -0.05555555555555555, -0.1111111111111111,
                                 0.2222222222222222};
    weft_tensor_t *av = ck_tensor(WEFT_FLOAT64, 2, s22, A);
    weft_tensor_t *bv = ck_tensor(WEFT_FLOAT64, 3, s322, b);
    weft_var_t *a = var_like(g, av), *bb = var_like(g, bv);
    expect_solved(g, a, bb, av, bv, weft_solve(g, a, bb), 3, s322, x, 1e-15);
    weft_tensor_release(av);
    weft_tensor_release(bv);
}

static void test_static_errors(void **state)
{
    weft_graph_t *g = *state;
    weft_var_t *a222 = ck_var(g, WEFT_FLOAT64, 3, (int64_t[]){2, 2, 2});
    weft_var_t *a4 = ck_var(g, WEFT_FLOAT64, 4, sa);
    weft_var_t *b2 = ck_var(g, WEFT_FLOAT64, 1, (int64_t[]){2});
    weft_var_t *b321 = ck_var(g, WEFT_FLOAT64, 3, (int64_t[]){3, 2, 1});
    /* NumPy: "Input operand 1 does not have enough dimensions" */
    assert_null(weft_solve(g, a222, b2));
    assert_int_equal(weft_graph_error(g), WEFT_ETYPE);
    ck_expect_tail(weft_graph_error_message(g), "Solve: input 1 has 1 dims (need 2 for a stack of "
                                             "vectors, or 2 or more for a stack of matrices)", SITE);
    weft_graph_clear_error(g);
    assert_null(weft_cholesky_solve(g, a222, b321));
    ck_expect_tail(weft_graph_error_message(g), "CholeskySolve: batch axis 0: lengths 2 (input 0) "
                                             "and 3 (input 1) do not broadcast", SITE);
    weft_graph_clear_error(g);
    /* rank a's - 1: (3,2,1) is a stack of vectors of length 1 (NumPy's solve1) */
    assert_null(weft_solve(g, a4, b321));
    ck_expect_tail(weft_graph_error_message(g),
                "Solve: input 0 dim 3 has length 2 but input 1 dim 2 has 1", SITE);
    weft_graph_clear_error(g);
}

/* Lengths known only at run time that do not broadcast fail the node. */
static void test_run_time_batch_mismatch(void **state)
{
    weft_graph_t *g = *state;
    int64_t ua[3] = {WEFT_DIM_UNKNOWN, 2, 2}, s321[3] = {3, 2, 1};
    weft_var_t *a = ck_var(g, WEFT_FLOAT64, 3, ua), *b = ck_var(g, WEFT_FLOAT64, 3, s321);
    weft_var_t *x = weft_solve(g, a, b);
    assert_non_null(x);
    assert_int_equal(weft_type_dim(weft_var_type(x), 0), 3);
    weft_tensor_t *av = ck_tensor(WEFT_FLOAT64, 3, (int64_t[]){2, 2, 2}, A);
    weft_tensor_t *bv = ck_tensor(WEFT_FLOAT64, 3, s321, B), *r = NULL;
    assert_int_equal(ck_eval(g, 2, (weft_var_t *[]){a, b}, (weft_tensor_t *[]){av, bv}, x, &r),
                     WEFT_ESHAPE);
    assert_null(r);
    ck_expect_tail(weft_graph_last_error(g), "Solve: b's length or batch does not match a's", SITE);
    weft_tensor_release(av);
    weft_tensor_release(bv);
}

/* A singular matrix of a broadcast a names the output entry that read it. */
static void test_singular_in_broadcast_batch(void **state)
{
    weft_graph_t *g = *state;
    weft_tensor_t *av = ck_tensor(WEFT_FLOAT64, 4, sa, (double[]){4, 1, 2, 5, 1, 2, 2, 4});
    weft_tensor_t *bv = ck_tensor(WEFT_FLOAT64, 4, sbm, B), *r = NULL;
    weft_var_t *a = var_like(g, av), *b = var_like(g, bv);
    weft_var_t *x = weft_solve(g, a, b);
    assert_int_equal(ck_eval(g, 2, (weft_var_t *[]){a, b}, (weft_tensor_t *[]){av, bv}, x, &r),
                     WEFT_ERANGE);
    assert_null(r);
    ck_expect_tail(weft_graph_last_error(g), "Solve: matrix 3 of the batch is singular "
                                          "(U[1,1] = 0)", SITE);
    weft_tensor_release(av);
    weft_tensor_release(bv);
}

/* ---- gradients -------------------------------------------------------------------- */

/* a + 3 I (a in [-1, 1)) is well conditioned; for CholeskySolve its lower
 * triangle is the factor. */
static weft_var_t *solve_fn(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    static const double id[9] = {3, 0, 0, 0, 3, 0, 0, 0, 3};
    const weft_type_t *mt = NULL;
    (void)n;
    assert_int_equal(weft_type_tensor(g, WEFT_FLOAT64, 2, (int64_t[]){3, 3}, &mt), WEFT_OK);
    weft_var_t *a = weft_add(g, in[0], weft_constant_create(g, mt, id, sizeof id));
    return *(const bool *)user ? weft_cholesky_solve(g, a, in[1]) : weft_solve(g, a, in[1]);
}

static void verify(bool cho, int nda, const int64_t *sha, int ndb, const int64_t *shb,
                   uint64_t seed)
{
    ck_verify_random2(solve_fn, &cho, nda, sha, ndb, shb, seed);
}

static void test_grads_verify(void **state)
{
    (void)state;
    static const int64_t a2[4] = {2, 1, 3, 3}, bm[4] = {1, 2, 3, 2}, bv[3] = {1, 2, 3};
    static const int64_t a1[2] = {3, 3}, b3[3] = {2, 3, 2}, ab[3] = {2, 3, 3}, v3[1] = {3};
    for (int c = 0; c < 2; c++) {
        bool cho = c == 1;
        verify(cho, 4, a2, 4, bm, 200 + (uint64_t)c * 10); /* both broadcast */
        verify(cho, 4, a2, 3, bv, 202 + (uint64_t)c * 10); /* stacks of vectors */
        verify(cho, 2, a1, 3, b3, 204 + (uint64_t)c * 10); /* one matrix, many b */
        verify(cho, 3, ab, 3, (int64_t[]){1, 3, 2}, 206 + (uint64_t)c * 10); /* a stack, one b */
        verify(cho, 2, a1, 1, v3, 208 + (uint64_t)c * 10);
    }
}

#define T(name) cmocka_unit_test_setup_teardown(name, fx_setup, fx_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_broadcast_matches_numpy),
        T(test_one_matrix_many_rhs),
        T(test_static_errors),
        T(test_run_time_batch_mismatch),
        T(test_singular_in_broadcast_batch),
        cmocka_unit_test(test_grads_verify),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
