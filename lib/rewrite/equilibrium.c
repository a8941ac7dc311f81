/* The equilibrium driver (fixpoint of node, global, final and cleanup
 * rewriters, bounded by max_use_ratio) and the sequence of graph rewriters.
 *
 * Protocol per pass (docs/rewrites.md §1.4): globals, cleanups; then a walk
 * from the outputs (pop from the back of the toposort; imported nodes are
 * pushed at the back so they are seen next), running the cleanups after each
 * success and moving on when the node was replaced; then finals and
 * cleanups. A pass that changed nothing ends the loop. Any rewriter used more
 * than max_use_ratio * (largest node count seen) times ends it with
 * WEFT_ENOCONVERGE naming that rewriter. */
#include <stdlib.h>
#include <string.h>

#include "rewrite_int.h"

static bool list_valid(size_t n, weft_rewriter_t *const *rws, bool node_only)
{
    if (n > 0 && !rws) return false;
    for (size_t i = 0; i < n; i++)
        if (!rws[i] || (node_only && rws[i]->kind != RW_NODE)) return false;
    return true;
}

static void release_desc(const weft_equilibrium_desc_t *d)
{
    weft__rw_release_array(d->n_node, d->node);
    weft__rw_release_array(d->n_global, d->global);
    weft__rw_release_array(d->n_final, d->final);
    weft__rw_release_array(d->n_cleanup, d->cleanup);
}

weft_status_t weft_rewriter_equilibrium_create(const weft_equilibrium_desc_t *d,
                                               weft_rewriter_t **out)
{
    if (out) *out = NULL;
    if (!d || d->size < sizeof *d) return WEFT_EINVAL;
    bool ok = out && d->name && d->max_use_ratio >= 0 && list_valid(d->n_node, d->node, true) &&
              list_valid(d->n_global, d->global, false) &&
              list_valid(d->n_final, d->final, false) &&
              list_valid(d->n_cleanup, d->cleanup, false);
    weft_rewriter_t *rw = NULL;
    weft_status_t st = ok ? weft__rw_new(RW_EQUILIBRIUM, d->name, &rw) : WEFT_EINVAL;
    if (st != WEFT_OK) {
        release_desc(d);
        return st;
    }
    /* list_take only fails on ENOMEM here (validated above); whatever was not
     * taken yet is released with the desc's remaining arrays */
    weft__rw_list_t *lists[4] = {&rw->node, &rw->global, &rw->final, &rw->cleanup};
    size_t ns[4] = {d->n_node, d->n_global, d->n_final, d->n_cleanup};
    weft_rewriter_t *const *arrs[4] = {d->node, d->global, d->final, d->cleanup};
    for (int k = 0; k < 4; k++) {
        st = weft__rw_list_take(lists[k], ns[k], arrs[k]);
        if (st != WEFT_OK) {
            for (int j = k; j < 4; j++) weft__rw_release_array(ns[j], arrs[j]);
            weft_rewriter_release(rw);
            return st;
        }
    }
    rw->max_use_ratio = d->max_use_ratio > 0 ? d->max_use_ratio : 8.0;
    rw->ignore_newtrees = d->ignore_newtrees;
    *out = rw;
    return WEFT_OK;
}

/* Per-run state of one equilibrium apply. */
typedef struct eq_run {
    weft_rewriter_t *rw;
    weft_fgraph_t *fg;
    weft_rewrite_stats_t *stats;
    weft__tracker_t *tr;
    size_t *uses; /* node, global, final rewriters in that order */
    size_t max_nodes;
    bool changed;
    size_t total;
} eq_run_t;

static weft_status_t use(eq_run_t *r, size_t slot, weft_rewriter_t *which, size_t n)
{
    r->uses[slot] += n;
    r->total += n;
    size_t nn = weft_fgraph_n_applies(r->fg);
    if (nn > r->max_nodes) r->max_nodes = nn;
    double limit = r->rw->max_use_ratio * (double)(r->max_nodes ? r->max_nodes : 1);
    if ((double)r->uses[slot] <= limit) return WEFT_OK;
    return weft_fgraph_set_error(r->fg, WEFT_ENOCONVERGE,
                                 "%s: rewriter %s applied %zu times (limit %.0f = max_use_ratio "
                                 "%g x %zu nodes): no fixed point",
                                 r->rw->name, which->name, r->uses[slot], limit,
                                 r->rw->max_use_ratio, r->max_nodes);
}

static weft_status_t run_cleanups(eq_run_t *r)
{
    for (size_t k = 0; k < r->rw->cleanup.n; k++) {
        weft_status_t st = weft__rw_apply(r->rw->cleanup.items[k], r->fg, r->stats, NULL);
        if (st == WEFT_ENOMEM) return st;
    }
    return WEFT_OK;
}

/* Globals (base slot offset) or finals: each applied once; changes count. */
static weft_status_t run_list(eq_run_t *r, const weft__rw_list_t *list, size_t base)
{
    for (size_t k = 0; k < list->n; k++) {
        size_t n = 0;
        weft_status_t st = weft__rw_apply(list->items[k], r->fg, r->stats, &n);
        if (st == WEFT_ENOMEM || st == WEFT_ENOCONVERGE) return st;
        if (n == 0) continue;
        r->changed = true;
        st = use(r, base + k, list->items[k], n);
        if (st != WEFT_OK) return st;
    }
    return run_cleanups(r);
}

static weft_status_t node_pass(eq_run_t *r)
{
    weft_apply_t *const *order;
    size_t n, cap = 0;
    weft_status_t st = weft_fgraph_toposort(r->fg, &order, &n);
    if (st != WEFT_OK) return st;
    weft_apply_t **q = NULL;
    st = weft__vec_grow(NULL, (void **)&q, &cap, n + 1, sizeof *q) ? WEFT_OK : WEFT_ENOMEM;
    if (st == WEFT_OK && n) memcpy(q, order, n * sizeof *q);
    while (st == WEFT_OK && n > 0) {
        weft_apply_t *node = q[--n];
        if (!weft_fgraph_contains_apply(r->fg, node)) continue;
        size_t which;
        bool applied = true;
        /* after a success, keep trying on the node while it is still there */
        while (st == WEFT_OK && applied && weft_fgraph_contains_apply(r->fg, node)) {
            st = weft__try_node(&r->rw->node, r->fg, node, r->stats, &which, &applied);
            if (st != WEFT_OK || !applied) break;
            r->changed = true;
            st = use(r, which, r->rw->node.items[which], 1);
            if (st == WEFT_OK) st = run_cleanups(r);
        }
        if (st == WEFT_OK)
            st = weft__tracker_drain(r->tr, r->rw->ignore_newtrees ? NULL : &q, &n, &cap);
    }
    free(q);
    return st;
}

static weft_status_t eq_loop(eq_run_t *r, size_t *passes)
{
    weft_status_t st = WEFT_OK;
    r->changed = true;
    while (st == WEFT_OK && r->changed) {
        r->changed = false;
        ++*passes;
        st = run_list(r, &r->rw->global, r->rw->node.n);
        if (st == WEFT_OK) st = node_pass(r);
        if (st == WEFT_OK) st = run_list(r, &r->rw->final, r->rw->node.n + r->rw->global.n);
    }
    return st;
}

weft_status_t weft__equilibrium_apply(weft_rewriter_t *rw, weft_fgraph_t *fg,
                                      weft_rewrite_stats_t *stats, size_t *n_changes)
{
    uint64_t t0 = weft__now_ns();
    eq_run_t r = {rw, fg, stats, NULL, NULL, weft_fgraph_n_applies(fg), false, 0};
    size_t before = r.max_nodes, passes = 0;
    r.uses = calloc(rw->node.n + rw->global.n + rw->final.n + 1, sizeof *r.uses);
    if (!r.uses) return WEFT_ENOMEM;
    weft_status_t st = weft__tracker_attach(fg, &r.tr);
    if (st == WEFT_OK) st = eq_loop(&r, &passes);
    weft__tracker_detach(fg, r.tr);
    free(r.uses);
    *n_changes = r.total;
    if (st == WEFT_ENOMEM) return st;
    weft_status_t s2 =
        weft__stats_composite(stats, rw->name, weft__seconds_since(t0), passes, before,
                              weft_fgraph_n_applies(fg));
    return st != WEFT_OK ? st : s2;
}

/* ---- sequence ------------------------------------------------------------------ */

weft_status_t weft_rewriter_sequence_create(const char *name, size_t n,
                                            weft_rewriter_t *const *rewriters,
                                            weft_rewriter_t **out)
{
    if (out) *out = NULL;
    bool ok = name && out && list_valid(n, rewriters, false);
    weft_rewriter_t *rw = NULL;
    weft_status_t st = ok ? weft__rw_new(RW_SEQUENCE, name, &rw) : WEFT_EINVAL;
    if (st == WEFT_OK) st = weft__rw_list_take(&rw->node, n, rewriters);
    if (st != WEFT_OK) {
        weft__rw_release_array(n, rewriters);
        if (rw) rw->node.n = 0;
        weft_rewriter_release(rw);
        return st;
    }
    *out = rw;
    return WEFT_OK;
}

weft_status_t weft__sequence_apply(weft_rewriter_t *rw, weft_fgraph_t *fg,
                                   weft_rewrite_stats_t *stats, size_t *n_changes)
{
    uint64_t t0 = weft__now_ns();
    size_t before = weft_fgraph_n_applies(fg);
    weft_status_t first = WEFT_OK;
    char *msg = NULL; /* the first error's text, re-set at the end (later steps overwrite it) */
    for (size_t k = 0; k < rw->node.n; k++) {
        size_t n = 0;
        weft_status_t st = weft__rw_apply(rw->node.items[k], fg, stats, &n);
        if (st == WEFT_ENOMEM) {
            free(msg);
            return st;
        }
        if (st != WEFT_OK && first == WEFT_OK) {
            first = st;
            msg = weft__strdup(weft_fgraph_last_error(fg));
        }
        *n_changes += n;
    }
    if (first != WEFT_OK) weft_fgraph_set_error(fg, first, "%s", msg ? msg : "");
    free(msg);
    weft_status_t s2 = weft__stats_composite(stats, rw->name, weft__seconds_since(t0), 1, before,
                                             weft_fgraph_n_applies(fg));
    return first != WEFT_OK ? first : s2;
}
