/* Random graphs of IfElses (label stress): seeded graphs mixing elementwise
 * ops (which fast_run fuses and makes in place) with IfElses over input and
 * computed conditions, nested through their branches and their conditions,
 * compiled in modes none and fast_run on 1, 2 and 4 workers and called with
 * every combination of condition values, against weft_eval (the same bits
 * in mode none; within 1e-12 in fast_run, whose fusion may reassociate
 * nothing but is not promised bitwise). Under ThreadSanitizer a skipped
 * node that still touched memory, or a guard read before its condition was
 * written, is a data race. Each function's memory plan is checked by brute
 * force as well (memplan_check.h): skipping nodes must not need another
 * plan. On 2 and 4 workers the untaken branches are retired in bulk by
 * their gates (gate.c): the run counts them and asserts some were. After
 * each call the state is checked to be as the next call needs it (the
 * reset plan, reset_plan.c: countdowns, owned cells, guard memos). The
 * seed is printed; WEFT_SEED replays one. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "compile/memplan_check.h"
#include "compile_int.h"
#include "weft/weft.h"

#define LEN 64 /* 512 bytes: planned in the arena, not kept in cells */
#define MAX_POOL 96

typedef struct rng {
    uint64_t s;
} rng_t;

static uint64_t next(rng_t *r)
{
    r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
    return r->s >> 33;
}

static size_t pick(rng_t *r, size_t n)
{
    return (size_t)(next(r) % n);
}

typedef struct gen {
    weft_graph_t *g;
    rng_t r;
    weft_var_t *vec[MAX_POOL], *sc[MAX_POOL];
    size_t n_vec, n_sc;
    weft_var_t *in[4]; /* x0, x1 (vectors), c0, c1 (0-d) */
} gen_t;

static weft_var_t *input(weft_graph_t *g, const char *name, int nd)
{
    const weft_type_t *t;
    const int64_t s[1] = {LEN};
    assert_int_equal(weft_type_tensor(g, WEFT_FLOAT64, nd, s, &t), WEFT_OK);
    weft_var_t *v = weft_var_create(g, t, name);
    assert_non_null(v);
    return v;
}

/* A recent-biased pick from a pool, so that graphs are deep. */
static weft_var_t *recent(gen_t *q, weft_var_t **pool, size_t n)
{
    size_t back = pick(&q->r, n < 6 ? n : 6);
    return pool[n - 1 - back];
}

static weft_var_t *any_cond(gen_t *q)
{
    return recent(q, q->sc, q->n_sc);
}

/* One new variable in pool `pool` (vectors or scalars). */
static weft_var_t *one_op(gen_t *q, weft_var_t **pool, size_t n)
{
    weft_graph_t *g = q->g;
    weft_var_t *a = recent(q, pool, n), *b = pool[pick(&q->r, n)];
    switch (pick(&q->r, 6)) {
    case 0: return weft_add(g, a, b);
    case 1: return weft_mul(g, a, weft_tanh(g, b));
    case 2: return weft_sub(g, weft_neg(g, a), b);
    case 3: return weft_tanh(g, a);
    default: return weft_ifelse1(g, any_cond(q), a, b);
    }
}

static void build(gen_t *q, size_t n_nodes)
{
    q->in[0] = q->vec[q->n_vec++] = input(q->g, "x0", 1);
    q->in[1] = q->vec[q->n_vec++] = input(q->g, "x1", 1);
    q->in[2] = q->sc[q->n_sc++] = input(q->g, "c0", 0);
    q->in[3] = q->sc[q->n_sc++] = input(q->g, "c1", 0);
    for (size_t i = 0; i < n_nodes && q->n_vec < MAX_POOL && q->n_sc < MAX_POOL; i++) {
        bool scalar = pick(&q->r, 4) == 0;
        weft_var_t *v = scalar ? one_op(q, q->sc, q->n_sc) : one_op(q, q->vec, q->n_vec);
        assert_non_null(v);
        if (scalar) q->sc[q->n_sc++] = v;
        else q->vec[q->n_vec++] = v;
    }
}

static weft_tensor_t *value(rng_t *r, int nd)
{
    const int64_t s[1] = {LEN};
    weft_tensor_t *t = NULL;
    assert_int_equal(weft_tensor_zeros(WEFT_FLOAT64, nd, s, &t), WEFT_OK);
    double *d = weft_tensor_data(t);
    for (size_t i = 0; i < weft_tensor_size(t); i++) d[i] = (double)(int)pick(r, 7) * 0.25 - 0.75;
    return t;
}

static void compare(const weft_tensor_t *got, const weft_tensor_t *want, bool exact)
{
    assert_int_equal(weft_tensor_size(got), weft_tensor_size(want));
    for (size_t i = 0; i < weft_tensor_size(want); i++) {
        double a = weft_tensor_flat_get(got, i), b = weft_tensor_flat_get(want, i);
        if (exact) assert_memory_equal(&a, &b, sizeof a);
        else assert_true(fabs(a - b) <= 1e-12 * (1.0 + fabs(b)));
    }
}

/* Every (c0, c1) in {-1, 0, 1}^2 with random x0, x1, compiled vs eval. */
static size_t shared_pairs, slot_reuses, gates_seen, retires_seen;

/* A call leaves its state as the next call needs it, having restored only
 * what ran or was left by a branch not taken (reset_plan.c): every
 * countdown at its reader count, every owned cell empty (or holding its
 * arena handle), every guard memo cleared. */
static void check_state_reset(const weft_function_t *f)
{
    for (const weft__call_state_t *cs = f->all_states; cs; cs = cs->next_all) {
        for (uint32_t s = 0; s < f->n_slots; s++) {
            assert_int_equal(atomic_load(&cs->countdown[s]), f->countdown_init[s]);
            if (f->slot_kind[s] == WEFT__SLOT_OWNED)
                assert_true(cs->cells[s] == NULL || cs->cells[s] == cs->arena_h[s]);
        }
        for (uint32_t k = 0; k < f->n_guard_memo; k++)
            assert_int_equal(atomic_load(&cs->guard_memo[k]), 0);
    }
}

static void check_graph(gen_t *q, weft_var_t *const *outs, size_t n_out)
{
    static const char *modes[2] = {"none", "fast_run"};
    static const int workers[3] = {1, 2, 4};
    weft_tensor_t *vals[4] = {value(&q->r, 1), value(&q->r, 1), NULL, NULL};
    for (int m = 0; m < 2; m++)
        for (int w = 0; w < 3; w++) {
            weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
            o.mode = modes[m];
            o.threads = workers[w];
            weft_function_t *f = NULL;
            weft_status_t st = weft_function_compile(4, q->in, n_out, outs, 0, NULL, &o, &f);
            if (st != WEFT_OK) fprintf(stderr, "%s\n", weft_function_last_error(f));
            assert_int_equal(st, WEFT_OK);
            for (int c = 0; c < 9; c++) {
                vals[2] = NULL;
                assert_int_equal(weft_tensor_full(WEFT_FLOAT64, 0, NULL, c / 3 - 1, &vals[2]), WEFT_OK);
                assert_int_equal(weft_tensor_full(WEFT_FLOAT64, 0, NULL, c % 3 - 1, &vals[3]), WEFT_OK);
                weft_tensor_t *want[4] = {0}, *got[4] = {0};
                assert_int_equal(weft_eval(q->g, 4, q->in, vals, n_out, outs, want), WEFT_OK);
                for (int rep = 0; rep < 3; rep++) {
                    assert_int_equal(weft_function_call(f, 4, vals, n_out, got), WEFT_OK);
                    check_state_reset(f);
                    for (size_t k = 0; k < n_out; k++) {
                        compare(got[k], want[k], m == 0);
                        weft_tensor_release(got[k]);
                        got[k] = NULL;
                    }
                }
                for (size_t k = 0; k < n_out; k++) weft_tensor_release(want[k]);
                weft_tensor_release(vals[2]);
                weft_tensor_release(vals[3]);
            }
            /* bulk retirement (gate.c): gates only on 2+ workers */
            if (workers[w] == 1) assert_int_equal(f->n_gates, 0);
            gates_seen += f->n_gates;
            retires_seen += atomic_load(&f->gate_retires);
            size_t pairs = 0;
            assert_int_equal(memplan_check_function(f, &pairs), 0);
            shared_pairs += pairs;
            slot_reuses += memplan_check_reuses(f);
            weft_function_destroy(f);
        }
    weft_tensor_release(vals[0]);
    weft_tensor_release(vals[1]);
}

static void test_random_ifelse_graphs(void **state)
{
    (void)state;
    const char *env = getenv("WEFT_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 0) : 20261124u;
    int graphs = env ? 1 : 150;
    printf("test_ifelse_stress: seed %llu (set WEFT_SEED to replay one graph)\n",
           (unsigned long long)seed);
    for (int k = 0; k < graphs; k++) {
        gen_t q = {.r = {seed + (uint64_t)k}};
        assert_int_equal(weft_graph_create(NULL, &q.g), WEFT_OK);
        build(&q, 12 + pick(&q.r, 30));
        weft_var_t *outs[3] = {q.vec[q.n_vec - 1], q.sc[q.n_sc - 1],
                               q.vec[pick(&q.r, q.n_vec)]};
        size_t n_out = 1 + pick(&q.r, 3);
        if (outs[n_out - 1] == q.in[0] || outs[n_out - 1] == q.in[1]) n_out = 1;
        check_graph(&q, outs, n_out);
        weft_graph_destroy(q.g);
    }
    printf("test_ifelse_stress: %zu arena sharings, %zu slot reuses checked, %zu gates, "
           "%zu regions retired in bulk\n", shared_pairs, slot_reuses, gates_seen, retires_seen);
    if (!env) assert_true(shared_pairs > 0 && slot_reuses > 0 && gates_seen > 0 && retires_seen > 0);
}

/* y = IfElse(c, exp(log(x)) + z, -x + s) and y2 = z + z with s = x + x and
 * z = x * x, checked for NaN: a call failing in the then branch (log of a
 * negative x) leaves the state reset in full (z was made but its then
 * reader never ran, under a guard that held), and the calls after it, on
 * either side, are right. */
static void check_after_failure(int threads)
{
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    weft_var_t *x = input(g, "x", 1), *c = input(g, "c", 0), *sv = weft_add(g, x, x);
    weft_var_t *z = weft_mul(g, x, x);
    weft_var_t *y[2] = {weft_ifelse1(g, c, weft_add(g, weft_exp(g, weft_log(g, x)), z),
                                     weft_add(g, weft_neg(g, x), sv)),
                        weft_add(g, z, z)};
    assert_non_null(y[0]);
    weft_var_t *in[2] = {x, c};
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.mode = "none";
    o.threads = threads;
    o.nan_check = true;
    weft_function_t *f = NULL;
    assert_int_equal(weft_function_compile(2, in, 2, y, 0, NULL, &o, &f), WEFT_OK);
    const int64_t len = LEN;
    weft_tensor_t *xs[2] = {NULL, NULL}, *cs[2] = {NULL, NULL};
    assert_int_equal(weft_tensor_full(WEFT_FLOAT64, 1, &len, 0.5, &xs[0]), WEFT_OK);
    assert_int_equal(weft_tensor_full(WEFT_FLOAT64, 1, &len, -1.0, &xs[1]), WEFT_OK);
    assert_int_equal(weft_tensor_full(WEFT_FLOAT64, 0, NULL, 0.0, &cs[0]), WEFT_OK);
    assert_int_equal(weft_tensor_full(WEFT_FLOAT64, 0, NULL, 1.0, &cs[1]), WEFT_OK);
    for (int rep = 0; rep < 6; rep++) {
        weft_tensor_t *bad[2] = {xs[1], cs[1]}, *out[2] = {NULL, NULL};
        assert_int_equal(weft_function_call(f, 2, bad, 2, out), WEFT_ENAN);
        assert_null(out[0]);
        check_state_reset(f);
        for (int k = 0; k < 2; k++) {
            weft_tensor_t *args[2] = {xs[0], cs[(rep + k) % 2]};
            assert_int_equal(weft_function_call(f, 2, args, 2, out), WEFT_OK);
            check_state_reset(f);
            double want = (rep + k) % 2 ? 0.75 : 0.5;
            for (int64_t i = 0; i < LEN; i++) {
                assert_true(fabs(weft_tensor_flat_get(out[0], i) - want) < 1e-12);
                assert_true(weft_tensor_flat_get(out[1], i) == 0.5);
            }
            weft_tensor_release(out[0]);
            weft_tensor_release(out[1]);
            out[0] = out[1] = NULL;
        }
    }
    for (int k = 0; k < 2; k++) {
        weft_tensor_release(xs[k]);
        weft_tensor_release(cs[k]);
    }
    weft_function_destroy(f);
    weft_graph_destroy(g);
}

static void test_reset_after_failure(void **state)
{
    (void)state;
    for (int t = 1; t <= 2; t++) check_after_failure(t);
}

/* y = IfElse(c, tanh(x), exp(x)) in fast_run (as_view: y views the then
 * side): with a caller-supplied output the IfElse writes the side taken
 * into the caller's tensor, which delivery then leaves as it is - one copy
 * of the else value instead of two (lib/compile/direct_out.c). */
static void check_direct_ifelse(int threads)
{
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    weft_var_t *x = input(g, "x", 1), *c = input(g, "c", 0);
    weft_var_t *y = weft_ifelse1(g, c, weft_tanh(g, x), weft_exp(g, x)), *in[2] = {x, c};
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.threads = threads;
    weft_function_t *f = NULL;
    assert_int_equal(weft_function_compile(2, in, 1, &y, 0, NULL, &o, &f), WEFT_OK);
    const weft_op_alias_t *e;
    size_t nv = 0, n_ifelse = 0;
    for (uint32_t i = 0; i < f->n_nodes; i++)
        if (strcmp(weft_op_name(weft_apply_op(f->nodes[i].apply)), "IfElse") == 0) {
            weft_op_view_map(weft_apply_op(f->nodes[i].apply), &e, &nv);
            n_ifelse++;
        }
    assert_int_equal(n_ifelse, 1);
    assert_int_equal(nv, 1);
    const int64_t len = LEN;
    weft_tensor_t *xv = NULL, *cv[2] = {NULL, NULL}, *out = NULL;
    assert_int_equal(weft_tensor_full(WEFT_FLOAT64, 1, &len, 0.5, &xv), WEFT_OK);
    assert_int_equal(weft_tensor_full(WEFT_FLOAT64, 0, NULL, 0.0, &cv[0]), WEFT_OK);
    assert_int_equal(weft_tensor_full(WEFT_FLOAT64, 0, NULL, 1.0, &cv[1]), WEFT_OK);
    assert_int_equal(weft_tensor_zeros(WEFT_FLOAT64, 1, &len, &out), WEFT_OK);
    for (int k = 0; k < 6; k++) {
        weft_tensor_t *args[2] = {xv, cv[k % 2]}, *given = out;
        assert_int_equal(weft_function_call(f, 2, args, 1, &out), WEFT_OK);
        assert_ptr_equal(out, given);
        double want = k % 2 ? tanh(0.5) : exp(0.5);
        for (int64_t i = 0; i < LEN; i++) assert_true(weft_tensor_flat_get(out, i) == want);
        check_state_reset(f);
    }
    assert_int_equal(atomic_load(&f->out_direct), 6);
    assert_int_equal(atomic_load(&f->out_copies), 0);
    weft_tensor_release(xv);
    weft_tensor_release(cv[0]);
    weft_tensor_release(cv[1]);
    weft_tensor_release(out);
    weft_function_destroy(f);
    weft_graph_destroy(g);
}

static void test_direct_ifelse_output(void **state)
{
    (void)state;
    for (int t = 1; t <= 2; t++) check_direct_ifelse(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_ifelse_graphs),
        cmocka_unit_test(test_reset_after_failure),
        cmocka_unit_test(test_direct_ifelse_output),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
