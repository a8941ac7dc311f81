/* Dense linear algebra ops backed by OpenBLAS (CBLAS) and LAPACKE.
 *
 * Ops: Dot (matrix/vector products and batched matrix products), Gemm
 * (Z <- b*Z + a*X@Y), Gemv (y <- b*y + a*A@x), Cholesky (lower factor),
 * Trsm (triangular solve), Syrk (A@A^T or A^T@A). float32 and float64; all
 * of them also complex64 and complex128 (docs/dtypes.md,
 * "Complex numbers": Cholesky factors a Hermitian matrix, A = L L^H; every
 * transpose is plain, never conjugate). Every input of one op has the same
 * dtype (no implicit upcast: WEFT_ETYPE).
 * Each op has a reverse-mode gradient (weft/grad.h), except on complex
 * inputs (Gemm, Gemv, Cholesky, Trsm, Syrk: none, disconnected; Dot:
 * dX = G conj(Y)^T, dY = conj(X)^T G, PyTensor's complex convention). The
 * LAPACK solvers and decompositions (solve, inv, det, qr, svd, eigh, lstsq,
 * ...) and the norms are in weft/linalg_lapack.h (docs/linalg.md; real
 * dtypes only).
 *
 * Strides: a kernel hands BLAS the operand's memory as it is whenever the
 * layout allows: a row-major matrix with any row stride becomes the leading
 * dimension, a transposed view (unit stride on the first axis) becomes a
 * transpose flag. Only operands whose inner stride is not 1 on either axis
 * (or negative / broadcast strides) are copied to a contiguous buffer first.
 *
 * Constructors are macros recording the creation site (__FILE__/__LINE__) for
 * error messages; each builds one Apply node in g and returns its output.
 * Common Ownership: borrows g and the inputs (which must belong to g); the
 * output is borrowed, owned by g. Common Errors: each returns the output, or
 * NULL with the first error kept on g (weft_graph_error,
 * weft_graph_error_message; weft/graph.h "Errors"); a NULL variable argument
 * (an earlier constructor's failure) adds no second error.
 * Statuses: WEFT_EINVAL (NULL argument,
 * bad flags), WEFT_ETYPE (non-float dtype, mixed dtypes, wrong rank, or
 * static lengths that do not match; the message names the op, the input and
 * the creation site), WEFT_EFOREIGN, WEFT_ENOMEM. Run-time shape mismatches
 * (unknown static lengths) fail the node with WEFT_ESHAPE.
 * Thread: like every graph-building function, one thread per context.
 *
 * Threading and oversubscription. OpenBLAS's thread count is process-global.
 * weft runs each BLAS-backed node on one pool worker and, by default, tells
 * OpenBLAS to use 1 thread inside nodes, so a pool of P workers (P <= cores)
 * runs at most P BLAS threads: the pool provides the parallelism, OpenBLAS
 * never adds threads of its own, and the cores are never oversubscribed.
 * Before each call a kernel compares OpenBLAS's current count with the
 * setting of its node kind (weft_blas_set_threads) and changes it only when
 * they differ. Raise a kind above 1 only when nodes of that kind run alone
 * (a 1-worker pool, or the sequential evaluator): then workers x threads
 * still stays within the cores. weft_blas_scope_enter/exit set and restore
 * the global count around code of your own (e.g. a direct LAPACKE call).
 * The serial OpenBLAS build is not safe to call from several threads at once
 * (it produced wrong Cholesky factors under concurrency): every BLAS-backed
 * kernel checks openblas_get_parallel() and fails the node with WEFT_ESTATE
 * on such a build; weft_blas_check() tells in advance. */
#ifndef WEFT_LINALG_H
#define WEFT_LINALG_H

#include <stdbool.h>
#include <stddef.h>

#include "weft/export.h"
#include "weft/graph.h"
#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- BLAS threading ------------------------------------------------------ */

/* Node kinds with their own OpenBLAS thread setting (default 1 each). */
typedef enum weft_blas_kind {
    WEFT_BLAS_KIND_LEVEL1 = 0, /* Dot of two vectors */
    WEFT_BLAS_KIND_LEVEL2 = 1, /* Gemv, matrix-vector Dot */
    WEFT_BLAS_KIND_LEVEL3 = 2, /* Gemm, matrix Dot, Trsm, Syrk */
    WEFT_BLAS_KIND_LAPACK = 3, /* Cholesky */
} weft_blas_kind_t;
#define WEFT_BLAS_KIND_COUNT 4

/* Is the linked OpenBLAS safe to call from several threads (pthread or
 * OpenMP build)? Errors: WEFT_ESTATE (serial build: weft's BLAS kernels
 * refuse to run). Thread: any. */
WEFT_API weft_status_t weft_blas_check(void);

/* The LAPACK kind's opt-in setting "the pool's free workers": each LAPACK
 * node (Cholesky and the solvers of weft/linalg_lapack.h) whose matrices
 * have order >= 256 runs OpenBLAS with 1 + the workers of its pool that are
 * idle when it starts (weft_kernel_idle_workers, at most the pool's size);
 * smaller ones, and nodes outside a pool (weft_eval), with 1. Not bit-
 * reproducible: OpenBLAS's LAPACK results depend on its thread count
 * (docs/linalg.md "Threads and bits"), and the idle count on timing. */
#define WEFT_BLAS_THREADS_FREE (-1)

/* Sets the OpenBLAS thread count that nodes of `kind` run with (1..256, or
 * WEFT_BLAS_THREADS_FREE for WEFT_BLAS_KIND_LAPACK) and stores the previous
 * setting in *previous (may be NULL). Takes effect at the next node of that
 * kind. See the oversubscription note above.
 * Errors: WEFT_EINVAL (bad kind, n_threads < 1 or > 256 other than FREE for
 * the LAPACK kind).
 * Thread: call while no compiled function or evaluation runs. */
WEFT_API weft_status_t weft_blas_set_threads(weft_blas_kind_t kind, int n_threads,
                                             int *previous);
/* The setting of `kind` (1 for an invalid kind; WEFT_BLAS_THREADS_FREE when
 * so set). Thread: as set_threads. */
WEFT_API int weft_blas_get_threads(weft_blas_kind_t kind);

/* Saved OpenBLAS state for a scoped change; fill with weft_blas_scope_enter. */
typedef struct weft_blas_scope {
    int saved_threads;
    bool active;
} weft_blas_scope_t;
/* Sets OpenBLAS's global thread count to n_threads now, saving the current
 * one in *scope; weft_blas_scope_exit restores it.
 * Ownership: borrows scope (caller storage).
 * Errors: WEFT_EINVAL (NULL scope, n_threads < 1 or > 256), WEFT_ESTATE
 * (serial OpenBLAS). Thread: not while BLAS-backed nodes run. */
WEFT_API weft_status_t weft_blas_scope_enter(weft_blas_scope_t *scope, int n_threads);
/* Restores the saved count; a no-op for NULL or an inactive scope. */
WEFT_API void weft_blas_scope_exit(weft_blas_scope_t *scope);

/* ---- ops ----------------------------------------------------------------- */

/* Dot(x, y), numpy's dot for ranks 1-2 plus a batched matrix product:
 *   (m,k)@(k,n) -> (m,n)  gemm      (m,k)@(k,) -> (m,)  gemv
 *   (k,)@(k,n)  -> (n,)   gemv      (k,)@(k,)  -> ()    dot
 *   (b,m,k)@(b,k,n) -> (b,m,n)  one gemm per batch entry.
 * Errors: common ones; WEFT_ETYPE for other rank pairs or known lengths that
 * differ. */
#define weft_dot(g, x, y) weft_dot_at((g), (x), (y), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_dot_at(weft_graph_t *g, weft_var_t *x, weft_var_t *y, const char *file,
                                 int line);

/* Gemm(z, a, x, y, b) = b*z + a*x@y with z (m,n), x (m,k), y (k,n), a and b
 * 0-d. inplace: the node may overwrite z (destroy_map {0: [0]}; z must then
 * be destroyable in a FunctionGraph with a DestroyHandler) and does when z is
 * C-contiguous (a strided z gets a fresh output, so a later reduction sums in
 * the order it would without the in-place rewrite); otherwise it copies z
 * first. The non-destroying op's inplace_variant hook gives the in-place
 * one for input 0. b == 0 ignores z's values (NaN in z does not propagate),
 * as BLAS does; a == 0 does not skip the product (unlike BLAS): as in
 * NumPy's b*z + 0*(x@y), an Inf or NaN in x@y gives NaN. Any length may be
 * 0 (an empty operand may have NULL data, weft_tensor_from_data): k == 0 gives b*z (zeros for b == 0) without
 * reading x or y; m or n == 0 an empty output. Gemv and Dot likewise (an
 * empty inner length gives b*y, or zeros). */
#define weft_gemm(g, z, a, x, y, b, inplace) \
    weft_gemm_at((g), (z), (a), (x), (y), (b), (inplace), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_gemm_at(weft_graph_t *g, weft_var_t *z, weft_var_t *a, weft_var_t *x,
                                  weft_var_t *y, weft_var_t *b, bool inplace, const char *file,
                                  int line);

/* Gemv(y, a, A, x, b) = b*y + a*A@x with y (m,), A (m,n), x (n,), a and b
 * 0-d; inplace as for Gemm (destroys y). */
#define weft_gemv(g, y, a, A, x, b, inplace) \
    weft_gemv_at((g), (y), (a), (A), (x), (b), (inplace), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_gemv_at(weft_graph_t *g, weft_var_t *y, weft_var_t *a, weft_var_t *A,
                                  weft_var_t *x, weft_var_t *b, bool inplace, const char *file,
                                  int line);

/* Cholesky(x): the lower factor L (upper triangle zero) of a symmetric
 * positive definite (n,n) matrix, reading only x's lower triangle
 * (LAPACKE_?potrf; real orders >= 1024: a tile Cholesky spread over the
 * pool, the same bits at any worker count, docs/linalg.md). A matrix that
 * is not positive definite fails the node with WEFT_ERANGE, the message
 * naming the node, its creation site and the order of the failing leading
 * minor. */
#define weft_cholesky(g, x) weft_cholesky_at((g), (x), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_cholesky_at(weft_graph_t *g, weft_var_t *x, const char *file, int line);

/* Trsm flags (OR them; 0 = left side, lower, no transpose, non-unit). */
#define WEFT_TRSM_RIGHT 1u /* solve X op(A) = B instead of op(A) X = B */
#define WEFT_TRSM_UPPER 2u /* A is upper triangular (only that triangle is read) */
#define WEFT_TRSM_TRANS 4u /* op(A) = A^T */
#define WEFT_TRSM_UNIT 8u  /* A's diagonal is taken as 1 (not read) */

/* Trsm(a, b): X with op(a) X = b (or X op(a) = b with WEFT_TRSM_RIGHT); a is
 * (n,n) triangular, b is (n,k) (right: (k,n)) or a vector (n,) on the left.
 * Only the flagged triangle of a is read. A zero on the diagonal gives
 * Inf/NaN, as in BLAS. Errors: common ones; WEFT_EINVAL for unknown flags or
 * a vector b with WEFT_TRSM_RIGHT. */
#define weft_trsm(g, a, b, flags) weft_trsm_at((g), (a), (b), (flags), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_trsm_at(weft_graph_t *g, weft_var_t *a, weft_var_t *b, unsigned flags,
                                  const char *file, int line);

/* Syrk(a) = alpha * a@a^T ((m,k) -> (m,m)), or alpha * a^T@a with trans
 * ((m,k) -> (k,k)); both triangles of the result are filled. */
#define weft_syrk(g, a, trans, alpha) weft_syrk_at((g), (a), (trans), (alpha), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_syrk_at(weft_graph_t *g, weft_var_t *a, bool trans, double alpha,
                                  const char *file, int line);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_LINALG_H */
