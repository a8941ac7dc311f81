/* Node costs for rewrites that weigh the critical path: the inplace rewrite
 * makes a node destroy an input only when the orderings this adds do not
 * lengthen the graph's critical path (docs/rewrites.md §6.6).
 *
 * A node's cost is, in this order: the measured time given for its key
 * (weft_fgraph_set_node_costs, usually filled from an earlier run's profile:
 * compile option cost_profile, weft/function.h), else the size-based
 * estimate of its op family (weft_node_cost_estimate). Both are in
 * nanoseconds, so measured and estimated nodes can be mixed.
 *
 * A node key is a structural hash of the node: its op class name, its output
 * types, and per input the producing node's key and output position, an
 * fgraph input's position, or a constant's type and bytes. Op props are left
 * out, so a node and its in-place variant share a key, and so do the same
 * graph's nodes in two compiles; two nodes that differ only in props (two
 * Composites of one input) share it too, and then share one measured time.
 *
 * Thread: none of these may run concurrently with edits of the fgraph. */
#ifndef WEFT_NODE_COST_H
#define WEFT_NODE_COST_H

#include <stddef.h>
#include <stdint.h>

#include "weft/export.h"
#include "weft/fgraph.h"
#include "weft/graph.h"
#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The estimate's rates, for op classes' cost_ns hooks (weft/op.h) to count
 * in the same unit: one multiply-add of a BLAS product, and the length a
 * dimension unknown statically counts as. */
#define WEFT_COST_MULADD_NS 0.1
#define WEFT_COST_UNKNOWN_LEN 256

/* The estimate of node's run time in nanoseconds: its class's cost_ns hook
 * where it has one that answers (weft/op.h), else the size-based estimate
 * (docs/rewrites.md §6.6 lists the families and their rates): a fixed 100 per node plus, for
 * elementwise ops and Composites, the output's elements times the steps'
 * rates; for Dot / Gemm / Gemv and the factorizations, the multiply-adds;
 * for reductions, the input's elements; views only the fixed part. A length
 * unknown statically counts as 256. NULL node: 0. Thread: any. */
WEFT_API double weft_node_cost_estimate(const weft_apply_t *node);

/* The key of every node of fg: keys[weft_apply_id(a)] for each apply a of fg
 * (other entries are left as they were). cap is the room in keys and must be
 * at least weft_graph_n_applies(weft_fgraph_graph(fg)).
 * Ownership: borrows. Errors: WEFT_EINVAL (NULL args, cap too small),
 * WEFT_ECYCLE (fg's toposort fails), WEFT_ENOMEM. */
WEFT_API weft_status_t weft_fgraph_node_keys(weft_fgraph_t *fg, size_t cap, uint64_t *keys);

/* Gives fg measured node costs: key keys[k] costs ns[k] nanoseconds (k < n;
 * a key given twice takes the mean). Replaces costs given earlier; n == 0
 * removes them. Ownership: borrows keys and ns; the table is copied into a
 * feature attached to fg (freed with fg, not carried to clones).
 * Errors: WEFT_EINVAL (NULL fg, NULL arrays with n > 0, a negative or NaN
 * cost: the message on fg names its position), WEFT_ENOMEM. */
WEFT_API weft_status_t weft_fgraph_set_node_costs(weft_fgraph_t *fg, size_t n,
                                                  const uint64_t *keys, const double *ns);

/* node's cost as the inplace rewrite sees it: the measured cost of key (as
 * given to weft_fgraph_set_node_costs on fg) when there is one, else
 * weft_node_cost_estimate(node). NULL fg: the estimate; NULL node: 0. Thread: any, while fg
 * is not edited. */
WEFT_API double weft_fgraph_node_cost(const weft_fgraph_t *fg, const weft_apply_t *node,
                                      uint64_t key);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_NODE_COST_H */
