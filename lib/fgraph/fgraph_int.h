/* Internal layout of a FunctionGraph, shared by lib/fgraph/fgraph*.c,
 * feature.c, fgraph_toposort.c and history.c.
 *
 * Indexes are arrays indexed by the context's dense ids:
 * - vflags[var id]: in the variable set / declared input;
 * - clients[var id]: a small vector of (node, index) pairs with order keys,
 *   allocated from per-fgraph size-class free lists (power-of-two
 *   capacities); removals leave tombstones (fgraph_clients.c);
 * - ibase[apply id] / islot: each (node, input) pair's slot in its input's
 *   client vector (O(1) removal);
 * - apos[apply id]: 1 + position in the dense `applies` list, 0 when the node
 *   is not in the apply set (removal swaps with the last entry: O(1));
 * - rank[apply id]: a topological numbering of the apply set, kept by every
 *   edit so that edits can refuse cycles cheaply (fgraph_rank.c).
 * Arrays grow to the context's id counts on demand, so every membership
 * test and client lookup is O(1) and no edit recomputes the whole graph. */
#ifndef WEFT_FGRAPH_INT_H
#define WEFT_FGRAPH_INT_H

#include "graph/graph_int.h"
#include "weft/feature.h"
#include "weft/fgraph.h"

#define WEFT__VF_IN 1u      /* in the variable set */
#define WEFT__VF_INPUT 2u   /* declared input */
#define WEFT__AF_REMOVED 1u /* listed in a successful replace_all_validate_remove */
#define WEFT__CLIENT_CLASSES 32

#define WEFT__CLIENT_NOKEY UINT64_MAX /* add: append; take: was not a client */

/* items[0, end) holds the live entries in order (keys increasing) and
 * tombstones (node NULL); n counts the live ones. */
typedef struct weft__cvec {
    weft_client_t *items; /* followed by 2 << cls uint64_t order keys */
    uint32_t n, end;
    uint32_t cls; /* capacity is 2 << cls once items != NULL */
} weft__cvec_t;

typedef struct weft__hist {
    weft_apply_t *node;
    weft_var_t *old_var;
    weft_var_t *new_var;
    size_t index;
    uint64_t old_key; /* order key of (node, index) in old_var's clients */
} weft__hist_t;

/* Growable vector of pointers used as scratch. */
typedef struct weft__pvec {
    void **p;
    size_t n, cap;
} weft__pvec_t;

/* One update pair: output slot `out` holds input `in`'s new value. */
typedef struct weft__fg_update {
    size_t out, in;
} weft__fg_update_t;

struct weft_orderings {
    weft_fgraph_t *fg;
    weft_status_t status;
};

struct weft_fgraph {
    weft_graph_t *g;
    const weft_allocator_t *alloc;
    weft_fgraph_t *prev, *next; /* the context's list of live fgraphs */

    weft_var_t **inputs;
    bool *input_mutable;
    size_t n_in, in_cap, mut_cap;
    bool has_mutable; /* input_mutable was given */

    weft_var_t **outputs;
    weft_apply_t **out_nodes; /* Output(k) pseudo-nodes */
    size_t n_out, out_cap, onode_cap;

    weft__fg_update_t *upd; /* update pairs (fgraph_update.c), in the order set */
    size_t n_upd, upd_cap;

    uint8_t *vflags;
    weft__cvec_t *clients;
    size_t vcap; /* min of the two capacities below */
    size_t vflags_cap, clients_cap;
    size_t n_vars_in;

    uint32_t *apos;
    uint8_t *aflags;
    uint64_t *rank; /* rank(owner of an input) < rank(node) on every data edge */
    size_t acap;    /* min of the three capacities below */
    size_t apos_cap, aflags_cap, rank_cap;
    /* A raise could not finish: recompute the ranks before trusting them. */
    bool ranks_stale;
    weft_apply_t **applies;
    size_t n_applies, applies_cap;
    /* Edges (node in the apply set, input i) whose input's owner does not have
     * a smaller id. 0: the apply set in id order is a topological order of the
     * data edges (toposort's fast path); kept by import, change and prune. */
    size_t n_back;
    /* `applies` lists the nodes in increasing id order: true until an entry
     * is appended out of order or a removal swaps the last entry forward. */
    bool applies_by_id;

    weft__marks_t amarks, vmarks;
    weft__arena_t carena; /* client vectors */
    weft_client_t *cfree[WEFT__CLIENT_CLASSES];
    uint64_t client_key; /* next order key */
    uint32_t *ibase;     /* per apply id: 1 + first slot in islot, 0 if none yet */
    size_t ibase_cap;
    uint32_t *islot; /* per (node, input): position in its input's client vector */
    size_t islot_n, islot_cap;

    weft_feature_t **features;
    size_t n_feat, feat_cap;
    weft_status_t cb_status; /* first callback error of the current edit */

    weft__hist_t *log;
    size_t n_log, log_cap;
    uint64_t token, token_counter;
    bool logging, reverting;
    bool reintroduced;
    char reintro_msg[256];
    /* For the History feature (history_feature.c), which reads them in its
     * callbacks: >0 while weft__fg_change_input runs (its imports and prunes
     * are consequences of the change), and the order key the changed
     * (node, i) had in the old variable's clients. */
    uint32_t change_depth;
    uint64_t last_old_key;
    /* Bumped when an output slot is dropped or an input removed: edits that
     * fire no event for the slot, after which older changes cannot be
     * undone. */
    uint64_t slots_epoch;
    /* Verbose rewriting (replace_hook.c): called per pair of each committed
     * replace_all_validate transaction. */
    weft_replace_hook_fn replace_hook;
    void *replace_hook_user;

    /* scratch */
    weft__pvec_t plan;     /* nodes to import, topological order */
    weft__pvec_t missing;  /* undeclared roots to add as inputs (import_missing) */
    weft__pvec_t dfs;      /* DFS frames */
    weft__pvec_t rc_stack; /* remove_client worklist (var, node, index triples) */
    weft__pvec_t rm_stack; /* remove_node worklist */
    weft__pvec_t raise;    /* rank raising worklist */
    weft__pvec_t topo;
    weft__pvec_t roots, roots_tmp; /* toposort: the apply set in increasing id order */
    weft__pvec_t ord_before, ord_after;
    weft__pvec_t vars; /* weft_fgraph_variables' result */
    uint32_t *ord_head; /* per apply id: first pair index + 1, valid if ord_stamp matches */
    uint32_t *ord_stamp;
    size_t ord_cap; /* min of the two capacities below */
    size_t ord_head_cap, ord_stamp_cap;
    uint32_t *ord_next;
    size_t ord_next_cap;
    uint32_t ord_epoch;

    char err[WEFT__ERR_CAP];
};

bool weft__pvec_push(const weft_allocator_t *al, weft__pvec_t *v, void *x);
void weft__pvec_free(const weft_allocator_t *al, weft__pvec_t *v);

weft_status_t weft__fg_err(weft_fgraph_t *fg, weft_status_t s, const char *fmt, ...)
    WEFT_PRINTF(3, 4);
/* Grows the per-id arrays to the context's current counts. */
bool weft__fg_reserve(weft_fgraph_t *fg);

static inline bool weft__fg_has_var(const weft_fgraph_t *fg, const weft_var_t *v)
{
    return v->id < fg->vcap && (fg->vflags[v->id] & WEFT__VF_IN);
}
static inline bool weft__fg_is_input(const weft_fgraph_t *fg, const weft_var_t *v)
{
    return v->id < fg->vcap && (fg->vflags[v->id] & WEFT__VF_INPUT);
}
static inline bool weft__fg_has_apply(const weft_fgraph_t *fg, const weft_apply_t *a)
{
    return a->id < fg->acap && fg->apos[a->id] != 0;
}
/* Input v of node a goes backwards in id order (see n_back). */
static inline bool weft__fg_back_edge(const weft_apply_t *a, const weft_var_t *v)
{
    return v->owner && v->owner->id >= a->id;
}
/* An Output(k) pseudo-node currently used by fg. */
static inline bool weft__fg_is_live_slot(const weft_fgraph_t *fg, const weft_apply_t *a)
{
    return a->slot_fg == fg && a->slot < fg->n_out && fg->out_nodes[a->slot] == a;
}

/* Checks a variable argument (NULL, foreign); message names it. */
weft_status_t weft__fg_check_var(weft_fgraph_t *fg, const weft_var_t *v, const char *what);

/* Import: plan validates without changing anything; commit applies the plan. */
weft_status_t weft__fg_plan_import(weft_fgraph_t *fg, weft_var_t *v, weft_apply_t *node,
                                   bool import_missing);
weft_status_t weft__fg_commit_import(weft_fgraph_t *fg, weft_var_t *v, const char *reason,
                                     uint64_t rank_step);
/* Client vectors (fgraph_clients.c). Adds (node, i) to v's clients: appended
 * with a new order key (key WEFT__CLIENT_NOKEY) or put back at the place of
 * the given key (revert). False on OOM (nothing changed). */
bool weft__fg_add_client(weft_fgraph_t *fg, weft_var_t *v, weft_apply_t *node, size_t i,
                         uint64_t key);
/* The slot of (node, i) in its input's client vector (UINT32_MAX: none yet). */
uint32_t weft__fg_client_slot(const weft_fgraph_t *fg, const weft_apply_t *node, size_t i);
/* Removes (node, i) from v's clients, found at slot (UINT32_MAX: node's
 * recorded slot); returns its key, WEFT__CLIENT_NOKEY if it was absent. */
uint64_t weft__fg_client_take(weft_fgraph_t *fg, const weft_var_t *v, const weft_apply_t *node,
                              size_t i, uint32_t slot);
/* v's client vector without tombstones (compacts it; order unchanged). */
const weft__cvec_t *weft__fg_clients_live(const weft_fgraph_t *fg, const weft_var_t *v);
/* Removes (node, i) (at slot, see take) from v's clients and prunes what
 * became unused; *key gets the entry's order key (WEFT__CLIENT_NOKEY if it was
 * absent). */
weft_status_t weft__fg_remove_client(weft_fgraph_t *fg, weft_var_t *v, weft_apply_t *node, size_t i,
                                     uint32_t slot, const char *reason, uint64_t *key);
/* Prunes node: leaves the apply set, outputs leave the variable set, on_prune. */
void weft__fg_detach_node(weft_fgraph_t *fg, weft_apply_t *node, const char *reason);
weft_status_t weft__fg_add_input(weft_fgraph_t *fg, weft_var_t *v, bool is_mutable);
/* Appends an output slot for v (plans and commits v's import first). */
weft_status_t weft__fg_add_output(weft_fgraph_t *fg, weft_var_t *v, bool import_missing,
                                  const char *reason);
/* Drops output slot k without touching the clients of its variable (and
 * the update pair naming it; later slots' pairs are renumbered). */
void weft__fg_drop_output_slot(weft_fgraph_t *fg, size_t k);

/* Update pairs (fgraph_update.c): drops the pair naming input k (input) or
 * output slot k and renumbers the later positions. */
void weft__fg_updates_drop(weft_fgraph_t *fg, size_t k, bool input);
/* Copies src's pairs into dst (same input and output positions). Errors:
 * WEFT_ENOMEM (dst unchanged). */
weft_status_t weft__fg_updates_copy(const weft_fgraph_t *src, weft_fgraph_t *dst);

/* The primitive edit; key: the order key (node, i) gets back in new_var's
 * clients (WEFT__CLIENT_NOKEY: appended). */
weft_status_t weft__fg_change_input(weft_fgraph_t *fg, weft_apply_t *node, size_t i,
                                    weft_var_t *new_var, const char *reason, bool check,
                                    uint64_t key);

/* Rank index and cycle checks (fgraph_rank.c). A node imported by itself
 * ranks WEFT__RANK_GAP above its highest input owner, one imported under an
 * edit 1 above: the gap leaves room for replacements below their clients. */
#define WEFT__RANK_GAP 16
/* Sets a's rank from its input owners' (a is joining the apply set). */
void weft__fg_rank_import(weft_fgraph_t *fg, weft_apply_t *a, uint64_t step);
/* After node's input became v (in fg): raises node and the clients above it
 * until every edge goes up again (marks the ranks stale if it cannot). */
void weft__fg_rank_edge(weft_fgraph_t *fg, weft_apply_t *node, const weft_var_t *v);
/* WEFT_ECYCLE, naming the cycle, if making new_var input i of node (node
 * NULL: of every client of var, as replace does) would close a cycle; also
 * WEFT_ENOMEM. Changes nothing but scratch. */
weft_status_t weft__fg_refuse_cycle(weft_fgraph_t *fg, const weft_var_t *var, weft_apply_t *node,
                                    size_t i, weft_var_t *new_var);
/* Depth-first pass over the apply set's data edges: WEFT_ECYCLE naming a
 * cycle, else (assign) recomputes every rank. */
weft_status_t weft__fg_rank_all(weft_fgraph_t *fg, bool assign);
/* check_integrity's cycle and rank-order condition (docs/fgraph.md §4). */
weft_status_t weft__fg_check_ranks(weft_fgraph_t *fg);

/* Callback dispatch (feature.c). */
/* WEFT_ENOMEM from feature f's hook: keeps the feature's message if it says
 * so, else "hook: feature Name: out of memory". */
weft_status_t weft__fg_feature_nomem(weft_fgraph_t *fg, const weft_feature_t *f, const char *hook);
void weft__fg_fire_import(weft_fgraph_t *fg, weft_apply_t *node, const char *reason);
void weft__fg_fire_prune(weft_fgraph_t *fg, weft_apply_t *node, const char *reason);
void weft__fg_fire_change(weft_fgraph_t *fg, weft_apply_t *node, size_t i, weft_var_t *old_var,
                          weft_var_t *new_var, const char *reason);
void weft__fg_detach_all_features(weft_fgraph_t *fg);
/* Collects every feature's orderings into fg->ord_before / ord_after. */
weft_status_t weft__fg_collect_orderings(weft_fgraph_t *fg);

/* The start of weft's own heap features (History, NodeFinder): freed through
 * the allocator of the fgraph they were made for. */
typedef struct weft__fg_feature_hdr {
    weft_feature_t base; /* first member */
    const weft_allocator_t *alloc;
} weft__fg_feature_hdr_t;
/* Attaches a zeroed feature of `size` bytes (starting with the header) of
 * class cls, unless one of that class is attached already (WEFT_OK).
 * Errors: WEFT_ENOMEM (message names what), or on_attach's error. */
weft_status_t weft__fg_attach_new(weft_fgraph_t *fg, const weft_feature_class_t *cls, size_t size);

/* History (history.c): records one change when a checkpoint is active. */
void weft__fg_log_change(weft_fgraph_t *fg, weft_apply_t *node, size_t i, weft_var_t *old_var,
                         weft_var_t *new_var, uint64_t old_key);
/* Reports a committed transaction's pairs to the replace hook (if any). */
void weft__fg_report_replace(weft_fgraph_t *fg, size_t n, weft_var_t *const *vars,
                             weft_var_t *const *new_vars, const char *reason);
/* Marks an imported node that a successful *_remove had removed. */
void weft__fg_note_import(weft_fgraph_t *fg, weft_apply_t *node);

#endif /* WEFT_FGRAPH_INT_H */
