/* IfElse in compiled functions and the evaluator (docs/control-flow.md):
 * exact values of both branches at 1, 2 and 4 workers, the branch not
 * taken neither runs (Counted ops) nor allocates (the process's
 * allocations, counted), shared nodes run once, nested IfElses, guards
 * that fall back to eager, in-place nodes inside branches, the profile's
 * skips, and the constructor's errors. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "compile_test_ops.h"
#include "support/alloc_count.h"

static weft_graph_t *g;
static const int64_t S64[1] = {64}; /* 512 bytes: not a kept slot */
static const int WORKERS[3] = {1, 2, 4};

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

static weft_var_t *cond_var(const char *name)
{
    return ct_var(g, name, 0, NULL);
}

static weft_tensor_t *scalar(double v)
{
    weft_tensor_t *t = NULL;
    assert_int_equal(weft_tensor_full(WEFT_FLOAT64, 0, NULL, v, &t), WEFT_OK);
    return t;
}

static weft_function_t *compile(size_t n_in, weft_var_t *const *in, size_t n_out,
                                weft_var_t *const *out, int threads, const char *mode,
                                bool profile)
{
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.mode = mode;
    o.threads = threads;
    o.profile = profile;
    o.accept_inplace = true;
    weft_function_t *f = NULL;
    weft_status_t st = weft_function_compile(n_in, in, n_out, out, 0, NULL, &o, &f);
    if (st != WEFT_OK) fprintf(stderr, "compile: %s\n", weft_function_last_error(f));
    assert_int_equal(st, WEFT_OK);
    return f;
}

static void expect_ramp(const weft_tensor_t *t, double scale, double base)
{
    assert_non_null(t);
    assert_int_equal(weft_tensor_size(t), 64);
    for (size_t i = 0; i < 64; i++)
        assert_true(weft_tensor_flat_get(t, i) == scale * (base + (double)i));
}

/* y = IfElse(c, Counted(Twice(x)), Add(x, x) + ... ) with x = 1, 2, ..., 64:
 * then gives 2x through a Counted node, else 3x through another. */
typedef struct two_branch {
    weft_var_t *x, *c, *y;
} two_branch_t;

static two_branch_t two_branch(void)
{
    two_branch_t b;
    b.x = ct_var(g, "x", 1, S64);
    b.c = cond_var("c");
    weft_var_t *t = ct_call(g, &ct_counted_class, NULL, 1,
                            ct_call(g, &ct_twice_class, NULL, 1, b.x, NULL), NULL);
    weft_var_t *e = ct_call(g, &ct_counted_class, NULL, 1,
                            ct_call(g, &ct_add_class, NULL, 2,
                                    ct_call(g, &ct_add_class, NULL, 2, b.x, b.x), b.x),
                            NULL);
    b.y = weft_ifelse1(g, b.c, t, e);
    assert_non_null(b.y);
    return b;
}

static void test_values_both_branches(void **state)
{
    (void)state;
    two_branch_t b = two_branch();
    weft_var_t *in[2] = {b.x, b.c};
    weft_tensor_t *xv = ct_tensor(1, S64, 1.0);
    for (int w = 0; w < 3; w++) {
        weft_function_t *f = compile(2, in, 1, &b.y, WORKERS[w], NULL, false);
        for (int rep = 0; rep < 3; rep++)
            for (int taken = 0; taken < 2; taken++) {
                weft_tensor_t *cv = scalar(taken ? -0.5 : 0.0), *args[2] = {xv, cv}, *out = NULL;
                atomic_store(&ct_counted_runs, 0);
                assert_int_equal(weft_function_call(f, 2, args, 1, &out), WEFT_OK);
                expect_ramp(out, taken ? 2.0 : 3.0, 1.0);
                /* one Counted per branch: only the taken one ran */
                assert_int_equal(atomic_load(&ct_counted_runs), 1);
                weft_tensor_release(out);
                weft_tensor_release(cv);
            }
        weft_function_destroy(f);
    }
    weft_tensor_release(xv);
}

/* The evaluator is lazy too. */
static void test_eval_lazy(void **state)
{
    (void)state;
    two_branch_t b = two_branch();
    weft_var_t *in[2] = {b.x, b.c};
    weft_tensor_t *xv = ct_tensor(1, S64, 1.0);
    for (int taken = 0; taken < 2; taken++) {
        weft_tensor_t *cv = scalar(taken ? 1.0 : 0.0), *args[2] = {xv, cv}, *out = NULL;
        atomic_store(&ct_counted_runs, 0);
        assert_int_equal(weft_eval(g, 2, in, args, 1, &b.y, &out), WEFT_OK);
        expect_ramp(out, taken ? 2.0 : 3.0, 1.0);
        assert_int_equal(atomic_load(&ct_counted_runs), 1);
        weft_tensor_release(out);
        weft_tensor_release(cv);
    }
    weft_tensor_release(xv);
}

/* A node both branches read runs once, whichever is taken, and waits for no
 * condition (its guard resolves to always). */
static void test_shared_runs_once(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S64), *c = cond_var("c");
    weft_var_t *s = ct_call(g, &ct_counted_class, NULL, 1, x, NULL);
    weft_var_t *t = ct_call(g, &ct_twice_class, NULL, 1, s, NULL);
    weft_var_t *e = ct_call(g, &ct_add_class, NULL, 2, s, x);
    weft_var_t *y = weft_ifelse1(g, c, t, e), *in[2] = {x, c};
    weft_tensor_t *xv = ct_tensor(1, S64, 1.0);
    for (int w = 0; w < 3; w++) {
        weft_function_t *f = compile(2, in, 1, &y, WORKERS[w], "none", true);
        for (int taken = 0; taken < 2; taken++) {
            weft_tensor_t *cv = scalar(taken), *args[2] = {xv, cv}, *out = NULL;
            atomic_store(&ct_counted_runs, 0);
            assert_int_equal(weft_function_call(f, 2, args, 1, &out), WEFT_OK);
            assert_int_equal(atomic_load(&ct_counted_runs), 1);
            expect_ramp(out, 2.0, 1.0);
            weft_tensor_release(out);
            weft_tensor_release(cv);
        }
        /* guarded: Twice and Add only; Counted and IfElse always run */
        weft_profile_t *p = NULL;
        assert_int_equal(weft_profile_create(f, WEFT_PROFILE_TOTAL, &p), WEFT_OK);
        size_t n_skipping = 0;
        for (size_t i = 0; i < p->n_applies; i++) {
            const weft_profile_apply_t *r = &p->applies[i];
            if (strcmp(r->op_class, "Counted") == 0 || strcmp(r->op_class, "IfElse") == 0) {
                assert_int_equal(r->skips, 0);
                assert_int_equal(r->calls, 2);
            } else {
                assert_int_equal(r->skips, 1); /* skipped once, ran once */
                assert_int_equal(r->calls, 1);
                n_skipping++;
            }
        }
        assert_int_equal(n_skipping, 2);
        weft_profile_destroy(p);
        weft_function_destroy(f);
    }
    weft_tensor_release(xv);
}

/* Outer IfElse(c1, IfElse(c2, A, B), C) where c2 is computed inside the
 * outer then branch: each of A, B, C and c2's producer runs only when
 * needed. */
static void test_nested(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S64), *c1 = cond_var("c1"), *k = cond_var("k");
    weft_var_t *c2 = ct_call(g, &ct_counted_class, NULL, 1, k, NULL); /* counted: 1 run */
    weft_var_t *a = ct_call(g, &ct_twice_class, NULL, 1, x, NULL);          /* 2x */
    weft_var_t *bb = ct_call(g, &ct_add_class, NULL, 2, x, a);              /* 3x */
    weft_var_t *cc = ct_call(g, &ct_add_class, NULL, 2, a, a);              /* 4x */
    weft_var_t *inner = weft_ifelse1(g, c2, a, bb);
    weft_var_t *y = weft_ifelse1(g, c1, inner, cc), *in[3] = {x, c1, k};
    weft_tensor_t *xv = ct_tensor(1, S64, 1.0);
    for (int w = 0; w < 3; w++) {
        weft_function_t *f = compile(3, in, 1, &y, WORKERS[w], "none", false);
        for (int o = 0; o < 2; o++)
            for (int i = 0; i < 2; i++) {
                weft_tensor_t *c1v = scalar(o), *kv = scalar(i), *args[3] = {xv, c1v, kv};
                weft_tensor_t *out = NULL;
                atomic_store(&ct_counted_runs, 0);
                assert_int_equal(weft_function_call(f, 3, args, 1, &out), WEFT_OK);
                expect_ramp(out, o ? (i ? 2.0 : 3.0) : 4.0, 1.0);
                assert_int_equal(atomic_load(&ct_counted_runs), o ? 1 : 0);
                weft_tensor_release(out);
                /* the evaluator agrees */
                atomic_store(&ct_counted_runs, 0);
                assert_int_equal(weft_eval(g, 3, in, args, 1, &y, &out), WEFT_OK);
                expect_ramp(out, o ? (i ? 2.0 : 3.0) : 4.0, 1.0);
                assert_int_equal(atomic_load(&ct_counted_runs), o ? 1 : 0);
                weft_tensor_release(out);
                weft_tensor_release(c1v);
                weft_tensor_release(kv);
            }
        weft_function_destroy(f);
    }
    weft_tensor_release(xv);
}

/* The guard cap (docs/control-flow.md §2): a node read by the then sides
 * of IfElses on k distinct conditions has a guard of k terms; up to 4 it is
 * lazy, with 5 it runs eagerly (still correct). All conditions false: the
 * node is needed by none. */
static void test_guard_cap(void **state)
{
    (void)state;
    for (int k = 4; k <= 5; k++) {
        weft_var_t *x = ct_var(g, "x", 1, S64), *in[6] = {x}, *outs[5];
        weft_var_t *shared = ct_call(g, &ct_counted_class, NULL, 1, x, NULL);
        for (int j = 0; j < k; j++) {
            in[1 + j] = cond_var("c");
            outs[j] = weft_ifelse1(g, in[1 + j], shared, x);
        }
        weft_function_t *f = compile(1 + (size_t)k, in, (size_t)k, outs, 2, "none", false);
        weft_tensor_t *xv = ct_tensor(1, S64, 1.0), *cv = scalar(0.0), *args[6] = {xv};
        weft_tensor_t *got[5] = {0};
        for (int j = 0; j < k; j++) args[1 + j] = cv;
        atomic_store(&ct_counted_runs, 0);
        assert_int_equal(weft_function_call(f, 1 + (size_t)k, args, (size_t)k, got), WEFT_OK);
        assert_int_equal(atomic_load(&ct_counted_runs), k == 4 ? 0 : 1);
        for (int j = 0; j < k; j++) {
            expect_ramp(got[j], 1.0, 1.0);
            weft_tensor_release(got[j]);
        }
        weft_tensor_release(xv);
        weft_tensor_release(cv);
        weft_function_destroy(f);
    }
}

/* A node that feeds the condition of an IfElse it is a branch of (through
 * another IfElse): an edge from that condition to it would close a cycle,
 * so it runs eagerly, and the values are right. */
static void test_guard_cycle_eager(void **state)
{
    (void)state;
    weft_var_t *k = cond_var("k"), *e = cond_var("e"), *k2 = cond_var("k2");
    weft_var_t *x = ct_call(g, &ct_counted_class, NULL, 1, k, NULL);
    weft_var_t *c = weft_ifelse1(g, e, x, k2);
    weft_var_t *y = weft_ifelse1(g, c, x, k), *in[3] = {k, e, k2};
    for (int w = 0; w < 3; w++) {
        weft_function_t *f = compile(3, in, 1, &y, WORKERS[w], "none", false);
        for (int ev = 0; ev < 2; ev++)
            for (int k2v = 0; k2v < 2; k2v++) {
                weft_tensor_t *kv = scalar(7.0), *evv = scalar(ev), *k2t = scalar(k2v);
                weft_tensor_t *args[3] = {kv, evv, k2t}, *got = NULL;
                atomic_store(&ct_counted_runs, 0);
                assert_int_equal(weft_function_call(f, 3, args, 1, &got), WEFT_OK);
                assert_int_equal(atomic_load(&ct_counted_runs), 1); /* eager */
                assert_true(weft_tensor_flat_get(got, 0) == 7.0);
                weft_tensor_release(got);
                weft_tensor_release(kv);
                weft_tensor_release(evv);
                weft_tensor_release(k2t);
            }
        weft_function_destroy(f);
    }
}

/* A warm call allocates nothing, whichever branch, and a large branch not
 * taken allocates nothing either (its buffers never materialize). */
static void test_untaken_allocates_nothing(void **state)
{
    (void)state;
    static const int64_t big[1] = {1 << 16};
    weft_var_t *x = ct_var(g, "x", 1, big), *c = cond_var("c");
    weft_var_t *t = x;
    for (int i = 0; i < 8; i++) t = ct_call(g, &ct_twice_class, NULL, 1, t, NULL);
    weft_var_t *e = ct_call(g, &ct_add_class, NULL, 2, x, x);
    weft_var_t *y = weft_ifelse1(g, c, t, e), *in[2] = {x, c};
    weft_tensor_t *xv = ct_tensor(1, big, 0.0), *out = ct_tensor(1, big, 0.0);
    for (int w = 0; w < 3; w++) {
        weft_function_t *f = compile(2, in, 1, &y, WORKERS[w], "none", false);
        weft_tensor_t *cv = scalar(0.0), *args[2] = {xv, cv};
        for (int k = 0; k < 3; k++) assert_int_equal(weft_function_call(f, 2, args, 1, &out), WEFT_OK);
        weft_function_stats_t s0 = {.size = sizeof s0}, s1 = {.size = sizeof s1};
        assert_int_equal(weft_function_stats(f, &s0), WEFT_OK);
        alloc_count_start();
        for (int k = 0; k < 10; k++) assert_int_equal(weft_function_call(f, 2, args, 1, &out), WEFT_OK);
        long n = alloc_count_stop();
        assert_int_equal(weft_function_stats(f, &s1), WEFT_OK);
        assert_int_equal(n, 0);
        assert_int_equal(s1.buffers_allocated, s0.buffers_allocated);
        assert_true(weft_tensor_flat_get(out, 5) == 10.0);
        weft_tensor_release(cv);
        weft_function_destroy(f);
    }
    weft_tensor_release(xv);
    weft_tensor_release(out);
}

/* In-place nodes inside a branch: AddInplace(a, x) destroys a in the then
 * branch while the else branch reads a (the DestroyHandler orders that
 * reader first; the one not taken is skipped), and a later in-place node
 * over the IfElse's output (a view of its then side) leaves a reader of the
 * then value intact. Values against the evaluator, both branches, 1-4
 * workers. */
static void test_inplace_in_branch(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S64), *c = cond_var("c");
    weft_var_t *a = ct_call(g, &ct_twice_class, NULL, 1, x, NULL);           /* 2x */
    weft_var_t *t = ct_call(g, &ct_add_inplace_class, NULL, 2, a, x);        /* 3x, over a */
    weft_var_t *e = ct_call(g, &ct_twice_class, NULL, 1, a, NULL);           /* 4x */
    weft_var_t *y = weft_ifelse1(g, c, t, e);
    weft_var_t *b = ct_call(g, &ct_twice_class, NULL, 1, x, NULL);           /* 2x */
    weft_var_t *r = ct_call(g, &ct_twice_class, NULL, 1, b, NULL);           /* reads b: 4x */
    weft_var_t *v = weft_ifelse1(g, c, b, x);
    weft_var_t *z = ct_call(g, &ct_add_inplace_class, NULL, 2, v, x);        /* over v */
    weft_var_t *outs[3] = {y, r, z}, *in[2] = {x, c};
    weft_tensor_t *xv = ct_tensor(1, S64, 1.0);
    for (int w = 0; w < 3; w++) {
        weft_function_t *f = compile(2, in, 3, outs, WORKERS[w], "none", false);
        for (int rep = 0; rep < 50; rep++)
            for (int taken = 0; taken < 2; taken++) {
                weft_tensor_t *cv = scalar(taken), *args[2] = {xv, cv}, *got[3] = {0};
                assert_int_equal(weft_function_call(f, 2, args, 3, got), WEFT_OK);
                expect_ramp(got[0], taken ? 3.0 : 4.0, 1.0);
                expect_ramp(got[1], 4.0, 1.0);
                expect_ramp(got[2], taken ? 3.0 : 2.0, 1.0);
                expect_ramp(xv, 1.0, 1.0); /* the input was never written */
                for (int k = 0; k < 3; k++) weft_tensor_release(got[k]);
                weft_tensor_release(cv);
            }
        weft_function_destroy(f);
    }
    weft_tensor_release(xv);
}

/* A large branch not taken, with an IfElse nested in it on a condition
 * computed inside it (Counted(k)): on 2 and 4 workers its gate retires it
 * in bulk, the nested one with it; on 1 worker its nodes are passed over
 * (skip_to). Either way every node of the branch is reported skipped in the
 * last call's profile, none ran (Counted), and calls alternating taken and
 * not taken give the expected values. */
#define BIG_CHAIN 200
static void test_big_branch_skipped_in_bulk(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S64), *c = cond_var("c"), *k = cond_var("k");
    weft_var_t *t = x;
    for (int i = 0; i < BIG_CHAIN; i++) t = ct_call(g, &ct_twice_class, NULL, 1, t, NULL);
    weft_var_t *kc = ct_call(g, &ct_counted_class, NULL, 1, k, NULL);
    weft_var_t *in_a = ct_call(g, &ct_add_class, NULL, 2, t, t);         /* 2^201 x */
    weft_var_t *in_b = ct_call(g, &ct_add_class, NULL, 2, t, x);         /* (2^200 + 1) x */
    weft_var_t *then_v = weft_ifelse1(g, kc, in_a, in_b);
    weft_var_t *e = ct_call(g, &ct_add_class, NULL, 2, x, x);            /* 2x */
    weft_var_t *y = weft_ifelse1(g, c, then_v, e), *in[3] = {x, c, k};
    weft_tensor_t *xv = ct_tensor(1, S64, 1.0);
    const double p200 = ldexp(1.0, BIG_CHAIN);
    for (int w = 0; w < 3; w++) {
        weft_function_t *f = compile(3, in, 1, &y, WORKERS[w], "none", true);
        for (int rep = 0; rep < 6; rep++) {
            int taken = rep % 2, kk = (rep / 2) % 2;
            weft_tensor_t *cv = scalar(taken), *kv = scalar(kk), *args[3] = {xv, cv, kv};
            weft_tensor_t *out = NULL;
            atomic_store(&ct_counted_runs, 0);
            assert_int_equal(weft_function_call(f, 3, args, 1, &out), WEFT_OK);
            expect_ramp(out, taken ? (kk ? 2.0 * p200 : p200 + 1.0) : 2.0, 1.0);
            assert_int_equal(atomic_load(&ct_counted_runs), taken);
            weft_tensor_release(out);
            weft_profile_t *p = NULL;
            assert_int_equal(weft_profile_create(f, WEFT_PROFILE_LAST_CALL, &p), WEFT_OK);
            size_t skipped = 0;
            for (size_t i = 0; i < p->n_applies; i++) {
                assert_int_equal(p->applies[i].calls + p->applies[i].skips, 1);
                skipped += p->applies[i].skips;
            }
            /* not taken: the chain, Counted, both Adds and the inner IfElse;
             * taken: the else side and the nested side not taken (one Add
             * each) */
            assert_int_equal(skipped, taken ? 2 : BIG_CHAIN + 4);
            weft_profile_destroy(p);
            weft_tensor_release(cv);
            weft_tensor_release(kv);
        }
        weft_function_destroy(f);
    }
    weft_tensor_release(xv);
}

/* The skips in the profile export: one "skips" per apply, and the text
 * report's Skipped section. */
static void test_profile_skips(void **state)
{
    (void)state;
    two_branch_t b = two_branch();
    weft_var_t *in[2] = {b.x, b.c};
    weft_function_t *f = compile(2, in, 1, &b.y, 2, "none", true);
    weft_tensor_t *xv = ct_tensor(1, S64, 1.0), *cv = scalar(0.0), *args[2] = {xv, cv};
    weft_tensor_t *out = NULL;
    assert_int_equal(weft_function_call(f, 2, args, 1, &out), WEFT_OK);
    weft_tensor_release(out);
    weft_profile_t *p = NULL;
    assert_int_equal(weft_profile_create(f, WEFT_PROFILE_LAST_CALL, &p), WEFT_OK);
    size_t skipped = 0;
    for (size_t i = 0; i < p->n_applies; i++) {
        const weft_profile_apply_t *r = &p->applies[i];
        assert_int_equal(r->calls + r->skips, 1);
        if (r->skips) {
            skipped++;
            assert_int_equal(r->time_ns, 0);
        }
    }
    assert_int_equal(skipped, 2); /* Twice and the then side's Counted */
    FILE *mem = tmpfile();
    assert_non_null(mem);
    assert_int_equal(weft_profile_print(p, 0, mem), WEFT_OK);
    assert_int_equal(weft_profile_write_json(p, mem), WEFT_OK);
    long len = ftell(mem);
    char *buf = calloc((size_t)len + 1, 1);
    rewind(mem);
    assert_int_equal(fread(buf, 1, (size_t)len, mem), (size_t)len);
    fclose(mem);
    assert_non_null(strstr(buf, "Skipped (IfElse branches not taken)"));
    assert_non_null(strstr(buf, "\"skips\": 1"));
    free(buf);
    weft_profile_destroy(p);
    weft_function_destroy(f);
    weft_tensor_release(xv);
    weft_tensor_release(cv);
}

static void test_errors(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S64), *c = cond_var("c");
    /* a condition of rank 1 */
    assert_null(weft_ifelse1(g, x, x, x));
    assert_int_equal(weft_graph_error(g), WEFT_ETYPE);
    assert_non_null(strstr(weft_graph_error_message(g), "the condition 0 (x, created at"));
    assert_non_null(strstr(weft_graph_error_message(g), "must be a 0-d bool, integer or float"));
    weft_graph_clear_error(g);
    /* dtypes differ */
    const weft_type_t *ti;
    assert_int_equal(weft_type_tensor(g, WEFT_INT32, 1, S64, &ti), WEFT_OK);
    weft_var_t *xi = weft_var_create(g, ti, "xi");
    assert_non_null(xi);
    assert_null(weft_ifelse1(g, c, x, xi));
    assert_int_equal(weft_graph_error(g), WEFT_ETYPE);
    const char *m = weft_graph_error_message(g);
    assert_non_null(strstr(m, "then 0 (x, created at"));
    assert_non_null(strstr(m, "else 0 (xi, created at"));
    assert_non_null(strstr(m, "must have the same dtype and rank"));
    assert_non_null(strstr(m, "apply of IfElse at "));
    weft_graph_clear_error(g);
    /* n out of range, NULL arrays */
    weft_var_t *tv[1] = {x}, *ev[1] = {x}, *out[1];
    assert_null(weft_ifelse(g, c, 0, tv, ev, out));
    assert_int_equal(weft_graph_error(g), WEFT_EINVAL);
    weft_graph_clear_error(g);
    assert_null(weft_ifelse(g, c, 1, NULL, ev, out));
    assert_int_equal(weft_graph_error(g), WEFT_EINVAL);
    weft_graph_clear_error(g);
    /* a NULL input: EINVAL named; after an earlier failure, that one stays */
    assert_null(weft_ifelse1(g, NULL, x, x));
    assert_int_equal(weft_graph_error(g), WEFT_EINVAL);
    assert_non_null(strstr(weft_graph_error_message(g), "NULL condition"));
    weft_graph_clear_error(g);
    assert_null(weft_ifelse1(g, x, x, x));
    assert_null(weft_ifelse1(g, c, x, NULL));
    assert_int_equal(weft_graph_error(g), WEFT_ETYPE);
    weft_graph_clear_error(g);
    /* static lengths unify; several pairs */
    static const int64_t s3[1] = {3}, s4[1] = {4};
    weft_var_t *p = ct_var(g, "p", 1, s3), *q = ct_var(g, "q", 1, s4);
    weft_var_t *tv2[2] = {p, x}, *ev2[2] = {q, x}, *o2[2] = {NULL, NULL};
    assert_non_null(weft_ifelse(g, c, 2, tv2, ev2, o2));
    assert_int_equal(weft_type_dim(weft_var_type(o2[0]), 0), WEFT_DIM_UNKNOWN);
    assert_int_equal(weft_type_dim(weft_var_type(o2[1]), 0), 64);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_values_both_branches, setup, teardown),
        cmocka_unit_test_setup_teardown(test_eval_lazy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shared_runs_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nested, setup, teardown),
        cmocka_unit_test_setup_teardown(test_guard_cap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_guard_cycle_eager, setup, teardown),
        cmocka_unit_test_setup_teardown(test_untaken_allocates_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_inplace_in_branch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_profile_skips, setup, teardown),
        cmocka_unit_test_setup_teardown(test_big_branch_skipped_in_bulk, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
