/* local_gemm (specialize): z + dot(x, y) -> Gemm(z, 1, x, y, 1), folding a
 * scalar factor into alpha: z + s*dot(x, y) -> Gemm(z, s, x, y, 1) and
 * z - s*dot(x, y) -> Gemm(z, -s, x, y, 1). z may be a bias row (1,n) or
 * column (m,1) that the addition broadcasts: the copying Gemm broadcasts it
 * into its output before the product accumulates there, which saves the
 * separate elementwise pass over the m x n result (a dense layer's
 * dot(x, W) + b becomes one node). Only when the product (and the scaling)
 * has no other client (else the matmul would be computed twice), x and y are
 * matrices, every operand has one dtype, the product cannot be the operand
 * that broadcasts (product_spans_output), and Gemm's output type may replace
 * the old output. Dot is recognized by its registry class. */
#include "graph/ctor_int.h"
#include "rewrite_int.h"
#include "weft/elemwise.h"
#include "weft/linalg.h"
#include "weft/shape_ops.h"

typedef struct gemm_match {
    weft_var_t *z, *x, *y, *s; /* s: scale (NULL: 1), any all-length-1 type */
    bool negate;
} gemm_match_t;

static bool is_matrix_dot(weft_fgraph_t *fg, const weft_var_t *v, weft_var_t **x, weft_var_t **y)
{
    weft_apply_t *a = weft_var_owner(v);
    if (!a || weft_op_class(weft_apply_op(a)) != weft__classes()->dot) return false;
    if (weft_fgraph_n_clients(fg, v) != 1 || weft_apply_n_inputs(a) != 2) return false;
    *x = weft_apply_input(a, 0);
    *y = weft_apply_input(a, 1);
    return weft_type_ndim(weft_var_type(*x)) == 2 && weft_type_ndim(weft_var_type(*y)) == 2;
}

static bool scalar_like(const weft_var_t *v)
{
    const weft_type_t *t = weft_var_type(v);
    for (int d = 0; d < weft_type_ndim(t); d++)
        if (weft_type_dim(t, d) != 1) return false;
    return true;
}

/* v = dot(x, y) or v = s * dot(x, y) / dot(x, y) * s. */
static bool match_product(weft_fgraph_t *fg, weft_var_t *v, gemm_match_t *m)
{
    m->s = NULL;
    if (is_matrix_dot(fg, v, &m->x, &m->y)) return true;
    weft_apply_t *mul = weft__ew_owner(v, WEFT_ELEMWISE_MUL);
    if (!mul || weft_fgraph_n_clients(fg, v) != 1) return false;
    for (size_t i = 0; i < 2; i++) {
        weft_var_t *s = weft_apply_input(mul, i);
        if (scalar_like(s) && is_matrix_dot(fg, weft_apply_input(mul, 1 - i), &m->x, &m->y)) {
            m->s = s;
            return true;
        }
    }
    return false;
}

/* alpha as a 0-d variable of dtype dt: the scale's value, negated if asked. */
static weft_status_t make_alpha(weft_graph_t *g, const gemm_match_t *m, weft_dtype_t dt,
                                weft_var_t **alpha)
{
    if (!m->s) return weft__scalar(g, dt, m->negate ? -1.0 : 1.0, alpha);
    if (weft_var_is_constant(m->s)) {
        const void *data;
        size_t nb;
        weft_status_t st = weft_constant_data(m->s, &data, &nb);
        if (st != WEFT_OK) return st;
        double v = weft_type_dtype(weft_var_type(m->s)) == WEFT_FLOAT32 ? *(const float *)data
                                                                        : *(const double *)data;
        return weft__scalar(g, dt, m->negate ? -v : v, alpha);
    }
    weft_var_t *s0;
    weft_status_t st =
        weft__got(g, s0 = weft_dimshuffle(g, m->s, 0, NULL)); /* drop the length-1 axes */
    if (st == WEFT_OK && m->negate) st = weft__got(g, s0 = weft_neg(g, s0));
    if (st == WEFT_OK) *alpha = s0;
    return st;
}

/* z is the addition's other operand: a matrix of the output's type, or one
 * whose static length-1 axes broadcast to it. */
static bool z_fits(const weft_var_t *z, const weft_var_t *out)
{
    const weft_type_t *zt = weft_var_type(z), *ot = weft_var_type(out);
    if (weft_type_ndim(zt) != 2 || weft_type_ndim(ot) != 2) return false;
    for (int d = 0; d < 2; d++)
        if (weft_type_dim(zt, d) != weft_type_dim(ot, d) && weft_type_dim(zt, d) != 1)
            return false;
    return true;
}

/* The product x@y has the output's shape: the addition broadcasts only
 * static length-1 axes (run-time broadcasting needs a static 1), so only a
 * product of static length 1 against a z that is not can be the operand that
 * broadcasts, and Gemm broadcasts z only. */
static bool product_spans_output(const gemm_match_t *m)
{
    const weft_type_t *zt = weft_var_type(m->z);
    int64_t len[2] = {weft_type_dim(weft_var_type(m->x), 0),
                      weft_type_dim(weft_var_type(m->y), 1)};
    for (int d = 0; d < 2; d++)
        if (len[d] == 1 && weft_type_dim(zt, d) != 1) return false;
    return true;
}

static bool dtypes_agree(const gemm_match_t *m, weft_dtype_t dt)
{
    if (dt != WEFT_FLOAT32 && dt != WEFT_FLOAT64) return false;
    const weft_var_t *vs[4] = {m->z, m->x, m->y, m->s};
    for (int i = 0; i < 4; i++)
        if (vs[i] && weft_type_dtype(weft_var_type(vs[i])) != dt) return false;
    return true;
}

weft_status_t weft__local_gemm(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                               weft_rewrite_result_t *res)
{
    (void)user;
    int kind;
    if (!weft__ew_kind(node, &kind) || (kind != WEFT_ELEMWISE_ADD && kind != WEFT_ELEMWISE_SUB))
        return WEFT_OK;
    weft_var_t *out = weft_apply_output(node, 0);
    weft_dtype_t dt = weft_type_dtype(weft_var_type(out));
    gemm_match_t m = {NULL, NULL, NULL, NULL, kind == WEFT_ELEMWISE_SUB};
    size_t first = kind == WEFT_ELEMWISE_SUB ? 1 : 0; /* Sub: only z - product */
    for (size_t i = first; i < 2; i++) {
        m.z = weft_apply_input(node, 1 - i);
        if (!match_product(fg, weft_apply_input(node, i), &m) || !dtypes_agree(&m, dt)) continue;
        if (!z_fits(m.z, out) || !product_spans_output(&m)) continue;
        weft_graph_t *g = weft_fgraph_graph(fg);
        weft_var_t *alpha, *beta, *r;
        weft_status_t st = make_alpha(g, &m, dt, &alpha);
        if (st == WEFT_OK) st = weft__scalar(g, dt, 1.0, &beta);
        if (st == WEFT_OK) st = weft__got(g, r = weft_gemm(g, m.z, alpha, m.x, m.y, beta, false));
        if (st != WEFT_OK) return st;
        if (!weft__can_replace(out, r)) return WEFT_OK;
        return weft_rewrite_result_replace(res, out, r);
    }
    return WEFT_OK;
}
