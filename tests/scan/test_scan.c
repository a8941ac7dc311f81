/* Scan against plain C loops: cumulative sum, an RNN forward pass, RK4
 * integration, power iteration with an until condition, nested scans; the
 * same bits at 1, 2 and 4 workers; errors naming the variable and its
 * creation site; scan_save_mem measured on the node's output bytes; the
 * JSON round trip. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "weft/array_ops.h"
#include "weft/elemwise.h"
#include "weft/eval.h"
#include "weft/function.h"
#include "weft/grad.h"
#include "weft/graph.h"
#include "weft/graph_io.h"
#include "weft/linalg.h"
#include "weft/profile.h"
#include "weft/reduce.h"
#include "weft/scan.h"
#include "weft/sched.h"
#include "weft/shape_ops.h"
#include "weft/tensor.h"

static const weft_type_t *ttype(weft_graph_t *g, weft_dtype_t dt, int nd, const int64_t *shape)
{
    const weft_type_t *t = NULL;
    assert_int_equal(weft_type_tensor(g, dt, nd, shape, &t), WEFT_OK);
    return t;
}

static weft_tensor_t *tens(int nd, const int64_t *shape, const double *data)
{
    weft_tensor_t *t = NULL;
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, nd, shape, &t), WEFT_OK);
    memcpy(weft_tensor_data(t), data, weft_tensor_size(t) * sizeof(double));
    return t;
}

static weft_graph_t *new_graph(void)
{
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    return g;
}

static void release_n(size_t n, weft_tensor_t **t)
{
    for (size_t k = 0; k < n; k++) weft_tensor_release(t[k]);
}

static double *dptr(const weft_tensor_t *t)
{
    return weft_tensor_data(t);
}

/* Replaces each t[k] by a C-contiguous copy (views with negative strides
 * are read element by element). */
static void contig(size_t n, weft_tensor_t **t)
{
    for (size_t k = 0; k < n; k++) {
        weft_tensor_t *c = NULL;
        assert_int_equal(weft_tensor_empty(weft_tensor_dtype(t[k]), weft_tensor_ndim(t[k]),
                                           weft_tensor_shape(t[k]), &c),
                         WEFT_OK);
        assert_int_equal(weft_tensor_copy(c, t[k]), WEFT_OK);
        weft_tensor_release(t[k]);
        t[k] = c;
    }
}

/* Compiles (mode fast_run) on a private pool of `threads` workers and calls
 * once; results[k] are new tensors. */
static weft_status_t run_fn(int threads, size_t n_in, weft_var_t *const *in,
                            weft_tensor_t *const *vals, size_t n_out, weft_var_t *const *out,
                            weft_tensor_t **res, const char **exclude, size_t n_exclude)
{
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.threads = threads;
    o.exclude = exclude;
    o.n_exclude = n_exclude;
    weft_function_t *f = NULL;
    weft_status_t s = weft_function_compile(n_in, in, n_out, out, 0, NULL, &o, &f);
    if (s != WEFT_OK) {
        fprintf(stderr, "compile: %s\n", weft_function_last_error(NULL));
        return s;
    }
    for (size_t k = 0; k < n_out; k++) res[k] = NULL;
    s = weft_function_call(f, n_in, vals, n_out, res);
    if (s != WEFT_OK) fprintf(stderr, "call: %s\n", weft_function_last_error(f));
    weft_function_destroy(f);
    return s;
}

/* A spec of at most one sequence (NULL: none) and n_out outputs, and its
 * non-sequences. */
static weft_scan_spec_t spec_of(const weft_scan_seq_t *seq, size_t n_out,
                                const weft_scan_output_t *outs)
{
    weft_scan_spec_t sp = WEFT_SCAN_SPEC_INIT;
    sp.n_seqs = seq ? 1 : 0;
    sp.seqs = seq;
    sp.n_outputs = n_out;
    sp.outputs = outs;
    return sp;
}

static void with_nonseqs(weft_scan_spec_t *sp, size_t n, weft_var_t *const *outer,
                         weft_var_t *const *inner)
{
    sp->n_nonseqs = n;
    sp->nonseq_outer = outer;
    sp->nonseq_inner = inner;
}

/* ---- cumulative sum ------------------------------------------------------------ */

typedef struct cumsum {
    weft_graph_t *g;
    weft_var_t *x, *y;
} cumsum_t;

static void build_cumsum(cumsum_t *c)
{
    assert_int_equal(weft_graph_create(NULL, &c->g), WEFT_OK);
    int64_t unk = WEFT_DIM_UNKNOWN;
    c->x = weft_var_create(c->g, ttype(c->g, WEFT_FLOAT64, 1, &unk), "x");
    weft_var_t *xt = weft_var_create(c->g, ttype(c->g, WEFT_FLOAT64, 0, NULL), "x_t");
    weft_var_t *acc = weft_var_create(c->g, ttype(c->g, WEFT_FLOAT64, 0, NULL), "acc");
    weft_var_t *zero = weft_constant_scalar(c->g, WEFT_FLOAT64, 0.0);
    weft_scan_seq_t seq = {c->x, 0, NULL, &xt};
    weft_scan_output_t out = {weft_add(c->g, acc, xt), zero, 0, NULL, &acc};
    weft_scan_spec_t sp = spec_of(&seq, 1, &out);
    assert_non_null(weft_scan(c->g, &sp, &c->y));
}

static void test_cumsum(void **state)
{
    (void)state;
    cumsum_t c;
    build_cumsum(&c);
    double xs[7] = {1.5, -2.25, 3.0, 0.125, 1e10, -1e10, 7.0}, want[7], acc = 0;
    for (int i = 0; i < 7; i++) want[i] = acc = acc + xs[i];
    int64_t n = 7;
    weft_tensor_t *x = tens(1, &n, xs), *y = NULL;
    for (int threads = 1; threads <= 4; threads *= 2) {
        assert_int_equal(run_fn(threads, 1, &c.x, &x, 1, &c.y, &y, NULL, 0), WEFT_OK);
        assert_int_equal(weft_tensor_ndim(y), 1);
        assert_int_equal(weft_tensor_dim(y, 0), 7);
        assert_memory_equal(dptr(y), want, sizeof want);
        weft_tensor_release(y);
    }
    /* the sequential evaluator too */
    assert_int_equal(weft_eval(c.g, 1, &c.x, &x, 1, &c.y, &y), WEFT_OK);
    assert_memory_equal(dptr(y), want, sizeof want);
    weft_tensor_release(y);
    weft_tensor_release(x);
    weft_graph_destroy(c.g);
}

/* y[-1] alone: scan_save_mem makes the node return the last state (8 bytes
 * instead of n * 8), same value. */
static void test_save_mem(void **state)
{
    (void)state;
    weft_graph_t *g = new_graph();
    int64_t n = 1000;
    weft_var_t *x = weft_var_create(g, ttype(g, WEFT_FLOAT64, 1, &n), "x");
    weft_var_t *xt = weft_var_create(g, ttype(g, WEFT_FLOAT64, 0, NULL), "x_t");
    weft_var_t *acc = weft_var_create(g, ttype(g, WEFT_FLOAT64, 0, NULL), "acc");
    weft_scan_seq_t seq = {x, 0, NULL, &xt};
    weft_scan_output_t out = {weft_add(g, acc, xt), weft_constant_scalar(g, WEFT_FLOAT64, 0), 0,
                              NULL, &acc};
    weft_scan_spec_t sp = spec_of(&seq, 1, &out);
    sp.n_steps = n;
    weft_var_t *y = NULL;
    assert_non_null(weft_scan(g, &sp, &y));
    const weft_slice_t last[1] = {WEFT_SLICE_AT(-1)};
    weft_var_t *yl = weft_subtensor(g, y, 1, last);
    double xs[1000], want = 0;
    for (int i = 0; i < 1000; i++) want += (xs[i] = 0.5 * i - 3);
    weft_tensor_t *xv = tens(1, &n, xs);
    const char *ex[1] = {WEFT_SCAN_SAVE_MEM_REWRITE};
    for (int with = 0; with < 2; with++) {
        weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
        o.threads = 1;
        o.profile = true;
        o.exclude = ex;
        o.n_exclude = with ? 0 : 1;
        weft_function_t *f = NULL;
        assert_int_equal(weft_function_compile(1, &x, 1, &yl, 0, NULL, &o, &f), WEFT_OK);
        weft_tensor_t *r = NULL;
        assert_int_equal(weft_function_call(f, 1, &xv, 1, &r), WEFT_OK);
        assert_memory_equal(dptr(r), &want, sizeof want);
        weft_profile_t *p = NULL;
        assert_int_equal(weft_profile_create(f, WEFT_PROFILE_LAST_CALL, &p), WEFT_OK);
        uint64_t scan_bytes = 0;
        bool found = false;
        for (size_t k = 0; k < p->n_applies; k++)
            if (!strcmp(p->applies[k].op_class, "Scan")) {
                scan_bytes = p->applies[k].out_bytes;
                found = true;
            }
        assert_true(found);
        assert_int_equal(scan_bytes, with ? sizeof(double) : 1000 * sizeof(double));
        weft_profile_destroy(p);
        weft_tensor_release(r);
        weft_function_destroy(f);
    }
    weft_tensor_release(xv);
    weft_graph_destroy(g);
}

/* ---- RNN forward --------------------------------------------------------------- */

enum { RT = 6, RB = 3, RI = 4, RH = 5 };

typedef struct rnn {
    weft_graph_t *g;
    weft_var_t *in[4]; /* x (T,B,I), W (I,H), U (H,H), h0 (B,H) */
    weft_var_t *h;
} rnn_t;

static void build_rnn(rnn_t *r)
{
    assert_int_equal(weft_graph_create(NULL, &r->g), WEFT_OK);
    weft_graph_t *g = r->g;
    int64_t sx[3] = {RT, RB, RI}, sw[2] = {RI, RH}, su[2] = {RH, RH}, sh[2] = {RB, RH};
    r->in[0] = weft_var_create(g, ttype(g, WEFT_FLOAT64, 3, sx), "x");
    r->in[1] = weft_var_create(g, ttype(g, WEFT_FLOAT64, 2, sw), "W");
    r->in[2] = weft_var_create(g, ttype(g, WEFT_FLOAT64, 2, su), "U");
    r->in[3] = weft_var_create(g, ttype(g, WEFT_FLOAT64, 2, sh), "h0");
    weft_var_t *xt = weft_var_create(g, ttype(g, WEFT_FLOAT64, 2, sx + 1), "x_t");
    weft_var_t *hp = weft_var_create(g, ttype(g, WEFT_FLOAT64, 2, sh), "h_prev");
    weft_var_t *wi = weft_var_create(g, ttype(g, WEFT_FLOAT64, 2, sw), "W_in");
    weft_var_t *ui = weft_var_create(g, ttype(g, WEFT_FLOAT64, 2, su), "U_in");
    weft_var_t *hn = weft_tanh(g, weft_add(g, weft_dot(g, xt, wi), weft_dot(g, hp, ui)));
    weft_scan_seq_t seq = {r->in[0], 0, NULL, &xt};
    weft_scan_output_t out = {hn, r->in[3], 0, NULL, &hp};
    weft_var_t *ns_out[2] = {r->in[1], r->in[2]}, *ns_in[2] = {wi, ui};
    weft_scan_spec_t sp = spec_of(&seq, 1, &out);
    with_nonseqs(&sp, 2, ns_out, ns_in);
    sp.name = "rnn";
    assert_non_null(weft_scan(g, &sp, &r->h));
}

static void rnn_ref(const double *x, const double *w, const double *u, const double *h0,
                    double *hs)
{
    const double *hp = h0;
    for (int t = 0; t < RT; t++) {
        double *h = hs + t * RB * RH;
        for (int b = 0; b < RB; b++)
            for (int j = 0; j < RH; j++) {
                double a = 0, c = 0;
                for (int i = 0; i < RI; i++) a += x[(t * RB + b) * RI + i] * w[i * RH + j];
                for (int i = 0; i < RH; i++) c += hp[b * RH + i] * u[i * RH + j];
                h[b * RH + j] = tanh(a + c);
            }
        hp = h;
    }
}

static void fill(double *v, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        v[i] = ((seed >> 8) % 2001) / 1000.0 - 1.0;
    }
}

static void test_rnn_forward(void **state)
{
    (void)state;
    rnn_t r;
    build_rnn(&r);
    double x[RT * RB * RI], w[RI * RH], u[RH * RH], h0[RB * RH], want[RT * RB * RH];
    fill(x, RT * RB * RI, 1);
    fill(w, RI * RH, 2);
    fill(u, RH * RH, 3);
    fill(h0, RB * RH, 4);
    for (size_t i = 0; i < RH * RH; i++) u[i] *= 0.5;
    rnn_ref(x, w, u, h0, want);
    int64_t sx[3] = {RT, RB, RI}, sw[2] = {RI, RH}, su[2] = {RH, RH}, sh[2] = {RB, RH};
    weft_tensor_t *v[4] = {tens(3, sx, x), tens(2, sw, w), tens(2, su, u), tens(2, sh, h0)};
    weft_tensor_t *first = NULL;
    for (int threads = 1; threads <= 4; threads *= 2) {
        weft_tensor_t *h = NULL;
        assert_int_equal(run_fn(threads, 4, r.in, v, 1, &r.h, &h, NULL, 0), WEFT_OK);
        assert_int_equal(weft_tensor_dim(h, 0), RT);
        for (size_t i = 0; i < RT * RB * RH; i++) assert_true(fabs(dptr(h)[i] - want[i]) < 1e-12);
        if (!first) first = h;
        else {
            assert_memory_equal(dptr(h), dptr(first), sizeof want); /* same bits */
            weft_tensor_release(h);
        }
    }
    weft_tensor_release(first);
    release_n(4, v);
    weft_graph_destroy(r.g);
}

/* ---- RK4 ----------------------------------------------------------------------- */

/* y' = A y with A = [[0, 1], [-1, -0.1]] (a damped oscillator), dt = 0.05. */
static void rk4_ref(int steps, double *out)
{
    double y[2] = {1, 0}, dt = 0.05;
#define F(d, s) (d)[0] = (s)[1], (d)[1] = -(s)[0] - 0.1 * (s)[1]
    for (int t = 0; t < steps; t++) {
        double k1[2], k2[2], k3[2], k4[2], tmp[2];
        F(k1, y);
        for (int i = 0; i < 2; i++) tmp[i] = y[i] + dt / 2 * k1[i];
        F(k2, tmp);
        for (int i = 0; i < 2; i++) tmp[i] = y[i] + dt / 2 * k2[i];
        F(k3, tmp);
        for (int i = 0; i < 2; i++) tmp[i] = y[i] + dt * k3[i];
        F(k4, tmp);
        for (int i = 0; i < 2; i++) y[i] += dt / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
        memcpy(out + 2 * t, y, sizeof y);
    }
#undef F
}

static weft_var_t *rk_f(weft_graph_t *g, weft_var_t *y, weft_var_t *at)
{
    return weft_dot(g, y, at); /* row vector times A^T */
}

static void test_rk4(void **state)
{
    (void)state;
    weft_graph_t *g = new_graph();
    int64_t two = 2, s22[2] = {2, 2};
    weft_var_t *y0 = weft_var_create(g, ttype(g, WEFT_FLOAT64, 1, &two), "y0");
    weft_var_t *at = weft_var_create(g, ttype(g, WEFT_FLOAT64, 2, s22), "At");
    weft_var_t *y = weft_var_create(g, ttype(g, WEFT_FLOAT64, 1, &two), "y");
    weft_var_t *ati = weft_var_create(g, ttype(g, WEFT_FLOAT64, 2, s22), "At_in");
    weft_var_t *h2 = weft_constant_scalar(g, WEFT_FLOAT64, 0.025);
    weft_var_t *h1 = weft_constant_scalar(g, WEFT_FLOAT64, 0.05);
    weft_var_t *h6 = weft_constant_scalar(g, WEFT_FLOAT64, 0.05 / 6);
    weft_var_t *c2 = weft_constant_scalar(g, WEFT_FLOAT64, 2.0);
    weft_var_t *k1 = rk_f(g, y, ati);
    weft_var_t *k2 = rk_f(g, weft_add(g, y, weft_mul(g, h2, k1)), ati);
    weft_var_t *k3 = rk_f(g, weft_add(g, y, weft_mul(g, h2, k2)), ati);
    weft_var_t *k4 = rk_f(g, weft_add(g, y, weft_mul(g, h1, k3)), ati);
    weft_var_t *sum = weft_add(g, weft_add(g, k1, weft_mul(g, c2, k2)),
                               weft_add(g, weft_mul(g, c2, k3), k4));
    weft_var_t *yn = weft_add(g, y, weft_mul(g, h6, sum));
    weft_scan_output_t out = {yn, y0, 0, NULL, &y};
    weft_scan_spec_t sp = spec_of(NULL, 1, &out);
    with_nonseqs(&sp, 1, &at, &ati);
    sp.n_steps = 200;
    weft_var_t *ys = NULL;
    assert_non_null(weft_scan(g, &sp, &ys));
    double want[400], y0v[2] = {1, 0}, atv[4] = {0, -1, 1, -0.1};
    rk4_ref(200, want);
    weft_tensor_t *v[2] = {tens(1, &two, y0v), tens(2, s22, atv)}, *r = NULL;
    weft_var_t *ins[2] = {y0, at};
    assert_int_equal(run_fn(2, 2, ins, v, 1, &ys, &r, NULL, 0), WEFT_OK);
    assert_int_equal(weft_tensor_dim(r, 0), 200);
    for (int i = 0; i < 400; i++) assert_true(fabs(dptr(r)[i] - want[i]) < 1e-13);
    weft_tensor_release(r);
    release_n(2, v);
    weft_graph_destroy(g);
}

/* ---- power iteration with until --------------------------------------------------- */

static void test_power_iteration(void **state)
{
    (void)state;
    weft_graph_t *g = new_graph();
    int64_t three = 3, s33[2] = {3, 3};
    weft_var_t *a = weft_var_create(g, ttype(g, WEFT_FLOAT64, 2, s33), "A");
    weft_var_t *v0 = weft_var_create(g, ttype(g, WEFT_FLOAT64, 1, &three), "v0");
    weft_var_t *ai = weft_var_create(g, ttype(g, WEFT_FLOAT64, 2, s33), "A_in");
    weft_var_t *v = weft_var_create(g, ttype(g, WEFT_FLOAT64, 1, &three), "v");
    weft_var_t *w = weft_dot(g, ai, v);
    weft_var_t *nw = weft_sqrt(g, weft_sum(g, weft_mul(g, w, w), 0, NULL, false));
    weft_var_t *vn = weft_div(g, w, nw);
    weft_var_t *d = weft_sub(g, vn, v);
    weft_var_t *diff = weft_sum(g, weft_mul(g, d, d), 0, NULL, false);
    weft_var_t *until = weft_lt(g, diff, weft_constant_scalar(g, WEFT_FLOAT64, 1e-20));
    weft_scan_output_t out = {vn, v0, 0, NULL, &v};
    weft_scan_spec_t sp = spec_of(NULL, 1, &out);
    with_nonseqs(&sp, 1, &a, &ai);
    sp.n_steps = 1000;
    sp.until = until;
    weft_var_t *vs = NULL;
    assert_non_null(weft_scan(g, &sp, &vs));
    double av[9] = {2, 1, 0, 1, 3, 1, 0, 1, 4}, v0v[3] = {1, 1, 1};
    /* the C loop, same operations */
    double cur[3] = {1, 1, 1}, last[3];
    int steps = 0;
    for (; steps < 1000;) {
        double ww[3] = {0, 0, 0}, n2 = 0, dd = 0;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) ww[i] += av[i * 3 + j] * cur[j];
        for (int i = 0; i < 3; i++) n2 += ww[i] * ww[i];
        for (int i = 0; i < 3; i++) {
            last[i] = ww[i] / sqrt(n2);
            dd += (last[i] - cur[i]) * (last[i] - cur[i]);
        }
        memcpy(cur, last, sizeof cur);
        steps++;
        if (dd < 1e-20) break;
    }
    assert_true(steps > 5 && steps < 1000);
    weft_tensor_t *vals[2] = {tens(2, s33, av), tens(1, &three, v0v)}, *r = NULL;
    weft_var_t *ins[2] = {a, v0};
    assert_int_equal(run_fn(1, 2, ins, vals, 1, &vs, &r, NULL, 0), WEFT_OK);
    assert_int_equal(weft_tensor_dim(r, 0), steps);
    for (int i = 0; i < 3; i++) assert_true(fabs(dptr(r)[(steps - 1) * 3 + i] - cur[i]) < 1e-12);
    weft_tensor_release(r);
    release_n(2, vals);
    weft_graph_destroy(g);
}

/* ---- nested scans ----------------------------------------------------------------- */

/* Outer scan over the rows of M; its inner graph scans the row (cumsum), so
 * the result is the cumulative sum along axis 1. */
static void test_nested(void **state)
{
    (void)state;
    weft_graph_t *g = new_graph();
    int64_t sm[2] = {4, 5};
    weft_var_t *m = weft_var_create(g, ttype(g, WEFT_FLOAT64, 2, sm), "M");
    weft_var_t *row = weft_var_create(g, ttype(g, WEFT_FLOAT64, 1, sm + 1), "row");
    weft_var_t *xt = weft_var_create(g, ttype(g, WEFT_FLOAT64, 0, NULL), "x_t");
    weft_var_t *acc = weft_var_create(g, ttype(g, WEFT_FLOAT64, 0, NULL), "acc");
    weft_scan_seq_t iseq = {row, 0, NULL, &xt};
    weft_scan_output_t iout = {weft_add(g, acc, xt), weft_constant_scalar(g, WEFT_FLOAT64, 0), 0,
                               NULL, &acc};
    weft_scan_spec_t isp = spec_of(&iseq, 1, &iout);
    weft_var_t *rowsum = NULL;
    assert_non_null(weft_scan(g, &isp, &rowsum));
    weft_scan_seq_t oseq = {m, 0, NULL, &row};
    weft_scan_output_t oout = {rowsum, NULL, 0, NULL, NULL};
    weft_scan_spec_t osp = spec_of(&oseq, 1, &oout);
    weft_var_t *res = NULL;
    assert_non_null(weft_scan(g, &osp, &res));
    double mv[20], want[20];
    fill(mv, 20, 9);
    for (int i = 0; i < 4; i++) {
        double s = 0;
        for (int j = 0; j < 5; j++) want[i * 5 + j] = s = s + mv[i * 5 + j];
    }
    weft_tensor_t *mt = tens(2, sm, mv);
    for (int threads = 1; threads <= 4; threads *= 2) {
        weft_tensor_t *r = NULL;
        assert_int_equal(run_fn(threads, 1, &m, &mt, 1, &res, &r, NULL, 0), WEFT_OK);
        assert_int_equal(weft_tensor_dim(r, 0), 4);
        assert_int_equal(weft_tensor_dim(r, 1), 5);
        assert_memory_equal(dptr(r), want, sizeof want);
        weft_tensor_release(r);
    }
    weft_tensor_release(mt);
    weft_graph_destroy(g);
}

/* ---- taps ----------------------------------------------------------------------- */

/* Fibonacci with taps {-2, -1} and a sequence read at taps {0, 1}:
 * f[t] = f[t-2] + f[t-1] + x[t] * x[t+1]. */
static void test_taps(void **state)
{
    (void)state;
    weft_graph_t *g = new_graph();
    int64_t unk = WEFT_DIM_UNKNOWN, two = 2;
    const weft_type_t *sc = ttype(g, WEFT_FLOAT64, 0, NULL);
    weft_var_t *x = weft_var_create(g, ttype(g, WEFT_FLOAT64, 1, &unk), "x");
    weft_var_t *init = weft_var_create(g, ttype(g, WEFT_FLOAT64, 1, &two), "f01");
    weft_var_t *x0 = weft_var_create(g, sc, "x0"), *x1 = weft_var_create(g, sc, "x1");
    weft_var_t *fm2 = weft_var_create(g, sc, "fm2"), *fm1 = weft_var_create(g, sc, "fm1");
    weft_var_t *xin[2] = {x0, x1}, *fin[2] = {fm2, fm1};
    int64_t stap[2] = {0, 1}, otap[2] = {-2, -1};
    weft_scan_seq_t seq = {x, 2, stap, xin};
    weft_scan_output_t out = {weft_add(g, weft_add(g, fm2, fm1), weft_mul(g, x0, x1)), init, 2,
                              otap, fin};
    weft_scan_spec_t sp = spec_of(&seq, 1, &out);
    weft_var_t *f = NULL;
    assert_non_null(weft_scan(g, &sp, &f));
    double xv[6] = {1, 2, 3, 4, 5, 6}, iv[2] = {0, 1}, want[5], a = 0, b = 1;
    for (int t = 0; t < 5; t++) {
        want[t] = a + b + xv[t] * xv[t + 1];
        a = b;
        b = want[t];
    }
    int64_t six = 6;
    weft_tensor_t *vals[2] = {tens(1, &six, xv), tens(1, &two, iv)}, *r = NULL;
    weft_var_t *ins[2] = {x, init};
    assert_int_equal(run_fn(2, 2, ins, vals, 1, &f, &r, NULL, 0), WEFT_OK);
    assert_int_equal(weft_tensor_dim(r, 0), 5); /* 6 rows, taps 0..1 */
    assert_memory_equal(dptr(r), want, sizeof want);
    weft_tensor_release(r);
    release_n(2, vals);
    weft_graph_destroy(g);
}

/* ---- errors ---------------------------------------------------------------------- */

static void test_errors(void **state)
{
    (void)state;
    weft_graph_t *g = new_graph();
    int64_t unk = WEFT_DIM_UNKNOWN, three = 3;
    const weft_type_t *vec = ttype(g, WEFT_FLOAT64, 1, &unk);
    weft_var_t *h0 = weft_var_create(g, vec, "h0");
    weft_var_t *h = weft_var_create(g, vec, "h");
    /* the update has twice the state's length */
    weft_var_t *hh[2] = {h, h};
    weft_var_t *upd = weft_concatenate(g, 2, hh, 0);
    weft_scan_output_t out = {upd, h0, 0, NULL, &h};
    weft_scan_spec_t sp = spec_of(NULL, 1, &out);
    sp.n_steps = 3;
    weft_var_t *y = NULL;
    assert_non_null(weft_scan(g, &sp, &y));
    int64_t one = 1;
    weft_tensor_t *v = tens(1, &one, (double[1]){1}), *r = NULL;
    weft_function_t *f = NULL;
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.threads = 1;
    assert_int_equal(weft_function_compile(1, &h0, 1, &y, 0, NULL, &o, &f), WEFT_OK);
    assert_int_equal(weft_function_call(f, 1, &v, 1, &r), WEFT_ESHAPE);
    const char *msg = weft_function_last_error(f);
    assert_non_null(strstr(msg, "output 0: the update ("));
    assert_non_null(strstr(msg, "test_scan.c:"));
    assert_non_null(strstr(msg, "is float64[2] at step 0, but the carried state (initial value h0"));
    assert_non_null(strstr(msg, "has shape (1)"));
    weft_function_destroy(f);
    weft_tensor_release(v);

    /* a placeholder with an owner */
    weft_scan_output_t bad = {upd, h0, 0, NULL, &upd};
    sp.outputs = &bad;
    assert_null(weft_scan(g, &sp, &y));
    assert_int_equal(weft_graph_error(g), WEFT_EINVAL);
    assert_non_null(strstr(weft_graph_error_message(g), "is not a root variable"));
    weft_graph_clear_error(g);

    /* a sequence whose rows do not fit the placeholder's dtype */
    weft_var_t *xi = weft_var_create(g, ttype(g, WEFT_INT64, 1, &unk), "xi");
    weft_var_t *xt = weft_var_create(g, ttype(g, WEFT_FLOAT64, 0, NULL), "xt");
    weft_scan_seq_t seq = {xi, 0, NULL, &xt};
    weft_scan_output_t pure = {weft_mul(g, xt, xt), NULL, 0, NULL, NULL};
    weft_scan_spec_t sp2 = spec_of(&seq, 1, &pure);
    assert_null(weft_scan(g, &sp2, &y));
    assert_int_equal(weft_graph_error(g), WEFT_ETYPE);
    assert_non_null(strstr(weft_graph_error_message(g), "sequence 0 (xi, created at"));
    assert_non_null(strstr(weft_graph_error_message(g), "does not fit its placeholder (xt"));
    weft_graph_clear_error(g);

    /* an until that is not bool */
    sp2.seqs = &seq;
    weft_var_t *xf = weft_var_create(g, vec, "xf");
    weft_scan_seq_t seqf = {xf, 0, NULL, &xt};
    sp2.seqs = &seqf;
    sp2.until = xt;
    assert_null(weft_scan(g, &sp2, &y));
    assert_int_equal(weft_graph_error(g), WEFT_ETYPE);
    assert_non_null(strstr(weft_graph_error_message(g), "the until condition (xt"));
    weft_graph_clear_error(g);

    /* n_steps beyond a sequence */
    sp2.until = NULL;
    sp2.n_steps = 10;
    assert_non_null(weft_scan(g, &sp2, &y));
    weft_tensor_t *xv = tens(1, &three, (double[3]){1, 2, 3});
    assert_int_equal(weft_eval(g, 1, &xf, &xv, 1, &y, &r), WEFT_ESHAPE);
    weft_tensor_release(xv);
    weft_graph_destroy(g);
}

/* ---- JSON ------------------------------------------------------------------------- */

static void test_json(void **state)
{
    (void)state;
    rnn_t r;
    build_rnn(&r);
    weft_graph_io_t io = {4, r.in, NULL, 1, &r.h, 0, NULL};
    char *text = NULL;
    assert_int_equal(weft_graph_io_save(&io, &text), WEFT_OK);
    assert_non_null(strstr(text, "\"Scan\""));
    /* tests/scan/data/scan_rnn.json (schema-checked with the shipped graphs)
     * was written this way */
    const char *dump = getenv("WEFT_SCAN_JSON_OUT");
    if (dump) assert_int_equal(weft_graph_io_save_file(&io, dump), WEFT_OK);
    weft_graph_t *g2 = NULL;
    assert_int_equal(weft_graph_create(NULL, &g2), WEFT_OK);
    weft_graph_io_t back = {0};
    assert_int_equal(weft_graph_io_load(g2, text, strlen(text), NULL, &back), WEFT_OK);
    assert_int_equal(back.n_inputs, 4);
    /* the reloaded op is the same interned Scan */
    assert_true(weft_op_equal(weft_apply_op(weft_var_owner(back.outputs[0])),
                              weft_apply_op(weft_var_owner(r.h))));
    double x[RT * RB * RI], w[RI * RH], u[RH * RH], h0[RB * RH];
    fill(x, RT * RB * RI, 5);
    fill(w, RI * RH, 6);
    fill(u, RH * RH, 7);
    fill(h0, RB * RH, 8);
    int64_t sx[3] = {RT, RB, RI}, sw[2] = {RI, RH}, su[2] = {RH, RH}, sh[2] = {RB, RH};
    weft_tensor_t *v[4] = {tens(3, sx, x), tens(2, sw, w), tens(2, su, u), tens(2, sh, h0)};
    weft_tensor_t *a = NULL, *b = NULL;
    assert_int_equal(run_fn(1, 4, r.in, v, 1, &r.h, &a, NULL, 0), WEFT_OK);
    assert_int_equal(run_fn(1, 4, back.inputs, v, 1, back.outputs, &b, NULL, 0), WEFT_OK);
    assert_memory_equal(dptr(a), dptr(b), RT * RB * RH * sizeof(double));
    weft_tensor_release(a);
    weft_tensor_release(b);
    release_n(4, v);
    weft_graph_io_clear(&back);
    weft_graph_io_free_text(text);
    weft_graph_destroy(g2);
    weft_graph_destroy(r.g);
}


/* ---- gradients ------------------------------------------------------------------ */

/* cumsum of x from init: the scan's gradient against finite differences. */
static weft_var_t *cumsum_fn(weft_graph_t *g, size_t n_in, weft_var_t *const *in, void *user)
{
    (void)n_in;
    (void)user;
    const weft_type_t *sc = NULL;
    weft_type_tensor(g, WEFT_FLOAT64, 0, NULL, &sc);
    weft_var_t *xt = weft_var_create(g, sc, "x_t"), *acc = weft_var_create(g, sc, "acc");
    weft_scan_seq_t seq = {in[0], 0, NULL, &xt};
    weft_scan_output_t out = {weft_add(g, weft_mul(g, acc, acc), xt), in[1], 0, NULL, &acc};
    weft_scan_spec_t sp = spec_of(&seq, 1, &out);
    weft_var_t *y = NULL;
    return weft_scan(g, &sp, &y);
}

static void test_grad_cumsum(void **state)
{
    (void)state;
    int64_t n = 6;
    weft_tensor_t *pts[2] = {NULL, NULL};
    assert_int_equal(weft_verify_grad_random(WEFT_FLOAT64, 1, &n, -0.5, 0.5, 11, &pts[0]), WEFT_OK);
    assert_int_equal(weft_verify_grad_random(WEFT_FLOAT64, 0, NULL, -0.5, 0.5, 12, &pts[1]), WEFT_OK);
    weft_verify_grad_result_t res;
    weft_status_t s = weft_verify_grad(cumsum_fn, NULL, 2, pts, NULL, &res);
    if (s != WEFT_OK) fprintf(stderr, "verify_grad: %s\n", res.message);
    assert_int_equal(s, WEFT_OK);
    assert_true(res.max_abs_err < 1e-7);
    release_n(2, pts);
}

/* The RNN with a second, pure output y_t = sum over h_prev * x_t's first
 * columns: gradients with respect to x, W, U and h0. */
static weft_var_t *rnn_fn(weft_graph_t *g, size_t n_in, weft_var_t *const *in, void *user)
{
    (void)n_in;
    (void)user;
    int64_t sx[2] = {RB, RI}, sw[2] = {RI, RH}, su[2] = {RH, RH}, sh[2] = {RB, RH};
    const weft_type_t *tx = NULL, *tw = NULL, *tu = NULL, *th = NULL;
    weft_type_tensor(g, WEFT_FLOAT64, 2, sx, &tx);
    weft_type_tensor(g, WEFT_FLOAT64, 2, sw, &tw);
    weft_type_tensor(g, WEFT_FLOAT64, 2, su, &tu);
    weft_type_tensor(g, WEFT_FLOAT64, 2, sh, &th);
    weft_var_t *xt = weft_var_create(g, tx, "x_t"), *hp = weft_var_create(g, th, "h_prev");
    weft_var_t *wi = weft_var_create(g, tw, "W_in"), *ui = weft_var_create(g, tu, "U_in");
    weft_var_t *hn = weft_tanh(g, weft_add(g, weft_dot(g, xt, wi), weft_dot(g, hp, ui)));
    weft_var_t *yt = weft_sum(g, weft_mul(g, hp, hp), 0, NULL, false);
    weft_scan_seq_t seq = {in[0], 0, NULL, &xt};
    weft_scan_output_t outs[2] = {{hn, in[3], 0, NULL, &hp}, {yt, NULL, 0, NULL, NULL}};
    weft_var_t *ns_out[2] = {in[1], in[2]}, *ns_in[2] = {wi, ui};
    weft_scan_spec_t sp = spec_of(&seq, 2, outs);
    with_nonseqs(&sp, 2, ns_out, ns_in);
    weft_var_t *r[2] = {NULL, NULL};
    if (!weft_scan(g, &sp, r)) return NULL;
    /* both outputs reach the cost */
    weft_var_t *ysum = weft_sum(g, r[1], 0, NULL, false);
    return weft_add(g, weft_mul(g, r[0], r[0]), ysum);
}

static void test_grad_rnn(void **state)
{
    (void)state;
    int64_t sx[3] = {RT, RB, RI}, sw[2] = {RI, RH}, su[2] = {RH, RH}, sh[2] = {RB, RH};
    weft_tensor_t *pts[4] = {NULL, NULL, NULL, NULL};
    assert_int_equal(weft_verify_grad_random(WEFT_FLOAT64, 3, sx, -1, 1, 21, &pts[0]), WEFT_OK);
    assert_int_equal(weft_verify_grad_random(WEFT_FLOAT64, 2, sw, -0.5, 0.5, 22, &pts[1]), WEFT_OK);
    assert_int_equal(weft_verify_grad_random(WEFT_FLOAT64, 2, su, -0.5, 0.5, 23, &pts[2]), WEFT_OK);
    assert_int_equal(weft_verify_grad_random(WEFT_FLOAT64, 2, sh, -0.5, 0.5, 24, &pts[3]), WEFT_OK);
    weft_verify_grad_result_t res;
    weft_status_t s = weft_verify_grad(rnn_fn, NULL, 4, pts, NULL, &res);
    if (s != WEFT_OK) fprintf(stderr, "verify_grad: %s\n", res.message);
    assert_int_equal(s, WEFT_OK);
    assert_true(res.max_abs_err < 1e-6);
    release_n(4, pts);
}

/* The gradient compiled (fast_run) gives the same bits at 1, 2 and 4
 * workers. */
static void test_grad_compiled(void **state)
{
    (void)state;
    weft_graph_t *g = new_graph();
    int64_t sx[3] = {RT, RB, RI}, sw[2] = {RI, RH}, su[2] = {RH, RH}, sh[2] = {RB, RH};
    weft_var_t *in[4] = {weft_var_create(g, ttype(g, WEFT_FLOAT64, 3, sx), "x"),
                         weft_var_create(g, ttype(g, WEFT_FLOAT64, 2, sw), "W"),
                         weft_var_create(g, ttype(g, WEFT_FLOAT64, 2, su), "U"),
                         weft_var_create(g, ttype(g, WEFT_FLOAT64, 2, sh), "h0")};
    weft_var_t *y = rnn_fn(g, 4, in, NULL);
    weft_var_t *cost = weft_sum(g, y, 0, NULL, false), *gr[4];
    assert_non_null(weft_grads(g, cost, 4, in, NULL, gr));
    weft_tensor_t *v[4] = {NULL, NULL, NULL, NULL};
    weft_verify_grad_random(WEFT_FLOAT64, 3, sx, -1, 1, 31, &v[0]);
    weft_verify_grad_random(WEFT_FLOAT64, 2, sw, -0.5, 0.5, 32, &v[1]);
    weft_verify_grad_random(WEFT_FLOAT64, 2, su, -0.5, 0.5, 33, &v[2]);
    weft_verify_grad_random(WEFT_FLOAT64, 2, sh, -0.5, 0.5, 34, &v[3]);
    weft_tensor_t *ref[4], *r[4];
    assert_int_equal(run_fn(1, 4, in, v, 4, gr, ref, NULL, 0), WEFT_OK);
    weft_tensor_t *ev[4];
    assert_int_equal(weft_eval(g, 4, in, v, 4, gr, ev), WEFT_OK);
    contig(4, ref); /* the gradient of x is a flipped view */
    contig(4, ev);
    for (int k = 0; k < 4; k++) {
        for (size_t i = 0; i < weft_tensor_size(ref[k]); i++)
            assert_true(fabs(dptr(ref[k])[i] - dptr(ev[k])[i]) < 1e-12);
        weft_tensor_release(ev[k]);
    }
    for (int threads = 2; threads <= 4; threads *= 2) {
        assert_int_equal(run_fn(threads, 4, in, v, 4, gr, r, NULL, 0), WEFT_OK);
        contig(4, r);
        for (int k = 0; k < 4; k++) {
            assert_memory_equal(dptr(r[k]), dptr(ref[k]), weft_tensor_size(r[k]) * sizeof(double));
            weft_tensor_release(r[k]);
        }
    }
    for (int k = 0; k < 4; k++) {
        weft_tensor_release(ref[k]);
        weft_tensor_release(v[k]);
    }
    weft_graph_destroy(g);
}

/* A scan of one static step is replaced by its inner graph (no Scan node
 * left), with the same values; excluding the rewrite keeps the node. */
static size_t count_class(weft_function_t *f, const char *cls)
{
    weft_profile_t *p = NULL;
    assert_int_equal(weft_profile_create(f, WEFT_PROFILE_LAST_CALL, &p), WEFT_OK);
    size_t n = 0;
    for (size_t k = 0; k < p->n_applies; k++) n += !strcmp(p->applies[k].op_class, cls);
    weft_profile_destroy(p);
    return n;
}

static void test_inline_one_step(void **state)
{
    (void)state;
    weft_graph_t *g = new_graph();
    int64_t s2[2] = {3, 2}, two = 2;
    weft_var_t *x = weft_var_create(g, ttype(g, WEFT_FLOAT64, 2, s2), "x");
    weft_var_t *h0 = weft_var_create(g, ttype(g, WEFT_FLOAT64, 1, &two), "h0");
    weft_var_t *xt = weft_var_create(g, ttype(g, WEFT_FLOAT64, 1, &two), "x_t");
    weft_var_t *h = weft_var_create(g, ttype(g, WEFT_FLOAT64, 1, &two), "h");
    weft_scan_seq_t seq = {x, 0, NULL, &xt};
    weft_scan_output_t out = {weft_mul(g, weft_add(g, h, xt), xt), h0, 0, NULL, &h};
    weft_scan_spec_t sp = spec_of(&seq, 1, &out);
    sp.n_steps = 1;
    weft_var_t *y = NULL, *ins[2] = {x, h0};
    assert_non_null(weft_scan(g, &sp, &y));
    double xv[6] = {1, 2, 3, 4, 5, 6}, hv[2] = {0.5, -1}, want[2] = {1.5 * 1, 1 * 2};
    weft_tensor_t *v[2] = {tens(2, s2, xv), tens(1, &two, hv)};
    const char *ex[1] = {WEFT_SCAN_INLINE_REWRITE};
    for (int with = 0; with < 2; with++) {
        weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
        o.threads = 1;
        o.profile = true;
        o.exclude = ex;
        o.n_exclude = with ? 0 : 1;
        weft_function_t *f = NULL;
        assert_int_equal(weft_function_compile(2, ins, 1, &y, 0, NULL, &o, &f), WEFT_OK);
        weft_tensor_t *r = NULL;
        assert_int_equal(weft_function_call(f, 2, v, 1, &r), WEFT_OK);
        contig(1, &r);
        assert_int_equal(weft_tensor_ndim(r), 2);
        assert_int_equal(weft_tensor_dim(r, 0), 1);
        assert_memory_equal(dptr(r), want, sizeof want);
        assert_int_equal(count_class(f, "Scan"), with ? 0 : 1);
        weft_tensor_release(r);
        weft_function_destroy(f);
    }
    release_n(2, v);
    weft_graph_destroy(g);
}

/* h_t = tanh(h_{t-1} * x_t + exp(c) * 2): exp(c) * 2 is computed once
 * outside the loop by scan_push_out_non_seq (an Exp node appears in the
 * outer function), with the same values as the loop in C. */
static void test_push_out(void **state)
{
    (void)state;
    weft_graph_t *g = new_graph();
    int64_t n = 5;
    const weft_type_t *sc = ttype(g, WEFT_FLOAT64, 0, NULL);
    weft_var_t *x = weft_var_create(g, ttype(g, WEFT_FLOAT64, 1, &n), "x");
    weft_var_t *c = weft_var_create(g, sc, "c"), *h0 = weft_var_create(g, sc, "h0");
    weft_var_t *xt = weft_var_create(g, sc, "x_t"), *h = weft_var_create(g, sc, "h");
    weft_var_t *ci = weft_var_create(g, sc, "c_in");
    weft_var_t *inv = weft_mul(g, weft_exp(g, ci), weft_constant_scalar(g, WEFT_FLOAT64, 2.0));
    weft_var_t *upd = weft_tanh(g, weft_add(g, weft_mul(g, h, xt), inv));
    weft_scan_seq_t seq = {x, 0, NULL, &xt};
    weft_scan_output_t out = {upd, h0, 0, NULL, &h};
    weft_scan_spec_t sp = spec_of(&seq, 1, &out);
    with_nonseqs(&sp, 1, &c, &ci);
    weft_var_t *y = NULL, *ins[3] = {x, c, h0};
    assert_non_null(weft_scan(g, &sp, &y));
    double xv[5] = {0.5, -1, 2, 0.25, -0.75}, cv = -1.5, hv = 0.3, want[5], hh = hv;
    for (int t = 0; t < 5; t++) want[t] = hh = tanh(hh * xv[t] + exp(cv) * 2.0);
    weft_tensor_t *v[3] = {tens(1, &n, xv), tens(0, NULL, &cv), tens(0, NULL, &hv)};
    const char *ex[2] = {WEFT_SCAN_SPLIT_MAP_REWRITE, WEFT_SCAN_PUSH_OUT_REWRITE};
    for (int with = 0; with < 2; with++) {
        weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
        o.threads = 2;
        o.profile = true;
        o.exclude = ex;
        o.n_exclude = with ? 1 : 2; /* the split is tested on its own */
        weft_function_t *f = NULL;
        assert_int_equal(weft_function_compile(3, ins, 1, &y, 0, NULL, &o, &f), WEFT_OK);
        weft_tensor_t *r = NULL;
        assert_int_equal(weft_function_call(f, 3, v, 1, &r), WEFT_OK);
        for (int t = 0; t < 5; t++) assert_true(fabs(dptr(r)[t] - want[t]) < 1e-15);
        assert_int_equal(count_class(f, "Scan"), 1);
        assert_true((count_class(f, "Exp") + count_class(f, "Composite") > 0) == (with == 1));
        weft_tensor_release(r);
        weft_function_destroy(f);
    }
    release_n(3, v);
    weft_graph_destroy(g);
}

/* The RNN's x_t @ W depends on no carried state: scan_split_map (on
 * request: it is in no mode) moves it to a map scan (two Scan nodes), whose
 * steps run in parallel; the values are the same bits as without the split
 * (where the node pipelines x_t @ W itself), at 1, 2 and 4 workers. */
static void test_split_map(void **state)
{
    (void)state;
    rnn_t r;
    build_rnn(&r);
    double x[RT * RB * RI], w[RI * RH], u[RH * RH], h0[RB * RH];
    fill(x, RT * RB * RI, 41);
    fill(w, RI * RH, 42);
    fill(u, RH * RH, 43);
    fill(h0, RB * RH, 44);
    int64_t sx[3] = {RT, RB, RI}, sw[2] = {RI, RH}, su[2] = {RH, RH}, sh[2] = {RB, RH};
    weft_tensor_t *v[4] = {tens(3, sx, x), tens(2, sw, w), tens(2, su, u), tens(2, sh, h0)};
    const char *ex[1] = {WEFT_SCAN_SPLIT_MAP_REWRITE};
    weft_tensor_t *ref = NULL;
    assert_int_equal(run_fn(1, 4, r.in, v, 1, &r.h, &ref, ex, 1), WEFT_OK);
    for (int threads = 1; threads <= 4; threads *= 2) {
        weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
        o.threads = threads;
        o.profile = true;
        o.include = ex;
        o.n_include = 1;
        weft_function_t *f = NULL;
        assert_int_equal(weft_function_compile(4, r.in, 1, &r.h, 0, NULL, &o, &f), WEFT_OK);
        weft_tensor_t *h = NULL;
        assert_int_equal(weft_function_call(f, 4, v, 1, &h), WEFT_OK);
        assert_int_equal(count_class(f, "Scan"), 2);
        assert_memory_equal(dptr(h), dptr(ref), RT * RB * RH * sizeof(double));
        weft_tensor_release(h);
        weft_function_destroy(f);
    }
    weft_tensor_release(ref);
    release_n(4, v);
    weft_graph_destroy(r.g);
}

/* A cumulative sum and a running product over the same x and step count
 * become one loop (scan_merge: one Scan node), with the same values. */
static weft_var_t *running(weft_graph_t *g, weft_var_t *x, bool product)
{
    const weft_type_t *sc = ttype(g, WEFT_FLOAT64, 0, NULL);
    weft_var_t *xt = weft_var_create(g, sc, "x_t"), *acc = weft_var_create(g, sc, "acc");
    weft_var_t *upd = product ? weft_mul(g, acc, xt) : weft_add(g, acc, xt);
    weft_scan_seq_t seq = {x, 0, NULL, &xt};
    weft_scan_output_t out = {upd, weft_constant_scalar(g, WEFT_FLOAT64, product ? 1 : 0), 0,
                              NULL, &acc};
    weft_scan_spec_t sp = spec_of(&seq, 1, &out);
    weft_var_t *y = NULL;
    assert_non_null(weft_scan(g, &sp, &y));
    return y;
}

static void test_merge(void **state)
{
    (void)state;
    weft_graph_t *g = new_graph();
    int64_t n = 6;
    weft_var_t *x = weft_var_create(g, ttype(g, WEFT_FLOAT64, 1, &n), "x");
    weft_var_t *ys[2] = {running(g, x, false), running(g, x, true)};
    double xv[6] = {1.5, -2, 0.5, 3, -1.25, 2}, sum[6], prod[6], a = 0, b = 1;
    for (int t = 0; t < 6; t++) {
        sum[t] = a = a + xv[t];
        prod[t] = b = b * xv[t];
    }
    weft_tensor_t *v = tens(1, &n, xv);
    const char *ex[1] = {WEFT_SCAN_MERGE_REWRITE};
    for (int with = 0; with < 2; with++) {
        weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
        o.threads = 2;
        o.profile = true;
        o.exclude = ex;
        o.n_exclude = with ? 0 : 1;
        weft_function_t *f = NULL;
        assert_int_equal(weft_function_compile(1, &x, 2, ys, 0, NULL, &o, &f), WEFT_OK);
        weft_tensor_t *r[2] = {NULL, NULL};
        assert_int_equal(weft_function_call(f, 1, &v, 2, r), WEFT_OK);
        contig(2, r);
        assert_memory_equal(dptr(r[0]), sum, sizeof sum);
        assert_memory_equal(dptr(r[1]), prod, sizeof prod);
        assert_int_equal(count_class(f, "Scan"), with ? 1 : 2);
        release_n(2, r);
        weft_function_destroy(f);
    }
    weft_tensor_release(v);
    weft_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cumsum),        cmocka_unit_test(test_save_mem),
        cmocka_unit_test(test_rnn_forward),   cmocka_unit_test(test_rk4),
        cmocka_unit_test(test_power_iteration), cmocka_unit_test(test_nested),
        cmocka_unit_test(test_taps),          cmocka_unit_test(test_errors),
        cmocka_unit_test(test_json),          cmocka_unit_test(test_grad_cumsum),
        cmocka_unit_test(test_grad_rnn),      cmocka_unit_test(test_grad_compiled),
        cmocka_unit_test(test_inline_one_step),
        cmocka_unit_test(test_push_out),      cmocka_unit_test(test_split_map),
        cmocka_unit_test(test_merge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
