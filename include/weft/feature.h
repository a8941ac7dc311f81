/* Features: listeners attached to a FunctionGraph (weft/fgraph.h).
 *
 * A feature is a class (vtable of callbacks, all optional) plus its data. The
 * fgraph calls the callbacks in attach order:
 *   on_attach        when attached (the graph may be non-empty: a feature that
 *                    needs every node scans the graph itself); returning
 *                    WEFT_EALREADY ("an equivalent feature is already there")
 *                    makes the attach a silent no-op;
 *   on_detach        after it was removed;
 *   on_import        after a node and its edges were recorded (reason given);
 *   on_prune         after a node was disconnected;
 *   on_change_input  after one input edit and its imports and prunes;
 *   on_validate      on demand (weft_fgraph_validate); WEFT_EINCONSISTENT with
 *                    a message (weft_fgraph_set_error) rejects the graph;
 *   orderings        on demand: add "a must run before b" pairs;
 *   clone            a fresh equivalent feature for a cloned fgraph;
 *   destroy          frees the feature (after on_detach, or when never
 *                    attached).
 * Order per edit: import(s), then prune(s), then the change (fgraph.h).
 * Callbacks must not edit the graph. A callback error (non-OK status) does not
 * stop the edit: the edit completes so the graph stays consistent, and the
 * fgraph function returns the first callback error.
 *
 * Ownership: weft_fgraph_attach_feature takes the feature on every outcome
 * (attached: the fgraph destroys it on detach or with the fgraph; refused or
 * failed: destroyed before returning). */
#ifndef WEFT_FEATURE_H
#define WEFT_FEATURE_H

#include <stddef.h>

#include "weft/export.h"
#include "weft/graph.h"
#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_fgraph weft_fgraph_t;
typedef struct weft_feature weft_feature_t;
typedef struct weft_orderings weft_orderings_t;

typedef struct weft_feature_class {
    size_t size;      /* sizeof(weft_feature_class_t) as compiled by the author */
    const char *name; /* e.g. "DestroyHandler" */
    weft_status_t (*on_attach)(weft_feature_t *self, weft_fgraph_t *fg);
    void (*on_detach)(weft_feature_t *self, weft_fgraph_t *fg);
    weft_status_t (*on_import)(weft_feature_t *self, weft_fgraph_t *fg, weft_apply_t *node,
                               const char *reason);
    weft_status_t (*on_prune)(weft_feature_t *self, weft_fgraph_t *fg, weft_apply_t *node,
                              const char *reason);
    /* node may be an Output(k) pseudo-node (weft_apply_is_output_slot). */
    weft_status_t (*on_change_input)(weft_feature_t *self, weft_fgraph_t *fg,
                                     weft_apply_t *node, size_t i, weft_var_t *old_var,
                                     weft_var_t *new_var, const char *reason);
    weft_status_t (*on_validate)(weft_feature_t *self, weft_fgraph_t *fg);
    weft_status_t (*orderings)(weft_feature_t *self, weft_fgraph_t *fg, weft_orderings_t *out);
    /* NULL: the feature is not carried over to clones. */
    weft_status_t (*clone)(const weft_feature_t *self, weft_feature_t **out);
    void (*destroy)(weft_feature_t *self);
} weft_feature_class_t;

/* Feature authors allocate this (alone or as the first member of their own
 * struct) and fill both fields. */
struct weft_feature {
    const weft_feature_class_t *cls;
    void *data;
};

/* Adds "before must run before after" to an orderings builder (inside an
 * orderings callback). Pseudo-nodes are not allowed.
 * Errors: WEFT_EINVAL (NULL, pseudo-node, before == after), WEFT_ENOMEM. */
WEFT_API weft_status_t weft_orderings_add(weft_orderings_t *o, weft_apply_t *before,
                                          weft_apply_t *after);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_FEATURE_H */
