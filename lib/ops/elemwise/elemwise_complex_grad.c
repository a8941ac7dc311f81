/* Gradients of elementwise nodes that touch complex numbers (docs/dtypes.md,
 * "Complex numbers"). weft differentiates real costs; through complex
 * intermediates it follows PyTensor's convention: the gradient of a real
 * cost C with respect to a complex z is dC/d re(z) + i dC/d im(z). So:
 *   Real(x): complex(gz, 0); Imag(x): complex(0, gz) (a real x: zeros);
 *   Complex(x, y): real(gz), imag(gz); Conj(x): conj(gz);
 *   Abs(x), x complex: gz x / |x| (NaN at 0, as PyTensor); Angle(x), x
 *   complex: gz (-im(x) + i re(x)) / |x|^2 (PyTensor's), a real x: zeros;
 *   Add, Sub, Neg: gz, -gz as for reals; Mul(a, b): gz conj(b), gz conj(a)
 *   (PyTensor's Mul); Second, Switch branches, Cast: as for reals;
 * and every input's partial is summed over broadcast axes and cast to the
 * input's dtype (complex to real keeps the real part: d C / d x for a real
 * x feeding a complex node). The holomorphic kinds (Exp, Log, Sqrt, Sqr,
 * Sin, Cos, Tanh, Div, Pow) send gz conj(f'(z)) per input, f' the complex
 * derivative: the same convention, since for w = f(z) holomorphic
 * dC/d re(z) + i dC/d im(z) = conj(f'(z)) (dC/d re(w) + i dC/d im(w)).
 * Every other kind on complex numbers has no gradient here: its inputs get
 * the null type, so weft_grad fails with WEFT_ENOGRAD naming the node (or a
 * zero with WEFT_GRAD_MISSING_ZERO). Comparisons: none, as for reals. */
#include "graph/ctor_int.h"
#include "ops_int.h"

#define HERE __FILE__, __LINE__

static bool var_is_complex(const weft_var_t *v)
{
    return weft_dtype_kind(weft_type_dtype(weft_var_type(v))) == WEFT_KIND_COMPLEX;
}

bool weft__ew_complex_grad_applies(const weft_apply_t *node)
{
    weft_elemwise_kind_t k = WEFT_ELEMWISE_NEG;
    weft_elemwise_op_info(weft_apply_op(node), &k, NULL);
    if (weft__ew_kind_is_complex_family(k) || var_is_complex(weft_apply_output(node, 0)))
        return true;
    for (size_t i = 0; i < weft_apply_n_inputs(node); i++)
        if (var_is_complex(weft_apply_input(node, i))) return true;
    return false;
}

/* complex(v, 0) (v_is_re) or complex(0, v). */
static weft_var_t *with_zero(weft_graph_t *g, weft_var_t *v, bool v_is_re)
{
    weft_var_t *z = weft_zeros_like_at(g, v, HERE);
    return v_is_re ? weft_binary_at(g, WEFT_ELEMWISE_COMPLEX, v, z, HERE)
                   : weft_binary_at(g, WEFT_ELEMWISE_COMPLEX, z, v, HERE);
}

/* v in the dtype d (a real operand of a complex node: its complex value, so
 * Log and Pow take the complex branch, log(-2) = log 2 + i pi). */
static weft_var_t *as_dtype(weft_graph_t *g, weft_var_t *v, weft_dtype_t d)
{
    if (!v || weft_type_dtype(weft_var_type(v)) == d) return v;
    return weft_cast_at(g, v, d, HERE);
}

/* f'(z) of the holomorphic unary kinds (x the input, y the output), or its
 * reciprocal when *divide (Log: x, Sqrt: 2 y). */
static weft_var_t *holo_unary(weft_graph_t *g, weft_elemwise_kind_t k, weft_var_t *x,
                              weft_var_t *y, bool *divide)
{
    *divide = k == WEFT_ELEMWISE_LOG || k == WEFT_ELEMWISE_SQRT;
    switch (k) {
    case WEFT_ELEMWISE_EXP: return y;
    case WEFT_ELEMWISE_LOG: return x;
    case WEFT_ELEMWISE_SQRT: return weft_binary_scalar_at(g, WEFT_ELEMWISE_MUL, y, 2.0, HERE);
    case WEFT_ELEMWISE_SQR: return weft_binary_scalar_at(g, WEFT_ELEMWISE_MUL, x, 2.0, HERE);
    case WEFT_ELEMWISE_TANH: /* 1 - y^2 */
        return weft_scalar_binary_at(g, WEFT_ELEMWISE_SUB, 1.0,
                                     weft_unary_at(g, WEFT_ELEMWISE_SQR, y, HERE), HERE);
    case WEFT_ELEMWISE_SIN: return weft_unary_at(g, WEFT_ELEMWISE_COS, x, HERE);
    default: /* Cos: -sin x */
        return weft_unary_at(g, WEFT_ELEMWISE_NEG, weft_unary_at(g, WEFT_ELEMWISE_SIN, x, HERE),
                             HERE);
    }
}

/* d y / d in_i of Div(a, b) and Pow(a, b), operands in y's dtype d (or its
 * reciprocal when *divide): Div 1 / b, -y / b; Pow b a^(b-1), y log a. */
static weft_var_t *holo_binary(weft_graph_t *g, weft_elemwise_kind_t k, size_t i,
                               const weft_apply_t *node, bool *divide)
{
    weft_var_t *y = weft_apply_output(node, 0);
    weft_dtype_t d = weft_type_dtype(weft_var_type(y));
    weft_var_t *a = as_dtype(g, weft_apply_input(node, 0), d);
    weft_var_t *b = as_dtype(g, weft_apply_input(node, 1), d);
    *divide = k == WEFT_ELEMWISE_DIV && i == 0;
    if (k == WEFT_ELEMWISE_DIV)
        return i == 0 ? b
                      : weft_unary_at(g, WEFT_ELEMWISE_NEG,
                                      weft_binary_at(g, WEFT_ELEMWISE_DIV, y, b, HERE), HERE);
    if (i == 1)
        return weft_binary_at(g, WEFT_ELEMWISE_MUL, y, weft_unary_at(g, WEFT_ELEMWISE_LOG, a, HERE),
                              HERE);
    weft_var_t *c = weft_binary_scalar_at(g, WEFT_ELEMWISE_SUB, b, 1.0, HERE);
    return weft_binary_at(g, WEFT_ELEMWISE_MUL, b, weft_binary_at(g, WEFT_ELEMWISE_POW, a, c, HERE),
                          HERE);
}

/* gz conj(f') (or gz / conj(1/f') when divide) for input i of a holomorphic
 * kind. */
static weft_var_t *holo_partial(weft_graph_t *g, const weft_apply_t *node,
                                weft_elemwise_kind_t k, size_t i, weft_var_t *gz)
{
    bool divide = false;
    weft_var_t *d = weft_elemwise_arity(k) == 2
                        ? holo_binary(g, k, i, node, &divide)
                        : holo_unary(g, k, weft_apply_input(node, 0), weft_apply_output(node, 0),
                                     &divide);
    return weft_binary_at(g, divide ? WEFT_ELEMWISE_DIV : WEFT_ELEMWISE_MUL, gz,
                          weft_unary_at(g, WEFT_ELEMWISE_CONJ, d, HERE), HERE);
}

/* The partial of input i before broadcasting and casting (NULL: none, as
 * for comparisons); *none: the kind has no gradient here (undefined). A
 * constructor's failure gives NULL too: the caller tells them apart by
 * weft__got. */
static weft_var_t *partial(weft_graph_t *g, const weft_apply_t *node, weft_elemwise_kind_t k,
                           size_t i, weft_var_t *gz, bool *none)
{
    weft_var_t *x = weft_apply_input(node, i), *y = weft_apply_output(node, 0);
    bool cx = var_is_complex(x);
    switch (k) {
    case WEFT_ELEMWISE_REAL: return cx ? with_zero(g, gz, true) : gz;
    case WEFT_ELEMWISE_IMAG: return cx ? with_zero(g, gz, false) : weft_zeros_like_at(g, gz, HERE);
    case WEFT_ELEMWISE_CONJ: return cx ? weft_unary_at(g, WEFT_ELEMWISE_CONJ, gz, HERE) : gz;
    case WEFT_ELEMWISE_COMPLEX:
        return weft_unary_at(g, i == 0 ? WEFT_ELEMWISE_REAL : WEFT_ELEMWISE_IMAG, gz, HERE);
    case WEFT_ELEMWISE_ANGLE: { /* complex x: gz (-im + i re) / |x|^2; real x: 0 a.e. */
        if (!cx) return weft_zeros_like_at(g, gz, HERE);
        weft_var_t *iz = weft_binary_at(g, WEFT_ELEMWISE_COMPLEX,
                                        weft_unary_at(g, WEFT_ELEMWISE_NEG,
                                                      weft_unary_at(g, WEFT_ELEMWISE_IMAG, x,
                                                                    HERE),
                                                      HERE),
                                        weft_unary_at(g, WEFT_ELEMWISE_REAL, x, HERE), HERE);
        weft_var_t *r2 = weft_unary_at(g, WEFT_ELEMWISE_SQR,
                                       weft_unary_at(g, WEFT_ELEMWISE_ABS, x, HERE), HERE);
        return weft_binary_at(g, WEFT_ELEMWISE_MUL, gz,
                              weft_binary_at(g, WEFT_ELEMWISE_DIV, iz, r2, HERE), HERE);
    }
    case WEFT_ELEMWISE_ABS: /* gz x / |x| */
        return weft_binary_at(g, WEFT_ELEMWISE_MUL, gz,
                              weft_binary_at(g, WEFT_ELEMWISE_DIV, x, y, HERE), HERE);
    case WEFT_ELEMWISE_ADD: return gz;
    case WEFT_ELEMWISE_SUB: return i == 0 ? gz : weft_unary_at(g, WEFT_ELEMWISE_NEG, gz, HERE);
    case WEFT_ELEMWISE_NEG: return weft_unary_at(g, WEFT_ELEMWISE_NEG, gz, HERE);
    case WEFT_ELEMWISE_MUL:
        return weft_binary_at(g, WEFT_ELEMWISE_MUL, gz,
                              weft_unary_at(g, WEFT_ELEMWISE_CONJ,
                                            weft_apply_input(node, 1 - i), HERE),
                              HERE);
    case WEFT_ELEMWISE_EXP: case WEFT_ELEMWISE_LOG: case WEFT_ELEMWISE_SQRT:
    case WEFT_ELEMWISE_SQR: case WEFT_ELEMWISE_TANH: case WEFT_ELEMWISE_SIN:
    case WEFT_ELEMWISE_COS: case WEFT_ELEMWISE_DIV: case WEFT_ELEMWISE_POW:
        return holo_partial(g, node, k, i, gz);
    case WEFT_ELEMWISE_CAST: return gz; /* cast back to x's dtype below */
    case WEFT_ELEMWISE_SECOND: return i == 1 ? gz : NULL;
    case WEFT_ELEMWISE_SWITCH: {
        if (i == 0) return NULL;
        weft_var_t *zero = weft_zeros_like_at(g, gz, HERE), *c = weft_apply_input(node, 0);
        return i == 1 ? weft_switch_at(g, c, gz, zero, HERE) : weft_switch_at(g, c, zero, gz, HERE);
    }
    case WEFT_ELEMWISE_EQ: case WEFT_ELEMWISE_NE: return NULL;
    default: *none = true; return NULL;
    }
}

/* Kinds whose partial may legitimately be NULL for input i. */
static bool may_be_none(weft_elemwise_kind_t k, size_t i)
{
    return k == WEFT_ELEMWISE_EQ || k == WEFT_ELEMWISE_NE ||
           (k == WEFT_ELEMWISE_SECOND && i == 0) || (k == WEFT_ELEMWISE_SWITCH && i == 0);
}

weft_status_t weft__ew_complex_grad(weft_graph_t *g, const weft_apply_t *node,
                                    weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    weft_elemwise_kind_t k = WEFT_ELEMWISE_NEG;
    weft_elemwise_op_info(weft_apply_op(node), &k, NULL);
    weft_var_t *gz = output_grads[0];
    for (size_t i = 0; i < weft_apply_n_inputs(node); i++) {
        input_grads[i] = NULL;
        weft_var_t *x = weft_apply_input(node, i);
        int kind = weft_dtype_kind(weft_type_dtype(weft_var_type(x)));
        if (!gz || (kind != WEFT_KIND_FLOAT && kind != WEFT_KIND_COMPLEX)) continue;
        bool none = false;
        weft_var_t *p = partial(g, node, k, i, gz, &none);
        weft_status_t st = WEFT_OK;
        if (none)
            st = weft__grad_null(g, node, &input_grads[i]);
        else if (p)
            st = weft__grad_reduce_to(g, p, x, &input_grads[i]);
        else if (!may_be_none(k, i))
            st = weft__ctor_status(g); /* a constructor failed */
        if (st != WEFT_OK) return st;
    }
    return WEFT_OK;
}
