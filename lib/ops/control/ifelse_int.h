/* IfElse's props and builder, shared by the op (ifelse.c) and the list of
 * built-in classes. Not part of the API. */
#ifndef WEFT_OPS_CONTROL_IFELSE_INT_H
#define WEFT_OPS_CONTROL_IFELSE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "weft/op.h"
#include "weft/tensor.h"

#include "graph/ifelse_id.h" /* weft__ifelse_props_t */

extern const weft_op_class_t weft__ifelse_class;

/* The condition's truth (nonzero; NaN is true). */
bool weft__ifelse_truth(const weft_tensor_t *cond);

/* Builds IfElse{n, as_view}(cond, tv..., ev...) at file:line; out[0..n) get
 * the outputs. Errors: make_node's, kept on g as a constructor's. */
weft_status_t weft__ifelse_build(weft_graph_t *g, weft_var_t *cond, size_t n,
                                 weft_var_t *const *tv, weft_var_t *const *ev, bool as_view,
                                 const char *file, int line, weft_var_t **out);

#endif /* WEFT_OPS_CONTROL_IFELSE_INT_H */
