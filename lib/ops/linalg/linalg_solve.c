/* The LU- and Cholesky-based solver ops (weft/linalg_lapack.h) on stacks of
 * matrices (..., n, n), one LAPACK call per matrix with the node's LAPACK
 * thread setting (one OpenBLAS thread by default, so the bits do not depend
 * on the worker count):
 * - Solve(a, b): a x = b (?getrf on a^T + ?getrs 'T'); singular: node error;
 * - Inv(a): ?getrf + ?getri; singular: node error;
 * - Det(a), SLogDet(a) -> (sign, logabsdet): from ?getrf as NumPy does
 *   (det = sign * exp(logabsdet), accumulated in the dtype); singular: 0,
 *   and (0, -inf);
 * - CholeskySolve(l, b): (l l^T) x = b with the lower factor l (?potrs).
 * Gradients (Giles 2008, "Collected matrix derivative results"):
 * - Solve: db = solve(a^T, g), da = -db x^T;
 * - Inv: da = -y^T g y^T;
 * - Det: da = g det(a) inv(a)^T; SLogDet: da = g_logabsdet inv(a)^T (sign:
 *   piecewise constant, no gradient);
 * - Lstsq (?gelsd, one matrix): full column rank, z = (a^T a)^-1 gx,
 *   da = (b - a x) z^T - a z x^T, db = a z;
 * - CholeskySolve: db = cho_solve(l, g), dA = -db x^T, dl = tril((dA + dA^T)
 *   tril(l)) (only l's lower triangle is read). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "graph/ctor_int.h"
#include "lapack_int.h"
#include "props_fields_int.h"
#include "weft/array_ops.h"
#include "weft/elemwise.h"
#include "weft/linalg.h"
#include "weft/linalg_lapack.h"
#include "weft/shape_ops.h"

/* ---- kernels' shared pieces ------------------------------------------------ */

/* Scratch of one LU: the n x n factor and n pivots. */
typedef struct lu_scratch {
    weft_tensor_t *lu, *piv, *rhs;
} lu_scratch_t;

static weft_status_t lu_scratch_get(weft_kernel_ctx_t *ctx, weft_dtype_t dt, int64_t n,
                                    int64_t rhs_len, lu_scratch_t *s)
{
    int64_t nn = n * n > 0 ? n * n : 1, np = n > 0 ? n : 1;
    memset(s, 0, sizeof *s);
    weft_status_t st = weft_kernel_scratch(ctx, dt, 1, &nn, &s->lu);
    if (st == WEFT_OK) {
        st = weft_kernel_scratch(ctx, WEFT_INT32, 1, &np, &s->piv);
    }
    if (st == WEFT_OK && rhs_len > 0) {
        st = weft_kernel_scratch(ctx, dt, 1, &rhs_len, &s->rhs);
    }
    return st;
}

static void lu_scratch_done(weft_kernel_ctx_t *ctx, lu_scratch_t *s)
{
    weft_kernel_scratch_done(ctx, s->lu);
    weft_kernel_scratch_done(ctx, s->piv);
    weft_kernel_scratch_done(ctx, s->rhs);
}

/* The singular-matrix node error, naming the batch entry of a stack. */
static weft_status_t singular_error(weft_kernel_ctx_t *ctx, const char *opname, int64_t batch,
                                    int64_t index, int info)
{
    if (batch > 1) {
        return weft_kernel_error(ctx, WEFT_ERANGE, "%s: matrix %lld of the batch is singular "
                                 "(U[%d,%d] = 0)", opname, (long long)index, info - 1, info - 1);
    }
    return weft_kernel_error(ctx, WEFT_ERANGE, "%s: the matrix is singular (U[%d,%d] = 0)",
                             opname, info - 1, info - 1);
}

static weft_status_t lapack_error(weft_kernel_ctx_t *ctx, const char *opname, int info)
{
    return weft_kernel_error(ctx, WEFT_ERANGE, "%s: LAPACK rejected argument %d", opname,
                             -info);
}

/* Checks a's last two lengths are equal and fit BLAS's int, and enters the
 * LAPACK thread setting; *n is the order. */
static weft_status_t square_enter(weft_kernel_ctx_t *ctx, const char *opname,
                                  const weft_tensor_t *a, int64_t *n)
{
    int nd = weft_tensor_ndim(a);
    *n = weft_tensor_dim(a, nd - 1);
    if (weft_tensor_dim(a, nd - 2) != *n) {
        return weft__linalg_shape_error(ctx, opname, "the matrices are not square");
    }
    weft_status_t st = weft__linalg_fit(ctx, opname, 1, n);
    return st == WEFT_OK ? weft__lapack_enter(ctx, opname, *n) : st;
}

/* ---- make_node ---------------------------------------------------------------- */

/* Whether b is a stack of vectors (..., n) rather than of matrices
 * (..., n, k): NumPy 1.24's rule in np.linalg.solve, b.ndim == a.ndim - 1. */
static int rhs_core(int na, int nb)
{
    return nb == na - 1 ? 1 : 2;
}

/* (a, b) of Solve / CholeskySolve: a square stack (..., n, n); b a stack of
 * vectors (..., n) (rank a's - 1) or of matrices (..., n, k) (rank >= 2),
 * the batch axes broadcast as NumPy's. */
static weft_status_t solve_types(weft_graph_t *g, const char *opname, size_t n_in,
                                 weft_var_t *const *in, size_t *n_out,
                                 const weft_type_t **out_types)
{
    static const int any[2] = {-1, -1};
    weft_dtype_t dt;
    weft_status_t st = weft__linalg_check(g, opname, n_in, in, 2, any, &dt);
    if (st == WEFT_OK) {
        st = weft__batch_check_square(g, opname, in[0], 0);
    }
    if (st != WEFT_OK) {
        return st;
    }
    int na = weft_type_ndim(weft_var_type(in[0])), nb = weft_type_ndim(weft_var_type(in[1]));
    int core = rhs_core(na, nb);
    if (nb < core) {
        return weft_graph_set_error(g, WEFT_ETYPE, "%s: input 1 has %d dims (need %d for a "
                                    "stack of vectors, or 2 or more for a stack of matrices)",
                                    opname, nb, na - 1);
    }
    *n_out = 1;
    return weft__bcast_solve_type(g, opname, in, core, &out_types[0]);
}

/* One square stack in; the output drops `drop` trailing axes (0: Inv, 2: Det). */
static weft_status_t square_types(weft_graph_t *g, const char *opname, size_t n_in,
                                  weft_var_t *const *in, int drop, size_t n_out_want,
                                  size_t *n_out, const weft_type_t **out_types)
{
    if (n_in != 1) {
        return weft_graph_set_error(g, WEFT_EINVAL, "%s: takes 1 input, got %zu", opname, n_in);
    }
    weft_status_t st = weft__batch_check_square(g, opname, in[0], 0);
    if (st != WEFT_OK) {
        return st;
    }
    const weft_type_t *t = weft_var_type(in[0]);
    int64_t shape[WEFT_MAX_NDIM];
    int nd = weft__batch_type_dims(t, drop, shape);
    const weft_type_t *ot = NULL;
    st = weft_type_tensor(g, weft_type_dtype(t), nd, shape, &ot);
    *n_out = n_out_want;
    for (size_t i = 0; i < n_out_want; i++) {
        out_types[i] = ot;
    }
    return st;
}

static weft_status_t solve_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                     weft_var_t *const *in, size_t *n_out,
                                     const weft_type_t **out_types)
{
    return solve_types(g, weft_op_name(op), n_in, in, n_out, out_types);
}

static weft_status_t inv_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                   weft_var_t *const *in, size_t *n_out,
                                   const weft_type_t **out_types)
{
    return square_types(g, weft_op_name(op), n_in, in, 0, 1, n_out, out_types);
}

static weft_status_t det_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                   weft_var_t *const *in, size_t *n_out,
                                   const weft_type_t **out_types)
{
    bool two = weft_op_class(op) == &weft__slogdet_class;
    return square_types(g, weft_op_name(op), n_in, in, 2, two ? 2 : 1, n_out, out_types);
}

/* ---- Solve / CholeskySolve kernels -------------------------------------------- */

/* Checks b against a at run time (lengths, broadcast batch) and allocates
 * x; *k is the number of right-hand sides. */
static weft_status_t rhs_prepare(weft_kernel_ctx_t *ctx, const char *opname,
                                 const weft_tensor_t *a, const weft_tensor_t *b, int core,
                                 int64_t n, weft__bcast_t *t, int64_t *k, weft_tensor_t **out)
{
    int nb = weft_tensor_ndim(b);
    if (weft_tensor_dim(b, nb - core) != n || !weft__bcast_init(a, b, core, t)) {
        return weft__linalg_shape_error(ctx, opname, "b's length or batch does not match a's");
    }
    *k = core == 1 ? 1 : weft_tensor_dim(b, nb - 1);
    int64_t shape[WEFT_MAX_NDIM];
    int nd = weft__bcast_out_shape(t, core, n, *k, shape);
    weft_status_t st = weft__linalg_fit(ctx, opname, 1, k);
    return st == WEFT_OK ? weft_kernel_alloc_output(ctx, out, weft_tensor_dtype(b), nd, shape)
                         : st;
}

/* b's matrix (or vector) at element offset ob solved into x (row-major
 * n x k): one column goes to LAPACK's ?getrs / ?potrs as it is; several are
 * solved in place on x's row-major memory read column-major (x^T), which
 * needs no transposed copy. */
static int rhs_solve(const weft_tensor_t *b, int core, int64_t ob, int64_t n, int64_t k,
                     bool cho, const lu_scratch_t *s, void *x)
{
    weft_dtype_t dt = weft_tensor_dtype(b);
    const void *lu = weft_tensor_data(s->lu);
    const int32_t *piv = cho ? NULL : weft_tensor_data(s->piv);
    weft__batch_load(b, core, ob, n, k, false, x);
    if (k > 1) {
        if (cho) {
            weft__lapack_cho_solve_rows(dt, n, k, lu, x);
        } else {
            weft__lapack_lu_solve_rows(dt, n, k, lu, piv, x);
        }
        return 0;
    }
    /* lu holds the LU of a^T (or l^T, the upper Cholesky factor) */
    return cho ? weft__lapack_potrs(dt, false, n, 1, lu, x)
               : weft__lapack_getrs(dt, true, n, 1, lu, piv, x);
}

/* Solve and CholeskySolve: factor (or load) each matrix of a once per run
 * of output entries that read it (a broadcast a is factored once), then
 * solve each entry's right side. */
static weft_status_t solve_run(weft_kernel_ctx_t *ctx, const char *opname, bool cho,
                               weft_tensor_t *const *in, weft_tensor_t **outputs)
{
    const weft_tensor_t *a = in[0], *b = in[1];
    int core = rhs_core(weft_tensor_ndim(a), weft_tensor_ndim(b));
    weft__bcast_t t;
    int64_t n = 0, k = 0;
    weft_status_t st = square_enter(ctx, opname, a, &n);
    if (st == WEFT_OK) {
        st = rhs_prepare(ctx, opname, a, b, core, n, &t, &k, &outputs[0]);
    }
    if (st != WEFT_OK || n == 0 || k == 0 || t.count == 0) {
        return st;
    }
    weft_dtype_t dt = weft_tensor_dtype(a);
    lu_scratch_t s;
    st = lu_scratch_get(ctx, dt, n, 0, &s);
    char *x = weft_tensor_data(outputs[0]);
    int64_t xstride = n * k * (int64_t)weft_dtype_size(dt), loaded = 0;
    bool have = false; /* whether s holds the factor of a's matrix at offset loaded */
    for (int64_t i = 0; i < t.count && st == WEFT_OK; i++) {
        int64_t oa = 0, ob = 0;
        weft__bcast_offsets(&t, i, &oa, &ob);
        int info = 0;
        if (!have || oa != loaded) {
            void *lu = weft_tensor_data(s.lu);
            weft__batch_load(a, 2, oa, n, n, false, lu);
            info = cho ? 0 : weft__lapack_getrf(dt, n, lu, weft_tensor_data(s.piv));
            have = info == 0;
            loaded = oa;
        }
        if (info > 0) {
            st = singular_error(ctx, opname, t.count, i, info);
            break;
        }
        info = info < 0 ? info : rhs_solve(b, core, ob, n, k, cho, &s, x + i * xstride);
        if (info != 0) {
            st = lapack_error(ctx, opname, info);
        }
    }
    lu_scratch_done(ctx, &s);
    return st;
}

static weft_status_t solve_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                   weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    (void)node;
    return solve_run(ctx, "Solve", false, in, outputs);
}

static weft_status_t cho_solve_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                       weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    (void)node;
    return solve_run(ctx, "CholeskySolve", true, in, outputs);
}

/* ---- Inv ------------------------------------------------------------------------ */

static weft_status_t inv_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                 weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    (void)node;
    const weft_tensor_t *a = in[0];
    int64_t n = 0;
    weft_dtype_t dt = weft_tensor_dtype(a);
    weft_status_t st = square_enter(ctx, "Inv", a, &n);
    if (st == WEFT_OK) {
        st = weft_kernel_alloc_output(ctx, &outputs[0], dt, weft_tensor_ndim(a),
                                      weft_tensor_shape(a));
    }
    int64_t batch = weft__batch_count(a, 2);
    if (st != WEFT_OK || n == 0 || batch == 0) {
        return st;
    }
    lu_scratch_t s;
    int64_t lwork = weft__lapack_getri_lwork(dt, n);
    st = lu_scratch_get(ctx, dt, n, lwork, &s); /* s.rhs: getri's workspace */
    char *y = weft_tensor_data(outputs[0]);
    int32_t *piv = st == WEFT_OK ? weft_tensor_data(s.piv) : NULL;
    for (int64_t i = 0; i < batch && st == WEFT_OK; i++) {
        /* a^T read column-major; inv(a^T) = inv(a)^T, read back row-major: inv(a) */
        void *yi = y + i * n * n * (int64_t)weft_dtype_size(dt);
        weft__batch_load(a, 2, weft__batch_offset(a, 2, i), n, n, false, yi);
        int info = weft__lapack_getrf(dt, n, yi, piv);
        if (info > 0) {
            st = singular_error(ctx, "Inv", batch, i, info);
        } else if (info < 0 || (info = weft__lapack_getri(dt, n, yi, piv, weft_tensor_data(s.rhs),
                                                               lwork)) != 0) {
            st = lapack_error(ctx, "Inv", info);
        }
    }
    lu_scratch_done(ctx, &s);
    return st;
}

/* ---- Det / SLogDet ---------------------------------------------------------------- */

/* sign and log|det| from the LU of one matrix, in the dtype, as NumPy's
 * umath_linalg (slogdet_single_element): the pivots' parity, then the sum of
 * log|u_ii| with a sign flip for each negative u_ii. */
#define SLOGDET_(ctype, dtype)                                                               \
    static void slogdet_##ctype(const ctype *lu, const int32_t *piv, int64_t n, ctype *sign, \
                                ctype *logdet)                                               \
    {                                                                                        \
        int flips = 0;                                                                       \
        for (int64_t i = 0; i < n; i++) {                                                    \
            flips += piv[i] != (int32_t)(i + 1);                                             \
        }                                                                                    \
        ctype s = (flips & 1) ? (ctype)-1 : (ctype)1, acc = 0;                               \
        for (int64_t i = 0; i < n; i++) {                                                    \
            ctype e = lu[i * n + i];                                                         \
            if (e < 0) {                                                                     \
                s = -s;                                                                      \
                e = -e;                                                                      \
            }                                                                                \
            acc += LG_LOG_##ctype(e);                                                        \
        }                                                                                    \
        *sign = s;                                                                           \
        *logdet = acc;                                                                       \
    }
#define LG_LOG_float logf
#define LG_LOG_double log
#define LG_EXP_float expf
#define LG_EXP_double exp
WEFT__LAPACK_TYPES(SLOGDET_)
#undef SLOGDET_

/* Entry i's (sign, logdet) into sign[i], logdet[i]; a singular matrix gives
 * (0, -inf) as NumPy; det = sign * exp(logdet) when det_only. */
#define DET_STORE_(ctype, dtype)                                                           \
    static void det_store_##ctype(int info, const void *lu, const int32_t *piv, int64_t n, \
                                  void *sign, void *logdet, int64_t i, bool det_only)      \
    {                                                                                      \
        ctype s = 0, l = -(ctype)INFINITY;                                                 \
        if (info == 0) {                                                                   \
            slogdet_##ctype(lu, piv, n, &s, &l);                                           \
        }                                                                                  \
        if (det_only) {                                                                    \
            ((ctype *)sign)[i] = s * LG_EXP_##ctype(l);                                    \
        } else {                                                                           \
            ((ctype *)sign)[i] = s;                                                        \
            ((ctype *)logdet)[i] = l;                                                      \
        }                                                                                  \
    }
WEFT__LAPACK_TYPES(DET_STORE_)
#undef DET_STORE_

static weft_status_t det_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                 weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    bool det_only = weft_op_class(weft_apply_op(node)) == &weft__det_class;
    const char *opname = det_only ? "Det" : "SLogDet";
    const weft_tensor_t *a = in[0];
    int64_t n = 0;
    weft_dtype_t dt = weft_tensor_dtype(a);
    int nd = weft_tensor_ndim(a) - 2;
    weft_status_t st = square_enter(ctx, opname, a, &n);
    for (int o = 0; o < (det_only ? 1 : 2) && st == WEFT_OK; o++) {
        st = weft_kernel_alloc_output(ctx, &outputs[o], dt, nd, weft_tensor_shape(a));
    }
    int64_t batch = weft__batch_count(a, 2);
    lu_scratch_t s;
    memset(&s, 0, sizeof s);
    if (st == WEFT_OK && batch > 0) {
        st = lu_scratch_get(ctx, dt, n, 0, &s);
    }
    void *sign = st == WEFT_OK ? weft_tensor_data(outputs[0]) : NULL;
    void *logdet = st == WEFT_OK && !det_only ? weft_tensor_data(outputs[1]) : NULL;
    for (int64_t i = 0; i < batch && st == WEFT_OK; i++) {
        void *lu = weft_tensor_data(s.lu);
        weft__batch_load(a, 2, weft__batch_offset(a, 2, i), n, n, false, lu);
        int info = n == 0 ? 0 : weft__lapack_getrf(dt, n, lu, weft_tensor_data(s.piv));
        if (info < 0) {
            st = lapack_error(ctx, opname, info);
            break;
        }
#define DET_CALL_(ctype, dtype) \
    if (dt == dtype)            \
        det_store_##ctype(info, lu, weft_tensor_data(s.piv), n, sign, logdet, i, det_only);
        WEFT__LAPACK_TYPES(DET_CALL_)
#undef DET_CALL_
    }
    lu_scratch_done(ctx, &s);
    return st;
}

static int slogdet_default_output(const weft_op_t *op)
{
    (void)op;
    return 1; /* logabsdet; the sign is output 0 */
}

/* ---- gradients --------------------------------------------------------------------- */

/* The solver applied to the output gradient gz: solve(a^T, gz) (cho: the
 * same factor, cho_solve(l, gz)). A stack of vectors gz (..., n) is solved
 * as the stack of columns (..., n, 1): its rank may exceed a's - 1 once the
 * batch axes broadcast, where NumPy's rule would read it as matrices. */
static weft_status_t grad_rhs(weft_graph_t *g, bool cho, weft_var_t *a, weft_var_t *gz,
                              bool vec, weft_var_t **out)
{
    static const int last[1] = {-1};
    weft_var_t *m = a, *col = gz;
    weft_status_t st = cho ? WEFT_OK : weft__lg_t(g, a, &m);
    if (st == WEFT_OK && vec) {
        st = weft__lg_new_axis(g, gz, weft_type_ndim(weft_var_type(gz)), &col);
    }
    if (st == WEFT_OK) {
        st = weft__got(g, *out = cho ? weft_cholesky_solve(g, m, col) : weft_solve(g, m, col));
    }
    return st == WEFT_OK && vec ? weft__got(g, *out = weft_squeeze(g, *out, 1, last)) : st;
}

/* db (summed to b's shape in gb) and da = -db x^T (summed to a's shape in
 * ga, cho: before the factor's rule) of x = solve(a, b) or cho_solve. */
static weft_status_t solve_grads(weft_graph_t *g, const weft_apply_t *node, bool cho,
                                 weft_var_t *gz, weft_var_t **ga, weft_var_t **gb)
{
    weft_var_t *a = weft_apply_input(node, 0), *b = weft_apply_input(node, 1);
    weft_var_t *db = NULL, *da = NULL;
    bool vec = rhs_core(weft_type_ndim(weft_var_type(a)), weft_type_ndim(weft_var_type(b))) == 1;
    weft_status_t st = grad_rhs(g, cho, a, gz, vec, &db);
    if (st == WEFT_OK) {
        st = weft__lg_neg_outer(g, cho ? "CholeskySolve" : "Solve", db,
                                weft_apply_output(node, 0), vec, &da);
    }
    if (st == WEFT_OK) {
        st = weft__lg_sum_to(g, da, a, ga);
    }
    return st == WEFT_OK ? weft__lg_sum_to(g, db, b, gb) : st;
}

static weft_status_t solve_grad(weft_graph_t *g, const weft_apply_t *node,
                                weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    if (!output_grads[0]) {
        return WEFT_OK;
    }
    return solve_grads(g, node, false, output_grads[0], &input_grads[0], &input_grads[1]);
}

static weft_status_t inv_grad(weft_graph_t *g, const weft_apply_t *node,
                              weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    weft_var_t *gz = output_grads[0], *y = weft_apply_output(node, 0);
    weft_var_t *yt = NULL, *p = NULL, *q = NULL;
    if (!gz) {
        return WEFT_OK;
    }
    weft_status_t st = weft__lg_t(g, y, &yt);
    if (st == WEFT_OK) {
        st = weft__lg_mm(g, "Inv", yt, gz, &p);
    }
    if (st == WEFT_OK) {
        st = weft__lg_mm(g, "Inv", p, yt, &q);
    }
    return st == WEFT_OK ? weft__lg_neg(g, q, &input_grads[0]) : st;
}

/* s[..., None, None] * inv(a)^T: the gradient of log|det a| scaled by s. */
static weft_status_t grad_scaled_inv_t(weft_graph_t *g, weft_var_t *a, weft_var_t *s,
                                       weft_var_t **out)
{
    int nb = weft_type_ndim(weft_var_type(s));
    int order[WEFT_MAX_NDIM];
    for (int d = 0; d < nb; d++) {
        order[d] = d;
    }
    order[nb] = WEFT_DIMSHUFFLE_NEW;
    order[nb + 1] = WEFT_DIMSHUFFLE_NEW;
    weft_var_t *ai = NULL, *ait = NULL, *se = NULL;
    weft_status_t st = weft__got(g, ai = weft_inv(g, a));
    if (st == WEFT_OK) {
        st = weft__lg_t(g, ai, &ait);
    }
    if (st == WEFT_OK) {
        st = weft__got(g, se = weft_dimshuffle(g, s, nb + 2, order));
    }
    return st == WEFT_OK ? weft__got(g, *out = weft_mul(g, se, ait)) : st;
}

static weft_status_t det_grad(weft_graph_t *g, const weft_apply_t *node,
                              weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    weft_var_t *gz = output_grads[0], *d = weft_apply_output(node, 0), *s = NULL;
    if (!gz) {
        return WEFT_OK;
    }
    weft_status_t st = weft__got(g, s = weft_mul(g, gz, d));
    return st == WEFT_OK ? grad_scaled_inv_t(g, weft_apply_input(node, 0), s, &input_grads[0])
                         : st;
}

static weft_status_t slogdet_grad(weft_graph_t *g, const weft_apply_t *node,
                                  weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    if (!output_grads[1]) { /* the sign is piecewise constant */
        return WEFT_OK;
    }
    return grad_scaled_inv_t(g, weft_apply_input(node, 0), output_grads[1], &input_grads[0]);
}

static weft_status_t cho_solve_grad(weft_graph_t *g, const weft_apply_t *node,
                                    weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    weft_var_t *gz = output_grads[0], *l = weft_apply_input(node, 0);
    weft_var_t *da = NULL, *dat = NULL, *sym = NULL, *p = NULL, *lt = NULL;
    if (!gz) {
        return WEFT_OK;
    }
    weft_status_t st = solve_grads(g, node, true, gz, &da, &input_grads[1]);
    if (st == WEFT_OK) {
        st = weft__lg_t(g, da, &dat);
    }
    if (st == WEFT_OK) {
        st = weft__got(g, sym = weft_add(g, da, dat));
    }
    if (st == WEFT_OK) { /* the factor as read: l's upper triangle is ignored */
        st = weft__trimask(g, l, true, 1.0, &lt);
    }
    if (st == WEFT_OK) {
        st = weft__lg_mm(g, "CholeskySolve", sym, lt, &p);
    }
    return st == WEFT_OK ? weft__trimask(g, p, true, 1.0, &input_grads[0]) : st;
}

/* ---- classes and constructors --------------------------------------------------- */

const weft_op_class_t weft__solve_class = {
    .size = sizeof(weft_op_class_t),
    .name = "Solve",
    .make_node = solve_make_node,
    .perform = solve_perform,
    .grad = solve_grad,
};

const weft_op_class_t weft__cho_solve_class = {
    .size = sizeof(weft_op_class_t),
    .name = "CholeskySolve",
    .make_node = solve_make_node,
    .perform = cho_solve_perform,
    .grad = cho_solve_grad,
};

const weft_op_class_t weft__inv_class = {
    .size = sizeof(weft_op_class_t),
    .name = "Inv",
    .make_node = inv_make_node,
    .perform = inv_perform,
    .grad = inv_grad,
};

const weft_op_class_t weft__det_class = {
    .size = sizeof(weft_op_class_t),
    .name = "Det",
    .make_node = det_make_node,
    .perform = det_perform,
    .grad = det_grad,
};

const weft_op_class_t weft__slogdet_class = {
    .size = sizeof(weft_op_class_t),
    .name = "SLogDet",
    .make_node = det_make_node,
    .perform = det_perform,
    .default_output = slogdet_default_output,
    .grad = slogdet_grad,
};

/* Builds cls over the n inputs (no props) at file:line. */
static weft_var_t *lapack_ctor(weft_graph_t *g, const weft_op_class_t *cls, const char *ctor,
                               size_t n, weft_var_t *const *in, const char *file, int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t st = weft__linalg_args(g, cls->name, n, in, file, line, &out);
    if (st == WEFT_OK) {
        st = weft__linalg_call(g, cls, NULL, n, in, file, line, &out);
    }
    return weft__ctor_end(g, st, out, ctor, file, line);
}

weft_var_t *weft_solve_at(weft_graph_t *g, weft_var_t *a, weft_var_t *b, const char *file,
                          int line)
{
    weft_var_t *in[2] = {a, b};
    return lapack_ctor(g, &weft__solve_class, "weft_solve", 2, in, file, line);
}

weft_var_t *weft_cholesky_solve_at(weft_graph_t *g, weft_var_t *l, weft_var_t *b,
                                   const char *file, int line)
{
    weft_var_t *in[2] = {l, b};
    return lapack_ctor(g, &weft__cho_solve_class, "weft_cholesky_solve", 2, in, file, line);
}

weft_var_t *weft_inv_at(weft_graph_t *g, weft_var_t *a, const char *file, int line)
{
    return lapack_ctor(g, &weft__inv_class, "weft_inv", 1, &a, file, line);
}

weft_var_t *weft_det_at(weft_graph_t *g, weft_var_t *a, const char *file, int line)
{
    return lapack_ctor(g, &weft__det_class, "weft_det", 1, &a, file, line);
}

weft_var_t *weft_slogdet_at(weft_graph_t *g, weft_var_t *a, weft_var_t **sign,
                            const char *file, int line)
{
    weft_var_t *logdet = lapack_ctor(g, &weft__slogdet_class, "weft_slogdet", 1, &a, file,
                                     line);
    if (sign) {
        *sign = logdet ? weft_apply_output(weft_var_owner(logdet), 0) : NULL;
    }
    return logdet;
}

/* ---- Lstsq --------------------------------------------------------------------------- */

/* Lstsq{rcond}(a, b): the minimum-norm least-squares x of a x ~ b (?gelsd),
 * a (m, n), b (m,) or (m, k); rcond < 0: NumPy's default eps * max(m, n). */
typedef struct lstsq_props {
    double rcond;
} lstsq_props_t;

static weft_status_t lstsq_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                     weft_var_t *const *in, size_t *n_out,
                                     const weft_type_t **out_types)
{
    static const int ranks[2] = {2, -1};
    weft_dtype_t dt;
    (void)op;
    weft_status_t st = weft__linalg_check(g, "Lstsq", n_in, in, 2, ranks, &dt);
    if (st != WEFT_OK) {
        return st;
    }
    const weft_type_t *tb = weft_var_type(in[1]);
    int nb = weft_type_ndim(tb);
    if (nb != 1 && nb != 2) {
        return weft_graph_set_error(g, WEFT_ETYPE, "Lstsq: input 1 has %d dims (need 1 or 2)",
                                    nb);
    }
    st = weft__linalg_match(g, "Lstsq", in, 0, 0, 1, 0);
    if (st != WEFT_OK) {
        return st;
    }
    int64_t shape[2] = {weft_type_dim(weft_var_type(in[0]), 1), nb == 2 ? weft_type_dim(tb, 1) : 0};
    *n_out = 1;
    return weft_type_tensor(g, dt, nb, shape, &out_types[0]);
}

static weft_status_t lstsq_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                   weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    const lstsq_props_t *p = weft_op_props(weft_apply_op(node));
    const weft_tensor_t *a = in[0], *b = in[1];
    int nb = weft_tensor_ndim(b);
    int64_t m = weft_tensor_dim(a, 0), n = weft_tensor_dim(a, 1);
    int64_t k = nb == 2 ? weft_tensor_dim(b, 1) : 1, ld = m > n ? m : n;
    int64_t dims[3] = {m, n, k}, xs[2] = {n, k};
    weft_dtype_t dt = weft_tensor_dtype(a);
    if (weft_tensor_dim(b, 0) != m) {
        return weft__linalg_shape_error(ctx, "Lstsq", "b's length differs from a's rows");
    }
    weft_status_t st = weft__linalg_fit(ctx, "Lstsq", 3, dims);
    if (st == WEFT_OK) {
        st = weft__lapack_enter(ctx, "Lstsq", m < n ? m : n);
    }
    if (st == WEFT_OK) {
        st = weft_kernel_alloc_output(ctx, &outputs[0], dt, nb, xs);
    }
    if (st != WEFT_OK || n == 0 || k == 0) {
        return st;
    }
    if (m == 0) { /* no equations: the minimum-norm solution is 0 */
        return weft_tensor_fill(outputs[0], 0.0);
    }
    int64_t la = m * n, lb = ld * k, mn = m < n ? m : n;
    weft_tensor_t *aw = NULL, *bw = NULL, *sv = NULL;
    st = weft_kernel_scratch(ctx, dt, 1, &la, &aw);
    if (st == WEFT_OK) {
        st = weft_kernel_scratch(ctx, dt, 1, &lb, &bw);
    }
    if (st == WEFT_OK) {
        st = weft_kernel_scratch(ctx, dt, 1, &mn, &sv);
    }
    if (st == WEFT_OK) {
        weft__batch_load(a, 2, 0, m, n, true, weft_tensor_data(aw));
        /* b column-major with leading dimension max(m, n) (the rows past m are output room) */
        weft__lapack_load_cm(b, m, k, ld, weft_tensor_data(bw));
        double rcond = p->rcond >= 0 ? p->rcond
                       : (dt == WEFT_FLOAT64 ? 2.220446049250313e-16 : 1.1920929e-07) * (double)ld;
        int info = weft__lapack_gelsd(dt, m, n, k, weft_tensor_data(aw), weft_tensor_data(bw), ld,
                                      weft_tensor_data(sv), rcond);
        if (info != 0) {
            st = weft_kernel_error(ctx, WEFT_ERANGE, info > 0 ? "Lstsq: the SVD did not converge "
                                   "(info %d)" : "Lstsq: LAPACK rejected the input (info %d: NaN "
                                   "in the matrix?)", info);
        } else {
            weft__lapack_store_cm(dt, weft_tensor_data(bw), n, k, ld,
                                  weft_tensor_data(outputs[0]));
        }
    }
    weft_kernel_scratch_done(ctx, aw);
    weft_kernel_scratch_done(ctx, bw);
    weft_kernel_scratch_done(ctx, sv);
    return st;
}

/* Full column rank (m >= n): z = (a^T a)^-1 gx, r = b - a x;
 * da = r z^T - a z x^T, db = a z. */
static weft_status_t lstsq_grad(weft_graph_t *g, const weft_apply_t *node,
                                weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    weft_var_t *gx = output_grads[0], *a = weft_apply_input(node, 0);
    weft_var_t *b = weft_apply_input(node, 1);
    weft_var_t *x = weft_apply_output(node, 0);
    bool vec = weft_type_ndim(weft_var_type(x)) == 1;
    if (!gx) {
        return WEFT_OK;
    }
    weft_var_t *ata = NULL, *z = NULL, *az = NULL, *r = NULL, *t1 = NULL, *t2 = NULL;
    weft_status_t st = weft__got(g, ata = weft_syrk(g, a, true, 1.0));
    if (st == WEFT_OK) {
        st = weft__got(g, z = weft_solve(g, ata, gx));
    }
    if (st == WEFT_OK) {
        st = weft__got(g, az = weft_dot(g, a, z));
    }
    if (st == WEFT_OK) {
        st = weft__got(g, r = weft_sub(g, b, weft_dot(g, a, x)));
    }
    if (st == WEFT_OK) {
        st = weft__lg_neg_outer(g, "Lstsq", az, x, vec, &t2); /* -a z x^T */
    }
    if (st == WEFT_OK) {
        st = weft__lg_neg_outer(g, "Lstsq", r, z, vec, &t1); /* -r z^T */
    }
    if (st == WEFT_OK) {
        st = weft__got(g, input_grads[0] = weft_sub(g, t2, t1));
    }
    input_grads[1] = az;
    return st;
}

static int lstsq_props_print(const void *props, char *buf, size_t cap)
{
    return snprintf(buf, cap, "rcond=%g", ((const lstsq_props_t *)props)->rcond);
}

/* JSON props: {"rcond": -1} (negative: NumPy's default). */
static const weft__props_fields_t lstsq_fields = {
    sizeof(lstsq_props_t),
    {WEFT__PROPS_FIELD("rcond", WEFT__FIELD_F64, lstsq_props_t, rcond)},
};
WEFT__PROPS_FIELDS_HOOKS(lstsq, lstsq_fields)

const weft_op_class_t weft__lstsq_class = {
    .size = sizeof(weft_op_class_t),
    .name = "Lstsq",
    .props_size = sizeof(lstsq_props_t),
    .props_print = lstsq_props_print,
    .props_to_json = lstsq_to_json,
    .props_from_json = lstsq_from_json,
    .make_node = lstsq_make_node,
    .perform = lstsq_perform,
    .grad = lstsq_grad,
};

weft_var_t *weft_lstsq_at(weft_graph_t *g, weft_var_t *a, weft_var_t *b, double rcond,
                          const char *file, int line)
{
    weft_var_t *in[2] = {a, b}, *out = NULL;
    lstsq_props_t p;
    memset(&p, 0, sizeof p);
    p.rcond = rcond < 0 || isnan(rcond) ? -1.0 : rcond;
    weft__ctor_begin(g);
    weft_status_t st = weft__linalg_args(g, "Lstsq", 2, in, file, line, &out);
    if (st == WEFT_OK) {
        st = weft__linalg_call(g, &weft__lstsq_class, &p, 2, in, file, line, &out);
    }
    return weft__ctor_end(g, st, out, "weft_lstsq", file, line);
}
