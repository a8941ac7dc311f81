/* weft-ops-bench: speed of op kernels against hardware references and NumPy
 * measured in the same process, alternated, medians taken
 * (docs/performance-notes.md §1: figures drift 10-20% from minute to minute,
 * so only same-run comparisons mean much).
 *
 *   opsbench op=NAME n=N threads=T ms=X out_copy_ms=C gbps=G memcpy_gbps=M
 *            bw_ratio=R bound=memory|compute numpy_ms=Y vs_numpy=S agree=yes|no
 *     One row of the op table (ops_table.c) on N float64 elements: input a
 *     of shape (N/1000, 1000) or the row's fixed shape (softmax, solve,
 *     svd, take, concat8), uniform in [-1, 1) from a fixed seed, and for
 *     binary rows b of shape (a's columns,) broadcast against it, or for
 *     take 10^6 random int64 row indices of a (10^6, 16) (np.take(a, b,
 *     axis=0)); concat8 joins the 8 rows (1250000,) of a (8, 1250000)
 *     (np.concatenate(list(a))). X: median ms of a warm call
 *     of the row's compiled function (fast_run, on a pool of T workers,
 *     caller-supplied output tensor, which the producing node writes
 *     directly where it can: docs/execution.md §4.7). C: median ms of a
 *     copy of the result (weft_tensor_copy, one thread): what delivering it
 *     by a copy would add. G: the bytes the op must
 *     move (the row's reads + writes) / X. M: memcpy of a's bytes, counted
 *     twice (read + write), alternated with the calls. R = G / M; the issue
 *     17 target is R >= 0.8 on rows marked bound=memory only. Y: median ms of
 *     the row's NumPy expression on the same values (python3 with numpy in a
 *     child process, one thread, output array preallocated where the
 *     expression takes out=), timed after the weft calls. S = Y / X (>= 1:
 *     weft no slower than NumPy). agree: NumPy's result equals weft's within
 *     rtol = atol = 1e-9. Without a python3 that imports numpy: numpy_ms=na
 *     vs_numpy=na agree=na, the weft figures still printed.
 *   opsbench op=add n=N gbps=X ref=memcpy ref_gbps=Y ratio=R
 *     Add of two float64 arrays through the op's perform, 24 bytes per
 *     element (two reads, one write), against memcpy of the same bytes
 *     counted twice (read + write). op=add is the out-of-place Add with its
 *     output cell kept from call to call, as in a compiled function's steady
 *     state (the buffer pool hands the same buffer back), so the kernel
 *     writes into memory already touched; op=add_inplace is its in-place
 *     variant Add{inplace=0} (what the inplace rewrite runs). op=add_fresh is
 *     the out-of-place Add with an empty cell each call (a fresh 80 MB output
 *     and its first-touch page faults): what a runtime without buffer reuse
 *     would pay, shown for comparison.
 *   opsbench op=solve_ref n=512 ms=X ref=lapacke_dgesv ref_ms=Y ratio=R
 *     The compiled Solve against LAPACKE_dgesv on copies of the same a and
 *     b (solve_ref.c), one BLAS thread each; R = X / Y.
 *   opsbench op=gemm n=1024 gflops=X ref=cblas ref_gflops=Y ratio=R
 *     The in-place Gemm op (z <- 1*z + 1*x@y, float64) through weft_eval
 *     against a direct cblas_dgemm with the same arguments, one BLAS thread
 *     each (weft's default for nodes).
 *
 * Usage: weft-ops-bench [add|gemm|solve_ref|ROW]... [--reps R] [--threads T] [--n N]
 *   ROW: a row name (exp, add_bcast, sum, max, expm1, arctan2, logsumexp,
 *   cumsum, softmax, solve, svd, take, concat8). Default: every line, 9
 *   reps, T = weft_pool_default_threads(), N = 10^7 (rows only; a multiple
 *   of 1000). */
#define _POSIX_C_SOURCE 200809L /* SIGPIPE */

#include <cblas.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft/weft.h"
/* The kernel context layout: this benchmark calls the op's perform directly,
 * as the compiled runtime does. */
#include "tensor/kernel_int.h"

#include "opsbench.h"

#define ADD_N 10000000
#define GEMM_N 1024

static weft_tensor_t *filled(int nd, const int64_t *shape, double v)
{
    weft_tensor_t *t = NULL;
    ob_check(weft_tensor_full(WEFT_FLOAT64, nd, shape, v, &t), "allocate", NULL);
    return t;
}

/* One timed call of weft_eval on out (the result is released at once). */
static double time_eval(weft_graph_t *g, size_t n_in, weft_var_t *const *in,
                        weft_tensor_t *const *vals, weft_var_t *out)
{
    weft_tensor_t *r = NULL;
    double t0 = ob_now_s();
    ob_check(weft_eval(g, n_in, in, vals, 1, &out, &r), "eval", g);
    double t = ob_now_s() - t0;
    weft_tensor_release(r);
    return t;
}

/* One timed call of node's perform with its output cell kept (reused). */
static double time_perform(const weft_apply_t *node, weft_tensor_t *const *vals,
                           weft_tensor_t **cell, weft_graph_t *g)
{
    weft_kernel_ctx_t ctx;
    weft__kernel_ctx_init(&ctx, NULL, NULL, NULL, 0);
    double t0 = ob_now_s();
    weft_status_t st = weft_op_class(weft_apply_op(node))->perform(node, vals, cell, &ctx);
    double t = ob_now_s() - t0;
    if (st != WEFT_OK) {
        fprintf(stderr, "weft-ops-bench: perform: %s\n", weft_kernel_message(&ctx));
        ob_die("perform", st, g);
    }
    return t;
}

/* Builds Add(a, b) (inplace: Add{inplace=0}) on two float64[n] inputs. */
static weft_var_t *build_add(weft_graph_t *g, weft_var_t *in[2], bool inplace)
{
    const int64_t shape[1] = {ADD_N};
    const weft_type_t *t = NULL;
    const weft_op_t *op = NULL;
    ob_check(weft_type_tensor(g, WEFT_FLOAT64, 1, shape, &t), "type", g);
    ob_check(weft_elemwise_op(g, WEFT_ELEMWISE_ADD, inplace ? 0 : -1, WEFT_FLOAT64, &op), "op", g);
    in[0] = weft_var_create(g, t, "a");
    in[1] = weft_var_create(g, t, "b");
    weft_var_t *out = weft_op_call(g, op, 2, in);
    ob_check_built(out, "Add", g);
    return out;
}

typedef enum add_mode { ADD_REUSED, ADD_INPLACE, ADD_FRESH } add_mode_t;

static void bench_add(int reps, add_mode_t mode)
{
    bool inplace = mode == ADD_INPLACE;
    const char *names[] = {"add", "add_inplace", "add_fresh"};
    const int64_t shape[1] = {ADD_N};
    weft_graph_t *g = NULL;
    weft_var_t *in[2];
    ob_check(weft_graph_create(NULL, &g), "graph", NULL);
    weft_var_t *out = build_add(g, in, inplace);
    weft_tensor_t *vals[2] = {filled(1, shape, 1.0), filled(1, shape, 2.0)};
    double *src = weft_tensor_data(vals[1]);
    double *dst = ob_xmalloc((size_t)ADD_N * sizeof *dst);
    double *t_op = ob_xmalloc((size_t)reps * sizeof *t_op);
    double *t_cp = ob_xmalloc((size_t)reps * sizeof *t_cp);
    memset(dst, 0, (size_t)ADD_N * sizeof *dst);
    weft_tensor_t *cell = NULL;
    const weft_apply_t *node = weft_var_owner(out);
    time_perform(node, vals, &cell, g); /* warm-up: first touch of the output buffer */
    for (int r = 0; r < reps; r++) {
        if (mode == ADD_FRESH) {
            t_op[r] = time_eval(g, 2, in, vals, out);
        } else {
            t_op[r] = time_perform(node, vals, &cell, g);
        }
        double t0 = ob_now_s();
        memcpy(dst, src, (size_t)ADD_N * sizeof *dst);
        t_cp[r] = ob_now_s() - t0;
    }
    double bytes_op = 24.0 * ADD_N, bytes_cp = 2.0 * 8.0 * ADD_N;
    double gbps = bytes_op / ob_median(t_op, reps) * 1e-9;
    double ref = bytes_cp / ob_median(t_cp, reps) * 1e-9;
    printf("opsbench op=%s n=%d gbps=%.2f ref=memcpy ref_gbps=%.2f ratio=%.3f\n",
           names[mode], ADD_N, gbps, ref, gbps / ref);
    fflush(stdout);
    free(dst);
    free(t_op);
    free(t_cp);
    weft_tensor_release(cell);
    weft_tensor_release(vals[0]);
    weft_tensor_release(vals[1]);
    weft_graph_destroy(g);
}

static void bench_gemm(int reps)
{
    const int64_t shape[2] = {GEMM_N, GEMM_N};
    weft_graph_t *g = NULL;
    const weft_type_t *t = NULL;
    weft_var_t *in[3];
    ob_check(weft_graph_create(NULL, &g), "graph", NULL);
    ob_check(weft_type_tensor(g, WEFT_FLOAT64, 2, shape, &t), "type", g);
    for (int i = 0; i < 3; i++) {
        in[i] = weft_var_create(g, t, NULL);
    }
    weft_var_t *a = weft_constant_scalar(g, WEFT_FLOAT64, 1.0);
    weft_var_t *b = weft_constant_scalar(g, WEFT_FLOAT64, 1.0);
    weft_var_t *out = weft_gemm(g, in[0], a, in[1], in[2], b, true);
    ob_check_built(out, "Gemm", g);
    weft_tensor_t *vals[3] = {filled(2, shape, 0.0), filled(2, shape, 1e-3),
                              filled(2, shape, 2e-3)};
    weft_tensor_t *zref = filled(2, shape, 0.0);
    double *t_op = ob_xmalloc((size_t)reps * sizeof *t_op);
    double *t_ref = ob_xmalloc((size_t)reps * sizeof *t_ref);
    weft_blas_scope_t scope;
    /* the reference: 1 thread too */
    ob_check(weft_blas_scope_enter(&scope, 1), "blas threads", NULL);
    time_eval(g, 3, in, vals, out);
    for (int r = 0; r < reps; r++) {
        t_op[r] = time_eval(g, 3, in, vals, out);
        double t0 = ob_now_s();
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, GEMM_N, GEMM_N, GEMM_N, 1.0,
                    weft_tensor_data(vals[1]), GEMM_N, weft_tensor_data(vals[2]), GEMM_N, 1.0,
                    weft_tensor_data(zref), GEMM_N);
        t_ref[r] = ob_now_s() - t0;
    }
    weft_blas_scope_exit(&scope);
    double flops = 2.0 * GEMM_N * (double)GEMM_N * GEMM_N;
    double gf = flops / ob_median(t_op, reps) * 1e-9, ref = flops / ob_median(t_ref, reps) * 1e-9;
    printf("opsbench op=gemm n=%d gflops=%.2f ref=cblas ref_gflops=%.2f ratio=%.3f\n", GEMM_N, gf,
           ref, gf / ref);
    fflush(stdout);
    free(t_op);
    free(t_ref);
    for (int i = 0; i < 3; i++) {
        weft_tensor_release(vals[i]);
    }
    weft_tensor_release(zref);
    weft_graph_destroy(g);
}

typedef struct args {
    int reps;
    int threads;
    int64_t n;
    bool add, gemm, solve_ref, rows;
    const ob_row_t *only[32]; /* rows named on the command line */
    size_t n_only;
} args_t;

static bool parse_option(args_t *a, const char *opt, const char *val)
{
    if (!val) {
        return false;
    }
    if (strcmp(opt, "--reps") == 0) {
        a->reps = atoi(val);
    } else if (strcmp(opt, "--threads") == 0) {
        a->threads = atoi(val);
    } else if (strcmp(opt, "--n") == 0) {
        a->n = atoll(val);
    } else {
        return false;
    }
    return true;
}

static bool parse_word(args_t *a, const char *w)
{
    const ob_row_t *row = ob_row_find(w);
    if (strcmp(w, "add") == 0) {
        a->add = true;
    } else if (strcmp(w, "gemm") == 0) {
        a->gemm = true;
    } else if (strcmp(w, "solve_ref") == 0) {
        a->solve_ref = true;
    } else if (row && a->n_only < sizeof a->only / sizeof a->only[0]) {
        a->only[a->n_only++] = row;
    } else {
        return false;
    }
    return true;
}

static bool parse_args(args_t *a, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        bool ok = strncmp(argv[i], "--", 2) == 0 ? parse_option(a, argv[i], argv[i + 1]) && ++i
                                                 : parse_word(a, argv[i]);
        if (!ok) {
            return false;
        }
    }
    if (a->reps < 1) {
        a->reps = 1;
    }
    if (!a->add && !a->gemm && !a->solve_ref && a->n_only == 0) {
        a->add = a->gemm = a->solve_ref = a->rows = true;
    }
    return a->threads > 0 && a->n >= OB_COLS && a->n % OB_COLS == 0;
}

/* The op-table rows: named ones, or all of them in a run without words. */
static void run_rows(const args_t *a)
{
    size_t n_rows = a->n_only;
    const ob_row_t *all = a->rows ? ob_rows(&n_rows) : NULL;
    if (n_rows == 0) {
        return;
    }
    ob_config_t cfg = {a->n, a->reps, NULL, ob_numpy_start()};
    ob_check(weft_pool_create(a->threads, NULL, &cfg.pool), "pool", NULL);
    for (size_t i = 0; i < n_rows; i++) {
        ob_run_row(all ? &all[i] : a->only[i], &cfg);
    }
    ob_numpy_stop(cfg.numpy);
    ob_check(weft_pool_destroy(cfg.pool), "pool", NULL);
}

int main(int argc, char **argv)
{
    args_t a = {.reps = 9, .threads = weft_pool_default_threads(), .n = 10000000};
    if (!parse_args(&a, argc, argv)) {
        fprintf(stderr, "usage: weft-ops-bench [add|gemm|solve_ref|ROW]... [--reps R] [--threads T>0] "
                        "[--n N, a multiple of %d]\n  ROW:",
                OB_COLS);
        size_t n_rows;
        const ob_row_t *rows = ob_rows(&n_rows);
        for (size_t i = 0; i < n_rows; i++) {
            fprintf(stderr, " %s", rows[i].name);
        }
        fprintf(stderr, "\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN); /* a NumPy child that died is reported, not fatal */
    if (a.add) {
        bench_add(a.reps, ADD_REUSED);
        bench_add(a.reps, ADD_INPLACE);
        bench_add(a.reps, ADD_FRESH);
    }
    if (a.gemm) {
        bench_gemm(a.reps);
    }
    if (a.solve_ref) {
        ob_bench_solve_ref(a.reps);
    }
    run_rows(&a);
    return 0;
}
