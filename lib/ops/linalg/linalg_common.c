/* Shared pieces of the linear algebra ops: the stride -> BLAS layout
 * resolution (a transposed view is a transpose flag, a row stride is a
 * leading dimension; only non-unit inner strides are copied), type checks
 * and the small graph helpers the grad hooks are built from. */
#include <stdio.h>

#include "tensor/kernel_int.h" /* weft__kernel_scratch_copy */
#include "graph/ctor_int.h"
#include <complex.h>

#include "linalg_int.h"
#include "weft/elemwise.h"
#include "weft/reduce.h"
#include "weft/shape_ops.h"
#include "weft/array_ops.h"
#include "ops_int.h"

static int64_t max1(int64_t v)
{
    return v > 1 ? v : 1;
}

bool weft__bmat_layout(void *data, int64_t rows, int64_t cols, int64_t s0, int64_t s1,
                       weft__bmat_t *m)
{
    m->data = data;
    m->rows = rows;
    m->cols = cols;
    m->copy = NULL;
    /* Row-major: unit stride along a row (or one column), rows >= cols apart. */
    if ((cols <= 1 || s1 == 1) && (rows <= 1 || s0 >= max1(cols))) {
        m->trans = false;
        m->ld = rows <= 1 ? max1(cols) : s0;
        return true;
    }
    /* Column-major storage, i.e. the transposed view of a row-major matrix. */
    if ((rows <= 1 || s0 == 1) && (cols <= 1 || s1 >= max1(rows))) {
        m->trans = true;
        m->ld = cols <= 1 ? max1(rows) : s1;
        return true;
    }
    return false;
}

weft_status_t weft__bmat_from(weft_kernel_ctx_t *ctx, const weft_tensor_t *t, weft__bmat_t *m)
{
    int nd = weft_tensor_ndim(t);
    int64_t r = weft_tensor_dim(t, nd - 2), c = weft_tensor_dim(t, nd - 1);
    if (weft__bmat_layout(weft_tensor_data(t), r, c, weft_tensor_stride(t, nd - 2),
                          weft_tensor_stride(t, nd - 1), m)) {
        return WEFT_OK;
    }
    weft_tensor_t *copy = NULL;
    if (weft__kernel_scratch_copy(ctx, t, &copy) != WEFT_OK) {
        return WEFT_ENOMEM;
    }
    weft__bmat_layout(weft_tensor_data(copy), r, c, max1(c), 1, m);
    m->copy = copy;
    return WEFT_OK;
}

void weft__bmat_fini(weft_kernel_ctx_t *ctx, weft__bmat_t *m)
{
    weft_kernel_scratch_done(ctx, m->copy);
    m->copy = NULL;
}

weft_status_t weft__bvec_from(weft_kernel_ctx_t *ctx, const weft_tensor_t *t, weft__bvec_t *v)
{
    v->n = weft_tensor_dim(t, 0);
    v->inc = v->n <= 1 ? 1 : weft_tensor_stride(t, 0);
    v->data = weft_tensor_data(t);
    v->copy = NULL;
    if (v->inc > 0) {
        return WEFT_OK;
    }
    if (weft__kernel_scratch_copy(ctx, t, &v->copy) != WEFT_OK) {
        return WEFT_ENOMEM;
    }
    v->data = weft_tensor_data(v->copy);
    v->inc = 1;
    return WEFT_OK;
}

void weft__bvec_fini(weft_kernel_ctx_t *ctx, weft__bvec_t *v)
{
    weft_kernel_scratch_done(ctx, v->copy);
    v->copy = NULL;
}

void weft__bmat_gemm(weft_dtype_t dt, weft__blas_scalar_t alpha, const weft__bmat_t *a,
                     const weft__bmat_t *b, weft__blas_scalar_t beta, const weft__bmat_t *c)
{
    if (!c->trans) {
        weft__blas_gemm(dt, a->trans, b->trans, c->rows, c->cols, a->cols, alpha, a->data, a->ld,
                        b->data, b->ld, beta, c->data, c->ld);
        return;
    }
    /* C is stored column-major: compute C^T = B^T A^T into its row-major storage. */
    weft__blas_gemm(dt, !b->trans, !a->trans, c->cols, c->rows, a->cols, alpha, b->data, b->ld,
                    a->data, a->ld, beta, c->data, c->ld);
}

/* ---- intra-node parallel products ------------------------------------------------- */

/* A large product is computed as fixed blocks of C: panels of GEMM_BLOCK_MIN
 * or more rows (or columns, when C is wider than tall), one one-thread BLAS
 * call each, whether the blocks then run on one worker or many. The blocks
 * depend on the shape alone, never on the worker count: OpenBLAS may take
 * another path for a smaller call (a small-matrix kernel, other edge tiles),
 * so panels cut per worker count gave other last bits at 2 workers than at
 * 1 (execution.md §5).
 *
 * Blocking pays once the product is large enough that waking a worker (a
 * few us) is noise and the blocks' repacking is small against the product.
 * Below 2^22 multiply-adds (8.4 MFLOP, 0.2-0.25 ms of one-thread dgemm at
 * 37-44 GFLOP/s, docs/performance-notes.md §3.3) a product is one call:
 * cutting an RNN step's 32x256 @ 256x256 (2^21) into its two 128-column
 * blocks cost 15% of one-thread time (64x256x256 14%, 32x1024x256 in
 * 128-column blocks 19%; 64x512x256 in 256-column blocks 4%), which a Scan
 * pays on every step while its other nodes keep a second worker busy. */
#define GEMM_SPLIT_MACS ((int64_t)1 << 22)
/* Block length: each block is its own BLAS call and packs the shared
 * operand (k x the other dimension) again, which one call would pack once;
 * that costs about (pack time per element) / (multiply-add time x rows per
 * block), more when the shared operand outgrows the caches. One-thread dgemm
 * (C += A@B) measured here against one call: 1024x1024x1024 in 128-row blocks
 * 11% slower, 256-row 5%, 512-row 1.5%; 2048^3 in 512-row blocks 4%;
 * 1024x256x256 in 128-row blocks 3-5%, 256-row 2%; 256x256x256 in two
 * 128-row blocks 2% with the operands in cache, 3-8% from memory, which is
 * how a tile factorization's gemms find them (the distributed tile Cholesky,
 * docs/distributed.md §8: its gemm nodes 3-4% faster as one call). So a
 * block has at least GEMM_BLOCK_MIN rows and at least half the other
 * dimension (capped at GEMM_BLOCK_WIDE): about 2-5% at one worker; and a
 * near-square C (the split side shorter than twice the other) at least the
 * other dimension, so that a product up to 512 x 512 is one call, whose
 * intra-node parallelism a graph with other ready nodes does not need. A
 * long C keeps its blocks: up to GEMM_BLOCKS of them give 2-16 workers work
 * once the split dimension is long enough; lengths are multiples of 32,
 * whole micro-kernel tiles. */
#define GEMM_BLOCK_MIN 128
#define GEMM_BLOCK_WIDE 512
#define GEMM_BLOCKS 16

typedef struct gemm_split {
    weft_dtype_t dt;
    weft__blas_scalar_t alpha, beta;
    weft__bmat_t a, b, c;
    bool by_rows;  /* blocks are rows of C (and A), else columns of C (and B) */
    int64_t block; /* rows (columns) per block; the last block takes the rest */
} gemm_split_t;

/* Rows [r0, r1) of m, in either storage order. */
static weft__bmat_t bmat_rows(const weft__bmat_t *m, int64_t r0, int64_t r1, int64_t es)
{
    weft__bmat_t s = *m;
    s.data = (char *)m->data + (m->trans ? r0 : r0 * m->ld) * es;
    s.rows = r1 - r0;
    return s;
}

/* Columns [c0, c1) of m, in either storage order. */
static weft__bmat_t bmat_cols(const weft__bmat_t *m, int64_t c0, int64_t c1, int64_t es)
{
    weft__bmat_t s = *m;
    s.data = (char *)m->data + (m->trans ? c0 * m->ld : c0) * es;
    s.cols = c1 - c0;
    return s;
}

static void gemm_block_run(const gemm_split_t *sp, int64_t b0, int64_t b1)
{
    int64_t es = (int64_t)weft_dtype_size(sp->dt);
    if (sp->by_rows) {
        weft__bmat_t a = bmat_rows(&sp->a, b0, b1, es), c = bmat_rows(&sp->c, b0, b1, es);
        weft__bmat_gemm(sp->dt, sp->alpha, &a, &sp->b, sp->beta, &c);
    } else {
        weft__bmat_t b = bmat_cols(&sp->b, b0, b1, es), c = bmat_cols(&sp->c, b0, b1, es);
        weft__bmat_gemm(sp->dt, sp->alpha, &sp->a, &b, sp->beta, &c);
    }
}

/* [begin, end) starts on a block boundary (the grain is the block): one
 * block when a worker runs it, all of them when the loop runs inline. */
static weft_status_t gemm_split_range(void *arg, size_t begin, size_t end)
{
    const gemm_split_t *sp = arg;
    for (int64_t b0 = (int64_t)begin; b0 < (int64_t)end; b0 += sp->block)
        gemm_block_run(sp, b0, b0 + sp->block < (int64_t)end ? b0 + sp->block : (int64_t)end);
    return WEFT_OK;
}

/* Block length for a split dimension of len; other: C's other dimension. */
static int64_t gemm_block_len(int64_t len, int64_t other)
{
    int64_t b = (len + GEMM_BLOCKS - 1) / GEMM_BLOCKS;
    int64_t amortize = len < 2 * other ? other : other / 2;
    if (amortize > GEMM_BLOCK_WIDE) amortize = GEMM_BLOCK_WIDE;
    if (b < amortize) b = amortize;
    if (b < GEMM_BLOCK_MIN) b = GEMM_BLOCK_MIN;
    return (b + 31) / 32 * 32;
}

int64_t weft__gemm_split_block(int64_t m, int64_t n, int64_t k)
{
    int64_t macs; /* an overflowing count (broadcast operands) is simply large */
    if (__builtin_mul_overflow(m, n, &macs) || __builtin_mul_overflow(macs, k, &macs))
        macs = INT64_MAX;
    int64_t len = m >= n ? m : n;
    int64_t block = gemm_block_len(len, m >= n ? n : m);
    return macs < GEMM_SPLIT_MACS || len <= block ? 0 : block;
}

weft_status_t weft__bmat_gemm_par(weft_kernel_ctx_t *ctx, weft_dtype_t dt,
                                  weft__blas_scalar_t alpha, const weft__bmat_t *a,
                                  const weft__bmat_t *b, weft__blas_scalar_t beta,
                                  const weft__bmat_t *c)
{
    int64_t m = c->rows, n = c->cols;
    gemm_split_t sp = { dt, alpha, beta, *a, *b, *c, m >= n, 0 };
    int64_t len = sp.by_rows ? m : n;
    sp.block = weft__gemm_split_block(m, n, a->cols);
    /* a kind set to several BLAS threads runs the product as one threaded
     * call (its bits follow that BLAS setting, not the worker count) */
    if (sp.block == 0 || weft_blas_get_threads(WEFT_BLAS_KIND_LEVEL3) > 1) {
        weft__bmat_gemm(dt, alpha, a, b, beta, c);
        return WEFT_OK;
    }
    return weft_kernel_parallel_for(ctx, (size_t)len, (size_t)sp.block, gemm_split_range, &sp);
}

void weft__bmat_gemv(weft_dtype_t dt, weft__blas_scalar_t alpha, const weft__bmat_t *a,
                     const weft__bvec_t *x, weft__blas_scalar_t beta, const weft__bvec_t *y)
{
    /* gemv takes the matrix as stored: rows x cols row-major, or its transpose. */
    int64_t m = a->trans ? a->cols : a->rows, n = a->trans ? a->rows : a->cols;
    weft__blas_gemv(dt, a->trans, m, n, alpha, a->data, a->ld, x->data, x->inc, beta, y->data,
                    y->inc);
}

double weft__scalar_value(const weft_tensor_t *t)
{
    return weft_tensor_flat_get(t, 0);
}

weft__blas_scalar_t weft__scalar_value_cx(const weft_tensor_t *t)
{
    int64_t idx[WEFT_MAX_NDIM] = {0}; /* element [0, ..., 0] */
    double re = 0, im = 0;
    weft_tensor_get_complex(t, idx, &re, &im);
    return re + im * I;
}

weft_status_t weft__linalg_check(weft_graph_t *g, const char *opname, size_t n_in,
                                 weft_var_t *const *inputs, size_t want_in, const int *ranks,
                                 weft_dtype_t *dt)
{
    return weft__linalg_check_dtypes(g, opname, n_in, inputs, want_in, ranks, false, dt);
}

weft_status_t weft__linalg_check_dtypes(weft_graph_t *g, const char *opname, size_t n_in,
                                        weft_var_t *const *inputs, size_t want_in,
                                        const int *ranks, bool complex_ok, weft_dtype_t *dt)
{
    if (n_in != want_in) {
        return weft_graph_set_error(g, WEFT_EINVAL, "%s: takes %zu inputs, got %zu", opname,
                                    want_in, n_in);
    }
    for (size_t i = 0; i < n_in; i++) {
        const weft_type_t *t = weft_var_type(inputs[i]);
        weft_dtype_t d = weft_type_dtype(t);
        bool ok = weft_type_kind(t) == WEFT_TYPE_TENSOR &&
                  (d == WEFT_FLOAT32 || d == WEFT_FLOAT64 ||
                   (complex_ok && (d == WEFT_COMPLEX64 || d == WEFT_COMPLEX128))) &&
                  (i == 0 || d == *dt) &&
                  (ranks[i] < 0 || weft_type_ndim(t) == ranks[i]);
        if (!ok) {
            char tb[64];
            weft_type_print(t, tb, sizeof tb);
            return weft_graph_set_error(g, WEFT_ETYPE, "%s: input %zu has type %s (need a "
                                        "float32/float64%s tensor%s%s)", opname, i, tb,
                                        complex_ok ? "/complex64/complex128" : "",
                                        i ? " of input 0's dtype" : "",
                                        ranks[i] == 0   ? ", 0-d"
                                        : ranks[i] == 1 ? ", 1-d"
                                        : ranks[i] == 2 ? ", 2-d"
                                                        : "");
        }
        if (i == 0) {
            *dt = d;
        }
    }
    return WEFT_OK;
}

weft_status_t weft__linalg_match(weft_graph_t *g, const char *opname, weft_var_t *const *in,
                                 int ia, int da, int ib, int db)
{
    int64_t a = weft_type_dim(weft_var_type(in[ia]), da);
    int64_t b = weft_type_dim(weft_var_type(in[ib]), db);
    if (a == WEFT_DIM_UNKNOWN || b == WEFT_DIM_UNKNOWN || a == b) {
        return WEFT_OK;
    }
    return weft_graph_set_error(g, WEFT_ETYPE, "%s: input %d dim %d has length %lld but input "
                                "%d dim %d has %lld", opname, ia, da, (long long)a, ib, db,
                                (long long)b);
}

weft_status_t weft__linalg_call(weft_graph_t *g, const weft_op_class_t *cls, const void *props,
                                size_t n_in, weft_var_t *const *in, const char *file, int line,
                                weft_var_t **out)
{
    const weft_op_t *op = NULL;
    weft_status_t st = weft_op_create(g, cls, props, &op);
    return st == WEFT_OK ? weft__got(g, *out = weft_op_call_at(g, op, n_in, in, file, line)) : st;
}

weft_status_t weft__linalg_args(weft_graph_t *g, const char *opname, size_t n,
                                weft_var_t *const *in, const char *file, int line,
                                weft_var_t **out)
{
    if (out) {
        *out = NULL;
    }
    if (!g) {
        return WEFT_EINVAL;
    }
    if (!out) {
        return weft_graph_set_error(g, WEFT_EINVAL, "%s (at %s:%d): NULL out", opname, file,
                                    line);
    }
    for (size_t i = 0; i < n; i++) {
        if (!in[i]) {
            return weft_graph_set_error(g, WEFT_EINVAL, "%s (at %s:%d): NULL input %zu", opname,
                                        file, line, i);
        }
        if (weft_var_graph(in[i]) != g) {
            char vb[256];
            weft_var_print(in[i], vb, sizeof(vb));
            return weft_graph_set_error(g, WEFT_EFOREIGN,
                                        "%s (at %s:%d): input %zu, %s, belongs to another graph "
                                        "context", opname, file, line, i, vb);
        }
    }
    return WEFT_OK;
}

weft_status_t weft__linalg_shape_error(weft_kernel_ctx_t *ctx, const char *opname,
                                       const char *what)
{
    return weft_kernel_error(ctx, WEFT_ESHAPE, "%s: %s", opname, what);
}

weft_status_t weft__linalg_fit(weft_kernel_ctx_t *ctx, const char *opname, int n,
                               const int64_t *dims)
{
    if (weft__blas_dims_fit(n, dims)) {
        return WEFT_OK;
    }
    return weft_kernel_error(ctx, WEFT_EOVERFLOW, "%s: a length exceeds BLAS's int range",
                             opname);
}

weft_status_t weft__linalg_enter(weft_kernel_ctx_t *ctx, const char *opname,
                                 weft_blas_kind_t kind)
{
    if (weft__blas_enter(kind) == WEFT_OK) {
        return WEFT_OK;
    }
    return weft_kernel_error(ctx, WEFT_ESTATE, "%s: the serial OpenBLAS build is not safe from "
                             "several threads; link the pthread build", opname);
}

weft_status_t weft__lapack_enter(weft_kernel_ctx_t *ctx, const char *opname, int64_t order)
{
    int want = weft_blas_get_threads(WEFT_BLAS_KIND_LAPACK);
    if (want == WEFT_BLAS_THREADS_FREE) {
        size_t idle = order >= WEFT__BLAS_FREE_MIN_ORDER ? weft_kernel_idle_workers(ctx) : 0;
        size_t cap = weft_kernel_threads(ctx); /* never more threads than workers */
        want = 1 + (int)(idle + 1 > cap ? (cap > 0 ? cap - 1 : 0) : idle);
    }
    if (weft__blas_enter_threads(want) == WEFT_OK) {
        return WEFT_OK;
    }
    return weft_kernel_error(ctx, WEFT_ESTATE, "%s: the serial OpenBLAS build is not safe from "
                             "several threads; link the pthread build", opname);
}

/* ---- grad-hook helpers ------------------------------------------------------ */

weft_status_t weft__lg_t(weft_graph_t *g, weft_var_t *x, weft_var_t **out)
{
    int nd = weft_type_ndim(weft_var_type(x));
    if (nd < 2) {
        *out = x;
        return WEFT_OK;
    }
    int order[WEFT_MAX_NDIM];
    for (int d = 0; d < nd; d++) {
        order[d] = d;
    }
    order[nd - 2] = nd - 1;
    order[nd - 1] = nd - 2;
    return weft__got(g, *out = weft_dimshuffle(g, x, nd, order));
}

weft_status_t weft__lg_outer(weft_graph_t *g, weft_var_t *a, weft_var_t *b, weft_var_t **out)
{
    static const int col[2] = {0, WEFT_DIMSHUFFLE_NEW}, row[2] = {WEFT_DIMSHUFFLE_NEW, 0};
    weft_var_t *ac = NULL, *br = NULL;
    weft_status_t st = weft__got(g, ac = weft_dimshuffle(g, a, 2, col));
    if (st == WEFT_OK) {
        st = weft__got(g, br = weft_dimshuffle(g, b, 2, row));
    }
    return st == WEFT_OK ? weft__got(g, *out = weft_dot(g, ac, br)) : st;
}

weft_status_t weft__lg_scale(weft_graph_t *g, weft_var_t *s, weft_var_t *x, weft_var_t **out)
{
    return weft__got(g, *out = weft_mul(g, s, x));
}

weft_status_t weft__lg_neg(weft_graph_t *g, weft_var_t *x, weft_var_t **out)
{
    return weft__got(g, *out = weft_neg(g, x));
}

weft_status_t weft__lg_sum_prod(weft_graph_t *g, weft_var_t *a, weft_var_t *b, weft_var_t **out)
{
    weft_var_t *p = NULL;
    weft_status_t st = weft__got(g, p = weft_mul(g, a, b));
    return st == WEFT_OK ? weft__got(g, *out = weft_sum(g, p, 0, NULL, false)) : st;
}

weft_status_t weft__lg_mm(weft_graph_t *g, const char *opname, weft_var_t *a, weft_var_t *b,
                          weft_var_t **out)
{
    const weft_type_t *ta = weft_var_type(a), *tb = weft_var_type(b);
    int na = weft_type_ndim(ta), nb = weft_type_ndim(tb);
    int64_t la = na == 3 ? weft_type_dim(ta, 0) : 0, lb = nb == 3 ? weft_type_dim(tb, 0) : 0;
    /* Dot's batched product: one batch axis of equal lengths (unknown ones
     * are checked by its kernel) */
    bool same3 = na == 3 && nb == 3 &&
                 (la == lb || la == WEFT_DIM_UNKNOWN || lb == WEFT_DIM_UNKNOWN);
    if ((na <= 2 && nb <= 2) || same3) {
        return weft__got(g, *out = weft_dot(g, a, b));
    }
    for (int d = 0; d < na || d < nb; d++) {
        if ((d < na && weft_type_dim(ta, d) == WEFT_DIM_UNKNOWN) ||
            (d < nb && weft_type_dim(tb, d) == WEFT_DIM_UNKNOWN)) {
            return weft_graph_set_error(g, WEFT_ENOTIMPL, "%s: the gradient of a stack with "
                                        "more than one batch axis (or broadcast batch axes) "
                                        "needs static lengths", opname);
        }
    }
    return weft__got(g, *out = weft_matmul(g, a, b));
}

weft_status_t weft__lg_sum_to(weft_graph_t *g, weft_var_t *grad, weft_var_t *target,
                              weft_var_t **out)
{
    int ng = weft_type_ndim(weft_var_type(grad)), nt = weft_type_ndim(weft_var_type(target));
    weft_status_t st = WEFT_OK;
    if (ng > nt) {
        int axes[WEFT_MAX_NDIM];
        for (int d = 0; d < ng - nt; d++) {
            axes[d] = d;
        }
        st = weft__got(g, grad = weft_sum(g, grad, (size_t)(ng - nt), axes, false));
    }
    return st == WEFT_OK ? weft__grad_reduce_to(g, grad, target, out) : st;
}

weft_status_t weft__lg_new_axis(weft_graph_t *g, weft_var_t *x, int pos, weft_var_t **out)
{
    int nd = weft_type_ndim(weft_var_type(x)), order[WEFT_MAX_NDIM];
    for (int d = 0, s = 0; d <= nd; d++) {
        order[d] = d == pos ? WEFT_DIMSHUFFLE_NEW : s++;
    }
    return weft__got(g, *out = weft_dimshuffle(g, x, nd + 1, order));
}

weft_status_t weft__lg_neg_outer(weft_graph_t *g, const char *opname, weft_var_t *l,
                                 weft_var_t *r, bool vec, weft_var_t **out)
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
            st = weft__lg_mm(g, opname, l, rr, &prod);
        }
    }
    return st == WEFT_OK ? weft__lg_neg(g, prod, out) : st;
}
