/* Internal state of a Scan op: the interned core (inner FunctionGraph, the
 * layout of sequences, carried and pure outputs and non-sequences) and the
 * props blob (core, which outputs return their last state only, name).
 * Shared by scan.c (creation, class hooks), scan_run.c (perform),
 * scan_json.c, scan_rewrite.c and scan_grad.c. */
#ifndef WEFT_SCAN_INT_H
#define WEFT_SCAN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/fgraph.h"
#include "weft/graph.h"
#include "weft/op.h"
#include "weft/scan.h"
#include "weft/tensor.h"

/* Where each inner input and output sits (zeroed before filling, so two
 * layouts compare with memcmp). Inner inputs: every sequence's taps, then
 * every carried output's taps, then the non-sequences. Inner outputs: one
 * update per output, then the until condition when has_until. Outer inputs:
 * n_steps, the sequences, the initial values of the carried outputs (in
 * output order), the non-sequences. */
typedef struct weft__scan_layout {
    uint32_t n_seq, n_out, n_nonseq, has_until;
    uint32_t reverse; /* step t reads sequence row n - 1 - t (spec.reverse) */
    uint32_t seq_ntaps[WEFT_SCAN_MAX_SEQS];
    int64_t seq_taps[WEFT_SCAN_MAX_SEQS][WEFT_SCAN_MAX_TAPS];
    uint32_t out_ntaps[WEFT_OP_MAX_OUTPUTS]; /* 0: not carried */
    int64_t out_taps[WEFT_OP_MAX_OUTPUTS][WEFT_SCAN_MAX_TAPS];
} weft__scan_layout_t;

/* Interned and process-lifetime, as OpFromGraph's inner graphs: equal scans
 * share one core, so op equality compares pointers. */
typedef struct weft__scan_core {
    weft_graph_t *g;       /* private context holding ofg */
    const weft_op_t *ofg;  /* OpFromGraph of the inner graph (for copies in grad) */
    weft_fgraph_t *fg;     /* its interned inner FunctionGraph */
    weft__scan_layout_t lay;
    size_t n_in, n_inner_out; /* inner inputs / outputs */
    size_t n_carry;           /* outputs with taps */
    uint64_t hash;
} weft__scan_core_t;

#define WEFT__SCAN_NAME_MAX 32

typedef struct weft__scan_props {
    const weft__scan_core_t *core;
    uint32_t last_mask; /* bit o: output o is its last state only */
    /* bit o (a last-state output acc + P_t^T @ B_t, scan_chunk.c): a
     * pipelined run sums it a chunk of WEFT__PIPE_CHUNK steps at a time
     * (scan_pipe.h); set by the fast_math rewrite scan_chunk_sum */
    uint32_t chunk_mask;
    char name[WEFT__SCAN_NAME_MAX];
} weft__scan_props_t;

/* The props of a Scan op, or NULL for another op. */
const weft__scan_props_t *weft__scan_get(const weft_op_t *op);

/* Interns the inner graph between inner inputs (n = layout's inner input
 * count) and inner outputs with lay. Errors (message on g): as
 * weft_ofg_create, WEFT_ENOMEM. */
weft_status_t weft__scan_core_make(weft_graph_t *g, const weft__scan_layout_t *lay,
                                   weft_var_t *const *inner_in, weft_var_t *const *inner_out,
                                   const weft__scan_core_t **out);
/* A Scan op of g for core (name NULL: none). */
weft_status_t weft__scan_op(weft_graph_t *g, const weft__scan_core_t *core, uint32_t last_mask,
                            const char *name, const weft_op_t **out);

/* The same with the chunk-summed outputs chunk_mask (a subset of
 * last_mask). */
weft_status_t weft__scan_op_ex(weft_graph_t *g, const weft__scan_core_t *core, uint32_t last_mask,
                               uint32_t chunk_mask, const char *name, const weft_op_t **out);

/* Counts derived from a layout. */
size_t weft__scan_n_seq_taps(const weft__scan_layout_t *lay);
size_t weft__scan_n_carry_taps(const weft__scan_layout_t *lay);
size_t weft__scan_n_carry(const weft__scan_layout_t *lay);
/* Lag of output o: -min(taps) for a carried output, 0 otherwise. */
int64_t weft__scan_lag(const weft__scan_layout_t *lay, size_t o);

/* Class hooks (scan_run.c, scan_json.c, scan_grad.c). */
weft_status_t weft__scan_perform(const weft_apply_t *node, weft_tensor_t *const *inputs,
                                 weft_tensor_t **outputs, weft_kernel_ctx_t *ctx);
weft_status_t weft__scan_to_json(const weft_op_t *op, weft_json_props_t *p);
weft_status_t weft__scan_from_json(weft_graph_t *g, const weft_op_class_t *cls,
                                   const weft_json_props_t *p, const weft_op_t **out);
weft_status_t weft__scan_grad(weft_graph_t *g, const weft_apply_t *node,
                              weft_var_t *const *output_grads, weft_var_t **input_grads);

/* The node rewrite of scan_push_out_non_seq (scan_pushout.c). */
typedef struct weft_rewrite_result weft_rewrite_result_t;
typedef weft_status_t (*weft__scan_node_rewrite_fn)(weft_fgraph_t *fg, weft_apply_t *node,
                                                    void *user, weft_rewrite_result_t *res);
weft__scan_node_rewrite_fn weft__scan_push_out_fn(void);
/* The node rewrite of scan_split_map (scan_pushout.c). */
weft__scan_node_rewrite_fn weft__scan_split_map_fn(void);
/* The node rewrite of scan_prune_outputs (scan_prune.c). */
weft__scan_node_rewrite_fn weft__scan_prune_fn(void);
/* The node rewrite of scan_merge (scan_merge.c). */
weft__scan_node_rewrite_fn weft__scan_merge_fn(void);
/* The node rewrite of scan_push_out_dot (scan_pushout_dot.c). */
weft__scan_node_rewrite_fn weft__scan_push_out_dot_fn(void);
/* The node rewrite of scan_chunk_sum (scan_chunk.c). */
weft__scan_node_rewrite_fn weft__scan_chunk_sum_fn(void);
/* The parts of u = acc + P^T @ B (either order of the sum): *p and *b
 * (matrices whose last lengths are static, the product of acc's type), or
 * false (scan_pushout_dot.c). */
bool weft__scan_acc_parts(const weft_var_t *u, const weft_var_t *acc, weft_var_t **p,
                          weft_var_t **b);
/* Output o of c is an accumulator acc_t = acc_{t-1} + P_t^T @ B_t: taps
 * {-1}, its state read only by that sum, the sum no other value's input
 * (scan_pushout_dot.c). */
bool weft__scan_inner_acc(const weft__scan_core_t *c, uint32_t o);
/* c carries an output that is no such accumulator (a chain the sums can
 * overlap: the pipeline runs), and has no until. */
bool weft__scan_has_chain(const weft__scan_core_t *c);
/* The node rewrite of scan_fill_seq (scan_fill_seq.c). */
weft__scan_node_rewrite_fn weft__scan_fill_seq_fn(void);

/* Each non-NULL views[k] stops referencing the buffer it views: rewritten
 * as an empty view of a process-lifetime tensor when nothing else holds the
 * handle (the next run rewrites it in place again), else released and set
 * to NULL (scan_park.c). */
void weft__scan_views_park(weft_tensor_t **views, size_t n);

/* *out: a node of op on node's inputs, with node's creation site
 * (scan_rewrite.c). Errors (on g): as weft_apply_create. */
weft_status_t weft__scan_reapply(weft_graph_t *g, const weft_apply_t *node, const weft_op_t *op,
                                 weft_apply_t **out);

/* Every client of v in fg is the Subtensor op `last` (y[-1]) and none is a
 * graph output (scan_rewrite.c). */
bool weft__scan_read_last_only(weft_fgraph_t *fg, const weft_var_t *v, const weft_op_t *last);
/* Whether a Scan node's step count (input 0) is an int64 constant; *n its
 * value (-1: count from the sequences). scan_rewrite.c */
bool weft__scan_const_steps(const weft_apply_t *node, int64_t *n);

#define WEFT__SCAN_MAX_INNER_IN \
    (WEFT_SCAN_MAX_SEQS * WEFT_SCAN_MAX_TAPS + WEFT_OP_MAX_OUTPUTS * WEFT_SCAN_MAX_TAPS + \
     WEFT_SCAN_MAX_NONSEQS)

/* A Scan node being rebuilt with weft_scan (scan_prune.c): fresh
 * placeholders ph of the inner inputs, the inner outputs' copies upd on
 * them, and the new spec's arrays. */
typedef struct weft__scan_rebuilt {
    weft_scan_seq_t seqs[WEFT_SCAN_MAX_SEQS];
    weft_scan_output_t outs[WEFT_OP_MAX_OUTPUTS];
    weft_var_t *nso[WEFT_SCAN_MAX_NONSEQS];
    weft_var_t *ph[WEFT__SCAN_MAX_INNER_IN], *upd[WEFT_OP_MAX_OUTPUTS + 1];
    size_t kept[WEFT_OP_MAX_OUTPUTS]; /* new output j is old output kept[j] */
    size_t n_kept;
} weft__scan_rebuilt_t;

/* r->ph and r->upd: c's inner graph copied in g on fresh placeholders.
 * Errors (on g): as weft__scan_expand. */
weft_status_t weft__scan_copy_inner(weft_graph_t *g, const weft__scan_core_t *c,
                                    weft__scan_rebuilt_t *r, const char *file, int line);
/* *sp: node's spec on r's placeholders without the outputs in drop (bit o),
 * r->kept listing the outputs kept; sp->outputs is r->outs. */
void weft__scan_spec_without(const weft_apply_t *node, const weft__scan_props_t *p, uint32_t drop,
                             weft__scan_rebuilt_t *r, weft_scan_spec_t *sp);

/* A copy, in g, of c's inner graph applied to in[0..c->n_in): the inner
 * outputs' copies in outs (a dead OpFromGraph node stays behind in g).
 * Errors (on g): as weft_apply_create and weft_ofg_expand. */
weft_status_t weft__scan_expand(weft_graph_t *g, const weft__scan_core_t *c,
                                weft_var_t *const *in, weft_var_t **outs, const char *file,
                                int line);

/* A new root variable of g with v's type (v of any context), named name.
 * NULL on error (kept on g). */
weft_var_t *weft__scan_placeholder_like(weft_graph_t *g, const weft_var_t *v, const char *name,
                                        const char *file, int line);

/* "NAME (created at FILE:LINE)" of v into buf. */
void weft__scan_describe_var(const weft_var_t *v, char *buf, size_t cap);

#endif /* WEFT_SCAN_INT_H */
