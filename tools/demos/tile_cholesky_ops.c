/* tile_cholesky demo: the tile op classes TilePotrf, TilePotrfInv, TileTrmm
 * and TileSyrk (weft's Cholesky, Trsm and Syrk ops copy their input into a
 * new output; these overwrite one input instead, declared in a destroy_map
 * so a DestroyHandler orders them; TilePotrfInv also writes a new tile, the
 * inverse). They work on row-major float64 tiles, single-threaded (a
 * compiled function runs OpenBLAS with one thread while its nodes run):
 * TileTrmm and TileSyrk call one CBLAS routine each, the two factor ops the
 * recursive kernel of tile_cholesky_kernel.h. */
#include <cblas.h>
#include <stdbool.h>

#include "tile_cholesky_core.h"
#include "tile_cholesky_kernel.h"
#include "weft/node_cost.h"

/* ---- shared checks -------------------------------------------------------------- */

static weft_status_t check_matrix(weft_graph_t *g, const char *op, weft_var_t *v, size_t i)
{
    const weft_type_t *t = weft_var_type(v);
    if (weft_type_dtype(t) != WEFT_FLOAT64 || weft_type_ndim(t) != 2)
        return weft_graph_set_error(g, WEFT_ETYPE, "%s: input %zu must be a float64 matrix", op,
                                    i);
    return WEFT_OK;
}

/* Static lengths a_dim of a and b_dim of b must agree when both are known. */
static weft_status_t check_len(weft_graph_t *g, const char *op, weft_var_t *a, int a_dim,
                               weft_var_t *b, int b_dim)
{
    int64_t x = weft_type_dim(weft_var_type(a), a_dim), y = weft_type_dim(weft_var_type(b), b_dim);
    if (x >= 0 && y >= 0 && x != y)
        return weft_graph_set_error(g, WEFT_ETYPE, "%s: lengths %lld and %lld differ", op,
                                    (long long)x, (long long)y);
    return WEFT_OK;
}

/* Row-major with a unit inner stride: BLAS takes the row stride as lda. */
static weft_status_t layout(weft_kernel_ctx_t *ctx, const char *op, const weft_tensor_t *t,
                            int *ld)
{
    int64_t s0 = weft_tensor_stride(t, 0), d1 = weft_tensor_dim(t, 1);
    if (weft_tensor_stride(t, 1) != 1 || s0 < (d1 > 1 ? d1 : 1))
        return weft_kernel_error(ctx, WEFT_EINVAL, "%s: a tile must be row-major with unit "
                                 "column stride", op);
    *ld = (int)s0;
    return WEFT_OK;
}

static size_t destroys_input0(const weft_op_t *op, weft_op_alias_t *out, size_t cap)
{
    (void)op;
    if (cap < 1) return 0;
    out[0] = (weft_op_alias_t){0, 0};
    return 1;
}

static size_t destroys_input1(const weft_op_t *op, weft_op_alias_t *out, size_t cap)
{
    (void)op;
    if (cap < 1) return 0;
    out[0] = (weft_op_alias_t){0, 1};
    return 1;
}

/* The result of a destroying op is its input itself. */
static void output_is(weft_kernel_ctx_t *ctx, weft_tensor_t **cell, weft_tensor_t *t)
{
    weft_kernel_set_output(ctx, cell, weft_tensor_retain(t));
}

/* ---- TilePotrf(A): A <- L, lower (the upper triangle is left as it was) ------------ */
/* ---- TilePotrfInv(A): the same, and a new tile holding L^-1 (lower) ---------------- */

/* The panel below a diagonal tile needs A_ik L^-T. OpenBLAS's one-thread
 * dtrsm runs at a third of dtrmm's rate on these tiles (0.80-0.86 ms against
 * dtrmm's 0.24 ms for 256 x 256 here), so the step factors the diagonal tile and
 * inverts it in one node (tile_cholesky_kernel.h, which also makes both
 * faster than dpotrf + dtrtri) and every panel tile is multiplied by the
 * inverse (dtrmm), as tile libraries do. The last diagonal tile has no panel:
 * TilePotrf factors it alone. */

/* One float64 square matrix in; n_types outputs of its type. */
static weft_status_t factor_node(weft_graph_t *g, const char *name, size_t n_in,
                                 weft_var_t *const *in, size_t n_types, size_t *n_out,
                                 const weft_type_t **out_types)
{
    if (n_in != 1) return weft_graph_set_error(g, WEFT_EINVAL, "%s takes 1 input", name);
    weft_status_t st = check_matrix(g, name, in[0], 0);
    if (st == WEFT_OK) st = check_len(g, name, in[0], 0, in[0], 1);
    if (st != WEFT_OK) return st;
    *n_out = n_types;
    for (size_t k = 0; k < n_types; k++) out_types[k] = weft_var_type(in[0]);
    return WEFT_OK;
}

static weft_status_t potrf_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                     weft_var_t *const *in, size_t *n_out,
                                     const weft_type_t **out_types)
{
    (void)op;
    return factor_node(g, "TilePotrf", n_in, in, 1, n_out, out_types);
}

static weft_status_t potrf_inv_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                         weft_var_t *const *in, size_t *n_out,
                                         const weft_type_t **out_types)
{
    (void)op;
    return factor_node(g, "TilePotrfInv", n_in, in, 2, n_out, out_types);
}

/* Factors in[0] in place; the inverse goes into *w (a new output tile when
 * `inverse`, else scratch given back here). */
static weft_status_t factor_tile(weft_kernel_ctx_t *ctx, const char *name, weft_tensor_t *a,
                                 weft_tensor_t **w, bool inverse)
{
    int ld = 1, n = (int)weft_tensor_dim(a, 0);
    int64_t shape[2] = {n, n};
    weft_status_t st = layout(ctx, name, a, &ld);
    if (st == WEFT_OK && weft_tensor_dim(a, 1) != n)
        st = weft_kernel_error(ctx, WEFT_ESHAPE, "%s: the tile is not square", name);
    if (st == WEFT_OK)
        st = inverse ? weft_kernel_alloc_output(ctx, w, WEFT_FLOAT64, 2, shape)
                     : weft_kernel_scratch(ctx, WEFT_FLOAT64, 2, shape, w);
    if (st != WEFT_OK) return st;
    /* Row-major lower = column-major upper: no transposition copy. */
    int info = chol_tile_factor(weft_tensor_data(a), ld, weft_tensor_data(*w), n, n, inverse);
    if (!inverse) weft_kernel_scratch_done(ctx, *w);
    if (info < 0) /* the layout was checked above: an internal error */
        return weft_kernel_error(ctx, WEFT_EINVAL, "%s: the kernel refused the tile", name);
    if (info > 0)
        return weft_kernel_error(ctx, WEFT_ERANGE, "%s: the leading minor of order %d is not "
                                 "positive definite", name, info);
    return WEFT_OK;
}

static weft_status_t potrf_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                   weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    (void)node;
    weft_tensor_t *scratch = NULL;
    weft_status_t st = factor_tile(ctx, "TilePotrf", in[0], &scratch, false);
    if (st == WEFT_OK) output_is(ctx, &outputs[0], in[0]);
    return st;
}

static weft_status_t potrf_inv_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                       weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    (void)node;
    weft_status_t st = factor_tile(ctx, "TilePotrfInv", in[0], &outputs[1], true);
    if (st == WEFT_OK) output_is(ctx, &outputs[0], in[0]);
    return st;
}

/* ---- costs for critical-path-first schedules (weft/op.h cost_ns) ------------------- */

/* Multiply-adds at weft's estimate per multiply-add (weft/node_cost.h),
 * from the tile's static shape: n^3/6 for the factor (twice with the inverse),
 * m n^2 / 2 for the triangular product, n^2 k / 2 for the rank-k update. */
static double tile_dim(const weft_apply_t *node, size_t input, int axis)
{
    const weft_type_t *t = weft_var_type(weft_apply_input(node, input));
    int64_t d = weft_type_dim(t, axis);
    return d < 0 ? WEFT_COST_UNKNOWN_LEN : (double)d;
}

static double potrf_cost_ns(const weft_apply_t *node)
{
    double n = tile_dim(node, 0, 0);
    return WEFT_COST_MULADD_NS * n * n * n / 6;
}

static double trmm_cost_ns(const weft_apply_t *node)
{
    double m = tile_dim(node, 1, 0), n = tile_dim(node, 1, 1);
    return WEFT_COST_MULADD_NS * m * n * n / 2;
}

static double syrk_cost_ns(const weft_apply_t *node)
{
    double n = tile_dim(node, 0, 0), k = tile_dim(node, 1, 1);
    return WEFT_COST_MULADD_NS * n * n * k / 2;
}

static double potrf_inv_cost_ns(const weft_apply_t *node)
{
    double n = tile_dim(node, 0, 0);
    return WEFT_COST_MULADD_NS * n * n * n / 3; /* the factor and the inverse */
}

const weft_op_class_t chol_potrf_class = {
    .size = sizeof(weft_op_class_t),
    .name = "TilePotrf",
    .make_node = potrf_make_node,
    .perform = potrf_perform,
    .destroy_map = destroys_input0,
    .cost_ns = potrf_cost_ns,
};

const weft_op_class_t chol_potrf_inv_class = {
    .size = sizeof(weft_op_class_t),
    .name = "TilePotrfInv",
    .make_node = potrf_inv_make_node,
    .perform = potrf_inv_perform,
    .destroy_map = destroys_input0, /* output 0; output 1 is a new tile */
    .cost_ns = potrf_inv_cost_ns,
};

/* ---- TileTrmm(Linv, A): A <- A Linv^T, i.e. A L^-T (the panel solve) --------------- */

static weft_status_t trmm_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                    weft_var_t *const *in, size_t *n_out,
                                    const weft_type_t **out_types)
{
    (void)op;
    if (n_in != 2) return weft_graph_set_error(g, WEFT_EINVAL, "TileTrmm takes 2 inputs");
    weft_status_t st = check_matrix(g, "TileTrmm", in[0], 0);
    if (st == WEFT_OK) st = check_matrix(g, "TileTrmm", in[1], 1);
    if (st == WEFT_OK) st = check_len(g, "TileTrmm", in[0], 0, in[0], 1);
    if (st == WEFT_OK) st = check_len(g, "TileTrmm", in[0], 0, in[1], 1);
    *n_out = 1;
    out_types[0] = weft_var_type(in[1]);
    return st;
}

static weft_status_t trmm_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                  weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    (void)node;
    int ldl = 1, lda = 1, m = (int)weft_tensor_dim(in[1], 0), n = (int)weft_tensor_dim(in[1], 1);
    weft_status_t st = layout(ctx, "TileTrmm", in[0], &ldl);
    if (st == WEFT_OK) st = layout(ctx, "TileTrmm", in[1], &lda);
    if (st == WEFT_OK && weft_tensor_dim(in[0], 0) != n)
        st = weft_kernel_error(ctx, WEFT_ESHAPE, "TileTrmm: Linv is %lld x %lld, A has %d columns",
                               (long long)weft_tensor_dim(in[0], 0),
                               (long long)weft_tensor_dim(in[0], 1), n);
    if (st != WEFT_OK) return st;
    cblas_dtrmm(CblasRowMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, m, n, 1.0,
                weft_tensor_data(in[0]), ldl, weft_tensor_data(in[1]), lda);
    output_is(ctx, &outputs[0], in[1]);
    return WEFT_OK;
}

const weft_op_class_t chol_trmm_class = {
    .size = sizeof(weft_op_class_t),
    .name = "TileTrmm",
    .make_node = trmm_make_node,
    .perform = trmm_perform,
    .destroy_map = destroys_input1,
    .cost_ns = trmm_cost_ns,
};

/* ---- TileSyrk(C, A): C <- C - A A^T, lower triangle -------------------------------- */

static weft_status_t syrk_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                    weft_var_t *const *in, size_t *n_out,
                                    const weft_type_t **out_types)
{
    (void)op;
    if (n_in != 2) return weft_graph_set_error(g, WEFT_EINVAL, "TileSyrk takes 2 inputs");
    weft_status_t st = check_matrix(g, "TileSyrk", in[0], 0);
    if (st == WEFT_OK) st = check_matrix(g, "TileSyrk", in[1], 1);
    if (st == WEFT_OK) st = check_len(g, "TileSyrk", in[0], 0, in[0], 1);
    if (st == WEFT_OK) st = check_len(g, "TileSyrk", in[0], 0, in[1], 0);
    *n_out = 1;
    out_types[0] = weft_var_type(in[0]);
    return st;
}

static weft_status_t syrk_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                  weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    (void)node;
    int ldc = 1, lda = 1, n = (int)weft_tensor_dim(in[0], 0), k = (int)weft_tensor_dim(in[1], 1);
    weft_status_t st = layout(ctx, "TileSyrk", in[0], &ldc);
    if (st == WEFT_OK) st = layout(ctx, "TileSyrk", in[1], &lda);
    if (st == WEFT_OK && (weft_tensor_dim(in[0], 1) != n || weft_tensor_dim(in[1], 0) != n))
        st = weft_kernel_error(ctx, WEFT_ESHAPE, "TileSyrk: C is not square or A's rows differ");
    if (st != WEFT_OK) return st;
    cblas_dsyrk(CblasRowMajor, CblasLower, CblasNoTrans, n, k, -1.0, weft_tensor_data(in[1]),
                lda, 1.0, weft_tensor_data(in[0]), ldc);
    output_is(ctx, &outputs[0], in[0]);
    return WEFT_OK;
}

const weft_op_class_t chol_syrk_class = {
    .size = sizeof(weft_op_class_t),
    .name = "TileSyrk",
    .make_node = syrk_make_node,
    .perform = syrk_perform,
    .destroy_map = destroys_input0,
    .cost_ns = syrk_cost_ns,
};
