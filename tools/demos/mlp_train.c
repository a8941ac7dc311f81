/* mlp_train: trains the demo MLP (mlp_train_core.h: 4 tanh layers of width
 * 256, MSE, SGD as in-place updates) with weft and with the hand-written C +
 * cblas reference from the same initial parameters and data, alternating the
 * implementations step by step in one process, and prints per configuration
 *
 *   mlp impl=weft|handc batch=B threads=T ms_per_step=X loss_first=A loss_last=B
 *
 * (ms_per_step: the median over the steps). weft at T threads runs on a pool
 * of T workers with one-thread BLAS inside nodes; hand-C at T threads runs
 * OpenBLAS with T threads. Then, per batch, the ratios measured in this run:
 *
 *   mlp_ratio batch=B threads=T weft_over_handc=X   (time ratio, < 1: weft faster)
 *   mlp_speedup batch=B impl=weft|handc t2_over_t1=X  (T=1 time / T=2 time)
 *   mlp_stats batch=B threads=T nodes=N gemm=G inplace=I steady_allocs=A
 *
 * No arguments: batch 64 and 1024, T = 1 and 2, every line. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mlp_train_core.h"

#define MAX_THREADS 2
#define N_IMPL 2

typedef struct opts {
    int batch, threads, steps, width, print_graph, shards;
    double lr;
    unsigned long long seed;
    const char *save, *exclude;
} opts_t;

typedef struct run {
    mlp_trainer_t *tr[MAX_THREADS][N_IMPL];
    double *ms[MAX_THREADS][N_IMPL];
    double loss_first[MAX_THREADS][N_IMPL], loss_last[MAX_THREADS][N_IMPL];
    double median[MAX_THREADS][N_IMPL];
    uint64_t allocs_warm[MAX_THREADS];
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
           "                 [--print-graph]\n"
           "Trains a 4-layer tanh MLP with weft and with hand-written C + cblas, alternating\n"
           "step by step, and prints one line per implementation and thread count.\n"
           "Defaults: batch 64 and 1024, threads 1 and 2, width 256, lr 0.05, seed 1,\n"
           "steps 100 (batch < 512) or 20, shards 1. --shards S splits the weft graph's batch\n"
           "into S row blocks with their own chains; --exclude drops a rewrite (name or tag)\n"
           "from weft's compile. --save FILE writes the step graph as weft JSON.\n");
}

static int parse(int argc, char **argv, opts_t *o)
{
    *o = (opts_t){0, 0, 0, 256, 0, 1, 0.05, 1, NULL, NULL};
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
        else return fprintf(stderr, "mlp_train: unknown option %s (try --help)\n", a), 2;
        i++;
    }
    if (o->batch < 0 || o->width < 1 || o->steps < 0 || o->threads < 0 ||
        o->threads > MAX_THREADS || !(o->lr > 0) || o->shards < 1 ||
        (o->batch && o->shards > o->batch))
        return fprintf(stderr, "mlp_train: bad option value (threads: 1..%d)\n", MAX_THREADS), 2;
    return 0;
}

/* Counts the nodes of the compiled graph ("index: Op{props}(inputs)" lines)
 * whose op part (before the first '(') contains `what` and not `but_not`. */
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
        char *op = strstr(line, ": "), *paren = op ? strchr(op, '(') : NULL;
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

static int make_trainers(run_t *r, const mlp_data_t *d, weft_pool_t **pools, int t_lo,
                         int t_hi, int steps)
{
    for (int t = t_lo; t <= t_hi; t++) {
        for (int im = 0; im < N_IMPL; im++) {
            if (mlp_trainer_create(d, (mlp_impl_t)im, pools[t - 1], t, &r->tr[t - 1][im]) !=
                WEFT_OK)
                return 1;
            if (!(r->ms[t - 1][im] = calloc((size_t)steps, sizeof(double)))) return 1;
        }
    }
    return 0;
}

/* One step of every configuration, in an order that rotates with the step
 * so no configuration always follows the same one. */
static int step_all(run_t *r, int s, int t_lo, int t_hi)
{
    int n_cfg = (t_hi - t_lo + 1) * N_IMPL;
    for (int c = 0; c < n_cfg; c++) {
        int k = (c + s) % n_cfg, t = t_lo + k / N_IMPL, im = k % N_IMPL;
        double loss, t0 = now_ms();
        if (mlp_trainer_step(r->tr[t - 1][im], &loss) != WEFT_OK) return 1;
        r->ms[t - 1][im][s] = now_ms() - t0;
        if (s == 0) r->loss_first[t - 1][im] = loss;
        r->loss_last[t - 1][im] = loss;
    }
    if (s == 1)
        for (int t = t_lo; t <= t_hi; t++)
            r->allocs_warm[t - 1] = allocs(mlp_trainer_function(r->tr[t - 1][MLP_IMPL_WEFT]));
    return 0;
}

static void print_run(run_t *r, int batch, int t_lo, int t_hi, int steps)
{
    static const char *names[N_IMPL] = {"weft", "handc"};
    for (int t = t_lo; t <= t_hi; t++)
        for (int im = 0; im < N_IMPL; im++) {
            r->median[t - 1][im] = median(r->ms[t - 1][im], steps);
            printf("mlp impl=%s batch=%d threads=%d ms_per_step=%.3f loss_first=%.9g "
                   "loss_last=%.9g\n", names[im], batch, t, r->median[t - 1][im],
                   r->loss_first[t - 1][im], r->loss_last[t - 1][im]);
        }
    for (int t = t_lo; t <= t_hi; t++)
        printf("mlp_ratio batch=%d threads=%d weft_over_handc=%.3f\n", batch, t,
               r->median[t - 1][MLP_IMPL_WEFT] / r->median[t - 1][MLP_IMPL_HANDC]);
    for (int im = 0; t_lo == 1 && t_hi == 2 && im < N_IMPL; im++)
        printf("mlp_speedup batch=%d impl=%s t2_over_t1=%.3f\n", batch, names[im],
               r->median[0][im] / r->median[1][im]);
    for (int t = t_lo; t <= t_hi; t++) {
        weft_function_t *f = mlp_trainer_function(r->tr[t - 1][MLP_IMPL_WEFT]);
        printf("mlp_stats batch=%d threads=%d nodes=%zu gemm=%d inplace=%d steady_allocs=%llu\n",
               batch, t, weft_function_n_nodes(f), count_nodes(f, ": Gemm", NULL),
               count_nodes(f, "inplace=", "inplace=-1"),
               (unsigned long long)(allocs(f) - r->allocs_warm[t - 1]));
    }
    fflush(stdout);
}

static void free_run(run_t *r)
{
    for (int t = 0; t < MAX_THREADS; t++)
        for (int im = 0; im < N_IMPL; im++) {
            mlp_trainer_destroy(r->tr[t][im]);
            free(r->ms[t][im]);
        }
}

static int run_batch(const opts_t *o, int batch, weft_pool_t **pools)
{
    int t_lo = o->threads ? o->threads : 1, t_hi = o->threads ? o->threads : MAX_THREADS;
    int steps = o->steps ? o->steps : (batch < 512 ? 100 : 20);
    mlp_config_t cfg = {batch, o->width, o->lr, o->seed, o->shards, o->exclude};
    mlp_data_t *d = NULL;
    run_t r;
    memset(&r, 0, sizeof r);
    int rc = mlp_data_create(&cfg, &d) != WEFT_OK || make_trainers(&r, d, pools, t_lo, t_hi, steps);
    if (!rc && o->print_graph)
        weft_function_print(mlp_trainer_function(r.tr[t_lo - 1][MLP_IMPL_WEFT]), stdout);
    for (int s = 0; !rc && s < steps; s++) rc = step_all(&r, s, t_lo, t_hi);
    if (!rc) print_run(&r, batch, t_lo, t_hi, steps);
    free_run(&r);
    mlp_data_destroy(d);
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
        return mlp_save_graph(&cfg, o.save) == WEFT_OK ? 0 : 1;
    }
    weft_pool_t *pools[MAX_THREADS] = {NULL, NULL};
    for (int t = 1; !rc && t <= MAX_THREADS; t++)
        if ((!o.threads || o.threads == t) && weft_pool_create(t, NULL, &pools[t - 1]) != WEFT_OK)
            rc = 1;
    int batches[2] = {64, 1024}, nb = o.batch ? 1 : 2;
    if (o.batch) batches[0] = o.batch;
    for (int i = 0; !rc && i < nb; i++) rc = run_batch(&o, batches[i], pools);
    for (int t = 0; t < MAX_THREADS; t++) weft_pool_destroy(pools[t]);
    return rc ? 1 : 0;
}
