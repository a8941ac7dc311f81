/* Gradients of the elementwise ops, built from the public constructors, and
 * the shared "reduce a broadcast gradient back to its input" helper (through
 * the internal SumAxes op, sum_axes.c).
 *
 * For input i the hook computes the partial gradient in the output's dtype
 * and shape, then weft__grad_reduce_to sums it over the axes input i was
 * broadcast along (static length 1 in the input, not 1 in the output) and
 * casts it to input i's dtype. bool/integer inputs get no gradient (NULL:
 * disconnected), like comparisons, Sgn and the Switch condition. */
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

weft_status_t weft__grad_undefined(weft_graph_t *g, const weft_apply_t *node, weft_var_t **out)
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
