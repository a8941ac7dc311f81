/* Test helpers shared by the DAG run tests: graphs kept as edge lists next
 * to their weft DAG, a node body that records a sequence number and a run
 * count, and the protocol check (every node exactly once, after all of its
 * predecessors). Header-only, static functions. */
#ifndef WEFT_TESTS_SCHEDULER_DAG_CHECK_H
#define WEFT_TESTS_SCHEDULER_DAG_CHECK_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft/sched.h"

typedef struct tgraph {
    uint32_t n;
    size_t ne, cap;
    uint32_t *from, *to;
} tgraph_t;

/* Per-run record, passed as the run's user pointer. */
typedef struct trec {
    uint32_t n;
    _Atomic uint64_t ctr;
    uint64_t *seq;
    _Atomic uint32_t *runs;
    _Atomic int bad_ctx;
    int nthreads;
} trec_t;

static inline void tgraph_edge(tgraph_t *g, uint32_t a, uint32_t b)
{
    if (g->ne == g->cap) {
        g->cap = g->cap ? g->cap * 2 : 64;
        g->from = realloc(g->from, g->cap * sizeof *g->from);
        g->to = realloc(g->to, g->cap * sizeof *g->to);
        if (!g->from || !g->to) abort();
    }
    g->from[g->ne] = a;
    g->to[g->ne++] = b;
}

static inline void tgraph_free(tgraph_t *g)
{
    free(g->from);
    free(g->to);
    memset(g, 0, sizeof *g);
}

static inline uint64_t trng(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* The shapes of docs/performance-notes.md §6 at small sizes (param as --size). */
static inline void tgraph_shape(tgraph_t *g, const char *shape, uint32_t param)
{
    memset(g, 0, sizeof *g);
    uint64_t rng = 42;
    if (!strcmp(shape, "chain")) {
        g->n = param;
        for (uint32_t i = 1; i < param; i++) tgraph_edge(g, i - 1, i);
    } else if (!strcmp(shape, "tree")) {
        g->n = (1u << param) - 1;
        for (uint32_t i = 1; i < g->n; i++) tgraph_edge(g, (i - 1) / 2, i);
    } else if (!strcmp(shape, "wavefront")) {
        g->n = param * param;
        for (uint32_t i = 0; i < g->n; i++) {
            if (i / param) tgraph_edge(g, i - param, i);
            if (i % param) tgraph_edge(g, i - 1, i);
        }
    } else if (!strcmp(shape, "fanout")) {
        g->n = param + 2;
        for (uint32_t i = 1; i <= param; i++) tgraph_edge(g, 0, i), tgraph_edge(g, i, param + 1);
    } else { /* random, K=4, W=1000 */
        g->n = param;
        for (uint32_t i = 1; i < param; i++) {
            uint32_t k = 1 + (uint32_t)(trng(&rng) % 4), lim = i < 1000 ? i : 1000;
            size_t first = g->ne;
            for (uint32_t j = 0; j < k; j++) {
                uint32_t p = (uint32_t)(i - 1 - trng(&rng) % lim);
                int dup = 0;
                for (size_t e = first; e < g->ne; e++) dup |= g->from[e] == p;
                if (!dup) tgraph_edge(g, p, i);
            }
        }
    }
}

static weft_status_t trec_node(void *arg, const weft_task_ctx_t *ctx)
{
    trec_t *r = ctx->user;
    uint32_t id = (uint32_t)(uintptr_t)arg;
    if (!r || (int)ctx->worker >= r->nthreads || !ctx->pool ||
        weft_pool_current_worker(ctx->pool) != (int)ctx->worker)
        atomic_store_explicit(&r->bad_ctx, 1, memory_order_relaxed); // relaxed: checked after wait
    /* relaxed: order is checked by comparing sequence numbers after the run;
     * the run's wait publishes them */
    r->seq[id] = atomic_fetch_add_explicit(&r->ctr, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&r->runs[id], 1, memory_order_relaxed);
    return WEFT_OK;
}

/* Build the weft DAG for g with trec_node bodies (names "n<id>"). */
static inline weft_status_t tgraph_build(const tgraph_t *g, weft_dag_t **out)
{
    weft_dag_t *dag;
    weft_status_t st = weft_dag_create(NULL, &dag);
    if (st) return st;
    char name[32];
    for (uint32_t i = 0; i < g->n && !st; i++) {
        snprintf(name, sizeof name, "n%u", i);
        st = weft_dag_add_node(dag, trec_node, (void *)(uintptr_t)i, name, NULL);
    }
    for (size_t e = 0; e < g->ne && !st; e++) st = weft_dag_add_edge(dag, g->from[e], g->to[e]);
    if (!st) st = weft_dag_finalize(dag);
    if (st) {
        fprintf(stderr, "build failed: %s %s\n", weft_status_name(st), weft_dag_last_error(dag));
        weft_dag_destroy(dag);
        return st;
    }
    *out = dag;
    return WEFT_OK;
}

static inline void trec_init(trec_t *r, uint32_t n, int nthreads)
{
    r->n = n;
    r->seq = calloc(n + 1, sizeof *r->seq);
    r->runs = calloc(n + 1, sizeof *r->runs);
    if (!r->seq || !r->runs) abort();
    r->nthreads = nthreads;
    atomic_init(&r->ctr, 0);
    atomic_init(&r->bad_ctx, 0);
}

static inline void trec_reset(trec_t *r)
{
    atomic_store(&r->ctr, 0);
    atomic_store(&r->bad_ctx, 0);
    for (uint32_t i = 0; i < r->n; i++) atomic_store_explicit(&r->runs[i], 0, memory_order_relaxed);
}

static inline void trec_fini(trec_t *r)
{
    free(r->seq);
    free((void *)r->runs);
}

/* 0 if every node ran once, after its predecessors; else prints and -1. */
static inline int trec_check(const trec_t *r, const tgraph_t *g)
{
    if (atomic_load((_Atomic int *)&r->bad_ctx)) {
        fprintf(stderr, "bad task context\n");
        return -1;
    }
    for (uint32_t i = 0; i < g->n; i++) {
        uint32_t k = atomic_load_explicit((_Atomic uint32_t *)&r->runs[i], memory_order_relaxed);
        if (k != 1) {
            fprintf(stderr, "node %u ran %u times\n", i, k);
            return -1;
        }
    }
    for (size_t e = 0; e < g->ne; e++)
        if (!(r->seq[g->from[e]] < r->seq[g->to[e]])) {
            fprintf(stderr, "node %u ran before its predecessor %u\n", g->to[e], g->from[e]);
            return -1;
        }
    return 0;
}

#endif /* WEFT_TESTS_SCHEDULER_DAG_CHECK_H */
