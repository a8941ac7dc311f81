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
    int nb = weft_type_ndim(weft_var_type(in[1]));
    if (nb == 0) {
        return weft_graph_set_error(g, WEFT_ETYPE, "SolveTriangular: input 1 is 0-d (need a "
                                    "vector (n,) or a stack (..., n, k))");
    }
    *n_out = 1;
    return weft__bcast_solve_type(g, "SolveTriangular", in, nb == 1 ? 1 : 2, &out_types[0]);
}

/* ---- kernel ---------------------------------------------------------------------- */

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
                                 const weft_tensor_t *b, weft__bcast_t *t, int64_t *n, int64_t *k,
                                 weft_tensor_t **out)
{
    int na = weft_tensor_ndim(a), nb = weft_tensor_ndim(b);
    *n = weft_tensor_dim(a, na - 1);
    *k = nb == 1 ? 1 : weft_tensor_dim(b, nb - 1);
    if (weft_tensor_dim(a, na - 2) != *n || weft_tensor_dim(b, nb == 1 ? 0 : nb - 2) != *n ||
        !weft__bcast_init(a, b, nb == 1 ? 1 : 2, t)) {
        return weft__linalg_shape_error(ctx, "SolveTriangular", "a is not square, or b's "
                                        "length or batch does not match a's");
    }
    int64_t dims[2] = {*n, *k}, shape[WEFT_MAX_NDIM];
    weft_status_t st = weft__linalg_fit(ctx, "SolveTriangular", 2, dims);
    if (st == WEFT_OK) {
        st = weft__lapack_enter(ctx, "SolveTriangular", *n);
    }
    int nd = weft__bcast_out_shape(t, nb == 1 ? 1 : 2, *n, *k, shape);
    return st == WEFT_OK ? weft_kernel_alloc_output(ctx, out, weft_tensor_dtype(a), nd, shape)
                         : st;
}

static weft_status_t tri_solve_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                       weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    const tri_solve_props_t *p = weft_op_props(weft_apply_op(node));
    const weft_tensor_t *a = in[0], *b = in[1];
    weft__bcast_t t;
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
        weft__bcast_offsets(&t, i, &oa, &ob);
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
        st = p->trans ? weft__lg_neg_outer(g, "SolveTriangular", x, gb, vec, &ga)
                    : weft__lg_neg_outer(g, "SolveTriangular", gb, x, vec, &ga);
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
