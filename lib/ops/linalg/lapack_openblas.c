/* The LAPACKE binding of the solver ops (lapack_int.h): LU factorization,
 * LU solves and inverse, Cholesky solves, on column-major buffers (ld = n)
 * so that LAPACKE never transposes. The _work entry points: the plain ones
 * first scan every input for NaN (O(n^2) more reads) and refuse it with
 * info < 0, where NumPy returns NaN results; the _work ones compute (gelsd,
 * whose workspace query is long, keeps the plain entry point). OpenBLAS's
 * thread count is set by the calling kernel (weft__linalg_enter, one thread
 * per node by default). Also the right-side triangular solves that let
 * Solve work on x's row-major memory without transposed copies. */
#include <cblas.h>
#include <lapacke.h>
#include <string.h>

#include "lapack_int.h"

/* The pivots are passed as int32_t: lapack_int is int in the LP64 OpenBLAS
 * weft links (a 64-bit-integer build would need a copy). */
_Static_assert(sizeof(lapack_int) == sizeof(int32_t), "weft expects 32-bit LAPACK integers");

int weft__lapack_getrf(weft_dtype_t dt, int64_t n, void *a, int32_t *ipiv)
{
    lapack_int ni = (lapack_int)n;
    if (dt == WEFT_FLOAT64) {
        return (int)LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, ni, ni, a, ni, ipiv);
    }
    return (int)LAPACKE_sgetrf_work(LAPACK_COL_MAJOR, ni, ni, a, ni, ipiv);
}

int weft__lapack_getrs(weft_dtype_t dt, bool trans, int64_t n, int64_t nrhs, const void *lu,
                       const int32_t *ipiv, void *b)
{
    lapack_int ni = (lapack_int)n, nr = (lapack_int)nrhs;
    char t = trans ? 'T' : 'N';
    if (dt == WEFT_FLOAT64) {
        return (int)LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, t, ni, nr, lu, ni, ipiv, b, ni);
    }
    return (int)LAPACKE_sgetrs_work(LAPACK_COL_MAJOR, t, ni, nr, lu, ni, ipiv, b, ni);
}

int64_t weft__lapack_getri_lwork(weft_dtype_t dt, int64_t n)
{
    lapack_int ni = (lapack_int)n, piv = 0;
    if (dt == WEFT_FLOAT64) {
        double q = 0, a = 0;
        int info =
            (int)LAPACKE_dgetri_work(LAPACK_COL_MAJOR, ni, &a, ni > 1 ? ni : 1, &piv, &q, -1);
        return info == 0 && q >= 1 ? (int64_t)q : (n > 1 ? n : 1);
    }
    float q = 0, a = 0;
    int info = (int)LAPACKE_sgetri_work(LAPACK_COL_MAJOR, ni, &a, ni > 1 ? ni : 1, &piv, &q, -1);
    return info == 0 && q >= 1 ? (int64_t)q : (n > 1 ? n : 1);
}

int weft__lapack_getri(weft_dtype_t dt, int64_t n, void *lu, const int32_t *ipiv, void *work,
                       int64_t lwork)
{
    lapack_int ni = (lapack_int)n, lw = (lapack_int)lwork;
    if (dt == WEFT_FLOAT64) {
        return (int)LAPACKE_dgetri_work(LAPACK_COL_MAJOR, ni, lu, ni, ipiv, work, lw);
    }
    return (int)LAPACKE_sgetri_work(LAPACK_COL_MAJOR, ni, lu, ni, ipiv, work, lw);
}

int weft__lapack_potrs(weft_dtype_t dt, bool lower, int64_t n, int64_t nrhs, const void *f,
                       void *b)
{
    lapack_int ni = (lapack_int)n, nr = (lapack_int)nrhs;
    char uplo = lower ? 'L' : 'U';
    if (dt == WEFT_FLOAT64) {
        return (int)LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, uplo, ni, nr, f, ni, b, ni);
    }
    return (int)LAPACKE_spotrs_work(LAPACK_COL_MAJOR, uplo, ni, nr, f, ni, b, ni);
}

/* Swaps the k-element rows i and j of x. */
#define LAPACK_SWAP_(ctype, dtype)                                              \
    static void swap_rows_##ctype(ctype *x, int64_t k, int64_t i, int64_t j)    \
    {                                                                           \
        for (int64_t c = 0; c < k; c++) {                                       \
            ctype t = x[i * k + c];                                             \
            x[i * k + c] = x[j * k + c];                                        \
            x[j * k + c] = t;                                                   \
        }                                                                       \
    }
WEFT__LAPACK_TYPES(LAPACK_SWAP_)
#undef LAPACK_SWAP_

/* X^T <- X^T op(T)^-1 for the column-major k x n X^T (X's row-major memory). */
static void trsm_right(weft_dtype_t dt, bool upper, bool trans, bool unit, int64_t n, int64_t k,
                       const void *t, void *x)
{
    enum CBLAS_UPLO uplo = upper ? CblasUpper : CblasLower;
    enum CBLAS_TRANSPOSE tr = trans ? CblasTrans : CblasNoTrans;
    enum CBLAS_DIAG diag = unit ? CblasUnit : CblasNonUnit;
    if (dt == WEFT_FLOAT64) {
        cblas_dtrsm(CblasColMajor, CblasRight, uplo, tr, diag, (int)k, (int)n, 1.0, t, (int)n, x,
                    (int)k);
    } else {
        cblas_strsm(CblasColMajor, CblasRight, uplo, tr, diag, (int)k, (int)n, 1.0f, t, (int)n,
                    x, (int)k);
    }
}

void weft__lapack_lu_solve_rows(weft_dtype_t dt, int64_t n, int64_t k, const void *lu,
                                const int32_t *ipiv, void *x)
{
    /* lu: a^T = P L U. a = U^T L^T P^T, so x = P L^-T U^-T b and, on the
     * column-major x^T: x^T = b^T U^-1 L^-1 P^T; P^T on the right applies
     * the interchanges as column swaps of x^T (rows of x) in reverse order. */
    trsm_right(dt, true, false, false, n, k, lu, x);
    trsm_right(dt, false, false, true, n, k, lu, x);
    for (int64_t i = n - 1; i >= 0; i--) {
        int64_t p = ipiv[i] - 1;
        if (p == i) {
            continue;
        }
#define LAPACK_SWAP_CALL_(ctype, dtype) \
    if (dt == dtype) swap_rows_##ctype(x, k, i, p);
        WEFT__LAPACK_TYPES(LAPACK_SWAP_CALL_)
#undef LAPACK_SWAP_CALL_
    }
}

void weft__lapack_cho_solve_rows(weft_dtype_t dt, int64_t n, int64_t k, const void *u, void *x)
{
    /* a = U^T U (u: l's memory read column-major): x^T = b^T U^-1 U^-T */
    trsm_right(dt, true, false, false, n, k, u, x);
    trsm_right(dt, true, true, false, n, k, u, x);
}

int weft__lapack_gelsd(weft_dtype_t dt, int64_t m, int64_t n, int64_t k, void *a, void *b,
                       int64_t ld, void *s, double rcond)
{
    lapack_int mi = (lapack_int)m, ni = (lapack_int)n, ki = (lapack_int)k, rank = 0;
    if (dt == WEFT_FLOAT64) {
        return (int)LAPACKE_dgelsd(LAPACK_COL_MAJOR, mi, ni, ki, a, mi, b, (lapack_int)ld, s,
                                   rcond, &rank);
    }
    return (int)LAPACKE_sgelsd(LAPACK_COL_MAJOR, mi, ni, ki, a, mi, b, (lapack_int)ld, s,
                               (float)rcond, &rank);
}

void weft__lapack_load_cm(const weft_tensor_t *t, int64_t rows, int64_t cols, int64_t ld,
                          void *dst)
{
    int nd = weft_tensor_ndim(t);
    int64_t s0 = weft_tensor_stride(t, 0), s1 = nd == 2 ? weft_tensor_stride(t, 1) : 0;
    for (int64_t i = 0; i < rows; i++) {
        for (int64_t j = 0; j < cols; j++) {
#define LAPACK_LOAD_CM_(ctype, dtype)                                                        \
    if (weft_tensor_dtype(t) == dtype)                                                       \
        ((ctype *)dst)[j * ld + i] = ((const ctype *)weft_tensor_data(t))[i * s0 + j * s1];
            WEFT__LAPACK_TYPES(LAPACK_LOAD_CM_)
#undef LAPACK_LOAD_CM_
        }
    }
}

void weft__lapack_store_cm(weft_dtype_t dt, const void *src, int64_t rows, int64_t cols,
                           int64_t ld, void *dst)
{
    for (int64_t i = 0; i < rows; i++) {
        for (int64_t j = 0; j < cols; j++) {
#define LAPACK_STORE_CM_(ctype, dtype) \
    if (dt == dtype) ((ctype *)dst)[i * cols + j] = ((const ctype *)src)[j * ld + i];
            WEFT__LAPACK_TYPES(LAPACK_STORE_CM_)
#undef LAPACK_STORE_CM_
        }
    }
}
