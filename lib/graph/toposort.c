/* FunctionGraph toposort honouring the features' orderings: an iterative
 * depth-first post-order from the outputs over two kinds of edges (a node's
 * input owners, then its ordering prerequisites), O(V + E + P). A node met
 * again while still on the stack closes a cycle (data or orderings), which
 * is reported with the nodes on it; the sort never loops. */
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
    size_t c1 = fg->ord_cap, c2 = fg->ord_cap;
    if (!weft__grow(fg->alloc, (void **)&fg->ord_head, &c1, na, sizeof(uint32_t)) ||
        !weft__grow(fg->alloc, (void **)&fg->ord_stamp, &c2, c1, sizeof(uint32_t)) ||
        !weft__grow(fg->alloc, (void **)&fg->ord_next, &fg->ord_next_cap, np, sizeof(uint32_t)))
        return false;
    fg->ord_cap = c1 < c2 ? c1 : c2;
    if (++fg->ord_epoch == 0) {
        memset(fg->ord_stamp, 0, fg->ord_cap * sizeof(uint32_t));
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
    if (!weft__grow(fg->alloc, (void **)&fg->dfs.p, &fg->dfs.cap, need, sizeof(void *)))
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

weft_status_t weft_fgraph_toposort(weft_fgraph_t *fg, weft_apply_t *const **order, size_t *n)
{
    if (!fg || !order || !n) return WEFT_EINVAL;
    *order = NULL;
    *n = 0;
    weft_status_t s = weft__fg_collect_orderings(fg);
    if (s != WEFT_OK) return s;
    if (!index_orderings(fg) || !weft__marks_begin(fg->alloc, &fg->amarks, fg->g->n_applies))
        return weft__fg_err(fg, WEFT_ENOMEM, "toposort: out of memory");
    const uint32_t gray = fg->amarks.epoch;
    fg->topo.n = 0;
    for (size_t k = 0; k < fg->n_out && s == WEFT_OK; k++)
        if (fg->outputs[k]->owner) s = topo_from(fg, fg->outputs[k]->owner, gray);
    if (s != WEFT_OK) {
        fg->topo.n = 0;
        return s;
    }
    *order = (weft_apply_t *const *)fg->topo.p;
    *n = fg->topo.n;
    return WEFT_OK;
}
