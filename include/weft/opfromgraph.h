/* OpFromGraph: an op whose computation is a graph (PyTensor's
 * compile/builders.py OpFromGraph).
 *
 * weft_ofg_create wraps the subgraph between `inputs` and `outputs` into one
 * op. The subgraph is copied into an inner FunctionGraph, in a private graph
 * context of weft's, whose inputs are fresh variables standing for "input
 * 0 .. n-1" (PyTensor's NominalVariables): they are matched by position only.
 * Inner graphs are immutable and hash-consed (interned, as PyTensor's frozen
 * graphs): two OpFromGraphs built separately - in any contexts - over
 * structurally identical expressions share one inner graph, so they are
 * EQUAL ops (weft_op_equal), hash alike and are unified by merging.
 * Structural equality compares the inner input and output types, the inner
 * graphs (weft_graph_equal_computations with the inner inputs paired by
 * position; constants by value), the inline flag and the gradient override.
 * The name is only for printing (the props hold a copy, cut to 63 bytes): it
 * does not take part in equality. The op's props are plain data (no
 * props_fini), so the op can be copied into other contexts by value, e.g. by
 * weft_function_compile; interned inner graphs live until the process exits.
 *
 * Usable like any op: weft_apply_create / weft_op_call check the arity
 * ("Expected n input(s)", WEFT_EINVAL) and that each argument's type is the
 * declared inner input's type or a more specific one (is_super, WEFT_ETYPE);
 * outputs get the inner outputs' types. Nesting (an OpFromGraph inside an
 * inner graph) is allowed.
 *
 * Running (perform): the inner nodes run sequentially inside the node, in the
 * inner graph's topological order, each through its op's perform hook with the
 * outer node's kernel context (worker, allocator, error slot) - an
 * interpreter of a plan made at creation, rather than weft_eval or a compiled
 * inner function: no graph context is touched at run time, so OpFromGraph
 * nodes may run on several workers at once. Outputs that alias an input or another output (views,
 * identity outputs) are copied: the op declares no view_map. In-place inner
 * nodes (a non-empty destroy_map) are refused at creation, so inner inputs are
 * never overwritten. An OpFromGraph may still declare that it destroys its
 * own inputs (options destroy_map): its perform then writes each such output
 * into the destroyed input's tensor (after every other output is emitted,
 * through scratch when the value shares memory with an input) and returns
 * that tensor.
 *
 * Inlining: with the inline flag, the rewrite "inline_ofg_expansion"
 * (registered first in fast_run, tag "inline", weft/rewrite.h) replaces each
 * such node by a copy of its inner graph bound to the node's actual inputs
 * (constants shared, creation sites copied), so outer rewrites see through
 * it. weft_ofg_expand does the same for one node by hand.
 *
 * Gradient: with no override, the grad hook builds, in the caller's context,
 * the vector-Jacobian product of the inner graph (weft_grad of
 * sum_k sum(out_k * g_k) with respect to the float inputs connected to an
 * output that receives a gradient) and wraps it as another OpFromGraph (same
 * inline flag, named "grad_<name>") applied to the node's inputs and the
 * output gradients. Gradients of gradients work the same way. Inputs that are
 * not connected (connection pattern) or not float get no gradient (NULL:
 * disconnected). An override is an op taking (inputs..., output gradients...)
 * - one gradient per output, zeros for outputs that do not reach the cost -
 * and returning one gradient per input.
 *
 * connection_pattern: output o depends on input i when a path joins them in
 * the inner graph (inner nodes' own connection patterns respected).
 * inner_fgraph: the inner FunctionGraph (must not be edited).
 *
 * Ownership: the op is owned by the context it was created in; its inner
 * graph is weft's (interned, kept until the process exits).
 * Thread: building, as every graph function (one thread per context);
 * perform may run concurrently on several workers. */
#ifndef WEFT_OPFROMGRAPH_H
#define WEFT_OPFROMGRAPH_H

#include <stdbool.h>
#include <stddef.h>

#include "weft/export.h"
#include "weft/fgraph.h"
#include "weft/graph.h"
#include "weft/op.h"
#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What weft_ofg_create does with an input that no output depends on
 * (PyTensor's on_unused_input). */
typedef enum weft_ofg_unused {
    WEFT_OFG_UNUSED_IGNORE = 0, /* accepted silently (the default) */
    WEFT_OFG_UNUSED_WARN = 1,   /* accepted; one warning per unused input */
    WEFT_OFG_UNUSED_RAISE = 2   /* refused: WEFT_EINVAL naming the first one */
} weft_ofg_unused_t;

/* Receives a warning (one line, no newline; borrowed for the call). */
typedef void (*weft_ofg_warn_fn)(void *user, const char *message);

typedef struct weft_ofg_options {
    size_t size;        /* sizeof(weft_ofg_options_t) */
    bool inline_expand; /* PyTensor's inline=True: expanded by inline_ofg_expansion */
    const char *name;   /* for printing (copied); NULL: none */
    /* Gradient override (NULL: derived from the inner graph): an
     * OpFromGraph taking n_in + n_out inputs (the op's inputs, then one
     * gradient per output) and returning n_in outputs. Borrowed (copied by
     * value into the inner graph's context). */
    const weft_op_t *grad_override;
    /* ---- fields below are read only when size covers them ---- */
    /* Constant inputs: NULL, or n_in entries parallel to inputs; a non-NULL
     * entry is a constant of g that input k is bound to. A bound input is
     * replaced by (a copy of) its constant inside the inner graph and is not
     * an input of the op: the op takes the unbound inputs, in order, so
     * n_inputs = n_in - bound. The constant's type must be acceptable where
     * the input was (the input's type is_super of it). The gradient
     * override, if any, then takes (unbound inputs, output gradients). */
    weft_var_t *const *input_constants;
    /* Unused op inputs (after binding): ignore (default), warn or raise.
     * Warnings go to warn(warn_user, message) when warn is set, else to
     * stderr as "weft: warning: MESSAGE\n". The message is
     * "weft_ofg_create: input K (NAME, created at FILE:LINE) is not used by
     * any output"; K is the op input's position. */
    weft_ofg_unused_t on_unused_input;
    weft_ofg_warn_fn warn;
    void *warn_user;
    /* destroy_map (PyTensor's OpFromGraph(destroy_map=...)): entries
     * {output o, input i} declare that output o is computed in the memory of
     * op input i, whose value is gone after the node runs. The
     * DestroyHandler (weft/destroy.h) then treats the node as any in-place
     * op: it orders every other reader of input i before it, refuses a
     * second destroyer and a protected input (Supervisor), and a compiled
     * function accepts the op only with accept_inplace. Output o must have
     * input i's type exactly; each output and each input at most once; at
     * most WEFT_OP_MAX_ALIAS entries. Borrowed (copied). */
    size_t n_destroy;
    const weft_op_alias_t *destroy_map;
} weft_ofg_options_t;

#define WEFT_OFG_OPTIONS_INIT \
    {sizeof(weft_ofg_options_t), false, NULL, NULL, NULL, WEFT_OFG_UNUSED_IGNORE, NULL, NULL, 0, NULL}

/* The OpFromGraph op class (class name "OpFromGraph"). Returns static. */
WEFT_API const weft_op_class_t *weft_ofg_class(void);

/* Builds an OpFromGraph from inputs to outputs (1..WEFT_OP_MAX_OUTPUTS outputs).
 * Every root variable the outputs depend on must be among the inputs or be a
 * constant. opts may be NULL (WEFT_OFG_OPTIONS_INIT).
 * opts->size may be that of the first four fields (older callers): the
 * later ones then take their defaults; any other size below
 * sizeof(weft_ofg_options_t) is WEFT_EINVAL.
 * Ownership: borrows g, inputs, outputs and opts; returns borrowed, owned by g.
 * Errors (message on g: weft_graph_last_error):
 *   WEFT_EINVAL (NULL args, n_out 0 or > WEFT_OP_MAX_OUTPUTS, opts->size too
 *     small, an input with an owner or a constant, an input listed twice, an
 *     inner node with a destroy_map, a grad_override that is not an
 *     OpFromGraph of n_inputs + n_out inputs, an input_constants entry that
 *     is not a constant of g, an unused input under WEFT_OFG_UNUSED_RAISE, a
 *     destroy_map entry out of range, repeating an output or an input, or
 *     whose output type differs from its input's; an unknown
 *     on_unused_input),
 *   WEFT_ETYPE (a constant whose type the bound input does not accept),
 *   WEFT_ENOTIMPL (an inner op, other than OpFromGraph, whose props own
 *     memory (props_fini): it cannot be copied into the inner graph),
 *   WEFT_EMISSING_INPUT (an undeclared root input, named),
 *   WEFT_EFOREIGN (a variable of another context),
 *   WEFT_ETYPE (a null/disconnected-type variable), WEFT_ENOMEM. */
WEFT_API weft_status_t weft_ofg_create(weft_graph_t *g, size_t n_in, weft_var_t *const *inputs,
                                       size_t n_out, weft_var_t *const *outputs,
                                       const weft_ofg_options_t *opts, const weft_op_t **out);

/* Whether op is an OpFromGraph. */
WEFT_API bool weft_ofg_is(const weft_op_t *op);
/* Accessors of an OpFromGraph (NULL / 0 / false for another op):
 * the inner graph (borrowed, weft's, valid until exit; never edit it, and
 * inspect it - print, toposort - from one thread at a time, as it is shared
 * by every equal OpFromGraph of the process),
 * the number of inputs / outputs, the inline flag, the name (borrowed from
 * the op; NULL: none), the gradient override (NULL: none; an op of the inner
 * graph's context: compare, print or save it; weft_apply_create needs an op
 * of the caller's context, which the grad hook makes itself). */
WEFT_API weft_fgraph_t *weft_ofg_fgraph(const weft_op_t *op);
WEFT_API size_t weft_ofg_n_inputs(const weft_op_t *op);
WEFT_API size_t weft_ofg_n_outputs(const weft_op_t *op);
WEFT_API bool weft_ofg_is_inline(const weft_op_t *op);
WEFT_API const char *weft_ofg_name(const weft_op_t *op);
WEFT_API const weft_op_t *weft_ofg_grad_override(const weft_op_t *op);
/* The declared destroy_map (as weft_op_destroy_map(op, ...)): *entries
 * borrowed, valid while the op lives; *n = 0 and *entries NULL for another
 * op or a NULL op; NULL entries or n: that one is not written.
 * Thread: any (op is only read). */
WEFT_API void weft_ofg_destroy_map(const weft_op_t *op, const weft_op_alias_t **entries, size_t *n);

/* Builds, in g, a copy of the inner graph of node's OpFromGraph bound to the
 * node's inputs and stores the copies of the inner outputs in outputs[0..n)
 * (n = the node's output count). Inner constants are shared; each copied
 * node keeps its inner node's creation site. Used by inline_ofg_expansion.
 * Ownership: borrows g and node; outputs[k] are borrowed, owned by g.
 * Errors: WEFT_EINVAL (NULL args, node's op not an OpFromGraph),
 *   WEFT_EFOREIGN (node of another context), WEFT_ETYPE, WEFT_ENOMEM. */
WEFT_API weft_status_t weft_ofg_expand(weft_graph_t *g, const weft_apply_t *node,
                                       weft_var_t **outputs);

/* ---- the inline rewrite ------------------------------------------------------- */

typedef struct weft_rewrite_db weft_rewrite_db_t;

/* Name of the node-expanding walk (in2out) registered at position -0.01 with
 * tags "fast_run", "fast_compile" and "inline". */
#define WEFT_OFG_INLINE_REWRITE "inline_ofg_expansion"

/* Registers WEFT_OFG_INLINE_REWRITE in db (weft/rewrite_db.h); WEFT_OK when
 * it is there already. The default database (weft_rewrite_db_default) has
 * it from the start.
 * Ownership: borrows db. Errors: WEFT_EINVAL (NULL db), WEFT_ENOMEM.
 * Thread: as weft_rewrite_db_register (the database is locked). */
WEFT_API weft_status_t weft_ofg_register_rewrites(weft_rewrite_db_t *db);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_OPFROMGRAPH_H */
