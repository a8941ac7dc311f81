/* Internal interface shared by the linear algebra op files (linalg_*.c):
 * resolving a strided tensor into a BLAS operand (pointer, leading dimension,
 * transpose flag) without copying when the strides allow, type checks, and
 * the graph helpers the grad hooks use. */
#ifndef WEFT_OPS_LINALG_INT_H
#define WEFT_OPS_LINALG_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "blas_int.h"
#include "weft/graph.h"
#include "weft/kernel.h"
#include "weft/op.h"
#include "weft/tensor.h"

/* The op classes (linalg_dot.c, linalg_gemm.c, linalg_lapack.c, linalg_tri.c),
 * listed among the built-in classes (builtin_classes.c). */
extern const weft_op_class_t weft__dot_class, weft__gemm_class, weft__gemv_class,
    weft__cholesky_class, weft__trsm_class, weft__syrk_class, weft__trimask_class;

/* A logical rows x cols matrix as BLAS sees it: row-major with leading
 * dimension ld (trans false), or the transpose of a row-major cols x rows
 * matrix (trans true: the tensor was a transposed view). copy is a contiguous
 * copy this operand owns (NULL when the tensor's memory is used directly). */
typedef struct weft__bmat {
    void *data;
    int64_t rows, cols, ld;
    bool trans;
    weft_tensor_t *copy;
} weft__bmat_t;

/* Resolves the matrix at data with lengths (rows, cols) and element strides
 * (s0, s1) into a BLAS layout; false when neither row- nor column-major
 * (non-unit inner strides, negative or zero strides). */
bool weft__bmat_layout(void *data, int64_t rows, int64_t cols, int64_t s0, int64_t s1,
                       weft__bmat_t *m);
/* Resolves the last two axes of t (batch entry 0 for a 3-D t), copying t to
 * contiguous kernel scratch (weft_kernel_scratch) when the layout needs it.
 * Errors (recorded on ctx): WEFT_ENOMEM. */
weft_status_t weft__bmat_from(weft_kernel_ctx_t *ctx, const weft_tensor_t *t, weft__bmat_t *m);
/* Gives the copy back (weft_kernel_scratch_done). */
void weft__bmat_fini(weft_kernel_ctx_t *ctx, weft__bmat_t *m);

/* A vector operand: pointer and increment; a copy (kernel scratch) when the
 * stride is not positive (BLAS reads negative increments from the other
 * end). */
typedef struct weft__bvec {
    void *data;
    int64_t n, inc;
    weft_tensor_t *copy;
} weft__bvec_t;
weft_status_t weft__bvec_from(weft_kernel_ctx_t *ctx, const weft_tensor_t *t, weft__bvec_t *v);
void weft__bvec_fini(weft_kernel_ctx_t *ctx, weft__bvec_t *v);

/* C <- alpha * A@B + beta * C on resolved operands; C may be a transposed
 * layout (then the transposed product is computed). */
void weft__bmat_gemm(weft_dtype_t dt, weft__blas_scalar_t alpha, const weft__bmat_t *a,
                     const weft__bmat_t *b, weft__blas_scalar_t beta, const weft__bmat_t *c);
/* weft__bmat_gemm in fixed blocks when the product is large: C is cut into
 * panels of rows (or of columns, when it is wider than tall) whose length
 * depends on the shape alone, one one-thread BLAS call each, spread over the
 * workers running the node (weft_kernel_parallel_for) or run in turn on one,
 * so the result is the same at any worker count. One call for small
 * products or when LEVEL3 nodes are set to several BLAS threads. Returns a
 * range's failure (WEFT_ENOMEM when the pool cannot queue ranges); nothing
 * is recorded on ctx. */
weft_status_t weft__bmat_gemm_par(weft_kernel_ctx_t *ctx, weft_dtype_t dt,
                                  weft__blas_scalar_t alpha, const weft__bmat_t *a,
                                  const weft__bmat_t *b, weft__blas_scalar_t beta,
                                  const weft__bmat_t *c);
/* The rows (columns, when C is wider than tall) per block of weft__bmat_gemm_par
 * for C = A@B of m x n with inner length k, from the shape alone; 0: one call
 * (fewer than 2^22 multiply-adds, or one block would cover C). */
int64_t weft__gemm_split_block(int64_t m, int64_t n, int64_t k);
/* y <- alpha * A@x + beta * y. */
void weft__bmat_gemv(weft_dtype_t dt, weft__blas_scalar_t alpha, const weft__bmat_t *a,
                     const weft__bvec_t *x, weft__blas_scalar_t beta, const weft__bvec_t *y);

/* Value of a 0-d (or 1-element) float tensor. */
double weft__scalar_value(const weft_tensor_t *t);
/* Value of a 0-d (or 1-element) tensor of any dtype, as a complex number. */
weft__blas_scalar_t weft__scalar_value_cx(const weft_tensor_t *t);

/* make_node checks: every input a float32/float64 tensor of one dtype, with
 * ranks[i] dims (-1: any). Sets *dt. WEFT_ETYPE naming the op and input. */
weft_status_t weft__linalg_check(weft_graph_t *g, const char *opname, size_t n_in,
                                 weft_var_t *const *inputs, size_t want_in, const int *ranks,
                                 weft_dtype_t *dt);
/* Whether v's dtype is complex64 / complex128. */
static inline bool weft__lg_is_complex(const weft_var_t *v)
{
    return weft_dtype_kind(weft_type_dtype(weft_var_type(v))) == WEFT_KIND_COMPLEX;
}
/* As weft__linalg_check; complex_ok also accepts complex64 / complex128
 * (the ops with a complex kernel: Dot, Gemm, Gemv, Cholesky, Trsm, Syrk). */
weft_status_t weft__linalg_check_dtypes(weft_graph_t *g, const char *opname, size_t n_in,
                                        weft_var_t *const *inputs, size_t want_in,
                                        const int *ranks, bool complex_ok, weft_dtype_t *dt);
/* Two static lengths (input ia, dim da) and (ib, db) must agree when both are
 * known. WEFT_ETYPE naming them. */
weft_status_t weft__linalg_match(weft_graph_t *g, const char *opname, weft_var_t *const *in,
                                 int ia, int da, int ib, int db);
/* Creates op (class cls, props) and applies it at file:line. */
weft_status_t weft__linalg_call(weft_graph_t *g, const weft_op_class_t *cls, const void *props,
                                size_t n_in, weft_var_t *const *in, const char *file, int line,
                                weft_var_t **out);
/* Checks the constructor's arguments (non-NULL, same context); WEFT_EINVAL /
 * WEFT_EFOREIGN with a message naming the op and call site. */
weft_status_t weft__linalg_args(weft_graph_t *g, const char *opname, size_t n,
                                weft_var_t *const *in, const char *file, int line,
                                weft_var_t **out);
/* Run-time shape check failure: WEFT_ESHAPE naming the op. */
weft_status_t weft__linalg_shape_error(weft_kernel_ctx_t *ctx, const char *opname,
                                       const char *what);
/* Fails (WEFT_EOVERFLOW) when a length does not fit BLAS's int. */
weft_status_t weft__linalg_fit(weft_kernel_ctx_t *ctx, const char *opname, int n,
                               const int64_t *dims);
/* WEFT_ESTATE on ctx when OpenBLAS is the serial build; else sets its threads. */
weft_status_t weft__linalg_enter(weft_kernel_ctx_t *ctx, const char *opname,
                                 weft_blas_kind_t kind);
/* weft__linalg_enter for a LAPACK node whose matrices have order `order`:
 * the LAPACK kind's setting, or with WEFT_BLAS_THREADS_FREE, 1 + the pool's
 * idle workers for order >= WEFT__BLAS_FREE_MIN_ORDER (1 below it). */
#define WEFT__BLAS_FREE_MIN_ORDER 256

/* The tile Cholesky of the Cholesky kernel (linalg_chol_tile.c): used for
 * float32/float64 matrices of order >= WEFT__CHOL_TILE_MIN_ORDER while the
 * LAPACK kind runs one OpenBLAS thread (weft__chol_tiled_applies). Factors
 * the row-major n x n a (lower triangle; the upper one is not touched) in
 * place, its tiles spread over the node's workers with bits that do not
 * depend on their number; *info as ?potrf's. Errors: the parallel loop's
 * (WEFT_ENOMEM), nothing recorded on ctx. */
#define WEFT__CHOL_TILE_MIN_ORDER 1024
bool weft__chol_tiled_applies(weft_dtype_t dt, int64_t n);
weft_status_t weft__chol_tiled(weft_kernel_ctx_t *ctx, weft_dtype_t dt, int64_t n, void *a,
                               int *info);
weft_status_t weft__lapack_enter(weft_kernel_ctx_t *ctx, const char *opname, int64_t order);

/* Grad-hook helpers: transpose of the last two axes, outer product of two
 * vectors, x scaled by the 0-d s, -x, sum of every element of a*b. */
weft_status_t weft__lg_t(weft_graph_t *g, weft_var_t *x, weft_var_t **out);
weft_status_t weft__lg_outer(weft_graph_t *g, weft_var_t *a, weft_var_t *b, weft_var_t **out);
weft_status_t weft__lg_scale(weft_graph_t *g, weft_var_t *s, weft_var_t *x, weft_var_t **out);
weft_status_t weft__lg_neg(weft_graph_t *g, weft_var_t *x, weft_var_t **out);
weft_status_t weft__lg_sum_prod(weft_graph_t *g, weft_var_t *a, weft_var_t *b, weft_var_t **out);
/* a @ b over the last two axes for stacks of any rank: Dot up to one batch
 * axis (ranks <= 2, or both 3 with equal batch lengths), else weft_matmul
 * (batch axes broadcast; it needs static lengths: WEFT_ENOTIMPL naming
 * opname otherwise). Used by the gradients of the LAPACK ops. */
weft_status_t weft__lg_mm(weft_graph_t *g, const char *opname, weft_var_t *a, weft_var_t *b,
                          weft_var_t **out);
/* The gradient grad of a broadcast operand summed back to target's shape:
 * over grad's leading axes that target lacks, and over the axes where
 * target's static length is 1 and grad's is not (PyTensor's rule: only a
 * static 1 broadcasts in a gradient). */
weft_status_t weft__lg_sum_to(weft_graph_t *g, weft_var_t *grad, weft_var_t *target,
                              weft_var_t **out);
/* -l r^T over the last two axes (weft__lg_mm, naming opname); with vec, l
 * and r are stacks of vectors: -l[..., :, None] * r[..., None, :]. */
weft_status_t weft__lg_neg_outer(weft_graph_t *g, const char *opname, weft_var_t *l,
                                 weft_var_t *r, bool vec, weft_var_t **out);
/* x with a new length-1 axis at position nd (0 <= pos <= ndim(x)). */
weft_status_t weft__lg_new_axis(weft_graph_t *g, weft_var_t *x, int pos, weft_var_t **out);

/* TriMask{lower, diag_scale}(x): x's lower (or upper) triangle with the
 * diagonal multiplied by diag_scale, zeros elsewhere (linalg_tri.c). */
weft_status_t weft__trimask(weft_graph_t *g, weft_var_t *x, bool lower, double diag_scale,
                            weft_var_t **out);

#endif /* WEFT_OPS_LINALG_INT_H */
