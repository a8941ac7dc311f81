/* The per-step machinery of Scan (docs/control-flow.md §5): warm calls of a
 * function containing a Scan allocate nothing (one-node inner graphs, whose
 * steps run the kernel directly, and larger ones through the compiled inner
 * function; stacked and last-state outputs; 1 and 2 workers); the direct
 * path gives the compiled path's bits; a step-0 shape mismatch is named on
 * both paths; scan_split_map leaves a view of a step's input (x_t^T) in the
 * loop instead of storing it for every step; scan_prune_outputs drops the
 * gradient's unread d cost / d x_t. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "../support/alloc_count.h"
#include "weft/array_ops.h"
#include "weft/elemwise.h"
#include "weft/function.h"
#include "weft/grad.h"
#include "weft/graph.h"
#include "weft/linalg.h"
#include "weft/profile.h"
#include "weft/reduce.h"
#include "weft/scan.h"
#include "weft/shape_ops.h"
#include "weft/tensor.h"

enum { N = 64 };

static const weft_type_t *ttype(weft_graph_t *g, int nd, const int64_t *shape)
{
    const weft_type_t *t = NULL;
    assert_int_equal(weft_type_tensor(g, WEFT_FLOAT64, nd, shape, &t), WEFT_OK);
    return t;
}

static weft_tensor_t *vec(int64_t n, double scale)
{
    weft_tensor_t *t = NULL;
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, 1, &n, &t), WEFT_OK);
    double *d = weft_tensor_data(t);
    for (int64_t i = 0; i < n; i++) d[i] = scale * (double)(i % 7) - 1.25;
    return t;
}

/* acc_t = acc_{t-1} + x_t (one node: the direct path), or
 * acc_t = acc_{t-1} * 0.5 + x_t (two nodes: the compiled inner function);
 * the stacked states, or the last one only (scan_save_mem) when last. */
static weft_var_t *build(weft_graph_t *g, weft_var_t **x, bool two_nodes, bool last)
{
    int64_t n = N;
    *x = weft_var_create(g, ttype(g, 1, &n), "x");
    weft_var_t *xt = weft_var_create(g, ttype(g, 0, NULL), "x_t");
    weft_var_t *acc = weft_var_create(g, ttype(g, 0, NULL), "acc");
    weft_var_t *prev = two_nodes ? weft_mul(g, acc, weft_constant_scalar(g, WEFT_FLOAT64, 0.5))
                                 : acc;
    weft_scan_seq_t seq = {*x, 0, NULL, &xt};
    weft_scan_output_t out = {weft_add(g, prev, xt), weft_constant_scalar(g, WEFT_FLOAT64, 0.25),
                              0, NULL, &acc};
    weft_scan_spec_t sp = WEFT_SCAN_SPEC_INIT;
    sp.n_seqs = 1;
    sp.seqs = &seq;
    sp.n_outputs = 1;
    sp.outputs = &out;
    weft_var_t *y = NULL;
    assert_non_null(weft_scan(g, &sp, &y));
    if (!last) return y;
    const weft_slice_t at[1] = {WEFT_SLICE_AT(-1)};
    return weft_subtensor(g, y, 1, at);
}

static void expect(const weft_tensor_t *x, const weft_tensor_t *y, bool two_nodes, bool last)
{
    const double *xd = weft_tensor_data(x), *yd = weft_tensor_data(y);
    double acc = 0.25;
    for (int t = 0; t < N; t++) {
        acc = (two_nodes ? acc * 0.5 : acc) + xd[t];
        if (!last) assert_memory_equal(&yd[t], &acc, sizeof acc);
    }
    if (last) assert_memory_equal(yd, &acc, sizeof acc);
}

static void warm_case(int threads, bool two_nodes, bool last)
{
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    weft_var_t *x = NULL, *y = build(g, &x, two_nodes, last);
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.threads = threads;
    weft_function_t *f = NULL;
    assert_int_equal(weft_function_compile(1, &x, 1, &y, 0, NULL, &o, &f), WEFT_OK);
    weft_tensor_t *xv = vec(N, 0.5), *yv = NULL;
    int64_t n = N;
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, last ? 0 : 1, &n, &yv), WEFT_OK);
    assert_int_equal(weft_function_call(f, 1, &xv, 1, &yv), WEFT_OK); /* cold */
    alloc_count_start();
    for (int c = 0; c < 3; c++) assert_int_equal(weft_function_call(f, 1, &xv, 1, &yv), WEFT_OK);
    long allocs = alloc_count_stop();
    printf("threads %d, %s inner graph, %s: %ld allocations in 3 warm calls\n", threads,
           two_nodes ? "two-node" : "one-node", last ? "last state" : "stacked", allocs);
    assert_int_equal(allocs, 0);
    expect(xv, yv, two_nodes, last);
    weft_tensor_release(xv);
    weft_tensor_release(yv);
    weft_function_destroy(f);
    weft_graph_destroy(g);
}

static void test_warm_calls_allocate_nothing(void **state)
{
    (void)state;
    for (int threads = 1; threads <= 2; threads++)
        for (int two = 0; two < 2; two++)
            for (int last = 0; last < 2; last++) warm_case(threads, two, last);
}

/* The update is twice the carried state's length at step 0: concatenate(h,
 * h) alone (the direct path) and its double (two nodes, compiled path, the
 * step's storage allocated before it) are refused with the same words. */
static void test_step0_shape_error_both_paths(void **state)
{
    (void)state;
    for (int two = 0; two < 2; two++) {
        weft_graph_t *g = NULL;
        assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
        int64_t unk = WEFT_DIM_UNKNOWN, one = 1;
        weft_var_t *h0 = weft_var_create(g, ttype(g, 1, &unk), "h0");
        weft_var_t *h = weft_var_create(g, ttype(g, 1, &unk), "h");
        weft_var_t *hh[2] = {h, h};
        weft_var_t *upd = weft_concatenate(g, 2, hh, 0);
        if (two) upd = weft_mul(g, upd, weft_constant_scalar(g, WEFT_FLOAT64, 2.0));
        weft_scan_output_t out = {upd, h0, 0, NULL, &h};
        weft_scan_spec_t sp = WEFT_SCAN_SPEC_INIT;
        sp.n_outputs = 1;
        sp.outputs = &out;
        sp.n_steps = 3;
        weft_var_t *y = NULL;
        assert_non_null(weft_scan(g, &sp, &y));
        weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
        o.threads = 1;
        weft_function_t *f = NULL;
        assert_int_equal(weft_function_compile(1, &h0, 1, &y, 0, NULL, &o, &f), WEFT_OK);
        weft_tensor_t *v = vec(one, 1.0), *r = NULL;
        assert_int_equal(weft_function_call(f, 1, &v, 1, &r), WEFT_ESHAPE);
        const char *msg = weft_function_last_error(f);
        assert_non_null(strstr(msg, "output 0: the update ("));
        assert_non_null(strstr(msg, "test_scan_steps.c:"));
        assert_non_null(
            strstr(msg, "is float64[2] at step 0, but the carried state (initial value h0"));
        assert_non_null(strstr(msg, "has shape (1)"));
        assert_null(r);
        weft_tensor_release(v);
        weft_function_destroy(f);
        weft_graph_destroy(g);
    }
}

/* The stacked states of a scan over in[0] (step input xt) with the
 * non-sequence in[1] (inner wi), carrying hp from in[2], updated by upd. */
static weft_var_t *scan_xwh(weft_graph_t *g, weft_var_t *const *in, weft_var_t *xt,
                            weft_var_t *wi, weft_var_t *hp, weft_var_t *upd)
{
    weft_scan_seq_t seq = {in[0], 0, NULL, &xt};
    weft_scan_output_t out = {upd, in[2], 0, NULL, &hp};
    weft_scan_spec_t sp = WEFT_SCAN_SPEC_INIT;
    sp.n_seqs = 1;
    sp.seqs = &seq;
    sp.n_outputs = 1;
    sp.outputs = &out;
    sp.n_nonseqs = 1;
    sp.nonseq_outer = &in[1];
    sp.nonseq_inner = &wi;
    weft_var_t *y = NULL;
    assert_non_null(weft_scan(g, &sp, &y));
    return y;
}

/* h_t = x_t^T @ h_{t-1} + x_t @ w, x of (T, 3, 3), h of (3, 2): scan_split_map
 * moves x_t @ w to a map scan; the transpose x_t^T, read only by the loop,
 * stays in it (a (T, 3, 3) stacked copy otherwise). Values are the bits of
 * the unsplit scan at 1, 2 and 4 workers. */
static void test_split_map_keeps_views_in_loop(void **state)
{
    (void)state;
    enum { T = 5 };
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    int64_t sx[3] = {T, 3, 3}, sh[2] = {3, 2};
    weft_var_t *in[3] = {weft_var_create(g, ttype(g, 3, sx), "x"),
                         weft_var_create(g, ttype(g, 2, sh), "w"),
                         weft_var_create(g, ttype(g, 2, sh), "h0")};
    weft_var_t *xt = weft_var_create(g, ttype(g, 2, sx + 1), "x_t");
    weft_var_t *hp = weft_var_create(g, ttype(g, 2, sh), "h_prev");
    weft_var_t *wi = weft_var_create(g, ttype(g, 2, sh), "w_in");
    weft_var_t *upd =
        weft_add(g, weft_dot(g, weft_transpose(g, xt), hp), weft_dot(g, xt, wi));
    weft_var_t *y = scan_xwh(g, in, xt, wi, hp, upd);
    weft_tensor_t *v[3] = {NULL, NULL, NULL};
    const int64_t *shapes[3] = {sx, sh, sh};
    for (int k = 0; k < 3; k++) {
        assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, k ? 2 : 3, shapes[k], &v[k]), WEFT_OK);
        double *d = weft_tensor_data(v[k]);
        for (size_t i = 0; i < weft_tensor_size(v[k]); i++)
            d[i] = 0.25 * (double)((i * 7 + k) % 9) - 1;
    }
    const char *split[1] = {WEFT_SCAN_SPLIT_MAP_REWRITE}; /* on request only */
    weft_tensor_t *ref = NULL;
    for (int threads = 0; threads <= 4; threads = threads ? threads * 2 : 1) {
        weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
        o.threads = threads ? threads : 1;
        o.profile = true;
        o.include = split;
        o.n_include = threads ? 1 : 0; /* threads 0: the unsplit reference */
        weft_function_t *f = NULL;
        assert_int_equal(weft_function_compile(3, in, 1, &y, 0, NULL, &o, &f), WEFT_OK);
        weft_tensor_t *r = NULL;
        assert_int_equal(weft_function_call(f, 3, v, 1, &r), WEFT_OK);
        weft_profile_t *p = NULL;
        assert_int_equal(weft_profile_create(f, WEFT_PROFILE_LAST_CALL, &p), WEFT_OK);
        size_t scans = 0;
        for (size_t k = 0; k < p->n_applies; k++) {
            if (strcmp(p->applies[k].op_class, "Scan")) continue;
            scans++;
            assert_string_equal(p->applies[k].out_types, "float64[?,3,2]");
        }
        weft_profile_destroy(p);
        assert_int_equal(scans, threads ? 2 : 1);
        if (!threads) ref = r;
        else {
            assert_memory_equal(weft_tensor_data(r), weft_tensor_data(ref), T * 6 * sizeof(double));
            weft_tensor_release(r);
        }
        weft_function_destroy(f);
    }
    weft_tensor_release(ref);
    for (int k = 0; k < 3; k++) weft_tensor_release(v[k]);
    weft_graph_destroy(g);
}

/* The Scan applies' output types of f, joined by " | " in node order. */
static void scan_types(weft_function_t *f, char *buf, size_t cap)
{
    weft_profile_t *p = NULL;
    assert_int_equal(weft_profile_create(f, WEFT_PROFILE_LAST_CALL, &p), WEFT_OK);
    buf[0] = '\0';
    size_t len = 0;
    for (size_t k = 0; k < p->n_applies; k++)
        if (!strcmp(p->applies[k].op_class, "Scan"))
            len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? " | " : "",
                                    p->applies[k].out_types);
    weft_profile_destroy(p);
}

/* d sum(H) / d w of h_t = tanh(h_{t-1} * w + x_t): the reverse scan also
 * computes d cost / d x_t, stacked, which nothing reads; scan_prune_outputs
 * drops it (the reverse scan keeps lam and acc_w), same bits. */
static void test_prune_unread_grad(void **state)
{
    (void)state;
    enum { T = 6 };
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    int64_t sx[2] = {T, 4}, four = 4;
    weft_var_t *in[3] = {weft_var_create(g, ttype(g, 2, sx), "x"),
                         weft_var_create(g, ttype(g, 1, &four), "w"),
                         weft_var_create(g, ttype(g, 1, &four), "h0")};
    weft_var_t *xt = weft_var_create(g, ttype(g, 1, &four), "x_t");
    weft_var_t *hp = weft_var_create(g, ttype(g, 1, &four), "h_prev");
    weft_var_t *wi = weft_var_create(g, ttype(g, 1, &four), "w_in");
    weft_var_t *y = scan_xwh(g, in, xt, wi, hp, weft_tanh(g, weft_add(g, weft_mul(g, hp, wi), xt)));
    weft_var_t *gw = NULL;
    assert_non_null(weft_grads(g, weft_sum(g, y, 0, NULL, false), 1, &in[1], NULL, &gw));
    weft_tensor_t *v[3] = {vec(T * 4, 0.3), vec(4, 0.2), vec(4, 0.1)}, *rs[2] = {NULL, NULL};
    weft_tensor_t *x2 = NULL;
    assert_int_equal(weft_tensor_reshape(v[0], 2, sx, &x2), WEFT_OK);
    weft_tensor_release(v[0]);
    v[0] = x2;
    const char *ex[1] = {WEFT_SCAN_PRUNE_REWRITE};
    char types[2][256];
    for (int prune = 0; prune < 2; prune++) {
        weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
        o.threads = 1;
        o.profile = true;
        o.exclude = ex;
        o.n_exclude = prune ? 0 : 1;
        weft_function_t *f = NULL;
        assert_int_equal(weft_function_compile(3, in, 1, &gw, 0, NULL, &o, &f), WEFT_OK);
        assert_int_equal(weft_function_call(f, 3, v, 1, &rs[prune]), WEFT_OK);
        scan_types(f, types[prune], sizeof types[prune]);
        weft_function_destroy(f);
    }
    printf("without: %s\nwith:    %s\n", types[0], types[1]);
    /* the unread stacked d cost / d x_t (float64[?,4]) is gone */
    assert_non_null(strstr(types[0], "float64[4], float64[?,4]"));
    assert_null(strstr(types[1], "float64[4], float64[?,4]"));
    assert_memory_equal(weft_tensor_data(rs[0]), weft_tensor_data(rs[1]), 4 * sizeof(double));
    for (int k = 0; k < 3; k++) weft_tensor_release(v[k]);
    weft_tensor_release(rs[0]);
    weft_tensor_release(rs[1]);
    weft_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_warm_calls_allocate_nothing),
        cmocka_unit_test(test_step0_shape_error_both_paths),
        cmocka_unit_test(test_split_map_keeps_views_in_loop),
        cmocka_unit_test(test_prune_unread_grad),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
