/* Allocation failures (tests/support/alloc_count.h): each scenario runs once
 * to count its allocations, then again with allocation k failing, for every
 * k up to that count. Every failure must come back as WEFT_ENOMEM with a
 * message that says memory ran out ("out of memory"), on the object the
 * failing call documents; a run that succeeds despite the failure must give
 * the same results as one without. Leaks are LeakSanitizer's to find: the
 * ASan+UBSan build runs this test too.
 *
 * First, the default rewrite database's build failing and being retried.
 * Scenarios: building a small MLP training step (two tanh layers, mean
 * squared error, weft_grad, SGD updates: the shape of tools/demos/mlp_train);
 * compiling it in fast_run and calling it twice; a profiled function with an
 * accepted in-place op and NaN checks, its calls and profile queries; saving
 * and loading the step as JSON; and an OpFromGraph that the function runs
 * (created, called, compiled and called, in a new context each time). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "support/alloc_count.h"
#include "weft/weft.h"

enum { B = 4, W = 3, N_PARAMS = 4, N_IN = 2 + N_PARAMS, N_RESULTS = 64 };

typedef struct outcome {
    weft_status_t st;      /* the first failure, WEFT_OK if none */
    char what[32];         /* which step failed */
    char msg[1024];        /* its message */
    double res[N_RESULTS]; /* what a successful run computed */
} outcome_t;

/* Records the first failure of a run. */
static weft_status_t note(outcome_t *r, weft_status_t st, const char *what, const char *msg)
{
    if (st != WEFT_OK && r->st == WEFT_OK) {
        r->st = st;
        snprintf(r->what, sizeof r->what, "%s", what);
        snprintf(r->msg, sizeof r->msg, "%s", msg);
    }
    return st;
}

/* st = call, then its failure noted with the message read after it. */
#define CHECK(r, st, what, call, msg)                                                              \
    do {                                                                                           \
        (st) = (call);                                                                             \
        note((r), (st), (what), (msg));                                                            \
    } while (0)

/* One run with allocation k failing (0: none); returns the allocations made. */
typedef long (*scenario_fn)(long k, outcome_t *r);

static void sweep(const char *name, scenario_fn run)
{
    outcome_t ref, r;
    run(0, &ref); /* builds what lives for the process (the default rewrite database) */
    long total = run(0, &ref), bad = 0, absorbed = 0;
    if (ref.st != WEFT_OK) fail_msg("%s: %s: %s", name, ref.what, ref.msg);
    for (long k = 1; k <= total; k++) {
        long n = run(k, &r);
        assert_true(n >= k);   /* the run is deterministic: allocation k happened */
        if (r.st == WEFT_OK) { /* the failure was absorbed: same results */
            absorbed++;
            assert_memory_equal(r.res, ref.res, sizeof ref.res);
        } else if (r.st != WEFT_ENOMEM || !strstr(r.msg, "out of memory")) {
            bad++;
            print_message("%s, allocation %ld: %s %s: '%s'\n", name, k, r.what,
                          weft_status_name(r.st), r.msg);
        }
    }
    printf("test_function_faults: %s: %ld allocations failed one at a time, %ld absorbed, %ld "
           "wrong\n",
           name, total, absorbed, bad);
    assert_true(total > 10);
    assert_int_equal(bad, 0);
}

/* ---- the MLP step ----------------------------------------------------------------- */

typedef struct step {
    weft_graph_t *g;
    weft_var_t *in[N_IN]; /* x, y, W1, b1, W2, b2 */
    weft_var_t *loss, *news[N_PARAMS];
} step_t;

#define TRY(r, what, call)                                                                         \
    do {                                                                                           \
        weft_status_t st_ = (call);                                                                \
        if (st_ != WEFT_OK) return note((r), st_, (what), weft_graph_last_error(s->g));            \
    } while (0)

/* TRY for a constructor: expr is its result; the kept error is noted. */
#define TRYV(r, what, expr) \
    do { \
        if (!(expr)) \
            return note((r), weft_graph_error(s->g), (what), weft_graph_error_message(s->g)); \
    } while (0)

/* h = tanh(x W1 + b1), out = h W2 + b2, loss = mean((out - y)^2); news:
 * param - 0.5 * d loss / d param. */
static weft_status_t step_build(step_t *s, outcome_t *r)
{
    const weft_type_t *tx, *tw, *tb;
    int64_t xs[2] = {B, W}, ws[2] = {W, W}, bs[1] = {W};
    s->g = NULL;
    weft_status_t st = weft_graph_create(NULL, &s->g);
    if (st != WEFT_OK) return note(r, st, "graph_create", "out of memory (no context to say so)");
    weft_graph_t *g = s->g;
    TRY(r, "type", weft_type_tensor(g, WEFT_FLOAT64, 2, xs, &tx));
    TRY(r, "type", weft_type_tensor(g, WEFT_FLOAT64, 2, ws, &tw));
    TRY(r, "type", weft_type_tensor(g, WEFT_FLOAT64, 1, bs, &tb));
    const char *names[N_IN] = {"x", "y", "W1", "b1", "W2", "b2"};
    for (int i = 0; i < N_IN; i++)
        TRYV(r, "var", s->in[i] = weft_var_create(g, i < 2 ? tx : i % 2 ? tb : tw, names[i]));
    weft_var_t *z, *h, *o, *d, *d2;
    TRYV(r, "dot", z = weft_dot(g, s->in[0], s->in[2]));
    TRYV(r, "add", z = weft_add(g, z, s->in[3]));
    TRYV(r, "tanh", h = weft_tanh(g, z));
    TRYV(r, "dot", o = weft_dot(g, h, s->in[4]));
    TRYV(r, "add", o = weft_add(g, o, s->in[5]));
    TRYV(r, "sub", d = weft_sub(g, o, s->in[1]));
    TRYV(r, "sqr", d2 = weft_sqr(g, d));
    TRYV(r, "mean", s->loss = weft_mean(g, d2, 0, NULL, false));
    weft_var_t *grads[N_PARAMS];
    TRYV(r, "grad", weft_grads(g, s->loss, N_PARAMS, s->in + 2, NULL, grads));
    for (int i = 0; i < N_PARAMS; i++) {
        weft_var_t *sc;
        TRYV(r, "mul", sc = weft_binary_scalar(g, WEFT_ELEMWISE_MUL, grads[i], 0.5));
        TRYV(r, "sub", s->news[i] = weft_sub(g, s->in[2 + i], sc));
    }
    return WEFT_OK;
}

static step_t the_step; /* built once, outside the sweeps that compile or save it */

static long build_once(long k, outcome_t *r)
{
    memset(r, 0, sizeof *r);
    step_t s;
    alloc_fail_at(k);
    step_build(&s, r);
    long n = alloc_count_stop();
    weft_graph_destroy(s.g);
    return n;
}

/* Fresh tensors with fixed values for the step's inputs (the call updates
 * the parameters); filled before any failure is armed. */
static void step_inputs(weft_tensor_t **t)
{
    int64_t xs[2] = {B, W}, ws[2] = {W, W}, bs[1] = {W};
    for (int i = 0; i < N_IN; i++) {
        int nd = i < 2 || i % 2 == 0 ? 2 : 1;
        const int64_t *shape = i < 2 ? xs : nd == 2 ? ws : bs;
        assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, nd, shape, &t[i]), WEFT_OK);
        double *d = weft_tensor_data(t[i]); /* new: C-contiguous */
        for (size_t e = 0; e < weft_tensor_size(t[i]); e++)
            d[e] = sin(1.0 + (double)(7 * (size_t)i + e)) * 0.5;
    }
}

/* The losses of both calls, then every parameter after them. */
static void step_results(weft_tensor_t *const *in, const double *loss, outcome_t *r)
{
    size_t n = 0;
    r->res[n++] = loss[0];
    r->res[n++] = loss[1];
    for (int i = 2; i < N_IN; i++)
        for (size_t e = 0; e < weft_tensor_size(in[i]) && n < N_RESULTS; e++)
            r->res[n++] = weft_tensor_flat_get(in[i], e);
}

/* Compile in fast_run, call twice, destroy. */
static long compile_once(long k, outcome_t *r)
{
    const step_t *s = &the_step;
    weft_tensor_t *in[N_IN], *loss;
    step_inputs(in);
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, 0, NULL, &loss), WEFT_OK);
    weft_update_t upd[N_PARAMS];
    for (int i = 0; i < N_PARAMS; i++) upd[i] = (weft_update_t){s->in[2 + i], s->news[i]};
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.threads = 1;
    memset(r, 0, sizeof *r);
    weft_function_t *f = NULL;
    double losses[2] = {0, 0};
    alloc_fail_at(k);
    weft_status_t st;
    CHECK(r, st, "compile", weft_function_compile(N_IN, s->in, 1, &s->loss, N_PARAMS, upd, &o, &f),
          weft_function_last_error(NULL));
    for (int c = 0; c < 2 && st == WEFT_OK; c++) {
        weft_tensor_t *out[1] = {loss};
        CHECK(r, st, "call", weft_function_call(f, N_IN, in, 1, out), weft_function_last_error(f));
        losses[c] = weft_tensor_flat_get(loss, 0);
    }
    weft_status_t dst = weft_function_destroy(f);
    long n = alloc_count_stop();
    assert_int_equal(dst, WEFT_OK);
    step_results(in, losses, r);
    for (int i = 0; i < N_IN; i++) weft_tensor_release(in[i]);
    weft_tensor_release(loss);
    return n;
}

/* Save the step as JSON and load it into a new context. */
static long io_once(long k, outcome_t *r)
{
    step_t *s = &the_step;
    weft_graph_t *g2 = NULL;
    assert_int_equal(weft_graph_create(NULL, &g2), WEFT_OK);
    bool mut[N_IN] = {false, false, true, true, true, true};
    weft_graph_io_t gr = {N_IN, s->in, mut, 1, &s->loss, N_PARAMS, s->in + 2, s->news};
    weft_graph_io_t ld;
    memset(&ld, 0, sizeof ld);
    memset(r, 0, sizeof *r);
    char *text = NULL;
    alloc_fail_at(k);
    weft_status_t st;
    CHECK(r, st, "save", weft_graph_io_save(&gr, &text), weft_graph_last_error(s->g));
    if (st == WEFT_OK)
        CHECK(r, st, "load", weft_graph_io_load(g2, text, strlen(text), "step.json", &ld),
              weft_graph_last_error(g2));
    long n = alloc_count_stop();
    r->res[0] = (double)(text ? strlen(text) : 0);
    r->res[1] = (double)ld.n_inputs;
    weft_graph_io_free_text(text);
    weft_graph_io_clear(&ld);
    weft_graph_destroy(g2);
    return n;
}

/* ---- a profiled function with an accepted in-place op ------------------------------ */

/* out = 2 * addinplace(acc, exp(y)): acc is a mutable input the op overwrites. */
static weft_status_t inplace_build(weft_graph_t *g, weft_var_t **in, weft_var_t **out)
{
    const weft_type_t *t;
    const weft_op_t *add_ip;
    int64_t s3[1] = {3};
    weft_status_t st = weft_type_tensor(g, WEFT_FLOAT64, 1, s3, &t);
    if (st == WEFT_OK) st = weft_elemwise_op(g, WEFT_ELEMWISE_ADD, 0, WEFT_BOOL, &add_ip);
    if (st != WEFT_OK) return st;
    in[0] = weft_var_create(g, t, "acc");
    in[1] = weft_var_create(g, t, "y");
    weft_var_t *ab[2] = {in[0], weft_exp(g, in[1])};
    *out = weft_mul_scalar(g, weft_op_call(g, add_ip, 2, ab), 2.0);
    return weft_graph_error(g);
}

static weft_graph_t *ip_graph;
static weft_var_t *ip_in[2], *ip_out;

/* Profile queries of a called function (writing into /dev/null). */
static void profile_queries(weft_function_t *f, FILE *sink, outcome_t *r)
{
    weft_profile_t *p = NULL;
    weft_status_t st;
    CHECK(r, st, "profile_create", weft_profile_create(f, WEFT_PROFILE_LAST_CALL, &p),
          weft_function_last_error(f));
    if (st == WEFT_OK) r->res[4] = (double)p->n_applies;
    if (st == WEFT_OK) CHECK(r, st, "trace", weft_profile_write_trace(p, sink), "");
    weft_profile_destroy(p);
    if (st == WEFT_OK)
        CHECK(r, st, "print_profile", weft_function_print_profile(f, sink),
              weft_function_last_error(f));
    if (st == WEFT_OK)
        CHECK(r, st, "profile_reset", weft_profile_reset(f), weft_function_last_error(f));
}

/* Two new float64[3] tensors: {1, 2, 3} and {0.5, -1, 0}. */
static void vec3_pair(weft_tensor_t **in)
{
    static const int64_t s3[1] = {3};
    static const double v[2][3] = {{1, 2, 3}, {0.5, -1, 0}};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, 1, s3, &in[i]), WEFT_OK);
        memcpy(weft_tensor_data(in[i]), v[i], sizeof v[i]);
    }
}

static long profiled_once(long k, outcome_t *r)
{
    weft_tensor_t *in[2], *out = NULL;
    vec3_pair(in);
    FILE *sink = fopen("/dev/null", "w");
    assert_non_null(sink);
    bool mut[2] = {true, false};
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.threads = 1;
    o.accept_inplace = true;
    o.input_mutable = mut;
    o.profile = true;
    o.nan_check = true;
    o.name = "profiled";
    memset(r, 0, sizeof *r);
    weft_function_t *f = NULL;
    alloc_fail_at(k);
    weft_status_t st;
    CHECK(r, st, "compile", weft_function_compile(2, ip_in, 1, &ip_out, 0, NULL, &o, &f),
          weft_function_last_error(NULL));
    for (int c = 0; c < 2 && st == WEFT_OK; c++) {
        CHECK(r, st, "call", weft_function_call(f, 2, in, 1, &out), weft_function_last_error(f));
        if (st == WEFT_OK) r->res[c] = weft_tensor_flat_get(out, 2);
        weft_tensor_release(out);
        out = NULL;
    }
    if (st == WEFT_OK) profile_queries(f, sink, r);
    weft_status_t dst = weft_function_destroy(f);
    long n = alloc_count_stop();
    assert_int_equal(dst, WEFT_OK);
    r->res[2] = weft_tensor_flat_get(in[0], 0);
    fclose(sink);
    weft_tensor_release(in[0]);
    weft_tensor_release(in[1]);
    return n;
}

/* ---- an OpFromGraph, run by the function (not inlined) ------------------------------ */

/* In a new context: inner(x, y) = tanh(x * y) + x as an OpFromGraph, out =
 * 2 * inner(a, b), compiled and called twice. */
static long ofg_once(long k, outcome_t *r)
{
    int64_t s3[1] = {3};
    weft_tensor_t *in[2], *out = NULL;
    vec3_pair(in);
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.threads = 1;
    memset(r, 0, sizeof *r);
    const weft_type_t *t;
    const weft_op_t *op;
    weft_var_t *x = NULL, *y = NULL, *z = NULL, *ab[2] = {NULL, NULL}, *res = NULL;
    weft_graph_t *g = NULL;
    weft_function_t *f = NULL;
    alloc_fail_at(k);
    weft_status_t st = weft_graph_create(NULL, &g);
    note(r, st, "graph_create", "out of memory (no context to say so)");
    if (st == WEFT_OK) st = weft_type_tensor(g, WEFT_FLOAT64, 1, s3, &t);
    if (st == WEFT_OK) {
        x = weft_var_create(g, t, "x");
        y = weft_var_create(g, t, "y");
        z = weft_add(g, weft_tanh(g, weft_mul(g, x, y)), x);
        st = weft_graph_error(g);
    }
    weft_var_t *xs[2] = {x, y};
    if (st == WEFT_OK) st = weft_ofg_create(g, 2, xs, 1, &z, NULL, &op);
    if (st == WEFT_OK) {
        ab[0] = weft_var_create(g, t, "a");
        ab[1] = weft_var_create(g, t, "b");
        res = weft_mul_scalar(g, weft_op_call(g, op, 2, ab), 2.0);
        st = weft_graph_error(g);
    }
    if (g)
        note(r, st, "build",
             weft_graph_error(g) ? weft_graph_error_message(g) : weft_graph_last_error(g));
    if (st == WEFT_OK)
        CHECK(r, st, "compile", weft_function_compile(2, ab, 1, &res, 0, NULL, &o, &f),
              weft_function_last_error(NULL));
    for (int i = 0; i < 2 && st == WEFT_OK; i++) {
        CHECK(r, st, "call", weft_function_call(f, 2, in, 1, &out), weft_function_last_error(f));
        for (size_t e = 0; e < 3 && st == WEFT_OK; e++)
            r->res[3 * i + e] = weft_tensor_flat_get(out, e);
        weft_tensor_release(out);
        out = NULL;
    }
    weft_status_t dst = weft_function_destroy(f);
    weft_graph_destroy(g);
    long n = alloc_count_stop();
    assert_int_equal(dst, WEFT_OK);
    weft_tensor_release(in[0]);
    weft_tensor_release(in[1]);
    return n;
}

/* ---- tests -------------------------------------------------------------------------- */

/* The default rewrite database is built on first use; a build that runs out
 * of memory keeps nothing, and the next use builds it again rather than
 * failing every compile for the rest of the process. Runs first: nothing has
 * built it yet. */
static void test_function_faults_default_rewrite_db_build_is_retried(void **state)
{
    (void)state;
    weft_rewrite_db_t *db = NULL;
    long k = 0;
    while (!db && k < 100000) {
        alloc_fail_at(++k);
        db = weft_rewrite_db_default();
        long n = alloc_count_stop();
        assert_true(db || n >= k); /* a NULL came from the failure */
    }
    assert_non_null(db);
    printf("test_function_faults: the default rewrite database failed to build %ld times\n", k - 1);
    assert_true(k > 100); /* it does allocate at many points */
}

static void test_function_faults_building_the_step(void **state)
{
    (void)state;
    sweep("build", build_once);
}

static void test_function_faults_compiling_and_calling_the_step(void **state)
{
    (void)state;
    sweep("compile+call", compile_once);
}

static void test_function_faults_saving_and_loading_the_step(void **state)
{
    (void)state;
    sweep("save+load", io_once);
}

static void test_function_faults_profiled_inplace_function(void **state)
{
    (void)state;
    assert_int_equal(weft_graph_create(NULL, &ip_graph), WEFT_OK);
    assert_int_equal(inplace_build(ip_graph, ip_in, &ip_out), WEFT_OK);
    sweep("profiled in-place", profiled_once);
    weft_graph_destroy(ip_graph);
}

static void test_function_faults_opfromgraph_run_by_the_function(void **state)
{
    (void)state;
    sweep("OpFromGraph", ofg_once);
}

static int setup(void **state)
{
    (void)state;
    outcome_t r;
    memset(&r, 0, sizeof r);
    return step_build(&the_step, &r) == WEFT_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    weft_graph_destroy(the_step.g);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_function_faults_default_rewrite_db_build_is_retried),
        cmocka_unit_test(test_function_faults_building_the_step),
        cmocka_unit_test(test_function_faults_compiling_and_calling_the_step),
        cmocka_unit_test(test_function_faults_saving_and_loading_the_step),
        cmocka_unit_test(test_function_faults_profiled_inplace_function),
        cmocka_unit_test(test_function_faults_opfromgraph_run_by_the_function),
    };
    return cmocka_run_group_tests_name("function_faults", tests, setup, teardown);
}
