/* DAG execution: run objects (all per-run state preallocated), starting,
 * waiting, failure and cancel, profiling, and the executor itself.
 *
 * Executor protocol. A run's items carry the run as task and a payload:
 *   node id          run that node (then its ready successors)
 *   RANGE|lo<<32|hi  successor entries succ[lo, hi) to decrement (a large
 *                    fan-out, or the sources at start); split in halves, the
 *                    upper half pushed for thieves
 *   RUN_COMPLETE     every sink has finished: publish completion
 *   RUN_SEQUENTIAL   the whole run, on a one-worker pool (below)
 * After a node's body, each successor entry is "decremented": in-degree 1 is
 * ready at once; otherwise pending[s] is decremented with acq_rel and the
 * thread bringing it to 0 runs s. A node restores its own counter from
 * indeg when it starts, so a run leaves the counters as it found them
 * (a failed or canceled run too: it drains, every node still starts) - but
 * for the members of retired regions, whose touched counters (reset_nodes)
 * the next start restores. The cost of a start is that of what ran, not
 * of the DAG's size; the first start copies indeg whole. The first
 * ready successor is run next on the same worker (continuation, no deque
 * round trip); the others are pushed. Decrements of nodes with a large
 * in-degree, and the run's count of unfinished sinks, are batched per worker
 * (weft__worker_defer) and applied before the worker idles; the sink
 * counts also before a worker waiting in weft__pool_wait (a nested run)
 * takes another item.
 * Completion: sinks_left reaches 0 only after every node ran (every node
 * reaches a sink), so the RUN_COMPLETE item is the last access to the run by
 * the executor; it stores `finished` (seq_cst) and then touches only the
 * pool. A waiter returns after a seq_cst load of `finished`.
 * Failure/cancel: the first failing node's status wins a CAS on `status` and
 * sets `stop`; later bodies are skipped after one relaxed load of stop, but
 * successors are still decremented so the run drains and completes.
 * One-worker pools: a run is a single RUN_SEQUENTIAL item that calls the
 * bodies in the DAG's topological order (dag_int.h) and then completes.
 * Nothing can run beside it (the worker and a guest exclude each other
 * through the pool's exec token), so it needs no counters, deque traffic or
 * wake-ups; once stop is set the remaining bodies are skipped.
 * Deferred nodes (deferrable runs, never sequential): defer[u] holds two
 * bits, BODY (the body has not returned) and EXT (weft_dag_run_complete has
 * not been called); each side clears its bit with acq_rel, and the side that
 * clears the last one releases u's successors: the body's worker inline, the
 * completer by queueing a RANGE item over them (or counting the sink).
 * Regions (dag_region.c): a gate's body may retire its region
 * (ctx->retire). The executor then releases the region's boundary entries
 * instead of the gate's own successors (a range of succ like any other)
 * and subtracts the closure's sinks from sinks_left in one step; the
 * members never become ready. Sequential runs instead mark the region
 * retired and pass over the members of retired regions.
 * Prioritized DAGs (dag_prio.c, docs/execution.md §3.4.2): a ready node joins
 * the run's shared max-heap instead of being run or pushed; for every node
 * added the adder either takes the heap's best itself (its continuation) or
 * pushes a RUN_TOKEN item, and a token's worker takes the best then. Tokens
 * plus continuations always equal the heap's size, so a taker never finds
 * it empty, and whoever runs next runs the best ready node. */
#define _POSIX_C_SOURCE 200809L // clock_gettime, pthreads

#include <string.h>

#include "base/prio_heap.h"
#include "dag_int.h"

#define RUN_MAGIC 0x72756e21u
#define RUN_RANGE (1ull << 63)
#define RUN_COMPLETE 0xffffffffull
#define RUN_SEQUENTIAL 0xfffffffeull // above every node id (WEFT__DAG_MAX_NODES)
#define RUN_TOKEN 0xfffffffdull      // take the best node of a prioritized run's heap
#define RUN_RANGE_GRAIN 32u   // entries handled without splitting further
#define RUN_FANOUT_RANGE 16u  // a node with more successors pushes a range item
#define DEFER_BODY 1u // the deferred node's body has not returned yet
#define DEFER_EXT 2u  // nor has weft_dag_run_complete been called for it

struct weft_dag_run {
    weft__task_t task; // first: items point here
    uint32_t magic;
    void *raw;
    size_t raw_bytes;
    weft_dag_t *dag;
    weft_pool_t *pool;
    void *user;
    _Atomic uint32_t *pending; // n counters (only nodes with in-degree >= 2 use theirs);
                               // NULL on a one-worker pool (sequential runs)
    int pending_stale;         // pending[] must be copied whole at the next start
    uint32_t *retired_list;    // regions retired by this run (nreg entries, or NULL)
    _Atomic uint32_t n_retired;
    _Atomic uint8_t *defer;    // n DEFER_* bit sets; NULL unless deferrable
    int in_flight, waited;     // start/wait thread only
    int solo;                  // the pool has one worker: runs are RUN_SEQUENTIAL
    int on_caller;             // this run executes on its caller (the pool's guest)
    uint8_t *retired;          // sequential runs of a DAG with regions: per region
    uint32_t *heap;            // prioritized DAGs (not solo): ready nodes, a max-heap
    uint32_t heap_n;           // under heap_mu
    pthread_mutex_t heap_mu;
    /* profile (NULL unless created with profile) */
    uint64_t *t_start, *t_end, *idle, *idle_base;
    uint32_t *t_worker;
    uint64_t run_t0, run_t1;
    /* stop: read by every node (relaxed), written on failure/cancel */
    WEFT_CACHELINE_ALIGNED _Atomic int stop;
    _Atomic int status;
    _Atomic uint32_t failed;
    _Atomic int active; // in flight (for cancel)
    /* sinks_left: decremented in batches by workers; finished: set once */
    WEFT_CACHELINE_ALIGNED _Atomic uint32_t sinks_left;
    _Atomic int finished;
};

static void run_exec(weft__task_t *t, uint64_t payload, weft__worker_t *w);

/* ------------------------------------------------------------- executor */

static void run_fail(weft_dag_run_t *run, uint32_t u, weft_status_t st)
{
    int ok = WEFT_OK;
    /* relaxed: first failure wins; the waiter reads status after the
     * completion chain (acq_rel counters, release of finished) */
    if (atomic_compare_exchange_strong_explicit(&run->status, &ok, (int)st, memory_order_relaxed,
                                                memory_order_relaxed))
        atomic_store_explicit(&run->failed, u, memory_order_relaxed); // relaxed: as above
    atomic_store_explicit(&run->stop, 1, memory_order_relaxed); // relaxed: a skip hint
}

static void run_body_profiled(weft_dag_run_t *run, const weft_task_ctx_t *ctx, uint32_t u)
{
    const weft__dag_node_t *nd = &run->dag->nodes[u];
    run->t_start[u] = weft__now_ns();
    weft_status_t st = nd->fn(nd->arg, ctx);
    run->t_end[u] = weft__now_ns();
    run->t_worker[u] = ctx->worker;
    if (st != WEFT_OK) run_fail(run, u, st);
}

/* Small, so that both executors (run_chain, run_sequential) inline it. */
static inline void run_body(weft_dag_run_t *run, const weft_task_ctx_t *ctx, uint32_t u)
{
    if (WEFT_UNLIKELY(run->t_start != NULL)) {
        run_body_profiled(run, ctx, u);
        return;
    }
    const weft__dag_node_t *nd = &run->dag->nodes[u];
    weft_status_t st = nd->fn(nd->arg, ctx);
    if (WEFT_UNLIKELY(st != WEFT_OK)) run_fail(run, u, st);
}

/* Apply one decrement for successor entry s; true if s is now ready. */
static inline bool run_ready(weft_dag_run_t *run, weft__worker_t *w, uint32_t s)
{
    if (s & WEFT__DAG_SINGLE) return true;
    uint32_t id = s & WEFT__DAG_ID_MASK;
    _Atomic uint32_t *p = &run->pending[id];
    if (WEFT_UNLIKELY(s & WEFT__DAG_DEFER)) {
        weft__worker_defer(w, WEFT__DEFER_NODES, p, (weft__item_t){ &run->task, id });
        return false;
    }
    /* acq_rel: release publishes this predecessor's effects; acquire, for
     * the last decrementer, sees every other predecessor's */
    return atomic_fetch_sub_explicit(p, 1, memory_order_acq_rel) == 1;
}

static inline void run_push(weft__worker_t *w, weft_dag_run_t *run, uint64_t payload)
{
    weft__worker_push(w, (weft__item_t){ &run->task, payload });
}

static inline uint64_t run_range_payload(uint32_t lo, uint32_t hi)
{
    return RUN_RANGE | ((uint64_t)lo << 32) | hi;
}

/* Prioritized runs (see the top of this file): the ready successors among
 * succ[lo, hi) join the heap; returns the best node for this worker to run
 * next (UINT32_MAX when none became ready) and pushes a token for each
 * other one added. */
static uint32_t prio_release(weft_dag_run_t *run, weft__worker_t *w, uint32_t lo, uint32_t hi)
{
    const uint32_t *succ = run->dag->succ;
    const int64_t *prio = run->dag->prio;
    uint32_t k = 0, next = UINT32_MAX;
    /* the decrements need no lock (a node not pushed has no token): lock
     * only once one made a node ready */
    for (uint32_t e = lo; e < hi; e++) {
        if (!run_ready(run, w, succ[e])) continue;
        if (k++ == 0) pthread_mutex_lock(&run->heap_mu);
        weft__prio_heap_push(prio, run->heap, &run->heap_n, succ[e] & WEFT__DAG_ID_MASK);
    }
    if (k == 0) return UINT32_MAX;
    next = weft__prio_heap_pop(prio, run->heap, &run->heap_n);
    pthread_mutex_unlock(&run->heap_mu);
    for (uint32_t i = 1; i < k; i++) run_push(w, run, RUN_TOKEN);
    return next;
}

/* A token's claim: the heap's best node (never empty, see above). */
static uint32_t prio_take(weft_dag_run_t *run)
{
    pthread_mutex_lock(&run->heap_mu);
    uint32_t u = weft__prio_heap_pop(run->dag->prio, run->heap, &run->heap_n);
    pthread_mutex_unlock(&run->heap_mu);
    return u;
}

/* u's body returned: whether u is finished (not deferred, or already
 * completed), so that this worker releases its successors. */
static bool run_body_settled(weft_dag_run_t *run, uint32_t u)
{
    /* relaxed: only this thread (the body's, in weft_dag_run_defer) sets the
     * bits; the completer only clears them */
    if (atomic_load_explicit(&run->defer[u], memory_order_relaxed) == 0) return true;
    /* acq_rel: release publishes the body's writes to the completer, if it
     * is last; acquire sees the completer's (e.g. a filled output) if we are */
    return atomic_fetch_and_explicit(&run->defer[u], (uint8_t)~DEFER_BODY,
                                     memory_order_acq_rel) == DEFER_BODY;
}

/* Gate of region r retired it: its closure's sinks are done (one
 * subtraction), and [*lo, *hi) becomes its boundary. False when there is
 * no boundary to release. */
static bool run_retire(weft_dag_run_t *run, weft__worker_t *w, uint32_t r, uint32_t *lo,
                       uint32_t *hi)
{
    const weft__dag_region_t *rg = &run->dag->regions[r];
    *lo = rg->blo;
    *hi = rg->bhi;
    /* relaxed: distinct slots; read by the next start, after the wait */
    run->retired_list[atomic_fetch_add_explicit(&run->n_retired, 1, memory_order_relaxed)] = r;
    /* acq_rel: as a sink's own decrement (release publishes the gate's
     * effects; acquire, when this reaches 0, sees every other sink's). It
     * can reach 0 only with an empty boundary: a boundary node's sinks are
     * still to come. */
    if (rg->sinks &&
        atomic_fetch_sub_explicit(&run->sinks_left, rg->sinks, memory_order_acq_rel) == rg->sinks)
        run_push(w, run, RUN_COMPLETE);
    return *lo != *hi;
}

/* Run u, then keep running one ready successor at a time on this worker. */
static void run_chain(weft_dag_run_t *run, weft__worker_t *w, uint32_t u)
{
    const uint32_t *off = run->dag->succ_off, *succ = run->dag->succ;
    const uint32_t *gates = run->dag->gate_region, *indeg = run->dag->indeg;
    bool retire = false;
    weft_task_ctx_t ctx = { run->user, w->index, run->pool, NULL, run, WEFT_DAG_NO_NODE, NULL };
    for (;;) {
        ctx.node = u;
        /* relaxed: every predecessor has counted u down, none touches its
         * counter again this run; the next run's workers see it through
         * that run's submit, as every write of this run */
        if (indeg[u] >= 2) atomic_store_explicit(&run->pending[u], indeg[u], memory_order_relaxed);
        if (WEFT_UNLIKELY(gates != NULL)) ctx.retire = gates[u] != WEFT__DAG_NO_REGION ? &retire : NULL;
        /* relaxed: a skip hint (see run_fail) */
        if (WEFT_LIKELY(!atomic_load_explicit(&run->stop, memory_order_relaxed)))
            run_body(run, &ctx, u);
        if (WEFT_UNLIKELY(run->defer != NULL) && !run_body_settled(run, u)) return;
        uint32_t lo = off[u], hi = off[u + 1], next = UINT32_MAX;
        if (WEFT_UNLIKELY(retire)) { /* the region's boundary instead */
            retire = false;
            if (!run_retire(run, w, gates[u], &lo, &hi)) return;
        } else if (lo == hi) { /* a sink: count it (batched) */
            weft__worker_defer(w, WEFT__DEFER_SINKS, &run->sinks_left,
                               (weft__item_t){ &run->task, RUN_COMPLETE });
            return;
        }
        if (run->heap) {
            if ((u = prio_release(run, w, lo, hi)) == UINT32_MAX) return;
            continue;
        }
        if (hi - lo > RUN_FANOUT_RANGE) {
            run_push(w, run, run_range_payload(lo, hi));
            return;
        }
        for (uint32_t e = lo; e < hi; e++) {
            uint32_t s = succ[e];
            if (!run_ready(run, w, s)) continue;
            if (next == UINT32_MAX)
                next = s & WEFT__DAG_ID_MASK;
            else
                run_push(w, run, s & WEFT__DAG_ID_MASK);
        }
        if (next == UINT32_MAX) return;
        u = next;
    }
}

static void run_range(weft_dag_run_t *run, weft__worker_t *w, uint32_t lo, uint32_t hi)
{
    if (run->heap) {
        uint32_t u = prio_release(run, w, lo, hi);
        if (u != UINT32_MAX) run_chain(run, w, u);
        return;
    }
    while (hi - lo > RUN_RANGE_GRAIN) {
        uint32_t mid = lo + (hi - lo) / 2;
        run_push(w, run, run_range_payload(mid, hi));
        hi = mid;
    }
    const uint32_t *succ = run->dag->succ;
    for (uint32_t e = lo; e < hi; e++) {
        uint32_t s = succ[e];
        if (run_ready(run, w, s)) run_chain(run, w, s & WEFT__DAG_ID_MASK);
    }
}

static void run_complete(weft_dag_run_t *run)
{
    weft_pool_t *pool = run->pool;
    if (run->t_start) {
        uint64_t now = weft__now_ns();
        run->run_t1 = now;
        for (int i = 0; i < pool->nthreads; i++)
            run->idle[i] = weft__worker_idle_total(&pool->workers[i], now) - run->idle_base[i];
    }
    /* a run on its caller completes on the waiting thread itself: nobody
     * sleeps on it, and waking the parked worker would only cost a syscall */
    int on_caller = run->on_caller;
    /* seq_cst: publishes the whole run (status, profile; release part) and
     * is the notifier's condition store before notify's load of waiters;
     * pairs with the load in run_is_finished. The run may be freed right
     * after: only the pool is used below. */
    atomic_store_explicit(&run->finished, 1, memory_order_seq_cst);
    if (!on_caller) weft__pool_notify_done(pool);
}

/* Node u is in a region retired in this (sequential) run. */
static bool seq_retired(const weft_dag_run_t *run, uint32_t u)
{
    const weft_dag_t *dag = run->dag;
    for (uint32_t r = dag->region_of[u]; r != WEFT__DAG_NO_REGION; r = dag->regions[r].parent)
        if (run->retired[r]) return true;
    return false;
}

/* A sequential run of a DAG with regions: members of retired regions are
 * passed over; skip_to is not offered (the order interleaves regions). */
static void run_sequential_regions(weft_dag_run_t *run, weft__worker_t *w)
{
    const weft_dag_t *dag = run->dag;
    bool retire = false;
    weft_task_ctx_t ctx = { run->user, w->index, run->pool, NULL, run, WEFT_DAG_NO_NODE, NULL };
    memset(run->retired, 0, dag->nreg);
    for (uint32_t i = 0; i < dag->n; i++) {
        /* relaxed: a skip hint (see run_fail) */
        if (WEFT_UNLIKELY(atomic_load_explicit(&run->stop, memory_order_relaxed))) break;
        uint32_t u = dag->order ? dag->order[i] : i, r = dag->gate_region[u];
        if (seq_retired(run, u)) continue;
        ctx.retire = r != WEFT__DAG_NO_REGION ? &retire : NULL;
        ctx.node = u;
        run_body(run, &ctx, u);
        if (retire) run->retired[r] = 1;
        retire = false;
    }
    run_complete(run);
}

/* The whole run on a one-worker pool (see the top of this file). */
static void run_sequential(weft_dag_run_t *run, weft__worker_t *w)
{
    const weft_dag_t *dag = run->dag;
    if (dag->nreg) {
        run_sequential_regions(run, w);
        return;
    }
    const uint32_t *order = dag->order;
    /* a body may ask to jump ahead (weft_task_ctx_t.skip_to), in id order only */
    uint32_t skip = 0;
    weft_task_ctx_t ctx = { run->user, w->index, run->pool, order ? NULL : &skip, run,
                            WEFT_DAG_NO_NODE, NULL };
    for (uint32_t i = 0; i < dag->n; i++) {
        /* relaxed: a skip hint (see run_fail) */
        if (WEFT_UNLIKELY(atomic_load_explicit(&run->stop, memory_order_relaxed))) break;
        ctx.node = order ? order[i] : i;
        run_body(run, &ctx, ctx.node);
        if (WEFT_UNLIKELY(skip > i + 1)) i = skip - 1;
    }
    run_complete(run);
}

static void run_exec(weft__task_t *t, uint64_t payload, weft__worker_t *w)
{
    weft_dag_run_t *run = (weft_dag_run_t *)t;
    if (payload & RUN_RANGE)
        run_range(run, w, (uint32_t)(payload >> 32) & 0x7fffffffu, (uint32_t)payload);
    else if (payload == RUN_SEQUENTIAL)
        run_sequential(run, w);
    else if (payload == RUN_COMPLETE)
        run_complete(run);
    else if (payload == RUN_TOKEN)
        run_chain(run, w, prio_take(run));
    else
        run_chain(run, w, (uint32_t)payload);
}

/* ------------------------------------------------------------ run objects */

static int run_ok(const weft_dag_run_t *run)
{
    return run && run->magic == RUN_MAGIC;
}

static void run_free_profile(weft_dag_run_t *run)
{
    const weft_allocator_t *a = run->dag->alloc;
    size_t n = run->dag->n, t = (size_t)run->pool->nthreads;
    weft__free(a, run->t_start, n * sizeof(uint64_t) + 1);
    weft__free(a, run->t_end, n * sizeof(uint64_t) + 1);
    weft__free(a, run->t_worker, n * sizeof(uint32_t) + 1);
    weft__free(a, run->idle, t * sizeof(uint64_t));
    weft__free(a, run->idle_base, t * sizeof(uint64_t));
    run->t_start = run->t_end = run->idle = run->idle_base = NULL;
    run->t_worker = NULL;
}

static void run_free(weft_dag_run_t *run)
{
    const weft_allocator_t *a = run->dag->alloc;
    run_free_profile(run);
    weft__free(a, (void *)run->pending, (size_t)run->dag->n * sizeof(uint32_t) + 1);
    weft__free(a, (void *)run->defer, (size_t)run->dag->n + 1);
    weft__free(a, run->retired, (size_t)run->dag->nreg + 1);
    weft__free(a, run->retired_list, ((size_t)run->dag->nreg + 1) * sizeof(uint32_t));
    if (run->heap) pthread_mutex_destroy(&run->heap_mu);
    weft__free(a, run->heap, ((size_t)run->dag->n + 1) * sizeof(uint32_t));
    run->magic = 0;
    weft__free(a, run->raw, run->raw_bytes);
}

static weft_status_t run_alloc_profile(weft_dag_run_t *run)
{
    const weft_allocator_t *a = run->dag->alloc;
    size_t n = run->dag->n, t = (size_t)run->pool->nthreads;
    run->t_start = weft__alloc(a, n * sizeof(uint64_t) + 1);
    run->t_end = weft__alloc(a, n * sizeof(uint64_t) + 1);
    run->t_worker = weft__alloc(a, n * sizeof(uint32_t) + 1);
    run->idle = weft__alloc(a, t * sizeof(uint64_t));
    run->idle_base = weft__alloc(a, t * sizeof(uint64_t));
    if (!run->t_start || !run->t_end || !run->t_worker || !run->idle || !run->idle_base)
        return WEFT_ENOMEM;
    return WEFT_OK;
}

weft_status_t weft_dag_run_create(weft_dag_t *dag, weft_pool_t *pool,
                                  const weft_dag_run_options_t *opts, weft_dag_run_t **out)
{
    if (!out) return WEFT_EINVAL;
    *out = NULL;
    if (!dag || dag->magic != WEFT__DAG_MAGIC || !pool || pool->magic != WEFT__POOL_MAGIC)
        return WEFT_EINVAL;
    if (opts && opts->size < sizeof(weft_dag_run_options_t)) return WEFT_EINVAL;
    if (!dag->finalized) {
        weft__dag_set_error(dag, "run_create: the DAG is not finalized");
        return WEFT_ESTATE;
    }
    void *raw;
    size_t raw_bytes;
    weft_dag_run_t *run = weft__alloc_aligned(dag->alloc, sizeof *run, &raw, &raw_bytes);
    if (!run) return WEFT_ENOMEM;
    memset(run, 0, sizeof *run);
    run->raw = raw;
    run->raw_bytes = raw_bytes;
    run->task.exec = run_exec;
    run->dag = dag;
    run->pool = pool;
    bool deferrable = opts && opts->deferrable;
    run->solo = pool->nthreads == 1 && !deferrable;
    run->magic = RUN_MAGIC;
    if (!run->solo) run->pending = weft__alloc(dag->alloc, (size_t)dag->n * sizeof(uint32_t) + 1);
    if (deferrable) run->defer = weft__alloc(dag->alloc, (size_t)dag->n + 1);
    if (run->solo && dag->nreg) run->retired = weft__alloc(dag->alloc, (size_t)dag->nreg + 1);
    if (!run->solo && dag->nreg)
        run->retired_list = weft__alloc(dag->alloc, ((size_t)dag->nreg + 1) * sizeof(uint32_t));
    if (!run->solo && dag->prio) {
        run->heap = weft__alloc(dag->alloc, ((size_t)dag->n + 1) * sizeof(uint32_t));
        if (run->heap && pthread_mutex_init(&run->heap_mu, NULL) != 0) {
            weft__free(dag->alloc, run->heap, ((size_t)dag->n + 1) * sizeof(uint32_t));
            run->heap = NULL;
        }
    }
    run->pending_stale = 1;
    atomic_init(&run->n_retired, 0);
    weft_status_t st = (run->pending || run->solo) && (run->defer || !deferrable) &&
                               (run->retired || !run->solo || !dag->nreg) &&
                               (run->retired_list || run->solo || !dag->nreg) &&
                               (run->heap || run->solo || !dag->prio)
                           ? WEFT_OK
                           : WEFT_ENOMEM;
    if (st == WEFT_OK && opts && opts->profile) st = run_alloc_profile(run);
    if (st != WEFT_OK) {
        run_free(run);
        return st;
    }
    /* relaxed: counts only; checked with acquire at destroy, paired with the
     * release decrement in weft_dag_run_destroy */
    atomic_fetch_add_explicit(&dag->runs, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&pool->attached, 1, memory_order_relaxed);
    *out = run;
    return WEFT_OK;
}

weft_status_t weft_dag_run_destroy(weft_dag_run_t *run)
{
    if (!run) return WEFT_OK;
    if (!run_ok(run)) return WEFT_EINVAL;
    if (run->in_flight) return WEFT_EBUSY;
    weft_dag_t *dag = run->dag;
    weft_pool_t *pool = run->pool;
    run_free(run);
    /* release: our uses of dag/pool happen before their destroy; pairs with
     * the acquire loads in weft_dag_destroy / weft_pool_destroy */
    atomic_fetch_sub_explicit(&dag->runs, 1, memory_order_release);
    atomic_fetch_sub_explicit(&pool->attached, 1, memory_order_release);
    return WEFT_OK;
}

/* ------------------------------------------------------- start and wait */

/* The pending counters as indeg (see the top of this file). Plain state:
 * no other thread touches this run until the submit publishes it (deque
 * release store or the injection mutex); relaxed atomics for the same
 * reason. Only nodes with in-degree >= 2 read theirs. */
static void run_reset_pending(weft_dag_run_t *run)
{
    const weft_dag_t *dag = run->dag;
    /* relaxed (all): as above; the last run was waited for */
    uint32_t nr = atomic_exchange_explicit(&run->n_retired, 0, memory_order_relaxed);
    if (!dag->has_multi || run->solo) return;
    if (run->pending_stale) {
        memcpy((void *)run->pending, dag->indeg, (size_t)dag->n * sizeof(uint32_t));
        run->pending_stale = 0;
        return;
    }
    for (uint32_t k = 0; k < nr; k++) {
        const weft__dag_region_t *rg = &dag->regions[run->retired_list[k]];
        for (uint32_t j = rg->rlo; j < rg->rhi; j++) {
            uint32_t v = dag->reset_nodes[j];
            atomic_store_explicit(&run->pending[v], dag->indeg[v], memory_order_relaxed);
        }
    }
}

static void run_reset(weft_dag_run_t *run, void *user)
{
    const weft_dag_t *dag = run->dag;
    run->user = user;
    run_reset_pending(run);
    if (run->defer) memset((void *)run->defer, 0, (size_t)dag->n);
    /* relaxed (all): published by the submit, as above */
    atomic_store_explicit(&run->stop, 0, memory_order_relaxed);
    atomic_store_explicit(&run->status, WEFT_OK, memory_order_relaxed);
    atomic_store_explicit(&run->failed, WEFT_DAG_NO_NODE, memory_order_relaxed);
    atomic_store_explicit(&run->sinks_left, dag->nsinks, memory_order_relaxed);
    atomic_store_explicit(&run->finished, 0, memory_order_relaxed);
}

static void run_profile_start(weft_dag_run_t *run)
{
    weft_pool_t *pool = run->pool;
    memset(run->t_start, 0, (size_t)run->dag->n * sizeof(uint64_t));
    memset(run->t_end, 0, (size_t)run->dag->n * sizeof(uint64_t));
    memset(run->t_worker, 0, (size_t)run->dag->n * sizeof(uint32_t));
    /* relaxed: turns on approximate idle tracking; figures only */
    atomic_fetch_add_explicit(&pool->profiling, 1, memory_order_relaxed);
    uint64_t now = weft__now_ns();
    run->run_t0 = now;
    run->run_t1 = now;
    for (int i = 0; i < pool->nthreads; i++)
        run->idle_base[i] = weft__worker_idle_total(&pool->workers[i], now);
}

static void run_end(weft_dag_run_t *run);

weft_status_t weft_dag_run_start(weft_dag_run_t *run, void *user)
{
    if (!run_ok(run)) return WEFT_EINVAL;
    if (run->in_flight) return WEFT_EBUSY;
    run_reset(run, user);
    if (run->t_start) run_profile_start(run);
    run->in_flight = 1;
    run->waited = 0;
    /* relaxed: a hint for cancel; pool->inflight is read with acquire at
     * destroy and decremented with release in wait */
    atomic_store_explicit(&run->active, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&run->pool->inflight, 1, memory_order_relaxed);
    const weft_dag_t *dag = run->dag;
    if (dag->n == 0) {
        atomic_store_explicit(&run->finished, 1, memory_order_relaxed); // relaxed: same thread waits
        return WEFT_OK;
    }
    weft__item_t src = { &run->task, run->solo ? RUN_SEQUENTIAL
                                               : run_range_payload((uint32_t)dag->ne,
                                                                   (uint32_t)dag->ne + dag->nsrc) };
    weft_status_t st = weft__pool_submit(run->pool, src);
    if (st != WEFT_OK) { /* nothing started: undo */
        run_end(run);
        run->waited = 0;
    }
    return st;
}

/* The run is no longer in flight (waited for, or its start failed). */
static void run_end(weft_dag_run_t *run)
{
    run->in_flight = 0;
    run->waited = 1;
    atomic_store_explicit(&run->active, 0, memory_order_relaxed); // relaxed: cancel hint
    if (run->t_start)
        atomic_fetch_sub_explicit(&run->pool->profiling, 1, memory_order_relaxed); // relaxed: hint
    /* release: pairs with the acquire load in weft_pool_destroy */
    atomic_fetch_sub_explicit(&run->pool->inflight, 1, memory_order_release);
}

static bool run_is_finished(void *arg)
{
    /* seq_cst: recheck of the notifier protocol (acquire part: sees the
     * whole run); pairs with the store in run_complete */
    return atomic_load_explicit(&((weft_dag_run_t *)arg)->finished, memory_order_seq_cst) != 0;
}

weft_status_t weft_dag_run_wait(weft_dag_run_t *run)
{
    if (!run_ok(run)) return WEFT_EINVAL;
    if (!run->in_flight) return WEFT_ESTATE;
    weft__pool_wait(run->pool, run_is_finished, run);
    run_end(run);
    /* relaxed: ordered by the seq_cst load of finished */
    return (weft_status_t)atomic_load_explicit(&run->status, memory_order_relaxed);
}

weft_status_t weft_dag_run_execute(weft_dag_run_t *run, void *user)
{
    if (!run_ok(run)) return WEFT_EINVAL;
    /* a one-worker pool with its worker idle runs the whole DAG on this
     * thread (pool_int.h: no wake-ups); profiled runs keep to the worker, so
     * that its busy and idle times describe the run */
    bool inline_ok = !run->in_flight && !run->t_start && !run->defer;
    weft__worker_t *guest = inline_ok ? weft__pool_guest_enter(run->pool) : NULL;
    /* nested in a guest's call (a Scan step), the guest runs it all too:
     * completing it must not wake the parked worker (2 context switches a
     * step, pool_int.h) */
    run->on_caller = guest != NULL || (inline_ok && weft__pool_in_guest(run->pool));
    weft_status_t st = weft_dag_run_start(run, user);
    if (st == WEFT_OK) st = weft_dag_run_wait(run);
    weft__pool_guest_exit(run->pool, guest);
    run->on_caller = 0;
    return st;
}

weft_status_t weft_dag_run_cancel(weft_dag_run_t *run)
{
    if (!run_ok(run)) return WEFT_EINVAL;
    /* relaxed (all): cancel is a request; a run that finishes meanwhile
     * simply keeps its status */
    if (!atomic_load_explicit(&run->active, memory_order_relaxed)) return WEFT_OK;
    int ok = WEFT_OK;
    atomic_compare_exchange_strong_explicit(&run->status, &ok, (int)WEFT_ECANCELED,
                                            memory_order_relaxed, memory_order_relaxed);
    atomic_store_explicit(&run->stop, 1, memory_order_relaxed);
    return WEFT_OK;
}

weft_status_t weft_dag_run_failed_node(const weft_dag_run_t *run, uint32_t *id, const char **name)
{
    if (!run_ok(run)) return WEFT_EINVAL;
    if (run->in_flight) return WEFT_ESTATE;
    /* relaxed: read after weft_dag_run_wait's acquire */
    uint32_t f = atomic_load_explicit(&((weft_dag_run_t *)run)->failed, memory_order_relaxed);
    if (id) *id = f;
    if (name) *name = f == WEFT_DAG_NO_NODE ? NULL : weft_dag_node_name(run->dag, f);
    return (weft_status_t)atomic_load_explicit(&((weft_dag_run_t *)run)->status,
                                               memory_order_relaxed); // relaxed: as above
}

weft_status_t weft_dag_run_profile(const weft_dag_run_t *run, weft_dag_profile_t *out)
{
    if (!run_ok(run) || !out || out->size < sizeof(weft_dag_profile_t)) return WEFT_EINVAL;
    if (!run->t_start || run->in_flight || !run->waited) return WEFT_ESTATE;
    out->nodes = run->dag->n;
    out->workers = (unsigned)run->pool->nthreads;
    out->node_start_ns = run->t_start;
    out->node_end_ns = run->t_end;
    out->node_worker = run->t_worker;
    out->worker_idle_ns = run->idle;
    out->run_start_ns = run->run_t0;
    out->run_end_ns = run->run_t1;
    return WEFT_OK;
}

/* ------------------------------------------------------- deferred nodes */

weft_status_t weft_dag_run_defer(const weft_task_ctx_t *ctx, weft_dag_deferred_t *out)
{
    if (!ctx || !out || !run_ok(ctx->run) || ctx->node >= ctx->run->dag->n) return WEFT_EINVAL;
    weft_dag_run_t *run = ctx->run;
    if (!run->defer) return WEFT_ESTATE;
    /* relaxed: the body's thread is the only one that sets bits; the handle
     * reaches the completer through the caller's release/acquire (sched.h) */
    if (atomic_load_explicit(&run->defer[ctx->node], memory_order_relaxed) != 0)
        return WEFT_ESTATE;
    atomic_store_explicit(&run->defer[ctx->node], DEFER_BODY | DEFER_EXT, memory_order_relaxed);
    out->run = run;
    out->node = ctx->node;
    return WEFT_OK;
}

/* The completer finished u after its body: queue its successors, or count
 * the sink (the last sink completes the run here: a deferrable run never
 * runs on its caller, so this only stores `finished` and wakes the pool). */
static weft_status_t run_release_from_outside(weft_dag_run_t *run, uint32_t u)
{
    uint32_t lo = run->dag->succ_off[u], hi = run->dag->succ_off[u + 1];
    if (lo < hi) return weft__pool_submit(run->pool, (weft__item_t){ &run->task,
                                                                     run_range_payload(lo, hi) });
    /* acq_rel: as the workers' batched sink counts (weft__worker_defer) */
    if (atomic_fetch_sub_explicit(&run->sinks_left, 1, memory_order_acq_rel) == 1)
        run_complete(run);
    return WEFT_OK;
}

weft_status_t weft_dag_run_complete(const weft_dag_deferred_t *d, weft_status_t st)
{
    if (!d || !run_ok(d->run) || d->node >= d->run->dag->n || !d->run->defer)
        return WEFT_EINVAL;
    weft_dag_run_t *run = d->run;
    /* relaxed: a check only; the clearing below decides */
    if (!(atomic_load_explicit(&run->defer[d->node], memory_order_relaxed) & DEFER_EXT))
        return WEFT_ESTATE;
    if (st != WEFT_OK) run_fail(run, d->node, st);
    /* acq_rel: release publishes what the completer wrote (and the failure)
     * to the body's worker if it is last; acquire sees the body's writes */
    uint8_t old = atomic_fetch_and_explicit(&run->defer[d->node], (uint8_t)~DEFER_EXT,
                                            memory_order_acq_rel);
    if (!(old & DEFER_EXT)) return WEFT_ESTATE; /* a concurrent second completion */
    if (old & DEFER_BODY) return WEFT_OK;       /* the body's worker releases them */
    weft_status_t rs = run_release_from_outside(run, d->node);
    /* relaxed: nobody else touches the bits now; a retry finds EXT again */
    if (rs != WEFT_OK) atomic_store_explicit(&run->defer[d->node], DEFER_EXT, memory_order_relaxed);
    return rs;
}
