/* Elementwise ops: unary math, binary arithmetic, comparisons, switch, cast,
 * with numpy broadcasting.
 *
 * Each kind is its own op class, named as in the table below ("Add", "Exp",
 * ...; weft/ops.h finds a class by name). Props: the in-place input (-1: none)
 * and, for Cast, the target dtype; their printed text (weft_op_print's
 * Name{props}) is "inplace=0", "dtype=float32", "dtype=int32, inplace=0" or
 * empty.
 *
 * Broadcasting. make_node requires every input to have the same ndim; the
 * constructors below first left-pad lower-rank inputs with broadcastable
 * dimensions (a DimShuffle, weft/shape_ops.h), as numpy does. Per dimension,
 * inputs of static length 1 broadcast; two different known lengths other than
 * 1 are WEFT_ESHAPE naming both inputs; the output length is the known non-1
 * length, else unknown if some input's length is unknown, else 1. At run time
 * a dimension may only broadcast when its static length is 1 (as PyTensor:
 * an input of unknown static length must match the output length exactly,
 * else the node fails with WEFT_ESHAPE) - so gradients can sum over exactly
 * the statically broadcast axes.
 *
 * Dtypes. The result dtype of arithmetic ops is the largest input dtype in
 * the order bool < int32 < int64 < float32 < float64 (so int64 + float32 is
 * float32, unlike numpy's float64); inputs of a smaller dtype are converted
 * before computing. Comparisons compute in that common dtype and return
 * bool. Switch: the condition must be bool; the branches upcast.
 * Allowed dtypes (else WEFT_ETYPE naming the input and dtype):
 *   float only (float32, float64): Exp Log Log1p Sqrt Tanh Sigmoid Sin Cos
 *     Div Pow - a bool or integer input is accepted when another input is
 *     float (it is converted), but an all-integer Div/Exp/... is WEFT_ETYPE;
 *   numeric (int32, int64, float32, float64): Neg Abs Sgn Sqr Relu Add Sub
 *     Mul Maximum Minimum Second (a bool input is converted when another
 *     input is numeric; an all-bool input list is WEFT_ETYPE);
 *   any dtype: comparisons (Lt Le Gt Ge Eq Ne), Cast, Switch branches.
 * Integer overflow wraps as in two's complement (computed in unsigned).
 * Cast and the implicit conversions convert as weft/tensor.h's
 * "Conversions" says: a float that is NaN, infinite or outside the target
 * integer's range becomes that integer's minimum (as NumPy on x86-64).
 *
 * Complex numbers (complex64, complex128; docs/dtypes.md "Complex numbers"):
 * a node with a complex input takes NumPy's promotion (weft_dtype_promote:
 * float64 + complex64 is complex128). Allowed on complex: Neg Add Sub Mul
 * Div (Smith's algorithm, as NumPy) Sqr Exp Log Sqrt Pow Sin Cos Tanh (C's
 * cexp ...), Abs (a real result: complex64 -> float32, complex128 ->
 * float64), Eq Ne, Second, Switch branches, Cast, Real Imag Conj Angle.
 * Refused (WEFT_ETYPE naming the op, input and dtype): Lt Le Gt Ge Maximum
 * Minimum ("complex numbers have no order in weft"), Sgn Log1p Sigmoid Relu
 * ("... is not defined for complex numbers"). The complex kinds: Real(x),
 * Imag(x) (the parts, real; a real x: x, zeros), Conj(x), Angle(x)
 * (atan2(im, re), real; a real x: 0 or pi in its float dtype) and
 * Complex(re, im) = re + 1j im (real inputs; complex64 for float32 parts,
 * else complex128). No kind has an in-place variant that changes dtype
 * (Complex, and Real/Imag/Abs/Angle of a complex input, have none).
 *
 * Sigmoid is numpy's 1 / (1 + exp(-x)), bit for bit, wherever exp(-x) is
 * finite; below that (x < -88.72 float32, < -709.78 float64) it is
 * exp(x) / (1 + exp(x)), so it reaches the subnormals instead of dropping to
 * 0 early (sigmoid(-720) is 2.03e-313).
 *
 * In place. Every kind has variants writing into input i (destroy_map
 * {0: [i]}); make_node of such a variant requires input i's type to EQUAL the
 * output type (same dtype and static lengths), else WEFT_ETYPE - so an
 * in-place op never needs to grow or convert its target. The op class's
 * inplace_variant hook returns them; the inplace rewrite chooses.
 *
 * Gradients. Every kind has a grad hook built from these constructors;
 * gradients are summed over broadcast axes and cast back to the input dtype.
 * Comparisons, Sgn and the switch condition have no gradient (their
 * input_grads are left NULL: disconnected), as do bool/integer inputs.
 * Complex intermediates carry gradients for Real, Imag, Complex, Conj, Abs,
 * Angle, Add, Sub, Neg, Mul, Second, Switch and Cast (PyTensor's convention,
 * docs/dtypes.md "Complex numbers"); any other kind on a complex input
 * returns an undefined gradient (weft_grad: WEFT_ENOGRAD naming the node).
 * Maximum and Minimum send gz to the input equal to the result and split a
 * tie, gz/2 to each input (none where the result is NaN): maximum(x, x)
 * gets gz in all, and a tie between two variables gets the symmetric
 * (central) difference's 1/2 each, whatever the input order. (PyTensor gives
 * a tie's whole gradient to the first input instead.)
 *
 * Ownership (every constructor): borrows g and the input variables (which
 * must belong to g); returns the output variable, borrowed, owned by g.
 * Errors (every constructor): returns NULL and keeps the first error on g
 * (weft_graph_error, weft_graph_error_message; weft/graph.h "Errors"); a
 * NULL input (an earlier constructor's failure) adds no second error:
 *   WEFT_EINVAL (NULL args, bad kind, wrong number of inputs),
 *   WEFT_ETYPE (a dtype not allowed, an input of null/disconnected type),
 *   WEFT_ESHAPE (incompatible static lengths), WEFT_EFOREIGN, WEFT_ENOMEM.
 * Thread: as g (one thread at a time). */
#ifndef WEFT_ELEMWISE_H
#define WEFT_ELEMWISE_H

#include <stddef.h>

#include "weft/export.h"
#include "weft/graph.h"
#include "weft/op.h"
#include "weft/status.h"
#include "weft/type.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(ENUM_SUFFIX, "ClassName", arity) */
#define WEFT_ELEMWISE_TABLE(X) \
    X(NEG, "Neg", 1)           \
    X(ABS, "Abs", 1)           \
    X(SGN, "Sgn", 1)           \
    X(EXP, "Exp", 1)           \
    X(LOG, "Log", 1)           \
    X(LOG1P, "Log1p", 1)       \
    X(SQRT, "Sqrt", 1)         \
    X(SQR, "Sqr", 1)           \
    X(TANH, "Tanh", 1)         \
    X(SIGMOID, "Sigmoid", 1)   \
    X(RELU, "Relu", 1)         \
    X(SIN, "Sin", 1)           \
    X(COS, "Cos", 1)           \
    X(CAST, "Cast", 1)         \
    X(ADD, "Add", 2)           \
    X(SUB, "Sub", 2)           \
    X(MUL, "Mul", 2)           \
    X(DIV, "Div", 2)           \
    X(POW, "Pow", 2)           \
    X(MAXIMUM, "Maximum", 2)   \
    X(MINIMUM, "Minimum", 2)   \
    X(SECOND, "Second", 2)     \
    X(LT, "Lt", 2)             \
    X(LE, "Le", 2)             \
    X(GT, "Gt", 2)             \
    X(GE, "Ge", 2)             \
    X(EQ, "Eq", 2)             \
    X(NE, "Ne", 2)             \
    X(SWITCH, "Switch", 3)     \
    /* complex (issue 17) */   \
    X(REAL, "Real", 1)         \
    X(IMAG, "Imag", 1)         \
    X(CONJ, "Conj", 1)         \
    X(ANGLE, "Angle", 1)       \
    X(COMPLEX, "Complex", 2)

/* The elementwise kinds. Second(a, b) is b broadcast to the common shape (its
 * value ignores a; zeros_like is Second(x, 0)). Switch(c, a, b) is
 * c ? a : b. Sgn is -1, +0.0 or 1 (NaN stays NaN; sign(-0.0) is +0.0, as
 * NumPy). Relu is x > 0 ? x : 0. */
typedef enum weft_elemwise_kind {
#define WEFT_ELEMWISE_ENUM_(name, cls, arity) WEFT_ELEMWISE_##name,
    WEFT_ELEMWISE_TABLE(WEFT_ELEMWISE_ENUM_)
#undef WEFT_ELEMWISE_ENUM_
        WEFT_ELEMWISE_KIND_COUNT
} weft_elemwise_kind_t;

/* Number of inputs of kind (0 for an invalid kind). */
WEFT_API size_t weft_elemwise_arity(weft_elemwise_kind_t kind);
/* The class name, e.g. "Add"; NULL for an invalid kind. Returns static. */
WEFT_API const char *weft_elemwise_name(weft_elemwise_kind_t kind);

/* The op of kind, writing in place into input inplace_input (-1: not in
 * place). For WEFT_ELEMWISE_CAST, cast_dtype is the target (ignored
 * otherwise).
 * Ownership: returns borrowed, owned by g. Errors: WEFT_EINVAL (NULL args,
 * bad kind or dtype, inplace_input not in [-1, arity)), WEFT_ENOMEM. */
WEFT_API weft_status_t weft_elemwise_op(weft_graph_t *g, weft_elemwise_kind_t kind,
                                        int inplace_input, weft_dtype_t cast_dtype,
                                        const weft_op_t **out);
/* Whether op is an elementwise op; then *kind and *inplace_input (-1 when
 * not in place) are set (either may be NULL). */
WEFT_API bool weft_elemwise_op_info(const weft_op_t *op, weft_elemwise_kind_t *kind,
                                    int *inplace_input);

/* Applies kind (out of place) to inputs[0..n_in), broadcasting lower-rank
 * inputs first. Use the macros. */
WEFT_API weft_var_t *weft_elemwise_at(weft_graph_t *g, weft_elemwise_kind_t kind, size_t n_in,
                                      weft_var_t *const *inputs, const char *file, int line);
WEFT_API weft_var_t *weft_unary_at(weft_graph_t *g, weft_elemwise_kind_t kind, weft_var_t *x,
                                   const char *file, int line);
WEFT_API weft_var_t *weft_binary_at(weft_graph_t *g, weft_elemwise_kind_t kind, weft_var_t *a,
                                    weft_var_t *b, const char *file, int line);
WEFT_API weft_var_t *weft_switch_at(weft_graph_t *g, weft_var_t *cond, weft_var_t *a, weft_var_t *b,
                                    const char *file, int line);
/* x converted to dtype (x itself when it already has that dtype). */
WEFT_API weft_var_t *weft_cast_at(weft_graph_t *g, weft_var_t *x, weft_dtype_t dtype,
                                  const char *file, int line);
/* Scalars mixed in: weft_binary_scalar(g, kind, x, c) is `x kind c` and
 * weft_scalar_binary(g, kind, c, x) is `c kind x` (the operand order is the
 * argument order), with c a 0-d constant. The constant's dtype follows
 * NumPy's rule for a Python scalar: x's dtype, except that a non-integral c
 * with an integer or bool x gives a float64 constant (so int32 x * 2.5 is
 * float64) and an integral c with a bool x an int64 one. A c not
 * representable in an integer dtype is WEFT_EINVAL. The per-kind helpers
 * below are weft_X_scalar(g, x, c) = x X c and weft_scalar_X(g, c, x) =
 * c X x, e.g. weft_scalar_sub(g, 1.0, x) is 1 - x.
 * Ownership: borrows; returns borrowed, owned by g.
 * Errors: a constructor (weft/graph.h "Errors": NULL, the first error kept
 * on g): WEFT_EINVAL (NULL x: "input K is NULL" with K its operand position;
 * an unknown kind; c not representable), WEFT_EFOREIGN (x of another
 * context, named), and weft_binary's for the pair; NULL g: NULL.
 * Thread: as g. */
WEFT_API weft_var_t *weft_binary_scalar_at(weft_graph_t *g, weft_elemwise_kind_t kind,
                                           weft_var_t *x, double c, const char *file, int line);
WEFT_API weft_var_t *weft_scalar_binary_at(weft_graph_t *g, weft_elemwise_kind_t kind, double c,
                                           weft_var_t *x, const char *file, int line);
/* zeros of x's type: Second(x, 0). */
WEFT_API weft_var_t *weft_zeros_like_at(weft_graph_t *g, weft_var_t *x, const char *file, int line);

#define weft_elemwise(g, kind, n_in, inputs) \
    weft_elemwise_at((g), (kind), (n_in), (inputs), __FILE__, __LINE__)
#define weft_unary(g, kind, x) weft_unary_at((g), (kind), (x), __FILE__, __LINE__)
#define weft_binary(g, kind, a, b) weft_binary_at((g), (kind), (a), (b), __FILE__, __LINE__)
#define weft_binary_scalar(g, kind, x, c) \
    weft_binary_scalar_at((g), (kind), (x), (c), __FILE__, __LINE__)
#define weft_scalar_binary(g, kind, c, x) \
    weft_scalar_binary_at((g), (kind), (c), (x), __FILE__, __LINE__)
#define weft_zeros_like(g, x) weft_zeros_like_at((g), (x), __FILE__, __LINE__)
#define weft_switch(g, c, a, b) weft_switch_at((g), (c), (a), (b), __FILE__, __LINE__)
#define weft_where(g, c, a, b) weft_switch_at((g), (c), (a), (b), __FILE__, __LINE__)
#define weft_cast(g, x, dtype) weft_cast_at((g), (x), (dtype), __FILE__, __LINE__)

#define weft_real(g, x) weft_unary_at((g), WEFT_ELEMWISE_REAL, (x), __FILE__, __LINE__)
#define weft_imag(g, x) weft_unary_at((g), WEFT_ELEMWISE_IMAG, (x), __FILE__, __LINE__)
#define weft_conj(g, x) weft_unary_at((g), WEFT_ELEMWISE_CONJ, (x), __FILE__, __LINE__)
#define weft_angle(g, x) weft_unary_at((g), WEFT_ELEMWISE_ANGLE, (x), __FILE__, __LINE__)
#define weft_complex(g, re, im) \
    weft_binary_at((g), WEFT_ELEMWISE_COMPLEX, (re), (im), __FILE__, __LINE__)
#define weft_neg(g, x) weft_unary_at((g), WEFT_ELEMWISE_NEG, (x), __FILE__, __LINE__)
#define weft_abs(g, x) weft_unary_at((g), WEFT_ELEMWISE_ABS, (x), __FILE__, __LINE__)
#define weft_sgn(g, x) weft_unary_at((g), WEFT_ELEMWISE_SGN, (x), __FILE__, __LINE__)
#define weft_exp(g, x) weft_unary_at((g), WEFT_ELEMWISE_EXP, (x), __FILE__, __LINE__)
#define weft_log(g, x) weft_unary_at((g), WEFT_ELEMWISE_LOG, (x), __FILE__, __LINE__)
#define weft_log1p(g, x) weft_unary_at((g), WEFT_ELEMWISE_LOG1P, (x), __FILE__, __LINE__)
#define weft_sqrt(g, x) weft_unary_at((g), WEFT_ELEMWISE_SQRT, (x), __FILE__, __LINE__)
#define weft_sqr(g, x) weft_unary_at((g), WEFT_ELEMWISE_SQR, (x), __FILE__, __LINE__)
#define weft_tanh(g, x) weft_unary_at((g), WEFT_ELEMWISE_TANH, (x), __FILE__, __LINE__)
#define weft_sigmoid(g, x) weft_unary_at((g), WEFT_ELEMWISE_SIGMOID, (x), __FILE__, __LINE__)
#define weft_relu(g, x) weft_unary_at((g), WEFT_ELEMWISE_RELU, (x), __FILE__, __LINE__)
#define weft_sin(g, x) weft_unary_at((g), WEFT_ELEMWISE_SIN, (x), __FILE__, __LINE__)
#define weft_cos(g, x) weft_unary_at((g), WEFT_ELEMWISE_COS, (x), __FILE__, __LINE__)

#define weft_add(g, a, b) weft_binary_at((g), WEFT_ELEMWISE_ADD, (a), (b), __FILE__, __LINE__)
#define weft_sub(g, a, b) weft_binary_at((g), WEFT_ELEMWISE_SUB, (a), (b), __FILE__, __LINE__)
#define weft_mul(g, a, b) weft_binary_at((g), WEFT_ELEMWISE_MUL, (a), (b), __FILE__, __LINE__)
#define weft_div(g, a, b) weft_binary_at((g), WEFT_ELEMWISE_DIV, (a), (b), __FILE__, __LINE__)
#define weft_pow(g, a, b) weft_binary_at((g), WEFT_ELEMWISE_POW, (a), (b), __FILE__, __LINE__)
#define weft_maximum(g, a, b) \
    weft_binary_at((g), WEFT_ELEMWISE_MAXIMUM, (a), (b), __FILE__, __LINE__)
#define weft_minimum(g, a, b) \
    weft_binary_at((g), WEFT_ELEMWISE_MINIMUM, (a), (b), __FILE__, __LINE__)
#define weft_second(g, a, b) weft_binary_at((g), WEFT_ELEMWISE_SECOND, (a), (b), __FILE__, __LINE__)
#define weft_lt(g, a, b) weft_binary_at((g), WEFT_ELEMWISE_LT, (a), (b), __FILE__, __LINE__)
#define weft_le(g, a, b) weft_binary_at((g), WEFT_ELEMWISE_LE, (a), (b), __FILE__, __LINE__)
#define weft_gt(g, a, b) weft_binary_at((g), WEFT_ELEMWISE_GT, (a), (b), __FILE__, __LINE__)
#define weft_ge(g, a, b) weft_binary_at((g), WEFT_ELEMWISE_GE, (a), (b), __FILE__, __LINE__)
#define weft_eq(g, a, b) weft_binary_at((g), WEFT_ELEMWISE_EQ, (a), (b), __FILE__, __LINE__)
#define weft_ne(g, a, b) weft_binary_at((g), WEFT_ELEMWISE_NE, (a), (b), __FILE__, __LINE__)

/* x X c (weft_X_scalar) and c X x (weft_scalar_X), c a double. */
#define weft_add_scalar(g, x, c) \
    weft_binary_scalar_at((g), WEFT_ELEMWISE_ADD, (x), (c), __FILE__, __LINE__)
#define weft_scalar_add(g, c, x) \
    weft_scalar_binary_at((g), WEFT_ELEMWISE_ADD, (c), (x), __FILE__, __LINE__)
#define weft_sub_scalar(g, x, c) \
    weft_binary_scalar_at((g), WEFT_ELEMWISE_SUB, (x), (c), __FILE__, __LINE__)
#define weft_scalar_sub(g, c, x) \
    weft_scalar_binary_at((g), WEFT_ELEMWISE_SUB, (c), (x), __FILE__, __LINE__)
#define weft_mul_scalar(g, x, c) \
    weft_binary_scalar_at((g), WEFT_ELEMWISE_MUL, (x), (c), __FILE__, __LINE__)
#define weft_scalar_mul(g, c, x) \
    weft_scalar_binary_at((g), WEFT_ELEMWISE_MUL, (c), (x), __FILE__, __LINE__)
#define weft_div_scalar(g, x, c) \
    weft_binary_scalar_at((g), WEFT_ELEMWISE_DIV, (x), (c), __FILE__, __LINE__)
#define weft_scalar_div(g, c, x) \
    weft_scalar_binary_at((g), WEFT_ELEMWISE_DIV, (c), (x), __FILE__, __LINE__)
#define weft_pow_scalar(g, x, c) \
    weft_binary_scalar_at((g), WEFT_ELEMWISE_POW, (x), (c), __FILE__, __LINE__)
#define weft_scalar_pow(g, c, x) \
    weft_scalar_binary_at((g), WEFT_ELEMWISE_POW, (c), (x), __FILE__, __LINE__)
#define weft_maximum_scalar(g, x, c) \
    weft_binary_scalar_at((g), WEFT_ELEMWISE_MAXIMUM, (x), (c), __FILE__, __LINE__)
#define weft_scalar_maximum(g, c, x) \
    weft_scalar_binary_at((g), WEFT_ELEMWISE_MAXIMUM, (c), (x), __FILE__, __LINE__)
#define weft_minimum_scalar(g, x, c) \
    weft_binary_scalar_at((g), WEFT_ELEMWISE_MINIMUM, (x), (c), __FILE__, __LINE__)
#define weft_scalar_minimum(g, c, x) \
    weft_scalar_binary_at((g), WEFT_ELEMWISE_MINIMUM, (c), (x), __FILE__, __LINE__)

#ifdef __cplusplus
}
#endif
#endif /* WEFT_ELEMWISE_H */
