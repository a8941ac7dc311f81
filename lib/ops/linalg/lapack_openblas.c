/* The LAPACKE binding of the solver ops (lapack_int.h): LU factorization,
 * LU solves and inverse, Cholesky solves, on column-major buffers (ld = n)
 * so that LAPACKE never transposes. OpenBLAS's thread count is set by the
 * calling kernel (weft__linalg_enter, one thread per node by default). */
#include <lapacke.h>

#include "lapack_int.h"

/* The pivots are passed as int32_t: lapack_int is int in the LP64 OpenBLAS
 * weft links (a 64-bit-integer build would need a copy). */
_Static_assert(sizeof(lapack_int) == sizeof(int32_t), "weft expects 32-bit LAPACK integers");

int weft__lapack_getrf(weft_dtype_t dt, int64_t n, void *a, int32_t *ipiv)
{
    lapack_int ni = (lapack_int)n;
    if (dt == WEFT_FLOAT64) {
        return (int)LAPACKE_dgetrf(LAPACK_COL_MAJOR, ni, ni, a, ni, ipiv);
    }
    return (int)LAPACKE_sgetrf(LAPACK_COL_MAJOR, ni, ni, a, ni, ipiv);
}

int weft__lapack_getrs(weft_dtype_t dt, bool trans, int64_t n, int64_t nrhs, const void *lu,
                       const int32_t *ipiv, void *b)
{
    lapack_int ni = (lapack_int)n, nr = (lapack_int)nrhs;
    char t = trans ? 'T' : 'N';
    if (dt == WEFT_FLOAT64) {
        return (int)LAPACKE_dgetrs(LAPACK_COL_MAJOR, t, ni, nr, lu, ni, ipiv, b, ni);
    }
    return (int)LAPACKE_sgetrs(LAPACK_COL_MAJOR, t, ni, nr, lu, ni, ipiv, b, ni);
}

int weft__lapack_getri(weft_dtype_t dt, int64_t n, void *lu, const int32_t *ipiv)
{
    lapack_int ni = (lapack_int)n;
    if (dt == WEFT_FLOAT64) {
        return (int)LAPACKE_dgetri(LAPACK_COL_MAJOR, ni, lu, ni, ipiv);
    }
    return (int)LAPACKE_sgetri(LAPACK_COL_MAJOR, ni, lu, ni, ipiv);
}

int weft__lapack_potrs(weft_dtype_t dt, bool lower, int64_t n, int64_t nrhs, const void *f,
                       void *b)
{
    lapack_int ni = (lapack_int)n, nr = (lapack_int)nrhs;
    char uplo = lower ? 'L' : 'U';
    if (dt == WEFT_FLOAT64) {
        return (int)LAPACKE_dpotrs(LAPACK_COL_MAJOR, uplo, ni, nr, f, ni, b, ni);
    }
    return (int)LAPACKE_spotrs(LAPACK_COL_MAJOR, uplo, ni, nr, f, ni, b, ni);
}
