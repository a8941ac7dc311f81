/* Work-stealing pool: worker threads, their scheduling loop (own deque ->
 * injection queue -> random victims -> spin -> sleep), waiting with help,
 * deferred counters, and parallel-for.
 *
 * Sleeping protocol: a worker that found nothing for `spin` polls takes a key
 * from work_ec (prepare_wait), rechecks every source of work (own deque,
 * injection queue, all victims) and the shutdown flag, then sleeps
 * (commit_wait). Every push and every injection calls notify_one after
 * publishing the item, so a push while all workers sleep always wakes one
 * (see notifier.c for why nothing is lost). A worker that steals while its
 * victim still has items wakes one more (wake chain). */
#define _POSIX_C_SOURCE 200809L // clock_gettime, pthreads

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pool_int.h"
#include "topology_int.h"

#define POOL_DEFAULT_SPIN 256
#define POOL_OVERSUBSCRIBED_SPIN 16
#define POOL_INJ_INITIAL 64

static _Thread_local weft__worker_t *tls_worker;

weft__worker_t *weft__worker_self(void)
{
    return tls_worker;
}

int weft_pool_default_threads(void)
{
    return weft__topology_core_count();
}

/* ------------------------------------------------------------ finding work */

static bool pool_inject_pop(weft_pool_t *pool, weft__item_t *out)
{
    /* seq_cst: the recheck load of the notifier protocol (pairs with the
     * seq_cst store in pool_inject); a plain load on x86 */
    if (atomic_load_explicit(&pool->inj_count, memory_order_seq_cst) == 0) return false;
    bool got = false;
    pthread_mutex_lock(&pool->inj_mu);
    size_t cnt = atomic_load_explicit(&pool->inj_count, memory_order_relaxed); // relaxed: under mu
    if (cnt > 0) {
        *out = pool->inj[pool->inj_head];
        pool->inj_head = (pool->inj_head + 1) % pool->inj_cap;
        atomic_store_explicit(&pool->inj_count, cnt - 1, memory_order_relaxed); // relaxed: under mu
        got = true;
    }
    pthread_mutex_unlock(&pool->inj_mu);
    return got;
}

static bool worker_steal(weft__worker_t *w, weft__item_t *out)
{
    weft_pool_t *pool = w->pool;
    int n = pool->nthreads;
    if (n < 2) return false;
    w->rng = w->rng * 6364136223846793005ull + 1442695040888963407ull;
    int start = (int)((w->rng >> 33) % (uint64_t)n);
    for (int k = 0; k < n; k++) {
        int v = (start + k) % n;
        if (v == (int)w->index) continue;
        weft__deque_t *dq = &pool->workers[v].dq;
        weft__steal_result_t r;
        while ((r = weft__deque_steal(dq, out)) == WEFT__STEAL_ABORT) weft__cpu_relax();
        if (r == WEFT__STEAL_OK) {
            /* wake chain: the victim has more, let another sleeper help */
            if (weft__deque_size_hint(dq) > 0) weft__notifier_notify_one(&pool->work_ec);
            return true;
        }
    }
    return false;
}

static bool worker_flush(weft__worker_t *w, weft__defer_t *d);
static bool worker_flush_all(weft__worker_t *w);

/* One-worker pools: the worker takes the exec token before it runs anything
 * and gives it back when it runs out of work, so a guest can take over. */
static bool worker_token_take(weft__worker_t *w)
{
    if (w->holds_token) return true;
    int free_token = 0;
    /* seq_cst: acquire orders this worker after the last guest's work
     * (index 0 changes threads); seq_cst as the recheck of the notifier
     * protocol against weft__pool_guest_exit's store */
    w->holds_token = atomic_compare_exchange_strong_explicit(
        &w->pool->exec_token, &free_token, 1, memory_order_seq_cst, memory_order_relaxed);
    return w->holds_token;
}

static void worker_token_give(weft__worker_t *w)
{
    if (!w->holds_token) return;
    w->holds_token = false;
    /* release: this worker's work happens before a guest's */
    atomic_store_explicit(&w->pool->exec_token, 0, memory_order_release);
}

static bool worker_find_local(weft__worker_t *w, weft__item_t *out)
{
    if (weft__deque_pop_owner(&w->dq, out)) return true;
    /* out of local work: apply deferred decrements first (they may release
     * nodes, or finish a run someone waits for) */
    return worker_flush_all(w) && weft__deque_pop_owner(&w->dq, out);
}

/* Whether an idle one-worker pool's worker has anything to take the token
 * for: only its own deque, deferred counters and injected items can hold
 * work (it has no one to steal from), so idle polls leave the token alone
 * and a guest finds it free. */
static bool worker_may_have_work(weft__worker_t *w)
{
    if (weft__deque_size_hint(&w->dq) > 0) return true;
    for (unsigned i = 0; i < WEFT__DEFER_SLOTS; i++)
        if (w->defer[i].ctr) return true;
    /* seq_cst: the recheck load of the notifier protocol, as in
     * pool_inject_pop (pairs with the seq_cst store in pool_inject) */
    return atomic_load_explicit(&w->pool->inj_count, memory_order_seq_cst) > 0;
}

static bool worker_find_work(weft__worker_t *w, weft__item_t *out)
{
    /* a guest runs only its own call's work (never other callers' runs: it
     * leaves when its call is done) */
    if (w->guest) return worker_find_local(w, out);
    bool single = w->pool->guest != NULL;
    if (single && !w->holds_token && !worker_may_have_work(w)) return false;
    if (single && !worker_token_take(w)) return false;
    if (worker_find_local(w, out) || pool_inject_pop(w->pool, out) || worker_steal(w, out))
        return true;
    /* inside an item (a node waiting for nested work) the worker keeps the
     * token: a guest must not run while that node is unfinished */
    if (single && w->depth == 0) worker_token_give(w);
    return false;
}

static inline void item_exec(weft__item_t it, weft__worker_t *w)
{
    w->depth++;
    it.task->exec(it.task, it.payload, w);
    w->depth--;
}

/* ------------------------------------------------------- idle accounting */

uint64_t weft__worker_idle_total(weft__worker_t *w, uint64_t now)
{
    /* relaxed: profiling figures only, approximate by nature */
    uint64_t total = atomic_load_explicit(&w->idle_ns, memory_order_relaxed);
    uint64_t since = atomic_load_explicit(&w->idle_since, memory_order_relaxed);
    return total + (since && now > since ? now - since : 0);
}

static void worker_idle_begin(weft__worker_t *w, bool force)
{
    /* relaxed: profiling figures only (owner writes, profilers read) */
    if (atomic_load_explicit(&w->idle_since, memory_order_relaxed)) return;
    if (!force && !atomic_load_explicit(&w->pool->profiling, memory_order_relaxed)) return;
    atomic_store_explicit(&w->idle_since, weft__now_ns(), memory_order_relaxed);
}

static void worker_idle_end(weft__worker_t *w)
{
    /* relaxed: profiling figures only */
    uint64_t since = atomic_load_explicit(&w->idle_since, memory_order_relaxed);
    if (WEFT_LIKELY(!since)) return;
    uint64_t now = weft__now_ns();
    atomic_store_explicit(&w->idle_since, 0, memory_order_relaxed);
    atomic_fetch_add_explicit(&w->idle_ns, now - since, memory_order_relaxed);
}

/* ------------------------------------------------------- scheduling loop */

/* Poll for work `spin` times, then sleep on work_ec until woken. Returns
 * true with an item, or false when stop(arg) (or pool shutdown if stop is
 * NULL) became true. */
static bool worker_idle(weft__worker_t *w, weft__item_t *out, bool (*stop)(void *), void *arg)
{
    weft_pool_t *pool = w->pool;
    worker_idle_begin(w, false);
    for (;;) {
        for (unsigned i = 0; i < pool->spin; i++) {
            if (stop && stop(arg)) goto stopped;
            if (worker_find_work(w, out)) goto found;
            weft__cpu_relax();
        }
        uint32_t key = weft__notifier_prepare_wait(&pool->work_ec);
        /* seq_cst: recheck of the notifier protocol; pairs with the seq_cst
         * store of shutdown in pool_join */
        bool quit = stop ? stop(arg) : atomic_load_explicit(&pool->shutdown, memory_order_seq_cst);
        if (quit) {
            weft__notifier_cancel_wait(&pool->work_ec);
            goto stopped;
        }
        if (worker_find_work(w, out)) {
            weft__notifier_cancel_wait(&pool->work_ec);
            goto found;
        }
        worker_idle_begin(w, true);
        weft__notifier_commit_wait(&pool->work_ec, key);
    }
found:
    worker_idle_end(w);
    return true;
stopped:
    worker_idle_end(w);
    return false;
}

static void *worker_main(void *p)
{
    weft__worker_t *w = p;
    tls_worker = w;
    weft__item_t it;
    for (;;) {
        if (worker_find_work(w, &it) || worker_idle(w, &it, NULL, NULL))
            item_exec(it, w);
        /* acquire: pairs with the store in pool_join */
        else if (atomic_load_explicit(&w->pool->shutdown, memory_order_acquire))
            break;
    }
    tls_worker = NULL;
    return NULL;
}

/* ------------------------------------------------- submit, wait, notify */

void weft__worker_push(weft__worker_t *w, weft__item_t item)
{
    if (WEFT_UNLIKELY(weft__deque_push_owner(&w->dq, item) != WEFT_OK)) {
        item_exec(item, w); /* out of memory growing the deque: run it here */
        return;
    }
    if (w->pool->nthreads > 1) weft__notifier_notify_one(&w->pool->work_ec);
}

static weft_status_t pool_inject(weft_pool_t *pool, weft__item_t item)
{
    pthread_mutex_lock(&pool->inj_mu);
    size_t cnt = atomic_load_explicit(&pool->inj_count, memory_order_relaxed); // relaxed: under mu
    if (cnt == pool->inj_cap) { /* grow: only when more than cap submitters race */
        size_t ncap = pool->inj_cap * 2;
        weft__item_t *n = weft__alloc(pool->alloc, ncap * sizeof *n);
        if (!n) {
            pthread_mutex_unlock(&pool->inj_mu);
            return WEFT_ENOMEM;
        }
        for (size_t i = 0; i < cnt; i++) n[i] = pool->inj[(pool->inj_head + i) % pool->inj_cap];
        weft__free(pool->alloc, pool->inj, pool->inj_cap * sizeof *n);
        pool->inj = n;
        pool->inj_cap = ncap;
        pool->inj_head = 0;
    }
    pool->inj[(pool->inj_head + cnt) % pool->inj_cap] = item;
    /* seq_cst: the condition store of the notifier protocol, before
     * notify_one's load of waiters; pairs with the load in pool_inject_pop */
    atomic_store_explicit(&pool->inj_count, cnt + 1, memory_order_seq_cst);
    pthread_mutex_unlock(&pool->inj_mu);
    weft__notifier_notify_one(&pool->work_ec);
    return WEFT_OK;
}

weft_status_t weft__pool_submit(weft_pool_t *pool, weft__item_t item)
{
    weft__worker_t *w = tls_worker;
    if (!w || w->pool != pool) return pool_inject(pool, item);
    weft__worker_push(w, item);
    return WEFT_OK;
}

weft__worker_t *weft__pool_guest_enter(weft_pool_t *pool)
{
    weft__worker_t *g = pool->guest;
    if (!g || tls_worker) return NULL;
    int free_token = 0;
    /* acquire: the worker's last work (index 0) happens before ours */
    if (!atomic_compare_exchange_strong_explicit(&pool->exec_token, &free_token, 2,
                                                 memory_order_acquire, memory_order_relaxed))
        return NULL; /* the worker is busy: submit to it as usual */
    tls_worker = g;
    return g;
}

bool weft__pool_in_guest(const weft_pool_t *pool)
{
    return tls_worker && tls_worker->guest && tls_worker->pool == pool;
}

void weft__pool_guest_exit(weft_pool_t *pool, weft__worker_t *g)
{
    if (!g) return;
    weft__item_t it;
    /* done means every item of the call ran; nothing else is queued here */
    WEFT_ASSERT(!worker_find_local(g, &it), "guest left work behind");
    tls_worker = NULL;
    /* seq_cst: release publishes the guest's work to the worker; seq_cst as
     * the notifier's condition store, ordered before the load of inj_count:
     * a worker that found the token taken went to sleep, and work injected
     * meanwhile (by other threads) is its to run now */
    atomic_store_explicit(&pool->exec_token, 0, memory_order_seq_cst);
    if (atomic_load_explicit(&pool->inj_count, memory_order_seq_cst) > 0)
        weft__notifier_notify_one(&pool->work_ec);
}

static void pool_wait_external(weft_pool_t *pool, bool (*done)(void *), void *arg)
{
    for (unsigned i = 0; i < pool->spin; i++) {
        if (done(arg)) return;
        weft__cpu_relax();
    }
    for (;;) {
        uint32_t key = weft__notifier_prepare_wait(&pool->done_ec);
        if (done(arg)) {
            weft__notifier_cancel_wait(&pool->done_ec);
            return;
        }
        weft__notifier_commit_wait(&pool->done_ec, key);
    }
}

void weft__pool_wait(weft_pool_t *pool, bool (*done)(void *), void *arg)
{
    weft__worker_t *w = tls_worker;
    if (!w || w->pool != pool) {
        pool_wait_external(pool, done, arg);
        return;
    }
    weft__item_t it;
    while (!done(arg)) { /* help while waiting: run anything runnable */
        /* Deferred sink counts first: they may finish the very run waited
         * for (a nested run's last sink). Applied only once the local deque
         * ran dry, the waiter first ran whatever its deque held - a Scan
         * stage's long product - with its own run already over, and the
         * Scan's chain waited behind it (docs/control-flow.md §5.6).
         * Applied here, a run's completion item (which only marks it
         * finished) is the deque's newest and is popped first. Node
         * releases stay batched until the deque runs dry: popped first,
         * they would run before the waiter's own parallel-for chunks. */
        worker_flush(w, &w->defer[WEFT__DEFER_SINKS]);
        if (worker_find_work(w, &it) || worker_idle(w, &it, done, arg)) item_exec(it, w);
    }
}

void weft__pool_notify_done(weft_pool_t *pool)
{
    weft__notifier_notify_all(&pool->work_ec);
    weft__notifier_notify_all(&pool->done_ec);
}

/* --------------------------------------------------- deferred counters */

static bool worker_flush(weft__worker_t *w, weft__defer_t *d)
{
    if (!d->ctr) return false;
    _Atomic uint32_t *ctr = d->ctr;
    uint32_t n = d->n;
    d->ctr = NULL;
    /* acq_rel: release publishes the effects of the n nodes whose decrements
     * were deferred; acquire (for the one reaching 0) sees every other
     * decrementer's effects before on_zero runs */
    if (atomic_fetch_sub_explicit(ctr, n, memory_order_acq_rel) != n) return false;
    weft__worker_push(w, d->on_zero);
    return true;
}

static bool worker_flush_all(weft__worker_t *w)
{
    bool any = false;
    for (unsigned i = 0; i < WEFT__DEFER_SLOTS; i++) any |= worker_flush(w, &w->defer[i]);
    return any;
}

void weft__worker_defer(weft__worker_t *w, unsigned slot, _Atomic uint32_t *ctr,
                        weft__item_t on_zero)
{
    weft__defer_t *d = &w->defer[slot];
    if (d->ctr == ctr) {
        d->n++;
        return;
    }
    worker_flush(w, d);
    d->ctr = ctr;
    d->n = 1;
    d->on_zero = on_zero;
}

/* ------------------------------------------------------- create/destroy */

static weft_status_t pool_options_check(const weft_pool_options_t *opts)
{
    if (!opts) return WEFT_OK;
    if (opts->size < sizeof(weft_pool_options_t)) return WEFT_EINVAL;
    if (opts->pin != WEFT_PIN_COMPACT && opts->pin != WEFT_PIN_SCATTER &&
        opts->pin != WEFT_PIN_NONE)
        return WEFT_EINVAL;
    return WEFT_OK;
}

static void pool_free(weft_pool_t *pool, int ndeques, int sync_ok)
{
    for (int i = 0; i < ndeques; i++) weft__deque_fini(&pool->workers[i].dq);
    if (sync_ok >= 1) weft__notifier_fini(&pool->work_ec);
    if (sync_ok >= 2) weft__notifier_fini(&pool->done_ec);
    if (sync_ok >= 3) pthread_mutex_destroy(&pool->inj_mu);
    weft__free(pool->alloc, pool->inj, pool->inj_cap * sizeof(weft__item_t));
    weft__free(pool->alloc, pool->workers_raw, pool->workers_bytes);
    pool->magic = 0;
    weft__free(pool->alloc, pool->raw, pool->raw_bytes);
}

static weft_status_t pool_alloc(int threads, const weft_allocator_t *a, weft_pool_t **out)
{
    void *raw;
    size_t raw_bytes;
    weft_pool_t *pool = weft__alloc_aligned(a, sizeof *pool, &raw, &raw_bytes);
    if (!pool) return WEFT_ENOMEM;
    memset(pool, 0, sizeof *pool);
    pool->raw = raw;
    pool->raw_bytes = raw_bytes;
    pool->alloc = a;
    pool->nthreads = threads;
    pool->inj_cap = POOL_INJ_INITIAL;
    pool->inj = weft__alloc(a, pool->inj_cap * sizeof(weft__item_t));
    /* a one-worker pool gets a second slot: the guest (see pool_int.h) */
    size_t slots = (size_t)threads + (threads == 1);
    pool->workers = weft__alloc_aligned(a, slots * sizeof(weft__worker_t), &pool->workers_raw,
                                        &pool->workers_bytes);
    if (!pool->inj || !pool->workers) {
        pool_free(pool, 0, 0);
        return WEFT_ENOMEM;
    }
    memset(pool->workers, 0, slots * sizeof(weft__worker_t));
    *out = pool;
    return WEFT_OK;
}

static weft_status_t pool_init_sync(weft_pool_t *pool, int *sync_ok)
{
    *sync_ok = 0;
    if (weft__notifier_init(&pool->work_ec) != WEFT_OK) return WEFT_ESYSTEM;
    *sync_ok = 1;
    if (weft__notifier_init(&pool->done_ec) != WEFT_OK) return WEFT_ESYSTEM;
    *sync_ok = 2;
    if (pthread_mutex_init(&pool->inj_mu, NULL) != 0) return WEFT_ESYSTEM;
    *sync_ok = 3;
    return WEFT_OK;
}

/* Worker slots with a deque: the workers, plus the guest of a one-worker
 * pool (the slot after them). */
static int pool_n_slots(const weft_pool_t *pool)
{
    return pool->nthreads + (pool->nthreads == 1);
}

static weft_status_t pool_init_workers(weft_pool_t *pool, int *ndeques)
{
    for (int i = 0; i < pool_n_slots(pool); i++) {
        weft__worker_t *w = &pool->workers[i];
        if (weft__deque_init(&w->dq, pool->alloc, 8) != WEFT_OK) return WEFT_ENOMEM;
        *ndeques = i + 1;
        w->pool = pool;
        w->guest = i == pool->nthreads;
        w->index = w->guest ? 0 : (unsigned)i; /* runs only while the worker does not */
        w->rng = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
    }
    if (pool->nthreads == 1) pool->guest = &pool->workers[1];
    return WEFT_OK;
}

/* Stop and join the first n workers (shutdown protocol: release store of
 * shutdown, then wake everyone; a worker exits when it finds no work and
 * sees the flag). */
static void pool_join(weft_pool_t *pool, int n)
{
    /* seq_cst: the notifier's condition store; pairs with the loads of
     * shutdown in worker_idle and worker_main */
    atomic_store_explicit(&pool->shutdown, 1, memory_order_seq_cst);
    weft__notifier_notify_all(&pool->work_ec);
    for (int i = 0; i < n; i++) pthread_join(pool->workers[i].thread, NULL);
}

static weft_status_t pool_start_threads(weft_pool_t *pool, weft_pin_policy_t pin)
{
    pthread_t *ids = weft__alloc(pool->alloc, (size_t)pool->nthreads * sizeof *ids);
    if (!ids) return WEFT_ENOMEM;
    for (int i = 0; i < pool->nthreads; i++) {
        if (pthread_create(&pool->workers[i].thread, NULL, worker_main, &pool->workers[i])) {
            pool_join(pool, i);
            weft__free(pool->alloc, ids, (size_t)pool->nthreads * sizeof *ids);
            return WEFT_ESYSTEM;
        }
        ids[i] = pool->workers[i].thread;
    }
    pool->pinned = weft__topology_pin_threads(ids, pool->nthreads, pin);
    weft__free(pool->alloc, ids, (size_t)pool->nthreads * sizeof *ids);
    return WEFT_OK;
}

weft_status_t weft_pool_create(int threads, const weft_pool_options_t *opts, weft_pool_t **out)
{
    if (!out) return WEFT_EINVAL;
    *out = NULL;
    if (threads <= 0 || threads > WEFT__POOL_MAX_THREADS) return WEFT_EINVAL;
    weft_status_t st = pool_options_check(opts);
    if (st != WEFT_OK) return st;
    const weft_allocator_t *a =
        opts && opts->allocator ? opts->allocator : weft_allocator_default();
    weft_pool_t *pool;
    if ((st = pool_alloc(threads, a, &pool)) != WEFT_OK) return st;
    /* oversubscribed workers spin less: a spinning worker takes a core from
     * a busy one */
    pool->spin = opts && opts->spin ? opts->spin
                 : threads > weft__topology_core_count() ? POOL_OVERSUBSCRIBED_SPIN
                                                         : POOL_DEFAULT_SPIN;
    int ndeques = 0, sync_ok = 0;
    if ((st = pool_init_sync(pool, &sync_ok)) == WEFT_OK &&
        (st = pool_init_workers(pool, &ndeques)) == WEFT_OK)
        st = pool_start_threads(pool, opts ? opts->pin : WEFT_PIN_COMPACT);
    if (st != WEFT_OK) {
        pool_free(pool, ndeques, sync_ok);
        return st;
    }
    pool->magic = WEFT__POOL_MAGIC;
    *out = pool;
    return WEFT_OK;
}

weft_status_t weft_pool_destroy(weft_pool_t *pool)
{
    if (!pool) return WEFT_OK;
    if (pool->magic != WEFT__POOL_MAGIC) return WEFT_EINVAL;
    if (tls_worker && tls_worker->pool == pool) return WEFT_ESTATE;
    /* acquire: pairs with the release decrements in run/parallel-for waits
     * and run destroy, so their accesses to the pool happen before we free */
    if (atomic_load_explicit(&pool->inflight, memory_order_acquire) ||
        atomic_load_explicit(&pool->attached, memory_order_acquire))
        return WEFT_EBUSY;
    pool_join(pool, pool->nthreads);
    pool_free(pool, pool_n_slots(pool), 3);
    return WEFT_OK;
}

int weft_pool_thread_count(const weft_pool_t *pool)
{
    return pool && pool->magic == WEFT__POOL_MAGIC ? pool->nthreads : 0;
}

int weft_pool_idle_workers(const weft_pool_t *pool)
{
    if (!pool || pool->magic != WEFT__POOL_MAGIC) return 0;
    /* relaxed: a hint read without ordering against the workers' tasks */
    uint32_t w = atomic_load_explicit(&pool->work_ec.waiters, memory_order_relaxed);
    return w > (uint32_t)pool->nthreads ? pool->nthreads : (int)w;
}

bool weft_pool_is_pinned(const weft_pool_t *pool)
{
    return pool && pool->magic == WEFT__POOL_MAGIC && pool->pinned;
}

int weft_pool_current_worker(const weft_pool_t *pool)
{
    weft__worker_t *w = tls_worker;
    return pool && w && w->pool == pool ? (int)w->index : -1;
}

/* --------------------------------------------------------- parallel-for */

/* A parallel-for lives on its caller's stack until `left` reaches 0; no
 * thread touches it after its own final decrement. Payload: chunk range
 * [lo, hi) as (lo << 32) | hi. */
typedef struct pool_for {
    weft__task_t task;
    weft_range_fn fn;
    void *arg;
    size_t begin, end, grain;
    weft_pool_t *pool;
    _Atomic uint64_t left;  // chunks not finished
    _Atomic int status;     // first failure
    bool on_caller;         // run by its caller (the guest): nobody sleeps on it
} pool_for_t;

static uint64_t pool_for_payload(uint64_t lo, uint64_t hi)
{
    return (lo << 32) | hi;
}

static void pool_for_chunk(pool_for_t *pf, uint64_t c, weft__worker_t *w)
{
    /* relaxed: a skip hint; the status itself is read after the final
     * acq_rel decrement of left */
    if (atomic_load_explicit(&pf->status, memory_order_relaxed) != WEFT_OK) return;
    size_t b = pf->begin + (size_t)c * pf->grain;
    size_t e = pf->end - b > pf->grain ? b + pf->grain : pf->end;
    weft_task_ctx_t ctx = { NULL, w->index, pf->pool, NULL, NULL, WEFT_DAG_NO_NODE, NULL };
    weft_status_t st = pf->fn(pf->arg, b, e, &ctx);
    int ok = WEFT_OK;
    /* relaxed: the first failure wins; published to the waiter by the acq_rel
     * decrement of left below */
    if (st != WEFT_OK)
        atomic_compare_exchange_strong_explicit(&pf->status, &ok, (int)st, memory_order_relaxed,
                                                memory_order_relaxed);
}

static void pool_for_exec(weft__task_t *t, uint64_t payload, weft__worker_t *w)
{
    pool_for_t *pf = (pool_for_t *)t;
    uint64_t lo = payload >> 32, hi = payload & 0xffffffffu;
    while (hi - lo > 1) { /* lazy binary splitting: leave the upper half to thieves */
        uint64_t mid = lo + (hi - lo) / 2;
        weft__worker_push(w, (weft__item_t){ t, pool_for_payload(mid, hi) });
        hi = mid;
    }
    pool_for_chunk(pf, lo, w);
    weft_pool_t *pool = pf->pool;
    bool on_caller = pf->on_caller;
    /* seq_cst: release publishes this chunk's effects, acquire (last one)
     * sees the others'; seq_cst as the notifier's condition store before
     * notify's load of waiters; pairs with the load in pool_for_done */
    if (atomic_fetch_sub_explicit(&pf->left, 1, memory_order_seq_cst) == 1 && !on_caller)
        weft__pool_notify_done(pool); /* pf may be gone now: only pool used */
}

static bool pool_for_done(void *arg)
{
    /* seq_cst: recheck of the notifier protocol (and acquire of every
     * chunk's effects); pairs with the final decrement in pool_for_exec */
    return atomic_load_explicit(&((pool_for_t *)arg)->left, memory_order_seq_cst) == 0;
}

weft_status_t weft_pool_parallel_for(weft_pool_t *pool, size_t begin, size_t end, size_t grain,
                                     weft_range_fn fn, void *arg)
{
    if (!pool || pool->magic != WEFT__POOL_MAGIC || !fn || begin > end) return WEFT_EINVAL;
    if (begin == end) return WEFT_OK;
    size_t n = end - begin;
    if (grain == 0) grain = n / (8 * (size_t)pool->nthreads) + 1;
    if (n / grain >= 0x7fffffffu) grain = n / 0x7fffffffu + 1;
    uint64_t chunks = (n + grain - 1) / grain;
    /* relaxed: the counter is published with the pool's own synchronisation
     * (decremented by the waiter, read at destroy) */
    atomic_fetch_add_explicit(&pool->inflight, 1, memory_order_relaxed);
    weft__worker_t *guest = weft__pool_guest_enter(pool);
    pool_for_t pf = { { pool_for_exec }, fn, arg, begin, end, grain, pool, chunks, WEFT_OK,
                      guest != NULL || weft__pool_in_guest(pool) };
    weft_status_t st = weft__pool_submit(pool, (weft__item_t){ &pf.task, pool_for_payload(0, chunks) });
    if (st == WEFT_OK) weft__pool_wait(pool, pool_for_done, &pf);
    weft__pool_guest_exit(pool, guest);
    /* release: pairs with the acquire load in weft_pool_destroy */
    atomic_fetch_sub_explicit(&pool->inflight, 1, memory_order_release);
    if (st != WEFT_OK) return st;
    /* relaxed: ordered by the seq_cst load of left in pool_for_done */
    return (weft_status_t)atomic_load_explicit(&pf.status, memory_order_relaxed);
}
