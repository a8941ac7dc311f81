/* weft-rewrite-bench: time of the fast_run rewrite pipeline per node on
 *   chain N  y = tanh(y*1.0001 + 0.5) repeated N times (N = 1000, 10000, 33000)
 *   wide     sum over 1000 branches of exp(x*c_i) + c_i
 *   cse      the same subexpression built 500 times, summed
 *   mlp      a 4x256 tanh MLP training step (MSE loss, weft_grad, SGD updates
 *            as outputs)
 * printing one line per graph:
 *   rewritebench graph=NAME nodes_before=A nodes_after=B ms=T us_per_node=U
 * (us per node counted on the graph before rewriting; target <= 5; ms is
 * the median of 5 runs, each on a freshly built graph, for graphs under 10^4
 * nodes - a single sub-millisecond run mostly times cold caches - and of one
 * run for the larger ones), and for
 * the MLP the intermediate buffers one call allocates (outputs that are
 * neither views nor destroys) before and after the inplace rewrite:
 *   rewritebench graph=mlp inplace buffers_before=X buffers_after=Y
 * Usage: weft-rewrite-bench [GRAPH...]  (no argument: every line). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "weft/weft.h"

#define CHECK(x)                                                                      \
    do {                                                                              \
        weft_status_t st_ = (x);                                                      \
        if (st_ != WEFT_OK) {                                                         \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,                \
                    weft_status_name(st_));                                           \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

typedef struct built {
    size_t n_in, n_out;
    weft_var_t *in[16];
    bool mut[16];
    weft_var_t **out;
} built_t;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static weft_var_t *input(weft_graph_t *g, built_t *b, int nd, const int64_t *shape,
                         const char *name, bool mut)
{
    const weft_type_t *t;
    CHECK(weft_type_tensor(g, WEFT_FLOAT64, nd, shape, &t));
    weft_var_t *v = weft_var_create(g, t, name);
    b->mut[b->n_in] = mut;
    b->in[b->n_in++] = v;
    return v;
}

static void one_output(built_t *b, weft_var_t *y)
{
    b->out = malloc(sizeof *b->out);
    b->out[0] = y;
    b->n_out = 1;
}

static void build_chain(weft_graph_t *g, built_t *b, int n)
{
    int64_t s[] = {64};
    weft_var_t *y = input(g, b, 1, s, "x", false);
    for (int i = 0; i < n; i++) {
        y = weft_tanh(g, weft_add_scalar(g, weft_mul_scalar(g, y, 1.0001), 0.5));
    }
    one_output(b, y);
}

static void build_wide(weft_graph_t *g, built_t *b, int n)
{
    int64_t s[] = {64};
    weft_var_t *x = input(g, b, 1, s, "x", false), *acc = NULL;
    for (int i = 0; i < n; i++) {
        double c = 1.0 + 0.001 * i;
        weft_var_t *t = weft_add_scalar(g, weft_exp(g, weft_mul_scalar(g, x, c)), c);
        acc = acc ? weft_add(g, acc, t) : t;
    }
    one_output(b, acc);
}

static void build_cse(weft_graph_t *g, built_t *b, int n)
{
    int64_t s[] = {64};
    weft_var_t *x = input(g, b, 1, s, "x", false), *acc = NULL;
    for (int i = 0; i < n; i++) {
        weft_var_t *t =
            weft_tanh(g, weft_exp(g, weft_add_scalar(g, weft_mul_scalar(g, x, 2.0), 1.0)));
        acc = acc ? weft_add(g, acc, t) : t;
    }
    one_output(b, acc);
}

/* 4 layers of 256 units, batch 64: h = tanh(h @ W + b); loss = mean((h - y)^2);
 * outputs: loss and W - lr*dW, b - lr*db for every layer. */
static void build_mlp(weft_graph_t *g, built_t *b)
{
    enum { L = 4, H = 256, B = 64 };
    int64_t sx[] = {B, H}, sw[] = {H, H}, sb[] = {H};
    weft_var_t *x = input(g, b, 2, sx, "x", false), *y = input(g, b, 2, sx, "y", false);
    weft_var_t *params[2 * L], *h = x;
    for (int l = 0; l < L; l++) {
        char nw[8], nb[8];
        snprintf(nw, sizeof nw, "W%d", l);
        snprintf(nb, sizeof nb, "b%d", l);
        params[2 * l] = input(g, b, 2, sw, nw, true);
        params[2 * l + 1] = input(g, b, 1, sb, nb, true);
        h = weft_tanh(g, weft_add(g, weft_dot(g, h, params[2 * l]), params[2 * l + 1]));
    }
    weft_var_t *loss = weft_mean(g, weft_sqr(g, weft_sub(g, h, y)), 0, NULL, false), *grads[2 * L];
    weft_grads(g, loss, 2 * L, params, NULL, grads);
    b->out = malloc((2 * L + 1) * sizeof *b->out);
    b->out[0] = loss;
    for (int i = 0; i < 2 * L; i++)
        b->out[1 + i] = weft_sub(g, params[i], weft_mul_scalar(g, grads[i], 0.01));
    b->n_out = 2 * L + 1;
}

static weft_fgraph_t *make_fgraph(weft_graph_t *g, built_t *b)
{
    weft_fgraph_options_t o = WEFT_FGRAPH_OPTIONS_INIT;
    o.clone = false;
    o.input_mutable = b->mut;
    weft_fgraph_t *fg;
    if (weft_graph_error(g) != WEFT_OK) { /* the graph's one construction check */
        fprintf(stderr, "weft-rewrite-bench: %s\n", weft_graph_error_message(g));
        exit(1);
    }
    CHECK(weft_fgraph_create(g, b->n_in, b->in, b->n_out, b->out, &o, NULL, &fg));
    return fg;
}

/* Outputs one call allocates: every apply output not in a view or destroy map. */
static size_t buffers(weft_fgraph_t *fg)
{
    weft_apply_t *const *nodes;
    size_t n, count = 0;
    CHECK(weft_fgraph_applies(fg, &nodes, &n));
    for (size_t i = 0; i < n; i++) {
        const weft_op_t *op = weft_apply_op(nodes[i]);
        const weft_op_alias_t *vm, *dm;
        size_t nv, nd;
        weft_op_view_map(op, &vm, &nv);
        weft_op_destroy_map(op, &dm, &nd);
        for (size_t o = 0; o < weft_apply_n_outputs(nodes[i]); o++) {
            bool aliased = false;
            for (size_t k = 0; k < nv; k++) aliased |= vm[k].output == o;
            for (size_t k = 0; k < nd; k++) aliased |= dm[k].output == o;
            count += !aliased;
        }
    }
    return count;
}

/* The MLP graph built afresh (a rewrite mode edits the nodes of an uncloned
 * fgraph in place, so the timed run's graph cannot be reused): fast_run
 * without in-place, then the inplace rewrite alone; buffers before / after. */
static void inplace_buffers(void)
{
    weft_graph_t *g;
    CHECK(weft_graph_create(NULL, &g));
    built_t b;
    memset(&b, 0, sizeof b);
    build_mlp(g, &b);
    weft_fgraph_t *fg = make_fgraph(g, &b);
    const char *ex[] = {"inplace"};
    CHECK(weft_rewrite_mode(fg, "fast_run", 0, NULL, 1, ex, NULL));
    size_t bb = buffers(fg);
    const char *inc[] = {"add_destroy_handler", "inplace"};
    CHECK(weft_rewrite_mode(fg, "none", 2, inc, 0, NULL, NULL));
    printf("rewritebench graph=mlp inplace buffers_before=%zu buffers_after=%zu\n", bb,
           buffers(fg));
    weft_fgraph_destroy(fg);
    free(b.out);
    weft_graph_destroy(g);
}

static void build(weft_graph_t *g, built_t *b, int kind, int n)
{
    memset(b, 0, sizeof *b);
    if (kind == 0) build_chain(g, b, n);
    else if (kind == 1) build_wide(g, b, n);
    else if (kind == 2) build_cse(g, b, n);
    else build_mlp(g, b);
}

/* One fast_run on a fresh graph: its time, node counts before and after. */
static double run_once(const char *name, int kind, int n, size_t *before, size_t *after)
{
    weft_graph_t *g;
    CHECK(weft_graph_create(NULL, &g));
    built_t b;
    build(g, &b, kind, n);
    weft_fgraph_t *fg = make_fgraph(g, &b);
    *before = weft_fgraph_n_applies(fg);
    /* WEFT_REWRITEBENCH_PROFILE=1: print the rewrite profile to stderr */
    weft_rewrite_stats_t *stats = NULL;
    if (getenv("WEFT_REWRITEBENCH_PROFILE")) CHECK(weft_rewrite_stats_create(&stats));
    double t0 = now_ms();
    weft_status_t st = weft_rewrite_mode(fg, "fast_run", 0, NULL, 0, NULL, stats);
    double ms = now_ms() - t0;
    if (stats) weft_rewrite_stats_print(stats, stderr);
    weft_rewrite_stats_destroy(stats);
    if (st != WEFT_OK) fprintf(stderr, "%s: %s: %s\n", name, weft_status_name(st),
                               weft_fgraph_last_error(fg));
    *after = weft_fgraph_n_applies(fg);
    weft_fgraph_destroy(fg);
    free(b.out);
    weft_graph_destroy(g);
    return ms;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void run(const char *name, int kind, int n)
{
    double ms[5];
    size_t before = 0, after = 0;
    int reps = kind == 0 && n >= 10000 ? 1 : 5;
    for (int r = 0; r < reps; r++) ms[r] = run_once(name, kind, n, &before, &after);
    qsort(ms, (size_t)reps, sizeof *ms, cmp_double);
    double med = ms[reps / 2];
    printf("rewritebench graph=%s nodes_before=%zu nodes_after=%zu ms=%.2f us_per_node=%.3f "
           "runs=%d\n", name, before, after, med, med * 1e3 / (double)before, reps);
    if (kind == 3) inplace_buffers();
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int kind, n;
    } graphs[] = {{"chain1000", 0, 1000},  {"chain10000", 0, 10000}, {"chain33000", 0, 33000},
                  {"wide1000", 1, 1000},   {"cse500", 2, 500},       {"mlp", 3, 0}};
    setvbuf(stdout, NULL, _IOLBF, 0); /* one line at a time, also into a pipe */
    for (size_t i = 0; i < sizeof graphs / sizeof graphs[0]; i++) {
        bool want = argc < 2;
        for (int a = 1; a < argc; a++) want |= strcmp(argv[a], graphs[i].name) == 0;
        if (want) run(graphs[i].name, graphs[i].kind, graphs[i].n);
    }
    return 0;
}
