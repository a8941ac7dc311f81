/* Neural-network ops: softmax and log_softmax over an axis, softplus,
 * log_sigmoid, silu, gelu, the cross-entropies from logits and layer
 * normalization, all numerically stable (no overflow for large inputs).
 *
 * Which are ops and which are compositions (docs/nn.md has the reasons):
 *   Softmax, LogSoftmax are op classes ("Softmax", "LogSoftmax"; props
 *     ndim and axis; weft/ops.h finds them by name) with their own kernel
 *     and gradient: max-shifted, so no element overflows; each lane (the
 *     elements along the axis at one position of the other axes) is computed
 *     by one worker, so results are the same bits at any worker count. Their
 *     in-place variants (props inplace; destroy_map {0: [0]}) overwrite x
 *     and are chosen by the inplace rewrite.
 *   The others are built from existing ops in stable forms, and the fusion
 *     rewrite (docs/rewrites.md §5) runs each elementwise chain as one
 *     Composite loop:
 *       softplus(x)     = maximum(x, 0) + log1p(exp(-|x|))
 *       log_sigmoid(x)  = -softplus(-x)
 *       silu(x)         = x * sigmoid(x)
 *       gelu(x)         = 0.5 x (1 + erf(x / sqrt 2))            (exact)
 *                       = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
 *                                                            (approximate)
 *       binary cross-entropy with logits z, targets y
 *                       = maximum(z, 0) - z y + log1p(exp(-|z|))
 *       softmax cross-entropy = -sum(p * log_softmax(z, axis), axis)
 *       layer norm      = (x - mean) / sqrt(var + eps) * scale + bias
 *                         (mean, var over the last n_axes axes; Var is
 *                         the lane reduction computed in double)
 *     Their gradients are the composition's (softplus' is sigmoid(x),
 *     also at x = 0: maximum's tie rule gives 1/2 and |x|'s side 0).
 *
 * Values. softplus(1000) = 1000, softplus(-1000) = 0 (5e-435 underflows),
 * log_sigmoid(-800) = -800; softmax of a lane holding NaN, +inf, or only
 * -inf is NaN in the whole lane (NumPy's np.exp(x - x.max()) / sum
 * formula gives the same); a -inf element among finite ones gives 0
 * (log_softmax: -inf). The exp inside Softmax is the reductions' vectorized
 * one (lib/ops/reduce/vexp_int.h: within 2 ulp of libm), computed in double
 * for float32 too; softmax results below 3.3e-308 (float64) are 0 rather
 * than subnormal.
 *
 * dtypes: float32 and float64 only (an integer or bool input is WEFT_ETYPE,
 * "Softmax: input x (created at f.c:3) has dtype int32 (need float32 or
 * float64; cast it first)"); the result has the input's dtype (a mixed
 * float32/float64 pair computes in float64, elemwise.h's rule). Exception:
 * the class labels of weft_softmax_cross_entropy may be int32/int64.
 *
 * Ownership (every constructor): borrows g and the variables; returns the
 * output, borrowed, owned by g. Errors: NULL with the first error kept on g
 * (weft/graph.h "Errors"; a NULL input from an earlier failure adds none):
 * WEFT_EINVAL (NULL g or x, an axis out of range: "Softmax (at f.c:9): axis
 * 2 out of range for input x with 2 dims (created at f.c:4)", n_axes out of
 * range, eps negative or not finite), WEFT_ETYPE (dtypes above), WEFT_ESHAPE
 * (labels or scale/bias not matching), WEFT_ENOTIMPL (exact gelu without an
 * Erf kind), WEFT_EFOREIGN, WEFT_ENOMEM.
 * Thread: as g (one thread at a time). */
#ifndef WEFT_NN_H
#define WEFT_NN_H

#include <stdbool.h>

#include "weft/export.h"
#include "weft/graph.h"
#include "weft/op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Softmax (is_log false) or LogSoftmax of x along axis (negative from the
 * end): exp(x - m) / sum(exp(x - m)) and (x - m) - log(sum(exp(x - m))),
 * m the lane's maximum. Use the macros. */
WEFT_API weft_var_t *weft_softmax_op_at(weft_graph_t *g, bool is_log, weft_var_t *x, int axis,
                                        const char *file, int line);
#define weft_softmax(g, x, axis) weft_softmax_op_at((g), false, (x), (axis), __FILE__, __LINE__)
#define weft_log_softmax(g, x, axis) \
    weft_softmax_op_at((g), true, (x), (axis), __FILE__, __LINE__)

/* Whether op is a Softmax or LogSoftmax op; then *is_log and *axis (the
 * non-negative axis) are set (either may be NULL). Thread: any. */
WEFT_API bool weft_softmax_op_info(const weft_op_t *op, bool *is_log, int *axis);

/* The elementwise activations (float x; x's shape and dtype). */
typedef enum weft_activation {
    WEFT_ACT_SOFTPLUS = 0,
    WEFT_ACT_LOG_SIGMOID = 1,
    WEFT_ACT_SILU = 2,
    WEFT_ACT_GELU = 3,        /* exact: needs the Erf elementwise kind */
    WEFT_ACT_GELU_TANH = 4,   /* the tanh approximation */
} weft_activation_t;
WEFT_API weft_var_t *weft_activation_at(weft_graph_t *g, weft_activation_t act, weft_var_t *x,
                                        const char *file, int line);
#define weft_softplus(g, x) weft_activation_at((g), WEFT_ACT_SOFTPLUS, (x), __FILE__, __LINE__)
#define weft_log_sigmoid(g, x) \
    weft_activation_at((g), WEFT_ACT_LOG_SIGMOID, (x), __FILE__, __LINE__)
#define weft_silu(g, x) weft_activation_at((g), WEFT_ACT_SILU, (x), __FILE__, __LINE__)
/* gelu; approximate: the tanh form (PyTorch's approximate="tanh", JAX's
 * approximate=True). The exact form uses the elementwise kind named "Erf"
 * when this build has one, else fails with WEFT_ENOTIMPL. */
#define weft_gelu(g, x, approximate)                                                 \
    weft_activation_at((g), (approximate) ? WEFT_ACT_GELU_TANH : WEFT_ACT_GELU, (x), \
                       __FILE__, __LINE__)

/* Softmax cross-entropy from logits, over the class axis `axis`: the
 * per-example loss -sum(p * log_softmax(logits, axis), axis), logits' shape
 * without that axis. labels is either
 *   - float (probabilities or one-hot) broadcastable to logits' shape: p is
 *     labels; the gradient to logits is gz (softmax * sum(p) - p), i.e.
 *     softmax - p for rows of p summing to 1; labels get
 *     -gz log_softmax; or
 *   - int32/int64 class indices of logits' shape without `axis`: p is their
 *     one-hot (built from Eq on the positions along the axis). An index
 *     outside [0, classes) gives a zero p and so a loss of 0 (PyTensor
 *     raises instead). Indices get no gradient.
 * PyTensor's categorical_crossentropy(softmax(logits), p) without forming
 * log(softmax). Errors: float labels of another rank or a non-broadcasting
 * length: WEFT_ESHAPE; integer labels whose rank is not logits' - 1:
 * WEFT_ESHAPE ("softmax_cross_entropy (at f.c:7): integer labels y
 * (created at f.c:5) need 1 dims (logits have 2)"). */
WEFT_API weft_var_t *weft_softmax_cross_entropy_at(weft_graph_t *g, weft_var_t *logits,
                                                   weft_var_t *labels, int axis,
                                                   const char *file, int line);
#define weft_softmax_cross_entropy(g, logits, labels, axis) \
    weft_softmax_cross_entropy_at((g), (logits), (labels), (axis), __FILE__, __LINE__)

/* Binary cross-entropy from logits z and targets y (broadcast together),
 * elementwise (no reduction; PyTorch's binary_cross_entropy_with_logits
 * with reduction="none", TensorFlow's sigmoid_cross_entropy_with_logits):
 * maximum(z, 0) - z y + log1p(exp(-|z|)); gradient to z: sigmoid(z) - y. */
WEFT_API weft_var_t *weft_binary_cross_entropy_with_logits_at(weft_graph_t *g, weft_var_t *z,
                                                              weft_var_t *y, const char *file,
                                                              int line);
#define weft_binary_cross_entropy_with_logits(g, z, y) \
    weft_binary_cross_entropy_with_logits_at((g), (z), (y), __FILE__, __LINE__)

/* Layer normalization over the last n_axes axes of x (1 <= n_axes <=
 * ndim): (x - mean) / sqrt(var + eps), var the biased variance (ddof 0),
 * then * scale and + bias when given (NULL: none), each broadcast against
 * x (typically of the normalized axes' shape). eps >= 0 and finite. A NULL
 * scale or bias while g keeps an error is taken as an earlier failure (the
 * constructor returns NULL, adding nothing). */
WEFT_API weft_var_t *weft_layer_norm_at(weft_graph_t *g, weft_var_t *x, int n_axes,
                                        weft_var_t *scale, weft_var_t *bias, double eps,
                                        const char *file, int line);
#define weft_layer_norm(g, x, n_axes, scale, bias, eps) \
    weft_layer_norm_at((g), (x), (n_axes), (scale), (bias), (eps), __FILE__, __LINE__)

#ifdef __cplusplus
}
#endif
#endif /* WEFT_NN_H */
