/* Cancelling calls of compiled functions (weft_call_token_t,
 * weft_function_call_ex): before the start, in the middle of a chain from
 * another thread, after completion; only the calls given the token; updates
 * and mutable inputs untouched before the commit, a committed call
 * completing; nothing leaked and exact results in repeated cancel / call
 * cycles, on 1 and 2 workers. Run under TSan by the suite.
 *
 * A Gate node holds a call at a known point: it counts its entry, then waits
 * until the test opens the gate; the canceller thread cancels first and
 * opens the gate after, so the nodes after the gate see the cancel. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "compile_test_ops.h"

#define N 8
#define CHAIN 20
static const int64_t SN[1] = {N};

static weft_graph_t *g;
static atomic_int gate_entered, gate_open;

static void nap(void)
{
    struct timespec ts = {0, 50 * 1000};
    nanosleep(&ts, NULL);
}

static weft_status_t gate_make_node(weft_graph_t *gr, const weft_op_t *op, size_t n_in,
                                    weft_var_t *const *in, size_t *n_out,
                                    const weft_type_t **out)
{
    (void)gr;
    (void)op;
    (void)n_in;
    *n_out = 1;
    out[0] = weft_var_type(in[0]);
    return WEFT_OK;
}

/* Copies its input once the test has opened the gate. */
static weft_status_t gate_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                  weft_tensor_t **out, weft_kernel_ctx_t *ctx)
{
    (void)node;
    /* relaxed: a counter the test polls; the gate below orders the rest */
    atomic_fetch_add_explicit(&gate_entered, 1, memory_order_relaxed);
    /* acquire: the cancel issued before the gate opened is visible to the
     * nodes after this one; pairs with the release store in open_gate */
    while (!atomic_load_explicit(&gate_open, memory_order_acquire)) nap();
    weft_status_t st = weft_kernel_alloc_output(ctx, &out[0], weft_tensor_dtype(in[0]),
                                                weft_tensor_ndim(in[0]), weft_tensor_shape(in[0]));
    return st != WEFT_OK ? st : weft_tensor_copy(out[0], in[0]);
}

static const weft_op_class_t gate_class = {.size = sizeof(weft_op_class_t), .name = "Gate",
                                           .make_node = gate_make_node,
                                           .perform = gate_perform};

static void gate_reset(int open)
{
    /* relaxed: set while no call runs; the calls start after (pool submit) */
    atomic_store_explicit(&gate_entered, 0, memory_order_relaxed);
    atomic_store_explicit(&gate_open, open, memory_order_relaxed);
    atomic_store_explicit(&ct_counted_runs, 0, memory_order_relaxed);
}

static int counted(void)
{
    /* relaxed: read after the calls returned */
    return atomic_load_explicit(&ct_counted_runs, memory_order_relaxed);
}

/* ---- the canceller thread: waits for `entries` gate entries, cancels,
 * then opens the gate ---- */

typedef struct canceller {
    pthread_t th;
    int entries;
    size_t n_tokens;
    weft_call_token_t *tokens[2];
    weft_status_t st;
} canceller_t;

static void *canceller_main(void *arg)
{
    canceller_t *c = arg;
    /* relaxed: a poll; the gate's acquire/release orders what matters */
    while (atomic_load_explicit(&gate_entered, memory_order_relaxed) < c->entries) nap();
    c->st = WEFT_OK;
    for (size_t i = 0; i < c->n_tokens; i++)
        if (weft_call_token_cancel(c->tokens[i]) != WEFT_OK) c->st = WEFT_EINVAL;
    /* release: pairs with the acquire load in gate_perform */
    atomic_store_explicit(&gate_open, 1, memory_order_release);
    return NULL;
}

static void canceller_start(canceller_t *c, int entries, size_t n_tokens,
                            weft_call_token_t *const *tokens)
{
    c->entries = entries;
    c->n_tokens = n_tokens;
    for (size_t i = 0; i < n_tokens; i++) c->tokens[i] = tokens[i];
    assert_int_equal(pthread_create(&c->th, NULL, canceller_main, c), 0);
}

static void canceller_join(canceller_t *c)
{
    assert_int_equal(pthread_join(c->th, NULL), 0);
    assert_int_equal(c->st, WEFT_OK);
}

/* ---- fixtures ---- */

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

static weft_var_t *gate(weft_var_t *x)
{
    return ct_call(g, &gate_class, NULL, 1, x, NULL);
}

/* y = 2 * Counted^CHAIN(Gate(Counted(x))): a long chain held at its gate. */
static weft_function_t *chain(int threads)
{
    weft_var_t *x = ct_var(g, "x", 1, SN);
    weft_var_t *v = gate(ct_call(g, &ct_counted_class, NULL, 1, x, NULL));
    for (int i = 0; i < CHAIN; i++) v = ct_call(g, &ct_counted_class, NULL, 1, v, NULL);
    weft_var_t *y = ct_call(g, &ct_twice_class, NULL, 1, v, NULL);
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.mode = "none";
    o.threads = threads;
    weft_function_t *f = NULL;
    assert_int_equal(weft_function_compile(1, &x, 1, &y, 0, NULL, &o, &f), WEFT_OK);
    return f;
}

static weft_status_t call_tok(weft_function_t *f, weft_tensor_t *x, weft_tensor_t **y,
                              weft_call_token_t *tok)
{
    weft_call_options_t o = WEFT_CALL_OPTIONS_INIT;
    o.token = tok;
    return weft_function_call_ex(f, 1, &x, 1, y, &o);
}

/* y holds 2 * (base + i) at element i. */
static void assert_twice(const weft_tensor_t *y, double base)
{
    for (size_t i = 0; i < N; i++)
        assert_true(weft_tensor_flat_get(y, i) == 2.0 * (base + (double)i));
}

static void assert_all(const weft_tensor_t *y, double v)
{
    for (size_t i = 0; i < N; i++) assert_true(weft_tensor_flat_get(y, i) == v);
}

static weft_function_stats_t stats(const weft_function_t *f)
{
    weft_function_stats_t s = {.size = sizeof s};
    assert_int_equal(weft_function_stats(f, &s), WEFT_OK);
    return s;
}

/* ---- tests ---- */

static void test_cancel_token_bad_arguments_are_rejected(void **state)
{
    (void)state;
    weft_call_token_t *tok = NULL;
    assert_int_equal(weft_call_token_create(NULL), WEFT_EINVAL);
    assert_int_equal(weft_call_token_cancel(NULL), WEFT_EINVAL);
    assert_int_equal(weft_call_token_reset(NULL), WEFT_EINVAL);
    assert_int_equal(weft_call_token_destroy(NULL), WEFT_OK);
    assert_false(weft_call_token_is_canceled(NULL));
    assert_string_equal(weft_status_name(WEFT_ECANCELED), "WEFT_ECANCELED");
    assert_string_equal(weft_status_str(WEFT_ECANCELED), "canceled");
    assert_int_equal(weft_call_token_create(&tok), WEFT_OK);
    assert_false(weft_call_token_is_canceled(tok));
    assert_int_equal(weft_call_token_cancel(tok), WEFT_OK);
    assert_int_equal(weft_call_token_cancel(tok), WEFT_OK); /* twice: as once */
    assert_true(weft_call_token_is_canceled(tok));
    assert_int_equal(weft_call_token_reset(tok), WEFT_OK);
    assert_false(weft_call_token_is_canceled(tok));
    /* options too short for the token */
    gate_reset(1);
    weft_function_t *f = chain(1);
    weft_tensor_t *x = ct_tensor(1, SN, 1.0), *y = NULL;
    weft_call_options_t o = {offsetof(weft_call_options_t, token), tok, NULL, NULL};
    assert_int_equal(weft_function_call_ex(f, 1, &x, 1, &y, &o), WEFT_EINVAL);
    assert_string_equal(weft_function_last_error(f), "function: call options: size 8 too small");
    assert_null(y);
    /* a pointer that is not a token */
    o = (weft_call_options_t)WEFT_CALL_OPTIONS_INIT;
    o.token = (weft_call_token_t *)(void *)x;
    assert_int_equal(weft_function_call_ex(f, 1, &x, 1, &y, &o), WEFT_EINVAL);
    assert_string_equal(weft_function_last_error(f),
                        "function: the call options' token is not a token");
    assert_int_equal(counted(), 0);
    weft_tensor_release(x);
    assert_int_equal(weft_function_destroy(f), WEFT_OK);
    assert_int_equal(weft_call_token_destroy(tok), WEFT_OK);
}

static void test_cancel_before_start_runs_nothing(void **state)
{
    (void)state;
    gate_reset(1);
    weft_function_t *f = chain(2);
    weft_call_token_t *tok = NULL;
    assert_int_equal(weft_call_token_create(&tok), WEFT_OK);
    assert_int_equal(weft_call_token_cancel(tok), WEFT_OK);
    weft_tensor_t *x = ct_tensor(1, SN, 1.0), *y = NULL, *ys = NULL;
    assert_int_equal(weft_tensor_full(WEFT_FLOAT64, 1, SN, 7.0, &ys), WEFT_OK);
    assert_int_equal(call_tok(f, x, &y, tok), WEFT_ECANCELED);
    assert_null(y); /* nothing handed over */
    assert_string_equal(weft_function_last_error(f), "function: canceled before it started (its "
                        "call token is canceled): no node ran");
    assert_int_equal(call_tok(f, x, &ys, tok), WEFT_ECANCELED);
    assert_all(ys, 7.0); /* a supplied output is left unchanged */
    assert_int_equal(counted(), 0);
    assert_int_equal(stats(f).calls, 0);
    /* reset: the same token runs the next call */
    assert_int_equal(weft_call_token_reset(tok), WEFT_OK);
    assert_int_equal(call_tok(f, x, &ys, tok), WEFT_OK);
    assert_twice(ys, 1.0);
    assert_int_equal(counted(), CHAIN + 1);
    weft_tensor_release(x);
    weft_tensor_release(ys);
    assert_int_equal(weft_function_destroy(f), WEFT_OK);
    assert_int_equal(weft_call_token_destroy(tok), WEFT_OK);
}

/* A call held at its gate is canceled from another thread: the nodes after
 * the gate never run, nothing is delivered, nothing leaks; the state and
 * the buffers serve the next calls, whose results are exact. */
static void cancel_mid_run(int threads)
{
    weft_function_t *f = chain(threads);
    weft_call_token_t *tok = NULL;
    assert_int_equal(weft_call_token_create(&tok), WEFT_OK);
    weft_tensor_t *x = ct_tensor(1, SN, 1.0), *ys = NULL;
    assert_int_equal(weft_tensor_full(WEFT_FLOAT64, 1, SN, 7.0, &ys), WEFT_OK);
    gate_reset(1);
    assert_int_equal(call_tok(f, x, &ys, tok), WEFT_OK); /* warm: the buffers exist */
    assert_twice(ys, 1.0);
    weft_function_stats_t warm = stats(f);
    for (int cycle = 0; cycle < 5; cycle++) {
        gate_reset(0);
        weft_tensor_fill(ys, 7.0);
        canceller_t c;
        canceller_start(&c, 1, 1, &tok);
        weft_tensor_t *y = NULL;
        weft_status_t st = cycle % 2 ? call_tok(f, x, &y, tok) : call_tok(f, x, &ys, tok);
        canceller_join(&c);
        assert_int_equal(st, WEFT_ECANCELED);
        assert_string_equal(weft_function_last_error(f),
                            "function: canceled by its call token before it committed: nodes not "
                            "yet started were skipped, the caller's tensors are unchanged");
        assert_int_equal(counted(), 1); /* the Counted before the gate only */
        assert_null(y);
        assert_all(ys, 7.0);
        /* the next call is exact and needs no new buffer and no new state */
        assert_int_equal(weft_call_token_reset(tok), WEFT_OK);
        gate_reset(1);
        weft_tensor_t *x2 = ct_tensor(1, SN, 10.0 * cycle);
        assert_int_equal(call_tok(f, x2, &ys, tok), WEFT_OK);
        assert_twice(ys, 10.0 * cycle);
        assert_int_equal(counted(), CHAIN + 1);
        weft_tensor_release(x2);
        weft_function_stats_t now = stats(f);
        assert_int_equal(now.buffers_allocated, warm.buffers_allocated);
        assert_int_equal(now.call_states, warm.call_states);
    }
    weft_tensor_release(x);
    weft_tensor_release(ys);
    assert_int_equal(weft_function_destroy(f), WEFT_OK);
    assert_int_equal(weft_call_token_destroy(tok), WEFT_OK);
}

static void test_cancel_mid_run_one_worker_skips_the_rest(void **state)
{
    (void)state;
    cancel_mid_run(1); /* the call runs on the calling thread (guest) */
}

static void test_cancel_mid_run_two_workers_skips_the_rest(void **state)
{
    (void)state;
    cancel_mid_run(2);
}

static void test_cancel_after_completion_has_no_effect(void **state)
{
    (void)state;
    gate_reset(1);
    weft_function_t *f = chain(2);
    weft_call_token_t *tok = NULL;
    assert_int_equal(weft_call_token_create(&tok), WEFT_OK);
    weft_tensor_t *x = ct_tensor(1, SN, 3.0), *y = NULL;
    assert_int_equal(call_tok(f, x, &y, tok), WEFT_OK);
    assert_int_equal(weft_call_token_cancel(tok), WEFT_OK);
    assert_twice(y, 3.0); /* the completed call's result stands */
    /* a call without the token is not concerned */
    weft_tensor_t *y2 = NULL;
    assert_int_equal(weft_function_call(f, 1, &x, 1, &y2), WEFT_OK);
    assert_twice(y2, 3.0);
    /* the token stays canceled for later calls given it, until reset */
    weft_tensor_release(y2);
    y2 = NULL;
    assert_int_equal(call_tok(f, x, &y2, tok), WEFT_ECANCELED);
    assert_null(y2);
    assert_int_equal(weft_call_token_reset(tok), WEFT_OK);
    assert_int_equal(call_tok(f, x, &y2, tok), WEFT_OK);
    assert_twice(y2, 3.0);
    weft_tensor_release(x);
    weft_tensor_release(y);
    weft_tensor_release(y2);
    assert_int_equal(weft_function_destroy(f), WEFT_OK);
    assert_int_equal(weft_call_token_destroy(tok), WEFT_OK);
}

typedef struct caller {
    pthread_t th;
    weft_function_t *f;
    weft_tensor_t *x, *y;
    weft_call_token_t *tok;
    weft_status_t st;
} caller_t;

static void *caller_main(void *arg)
{
    caller_t *c = arg;
    c->st = call_tok(c->f, c->x, &c->y, c->tok);
    return NULL;
}

/* Two calls of one function held at their gates at once; the canceller
 * cancels `n_cancel` of the two tokens (tok[0] first). */
static void two_calls(weft_function_t *f, weft_call_token_t *const *tok, size_t n_cancel,
                      caller_t *c)
{
    gate_reset(0);
    for (int i = 0; i < 2; i++) {
        c[i] = (caller_t){.f = f, .x = ct_tensor(1, SN, 100.0 * i), .tok = tok[i]};
        assert_int_equal(pthread_create(&c[i].th, NULL, caller_main, &c[i]), 0);
    }
    canceller_t k;
    canceller_start(&k, 2, n_cancel, tok);
    canceller_join(&k);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(pthread_join(c[i].th, NULL), 0);
        weft_tensor_release(c[i].x);
    }
}

static void test_cancel_reaches_only_the_calls_given_the_token(void **state)
{
    (void)state;
    weft_function_t *f = chain(2);
    weft_call_token_t *tok[2];
    assert_int_equal(weft_call_token_create(&tok[0]), WEFT_OK);
    assert_int_equal(weft_call_token_create(&tok[1]), WEFT_OK);
    caller_t c[2];
    two_calls(f, tok, 1, c); /* cancel the first call's token only */
    assert_int_equal(c[0].st, WEFT_ECANCELED);
    assert_null(c[0].y);
    assert_int_equal(c[1].st, WEFT_OK);
    assert_twice(c[1].y, 100.0);
    assert_int_equal(counted(), 1 + (CHAIN + 1));
    assert_false(weft_call_token_is_canceled(tok[1]));
    weft_tensor_release(c[1].y);
    /* one token shared by both calls cancels both */
    assert_int_equal(weft_call_token_reset(tok[0]), WEFT_OK);
    weft_call_token_t *shared[2] = {tok[0], tok[0]};
    two_calls(f, shared, 1, c);
    assert_int_equal(c[0].st, WEFT_ECANCELED);
    assert_int_equal(c[1].st, WEFT_ECANCELED);
    assert_null(c[0].y);
    assert_null(c[1].y);
    assert_int_equal(counted(), 2);
    assert_int_equal(weft_function_destroy(f), WEFT_OK);
    assert_int_equal(weft_call_token_destroy(tok[0]), WEFT_OK);
    assert_int_equal(weft_call_token_destroy(tok[1]), WEFT_OK);
}

static void test_cancel_token_in_use_cannot_be_destroyed_or_reset(void **state)
{
    (void)state;
    weft_function_t *f = chain(2);
    weft_call_token_t *tok = NULL;
    assert_int_equal(weft_call_token_create(&tok), WEFT_OK);
    gate_reset(0);
    caller_t c = {.f = f, .x = ct_tensor(1, SN, 0.0), .tok = tok};
    assert_int_equal(pthread_create(&c.th, NULL, caller_main, &c), 0);
    /* relaxed: a poll */
    while (atomic_load_explicit(&gate_entered, memory_order_relaxed) < 1) nap();
    assert_int_equal(weft_call_token_destroy(tok), WEFT_EBUSY);
    assert_int_equal(weft_call_token_cancel(tok), WEFT_OK);
    assert_int_equal(weft_call_token_reset(tok), WEFT_EBUSY);
    assert_true(weft_call_token_is_canceled(tok));
    /* release: pairs with the acquire load in gate_perform */
    atomic_store_explicit(&gate_open, 1, memory_order_release);
    assert_int_equal(pthread_join(c.th, NULL), 0);
    assert_int_equal(c.st, WEFT_ECANCELED);
    weft_tensor_release(c.x);
    assert_int_equal(weft_call_token_reset(tok), WEFT_OK);
    assert_int_equal(weft_call_token_destroy(tok), WEFT_OK);
    assert_int_equal(weft_function_destroy(f), WEFT_OK);
}

/* s <- s + v with v = Gate(x) (gate_first) or y = 2 * Gate(s + x): the
 * update is computed in place in the caller's s (fast_run's
 * update_inplace), so its node is the call's commit. */
static weft_function_t *update_fn(bool gate_first)
{
    weft_var_t *s = ct_var(g, "s", 1, SN), *x = ct_var(g, "x", 1, SN), *in[2] = {s, x};
    weft_var_t *v = gate_first ? gate(x) : x, *new_s = NULL;
    assert_non_null(new_s = weft_add(g, s, v));
    weft_var_t *y = ct_call(g, &ct_twice_class, NULL, 1, gate_first ? v : gate(new_s), NULL);
    weft_update_t upd = {s, new_s};
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.threads = 2;
    weft_function_t *f = NULL;
    assert_int_equal(weft_function_compile(2, in, 1, &y, 1, &upd, &o, &f), WEFT_OK);
    char prog[1024] = {0};
    FILE *m = fmemopen(prog, sizeof prog - 1, "w");
    assert_int_equal(weft_function_print(f, m), WEFT_OK);
    fclose(m);
    assert_non_null(strstr(prog, "Add{inplace=0}(s, ")); /* in the caller's s */
    return f;
}

/* One call of update_fn(gate_first) on s = [0, 1, ...], x = [1, 2, ...],
 * canceled at its gate; returns its status, s and y (NULL slot). */
static weft_status_t update_canceled_at_gate(bool gate_first, weft_tensor_t **s,
                                             weft_tensor_t **y)
{
    weft_function_t *f = update_fn(gate_first);
    weft_call_token_t *tok = NULL;
    assert_int_equal(weft_call_token_create(&tok), WEFT_OK);
    weft_tensor_t *x = ct_tensor(1, SN, 1.0), *in[2] = {*s = ct_tensor(1, SN, 0.0), x};
    weft_call_options_t o = WEFT_CALL_OPTIONS_INIT;
    o.token = tok;
    gate_reset(0);
    canceller_t c;
    canceller_start(&c, 1, 1, &tok);
    *y = NULL;
    weft_status_t st = weft_function_call_ex(f, 2, in, 1, y, &o);
    canceller_join(&c);
    if (st == WEFT_ECANCELED) { /* the next call applies the update once */
        assert_null(*y);
        for (size_t i = 0; i < N; i++) assert_true(weft_tensor_flat_get(*s, i) == (double)i);
        assert_int_equal(weft_call_token_reset(tok), WEFT_OK);
        gate_reset(1);
        assert_int_equal(weft_function_call_ex(f, 2, in, 1, y, &o), WEFT_OK);
    }
    weft_tensor_release(x);
    assert_int_equal(weft_function_destroy(f), WEFT_OK);
    assert_int_equal(weft_call_token_destroy(tok), WEFT_OK);
    return st;
}

static void test_cancel_before_commit_leaves_update_state_unchanged(void **state)
{
    (void)state;
    weft_tensor_t *s, *y;
    assert_int_equal(update_canceled_at_gate(true, &s, &y), WEFT_ECANCELED);
    for (size_t i = 0; i < N; i++) assert_true(weft_tensor_flat_get(s, i) == 2.0 * i + 1.0);
    assert_twice(y, 1.0);
    weft_tensor_release(y);
    weft_tensor_release(s);
}

static void test_cancel_after_commit_lets_the_call_complete(void **state)
{
    (void)state;
    weft_tensor_t *s, *y; /* the gate comes after the in-place update */
    assert_int_equal(update_canceled_at_gate(false, &s, &y), WEFT_OK);
    for (size_t i = 0; i < N; i++) {
        assert_true(weft_tensor_flat_get(s, i) == 2.0 * i + 1.0); /* applied once */
        assert_true(weft_tensor_flat_get(y, i) == 2.0 * (2.0 * i + 1.0));
    }
    weft_tensor_release(y);
    weft_tensor_release(s);
}

/* y = Gate(Counted(x)): canceled while its last node runs, the call ends
 * without delivering (delivery is its commit). */
static void test_cancel_during_the_last_node_delivers_nothing(void **state)
{
    (void)state;
    weft_var_t *xv = ct_var(g, "x", 1, SN);
    weft_var_t *yv = gate(ct_call(g, &ct_counted_class, NULL, 1, xv, NULL));
    weft_function_options_t fo = WEFT_FUNCTION_OPTIONS_INIT;
    fo.mode = "none";
    fo.threads = 2;
    weft_function_t *f = NULL;
    assert_int_equal(weft_function_compile(1, &xv, 1, &yv, 0, NULL, &fo, &f), WEFT_OK);
    weft_call_token_t *tok = NULL;
    assert_int_equal(weft_call_token_create(&tok), WEFT_OK);
    weft_tensor_t *x = ct_tensor(1, SN, 1.0), *ys = NULL;
    assert_int_equal(weft_tensor_full(WEFT_FLOAT64, 1, SN, 7.0, &ys), WEFT_OK);
    gate_reset(0);
    canceller_t c;
    canceller_start(&c, 1, 1, &tok);
    assert_int_equal(call_tok(f, x, &ys, tok), WEFT_ECANCELED);
    canceller_join(&c);
    assert_int_equal(counted(), 1); /* every node ran */
    assert_all(ys, 7.0);
    weft_tensor_release(x);
    weft_tensor_release(ys);
    assert_int_equal(weft_function_destroy(f), WEFT_OK);
    assert_int_equal(weft_call_token_destroy(tok), WEFT_OK);
}

/* ---- cancels at random moments: every call either ran in full or left the
 * caller's tensors as they were ---- */

#ifdef WEFT_SANITIZED
#define RACE_CALLS 60
#else
#define RACE_CALLS 300
#endif

typedef struct late_cancel {
    pthread_t th;
    weft_call_token_t *tok;
    long delay_ns;
} late_cancel_t;

static void *late_cancel_main(void *arg)
{
    late_cancel_t *l = arg;
    struct timespec ts = {0, l->delay_ns};
    nanosleep(&ts, NULL);
    weft_call_token_cancel(l->tok);
    return NULL;
}

static weft_var_t *sleeps(weft_var_t *v, int n)
{
    static const int us = 20;
    for (int i = 0; i < n; i++) v = ct_call(g, &ct_sleep_class, &us, 1, v, NULL);
    return v;
}

static void test_cancel_at_random_moments_is_all_or_nothing(void **state)
{
    (void)state;
    /* s <- s + Sleep^3(x) (in place in s: the commit), y = 2 Sleep^3(s + ...) */
    weft_var_t *sv = ct_var(g, "s", 1, SN), *xv = ct_var(g, "x", 1, SN), *in[2] = {sv, xv};
    weft_var_t *new_s = NULL;
    assert_non_null(new_s = weft_add(g, sv, sleeps(xv, 3)));
    weft_var_t *yv = ct_call(g, &ct_twice_class, NULL, 1, sleeps(new_s, 3), NULL);
    weft_update_t upd = {sv, new_s};
    weft_function_options_t fo = WEFT_FUNCTION_OPTIONS_INIT;
    fo.threads = 2;
    weft_function_t *f = NULL;
    assert_int_equal(weft_function_compile(2, in, 1, &yv, 1, &upd, &fo, &f), WEFT_OK);
    weft_call_token_t *tok = NULL;
    assert_int_equal(weft_call_token_create(&tok), WEFT_OK);
    weft_tensor_t *s = NULL, *x = NULL, *ys = NULL, *args[2];
    assert_int_equal(weft_tensor_zeros(WEFT_FLOAT64, 1, SN, &s), WEFT_OK);
    assert_int_equal(weft_tensor_full(WEFT_FLOAT64, 1, SN, 1.0, &x), WEFT_OK);
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, 1, SN, &ys), WEFT_OK);
    args[0] = s;
    args[1] = x;
    weft_call_options_t o = WEFT_CALL_OPTIONS_INIT;
    o.token = tok;
    int done = 0, canceled = 0;
    unsigned seed = 12345;
    for (int k = 0; k < RACE_CALLS; k++) {
        assert_int_equal(weft_call_token_reset(tok), WEFT_OK);
        weft_tensor_fill(ys, -1.0);
        seed = seed * 1103515245u + 12345u;
        late_cancel_t l = {.tok = tok, .delay_ns = (long)(seed >> 8) % 600000};
        assert_int_equal(pthread_create(&l.th, NULL, late_cancel_main, &l), 0);
        weft_status_t st = weft_function_call_ex(f, 2, args, 1, &ys, &o);
        assert_int_equal(pthread_join(l.th, NULL), 0);
        if (st == WEFT_OK) {
            done++;
        } else {
            assert_int_equal(st, WEFT_ECANCELED);
            canceled++;
            assert_all(ys, -1.0);
        }
        /* s counts the completed calls, each applied once */
        assert_all(s, (double)done);
        if (st == WEFT_OK) assert_all(ys, 2.0 * done);
    }
    print_message("%d calls completed, %d canceled\n", done, canceled);
    assert_int_equal(stats(f).call_states, 1);
    weft_tensor_release(s);
    weft_tensor_release(x);
    weft_tensor_release(ys);
    assert_int_equal(weft_function_destroy(f), WEFT_OK);
    assert_int_equal(weft_call_token_destroy(tok), WEFT_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cancel_token_bad_arguments_are_rejected),
        cmocka_unit_test(test_cancel_before_start_runs_nothing),
        cmocka_unit_test(test_cancel_mid_run_one_worker_skips_the_rest),
        cmocka_unit_test(test_cancel_mid_run_two_workers_skips_the_rest),
        cmocka_unit_test(test_cancel_after_completion_has_no_effect),
        cmocka_unit_test(test_cancel_reaches_only_the_calls_given_the_token),
        cmocka_unit_test(test_cancel_token_in_use_cannot_be_destroyed_or_reset),
        cmocka_unit_test(test_cancel_before_commit_leaves_update_state_unchanged),
        cmocka_unit_test(test_cancel_after_commit_lets_the_call_complete),
        cmocka_unit_test(test_cancel_during_the_last_node_delivers_nothing),
        cmocka_unit_test(test_cancel_at_random_moments_is_all_or_nothing),
    };
    return cmocka_run_group_tests_name("function_cancel", tests, setup, teardown);
}
