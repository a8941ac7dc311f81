/* History: a feature that logs every change of a FunctionGraph so that it
 * can be reverted to any checkpoint and brought forward again (redo).
 * PyTensor's History feature (fgraph.checkpoint / fgraph.revert) with redo.
 *
 * The log holds one entry per event, in order: CHANGE (an input edit:
 * node->inputs[index] went from old_var to new_var; node may be an Output(k)
 * pseudo-node), IMPORT and PRUNE (a node entered or left the apply set). An
 * IMPORT or PRUNE made by an input change (replace, change_node_input, a
 * ReplaceValidate rollback) is marked by_change and comes before its CHANGE
 * (the fgraph's order, weft/feature.h); it is undone and redone with it.
 * Other imports and prunes (import_node, add_output, remove_node,
 * remove_input, remove_output) are structural: they are logged but cannot be
 * undone, so a revert across one is refused. Removing an output slot or an
 * input (remove_output, remove_input, remove_node dropping slots) fires no
 * event for the slot itself; every entry logged before it can then be
 * neither undone nor redone (WEFT_ESTATE).
 *
 * Revert undoes CHANGE entries newest-first through the fgraph's ordinary
 * change path (type checks skipped, as the built-in revert): every attached
 * feature (DestroyHandler, Supervisor, ...) sees the imports, prunes and
 * changes with reason WEFT_HISTORY_REVERT_REASON; pruned nodes come back as
 * the same objects and every client entry returns to its old position.
 * Redo replays them oldest-first (reason WEFT_HISTORY_REDO_REASON). The
 * reverted entries stay in the log for redo until the next change, which
 * drops them (as an editor's undo stack). Revert and redo do not validate:
 * call weft_fgraph_validate when needed (e.g. a revert that re-imports a node
 * that replace_all_validate_remove removed makes validate fail, as in
 * PyTensor). Revert and redo do not record themselves.
 *
 * Tokens: a checkpoint is a uint64_t naming a position in the log: 0 names
 * the empty log at attach time, entry k's token its `token` field. A token
 * whose entries were dropped (by a change after a revert, or when recording
 * ran out of memory) is stale: WEFT_ESTATE.
 *
 * The History is not carried to clones (weft_fgraph_clone): a clone starts
 * without one.
 *
 * Ownership: the feature is owned by the fgraph (detach it with
 * weft_fgraph_remove_feature(fg, weft_fgraph_find_feature(fg,
 * weft_history_class()))). Entries borrow nodes and variables from the
 * fgraph's context (valid while it lives).
 * Thread: as the fgraph (one thread; never while compiled or run).
 * Errors: messages on the fgraph (weft_fgraph_last_error). */
#ifndef WEFT_HISTORY_H
#define WEFT_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/export.h"
#include "weft/feature.h"
#include "weft/fgraph.h"
#include "weft/graph.h"
#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_HISTORY_REVERT_REASON "History.revert"
#define WEFT_HISTORY_REDO_REASON "History.redo"

typedef enum weft_history_kind {
    WEFT_HISTORY_CHANGE = 0,
    WEFT_HISTORY_IMPORT = 1,
    WEFT_HISTORY_PRUNE = 2
} weft_history_kind_t;

typedef struct weft_history_entry {
    weft_history_kind_t kind;
    uint64_t token;      /* checkpoint token of the state right after this entry */
    weft_apply_t *node;  /* changed (maybe an Output pseudo-node), imported or pruned */
    size_t index;        /* CHANGE: the input index; else 0 */
    weft_var_t *old_var; /* CHANGE: the input before; else NULL */
    weft_var_t *new_var; /* CHANGE: the input after; else NULL */
    bool by_change;      /* IMPORT/PRUNE: made by an input change; CHANGE: true */
} weft_history_entry_t;

/* The History feature class (name "History"). Returns static. */
WEFT_API const weft_feature_class_t *weft_history_class(void);

/* Attaches a History to fg; WEFT_OK if one is attached already (kept, with
 * its log). The log starts empty: checkpoint 0 is the graph as it is now.
 * Ownership: borrows fg. Errors: WEFT_EINVAL (NULL), WEFT_ENOMEM. */
WEFT_API weft_status_t weft_history_attach(weft_fgraph_t *fg);

/* The token of the current position (the state of the graph now).
 * Errors: WEFT_EINVAL (NULL), WEFT_ENOTFOUND (no History attached). */
WEFT_API weft_status_t weft_history_checkpoint(weft_fgraph_t *fg, uint64_t *token);

/* Undoes the entries after token, newest first. token at the current
 * position: nothing happens (WEFT_OK).
 * Errors (nothing changed, message on fg): WEFT_EINVAL (NULL), WEFT_ENOTFOUND
 * (no History), WEFT_ESTATE (token stale, or ahead of the current position:
 * use redo; or a structural entry lies in between, named; or a slot was
 * removed after an entry in between). A failure while
 * undoing (WEFT_ENOMEM) stops at the entry that failed, the graph consistent
 * and the position at that entry; a feature callback's error is returned
 * after the revert completes. */
WEFT_API weft_status_t weft_history_revert(weft_fgraph_t *fg, uint64_t token);

/* Replays the reverted entries up to token, oldest first. Errors as revert,
 * with WEFT_ESTATE when token is behind the current position. */
WEFT_API weft_status_t weft_history_redo(weft_fgraph_t *fg, uint64_t token);

/* Entries in the log (applied and redoable), and how many are applied.
 * 0 when fg is NULL or has no History. */
WEFT_API size_t weft_history_n_entries(const weft_fgraph_t *fg);
WEFT_API size_t weft_history_position(const weft_fgraph_t *fg);

/* Copies entry k (0 = oldest). Errors: WEFT_EINVAL (NULL, k out of range),
 * WEFT_ENOTFOUND (no History). */
WEFT_API weft_status_t weft_history_entry(const weft_fgraph_t *fg, size_t k,
                                          weft_history_entry_t *out);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_HISTORY_H */
