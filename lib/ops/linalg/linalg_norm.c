/* Compositions of existing ops (no op classes of their own, so their
 * gradients, JSON form and fusion come from the parts):
 * - matrix_power(a, p): NumPy's binary powering with Dot, the same products
 *   in the same order as np.linalg.matrix_power (z = z@z per bit, result =
 *   result@z where the bit is set); p < 0 powers inv(a); p == 0 an identity;
 *   (matrix_power and pinv run two or more batch axes as one, Reshape);
 * - vector_norm(x, ord, axes), np.linalg.vector_norm: max / min |x| (+-inf),
 *   the count of non-zeros (0), sum |x| (1), sqrt(sum x*x) (2), else
 *   (sum |x|^ord)^(1/ord), as NumPy's linalg.norm spells each;
 * - matrix_norm(x, ord), np.linalg.matrix_norm over the last two axes: 'fro'
 *   sqrt(sum x*x), 'nuc' sum s, 2 / -2 max / min s (s: Svd's singular
 *   values), 1 / -1 max / min column sum of |x|, inf / -inf the row sums. */
#include <math.h>
#include <string.h>

#include "graph/ctor_int.h"
#include "lapack_int.h"
#include "weft/elemwise.h"
#include "weft/linalg.h"
#include "weft/linalg_lapack.h"
#include "weft/reduce.h"
#include "weft/shape_ops.h"

/* An identity of a's (static) order, shaped like a (a stack broadcast). */
static weft_status_t mp_identity(weft_graph_t *g, weft_var_t *a, weft_var_t **out)
{
    const weft_type_t *t = weft_var_type(a);
    int nd = weft_type_ndim(t);
    int64_t n = weft_type_dim(t, nd - 1);
    if (n == WEFT_DIM_UNKNOWN) {
        return weft_graph_set_error(g, WEFT_ETYPE, "MatrixPower: power 0 needs a static order "
                                    "(input 0's last length is unknown)");
    }
    const weft_type_t *et = NULL;
    weft_status_t st = weft_type_tensor(g, weft_type_dtype(t), 2, (int64_t[]){n, n}, &et);
    weft_tensor_t *eye = NULL;
    if (st == WEFT_OK) {
        st = weft_tensor_zeros(weft_type_dtype(t), 2, (int64_t[]){n, n}, &eye);
    }
    for (int64_t i = 0; i < n && st == WEFT_OK; i++) {
        int64_t idx[2] = {i, i};
        st = weft_tensor_set(eye, idx, 1.0);
    }
    weft_var_t *c = NULL, *z = NULL;
    if (st == WEFT_OK) {
        size_t bytes = (size_t)(n * n) * weft_dtype_size(weft_type_dtype(t));
        st = weft__got(g, c = weft_constant_create(g, et, weft_tensor_data(eye), bytes));
    }
    weft_tensor_release(eye);
    if (st == WEFT_OK) {
        st = weft__got(g, z = weft_zeros_like(g, a));
    }
    return st == WEFT_OK ? weft__got(g, *out = weft_add(g, z, c)) : st;
}

/* A stack with two or more batch axes runs as the 3-d stack (-1, r, c) of
 * its matrices (Dot's one batch axis, so any batch lengths; the last two
 * need static lengths: WEFT_ENOTIMPL naming the op otherwise); *a3 is a
 * itself up to one batch axis, and NULL for empty matrices (no -1 to infer
 * from 0 elements: the result is an empty stack, empty_like). */
static weft_status_t flatten_batch(weft_graph_t *g, const char *opname, weft_var_t *a,
                                   weft_var_t **a3)
{
    const weft_type_t *t = weft_var_type(a);
    int nd = weft_type_ndim(t);
    *a3 = a;
    if (nd <= 3) {
        return WEFT_OK;
    }
    int64_t shape[3] = {-1, weft_type_dim(t, nd - 2), weft_type_dim(t, nd - 1)};
    if (shape[1] == WEFT_DIM_UNKNOWN || shape[2] == WEFT_DIM_UNKNOWN) {
        return weft_graph_set_error(g, WEFT_ENOTIMPL, "%s: input 0 has %d dims and its last "
                                    "two lengths are not both static (a stack with more than "
                                    "one batch axis needs them)", opname, nd);
    }
    if (shape[1] * shape[2] == 0) {
        *a3 = NULL;
        return WEFT_OK;
    }
    return weft__got(g, *a3 = weft_reshape(g, a, 3, shape));
}

/* The empty result of an empty stack: zeros shaped like `like`. */
static weft_status_t empty_like(weft_graph_t *g, weft_var_t *like, weft_var_t **out)
{
    return weft__got(g, *out = weft_zeros_like(g, like));
}

/* out (computed on flatten_batch's 3-d stack) back to like's run-time shape. */
static weft_status_t unflatten_batch(weft_graph_t *g, weft_var_t *a, weft_var_t *like,
                                     weft_var_t **out)
{
    if (weft_type_ndim(weft_var_type(a)) <= 3) {
        return WEFT_OK;
    }
    return weft__got(g, *out = weft_reshape_like(g, *out, like));
}

static weft_status_t matrix_power_impl(weft_graph_t *g, weft_var_t *a, int64_t p,
                                       const char *file, int line, weft_var_t **out)
{
    weft_status_t st = weft__linalg_args(g, "MatrixPower", 1, &a, file, line, out);
    if (st == WEFT_OK) {
        st = weft__batch_check_square(g, "MatrixPower", a, 0);
    }
    if (st != WEFT_OK) {
        return st;
    }
    if (p == 0) {
        return mp_identity(g, a, out);
    }
    weft_var_t *z = NULL, *result = NULL, *orig = a;
    st = flatten_batch(g, "MatrixPower", orig, &a);
    if (st == WEFT_OK && !a) {
        return empty_like(g, orig, out);
    }
    if (st == WEFT_OK && p < 0) {
        st = weft__got(g, a = weft_inv(g, a));
        p = -p;
    }
    while (p > 0 && st == WEFT_OK) {
        st = weft__got(g, z = z ? weft_dot(g, z, z) : a);
        if (st == WEFT_OK && (p & 1)) {
            st = weft__got(g, result = result ? weft_dot(g, result, z) : z);
        }
        p >>= 1;
    }
    *out = result;
    return st == WEFT_OK ? unflatten_batch(g, orig, orig, out) : st;
}

weft_var_t *weft_matrix_power_at(weft_graph_t *g, weft_var_t *a, int64_t p, const char *file,
                                 int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t st = matrix_power_impl(g, a, p, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_matrix_power", file, line);
}

/* ---- norms ----------------------------------------------------------------------- */

static weft_status_t norm_float(weft_graph_t *g, const char *opname, weft_var_t *x)
{
    weft_dtype_t d = weft_type_dtype(weft_var_type(x));
    if (d == WEFT_FLOAT32 || d == WEFT_FLOAT64) {
        return WEFT_OK;
    }
    char tb[96];
    weft_type_print(weft_var_type(x), tb, sizeof tb);
    return weft_graph_set_error(g, WEFT_ETYPE, "%s: input 0 has type %s (need float32 or "
                                "float64)", opname, tb);
}

static weft_status_t vector_norm_impl(weft_graph_t *g, weft_var_t *x, double ord, size_t n_axes,
                                      const int *axes, bool keepdims, weft_var_t **out)
{
    weft_var_t *ax = NULL, *t = NULL, *s = NULL;
    weft_status_t st = weft__got(g, ax = weft_abs(g, x));
    if (st != WEFT_OK) {
        return st;
    }
    if (isinf(ord)) {
        return weft__got(g, *out = ord > 0 ? weft_max(g, ax, n_axes, axes, keepdims)
                                           : weft_min(g, ax, n_axes, axes, keepdims));
    }
    if (ord == 0.0) { /* the count of non-zeros, in x's dtype */
        weft_dtype_t d = weft_type_dtype(weft_var_type(x));
        st = weft__got(g, t = weft_cast(g, weft_binary_scalar(g, WEFT_ELEMWISE_NE, x, 0.0), d));
        return st == WEFT_OK ? weft__got(g, *out = weft_sum(g, t, n_axes, axes, keepdims)) : st;
    }
    if (ord == 1.0) {
        return weft__got(g, *out = weft_sum(g, ax, n_axes, axes, keepdims));
    }
    if (ord == 2.0) {
        st = weft__got(g, t = weft_mul(g, x, x));
        if (st == WEFT_OK) {
            st = weft__got(g, s = weft_sum(g, t, n_axes, axes, keepdims));
        }
        return st == WEFT_OK ? weft__got(g, *out = weft_sqrt(g, s)) : st;
    }
    st = weft__got(g, t = weft_binary_scalar(g, WEFT_ELEMWISE_POW, ax, ord));
    if (st == WEFT_OK) {
        st = weft__got(g, s = weft_sum(g, t, n_axes, axes, keepdims));
    }
    return st == WEFT_OK ? weft__got(g, *out = weft_binary_scalar(g, WEFT_ELEMWISE_POW, s,
                                                                    1.0 / ord))
                         : st;
}

weft_var_t *weft_vector_norm_at(weft_graph_t *g, weft_var_t *x, double ord, size_t n_axes,
                                const int *axes, bool keepdims, const char *file, int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t st = weft__linalg_args(g, "VectorNorm", 1, &x, file, line, &out);
    if (st == WEFT_OK && isnan(ord)) {
        st = weft_graph_set_error(g, WEFT_EINVAL, "VectorNorm (at %s:%d): ord is NaN", file,
                                  line);
    }
    if (st == WEFT_OK) {
        st = norm_float(g, "VectorNorm", x);
    }
    if (st == WEFT_OK) {
        st = vector_norm_impl(g, x, ord, n_axes, axes, keepdims, &out);
    }
    return weft__ctor_end(g, st, out, "weft_vector_norm", file, line);
}

/* reduce(reduce2(y over axis r1) over axis r2) for the induced norms, both
 * with keepdims so the axis numbers stay put, the kept axes dropped at the end. */
static weft_status_t induced_norm(weft_graph_t *g, weft_var_t *x, int nd, bool rows, bool max,
                                  bool keepdims, weft_var_t **out)
{
    int a_sum = rows ? nd - 1 : nd - 2, a_red = rows ? nd - 2 : nd - 1;
    weft_var_t *ax = NULL, *s = NULL;
    weft_status_t st = weft__got(g, ax = weft_abs(g, x));
    if (st == WEFT_OK) {
        st = weft__got(g, s = weft_sum(g, ax, 1, &a_sum, true));
    }
    int both[2] = {a_red, a_sum};
    if (st != WEFT_OK) {
        return st;
    }
    /* the summed axis has length 1 now: reducing it too drops both */
    return weft__got(g, *out = max ? weft_max(g, s, keepdims ? 1 : 2, both, keepdims)
                                   : weft_min(g, s, keepdims ? 1 : 2, both, keepdims));
}

/* s reduced over its last axis, with two length-1 axes kept for keepdims. */
static weft_status_t sv_norm(weft_graph_t *g, weft_var_t *x, weft_matrix_norm_t ord, int nd,
                             bool keepdims, weft_var_t **out)
{
    int last = nd - 2;
    weft_var_t *s = NULL, *r = NULL;
    weft_status_t st = weft__got(g, s = weft_svd(g, x, false, false, NULL, NULL));
    if (st == WEFT_OK) {
        st = weft__got(g, r = ord == WEFT_NORM_NUC   ? weft_sum(g, s, 1, &last, false)
                              : ord == WEFT_NORM_TWO ? weft_max(g, s, 1, &last, false)
                                                     : weft_min(g, s, 1, &last, false));
    }
    if (st != WEFT_OK || !keepdims) {
        *out = r;
        return st;
    }
    int order[WEFT_MAX_NDIM];
    for (int d = 0; d < nd - 2; d++) {
        order[d] = d;
    }
    order[nd - 2] = WEFT_DIMSHUFFLE_NEW;
    order[nd - 1] = WEFT_DIMSHUFFLE_NEW;
    return weft__got(g, *out = weft_dimshuffle(g, r, nd, order));
}

static weft_status_t matrix_norm_impl(weft_graph_t *g, weft_var_t *x, weft_matrix_norm_t ord,
                                      bool keepdims, weft_var_t **out)
{
    int nd = weft_type_ndim(weft_var_type(x));
    if (nd < 2) {
        return weft_graph_set_error(g, WEFT_ETYPE, "MatrixNorm: input 0 has %d dims (need 2 or "
                                    "more)", nd);
    }
    int last2[2] = {nd - 2, nd - 1};
    switch (ord) {
    case WEFT_NORM_FRO: return vector_norm_impl(g, x, 2.0, 2, last2, keepdims, out);
    case WEFT_NORM_NUC:
    case WEFT_NORM_TWO:
    case WEFT_NORM_MINUS_TWO: return sv_norm(g, x, ord, nd, keepdims, out);
    case WEFT_NORM_ONE: return induced_norm(g, x, nd, false, true, keepdims, out);
    case WEFT_NORM_MINUS_ONE: return induced_norm(g, x, nd, false, false, keepdims, out);
    case WEFT_NORM_INF: return induced_norm(g, x, nd, true, true, keepdims, out);
    case WEFT_NORM_MINUS_INF: return induced_norm(g, x, nd, true, false, keepdims, out);
    default:
        return weft_graph_set_error(g, WEFT_EINVAL, "MatrixNorm: unknown ord %d", (int)ord);
    }
}

weft_var_t *weft_matrix_norm_at(weft_graph_t *g, weft_var_t *x, weft_matrix_norm_t ord,
                                bool keepdims, const char *file, int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t st = weft__linalg_args(g, "MatrixNorm", 1, &x, file, line, &out);
    if (st == WEFT_OK) {
        st = norm_float(g, "MatrixNorm", x);
    }
    if (st == WEFT_OK) {
        st = matrix_norm_impl(g, x, ord, keepdims, &out);
    }
    return weft__ctor_end(g, st, out, "weft_matrix_norm", file, line);
}

/* ---- pinv -------------------------------------------------------------------------- */

/* np.linalg.pinv: u, s, vh = svd(a, full_matrices=False); s^-1 where s >
 * rcond * max(s), else 0; vh^T @ (s^-1[..., None] * u^T). */
static weft_status_t pinv_impl(weft_graph_t *g, weft_var_t *a, double rcond, weft_var_t **out)
{
    int nd = weft_type_ndim(weft_var_type(a));
    if (nd < 2) {
        return weft_graph_set_error(g, WEFT_ETYPE, "Pinv: input 0 has %d dims (need 2 or more)",
                                    nd);
    }
    weft_var_t *orig = a, *like = NULL;
    weft_status_t st = flatten_batch(g, "Pinv", orig, &a);
    if (st == WEFT_OK && nd > 3) { /* the result's shape: a's, last two swapped */
        st = weft__lg_t(g, orig, &like);
    }
    if (st != WEFT_OK || !a) {
        return st == WEFT_OK ? empty_like(g, like, out) : st;
    }
    nd = nd > 3 ? 3 : nd;
    /* s^-1 (..., k) as a column (..., k, 1) scaling u^T's rows */
    int last = nd - 2, order[3] = {0, WEFT_DIMSHUFFLE_NEW, WEFT_DIMSHUFFLE_NEW};
    if (nd == 3) {
        order[1] = 1;
    }
    weft_var_t *u = NULL, *vh = NULL, *mx = NULL, *cut = NULL, *big = NULL, *inv = NULL;
    weft_var_t *zero = NULL, *sinv = NULL, *col = NULL, *ut = NULL, *v = NULL, *sc = NULL;
    weft_var_t *s = weft_svd(g, a, false, true, &u, &vh);
    st = weft__got(g, s);
    if (st == WEFT_OK) {
        st = weft__got(g, mx = weft_max(g, s, 1, &last, true));
    }
    if (st == WEFT_OK) {
        st = weft__got(g, cut = weft_binary_scalar(g, WEFT_ELEMWISE_MUL, mx, rcond));
    }
    if (st == WEFT_OK) {
        st = weft__got(g, big = weft_gt(g, s, cut));
    }
    if (st == WEFT_OK) {
        st = weft__got(g, inv = weft_scalar_binary(g, WEFT_ELEMWISE_DIV, 1.0, s));
    }
    if (st == WEFT_OK) {
        st = weft__got(g, zero = weft_zeros_like(g, s));
    }
    if (st == WEFT_OK) {
        st = weft__got(g, sinv = weft_switch(g, big, inv, zero));
    }
    if (st == WEFT_OK) {
        st = weft__got(g, col = weft_dimshuffle(g, sinv, nd, order));
    }
    if (st == WEFT_OK) {
        st = weft__lg_t(g, u, &ut);
    }
    if (st == WEFT_OK) {
        st = weft__lg_t(g, vh, &v);
    }
    if (st == WEFT_OK) {
        st = weft__got(g, sc = weft_mul(g, col, ut));
    }
    if (st == WEFT_OK) {
        st = weft__got(g, *out = weft_dot(g, v, sc));
    }
    return st == WEFT_OK ? unflatten_batch(g, orig, like, out) : st;
}

weft_var_t *weft_pinv_at(weft_graph_t *g, weft_var_t *a, double rcond, const char *file,
                         int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t st = weft__linalg_args(g, "Pinv", 1, &a, file, line, &out);
    if (st == WEFT_OK && !(rcond >= 0.0)) {
        st = weft_graph_set_error(g, WEFT_EINVAL, "Pinv (at %s:%d): rcond %g is negative or NaN",
                                  file, line, rcond);
    }
    if (st == WEFT_OK) {
        st = norm_float(g, "Pinv", a);
    }
    if (st == WEFT_OK) {
        st = pinv_impl(g, a, rcond, &out);
    }
    return weft__ctor_end(g, st, out, "weft_pinv", file, line);
}
