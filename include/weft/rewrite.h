/* Graph rewriting: rewriter objects, how they walk a FunctionGraph, rewrite
 * statistics, and the mode entry point used by the compiler.
 *
 * A rewriter (weft_rewriter_t) is one of:
 *   - a node rewriter: a function that looks at one apply node and may return
 *     replacements for its outputs (weft_rewriter_node_create). It "tracks"
 *     op classes and/or op instances; it is only offered nodes whose op
 *     matches (no tracks: every node). Applied to a graph on its own it walks
 *     in topological order (as in2out).
 *   - a graph rewriter: a function over the whole fgraph
 *     (weft_rewriter_graph_create), e.g. merging (weft/rewrite_db.h).
 *   - a walker over node rewriters: in2out (topological order, inputs first)
 *     or out2in (reverse). Nodes imported during the walk are queued too, so
 *     rewrites see their own results (unless ignore_newtrees).
 *   - an equilibrium driver: repeats global rewriters, a walk of its node
 *     rewriters (outputs first), final rewriters and cleanup rewriters until a
 *     pass changes nothing; bounded by max_use_ratio (WEFT_ENOCONVERGE).
 *   - a sequence: graph rewriters run in order.
 * Pattern rewriters (weft/rewrite_pattern.h) are node rewriters built from
 * data; the database of named, tagged rewrites grouped into modes is in
 * weft/rewrite_db.h.
 *
 * Every replacement goes through weft_fgraph_replace_all_validate (or its
 * _remove form): a rewrite that a feature rejects (DestroyHandler,
 * Supervisor, a user feature) is reverted, leaves the graph exactly as it
 * was, counts as a failure in the statistics and the walk moves on.
 *
 * Ownership: rewriters are reference counted. *_create returns one reference
 * (free with weft_rewriter_release); composite constructors (walkers,
 * equilibrium, sequence) and the database take the references they are given,
 * on every outcome (on error they are released). weft_rewriter_retain shares.
 * Thread: a rewriter holds no per-run state: one rewriter may be applied to
 * different fgraphs from several threads at once (each fgraph by one thread);
 * retain/release are atomic. User callbacks must be as re-entrant as that. */
#ifndef WEFT_REWRITE_H
#define WEFT_REWRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "weft/export.h"
#include "weft/fgraph.h"
#include "weft/graph.h"
#include "weft/op.h"
#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_rewriter weft_rewriter_t;
typedef struct weft_rewrite_result weft_rewrite_result_t;
typedef struct weft_rewrite_stats weft_rewrite_stats_t;

/* ---- statistics ------------------------------------------------------------
 * Per rewriter name: how often it fired (applied), how often a replacement it
 * proposed was rejected or its callback failed (failed), and the time spent in
 * it (callback plus replacement and validation). Composite rewriters also
 * record their passes and node counts before/after. Entries accumulate over
 * every apply given the same stats object. */

/* Ownership: returns new, free with weft_rewrite_stats_destroy.
 * Errors: WEFT_EINVAL (NULL out), WEFT_ENOMEM. Thread: a stats object is
 * used by one thread at a time. */
WEFT_API weft_status_t weft_rewrite_stats_create(weft_rewrite_stats_t **out);
/* NULL is a no-op. */
WEFT_API void weft_rewrite_stats_destroy(weft_rewrite_stats_t *s);
/* Forgets every entry. NULL is a no-op. */
WEFT_API void weft_rewrite_stats_reset(weft_rewrite_stats_t *s);
/* The counts of the rewriter named `name`; each out pointer may be NULL.
 * Errors: WEFT_EINVAL (NULL s/name), WEFT_ENOTFOUND (no entry: it never ran). */
WEFT_API weft_status_t weft_rewrite_stats_get(const weft_rewrite_stats_t *s, const char *name,
                                              uint64_t *applied, uint64_t *failed,
                                              double *seconds);
/* Number of entries and the name of entry i (in first-seen order; NULL when
 * out of range). Returns borrowed, valid until reset/destroy. */
WEFT_API size_t weft_rewrite_stats_n_entries(const weft_rewrite_stats_t *s);
WEFT_API const char *weft_rewrite_stats_name(const weft_rewrite_stats_t *s, size_t i);
/* Prints the profile (docs/rewrites.md §8 style): per composite rewriter its
 * time, passes and node counts, then one line per rewriter
 * "  <seconds>s - <applied> applied - <failed> failed - <name>", sorted by time.
 * Errors: WEFT_EINVAL (NULL), WEFT_EIO (write failed). */
WEFT_API weft_status_t weft_rewrite_stats_print(const weft_rewrite_stats_t *s, FILE *f);

/* ---- node rewriters ------------------------------------------------------- */

/* A node rewrite: inspects `node` (in fg) and either returns WEFT_OK with res
 * left empty (not applicable), or records replacements in res and returns
 * WEFT_OK. A non-OK status is a failure of this rewrite on this node: it is
 * counted and the node is left unchanged, except WEFT_ENOMEM which aborts the
 * whole rewrite and is returned. The callback must not edit fg itself; it
 * builds new nodes in fg's context (weft_fgraph_graph) and returns them.
 * Building is speculative: the callback runs with the context's kept
 * constructor error set aside (so weft_graph_error tells whether one of its
 * own constructors failed: return that status), and what it keeps is
 * dropped afterwards, so a failed rewrite leaves no error on the user's
 * graph (weft/graph.h "Errors"). Graph rewriters run the same way. */
typedef weft_status_t (*weft_node_rewrite_fn)(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                              weft_rewrite_result_t *res);

/* Recording replacements inside a node rewrite.
 * _outputs: the list form, one new variable per output of node (NULL entry:
 * that output must have no clients - otherwise the rewrite fails). Pairs whose
 * new is the old are dropped; if none remain the rewrite did not apply.
 * _replace: one {old, new} pair (the map form). _remove: a node that must be
 * gone after the replacement (weft_fgraph_replace_all_validate_remove).
 * Ownership: borrows everything. Errors: WEFT_EINVAL (NULL res/var, n not the
 * node's output count), WEFT_ENOMEM. */
WEFT_API weft_status_t weft_rewrite_result_outputs(weft_rewrite_result_t *res, size_t n,
                                                   weft_var_t *const *new_outputs);
WEFT_API weft_status_t weft_rewrite_result_replace(weft_rewrite_result_t *res,
                                                   weft_var_t *old_var, weft_var_t *new_var);
WEFT_API weft_status_t weft_rewrite_result_remove(weft_rewrite_result_t *res,
                                                  weft_apply_t *node);

typedef struct weft_node_rewriter_desc {
    size_t size;                   /* sizeof(weft_node_rewriter_desc_t) */
    const char *name;              /* required; copied */
    weft_node_rewrite_fn transform; /* required */
    void *user;                    /* passed to transform */
    void (*user_free)(void *user); /* called on the last release (may be NULL) */
    /* Tracked op classes (n_classes entries) and op instances (matched with
     * weft_op_equal). Both NULL/0: every node. A non-NULL array with count 0,
     * or a NULL entry, is WEFT_EINVAL. */
    size_t n_classes;
    const weft_op_class_t *const *classes;
    size_t n_ops;
    const weft_op_t *const *ops;
} weft_node_rewriter_desc_t;

#define WEFT_NODE_REWRITER_DESC_INIT \
    {sizeof(weft_node_rewriter_desc_t), NULL, NULL, NULL, NULL, 0, NULL, 0, NULL}

/* A node rewriter. Tracked ops are borrowed (they must outlive the rewriter);
 * classes are borrowed (static storage is typical).
 * Ownership: returns new, release with weft_rewriter_release. user is taken
 * when user_free is given (freed on the last release, also when creation
 * fails).
 * Errors: WEFT_EINVAL (NULL desc/out/name/transform, desc->size too small,
 * empty or NULL-entry tracks), WEFT_ENOMEM. */
WEFT_API weft_status_t weft_rewriter_node_create(const weft_node_rewriter_desc_t *desc,
                                                 weft_rewriter_t **out);

/* ---- graph rewriters ------------------------------------------------------ */

/* A whole-graph rewrite. Sets *n_changes to the number of successful rewrites
 * it made (the equilibrium driver repeats while something changed). stats may
 * be NULL; the callback may record into it with weft_rewrite_stats_record. */
typedef weft_status_t (*weft_graph_rewrite_fn)(weft_fgraph_t *fg, void *user,
                                               weft_rewrite_stats_t *stats, size_t *n_changes);

/* Ownership and Errors as weft_rewriter_node_create (name and fn required). */
WEFT_API weft_status_t weft_rewriter_graph_create(const char *name, weft_graph_rewrite_fn fn,
                                                  void *user, void (*user_free)(void *user),
                                                  weft_rewriter_t **out);

/* Adds to the entry `name` of s (creating it): applied, failed and seconds.
 * For graph rewrite callbacks. NULL s: no-op (WEFT_OK).
 * Errors: WEFT_EINVAL (NULL name), WEFT_ENOMEM. */
WEFT_API weft_status_t weft_rewrite_stats_record(weft_rewrite_stats_t *s, const char *name,
                                                 uint64_t applied, uint64_t failed,
                                                 double seconds);

/* ---- composites ------------------------------------------------------------ */

typedef enum weft_walk_order {
    WEFT_WALK_IN2OUT = 0, /* topological order: producers before consumers */
    WEFT_WALK_OUT2IN = 1, /* reverse topological order */
} weft_walk_order_t;

/* A walker applying node rewriters (n >= 1; each must be a node rewriter) to
 * every node in `order`. Per node the rewriters are tried in tracker order
 * (those tracking the node's class, then its op instance, then untracked, each
 * in the given order) and the first that applies wins. Nodes imported by a
 * rewrite are queued (appended) unless ignore_newtrees; queued nodes no longer
 * in the graph are skipped.
 * Ownership: takes the n rewriters (on every outcome); returns new.
 * Errors: WEFT_EINVAL (NULL name/out/array/entry, n == 0, an entry that is not
 * a node rewriter), WEFT_ENOMEM. */
WEFT_API weft_status_t weft_rewriter_walk_create(const char *name, weft_walk_order_t order,
                                                 bool ignore_newtrees, size_t n,
                                                 weft_rewriter_t *const *node_rewriters,
                                                 weft_rewriter_t **out);

typedef struct weft_equilibrium_desc {
    size_t size;         /* sizeof(weft_equilibrium_desc_t) */
    const char *name;    /* required; copied */
    size_t n_node;       /* node rewriters, tried per node (outputs first) */
    weft_rewriter_t *const *node;
    size_t n_global;     /* graph rewriters run at the start of each pass */
    weft_rewriter_t *const *global;
    size_t n_final;      /* rewriters run at the end of each pass (e.g. folding) */
    weft_rewriter_t *const *final;
    size_t n_cleanup;    /* run after each success and after globals/finals (merge) */
    weft_rewriter_t *const *cleanup;
    /* A single rewriter applied more than max_use_ratio * (max node count
     * seen) times stops the loop with WEFT_ENOCONVERGE. 0: 8. */
    double max_use_ratio;
    bool ignore_newtrees;
} weft_equilibrium_desc_t;

#define WEFT_EQUILIBRIUM_DESC_INIT \
    {sizeof(weft_equilibrium_desc_t), NULL, 0, NULL, 0, NULL, 0, NULL, 0, NULL, 0.0, false}

/* The fixpoint driver (docs/rewrites.md §1.4). When it does not converge it
 * returns WEFT_ENOCONVERGE with a message on fg naming the offending rewriter
 * and its count; the graph keeps every rewrite done so far (valid, just not at
 * a fixpoint).
 * Ownership: takes every rewriter listed (on every outcome); returns new.
 * Errors: WEFT_EINVAL (NULL desc/name/out, a NULL array with count > 0, a
 * NULL entry, a non-node rewriter in node, max_use_ratio < 0), WEFT_ENOMEM. */
WEFT_API weft_status_t weft_rewriter_equilibrium_create(const weft_equilibrium_desc_t *desc,
                                                        weft_rewriter_t **out);

/* Runs the n rewriters in order. A rewriter's error (other than WEFT_ENOMEM)
 * is recorded as a failure (message on fg) and the sequence goes on; the
 * first such error is returned at the end once everything ran.
 * Ownership: takes the rewriters; returns new. Errors: WEFT_EINVAL (NULL
 * name/out/array/entry), WEFT_ENOMEM, or the first rewriter error. */
WEFT_API weft_status_t weft_rewriter_sequence_create(const char *name, size_t n,
                                                     weft_rewriter_t *const *rewriters,
                                                     weft_rewriter_t **out);

/* ---- using rewriters ----------------------------------------------------- */

/* Applies rw to fg (attaching the features it needs first, e.g. the merge
 * feature or a DestroyHandler). stats may be NULL.
 * Ownership: borrows everything. Thread: fg by one thread; see the top.
 * Errors: WEFT_EINVAL (NULL rw/fg), WEFT_ENOCONVERGE (an equilibrium did not
 * converge; message on fg names the rewriter), WEFT_ENOMEM, a graph
 * rewriter's own error, WEFT_ECYCLE / WEFT_EINCONSISTENT when fg is invalid
 * before the rewrite (toposort fails). */
WEFT_API weft_status_t weft_rewriter_apply(weft_rewriter_t *rw, weft_fgraph_t *fg,
                                           weft_rewrite_stats_t *stats);
/* Returns rw (NULL: no-op). */
WEFT_API weft_rewriter_t *weft_rewriter_retain(weft_rewriter_t *rw);
/* Drops a reference; the last frees rw (and its children). NULL: no-op. */
WEFT_API void weft_rewriter_release(weft_rewriter_t *rw);
/* The name (borrowed, valid while rw lives); NULL for NULL. */
WEFT_API const char *weft_rewriter_name(const weft_rewriter_t *rw);
/* Whether rw is a node rewriter. */
WEFT_API bool weft_rewriter_is_node(const weft_rewriter_t *rw);
/* Applies the node rewriter rw to the single node (in fg) once, with the same
 * replacement rules as a walk. *applied tells whether it changed fg.
 * Errors: WEFT_EINVAL (NULL, rw not a node rewriter), WEFT_ENOTFOUND (node not
 * in fg), WEFT_ENOMEM. A rejected replacement is not an error (*applied false,
 * failure counted in stats, reason in weft_fgraph_last_error). */
WEFT_API weft_status_t weft_rewriter_apply_node(weft_rewriter_t *rw, weft_fgraph_t *fg,
                                                weft_apply_t *node, weft_rewrite_stats_t *stats,
                                                bool *applied);

/* ---- modes (the compiler's entry point) ------------------------------------ */

/* Rewrites fg with the default database (weft_rewrite_db_default,
 * weft/rewrite_db.h) in `mode`:
 *   "fast_run"     every registered rewrite (merge, useless/local
 *                  simplifications, canonicalize with constant folding,
 *                  specialize (Gemm), the DestroyHandler, the
 *                  update_inplace and inplace rewrites, final merge) -
 *                  docs/rewrites.md §6.3 order;
 *   "fast_compile" merging and constant folding only;
 *   "none"         nothing (unless included).
 * include[k] / exclude[k] name a rewrite or a tag (e.g. "local_mul_by_one",
 * "canonicalize", "inplace"): included ones run even if the mode does not
 * select them, excluded ones never run (exclude wins).
 * The inplace rewrite in fast_run attaches a DestroyHandler if none is
 * attached. The CALLER must attach the Supervisor first (protected inputs and
 * every output: weft_fgraph_options_t.input_mutable, or weft_supervisor_create
 * from weft/destroy.h); without one, graph inputs count as mutable and the
 * inplace rewrite may destroy them.
 * stats may be NULL; else per-rewrite counts and times accumulate into it.
 * Ownership: borrows everything. Thread: fg by one thread; several fgraphs may
 * be rewritten concurrently (the database is locked against registration).
 * Errors: WEFT_EINVAL (NULL fg/mode, NULL include/exclude array with count >
 * 0, a NULL entry), WEFT_ENOTFOUND (unknown mode, or an include/exclude entry
 * that is neither a rewrite name nor a tag; message on fg),
 * WEFT_ENOCONVERGE (an equilibrium stage did not converge; the graph stays
 * valid), WEFT_ENOMEM, WEFT_ECYCLE/WEFT_EINCONSISTENT (fg invalid before). */
WEFT_API weft_status_t weft_rewrite_mode(weft_fgraph_t *fg, const char *mode, size_t n_include,
                                         const char *const *include, size_t n_exclude,
                                         const char *const *exclude,
                                         weft_rewrite_stats_t *stats);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_REWRITE_H */
