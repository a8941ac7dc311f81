/* weft-callbench: the per-node overhead of a compiled function.
 *
 * The random shape of docs/performance-notes.md §6 (splitmix64 seeded 42, K=4,
 * W=1000) at N nodes is built twice: as a graph of a trivial op ("Touch": 0-d
 * float64 output, perform only marks it) compiled with mode "none", and as a
 * raw scheduler DAG (weft_dag, work 0: each node stores done[id] = 1, relaxed).
 * Both run on the same pool; 1 warm-up run then R timed runs, the median is
 * reported:
 *
 *   callbench n=N threads=T ns_per_node=X dag_ns_per_task=Y
 *
 * Every sink of the graph is a function output (caller-supplied 0-d tensors,
 * so calls allocate nothing). No arguments: N=100000 at T=1 and T=2. */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "weft/weft.h"

typedef struct shape {
    uint32_t n;
    uint32_t *off;  /* preds of i: pred[off[i] .. off[i+1]) */
    uint32_t *pred;
} shape_t;

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void die(const char *what, weft_status_t st)
{
    fprintf(stderr, "callbench: %s: %s\n", what, weft_status_name(st));
    exit(1);
}

/* docs/performance-notes.md §6 random: k = 1 + rng % K predecessors drawn from
 * the previous min(i, W) nodes, duplicates dropped (draws still consumed). */
static void make_shape(shape_t *s, uint32_t n)
{
    const uint32_t K = 4, W = 1000;
    uint64_t rng = 42;
    s->n = n;
    s->off = calloc(n + 1, sizeof *s->off);
    s->pred = malloc((size_t)n * K * sizeof *s->pred);
    if (!s->off || !s->pred) die("shape", WEFT_ENOMEM);
    uint32_t ne = 0;
    for (uint32_t i = 0; i < n; i++) {
        s->off[i] = ne;
        if (i == 0) continue;
        uint32_t k = 1 + (uint32_t)(splitmix64(&rng) % K), lim = i < W ? i : W, first = ne;
        for (uint32_t j = 0; j < k; j++) {
            uint32_t p = (uint32_t)(i - 1 - splitmix64(&rng) % lim);
            int dup = 0;
            for (uint32_t e = first; e < ne; e++) dup |= s->pred[e] == p;
            if (!dup) s->pred[ne++] = p;
        }
    }
    s->off[n] = ne;
}

/* ---- the Touch op ----------------------------------------------------------- */

static weft_status_t touch_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                     weft_var_t *const *in, size_t *n_out,
                                     const weft_type_t **out)
{
    (void)op, (void)n_in, (void)in;
    *n_out = 1;
    return weft_type_tensor(g, WEFT_FLOAT64, 0, NULL, &out[0]);
}

static weft_status_t touch_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                   weft_tensor_t **out, weft_kernel_ctx_t *ctx)
{
    (void)node, (void)in;
    weft_status_t st = weft_kernel_alloc_output(ctx, &out[0], WEFT_FLOAT64, 0, NULL);
    if (st == WEFT_OK) *(double *)weft_tensor_data(out[0]) = 1.0;
    return st;
}

static const weft_op_class_t touch_class = {.size = sizeof(weft_op_class_t), .name = "Touch",
                                            .make_node = touch_make_node,
                                            .perform = touch_perform};

typedef struct fn_bench {
    weft_graph_t *g;
    weft_function_t *f;
    weft_tensor_t *x;
    size_t n_out;
    weft_tensor_t **outs;
} fn_bench_t;

static void build_function(const shape_t *s, weft_pool_t *pool, fn_bench_t *b)
{
    weft_status_t st = weft_graph_create(NULL, &b->g);
    const weft_op_t *op;
    const weft_type_t *t0;
    weft_var_t *x, **v = malloc(s->n * sizeof *v), *in[4];
    char *has_succ = calloc(s->n, 1);
    if (st == WEFT_OK) st = weft_op_create(b->g, &touch_class, NULL, &op);
    if (st == WEFT_OK) st = weft_type_tensor(b->g, WEFT_FLOAT64, 0, NULL, &t0);
    if (st == WEFT_OK)
        st = ((x = weft_var_create(b->g, t0, "x")) ? WEFT_OK : weft_graph_error(b->g));
    for (uint32_t i = 0; st == WEFT_OK && i < s->n; i++) {
        uint32_t k = s->off[i + 1] - s->off[i];
        for (uint32_t j = 0; j < k; j++) {
            in[j] = v[s->pred[s->off[i] + j]];
            has_succ[s->pred[s->off[i] + j]] = 1;
        }
        if (i == 0) in[k++] = x;
        st = ((v[i] = weft_op_call(b->g, op, k, in)) ? WEFT_OK : weft_graph_error(b->g));
    }
    if (st != WEFT_OK) die("building the graph", st);
    weft_var_t **outs = malloc(s->n * sizeof *outs);
    b->n_out = 0;
    for (uint32_t i = 0; i < s->n; i++)
        if (!has_succ[i]) outs[b->n_out++] = v[i];
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.mode = "none";
    o.pool = pool;
    st = weft_function_compile(1, &x, b->n_out, outs, 0, NULL, &o, &b->f);
    if (st != WEFT_OK) {
        fprintf(stderr, "%s\n", weft_function_last_error(NULL));
        die("compile", st);
    }
    b->outs = malloc(b->n_out * sizeof *b->outs);
    for (size_t k = 0; k < b->n_out; k++)
        if (weft_tensor_zeros(WEFT_FLOAT64, 0, NULL, &b->outs[k]) != WEFT_OK)
            die("out", WEFT_ENOMEM);
    if (weft_tensor_zeros(WEFT_FLOAT64, 0, NULL, &b->x) != WEFT_OK) die("x", WEFT_ENOMEM);
    free(outs);
    free(v);
    free(has_succ);
}

static void free_function(fn_bench_t *b)
{
    for (size_t k = 0; k < b->n_out; k++) weft_tensor_release(b->outs[k]);
    free(b->outs);
    weft_tensor_release(b->x);
    weft_function_destroy(b->f);
    weft_graph_destroy(b->g);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double fn_run_ns(fn_bench_t *b)
{
    uint64_t t0 = now_ns();
    weft_status_t st = weft_function_call(b->f, 1, &b->x, b->n_out, b->outs);
    uint64_t t1 = now_ns();
    if (st != WEFT_OK) die(weft_function_last_error(b->f), st);
    for (size_t k = 0; k < b->n_out; k++)
        if (weft_tensor_flat_get(b->outs[k], 0) != 1.0) die("output not marked", WEFT_EINVAL);
    return (double)(t1 - t0);
}

/* ---- the raw DAG --------------------------------------------------------------- */

static atomic_uchar *done;

static weft_status_t dag_body(void *arg, const weft_task_ctx_t *ctx)
{
    (void)ctx;
    /* relaxed: PROTOCOL work 0 - a mark, checked after the run */
    atomic_store_explicit(&done[(uintptr_t)arg], 1, memory_order_relaxed);
    return WEFT_OK;
}

static double dag_run_ns(weft_dag_run_t *run, uint32_t n)
{
    uint64_t t0 = now_ns();
    weft_status_t st = weft_dag_run_execute(run, NULL);
    uint64_t t1 = now_ns();
    if (st != WEFT_OK) die("dag run", st);
    for (uint32_t i = 0; i < n; i++) {
        if (!atomic_load_explicit(&done[i], memory_order_relaxed)) die("dag check", WEFT_EINVAL);
        atomic_store_explicit(&done[i], 0, memory_order_relaxed);
    }
    return (double)(t1 - t0);
}

static weft_dag_t *build_dag(const shape_t *s)
{
    weft_dag_t *d;
    weft_status_t st = weft_dag_create(NULL, &d);
    for (uint32_t i = 0; st == WEFT_OK && i < s->n; i++)
        st = weft_dag_add_node(d, dag_body, (void *)(uintptr_t)i, NULL, NULL);
    for (uint32_t i = 0; st == WEFT_OK && i < s->n; i++)
        for (uint32_t e = s->off[i]; st == WEFT_OK && e < s->off[i + 1]; e++)
            st = weft_dag_add_edge(d, s->pred[e], i);
    if (st == WEFT_OK) st = weft_dag_finalize(d);
    if (st != WEFT_OK) die("dag build", st);
    return d;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void bench(const shape_t *s, int threads, int reps)
{
    weft_pool_t *pool;
    weft_status_t st = weft_pool_create(threads, NULL, &pool);
    if (st != WEFT_OK) die("pool", st);
    fn_bench_t fb;
    uint64_t t0 = now_ns();
    build_function(s, pool, &fb);
    fprintf(stderr, "callbench: graph + compile of %u nodes: %.0f ms\n", s->n,
            (double)(now_ns() - t0) / 1e6);
    weft_dag_t *dag = build_dag(s);
    weft_dag_run_t *run;
    if ((st = weft_dag_run_create(dag, pool, NULL, &run)) != WEFT_OK) die("run", st);
    double *tf = malloc(reps * sizeof *tf), *td = malloc(reps * sizeof *td);
    fn_run_ns(&fb);
    dag_run_ns(run, s->n);
    for (int r = 0; r < reps; r++) { /* alternate: both see the same machine state */
        tf[r] = fn_run_ns(&fb);
        td[r] = dag_run_ns(run, s->n);
    }
    qsort(tf, reps, sizeof *tf, cmp_d);
    qsort(td, reps, sizeof *td, cmp_d);
    printf("callbench n=%u threads=%d ns_per_node=%.1f dag_ns_per_task=%.1f\n", s->n, threads,
           tf[reps / 2] / s->n, td[reps / 2] / s->n);
    fflush(stdout);
    free(tf);
    free(td);
    weft_dag_run_destroy(run);
    weft_dag_destroy(dag);
    free_function(&fb);
    weft_pool_destroy(pool);
}

int main(int argc, char **argv)
{
    long n = 100000, reps = 5;
    int threads = 0;
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && !strcmp(argv[i], "--size")) n = atol(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--threads")) threads = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--reps")) reps = atol(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--size N] [--threads T] [--reps R]\n"
                            "  no arguments: N=100000 at T=1 and T=2, R=5\n", argv[0]);
            return 2;
        }
    }
    if (n < 1 || n > (1L << 30) || reps < 1 || threads < 0) {
        fprintf(stderr, "callbench: bad arguments\n");
        return 2;
    }
    shape_t s;
    make_shape(&s, (uint32_t)n);
    done = calloc((size_t)n, sizeof *done);
    if (!done) die("done", WEFT_ENOMEM);
    if (threads) bench(&s, threads, (int)reps);
    else
        for (int t = 1; t <= 2; t++) bench(&s, t, (int)reps);
    free((void *)done);
    free(s.off);
    free(s.pred);
    return 0;
}
