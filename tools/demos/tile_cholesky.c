/* tile_cholesky: factors an SPD matrix with a weft graph of in-place tile ops
 * (tile_cholesky_core.h) and with LAPACKE_dpotrf, alternately in one process,
 * both on T threads (weft: a pool of T workers, one-thread BLAS inside nodes;
 * LAPACKE: OpenBLAS with T threads), and prints per order n
 *
 *   cholesky impl=weft n=N nb=NB threads=T gflops=X residual=R diff_vs_lapacke=D
 *            weft_over_lapacke=S of_peak=P
 *   cholesky impl=lapacke n=N nb=0 threads=T gflops=X residual=R
 *
 * (one line each; gflops: n^3/3 flops over the median time of the reps;
 * residual: ||A - L L^T||_F / ||A||_F; diff_vs_lapacke: max |L_weft -
 * L_lapacke|; weft_over_lapacke: the GFLOP/s ratio; of_peak: weft's GFLOP/s
 * over the dgemm peak; LAPACKE has no tile size: nb=0), then
 *
 *   cholesky impl=dgemm_peak n=M threads=2 gflops=X
 *
 * GFLOP/s of two concurrent one-thread dgemms of order M (the best of 3): the
 * practical peak of two cores. The input tiles / matrix are restored from a
 * saved copy before every factorization, outside the timed region.
 * No arguments: n = 2048 and 4096, nb 256, T = 2, 5 reps, every line. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tile_cholesky_core.h"

typedef struct opts {
    int n, nb, threads, reps;
    unsigned long long seed;
} opts_t;

typedef struct result {
    double weft_gflops, lapacke_gflops, weft_res, lapacke_res, diff;
} result_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
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

static void usage(void)
{
    printf("usage: tile_cholesky [--n N] [--nb NB] [--threads T] [--reps R] [--seed S]\n"
           "Factors an SPD matrix with a weft graph of in-place tile ops and with\n"
           "LAPACKE_dpotrf (alternated, R times each), checks both and prints GFLOP/s.\n"
           "Defaults: n 2048 and 4096, nb 256, threads 2, reps 5, seed 1.\n");
}

static int parse(int argc, char **argv, opts_t *o)
{
    *o = (opts_t){0, 256, 2, 5, 1};
    for (int i = 1; i < argc; i += 2) { /* option, value */
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) return usage(), 1;
        if (!v) return fprintf(stderr, "tile_cholesky: %s needs a value\n", a), 2;
        if (!strcmp(a, "--n")) o->n = atoi(v);
        else if (!strcmp(a, "--nb")) o->nb = atoi(v);
        else if (!strcmp(a, "--threads")) o->threads = atoi(v);
        else if (!strcmp(a, "--reps")) o->reps = atoi(v);
        else if (!strcmp(a, "--seed")) o->seed = strtoull(v, NULL, 10);
        else return fprintf(stderr, "tile_cholesky: unknown option %s (try --help)\n", a), 2;
    }
    if (o->n < 0 || o->nb < 1 || o->threads < 1 || o->threads > 256 || o->reps < 1)
        return fprintf(stderr, "tile_cholesky: bad option value\n"), 2;
    return 0;
}

/* One timed weft factorization (tiles restored from a first) and one timed
 * LAPACKE factorization (l restored from a first). */
static int one_rep(chol_tiles_t *t, const double *a, double *l, int n, int threads, double *tw,
                   double *tl)
{
    chol_tiles_load(t, a);
    double t0 = now_s();
    if (chol_tiles_run(t) != WEFT_OK) return 1;
    *tw = now_s() - t0;
    memcpy(l, a, (size_t)n * (size_t)n * sizeof *l);
    t0 = now_s();
    int info = chol_lapacke(l, n, threads);
    *tl = now_s() - t0;
    if (info != 0) return fprintf(stderr, "tile_cholesky: dpotrf info %d\n", info), 1;
    return 0;
}

/* Residuals of both factors and their difference (after a rep: l holds
 * LAPACKE's factor, the tiles weft's). */
static int check(const chol_tiles_t *t, const double *a, const double *l, int n, int threads,
                 result_t *r)
{
    double *lw = malloc((size_t)n * (size_t)n * sizeof *lw);
    if (!lw) return 1;
    chol_tiles_store(t, lw);
    r->weft_res = chol_residual(a, lw, n, threads);
    r->lapacke_res = chol_residual(a, l, n, threads);
    r->diff = chol_max_diff(lw, l, n);
    free(lw);
    return 0;
}

static int measure(chol_tiles_t *t, const double *a, int n, const opts_t *o, result_t *r)
{
    double *l = malloc((size_t)n * (size_t)n * sizeof *l);
    double *tw = calloc((size_t)o->reps, sizeof *tw), *tl = calloc((size_t)o->reps, sizeof *tl);
    int rc = !l || !tw || !tl;
    for (int k = 0; !rc && k < o->reps; k++) rc = one_rep(t, a, l, n, o->threads, &tw[k], &tl[k]);
    if (!rc) rc = check(t, a, l, n, o->threads, r);
    if (!rc) {
        double flops = (double)n * (double)n * (double)n / 3.0;
        r->weft_gflops = flops / median(tw, o->reps) * 1e-9;
        r->lapacke_gflops = flops / median(tl, o->reps) * 1e-9;
    }
    free(l);
    free(tw);
    free(tl);
    return rc;
}

static int run_n(const opts_t *o, int n, weft_pool_t *pool, double peak)
{
    double *a = NULL;
    chol_tiles_t *t = NULL;
    result_t r;
    int rc = chol_make_spd(n, o->seed, &a) != WEFT_OK || chol_tiles_create(n, o->nb, pool, &t);
    if (!rc) rc = measure(t, a, n, o, &r);
    if (!rc) {
        printf("cholesky impl=weft n=%d nb=%d threads=%d gflops=%.2f residual=%.3g "
               "diff_vs_lapacke=%.3g weft_over_lapacke=%.3f of_peak=%.3f\n", n,
               o->nb < n ? o->nb : n, o->threads, r.weft_gflops, r.weft_res, r.diff,
               r.weft_gflops / r.lapacke_gflops, r.weft_gflops / peak);
        printf("cholesky impl=lapacke n=%d nb=0 threads=%d gflops=%.2f residual=%.3g\n", n,
               o->threads, r.lapacke_gflops, r.lapacke_res);
        fflush(stdout);
    }
    chol_tiles_destroy(t);
    free(a);
    return rc;
}

int main(int argc, char **argv)
{
    opts_t o;
    int rc = parse(argc, argv, &o);
    if (rc) return rc == 1 ? 0 : rc;
    if (weft_blas_check() != WEFT_OK) {
        fprintf(stderr, "tile_cholesky: the serial OpenBLAS build is not supported\n");
        return 1;
    }
    int ns[2] = {2048, 4096}, count = o.n ? 1 : 2;
    if (o.n) ns[0] = o.n;
    int peak_m = ns[0] < 2048 ? ns[0] : 2048;
    double peak = chol_dgemm_peak(peak_m, 3);
    weft_pool_t *pool = NULL;
    if (weft_pool_create(o.threads, NULL, &pool) != WEFT_OK) return 1;
    for (int i = 0; !rc && i < count; i++) rc = run_n(&o, ns[i], pool, peak);
    if (!rc) printf("cholesky impl=dgemm_peak n=%d threads=2 gflops=%.2f\n", peak_m, peak);
    weft_pool_destroy(pool);
    return rc ? 1 : 0;
}
