/* IfElse: a lazy branch inside the graph (PyTensor's pytensor.ifelse).
 *
 * weft_ifelse(g, cond, n, then_vars, else_vars, out_vars) builds one IfElse
 * node with inputs (cond, then_0..then_{n-1}, else_0..else_{n-1}) and n
 * outputs: output i is then_i's value when cond is nonzero, else_i's when it
 * is zero. Unlike Switch (weft_switch: both sides computed, elementwise), only
 * the branch taken is computed: in a compiled function (weft/function.h) and
 * in weft_eval, nodes needed only by the branch not taken are skipped without
 * running and without allocating (docs/control-flow.md §1).
 *
 * Types: cond is 0-d of a real dtype (bool, integer or float; NaN counts as
 * true, as in C and NumPy's bool()). then_i and else_i have the same dtype
 * and rank; output i's static length on each axis is theirs where they agree
 * and unknown otherwise (PyTensor unifies broadcast patterns the same way).
 *
 * The node is built with as_view off: output i is a fresh copy of the side
 * taken, as PyTensor's ifelse(). In a compiled fast_run function the
 * ifelse_inplace rewrite (PyTensor's cond_make_inplace) makes output i a
 * view of then_i when the then branch is taken (view_map {i: then_i})
 * wherever the DestroyHandler accepts it; the else side stays a copy
 * (docs/control-flow.md §1.3 says why).
 * The gradient is an IfElse of the branch gradients, zeros on the side not
 * taken; the condition has none.
 *
 * Ownership: the outputs are owned by g. Errors (constructor style,
 * weft/graph.h "Errors"): NULL returned and the first error kept on g:
 * WEFT_EINVAL (NULL g/arrays, n 0 or above WEFT_IFELSE_MAX), WEFT_ETYPE (a
 * condition that is not 0-d real, a then/else pair of different dtype or
 * rank: the message names both variables and their creation sites), or an
 * earlier failure passed in as NULL. Thread: as every graph function. */
#ifndef WEFT_IFELSE_H
#define WEFT_IFELSE_H

#include <stddef.h>

#include "weft/export.h"
#include "weft/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* At most this many (then, else) pairs per node: WEFT_OP_MAX_OUTPUTS. */
#define WEFT_IFELSE_MAX 16

/* Returns output 0 and stores the n outputs in out_vars[0..n) (all NULL on
 * error); out_vars may be NULL when n is 1. */
#define weft_ifelse(g, cond, n, then_vars, else_vars, out_vars) \
    weft_ifelse_at((g), (cond), (n), (then_vars), (else_vars), (out_vars), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_ifelse_at(weft_graph_t *g, weft_var_t *cond, size_t n,
                                    weft_var_t *const *then_vars, weft_var_t *const *else_vars,
                                    weft_var_t **out_vars, const char *file, int line);

/* One pair: the single output. */
#define weft_ifelse1(g, cond, then_var, else_var) \
    weft_ifelse1_at((g), (cond), (then_var), (else_var), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_ifelse1_at(weft_graph_t *g, weft_var_t *cond, weft_var_t *then_var,
                                     weft_var_t *else_var, const char *file, int line);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_IFELSE_H */
