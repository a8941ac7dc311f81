/* Chase-Lev deque: sequential semantics (LIFO pop, FIFO steal, empty,
 * growth), then one owner pushing/popping while several thieves steal:
 * every item is taken exactly once. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>

#include "deque_int.h"

#ifdef WEFT_SANITIZED
#define HAMMER_ITEMS 60000u
#else
#define HAMMER_ITEMS 2000000u
#endif
#define HAMMER_THIEVES 3

static weft__item_t item(uint64_t v)
{
    return (weft__item_t){ (weft__task_t *)(uintptr_t)0x1000, v };
}

static int setup(void **state)
{
    weft__deque_t *dq = malloc(sizeof *dq);
    if (!dq || weft__deque_init(dq, weft_allocator_default(), 2) != WEFT_OK) return -1;
    *state = dq;
    return 0;
}

static int teardown(void **state)
{
    weft__deque_fini(*state);
    free(*state);
    return 0;
}

static void test_deque_pop_on_empty_returns_false(void **state)
{
    weft__deque_t *dq = *state;
    weft__item_t it;
    assert_false(weft__deque_pop_owner(dq, &it));
    assert_int_equal(weft__deque_steal(dq, &it), WEFT__STEAL_EMPTY);
    assert_int_equal(weft__deque_size_hint(dq), 0);
}

static void test_deque_push_pop_is_lifo(void **state)
{
    weft__deque_t *dq = *state;
    weft__item_t it;
    for (uint64_t i = 0; i < 3; i++) assert_int_equal(weft__deque_push_owner(dq, item(i)), WEFT_OK);
    for (uint64_t i = 3; i-- > 0;) {
        assert_true(weft__deque_pop_owner(dq, &it));
        assert_int_equal(it.payload, i);
        assert_ptr_equal(it.task, (void *)(uintptr_t)0x1000);
    }
    assert_false(weft__deque_pop_owner(dq, &it));
}

static void test_deque_steal_is_fifo(void **state)
{
    weft__deque_t *dq = *state;
    weft__item_t it;
    for (uint64_t i = 0; i < 3; i++) weft__deque_push_owner(dq, item(i));
    for (uint64_t i = 0; i < 3; i++) {
        assert_int_equal(weft__deque_steal(dq, &it), WEFT__STEAL_OK);
        assert_int_equal(it.payload, i);
    }
    assert_int_equal(weft__deque_steal(dq, &it), WEFT__STEAL_EMPTY);
}

static void test_deque_growth_keeps_every_item_in_order(void **state)
{
    weft__deque_t *dq = *state; /* initial capacity 4 */
    weft__item_t it;
    for (uint64_t i = 0; i < 1000; i++) assert_int_equal(weft__deque_push_owner(dq, item(i)), WEFT_OK);
    assert_int_equal(weft__deque_size_hint(dq), 1000);
    for (uint64_t i = 0; i < 10; i++) { /* steal the oldest, pop the newest */
        assert_int_equal(weft__deque_steal(dq, &it), WEFT__STEAL_OK);
        assert_int_equal(it.payload, i);
    }
    for (uint64_t i = 1000; i-- > 10;) {
        assert_true(weft__deque_pop_owner(dq, &it));
        assert_int_equal(it.payload, i);
    }
    assert_false(weft__deque_pop_owner(dq, &it));
}

static void test_deque_interleaved_push_pop_steal_wraps_around(void **state)
{
    weft__deque_t *dq = *state;
    weft__item_t it;
    uint64_t next = 0, stolen = 0;
    for (int round = 0; round < 100; round++) { /* top and bottom march past capacity */
        weft__deque_push_owner(dq, item(next++));
        weft__deque_push_owner(dq, item(next++));
        assert_int_equal(weft__deque_steal(dq, &it), WEFT__STEAL_OK);
        assert_int_equal(it.payload, stolen);
        stolen += 2;
        assert_true(weft__deque_pop_owner(dq, &it));
        assert_int_equal(it.payload, next - 1);
    }
    assert_false(weft__deque_pop_owner(dq, &it));
}

/* ------------------------------------------------------------- hammer */

typedef struct hammer {
    weft__deque_t dq;
    _Atomic uint8_t *taken;
    _Atomic int owner_done;
    _Atomic uint64_t count;
} hammer_t;

static void hammer_take(hammer_t *h, weft__item_t it)
{
    /* relaxed: counting only; joined before the check */
    uint8_t before = atomic_fetch_add_explicit(&h->taken[it.payload], 1, memory_order_relaxed);
    if (before != 0) {
        fprintf(stderr, "item %llu taken twice\n", (unsigned long long)it.payload);
        abort();
    }
    atomic_fetch_add_explicit(&h->count, 1, memory_order_relaxed);
}

static void *hammer_thief(void *p)
{
    hammer_t *h = p;
    weft__item_t it;
    for (;;) {
        weft__steal_result_t r = weft__deque_steal(&h->dq, &it);
        if (r == WEFT__STEAL_OK)
            hammer_take(h, it);
        else if (r == WEFT__STEAL_EMPTY && atomic_load_explicit(&h->owner_done, memory_order_acquire))
            return NULL; // acquire: pairs with the owner's release store of owner_done
    }
}

static void hammer_owner(hammer_t *h)
{
    weft__item_t it;
    uint64_t next = 0, seed = 12345;
    printf("deque hammer: seed=%llu items=%u thieves=%d\n", (unsigned long long)seed, HAMMER_ITEMS,
           HAMMER_THIEVES);
    while (next < HAMMER_ITEMS) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        unsigned burst = (unsigned)(seed >> 60) + 1; /* 1..16 pushes, then 0..7 pops */
        for (unsigned i = 0; i < burst && next < HAMMER_ITEMS; i++)
            assert_int_equal(weft__deque_push_owner(&h->dq, item(next++)), WEFT_OK);
        for (unsigned i = 0; i < ((seed >> 40) & 7); i++)
            if (weft__deque_pop_owner(&h->dq, &it)) hammer_take(h, it);
    }
    while (weft__deque_pop_owner(&h->dq, &it)) hammer_take(h, it);
    /* release: pairs with the thieves' acquire load */
    atomic_store_explicit(&h->owner_done, 1, memory_order_release);
}

static void test_deque_owner_and_thieves_take_each_item_exactly_once(void **state)
{
    (void)state;
    hammer_t h;
    assert_int_equal(weft__deque_init(&h.dq, weft_allocator_default(), 3), WEFT_OK);
    h.taken = calloc(HAMMER_ITEMS, 1);
    assert_non_null(h.taken);
    atomic_init(&h.owner_done, 0);
    atomic_init(&h.count, 0);
    pthread_t th[HAMMER_THIEVES];
    for (int i = 0; i < HAMMER_THIEVES; i++) assert_int_equal(pthread_create(&th[i], NULL, hammer_thief, &h), 0);
    hammer_owner(&h);
    for (int i = 0; i < HAMMER_THIEVES; i++) pthread_join(th[i], NULL);
    assert_int_equal(atomic_load(&h.count), HAMMER_ITEMS);
    for (uint32_t i = 0; i < HAMMER_ITEMS; i++) assert_int_equal(atomic_load(&h.taken[i]), 1);
    free((void *)h.taken);
    weft__deque_fini(&h.dq);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_deque_pop_on_empty_returns_false, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deque_push_pop_is_lifo, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deque_steal_is_fifo, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deque_growth_keeps_every_item_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deque_interleaved_push_pop_steal_wraps_around, setup,
                                        teardown),
        cmocka_unit_test(test_deque_owner_and_thieves_take_each_item_exactly_once),
    };
    return cmocka_run_group_tests_name("deque", tests, NULL, NULL);
}
