/* Reverse-mode gradients (weft_grad) and the finite-difference gradient
 * check (weft_verify_grad).
 *
 * weft_grad builds, in the cost's graph context, the graph of d cost / d wrt
 * for each wrt variable: it walks the cost's ancestors in reverse
 * topological order, calls each op's grad hook (weft/op.h) with the
 * gradients of its outputs (NULL for an output that does not reach the cost)
 * and sums the contributions arriving at each variable with Add. Only nodes
 * on a path from some wrt to the cost are differentiated.
 *
 * Missing gradients. A wrt the cost does not depend on is "disconnected"; a
 * wrt whose only paths to the cost cross an op without a grad hook, or whose
 * gradient hook returned the null type (an undefined gradient), is
 * "undefined". Each is an error by default - WEFT_EDISCONNECTED naming the
 * wrt variable and its creation site, WEFT_ENOGRAD naming the node (op and
 * creation site) where the gradient stopped - or, with the option
 * WEFT_GRAD_MISSING_ZERO, a zero gradient (zeros of the wrt's type and
 * run-time shape). A node without a grad hook or with an undefined input
 * gradient is harmless when no wrt depends on that path. Integer and bool
 * variables carry no gradient (integer-valued paths count as disconnected).
 *
 * Thread: uses g from one thread (as every graph function). */
#ifndef WEFT_GRAD_H
#define WEFT_GRAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/export.h"
#include "weft/graph.h"
#include "weft/status.h"
#include "weft/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum weft_grad_missing {
    WEFT_GRAD_MISSING_ERROR = 0, /* report WEFT_EDISCONNECTED / WEFT_ENOGRAD */
    WEFT_GRAD_MISSING_ZERO = 1,  /* return zeros shaped like the wrt */
} weft_grad_missing_t;

typedef struct weft_grad_options {
    size_t size;                      /* sizeof(weft_grad_options_t) */
    weft_grad_missing_t disconnected; /* a wrt the cost does not depend on */
    weft_grad_missing_t undefined;    /* a wrt whose gradient is undefined */
    /* Gradient of the cost itself (0-d, the cost's dtype); NULL: the
     * constant 1. */
    weft_var_t *cost_grad;
} weft_grad_options_t;

#define WEFT_GRAD_OPTIONS_INIT \
    {sizeof(weft_grad_options_t), WEFT_GRAD_MISSING_ERROR, WEFT_GRAD_MISSING_ERROR, NULL}

/* Builds grads_out[i] = d cost / d wrt[i] (same type family as wrt[i]: dtype
 * and ndim). cost must be a 0-d float tensor variable (float16/32/64); each wrt a
 * float tensor variable of g (an input, or any intermediate variable of the
 * cost's graph). A wrt listed twice gets the same gradient twice.
 * options may be NULL (WEFT_GRAD_OPTIONS_INIT).
 * weft_grads returns grads_out, or NULL on error; weft_grad(g, cost, wrt) is
 * the one-wrt form with default options and returns the gradient itself.
 * Both are macros recording the call site for error messages.
 * Ownership: borrows g, cost, wrt and options; grads_out[i] are borrowed,
 * owned by g. On error grads_out is all NULL (nodes built before the error
 * stay in g, unused).
 * Errors: NULL is returned and the first error kept on g (weft_graph_error,
 * weft_graph_error_message; weft/graph.h "Errors"); a NULL cost or wrt (an
 * earlier constructor's failure) adds no second error:
 *   WEFT_EINVAL (NULL g/cost/grads_out, NULL wrt with n_wrt > 0, a NULL wrt
 *     entry, options->size too small),
 *   WEFT_ETYPE (cost not a 0-d float tensor, a wrt not a float tensor,
 *     cost_grad's type not the cost's; a grad hook returned a gradient whose
 *     dtype or ndim differs from its input's, naming the node),
 *   WEFT_EFOREIGN (a variable of another context),
 *   WEFT_EDISCONNECTED (a wrt the cost does not depend on, naming it),
 *   WEFT_ENOGRAD (a wrt's gradient crosses an op with no grad hook or comes
 *     back undefined, naming the node and its creation site),
 *   WEFT_ECYCLE (the cost's graph has a cycle, docs/fgraph.md §3: its nodes
 *     named), WEFT_ENOMEM, or what a grad hook returned. */
#define weft_grads(g, cost, n_wrt, wrt, options, grads_out) \
    weft_grads_at((g), (cost), (n_wrt), (wrt), (options), (grads_out), __FILE__, __LINE__)
#define weft_grad(g, cost, wrt) weft_grad_at((g), (cost), (wrt), __FILE__, __LINE__)
WEFT_API weft_var_t **weft_grads_at(weft_graph_t *g, weft_var_t *cost, size_t n_wrt,
                                    weft_var_t *const *wrt, const weft_grad_options_t *options,
                                    weft_var_t **grads_out, const char *file, int line);
WEFT_API weft_var_t *weft_grad_at(weft_graph_t *g, weft_var_t *cost, weft_var_t *wrt,
                                  const char *file, int line);

/* ---- verify_grad ------------------------------------------------------------ */

/* Builds the function under test in g from the input variables (one per
 * point, with the points' dtypes and shapes) and returns its output variable
 * (any float tensor; non-scalar outputs are projected, see below), or NULL
 * on error (the constructors' kept error on g, which weft_verify_grad passes
 * on). */
typedef weft_var_t *(*weft_verify_grad_fn)(weft_graph_t *g, size_t n_in, weft_var_t *const *inputs,
                                           void *user);

typedef struct weft_verify_grad_options {
    size_t size;   /* sizeof(weft_verify_grad_options_t) */
    uint64_t seed; /* seeds the random projection */
    /* Finite-difference step; 0: 1e-6 for float64 points, 1e-3 if any point
     * is float32. */
    double eps;
    /* An element passes when its abs error <= abs_tol OR its rel error
     * <= rel_tol; 0: 1e-4 each for float64, 1e-2 if any point is float32. */
    double abs_tol, rel_tol;
} weft_verify_grad_options_t;

#define WEFT_VERIFY_GRAD_OPTIONS_INIT {sizeof(weft_verify_grad_options_t), 42u, 0.0, 0.0, 0.0}

typedef struct weft_verify_grad_result {
    double max_abs_err; /* over every element of every input */
    double max_rel_err; /* |num - sym| / max(|num| + |sym|, 1e-8) */
    size_t worst_input; /* where the worst element failed (or the max rel error) */
    size_t worst_index; /* C-order index in that input */
    double numeric, symbolic; /* the two gradients at that element */
    size_t n_evals;     /* cost evaluations done for the finite differences */
    char message[512];  /* why it failed ("" on success) */
} weft_verify_grad_result_t;

/* Checks the symbolic gradient of fn against central finite differences at
 * the given points. In a fresh graph context it builds y = fn(inputs) and the
 * scalar cost = sum(y * R) with R a random constant (seeded, uniform in
 * [0.5, 1.5)) of y's run-time shape (cost = y when y is 0-d), then
 * weft_grad(cost, inputs), and evaluates everything with the sequential
 * evaluator (weft/eval.h). The numeric gradient of element j of input i is
 * (cost(x + eps e_j) - cost(x - eps e_j)) / (2 eps), with the perturbation
 * made in the point's dtype. Points must be float32/float64 tensors.
 * Ownership: borrows fn's user data, the points (not modified: copies are
 * perturbed), options (NULL: WEFT_VERIFY_GRAD_OPTIONS_INIT) and result
 * (caller storage, filled on every return after argument checks).
 * Errors: WEFT_EINVAL (NULL fn/points/result, n_in 0, a NULL point,
 *   options->size too small, negative eps/tol), WEFT_ETYPE (a non-float point
 *   or output),
 *   WEFT_ERANGE (some element's numeric and symbolic gradients differ beyond
 *   both tolerances: result->message names the input, index and values),
 *   or the status of fn, weft_grad or weft_eval (message in result).
 * Thread: any; uses only its own context. */
WEFT_API weft_status_t weft_verify_grad(weft_verify_grad_fn fn, void *user, size_t n_in,
                                        weft_tensor_t *const *points,
                                        const weft_verify_grad_options_t *options,
                                        weft_verify_grad_result_t *result);

/* A new C-contiguous float tensor of uniform random values in [lo, hi) from a
 * seeded generator (the same seed gives the same values on every platform):
 * random points for weft_verify_grad and randomized tests.
 * Ownership: borrows shape; returns new, free with weft_tensor_release.
 * Errors (message: weft_tensor_last_error() on the calling thread):
 * WEFT_EINVAL (NULL out, non-float dtype, bad ndim/shape, hi < lo, a NaN
 * bound), WEFT_EOVERFLOW, WEFT_ENOMEM. */
WEFT_API weft_status_t weft_verify_grad_random(weft_dtype_t dtype, int ndim,
                                               const int64_t *shape, double lo, double hi,
                                               uint64_t seed, weft_tensor_t **out);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_GRAD_H */
