/* Work-stealing pool and task-DAG executor (scheduler/).
 *
 * A pool owns T worker threads, each with a lock-free Chase-Lev deque; idle
 * workers steal from random victims, spin briefly, then sleep on an event
 * count. A DAG is built once (nodes, edges), frozen by weft_dag_finalize()
 * (which refuses cycles and duplicate edges), then run any number of times
 * through preallocated run objects: a run allocates nothing. One DAG may have
 * several runs in flight at once (one run object each), and several DAGs may
 * share one pool. Node bodies may call weft_pool_parallel_for() and wait: the
 * waiting worker keeps running other work, so nothing deadlocks, even at T=1.
 *
 * Bad input never crashes or hangs: every case below returns a status, and
 * error details are kept on the DAG (weft_dag_last_error) or the run
 * (weft_dag_run_failed_node). */
#ifndef WEFT_SCHED_H
#define WEFT_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/alloc.h"
#include "weft/export.h"
#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_pool weft_pool_t;
typedef struct weft_dag weft_dag_t;
typedef struct weft_dag_run weft_dag_run_t;

/* ---------------------------------------------------------------- pool -- */

/* Where workers are pinned (hwloc). COMPACT: worker i on core i mod cores, in
 * topology order. SCATTER: consecutive workers on different packages/NUMA
 * nodes first. NONE: no binding. If the topology cannot be read or the OS
 * refuses a binding, the pool still runs, unpinned: see weft_pool_is_pinned.
 * The environment variable WEFT_NO_PIN (any value) turns pinning off. */
typedef enum weft_pin_policy {
    WEFT_PIN_COMPACT = 0,
    WEFT_PIN_SCATTER = 1,
    WEFT_PIN_NONE = 2
} weft_pin_policy_t;

typedef struct weft_pool_options {
    size_t size;                        /* sizeof(weft_pool_options_t) */
    weft_pin_policy_t pin;              /* default WEFT_PIN_COMPACT */
    unsigned spin;                      /* idle polls before sleeping; 0 = default
                                           (256, or 16 with more workers than cores) */
    const weft_allocator_t *allocator;  /* NULL = default; must be thread-safe */
} weft_pool_options_t;

#define WEFT_POOL_OPTIONS_INIT { sizeof(weft_pool_options_t), WEFT_PIN_COMPACT, 0, NULL }

/* What a node body or a parallel-for body learns about where it runs. */
typedef struct weft_task_ctx {
    void *user;          /* the run's user pointer (NULL inside parallel-for) */
    unsigned worker;     /* index of the executing worker, 0..T-1 */
    weft_pool_t *pool;   /* the pool running it (for nested parallel-for) */
    /* Non-NULL only in a sequential run (one-worker pool) walking node ids
     * in order: a body may store a node id k there to have the bodies of
     * the nodes after it, up to k (exclusive), not called in this run (a
     * compiled function skips an IfElse branch not taken so,
     * docs/control-flow.md §2). Those nodes count as completed; the caller
     * vouches that nothing they would do is needed. NULL elsewhere. */
    uint32_t *skip_to;
    /* The run and the node whose body this is (weft_dag_run_defer); NULL and
     * WEFT_DAG_NO_NODE inside a parallel-for body. */
    weft_dag_run_t *run;
    uint32_t node;
    /* Non-NULL only in the body of a region's gate (weft_dag_add_region):
     * storing true there retires the region in bulk - none of its members'
     * bodies is called in this run, and the nodes outside it that wait on
     * it are released at once (a cost per edge leaving the region, not per
     * member). NULL elsewhere. */
    bool *retire;
} weft_task_ctx_t;

/* The number of cores hwloc reports for this process (its allowed cpuset);
 * 1 if the topology cannot be read. Use it as the default T.
 * Ownership: none.  Errors: none.  Thread: any. */
WEFT_API int weft_pool_default_threads(void);

/* Start a pool of `threads` workers. opts may be NULL (defaults).
 * Ownership: returns new *out (weft_pool_destroy); borrows opts.
 * Errors: WEFT_EINVAL (out NULL, threads <= 0 or > 4096, opts->size too small,
 * unknown pin policy), WEFT_ENOMEM, WEFT_ESYSTEM (a thread could not be
 * started; nothing leaks). On error *out is NULL.  Thread: any. */
WEFT_API weft_status_t weft_pool_create(int threads, const weft_pool_options_t *opts,
                                        weft_pool_t **out);

/* Stop the workers and free the pool. NULL is a no-op (WEFT_OK).
 * Ownership: takes pool on success only.
 * Errors: WEFT_EBUSY (run objects still attached to the pool, or runs or
 * parallel-fors in flight: nothing is freed), WEFT_ESTATE (called from one of
 * the pool's own workers).  Thread: any thread but the pool's workers, not
 * concurrently with other calls that use the pool. */
WEFT_API weft_status_t weft_pool_destroy(weft_pool_t *pool);

/* Number of workers; 0 for NULL.  Ownership: borrows.  Thread: any. */
WEFT_API int weft_pool_thread_count(const weft_pool_t *pool);

/* Workers asleep waiting for work at this moment (0 for NULL): a hint, stale
 * as soon as it is read (weft_kernel_idle_workers).  Ownership: borrows.
 * Thread: any. */
WEFT_API int weft_pool_idle_workers(const weft_pool_t *pool);

/* Whether every worker is bound to a core; false for policy NONE, an
 * unreadable topology, a refused binding, or a NULL pool.  Ownership: borrows.
 * Thread: any. */
WEFT_API bool weft_pool_is_pinned(const weft_pool_t *pool);

/* The calling thread's worker index in `pool`, or -1 if it is not one of the
 * pool's workers.  Ownership: borrows.  Thread: any. */
WEFT_API int weft_pool_current_worker(const weft_pool_t *pool);

/* Body of a parallel-for: handles [begin, end). ctx->user is NULL. */
typedef weft_status_t (*weft_range_fn)(void *arg, size_t begin, size_t end,
                                       const weft_task_ctx_t *ctx);

/* Run fn over [begin, end) in chunks of `grain` (0 = automatic) on the pool
 * and wait for all chunks. Called from a worker (e.g. inside a node body), the
 * worker runs other work while it waits (no deadlock at T=1); called from any
 * other thread, that thread sleeps until done (or, on a one-worker pool whose
 * worker is idle, runs the chunks itself as worker 0, as weft_dag_run_execute). The first failing chunk's
 * status is returned; chunks not yet started are then skipped.
 * Ownership: borrows pool, arg.  Errors: WEFT_EINVAL (pool or fn NULL,
 * begin > end), WEFT_ENOMEM (as weft_dag_run_start), or the first status a
 * chunk returned.  Allocates nothing in steady state.
 * Thread: any; not while the pool is being destroyed. */
WEFT_API weft_status_t weft_pool_parallel_for(weft_pool_t *pool, size_t begin, size_t end,
                                              size_t grain, weft_range_fn fn, void *arg);

/* ----------------------------------------------------------------- DAG -- */

/* A node body: gets its own argument and the run's context. Returning
 * anything but WEFT_OK fails the run: nodes not yet started are skipped. */
typedef weft_status_t (*weft_node_fn)(void *arg, const weft_task_ctx_t *ctx);

#define WEFT_DAG_NO_NODE UINT32_MAX

/* An empty DAG. alloc may be NULL (default allocator); the DAG's tables and
 * the run objects created on it come from it (weft/alloc.h).
 * Ownership: returns new *out (weft_dag_destroy); borrows alloc, which must
 * outlive the DAG.  Errors: WEFT_EINVAL (out NULL), WEFT_ENOMEM.
 * Thread: any. */
WEFT_API weft_status_t weft_dag_create(const weft_allocator_t *alloc, weft_dag_t **out);

/* Free the DAG. NULL is a no-op (WEFT_OK).
 * Ownership: takes dag on success only.  Errors: WEFT_EBUSY (run objects
 * created from it still exist, in flight or not: destroy them first).
 * Thread: not concurrently with other calls on dag. */
WEFT_API weft_status_t weft_dag_destroy(weft_dag_t *dag);

/* Add a node running fn(arg, ctx). name may be NULL; it is copied. The new
 * node's id (0, 1, 2 ... in order of addition) goes to *id_out (may be NULL).
 * Ownership: borrows name; arg stays the caller's.  Errors: WEFT_EINVAL (dag
 * or fn NULL), WEFT_ESTATE (dag already finalized), WEFT_ERANGE (more than
 * 2^30 - 1 nodes), WEFT_ENOMEM.  Thread: not concurrently with other calls on
 * dag. */
WEFT_API weft_status_t weft_dag_add_node(weft_dag_t *dag, weft_node_fn fn, void *arg,
                                         const char *name, uint32_t *id_out);

/* Add the edge from -> to: `to` starts only after `from` has finished.
 * Errors: WEFT_EINVAL (dag NULL), WEFT_ENOTFOUND (from or to is not a node
 * id), WEFT_ECYCLE (from == to: a self edge), WEFT_ESTATE (dag finalized),
 * WEFT_ERANGE (more than 2^31 - 2^30 edges), WEFT_ENOMEM. Duplicate edges are
 * reported by weft_dag_finalize. Details: weft_dag_last_error.
 * Ownership: borrows.  Thread: as weft_dag_add_node. */
WEFT_API weft_status_t weft_dag_add_edge(weft_dag_t *dag, uint32_t from, uint32_t to);

/* Declare a region: `members` (n ids, distinct, none of them `gate`) are
 * gated by node `gate`, which gets an edge to each member (added here). When
 * the gate's body stores true in ctx->retire, the whole region is retired:
 * no member body runs, every edge from the region to a node outside it is
 * released once, and members without successors count as finished - a cost
 * per boundary edge fixed at finalize, whatever the region's size. A
 * region's gate may itself be a member of another region: retiring the
 * outer one retires the inner one too (its gate never runs). Members of
 * different regions must be disjoint and a node gates one region at most
 * (weft_dag_finalize refuses either with WEFT_EDUPLICATE, a member listed
 * twice as a duplicate edge); a gate below its own region through nesting
 * closes a cycle (WEFT_ECYCLE at finalize). The new region's id (0, 1, ...)
 * goes to *id_out (may be NULL).
 * Ownership: borrows members.  Errors: WEFT_EINVAL (dag NULL, members NULL,
 * n == 0), WEFT_ENOTFOUND (an id is not a node), WEFT_EDUPLICATE (the gate
 * is among the members), WEFT_ESTATE (dag finalized), WEFT_ERANGE,
 * WEFT_ENOMEM; details in weft_dag_last_error, and nothing is added on
 * error.  Thread: as weft_dag_add_node. */
WEFT_API weft_status_t weft_dag_add_region(weft_dag_t *dag, uint32_t gate, const uint32_t *members,
                                           size_t n, uint32_t *id_out);

/* Give node id a scheduling priority (0 unless set). A DAG with priorities
 * runs prioritized: of the nodes ready at a moment, a worker takes the one
 * with the highest priority (ties: the lower id) from a queue its run
 * shares, instead of its own deque's newest; a run on a one-worker pool
 * calls the bodies in that list order (fixed at finalize). Meant for DAGs
 * of coarse nodes, for critical-path-first schedules (tile factorizations,
 * graphs split over processes): each ready node costs one lock round trip
 * of the shared queue (about 50 ns uncontended), which a DAG of tiny nodes
 * should not pay (docs/execution.md §3.4.2). Priorities never change what a
 * run computes, only the order of independent nodes.
 * Errors: WEFT_EINVAL (dag NULL), WEFT_ENOTFOUND (id is not a node),
 * WEFT_ESTATE (dag finalized), WEFT_ENOMEM; details in weft_dag_last_error.
 * Ownership: borrows.  Thread: as weft_dag_add_node. */
WEFT_API weft_status_t weft_dag_set_priority(weft_dag_t *dag, uint32_t id, int64_t priority);

/* Validate and freeze the DAG: build the successor arrays, refuse cycles and
 * duplicate edges. After WEFT_OK the DAG can no longer change (add_* return
 * WEFT_ESTATE) and runs can be created. After an error the DAG is unchanged
 * and not finalized; weft_dag_last_error names the nodes (for a cycle, the
 * nodes on one cycle, in order). An empty DAG is valid.
 * Errors: WEFT_EINVAL (dag NULL), WEFT_ECYCLE, WEFT_EDUPLICATE, WEFT_ESTATE
 * (already finalized), WEFT_ENOMEM.  Ownership: borrows.
 * Thread: not concurrently with other calls on dag. */
WEFT_API weft_status_t weft_dag_finalize(weft_dag_t *dag);

/* Node and edge counts (0 for NULL).  Ownership: borrows.  Thread: any when
 * not concurrently mutated. */
WEFT_API uint32_t weft_dag_node_count(const weft_dag_t *dag);
WEFT_API uint64_t weft_dag_edge_count(const weft_dag_t *dag);

/* A node's name: returns borrowed, valid until weft_dag_destroy; "" for an
 * unnamed node, NULL for a NULL dag or unknown id.  Thread: as above. */
WEFT_API const char *weft_dag_node_name(const weft_dag_t *dag, uint32_t id);

/* Text of the last error reported by a call on dag ("" if none), e.g.
 * "cycle: 'a' (0) -> 'b' (1) -> 'a' (0)". Returns borrowed, valid until the
 * next call on dag.  Thread: as above. */
WEFT_API const char *weft_dag_last_error(const weft_dag_t *dag);

/* ---------------------------------------------------------------- runs -- */

typedef struct weft_dag_run_options {
    size_t size;   /* sizeof(weft_dag_run_options_t) */
    int profile;   /* nonzero: record per-node start/end times and worker, and
                      per-worker idle time, on every run of this object */
    int deferrable; /* nonzero: node bodies may call weft_dag_run_defer. Such
                       runs use the counting executor even on a one-worker
                       pool (no fixed sequential order, no run on the
                       caller's thread), so a deferred node's independent
                       successors-to-be run while it is pending. */
} weft_dag_run_options_t;

#define WEFT_DAG_RUN_OPTIONS_INIT { sizeof(weft_dag_run_options_t), 0, 0 }

/* A reusable run object: all per-run state (pending counters, failure,
 * profile) preallocated once, so runs allocate nothing.
 * Ownership: returns new *out (weft_dag_run_destroy); borrows dag and pool,
 * which must outlive it (their _destroy returns WEFT_EBUSY until it is gone).
 * Errors: WEFT_EINVAL (NULL dag/pool/out, opts->size too small), WEFT_ESTATE
 * (dag not finalized), WEFT_ENOMEM.  Thread: any (the DAG is read-only once
 * finalized). */
WEFT_API weft_status_t weft_dag_run_create(weft_dag_t *dag, weft_pool_t *pool,
                                           const weft_dag_run_options_t *opts,
                                           weft_dag_run_t **out);

/* Free a run object. NULL is a no-op (WEFT_OK).
 * Errors: WEFT_EBUSY (started and not yet waited for).  Ownership: takes run
 * on success.  Thread: not concurrently with other calls on run. */
WEFT_API weft_status_t weft_dag_run_destroy(weft_dag_run_t *run);

/* Start a run of the DAG on the pool; returns at once. Every node body gets
 * ctx->user == user. Each start must be matched by weft_dag_run_wait.
 * On a one-worker pool the bodies run one after the other in a topological
 * order fixed at finalize: the ids when every edge goes to a higher id,
 * else the order weft_dag_finalize's cycle check removed them in
 * (docs/execution.md §3.4).
 * Errors: WEFT_EINVAL (run NULL), WEFT_EBUSY (this run object is in flight:
 * use another run object for concurrent runs), WEFT_ENOMEM (only when more
 * threads submit at once than the pool's injection queue has ever held, and
 * growing it failed; the run is then not in flight).  Allocates nothing in
 * steady state.
 * Thread: any; one thread per run object at a time. */
WEFT_API weft_status_t weft_dag_run_start(weft_dag_run_t *run, void *user);

/* Wait until the started run has finished, then return its status: WEFT_OK,
 * the first failing node's status, or WEFT_ECANCELED. A pool worker waiting
 * here runs other work meanwhile; any other thread sleeps (no spinning).
 * Errors: WEFT_EINVAL (run NULL), WEFT_ESTATE (not started).
 * Ownership: borrows.  Thread: any; one waiter per run object. */
WEFT_API weft_status_t weft_dag_run_wait(weft_dag_run_t *run);

/* weft_dag_run_start + weft_dag_run_wait: a plain blocking run. On a
 * one-worker pool whose worker is idle, a calling thread outside the pool
 * runs the DAG itself, as the pool's worker 0 (the worker stays parked until
 * the call returns), so a call costs no thread wake-up; unless the run
 * records a profile (then the worker runs it, and its idle time is
 * measured). */
WEFT_API weft_status_t weft_dag_run_execute(weft_dag_run_t *run, void *user);

/* Ask the run to stop: nodes not yet started are skipped and the run returns
 * WEFT_ECANCELED (unless a node failed first). No effect on a run that is not
 * in flight.  Errors: WEFT_EINVAL (run NULL).  Thread: any. */
WEFT_API weft_status_t weft_dag_run_cancel(weft_dag_run_t *run);

/* The last waited run's status, failing node id (WEFT_DAG_NO_NODE if none or
 * canceled) and name (borrowed, valid until the DAG is destroyed; NULL if no
 * node failed). id and name may be NULL.  Errors: WEFT_EINVAL (run NULL),
 * WEFT_ESTATE (in flight).  Thread: after weft_dag_run_wait returned. */
WEFT_API weft_status_t weft_dag_run_failed_node(const weft_dag_run_t *run, uint32_t *id,
                                                const char **name);

/* Profile of the last waited run (requires opts.profile at creation).
 * Times are CLOCK_MONOTONIC nanoseconds. Arrays are borrowed, valid until the
 * next weft_dag_run_start or weft_dag_run_destroy. Skipped nodes have
 * start_ns == end_ns == 0. */
typedef struct weft_dag_profile {
    size_t size;               /* set by the caller: sizeof(weft_dag_profile_t) */
    uint32_t nodes;            /* entries in node_* arrays */
    unsigned workers;          /* entries in worker_idle_ns */
    const uint64_t *node_start_ns;
    const uint64_t *node_end_ns;
    const uint32_t *node_worker;
    const uint64_t *worker_idle_ns;  /* idle time of each worker during the run */
    uint64_t run_start_ns, run_end_ns;
} weft_dag_profile_t;

/* Errors: WEFT_EINVAL (NULL args, out->size too small), WEFT_ESTATE (run not
 * created with profiling, never waited, or in flight).  Ownership: borrows;
 * fills *out with borrowed pointers.  Thread: after weft_dag_run_wait. */
WEFT_API weft_status_t weft_dag_run_profile(const weft_dag_run_t *run, weft_dag_profile_t *out);

/* ------------------------------------------------------ deferred nodes -- */

/* A node whose completion is signalled from outside its body (e.g. a message
 * that arrives later): its body calls weft_dag_run_defer and returns at once,
 * so its worker goes on with other ready nodes; the node's successors are
 * released only when weft_dag_run_complete is called for it, from any thread.
 * The handle is a plain value; hand it to the completing thread with
 * release/acquire (or a mutex), so that thread sees the defer. */
typedef struct weft_dag_deferred {
    weft_dag_run_t *run;
    uint32_t node;
} weft_dag_deferred_t;

/* Called from inside a node body of a run created with deferrable: marks the
 * node pending. Every deferred node must be completed exactly once in its run
 * (also when the run fails or is canceled), else the run never finishes.
 * Ownership: borrows ctx; fills *out.
 * Errors: WEFT_EINVAL (ctx or out NULL, ctx not a DAG node body's),
 * WEFT_ESTATE (the run is not deferrable, or the node is already deferred in
 * this run).  Thread: the node body's. */
WEFT_API weft_status_t weft_dag_run_defer(const weft_task_ctx_t *ctx, weft_dag_deferred_t *out);

/* Completes a deferred node with status st (WEFT_OK, or an error that fails
 * the run as if the body had returned it). When the body has returned too,
 * the node's successors become ready (queued on the pool; a sink counts as
 * finished). The run may finish, and be waited for and reset, as soon as
 * this returns WEFT_OK: use d only once.
 * Errors: WEFT_EINVAL (d NULL, d->run not a run, node out of range),
 * WEFT_ESTATE (the node is not deferred: never, or already completed),
 * WEFT_ENOMEM (the pool's injection queue could not grow: the successors are
 * not released; retry).  Ownership: borrows d.  Thread: any. */
WEFT_API weft_status_t weft_dag_run_complete(const weft_dag_deferred_t *d, weft_status_t st);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_SCHED_H */
