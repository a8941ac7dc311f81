/* Node priorities (weft_dag_set_priority, docs/execution.md §3.4.2): a
 * one-worker pool runs the list schedule - of the ready nodes the highest
 * priority first, ties to the lower id - both in a sequential run and in a
 * deferrable run (the shared heap and its tokens); with several workers
 * every node still runs once, after its predecessors (seeded random DAGs
 * with random priorities, and regions retired by their gate); misuse
 * returns the documented errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dag_check.h"

/* Bodies append their id to a log (one worker: no race). */
typedef struct order_log {
    uint32_t ids[64];
    _Atomic uint32_t n;
} order_log_t;

static weft_status_t log_node(void *arg, const weft_task_ctx_t *ctx)
{
    order_log_t *l = ctx->user;
    l->ids[atomic_fetch_add(&l->n, 1)] = (uint32_t)(uintptr_t)arg;
    return WEFT_OK;
}

/* 0..2 sources (priorities 1, 5, 3); 3 after 1 (priority 10), 4 after 0
 * and 3 (priority 0), 5 after 2 (priority 3: ties with 2's id order). */
static weft_dag_t *small_dag(void)
{
    static const int64_t prio[6] = {1, 5, 3, 10, 0, 3};
    weft_dag_t *dag;
    assert_int_equal(weft_dag_create(NULL, &dag), WEFT_OK);
    for (uint32_t i = 0; i < 6; i++)
        assert_int_equal(weft_dag_add_node(dag, log_node, (void *)(uintptr_t)i, NULL, NULL), WEFT_OK);
    assert_int_equal(weft_dag_add_edge(dag, 1, 3), WEFT_OK);
    assert_int_equal(weft_dag_add_edge(dag, 0, 4), WEFT_OK);
    assert_int_equal(weft_dag_add_edge(dag, 3, 4), WEFT_OK);
    assert_int_equal(weft_dag_add_edge(dag, 2, 5), WEFT_OK);
    for (uint32_t i = 0; i < 6; i++) assert_int_equal(weft_dag_set_priority(dag, i, prio[i]), WEFT_OK);
    assert_int_equal(weft_dag_finalize(dag), WEFT_OK);
    return dag;
}

static void run_small(int deferrable)
{
    /* 1 (5), then its successor 3 (10), then 2 and 5 (3, 3: ids), 0 (1), 4 */
    static const uint32_t want[6] = {1, 3, 2, 5, 0, 4};
    weft_dag_t *dag = small_dag();
    weft_pool_t *pool;
    assert_int_equal(weft_pool_create(1, NULL, &pool), WEFT_OK);
    weft_dag_run_options_t ro = WEFT_DAG_RUN_OPTIONS_INIT;
    ro.deferrable = deferrable;
    weft_dag_run_t *run;
    assert_int_equal(weft_dag_run_create(dag, pool, &ro, &run), WEFT_OK);
    for (int rep = 0; rep < 3; rep++) {
        order_log_t log = {.n = 0};
        assert_int_equal(weft_dag_run_execute(run, &log), WEFT_OK);
        assert_int_equal(atomic_load(&log.n), 6);
        for (int i = 0; i < 6; i++) assert_int_equal(log.ids[i], want[i]);
    }
    assert_int_equal(weft_dag_run_destroy(run), WEFT_OK);
    assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
    assert_int_equal(weft_dag_destroy(dag), WEFT_OK);
}

static void list_order_sequential(void **state)
{
    (void)state;
    run_small(0);
}

static void list_order_shared_heap(void **state)
{
    (void)state;
    run_small(1);
}

/* A random DAG of n nodes (edges to higher ids) with random priorities. */
static weft_dag_t *random_dag(tgraph_t *g, uint32_t n, uint64_t *s)
{
    g->n = n;
    for (uint32_t v = 1; v < n; v++) {
        uint32_t k = (uint32_t)(trng(s) % 4);
        for (uint32_t j = 0; j < k; j++) {
            uint32_t u = (uint32_t)(trng(s) % v);
            bool dup = false;
            for (size_t e = 0; e < g->ne; e++) dup |= g->from[e] == u && g->to[e] == v;
            if (!dup) tgraph_edge(g, u, v);
        }
    }
    weft_dag_t *dag;
    assert_int_equal(weft_dag_create(NULL, &dag), WEFT_OK);
    for (uint32_t i = 0; i < n; i++)
        assert_int_equal(weft_dag_add_node(dag, trec_node, (void *)(uintptr_t)i, NULL, NULL), WEFT_OK);
    for (size_t e = 0; e < g->ne; e++) assert_int_equal(weft_dag_add_edge(dag, g->from[e], g->to[e]), WEFT_OK);
    for (uint32_t i = 0; i < n; i++)
        assert_int_equal(weft_dag_set_priority(dag, i, (int64_t)(trng(s) % 7) - 3), WEFT_OK);
    assert_int_equal(weft_dag_finalize(dag), WEFT_OK);
    return dag;
}

static void random_dags_every_node_once(void **state)
{
    (void)state;
    uint64_t seed = 20261124;
    printf("seed %llu\n", (unsigned long long)seed);
    static const int threads[3] = {1, 2, 4};
    for (int t = 0; t < 3; t++) {
        weft_pool_t *pool;
        assert_int_equal(weft_pool_create(threads[t], NULL, &pool), WEFT_OK);
        for (int d = 0; d < 20; d++) {
            uint64_t s = seed + (uint64_t)d;
            tgraph_t g = {0};
            weft_dag_t *dag = random_dag(&g, 1 + (uint32_t)(trng(&s) % 300), &s);
            trec_t rec;
            trec_init(&rec, g.n, threads[t]);
            weft_dag_run_options_t ro = WEFT_DAG_RUN_OPTIONS_INIT;
            ro.deferrable = d % 2; /* both the sequential and the heap path on one worker */
            weft_dag_run_t *run;
            assert_int_equal(weft_dag_run_create(dag, pool, &ro, &run), WEFT_OK);
            for (int rep = 0; rep < 5; rep++) {
                trec_reset(&rec);
                assert_int_equal(weft_dag_run_execute(run, &rec), WEFT_OK);
                assert_int_equal(trec_check(&rec, &g), 0);
            }
            assert_int_equal(weft_dag_run_destroy(run), WEFT_OK);
            assert_int_equal(weft_dag_destroy(dag), WEFT_OK);
            trec_fini(&rec);
            tgraph_free(&g);
        }
        assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
    }
}

/* Gate 0 retires its region {1, 2}; 3 follows 2 and 4 is independent. */
typedef struct gate_log {
    _Atomic int ran[5];
} gate_log_t;

static weft_status_t gate_node(void *arg, const weft_task_ctx_t *ctx)
{
    gate_log_t *l = ctx->user;
    int i = (int)(uintptr_t)arg;
    atomic_fetch_add(&l->ran[i], 1);
    if (i == 0 && ctx->retire) *ctx->retire = true;
    return WEFT_OK;
}

static void retired_region_with_priorities(void **state)
{
    (void)state;
    weft_dag_t *dag;
    assert_int_equal(weft_dag_create(NULL, &dag), WEFT_OK);
    for (uint32_t i = 0; i < 5; i++)
        assert_int_equal(weft_dag_add_node(dag, gate_node, (void *)(uintptr_t)i, NULL, NULL), WEFT_OK);
    uint32_t members[2] = {1, 2};
    assert_int_equal(weft_dag_add_region(dag, 0, members, 2, NULL), WEFT_OK);
    assert_int_equal(weft_dag_add_edge(dag, 2, 3), WEFT_OK);
    for (uint32_t i = 0; i < 5; i++) assert_int_equal(weft_dag_set_priority(dag, i, (int64_t)i), WEFT_OK);
    assert_int_equal(weft_dag_finalize(dag), WEFT_OK);
    for (int threads = 1; threads <= 4; threads *= 2) {
        weft_pool_t *pool;
        assert_int_equal(weft_pool_create(threads, NULL, &pool), WEFT_OK);
        weft_dag_run_options_t ro = WEFT_DAG_RUN_OPTIONS_INIT;
        ro.deferrable = 1;
        weft_dag_run_t *run;
        assert_int_equal(weft_dag_run_create(dag, pool, &ro, &run), WEFT_OK);
        for (int rep = 0; rep < 10; rep++) {
            gate_log_t l;
            for (int i = 0; i < 5; i++) atomic_init(&l.ran[i], 0);
            assert_int_equal(weft_dag_run_execute(run, &l), WEFT_OK);
            static const int want[5] = {1, 0, 0, 1, 1};
            for (int i = 0; i < 5; i++) assert_int_equal(atomic_load(&l.ran[i]), want[i]);
        }
        assert_int_equal(weft_dag_run_destroy(run), WEFT_OK);
        assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
    }
    assert_int_equal(weft_dag_destroy(dag), WEFT_OK);
}

static void misuse(void **state)
{
    (void)state;
    assert_int_equal(weft_dag_set_priority(NULL, 0, 1), WEFT_EINVAL);
    weft_dag_t *dag;
    assert_int_equal(weft_dag_create(NULL, &dag), WEFT_OK);
    assert_int_equal(weft_dag_add_node(dag, log_node, NULL, "a", NULL), WEFT_OK);
    assert_int_equal(weft_dag_set_priority(dag, 1, 1), WEFT_ENOTFOUND);
    assert_string_equal(weft_dag_last_error(dag), "set_priority: no node 1 (the DAG has 1)");
    /* nodes added after a priority default to 0 */
    assert_int_equal(weft_dag_set_priority(dag, 0, -4), WEFT_OK);
    assert_int_equal(weft_dag_add_node(dag, log_node, (void *)(uintptr_t)1, "b", NULL), WEFT_OK);
    assert_int_equal(weft_dag_finalize(dag), WEFT_OK);
    assert_int_equal(weft_dag_set_priority(dag, 0, 1), WEFT_ESTATE);
    assert_string_equal(weft_dag_last_error(dag),
                        "set_priority: the DAG is finalized and can no longer change");
    weft_pool_t *pool;
    assert_int_equal(weft_pool_create(1, NULL, &pool), WEFT_OK);
    weft_dag_run_t *run;
    assert_int_equal(weft_dag_run_create(dag, pool, NULL, &run), WEFT_OK);
    order_log_t log = {.n = 0};
    assert_int_equal(weft_dag_run_execute(run, &log), WEFT_OK);
    assert_int_equal(log.ids[0], 1); /* b (0) before a (-4) */
    assert_int_equal(log.ids[1], 0);
    assert_int_equal(weft_dag_run_destroy(run), WEFT_OK);
    assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
    assert_int_equal(weft_dag_destroy(dag), WEFT_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(list_order_sequential),
        cmocka_unit_test(list_order_shared_heap),
        cmocka_unit_test(random_dags_every_node_once),
        cmocka_unit_test(retired_region_with_priorities),
        cmocka_unit_test(misuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
