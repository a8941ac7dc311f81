/* The linear algebra and reduction kernels inside a compiled function on a
 * 2-worker pool: several independent Cholesky / Gemm / Dot / reduction
 * chains and their gradients run concurrently (one-thread BLAS per node) and
 * must give the sequential evaluator's values on every call. Under TSan this
 * is the race check of the kernels and of the BLAS thread handling. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ops_check.h"
#include "weft/function.h"

#define CHAINS 4
#define N 24

/* cost_i = sum(chol(x x^T + N I)) + max(x @ x^T) + mean(gemm(z, a, x, x^T, b)). */
static weft_var_t *build_chain(weft_graph_t *g, weft_var_t *x, weft_var_t *z)
{
    double eye[N * N] = {0};
    for (int i = 0; i < N; i++) {
        eye[i * N + i] = N;
    }
    const weft_type_t *t = weft_var_type(x);
    weft_var_t *s = NULL, *e = NULL, *spd = NULL, *l = NULL, *c1 = NULL, *xt = NULL;
    weft_var_t *xx = NULL, *c2 = NULL, *a = NULL, *b = NULL, *gm = NULL, *c3 = NULL;
    weft_var_t *c12 = NULL, *cost = NULL;
    assert_non_null(s = weft_syrk(g, x, false, 1.0));
    assert_non_null(e = weft_constant_create(g, t, eye, sizeof eye));
    assert_non_null(spd = weft_add(g, s, e));
    assert_non_null(l = weft_cholesky(g, spd));
    assert_non_null(c1 = weft_sum(g, l, 0, NULL, false));
    assert_non_null(xt = weft_transpose(g, x));
    assert_non_null(xx = weft_dot(g, x, xt));
    assert_non_null(c2 = weft_max(g, xx, 0, NULL, false));
    assert_non_null(a = weft_constant_scalar(g, WEFT_FLOAT64, 0.5));
    assert_non_null(b = weft_constant_scalar(g, WEFT_FLOAT64, 2.0));
    assert_non_null(gm = weft_gemm(g, z, a, x, xt, b, false));
    assert_non_null(c3 = weft_mean(g, gm, 0, NULL, false));
    assert_non_null(c12 = weft_add(g, c1, c2));
    assert_non_null(cost = weft_add(g, c12, c3));
    return cost;
}

static void test_linalg_parallel_function_matches_sequential_eval(void **state)
{
    (void)state;
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    const int64_t shape[2] = {N, N};
    weft_var_t *in[2 * CHAINS], *outs[1 + 2 * CHAINS], *total = NULL;
    weft_tensor_t *vals[2 * CHAINS];
    for (int c = 0; c < CHAINS; c++) {
        in[2 * c] = ck_var(g, WEFT_FLOAT64, 2, shape);
        in[2 * c + 1] = ck_var(g, WEFT_FLOAT64, 2, shape);
        vals[2 * c] = ck_random(WEFT_FLOAT64, 2, shape, -1, 1, 500 + (uint64_t)c);
        vals[2 * c + 1] = ck_random(WEFT_FLOAT64, 2, shape, -1, 1, 600 + (uint64_t)c);
        weft_var_t *cost = build_chain(g, in[2 * c], in[2 * c + 1]);
        if (total) {
            assert_non_null(total = weft_add(g, total, cost));
        } else {
            total = cost;
        }
    }
    outs[0] = total;
    assert_non_null(weft_grads(g, total, 2 * CHAINS, in, NULL, outs + 1));
    weft_tensor_t *ref[1 + 2 * CHAINS] = {NULL}, *got[1 + 2 * CHAINS] = {NULL};
    assert_int_equal(weft_eval(g, 2 * CHAINS, in, vals, 1 + 2 * CHAINS, outs, ref), WEFT_OK);
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.mode = "none";
    o.threads = 2;
    weft_function_t *fn = NULL;
    weft_status_t st = weft_function_compile(2 * CHAINS, in, 1 + 2 * CHAINS, outs, 0, NULL, &o,
                                             &fn);
    if (st != WEFT_OK) {
        print_error("compile: %s\n", weft_function_last_error(NULL));
    }
    assert_int_equal(st, WEFT_OK);
#ifdef WEFT_SANITIZED
    const int calls = 5;
#else
    const int calls = 30;
#endif
    for (int k = 0; k < calls; k++) {
        assert_int_equal(weft_function_call(fn, 2 * CHAINS, vals, 1 + 2 * CHAINS, got), WEFT_OK);
        for (int i = 0; i < 1 + 2 * CHAINS; i++) {
            bool eq = false;
            assert_int_equal(weft_tensor_allclose(got[i], ref[i], 1e-12, 1e-12, &eq), WEFT_OK);
            assert_true(eq);
            weft_tensor_release(got[i]);
            got[i] = NULL;
        }
    }
    assert_int_equal(weft_function_destroy(fn), WEFT_OK);
    for (int i = 0; i < 1 + 2 * CHAINS; i++) {
        weft_tensor_release(ref[i]);
    }
    for (int i = 0; i < 2 * CHAINS; i++) {
        weft_tensor_release(vals[i]);
    }
    weft_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_linalg_parallel_function_matches_sequential_eval),
    };
    return cmocka_run_group_tests_name("linalg_parallel", tests, NULL, NULL);
}
