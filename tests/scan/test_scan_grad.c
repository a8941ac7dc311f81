/* Scan's gradient beyond taps {0}/{-1} (docs/control-flow.md §5.5):
 * sequence taps with unread rows, carried taps with windows and the
 * gradient of init's rows, while loops (until) differentiated over the
 * steps run - each against finite differences (weft_verify_grad) and exact
 * closed forms; reverse scans, second order and scans of 0 steps; the
 * compiled gradient against the evaluator's and the same bits at 1, 2 and
 * 4 workers; the scans still refused, named. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "ops_check.h"
#include "weft/weft.h"

static weft_var_t *scalar_ph(weft_graph_t *g, const char *name)
{
    const weft_type_t *t = NULL;
    weft_type_tensor(g, WEFT_FLOAT64, 0, NULL, &t);
    return weft_var_create(g, t, name);
}

static weft_var_t *vec_ph(weft_graph_t *g, int64_t n, const char *name)
{
    const weft_type_t *t = NULL;
    weft_type_tensor(g, WEFT_FLOAT64, 1, &n, &t);
    return weft_var_create(g, t, name);
}

static weft_var_t *num(weft_graph_t *g, double v)
{
    return weft_constant_scalar(g, WEFT_FLOAT64, v);
}

/* The extras of scan_one: n_ns non-sequences (outer, inner), until,
 * reverse, a run-time step count (n_steps_var). */
typedef struct extras {
    size_t n_ns;
    weft_var_t *const *ns_outer, *const *ns_inner;
    weft_var_t *until;
    bool reverse;
    weft_var_t *n_steps_var;
} extras_t;

/* A Scan of at most one sequence (NULL: none) and one output over n_steps
 * steps, with ex's extras (NULL: none); returns its stacked output. */
static weft_var_t *scan_one(weft_graph_t *g, const weft_scan_seq_t *seq,
                            const weft_scan_output_t *out, int64_t n_steps, const extras_t *ex)
{
    weft_scan_spec_t sp = WEFT_SCAN_SPEC_INIT;
    sp.n_seqs = seq ? 1 : 0;
    sp.seqs = seq;
    sp.n_outputs = 1;
    sp.outputs = out;
    sp.n_steps = n_steps;
    if (ex) {
        sp.n_nonseqs = ex->n_ns;
        sp.nonseq_outer = ex->ns_outer;
        sp.nonseq_inner = ex->ns_inner;
        sp.until = ex->until;
        sp.reverse = ex->reverse;
        sp.n_steps_var = ex->n_steps_var;
    }
    weft_var_t *y = NULL;
    return weft_scan(g, &sp, &y);
}

/* A C-contiguous copy of t (gradients of sequences are flipped views). */
static weft_tensor_t *contig(const weft_tensor_t *t)
{
    weft_tensor_t *c = NULL;
    assert_int_equal(weft_tensor_empty(weft_tensor_dtype(t), weft_tensor_ndim(t),
                                       weft_tensor_shape(t), &c),
                     WEFT_OK);
    assert_int_equal(weft_tensor_copy(c, t), WEFT_OK);
    return c;
}

/* Evaluates outs (weft_eval) and checks each against want[k] within tol. */
static void expect_grads(weft_graph_t *g, size_t n_in, weft_var_t *const *in,
                         weft_tensor_t *const *vals, size_t n_out, weft_var_t *const *outs,
                         const double *const *want, const int64_t *lens, double tol)
{
    weft_tensor_t *res[8];
    assert_int_equal(weft_eval(g, n_in, in, vals, n_out, outs, res), WEFT_OK);
    for (size_t k = 0; k < n_out; k++) {
        weft_tensor_t *c = contig(res[k]);
        ck_expect(c, lens[k] < 0 ? 0 : 1, &lens[k], want[k], tol);
        weft_tensor_release(c);
        weft_tensor_release(res[k]);
    }
}

/* ---- sequence taps ---------------------------------------------------------------- */

#define TAPS_N 6     /* steps */
#define TAPS_LEN 13  /* rows: 6 + span 5 + 2 rows no step reads */

/* Over taps {-2, 0, 3} (step t reads rows t, t+2, t+5 of x):
 * h_t = a + x[t] + 2 x[t+2] + 3 b(x[t+5]) with a = h_{t-1}, b the identity
 * (linear) or a = 0.5 h_{t-1} x[t], b = sin; six steps of a sequence two
 * rows longer than they read. */
static weft_var_t *taps_scan(weft_graph_t *g, weft_var_t *x, weft_var_t *h0, bool linear)
{
    weft_var_t *xs[3] = {scalar_ph(g, "x_m2"), scalar_ph(g, "x_0"), scalar_ph(g, "x_3")};
    weft_var_t *h = scalar_ph(g, "h");
    static const int64_t taps[3] = {-2, 0, 3};
    weft_var_t *carry = linear ? h : weft_mul(g, weft_mul(g, num(g, 0.5), h), xs[0]);
    weft_var_t *upd = weft_add(g, carry, xs[0]);
    upd = weft_add(g, upd, weft_mul(g, num(g, 2.0), xs[1]));
    upd = weft_add(g, upd, weft_mul(g, num(g, 3.0), linear ? xs[2] : weft_sin(g, xs[2])));
    weft_scan_seq_t seq = {x, 3, taps, xs};
    weft_scan_output_t out = {upd, h0, 0, NULL, &h};
    return scan_one(g, &seq, &out, TAPS_N, NULL);
}

static weft_var_t *taps_fn(weft_graph_t *g, size_t n_in, weft_var_t *const *in, void *user)
{
    (void)n_in;
    (void)user;
    return taps_scan(g, in[0], in[1], false);
}

/* Row i of x feeds step i - d for d in {0, 2, 5} with weights 1, 2, 3;
 * with cost sum(Y), step t's value reaches n - t outputs. Rows 11 and 12
 * are read by no step: zero. */
static void test_seq_taps(void **state)
{
    (void)state;
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    weft_var_t *in[2] = {vec_ph(g, TAPS_LEN, "x"), scalar_ph(g, "h0")};
    weft_var_t *y = taps_scan(g, in[0], in[1], true);
    weft_var_t *gr[2];
    assert_non_null(weft_grads(g, weft_sum(g, y, 0, NULL, false), 2, in, NULL, gr));
    double gx[TAPS_LEN] = {0}, gh0 = TAPS_N;
    static const int64_t d[3] = {0, 2, 5};
    for (int i = 0; i < TAPS_LEN; i++)
        for (int k = 0; k < 3; k++)
            if (i - d[k] >= 0 && i - d[k] < TAPS_N) gx[i] += (k + 1) * (double)(TAPS_N - (i - d[k]));
    int64_t lx = TAPS_LEN;
    weft_tensor_t *vals[2] = {ck_random(WEFT_FLOAT64, 1, &lx, -1, 1, 3),
                              ck_tensor(WEFT_FLOAT64, 0, NULL, (double[]){0.25})};
    const double *want[2] = {gx, &gh0};
    const int64_t lens[2] = {TAPS_LEN, -1};
    expect_grads(g, 2, in, vals, 2, gr, want, lens, 0.0);
    ck_verify(taps_fn, NULL, 2, vals);
    weft_tensor_release(vals[0]);
    weft_tensor_release(vals[1]);
    weft_graph_destroy(g);
}

/* ---- carried taps ------------------------------------------------------------------- */

/* Fibonacci from init = (h_{-2}, h_{-1}) = (a, b): h_t = F_{t+1} a + F_{t+2} b,
 * so h_9 = 55 a + 89 b; with cost sum(Y), the sums of those: 143 and 231. */
static void test_fibonacci(void **state)
{
    (void)state;
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    weft_var_t *init = vec_ph(g, 2, "init");
    weft_var_t *h[2] = {scalar_ph(g, "h_m2"), scalar_ph(g, "h_m1")};
    static const int64_t taps[2] = {-2, -1};
    weft_scan_output_t out = {weft_add(g, h[0], h[1]), init, 2, taps, h};
    weft_var_t *y = scan_one(g, NULL, &out, 10, NULL);
    assert_non_null(y);
    const weft_slice_t last[1] = {WEFT_SLICE_AT(-1)};
    weft_var_t *gl = weft_grad(g, weft_subtensor(g, y, 1, last), init);
    weft_var_t *gs = weft_grad(g, weft_sum(g, y, 0, NULL, false), init);
    assert_non_null(gl);
    assert_non_null(gs);
    int64_t two = 2;
    weft_tensor_t *v = ck_tensor(WEFT_FLOAT64, 1, &two, (double[]){0.5, -1.0});
    weft_var_t *outs[2] = {gl, gs};
    const double *want[2] = {(double[]){55, 89}, (double[]){143, 231}};
    const int64_t lens[2] = {2, 2};
    expect_grads(g, 1, &init, &v, 2, outs, want, lens, 0.0);
    weft_tensor_release(v);
    weft_graph_destroy(g);
}

#define WIN_T 7
#define WIN_D 3

/* A window with a gap: taps {-3, -1} (tap -2 unread), init of 3 rows, a
 * non-sequence w and a sequence with taps {-1, 1} one row longer than the
 * steps read: h_t = tanh(h_{t-1} * w + 0.5 h_{t-3} h_{t-1}) + x[t] x[t+2],
 * over *user steps (default WIN_T). Its backward step reads h_{t-3}: the
 * first 3 steps read init's rows. */
static weft_var_t *window_fn(weft_graph_t *g, size_t n_in, weft_var_t *const *in, void *user)
{
    (void)n_in;
    weft_var_t *h[2] = {vec_ph(g, WIN_D, "h_m3"), vec_ph(g, WIN_D, "h_m1")};
    weft_var_t *xs[2] = {vec_ph(g, WIN_D, "x_m1"), vec_ph(g, WIN_D, "x_p1")};
    weft_var_t *w = vec_ph(g, WIN_D, "w_in");
    static const int64_t htaps[2] = {-3, -1}, xtaps[2] = {-1, 1};
    weft_var_t *pre = weft_add(g, weft_mul(g, h[1], w),
                               weft_mul(g, num(g, 0.5), weft_mul(g, h[0], h[1])));
    weft_var_t *upd = weft_add(g, weft_tanh(g, pre), weft_mul(g, xs[0], xs[1]));
    weft_scan_seq_t seq = {in[2], 2, xtaps, xs};
    weft_scan_output_t out = {upd, in[0], 2, htaps, h};
    extras_t ex = {.n_ns = 1, .ns_outer = &in[1], .ns_inner = &w};
    weft_var_t *y = scan_one(g, &seq, &out, user ? *(const int64_t *)user : WIN_T, &ex);
    return y ? weft_mul(g, y, y) : NULL;
}

static weft_tensor_t **window_points(weft_tensor_t **p)
{
    int64_t si[2] = {3, WIN_D}, sw = WIN_D, sx[2] = {WIN_T + 3, WIN_D};
    p[0] = ck_random(WEFT_FLOAT64, 2, si, -0.5, 0.5, 41);
    p[1] = ck_random(WEFT_FLOAT64, 1, &sw, -1, 1, 42);
    p[2] = ck_random(WEFT_FLOAT64, 2, sx, -1, 1, 43);
    return p;
}

/* Seven steps: the reverse scan over steps 3..6 reads H through views, a
 * second one steps 0..2 from init's rows; two steps: one scan over init's
 * rows joined to H (n <= 3). */
static void test_window_verify(void **state)
{
    (void)state;
    weft_tensor_t *p[3];
    int64_t two = 2;
    ck_verify(window_fn, NULL, 3, window_points(p));
    ck_verify(window_fn, &two, 3, p);
    for (int k = 0; k < 3; k++) weft_tensor_release(p[k]);
}

/* ---- while loops ---------------------------------------------------------------------- */

#define UNTIL_MAX 20

/* v_t = 1.5 v_{t-1} + x[t] until v_t > 10: from v0 = 1 and x = 0, six
 * steps (the last reaches 11.39). Not linear: plus 0.1 v_{t-1} x[t], so
 * that the backward step reads v_{t-1} (from a buffer of v0 and the
 * stored states: the length is known at run time only). Reverse: step t
 * reads x[19 - t]. */
static weft_var_t *until_scan(weft_graph_t *g, weft_var_t *v0, weft_var_t *x, bool linear,
                              bool reverse)
{
    weft_var_t *v = scalar_ph(g, "v"), *xt = scalar_ph(g, "x_t");
    weft_var_t *vn = weft_add(g, weft_mul(g, num(g, 1.5), v), xt);
    if (!linear) vn = weft_add(g, vn, weft_mul(g, num(g, 0.1), weft_mul(g, v, xt)));
    weft_scan_seq_t seq = {x, 0, NULL, &xt};
    weft_scan_output_t out = {vn, v0, 0, NULL, &v};
    extras_t ex = {.until = weft_gt(g, vn, num(g, 10.0)), .reverse = reverse};
    return scan_one(g, &seq, &out, UNTIL_MAX, &ex);
}

/* user: NULL, or bit 0 not linear, bit 1 reverse. */
static weft_var_t *until_fn(weft_graph_t *g, size_t n_in, weft_var_t *const *in, void *user)
{
    (void)n_in;
    int mode = user ? *(const int *)user : 0;
    return until_scan(g, in[0], in[1], !(mode & 1), (mode & 2) != 0);
}

/* d sum(Y) / d v0 = sum_{s<6} 1.5^{s+1}; d / d x[t] = sum_{t<=s<6} 1.5^{s-t}
 * for the six steps run, 0 for the 14 rows after them; the reverse scan's
 * the same, x's rows reversed. */
static void test_until(void **state)
{
    (void)state;
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    weft_var_t *in[2] = {scalar_ph(g, "v0"), vec_ph(g, UNTIL_MAX, "x")};
    weft_var_t *gr[4];
    for (int rev = 0; rev < 2; rev++)
        assert_non_null(weft_grads(g, weft_sum(g, until_scan(g, in[0], in[1], true, rev), 0, NULL,
                                               false),
                                   2, in, NULL, gr + 2 * rev));
    double gx[UNTIL_MAX] = {0}, gxr[UNTIL_MAX] = {0}, gv = 0;
    for (int s = 0; s < 6; s++) {
        gv += pow(1.5, s + 1);
        for (int t = 0; t <= s; t++) gx[t] += pow(1.5, s - t);
    }
    for (int t = 0; t < UNTIL_MAX; t++) gxr[UNTIL_MAX - 1 - t] = gx[t];
    int64_t lx = UNTIL_MAX;
    weft_tensor_t *vals[2] = {ck_tensor(WEFT_FLOAT64, 0, NULL, (double[]){1.0}),
                              ck_tensor(WEFT_FLOAT64, 1, &lx, NULL)};
    const double *want[4] = {&gv, gx, &gv, gxr};
    const int64_t lens[4] = {-1, UNTIL_MAX, -1, UNTIL_MAX};
    expect_grads(g, 2, in, vals, 4, gr, want, lens, 1e-12);
    weft_tensor_release(vals[1]);
    /* x small: the loop still stops after step 5 under the perturbations */
    vals[1] = ck_random(WEFT_FLOAT64, 1, &lx, -0.01, 0.01, 51);
    ck_verify(until_fn, NULL, 2, vals);
    for (int mode = 1; mode < 4; mode++) ck_verify(until_fn, &mode, 2, vals);
    weft_tensor_release(vals[0]);
    weft_tensor_release(vals[1]);
    weft_graph_destroy(g);
}

/* ---- compiled ------------------------------------------------------------------------- */

/* Compiles outs (fast_run) at `threads` workers and calls once. */
static void run_compiled(int threads, size_t n_in, weft_var_t *const *in,
                         weft_tensor_t *const *vals, size_t n_out, weft_var_t *const *outs,
                         weft_tensor_t **res)
{
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.threads = threads;
    weft_function_t *f = NULL;
    weft_status_t s = weft_function_compile(n_in, in, n_out, outs, 0, NULL, &o, &f);
    if (s != WEFT_OK) fprintf(stderr, "compile: %s\n", weft_function_last_error(NULL));
    assert_int_equal(s, WEFT_OK);
    for (size_t k = 0; k < n_out; k++) res[k] = NULL;
    s = weft_function_call(f, n_in, vals, n_out, res);
    if (s != WEFT_OK) fprintf(stderr, "call: %s\n", weft_function_last_error(f));
    assert_int_equal(s, WEFT_OK);
    weft_function_destroy(f);
    for (size_t k = 0; k < n_out; k++) {
        weft_tensor_t *c = contig(res[k]);
        weft_tensor_release(res[k]);
        res[k] = c;
    }
}

/* The compiled gradients equal the evaluator's (to rounding: fusion may
 * reorder) and have the same bits at 1, 2 and 4 workers. */
static void expect_compiled(weft_graph_t *g, size_t n, weft_var_t *const *in,
                            weft_tensor_t *const *vals, weft_var_t *const *gr)
{
    weft_tensor_t *ev[4], *ref[4], *r[4];
    assert_int_equal(weft_eval(g, n, in, vals, n, gr, ev), WEFT_OK);
    run_compiled(1, n, in, vals, n, gr, ref);
    for (size_t k = 0; k < n; k++) {
        weft_tensor_t *c = contig(ev[k]);
        const double *a = weft_tensor_data(c), *b = weft_tensor_data(ref[k]);
        assert_int_equal(weft_tensor_size(c), weft_tensor_size(ref[k]));
        for (size_t i = 0; i < weft_tensor_size(c); i++)
            assert_true(fabs(a[i] - b[i]) <= 1e-12 * (1 + fabs(a[i])));
        weft_tensor_release(c);
        weft_tensor_release(ev[k]);
    }
    for (int threads = 2; threads <= 4; threads *= 2) {
        run_compiled(threads, n, in, vals, n, gr, r);
        for (size_t k = 0; k < n; k++) {
            assert_memory_equal(weft_tensor_data(r[k]), weft_tensor_data(ref[k]),
                                weft_tensor_size(r[k]) * sizeof(double));
            weft_tensor_release(r[k]);
        }
    }
    for (size_t k = 0; k < n; k++) weft_tensor_release(ref[k]);
}

static void test_window_compiled(void **state)
{
    (void)state;
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    int64_t si[2] = {3, WIN_D}, sx[2] = {WIN_T + 3, WIN_D};
    weft_var_t *in[3] = {ck_var(g, WEFT_FLOAT64, 2, si), vec_ph(g, WIN_D, "w"),
                         ck_var(g, WEFT_FLOAT64, 2, sx)};
    weft_var_t *gr[3];
    assert_non_null(weft_grads(g, weft_sum(g, window_fn(g, 3, in, NULL), 0, NULL, false), 3, in,
                               NULL, gr));
    weft_tensor_t *p[3];
    expect_compiled(g, 3, in, window_points(p), gr);
    for (int k = 0; k < 3; k++) weft_tensor_release(p[k]);
    weft_graph_destroy(g);
}

/* Forward and reverse. */
static void test_until_compiled(void **state)
{
    (void)state;
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    weft_var_t *in[2] = {scalar_ph(g, "v0"), vec_ph(g, UNTIL_MAX, "x")};
    int64_t lx = UNTIL_MAX;
    weft_tensor_t *vals[2] = {ck_tensor(WEFT_FLOAT64, 0, NULL, (double[]){1.0}),
                              ck_random(WEFT_FLOAT64, 1, &lx, -0.01, 0.01, 61)};
    for (int rev = 0; rev < 2; rev++) {
        weft_var_t *y = until_scan(g, in[0], in[1], false, rev), *gr[2];
        assert_non_null(weft_grads(g, weft_sum(g, y, 0, NULL, false), 2, in, NULL, gr));
        expect_compiled(g, 2, in, vals, gr);
    }
    weft_tensor_release(vals[0]);
    weft_tensor_release(vals[1]);
    weft_graph_destroy(g);
}

/* ---- stored states read, not copied ------------------------------------------------------ */

/* In the gradient graph of window_fn over `steps` steps (grads of init, w
 * and x): the Scan nodes, and the Joins that read the forward output H
 * itself (a copy of every stored state). */
static void count_nodes(int64_t steps, size_t *n_scan, size_t *n_join_h)
{
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    int64_t si[2] = {3, WIN_D}, sx[2] = {steps + 3, WIN_D};
    weft_var_t *in[3] = {ck_var(g, WEFT_FLOAT64, 2, si), vec_ph(g, WIN_D, "w"),
                         ck_var(g, WEFT_FLOAT64, 2, sx)};
    weft_var_t *y = window_fn(g, 3, in, &steps), *gr[3];
    assert_non_null(weft_grads(g, weft_sum(g, y, 0, NULL, false), 3, in, NULL, gr));
    weft_var_t *h = weft_apply_input(weft_var_owner(y), 0); /* y = H * H */
    weft_fgraph_options_t fo = WEFT_FGRAPH_OPTIONS_INIT;
    fo.clone = false;
    weft_fgraph_t *fg = NULL;
    assert_int_equal(weft_fgraph_create(g, 3, in, 3, gr, &fo, NULL, &fg), WEFT_OK);
    weft_apply_t *const *nodes = NULL;
    size_t n = 0;
    assert_int_equal(weft_fgraph_applies(fg, &nodes, &n), WEFT_OK);
    *n_scan = *n_join_h = 0;
    for (size_t k = 0; k < n; k++) {
        const char *cls = weft_op_name(weft_apply_op(nodes[k]));
        *n_scan += !strcmp(cls, "Scan");
        for (size_t i = 0; !strcmp(cls, "Join") && i < weft_apply_n_inputs(nodes[k]); i++)
            *n_join_h += weft_apply_input(nodes[k], i) == h;
    }
    weft_fgraph_destroy(fg);
    weft_graph_destroy(g);
}

/* Seven steps, the first three reading init's rows: the forward scan and
 * two reverse ones, no Join of H (the last four read H through views);
 * two steps: one reverse scan over init's rows joined to H. */
static void test_states_not_copied(void **state)
{
    (void)state;
    size_t n_scan = 0, n_join_h = 0;
    count_nodes(WIN_T, &n_scan, &n_join_h);
    assert_int_equal(n_scan, 3);
    assert_int_equal(n_join_h, 0);
    count_nodes(2, &n_scan, &n_join_h);
    assert_int_equal(n_scan, 2);
    assert_int_equal(n_join_h, 1);
}

/* ---- still refused ----------------------------------------------------------------------- */

/* ---- reverse scans ------------------------------------------------------------------------ */

#define REV_N 5 /* steps */

/* A backwards cumulative sum with sequence taps {0, 2} over REV_N steps of
 * a sequence of REV_N + 3 rows (the last read by no step): step t reads
 * rows r = n-1-t and r+2. Linear: h_t = h_{t-1} + x[r] + 2 x[r+2] from a
 * scalar h0; else carried taps {-2, -1} from two rows of init:
 * h_t = h_{t-1} + 0.5 sin(h_{t-2}) x[r] + 2 x[r+2]. The step count is static
 * or (dyn) n_steps_var = len(x) - 3, known at run time only. */
static weft_var_t *rev_scan(weft_graph_t *g, weft_var_t *x, weft_var_t *init, bool linear,
                            bool dyn)
{
    weft_var_t *xs[2] = {scalar_ph(g, "x_0"), scalar_ph(g, "x_2")};
    weft_var_t *h[2] = {scalar_ph(g, "h_m2"), scalar_ph(g, "h_m1")};
    static const int64_t xtaps[2] = {0, 2}, htaps[2] = {-2, -1};
    weft_var_t *a = xs[0];
    if (!linear) a = weft_mul(g, weft_mul(g, num(g, 0.5), weft_sin(g, h[0])), xs[0]);
    weft_var_t *upd = weft_add(g, weft_add(g, h[1], a), weft_mul(g, num(g, 2.0), xs[1]));
    weft_scan_seq_t seq = {x, 2, xtaps, xs};
    weft_scan_output_t out = {upd, init, linear ? 0 : 2, linear ? NULL : htaps,
                              linear ? &h[1] : h};
    extras_t ex = {.reverse = true};
    if (dyn)
        ex.n_steps_var = weft_sub(g, weft_shape_i(g, x, 0), weft_constant_scalar(g, WEFT_INT64, 3));
    return scan_one(g, &seq, &out, REV_N, &ex);
}

static weft_var_t *rev_fn(weft_graph_t *g, size_t n_in, weft_var_t *const *in, void *user)
{
    (void)n_in;
    weft_var_t *y = rev_scan(g, in[0], in[1], false, user != NULL);
    return y ? weft_mul(g, y, y) : NULL;
}

/* Row i feeds step n-1-i through tap 0 (weight 1) and step n+1-i through
 * tap 2 (weight 2); step t's value reaches n - t outputs of sum(Y):
 * i + 1 and 2 (i - 1), the last row 0. Static and run-time lengths. */
static void test_reverse_taps(void **state)
{
    (void)state;
    for (int dyn = 0; dyn < 2; dyn++) {
        weft_graph_t *g = NULL;
        assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
        weft_var_t *in[2] = {vec_ph(g, REV_N + 3, "x"), scalar_ph(g, "h0")}, *gr[2];
        weft_var_t *y = rev_scan(g, in[0], in[1], true, dyn);
        assert_non_null(weft_grads(g, weft_sum(g, y, 0, NULL, false), 2, in, NULL, gr));
        int64_t lx = REV_N + 3;
        weft_tensor_t *vals[2] = {ck_random(WEFT_FLOAT64, 1, &lx, -1, 1, 71),
                                  ck_tensor(WEFT_FLOAT64, 0, NULL, (double[]){0.25})};
        const double gx[REV_N + 3] = {1, 2, 5, 8, 11, 8, 10, 0}, gh0 = REV_N;
        const double *want[2] = {gx, &gh0};
        const int64_t lens[2] = {REV_N + 3, -1};
        expect_grads(g, 2, in, vals, 2, gr, want, lens, 0.0);
        weft_tensor_release(vals[1]);
        int64_t two = 2;
        vals[1] = ck_random(WEFT_FLOAT64, 1, &two, -1, 1, 72);
        ck_verify(rev_fn, dyn ? g : NULL, 2, vals);
        weft_tensor_release(vals[0]);
        weft_tensor_release(vals[1]);
        weft_graph_destroy(g);
    }
}

#define RNN_T 4
#define RNN_D 3

/* h_t = tanh(h_{t-1} @ W + x_t) over the rows of x (reverse: from the
 * last; steps -1: as many as x has rows), cost sum(Y * Y). */
static weft_var_t *rnn(weft_graph_t *g, weft_var_t *h0, weft_var_t *w, weft_var_t *x, bool reverse,
                       int64_t steps)
{
    weft_var_t *h = vec_ph(g, RNN_D, "h"), *xt = vec_ph(g, RNN_D, "x_t");
    int64_t sw[2] = {RNN_D, RNN_D};
    weft_var_t *wi = ck_var(g, WEFT_FLOAT64, 2, sw);
    weft_var_t *upd = weft_tanh(g, weft_add(g, weft_matmul(g, h, wi), xt));
    weft_scan_seq_t seq = {x, 0, NULL, &xt};
    weft_scan_output_t out = {upd, h0, 0, NULL, &h};
    extras_t ex = {.n_ns = 1, .ns_outer = &w, .ns_inner = &wi, .reverse = reverse};
    weft_var_t *y = scan_one(g, &seq, &out, steps, &ex);
    return y ? weft_sum(g, weft_mul(g, y, y), 0, NULL, false) : NULL;
}

static weft_var_t *rev_rnn_fn(weft_graph_t *g, size_t n_in, weft_var_t *const *in, void *user)
{
    (void)n_in;
    (void)user;
    return rnn(g, in[0], in[1], in[2], true, -1);
}

static weft_tensor_t **rnn_points(weft_tensor_t **p, uint64_t seed)
{
    int64_t sw[2] = {RNN_D, RNN_D}, sh = RNN_D, sx[2] = {RNN_T, RNN_D};
    p[0] = ck_random(WEFT_FLOAT64, 1, &sh, -0.5, 0.5, seed);
    p[1] = ck_random(WEFT_FLOAT64, 2, sw, -0.8, 0.8, seed + 1);
    p[2] = ck_random(WEFT_FLOAT64, 2, sx, -1, 1, seed + 2);
    return p;
}

/* A reverse (go_backwards) RNN: verify_grad with respect to h0, W and x;
 * the compiled gradient against the evaluator's, same bits at 1, 2, 4
 * workers. */
static void test_reverse_rnn(void **state)
{
    (void)state;
    weft_tensor_t *p[3];
    ck_verify(rev_rnn_fn, NULL, 3, rnn_points(p, 81));
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    int64_t sw[2] = {RNN_D, RNN_D}, sx[2] = {RNN_T, RNN_D};
    weft_var_t *in[3] = {vec_ph(g, RNN_D, "h0"), ck_var(g, WEFT_FLOAT64, 2, sw),
                         ck_var(g, WEFT_FLOAT64, 2, sx)};
    weft_var_t *gr[3];
    assert_non_null(weft_grads(g, rev_rnn_fn(g, 3, in, NULL), 3, in, NULL, gr));
    expect_compiled(g, 3, in, p, gr);
    for (int k = 0; k < 3; k++) weft_tensor_release(p[k]);
    weft_graph_destroy(g);
}

/* sum(G * G), G = d cost / d W of the forward RNN (a reverse scan): its
 * gradient goes through the gradient's own reverse scan. */
static weft_var_t *second_fn(weft_graph_t *g, size_t n_in, weft_var_t *const *in, void *user)
{
    (void)n_in;
    const int *mode = user; /* bit 0: reverse; bit 1: steps from x's rows */
    weft_var_t *gw = weft_grad(g, rnn(g, in[0], in[1], in[2], *mode & 1, *mode & 2 ? -1 : RNN_T),
                               in[1]);
    return gw ? weft_sum(g, weft_mul(g, gw, gw), 0, NULL, false) : NULL;
}

/* Second order: the gradient of sum(G * G) against finite differences of
 * G (weft_verify_grad perturbs h0, W and x), for the forward RNN and the
 * reverse one, with a static step count and one known at run time (the
 * first gradient then reads a buffer of h0 and the stored states). */
static void test_second_order(void **state)
{
    (void)state;
    weft_tensor_t *p[3];
    rnn_points(p, 91);
    for (int mode = 0; mode < 4; mode++) ck_verify(second_fn, &mode, 3, p);
    for (int k = 0; k < 3; k++) weft_tensor_release(p[k]);
}

/* ---- no steps ----------------------------------------------------------------------------- */

/* h_t = h_{t-1} w + x[t] over k steps (k an input, known at run time only),
 * cost sum(Y) + 3 sum(h0). With k = 0 the loop reaches nothing: gradients
 * of x and w zero, of h0 the 3 reaching it directly; with k = 2, h0 = 0.5,
 * w = 2, x = (1, 2, 3, 4): d/dh0 = w + w^2 + 3 = 9, d/dx = (1 + w, 1, 0, 0),
 * d/dw = h0 + 2 h0 w + x0 = 3.5. Evaluator and compiled (where the
 * adjoints keep their last state only). */
static void test_zero_steps(void **state)
{
    (void)state;
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    weft_var_t *in[4] = {vec_ph(g, 4, "x"), scalar_ph(g, "h0"), scalar_ph(g, "w"),
                         ck_var(g, WEFT_INT64, 0, NULL)};
    weft_var_t *h = scalar_ph(g, "h"), *xt = scalar_ph(g, "x_t"), *wi = scalar_ph(g, "w_in");
    weft_scan_seq_t seq = {in[0], 0, NULL, &xt};
    weft_scan_output_t out = {weft_add(g, weft_mul(g, h, wi), xt), in[1], 0, NULL, &h};
    extras_t ex = {.n_ns = 1, .ns_outer = &in[2], .ns_inner = &wi, .n_steps_var = in[3]};
    weft_var_t *y = scan_one(g, &seq, &out, -1, &ex), *gr[3];
    assert_non_null(y);
    weft_var_t *cost = weft_add(g, weft_sum(g, y, 0, NULL, false), weft_mul(g, num(g, 3.0), in[1]));
    assert_non_null(weft_grads(g, cost, 3, in, NULL, gr));
    int64_t lx = 4;
    weft_tensor_t *vals[4] = {ck_tensor(WEFT_FLOAT64, 1, &lx, (double[]){1, 2, 3, 4}),
                              ck_tensor(WEFT_FLOAT64, 0, NULL, (double[]){0.5}),
                              ck_tensor(WEFT_FLOAT64, 0, NULL, (double[]){2}),
                              ck_tensor(WEFT_INT64, 0, NULL, (double[]){0})};
    const double *want[2][3] = {{(double[]){0, 0, 0, 0}, (double[]){3}, (double[]){0}},
                                {(double[]){3, 1, 0, 0}, (double[]){9}, (double[]){3.5}}};
    const int64_t lens[3] = {4, -1, -1};
    for (int k = 0; k < 2; k++) {
        *(int64_t *)weft_tensor_data(vals[3]) = 2 * k;
        expect_grads(g, 4, in, vals, 3, gr, want[k], lens, 0.0);
        weft_tensor_t *r[3];
        run_compiled(1, 4, in, vals, 3, gr, r);
        for (int i = 0; i < 3; i++) {
            ck_expect(r[i], lens[i] < 0 ? 0 : 1, &lens[i], want[k][i], 0.0);
            weft_tensor_release(r[i]);
        }
    }
    for (int k = 0; k < 4; k++) weft_tensor_release(vals[k]);
    weft_graph_destroy(g);
}

/* 17 float non-sequences: the reverse scan would need an adjoint and 17
 * accumulators, above WEFT_OP_MAX_OUTPUTS outputs (Scan's node limit):
 * refused, named. */
static void test_outputs_limit(void **state)
{
    (void)state;
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    enum { N = WEFT_OP_MAX_OUTPUTS + 1 };
    weft_var_t *outer[N], *inner[N], *h = scalar_ph(g, "h"), *upd = h;
    for (int k = 0; k < N; k++) {
        outer[k] = scalar_ph(g, "p");
        inner[k] = scalar_ph(g, "p_in");
        upd = weft_mul(g, upd, inner[k]);
    }
    weft_scan_output_t out = {upd, num(g, 1.0), 0, NULL, &h};
    extras_t ex = {.n_ns = N, .ns_outer = outer, .ns_inner = inner};
    weft_var_t *y = scan_one(g, NULL, &out, 3, &ex);
    assert_non_null(y);
    assert_null(weft_grad(g, weft_sum(g, y, 0, NULL, false), outer[0]));
    assert_int_equal(weft_graph_error(g), WEFT_ENOGRAD);
    const char *msg = weft_graph_error_message(g);
    assert_non_null(strstr(msg, "Scan: apply "));
    assert_non_null(strstr(msg, "(Scan{0 seqs, 1 outputs (1 carried), 17 non-seqs}, built at "));
    assert_non_null(strstr(msg, "has no gradient: its reverse scan would need more than "
                                "WEFT_OP_MAX_OUTPUTS outputs (weft_grad at "));
    assert_non_null(strstr(msg, "test_scan_grad.c:"));
    weft_graph_destroy(g);
}

/* A node already returning its last state (scan_save_mem's form: here a
 * JSON graph whose props say so, as one saved after compiling) is refused,
 * named: the gradient is taken on the graph before rewrites. */
static void test_last_state_refused(void **state)
{
    (void)state;
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    weft_var_t *x = vec_ph(g, 4, "x"), *xt = scalar_ph(g, "x_t"), *h = scalar_ph(g, "h");
    weft_var_t *h0 = scalar_ph(g, "h0");
    weft_scan_seq_t seq = {x, 0, NULL, &xt};
    weft_scan_output_t out = {weft_mul(g, h, xt), h0, 0, NULL, &h};
    weft_var_t *y = scan_one(g, &seq, &out, -1, NULL), *in[2] = {x, h0};
    weft_graph_io_t io = {2, in, NULL, 1, &y, 0, NULL};
    char *text = NULL;
    assert_int_equal(weft_graph_io_save(&io, &text), WEFT_OK);
    char *mask = strstr(text, "\"last_mask\":0");
    assert_non_null(mask);
    mask[strlen("\"last_mask\":")] = '1';
    weft_graph_t *g2 = NULL;
    assert_int_equal(weft_graph_create(NULL, &g2), WEFT_OK);
    weft_graph_io_t back = {0};
    assert_int_equal(weft_graph_io_load(g2, text, strlen(text), NULL, &back), WEFT_OK);
    assert_true(weft_scan_output_is_last(weft_apply_op(weft_var_owner(back.outputs[0])), 0));
    assert_null(weft_grad(g2, weft_sum(g2, back.outputs[0], 0, NULL, false), back.inputs[1]));
    assert_int_equal(weft_graph_error(g2), WEFT_ENOGRAD);
    assert_non_null(strstr(weft_graph_error_message(g2),
                           "has no gradient: it returns last states only (scan_save_mem ran): "
                           "take the gradient before rewriting"));
    weft_graph_io_clear(&back);
    weft_graph_io_free_text(text);
    weft_graph_destroy(g2);
    weft_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seq_taps),        cmocka_unit_test(test_fibonacci),
        cmocka_unit_test(test_window_verify),   cmocka_unit_test(test_until),
        cmocka_unit_test(test_window_compiled), cmocka_unit_test(test_until_compiled),
        cmocka_unit_test(test_states_not_copied), cmocka_unit_test(test_reverse_taps),
        cmocka_unit_test(test_reverse_rnn),     cmocka_unit_test(test_second_order),
        cmocka_unit_test(test_zero_steps),      cmocka_unit_test(test_outputs_limit),
        cmocka_unit_test(test_last_state_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
