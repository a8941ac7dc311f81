/* The checking allocator of tests/support/counting_alloc.h: a bump region
 * plus an open-addressing table of live blocks (pointer -> size). */
#include "support/counting_alloc.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "support/alloc_count.h"

#define REGION_BYTES (128u << 20)
#define TABLE_SLOTS (1u << 20) /* power of two */
#define ALIGN 16u

static _Alignas(ALIGN) unsigned char region[REGION_BYTES];
static size_t region_used;

typedef struct slot {
    void *p; /* NULL: empty; TOMB: released */
    size_t n;
} slot_t;
#define TOMB ((void *)1)
static slot_t table[TABLE_SLOTS];

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static counting_alloc_stats_t st;

static size_t slot_of(const void *p)
{
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 20) & (TABLE_SLOTS - 1);
}

static void *block_new(size_t n)
{
    size_t need = (n + ALIGN - 1) / ALIGN * ALIGN;
    if (n > REGION_BYTES || need > REGION_BYTES - region_used) return NULL;
    void *p = region + region_used;
    region_used += need;
    size_t i = slot_of(p);
    while (table[i].p && table[i].p != TOMB) i = (i + 1) & (TABLE_SLOTS - 1);
    table[i] = (slot_t){p, n};
    st.allocs++;
    st.live_blocks++;
    st.live_bytes += n;
    return p;
}

/* The table slot of live block p, or SIZE_MAX (counted as unknown). */
static size_t block_find(const void *p)
{
    for (size_t i = slot_of(p); table[i].p; i = (i + 1) & (TABLE_SLOTS - 1))
        if (table[i].p == p) return i;
    st.unknown++;
    return SIZE_MAX;
}

/* Releases the block in slot i, checking it was allocated with old_size. */
static void block_release(size_t i, size_t old_size)
{
    if (table[i].n != old_size) st.size_mismatches++;
    st.frees++;
    st.live_blocks--;
    st.live_bytes -= table[i].n;
    table[i].p = TOMB;
}

static void *resize(void *user, void *ptr, size_t old_size, size_t new_size)
{
    (void)user;
    pthread_mutex_lock(&lock);
    void *q = NULL;
    if (!ptr) {
        if (old_size != 0) st.size_mismatches++;
        q = new_size ? block_new(new_size) : NULL;
    } else {
        size_t i = block_find(ptr);
        size_t had = i == SIZE_MAX ? 0 : table[i].n;
        q = i != SIZE_MAX && new_size ? block_new(new_size) : NULL;
        if (q) memcpy(q, ptr, had < new_size ? had : new_size);
        /* realloc semantics: a failed resize leaves the old block live */
        if (i != SIZE_MAX && (q || !new_size)) block_release(i, old_size);
    }
    pthread_mutex_unlock(&lock);
    return q;
}

static const weft_allocator_t counting = {resize, NULL};

const weft_allocator_t *counting_alloc(void)
{
    return &counting;
}

void counting_alloc_reset(void)
{
    pthread_mutex_lock(&lock);
    memset(table, 0, sizeof table);
    memset(&st, 0, sizeof st);
    region_used = 0;
    pthread_mutex_unlock(&lock);
}

counting_alloc_stats_t counting_alloc_stats(void)
{
    pthread_mutex_lock(&lock);
    counting_alloc_stats_t s = st;
    pthread_mutex_unlock(&lock);
    return s;
}

void counting_alloc_expect_all(void (*work)(const weft_allocator_t *al), long min_allocs)
{
    counting_alloc_reset();
    alloc_count_start();
    work(counting_alloc());
    long libc = alloc_count_stop();
    counting_alloc_stats_t s = counting_alloc_stats();
    assert_int_equal(libc, 0);
    assert_true(s.allocs >= min_allocs);
    assert_int_equal(s.size_mismatches, 0);
    assert_int_equal(s.unknown, 0);
    assert_int_equal(s.live_blocks, 0);
    assert_int_equal(s.live_bytes, 0);
    assert_int_equal(s.frees, s.allocs);
}

void counting_alloc_expect_c_library(void (*work)(const weft_allocator_t *al), long min_allocs)
{
    counting_alloc_reset();
    alloc_count_start();
    work(NULL);
    long libc = alloc_count_stop();
    assert_true(libc >= min_allocs);
    assert_int_equal(counting_alloc_stats().allocs, 0);
}
