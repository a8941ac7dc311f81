/* Event count: lets a thread sleep until some condition (work in a deque, a
 * run finished) becomes true, without lost wake-ups and without a lock on
 * the notifier's fast path.
 *
 * Protocol (Dekker-style, both sides fully fenced):
 *   waiter:   waiters += 1 (seq_cst); key = epoch;     // prepare_wait
 *             fence; recheck condition -> true: waiters -= 1 (cancel_wait)
 *             lock; while epoch == key: cond_wait; unlock; waiters -= 1
 *   notifier: make condition true; fence (seq_cst);
 *             if waiters == 0: return                 // nobody can sleep on it
 *             lock; epoch += 1; signal/broadcast; unlock
 * Either the notifier's load sees the waiter's increment (it then bumps the
 * epoch under the lock, so the waiter either sees the new epoch before
 * sleeping or is woken by the signal), or the waiter's recheck, ordered after
 * its increment, sees the condition the notifier made true before its fence.
 * A signal that wakes a thread already awake is harmless: the epoch moved, so
 * other sleepers recheck on their next (possibly spurious) wake-up. */
#include "scheduler/notifier_int.h"

weft_status_t weft__notifier_init(weft__notifier_t *n)
{
    /* relaxed: initialisation before any sharing */
    atomic_store_explicit(&n->waiters, 0, memory_order_relaxed);
    atomic_store_explicit(&n->epoch, 0, memory_order_relaxed);
    if (pthread_mutex_init(&n->mu, NULL) != 0) return WEFT_ESYSTEM;
    if (pthread_cond_init(&n->cv, NULL) != 0) {
        pthread_mutex_destroy(&n->mu);
        return WEFT_ESYSTEM;
    }
    return WEFT_OK;
}

void weft__notifier_fini(weft__notifier_t *n)
{
    pthread_cond_destroy(&n->cv);
    pthread_mutex_destroy(&n->mu);
}

uint32_t weft__notifier_prepare_wait(weft__notifier_t *n)
{
    /* seq_cst: must be ordered before the caller's recheck; pairs with the
     * seq_cst fence + load of waiters in notify */
    atomic_fetch_add_explicit(&n->waiters, 1, memory_order_seq_cst);
    /* acquire: pairs with the release increment in notify, so a key taken
     * after a notification also sees the condition it published */
    uint32_t key = atomic_load_explicit(&n->epoch, memory_order_acquire);
    /* seq_cst fence: the caller's recheck loads come after the increment */
    atomic_thread_fence(memory_order_seq_cst);
    return key;
}

void weft__notifier_cancel_wait(weft__notifier_t *n)
{
    /* relaxed: only lowers the count; a notifier that still sees us merely
     * takes the lock needlessly */
    atomic_fetch_sub_explicit(&n->waiters, 1, memory_order_relaxed);
}

void weft__notifier_commit_wait(weft__notifier_t *n, uint32_t key)
{
    pthread_mutex_lock(&n->mu);
    /* relaxed: epoch only changes under mu, which we hold */
    while (atomic_load_explicit(&n->epoch, memory_order_relaxed) == key)
        pthread_cond_wait(&n->cv, &n->mu);
    pthread_mutex_unlock(&n->mu);
    /* relaxed: as in cancel_wait */
    atomic_fetch_sub_explicit(&n->waiters, 1, memory_order_relaxed);
}

static void notifier_wake(weft__notifier_t *n, int all)
{
    /* seq_cst fence: the caller's condition store comes before the load of
     * waiters; pairs with the fence in prepare_wait */
    atomic_thread_fence(memory_order_seq_cst);
    /* relaxed: ordered by the fence above */
    if (atomic_load_explicit(&n->waiters, memory_order_relaxed) == 0) return;
    pthread_mutex_lock(&n->mu);
    /* release: pairs with the acquire load of the key in prepare_wait */
    atomic_fetch_add_explicit(&n->epoch, 1, memory_order_release);
    if (all)
        pthread_cond_broadcast(&n->cv);
    else
        pthread_cond_signal(&n->cv);
    pthread_mutex_unlock(&n->mu);
}

void weft__notifier_notify_one(weft__notifier_t *n)
{
    notifier_wake(n, 0);
}

void weft__notifier_notify_all(weft__notifier_t *n)
{
    notifier_wake(n, 1);
}
