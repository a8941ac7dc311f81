/* tile_cholesky demo: the test matrix, the compiled tile factorization (graph
 * of in-place tile ops, one mutable input per tile, accept_inplace), and the
 * references: LAPACKE_dpotrf, the residual and the two-core dgemm peak. */
#define _POSIX_C_SOURCE 200809L
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tile_cholesky_core.h"

struct chol_tiles {
    int n, nb, nt;           /* order, tile size, tiles per side */
    double **data;           /* lower tiles, index tri(i, j), row-major, dense */
    weft_tensor_t **tens;    /* views of data, the function's inputs */
    weft_function_t *fn;
};

static size_t tri(int i, int j)
{
    return (size_t)i * (size_t)(i + 1) / 2 + (size_t)j;
}

static int tile_len(const chol_tiles_t *t, int i)
{
    int rest = t->n - i * t->nb;
    return rest < t->nb ? rest : t->nb;
}

static size_t n_tiles(const chol_tiles_t *t)
{
    return tri(t->nt, 0);
}

/* ---- the matrix ------------------------------------------------------------------ */

static double uniform(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull); /* splitmix64 */
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return 2.0 * ((double)(z >> 11) * 0x1p-53) - 1.0;
}

weft_status_t chol_make_spd(int n, uint64_t seed, double **out)
{
    if (n < 1 || !out) return WEFT_EINVAL;
    double *a = malloc((size_t)n * (size_t)n * sizeof *a);
    if (!(*out = a)) return WEFT_ENOMEM;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < i; j++) a[(size_t)i * n + j] = a[(size_t)j * n + i] = uniform(&seed);
        a[(size_t)i * n + i] = n;
    }
    return WEFT_OK;
}

/* ---- building and compiling the graph ------------------------------------------------ */

typedef struct builder {
    weft_graph_t *g;
    const weft_op_t *potrf, *potrf_inv, *trmm, *syrk;
    weft_var_t *minus1, *one;
    weft_var_t **in, **cur, **tr; /* per tile: input, current value, transposed final value */
} builder_t;

#define CHECK(call)                                                                      \
    do {                                                                                 \
        weft_status_t s_ = (call);                                                       \
        if (s_ != WEFT_OK) {                                                             \
            fprintf(stderr, "tile_cholesky: %s: %s (%s)\n", #call, weft_status_name(s_), \
                    weft_graph_last_error(b->g));                                        \
            return s_;                                                                   \
        }                                                                                \
    } while (0)
static weft_status_t build_inputs(builder_t *b, const chol_tiles_t *t)
{
    CHECK(weft_op_create(b->g, &chol_potrf_class, NULL, &b->potrf));
    CHECK(weft_op_create(b->g, &chol_potrf_inv_class, NULL, &b->potrf_inv));
    CHECK(weft_op_create(b->g, &chol_trmm_class, NULL, &b->trmm));
    CHECK(weft_op_create(b->g, &chol_syrk_class, NULL, &b->syrk));
    b->minus1 = weft_constant_scalar(b->g, WEFT_FLOAT64, -1.0);
    b->one = weft_constant_scalar(b->g, WEFT_FLOAT64, 1.0);
    for (int i = 0; i < t->nt; i++) {
        for (int j = 0; j <= i; j++) {
            const weft_type_t *ty;
            int64_t shape[2] = {tile_len(t, i), tile_len(t, j)};
            char name[32];
            snprintf(name, sizeof name, "A%d_%d", i, j);
            CHECK(weft_type_tensor(b->g, WEFT_FLOAT64, 2, shape, &ty));
            b->in[tri(i, j)] = weft_var_create(b->g, ty, name);
            b->cur[tri(i, j)] = b->in[tri(i, j)];
        }
    }
    return WEFT_OK;
}

/* Step k's trailing update: syrk on the diagonal tiles, gemm below them. */
static void build_update(builder_t *b, int nt, int k)
{
    for (int i = k + 1; i < nt; i++) {
        weft_var_t *si[2] = {b->cur[tri(i, i)], b->cur[tri(i, k)]};
        b->cur[tri(i, i)] = weft_op_call(b->g, b->syrk, 2, si);
        for (int j = k + 1; j < i; j++) {
            weft_var_t **c = &b->cur[tri(i, j)];
            *c = weft_gemm(b->g, *c, b->minus1, b->cur[tri(i, k)], b->tr[tri(j, k)], b->one, true);
        }
    }
}

/* The factorization's nodes; a construction error is kept on b->g and
 * reported once, here. */
static weft_status_t build_steps(builder_t *b, int nt)
{
    for (int k = 0; k < nt; k++) {
        weft_var_t *akk = b->cur[tri(k, k)];
        bool panel = k + 1 < nt;
        weft_apply_t *fac = weft_apply_create(b->g, panel ? b->potrf_inv : b->potrf, 1, &akk);
        b->cur[tri(k, k)] = fac ? weft_apply_output(fac, 0) : NULL;
        weft_var_t *inv = panel && fac ? weft_apply_output(fac, 1) : NULL;
        for (int i = k + 1; i < nt; i++) {
            weft_var_t *ti[2] = {inv, b->cur[tri(i, k)]};
            b->cur[tri(i, k)] = weft_op_call(b->g, b->trmm, 2, ti);
            if (i + 1 < nt) b->tr[tri(i, k)] = weft_transpose(b->g, b->cur[tri(i, k)]);
        }
        build_update(b, nt, k);
    }
    if (weft_graph_error(b->g) == WEFT_OK) return WEFT_OK;
    fprintf(stderr, "tile_cholesky: %s\n", weft_graph_error_message(b->g));
    return weft_graph_error(b->g);
}

static weft_status_t compile_tiles(chol_tiles_t *t, builder_t *b, weft_pool_t *pool)
{
    size_t nv = n_tiles(t);
    weft_update_t *upd = malloc(nv * sizeof *upd);
    if (!upd) return WEFT_ENOMEM;
    for (size_t v = 0; v < nv; v++) upd[v] = (weft_update_t){b->in[v], b->cur[v]};
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.pool = pool;
    o.accept_inplace = true;
    o.name = "tile_cholesky";
    o.node_threads = 1; /* ample tile parallelism: splitting a tile op only costs */
    weft_status_t st = weft_function_compile(nv, b->in, 0, NULL, nv, upd, &o, &t->fn);
    if (st != WEFT_OK)
        fprintf(stderr, "tile_cholesky: compile: %s (%s)\n", weft_status_name(st),
                weft_function_last_error(NULL));
    free(upd);
    return st;
}

static weft_status_t build_and_compile(chol_tiles_t *t, weft_pool_t *pool)
{
    size_t nv = n_tiles(t);
    builder_t b;
    memset(&b, 0, sizeof b);
    b.in = calloc(nv, sizeof *b.in);
    b.cur = calloc(nv, sizeof *b.cur);
    b.tr = calloc(nv, sizeof *b.tr);
    weft_status_t st = b.in && b.cur && b.tr ? weft_graph_create(NULL, &b.g) : WEFT_ENOMEM;
    if (st == WEFT_OK) st = build_inputs(&b, t);
    if (st == WEFT_OK) st = build_steps(&b, t->nt);
    if (st == WEFT_OK) st = compile_tiles(t, &b, pool);
    weft_graph_destroy(b.g);
    free(b.in);
    free(b.cur);
    free(b.tr);
    return st;
}

/* ---- the tiles object ------------------------------------------------------------- */

static weft_status_t alloc_tiles(chol_tiles_t *t)
{
    size_t nv = n_tiles(t);
    if (!(t->data = calloc(nv, sizeof *t->data)) || !(t->tens = calloc(nv, sizeof *t->tens)))
        return WEFT_ENOMEM;
    for (int i = 0; i < t->nt; i++) {
        for (int j = 0; j <= i; j++) {
            int64_t shape[2] = {tile_len(t, i), tile_len(t, j)};
            size_t v = tri(i, j), bytes = (size_t)(shape[0] * shape[1]) * sizeof(double);
            if (!(t->data[v] = aligned_alloc(64, (bytes + 63) / 64 * 64))) return WEFT_ENOMEM;
            weft_status_t st = weft_tensor_from_data(WEFT_FLOAT64, 2, shape, NULL, t->data[v],
                                                     &t->tens[v]);
            if (st != WEFT_OK) return st;
        }
    }
    return WEFT_OK;
}

weft_status_t chol_tiles_create(int n, int nb, weft_pool_t *pool, chol_tiles_t **out)
{
    if (out) *out = NULL;
    if (!out || !pool || n < 1 || nb < 1) return WEFT_EINVAL;
    chol_tiles_t *t = calloc(1, sizeof *t);
    if (!t) return WEFT_ENOMEM;
    t->n = n;
    t->nb = nb < n ? nb : n;
    t->nt = (n + t->nb - 1) / t->nb;
    weft_status_t st = alloc_tiles(t);
    if (st == WEFT_OK) st = build_and_compile(t, pool);
    if (st != WEFT_OK) {
        chol_tiles_destroy(t);
        return st;
    }
    *out = t;
    return WEFT_OK;
}

void chol_tiles_destroy(chol_tiles_t *t)
{
    if (!t) return;
    weft_function_destroy(t->fn);
    for (size_t v = 0; t->data && v < n_tiles(t); v++) {
        if (t->tens) weft_tensor_release(t->tens[v]);
        free(t->data[v]);
    }
    free(t->data);
    free(t->tens);
    free(t);
}

void chol_tiles_load(chol_tiles_t *t, const double *a)
{
    for (int i = 0; i < t->nt; i++)
        for (int j = 0; j <= i; j++) {
            int r = tile_len(t, i), c = tile_len(t, j);
            double *d = t->data[tri(i, j)];
            const double *s = a + (size_t)i * t->nb * t->n + (size_t)j * t->nb;
            for (int x = 0; x < r; x++)
                memcpy(d + (size_t)x * c, s + (size_t)x * t->n, (size_t)c * sizeof *d);
        }
}

void chol_tiles_store(const chol_tiles_t *t, double *l)
{
    for (int i = 0; i < t->nt; i++)
        for (int j = 0; j < t->nt; j++) {
            int r = tile_len(t, i), c = tile_len(t, j);
            const double *s = j <= i ? t->data[tri(i, j)] : NULL;
            double *d = l + (size_t)i * t->nb * t->n + (size_t)j * t->nb;
            for (int x = 0; x < r; x++)
                for (int y = 0; y < c; y++) /* zero above the diagonal */
                    d[(size_t)x * t->n + y] = s && (j < i || y <= x) ? s[(size_t)x * c + y] : 0.0;
        }
}

weft_status_t chol_tiles_run(chol_tiles_t *t)
{
    size_t nv = n_tiles(t);
    weft_status_t st = weft_function_call(t->fn, nv, t->tens, 0, NULL);
    if (st != WEFT_OK)
        fprintf(stderr, "tile_cholesky: call: %s (%s)\n", weft_status_name(st),
                weft_function_last_error(t->fn));
    return st;
}

weft_function_t *chol_tiles_function(const chol_tiles_t *t)
{
    return t ? t->fn : NULL;
}

/* ---- references ---------------------------------------------------------------------- */

int chol_lapacke(double *a, int n, int threads)
{
    weft_blas_scope_t scope;
    if (weft_blas_scope_enter(&scope, threads) != WEFT_OK) return -1000;
    /* The row-major lower triangle is the column-major upper one: factoring
     * it column-major as U^T U gives L = U^T in place, without the two n^2
     * transposition copies LAPACKE's row-major path makes. */
    int info = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'U', n, a, n);
    weft_blas_scope_exit(&scope);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) a[(size_t)i * n + j] = 0.0;
    return info;
}

double chol_residual(const double *a, const double *l, int n, int threads)
{
    double *c = malloc((size_t)n * (size_t)n * sizeof *c);
    weft_blas_scope_t scope;
    if (!c || weft_blas_scope_enter(&scope, threads) != WEFT_OK) {
        free(c);
        return NAN;
    }
    cblas_dsyrk(CblasRowMajor, CblasLower, CblasNoTrans, n, n, 1.0, l, n, 0.0, c, n);
    weft_blas_scope_exit(&scope);
    double num = 0.0, den = 0.0; /* the lower triangle, off-diagonal entries twice */
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++) {
            double w = i == j ? 1.0 : 2.0, x = a[(size_t)i * n + j];
            double d = x - c[(size_t)i * n + j];
            num += w * d * d;
            den += w * x * x;
        }
    free(c);
    return sqrt(num / den);
}

double chol_max_diff(const double *x, const double *y, int n)
{
    double m = 0.0;
    for (size_t i = 0; i < (size_t)n * (size_t)n; i++) m = fmax(m, fabs(x[i] - y[i]));
    return m;
}

/* ---- the dgemm peak ---------------------------------------------------------------------- */

typedef struct gemm_job {
    int m;
    double *a, *b, *c;
} gemm_job_t;

static void *gemm_thread(void *arg)
{
    gemm_job_t *j = arg;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, j->m, j->m, j->m, 1.0, j->a, j->m,
                j->b, j->m, 0.0, j->c, j->m);
    return NULL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Seconds for two concurrent dgemms (NaN on failure). */
static double two_gemms(gemm_job_t *jobs)
{
    pthread_t th[2];
    double t0 = now_s();
    if (pthread_create(&th[0], NULL, gemm_thread, &jobs[0]) != 0) return NAN;
    if (pthread_create(&th[1], NULL, gemm_thread, &jobs[1]) != 0) {
        pthread_join(th[0], NULL);
        return NAN;
    }
    pthread_join(th[0], NULL);
    pthread_join(th[1], NULL);
    return now_s() - t0;
}

double chol_dgemm_peak(int m, int reps)
{
    gemm_job_t jobs[2];
    size_t n2 = (size_t)m * (size_t)m;
    double *mem = malloc(6 * n2 * sizeof *mem), best = INFINITY;
    weft_blas_scope_t scope;
    if (!mem || weft_blas_scope_enter(&scope, 1) != WEFT_OK) {
        free(mem);
        return NAN;
    }
    uint64_t s = 7;
    for (size_t i = 0; i < 6 * n2; i++) mem[i] = uniform(&s);
    for (int k = 0; k < 2; k++) jobs[k] = (gemm_job_t){m, mem + 3 * k * n2, mem + (3 * k + 1) * n2,
                                                       mem + (3 * k + 2) * n2};
    for (int r = 0; r < reps; r++) best = fmin(best, two_gemms(jobs));
    weft_blas_scope_exit(&scope);
    free(mem);
    return 2.0 * 2.0 * (double)m * (double)m * (double)m / best * 1e-9;
}
