/* Per-node plan blocks of the kernel context (tensor/kernel_int.h): what a
 * kernel decided once for an input geometry, kept in the runtime's plan cell
 * so later runs of the node skip the decisions (docs/execution.md §3.7). */
#include <stdlib.h>
#include <string.h>

#include "tensor/kernel_int.h"

/* A block: its capacity, then the plan on a cache line of its own, so a
 * plan's first 64 bytes (what its kernel reads first) are one line. */
#define PLAN_LINE 64

typedef struct plan_block {
    size_t cap;
    void (*fini)(void *plan); /* owned blocks only (weft__kernel_plan_owned) */
    _Alignas(PLAN_LINE) unsigned char plan[];
} plan_block_t;

static plan_block_t *block_of(void *plan)
{
    return (plan_block_t *)((unsigned char *)plan - offsetof(plan_block_t, plan));
}

void *weft__kernel_plan_store(weft_kernel_ctx_t *ctx, const void *src, size_t bytes)
{
    if (!ctx || !ctx->plan) return (void *)src;
    plan_block_t *b = *ctx->plan ? block_of(*ctx->plan) : NULL;
    if (!b || b->cap < bytes) {
        size_t total = (sizeof(plan_block_t) + bytes + PLAN_LINE - 1) / PLAN_LINE * PLAN_LINE;
        plan_block_t *nb = aligned_alloc(PLAN_LINE, total);
        if (!nb) return (void *)src; /* stays uncached: the next run plans again */
        nb->cap = bytes;
        nb->fini = NULL;
        weft__kernel_plan_free(b ? b->plan : NULL);
        b = nb;
        *ctx->plan = b->plan;
    }
    memcpy(b->plan, src, bytes);
    /* relaxed: a statistic, read after the calls (whitebox tests, profile) */
    if (ctx->plan_builds) atomic_fetch_add_explicit(ctx->plan_builds, 1, memory_order_relaxed);
    return b->plan;
}

void weft__kernel_plan_free(void *plan)
{
    if (!plan) return;
    plan_block_t *b = block_of(plan);
    if (b->fini) b->fini(plan);
    free(b);
}

void *weft__kernel_plan_owned(weft_kernel_ctx_t *ctx, size_t bytes, void (*fini)(void *plan))
{
    if (!ctx || !ctx->plan) return NULL;
    plan_block_t *b = *ctx->plan ? block_of(*ctx->plan) : NULL;
    if (b && b->fini == fini && b->cap >= bytes) return b->plan;
    size_t total = (sizeof(plan_block_t) + bytes + PLAN_LINE - 1) / PLAN_LINE * PLAN_LINE;
    plan_block_t *nb = aligned_alloc(PLAN_LINE, total);
    if (!nb) return NULL;
    memset(nb, 0, total);
    nb->cap = bytes;
    weft__kernel_plan_free(*ctx->plan);
    nb->fini = fini;
    *ctx->plan = nb->plan;
    return nb->plan;
}
