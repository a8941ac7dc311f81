/* Rewriter objects: creation, reference counting, tracks, the replacement
 * result builder and the per-node replacement step (process_node) that every
 * walker and the equilibrium driver use. */
#include <stdlib.h>
#include <string.h>

#include "graph/ctor_int.h"
#include "rewrite_int.h"

weft_status_t weft__rw_new(rw_kind_t kind, const char *name, weft_rewriter_t **out)
{
    *out = NULL;
    weft_rewriter_t *rw = calloc(1, sizeof *rw);
    char *nm = rw ? weft__strdup(name) : NULL;
    if (!nm) {
        free(rw);
        return WEFT_ENOMEM;
    }
    atomic_init(&rw->refs, 1);
    rw->kind = kind;
    rw->name = nm;
    *out = rw;
    return WEFT_OK;
}

void weft__rw_release_array(size_t n, weft_rewriter_t *const *rws)
{
    if (!rws) return;
    for (size_t i = 0; i < n; i++) weft_rewriter_release(rws[i]);
}

/* Adds item k to cls's set (a new entry when cls is not indexed yet). */
static void index_add(weft__rw_list_t *list, const weft_op_class_t *cls, size_t k)
{
    size_t j = 0;
    while (j < list->n_cls && list->cls[j] != cls) j++;
    if (j == list->n_cls) {
        list->cls[list->n_cls] = cls;
        list->cls_mask[list->n_cls++] = 0;
    }
    list->cls_mask[j] |= (uint64_t)1 << k;
}

/* Builds the dispatch index when it applies; without memory the list simply
 * has none (the tier scan gives the same order). */
static void index_build(weft__rw_list_t *list)
{
    size_t total = 0;
    if (list->n > 64) return;
    for (size_t k = 0; k < list->n; k++) {
        const weft_rewriter_t *r = list->items[k];
        if (r->kind != RW_NODE || r->n_ops) return;
        total += r->n_classes;
    }
    list->cls = weft__vec_malloc(total + 1, sizeof *list->cls);
    list->cls_mask = weft__vec_malloc(total + 1, sizeof *list->cls_mask);
    if (!list->cls || !list->cls_mask) {
        free(list->cls);
        free(list->cls_mask);
        list->cls = NULL;
        list->cls_mask = NULL;
        return;
    }
    for (size_t k = 0; k < list->n; k++) {
        const weft_rewriter_t *r = list->items[k];
        if (r->n_classes == 0) list->untracked |= (uint64_t)1 << k;
        for (size_t c = 0; c < r->n_classes; c++) index_add(list, r->classes[c], k);
    }
}

weft_status_t weft__rw_list_take(weft__rw_list_t *list, size_t n, weft_rewriter_t *const *rws)
{
    if (n == 0) return WEFT_OK;
    if (!rws) return WEFT_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!rws[i]) return WEFT_EINVAL;
    list->items = weft__vec_malloc(n, sizeof *list->items);
    if (!list->items) return WEFT_ENOMEM;
    memcpy(list->items, rws, n * sizeof *rws);
    list->n = n;
    index_build(list);
    return WEFT_OK;
}

void weft__rw_list_fini(weft__rw_list_t *list)
{
    weft__rw_release_array(list->n, list->items);
    free(list->items);
    free(list->cls);
    free(list->cls_mask);
    memset(list, 0, sizeof *list);
}

weft_rewriter_t *weft_rewriter_retain(weft_rewriter_t *rw)
{
    /* relaxed: taking a reference needs no ordering; the caller already holds one */
    if (rw) atomic_fetch_add_explicit(&rw->refs, 1, memory_order_relaxed);
    return rw;
}

void weft_rewriter_release(weft_rewriter_t *rw)
{
    if (!rw) return;
    /* acq_rel: the last release must see every other holder's writes; pairs with
     * the release half of the other holders' decrements */
    if (atomic_fetch_sub_explicit(&rw->refs, 1, memory_order_acq_rel) != 1) return;
    weft__rw_list_fini(&rw->node);
    weft__rw_list_fini(&rw->global);
    weft__rw_list_fini(&rw->final);
    weft__rw_list_fini(&rw->cleanup);
    if (rw->user_free) rw->user_free(rw->user);
    free(rw->classes);
    free(rw->ops);
    free(rw->name);
    free(rw);
}

const char *weft_rewriter_name(const weft_rewriter_t *rw)
{
    return rw ? rw->name : NULL;
}

bool weft_rewriter_is_node(const weft_rewriter_t *rw)
{
    return rw && rw->kind == RW_NODE;
}

static bool tracks_valid(size_t n, const void *const *arr)
{
    if (!arr) return n == 0;
    if (n == 0) return false; /* an explicitly empty tracks list is a value error */
    for (size_t i = 0; i < n; i++)
        if (!arr[i]) return false;
    return true;
}

static weft_status_t copy_tracks(weft_rewriter_t *rw, const weft_node_rewriter_desc_t *d)
{
    if (d->n_classes) {
        rw->classes = weft__vec_malloc(d->n_classes, sizeof *rw->classes);
        if (!rw->classes) return WEFT_ENOMEM;
        memcpy(rw->classes, d->classes, d->n_classes * sizeof *rw->classes);
        rw->n_classes = d->n_classes;
    }
    if (d->n_ops) {
        rw->ops = weft__vec_malloc(d->n_ops, sizeof *rw->ops);
        if (!rw->ops) return WEFT_ENOMEM;
        memcpy(rw->ops, d->ops, d->n_ops * sizeof *rw->ops);
        rw->n_ops = d->n_ops;
    }
    return WEFT_OK;
}

weft_status_t weft_rewriter_node_create(const weft_node_rewriter_desc_t *d, weft_rewriter_t **out)
{
    if (out) *out = NULL;
    bool ok = d && out && d->size >= sizeof(weft_node_rewriter_desc_t) && d->name &&
              d->transform && tracks_valid(d->n_classes, (const void *const *)d->classes) &&
              tracks_valid(d->n_ops, (const void *const *)d->ops);
    if (!ok) {
        if (d && d->size >= sizeof(weft_node_rewriter_desc_t) && d->user_free)
            d->user_free(d->user);
        return WEFT_EINVAL;
    }
    weft_rewriter_t *rw;
    weft_status_t st = weft__rw_new(RW_NODE, d->name, &rw);
    if (st != WEFT_OK) {
        if (d->user_free) d->user_free(d->user);
        return st;
    }
    rw->transform = d->transform;
    rw->user = d->user;
    rw->user_free = d->user_free;
    st = copy_tracks(rw, d);
    if (st != WEFT_OK) {
        weft_rewriter_release(rw);
        return st;
    }
    *out = rw;
    return WEFT_OK;
}

weft_status_t weft_rewriter_graph_create(const char *name, weft_graph_rewrite_fn fn, void *user,
                                         void (*user_free)(void *user), weft_rewriter_t **out)
{
    if (out) *out = NULL;
    weft_status_t st = (!name || !fn || !out) ? WEFT_EINVAL : WEFT_OK;
    weft_rewriter_t *rw = NULL;
    if (st == WEFT_OK) st = weft__rw_new(RW_GRAPH, name, &rw);
    if (st != WEFT_OK) {
        if (user_free) user_free(user);
        return st;
    }
    rw->graph_fn = fn;
    rw->user = user;
    rw->user_free = user_free;
    *out = rw;
    return WEFT_OK;
}

int weft__rw_tracks(const weft_rewriter_t *rw, const weft_op_t *op)
{
    if (rw->n_classes == 0 && rw->n_ops == 0) return 0;
    const weft_op_class_t *cls = weft_op_class(op);
    for (size_t i = 0; i < rw->n_classes; i++)
        if (rw->classes[i] == cls) return 2;
    for (size_t i = 0; i < rw->n_ops; i++)
        if (rw->ops[i] == op || weft_op_equal(rw->ops[i], op)) return 1;
    return -1;
}

/* ---- the replacement result --------------------------------------------------- */

struct weft_rewrite_result {
    weft_apply_t *node;
    size_t n, cap, n_rm, cap_rm;
    weft_var_t **olds, **news;
    weft_apply_t **rm;
    bool must_be_unused; /* a list entry was NULL: checked before replacing */
    weft_var_t *unused[WEFT_OP_MAX_OUTPUTS];
    size_t n_unused;
};

weft_status_t weft_rewrite_result_replace(weft_rewrite_result_t *res, weft_var_t *old_var,
                                          weft_var_t *new_var)
{
    if (!res || !old_var || !new_var) return WEFT_EINVAL;
    if (res->n == res->cap) {
        size_t co = res->cap, cn = res->cap; /* both grow alike; cap: the smaller */
        bool ok = weft__vec_grow(NULL, (void **)&res->olds, &co, res->n + 1, sizeof(void *)) &&
                  weft__vec_grow(NULL, (void **)&res->news, &cn, res->n + 1, sizeof(void *));
        res->cap = co < cn ? co : cn;
        if (!ok) return WEFT_ENOMEM;
    }
    res->olds[res->n] = old_var;
    res->news[res->n++] = new_var;
    return WEFT_OK;
}

weft_status_t weft_rewrite_result_outputs(weft_rewrite_result_t *res, size_t n,
                                          weft_var_t *const *new_outputs)
{
    if (!res || !new_outputs || n != weft_apply_n_outputs(res->node)) return WEFT_EINVAL;
    for (size_t i = 0; i < n; i++) {
        weft_var_t *o = weft_apply_output(res->node, i);
        if (new_outputs[i]) {
            weft_status_t st = weft_rewrite_result_replace(res, o, new_outputs[i]);
            if (st != WEFT_OK) return st;
        } else if (res->n_unused < WEFT_OP_MAX_OUTPUTS) {
            res->unused[res->n_unused++] = o;
        }
    }
    return WEFT_OK;
}

weft_status_t weft_rewrite_result_remove(weft_rewrite_result_t *res, weft_apply_t *node)
{
    if (!res || !node) return WEFT_EINVAL;
    if (!weft__vec_grow(NULL, (void **)&res->rm, &res->cap_rm, res->n_rm + 1, sizeof(void *)))
        return WEFT_ENOMEM;
    res->rm[res->n_rm++] = node;
    return WEFT_OK;
}

static void result_fini(weft_rewrite_result_t *res)
{
    free(res->olds);
    free(res->news);
    free(res->rm);
}

/* Drops pairs whose new is the old, and pairs whose old has left the graph
 * (replacing a variable not in the graph is an error, WEFT_ENOTFOUND);
 * returns the number left. */
static size_t result_compact(weft_fgraph_t *fg, weft_rewrite_result_t *res)
{
    size_t k = 0;
    for (size_t i = 0; i < res->n; i++) {
        if (res->olds[i] == res->news[i] || !weft_fgraph_contains_var(fg, res->olds[i])) continue;
        res->olds[k] = res->olds[i];
        res->news[k++] = res->news[i];
    }
    res->n = k;
    return k;
}

static weft_status_t count(weft_rewrite_stats_t *stats, const weft_rewriter_t *rw, bool ok,
                           bool failed, uint64_t t0)
{
    if (!stats) return WEFT_OK;
    return weft_rewrite_stats_record(stats, rw->name, ok ? 1 : 0, failed ? 1 : 0,
                                     weft__seconds_since(t0));
}

/* Replaces after the transform proposed something; *applied on success. */
static weft_status_t commit(weft_fgraph_t *fg, const weft_rewriter_t *rw,
                            weft_rewrite_result_t *res, bool *applied, bool *failed)
{
    for (size_t i = 0; i < res->n_unused; i++)
        if (weft_fgraph_n_clients(fg, res->unused[i]) > 0) {
            *failed = true;
            weft_fgraph_set_error(fg, WEFT_EINVAL,
                                  "rewrite %s: an output declared unused still has clients",
                                  rw->name);
            return WEFT_OK;
        }
    if (result_compact(fg, res) == 0) return WEFT_OK;
    weft_status_t st =
        res->n_rm ? weft_fgraph_replace_all_validate_remove(fg, res->n, res->olds, res->news,
                                                            res->n_rm, res->rm, rw->name)
                  : weft_fgraph_replace_all_validate(fg, res->n, res->olds, res->news, rw->name);
    if (st == WEFT_ENOMEM) return st;
    *applied = st == WEFT_OK;
    *failed = st != WEFT_OK;
    return WEFT_OK;
}

weft_status_t weft__rw_process_node(weft_rewriter_t *rw, weft_fgraph_t *fg, weft_apply_t *node,
                                    weft_rewrite_stats_t *stats, bool *applied)
{
    *applied = false;
    uint64_t t0 = stats ? weft__now_ns() : 0;
    weft_rewrite_result_t res;
    memset(&res, 0, sizeof res);
    res.node = node;
    bool failed = false;
    /* A rewrite builds its replacement speculatively: a constructor failing
     * inside it is the rewrite's failure, not the user's, so the graph's
     * kept error is set aside and restored around it (weft/graph.h). */
    weft_graph_t *g = weft_fgraph_graph(fg);
    weft__kept_error_t saved;
    weft__graph_error_save(g, &saved);
    weft_status_t st = rw->transform(fg, node, rw->user, &res);
    weft__graph_error_restore(g, &saved);
    if (st == WEFT_OK)
        st = commit(fg, rw, &res, applied, &failed);
    else if (st != WEFT_ENOMEM) {
        failed = true;
        st = WEFT_OK;
    }
    result_fini(&res);
    if (st != WEFT_OK) return weft__rw_nomem(fg, rw->name, st, true);
    if (!*applied && !failed && !stats) return WEFT_OK;
    return (*applied || failed) ? count(stats, rw, *applied, failed, t0) : WEFT_OK;
}

weft_status_t weft__rw_nomem(weft_fgraph_t *fg, const char *name, weft_status_t st, bool leaf)
{
    if (st != WEFT_ENOMEM) return st;
    const char *m = weft_fgraph_last_error(fg);
    if (strstr(m, "out of memory")) {
        size_t n = strlen(name);
        if (!leaf || (strncmp(m, name, n) == 0 && m[n] == ':')) return st;
        return weft_fgraph_set_error(fg, st, "%s: %s", name, m);
    }
    return weft_fgraph_set_error(fg, st, "%s: out of memory", name);
}

static weft_status_t graph_apply(weft_rewriter_t *rw, weft_fgraph_t *fg,
                                 weft_rewrite_stats_t *stats, size_t *n_changes)
{
    uint64_t t0 = weft__now_ns();
    weft_graph_t *g = weft_fgraph_graph(fg);
    weft__kept_error_t saved; /* as in weft__rw_process_node */
    weft__graph_error_save(g, &saved);
    weft_status_t st = rw->graph_fn(fg, rw->user, stats, n_changes);
    weft__graph_error_restore(g, &saved);
    if (stats && st != WEFT_ENOMEM) {
        weft_status_t s2 = weft_rewrite_stats_record(stats, rw->name, *n_changes, st != WEFT_OK,
                                                     weft__seconds_since(t0));
        if (s2 != WEFT_OK) return s2;
    }
    return st;
}

weft_status_t weft__rw_apply(weft_rewriter_t *rw, weft_fgraph_t *fg, weft_rewrite_stats_t *stats,
                             size_t *n_changes)
{
    size_t dummy;
    if (!n_changes) n_changes = &dummy;
    *n_changes = 0;
    weft_status_t st = WEFT_EINVAL;
    switch (rw->kind) {
    case RW_NODE:
    case RW_WALK: st = weft__walk_apply(rw, fg, stats, n_changes); break;
    case RW_GRAPH: st = graph_apply(rw, fg, stats, n_changes); break;
    case RW_EQUILIBRIUM: st = weft__equilibrium_apply(rw, fg, stats, n_changes); break;
    case RW_SEQUENCE: st = weft__sequence_apply(rw, fg, stats, n_changes); break;
    }
    return weft__rw_nomem(fg, rw->name, st, rw->kind == RW_GRAPH);
}

weft_status_t weft_rewriter_apply(weft_rewriter_t *rw, weft_fgraph_t *fg,
                                  weft_rewrite_stats_t *stats)
{
    if (!rw || !fg) return WEFT_EINVAL;
    return weft__rw_apply(rw, fg, stats, NULL);
}

weft_status_t weft_rewriter_apply_node(weft_rewriter_t *rw, weft_fgraph_t *fg, weft_apply_t *node,
                                       weft_rewrite_stats_t *stats, bool *applied)
{
    if (applied) *applied = false;
    if (!rw || !fg || !node || !applied || rw->kind != RW_NODE) return WEFT_EINVAL;
    if (!weft_fgraph_contains_apply(fg, node)) return WEFT_ENOTFOUND;
    if (weft__rw_tracks(rw, weft_apply_op(node)) < 0) return WEFT_OK;
    return weft__rw_process_node(rw, fg, node, stats, applied);
}
