/* Tests of the lane reductions, scans and sorting ops (weft/reduce.h):
 * exact values (the constants were computed with NumPy), NaN/inf edges,
 * stability, dtypes, error messages, same bits at 1, 2 and 4 workers on
 * inputs large enough to split, and gradients through weft_verify_grad. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ops_check.h"
#include "ops_threads.h"
#include "reduce/reduce_int.h"
#include "reduce/vexp_int.h"

static weft_graph_t *G;

static int setup(void **state)
{
    (void)state;
    assert_int_equal(weft_graph_create(NULL, &G), WEFT_OK);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    weft_graph_destroy(G);
    return 0;
}

/* ck_expect_eval on the file's graph */
/* (variadic: the arguments hold compound literals, whose commas split
 * macro arguments) */
#define expect(...) ck_expect_eval(G, __VA_ARGS__)

static void test_argmax_argmin_over_several_axes(void **state)
{
    (void)state;
    int64_t s[3] = {2, 3, 2};
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT64, 3, s,
                                  (double[]){5, 1, 9, 9, 0, 2, 4, 4, -1, 7, 8, 8});
    weft_var_t *x = ck_var(G, WEFT_FLOAT64, 3, s);
    int a12[2] = {1, 2}, a02[2] = {0, -1};
    expect(x, xv, weft_argmax_axes(G, x, 2, a12, false), WEFT_INT64, 1, (int64_t[]){2},
           (double[]){2, 4}, 0);
    expect(x, xv, weft_argmin_axes(G, x, 2, a02, false), WEFT_INT64, 1, (int64_t[]){3},
           (double[]){1, 2, 0}, 0);
    expect(x, xv, weft_argmax_axes(G, x, 0, NULL, true), WEFT_INT64, 3, (int64_t[]){1, 1, 1},
           (double[]){2}, 0);
    expect(x, xv, weft_argmin(G, x, 1, false), WEFT_INT64, 2, (int64_t[]){2, 2},
           (double[]){2, 0, 1, 0}, 0);
    weft_tensor_release(xv);
}

static void test_any_all_any_dtype(void **state)
{
    (void)state;
    int64_t s[2] = {3, 2}, s0[2] = {2, 0};
    weft_tensor_t *iv = ck_tensor(WEFT_INT32, 2, s, (double[]){0, 0, 0, 5, 1, 2});
    weft_tensor_t *fv = ck_tensor(WEFT_FLOAT32, 2, s, (double[]){NAN, 0, 0, 0, -0.0, 1});
    weft_tensor_t *ev = ck_tensor(WEFT_FLOAT64, 2, s0, NULL);
    weft_var_t *xi = ck_var(G, WEFT_INT32, 2, s), *xf = ck_var(G, WEFT_FLOAT32, 2, s);
    weft_var_t *xe = ck_var(G, WEFT_FLOAT64, 2, s0);
    int a1 = 1;
    expect(xi, iv, weft_any(G, xi, 1, &a1, false), WEFT_BOOL, 1, (int64_t[]){3},
           (double[]){0, 1, 1}, 0);
    expect(xi, iv, weft_all(G, xi, 1, &a1, false), WEFT_BOOL, 1, (int64_t[]){3},
           (double[]){0, 0, 1}, 0);
    expect(xf, fv, weft_any(G, xf, 1, &a1, false), WEFT_BOOL, 1, (int64_t[]){3},
           (double[]){1, 0, 1}, 0); /* NaN is true, -0.0 false */
    expect(xe, ev, weft_any(G, xe, 1, &a1, false), WEFT_BOOL, 1, (int64_t[]){2},
           (double[]){0, 0}, 0);
    expect(xe, ev, weft_all(G, xe, 1, &a1, false), WEFT_BOOL, 1, (int64_t[]){2},
           (double[]){1, 1}, 0);
    weft_tensor_release(iv);
    weft_tensor_release(fv);
    weft_tensor_release(ev);
}

static void test_var_std_ddof_and_dtypes(void **state)
{
    (void)state;
    int64_t s[2] = {2, 4}, s22[2] = {2, 2};
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT64, 2, s, (double[]){1, 2, 4, 8, 3, 3, 3, 10});
    weft_tensor_t *iv = ck_tensor(WEFT_INT32, 2, s22, (double[]){1, 2, 3, 7});
    weft_var_t *x = ck_var(G, WEFT_FLOAT64, 2, s), *xi = ck_var(G, WEFT_INT32, 2, s22);
    int a1 = 1, a0 = 0;
    expect(x, xv, weft_var(G, x, 1, &a1, 0.0, false), WEFT_FLOAT64, 1, (int64_t[]){2},
           (double[]){7.1875, 9.1875}, 1e-15);
    expect(x, xv, weft_var(G, x, 1, &a1, 1.0, true), WEFT_FLOAT64, 2, (int64_t[]){2, 1},
           (double[]){9.58333333333333333, 12.25}, 1e-15);
    expect(x, xv, weft_std(G, x, 1, &a0, 1.0, false), WEFT_FLOAT64, 1, (int64_t[]){4},
           (double[]){1.4142135623730951, 0.70710678118654757, 0.70710678118654757,
                       1.4142135623730951}, 1e-15);
    expect(xi, iv, weft_var(G, xi, 0, NULL, 0.0, false), WEFT_FLOAT64, 0, NULL,
           (double[]){5.1875}, 0);
    /* NumPy: ddof == n gives M2/0 (inf, or NaN when M2 is 0) */
    expect(x, xv, weft_var(G, x, 1, &a1, 4.0, false), WEFT_FLOAT64, 1, (int64_t[]){2},
           (double[]){INFINITY, INFINITY}, 0);
    weft_tensor_release(xv);
    weft_tensor_release(iv);
}

static void test_logsumexp_edges(void **state)
{
    (void)state;
    int64_t s[2] = {5, 3};
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT64, 2, s,
                                  (double[]){1, 2, 3, -INFINITY, -INFINITY, -INFINITY, 1,
                                             INFINITY, 2, 1, NAN, 2, -INFINITY, NAN, 0});
    weft_var_t *x = ck_var(G, WEFT_FLOAT64, 2, s);
    int a1 = -1;
    expect(x, xv, weft_logsumexp(G, x, 1, &a1, false), WEFT_FLOAT64, 1, (int64_t[]){5},
           (double[]){3.40760596444438, -INFINITY, INFINITY, NAN, NAN}, 1e-15);
    expect(x, xv, weft_logsumexp(G, x, 1, &a1, true), WEFT_FLOAT64, 2, (int64_t[]){5, 1},
           (double[]){3.40760596444438, -INFINITY, INFINITY, NAN, NAN}, 1e-15);
    weft_tensor_release(xv);
}

static void test_nan_reductions(void **state)
{
    (void)state;
    int64_t s[2] = {2, 3};
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT32, 2, s, (double[]){1, NAN, 3, NAN, NAN, NAN});
    weft_tensor_t *iv = ck_tensor(WEFT_INT32, 2, s, (double[]){1, -7, 3, 2, 2, 9});
    weft_var_t *x = ck_var(G, WEFT_FLOAT32, 2, s), *xi = ck_var(G, WEFT_INT32, 2, s);
    int a1 = 1;
    int64_t o[1] = {2};
    expect(x, xv, weft_nansum(G, x, 1, &a1, false), WEFT_FLOAT32, 1, o, (double[]){4, 0}, 0);
    expect(x, xv, weft_nanmean(G, x, 1, &a1, false), WEFT_FLOAT32, 1, o, (double[]){2, NAN}, 0);
    expect(x, xv, weft_nanmax(G, x, 1, &a1, false), WEFT_FLOAT32, 1, o, (double[]){3, NAN}, 0);
    expect(x, xv, weft_nanmin(G, x, 1, &a1, false), WEFT_FLOAT32, 1, o, (double[]){1, NAN}, 0);
    expect(xi, iv, weft_nansum(G, xi, 1, &a1, false), WEFT_INT64, 1, o, (double[]){-3, 13}, 0);
    expect(xi, iv, weft_nanmean(G, xi, 1, &a1, false), WEFT_FLOAT64, 1, o,
           (double[]){-1, 13.0 / 3}, 1e-15);
    expect(xi, iv, weft_nanmax(G, xi, 1, &a1, false), WEFT_INT32, 1, o, (double[]){3, 9}, 0);
    weft_tensor_release(xv);
    weft_tensor_release(iv);
}

static void test_cumsum_cumprod_values_dtypes(void **state)
{
    (void)state;
    int64_t s[2] = {2, 3}, sb[1] = {3};
    weft_tensor_t *iv = ck_tensor(WEFT_INT32, 2, s, (double[]){1, 2, 3, 4, 5, 6});
    weft_tensor_t *bv = ck_tensor(WEFT_BOOL, 1, sb, (double[]){1, 0, 1});
    weft_var_t *xi = ck_var(G, WEFT_INT32, 2, s), *xb = ck_var(G, WEFT_BOOL, 1, sb);
    expect(xi, iv, weft_cumsum(G, xi, 0), WEFT_INT64, 2, s, (double[]){1, 2, 3, 5, 7, 9}, 0);
    expect(xi, iv, weft_cumprod(G, xi, -1), WEFT_INT64, 2, s,
           (double[]){1, 2, 6, 4, 20, 120}, 0);
    expect(xb, bv, weft_cumsum(G, xb, 0), WEFT_INT64, 1, sb, (double[]){1, 1, 2}, 0);
    weft_tensor_release(iv);
    weft_tensor_release(bv);
}

static void test_sort_argsort_stable_nan_last_topk(void **state)
{
    (void)state;
    int64_t s[1] = {8};
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT64, 1, s, (double[]){3, NAN, 1, -0.0, 0.0, 1, NAN, 2});
    weft_var_t *x = ck_var(G, WEFT_FLOAT64, 1, s);
    expect(x, xv, weft_argsort(G, x, 0), WEFT_INT64, 1, s, (double[]){3, 4, 2, 5, 7, 0, 1, 6}, 0);
    expect(x, xv, weft_sort(G, x, -1), WEFT_FLOAT64, 1, s,
           (double[]){-0.0, 0.0, 1, 1, 2, 3, NAN, NAN}, 0);
    weft_tensor_t *r = NULL;
    weft_var_t *y = weft_sort(G, x, 0);
    assert_int_equal(ck_eval(G, 1, &x, &xv, y, &r), WEFT_OK);
    assert_true(signbit(((double *)weft_tensor_data(r))[0])); /* -0.0 kept first: stable */
    weft_tensor_release(r);
    expect(x, xv, weft_topk_indices(G, x, 0, 4), WEFT_INT64, 1, (int64_t[]){4},
           (double[]){1, 6, 0, 7}, 0);
    expect(x, xv, weft_topk_values(G, x, 0, 4), WEFT_FLOAT64, 1, (int64_t[]){4},
           (double[]){NAN, NAN, 3, 2}, 0);
    weft_tensor_release(xv);
}

static void test_errors_name_op_input_and_site(void **state)
{
    (void)state;
    int64_t s[2] = {2, 3};
    weft_var_t *x = weft_var_create_at(G, NULL, "x", "model.c", 7);
    const weft_type_t *t = NULL;
    assert_int_equal(weft_type_tensor(G, WEFT_FLOAT64, 2, s, &t), WEFT_OK);
    assert_null(x); /* NULL type */
    weft_graph_clear_error(G);
    assert_non_null(x = weft_var_create_at(G, t, "x", "model.c", 7));
    assert_null(weft_cumop_at(G, false, x, 2, false, "f.c", 3));
    assert_int_equal(weft_graph_error(G), WEFT_EINVAL);
    assert_string_equal(weft_graph_error_message(G),
                        "CumSum (at f.c:3): axis 2 out of range for input x with 2 dims "
                        "(created at model.c:7)");
    weft_graph_clear_error(G);
    assert_null(weft_topk_at(G, x, 1, 4, false, "f.c", 4));
    assert_string_equal(weft_graph_error_message(G),
                        "Topk (at f.c:4): k 4 out of range for axis 1 of length 3");
    weft_graph_clear_error(G);
    int bad = -3;
    assert_null(weft_lreduce_at(G, WEFT_LREDUCE_VAR, x, 1, &bad, 0.0, false, "f.c", 5));
    assert_string_equal(weft_graph_error_message(G),
                        "Var (at f.c:5): axis -3 out of range for input x with 2 dims "
                        "(created at model.c:7)");
    weft_graph_clear_error(G);
    int rep[2] = {1, -1};
    assert_null(weft_lreduce_at(G, WEFT_LREDUCE_NANSUM, x, 2, rep, 0.0, false, "f.c", 6));
    assert_string_equal(weft_graph_error_message(G),
                        "NanSum (at f.c:6): axis -1 repeated for input x with 2 dims "
                        "(created at model.c:7)");
    weft_graph_clear_error(G);
    assert_null(weft_nanmax(G, NULL, 0, NULL, false)); /* a NULL input adds no second error */
    assert_int_equal(weft_graph_error(G), WEFT_EINVAL);
    weft_graph_clear_error(G);
}

/* The vector exp of LogSumExp: within 2 ulp of libm's on a sweep of the
 * range where the result is normal; 0 below -708, inf above 709.78. */
static void test_vexp_within_2_ulp_of_libm(void **state)
{
    (void)state;
    int64_t worst = 0;
    for (double x = -708.0; x < 709.78; x += 0.00731) {
        double a = weft__vexp(x), b = exp(x);
        int64_t ia, ib;
        memcpy(&ia, &a, sizeof ia);
        memcpy(&ib, &b, sizeof ib);
        int64_t d = ia > ib ? ia - ib : ib - ia;
        worst = d > worst ? d : worst;
    }
    assert_true(worst <= 2);
    assert_true(weft__vexp(0.0) == 1.0);
    assert_true(weft__vexp(-709.0) == 0.0 && weft__vexp(-INFINITY) == 0.0);
    assert_true(isinf(weft__vexp(710.0)) && isinf(weft__vexp(INFINITY)));
    assert_true(isnan(weft__vexp(NAN)));
}

/* ---- same bits at 1, 2 and 4 workers ----------------------------------- */

static void test_large_inputs_same_bits_at_1_2_4_workers(void **state)
{
    (void)state;
    int64_t s[2] = {3, 300001}; /* lanes of 5 blocks (65536) and some */
    weft_tensor_t *xv = ck_random(WEFT_FLOAT64, 2, s, -3, 3, ck_seed("threads"));
    weft_var_t *x = ck_var(G, WEFT_FLOAT64, 2, s);
    int a1 = 1, a0 = 0;
    weft_var_t *outs[14] = {
        weft_logsumexp(G, x, 1, &a1, false), weft_var(G, x, 0, NULL, 1.0, false),
        weft_std(G, x, 1, &a1, 0.0, false),   weft_nansum(G, x, 0, NULL, false),
        weft_nanmean(G, x, 1, &a1, false),   weft_nanmax(G, x, 1, &a1, false),
        weft_nanmin(G, x, 0, NULL, false),   weft_argmax_axes(G, x, 0, NULL, false),
        weft_argmin_axes(G, x, 1, &a1, false), weft_any(G, x, 1, &a0, false),
        weft_cumsum(G, x, 1),                weft_cumprod(G, x, 0),
        weft_argsort(G, x, 1),               weft_topk_values(G, x, 1, 5)};
    for (int i = 0; i < 14; i++) assert_non_null(outs[i]);
    ck_same_bits_at_1_2_4(G, x, xv, 14, outs);
    weft_tensor_release(xv);
    /* an output of 16.8 MB: the scans' streaming-store path */
    int64_t n[1] = {2100000};
    weft_tensor_t *lv = ck_random(WEFT_FLOAT64, 1, n, 0.9, 1.1, ck_seed("threads_long"));
    weft_var_t *l = ck_var(G, WEFT_FLOAT64, 1, n);
    weft_var_t *louts[3] = {weft_cumsum(G, l, 0), weft_cumprod(G, l, -1),
                            weft_logsumexp(G, l, 0, NULL, false)};
    ck_same_bits_at_1_2_4(G, l, lv, 3, louts);
    weft_tensor_release(lv);
}

/* ---- Sum, Mean, Max, Min, Prod split over the pool ----------------------- */

/* The plan of a C-contiguous x of shape (nd, shape) reduced over mask into
 * eo-byte outputs. */
static int64_t plan_of(int nd, const int64_t *shape, uint32_t mask, size_t eo, int *axis,
                       int64_t *grain)
{
    weft__rloop_t in, l;
    int64_t sx = 1, so = 1;
    in.ndim = nd;
    for (int d = nd - 1; d >= 0; d--) {
        bool red = (mask >> d) & 1u;
        in.shape[d] = shape[d];
        in.sx[d] = sx;
        in.so[d] = red ? 0 : so;
        in.sg[d] = 0;
        sx *= shape[d];
        so *= red ? 1 : shape[d];
    }
    assert_true(weft__rloop_prepare(&in, &l));
    *axis = -1;
    *grain = 0;
    return weft__reduce_split_plan(&l, eo, axis, grain);
}

/* The documented chunkings (docs/execution.md §5): at most 16 chunks of at
 * least 65536 elements; a kept axis unless a reduced one makes more than
 * twice its chunks; a kept inner axis in whole 64-byte lines of the output. */
static void test_classic_split_plan(void **state)
{
    (void)state;
    int axis;
    int64_t grain;
    struct {
        int nd;
        int64_t shape[2];
        uint32_t mask;
        size_t eo;
        int64_t chunks, grain;
        int axis;
    } cases[] = {
        {2, {4, 300001}, 2u, 8, 16, 18751, 1},   /* trailing: 4 groups, 16 blocks of each lane */
        {2, {1000, 10000}, 2u, 8, 16, 63, 0},    /* trailing: the kept rows */
        {2, {300001, 3}, 1u, 8, 14, 21846, 0},   /* leading, 3 columns: blocks of rows */
        {2, {10000, 1000}, 1u, 8, 16, 64, 1},    /* leading: chunks of 64 kept columns */
        {2, {10000, 1000}, 1u, 4, 16, 64, 1},    /* float32: 16 per line */
        {2, {2000, 1000}, 1u, 8, 16, 64, 1},     /* ceil(1000 / 16) = 63, rounded to 8s */
        {2, {2000, 1000}, 1u, 1, 16, 64, 1},     /* a 1-byte output: 64 per line */
        {2, {2000, 200}, 1u, 8, 5, 40, 1},       /* 33 columns (65536 / 2000 rows) to 40 */
        {2, {300001, 4}, 3u, 8, 16, 18751, 0},   /* all axes: blocks of rows */
        {1, {10000000}, 1u, 8, 16, 625000, 0},   /* all of a vector */
        {2, {1000, 132}, 2u, 8, 3, 497, 0},      /* 132000 elements: splits */
        {2, {1000, 100}, 1u, 8, 1, 0, -1},       /* 100000 elements: one box */
        {1, {131071}, 1u, 8, 1, 0, -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t c = plan_of(cases[i].nd, cases[i].shape, cases[i].mask, cases[i].eo, &axis,
                            &grain);
        if (c != cases[i].chunks || grain != cases[i].grain || axis != cases[i].axis) {
            print_error("case %zu: %lld chunks of %lld along %d\n", i, (long long)c,
                        (long long)grain, axis);
            fail();
        }
    }
}

/* Every classic kind at 4 dtypes over trailing, leading, middle and all axes
 * of inputs a few blocks long: same bits at 1, 2, 4 workers and in the
 * evaluator. */
static void test_classic_reductions_same_bits_at_1_2_4_workers(void **state)
{
    (void)state;
    const weft_dtype_t dts[4] = {WEFT_FLOAT64, WEFT_FLOAT32, WEFT_INT32, WEFT_INT64};
    int a0 = 0, a1 = 1, a02[2] = {0, 2};
    int64_t s[2] = {4, 300001}, p[2] = {300001, 3}, m[3] = {5, 30000, 3};
    weft_tensor_t *xv = ck_random(WEFT_FLOAT64, 2, s, -1000, 1000, ck_seed("classic"));
    weft_var_t *x = ck_var(G, WEFT_FLOAT64, 2, s), *outs[CK_THREADS_MAX_OUTS];
    size_t n = 0;
    for (int k = 0; k < 4; k++) {
        weft_var_t *v = k ? weft_cast(G, x, dts[k]) : x;
        outs[n++] = weft_sum(G, v, 1, &a1, false);  /* trailing: blocks of each lane */
        outs[n++] = weft_mean(G, v, 1, &a0, false); /* leading: kept columns */
        outs[n++] = weft_max(G, v, 0, NULL, false); /* all axes */
        outs[n++] = weft_min(G, v, 1, &a1, true);
        outs[n++] = weft_sum(G, v, 0, NULL, false);
        outs[n++] = weft_mean(G, v, 1, &a1, false);
        outs[n++] = weft_prod(G, weft_cast(G, weft_gt(G, v, weft_constant_scalar(G, dts[k], -990.0)),
                                           dts[k]), 1, &a1, false);
    }
    for (size_t i = 0; i < n; i++) assert_non_null(outs[i]);
    ck_same_bits_at_1_2_4(G, x, xv, n, outs);
    weft_tensor_release(xv);
    /* leading axes over few columns: blocks of rows; products near 1 */
    weft_tensor_t *pv = ck_random(WEFT_FLOAT64, 2, p, 0.999, 1.001, ck_seed("classic_rows"));
    weft_var_t *px = ck_var(G, WEFT_FLOAT64, 2, p), *pf = weft_cast(G, px, WEFT_FLOAT32);
    n = 0;
    for (int k = 0; k < 2; k++) {
        weft_var_t *v = k ? pf : px;
        outs[n++] = weft_sum(G, v, 1, &a0, false);
        outs[n++] = weft_prod(G, v, 1, &a0, false);
        outs[n++] = weft_prod(G, v, 0, NULL, false);
        outs[n++] = weft_mean(G, v, 0, NULL, true);
        outs[n++] = weft_max(G, v, 1, &a0, false);
        outs[n++] = weft_min(G, v, 1, &a0, false);
        outs[n++] = weft_sum(G, weft_transpose(G, v), 1, &a1, false); /* a strided view */
    }
    for (size_t i = 0; i < n; i++) assert_non_null(outs[i]);
    ck_same_bits_at_1_2_4(G, px, pv, n, outs);
    weft_tensor_release(pv);
    /* a middle axis and the outer two */
    weft_tensor_t *mv = ck_random(WEFT_FLOAT64, 3, m, -1, 1, ck_seed("classic_mid"));
    weft_var_t *mx = ck_var(G, WEFT_FLOAT64, 3, m);
    weft_var_t *mouts[3] = {weft_sum(G, mx, 1, &a1, false), weft_mean(G, mx, 2, a02, false),
                            weft_prod(G, weft_cast(G, mx, WEFT_FLOAT32), 1, &a1, false)};
    ck_same_bits_at_1_2_4(G, mx, mv, 3, mouts);
    weft_tensor_release(mv);
}

/* A reduced split folds each chunk as one box from the identity and merges
 * the chunks left to right: the Sum of a long vector is the left fold of the
 * Sums of its chunks (each below the split size, so one box), and within
 * the documented bound of the exact sum. */
static void test_classic_split_order_and_bound(void **state)
{
    (void)state;
    int64_t n[1] = {300001}, g = 65536; /* 5 chunks: 4 of 65536 and 37857 */
    weft_tensor_t *xv = ck_random(WEFT_FLOAT64, 1, n, -1, 1, ck_seed("classic_order"));
    const double *xs = weft_tensor_data(xv);
    weft_var_t *x = ck_var(G, WEFT_FLOAT64, 1, n);
    weft_tensor_t *r = NULL;
    assert_int_equal(ck_eval(G, 1, &x, &xv, weft_sum(G, x, 0, NULL, false), &r), WEFT_OK);
    double want = 0;
    long double exact = 0, abs_sum = 0;
    for (int64_t lo = 0; lo < n[0]; lo += g) {
        int64_t len[1] = {n[0] - lo < g ? n[0] - lo : g};
        weft_tensor_t *cv = ck_tensor(WEFT_FLOAT64, 1, len, xs + lo), *cr = NULL;
        weft_var_t *c = ck_var(G, WEFT_FLOAT64, 1, len);
        assert_int_equal(ck_eval(G, 1, &c, &cv, weft_sum(G, c, 0, NULL, false), &cr), WEFT_OK);
        double part = *(const double *)weft_tensor_data(cr);
        want = lo ? want + part : part;
        weft_tensor_release(cr);
        weft_tensor_release(cv);
    }
    for (int64_t i = 0; i < n[0]; i++) {
        exact += xs[i];
        abs_sum += fabsl((long double)xs[i]);
    }
    double got = *(const double *)weft_tensor_data(r);
    assert_memory_equal(&got, &want, sizeof got);
    assert_true(fabsl((long double)got - exact) <= (n[0] + 2) * 0x1p-52L * abs_sum);
    weft_tensor_release(r);
    weft_tensor_release(xv);
}

/* Every new class saved to JSON and loaded back computes the same bits.
 * WEFT_SAVED_GRAPH=path also writes the text (tests/ops/data/reduce_more.json
 * was made so; tests/io's schema check validates it). */
static void test_json_round_trip_of_every_new_class(void **state)
{
    (void)state;
    int64_t s[2] = {2, 5};
    weft_graph_t *g = NULL, *g2 = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    const weft_type_t *t = NULL;
    assert_int_equal(weft_type_tensor(g, WEFT_FLOAT64, 2, s, &t), WEFT_OK);
    weft_var_t *x = weft_var_create_at(g, t, "x", __FILE__, __LINE__);
    int a1 = 1, a01[2] = {0, 1};
    weft_var_t *outs[17] = {
        weft_argmax_axes(g, x, 2, a01, false), weft_argmin(g, x, 0, true),
        weft_any(g, x, 1, &a1, false),          weft_all(g, x, 0, NULL, true),
        weft_var(g, x, 1, &a1, 1.0, false),     weft_std(g, x, 1, &a1, 0.5, true),
        weft_logsumexp(g, x, 1, &a1, false),    weft_nansum(g, x, 0, NULL, false),
        weft_nanmean(g, x, 1, &a1, false),      weft_nanmax(g, x, 1, &a1, false),
        weft_nanmin(g, x, 1, &a1, true),        weft_cumsum(g, x, 1),
        weft_cumop_at(g, true, x, 0, true, __FILE__, __LINE__),
        weft_sort(g, x, 1),                     weft_argsort(g, x, 0),
        weft_topk_values(g, x, 1, 3),           weft_topk_indices(g, x, 1, 2)};
    weft_graph_io_t io = {1, &x, NULL, 17, outs, 0, NULL}, back;
    char *text = NULL;
    assert_int_equal(weft_graph_io_save(&io, &text), WEFT_OK);
    const char *path = getenv("WEFT_SAVED_GRAPH");
    FILE *f = path ? fopen(path, "w") : NULL;
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    assert_int_equal(weft_graph_create(NULL, &g2), WEFT_OK);
    assert_int_equal(weft_graph_io_load(g2, text, strlen(text), NULL, &back), WEFT_OK);
    assert_int_equal(back.n_outputs, 17);
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT64, 2, s,
                                  (double[]){0.5, NAN, -2, 3, 3, 1, 0, -1.5, 2, 7});
    weft_tensor_t *r1[17] = {NULL}, *r2[17] = {NULL};
    assert_int_equal(weft_eval(g, 1, &x, &xv, 17, outs, r1), WEFT_OK);
    assert_int_equal(weft_eval(g2, 1, back.inputs, &xv, 17, back.outputs, r2), WEFT_OK);
    for (int i = 0; i < 17; i++) {
        size_t bytes = weft_tensor_size(r1[i]) * weft_dtype_size(weft_tensor_dtype(r1[i]));
        assert_int_equal(weft_tensor_dtype(r1[i]), weft_tensor_dtype(r2[i]));
        assert_int_equal(weft_tensor_size(r1[i]), weft_tensor_size(r2[i]));
        assert_memory_equal(weft_tensor_data(r1[i]), weft_tensor_data(r2[i]), bytes);
        weft_tensor_release(r1[i]);
        weft_tensor_release(r2[i]);
    }
    assert_non_null(strstr(text, "\"op\":\"Std\",\"props\":{\"ndim\":2,\"axes\":[1],"
                                 "\"keepdims\":true,\"ddof\":0.5}"));
    weft_tensor_release(xv);
    weft_graph_io_clear(&back);
    weft_graph_io_free_text(text);
    weft_graph_destroy(g2);
    weft_graph_destroy(g);
}

/* ---- gradients ----------------------------------------------------------- */

typedef enum gk { G_LSE, G_VAR, G_STD, G_NANSUM, G_NANMEAN, G_NANMAX, G_NANMIN, G_CUMSUM,
                  G_CUMPROD, G_SORT, G_TOPK, G_COUNT } gk_t;

static weft_var_t *grad_fn(weft_graph_t *g, size_t n_in, weft_var_t *const *in, void *user)
{
    (void)n_in;
    int a1 = 1;
    weft_var_t *x = in[0], *y = NULL;
    switch (*(const gk_t *)user) {
    case G_LSE: y = weft_logsumexp(g, x, 1, &a1, false); break;
    case G_VAR: y = weft_var(g, x, 1, &a1, 1.0, true); break;
    case G_STD: y = weft_std(g, x, 0, NULL, 0.0, false); break;
    case G_NANSUM: y = weft_nansum(g, x, 1, &a1, false); break;
    case G_NANMEAN: y = weft_nanmean(g, x, 0, NULL, false); break;
    case G_NANMAX: y = weft_nanmax(g, x, 1, &a1, false); break;
    case G_NANMIN: y = weft_nanmin(g, x, 0, NULL, true); break;
    case G_CUMSUM: y = weft_cumsum(g, x, 1); break;
    case G_CUMPROD: y = weft_cumprod(g, x, 0); break;
    case G_SORT: y = weft_sort(g, x, 1); break;
    default: y = weft_topk_values(g, x, 1, 2); break;
    }
    return y;
}

static void test_gradients_verify(void **state)
{
    (void)state;
    int64_t s[2] = {3, 4};
    for (int k = 0; k < G_COUNT; k++) {
        gk_t kind = (gk_t)k;
        weft_tensor_t *x = ck_random(WEFT_FLOAT64, 2, s, 0.5, 2.0, 300 + (uint64_t)k);
        ck_verify(grad_fn, &kind, 1, &x);
        weft_tensor_release(x);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_argmax_argmin_over_several_axes),
        cmocka_unit_test(test_any_all_any_dtype),
        cmocka_unit_test(test_var_std_ddof_and_dtypes),
        cmocka_unit_test(test_logsumexp_edges),
        cmocka_unit_test(test_nan_reductions),
        cmocka_unit_test(test_cumsum_cumprod_values_dtypes),
        cmocka_unit_test(test_sort_argsort_stable_nan_last_topk),
        cmocka_unit_test(test_errors_name_op_input_and_site),
        cmocka_unit_test(test_vexp_within_2_ulp_of_libm),
        cmocka_unit_test(test_large_inputs_same_bits_at_1_2_4_workers),
        cmocka_unit_test(test_classic_split_plan),
        cmocka_unit_test(test_classic_reductions_same_bits_at_1_2_4_workers),
        cmocka_unit_test(test_classic_split_order_and_bound),
        cmocka_unit_test(test_json_round_trip_of_every_new_class),
        cmocka_unit_test(test_gradients_verify),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
