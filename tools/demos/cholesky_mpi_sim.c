/* cholesky_mpi_sim: predicts the run time of tile_cholesky_mpi's partitioned
 * function at 2 to 1024 ranks by simulation (docs/distributed.md §9). It
 * builds the DAG the distributed compile builds for the demo: the tile tasks
 * (potrf_inv: the factor and inverse of a diagonal tile; potrf: the last
 * one's factor alone; trmm, the transposed view of a trmm tile, syrk, gemm) in
 * creation order, each on the rank owning the tile it writes (2-D
 * block-cyclic, the demo's grid); after each task, one MpiSend (on the
 * sender, chained in the global order) and one MpiRecv (on the receiver,
 * after the receiver's latest send) per (value, other rank reading it), a
 * transposed view recomputed on each rank that reads it (one message for a
 * tile and its transpose); no output copies (the demo updates its tiles in
 * place). sim_replay.h replays it. Prints
 *
 *   sim_kernel name=K nb=NB us=T source=S               (per task kind)
 *   sim_cholesky n=N nb=NB ranks=P predicted_s=T gflops=G scalapack_model_s=S
 *   sim_validate np=P n=N predicted_s=X measured_s=Y ratio=X/Y  (--measured-s)
 *
 * with scalapack_model_s the model of docs/distributed.md §9 for pdpotrf.
 * Options: --n N (repeatable; default 4096 and 65536), --nb NB (256),
 * --ranks P (repeatable; default 2 3 4 8 16 64 256 1024), --latency-us L
 * (1.5), --gbps B (10, GB/s), --calib-reps R (5), --cores C and
 * --ranks-per-host H (each host's H consecutive ranks share C cores;
 * default 1 and 1: a core per rank), --profile PATH (repeatable),
 * --measured-s S.
 *
 * --profile PATH: task costs measured by weft's profiler (source=profile):
 * PATH is a profile JSON (weft_profile_write_json, e.g. written by
 * tile_cholesky_mpi --profile-json with the same nb), and each task kind
 * costs its op class's mean time per node call there (TilePotrf,
 * TilePotrfInv, TileTrmm, DimShuffle, TileSyrk, Gemm, MpiSend, MpiRecv,
 * MpiJoin; the last four may be absent: cost 0; TilePotrf too: see
 * POTRF_SHARE). Given once per rank (as many --profile as the single
 * --ranks), rank r replays the r-th profile's costs (the pooled mean for a
 * kind it never ran); else the means pool every profile's calls. Without it
 * the kernels are timed here, and the view and the messages' tasks cost
 * nothing (source=timed). */
#define _POSIX_C_SOURCE 200809L
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "demo_median.h"
#include "sim_replay.h"
#include "tile_cholesky_kernel.h"

enum { K_POTRF, K_POTRF_INV, K_TRMM, K_TRANS, K_SYRK, K_GEMM, K_SEND, K_RECV, K_JOIN, K_N };
static const char *const kname[K_N] = {"potrf", "potrf_inv", "trmm", "trans", "syrk",
                                       "gemm",  "send",      "recv", "join"};
static const char *const kclass[K_N] = {"TilePotrf", "TilePotrfInv", "TileTrmm",
                                        "DimShuffle", "TileSyrk",    "Gemm",
                                        "MpiSend",   "MpiRecv",      "MpiJoin"};
enum { K_REQUIRED = (1 << K_POTRF_INV) | (1 << K_TRMM) | (1 << K_SYRK) | (1 << K_GEMM) };
/* The last diagonal tile's factor runs once, on one rank: a profile without
 * it costs it as this share of TilePotrfInv (the kernel still inverts the
 * two halves, only the top-level pair of dtrmm goes; timed here with one
 * thread: 0.69 at nb 256, 0.73 at 512). */
#define POTRF_SHARE 0.7
enum { MAX_PROFILES = 64 };

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
        LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', nb, b, nb); /* a factor for trmm */
        double t0 = now_s();
        switch (k) { /* the demos' kernels (tile_cholesky_ops.c) */
        case K_POTRF:
        case K_POTRF_INV: chol_tile_factor(a, nb, c, nb, nb, k == K_POTRF_INV); break;
        case K_TRMM:
            cblas_dtrmm(CblasRowMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, nb, nb,
                        1.0, b, nb, a, nb);
            break;
        case K_SYRK:
            cblas_dsyrk(CblasRowMajor, CblasLower, CblasNoTrans, nb, nb, -1.0, a, nb, 1.0, c, nb);
            break;
        case K_GEMM:
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nb, nb, nb, -1.0, a, nb, b, nb,
                        1.0, c, nb);
            break;
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

/* ---- task costs from profile JSON files ---- */

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

/* Adds the "classes" rows ({"name": "C", "time_ns": T, "percent": P,
 * "calls": N, ...}) of kind k to ns[k] and calls[k]. */
static int profile_add(const char *path, double *ns, double *calls)
{
    char *text = slurp(path), *at = text ? strstr(text, "\"classes\": [") : NULL;
    if (!at) fprintf(stderr, "cholesky_mpi_sim: %s: no profile classes\n", path);
    for (char *row = at; row && (row = strstr(row, "{\"name\": \"")) != NULL; row++) {
        char name[64];
        unsigned long long t_ns, c;
        double pct;
        if (sscanf(row, "{\"name\": \"%63[^\"]\", \"time_ns\": %llu, \"percent\": %lf, "
                        "\"calls\": %llu", name, &t_ns, &pct, &c) != 4)
            break; /* past the classes */
        for (int k = 0; k < K_N; k++)
            if (!strcmp(name, kclass[k])) ns[k] += (double)t_ns, calls[k] += (double)c;
    }
    free(text);
    return at ? 0 : -1;
}

/* cost[k] = ns[k] / calls[k], else fallback[k] (a rank that ran no such
 * node; NULL: 0); without a fallback the compute kernels must have calls. */
static int costs_from(const char *what, const double *ns, const double *calls,
                      const double *fallback, double *cost)
{
    for (int k = 0; k < K_N; k++) {
        cost[k] = calls[k] > 0 ? 1e-9 * ns[k] / calls[k] : fallback ? fallback[k] : 0.0;
        if (!fallback && (K_REQUIRED & (1 << k)) && !(calls[k] > 0)) {
            fprintf(stderr, "cholesky_mpi_sim: %s: no %s calls in the profile's classes\n", what,
                    kclass[k]);
            return -1;
        }
    }
    if (!(calls[K_POTRF] > 0) && !fallback) cost[K_POTRF] = POTRF_SHARE * cost[K_POTRF_INV];
    return 0;
}

/* Pooled costs into pool[K_N]; per rank into per[r * K_N] when one file per rank. */
static int profile_costs(char *const *paths, int n_paths, double *pool, double *per)
{
    double ns[K_N] = {0}, calls[K_N] = {0};
    for (int i = 0; i < n_paths; i++)
        if (profile_add(paths[i], ns, calls) != 0) return -1;
    if (costs_from(paths[0], ns, calls, NULL, pool) != 0) return -1;
    for (int i = 0; per && i < n_paths; i++) {
        double ns1[K_N] = {0}, calls1[K_N] = {0};
        if (profile_add(paths[i], ns1, calls1) != 0 ||
            costs_from(paths[i], ns1, calls1, pool, per + (size_t)i * K_N) != 0)
            return -1;
    }
    return 0;
}

/* ---- the DAG the distributed compile builds ---- */

typedef struct dag {
    int nt, p, q, ranks;
    double tile_bytes;
    sim_task_t *t;
    int32_t n, cap;
} dag_t;

static size_t tri(int i, int j)
{
    return (size_t)i * (size_t)(i + 1) / 2 + (size_t)j;
}

static int owner(const dag_t *d, int i, int j)
{
    return (i % d->p) * d->q + (j % d->q);
}

static int32_t add(dag_t *d, int kind, int rank, int32_t a, int32_t b, int32_t c)
{
    if (d->n == d->cap) {
        int32_t cap = d->cap ? 2 * d->cap : 1024;
        sim_task_t *t = realloc(d->t, (size_t)cap * sizeof *t);
        if (!t) return -2;
        d->t = t;
        d->cap = cap;
    }
    d->t[d->n] = (sim_task_t){(uint8_t)kind, rank, {a, b, c}, 0.0};
    return d->n++;
}

/* The transposed view of trmm tile (i, k) (task `tile`), as the gemms of
 * block column i read it: computed on each rank of that column holding such
 * a gemm (process row of the gemm's row i' > i), from the tile, which that
 * rank receives unless it owns it (docs/distributed.md §2, item 3), and
 * nowhere else. at[pr]: the view for process row pr (-1: none reads it). */
static void transposes(dag_t *d, int i, int32_t tile, int32_t *at)
{
    for (int pr = 0; pr < d->p; pr++) {
        bool read = false;
        for (int i2 = i + 1; i2 < d->nt && i2 < i + 1 + d->p && !read; i2++) read = i2 % d->p == pr;
        at[pr] = read ? add(d, K_TRANS, pr * d->q + i % d->q, tile, -1, -1) : -1;
    }
}

/* Pass 1: the tile tasks in the demo's creation order (rank: the tile's
 * owner; a transposed view also where it is read). */
static int tile_tasks(dag_t *d)
{
    int nt = d->nt;
    size_t nv = tri(nt, 0);
    int32_t *last = malloc(nv * sizeof *last), *trans = malloc(nv * (size_t)d->p * sizeof *trans);
    if (!last || !trans) {
        free(last);
        free(trans);
        return -1;
    }
    for (size_t v = 0; v < nv; v++) last[v] = -1;
    for (size_t v = 0; v < nv * (size_t)d->p; v++) trans[v] = -1;
    for (int k = 0; k < nt; k++) {
        int rk = owner(d, k, k);
        /* one task for the factor and the inverse the panel reads */
        int32_t inv = last[tri(k, k)] =
            add(d, k + 1 < nt ? K_POTRF_INV : K_POTRF, rk, last[tri(k, k)], -1, -1);
        for (int i = k + 1; i < nt; i++) {
            int r = owner(d, i, k);
            last[tri(i, k)] = add(d, K_TRMM, r, inv, last[tri(i, k)], -1);
            if (i + 1 < nt) transposes(d, i, last[tri(i, k)], &trans[tri(i, k) * (size_t)d->p]);
        }
        for (int i = k + 1; i < nt; i++) {
            last[tri(i, i)] = add(d, K_SYRK, owner(d, i, i), last[tri(i, i)], last[tri(i, k)], -1);
            for (int j = k + 1; j < i; j++)
                last[tri(i, j)] = add(d, K_GEMM, owner(d, i, j), last[tri(i, j)], last[tri(i, k)],
                                      trans[tri(j, k) * (size_t)d->p + (size_t)(i % d->p)]);
        }
    }
    free(last);
    free(trans);
    return d->n < 0 ? -1 : 0;
}

/* The distinct other ranks reading each task of c[0..n), ascending:
 * rk[off[u] .. off[u + 1]). */
static int readers(const sim_task_t *c, int32_t n, int ranks, int64_t **off_out, int32_t **rk_out)
{
    int64_t *so = calloc((size_t)n + 1, sizeof *so), *off = calloc((size_t)n + 1, sizeof *off);
    int32_t *stamp = malloc((size_t)ranks * sizeof *stamp), *succ = NULL, *rk = NULL;
    size_t cap = 1024, len = 0;
    if (!so || !off || !stamp) goto fail;
    for (int32_t u = 0; u < n; u++) /* consumers (CSR) */
        for (int e = 0; e < 3; e++)
            if (c[u].in[e] >= 0) so[c[u].in[e] + 1]++;
    for (int32_t u = 0; u < n; u++) so[u + 1] += so[u];
    succ = malloc(((size_t)so[n] + 1) * sizeof *succ);
    rk = malloc(cap * sizeof *rk);
    if (!succ || !rk) goto fail;
    for (int32_t u = 0; u < n; u++)
        for (int e = 0; e < 3; e++)
            if (c[u].in[e] >= 0) succ[so[c[u].in[e]] + off[c[u].in[e]]++] = u;
    for (int r = 0; r < ranks; r++) stamp[r] = -1;
    for (int32_t u = 0; u < n; u++) {
        off[u] = (int64_t)len;
        for (int64_t e = so[u]; e < so[u + 1]; e++) {
            int32_t r = c[succ[e]].rank;
            if (r == c[u].rank || stamp[r] == u) continue;
            stamp[r] = u;
            if (len == cap) {
                int32_t *g = realloc(rk, 2 * cap * sizeof *g);
                if (!g) goto fail;
                rk = g;
                cap *= 2;
            }
            size_t y = len++; /* insertion: ascending ranks */
            for (; y > (size_t)off[u] && rk[y - 1] > r; y--) rk[y] = rk[y - 1];
            rk[y] = r;
        }
    }
    off[n] = (int64_t)len;
    free(so);
    free(succ);
    free(stamp);
    *off_out = off;
    *rk_out = rk;
    return 0;
fail:
    free(so);
    free(off);
    free(succ);
    free(stamp);
    free(rk);
    return -1;
}

/* Pass 2: the tile tasks again in order, each followed by its messages (a
 * send on its value alone, joined into the sender's chain; a receive on the
 * reader after the reader's chain, i.e. every earlier send of the reader:
 * docs/distributed.md §3.2), readers reading the receive. No output copies:
 * the demo updates every tile in place with its factor (§2 item 5). */
static int with_messages(dag_t *d, const dag_t *c)
{
    int64_t *off = NULL;
    int32_t *rk = NULL, *id = malloc((size_t)c->n * sizeof *id), *recv = NULL;
    int32_t *chain = malloc((size_t)d->ranks * sizeof *chain);
    int rc = !id || !chain || readers(c->t, c->n, d->ranks, &off, &rk) != 0 ? -1 : 0;
    if (rc == 0) recv = malloc(((size_t)off[c->n] + 1) * sizeof *recv);
    if (!recv) rc = -1;
    for (int r = 0; r < d->ranks && chain; r++) chain[r] = -1;
    for (int32_t u = 0; rc == 0 && u < c->n; u++) {
        const sim_task_t *t = &c->t[u];
        int32_t in[3];
        for (int e = 0; e < 3; e++) { /* a remote input: this rank's receive of it */
            int32_t v = t->in[e];
            int64_t x = v < 0 ? 0 : off[v];
            while (v >= 0 && c->t[v].rank != t->rank && rk[x] != t->rank) x++;
            in[e] = v < 0 ? -1 : c->t[v].rank == t->rank ? id[v] : recv[x];
        }
        id[u] = add(d, t->kind, t->rank, in[0], in[1], in[2]);
        for (int64_t x = off[u]; x < off[u + 1] && id[u] >= 0; x++) {
            int32_t s = add(d, K_SEND, t->rank, id[u], -1, -1);
            if (s >= 0) d->t[s].bytes = d->tile_bytes;
            int32_t prev = chain[t->rank];
            chain[t->rank] = s < 0 || prev < 0 ? s : add(d, K_JOIN, t->rank, prev, s, -1);
            recv[x] = s < 0 ? -1 : add(d, K_RECV, rk[x], s, chain[rk[x]], -1);
        }
        if (id[u] < 0 || d->n < 0) rc = -1;
    }
    free(off);
    free(rk);
    free(id);
    free(recv);
    free(chain);
    return rc;
}

static int build_dag(dag_t *d)
{
    dag_t c = *d;
    c.t = NULL;
    c.n = c.cap = 0;
    d->t = NULL;
    d->n = d->cap = 0;
    int rc = tile_tasks(&c) == 0 ? with_messages(d, &c) : -1;
    free(c.t);
    return rc;
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

typedef struct opts {
    int ns[8], n_n, rs[16], n_r, nb, reps, cores, per_host;
    double lat_us, gbps, measured_s;
    char *profiles[MAX_PROFILES];
    int n_prof;
} opts_t;

static int parse(int argc, char **argv, opts_t *o)
{
    *o = (opts_t){.nb = 256, .reps = 5, .cores = 1, .per_host = 1, .lat_us = 1.5, .gbps = 10.0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) return -1;
        i++;
        if (!strcmp(a, "--n") && o->n_n < 8) o->ns[o->n_n++] = atoi(v);
        else if (!strcmp(a, "--ranks") && o->n_r < 16) o->rs[o->n_r++] = atoi(v);
        else if (!strcmp(a, "--nb")) o->nb = atoi(v);
        else if (!strcmp(a, "--latency-us")) o->lat_us = atof(v);
        else if (!strcmp(a, "--gbps")) o->gbps = atof(v);
        else if (!strcmp(a, "--calib-reps")) o->reps = atoi(v);
        else if (!strcmp(a, "--cores")) o->cores = atoi(v);
        else if (!strcmp(a, "--ranks-per-host")) o->per_host = atoi(v);
        else if (!strcmp(a, "--measured-s")) o->measured_s = atof(v);
        else if (!strcmp(a, "--profile") && o->n_prof < MAX_PROFILES) o->profiles[o->n_prof++] = argv[i];
        else return -1;
    }
    if (!o->n_n) o->ns[o->n_n++] = 4096, o->ns[o->n_n++] = 65536;
    if (!o->n_r) {
        static const int d[] = {2, 3, 4, 8, 16, 64, 256, 1024};
        for (int k = 0; k < 8; k++) o->rs[o->n_r++] = d[k];
    }
    for (int k = 0; k < o->n_r; k++)
        if (o->rs[k] < 1) return -1;
    for (int k = 0; k < o->n_n; k++)
        if (o->ns[k] < 1) return -1;
    return o->nb < 8 || o->reps < 1 || o->cores < 1 || o->per_host < 1 || !(o->gbps > 0) ? -1 : 0;
}

/* One sim_cholesky line (and sim_validate with --measured-s). */
static int predict(const opts_t *o, int n, int ranks, const double *cost, const double *per)
{
    dag_t d = {.nt = (n + o->nb - 1) / o->nb, .ranks = ranks, .tile_bytes = 8.0 * o->nb * o->nb};
    grid(ranks, &d.p, &d.q);
    sim_model_t m = {ranks, o->per_host, o->cores, o->lat_us * 1e-6, o->gbps * 1e9, K_N,
                     per ? per : cost, per != NULL};
    double t = build_dag(&d) == 0 ? sim_replay(d.t, d.n, &m) : -1.0;
    free(d.t);
    if (t < 0) {
        fprintf(stderr, "cholesky_mpi_sim: n=%d ranks=%d: out of memory\n", n, ranks);
        return -1;
    }
    printf("sim_cholesky n=%d nb=%d ranks=%d predicted_s=%.6f gflops=%.1f "
           "scalapack_model_s=%.4f\n", n, o->nb, ranks, t, (double)n * n * n / 3.0 / t * 1e-9,
           scalapack_model(n, o->nb, d.p, d.q, cost, m.lat, m.bw));
    if (o->measured_s > 0)
        printf("sim_validate np=%d n=%d predicted_s=%.4f measured_s=%.4f ratio=%.3f\n", ranks, n,
               t, o->measured_s, t / o->measured_s);
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    opts_t o;
    if (parse(argc, argv, &o) != 0) {
        fprintf(stderr, "usage: cholesky_mpi_sim [--n N]... [--nb NB] [--ranks P]... "
                        "[--latency-us L] [--gbps B] [--calib-reps R] [--cores C] "
                        "[--ranks-per-host H] [--profile PATH]... [--measured-s S]\n");
        return 2;
    }
    openblas_set_num_threads(1); /* the demo's nodes run one-thread BLAS */
    double cost[K_N] = {0}, *per = NULL;
    if (o.n_prof) {
        bool per_rank = o.n_prof > 1 && o.n_r == 1 && o.rs[0] == o.n_prof;
        per = per_rank ? calloc((size_t)o.n_prof * K_N, sizeof *per) : NULL;
        if ((per_rank && !per) || profile_costs(o.profiles, o.n_prof, cost, per) != 0) {
            free(per);
            return 2;
        }
    }
    for (int k = 0; k < K_N; k++) {
        /* sends and receives use the value's memory (no copy), a join is a token */
        bool free_k = k == K_TRANS || k == K_SEND || k == K_RECV || k == K_JOIN;
        if (!o.n_prof) cost[k] = free_k ? 0.0 : time_kernel(k, o.nb, o.reps);
        printf("sim_kernel name=%s nb=%d us=%.1f source=%s\n", kname[k], o.nb, cost[k] * 1e6,
               o.n_prof ? "profile" : "timed");
    }
    int rc = 0;
    for (int a = 0; a < o.n_n && !rc; a++)
        for (int b = 0; b < o.n_r && !rc; b++) rc = predict(&o, o.ns[a], o.rs[b], cost, per);
    free(per);
    return rc ? 1 : 0;
}
