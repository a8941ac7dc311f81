/* Randomized compiled-function runs (label stress): seeded random graphs of
 * elementwise ops and views (transposes, reshapes that view or copy,
 * reversed rows) over 384-element float64 tensors - large enough to go
 * through the buffer pool, not kept in their cells - compiled with fast_run
 * (in-place rewrites: destroyers on intermediates and views; one graph in
 * three without fusion, one in three in mode none), then called
 * repeatedly on 2 workers with fresh random inputs, alternating
 * caller-supplied and handed-over outputs. Every call's outputs must equal
 * the reference evaluator's on the original graph exactly (the rewrites
 * used here do not reassociate). This exercises the recycled view handles
 * and the pool under every aliasing pattern the generator reaches, under
 * TSan and ASan in the suite. Each function's memory plan is also checked
 * by brute force (memplan_check.h): values sharing arena memory are ordered
 * in every schedule, and a node writing over its input (slot reuse) is that
 * input's last reader in every one. The seed is printed; WEFT_SEED
 * overrides it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compile/memplan_check.h"
#include "weft/weft.h"

#ifdef WEFT_SANITIZED
#define N_GRAPHS 100
#else
#define N_GRAPHS 1000
#endif
#define N_IN 3
#define N_OUT 3
#define POOL 20
#define CALLS 6

/* The shapes every generated value has: 384 elements each. */
static const int64_t SHAPES[5][2] = {{8, 48}, {48, 8}, {16, 24}, {24, 16}, {384, 0}};
static const int NDIMS[5] = {2, 2, 2, 2, 1};

static uint64_t rng;
static size_t shared_pairs; /* arena overlaps seen, over all graphs */
static size_t slot_reuses;  /* nodes writing over an input (slot reuse), over all graphs */

static unsigned pick(unsigned n)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)((rng >> 33) % n);
}

typedef struct value {
    weft_var_t *v;
    int shape; /* index into SHAPES */
} value_t;

static value_t pick_of_shape(const value_t *pool, int n, int shape)
{
    int start = (int)pick((unsigned)n);
    for (int k = 0; k < n; k++)
        if (pool[(start + k) % n].shape == shape) return pool[(start + k) % n];
    return pool[start];
}

/* The transpose's shape index (8x48 <-> 48x8, 16x24 <-> 24x16), or -1. */
static int transposed(int shape)
{
    return shape < 4 ? shape ^ 1 : -1;
}

static value_t grow(weft_graph_t *g, const value_t *pool, int n)
{
    value_t a = pool[pick((unsigned)n)], r = {NULL, a.shape};
    static const weft_elemwise_kind_t bin[3] = {WEFT_ELEMWISE_ADD, WEFT_ELEMWISE_SUB,
                                                WEFT_ELEMWISE_MUL};
    switch (pick(6)) {
    case 0:
    case 1: {
        value_t b = pick_of_shape(pool, n, a.shape);
        if (b.shape != a.shape) b = a;
        assert_non_null(r.v = weft_binary(g, bin[pick(3)], a.v, b.v));
        break;
    }
    case 2:
        assert_non_null(r.v = weft_unary(g, pick(2) ? WEFT_ELEMWISE_TANH : WEFT_ELEMWISE_NEG, a.v));
        break;
    case 3:
        if (transposed(a.shape) < 0) return a;
        assert_non_null(r.v = weft_transpose(g, a.v));
        r.shape = transposed(a.shape);
        break;
    case 4:
        r.shape = (int)pick(5);
        assert_non_null(r.v = weft_reshape(g, a.v, NDIMS[r.shape], SHAPES[r.shape]));
        break;
    default: {
        weft_slice_t rev[1] = {WEFT_SLICE(WEFT_SLICE_NONE, WEFT_SLICE_NONE, -1)};
        assert_non_null(r.v = weft_subtensor(g, a.v, 1, rev));
        break;
    }
    }
    return r;
}

typedef struct case_ {
    weft_graph_t *g;
    weft_var_t *in[N_IN], *out[N_OUT];
    int out_shape[N_OUT];
} case_t;

static void build_case(case_t *c)
{
    assert_int_equal(weft_graph_create(NULL, &c->g), WEFT_OK);
    value_t pool[POOL];
    const weft_type_t *t;
    assert_int_equal(weft_type_tensor(c->g, WEFT_FLOAT64, 2, SHAPES[0], &t), WEFT_OK);
    for (int k = 0; k < N_IN; k++) {
        char name[8];
        snprintf(name, sizeof name, "x%d", k);
        assert_non_null(c->in[k] = weft_var_create(c->g, t, name));
        pool[k] = (value_t){c->in[k], 0};
    }
    int n = N_IN;
    for (; n < POOL; n++) pool[n] = grow(c->g, pool, n);
    for (int k = 0; k < N_OUT; k++) {
        value_t o = pool[N_IN + pick(POOL - N_IN)];
        c->out[k] = o.v;
        c->out_shape[k] = o.shape;
    }
}

static void fill_random(weft_tensor_t *t)
{
    double *d = weft_tensor_data(t);
    for (int e = 0; e < 384; e++) d[e] = (double)((int)pick(2001) - 1000) / 512.0;
}

/* One call: fresh inputs, outputs supplied or handed over (odd calls), all
 * equal to the evaluator's. */
static void check_call(case_t *c, weft_function_t *f, weft_tensor_t **args, int call)
{
    for (int k = 0; k < N_IN; k++) fill_random(args[k]);
    weft_tensor_t *want[N_OUT] = {NULL}, *got[N_OUT] = {NULL};
    assert_int_equal(weft_eval(c->g, N_IN, c->in, args, N_OUT, c->out, want), WEFT_OK);
    for (int k = 0; k < N_OUT && call % 2 == 0; k++) {
        int s = c->out_shape[k];
        assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, NDIMS[s], SHAPES[s], &got[k]), WEFT_OK);
    }
    assert_int_equal(weft_function_call(f, N_IN, args, N_OUT, got), WEFT_OK);
    for (int k = 0; k < N_OUT; k++) {
        bool same = false;
        assert_int_equal(weft_tensor_allclose(got[k], want[k], 0.0, 0.0, &same), WEFT_OK);
        if (!same) fail_msg("call %d output %d differs from the evaluator's", call, k);
        weft_tensor_release(got[k]);
        weft_tensor_release(want[k]);
    }
}

/* kind 0: fast_run; 1: without fusion, 2: mode none - more nodes and fresh
 * values, so more intermediates for the memory plan (fused, most values
 * live inside one loop; in place, most share a graph output's buffer). */
static void run_case(case_t *c, weft_pool_t *pool, int kind)
{
    static const char *const no_fusion[1] = {"fusion"};
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.pool = pool;
    o.n_exclude = kind == 1 ? 1 : 0;
    o.exclude = no_fusion;
    o.mode = kind == 2 ? "none" : NULL;
    weft_function_t *f = NULL;
    assert_int_equal(weft_function_compile(N_IN, c->in, N_OUT, c->out, 0, NULL, &o, &f),
                     WEFT_OK);
    weft_tensor_t *args[N_IN];
    for (int k = 0; k < N_IN; k++)
        assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, 2, SHAPES[0], &args[k]), WEFT_OK);
    for (int call = 0; call < CALLS; call++) check_call(c, f, args, call);
    size_t pairs = 0;
    assert_int_equal(memplan_check_function(f, &pairs), 0);
    shared_pairs += pairs;
    slot_reuses += memplan_check_reuses(f);
    for (int k = 0; k < N_IN; k++) weft_tensor_release(args[k]);
    assert_int_equal(weft_function_destroy(f), WEFT_OK);
}

static void test_function_stress_random_view_graphs_match_evaluator(void **state)
{
    (void)state;
    uint64_t seed = getenv("WEFT_SEED") ? strtoull(getenv("WEFT_SEED"), NULL, 10) : 20261122u;
    printf("test_function_stress seed=%llu graphs=%d\n", (unsigned long long)seed, N_GRAPHS);
    rng = seed;
    weft_pool_t *pool = NULL;
    assert_int_equal(weft_pool_create(2, NULL, &pool), WEFT_OK);
    for (int i = 0; i < N_GRAPHS; i++) {
        case_t c;
        build_case(&c);
        run_case(&c, pool, i % 3);
        weft_graph_destroy(c.g);
    }
    assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
    printf("test_function_stress arena_overlaps=%zu slot_reuses=%zu\n", shared_pairs,
           slot_reuses);
#ifndef WEFT_SANITIZED /* 100 graphs (sanitized) may all be too wide to share */
    assert_true(shared_pairs > 0); /* 20 with the default seed */
    assert_true(slot_reuses > 0); /* 62 with the default seed */
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_function_stress_random_view_graphs_match_evaluator),
    };
    return cmocka_run_group_tests_name("function_stress", tests, NULL, NULL);
}
