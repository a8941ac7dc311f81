/* The OpenBLAS / LAPACKE binding: the only file that includes cblas.h and
 * lapacke.h. Owns the per-node-kind BLAS thread settings (weft/linalg.h) and
 * raw row-major kernels for float32/float64 (blas_int.h) that the linalg ops
 * call after resolving tensor strides into leading dimensions and flags. */
#include <complex.h>

#include <cblas.h>
#include <lapacke.h>
#include <limits.h>
#include <string.h>

#include "blas_int.h"

#define BLAS_MAX_THREADS 256

/* Written only by weft_blas_set_threads, which the header restricts to times
 * when no node runs; read by kernels during runs (no concurrent writer). */
static int blas_kind_threads[WEFT_BLAS_KIND_COUNT] = {1, 1, 1, 1};

bool weft__blas_dims_fit(int n, const int64_t *dims)
{
    for (int i = 0; i < n; i++) {
        if (dims[i] < 0 || dims[i] > INT_MAX) {
            return false;
        }
    }
    return true;
}

weft_status_t weft_blas_check(void)
{
    /* 0: the serial build, unsafe from several threads (docs/performance-notes.md §3.2). */
    return openblas_get_parallel() == 0 ? WEFT_ESTATE : WEFT_OK;
}

weft_status_t weft_blas_set_threads(weft_blas_kind_t kind, int n_threads, int *previous)
{
    bool free_ok = kind == WEFT_BLAS_KIND_LAPACK && n_threads == WEFT_BLAS_THREADS_FREE;
    if ((unsigned)kind >= WEFT_BLAS_KIND_COUNT ||
        (!free_ok && (n_threads < 1 || n_threads > BLAS_MAX_THREADS))) {
        return WEFT_EINVAL;
    }
    if (previous) {
        *previous = blas_kind_threads[kind];
    }
    blas_kind_threads[kind] = n_threads;
    return WEFT_OK;
}

int weft_blas_get_threads(weft_blas_kind_t kind)
{
    return (unsigned)kind < WEFT_BLAS_KIND_COUNT ? blas_kind_threads[kind] : 1;
}

weft_status_t weft_blas_scope_enter(weft_blas_scope_t *scope, int n_threads)
{
    if (!scope || n_threads < 1 || n_threads > BLAS_MAX_THREADS) {
        return WEFT_EINVAL;
    }
    scope->active = false;
    if (weft_blas_check() != WEFT_OK) {
        return WEFT_ESTATE;
    }
    scope->saved_threads = openblas_get_num_threads();
    scope->active = true;
    openblas_set_num_threads(n_threads);
    return WEFT_OK;
}

void weft_blas_scope_exit(weft_blas_scope_t *scope)
{
    if (!scope || !scope->active) {
        return;
    }
    openblas_set_num_threads(scope->saved_threads);
    scope->active = false;
}

weft_status_t weft__blas_enter(weft_blas_kind_t kind)
{
    int want = weft_blas_get_threads(kind);
    return weft__blas_enter_threads(want < 1 ? 1 : want); /* FREE without an order: 1 */
}

weft_status_t weft__blas_enter_threads(int want)
{
    if (weft_blas_check() != WEFT_OK) {
        return WEFT_ESTATE;
    }
    /* Only change the global when it differs: with every kind at its default
     * of 1 this sets it once per process and never again. */
    if (openblas_get_num_threads() != want) {
        openblas_set_num_threads(want);
    }
    return WEFT_OK;
}

static enum CBLAS_TRANSPOSE blas_tr(bool t)
{
    return t ? CblasTrans : CblasNoTrans;
}

/* blas_scale for complex C: each element times beta (beta 0: zeros). */
static void blas_cscale(weft_dtype_t dt, int64_t m, int64_t n, weft__blas_scalar_t beta, void *c,
                        int64_t ldc)
{
    for (int64_t i = 0; i < m; i++) {
        for (int64_t j = 0; j < n; j++) {
            if (dt == WEFT_COMPLEX128) {
                double _Complex *p = (double _Complex *)c + i * ldc + j;
                *p = beta == 0.0 ? 0.0 : beta * *p;
            } else {
                float _Complex *p = (float _Complex *)c + i * ldc + j;
                *p = beta == 0.0 ? 0.0f : (float _Complex)beta * *p;
            }
        }
    }
}

/* C <- beta*C for the m x n row-major matrix at c (beta 0: zeros, C not read,
 * as BLAS): a product over an empty inner length. */
static void blas_scale(weft_dtype_t dt, int64_t m, int64_t n, weft__blas_scalar_t beta, void *c,
                       int64_t ldc)
{
    if (beta == 1.0) {
        return;
    }
    if (dt == WEFT_COMPLEX64 || dt == WEFT_COMPLEX128) {
        blas_cscale(dt, m, n, beta, c, ldc);
        return;
    }
    for (int64_t i = 0; i < m; i++) {
        for (int64_t j = 0; j < n; j++) {
            if (dt == WEFT_FLOAT64) {
                double *p = (double *)c + i * ldc + j;
                *p = beta == 0.0 ? 0.0 : creal(beta) * *p;
            } else {
                float *p = (float *)c + i * ldc + j;
                *p = beta == 0.0 ? 0.0f : (float)creal(beta) * *p;
            }
        }
    }
}

/* complex64 / complex128 (cgemm / zgemm, cgemv / zgemv): alpha and beta
 * passed as (re, im) pairs. */
static void blas_cgemm(weft_dtype_t dt, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                       weft__blas_scalar_t alpha, const void *a, int64_t lda, const void *b,
                       int64_t ldb, weft__blas_scalar_t beta, void *c, int64_t ldc)
{
    if (dt == WEFT_COMPLEX128) {
        double al[2] = {creal(alpha), cimag(alpha)}, be[2] = {creal(beta), cimag(beta)};
        cblas_zgemm(CblasRowMajor, blas_tr(ta), blas_tr(tb), (int)m, (int)n, (int)k, al, a,
                    (int)lda, b, (int)ldb, be, c, (int)ldc);
    } else {
        float al[2] = {(float)creal(alpha), (float)cimag(alpha)};
        float be[2] = {(float)creal(beta), (float)cimag(beta)};
        cblas_cgemm(CblasRowMajor, blas_tr(ta), blas_tr(tb), (int)m, (int)n, (int)k, al, a,
                    (int)lda, b, (int)ldb, be, c, (int)ldc);
    }
}

static void blas_cgemv(weft_dtype_t dt, bool ta, int64_t m, int64_t n,
                       weft__blas_scalar_t alpha, const void *a, int64_t lda, const void *x,
                       int64_t incx, weft__blas_scalar_t beta, void *y, int64_t incy)
{
    if (dt == WEFT_COMPLEX128) {
        double al[2] = {creal(alpha), cimag(alpha)}, be[2] = {creal(beta), cimag(beta)};
        cblas_zgemv(CblasRowMajor, blas_tr(ta), (int)m, (int)n, al, a, (int)lda, x, (int)incx,
                    be, y, (int)incy);
    } else {
        float al[2] = {(float)creal(alpha), (float)cimag(alpha)};
        float be[2] = {(float)creal(beta), (float)cimag(beta)};
        cblas_cgemv(CblasRowMajor, blas_tr(ta), (int)m, (int)n, al, a, (int)lda, x, (int)incx,
                    be, y, (int)incy);
    }
}

void weft__blas_dotu(weft_dtype_t dt, int64_t n, const void *x, int64_t incx, const void *y,
                     int64_t incy, void *out)
{
    size_t es = weft_dtype_size(dt);
    if (n == 0) { /* the empty sum */
        memset(out, 0, es);
    } else if (dt == WEFT_COMPLEX128) {
        cblas_zdotu_sub((int)n, x, (int)incx, y, (int)incy, out);
    } else {
        cblas_cdotu_sub((int)n, x, (int)incx, y, (int)incy, out);
    }
}

/* a == 0: BLAS skips the product, but the op's value is NumPy's
 * b*z + 0*(x@y), where a NaN or Inf in the product gives NaN (0*inf). The
 * product is formed block by block in a stack buffer (no allocation, so no
 * failure path; a == 0 is rare enough that the extra product is no concern)
 * and only 0*product is added to beta*C. */
#define ZERO_ALPHA_BUF_BYTES 32768

/* dst += 0*p for one element, by NumPy's complex product formula (C's own
 * complex multiply recovers infinities that NumPy leaves NaN). */
static void blas_add_zero_times(weft_dtype_t dt, void *dst, const void *p)
{
    if (dt == WEFT_FLOAT64) {
        *(double *)dst += 0.0 * *(const double *)p;
    } else if (dt == WEFT_FLOAT32) {
        *(float *)dst += 0.0f * *(const float *)p;
    } else if (dt == WEFT_COMPLEX128) {
        const double *q = p;
        double *d = dst;
        d[0] += 0.0 * q[0] - 0.0 * q[1];
        d[1] += 0.0 * q[1] + 0.0 * q[0];
    } else {
        const float *q = p;
        float *d = dst;
        d[0] += 0.0f * q[0] - 0.0f * q[1];
        d[1] += 0.0f * q[1] + 0.0f * q[0];
    }
}

static void blas_gemm_zero_alpha(weft_dtype_t dt, bool ta, bool tb, int64_t m, int64_t n,
                                 int64_t k, const void *a, int64_t lda, const void *b,
                                 int64_t ldb, weft__blas_scalar_t beta, void *c, int64_t ldc)
{
    _Alignas(64) unsigned char buf[ZERO_ALPHA_BUF_BYTES];
    size_t es = weft_dtype_size(dt);
    int64_t cap = (int64_t)(sizeof buf / es), nb = n < cap ? n : cap, mb = cap / nb;
    blas_scale(dt, m, n, beta, c, ldc);
    for (int64_t i0 = 0; i0 < m; i0 += mb) {
        int64_t rows = m - i0 < mb ? m - i0 : mb;
        /* rows i0.. of op(A): rows of A, or columns of the stored A^T */
        const char *ab = (const char *)a + (size_t)(ta ? i0 : i0 * lda) * es;
        for (int64_t j0 = 0; j0 < n; j0 += nb) {
            int64_t cols = n - j0 < nb ? n - j0 : nb;
            const char *bb = (const char *)b + (size_t)(tb ? j0 * ldb : j0) * es;
            weft__blas_gemm(dt, ta, tb, rows, cols, k, 1.0, ab, lda, bb, ldb, 0.0, buf, cols);
            for (int64_t i = 0; i < rows; i++) {
                for (int64_t j = 0; j < cols; j++) {
                    char *dst = (char *)c + (size_t)((i0 + i) * ldc + j0 + j) * es;
                    blas_add_zero_times(dt, dst, buf + (size_t)(i * cols + j) * es);
                }
            }
        }
    }
}

/* As blas_gemm_zero_alpha for y <- beta*y + 0*(op(A)@x); y's element i is
 * where BLAS puts it (a negative incy walks y from its end). */
static void blas_gemv_zero_alpha(weft_dtype_t dt, bool ta, int64_t m, int64_t n, const void *a,
                                 int64_t lda, const void *x, int64_t incx,
                                 weft__blas_scalar_t beta, void *y, int64_t incy)
{
    _Alignas(64) unsigned char buf[ZERO_ALPHA_BUF_BYTES];
    size_t es = weft_dtype_size(dt);
    int64_t ylen = ta ? n : m, cap = (int64_t)(sizeof buf / es);
    int64_t step = incy < 0 ? -incy : incy;
    blas_scale(dt, ylen, 1, beta, y, step);
    for (int64_t i0 = 0; i0 < ylen; i0 += cap) {
        int64_t len = ylen - i0 < cap ? ylen - i0 : cap;
        const char *ab = (const char *)a + (size_t)(ta ? i0 : i0 * lda) * es;
        weft__blas_gemv(dt, ta, ta ? m : len, ta ? len : n, 1.0, ab, lda, x, incx, 0.0, buf, 1);
        for (int64_t i = 0; i < len; i++) {
            int64_t at = incy < 0 ? ylen - 1 - (i0 + i) : i0 + i;
            blas_add_zero_times(dt, (char *)y + (size_t)(at * step) * es,
                                buf + (size_t)i * es);
        }
    }
}

/* OpenBLAS never sees an empty length: an empty operand may have NULL data
 * (weft_tensor_from_data allows it), and with k == 0 its kernels still read
 * A and B (NaN behind them propagated, NULL crashed). An empty inner length
 * is beta*C here, read from nothing else. */
void weft__blas_gemm(weft_dtype_t dt, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                     weft__blas_scalar_t alpha, const void *a, int64_t lda, const void *b,
                     int64_t ldb, weft__blas_scalar_t beta, void *c, int64_t ldc)
{
    if (m == 0 || n == 0 || k == 0) {
        blas_scale(dt, m, n, beta, c, ldc);
        return;
    }
    if (alpha == 0.0) {
        blas_gemm_zero_alpha(dt, ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc);
        return;
    }
    if (dt == WEFT_COMPLEX64 || dt == WEFT_COMPLEX128) {
        blas_cgemm(dt, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    } else if (dt == WEFT_FLOAT64) {
        cblas_dgemm(CblasRowMajor, blas_tr(ta), blas_tr(tb), (int)m, (int)n, (int)k,
                    creal(alpha), a, (int)lda, b, (int)ldb, creal(beta), c, (int)ldc);
    } else {
        cblas_sgemm(CblasRowMajor, blas_tr(ta), blas_tr(tb), (int)m, (int)n, (int)k,
                    (float)creal(alpha), a, (int)lda, b, (int)ldb, (float)creal(beta), c,
                    (int)ldc);
    }
}

void weft__blas_gemv(weft_dtype_t dt, bool ta, int64_t m, int64_t n, weft__blas_scalar_t alpha,
                     const void *a, int64_t lda, const void *x, int64_t incx,
                     weft__blas_scalar_t beta, void *y, int64_t incy)
{
    int64_t ylen = ta ? n : m, inner = ta ? m : n;
    if (ylen == 0 || inner == 0) { /* as weft__blas_gemm: y <- beta*y */
        blas_scale(dt, ylen, 1, beta, y, incy < 0 ? -incy : incy);
        return;
    }
    if (alpha == 0.0) {
        blas_gemv_zero_alpha(dt, ta, m, n, a, lda, x, incx, beta, y, incy);
        return;
    }
    if (dt == WEFT_COMPLEX64 || dt == WEFT_COMPLEX128) {
        blas_cgemv(dt, ta, m, n, alpha, a, lda, x, incx, beta, y, incy);
    } else if (dt == WEFT_FLOAT64) {
        cblas_dgemv(CblasRowMajor, blas_tr(ta), (int)m, (int)n, creal(alpha), a, (int)lda, x,
                    (int)incx, creal(beta), y, (int)incy);
    } else {
        cblas_sgemv(CblasRowMajor, blas_tr(ta), (int)m, (int)n, (float)creal(alpha), a,
                    (int)lda, x, (int)incx, (float)creal(beta), y, (int)incy);
    }
}

double weft__blas_dot(weft_dtype_t dt, int64_t n, const void *x, int64_t incx, const void *y,
                      int64_t incy)
{
    if (n == 0) { /* the empty sum, without handing OpenBLAS possibly NULL pointers */
        return 0.0;
    }
    if (dt == WEFT_FLOAT64) {
        return cblas_ddot((int)n, x, (int)incx, y, (int)incy);
    }
    return (double)cblas_sdot((int)n, x, (int)incx, y, (int)incy);
}

void weft__blas_syrk(weft_dtype_t dt, bool lower, bool trans, int64_t n, int64_t k,
                     double alpha, const void *a, int64_t lda, double beta, void *c,
                     int64_t ldc)
{
    enum CBLAS_UPLO uplo = lower ? CblasLower : CblasUpper;
    if (dt == WEFT_COMPLEX128) { /* A A^T, no conjugation (zsyrk, not zherk) */
        double al[2] = {alpha, 0}, be[2] = {beta, 0};
        cblas_zsyrk(CblasRowMajor, uplo, blas_tr(trans), (int)n, (int)k, al, a, (int)lda, be, c,
                    (int)ldc);
    } else if (dt == WEFT_COMPLEX64) {
        float al[2] = {(float)alpha, 0}, be[2] = {(float)beta, 0};
        cblas_csyrk(CblasRowMajor, uplo, blas_tr(trans), (int)n, (int)k, al, a, (int)lda, be, c,
                    (int)ldc);
    } else if (dt == WEFT_FLOAT64) {
        cblas_dsyrk(CblasRowMajor, uplo, blas_tr(trans), (int)n, (int)k, alpha, a, (int)lda,
                    beta, c, (int)ldc);
    } else {
        cblas_ssyrk(CblasRowMajor, uplo, blas_tr(trans), (int)n, (int)k, (float)alpha, a,
                    (int)lda, (float)beta, c, (int)ldc);
    }
}

void weft__blas_trsm(weft_dtype_t dt, bool right, bool lower, bool trans, bool unit,
                     int64_t m, int64_t n, double alpha, const void *a, int64_t lda, void *b,
                     int64_t ldb)
{
    enum CBLAS_SIDE side = right ? CblasRight : CblasLeft;
    enum CBLAS_UPLO uplo = lower ? CblasLower : CblasUpper;
    enum CBLAS_DIAG diag = unit ? CblasUnit : CblasNonUnit;
    if (dt == WEFT_COMPLEX128) { /* trans: the plain transpose, no conjugation */
        double al[2] = {alpha, 0};
        cblas_ztrsm(CblasRowMajor, side, uplo, blas_tr(trans), diag, (int)m, (int)n, al, a,
                    (int)lda, b, (int)ldb);
    } else if (dt == WEFT_COMPLEX64) {
        float al[2] = {(float)alpha, 0};
        cblas_ctrsm(CblasRowMajor, side, uplo, blas_tr(trans), diag, (int)m, (int)n, al, a,
                    (int)lda, b, (int)ldb);
    } else if (dt == WEFT_FLOAT64) {
        cblas_dtrsm(CblasRowMajor, side, uplo, blas_tr(trans), diag, (int)m, (int)n, alpha, a,
                    (int)lda, b, (int)ldb);
    } else {
        cblas_strsm(CblasRowMajor, side, uplo, blas_tr(trans), diag, (int)m, (int)n,
                    (float)alpha, a, (int)lda, b, (int)ldb);
    }
}

int weft__lapack_potrf(weft_dtype_t dt, bool lower, int64_t n, void *a, int64_t lda)
{
    /* A row-major lower triangle is the column-major upper triangle of the
     * same memory: calling the column-major routine with the other triangle
     * avoids LAPACKE's row-major transpose copies. */
    char uplo = lower ? 'U' : 'L';
    /* Complex: the column-major view of a Hermitian A is A^T = conj(A),
     * Hermitian too, and its factor U = L^T (A^T = U^H U), so the same
     * memory trick gives L with A = L L^H. */
    if (dt == WEFT_COMPLEX128) {
        return (int)LAPACKE_zpotrf(LAPACK_COL_MAJOR, uplo, (lapack_int)n, a, (lapack_int)lda);
    }
    if (dt == WEFT_COMPLEX64) {
        return (int)LAPACKE_cpotrf(LAPACK_COL_MAJOR, uplo, (lapack_int)n, a, (lapack_int)lda);
    }
    if (dt == WEFT_FLOAT64) {
        return (int)LAPACKE_dpotrf(LAPACK_COL_MAJOR, uplo, (lapack_int)n, a, (lapack_int)lda);
    }
    return (int)LAPACKE_spotrf(LAPACK_COL_MAJOR, uplo, (lapack_int)n, a, (lapack_int)lda);
}
