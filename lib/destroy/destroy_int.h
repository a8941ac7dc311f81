/* DestroyHandler internals shared by the files of lib/destroy/.
 *
 * Protocol (docs/destroy.md §2-3):
 *   Incremental state, kept exact by the callbacks (destroy_state.c):
 *     - imported: one flag per apply (double import / unknown prune ->
 *       WEFT_ESTATE);
 *     - the destroyer set (vector + position per node, O(1) add/remove);
 *     - the malformed set (nodes whose view_map/destroy_map breaks D0);
 *     - the view forest: parent per variable, children list per variable;
 *       re-parented on change_node_input of a viewed input.
 *   DH clients are the fgraph's clients minus Output pseudo-clients: the
 *   fgraph already keeps them exactly, so they are not duplicated here.
 *   Derived state, rebuilt lazily (destroy_rules.c) when `stale`:
 *     - droot / root_destroyer: var.epoch == dh.epoch marks a variable of a
 *       destroyed impact set, var.droot its root, root var.destroyer its node;
 *     - impact lists (one contiguous range of `impact` per destroyed root);
 *     - the D4 pairs, grouped per destroyer (node.pre_start/pre_len);
 *     - the D0-D3 verdict and its message.
 *   An edit marks the derived state stale only when it can change it: it
 *   touches a view or destroyer node, or a variable of a destroyed impact set
 *   (checked against the still-fresh maps). Every real edit marks the D5
 *   verdict stale (a data edge may close a cycle); it is recomputed by one
 *   O(V + E) DFS at the next validate and cached until the next edit.
 * Per-variable and per-apply records are dense arrays indexed by the
 * context-wide ids (weft_var_id / weft_apply_id), grown on demand. */
#ifndef WEFT_DESTROY_INT_H
#define WEFT_DESTROY_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/destroy.h"

typedef struct dh_var {
    weft_var_t *parent;      /* view parent; NULL: a root */
    weft_var_t **kids;       /* views of this variable */
    uint32_t n_kids, cap_kids;
    uint32_t epoch;          /* == dh.epoch: in a destroyed impact set */
    uint32_t impact_start;   /* roots: range of dh.impact */
    uint32_t impact_len;
    weft_var_t *droot;       /* valid when epoch matches */
    weft_apply_t *destroyer; /* roots: their destroyer, valid when epoch matches */
} dh_var_t;

enum { DH_IMPORTED = 1, DH_MALFORMED = 2 };

typedef struct dh_node {
    weft_apply_t *self;      /* set on import */
    uint32_t *in_heap;       /* preds when n_in > 2 */
    uint32_t in_inline[2];   /* preds: 1 + apply id of each input's owner, 0: none */
    uint32_t n_in;
    uint8_t flags;
    uint8_t color;           /* D5 DFS colour, valid when color_epoch matches */
    uint32_t dpos;           /* 1 + position in dh.destroyers; 0: not a destroyer */
    uint32_t mpos;           /* 1 + position in dh.malformed; 0: well-formed */
    uint32_t mark;           /* dedup stamp */
    uint32_t color_epoch;
    uint32_t pre_epoch;      /* == dh.epoch: pre_start/pre_len valid */
    uint32_t pre_start, pre_len;
} dh_node_t;

/* A node's data predecessors, kept by import / change so the D5 search walks
 * this dense table only (no pointer chasing through the graph). */
static inline uint32_t *dh_preds(dh_node_t *r)
{
    return r->n_in <= 2 ? r->in_inline : r->in_heap;
}

typedef struct dh_vec {
    void **items;
    size_t n, cap;
} dh_vec_t;

typedef struct dh {
    weft_feature_t feature;  /* first member: the weft_feature_t handed out */
    const weft_allocator_t *alloc;
    weft_fgraph_t *fg;       /* the fgraph served, NULL when unattached */

    dh_var_t *vars;
    size_t cap_vars;
    dh_node_t *nodes;
    size_t cap_nodes;

    dh_vec_t destroyers;     /* weft_apply_t*, the destroyer set */
    dh_vec_t malformed;      /* weft_apply_t*, nodes breaking D0 */

    /* An allocation failed inside a callback, so the tables may miss an edit:
     * the next query / validate / orderings rescans the graph first. */
    bool broken;

    /* derived state */
    bool stale;
    bool cycle_stale;
    uint32_t epoch;
    uint32_t stamp;
    weft_status_t verdict;   /* D0-D3 result of the last rebuild */
    bool maps_ok;            /* D0 and D1 passed: droot / destroyers complete */
    char *msg;               /* its message ("" when OK) */
    size_t msg_cap;
    weft_status_t cycle_verdict;
    char *cycle_msg;
    size_t cycle_msg_cap;
    weft_var_t **impact;     /* impact sets, one range per destroyed root */
    size_t n_impact, cap_impact;
    weft_apply_t **pre_before; /* D4 pairs */
    weft_apply_t **pre_after;
    uint32_t *pre_before_id;   /* apply ids of pre_before */
    size_t n_pre, cap_pre;
    void **scratch;          /* DFS stack and temporary lists */
    size_t cap_scratch;
} dh_t;

/* destroy_state.c */
dh_t *weft__dh_of(weft_feature_t *f);
weft_status_t weft__dh_find(weft_fgraph_t *fg, dh_t **out);
/* Grows the tables to every id of the context; weft__dh_var / weft__dh_node
 * then index without checks, and pointers stay valid until the next reserve. */
weft_status_t weft__dh_reserve(dh_t *dh);
/* Reserve, then rescan the graph if a callback failed to allocate. */
weft_status_t weft__dh_ready(dh_t *dh);
dh_var_t *weft__dh_var(dh_t *dh, const weft_var_t *v);
dh_node_t *weft__dh_node(dh_t *dh, const weft_apply_t *a);
weft_var_t *weft__dh_root(dh_t *dh, const weft_var_t *v);
weft_status_t weft__dh_vec_push(dh_t *dh, dh_vec_t *vec, void *item);
weft_status_t weft__dh_known_var(dh_t *dh, const weft_var_t *v);
int weft__dh_describe_var(const weft_var_t *v, char *buf, size_t cap);

/* A fresh stamp for mark / color_epoch; on wrap-around every mark is
 * cleared so an old stamp can never match. */
uint32_t weft__dh_next_stamp(dh_t *dh);

/* destroy_rules.c */
weft_status_t weft__dh_refresh(dh_t *dh);             /* rebuild derived state if stale */
weft_status_t weft__dh_report(dh_t *dh);              /* refresh; set fg error if rejected */
weft_status_t weft__dh_on_validate(weft_feature_t *self, weft_fgraph_t *fg);
weft_status_t weft__dh_orderings(weft_feature_t *self, weft_fgraph_t *fg,
                                 weft_orderings_t *out);
void weft__dh_clear_derived(dh_t *dh);
/* Whether u is in the destroyed impact set of root r (fresh maps). */
bool weft__dh_in_impact(dh_t *dh, const weft_var_t *u, const weft_var_t *r);
/* D5 helper: whether `target` is an ancestor (data edges plus current D4
 * orderings) of any of the n nodes (or one of them). Fresh maps required. */
weft_status_t weft__dh_reaches(dh_t *dh, weft_apply_t *const *from, size_t n,
                               const weft_apply_t *target, bool *found);

#endif /* WEFT_DESTROY_INT_H */
