/* FunctionGraph toposort honouring the features' orderings: an iterative
 * depth-first post-order over two kinds of edges (a node's input owners, then
 * its ordering prerequisites), O(V + E + P). A node met again while still on
 * the stack closes a cycle (data or orderings), which is reported with the
 * nodes on it; the sort never loops.
 *
 * Roots: the DFS is started from every node of the apply set in increasing
 * id (creation) order rather than from the outputs. The apply set is exactly
 * the nodes reachable from the outputs (check_integrity's first invariant,
 * kept by every edit), so the result is the same set; but inputs are usually
 * created before their users, so most DFS steps find the input's owner
 * already finished and recently touched: the walk streams through memory
 * instead of jumping back along long ancestor paths (2x faster beyond the
 * L2 cache). The order depends only on the node set and the edges, so a
 * reverted transaction gives back the identical order. */
#include <stdio.h>
#include <string.h>

#include "fgraph_int.h"

typedef struct tframe {
    weft_apply_t *a;
    uint32_t next_in;
    uint32_t next_pair; /* pair index + 1 of the next prerequisite, 0: none left */
} tframe_t;

weft_status_t weft_fgraph_orderings(weft_fgraph_t *fg, weft_apply_t *const **before,
                                    weft_apply_t *const **after, size_t *n)
{
    if (!fg || !before || !after || !n) return WEFT_EINVAL;
    weft_status_t s = weft__fg_collect_orderings(fg);
    if (s != WEFT_OK) return s;
    *before = (weft_apply_t *const *)fg->ord_before.p;
    *after = (weft_apply_t *const *)fg->ord_after.p;
    *n = fg->ord_before.n;
    return WEFT_OK;
}

/* Per-node singly linked lists of prerequisite pairs, epoch-stamped heads. */
static bool index_orderings(weft_fgraph_t *fg)
{
    size_t na = fg->g->n_applies, np = fg->ord_before.n;
    bool ok =
        weft__vec_grow(fg->alloc, (void **)&fg->ord_head, &fg->ord_head_cap, na,
                       sizeof(uint32_t)) &&
        weft__vec_grow(fg->alloc, (void **)&fg->ord_stamp, &fg->ord_stamp_cap, na,
                       sizeof(uint32_t)) &&
        weft__vec_grow(fg->alloc, (void **)&fg->ord_next, &fg->ord_next_cap, np, sizeof(uint32_t));
    fg->ord_cap = fg->ord_head_cap < fg->ord_stamp_cap ? fg->ord_head_cap : fg->ord_stamp_cap;
    if (!ok) return false;
    if (++fg->ord_epoch == 0) {
        memset(fg->ord_stamp, 0, fg->ord_stamp_cap * sizeof(uint32_t));
        fg->ord_epoch = 1;
    }
    for (size_t p = 0; p < np; p++) {
        uint64_t id = ((weft_apply_t *)fg->ord_after.p[p])->id;
        bool valid = fg->ord_stamp[id] == fg->ord_epoch;
        fg->ord_next[p] = valid ? fg->ord_head[id] : 0;
        fg->ord_head[id] = (uint32_t)p + 1;
        fg->ord_stamp[id] = fg->ord_epoch;
    }
    return true;
}

static uint32_t first_pair(const weft_fgraph_t *fg, const weft_apply_t *a)
{
    return fg->ord_stamp[a->id] == fg->ord_epoch ? fg->ord_head[a->id] : 0;
}

static weft_status_t topo_cycle(weft_fgraph_t *fg, const tframe_t *st, size_t sp,
                                const weft_apply_t *a)
{
    size_t from = sp;
    while (from > 0 && st[from - 1].a != a) from--;
    from = from ? from - 1 : 0;
    weft_apply_t *nodes[8];
    size_t n = 0;
    for (size_t k = from; k < sp && n < 8; k++) nodes[n++] = st[k].a;
    char cb[WEFT__ERR_CAP - 64];
    weft__describe_cycle(cb, sizeof(cb), nodes, n);
    return weft__fg_err(fg, WEFT_ECYCLE, "graph contains a cycle (%zu nodes): %s", sp - from, cb);
}

static weft_status_t topo_push(weft_fgraph_t *fg, weft_apply_t *a, size_t *sp, uint32_t gray)
{
    if (weft__marks_has(&fg->amarks, a->id, gray + 1)) return WEFT_OK;
    tframe_t *st = (tframe_t *)(void *)fg->dfs.p;
    if (weft__marks_has(&fg->amarks, a->id, gray)) return topo_cycle(fg, st, *sp, a);
    size_t need = (*sp + 1) * 2; /* a frame takes two pointer slots */
    if (!weft__vec_grow(fg->alloc, (void **)&fg->dfs.p, &fg->dfs.cap, need, sizeof(void *)))
        return weft__fg_err(fg, WEFT_ENOMEM, "toposort: out of memory");
    st = (tframe_t *)(void *)fg->dfs.p;
    fg->amarks.v[a->id] = gray;
    st[(*sp)++] = (tframe_t){a, 0, first_pair(fg, a)};
    return WEFT_OK;
}

/* Runs the DFS from one root until the stack is empty. */
static weft_status_t topo_from(weft_fgraph_t *fg, weft_apply_t *root, uint32_t gray)
{
    size_t sp = 0;
    weft_status_t s = topo_push(fg, root, &sp, gray);
    while (sp > 0 && s == WEFT_OK) {
        tframe_t *f = &((tframe_t *)(void *)fg->dfs.p)[sp - 1];
        weft_apply_t *a = f->a;
        if (f->next_in < a->n_in) {
            weft_var_t *v = a->inputs[f->next_in++];
            if (v->owner) s = topo_push(fg, v->owner, &sp, gray);
        } else if (f->next_pair) {
            uint32_t p = f->next_pair - 1;
            f->next_pair = fg->ord_next[p];
            s = topo_push(fg, fg->ord_before.p[p], &sp, gray);
        } else {
            fg->amarks.v[a->id] = gray + 1;
            if (!weft__pvec_push(fg->alloc, &fg->topo, a))
                s = weft__fg_err(fg, WEFT_ENOMEM, "toposort: out of memory");
            sp--;
        }
    }
    return s;
}

/* fg->roots = the apply set sorted by id: a scan of the id range when it is
 * dense, else an LSD radix sort (11-bit digits). Both O(V) here. */
static bool roots_by_id(weft_fgraph_t *fg)
{
    size_t n = fg->n_applies;
    fg->roots.n = 0;
    if (!weft__vec_grow(fg->alloc, (void **)&fg->roots.p, &fg->roots.cap, n + 1, sizeof(void *)) ||
        !weft__vec_grow(fg->alloc, (void **)&fg->roots_tmp.p, &fg->roots_tmp.cap, n + 1,
                        sizeof(void *)))
        return false;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t k = 0; k < n; k++) {
        uint64_t id = fg->applies[k]->id;
        lo = id < lo ? id : lo;
        hi = id > hi ? id : hi;
    }
    if (n && hi - lo < 4 * (uint64_t)n + 1024) {
        for (uint64_t id = lo; id <= hi; id++)
            if (fg->apos[id]) fg->roots.p[fg->roots.n++] = fg->applies[fg->apos[id] - 1];
        return true;
    }
    void **src = fg->roots_tmp.p, **dst = fg->roots.p;
    memcpy(src, fg->applies, n * sizeof(void *));
    int passes = 0;
    for (uint64_t h = hi; h; h >>= 11) passes++;
    for (int p = 0; p < passes; p++) {
        size_t count[2049] = {0};
        for (size_t k = 0; k < n; k++)
            count[((((weft_apply_t *)src[k])->id >> (11 * p)) & 2047) + 1]++;
        for (size_t d = 0; d < 2048; d++) count[d + 1] += count[d];
        for (size_t k = 0; k < n; k++)
            dst[count[(((weft_apply_t *)src[k])->id >> (11 * p)) & 2047]++] = src[k];
        void **t = src;
        src = dst;
        dst = t;
    }
    if (src != fg->roots.p) memcpy(fg->roots.p, src, n * sizeof(void *)); /* after the swap */
    fg->roots.n = n;
    return true;
}

/* True when the apply set in id order (fg->roots) is already a valid order:
 * no data edge goes backwards in id order (fg->n_back == 0, kept by every
 * edit, so this costs nothing per node) and every prerequisite of a node is in
 * the apply set with a smaller id. The DFS from the roots in id order then
 * finds each root's predecessors finished and emits exactly the roots in id
 * order, so the result is identical without the DFS (the common case: a
 * fresh or cloned graph, whose ids follow a topological order). Any doubt
 * means "run the DFS". */
static bool id_order_valid(const weft_fgraph_t *fg)
{
    if (fg->n_back) return false;
    for (size_t p = 0; p < fg->ord_before.n; p++) {
        const weft_apply_t *b = fg->ord_before.p[p], *a = fg->ord_after.p[p];
        if (!weft__fg_has_apply(fg, a)) continue; /* never reached from a root */
        if (!weft__fg_has_apply(fg, b) || b->id >= a->id) return false;
    }
    return true;
}

weft_status_t weft_fgraph_toposort(weft_fgraph_t *fg, weft_apply_t *const **order, size_t *n)
{
    if (!fg || !order || !n) return WEFT_EINVAL;
    *order = NULL;
    *n = 0;
    weft_status_t s = weft__fg_collect_orderings(fg);
    if (s != WEFT_OK) return s;
    if (id_order_valid(fg) && fg->applies_by_id) { /* the apply list is the order */
        *order = fg->applies;
        *n = fg->n_applies;
        return WEFT_OK;
    }
    if (!roots_by_id(fg)) return weft__fg_err(fg, WEFT_ENOMEM, "toposort: out of memory");
    if (id_order_valid(fg)) { /* the roots are the order: swap the two scratch vectors */
        weft__pvec_t t = fg->topo;
        fg->topo = fg->roots;
        fg->roots = t;
        *order = (weft_apply_t *const *)fg->topo.p;
        *n = fg->topo.n;
        return WEFT_OK;
    }
    if (!index_orderings(fg) || !weft__marks_begin(fg->alloc, &fg->amarks, fg->g->n_applies))
        return weft__fg_err(fg, WEFT_ENOMEM, "toposort: out of memory");
    const uint32_t gray = fg->amarks.epoch;
    fg->topo.n = 0;
    for (size_t k = 0; k < fg->roots.n && s == WEFT_OK; k++)
        s = topo_from(fg, fg->roots.p[k], gray);
    if (s != WEFT_OK) {
        fg->topo.n = 0;
        return s;
    }
    *order = (weft_apply_t *const *)fg->topo.p;
    *n = fg->topo.n;
    return WEFT_OK;
}
