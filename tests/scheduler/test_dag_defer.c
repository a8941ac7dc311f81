/* Deferred nodes (weft_dag_run_defer / weft_dag_run_complete, sched.h): a
 * deferred node does not hold its worker - on a one-worker pool the worker
 * runs the other ready nodes while the node is pending - its successors wait
 * for the completion, from another thread or from the body itself, a sink
 * completed from outside finishes the run, a failing completion fails the
 * run with its status, and misuse returns the documented errors. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "weft/sched.h"

/* Node 0 "recv" defers; node 1 "use" reads it; node 2 "local" is
 * independent. The completer completes node 0 only once "local" ran, so a
 * worker held by node 0 would never get there (the test would time out). */
typedef struct fixture {
    _Atomic int seq, ran[3];
    _Atomic int handed;          /* release by node 0, acquire by the completer */
    weft_dag_deferred_t handle;
    weft_status_t defer_st;
    int complete_inline;         /* node 0 completes itself before returning */
    weft_status_t complete_with;
} fixture_t;

static weft_status_t node_recv(void *arg, const weft_task_ctx_t *ctx)
{
    (void)arg;
    fixture_t *f = ctx->user;
    atomic_store(&f->ran[0], atomic_fetch_add(&f->seq, 1) + 1);
    f->defer_st = weft_dag_run_defer(ctx, &f->handle);
    if (f->complete_inline) return weft_dag_run_complete(&f->handle, WEFT_OK);
    atomic_store_explicit(&f->handed, 1, memory_order_release);
    return WEFT_OK;
}

static weft_status_t node_mark(void *arg, const weft_task_ctx_t *ctx)
{
    fixture_t *f = ctx->user;
    int i = (int)(intptr_t)arg;
    atomic_store(&f->ran[i], atomic_fetch_add(&f->seq, 1) + 1);
    return WEFT_OK;
}

static void *completer(void *arg)
{
    fixture_t *f = arg;
    while (!atomic_load_explicit(&f->handed, memory_order_acquire) || !atomic_load(&f->ran[2])) {
    }
    weft_status_t st = weft_dag_run_complete(&f->handle, f->complete_with);
    return (void *)(intptr_t)st;
}

static weft_dag_t *build(int with_use)
{
    weft_dag_t *dag = NULL;
    assert_int_equal(weft_dag_create(NULL, &dag), WEFT_OK);
    assert_int_equal(weft_dag_add_node(dag, node_recv, NULL, "recv", NULL), WEFT_OK);
    assert_int_equal(weft_dag_add_node(dag, node_mark, (void *)1, "use", NULL), WEFT_OK);
    assert_int_equal(weft_dag_add_node(dag, node_mark, (void *)2, "local", NULL), WEFT_OK);
    if (with_use) assert_int_equal(weft_dag_add_edge(dag, 0, 1), WEFT_OK);
    assert_int_equal(weft_dag_finalize(dag), WEFT_OK);
    return dag;
}

/* One run; returns the run's status. */
static weft_status_t run_once(weft_dag_run_t *run, fixture_t *f, int inline_done,
                              weft_status_t with)
{
    atomic_store(&f->seq, 0);
    for (int i = 0; i < 3; i++) atomic_store(&f->ran[i], 0);
    atomic_store(&f->handed, 0);
    f->complete_inline = inline_done;
    f->complete_with = with;
    pthread_t th;
    if (!inline_done) assert_int_equal(pthread_create(&th, NULL, completer, f), 0);
    weft_status_t st = weft_dag_run_execute(run, f);
    if (!inline_done) {
        void *ret;
        assert_int_equal(pthread_join(th, &ret), 0);
        assert_int_equal((weft_status_t)(intptr_t)ret, WEFT_OK);
    }
    assert_int_equal(f->defer_st, WEFT_OK);
    return st;
}

/* A deferrable run of dag on a new pool of `threads` workers. */
static weft_dag_run_t *deferrable_run(weft_dag_t *dag, int threads, weft_pool_t **pool)
{
    weft_dag_run_t *run = NULL;
    assert_int_equal(weft_pool_create(threads, NULL, pool), WEFT_OK);
    weft_dag_run_options_t ro = WEFT_DAG_RUN_OPTIONS_INIT;
    ro.deferrable = 1;
    assert_int_equal(weft_dag_run_create(dag, *pool, &ro, &run), WEFT_OK);
    return run;
}

static void check_pool(int threads)
{
    weft_dag_t *dag = build(1);
    weft_pool_t *pool;
    weft_dag_run_t *run = deferrable_run(dag, threads, &pool);
    fixture_t f = {0};
    for (int rep = 0; rep < 200; rep++) {
        assert_int_equal(run_once(run, &f, 0, WEFT_OK), WEFT_OK);
        /* "use" ran after "local": the completer waited for "local" */
        assert_true(atomic_load(&f.ran[2]) > 0);
        assert_true(atomic_load(&f.ran[1]) > atomic_load(&f.ran[2]));
        assert_true(atomic_load(&f.ran[1]) > atomic_load(&f.ran[0]));
        assert_int_equal(run_once(run, &f, 1, WEFT_OK), WEFT_OK);
        assert_int_equal(atomic_load(&f.seq), 3);
    }
    assert_int_equal(weft_dag_run_destroy(run), WEFT_OK);
    assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
    assert_int_equal(weft_dag_destroy(dag), WEFT_OK);
}

static void test_dag_defer_worker_runs_other_nodes_while_pending(void **state)
{
    (void)state;
    check_pool(1);
    check_pool(2);
}

static void test_dag_defer_sink_completed_outside_and_failure(void **state)
{
    (void)state;
    weft_dag_t *dag = build(0); /* node 0 is a sink */
    weft_pool_t *pool;
    weft_dag_run_t *run = deferrable_run(dag, 1, &pool);
    fixture_t f = {0};
    for (int rep = 0; rep < 100; rep++) {
        assert_int_equal(run_once(run, &f, 0, WEFT_OK), WEFT_OK);
        assert_int_equal(atomic_load(&f.seq), 3);
    }
    assert_int_equal(run_once(run, &f, 0, WEFT_EIO), WEFT_EIO);
    uint32_t id;
    const char *name;
    assert_int_equal(weft_dag_run_failed_node(run, &id, &name), WEFT_EIO);
    assert_int_equal(id, 0);
    assert_string_equal(name, "recv");
    /* the handle is spent: a second completion is refused */
    assert_int_equal(weft_dag_run_complete(&f.handle, WEFT_OK), WEFT_ESTATE);
    assert_int_equal(weft_dag_run_destroy(run), WEFT_OK);
    assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
    assert_int_equal(weft_dag_destroy(dag), WEFT_OK);
}

static weft_status_t node_defer_twice(void *arg, const weft_task_ctx_t *ctx)
{
    weft_status_t *got = arg;
    weft_dag_deferred_t d = {NULL, 0}; /* stays so when the defer is refused */
    got[0] = weft_dag_run_defer(ctx, &d);
    got[1] = weft_dag_run_defer(ctx, &d);
    got[2] = weft_dag_run_defer(ctx, NULL);
    got[3] = weft_dag_run_defer(NULL, &d);
    got[4] = got[0] == WEFT_OK ? weft_dag_run_complete(&d, WEFT_OK) : WEFT_OK;
    got[5] = got[0] == WEFT_OK ? weft_dag_run_complete(&d, WEFT_OK) : WEFT_OK;
    weft_dag_deferred_t bad = d;
    bad.node = 7;
    got[6] = weft_dag_run_complete(&bad, WEFT_OK);
    return WEFT_OK;
}

static weft_status_t pfor_defer(void *arg, size_t b, size_t e, const weft_task_ctx_t *ctx)
{
    (void)b, (void)e;
    weft_dag_deferred_t d;
    *(weft_status_t *)arg = weft_dag_run_defer(ctx, &d);
    return WEFT_OK;
}

static void test_dag_defer_misuse_returns_errors(void **state)
{
    (void)state;
    weft_dag_t *dag = NULL;
    weft_pool_t *pool;
    assert_int_equal(weft_dag_create(NULL, &dag), WEFT_OK);
    weft_status_t got[7];
    assert_int_equal(weft_dag_add_node(dag, node_defer_twice, got, "d", NULL), WEFT_OK);
    assert_int_equal(weft_dag_finalize(dag), WEFT_OK);
    assert_int_equal(weft_pool_create(1, NULL, &pool), WEFT_OK);
    for (int deferrable = 0; deferrable < 2; deferrable++) {
        weft_dag_run_options_t ro = WEFT_DAG_RUN_OPTIONS_INIT;
        ro.deferrable = deferrable;
        weft_dag_run_t *run;
        assert_int_equal(weft_dag_run_create(dag, pool, &ro, &run), WEFT_OK);
        assert_int_equal(weft_dag_run_execute(run, NULL), WEFT_OK);
        weft_status_t want_on[7] = {WEFT_OK, WEFT_ESTATE, WEFT_EINVAL, WEFT_EINVAL, WEFT_OK,
                                    WEFT_ESTATE, WEFT_EINVAL};
        weft_status_t want_off[7] = {WEFT_ESTATE, WEFT_ESTATE, WEFT_EINVAL, WEFT_EINVAL,
                                     WEFT_OK, WEFT_OK, WEFT_EINVAL};
        for (int k = 0; k < 7; k++) assert_int_equal(got[k], deferrable ? want_on[k] : want_off[k]);
        assert_int_equal(weft_dag_run_destroy(run), WEFT_OK);
    }
    weft_status_t in_pfor = WEFT_OK;
    assert_int_equal(weft_pool_parallel_for(pool, 0, 1, 1, pfor_defer, &in_pfor), WEFT_OK);
    assert_int_equal(in_pfor, WEFT_EINVAL);
    assert_int_equal(weft_dag_run_complete(NULL, WEFT_OK), WEFT_EINVAL);
    assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
    assert_int_equal(weft_dag_destroy(dag), WEFT_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dag_defer_worker_runs_other_nodes_while_pending),
        cmocka_unit_test(test_dag_defer_sink_completed_outside_and_failure),
        cmocka_unit_test(test_dag_defer_misuse_returns_errors),
    };
    return cmocka_run_group_tests_name("dag_defer", tests, NULL, NULL);
}
