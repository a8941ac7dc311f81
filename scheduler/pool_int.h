/* Pool internals shared by pool.c and dag_run.c: workers, the pool body, the
 * submit/wait helpers and per-worker deferred counters. */
#ifndef WEFT_SCHED_POOL_INT_H
#define WEFT_SCHED_POOL_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/clock.h"
#include "deque_int.h"
#include "notifier_int.h"
#include "weft/sched.h"

#define WEFT__POOL_MAGIC 0x706f6f6cu /* "pool" */
#define WEFT__POOL_MAX_THREADS 4096

/* A deferred decrement: n decrements of *ctr not yet applied; when applying
 * them brings *ctr to 0, on_zero is pushed. Used for counters many nodes hit
 * (a run's sink count, a node with a large in-degree) so that a worker
 * touches them once per batch instead of once per node. Owner-only fields. */
typedef struct weft__defer {
    _Atomic uint32_t *ctr;
    uint32_t n;
    weft__item_t on_zero;
} weft__defer_t;

#define WEFT__DEFER_SLOTS 2
/* The slots: decrements of nodes with a large in-degree (on zero, the node
 * is released), and a run's count of unfinished sinks (on zero, the run's
 * completion item: a worker waiting in weft__pool_wait applies this slot
 * before each item it takes, since it may end the very run waited for). */
#define WEFT__DEFER_NODES 0
#define WEFT__DEFER_SINKS 1

typedef struct weft__worker {
    weft__deque_t dq;
    weft_pool_t *pool;
    unsigned index;
    bool guest;                                 // the caller slot of a one-worker pool
    bool holds_token;                           // owner only: holds pool->exec_token
    unsigned depth;                             // owner only: items being executed (nesting)
    uint64_t rng;                               // owner only: victim selection
    weft__defer_t defer[WEFT__DEFER_SLOTS];     // owner only
    /* idle accounting for profiles: written by the owner, read (relaxed,
     * approximately) by the thread completing a profiled run */
    WEFT_CACHELINE_ALIGNED _Atomic uint64_t idle_ns;
    _Atomic uint64_t idle_since; // 0: not idle (or not tracked)
    pthread_t thread;
} weft__worker_t;

struct weft_pool {
    uint32_t magic;
    void *raw; // allocation holding this (aligned) struct
    size_t raw_bytes;
    int nthreads;
    int pinned;
    unsigned spin;
    const weft_allocator_t *alloc;
    void *workers_raw; // allocation holding `workers` (aligned inside)
    size_t workers_bytes;
    weft__worker_t *workers;
    weft__notifier_t work_ec; // workers sleep here; pushes and completions notify
    weft__notifier_t done_ec; // external (non-worker) waiters sleep here
    /* injection queue for work submitted from outside the pool (ring buffer
     * under inj_mu); inj_count is also read as a lock-free hint */
    WEFT_CACHELINE_ALIGNED pthread_mutex_t inj_mu;
    weft__item_t *inj;
    size_t inj_cap, inj_head;
    _Atomic size_t inj_count;
    /* One-worker pools only: a thread calling weft_dag_run_execute or
     * weft_pool_parallel_for from outside runs its own work as `guest`
     * (worker index 0) instead of waking the worker and sleeping until it is
     * done, which costs two thread wake-ups per call (150-1000 us each on a
     * virtual machine). exec_token keeps the worker and a guest from running
     * at the same time, so index 0 is never used by two threads at once:
     * 0 free, 1 held by the worker (while it has work), 2 by a guest. */
    weft__worker_t *guest;
    WEFT_CACHELINE_ALIGNED _Atomic int exec_token;
    /* lifecycle counters, written by submitters/waiters (rarely) */
    WEFT_CACHELINE_ALIGNED _Atomic int shutdown;
    _Atomic uint32_t inflight;   // started runs not yet waited + parallel-fors
    _Atomic uint32_t attached;   // run objects bound to this pool
    _Atomic uint32_t profiling;  // profiled runs in flight
};

/* For a thread outside every pool calling into a one-worker pool whose
 * worker is idle: makes the thread the pool's guest (weft__worker_self()
 * returns it) and returns it; NULL otherwise. Work it then submits goes on
 * its own deque and weft__pool_wait runs it on the calling thread. */
weft__worker_t *weft__pool_guest_enter(weft_pool_t *pool);
/* Ends guest mode (g from weft__pool_guest_enter; NULL: no-op) once the
 * guest's work is done, and hands the worker anything queued meanwhile. */
void weft__pool_guest_exit(weft_pool_t *pool, weft__worker_t *g);
/* Whether the calling thread is pool's guest already (a run or loop nested in
 * a guest's call, such as a Scan step): what it submits then goes on the
 * guest's deque, which only the guest runs (the worker cannot take the exec
 * token), so its completion needs no wake-up, as a guest's own run. */
bool weft__pool_in_guest(const weft_pool_t *pool);

/* The calling thread's worker (NULL outside any pool). */
weft__worker_t *weft__worker_self(void);
/* Make item runnable: on the caller's deque if it is one of pool's workers,
 * otherwise through the injection queue. Wakes a sleeping worker.
 * WEFT_ENOMEM if the injection queue could not grow (item not submitted). */
weft_status_t weft__pool_submit(weft_pool_t *pool, weft__item_t item);
/* Owner pushes onto its own deque (runs the item inline if growing failed). */
void weft__worker_push(weft__worker_t *w, weft__item_t item);
/* Wait until done(arg): a worker of pool applies its deferred sink counts
 * (which may finish the run it waits for) before each item it takes, and
 * runs other work meanwhile; any other thread sleeps on done_ec. */
void weft__pool_wait(weft_pool_t *pool, bool (*done)(void *), void *arg);
/* Wake every waiter (a run or parallel-for finished). */
void weft__pool_notify_done(weft_pool_t *pool);
/* Apply one decrement of *ctr, possibly deferred in slot `slot`. */
void weft__worker_defer(weft__worker_t *w, unsigned slot, _Atomic uint32_t *ctr,
                        weft__item_t on_zero);
/* Idle time of worker w up to `now` (ns), for profiles. */
uint64_t weft__worker_idle_total(weft__worker_t *w, uint64_t now);

static inline void weft__cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Cache-line aligned allocation through a weft allocator: *raw and *raw_bytes
 * are what weft__free needs later. */
static inline void *weft__alloc_aligned(const weft_allocator_t *a, size_t n, void **raw,
                                        size_t *raw_bytes)
{
    *raw_bytes = n + WEFT_CACHELINE;
    *raw = weft__alloc(a, *raw_bytes);
    if (!*raw) return NULL;
    uintptr_t p = ((uintptr_t)*raw + WEFT_CACHELINE - 1) & ~(uintptr_t)(WEFT_CACHELINE - 1);
    return (void *)p;
}

#endif /* WEFT_SCHED_POOL_INT_H */
