/* DestroyHandler and Supervisor: in-place and view safety of a FunctionGraph.
 *
 * The DestroyHandler ("DH") is a feature (weft/feature.h) that tracks, as the
 * graph changes, which variables are views of which (op view_map; views of
 * views form a forest) and which nodes destroy an input in place (op
 * destroy_map). It answers three things (docs/destroy.md §3-5, rules D0-D5):
 *   - orderings: every reader of a destroyed variable, or of any view of it,
 *     runs before the destroyer (D4). weft_fgraph_toposort merges them and a
 *     scheduler DAG must carry one edge per pair (they carry no data);
 *   - validation (weft_fgraph_validate, so replace_all_validate reverts an
 *     invalid rewrite): D0 map shape (WEFT_ENOTIMPL), D1 two destroyers of one
 *     root, D2 destroying a constant or indestructible variable, D3 input
 *     aliasing, D5 cycles of data edges plus orderings (WEFT_EINCONSISTENT);
 *   - queries for the inplace rewrite (root, view parent, destroyer, "may this
 *     node destroy input i?", inplace_candidates), none of which edits the
 *     graph.
 * Vocabulary: root(v) follows view parents up; a destroyer's output is a fresh
 * root. impact(R) = R and every transitive view of R. A destroyer entry of
 * node n destroying input D destroys root(D) and its whole impact set.
 *
 * The Supervisor (rule D6) is a separate feature: it rejects a graph in which
 * a protected variable (a declared-immutable input, an explicitly protected
 * variable, or any current output) lies in a destroyed impact set.
 * weft_fgraph_create attaches one whenever options.input_mutable is given.
 * It is declared in weft/supervisor.h and lives in the FunctionGraph module
 * (lib/fgraph); it finds destroyed impact sets from the graph structure
 * itself, so module dependencies stay one-way (fgraph <- destroy) and the
 * check holds with or without a DH.
 *
 * Cost: callbacks are O(1) plus the node's arity and view fan-out; derived
 * maps are rebuilt lazily, only when an edit touched a view, a destroyer or a
 * destroyed region, in O(destroyed impact sets and their clients); the cycle
 * check (D5) is one O(nodes + edges) pass per validate after an edit, cached
 * until the next edit.
 *
 * Thread: as the fgraph: one thread at a time, never while it is run. */
#ifndef WEFT_DESTROY_H
#define WEFT_DESTROY_H

#include <stdbool.h>
#include <stddef.h>

#include "weft/alloc.h"
#include "weft/export.h"
#include "weft/feature.h"
#include "weft/fgraph.h"
#include "weft/graph.h"
#include "weft/op.h"
#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the DestroyHandler feature ------------------------------------------ */

/* The feature class; weft_fgraph_find_feature(fg, &weft_dh_class)
 * finds an attached DH. */
WEFT_API extern const weft_feature_class_t weft_dh_class;

/* A new, unattached DestroyHandler (regular policy). alloc may be NULL (the
 * default allocator); it is borrowed and must outlive the feature.
 * Attach it with weft_fgraph_attach_feature (which takes it) or pass it in
 * weft_fgraph_options_t.features. Attaching to an fgraph that already has a DH
 * is a silent no-op (the new one is freed: on_attach says WEFT_EALREADY);
 * attaching an instance that serves another fgraph fails with WEFT_EBUSY and
 * leaves that instance serving its fgraph. On attach it scans the nodes already
 * in the graph.
 * Protocol errors reported by its callbacks (through the fgraph edit's status):
 * WEFT_ESTATE for a node imported twice, pruned or changed without import;
 * WEFT_ENOTIMPL for a view_map output listed with two inputs or out of range
 * (rule D0). A node with a malformed view_map or destroy_map is kept, and
 * every validate / orderings call fails with WEFT_ENOTIMPL naming it while it
 * is in the graph (a bad destroy_map is reported there only, as in PyTensor).
 * Ownership: returns new; whoever holds it frees it through the fgraph (attach
 * takes it) - an unattached feature is freed with f->cls->destroy(f).
 * Errors: WEFT_EINVAL (NULL out), WEFT_ENOMEM. */
WEFT_API weft_status_t weft_dh_create(const weft_allocator_t *alloc,
                                                   weft_feature_t **out);

/* The DH attached to fg, creating and attaching one (through the allocator of
 * fg's context, weft_graph_allocator) if there is none. *out may be NULL.
 * Ownership: borrows fg; *out is borrowed, valid until it is removed or fg is
 * destroyed. Errors: WEFT_EINVAL (NULL fg), WEFT_ENOMEM. */
WEFT_API weft_status_t weft_dh_attach(weft_fgraph_t *fg, weft_feature_t **out);

/* ---- queries ------------------------------------------------------------------
 * Each finds the DH attached to fg. None edits the graph; they may refresh the
 * DH's lazily rebuilt maps. Common errors: WEFT_EINVAL (a NULL argument),
 * WEFT_ESTATE (no DH attached to fg), WEFT_ENOTFOUND (a variable or node that is
 * neither in fg nor one of its inputs; the message names it). */

/* The variable v is a view of (*parent), or NULL if v is a root. */
WEFT_API weft_status_t weft_dh_view_parent(weft_fgraph_t *fg, const weft_var_t *v,
                                                weft_var_t **parent);
/* root(v): v's view parents followed up to a variable that has none. */
WEFT_API weft_status_t weft_dh_root(weft_fgraph_t *fg, const weft_var_t *v,
                                         weft_var_t **root);
/* destroyers(v) (docs/destroy.md §4): the node destroying root(v) when v is in
 * a destroyed impact set (v is the destroyed root or a view of it), else NULL.
 * Errors: also D0/D1 errors of the current graph (WEFT_ENOTIMPL,
 * WEFT_EINCONSISTENT, message on fg), since they make "the" destroyer
 * ambiguous. */
WEFT_API weft_status_t weft_dh_destroyer(weft_fgraph_t *fg, const weft_var_t *v,
                                              weft_apply_t **destroyer);
/* has_destroyers(vars): whether any of the n variables has a destroyer.
 * Errors: as weft_dh_destroyer. */
WEFT_API weft_status_t weft_dh_has_destroyers(weft_fgraph_t *fg, size_t n,
                                                   const weft_var_t *const *vars, bool *out);
/* Number of destroyer nodes (non-empty destroy_map) in fg. */
WEFT_API weft_status_t weft_dh_n_destroyers(weft_fgraph_t *fg, size_t *n);

/* The DH's own orderings (rule D4) as pairs before[k] -> after[k] (after is the
 * destroyer), grouped by destroyer in increasing apply id, prerequisites in
 * discovery order. Ownership: arrays borrowed until the next edit of fg.
 * Errors: the D0-D3 error of the current graph (WEFT_ENOTIMPL or
 * WEFT_EINCONSISTENT, message on fg), WEFT_ENOMEM. */
WEFT_API weft_status_t weft_dh_orderings(weft_fgraph_t *fg, weft_apply_t *const **before,
                                              weft_apply_t *const **after, size_t *n);

/* "May node destroy its input `input`?" - would replacing node by an
 * equivalent node whose op destroys that input (and has variant's
 * tolerate_same / tolerate_aliased relaxations; variant may be NULL: none)
 * keep the graph valid? Checks D1 (root already destroyed by another node),
 * D2, D3, D5 (a reader of the destroyed region depends on node) and D6 against
 * the fgraph's protected set (declared-immutable inputs and current outputs).
 * Answered without editing the graph. Exact when node is not itself a view or
 * a destroyer; otherwise conservative (may answer false although the replace
 * would validate, never true when it would not).
 * *ok false comes with a message on fg naming the rule, the node and the
 * variable (weft_fgraph_last_error).
 * Errors: common ones, WEFT_ENOTFOUND (node not in fg), WEFT_EINVAL (input out
 * of range, node an Output pseudo-node), the current graph's D0-D3 error,
 * WEFT_ENOMEM. */
WEFT_API weft_status_t weft_dh_can_destroy(weft_fgraph_t *fg, const weft_apply_t *node,
                                                size_t input, const weft_op_t *variant,
                                                bool *ok);

/* weft_dh_can_destroy, also telling which orderings the replacement would
 * add: when *ok, *n_readers is the number of nodes that would have to run
 * before node (rule D4: every DH client of impact(root(input)) other than
 * node, each once, in discovery order), and the first min(cap, *n_readers)
 * of them are written to readers. When !*ok, *n_readers is 0.
 * Ownership: borrows; the nodes written are borrowed from fg.
 * Errors: as weft_dh_can_destroy; WEFT_EINVAL also for a NULL n_readers, or
 * NULL readers with cap > 0. */
WEFT_API weft_status_t weft_dh_destroy_readers(weft_fgraph_t *fg, const weft_apply_t *node,
                                               size_t input, const weft_op_t *variant,
                                               bool *ok, size_t cap, weft_apply_t **readers,
                                               size_t *n_readers);

/* inplace_candidates (docs/destroy.md §4): which of the n inputs an in-place
 * rewrite may try to destroy. Drops constants; drops an input whose view chain
 * (itself up to its root) passes through a protected variable, or that already
 * has a destroyer; when two inputs share a root, drops both. protected:
 * n_protected variables; NULL (with 0) means the fgraph's declared-immutable
 * inputs plus its current outputs. Writes the kept positions (indices into
 * inputs, in increasing order) to out_idx (room for n) and their count to
 * *n_out.
 * Errors: common ones (a protected variable need not be in fg), the current
 * graph's D0/D1 error, WEFT_ENOMEM. */
WEFT_API weft_status_t weft_dh_inplace_candidates(weft_fgraph_t *fg, size_t n,
                                                       const weft_var_t *const *inputs,
                                                       size_t n_protected,
                                                       const weft_var_t *const *protected_vars,
                                                       size_t *out_idx, size_t *n_out);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_DESTROY_H */
