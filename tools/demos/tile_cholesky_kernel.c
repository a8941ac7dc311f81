/* The diagonal-tile kernel (tile_cholesky_kernel.h). A row-major lower tile
 * is, in the same memory, a column-major upper one (U = L^T), so the code
 * works column-major on U and calls LAPACK without a transposition copy.
 * With A = [A11 A12; A12^T A22] and the split h:
 *
 *   U11 = chol(A11), W11 = U11^-1            (recursion)
 *   U12 = U11^-T A12 = W11^T A12             (dtrmm: the solve as a product)
 *   A22 = A22 - U12^T U12                    (dsyrk)
 *   U22 = chol(A22), W22 = U22^-1            (recursion)
 *   W12 = -W11 U12 W22                       (two dtrmm; only where needed)
 *
 * which is U^-1 = [W11 W12; 0 W22]. */
#include <cblas.h>
#include <lapacke.h>
#include <string.h>

#include "tile_cholesky_kernel.h"

/* The upper triangle of column-major u (n x n) into w. */
static void copy_upper(const double *u, int ldu, double *w, int ldw, int n)
{
    for (int j = 0; j < n; j++)
        memcpy(w + (size_t)j * ldw, u + (size_t)j * ldu, (size_t)(j + 1) * sizeof *w);
}

static int base_case(double *u, int ldu, double *w, int ldw, int n, int inverse)
{
    int info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'U', n, u, ldu);
    if (info != 0 || !inverse) return info;
    copy_upper(u, ldu, w, ldw, n);
    /* U's diagonal is positive after dpotrf: dtrtri cannot find it singular */
    return LAPACKE_dtrtri_work(LAPACK_COL_MAJOR, 'U', 'N', n, w, ldw);
}

/* Column-major upper u (n x n): u <- U, and W11, W22 (and W12 when
 * `inverse`) into w. The inner calls always need their inverses: the
 * caller's dtrmm and W12 use them. */
static int factor(double *u, int ldu, double *w, int ldw, int n, int inverse)
{
    if (n <= CHOL_TILE_BASE) return base_case(u, ldu, w, ldw, n, inverse);
    int h = (n / 2 + 7) / 8 * 8, r = n - h; /* a multiple of 8 keeps BLAS blocks aligned */
    double *u12 = u + (size_t)h * ldu, *u22 = u12 + h;
    double *w12 = w + (size_t)h * ldw, *w22 = w12 + h;
    int info = factor(u, ldu, w, ldw, h, 1);
    if (info != 0) return info;
    cblas_dtrmm(CblasColMajor, CblasLeft, CblasUpper, CblasTrans, CblasNonUnit, h, r, 1.0, w, ldw,
                u12, ldu);
    cblas_dsyrk(CblasColMajor, CblasUpper, CblasTrans, r, h, -1.0, u12, ldu, 1.0, u22, ldu);
    info = factor(u22, ldu, w22, ldw, r, 1);
    if (info != 0) return info + h;
    if (!inverse) return 0;
    for (int j = 0; j < r; j++)
        memcpy(w12 + (size_t)j * ldw, u12 + (size_t)j * ldu, (size_t)h * sizeof *w12);
    cblas_dtrmm(CblasColMajor, CblasRight, CblasUpper, CblasNoTrans, CblasNonUnit, h, r, 1.0, w22,
                ldw, w12, ldw);
    cblas_dtrmm(CblasColMajor, CblasLeft, CblasUpper, CblasNoTrans, CblasNonUnit, h, r, -1.0, w,
                ldw, w12, ldw);
    return 0;
}

int chol_tile_factor(double *a, int lda, double *w, int ldw, int n, int inverse)
{
    if (n == 0) return 0; /* an empty tile: nothing to read, even through NULL */
    if (n < 0 || !a || !w || lda < n || ldw < n) return -1;
    return factor(a, lda, w, ldw, n, inverse);
}
