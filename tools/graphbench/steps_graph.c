/* Graph core steps of weft-graph-bench: build (random DAG), fgraph
 * (FunctionGraph construction with clone), toposort (with a feature that
 * supplies orderings), replace (10% of the nodes, each by a new equivalent
 * node). Also the shared context helpers and the bench's own small ops. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graphbench.h"

#define WINDOW 1000 /* inputs are drawn from the previous WINDOW variables */
#define N_ORDERINGS 16

/* Process CPU time: every step is single-threaded, so on an idle machine this
 * equals wall time, and on a shared, loaded machine (the 2-core CI box) it
 * does not count the time other processes hold the cores. */
int gb_cold = 1;

void gb_flush_caches(void)
{
    static unsigned char *junk;
    enum { JUNK_BYTES = 96 << 20 }; /* 3x a 32 MB L3 */
    if (!gb_cold) return;
    if (!junk && !(junk = malloc(JUNK_BYTES))) return;
    for (size_t i = 0; i < JUNK_BYTES; i += 64) junk[i] = (unsigned char)(junk[i] + 1);
}

double gb_now_ns(void)
{
    return (double)clock() * (1e9 / (double)CLOCKS_PER_SEC);
}

uint64_t gb_rand(gb_ctx_t *c)
{
    c->rng ^= c->rng << 13;
    c->rng ^= c->rng >> 7;
    c->rng ^= c->rng << 17;
    return c->rng;
}

/* ---- ops: same type in, same type out --------------------------------------- */

static weft_status_t same_type(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                               weft_var_t *const *in, size_t *n_out, const weft_type_t **out,
                               size_t want)
{
    if (n_in != want)
        return weft_graph_set_error(g, WEFT_EINVAL, "%s takes %zu inputs", weft_op_name(op), want);
    for (size_t i = 1; i < n_in; i++)
        if (!weft_type_equal(weft_var_type(in[i]), weft_var_type(in[0])))
            return weft_graph_set_error(g, WEFT_ETYPE, "input %zu type differs", i);
    *n_out = 1;
    out[0] = weft_var_type(in[0]);
    return WEFT_OK;
}

static weft_status_t unary_make(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                weft_var_t *const *in, size_t *n_out, const weft_type_t **out)
{
    return same_type(g, op, n_in, in, n_out, out, 1);
}

static weft_status_t binary_make(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                 weft_var_t *const *in, size_t *n_out, const weft_type_t **out)
{
    return same_type(g, op, n_in, in, n_out, out, 2);
}

static const weft_op_class_t op_classes[4] = {
    {.size = sizeof(weft_op_class_t), .name = "Exp", .make_node = unary_make},
    {.size = sizeof(weft_op_class_t), .name = "Neg", .make_node = unary_make},
    {.size = sizeof(weft_op_class_t), .name = "Add", .make_node = binary_make},
    {.size = sizeof(weft_op_class_t), .name = "Mul", .make_node = binary_make},
};

static int fail(const char *what, weft_status_t s, const char *msg)
{
    fprintf(stderr, "weft-graph-bench: %s: %s: %s\n", what, weft_status_name(s), msg);
    return 1;
}

void gb_ctx_fini(gb_ctx_t *c)
{
    weft_fgraph_destroy(c->fg);
    weft_graph_destroy(c->g);
    free(c->vars);
    free(c->outputs);
    c->fg = NULL;
    c->g = NULL;
    c->vars = c->outputs = NULL;
}

static int ctx_init(gb_ctx_t *c)
{
    weft_status_t s = weft_graph_create(NULL, &c->g);
    if (s == WEFT_OK) s = weft_type_tensor(c->g, WEFT_FLOAT64, 1, NULL, &c->type);
    for (int k = 0; k < 4 && s == WEFT_OK; k++)
        s = weft_op_create(c->g, &op_classes[k], NULL, k < 2 ? &c->unary[k] : &c->binary[k - 2]);
    for (int k = 0; k < 4 && s == WEFT_OK; k++)
        s = ((c->inputs[k] = weft_var_create(c->g, c->type, "in")) ? WEFT_OK
                                                                   : weft_graph_error(c->g));
    c->vars = malloc(c->n * sizeof(*c->vars));
    if (s != WEFT_OK || !c->vars) return fail("setup", s, c->g ? weft_graph_last_error(c->g) : "");
    return 0;
}

/* A variable among the previous WINDOW (inputs count before node 0). */
static weft_var_t *pick(gb_ctx_t *c, uint64_t *rng, size_t k)
{
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    size_t avail = k + 4 < WINDOW ? k + 4 : WINDOW;
    size_t j = k + 4 - 1 - (size_t)(*rng % avail);
    return j < 4 ? c->inputs[j] : c->vars[j - 4];
}

/* The DAG (timed by the build step): 1-2 inputs per node, seeded. */
static int build_dag(gb_ctx_t *c)
{
    uint64_t rng = c->seed * 0x2545f4914f6cdd1dull + 7;
    for (size_t k = 0; k < c->n; k++) {
        weft_var_t *in[2] = {pick(c, &rng, k), pick(c, &rng, k)};
        bool binary = (rng >> 20) & 1;
        const weft_op_t *op = binary ? c->binary[(rng >> 21) & 1] : c->unary[(rng >> 21) & 1];
        weft_status_t s =
            ((c->vars[k] = weft_op_call(c->g, op, binary ? 2 : 1, in)) ? WEFT_OK
                                                                       : weft_graph_error(c->g));
        if (s != WEFT_OK) return fail("build", s, weft_graph_last_error(c->g));
    }
    return 0;
}

/* Sinks of the DAG (untimed bookkeeping): they become the fgraph outputs. */
static int find_outputs(gb_ctx_t *c)
{
    size_t nv = weft_graph_n_vars(c->g);
    unsigned char *used = calloc(nv, 1);
    c->outputs = malloc(c->n * sizeof(*c->outputs));
    if (!used || !c->outputs) {
        free(used);
        return fail("outputs", WEFT_ENOMEM, "");
    }
    for (size_t k = 0; k < c->n; k++) {
        weft_apply_t *a = weft_var_owner(c->vars[k]);
        for (size_t i = 0; i < weft_apply_n_inputs(a); i++)
            used[weft_var_id(weft_apply_input(a, i))] = 1;
    }
    c->n_outputs = 0;
    for (size_t k = 0; k < c->n; k++)
        if (!used[weft_var_id(c->vars[k])]) c->outputs[c->n_outputs++] = c->vars[k];
    free(used);
    return 0;
}

int gb_need_graph(gb_ctx_t *c)
{
    if (c->g) return 0;
    if (ctx_init(c) || build_dag(c)) return 1;
    return find_outputs(c);
}

static int make_fgraph(gb_ctx_t *c)
{
    weft_fgraph_options_t o = WEFT_FGRAPH_OPTIONS_INIT; /* clone = true */
    weft_status_t s =
        weft_fgraph_create(c->g, 4, c->inputs, c->n_outputs, c->outputs, &o, NULL, &c->fg);
    return s == WEFT_OK ? 0 : fail("fgraph", s, weft_graph_last_error(c->g));
}

int gb_need_fgraph(gb_ctx_t *c)
{
    if (c->fg) return 0;
    return gb_need_graph(c) || make_fgraph(c);
}

/* ---- steps -------------------------------------------------------------------- */

static int step_build(gb_ctx_t *c, double *ns)
{
    gb_ctx_fini(c);
    if (ctx_init(c)) return 1;
    gb_flush_caches();
    double t0 = gb_now_ns();
    int rc = build_dag(c);
    *ns = gb_now_ns() - t0;
    return rc || find_outputs(c);
}

static int step_fgraph(gb_ctx_t *c, double *ns)
{
    if (gb_need_graph(c)) return 1;
    weft_fgraph_destroy(c->fg);
    c->fg = NULL;
    gb_flush_caches();
    double t0 = gb_now_ns();
    int rc = make_fgraph(c);
    *ns = gb_now_ns() - t0;
    return rc;
}

/* A feature supplying N_ORDERINGS pairs. The clone's apply ids follow a
 * topological order, so "lower id before higher id" never closes a cycle. */
typedef struct ord_feature {
    weft_feature_t base;
    weft_apply_t *before[N_ORDERINGS], *after[N_ORDERINGS];
} ord_feature_t;

static weft_status_t ord_orderings(weft_feature_t *self, weft_fgraph_t *fg, weft_orderings_t *o)
{
    ord_feature_t *f = (ord_feature_t *)self;
    for (int k = 0; k < N_ORDERINGS; k++) {
        if (!weft_fgraph_contains_apply(fg, f->before[k]) ||
            !weft_fgraph_contains_apply(fg, f->after[k]))
            continue;
        weft_status_t s = weft_orderings_add(o, f->before[k], f->after[k]);
        if (s != WEFT_OK) return s;
    }
    return WEFT_OK;
}

static void ord_destroy(weft_feature_t *self)
{
    free(self);
}

static const weft_feature_class_t ord_class = {
    .size = sizeof(weft_feature_class_t),
    .name = "BenchOrderings",
    .orderings = ord_orderings,
    .destroy = ord_destroy,
};

static int attach_orderings(gb_ctx_t *c)
{
    if (weft_fgraph_find_feature(c->fg, &ord_class)) return 0;
    ord_feature_t *f = calloc(1, sizeof(*f));
    if (!f) return fail("toposort", WEFT_ENOMEM, "");
    f->base.cls = &ord_class;
    weft_apply_t *const *nodes;
    size_t n;
    weft_fgraph_applies(c->fg, &nodes, &n);
    for (int k = 0; k < N_ORDERINGS; k++) {
        size_t i = gb_rand(c) % n, j = gb_rand(c) % n;
        if (i == j) j = (i + 1) % n;
        weft_apply_t *a = nodes[i], *b = nodes[j];
        int lt = weft_apply_id(a) < weft_apply_id(b);
        f->before[k] = lt ? a : b;
        f->after[k] = lt ? b : a;
    }
    weft_status_t s = weft_fgraph_attach_feature(c->fg, &f->base);
    return s == WEFT_OK ? 0 : fail("toposort", s, weft_fgraph_last_error(c->fg));
}

static int step_toposort(gb_ctx_t *c, double *ns)
{
    if (gb_need_fgraph(c) || attach_orderings(c)) return 1;
    double best = 0;
    for (int rep = 0; rep < 3; rep++) { /* best of 3: the first run warms the scratch arrays */
        weft_apply_t *const *order;
        size_t n;
        gb_flush_caches();
        double t0 = gb_now_ns();
        weft_status_t s = weft_fgraph_toposort(c->fg, &order, &n);
        double t = gb_now_ns() - t0;
        if (s != WEFT_OK) return fail("toposort", s, weft_fgraph_last_error(c->fg));
        if (n != weft_fgraph_n_applies(c->fg))
            return fail("toposort", WEFT_EINCONSISTENT, "not every node sorted");
        if (rep == 0 || t < best) best = t;
    }
    *ns = best;
    return 0;
}

/* 10% of the nodes, each replaced by a new node with the same op and inputs:
 * every 10th node of the toposort, the order in which rewriters walk a graph
 * (the sort itself is not timed). */
static int step_replace(gb_ctx_t *c, double *ns)
{
    if (gb_need_fgraph(c)) return 1;
    weft_apply_t *const *nodes;
    size_t n, k_max = c->n / 10;
    weft_status_t st = weft_fgraph_toposort(c->fg, &nodes, &n);
    if (st != WEFT_OK) return fail("replace", st, weft_fgraph_last_error(c->fg));
    weft_apply_t **pick_nodes = malloc((k_max + 1) * sizeof(*pick_nodes));
    if (!pick_nodes) return fail("replace", WEFT_ENOMEM, "");
    k_max = k_max < n / 10 ? k_max : n / 10;
    for (size_t k = 0; k < k_max; k++) pick_nodes[k] = nodes[k * 10 + gb_rand(c) % 10];
    gb_flush_caches();
    double t0 = gb_now_ns();
    weft_status_t s = WEFT_OK;
    for (size_t k = 0; k < k_max && s == WEFT_OK; k++) {
        weft_apply_t *a = pick_nodes[k];
        if (!weft_fgraph_contains_apply(c->fg, a)) continue; /* picked twice */
        weft_var_t *in[2] = {weft_apply_input(a, 0), weft_apply_input(a, 1)}, *nv;
        s = ((nv = weft_op_call(c->g, weft_apply_op(a), weft_apply_n_inputs(a), in))
                 ? WEFT_OK
                 : weft_graph_error(c->g));
        if (s == WEFT_OK) s = weft_fgraph_replace(c->fg, weft_apply_output(a, 0), nv, "bench");
    }
    *ns = gb_now_ns() - t0;
    free(pick_nodes);
    if (s != WEFT_OK) return fail("replace", s, weft_fgraph_last_error(c->fg));
    return 0;
}

static const gb_step_t steps[] = {
    {"build", step_build},
    {"fgraph", step_fgraph},
    {"toposort", step_toposort},
    {"replace", step_replace},
};

const gb_step_table_t gb_graph_steps = {steps, sizeof(steps) / sizeof(steps[0])};
