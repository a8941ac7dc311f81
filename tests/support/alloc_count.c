/* The allocation counter of tests/support/alloc_count.h: the linker's --wrap
 * sends the test's allocation calls here, which count them and forward to
 * the C library, or fail the one chosen by alloc_fail_at. */
#include "support/alloc_count.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t a, size_t b);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t al, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t a, size_t b);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_aligned_alloc(size_t al, size_t n);

static atomic_bool counting;
static atomic_long n_allocs;
static atomic_long fail_at; /* the counted allocation that fails (1-based); 0: none */

/* Counts one allocation; true when it is the one to fail. */
static bool count_one(void)
{
    /* relaxed: a test counter, read after the counted work returned (the
     * test's joins and the pool's completion order it); fail_at is set by
     * the test thread before the counted work starts */
    if (!atomic_load_explicit(&counting, memory_order_relaxed)) return false;
    long n = atomic_fetch_add_explicit(&n_allocs, 1, memory_order_relaxed) + 1;
    return n == atomic_load_explicit(&fail_at, memory_order_relaxed);
}

void *__wrap_malloc(size_t n)
{
    return count_one() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t a, size_t b)
{
    return count_one() ? NULL : __real_calloc(a, b);
}

void *__wrap_realloc(void *p, size_t n)
{
    return count_one() ? NULL : __real_realloc(p, n); /* failed: p stays valid */
}

void *__wrap_aligned_alloc(size_t al, size_t n)
{
    return count_one() ? NULL : __real_aligned_alloc(al, n);
}

void alloc_count_start(void)
{
    alloc_fail_at(0);
}

void alloc_fail_at(long k)
{
    /* relaxed: the test thread's own flag and counters, see count_one */
    atomic_store_explicit(&n_allocs, 0, memory_order_relaxed);
    atomic_store_explicit(&fail_at, k, memory_order_relaxed);
    atomic_store_explicit(&counting, true, memory_order_relaxed);
}

long alloc_count_stop(void)
{
    /* relaxed: see count_one */
    atomic_store_explicit(&counting, false, memory_order_relaxed);
    atomic_store_explicit(&fail_at, 0, memory_order_relaxed);
    return atomic_load_explicit(&n_allocs, memory_order_relaxed);
}
