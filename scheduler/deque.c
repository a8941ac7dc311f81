/* Chase-Lev work-stealing deque in C11 atomics.
 *
 * Owns: the per-worker deque of weft__item_t (task pointer + payload).
 *
 * Protocol (Le, Pop, Cohen, Zappa Nardelli, "Correct and Efficient
 * Work-Stealing for Weak Memory Models", PPoPP 2013, figure 1):
 *   items live in slots [top, bottom) of a circular array;
 *   push (owner):  write slot[b]; publish bottom = b + 1
 *   take (owner):  bottom = b - 1; full fence; read top;
 *                  if top < b-1+1: item is ours, except the last one (top == b),
 *                  which we race for with thieves through CAS(top, t, t + 1)
 *   steal (thief): read top; full fence; read bottom; if top < bottom read
 *                  slot[top] and claim it with CAS(top, t, t + 1)
 * Invariants: top only grows (every change is a CAS +1); bottom is written
 * by the owner only; bottom - top < capacity, so the owner never overwrites a
 * slot a thief may still read; a thief's read of a slot is only used if its
 * CAS on top succeeds, which proves the slot was not reused.
 * Growth (owner): copy [top, bottom) into an array twice as large, publish it
 * (release). The old array stays readable (chained in `retired`, freed at
 * fini) because a thief may have loaded the old pointer: its slots for
 * indices in [top, old bottom) still hold the same items.
 * Departure from the paper: its seq_cst fences (in take, between the store of
 * bottom and the load of top; in steal, between the loads of top and bottom)
 * are expressed as seq_cst accesses to top and bottom themselves, which puts
 * the racing accesses in C11's single total order S (the reasoning is then
 * the sequentially consistent Chase-Lev argument). Same cost on x86 (mov +
 * mfence / xchg; seq_cst loads are plain loads) and ThreadSanitizer, which
 * does not model fences, checks it. push also stores bottom seq_cst: the pool
 * then loads the notifier's waiter count, and that store-load pair must not
 * be reordered (see notifier.c). */
#include "deque_int.h"

#include <string.h>

static weft__deque_array_t *deque_array_new(const weft_allocator_t *a, int64_t cap)
{
    size_t slots;
    if (!weft__mul_size((size_t)cap, sizeof(weft__deque_slot_t), &slots) ||
        slots > SIZE_MAX - sizeof(weft__deque_array_t))
        return NULL; /* the owner then runs the item itself (weft__worker_push) */
    weft__deque_array_t *arr = weft__alloc(a, sizeof(*arr) + slots);
    if (!arr) return NULL;
    arr->mask = cap - 1;
    arr->retired = NULL;
    return arr;
}

static size_t deque_array_bytes(const weft__deque_array_t *arr)
{
    return sizeof(*arr) + (size_t)(arr->mask + 1) * sizeof(weft__deque_slot_t);
}

static void deque_slot_put(weft__deque_array_t *arr, int64_t i, weft__item_t it)
{
    weft__deque_slot_t *s = &arr->slots[i & arr->mask];
    /* relaxed: published by the release store of bottom in push (or of the
     * array pointer in grow); pairs with the acquire loads in steal */
    atomic_store_explicit(&s->task, it.task, memory_order_relaxed);
    atomic_store_explicit(&s->payload, it.payload, memory_order_relaxed);
}

static weft__item_t deque_slot_get(weft__deque_array_t *arr, int64_t i)
{
    weft__deque_slot_t *s = &arr->slots[i & arr->mask];
    weft__item_t it;
    /* relaxed: ordered after the acquire load of bottom/array; a torn or
     * stale read is discarded because the CAS on top then fails */
    it.task = atomic_load_explicit(&s->task, memory_order_relaxed);
    it.payload = atomic_load_explicit(&s->payload, memory_order_relaxed);
    return it;
}

weft_status_t weft__deque_init(weft__deque_t *dq, const weft_allocator_t *alloc,
                               unsigned capacity_log2)
{
    if (capacity_log2 < 1) capacity_log2 = 1;
    if (capacity_log2 > 30) capacity_log2 = 30;
    weft__deque_array_t *arr = deque_array_new(alloc, (int64_t)1 << capacity_log2);
    if (!arr) return WEFT_ENOMEM;
    dq->alloc = alloc;
    /* relaxed: initialisation, published to other threads by thread creation
     * or the pool's start-up handshake */
    atomic_store_explicit(&dq->top, 0, memory_order_relaxed);
    atomic_store_explicit(&dq->bottom, 0, memory_order_relaxed);
    atomic_store_explicit(&dq->array, arr, memory_order_relaxed);
    return WEFT_OK;
}

void weft__deque_fini(weft__deque_t *dq)
{
    /* relaxed: no other thread uses the deque any more (workers joined) */
    weft__deque_array_t *arr = atomic_load_explicit(&dq->array, memory_order_relaxed);
    while (arr) {
        weft__deque_array_t *older = arr->retired;
        weft__free(dq->alloc, arr, deque_array_bytes(arr));
        arr = older;
    }
    atomic_store_explicit(&dq->array, NULL, memory_order_relaxed); // relaxed: as above
}

static weft__deque_array_t *deque_grow(weft__deque_t *dq, weft__deque_array_t *old, int64_t t,
                                       int64_t b)
{
    weft__deque_array_t *arr = deque_array_new(dq->alloc, (old->mask + 1) * 2);
    if (!arr) return NULL;
    for (int64_t i = t; i < b; i++) deque_slot_put(arr, i, deque_slot_get(old, i));
    arr->retired = old;
    /* release: publish the copied slots; pairs with the acquire load of
     * array in steal */
    atomic_store_explicit(&dq->array, arr, memory_order_release);
    return arr;
}

weft_status_t weft__deque_push_owner(weft__deque_t *dq, weft__item_t item)
{
    /* relaxed: bottom is written only by this (owner) thread */
    int64_t b = atomic_load_explicit(&dq->bottom, memory_order_relaxed);
    /* acquire: pairs with the thieves' CAS on top, so that slots they
     * finished reading may be reused */
    int64_t t = atomic_load_explicit(&dq->top, memory_order_acquire);
    /* relaxed: array is written only by this thread */
    weft__deque_array_t *arr = atomic_load_explicit(&dq->array, memory_order_relaxed);
    if (WEFT_UNLIKELY(b - t > arr->mask)) {
        arr = deque_grow(dq, arr, t, b);
        if (!arr) return WEFT_ENOMEM;
    }
    deque_slot_put(arr, b, item);
    /* seq_cst: publishes the slot (release part; pairs with the seq_cst load
     * of bottom in steal) and is ordered before the caller's seq_cst load of
     * the notifier's waiter count (pairs with prepare_wait's increment) */
    atomic_store_explicit(&dq->bottom, b + 1, memory_order_seq_cst);
    return WEFT_OK;
}

bool weft__deque_pop_owner(weft__deque_t *dq, weft__item_t *out)
{
    /* relaxed: owner-only fields */
    int64_t b = atomic_load_explicit(&dq->bottom, memory_order_relaxed) - 1;
    weft__deque_array_t *arr = atomic_load_explicit(&dq->array, memory_order_relaxed);
    /* seq_cst store then seq_cst load of top (the paper's fence): the store
     * of bottom is ordered before we read top; pairs with the seq_cst loads
     * of top then bottom in steal, so the owner and a thief never both take
     * the last item */
    atomic_store_explicit(&dq->bottom, b, memory_order_seq_cst);
    int64_t t = atomic_load_explicit(&dq->top, memory_order_seq_cst);
    if (t > b) { /* empty */
        atomic_store_explicit(&dq->bottom, b + 1, memory_order_relaxed); // relaxed: owner only
        return false;
    }
    *out = deque_slot_get(arr, b);
    if (t < b) return true; /* more than one item: no race possible */
    /* last item: race with thieves. seq_cst on success: pairs with the
     * thieves' CAS on top; relaxed on failure: we only learn we lost */
    bool won = atomic_compare_exchange_strong_explicit(&dq->top, &t, t + 1, memory_order_seq_cst,
                                                       memory_order_relaxed);
    atomic_store_explicit(&dq->bottom, b + 1, memory_order_relaxed); // relaxed: owner only
    return won;
}

weft__steal_result_t weft__deque_steal(weft__deque_t *dq, weft__item_t *out)
{
    /* seq_cst (both loads; the paper's fence between them): top is read
     * before bottom in the total order; pairs with the seq_cst store of bottom
     * and load of top in pop, and with the CASes on top. The load of bottom
     * also acquires the slot published by push's seq_cst store. */
    int64_t t = atomic_load_explicit(&dq->top, memory_order_seq_cst);
    int64_t b = atomic_load_explicit(&dq->bottom, memory_order_seq_cst);
    if (t >= b) return WEFT__STEAL_EMPTY;
    /* acquire: pairs with the release store of array in grow */
    weft__deque_array_t *arr = atomic_load_explicit(&dq->array, memory_order_acquire);
    weft__item_t it = deque_slot_get(arr, t);
    /* seq_cst on success: claims slot t, pairs with the CAS in pop and other
     * thieves; relaxed on failure: the read slot is discarded */
    if (!atomic_compare_exchange_strong_explicit(&dq->top, &t, t + 1, memory_order_seq_cst,
                                                 memory_order_relaxed))
        return WEFT__STEAL_ABORT;
    *out = it;
    return WEFT__STEAL_OK;
}

int64_t weft__deque_size_hint(weft__deque_t *dq)
{
    /* relaxed: a hint for victim selection; correctness never depends on it */
    int64_t b = atomic_load_explicit(&dq->bottom, memory_order_relaxed);
    int64_t t = atomic_load_explicit(&dq->top, memory_order_relaxed);
    return b > t ? b - t : 0;
}
