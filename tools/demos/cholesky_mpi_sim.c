/* cholesky_mpi_sim: predicts the run time of tile_cholesky_mpi's partitioned
 * DAG at 2 to 1024 ranks by simulation (docs/distributed.md §9). It builds
 * the same tile DAG (potrf, trtri, trmm, syrk, gemm in creation order), places
 * each task where its output tile lives (2-D block-cyclic, the demo's grid),
 * and replays it: one worker per rank taking the task that became ready
 * first (creation order on ties), each task costing the median time of its kernel on an nb x nb tile
 * measured here (one-thread OpenBLAS/LAPACK), and every value needed on
 * another rank sent once per (value, rank) over a link of latency L and
 * bandwidth B, one message at a time per sender. It prints
 *
 *   sim_kernel name=K nb=NB us=T source=S               (per kernel)
 *   sim_cholesky n=N nb=NB ranks=P predicted_s=T gflops=G scalapack_model_s=S
 *
 * with scalapack_model_s the model of docs/distributed.md §9 for pdpotrf.
 * Options: --n N (repeatable; default 4096 and 65536), --nb NB (256),
 * --ranks P (repeatable; default 2 3 4 8 16 64 256 1024), --latency-us L
 * (1.5), --gbps B (10, GB/s), --calib-reps R (5), --profile PATH.
 *
 * --profile PATH: the node costs are those weft's profiler measured (source=
 * profile): PATH is a profile JSON (weft_profile_write_json, e.g. written by
 * tile_cholesky_mpi --profile-json with the same nb), and each kernel costs
 * its op class's mean time per node call there (TilePotrf, TileTrtri,
 * TileTrmm, TileSyrk, Gemm). Without it the kernels are timed here
 * (source=timed). */
#define _POSIX_C_SOURCE 200809L
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "demo_median.h"

enum { K_POTRF, K_TRTRI, K_TRMM, K_SYRK, K_GEMM, K_N };
static const char *const kname[K_N] = {"potrf", "trtri", "trmm", "syrk", "gemm"};

typedef struct task {
    uint8_t kind;
    int32_t rank;
    int32_t in[3]; /* producer tasks, -1: an input tile */
    double ready;  /* when every input is on this rank */
    int32_t pending;
} task_t;

typedef struct sim {
    int nt, p, q, ranks;
    double cost[K_N], lat, bw, tile_bytes;
    task_t *t;
    int32_t n;
    int32_t *succ_off, *succ; /* consumers of each task */
    int32_t *stamp;           /* per rank: the last producer that sent to it */
    double *arrival;          /* per rank: when that producer's value arrived */
} sim_t;

/* ---- kernel costs ------------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void spd_tile(double *a, int nb)
{
    for (int i = 0; i < nb; i++)
        for (int j = 0; j < nb; j++) a[i * nb + j] = i == j ? nb : 0.5 / (1 + abs(i - j));
}

static double time_kernel(int k, int nb, int reps)
{
    size_t sz = (size_t)nb * nb;
    double *a = malloc(sz * sizeof *a), *b = malloc(sz * sizeof *b), *c = malloc(sz * sizeof *c);
    double *t = malloc((size_t)reps * sizeof *t);
    for (int r = 0; r < reps; r++) {
        spd_tile(a, nb);
        spd_tile(b, nb);
        spd_tile(c, nb);
        LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', nb, b, nb); /* a factor for trtri/trmm */
        double t0 = now_s();
        switch (k) {
        case K_POTRF: LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', nb, a, nb); break;
        case K_TRTRI: LAPACKE_dtrtri(LAPACK_ROW_MAJOR, 'L', 'N', nb, b, nb); break;
        case K_TRMM:
            cblas_dtrmm(CblasRowMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, nb, nb,
                        1.0, b, nb, a, nb);
            break;
        case K_SYRK:
            cblas_dsyrk(CblasRowMajor, CblasLower, CblasNoTrans, nb, nb, -1.0, a, nb, 1.0, c, nb);
            break;
        default:
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nb, nb, nb, -1.0, a, nb, b, nb,
                        1.0, c, nb);
        }
        t[r] = now_s() - t0;
    }
    double m = demo_median(t, reps);
    free(a);
    free(b);
    free(c);
    free(t);
    return m;
}

/* ---- node costs from a profile JSON ---- */

static const char *const kclass[K_N] = {"TilePotrf", "TileTrtri", "TileTrmm", "TileSyrk", "Gemm"};

static char *slurp(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n, fp)) > 0;) {
        n += got;
        char *nb = n == cap ? realloc(buf, (cap *= 2) + 1) : buf;
        if (!nb) free(buf);
        buf = nb;
    }
    fclose(fp);
    if (buf) buf[n] = '\0';
    return buf;
}

/* The "classes" rows: {"name": "C", "time_ns": T, "percent": P, "calls": N, ...}. */
static int profile_costs(const char *path, double *cost)
{
    char *text = slurp(path), *at = text ? strstr(text, "\"classes\": [") : NULL;
    int found = 0;
    for (char *row = at; row && (row = strstr(row, "{\"name\": \"")) != NULL; row++) {
        char name[64];
        unsigned long long t_ns, calls;
        double pct;
        if (sscanf(row, "{\"name\": \"%63[^\"]\", \"time_ns\": %llu, \"percent\": %lf, "
                        "\"calls\": %llu", name, &t_ns, &pct, &calls) != 4)
            break; /* past the classes */
        for (int k = 0; k < K_N; k++)
            if (!strcmp(name, kclass[k]) && calls) {
                cost[k] = 1e-9 * (double)t_ns / (double)calls;
                found |= 1 << k;
            }
    }
    free(text);
    for (int k = 0; k < K_N; k++)
        if (!(found & (1 << k))) {
            fprintf(stderr, "cholesky_mpi_sim: %s: no %s row in the profile's classes\n", path,
                    kclass[k]);
            return -1;
        }
    return 0;
}

/* ---- the DAG ------------------------------------------------------------------------------ */

static size_t tri(int i, int j)
{
    return (size_t)i * (size_t)(i + 1) / 2 + (size_t)j;
}

static int32_t add_task(sim_t *s, int kind, int i, int j, int32_t a, int32_t b, int32_t c)
{
    task_t *t = &s->t[s->n];
    *t = (task_t){(uint8_t)kind, (i % s->p) * s->q + (j % s->q), {a, b, c}, 0.0, 0};
    return s->n++;
}

/* Tasks in the demo's creation order; last[] holds each tile's last writer. */
static void build_dag(sim_t *s)
{
    int nt = s->nt;
    size_t ntiles = tri(nt, 0), cap = (size_t)nt * nt * nt / 6 + 4 * (size_t)nt * nt + 16;
    int32_t *last = malloc(ntiles * sizeof *last);
    for (size_t v = 0; v < ntiles; v++) last[v] = -1;
    s->t = malloc(cap * sizeof *s->t);
    s->n = 0;
    for (int k = 0; k < nt; k++) {
        int32_t pk = last[tri(k, k)] = add_task(s, K_POTRF, k, k, last[tri(k, k)], -1, -1);
        int32_t inv = k + 1 < nt ? add_task(s, K_TRTRI, k, k, pk, -1, -1) : -1;
        for (int i = k + 1; i < nt; i++)
            last[tri(i, k)] = add_task(s, K_TRMM, i, k, inv, last[tri(i, k)], -1);
        for (int i = k + 1; i < nt; i++) {
            last[tri(i, i)] = add_task(s, K_SYRK, i, i, last[tri(i, i)], last[tri(i, k)], -1);
            for (int j = k + 1; j < i; j++)
                last[tri(i, j)] = add_task(s, K_GEMM, i, j, last[tri(i, j)], last[tri(i, k)],
                                           last[tri(j, k)]);
        }
    }
    free(last);
    /* consumers (CSR) */
    s->succ_off = calloc((size_t)s->n + 1, sizeof *s->succ_off);
    for (int32_t u = 0; u < s->n; u++)
        for (int e = 0; e < 3; e++)
            if (s->t[u].in[e] >= 0) s->succ_off[s->t[u].in[e] + 1]++;
    for (int32_t u = 0; u < s->n; u++) s->succ_off[u + 1] += s->succ_off[u];
    s->succ = malloc(((size_t)s->succ_off[s->n] + 1) * sizeof *s->succ);
    int32_t *fill = calloc((size_t)s->n + 1, sizeof *fill);
    for (int32_t u = 0; u < s->n; u++)
        for (int e = 0; e < 3; e++) {
            int32_t v = s->t[u].in[e];
            if (v >= 0) s->succ[s->succ_off[v] + fill[v]++] = u;
        }
    free(fill);
}

/* ---- the replay --------------------------------------------------------------------------- */

/* A binary min-heap of (time, task) pairs. */
typedef struct heap {
    double *key;
    int32_t *val;
    size_t n, cap;
} heap_t;

static void heap_push(heap_t *h, double key, int32_t val)
{
    if (h->n == h->cap) {
        h->cap = h->cap ? 2 * h->cap : 64;
        h->key = realloc(h->key, h->cap * sizeof *h->key);
        h->val = realloc(h->val, h->cap * sizeof *h->val);
    }
    size_t i = h->n++;
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (h->key[up] < key || (h->key[up] == key && h->val[up] <= val)) break;
        h->key[i] = h->key[up];
        h->val[i] = h->val[up];
        i = up;
    }
    h->key[i] = key;
    h->val[i] = val;
}

static void heap_pop(heap_t *h)
{
    double key = h->key[--h->n];
    int32_t val = h->val[h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && (h->key[c + 1] < h->key[c] ||
                             (h->key[c + 1] == h->key[c] && h->val[c + 1] < h->val[c])))
            c++;
        if (key < h->key[c] || (key == h->key[c] && val <= h->val[c])) break;
        h->key[i] = h->key[c];
        h->val[i] = h->val[c];
        i = c;
    }
    h->key[i] = key;
    h->val[i] = val;
}

/* Finishing u at time `end`: its value reaches each consumer's rank (one
 * message per rank, the sender's link serialized). */
static void finish(sim_t *s, int32_t u, double end, double *link_free, heap_t *ready)
{
    int src = s->t[u].rank;
    for (int32_t e = s->succ_off[u]; e < s->succ_off[u + 1]; e++) {
        task_t *c = &s->t[s->succ[e]];
        double at = end;
        if (c->rank != src) {
            if (s->stamp[c->rank] != u) { /* the first consumer there: send */
                double start = fmax(end, link_free[src]);
                link_free[src] = start + s->tile_bytes / s->bw;
                s->arrival[c->rank] = link_free[src] + s->lat;
                s->stamp[c->rank] = u;
            }
            at = s->arrival[c->rank];
        }
        c->ready = fmax(c->ready, at);
        if (--c->pending == 0) heap_push(&ready[c->rank], c->ready, s->succ[e]);
    }
}

/* The makespan: event loop over (rank free time). */
static double replay(sim_t *s)
{
    heap_t *ready = calloc((size_t)s->ranks, sizeof *ready), ev = {0};
    double *free_at = calloc((size_t)s->ranks, sizeof *free_at);
    double *link_free = calloc((size_t)s->ranks, sizeof *link_free), makespan = 0;
    s->stamp = malloc((size_t)s->ranks * sizeof *s->stamp);
    s->arrival = calloc((size_t)s->ranks, sizeof *s->arrival);
    for (int r = 0; r < s->ranks; r++) s->stamp[r] = -1;
    for (int32_t u = 0; u < s->n; u++) {
        task_t *t = &s->t[u];
        t->ready = 0;
        t->pending = 0;
        for (int e = 0; e < 3; e++) t->pending += t->in[e] >= 0;
        if (!t->pending) heap_push(&ready[t->rank], 0.0, u);
    }
    /* ev: finish events (time, task); ranks start tasks whenever idle */
    int32_t done = 0;
    double now = 0;
    while (done < s->n) {
        for (int r = 0; r < s->ranks; r++) { /* idle ranks take their earliest ready task */
            while (ready[r].n && free_at[r] <= now && ready[r].key[0] <= now) {
                int32_t u = ready[r].val[0];
                heap_pop(&ready[r]);
                free_at[r] = now + s->cost[s->t[u].kind];
                heap_push(&ev, free_at[r], u);
            }
        }
        double next = INFINITY; /* the next event: a finish or a task becoming ready */
        if (ev.n) next = ev.key[0];
        for (int r = 0; r < s->ranks; r++)
            if (ready[r].n && free_at[r] <= now) next = fmin(next, ready[r].key[0]);
        now = fmax(now, next);
        while (ev.n && ev.key[0] <= now) {
            int32_t u = ev.val[0];
            double end = ev.key[0];
            heap_pop(&ev);
            finish(s, u, end, link_free, ready);
            makespan = fmax(makespan, end);
            done++;
        }
    }
    for (int r = 0; r < s->ranks; r++) {
        free(ready[r].key);
        free(ready[r].val);
    }
    free(ready);
    free(ev.key);
    free(ev.val);
    free(free_at);
    free(link_free);
    free(s->stamp);
    free(s->arrival);
    return makespan;
}

/* pdpotrf (docs/distributed.md §9): the flops at the dgemm rate spread over
 * P ranks, plus per panel step a binomial broadcast of the panel along the
 * process rows and columns, plus the panel factorization on the critical
 * path (potrf and the trsm of its column block). */
static double scalapack_model(int n, int nb, int p, int q, const double *cost, double lat,
                              double bw)
{
    double gemm_rate = 2.0 * nb * (double)nb * nb / cost[K_GEMM];
    double t = (double)n * n * n / 3.0 / (p * q * gemm_rate);
    for (int k = 0; k * nb < n; k++) {
        double rows = (double)(n - k * nb);
        double panel_bytes = 8.0 * rows * nb / p;
        t += (ceil(log2(q > 1 ? q : 1)) + ceil(log2(p > 1 ? p : 1))) * (lat + panel_bytes / bw);
        t += cost[K_POTRF] + ceil(rows / nb / p) * cost[K_TRMM];
    }
    return t;
}

static void grid(int ranks, int *p, int *q)
{
    *p = 1;
    for (int d = 1; d * d <= ranks; d++)
        if (ranks % d == 0) *p = d;
    *q = ranks / *p;
}

int main(int argc, char **argv)
{
    int ns[8], n_n = 0, rs[16], n_r = 0, nb = 256, reps = 5;
    double lat_us = 1.5, gbps = 10.0;
    const char *profile = NULL;
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--n") && n_n < 8) ns[n_n++] = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ranks") && n_r < 16) rs[n_r++] = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--nb")) nb = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--latency-us")) lat_us = atof(argv[++i]);
        else if (!strcmp(argv[i], "--gbps")) gbps = atof(argv[++i]);
        else if (!strcmp(argv[i], "--calib-reps")) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--profile")) profile = argv[++i];
    }
    if (!n_n) ns[n_n++] = 4096, ns[n_n++] = 65536;
    if (!n_r) {
        static const int d[] = {2, 3, 4, 8, 16, 64, 256, 1024};
        for (int k = 0; k < 8; k++) rs[n_r++] = d[k];
    }
    if (nb < 8 || reps < 1) return 2;
    openblas_set_num_threads(1); /* the demo's nodes run one-thread BLAS */
    sim_t s;
    memset(&s, 0, sizeof s);
    if (profile && profile_costs(profile, s.cost) != 0) return 2;
    for (int k = 0; k < K_N; k++) {
        if (!profile) s.cost[k] = time_kernel(k, nb, reps);
        printf("sim_kernel name=%s nb=%d us=%.1f source=%s\n", kname[k], nb, s.cost[k] * 1e6,
               profile ? "profile" : "timed");
    }
    s.lat = lat_us * 1e-6;
    s.bw = gbps * 1e9;
    s.tile_bytes = 8.0 * nb * nb;
    for (int a = 0; a < n_n; a++) {
        s.nt = (ns[a] + nb - 1) / nb;
        for (int b = 0; b < n_r; b++) {
            s.ranks = rs[b];
            grid(s.ranks, &s.p, &s.q);
            build_dag(&s);
            double t = replay(&s);
            printf("sim_cholesky n=%d nb=%d ranks=%d predicted_s=%.4f gflops=%.1f "
                   "scalapack_model_s=%.4f\n", ns[a], nb, s.ranks, t,
                   (double)ns[a] * ns[a] * ns[a] / 3.0 / t * 1e-9,
                   scalapack_model(ns[a], nb, s.p, s.q, s.cost, s.lat, s.bw));
            fflush(stdout);
            free(s.t);
            free(s.succ_off);
            free(s.succ);
        }
    }
    return 0;
}
