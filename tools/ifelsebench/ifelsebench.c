/* weft-ifelsebench: the cost of an IfElse branch that is not taken.
 *
 * y = IfElse(c, tanh^N(x), -x): a then branch of N chained Tanh nodes on a
 * float64 vector of `len` = 64 elements, an else branch of one Neg; and,
 * for large tensors, y = IfElse(c, sum(tanh^8(x)), s) with x of `len`
 * elements and s a 0-d input, so the else side costs the same whatever
 * len. Compiled in mode none (no fusion: the chain stays N nodes), called
 * with c = 0 and a caller-supplied output. Per (N, len, threads) it prints
 *
 *   ifelsebench untaken_nodes=N elems=len threads=T us_per_call=X
 *     allocs_per_call=Y taken_us_per_call=Z
 *
 * us_per_call: median over 7 rounds of the mean call time with c false;
 * allocs_per_call: buffers the function's pool allocated per call in those
 * rounds (weft_function_stats); taken_us_per_call: the same call with c
 * true, for scale. Options: --quick (fewer sizes and calls); --nodes N (only
 * the untaken_nodes=N lines of the chain form, e.g. for a profiler). */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "weft/weft.h"

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define CHECK(e)                                                                   \
    do {                                                                           \
        if (!(e)) {                                                                \
            fprintf(stderr, "ifelsebench: %s failed (%s:%d)\n", #e, __FILE__, __LINE__); \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

/* Inputs x, c and (reduced form) s. */
static weft_function_t *build(weft_graph_t *g, int n, int64_t len, int threads, bool reduced)
{
    const weft_type_t *tx, *tc;
    CHECK(weft_type_tensor(g, WEFT_FLOAT64, 1, &len, &tx) == WEFT_OK);
    CHECK(weft_type_tensor(g, WEFT_FLOAT64, 0, NULL, &tc) == WEFT_OK);
    weft_var_t *x = weft_var_create(g, tx, "x"), *c = weft_var_create(g, tc, "c"), *t = x;
    weft_var_t *sv = weft_var_create(g, tc, "s");
    for (int i = 0; i < n; i++) t = weft_tanh(g, t);
    weft_var_t *y = reduced ? weft_ifelse1(g, c, weft_sum(g, t, 0, NULL, false), sv)
                            : weft_ifelse1(g, c, t, weft_neg(g, x));
    weft_var_t *in[3] = {x, c, sv};
    CHECK(y != NULL);
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.mode = "none";
    o.threads = threads;
    weft_function_t *f = NULL;
    CHECK(weft_function_compile(reduced ? 3 : 2, in, 1, &y, 0, NULL, &o, &f) == WEFT_OK);
    return f;
}

/* Median over rounds of the mean call time (us); *allocs: pool buffers
 * allocated per call over the rounds (after the warm-up). */
static double time_calls(weft_function_t *f, size_t n_in, weft_tensor_t **args,
                         weft_tensor_t *out, int calls, double *allocs)
{
    enum { ROUNDS = 7 };
    double t[ROUNDS];
    for (int k = 0; k < 3; k++) CHECK(weft_function_call(f, n_in, args, 1, &out) == WEFT_OK);
    weft_function_stats_t s0 = {.size = sizeof s0}, s1 = {.size = sizeof s1};
    CHECK(weft_function_stats(f, &s0) == WEFT_OK);
    for (int r = 0; r < ROUNDS; r++) {
        double t0 = now_us();
        for (int k = 0; k < calls; k++)
            CHECK(weft_function_call(f, n_in, args, 1, &out) == WEFT_OK);
        t[r] = (now_us() - t0) / calls;
    }
    CHECK(weft_function_stats(f, &s1) == WEFT_OK);
    *allocs = (double)(s1.buffers_allocated - s0.buffers_allocated) / (ROUNDS * (double)calls);
    qsort(t, ROUNDS, sizeof *t, cmp_d);
    return t[ROUNDS / 2];
}

static void run(int n, int64_t len, int threads, int calls, bool reduced)
{
    weft_graph_t *g = NULL;
    CHECK(weft_graph_create(NULL, &g) == WEFT_OK);
    weft_function_t *f = build(g, n, len, threads, reduced);
    weft_tensor_t *xv = NULL, *out = NULL, *cf = NULL, *ct = NULL, *sv = NULL;
    CHECK(weft_tensor_full(WEFT_FLOAT64, 1, &len, 0.5, &xv) == WEFT_OK);
    CHECK(weft_tensor_zeros(WEFT_FLOAT64, reduced ? 0 : 1, &len, &out) == WEFT_OK);
    CHECK(weft_tensor_full(WEFT_FLOAT64, 0, NULL, 0.0, &cf) == WEFT_OK);
    CHECK(weft_tensor_full(WEFT_FLOAT64, 0, NULL, 1.0, &ct) == WEFT_OK);
    CHECK(weft_tensor_full(WEFT_FLOAT64, 0, NULL, -0.5, &sv) == WEFT_OK);
    weft_tensor_t *af[3] = {xv, cf, sv}, *at[3] = {xv, ct, sv};
    size_t n_in = reduced ? 3 : 2;
    double allocs = 0, allocs_t = 0;
    double us = time_calls(f, n_in, af, out, calls, &allocs);
    CHECK(weft_tensor_flat_get(out, 0) == -0.5); /* the else side */
    double us_t = time_calls(f, n_in, at, out, calls, &allocs_t);
    printf("ifelsebench untaken_nodes=%d elems=%lld threads=%d us_per_call=%.3f "
           "allocs_per_call=%.3f taken_us_per_call=%.3f\n",
           n, (long long)len, threads, us, allocs, us_t);
    fflush(stdout);
    weft_tensor_release(xv);
    weft_tensor_release(out);
    weft_tensor_release(cf);
    weft_tensor_release(ct);
    weft_tensor_release(sv);
    CHECK(weft_function_destroy(f) == WEFT_OK);
    weft_graph_destroy(g);
}

int main(int argc, char **argv)
{
    bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    if (argc > 2 && strcmp(argv[1], "--nodes") == 0) {
        int n = atoi(argv[2]);
        for (int t = 1; t <= 2 && n > 0; t++) run(n, 64, t, n >= 10000 ? 200 : 2000, false);
        return n > 0 ? 0 : 2;
    }
    static const int nodes[] = {1, 100, 10000};
    static const int64_t elems[] = {64, 1 << 14, 1 << 20};
    for (int t = 1; t <= 2; t++) {
        for (size_t i = 0; i < 3; i++) {
            if (quick && nodes[i] > 100) continue;
            int calls = nodes[i] >= 10000 ? 20 : 200;
            run(nodes[i], 64, t, quick ? 5 : calls, false);
        }
        /* large tensors: 8 Tanh nodes and a Sum on up to 2^20 elements (8 MB
         * each) not taken */
        for (size_t e = 0; e < 3; e++) run(8, elems[e], t, quick ? 3 : 50, true);
    }
    return 0;
}
