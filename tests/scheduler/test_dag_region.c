/* Regions retired in bulk (weft_dag_add_region, weft_task_ctx_t.retire):
 * a gate retiring its region means no member body runs (nested regions
 * included), the nodes waiting on the region still run, after the gate,
 * and the run completes; on 1, 2 and 4 workers, run after run on one run
 * object. Also the argument checks and the finalize-time refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "weft/sched.h"

/* Nodes: 0 source; 1 gate of A; A = {2, 3, 4, 5} + WIDE wide members;
 * 4 gates B = {6, 7} (nested in A); 8 waits on 3, 7, every wide member and
 * 0; 9 sink after 8. 5 is a sink inside A. */
#define WIDE 40u
#define N (10u + WIDE)

typedef struct rec {
    _Atomic int ran[N];
    _Atomic uint64_t seq_ctr;
    uint64_t seq[N];
    _Atomic int bad_ctx;
    bool retire_a, retire_b;
    uint32_t fail; /* a node whose body fails, or N */
} rec_t;

static weft_status_t body(void *arg, const weft_task_ctx_t *ctx)
{
    rec_t *r = ctx->user;
    uint32_t id = (uint32_t)(uintptr_t)arg; /* the node's id */
    bool gate = id == 1 || id == 4;
    /* relaxed (all): read after the run's wait */
    if ((ctx->retire != NULL) != gate) atomic_store_explicit(&r->bad_ctx, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&r->ran[id], 1, memory_order_relaxed);
    r->seq[id] = atomic_fetch_add_explicit(&r->seq_ctr, 1, memory_order_relaxed) + 1;
    if (id == 1 && ctx->retire) *ctx->retire = r->retire_a;
    if (id == 4 && ctx->retire) *ctx->retire = r->retire_b;
    return id == r->fail ? WEFT_EIO : WEFT_OK;
}

/* Every edge added (gate edges included): a node runs after each of its
 * predecessors that ran, run after run (the pending counters a retired
 * region leaves touched are restored, dag_run.c). */
static uint32_t edges[128][2];
static size_t n_edges;

static void edge(weft_dag_t *d, uint32_t a, uint32_t b)
{
    assert_int_equal(weft_dag_add_edge(d, a, b), WEFT_OK);
    assert_true(n_edges < 128);
    edges[n_edges][0] = a;
    edges[n_edges++][1] = b;
}

static weft_dag_t *build(void)
{
    weft_dag_t *d = NULL;
    n_edges = 0;
    assert_int_equal(weft_dag_create(NULL, &d), WEFT_OK);
    for (uint32_t i = 0; i < N; i++)
        assert_int_equal(weft_dag_add_node(d, body, (void *)(uintptr_t)i, "n", NULL), WEFT_OK);
    edge(d, 0, 1), edge(d, 2, 3), edge(d, 0, 3), edge(d, 3, 4), edge(d, 3, 5);
    edge(d, 6, 7), edge(d, 3, 8), edge(d, 7, 8), edge(d, 0, 8), edge(d, 8, 9);
    uint32_t a[4 + WIDE] = {2, 3, 4, 5}, b[2] = {6, 7}, id = 99;
    for (uint32_t k = 0; k < WIDE; k++) {
        a[4 + k] = 10 + k;
        edge(d, 10 + k, 8);
    }
    for (uint32_t k = 0; k < 4 + WIDE; k++) edges[n_edges][0] = 1, edges[n_edges++][1] = a[k];
    edges[n_edges][0] = 4, edges[n_edges++][1] = 6;
    edges[n_edges][0] = 4, edges[n_edges++][1] = 7;
    assert_int_equal(weft_dag_add_region(d, 1, a, 4 + WIDE, &id), WEFT_OK);
    assert_int_equal(id, 0);
    assert_int_equal(weft_dag_add_region(d, 4, b, 2, &id), WEFT_OK);
    assert_int_equal(id, 1);
    assert_int_equal(weft_dag_finalize(d), WEFT_OK);
    return d;
}

static bool in_a(uint32_t i)
{
    return (i >= 2 && i <= 7) || i >= 10;
}

/* Expected runs of node i for the gates' decisions. */
static int want_ran(uint32_t i, bool ra, bool rb)
{
    if (ra && in_a(i)) return 0;
    if (rb && (i == 6 || i == 7)) return 0;
    return 1;
}

static void check_run(const rec_t *r, bool ra, bool rb)
{
    for (uint32_t i = 0; i < N; i++) assert_int_equal(r->ran[i], want_ran(i, ra, rb));
    assert_int_equal(atomic_load(&r->bad_ctx), 0);
    /* 8 after the gates that released it and after whatever ran before it */
    assert_true(r->seq[8] > r->seq[1]);
    if (!ra) assert_true(r->seq[8] > r->seq[4] && r->seq[8] > r->seq[3]);
    if (!ra && !rb) assert_true(r->seq[8] > r->seq[7]);
    assert_true(r->seq[9] > r->seq[8]);
    for (size_t e = 0; e < n_edges; e++)
        if (r->ran[edges[e][1]]) assert_true(r->seq[edges[e][1]] > r->seq[edges[e][0]]);
}

static void run_all_cases(int threads)
{
    weft_dag_t *d = build();
    weft_pool_t *pool = NULL;
    weft_dag_run_t *run = NULL;
    assert_int_equal(weft_pool_create(threads, NULL, &pool), WEFT_OK);
    assert_int_equal(weft_dag_run_create(d, pool, NULL, &run), WEFT_OK);
    static rec_t r;
    for (int rep = 0; rep < 300; rep++) {
        bool ra = rep % 4 == 1 || rep % 4 == 3, rb = rep % 4 >= 2;
        memset(&r, 0, sizeof r);
        r.retire_a = ra;
        r.retire_b = rb;
        r.fail = N;
        assert_int_equal(weft_dag_run_execute(run, &r), WEFT_OK);
        check_run(&r, ra, rb);
    }
    assert_int_equal(weft_dag_run_destroy(run), WEFT_OK);
    assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
    assert_int_equal(weft_dag_destroy(d), WEFT_OK);
}

/* Runs that fail at some node (the rest is skipped, counters left anywhere),
 * each followed by runs with every retire decision: those run correctly. */
static void test_retire_after_failure(void **state)
{
    (void)state;
    static const uint32_t fails[] = {0, 3, 7, 8, 12};
    static rec_t r;
    for (int threads = 1; threads <= 2; threads++) {
        weft_dag_t *d = build();
        weft_pool_t *pool = NULL;
        weft_dag_run_t *run = NULL;
        assert_int_equal(weft_pool_create(threads, NULL, &pool), WEFT_OK);
        assert_int_equal(weft_dag_run_create(d, pool, NULL, &run), WEFT_OK);
        for (size_t k = 0; k < 5 * 4; k++) {
            bool ra = k % 4 == 1 || k % 4 == 3, rb = k % 4 >= 2;
            memset(&r, 0, sizeof r);
            r.retire_a = ra;
            r.retire_b = rb;
            r.fail = fails[k / 4];
            weft_status_t want = want_ran(r.fail, ra, rb) ? WEFT_EIO : WEFT_OK;
            assert_int_equal(weft_dag_run_execute(run, &r), want);
            for (int again = 0; again < 4; again++) {
                memset(&r, 0, sizeof r);
                r.retire_a = again & 1;
                r.retire_b = (again & 2) != 0;
                r.fail = N;
                assert_int_equal(weft_dag_run_execute(run, &r), WEFT_OK);
                check_run(&r, again & 1, (again & 2) != 0);
            }
        }
        assert_int_equal(weft_dag_run_destroy(run), WEFT_OK);
        assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
        assert_int_equal(weft_dag_destroy(d), WEFT_OK);
    }
}

static void test_retire_1_2_4_workers(void **state)
{
    (void)state;
    for (int t = 1; t <= 4; t *= 2) run_all_cases(t);
}

/* A profiled run reports the retired members as not run (start == end == 0). */
static void test_retire_profile(void **state)
{
    (void)state;
    weft_dag_t *d = build();
    weft_pool_t *pool = NULL;
    weft_dag_run_t *run = NULL;
    weft_dag_run_options_t ro = WEFT_DAG_RUN_OPTIONS_INIT;
    ro.profile = 1;
    assert_int_equal(weft_pool_create(2, NULL, &pool), WEFT_OK);
    assert_int_equal(weft_dag_run_create(d, pool, &ro, &run), WEFT_OK);
    static rec_t r;
    memset(&r, 0, sizeof r);
    r.retire_a = true;
    r.fail = N;
    assert_int_equal(weft_dag_run_execute(run, &r), WEFT_OK);
    weft_dag_profile_t p = { .size = sizeof p };
    assert_int_equal(weft_dag_run_profile(run, &p), WEFT_OK);
    for (uint32_t i = 0; i < N; i++) assert_int_equal(p.node_start_ns[i] == 0, in_a(i));
    assert_int_equal(weft_dag_run_destroy(run), WEFT_OK);
    assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
    assert_int_equal(weft_dag_destroy(d), WEFT_OK);
}

static weft_dag_t *three_nodes(void)
{
    weft_dag_t *d = NULL;
    assert_int_equal(weft_dag_create(NULL, &d), WEFT_OK);
    for (uint32_t i = 0; i < 3; i++)
        assert_int_equal(weft_dag_add_node(d, body, (void *)(uintptr_t)i, i == 0 ? "g" : NULL, NULL),
                         WEFT_OK);
    return d;
}

static void test_region_bad_input(void **state)
{
    (void)state;
    weft_dag_t *d = three_nodes();
    uint32_t m[2] = {1, 2}, bad[1] = {7}, self[2] = {1, 0};
    assert_int_equal(weft_dag_add_region(NULL, 0, m, 2, NULL), WEFT_EINVAL);
    assert_int_equal(weft_dag_add_region(d, 0, NULL, 2, NULL), WEFT_EINVAL);
    assert_int_equal(weft_dag_add_region(d, 0, m, 0, NULL), WEFT_EINVAL);
    assert_int_equal(weft_dag_add_region(d, 5, m, 2, NULL), WEFT_ENOTFOUND);
    assert_string_equal(weft_dag_last_error(d), "add_region: no gate node 5 (the DAG has 3 nodes)");
    assert_int_equal(weft_dag_add_region(d, 0, bad, 1, NULL), WEFT_ENOTFOUND);
    assert_string_equal(weft_dag_last_error(d),
                        "add_region: no member node 7 (the DAG has 3 nodes)");
    assert_int_equal(weft_dag_add_region(d, 0, self, 2, NULL), WEFT_EDUPLICATE);
    assert_string_equal(weft_dag_last_error(d), "add_region: the gate 'g' (0) is among its members");
    assert_int_equal(weft_dag_edge_count(d), 0); /* nothing added on error */
    /* a node in two regions: refused at finalize, which can then be retried */
    uint32_t m2[1] = {2};
    assert_int_equal(weft_dag_add_region(d, 0, m, 2, NULL), WEFT_OK);
    assert_int_equal(weft_dag_add_region(d, 1, m2, 1, NULL), WEFT_OK);
    assert_int_equal(weft_dag_finalize(d), WEFT_EDUPLICATE);
    assert_string_equal(weft_dag_last_error(d),
                        "finalize: node (2) is a member of regions 0 and 1");
    assert_int_equal(weft_dag_destroy(d), WEFT_OK);
    /* nesting both ways: a cycle through the gates */
    d = three_nodes();
    uint32_t one[1] = {1}, zero[1] = {0};
    assert_int_equal(weft_dag_add_region(d, 0, one, 1, NULL), WEFT_OK);
    assert_int_equal(weft_dag_add_region(d, 1, zero, 1, NULL), WEFT_OK);
    assert_int_equal(weft_dag_finalize(d), WEFT_ECYCLE);
    assert_int_equal(weft_dag_destroy(d), WEFT_OK);
    /* finalized: no more regions */
    d = three_nodes();
    assert_int_equal(weft_dag_finalize(d), WEFT_OK);
    assert_int_equal(weft_dag_add_region(d, 0, m, 2, NULL), WEFT_ESTATE);
    assert_int_equal(weft_dag_destroy(d), WEFT_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_retire_1_2_4_workers),
        cmocka_unit_test(test_retire_after_failure),
        cmocka_unit_test(test_retire_profile),
        cmocka_unit_test(test_region_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
