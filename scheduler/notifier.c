/* Event count: lets a thread sleep until some condition (work in a deque, a
 * run finished) becomes true, without lost wake-ups and without a lock on
 * the notifier's fast path.
 *
 * Protocol (Dekker-style; every access below marked seq_cst is in C11's
 * single total order S, which is what makes it work):
 *   waiter:   waiters += 1 (seq_cst); key = epoch;     // prepare_wait
 *             recheck condition with seq_cst loads -> true: waiters -= 1
 *             lock; while epoch == key: cond_wait; unlock; waiters -= 1
 *   notifier: make condition true with a seq_cst store or RMW;
 *             if load(waiters, seq_cst) == 0: return   // nobody can sleep on it
 *             lock; epoch += 1; signal/broadcast; unlock
 * In S, either the notifier's load comes after the waiter's increment (and
 * sees it) (it then bumps the
 * epoch under the lock, so the waiter either sees the new epoch before
 * sleeping or is woken by the signal), or the waiter's recheck, ordered after
 * its increment, comes after the condition store and sees it. (Fences would
 * do too, but ThreadSanitizer does not model them.)
 * A signal that wakes a thread already awake is harmless: the epoch moved, so
 * other sleepers recheck on their next (possibly spurious) wake-up. */
#include "notifier_int.h"

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
    /* seq_cst: ordered before the caller's seq_cst recheck loads; pairs with
     * the seq_cst load of waiters in notifier_wake */
    atomic_fetch_add_explicit(&n->waiters, 1, memory_order_seq_cst);
    /* acquire: pairs with the release increment in notify, so a key taken
     * after a notification also sees the condition it published */
    return atomic_load_explicit(&n->epoch, memory_order_acquire);
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
    /* seq_cst: after the caller's seq_cst condition store in S; pairs with
     * the seq_cst increment in prepare_wait */
    if (atomic_load_explicit(&n->waiters, memory_order_seq_cst) == 0) return;
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
