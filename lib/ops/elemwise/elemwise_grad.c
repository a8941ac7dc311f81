/* Gradients of the elementwise ops, built from the public constructors, and
 * the shared "reduce a broadcast gradient back to its input" helper (through
 * the internal SumAxes op, sum_axes.c).
 *
 * For input i the hook computes the partial gradient in the output's dtype
 * and shape, then weft__grad_reduce_to sums it over the axes input i was
 * broadcast along (static length 1 in the input, not 1 in the output) and
 * casts it to input i's dtype. bool/integer inputs get no gradient (NULL:
 * disconnected), like comparisons, predicates and the Switch condition;
 * step functions (Sgn, the rounding kinds, FloorDivide) get zeros. */
#include <stddef.h>

#include "graph/ctor_int.h"
#include "ops_int.h"

#define HERE __FILE__, __LINE__

weft_status_t weft__grad_reduce_to(weft_graph_t *g, weft_var_t *grad, weft_var_t *target,
                                   weft_var_t **out)
{
    const weft_type_t *gt = weft_var_type(grad), *tt = weft_var_type(target);
    uint32_t mask = 0;
    for (int d = 0; d < weft_type_ndim(tt); d++)
        if (weft_type_dim(tt, d) == 1 && weft_type_dim(gt, d) != 1) mask |= 1u << d;
    weft_var_t *r = grad;
    if (mask) {
        weft_status_t st = weft__sum_axes(g, grad, mask, HERE, &r);
        if (st != WEFT_OK) return st;
    }
    return weft__got(g, *out = weft_cast_at(g, r, weft_type_dtype(tt), HERE));
}

weft_status_t weft__grad_null(weft_graph_t *g, const weft_apply_t *node, weft_var_t **out)
{
    const weft_type_t *t = NULL;
    const char *file;
    int line;
    weft_apply_trace(node, &file, &line);
    weft_status_t st = weft_type_null(g, &t);
    return st == WEFT_OK ? weft__got(g, *out = weft_var_create_at(g, t, NULL, file, line)) : st;
}

/* A 0-d constant of v's dtype. */
static weft_status_t konst(weft_graph_t *g, weft_var_t *v, double value, weft_var_t **out)
{
    return weft__got(
        g, *out = weft_constant_scalar_at(g, weft_type_dtype(weft_var_type(v)), value, HERE));
}

static weft_status_t bin(weft_graph_t *g, weft_elemwise_kind_t k, weft_var_t *a, weft_var_t *b,
                         weft_var_t **o)
{
    return weft__got(g, *o = weft_binary_at(g, k, a, b, HERE));
}

static weft_status_t un(weft_graph_t *g, weft_elemwise_kind_t k, weft_var_t *a, weft_var_t **o)
{
    return weft__got(g, *o = weft_unary_at(g, k, a, HERE));
}

static weft_status_t scal(weft_graph_t *g, weft_elemwise_kind_t k, weft_var_t *a, double v,
                          weft_var_t **o)
{
    return weft__got(g, *o = weft_binary_scalar_at(g, k, a, v, HERE));
}

/* gz where cond holds, else 0 (the reverse when flip). */
static weft_status_t masked(weft_graph_t *g, weft_var_t *cond, weft_var_t *gz, bool flip,
                            weft_var_t **o)
{
    weft_var_t *zero;
    weft_status_t st = konst(g, gz, 0.0, &zero);
    if (st != WEFT_OK) return st;
    *o = flip ? weft_switch_at(g, cond, zero, gz, HERE) : weft_switch_at(g, cond, gz, zero, HERE);
    return weft__got(g, *o);
}

/* gz * d y / d x for the unary kinds (x the input, y the output). */
static weft_status_t unary_partial(weft_graph_t *g, weft_elemwise_kind_t k, weft_var_t *x,
                                   weft_var_t *y, weft_var_t *gz, weft_var_t **o)
{
    weft_var_t *t = NULL, *u = NULL, *c = NULL;
    weft_status_t st = WEFT_OK;
    switch (k) {
    case WEFT_ELEMWISE_NEG: return un(g, WEFT_ELEMWISE_NEG, gz, o);
    case WEFT_ELEMWISE_ABS: st = un(g, WEFT_ELEMWISE_SGN, x, &t); break;
    case WEFT_ELEMWISE_EXP: t = y; break;
    case WEFT_ELEMWISE_LOG: return bin(g, WEFT_ELEMWISE_DIV, gz, x, o);
    case WEFT_ELEMWISE_LOG1P:
        st = scal(g, WEFT_ELEMWISE_ADD, x, 1.0, &u);
        return st ? st : bin(g, WEFT_ELEMWISE_DIV, gz, u, o);
    case WEFT_ELEMWISE_SQRT: /* gz / (2 y) */
        st = scal(g, WEFT_ELEMWISE_MUL, y, 2.0, &u);
        return st ? st : bin(g, WEFT_ELEMWISE_DIV, gz, u, o);
    case WEFT_ELEMWISE_SQR: st = scal(g, WEFT_ELEMWISE_MUL, x, 2.0, &t); break;
    case WEFT_ELEMWISE_TANH: /* 1 - y^2 */
        if (!(st = konst(g, y, 1.0, &c)) && !(st = un(g, WEFT_ELEMWISE_SQR, y, &u)))
            st = bin(g, WEFT_ELEMWISE_SUB, c, u, &t);
        break;
    case WEFT_ELEMWISE_SIGMOID: /* y (1 - y) */
        if (!(st = konst(g, y, 1.0, &c)) && !(st = bin(g, WEFT_ELEMWISE_SUB, c, y, &u)))
            st = bin(g, WEFT_ELEMWISE_MUL, y, u, &t);
        break;
    case WEFT_ELEMWISE_RELU:
        st = scal(g, WEFT_ELEMWISE_GT, x, 0.0, &c);
        return st ? st : masked(g, c, gz, false, o);
    case WEFT_ELEMWISE_SIN: st = un(g, WEFT_ELEMWISE_COS, x, &t); break;
    case WEFT_ELEMWISE_COS: /* -sin x */
        if (!(st = un(g, WEFT_ELEMWISE_SIN, x, &u))) st = un(g, WEFT_ELEMWISE_NEG, u, &t);
        break;
    case WEFT_ELEMWISE_CAST: *o = gz; return WEFT_OK;
    default: *o = NULL; return WEFT_OK; /* Sgn: zero almost everywhere */
    }
    return st ? st : bin(g, WEFT_ELEMWISE_MUL, gz, t, o);
}

/* Maximum / Minimum (weft/elemwise.h, Gradients): gz to the input equal to
 * the result, gz/2 to each when both are (a tie), 0 where neither is (NaN).
 * Halving makes maximum(x, x) get gz in all, and a tie between two variables
 * the central difference's 1/2 each, whichever order the inputs come in. */
static weft_status_t extreme_partial(weft_graph_t *g, size_t i, weft_var_t *a, weft_var_t *b,
                                     weft_var_t *y, weft_var_t *gz, weft_var_t **o)
{
    weft_var_t *own = NULL, *other = NULL, *half = NULL, *t = NULL;
    weft_status_t st = bin(g, WEFT_ELEMWISE_EQ, y, i == 0 ? a : b, &own);
    if (!st) st = bin(g, WEFT_ELEMWISE_EQ, y, i == 0 ? b : a, &other);
    if (!st) st = scal(g, WEFT_ELEMWISE_MUL, gz, 0.5, &half);
    if (!st) st = weft__got(g, t = weft_switch_at(g, other, half, gz, HERE));
    return st ? st : masked(g, own, t, false, o);
}

/* gz * d y / d in_i for the binary kinds (a, b the inputs, y the output). */
static weft_status_t binary_partial(weft_graph_t *g, weft_elemwise_kind_t k, size_t i,
                                    weft_var_t *a, weft_var_t *b, weft_var_t *y, weft_var_t *gz,
                                    weft_var_t **o)
{
    weft_var_t *t = NULL, *u = NULL, *c = NULL;
    weft_status_t st = WEFT_OK;
    switch (k) {
    case WEFT_ELEMWISE_ADD: *o = gz; return WEFT_OK;
    case WEFT_ELEMWISE_SUB:
        if (i == 0) { *o = gz; return WEFT_OK; }
        return un(g, WEFT_ELEMWISE_NEG, gz, o);
    case WEFT_ELEMWISE_MUL: return bin(g, WEFT_ELEMWISE_MUL, gz, i == 0 ? b : a, o);
    case WEFT_ELEMWISE_DIV: /* gz / b ; -gz y / b */
        if (i == 0) return bin(g, WEFT_ELEMWISE_DIV, gz, b, o);
        if (!(st = bin(g, WEFT_ELEMWISE_MUL, gz, y, &t)) &&
            !(st = bin(g, WEFT_ELEMWISE_DIV, t, b, &u)))
            st = un(g, WEFT_ELEMWISE_NEG, u, o);
        return st;
    case WEFT_ELEMWISE_POW: /* gz b a^(b-1) ; gz y log a */
        if (i == 0) {
            if (!(st = scal(g, WEFT_ELEMWISE_SUB, b, 1.0, &c)) &&
                !(st = bin(g, WEFT_ELEMWISE_POW, a, c, &t)))
                st = bin(g, WEFT_ELEMWISE_MUL, b, t, &u);
        } else if (!(st = un(g, WEFT_ELEMWISE_LOG, a, &t))) {
            st = bin(g, WEFT_ELEMWISE_MUL, y, t, &u);
        }
        return st ? st : bin(g, WEFT_ELEMWISE_MUL, gz, u, o);
    case WEFT_ELEMWISE_MAXIMUM:
    case WEFT_ELEMWISE_MINIMUM: return extreme_partial(g, i, a, b, y, gz, o);
    case WEFT_ELEMWISE_SECOND: *o = i == 1 ? gz : NULL; return WEFT_OK;
    default: *o = NULL; return WEFT_OK; /* comparisons */
    }
}

/* ---- rounding, integer, logical (issue 17) ---- */

/* Zeros of x's type: the gradient of a step function (PyTensor's, and a
 * connected one: weft_grad through Floor gives zeros, not an error). */
static weft_status_t zero_partial(weft_graph_t *g, weft_var_t *x, weft_var_t **o)
{
    return weft__got(g, *o = weft_zeros_like_at(g, x, HERE));
}

/* Clip(x, lo, hi), PyTensor's rule: x gets gz where lo <= x <= hi (both
 * bounds included), lo where x < lo, hi where x > hi. */
static weft_status_t clip_partial(weft_graph_t *g, size_t i, const weft_apply_t *node,
                                  weft_var_t *gz, weft_var_t **o)
{
    weft_var_t *x = weft_apply_input(node, 0), *lo = weft_apply_input(node, 1);
    weft_var_t *hi = weft_apply_input(node, 2), *c = NULL, *u = NULL, *v = NULL;
    weft_status_t st;
    if (i == 0 && !(st = bin(g, WEFT_ELEMWISE_GE, x, lo, &u)) &&
        !(st = bin(g, WEFT_ELEMWISE_LE, x, hi, &v)))
        st = bin(g, WEFT_ELEMWISE_LOGICAL_AND, u, v, &c);
    else if (i != 0)
        st = bin(g, i == 1 ? WEFT_ELEMWISE_LT : WEFT_ELEMWISE_GT, x, i == 1 ? lo : hi, &c);
    return st ? st : masked(g, c, gz, false, o);
}

/* Mod: gz, -floor_divide(a, b) gz; Fmod: gz, -trunc(a / b) gz (a - q b with
 * q piecewise constant); FloorDivide and the rounding kinds: zeros. Returns
 * false for the kinds not handled here. */
static bool int_partial(weft_graph_t *g, weft_elemwise_kind_t k, size_t i,
                        const weft_apply_t *node, weft_var_t *gz, weft_var_t **o,
                        weft_status_t *st)
{
    weft_var_t *a = weft_apply_input(node, 0), *b = NULL, *q = NULL, *t = NULL;
    switch (k) {
    case WEFT_ELEMWISE_FLOOR: case WEFT_ELEMWISE_CEIL: case WEFT_ELEMWISE_TRUNC:
    case WEFT_ELEMWISE_ROUND: case WEFT_ELEMWISE_RINT: case WEFT_ELEMWISE_SGN:
    case WEFT_ELEMWISE_FLOOR_DIVIDE:
        *st = zero_partial(g, weft_apply_input(node, i), o);
        return true;
    case WEFT_ELEMWISE_CLIP: *st = clip_partial(g, i, node, gz, o); return true;
    case WEFT_ELEMWISE_NAN_TO_NUM: /* 1 where x is finite (kept), else 0 (replaced) */
        *st = un(g, WEFT_ELEMWISE_ISFINITE, a, &t);
        if (!*st) *st = masked(g, t, gz, false, o);
        return true;
    case WEFT_ELEMWISE_MOD:
    case WEFT_ELEMWISE_FMOD:
        *o = gz;
        *st = WEFT_OK;
        if (i == 0) return true;
        b = weft_apply_input(node, 1);
        if (k == WEFT_ELEMWISE_MOD) *st = bin(g, WEFT_ELEMWISE_FLOOR_DIVIDE, a, b, &q);
        else if (!(*st = bin(g, WEFT_ELEMWISE_DIV, a, b, &t)))
            *st = un(g, WEFT_ELEMWISE_TRUNC, t, &q);
        if (!*st && !(*st = bin(g, WEFT_ELEMWISE_MUL, q, gz, &t)))
            *st = un(g, WEFT_ELEMWISE_NEG, t, o);
        return true;
    default: return false; /* the others: unary_partial / binary_partial; the bool or
                             * integer-valued kinds never get here (float_out) */
    }
}

/* ---- the float math kinds (issue 17) -------------------------------------------------- */

#define LN2 0.69314718055994530942
#define LN10 2.30258509299404568402
#define TWO_OVER_SQRT_PI 1.12837916709551257390
#define SQRT_PI_OVER_2 0.88622692545275801365

/* c - x^2 (neg) or x^2 + c. */
static weft_status_t quad(weft_graph_t *g, weft_var_t *x, double c, bool neg, weft_var_t **o)
{
    weft_var_t *x2 = NULL;
    weft_status_t st = un(g, WEFT_ELEMWISE_SQR, x, &x2);
    if (st) return st;
    if (neg) return weft__got(g, *o = weft_scalar_binary_at(g, WEFT_ELEMWISE_SUB, c, x2, HERE));
    return scal(g, WEFT_ELEMWISE_ADD, x2, c, o);
}

/* sqrt(c - x^2) or sqrt(x^2 + c) */
static weft_status_t quad_sqrt(weft_graph_t *g, weft_var_t *x, double c, bool neg,
                               weft_var_t **o)
{
    weft_var_t *q = NULL;
    weft_status_t st = quad(g, x, c, neg, &q);
    return st ? st : un(g, WEFT_ELEMWISE_SQRT, q, o);
}

/* k * exp(s v^2), s = +-1 (erf and erfc: -x^2; erfinv: +y^2). */
static weft_status_t gauss(weft_graph_t *g, weft_var_t *v, bool neg, double k, weft_var_t **o)
{
    weft_var_t *v2 = NULL, *e = NULL, *n = NULL;
    weft_status_t st = un(g, WEFT_ELEMWISE_SQR, v, &v2);
    if (!st && neg) st = un(g, WEFT_ELEMWISE_NEG, v2, &n);
    if (!st) st = un(g, WEFT_ELEMWISE_EXP, neg ? n : v2, &e);
    return st ? st : scal(g, WEFT_ELEMWISE_MUL, e, k, o);
}

/* The derivative of unary kind k as t, with *divide set when it is 1/t. */
static weft_status_t math_unary_factor(weft_graph_t *g, weft_elemwise_kind_t k, weft_var_t *x,
                                       weft_var_t *y, weft_var_t **t, bool *divide)
{
    *divide = true;
    switch (k) {
    case WEFT_ELEMWISE_ARCSIN:
    case WEFT_ELEMWISE_ARCCOS: return quad_sqrt(g, x, 1.0, true, t);
    case WEFT_ELEMWISE_ARCTAN: return quad(g, x, 1.0, false, t);
    case WEFT_ELEMWISE_ARCSINH: return quad_sqrt(g, x, 1.0, false, t);
    case WEFT_ELEMWISE_ARCCOSH: return quad_sqrt(g, x, -1.0, false, t);
    case WEFT_ELEMWISE_ARCTANH: return quad(g, x, 1.0, true, t);
    case WEFT_ELEMWISE_LOG2: return scal(g, WEFT_ELEMWISE_MUL, x, LN2, t);
    case WEFT_ELEMWISE_LOG10: return scal(g, WEFT_ELEMWISE_MUL, x, LN10, t);
    default: break;
    }
    *divide = false;
    switch (k) {
    case WEFT_ELEMWISE_TAN: return quad(g, y, 1.0, false, t);
    case WEFT_ELEMWISE_SINH: return un(g, WEFT_ELEMWISE_COSH, x, t);
    case WEFT_ELEMWISE_COSH: return un(g, WEFT_ELEMWISE_SINH, x, t);
    case WEFT_ELEMWISE_EXP2: return scal(g, WEFT_ELEMWISE_MUL, y, LN2, t);
    case WEFT_ELEMWISE_EXPM1: return scal(g, WEFT_ELEMWISE_ADD, y, 1.0, t);
    case WEFT_ELEMWISE_ERF: return gauss(g, x, true, TWO_OVER_SQRT_PI, t);
    case WEFT_ELEMWISE_ERFC: return gauss(g, x, true, -TWO_OVER_SQRT_PI, t);
    case WEFT_ELEMWISE_ERFINV: return gauss(g, y, false, SQRT_PI_OVER_2, t);
    case WEFT_ELEMWISE_GAMMALN: return un(g, WEFT_ELEMWISE_DIGAMMA, x, t);
    case WEFT_ELEMWISE_DIGAMMA: return un(g, WEFT_ELEMWISE_TRIGAMMA, x, t);
    case WEFT_ELEMWISE_TRIGAMMA: /* polygamma(2, x) */
        return weft__got(g, *t = weft_binary_at(g, WEFT_ELEMWISE_POLYGAMMA,
                                                weft_constant_scalar_at(g, WEFT_INT64, 2.0, HERE),
                                                x, HERE));
    default:
        return weft_graph_set_error(g, WEFT_ENOTIMPL, "%s has no gradient",
                                    weft_elemwise_name(k));
    }
}

/* Arctan2(a, b) = atan2(a, b): gz b / (a^2 + b^2) ; -gz a / (a^2 + b^2).
 * Hypot: gz a / y ; gz b / y. Copysign(a, b) = |a| sign(b): gz where the
 * signs of a and b agree, -gz where they differ. Nextafter(a, b) is a moved
 * by one ulp: gz for a. b, only a sign (Copysign) or a direction (Nextafter),
 * gets none (disconnected: zero almost everywhere). */
static weft_status_t math_binary_partial(weft_graph_t *g, weft_elemwise_kind_t k, size_t i,
                                         weft_var_t *a, weft_var_t *b, weft_var_t *y,
                                         weft_var_t *gz, weft_var_t **o)
{
    weft_var_t *t = NULL, *u = NULL, *v = NULL, *one = NULL;
    weft_status_t st = WEFT_OK;
    switch (k) {
    case WEFT_ELEMWISE_ARCTAN2:
        if (!(st = un(g, WEFT_ELEMWISE_SQR, a, &t)) && !(st = un(g, WEFT_ELEMWISE_SQR, b, &u)) &&
            !(st = bin(g, WEFT_ELEMWISE_ADD, t, u, &v)) &&
            !(st = bin(g, WEFT_ELEMWISE_MUL, gz, i == 0 ? b : a, &t)) &&
            !(st = bin(g, WEFT_ELEMWISE_DIV, t, v, &u)))
            return i == 0 ? (*o = u, WEFT_OK) : un(g, WEFT_ELEMWISE_NEG, u, o);
        return st;
    case WEFT_ELEMWISE_HYPOT:
        if (!(st = bin(g, WEFT_ELEMWISE_MUL, gz, i == 0 ? a : b, &t)))
            st = bin(g, WEFT_ELEMWISE_DIV, t, y, o);
        return st;
    case WEFT_ELEMWISE_COPYSIGN:
        if (i == 1) break;
        if (!(st = konst(g, a, 1.0, &one)) && !(st = bin(g, WEFT_ELEMWISE_COPYSIGN, one, a, &t)) &&
            !(st = bin(g, WEFT_ELEMWISE_COPYSIGN, one, b, &u)) &&
            !(st = bin(g, WEFT_ELEMWISE_MUL, t, u, &v)))
            st = bin(g, WEFT_ELEMWISE_MUL, gz, v, o);
        return st;
    case WEFT_ELEMWISE_NEXTAFTER:
        *o = i == 0 ? gz : NULL; /* a plus one ulp: slope 1 almost everywhere */
        return WEFT_OK;
    default: break;
    }
    *o = NULL;
    return WEFT_OK;
}

/* gz * d y / d in_i for the float math kinds. */
static weft_status_t math_partial(weft_graph_t *g, weft_elemwise_kind_t k, size_t i,
                                  const weft_apply_t *node, weft_var_t *gz, weft_var_t **o)
{
    weft_var_t *x = weft_apply_input(node, 0), *y = weft_apply_output(node, 0), *t = NULL;
    if (k == WEFT_ELEMWISE_POLYGAMMA) return weft__polygamma_partial(g, i, node, gz, o);
    if (weft_elemwise_arity(k) == 2)
        return math_binary_partial(g, k, i, x, weft_apply_input(node, 1), y, gz, o);
    bool divide = false;
    weft_status_t st = math_unary_factor(g, k, x, y, &t, &divide);
    if (!st) st = bin(g, divide ? WEFT_ELEMWISE_DIV : WEFT_ELEMWISE_MUL, gz, t, o);
    if (!st && k == WEFT_ELEMWISE_ARCCOS) st = un(g, WEFT_ELEMWISE_NEG, *o, o);
    return st;
}

weft_status_t weft__elemwise_grad(weft_graph_t *g, const weft_apply_t *node,
                                  weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    weft_elemwise_kind_t k = WEFT_ELEMWISE_NEG;
    weft_elemwise_op_info(weft_apply_op(node), &k, NULL);
    if (weft__ew_complex_grad_applies(node)) /* elemwise_complex_grad.c */
        return weft__ew_complex_grad(g, node, output_grads, input_grads);
    size_t n = weft_elemwise_arity(k);
    weft_var_t *gz = output_grads[0], *y = weft_apply_output(node, 0);
    bool float_out = weft__dtype_is_float(weft_type_dtype(weft_var_type(y)));
    for (size_t i = 0; i < n; i++) {
        input_grads[i] = NULL;
        weft_var_t *x = weft_apply_input(node, i), *p = NULL;
        if (!gz || !float_out || !weft__dtype_is_float(weft_type_dtype(weft_var_type(x))))
            continue;
        weft_status_t st;
        if (k == WEFT_ELEMWISE_SWITCH)
            st = i == 0 ? WEFT_OK : masked(g, weft_apply_input(node, 0), gz, i == 2, &p);
        else if (int_partial(g, k, i, node, gz, &p, &st))
            (void)0; /* a kind of the block above */
        else if (weft__elemwise_is_math(k))
            st = math_partial(g, k, i, node, gz, &p);
        else if (n == 1)
            st = unary_partial(g, k, x, y, gz, &p);
        else
            st = binary_partial(g, k, i, weft_apply_input(node, 0), weft_apply_input(node, 1), y,
                                gz, &p);
        if (st == WEFT_OK && p) st = weft__grad_reduce_to(g, p, x, &input_grads[i]);
        if (st != WEFT_OK) return st;
    }
    return WEFT_OK;
}
