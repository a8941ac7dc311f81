/* weft-bench: runs the scheduler benchmark protocol
 * (docs/performance-notes.md §6) on weft's task-DAG executor, impl=weft.
 *
 * Per configuration: generate the shape (same generator as the peers'
 * driver.c: stderr shows edges and FNV hash to compare), build the DAG once
 * (build_ms: nodes, edges, finalize, run object), one untimed instrumented
 * run checking every node ran exactly once and after its predecessors
 * (CHECK FAILED + exit 1 otherwise), then 1 warm-up and R timed runs (median
 * reported), verifying and clearing done[] outside the timed region.
 * Output, one line per configuration:
 *   bench impl=weft shape=S n=N threads=T work=W build_ms=X run_ms=Y ns_per_task=Z
 * With no arguments, runs the matrix: every shape at T=1 and T=2 with work 0,
 * plus wavefront and random with work 1000. */
#define _POSIX_C_SOURCE 200809L

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "weft/sched.h"

typedef struct bench_graph {
    uint32_t n;
    uint64_t nedges;
    uint64_t *pred_off;
    uint32_t *pred;
} bench_graph;

typedef void (*bench_work_fn)(uint32_t id);

static bench_work_fn g_work, g_body;
static _Atomic double *done;
static long work_iters;
static _Atomic uint64_t seq_ctr;
static uint64_t *seqno;
static _Atomic uint32_t *runs;

static void work_zero(uint32_t id)
{
    atomic_store_explicit(&done[id], 1.0, memory_order_relaxed);
}

static void work_spin(uint32_t id)
{
    double x = 1.0;
    for (long i = 0; i < work_iters; i++) x = x * 1.0000001 + 1e-9;
    atomic_store_explicit(&done[id], x, memory_order_relaxed);
}

static void work_check(uint32_t id)
{
    seqno[id] = atomic_fetch_add_explicit(&seq_ctr, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&runs[id], 1, memory_order_relaxed);
    g_body(id);
}

static weft_status_t bench_node(void *arg, const weft_task_ctx_t *ctx)
{
    (void)ctx;
    g_work((uint32_t)(uintptr_t)arg);
    return WEFT_OK;
}

/* ---------------------------------------------------------- graphs */

static void *xmalloc(size_t sz)
{
    void *p = malloc(sz ? sz : 1);
    if (!p) {
        fprintf(stderr, "out of memory (%zu bytes)\n", sz);
        exit(2);
    }
    return p;
}

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

typedef struct { bench_graph *g; uint64_t cap; } gen_t;

static void add_pred(gen_t *b, uint32_t p)
{
    bench_graph *g = b->g;
    if (g->nedges == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 1024;
        uint32_t *np = realloc(g->pred, b->cap * sizeof *g->pred);
        if (!np) { fprintf(stderr, "out of memory\n"); exit(2); }
        g->pred = np;
    }
    g->pred[g->nedges++] = p;
}

static void gen_random_preds(gen_t *b, uint64_t i, uint64_t *rng)
{
    const uint32_t K = 4, W = 1000;
    uint32_t k = 1 + (uint32_t)(splitmix64(rng) % K);
    uint64_t lim = i < W ? i : W;
    uint64_t first = b->g->nedges;
    for (uint32_t j = 0; j < k; j++) {
        uint32_t p = (uint32_t)(i - 1 - splitmix64(rng) % lim);
        int dup = 0;
        for (uint64_t e = first; e < b->g->nedges; e++)
            if (b->g->pred[e] == p) { dup = 1; break; }
        if (!dup) add_pred(b, p);
    }
}

static void gen_preds(gen_t *b, const char *shape, long param, uint64_t i, uint64_t n, uint64_t *rng)
{
    if (!strcmp(shape, "chain")) {
        if (i) add_pred(b, (uint32_t)(i - 1));
    } else if (!strcmp(shape, "tree")) {
        if (i) add_pred(b, (uint32_t)((i - 1) / 2));
    } else if (!strcmp(shape, "wavefront")) {
        uint64_t M = (uint64_t)param, r = i / M, c = i % M;
        if (r) add_pred(b, (uint32_t)(i - M));
        if (c) add_pred(b, (uint32_t)(i - 1));
    } else if (!strcmp(shape, "fanout")) {
        if (i >= 1 && i <= (uint64_t)param) add_pred(b, 0);
        else if (i == n - 1)
            for (uint64_t p = 1; p <= (uint64_t)param; p++) add_pred(b, (uint32_t)p);
    } else if (i) {
        gen_random_preds(b, i, rng);
    }
}

static int make_graph(bench_graph *g, const char *shape, long param)
{
    gen_t b = { g, 0 };
    uint64_t n;
    memset(g, 0, sizeof *g);
    if (!strcmp(shape, "chain")) n = (uint64_t)param;
    else if (!strcmp(shape, "tree")) n = param > 0 && param < 32 ? (1ULL << param) - 1 : 0;
    else if (!strcmp(shape, "wavefront")) n = (uint64_t)param * (uint64_t)param;
    else if (!strcmp(shape, "fanout")) n = (uint64_t)param + 2;
    else if (!strcmp(shape, "random")) n = (uint64_t)param;
    else return -1;
    if (n == 0 || n > 0x3FFFFFFEULL) return -1;
    g->n = (uint32_t)n;
    g->pred_off = xmalloc((n + 1) * sizeof *g->pred_off);
    uint64_t rng = 42;
    for (uint64_t i = 0; i < n; i++) {
        g->pred_off[i] = g->nedges;
        gen_preds(&b, shape, param, i, n, &rng);
    }
    g->pred_off[n] = g->nedges;
    return 0;
}

static uint64_t graph_hash(const bench_graph *g)
{ /* FNV-1a over (i, indegree, preds in stored order), as driver.c */
    uint64_t h = 0xcbf29ce484222325ULL;
#define MIX(v)                                                       \
    do {                                                             \
        uint64_t v_ = (v);                                           \
        for (int b_ = 0; b_ < 8; b_++) {                             \
            h ^= (v_ >> (8 * b_)) & 0xff;                            \
            h *= 0x100000001b3ULL;                                   \
        }                                                            \
    } while (0)
    for (uint64_t i = 0; i < g->n; i++) {
        MIX(i);
        MIX(g->pred_off[i + 1] - g->pred_off[i]);
        for (uint64_t e = g->pred_off[i]; e < g->pred_off[i + 1]; e++) MIX(g->pred[e]);
    }
#undef MIX
    return h;
}

/* ---------------------------------------------------------- weft side */

static void die_status(const char *what, weft_status_t st, weft_dag_t *dag)
{
    fprintf(stderr, "weft-bench: %s: %s %s\n", what, weft_status_name(st),
            dag ? weft_dag_last_error(dag) : "");
    exit(2);
}

static void build_dag(const bench_graph *g, weft_pool_t *pool, weft_dag_t **dag,
                      weft_dag_run_t **run)
{
    weft_status_t st = weft_dag_create(NULL, dag);
    if (st) die_status("dag_create", st, NULL);
    for (uint32_t i = 0; i < g->n; i++)
        if ((st = weft_dag_add_node(*dag, bench_node, (void *)(uintptr_t)i, NULL, NULL)))
            die_status("add_node", st, *dag);
    for (uint32_t i = 0; i < g->n; i++)
        for (uint64_t e = g->pred_off[i]; e < g->pred_off[i + 1]; e++)
            if ((st = weft_dag_add_edge(*dag, g->pred[e], i))) die_status("add_edge", st, *dag);
    if ((st = weft_dag_finalize(*dag))) die_status("finalize", st, *dag);
    if ((st = weft_dag_run_create(*dag, pool, NULL, run))) die_status("run_create", st, *dag);
}

/* ---------------------------------------------------------- timing, checks */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static void reset_run_state(const bench_graph *g, int instrumented)
{
    for (uint32_t i = 0; i < g->n; i++) atomic_store_explicit(&done[i], 0.0, memory_order_relaxed);
    if (!instrumented) return;
    atomic_store_explicit(&seq_ctr, 0, memory_order_relaxed);
    for (uint32_t i = 0; i < g->n; i++) atomic_store_explicit(&runs[i], 0, memory_order_relaxed);
}

static void fail(const char *what, uint64_t i, uint64_t p)
{
    fprintf(stderr, "CHECK FAILED (weft): %s node=%llu pred=%llu\n", what, (unsigned long long)i,
            (unsigned long long)p);
    exit(1);
}

static void check_run(const bench_graph *g, int instrumented)
{
    for (uint64_t i = 0; i < g->n; i++) {
        if (atomic_load_explicit(&done[i], memory_order_relaxed) == 0.0) fail("node did not run", i, 0);
        if (!instrumented) continue;
        if (atomic_load_explicit(&runs[i], memory_order_relaxed) != 1) fail("node ran != 1 times", i, 0);
        for (uint64_t e = g->pred_off[i]; e < g->pred_off[i + 1]; e++)
            if (!(seqno[g->pred[e]] < seqno[i])) fail("node ran before predecessor", i, g->pred[e]);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void run_once(weft_dag_run_t *run)
{
    weft_status_t st = weft_dag_run_execute(run, NULL);
    if (st) die_status("run", st, NULL);
}

static long default_param(const char *shape)
{
    if (!strcmp(shape, "tree")) return 20;
    if (!strcmp(shape, "wavefront")) return 1024;
    return 1000000;
}

/* One configuration: prints its protocol line. Returns 0, or exits. */
static int bench_config(const char *shape, long param, int threads, long work, long reps)
{
    bench_graph g;
    if (param < 0) param = default_param(shape);
    if (make_graph(&g, shape, param)) return -1;
    fprintf(stderr, "# graph shape=%s param=%ld n=%u edges=%llu fnv=%016llx\n", shape, param, g.n,
            (unsigned long long)g.nedges, (unsigned long long)graph_hash(&g));
    work_iters = work;
    done = xmalloc(g.n * sizeof *done);
    seqno = xmalloc(g.n * sizeof *seqno);
    runs = xmalloc(g.n * sizeof *runs);
    g_body = work > 0 ? work_spin : work_zero;

    weft_pool_t *pool;
    weft_status_t st = weft_pool_create(threads, NULL, &pool);
    if (st) die_status("pool_create", st, NULL);
    weft_dag_t *dag;
    weft_dag_run_t *run;
    double t0 = now_ms();
    build_dag(&g, pool, &dag, &run);
    double build_ms = now_ms() - t0;

    g_work = work_check; /* untimed full check run */
    reset_run_state(&g, 1);
    run_once(run);
    check_run(&g, 1);

    g_work = g_body;
    double *t = xmalloc((size_t)reps * sizeof *t);
    for (long r = -1; r < reps; r++) { /* r == -1: warm-up */
        reset_run_state(&g, 0);
        double s = now_ms();
        run_once(run);
        double e = now_ms() - s;
        check_run(&g, 0);
        if (r >= 0) t[r] = e;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    double med = (reps & 1) ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
    printf("bench impl=weft shape=%s n=%u threads=%d work=%ld build_ms=%.3f run_ms=%.3f "
           "ns_per_task=%.2f\n", shape, g.n, threads, work, build_ms, med, med * 1e6 / g.n);
    fprintf(stderr, "# check ok: impl=weft shape=%s threads=%d work=%ld runs=%ld pinned=%d "
            "min_ms=%.3f max_ms=%.3f\n", shape, threads, work, reps + 2, (int)weft_pool_is_pinned(pool),
            t[0], t[reps - 1]);
    fflush(stdout);
    if (weft_dag_run_destroy(run) || weft_dag_destroy(dag) || weft_pool_destroy(pool))
        die_status("teardown", WEFT_EBUSY, NULL);
    free(t);
    free(done);
    free(seqno);
    free((void *)runs);
    free(g.pred_off);
    free(g.pred);
    return 0;
}

static void usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s [--shape chain|tree|wavefront|fanout|random [--size P] [--threads T]\n"
            "          [--work W] [--reps R]]\n"
            "  --size: chain/fanout/random N (1000000), tree depth D (20), wavefront M (1024)\n"
            "  no arguments: every shape at T=1,2 work 0, plus wavefront/random at work 1000\n",
            argv0);
    exit(2);
}

static void run_matrix(void)
{
    static const char *shapes[] = { "chain", "tree", "wavefront", "fanout", "random" };
    for (int s = 0; s < 5; s++)
        for (int t = 1; t <= 2; t++) bench_config(shapes[s], -1, t, 0, 5);
    for (int s = 2; s < 5; s += 2)
        for (int t = 1; t <= 2; t++) bench_config(shapes[s], -1, t, 1000, 5);
}

int main(int argc, char **argv)
{
    const char *shape = NULL;
    long param = -1, threads = 1, reps = 5, work = 0;
    if (argc == 1) {
        run_matrix();
        return 0;
    }
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--shape") && a + 1 < argc) shape = argv[++a];
        else if ((!strcmp(argv[a], "--size") || !strcmp(argv[a], "--n")) && a + 1 < argc)
            param = atol(argv[++a]);
        else if (!strcmp(argv[a], "--threads") && a + 1 < argc) threads = atol(argv[++a]);
        else if (!strcmp(argv[a], "--work") && a + 1 < argc) work = atol(argv[++a]);
        else if (!strcmp(argv[a], "--reps") && a + 1 < argc) reps = atol(argv[++a]);
        else usage(argv[0]);
    }
    if (!shape || threads < 1 || threads > 4096 || reps < 1 || work < 0) usage(argv[0]);
    if (bench_config(shape, param, (int)threads, work, reps)) usage(argv[0]);
    return 0;
}
