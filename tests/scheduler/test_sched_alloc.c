/* One memory model (weft/alloc.h) for the scheduler: a pool created with
 * options.allocator and a DAG created with an allocator take every byte they
 * own (pool, workers, deques and their growth, DAG tables and names, run
 * objects with their profile arrays) from it, each block freed with its
 * size, and nothing from the C library (tests/support/alloc_count.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "support/counting_alloc.h"
#include "weft/sched.h"

#define CHAIN 200 /* caterpillar steps */
#define LEGS 7     /* leaves per step */
#define FAN 1000   /* successors of the last step: pushed as ranges */
#define N_NODES (CHAIN * (1 + LEGS) + FAN)

static atomic_long ran;

static weft_status_t node(void *arg, const weft_task_ctx_t *ctx)
{
    (void)arg;
    (void)ctx;
    /* relaxed: a count read after the run's wait, which orders it */
    atomic_fetch_add_explicit(&ran, 1, memory_order_relaxed);
    return WEFT_OK;
}

static weft_status_t range(void *arg, size_t begin, size_t end, const weft_task_ctx_t *ctx)
{
    (void)arg;
    (void)ctx;
    /* relaxed: read after parallel_for returned */
    atomic_fetch_add_explicit(&ran, (long)(end - begin), memory_order_relaxed);
    return WEFT_OK;
}

/* A caterpillar: each chain step's first successor is the next step, then
 * LEGS leaves. On one worker, a step runs its next step itself and pushes its
 * leaves, so the worker's deque grows well past its first capacity; the last
 * step fans out to FAN leaves (range items). */
static void exercise_sched(const weft_allocator_t *al)
{
    weft_pool_options_t po = WEFT_POOL_OPTIONS_INIT;
    po.allocator = al;
    po.pin = WEFT_PIN_NONE;
    weft_pool_t *pool = NULL;
    assert_int_equal(weft_pool_create(1, &po, &pool), WEFT_OK);
    weft_dag_t *dag = NULL;
    assert_int_equal(weft_dag_create(al, &dag), WEFT_OK);
    uint32_t step[CHAIN], id;
    for (int i = 0; i < CHAIN; i++)
        assert_int_equal(weft_dag_add_node(dag, node, NULL, "step", &step[i]), WEFT_OK);
    for (int i = 0; i < CHAIN; i++) {
        if (i + 1 < CHAIN) assert_int_equal(weft_dag_add_edge(dag, step[i], step[i + 1]), WEFT_OK);
        for (int k = 0; k < (i + 1 < CHAIN ? LEGS : LEGS + FAN); k++) {
            assert_int_equal(weft_dag_add_node(dag, node, NULL, "a leaf with a longish name", &id),
                             WEFT_OK);
            assert_int_equal(weft_dag_add_edge(dag, step[i], id), WEFT_OK);
        }
    }
    assert_int_equal(weft_dag_finalize(dag), WEFT_OK);
    weft_dag_run_options_t ro = WEFT_DAG_RUN_OPTIONS_INIT;
    ro.profile = 1;
    weft_dag_run_t *run = NULL;
    assert_int_equal(weft_dag_run_create(dag, pool, &ro, &run), WEFT_OK);
    atomic_store_explicit(&ran, 0, memory_order_relaxed); /* relaxed: before any run */
    for (int rep = 0; rep < 3; rep++) assert_int_equal(weft_dag_run_execute(run, NULL), WEFT_OK);
    assert_int_equal(weft_dag_run_start(run, NULL), WEFT_OK);
    assert_int_equal(weft_dag_run_wait(run), WEFT_OK);
    assert_int_equal(weft_pool_parallel_for(pool, 0, 10000, 7, range, NULL), WEFT_OK);
    /* relaxed: every run and the parallel-for have been waited for */
    assert_int_equal(atomic_load_explicit(&ran, memory_order_relaxed), 4 * N_NODES + 10000);
    assert_int_equal(weft_dag_run_destroy(run), WEFT_OK);
    assert_int_equal(weft_dag_destroy(dag), WEFT_OK);
    assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
}

static void test_sched_alloc_custom_allocator_takes_everything(void **state)
{
    (void)state;
    counting_alloc_expect_all(exercise_sched, 10);
}

/* Without an allocator the same work goes to the C library (so the test
 * above would see a bypass). */
static void test_sched_alloc_null_allocator_is_the_c_library(void **state)
{
    (void)state;
    counting_alloc_expect_c_library(exercise_sched, 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sched_alloc_custom_allocator_takes_everything),
        cmocka_unit_test(test_sched_alloc_null_allocator_is_the_c_library),
    };
    return cmocka_run_group_tests_name("sched_alloc", tests, NULL, NULL);
}
