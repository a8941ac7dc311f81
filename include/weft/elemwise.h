/* Elementwise ops: unary math, binary arithmetic, comparisons, switch, cast,
 * rounding, integer division, bitwise and logical kinds, clip, with numpy
 * broadcasting.
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
 * Dtypes (docs/dtypes.md §3, §4). Inputs of different dtypes promote as
 * NumPy's result_type on arrays (weft_dtype_promote: int64 + float32 is
 * float64, int8 + uint8 is int16, uint64 + int64 is float64); an input of
 * another dtype is converted to the compute dtype before computing. The
 * output dtype is then NumPy's ufunc loop's:
 *   comparisons (Lt Le Gt Ge Eq Ne): compute in the promoted dtype, bool out;
 *   Div (true division): float64 for integer and bool inputs, else the float;
 *   Exp Log Log1p Sqrt Tanh Sigmoid Sin Cos and the float math kinds (Tan ..
 *     Nextafter): weft_dtype_float_of (bool and
 *     8-bit integers float16, 16-bit float32, 32- and 64-bit float64);
 *   Pow: integers compute in integers (wrapping; a negative exponent fails
 *     the node at run time with WEFT_ERANGE, "integers to negative integer
 *     powers are not allowed", as NumPy refuses); bool Pow and Sqr: int8;
 *   Add Mul Maximum Minimum Abs Relu Second on bool: bool (+ is or, * and);
 *     Sub and Neg of bool are WEFT_ETYPE (as in NumPy), Sgn of bool too;
 *   everything else: the promoted dtype. Switch: the condition must be bool,
 *   the branches promote.
 * A kind with no kernel for the dtype is WEFT_ETYPE "<dtype> is not
 * supported by <Kind>". float16 is stored as IEEE half and computed in
 * float32, each result rounded to half (to nearest even), as NumPy does on
 * processors without half arithmetic. Integer arithmetic wraps as in two's
 * complement (computed in unsigned); Abs of the minimum signed value is
 * itself, Neg of an unsigned x is 2^bits - x, both as in NumPy.
 * The rounding, integer and logical kinds follow NumPy 1.24 (the promoted
 * input dtype as above):
 *   Floor Ceil Trunc Rint: a float stays, bool and integers compute in
 *     weft_dtype_float_of (as the float-only kinds);
 *   Round: numeric, dtype kept (an integer is returned as it is);
 *   Mod FloorDivide Fmod Clip: numeric, dtype kept;
 *   Abs also takes bool (bool result: x itself); NanToNum any dtype, kept;
 *   IsNan IsInf IsFinite LogicalNot LogicalAnd LogicalOr LogicalXor: any
 *     dtype in (computed in the common dtype; nonzero is true, NaN too),
 *     bool out; an integer or bool is never NaN or infinite;
 *   Invert BitwiseAnd BitwiseOr BitwiseXor: integer or bool, kept (float is
 *     WEFT_ETYPE "bitwise ops need integer or bool inputs");
 *   LeftShift RightShift: integer, kept (a float is WEFT_ETYPE "shifts need
 *     an integer input"; bool computes in int8, as NumPy).
 * Their values are NumPy's bit for bit:
 *   Mod (np.remainder) has the divisor's sign: -7 mod 3 = 2, 7 mod -3 = -2;
 *   FloorDivide rounds down: -7 // 3 = -3; Fmod (C fmod, np.fmod) has the
 *   dividend's sign: fmod(-7, 3) = -1. Integer division by zero gives 0
 *   (NumPy also warns), MIN // -1 wraps to MIN and MIN mod -1 is 0. On
 *   floats NumPy's npy_divmod: x mod 0 and inf mod y are NaN, x // 0 is
 *   x / 0, -1 mod inf is inf, 0 mod -3 is -0.0, -1 // inf is -1.
 *   Round and Rint round half to even (round(2.5) = 2, round(-0.5) = -0.0).
 *   Sgn is np.sign (weft_sign). Shifts by a negative count or by the
 *   width or more give 0, a right shift of a negative value -1 (NumPy on
 *   x86-64); a left shift wraps.
 *   Clip(x, lo, hi) is minimum(maximum(x, lo), hi) with NaN propagating
 *   from any of the three; lo > hi gives hi; clip(0.0, -0.0, 1) is -0.0.
 *   NanToNum: NaN -> 0, +inf -> the dtype's largest, -inf -> its lowest
 *   (np.nan_to_num's defaults). Other replacement values are not props:
 *   weft_nan_to_num_values composes them from IsNan, Eq and Switch.
 * Cast and the implicit conversions convert as weft/tensor.h's
 * "Conversions" says (NumPy's results on x86-64).
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
 * Float math kinds (issue 17; NumPy's names and values): Tan, Arcsin,
 * Arccos, Arctan, Arctan2(y, x), Sinh, Cosh, Arcsinh, Arccosh, Arctanh,
 * Exp2, Expm1, Log2, Log10, Hypot, Erf, Erfc, Copysign(x1, x2) and
 * Nextafter(x1, x2) as NumPy (libm's values, except Expm1 and Arctan2:
 * vectorized polynomials within 2 ulp, 1 ulp measured against libm on
 * 2^20 inputs per dtype, with libm's NaN, +-inf, +-0, subnormal and overflow
 * results, and the same bits on every x86-64 ISA level);
 * outside the domain the result is NaN (arcsin(2), arccosh(0.5),
 * log2(-1), arccos(-2)) and at a pole +-inf (arctanh(+-1) = +-inf,
 * log10(0) = -inf), without error. Not in NumPy (SciPy's special
 * functions): Erfinv (NaN outside [-1, 1], +-inf at +-1), Gammaln =
 * log|Gamma(x)| (+inf at the integers <= 0), Digamma (psi; -inf at +0,
 * +inf at -0, NaN at the negative integers) and Trigamma (psi', +inf at
 * the integers <= 0); float64 within about 1e-15 relative away from
 * digamma's root near 1.4616; float32 computes these in float64.
 * Polygamma(n, x) (scipy.special.polygamma; PyTensor's, n an input) is the
 * n-th derivative of Digamma: n = 0 Digamma, n = 1 Trigamma; its dtype is
 * x's float dtype (weft_dtype_float_of, float16 computed in float32),
 * whatever n's; n is an integer or bool (or a float holding an integer, so
 * the node can fuse: a negative or non-integral n gives NaN); a complex
 * input is refused. Poles at the integers <= 0 ((-1)^(n+1) inf for n >= 2),
 * psi_n(+inf) = (-1)^(n+1) 0, psi_n(-inf) NaN; float64 within about 1e-15
 * relative for n >= 2 at x > 0 (lib/ops/elemwise/polygamma.c).
 *
 * In place. Every kind has variants writing into input i (destroy_map
 * {0: [i]}) when that input is C-contiguous (else into a fresh output, so a
 * later reduction sums in the order it would without the in-place rewrite);
 * make_node of such a variant requires input i's type to EQUAL the output
 * type (same dtype and static lengths), else WEFT_ETYPE - so an in-place op
 * never needs to grow or convert its target. The op class's
 * inplace_variant hook returns them; the inplace rewrite chooses.
 *
 * Gradients. Every kind has a grad hook built from these constructors;
 * gradients are summed over broadcast axes and cast back to the input dtype.
 * Comparisons, predicates, the bitwise kinds and the switch condition have
 * no gradient (their input_grads are left NULL: disconnected), as do
 * bool/integer inputs. Step functions - Sgn, Floor, Ceil, Trunc, Round,
 * Rint and both inputs of FloorDivide - get zeros (connected, as
 * PyTensor). Mod: gz to x, -floor_divide(x, y) gz to y; Fmod: gz to x,
 * -trunc(x / y) gz to y. Clip, PyTensor's rule: x gets gz where
 * lo <= x <= hi (both bounds included), lo where x < lo, hi where x > hi.
 * NanToNum passes gz where x is finite, 0 where it was replaced.
 * The float math kinds: Copysign's second input (a sign) and Nextafter's
 * (a direction) get none; Nextafter(x1, x2) sends gz to x1 (slope 1 almost
 * everywhere), Copysign gz to x1 where the two signs agree and -gz where
 * not. Gammaln's gradient uses Digamma, Digamma's Trigamma, Trigamma's
 * Polygamma(2, x); Polygamma(n, x) sends gz Polygamma(n + 1, x) to x (n + 1
 * in int64 for an integer or bool n) and none to n (disconnected).
 * Complex intermediates carry gradients for every kind weft computes on
 * complex numbers (PyTensor's convention, docs/dtypes.md "Complex numbers":
 * d C / d re(z) + i d C / d im(z)); the holomorphic ones (Exp, Log, Sqrt,
 * Sqr, Sin, Cos, Tanh, Div, Pow) send gz conj(f'(z)) to each input.
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
    /* rounding, integer, logical (issue 17) */ \
    X(FLOOR, "Floor", 1)                         \
    X(CEIL, "Ceil", 1)                           \
    X(TRUNC, "Trunc", 1)                         \
    X(ROUND, "Round", 1)                         \
    X(RINT, "Rint", 1)                           \
    X(ISNAN, "IsNan", 1)                         \
    X(ISINF, "IsInf", 1)                         \
    X(ISFINITE, "IsFinite", 1)                   \
    X(LOGICAL_NOT, "LogicalNot", 1)              \
    X(INVERT, "Invert", 1)                       \
    X(NAN_TO_NUM, "NanToNum", 1)                 \
    X(MOD, "Mod", 2)                             \
    X(FLOOR_DIVIDE, "FloorDivide", 2)            \
    X(FMOD, "Fmod", 2)                           \
    X(LOGICAL_AND, "LogicalAnd", 2)              \
    X(LOGICAL_OR, "LogicalOr", 2)                \
    X(LOGICAL_XOR, "LogicalXor", 2)              \
    X(BITWISE_AND, "BitwiseAnd", 2)              \
    X(BITWISE_OR, "BitwiseOr", 2)                \
    X(BITWISE_XOR, "BitwiseXor", 2)              \
    X(LEFT_SHIFT, "LeftShift", 2)                \
    X(RIGHT_SHIFT, "RightShift", 2)              \
    X(CLIP, "Clip", 3)                           \
    /* float math (issue 17) */ \
    X(TAN, "Tan", 1)            \
    X(ARCSIN, "Arcsin", 1)      \
    X(ARCCOS, "Arccos", 1)      \
    X(ARCTAN, "Arctan", 1)      \
    X(ARCTAN2, "Arctan2", 2)    \
    X(SINH, "Sinh", 1)          \
    X(COSH, "Cosh", 1)          \
    X(ARCSINH, "Arcsinh", 1)    \
    X(ARCCOSH, "Arccosh", 1)    \
    X(ARCTANH, "Arctanh", 1)    \
    X(EXP2, "Exp2", 1)          \
    X(EXPM1, "Expm1", 1)        \
    X(LOG2, "Log2", 1)          \
    X(LOG10, "Log10", 1)        \
    X(HYPOT, "Hypot", 2)        \
    X(ERF, "Erf", 1)            \
    X(ERFC, "Erfc", 1)          \
    X(ERFINV, "Erfinv", 1)      \
    X(GAMMALN, "Gammaln", 1)    \
    X(DIGAMMA, "Digamma", 1)    \
    X(TRIGAMMA, "Trigamma", 1)  \
    X(POLYGAMMA, "Polygamma", 2) \
    X(COPYSIGN, "Copysign", 2)  \
    X(NEXTAFTER, "Nextafter", 2) \
    /* complex (issue 17) */    \
    X(REAL, "Real", 1)          \
    X(IMAG, "Imag", 1)          \
    X(CONJ, "Conj", 1)          \
    X(ANGLE, "Angle", 1)        \
    X(COMPLEX, "Complex", 2)

/* The elementwise kinds. Clip takes (x, lo, hi). Every kind except Cast, the
 * comparisons, the bool-valued kinds (IsNan ... LogicalXor) and the
 * ternary ones (Switch, Clip) may be a Composite step (weft/composite.h), so
 * the fusion rewrite fuses the rounding and integer kinds with arithmetic
 * whose operands have one dtype. Second(a, b) is b broadcast to the common
 * shape (its value ignores a; zeros_like is Second(x, 0)). Switch(c, a, b) is
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
/* np.clip(x, lo, hi): Clip of the three, broadcast together. */
WEFT_API weft_var_t *weft_clip_at(weft_graph_t *g, weft_var_t *x, weft_var_t *lo, weft_var_t *hi,
                                  const char *file, int line);
/* np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf): float x with
 * NaN, +inf and -inf replaced by those values (converted to x's dtype), as
 * Switch(IsNan(x), nan, Switch(Eq(x, inf), posinf, Switch(Eq(x, -inf),
 * neginf, x))); an integer or bool x gives NanToNum(x) (x's values).
 * Ownership and errors: as weft_elemwise (a NULL x: WEFT_EINVAL "input 0 is
 * NULL" unless an earlier error is kept). */
WEFT_API weft_var_t *weft_nan_to_num_values_at(weft_graph_t *g, weft_var_t *x, double nan,
                                               double posinf, double neginf, const char *file,
                                               int line);
/* x converted to dtype (x itself when it already has that dtype). */
WEFT_API weft_var_t *weft_cast_at(weft_graph_t *g, weft_var_t *x, weft_dtype_t dtype,
                                  const char *file, int line);
/* Scalars mixed in: weft_binary_scalar(g, kind, x, c) is `x kind c` and
 * weft_scalar_binary(g, kind, c, x) is `c kind x` (the operand order is the
 * argument order), with c a 0-d constant. The constant's dtype follows
 * NumPy's rule for a Python scalar (NEP 50, docs/dtypes.md §3): x's dtype
 * (float16 x + 0.1 is float16), except that a non-integral c with an
 * integer or bool x gives a float64 constant (so int32 x * 2.5 is float64)
 * and an integral c with a bool x an int64 one. A c not representable in an
 * integer dtype is WEFT_EINVAL (uint8 x + 300, uint8 x - 1: NumPy 2 raises
 * too; NumPy 1.24's value-based casting would widen instead). The per-kind helpers
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

/* rounding, integer, logical (issue 17): NumPy's names */
#define weft_sign(g, x) weft_unary_at((g), WEFT_ELEMWISE_SGN, (x), __FILE__, __LINE__)
#define weft_floor(g, x) weft_unary_at((g), WEFT_ELEMWISE_FLOOR, (x), __FILE__, __LINE__)
#define weft_ceil(g, x) weft_unary_at((g), WEFT_ELEMWISE_CEIL, (x), __FILE__, __LINE__)
#define weft_trunc(g, x) weft_unary_at((g), WEFT_ELEMWISE_TRUNC, (x), __FILE__, __LINE__)
#define weft_round(g, x) weft_unary_at((g), WEFT_ELEMWISE_ROUND, (x), __FILE__, __LINE__)
#define weft_rint(g, x) weft_unary_at((g), WEFT_ELEMWISE_RINT, (x), __FILE__, __LINE__)
#define weft_isnan(g, x) weft_unary_at((g), WEFT_ELEMWISE_ISNAN, (x), __FILE__, __LINE__)
#define weft_isinf(g, x) weft_unary_at((g), WEFT_ELEMWISE_ISINF, (x), __FILE__, __LINE__)
#define weft_isfinite(g, x) weft_unary_at((g), WEFT_ELEMWISE_ISFINITE, (x), __FILE__, __LINE__)
#define weft_logical_not(g, x) \
    weft_unary_at((g), WEFT_ELEMWISE_LOGICAL_NOT, (x), __FILE__, __LINE__)
#define weft_invert(g, x) weft_unary_at((g), WEFT_ELEMWISE_INVERT, (x), __FILE__, __LINE__)
#define weft_bitwise_not(g, x) weft_unary_at((g), WEFT_ELEMWISE_INVERT, (x), __FILE__, __LINE__)
#define weft_nan_to_num(g, x) \
    weft_unary_at((g), WEFT_ELEMWISE_NAN_TO_NUM, (x), __FILE__, __LINE__)
#define weft_nan_to_num_values(g, x, nan, posinf, neginf) \
    weft_nan_to_num_values_at((g), (x), (nan), (posinf), (neginf), __FILE__, __LINE__)
#define weft_mod(g, a, b) weft_binary_at((g), WEFT_ELEMWISE_MOD, (a), (b), __FILE__, __LINE__)
#define weft_remainder(g, a, b) \
    weft_binary_at((g), WEFT_ELEMWISE_MOD, (a), (b), __FILE__, __LINE__)
#define weft_floor_divide(g, a, b) \
    weft_binary_at((g), WEFT_ELEMWISE_FLOOR_DIVIDE, (a), (b), __FILE__, __LINE__)
#define weft_fmod(g, a, b) weft_binary_at((g), WEFT_ELEMWISE_FMOD, (a), (b), __FILE__, __LINE__)
#define weft_logical_and(g, a, b) \
    weft_binary_at((g), WEFT_ELEMWISE_LOGICAL_AND, (a), (b), __FILE__, __LINE__)
#define weft_logical_or(g, a, b) \
    weft_binary_at((g), WEFT_ELEMWISE_LOGICAL_OR, (a), (b), __FILE__, __LINE__)
#define weft_logical_xor(g, a, b) \
    weft_binary_at((g), WEFT_ELEMWISE_LOGICAL_XOR, (a), (b), __FILE__, __LINE__)
#define weft_bitwise_and(g, a, b) \
    weft_binary_at((g), WEFT_ELEMWISE_BITWISE_AND, (a), (b), __FILE__, __LINE__)
#define weft_bitwise_or(g, a, b) \
    weft_binary_at((g), WEFT_ELEMWISE_BITWISE_OR, (a), (b), __FILE__, __LINE__)
#define weft_bitwise_xor(g, a, b) \
    weft_binary_at((g), WEFT_ELEMWISE_BITWISE_XOR, (a), (b), __FILE__, __LINE__)
#define weft_left_shift(g, a, b) \
    weft_binary_at((g), WEFT_ELEMWISE_LEFT_SHIFT, (a), (b), __FILE__, __LINE__)
#define weft_right_shift(g, a, b) \
    weft_binary_at((g), WEFT_ELEMWISE_RIGHT_SHIFT, (a), (b), __FILE__, __LINE__)
/* np.clip(x, lo, hi): the three broadcast together. */
#define weft_clip(g, x, lo, hi) weft_clip_at((g), (x), (lo), (hi), __FILE__, __LINE__)
/* float math (issue 17): NumPy's names (weft_arctan2(g, y, x) is atan2(y, x)). */
#define weft_tan(g, x) weft_unary_at((g), WEFT_ELEMWISE_TAN, (x), __FILE__, __LINE__)
#define weft_arcsin(g, x) weft_unary_at((g), WEFT_ELEMWISE_ARCSIN, (x), __FILE__, __LINE__)
#define weft_arccos(g, x) weft_unary_at((g), WEFT_ELEMWISE_ARCCOS, (x), __FILE__, __LINE__)
#define weft_arctan(g, x) weft_unary_at((g), WEFT_ELEMWISE_ARCTAN, (x), __FILE__, __LINE__)
#define weft_arctan2(g, y, x) \
    weft_binary_at((g), WEFT_ELEMWISE_ARCTAN2, (y), (x), __FILE__, __LINE__)
#define weft_sinh(g, x) weft_unary_at((g), WEFT_ELEMWISE_SINH, (x), __FILE__, __LINE__)
#define weft_cosh(g, x) weft_unary_at((g), WEFT_ELEMWISE_COSH, (x), __FILE__, __LINE__)
#define weft_arcsinh(g, x) weft_unary_at((g), WEFT_ELEMWISE_ARCSINH, (x), __FILE__, __LINE__)
#define weft_arccosh(g, x) weft_unary_at((g), WEFT_ELEMWISE_ARCCOSH, (x), __FILE__, __LINE__)
#define weft_arctanh(g, x) weft_unary_at((g), WEFT_ELEMWISE_ARCTANH, (x), __FILE__, __LINE__)
#define weft_exp2(g, x) weft_unary_at((g), WEFT_ELEMWISE_EXP2, (x), __FILE__, __LINE__)
#define weft_expm1(g, x) weft_unary_at((g), WEFT_ELEMWISE_EXPM1, (x), __FILE__, __LINE__)
#define weft_log2(g, x) weft_unary_at((g), WEFT_ELEMWISE_LOG2, (x), __FILE__, __LINE__)
#define weft_log10(g, x) weft_unary_at((g), WEFT_ELEMWISE_LOG10, (x), __FILE__, __LINE__)
#define weft_hypot(g, x1, x2) \
    weft_binary_at((g), WEFT_ELEMWISE_HYPOT, (x1), (x2), __FILE__, __LINE__)
#define weft_erf(g, x) weft_unary_at((g), WEFT_ELEMWISE_ERF, (x), __FILE__, __LINE__)
#define weft_erfc(g, x) weft_unary_at((g), WEFT_ELEMWISE_ERFC, (x), __FILE__, __LINE__)
#define weft_erfinv(g, x) weft_unary_at((g), WEFT_ELEMWISE_ERFINV, (x), __FILE__, __LINE__)
#define weft_gammaln(g, x) weft_unary_at((g), WEFT_ELEMWISE_GAMMALN, (x), __FILE__, __LINE__)
#define weft_digamma(g, x) weft_unary_at((g), WEFT_ELEMWISE_DIGAMMA, (x), __FILE__, __LINE__)
#define weft_trigamma(g, x) weft_unary_at((g), WEFT_ELEMWISE_TRIGAMMA, (x), __FILE__, __LINE__)
/* polygamma(n, x), the n-th derivative of digamma (see Polygamma above) */
#define weft_polygamma(g, n, x) \
    weft_binary_at((g), WEFT_ELEMWISE_POLYGAMMA, (n), (x), __FILE__, __LINE__)
#define weft_copysign(g, x1, x2) \
    weft_binary_at((g), WEFT_ELEMWISE_COPYSIGN, (x1), (x2), __FILE__, __LINE__)
#define weft_nextafter(g, x1, x2) \
    weft_binary_at((g), WEFT_ELEMWISE_NEXTAFTER, (x1), (x2), __FILE__, __LINE__)

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
