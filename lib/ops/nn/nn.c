/* The composed nn constructors (weft/nn.h): activations, the
 * cross-entropies and layer norm, built from elementwise ops, reductions and
 * LogSoftmax in their stable forms (docs/nn.md). */
#include <math.h>
#include <string.h>

#include "graph/ctor_int.h"
#include "nn_int.h"
#include "reduce/reduce_ops_int.h"
#include "weft/elemwise.h"
#include "weft/nn.h"
#include "weft/reduce.h"
#include "weft/shape_ops.h"

static const char *const act_names[] = {"weft_softplus", "weft_log_sigmoid", "weft_silu",
                                        "weft_gelu", "weft_gelu"};

/* x's check: not NULL, same context, a float tensor; *ndim its rank. */
static weft_status_t nn_input(weft_graph_t *g, weft_var_t *x, const char *name,
                              const char *file, int line, int *ndim)
{
    if (!g || !x) {
        return g ? weft_graph_set_error(g, WEFT_EINVAL, "%s (at %s:%d): NULL argument", name,
                                        file ? file : "?", line)
                 : WEFT_EINVAL;
    }
    weft_status_t st = weft__lred_input_type(g, x, name, file, line, ndim);
    if (st == WEFT_OK && weft_type_dtype(weft_var_type(x)) != WEFT_FLOAT32 &&
        weft_type_dtype(weft_var_type(x)) != WEFT_FLOAT64)
        st = weft__nn_float_error(g, name, file, line, x);
    return st;
}

/* The elementwise kind named `name` in this build (e.g. "Erf", added by the
 * float math kinds), looked up so this file builds with or without it. */
static bool ew_kind_named(const char *name, weft_elemwise_kind_t *kind)
{
    for (int k = 0; k < WEFT_ELEMWISE_KIND_COUNT; k++) {
        if (strcmp(weft_elemwise_name((weft_elemwise_kind_t)k), name) == 0) {
            *kind = (weft_elemwise_kind_t)k;
            return true;
        }
    }
    return false;
}

/* maximum(x, 0) + log1p(exp(-|x|)): never overflows, exact rounding of x
 * for x > 37 (the second term is below half an ulp) */
static weft_var_t *softplus(weft_graph_t *g, weft_var_t *x)
{
    weft_var_t *tail = weft_log1p(g, weft_exp(g, weft_neg(g, weft_abs(g, x))));
    return weft_add(g, weft_maximum_scalar(g, x, 0.0), tail);
}

static weft_var_t *gelu(weft_graph_t *g, weft_var_t *x, bool approximate, const char *file,
                        int line)
{
    weft_var_t *inner;
    if (approximate) { /* tanh(sqrt(2/pi) (x + 0.044715 x^3)) */
        weft_var_t *cube = weft_mul(g, x, weft_sqr(g, x));
        weft_var_t *arg = weft_add(g, x, weft_mul_scalar(g, cube, 0.044715));
        inner = weft_tanh(g, weft_mul_scalar(g, arg, 0.7978845608028654));
    } else {
        weft_elemwise_kind_t erf_kind = WEFT_ELEMWISE_KIND_COUNT;
        ew_kind_named("Erf", &erf_kind); /* checked by weft_activation_at */
        inner = weft_unary_at(g, erf_kind, weft_mul_scalar(g, x, 0.70710678118654752440), file, line);
    }
    return weft_mul(g, weft_mul_scalar(g, x, 0.5), weft_scalar_add(g, 1.0, inner));
}

static weft_var_t *activation(weft_graph_t *g, weft_activation_t act, weft_var_t *x,
                              const char *file, int line)
{
    switch (act) {
    case WEFT_ACT_SOFTPLUS: return softplus(g, x);
    case WEFT_ACT_LOG_SIGMOID: return weft_neg(g, softplus(g, weft_neg(g, x)));
    case WEFT_ACT_SILU: return weft_mul(g, x, weft_sigmoid(g, x));
    default: return gelu(g, x, act == WEFT_ACT_GELU_TANH, file, line);
    }
}

weft_var_t *weft_activation_at(weft_graph_t *g, weft_activation_t act, weft_var_t *x,
                               const char *file, int line)
{
    weft__ctor_begin(g);
    const char *name = (unsigned)act <= WEFT_ACT_GELU_TANH ? act_names[act] : "weft_activation";
    int ndim = 0;
    weft_status_t st = nn_input(g, x, name, file, line, &ndim);
    if (st == WEFT_OK && (unsigned)act > WEFT_ACT_GELU_TANH)
        st = weft_graph_set_error(g, WEFT_EINVAL, "weft_activation (at %s:%d): unknown "
                                  "activation %d", file, line, (int)act);
    weft_elemwise_kind_t erf_kind;
    if (st == WEFT_OK && act == WEFT_ACT_GELU && !ew_kind_named("Erf", &erf_kind))
        st = weft_graph_set_error(g, WEFT_ENOTIMPL, "weft_gelu (at %s:%d): the exact gelu needs "
                                  "the Erf elementwise kind, not in this build (pass approximate "
                                  "= true for the tanh form)", file, line);
    weft_var_t *out = NULL;
    if (st == WEFT_OK) st = weft__got(g, out = activation(g, act, x, file, line));
    return weft__ctor_end(g, st, out, name, file, line);
}

/* ---- binary cross-entropy --------------------------------------------------- */

weft_var_t *weft_binary_cross_entropy_with_logits_at(weft_graph_t *g, weft_var_t *z,
                                                     weft_var_t *y, const char *file, int line)
{
    static const char name[] = "weft_binary_cross_entropy_with_logits";
    weft__ctor_begin(g);
    int ndim = 0;
    weft_status_t st = nn_input(g, z, name, file, line, &ndim);
    if (st == WEFT_OK && !y)
        st = weft_graph_set_error(g, WEFT_EINVAL, "%s (at %s:%d): NULL argument", name, file,
                                  line);
    weft_var_t *out = NULL;
    if (st == WEFT_OK) st = weft__got(g, out = weft_sub(g, softplus(g, z), weft_mul(g, z, y)));
    return weft__ctor_end(g, st, out, name, file, line);
}

/* ---- softmax cross-entropy -------------------------------------------------- */

/* The one-hot of integer labels along `axis` of logits, in logits' dtype:
 * Eq(position along the axis, label). Positions are cumsum(1) - 1. */
static weft_var_t *one_hot(weft_graph_t *g, weft_var_t *logits, weft_var_t *labels, int axis,
                           int ndim)
{
    weft_dtype_t dt = weft_type_dtype(weft_var_type(logits));
    weft_var_t *ones = weft_scalar_add(g, 1.0, weft_zeros_like(g, logits));
    weft_var_t *pos = weft_sub_scalar(g, weft_cumsum(g, ones, axis), 1.0);
    int order[WEFT_MAX_NDIM];
    for (int d = 0, k = 0; d < ndim; d++) order[d] = d == axis ? WEFT_DIMSHUFFLE_NEW : k++;
    weft_var_t *lab = weft_cast(g, weft_dimshuffle(g, labels, ndim, order), dt);
    return weft_cast(g, weft_eq(g, pos, lab), dt);
}

static weft_status_t xent_labels(weft_graph_t *g, weft_var_t *logits, weft_var_t *labels,
                                 int axis, int ndim, const char *file, int line,
                                 weft_var_t **p)
{
    static const char name[] = "weft_softmax_cross_entropy";
    const weft_type_t *t = weft_var_type(labels);
    weft_dtype_t dt = weft_type_dtype(t);
    if (weft_var_graph(labels) != g || weft_type_kind(t) != WEFT_TYPE_TENSOR)
        return weft__lred_input_type(g, labels, name, file, line, &(int){0});
    char vb[256];
    const char *vf = NULL;
    int vl = 0;
    weft_var_print(labels, vb, sizeof vb);
    weft_var_trace(labels, &vf, &vl);
    if (dt == WEFT_INT32 || dt == WEFT_INT64) {
        if (weft_type_ndim(t) != ndim - 1)
            return weft_graph_set_error(g, WEFT_ESHAPE, "%s (at %s:%d): integer labels %s "
                                        "(created at %s:%d) need %d dims (logits have %d)",
                                        name, file, line, vb, vf ? vf : "?", vl, ndim - 1, ndim);
        return weft__got(g, *p = one_hot(g, logits, labels, axis, ndim));
    }
    if (dt != WEFT_FLOAT32 && dt != WEFT_FLOAT64)
        return weft_graph_set_error(g, WEFT_ETYPE, "%s (at %s:%d): labels %s (created at "
                                    "%s:%d) have dtype %s (need int32/int64 class indices or "
                                    "float32/float64 probabilities)", name, file, line, vb,
                                    vf ? vf : "?", vl, weft_dtype_name(dt));
    if (weft_type_ndim(t) != ndim)
        return weft_graph_set_error(g, WEFT_ESHAPE, "%s (at %s:%d): float labels %s (created "
                                    "at %s:%d) need %d dims like the logits, not %d", name, file,
                                    line, vb, vf ? vf : "?", vl, ndim, weft_type_ndim(t));
    *p = labels;
    return WEFT_OK;
}

weft_var_t *weft_softmax_cross_entropy_at(weft_graph_t *g, weft_var_t *logits,
                                          weft_var_t *labels, int axis, const char *file,
                                          int line)
{
    static const char name[] = "weft_softmax_cross_entropy";
    weft__ctor_begin(g);
    int ndim = 0, a = 0;
    weft_var_t *p = NULL, *out = NULL;
    weft_status_t st = nn_input(g, logits, name, file, line, &ndim);
    if (st == WEFT_OK) st = weft__axis_arg(g, logits, name, axis, file, line, &ndim, &a);
    if (st == WEFT_OK && !labels)
        st = weft_graph_set_error(g, WEFT_EINVAL, "%s (at %s:%d): NULL argument", name, file,
                                  line);
    if (st == WEFT_OK) st = xent_labels(g, logits, labels, a, ndim, file, line, &p);
    if (st == WEFT_OK) {
        weft_var_t *lsm = weft_softmax_op_at(g, true, logits, a, file, line);
        st = weft__got(g, out = weft_neg(g, weft_sum(g, weft_mul(g, p, lsm), 1, &a, false)));
    }
    return weft__ctor_end(g, st, out, name, file, line);
}

/* ---- layer norm ------------------------------------------------------------- */

static weft_var_t *layer_norm(weft_graph_t *g, weft_var_t *x, int ndim, int n_axes,
                              weft_var_t *scale, weft_var_t *bias, double eps)
{
    int axes[WEFT_MAX_NDIM];
    for (int i = 0; i < n_axes; i++) axes[i] = ndim - n_axes + i;
    weft_var_t *mean = weft_mean(g, x, (size_t)n_axes, axes, true);
    weft_var_t *var = weft_var(g, x, (size_t)n_axes, axes, 0.0, true);
    weft_var_t *y = weft_div(g, weft_sub(g, x, mean), weft_sqrt(g, weft_add_scalar(g, var, eps)));
    if (scale) y = weft_mul(g, y, scale);
    if (bias) y = weft_add(g, y, bias);
    return y;
}

weft_var_t *weft_layer_norm_at(weft_graph_t *g, weft_var_t *x, int n_axes, weft_var_t *scale,
                               weft_var_t *bias, double eps, const char *file, int line)
{
    static const char name[] = "weft_layer_norm";
    bool earlier = g && weft_graph_error(g) != WEFT_OK && (!scale || !bias);
    weft__ctor_begin(g);
    int ndim = 0;
    weft_var_t *out = NULL;
    weft_status_t st = earlier ? weft_graph_error(g) : nn_input(g, x, name, file, line, &ndim);
    if (st == WEFT_OK && (n_axes < 1 || n_axes > ndim))
        st = weft_graph_set_error(g, WEFT_EINVAL, "%s (at %s:%d): n_axes %d out of range for "
                                  "an input with %d dims (need 1..%d)", name, file, line, n_axes,
                                  ndim, ndim);
    if (st == WEFT_OK && !(eps >= 0.0 && isfinite(eps)))
        st = weft_graph_set_error(g, WEFT_EINVAL, "%s (at %s:%d): eps %g must be finite and >= "
                                  "0", name, file, line, eps);
    if (st == WEFT_OK) st = weft__got(g, out = layer_norm(g, x, ndim, n_axes, scale, bias, eps));
    return weft__ctor_end(g, st, out, name, file, line);
}
