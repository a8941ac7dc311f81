/* The decompositions (weft/linalg_lapack.h) on stacks of matrices, one
 * LAPACK call per matrix with the LAPACK node kind's thread setting:
 * - Svd{full_matrices, compute_uv}(a) -> (u, s, vh) or (s): ?gesdd on a's
 *   row-major memory read column-major (a^T = V S U^T), so LAPACK's u is
 *   our vh and its vt our u with no transposed copy;
 * - Eigh{lower, compute_v}(a) -> (w, v) or (w): ?syevd, eigenvalues
 *   ascending, reading a's lower (or upper) triangle as NumPy's UPLO.
 * - Qr(a) -> (q, r), np.linalg.qr(a, mode='reduced'): ?geqrf + ?orgqr on a
 *   column-major copy;
 * Gradients (Giles 2008; Murray 2016 for the triangle read):
 * - Svd, singular values: da = u diag(gs) vh (reduced u, vh; a Svd node of
 *   its own when the op computes no vectors); through u and vh (reduced, or
 *   full on square matrices): Townsend 2016 (svd_grad_uv);
 * - Eigh: G = v (diag(gw) + F o (v^T gv)) v^T with F_ij = 1/(w_j - w_i)
 *   (i != j, 0 on the diagonal; distinct eigenvalues), da = the read
 *   triangle of G + G^T with the diagonal halved;
 * - Qr (m >= n): PyTensor's QRGrad (see qr_grad).
 * Every gradient takes stacks with any number of batch axes (weft__lg_mm). */
#include <lapacke.h>
#include <stdio.h>
#include <string.h>

#include "graph/ctor_int.h"
#include "lapack_int.h"
#include "props_fields_int.h"
#include "weft/elemwise.h"
#include "weft/linalg.h"
#include "weft/linalg_lapack.h"
#include "weft/shape_ops.h"

typedef struct svd_props {
    int64_t full_matrices, compute_uv;
} svd_props_t;

typedef struct eigh_props {
    int64_t lower, compute_v;
} eigh_props_t;

/* ---- LAPACK calls (LAPACKE allocates the workspace) ------------------------ */

static int lp_gesdd(weft_dtype_t dt, char jobz, int64_t m, int64_t n, void *a, void *s,
                    void *u, int64_t ldu, void *vt, int64_t ldvt)
{
    lapack_int mi = (lapack_int)m, ni = (lapack_int)n;
    if (dt == WEFT_FLOAT64) {
        return (int)LAPACKE_dgesdd(LAPACK_COL_MAJOR, jobz, mi, ni, a, mi > 1 ? mi : 1, s, u,
                                   (lapack_int)ldu, vt, (lapack_int)ldvt);
    }
    return (int)LAPACKE_sgesdd(LAPACK_COL_MAJOR, jobz, mi, ni, a, mi > 1 ? mi : 1, s, u,
                               (lapack_int)ldu, vt, (lapack_int)ldvt);
}

static int lp_syevd(weft_dtype_t dt, bool vectors, char uplo, int64_t n, void *a, void *w)
{
    lapack_int ni = (lapack_int)n;
    char jobz = vectors ? 'V' : 'N';
    if (dt == WEFT_FLOAT64) {
        return (int)LAPACKE_dsyevd(LAPACK_COL_MAJOR, jobz, uplo, ni, a, ni, w);
    }
    return (int)LAPACKE_ssyevd(LAPACK_COL_MAJOR, jobz, uplo, ni, a, ni, w);
}

static int lp_geqrf_orgqr(weft_dtype_t dt, bool q, int64_t m, int64_t n, void *a, void *tau)
{
    lapack_int mi = (lapack_int)m, ni = (lapack_int)n, k = mi < ni ? mi : ni;
    if (dt == WEFT_FLOAT64) {
        return (int)(q ? LAPACKE_dorgqr(LAPACK_COL_MAJOR, mi, k, k, a, mi, tau)
                       : LAPACKE_dgeqrf(LAPACK_COL_MAJOR, mi, ni, a, mi, tau));
    }
    return (int)(q ? LAPACKE_sorgqr(LAPACK_COL_MAJOR, mi, k, k, a, mi, tau)
                   : LAPACKE_sgeqrf(LAPACK_COL_MAJOR, mi, ni, a, mi, tau));
}

/* Transposes the contiguous n x n src into dst; fills an r x c identity. */
#define DECOMP_HELPERS_(ctype, dtype)                                                    \
    static void transpose_##ctype(const ctype *src, int64_t n, ctype *dst)               \
    {                                                                                    \
        for (int64_t i = 0; i < n; i++) {                                                \
            for (int64_t j = 0; j < n; j++) {                                            \
                dst[i * n + j] = src[j * n + i];                                         \
            }                                                                            \
        }                                                                                \
    }                                                                                    \
    static void eye_##ctype(ctype *dst, int64_t r, int64_t c)                            \
    {                                                                                    \
        for (int64_t i = 0; i < r * c; i++) {                                            \
            dst[i] = (i / c == i % c) ? (ctype)1 : (ctype)0;                             \
        }                                                                                \
    }
WEFT__LAPACK_TYPES(DECOMP_HELPERS_)
#undef DECOMP_HELPERS_

/* From the column-major m x n geqrf result a: r (k x n, row-major) its upper
 * triangle; after orgqr, q (m x k, row-major) its first k columns. */
#define DECOMP_QR_(ctype, dtype)                                                          \
    static void qr_r_##ctype(const ctype *a, int64_t m, int64_t n, int64_t k, ctype *r)   \
    {                                                                                     \
        for (int64_t i = 0; i < k; i++) {                                                 \
            for (int64_t j = 0; j < n; j++) {                                             \
                r[i * n + j] = j >= i ? a[j * m + i] : (ctype)0;                          \
            }                                                                             \
        }                                                                                 \
    }                                                                                     \
    static void qr_q_##ctype(const ctype *a, int64_t m, int64_t k, ctype *q)              \
    {                                                                                     \
        for (int64_t i = 0; i < m; i++) {                                                 \
            for (int64_t j = 0; j < k; j++) {                                             \
                q[i * k + j] = a[j * m + i];                                              \
            }                                                                             \
        }                                                                                 \
    }
WEFT__LAPACK_TYPES(DECOMP_QR_)
#undef DECOMP_HELPERS_

static void transpose_sq(weft_dtype_t dt, const void *src, int64_t n, void *dst)
{
#define DECOMP_T_CALL_(ctype, dtype) \
    if (dt == dtype) transpose_##ctype(src, n, dst);
    WEFT__LAPACK_TYPES(DECOMP_T_CALL_)
#undef DECOMP_T_CALL_
}

static void eye_fill(weft_dtype_t dt, void *dst, int64_t r, int64_t c)
{
#define DECOMP_EYE_CALL_(ctype, dtype) \
    if (dt == dtype) eye_##ctype(dst, r, c);
    WEFT__LAPACK_TYPES(DECOMP_EYE_CALL_)
#undef DECOMP_EYE_CALL_
}

/* ---- Svd ---------------------------------------------------------------------- */

/* The output shapes of Svd on (..., m, n): u (..., m, uc), s (..., k),
 * vh (..., vr, n); nb batch axes, each shape's own rank. */
typedef struct svd_shapes {
    int64_t u[WEFT_MAX_NDIM], s[WEFT_MAX_NDIM], vh[WEFT_MAX_NDIM];
    int nb;
} svd_shapes_t;

static void svd_shapes(const svd_props_t *p, int nd, const int64_t *in, svd_shapes_t *o)
{
    int64_t m = in[nd - 2], n = in[nd - 1], k;
    bool known = m != WEFT_DIM_UNKNOWN && n != WEFT_DIM_UNKNOWN;
    k = known ? (m < n ? m : n) : WEFT_DIM_UNKNOWN;
    o->nb = nd - 2;
    memcpy(o->u, in, (size_t)nd * sizeof(int64_t));
    memcpy(o->s, in, (size_t)nd * sizeof(int64_t));
    memcpy(o->vh, in, (size_t)nd * sizeof(int64_t));
    o->u[nd - 1] = p->full_matrices ? m : k;
    o->s[nd - 2] = k;
    o->vh[nd - 2] = p->full_matrices ? n : k;
}

static weft_status_t svd_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                   weft_var_t *const *in, size_t *n_out,
                                   const weft_type_t **out_types)
{
    const svd_props_t *p = weft_op_props(op);
    static const int any[1] = {-1};
    weft_dtype_t dt;
    weft_status_t st = weft__linalg_check(g, "Svd", n_in, in, 1, any, &dt);
    const weft_type_t *t = st == WEFT_OK ? weft_var_type(in[0]) : NULL;
    if (st == WEFT_OK && weft_type_ndim(t) < 2) {
        return weft_graph_set_error(g, WEFT_ETYPE, "Svd: input 0 has %d dims (need 2 or more)",
                                    weft_type_ndim(t));
    }
    if (st != WEFT_OK) {
        return st;
    }
    int nd = weft_type_ndim(t);
    int64_t shape[WEFT_MAX_NDIM];
    weft__batch_type_dims(t, 0, shape);
    svd_shapes_t o;
    svd_shapes(p, nd, shape, &o);
    if (!p->compute_uv) {
        *n_out = 1;
        return weft_type_tensor(g, dt, nd - 1, o.s, &out_types[0]);
    }
    *n_out = 3;
    st = weft_type_tensor(g, dt, nd, o.u, &out_types[0]);
    if (st == WEFT_OK) {
        st = weft_type_tensor(g, dt, nd - 1, o.s, &out_types[1]);
    }
    return st == WEFT_OK ? weft_type_tensor(g, dt, nd, o.vh, &out_types[2]) : st;
}

static weft_status_t svd_alloc(weft_kernel_ctx_t *ctx, const svd_props_t *p,
                               const weft_tensor_t *a, weft_tensor_t **outputs)
{
    int nd = weft_tensor_ndim(a);
    weft_dtype_t dt = weft_tensor_dtype(a);
    svd_shapes_t o;
    svd_shapes(p, nd, weft_tensor_shape(a), &o);
    if (!p->compute_uv) {
        return weft_kernel_alloc_output(ctx, &outputs[0], dt, nd - 1, o.s);
    }
    weft_status_t st = weft_kernel_alloc_output(ctx, &outputs[0], dt, nd, o.u);
    if (st == WEFT_OK) {
        st = weft_kernel_alloc_output(ctx, &outputs[1], dt, nd - 1, o.s);
    }
    return st == WEFT_OK ? weft_kernel_alloc_output(ctx, &outputs[2], dt, nd, o.vh) : st;
}

static weft_status_t svd_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                 weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    const svd_props_t *p = weft_op_props(weft_apply_op(node));
    const weft_tensor_t *a = in[0];
    int nd = weft_tensor_ndim(a);
    int64_t m = weft_tensor_dim(a, nd - 2), n = weft_tensor_dim(a, nd - 1), k = m < n ? m : n;
    int64_t dims[2] = {m, n}, batch = weft__batch_count(a, 2);
    weft_dtype_t dt = weft_tensor_dtype(a);
    int64_t es = (int64_t)weft_dtype_size(dt);
    weft_status_t st = weft__linalg_fit(ctx, "Svd", 2, dims);
    if (st == WEFT_OK) {
        st = weft__lapack_enter(ctx, "Svd", k);
    }
    if (st == WEFT_OK) {
        st = svd_alloc(ctx, p, a, outputs);
    }
    if (st != WEFT_OK || batch == 0) {
        return st;
    }
    int64_t uc = p->full_matrices ? m : k, vr = p->full_matrices ? n : k;
    int64_t mn = m * n > 0 ? m * n : 1;
    weft_tensor_t *buf = NULL;
    st = weft_kernel_scratch(ctx, dt, 1, &mn, &buf);
    char *ud = p->compute_uv ? weft_tensor_data(outputs[0]) : NULL;
    char *sd = weft_tensor_data(outputs[p->compute_uv ? 1 : 0]);
    char *vd = p->compute_uv ? weft_tensor_data(outputs[2]) : NULL;
    char jobz = !p->compute_uv ? 'N' : p->full_matrices ? 'A' : 'S';
    double dummy[1];
    for (int64_t i = 0; i < batch && st == WEFT_OK; i++) {
        void *u = ud ? (void *)(ud + i * m * uc * es) : (void *)dummy;
        void *vh = vd ? (void *)(vd + i * vr * n * es) : (void *)dummy;
        if (k == 0) { /* nothing to factor; a full u or vh is the identity, as NumPy */
            if (ud) {
                eye_fill(dt, u, m, uc);
                eye_fill(dt, vh, vr, n);
            }
            continue;
        }
        void *w = weft_tensor_data(buf);
        weft__batch_load(a, 2, weft__batch_offset(a, 2, i), m, n, false, w);
        /* w read column-major is a^T (n x m) = V S U^T: LAPACK's u (n x vr,
         * ld n) is vh row-major, its vt (uc x m, ld uc) is u row-major */
        int info = lp_gesdd(dt, jobz, n, m, w, sd + i * k * es, vh, n, u, ud ? uc : 1);
        if (info != 0) {
            st = weft_kernel_error(ctx, WEFT_ERANGE, info > 0 ? "Svd: did not converge "
                                   "(info %d)" : "Svd: LAPACK rejected the input (info %d: "
                                   "NaN in the matrix?)", info);
        }
    }
    weft_kernel_scratch_done(ctx, buf);
    return st;
}

/* x[..., None, :]: a stack of vectors as rows, to scale the columns of a matrix. */
static weft_status_t as_row(weft_graph_t *g, weft_var_t *x, weft_var_t **out)
{
    int nb = weft_type_ndim(weft_var_type(x)) - 1, order[WEFT_MAX_NDIM];
    for (int d = 0; d < nb; d++) {
        order[d] = d;
    }
    order[nb] = WEFT_DIMSHUFFLE_NEW;
    order[nb + 1] = nb;
    return weft__got(g, *out = weft_dimshuffle(g, x, nb + 2, order));
}

/* x[..., :, None]: a stack of vectors as columns, to scale the rows of a matrix. */
static weft_status_t as_col(weft_graph_t *g, weft_var_t *x, weft_var_t **out)
{
    return weft__lg_new_axis(g, x, weft_type_ndim(weft_var_type(x)), out);
}

/* a @ b of the gradients (any number of batch axes). */
static weft_status_t mm(weft_graph_t *g, weft_var_t *a, weft_var_t *b, weft_var_t **out)
{
    return weft__lg_mm(g, "the decompositions' gradient", a, b, out);
}

static weft_status_t eigh_f_times(weft_graph_t *g, weft_var_t *w, weft_var_t *x,
                                  weft_var_t **out);

/* (F o (y - y^T)) with F_ij = 1/(s_j^2 - s_i^2), y = p^T q. */
static weft_status_t svd_f_skew(weft_graph_t *g, weft_var_t *s2, weft_var_t *p, weft_var_t *q,
                                weft_var_t **out)
{
    weft_var_t *pt = NULL, *y = NULL, *yt = NULL, *d = NULL;
    weft_status_t st = weft__lg_t(g, p, &pt);
    if (st == WEFT_OK) {
        st = mm(g, pt, q, &y);
    }
    if (st == WEFT_OK) {
        st = weft__lg_t(g, y, &yt);
    }
    if (st == WEFT_OK) {
        st = weft__got(g, d = weft_sub(g, y, yt));
    }
    return st == WEFT_OK ? eigh_f_times(g, s2, d, out) : st;
}

/* (x - a (b x)) scaled: the part of x outside the span of a (a b = the
 * projector), the projection removed: x - a @ (b @ x). */
static weft_status_t svd_reject(weft_graph_t *g, weft_var_t *x, weft_var_t *a, weft_var_t *b,
                                weft_var_t **out)
{
    weft_var_t *bx = NULL, *abx = NULL;
    weft_status_t st = mm(g, b, x, &bx);
    if (st == WEFT_OK) {
        st = mm(g, a, bx, &abx);
    }
    return st == WEFT_OK ? weft__got(g, *out = weft_sub(g, x, abx)) : st;
}

/* Townsend 2016 ("Differentiating the singular value decomposition"), real,
 * reduced: da = u [(F o (u^T gu - gu^T u)) S + diag(gs) + S (F o (v^T gv -
 * gv^T v))] v^T + (I - u u^T) gu S^-1 v^T + u S^-1 gv^T (I - v v^T), with
 * v = vh^T, gv = gvh^T, F_ij = 1/(s_j^2 - s_i^2) (distinct, non-zero s). */
static weft_status_t svd_grad_uv(weft_graph_t *g, weft_var_t *u, weft_var_t *s, weft_var_t *vh,
                                 weft_var_t *gu, weft_var_t *gs, weft_var_t *gvh,
                                 weft_var_t **out)
{
    weft_var_t *s2 = NULL, *srow = NULL, *scol = NULL, *inv = NULL, *irow = NULL, *icol = NULL;
    weft_var_t *inner = NULL, *t = NULL, *f = NULL, *v = NULL, *gv = NULL, *ut = NULL;
    weft_var_t *main = NULL, *ex = NULL, *rej = NULL, *sum = NULL;
    weft_status_t st = weft__got(g, s2 = weft_mul(g, s, s));
    if (st == WEFT_OK) {
        st = as_row(g, s, &srow);
    }
    if (st == WEFT_OK) {
        st = as_col(g, s, &scol);
    }
    if (st == WEFT_OK) {
        st = weft__got(g, inv = weft_scalar_binary(g, WEFT_ELEMWISE_DIV, 1.0, s));
    }
    if (st == WEFT_OK) {
        st = as_row(g, inv, &irow);
    }
    if (st == WEFT_OK) {
        st = as_col(g, inv, &icol);
    }
    if (st == WEFT_OK) {
        st = weft__lg_t(g, vh, &v);
    }
    if (st == WEFT_OK) {
        st = weft__lg_t(g, u, &ut);
    }
    if (st == WEFT_OK && gs) { /* diag(gs) as the columns of u scaled, below */
        st = as_row(g, gs, &t);
        if (st == WEFT_OK) {
            st = weft__got(g, main = weft_mul(g, u, t));
        }
    }
    if (st == WEFT_OK && gu) {
        st = svd_f_skew(g, s2, u, gu, &f);
        if (st == WEFT_OK) {
            st = weft__got(g, inner = weft_mul(g, f, srow));
        }
        if (st == WEFT_OK) { /* (I - u u^T) gu S^-1 v^T */
            st = svd_reject(g, gu, u, ut, &rej);
        }
        if (st == WEFT_OK) {
            st = weft__got(g, ex = weft_mul(g, rej, irow));
        }
    }
    if (st == WEFT_OK && gvh) {
        st = weft__lg_t(g, gvh, &gv);
        if (st == WEFT_OK) {
            st = svd_f_skew(g, s2, v, gv, &f);
        }
        if (st == WEFT_OK) {
            st = weft__got(g, t = weft_mul(g, scol, f));
        }
        if (st == WEFT_OK) {
            st = weft__got(g, inner = inner ? weft_add(g, inner, t) : t);
        }
    }
    if (st == WEFT_OK && inner) { /* u inner (v^T applied below) */
        st = mm(g, u, inner, &t);
        if (st == WEFT_OK) {
            st = weft__got(g, main = main ? weft_add(g, main, t) : t);
        }
    }
    if (st == WEFT_OK && ex) {
        st = weft__got(g, main = main ? weft_add(g, main, ex) : ex);
    }
    if (st == WEFT_OK) {
        st = mm(g, main, vh, &sum);
    }
    if (st == WEFT_OK && gvh) { /* u S^-1 gvh (I - v v^T) = u (S^-1 (gvh - (gvh v) vh)) */
        weft_var_t *gvv = NULL, *gvvv = NULL, *r2 = NULL, *sc = NULL, *ur = NULL;
        st = mm(g, gvh, v, &gvv);
        if (st == WEFT_OK) {
            st = mm(g, gvv, vh, &gvvv);
        }
        if (st == WEFT_OK) {
            st = weft__got(g, r2 = weft_sub(g, gvh, gvvv));
        }
        if (st == WEFT_OK) {
            st = weft__got(g, sc = weft_mul(g, icol, r2));
        }
        if (st == WEFT_OK) {
            st = mm(g, u, sc, &ur);
        }
        if (st == WEFT_OK) {
            st = weft__got(g, sum = weft_add(g, sum, ur));
        }
    }
    *out = sum;
    return st;
}

static weft_status_t svd_grad(weft_graph_t *g, const weft_apply_t *node,
                              weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    const svd_props_t *p = weft_op_props(weft_apply_op(node));
    weft_var_t *gs = output_grads[p->compute_uv ? 1 : 0], *a = weft_apply_input(node, 0);
    weft_var_t *gu = p->compute_uv ? output_grads[0] : NULL;
    weft_var_t *gvh = p->compute_uv ? output_grads[2] : NULL;
    if (!gs && !gu && !gvh) {
        return WEFT_OK;
    }
    const weft_type_t *ta = weft_var_type(a);
    int nd = weft_type_ndim(ta);
    int64_t m = weft_type_dim(ta, nd - 2), n = weft_type_dim(ta, nd - 1);
    bool square = m == n && m != WEFT_DIM_UNKNOWN; /* full u, vh are the reduced ones */
    if ((gu || gvh) && p->full_matrices && !square) {
        const char *file = "?";
        int line = 0;
        weft_apply_trace(node, &file, &line);
        return weft_graph_set_error(g, WEFT_ENOTIMPL, "Svd (built at %s:%d): no gradient "
                                    "through u or vh with full_matrices for a matrix that is "
                                    "not square (static lengths): their extra columns / rows "
                                    "are not unique (PyTensor refuses full_matrices too)", file,
                                    line);
    }
    weft_var_t *u = NULL, *vh = NULL, *s = NULL, *row = NULL, *us = NULL;
    if (p->compute_uv && (!p->full_matrices || square)) {
        u = weft_apply_output(node, 0);
        s = weft_apply_output(node, 1);
        vh = weft_apply_output(node, 2);
    } else {
        s = weft_svd(g, a, false, true, &u, &vh);
    }
    weft_status_t st = weft__got(g, s);
    if (st == WEFT_OK && (gu || gvh)) {
        return svd_grad_uv(g, u, s, vh, gu, gs, gvh, &input_grads[0]);
    }
    if (st == WEFT_OK) {
        st = as_row(g, gs, &row);
    }
    if (st == WEFT_OK) {
        st = weft__got(g, us = weft_mul(g, u, row));
    }
    return st == WEFT_OK ? mm(g, us, vh, &input_grads[0]) : st;
}

static int svd_default_output(const weft_op_t *op)
{
    const svd_props_t *p = weft_op_props(op);
    return p->compute_uv ? 1 : 0; /* s */
}

static int svd_props_print(const void *props, char *buf, size_t cap)
{
    const svd_props_t *p = props;
    return snprintf(buf, cap, "full_matrices=%d, compute_uv=%d", p->full_matrices ? 1 : 0,
                    p->compute_uv ? 1 : 0);
}

/* JSON props: {"full_matrices": true, "compute_uv": true}. */
static const weft__props_fields_t svd_fields = {
    sizeof(svd_props_t),
    {WEFT__PROPS_FIELD("full_matrices", WEFT__FIELD_I64_BOOL, svd_props_t, full_matrices),
     WEFT__PROPS_FIELD("compute_uv", WEFT__FIELD_I64_BOOL, svd_props_t, compute_uv)},
};
WEFT__PROPS_FIELDS_HOOKS(svd, svd_fields)

const weft_op_class_t weft__svd_class = {
    .size = sizeof(weft_op_class_t),
    .name = "Svd",
    .props_size = sizeof(svd_props_t),
    .props_print = svd_props_print,
    .props_to_json = svd_to_json,
    .props_from_json = svd_from_json,
    .make_node = svd_make_node,
    .perform = svd_perform,
    .default_output = svd_default_output,
    .grad = svd_grad,
};

/* ---- Eigh ------------------------------------------------------------------------ */

static weft_status_t eigh_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                    weft_var_t *const *in, size_t *n_out,
                                    const weft_type_t **out_types)
{
    const eigh_props_t *p = weft_op_props(op);
    if (n_in != 1) {
        return weft_graph_set_error(g, WEFT_EINVAL, "Eigh: takes 1 input, got %zu", n_in);
    }
    weft_status_t st = weft__batch_check_square(g, "Eigh", in[0], 0);
    if (st != WEFT_OK) {
        return st;
    }
    const weft_type_t *t = weft_var_type(in[0]);
    int64_t shape[WEFT_MAX_NDIM];
    int nd = weft__batch_type_dims(t, 0, shape);
    st = weft_type_tensor(g, weft_type_dtype(t), nd - 1, shape, &out_types[0]);
    *n_out = p->compute_v ? 2 : 1;
    if (p->compute_v) {
        out_types[1] = t;
    }
    return st;
}

static weft_status_t eigh_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                  weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    const eigh_props_t *p = weft_op_props(weft_apply_op(node));
    const weft_tensor_t *a = in[0];
    int nd = weft_tensor_ndim(a);
    int64_t n = weft_tensor_dim(a, nd - 1), batch = weft__batch_count(a, 2);
    weft_dtype_t dt = weft_tensor_dtype(a);
    int64_t es = (int64_t)weft_dtype_size(dt);
    weft_status_t st = WEFT_OK;
    if (weft_tensor_dim(a, nd - 2) != n) {
        return weft__linalg_shape_error(ctx, "Eigh", "the matrices are not square");
    }
    st = weft__linalg_fit(ctx, "Eigh", 1, &n);
    if (st == WEFT_OK) {
        st = weft__lapack_enter(ctx, "Eigh", n);
    }
    if (st == WEFT_OK) {
        st = weft_kernel_alloc_output(ctx, &outputs[0], dt, nd - 1, weft_tensor_shape(a));
    }
    if (st == WEFT_OK && p->compute_v) {
        st = weft_kernel_alloc_output(ctx, &outputs[1], dt, nd, weft_tensor_shape(a));
    }
    if (st != WEFT_OK || batch == 0 || n == 0) {
        return st;
    }
    int64_t nn = n * n;
    weft_tensor_t *buf = NULL;
    st = weft_kernel_scratch(ctx, dt, 1, &nn, &buf);
    char *wd = weft_tensor_data(outputs[0]);
    char *vd = p->compute_v ? weft_tensor_data(outputs[1]) : NULL;
    /* a row-major, read column-major, is a^T: its upper triangle is a's lower */
    char uplo = p->lower ? 'U' : 'L';
    for (int64_t i = 0; i < batch && st == WEFT_OK; i++) {
        void *w = weft_tensor_data(buf);
        weft__batch_load(a, 2, weft__batch_offset(a, 2, i), n, n, false, w);
        int info = lp_syevd(dt, p->compute_v, uplo, n, w, wd + i * n * es);
        if (info != 0) {
            st = weft_kernel_error(ctx, WEFT_ERANGE, info > 0 ? "Eigh: did not converge "
                                   "(info %d)" : "Eigh: LAPACK rejected the input (info %d: "
                                   "NaN in the matrix?)", info);
        } else if (vd) { /* the eigenvectors are LAPACK's columns: transpose */
            transpose_sq(dt, w, n, vd + i * nn * es);
        }
    }
    weft_kernel_scratch_done(ctx, buf);
    return st;
}

/* F o x with F_ij = 1/(w_j - w_i) off the diagonal, 0 on it. */
static weft_status_t eigh_f_times(weft_graph_t *g, weft_var_t *w, weft_var_t *x,
                                  weft_var_t **out)
{
    weft_var_t *wc = NULL, *wr = NULL, *d = NULL, *r = NULL, *lo = NULL, *up = NULL, *f = NULL;
    weft_status_t st = as_col(g, w, &wc);
    if (st == WEFT_OK) {
        st = as_row(g, w, &wr);
    }
    if (st == WEFT_OK) {
        st = weft__got(g, d = weft_sub(g, wr, wc));
    }
    if (st == WEFT_OK) {
        st = weft__got(g, r = weft_scalar_binary(g, WEFT_ELEMWISE_DIV, 1.0, d));
    }
    if (st == WEFT_OK) { /* the diagonal (1/0) becomes a true zero */
        st = weft__trimask(g, r, true, 0.0, &lo);
    }
    if (st == WEFT_OK) {
        st = weft__trimask(g, r, false, 0.0, &up);
    }
    if (st == WEFT_OK) {
        st = weft__got(g, f = weft_add(g, lo, up));
    }
    return st == WEFT_OK ? weft__got(g, *out = weft_mul(g, f, x)) : st;
}

static weft_status_t eigh_grad(weft_graph_t *g, const weft_apply_t *node,
                               weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    const eigh_props_t *p = weft_op_props(weft_apply_op(node));
    weft_var_t *a = weft_apply_input(node, 0), *gw = output_grads[0];
    weft_var_t *gv = p->compute_v ? output_grads[1] : NULL;
    if (!gw && !gv) {
        return WEFT_OK;
    }
    weft_var_t *v = NULL, *w = weft_eigh(g, a, p->lower != 0, &v);
    weft_var_t *inner = NULL, *vt = NULL, *m = NULL, *fm = NULL, *vi = NULL, *gm = NULL;
    weft_var_t *gt = NULL, *sym = NULL, *row = NULL;
    weft_status_t st = weft__got(g, w);
    if (st == WEFT_OK && gw) { /* v diag(gw) v^T */
        st = as_row(g, gw, &row);
        if (st == WEFT_OK) {
            st = weft__got(g, inner = weft_mul(g, v, row));
        }
    }
    if (st == WEFT_OK) {
        st = weft__lg_t(g, v, &vt);
    }
    if (st == WEFT_OK && gv) { /* + v (F o (v^T gv)) */
        st = mm(g, vt, gv, &m);
        if (st == WEFT_OK) {
            st = eigh_f_times(g, w, m, &fm);
        }
        if (st == WEFT_OK) {
            st = mm(g, v, fm, &vi);
        }
        if (st == WEFT_OK) {
            st = weft__got(g, inner = inner ? weft_add(g, inner, vi) : vi);
        }
    }
    if (st == WEFT_OK) {
        st = mm(g, inner, vt, &gm);
    }
    if (st == WEFT_OK) {
        st = weft__lg_t(g, gm, &gt);
    }
    if (st == WEFT_OK) {
        st = weft__got(g, sym = weft_add(g, gm, gt));
    }
    return st == WEFT_OK ? weft__trimask(g, sym, p->lower != 0, 0.5, &input_grads[0]) : st;
}

static int eigh_props_print(const void *props, char *buf, size_t cap)
{
    const eigh_props_t *p = props;
    return snprintf(buf, cap, "UPLO=%s, compute_v=%d", p->lower ? "L" : "U",
                    p->compute_v ? 1 : 0);
}

/* JSON props: {"lower": true, "compute_v": true}. */
static const weft__props_fields_t eigh_fields = {
    sizeof(eigh_props_t),
    {WEFT__PROPS_FIELD("lower", WEFT__FIELD_I64_BOOL, eigh_props_t, lower),
     WEFT__PROPS_FIELD("compute_v", WEFT__FIELD_I64_BOOL, eigh_props_t, compute_v)},
};
WEFT__PROPS_FIELDS_HOOKS(eigh, eigh_fields)

static int eigh_default_output(const weft_op_t *op)
{
    (void)op;
    return 0; /* w */
}

const weft_op_class_t weft__eigh_class = {
    .size = sizeof(weft_op_class_t),
    .name = "Eigh",
    .props_size = sizeof(eigh_props_t),
    .props_print = eigh_props_print,
    .props_to_json = eigh_to_json,
    .props_from_json = eigh_from_json,
    .make_node = eigh_make_node,
    .perform = eigh_perform,
    .default_output = eigh_default_output,
    .grad = eigh_grad,
};

/* ---- Qr ------------------------------------------------------------------------------ */

static weft_status_t qr_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                  weft_var_t *const *in, size_t *n_out,
                                  const weft_type_t **out_types)
{
    svd_props_t sp = {0, 1}; /* Qr's shapes are reduced Svd's u and vh */
    (void)op;
    static const int any[1] = {-1};
    weft_dtype_t dt;
    weft_status_t st = weft__linalg_check(g, "Qr", n_in, in, 1, any, &dt);
    if (st == WEFT_OK && weft_type_ndim(weft_var_type(in[0])) < 2) {
        return weft_graph_set_error(g, WEFT_ETYPE, "Qr: input 0 has %d dims (need 2 or more)",
                                    weft_type_ndim(weft_var_type(in[0])));
    }
    if (st != WEFT_OK) {
        return st;
    }
    int64_t shape[WEFT_MAX_NDIM];
    int nd = weft__batch_type_dims(weft_var_type(in[0]), 0, shape);
    svd_shapes_t o;
    svd_shapes(&sp, nd, shape, &o);
    *n_out = 2;
    st = weft_type_tensor(g, dt, nd, o.u, &out_types[0]);
    return st == WEFT_OK ? weft_type_tensor(g, dt, nd, o.vh, &out_types[1]) : st;
}

static weft_status_t qr_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    (void)node;
    const weft_tensor_t *a = in[0];
    int nd = weft_tensor_ndim(a);
    int64_t m = weft_tensor_dim(a, nd - 2), n = weft_tensor_dim(a, nd - 1), k = m < n ? m : n;
    int64_t dims[2] = {m, n}, batch = weft__batch_count(a, 2);
    weft_dtype_t dt = weft_tensor_dtype(a);
    int64_t es = (int64_t)weft_dtype_size(dt);
    svd_props_t sp = {0, 1};
    svd_shapes_t o;
    svd_shapes(&sp, nd, weft_tensor_shape(a), &o);
    weft_status_t st = weft__linalg_fit(ctx, "Qr", 2, dims);
    if (st == WEFT_OK) {
        st = weft__lapack_enter(ctx, "Qr", k);
    }
    if (st == WEFT_OK) {
        st = weft_kernel_alloc_output(ctx, &outputs[0], dt, nd, o.u);
    }
    if (st == WEFT_OK) {
        st = weft_kernel_alloc_output(ctx, &outputs[1], dt, nd, o.vh);
    }
    if (st != WEFT_OK || batch == 0 || k == 0) {
        return st;
    }
    int64_t mn = m * n, kk = k;
    weft_tensor_t *buf = NULL, *tau = NULL;
    st = weft_kernel_scratch(ctx, dt, 1, &mn, &buf);
    if (st == WEFT_OK) {
        st = weft_kernel_scratch(ctx, dt, 1, &kk, &tau);
    }
    char *qd = weft_tensor_data(outputs[0]), *rd = weft_tensor_data(outputs[1]);
    for (int64_t i = 0; i < batch && st == WEFT_OK; i++) {
        void *w = weft_tensor_data(buf), *t = weft_tensor_data(tau);
        weft__batch_load(a, 2, weft__batch_offset(a, 2, i), m, n, true, w);
        int info = lp_geqrf_orgqr(dt, false, m, n, w, t);
        if (info == 0) {
#define QR_R_CALL_(ctype, dtype) \
    if (dt == dtype) qr_r_##ctype(w, m, n, k, (ctype *)(void *)(rd + i * k * n * es));
            WEFT__LAPACK_TYPES(QR_R_CALL_)
#undef QR_R_CALL_
            info = lp_geqrf_orgqr(dt, true, m, n, w, t);
        }
        if (info != 0) {
            st = weft_kernel_error(ctx, WEFT_ERANGE, "Qr: LAPACK rejected the input (info %d: "
                                   "NaN in the matrix?)", info);
            break;
        }
#define QR_Q_CALL_(ctype, dtype) \
    if (dt == dtype) qr_q_##ctype(w, m, k, (ctype *)(void *)(qd + i * m * k * es));
        WEFT__LAPACK_TYPES(QR_Q_CALL_)
#undef QR_Q_CALL_
    }
    weft_kernel_scratch_done(ctx, buf);
    weft_kernel_scratch_done(ctx, tau);
    return st;
}

/* PyTensor's QR gradient (m >= n): M = R gR^T - gQ^T Q,
 * dA = (gQ + Q copyltu(M)) R^-T, copyltu(M) = tril(M) + tril(M, -1)^T. */
static weft_status_t qr_grad(weft_graph_t *g, const weft_apply_t *node,
                             weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    weft_var_t *a = weft_apply_input(node, 0), *q = weft_apply_output(node, 0);
    weft_var_t *r = weft_apply_output(node, 1), *gq = output_grads[0], *gr = output_grads[1];
    if (!gq && !gr) {
        return WEFT_OK;
    }
    const weft_type_t *t = weft_var_type(a);
    int nd = weft_type_ndim(t);
    int64_t m = weft_type_dim(t, nd - 2), n = weft_type_dim(t, nd - 1);
    if (m == WEFT_DIM_UNKNOWN || n == WEFT_DIM_UNKNOWN || m < n) {
        return weft_graph_set_error(g, WEFT_ENOTIMPL, "Qr: gradient only for matrices with "
                                    "static lengths m >= n");
    }
    weft_var_t *mr = NULL, *tmp = NULL, *t1 = NULL, *lo = NULL, *slo = NULL, *slot = NULL;
    weft_var_t *cl = NULL, *qc = NULL, *b = NULL;
    weft_status_t st = WEFT_OK;
    if (gr) { /* R gR^T */
        st = weft__lg_t(g, gr, &tmp);
        if (st == WEFT_OK) {
            st = mm(g, r, tmp, &mr);
        }
    }
    if (st == WEFT_OK && gq) { /* - gQ^T Q */
        st = weft__lg_t(g, gq, &tmp);
        if (st == WEFT_OK) {
            st = mm(g, tmp, q, &t1);
        }
        if (st == WEFT_OK) {
            st = weft__got(g, mr = mr ? weft_sub(g, mr, t1) : weft_neg(g, t1));
        }
    }
    if (st == WEFT_OK) {
        st = weft__trimask(g, mr, true, 1.0, &lo);
    }
    if (st == WEFT_OK) {
        st = weft__trimask(g, mr, true, 0.0, &slo);
    }
    if (st == WEFT_OK) {
        st = weft__lg_t(g, slo, &slot);
    }
    if (st == WEFT_OK) {
        st = weft__got(g, cl = weft_add(g, lo, slot));
    }
    if (st == WEFT_OK) {
        st = mm(g, q, cl, &qc);
    }
    if (st == WEFT_OK) {
        st = weft__got(g, b = gq ? weft_add(g, gq, qc) : qc);
    }
    /* X R^T = b, i.e. R X^T = b^T: the upper triangular solve on each matrix */
    weft_var_t *bt = NULL, *xt = NULL;
    if (st == WEFT_OK) {
        st = weft__lg_t(g, b, &bt);
    }
    if (st == WEFT_OK) {
        st = weft__got(g, xt = weft_solve_triangular(g, r, bt, false, WEFT_TRANS_N, false));
    }
    return st == WEFT_OK ? weft__lg_t(g, xt, &input_grads[0]) : st;
}

const weft_op_class_t weft__qr_class = {
    .size = sizeof(weft_op_class_t),
    .name = "Qr",
    .make_node = qr_make_node,
    .perform = qr_perform,
    .default_output = eigh_default_output, /* q */
    .grad = qr_grad,
};

/* ---- constructors ------------------------------------------------------------------ */

/* Builds cls{props} on a; *o1, *o2 get outputs i1, i2 of the node (when asked). */
static weft_var_t *decomp_ctor(weft_graph_t *g, const weft_op_class_t *cls, const void *props,
                               const char *ctor, weft_var_t *a, weft_var_t **o1, int i1,
                               weft_var_t **o2, int i2, const char *file, int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t st = weft__linalg_args(g, cls->name, 1, &a, file, line, &out);
    if (st == WEFT_OK) {
        st = weft__linalg_call(g, cls, props, 1, &a, file, line, &out);
    }
    out = weft__ctor_end(g, st, out, ctor, file, line);
    weft_apply_t *node = out ? weft_var_owner(out) : NULL;
    if (o1) {
        *o1 = node ? weft_apply_output(node, (size_t)i1) : NULL;
    }
    if (o2) {
        *o2 = node ? weft_apply_output(node, (size_t)i2) : NULL;
    }
    return out;
}

weft_var_t *weft_svd_at(weft_graph_t *g, weft_var_t *a, bool full_matrices, bool compute_uv,
                        weft_var_t **u, weft_var_t **vh, const char *file, int line)
{
    svd_props_t p;
    memset(&p, 0, sizeof p);
    p.full_matrices = full_matrices ? 1 : 0;
    p.compute_uv = compute_uv ? 1 : 0;
    return decomp_ctor(g, &weft__svd_class, &p, "weft_svd", a, compute_uv ? u : NULL, 0,
                       compute_uv ? vh : NULL, 2, file, line);
}

weft_var_t *weft_eigh_at(weft_graph_t *g, weft_var_t *a, bool lower, weft_var_t **v,
                         const char *file, int line)
{
    eigh_props_t p;
    memset(&p, 0, sizeof p);
    p.lower = lower ? 1 : 0;
    p.compute_v = 1;
    return decomp_ctor(g, &weft__eigh_class, &p, "weft_eigh", a, v, 1, NULL, 0, file, line);
}

weft_var_t *weft_qr_at(weft_graph_t *g, weft_var_t *a, weft_var_t **r, const char *file,
                       int line)
{
    return decomp_ctor(g, &weft__qr_class, NULL, "weft_qr", a, r, 1, NULL, 0, file, line);
}

weft_var_t *weft_eigvalsh_at(weft_graph_t *g, weft_var_t *a, bool lower, const char *file,
                             int line)
{
    eigh_props_t p;
    memset(&p, 0, sizeof p);
    p.lower = lower ? 1 : 0;
    return decomp_ctor(g, &weft__eigh_class, &p, "weft_eigvalsh", a, NULL, 0, NULL, 0, file,
                       line);
}
