/* DAG runs: every protocol shape checked for order at T=1,2,4,8 (small
 * sizes), runs reused many times, the task context, nested waits
 * (parallel-for and DAG runs inside nodes, T=1 included), failures (first
 * failure wins, id and name reported, pool usable afterwards), cancel from
 * another thread, concurrent runs of one DAG from 4 threads with several
 * DAGs on one pool, profiling records, and bad input on run objects. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <pthread.h>

#include "dag_check.h"

static const int thread_counts[] = { 1, 2, 4, 8 };
#define NTC 4

static void run_shape(const char *shape, uint32_t param)
{
    tgraph_t g;
    tgraph_shape(&g, shape, param);
    weft_dag_t *dag = NULL;
    assert_int_equal(tgraph_build(&g, &dag), WEFT_OK);
    for (int k = 0; k < NTC; k++) {
        weft_pool_t *pool;
        weft_dag_run_t *run;
        assert_int_equal(weft_pool_create(thread_counts[k], NULL, &pool), WEFT_OK);
        assert_int_equal(weft_dag_run_create(dag, pool, NULL, &run), WEFT_OK);
        trec_t r;
        trec_init(&r, g.n, thread_counts[k]);
        for (int rep = 0; rep < 3; rep++) {
            trec_reset(&r);
            assert_int_equal(weft_dag_run_execute(run, &r), WEFT_OK);
            assert_int_equal(trec_check(&r, &g), 0);
        }
        trec_fini(&r);
        assert_int_equal(weft_dag_run_destroy(run), WEFT_OK);
        assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
    }
    assert_int_equal(weft_dag_destroy(dag), WEFT_OK);
    tgraph_free(&g);
}

static void test_dag_run_chain_runs_in_order_at_each_thread_count(void **state)
{
    (void)state;
    run_shape("chain", 5000);
}

static void test_dag_run_tree_runs_in_order_at_each_thread_count(void **state)
{
    (void)state;
    run_shape("tree", 12);
}

static void test_dag_run_wavefront_runs_in_order_at_each_thread_count(void **state)
{
    (void)state;
    run_shape("wavefront", 60);
}

static void test_dag_run_fanout_runs_in_order_at_each_thread_count(void **state)
{
    (void)state;
    run_shape("fanout", 5000);
}

static void test_dag_run_random_runs_in_order_at_each_thread_count(void **state)
{
    (void)state;
    run_shape("random", 5000);
}

static void test_dag_run_many_sources_and_sinks_run_once(void **state)
{
    (void)state;
    tgraph_t g = { 0 };
    g.n = 3000; /* 1000 isolated nodes, 1000 pairs */
    for (uint32_t i = 1000; i < 3000; i += 2) tgraph_edge(&g, i, i + 1);
    weft_dag_t *dag = NULL;
    assert_int_equal(tgraph_build(&g, &dag), WEFT_OK);
    weft_pool_t *pool;
    weft_dag_run_t *run;
    assert_int_equal(weft_pool_create(2, NULL, &pool), WEFT_OK);
    assert_int_equal(weft_dag_run_create(dag, pool, NULL, &run), WEFT_OK);
    trec_t r;
    trec_init(&r, g.n, 2);
    for (int rep = 0; rep < 5; rep++) {
        trec_reset(&r);
        assert_int_equal(weft_dag_run_execute(run, &r), WEFT_OK);
        assert_int_equal(trec_check(&r, &g), 0);
    }
    trec_fini(&r);
    weft_dag_run_destroy(run);
    weft_pool_destroy(pool);
    weft_dag_destroy(dag);
    tgraph_free(&g);
}

/* ------------------------------------------------------------ nesting */

typedef struct nest {
    weft_dag_t *inner_dag;        // for nested DAG runs
    weft_dag_run_t *inner_run[8]; // one per outer node
    _Atomic uint32_t hits[8][100];
    _Atomic int bad;
} nest_t;

static weft_status_t nest_range(void *arg, size_t b, size_t e, const weft_task_ctx_t *ctx)
{
    _Atomic uint32_t *h = arg;
    (void)ctx;
    for (size_t i = b; i < e; i++) atomic_fetch_add(&h[i], 1);
    return WEFT_OK;
}

static weft_status_t nest_node(void *arg, const weft_task_ctx_t *ctx)
{
    nest_t *ns = ctx->user;
    uint32_t id = (uint32_t)(uintptr_t)arg;
    weft_status_t st = weft_pool_parallel_for(ctx->pool, 0, 100, 3, nest_range, ns->hits[id]);
    if (st) return st;
    trec_t r; /* and a whole inner DAG run, waited for inside this node */
    trec_init(&r, weft_dag_node_count(ns->inner_dag), weft_pool_thread_count(ctx->pool));
    st = weft_dag_run_execute(ns->inner_run[id], &r);
    for (uint32_t i = 0; i < r.n; i++)
        if (atomic_load(&r.runs[i]) != 1) atomic_store(&ns->bad, 1);
    trec_fini(&r);
    return st;
}

static void test_dag_run_nested_waits_inside_nodes_do_not_deadlock(void **state)
{
    (void)state;
    tgraph_t inner;
    tgraph_shape(&inner, "random", 300);
    for (int k = 0; k < NTC; k++) {
        weft_pool_t *pool;
        assert_int_equal(weft_pool_create(thread_counts[k], NULL, &pool), WEFT_OK);
        nest_t *ns = calloc(1, sizeof *ns);
        assert_int_equal(tgraph_build(&inner, &ns->inner_dag), WEFT_OK);
        weft_dag_t *outer = NULL;
        assert_int_equal(weft_dag_create(NULL, &outer), WEFT_OK);
        for (uintptr_t i = 0; i < 8; i++) {
            assert_int_equal(weft_dag_add_node(outer, nest_node, (void *)i, NULL, NULL), WEFT_OK);
            assert_int_equal(weft_dag_run_create(ns->inner_dag, pool, NULL, &ns->inner_run[i]), WEFT_OK);
        }
        for (uint32_t i = 1; i < 8; i++) weft_dag_add_edge(outer, (i - 1) / 2, i); /* a small tree */
        assert_int_equal(weft_dag_finalize(outer), WEFT_OK);
        weft_dag_run_t *run;
        assert_int_equal(weft_dag_run_create(outer, pool, NULL, &run), WEFT_OK);
        assert_int_equal(weft_dag_run_execute(run, ns), WEFT_OK);
        for (int i = 0; i < 8; i++)
            for (int j = 0; j < 100; j++) assert_int_equal(atomic_load(&ns->hits[i][j]), 1);
        assert_int_equal(atomic_load(&ns->bad), 0);
        weft_dag_run_destroy(run);
        for (int i = 0; i < 8; i++) weft_dag_run_destroy(ns->inner_run[i]);
        weft_dag_destroy(outer);
        weft_dag_destroy(ns->inner_dag);
        free(ns);
        assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
    }
    tgraph_free(&inner);
}

/* ------------------------------------------------------------ failure */

typedef struct failctl {
    uint32_t fail_a, fail_b; // nodes that fail (UINT32_MAX: none)
    _Atomic uint32_t ran[2000];
} failctl_t;

static weft_status_t fail_node(void *arg, const weft_task_ctx_t *ctx)
{
    failctl_t *f = ctx->user;
    uint32_t id = (uint32_t)(uintptr_t)arg;
    atomic_fetch_add(&f->ran[id], 1);
    if (id == f->fail_a) return WEFT_ERANGE;
    if (id == f->fail_b) return WEFT_ENAN;
    return WEFT_OK;
}

static weft_dag_t *chain_dag(uint32_t n, weft_node_fn fn)
{
    weft_dag_t *dag = NULL;
    assert_int_equal(weft_dag_create(NULL, &dag), WEFT_OK);
    char name[32];
    for (uint32_t i = 0; i < n; i++) {
        snprintf(name, sizeof name, "step%u", i);
        assert_int_equal(weft_dag_add_node(dag, fn, (void *)(uintptr_t)i, name, NULL), WEFT_OK);
        if (i) assert_int_equal(weft_dag_add_edge(dag, i - 1, i), WEFT_OK);
    }
    assert_int_equal(weft_dag_finalize(dag), WEFT_OK);
    return dag;
}

static void test_dag_run_first_failure_wins_and_pool_stays_usable(void **state)
{
    (void)state;
    weft_dag_t *dag = chain_dag(2000, fail_node);
    for (int k = 0; k < NTC; k++) {
        weft_pool_t *pool;
        weft_dag_run_t *run;
        assert_int_equal(weft_pool_create(thread_counts[k], NULL, &pool), WEFT_OK);
        assert_int_equal(weft_dag_run_create(dag, pool, NULL, &run), WEFT_OK);
        failctl_t *f = calloc(1, sizeof *f);
        f->fail_a = 700;
        f->fail_b = 900;
        assert_int_equal(weft_dag_run_execute(run, f), WEFT_ERANGE);
        uint32_t id;
        const char *name;
        assert_int_equal(weft_dag_run_failed_node(run, &id, &name), WEFT_ERANGE);
        assert_int_equal(id, 700);
        assert_string_equal(name, "step700");
        for (uint32_t i = 0; i < 2000; i++) assert_int_equal(atomic_load(&f->ran[i]), i <= 700);
        /* the same run object and pool work again */
        memset(f, 0, sizeof *f);
        f->fail_a = f->fail_b = UINT32_MAX;
        assert_int_equal(weft_dag_run_execute(run, f), WEFT_OK);
        assert_int_equal(weft_dag_run_failed_node(run, &id, &name), WEFT_OK);
        assert_int_equal(id, WEFT_DAG_NO_NODE);
        assert_null(name);
        for (uint32_t i = 0; i < 2000; i++) assert_int_equal(atomic_load(&f->ran[i]), 1);
        free(f);
        weft_dag_run_destroy(run);
        assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
    }
    weft_dag_destroy(dag);
}

/* ------------------------------------------------------------ cancel */

typedef struct cancelctl {
    _Atomic int gate;    // node 0 waits for it
    _Atomic int started; // node 0 has started
    _Atomic uint32_t ran;
    weft_dag_run_t *run;
} cancelctl_t;

static weft_status_t gated_node(void *arg, const weft_task_ctx_t *ctx)
{
    cancelctl_t *c = ctx->user;
    if ((uintptr_t)arg == 0) {
        struct timespec ts = { 0, 100000 };
        atomic_store(&c->started, 1);
        while (!atomic_load(&c->gate)) nanosleep(&ts, NULL);
    }
    atomic_fetch_add(&c->ran, 1);
    return WEFT_OK;
}

static void *canceller(void *p)
{
    cancelctl_t *c = p;
    struct timespec ts = { 0, 100000 };
    while (!atomic_load(&c->started)) nanosleep(&ts, NULL); /* cancel while node 0 runs */
    weft_dag_run_cancel(c->run);
    atomic_store(&c->gate, 1);
    return NULL;
}

static void test_dag_run_cancel_from_another_thread_returns_ecanceled(void **state)
{
    (void)state;
    weft_dag_t *dag = chain_dag(1000, gated_node);
    weft_pool_t *pool;
    weft_dag_run_t *run;
    assert_int_equal(weft_pool_create(2, NULL, &pool), WEFT_OK);
    assert_int_equal(weft_dag_run_create(dag, pool, NULL, &run), WEFT_OK);
    cancelctl_t c = { 0, 0, 0, run };
    assert_int_equal(weft_dag_run_cancel(run), WEFT_OK); /* not in flight: no effect */
    assert_int_equal(weft_dag_run_start(run, &c), WEFT_OK);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, canceller, &c), 0);
    assert_int_equal(weft_dag_run_wait(run), WEFT_ECANCELED);
    pthread_join(th, NULL);
    assert_int_equal(atomic_load(&c.ran), 1); /* node 0 only: the rest were skipped */
    uint32_t id;
    assert_int_equal(weft_dag_run_failed_node(run, &id, NULL), WEFT_ECANCELED);
    assert_int_equal(id, WEFT_DAG_NO_NODE);
    atomic_store(&c.gate, 1); /* reusable after cancel */
    atomic_store(&c.ran, 0);
    assert_int_equal(weft_dag_run_execute(run, &c), WEFT_OK);
    assert_int_equal(atomic_load(&c.ran), 1000);
    assert_int_equal(weft_dag_run_cancel(NULL), WEFT_EINVAL);
    weft_dag_run_destroy(run);
    weft_pool_destroy(pool);
    weft_dag_destroy(dag);
}

/* ------------------------------------------------------------ concurrency */

typedef struct conc {
    tgraph_t *g;
    weft_dag_t *dag;
    weft_pool_t *pool;
    int reps, failures;
} conc_t;

static void *conc_thread(void *p)
{
    conc_t *c = p;
    weft_dag_run_t *run;
    if (weft_dag_run_create(c->dag, c->pool, NULL, &run)) {
        c->failures++;
        return NULL;
    }
    trec_t r;
    trec_init(&r, c->g->n, weft_pool_thread_count(c->pool));
    for (int i = 0; i < c->reps; i++) {
        trec_reset(&r);
        if (weft_dag_run_execute(run, &r) != WEFT_OK || trec_check(&r, c->g)) c->failures++;
    }
    trec_fini(&r);
    if (weft_dag_run_destroy(run)) c->failures++;
    return NULL;
}

static void test_dag_run_concurrent_runs_from_4_threads_each_run_once(void **state)
{
    (void)state;
    tgraph_t g1, g2;
    tgraph_shape(&g1, "random", 3000);
    tgraph_shape(&g2, "wavefront", 40);
    weft_dag_t *d1 = NULL, *d2 = NULL;
    assert_int_equal(tgraph_build(&g1, &d1), WEFT_OK);
    assert_int_equal(tgraph_build(&g2, &d2), WEFT_OK);
    for (int k = 0; k < NTC; k++) {
        weft_pool_t *pool;
        assert_int_equal(weft_pool_create(thread_counts[k], NULL, &pool), WEFT_OK);
        conc_t c[4];
        pthread_t th[4];
        for (int i = 0; i < 4; i++) { /* 3 threads share d1, one runs d2 on the same pool */
            c[i] = (conc_t){ i < 3 ? &g1 : &g2, i < 3 ? d1 : d2, pool, 20, 0 };
            assert_int_equal(pthread_create(&th[i], NULL, conc_thread, &c[i]), 0);
        }
        for (int i = 0; i < 4; i++) {
            pthread_join(th[i], NULL);
            assert_int_equal(c[i].failures, 0);
        }
        assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
    }
    weft_dag_destroy(d1);
    weft_dag_destroy(d2);
    tgraph_free(&g1);
    tgraph_free(&g2);
}

/* ------------------------------------------------------------ profiling */

static void test_dag_run_profile_records_nodes_and_idle_time(void **state)
{
    (void)state;
    tgraph_t g;
    tgraph_shape(&g, "wavefront", 30);
    weft_dag_t *dag = NULL;
    assert_int_equal(tgraph_build(&g, &dag), WEFT_OK);
    weft_pool_t *pool;
    weft_dag_run_t *run, *plain;
    assert_int_equal(weft_pool_create(2, NULL, &pool), WEFT_OK);
    weft_dag_run_options_t o = WEFT_DAG_RUN_OPTIONS_INIT;
    o.profile = 1;
    assert_int_equal(weft_dag_run_create(dag, pool, &o, &run), WEFT_OK);
    assert_int_equal(weft_dag_run_create(dag, pool, NULL, &plain), WEFT_OK);
    weft_dag_profile_t p = { sizeof p, 0, 0, NULL, NULL, NULL, NULL, 0, 0 };
    assert_int_equal(weft_dag_run_profile(run, &p), WEFT_ESTATE); /* never ran */
    trec_t r;
    trec_init(&r, g.n, 2);
    for (int rep = 0; rep < 2; rep++) {
        trec_reset(&r);
        assert_int_equal(weft_dag_run_execute(run, &r), WEFT_OK);
        assert_int_equal(trec_check(&r, &g), 0);
    }
    assert_int_equal(weft_dag_run_profile(run, &p), WEFT_OK);
    assert_int_equal(p.nodes, g.n);
    assert_int_equal(p.workers, 2);
    assert_true(p.run_end_ns >= p.run_start_ns);
    for (uint32_t i = 0; i < g.n; i++) {
        assert_true(p.node_start_ns[i] >= p.run_start_ns);
        assert_true(p.node_end_ns[i] >= p.node_start_ns[i]);
        assert_true(p.node_end_ns[i] <= p.run_end_ns);
        assert_true(p.node_worker[i] < 2);
    }
    for (size_t e = 0; e < g.ne; e++)
        assert_true(p.node_end_ns[g.from[e]] <= p.node_start_ns[g.to[e]]);
    for (unsigned w = 0; w < 2; w++)
        assert_true(p.worker_idle_ns[w] <= p.run_end_ns - p.run_start_ns + 1000000);
    trec_reset(&r);
    assert_int_equal(weft_dag_run_execute(plain, &r), WEFT_OK);
    assert_int_equal(weft_dag_run_profile(plain, &p), WEFT_ESTATE); /* off by default */
    p.size = 3;
    assert_int_equal(weft_dag_run_profile(run, &p), WEFT_EINVAL);
    assert_int_equal(weft_dag_run_profile(NULL, &p), WEFT_EINVAL);
    trec_fini(&r);
    weft_dag_run_destroy(run);
    weft_dag_run_destroy(plain);
    weft_pool_destroy(pool);
    weft_dag_destroy(dag);
    tgraph_free(&g);
}

/* ------------------------------------------------------------ bad input */

static void test_dag_run_misuse_of_run_objects_returns_exact_status(void **state)
{
    (void)state;
    weft_dag_t *dag = chain_dag(100, gated_node);
    weft_pool_t *pool;
    weft_dag_run_t *run;
    assert_int_equal(weft_pool_create(2, NULL, &pool), WEFT_OK);
    assert_int_equal(weft_dag_run_create(dag, pool, NULL, &run), WEFT_OK);
    assert_int_equal(weft_dag_run_wait(run), WEFT_ESTATE); /* never started */
    cancelctl_t c = { 0, 0, 0, run };
    assert_int_equal(weft_dag_run_start(run, &c), WEFT_OK); /* node 0 blocks on the gate */
    assert_int_equal(weft_dag_run_start(run, &c), WEFT_EBUSY);
    assert_int_equal(weft_dag_run_destroy(run), WEFT_EBUSY);
    assert_int_equal(weft_dag_run_failed_node(run, NULL, NULL), WEFT_ESTATE);
    assert_int_equal(weft_pool_destroy(pool), WEFT_EBUSY);
    assert_int_equal(weft_dag_destroy(dag), WEFT_EBUSY);
    atomic_store(&c.gate, 1);
    assert_int_equal(weft_dag_run_wait(run), WEFT_OK);
    assert_int_equal(weft_dag_run_wait(run), WEFT_ESTATE); /* already waited */
    assert_int_equal(atomic_load(&c.ran), 100);
    assert_int_equal(weft_dag_run_start(NULL, NULL), WEFT_EINVAL);
    assert_int_equal(weft_dag_run_wait(NULL), WEFT_EINVAL);
    assert_int_equal(weft_dag_run_execute(NULL, NULL), WEFT_EINVAL);
    assert_int_equal(weft_dag_run_failed_node(NULL, NULL, NULL), WEFT_EINVAL);
    assert_int_equal(weft_dag_run_destroy(NULL), WEFT_OK);
    assert_int_equal(weft_dag_run_destroy(run), WEFT_OK);
    assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
    assert_int_equal(weft_dag_destroy(dag), WEFT_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dag_run_chain_runs_in_order_at_each_thread_count),
        cmocka_unit_test(test_dag_run_tree_runs_in_order_at_each_thread_count),
        cmocka_unit_test(test_dag_run_wavefront_runs_in_order_at_each_thread_count),
        cmocka_unit_test(test_dag_run_fanout_runs_in_order_at_each_thread_count),
        cmocka_unit_test(test_dag_run_random_runs_in_order_at_each_thread_count),
        cmocka_unit_test(test_dag_run_many_sources_and_sinks_run_once),
        cmocka_unit_test(test_dag_run_nested_waits_inside_nodes_do_not_deadlock),
        cmocka_unit_test(test_dag_run_first_failure_wins_and_pool_stays_usable),
        cmocka_unit_test(test_dag_run_cancel_from_another_thread_returns_ecanceled),
        cmocka_unit_test(test_dag_run_concurrent_runs_from_4_threads_each_run_once),
        cmocka_unit_test(test_dag_run_profile_records_nodes_and_idle_time),
        cmocka_unit_test(test_dag_run_misuse_of_run_objects_returns_exact_status),
    };
    return cmocka_run_group_tests_name("dag_run", tests, NULL, NULL);
}
