/* DAG building and validation: ids and names, every bad input with its exact
 * status and error text (unknown nodes, self edges, duplicate edges, cycles,
 * changes after finalize, runs on unfinalized DAGs, destroying a DAG or pool
 * that run objects still use), and no leak on any error path (counting and
 * failing allocators). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "weft/sched.h"

/* Counting allocator; fails every allocation once `budget` reaches 0
 * (budget < 0: never fails). */
typedef struct counting {
    long live_blocks;
    long budget;
} counting_t;

static void *counting_resize(void *user, void *p, size_t old_n, size_t n)
{
    counting_t *c = user;
    (void)old_n;
    if (n == 0) {
        if (p) c->live_blocks--;
        free(p);
        return NULL;
    }
    if (c->budget == 0) return NULL;
    if (c->budget > 0) c->budget--;
    void *q = realloc(p, n);
    if (q && !p) c->live_blocks++;
    return q;
}

static weft_status_t noop(void *arg, const weft_task_ctx_t *ctx)
{
    (void)arg;
    (void)ctx;
    return WEFT_OK;
}

static weft_dag_t *make_dag(int n)
{
    weft_dag_t *dag = NULL;
    assert_int_equal(weft_dag_create(NULL, &dag), WEFT_OK);
    char name[16];
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "%c", 'a' + i);
        uint32_t id = 99;
        assert_int_equal(weft_dag_add_node(dag, noop, NULL, name, &id), WEFT_OK);
        assert_int_equal(id, (uint32_t)i);
    }
    return dag;
}

static void test_dag_create_with_null_out_returns_einval(void **state)
{
    (void)state;
    assert_int_equal(weft_dag_create(NULL, NULL), WEFT_EINVAL);
    assert_int_equal(weft_dag_destroy(NULL), WEFT_OK);
    assert_int_equal(weft_dag_node_count(NULL), 0);
    assert_int_equal(weft_dag_edge_count(NULL), 0);
    assert_null(weft_dag_node_name(NULL, 0));
    assert_string_equal(weft_dag_last_error(NULL), "");
}

static void test_dag_nodes_get_sequential_ids_and_names(void **state)
{
    (void)state;
    weft_dag_t *dag = make_dag(3);
    uint32_t id;
    assert_int_equal(weft_dag_add_node(dag, noop, NULL, NULL, &id), WEFT_OK);
    assert_int_equal(id, 3);
    assert_int_equal(weft_dag_node_count(dag), 4);
    assert_string_equal(weft_dag_node_name(dag, 1), "b");
    assert_string_equal(weft_dag_node_name(dag, 3), "");
    assert_null(weft_dag_node_name(dag, 4));
    assert_int_equal(weft_dag_add_node(dag, NULL, NULL, "x", &id), WEFT_EINVAL);
    assert_int_equal(weft_dag_add_node(NULL, noop, NULL, "x", &id), WEFT_EINVAL);
    assert_int_equal(weft_dag_destroy(dag), WEFT_OK);
}

static void test_dag_edge_to_unknown_node_returns_enotfound(void **state)
{
    (void)state;
    weft_dag_t *dag = make_dag(2);
    assert_int_equal(weft_dag_add_edge(dag, 0, 2), WEFT_ENOTFOUND);
    assert_non_null(strstr(weft_dag_last_error(dag), "no node 2"));
    assert_int_equal(weft_dag_add_edge(dag, 7, 1), WEFT_ENOTFOUND);
    assert_int_equal(weft_dag_add_edge(NULL, 0, 1), WEFT_EINVAL);
    assert_int_equal(weft_dag_edge_count(dag), 0);
    assert_int_equal(weft_dag_destroy(dag), WEFT_OK);
}

static void test_dag_self_edge_returns_ecycle(void **state)
{
    (void)state;
    weft_dag_t *dag = make_dag(2);
    assert_int_equal(weft_dag_add_edge(dag, 1, 1), WEFT_ECYCLE);
    assert_non_null(strstr(weft_dag_last_error(dag), "self edge on node 'b' (1)"));
    assert_int_equal(weft_dag_destroy(dag), WEFT_OK);
}

static void test_dag_duplicate_edge_is_rejected_at_finalize(void **state)
{
    (void)state;
    weft_dag_t *dag = make_dag(3);
    assert_int_equal(weft_dag_add_edge(dag, 0, 2), WEFT_OK);
    assert_int_equal(weft_dag_add_edge(dag, 1, 2), WEFT_OK);
    assert_int_equal(weft_dag_add_edge(dag, 0, 2), WEFT_OK);
    assert_int_equal(weft_dag_finalize(dag), WEFT_EDUPLICATE);
    assert_string_equal(weft_dag_last_error(dag), "duplicate edge 'a' (0) -> 'c' (2)");
    /* not finalized: runs refused */
    weft_pool_t *pool;
    weft_dag_run_t *run = NULL;
    assert_int_equal(weft_pool_create(1, NULL, &pool), WEFT_OK);
    assert_int_equal(weft_dag_run_create(dag, pool, NULL, &run), WEFT_ESTATE);
    assert_null(run);
    assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
    assert_int_equal(weft_dag_destroy(dag), WEFT_OK);
}

static void test_dag_cycle_is_rejected_naming_its_nodes(void **state)
{
    (void)state;
    weft_dag_t *dag = make_dag(5); /* a -> b -> c -> d -> b, d -> e */
    assert_int_equal(weft_dag_add_edge(dag, 0, 1), WEFT_OK);
    assert_int_equal(weft_dag_add_edge(dag, 1, 2), WEFT_OK);
    assert_int_equal(weft_dag_add_edge(dag, 2, 3), WEFT_OK);
    assert_int_equal(weft_dag_add_edge(dag, 3, 1), WEFT_OK);
    assert_int_equal(weft_dag_add_edge(dag, 3, 4), WEFT_OK);
    assert_int_equal(weft_dag_finalize(dag), WEFT_ECYCLE);
    const char *err = weft_dag_last_error(dag);
    printf("cycle error: %s\n", err);
    assert_non_null(strstr(err, "cycle of 3 nodes"));
    assert_non_null(strstr(err, "'b' (1)"));
    assert_non_null(strstr(err, "'c' (2)"));
    assert_non_null(strstr(err, "'d' (3)"));
    assert_null(strstr(err, "'a' (0)"));
    assert_null(strstr(err, "'e' (4)"));
    assert_int_equal(weft_dag_destroy(dag), WEFT_OK);
}

static void test_dag_changes_after_finalize_return_estate(void **state)
{
    (void)state;
    weft_dag_t *dag = make_dag(2);
    assert_int_equal(weft_dag_add_edge(dag, 0, 1), WEFT_OK);
    assert_int_equal(weft_dag_finalize(dag), WEFT_OK);
    assert_string_equal(weft_dag_last_error(dag), "");
    assert_int_equal(weft_dag_edge_count(dag), 1);
    assert_int_equal(weft_dag_add_node(dag, noop, NULL, "z", NULL), WEFT_ESTATE);
    assert_int_equal(weft_dag_add_edge(dag, 1, 0), WEFT_ESTATE);
    assert_int_equal(weft_dag_finalize(dag), WEFT_ESTATE);
    assert_non_null(strstr(weft_dag_last_error(dag), "finalized"));
    assert_int_equal(weft_dag_finalize(NULL), WEFT_EINVAL);
    assert_int_equal(weft_dag_destroy(dag), WEFT_OK);
}

static void test_dag_destroy_with_run_objects_returns_ebusy(void **state)
{
    (void)state;
    weft_dag_t *dag = make_dag(2);
    weft_pool_t *pool;
    weft_dag_run_t *run;
    assert_int_equal(weft_dag_finalize(dag), WEFT_OK);
    assert_int_equal(weft_pool_create(2, NULL, &pool), WEFT_OK);
    assert_int_equal(weft_dag_run_create(dag, pool, NULL, &run), WEFT_OK);
    assert_int_equal(weft_dag_destroy(dag), WEFT_EBUSY);
    assert_int_equal(weft_pool_destroy(pool), WEFT_EBUSY);
    assert_int_equal(weft_dag_run_execute(run, NULL), WEFT_OK); /* both still usable */
    assert_int_equal(weft_dag_run_destroy(run), WEFT_OK);
    assert_int_equal(weft_dag_destroy(dag), WEFT_OK);
    assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
}

static void test_dag_run_create_bad_arguments_return_einval(void **state)
{
    (void)state;
    weft_dag_t *dag = make_dag(1);
    weft_pool_t *pool;
    weft_dag_run_t *run;
    assert_int_equal(weft_dag_finalize(dag), WEFT_OK);
    assert_int_equal(weft_pool_create(1, NULL, &pool), WEFT_OK);
    assert_int_equal(weft_dag_run_create(NULL, pool, NULL, &run), WEFT_EINVAL);
    assert_int_equal(weft_dag_run_create(dag, NULL, NULL, &run), WEFT_EINVAL);
    assert_int_equal(weft_dag_run_create(dag, pool, NULL, NULL), WEFT_EINVAL);
    weft_dag_run_options_t o = WEFT_DAG_RUN_OPTIONS_INIT;
    o.size = 1;
    assert_int_equal(weft_dag_run_create(dag, pool, &o, &run), WEFT_EINVAL);
    assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
    assert_int_equal(weft_dag_destroy(dag), WEFT_OK);
}

static void test_dag_empty_dag_finalizes_and_runs(void **state)
{
    (void)state;
    weft_dag_t *dag = make_dag(0);
    weft_pool_t *pool;
    weft_dag_run_t *run;
    assert_int_equal(weft_dag_finalize(dag), WEFT_OK);
    assert_int_equal(weft_pool_create(2, NULL, &pool), WEFT_OK);
    assert_int_equal(weft_dag_run_create(dag, pool, NULL, &run), WEFT_OK);
    assert_int_equal(weft_dag_run_execute(run, NULL), WEFT_OK);
    assert_int_equal(weft_dag_run_destroy(run), WEFT_OK);
    assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
    assert_int_equal(weft_dag_destroy(dag), WEFT_OK);
}

/* Build, finalize (sometimes with a cycle) and destroy with an allocator
 * that fails after `budget` allocations: every step either succeeds or
 * returns WEFT_ENOMEM, and nothing leaks. */
static int build_with_budget(long budget, int cyclic)
{
    counting_t c = { 0, budget };
    weft_allocator_t a = { counting_resize, &c };
    weft_dag_t *dag = NULL;
    weft_status_t st = weft_dag_create(&a, &dag);
    int ok = 1;
    for (int i = 0; i < 200 && st == WEFT_OK; i++)
        st = weft_dag_add_node(dag, noop, NULL, i % 2 ? "named" : NULL, NULL);
    for (uint32_t i = 1; i < 200 && st == WEFT_OK; i++) st = weft_dag_add_edge(dag, i - 1, i);
    if (st == WEFT_OK && cyclic) st = weft_dag_add_edge(dag, 150, 20);
    if (st == WEFT_OK) {
        st = weft_dag_finalize(dag);
        if (cyclic && st != WEFT_ECYCLE && st != WEFT_ENOMEM) ok = 0;
        if (!cyclic && st != WEFT_OK && st != WEFT_ENOMEM) ok = 0;
    } else if (st != WEFT_ENOMEM) {
        ok = 0;
    }
    if (weft_dag_destroy(dag) != WEFT_OK) ok = 0;
    if (c.live_blocks != 0) ok = 0;
    return ok;
}

static void test_dag_out_of_memory_on_every_step_leaks_nothing(void **state)
{
    (void)state;
    for (long budget = 0; budget < 60; budget++) {
        assert_true(build_with_budget(budget, 0));
        assert_true(build_with_budget(budget, 1));
    }
    assert_true(build_with_budget(-1, 0));
    assert_true(build_with_budget(-1, 1));
}

static void test_pool_allocator_failure_leaks_nothing(void **state)
{
    (void)state;
    for (long budget = 0; budget < 40; budget++) {
        counting_t c = { 0, budget };
        weft_allocator_t a = { counting_resize, &c };
        weft_pool_options_t o = WEFT_POOL_OPTIONS_INIT;
        o.allocator = &a;
        weft_pool_t *pool = NULL;
        weft_status_t st = weft_pool_create(3, &o, &pool);
        assert_true(st == WEFT_OK || st == WEFT_ENOMEM);
        assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
        assert_int_equal(c.live_blocks, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dag_create_with_null_out_returns_einval),
        cmocka_unit_test(test_dag_nodes_get_sequential_ids_and_names),
        cmocka_unit_test(test_dag_edge_to_unknown_node_returns_enotfound),
        cmocka_unit_test(test_dag_self_edge_returns_ecycle),
        cmocka_unit_test(test_dag_duplicate_edge_is_rejected_at_finalize),
        cmocka_unit_test(test_dag_cycle_is_rejected_naming_its_nodes),
        cmocka_unit_test(test_dag_changes_after_finalize_return_estate),
        cmocka_unit_test(test_dag_destroy_with_run_objects_returns_ebusy),
        cmocka_unit_test(test_dag_run_create_bad_arguments_return_einval),
        cmocka_unit_test(test_dag_empty_dag_finalizes_and_runs),
        cmocka_unit_test(test_dag_out_of_memory_on_every_step_leaks_nothing),
        cmocka_unit_test(test_pool_allocator_failure_leaks_nothing),
    };
    return cmocka_run_group_tests_name("dag", tests, NULL, NULL);
}
