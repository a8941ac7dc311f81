/* One-worker pools run a blocking call on the calling thread (the guest,
 * pool_int.h): DAG runs and parallel-fors from outside the pool execute on
 * the caller as worker 0; a busy worker still serves such calls; profiled
 * runs keep to the worker; and the worker and guests never run at the same
 * time under concurrent callers (worker index 0 has one thread at a time). */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <pthread.h>

#include "pool_int.h" /* inj_count: the external call is queued (whitebox) */
#include "weft/sched.h"

#define NODES 64

/* What the node bodies saw: the thread, ctx->worker, the pool's answer to
 * weft_pool_current_worker, and overlapping executions of index 0. */
typedef struct seen {
    weft_pool_t *pool;
    pthread_t thread[NODES];
    unsigned worker[NODES];
    int current[NODES];
    _Atomic int inside;      /* node bodies running right now */
    _Atomic int overlaps;    /* times a body found another one running */
    _Atomic int gate;        /* node 0 waits while nonzero (busy-worker test) */
    _Atomic int started;     /* node 0 has begun */
} seen_t;

static void nap_us(long us)
{
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}

static weft_status_t body(void *arg, const weft_task_ctx_t *ctx)
{
    seen_t *s = ctx->user;
    uint32_t id = (uint32_t)(uintptr_t)arg;
    /* seq_cst: the overlap check itself (two bodies must not both see 0) */
    if (atomic_fetch_add(&s->inside, 1) != 0) atomic_fetch_add(&s->overlaps, 1);
    s->thread[id] = pthread_self();
    s->worker[id] = ctx->worker;
    s->current[id] = weft_pool_current_worker(s->pool);
    if (id == 0) {
        atomic_store(&s->started, 1); /* seq_cst: the test thread polls it */
        while (atomic_load(&s->gate)) nap_us(100);
    }
    atomic_fetch_sub(&s->inside, 1);
    return WEFT_OK;
}

/* Node 0 first, then a fan-out to nodes 1..NODES-1 (edges 0 -> i). */
static weft_dag_t *fan_dag(void)
{
    weft_dag_t *dag = NULL;
    assert_int_equal(weft_dag_create(NULL, &dag), WEFT_OK);
    for (uint32_t i = 0; i < NODES; i++) {
        uint32_t id;
        assert_int_equal(weft_dag_add_node(dag, body, (void *)(uintptr_t)i, "n", &id), WEFT_OK);
    }
    for (uint32_t i = 1; i < NODES; i++) assert_int_equal(weft_dag_add_edge(dag, 0, i), WEFT_OK);
    assert_int_equal(weft_dag_finalize(dag), WEFT_OK);
    return dag;
}

static void test_guest_runs_the_dag_on_the_calling_thread(void **state)
{
    (void)state;
    weft_pool_t *pool;
    assert_int_equal(weft_pool_create(1, NULL, &pool), WEFT_OK);
    weft_dag_t *dag = fan_dag();
    weft_dag_run_t *run;
    assert_int_equal(weft_dag_run_create(dag, pool, NULL, &run), WEFT_OK);
    seen_t s;
    memset(&s, 0, sizeof s);
    s.pool = pool;
    nap_us(20000); /* let the worker park */
    for (int rep = 0; rep < 3; rep++) {
        assert_int_equal(weft_dag_run_execute(run, &s), WEFT_OK);
        for (int i = 0; i < NODES; i++) {
            assert_true(pthread_equal(s.thread[i], pthread_self()));
            assert_int_equal(s.worker[i], 0);
            assert_int_equal(s.current[i], 0);
        }
    }
    assert_int_equal(weft_pool_current_worker(pool), -1); /* guest mode ended */
    assert_int_equal(atomic_load(&s.overlaps), 0);
    assert_int_equal(weft_dag_run_destroy(run), WEFT_OK);
    assert_int_equal(weft_dag_destroy(dag), WEFT_OK);
    assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
}

static weft_status_t record_chunk(void *arg, size_t begin, size_t end, const weft_task_ctx_t *ctx)
{
    pthread_t *t = arg;
    for (size_t i = begin; i < end; i++) t[i] = pthread_self();
    return ctx->worker == 0 ? WEFT_OK : WEFT_ERANGE;
}

static void test_guest_runs_a_parallel_for_on_the_calling_thread(void **state)
{
    (void)state;
    weft_pool_t *pool;
    assert_int_equal(weft_pool_create(1, NULL, &pool), WEFT_OK);
    pthread_t t[100];
    nap_us(20000);
    assert_int_equal(weft_pool_parallel_for(pool, 0, 100, 3, record_chunk, t), WEFT_OK);
    for (int i = 0; i < 100; i++) assert_true(pthread_equal(t[i], pthread_self()));
    assert_int_equal(weft_pool_current_worker(pool), -1);
    assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
}

/* A guest's node starts a nested DAG run and a nested parallel-for on the
 * same pool (a Scan step inside a function call): both run on the calling
 * thread, and their completions leave the parked worker asleep - the
 * work_ec epoch, bumped by every notification that finds a sleeper, does
 * not move over the whole call. */
typedef struct nested {
    weft_pool_t *pool;
    weft_dag_run_t *inner;
    seen_t *seen;
    pthread_t loop[10];
    weft_status_t st_run, st_for;
} nested_t;

static weft_status_t nested_body(void *arg, const weft_task_ctx_t *ctx)
{
    (void)ctx;
    nested_t *n = arg;
    n->st_run = weft_dag_run_execute(n->inner, n->seen);
    n->st_for = weft_pool_parallel_for(n->pool, 0, 10, 1, record_chunk, n->loop);
    return WEFT_OK;
}

static void test_nested_runs_of_a_guest_wake_nobody(void **state)
{
    (void)state;
    weft_pool_t *pool;
    assert_int_equal(weft_pool_create(1, NULL, &pool), WEFT_OK);
    weft_dag_t *inner_dag = fan_dag(), *outer_dag = NULL;
    seen_t s;
    memset(&s, 0, sizeof s);
    s.pool = pool;
    nested_t n = {pool, NULL, &s, {0}, WEFT_EINVAL, WEFT_EINVAL};
    assert_int_equal(weft_dag_run_create(inner_dag, pool, NULL, &n.inner), WEFT_OK);
    uint32_t id;
    assert_int_equal(weft_dag_create(NULL, &outer_dag), WEFT_OK);
    assert_int_equal(weft_dag_add_node(outer_dag, nested_body, &n, "outer", &id), WEFT_OK);
    assert_int_equal(weft_dag_finalize(outer_dag), WEFT_OK);
    weft_dag_run_t *outer;
    assert_int_equal(weft_dag_run_create(outer_dag, pool, NULL, &outer), WEFT_OK);
    /* relaxed (both): a test-only look at the parked worker's notifier */
    for (int i = 0; i < 2000 && !atomic_load_explicit(&pool->work_ec.waiters,
                                                      memory_order_relaxed); i++)
        nap_us(1000);
    assert_int_equal(atomic_load_explicit(&pool->work_ec.waiters, memory_order_relaxed), 1);
    uint32_t epoch = atomic_load_explicit(&pool->work_ec.epoch, memory_order_relaxed);
    for (int rep = 0; rep < 3; rep++) {
        assert_int_equal(weft_dag_run_execute(outer, NULL), WEFT_OK);
        assert_int_equal(n.st_run, WEFT_OK);
        assert_int_equal(n.st_for, WEFT_OK);
        for (int i = 0; i < NODES; i++) assert_true(pthread_equal(s.thread[i], pthread_self()));
        for (int i = 0; i < 10; i++) assert_true(pthread_equal(n.loop[i], pthread_self()));
    }
    assert_int_equal(atomic_load_explicit(&pool->work_ec.epoch, memory_order_relaxed), epoch);
    assert_int_equal(atomic_load(&s.overlaps), 0);
    assert_int_equal(weft_dag_run_destroy(outer), WEFT_OK);
    assert_int_equal(weft_dag_run_destroy(n.inner), WEFT_OK);
    assert_int_equal(weft_dag_destroy(outer_dag), WEFT_OK);
    assert_int_equal(weft_dag_destroy(inner_dag), WEFT_OK);
    assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
}

typedef struct caller {
    weft_dag_run_t *run;
    seen_t *seen;
    pthread_t self;
    weft_status_t st;
} caller_t;

static void *execute_thread(void *p)
{
    caller_t *c = p;
    c->self = pthread_self();
    c->st = weft_dag_run_execute(c->run, c->seen);
    return NULL;
}

/* The worker is inside run A's node 0 (held at a gate): a blocking call of
 * run B from another thread is queued for the worker, which runs it once A
 * is through, instead of B running on its caller beside the worker. */
static void test_busy_worker_serves_external_calls(void **state)
{
    (void)state;
    weft_pool_t *pool;
    assert_int_equal(weft_pool_create(1, NULL, &pool), WEFT_OK);
    weft_dag_t *dag = fan_dag();
    weft_dag_run_t *ra, *rb;
    assert_int_equal(weft_dag_run_create(dag, pool, NULL, &ra), WEFT_OK);
    assert_int_equal(weft_dag_run_create(dag, pool, NULL, &rb), WEFT_OK);
    seen_t sa, sb;
    memset(&sa, 0, sizeof sa);
    memset(&sb, 0, sizeof sb);
    sa.pool = sb.pool = pool;
    atomic_store(&sa.gate, 1);
    assert_int_equal(weft_dag_run_start(ra, &sa), WEFT_OK); /* async: the worker runs it */
    while (!atomic_load(&sa.started)) nap_us(100);
    caller_t cb = {rb, &sb, pthread_self(), WEFT_EINVAL};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, execute_thread, &cb), 0);
    /* B's call is queued for the busy worker before A may finish (a fixed
     * sleep was not enough on a loaded machine: B then found the worker idle
     * and ran as the guest); seq_cst: as the store in pool_inject */
    while (atomic_load_explicit(&pool->inj_count, memory_order_seq_cst) == 0) nap_us(100);
    atomic_store(&sa.gate, 0);
    assert_int_equal(weft_dag_run_wait(ra), WEFT_OK);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(cb.st, WEFT_OK);
    for (int i = 0; i < NODES; i++) {
        assert_true(pthread_equal(sb.thread[i], sa.thread[0])); /* the worker */
        assert_false(pthread_equal(sb.thread[i], cb.self));
    }
    assert_int_equal(atomic_load(&sa.overlaps) + atomic_load(&sb.overlaps), 0);
    assert_int_equal(weft_dag_run_destroy(ra), WEFT_OK);
    assert_int_equal(weft_dag_run_destroy(rb), WEFT_OK);
    assert_int_equal(weft_dag_destroy(dag), WEFT_OK);
    assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
}

static void test_profiled_runs_keep_to_the_worker(void **state)
{
    (void)state;
    weft_pool_t *pool;
    assert_int_equal(weft_pool_create(1, NULL, &pool), WEFT_OK);
    weft_dag_t *dag = fan_dag();
    weft_dag_run_options_t o = WEFT_DAG_RUN_OPTIONS_INIT;
    o.profile = 1;
    weft_dag_run_t *run;
    assert_int_equal(weft_dag_run_create(dag, pool, &o, &run), WEFT_OK);
    seen_t s;
    memset(&s, 0, sizeof s);
    s.pool = pool;
    assert_int_equal(weft_dag_run_execute(run, &s), WEFT_OK);
    for (int i = 0; i < NODES; i++) assert_false(pthread_equal(s.thread[i], pthread_self()));
    assert_int_equal(weft_dag_run_destroy(run), WEFT_OK);
    assert_int_equal(weft_dag_destroy(dag), WEFT_OK);
    assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
}

/* 4 threads call blocking runs (and one keeps starting async ones) on one
 * one-worker pool: every run completes and no two bodies ever overlap. */
#define CALLERS 4
#define REPS 200

typedef struct hammer {
    weft_dag_t *dag;
    weft_pool_t *pool;
    seen_t *seen; /* shared by every run: the overlap counter is pool-wide */
    int async;
    weft_status_t st;
} hammer_t;

static void *hammer_thread(void *p)
{
    hammer_t *h = p;
    weft_dag_run_t *run;
    h->st = weft_dag_run_create(h->dag, h->pool, NULL, &run);
    for (int r = 0; r < REPS && h->st == WEFT_OK; r++) {
        h->st = h->async ? weft_dag_run_start(run, h->seen) : weft_dag_run_execute(run, h->seen);
        if (h->async && h->st == WEFT_OK) h->st = weft_dag_run_wait(run);
    }
    if (h->st == WEFT_OK) h->st = weft_dag_run_destroy(run);
    return NULL;
}

static void test_concurrent_callers_never_overlap_on_one_worker(void **state)
{
    (void)state;
    weft_pool_t *pool;
    assert_int_equal(weft_pool_create(1, NULL, &pool), WEFT_OK);
    weft_dag_t *dag = fan_dag();
    seen_t s;
    memset(&s, 0, sizeof s);
    s.pool = pool;
    hammer_t h[CALLERS];
    pthread_t th[CALLERS];
    for (int k = 0; k < CALLERS; k++) {
        h[k] = (hammer_t){dag, pool, &s, k == 0, WEFT_EINVAL};
        assert_int_equal(pthread_create(&th[k], NULL, hammer_thread, &h[k]), 0);
    }
    for (int k = 0; k < CALLERS; k++) {
        assert_int_equal(pthread_join(th[k], NULL), 0);
        assert_int_equal(h[k].st, WEFT_OK);
    }
    assert_int_equal(atomic_load(&s.overlaps), 0);
    assert_int_equal(weft_dag_destroy(dag), WEFT_OK);
    assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_guest_runs_the_dag_on_the_calling_thread),
        cmocka_unit_test(test_guest_runs_a_parallel_for_on_the_calling_thread),
        cmocka_unit_test(test_nested_runs_of_a_guest_wake_nobody),
        cmocka_unit_test(test_busy_worker_serves_external_calls),
        cmocka_unit_test(test_profiled_runs_keep_to_the_worker),
        cmocka_unit_test(test_concurrent_callers_never_overlap_on_one_worker),
    };
    return cmocka_run_group_tests_name("pool_guest", tests, NULL, NULL);
}
