/* Event count ("two-phase notifier") for parking idle threads without lost
 * wake-ups (internal). Protocol in notifier.c. */
#ifndef WEFT_SCHED_NOTIFIER_INT_H
#define WEFT_SCHED_NOTIFIER_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "base/base_int.h"

typedef struct weft__notifier {
    /* waiters: threads between prepare_wait and the end of commit/cancel;
     * written by every waiter, read by every notifier. */
    WEFT_CACHELINE_ALIGNED _Atomic uint32_t waiters;
    /* epoch: bumped (under mu) by each notification that found waiters. */
    _Atomic uint32_t epoch;
    pthread_mutex_t mu;
    pthread_cond_t cv;
} weft__notifier_t;

weft_status_t weft__notifier_init(weft__notifier_t *n);
void weft__notifier_fini(weft__notifier_t *n);
/* Waiter: key = prepare_wait(); recheck the condition (seq_cst loads); then either
 * cancel_wait() (condition true) or commit_wait(key) (sleeps unless a
 * notification happened since prepare_wait). */
uint32_t weft__notifier_prepare_wait(weft__notifier_t *n);
void weft__notifier_cancel_wait(weft__notifier_t *n);
void weft__notifier_commit_wait(weft__notifier_t *n, uint32_t key);
/* Notifier: call after making the condition true with a seq_cst store or
 * RMW. Cheap when nobody waits (one load). */
void weft__notifier_notify_one(weft__notifier_t *n);
void weft__notifier_notify_all(weft__notifier_t *n);

#endif /* WEFT_SCHED_NOTIFIER_INT_H */
