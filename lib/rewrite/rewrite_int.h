/* Internal interface of the rewrite module: the rewriter object layout, the
 * per-node replacement step shared by walkers and the equilibrium driver, the
 * import tracker, statistics hooks and the helpers the built-in rewrites share.
 * Not part of the API. */
#ifndef WEFT_REWRITE_REWRITE_INT_H
#define WEFT_REWRITE_REWRITE_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/vec.h"
#include "weft/fgraph.h"
#include "weft/graph.h"
#include "weft/op.h"
#include "weft/rewrite.h"
#include "weft/rewrite_db.h"
#include "weft/rewrite_pattern.h"

typedef enum rw_kind {
    RW_NODE = 0,
    RW_GRAPH = 1,
    RW_WALK = 2,
    RW_EQUILIBRIUM = 3,
    RW_SEQUENCE = 4,
} rw_kind_t;

/* A list of rewriters (each holding one reference), with a dispatch index
 * built by weft__rw_list_take when every item is a node rewriter tracking
 * classes only (or nothing) and there are at most 64: for each tracked class
 * the set of items tracking it, so trying a node costs one lookup of its
 * class instead of asking every item. cls NULL: no index (tier scan). */
typedef struct weft__rw_list {
    size_t n;
    weft_rewriter_t **items;
    size_t n_cls;
    const weft_op_class_t **cls;
    uint64_t *cls_mask; /* bit k: items[k] tracks cls[j] */
    uint64_t untracked; /* bit k: items[k] tracks every op */
} weft__rw_list_t;

struct weft_rewriter {
    atomic_size_t refs;
    rw_kind_t kind;
    char *name;
    void *user;
    void (*user_free)(void *user);
    /* RW_NODE */
    weft_node_rewrite_fn transform;
    size_t n_classes, n_ops;
    const weft_op_class_t **classes;
    const weft_op_t **ops;
    /* RW_GRAPH */
    weft_graph_rewrite_fn graph_fn;
    /* RW_WALK (node = children), RW_SEQUENCE (node = children),
     * RW_EQUILIBRIUM (all four) */
    weft_walk_order_t order;
    bool ignore_newtrees;
    double max_use_ratio;
    weft__rw_list_t node, global, final, cleanup;
};

/* Builds an empty rewriter of kind with a copy of name (refcount 1). */
weft_status_t weft__rw_new(rw_kind_t kind, const char *name, weft_rewriter_t **out);
/* Releases every rewriter of a caller's array (ownership transfer on error). */
void weft__rw_release_array(size_t n, weft_rewriter_t *const *rws);
/* Takes the n rewriters into list (NULL array with n > 0 / NULL entry:
 * WEFT_EINVAL, and the remaining ones are released by the caller's path). */
weft_status_t weft__rw_list_take(weft__rw_list_t *list, size_t n, weft_rewriter_t *const *rws);
void weft__rw_list_fini(weft__rw_list_t *list);

/* Whether the node rewriter tracks op: 2 by class, 1 by instance, 0 untracked
 * (tracks everything), -1 not applicable. */
int weft__rw_tracks(const weft_rewriter_t *rw, const weft_op_t *op);

/* The replacement step (docs/rewrites.md §1.2): runs rw's transform on
 * node and, if it proposes something, replace_all_validate(_remove).
 * *applied: the graph changed. A rejected/failed rewrite is counted in stats
 * and is not an error; WEFT_ENOMEM is returned. */
weft_status_t weft__rw_process_node(weft_rewriter_t *rw, weft_fgraph_t *fg, weft_apply_t *node,
                                    weft_rewrite_stats_t *stats, bool *applied);

/* Tries the rewriters of list on node in tracker order (class, instance,
 * untracked); stops at the first success (*which: its index in list). */
weft_status_t weft__try_node(const weft__rw_list_t *list, weft_fgraph_t *fg, weft_apply_t *node,
                             weft_rewrite_stats_t *stats, size_t *which, bool *applied);

/* Applies any rewriter (dispatch on kind); *n_changes may be NULL. */
/* The message of a rewriter's WEFT_ENOMEM (other statuses pass through, and
 * nothing is done on success): a leaf (graph or node rewriter) puts its name
 * before the message of the step that ran out ("local_gemm: replace: out of
 * memory") or says it alone ("local_gemm: out of memory"); a driver (walk,
 * equilibrium, sequence) only supplies "name: out of memory" when the message
 * does not say it. */
weft_status_t weft__rw_nomem(weft_fgraph_t *fg, const char *name, weft_status_t st, bool leaf);
weft_status_t weft__rw_apply(weft_rewriter_t *rw, weft_fgraph_t *fg, weft_rewrite_stats_t *stats,
                             size_t *n_changes);
weft_status_t weft__walk_apply(weft_rewriter_t *rw, weft_fgraph_t *fg,
                               weft_rewrite_stats_t *stats, size_t *n_changes);
weft_status_t weft__equilibrium_apply(weft_rewriter_t *rw, weft_fgraph_t *fg,
                                      weft_rewrite_stats_t *stats, size_t *n_changes);
weft_status_t weft__sequence_apply(weft_rewriter_t *rw, weft_fgraph_t *fg,
                                   weft_rewrite_stats_t *stats, size_t *n_changes);

/* ---- import tracker: records nodes imported while it is attached ---------- */
typedef struct weft__tracker weft__tracker_t;
/* Attaches a tracker to fg. *out is borrowed from fg; detach with
 * weft__tracker_detach. */
weft_status_t weft__tracker_attach(weft_fgraph_t *fg, weft__tracker_t **out);
void weft__tracker_detach(weft_fgraph_t *fg, weft__tracker_t *t);
/* Moves the recorded nodes out (appending to *arr, growing it) and clears. */
weft_status_t weft__tracker_drain(weft__tracker_t *t, weft_apply_t ***arr, size_t *n,
                                  size_t *cap);
/* Whether the tracker saw a change (import, prune or input change) since the
 * last call; clears the flag. */
bool weft__tracker_changed(weft__tracker_t *t);

/* ---- statistics ------------------------------------------------------------ */
/* Records a composite's run: time, passes, nodes before/after. */
weft_status_t weft__stats_composite(weft_rewrite_stats_t *s, const char *name, double seconds,
                                    size_t passes, size_t nodes_before, size_t nodes_after);

/* A malloc'ed copy of s (NULL on out-of-memory); strdup is not C11. */
static inline char *weft__strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

/* ---- helpers for built-in rewrites (canon_util.c) ----------------------------- */
/* The op class registered under name (weft_ops_find_class) or NULL. */
const weft_op_class_t *weft__class(const char *name);
/* Registry classes the built-in rewrites compare against, looked up once
 * (NULL: not built in). */
typedef struct weft__classes {
    const weft_op_class_t *dimshuffle, *sum, *sum_axes, *dot, *gemm, *reduce_grad;
} weft__classes_t;
const weft__classes_t *weft__classes(void);
/* Whether v's value is a constant with every element equal to value. */
bool weft__is_const_value(const weft_var_t *v, double value);
/* Whether new_var may replace old (docs/rewrites.md §5): is_super of the
 * type, same dtype, and no broadcast dropped: new_var has no static length 1
 * where old's length is not known to be 1 (is_super accepts that, but old may
 * be a broadcast result, longer at run time). */
bool weft__can_replace(const weft_var_t *old_var, const weft_var_t *new_var);
/* The elementwise kind of node's op if it is an out-of-place elementwise op. */
bool weft__ew_kind(const weft_apply_t *node, int *kind);
/* The producer of v if it is an out-of-place elementwise op of kind. */
weft_apply_t *weft__ew_owner(const weft_var_t *v, int kind);
/* The DimShuffle order of op (weft_dimshuffle_op_info); false if op is not a
 * DimShuffle. */
bool weft__dimshuffle_order(const weft_op_t *op, int *order, int *n);
/* A 0-d constant of dtype in g. */
weft_status_t weft__scalar(weft_graph_t *g, weft_dtype_t dtype, double value, weft_var_t **out);

/* Node rewrite functions and names of the built-in canonicalizations. */
typedef struct weft__builtin_node {
    const char *name;
    weft_node_rewrite_fn fn;
    const char *track[4]; /* class names tracked (NULL-terminated; none: every node) */
} weft__builtin_node_t;
extern const weft__builtin_node_t weft__builtin_nodes[];
extern const size_t weft__n_builtin_nodes;
/* The IfElse rewrites (ifelse_rewrites.c, docs/control-flow.md §3). */
extern const weft__builtin_node_t weft__ifelse_nodes[];
extern const size_t weft__n_ifelse_nodes;
/* The symbolic-shape canonicalizations (shape_rewrite.c). */
extern const weft__builtin_node_t weft__shape_nodes[];
extern const size_t weft__n_shape_nodes;
/* constant_dimshuffle (fold.c): a graph rewriter folding padding DimShuffles
 * of constants in one transaction. */
weft_status_t weft__constant_dimshuffle_create(const char *name, weft_rewriter_t **out);
/* local_gemm (gemm_rewrite.c). */
weft_status_t weft__local_gemm(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                               weft_rewrite_result_t *res);
/* local_einsum_lower (einsum_rewrite.c). */
weft_status_t weft__local_einsum_lower(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                       weft_rewrite_result_t *res);
/* local_elemwise_fusion (fusion.c). */
weft_status_t weft__local_elemwise_fusion(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                          weft_rewrite_result_t *res);
/* In-place variants (inplace.c): whether op is out of place and its class has
 * an inplace_variant hook; the node computing node's outputs by destroying
 * input i when the op has that variant and the DestroyHandler accepts it
 * (*nn NULL otherwise; built, not imported). Errors: WEFT_ENOMEM only. */
bool weft__inplace_has_variant(const weft_op_t *op);
weft_status_t weft__inplace_variant_node(weft_fgraph_t *fg, weft_apply_t *node, size_t i,
                                         weft_apply_t **nn);
/* The critical-path model of the inplace rewrite (inplace_cp.c,
 * docs/rewrites.md §6.6). create: over fg's current nodes, edges and costs;
 * replacements may lengthen the critical path to (1 + slack) times the
 * initial one (*out NULL: a graph too large to model, everything allowed).
 * allows: whether ordering node after the readers rd[0..n_rd) keeps the
 * critical path within that (cp NULL: yes). accept: node was replaced by nn,
 * ordered after those readers. length: the critical path, initial or now.
 * Errors: WEFT_ENOMEM, create also fg's toposort error. */
typedef struct weft__cp weft__cp_t;
weft_status_t weft__cp_create(weft_fgraph_t *fg, double slack, weft__cp_t **out);
void weft__cp_destroy(weft__cp_t *cp);
bool weft__cp_allows(const weft__cp_t *cp, const weft_apply_t *node, size_t n_rd,
                     weft_apply_t *const *rd);
weft_status_t weft__cp_accept(weft__cp_t *cp, const weft_apply_t *node, const weft_apply_t *nn,
                              size_t n_rd, weft_apply_t *const *rd);
double weft__cp_length(const weft__cp_t *cp, bool initial);
/* Pattern-based built-ins (canon_pattern.c). */
/* The stabilization rewrites (stabilize.c), by index and by name
 * (WEFT_ENOTFOUND for another name). */
size_t weft__stabilize_count(void);
const char *weft__stabilize_name(size_t i);
weft_status_t weft__stabilize_create(const char *name, weft_rewriter_t **out);
weft_status_t weft__pattern_builtin_create(const char *name, weft_rewriter_t **out);
bool weft__pattern_builtin_exists(const char *name);

#endif /* WEFT_REWRITE_REWRITE_INT_H */
