/* weft-ops-bench's solve line (opsbench.h): the compiled Solve op against
 * LAPACKE_dgesv called directly on the same a (512 x 512) and b (512,). */
#include <lapacke.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opsbench.h"

#define SOLVE_N 512

/* Diagonally dominant a, so the solve is well conditioned; b = 1..n / n. */
static void fill(weft_tensor_t *a, weft_tensor_t *b)
{
    double *pa = weft_tensor_data(a), *pb = weft_tensor_data(b);
    for (int i = 0; i < SOLVE_N; i++) {
        for (int j = 0; j < SOLVE_N; j++) {
            pa[i * SOLVE_N + j] = i == j ? SOLVE_N : 1.0 / (1.0 + i + 2.0 * j);
        }
        pb[i] = (double)(i + 1) / SOLVE_N;
    }
}

static weft_function_t *compile_solve(weft_pool_t *pool)
{
    const int64_t sa[2] = {SOLVE_N, SOLVE_N}, sb[1] = {SOLVE_N};
    weft_graph_t *g = NULL;
    const weft_type_t *ta = NULL, *tb = NULL;
    ob_check(weft_graph_create(NULL, &g), "graph", NULL);
    ob_check(weft_type_tensor(g, WEFT_FLOAT64, 2, sa, &ta), "type", g);
    ob_check(weft_type_tensor(g, WEFT_FLOAT64, 1, sb, &tb), "type", g);
    weft_var_t *in[2] = {weft_var_create(g, ta, "a"), weft_var_create(g, tb, "b")};
    weft_var_t *x = weft_solve(g, in[0], in[1]);
    ob_check_built(x, "Solve", g);
    weft_function_options_t opts = WEFT_FUNCTION_OPTIONS_INIT;
    opts.pool = pool;
    weft_function_t *f = NULL;
    ob_check(weft_function_compile(2, in, 1, &x, 0, NULL, &opts, &f), "compile", g);
    weft_graph_destroy(g);
    return f;
}

/* dgesv overwrites a with its LU factors and b with x: fresh copies each time
 * (what weft's kernel does too), timed with the call. */
static double time_dgesv(const double *a, const double *b, double *wa, double *wb,
                         lapack_int *ipiv)
{
    double t0 = ob_now_s();
    memcpy(wa, a, sizeof(double) * SOLVE_N * SOLVE_N);
    memcpy(wb, b, sizeof(double) * SOLVE_N);
    lapack_int info = LAPACKE_dgesv(LAPACK_ROW_MAJOR, SOLVE_N, 1, wa, SOLVE_N, ipiv, wb, 1);
    double t = ob_now_s() - t0;
    if (info != 0) {
        fprintf(stderr, "weft-ops-bench: dgesv failed (info %d)\n", (int)info);
        exit(1);
    }
    return t;
}

void ob_bench_solve_ref(int reps)
{
    const int64_t sa[2] = {SOLVE_N, SOLVE_N}, sb[1] = {SOLVE_N};
    weft_tensor_t *in[2] = {NULL, NULL}, *x = NULL;
    ob_check(weft_tensor_empty(WEFT_FLOAT64, 2, sa, &in[0]), "allocate", NULL);
    ob_check(weft_tensor_empty(WEFT_FLOAT64, 1, sb, &in[1]), "allocate", NULL);
    ob_check(weft_tensor_empty(WEFT_FLOAT64, 1, sb, &x), "allocate", NULL);
    fill(in[0], in[1]);
    weft_pool_t *pool = NULL;
    ob_check(weft_pool_create(1, NULL, &pool), "pool", NULL);
    weft_function_t *f = compile_solve(pool);
    double *wa = ob_xmalloc(sizeof(double) * SOLVE_N * SOLVE_N);
    double *wb = ob_xmalloc(sizeof(double) * SOLVE_N);
    lapack_int *ipiv = ob_xmalloc(sizeof(lapack_int) * SOLVE_N);
    double *t_op = ob_xmalloc((size_t)reps * sizeof *t_op);
    double *t_ref = ob_xmalloc((size_t)reps * sizeof *t_ref);
    weft_blas_scope_t scope; /* the reference with one BLAS thread, as weft's node */
    ob_check(weft_blas_scope_enter(&scope, 1), "blas threads", NULL);
    for (int r = -1; r < reps; r++) { /* r = -1: warm-up */
        double t0 = ob_now_s();
        ob_check(weft_function_call(f, 2, in, 1, &x), "call", NULL);
        double t = ob_now_s() - t0;
        double tr = time_dgesv(weft_tensor_data(in[0]), weft_tensor_data(in[1]), wa, wb, ipiv);
        if (r >= 0) {
            t_op[r] = t;
            t_ref[r] = tr;
        }
    }
    weft_blas_scope_exit(&scope);
    double ms = 1e3 * ob_median(t_op, reps), ref = 1e3 * ob_median(t_ref, reps);
    printf("opsbench op=solve_ref n=%d ms=%.3f ref=lapacke_dgesv ref_ms=%.3f ratio=%.3f\n",
           SOLVE_N, ms, ref, ms / ref);
    fflush(stdout);
    free(wa);
    free(wb);
    free(ipiv);
    free(t_op);
    free(t_ref);
    ob_check(weft_function_destroy(f), "destroy", NULL);
    ob_check(weft_pool_destroy(pool), "pool", NULL);
    weft_tensor_release(in[0]);
    weft_tensor_release(in[1]);
    weft_tensor_release(x);
}
