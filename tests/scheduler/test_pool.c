/* Pool: creation/destruction (1000 times), thread counts 1, 2, 4, 8 and 16
 * (more than cores), pin policies, parallel-for from outside and nested
 * inside workers (T=1 included), failure status, idle CPU use, bad input. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "weft/sched.h"

static const int thread_counts[] = { 1, 2, 4, 8, 16 };

static void test_pool_create_destroy_1000_times_succeeds(void **state)
{
    (void)state;
    for (int i = 0; i < 1000; i++) {
        weft_pool_t *pool = NULL;
        assert_int_equal(weft_pool_create(1 + (i & 1), NULL, &pool), WEFT_OK);
        assert_int_equal(weft_pool_thread_count(pool), 1 + (i & 1));
        assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
    }
}

static void test_pool_bad_arguments_return_einval(void **state)
{
    (void)state;
    weft_pool_t *pool = (weft_pool_t *)0x1;
    assert_int_equal(weft_pool_create(0, NULL, &pool), WEFT_EINVAL);
    assert_null(pool);
    assert_int_equal(weft_pool_create(-3, NULL, &pool), WEFT_EINVAL);
    assert_int_equal(weft_pool_create(100000, NULL, &pool), WEFT_EINVAL);
    assert_int_equal(weft_pool_create(1, NULL, NULL), WEFT_EINVAL);
    weft_pool_options_t small = WEFT_POOL_OPTIONS_INIT;
    small.size = 4;
    assert_int_equal(weft_pool_create(1, &small, &pool), WEFT_EINVAL);
    weft_pool_options_t badpin = WEFT_POOL_OPTIONS_INIT;
    badpin.pin = (weft_pin_policy_t)42;
    assert_int_equal(weft_pool_create(1, &badpin, &pool), WEFT_EINVAL);
    assert_int_equal(weft_pool_destroy(NULL), WEFT_OK);
    assert_int_equal(weft_pool_thread_count(NULL), 0);
    assert_false(weft_pool_is_pinned(NULL));
    assert_int_equal(weft_pool_current_worker(NULL), -1);
    assert_true(weft_pool_default_threads() >= 1);
}

static void test_pool_pin_policies_run_pinned_or_report_unpinned(void **state)
{
    (void)state;
    const weft_pin_policy_t pols[] = { WEFT_PIN_COMPACT, WEFT_PIN_SCATTER, WEFT_PIN_NONE };
    for (int i = 0; i < 3; i++) {
        weft_pool_options_t o = WEFT_POOL_OPTIONS_INIT;
        o.pin = pols[i];
        weft_pool_t *pool;
        assert_int_equal(weft_pool_create(3, &o, &pool), WEFT_OK);
        bool pinned = weft_pool_is_pinned(pool);
        printf("pool pin policy %d: pinned=%d\n", (int)pols[i], (int)pinned);
        if (pols[i] == WEFT_PIN_NONE) assert_false(pinned);
        assert_int_equal(weft_pool_current_worker(pool), -1);
        assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
    }
}

/* ---------------------------------------------------------- parallel-for */

typedef struct cover {
    _Atomic uint32_t *hits;
    size_t n;
    weft_pool_t *pool;
    _Atomic int bad_worker;
} cover_t;

static weft_status_t cover_body(void *arg, size_t b, size_t e, const weft_task_ctx_t *ctx)
{
    cover_t *c = arg;
    if (ctx->pool != c->pool || ctx->user != NULL ||
        (int)ctx->worker != weft_pool_current_worker(c->pool))
        atomic_store(&c->bad_worker, 1);
    for (size_t i = b; i < e; i++) atomic_fetch_add_explicit(&c->hits[i], 1, memory_order_relaxed);
    return WEFT_OK;
}

static void cover_check(weft_pool_t *pool, size_t n, size_t grain)
{
    cover_t c = { calloc(n + 1, sizeof(uint32_t)), n, pool, 0 };
    assert_non_null(c.hits);
    assert_int_equal(weft_pool_parallel_for(pool, 0, n, grain, cover_body, &c), WEFT_OK);
    for (size_t i = 0; i < n; i++) assert_int_equal(atomic_load(&c.hits[i]), 1);
    assert_int_equal(atomic_load(&c.bad_worker), 0);
    free((void *)c.hits);
}

static void test_pool_parallel_for_covers_range_once_at_each_thread_count(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof thread_counts / sizeof *thread_counts; k++) {
        weft_pool_t *pool;
        assert_int_equal(weft_pool_create(thread_counts[k], NULL, &pool), WEFT_OK);
        cover_check(pool, 100000, 0);
        cover_check(pool, 1000, 1);
        cover_check(pool, 7, 100);
        cover_check(pool, 1, 0);
        assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
    }
}

static weft_status_t nested_body(void *arg, size_t b, size_t e, const weft_task_ctx_t *ctx)
{
    cover_t *outer = arg;
    for (size_t i = b; i < e; i++) { /* each outer index runs an inner parallel-for */
        cover_t inner = { calloc(64, sizeof(uint32_t)), 64, ctx->pool, 0 };
        if (!inner.hits) return WEFT_ENOMEM;
        weft_status_t st = weft_pool_parallel_for(ctx->pool, 0, 64, 4, cover_body, &inner);
        for (size_t j = 0; j < 64; j++)
            if (atomic_load(&inner.hits[j]) != 1) st = WEFT_EINCONSISTENT;
        free((void *)inner.hits);
        if (st != WEFT_OK) return st;
        atomic_fetch_add(&outer->hits[i], 1);
    }
    return WEFT_OK;
}

static void test_pool_nested_parallel_for_helps_while_waiting_without_deadlock(void **state)
{
    (void)state;
    for (size_t k = 0; k < 4; k++) { /* T = 1, 2, 4, 8 */
        weft_pool_t *pool;
        assert_int_equal(weft_pool_create(thread_counts[k], NULL, &pool), WEFT_OK);
        cover_t c = { calloc(100, sizeof(uint32_t)), 100, pool, 0 };
        assert_int_equal(weft_pool_parallel_for(pool, 0, 100, 1, nested_body, &c), WEFT_OK);
        for (size_t i = 0; i < 100; i++) assert_int_equal(atomic_load(&c.hits[i]), 1);
        free((void *)c.hits);
        assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
    }
}

static weft_status_t failing_body(void *arg, size_t b, size_t e, const weft_task_ctx_t *ctx)
{
    (void)arg;
    (void)ctx;
    return (b <= 500 && 500 < e) ? WEFT_ERANGE : WEFT_OK;
}

static void test_pool_parallel_for_failure_returns_chunk_status(void **state)
{
    (void)state;
    weft_pool_t *pool;
    assert_int_equal(weft_pool_create(2, NULL, &pool), WEFT_OK);
    assert_int_equal(weft_pool_parallel_for(pool, 0, 1000, 10, failing_body, NULL), WEFT_ERANGE);
    cover_check(pool, 1000, 0); /* pool still usable */
    assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
}

static void test_pool_parallel_for_bad_arguments_return_einval(void **state)
{
    (void)state;
    weft_pool_t *pool;
    assert_int_equal(weft_pool_create(1, NULL, &pool), WEFT_OK);
    assert_int_equal(weft_pool_parallel_for(NULL, 0, 1, 1, cover_body, NULL), WEFT_EINVAL);
    assert_int_equal(weft_pool_parallel_for(pool, 0, 1, 1, NULL, NULL), WEFT_EINVAL);
    assert_int_equal(weft_pool_parallel_for(pool, 5, 1, 1, cover_body, NULL), WEFT_EINVAL);
    assert_int_equal(weft_pool_parallel_for(pool, 3, 3, 1, cover_body, NULL), WEFT_OK);
    assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
}

static weft_status_t destroy_from_worker_body(void *arg, size_t b, size_t e,
                                              const weft_task_ctx_t *ctx)
{
    (void)b;
    (void)e;
    *(weft_status_t *)arg = weft_pool_destroy(ctx->pool);
    return WEFT_OK;
}

static void test_pool_destroy_from_own_worker_returns_estate(void **state)
{
    (void)state;
    weft_pool_t *pool;
    weft_status_t inner = WEFT_OK;
    assert_int_equal(weft_pool_create(2, NULL, &pool), WEFT_OK);
    assert_int_equal(weft_pool_parallel_for(pool, 0, 1, 1, destroy_from_worker_body, &inner), WEFT_OK);
    assert_int_equal(inner, WEFT_ESTATE);
    assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
}

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void test_pool_idle_workers_sleep_instead_of_spinning(void **state)
{
    (void)state;
    weft_pool_t *pool;
    assert_int_equal(weft_pool_create(4, NULL, &pool), WEFT_OK);
    cover_check(pool, 10000, 0); /* wake everyone once, then let them settle */
    struct timespec settle = { 0, 50 * 1000 * 1000 }, idle = { 0, 400 * 1000 * 1000 };
    nanosleep(&settle, NULL);
    double c0 = cpu_seconds();
    nanosleep(&idle, NULL);
    double used = cpu_seconds() - c0;
    printf("idle pool (4 workers): %.2f ms CPU over 400 ms\n", used * 1e3);
    assert_true(used < 0.02); /* < 5% of one core */
    assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pool_create_destroy_1000_times_succeeds),
        cmocka_unit_test(test_pool_bad_arguments_return_einval),
        cmocka_unit_test(test_pool_pin_policies_run_pinned_or_report_unpinned),
        cmocka_unit_test(test_pool_parallel_for_covers_range_once_at_each_thread_count),
        cmocka_unit_test(test_pool_nested_parallel_for_helps_while_waiting_without_deadlock),
        cmocka_unit_test(test_pool_parallel_for_failure_returns_chunk_status),
        cmocka_unit_test(test_pool_parallel_for_bad_arguments_return_einval),
        cmocka_unit_test(test_pool_destroy_from_own_worker_returns_estate),
        cmocka_unit_test(test_pool_idle_workers_sleep_instead_of_spinning),
    };
    return cmocka_run_group_tests_name("pool", tests, NULL, NULL);
}
