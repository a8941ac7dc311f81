/* The rank index and the cycle check of edits (docs/fgraph.md §2, §3).
 *
 * rank[apply id] numbers the apply set topologically: for every data edge,
 * rank(owner of the input) < rank(node). An edit that makes v an input of a
 * node closes a cycle exactly when the node is an ancestor of v; every node
 * on such a path ranks above the node, so the check walks up from v's owner
 * only through nodes ranked above it (and nodes not yet in fg, which the
 * import plan walks anyway). A replacement built from the node's ancestors,
 * the usual rewrite, costs a few steps, not a graph traversal.
 *
 * Keeping the ranks: a node joining the apply set ranks WEFT__RANK_GAP above
 * its highest input owner when it comes in by itself (creation, add_output,
 * import), 1 above under an edit, so a replacement usually fits in the gap
 * below its new client. When an edit's new input ranks too high, the node and
 * the clients above it that no longer rank higher are raised: a walk over the
 * raised nodes only. If that walk cannot finish (out of memory), the ranks
 * are marked stale and recomputed by one depth-first pass before the next
 * check. */
#include <stdio.h>
#include <string.h>

#include "fgraph_int.h"

typedef struct rframe {
    weft_apply_t *a;
    size_t next;
} rframe_t;

void weft__fg_rank_import(weft_fgraph_t *fg, weft_apply_t *a, uint64_t step)
{
    uint64_t r = 0;
    for (uint32_t i = 0; i < a->n_in; i++) {
        const weft_apply_t *o = a->inputs[i]->owner;
        if (o && weft__fg_has_apply(fg, o) && fg->rank[o->id] > r) r = fg->rank[o->id];
    }
    fg->rank[a->id] = r + step;
}

/* Raises the clients of a that no longer rank above it; false when it comes
 * back to origin (a cycle) or runs out of memory. */
static bool raise_clients(weft_fgraph_t *fg, const weft_apply_t *a, const weft_apply_t *origin)
{
    for (uint32_t k = 0; k < a->n_out; k++) {
        const weft__cvec_t *c = &fg->clients[a->outputs[k]->id];
        for (uint32_t j = 0; j < c->end; j++) {
            weft_apply_t *cn = c->items[j].node;
            if (!cn || cn->slot_fg || fg->rank[cn->id] > fg->rank[a->id]) continue;
            if (cn == origin || !weft__pvec_push(fg->alloc, &fg->raise, cn)) return false;
            fg->rank[cn->id] = fg->rank[a->id] + 1;
        }
    }
    return true;
}

void weft__fg_rank_edge(weft_fgraph_t *fg, weft_apply_t *node, const weft_var_t *v)
{
    const weft_apply_t *o = v->owner;
    if (fg->ranks_stale || !o || fg->rank[o->id] < fg->rank[node->id]) return;
    fg->rank[node->id] = fg->rank[o->id] + 1;
    fg->raise.n = 0;
    bool ok = weft__pvec_push(fg->alloc, &fg->raise, node);
    while (ok && fg->raise.n > 0) ok = raise_clients(fg, fg->raise.p[--fg->raise.n], node);
    fg->raise.n = 0;
    fg->ranks_stale = !ok;
}

/* "A -> B -> C": nodes on a cycle, each reading the next, the last reading
 * first's output through the edge being added (or an existing one). */
static void describe(char *buf, size_t cap, weft_apply_t *first, const rframe_t *st, size_t sp)
{
    weft_apply_t *nodes[8] = {first};
    for (size_t k = 0; k < sp && k + 1 < 8; k++) nodes[k + 1] = st[k].a;
    weft__describe_cycle(buf, cap, nodes, sp + 1);
}

/* Pushes a on the walk's stack unless it was seen or is pruned. */
static bool walk_push(weft_fgraph_t *fg, weft_apply_t *a, uint64_t lo, size_t *sp)
{
    const uint32_t seen = fg->amarks.epoch + 1;
    if (weft__marks_has(&fg->amarks, a->id, seen)) return true;
    fg->amarks.v[a->id] = seen;
    if (weft__fg_has_apply(fg, a) && fg->rank[a->id] <= lo) return true; /* cannot reach one */
    if (!weft__vec_grow(fg->alloc, (void **)&fg->dfs.p, &fg->dfs.cap, (*sp + 1) * 2,
                        sizeof(void *)))
        return false;
    ((rframe_t *)(void *)fg->dfs.p)[(*sp)++] = (rframe_t){a, 0};
    return true;
}

/* Walks up from start through nodes ranked above lo or not in fg; *hit gets
 * the first target met (marked with the epoch), the path to it stays on
 * fg->dfs (*sp frames). */
static weft_status_t walk_to_target(weft_fgraph_t *fg, weft_apply_t *start, uint64_t lo,
                                    weft_apply_t **hit, size_t *sp)
{
    const uint32_t tgt = fg->amarks.epoch;
    *hit = NULL;
    *sp = 0;
    if (weft__marks_has(&fg->amarks, start->id, tgt)) {
        *hit = start;
        return WEFT_OK;
    }
    if (!walk_push(fg, start, lo, sp)) return WEFT_ENOMEM;
    while (*sp > 0) {
        rframe_t *f = &((rframe_t *)(void *)fg->dfs.p)[*sp - 1];
        if (f->next == f->a->n_in) {
            (*sp)--;
            continue;
        }
        const weft_var_t *v = f->a->inputs[f->next++];
        weft_apply_t *o = v->owner;
        if (!o || v->g != fg->g) continue; /* foreign inputs: the import plan refuses them */
        if (weft__marks_has(&fg->amarks, o->id, tgt)) {
            *hit = o;
            return WEFT_OK;
        }
        if (!walk_push(fg, o, lo, sp)) return WEFT_ENOMEM;
    }
    return WEFT_OK;
}

/* Marks the targets (node, or every client of var) and returns their lowest
 * rank. */
static uint64_t mark_targets(weft_fgraph_t *fg, const weft_var_t *var, weft_apply_t *node)
{
    const uint32_t tgt = fg->amarks.epoch;
    if (node) {
        fg->amarks.v[node->id] = tgt;
        return fg->rank[node->id];
    }
    uint64_t lo = UINT64_MAX;
    const weft__cvec_t *c = &fg->clients[var->id];
    for (uint32_t k = 0; k < c->end; k++) {
        weft_apply_t *cn = c->items[k].node;
        if (!cn || cn->slot_fg) continue;
        fg->amarks.v[cn->id] = tgt;
        if (fg->rank[cn->id] < lo) lo = fg->rank[cn->id];
    }
    return lo;
}

weft_status_t weft__fg_refuse_cycle(weft_fgraph_t *fg, const weft_var_t *var, weft_apply_t *node,
                                    size_t i, weft_var_t *new_var)
{
    const char *fn = node ? "change_node_input" : "replace";
    if (!new_var->owner || new_var->g != fg->g) return WEFT_OK;
    weft_status_t s = fg->ranks_stale ? weft__fg_rank_all(fg, true) : WEFT_OK;
    if (s != WEFT_OK) return s;
    if (!weft__fg_reserve(fg) || !weft__marks_begin(fg->alloc, &fg->amarks, fg->g->n_applies))
        return weft__fg_err(fg, WEFT_ENOMEM, "%s: out of memory (cycle check)", fn);
    uint64_t lo = mark_targets(fg, var, node);
    if (lo == UINT64_MAX) return WEFT_OK; /* only output slots: nothing to reach */
    weft_apply_t *hit;
    size_t sp;
    if (walk_to_target(fg, new_var->owner, lo, &hit, &sp) != WEFT_OK)
        return weft__fg_err(fg, WEFT_ENOMEM, "%s: out of memory (cycle check)", fn);
    if (!hit) return WEFT_OK;
    char cb[640], nb[256], ob[256];
    describe(cb, sizeof(cb), hit, (const rframe_t *)(void *)fg->dfs.p, sp);
    weft__var_describe(new_var, nb, sizeof(nb));
    if (node) {
        weft_apply_describe(node, ob, sizeof(ob));
        return weft__fg_err(fg, WEFT_ECYCLE,
                            "change_node_input: %s as input %zu of %s would close a cycle "
                            "(%zu nodes): %s",
                            nb, i, ob, sp + 1, cb);
    }
    weft__var_describe(var, ob, sizeof(ob));
    return weft__fg_err(fg, WEFT_ECYCLE, "replace: %s by %s would close a cycle (%zu nodes): %s",
                        ob, nb, sp + 1, cb);
}

/* ---- the full pass: recomputing ranks, finding a cycle
 * ------------------------ */

static weft_status_t full_cycle(weft_fgraph_t *fg, const rframe_t *st, size_t sp,
                                const weft_apply_t *a)
{
    size_t from = sp;
    while (from > 0 && st[from - 1].a != a) from--;
    from = from ? from - 1 : 0;
    char cb[WEFT__ERR_CAP - 64];
    describe(cb, sizeof(cb), st[from].a, st + from + 1, sp - from - 1);
    return weft__fg_err(fg, WEFT_ECYCLE, "graph contains a cycle (%zu nodes): %s", sp - from, cb);
}

static weft_status_t full_push(weft_fgraph_t *fg, weft_apply_t *a, size_t *sp, uint32_t gray)
{
    if (weft__marks_has(&fg->amarks, a->id, gray + 1)) return WEFT_OK;
    if (weft__marks_has(&fg->amarks, a->id, gray))
        return full_cycle(fg, (const rframe_t *)(void *)fg->dfs.p, *sp, a);
    if (!weft__vec_grow(fg->alloc, (void **)&fg->dfs.p, &fg->dfs.cap, (*sp + 1) * 2,
                        sizeof(void *)))
        return weft__fg_err(fg, WEFT_ENOMEM, "rank: out of memory");
    fg->amarks.v[a->id] = gray;
    ((rframe_t *)(void *)fg->dfs.p)[(*sp)++] = (rframe_t){a, 0};
    return WEFT_OK;
}

/* Post-order depth-first pass from root over the data edges. */
static weft_status_t full_from(weft_fgraph_t *fg, weft_apply_t *root, bool assign, uint32_t gray)
{
    size_t sp = 0;
    weft_status_t s = full_push(fg, root, &sp, gray);
    while (sp > 0 && s == WEFT_OK) {
        rframe_t *f = &((rframe_t *)(void *)fg->dfs.p)[sp - 1];
        weft_apply_t *a = f->a;
        if (f->next < a->n_in) {
            const weft_var_t *v = a->inputs[f->next++];
            if (v->owner && v->g == fg->g) s = full_push(fg, v->owner, &sp, gray);
            continue;
        }
        fg->amarks.v[a->id] = gray + 1;
        if (assign && weft__fg_has_apply(fg, a)) weft__fg_rank_import(fg, a, WEFT__RANK_GAP);
        sp--;
    }
    return s;
}

weft_status_t weft__fg_rank_all(weft_fgraph_t *fg, bool assign)
{
    if (!weft__fg_reserve(fg) || !weft__marks_begin(fg->alloc, &fg->amarks, fg->g->n_applies))
        return weft__fg_err(fg, WEFT_ENOMEM, "rank: out of memory");
    const uint32_t gray = fg->amarks.epoch;
    weft_status_t s = WEFT_OK;
    for (size_t k = 0; k < fg->n_applies && s == WEFT_OK; k++)
        s = full_from(fg, fg->applies[k], assign, gray);
    if (s == WEFT_OK && assign) fg->ranks_stale = false;
    return s;
}

weft_status_t weft__fg_check_ranks(weft_fgraph_t *fg)
{
    const weft_apply_t *bad = NULL, *bad_in = NULL;
    for (size_t k = 0; k < fg->n_applies && !bad; k++) {
        const weft_apply_t *a = fg->applies[k];
        for (uint32_t i = 0; i < a->n_in && !bad; i++) {
            const weft_apply_t *o = a->inputs[i]->owner;
            if (o && weft__fg_has_apply(fg, o) && fg->rank[o->id] >= fg->rank[a->id]) {
                bad = a;
                bad_in = o;
            }
        }
    }
    if (!bad && !fg->ranks_stale) return WEFT_OK; /* ranks ordered: no cycle can exist */
    weft_status_t s = weft__fg_rank_all(fg, false);
    if (s != WEFT_OK || !bad || fg->ranks_stale) return s;
    char ab[256], ob[256];
    weft_apply_describe(bad, ab, sizeof(ab));
    weft_apply_describe(bad_in, ob, sizeof(ob));
    return weft__fg_err(fg, WEFT_EINCONSISTENT,
                        "Inconsistent rank order: %s reads %s, which does not rank below it", ab,
                        ob);
}
