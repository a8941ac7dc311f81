/* Internal interface of the LAPACK-backed solver ops (linalg_solve.c): the
 * LAPACKE binding for LU, inverse and Cholesky solves (lapack_openblas.c),
 * and the batch helpers (linalg_batch.c) that move one matrix of a stacked
 * operand (..., rows, cols) with any strides into a contiguous buffer in
 * row- or column-major order and back.
 *
 * Row-major vs column-major: the LAPACKE calls use LAPACK_COL_MAJOR on
 * buffers this code fills, so LAPACKE never makes its own transposed copies;
 * a row-major n x n matrix A read column-major is A^T, which the callers use
 * (det(A^T) = det(A), inv(A^T) = inv(A)^T, an LU of A^T solves A x = b with
 * trans 'T'). */
#ifndef WEFT_OPS_LAPACK_INT_H
#define WEFT_OPS_LAPACK_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "linalg_int.h"

/* The op classes of linalg_solve.c (listed in builtin_classes.c). */
extern const weft_op_class_t weft__solve_class, weft__inv_class, weft__det_class,
    weft__slogdet_class, weft__cho_solve_class, weft__lstsq_class;
/* SolveTriangular (linalg_solve_tri.c). */
extern const weft_op_class_t weft__solve_tri_class;
/* The classes of linalg_decomp.c. */
extern const weft_op_class_t weft__svd_class, weft__eigh_class, weft__qr_class;

/* The float dtypes the LAPACK kernels take: a new one is one line here and a
 * branch in each wrapper of lapack_openblas.c. */
#define WEFT__LAPACK_TYPES(X) X(float, WEFT_FLOAT32) X(double, WEFT_FLOAT64)

/* ---- LAPACKE wrappers (column-major buffers, ld = rows; 32-bit pivots) ---- */

/* LU with partial pivoting in place. Returns info: 0, k > 0 when U[k-1,k-1]
 * is exactly zero (the factorization is complete), < 0 argument error. */
int weft__lapack_getrf(weft_dtype_t dt, int64_t n, void *a, int32_t *ipiv);
/* Solves op(A) X = B with getrf's factors; B is n x nrhs. trans: A^T. */
int weft__lapack_getrs(weft_dtype_t dt, bool trans, int64_t n, int64_t nrhs, const void *lu,
                       const int32_t *ipiv, void *b);
/* The inverse from getrf's factors, in place, with lwork elements of
 * workspace (at least weft__lapack_getri_lwork's answer, LAPACK's optimum
 * for n; the query reads no matrix). */
int64_t weft__lapack_getri_lwork(weft_dtype_t dt, int64_t n);
int weft__lapack_getri(weft_dtype_t dt, int64_t n, void *lu, const int32_t *ipiv, void *work,
                       int64_t lwork);
/* Solves A X = B with A = U^T U (upper) or L L^T (lower) from potrf. */
int weft__lapack_potrs(weft_dtype_t dt, bool lower, int64_t n, int64_t nrhs, const void *f,
                       void *b);

/* Solves a x = b for the row-major n x k x holding b (k > 1), with lu the
 * getrf factors of a^T (a's row-major memory read column-major): two
 * right-side triangular solves on x read column-major (x^T) and the row
 * interchanges, with no transposed copy of b or x. */
void weft__lapack_lu_solve_rows(weft_dtype_t dt, int64_t n, int64_t k, const void *lu,
                                const int32_t *ipiv, void *x);
/* The same for a = l l^T, u being l's row-major memory (l^T read column-major). */
void weft__lapack_cho_solve_rows(weft_dtype_t dt, int64_t n, int64_t k, const void *u, void *x);

/* Minimum-norm least squares (?gelsd) of the column-major m x n a and the
 * column-major ld x k b (ld = max(m, n)); x is b's first n rows. s gets
 * min(m, n) singular values. */
int weft__lapack_gelsd(weft_dtype_t dt, int64_t m, int64_t n, int64_t k, void *a, void *b,
                       int64_t ld, void *s, double rcond);
/* t's rows x cols matrix (a vector: cols 1) into the column-major buffer
 * dst with leading dimension ld; the column-major ld-strided src's first
 * rows x cols into the row-major contiguous dst. */
void weft__lapack_load_cm(const weft_tensor_t *t, int64_t rows, int64_t cols, int64_t ld,
                          void *dst);
void weft__lapack_store_cm(weft_dtype_t dt, const void *src, int64_t rows, int64_t cols,
                           int64_t ld, void *dst);

/* ---- batches ---------------------------------------------------------------- */

/* Number of matrices in t when its last `core` axes are the matrix (or
 * vector): the product of the leading lengths (1 for none). */
int64_t weft__batch_count(const weft_tensor_t *t, int core);
/* Element offset of batch entry `index` of t (its leading ndim - core axes). */
int64_t weft__batch_offset(const weft_tensor_t *t, int core, int64_t index);
/* Copies the rows x cols matrix at element offset off of t (strides of t's
 * last two axes; cols == 1 with a 1-axis core: a vector) into the contiguous
 * buffer dst, row-major or column-major (colmajor). */
void weft__batch_load(const weft_tensor_t *t, int core, int64_t off, int64_t rows,
                      int64_t cols, bool colmajor, void *dst);
/* make_node check of a stack of square matrices (..., n, n), rank >= 2,
 * float32/float64: WEFT_ETYPE naming the op and the input otherwise. */
weft_status_t weft__batch_check_square(weft_graph_t *g, const char *opname, weft_var_t *a,
                                       int index);
/* The dims of a stack's static type without its last `drop` axes. */
int weft__batch_type_dims(const weft_type_t *t, int drop, int64_t *shape);

/* ---- broadcast batches of two operands (Solve, CholeskySolve, SolveTriangular) ---- */

/* The output type of a solver x = op(a, b), a (..., n, n), b a stack whose
 * last core_b axes (1: a vector (..., n); 2: (..., n, k)) are the right
 * side: the batch axes of a and b broadcast as NumPy's (an unknown length
 * against a known one other than 1 takes the known one; the kernel checks
 * it), then (n,) or (n, k). WEFT_ETYPE naming the op when two static batch
 * lengths do not broadcast or b's length differs from a's order. */
weft_status_t weft__bcast_solve_type(weft_graph_t *g, const char *opname, weft_var_t *const *in,
                                     int core_b, const weft_type_t **out);

/* The run-time broadcast of a's (core 2) and b's (core core_b) batch axes:
 * the output's batch shape and each input's element stride per output batch
 * axis (0 where it is broadcast). */
typedef struct weft__bcast {
    int nbo;
    int64_t shape[WEFT_MAX_NDIM], sa[WEFT_MAX_NDIM], sb[WEFT_MAX_NDIM], count;
} weft__bcast_t;
/* false when two batch lengths do not broadcast. */
bool weft__bcast_init(const weft_tensor_t *a, const weft_tensor_t *b, int core_b,
                      weft__bcast_t *t);
/* Element offsets in a and b of output batch entry i. */
void weft__bcast_offsets(const weft__bcast_t *t, int64_t i, int64_t *oa, int64_t *ob);
/* The output shape: the batch shape, then n, then k when core_b is 2. */
int weft__bcast_out_shape(const weft__bcast_t *t, int core_b, int64_t n, int64_t k,
                          int64_t *shape);

#endif /* WEFT_OPS_LAPACK_INT_H */
