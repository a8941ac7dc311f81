/* DestroyHandler steps of weft-graph-bench: dh_attach (attach a DH to an
 * fgraph of n nodes: the scan of every node), dh_validate (validate after a
 * replace: lazy rebuild of the derived maps plus the D5 cycle check),
 * dh_orderings (the DH's part of the next step alone) and dh_toposort
 * (toposort after a replace, with the DH's orderings).
 *
 * The graph: the same kind of seeded random DAG as the graph steps (1-2
 * inputs from the previous 1000 variables), with 10% of the nodes destroying
 * input 0 in place and 10% views of their input. It is built valid: a
 * destroyed root and its views are never read by later nodes (they would have
 * to run before the destroyer they depend on), and a destroyer's other input
 * never shares its root, so D1, D3 and D5 hold and every step validates. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graphbench.h"
#include "weft/destroy.h"

#define DH_WINDOW 1000

typedef struct dh_bench {
    size_t n;
    weft_graph_t *g;
    const weft_op_t *pure[2], *view, *inplace[2];
    weft_var_t *inputs[4];
    weft_var_t **vars;   /* node outputs in creation order */
    weft_var_t **roots;  /* per var id: its view root */
    unsigned char *dead; /* per var id (roots): destroyed */
    weft_fgraph_t *fg;
} dh_bench_t;

static dh_bench_t B;

static int dh_fail(const char *what, weft_status_t s, const char *msg)
{
    fprintf(stderr, "weft-graph-bench: %s: %s: %s\n", what, weft_status_name(s), msg);
    return 1;
}

static weft_status_t dh_make(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                             weft_var_t *const *in, size_t *n_out, const weft_type_t **out)
{
    (void)g;
    (void)op;
    (void)n_in;
    *n_out = 1;
    out[0] = weft_var_type(in[0]);
    return WEFT_OK;
}

static size_t dh_map00(const weft_op_t *op, weft_op_alias_t *out, size_t cap)
{
    (void)op;
    if (cap > 0) out[0] = (weft_op_alias_t){0, 0};
    return 1;
}

static const weft_op_class_t dh_classes[5] = {
    {.size = sizeof(weft_op_class_t), .name = "Exp", .make_node = dh_make},
    {.size = sizeof(weft_op_class_t), .name = "Add", .make_node = dh_make},
    {.size = sizeof(weft_op_class_t), .name = "View", .make_node = dh_make, .view_map = dh_map00},
    {.size = sizeof(weft_op_class_t),
     .name = "ExpInPlace",
     .make_node = dh_make,
     .destroy_map = dh_map00},
    {.size = sizeof(weft_op_class_t),
     .name = "AddInPlace",
     .make_node = dh_make,
     .destroy_map = dh_map00},
};

static void dh_bench_free(void)
{
    weft_fgraph_destroy(B.fg);
    weft_graph_destroy(B.g);
    free(B.vars);
    free(B.roots);
    free(B.dead);
    memset(&B, 0, sizeof B);
}

static weft_var_t *dh_root(weft_var_t *v)
{
    return B.roots[weft_var_id(v)];
}

static bool dh_live(weft_var_t *v, weft_var_t *avoid)
{
    weft_var_t *r = dh_root(v);
    return !B.dead[weft_var_id(r)] && r != avoid;
}

/* A live variable among the previous DH_WINDOW (not of a destroyed root, and
 * not sharing the root `avoid`), or NULL when none is found. */
static weft_var_t *dh_pick(gb_ctx_t *c, size_t k, weft_var_t *avoid)
{
    size_t avail = k + 4 < DH_WINDOW ? k + 4 : DH_WINDOW;
    for (int tries = 0; tries < 8; tries++) {
        size_t j = k + 4 - 1 - (size_t)(gb_rand(c) % avail);
        weft_var_t *v = j < 4 ? B.inputs[j] : B.vars[j - 4];
        if (dh_live(v, avoid)) return v;
    }
    for (size_t j = k + 4; j-- > 0 && j + 64 > k + 4;) {
        weft_var_t *v = j < 4 ? B.inputs[j] : B.vars[j - 4];
        if (dh_live(v, avoid)) return v;
    }
    return NULL;
}

static int dh_node(gb_ctx_t *c, size_t k)
{
    uint64_t r = gb_rand(c) % 10;
    bool destroy = r == 0, view = r == 1, binary = !view && ((gb_rand(c) >> 20) & 1);
    weft_var_t *in[2] = {dh_pick(c, k, NULL), NULL};
    if (!in[0]) return dh_fail("dh build", WEFT_ENOTFOUND, "no live variable");
    if (binary) in[1] = dh_pick(c, k, destroy ? dh_root(in[0]) : NULL);
    if (!in[1]) binary = false;
    const weft_op_t *op = view ? B.view : destroy ? B.inplace[binary] : B.pure[binary];
    weft_status_t s =
        ((B.vars[k] = weft_op_call(B.g, op, binary ? 2 : 1, in)) ? WEFT_OK : weft_graph_error(B.g));
    if (s != WEFT_OK) return dh_fail("dh build", s, weft_graph_last_error(B.g));
    B.roots[weft_var_id(B.vars[k])] = view ? dh_root(in[0]) : B.vars[k];
    if (destroy) B.dead[weft_var_id(dh_root(in[0]))] = 1;
    return 0;
}

/* Sinks become the outputs; the fgraph has no DH yet. */
static int dh_make_fgraph(void)
{
    size_t nv = weft_graph_n_vars(B.g), n_out = 0;
    unsigned char *used = calloc(nv, 1);
    weft_var_t **outs = malloc(B.n * sizeof *outs);
    if (!used || !outs) {
        free(used);
        free(outs);
        return dh_fail("dh fgraph", WEFT_ENOMEM, "");
    }
    for (size_t k = 0; k < B.n; k++) {
        weft_apply_t *a = weft_var_owner(B.vars[k]);
        for (size_t i = 0; i < weft_apply_n_inputs(a); i++)
            used[weft_var_id(weft_apply_input(a, i))] = 1;
    }
    for (size_t k = 0; k < B.n; k++)
        if (!used[weft_var_id(B.vars[k])]) outs[n_out++] = B.vars[k];
    weft_fgraph_options_t o = WEFT_FGRAPH_OPTIONS_INIT;
    o.clone = false;
    weft_status_t s = weft_fgraph_create(B.g, 4, B.inputs, n_out, outs, &o, NULL, &B.fg);
    free(used);
    free(outs);
    return s == WEFT_OK ? 0 : dh_fail("dh fgraph", s, weft_graph_last_error(B.g));
}

static int dh_need(gb_ctx_t *c)
{
    static bool registered;
    if (!registered) registered = atexit(dh_bench_free) == 0;
    if (B.g && B.n == c->n) return 0;
    dh_bench_free();
    B.n = c->n;
    weft_status_t s = weft_graph_create(NULL, &B.g);
    const weft_type_t *t = NULL;
    if (s == WEFT_OK) s = weft_type_tensor(B.g, WEFT_FLOAT64, 1, NULL, &t);
    const weft_op_t **slots[5] = {&B.pure[0], &B.pure[1], &B.view, &B.inplace[0], &B.inplace[1]};
    for (int k = 0; k < 5 && s == WEFT_OK; k++)
        s = weft_op_create(B.g, &dh_classes[k], NULL, slots[k]);
    for (int k = 0; k < 4 && s == WEFT_OK; k++)
        s = ((B.inputs[k] = weft_var_create(B.g, t, "in")) ? WEFT_OK : weft_graph_error(B.g));
    size_t nv = weft_graph_n_vars(B.g) + B.n;
    B.vars = malloc(B.n * sizeof *B.vars);
    B.roots = calloc(nv, sizeof *B.roots);
    B.dead = calloc(nv, 1);
    if (s != WEFT_OK || !B.vars || !B.roots || !B.dead) return dh_fail("dh setup", s, "");
    for (int k = 0; k < 4; k++) B.roots[weft_var_id(B.inputs[k])] = B.inputs[k];
    for (size_t k = 0; k < B.n; k++) {
        if (dh_node(c, k)) return 1;
    }
    return dh_make_fgraph();
}

static int dh_ensure_attached(void)
{
    weft_status_t s = weft_dh_attach(B.fg, NULL);
    return s == WEFT_OK ? 0 : dh_fail("dh attach", s, weft_fgraph_last_error(B.fg));
}

/* Replaces one random pure node by an equivalent new one (untimed). */
static int dh_replace_one(gb_ctx_t *c)
{
    for (;;) {
        weft_var_t *v = B.vars[gb_rand(c) % B.n];
        weft_apply_t *a = weft_var_owner(v);
        const weft_op_t *op = weft_apply_op(a);
        if (op != B.pure[0] && op != B.pure[1]) continue;
        if (!weft_fgraph_contains_apply(B.fg, a)) continue;
        weft_var_t *in[2] = {weft_apply_input(a, 0), weft_apply_input(a, 1)}, *nv;
        weft_status_t s =
            ((nv = weft_op_call(B.g, op, weft_apply_n_inputs(a), in)) ? WEFT_OK
                                                                      : weft_graph_error(B.g));
        if (s == WEFT_OK) s = weft_fgraph_replace(B.fg, v, nv, "bench");
        if (s != WEFT_OK) return dh_fail("dh replace", s, weft_fgraph_last_error(B.fg));
        return 0;
    }
}

static int step_dh_attach(gb_ctx_t *c, double *ns)
{
    if (dh_need(c)) return 1;
    weft_feature_t *f = weft_fgraph_find_feature(B.fg, &weft_dh_class);
    if (f) weft_fgraph_remove_feature(B.fg, f);
    gb_flush_caches();
    double t0 = gb_now_ns();
    int rc = dh_ensure_attached();
    *ns = gb_now_ns() - t0;
    return rc;
}

static int step_dh_validate(gb_ctx_t *c, double *ns)
{
    if (dh_need(c) || dh_ensure_attached()) return 1;
    double best = 0;
    for (int rep = 0; rep < 5; rep++) {
        if (dh_replace_one(c)) return 1;
        gb_flush_caches();
        double t0 = gb_now_ns();
        weft_status_t s = weft_fgraph_validate(B.fg);
        double t = gb_now_ns() - t0;
        if (s != WEFT_OK) return dh_fail("dh validate", s, weft_fgraph_last_error(B.fg));
        if (rep == 0 || t < best) best = t;
    }
    *ns = best;
    return 0;
}

static int step_dh_toposort(gb_ctx_t *c, double *ns)
{
    if (dh_need(c) || dh_ensure_attached()) return 1;
    double best = 0;
    for (int rep = 0; rep < 3; rep++) {
        if (dh_replace_one(c)) return 1;
        weft_apply_t *const *order;
        size_t n;
        gb_flush_caches();
        double t0 = gb_now_ns();
        weft_status_t s = weft_fgraph_toposort(B.fg, &order, &n);
        double t = gb_now_ns() - t0;
        if (s != WEFT_OK) return dh_fail("dh toposort", s, weft_fgraph_last_error(B.fg));
        if (rep == 0 || t < best) best = t;
    }
    *ns = best;
    return 0;
}

/* The DH's share of dh_toposort: collecting the orderings after a replace
 * (the DH's lazy refresh plus its D4 pairs). */
static int step_dh_orderings(gb_ctx_t *c, double *ns)
{
    if (dh_need(c) || dh_ensure_attached()) return 1;
    double best = 0;
    for (int rep = 0; rep < 3; rep++) {
        if (dh_replace_one(c)) return 1;
        weft_apply_t *const *before, *const *after;
        size_t n;
        gb_flush_caches();
        double t0 = gb_now_ns();
        weft_status_t s = weft_fgraph_orderings(B.fg, &before, &after, &n);
        double t = gb_now_ns() - t0;
        if (s != WEFT_OK) return dh_fail("dh orderings", s, weft_fgraph_last_error(B.fg));
        if (rep == 0 || t < best) best = t;
    }
    *ns = best;
    return 0;
}

static const gb_step_t steps[] = {
    {"dh_attach", step_dh_attach},
    {"dh_validate", step_dh_validate},
    {"dh_orderings", step_dh_orderings},
    {"dh_toposort", step_dh_toposort},
};

const gb_step_table_t gb_destroy_steps = {steps, sizeof(steps) / sizeof(steps[0])};
