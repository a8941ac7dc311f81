/* Per-worker Chase-Lev work-stealing deque (internal). The owner pushes and
 * pops at the bottom (LIFO); thieves steal from the top (FIFO). Lock-free,
 * growable; protocol and memory-order reasoning in deque.c. */
#ifndef WEFT_SCHED_DEQUE_INT_H
#define WEFT_SCHED_DEQUE_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/base_int.h"

/* Anything a worker can execute starts with this header. exec gets the
 * item's payload (what part of the task: a node id, a range ...). */
typedef struct weft__task weft__task_t;
struct weft__worker;
typedef void (*weft__task_exec_fn)(weft__task_t *t, uint64_t payload, struct weft__worker *w);
struct weft__task {
    weft__task_exec_fn exec;
};

/* One deque entry: a task and its payload (16 bytes, copied by value). */
typedef struct weft__item {
    weft__task_t *task;
    uint64_t payload;
} weft__item_t;

typedef struct weft__deque_slot {
    _Atomic(weft__task_t *) task;
    _Atomic uint64_t payload;
} weft__deque_slot_t;

typedef struct weft__deque_array {
    int64_t mask;                      /* capacity - 1; capacity is a power of 2 */
    struct weft__deque_array *retired; /* older, smaller array (freed at fini) */
    weft__deque_slot_t slots[];
} weft__deque_array_t;

typedef struct weft__deque {
    /* top: CASed by thieves and by the owner on the last item. */
    WEFT_CACHELINE_ALIGNED _Atomic int64_t top;
    /* bottom and array: written by the owner only, read by thieves. */
    WEFT_CACHELINE_ALIGNED _Atomic int64_t bottom;
    _Atomic(weft__deque_array_t *) array;
    const weft_allocator_t *alloc;
} weft__deque_t;

typedef enum weft__steal_result {
    WEFT__STEAL_OK = 0,
    WEFT__STEAL_EMPTY = 1,
    WEFT__STEAL_ABORT = 2 /* lost a race; the deque may still hold items */
} weft__steal_result_t;

/* capacity_log2: initial capacity 2^capacity_log2 (grows as needed). */
weft_status_t weft__deque_init(weft__deque_t *dq, const weft_allocator_t *alloc,
                               unsigned capacity_log2);
void weft__deque_fini(weft__deque_t *dq);
/* Owner only. WEFT_ENOMEM if growing failed (the item is not pushed). */
weft_status_t weft__deque_push_owner(weft__deque_t *dq, weft__item_t item);
/* Owner only. false when empty. */
bool weft__deque_pop_owner(weft__deque_t *dq, weft__item_t *out);
/* Any thread. */
weft__steal_result_t weft__deque_steal(weft__deque_t *dq, weft__item_t *out);
/* Hint only (racy): number of items. */
int64_t weft__deque_size_hint(weft__deque_t *dq);

#endif /* WEFT_SCHED_DEQUE_INT_H */
