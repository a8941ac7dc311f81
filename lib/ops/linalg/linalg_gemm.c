/* Gemm{inplace}(z, a, x, y, b) = b*z + a*x@y and Gemv{inplace}(y, a, A, x, b)
 * = b*y + a*A@x. The in-place variants overwrite input 0 (destroy_map
 * {0: [0]}) and are what the non-destroying ops' inplace_variant hooks
 * return; the non-destroying ones copy input 0 into a fresh output first
 * (skipped when b == 0: BLAS does not read C then). An operand sharing memory
 * with the destroyed input is copied first so BLAS never reads what it
 * writes. */
#include <stdio.h>
#include <string.h>

#include "tensor/kernel_int.h" /* weft__kernel_scratch_copy */
#include "graph/ctor_int.h"
#include "linalg_int.h"
#include "ops_int.h"
#include "props_fields_int.h"
#include "weft/elemwise.h"
#include "weft/linalg.h"

typedef struct gemm_props {
    int32_t inplace;
} gemm_props_t;

static size_t gemm_destroy_map(const weft_op_t *op, weft_op_alias_t *out, size_t cap)
{
    const gemm_props_t *p = weft_op_props(op);
    if (!p->inplace || cap < 1) {
        return 0;
    }
    out[0].output = 0;
    out[0].input = 0;
    return 1;
}

static weft_status_t gemm_inplace_variant(weft_graph_t *g, const weft_op_t *op, size_t input,
                                          const weft_op_t **out)
{
    const gemm_props_t *p = weft_op_props(op);
    if (input != 0 || p->inplace) {
        return weft_graph_set_error(g, WEFT_ENOTIMPL, "%s: no in-place variant for input %zu",
                                    weft_op_name(op), input);
    }
    gemm_props_t q = {1};
    return weft_op_create(g, weft_op_class(op), &q, out);
}

static int gemm_props_print(const void *props, char *buf, size_t cap)
{
    const gemm_props_t *p = props;
    return p->inplace ? snprintf(buf, cap, "inplace=0") : snprintf(buf, cap, "inplace=-1");
}

/* z's length in dimension d broadcasts against the product's `len`: a
 * static 1 where the product's length is anything else (unknown included). */
static bool broadcasts(const weft_type_t *z, int d, int64_t len)
{
    return weft_type_dim(z, d) == 1 && len != 1;
}

/* Gemm's output type: z's, or the product's shape where z broadcasts. */
static weft_status_t gemm_out_type(weft_graph_t *g, weft_var_t *const *in, bool rows, bool cols,
                                   const weft_type_t **out)
{
    const weft_type_t *zt = weft_var_type(in[0]);
    *out = zt;
    if (!rows && !cols) return WEFT_OK;
    int64_t shape[2] = {rows ? weft_type_dim(weft_var_type(in[2]), 0) : weft_type_dim(zt, 0),
                        cols ? weft_type_dim(weft_var_type(in[3]), 1) : weft_type_dim(zt, 1)};
    return weft_type_tensor(g, weft_type_dtype(zt), 2, shape, out);
}

/* Shared make_node: input 0 (z or y) of rank r0, scalars at 1 and 4, the
 * matrix at 2 and its right operand at 3 (rank r0). Output: input 0's type,
 * so the in-place and copying variants have the same output type, except
 * where `may_broadcast` (the copying Gemm) lets a z row (1,n), column (m,1)
 * or 1x1 broadcast over the product, as an elementwise z + x@y would: a bias
 * added by the product itself (rewrite local_gemm) instead of by a separate
 * pass over the result. The output then has the product's shape. */
static weft_status_t gemx_make_node(weft_graph_t *g, const char *name, size_t n_in,
                                    weft_var_t *const *in, int r0, bool may_broadcast,
                                    size_t *n_out, const weft_type_t **out_types)
{
    int ranks[5] = {r0, 0, 2, r0, 0};
    weft_dtype_t dt;
    weft_status_t st = weft__linalg_check_dtypes(g, name, n_in, in, 5, ranks, true, &dt);
    if (st != WEFT_OK) {
        return st;
    }
    const weft_type_t *zt = weft_var_type(in[0]);
    bool rows = may_broadcast && broadcasts(zt, 0, weft_type_dim(weft_var_type(in[2]), 0));
    bool cols = may_broadcast && broadcasts(zt, 1, weft_type_dim(weft_var_type(in[3]), 1));
    if (!rows) {
        st = weft__linalg_match(g, name, in, 0, 0, 2, 0); /* rows of z/y vs rows of x/A */
    }
    if (st == WEFT_OK) {
        st = weft__linalg_match(g, name, in, 2, 1, 3, 0); /* inner length */
    }
    if (st == WEFT_OK && r0 == 2 && !cols) {
        st = weft__linalg_match(g, name, in, 0, 1, 3, 1); /* columns of z vs y */
    }
    if (st == WEFT_OK) {
        st = gemm_out_type(g, in, rows, cols, &out_types[0]);
    }
    *n_out = 1;
    return st;
}

static weft_status_t gemm_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                    weft_var_t *const *in, size_t *n_out,
                                    const weft_type_t **out_types)
{
    const gemm_props_t *p = weft_op_props(op);
    return gemx_make_node(g, weft_op_name(op), n_in, in, 2, !p->inplace, n_out, out_types);
}

static weft_status_t gemv_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                    weft_var_t *const *in, size_t *n_out,
                                    const weft_type_t **out_types)
{
    return gemx_make_node(g, weft_op_name(op), n_in, in, 1, false, n_out, out_types);
}

/* Resolves operand t, copying it when its layout needs it or when it shares
 * memory with the tensor being overwritten. */
static weft_status_t gemx_operand(weft_kernel_ctx_t *ctx, const weft_tensor_t *t,
                                  const weft_tensor_t *target, weft__bmat_t *m)
{
    if (!weft_tensor_shares_buffer(t, target)) {
        return weft__bmat_from(ctx, t, m);
    }
    weft_tensor_t *copy = NULL;
    if (weft__kernel_scratch_copy(ctx, t, &copy) != WEFT_OK) {
        return WEFT_ENOMEM;
    }
    /* contiguous: resolves without a second copy */
    weft_status_t st = weft__bmat_from(ctx, copy, m);
    if (st == WEFT_OK) {
        m->copy = copy;
    } else {
        weft_kernel_scratch_done(ctx, copy);
    }
    return st;
}

/* Copies z into out, repeating a z of length 1 along any dimension of
 * out's longer one (a bias row or column; broadcasting Gemm). */
static weft_status_t copy_broadcast(weft_tensor_t *out, const weft_tensor_t *z)
{
    if (weft_tensor_same_shape(out, z)) {
        return weft_tensor_copy(out, z);
    }
    size_t isz = weft_dtype_size(weft_tensor_dtype(out));
    int64_t m = weft_tensor_dim(out, 0), n = weft_tensor_dim(out, 1);
    int64_t zs0 = weft_tensor_dim(z, 0) == 1 ? 0 : weft_tensor_stride(z, 0);
    int64_t zs1 = weft_tensor_dim(z, 1) == 1 ? 0 : weft_tensor_stride(z, 1);
    char *o = weft_tensor_data(out); /* fresh: C-contiguous */
    const char *zp = weft_tensor_data(z);
    for (int64_t i = 0; i < m; i++) {
        char *row = o + (size_t)(i * n) * isz;
        const char *zr = zp + (ptrdiff_t)(i * zs0) * (ptrdiff_t)isz;
        if (zs1 == 1) {
            memcpy(row, zr, (size_t)n * isz);
            continue;
        }
        for (int64_t j = 0; j < n; j++) {
            memcpy(row + (size_t)j * isz, zr + (ptrdiff_t)(j * zs1) * (ptrdiff_t)isz, isz);
        }
    }
    return WEFT_OK;
}

/* The op's output: input 0 itself (in place, when C-contiguous) or a fresh
 * tensor of the product's shape (m, n) holding z's values, broadcast (when
 * b != 0). A strided z is not written in place: a later reduction sums in
 * its input's stride order, so an output in z's layout would give other
 * bits than mode none's fresh one (as weft__ew_inplace_input, ops_int.h). */
static weft_status_t gemx_output(weft_kernel_ctx_t *ctx, const weft_apply_t *node,
                                 weft_tensor_t *z, int64_t m, int64_t n, weft__blas_scalar_t beta,
                                 weft_tensor_t **cell)
{
    const gemm_props_t *p = weft_op_props(weft_apply_op(node));
    if (p->inplace && weft_tensor_is_contiguous(z)) {
        weft_kernel_set_output(ctx, cell, weft_tensor_retain(z));
        return WEFT_OK;
    }
    int64_t shape[2] = {m, n};
    weft_status_t st = weft_kernel_alloc_output(ctx, cell, weft_tensor_dtype(z),
                                                weft_tensor_ndim(z), shape);
    if (st == WEFT_OK && beta != 0) {
        st = weft_tensor_ndim(z) == 2 ? copy_broadcast(*cell, z) : weft_tensor_copy(*cell, z);
    }
    return st;
}

/* z's length `zl` fits the product's `len`: equal, or 1 broadcast by the
 * copying Gemm. */
static bool fits(int64_t zl, int64_t len, bool may_broadcast)
{
    return zl == len || (may_broadcast && zl == 1);
}

static weft_status_t gemm_shapes(weft_kernel_ctx_t *ctx, const weft_apply_t *node,
                                 weft_tensor_t *const *in)
{
    const weft_tensor_t *z = in[0], *x = in[2], *y = in[3];
    bool bc = !((const gemm_props_t *)weft_op_props(weft_apply_op(node)))->inplace;
    if (!fits(weft_tensor_dim(z, 0), weft_tensor_dim(x, 0), bc) ||
        weft_tensor_dim(x, 1) != weft_tensor_dim(y, 0) ||
        !fits(weft_tensor_dim(z, 1), weft_tensor_dim(y, 1), bc)) {
        return weft__linalg_shape_error(ctx, "Gemm", bc ? "z (m,n) or a row/column of it, x "
                                        "(m,k), y (k,n) lengths differ"
                                        : "z (m,n), x (m,k), y (k,n) lengths differ");
    }
    int64_t d[3] = {weft_tensor_dim(x, 0), weft_tensor_dim(x, 1), weft_tensor_dim(y, 1)};
    weft_status_t st = weft__linalg_fit(ctx, "Gemm", 3, d);
    return st == WEFT_OK ? weft__linalg_enter(ctx, "Gemm", WEFT_BLAS_KIND_LEVEL3) : st;
}

/* C (out, or a contiguous stand-in copied back) <- beta*C + alpha*X@Y. */
static weft_status_t gemm_compute(weft_kernel_ctx_t *ctx, weft_tensor_t *out,
                                  weft__blas_scalar_t alpha, const weft__bmat_t *a,
                                  const weft__bmat_t *b, weft__blas_scalar_t beta)
{
    weft__bmat_t c;
    weft_tensor_t *tmp = NULL;
    int64_t m = weft_tensor_dim(out, 0), n = weft_tensor_dim(out, 1);
    if (!weft__bmat_layout(weft_tensor_data(out), m, n, weft_tensor_stride(out, 0),
                           weft_tensor_stride(out, 1), &c)) {
        if (weft__kernel_scratch_copy(ctx, out, &tmp) != WEFT_OK) {
            return WEFT_ENOMEM;
        }
        weft__bmat_layout(weft_tensor_data(tmp), m, n, n > 1 ? n : 1, 1, &c);
    }
    /* k == 0 gives beta*C without reading x or y (weft__blas_gemm) */
    weft_status_t st = weft__bmat_gemm_par(ctx, weft_tensor_dtype(out), alpha, a, b, beta, &c);
    if (st == WEFT_OK && tmp) st = weft_tensor_copy(out, tmp);
    weft_kernel_scratch_done(ctx, tmp);
    return st;
}

static weft_status_t gemm_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                  weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    weft_status_t st = gemm_shapes(ctx, node, in);
    if (st != WEFT_OK) {
        return st;
    }
    weft__blas_scalar_t alpha = weft__scalar_value_cx(in[1]), beta = weft__scalar_value_cx(in[4]);
    st = gemx_output(ctx, node, in[0], weft_tensor_dim(in[2], 0), weft_tensor_dim(in[3], 1), beta,
                     &outputs[0]);
    if (st != WEFT_OK) {
        return st;
    }
    weft__bmat_t a, b;
    if (gemx_operand(ctx, in[2], outputs[0], &a) != WEFT_OK) {
        return weft_kernel_error(ctx, WEFT_ENOMEM, "Gemm: out of memory");
    }
    st = gemx_operand(ctx, in[3], outputs[0], &b);
    if (st == WEFT_OK) {
        st = gemm_compute(ctx, outputs[0], alpha, &a, &b, beta);
        weft__bmat_fini(ctx, &b);
    }
    weft__bmat_fini(ctx, &a);
    return st == WEFT_OK ? WEFT_OK : weft_kernel_error(ctx, st, "Gemm: out of memory");
}

static weft_status_t gemv_shapes(weft_kernel_ctx_t *ctx, weft_tensor_t *const *in)
{
    const weft_tensor_t *y = in[0], *A = in[2], *x = in[3];
    if (weft_tensor_dim(y, 0) != weft_tensor_dim(A, 0) ||
        weft_tensor_dim(A, 1) != weft_tensor_dim(x, 0)) {
        return weft__linalg_shape_error(ctx, "Gemv", "y (m,), A (m,n), x (n,) lengths differ");
    }
    int64_t d[2] = {weft_tensor_dim(A, 0), weft_tensor_dim(A, 1)};
    weft_status_t st = weft__linalg_fit(ctx, "Gemv", 2, d);
    return st == WEFT_OK ? weft__linalg_enter(ctx, "Gemv", WEFT_BLAS_KIND_LEVEL2) : st;
}

/* y (out, or a contiguous stand-in copied back) <- beta*y + alpha*A@x. */
static weft_status_t gemv_compute(weft_kernel_ctx_t *ctx, weft_tensor_t *out,
                                  weft__blas_scalar_t alpha, const weft__bmat_t *a,
                                  const weft_tensor_t *xt, weft__blas_scalar_t beta)
{
    weft__bvec_t x, y;
    weft_status_t st = weft__bvec_from(ctx, xt, &x);
    if (st != WEFT_OK) {
        return st;
    }
    st = weft__bvec_from(ctx, out, &y);
    if (st == WEFT_OK) { /* n == 0 gives beta*y without reading A or x (weft__blas_gemv) */
        weft__bmat_gemv(weft_tensor_dtype(out), alpha, a, &x, beta, &y);
        st = y.copy ? weft_tensor_copy(out, y.copy) : WEFT_OK;
        weft__bvec_fini(ctx, &y);
    }
    weft__bvec_fini(ctx, &x);
    return st;
}

static weft_status_t gemv_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                  weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    weft_status_t st = gemv_shapes(ctx, in);
    if (st != WEFT_OK) {
        return st;
    }
    weft__blas_scalar_t alpha = weft__scalar_value_cx(in[1]), beta = weft__scalar_value_cx(in[4]);
    st = gemx_output(ctx, node, in[0], weft_tensor_dim(in[0], 0), 0, beta, &outputs[0]);
    if (st != WEFT_OK) {
        return st;
    }
    weft__bmat_t a;
    if (gemx_operand(ctx, in[2], outputs[0], &a) != WEFT_OK) {
        return weft_kernel_error(ctx, WEFT_ENOMEM, "Gemv: out of memory");
    }
    weft_tensor_t *x = in[3], *xc = NULL;
    if (weft_tensor_shares_buffer(x, outputs[0])) {
        st = weft__kernel_scratch_copy(ctx, x, &xc);
        x = xc;
    }
    if (st == WEFT_OK) {
        st = gemv_compute(ctx, outputs[0], alpha, &a, x, beta);
    }
    weft_kernel_scratch_done(ctx, xc);
    weft__bmat_fini(ctx, &a);
    return st == WEFT_OK ? WEFT_OK : weft_kernel_error(ctx, st, "Gemv: out of memory");
}

/* z' = b*z + a*x@y: dz = b*G, dx = a*G@y^T, dy = a*x^T@G, da = sum(G*(x@y)),
 * db = sum(G*z). Gemv is the same with y, A, x: dA = a*outer(G, x). */
static weft_status_t gemx_grad(weft_graph_t *g, const weft_apply_t *node,
                               weft_var_t *const *output_grads, weft_var_t **ig, bool is_gemv)
{
    weft_var_t *gz = output_grads[0], *in[5];
    if (!gz || weft__lg_is_complex(weft_apply_output(node, 0))) { /* complex: none (docs/dtypes.md) */
        return WEFT_OK;
    }
    for (size_t i = 0; i < 5; i++) {
        in[i] = weft_apply_input(node, i);
    }
    weft_var_t *t = NULL, *p = NULL, *xy = NULL, *gzs = NULL;
    weft_status_t st = weft__lg_scale(g, in[4], gz, &gzs);
    if (st == WEFT_OK) { /* summed over the axes a bias row / column z broadcast along */
        st = weft__grad_reduce_to(g, gzs, in[0], &ig[0]);
    }
    if (st == WEFT_OK) { /* the matrix operand */
        st = is_gemv ? weft__lg_outer(g, gz, in[3], &p) : weft__lg_t(g, in[3], &t);
    }
    if (st == WEFT_OK && !is_gemv) {
        st = weft__got(g, p = weft_dot(g, gz, t));
    }
    if (st == WEFT_OK) {
        st = weft__lg_scale(g, in[1], p, &ig[2]);
    }
    if (st == WEFT_OK) { /* the right operand */
        st = weft__lg_t(g, in[2], &t);
    }
    if (st == WEFT_OK) {
        st = weft__got(g, p = weft_dot(g, t, gz));
    }
    if (st == WEFT_OK) {
        st = weft__lg_scale(g, in[1], p, &ig[3]);
    }
    if (st == WEFT_OK) {
        st = weft__got(g, xy = weft_dot(g, in[2], in[3]));
    }
    if (st == WEFT_OK) {
        st = weft__lg_sum_prod(g, gz, xy, &ig[1]);
    }
    return st == WEFT_OK ? weft__lg_sum_prod(g, gz, in[0], &ig[4]) : st;
}

static weft_status_t gemm_grad(weft_graph_t *g, const weft_apply_t *node,
                               weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    return gemx_grad(g, node, output_grads, input_grads, false);
}

static weft_status_t gemv_grad(weft_graph_t *g, const weft_apply_t *node,
                               weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    return gemx_grad(g, node, output_grads, input_grads, true);
}

/* JSON props of Gemm and Gemv: {"inplace": false}. */
static const weft__props_fields_t gemm_fields = {
    sizeof(gemm_props_t),
    {WEFT__PROPS_FIELD("inplace", WEFT__FIELD_I32_BOOL, gemm_props_t, inplace)},
};
WEFT__PROPS_FIELDS_HOOKS(gemm, gemm_fields)

const weft_op_class_t weft__gemm_class = {
    .size = sizeof(weft_op_class_t),
    .name = "Gemm",
    .props_size = sizeof(gemm_props_t),
    .props_print = gemm_props_print,
    .props_to_json = gemm_to_json,
    .props_from_json = gemm_from_json,
    .make_node = gemm_make_node,
    .perform = gemm_perform,
    .destroy_map = gemm_destroy_map,
    .grad = gemm_grad,
    .inplace_variant = gemm_inplace_variant,
};

const weft_op_class_t weft__gemv_class = {
    .size = sizeof(weft_op_class_t),
    .name = "Gemv",
    .props_size = sizeof(gemm_props_t),
    .props_print = gemm_props_print,
    .props_to_json = gemm_to_json,
    .props_from_json = gemm_from_json,
    .make_node = gemv_make_node,
    .perform = gemv_perform,
    .destroy_map = gemm_destroy_map,
    .grad = gemv_grad,
    .inplace_variant = gemm_inplace_variant,
};

static weft_status_t gemx_build(weft_graph_t *g, const weft_op_class_t *cls, weft_var_t **in,
                                bool inplace, const char *file, int line, weft_var_t **out)
{
    weft_status_t st = weft__linalg_args(g, cls->name, 5, in, file, line, out);
    gemm_props_t p = {inplace ? 1 : 0};
    return st == WEFT_OK ? weft__linalg_call(g, cls, &p, 5, in, file, line, out) : st;
}

weft_var_t *weft_gemm_at(weft_graph_t *g, weft_var_t *z, weft_var_t *a, weft_var_t *x,
                         weft_var_t *y, weft_var_t *b, bool inplace, const char *file, int line)
{
    weft_var_t *out = NULL, *in[5] = {z, a, x, y, b};
    weft__ctor_begin(g);
    weft_status_t st = gemx_build(g, &weft__gemm_class, in, inplace, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_gemm", file, line);
}

weft_var_t *weft_gemv_at(weft_graph_t *g, weft_var_t *y, weft_var_t *a, weft_var_t *A,
                         weft_var_t *x, weft_var_t *b, bool inplace, const char *file, int line)
{
    weft_var_t *out = NULL, *in[5] = {y, a, A, x, b};
    weft__ctor_begin(g);
    weft_status_t st = gemx_build(g, &weft__gemv_class, in, inplace, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_gemv", file, line);
}
