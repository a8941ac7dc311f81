/* The static memory plan (docs/execution.md §4.6): the planner against a
 * brute-force check on random DAGs, plans of compiled functions checked the
 * same way, parallel branches kept apart and run many times on 2 workers
 * (under TSan in the suite, a sharing mistake shows up as a race or a wrong
 * value), warm calls that allocate nothing (OpFromGraph nodes run without
 * inlining included) at 1 and 2 workers, re-planning when input shapes
 * change, and the pool fallback for values whose size only their kernel
 * knows. The random seed is printed; WEFT_SEED overrides it. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compile/compile_test_ops.h"
#include "compile/memplan_check.h"
#include "compile_int.h"
#include "support/alloc_count.h"
#include "weft/weft.h"

#ifdef WEFT_SANITIZED
#define REPS 200
#else
#define REPS 2000
#endif

static weft_graph_t *g;
static const int64_t S64[1] = {64}; /* 512 bytes: planned, not kept in its cell */
static uint64_t rng;

static unsigned pick(unsigned n)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)((rng >> 33) % n);
}

/* Element i of a contiguous float64 tensor. */
static void set_elem(weft_tensor_t *t, size_t i, double v)
{
    ((double *)weft_tensor_data(t))[i] = v;
}

static int setup(void **state)
{
    (void)state;
    return weft_graph_create(NULL, &g) == WEFT_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    weft_graph_destroy(g);
    return 0;
}

/* ---- the planner alone, on random DAGs ------------------------------------------ */

typedef struct rand_plan {
    uint32_t n_nodes;
    size_t ne, nv;
    uint64_t edges[600];
    weft__mp_value_t v[40];
    uint32_t readers[40][4];
    uint64_t bytes[40], off[40];
} rand_plan_t;

static void random_plan(rand_plan_t *p)
{
    p->n_nodes = 2 + pick(50);
    p->ne = 0;
    for (uint32_t a = 0; a < p->n_nodes; a++)
        for (uint32_t b = a + 1; b < p->n_nodes && p->ne < 600; b++)
            if (pick(8) == 0) p->edges[p->ne++] = (uint64_t)a << 32 | b;
    p->nv = 1 + pick(40);
    for (size_t i = 0; i < p->nv; i++) {
        uint32_t w = pick(p->n_nodes), nr = 1 + pick(4);
        for (uint32_t r = 0; r < nr; r++) /* readers after the writer; itself when last */
            p->readers[i][r] = w + 1 < p->n_nodes ? w + 1 + pick(p->n_nodes - w - 1) : w;
        p->v[i] = (weft__mp_value_t){w, nr, p->readers[i]};
        p->bytes[i] = pick(10) == 0 ? WEFT__MP_NONE : pick(5000);
    }
}

/* Every reader of a is a strict ancestor of b's writer. */
static bool before(const rand_plan_t *p, const uint8_t *reach, size_t a, size_t b)
{
    for (uint32_t r = 0; r < p->v[a].n_readers; r++)
        if (!reach[p->v[a].readers[r] * p->n_nodes + p->v[b].writer]) return false;
    return true;
}

/* Checks one plan; returns the overlapping pairs. sequential: the plan is
 * for the one schedule of a one-worker pool, node id order. */
static size_t check_plan(const rand_plan_t *p, const uint64_t *conflict, uint64_t arena,
                         bool sequential)
{
    static uint8_t reach[52 * 52];
    memplan_check_reach(p->n_nodes, p->edges, p->ne, reach);
    if (sequential)
        for (uint32_t a = 0; a < p->n_nodes; a++)
            for (uint32_t b = 0; b < p->n_nodes; b++) reach[a * p->n_nodes + b] = a < b;
    size_t cw = weft__memplan_words(p->nv), pairs = 0;
    for (size_t a = 0; a < p->nv; a++) {
        if (p->bytes[a] == WEFT__MP_NONE) {
            assert_true(p->off[a] == WEFT__MP_NONE);
            continue;
        }
        assert_int_equal(p->off[a] % 64, 0);
        assert_true(p->off[a] + p->bytes[a] <= arena);
        for (size_t b = 0; b < p->nv; b++) {
            if (b == a) continue;
            bool ordered = before(p, reach, a, b) || before(p, reach, b, a);
            bool bit = (conflict[a * cw + b / 64] >> (b % 64)) & 1;
            assert_int_equal(bit, !ordered); /* exactly the rule, no more */
            if (b < a || p->bytes[b] == WEFT__MP_NONE || !p->bytes[a] || !p->bytes[b]) continue;
            if (p->off[a] < p->off[b] + p->bytes[b] && p->off[b] < p->off[a] + p->bytes[a]) {
                pairs++;
                if (!ordered) fail_msg("values %zu and %zu overlap but are not ordered", a, b);
            }
        }
    }
    return pairs;
}

static void test_memplan_random_dags_match_brute_force(void **state)
{
    (void)state;
    static rand_plan_t p;
    size_t pairs = 0, smaller = 0;
    for (int t = 0; t < 4000; t++) {
        bool sequential = t % 2; /* odd rounds: the one-worker plan */
        if (!sequential) random_plan(&p);
        uint64_t *conflict = NULL, arena = 0, sum = 0;
        assert_int_equal(weft__memplan_conflicts(p.n_nodes, p.edges, p.ne, p.nv, p.v, sequential,
                                                 &conflict),
                         WEFT_OK);
        assert_int_equal(weft__memplan_place(p.nv, p.bytes, conflict, p.off, &arena), WEFT_OK);
        pairs += check_plan(&p, conflict, arena, sequential);
        for (size_t i = 0; i < p.nv; i++)
            if (p.bytes[i] != WEFT__MP_NONE) sum += (p.bytes[i] + 63) / 64 * 64;
        assert_true(arena <= sum);
        smaller += arena < sum;
        free(conflict);
    }
    assert_true(pairs > 1000); /* values did share memory */
    assert_true(smaller > 500);
}

/* ---- compiled functions ---------------------------------------------------------- */

/* mode NULL: fast_run; exclude: a rewrite or tag left out, or NULL. */
static weft_function_t *compile_mode(int n_out, weft_var_t *x, weft_var_t **out, int threads,
                                     bool profile, const char *mode, const char *exclude)
{
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.mode = mode;
    o.threads = (unsigned)threads;
    o.profile = profile;
    o.n_exclude = exclude != NULL;
    o.exclude = &exclude;
    weft_function_t *f = NULL;
    assert_int_equal(weft_function_compile(1, &x, (size_t)n_out, out, 0, NULL, &o, &f), WEFT_OK);
    return f;
}

static weft_function_t *compile(int n_out, weft_var_t *x, weft_var_t **out, int threads,
                                bool profile)
{
    return compile_mode(n_out, x, out, threads, profile, "none", NULL);
}

static void plan_sizes(weft_function_t *f, uint64_t *arena, uint64_t *seq)
{
    weft_profile_t *p;
    assert_int_equal(weft_profile_create(f, WEFT_PROFILE_LAST_CALL, &p), WEFT_OK);
    *arena = p->arena_bytes;
    *seq = p->sequential_peak_bytes;
    weft_profile_destroy(p);
}

/* a = 2x, b = 2x, c = 2a, d = 2b, e = c + d, compiled on `threads` workers
 * and called REPS times, every result exact. Returns the function. */
static weft_function_t *branches_run(int threads)
{
    weft_var_t *x = ct_var(g, "x", 1, S64);
    weft_var_t *a = ct_call(g, &ct_twice_class, NULL, 1, x, NULL);
    weft_var_t *b = ct_call(g, &ct_twice_class, NULL, 1, x, NULL);
    weft_var_t *c = ct_call(g, &ct_twice_class, NULL, 1, a, NULL);
    weft_var_t *d = ct_call(g, &ct_twice_class, NULL, 1, b, NULL);
    weft_var_t *e = ct_call(g, &ct_add_class, NULL, 2, c, d);
    weft_function_t *f = compile(1, x, &e, threads, true);
    weft_tensor_t *tx = ct_tensor(1, S64, 0.0), *ty = ct_tensor(1, S64, 0.0);
    for (int r = 0; r < REPS; r++) {
        set_elem(tx, 0, (double)r);
        assert_int_equal(weft_function_call(f, 1, &tx, 1, &ty), WEFT_OK);
        assert_true(weft_tensor_flat_get(ty, 0) == 8.0 * r);
        assert_true(weft_tensor_flat_get(ty, 63) == 8.0 * 63);
    }
    weft_tensor_release(tx);
    weft_tensor_release(ty);
    return f;
}

/* One worker runs a, b, c, d, e (id order): freeing after last use, d
 * could take a's memory (3 buffers). But on two workers d may run while c
 * still reads a: no two of a, b, c, d are ordered, so the plan keeps them
 * apart (4 buffers). */
static void test_memplan_parallel_branches_never_share(void **state)
{
    (void)state;
    weft_function_t *f = branches_run(2);
    uint64_t arena, seq;
    plan_sizes(f, &arena, &seq);
    assert_int_equal(arena, 4 * 512);
    assert_int_equal(seq, 3 * 512);
    size_t pairs = 1;
    assert_int_equal(memplan_check_function(f, &pairs), 0);
    assert_int_equal(pairs, 0);
    weft_function_destroy(f);
}

/* The same graph on one worker: the pool runs the nodes in id order, its
 * only schedule, so the plan may follow it: d takes a's memory, 3 buffers,
 * the sequential peak. Checked against id order. */
static void test_memplan_one_worker_plans_its_one_order(void **state)
{
    (void)state;
    weft_function_t *f = branches_run(1);
    uint64_t arena, seq;
    plan_sizes(f, &arena, &seq);
    assert_int_equal(arena, 3 * 512);
    assert_int_equal(seq, 3 * 512);
    size_t pairs = 0;
    assert_int_equal(memplan_check_function(f, &pairs), 0);
    assert_true(pairs > 0);
    weft_function_destroy(f);
}

/* A chain with a side branch joined late: v1 .. v7 in a line, s = 2 v1
 * read only by the final Add. s lives across the line; so does v1, whose
 * reader S may run at any point of it. Values of the line from v2 on share
 * two buffers: 4 in all. One worker freeing after last use needs 3. Checked
 * by brute force and run REPS times on 2 workers. */
static void test_memplan_chain_with_side_branch_shares_safely(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S64), *v = ct_call(g, &ct_twice_class, NULL, 1, x, NULL);
    weft_var_t *s = ct_call(g, &ct_twice_class, NULL, 1, v, NULL);
    for (int i = 0; i < 6; i++) v = ct_call(g, &ct_twice_class, NULL, 1, v, NULL);
    weft_var_t *y = ct_call(g, &ct_add_class, NULL, 2, v, s);
    weft_function_t *f = compile(1, x, &y, 2, true);
    weft_tensor_t *tx = ct_tensor(1, S64, 1.0), *ty = ct_tensor(1, S64, 0.0);
    for (int r = 0; r < REPS; r++) {
        set_elem(tx, 5, (double)r);
        assert_int_equal(weft_function_call(f, 1, &tx, 1, &ty), WEFT_OK);
        assert_true(weft_tensor_flat_get(ty, 5) == 128.0 * r + 4.0 * r);
        assert_true(weft_tensor_flat_get(ty, 0) == 128.0 + 4.0);
    }
    size_t pairs = 0;
    assert_int_equal(memplan_check_function(f, &pairs), 0);
    assert_true(pairs > 0);
    uint64_t arena, seq;
    plan_sizes(f, &arena, &seq);
    assert_int_equal(arena, 4 * 512);
    assert_int_equal(seq, 3 * 512);
    weft_tensor_release(tx);
    weft_tensor_release(ty);
    weft_function_destroy(f);
}

/* ---- slot reuse: the last reader writes over its input ------------------------------- */

/* reuses_input of the profile row of the (only) node of class cls. */
static int reuses(weft_function_t *f, const char *cls)
{
    weft_profile_t *p;
    int r = -2;
    assert_int_equal(weft_profile_create(f, WEFT_PROFILE_LAST_CALL, &p), WEFT_OK);
    for (size_t i = 0; i < p->n_applies; i++)
        if (strcmp(p->applies[i].op_class, cls) == 0) r = p->applies[i].reuses_input;
    weft_profile_destroy(p);
    return r;
}

/* Calls f (one output) and ref (n_ref outputs, the first f's) REPS times
 * with x[0] = r / 1000, checking that f's result has ref's bits. */
static void same_bits(weft_function_t *f, weft_function_t *ref, size_t n_ref)
{
    weft_tensor_t *tx = ct_tensor(1, S64, 0.25), *ty = NULL, *tr[2] = {NULL, NULL};
    for (int r = 0; r < REPS; r++) {
        set_elem(tx, 0, 0.001 * r);
        assert_int_equal(weft_function_call(f, 1, &tx, 1, &ty), WEFT_OK);
        assert_int_equal(weft_function_call(ref, 1, &tx, n_ref, tr), WEFT_OK);
        assert_memory_equal(weft_tensor_data(ty), weft_tensor_data(tr[0]), 512);
        weft_tensor_release(ty);
        ty = NULL;
        for (size_t k = 0; k < n_ref; k++) {
            weft_tensor_release(tr[k]);
            tr[k] = NULL;
        }
    }
    weft_tensor_release(tx);
}

/* h = 2x read by Tanh and Exp, y = Tanh(h) + Exp(h). On one worker Exp
 * runs after Tanh (id order), so it is h's last reader and writes over h:
 * 2 buffers (h/Exp, Tanh) instead of 3. On two workers Tanh and Exp may
 * run at once: neither may write over h (3 buffers). Same bits either way. */
static void test_memplan_reuse_fanout_one_worker_not_two(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S64), *h = weft_mul_scalar(g, x, 2.0);
    weft_var_t *y = weft_add(g, weft_tanh(g, h), weft_exp(g, h));
    weft_function_t *f1 = compile(1, x, &y, 1, true), *f2 = compile(1, x, &y, 2, true);
    same_bits(f1, f2, 1);
    uint64_t arena, seq;
    plan_sizes(f1, &arena, &seq);
    assert_int_equal(arena, 2 * 512);
    assert_int_equal(seq, 2 * 512);
    assert_int_equal(reuses(f1, "Exp"), 0);
    assert_int_equal(reuses(f1, "Tanh"), -1);
    plan_sizes(f2, &arena, &seq);
    assert_int_equal(arena, 3 * 512);
    assert_int_equal(reuses(f2, "Exp"), -1);
    assert_int_equal(reuses(f2, "Tanh"), -1);
    size_t pairs = 0;
    assert_int_equal(memplan_check_function(f1, &pairs), 0);
    assert_int_equal(memplan_check_function(f2, &pairs), 0);
    weft_function_destroy(f1);
    weft_function_destroy(f2);
}

/* h = 2x, a = Tanh(h), c = h + a, y = Exp(c): Add reads h after Tanh in
 * every schedule (it reads a), so even on two workers c goes over h (its
 * first candidate input): 2 buffers instead of 3. Run REPS times on 2
 * workers (TSan in the suite) against the same graph with h also an output,
 * where c goes over a instead. */
static void test_memplan_reuse_two_workers_when_last_reader_descends(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S64), *h = weft_mul_scalar(g, x, 2.0);
    weft_var_t *y = weft_exp(g, weft_add(g, h, weft_tanh(g, h)));
    weft_var_t *outs[2] = {y, h};
    weft_function_t *f = compile(1, x, &y, 2, true), *ref = compile(2, x, outs, 2, true);
    same_bits(f, ref, 2);
    uint64_t arena, seq;
    plan_sizes(f, &arena, &seq);
    assert_int_equal(arena, 2 * 512);
    assert_int_equal(reuses(f, "Add"), 0);
    /* h is an output there, never overwritten: Add takes a's memory */
    assert_int_equal(reuses(ref, "Add"), 1);
    plan_sizes(ref, &arena, &seq);
    assert_int_equal(arena, 512);
    assert_int_equal(memplan_check_function(f, NULL), 0);
    assert_int_equal(memplan_check_function(ref, NULL), 0);
    weft_function_destroy(f);
    weft_function_destroy(ref);
}

/* What is never overwritten, each case a wrong value if it were: a
 * function input (Tanh(x) on one worker, x read by nothing later), a
 * function output (h = 2x returned, Exp(h) its last reader), a value a
 * later node reads through a view (Exp(h^T) after Tanh(h)), and a value the
 * node itself also reads through a view (h + h^T: element (i, j) of the
 * result would overwrite h[i, j] before (j, i) reads it). A function
 * output is never written over an input either: only planned values are
 * (the last Mul of each graph keeps Exp's result an intermediate). */
static void test_memplan_reuse_never_inputs_outputs_or_views(void **state)
{
    (void)state;
    static const int64_t S88[2] = {8, 8};
    weft_var_t *x = ct_var(g, "x", 2, S88), *h = weft_mul_scalar(g, x, 2.0);
    weft_var_t *outs[4] = {weft_mul_scalar(g, weft_exp(g, weft_tanh(g, x)), 3.0), h,
                           weft_mul_scalar(g, weft_exp(g, h), 3.0), NULL};
    weft_function_t *fi = compile(1, x, &outs[0], 1, true), *fo = compile(2, x, &outs[1], 1, true);
    weft_var_t *t = weft_tanh(g, h), *e = weft_exp(g, weft_transpose(g, h));
    outs[3] = weft_add(g, t, e);
    weft_var_t *sym = weft_mul_scalar(g, weft_exp(g, weft_add(g, h, weft_transpose(g, h))), 3.0);
    weft_function_t *fv = compile(1, x, &outs[3], 1, true), *fs = compile(1, x, &sym, 1, true);
    weft_tensor_t *tx = ct_tensor(2, S88, 0.25), *ty[2] = {NULL, NULL};
    for (int i = 0; i < 64; i++) set_elem(tx, (size_t)i, 0.01 * i);
    assert_int_equal(weft_function_call(fi, 1, &tx, 1, ty), WEFT_OK);
    for (int i = 0; i < 64; i++) assert_true(weft_tensor_flat_get(tx, (size_t)i) == 0.01 * i);
    assert_int_equal(reuses(fi, "Tanh"), -1);
    assert_int_equal(reuses(fi, "Exp"), 0); /* over Tanh's result */
    weft_tensor_release(ty[0]);
    ty[0] = NULL;
    assert_int_equal(weft_function_call(fo, 1, &tx, 2, ty), WEFT_OK);
    for (int i = 0; i < 64; i++) assert_true(weft_tensor_flat_get(ty[0], (size_t)i) == 0.02 * i);
    assert_int_equal(reuses(fo, "Exp"), -1);
    weft_tensor_release(ty[0]);
    weft_tensor_release(ty[1]);
    ty[0] = ty[1] = NULL;
    assert_int_equal(weft_function_call(fv, 1, &tx, 1, ty), WEFT_OK);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++)
            assert_true(fabs(weft_tensor_flat_get(ty[0], (size_t)(8 * i + j)) -
                             (tanh(0.02 * (8 * i + j)) + exp(0.02 * (8 * j + i)))) <= 1e-15);
    assert_int_equal(reuses(fv, "Tanh"), -1);
    weft_tensor_release(ty[0]);
    ty[0] = NULL;
    assert_int_equal(weft_function_call(fs, 1, &tx, 1, ty), WEFT_OK);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++)
            assert_true(weft_tensor_flat_get(ty[0], (size_t)(8 * i + j)) ==
                        3.0 * exp(0.02 * (8 * i + j) + 0.02 * (8 * j + i)));
    assert_int_equal(reuses(fs, "Add"), -1);
    assert_int_equal(reuses(fs, "Exp"), 0);
    weft_tensor_release(ty[0]);
    weft_tensor_release(tx);
    weft_function_t *fs_[4] = {fi, fo, fv, fs};
    for (int k = 0; k < 4; k++) {
        assert_int_equal(memplan_check_function(fs_[k], NULL), 0);
        weft_function_destroy(fs_[k]);
    }
}

/* The profile's peak of intermediates counts an in-place value until its
 * last alias is done: h = 2x, t = Tanh(h) in place over h, s = Sin(x),
 * y = t + s (fast_run without fusion, one worker). t lives in h's buffer
 * while s is written: 2 buffers at once, as the arena says; counting the
 * destroyed h down at Tanh (the count before) said 1. */
static void test_memplan_peak_counts_in_place_values(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S64), *t = weft_tanh(g, weft_mul_scalar(g, x, 2.0));
    weft_var_t *y = weft_add(g, t, weft_sin(g, x));
    weft_function_t *f = compile_mode(1, x, &y, 1, true, NULL, "fusion");
    weft_tensor_t *tx = ct_tensor(1, S64, 0.25), *ty = NULL;
    assert_int_equal(weft_function_call(f, 1, &tx, 1, &ty), WEFT_OK);
    weft_profile_t *p;
    assert_int_equal(weft_profile_create(f, WEFT_PROFILE_LAST_CALL, &p), WEFT_OK);
    assert_string_equal(p->applies[1].name, "Tanh(Mul.out#0) destroys input 0");
    assert_int_equal(p->peak_bytes, 2 * 512);
    weft_profile_destroy(p);
    weft_tensor_release(ty);
    weft_tensor_release(tx);
    weft_function_destroy(f);
}

/* ---- warm calls allocate nothing --------------------------------------------------- */

/* y = 2 * OpFromGraph(2 * x)[0], z = OpFromGraph(2 * x)[1] with the
 * OpFromGraph not inlined: its first output is an intermediate of the outer
 * function (planned when large, kept in its cell when small), its inner
 * values come from the pool. */
static weft_function_t *ofg_function(const int64_t *shape, int threads)
{
    weft_var_t *a = ct_var(g, "a", 1, shape), *inner[2];
    inner[0] = ct_call(g, &ct_twice_class, NULL, 1, a, NULL);
    inner[1] = ct_call(g, &ct_add_class, NULL, 2, inner[0], a);
    weft_ofg_options_t oo = WEFT_OFG_OPTIONS_INIT;
    oo.inline_expand = false;
    const weft_op_t *op = NULL;
    assert_int_equal(weft_ofg_create(g, 1, &a, 2, inner, &oo, &op), WEFT_OK);
    weft_var_t *x = ct_var(g, "x", 1, shape), *x2 = ct_call(g, &ct_twice_class, NULL, 1, x, NULL);
    weft_apply_t *node = weft_apply_create(g, op, 1, &x2);
    assert_non_null(node);
    weft_var_t *out[2] = {ct_call(g, &ct_twice_class, NULL, 1, weft_apply_output(node, 0), NULL),
                          weft_apply_output(node, 1)};
    return compile(2, x, out, threads, false);
}

static void ofg_warm_calls_allocate_nothing(const int64_t *shape, int threads)
{
    weft_function_t *f = ofg_function(shape, threads);
    weft_tensor_t *tx = ct_tensor(1, shape, 1.0), *ty[2] = {ct_tensor(1, shape, 0.0),
                                                             ct_tensor(1, shape, 0.0)};
    for (int c = 0; c < 3; c++) assert_int_equal(weft_function_call(f, 1, &tx, 2, ty), WEFT_OK);
    alloc_count_start();
    for (int c = 0; c < 20; c++) assert_int_equal(weft_function_call(f, 1, &tx, 2, ty), WEFT_OK);
    assert_int_equal(alloc_count_stop(), 0);
    for (int e = 0; e < shape[0]; e++) {
        assert_true(weft_tensor_flat_get(ty[0], (size_t)e) == 8.0 * (1.0 + e));
        assert_true(weft_tensor_flat_get(ty[1], (size_t)e) == 6.0 * (1.0 + e));
    }
    assert_int_equal(memplan_check_function(f, NULL), 0);
    weft_tensor_release(tx);
    weft_tensor_release(ty[0]);
    weft_tensor_release(ty[1]);
    weft_function_destroy(f);
}

static const int64_t S4[1] = {4}; /* 32 bytes: kept in its cell */

static void test_memplan_opfromgraph_warm_calls_allocate_nothing_t1(void **state)
{
    (void)state;
    ofg_warm_calls_allocate_nothing(S64, 1);
    ofg_warm_calls_allocate_nothing(S4, 1);
}

static void test_memplan_opfromgraph_warm_calls_allocate_nothing_t2(void **state)
{
    (void)state;
    ofg_warm_calls_allocate_nothing(S64, 2);
    ofg_warm_calls_allocate_nothing(S4, 2);
}

/* A chain on a vector of unknown length: the first call for a length
 * measures the intermediates (the pool serves them), the next plans them;
 * then calls allocate nothing. A new length re-plans once. */
static void dynamic_chain(int threads)
{
    const int64_t dyn[1] = {-1};
    weft_var_t *x = ct_var(g, "x", 1, dyn), *v = x;
    for (int i = 0; i < 5; i++) v = ct_call(g, &ct_twice_class, NULL, 1, v, NULL);
    weft_function_t *f = compile(1, x, &v, threads, true);
    const int64_t lens[3] = {64, 100, 64};
    for (int l = 0; l < 3; l++) {
        weft_tensor_t *tx = ct_tensor(1, &lens[l], 1.0), *ty = ct_tensor(1, &lens[l], 0.0);
        for (int c = 0; c < 2; c++) assert_int_equal(weft_function_call(f, 1, &tx, 1, &ty), WEFT_OK);
        uint64_t arena, seq;
        plan_sizes(f, &arena, &seq);
        assert_int_equal(arena, 2 * (((uint64_t)lens[l] * 8 + 63) / 64 * 64));
        assert_int_equal(seq, arena);
        alloc_count_start();
        for (int c = 0; c < 10; c++) assert_int_equal(weft_function_call(f, 1, &tx, 1, &ty), WEFT_OK);
        assert_int_equal(alloc_count_stop(), 0);
        assert_true(weft_tensor_flat_get(ty, (size_t)lens[l] - 1) == 32.0 * (double)lens[l]);
        assert_int_equal(memplan_check_function(f, NULL), 0);
        weft_tensor_release(tx);
        weft_tensor_release(ty);
    }
    weft_function_destroy(f);
}

static void test_memplan_dynamic_shapes_replan_t1(void **state)
{
    (void)state;
    dynamic_chain(1);
}

static void test_memplan_dynamic_shapes_replan_t2(void **state)
{
    (void)state;
    dynamic_chain(2);
}

/* Head(x): 2 * x[0 .. n) with n = x[0] (clamped to x's length): a size only
 * the kernel knows, whatever the input shapes. */
static weft_status_t head_make_node(weft_graph_t *gr, const weft_op_t *op, size_t n_in,
                                    weft_var_t *const *in, size_t *n_out,
                                    const weft_type_t **out)
{
    (void)op;
    (void)n_in;
    (void)in;
    const int64_t dyn[1] = {-1};
    *n_out = 1;
    return weft_type_tensor(gr, WEFT_FLOAT64, 1, dyn, &out[0]);
}

static weft_status_t head_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                  weft_tensor_t **out, weft_kernel_ctx_t *ctx)
{
    (void)node;
    int64_t len = weft_tensor_dim(in[0], 0), n = (int64_t)weft_tensor_flat_get(in[0], 0);
    n = n < 0 ? 0 : n > len ? len : n;
    weft_status_t st = weft_kernel_alloc_output(ctx, &out[0], WEFT_FLOAT64, 1, &n);
    for (int64_t i = 0; st == WEFT_OK && i < n; i++)
        ((double *)weft_tensor_data(out[0]))[i] = 2.0 * weft_tensor_flat_get(in[0], (size_t)i);
    return st;
}

static const weft_op_class_t head_class = {
    .size = sizeof(weft_op_class_t),
    .name = "Head",
    .make_node = head_make_node,
    .perform = head_perform,
};

/* y = Twice(Head(x)): Head's output length follows x[0]. A call whose
 * length differs from the plan's leaves the value to the pool (results stay
 * exact); the values of known size stay planned and checked. */
static void test_memplan_value_sized_by_its_kernel_falls_back_to_pool(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S64), *h = ct_call(g, &head_class, NULL, 1, x, NULL);
    weft_var_t *x2 = ct_call(g, &ct_twice_class, NULL, 1, x, NULL);
    weft_var_t *y[2] = {ct_call(g, &ct_twice_class, NULL, 1, h, NULL),
                        ct_call(g, &ct_twice_class, NULL, 1, x2, NULL)};
    weft_function_t *f = compile(2, x, y, 2, false);
    weft_tensor_t *tx = ct_tensor(1, S64, 1.0);
    for (int r = 0; r < 50; r++) {
        double n = (double)(r % 7) * 9;
        set_elem(tx, 0, n);
        weft_tensor_t *ty[2] = {NULL, NULL};
        assert_int_equal(weft_function_call(f, 1, &tx, 2, ty), WEFT_OK);
        assert_int_equal(weft_tensor_dim(ty[0], 0), (int64_t)n);
        for (int64_t i = 1; i < (int64_t)n; i++)
            assert_true(weft_tensor_flat_get(ty[0], (size_t)i) == 4.0 * (1.0 + (double)i));
        assert_true(weft_tensor_flat_get(ty[1], 63) == 4.0 * 64.0);
        weft_tensor_release(ty[0]);
        weft_tensor_release(ty[1]);
    }
    assert_int_equal(memplan_check_function(f, NULL), 0);
    weft_tensor_release(tx);
    weft_function_destroy(f);
}

int main(void)
{
    uint64_t seed = getenv("WEFT_SEED") ? strtoull(getenv("WEFT_SEED"), NULL, 10) : 15u;
    printf("test_memplan seed=%llu\n", (unsigned long long)seed);
    rng = seed;
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memplan_random_dags_match_brute_force),
        T(test_memplan_parallel_branches_never_share),
        T(test_memplan_one_worker_plans_its_one_order),
        T(test_memplan_chain_with_side_branch_shares_safely),
        T(test_memplan_reuse_fanout_one_worker_not_two),
        T(test_memplan_reuse_two_workers_when_last_reader_descends),
        T(test_memplan_reuse_never_inputs_outputs_or_views),
        T(test_memplan_peak_counts_in_place_values),
        T(test_memplan_opfromgraph_warm_calls_allocate_nothing_t1),
        T(test_memplan_opfromgraph_warm_calls_allocate_nothing_t2),
        T(test_memplan_dynamic_shapes_replan_t1),
        T(test_memplan_dynamic_shapes_replan_t2),
        T(test_memplan_value_sized_by_its_kernel_falls_back_to_pool),
    };
    return cmocka_run_group_tests_name("memplan", tests, NULL, NULL);
}
