/* NodeFinder: a feature that indexes a FunctionGraph's apply nodes by op
 * class, kept up to date by the import and prune callbacks (PyTensor's
 * NodeFinder, fgraph.get_nodes(op)).
 *
 * Lookups return the matching nodes of the apply set in increasing node id
 * (creation order in the context): the same order on every run, whatever
 * order the nodes were imported in. Output pseudo-nodes are never listed.
 * Costs: import and prune O(log n + m) for a class with m nodes (a sorted
 * array per class); by_class O(1); by_op O(m) (weft_op_equal on each node
 * of the class).
 *
 * Ownership: the feature is owned by the fgraph (detach it with
 * weft_fgraph_remove_feature(fg, weft_fgraph_find_feature(fg,
 * weft_node_finder_class()))). Returned arrays are borrowed, valid until the
 * next edit of fg or the next lookup.
 * Thread: as the fgraph (one thread; never while compiled or run). */
#ifndef WEFT_NODE_FINDER_H
#define WEFT_NODE_FINDER_H

#include <stddef.h>

#include "weft/export.h"
#include "weft/feature.h"
#include "weft/fgraph.h"
#include "weft/graph.h"
#include "weft/op.h"
#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The NodeFinder feature class (name "NodeFinder"). Returns static. */
WEFT_API const weft_feature_class_t *weft_node_finder_class(void);

/* Attaches a NodeFinder to fg, indexing the nodes already there; WEFT_OK if
 * one is attached already. Ownership: borrows fg.
 * Errors: WEFT_EINVAL (NULL), WEFT_ENOMEM (nothing attached). */
WEFT_API weft_status_t weft_node_finder_attach(weft_fgraph_t *fg);

/* The nodes whose op is of class cls (*n = 0 when none).
 * Errors: WEFT_EINVAL (NULL argument), WEFT_ENOTFOUND (no NodeFinder
 * attached; message on fg). */
WEFT_API weft_status_t weft_node_finder_by_class(weft_fgraph_t *fg, const weft_op_class_t *cls,
                                                 weft_apply_t *const **nodes, size_t *n);

/* The nodes whose op equals op (weft_op_equal: same class and props; op may
 * belong to another context). Errors: as by_class, and WEFT_ENOMEM. */
WEFT_API weft_status_t weft_node_finder_by_op(weft_fgraph_t *fg, const weft_op_t *op,
                                              weft_apply_t *const **nodes, size_t *n);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_NODE_FINDER_H */
