/* The graph context, Variables, Constants and Apply nodes.
 *
 * The graph is bipartite: Variables and Apply nodes, with edges stored
 * backwards only (variable -> owner apply -> input variables). Forward edges
 * (clients) exist only inside a FunctionGraph (weft/fgraph.h).
 *
 * Ownership model: a graph context (weft_graph_t) owns everything built in it
 * - types, variables, constants, ops, apply nodes, and the copies that
 * FunctionGraphs and rewrites make - and frees it all at once in
 * weft_graph_destroy. Nothing built in a context is freed earlier, so
 * pointers stay valid until the context dies. Objects of two contexts never
 * mix: passing a variable of context A to a function of context B is
 * WEFT_EFOREIGN.
 *
 * Thread: a context and everything in it is used by one thread at a time.
 *
 * Errors. Two kinds of functions report errors in two ways:
 * - Constructors (every function that builds a variable or apply node from
 *   others: weft_var_create, weft_constant_*, weft_op_call, weft_apply_create,
 *   the op constructors of elemwise.h, shape_ops.h, reduce.h, linalg.h,
 *   composite.h, and weft_grad) return the new object, or NULL on error, so
 *   expressions nest: y = weft_tanh(g, weft_add(g, weft_dot(g, x, W), b)).
 *   The FIRST error is kept on the context (weft_graph_error,
 *   weft_graph_error_message) with a message naming the op/variable and its
 *   creation site, e.g. "apply of Add at model.c:17: input 1 type
 *   float64[3,4] vs float64[4,3]"; later errors never overwrite it. A NULL
 *   variable argument makes a constructor return NULL without a second error
 *   (it records WEFT_EINVAL, naming the argument, only when no error is kept
 *   yet). Compiling, or making a FunctionGraph from, a context with a kept
 *   error fails with its status and quotes its message, so one check at the
 *   end reports the first mistake. weft_graph_clear_error forgets it.
 * - Every other function (edits, queries, compile, call, ...) returns a
 *   weft_status_t and leaves the kept error alone.
 * Both write the text of the latest error, kept or not, to
 * weft_graph_last_error(). Library-internal building that may fail without
 * being the user's mistake (a rewrite trying a replacement) never leaves a
 * kept error behind. */
#ifndef WEFT_GRAPH_H
#define WEFT_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "weft/alloc.h"
#include "weft/export.h"
#include "weft/status.h"
#include "weft/type.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_graph weft_graph_t;
typedef struct weft_var weft_var_t;
typedef struct weft_apply weft_apply_t;
typedef struct weft_op weft_op_t;
typedef struct weft_clone_map weft_clone_map_t;

/* ---- context ------------------------------------------------------------ */

/* Creates an empty context. alloc may be NULL (malloc/free); the allocator is
 * borrowed and must outlive the context. Everything the context and its
 * FunctionGraphs own comes from it (weft/alloc.h lists what).
 * Ownership: returns new, free with weft_graph_destroy.
 * Errors: WEFT_EINVAL (NULL out), WEFT_ENOMEM. */
WEFT_API weft_status_t weft_graph_create(const weft_allocator_t *alloc, weft_graph_t **out);
/* Frees the context and everything built in it (FunctionGraphs created on it
 * must be destroyed first; remaining ones are freed too). NULL is a no-op. */
WEFT_API void weft_graph_destroy(weft_graph_t *g);
/* Text of the last error raised by a function taking g ("" if none; a
 * constructor starts by clearing it, so after one that succeeded it is "").
 * For constructors prefer weft_graph_error_message: it keeps the first
 * failure, where this text says what failed last (often an outer constructor
 * given the first one's NULL). Returns borrowed, valid until the next call
 * on g. */
WEFT_API const char *weft_graph_last_error(const weft_graph_t *g);
/* The kept (first) constructor error of g: its status, WEFT_OK if none (or
 * for a NULL g), and its message ("" if none; borrowed, valid until
 * weft_graph_clear_error or weft_graph_destroy). */
WEFT_API weft_status_t weft_graph_error(const weft_graph_t *g);
WEFT_API const char *weft_graph_error_message(const weft_graph_t *g);
/* Forgets the kept error (after handling it), so the next constructor error
 * is kept again. NULL is a no-op. */
WEFT_API void weft_graph_clear_error(weft_graph_t *g);
/* Records an error on g and returns `status` (for op authors' make_node and
 * grad hooks: `return weft_graph_set_error(g, WEFT_ETYPE, "...", ...)`). */
WEFT_API weft_status_t weft_graph_set_error(weft_graph_t *g, weft_status_t status,
                                            const char *fmt, ...) WEFT_PRINTF(3, 4);
/* Number of variables / apply nodes ever built in g (ids are 0..n-1). */
WEFT_API size_t weft_graph_n_vars(const weft_graph_t *g);
WEFT_API size_t weft_graph_n_applies(const weft_graph_t *g);
/* The allocator g was created with (weft_allocator_default() when it was
 * given NULL). Everything g owns comes from it (weft/alloc.h lists what that
 * covers); features and op props that will be owned by g may use it too.
 * Ownership: returns borrowed, valid while g lives; NULL for a NULL g. */
WEFT_API const weft_allocator_t *weft_graph_allocator(const weft_graph_t *g);

/* ---- variables ---------------------------------------------------------- */

/* A new root variable (no owner) of the given type; name may be NULL (copied).
 * The creation site (file:line) is recorded; use the macro.
 * Ownership: returns borrowed, owned by g.
 * Errors (here and for every constructor below): returns NULL and keeps the
 * first error on g ("Errors" above). Statuses: WEFT_EINVAL (NULL g/type),
 * WEFT_EFOREIGN (type of another context), WEFT_ENOMEM. */
#define weft_var_create(g, type, name) weft_var_create_at((g), (type), (name), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_var_create_at(weft_graph_t *g, const weft_type_t *type, const char *name,
                                        const char *file, int line);

/* A constant: an atomic variable with immutable data. type must be a tensor
 * type with every length known; data holds the elements in C order and is
 * copied (nbytes must equal the element count times the dtype size).
 * Constants are equal and hashed by value (weft_constant_equal) so merging can
 * unify them; they are still distinct objects.
 * Ownership: borrows data; returns borrowed, owned by g.
 * Errors (kept on g): WEFT_EINVAL (NULL args, type not static), WEFT_ESHAPE
 * (nbytes),
 * WEFT_EFOREIGN, WEFT_ENOMEM. */
#define weft_constant_create(g, type, data, nbytes) \
    weft_constant_create_at((g), (type), (data), (nbytes), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_constant_create_at(weft_graph_t *g, const weft_type_t *type,
                                             const void *data, size_t nbytes, const char *file,
                                             int line);
/* A 0-d constant of the given dtype holding `value` (converted; bool: != 0).
 * Errors (kept on g): WEFT_EINVAL (value not representable), WEFT_ENOMEM. */
#define weft_constant_scalar(g, dtype, value) \
    weft_constant_scalar_at((g), (dtype), (value), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_constant_scalar_at(weft_graph_t *g, weft_dtype_t dtype, double value,
                                             const char *file, int line);

/* Accessors. Each takes a valid variable; NULL yields NULL / 0 / false. */
WEFT_API const weft_type_t *weft_var_type(const weft_var_t *v);
WEFT_API weft_apply_t *weft_var_owner(const weft_var_t *v);    /* NULL for roots */
WEFT_API size_t weft_var_index(const weft_var_t *v);            /* position in owner's outputs */
WEFT_API const char *weft_var_name(const weft_var_t *v);        /* NULL if unnamed */
WEFT_API uint64_t weft_var_id(const weft_var_t *v);             /* creation order in its context */
WEFT_API weft_graph_t *weft_var_graph(const weft_var_t *v);
WEFT_API bool weft_var_is_constant(const weft_var_t *v);
/* Creation site; *file is borrowed (a string literal or copied). */
WEFT_API void weft_var_trace(const weft_var_t *v, const char **file, int *line);
/* Renames (copies name; NULL clears). Errors: WEFT_EINVAL, WEFT_ENOMEM
 * (message on v's context). */
WEFT_API weft_status_t weft_var_set_name(weft_var_t *v, const char *name);
/* The "indestructible" flag: no in-place op may destroy v or a view of it
 * (DestroyHandler rule D2). */
WEFT_API void weft_var_set_indestructible(weft_var_t *v, bool flag);
WEFT_API bool weft_var_is_indestructible(const weft_var_t *v);
/* A constant's data (C order) and size. Errors (message on c's context):
 * WEFT_EINVAL (NULL args, c not a constant: named). */
WEFT_API weft_status_t weft_constant_data(const weft_var_t *c, const void **data,
                                          size_t *nbytes);
/* Value equality of two constants (same type, same bytes; NaN equals a NaN of
 * the same bits); false if either is not a constant. */
WEFT_API bool weft_constant_equal(const weft_var_t *a, const weft_var_t *b);
WEFT_API uint64_t weft_constant_hash(const weft_var_t *c);
/* Printed form: the name, else "Op.k" (owned; "Op.out" for a single output),
 * else "<type>" for roots, else the value for small constants. snprintf-like. */
WEFT_API int weft_var_print(const weft_var_t *v, char *buf, size_t cap);

/* ---- apply nodes ---------------------------------------------------------- */

/* Builds an Apply of op on inputs: calls the op's make_node hook (type
 * checking, output types), then creates the node and its fresh output
 * variables. The creation site is recorded; use the macro.
 * Ownership: borrows op and inputs (which must belong to g); returns the node,
 * borrowed, owned by g.
 * Errors (NULL returned, kept on g): WEFT_EINVAL (NULL args, wrong number of
 * inputs for the op),
 * WEFT_ETYPE (make_node rejected an input type), WEFT_EFOREIGN, WEFT_ENOMEM,
 * or what make_node returned; the message names the op, the input and the
 * creation site. */
#define weft_apply_create(g, op, n_in, inputs) \
    weft_apply_create_at((g), (op), (n_in), (inputs), __FILE__, __LINE__)
WEFT_API weft_apply_t *weft_apply_create_at(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                            weft_var_t *const *inputs, const char *file, int line);
/* Builds the Apply and returns its default output (weft_apply_default_output).
 * Errors: as weft_apply_create, plus WEFT_EINVAL for a multi-output op without
 * a default output. */
#define weft_op_call(g, op, n_in, inputs) \
    weft_op_call_at((g), (op), (n_in), (inputs), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_op_call_at(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                     weft_var_t *const *inputs, const char *file, int line);

WEFT_API const weft_op_t *weft_apply_op(const weft_apply_t *a);
WEFT_API size_t weft_apply_n_inputs(const weft_apply_t *a);
WEFT_API weft_var_t *weft_apply_input(const weft_apply_t *a, size_t i);   /* NULL if out of range */
WEFT_API size_t weft_apply_n_outputs(const weft_apply_t *a);
WEFT_API weft_var_t *weft_apply_output(const weft_apply_t *a, size_t i);  /* NULL if out of range */
WEFT_API uint64_t weft_apply_id(const weft_apply_t *a);
WEFT_API weft_graph_t *weft_apply_graph(const weft_apply_t *a);
WEFT_API void weft_apply_trace(const weft_apply_t *a, const char **file, int *line);
/* outputs[op default_output], else the single output.
 * Errors: WEFT_EINVAL (NULL, or several outputs and no default). */
WEFT_API weft_status_t weft_apply_default_output(const weft_apply_t *a, weft_var_t **out);
/* True for the Output(k) pseudo-node of a FunctionGraph output slot (fgraph.h);
 * then weft_apply_output_slot gives k. Pseudo-nodes have one input, no
 * outputs, are never executed, never imported or pruned. */
WEFT_API bool weft_apply_is_output_slot(const weft_apply_t *a);
WEFT_API size_t weft_apply_output_slot(const weft_apply_t *a);
/* Same op on new inputs (same count). strict: each new input must be a
 * variable whose type the old input's type is_super of; the node is rebuilt
 * through make_node only if some input type differs, else cloned with the
 * inputs swapped. Not strict: any type change rebuilds through make_node.
 * Errors: WEFT_EINVAL (count), WEFT_ETYPE, WEFT_EFOREIGN, WEFT_ENOMEM. */
WEFT_API weft_status_t weft_apply_clone_with_new_inputs(weft_graph_t *g, const weft_apply_t *a,
                                                        size_t n_in, weft_var_t *const *inputs,
                                                        bool strict, weft_apply_t **out);
/* Printed form "Op{props}(in0, in1)". snprintf-like. */
WEFT_API int weft_apply_print(const weft_apply_t *a, char *buf, size_t cap);
/* "apply 42 (Add, built at model.c:17)": how error messages name a node. */
WEFT_API int weft_apply_describe(const weft_apply_t *a, char *buf, size_t cap);

/* ---- cloning, comparison, printing ---------------------------------------- */

/* Clones the subgraph between inputs and outputs (in topological order).
 * copy_inputs: inputs get fresh variables (else map to themselves); other
 * owner-less, non-constant ancestors are cloned iff copy_orphans; constants
 * map to themselves. The map gives old -> new for every variable and apply.
 * Ownership: returns new map, free with weft_clone_map_destroy; clones are
 * owned by g. Errors: WEFT_EINVAL, WEFT_EFOREIGN, WEFT_ENOMEM, WEFT_ECYCLE. */
WEFT_API weft_status_t weft_graph_clone_get_equiv(weft_graph_t *g, size_t n_in,
                                                  weft_var_t *const *inputs, size_t n_out,
                                                  weft_var_t *const *outputs, bool copy_inputs,
                                                  bool copy_orphans, weft_clone_map_t **out);
/* Lookups: the clone of v / a, or NULL when it was not in the cloned subgraph. */
WEFT_API weft_var_t *weft_clone_map_var(const weft_clone_map_t *m, const weft_var_t *v);
WEFT_API weft_apply_t *weft_clone_map_apply(const weft_clone_map_t *m, const weft_apply_t *a);
WEFT_API void weft_clone_map_destroy(weft_clone_map_t *m);

/* Structural equality (equal_computations): pairwise, both owned or both not;
 * owned: equal ops, same arity, same output index, inputs recursively equal;
 * leaves: same object, or explicitly paired (in_xs[i] with in_ys[i]), or
 * constants with equal values. Its scratch comes from the allocator of xs[0]'s
 * context. Errors: WEFT_EINVAL (NULL args), WEFT_ENOMEM (message on xs[0]'s
 * context). */
WEFT_API weft_status_t weft_graph_equal_computations(size_t n, weft_var_t *const *xs,
                                                     weft_var_t *const *ys, size_t n_in,
                                                     weft_var_t *const *in_xs,
                                                     weft_var_t *const *in_ys, bool *equal);

/* dprint-style indented tree of the given outputs, one line per apply or leaf:
 * "Add [id 3] 'name'" with shared subtrees printed once then referred to by
 * id, indented by " |" per level. Lines deeper than 32 levels show 32 bars
 * and then their depth: " | ... |(depth 40) Exp [id 7]", so the text and the
 * time stay linear in the number of lines. Errors: WEFT_EINVAL, WEFT_EIO,
 * WEFT_ENOMEM (message on the outputs' context). */
WEFT_API weft_status_t weft_graph_dprint(size_t n_out, weft_var_t *const *outputs, FILE *f);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_GRAPH_H */
