/* weft-rewrite-bench's wide-graph lines (docs/rewrites.md §6.6): graphs where
 * one value has several readers followed by elementwise work, compiled with
 * fast_run three ways: in-place off (the tag excluded), on (the inplace
 * rewrite's critical-path rule), and greedy (the same rewrite given a cost
 * profile of 0 ns for every node, which makes the rule vacuous: the choice
 * the rewrite made before the rule). Per graph:
 *   rewritebench wide graph=NAME nodes=N ideal_off=A ideal_on=B ratio=B/A
 *     ideal_greedy=C measured_ratio=M peak_kb_on=P peak_kb_greedy=Q
 *     peak_ratio=P/Q inplace_on=I inplace_greedy=J
 * ideal_*: ideal speedup, sum of node costs / critical path over data edges
 * and DestroyHandler orderings, with the size-based estimates
 * (weft_node_cost_estimate), on the fgraph after fast_run; measured_ratio:
 * the same ratio with measured costs instead, the mean node times of 200
 * profiled calls of the in-place-off function on one worker, given to the
 * rewrite as they are by options.cost_profile;
 * peak_kb_*: the profiles' peak KiB of intermediates alive at once (one
 * worker, so the depth-first order a worker runs a graph in; an in-place
 * value counts until its last alias is done, docs/execution.md §9, and a
 * node the memory plan lets write over its input adds nothing, §4.6); inplace_*:
 * nodes whose op destroys an input. Targets: ratio >= 0.98, peak_ratio <=
 * 1.10. A last line times the inplace rewrite alone on a random wide DAG of
 * WIDE_N (default 5000) nodes before fusion, with the rule and greedy:
 *   rewritebench wide graph=randomN nodes=M inplace_ms=X inplace_greedy_ms=Y */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "weft/weft.h"
#include "bench_check.h"
#include "widebench.h"

typedef struct wide {
    weft_graph_t *g;
    weft_var_t *in[8];
    size_t n_in;
    weft_var_t *out;
} wide_t;

static weft_var_t *w_input(wide_t *w, int64_t r, int64_t c)
{
    const weft_type_t *t;
    int64_t s[2] = {r, c};
    char name[8];
    snprintf(name, sizeof name, "in%zu", w->n_in);
    CHECK(weft_type_tensor(w->g, WEFT_FLOAT64, 2, s, &t));
    return w->in[w->n_in++] = weft_var_create(w->g, t, name);
}

/* v = x @ W read by k branches tanh(v * c_i) + c_i (fused), each then @ W;
 * the branches summed. */
static void build_fanout(wide_t *w, int k)
{
    weft_graph_t *g = w->g;
    weft_var_t *x = w_input(w, 128, 128), *W = w_input(w, 128, 128);
    weft_var_t *v = weft_dot(g, x, W), *acc = NULL;
    for (int i = 0; i < k; i++) {
        double c = 1.0 + 0.1 * i;
        weft_var_t *b = weft_dot(g, weft_add_scalar(g, weft_tanh(g, weft_mul_scalar(g, v, c)), c), W);
        acc = acc ? weft_add(g, acc, b) : b;
    }
    w->out = acc;
}

/* The example: h = z + a @ b (a Gemm) read by Tanh and Exp, each
 * followed by a product; chain > 0 puts that many more elementwise steps on
 * each branch first (fused with its head). */
static void build_gemm_tanh_exp(wide_t *w, int chain)
{
    weft_graph_t *g = w->g;
    weft_var_t *z = w_input(w, 64, 256), *a = w_input(w, 64, 128), *b = w_input(w, 128, 256);
    weft_var_t *W2 = w_input(w, 256, 64);
    weft_var_t *h = weft_add(g, z, weft_dot(g, a, b));
    weft_var_t *t = weft_tanh(g, h), *e = weft_exp(g, h);
    for (int i = 0; i < chain; i++) {
        t = weft_mul_scalar(g, weft_sin(g, t), 0.5);
        e = weft_add_scalar(g, weft_tanh(g, e), 0.5);
    }
    w->out = weft_add(g, weft_dot(g, t, W2), weft_dot(g, e, W2));
}

static uint64_t rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* n random nodes on 64x64 values: 60% unary, 25% binary elementwise, 15%
 * products, inputs drawn mostly from the last 8 values (so values get
 * several readers); the values nobody reads are summed into the output. */
static void build_random(wide_t *w, int n, uint64_t seed)
{
    static const weft_elemwise_kind_t un[] = {WEFT_ELEMWISE_TANH, WEFT_ELEMWISE_EXP,
                                              WEFT_ELEMWISE_NEG, WEFT_ELEMWISE_SIN};
    static const weft_elemwise_kind_t bi[] = {WEFT_ELEMWISE_ADD, WEFT_ELEMWISE_MUL,
                                              WEFT_ELEMWISE_SUB};
    weft_var_t **vals = malloc((size_t)(n + 4) * sizeof *vals);
    int *readers = calloc((size_t)(n + 4), sizeof *readers), nv = 0;
    for (int i = 0; i < 4; i++) vals[nv++] = w_input(w, 64, 64);
    for (int i = 0; i < n; i++) {
        uint64_t r = rnd(&seed) % 100;
        int a = nv - 1 - (int)(rnd(&seed) % (uint64_t)(nv < 8 ? nv : 8));
        int b = (int)(rnd(&seed) % (uint64_t)nv);
        if (r < 60) vals[nv] = weft_unary(w->g, un[rnd(&seed) % 4], vals[a]);
        else if (r < 85) vals[nv] = weft_binary(w->g, bi[rnd(&seed) % 3], vals[a], vals[b]);
        else vals[nv] = weft_mul_scalar(w->g, weft_dot(w->g, vals[a], vals[b]), 0.01);
        readers[a]++;
        readers[b] += r >= 60;
        nv++;
    }
    weft_var_t *acc = NULL;
    for (int i = 4; i < nv; i++)
        if (!readers[i]) acc = acc ? weft_add(w->g, acc, vals[i]) : vals[i];
    w->out = acc;
    free(vals);
    free(readers);
}

/* ---- measures ----------------------------------------------------------------------- */

/* Sum of node costs / longest path over data edges and orderings, with the
 * costs the inplace rewrite would see (weft_fgraph_node_cost). */
static double ideal_speedup(weft_fgraph_t *fg)
{
    weft_apply_t *const *order, *const *bef, *const *aft;
    size_t n, n_ord, n_ids = weft_graph_n_applies(weft_fgraph_graph(fg));
    CHECK(weft_fgraph_toposort(fg, &order, &n));
    CHECK(weft_fgraph_orderings(fg, &bef, &aft, &n_ord));
    double *top = calloc(n_ids + 1, sizeof *top), sum = 0, cp = 0;
    uint64_t *keys = calloc(n_ids + 1, sizeof *keys);
    CHECK(weft_fgraph_node_keys(fg, n_ids, keys));
    for (size_t i = 0; i < n; i++) { /* toposort order: every predecessor first */
        double t = 0;
        for (size_t k = 0; k < weft_apply_n_inputs(order[i]); k++) {
            weft_apply_t *p = weft_var_owner(weft_apply_input(order[i], k));
            if (p && top[weft_apply_id(p)] > t) t = top[weft_apply_id(p)];
        }
        for (size_t o = 0; o < n_ord; o++)
            if (aft[o] == order[i] && top[weft_apply_id(bef[o])] > t) t = top[weft_apply_id(bef[o])];
        double c = weft_fgraph_node_cost(fg, order[i], keys[weft_apply_id(order[i])]);
        top[weft_apply_id(order[i])] = t + c;
        sum += c;
        if (t + c > cp) cp = t + c;
    }
    free(top);
    free(keys);
    return cp > 0 ? sum / cp : 1.0;
}

static size_t n_inplace(weft_fgraph_t *fg)
{
    weft_apply_t *const *nodes;
    size_t n, c = 0;
    CHECK(weft_fgraph_applies(fg, &nodes, &n));
    for (size_t i = 0; i < n; i++) {
        const weft_op_alias_t *m;
        size_t nm;
        weft_op_destroy_map(weft_apply_op(nodes[i]), &m, &nm);
        c += nm > 0;
    }
    return c;
}

/* fg's measured costs: each row's mean time per call (NULL: none, the
 * estimates). zero: every node of fg costs 0 instead, so that the
 * critical-path rule never refuses. */
static void set_costs(weft_fgraph_t *fg, const weft_profile_t *p, bool zero)
{
    size_t n_ids = weft_graph_n_applies(weft_fgraph_graph(fg)), n = 0;
    size_t cap = zero ? n_ids : p ? p->n_applies : 0;
    uint64_t *keys = calloc(cap + 1, sizeof *keys);
    double *ns = calloc(cap + 1, sizeof *ns);
    if (zero) CHECK(weft_fgraph_node_keys(fg, n_ids, keys));
    for (size_t i = 0; !zero && p && i < p->n_applies; i++) {
        if (!p->applies[i].calls) continue;
        keys[n] = p->applies[i].key;
        ns[n++] = (double)p->applies[i].time_ns / (double)p->applies[i].calls;
    }
    CHECK(weft_fgraph_set_node_costs(fg, zero ? n_ids : n, keys, ns));
    free(keys);
    free(ns);
}

typedef struct variant_result {
    double ideal;  /* sum of node costs / critical path */
    uint64_t peak; /* bytes: the T=1 profile's peak of intermediates */
    size_t nodes, inplace;
} variant_result_t;

static void w_build(wide_t *w, int kind, int param)
{
    memset(w, 0, sizeof *w);
    CHECK(weft_graph_create(NULL, &w->g));
    if (kind == 0) build_fanout(w, param);
    else if (kind == 1) build_gemm_tanh_exp(w, param);
    else build_random(w, 200, (uint64_t)param);
    CHECK_GRAPH(w->g);
}

/* w's graph as an fgraph (inputs protected) after fast_run without in-place. */
static weft_fgraph_t *before_inplace(wide_t *w)
{
    weft_fgraph_options_t o = WEFT_FGRAPH_OPTIONS_INIT;
    bool mut[8] = {false};
    o.clone = false;
    o.input_mutable = mut;
    weft_fgraph_t *fg;
    CHECK(weft_fgraph_create(w->g, w->n_in, w->in, 1, &w->out, &o, NULL, &fg));
    const char *ex[] = {"inplace"};
    CHECK(weft_rewrite_mode(fg, "fast_run", 0, NULL, 1, ex, NULL));
    CHECK(weft_dh_attach(fg, NULL));
    return fg;
}

static void inplace_alone(weft_fgraph_t *fg)
{
    const char *inc[] = {"add_destroy_handler", "inplace"};
    CHECK(weft_rewrite_mode(fg, "none", 2, inc, 0, NULL, NULL));
}

/* The model's view: fast_run without in-place, then (in_place) the inplace
 * rewrite alone, greedy or with the costs (p's measured times, or the
 * estimates when p is NULL); the ideal speedup with those costs. */
static void model_variant(int kind, int param, bool in_place, bool greedy,
                          const weft_profile_t *p, variant_result_t *r)
{
    wide_t w;
    w_build(&w, kind, param);
    weft_fgraph_t *fg = before_inplace(&w);
    set_costs(fg, p, greedy);
    if (in_place) inplace_alone(fg);
    set_costs(fg, p, false);
    r->ideal = ideal_speedup(fg);
    r->nodes = weft_fgraph_n_applies(fg);
    r->inplace = n_inplace(fg);
    weft_fgraph_destroy(fg);
    weft_graph_destroy(w.g);
}

/* The compiled function's view (fast_run, one worker, 200 profiled calls):
 * mode 0 in-place off, 1 on, 2 greedy (cost_profile: off's rows at 0 ns).
 * *p_out (mode 0): its profile, for mode 2's costs. */
static void compiled_variant(int kind, int param, int mode, const weft_profile_t *costs,
                             variant_result_t *r, weft_profile_t **p_out)
{
    wide_t w;
    w_build(&w, kind, param);
    const char *ex[] = {"inplace"};
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.threads = 1;
    o.profile = true;
    o.n_exclude = mode == 0;
    o.exclude = ex;
    o.cost_profile = costs;
    weft_function_t *f;
    CHECK(weft_function_compile(w.n_in, w.in, 1, &w.out, 0, NULL, &o, &f));
    weft_tensor_t *vals[8], *y = NULL;
    for (size_t k = 0; k < w.n_in; k++) {
        const weft_type_t *t = weft_var_type(w.in[k]);
        int64_t s[2] = {weft_type_dim(t, 0), weft_type_dim(t, 1)};
        CHECK(weft_tensor_full(WEFT_FLOAT64, 2, s, 0.01 * (double)(k + 1), &vals[k]));
    }
    for (int c = 0; c < 201; c++) {
        if (c == 1) CHECK(weft_profile_reset(f)); /* the first call warms the pool */
        CHECK(weft_function_call(f, w.n_in, vals, 1, &y));
        weft_tensor_release(y);
        y = NULL;
    }
    weft_profile_t *p;
    CHECK(weft_profile_create(f, WEFT_PROFILE_TOTAL, &p));
    r->peak = p->peak_bytes;
    if (p_out) *p_out = p;
    else weft_profile_destroy(p);
    for (size_t k = 0; k < w.n_in; k++) weft_tensor_release(vals[k]);
    CHECK(weft_function_destroy(f));
    weft_graph_destroy(w.g);
}

static void wide_line(const char *name, int kind, int param)
{
    variant_result_t off, on, gr, moff, mon;
    weft_profile_t *p_off;
    compiled_variant(kind, param, 0, NULL, &off, &p_off);
    weft_profile_apply_t *rows = malloc((p_off->n_applies + 1) * sizeof *rows);
    memcpy(rows, p_off->applies, p_off->n_applies * sizeof *rows);
    for (size_t i = 0; i < p_off->n_applies; i++) rows[i].calls = 1, rows[i].time_ns = 0;
    weft_profile_t zero = *p_off;
    zero.applies = rows;
    compiled_variant(kind, param, 1, NULL, &on, NULL);
    compiled_variant(kind, param, 2, &zero, &gr, NULL);
    model_variant(kind, param, false, false, NULL, &off);
    model_variant(kind, param, true, false, NULL, &on);
    model_variant(kind, param, true, true, NULL, &gr);
    model_variant(kind, param, false, false, p_off, &moff);
    model_variant(kind, param, true, false, p_off, &mon);
    printf("rewritebench wide graph=%s nodes=%zu ideal_off=%.3f ideal_on=%.3f ratio=%.3f "
           "ideal_greedy=%.3f measured_ratio=%.3f peak_kb_on=%.1f peak_kb_greedy=%.1f "
           "peak_ratio=%.3f inplace_on=%zu inplace_greedy=%zu\n",
           name, on.nodes, off.ideal, on.ideal, on.ideal / off.ideal, gr.ideal,
           mon.ideal / moff.ideal, (double)on.peak / 1024.0, (double)gr.peak / 1024.0,
           gr.peak ? (double)on.peak / (double)gr.peak : 1.0, on.inplace, gr.inplace);
    free(rows);
    weft_profile_destroy(p_off);
}

static double ms_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* The inplace rewrite's time alone on a large random wide DAG, with the rule
 * (estimates) and greedy (zero costs): the rule's model must stay cheap. */
static void wide_time_line(int n)
{
    double ms[2];
    size_t nodes = 0;
    for (int greedy = 0; greedy < 2; greedy++) {
        wide_t w;
        memset(&w, 0, sizeof w);
        CHECK(weft_graph_create(NULL, &w.g));
        build_random(&w, n, 7);
        CHECK_GRAPH(w.g);
        weft_fgraph_t *fg = before_inplace(&w);
        if (greedy) set_costs(fg, NULL, true);
        nodes = weft_fgraph_n_applies(fg);
        double t0 = ms_now();
        inplace_alone(fg);
        ms[greedy] = ms_now() - t0;
        weft_fgraph_destroy(fg);
        weft_graph_destroy(w.g);
    }
    printf("rewritebench wide graph=random%d nodes=%zu inplace_ms=%.2f inplace_greedy_ms=%.2f\n",
           n, nodes, ms[0], ms[1]);
}

void weft__widebench_run(void)
{
    wide_line("fanout2", 0, 2);
    wide_line("fanout4", 0, 4);
    wide_line("fanout8", 0, 8);
    wide_line("gemm_tanh_exp", 1, 0);
    wide_line("gemm_tanh_exp_chain4", 1, 4);
    for (int s = 1; s <= 3; s++) {
        char name[32];
        snprintf(name, sizeof name, "random200_s%d", s);
        wide_line(name, 2, s);
    }
    wide_time_line(getenv("WIDE_N") ? atoi(getenv("WIDE_N")) : 5000);
}
