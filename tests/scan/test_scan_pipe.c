/* Pipelined Scan steps (docs/control-flow.md §5.3, lib/scan/scan_pipe.h):
 * the stage partition of the RNN forward loop, of its gradient's reverse
 * loop, of a scan with a pure output and of a multi-carry scan; results the
 * same bits as the plain sequential loop (the evaluator, whose Scan nodes
 * run the whole inner function step by step) at 1, 2 and 4 workers, for
 * the RNN forward and forward + backward, a cumulative sum, a pure output,
 * several carries and a seeded stress test of random inner graphs; warm
 * calls of a pipelined scan allocate nothing; a failing stage is named with
 * its step; a step-0 shape mismatch gets the sequential loop's message. */
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

#include "../support/alloc_count.h"
#include "scan_pipe.h"
#include "weft/array_ops.h"
#include "weft/elemwise.h"
#include "weft/eval.h"
#include "weft/function.h"
#include "weft/grad.h"
#include "weft/graph.h"
#include "weft/graph_io.h"
#include "weft/index_ops.h"
#include "weft/linalg.h"
#include "weft/reduce.h"
#include "weft/scan.h"
#include "weft/shape_ops.h"
#include "weft/tensor.h"

enum { MAXV = 8 };

static const weft_type_t *ttype(weft_graph_t *g, int nd, const int64_t *shape)
{
    const weft_type_t *t = NULL;
    assert_int_equal(weft_type_tensor(g, WEFT_FLOAT64, nd, shape, &t), WEFT_OK);
    return t;
}

static weft_var_t *var(weft_graph_t *g, int nd, const int64_t *shape, const char *name)
{
    return weft_var_create(g, ttype(g, nd, shape), name);
}

static weft_var_t *cst(weft_graph_t *g, double v)
{
    return weft_constant_scalar(g, WEFT_FLOAT64, v);
}

/* A tensor of shape filled with a fixed pattern of small values. */
static weft_tensor_t *filled(int nd, const int64_t *shape, unsigned seed)
{
    weft_tensor_t *t = NULL;
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, nd, shape, &t), WEFT_OK);
    double *d = weft_tensor_data(t);
    for (size_t i = 0; i < weft_tensor_size(t); i++)
        d[i] = 0.125 * (double)((i * 7 + seed * 13) % 17) - 1.0;
    return t;
}

/* Every element of a and b, as C-contiguous float64 bits. */
static void assert_same_bits(const weft_tensor_t *a, const weft_tensor_t *b)
{
    assert_int_equal(weft_tensor_ndim(a), weft_tensor_ndim(b));
    assert_true(weft_tensor_same_shape(a, b));
    weft_tensor_t *ca = NULL, *cb = NULL;
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, weft_tensor_ndim(a), weft_tensor_shape(a), &ca),
                     WEFT_OK);
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, weft_tensor_ndim(b), weft_tensor_shape(b), &cb),
                     WEFT_OK);
    assert_int_equal(weft_tensor_copy(ca, a), WEFT_OK);
    assert_int_equal(weft_tensor_copy(cb, b), WEFT_OK);
    assert_memory_equal(weft_tensor_data(ca), weft_tensor_data(cb),
                        weft_tensor_size(ca) * sizeof(double));
    weft_tensor_release(ca);
    weft_tensor_release(cb);
}

/* Compiled at 1, 2 and 4 workers, twice each (the second call reuses the
 * cached step DAG): in fast_run without fast_math, the evaluator's bits
 * every time; in fast_run (scan_push_out_dot may move accumulators out of
 * the loop, another summation order), the bits of 1 worker at 2 and 4. */
static void check_runs(weft_graph_t *g, size_t n_in, weft_var_t *const *in,
                       weft_tensor_t *const *vals, size_t n_out, weft_var_t *const *out,
                       bool fast_math);

static void check_against_eval(weft_graph_t *g, size_t n_in, weft_var_t *const *in,
                               weft_tensor_t *const *vals, size_t n_out, weft_var_t *const *out)
{
    check_runs(g, n_in, in, vals, n_out, out, false);
    check_runs(g, n_in, in, vals, n_out, out, true);
}

static void check_runs(weft_graph_t *g, size_t n_in, weft_var_t *const *in,
                       weft_tensor_t *const *vals, size_t n_out, weft_var_t *const *out,
                       bool fast_math)
{
    weft_tensor_t *ref[MAXV] = {0};
    static const char *const no_fast_math[1] = {"fast_math"};
    if (!fast_math) assert_int_equal(weft_eval(g, n_in, in, vals, n_out, out, ref), WEFT_OK);
    for (int threads = 1; threads <= 4; threads *= 2) {
        weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
        o.threads = threads;
        o.exclude = fast_math ? NULL : no_fast_math;
        o.n_exclude = fast_math ? 0 : 1;
        weft_function_t *f = NULL;
        assert_int_equal(weft_function_compile(n_in, in, n_out, out, 0, NULL, &o, &f), WEFT_OK);
        for (int call = 0; call < 2; call++) {
            weft_tensor_t *res[MAXV] = {0};
            weft_status_t s = weft_function_call(f, n_in, vals, n_out, res);
            if (s != WEFT_OK) fprintf(stderr, "%s\n", weft_function_last_error(f));
            assert_int_equal(s, WEFT_OK);
            for (size_t k = 0; k < n_out; k++) {
                if (!ref[k]) { /* fast_run: the first run is the reference */
                    ref[k] = res[k];
                    continue;
                }
                assert_same_bits(res[k], ref[k]);
                weft_tensor_release(res[k]);
            }
        }
        weft_function_destroy(f);
    }
    for (size_t k = 0; k < n_out; k++) weft_tensor_release(ref[k]);
}

/* p's pipeline as the Scan node builds it (NULL: not pipelined). */
static weft__scan_pipe_t *pipe_of_props(const weft__scan_props_t *p)
{
    assert_non_null(p);
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    static const char *const no_inplace[1] = {"inplace"};
    o.exclude = no_inplace;
    o.n_exclude = 1;
    o.threads = 1;
    o.name = "s";
    weft__scan_pipe_t *pp = NULL;
    assert_int_equal(weft__scan_pipe_build(p, &o, &pp), WEFT_OK);
    return pp;
}

/* The stages of the Scan computing y, as "name:carried:args:results" joined by
 * spaces ("" when the loop does not split). */
static void stages_of_props(const weft__scan_props_t *p, char *buf, size_t cap)
{
    weft__scan_pipe_t *pp = pipe_of_props(p);
    buf[0] = '\0';
    size_t len = 0;
    for (size_t k = 0; pp && k < pp->n_stages; k++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%s:%d:%zu:%zu", k ? " " : "",
                                pp->st[k].name, pp->st[k].carried, pp->st[k].n_args,
                                pp->st[k].n_res);
    weft__scan_pipe_destroy(pp);
}

/* The ring rows of p's pipeline and its chunk stages' ring edges:
 * "ring R: STAGE>PRODUCER@DT ..." (the producer's step t + DT waits for the
 * chunk stage's step t). */
static void chunk_rings_of_props(const weft__scan_props_t *p, char *buf, size_t cap)
{
    weft__scan_pipe_t *pp = pipe_of_props(p);
    assert_non_null(pp);
    size_t len = (size_t)snprintf(buf, cap, "ring %lld:", (long long)pp->ring);
    for (size_t k = 0; k < pp->n_stages; k++)
        for (size_t e = 0; pp->st[k].chunk && e < pp->st[k].n_succ; e++)
            if (pp->st[k].succ[e].dt > 1)
                len += (size_t)snprintf(buf + len, cap - len, " %s>%s@%lld", pp->st[k].name,
                                        pp->st[pp->st[k].succ[e].stage].name,
                                        (long long)pp->st[k].succ[e].dt);
    weft__scan_pipe_destroy(pp);
}

static void stages_of(const weft_var_t *y, char *buf, size_t cap)
{
    stages_of_props(weft__scan_get(weft_apply_op(weft_var_owner(y))), buf, cap);
}

/* ys = weft_scan over one sequence (tap {0}) with outs and non-sequences. */
static void scan_of(weft_graph_t *g, weft_scan_seq_t seq, size_t n_out, weft_scan_output_t *outs,
                    size_t n_ns, weft_var_t *const *ns_outer, weft_var_t *const *ns_inner,
                    const char *name, weft_var_t **ys)
{
    weft_scan_spec_t sp = WEFT_SCAN_SPEC_INIT;
    sp.n_seqs = 1;
    sp.seqs = &seq;
    sp.n_outputs = n_out;
    sp.outputs = outs;
    sp.n_nonseqs = n_ns;
    sp.nonseq_outer = ns_outer;
    sp.nonseq_inner = ns_inner;
    sp.name = name;
    assert_non_null(weft_scan(g, &sp, ys));
}

/* ---- the RNN -------------------------------------------------------------------- */

enum { RT = 9, RB = 3, RI = 4, RH = 5 };

typedef struct rnn {
    weft_graph_t *g;
    weft_var_t *in[5]; /* x, W, U, b, h0 */
    weft_var_t *h;     /* (RT, RB, RH) */
    weft_tensor_t *v[5];
} rnn_t;

/* h_t = tanh(x_t @ W + h_{t-1} @ U + b) over nt steps. */
static void build_rnn_steps(rnn_t *r, int64_t nt)
{
    assert_int_equal(weft_graph_create(NULL, &r->g), WEFT_OK);
    weft_graph_t *g = r->g;
    int64_t sx[3] = {nt, RB, RI}, sw[2] = {RI, RH}, su[2] = {RH, RH}, sb[1] = {RH},
            sh[2] = {RB, RH};
    r->in[0] = var(g, 3, sx, "x");
    r->in[1] = var(g, 2, sw, "W");
    r->in[2] = var(g, 2, su, "U");
    r->in[3] = var(g, 1, sb, "b");
    r->in[4] = var(g, 2, sh, "h0");
    weft_var_t *xt = var(g, 2, sx + 1, "x_t"), *hp = var(g, 2, sh, "h_prev");
    weft_var_t *ns[3] = {var(g, 2, sw, "W_in"), var(g, 2, su, "U_in"), var(g, 1, sb, "b_in")};
    weft_var_t *upd = weft_tanh(
        g, weft_add(g, weft_add(g, weft_dot(g, xt, ns[0]), weft_dot(g, hp, ns[1])), ns[2]));
    weft_scan_output_t out = {upd, r->in[4], 0, NULL, &hp};
    scan_of(g, (weft_scan_seq_t){r->in[0], 0, NULL, &xt}, 1, &out, 3, r->in + 1, ns, "rnn", &r->h);
    const int64_t *shapes[5] = {sx, sw, su, sb, sh};
    const int nd[5] = {3, 2, 2, 1, 2};
    for (int k = 0; k < 5; k++) r->v[k] = filled(nd[k], shapes[k], (unsigned)k + 1);
}

static void build_rnn(rnn_t *r)
{
    build_rnn_steps(r, RT);
}

static void free_rnn(rnn_t *r)
{
    for (int k = 0; k < 5; k++) weft_tensor_release(r->v[k]);
    weft_graph_destroy(r->g);
}

/* The forward loop: x_t @ W in the pre stage, the rest carried. */
static void test_rnn_forward(void **state)
{
    (void)state;
    rnn_t r;
    build_rnn(&r);
    char st[256];
    stages_of(r.h, st, sizeof st);
    assert_string_equal(st, "s/pre:0:2:1 s/carry1:1:4:1");
    check_against_eval(r.g, 5, r.in, r.v, 1, &r.h);
    free_rnn(&r);
}

/* The first output of a reverse Scan among v's ancestors up to `depth`
 * nodes up (the gradient's loop, under the IfElse that guards 0 steps). */
static const weft_var_t *reverse_scan_above(const weft_var_t *v, int depth)
{
    weft_apply_t *a = weft_var_owner(v);
    if (!a || depth == 0) return NULL;
    const weft__scan_props_t *p = weft__scan_get(weft_apply_op(a));
    if (p && p->core->lay.reverse) return weft_apply_output(a, 0);
    for (size_t i = 0; i < weft_apply_n_inputs(a); i++) {
        const weft_var_t *found = reverse_scan_above(weft_apply_input(a, i), depth - 1);
        if (found) return found;
    }
    return NULL;
}

/* Forward and backward: the gradient's reverse loop carries lam (the chain)
 * and one accumulator per weight, each its own stage after lam's; the
 * gradients are the evaluator's bits. */
static void test_rnn_fwd_bwd(void **state)
{
    (void)state;
    rnn_t r;
    build_rnn(&r);
    weft_var_t *cost = weft_sum(r.g, weft_mul(r.g, r.h, r.h), 0, NULL, false);
    weft_var_t *out[4] = {cost, NULL, NULL, NULL};
    assert_non_null(weft_grads(r.g, cost, 3, r.in + 1, NULL, out + 1));
    const weft_var_t *bwd = reverse_scan_above(out[2], 16);
    assert_non_null(bwd);
    char st[256];
    stages_of(bwd, st, sizeof st);
    /* pre: 1 - h_t^2 (no carry); carry1: lam (reading it, g_t, U^T and the
     * pre value) with dz_t for the others; carry2..4: the accumulators of W
     * and U (each reading its state, x_t or h_{t-1} and dz_t: its whole
     * product, a Gemm) and of b; post: d cost / d x_t (unpruned here) */
    assert_string_equal(st, "s/pre:0:1:1 s/carry1:1:5:2 s/carry2:1:3:1 s/carry3:1:3:1 "
                            "s/carry4:1:2:1 s/post:0:2:1");
    check_against_eval(r.g, 5, r.in, r.v, 4, out);
    free_rnn(&r);
}

/* The gradient's loop with scan_chunk_sum's marks (dW, dU: outputs 1 and
 * 2, last-state): their stages sum chunks of 8 steps. 37 steps: four whole
 * chunks and one of 5, the rings of 24 rows (three chunks) reused. Compiled in fast_run
 * (which marks them): the same bits at 1, 2 and 4 workers, the evaluator's
 * values within 1e-12, warm calls (after two) allocate nothing. */
static void test_rnn_chunk_sums(void **state)
{
    (void)state;
    rnn_t r;
    build_rnn_steps(&r, 37);
    weft_var_t *cost = weft_sum(r.g, weft_mul(r.g, r.h, r.h), 0, NULL, false);
    weft_var_t *out[4] = {cost, NULL, NULL, NULL};
    assert_non_null(weft_grads(r.g, cost, 3, r.in + 1, NULL, out + 1));
    const weft_var_t *bwd = reverse_scan_above(out[2], 16);
    assert_non_null(bwd);
    weft__scan_props_t q = *weft__scan_get(weft_apply_op(weft_var_owner(bwd)));
    q.last_mask = q.chunk_mask = 0x6;
    char st[256];
    stages_of_props(&q, st, sizeof st);
    assert_string_equal(st, "s/pre:0:1:1 s/carry1:1:5:2 s/chunk2:1:3:1 s/chunk3:1:3:1 "
                            "s/carry4:1:2:1 s/post:0:2:1");
    /* rings of three chunks: the chain's step t + 17 rewrites the first row
     * of the chunk that the products' step t (ending it) reads */
    chunk_rings_of_props(&q, st, sizeof st);
    assert_string_equal(st, "ring 24: s/chunk2>s/carry1@17 s/chunk3>s/carry1@17");
    check_runs(r.g, 5, r.in, r.v, 4, out, true);
    weft_tensor_t *ref[4] = {NULL}, *res[4] = {NULL};
    assert_int_equal(weft_eval(r.g, 5, r.in, r.v, 4, out, ref), WEFT_OK);
    for (int k = 0; k < 4; k++)
        assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, weft_tensor_ndim(ref[k]),
                                           weft_tensor_shape(ref[k]), &res[k]),
                         WEFT_OK);
    weft_function_t *f = NULL;
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.threads = 2;
    assert_int_equal(weft_function_compile(5, r.in, 4, out, 0, NULL, &o, &f), WEFT_OK);
    static char text[16384];
    FILE *m = fmemopen(text, sizeof text, "w");
    assert_non_null(m);
    assert_int_equal(weft_function_print(f, m), WEFT_OK);
    fclose(m);
    assert_non_null(strstr(text, "last-state outputs, chunk sums}"));
    /* cold calls: the second still allocates (17 times, as without the
     * chunk sums: not the loop's) */
    for (int c = 0; c < 2; c++) assert_int_equal(weft_function_call(f, 5, r.v, 4, res), WEFT_OK);
    alloc_count_start();
    for (int c = 0; c < 3; c++) assert_int_equal(weft_function_call(f, 5, r.v, 4, res), WEFT_OK);
    assert_int_equal(alloc_count_stop(), 0);
    for (int k = 0; k < 4; k++) {
        for (size_t i = 0; i < weft_tensor_size(ref[k]); i++)
            assert_true(fabs(weft_tensor_flat_get(res[k], i) - weft_tensor_flat_get(ref[k], i)) <
                        1e-12);
        weft_tensor_release(ref[k]);
        weft_tensor_release(res[k]);
    }
    weft_function_destroy(f);
    free_rnn(&r);
}

/* The gradient's loop with chunk sums (outputs 1 and 2) in the JSON graph
 * format: "chunk_mask" written and read back (the same op); a chunk_mask
 * beyond last_mask is refused. */
static void test_chunk_mask_json(void **state)
{
    (void)state;
    rnn_t r;
    build_rnn(&r);
    weft_var_t *cost = weft_sum(r.g, r.h, 0, NULL, false), *gw = NULL;
    assert_non_null(weft_grads(r.g, cost, 1, r.in + 1, NULL, &gw));
    weft_apply_t *bwd = weft_var_owner(reverse_scan_above(gw, 16));
    const weft__scan_props_t *p = weft__scan_get(weft_apply_op(bwd));
    const weft_op_t *op = NULL;
    assert_int_equal(weft__scan_op_ex(r.g, p->core, 0x6, 0x6, "g", &op), WEFT_OK);
    weft_var_t *in[32];
    for (size_t i = 0; i < weft_apply_n_inputs(bwd); i++) in[i] = weft_apply_input(bwd, i);
    weft_apply_t *a = weft_apply_create(r.g, op, weft_apply_n_inputs(bwd), in);
    assert_non_null(a);
    weft_var_t *y = weft_apply_output(a, 1);
    weft_graph_io_t io = {5, r.in, NULL, 1, &y, 0, NULL};
    char *text = NULL;
    assert_int_equal(weft_graph_io_save(&io, &text), WEFT_OK);
    char *at = strstr(text, "\"chunk_mask\":");
    assert_non_null(at);
    weft_graph_t *g2 = NULL;
    assert_int_equal(weft_graph_create(NULL, &g2), WEFT_OK);
    weft_graph_io_t back = {0};
    assert_int_equal(weft_graph_io_load(g2, text, strlen(text), NULL, &back), WEFT_OK);
    assert_true(weft_op_equal(weft_apply_op(weft_var_owner(back.outputs[0])), op));
    weft_graph_io_clear(&back);
    char *six = strchr(at, '6');
    assert_non_null(six);
    *six = '9'; /* bits 0 and 3: not last-state outputs */
    assert_int_equal(weft_graph_io_load(g2, text, strlen(text), NULL, &back), WEFT_EPARSE);
    assert_non_null(strstr(weft_graph_last_error(g2), "chunk_mask is no subset of last_mask"));
    weft_graph_io_free_text(text);
    weft_graph_destroy(g2);
    free_rnn(&r);
}

/* ---- small scans ------------------------------------------------------------------ */

typedef struct small {
    weft_graph_t *g;
    weft_var_t *x, *xt;
    weft_tensor_t *xv;
} small_t;

static void small_init(small_t *s, int64_t n)
{
    assert_int_equal(weft_graph_create(NULL, &s->g), WEFT_OK);
    int64_t sx[2] = {n, 3};
    s->x = var(s->g, 2, sx, "x");
    s->xt = var(s->g, 1, sx + 1, "x_t");
    s->xv = filled(2, sx, 5);
}

static void small_free(small_t *s)
{
    weft_tensor_release(s->xv);
    weft_graph_destroy(s->g);
}

static void scan_over_x(small_t *s, size_t n_out, weft_scan_output_t *outs, weft_var_t **ys)
{
    scan_of(s->g, (weft_scan_seq_t){s->x, 0, NULL, &s->xt}, n_out, outs, 0, NULL, NULL, NULL, ys);
}

/* tanh(h * 0.5 + x_t * 2): x_t * 2 depends on no carried state. */
static weft_var_t *leaky(small_t *s, weft_var_t *h)
{
    return weft_tanh(s->g, weft_add(s->g, weft_mul(s->g, h, cst(s->g, 0.5)),
                                    weft_mul(s->g, s->xt, cst(s->g, 2.0))));
}

/* check_against_eval on the inputs x and h0 (a vector of 3). */
static void check_x_h0(small_t *s, weft_var_t *h0, size_t n_out, weft_var_t *const *ys)
{
    int64_t three = 3;
    weft_var_t *in[2] = {s->x, h0};
    weft_tensor_t *v[2] = {s->xv, filled(1, &three, 2)};
    check_against_eval(s->g, 2, in, v, n_out, ys);
    weft_tensor_release(v[1]);
}

/* One stage (acc + x_t): the sequential loop, not split. */
static void test_cumsum(void **state)
{
    (void)state;
    small_t s;
    small_init(&s, 11);
    int64_t three = 3;
    weft_var_t *acc = var(s.g, 1, &three, "acc"), *a0 = var(s.g, 1, &three, "a0"), *y = NULL;
    weft_scan_output_t out = {weft_add(s.g, acc, s.xt), a0, 0, NULL, &acc};
    scan_over_x(&s, 1, &out, &y);
    char st[256];
    stages_of(y, st, sizeof st);
    assert_string_equal(st, "");
    check_x_h0(&s, a0, 1, &y);
    small_free(&s);
}

/* h_t = tanh(h_{t-1} * 0.5 + x_t * 2), y_t = h_t * x_t + 1: x_t * 2 in the
 * pre stage, y in the post stage (reading h_t, the carried output's row). */
static void test_pure_output(void **state)
{
    (void)state;
    small_t s;
    small_init(&s, 10);
    int64_t three = 3;
    weft_var_t *h = var(s.g, 1, &three, "h"), *h0 = var(s.g, 1, &three, "h0");
    weft_var_t *upd = leaky(&s, h);
    weft_var_t *y = weft_add(s.g, weft_mul(s.g, upd, s.xt), cst(s.g, 1.0));
    weft_scan_output_t outs[2] = {{upd, h0, 0, NULL, &h}, {y, NULL, 0, NULL, NULL}};
    weft_var_t *ys[2] = {NULL, NULL};
    scan_over_x(&s, 2, outs, ys);
    char st[256];
    stages_of(ys[0], st, sizeof st);
    assert_string_equal(st, "s/pre:0:1:1 s/carry1:1:2:1 s/post:0:2:1");
    check_x_h0(&s, h0, 2, ys);
    small_free(&s);
}

/* a_t = a + x_t; b_t = b * 0.5 + a_t (reads a's update of the same step);
 * c_t = c + tanh(b_{t-1}) with taps {-2, -1}; d_t = d * 0.9 + x_t * x_t
 * (independent): stages pre (x_t * x_t), a, d, b, c (with tanh(b_{t-1}):
 * only c's update reads it). */
static void test_multi_carry(void **state)
{
    (void)state;
    small_t s;
    small_init(&s, 12);
    int64_t three = 3, s2[2] = {2, 3};
    weft_graph_t *g = s.g;
    weft_var_t *a = var(g, 1, &three, "a"), *b = var(g, 1, &three, "b"),
               *c2 = var(g, 1, &three, "c_2"), *c1 = var(g, 1, &three, "c_1"),
               *d = var(g, 1, &three, "d");
    weft_var_t *a_new = weft_add(g, a, s.xt);
    weft_var_t *b_new = weft_add(g, weft_mul(g, b, cst(g, 0.5)), a_new);
    weft_var_t *c_new = weft_add(g, weft_mul(g, c2, c1), weft_tanh(g, b));
    weft_var_t *d_new = weft_add(g, weft_mul(g, d, cst(g, 0.9)), weft_mul(g, s.xt, s.xt));
    weft_var_t *init[4] = {var(g, 1, &three, "a0"), var(g, 1, &three, "b0"), var(g, 2, s2, "c0"),
                           var(g, 1, &three, "d0")};
    static const int64_t ctaps[2] = {-2, -1};
    weft_var_t *cin[2] = {c2, c1};
    weft_scan_output_t outs[4] = {{a_new, init[0], 0, NULL, &a},
                                  {b_new, init[1], 0, NULL, &b},
                                  {c_new, init[2], 2, ctaps, cin},
                                  {d_new, init[3], 0, NULL, &d}};
    weft_var_t *ys[4] = {NULL, NULL, NULL, NULL};
    scan_over_x(&s, 4, outs, ys);
    char st[256];
    stages_of(ys[0], st, sizeof st);
    assert_string_equal(st, "s/pre:0:1:1 s/carry1:1:2:1 s/carry2:1:2:1 s/carry3:1:2:1 "
                            "s/carry4:1:3:1");
    weft_var_t *in[5] = {s.x, init[0], init[1], init[2], init[3]};
    weft_tensor_t *v[5] = {s.xv, filled(1, &three, 1), filled(1, &three, 2), filled(2, s2, 3),
                           filled(1, &three, 4)};
    check_against_eval(g, 5, in, v, 4, ys);
    for (int k = 1; k < 5; k++) weft_tensor_release(v[k]);
    small_free(&s);
}

/* ---- random inner graphs ------------------------------------------------------ */

static unsigned rnd(unsigned *st)
{
    *st = *st * 1103515245u + 12345u;
    return (*st >> 16) & 0x7fff;
}

/* K carried vectors and one pure output over x (T rows of 3), each update
 * tanh of a random expression of x_t, the non-sequence c, its own state and
 * (at random) other states and other updates of the same step; steps T
 * from 1 to 9. */
static void stress_case(unsigned seed)
{
    unsigned st = seed;
    small_t s;
    int64_t n = 1 + (int64_t)(rnd(&st) % 9), three = 3;
    small_init(&s, n);
    weft_graph_t *g = s.g;
    size_t K = 2 + rnd(&st) % 3;
    weft_var_t *c = var(g, 1, &three, "c"), *ci = var(g, 1, &three, "c_in");
    weft_var_t *state[4], *init[4], *pool[64], *upd[5];
    size_t np = 0;
    pool[np++] = s.xt;
    pool[np++] = ci;
    for (size_t k = 0; k < K; k++) {
        state[k] = var(g, 1, &three, "s");
        init[k] = var(g, 1, &three, "s0");
    }
    weft_scan_output_t outs[5];
    for (size_t k = 0; k <= K; k++) {
        size_t base = np;
        if (k < K) pool[np++] = state[k];
        for (size_t j = 0; j < K; j++) /* other states, sometimes */
            if (j != k && rnd(&st) % 3 == 0) pool[np++] = state[j];
        weft_var_t *e = pool[base ? base - 1 - rnd(&st) % 2 : 0];
        for (int m = 0; m < 3; m++) {
            weft_var_t *o = pool[rnd(&st) % np];
            switch (rnd(&st) % 4) {
            case 0: e = weft_add(g, e, o); break;
            case 1: e = weft_mul(g, e, o); break;
            case 2: e = weft_sub(g, weft_tanh(g, e), o); break;
            default: e = weft_mul(g, weft_add(g, o, o), cst(g, 0.25)); break;
            }
            pool[np++] = e;
        }
        if (k < K) e = weft_add(g, e, state[k]);
        upd[k] = weft_tanh(g, e);
        pool[np++] = upd[k]; /* later updates may read this step's */
        outs[k] = k < K ? (weft_scan_output_t){upd[k], init[k], 0, NULL, &state[k]}
                        : (weft_scan_output_t){upd[k], NULL, 0, NULL, NULL};
    }
    weft_var_t *ys[5] = {NULL};
    scan_of(g, (weft_scan_seq_t){s.x, 0, NULL, &s.xt}, K + 1, outs, 1, &c, &ci, NULL, ys);
    weft_var_t *in[6] = {s.x, c};
    weft_tensor_t *v[6] = {s.xv, filled(1, &three, 9)};
    for (size_t k = 0; k < K; k++) {
        in[2 + k] = init[k];
        v[2 + k] = filled(1, &three, (unsigned)k + 11);
    }
    char stg[512];
    stages_of(ys[0], stg, sizeof stg);
    printf("seed %u: %lld steps, %zu carries, stages [%s]\n", seed, (long long)n, K, stg);
    check_against_eval(g, 2 + K, in, v, K + 1, ys);
    for (size_t k = 1; k < 2 + K; k++) weft_tensor_release(v[k]);
    small_free(&s);
}

/* WEFT_PIPE_SEED picks the first seed (printed); 40 cases from it. */
static void test_stress(void **state)
{
    (void)state;
    const char *env = getenv("WEFT_PIPE_SEED");
    unsigned seed = env ? (unsigned)strtoul(env, NULL, 10) : 20261124u;
    printf("stress: seeds %u..%u (WEFT_PIPE_SEED)\n", seed, seed + 39);
    for (unsigned k = 0; k < 40; k++) stress_case(seed + k);
}

/* ---- allocations and errors ---------------------------------------------------- */

/* h_t = tanh(h_{t-1} * 0.5 + x_t * 2) stacked, acc_t = acc_{t-1} + h_t read
 * at [-1] (scan_save_mem: a ring of two states, written by acc's own stage
 * only): stages pre, h, acc. */
static void build_last_state(small_t *s, weft_var_t **in, weft_var_t **ys)
{
    weft_graph_t *g = s->g;
    int64_t three = 3;
    weft_var_t *h = var(g, 1, &three, "h"), *acc = var(g, 1, &three, "acc");
    in[0] = s->x;
    in[1] = var(g, 1, &three, "h0");
    in[2] = var(g, 1, &three, "acc0");
    weft_var_t *upd = leaky(s, h);
    weft_scan_output_t outs[2] = {{upd, in[1], 0, NULL, &h},
                                  {weft_add(g, acc, upd), in[2], 0, NULL, &acc}};
    scan_over_x(s, 2, outs, ys);
    char st[256];
    stages_of(ys[0], st, sizeof st);
    assert_string_equal(st, "s/pre:0:1:1 s/carry1:1:2:1 s/carry2:1:2:1");
    const weft_slice_t at[1] = {WEFT_SLICE_AT(-1)};
    ys[1] = weft_subtensor(g, ys[1], 1, at);
}

/* The same loop with h read at [-1] and acc stacked: h's ring of two
 * states would be read by acc's stage, which does not write it, so the
 * loop runs sequentially (rings_ok); the evaluator's bits all the same. */
static void test_last_state_read_elsewhere(void **state)
{
    (void)state;
    small_t s;
    small_init(&s, 9);
    weft_var_t *in[3], *ys[2];
    build_last_state(&s, in, ys);
    const weft_apply_t *scan = weft_var_owner(weft_apply_input(weft_var_owner(ys[1]), 0));
    const weft_slice_t at[1] = {WEFT_SLICE_AT(-1)};
    weft_var_t *outs[2] = {weft_subtensor(s.g, weft_apply_output(scan, 0), 1, at),
                           weft_apply_output(scan, 1)};
    const weft__scan_props_t *p = weft__scan_get(weft_apply_op(scan));
    const weft_op_t *op[2] = {NULL, NULL};
    char st[256];
    for (uint32_t o = 0; o < 2; o++) { /* the op scan_save_mem makes: output o's last state */
        assert_int_equal(weft__scan_op(s.g, p->core, 1u << o, NULL, &op[o]), WEFT_OK);
        stages_of_props(weft__scan_get(op[o]), st, sizeof st);
        assert_string_equal(st, o ? "s/pre:0:1:1 s/carry1:1:2:1 s/carry2:1:2:1" : "");
    }
    int64_t three = 3;
    weft_tensor_t *v[3] = {s.xv, filled(1, &three, 1), filled(1, &three, 2)};
    check_against_eval(s.g, 3, in, v, 2, outs);
    for (int k = 1; k < 3; k++) weft_tensor_release(v[k]);
    small_free(&s);
}

/* Warm calls of the pipelined RNN forward pass and of the scan above (a
 * last-state output) with caller-supplied outputs allocate nothing: the
 * step DAG, the view handles and the crossing rows are kept with the plan
 * cell; the last state is the evaluator's. */
static void test_warm_calls_allocate_nothing(void **state)
{
    (void)state;
    rnn_t r;
    build_rnn(&r);
    small_t s;
    small_init(&s, 10);
    int64_t three = 3;
    weft_var_t *in[3], *ys[2];
    build_last_state(&s, in, ys);
    weft_tensor_t *v[3] = {s.xv, filled(1, &three, 1), filled(1, &three, 2)};
    check_against_eval(s.g, 3, in, v, 2, ys);
    for (int threads = 1; threads <= 2; threads++)
        for (int last = 0; last < 2; last++) {
            weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
            o.threads = threads;
            weft_function_t *f = NULL;
            weft_tensor_t *res[2] = {NULL, NULL}, *const *vals = last ? v : r.v;
            size_t n_in = last ? 3 : 5, n_out = last ? 2 : 1;
            assert_int_equal(weft_function_compile(n_in, last ? in : r.in, n_out,
                                                   last ? ys : &r.h, 0, NULL, &o, &f),
                             WEFT_OK);
            int64_t sh[2] = {last ? 10 : RT, 3}, rs[3] = {RT, RB, RH}; /* supplied outputs */
            assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, last ? 2 : 3, last ? sh : rs, &res[0]),
                             WEFT_OK);
            if (last) assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, 1, sh + 1, &res[1]), WEFT_OK);
            assert_int_equal(weft_function_call(f, n_in, vals, n_out, res), WEFT_OK); /* cold */
            alloc_count_start();
            for (int c = 0; c < 3; c++)
                assert_int_equal(weft_function_call(f, n_in, vals, n_out, res), WEFT_OK);
            long allocs = alloc_count_stop();
            printf("threads %d, %s: %ld allocations in 3 warm calls\n", threads,
                   last ? "last state" : "RNN", allocs);
            assert_int_equal(allocs, 0);
            for (size_t k = 0; k < n_out; k++) weft_tensor_release(res[k]);
            weft_function_destroy(f);
        }
    for (int k = 1; k < 3; k++) weft_tensor_release(v[k]);
    small_free(&s);
    free_rnn(&r);
}

/* y as a function of in[0..n_in), compiled (fast_run) on `threads` workers. */
static weft_function_t *compile_at(int threads, size_t n_in, weft_var_t *const *in, weft_var_t *y)
{
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.threads = threads;
    weft_function_t *f = NULL;
    assert_int_equal(weft_function_compile(n_in, in, 1, &y, 0, NULL, &o, &f), WEFT_OK);
    return f;
}

/* acc_t = acc + tab[i_t] * 2: the lookup (pre stage) fails at step 5 (index
 * 7 of 4 rows); the error names the Scan, the step and the stage, and the
 * next call with good indices works. */
static void test_stage_error(void **state)
{
    (void)state;
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    int64_t n = 8, st[2] = {4, 3}, three = 3;
    const weft_type_t *it = NULL, *it0 = NULL;
    assert_int_equal(weft_type_tensor(g, WEFT_INT64, 1, &n, &it), WEFT_OK);
    assert_int_equal(weft_type_tensor(g, WEFT_INT64, 0, NULL, &it0), WEFT_OK);
    weft_var_t *idx = weft_var_create(g, it, "idx"), *i_t = weft_var_create(g, it0, "i_t");
    weft_var_t *tab = var(g, 2, st, "tab"), *tab_in = var(g, 2, st, "tab_in");
    weft_var_t *acc = var(g, 1, &three, "acc"), *a0 = var(g, 1, &three, "a0");
    weft_var_t *row = weft_mul(g, weft_take(g, tab_in, i_t, 0), cst(g, 2.0));
    weft_scan_output_t out = {weft_add(g, acc, row), a0, 0, NULL, &acc};
    weft_var_t *y = NULL;
    scan_of(g, (weft_scan_seq_t){idx, 0, NULL, &i_t}, 1, &out, 1, &tab, &tab_in, "lookup", &y);
    weft_tensor_t *iv = NULL;
    assert_int_equal(weft_tensor_empty(WEFT_INT64, 1, &n, &iv), WEFT_OK);
    int64_t *id = weft_tensor_data(iv);
    for (int k = 0; k < 8; k++) id[k] = k % 4;
    id[5] = 7;
    weft_var_t *in[3] = {idx, tab, a0};
    weft_tensor_t *v[3] = {iv, filled(2, st, 1), filled(1, &three, 2)};
    for (int threads = 1; threads <= 2; threads++) {
        weft_function_t *f = compile_at(threads, 3, in, y);
        weft_tensor_t *r = NULL;
        id[5] = 7;
        assert_int_not_equal(weft_function_call(f, 3, v, 1, &r), WEFT_OK);
        const char *msg = weft_function_last_error(f);
        printf("%s\n", msg);
        assert_non_null(strstr(msg, "lookup: step 5: lookup/pre: "));
        assert_null(r);
        id[5] = 1;
        assert_int_equal(weft_function_call(f, 3, v, 1, &r), WEFT_OK);
        weft_tensor_release(r);
        weft_function_destroy(f);
    }
    for (int k = 0; k < 3; k++) weft_tensor_release(v[k]);
    weft_graph_destroy(g);
}

/* h_t = concatenate(h_{t-1}, h_{t-1}) * 0.5 + sum(x_t * 2): the update is
 * twice the state's length at step 0 (in the carried stage, the pre
 * stage's sum beside it); refused with the sequential loop's words. */
static void test_step0_shape_error(void **state)
{
    (void)state;
    small_t s;
    small_init(&s, 4);
    int64_t unk = WEFT_DIM_UNKNOWN, one = 1;
    weft_var_t *h = var(s.g, 1, &unk, "h"), *h0 = var(s.g, 1, &unk, "h0"), *y = NULL;
    weft_var_t *hh[2] = {h, h};
    weft_var_t *sx = weft_sum(s.g, weft_mul(s.g, s.xt, cst(s.g, 2.0)), 0, NULL, false);
    weft_var_t *upd =
        weft_add(s.g, weft_mul(s.g, weft_concatenate(s.g, 2, hh, 0), cst(s.g, 0.5)), sx);
    weft_scan_output_t out = {upd, h0, 0, NULL, &h};
    scan_over_x(&s, 1, &out, &y);
    char st[256];
    stages_of(y, st, sizeof st);
    assert_string_equal(st, "s/pre:0:1:1 s/carry1:1:2:1");
    weft_var_t *in[2] = {s.x, h0};
    weft_tensor_t *v[2] = {s.xv, filled(1, &one, 1)};
    for (int threads = 1; threads <= 2; threads++) {
        weft_function_t *f = compile_at(threads, 2, in, y);
        weft_tensor_t *r = NULL;
        assert_int_equal(weft_function_call(f, 2, v, 1, &r), WEFT_ESHAPE);
        const char *msg = weft_function_last_error(f);
        assert_non_null(strstr(msg, "output 0: the update ("));
        assert_non_null(
            strstr(msg, "is float64[2] at step 0, but the carried state (initial value h0"));
        assert_non_null(strstr(msg, "has shape (1)"));
        assert_null(r);
        weft_function_destroy(f);
    }
    weft_tensor_release(v[1]);
    small_free(&s);
}

/* An allocation failing anywhere in the first call (the inner compiles, the
 * partition, the stage compiles, the step DAG) fails the call cleanly (no
 * crash; no leak under ASan), and a later call of the same function gives
 * the evaluator's values. Every allocation of the first call is tried, up
 * to a stride that keeps the test short. */
static void test_alloc_failures(void **state)
{
    (void)state;
    small_t s;
    small_init(&s, 6);
    int64_t three = 3;
    weft_var_t *h = var(s.g, 1, &three, "h"), *h0 = var(s.g, 1, &three, "h0"), *ys[2];
    weft_var_t *upd = leaky(&s, h);
    weft_scan_output_t outs[2] = {{upd, h0, 0, NULL, &h},
                                  {weft_mul(s.g, upd, s.xt), NULL, 0, NULL, NULL}};
    scan_over_x(&s, 2, outs, ys);
    weft_var_t *in[2] = {s.x, h0};
    weft_tensor_t *v[2] = {s.xv, filled(1, &three, 2)}, *ref[2] = {NULL, NULL};
    assert_int_equal(weft_eval(s.g, 2, in, v, 2, ys, ref), WEFT_OK);
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.threads = 2;
    long total = 0, failed = 0;
    for (long k = 1;; k += 1 + k / 64) {
        weft_function_t *f = NULL;
        assert_int_equal(weft_function_compile(2, in, 2, ys, 0, NULL, &o, &f), WEFT_OK);
        weft_tensor_t *r[2] = {NULL, NULL};
        alloc_fail_at(k);
        weft_status_t st = weft_function_call(f, 2, v, 2, r);
        long n = alloc_count_stop();
        if (st == WEFT_OK) {
            total = n;
        } else {
            failed++;
            assert_null(r[0]);
            assert_int_equal(weft_function_call(f, 2, v, 2, r), WEFT_OK);
        }
        assert_same_bits(r[0], ref[0]);
        assert_same_bits(r[1], ref[1]);
        for (int i = 0; i < 2; i++) weft_tensor_release(r[i]);
        weft_function_destroy(f);
        if (st == WEFT_OK && k > n) break;
    }
    printf("first call: %ld allocations, %ld failures injected\n", total, failed);
    assert_true(failed > 0);
    for (int i = 0; i < 2; i++) weft_tensor_release(ref[i]);
    weft_tensor_release(v[1]);
    small_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rnn_forward),   cmocka_unit_test(test_rnn_fwd_bwd),
        cmocka_unit_test(test_cumsum),        cmocka_unit_test(test_pure_output),
        cmocka_unit_test(test_multi_carry),   cmocka_unit_test(test_stress),
        cmocka_unit_test(test_warm_calls_allocate_nothing),
        cmocka_unit_test(test_stage_error),   cmocka_unit_test(test_step0_shape_error),
        cmocka_unit_test(test_alloc_failures), cmocka_unit_test(test_last_state_read_elsewhere),
        cmocka_unit_test(test_rnn_chunk_sums), cmocka_unit_test(test_chunk_mask_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
