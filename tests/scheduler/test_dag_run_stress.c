/* Randomized stress (label stress): 1000 seeded random DAGs (random
 * topological order, mixed fan-in/fan-out including nodes above the batching
 * thresholds), each run repeatedly at T=1, 2, 4 and 8, checking that every
 * node ran exactly once and after all of its predecessors. The seed is fixed
 * and printed; set WEFT_STRESS_SEED to replay another. */
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

#ifdef WEFT_SANITIZED
#define STRESS_MAX_NODES 120u
#define STRESS_REPS 2
#else
#define STRESS_MAX_NODES 400u
#define STRESS_REPS 4
#endif
#define STRESS_DAGS 1000

static const int thread_counts[] = { 1, 2, 4, 8 };

static int has_edge(const tgraph_t *g, uint32_t a, uint32_t b)
{
    for (size_t e = 0; e < g->ne; e++)
        if (g->from[e] == a && g->to[e] == b) return 1;
    return 0;
}

/* A random DAG: nodes placed in a random order (perm), edges only from an
 * earlier to a later position; about half of the larger DAGs also get a hub
 * with in-degree >= 64 and a source with out-degree >= 64. */
static void random_dag(tgraph_t *g, uint64_t *rng)
{
    memset(g, 0, sizeof *g);
    g->n = 1 + (uint32_t)(trng(rng) % STRESS_MAX_NODES);
    uint32_t *perm = malloc(g->n * sizeof *perm);
    for (uint32_t i = 0; i < g->n; i++) perm[i] = i;
    for (uint32_t i = g->n; i > 1; i--) {
        uint32_t j = (uint32_t)(trng(rng) % i), t = perm[i - 1];
        perm[i - 1] = perm[j];
        perm[j] = t;
    }
    uint32_t density = (uint32_t)(trng(rng) % 5);
    for (uint32_t i = 1; i < g->n; i++) {
        uint32_t k = (uint32_t)(trng(rng) % (density + 1));
        size_t first = g->ne;
        for (uint32_t j = 0; j < k; j++) {
            uint32_t p = perm[trng(rng) % i];
            int dup = 0;
            for (size_t e = first; e < g->ne; e++) dup |= g->from[e] == p;
            if (!dup) tgraph_edge(g, p, perm[i]);
        }
    }
    if (g->n > 100 && trng(rng) % 2 == 0) { /* hubs */
        uint32_t hub = perm[g->n - 1], src = perm[0];
        for (uint32_t i = 1; i < g->n - 1; i++) {
            if (!has_edge(g, perm[i], hub)) tgraph_edge(g, perm[i], hub);
            if (!has_edge(g, src, perm[i])) tgraph_edge(g, src, perm[i]);
        }
    }
    free(perm);
}

static void test_dag_run_1000_random_dags_run_once_in_order_at_1_2_4_8_threads(void **state)
{
    (void)state;
    uint64_t seed = 20261122;
    const char *env = getenv("WEFT_STRESS_SEED");
    if (env) seed = strtoull(env, NULL, 10);
    printf("dag stress: seed=%llu dags=%d max_nodes=%u reps=%d\n", (unsigned long long)seed,
           STRESS_DAGS, STRESS_MAX_NODES, STRESS_REPS);
    fflush(stdout);
    weft_pool_t *pools[4];
    for (int k = 0; k < 4; k++)
        assert_int_equal(weft_pool_create(thread_counts[k], NULL, &pools[k]), WEFT_OK);
    uint64_t rng = seed;
    for (int d = 0; d < STRESS_DAGS; d++) {
        tgraph_t g;
        random_dag(&g, &rng);
        weft_dag_t *dag = NULL;
        assert_int_equal(tgraph_build(&g, &dag), WEFT_OK);
        for (int k = 0; k < 4; k++) {
            weft_dag_run_t *run;
            assert_int_equal(weft_dag_run_create(dag, pools[k], NULL, &run), WEFT_OK);
            trec_t r;
            trec_init(&r, g.n, thread_counts[k]);
            for (int rep = 0; rep < STRESS_REPS; rep++) {
                trec_reset(&r);
                assert_int_equal(weft_dag_run_execute(run, &r), WEFT_OK);
                if (trec_check(&r, &g))
                    fail_msg("dag %d (seed %llu) T=%d rep %d", d, (unsigned long long)seed,
                             thread_counts[k], rep);
            }
            trec_fini(&r);
            assert_int_equal(weft_dag_run_destroy(run), WEFT_OK);
        }
        assert_int_equal(weft_dag_destroy(dag), WEFT_OK);
        tgraph_free(&g);
    }
    for (int k = 0; k < 4; k++) assert_int_equal(weft_pool_destroy(pools[k]), WEFT_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dag_run_1000_random_dags_run_once_in_order_at_1_2_4_8_threads),
    };
    return cmocka_run_group_tests_name("dag_run_stress", tests, NULL, NULL);
}
