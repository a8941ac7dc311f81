/* Cholesky (LAPACKE ?potrf), Trsm (triangular solve) and Syrk (A@A^T), with
 * their gradients:
 * - Cholesky, L = chol(A) reading A's lower triangle (Murray 2016, as
 *   PyTensor's CholeskyGrad): with Phi(X) = tril(X) with halved diagonal,
 *   P = Phi(L^T G), S = L^-T P L^-1, dA = Phi(S + S^T) (lower triangular:
 *   the upper triangle of A is never read);
 * - Trsm, op(A) X = B: dB = op(A)^-T G, d op(A) = -dB X^T (right side:
 *   X op(A) = B: dB = G op(A)^-T, d op(A) = -X^T dB), masked to the triangle
 *   that is read (strictly, for a unit diagonal);
 * - Syrk, C = alpha A A^T: dA = alpha (G + G^T) A (trans: alpha A (G + G^T)).
 * All three also take complex64 / complex128 (docs/dtypes.md, "Complex
 * numbers": Cholesky of a Hermitian A, A = L L^H; Trsm's and Syrk's
 * transposes are plain), without a gradient there (disconnected). */
#include <stdio.h>
#include <string.h>

#include "graph/ctor_int.h"
#include "linalg_int.h"
#include "props_fields_int.h"
#include "weft/elemwise.h"
#include "weft/linalg.h"

typedef struct trsm_props {
    uint32_t flags;
} trsm_props_t;

typedef struct syrk_props {
    double alpha;
    int64_t trans;
} syrk_props_t;

/* ---- Cholesky ---------------------------------------------------------------- */

static weft_status_t chol_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                    weft_var_t *const *in, size_t *n_out,
                                    const weft_type_t **out_types)
{
    static const int ranks[1] = {2};
    weft_dtype_t dt;
    (void)op;
    weft_status_t st = weft__linalg_check_dtypes(g, "Cholesky", n_in, in, 1, ranks, true, &dt);
    if (st == WEFT_OK) {
        st = weft__linalg_match(g, "Cholesky", in, 0, 0, 0, 1);
    }
    if (st != WEFT_OK) {
        return st;
    }
    *n_out = 1;
    out_types[0] = weft_var_type(in[0]);
    return WEFT_OK;
}

/* Zeros the strict upper triangle of the contiguous n x n matrix (any
 * float or complex dtype: all-zero bytes are +0). */
static void chol_zero_upper(weft_dtype_t dt, void *a, int64_t n)
{
    size_t es = weft_dtype_size(dt);
    for (int64_t i = 0; i + 1 < n; i++) {
        memset((char *)a + (size_t)(i * n + i + 1) * es, 0, (size_t)(n - i - 1) * es);
    }
}

static weft_status_t chol_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                  weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    (void)node;
    const weft_tensor_t *x = in[0];
    int64_t n = weft_tensor_dim(x, 0);
    if (weft_tensor_dim(x, 1) != n) {
        return weft__linalg_shape_error(ctx, "Cholesky", "the matrix is not square");
    }
    weft_status_t st = weft__linalg_fit(ctx, "Cholesky", 1, &n);
    if (st == WEFT_OK) {
        st = weft__lapack_enter(ctx, "Cholesky", n);
    }
    weft_dtype_t dt = weft_tensor_dtype(x);
    if (st == WEFT_OK) {
        st = weft_kernel_alloc_output(ctx, &outputs[0], dt, 2, weft_tensor_shape(x));
    }
    if (st == WEFT_OK) {
        st = weft_tensor_copy(outputs[0], x);
    }
    if (st != WEFT_OK || n == 0) {
        return st;
    }
    void *a = weft_tensor_data(outputs[0]);
    int info = 0;
    if (weft__chol_tiled_applies(dt, n)) {
        st = weft__chol_tiled(ctx, dt, n, a, &info);
        if (st != WEFT_OK) {
            return weft_kernel_error(ctx, st, "Cholesky: the tile loop failed");
        }
    } else {
        info = weft__lapack_potrf(dt, true, n, a, n);
    }
    if (info > 0) {
        return weft_kernel_error(ctx, WEFT_ERANGE, "Cholesky: the matrix is not positive "
                                 "definite (leading minor of order %d)", info);
    }
    if (info < 0) {
        return weft_kernel_error(ctx, WEFT_ERANGE, "Cholesky: LAPACK rejected the input "
                                 "(info %d: NaN in the matrix?)", info);
    }
    chol_zero_upper(dt, a, n);
    return WEFT_OK;
}

static weft_status_t chol_grad(weft_graph_t *g, const weft_apply_t *node,
                               weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    weft_var_t *gz = output_grads[0], *l = weft_apply_output(node, 0);
    if (!gz || weft__lg_is_complex(l)) { /* no complex gradient: docs/dtypes.md */
        return WEFT_OK;
    }
    weft_var_t *lt = NULL, *p = NULL, *phi = NULL, *s1 = NULL, *s = NULL, *sT = NULL;
    weft_var_t *sum = NULL;
    weft_status_t st = weft__lg_t(g, l, &lt);
    if (st == WEFT_OK) {
        st = weft__got(g, p = weft_dot(g, lt, gz));
    }
    if (st == WEFT_OK) {
        st = weft__trimask(g, p, true, 0.5, &phi);
    }
    if (st == WEFT_OK) { /* L^T S1 = Phi */
        st = weft__got(g, s1 = weft_trsm(g, l, phi, WEFT_TRSM_TRANS));
    }
    if (st == WEFT_OK) { /* S L = S1 */
        st = weft__got(g, s = weft_trsm(g, l, s1, WEFT_TRSM_RIGHT));
    }
    if (st == WEFT_OK) {
        st = weft__lg_t(g, s, &sT);
    }
    if (st == WEFT_OK) {
        st = weft__got(g, sum = weft_add(g, s, sT));
    }
    return st == WEFT_OK ? weft__trimask(g, sum, true, 0.5, &input_grads[0]) : st;
}

const weft_op_class_t weft__cholesky_class = {
    .size = sizeof(weft_op_class_t),
    .name = "Cholesky",
    .make_node = chol_make_node,
    .perform = chol_perform,
    .grad = chol_grad,
};

static weft_status_t cholesky_impl(weft_graph_t *g, weft_var_t *x, const char *file, int line,
                                   weft_var_t **out)
{
    weft_status_t st = weft__linalg_args(g, "Cholesky", 1, &x, file, line, out);
    return st == WEFT_OK
               ? weft__linalg_call(g, &weft__cholesky_class, NULL, 1, &x, file, line, out)
               : st;
}

/* ---- Trsm ---------------------------------------------------------------------- */

#define TRSM_ALL_FLAGS (WEFT_TRSM_RIGHT | WEFT_TRSM_UPPER | WEFT_TRSM_TRANS | WEFT_TRSM_UNIT)

static weft_status_t trsm_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                    weft_var_t *const *in, size_t *n_out,
                                    const weft_type_t **out_types)
{
    const trsm_props_t *p = weft_op_props(op);
    bool right = (p->flags & WEFT_TRSM_RIGHT) != 0;
    static const int ranks[2] = {2, -1};
    weft_dtype_t dt;
    weft_status_t st = weft__linalg_check_dtypes(g, "Trsm", n_in, in, 2, ranks, true, &dt);
    if (st != WEFT_OK) {
        return st;
    }
    int nb = weft_type_ndim(weft_var_type(in[1]));
    if (nb != 2 && !(nb == 1 && !right)) {
        return weft_graph_set_error(g, WEFT_ETYPE, "Trsm: input 1 has %d dims (need 2, or 1 "
                                    "on the left side)", nb);
    }
    st = weft__linalg_match(g, "Trsm", in, 0, 0, 0, 1);
    if (st == WEFT_OK) {
        st = weft__linalg_match(g, "Trsm", in, 0, 0, 1, right ? 1 : 0);
    }
    if (st != WEFT_OK) {
        return st;
    }
    *n_out = 1;
    out_types[0] = weft_var_type(in[1]);
    return WEFT_OK;
}

static weft_status_t trsm_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                  weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    const trsm_props_t *p = weft_op_props(weft_apply_op(node));
    const weft_tensor_t *a = in[0], *b = in[1];
    bool right = (p->flags & WEFT_TRSM_RIGHT) != 0;
    int nb = weft_tensor_ndim(b);
    int64_t n = weft_tensor_dim(a, 0);
    int64_t m = weft_tensor_dim(b, 0), k = nb == 2 ? weft_tensor_dim(b, 1) : 1;
    if (weft_tensor_dim(a, 1) != n || (right ? k : m) != n) {
        return weft__linalg_shape_error(ctx, "Trsm", "a is not square or b's length differs");
    }
    int64_t dims[2] = {m, k};
    weft_status_t st = weft__linalg_fit(ctx, "Trsm", 2, dims);
    if (st == WEFT_OK) {
        st = weft__linalg_enter(ctx, "Trsm", WEFT_BLAS_KIND_LEVEL3);
    }
    weft_dtype_t dt = weft_tensor_dtype(b);
    if (st == WEFT_OK) {
        st = weft_kernel_alloc_output(ctx, &outputs[0], dt, nb, weft_tensor_shape(b));
    }
    if (st == WEFT_OK) {
        st = weft_tensor_copy(outputs[0], b);
    }
    if (st != WEFT_OK || m == 0 || k == 0) {
        return st;
    }
    weft__bmat_t am;
    if (weft__bmat_from(ctx, a, &am) != WEFT_OK) {
        return weft_kernel_error(ctx, WEFT_ENOMEM, "Trsm: out of memory");
    }
    /* A column-major a is the transpose of its storage: flip trans and the triangle. */
    bool lower = !(p->flags & WEFT_TRSM_UPPER) != am.trans;
    bool trans = ((p->flags & WEFT_TRSM_TRANS) != 0) != am.trans;
    weft__blas_trsm(dt, right, lower, trans, (p->flags & WEFT_TRSM_UNIT) != 0, m, k, 1.0,
                    am.data, am.ld, weft_tensor_data(outputs[0]), k);
    weft__bmat_fini(ctx, &am);
    return WEFT_OK;
}

/* dA from d op(A) = -left @ right^T (vectors: -outer(left, right)), transposed
 * back when op is a transpose, then masked to the triangle Trsm reads. */
static weft_status_t trsm_grad_a(weft_graph_t *g, unsigned flags, weft_var_t *left,
                                 weft_var_t *right, bool vec, weft_var_t **out)
{
    weft_var_t *prod = NULL, *neg = NULL, *rt = NULL;
    bool tr = (flags & WEFT_TRSM_TRANS) != 0;
    weft_var_t *l = tr ? right : left, *r = tr ? left : right;
    weft_status_t st;
    if (vec) {
        st = weft__lg_outer(g, l, r, &prod);
    } else {
        st = weft__lg_t(g, r, &rt);
        if (st == WEFT_OK) {
            st = weft__got(g, prod = weft_dot(g, l, rt));
        }
    }
    if (st == WEFT_OK) {
        st = weft__lg_neg(g, prod, &neg);
    }
    double diag = (flags & WEFT_TRSM_UNIT) ? 0.0 : 1.0;
    return st == WEFT_OK ? weft__trimask(g, neg, !(flags & WEFT_TRSM_UPPER), diag, out) : st;
}

static weft_status_t trsm_grad(weft_graph_t *g, const weft_apply_t *node,
                               weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    const trsm_props_t *p = weft_op_props(weft_apply_op(node));
    weft_var_t *gz = output_grads[0], *a = weft_apply_input(node, 0);
    weft_var_t *x = weft_apply_output(node, 0), *db = NULL, *xt = NULL, *dbt = NULL;
    if (!gz || weft__lg_is_complex(x)) {
        return WEFT_OK;
    }
    weft_status_t st = weft__got(g, db = weft_trsm(g, a, gz, p->flags ^ WEFT_TRSM_TRANS));
    if (st != WEFT_OK) {
        return st;
    }
    input_grads[1] = db;
    bool vec = weft_type_ndim(weft_var_type(x)) == 1;
    if (!(p->flags & WEFT_TRSM_RIGHT)) { /* d op(A) = -dB X^T */
        return trsm_grad_a(g, p->flags, db, x, vec, &input_grads[0]);
    }
    /* Right side: d op(A) = -X^T dB = -(X^T) (dB^T)^T. */
    st = weft__lg_t(g, x, &xt);
    if (st == WEFT_OK) {
        st = weft__lg_t(g, db, &dbt);
    }
    return st == WEFT_OK ? trsm_grad_a(g, p->flags, xt, dbt, false, &input_grads[0]) : st;
}

static int trsm_props_print(const void *props, char *buf, size_t cap)
{
    const trsm_props_t *p = props;
    return snprintf(buf, cap, "side=%s, lower=%d, trans=%d, unit=%d",
                    (p->flags & WEFT_TRSM_RIGHT) ? "right" : "left",
                    (p->flags & WEFT_TRSM_UPPER) ? 0 : 1, (p->flags & WEFT_TRSM_TRANS) ? 1 : 0,
                    (p->flags & WEFT_TRSM_UNIT) ? 1 : 0);
}

/* JSON props: {"flags": 3} (WEFT_TRSM_* bits). */
static const weft__props_fields_t trsm_fields = {
    sizeof(trsm_props_t),
    {WEFT__PROPS_FIELD("flags", WEFT__FIELD_U32, trsm_props_t, flags)},
};
WEFT__PROPS_FIELDS_HOOKS(trsm, trsm_fields)

const weft_op_class_t weft__trsm_class = {
    .size = sizeof(weft_op_class_t),
    .name = "Trsm",
    .props_size = sizeof(trsm_props_t),
    .props_print = trsm_props_print,
    .props_to_json = trsm_to_json,
    .props_from_json = trsm_from_json,
    .make_node = trsm_make_node,
    .perform = trsm_perform,
    .grad = trsm_grad,
};

static weft_status_t trsm_impl(weft_graph_t *g, weft_var_t *a, weft_var_t *b, unsigned flags,
                               const char *file, int line, weft_var_t **out)
{
    weft_var_t *in[2] = {a, b};
    weft_status_t st = weft__linalg_args(g, "Trsm", 2, in, file, line, out);
    if (st == WEFT_OK && (flags & ~TRSM_ALL_FLAGS)) {
        st = weft_graph_set_error(g, WEFT_EINVAL, "Trsm (at %s:%d): unknown flags 0x%x", file,
                                  line, flags & ~TRSM_ALL_FLAGS);
    }
    if (st == WEFT_OK && (flags & WEFT_TRSM_RIGHT) && weft_type_ndim(weft_var_type(b)) == 1) {
        st = weft_graph_set_error(g, WEFT_EINVAL, "Trsm (at %s:%d): a vector right-hand side "
                                  "needs the left side", file, line);
    }
    trsm_props_t p = {flags};
    return st == WEFT_OK ? weft__linalg_call(g, &weft__trsm_class, &p, 2, in, file, line, out)
                         : st;
}

/* ---- Syrk ---------------------------------------------------------------------- */

static weft_status_t syrk_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                    weft_var_t *const *in, size_t *n_out,
                                    const weft_type_t **out_types)
{
    const syrk_props_t *p = weft_op_props(op);
    static const int ranks[1] = {2};
    weft_dtype_t dt;
    weft_status_t st = weft__linalg_check_dtypes(g, "Syrk", n_in, in, 1, ranks, true, &dt);
    if (st != WEFT_OK) {
        return st;
    }
    int64_t n = weft_type_dim(weft_var_type(in[0]), p->trans ? 1 : 0);
    int64_t shape[2] = {n, n};
    *n_out = 1;
    return weft_type_tensor(g, dt, 2, shape, &out_types[0]);
}

/* Copies the lower triangle of the contiguous n x n matrix to the upper
 * (any float or complex dtype; complex: A A^T is symmetric, not Hermitian). */
static void syrk_mirror(weft_dtype_t dt, void *c, int64_t n)
{
    size_t es = weft_dtype_size(dt);
    for (int64_t i = 0; i < n; i++) {
        for (int64_t j = i + 1; j < n; j++) {
            memcpy((char *)c + (size_t)(i * n + j) * es, (char *)c + (size_t)(j * n + i) * es, es);
        }
    }
}

static weft_status_t syrk_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                  weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    const syrk_props_t *p = weft_op_props(weft_apply_op(node));
    const weft_tensor_t *a = in[0];
    int64_t n = weft_tensor_dim(a, p->trans ? 1 : 0), k = weft_tensor_dim(a, p->trans ? 0 : 1);
    int64_t dims[2] = {n, k}, shape[2] = {n, n};
    weft_status_t st = weft__linalg_fit(ctx, "Syrk", 2, dims);
    if (st == WEFT_OK) {
        st = weft__linalg_enter(ctx, "Syrk", WEFT_BLAS_KIND_LEVEL3);
    }
    weft_dtype_t dt = weft_tensor_dtype(a);
    if (st == WEFT_OK) {
        st = weft_kernel_alloc_output(ctx, &outputs[0], dt, 2, shape);
    }
    if (st != WEFT_OK || n == 0) {
        return st;
    }
    if (k == 0) {
        return weft_tensor_fill(outputs[0], 0.0);
    }
    weft__bmat_t am;
    if (weft__bmat_from(ctx, a, &am) != WEFT_OK) {
        return weft_kernel_error(ctx, WEFT_ENOMEM, "Syrk: out of memory");
    }
    /* a stored transposed (S row-major, a = S^T): a a^T = S^T S, so flip trans. */
    bool trans = (p->trans != 0) != am.trans;
    void *c = weft_tensor_data(outputs[0]);
    weft__blas_syrk(dt, true, trans, n, k, p->alpha, am.data, am.ld, 0.0, c, n);
    weft__bmat_fini(ctx, &am);
    syrk_mirror(dt, c, n);
    return WEFT_OK;
}

static weft_status_t syrk_grad(weft_graph_t *g, const weft_apply_t *node,
                               weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    const syrk_props_t *p = weft_op_props(weft_apply_op(node));
    weft_var_t *gz = output_grads[0], *a = weft_apply_input(node, 0);
    weft_var_t *gt = NULL, *sym = NULL, *prod = NULL;
    if (!gz || weft__lg_is_complex(a)) {
        return WEFT_OK;
    }
    weft_status_t st = weft__lg_t(g, gz, &gt);
    if (st == WEFT_OK) {
        st = weft__got(g, sym = weft_add(g, gz, gt));
    }
    if (st == WEFT_OK) {
        st = p->trans ? weft__got(g, prod = weft_dot(g, a, sym))
                      : weft__got(g, prod = weft_dot(g, sym, a));
    }
    if (st != WEFT_OK) {
        return st;
    }
    return weft__got(g, input_grads[0] = weft_binary_scalar(g, WEFT_ELEMWISE_MUL, prod, p->alpha));
}

static int syrk_props_print(const void *props, char *buf, size_t cap)
{
    const syrk_props_t *p = props;
    return snprintf(buf, cap, "trans=%d, alpha=%g", p->trans ? 1 : 0, p->alpha);
}

/* JSON props: {"alpha": 0.25, "trans": true}. */
static const weft__props_fields_t syrk_fields = {
    sizeof(syrk_props_t),
    {WEFT__PROPS_FIELD("alpha", WEFT__FIELD_F64, syrk_props_t, alpha),
     WEFT__PROPS_FIELD("trans", WEFT__FIELD_I64_BOOL, syrk_props_t, trans)},
};
WEFT__PROPS_FIELDS_HOOKS(syrk, syrk_fields)

const weft_op_class_t weft__syrk_class = {
    .size = sizeof(weft_op_class_t),
    .name = "Syrk",
    .props_size = sizeof(syrk_props_t),
    .props_print = syrk_props_print,
    .props_to_json = syrk_to_json,
    .props_from_json = syrk_from_json,
    .make_node = syrk_make_node,
    .perform = syrk_perform,
    .grad = syrk_grad,
};

static weft_status_t syrk_impl(weft_graph_t *g, weft_var_t *a, bool trans, double alpha,
                               const char *file, int line, weft_var_t **out)
{
    weft_status_t st = weft__linalg_args(g, "Syrk", 1, &a, file, line, out);
    syrk_props_t p;
    memset(&p, 0, sizeof p);
    p.alpha = alpha;
    p.trans = trans ? 1 : 0;
    return st == WEFT_OK ? weft__linalg_call(g, &weft__syrk_class, &p, 1, &a, file, line, out)
                         : st;
}

weft_var_t *weft_cholesky_at(weft_graph_t *g, weft_var_t *x, const char *file, int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t st = cholesky_impl(g, x, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_cholesky", file, line);
}

weft_var_t *weft_trsm_at(weft_graph_t *g, weft_var_t *a, weft_var_t *b, unsigned flags,
                         const char *file, int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t st = trsm_impl(g, a, b, flags, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_trsm", file, line);
}

weft_var_t *weft_syrk_at(weft_graph_t *g, weft_var_t *a, bool trans, double alpha, const char *file,
                         int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t st = syrk_impl(g, a, trans, alpha, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_syrk", file, line);
}
