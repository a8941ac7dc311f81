/* Tests of SolveTriangular (weft_solve_triangular, weft/linalg_lapack.h):
 * every flag combination against NumPy-computed constants for a vector and a
 * matrix b, stacks with broadcast batch axes (reconstructed), the singular
 * and shape errors with their exact messages, gradients through
 * weft_verify_grad (every flag, two batch axes, broadcasting) and the
 * loader's check of trans (the JSON round trip is in test_linalg_lapack.c). */
#include "ops_check.h"
#include "ops_fixture.h" /* fx_setup, fx_teardown: *state is the graph */
#include "weft/graph_io.h"
#include "weft/linalg_lapack.h"

static const int64_t s33[2] = {3, 3}, s32[2] = {3, 2}, s3[1] = {3};
/* M's lower / upper triangle is the matrix; b, B the right-hand sides */
static const double M[9] = {2, 7, -3, 1, 3, 5, -1, 2, 4};
static const double BV[3] = {1, 2, 3};
static const double BM[6] = {1, 2, 0, 1, 3, -1};

/* NumPy 1.24: np.linalg.solve(op(tri(M)), b) with tri = tril / triu (unit:
 * diagonal set to 1), op = transpose when trans; for b and B. */
static const struct {
    int lower, trans, unit;
    double xv[3], xm[6];
} CASES[8] = {
    {1, 0, 0, {0.5, 0.5, 0.625}, {0.5, 1.0, -0.16666666666666666, 0.0, 0.9583333333333333, 0.0}},
    {1, 0, 1, {1.0, 1.0, 2.0}, {1.0, 2.0, -1.0, -1.0, 6.0, 3.0}},
    {1, 1, 0, {0.7916666666666666, 0.16666666666666666, 0.75},
     {1.125, 0.625, -0.5, 0.5, 0.75, -0.25}},
    {1, 1, 1, {8.0, -4.0, 3.0}, {10.0, -2.0, -6.0, 3.0, 3.0, -1.0}},
    {0, 0, 0, {3.666666666666667, -0.5833333333333334, 0.75},
     {6.0, -2.0, -1.25, 0.75, 0.75, -0.25}},
    {0, 0, 1, {101.0, -13.0, 3.0}, {115.0, -43.0, -15.0, 6.0, 3.0, -1.0}},
    {0, 1, 0, {0.5000000000000001, -0.5000000000000001, 1.7500000000000002},
     {0.5, 1.0, -1.1666666666666667, -2.0, 2.5833333333333335, 3.0000000000000004}},
    {0, 1, 1, {1.0, -5.0, 31.0},
     {1.0, 1.9999999999999996, -7.0, -12.999999999999998, 41.0, 70.0}},
};

static weft_var_t *var_like(weft_graph_t *g, const weft_tensor_t *t)
{
    return ck_var(g, weft_tensor_dtype(t), weft_tensor_ndim(t), weft_tensor_shape(t));
}

static weft_tensor_t *eval2(weft_graph_t *g, weft_var_t *a, weft_var_t *b, weft_tensor_t *av,
                            weft_tensor_t *bv, weft_var_t *out)
{
    weft_tensor_t *r = NULL;
    assert_int_equal(ck_eval(g, 2, (weft_var_t *[]){a, b}, (weft_tensor_t *[]){av, bv}, out, &r),
                     WEFT_OK);
    return r;
}

static void test_every_flag_matches_numpy(void **state)
{
    weft_graph_t *g = *state;
    for (int dt = 0; dt < 2; dt++) {
        weft_dtype_t d = dt ? WEFT_FLOAT32 : WEFT_FLOAT64;
        double tol = dt ? 2e-5 : 1e-13;
        weft_tensor_t *av = ck_tensor(d, 2, s33, M), *bv = ck_tensor(d, 1, s3, BV);
        weft_tensor_t *bm = ck_tensor(d, 2, s32, BM);
        weft_var_t *a = var_like(g, av), *b = var_like(g, bv), *B = var_like(g, bm);
        for (int c = 0; c < 8; c++) {
            weft_solve_trans_t tr = CASES[c].trans ? (c % 2 ? WEFT_TRANS_C : WEFT_TRANS_T)
                                                   : WEFT_TRANS_N;
            weft_var_t *x = weft_solve_triangular(g, a, b, CASES[c].lower, tr, CASES[c].unit);
            weft_var_t *X = weft_solve_triangular(g, a, B, CASES[c].lower, tr, CASES[c].unit);
            assert_int_equal(weft_type_dtype(weft_var_type(x)), d);
            weft_tensor_t *r = eval2(g, a, b, av, bv, x);
            ck_expect(r, 1, s3, CASES[c].xv, tol * 100);
            weft_tensor_release(r);
            r = eval2(g, a, B, av, bm, X);
            ck_expect(r, 2, s32, CASES[c].xm, tol * 100);
            weft_tensor_release(r);
        }
        weft_tensor_release(av);
        weft_tensor_release(bv);
        weft_tensor_release(bm);
    }
}

/* x[i, j] solves tril(a[i, 0]) x = b[j] for a (2,1,3,3), b (4,3,2): checked by
 * multiplying back. */
static void test_broadcast_batch_axes(void **state)
{
    weft_graph_t *g = *state;
    int64_t sa[4] = {2, 1, 3, 3}, sb[3] = {4, 3, 2}, sx[4] = {2, 4, 3, 2};
    weft_tensor_t *av = ck_random(WEFT_FLOAT64, 4, sa, -1, 1, 5);
    weft_tensor_t *bv = ck_random(WEFT_FLOAT64, 3, sb, -1, 1, 6);
    double *ad = weft_tensor_data(av), *bd = weft_tensor_data(bv);
    for (int i = 0; i < 2; i++) {
        for (int k = 0; k < 3; k++) {
            ad[i * 9 + k * 4] += 3.0; /* a dominant diagonal */
        }
    }
    weft_var_t *a = var_like(g, av), *b = var_like(g, bv);
    weft_var_t *x = weft_solve_triangular(g, a, b, true, WEFT_TRANS_N, false);
    const weft_type_t *xt = weft_var_type(x);
    assert_int_equal(weft_type_ndim(xt), 4);
    for (int d = 0; d < 4; d++) {
        assert_int_equal(weft_type_dim(xt, d), sx[d]);
    }
    weft_tensor_t *r = eval2(g, a, b, av, bv, x);
    const double *xd = weft_tensor_data(r);
    for (int i = 0; i < 2; i++) {
        for (int j = 0; j < 4; j++) {
            for (int row = 0; row < 3; row++) {
                for (int col = 0; col < 2; col++) {
                    double s = 0;
                    for (int k = 0; k <= row; k++) {
                        s += ad[i * 9 + row * 3 + k] * xd[((i * 4 + j) * 3 + k) * 2 + col];
                    }
                    assert_true(fabs(s - bd[(j * 3 + row) * 2 + col]) < 1e-13);
                }
            }
        }
    }
    weft_tensor_release(r);
    /* a vector b goes against every matrix: (2,1,3,3) with (3,) -> (2,1,3) */
    int64_t s1[1] = {3};
    weft_var_t *v = ck_var(g, WEFT_FLOAT64, 1, s1);
    weft_var_t *xv = weft_solve_triangular(g, a, v, false, WEFT_TRANS_T, true);
    assert_int_equal(weft_type_ndim(weft_var_type(xv)), 3);
    assert_int_equal(weft_type_dim(weft_var_type(xv), 1), 1);
    weft_tensor_release(av);
    weft_tensor_release(bv);
}

/* got ends with msg and names the node's creation site in this file */
static void expect_tail(const char *got, const char *msg)
{
    ck_expect_tail(got, msg, "test_solve_triangular.c:");
}

static void test_singular_and_shape_errors(void **state)
{
    weft_graph_t *g = *state;
    int64_t s22[2] = {2, 2}, s222[3] = {2, 2, 2}, s2[1] = {2};
    weft_tensor_t *av = ck_tensor(WEFT_FLOAT64, 2, s22, (double[]){1, 9, 2, 0});
    weft_tensor_t *bv = ck_tensor(WEFT_FLOAT64, 1, s2, (double[]){1, 1}), *r = NULL;
    weft_var_t *a = var_like(g, av), *b = var_like(g, bv);
    weft_var_t *x = weft_solve_triangular(g, a, b, true, WEFT_TRANS_N, false);
    assert_int_equal(ck_eval(g, 2, (weft_var_t *[]){a, b}, (weft_tensor_t *[]){av, bv}, x, &r),
                     WEFT_ERANGE);
    assert_null(r);
    expect_tail(weft_graph_last_error(g), "SolveTriangular: the matrix is singular (a[1,1] = 0)");
    /* a unit diagonal is not read; the upper triangle's diagonal is a's too */
    r = eval2(g, a, b, av, bv, weft_solve_triangular(g, a, b, true, WEFT_TRANS_N, true));
    ck_expect(r, 1, s2, (double[]){1, -1}, 0);
    weft_tensor_release(r);
    weft_tensor_t *sv = ck_tensor(WEFT_FLOAT64, 3, s222, (double[]){1, 0, 0, 1, 0, 0, 0, 1});
    weft_var_t *s = var_like(g, sv);
    x = weft_solve_triangular(g, s, b, false, WEFT_TRANS_T, false);
    assert_int_equal(ck_eval(g, 2, (weft_var_t *[]){s, b}, (weft_tensor_t *[]){sv, bv}, x, &r),
                     WEFT_ERANGE);
    expect_tail(weft_graph_last_error(g),
                "SolveTriangular: matrix 1 of the batch is singular (a[0,0] = 0)");
    /* static errors */
    weft_var_t *a233 = ck_var(g, WEFT_FLOAT64, 3, (int64_t[]){2, 3, 3});
    weft_var_t *b431 = ck_var(g, WEFT_FLOAT64, 3, (int64_t[]){4, 3, 1});
    assert_null(weft_solve_triangular(g, a233, b431, true, WEFT_TRANS_N, false));
    assert_int_equal(weft_graph_error(g), WEFT_ETYPE);
    expect_tail(weft_graph_error_message(g), "SolveTriangular: batch axis 0: lengths 2 (input "
                                             "0) and 4 (input 1) do not broadcast");
    weft_graph_clear_error(g);
    assert_null(weft_solve_triangular(g, a233, b, true, WEFT_TRANS_N, false));
    expect_tail(weft_graph_error_message(g),
                "SolveTriangular: input 0 dim 2 has length 3 but input 1 dim 0 has 2");
    weft_graph_clear_error(g);
    weft_var_t *z = ck_var(g, WEFT_FLOAT64, 0, NULL);
    assert_null(weft_solve_triangular(g, a, z, true, WEFT_TRANS_N, false));
    expect_tail(weft_graph_error_message(g), "SolveTriangular: input 1 is 0-d (need a vector "
                                             "(n,) or a stack (..., n, k))");
    weft_graph_clear_error(g);
    assert_null(weft_solve_triangular(g, a, b, true, (weft_solve_trans_t)3, false));
    assert_int_equal(weft_graph_error(g), WEFT_EINVAL);
    expect_tail(weft_graph_error_message(g), "trans 3 (need WEFT_TRANS_N, _T or _C)");
    weft_graph_clear_error(g);
    assert_null(weft_solve_triangular(g, a, NULL, true, WEFT_TRANS_N, false));
    assert_int_equal(weft_graph_error(g), WEFT_EINVAL);
    weft_graph_clear_error(g);
    weft_tensor_release(av);
    weft_tensor_release(bv);
    weft_tensor_release(sv);
}

/* ---- gradients -------------------------------------------------------------------- */

typedef struct gcase {
    bool lower, unit;
    weft_solve_trans_t trans;
} gcase_t;

/* a + 3 I keeps the triangle well conditioned */
static weft_var_t *tri_fn(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    const gcase_t *c = user;
    static const double id[9] = {3, 0, 0, 0, 3, 0, 0, 0, 3};
    const weft_type_t *mt = NULL;
    (void)n;
    assert_int_equal(weft_type_tensor(g, WEFT_FLOAT64, 2, s33, &mt), WEFT_OK);
    weft_var_t *a = weft_add(g, in[0], weft_constant_create(g, mt, id, sizeof id));
    return weft_solve_triangular(g, a, in[1], c->lower, c->trans, c->unit);
}

static void verify(gcase_t c, int nda, const int64_t *sa, int ndb, const int64_t *sb,
                   uint64_t seed)
{
    ck_verify_random2(tri_fn, &c, nda, sa, ndb, sb, seed);
}

static void test_grads_verify(void **state)
{
    (void)state;
    for (int f = 0; f < 8; f++) {
        gcase_t c = {f & 1, (f & 2) != 0, f & 4 ? WEFT_TRANS_T : WEFT_TRANS_N};
        verify(c, 2, s33, 1, s3, 100 + (uint64_t)f * 2);
        verify(c, 2, s33, 2, s32, 120 + (uint64_t)f * 2);
    }
    /* two batch axes, each input broadcast along one */
    gcase_t low = {true, false, WEFT_TRANS_N}, up = {false, false, WEFT_TRANS_C};
    int64_t sa[4] = {2, 1, 3, 3}, sb[4] = {1, 2, 3, 2}, sb3[3] = {2, 3, 2};
    verify(low, 4, sa, 4, sb, 140);
    verify(up, 4, sa, 3, sb3, 142);
    verify(up, 4, (int64_t[]){2, 2, 3, 3}, 1, s3, 144);
    verify(low, 2, s33, 3, sb3, 146); /* one matrix against a stack of b */
}

/* The JSON form (props {"lower", "trans", "unit_diagonal"}) round-trips in
 * test_linalg_lapack.c; here the loader refuses a trans outside 0..2. */
static void test_json_bad_trans_refused(void **state)
{
    weft_graph_t *g = *state, *g2 = NULL;
    weft_var_t *a = ck_var(g, WEFT_FLOAT64, 2, s33), *b = ck_var(g, WEFT_FLOAT64, 2, s32);
    weft_var_t *x = weft_solve_triangular(g, a, b, true, WEFT_TRANS_T, false);
    weft_var_t *ins[2] = {a, b};
    weft_graph_io_t io = {2, ins, NULL, 1, &x, 0, NULL}, back;
    char *text = NULL;
    assert_int_equal(weft_graph_io_save(&io, &text), WEFT_OK);
    char *t = strstr(text, "\"trans\":1");
    assert_non_null(t);
    t[8] = '7';
    assert_int_equal(weft_graph_create(NULL, &g2), WEFT_OK);
    assert_int_equal(weft_graph_io_load(g2, text, strlen(text), NULL, &back), WEFT_EINVAL);
    assert_non_null(strstr(weft_graph_last_error(g2), "SolveTriangular: trans 7 (need 0, 1 or "
                                                      "2: N, T, C)"));
    weft_graph_io_free_text(text);
    weft_graph_destroy(g2);
}

#define T(name) cmocka_unit_test_setup_teardown(name, fx_setup, fx_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_every_flag_matches_numpy),
        T(test_broadcast_batch_axes),
        T(test_singular_and_shape_errors),
        cmocka_unit_test(test_grads_verify),
        T(test_json_bad_trans_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
