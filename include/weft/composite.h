/* Composite: one elementwise op computing a whole expression of elementwise
 * kinds (PyTensor's Composite), e.g. tanh(x + b) or g * (1 - h*h), in a
 * single pass over memory instead of one pass (and one intermediate buffer)
 * per kind.
 *
 * The fast_run rewrite "elemwise_fusion" (weft/rewrite_db.h, tag "fusion")
 * builds these from chains of out-of-place elementwise nodes; they can also
 * be built directly. Op class "Composite" (weft/ops.h); props: the program
 * and the in-place input, printed as the expression, e.g.
 * Composite{Tanh((i0 + i1))} or Composite{(i0 * (i1 - Sqr(i2))), inplace=0}.
 *
 * Program. Registers 0..n_in-1 hold the inputs; step s computes kind(arg[0]
 * [, arg[1]]) into register n_in + s, each argument an input or an earlier
 * step; the result is the last step. Every input has the output's dtype
 * (a float, or an integer for kinds defined on integers; not bool, and no
 * integer Pow, whose run-time check of negative exponents a program does
 * not make) and rank; float16 steps each round to half, as the unfused
 * nodes do;
 * inputs broadcast as for elementwise ops (weft/elemwise.h). Allowed kinds:
 * every kind except Cast, the comparisons and the other bool-valued kinds
 * (IsNan ... LogicalXor: their dtype differs from their inputs') and Switch
 * (its condition is bool); Clip is a ternary step.
 *
 * Evaluation runs each step's elementwise kernel on blocks of 128 elements
 * held in registers on the stack, so every value is computed exactly as the
 * unfused graph computes it (same kernels, same order): results are equal
 * bit for bit. A large composite is split over the workers of a compiled
 * function like any elementwise loop (weft/kernel.h).
 *
 * In place: a variant writing into input i (destroy_map {0: [i]}) when input
 * i's type equals the output type; the inplace rewrite picks it through the
 * class's inplace_variant hook.
 *
 * Gradient: none (the fusion rewrite runs after gradients are built);
 * weft_grad through a Composite is WEFT_ENOGRAD naming the node.
 *
 * Ownership: borrows g and the inputs (variables of g); the output is owned
 * by g. Errors: weft_composite returns the output, or NULL with the first
 * error kept on g (weft_graph_error, weft_graph_error_message; weft/graph.h
 * "Errors"); a NULL input (an earlier constructor's failure) adds no second
 * error.
 * Thread: as g. */
#ifndef WEFT_COMPOSITE_H
#define WEFT_COMPOSITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/elemwise.h"
#include "weft/export.h"
#include "weft/graph.h"
#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_COMPOSITE_MAX_INPUTS 7
#define WEFT_COMPOSITE_MAX_STEPS 16

typedef struct weft_composite_step {
    weft_elemwise_kind_t kind;
    uint8_t arg[3]; /* registers; those past the kind's arity unused */
} weft_composite_step_t;

/* The Composite op of the program (n_in inputs, steps[0..n_steps)) writing
 * in place into input inplace_input (-1: a new output).
 * Errors: WEFT_EINVAL (NULL args, n_in not in 1..7, n_steps not in 1..16, a
 * kind not allowed ("kind K is not an arithmetic kind of one dtype"), an argument that is not an input or an earlier step, an
 * unused input, inplace_input not in [-1, n_in)), WEFT_ENOMEM. Message on g
 * names the step. */
WEFT_API weft_status_t weft_composite_op(weft_graph_t *g, size_t n_in, size_t n_steps,
                                         const weft_composite_step_t *steps, int inplace_input,
                                         const weft_op_t **out);

/* Whether op is a Composite; then *n_in, *n_steps, steps[0..*n_steps) (room
 * for WEFT_COMPOSITE_MAX_STEPS) and *inplace_input are set (any may be NULL). */
WEFT_API bool weft_composite_op_info(const weft_op_t *op, size_t *n_in, size_t *n_steps,
                                     weft_composite_step_t *steps, int *inplace_input);

/* Applies the program to inputs[0..n_in) (out of place). Errors: as
 * weft_composite_op, plus those of applying an elementwise op: WEFT_ETYPE
 * (an input that is not a tensor of the output's dtype and rank, a kind not
 * defined for the dtype), WEFT_ESHAPE, WEFT_EFOREIGN. */
WEFT_API weft_var_t *weft_composite_at(weft_graph_t *g, size_t n_in, weft_var_t *const *inputs,
                                       size_t n_steps, const weft_composite_step_t *steps,
                                       const char *file, int line);
#define weft_composite(g, n_in, inputs, n_steps, steps) \
    weft_composite_at((g), (n_in), (inputs), (n_steps), (steps), __FILE__, __LINE__)

#ifdef __cplusplus
}
#endif
#endif /* WEFT_COMPOSITE_H */
