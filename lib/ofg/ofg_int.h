/* Internal state of an OpFromGraph op: the inner FunctionGraph, the declared
 * types, the run plan (inner nodes in topological order with their input
 * references resolved to slots) and the connection pattern. Shared by ofg.c
 * (creation, class hooks), ofg_plan.c (plan, perform, connection pattern),
 * ofg_grad.c (expansion and gradient) and ofg_json.c (props to/from JSON). */
#ifndef WEFT_OFG_INT_H
#define WEFT_OFG_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/fgraph.h"
#include "weft/graph.h"
#include "weft/op.h"
#include "weft/opfromgraph.h"
#include "weft/tensor.h"

/* Where a value of the inner graph comes from at run time. */
typedef enum ofg_ref_kind {
    OFG_REF_INPUT = 0, /* inner input idx */
    OFG_REF_CONST = 1, /* plan constant idx */
    OFG_REF_SLOT = 2,  /* output slot idx of an inner node */
} ofg_ref_kind_t;

typedef struct ofg_ref {
    uint32_t kind;
    uint32_t idx;
} ofg_ref_t;

typedef struct weft__ofg_plan {
    size_t n_nodes;
    const weft_apply_t **nodes; /* topological order */
    size_t *in_off;             /* node j's input refs: refs[in_off[j] .. in_off[j+1]) */
    ofg_ref_t *refs;
    size_t *slot0; /* node j's first output slot */
    size_t n_slots, max_in;
    size_t n_consts;
    weft_tensor_t **consts; /* read-only views of the constants' data */
    ofg_ref_t *out_refs;    /* one per inner output */
} weft__ofg_plan_t;

typedef struct weft__ofg {
    weft_graph_t *g;
    weft_fgraph_t *fg; /* owned by g (freed by weft_graph_destroy before props_fini) */
    size_t n_in, n_out;
    weft_var_t **in, **out;
    bool inline_expand;
    char *name;
    const weft_op_t *grad_override;
    uint64_t hash;
    bool *conn; /* conn[i * n_out + o]: output o depends on input i */
    weft__ofg_plan_t plan;
} weft__ofg_t;

/* The props blob copied by weft_op_create: one pointer to the heap state. */
typedef struct weft__ofg_props {
    weft__ofg_t *d;
} weft__ofg_props_t;

/* The state of an OpFromGraph op, or NULL for another op. */
const weft__ofg_t *weft__ofg_get(const weft_op_t *op);

/* Builds d->plan, d->conn and d->hash from d->fg. Errors: WEFT_EINVAL (an
 * in-place inner node, message on d->g), WEFT_ECYCLE, WEFT_ENOMEM. */
weft_status_t weft__ofg_plan_build(weft__ofg_t *d);
void weft__ofg_plan_free(weft__ofg_plan_t *p);

/* Class hooks implemented in ofg_plan.c / ofg_grad.c / ofg_json.c. */
weft_status_t weft__ofg_perform(const weft_apply_t *node, weft_tensor_t *const *inputs,
                                weft_tensor_t **outputs, weft_kernel_ctx_t *ctx);
bool weft__ofg_connection_pattern(const weft_apply_t *node, size_t in, size_t out);
weft_status_t weft__ofg_grad(weft_graph_t *g, const weft_apply_t *node,
                             weft_var_t *const *output_grads, weft_var_t **input_grads);

/* JSON graph format hooks (ofg_json.c). */
weft_status_t weft__ofg_to_json(const weft_op_t *op, weft_json_props_t *p);
weft_status_t weft__ofg_from_json(weft_graph_t *g, const weft_op_class_t *cls,
                                  const weft_json_props_t *p, const weft_op_t **out);

/* Copies the inner graph onto new_inputs (one per inner input) in d->g and
 * stores the inner outputs' copies in outs. Errors: as weft_apply_create. */
weft_status_t weft__ofg_copy_inner(const weft__ofg_t *d, weft_var_t *const *new_inputs,
                                   weft_var_t **outs);

/* Registers the inline rewrite in the default database, once per process. */
void weft__ofg_register_default(void);

/* The op's hook if the class was compiled with it, else NULL. */
#define WEFT__OFG_HOOK(cls, field) \
    ((cls)->size >= offsetof(weft_op_class_t, field) + sizeof((cls)->field) ? (cls)->field : NULL)

#endif /* WEFT_OFG_INT_H */
