/* Parked receive and collective-wait nodes (docs/distributed.md §3.1): a node
 * whose data has not come defers itself and parks in its message's or
 * collective's wm_park_t instead of holding its worker; the communication
 * thread copies the data into the node's output when the request completes
 * and completes the node, or fails it when the call failed. The flag decides
 * who copies: the node's CAS 0 -> 1 against the comm thread's exchange to 2
 * (data came) or CAS 1 -> 3 (failed). */
#include <sched.h>
#include <string.h>

#include "mpi_int.h"
#include "weft/kernel.h"

enum { PARK_NONE = 0, PARK_WAITING = 1, PARK_CAME = 2, PARK_FAILED = 3 };

/* The scheduler refuses only when its injection queue cannot grow: retry. */
static void complete(wm_park_t *pk, weft_status_t st)
{
    while (weft_dag_run_complete(&pk->node, st) == WEFT_ENOMEM) sched_yield();
}

weft_status_t wm__park(wm_rt_t *rt, wm_park_t *pk, weft_kernel_ctx_t *ctx, void *out,
                       const void *src, size_t bytes)
{
    weft_status_t st = weft_kernel_defer(ctx, &pk->node);
    if (st != WEFT_OK) return st;
    pk->out = out;
    pk->src = src;
    pk->bytes = bytes;
    /* relaxed: a hint for the comm thread's timeout and polling */
    atomic_fetch_add_explicit(&rt->waiting, 1, memory_order_relaxed);
    int none = PARK_NONE;
    /* acq_rel: release publishes out/src/bytes/node to the comm thread;
     * acquire, when the data came first, sees the bytes (its exchange is
     * after its release of WM_DONE) */
    if (atomic_compare_exchange_strong_explicit(&pk->flag, &none, PARK_WAITING,
                                                memory_order_acq_rel, memory_order_acquire)) {
        wm__rt_kick(rt); /* a waiter: the comm thread polls at once */
        return WEFT_OK;
    }
    atomic_fetch_sub_explicit(&rt->waiting, 1, memory_order_relaxed); /* relaxed: hint */
    if (bytes) memcpy(out, src, bytes);
    complete(pk, WEFT_OK);
    return WEFT_OK;
}

weft_status_t wm__park_unless_done(wm_rt_t *rt, wm_msg_t *m, weft_kernel_ctx_t *ctx)
{
    /* acquire: pairs with the comm thread's release of WM_DONE */
    if (atomic_load_explicit(&m->state, memory_order_acquire) == WM_DONE) return WEFT_OK;
    return wm__park(rt, &m->park, ctx, NULL, NULL, 0);
}

void wm__arrived(wm_rt_t *rt, _Atomic int *state, wm_park_t *pk)
{
    /* release: the data happen-before a node's acquire load of WM_DONE */
    atomic_store_explicit(state, WM_DONE, memory_order_release);
    /* acq_rel: acquire sees a parked node's fields; release publishes the
     * data to a node whose CAS fails on PARK_CAME */
    if (atomic_exchange_explicit(&pk->flag, PARK_CAME, memory_order_acq_rel) != PARK_WAITING)
        return;
    if (pk->bytes) memcpy(pk->out, pk->src, pk->bytes);
    atomic_fetch_sub_explicit(&rt->waiting, 1, memory_order_relaxed); /* relaxed: hint */
    complete(pk, WEFT_OK); /* the scheduler's release publishes the copy */
}

static void fail_one(wm_rt_t *rt, wm_park_t *pk)
{
    int waiting = PARK_WAITING;
    /* acquire: sees the node's fields */
    if (!atomic_compare_exchange_strong_explicit(&pk->flag, &waiting, PARK_FAILED,
                                                 memory_order_acquire, memory_order_relaxed))
        return;
    atomic_fetch_sub_explicit(&rt->waiting, 1, memory_order_relaxed); /* relaxed: hint */
    complete(pk, WEFT_ECANCELED);
}

void wm__fail_parked(wm_rt_t *rt)
{
    for (size_t k = 0; k < rt->n_msgs; k++) fail_one(rt, &rt->msgs[k].park);
    for (size_t k = 0; k < rt->n_colls; k++) fail_one(rt, &rt->colls[k].park);
}
