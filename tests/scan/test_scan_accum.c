/* An RNN's gradient as the Scan benchmark computes it (docs/control-flow.md
 * §5.6), at a small size: its loop carries a chain (dh), so scan_chunk_sum,
 * not scan_push_out_dot, takes the weight gradients (acc + x_t^T dz_t,
 * acc + h_{t-1}^T dz_t): marked as chunk sums, giving the loop's values to
 * rounding; fast_math excluded, neither runs. scan_push_out_dot sums an
 * accumulator of a loop without a chain after the loop as one product over
 * the stacked rows, leaving alone accumulators it cannot move (state read
 * elsewhere, a product that is not P^T B, every state read). scan_fill_seq reads the gradient's ones (ReduceGrad of a
 * sum) as one row instead of a stacked sequence. Warm calls of a function whose Scan reads and writes
 * stacked intermediates take every buffer from the pool (the row views a
 * Scan keeps between runs are parked, scan_park.c). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "weft/elemwise.h"
#include "weft/function.h"
#include "weft/grad.h"
#include "weft/graph.h"
#include "weft/linalg.h"
#include "weft/reduce.h"
#include "weft/scan.h"
#include "weft/shape_ops.h"
#include "weft/tensor.h"

enum { NT = 7, NB = 3, NI = 4, NH = 5 };

static const weft_type_t *tt(weft_graph_t *g, int nd, const int64_t *shape)
{
    const weft_type_t *t = NULL;
    assert_int_equal(weft_type_tensor(g, WEFT_FLOAT64, nd, shape, &t), WEFT_OK);
    return t;
}

static weft_tensor_t *filled(int nd, const int64_t *shape, unsigned seed, double scale)
{
    weft_tensor_t *t = NULL;
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, nd, shape, &t), WEFT_OK);
    double *d = weft_tensor_data(t);
    for (size_t i = 0; i < weft_tensor_size(t); i++) {
        seed = seed * 1103515245u + 12345u;
        d[i] = scale * (((seed >> 8) % 2001) / 1000.0 - 1.0);
    }
    return t;
}

typedef struct rnn {
    weft_graph_t *g;
    weft_var_t *in[5]; /* x, W, U, b, h0 */
    weft_var_t *out[4]; /* H, dW, dU, db of sum(H) */
    weft_tensor_t *val[5];
} rnn_t;

/* y of a scan of one carried output over seqs (the first n_seqs) and
 * n_ns non-sequences (outer values ns_out, placeholders ns_in). */
static weft_var_t *scan1(weft_graph_t *g, weft_scan_seq_t *seqs, uint32_t n_seqs,
                         weft_scan_output_t *out, uint32_t n_ns, weft_var_t **ns_out,
                         weft_var_t **ns_in)
{
    weft_scan_spec_t sp = WEFT_SCAN_SPEC_INIT;
    sp.n_seqs = n_seqs;
    sp.seqs = seqs;
    sp.n_outputs = 1;
    sp.outputs = out;
    sp.n_nonseqs = n_ns;
    sp.nonseq_outer = ns_out;
    sp.nonseq_inner = ns_in;
    weft_var_t *y = NULL;
    assert_non_null(weft_scan(g, &sp, &y));
    return y;
}

/* h_t = tanh(x_t W + h_{t-1} U + b) over NT steps, and the gradient of
 * sum(H) with respect to W, U and b. */
static void rnn_build(rnn_t *r)
{
    int64_t sx[3] = {NT, NB, NI}, sw[2] = {NI, NH}, su[2] = {NH, NH}, sb[1] = {NH},
            sh[2] = {NB, NH};
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    r->g = g;
    const int64_t *shapes[5] = {sx, sw, su, sb, sh};
    const int nds[5] = {3, 2, 2, 1, 2};
    const char *names[5] = {"x", "W", "U", "b", "h0"};
    for (int k = 0; k < 5; k++) {
        r->in[k] = weft_var_create(g, tt(g, nds[k], shapes[k]), names[k]);
        r->val[k] = filled(nds[k], shapes[k], 11u * (unsigned)k + 3u, k == 0 ? 1.0 : 0.5);
    }
    weft_var_t *xt = weft_var_create(g, tt(g, 2, sx + 1), "x_t");
    weft_var_t *hp = weft_var_create(g, tt(g, 2, sh), "h_prev");
    weft_var_t *nsi[3] = {weft_var_create(g, tt(g, 2, sw), "W_in"),
                          weft_var_create(g, tt(g, 2, su), "U_in"),
                          weft_var_create(g, tt(g, 1, sb), "b_in")};
    weft_var_t *hn = weft_tanh(g, weft_add(g, weft_add(g, weft_dot(g, xt, nsi[0]),
                                                       weft_dot(g, hp, nsi[1])), nsi[2]));
    weft_scan_seq_t seq = {r->in[0], 0, NULL, &xt};
    weft_scan_output_t out = {hn, r->in[4], 0, NULL, &hp};
    r->out[0] = scan1(g, &seq, 1, &out, 3, r->in + 1, nsi);
    weft_var_t *cost = weft_sum(g, r->out[0], 0, NULL, false);
    assert_non_null(weft_grads(g, cost, 3, r->in + 1, NULL, r->out + 1));
}

static void rnn_free(rnn_t *r)
{
    for (int k = 0; k < 5; k++) weft_tensor_release(r->val[k]);
    weft_graph_destroy(r->g);
}

/* Compiles outs (exclude: a rewrite or tag left out, or NULL), calls it
 * once into res and prints the function's nodes into text. */
static void run(weft_var_t *const *in, weft_tensor_t **val, size_t n_out, weft_var_t *const *outs,
                const char *exclude, weft_tensor_t **res, char *text, size_t cap)
{
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.threads = 1;
    o.exclude = &exclude;
    o.n_exclude = exclude ? 1 : 0;
    weft_function_t *f = NULL;
    assert_int_equal(weft_function_compile(5, in, n_out, outs, 0, NULL, &o, &f), WEFT_OK);
    assert_int_equal(weft_function_call(f, 5, val, n_out, res), WEFT_OK);
    FILE *m = fmemopen(text, cap, "w");
    assert_non_null(m);
    assert_int_equal(weft_function_print(f, m), WEFT_OK);
    fclose(m);
    text[cap - 1] = '\0';
    weft_function_destroy(f);
}

static double max_diff(const weft_tensor_t *a, const weft_tensor_t *b)
{
    assert_int_equal(weft_tensor_size(a), weft_tensor_size(b));
    double worst = 0;
    for (size_t i = 0; i < weft_tensor_size(a); i++)
        worst = fmax(worst, fabs(weft_tensor_flat_get(a, i) - weft_tensor_flat_get(b, i)));
    return worst;
}

static void test_chunk_sum_marks_weight_grads(void **state)
{
    (void)state;
    rnn_t r;
    rnn_build(&r);
    static char with[8192], without[8192], no_fm[8192];
    weft_tensor_t *a[4] = {NULL}, *b[4] = {NULL}, *c[4] = {NULL};
    run(r.in, r.val, 4, r.out, NULL, a, with, sizeof with);
    run(r.in, r.val, 4, r.out, WEFT_SCAN_CHUNK_SUM_REWRITE, b, without, sizeof without);
    run(r.in, r.val, 4, r.out, "fast_math", c, no_fm, sizeof no_fm);
    printf("with:\n%s\nwithout:\n%s", with, without);
    /* dh, dW, dU, db stay carried, dW and dU summed in chunks; nothing is
     * pushed out after the loop */
    const char *marked = "grad_scan: 2 seqs, 4 outputs (4 carried), 7 non-seqs, reverse, "
                         "last-state outputs, chunk sums}";
    assert_non_null(strstr(with, marked));
    assert_null(strstr(with, "Reshape{"));
    assert_non_null(strstr(without, "reverse, last-state outputs}"));
    assert_null(strstr(without, "chunk sums"));
    assert_null(strstr(without, "Reshape{"));
    assert_null(strstr(no_fm, "chunk sums"));
    assert_null(strstr(no_fm, "Reshape{"));
    /* H is the same loop; the sums differ from the loop's by rounding */
    assert_memory_equal(weft_tensor_data(a[0]), weft_tensor_data(b[0]),
                        weft_tensor_size(a[0]) * sizeof(double));
    for (int k = 1; k < 4; k++) {
        assert_true(max_diff(a[k], b[k]) < 1e-13);
        assert_true(max_diff(a[k], c[k]) < 1e-13);
    }
    for (int k = 0; k < 4; k++) {
        weft_tensor_release(a[k]);
        weft_tensor_release(b[k]);
        weft_tensor_release(c[k]);
    }
    rnn_free(&r);
}

/* Calls y compiled with (a, text with) and without (b, without) rewrite:
 * the same graph and bits when same, else the rewrite's nodes differ. */
static void with_without(rnn_t *r, weft_var_t *y, const char *rewrite, bool same, char *with,
                         char *without, size_t cap, weft_tensor_t **a, weft_tensor_t **b)
{
    run(r->in, r->val, 1, &y, NULL, a, with, cap);
    run(r->in, r->val, 1, &y, rewrite, b, without, cap);
    if (!same) return;
    assert_string_equal(with, without);
    assert_memory_equal(weft_tensor_data(*a), weft_tensor_data(*b),
                        weft_tensor_size(*a) * sizeof(double));
}

/* acc_t = acc_{t-1} + d_t over x (NT, NB, NI), init zeros (NI, NI); kind 0:
 * d = x^T (x acc) (the state is read by the product too), kind 1: d =
 * (2 x^T) x (the left operand is no transpose), kind 2: d = x^T x, every
 * state read (stacked), kind 3: d = x^T x, the last state read (moved). */
static weft_var_t *accumulate(weft_graph_t *g, weft_var_t *x, int kind)
{
    int64_t sx[2] = {NB, NI}, sa[2] = {NI, NI};
    weft_var_t *xt = weft_var_create(g, tt(g, 2, sx), "x_t");
    weft_var_t *acc = weft_var_create(g, tt(g, 2, sa), "acc");
    weft_var_t *xtt = weft_transpose(g, xt), *d = NULL;
    if (kind == 0)
        d = weft_dot(g, xtt, weft_dot(g, xt, acc));
    else if (kind == 1)
        d = weft_dot(g, weft_mul(g, xtt, weft_constant_scalar(g, WEFT_FLOAT64, 2.0)), xt);
    else
        d = weft_dot(g, xtt, xt);
    double zeros[NI * NI] = {0};
    weft_var_t *init = weft_constant_create(g, tt(g, 2, sa), zeros, sizeof zeros);
    weft_scan_seq_t seq = {x, 0, NULL, &xt};
    weft_scan_output_t out = {weft_add(g, acc, d), init, 0, NULL, &acc};
    weft_var_t *y = scan1(g, &seq, 1, &out, 0, NULL, NULL);
    const weft_slice_t at[1] = {WEFT_SLICE_AT(-1)};
    return kind == 2 ? y : weft_subtensor(g, y, 1, at);
}

static void test_push_out_dot_leaves_other_accumulators(void **state)
{
    (void)state;
    rnn_t r;
    rnn_build(&r);
    for (int kind = 0; kind < 4; kind++) {
        weft_var_t *y = accumulate(r.g, r.in[0], kind);
        assert_non_null(y);
        static char with[4096], without[4096];
        weft_tensor_t *a = NULL, *b = NULL;
        /* kind 3 is the control: moved, the same sums to rounding */
        with_without(&r, y, WEFT_SCAN_PUSH_OUT_DOT_REWRITE, kind != 3, with, without,
                     sizeof with, &a, &b);
        assert_null(strstr(without, "Reshape{"));
        if (kind == 3) assert_non_null(strstr(with, "Reshape{shape=(-1,4)}"));
        if (kind == 3) assert_true(max_diff(a, b) < 1e-13);
        weft_tensor_release(a);
        weft_tensor_release(b);
    }
    rnn_free(&r);
}

/* The RNN gradient's sequence of ones (ReduceGrad of sum(H), H a sequence
 * of the same scans) becomes one constant row read by every step: no
 * ReduceGrad is left, and the values are the same bits. */
static void test_fill_seq_drops_the_ones(void **state)
{
    (void)state;
    rnn_t r;
    rnn_build(&r);
    static char with[8192], without[8192];
    weft_tensor_t *a[4] = {NULL}, *b[4] = {NULL};
    run(r.in, r.val, 4, r.out, NULL, a, with, sizeof with);
    run(r.in, r.val, 4, r.out, WEFT_SCAN_FILL_SEQ_REWRITE, b, without, sizeof without);
    assert_null(strstr(with, "ReduceGrad"));
    assert_non_null(strstr(with, "Constant{float64[3,5]}"));
    assert_non_null(strstr(with, "grad_scan: 2 seqs"));
    assert_non_null(strstr(without, "ReduceGrad{kind=Sum, axes=(0,1,2), keepdims=0}"));
    assert_non_null(strstr(without, "grad_scan: 3 seqs"));
    for (int k = 0; k < 4; k++) {
        assert_memory_equal(weft_tensor_data(a[k]), weft_tensor_data(b[k]),
                            weft_tensor_size(a[k]) * sizeof(double));
        weft_tensor_release(a[k]);
        weft_tensor_release(b[k]);
    }
    rnn_free(&r);
}

/* A scan over s = d(sum(x) sum(b)) / dx = ReduceGrad(x, gz), gz computed
 * from an input: acc_t = acc_{t-1} * x_t + s_t when x is a sequence too (the ones
 * go: gz is read as a non-sequence), acc_t = acc_{t-1} + s_t when it is not
 * (they stay: x's rows fix the step count), or when s_t's lengths are
 * not static. */
static void test_fill_seq_needs_x_as_a_sequence(void **state)
{
    (void)state;
    rnn_t r;
    rnn_build(&r);
    weft_graph_t *g = r.g;
    weft_var_t *x = r.in[0], *gz = weft_sum(g, r.in[3], 0, NULL, false); /* sum(b) */
    weft_var_t *cost = weft_mul(g, weft_sum(g, x, 0, NULL, false), gz), *dx = NULL;
    assert_non_null(weft_grads(g, cost, 1, &x, NULL, &dx)); /* ReduceGrad(x, sum(b)) */
    int64_t sr[2] = {NB, NI}, unknown[2] = {WEFT_DIM_UNKNOWN, WEFT_DIM_UNKNOWN};
    /* with_x 2: x is a sequence, but s_t's lengths are not static (no row
     * to fill: left alone) */
    for (int with_x = 0; with_x < 3; with_x++) {
        weft_var_t *st = weft_var_create(g, tt(g, 2, with_x == 2 ? unknown : sr), "s_t");
        weft_var_t *xt = weft_var_create(g, tt(g, 2, sr), "x_t");
        weft_var_t *acc = weft_var_create(g, tt(g, 2, sr), "acc");
        weft_var_t *prev = with_x ? weft_mul(g, acc, xt) : acc;
        weft_scan_seq_t seqs[2] = {{dx, 0, NULL, &st}, {x, 0, NULL, &xt}};
        double zeros[NB * NI] = {0};
        weft_scan_output_t out = {weft_add(g, prev, st),
                                  weft_constant_create(g, tt(g, 2, sr), zeros, sizeof zeros), 0,
                                  NULL, &acc};
        weft_var_t *y = scan1(g, seqs, with_x ? 2 : 1, &out, 0, NULL, NULL);
        static char with[4096], without[4096];
        weft_tensor_t *a = NULL, *b = NULL;
        with_without(&r, y, WEFT_SCAN_FILL_SEQ_REWRITE, with_x != 1, with, without, sizeof with,
                     &a, &b);
        assert_non_null(strstr(without, "ReduceGrad"));
        if (with_x == 1) assert_null(strstr(with, "ReduceGrad"));
        assert_memory_equal(weft_tensor_data(a), weft_tensor_data(b),
                            weft_tensor_size(a) * sizeof(double));
        weft_tensor_release(a);
        weft_tensor_release(b);
    }
    rnn_free(&r);
}

/* The forward pass with sum(H) as the output: the loop's H is an
 * intermediate whose rows the Scan - its pipelined stages too - reads and
 * writes through views it keeps between runs (parked after each run).
 * After the first call, every call takes all of its buffers from the pool. */
static void test_warm_calls_reuse_stacked_intermediates(void **state)
{
    (void)state;
    rnn_t r;
    rnn_build(&r);
    weft_var_t *cost = weft_sum(r.g, r.out[0], 0, NULL, false);
    for (int threads = 1; threads <= 2; threads++) {
        weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
        o.threads = threads;
        weft_function_t *f = NULL;
        weft_var_t *outs[2] = {cost, r.out[1]};
        assert_int_equal(weft_function_compile(5, r.in, 2, outs, 0, NULL, &o, &f), WEFT_OK);
        weft_function_stats_t st[2];
        memset(st, 0, sizeof st);
        st[0].size = st[1].size = sizeof st[0];
        int64_t sw[2] = {NI, NH};
        weft_tensor_t *res[2] = {NULL, NULL}; /* supplied: none handed over */
        assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, 0, NULL, &res[0]), WEFT_OK);
        assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, 2, sw, &res[1]), WEFT_OK);
        for (int call = 0; call < 5; call++) {
            assert_int_equal(weft_function_call(f, 5, r.val, 2, res), WEFT_OK);
            if (call == 0) assert_int_equal(weft_function_stats(f, &st[0]), WEFT_OK);
        }
        assert_int_equal(weft_function_stats(f, &st[1]), WEFT_OK);
        assert_true(st[0].buffers_allocated > 0);
        assert_int_equal(st[1].buffers_allocated, st[0].buffers_allocated);
        weft_tensor_release(res[0]);
        weft_tensor_release(res[1]);
        weft_function_destroy(f);
    }
    rnn_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chunk_sum_marks_weight_grads),
        cmocka_unit_test(test_push_out_dot_leaves_other_accumulators),
        cmocka_unit_test(test_fill_seq_drops_the_ones),
        cmocka_unit_test(test_fill_seq_needs_x_as_a_sequence),
        cmocka_unit_test(test_warm_calls_reuse_stacked_intermediates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
