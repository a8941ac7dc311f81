/* Intra-node parallelism: weft_kernel_parallel_for inside a compiled
 * function (ranges cover the loop once, the node_threads option, failing
 * ranges, the evaluator's inline loop) and the split kernels (large Dot,
 * Gemm and elementwise loops) giving the bits of unsplit runs, at any
 * worker count. */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "compile_test_ops.h"

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

/* ---- Ranges{n, grain}(x): a 0-d output = weft_kernel_threads; the range
 * holding index x (0-d input) fails with WEFT_ERANGE ------------------------------ */

typedef struct ranges_props {
    int64_t n, grain;
} ranges_props_t;

#define RANGES_MAX 100000
static atomic_int ranges_hits[RANGES_MAX];
static atomic_int ranges_calls;

typedef struct ranges_loop {
    int64_t fail_at; /* < 0: no range fails */
} ranges_loop_t;

static weft_status_t ranges_body(void *arg, size_t begin, size_t end)
{
    const ranges_loop_t *l = arg;
    /* relaxed: plain counters, read after the call returned (the pool's
     * completion orders them) */
    atomic_fetch_add_explicit(&ranges_calls, 1, memory_order_relaxed);
    for (size_t i = begin; i < end; i++)
        atomic_fetch_add_explicit(&ranges_hits[i], 1, memory_order_relaxed);
    if (l->fail_at >= (int64_t)begin && l->fail_at < (int64_t)end) return WEFT_ERANGE;
    return WEFT_OK;
}

static weft_status_t ranges_make_node(weft_graph_t *gr, const weft_op_t *op, size_t n_in,
                                      weft_var_t *const *in, size_t *n_out,
                                      const weft_type_t **out)
{
    (void)op;
    (void)in;
    if (n_in != 1) return weft_graph_set_error(gr, WEFT_EINVAL, "Ranges takes 1 input");
    *n_out = 1;
    return weft_type_tensor(gr, WEFT_FLOAT64, 0, NULL, &out[0]);
}

static weft_status_t ranges_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                    weft_tensor_t **out, weft_kernel_ctx_t *ctx)
{
    const ranges_props_t *p = weft_op_props(weft_apply_op(node));
    ranges_loop_t l = {(int64_t)weft_tensor_flat_get(in[0], 0)};
    weft_status_t st = weft_kernel_parallel_for(ctx, (size_t)p->n, (size_t)p->grain,
                                                ranges_body, &l);
    if (st != WEFT_OK) return weft_kernel_error(ctx, st, "range holding %lld failed",
                                                (long long)l.fail_at);
    st = weft_kernel_alloc_output(ctx, &out[0], WEFT_FLOAT64, 0, NULL);
    if (st == WEFT_OK) *(double *)weft_tensor_data(out[0]) = (double)weft_kernel_threads(ctx);
    return st;
}

static const weft_op_class_t ranges_class = {.size = sizeof(weft_op_class_t),
                                             .name = "Ranges",
                                             .props_size = sizeof(ranges_props_t),
                                             .make_node = ranges_make_node,
                                             .perform = ranges_perform};

static void ranges_reset(void)
{
    for (size_t i = 0; i < RANGES_MAX; i++) atomic_store(&ranges_hits[i], 0);
    atomic_store(&ranges_calls, 0);
}

static int64_t ranges_count_hit(int64_t n, int times)
{
    int64_t ok = 0;
    for (int64_t i = 0; i < n; i++) ok += atomic_load(&ranges_hits[i]) == times;
    return ok;
}

/* Compiles Ranges(x) on a 2-worker pool with node_threads; x is 0-d. */
static weft_function_t *ranges_function(ranges_props_t p, int node_threads, weft_var_t **x_out)
{
    weft_var_t *x = ct_var(g, "x", 0, NULL);
    weft_var_t *y = ct_call(g, &ranges_class, &p, 1, x, NULL);
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.mode = "none";
    o.threads = 2;
    o.node_threads = node_threads;
    weft_function_t *f = NULL;
    assert_int_equal(weft_function_compile(1, &x, 1, &y, 0, NULL, &o, &f), WEFT_OK);
    *x_out = x;
    return f;
}

/* Calls f with x = fail_at; returns the output (-1 when the call failed). */
static double call_ranges(weft_function_t *f, double fail_at, weft_status_t want)
{
    weft_tensor_t *xv = ct_tensor(0, NULL, fail_at), *yv = NULL;
    assert_int_equal(weft_function_call(f, 1, &xv, 1, &yv), want);
    double r = yv ? weft_tensor_flat_get(yv, 0) : -1.0;
    weft_tensor_release(yv);
    weft_tensor_release(xv);
    return r;
}

static void test_intranode_ranges_cover_the_loop_once_on_two_workers(void **state)
{
    (void)state;
    weft_var_t *x;
    weft_function_t *f = ranges_function((ranges_props_t){RANGES_MAX, 1000}, 0, &x);
    for (int rep = 0; rep < 5; rep++) {
        ranges_reset();
        assert_true(call_ranges(f, -1, WEFT_OK) == 2.0); /* the kernel saw 2 workers */
        assert_int_equal(ranges_count_hit(RANGES_MAX, 1), RANGES_MAX);
        assert_int_equal(atomic_load(&ranges_calls), RANGES_MAX / 1000);
    }
    weft_function_destroy(f);
}

/* Grain 0 cuts by the length alone: 16 ranges whatever the worker count. */
static void test_intranode_default_grain_depends_on_the_length_alone(void **state)
{
    (void)state;
    weft_var_t *x;
    weft_function_t *f = ranges_function((ranges_props_t){1001, 0}, 0, &x);
    ranges_reset();
    assert_true(call_ranges(f, -1, WEFT_OK) == 2.0);
    assert_int_equal(ranges_count_hit(1001, 1), 1001);
    assert_int_equal(atomic_load(&ranges_calls), 16); /* grain ceil(1001 / 16) = 63 */
    weft_function_destroy(f);
}

static void test_intranode_node_threads_1_runs_one_inline_range(void **state)
{
    (void)state;
    weft_var_t *x;
    weft_function_t *f = ranges_function((ranges_props_t){5000, 10}, 1, &x);
    ranges_reset();
    assert_true(call_ranges(f, -1, WEFT_OK) == 1.0);
    assert_int_equal(ranges_count_hit(5000, 1), 5000);
    assert_int_equal(atomic_load(&ranges_calls), 1);
    weft_function_destroy(f);
}

static void test_intranode_node_threads_above_pool_size_means_all_workers(void **state)
{
    (void)state;
    weft_var_t *x;
    weft_function_t *f = ranges_function((ranges_props_t){64, 1}, 9, &x);
    ranges_reset();
    assert_true(call_ranges(f, -1, WEFT_OK) == 2.0);
    assert_int_equal(ranges_count_hit(64, 1), 64);
    weft_function_destroy(f);
}

static void test_intranode_failing_range_fails_the_node_and_next_call_works(void **state)
{
    (void)state;
    weft_var_t *x;
    weft_function_t *f = ranges_function((ranges_props_t){20000, 100}, 0, &x);
    ranges_reset();
    assert_true(call_ranges(f, 12345, WEFT_ERANGE) == -1.0);
    const char *msg = weft_function_last_error(f);
    assert_non_null(strstr(msg, "Ranges"));
    assert_non_null(strstr(msg, "compile_test_ops.c"));
    assert_non_null(strstr(msg, "range holding 12345 failed"));
    assert_int_equal(atomic_load(&ranges_hits[12345]), 1); /* the failing range ran once */
    assert_true(atomic_load(&ranges_calls) <= 200);
    ranges_reset();
    assert_true(call_ranges(f, -1, WEFT_OK) == 2.0);
    assert_int_equal(ranges_count_hit(20000, 1), 20000);
    weft_function_destroy(f);
}

static void test_intranode_evaluator_runs_one_inline_range(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 0, NULL);
    ranges_props_t p = {300, 7};
    weft_var_t *y = ct_call(g, &ranges_class, &p, 1, x, NULL);
    weft_tensor_t *xv = ct_tensor(0, NULL, -1.0), *yv = NULL;
    ranges_reset();
    assert_int_equal(weft_eval(g, 1, &x, &xv, 1, &y, &yv), WEFT_OK);
    assert_true(weft_tensor_flat_get(yv, 0) == 1.0);
    assert_int_equal(atomic_load(&ranges_calls), 1);
    assert_int_equal(ranges_count_hit(300, 1), 300);
    weft_tensor_release(yv);
    weft_tensor_release(xv);
}

static weft_status_t never_called(void *arg, size_t begin, size_t end)
{
    (void)arg;
    (void)begin;
    (void)end;
    fail_msg("a range ran");
    return WEFT_OK;
}

static void test_intranode_bad_arguments(void **state)
{
    (void)state;
    assert_int_equal(weft_kernel_parallel_for(NULL, 10, 1, never_called, NULL), WEFT_EINVAL);
    assert_int_equal(weft_kernel_threads(NULL), 1);
    weft_var_t *x = ct_var(g, "x", 0, NULL), *y = ct_call(g, &ct_twice_class, NULL, 1, x, NULL);
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.node_threads = -1;
    weft_function_t *f = NULL;
    assert_int_equal(weft_function_compile(1, &x, 1, &y, 0, NULL, &o, &f), WEFT_EINVAL);
    assert_null(f);
    assert_string_equal(weft_function_last_error(NULL), "node_threads -1 < 0");
}

/* ---- split kernels give the unsplit results --------------------------------------- */

static weft_var_t *matrix(const char *name, int64_t r, int64_t c)
{
    int64_t shape[2] = {r, c};
    return ct_var(g, name, 2, shape);
}

/* Deterministic values in [-1, 1) (a multiplicative hash of the index). */
static weft_tensor_t *typed_filled(weft_dtype_t dt, int nd, const int64_t *shape, uint32_t seed)
{
    weft_tensor_t *t = NULL;
    assert_int_equal(weft_tensor_empty(dt, nd, shape, &t), WEFT_OK);
    for (size_t i = 0; i < weft_tensor_size(t); i++) {
        double v = (double)((((uint32_t)i + seed) * 2654435761u) >> 8) / (double)(1u << 23) - 1.0;
        if (dt == WEFT_FLOAT32) ((float *)weft_tensor_data(t))[i] = (float)v;
        else ((double *)weft_tensor_data(t))[i] = v;
    }
    return t;
}

static weft_tensor_t *filled(int64_t r, int64_t c, uint32_t seed)
{
    int64_t shape[2] = {r, c};
    return typed_filled(WEFT_FLOAT64, 2, shape, seed);
}

/* Runs outputs on 2 workers with node_threads 0 (split) and 1 (unsplit) and
 * returns the largest absolute difference over every output element. */
static double split_vs_unsplit(size_t n_in, weft_var_t **in, weft_tensor_t **vals, size_t n_out,
                               weft_var_t **out)
{
    weft_tensor_t *res[2][4] = {{NULL}};
    for (int v = 0; v < 2; v++) {
        weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
        o.threads = 2;
        o.node_threads = v == 0 ? 0 : 1;
        weft_function_t *f = NULL;
        assert_int_equal(weft_function_compile(n_in, in, n_out, out, 0, NULL, &o, &f), WEFT_OK);
        assert_int_equal(weft_function_call(f, n_in, vals, n_out, res[v]), WEFT_OK);
        weft_function_destroy(f);
    }
    double worst = 0.0;
    for (size_t k = 0; k < n_out; k++) {
        assert_true(weft_tensor_same_shape(res[0][k], res[1][k]));
        for (size_t i = 0; i < weft_tensor_size(res[0][k]); i++) {
            double d = weft_tensor_flat_get(res[0][k], i) - weft_tensor_flat_get(res[1][k], i);
            worst = d < 0 ? (-d > worst ? -d : worst) : (d > worst ? d : worst);
        }
        weft_tensor_release(res[0][k]);
        weft_tensor_release(res[1][k]);
    }
    return worst;
}

/* Tall (row panels), wide (column panels), a transposed operand, and Gemm
 * with beta: 4.8M-12M multiply-adds each, above the split threshold (2^22). */
static void test_intranode_split_products_match_unsplit(void **state)
{
    (void)state;
    weft_var_t *a = matrix("a", 300, 200), *b = matrix("b", 200, 100);
    weft_var_t *w = matrix("w", 40, 200), *v = matrix("v", 200, 600), *z = matrix("z", 300, 100);
    weft_var_t *tall, *wide, *at, *tr, *gm, *one, *half;
    assert_non_null(tall = weft_dot(g, a, b));
    assert_non_null(wide = weft_dot(g, w, v));
    assert_non_null(at = weft_transpose(g, v)); /* 600 x 200 */
    assert_non_null(tr = weft_dot(g, at, b));   /* 600 x 100 */
    assert_non_null(one = weft_constant_scalar(g, WEFT_FLOAT64, 1.5));
    assert_non_null(half = weft_constant_scalar(g, WEFT_FLOAT64, -0.5));
    assert_non_null(gm = weft_gemm(g, z, one, a, b, half, false));
    weft_var_t *in[] = {a, b, w, v, z}, *out[] = {tall, wide, tr, gm};
    weft_tensor_t *vals[] = {filled(300, 200, 1), filled(200, 100, 2), filled(40, 200, 3),
                             filled(200, 600, 4), filled(300, 100, 5)};
    /* the same fixed blocks, one BLAS call each, on one worker or two */
    assert_true(split_vs_unsplit(5, in, vals, 4, out) == 0.0);
    for (int i = 0; i < 5; i++) weft_tensor_release(vals[i]);
}

/* An RNN step's products (2^21 multiply-adds, one BLAS call each: below the
 * split threshold) give the evaluator's bits at 1, 2 and 4 workers. */
static void test_intranode_rnn_step_products_same_bits_at_any_worker_count(void **state)
{
    (void)state;
    weft_var_t *h = matrix("h", 32, 256), *u = matrix("u", 256, 256), *z = matrix("z", 32, 256);
    weft_var_t *x = matrix("x", 32, 256), *xt, *one, *out[3], *in[] = {h, u, z, x};
    assert_non_null(out[0] = weft_dot(g, h, u));
    assert_non_null(one = weft_constant_scalar(g, WEFT_FLOAT64, 1.0));
    assert_non_null(out[1] = weft_gemm(g, z, one, h, u, one, false));
    assert_non_null(xt = weft_transpose(g, x));
    assert_non_null(out[2] = weft_dot(g, xt, z)); /* 256x32 @ 32x256 */
    weft_tensor_t *vals[] = {filled(32, 256, 7), filled(256, 256, 8), filled(32, 256, 9),
                             filled(32, 256, 10)};
    weft_tensor_t *ref[3] = {NULL};
    assert_int_equal(weft_eval(g, 4, in, vals, 3, out, ref), WEFT_OK);
    for (int w = 1; w <= 4; w *= 2) {
        weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
        o.mode = "none";
        o.threads = w;
        weft_function_t *f = NULL;
        assert_int_equal(weft_function_compile(4, in, 3, out, 0, NULL, &o, &f), WEFT_OK);
        weft_tensor_t *res[3] = {NULL};
        assert_int_equal(weft_function_call(f, 4, vals, 3, res), WEFT_OK);
        for (int k = 0; k < 3; k++) {
            size_t bytes = weft_tensor_size(ref[k]) * sizeof(double);
            assert_int_equal(weft_tensor_size(res[k]), weft_tensor_size(ref[k]));
            if (memcmp(weft_tensor_data(res[k]), weft_tensor_data(ref[k]), bytes) != 0)
                fail_msg("output %d: %d workers differ from the evaluator", k, w);
            weft_tensor_release(res[k]);
        }
        weft_function_destroy(f);
    }
    for (int k = 0; k < 3; k++) weft_tensor_release(ref[k]);
    for (int i = 0; i < 4; i++) weft_tensor_release(vals[i]);
}

/* tanh(x + bias) (costly kind, broadcast row), x.T * y (strided operand),
 * x + y (cheap kind above its threshold): element for element equal. */
static void test_intranode_split_elementwise_is_exact(void **state)
{
    (void)state;
    weft_var_t *x = matrix("x", 500, 300), *bias = NULL, *y = matrix("y", 300, 500);
    int64_t bshape[2] = {1, 300};
    const weft_type_t *bt;
    assert_int_equal(weft_type_tensor(g, WEFT_FLOAT64, 2, bshape, &bt), WEFT_OK);
    assert_non_null(bias = weft_var_create(g, bt, "bias"));
    weft_var_t *s, *t1, *xt, *m, *yt, *sum;
    assert_non_null(s = weft_add(g, x, bias));
    assert_non_null(t1 = weft_tanh(g, s));
    assert_non_null(xt = weft_transpose(g, x));
    assert_non_null(m = weft_mul(g, xt, y));
    assert_non_null(yt = weft_transpose(g, y));
    assert_non_null(sum = weft_add(g, x, yt));
    weft_var_t *in[] = {x, bias, y}, *out[] = {t1, m, sum};
    weft_tensor_t *vals[] = {filled(500, 300, 7), filled(1, 300, 8), filled(300, 500, 9)};
    assert_true(split_vs_unsplit(3, in, vals, 3, out) == 0.0);
    for (int i = 0; i < 3; i++) weft_tensor_release(vals[i]);
}

/* 4 threads call one function whose Dot and tanh split over the 2 workers
 * while the other calls' nodes run too (each call its own state, parallel
 * loops nested in concurrent runs): every result equals the one-thread
 * function's bit for bit (the same fixed blocks). */
#define CALLERS 4
#define CALLS 8

typedef struct split_caller {
    weft_function_t *f;
    weft_tensor_t *vals[3], *want;
    int mismatches;
    weft_status_t st;
} split_caller_t;

static void *split_caller(void *p)
{
    split_caller_t *c = p;
    for (int k = 0; k < CALLS && c->st == WEFT_OK; k++) {
        weft_tensor_t *out = NULL;
        c->st = weft_function_call(c->f, 3, c->vals, 1, &out);
        for (size_t i = 0; c->st == WEFT_OK && i < weft_tensor_size(out); i++)
            c->mismatches += weft_tensor_flat_get(out, i) != weft_tensor_flat_get(c->want, i);
        weft_tensor_release(out);
    }
    return NULL;
}

static void test_intranode_concurrent_calls_with_split_kernels(void **state)
{
    (void)state;
    weft_var_t *a = matrix("a", 300, 200), *b = matrix("b", 200, 100), *c = matrix("c", 300, 100);
    weft_var_t *d, *s, *t;
    assert_non_null(d = weft_dot(g, a, b));
    assert_non_null(s = weft_add(g, d, c));
    assert_non_null(t = weft_tanh(g, s));
    weft_var_t *in[3] = {a, b, c};
    weft_function_t *f[2];
    for (int v = 0; v < 2; v++) {
        weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
        o.threads = 2;
        o.node_threads = v ? 1 : 0;
        assert_int_equal(weft_function_compile(3, in, 1, &t, 0, NULL, &o, &f[v]), WEFT_OK);
    }
    split_caller_t args[CALLERS];
    pthread_t th[CALLERS];
    for (int k = 0; k < CALLERS; k++) {
        args[k] = (split_caller_t){f[0], {filled(300, 200, 10u * (uint32_t)k),
                                          filled(200, 100, 10u * (uint32_t)k + 1),
                                          filled(300, 100, 10u * (uint32_t)k + 2)},
                                   NULL, 0, WEFT_OK};
        assert_int_equal(weft_function_call(f[1], 3, args[k].vals, 1, &args[k].want), WEFT_OK);
    }
    for (int k = 0; k < CALLERS; k++)
        assert_int_equal(pthread_create(&th[k], NULL, split_caller, &args[k]), 0);
    for (int k = 0; k < CALLERS; k++) {
        assert_int_equal(pthread_join(th[k], NULL), 0);
        assert_int_equal(args[k].st, WEFT_OK);
        assert_int_equal(args[k].mismatches, 0);
        for (int i = 0; i < 3; i++) weft_tensor_release(args[k].vals[i]);
        weft_tensor_release(args[k].want);
    }
    weft_function_destroy(f[0]);
    weft_function_destroy(f[1]);
}

/* ---- same bits at any worker count ------------------------------------------------ */

static weft_var_t *typed(const char *name, weft_dtype_t dt, int nd, const int64_t *shape)
{
    const weft_type_t *t;
    weft_var_t *v;
    assert_int_equal(weft_type_tensor(g, dt, nd, shape, &t), WEFT_OK);
    assert_non_null(v = weft_var_create(g, t, name));
    return v;
}

#define SPLIT_IN 8
#define SPLIT_OUT 8

/* Every kind of node weft splits itself, at lengths that are not multiples
 * of any block: Dot split by columns (103x66 @ 66x169, the float32
 * case) and by rows (1000x300 @ 300x200), Gemm, a batched Dot, a costly and
 * a cheap elementwise loop with a broadcast row (fused into one Composite by
 * fast_run), and reductions of split results. */
static void split_graph(weft_dtype_t dt, weft_var_t **in, weft_tensor_t **vals, weft_var_t **out)
{
    static const int64_t shapes[SPLIT_IN][3] = {{103, 66}, {66, 169}, {1000, 300}, {300, 200},
                                                {1000, 200}, {3, 300, 90}, {3, 90, 150},
                                                {517, 301}};
    static const int nds[SPLIT_IN] = {2, 2, 2, 2, 2, 3, 3, 2};
    const char *names[SPLIT_IN] = {"a", "b", "x", "w", "z", "p", "q", "e"};
    for (int i = 0; i < SPLIT_IN; i++) {
        in[i] = typed(names[i], dt, nds[i], shapes[i]);
        vals[i] = typed_filled(dt, nds[i], shapes[i], 17u * (uint32_t)i + 1);
    }
    weft_var_t *alpha, *beta, *one, *s, *t, *tt, *d, *c, *sq;
    assert_non_null(out[0] = weft_dot(g, in[0], in[1]));
    assert_non_null(out[1] = weft_dot(g, in[2], in[3]));
    assert_non_null(alpha = weft_constant_scalar(g, dt, 1.5));
    assert_non_null(beta = weft_constant_scalar(g, dt, -0.5));
    assert_non_null(out[2] = weft_gemm(g, in[4], alpha, in[2], in[3], beta, false));
    assert_non_null(out[3] = weft_dot(g, in[5], in[6]));
    /* (1 - tanh(e + e[0])^2) * e, e[0] broadcast as a row */
    weft_var_t *row;
    assert_non_null(row = weft_subtensor(g, in[7], 1, (weft_slice_t[]){WEFT_SLICE_AT(0)}));
    assert_non_null(s = weft_add(g, in[7], row));
    assert_non_null(t = weft_tanh(g, s));
    assert_non_null(tt = weft_sqr(g, t));
    assert_non_null(one = weft_constant_scalar(g, dt, 1.0));
    assert_non_null(d = weft_sub(g, one, tt));
    assert_non_null(out[4] = weft_mul(g, d, in[7]));
    assert_non_null(sq = weft_mul(g, in[7], in[7])); /* cheap */
    assert_non_null(out[5] = weft_add(g, sq, s));
    assert_non_null(c = weft_sum(g, out[1], 1, (int[]){0}, false));
    assert_non_null(out[7] = weft_max(g, out[2], 1, (int[]){1}, false));
    out[6] = c;
}

/* The same graph compiled on pools of 1, 2, 3, 5 and 8 workers, in modes
 * none and fast_run, float32 and float64: every output is bit-identical to
 * the one-worker function's, and in mode none to the sequential
 * evaluator's (execution.md §5). */
static void test_intranode_outputs_are_bit_identical_at_any_worker_count(void **state)
{
    (void)state;
    static const int workers[] = {1, 2, 3, 5, 8};
    const char *modes[2] = {"none", "fast_run"};
    weft_dtype_t dts[2] = {WEFT_FLOAT32, WEFT_FLOAT64};
    for (int di = 0; di < 2; di++) {
        weft_var_t *in[SPLIT_IN], *out[SPLIT_OUT];
        weft_tensor_t *vals[SPLIT_IN];
        split_graph(dts[di], in, vals, out);
        for (int mi = 0; mi < 2; mi++) {
            /* mode none runs the graph as built: the evaluator is the reference */
            weft_tensor_t *ref[SPLIT_OUT] = {NULL};
            if (mi == 0)
                assert_int_equal(weft_eval(g, SPLIT_IN, in, vals, SPLIT_OUT, out, ref), WEFT_OK);
            for (size_t wi = 0; wi < sizeof workers / sizeof *workers; wi++) {
                weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
                o.mode = modes[mi];
                o.threads = workers[wi];
                weft_function_t *f = NULL;
                assert_int_equal(weft_function_compile(SPLIT_IN, in, SPLIT_OUT, out, 0, NULL, &o,
                                                       &f), WEFT_OK);
                weft_tensor_t *res[SPLIT_OUT] = {NULL};
                assert_int_equal(weft_function_call(f, SPLIT_IN, vals, SPLIT_OUT, res), WEFT_OK);
                for (int k = 0; k < SPLIT_OUT; k++) {
                    assert_true(weft_tensor_is_contiguous(res[k]));
                    if (!ref[k]) {
                        ref[k] = res[k];
                        continue;
                    }
                    size_t bytes = weft_tensor_size(res[k]) * weft_dtype_size(dts[di]);
                    if (memcmp(weft_tensor_data(res[k]), weft_tensor_data(ref[k]), bytes) != 0)
                        fail_msg("%s, mode %s, output %d: %d workers differ from %s",
                                 weft_dtype_name(dts[di]), modes[mi], k, workers[wi],
                                 mi == 0 ? "the evaluator" : "1");
                    weft_tensor_release(res[k]);
                }
                weft_function_destroy(f);
            }
            for (int k = 0; k < SPLIT_OUT; k++) weft_tensor_release(ref[k]);
        }
        for (int i = 0; i < SPLIT_IN; i++) weft_tensor_release(vals[i]);
    }
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_intranode_ranges_cover_the_loop_once_on_two_workers),
        T(test_intranode_default_grain_depends_on_the_length_alone),
        T(test_intranode_node_threads_1_runs_one_inline_range),
        T(test_intranode_node_threads_above_pool_size_means_all_workers),
        T(test_intranode_failing_range_fails_the_node_and_next_call_works),
        T(test_intranode_evaluator_runs_one_inline_range),
        T(test_intranode_bad_arguments),
        T(test_intranode_split_products_match_unsplit),
        T(test_intranode_rnn_step_products_same_bits_at_any_worker_count),
        T(test_intranode_split_elementwise_is_exact),
        T(test_intranode_concurrent_calls_with_split_kernels),
        T(test_intranode_outputs_are_bit_identical_at_any_worker_count),
    };
    return cmocka_run_group_tests_name("function_intranode", tests, NULL, NULL);
}
