/* The props_to_json / props_from_json hooks of weft's built-in op classes
 * (ops_json.c), set in the class objects of lib/ops. Not part of the API. */
#ifndef WEFT_OPS_OPS_JSON_INT_H
#define WEFT_OPS_OPS_JSON_INT_H

#include "weft/json_props.h"
#include "weft/op.h"

#define WEFT__OPS_JSON_CODEC(name)                                                               \
    weft_status_t weft__ops_json_##name##_to_json(const weft_op_t *op, weft_json_props_t *p);    \
    weft_status_t weft__ops_json_##name##_from_json(weft_graph_t *g, const weft_op_class_t *cls, \
                                                    const weft_json_props_t *p,                  \
                                                    const weft_op_t **out);

WEFT__OPS_JSON_CODEC(elemwise)   /* {"inplace": i} (+ "dtype" for Cast) */
WEFT__OPS_JSON_CODEC(dimshuffle) /* {"order": [1, 0, -1]} (-1: new axis) */
WEFT__OPS_JSON_CODEC(reshape)    /* {"shape": [..]} or {"like": true} */
WEFT__OPS_JSON_CODEC(subtensor)  /* {"idx": "1:3, 2, ::-1"} (+ "inplace" for Set/Inc) */
/* Fixed-width props described by a field table (ops_json.c): Sum, Mean,
 * Max, Min, Prod, ReduceGrad, Argmax {"kind", "ndim", "axes", "keepdims"},
 * SumAxes {"axes"}, Gemm/Gemv {"inplace"}, Trsm {"flags"}, Syrk {"alpha",
 * "trans"}, TriMask {"diag_scale", "lower"}. */
WEFT__OPS_JSON_CODEC(table)

#endif /* WEFT_OPS_OPS_JSON_INT_H */
