/* Dot(x, y): numpy's dot for ranks 1-2 and a batched matrix product (3-D),
 * run through BLAS (gemm / gemv / dot) on the operands' own memory whenever
 * their strides allow (weft__bmat_from); float32, float64, and complex64 /
 * complex128 through cgemm/zgemm, cgemv/zgemv, cdotu/zdotu (no
 * conjugation, as np.dot), with the same fixed blocking. Gradients: dX = G@Y^T, dY = X^T@G
 * (outer products and scalings for the vector cases). */
#include <string.h>

#include "graph/ctor_int.h"
#include "linalg_int.h"
#include "weft/elemwise.h"
#include "weft/linalg.h"

static weft_status_t dot_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                   weft_var_t *const *in, size_t *n_out,
                                   const weft_type_t **out_types)
{
    static const int any[2] = {-1, -1};
    weft_dtype_t dt;
    (void)op;
    weft_status_t st = weft__linalg_check_dtypes(g, "Dot", n_in, in, 2, any, true, &dt);
    if (st != WEFT_OK) {
        return st;
    }
    const weft_type_t *tx = weft_var_type(in[0]), *ty = weft_var_type(in[1]);
    int nx = weft_type_ndim(tx), ny = weft_type_ndim(ty), nd = 0;
    int64_t shape[3];
    if ((nx == 1 || nx == 2) && (ny == 1 || ny == 2)) {
        st = weft__linalg_match(g, "Dot", in, 0, nx - 1, 1, 0);
        if (nx == 2) {
            shape[nd++] = weft_type_dim(tx, 0);
        }
        if (ny == 2) {
            shape[nd++] = weft_type_dim(ty, 1);
        }
    } else if (nx == 3 && ny == 3) {
        st = weft__linalg_match(g, "Dot", in, 0, 2, 1, 1);
        if (st == WEFT_OK) {
            st = weft__linalg_match(g, "Dot", in, 0, 0, 1, 0);
        }
        int64_t b0 = weft_type_dim(tx, 0);
        shape[0] = b0 != WEFT_DIM_UNKNOWN ? b0 : weft_type_dim(ty, 0);
        shape[1] = weft_type_dim(tx, 1);
        shape[2] = weft_type_dim(ty, 2);
        nd = 3;
    } else {
        return weft_graph_set_error(g, WEFT_ETYPE, "Dot: inputs of rank %d and %d (supported: "
                                    "1-2 with 1-2, or 3 with 3)", nx, ny);
    }
    if (st != WEFT_OK) {
        return st;
    }
    *n_out = 1;
    return weft_type_tensor(g, dt, nd, shape, &out_types[0]);
}

/* Matrix @ vector, or vector @ matrix (= mat^T vec): one gemv. */
static weft_status_t dot_gemv(weft_kernel_ctx_t *ctx, const weft_tensor_t *mat,
                              const weft_tensor_t *vec, bool vec_first, weft_tensor_t *out)
{
    weft__bmat_t a;
    weft__bvec_t x, y = {weft_tensor_data(out), weft_tensor_dim(out, 0), 1, NULL};
    if (weft__bmat_from(ctx, mat, &a) != WEFT_OK) {
        return weft_kernel_error(ctx, WEFT_ENOMEM, "Dot: out of memory");
    }
    if (weft__bvec_from(ctx, vec, &x) != WEFT_OK) {
        weft__bmat_fini(ctx, &a);
        return weft_kernel_error(ctx, WEFT_ENOMEM, "Dot: out of memory");
    }
    if (vec_first) { /* x @ A = A^T x: the transposed operand is a flag flip */
        int64_t r = a.rows;
        a.rows = a.cols;
        a.cols = r;
        a.trans = !a.trans;
    }
    weft__bmat_gemv(weft_tensor_dtype(out), 1.0, &a, &x, 0.0, &y); /* k == 0: zeros */
    weft__bmat_fini(ctx, &a);
    weft__bvec_fini(ctx, &x);
    return WEFT_OK;
}

/* out[b] = x[b] @ y[b] for each batch entry (2-D operands: one), out contiguous. */
static weft_status_t dot_gemm(weft_kernel_ctx_t *ctx, const weft_tensor_t *x,
                              const weft_tensor_t *y, weft_tensor_t *out, int64_t batch)
{
    weft__bmat_t a, b, c;
    if (weft__bmat_from(ctx, x, &a) != WEFT_OK) {
        return weft_kernel_error(ctx, WEFT_ENOMEM, "Dot: out of memory");
    }
    if (weft__bmat_from(ctx, y, &b) != WEFT_OK) {
        weft__bmat_fini(ctx, &a);
        return weft_kernel_error(ctx, WEFT_ENOMEM, "Dot: out of memory");
    }
    weft_dtype_t dt = weft_tensor_dtype(out);
    int64_t es = (int64_t)weft_dtype_size(dt);
    int nd = weft_tensor_ndim(out);
    int64_t m = weft_tensor_dim(out, nd - 2), n = weft_tensor_dim(out, nd - 1);
    weft__bmat_layout(weft_tensor_data(out), m, n, n > 1 ? n : 1, 1, &c);
    int64_t sa = a.copy ? a.rows * a.cols : weft_tensor_stride(x, 0);
    int64_t sb = b.copy ? b.rows * b.cols : weft_tensor_stride(y, 0);
    /* k == 0: zeros; m or n == 0: nothing to compute, and no batch offsets
     * into empty operands (their data may be NULL) */
    if (a.cols == 0 || m == 0 || n == 0) {
        weft_tensor_fill(out, 0.0);
        batch = 0;
    }
    weft__bmat_t ab = a, bb = b, cb = c;
    weft_status_t st = WEFT_OK;
    for (int64_t i = 0; i < batch && st == WEFT_OK; i++) {
        ab.data = (char *)a.data + i * sa * es;
        bb.data = (char *)b.data + i * sb * es;
        cb.data = (char *)c.data + i * m * n * es;
        st = weft__bmat_gemm_par(ctx, dt, 1.0, &ab, &bb, 0.0, &cb);
    }
    weft__bmat_fini(ctx, &a);
    weft__bmat_fini(ctx, &b);
    return st == WEFT_OK ? WEFT_OK : weft_kernel_error(ctx, st, "Dot: cannot split the product");
}

static weft_status_t dot_vv(weft_kernel_ctx_t *ctx, const weft_tensor_t *x,
                            const weft_tensor_t *y, weft_tensor_t *out)
{
    weft__bvec_t a, b;
    if (weft__bvec_from(ctx, x, &a) != WEFT_OK) {
        return weft_kernel_error(ctx, WEFT_ENOMEM, "Dot: out of memory");
    }
    if (weft__bvec_from(ctx, y, &b) != WEFT_OK) {
        weft__bvec_fini(ctx, &a);
        return weft_kernel_error(ctx, WEFT_ENOMEM, "Dot: out of memory");
    }
    weft_dtype_t dt = weft_tensor_dtype(out);
    if (dt == WEFT_COMPLEX64 || dt == WEFT_COMPLEX128) /* out: 0-d, contiguous */
        weft__blas_dotu(dt, a.n, a.data, a.inc, b.data, b.inc, weft_tensor_data(out));
    else
        weft_tensor_fill(out, weft__blas_dot(dt, a.n, a.data, a.inc, b.data, b.inc));
    weft__bvec_fini(ctx, &a);
    weft__bvec_fini(ctx, &b);
    return WEFT_OK;
}

static weft_status_t dot_check_shapes(weft_kernel_ctx_t *ctx, const weft_tensor_t *x,
                                      const weft_tensor_t *y, int64_t *shape, int *nd)
{
    int nx = weft_tensor_ndim(x), ny = weft_tensor_ndim(y);
    int64_t k = weft_tensor_dim(x, nx - 1), k2 = weft_tensor_dim(y, ny == 1 ? 0 : ny - 2);
    if (k != k2 || (nx == 3 && weft_tensor_dim(x, 0) != weft_tensor_dim(y, 0))) {
        return weft__linalg_shape_error(ctx, "Dot", "inner (or batch) lengths differ");
    }
    *nd = 0;
    if (nx == 3) {
        shape[(*nd)++] = weft_tensor_dim(x, 0);
    }
    if (nx >= 2) {
        shape[(*nd)++] = weft_tensor_dim(x, nx - 2);
    }
    if (ny >= 2) {
        shape[(*nd)++] = weft_tensor_dim(y, ny - 1);
    }
    int64_t dims[4] = {k, shape[0], *nd > 1 ? shape[1] : 0, *nd > 2 ? shape[2] : 0};
    return weft__linalg_fit(ctx, "Dot", 4, dims);
}

static weft_blas_kind_t dot_kind(int nx, int ny)
{
    if (nx == 1 && ny == 1) {
        return WEFT_BLAS_KIND_LEVEL1;
    }
    return (nx == 1 || ny == 1) ? WEFT_BLAS_KIND_LEVEL2 : WEFT_BLAS_KIND_LEVEL3;
}

static weft_status_t dot_perform(const weft_apply_t *node, weft_tensor_t *const *inputs,
                                 weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    (void)node;
    const weft_tensor_t *x = inputs[0], *y = inputs[1];
    int nx = weft_tensor_ndim(x), ny = weft_tensor_ndim(y), nd = 0;
    int64_t shape[3] = {0, 0, 0};
    weft_status_t st = dot_check_shapes(ctx, x, y, shape, &nd);
    if (st == WEFT_OK) {
        st = weft__linalg_enter(ctx, "Dot", dot_kind(nx, ny));
    }
    if (st == WEFT_OK) {
        st = weft_kernel_alloc_output(ctx, &outputs[0], weft_tensor_dtype(x), nd, shape);
    }
    if (st != WEFT_OK) {
        return st;
    }
    if (nx == 1 && ny == 1) {
        return dot_vv(ctx, x, y, outputs[0]);
    }
    if (nx == 1) {
        return dot_gemv(ctx, y, x, true, outputs[0]);
    }
    if (ny == 1) {
        return dot_gemv(ctx, x, y, false, outputs[0]);
    }
    return dot_gemm(ctx, x, y, outputs[0], nx == 3 ? shape[0] : 1);
}

/* dX = G@Y^T, dY = X^T@G; vectors use outer products, vec.vec scales. */
static weft_status_t dot_grad(weft_graph_t *g, const weft_apply_t *node,
                              weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    weft_var_t *gz = output_grads[0], *x = weft_apply_input(node, 0);
    weft_var_t *y = weft_apply_input(node, 1), *t = NULL;
    if (!gz) {
        return WEFT_OK;
    }
    int nx = weft_type_ndim(weft_var_type(x)), ny = weft_type_ndim(weft_var_type(y));
    weft_status_t st = WEFT_OK;
    if (weft__lg_is_complex(x)) { /* d/dx of x@y sends gz conj(y) (docs/dtypes.md): each
                                   * formula below multiplies gz by the other operand */
        weft_var_t *xc = weft_conj(g, x), *yc = weft_conj(g, y);
        if ((st = weft__got(g, xc)) != WEFT_OK || (st = weft__got(g, yc)) != WEFT_OK) return st;
        x = xc;
        y = yc;
    }
    if (nx == 1 && ny == 1) {
        st = weft__got(g, input_grads[0] = weft_mul(g, gz, y));
        return st == WEFT_OK ? weft__got(g, input_grads[1] = weft_mul(g, gz, x)) : st;
    }
    if (nx == 2 && ny == 1) {
        st = weft__lg_outer(g, gz, y, &input_grads[0]);
        if (st == WEFT_OK) {
            st = weft__lg_t(g, x, &t);
        }
        return st == WEFT_OK ? weft__got(g, input_grads[1] = weft_dot(g, t, gz)) : st;
    }
    if (nx == 1 && ny == 2) {
        st = weft__got(g, input_grads[0] = weft_dot(g, y, gz));
        return st == WEFT_OK ? weft__lg_outer(g, x, gz, &input_grads[1]) : st;
    }
    st = weft__lg_t(g, y, &t);
    if (st == WEFT_OK) {
        st = weft__got(g, input_grads[0] = weft_dot(g, gz, t));
    }
    if (st == WEFT_OK) {
        st = weft__lg_t(g, x, &t);
    }
    return st == WEFT_OK ? weft__got(g, input_grads[1] = weft_dot(g, t, gz)) : st;
}

const weft_op_class_t weft__dot_class = {
    .size = sizeof(weft_op_class_t),
    .name = "Dot",
    .make_node = dot_make_node,
    .perform = dot_perform,
    .grad = dot_grad,
};

static weft_status_t dot_impl(weft_graph_t *g, weft_var_t *x, weft_var_t *y, const char *file,
                              int line, weft_var_t **out)
{
    weft_var_t *in[2] = {x, y};
    weft_status_t st = weft__linalg_args(g, "Dot", 2, in, file, line, out);
    return st == WEFT_OK ? weft__linalg_call(g, &weft__dot_class, NULL, 2, in, file, line, out)
                         : st;
}

weft_var_t *weft_dot_at(weft_graph_t *g, weft_var_t *x, weft_var_t *y, const char *file, int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t st = dot_impl(g, x, y, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_dot", file, line);
}
