/* Walkers (in2out / out2in) over node rewriters, and the import tracker
 * feature they (and the equilibrium driver) use to queue nodes imported
 * during the walk. The tracker, attached to the fgraph, takes its memory from
 * the fgraph's context allocator; the walkers' own queues from the C library. */
#include <stdlib.h>
#include <string.h>

#include "rewrite_int.h"

/* ---- import tracker ---------------------------------------------------------- */

struct weft__tracker {
    weft_feature_t base; /* first member: the fgraph holds &base */
    const weft_allocator_t *al;
    weft_apply_t **nodes;
    size_t n, cap;
    bool changed;
    bool oom;
};

static weft_status_t tr_import(weft_feature_t *self, weft_fgraph_t *fg, weft_apply_t *node,
                               const char *reason)
{
    (void)fg;
    weft__tracker_t *t = (weft__tracker_t *)self;
    /* a revert re-imports nodes that were there before the rejected rewrite:
     * queueing them again would retry that rewrite forever */
    if (reason && strcmp(reason, "Revert") == 0) return WEFT_OK;
    t->changed = true;
    if (!weft__vec_grow(t->al, (void **)&t->nodes, &t->cap, t->n + 1, sizeof *t->nodes)) {
        t->oom = true;
        return WEFT_ENOMEM;
    }
    t->nodes[t->n++] = node;
    return WEFT_OK;
}

static weft_status_t tr_prune(weft_feature_t *self, weft_fgraph_t *fg, weft_apply_t *node,
                              const char *reason)
{
    (void)fg;
    (void)node;
    (void)reason;
    ((weft__tracker_t *)self)->changed = true;
    return WEFT_OK;
}

static weft_status_t tr_change(weft_feature_t *self, weft_fgraph_t *fg, weft_apply_t *node,
                               size_t i, weft_var_t *old_var, weft_var_t *new_var,
                               const char *reason)
{
    (void)fg;
    (void)node;
    (void)i;
    (void)old_var;
    (void)new_var;
    (void)reason;
    ((weft__tracker_t *)self)->changed = true;
    return WEFT_OK;
}

static void tr_destroy(weft_feature_t *self)
{
    weft__tracker_t *t = (weft__tracker_t *)self;
    weft__free(t->al, t->nodes, t->cap * sizeof *t->nodes);
    weft__free(t->al, t, sizeof *t);
}

static const weft_feature_class_t tracker_class = {
    .size = sizeof(weft_feature_class_t),
    .name = "RewriteImportTracker",
    .on_import = tr_import,
    .on_prune = tr_prune,
    .on_change_input = tr_change,
    .destroy = tr_destroy,
};

weft_status_t weft__tracker_attach(weft_fgraph_t *fg, weft__tracker_t **out)
{
    *out = NULL;
    const weft_allocator_t *al = weft_graph_allocator(weft_fgraph_graph(fg));
    weft__tracker_t *t = weft__alloc(al, sizeof *t);
    if (!t) return WEFT_ENOMEM;
    memset(t, 0, sizeof *t);
    t->al = al;
    t->base.cls = &tracker_class;
    t->base.data = t;
    weft_status_t st = weft_fgraph_attach_feature(fg, &t->base); /* takes t */
    if (st == WEFT_OK) *out = t;
    return st;
}

void weft__tracker_detach(weft_fgraph_t *fg, weft__tracker_t *t)
{
    if (t) (void)weft_fgraph_remove_feature(fg, &t->base);
}

weft_status_t weft__tracker_drain(weft__tracker_t *t, weft_apply_t ***arr, size_t *n, size_t *cap)
{
    if (t->oom) return WEFT_ENOMEM;
    if (t->n == 0) return WEFT_OK;
    if (arr) {
        if (!weft__vec_grow(NULL, (void **)arr, cap, *n + t->n, sizeof **arr)) return WEFT_ENOMEM;
        memcpy(*arr + *n, t->nodes, t->n * sizeof *t->nodes);
        *n += t->n;
    }
    t->n = 0;
    return WEFT_OK;
}

bool weft__tracker_changed(weft__tracker_t *t)
{
    bool c = t->changed;
    t->changed = false;
    return c;
}

/* ---- walkers ------------------------------------------------------------------ */

weft_status_t weft_rewriter_walk_create(const char *name, weft_walk_order_t order,
                                        bool ignore_newtrees, size_t n,
                                        weft_rewriter_t *const *node_rewriters,
                                        weft_rewriter_t **out)
{
    if (out) *out = NULL;
    bool ok = name && out && n > 0 && node_rewriters &&
              (order == WEFT_WALK_IN2OUT || order == WEFT_WALK_OUT2IN);
    for (size_t i = 0; ok && i < n; i++)
        ok = node_rewriters[i] && node_rewriters[i]->kind == RW_NODE;
    weft_rewriter_t *rw = NULL;
    weft_status_t st = ok ? weft__rw_new(RW_WALK, name, &rw) : WEFT_EINVAL;
    if (st == WEFT_OK) st = weft__rw_list_take(&rw->node, n, node_rewriters);
    if (st != WEFT_OK) {
        if (!rw || rw->node.n == 0) weft__rw_release_array(n, node_rewriters);
        weft_rewriter_release(rw);
        return st;
    }
    rw->order = order;
    rw->ignore_newtrees = ignore_newtrees;
    *out = rw;
    return WEFT_OK;
}

/* Runs items[k] for each bit k of bits in index order; stops at a success. */
static weft_status_t try_set(const weft__rw_list_t *list, uint64_t bits, weft_fgraph_t *fg,
                             weft_apply_t *node, weft_rewrite_stats_t *stats, size_t *which,
                             bool *applied)
{
    for (size_t k = 0; bits && k < list->n; k++, bits >>= 1) {
        if (!(bits & 1u)) continue;
        weft_status_t st = weft__rw_process_node(list->items[k], fg, node, stats, applied);
        if (st != WEFT_OK || *applied) {
            *which = k;
            return st;
        }
    }
    return WEFT_OK;
}

/* Tries the rewriters of list on node in tracker order (class, instance,
 * untracked); stops at the first success (*which: its index). */
weft_status_t weft__try_node(const weft__rw_list_t *list, weft_fgraph_t *fg, weft_apply_t *node,
                             weft_rewrite_stats_t *stats, size_t *which, bool *applied)
{
    *applied = false;
    const weft_op_t *op = weft_apply_op(node);
    if (list->cls) { /* the index: class trackers, then untracked (no instance trackers) */
        const weft_op_class_t *cls = weft_op_class(op);
        uint64_t mine = 0;
        for (size_t j = 0; j < list->n_cls && !mine; j++)
            if (list->cls[j] == cls) mine = list->cls_mask[j];
        weft_status_t st = try_set(list, mine, fg, node, stats, which, applied);
        if (st != WEFT_OK || *applied) return st;
        return try_set(list, list->untracked, fg, node, stats, which, applied);
    }
    for (int tier = 2; tier >= 0; tier--)
        for (size_t k = 0; k < list->n; k++) {
            weft_rewriter_t *r = list->items[k];
            if (weft__rw_tracks(r, op) != tier) continue;
            weft_status_t st = weft__rw_process_node(r, fg, node, stats, applied);
            if (st != WEFT_OK) return st;
            if (*applied) {
                *which = k;
                return WEFT_OK;
            }
        }
    return WEFT_OK;
}

typedef struct walk_queue {
    weft_apply_t **q;
    size_t n, cap, head;
} walk_queue_t;

static weft_status_t queue_init(weft_fgraph_t *fg, walk_queue_t *wq)
{
    memset(wq, 0, sizeof *wq);
    weft_apply_t *const *order;
    size_t n;
    weft_status_t st = weft_fgraph_toposort(fg, &order, &n);
    if (st != WEFT_OK) return st;
    if (!weft__vec_grow(NULL, (void **)&wq->q, &wq->cap, n + 1, sizeof *wq->q)) return WEFT_ENOMEM;
    if (n) memcpy(wq->q, order, n * sizeof *order);
    wq->n = n;
    return WEFT_OK;
}

/* Next node: front for in2out, back for out2in; NULL when empty. */
static weft_apply_t *queue_pop(walk_queue_t *wq, weft_walk_order_t order)
{
    if (wq->head >= wq->n) return NULL;
    if (order == WEFT_WALK_IN2OUT) return wq->q[wq->head++];
    return wq->q[--wq->n];
}

static weft_status_t walk_loop(weft_rewriter_t *rw, weft_fgraph_t *fg, weft__rw_list_t *list,
                               weft__tracker_t *tr, weft_rewrite_stats_t *stats,
                               size_t *n_changes)
{
    walk_queue_t wq;
    weft_status_t st = queue_init(fg, &wq);
    weft_apply_t *node;
    while (st == WEFT_OK && (node = queue_pop(&wq, rw->order)) != NULL) {
        if (!weft_fgraph_contains_apply(fg, node)) continue;
        size_t which;
        bool applied;
        st = weft__try_node(list, fg, node, stats, &which, &applied);
        if (st == WEFT_OK && applied) ++*n_changes;
        if (st == WEFT_OK && tr) st = weft__tracker_drain(tr, &wq.q, &wq.n, &wq.cap);
    }
    free(wq.q);
    return st;
}

weft_status_t weft__walk_apply(weft_rewriter_t *rw, weft_fgraph_t *fg,
                               weft_rewrite_stats_t *stats, size_t *n_changes)
{
    uint64_t t0 = weft__now_ns();
    size_t before = weft_fgraph_n_applies(fg);
    /* a bare node rewriter walks in2out as a list of itself */
    weft__rw_list_t self = {1, &rw, 0, NULL, NULL, 0}; /* no dispatch index */
    weft__rw_list_t *list = rw->kind == RW_NODE ? &self : &rw->node;
    weft__tracker_t *tr = NULL;
    weft_status_t st = WEFT_OK;
    if (!rw->ignore_newtrees) st = weft__tracker_attach(fg, &tr);
    if (st == WEFT_OK) st = walk_loop(rw, fg, list, tr, stats, n_changes);
    weft__tracker_detach(fg, tr);
    if (rw->kind == RW_WALK && st != WEFT_ENOMEM) {
        weft_status_t s2 = weft__stats_composite(stats, rw->name, weft__seconds_since(t0), 1,
                                                 before, weft_fgraph_n_applies(fg));
        if (st == WEFT_OK) st = s2;
    }
    return st;
}
