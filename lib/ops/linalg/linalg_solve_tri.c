/* SolveTriangular{lower, trans, unit_diagonal}(a, b), scipy's / PyTensor's
 * solve_triangular on stacks: x with op(a) x = b, a (..., n, n) triangular,
 * b a vector (n,) (solved against every matrix of a) or a stack (..., n, k)
 * whose batch axes broadcast against a's as NumPy's. One ?trtrs per output
 * matrix on a row-major copy of a read column-major (a^T: the triangle and
 * the transpose flag swap, no transposed copy) with the LAPACK node kind's
 * OpenBLAS threads, so the bits do not depend on the pool's worker count.
 * A zero on the diagonal (non-unit) fails the node naming its position.
 * Gradient (Giles 2008): gb = solve_triangular(a, gx) with the transpose
 * flag flipped; ga = -gb x^T (trans: -x gb^T) restricted to the read
 * triangle (without the diagonal for a unit diagonal); both summed over the
 * batch axes their input was broadcast along. */
#include <lapacke.h>
#include <stdio.h>
#include <string.h>

#include "graph/ctor_int.h"
#include "lapack_int.h"
#include "props_fields_int.h"
#include "weft/array_ops.h"
#include "weft/elemwise.h"
#include "weft/linalg_lapack.h"

typedef struct tri_solve_props {
    int64_t lower, unit_diagonal;
    int32_t trans, pad;
} tri_solve_props_t;

/* ---- make_node -------------------------------------------------------------------- */

/* The static length of broadcast batch axis d (of nbo) of a (nba batch axes)
 * and b (nbb); WEFT_ETYPE when two known lengths do not broadcast. An
 * unknown length against a known one other than 1 takes the known one (the
 * kernel checks it at run time). */
static weft_status_t batch_dim(weft_graph_t *g, const weft_type_t *ta, int nba,
                               const weft_type_t *tb, int nbb, int nbo, int d, int64_t *out)
{
    int64_t la = d >= nbo - nba ? weft_type_dim(ta, d - (nbo - nba)) : 1;
    int64_t lb = d >= nbo - nbb ? weft_type_dim(tb, d - (nbo - nbb)) : 1;
    if (la == 1 || la == lb) {
        *out = lb;
    } else if (lb == 1) {
        *out = la;
    } else if (la != WEFT_DIM_UNKNOWN && lb != WEFT_DIM_UNKNOWN) {
        return weft_graph_set_error(g, WEFT_ETYPE, "SolveTriangular: batch axis %d: lengths "
                                    "%lld (input 0) and %lld (input 1) do not broadcast", d,
                                    (long long)la, (long long)lb);
    } else {
        *out = la == WEFT_DIM_UNKNOWN ? lb : la;
    }
    return WEFT_OK;
}

static weft_status_t tri_solve_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                         weft_var_t *const *in, size_t *n_out,
                                         const weft_type_t **out_types)
{
    static const int any[2] = {-1, -1};
    const tri_solve_props_t *p = weft_op_props(op);
    weft_dtype_t dt;
    if (p->trans < 0 || p->trans > 2) {
        return weft_graph_set_error(g, WEFT_EINVAL, "SolveTriangular: trans %d (need 0, 1 or "
                                    "2: N, T, C)", (int)p->trans);
    }
    weft_status_t st = weft__linalg_check(g, "SolveTriangular", n_in, in, 2, any, &dt);
    if (st == WEFT_OK) {
        st = weft__batch_check_square(g, "SolveTriangular", in[0], 0);
    }
    if (st != WEFT_OK) {
        return st;
    }
    const weft_type_t *ta = weft_var_type(in[0]), *tb = weft_var_type(in[1]);
    int na = weft_type_ndim(ta), nb = weft_type_ndim(tb);
    if (nb == 0) {
        return weft_graph_set_error(g, WEFT_ETYPE, "SolveTriangular: input 1 is 0-d (need a "
                                    "vector (n,) or a stack (..., n, k))");
    }
    st = weft__linalg_match(g, "SolveTriangular", in, 0, na - 1, 1, nb == 1 ? 0 : nb - 2);
    int nba = na - 2, nbb = nb == 1 ? 0 : nb - 2, nbo = nba > nbb ? nba : nbb;
    int64_t shape[WEFT_MAX_NDIM];
    for (int d = 0; d < nbo && st == WEFT_OK; d++) {
        st = batch_dim(g, ta, nba, tb, nbb, nbo, d, &shape[d]);
    }
    if (st != WEFT_OK) {
        return st;
    }
    int nd = nbo;
    shape[nd++] = weft_type_dim(ta, na - 1);
    if (nb > 1) {
        shape[nd++] = weft_type_dim(tb, nb - 1);
    }
    *n_out = 1;
    return weft_type_tensor(g, dt, nd, shape, &out_types[0]);
}

/* ---- kernel ---------------------------------------------------------------------- */

/* The run-time broadcast of a's and b's batch axes: the output's batch
 * shape, and each input's element stride per output batch axis (0 where it
 * is broadcast). */
typedef struct tri_batch {
    int nbo;
    int64_t shape[WEFT_MAX_NDIM], sa[WEFT_MAX_NDIM], sb[WEFT_MAX_NDIM], count;
} tri_batch_t;

static bool tri_batch_init(const weft_tensor_t *a, const weft_tensor_t *b, tri_batch_t *t)
{
    int nba = weft_tensor_ndim(a) - 2, nb = weft_tensor_ndim(b);
    int nbb = nb == 1 ? 0 : nb - 2;
    t->nbo = nba > nbb ? nba : nbb;
    t->count = 1;
    for (int d = 0; d < t->nbo; d++) {
        int da = d - (t->nbo - nba), db = d - (t->nbo - nbb);
        int64_t la = da >= 0 ? weft_tensor_dim(a, da) : 1;
        int64_t lb = db >= 0 ? weft_tensor_dim(b, db) : 1;
        if (la != lb && la != 1 && lb != 1) {
            return false;
        }
        t->shape[d] = la == 1 ? lb : la;
        t->sa[d] = la == 1 ? 0 : weft_tensor_stride(a, da);
        t->sb[d] = lb == 1 ? 0 : weft_tensor_stride(b, db);
        t->count *= t->shape[d];
    }
    return true;
}

/* Element offsets in a and b of output batch entry i. */
static void tri_batch_offsets(const tri_batch_t *t, int64_t i, int64_t *oa, int64_t *ob)
{
    *oa = *ob = 0;
    for (int d = t->nbo - 1; d >= 0; d--) {
        int64_t k = i % t->shape[d];
        *oa += k * t->sa[d];
        *ob += k * t->sb[d];
        i /= t->shape[d];
    }
}

/* ?trtrs on the column-major m (the transpose of the row-major matrix a):
 * op(a) x = b is op'(m) x = b with the other triangle and the other
 * transpose flag. Returns LAPACK's info. */
static int tri_trtrs(weft_dtype_t dt, const tri_solve_props_t *p, int64_t n, int64_t k,
                     const void *m, void *x)
{
    char uplo = p->lower ? 'U' : 'L', trans = p->trans ? 'N' : 'T';
    char diag = p->unit_diagonal ? 'U' : 'N';
    lapack_int ni = (lapack_int)n, ki = (lapack_int)k;
    if (dt == WEFT_FLOAT64) {
        return (int)LAPACKE_dtrtrs_work(LAPACK_COL_MAJOR, uplo, trans, diag, ni, ki, m, ni, x,
                                        ni);
    }
    return (int)LAPACKE_strtrs_work(LAPACK_COL_MAJOR, uplo, trans, diag, ni, ki, m, ni, x, ni);
}

static weft_status_t tri_singular(weft_kernel_ctx_t *ctx, int64_t count, int64_t index,
                                  int info)
{
    if (count > 1) {
        return weft_kernel_error(ctx, WEFT_ERANGE, "SolveTriangular: matrix %lld of the batch "
                                 "is singular (a[%d,%d] = 0)", (long long)index, info - 1,
                                 info - 1);
    }
    return weft_kernel_error(ctx, WEFT_ERANGE, "SolveTriangular: the matrix is singular "
                             "(a[%d,%d] = 0)", info - 1, info - 1);
}

/* Checks the run-time lengths and allocates x; *k is the number of
 * right-hand sides. */
static weft_status_t tri_prepare(weft_kernel_ctx_t *ctx, const weft_tensor_t *a,
                                 const weft_tensor_t *b, tri_batch_t *t, int64_t *n, int64_t *k,
                                 weft_tensor_t **out)
{
    int na = weft_tensor_ndim(a), nb = weft_tensor_ndim(b);
    *n = weft_tensor_dim(a, na - 1);
    *k = nb == 1 ? 1 : weft_tensor_dim(b, nb - 1);
    if (weft_tensor_dim(a, na - 2) != *n || weft_tensor_dim(b, nb == 1 ? 0 : nb - 2) != *n ||
        !tri_batch_init(a, b, t)) {
        return weft__linalg_shape_error(ctx, "SolveTriangular", "a is not square, or b's "
                                        "length or batch does not match a's");
    }
    int64_t dims[2] = {*n, *k}, shape[WEFT_MAX_NDIM];
    weft_status_t st = weft__linalg_fit(ctx, "SolveTriangular", 2, dims);
    if (st == WEFT_OK) {
        st = weft__lapack_enter(ctx, "SolveTriangular", *n);
    }
    memcpy(shape, t->shape, (size_t)t->nbo * sizeof *shape);
    int nd = t->nbo;
    shape[nd++] = *n;
    if (nb > 1) {
        shape[nd++] = *k;
    }
    return st == WEFT_OK ? weft_kernel_alloc_output(ctx, out, weft_tensor_dtype(a), nd, shape)
                         : st;
}

static weft_status_t tri_solve_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                       weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    const tri_solve_props_t *p = weft_op_props(weft_apply_op(node));
    const weft_tensor_t *a = in[0], *b = in[1];
    tri_batch_t t;
    int64_t n = 0, k = 0;
    weft_status_t st = tri_prepare(ctx, a, b, &t, &n, &k, &outputs[0]);
    if (st != WEFT_OK || n == 0 || k == 0 || t.count == 0) {
        return st;
    }
    weft_dtype_t dt = weft_tensor_dtype(a);
    int64_t nn = n * n, nk = n * k, es = (int64_t)weft_dtype_size(dt);
    int core = weft_tensor_ndim(b) == 1 ? 1 : 2;
    weft_tensor_t *m = NULL, *xs = NULL;
    st = weft_kernel_scratch(ctx, dt, 1, &nn, &m);
    if (st == WEFT_OK) {
        st = weft_kernel_scratch(ctx, dt, 1, &nk, &xs);
    }
    char *x = weft_tensor_data(outputs[0]);
    for (int64_t i = 0; i < t.count && st == WEFT_OK; i++) {
        int64_t oa = 0, ob = 0;
        tri_batch_offsets(&t, i, &oa, &ob);
        weft__batch_load(a, 2, oa, n, n, false,
                         weft_tensor_data(m));
        weft__batch_load(b, core, ob, n, k, true,
                         weft_tensor_data(xs));
        int info = tri_trtrs(dt, p, n, k, weft_tensor_data(m), weft_tensor_data(xs));
        if (info > 0) {
            st = tri_singular(ctx, t.count, i, info);
        } else if (info < 0) {
            st = weft_kernel_error(ctx, WEFT_ERANGE, "SolveTriangular: LAPACK rejected "
                                   "argument %d", -info);
        } else {
            weft__lapack_store_cm(dt, weft_tensor_data(xs), n, k, n, x + i * nk * es);
        }
    }
    weft_kernel_scratch_done(ctx, m);
    weft_kernel_scratch_done(ctx, xs);
    return st;
}

/* ---- gradient --------------------------------------------------------------------- */

/* -l r^T over the last two axes; for vectors (vec) -l[..., :, None] r[..., None, :]. */
static weft_status_t neg_outer(weft_graph_t *g, weft_var_t *l, weft_var_t *r, bool vec,
                               weft_var_t **out)
{
    weft_var_t *lc = NULL, *rr = NULL, *prod = NULL;
    weft_status_t st;
    if (vec) {
        int nd = weft_type_ndim(weft_var_type(l));
        st = weft__lg_new_axis(g, l, nd, &lc);
        if (st == WEFT_OK) {
            st = weft__lg_new_axis(g, r, nd - 1, &rr);
        }
        if (st == WEFT_OK) {
            st = weft__got(g, prod = weft_mul(g, lc, rr));
        }
    } else {
        st = weft__lg_t(g, r, &rr);
        if (st == WEFT_OK) {
            st = weft__lg_mm(g, "SolveTriangular", l, rr, &prod);
        }
    }
    return st == WEFT_OK ? weft__lg_neg(g, prod, out) : st;
}

/* gb = solve_triangular(a, gx) with op(a)^T. A vector b's gx (..., n) of a
 * stack is solved as the stack of columns (..., n, 1). */
static weft_status_t gb_solve(weft_graph_t *g, const tri_solve_props_t *p, weft_var_t *a,
                              weft_var_t *gx, bool vec, weft_var_t **out)
{
    int nd = weft_type_ndim(weft_var_type(gx));
    bool cols = vec && nd > 1;
    weft_status_t st = cols ? weft__lg_new_axis(g, gx, nd, &gx) : WEFT_OK;
    if (st == WEFT_OK) {
        st = weft__got(g, *out = weft_solve_triangular(g, a, gx, p->lower != 0,
                                                       p->trans ? WEFT_TRANS_N : WEFT_TRANS_T,
                                                       p->unit_diagonal != 0));
    }
    static const int last[1] = {-1};
    return st == WEFT_OK && cols ? weft__got(g, *out = weft_squeeze(g, *out, 1, last)) : st;
}

static weft_status_t tri_solve_grad(weft_graph_t *g, const weft_apply_t *node,
                                    weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    const tri_solve_props_t *p = weft_op_props(weft_apply_op(node));
    weft_var_t *gx = output_grads[0], *a = weft_apply_input(node, 0);
    weft_var_t *b = weft_apply_input(node, 1), *x = weft_apply_output(node, 0);
    weft_var_t *gb = NULL, *ga = NULL, *gam = NULL;
    if (!gx) {
        return WEFT_OK;
    }
    bool vec = weft_type_ndim(weft_var_type(b)) == 1;
    weft_status_t st = gb_solve(g, p, a, gx, vec, &gb);
    if (st == WEFT_OK) { /* op(a) = a: -gb x^T; op(a) = a^T: -x gb^T */
        st = p->trans ? neg_outer(g, x, gb, vec, &ga) : neg_outer(g, gb, x, vec, &ga);
    }
    if (st == WEFT_OK) {
        st = weft__lg_sum_to(g, ga, a, &gam);
    }
    if (st == WEFT_OK) {
        st = weft__trimask(g, gam, p->lower != 0, p->unit_diagonal ? 0.0 : 1.0,
                           &input_grads[0]);
    }
    return st == WEFT_OK ? weft__lg_sum_to(g, gb, b, &input_grads[1]) : st;
}

/* ---- class, constructor ------------------------------------------------------------- */

static int tri_solve_props_print(const void *props, char *buf, size_t cap)
{
    const tri_solve_props_t *p = props;
    return snprintf(buf, cap, "lower=%d, trans=%c, unit_diagonal=%d", p->lower ? 1 : 0,
                    "NTC"[p->trans >= 0 && p->trans <= 2 ? p->trans : 0],
                    p->unit_diagonal ? 1 : 0);
}

/* JSON props: {"lower": true, "trans": 0, "unit_diagonal": false}. */
static const weft__props_fields_t tri_solve_fields = {
    sizeof(tri_solve_props_t),
    {WEFT__PROPS_FIELD("lower", WEFT__FIELD_I64_BOOL, tri_solve_props_t, lower),
     WEFT__PROPS_FIELD("trans", WEFT__FIELD_I32, tri_solve_props_t, trans),
     WEFT__PROPS_FIELD("unit_diagonal", WEFT__FIELD_I64_BOOL, tri_solve_props_t,
                       unit_diagonal)},
};
WEFT__PROPS_FIELDS_HOOKS(tri_solve, tri_solve_fields)

const weft_op_class_t weft__solve_tri_class = {
    .size = sizeof(weft_op_class_t),
    .name = "SolveTriangular",
    .props_size = sizeof(tri_solve_props_t),
    .props_print = tri_solve_props_print,
    .props_to_json = tri_solve_to_json,
    .props_from_json = tri_solve_from_json,
    .make_node = tri_solve_make_node,
    .perform = tri_solve_perform,
    .grad = tri_solve_grad,
};

weft_var_t *weft_solve_triangular_at(weft_graph_t *g, weft_var_t *a, weft_var_t *b, bool lower,
                                     weft_solve_trans_t trans, bool unit_diagonal,
                                     const char *file, int line)
{
    weft_var_t *in[2] = {a, b}, *out = NULL;
    if (!g) {
        return NULL;
    }
    weft__ctor_begin(g);
    weft_status_t st = weft__linalg_args(g, "SolveTriangular", 2, in, file, line, &out);
    if (st == WEFT_OK && (trans < WEFT_TRANS_N || trans > WEFT_TRANS_C)) {
        st = weft_graph_set_error(g, WEFT_EINVAL, "SolveTriangular (at %s:%d): trans %d (need "
                                  "WEFT_TRANS_N, _T or _C)", file, line, (int)trans);
    }
    if (st == WEFT_OK) {
        tri_solve_props_t p;
        memset(&p, 0, sizeof p);
        p.lower = lower ? 1 : 0;
        p.trans = (int32_t)trans;
        p.unit_diagonal = unit_diagonal ? 1 : 0;
        st = weft__linalg_call(g, &weft__solve_tri_class, &p, 2, in, file, line, &out);
    }
    return weft__ctor_end(g, st, out, "weft_solve_triangular", file, line);
}
