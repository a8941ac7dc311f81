/* Concurrency of compiled functions: one function called from 4 threads at
 * once (exact results, one per-call state per concurrent call, per-thread
 * error text), two functions sharing one pool, a failing call beside good
 * ones, an OpFromGraph run through perform by concurrent nodes and calls
 * (its run storage cache). Run under TSan by the suite. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "compile_test_ops.h"

#ifdef WEFT_SANITIZED
#define CALLS 40
#else
#define CALLS 400
#endif

static weft_graph_t *g;
static const int64_t S16[1] = {16};

static int setup(void **state)
{
    (void)state;
    return weft_graph_create(NULL, &g) == WEFT_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    weft_graph_destroy(g);
    return 0;
}

/* y = 2x + 2(2x) + x: a small diamond with parallel branches. */
static weft_function_t *diamond(weft_pool_t *pool, int threads)
{
    weft_var_t *x = ct_var(g, "x", 1, S16);
    weft_var_t *a = ct_call(g, &ct_twice_class, NULL, 1, x, NULL);
    weft_var_t *b = ct_call(g, &ct_twice_class, NULL, 1, a, NULL);
    weft_var_t *c = ct_call(g, &ct_add_class, NULL, 2, a, b);
    weft_var_t *y = ct_call(g, &ct_add_class, NULL, 2, c, x);
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.mode = "none";
    o.pool = pool;
    o.threads = threads;
    weft_function_t *f = NULL;
    assert_int_equal(weft_function_compile(1, &x, 1, &y, 0, NULL, &o, &f), WEFT_OK);
    return f;
}

typedef struct worker_arg {
    weft_function_t *f;
    int id;
    int bad;      /* count of wrong results or statuses */
    bool failing; /* pass a wrongly shaped input every 3rd call */
} worker_arg_t;

static void *caller(void *p)
{
    worker_arg_t *w = p;
    weft_tensor_t *x = ct_tensor(1, S16, (double)w->id * 100.0), *y = ct_tensor(1, S16, 0.0);
    weft_tensor_t *bad = ct_tensor(1, (int64_t[]){3}, 0.0);
    for (int c = 0; c < CALLS; c++) {
        if (w->failing && c % 3 == 0) {
            if (weft_function_call(w->f, 1, &bad, 1, &y) != WEFT_ESHAPE) w->bad++;
            if (!strstr(weft_function_last_error(w->f), "got float64[3]")) w->bad++;
            continue;
        }
        weft_tensor_fill(y, -1.0);
        if (weft_function_call(w->f, 1, &x, 1, &y) != WEFT_OK) w->bad++;
        if (weft_function_last_error(w->f)[0]) w->bad++; /* never another thread's text */
        for (size_t i = 0; i < 16; i++)
            if (weft_tensor_flat_get(y, i) != 7.0 * (w->id * 100.0 + (double)i)) w->bad++;
    }
    weft_tensor_release(bad);
    weft_tensor_release(x);
    weft_tensor_release(y);
    return NULL;
}

static void run_callers(worker_arg_t *args, int n)
{
    pthread_t th[8];
    for (int i = 0; i < n; i++) assert_int_equal(pthread_create(&th[i], NULL, caller, &args[i]), 0);
    for (int i = 0; i < n; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < n; i++) assert_int_equal(args[i].bad, 0);
}

static void test_concurrency_four_threads_call_one_function_exactly(void **state)
{
    (void)state;
    weft_function_t *f = diamond(NULL, 2);
    worker_arg_t args[4];
    for (int i = 0; i < 4; i++) args[i] = (worker_arg_t){f, i + 1, 0, i == 3};
    run_callers(args, 4);
    weft_function_stats_t st = {.size = sizeof st};
    assert_int_equal(weft_function_stats(f, &st), WEFT_OK);
    assert_true(st.call_states >= 1 && st.call_states <= 4);
    assert_int_equal(st.calls, 4 * CALLS - (CALLS + 2) / 3); /* bad arguments never run */
    assert_int_equal(weft_function_destroy(f), WEFT_OK);
}

static void test_concurrency_two_functions_share_one_pool(void **state)
{
    (void)state;
    weft_pool_t *pool;
    assert_int_equal(weft_pool_create(2, NULL, &pool), WEFT_OK);
    weft_function_t *f1 = diamond(pool, 0), *f2 = diamond(pool, 2);
    worker_arg_t args[4] = {{f1, 1, 0, false}, {f2, 2, 0, false}, {f1, 3, 0, false},
                            {f2, 4, 0, true}};
    run_callers(args, 4);
    assert_int_equal(weft_pool_destroy(pool), WEFT_EBUSY);
    weft_function_destroy(f1);
    weft_function_destroy(f2);
    assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
}

/* 7x through an OpFromGraph that is not inlined: inner 3 * reshape(reshape(
 * 2a)) + a (views and fresh values in its run storage). Two nodes of the
 * same op run side by side and their mean is the output, so runs of the op
 * overlap within a call and across the 4 calling threads. */
static weft_function_t *ofg_sevenfold(void)
{
    weft_var_t *a = ct_var(g, "a", 1, S16), *b, *r, *back, *c, *inner;
    const int64_t s44[2] = {4, 4};
    assert_non_null(b = weft_binary_scalar(g, WEFT_ELEMWISE_MUL, a, 2.0));
    assert_non_null(r = weft_reshape(g, b, 2, s44));
    assert_non_null(back = weft_reshape(g, r, 1, S16));
    assert_non_null(c = weft_binary_scalar(g, WEFT_ELEMWISE_MUL, back, 3.0));
    assert_non_null(inner = weft_add(g, c, a));
    weft_ofg_options_t oo = WEFT_OFG_OPTIONS_INIT;
    oo.inline_expand = false;
    const weft_op_t *op = NULL;
    assert_int_equal(weft_ofg_create(g, 1, &a, 1, &inner, &oo, &op), WEFT_OK);
    weft_var_t *x = ct_var(g, "x", 1, S16), *y1, *y2, *sum, *y;
    assert_non_null(y1 = weft_op_call(g, op, 1, &x));
    assert_non_null(y2 = weft_op_call(g, op, 1, &x));
    assert_non_null(sum = weft_add(g, y1, y2));
    assert_non_null(y = weft_binary_scalar(g, WEFT_ELEMWISE_MUL, sum, 0.5));
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.mode = "none"; /* keeps both OpFromGraph nodes, not inlined */
    o.threads = 2;
    weft_function_t *f = NULL;
    assert_int_equal(weft_function_compile(1, &x, 1, &y, 0, NULL, &o, &f), WEFT_OK);
    return f;
}

static void test_concurrency_opfromgraph_runs_overlap_exactly(void **state)
{
    (void)state;
    weft_function_t *f = ofg_sevenfold();
    worker_arg_t args[4];
    for (int i = 0; i < 4; i++) args[i] = (worker_arg_t){f, i + 1, 0, false};
    run_callers(args, 4);
    assert_int_equal(weft_function_destroy(f), WEFT_OK);
}

/* A failing node in one thread's calls never disturbs another's. */
typedef struct fail_arg {
    weft_function_t *f;
    double sign;
    int bad;
} fail_arg_t;

static void *fail_caller(void *p)
{
    fail_arg_t *w = p;
    weft_tensor_t *x = ct_tensor(1, S16, w->sign), *y = ct_tensor(1, S16, 0.0);
    weft_tensor_fill(x, w->sign);
    for (int c = 0; c < CALLS; c++) {
        weft_status_t st = weft_function_call(w->f, 1, &x, 1, &y);
        if (w->sign < 0) {
            if (st != WEFT_ERANGE || !strstr(weft_function_last_error(w->f), "Fail")) w->bad++;
        } else if (st != WEFT_OK || weft_tensor_flat_get(y, 5) != 2.0) {
            w->bad++;
        }
    }
    weft_tensor_release(x);
    weft_tensor_release(y);
    return NULL;
}

static void test_concurrency_failing_calls_beside_good_ones(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S16);
    weft_var_t *a = ct_call(g, &ct_fail_class, NULL, 1, x, NULL);
    weft_var_t *b = ct_call(g, &ct_counted_class, NULL, 1, a, NULL);
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.mode = "none";
    o.threads = 2;
    weft_function_t *f = NULL;
    assert_int_equal(weft_function_compile(1, &x, 1, &b, 0, NULL, &o, &f), WEFT_OK);
    fail_arg_t args[3] = {{f, 1.0, 0}, {f, -1.0, 0}, {f, 1.0, 0}};
    pthread_t th[3];
    for (int i = 0; i < 3; i++)
        assert_int_equal(pthread_create(&th[i], NULL, fail_caller, &args[i]), 0);
    for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 3; i++) assert_int_equal(args[i].bad, 0);
    weft_function_destroy(f);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_concurrency_four_threads_call_one_function_exactly),
        T(test_concurrency_two_functions_share_one_pool),
        T(test_concurrency_opfromgraph_runs_overlap_exactly),
        T(test_concurrency_failing_calls_beside_good_ones),
    };
    return cmocka_run_group_tests_name("function_concurrency", tests, NULL, NULL);
}
