/* The LAPACK kind's opt-in WEFT_BLAS_THREADS_FREE (weft/linalg.h): the
 * setting's API, the pool's idle-worker hint it reads, and a large Solve
 * under it: in a compiled function on a 2-worker pool its values agree
 * with the one-thread result to rounding (OpenBLAS's bits depend on its
 * thread count, docs/linalg.md), and in the sequential evaluator (no pool:
 * one thread) they are the default's bits exactly. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <math.h>
#include <time.h>

#include "ops_check.h"
#include "ops_fixture.h" /* fx_setup, fx_teardown: *state is the graph */
#include "weft/function.h"
#include "weft/kernel.h"
#include "weft/linalg.h"
#include "weft/linalg_lapack.h"
#include "weft/sched.h"

#define ORDER 300 /* >= 256: FREE applies */

static void test_setting_api(void **state)
{
    (void)state;
    int prev = 0;
    assert_int_equal(weft_blas_set_threads(WEFT_BLAS_KIND_LAPACK, WEFT_BLAS_THREADS_FREE, &prev),
                     WEFT_OK);
    assert_int_equal(prev, 1);
    assert_int_equal(weft_blas_get_threads(WEFT_BLAS_KIND_LAPACK), WEFT_BLAS_THREADS_FREE);
    assert_int_equal(weft_blas_set_threads(WEFT_BLAS_KIND_LEVEL3, WEFT_BLAS_THREADS_FREE, NULL),
                     WEFT_EINVAL);
    assert_int_equal(weft_blas_set_threads(WEFT_BLAS_KIND_LAPACK, -2, NULL), WEFT_EINVAL);
    assert_int_equal(weft_blas_set_threads(WEFT_BLAS_KIND_LAPACK, 1, &prev), WEFT_OK);
    assert_int_equal(prev, WEFT_BLAS_THREADS_FREE);
    assert_int_equal(weft_kernel_idle_workers(NULL), 0);
    assert_int_equal(weft_pool_idle_workers(NULL), 0);
}

/* A pool with no work: both workers end up asleep, counted as idle. */
static void test_pool_idle_workers(void **state)
{
    (void)state;
    weft_pool_t *pool = NULL;
    assert_int_equal(weft_pool_create(2, NULL, &pool), WEFT_OK);
    int idle = 0;
    for (int i = 0; i < 400 && idle != 2; i++) { /* up to 2 s */
        nanosleep(&(struct timespec){0, 5000000}, NULL);
        idle = weft_pool_idle_workers(pool);
    }
    assert_int_equal(idle, 2);
    assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
}

static weft_tensor_t *solve_eval(weft_graph_t *g, weft_var_t *const *in, weft_tensor_t *const *v,
                                 weft_var_t *x)
{
    weft_tensor_t *r = NULL;
    assert_int_equal(weft_eval(g, 2, in, v, 1, &x, &r), WEFT_OK);
    return r;
}

static void test_large_solve_under_free(void **state)
{
    weft_graph_t *g = *state;
    int64_t sa[2] = {ORDER, ORDER}, sb[2] = {ORDER, 4};
    weft_tensor_t *v[2] = {ck_random(WEFT_FLOAT64, 2, sa, -1, 1, 71),
                           ck_random(WEFT_FLOAT64, 2, sb, -1, 1, 72)};
    double *ad = weft_tensor_data(v[0]);
    for (int i = 0; i < ORDER; i++) {
        ad[i * ORDER + i] += ORDER; /* well conditioned */
    }
    weft_var_t *in[2] = {ck_var(g, WEFT_FLOAT64, 2, sa), ck_var(g, WEFT_FLOAT64, 2, sb)};
    weft_var_t *x = weft_solve(g, in[0], in[1]);
    weft_tensor_t *ref = solve_eval(g, in, v, x);
    assert_int_equal(weft_blas_set_threads(WEFT_BLAS_KIND_LAPACK, WEFT_BLAS_THREADS_FREE, NULL),
                     WEFT_OK);
    weft_tensor_t *seq = solve_eval(g, in, v, x);
    size_t bytes = weft_tensor_size(ref) * sizeof(double);
    assert_memory_equal(weft_tensor_data(seq), weft_tensor_data(ref), bytes);
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.threads = 2;
    weft_function_t *fn = NULL;
    assert_int_equal(weft_function_compile(2, in, 1, &x, 0, NULL, &o, &fn), WEFT_OK);
    for (int call = 0; call < 3; call++) {
        weft_tensor_t *got = NULL;
        assert_int_equal(weft_function_call(fn, 2, v, 1, &got), WEFT_OK);
        const double *gd = weft_tensor_data(got), *rd = weft_tensor_data(ref);
        for (size_t i = 0; i < weft_tensor_size(ref); i++) {
            assert_true(fabs(gd[i] - rd[i]) <= 1e-12 * (1.0 + fabs(rd[i])));
        }
        weft_tensor_release(got);
    }
    assert_int_equal(weft_function_destroy(fn), WEFT_OK);
    assert_int_equal(weft_blas_set_threads(WEFT_BLAS_KIND_LAPACK, 1, NULL), WEFT_OK);
    weft_tensor_release(ref);
    weft_tensor_release(seq);
    weft_tensor_release(v[0]);
    weft_tensor_release(v[1]);
}

#define T(name) cmocka_unit_test_setup_teardown(name, fx_setup, fx_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_setting_api),
        cmocka_unit_test(test_pool_idle_workers),
        T(test_large_solve_under_free),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
