/* A worker waiting in weft__pool_wait applies its deferred sink counts
 * before it takes other local work (pool_int.h): a nested run's last sink
 * is counted in a defer slot, and the run's completion must not wait behind
 * whatever the worker's deque holds (a Scan's chain stalled behind a chunk
 * product so, docs/control-flow.md §5.6). Deferred node releases keep
 * their batching: they come after the local work. One-worker pool:
 * nothing is stolen, so the order of execution is exact. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pool_int.h" /* the worker's deque and defer slots (whitebox) */
#include "weft/sched.h"

/* An item that appends its letter to the log and marks itself run. */
typedef struct mark {
    weft__task_t task;
    char letter;
    char *log;
    _Atomic int ran;
} mark_t;

static void mark_exec(weft__task_t *t, uint64_t payload, weft__worker_t *w)
{
    (void)payload;
    (void)w;
    mark_t *m = (mark_t *)t;
    m->log[strlen(m->log)] = m->letter;
    /* release: pairs with the acquire load in mark_done */
    atomic_store_explicit(&m->ran, 1, memory_order_release);
}

static bool mark_done(void *arg)
{
    /* acquire: sees the log the item wrote */
    return atomic_load_explicit(&((mark_t *)arg)->ran, memory_order_acquire) != 0;
}

typedef struct wait_case {
    unsigned slot; /* the defer slot of D's counter */
    char log[8];
} wait_case_t;

/* The body, on the pool's only worker (or its guest): other work X queued
 * locally, a deferred decrement whose zero releases D, then a wait for D. */
static weft_status_t wait_body(void *arg, size_t b, size_t e, const weft_task_ctx_t *ctx)
{
    (void)b;
    (void)e;
    wait_case_t *wc = arg;
    char *log = wc->log;
    weft__worker_t *w = weft__worker_self();
    mark_t x = {{mark_exec}, 'X', log, 0}, d = {{mark_exec}, 'D', log, 0};
    _Atomic uint32_t ctr = 1;
    weft__worker_push(w, (weft__item_t){&x.task, 0});
    weft__worker_defer(w, wc->slot, &ctr, (weft__item_t){&d.task, 0});
    weft__pool_wait(ctx->pool, mark_done, &d);
    log[strlen(log)] = 'R'; /* the wait returned */
    weft__pool_wait(ctx->pool, mark_done, &x); /* x lives on this stack */
    return WEFT_OK;
}

/* The order the body logs with D's counter in defer slot `slot`. */
static void check_order(unsigned slot, const char *want)
{
    weft_pool_t *pool = NULL;
    assert_int_equal(weft_pool_create(1, NULL, &pool), WEFT_OK);
    for (int rep = 0; rep < 20; rep++) {
        wait_case_t wc = {slot, {0}};
        assert_int_equal(weft_pool_parallel_for(pool, 0, 1, 1, wait_body, &wc), WEFT_OK);
        assert_string_equal(wc.log, want);
    }
    assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
}

/* A sink count: D (the run's completion) ends the wait; X runs after it. */
static void test_wait_applies_sink_counts_first(void **state)
{
    (void)state;
    check_order(WEFT__DEFER_SINKS, "DRX");
}

/* A node release: the local work X first, D once the deque ran dry. */
static void test_wait_keeps_node_releases_batched(void **state)
{
    (void)state;
    check_order(WEFT__DEFER_NODES, "XDR");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wait_applies_sink_counts_first),
        cmocka_unit_test(test_wait_keeps_node_releases_batched),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
