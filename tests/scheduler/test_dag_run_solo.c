/* DAG runs on one-worker pools (docs/execution.md §3.4, sequential runs):
 * the nodes run in exactly one order, the ids when every edge goes to a
 * higher id, otherwise Kahn's order; through execute (the caller as guest)
 * and through start/wait (the worker) alike; a failure or a cancel from a
 * node skips exactly the nodes after it; a node's nested parallel-for still
 * runs on the same worker. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dag_check.h"

/* Run g's DAG on a one-worker pool (execute, then start + wait) and check
 * that node order[k] ran k-th; order NULL: node k ran k-th. */
static void expect_order(const tgraph_t *g, const uint32_t *order)
{
    weft_dag_t *dag = NULL;
    weft_pool_t *pool;
    weft_dag_run_t *run;
    assert_int_equal(tgraph_build(g, &dag), WEFT_OK);
    assert_int_equal(weft_pool_create(1, NULL, &pool), WEFT_OK);
    assert_int_equal(weft_dag_run_create(dag, pool, NULL, &run), WEFT_OK);
    trec_t r;
    trec_init(&r, g->n, 1);
    for (int how = 0; how < 4; how++) { /* execute, start + wait, twice each */
        trec_reset(&r);
        if (how % 2 == 0) {
            assert_int_equal(weft_dag_run_execute(run, &r), WEFT_OK);
        } else {
            assert_int_equal(weft_dag_run_start(run, &r), WEFT_OK);
            assert_int_equal(weft_dag_run_wait(run), WEFT_OK);
        }
        assert_int_equal(trec_check(&r, g), 0);
        for (uint32_t k = 0; k < g->n; k++) assert_int_equal(r.seq[order ? order[k] : k], k);
    }
    trec_fini(&r);
    assert_int_equal(weft_dag_run_destroy(run), WEFT_OK);
    assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
    assert_int_equal(weft_dag_destroy(dag), WEFT_OK);
}

static void test_dag_run_solo_runs_topological_ids_in_id_order(void **state)
{
    (void)state;
    const char *shapes[] = { "random", "wavefront", "fanout", "tree" };
    const uint32_t params[] = { 3000, 40, 500, 10 };
    for (int s = 0; s < 4; s++) {
        tgraph_t g;
        tgraph_shape(&g, shapes[s], params[s]);
        expect_order(&g, NULL);
        tgraph_free(&g);
    }
}

static void test_dag_run_solo_runs_other_ids_in_kahn_order(void **state)
{
    (void)state;
    /* sources 2, 4, 5 (in id order); 3 waits for 4 and 5; 0 for 2 and 3;
     * 3's successors were added as 1, then 0 */
    tgraph_t g = { 0 };
    g.n = 6;
    tgraph_edge(&g, 5, 3);
    tgraph_edge(&g, 4, 3);
    tgraph_edge(&g, 3, 1);
    tgraph_edge(&g, 3, 0);
    tgraph_edge(&g, 2, 0);
    const uint32_t order[6] = { 2, 4, 5, 3, 1, 0 };
    expect_order(&g, order);
    tgraph_free(&g);
    /* a chain numbered backwards: 99 -> 98 -> ... -> 0 */
    g.n = 100;
    uint32_t back[100];
    for (uint32_t i = 0; i < 100; i++) back[i] = 99 - i;
    for (uint32_t i = 99; i > 0; i--) tgraph_edge(&g, i, i - 1);
    expect_order(&g, back);
    tgraph_free(&g);
}

/* ------------------------------------------------- failure and cancel */

typedef struct soloctl {
    uint32_t fail_at, cancel_at; // UINT32_MAX: none
    weft_dag_run_t *run;
    weft_pool_t *pool;
    _Atomic uint32_t ran[64];
    _Atomic uint32_t nested[64]; // parallel-for indices run inside node 10
    _Atomic int bad_worker;
} soloctl_t;

static weft_status_t solo_range(void *arg, size_t b, size_t e, const weft_task_ctx_t *ctx)
{
    soloctl_t *c = arg;
    if (ctx->worker != 0) atomic_store(&c->bad_worker, 1);
    for (size_t i = b; i < e; i++) atomic_fetch_add(&c->nested[i], 1);
    return WEFT_OK;
}

static weft_status_t solo_node(void *arg, const weft_task_ctx_t *ctx)
{
    soloctl_t *c = ctx->user;
    uint32_t id = (uint32_t)(uintptr_t)arg;
    atomic_fetch_add(&c->ran[id], 1);
    if (id == 10) return weft_pool_parallel_for(c->pool, 0, 64, 4, solo_range, c);
    if (id == c->cancel_at) return weft_dag_run_cancel(c->run);
    return id == c->fail_at ? WEFT_ENAN : WEFT_OK;
}

/* 64 nodes without edges, named "s<id>": they run in id order. */
static weft_dag_t *independent_dag(void)
{
    weft_dag_t *dag = NULL;
    char name[32];
    assert_int_equal(weft_dag_create(NULL, &dag), WEFT_OK);
    for (uint32_t i = 0; i < 64; i++) {
        snprintf(name, sizeof name, "s%u", i);
        assert_int_equal(weft_dag_add_node(dag, solo_node, (void *)(uintptr_t)i, name, NULL),
                         WEFT_OK);
    }
    assert_int_equal(weft_dag_finalize(dag), WEFT_OK);
    return dag;
}

static void test_dag_run_solo_failure_and_cancel_skip_exactly_the_later_nodes(void **state)
{
    (void)state;
    weft_dag_t *dag = independent_dag();
    weft_pool_t *pool;
    weft_dag_run_t *run;
    assert_int_equal(weft_pool_create(1, NULL, &pool), WEFT_OK);
    assert_int_equal(weft_dag_run_create(dag, pool, NULL, &run), WEFT_OK);
    soloctl_t *c = calloc(1, sizeof *c);
    const uint32_t stop_at[3] = { 37, 20, UINT32_MAX }; /* fail, cancel, neither */
    const weft_status_t want[3] = { WEFT_ENAN, WEFT_ECANCELED, WEFT_OK };
    for (int k = 0; k < 3; k++) {
        memset(c, 0, sizeof *c);
        c->fail_at = k == 0 ? stop_at[k] : UINT32_MAX;
        c->cancel_at = k == 1 ? stop_at[k] : UINT32_MAX;
        c->run = run;
        c->pool = pool;
        assert_int_equal(weft_dag_run_execute(run, c), want[k]);
        for (uint32_t i = 0; i < 64; i++) {
            assert_int_equal(atomic_load(&c->ran[i]), i <= stop_at[k]);
            assert_int_equal(atomic_load(&c->nested[i]), 1);
        }
        assert_int_equal(atomic_load(&c->bad_worker), 0);
        uint32_t id;
        const char *name;
        assert_int_equal(weft_dag_run_failed_node(run, &id, &name), want[k]);
        assert_int_equal(id, k == 0 ? 37 : WEFT_DAG_NO_NODE);
        if (k == 0) assert_string_equal(name, "s37");
        else assert_null(name);
    }
    free(c);
    assert_int_equal(weft_dag_run_destroy(run), WEFT_OK);
    assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
    assert_int_equal(weft_dag_destroy(dag), WEFT_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dag_run_solo_runs_topological_ids_in_id_order),
        cmocka_unit_test(test_dag_run_solo_runs_other_ids_in_kahn_order),
        cmocka_unit_test(test_dag_run_solo_failure_and_cancel_skip_exactly_the_later_nodes),
    };
    return cmocka_run_group_tests_name("dag_run_solo", tests, NULL, NULL);
}
