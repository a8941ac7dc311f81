/* weft-scan-bench: prints one line per measurement.
 *   step_overhead T=1: ns per step of a scan whose inner graph is one Add of
 *     0-d float64 values (10^4 steps), caller-supplied output;
 *   rnn_forward T=1 / T=2: ms per call of h_t = tanh(x_t W + h_{t-1} U + b),
 *     hidden 256, batch 32, input 256, 100 steps, float64, against the same
 *     loop written in C with cblas_dgemm (one thread);
 *   rnn_fwd_bwd T=1 / T=2: the same plus the gradient of sum(H) with
 *     respect to W, U and b (weft_grad: a reverse Scan), against
 *     hand-written BPTT with cblas_dgemm.
 * weft writes caller-supplied outputs allocated once, as the C loops write
 * arrays allocated once. Best of the repetitions (C and weft alternating); OPENBLAS_NUM_THREADS=1
 * is advised. */
#define _POSIX_C_SOURCE 200809L
#include <cblas.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "weft/weft.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static const weft_type_t *tt(weft_graph_t *g, int nd, const int64_t *shape)
{
    const weft_type_t *t = NULL;
    weft_type_tensor(g, WEFT_FLOAT64, nd, shape, &t);
    return t;
}

static weft_tensor_t *filled(int nd, const int64_t *shape, double scale)
{
    weft_tensor_t *t = NULL;
    if (weft_tensor_empty(WEFT_FLOAT64, nd, shape, &t) != WEFT_OK) exit(1);
    double *d = weft_tensor_data(t);
    unsigned s = 7;
    for (size_t i = 0; i < weft_tensor_size(t); i++) {
        s = s * 1103515245u + 12345u;
        d[i] = scale * (((s >> 8) % 2001) / 1000.0 - 1.0);
    }
    return t;
}

/* Best time per call over reps of `calls` calls. */
static double time_calls(weft_function_t *f, size_t n_in, weft_tensor_t **in, weft_tensor_t *out,
                         int calls)
{
    double best = 1e30;
    for (int r = 0; r < 5; r++) {
        double t0 = now_s();
        for (int c = 0; c < calls; c++)
            if (weft_function_call(f, n_in, in, 1, &out) != WEFT_OK) {
                fprintf(stderr, "call: %s\n", weft_function_last_error(f));
                exit(1);
            }
        double dt = (now_s() - t0) / calls;
        if (dt < best) best = dt;
    }
    return best;
}

static void step_overhead(void)
{
    weft_graph_t *g = NULL;
    weft_graph_create(NULL, &g);
    int64_t n = 10000;
    weft_var_t *x = weft_var_create(g, tt(g, 1, &n), "x");
    weft_var_t *xt = weft_var_create(g, tt(g, 0, NULL), "x_t");
    weft_var_t *acc = weft_var_create(g, tt(g, 0, NULL), "acc");
    weft_scan_seq_t seq = {x, 0, NULL, &xt};
    weft_scan_output_t out = {weft_add(g, acc, xt), weft_constant_scalar(g, WEFT_FLOAT64, 0), 0,
                              NULL, &acc};
    weft_scan_spec_t sp = WEFT_SCAN_SPEC_INIT;
    sp.n_seqs = 1;
    sp.seqs = &seq;
    sp.n_outputs = 1;
    sp.outputs = &out;
    sp.n_steps = n;
    weft_var_t *y = NULL;
    if (!weft_scan(g, &sp, &y)) exit(1);
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.threads = 1;
    weft_function_t *f = NULL;
    if (weft_function_compile(1, &x, 1, &y, 0, NULL, &o, &f) != WEFT_OK) exit(1);
    weft_tensor_t *xv = filled(1, &n, 1.0), *yv = NULL;
    weft_tensor_empty(WEFT_FLOAT64, 1, &n, &yv);
    double t = time_calls(f, 1, &xv, yv, 20);
    printf("step_overhead T=1 steps=%lld ns_per_step=%.1f\n", (long long)n, t / n * 1e9);
    weft_tensor_release(xv);
    weft_tensor_release(yv);
    weft_function_destroy(f);
    weft_graph_destroy(g);
}

enum { NT = 100, NB = 32, NI = 256, NH = 256 };

static void rnn_c(const double *x, const double *w, const double *u, const double *b,
                  const double *h0, double *hs)
{
    const double *hp = h0;
    for (int t = 0; t < NT; t++) {
        double *h = hs + (size_t)t * NB * NH;
        for (int r = 0; r < NB; r++) memcpy(h + r * NH, b, NH * sizeof(double));
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, NB, NH, NI, 1.0, x + (size_t)t * NB * NI,
                    NI, w, NH, 1.0, h, NH);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, NB, NH, NH, 1.0, hp, NH, u, NH, 1.0, h, NH);
        for (int k = 0; k < NB * NH; k++) h[k] = tanh(h[k]);
        hp = h;
    }
}

/* Backward of cost = sum(H) for W, U, b (BPTT), given the forward states. */
static void rnn_c_backward(const double *x, const double *u, const double *h0, const double *hs,
                           double *gw, double *gu, double *gb, double *dz, double *lam)
{
    memset(gw, 0, sizeof(double) * NI * NH);
    memset(gu, 0, sizeof(double) * NH * NH);
    memset(gb, 0, sizeof(double) * NH);
    memset(lam, 0, sizeof(double) * NB * NH);
    for (int t = NT - 1; t >= 0; t--) {
        const double *h = hs + (size_t)t * NB * NH, *hp = t ? h - NB * NH : h0;
        for (int k = 0; k < NB * NH; k++) dz[k] = (1.0 + lam[k]) * (1.0 - h[k] * h[k]);
        for (int r = 0; r < NB; r++)
            for (int j = 0; j < NH; j++) gb[j] += dz[r * NH + j];
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, NI, NH, NB, 1.0,
                    x + (size_t)t * NB * NI, NI, dz, NH, 1.0, gw, NH);
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, NH, NH, NB, 1.0, hp, NH, dz, NH, 1.0,
                    gu, NH);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, NB, NH, NH, 1.0, dz, NH, u, NH, 0.0,
                    lam, NH);
    }
}

static weft_function_t *rnn_weft(int threads, bool backward, weft_graph_t **gp, weft_var_t **in)
{
    weft_graph_t *g = NULL;
    weft_graph_create(NULL, &g);
    int64_t sx[3] = {NT, NB, NI}, sw[2] = {NI, NH}, su[2] = {NH, NH}, sb[1] = {NH}, sh[2] = {NB, NH};
    in[0] = weft_var_create(g, tt(g, 3, sx), "x");
    in[1] = weft_var_create(g, tt(g, 2, sw), "W");
    in[2] = weft_var_create(g, tt(g, 2, su), "U");
    in[3] = weft_var_create(g, tt(g, 1, sb), "b");
    in[4] = weft_var_create(g, tt(g, 2, sh), "h0");
    weft_var_t *xt = weft_var_create(g, tt(g, 2, sx + 1), "x_t");
    weft_var_t *hp = weft_var_create(g, tt(g, 2, sh), "h_prev");
    weft_var_t *wi = weft_var_create(g, tt(g, 2, sw), "W_in");
    weft_var_t *ui = weft_var_create(g, tt(g, 2, su), "U_in");
    weft_var_t *bi = weft_var_create(g, tt(g, 1, sb), "b_in");
    weft_var_t *hn = weft_tanh(
        g, weft_add(g, weft_add(g, weft_dot(g, xt, wi), weft_dot(g, hp, ui)), bi));
    weft_scan_seq_t seq = {in[0], 0, NULL, &xt};
    weft_scan_output_t out = {hn, in[4], 0, NULL, &hp};
    weft_var_t *nso[3] = {in[1], in[2], in[3]}, *nsi[3] = {wi, ui, bi};
    weft_scan_spec_t sp = WEFT_SCAN_SPEC_INIT;
    sp.n_seqs = 1;
    sp.seqs = &seq;
    sp.n_outputs = 1;
    sp.outputs = &out;
    sp.n_nonseqs = 3;
    sp.nonseq_outer = nso;
    sp.nonseq_inner = nsi;
    weft_var_t *y = NULL;
    if (!weft_scan(g, &sp, &y)) {
        fprintf(stderr, "scan: %s\n", weft_graph_error_message(g));
        exit(1);
    }
    weft_var_t *outs[4] = {y, NULL, NULL, NULL};
    size_t n_out = 1;
    if (backward) {
        weft_var_t *cost = weft_sum(g, y, 0, NULL, false);
        if (!weft_grads(g, cost, 3, in + 1, NULL, outs + 1)) {
            fprintf(stderr, "grad: %s\n", weft_graph_error_message(g));
            exit(1);
        }
        n_out = 4;
    }
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.threads = threads;
    weft_function_t *f = NULL;
    if (weft_function_compile(5, in, n_out, outs, 0, NULL, &o, &f) != WEFT_OK) {
        fprintf(stderr, "compile: %s\n", weft_function_last_error(NULL));
        exit(1);
    }
    *gp = g;
    return f;
}

typedef struct cargs {
    weft_tensor_t **v;
    double *hs, *gw, *gu, *gb, *dz, *lam;
    bool backward;
} cargs_t;

static double c_once(void *p)
{
    cargs_t *a = p;
    double t0 = now_s();
    rnn_c(weft_tensor_data(a->v[0]), weft_tensor_data(a->v[1]), weft_tensor_data(a->v[2]),
          weft_tensor_data(a->v[3]), weft_tensor_data(a->v[4]), a->hs);
    if (a->backward)
        rnn_c_backward(weft_tensor_data(a->v[0]), weft_tensor_data(a->v[2]),
                       weft_tensor_data(a->v[4]), a->hs, a->gw, a->gu, a->gb, a->dz, a->lam);
    return now_s() - t0;
}

/* Max |weft - C| over the outputs compared (H, and gW, gU, gb when backward). */
static double max_diff(weft_tensor_t **r, size_t n, const cargs_t *a)
{
    const double *ref[4] = {a->hs, a->gw, a->gu, a->gb};
    double err = 0;
    for (size_t k = 0; k < n; k++) {
        weft_tensor_t *c = NULL;
        weft_tensor_contiguous(r[k], &c);
        const double *d = weft_tensor_data(c);
        for (size_t i = 0; i < weft_tensor_size(c); i++) err = fmax(err, fabs(d[i] - ref[k][i]));
        weft_tensor_release(c);
    }
    return err;
}

static void rnn_bench(bool backward)
{
    int64_t sx[3] = {NT, NB, NI}, sw[2] = {NI, NH}, su[2] = {NH, NH}, sb[1] = {NH}, sh[2] = {NB, NH};
    weft_tensor_t *v[5] = {filled(3, sx, 1.0), filled(2, sw, 0.05), filled(2, su, 0.05),
                           filled(1, sb, 0.1), filled(2, sh, 0.5)};
    cargs_t a = {v, malloc(sizeof(double) * NT * NB * NH), malloc(sizeof(double) * NI * NH),
                 malloc(sizeof(double) * NH * NH), malloc(sizeof(double) * NH),
                 malloc(sizeof(double) * NB * NH), malloc(sizeof(double) * NB * NH), backward};
    double t1 = 0;
    size_t n_out = backward ? 4 : 1;
    for (int threads = 1; threads <= 2; threads++) {
        weft_graph_t *g = NULL;
        weft_var_t *in[5];
        weft_function_t *f = rnn_weft(threads, backward, &g, in);
        double best = 1e30, best_c = 1e30;
        /* caller-supplied outputs, allocated once as the C loop's arrays */
        int64_t sy[3] = {NT, NB, NH};
        weft_tensor_t *r[4] = {NULL, NULL, NULL, NULL};
        weft_tensor_empty(WEFT_FLOAT64, 3, sy, &r[0]);
        for (size_t k = 1; k < n_out; k++)
            weft_tensor_empty(WEFT_FLOAT64, k == 3 ? 1 : 2, k == 1 ? sw : k == 2 ? su : sb, &r[k]);
        /* C and weft alternate, so both see the same load; the first weft
         * call compiles the inner graphs and is not counted */
        for (int rep = 0; rep < 8; rep++) {
            double tc = c_once(&a);
            if (tc < best_c) best_c = tc;
            double t0 = now_s();
            if (weft_function_call(f, 5, v, n_out, r) != WEFT_OK) {
                fprintf(stderr, "call: %s\n", weft_function_last_error(f));
                exit(1);
            }
            double dt = now_s() - t0;
            if (rep && dt < best) best = dt;
        }
        double err = max_diff(r, n_out, &a);
        for (size_t k = 0; k < n_out; k++) weft_tensor_release(r[k]);
        if (threads == 1) t1 = best;
        printf("rnn_%s T=%d hidden=%d batch=%d steps=%d ms=%.3f c_cblas_ms=%.3f "
               "ratio_vs_c=%.2f speedup_vs_T1=%.2f max_abs_diff=%.1e\n",
               backward ? "fwd_bwd" : "forward", threads, NH, NB, NT, best * 1e3, best_c * 1e3,
               best / best_c, t1 / best, err);
        weft_function_destroy(f);
        weft_graph_destroy(g);
    }
    free(a.hs);
    free(a.gw);
    free(a.gu);
    free(a.gb);
    free(a.dz);
    free(a.lam);
    for (int k = 0; k < 5; k++) weft_tensor_release(v[k]);
}

int main(void)
{
    step_overhead();
    rnn_bench(false);
    rnn_bench(true);
    return 0;
}
