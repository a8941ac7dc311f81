/* weft-ops-bench: speed of op kernels against hardware references measured
 * in the same process, alternated, medians taken
 * (docs/performance-notes.md §1: figures drift 10-20% from minute to minute,
 * so only same-run comparisons mean much).
 *
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
 *   opsbench op=gemm n=1024 gflops=X ref=cblas ref_gflops=Y ratio=R
 *     The in-place Gemm op (z <- 1*z + 1*x@y, float64) through weft_eval
 *     against a direct cblas_dgemm with the same arguments, one BLAS thread
 *     each (weft's default for nodes).
 *
 * Usage: weft-ops-bench [add|gemm]... [--reps N]   (default: everything, 9 reps) */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <cblas.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "weft/weft.h"
/* The kernel context layout: this benchmark calls the op's perform directly,
 * as the compiled runtime does. */
#include "tensor/kernel_int.h"

#define ADD_N 10000000
#define GEMM_N 1024

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void die(const char *what, weft_status_t st, weft_graph_t *g)
{
    fprintf(stderr, "weft-ops-bench: %s: %s %s\n", what, weft_status_name(st),
            g ? weft_graph_last_error(g) : "");
    exit(1);
}

static void check(weft_status_t st, const char *what, weft_graph_t *g)
{
    if (st != WEFT_OK) {
        die(what, st, g);
    }
}

/* The one check of a graph's construction: its result, or the kept error. */
static void check_built(const weft_var_t *v, const char *what, weft_graph_t *g)
{
    if (!v) {
        fprintf(stderr, "weft-ops-bench: %s: %s\n", what, weft_graph_error_message(g));
        exit(1);
    }
}

static weft_tensor_t *filled(int nd, const int64_t *shape, double v)
{
    weft_tensor_t *t = NULL;
    check(weft_tensor_full(WEFT_FLOAT64, nd, shape, v, &t), "allocate", NULL);
    return t;
}

/* One timed call of weft_eval on out (the result is released at once). */
static double time_eval(weft_graph_t *g, size_t n_in, weft_var_t *const *in,
                        weft_tensor_t *const *vals, weft_var_t *out)
{
    weft_tensor_t *r = NULL;
    double t0 = now_s();
    check(weft_eval(g, n_in, in, vals, 1, &out, &r), "eval", g);
    double t = now_s() - t0;
    weft_tensor_release(r);
    return t;
}

/* One timed call of node's perform with its output cell kept (reused). */
static double time_perform(const weft_apply_t *node, weft_tensor_t *const *vals,
                           weft_tensor_t **cell, weft_graph_t *g)
{
    weft_kernel_ctx_t ctx;
    weft__kernel_ctx_init(&ctx, NULL, NULL, NULL, 0);
    double t0 = now_s();
    weft_status_t st = weft_op_class(weft_apply_op(node))->perform(node, vals, cell, &ctx);
    double t = now_s() - t0;
    if (st != WEFT_OK) {
        fprintf(stderr, "weft-ops-bench: perform: %s\n", weft_kernel_message(&ctx));
        die("perform", st, g);
    }
    return t;
}

/* Builds Add(a, b) (inplace: Add{inplace=0}) on two float64[n] inputs. */
static weft_var_t *build_add(weft_graph_t *g, weft_var_t *in[2], bool inplace)
{
    const int64_t shape[1] = {ADD_N};
    const weft_type_t *t = NULL;
    const weft_op_t *op = NULL;
    check(weft_type_tensor(g, WEFT_FLOAT64, 1, shape, &t), "type", g);
    check(weft_elemwise_op(g, WEFT_ELEMWISE_ADD, inplace ? 0 : -1, WEFT_FLOAT64, &op), "op", g);
    in[0] = weft_var_create(g, t, "a");
    in[1] = weft_var_create(g, t, "b");
    weft_var_t *out = weft_op_call(g, op, 2, in);
    check_built(out, "Add", g);
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
    check(weft_graph_create(NULL, &g), "graph", NULL);
    weft_var_t *out = build_add(g, in, inplace);
    weft_tensor_t *vals[2] = {filled(1, shape, 1.0), filled(1, shape, 2.0)};
    double *src = weft_tensor_data(vals[1]);
    double *dst = malloc((size_t)ADD_N * sizeof *dst);
    double *t_op = malloc((size_t)reps * sizeof *t_op), *t_cp = malloc((size_t)reps * sizeof *t_cp);
    if (!dst || !t_op || !t_cp) {
        die("out of memory", WEFT_ENOMEM, NULL);
    }
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
        double t0 = now_s();
        memcpy(dst, src, (size_t)ADD_N * sizeof *dst);
        t_cp[r] = now_s() - t0;
    }
    double bytes_op = 24.0 * ADD_N, bytes_cp = 2.0 * 8.0 * ADD_N;
    double gbps = bytes_op / median(t_op, reps) * 1e-9, ref = bytes_cp / median(t_cp, reps) * 1e-9;
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
    check(weft_graph_create(NULL, &g), "graph", NULL);
    check(weft_type_tensor(g, WEFT_FLOAT64, 2, shape, &t), "type", g);
    for (int i = 0; i < 3; i++) {
        in[i] = weft_var_create(g, t, NULL);
    }
    weft_var_t *a = weft_constant_scalar(g, WEFT_FLOAT64, 1.0);
    weft_var_t *b = weft_constant_scalar(g, WEFT_FLOAT64, 1.0);
    weft_var_t *out = weft_gemm(g, in[0], a, in[1], in[2], b, true);
    check_built(out, "Gemm", g);
    weft_tensor_t *vals[3] = {filled(2, shape, 0.0), filled(2, shape, 1e-3),
                              filled(2, shape, 2e-3)};
    weft_tensor_t *zref = filled(2, shape, 0.0);
    double *t_op = malloc((size_t)reps * sizeof *t_op);
    double *t_ref = malloc((size_t)reps * sizeof *t_ref);
    if (!t_op || !t_ref) {
        die("out of memory", WEFT_ENOMEM, NULL);
    }
    weft_blas_scope_t scope;
    check(weft_blas_scope_enter(&scope, 1), "blas threads", NULL); /* the reference: 1 thread too */
    time_eval(g, 3, in, vals, out);
    for (int r = 0; r < reps; r++) {
        t_op[r] = time_eval(g, 3, in, vals, out);
        double t0 = now_s();
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, GEMM_N, GEMM_N, GEMM_N, 1.0,
                    weft_tensor_data(vals[1]), GEMM_N, weft_tensor_data(vals[2]), GEMM_N, 1.0,
                    weft_tensor_data(zref), GEMM_N);
        t_ref[r] = now_s() - t0;
    }
    weft_blas_scope_exit(&scope);
    double flops = 2.0 * GEMM_N * (double)GEMM_N * GEMM_N;
    double gf = flops / median(t_op, reps) * 1e-9, ref = flops / median(t_ref, reps) * 1e-9;
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

int main(int argc, char **argv)
{
    int reps = 9;
    bool add = false, gemm = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "add") == 0) {
            add = true;
        } else if (strcmp(argv[i], "gemm") == 0) {
            gemm = true;
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: weft-ops-bench [add|gemm]... [--reps N]\n");
            return 2;
        }
    }
    if (reps < 1) {
        reps = 1;
    }
    if (!add && !gemm) {
        add = gemm = true;
    }
    if (add) {
        bench_add(reps, ADD_REUSED);
        bench_add(reps, ADD_INPLACE);
        bench_add(reps, ADD_FRESH);
    }
    if (gemm) {
        bench_gemm(reps);
    }
    return 0;
}
