/* Built-in algebraic simplifications (docs/rewrites.md §4-5), each a node
 * rewrite function. Every replacement keeps the old output's dtype and static
 * shape (weft__can_replace); a rewrite whose result would have another type
 * either builds a broadcast (Second) that has the right one or does not fire.
 * The table at the end names them for the database. */
#include <string.h>

#include "graph/ctor_int.h"
#include "rewrite_int.h"
#include "weft/elemwise.h"
#include "weft/op_info.h"
#include "weft/shape_ops.h"

static weft_var_t *in(const weft_apply_t *n, size_t i)
{
    return weft_apply_input(n, i);
}
static weft_var_t *out0(const weft_apply_t *n)
{
    return weft_apply_output(n, 0);
}

/* Records node -> v when v may replace the output. */
static weft_status_t give(weft_rewrite_result_t *res, const weft_apply_t *node, weft_var_t *v)
{
    if (!weft__can_replace(out0(node), v)) return WEFT_OK;
    return weft_rewrite_result_replace(res, out0(node), v);
}

static bool is_kind(const weft_apply_t *node, int kind)
{
    int k;
    return weft__ew_kind(node, &k) && k == kind;
}

/* x + 0, 0 + x -> x; x * 1, 1 * x -> x (identity element `unit`). */
static weft_status_t identity_elem(weft_apply_t *node, int kind, double unit,
                                   weft_rewrite_result_t *res)
{
    if (!is_kind(node, kind)) return WEFT_OK;
    for (size_t i = 0; i < 2; i++)
        if (weft__is_const_value(in(node, 1 - i), unit) &&
            weft__can_replace(out0(node), in(node, i)))
            return give(res, node, in(node, i));
    return WEFT_OK;
}

static weft_status_t local_add_zero(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                    weft_rewrite_result_t *res)
{
    (void)fg;
    (void)user;
    return identity_elem(node, WEFT_ELEMWISE_ADD, 0.0, res);
}

static weft_status_t local_mul_one(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                   weft_rewrite_result_t *res)
{
    (void)fg;
    (void)user;
    /* complex x * 1 is not x: (a + bi)(1 + 0i) has a - b*0 and a*0 + b,
     * NaN for an infinite part, +0 for a = -0 with b < 0 (docs/dtypes.md) */
    weft_dtype_t dt = weft_type_dtype(weft_var_type(out0(node)));
    if (weft_dtype_kind(dt) == WEFT_KIND_COMPLEX) return WEFT_OK;
    return identity_elem(node, WEFT_ELEMWISE_MUL, 1.0, res);
}

/* zeros of node's output type, shaped like x broadcast with z. */
static weft_status_t zeros_as(weft_fgraph_t *fg, weft_apply_t *node, weft_var_t *x, weft_var_t *z,
                              weft_rewrite_result_t *res)
{
    weft_graph_t *g = weft_fgraph_graph(fg);
    weft_var_t *zero = z, *r;
    weft_status_t st = WEFT_OK;
    if (!zero) st = weft__scalar(g, weft_type_dtype(weft_var_type(out0(node))), 0.0, &zero);
    if (st == WEFT_OK) st = weft__got(g, r = weft_second(g, x, zero));
    return st == WEFT_OK ? give(res, node, r) : st;
}

/* x * 0 -> 0 (the constant itself when it has the output's full type, else
 * Second(x, 0): the zeros broadcast to the output shape). NaN/Inf in x are
 * ignored, as in PyTensor. */
static weft_status_t local_mul_zero(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                    weft_rewrite_result_t *res)
{
    (void)user;
    if (!is_kind(node, WEFT_ELEMWISE_MUL)) return WEFT_OK;
    for (size_t i = 0; i < 2; i++) {
        weft_var_t *z = in(node, i), *x = in(node, 1 - i);
        if (!weft__is_const_value(z, 0.0)) continue;
        if (weft__can_replace(out0(node), z)) return give(res, node, z);
        return zeros_as(fg, node, x, z, res);
    }
    return WEFT_OK;
}

/* x - x -> zeros like x. */
static weft_status_t local_sub_self(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                    weft_rewrite_result_t *res)
{
    (void)user;
    if (!is_kind(node, WEFT_ELEMWISE_SUB) || in(node, 0) != in(node, 1)) return WEFT_OK;
    return zeros_as(fg, node, in(node, 0), NULL, res);
}

/* f(g(x)) -> x for the inverse pairs (neg, neg), (exp, log), (log, exp). */
static weft_status_t inverse_pair(weft_apply_t *node, int outer, int inner,
                                  weft_rewrite_result_t *res)
{
    if (!is_kind(node, outer)) return WEFT_OK;
    weft_apply_t *a = weft__ew_owner(in(node, 0), inner);
    return a ? give(res, node, in(a, 0)) : WEFT_OK;
}

static weft_status_t local_neg_neg(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                   weft_rewrite_result_t *res)
{
    (void)fg;
    (void)user;
    return inverse_pair(node, WEFT_ELEMWISE_NEG, WEFT_ELEMWISE_NEG, res);
}

static weft_status_t local_exp_log(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                   weft_rewrite_result_t *res)
{
    (void)fg;
    (void)user;
    return inverse_pair(node, WEFT_ELEMWISE_EXP, WEFT_ELEMWISE_LOG, res);
}

static weft_status_t local_log_exp(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                   weft_rewrite_result_t *res)
{
    (void)fg;
    (void)user;
    return inverse_pair(node, WEFT_ELEMWISE_LOG, WEFT_ELEMWISE_EXP, res);
}

/* Cast to the dtype x already has -> x. */
static weft_status_t local_useless_cast(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                        weft_rewrite_result_t *res)
{
    (void)fg;
    (void)user;
    if (!is_kind(node, WEFT_ELEMWISE_CAST)) return WEFT_OK;
    return give(res, node, in(node, 0));
}

/* DimShuffle(DimShuffle(x, inner), outer) -> DimShuffle(x, inner o outer), or
 * x when the composition (or a single DimShuffle) is the identity. */
static weft_status_t local_dimshuffle_dimshuffle(weft_fgraph_t *fg, weft_apply_t *node,
                                                 void *user, weft_rewrite_result_t *res)
{
    (void)user;
    int outer[WEFT_MAX_NDIM], inner[WEFT_MAX_NDIM], comp[WEFT_MAX_NDIM], no, ni;
    if (!weft__dimshuffle_order(weft_apply_op(node), outer, &no)) return WEFT_OK;
    weft_var_t *x = in(node, 0);
    weft_apply_t *a = weft_var_owner(x);
    bool nested = a && weft__dimshuffle_order(weft_apply_op(a), inner, &ni);
    if (nested) x = in(a, 0);
    for (int k = 0; k < no; k++)
        comp[k] = !nested || outer[k] == WEFT_DIMSHUFFLE_NEW ? outer[k] : inner[outer[k]];
    bool ident = no == weft_type_ndim(weft_var_type(x));
    for (int k = 0; ident && k < no; k++) ident = comp[k] == k;
    if (ident) return give(res, node, x);
    if (!nested) return WEFT_OK;
    weft_var_t *r;
    weft_status_t st =
        weft__got(weft_fgraph_graph(fg), r = weft_dimshuffle(weft_fgraph_graph(fg), x, no, comp));
    return st == WEFT_OK ? give(res, node, r) : st;
}

/* A sum over axes of static length 1 only is x itself (SumAxes keeps them)
 * or x with those axes dropped (Sum without keepdims): the "sum of a
 * broadcast". Axes come from weft/op_info.h. */
static bool sum_axes(const weft_op_t *op, bool is_sum_axes, unsigned *mask)
{
    int axes[WEFT_MAX_NDIM], n;
    weft_reduce_kind_t kind;
    bool keep;
    if (is_sum_axes ? weft_sum_axes_op_info(op, axes, &n) != WEFT_OK
                    : weft_reduce_op_info(op, &kind, axes, &n, &keep) != WEFT_OK ||
                          kind != WEFT_REDUCE_SUM)
        return false;
    *mask = 0;
    for (int k = 0; k < n; k++) *mask |= 1u << axes[k];
    return true;
}

static weft_status_t local_sum_broadcastable(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                             weft_rewrite_result_t *res)
{
    (void)user;
    const weft_op_t *op = weft_apply_op(node);
    const weft_op_class_t *cls = weft_op_class(op);
    bool is_sum_axes = cls == weft__classes()->sum_axes;
    if ((!is_sum_axes && cls != weft__classes()->sum) || weft_apply_n_inputs(node) != 1)
        return WEFT_OK;
    unsigned mask;
    weft_var_t *x = in(node, 0);
    const weft_type_t *xt = weft_var_type(x);
    int nd = weft_type_ndim(xt), order[WEFT_MAX_NDIM], n = 0;
    if (!sum_axes(op, is_sum_axes, &mask)) return WEFT_OK;
    for (int d = 0; d < nd; d++) {
        bool reduced = (mask >> d) & 1u;
        if (reduced && weft_type_dim(xt, d) != 1) return WEFT_OK;
        if (!reduced) order[n++] = d;
    }
    if (weft__can_replace(out0(node), x)) return give(res, node, x);
    if (is_sum_axes) return WEFT_OK;
    weft_var_t *r;
    weft_status_t st =
        weft__got(weft_fgraph_graph(fg), r = weft_dimshuffle(weft_fgraph_graph(fg), x, n, order));
    return st == WEFT_OK ? give(res, node, r) : st;
}

/* gz, scaled by 1/n for a Mean, with length-1 axes where the reduction
 * removed them: a value that broadcasts to ReduceGrad(x, gz)'s. */
static weft_status_t reduce_grad_operand(weft_graph_t *g, const weft_apply_t *rg,
                                         weft_reduce_kind_t kind, const int *axes, int n_axes,
                                         bool keepdims, weft_var_t **out)
{
    weft_var_t *x = in(rg, 0), *b = in(rg, 1);
    const weft_type_t *xt = weft_var_type(x);
    weft_status_t st = WEFT_OK;
    if (kind == WEFT_REDUCE_MEAN) { /* as the kernel: g * (1.0 / n), in double */
        double n = 1;
        for (int k = 0; k < n_axes; k++) n *= (double)weft_type_dim(xt, axes[k]);
        weft_var_t *scale;
        st = weft__scalar(g, WEFT_FLOAT64, 1.0 / n, &scale);
        if (st == WEFT_OK) st = weft__got(g, b = weft_mul(g, b, scale));
    }
    int nd = weft_type_ndim(xt), order[WEFT_MAX_NDIM], next = 0, k = 0;
    for (int d = 0; d < nd; d++) {
        bool reduced = k < n_axes && axes[k] == d;
        k += reduced;
        order[d] = reduced ? WEFT_DIMSHUFFLE_NEW : next++;
    }
    if (st == WEFT_OK && !keepdims) st = weft__got(g, b = weft_dimshuffle(g, b, nd, order));
    if (st == WEFT_OK) *out = b;
    return st;
}

/* Which reductions' gradients sink: Sum, and Mean over float64 axes of
 * static length (its scale is then a constant computed like the kernel's). */
static bool sinkable(const weft_apply_t *rg, weft_reduce_kind_t kind, const int *axes, int n)
{
    const weft_type_t *xt = weft_var_type(in(rg, 0));
    if (kind == WEFT_REDUCE_SUM) return true;
    if (kind != WEFT_REDUCE_MEAN || weft_type_dtype(xt) != WEFT_FLOAT64) return false;
    for (int k = 0; k < n; k++)
        if (weft_type_dim(xt, axes[k]) < 0) return false;
    return true;
}

/* N(u, v), N one of Mul, Add, Sub, Div, with u = ReduceGrad{Sum|Mean}(x, gz) read by
 * N alone and v of N's output type: u is gz (scaled by 1/n for a Mean)
 * broadcast over x, and v already gives N that shape, so N takes gz as a
 * broadcasting operand and the full-size fill is never written (PyTensor's
 * fill sinking; the loss gradient of a mean-squared error). */
static weft_status_t local_reduce_grad_sink(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                            weft_rewrite_result_t *res)
{
    (void)user;
    int kind;
    if (!weft__ew_kind(node, &kind) || weft_apply_n_inputs(node) != 2) return WEFT_OK;
    for (size_t i = 0; i < 2; i++) {
        weft_var_t *u = in(node, i), *v = in(node, 1 - i), *b, *r;
        weft_apply_t *rg = weft_var_owner(u);
        weft_reduce_kind_t rk;
        int axes[WEFT_MAX_NDIM], n_axes;
        bool keepdims;
        if (!rg || weft_op_class(weft_apply_op(rg)) != weft__classes()->reduce_grad ||
            weft_fgraph_n_clients(fg, u) != 1 ||
            !weft_type_equal(weft_var_type(v), weft_var_type(out0(node))) ||
            weft_reduce_grad_op_info(weft_apply_op(rg), &rk, axes, &n_axes, &keepdims) != WEFT_OK ||
            !sinkable(rg, rk, axes, n_axes))
            continue;
        weft_graph_t *g = weft_fgraph_graph(fg);
        weft_status_t st = reduce_grad_operand(g, rg, rk, axes, n_axes, keepdims, &b);
        if (st == WEFT_OK)
            st = weft__got(
                g, r = weft_binary(g, (weft_elemwise_kind_t)kind, i == 0 ? b : v, i == 0 ? v : b));
        return st == WEFT_OK ? give(res, node, r) : st;
    }
    return WEFT_OK;
}

const weft__builtin_node_t weft__builtin_nodes[] = {
    {"local_add_zero", local_add_zero, {"Add", NULL}},
    {"local_mul_one", local_mul_one, {"Mul", NULL}},
    {"local_neg_neg", local_neg_neg, {"Neg", NULL}},
    {"local_useless_cast", local_useless_cast, {"Cast", NULL}},
    {"local_mul_zero", local_mul_zero, {"Mul", NULL}},
    {"local_sub_self", local_sub_self, {"Sub", NULL}},
    {"local_exp_log", local_exp_log, {"Exp", NULL}},
    {"local_log_exp", local_log_exp, {"Log", NULL}},
    {"local_dimshuffle_dimshuffle", local_dimshuffle_dimshuffle, {"DimShuffle", NULL}},
    {"local_sum_broadcastable", local_sum_broadcastable, {"Sum", "SumAxes", NULL}},
    {"local_reduce_grad_sink", local_reduce_grad_sink, {"Mul", "Add", "Sub", "Div"}},
    {"local_gemm", weft__local_gemm, {"Add", "Sub", NULL}},
    {"local_einsum_lower", weft__local_einsum_lower, {"Einsum", NULL}},
    {"local_elemwise_fusion", weft__local_elemwise_fusion, {NULL}}, /* every elementwise class */
};
const size_t weft__n_builtin_nodes = sizeof weft__builtin_nodes / sizeof weft__builtin_nodes[0];
