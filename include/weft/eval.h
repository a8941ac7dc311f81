/* The sequential reference evaluator: runs a graph once, node by node, on the
 * calling thread. It is the semantic reference for the compiled-function
 * runtime and what op tests, gradient checks and rewrite tests run graphs
 * with. It does no rewriting, no memory planning and no copies.
 *
 * Semantics:
 * - every apply node between the given roots and the outputs runs once, in a
 *   topological order (inputs before users; among independent nodes, in
 *   depth-first order from outputs[0], outputs[1], ...);
 * - root inputs take the given tensors; constants take a tensor viewing the
 *   constant's data (read-only by contract);
 * - each node's perform hook gets a kernel context (weft/kernel.h) with
 *   worker 0 and empty output cells;
 * - destroy ops (weft/op.h destroy_map) run as given: they overwrite their
 *   input tensor in place, including a caller's input tensor. The evaluator
 *   does not check that the graph's destroyers are valid (DestroyHandler
 *   rules, weft/destroy.h) nor order them: the caller ensures it;
 * - after each node, the output tensors are checked against the output
 *   variables' types (dtype, ndim, every static length).
 *
 * Thread: uses g from one thread (as every graph function). */
#ifndef WEFT_EVAL_H
#define WEFT_EVAL_H

#include <stddef.h>

#include "weft/export.h"
#include "weft/graph.h"
#include "weft/status.h"
#include "weft/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Evaluates outputs[0..n_out) given values[k] for the root variable
 * inputs[k] (k < n_in), writing a new reference to each output's value into
 * results[k]. An output that is itself an input or a constant yields (a new
 * reference to) that tensor.
 * Ownership: borrows g, inputs, values (destroy ops may overwrite their
 * elements), outputs; results[k] are new references, release each with
 * weft_tensor_release. On error results are all set to NULL.
 * Errors (the message, on g: weft_graph_last_error, names the variable or the
 * node, e.g. "apply 7 (Add, built at test.c:12): input 1 shape [3] vs [4]"):
 *   WEFT_EINVAL (NULL args, n_out 0, an input with an owner or listed twice,
 *     an output of null or disconnected type),
 *   WEFT_EFOREIGN (a variable of another context),
 *   WEFT_EMISSING_INPUT (a root variable the outputs need is not among the
 *     inputs),
 *   WEFT_ETYPE / WEFT_ESHAPE (an input tensor does not match its variable's
 *     dtype/ndim or static lengths),
 *   WEFT_ENOTIMPL (an op without a perform hook),
 *   WEFT_ENODE_FAILED is never returned: a failing perform's own status is
 *     returned (e.g. WEFT_ESHAPE), with the node and the kernel's message;
 *     an output that does not match its variable's type is WEFT_ETYPE or
 *     WEFT_ESHAPE naming the node,
 *   WEFT_ENOMEM. */
WEFT_API weft_status_t weft_eval(weft_graph_t *g, size_t n_in, weft_var_t *const *inputs,
                                 weft_tensor_t *const *values, size_t n_out,
                                 weft_var_t *const *outputs, weft_tensor_t **results);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_EVAL_H */
