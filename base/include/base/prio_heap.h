/* A binary max-heap of ids keyed by a priority table: the higher priority
 * first, ties to the lower id (a fixed order, so what is taken never depends
 * on the heap's history). The caller owns the storage (room for every id it
 * pushes) and any locking. Used by the scheduler's prioritized runs and
 * list schedules (scheduler/dag_prio.c) and the compile's node layout
 * (lib/compile/schedule_order.c). */
#ifndef WEFT_BASE_PRIO_HEAP_H
#define WEFT_BASE_PRIO_HEAP_H

#include <stdbool.h>
#include <stdint.h>

static inline bool weft__prio_before(const int64_t *prio, uint32_t a, uint32_t b)
{
    return prio[a] > prio[b] || (prio[a] == prio[b] && a < b);
}

static inline void weft__prio_heap_push(const int64_t *prio, uint32_t *heap, uint32_t *n,
                                        uint32_t id)
{
    uint32_t i = (*n)++;
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if (!weft__prio_before(prio, id, heap[parent])) break;
        heap[i] = heap[parent];
        i = parent;
    }
    heap[i] = id;
}

/* Removes and returns the best id; *n must be > 0. */
static inline uint32_t weft__prio_heap_pop(const int64_t *prio, uint32_t *heap, uint32_t *n)
{
    uint32_t top = heap[0], last = heap[--*n], i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && weft__prio_before(prio, heap[c + 1], heap[c])) c++;
        if (!weft__prio_before(prio, heap[c], last)) break;
        heap[i] = heap[c];
        i = c;
    }
    if (*n) heap[i] = last;
    return top;
}

#endif /* WEFT_BASE_PRIO_HEAP_H */
