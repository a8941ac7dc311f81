/* Cached elementwise loop plans (docs/execution.md §3.7): a call whose input
 * geometry equals the previous call's runs the cached plans; a change of
 * shape or strides re-plans each affected node exactly once (counted by the
 * function's plan_builds, whitebox). Results are compared bit for bit with the
 * sequential evaluator (which keeps no plans) across shape changes,
 * broadcasting, non-contiguous views, in-place variants, dtype conversions,
 * empty, tiny and large sizes, 1 and 2 workers, and concurrent callers. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "compile_int.h" /* plan_builds */
#include "weft/weft.h"

/* y = tanh(x * b + x) - exp(b), z = x * 0.5 (b broadcasts over rows). */
typedef struct fixture {
    weft_graph_t *g;
    weft_var_t *in[2], *out[2];
} fixture_t;

static void build(fixture_t *fx, weft_dtype_t x_dtype)
{
    int64_t xs[2] = {WEFT_DIM_UNKNOWN, WEFT_DIM_UNKNOWN}, bs[2] = {1, WEFT_DIM_UNKNOWN};
    const weft_type_t *tx, *tb;
    weft_var_t *xb, *s, *t, *e;
    assert_int_equal(weft_graph_create(NULL, &fx->g), WEFT_OK);
    assert_int_equal(weft_type_tensor(fx->g, x_dtype, 2, xs, &tx), WEFT_OK);
    assert_int_equal(weft_type_tensor(fx->g, WEFT_FLOAT64, 2, bs, &tb), WEFT_OK);
    fx->in[0] = weft_var_create(fx->g, tx, "x");
    fx->in[1] = weft_var_create(fx->g, tb, "b");
    xb = weft_mul(fx->g, fx->in[0], fx->in[1]);
    s = weft_add(fx->g, xb, fx->in[0]);
    t = weft_tanh(fx->g, s);
    e = weft_exp(fx->g, fx->in[1]);
    fx->out[0] = weft_sub(fx->g, t, e);
    fx->out[1] = weft_binary_scalar(fx->g, WEFT_ELEMWISE_MUL, fx->in[0], 0.5);
    assert_non_null(fx->out[0]); /* NULL propagates: the outputs are NULL on any error */
    assert_non_null(fx->out[1]);
    assert_int_equal(weft_graph_error(fx->g), WEFT_OK);
}

/* fast_run without fusion (every node runs) and without fast_math (mode
 * none's bits, so the evaluator is the reference); in-place variants stay. */
static weft_function_t *compile_opt(const fixture_t *fx, int threads, bool fused)
{
    static const char *const exclude[] = {"fast_math", "fusion"};
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.n_exclude = fused ? 1 : 2;
    o.exclude = exclude;
    o.threads = threads;
    weft_function_t *f;
    assert_int_equal(weft_function_compile(2, fx->in, 2, fx->out, 0, NULL, &o, &f), WEFT_OK);
    return f;
}

static weft_function_t *compile(const fixture_t *fx, int threads)
{
    return compile_opt(fx, threads, false);
}

/* A tensor of dtype and shape with varied values (v_i = sin(0.37 i + seed)). */
static weft_tensor_t *values(weft_dtype_t dt, int64_t rows, int64_t cols, double seed)
{
    int64_t shape[2] = {rows, cols};
    weft_tensor_t *t;
    assert_int_equal(weft_tensor_empty(dt, 2, shape, &t), WEFT_OK);
    for (int64_t i = 0; i < rows * cols; i++) {
        int64_t idx[2] = {i / cols, i % cols};
        double v = sin(0.37 * (double)i + seed);
        assert_int_equal(weft_tensor_set(t, idx, dt == WEFT_INT32 ? floor(5 * v) : v), WEFT_OK);
    }
    return t;
}

static void assert_same_bits(const weft_tensor_t *a, const weft_tensor_t *b)
{
    assert_true(weft_tensor_same_shape(a, b));
    assert_int_equal(weft_tensor_dtype(a), weft_tensor_dtype(b));
    for (size_t i = 0; i < weft_tensor_size(a); i++) {
        double x = weft_tensor_flat_get(a, i), y = weft_tensor_flat_get(b, i);
        assert_memory_equal(&x, &y, sizeof x);
    }
}

/* Calls f on (x, b) and checks both outputs against the evaluator's bits. */
static void check_call(const fixture_t *fx, weft_function_t *f, weft_tensor_t *x,
                       weft_tensor_t *b)
{
    weft_tensor_t *in[2] = {x, b}, *got[2] = {NULL, NULL}, *want[2];
    assert_int_equal(weft_eval(fx->g, 2, fx->in, in, 2, fx->out, want), WEFT_OK);
    weft_status_t st = weft_function_call(f, 2, in, 2, got);
    if (st != WEFT_OK) fail_msg("%s", weft_function_last_error(f));
    for (int k = 0; k < 2; k++) {
        assert_same_bits(got[k], want[k]);
        weft_tensor_release(got[k]);
        weft_tensor_release(want[k]);
    }
}

static uint64_t builds(const weft_function_t *f)
{
    /* relaxed: read between calls of this thread */
    return atomic_load_explicit(&f->plan_builds, memory_order_relaxed);
}

/* Calls f at (rows, cols) with fresh contiguous inputs. */
static void call_shape(const fixture_t *fx, weft_function_t *f, int64_t rows, int64_t cols)
{
    weft_tensor_t *x = values(WEFT_FLOAT64, rows, cols, 0.25);
    weft_tensor_t *b = values(WEFT_FLOAT64, 1, cols, 1.5);
    check_call(fx, f, x, b);
    weft_tensor_release(x);
    weft_tensor_release(b);
}

/* Whether f's printed program contains `what`. */
static bool prints(const weft_function_t *f, const char *what)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    assert_non_null(m);
    assert_int_equal(weft_function_print(f, m), WEFT_OK);
    fclose(m);
    bool found = strstr(buf, what) != NULL;
    free(buf);
    return found;
}

static void test_replans_once_per_shape(void **state)
{
    (void)state;
    fixture_t fx;
    build(&fx, WEFT_FLOAT64);
    weft_function_t *f = compile(&fx, 1);
    assert_true(prints(f, "inplace")); /* the in-place variants are exercised */
    uint64_t nodes = weft_function_n_nodes(f); /* every node is elementwise */
    assert_int_equal(builds(f), 0);
    call_shape(&fx, f, 2, 3);
    assert_int_equal(builds(f), nodes);
    call_shape(&fx, f, 2, 3);
    call_shape(&fx, f, 2, 3);
    assert_int_equal(builds(f), nodes); /* same shapes: the cached plans */
    call_shape(&fx, f, 4, 5);
    assert_int_equal(builds(f), 2 * nodes); /* a shape change re-plans once */
    call_shape(&fx, f, 4, 5);
    assert_int_equal(builds(f), 2 * nodes);
    call_shape(&fx, f, 2, 3);
    assert_int_equal(builds(f), 3 * nodes);
    assert_int_equal(weft_function_destroy(f), WEFT_OK);
    weft_graph_destroy(fx.g);
}

/* Non-contiguous inputs: x transposed, b every other element. A change of
 * strides alone re-plans the nodes reading that input, once. */
static void test_views(void **state)
{
    (void)state;
    fixture_t fx;
    build(&fx, WEFT_FLOAT64);
    weft_function_t *f = compile(&fx, 1);
    weft_tensor_t *xt = values(WEFT_FLOAT64, 5, 3, 0.5), *bb = values(WEFT_FLOAT64, 1, 10, 2.0);
    weft_tensor_t *x, *b, *xc, *bc;
    int64_t xs[2] = {3, 5}, xst[2] = {1, 3}, bs[2] = {1, 5}, bst[2] = {10, 2};
    assert_int_equal(weft_tensor_view(xt, 2, xs, xst, 0, &x), WEFT_OK);
    assert_int_equal(weft_tensor_view(bb, 2, bs, bst, 1, &b), WEFT_OK);
    assert_int_equal(weft_tensor_contiguous(x, &xc), WEFT_OK);
    assert_int_equal(weft_tensor_contiguous(b, &bc), WEFT_OK);
    check_call(&fx, f, x, b);
    uint64_t first = builds(f);
    assert_int_equal(first, weft_function_n_nodes(f));
    check_call(&fx, f, x, b);
    assert_int_equal(builds(f), first);
    check_call(&fx, f, xc, bc); /* same shapes, other strides */
    /* the readers of x or b: Mul(x, b), Add(., x), Exp(b), Mul(x, 0.5) */
    assert_int_equal(builds(f), first + 4);
    check_call(&fx, f, xc, bc);
    check_call(&fx, f, xc, b); /* b strided again: b's readers only */
    assert_int_equal(builds(f), first + 4 + 2);
    weft_tensor_t *rel[6] = {xt, bb, x, b, xc, bc};
    for (int i = 0; i < 6; i++) weft_tensor_release(rel[i]);
    assert_int_equal(weft_function_destroy(f), WEFT_OK);
    weft_graph_destroy(fx.g);
}

/* Empty, tiny (one-row plans), 2-d and large (split over workers) sizes, in
 * a varying order, on 1 and 2 workers: the evaluator's bits every time. */
static void test_sizes_and_workers(void **state)
{
    (void)state;
    static const int64_t sizes[][2] = {{0, 3}, {1, 1}, {2, 3}, {1, 2}, {3, 7},
                                       {300, 400}, {3, 7}, {1, 1}, {300, 400}, {0, 3}};
    fixture_t fx;
    build(&fx, WEFT_FLOAT64);
    for (int threads = 1; threads <= 2; threads++) {
        weft_function_t *f = compile(&fx, threads);
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
            call_shape(&fx, f, sizes[i][0], sizes[i][1]);
        assert_int_equal(weft_function_destroy(f), WEFT_OK);
    }
    weft_graph_destroy(fx.g);
}

/* With fusion, Composite nodes keep their program in the plan: the same
 * re-planning and the evaluator's bits, tiny to large, 1 and 2 workers. */
static void test_composite_plans(void **state)
{
    (void)state;
    static const int64_t sizes[][2] = {{2, 3}, {2, 3}, {300, 400}, {300, 400}, {1, 1}, {2, 3}};
    static const int replans[] = {1, 0, 1, 0, 1, 1};
    fixture_t fx;
    build(&fx, WEFT_FLOAT64);
    for (int threads = 1; threads <= 2; threads++) {
        weft_function_t *f = compile_opt(&fx, threads, true);
        assert_true(prints(f, "Composite"));
        uint64_t nodes = weft_function_n_nodes(f), want = 0;
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
            call_shape(&fx, f, sizes[i][0], sizes[i][1]);
            want += (uint64_t)replans[i] * nodes;
            assert_int_equal(builds(f), want);
        }
        assert_int_equal(weft_function_destroy(f), WEFT_OK);
    }
    weft_graph_destroy(fx.g);
}

/* The largest plan: a Composite of 7 inputs of WEFT_MAX_NDIM axes (run
 * under ASan, an undersized plan buffer would be an overflow). */
static void test_largest_plan(void **state)
{
    (void)state;
    enum { N_IN = 7 };
    int64_t vshape[WEFT_MAX_NDIM], shape[WEFT_MAX_NDIM];
    for (int d = 0; d < WEFT_MAX_NDIM; d++) {
        vshape[d] = WEFT_DIM_UNKNOWN;
        shape[d] = d % 5 == 0 ? 2 : 1;
    }
    weft_graph_t *g;
    const weft_type_t *t;
    weft_var_t *in[N_IN], *y;
    weft_tensor_t *vals[N_IN], *got = NULL, *want;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    assert_int_equal(weft_type_tensor(g, WEFT_FLOAT64, WEFT_MAX_NDIM, vshape, &t), WEFT_OK);
    for (int i = 0; i < N_IN; i++) {
        in[i] = weft_var_create(g, t, "v");
        assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, WEFT_MAX_NDIM, shape, &vals[i]),
                         WEFT_OK);
        for (size_t k = 0; k < weft_tensor_size(vals[i]); k++)
            ((double *)weft_tensor_data(vals[i]))[k] = sin(0.3 * (double)(k + 7 * (size_t)i));
    }
    y = in[0];
    for (int i = 1; i < N_IN; i++) y = i % 2 ? weft_mul(g, y, in[i]) : weft_add(g, y, in[i]);
    assert_non_null(y);
    static const char *const exclude[] = {"fast_math"};
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.n_exclude = 1;
    o.exclude = exclude;
    o.threads = 1;
    weft_function_t *f;
    assert_int_equal(weft_function_compile(N_IN, in, 1, &y, 0, NULL, &o, &f), WEFT_OK);
    assert_true(prints(f, "Composite"));
    assert_int_equal(weft_function_n_nodes(f), 1);
    assert_int_equal(weft_eval(g, N_IN, in, vals, 1, &y, &want), WEFT_OK);
    for (int c = 0; c < 2; c++) {
        assert_int_equal(weft_function_call(f, N_IN, vals, 1, &got), WEFT_OK);
        assert_same_bits(got, want);
        weft_tensor_release(got);
        got = NULL;
    }
    assert_int_equal(builds(f), 1);
    for (int i = 0; i < N_IN; i++) weft_tensor_release(vals[i]);
    weft_tensor_release(want);
    assert_int_equal(weft_function_destroy(f), WEFT_OK);
    weft_graph_destroy(g);
}

/* An int32 x: Mul converts it to float64 (scratch) on every run of a plan. */
static void test_conversions(void **state)
{
    (void)state;
    fixture_t fx;
    build(&fx, WEFT_INT32);
    weft_function_t *f = compile(&fx, 1);
    static const int64_t sizes[][2] = {{2, 3}, {2, 3}, {4, 1}, {4, 1}, {2, 3}};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        weft_tensor_t *x = values(WEFT_INT32, sizes[i][0], sizes[i][1], 0.1);
        weft_tensor_t *b = values(WEFT_FLOAT64, 1, sizes[i][1], 0.7);
        check_call(&fx, f, x, b);
        weft_tensor_release(x);
        weft_tensor_release(b);
    }
    assert_int_equal(builds(f), 3 * weft_function_n_nodes(f));
    assert_int_equal(weft_function_destroy(f), WEFT_OK);
    weft_graph_destroy(fx.g);
}

/* Caller-supplied outputs of 0-d and length-1 results: the tiny path. */
static void test_tiny_supplied_outputs(void **state)
{
    (void)state;
    weft_graph_t *g;
    const weft_type_t *t0;
    weft_var_t *s, *y;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    assert_int_equal(weft_type_tensor(g, WEFT_FLOAT64, 0, NULL, &t0), WEFT_OK);
    s = weft_var_create(g, t0, "s");
    y = s;
    for (int i = 0; i < 5; i++) y = weft_tanh(g, y);
    assert_non_null(y);
    static const char *const exclude[] = {"fusion"};
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.n_exclude = 1;
    o.exclude = exclude;
    o.threads = 1;
    weft_function_t *f;
    assert_int_equal(weft_function_compile(1, &s, 1, &y, 0, NULL, &o, &f), WEFT_OK);
    weft_tensor_t *in, *out;
    assert_int_equal(weft_tensor_full(WEFT_FLOAT64, 0, NULL, 0.75, &in), WEFT_OK);
    assert_int_equal(weft_tensor_zeros(WEFT_FLOAT64, 0, NULL, &out), WEFT_OK);
    double want = 0.75, first = 0;
    for (int i = 0; i < 5; i++) want = tanh(want);
    for (int c = 0; c < 3; c++) {
        assert_int_equal(weft_function_call(f, 1, &in, 1, &out), WEFT_OK);
        double got = weft_tensor_flat_get(out, 0);
        /* Tanh's kernel is within 0.75 ulp of tanh (ew_vmath.h), not libm's
         * bits; every call gives the first call's bits */
        assert_true(fabs(got - want) <= 4e-16);
        if (c == 0) first = got;
        assert_memory_equal(&got, &first, sizeof got);
    }
    assert_int_equal(builds(f), 5);
    weft_tensor_release(in);
    weft_tensor_release(out);
    assert_int_equal(weft_function_destroy(f), WEFT_OK);
    weft_graph_destroy(g);
}

/* Two threads call one function with different shapes at once: each call
 * state keeps its own plans, so both keep their shapes' plans and results. */
typedef struct caller {
    const fixture_t *fx;
    weft_function_t *f;
    int64_t rows, cols;
    weft_tensor_t *x, *b, *want[2];
    int bad;
} caller_t;

static void *caller_main(void *arg)
{
    caller_t *c = arg;
    weft_tensor_t *in[2] = {c->x, c->b};
    for (int i = 0; i < 200 && !c->bad; i++) {
        weft_tensor_t *got[2] = {NULL, NULL};
        if (weft_function_call(c->f, 2, in, 2, got) != WEFT_OK) {
            c->bad = 1;
            break;
        }
        for (int k = 0; k < 2; k++) {
            size_t n = weft_tensor_size(got[k]);
            if (!weft_tensor_same_shape(got[k], c->want[k]) ||
                memcmp(weft_tensor_data(got[k]), weft_tensor_data(c->want[k]), n * 8) != 0)
                c->bad = 1;
            weft_tensor_release(got[k]);
        }
    }
    return NULL;
}

static void test_concurrent_shapes(void **state)
{
    (void)state;
    fixture_t fx;
    build(&fx, WEFT_FLOAT64);
    weft_function_t *f = compile(&fx, 2);
    caller_t c[2] = {{.rows = 2, .cols = 3}, {.rows = 5, .cols = 1}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++) {
        c[i].fx = &fx;
        c[i].f = f;
        c[i].x = values(WEFT_FLOAT64, c[i].rows, c[i].cols, 0.3 * i);
        c[i].b = values(WEFT_FLOAT64, 1, c[i].cols, 1.1 * i);
        weft_tensor_t *in[2] = {c[i].x, c[i].b};
        assert_int_equal(weft_eval(fx.g, 2, fx.in, in, 2, fx.out, c[i].want), WEFT_OK);
    }
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, caller_main, &c[i]), 0);
    for (int i = 0; i < 2; i++) assert_int_equal(pthread_join(th[i], NULL), 0);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(c[i].bad, 0);
        weft_tensor_release(c[i].x);
        weft_tensor_release(c[i].b);
        weft_tensor_release(c[i].want[0]);
        weft_tensor_release(c[i].want[1]);
    }
    assert_int_equal(weft_function_destroy(f), WEFT_OK);
    weft_graph_destroy(fx.g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replans_once_per_shape),
        cmocka_unit_test(test_views),
        cmocka_unit_test(test_sizes_and_workers),
        cmocka_unit_test(test_conversions),
        cmocka_unit_test(test_composite_plans),
        cmocka_unit_test(test_largest_plan),
        cmocka_unit_test(test_tiny_supplied_outputs),
        cmocka_unit_test(test_concurrent_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
