/* weft-callbench's small-node lines: the cost of one small elementwise node
 * in a compiled function (docs/performance-notes.md, the weft-callbench rows):
 *
 *   callbench graph=tanh_chain n=N len=1 threads=T mode=M ns_per_node=X
 *   callbench graph=random_small n=N len=1 threads=T mode=M ns_per_node=X
 *
 * tanh_chain: y = tanh(tanh(...tanh(x))), N nodes, x a float64 vector of
 * length 1. random_small: the random shape of callbench.c (docs/
 * performance-notes.md §6) where a node with one predecessor is Tanh and one
 * with more is Add or Maximum (alternating by index) of its first two; every
 * sink is an output. Both are compiled in mode M with the "fusion" rewrites
 * excluded, so every node runs, and called with caller-supplied outputs.
 * ns_per_node = (time per call - time per call of a 1-node tanh chain) /
 * (N - 1); per-call times are medians over batches of calls, the two
 * functions' batches alternated so both see the same machine state. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "callbench_int.h"
#include "weft/weft.h"

typedef callbench_fn_t small_fn_t;

static void fail(const char *what, weft_status_t st, const weft_function_t *f)
{
    fprintf(stderr, "callbench: %s: %s %s\n", what, weft_status_name(st),
            weft_function_last_error(f));
    exit(1);
}

/* The node for shape node i with k predecessors in p (i == 0: x); NULL on
 * error (kept on g). */
static weft_var_t *small_node(weft_graph_t *g, uint32_t i, uint32_t k, weft_var_t **p)
{
    if (k == 1) return weft_tanh(g, p[0]);
    return i % 2 ? weft_maximum(g, p[0], p[1]) : weft_add(g, p[0], p[1]);
}

/* Builds the graph of shape s (NULL: a tanh chain of n nodes). */
static weft_status_t small_graph(weft_graph_t *g, const callbench_shape_t *s, uint32_t n,
                                 weft_var_t *x, weft_var_t **v, char *has_succ)
{
    weft_status_t st = WEFT_OK;
    for (uint32_t i = 0; st == WEFT_OK && i < n; i++) {
        weft_var_t *p[4];
        uint32_t k = 0;
        if (!s && i > 0) p[k++] = v[i - 1];
        for (uint32_t e = s ? s->off[i] : 0; s && e < s->off[i + 1]; e++) {
            p[k++] = v[s->pred[e]];
            has_succ[s->pred[e]] = 1;
        }
        if (k == 0) p[k++] = x;
        if (!s && i > 0) has_succ[i - 1] = 1;
        st = (v[i] = small_node(g, i, k, p)) ? WEFT_OK : weft_graph_error(g);
    }
    return st;
}

static void small_build(const callbench_shape_t *s, uint32_t n, weft_pool_t *pool,
                        const char *mode, small_fn_t *b)
{
    const weft_type_t *vec;
    weft_var_t *x, **v = malloc(n * sizeof *v), **outs = malloc(n * sizeof *outs);
    char *has_succ = calloc(n, 1);
    int64_t len = 1;
    if (!v || !outs || !has_succ) fail("build", WEFT_ENOMEM, NULL);
    weft_status_t st = weft_graph_create(NULL, &b->g);
    if (st == WEFT_OK) st = weft_type_tensor(b->g, WEFT_FLOAT64, 1, &len, &vec);
    if (st == WEFT_OK)
        st = (x = weft_var_create(b->g, vec, "x")) ? WEFT_OK : weft_graph_error(b->g);
    if (st == WEFT_OK) st = small_graph(b->g, s, n, x, v, has_succ);
    if (st != WEFT_OK) {
        fprintf(stderr, "callbench: %s\n", weft_graph_error_message(b->g));
        fail("building the graph", st, NULL);
    }
    b->n_out = 0;
    for (uint32_t i = 0; i < n; i++)
        if (!has_succ[i]) outs[b->n_out++] = v[i];
    static const char *const exclude[] = {"fusion", "inplace"};
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.mode = mode;
    o.pool = pool;
    o.n_exclude = getenv("NOINPL") ? 2 : 1;
    o.exclude = exclude;
    if ((st = weft_function_compile(1, &x, b->n_out, outs, 0, NULL, &o, &b->f)) != WEFT_OK)
        fail("compile", st, NULL);
    b->outs = malloc(b->n_out * sizeof *b->outs);
    if (!b->outs) fail("outputs", WEFT_ENOMEM, NULL);
    for (size_t k = 0; k < b->n_out; k++)
        if (weft_tensor_zeros(WEFT_FLOAT64, 1, &len, &b->outs[k]) != WEFT_OK)
            fail("outputs", WEFT_ENOMEM, NULL);
    if (weft_tensor_full(WEFT_FLOAT64, 1, &len, 0.5, &b->x) != WEFT_OK)
        fail("x", WEFT_ENOMEM, NULL);
    free(v);
    free(outs);
    free(has_succ);
}

/* Mean ns per call over `calls` calls. */
static double small_batch(small_fn_t *b, int calls)
{
    uint64_t t0 = callbench_now_ns();
    for (int c = 0; c < calls; c++) {
        weft_status_t st = weft_function_call(b->f, 1, &b->x, b->n_out, b->outs);
        if (st != WEFT_OK) fail("call", st, b->f);
    }
    return (double)(callbench_now_ns() - t0) / calls;
}

/* One line: graph `name` of n nodes (s NULL: the tanh chain) at `threads`. */
void callbench_small(const char *name, const callbench_shape_t *s, uint32_t n, int threads,
                     const char *mode)
{
    enum { BATCHES = 9 };
    weft_pool_t *pool;
    weft_status_t st = weft_pool_create(threads, NULL, &pool);
    if (st != WEFT_OK) fail("pool", st, NULL);
    small_fn_t one, big;
    small_build(NULL, 1, pool, mode, &one);
    small_build(s, n, pool, mode, &big);
    /* warm-up: plans, buffers; about 20 ms per batch of the big function */
    double per = small_batch(&big, 10);
    small_batch(&one, 1000);
    int calls = per > 0 ? (int)(2e7 / per) : 1000;
    calls = calls < 10 ? 10 : calls > 100000 ? 100000 : calls;
    double tb[BATCHES], t1[BATCHES];
    for (int r = 0; r < BATCHES; r++) {
        tb[r] = small_batch(&big, calls);
        t1[r] = small_batch(&one, calls);
    }
    double mb = callbench_median(tb, BATCHES), m1 = callbench_median(t1, BATCHES);
    printf("callbench graph=%s n=%u len=1 threads=%d mode=%s ns_per_node=%.1f\n", name, n,
           threads, mode, n > 1 ? (mb - m1) / (n - 1) : mb);
    fflush(stdout);
    callbench_fn_free(&big);
    callbench_fn_free(&one);
    weft_pool_destroy(pool);
}
