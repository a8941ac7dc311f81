/* The node order a compiled function is laid out in: the order one worker
 * of the pool would run the DAG in. Node records, slot lists and output
 * cells are allocated in node order, and the scheduler runs a node's first
 * ready successor next (a continuation) and takes the other ready ones back
 * from its deque last-in first-out, which walks the DAG depth first. Laid
 * out in toposort order, a wide graph has consecutive runs jump between
 * distant records: on a 10^5-node random DAG three of the four cache lines a
 * node touches missed. Replaying the scheduler's policy at compile time
 * gives a topological order in which consecutive runs touch consecutive
 * memory. */
#include <stdlib.h>

#include "base/prio_heap.h"
#include "compile_int.h"

typedef struct replay {
    uint32_t n;
    uint32_t *off, *succ; /* successors of i: succ[off[i] .. off[i+1]), ascending */
    uint32_t *pending;    /* predecessors not yet run */
    uint32_t *stack, top; /* ready nodes, last in first out */
} replay_t;

static void replay_free(replay_t *r)
{
    free(r->off);
    free(r->succ);
    free(r->pending);
    free(r->stack);
}

/* edges: weft__edge_pack keys, sorted by source (see compile_int.h). */
static bool replay_init(replay_t *r, uint32_t n, const uint64_t *edges, size_t ne)
{
    r->n = n;
    r->top = 0;
    r->off = calloc((size_t)n + 1, sizeof *r->off);
    r->succ = malloc((ne + 1) * sizeof *r->succ);
    r->pending = calloc((size_t)n + 1, sizeof *r->pending);
    r->stack = malloc(((size_t)n + 1) * sizeof *r->stack);
    if (!r->off || !r->succ || !r->pending || !r->stack) return false;
    for (size_t k = 0; k < ne; k++) {
        uint32_t to = weft__edge_to(edges[k]);
        r->off[weft__edge_from(edges[k]) + 1]++;
        r->succ[k] = to;
        r->pending[to]++;
    }
    for (uint32_t i = 0; i < n; i++) r->off[i + 1] += r->off[i];
    /* sources, the first on top: the run starts with the lowest ones */
    for (uint32_t i = n; i-- > 0;)
        if (r->pending[i] == 0) r->stack[r->top++] = i;
    return true;
}

/* Runs u and its chain of continuations, appending each to rank order. */
static void replay_chain(replay_t *r, uint32_t u, uint32_t *rank, uint32_t *pos)
{
    for (;;) {
        rank[u] = (*pos)++;
        uint32_t next = UINT32_MAX;
        for (uint32_t e = r->off[u]; e < r->off[u + 1]; e++) {
            uint32_t s = r->succ[e];
            if (--r->pending[s] != 0) continue;
            if (next == UINT32_MAX)
                next = s;
            else
                r->stack[r->top++] = s;
        }
        if (next == UINT32_MAX) return;
        u = next;
    }
}

weft_status_t weft__schedule_order(uint32_t n, const uint64_t *edges, size_t ne, uint32_t *rank)
{
    replay_t r = {0};
    if (!replay_init(&r, n, edges, ne)) {
        replay_free(&r);
        return WEFT_ENOMEM;
    }
    uint32_t pos = 0;
    while (r.top > 0) replay_chain(&r, r.stack[--r.top], rank, &pos);
    replay_free(&r);
    return pos == n ? WEFT_OK : WEFT_EINCONSISTENT; /* a cycle: not from a toposort */
}

weft_status_t weft__schedule_order_prio(uint32_t n, const uint64_t *edges, size_t ne,
                                        const int64_t *prio, uint32_t *rank)
{
    replay_t r = {0};
    if (!replay_init(&r, n, edges, ne)) {
        replay_free(&r);
        return WEFT_ENOMEM;
    }
    uint32_t nh = 0, pos = 0;
    /* the sources become a heap in place (entry k is read before any push
     * writes past position k) */
    for (uint32_t k = 0; k < r.top; k++) weft__prio_heap_push(prio, r.stack, &nh, r.stack[k]);
    while (nh > 0) {
        uint32_t u = weft__prio_heap_pop(prio, r.stack, &nh);
        rank[u] = pos++;
        for (uint32_t e = r.off[u]; e < r.off[u + 1]; e++)
            if (--r.pending[r.succ[e]] == 0) weft__prio_heap_push(prio, r.stack, &nh, r.succ[e]);
    }
    replay_free(&r);
    return pos == n ? WEFT_OK : WEFT_EINCONSISTENT;
}
