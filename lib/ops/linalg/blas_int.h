/* Internal interface of the OpenBLAS / LAPACKE binding (blas_openblas.c).
 *
 * Raw-pointer kernels in row-major (C) order for float32 and float64: the op
 * files (linalg_*.c) resolve tensors into these arguments, so that only
 * blas_openblas.c includes cblas.h / lapacke.h. Dimensions are int64_t here;
 * callers check them with weft__blas_dims_fit first. */
#ifndef WEFT_OPS_BLAS_INT_H
#define WEFT_OPS_BLAS_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "weft/linalg.h"
#include "weft/status.h"
#include "weft/type.h"

/* alpha and beta of gemm / gemv: complex for complex dtypes, the real part
 * alone used for float32 / float64 (a double converts implicitly). */
typedef double _Complex weft__blas_scalar_t;

/* True when every one of the n dims fits a BLAS integer (int). */
bool weft__blas_dims_fit(int n, const int64_t *dims);

/* Prepares OpenBLAS for one node of the given kind: refuses the serial build
 * (WEFT_ESTATE) and sets the global thread count to the kind's setting when it
 * differs. Called at the start of every BLAS-backed perform. */
weft_status_t weft__blas_enter(weft_blas_kind_t kind);
/* The same with an explicit count (1..256). */
weft_status_t weft__blas_enter_threads(int n_threads);

/* The kernels take float32, float64 and (gemm, gemv: alpha and beta
 * complex; trsm, syrk: real; potrf) complex64 / complex128 data (cgemm/zgemm, ...;
 * transposes are plain, never conjugate; potrf factors a Hermitian matrix,
 * A = L L^H).
 * C <- alpha*op(A)@op(B) + beta*C; op(A) is m x k, op(B) k x n, C m x n.
 * Any length may be 0: then OpenBLAS is not called, A and B are not read
 * (their pointers may be NULL) and C becomes beta*C (zeros for beta 0). */
void weft__blas_gemm(weft_dtype_t dt, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                     weft__blas_scalar_t alpha, const void *a, int64_t lda, const void *b,
                     int64_t ldb, weft__blas_scalar_t beta, void *c, int64_t ldc);
/* y <- alpha*op(A)@x + beta*y; A is m x n as stored. Empty lengths as for
 * weft__blas_gemm (A and x unread, y <- beta*y). */
void weft__blas_gemv(weft_dtype_t dt, bool ta, int64_t m, int64_t n, weft__blas_scalar_t alpha,
                     const void *a, int64_t lda, const void *x, int64_t incx,
                     weft__blas_scalar_t beta, void *y, int64_t incy);
/* sum x[i*incx]*y[i*incy], accumulated by BLAS in the dtype (returned as double);
 * 0 for n == 0 without reading x or y. */
double weft__blas_dot(weft_dtype_t dt, int64_t n, const void *x, int64_t incx, const void *y,
                      int64_t incy);
/* *out <- sum x[i*incx]*y[i*incy] for complex64 / complex128 (cdotu/zdotu:
 * no conjugation, NumPy's dot); 0 for n == 0 without reading x or y. */
void weft__blas_dotu(weft_dtype_t dt, int64_t n, const void *x, int64_t incx, const void *y,
                     int64_t incy, void *out);
/* C <- alpha*A@A^T + beta*C (trans: A^T@A), one triangle of C (lower or upper). */
void weft__blas_syrk(weft_dtype_t dt, bool lower, bool trans, int64_t n, int64_t k,
                     double alpha, const void *a, int64_t lda, double beta, void *c,
                     int64_t ldc);
/* B <- alpha*op(A)^-1 B (right: B op(A)^-1); B is m x n; A triangular. */
void weft__blas_trsm(weft_dtype_t dt, bool right, bool lower, bool trans, bool unit,
                     int64_t m, int64_t n, double alpha, const void *a, int64_t lda, void *b,
                     int64_t ldb);
/* In-place Cholesky of the row-major n x n matrix at a (one triangle).
 * Returns LAPACK's info: 0 on success, k > 0 when the leading minor of order
 * k is not positive definite, < 0 for an argument error (or a NaN). */
int weft__lapack_potrf(weft_dtype_t dt, bool lower, int64_t n, void *a, int64_t lda);

#endif /* WEFT_OPS_BLAS_INT_H */
