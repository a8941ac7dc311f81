/* Shared variables (weft/shared.h): get / set, functions reading them
 * without being passed them, updates applied only after a successful call,
 * values never written once published, the JSON round trip, steady-state
 * calls that allocate nothing, serialized concurrent calls and every
 * documented bad input. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "support/alloc_count.h"
#include "support/fault_sweep.h"
#include "weft/weft.h"

#define OK(expr) assert_int_equal((expr), WEFT_OK)
#define OKV(expr) assert_non_null(expr)

static weft_graph_t *g;

static int setup(void **state)
{
    (void)state;
    return weft_graph_create(NULL, &g) == WEFT_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    weft_graph_destroy(g);
    g = NULL;
    return 0;
}

/* A float64 vector holding vals[0..n). */
static weft_tensor_t *vec(size_t n, const double *vals)
{
    int64_t len = (int64_t)n;
    weft_tensor_t *t;
    OK(weft_tensor_empty(WEFT_FLOAT64, 1, &len, &t));
    for (size_t i = 0; i < n; i++) ((double *)weft_tensor_data(t))[i] = vals[i];
    return t;
}

static weft_var_t *var(const char *name, int64_t len)
{
    const weft_type_t *t;
    weft_var_t *v;
    OK(weft_type_tensor(g, WEFT_FLOAT64, 1, &len, &t));
    OKV(v = weft_var_create(g, t, name));
    return v;
}

static void assert_vec(const weft_tensor_t *t, size_t n, const double *want)
{
    assert_int_equal(weft_tensor_size(t), n);
    for (size_t i = 0; i < n; i++) assert_true(weft_tensor_flat_get(t, i) == want[i]);
}

static void assert_shared(const weft_var_t *v, size_t n, const double *want)
{
    weft_tensor_t *t;
    OK(weft_shared_get(v, &t));
    assert_vec(t, n, want);
    weft_tensor_release(t);
}

static weft_var_t *add_scalar(weft_var_t *x, double c)
{
    weft_var_t *y;
    OKV(y = weft_binary_scalar(g, WEFT_ELEMWISE_ADD, x, c));
    return y;
}

static weft_function_t *compile(size_t n_in, weft_var_t **in, size_t n_out, weft_var_t **out,
                                size_t n_upd, const weft_update_t *ups)
{
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.threads = 2;
    weft_function_t *f = NULL;
    weft_status_t st = weft_function_compile(n_in, in, n_out, out, n_upd, ups, &o, &f);
    if (st != WEFT_OK) print_message("compile: %s\n", weft_function_last_error(NULL));
    OK(st);
    return f;
}

/* The variable holds a copy: changing the creating tensor changes nothing. */
static void test_shared_holds_a_copy_of_its_value(void **state)
{
    (void)state;
    weft_tensor_t *w0 = vec(3, (double[]){1, 2, 3});
    weft_var_t *w = weft_shared(g, w0, "W");
    assert_non_null(w);
    assert_true(weft_var_is_shared(w));
    assert_false(weft_var_is_shared(var("x", 3)));
    assert_string_equal(weft_var_name(w), "W");
    char tb[32];
    weft_type_print(weft_var_type(w), tb, sizeof tb);
    assert_string_equal(tb, "float64[3]");
    ((double *)weft_tensor_data(w0))[0] = 99;
    assert_shared(w, 3, (double[]){1, 2, 3});
    weft_tensor_release(w0);
}

/* y = x + W: W is not passed; a set between calls is seen by the next call. */
static void test_shared_function_reads_the_latest_value(void **state)
{
    (void)state;
    weft_tensor_t *w0 = vec(3, (double[]){1, 2, 3}), *w1 = vec(3, (double[]){10, 20, 30});
    weft_var_t *w = weft_shared(g, w0, "W"), *x = var("x", 3), *y;
    OKV(y = weft_add(g, x, w));
    weft_function_t *f = compile(1, &x, 1, &y, 0, NULL);
    assert_int_equal(weft_function_n_inputs(f), 1);
    assert_int_equal(weft_function_n_outputs(f), 1);
    weft_tensor_t *tx = vec(3, (double[]){1, 1, 1}), *ty = vec(3, (double[]){0, 0, 0});
    OK(weft_function_call(f, 1, &tx, 1, &ty));
    assert_vec(ty, 3, (double[]){2, 3, 4});
    OK(weft_shared_set(w, w1));
    OK(weft_function_call(f, 1, &tx, 1, &ty));
    assert_vec(ty, 3, (double[]){11, 21, 31});
    OK(weft_function_destroy(f));
    weft_tensor_release(tx);
    weft_tensor_release(ty);
    weft_tensor_release(w0);
    weft_tensor_release(w1);
}

/* A counter: every node reads the old value, the update lands after the call;
 * a tensor from weft_shared_get keeps its elements. */
static void test_shared_update_applies_after_each_call(void **state)
{
    (void)state;
    weft_tensor_t *c0 = vec(2, (double[]){0, 5});
    weft_var_t *c = weft_shared(g, c0, "count"), *y;
    OKV(y = weft_binary_scalar(g, WEFT_ELEMWISE_MUL, c, 2.0));
    weft_update_t up = {c, add_scalar(c, 1)};
    weft_function_t *f = compile(0, NULL, 1, &y, 1, &up);
    weft_tensor_t *held;
    OK(weft_shared_get(c, &held));
    for (int k = 0; k < 3; k++) {
        weft_tensor_t *out = NULL;
        OK(weft_function_call(f, 0, NULL, 1, &out));
        assert_vec(out, 2, (double[]){2.0 * k, 2.0 * (5 + k)});
        weft_tensor_release(out);
    }
    assert_shared(c, 2, (double[]){3, 8});
    assert_vec(held, 2, (double[]){0, 5}); /* the value held before: unchanged */
    weft_tensor_release(held);
    OK(weft_function_destroy(f));
    weft_tensor_release(c0);
}

/* out = x + z fails at run time when the lengths differ; the updates of W
 * (W + 1, computed by a node that does run) and V are not applied. */
static void test_shared_failed_call_applies_no_update(void **state)
{
    (void)state;
    weft_tensor_t *w0 = vec(2, (double[]){1, 2});
    weft_var_t *w = weft_shared(g, w0, "W"), *v = weft_shared(g, w0, "V");
    weft_var_t *x = var("x", WEFT_DIM_UNKNOWN), *z = var("z", WEFT_DIM_UNKNOWN), *out;
    OKV(out = weft_add(g, x, z));
    weft_update_t ups[2] = {{w, add_scalar(w, 1)}, {v, add_scalar(v, 10)}};
    weft_var_t *in[2] = {x, z};
    weft_function_t *f = compile(2, in, 1, &out, 2, ups);
    weft_tensor_t *t3 = vec(3, (double[]){1, 1, 1}), *t2 = vec(2, (double[]){1, 1});
    weft_tensor_t *bad[2] = {t3, t2}, *good[2] = {t2, t2}, *res = NULL;
    assert_int_equal(weft_function_call(f, 2, bad, 1, &res), WEFT_ESHAPE);
    assert_null(res);
    assert_non_null(strstr(weft_function_last_error(f), "Add"));
    assert_shared(w, 2, (double[]){1, 2});
    assert_shared(v, 2, (double[]){1, 2});
    OK(weft_function_call(f, 2, good, 1, &res));
    assert_vec(res, 2, (double[]){2, 2});
    assert_shared(w, 2, (double[]){2, 3});
    assert_shared(v, 2, (double[]){11, 12});
    weft_tensor_release(res);
    OK(weft_function_destroy(f));
    weft_tensor_release(t3);
    weft_tensor_release(t2);
    weft_tensor_release(w0);
}

/* A call canceled before it committed applies no update either. */
static void test_shared_canceled_call_applies_no_update(void **state)
{
    (void)state;
    weft_tensor_t *c0 = vec(1, (double[]){4});
    weft_var_t *c = weft_shared(g, c0, "c");
    weft_update_t up = {c, add_scalar(c, 1)};
    weft_function_t *f = compile(0, NULL, 0, NULL, 1, &up);
    weft_call_token_t *tok;
    OK(weft_call_token_create(&tok));
    OK(weft_call_token_cancel(tok));
    weft_call_options_t co = WEFT_CALL_OPTIONS_INIT;
    co.token = tok;
    assert_int_equal(weft_function_call_ex(f, 0, NULL, 0, NULL, &co), WEFT_ECANCELED);
    assert_shared(c, 1, (double[]){4});
    OK(weft_call_token_reset(tok));
    OK(weft_function_call_ex(f, 0, NULL, 0, NULL, &co));
    assert_shared(c, 1, (double[]){5});
    OK(weft_call_token_destroy(tok));
    OK(weft_function_destroy(f));
    weft_tensor_release(c0);
}

/* The function holds the storage: it keeps working after the graph is gone. */
static void test_shared_function_outlives_its_graph(void **state)
{
    (void)state;
    weft_graph_t *g2;
    OK(weft_graph_create(NULL, &g2));
    weft_tensor_t *c0 = vec(1, (double[]){7});
    weft_var_t *c = weft_shared(g2, c0, "c"), *c1;
    OKV(c1 = weft_binary_scalar(g2, WEFT_ELEMWISE_ADD, c, 1.0));
    weft_update_t up = {c, c1};
    weft_function_t *f = NULL;
    OK(weft_function_compile(0, NULL, 1, &c, 1, &up, NULL, &f));
    weft_graph_destroy(g2);
    for (int k = 0; k < 3; k++) {
        weft_tensor_t *out = NULL;
        OK(weft_function_call(f, 0, NULL, 1, &out));
        assert_vec(out, 1, (double[]){7.0 + k});
        weft_tensor_release(out);
    }
    OK(weft_function_destroy(f));
    weft_tensor_release(c0);
}

/* Saved and loaded: the shared variable comes back with its value, the
 * update names it in compile's form, and the loaded graph compiles. */
static void test_shared_json_round_trip_keeps_value_and_update(void **state)
{
    (void)state;
    weft_tensor_t *w0 = vec(2, (double[]){0.5, -1});
    weft_var_t *w = weft_shared(g, w0, "W"), *x = var("x", 2), *y;
    OKV(y = weft_mul(g, x, w));
    weft_update_t up = {w, add_scalar(w, 1)};
    weft_graph_io_t gr = {1, &x, NULL, 1, &y, 1, &up};
    char *text = NULL;
    OK(weft_graph_io_save(&gr, &text));
    assert_non_null(strstr(text, "\"constants\": [\n  {\"id\":3,\"dtype\":\"float64\",\"shape\":[],"
                                 "\"data\":[1.0]}\n ],\n \"shared\": [\n  {\"id\":1,\"name\":\"W\","
                                 "\"dtype\":\"float64\",\"shape\":[2],\"data\":[0.5,-1.0]}\n ],"));
    assert_non_null(strstr(text, "\"updates\": [\n  {\"input\":1,"));
    weft_graph_t *g2;
    OK(weft_graph_create(NULL, &g2));
    weft_graph_io_t ld;
    OK(weft_graph_io_load(g2, text, strlen(text), "t.json", &ld));
    weft_graph_io_free_text(text);
    assert_int_equal(ld.n_inputs, 1);
    assert_int_equal(ld.n_updates, 1);
    assert_true(weft_var_is_shared(ld.updates[0].var));
    assert_string_equal(weft_var_name(ld.updates[0].var), "W");
    weft_function_t *f = NULL;
    OK(weft_function_compile(ld.n_inputs, ld.inputs, ld.n_outputs, ld.outputs, ld.n_updates,
                             ld.updates, NULL, &f));
    weft_tensor_t *tx = vec(2, (double[]){2, 2}), *ty = NULL;
    OK(weft_function_call(f, 1, &tx, 1, &ty));
    assert_vec(ty, 2, (double[]){1, -2});
    assert_shared(ld.updates[0].var, 2, (double[]){1.5, 0});
    assert_shared(w, 2, (double[]){0.5, -1}); /* the original is a separate variable */
    OK(weft_function_destroy(f));
    weft_graph_io_clear(&ld);
    weft_graph_destroy(g2);
    weft_tensor_release(tx);
    weft_tensor_release(ty);
    weft_tensor_release(w0);
}

/* An update ending in a view op leaves a strided value: read, saved and
 * used by the next call as any value. */
static void test_shared_value_may_be_a_view(void **state)
{
    (void)state;
    int64_t s22[2] = {2, 2};
    weft_tensor_t *w0, *v;
    OK(weft_tensor_empty(WEFT_FLOAT64, 2, s22, &w0));
    for (int i = 0; i < 4; i++) ((double *)weft_tensor_data(w0))[i] = i + 1;
    weft_var_t *w = weft_shared(g, w0, "W"), *w2, *wt;
    OKV(w2 = weft_binary_scalar(g, WEFT_ELEMWISE_MUL, w, 2.0));
    OKV(wt = weft_transpose(g, w2));
    weft_update_t up = {w, wt};
    weft_function_t *f = compile(0, NULL, 0, NULL, 1, &up);
    OK(weft_function_call(f, 0, NULL, 0, NULL));
    OK(weft_shared_get(w, &v));
    assert_false(weft_tensor_is_contiguous(v));
    weft_tensor_release(v);
    assert_shared(w, 4, (double[]){2, 6, 4, 8});
    weft_graph_io_t gr = {0, NULL, NULL, 1, &w2, 0, NULL};
    char *text = NULL;
    OK(weft_graph_io_save(&gr, &text));
    assert_non_null(strstr(text, "\"shape\":[2,2],\"data\":[2.0,6.0,4.0,8.0]}"));
    weft_graph_io_free_text(text);
    OK(weft_function_call(f, 0, NULL, 0, NULL));
    assert_shared(w, 4, (double[]){4, 8, 12, 16});
    OK(weft_function_destroy(f));
    weft_tensor_release(w0);
}

/* With caller-supplied outputs, warm calls that update allocate nothing: the
 * old value's buffer becomes the next update's target. */
static void test_shared_warm_calls_allocate_nothing(void **state)
{
    (void)state;
    weft_tensor_t *w0 = vec(4, (double[]){1, 2, 3, 4});
    weft_var_t *w = weft_shared(g, w0, "W"), *x = var("x", 4), *y, *w2;
    OKV(y = weft_mul(g, x, w));
    OKV(w2 = weft_sub(g, w, y));
    weft_update_t up = {w, w2};
    weft_function_t *f = compile(1, &x, 1, &y, 1, &up);
    weft_tensor_t *tx = vec(4, (double[]){0.5, 0.5, 0.5, 0.5});
    weft_tensor_t *ty = vec(4, (double[]){0, 0, 0, 0});
    for (int k = 0; k < 4; k++) OK(weft_function_call(f, 1, &tx, 1, &ty));
    alloc_count_start();
    OK(weft_function_call(f, 1, &tx, 1, &ty));
    assert_int_equal(alloc_count_stop(), 0);
    assert_shared(w, 4, (double[]){1.0 / 32, 2.0 / 32, 3.0 / 32, 4.0 / 32});
    OK(weft_function_destroy(f));
    weft_tensor_release(tx);
    weft_tensor_release(ty);
    weft_tensor_release(w0);
}

typedef struct runner {
    weft_function_t *f;
    int calls;
} runner_t;

static void *run_calls(void *arg)
{
    runner_t *r = arg;
    for (int k = 0; k < r->calls; k++)
        if (weft_function_call(r->f, 0, NULL, 0, NULL) != WEFT_OK) return arg;
    return NULL;
}

/* Two functions updating one counter from two threads: no update is lost. */
static void test_shared_concurrent_updates_serialize(void **state)
{
    (void)state;
    weft_tensor_t *c0 = vec(1, (double[]){0});
    weft_var_t *c = weft_shared(g, c0, "c");
    weft_update_t up1 = {c, add_scalar(c, 1)}, up2 = {c, add_scalar(c, 2)};
    runner_t r[2] = {{compile(0, NULL, 0, NULL, 1, &up1), 300},
                     {compile(0, NULL, 0, NULL, 1, &up2), 300}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&th[i], NULL, run_calls, &r[i]), 0);
    for (int i = 0; i < 2; i++) {
        void *res;
        pthread_join(th[i], &res);
        assert_null(res);
    }
    assert_shared(c, 1, (double[]){900});
    for (int i = 0; i < 2; i++) OK(weft_function_destroy(r[i].f));
    weft_tensor_release(c0);
}

/* One run of: a shared variable made, y = x * W with W <- W - y compiled,
 * called twice, the value read; allocation k failing (0: none). Returns the
 * allocations made; *res the final value's first element (0 on failure). */
static long faulted_once(long k, weft_status_t *st, char *msg, size_t cap, double *res)
{
    weft_graph_t *g2 = NULL;
    weft_function_t *f = NULL;
    weft_tensor_t *w0 = vec(2, (double[]){2, 3}), *tx = vec(2, (double[]){0.5, 0.5}), *v = NULL;
    weft_var_t *x = NULL, *w = NULL, *y = NULL, *w2 = NULL;
    const weft_type_t *t;
    *res = 0;
    msg[0] = '\0';
    alloc_fail_at(k);
    *st = weft_graph_create(NULL, &g2);
    if (*st != WEFT_OK) snprintf(msg, cap, "out of memory (no context to say so)");
    if (*st == WEFT_OK) *st = weft_type_tensor(g2, WEFT_FLOAT64, 1, (int64_t[]){2}, &t);
    if (*st == WEFT_OK) { /* the construction, checked once */
        x = weft_var_create(g2, t, "x");
        w = weft_shared(g2, w0, "W");
        y = weft_mul(g2, x, w);
        w2 = weft_sub(g2, w, y);
        *st = weft_graph_error(g2);
    }
    if (g2 && *st != WEFT_OK) /* a constructor's kept error, else the last one's */
        snprintf(msg, cap, "%s",
                 weft_graph_error(g2) ? weft_graph_error_message(g2) : weft_graph_last_error(g2));
    weft_update_t up = {w, w2};
    if (*st == WEFT_OK) {
        *st = weft_function_compile(1, &x, 1, &y, 1, &up, NULL, &f);
        if (*st != WEFT_OK) snprintf(msg, cap, "%s", weft_function_last_error(NULL));
    }
    for (int c = 0; c < 2 && *st == WEFT_OK; c++) {
        weft_tensor_t *out = NULL;
        *st = weft_function_call(f, 1, &tx, 1, &out);
        if (*st != WEFT_OK) snprintf(msg, cap, "%s", weft_function_last_error(f));
        weft_tensor_release(out);
    }
    if (*st == WEFT_OK) *st = weft_shared_get(w, &v);
    if (*st == WEFT_OK) *res = weft_tensor_flat_get(v, 0);
    weft_tensor_release(v);
    OK(weft_function_destroy(f));
    weft_graph_destroy(g2);
    long n = alloc_count_stop();
    weft_tensor_release(w0);
    weft_tensor_release(tx);
    return n;
}

/* Allocation k fails, for every k: WEFT_ENOMEM saying so, or the same
 * result; nothing leaks (LeakSanitizer in the ASan build). */
static void test_shared_allocation_failures_are_clean(void **state)
{
    (void)state;
    fault_sweep(faulted_once, 0.5, 10); /* W: 2 -> 1 -> 0.5 */
}

static void test_shared_bad_arguments_are_named(void **state)
{
    (void)state;
    weft_tensor_t *w0 = vec(2, (double[]){1, 2}), *w3 = vec(3, (double[]){1, 2, 3}), *t;
    weft_tensor_t *i2;
    int64_t two = 2;
    OK(weft_tensor_zeros(WEFT_INT32, 1, &two, &i2));
    weft_var_t *w = weft_shared(g, w0, "W"), *x = var("x", 2);
    assert_null(weft_shared(g, NULL, "bad"));
    assert_int_equal(weft_graph_error(g), WEFT_EINVAL);
    assert_non_null(strstr(weft_graph_error_message(g), "weft_shared: NULL value (weft_shared at "));
    assert_null(weft_shared(NULL, w0, "bad"));
    weft_graph_clear_error(g); /* so the compiles below see no kept error */
    assert_int_equal(weft_shared_set(w, w3), WEFT_ESHAPE);
    assert_string_equal(weft_shared_last_error(),
                        "weft_shared_set: W is float64[2], the value float64[3]");
    assert_int_equal(weft_shared_set(w, i2), WEFT_ETYPE);
    assert_int_equal(weft_shared_set(x, w0), WEFT_EINVAL);
    assert_non_null(strstr(weft_shared_last_error(), "x is not a shared variable"));
    assert_int_equal(weft_shared_get(x, &t), WEFT_EINVAL);
    assert_null(t);
    assert_int_equal(weft_shared_get(NULL, &t), WEFT_EINVAL);
    assert_int_equal(weft_shared_get(w, NULL), WEFT_EINVAL);
    assert_int_equal(weft_shared_set(w, NULL), WEFT_EINVAL);
    assert_shared(w, 2, (double[]){1, 2});
    /* compile: a shared variable listed as an input; an update of another type */
    weft_var_t *y, *in[2] = {x, w};
    OKV(y = weft_add(g, x, w));
    weft_function_t *f = NULL;
    assert_int_equal(weft_function_compile(2, in, 1, &y, 0, NULL, NULL, &f), WEFT_EINVAL);
    assert_non_null(strstr(weft_function_last_error(NULL), "input 1: W is a shared variable"));
    weft_var_t *wi;
    OKV(wi = weft_cast(g, w, WEFT_INT32));
    weft_update_t bad = {w, wi}, twice[2] = {{w, y}, {w, y}};
    assert_int_equal(weft_function_compile(1, &x, 1, &y, 1, &bad, NULL, &f), WEFT_ETYPE);
    assert_non_null(strstr(weft_function_last_error(NULL), "update 0: W is float64[2] but its "
                                                           "value is int32[2]"));
    assert_int_equal(weft_function_compile(1, &x, 1, &y, 2, twice, NULL, &f), WEFT_EINVAL);
    assert_non_null(strstr(weft_function_last_error(NULL), "update 1: W is updated twice"));
    assert_null(f);
    /* call: the caller passes only its own inputs */
    f = compile(1, &x, 1, &y, 0, NULL);
    weft_tensor_t *args[2] = {w0, w0}, *out = NULL;
    assert_int_equal(weft_function_call(f, 2, args, 1, &out), WEFT_EINVAL);
    assert_string_equal(weft_function_last_error(f), "function takes 1 inputs, got 2");
    OK(weft_function_destroy(f));
    weft_tensor_release(w0);
    weft_tensor_release(w3);
    weft_tensor_release(i2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_shared_holds_a_copy_of_its_value, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shared_function_reads_the_latest_value, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_shared_update_applies_after_each_call, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_shared_failed_call_applies_no_update, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_shared_canceled_call_applies_no_update, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_shared_function_outlives_its_graph, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shared_json_round_trip_keeps_value_and_update, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_shared_value_may_be_a_view, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shared_warm_calls_allocate_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shared_concurrent_updates_serialize, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_shared_allocation_failures_are_clean, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_shared_bad_arguments_are_named, setup, teardown),
    };
    return cmocka_run_group_tests_name("shared", tests, NULL, NULL);
}
