/* Ops: the computation definitions that Apply nodes instantiate.
 *
 * An op is a class (a vtable, weft_op_class_t, usually a static const object
 * written by the op's author, inside or outside weft) plus a props blob: the
 * parameters that distinguish instances (an axis list, an in-place flag...).
 * Two ops are equal iff they have the same class and equal props; equal ops
 * applied to the same inputs are duplicates that merging unifies.
 *
 * Aliasing declarations (used by the DestroyHandler, weft/destroy.h):
 * - view_map entry {output o, input i}: output o may share memory with input
 *   i, which it only reads;
 * - destroy_map entry {o, i}: output o is computed by overwriting input i in
 *   place (input i's value is gone after the node runs).
 * Each output appears at most once in a well-formed map (an output listed with
 * two inputs is rejected by the DestroyHandler, rule D0).
 *
 * Only a kernel (and maybe a shape function or a gradient)? weft/custom_op.h
 * makes the class from one callback. Writing a full op class: see the
 * user-defined op example in tests/graph/test_op.c
 * (Scale{factor}: props with equality, hash and printing, make_node type
 * checks, destroy_map, do_constant_folding, grad, inplace_variant). Short form:
 *
 *     static weft_status_t neg_make_node(weft_graph_t *g, const weft_op_t *op,
 *                                        size_t n_in, weft_var_t *const *in,
 *                                        size_t *n_out, const weft_type_t **out)
 *     {
 *         if (n_in != 1)
 *             return weft_graph_set_error(g, WEFT_EINVAL, "Neg takes 1 input");
 *         *n_out = 1;
 *         out[0] = weft_var_type(in[0]);   // same type as the input
 *         return WEFT_OK;
 *     }
 *     static const weft_op_class_t neg_class = {
 *         .size = sizeof(weft_op_class_t), .name = "Neg", .make_node = neg_make_node};
 *
 *     const weft_op_t *neg;                 // owned by g
 *     weft_op_create(g, &neg_class, NULL, &neg);
 *     weft_var_t *y = weft_op_call(g, neg, 1, &x);  // Neg(x), trace: this file:line
 *
 * Hooks beyond the author's `size` are never read, so a class compiled
 * against an older, shorter weft_op_class_t keeps working.
 *
 * Ownership: weft_op_create copies props into the context; the class object
 * is borrowed and must outlive the context (static storage is typical). */
#ifndef WEFT_OP_H
#define WEFT_OP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/export.h"
#include "weft/graph.h"
#include "weft/status.h"
#include "weft/type.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_fgraph weft_fgraph_t;
/* Run-time values (weft/tensor.h) and the per-run kernel context (weft/kernel.h). */
typedef struct weft_tensor weft_tensor_t;
typedef struct weft_kernel_ctx weft_kernel_ctx_t;
/* The props of one op in the JSON graph format (weft/json_props.h). */
typedef struct weft_json_props weft_json_props_t;
typedef struct weft_op_class weft_op_class_t;

#define WEFT_OP_MAX_OUTPUTS 16
#define WEFT_OP_MAX_ALIAS 16

typedef struct weft_op_alias {
    uint32_t output; /* output index (for tolerate_* pairs: the destroyed input d) */
    uint32_t input;  /* input index (for tolerate_* pairs: the other input j) */
} weft_op_alias_t;

typedef struct weft_op_class {
    size_t size;      /* sizeof(weft_op_class_t) as compiled by the op's author */
    const char *name; /* class name, e.g. "Add"; printed as Name{props} */
    size_t props_size; /* bytes copied from the props pointer at creation; 0: none */

    /* Props equality and hash; NULL: bytewise comparison / hash of the bytes.
     * Must agree: equal props hash equally. */
    bool (*props_equal)(const void *a, const void *b);
    uint64_t (*props_hash)(const void *props);
    /* Writes "k=v, ..." for the printed form; NULL: no props shown. snprintf-like. */
    int (*props_print)(const void *props, char *buf, size_t cap);
    /* Releases what the props own; called when the context is destroyed. */
    void (*props_fini)(void *props);

    /* Required. Checks the inputs and computes the output types: set *n_out
     * (1..WEFT_OP_MAX_OUTPUTS) and out_types[0..*n_out). On bad input return
     * an error through weft_graph_set_error (WEFT_ETYPE for a type problem,
     * WEFT_EINVAL for a wrong number of inputs) naming the offending input. */
    weft_status_t (*make_node)(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                               weft_var_t *const *inputs, size_t *n_out,
                               const weft_type_t **out_types);

    /* Computes the node at run time. inputs are read-only (except those in the
     * destroy_map, which the op overwrites). outputs are one-slot cells: a
     * cell may hold a tensor from a previous call, which the op may reuse if
     * it has the right dtype and shape, or release and replace. The op must
     * fill every cell (a destroy output holds a new reference to its input's
     * buffer; a view output a view of its input, best made with
     * weft_kernel_view_output, which allocates nothing in steady state).
     * Errors are reported with weft_kernel_error (weft/kernel.h). NULL: the
     * op cannot be executed (compiling a graph containing it fails with
     * WEFT_ENOTIMPL). */
    weft_status_t (*perform)(const weft_apply_t *node, weft_tensor_t *const *inputs,
                             weft_tensor_t **outputs, weft_kernel_ctx_t *ctx);

    /* Aliasing maps: fill at most cap entries, return the count. NULL: none. */
    size_t (*destroy_map)(const weft_op_t *op, weft_op_alias_t *out, size_t cap);
    size_t (*view_map)(const weft_op_t *op, weft_op_alias_t *out, size_t cap);
    /* DestroyHandler relaxations, pairs {d, j} (rule D3): tolerate_same - input
     * j may be the identical variable as destroyed input d; tolerate_aliased -
     * ignore any aliasing between destroyed input d and input j. NULL: none. */
    size_t (*tolerate_same)(const weft_op_t *op, weft_op_alias_t *out, size_t cap);
    size_t (*tolerate_aliased)(const weft_op_t *op, weft_op_alias_t *out, size_t cap);

    /* Index of the default output, or -1 (the single output is the default).
     * NULL: -1. */
    int (*default_output)(const weft_op_t *op);
    /* May the node be evaluated at compile time when all inputs are constant?
     * NULL: yes. */
    bool (*do_constant_folding)(const weft_apply_t *node);
    /* Does output `out` depend on input `in`? NULL: every pair connected. */
    bool (*connection_pattern)(const weft_apply_t *node, size_t in, size_t out);

    /* Reverse-mode gradient (L_op): given the gradient of the cost with respect
     * to each output (NULL entry: that output does not reach the cost, i.e. a
     * zero gradient), build in g the gradient with respect to each input and
     * store it in input_grads[i]; leave NULL for a disconnected input, or store
     * a variable of the null type (weft_type_null) for an undefined gradient.
     * NULL hook: the op is not differentiable (weft_grad reports WEFT_ENOGRAD
     * naming the node). The hook builds with the constructors; when one
     * returns NULL, return weft_graph_error(g) (its status, kept on g). */
    weft_status_t (*grad)(weft_graph_t *g, const weft_apply_t *node,
                          weft_var_t *const *output_grads, weft_var_t **input_grads);

    /* The inner graph of an op built from a graph (OpFromGraph); NULL: none.
     * Returns borrowed, owned by the op's props. */
    weft_fgraph_t *(*inner_fgraph)(const weft_op_t *op);

    /* An equivalent op that destroys input `input` (writing its output there),
     * for the inplace rewrite. Errors: WEFT_ENOTIMPL when the op has no such
     * variant for that input. NULL hook: none for any input. */
    weft_status_t (*inplace_variant)(weft_graph_t *g, const weft_op_t *op, size_t input,
                                     const weft_op_t **out);

    /* The JSON graph format (weft/graph_io.h, weft/json_props.h). Saving:
     * write the props of op into `out` with the weft_json_props_put_*
     * functions. Loading: read them from `in` with the get_* functions and
     * build the op in g (usually weft_op_create(g, cls, &props, out)).
     * NULL hooks: a class without props (props_size 0) is saved without a
     * props object and loaded with weft_op_create(g, cls, NULL); a class with
     * props but no hooks cannot be saved / loaded (WEFT_ENOTIMPL naming it).
     * Appended last: classes compiled with the older, smaller size field
     * simply have no hooks (their size is checked before reading them). */
    weft_status_t (*props_to_json)(const weft_op_t *op, weft_json_props_t *out);
    weft_status_t (*props_from_json)(weft_graph_t *g, const weft_op_class_t *cls,
                                     const weft_json_props_t *in, const weft_op_t **out);

    /* node's expected run time in nanoseconds, for the rewrites and
     * schedules that weigh the critical path (weft/node_cost.h: it replaces
     * the size-based estimate, in the same unit: 0.1 ns per multiply-add of
     * a product). A negative result, or a NULL hook: the estimate. Appended
     * last, as the JSON hooks. */
    double (*cost_ns)(const weft_apply_t *node);
} weft_op_class_t;

/* Creates an op instance of cls with a copy of props (props_size bytes; props
 * may be NULL when props_size is 0). The aliasing maps are read once here and
 * cached.
 * Ownership: borrows g, cls (must outlive g) and props; returns borrowed,
 * owned by g.
 * Errors: WEFT_EINVAL (NULL g/cls/out, NULL props with props_size > 0, cls
 * without name or make_node, cls->size too small, an alias entry's output
 * beyond WEFT_OP_MAX_OUTPUTS), WEFT_ENOMEM. */
WEFT_API weft_status_t weft_op_create(weft_graph_t *g, const weft_op_class_t *cls,
                                      const void *props, const weft_op_t **out);

/* A copy of op in g (op's own context or another): same class, a copy of
 * its props, so weft_op_equal(op, *out) holds and the aliasing maps are the
 * same; *out is a distinct object. An OpFromGraph clones like any op (its
 * props are plain data; the interned inner graph is shared).
 * Ownership: borrows g and op (whose context must outlive the call); returns
 * borrowed, owned by g.
 * Errors (message on g): WEFT_EINVAL (NULL g, op or out), WEFT_ENOTIMPL (the
 * class has props_fini: props that own memory cannot be copied by value),
 * WEFT_ENOMEM. *out is NULL on error.
 * Thread: as every graph function (one thread per context; op's context is
 * only read). */
WEFT_API weft_status_t weft_op_clone(weft_graph_t *g, const weft_op_t *op, const weft_op_t **out);

WEFT_API const weft_op_class_t *weft_op_class(const weft_op_t *op);
WEFT_API const void *weft_op_props(const weft_op_t *op);
WEFT_API const char *weft_op_name(const weft_op_t *op); /* the class name */
/* Same class and equal props (by value, across contexts too). */
WEFT_API bool weft_op_equal(const weft_op_t *a, const weft_op_t *b);
WEFT_API uint64_t weft_op_hash(const weft_op_t *op);
/* "Name" or "Name{props}". snprintf-like. */
WEFT_API int weft_op_print(const weft_op_t *op, char *buf, size_t cap);
/* Cached aliasing maps and relaxations: *entries is borrowed, valid while the
 * op lives; *n is the entry count (0 when none). */
WEFT_API void weft_op_destroy_map(const weft_op_t *op, const weft_op_alias_t **entries,
                                  size_t *n);
WEFT_API void weft_op_view_map(const weft_op_t *op, const weft_op_alias_t **entries, size_t *n);
WEFT_API void weft_op_tolerate_same(const weft_op_t *op, const weft_op_alias_t **entries,
                                    size_t *n);
WEFT_API void weft_op_tolerate_aliased(const weft_op_t *op, const weft_op_alias_t **entries,
                                       size_t *n);
/* The default output index, or -1. */
WEFT_API int weft_op_default_output(const weft_op_t *op);
/* Has a non-empty destroy_map / view_map. */
WEFT_API bool weft_op_is_destructive(const weft_op_t *op);
WEFT_API bool weft_op_is_view(const weft_op_t *op);

/* ---- the op class registry ----------------------------------------------------- */
/* One process-wide table of op classes by name, what the JSON graph loader
 * (weft/graph_io.h) uses to turn a stored op name back into a class. weft's
 * own classes (every built-in op and OpFromGraph) are in it before main runs;
 * users add theirs. Thread: any (a mutex guards the table). */

/* Registers cls under cls->name. The class is borrowed and must outlive every
 * lookup (static storage is typical). Registering the same class twice is
 * WEFT_OK. Errors: WEFT_EINVAL (NULL cls or name), WEFT_EALREADY (another
 * class has that name, a built-in's included), WEFT_ENOMEM. */
WEFT_API weft_status_t weft_op_class_register(const weft_op_class_t *cls);
/* The class registered under name (exact, case-sensitive); NULL when none or
 * name is NULL. Returns borrowed. */
WEFT_API const weft_op_class_t *weft_op_class_find(const char *name);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_OP_H */
