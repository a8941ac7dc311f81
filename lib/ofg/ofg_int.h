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
    /* Storage for runs of the plan (ofg_run.c), reused from call to call:
     * the only mutable part of the interned state, under its own lock. */
    struct weft__ofg_runs *runs;
} weft__ofg_plan_t;

/* Interned, immutable and process-lifetime (PyTensor's frozen, hash-consed
 * inner graphs): structurally equal OpFromGraphs share one weft__ofg_t, so
 * op equality is pointer equality, and the op's props are plain data that
 * any context may copy (weft_function_compile copies ops by value). */
typedef struct weft__ofg {
    weft_graph_t *g;   /* private context holding the inner graph */
    weft_fgraph_t *fg; /* the inner FunctionGraph (in g) */
    size_t n_in, n_out;
    weft_var_t **in, **out;
    bool inline_expand;
    const weft_op_t *grad_override; /* an OpFromGraph op of g, or NULL */
    uint64_t hash;
    bool *conn; /* conn[i * n_out + o]: output o depends on input i */
    /* Declared destroy_map (options), part of equality and the hash. */
    weft_op_alias_t destroy[WEFT_OP_MAX_ALIAS];
    size_t n_destroy;
    weft__ofg_plan_t plan;
} weft__ofg_t;

#define WEFT__OFG_NAME_MAX 64

/* The props blob copied by weft_op_create: the interned state and the name
 * (not part of equality; cut to WEFT__OFG_NAME_MAX - 1 bytes). */
typedef struct weft__ofg_props {
    const weft__ofg_t *d;
    char name[WEFT__OFG_NAME_MAX];
} weft__ofg_props_t;

/* ---- creation options (ofg_options.c) ---- */
/* *o: the caller's options (in may be NULL) with defaults for the fields
 * its size does not cover. Errors: WEFT_EINVAL (size too small, unknown
 * on_unused_input; message on g). */
weft_status_t weft__ofg_read_options(weft_graph_t *g, const weft_ofg_options_t *in,
                                     weft_ofg_options_t *o);
/* Number of inputs bound to constants, after checking each binding is a
 * constant of g (WEFT_EINVAL / WEFT_EFOREIGN, message on g). */
weft_status_t weft__ofg_count_bound(weft_graph_t *g, size_t n_in, const weft_ofg_options_t *o,
                                    size_t *n_bound);
/* Replaces each bound inner input by a copy of its constant and removes it
 * from d->fg's inputs; d->in / d->n_in become the op's inputs. keep[k]
 * receives the user's index of op input k. Errors: WEFT_ETYPE, WEFT_ENOMEM
 * (message on g). */
weft_status_t weft__ofg_bind(weft_graph_t *g, weft__ofg_t *d, size_t n_in,
                             const weft_ofg_options_t *o, size_t *keep);
/* Applies on_unused_input to the op's inputs (user variables: inputs[keep[k]]). */
weft_status_t weft__ofg_check_unused(weft_graph_t *g, const weft__ofg_t *d,
                                     weft_var_t *const *inputs, const size_t *keep,
                                     const weft_ofg_options_t *o);
/* Validates and stores o's destroy_map in d (message on g: WEFT_EINVAL). */
weft_status_t weft__ofg_set_destroy(weft_graph_t *g, weft__ofg_t *d, const weft_ofg_options_t *o);

/* The state of an OpFromGraph op, or NULL for another op. */
const weft__ofg_t *weft__ofg_get(const weft_op_t *op);

/* Builds d->plan, d->conn and d->hash from d->fg. Errors (message on err_g):
 * WEFT_EINVAL (an in-place inner node), WEFT_ECYCLE, WEFT_ENOMEM. */
weft_status_t weft__ofg_plan_build(weft__ofg_t *d, weft_graph_t *err_g);
void weft__ofg_plan_free(weft__ofg_plan_t *p);

/* The run storage cache of a plan (ofg_run.c); NULL: out of memory. Freed
 * with weft__ofg_runs_free (NULL: nothing), with the plan. */
struct weft__ofg_runs *weft__ofg_runs_create(void);
void weft__ofg_runs_free(struct weft__ofg_runs *r);

/* Class hooks implemented in ofg_run.c / ofg_plan.c / ofg_grad.c /
 * ofg_json.c. */
weft_status_t weft__ofg_perform(const weft_apply_t *node, weft_tensor_t *const *inputs,
                                weft_tensor_t **outputs, weft_kernel_ctx_t *ctx);
bool weft__ofg_connection_pattern(const weft_apply_t *node, size_t in, size_t out);
weft_status_t weft__ofg_grad(weft_graph_t *g, const weft_apply_t *node,
                             weft_var_t *const *output_grads, weft_var_t **input_grads);

/* JSON graph format hooks (ofg_json.c). */
weft_status_t weft__ofg_to_json(const weft_op_t *op, weft_json_props_t *p);
weft_status_t weft__ofg_from_json(weft_graph_t *g, const weft_op_class_t *cls,
                                  const weft_json_props_t *p, const weft_op_t **out);

/* Builds a copy of the inner graph in context g on new_inputs (one per inner
 * input, variables of g) and stores the inner outputs' copies in outs (ops
 * and constants recreated in g, creation sites kept). Errors: as
 * weft_apply_create, WEFT_ENOMEM (message on g). */
weft_status_t weft__ofg_copy_inner(const weft__ofg_t *d, weft_graph_t *g,
                                   weft_var_t *const *new_inputs, weft_var_t **outs);

/* Copies the subgraph of g between inputs and outputs into dst: fresh inputs
 * (same types and names) in new_inputs, the outputs' copies in new_outputs.
 * Errors (message on g): WEFT_EMISSING_INPUT (an undeclared root),
 * WEFT_ENOTIMPL (an op other than OpFromGraph whose props own memory),
 * WEFT_ETYPE (a null/disconnected type), WEFT_ENOMEM (ofg_import.c). */
weft_status_t weft__ofg_import(weft_graph_t *dst, weft_graph_t *g, size_t n_in,
                               weft_var_t *const *inputs, weft_var_t **new_inputs, size_t n_out,
                               weft_var_t *const *outputs, weft_var_t **new_outputs);
/* The same type in context g. */
weft_status_t weft__ofg_type_in(weft_graph_t *g, const weft_type_t *t, const weft_type_t **out);
/* An op of g equal to op (props copied by value). */
weft_status_t weft__ofg_op_in(weft_graph_t *g, const weft_op_t *op, const weft_op_t **out);

/* The op's hook if the class was compiled with it, else NULL. */
#define WEFT__OFG_HOOK(cls, field) \
    ((cls)->size >= offsetof(weft_op_class_t, field) + sizeof((cls)->field) ? (cls)->field : NULL)

#endif /* WEFT_OFG_INT_H */
