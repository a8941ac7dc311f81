/* FunctionGraph: a mutable, indexed view of the subgraph between declared
 * inputs and outputs. All rewriting happens through it.
 *
 * State: ordered inputs (owner-less variables), ordered outputs, the set of
 * apply nodes between them, the set of variables, and for each variable its
 * clients: (node, input index) pairs with node->inputs[index] == variable.
 * Each output slot k is represented by an Output(k) pseudo-node
 * (weft_apply_is_output_slot) that appears among the clients of outputs[k],
 * keeps it alive, is never in the apply set and never imported or pruned.
 *
 * Every fgraph always carries ReplaceValidate with History: checkpoint /
 * revert / validate and the transactional replace_all_validate. After a failed
 * replace_all_validate the graph is structurally identical to before (same
 * node objects, same input lists, same client sets).
 *
 * Ownership: an fgraph borrows its context (weft/graph.h); the nodes it
 * creates or clones are owned by that context, so pruned nodes stay valid
 * (a revert re-imports the same objects). weft_fgraph_destroy frees the
 * fgraph's own indexes and its features.
 * Invalidation: arrays returned as "borrowed until the next edit" (clients,
 * apply list, toposort) are invalid after any edit of fg.
 * Thread: one thread at a time; never while fg is compiled or run.
 * Errors: the text of the last error (naming nodes, variables, ops and their
 * creation sites) is on the fgraph: weft_fgraph_last_error(). */
#ifndef WEFT_FGRAPH_H
#define WEFT_FGRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "weft/export.h"
#include "weft/feature.h"
#include "weft/graph.h"
#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_fgraph weft_fgraph_t;

typedef struct weft_client {
    weft_apply_t *node; /* may be an Output(k) pseudo-node */
    size_t index;       /* node's input index */
} weft_client_t;

typedef struct weft_fgraph_options {
    size_t size;          /* sizeof(weft_fgraph_options_t) */
    bool clone;           /* work on a clone of the subgraph (default true) */
    bool import_missing;  /* undeclared root inputs become inputs (default false) */
    /* Features attached (in order) before the outputs are imported, so they
     * receive on_import for every initial node (reason "init"). Taken as by
     * weft_fgraph_attach_feature, on every outcome. */
    size_t n_features;
    weft_feature_t *const *features;
    /* Optional, parallel to inputs: false marks an input protected (no
     * in-place op may destroy it). When given, a Supervisor feature enforcing
     * it - and protecting every output - is attached (weft/destroy.h, rule
     * D6). NULL: nothing declared, no Supervisor. */
    const bool *input_mutable;
} weft_fgraph_options_t;

#define WEFT_FGRAPH_OPTIONS_INIT {sizeof(weft_fgraph_options_t), true, false, 0, NULL, NULL}

/* Builds an fgraph on g from inputs to outputs (n_out >= 1). inputs may be
 * NULL with n_in == 0 to take the non-constant owner-less ancestors of the
 * outputs in discovery order. With clone (default), the subgraph is cloned
 * first and the fgraph works on the copies; *equiv (if equiv is not NULL)
 * receives the old -> new map (NULL when not cloning).
 * Ownership: borrows g, inputs, outputs; takes opts->features; returns new,
 * free with weft_fgraph_destroy; *equiv is new, free with
 * weft_clone_map_destroy.
 * Errors: WEFT_EINVAL (NULL args, no outputs, an input with an owner or a
 * constant, an input listed twice), WEFT_EFOREIGN, WEFT_EMISSING_INPUT (an
 * undeclared root input, named), WEFT_ETYPE (a null-type variable), WEFT_ENOMEM,
 * or the error of a feature's on_attach. Since no fgraph exists on failure,
 * the message is on the context: weft_graph_last_error(g). */
WEFT_API weft_status_t weft_fgraph_create(weft_graph_t *g, size_t n_in,
                                          weft_var_t *const *inputs, size_t n_out,
                                          weft_var_t *const *outputs,
                                          const weft_fgraph_options_t *opts,
                                          weft_clone_map_t **equiv, weft_fgraph_t **out);
/* Detaches every feature (on_detach, destroy) and frees fg. NULL: no-op. */
WEFT_API void weft_fgraph_destroy(weft_fgraph_t *fg);
WEFT_API weft_graph_t *weft_fgraph_graph(const weft_fgraph_t *fg);
/* Returns borrowed, valid until the next call on fg. "" if no error. */
WEFT_API const char *weft_fgraph_last_error(const weft_fgraph_t *fg);
/* Records an error on fg and returns status (for features' callbacks). */
WEFT_API weft_status_t weft_fgraph_set_error(weft_fgraph_t *fg, weft_status_t status,
                                             const char *fmt, ...) WEFT_PRINTF(3, 4);

/* ---- queries (each O(1) unless stated) ----------------------------------- */
WEFT_API size_t weft_fgraph_n_inputs(const weft_fgraph_t *fg);
WEFT_API weft_var_t *weft_fgraph_input(const weft_fgraph_t *fg, size_t k);  /* NULL if out of range */
WEFT_API size_t weft_fgraph_n_outputs(const weft_fgraph_t *fg);
WEFT_API weft_var_t *weft_fgraph_output(const weft_fgraph_t *fg, size_t k);
/* Whether input k was declared mutable (true when nothing was declared). */
WEFT_API bool weft_fgraph_input_is_mutable(const weft_fgraph_t *fg, size_t k);
WEFT_API size_t weft_fgraph_n_applies(const weft_fgraph_t *fg);
/* The apply set, in no particular order. Borrowed until the next edit.
 * Errors: WEFT_EINVAL, WEFT_ENOMEM. */
WEFT_API weft_status_t weft_fgraph_applies(weft_fgraph_t *fg, weft_apply_t *const **nodes,
                                           size_t *n);
WEFT_API bool weft_fgraph_contains_var(const weft_fgraph_t *fg, const weft_var_t *v);
WEFT_API bool weft_fgraph_contains_apply(const weft_fgraph_t *fg, const weft_apply_t *a);
/* v's clients in the order they were added (Output pseudo-clients included).
 * Borrowed until the next edit. A declared input that nothing uses is not in
 * the variable set (weft_fgraph_contains_var is false) but has an empty client
 * list here (WEFT_OK, *n = 0). Errors: WEFT_EINVAL, WEFT_ENOTFOUND (v not in
 * the graph). */
WEFT_API weft_status_t weft_fgraph_clients(const weft_fgraph_t *fg, const weft_var_t *v,
                                           const weft_client_t **clients, size_t *n);
/* The variable set (PyTensor's fgraph.variables): every variable a node of
 * the apply set reads or produces, every output and every used declared
 * input, ordered by increasing id (creation order in the context), so the
 * listing is the same on every run. Iterate it with weft_fgraph_clients to
 * walk the clients map (each client: node and input index). A declared input
 * that nothing uses is not listed (see weft_fgraph_clients).
 * Ownership: *vars borrowed, valid until the next edit or the next call of
 * this function on fg. O(V log V).
 * Errors: WEFT_EINVAL (NULL argument), WEFT_ENOMEM. */
WEFT_API weft_status_t weft_fgraph_variables(weft_fgraph_t *fg, weft_var_t *const **vars,
                                             size_t *n);
/* Size of the variable set (0 for NULL). O(1). */
WEFT_API size_t weft_fgraph_n_variables(const weft_fgraph_t *fg);
/* Number of clients of v (0 if not in the graph). */
WEFT_API size_t weft_fgraph_n_clients(const weft_fgraph_t *fg, const weft_var_t *v);

/* ---- edits ----------------------------------------------------------------
 * Each edit validates its arguments before changing anything; "reason" is a
 * free text passed to the callbacks (may be NULL). */

/* Imports v (and its owner's subgraph). An owner-less, non-constant v not
 * among the inputs is WEFT_EMISSING_INPUT unless import_missing (then appended
 * to the inputs). A null-type variable is WEFT_ETYPE. */
WEFT_API weft_status_t weft_fgraph_import_var(weft_fgraph_t *fg, weft_var_t *v,
                                              bool import_missing, const char *reason);
/* Imports node and every ancestor not yet in the graph, in topological order,
 * firing on_import for each. Errors as import_var; nothing is imported when a
 * missing input is found. */
WEFT_API weft_status_t weft_fgraph_import_node(weft_fgraph_t *fg, weft_apply_t *node,
                                               bool import_missing, const char *reason);
/* The single primitive edit: node->inputs[i] = new_var (node may be an
 * Output(k) pseudo-node: then outputs[k] = new_var). Nothing happens if it is
 * already new_var. new_var's type must be acceptable (the old input's type
 * is_super of it) else WEFT_ETYPE. Fires on_import (new nodes), on_prune
 * (nodes now unused), then on_change_input.
 * Errors: WEFT_EINVAL (i out of range, NULL), WEFT_ENOTFOUND (node not in fg),
 * WEFT_ECYCLE (node is an ancestor of new_var: the edit would close a cycle;
 * the message names new_var, node and the nodes on the cycle; nothing
 * changed), WEFT_ETYPE, WEFT_EMISSING_INPUT, WEFT_EFOREIGN, WEFT_ENOMEM. */
WEFT_API weft_status_t weft_fgraph_change_node_input(weft_fgraph_t *fg, weft_apply_t *node,
                                                     size_t i, weft_var_t *new_var,
                                                     const char *reason);
/* Replaces var by new_var in every client of var (a snapshot of the clients).
 * var == new_var: nothing happens (WEFT_OK). Errors (nothing changed):
 * WEFT_ENOTFOUND (var is neither in the variable set nor a declared input,
 * e.g. it was already replaced; the message names it and its creation site;
 * test weft_fgraph_contains_var first to replace only what is still there; an
 * unused declared input has no clients, so replacing it changes nothing),
 * WEFT_ETYPE (new_var may not replace var: types named), WEFT_ECYCLE (a client
 * of var is an ancestor of new_var: the replacement would close a cycle, named
 * in the message), WEFT_EINVAL, WEFT_EFOREIGN, WEFT_EMISSING_INPUT. */
WEFT_API weft_status_t weft_fgraph_replace(weft_fgraph_t *fg, weft_var_t *var,
                                           weft_var_t *new_var, const char *reason);
/* replace for each pair in order; stops at the first error. Every pair's
 * arguments are checked before the first edit: a variable not in the graph
 * when called gives WEFT_ENOTFOUND and changes nothing. A pair refused when
 * its turn comes (WEFT_ETYPE, WEFT_ECYCLE: whether it closes a cycle depends
 * on the pairs before it) changes nothing itself, but the earlier pairs stay
 * applied: replace_all_validate reverts them. A listed variable that
 * an earlier pair of the same call pruned (e.g. the other outputs of a
 * multi-output node) is skipped. */
WEFT_API weft_status_t weft_fgraph_replace_all(weft_fgraph_t *fg, size_t n,
                                               weft_var_t *const *vars,
                                               weft_var_t *const *new_vars, const char *reason);
/* Removes node, everything that depends on its outputs (output slots
 * included), and producers orphaned as a result; on_prune fires for each.
 * Errors: WEFT_ENOTFOUND (not in the graph, e.g. removed twice). */
WEFT_API weft_status_t weft_fgraph_remove_node(weft_fgraph_t *fg, weft_apply_t *node,
                                               const char *reason);
/* Appends an owner-less variable to the inputs (WEFT_OK if already there).
 * Errors: WEFT_EINVAL (owned or constant). */
WEFT_API weft_status_t weft_fgraph_add_input(weft_fgraph_t *fg, weft_var_t *v);
/* Removes input k and every node using it (and the output slots they fed);
 * later inputs are renumbered, update pairs follow (see updates below).
 * Errors: WEFT_EINVAL (k). */
WEFT_API weft_status_t weft_fgraph_remove_input(weft_fgraph_t *fg, size_t k,
                                                const char *reason);
/* Appends an output slot for v, importing its subgraph. */
WEFT_API weft_status_t weft_fgraph_add_output(weft_fgraph_t *fg, weft_var_t *v,
                                              const char *reason);
/* Drops output slot k; later slots are renumbered (update pairs follow); the
 * old value is pruned if nothing else uses it. Errors: WEFT_EINVAL (k). */
WEFT_API weft_status_t weft_fgraph_remove_output(weft_fgraph_t *fg, size_t k,
                                                 const char *reason);

/* ---- updates ----------------------------------------------------------------
 * An update pair (output k, input i) records that output slot k holds input
 * i's new value (PyTensor's update mapping; a compiled function's updates,
 * weft/function.h), for rewrites to read (e.g. update_inplace,
 * weft/rewrite_db.h). An output updates at most one input and an input is
 * updated by at most one output. Pairs name positions, not variables: a
 * replace that changes output k's variable keeps its pair; removing input or
 * output slot k (weft_fgraph_remove_input / remove_output, and the slots that
 * remove_node or remove_input drop) drops the pairs naming it and renumbers
 * the later positions like the slots; weft_fgraph_clone copies the pairs.
 * Thread: as the edits. */

/* Records that output slot `output` updates input `input`; setting the same
 * pair again is WEFT_OK; input == SIZE_MAX clears output's pair (WEFT_OK if it
 * had none). Ownership: borrows fg. Errors (nothing changed; message on fg):
 * WEFT_EINVAL (NULL fg, no such output or input), WEFT_EDUPLICATE (output
 * already updates another input, or input is already updated by another
 * output: clear the pair first), WEFT_ETYPE (input's type does not accept the
 * output's: weft_type_is_super), WEFT_ENOMEM. */
WEFT_API weft_status_t weft_fgraph_set_update(weft_fgraph_t *fg, size_t output, size_t input);
/* The input that output slot `output` updates; SIZE_MAX when it updates none
 * (also for a NULL fg or output out of range). O(number of pairs). */
WEFT_API size_t weft_fgraph_update_input(const weft_fgraph_t *fg, size_t output);
/* Number of update pairs (0 for NULL). */
WEFT_API size_t weft_fgraph_n_updates(const weft_fgraph_t *fg);

/* ---- features -------------------------------------------------------------- */

/* Attaches f (see weft/feature.h; takes f on every outcome). The same feature
 * object twice is ignored. on_attach returning WEFT_EALREADY: silently not
 * attached (WEFT_OK). Another error: not attached, returned. */
WEFT_API weft_status_t weft_fgraph_attach_feature(weft_fgraph_t *fg, weft_feature_t *f);
/* Unregisters f, calls on_detach, then destroys it.
 * Errors: WEFT_ENOTFOUND (not attached to fg). */
WEFT_API weft_status_t weft_fgraph_remove_feature(weft_fgraph_t *fg, weft_feature_t *f);
/* The first attached feature of class cls, or NULL. */
WEFT_API weft_feature_t *weft_fgraph_find_feature(const weft_fgraph_t *fg,
                                                  const weft_feature_class_t *cls);

/* ---- order -------------------------------------------------------------------- */

/* The apply nodes reachable from the outputs, each after the owners of its
 * inputs and after every prerequisite given by the features' orderings.
 * Borrowed until the next edit.
 * Errors: WEFT_ECYCLE (message names nodes on a cycle), or a feature's
 * orderings error, WEFT_ENOMEM. */
WEFT_API weft_status_t weft_fgraph_toposort(weft_fgraph_t *fg, weft_apply_t *const **order,
                                            size_t *n);
/* The union of every feature's orderings as pairs before[k] -> after[k].
 * Borrowed until the next edit. Errors: a feature's error, WEFT_ENOMEM. */
WEFT_API weft_status_t weft_fgraph_orderings(weft_fgraph_t *fg, weft_apply_t *const **before,
                                             weft_apply_t *const **after, size_t *n);

/* ---- integrity, cloning, printing ------------------------------------------ */

/* Checks the invariants (no cycle, apply set, variable set, clients,
 * declared inputs, output slots; docs/fgraph.md §4). Errors: WEFT_ECYCLE (the
 * data edges form a cycle, e.g. closed through another fgraph sharing these
 * nodes: the message names its nodes), WEFT_EINCONSISTENT with a message
 * naming the first violation, WEFT_ENOMEM. */
WEFT_API weft_status_t weft_fgraph_check_integrity(const weft_fgraph_t *fg);
/* A new fgraph over a clone of fg's subgraph with a clone of each feature
 * (features without a clone hook are not carried). *equiv: as for create.
 * Errors: as create. */
WEFT_API weft_status_t weft_fgraph_clone(const weft_fgraph_t *fg, bool check_integrity,
                                         weft_clone_map_t **equiv, weft_fgraph_t **out);
/* dprint-style tree of the outputs (weft_graph_dprint), then the inputs. */
WEFT_API weft_status_t weft_fgraph_dprint(weft_fgraph_t *fg, FILE *f);
/* The graph as one line (PyTensor's str(fgraph)), e.g.
 * "FunctionGraph(Tanh(Add(Dot(x, W), b)))": each output as nested
 * Op(args) (weft_op_print), leaves (declared inputs, constants, other roots)
 * as weft_var_print writes them, outputs separated by ", ". A node used more
 * than once (or with several outputs) is shown once as "*n -> Op(...)"
 * ("*n::k -> " for output k of a multi-output node) and later as "*n"
 * ("*n::k"), n counting from 1 in printing order (docs/fgraph.md §7).
 * snprintf-like: writes at most cap bytes, NUL included (buf may be NULL
 * when cap is 0), and *len (if not NULL) receives the full length without
 * the NUL; the text is cut, never the count, when cap is too small.
 * Ownership: borrows fg and buf. Errors: WEFT_EINVAL (NULL fg, NULL buf with
 * cap > 0), WEFT_ENOMEM (buf holds ""). Thread: as the queries. */
WEFT_API weft_status_t weft_fgraph_str(weft_fgraph_t *fg, char *buf, size_t cap, size_t *len);
/* Graphviz dot: one box per apply, one ellipse per variable, dashed edges for
 * feature orderings. */
WEFT_API weft_status_t weft_fgraph_dot(weft_fgraph_t *fg, FILE *f);

/* ---- transactions (ReplaceValidate + History) ------------------------------ */

/* Starts a change log and returns its token; only the newest token can be
 * reverted. Errors: WEFT_EINVAL. */
WEFT_API weft_status_t weft_fgraph_checkpoint(weft_fgraph_t *fg, uint64_t *token);
/* Undoes the logged changes newest-first (type checks skipped), firing the
 * usual callbacks; pruned nodes are re-imported as the same objects.
 * Errors: WEFT_ESTATE (stale token). */
WEFT_API weft_status_t weft_fgraph_revert(weft_fgraph_t *fg, uint64_t token);
/* Runs every feature's on_validate in attach order; the first error wins
 * (WEFT_EINCONSISTENT, message from the feature). */
WEFT_API weft_status_t weft_fgraph_validate(weft_fgraph_t *fg);
/* Transaction: checkpoint; replace each pair (as replace_all: a variable not
 * in the graph is WEFT_ENOTFOUND); validate; on any failure revert and return
 * the error (graph exactly as before). */
WEFT_API weft_status_t weft_fgraph_replace_all_validate(weft_fgraph_t *fg, size_t n,
                                                        weft_var_t *const *vars,
                                                        weft_var_t *const *new_vars,
                                                        const char *reason);
WEFT_API weft_status_t weft_fgraph_replace_validate(weft_fgraph_t *fg, weft_var_t *var,
                                                    weft_var_t *new_var, const char *reason);
/* As replace_all_validate, then if any listed variable or node is still in the
 * graph: revert and return WEFT_EINCONSISTENT ("replacement did not remove").
 * Removed nodes are remembered: re-importing one later makes validate fail. */
WEFT_API weft_status_t weft_fgraph_replace_all_validate_remove(
    weft_fgraph_t *fg, size_t n, weft_var_t *const *vars, weft_var_t *const *new_vars,
    size_t n_remove, weft_apply_t *const *remove, const char *reason);

/* ---- verbose rewriting: the replacement log ------------------------------------
 * PyTensor's optimizer_verbose: ReplaceValidate reports each replacement it
 * commits. After a transaction (replace_all_validate, replace_validate,
 * replace_all_validate_remove, hence every rewrite, weft/rewrite.h) passes
 * validation, the hook is called once per pair, in the order given, with the
 * transaction's reason (for rewrites: the rewriter's name) - pairs whose new
 * variable is the old one excepted. A rejected transaction reports nothing;
 * plain replace / change_node_input report nothing.
 * The hook runs on the thread editing fg, after the edit is complete; it may
 * read fg but must not edit it. */

typedef void (*weft_replace_hook_fn)(void *user, weft_fgraph_t *fg, const char *reason,
                                     weft_var_t *old_var, weft_var_t *new_var);

/* Sets fg's hook (fn NULL: none). One hook per fgraph: this replaces a hook
 * or log set before. Not carried to clones.
 * Ownership: borrows user (must outlive fg or the next set). Errors:
 * WEFT_EINVAL (NULL fg). */
WEFT_API weft_status_t weft_fgraph_set_replace_hook(weft_fgraph_t *fg, weft_replace_hook_fn fn,
                                                    void *user);
/* Sets a hook that writes one line per replacement to f
 * (weft_fgraph_replace_line, then "\n"); f NULL: none. Write errors are
 * ignored. Ownership: borrows f (must outlive fg or the next set). Errors:
 * WEFT_EINVAL (NULL fg). */
WEFT_API weft_status_t weft_fgraph_set_replace_log(weft_fgraph_t *fg, FILE *f);
/* The log line for one replacement (docs/rewrites.md §9), without newline:
 *   rewriting: rewrite REASON replaces OLD of NODE with NEW of NODE
 * each variable as weft_var_print writes it, each NODE as
 * weft_apply_describe ("apply 7 (Mul, built at model.c:17)"); a variable
 * without owner is written " with x (created at model.c:12)" instead of
 * " of NODE"; a NULL reason reads "?". snprintf-like (returns the full
 * length; buf may be NULL when cap is 0; NULL buf with cap > 0: -1, nothing
 * written). Ownership: borrows everything. Thread: any (the variables'
 * context not edited meanwhile). */
WEFT_API int weft_fgraph_replace_line(const char *reason, const weft_var_t *old_var,
                                      const weft_var_t *new_var, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_FGRAPH_H */
