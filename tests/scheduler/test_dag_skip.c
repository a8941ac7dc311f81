/* weft_task_ctx_t.skip_to (weft/sched.h): in a sequential run (one-worker
 * pool, ids in order) a body may have the next nodes up to an id not
 * called; the run still completes; elsewhere the pointer is NULL. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "weft/sched.h"

typedef struct rec {
    int ran[8];
    int saw_skip[8];
    uint32_t jump_from, jump_to;
} rec_t;

typedef struct node_arg {
    uint32_t id;
} node_arg_t;

static weft_status_t body(void *arg, const weft_task_ctx_t *ctx)
{
    rec_t *r = ctx->user;
    uint32_t id = ((const node_arg_t *)arg)->id;
    r->ran[id]++;
    r->saw_skip[id] = ctx->skip_to != NULL;
    if (ctx->skip_to && id == r->jump_from) *ctx->skip_to = r->jump_to;
    return WEFT_OK;
}

/* A chain 0 -> 1 -> ... -> 7 on `threads` workers; node 2 asks to skip to 6. */
static void run_chain(int threads, rec_t *r)
{
    static node_arg_t args[8];
    weft_dag_t *dag = NULL;
    weft_pool_t *pool = NULL;
    weft_dag_run_t *run = NULL;
    assert_int_equal(weft_dag_create(NULL, &dag), WEFT_OK);
    for (uint32_t i = 0; i < 8; i++) {
        args[i].id = i;
        assert_int_equal(weft_dag_add_node(dag, body, &args[i], "n", NULL), WEFT_OK);
        if (i) assert_int_equal(weft_dag_add_edge(dag, i - 1, i), WEFT_OK);
    }
    assert_int_equal(weft_dag_finalize(dag), WEFT_OK);
    assert_int_equal(weft_pool_create(threads, NULL, &pool), WEFT_OK);
    assert_int_equal(weft_dag_run_create(dag, pool, NULL, &run), WEFT_OK);
    memset(r->ran, 0, sizeof r->ran);
    r->jump_from = 2;
    r->jump_to = 6;
    assert_int_equal(weft_dag_run_execute(run, r), WEFT_OK);
    assert_int_equal(weft_dag_run_destroy(run), WEFT_OK);
    assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
    assert_int_equal(weft_dag_destroy(dag), WEFT_OK);
}

static void test_skip_to_sequential(void **state)
{
    (void)state;
    rec_t r;
    run_chain(1, &r);
    const int want[8] = {1, 1, 1, 0, 0, 0, 1, 1};
    for (int i = 0; i < 8; i++) assert_int_equal(r.ran[i], want[i]);
    assert_int_equal(r.saw_skip[0], 1);
}

static void test_skip_to_null_in_parallel_runs(void **state)
{
    (void)state;
    rec_t r;
    run_chain(2, &r);
    for (int i = 0; i < 8; i++) {
        assert_int_equal(r.ran[i], 1);
        assert_int_equal(r.saw_skip[i], 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_skip_to_sequential),
        cmocka_unit_test(test_skip_to_null_in_parallel_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
