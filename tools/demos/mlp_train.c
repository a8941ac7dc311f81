/* mlp_train: trains the demo MLP (mlp_train_core.h: 4 tanh layers of width
 * 256, MSE, SGD as in-place updates) with weft and with the hand-written C +
 * cblas reference from the same initial parameters and data, alternating the
 * configurations in blocks of consecutive steps (as a training loop runs
 * them; --block 1: step by step) in one process, and prints per configuration
 *
 *   mlp impl=weft|handc batch=B threads=T ms_per_step=X loss_first=A loss_last=B shards=S
 *
 * (ms_per_step: the median over the steps). weft at T threads runs on a pool
 * of T workers with one-thread BLAS inside nodes; hand-C at T threads runs
 * OpenBLAS with T threads. shards: the weft graph's batch split into S row
 * blocks, each with its own forward / backward chain (1: the plain model
 * graph, as weft-mlp-gen writes it; hand-C: always 1). Then, per batch, the
 * ratios measured in this run:
 *
 *   mlp_ratio batch=B threads=T shards=S weft_over_handc=X  (time; < 1: weft faster)
 *   mlp_speedup batch=B impl=weft|handc shards=S t2_over_t1=X  (T=1 time / T=2 time)
 *   mlp_stats batch=B threads=T shards=S nodes=N gemm=G inplace=I steady_allocs=A
 *
 * (steady_allocs: buffers weft's buffer pool allocated after the second step.)
 * No arguments: batch 64 and 1024, T = 1 and 2, weft with shards 1 and 2,
 * every line. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mlp_train_core.h"

#define MAX_THREADS 8     /* --threads up to this (issue 15 asks for steady_allocs at 8) */
#define DEFAULT_THREADS 2 /* no --threads: T = 1 and 2 */

typedef struct opts {
    int batch, threads, steps, width, print_graph, shards, block, impls;
    double lr;
    unsigned long long seed;
    const char *save, *exclude;
} opts_t;

#define MAX_CONFS 8

/* One trained configuration. */
typedef struct conf {
    mlp_impl_t impl;
    int threads, shards;
    mlp_data_t *data;
    mlp_trainer_t *tr;
    double *ms;
    double loss_first, loss_last, median;
    uint64_t allocs_warm;
} conf_t;

typedef struct run {
    conf_t c[MAX_CONFS];
    int n;
} run_t;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const double *v, int n)
{
    double *c = malloc((size_t)n * sizeof *c);
    if (!c) return NAN;
    memcpy(c, v, (size_t)n * sizeof *c);
    qsort(c, (size_t)n, sizeof *c, cmp_double);
    double m = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
    free(c);
    return m;
}

static void usage(void)
{
    printf("usage: mlp_train [--batch B] [--threads T] [--steps S] [--width W] [--lr LR]\n"
           "                 [--seed N] [--shards S] [--exclude REWRITE] [--save FILE]\n"
           "                 [--block K] [--impl weft|handc|both] [--print-graph]\n"
           "Trains a 4-layer tanh MLP with weft and with hand-written C + cblas, alternating\n"
           "blocks of K consecutive steps (default 5; 1: step by step, where every weft\n"
           "step starts on parked workers), and prints one line per implementation and\n"
           "thread count (median step time).\n"
           "Defaults: batch 64 and 1024, threads 1 and 2, width 256, lr 0.05, seed 1,\n"
           "steps 100 (batch < 512) or 20, weft shards 1 and 2. --shards S (1..4) splits\n"
           "the weft graph's batch\n"
           "into S row blocks with their own chains; --exclude drops a rewrite (name or tag)\n"
           "from weft's compile. --save FILE writes the step graph as weft JSON.\n"
           "--impl runs one implementation only (for a profiler; no ratio lines).\n");
}

/* --impl: a bit per implementation (1 weft, 2 hand-C); 0 for a bad name. */
static int parse_impl(const char *v)
{
    return !strcmp(v, "weft") ? 1 : !strcmp(v, "handc") ? 2 : !strcmp(v, "both") ? 3 : 0;
}

static int parse(int argc, char **argv, opts_t *o)
{
    *o = (opts_t){0, 0, 0, 256, 0, 0, 5, 3, 0.05, 1, NULL, NULL};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) return usage(), 1;
        if (!strcmp(a, "--print-graph")) { o->print_graph = 1; continue; }
        if (!v) return fprintf(stderr, "mlp_train: %s needs a value\n", a), 2;
        if (!strcmp(a, "--batch")) o->batch = atoi(v);
        else if (!strcmp(a, "--threads")) o->threads = atoi(v);
        else if (!strcmp(a, "--steps")) o->steps = atoi(v);
        else if (!strcmp(a, "--width")) o->width = atoi(v);
        else if (!strcmp(a, "--lr")) o->lr = atof(v);
        else if (!strcmp(a, "--seed")) o->seed = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--save")) o->save = v;
        else if (!strcmp(a, "--shards")) o->shards = atoi(v);
        else if (!strcmp(a, "--exclude")) o->exclude = v;
        else if (!strcmp(a, "--block")) o->block = atoi(v);
        else if (!strcmp(a, "--impl")) o->impls = parse_impl(v);
        else return fprintf(stderr, "mlp_train: unknown option %s (try --help)\n", a), 2;
        i++;
    }
    if (o->batch < 0 || o->width < 1 || o->steps < 0 || o->threads < 0 ||
        o->threads > MAX_THREADS || !(o->lr > 0) || o->shards < 0 || o->shards > 4 ||
        o->block < 1 || o->impls == 0 ||
        (o->batch && o->shards > o->batch))
        return fprintf(stderr, "mlp_train: bad option value (threads: 1..%d)\n", MAX_THREADS), 2;
    return 0;
}

/* Counts the nodes of the compiled graph ("index: Op{props}(inputs)" lines)
 * whose op part contains `what` and not `but_not`: up to the '(' of the
 * inputs, i.e. after the props' closing "}" when there are props (a
 * Composite's props hold parentheses). */
static int count_nodes(weft_function_t *f, const char *what, const char *but_not)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) return -1;
    weft_function_print(f, m);
    fclose(m);
    int n = 0;
    for (char *line = buf ? strtok(buf, "\n") : NULL; line; line = strtok(NULL, "\n")) {
        char *op = strstr(line, ": "), *paren = op ? strstr(op, "}(") : NULL;
        if (paren) paren++;
        else paren = op ? strchr(op, '(') : NULL;
        if (!paren) continue;
        *paren = '\0';
        n += strstr(op, what) && !(but_not && strstr(op, but_not));
    }
    free(buf);
    return n;
}

static uint64_t allocs(weft_function_t *f)
{
    weft_function_stats_t s = {sizeof s, 0, 0, 0, 0, 0};
    return weft_function_stats(f, &s) == WEFT_OK ? s.buffers_allocated : 0;
}

static int add_conf(run_t *r, const mlp_config_t *cfg, mlp_impl_t impl, int threads,
                    weft_pool_t **pools, int steps)
{
    conf_t *c = &r->c[r->n++];
    mlp_config_t k = *cfg;
    k.shards = impl == MLP_IMPL_WEFT ? cfg->shards : 1;
    *c = (conf_t){impl, threads, k.shards, NULL, NULL, NULL, 0, 0, 0, 0};
    if (mlp_data_create(&k, &c->data) != WEFT_OK) return 1;
    if (mlp_trainer_create(c->data, impl, pools[threads - 1], threads, &c->tr) != WEFT_OK)
        return 1;
    return !(c->ms = calloc((size_t)steps, sizeof(double)));
}

/* weft at each shard count and thread count, then hand-C at each thread count. */
static int make_confs(run_t *r, const opts_t *o, int batch, weft_pool_t **pools, int steps)
{
    int t_lo = o->threads ? o->threads : 1, t_hi = o->threads ? o->threads : DEFAULT_THREADS;
    int s_lo = o->shards ? o->shards : 1, s_hi = o->shards ? o->shards : 2;
    mlp_config_t cfg = {batch, o->width, o->lr, o->seed, 1, o->exclude};
    int rc = 0;
    for (int sh = s_lo; !rc && (o->impls & 1) && sh <= s_hi; sh++) {
        cfg.shards = sh;
        for (int t = t_lo; !rc && t <= t_hi; t++)
            rc = add_conf(r, &cfg, MLP_IMPL_WEFT, t, pools, steps);
    }
    for (int t = t_lo; !rc && (o->impls & 2) && t <= t_hi; t++)
        rc = add_conf(r, &cfg, MLP_IMPL_HANDC, t, pools, steps);
    return rc;
}

static int step_one(conf_t *c, int s)
{
    double loss, t0 = now_ms();
    if (mlp_trainer_step(c->tr, &loss) != WEFT_OK) return 1;
    c->ms[s] = now_ms() - t0;
    if (s == 0) c->loss_first = loss;
    c->loss_last = loss;
    if (s == 1) c->allocs_warm = allocs(mlp_trainer_function(c->tr));
    return 0;
}

/* Steps [s0, s1) of every configuration, each configuration's steps back to
 * back, in an order that rotates with the block so no configuration always
 * follows the same one. */
static int step_block(run_t *r, int s0, int s1, int block_no)
{
    for (int i = 0; i < r->n; i++) {
        conf_t *c = &r->c[(i + block_no) % r->n];
        for (int s = s0; s < s1; s++)
            if (step_one(c, s)) return 1;
    }
    return 0;
}

static const conf_t *find(const run_t *r, mlp_impl_t impl, int threads, int shards)
{
    for (int i = 0; i < r->n; i++)
        if (r->c[i].impl == impl && r->c[i].threads == threads && r->c[i].shards == shards)
            return &r->c[i];
    return NULL;
}

static void print_ratios(const run_t *r, int batch)
{
    for (int i = 0; i < r->n; i++) {
        const conf_t *c = &r->c[i], *h = find(r, MLP_IMPL_HANDC, c->threads, 1);
        if (c->impl == MLP_IMPL_WEFT && h)
            printf("mlp_ratio batch=%d threads=%d shards=%d weft_over_handc=%.3f\n", batch,
                   c->threads, c->shards, c->median / h->median);
    }
    for (int i = 0; i < r->n; i++) {
        const conf_t *c = &r->c[i], *c2 = find(r, c->impl, 2, c->shards);
        if (c->threads == 1 && c2)
            printf("mlp_speedup batch=%d impl=%s shards=%d t2_over_t1=%.3f\n", batch,
                   c->impl == MLP_IMPL_WEFT ? "weft" : "handc", c->shards, c->median / c2->median);
    }
}

static void print_run(run_t *r, int batch, int steps)
{
    for (int i = 0; i < r->n; i++) {
        conf_t *c = &r->c[i];
        c->median = median(c->ms, steps);
        printf("mlp impl=%s batch=%d threads=%d ms_per_step=%.3f loss_first=%.9g "
               "loss_last=%.9g shards=%d\n", c->impl == MLP_IMPL_WEFT ? "weft" : "handc", batch,
               c->threads, c->median, c->loss_first, c->loss_last, c->shards);
    }
    print_ratios(r, batch);
    for (int i = 0; i < r->n; i++) {
        weft_function_t *f = mlp_trainer_function(r->c[i].tr);
        if (!f) continue;
        printf("mlp_stats batch=%d threads=%d shards=%d nodes=%zu gemm=%d inplace=%d "
               "steady_allocs=%llu\n", batch, r->c[i].threads, r->c[i].shards,
               weft_function_n_nodes(f), count_nodes(f, ": Gemm", NULL),
               count_nodes(f, "inplace=", "inplace=-1"),
               (unsigned long long)(allocs(f) - r->c[i].allocs_warm));
    }
    fflush(stdout);
}

static void free_run(run_t *r)
{
    for (int i = 0; i < r->n; i++) {
        mlp_trainer_destroy(r->c[i].tr);
        mlp_data_destroy(r->c[i].data);
        free(r->c[i].ms);
    }
}

static int run_batch(const opts_t *o, int batch, weft_pool_t **pools)
{
    int steps = o->steps ? o->steps : (batch < 512 ? 100 : 20);
    run_t r;
    memset(&r, 0, sizeof r);
    int rc = make_confs(&r, o, batch, pools, steps);
    if (!rc && o->print_graph) weft_function_print(mlp_trainer_function(r.c[0].tr), stdout);
    for (int s = 0, b = 0; !rc && s < steps; s += o->block, b++)
        rc = step_block(&r, s, s + o->block < steps ? s + o->block : steps, b);
    if (!rc) print_run(&r, batch, steps);
    free_run(&r);
    return rc;
}

int main(int argc, char **argv)
{
    opts_t o;
    int rc = parse(argc, argv, &o);
    if (rc) return rc == 1 ? 0 : rc;
    if (weft_blas_check() != WEFT_OK) {
        fprintf(stderr, "mlp_train: the serial OpenBLAS build is not supported\n");
        return 1;
    }
    if (o.save) {
        mlp_config_t cfg = {o.batch ? o.batch : 64, o.width, o.lr, o.seed, o.shards, NULL};
        /* shards 0 (not given): the plain model graph */
        return mlp_save_graph(&cfg, o.save) == WEFT_OK ? 0 : 1;
    }
    weft_pool_t *pools[MAX_THREADS] = {NULL};
    for (int t = 1; !rc && t <= (o.threads ? o.threads : DEFAULT_THREADS); t++)
        if ((!o.threads || o.threads == t) && weft_pool_create(t, NULL, &pools[t - 1]) != WEFT_OK)
            rc = 1;
    int batches[2] = {64, 1024}, nb = o.batch ? 1 : 2;
    if (o.batch) batches[0] = o.batch;
    for (int i = 0; !rc && i < nb; i++) rc = run_batch(&o, batches[i], pools);
    for (int t = 0; t < MAX_THREADS; t++) weft_pool_destroy(pools[t]);
    return rc ? 1 : 0;
}
