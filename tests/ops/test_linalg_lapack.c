/* Tests of the LAPACK-backed solvers (weft/linalg_lapack.h): Solve, Inv, Det,
 * SLogDet and CholeskySolve against NumPy-computed constants (float64 and
 * float32), reconstructions (a @ inv(a) = I, a @ solve(a, b) = b), stacks of
 * matrices, the singular-matrix node errors and the shape errors with their
 * exact messages, every gradient through weft_verify_grad, and a JSON round
 * trip. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ops_check.h"
#include "weft/array_ops.h"
#include "weft/grad.h"
#include "ops_fixture.h" /* fx_setup, fx_teardown: *state is the graph */

static weft_var_t *var_like(weft_graph_t *g, const weft_tensor_t *t)
{
    return ck_var(g, weft_tensor_dtype(t), weft_tensor_ndim(t), weft_tensor_shape(t));
}

static const int64_t s33[2] = {3, 3}, s32[2] = {3, 2}, s3[1] = {3};
/* a = [[4,1,2],[1,5,3],[2,3,6]] (SPD), b, B; c has det -5 */
static const double A[9] = {4, 1, 2, 1, 5, 3, 2, 3, 6};
static const double C[9] = {0, 2, 1, 1, 1, 0, 3, 0, 1};
static const double BV[3] = {1, 2, 3};
static const double BM[6] = {1, 2, 0, 1, 3, -1};
/* NumPy 1.24: np.linalg.solve(A, BV), solve(A, BM), inv(A), det(A) */
static const double X_V[3] = {-1.3877787807814457e-17, 0.14285714285714285, 0.4285714285714286};
static const double X_M[6] = {-1.3877787807814457e-17, 0.7000000000000001,
                              -0.42857142857142855, 0.42857142857142855,
                              0.7142857142857143, -0.6142857142857142};
static const double INV_A[9] = {0.3, 0.0, -0.1, 0.0, 0.2857142857142857, -0.14285714285714282,
                                -0.1, -0.14285714285714285, 0.2714285714285714};

/* Evaluates one output of a one- or two-input graph. */
static weft_status_t run2(weft_graph_t *g, size_t n, weft_var_t *const *in,
                          weft_tensor_t *const *vals, weft_var_t *out, weft_tensor_t **r)
{
    return ck_eval(g, n, in, vals, out, r);
}

static void test_solve_inv_det_match_numpy(void **state)
{
    weft_graph_t *g = *state;
    weft_tensor_t *av = ck_tensor(WEFT_FLOAT64, 2, s33, A);
    weft_tensor_t *bv = ck_tensor(WEFT_FLOAT64, 1, s3, BV);
    weft_tensor_t *bm = ck_tensor(WEFT_FLOAT64, 2, s32, BM);
    weft_var_t *a = var_like(g, av), *b = var_like(g, bv), *B = var_like(g, bm);
    weft_var_t *x = weft_solve(g, a, b), *X = weft_solve(g, a, B);
    weft_var_t *ai = weft_inv(g, a), *d = weft_det(g, a);
    weft_tensor_t *r = NULL, *vals[2] = {av, bv}, *valm[2] = {av, bm};
    assert_int_equal(run2(g, 2, (weft_var_t *[]){a, b}, vals, x, &r), WEFT_OK);
    ck_expect(r, 1, s3, X_V, 1e-14);
    weft_tensor_release(r);
    assert_int_equal(run2(g, 2, (weft_var_t *[]){a, B}, valm, X, &r), WEFT_OK);
    ck_expect(r, 2, s32, X_M, 1e-14);
    weft_tensor_release(r);
    assert_int_equal(run2(g, 1, &a, &av, ai, &r), WEFT_OK);
    ck_expect(r, 2, s33, INV_A, 1e-14);
    weft_tensor_release(r);
    assert_int_equal(run2(g, 1, &a, &av, d, &r), WEFT_OK);
    ck_expect(r, 0, NULL, (double[]){69.99999999999996}, 1e-13);
    weft_tensor_release(r);
    /* reconstructions: a @ inv(a) = I and a @ x = b */
    weft_var_t *eye = weft_dot(g, a, ai), *back = weft_dot(g, a, X);
    assert_int_equal(run2(g, 1, &a, &av, eye, &r), WEFT_OK);
    ck_expect(r, 2, s33, (double[]){1, 0, 0, 0, 1, 0, 0, 0, 1}, 1e-14);
    weft_tensor_release(r);
    assert_int_equal(run2(g, 2, (weft_var_t *[]){a, B}, valm, back, &r), WEFT_OK);
    ck_expect(r, 2, s32, BM, 1e-14);
    weft_tensor_release(r);
    weft_tensor_release(av);
    weft_tensor_release(bv);
    weft_tensor_release(bm);
}

static void test_slogdet_det_signs_singular_and_float32(void **state)
{
    weft_graph_t *g = *state;
    weft_tensor_t *cv = ck_tensor(WEFT_FLOAT64, 2, s33, C);
    weft_var_t *c = var_like(g, cv), *sign = NULL;
    weft_var_t *l = weft_slogdet(g, c, &sign), *d = weft_det(g, c);
    assert_non_null(l);
    assert_non_null(sign);
    weft_tensor_t *r[3] = {NULL};
    weft_var_t *outs[3] = {sign, l, d};
    assert_int_equal(weft_eval(g, 1, &c, &cv, 3, outs, r), WEFT_OK);
    /* NumPy: slogdet(C) = (-1.0, 1.6094379124341003), det(C) = -4.999999999999999 */
    ck_expect(r[0], 0, NULL, (double[]){-1}, 0);
    ck_expect(r[1], 0, NULL, (double[]){1.6094379124341003}, 1e-14);
    ck_expect(r[2], 0, NULL, (double[]){-4.999999999999999}, 1e-14);
    for (int i = 0; i < 3; i++) {
        weft_tensor_release(r[i]);
    }
    /* singular: det 0, slogdet (0, -inf), as NumPy */
    weft_tensor_t *sv = ck_tensor(WEFT_FLOAT64, 2, s33, (double[]){1, 2, 3, 2, 4, 6, 0, 1, 1});
    assert_int_equal(weft_eval(g, 1, &c, &sv, 3, outs, r), WEFT_OK);
    ck_expect(r[0], 0, NULL, (double[]){0}, 0);
    ck_expect(r[1], 0, NULL, (double[]){-INFINITY}, 0);
    ck_expect(r[2], 0, NULL, (double[]){0}, 0);
    for (int i = 0; i < 3; i++) {
        weft_tensor_release(r[i]);
    }
    /* float32: NumPy's float32 det(A) = 70.0 (computed in float32) */
    weft_tensor_t *af = ck_tensor(WEFT_FLOAT32, 2, s33, A), *rf = NULL;
    weft_var_t *a32 = var_like(g, af), *d32 = weft_det(g, a32);
    weft_var_t *x32 = weft_solve(g, a32, weft_inv(g, a32));
    assert_int_equal(run2(g, 1, &a32, &af, d32, &rf), WEFT_OK);
    assert_int_equal(weft_tensor_dtype(rf), WEFT_FLOAT32);
    ck_expect(rf, 0, NULL, (double[]){70}, 2e-5);
    weft_tensor_release(rf);
    assert_int_equal(run2(g, 1, &a32, &af, x32, &rf), WEFT_OK);
    /* solve(a, inv(a)) = inv(a) @ inv(a) (NumPy, float64) */
    ck_expect(rf, 2, s33, (double[]){0.1, 0.014285714285714285, -0.05714285714285714,
                                     0.014285714285714285, 0.1020408163265306, -0.07959183673469386,
                                     -0.05714285714285714, -0.07959183673469387,
                                     0.10408163265306121},
              1e-6);
    weft_tensor_release(rf);
    weft_tensor_release(af);
    weft_tensor_release(cv);
    weft_tensor_release(sv);
}

/* cho_solve(chol(a), b) equals solve(a, b). */
static void test_cholesky_solve_matches_solve(void **state)
{
    weft_graph_t *g = *state;
    weft_tensor_t *av = ck_tensor(WEFT_FLOAT64, 2, s33, A);
    weft_tensor_t *bm = ck_tensor(WEFT_FLOAT64, 2, s32, BM);
    weft_tensor_t *bv = ck_tensor(WEFT_FLOAT64, 1, s3, BV), *r = NULL;
    weft_var_t *a = var_like(g, av), *B = var_like(g, bm), *b = var_like(g, bv);
    weft_var_t *L = weft_cholesky(g, a);
    weft_var_t *X = weft_cholesky_solve(g, L, B), *x = weft_cholesky_solve(g, L, b);
    weft_tensor_t *valm[2] = {av, bm}, *valv[2] = {av, bv};
    assert_int_equal(run2(g, 2, (weft_var_t *[]){a, B}, valm, X, &r), WEFT_OK);
    ck_expect(r, 2, s32, X_M, 1e-14);
    weft_tensor_release(r);
    assert_int_equal(run2(g, 2, (weft_var_t *[]){a, b}, valv, x, &r), WEFT_OK);
    ck_expect(r, 1, s3, X_V, 1e-14);
    weft_tensor_release(r);
    weft_tensor_release(av);
    weft_tensor_release(bm);
    weft_tensor_release(bv);
}

/* A stack (2, 3, 3): each matrix solved on its own, as np.linalg. */
static void test_stacks_solve_inv_det_slogdet(void **state)
{
    weft_graph_t *g = *state;
    double a2[18], b2[12];
    memcpy(a2, A, sizeof A);
    memcpy(a2 + 9, C, sizeof C);
    memcpy(b2, BM, sizeof BM);
    memcpy(b2 + 6, BM, sizeof BM);
    int64_t sa[3] = {2, 3, 3}, sb[3] = {2, 3, 2}, s2[1] = {2};
    weft_tensor_t *av = ck_tensor(WEFT_FLOAT64, 3, sa, a2);
    weft_tensor_t *bv = ck_tensor(WEFT_FLOAT64, 3, sb, b2);
    weft_var_t *a = var_like(g, av), *b = var_like(g, bv), *sign = NULL;
    weft_var_t *outs[5] = {weft_solve(g, a, b), weft_inv(g, a), weft_det(g, a),
                           weft_slogdet(g, a, &sign), NULL};
    outs[4] = sign;
    weft_tensor_t *r[5] = {NULL}, *vals[2] = {av, bv};
    assert_int_equal(weft_eval(g, 2, (weft_var_t *[]){a, b}, vals, 5, outs, r), WEFT_OK);
    /* NumPy: solve(C, BM), inv(C) */
    double xs[12], is[18];
    memcpy(xs, X_M, sizeof X_M);
    memcpy(xs + 6, (double[]){0.4, -0.2, -0.4, 1.2, 1.8, -0.4}, 6 * sizeof(double));
    memcpy(is, INV_A, sizeof INV_A);
    memcpy(is + 9, (double[]){-0.2, 0.4, 0.2, 0.2, 0.6, -0.2, 0.6, -1.2, 0.4}, 9 * sizeof(double));
    ck_expect(r[0], 3, sb, xs, 1e-14);
    ck_expect(r[1], 3, sa, is, 1e-14);
    ck_expect(r[2], 1, s2, (double[]){69.99999999999996, -4.999999999999999}, 1e-13);
    ck_expect(r[3], 1, s2, (double[]){4.248495242049359, 1.6094379124341003}, 1e-14);
    ck_expect(r[4], 1, s2, (double[]){1, -1}, 0);
    for (int i = 0; i < 5; i++) {
        weft_tensor_release(r[i]);
    }
    weft_tensor_release(av);
    weft_tensor_release(bv);
}

/* got is "<where>: <msg>" with the creation site in <where>. */
static void expect_tail(const char *got, const char *where, const char *msg)
{
    size_t lg = strlen(got), lm = strlen(msg);
    if (lg < lm || strcmp(got + lg - lm, msg) != 0 || !strstr(got, where)) {
        print_error("message: %s\n", got);
    }
    assert_true(lg >= lm);
    assert_string_equal(got + lg - lm, msg);
    assert_non_null(strstr(got, where));
    assert_non_null(strstr(got, "test_linalg_lapack.c:"));
}

static void expect_eval_error(weft_graph_t *g, size_t n, weft_var_t *const *in,
                              weft_tensor_t *const *vals, weft_var_t *out, const char *msg)
{
    weft_tensor_t *r = NULL;
    assert_int_equal(ck_eval(g, n, in, vals, out, &r), WEFT_ERANGE);
    assert_null(r);
    char where[64];
    snprintf(where, sizeof where, "(%.*s, built at ", (int)strcspn(msg, ":"), msg);
    expect_tail(weft_graph_last_error(g), where, msg);
}

static void test_singular_matrix_errors_name_the_node(void **state)
{
    weft_graph_t *g = *state;
    weft_tensor_t *sv = ck_tensor(WEFT_FLOAT64, 2, (int64_t[]){2, 2}, (double[]){1, 2, 2, 4});
    weft_tensor_t *bv = ck_tensor(WEFT_FLOAT64, 1, (int64_t[]){2}, (double[]){1, 1});
    weft_var_t *a = var_like(g, sv), *b = var_like(g, bv);
    weft_tensor_t *vals[2] = {sv, bv};
    expect_eval_error(g, 2, (weft_var_t *[]){a, b}, vals, weft_solve(g, a, b),
                      "Solve: the matrix is singular (U[1,1] = 0)");
    expect_eval_error(g, 1, &a, &sv, weft_inv(g, a),
                      "Inv: the matrix is singular (U[1,1] = 0)");
    /* a stack names the singular entry */
    weft_tensor_t *st = ck_tensor(WEFT_FLOAT64, 3, (int64_t[]){2, 2, 2},
                                  (double[]){1, 0, 0, 1, 0, 0, 0, 1});
    weft_var_t *s = var_like(g, st);
    expect_eval_error(g, 1, &s, &st, weft_inv(g, s),
                      "Inv: matrix 1 of the batch is singular (U[0,0] = 0)");
    weft_tensor_release(sv);
    weft_tensor_release(bv);
    weft_tensor_release(st);
}

static void test_shape_and_type_errors_exact(void **state)
{
    weft_graph_t *g = *state;
    weft_var_t *a23 = ck_var(g, WEFT_FLOAT64, 2, (int64_t[]){2, 3});
    weft_var_t *a33 = ck_var(g, WEFT_FLOAT64, 2, s33);
    weft_var_t *b2 = ck_var(g, WEFT_FLOAT64, 1, (int64_t[]){2});
    weft_var_t *i33 = ck_var(g, WEFT_INT64, 2, s33);
    weft_var_t *f3 = ck_var(g, WEFT_FLOAT32, 1, s3);
    assert_null(weft_inv(g, a23));
    assert_int_equal(weft_graph_error(g), WEFT_ETYPE);
    expect_tail(weft_graph_error_message(g), "apply of Inv at ",
                "Inv: input 0 has type float64[2,3]: its last two dims are not square");
    weft_graph_clear_error(g);
    assert_null(weft_solve(g, a33, b2));
    expect_tail(weft_graph_error_message(g), "apply of Solve at ",
                "Solve: input 0 dim 1 has length 3 but input 1 dim 0 has 2");
    weft_graph_clear_error(g);
    assert_null(weft_det(g, i33));
    expect_tail(weft_graph_error_message(g), "apply of Det at ",
                "Det: input 0 has type int64[3,3] (need a float32/float64 tensor of 2 or more "
                "dims)");
    weft_graph_clear_error(g);
    assert_null(weft_solve(g, a33, f3));
    expect_tail(weft_graph_error_message(g), "apply of Solve at ",
                "Solve: input 1 has type float32[3] (need a float32/float64 tensor of input 0's "
                "dtype)");
    weft_graph_clear_error(g);
    assert_null(weft_cholesky_solve(g, a33, NULL));
    assert_int_equal(weft_graph_error(g), WEFT_EINVAL);
    weft_graph_clear_error(g);
}

/* ---- gradients ------------------------------------------------------------------- */

typedef enum gk { G_SOLVE, G_INV, G_DET, G_SLOGDET, G_CHO } gk_t;

/* well-conditioned points: a + 3 I for a in [-1, 1) */
static weft_var_t *shifted(weft_graph_t *g, weft_var_t *a)
{
    const weft_type_t *t = weft_var_type(a);
    int nd = weft_type_ndim(t);
    int64_t n = weft_type_dim(t, nd - 1);
    double id[16] = {0};
    for (int64_t i = 0; i < n; i++) {
        id[i * n + i] = 3.0;
    }
    const weft_type_t *mt = NULL;
    assert_int_equal(weft_type_tensor(g, weft_type_dtype(t), 2, (int64_t[]){n, n}, &mt), WEFT_OK);
    return weft_add(g, a, weft_constant_create(g, mt, id, (size_t)(n * n) * sizeof(double)));
}

static weft_var_t *grad_fn(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    gk_t k = *(const gk_t *)user;
    (void)n;
    weft_var_t *a = shifted(g, in[0]);
    switch (k) {
    case G_SOLVE: return weft_solve(g, a, in[1]);
    case G_INV: return weft_inv(g, a);
    case G_DET: return weft_det(g, a);
    case G_SLOGDET: return weft_slogdet(g, a, NULL);
    default: return weft_cholesky_solve(g, a, in[1]); /* a's lower triangle is the factor */
    }
}

static void verify(gk_t k, int nda, const int64_t *sa, int ndb, const int64_t *sb, uint64_t seed)
{
    weft_tensor_t *pts[2] = {ck_random(WEFT_FLOAT64, nda, sa, -1, 1, seed),
                             sb ? ck_random(WEFT_FLOAT64, ndb, sb, -1, 1, seed + 1) : NULL};
    ck_verify(grad_fn, &k, sb ? 2 : 1, pts);
    weft_tensor_release(pts[0]);
    weft_tensor_release(pts[1]);
}

static void test_grads_verify(void **state)
{
    (void)state;
    int64_t s223[3] = {2, 3, 3}, s232[3] = {2, 3, 2};
    verify(G_SOLVE, 2, s33, 1, s3, 1);
    verify(G_SOLVE, 2, s33, 2, s32, 3);
    verify(G_SOLVE, 3, s223, 3, s232, 5);
    verify(G_INV, 2, s33, 0, NULL, 7);
    verify(G_INV, 3, s223, 0, NULL, 8);
    verify(G_DET, 2, s33, 0, NULL, 9);
    verify(G_DET, 3, s223, 0, NULL, 10);
    verify(G_SLOGDET, 2, s33, 0, NULL, 11);
    verify(G_SLOGDET, 3, s223, 0, NULL, 12);
    verify(G_CHO, 2, s33, 2, s32, 13);
    verify(G_CHO, 2, s33, 1, s3, 15);
}


/* ---- Svd, Eigh --------------------------------------------------------------------- */

/* a (r x c) @ b (c x k), all row-major. */
static void matmul(const double *a, const double *b, int r, int c, int k, double *out)
{
    for (int i = 0; i < r; i++) {
        for (int j = 0; j < k; j++) {
            double acc = 0;
            for (int l = 0; l < c; l++) {
                acc += a[i * c + l] * b[l * k + j];
            }
            out[i * k + j] = acc;
        }
    }
}

static void flat(const weft_tensor_t *t, double *out)
{
    for (size_t i = 0; i < weft_tensor_size(t); i++) {
        out[i] = weft_tensor_flat_get(t, i);
    }
}

static void test_svd_values_reconstruction_full(void **state)
{
    weft_graph_t *g = *state;
    int64_t s23[2] = {2, 3}, s2[1] = {2};
    const double M[6] = {3, 1, 2, 0, 2, 1};
    weft_tensor_t *mv = ck_tensor(WEFT_FLOAT64, 2, s23, M);
    weft_var_t *m = var_like(g, mv), *u = NULL, *vh = NULL, *uf = NULL, *vhf = NULL;
    weft_var_t *sv = weft_svd(g, m, false, false, NULL, NULL);
    weft_var_t *s = weft_svd(g, m, false, true, &u, &vh);
    weft_var_t *sf = weft_svd(g, m, true, true, &uf, &vhf);
    weft_var_t *outs[7] = {sv, s, u, vh, sf, uf, vhf};
    weft_tensor_t *r[7] = {NULL};
    assert_int_equal(weft_eval(g, 1, &m, &mv, 7, outs, r), WEFT_OK);
    /* NumPy: np.linalg.svd(M, compute_uv=False) */
    const double want[2] = {3.939644310010251, 1.8652621023877185};
    ck_expect(r[0], 1, s2, want, 1e-14);
    ck_expect(r[1], 1, s2, want, 1e-14);
    ck_expect(r[4], 1, s2, want, 1e-14);
    /* u diag(s) vh = M (reduced: u 2x2, vh 2x3) */
    double uu[4], vv[6], us[4], back[6];
    flat(r[2], uu);
    flat(r[3], vv);
    for (int i = 0; i < 4; i++) {
        us[i] = uu[i] * want[i % 2];
    }
    matmul(us, vv, 2, 2, 3, back);
    weft_tensor_t *bt = ck_tensor(WEFT_FLOAT64, 2, s23, back);
    ck_expect(bt, 2, s23, M, 1e-14);
    /* full: vh is 3x3 orthogonal: vh vh^T = I */
    double vf[9], vft[9], id[9];
    assert_int_equal(weft_tensor_ndim(r[6]), 2);
    assert_int_equal(weft_tensor_dim(r[6], 0), 3);
    assert_int_equal(weft_tensor_dim(r[5], 1), 2);
    flat(r[6], vf);
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            vft[j * 3 + i] = vf[i * 3 + j];
        }
    }
    matmul(vf, vft, 3, 3, 3, id);
    weft_tensor_t *it = ck_tensor(WEFT_FLOAT64, 2, s33, id);
    ck_expect(it, 2, s33, (double[]){1, 0, 0, 0, 1, 0, 0, 0, 1}, 1e-14);
    for (int i = 0; i < 7; i++) {
        weft_tensor_release(r[i]);
    }
    weft_tensor_release(bt);
    weft_tensor_release(it);
    weft_tensor_release(mv);
}

static void test_svd_stack_and_eigh_values(void **state)
{
    weft_graph_t *g = *state;
    double a2[18];
    for (int i = 0; i < 9; i++) {
        a2[i] = A[i];
        a2[9 + i] = 2 * A[i];
    }
    int64_t sa[3] = {2, 3, 3}, s23[2] = {2, 3};
    weft_tensor_t *av = ck_tensor(WEFT_FLOAT64, 3, sa, a2), *r = NULL;
    weft_var_t *a = var_like(g, av);
    assert_int_equal(run2(g, 1, &a, &av, weft_svd(g, a, false, false, NULL, NULL), &r),
                     WEFT_OK);
    /* NumPy: np.linalg.svd(stack, compute_uv=False) */
    ck_expect(r, 2, s23, (double[]){9.418832675970041, 3.386770156607549, 2.1943971674224088,
                                    18.837665351940082, 6.773540313215098, 4.3887943348448175},
              1e-13);
    weft_tensor_release(r);
    /* eigh: w as NumPy, v diag(w) v^T = A; the upper triangle is not read (UPLO='L') */
    double garbage[9] = {4, 99, -7, 1, 5, 42, 2, 3, 6};
    weft_tensor_t *gv = ck_tensor(WEFT_FLOAT64, 2, s33, garbage), *rw[3] = {NULL};
    weft_var_t *x = var_like(g, gv), *v = NULL;
    weft_var_t *w = weft_eigh(g, x, true, &v), *w2 = weft_eigvalsh(g, x, true);
    weft_var_t *outs[3] = {w, v, w2};
    assert_int_equal(weft_eval(g, 1, &x, &gv, 3, outs, rw), WEFT_OK);
    const double ww[3] = {2.194397167422409, 3.3867701566075485, 9.418832675970037};
    ck_expect(rw[0], 1, s3, ww, 1e-14);
    ck_expect(rw[2], 1, s3, ww, 1e-14);
    double vv[9], vw[9], vt[9], back[9];
    flat(rw[1], vv);
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            vw[i * 3 + j] = vv[i * 3 + j] * ww[j];
            vt[j * 3 + i] = vv[i * 3 + j];
        }
    }
    matmul(vw, vt, 3, 3, 3, back);
    weft_tensor_t *bt = ck_tensor(WEFT_FLOAT64, 2, s33, back);
    ck_expect(bt, 2, s33, A, 1e-14);
    for (int i = 0; i < 3; i++) {
        weft_tensor_release(rw[i]);
    }
    weft_tensor_release(bt);
    weft_tensor_release(gv);
    weft_tensor_release(av);
}

typedef enum dk { D_SVALS, D_SVD_S, D_EIGVALS, D_EIGVECS, D_EIGVECS_UPPER } dk_t;

static weft_var_t *decomp_fn(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    dk_t k = *(const dk_t *)user;
    weft_var_t *v = NULL, *u = NULL, *vh = NULL;
    (void)n;
    switch (k) {
    case D_SVALS: return weft_svd(g, in[0], false, false, NULL, NULL);
    case D_SVD_S: return weft_svd(g, in[0], false, true, &u, &vh);
    case D_EIGVALS: return weft_eigvalsh(g, in[0], true);
    case D_EIGVECS: weft_eigh(g, in[0], true, &v); return v;
    default: weft_eigh(g, in[0], false, &v); return v;
    }
}

static void verify_decomp(dk_t k, int nd, const int64_t *shape, uint64_t seed)
{
    weft_tensor_t *pt = ck_random(WEFT_FLOAT64, nd, shape, -1, 1, seed);
    ck_verify(decomp_fn, &k, 1, &pt);
    weft_tensor_release(pt);
}

static void test_decomp_grads_verify(void **state)
{
    (void)state;
    int64_t s32b[2] = {3, 2}, s23[2] = {2, 3}, s232[3] = {2, 3, 2};
    verify_decomp(D_SVALS, 2, s32b, 21);
    verify_decomp(D_SVALS, 2, s23, 22);
    verify_decomp(D_SVD_S, 2, s33, 23);
    verify_decomp(D_SVALS, 3, s232, 24);
    verify_decomp(D_EIGVALS, 2, s33, 25);
    verify_decomp(D_EIGVECS, 2, s33, 26);
    verify_decomp(D_EIGVECS_UPPER, 2, s33, 27);
}


/* ---- matrix_power, norms ---------------------------------------------------------- */

static void test_matrix_power_and_norms_match_numpy(void **state)
{
    weft_graph_t *g = *state;
    weft_tensor_t *cv = ck_tensor(WEFT_FLOAT64, 2, s33, C);
    weft_tensor_t *av = ck_tensor(WEFT_FLOAT64, 2, s33, A);
    weft_var_t *c = var_like(g, cv), *r0 = NULL;
    weft_tensor_t *r = NULL;
    assert_int_equal(run2(g, 1, &c, &cv, weft_matrix_power(g, c, 5), &r), WEFT_OK);
    ck_expect(r, 2, s33, (double[]){55, 82, 41, 41, 39, 19, 123, 114, 58}, 0); /* NumPy */
    weft_tensor_release(r);
    assert_int_equal(run2(g, 1, &c, &av, weft_matrix_power(g, c, -2), &r), WEFT_OK);
    ck_expect(r, 2, s33, (double[]){0.1, 0.014285714285714285, -0.05714285714285714,
                                    0.014285714285714285, 0.1020408163265306, -0.07959183673469386,
                                    -0.05714285714285714, -0.07959183673469387,
                                    0.10408163265306121},
              1e-15);
    weft_tensor_release(r);
    assert_non_null(r0 = weft_matrix_power(g, c, 0));
    assert_int_equal(run2(g, 1, &c, &cv, r0, &r), WEFT_OK);
    ck_expect(r, 2, s33, (double[]){1, 0, 0, 0, 1, 0, 0, 0, 1}, 0);
    weft_tensor_release(r);
    /* matrix norms of M = [[3,-1,2],[0,2,-4]], NumPy's np.linalg.norm(M, ord) */
    int64_t s23[2] = {2, 3};
    weft_tensor_t *mv = ck_tensor(WEFT_FLOAT64, 2, s23, (double[]){3, -1, 2, 0, 2, -4});
    weft_var_t *m = var_like(g, mv);
    const double want[8] = {5.830951894845301, 7.799539456275445, 6.0, 3.0, 5.23834959781328,
                            2.5611898584621655, 6.0, 6.0};
    for (int o = 0; o < 8; o++) {
        assert_int_equal(run2(g, 1, &m, &mv, weft_matrix_norm(g, m, (weft_matrix_norm_t)o,
                                                                 false), &r), WEFT_OK);
        ck_expect(r, 0, NULL, &want[o], 1e-14);
        weft_tensor_release(r);
        assert_int_equal(run2(g, 1, &m, &mv, weft_matrix_norm(g, m, (weft_matrix_norm_t)o,
                                                                 true), &r), WEFT_OK);
        ck_expect(r, 2, (int64_t[]){1, 1}, &want[o], 1e-14);
        weft_tensor_release(r);
    }
    /* vector norms of v = [3,-4,0,1] */
    int64_t s4[1] = {4};
    weft_tensor_t *vv = ck_tensor(WEFT_FLOAT64, 1, s4, (double[]){3, -4, 0, 1});
    weft_var_t *v = var_like(g, vv);
    const double ords[7] = {INFINITY, -INFINITY, 0, 1, 2, 3, 0.5};
    const double vw[7] = {4, 0, 3, 8, 5.0990195135927845, 4.514357435474001, 22.392304845413257};
    for (int o = 0; o < 7; o++) {
        assert_int_equal(run2(g, 1, &v, &vv, weft_vector_norm(g, v, ords[o], 0, NULL, false),
                              &r), WEFT_OK);
        ck_expect(r, 0, NULL, &vw[o], 1e-14);
        weft_tensor_release(r);
    }
    /* over one axis: np.linalg.norm(M, 1, axis=0) */
    int ax0 = 0;
    assert_int_equal(run2(g, 1, &m, &mv, weft_vector_norm(g, m, 1.0, 1, &ax0, false), &r),
                     WEFT_OK);
    ck_expect(r, 1, s3, (double[]){3, 3, 6}, 0);
    weft_tensor_release(r);
    /* errors */
    weft_var_t *iv = ck_var(g, WEFT_INT64, 1, s4);
    assert_null(weft_vector_norm(g, iv, 2.0, 0, NULL, false));
    const char *msg = weft_graph_error_message(g);
    const char *want_msg = "VectorNorm: input 0 has type int64[4] (need float32 or float64) "
                           "(weft_vector_norm at ";
    assert_int_equal(strncmp(msg, want_msg, strlen(want_msg)), 0);
    assert_non_null(strstr(msg, "test_linalg_lapack.c:"));
    weft_graph_clear_error(g);
    assert_null(weft_matrix_norm(g, v, WEFT_NORM_FRO, false));
    assert_int_equal(weft_graph_error(g), WEFT_ETYPE);
    weft_graph_clear_error(g);
    weft_tensor_release(mv);
    weft_tensor_release(vv);
    weft_tensor_release(cv);
    weft_tensor_release(av);
}

typedef enum nk { N_POW3, N_POWM2, N_FRO, N_NUC, N_TWO, N_ONE, N_VEC2, N_VEC3 } nk_t;

static weft_var_t *norm_fn(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    nk_t k = *(const nk_t *)user;
    (void)n;
    switch (k) {
    case N_POW3: return weft_matrix_power(g, in[0], 3);
    case N_POWM2: return weft_matrix_power(g, shifted(g, in[0]), -2);
    case N_FRO: return weft_matrix_norm(g, in[0], WEFT_NORM_FRO, false);
    case N_NUC: return weft_matrix_norm(g, in[0], WEFT_NORM_NUC, false);
    case N_TWO: return weft_matrix_norm(g, in[0], WEFT_NORM_TWO, true);
    case N_ONE: return weft_matrix_norm(g, in[0], WEFT_NORM_ONE, false);
    case N_VEC2: return weft_vector_norm(g, in[0], 2.0, 0, NULL, false);
    default: return weft_vector_norm(g, in[0], 3.0, 1, (int[]){1}, false);
    }
}

static void test_power_and_norm_grads_verify(void **state)
{
    (void)state;
    int64_t s23[2] = {2, 3};
    for (int k = N_POW3; k <= N_VEC3; k++) {
        nk_t kk = (nk_t)k;
        weft_tensor_t *pt = ck_random(WEFT_FLOAT64, 2, k <= N_POWM2 ? s33 : s23, 0.2, 1, 40 + k);
        ck_verify(norm_fn, &kk, 1, &pt);
        weft_tensor_release(pt);
    }
}


/* ---- Qr ------------------------------------------------------------------------------ */

static void test_qr_matches_numpy_both_shapes(void **state)
{
    weft_graph_t *g = *state;
    int64_t s32b[2] = {3, 2}, s22[2] = {2, 2}, s23[2] = {2, 3};
    weft_tensor_t *tv = ck_tensor(WEFT_FLOAT64, 2, s32b, (double[]){3, 1, 0, 2, 4, -1});
    weft_tensor_t *wv = ck_tensor(WEFT_FLOAT64, 2, s23, (double[]){3, 1, 2, 0, 2, 1});
    weft_var_t *t = var_like(g, tv), *w = var_like(g, wv), *r = NULL, *r2 = NULL;
    weft_var_t *q = weft_qr(g, t, &r), *q2 = weft_qr(g, w, &r2);
    weft_var_t *outs[3] = {q, r, weft_dot(g, q, r)};
    weft_tensor_t *res[3] = {NULL};
    assert_int_equal(weft_eval(g, 1, &t, &tv, 3, outs, res), WEFT_OK);
    /* NumPy: np.linalg.qr(M) (same LAPACK routine, same signs) */
    ck_expect(res[0], 2, s32b, (double[]){-0.6, -0.4587698754906626, 0, -0.8192319205190404, -0.8,
                                          0.3440774066179969}, 1e-15);
    ck_expect(res[1], 2, s22, (double[]){-5, 0.2, 0, -2.4413111231467406}, 1e-14);
    ck_expect(res[2], 2, s32b, (double[]){3, 1, 0, 2, 4, -1}, 1e-14);
    for (int i = 0; i < 3; i++) {
        weft_tensor_release(res[i]);
    }
    weft_var_t *outs2[2] = {q2, r2};
    assert_int_equal(weft_eval(g, 1, &w, &wv, 2, outs2, res), WEFT_OK);
    ck_expect(res[0], 2, s22, (double[]){1, 0, 0, 1}, 0);
    ck_expect(res[1], 2, s23, (double[]){3, 1, 2, 0, 2, 1}, 0);
    weft_tensor_release(res[0]);
    weft_tensor_release(res[1]);
    weft_tensor_release(tv);
    weft_tensor_release(wv);
}

static weft_var_t *qr_fn(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    weft_var_t *r = NULL, *q = weft_qr(g, in[0], &r);
    (void)n;
    return *(const int *)user ? r : q;
}

static void test_qr_grads_verify(void **state)
{
    (void)state;
    int64_t s32b[2] = {3, 2};
    for (int which = 0; which < 2; which++) {
        weft_tensor_t *p1 = ck_random(WEFT_FLOAT64, 2, s32b, -1, 1, 60 + which);
        weft_tensor_t *p2 = ck_random(WEFT_FLOAT64, 2, s33, -1, 1, 62 + which);
        ck_verify(qr_fn, &which, 1, &p1);
        ck_verify(qr_fn, &which, 1, &p2);
        weft_tensor_release(p1);
        weft_tensor_release(p2);
    }
}


/* ---- pinv, Svd vector gradients -------------------------------------------------------- */

static void test_pinv_matches_numpy(void **state)
{
    weft_graph_t *g = *state;
    int64_t s32b[2] = {3, 2}, s23[2] = {2, 3}, s22[2] = {2, 2};
    weft_tensor_t *mv = ck_tensor(WEFT_FLOAT64, 2, s32b, (double[]){3, 1, 0, 2, 4, -1}), *r = NULL;
    weft_var_t *m = var_like(g, mv);
    assert_int_equal(run2(g, 1, &m, &mv, weft_pinv(g, m, 1e-15), &r), WEFT_OK);
    /* NumPy: np.linalg.pinv(M) */
    ck_expect(r, 2, s23, (double[]){0.12751677852349003, 0.013422818791946307, 0.15436241610738263,
                                    0.18791946308724833, 0.3355704697986578, -0.14093959731543626},
              1e-15);
    weft_tensor_release(r);
    /* rank 1: the zero singular value is cut */
    weft_tensor_t *rv = ck_tensor(WEFT_FLOAT64, 2, s22, (double[]){1, 2, 2, 4});
    weft_var_t *rk = var_like(g, rv);
    assert_int_equal(run2(g, 1, &rk, &rv, weft_pinv(g, rk, 1e-15), &r), WEFT_OK);
    ck_expect(r, 2, s22, (double[]){0.04, 0.08, 0.08, 0.16}, 1e-15);
    weft_tensor_release(r);
    assert_null(weft_pinv(g, rk, -1.0));
    assert_int_equal(weft_graph_error(g), WEFT_EINVAL);
    weft_graph_clear_error(g);
    weft_tensor_release(mv);
    weft_tensor_release(rv);
}

typedef enum uk { U_PINV, U_U, U_VH, U_ALL } uk_t;

static weft_var_t *svd_vec_fn(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    uk_t k = *(const uk_t *)user;
    weft_var_t *u = NULL, *vh = NULL, *s = NULL;
    (void)n;
    if (k == U_PINV) {
        return weft_pinv(g, in[0], 1e-15);
    }
    s = weft_svd(g, in[0], false, true, &u, &vh);
    if (k == U_U) {
        return u;
    }
    if (k == U_VH) {
        return vh;
    }
    /* all three outputs reach the cost */
    return weft_add(g, weft_dot(g, weft_mul(g, u, u), vh), weft_sum(g, s, 0, NULL, false));
}

static void test_svd_vectors_and_pinv_grads_verify(void **state)
{
    (void)state;
    int64_t s32b[2] = {3, 2}, s23[2] = {2, 3};
    for (int k = U_PINV; k <= U_ALL; k++) {
        uk_t kk = (uk_t)k;
        weft_tensor_t *p1 = ck_random(WEFT_FLOAT64, 2, s32b, -1, 1, 70 + k);
        weft_tensor_t *p2 = ck_random(WEFT_FLOAT64, 2, s23, -1, 1, 80 + k);
        weft_tensor_t *p3 = ck_random(WEFT_FLOAT64, 2, s33, -1, 1, 90 + k);
        ck_verify(svd_vec_fn, &kk, 1, &p1);
        ck_verify(svd_vec_fn, &kk, 1, &p2);
        ck_verify(svd_vec_fn, &kk, 1, &p3);
        weft_tensor_release(p1);
        weft_tensor_release(p2);
        weft_tensor_release(p3);
    }
}


/* ---- two batch axes, full_matrices ---------------------------------------------------- */

typedef struct svdk {
    bool full;
    int out; /* 0: u, 1: vh, 2: u, s and vh together */
} svdk_t;

static weft_var_t *svd_any_fn(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    const svdk_t *k = user;
    weft_var_t *u = NULL, *vh = NULL, *s = weft_svd(g, in[0], k->full, true, &u, &vh);
    (void)n;
    if (k->out < 2) {
        return k->out ? vh : u;
    }
    int nd = weft_type_ndim(weft_var_type(s));
    return weft_matmul(g, weft_mul(g, u, u), weft_mul(g, vh, weft_expand_dims(g, s, nd)));
}

static void verify_svd(svdk_t k, int nd, const int64_t *shape, uint64_t seed)
{
    weft_tensor_t *pt = ck_random(WEFT_FLOAT64, nd, shape, -1, 1, seed);
    ck_verify(svd_any_fn, &k, 1, &pt);
    weft_tensor_release(pt);
}

/* Every batched op's gradient on stacks with two batch axes. */
static void test_grads_two_batch_axes(void **state)
{
    (void)state;
    int64_t sa[4] = {2, 2, 3, 3}, sb[4] = {2, 2, 3, 2}, sw[4] = {2, 2, 2, 3};
    verify(G_SOLVE, 4, sa, 4, sb, 201);
    verify(G_INV, 4, sa, 0, NULL, 203);
    verify(G_DET, 4, sa, 0, NULL, 205);
    verify(G_SLOGDET, 4, sa, 0, NULL, 207);
    verify(G_CHO, 4, sa, 4, sb, 209);
    verify_decomp(D_SVALS, 4, sb, 211);
    verify_decomp(D_EIGVALS, 4, sa, 213);
    verify_decomp(D_EIGVECS, 4, sa, 215);
    verify_decomp(D_EIGVECS_UPPER, 4, sa, 217);
    for (int which = 0; which < 2; which++) {
        weft_tensor_t *p = ck_random(WEFT_FLOAT64, 4, sb, -1, 1, 219 + (uint64_t)which);
        ck_verify(qr_fn, &which, 1, &p);
        weft_tensor_release(p);
    }
    for (int out = 0; out < 3; out++) {
        verify_svd((svdk_t){false, out}, 4, sb, 230 + (uint64_t)out);
        verify_svd((svdk_t){false, out}, 4, sw, 240 + (uint64_t)out);
    }
}

/* full_matrices: square matrices (full u, vh = the reduced ones) have the
 * vectors' gradient; other shapes refuse it, naming the node. */
static void test_svd_full_matrices_grads(void **state)
{
    weft_graph_t *g = *state;
    int64_t s233[3] = {2, 3, 3};
    for (int out = 0; out < 3; out++) {
        verify_svd((svdk_t){true, out}, 2, s33, 250 + (uint64_t)out);
        verify_svd((svdk_t){true, out}, 3, s233, 260 + (uint64_t)out);
    }
    /* the singular values alone: every shape */
    weft_var_t *a = ck_var(g, WEFT_FLOAT64, 2, s32), *u = NULL, *vh = NULL;
    weft_var_t *s = weft_svd(g, a, true, true, &u, &vh);
    assert_non_null(weft_grad(g, weft_sum(g, s, 0, NULL, false), a));
    assert_null(weft_grad(g, weft_sum(g, u, 0, NULL, false), a));
    assert_int_equal(weft_graph_error(g), WEFT_ENOTIMPL);
    const char *msg = weft_graph_error_message(g);
    assert_non_null(strstr(msg, "Svd (built at "));
    assert_non_null(strstr(msg, "test_linalg_lapack.c:"));
    assert_non_null(strstr(msg, "): no gradient through u or vh with full_matrices for a matrix "
                                "that is not square (static lengths): their extra columns / "
                                "rows are not unique (PyTensor refuses full_matrices too) "
                                "(weft_grad at "));
    weft_graph_clear_error(g);
}


/* ---- Lstsq ----------------------------------------------------------------------------- */

static void test_lstsq_matches_numpy(void **state)
{
    weft_graph_t *g = *state;
    int64_t s32b[2] = {3, 2}, s23[2] = {2, 3}, s2[1] = {2}, s22[2] = {2, 2};
    weft_tensor_t *mv = ck_tensor(WEFT_FLOAT64, 2, s32b, (double[]){3, 1, 0, 2, 4, -1});
    weft_tensor_t *bv = ck_tensor(WEFT_FLOAT64, 1, s3, BV);
    weft_tensor_t *bm = ck_tensor(WEFT_FLOAT64, 2, s32b, (double[]){1, 0, 2, 1, 3, -1});
    weft_tensor_t *wv = ck_tensor(WEFT_FLOAT64, 2, s23, (double[]){3, 1, 2, 0, 2, 1});
    weft_tensor_t *cv = ck_tensor(WEFT_FLOAT64, 1, s2, (double[]){1, 2}), *r = NULL;
    weft_var_t *m = var_like(g, mv), *b = var_like(g, bv), *B = var_like(g, bm);
    weft_var_t *w = var_like(g, wv), *c = var_like(g, cv);
    weft_tensor_t *v1[2] = {mv, bv}, *v2[2] = {mv, bm}, *v3[2] = {wv, cv};
    /* NumPy: np.linalg.lstsq(a, b, rcond=None)[0] */
    assert_int_equal(run2(g, 2, (weft_var_t *[]){m, b}, v1, weft_lstsq(g, m, b, -1), &r),
                     WEFT_OK);
    ck_expect(r, 1, s2, (double[]){0.6174496644295304, 0.4362416107382552}, 1e-15);
    weft_tensor_release(r);
    assert_int_equal(run2(g, 2, (weft_var_t *[]){m, B}, v2, weft_lstsq(g, m, B, -1), &r),
                     WEFT_OK);
    ck_expect(r, 2, s22, (double[]){0.6174496644295304, -0.1409395973154363, 0.4362416107382552,
                                    0.47651006711409405}, 1e-15);
    weft_tensor_release(r);
    /* underdetermined: the minimum-norm solution */
    assert_int_equal(run2(g, 2, (weft_var_t *[]){w, c}, v3, weft_lstsq(g, w, c, -1), &r),
                     WEFT_OK);
    ck_expect(r, 1, s3, (double[]){-0.16666666666666638, 0.833333333333333, 0.33333333333333326},
              1e-15);
    weft_tensor_release(r);
    assert_null(weft_lstsq(g, m, c, -1));
    expect_tail(weft_graph_error_message(g), "apply of Lstsq at ",
                "Lstsq: input 0 dim 0 has length 3 but input 1 dim 0 has 2");
    weft_graph_clear_error(g);
    weft_tensor_t *ts[5] = {mv, bv, bm, wv, cv};
    for (int i = 0; i < 5; i++) {
        weft_tensor_release(ts[i]);
    }
}

static weft_var_t *lstsq_fn(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    (void)n;
    (void)user;
    return weft_lstsq(g, in[0], in[1], -1);
}

static void test_lstsq_grads_verify(void **state)
{
    (void)state;
    int64_t s42[2] = {4, 2}, s4[1] = {4}, s43[2] = {4, 3};
    weft_tensor_t *pa = ck_random(WEFT_FLOAT64, 2, s42, -1, 1, 100);
    weft_tensor_t *pv[2] = {pa, ck_random(WEFT_FLOAT64, 1, s4, -1, 1, 101)};
    weft_tensor_t *pm[2] = {pa, ck_random(WEFT_FLOAT64, 2, s43, -1, 1, 102)};
    ck_verify(lstsq_fn, NULL, 2, pv);
    ck_verify(lstsq_fn, NULL, 2, pm);
    weft_tensor_release(pa);
    weft_tensor_release(pv[1]);
    weft_tensor_release(pm[1]);
}


/* ---- same bits at any worker count ------------------------------------------------- */

/* A stack of 6 matrices of order 40 through Solve, Inv, SLogDet, Svd, Eigh and
 * Qr in compiled functions on 1, 2 and 4 workers: one one-thread LAPACK call
 * per matrix, so every output has the same bytes. */
static void test_same_bits_at_1_2_4_workers(void **state)
{
    (void)state;
    int64_t sa[3] = {6, 40, 40}, sb[3] = {6, 40, 3};
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    weft_var_t *in[2] = {ck_var(g, WEFT_FLOAT64, 3, sa), ck_var(g, WEFT_FLOAT64, 3, sb)};
    weft_var_t *sign = NULL, *u = NULL, *vh = NULL, *v = NULL, *r = NULL;
    weft_var_t *outs[10] = {weft_solve(g, in[0], in[1]), weft_inv(g, in[0]),
                            weft_slogdet(g, in[0], &sign), NULL,
                            weft_svd(g, in[0], false, true, &u, &vh), NULL, NULL,
                            weft_eigh(g, in[0], true, &v), NULL, weft_qr(g, in[1], &r)};
    outs[3] = sign;
    outs[5] = u;
    outs[6] = vh;
    outs[8] = v;
    weft_tensor_t *vals[2] = {ck_random(WEFT_FLOAT64, 3, sa, -1, 1, 200),
                              ck_random(WEFT_FLOAT64, 3, sb, -1, 1, 201)};
    weft_tensor_t *ref[10] = {NULL};
    const int threads[3] = {1, 2, 4};
    for (int t = 0; t < 3; t++) {
        weft_function_options_t o;
        memset(&o, 0, sizeof o);
        o.size = sizeof o;
        o.threads = threads[t];
        weft_function_t *fn = NULL;
        assert_int_equal(weft_function_compile(2, in, 10, outs, 0, NULL, &o, &fn), WEFT_OK);
        weft_tensor_t *res[10] = {NULL};
        assert_int_equal(weft_function_call(fn, 2, vals, 10, res), WEFT_OK);
        for (int i = 0; i < 10; i++) {
            if (t == 0) {
                ref[i] = res[i];
                continue;
            }
            size_t bytes = weft_tensor_size(res[i]) * sizeof(double);
            assert_int_equal(weft_tensor_size(res[i]), weft_tensor_size(ref[i]));
            assert_memory_equal(weft_tensor_data(res[i]), weft_tensor_data(ref[i]), bytes);
            weft_tensor_release(res[i]);
        }
        weft_function_destroy(fn);
    }
    for (int i = 0; i < 10; i++) {
        weft_tensor_release(ref[i]);
    }
    weft_tensor_release(vals[0]);
    weft_tensor_release(vals[1]);
    weft_graph_destroy(g);
}

/* ---- JSON -------------------------------------------------------------------------- */

/* WEFT_SAVED_GRAPH=path also writes the text (tests/ops/data/linalg_lapack.json
 * was made so; tests/io's schema check validates it). */

static void test_json_round_trip(void **state)
{
    (void)state;
    weft_graph_t *g = NULL, *g2 = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    weft_var_t *a = ck_var(g, WEFT_FLOAT64, 2, s33), *b = ck_var(g, WEFT_FLOAT64, 2, s32);
    weft_var_t *sign = NULL, *ld = weft_slogdet(g, a, &sign);
    weft_var_t *u = NULL, *vh = NULL, *v = NULL;
    weft_var_t *outs[15] = {weft_solve(g, a, b), weft_inv(g, a), weft_det(g, a), ld, sign,
                            weft_cholesky_solve(g, weft_cholesky(g, a), b),
                            weft_svd(g, b, true, true, &u, &vh), u, vh,
                            weft_eigh(g, a, false, &v), v, NULL, NULL,
                            weft_solve_triangular(g, a, b, true, WEFT_TRANS_T, false),
                            weft_solve_triangular(g, a, b, false, WEFT_TRANS_N, true)};
    weft_var_t *qr_r = NULL;
    outs[11] = weft_qr(g, b, &qr_r);
    outs[12] = weft_lstsq(g, b, a, 0.25);
    weft_var_t *ins[2] = {a, b};
    weft_graph_io_t io = {2, ins, NULL, 15, outs, 0, NULL}, back;
    char *text = NULL;
    assert_int_equal(weft_graph_io_save(&io, &text), WEFT_OK);
    const char *path = getenv("WEFT_SAVED_GRAPH");
    FILE *fp = path ? fopen(path, "w") : NULL;
    if (fp) {
        fputs(text, fp);
        fclose(fp);
    }
    assert_int_equal(weft_graph_create(NULL, &g2), WEFT_OK);
    assert_int_equal(weft_graph_io_load(g2, text, strlen(text), NULL, &back), WEFT_OK);
    assert_int_equal(back.n_outputs, 15);
    weft_tensor_t *vals[2] = {ck_tensor(WEFT_FLOAT64, 2, s33, A),
                              ck_tensor(WEFT_FLOAT64, 2, s32, BM)};
    weft_tensor_t *r1[15] = {NULL}, *r2[15] = {NULL};
    assert_int_equal(weft_eval(g, 2, ins, vals, 15, outs, r1), WEFT_OK);
    assert_int_equal(weft_eval(g2, 2, back.inputs, vals, 15, back.outputs, r2), WEFT_OK);
    for (int i = 0; i < 15; i++) {
        size_t bytes = weft_tensor_size(r1[i]) * weft_dtype_size(weft_tensor_dtype(r1[i]));
        assert_int_equal(weft_tensor_size(r1[i]), weft_tensor_size(r2[i]));
        assert_memory_equal(weft_tensor_data(r1[i]), weft_tensor_data(r2[i]), bytes);
        weft_tensor_release(r1[i]);
        weft_tensor_release(r2[i]);
    }
    assert_non_null(strstr(text, "\"op\":\"SLogDet\""));
    assert_non_null(strstr(text, "\"op\":\"Lstsq\",\"props\":{\"rcond\":0.25}"));
    assert_non_null(strstr(text, "\"op\":\"Svd\",\"props\":{\"full_matrices\":true,"
                                 "\"compute_uv\":true}"));
    assert_non_null(strstr(text, "\"op\":\"Eigh\",\"props\":{\"lower\":false,"
                                 "\"compute_v\":true}"));
    assert_non_null(strstr(text, "\"op\":\"SolveTriangular\",\"props\":{\"lower\":true,"
                                 "\"trans\":1,\"unit_diagonal\":false}"));
    weft_tensor_release(vals[0]);
    weft_tensor_release(vals[1]);
    weft_graph_io_clear(&back);
    weft_graph_io_free_text(text);
    weft_graph_destroy(g2);
    weft_graph_destroy(g);
}

#define T(name) cmocka_unit_test_setup_teardown(name, fx_setup, fx_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_solve_inv_det_match_numpy),
        T(test_slogdet_det_signs_singular_and_float32),
        T(test_cholesky_solve_matches_solve),
        T(test_stacks_solve_inv_det_slogdet),
        T(test_singular_matrix_errors_name_the_node),
        T(test_shape_and_type_errors_exact),
        cmocka_unit_test(test_grads_verify),
        T(test_svd_values_reconstruction_full),
        T(test_svd_stack_and_eigh_values),
        cmocka_unit_test(test_decomp_grads_verify),
        T(test_matrix_power_and_norms_match_numpy),
        cmocka_unit_test(test_power_and_norm_grads_verify),
        T(test_qr_matches_numpy_both_shapes),
        cmocka_unit_test(test_qr_grads_verify),
        T(test_pinv_matches_numpy),
        cmocka_unit_test(test_svd_vectors_and_pinv_grads_verify),
        cmocka_unit_test(test_grads_two_batch_axes),
        T(test_svd_full_matrices_grads),
        T(test_lstsq_matches_numpy),
        cmocka_unit_test(test_lstsq_grads_verify),
        cmocka_unit_test(test_json_round_trip),
        cmocka_unit_test(test_same_bits_at_1_2_4_workers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
