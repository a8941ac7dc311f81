/* The critical-path model of the inplace rewrite (docs/rewrites.md §6.6).
 *
 * Built once per run, at the first candidate that adds orderings, over the
 * fgraph's nodes (data edges plus the features' orderings), each weighted
 * by its cost (weft_fgraph_node_cost): top[s] is
 * the longest path ending with node s, bot[s] the longest starting with it,
 * both counting s. Making node n destroy an input adds edges r -> n for its
 * D4 readers r, and a new path uses at most one of them (all end in n), so
 * the critical path afterwards is exactly max(cp, max_r top[r] + bot[n]):
 * one look-up per reader. An accepted replacement adds its edges and pushes
 * the raised top / bot values along successors / predecessors only as far
 * as they change, so the model stays exact at a cost proportional to the
 * region whose longest paths moved.
 *
 * Nodes are numbered by their position in the initial toposort (a slot); a
 * replacement node takes its predecessor's slot (same inputs, same clients). */
#include <stdlib.h>
#include <string.h>

#include "rewrite_int.h"
#include "weft/node_cost.h"

#define CP_NONE UINT32_MAX

struct weft__cp {
    weft_fgraph_t *fg;
    uint32_t n;
    double *cost, *top, *bot;
    double cp0, cp, budget; /* the initial critical path, the current one, the allowed one */
    uint32_t *slot_of;      /* apply id -> slot (CP_NONE: not a node of the model) */
    size_t n_ids;
    /* the initial edges as adjacency lists: succ/pred of s at [off[s], off[s+1]) */
    uint32_t *succ_off, *succ, *pred_off, *pred;
    /* edges added by accepted replacements, chained per node */
    uint32_t *xs_head, *xp_head; /* first added successor / predecessor edge of s */
    struct cp_edge {
        uint32_t from, to, s_next, p_next;
    } *x;
    size_t n_x, cap_x;
    uint32_t *queue; /* n + 1 entries, a ring */
    bool *queued;
};

void weft__cp_destroy(weft__cp_t *cp)
{
    if (!cp) return;
    free(cp->cost), free(cp->top), free(cp->bot), free(cp->slot_of);
    free(cp->succ_off), free(cp->succ), free(cp->pred_off), free(cp->pred);
    free(cp->xs_head), free(cp->xp_head);
    free(cp->x);
    free(cp->queue), free(cp->queued);
    free(cp);
}

static uint32_t cp_slot(const weft__cp_t *cp, const weft_apply_t *a)
{
    uint64_t id = weft_apply_id(a);
    return id < cp->n_ids ? cp->slot_of[id] : CP_NONE;
}

/* The initial edges (from, to) as slot pairs into *e: data, then orderings. */
static weft_status_t collect_edges(weft__cp_t *cp, weft_apply_t *const *order, uint32_t **e,
                                   size_t *ne)
{
    weft_apply_t *const *before, *const *after;
    size_t n_ord, cap = 0, k = 0;
    weft_status_t st = weft_fgraph_orderings(cp->fg, &before, &after, &n_ord);
    for (uint32_t s = 0; st == WEFT_OK && s < cp->n; s++) {
        for (size_t i = 0; i < weft_apply_n_inputs(order[s]); i++) {
            const weft_apply_t *p = weft_var_owner(weft_apply_input(order[s], i));
            uint32_t ps = p ? cp_slot(cp, p) : CP_NONE;
            if (ps == CP_NONE) continue;
            if (!weft__vec_reserve(NULL, (void **)e, &cap, 2 * k + 2, sizeof **e))
                return WEFT_ENOMEM;
            (*e)[2 * k] = ps, (*e)[2 * k + 1] = s, k++;
        }
    }
    for (size_t o = 0; st == WEFT_OK && o < n_ord; o++) {
        uint32_t a = cp_slot(cp, before[o]), b = cp_slot(cp, after[o]);
        if (a == CP_NONE || b == CP_NONE) continue;
        if (!weft__vec_reserve(NULL, (void **)e, &cap, 2 * k + 2, sizeof **e)) return WEFT_ENOMEM;
        (*e)[2 * k] = a, (*e)[2 * k + 1] = b, k++;
    }
    *ne = k;
    return st;
}

/* Adjacency lists from the pairs: side 0 groups by source, side 1 by target. */
static weft_status_t build_csr(uint32_t n, const uint32_t *e, size_t ne, int side,
                               uint32_t **off, uint32_t **adj)
{
    *off = calloc((size_t)n + 2, sizeof **off);
    *adj = weft__vec_malloc(ne + 1, sizeof **adj);
    if (!*off || !*adj) return WEFT_ENOMEM;
    for (size_t k = 0; k < ne; k++) (*off)[e[2 * k + side] + 2]++;
    for (uint32_t s = 0; s < n; s++) (*off)[s + 2] += (*off)[s + 1];
    for (size_t k = 0; k < ne; k++) (*adj)[(*off)[e[2 * k + side] + 1]++] = e[2 * k + 1 - side];
    return WEFT_OK;
}

static double max2(double a, double b)
{
    return a > b ? a : b;
}

/* top in topological order, bot in reverse; cp the largest top. */
static void longest_paths(weft__cp_t *cp)
{
    cp->cp = 0;
    for (uint32_t s = 0; s < cp->n; s++) {
        double t = 0;
        for (uint32_t k = cp->pred_off[s]; k < cp->pred_off[s + 1]; k++)
            t = max2(t, cp->top[cp->pred[k]]);
        cp->top[s] = t + cp->cost[s];
        cp->cp = max2(cp->cp, cp->top[s]);
    }
    for (uint32_t s = cp->n; s-- > 0;) {
        double b = 0;
        for (uint32_t k = cp->succ_off[s]; k < cp->succ_off[s + 1]; k++)
            b = max2(b, cp->bot[cp->succ[k]]);
        cp->bot[s] = b + cp->cost[s];
    }
}

static weft_status_t cp_alloc(weft__cp_t *cp, size_t n, size_t n_ids)
{
    cp->n = (uint32_t)n;
    cp->n_ids = n_ids;
    cp->cost = weft__vec_malloc(n + 1, sizeof *cp->cost);
    cp->top = weft__vec_malloc(n + 1, sizeof *cp->top);
    cp->bot = weft__vec_malloc(n + 1, sizeof *cp->bot);
    cp->slot_of = weft__vec_malloc(n_ids + 1, sizeof *cp->slot_of);
    cp->xs_head = weft__vec_malloc(n + 1, sizeof *cp->xs_head);
    cp->xp_head = weft__vec_malloc(n + 1, sizeof *cp->xp_head);
    cp->queue = weft__vec_malloc(n + 1, sizeof *cp->queue);
    cp->queued = calloc(n + 1, sizeof *cp->queued);
    if (!cp->cost || !cp->top || !cp->bot || !cp->slot_of || !cp->xs_head || !cp->xp_head ||
        !cp->queue || !cp->queued)
        return WEFT_ENOMEM;
    memset(cp->slot_of, 0xff, (n_ids + 1) * sizeof *cp->slot_of);
    memset(cp->xs_head, 0xff, (n + 1) * sizeof *cp->xs_head);
    memset(cp->xp_head, 0xff, (n + 1) * sizeof *cp->xp_head);
    return WEFT_OK;
}

/* Slots, costs (measured for a node whose key has one, else estimated). */
static weft_status_t cp_nodes(weft__cp_t *cp, weft_apply_t *const *order)
{
    uint64_t *keys = weft__vec_malloc(cp->n_ids + 1, sizeof *keys);
    if (!keys) return WEFT_ENOMEM;
    weft_status_t st = weft_fgraph_node_keys(cp->fg, cp->n_ids, keys);
    for (uint32_t s = 0; st == WEFT_OK && s < cp->n; s++) {
        cp->slot_of[weft_apply_id(order[s])] = s;
        cp->cost[s] = weft_fgraph_node_cost(cp->fg, order[s], keys[weft_apply_id(order[s])]);
    }
    free(keys);
    return st;
}

weft_status_t weft__cp_create(weft_fgraph_t *fg, double slack, weft__cp_t **out)
{
    weft_apply_t *const *order;
    size_t n, ne = 0;
    *out = NULL;
    weft_status_t st = weft_fgraph_toposort(fg, &order, &n);
    if (st != WEFT_OK) return st;
    if (n >= CP_NONE) return WEFT_OK; /* no model: every replacement allowed */
    weft__cp_t *cp = calloc(1, sizeof *cp);
    if (!cp) return WEFT_ENOMEM;
    cp->fg = fg;
    uint32_t *e = NULL;
    st = cp_alloc(cp, n, weft_graph_n_applies(weft_fgraph_graph(fg)));
    if (st == WEFT_OK) st = cp_nodes(cp, order);
    if (st == WEFT_OK) st = collect_edges(cp, order, &e, &ne);
    if (st == WEFT_OK) st = build_csr(cp->n, e, ne, 0, &cp->succ_off, &cp->succ);
    if (st == WEFT_OK) st = build_csr(cp->n, e, ne, 1, &cp->pred_off, &cp->pred);
    free(e);
    if (st != WEFT_OK) {
        weft__cp_destroy(cp);
        return st;
    }
    longest_paths(cp);
    cp->cp0 = cp->cp;
    cp->budget = cp->cp0 * (1.0 + slack);
    *out = cp;
    return WEFT_OK;
}

/* The critical path if node were ordered after the readers (infinite when
 * one of them is unknown to the model). */
static double cp_with(const weft__cp_t *cp, const weft_apply_t *node, size_t n_rd,
                      weft_apply_t *const *rd)
{
    uint32_t s = cp_slot(cp, node);
    if (s == CP_NONE) return n_rd ? 1e300 : cp->cp;
    double worst = cp->cp;
    for (size_t k = 0; k < n_rd; k++) {
        uint32_t r = cp_slot(cp, rd[k]);
        if (r == CP_NONE) return 1e300;
        worst = max2(worst, cp->top[r] + cp->bot[s]);
    }
    return worst;
}

bool weft__cp_allows(const weft__cp_t *cp, const weft_apply_t *node, size_t n_rd,
                     weft_apply_t *const *rd)
{
    /* relative 1e-12: sums of the same costs added in another order */
    return !cp || n_rd == 0 || cp_with(cp, node, n_rd, rd) <= cp->budget * (1 + 1e-12);
}

static weft_status_t add_edge(weft__cp_t *cp, uint32_t from, uint32_t to)
{
    size_t k = cp->n_x;
    if (!weft__vec_reserve(NULL, (void **)&cp->x, &cp->cap_x, k + 1, sizeof *cp->x))
        return WEFT_ENOMEM;
    cp->x[k] = (struct cp_edge){from, to, cp->xs_head[from], cp->xp_head[to]};
    cp->xs_head[from] = cp->xp_head[to] = (uint32_t)k;
    cp->n_x++;
    return WEFT_OK;
}

/* Raises v[t] to base + cost[t] when larger, queueing t. */
static void cp_raise(weft__cp_t *cp, double *v, uint32_t t, double base, uint32_t *tail)
{
    double c = base + cp->cost[t];
    if (c <= v[t]) return;
    v[t] = c;
    if (cp->queued[t]) return;
    cp->queued[t] = true;
    cp->queue[*tail] = t;
    *tail = (*tail + 1) % (cp->n + 1);
}

/* Pushes raised values of the queued slots on: forward (top, successors) or
 * backward (bot, predecessors), starting from the ring's slot 0. The DAG has
 * no cycle, so it ends. */
static void propagate(weft__cp_t *cp, bool forward, uint32_t tail)
{
    double *v = forward ? cp->top : cp->bot;
    const uint32_t *off = forward ? cp->succ_off : cp->pred_off;
    const uint32_t *adj = forward ? cp->succ : cp->pred, *xh = forward ? cp->xs_head : cp->xp_head;
    for (uint32_t head = 0; head != tail;) {
        uint32_t u = cp->queue[head];
        head = (head + 1) % (cp->n + 1);
        cp->queued[u] = false;
        for (uint32_t k = off[u]; k < off[u + 1]; k++) cp_raise(cp, v, adj[k], v[u], &tail);
        for (uint32_t k = xh[u]; k != CP_NONE;) {
            const struct cp_edge *e = &cp->x[k];
            cp_raise(cp, v, forward ? e->to : e->from, v[u], &tail);
            k = forward ? e->s_next : e->p_next;
        }
    }
}

static weft_status_t set_slot(weft__cp_t *cp, const weft_apply_t *nn, uint32_t s)
{
    uint64_t id = weft_apply_id(nn);
    if (id >= cp->n_ids) {
        size_t cap = cp->n_ids + 1;
        if (!weft__vec_reserve(NULL, (void **)&cp->slot_of, &cap, id + 2, sizeof *cp->slot_of))
            return WEFT_ENOMEM;
        memset(cp->slot_of + cp->n_ids, 0xff, (cap - cp->n_ids) * sizeof *cp->slot_of);
        cp->n_ids = cap - 1;
    }
    cp->slot_of[id] = s;
    return WEFT_OK;
}

weft_status_t weft__cp_accept(weft__cp_t *cp, const weft_apply_t *node, const weft_apply_t *nn,
                              size_t n_rd, weft_apply_t *const *rd)
{
    uint32_t s = cp ? cp_slot(cp, node) : CP_NONE;
    if (s == CP_NONE) return WEFT_OK;
    weft_status_t st = set_slot(cp, nn, s);
    if (st != WEFT_OK || n_rd == 0) return st;
    cp->cp = cp_with(cp, node, n_rd, rd);
    for (size_t k = 0; k < n_rd && st == WEFT_OK; k++) st = add_edge(cp, cp_slot(cp, rd[k]), s);
    if (st != WEFT_OK) return st;
    uint32_t tail = 0;
    for (size_t k = 0; k < n_rd; k++) cp_raise(cp, cp->top, s, cp->top[cp_slot(cp, rd[k])], &tail);
    propagate(cp, true, tail);
    tail = 0;
    for (size_t k = 0; k < n_rd; k++) cp_raise(cp, cp->bot, cp_slot(cp, rd[k]), cp->bot[s], &tail);
    propagate(cp, false, tail);
    return WEFT_OK;
}

double weft__cp_length(const weft__cp_t *cp, bool initial)
{
    return !cp ? 0 : initial ? cp->cp0 : cp->cp;
}
