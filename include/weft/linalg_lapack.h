/* Linear algebra solvers and decompositions through LAPACKE, NumPy's
 * np.linalg counterparts (docs/linalg.md lists them with every difference).
 *
 * Ops: Solve (np.linalg.solve), Inv (np.linalg.inv), Det (np.linalg.det),
 * SLogDet (np.linalg.slogdet: two outputs, sign and logabsdet),
 * CholeskySolve (scipy.linalg.cho_solve with a lower factor), Svd
 * (np.linalg.svd), Eigh (np.linalg.eigh / eigvalsh), SolveTriangular
 * (scipy.linalg.solve_triangular on broadcast stacks). Trsm (weft/linalg.h)
 * is the one-matrix BLAS triangular solve that also takes a right side.
 *
 * Stacks: every op takes a stack of square matrices (..., n, n) and solves
 * each matrix on its own, as np.linalg does. Solve's and CholeskySolve's b
 * follows NumPy 1.24's np.linalg.solve: a stack of vectors (..., n) when its
 * rank is a's - 1, else a stack of matrices (..., n, k); the batch axes of a
 * and b broadcast as NumPy's (docs/linalg.md), and so does x's batch shape.
 * Gradients exist for stacks with any number of batch axes; with two or
 * more, their products need static lengths (else weft_grad fails with
 * WEFT_ENOTIMPL naming the op).
 *
 * Dtypes: float32 or float64, every input of one op the same; the outputs
 * have the input dtype (NumPy computes float32 in float32 too).
 *
 * Run-time errors: a singular matrix fails Solve and Inv with WEFT_ERANGE,
 * "Solve: the matrix is singular (U[k,k] = 0)" (a stack: "Solve: matrix i of
 * the batch is singular (U[k,k] = 0)"), k the zero-based step of the LU
 * factorization with an exactly zero pivot; the evaluator adds the node and
 * its creation site. Det gives 0 and SLogDet (0, -inf) for a singular matrix,
 * as NumPy. Lengths unknown until run time that do not match fail the node
 * with WEFT_ESHAPE.
 *
 * Threads and bits: each matrix is one LAPACK call made with the LAPACK node
 * kind's OpenBLAS thread setting (weft_blas_set_threads, default 1; see the
 * oversubscription note in weft/linalg.h), so the bits do not depend on the
 * pool's worker count.
 *
 * Constructors are macros recording the creation site; each builds one Apply
 * node in g and returns its output. Ownership: borrows g and the inputs (which
 * must belong to g); the output is borrowed, owned by g. Errors: NULL with
 * the first error kept on g (weft_graph_error, weft_graph_error_message);
 * WEFT_EINVAL (NULL argument), WEFT_EFOREIGN, WEFT_ETYPE (non-float or mixed
 * dtypes, a rank below 2, non-square static lengths, static lengths of a and
 * b that differ; the message names the op, the input and the creation site),
 * WEFT_ENOMEM. A NULL variable argument adds no second error.
 * Thread: like every graph-building function, one thread per context. */
#ifndef WEFT_LINALG_LAPACK_H
#define WEFT_LINALG_LAPACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/export.h"
#include "weft/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Solve(a, b) = x with a x = b: a (..., n, n); b (..., n) (rank a's - 1) or
 * (..., n, k); x: the broadcast batch shape, then (n,) or (n, k). Static
 * batch lengths that do not broadcast: WEFT_ETYPE ("Solve: batch axis d:
 * lengths p (input 0) and q (input 1) do not broadcast"); at run time:
 * WEFT_ESHAPE. Gradient: db = solve(a^T, g), da = -db x^T, each summed over
 * the batch axes its input was broadcast along. */
#define weft_solve(g, a, b) weft_solve_at((g), (a), (b), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_solve_at(weft_graph_t *g, weft_var_t *a, weft_var_t *b,
                                   const char *file, int line);

/* The op(a) of weft_solve_triangular (scipy's trans 0/'N', 1/'T', 2/'C';
 * C is T for the real dtypes). */
typedef enum weft_solve_trans {
    WEFT_TRANS_N = 0,
    WEFT_TRANS_T = 1,
    WEFT_TRANS_C = 2,
} weft_solve_trans_t;

/* SolveTriangular{lower, trans, unit_diagonal}(a, b), scipy.linalg.
 * solve_triangular(a, b, trans, lower, unit_diagonal) (PyTensor's
 * SolveTriangular) on stacks: x with op(a) x = b for the triangular a
 * (..., n, n), reading only its lower (else upper) triangle, and not its
 * diagonal with unit_diagonal (taken as ones). b is a vector (n,), solved
 * against every matrix of a (x: (..., n)), or a stack (..., n, k) whose
 * batch axes broadcast against a's as NumPy's (x: broadcast batch +
 * (n, k)). A zero on the read diagonal fails the node with WEFT_ERANGE,
 * "SolveTriangular: the matrix is singular (a[i,i] = 0)" ("matrix j of the
 * batch is singular (a[i,i] = 0)" for a stack; scipy raises LinAlgError).
 * Gradient: gb = solve_triangular(a, gx) with op(a)^T; ga = -gb x^T (trans:
 * -x gb^T) in the read triangle; each summed over the batch axes its input
 * was broadcast along (a static length 1). Errors: common ones; WEFT_EINVAL
 * for a trans outside the enum; WEFT_ETYPE for a 0-d b, lengths that differ
 * or batch lengths that do not broadcast (static). */
#define weft_solve_triangular(g, a, b, lower, trans, unit_diagonal)                      \
    weft_solve_triangular_at((g), (a), (b), (lower), (trans), (unit_diagonal), __FILE__, \
                             __LINE__)
WEFT_API weft_var_t *weft_solve_triangular_at(weft_graph_t *g, weft_var_t *a, weft_var_t *b,
                                              bool lower, weft_solve_trans_t trans,
                                              bool unit_diagonal, const char *file, int line);

/* Inv(a): the inverse of each matrix of a (..., n, n). */
#define weft_inv(g, a) weft_inv_at((g), (a), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_inv_at(weft_graph_t *g, weft_var_t *a, const char *file, int line);

/* Det(a): the determinant of each matrix, shape (...) (0-d for one matrix),
 * computed as NumPy: sign * exp(sum log|u_ii|) of the LU factors. */
#define weft_det(g, a) weft_det_at((g), (a), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_det_at(weft_graph_t *g, weft_var_t *a, const char *file, int line);

/* SLogDet(a): returns logabsdet = log|det a| (shape (...)) and stores the
 * sign (-1, 0 or 1, same shape and dtype) in *sign when sign is not NULL
 * (NULL on error). One node with two outputs: sign is output 0, logabsdet
 * output 1 (the default output). Only logabsdet has a gradient. */
#define weft_slogdet(g, a, sign) weft_slogdet_at((g), (a), (sign), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_slogdet_at(weft_graph_t *g, weft_var_t *a, weft_var_t **sign,
                                     const char *file, int line);

/* CholeskySolve(l, b) = x with (l l^T) x = b, l the lower Cholesky factor
 * (weft_cholesky), only its lower triangle read; shapes as Solve. */
#define weft_cholesky_solve(g, l, b) weft_cholesky_solve_at((g), (l), (b), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_cholesky_solve_at(weft_graph_t *g, weft_var_t *l, weft_var_t *b,
                                            const char *file, int line);

/* Svd{full_matrices, compute_uv}(a), np.linalg.svd: returns the singular
 * values s (..., k), k = min(m, n), descending, for a (..., m, n); with
 * compute_uv also stores u (..., m, k) and vh (..., k, n) in *u and *vh
 * (either may be NULL; with full_matrices (..., m, m) and (..., n, n)), so
 * that a = u diag(s) vh. One node: outputs (u, s, vh), or (s) without
 * compute_uv; s is the default output. An empty matrix gives identity u, vh
 * (full_matrices), as NumPy. LAPACK failing to converge (or NaN in a) fails
 * the node with WEFT_ERANGE ("Svd: did not converge", NumPy's LinAlgError).
 * Gradient: of s (da = u diag(gs) vh), and of u and vh (Townsend 2016;
 * distinct non-zero singular values) without full_matrices, or with it for
 * square matrices (static m == n: full = reduced); a gradient reaching the
 * full u or vh of another shape fails weft_grad with WEFT_ENOTIMPL naming
 * the node (docs/linalg.md). */
#define weft_svd(g, a, full_matrices, compute_uv, u, vh) \
    weft_svd_at((g), (a), (full_matrices), (compute_uv), (u), (vh), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_svd_at(weft_graph_t *g, weft_var_t *a, bool full_matrices,
                                 bool compute_uv, weft_var_t **u, weft_var_t **vh,
                                 const char *file, int line);

/* Eigh{lower, compute_v}(a), np.linalg.eigh(a, UPLO='L' if lower else 'U'):
 * the eigenvalues w (..., n) ascending of the symmetric matrices a
 * (..., n, n), reading only the lower (or upper) triangle; *v (when not
 * NULL) gets the eigenvectors (..., n, n), column j for w[j]. One node with
 * outputs (w, v); w is the default output. weft_eigvalsh is the op without
 * vectors (np.linalg.eigvalsh). Gradient (stacks too): both outputs, for
 * distinct eigenvalues (equal ones give Inf/NaN, as the formula). */
#define weft_eigh(g, a, lower, v) weft_eigh_at((g), (a), (lower), (v), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_eigh_at(weft_graph_t *g, weft_var_t *a, bool lower, weft_var_t **v,
                                  const char *file, int line);
#define weft_eigvalsh(g, a, lower) weft_eigvalsh_at((g), (a), (lower), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_eigvalsh_at(weft_graph_t *g, weft_var_t *a, bool lower,
                                      const char *file, int line);

/* Lstsq{rcond}(a, b), np.linalg.lstsq(a, b, rcond)[0]: the minimum-norm
 * least-squares solution x (n,) or (n, k) for one matrix a (m, n) and b
 * (m,) or (m, k) (?gelsd; like NumPy, no stacks). Only x: NumPy's
 * residuals, rank and singular values are not outputs (rank and s: use
 * weft_svd). rcond < 0 (or NaN): NumPy's default eps * max(m, n); singular
 * values <= rcond * s_max count as zero. Gradient: for full column rank
 * (m >= n, rank n): da = (b - a x) z^T - a z x^T, db = a z, z = (a^T a)^-1 gx. */
#define weft_lstsq(g, a, b, rcond) weft_lstsq_at((g), (a), (b), (rcond), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_lstsq_at(weft_graph_t *g, weft_var_t *a, weft_var_t *b, double rcond,
                                   const char *file, int line);

/* Qr(a), np.linalg.qr(a, mode='reduced'): returns q (..., m, k) and stores
 * r (..., k, n) (upper triangular) in *r when not NULL, k = min(m, n),
 * a = q r. One node, outputs (q, r); q is the default output. Signs as
 * LAPACK's ?geqrf (NumPy's routine too). Gradient: stacks with static
 * m >= n (PyTensor's formula); otherwise weft_grad fails with WEFT_ENOTIMPL. */
#define weft_qr(g, a, r) weft_qr_at((g), (a), (r), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_qr_at(weft_graph_t *g, weft_var_t *a, weft_var_t **r, const char *file,
                                int line);

/* ---- compositions (no op of their own: Dot, Inv, Svd, reductions and
 * elementwise ops; their gradients, JSON form and fusion are the parts') ---- */

/* np.linalg.matrix_power(a, p) for a stack a (..., n, n): binary powering
 * with Dot in NumPy's order; p < 0 powers inv(a) (a singular a fails the
 * Inv node); p == 0 gives the identity (needs a static n: WEFT_ETYPE
 * otherwise). Two or more batch axes run as the 3-d stack (-1, n, n)
 * (Reshape, any batch lengths) and are reshaped back; they need a static n
 * (WEFT_ENOTIMPL "MatrixPower: input 0 has d dims and its last two lengths
 * are not both static ..."). Gradient: the parts'. Errors: common ones. */
#define weft_matrix_power(g, a, p) weft_matrix_power_at((g), (a), (p), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_matrix_power_at(weft_graph_t *g, weft_var_t *a, int64_t p,
                                          const char *file, int line);

/* np.linalg.vector_norm(x, axis=axes, keepdims, ord): ord +-INFINITY (max /
 * min |x|), 0 (count of non-zeros, in x's dtype), 1, 2, or any other p
 * ((sum |x|^p)^(1/p)); n_axes 0: every axis. float32/float64 only.
 * Errors: common ones; WEFT_EINVAL for a NaN ord or bad axes. */
#define weft_vector_norm(g, x, ord, n_axes, axes, keepdims) \
    weft_vector_norm_at((g), (x), (ord), (n_axes), (axes), (keepdims), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_vector_norm_at(weft_graph_t *g, weft_var_t *x, double ord,
                                         size_t n_axes, const int *axes, bool keepdims,
                                         const char *file, int line);

/* np.linalg.pinv(a, rcond) for a stack a (..., m, n) -> (..., n, m): from
 * the reduced Svd, singular values <= rcond * max(s) count as zero (NumPy's
 * default rcond is 1e-15). Two or more batch axes run as the 3-d stack
 * (-1, m, n) as weft_matrix_power's (static m and n, else WEFT_ENOTIMPL).
 * Gradient: through Svd's u, s and vh (distinct non-zero singular values).
 * Errors: common ones; WEFT_EINVAL for a negative or NaN rcond; WEFT_ETYPE
 * for a rank below 2. */
#define weft_pinv(g, a, rcond) weft_pinv_at((g), (a), (rcond), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_pinv_at(weft_graph_t *g, weft_var_t *a, double rcond, const char *file,
                                  int line);

/* The orders of np.linalg.matrix_norm. */
typedef enum weft_matrix_norm {
    WEFT_NORM_FRO = 0,       /* 'fro': sqrt(sum x^2) */
    WEFT_NORM_NUC = 1,       /* 'nuc': sum of singular values */
    WEFT_NORM_ONE = 2,       /* 1: max column sum of |x| */
    WEFT_NORM_MINUS_ONE = 3, /* -1: min column sum */
    WEFT_NORM_TWO = 4,       /* 2: largest singular value */
    WEFT_NORM_MINUS_TWO = 5, /* -2: smallest singular value */
    WEFT_NORM_INF = 6,       /* inf: max row sum of |x| */
    WEFT_NORM_MINUS_INF = 7, /* -inf: min row sum */
} weft_matrix_norm_t;

/* np.linalg.matrix_norm(x, keepdims, ord) over the last two axes of x
 * (..., m, n). Gradients: those of the parts (nuc, 2, -2 through Svd's
 * singular values). Errors: common ones; WEFT_EINVAL for an unknown ord. */
#define weft_matrix_norm(g, x, ord, keepdims) \
    weft_matrix_norm_at((g), (x), (ord), (keepdims), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_matrix_norm_at(weft_graph_t *g, weft_var_t *x, weft_matrix_norm_t ord,
                                         bool keepdims, const char *file, int line);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_LINALG_LAPACK_H */
