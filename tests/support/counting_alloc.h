/* A weft_allocator_t for tests that checks what goes through it: it counts
 * the calls, keeps every live block with the size it was given, and records
 * each release or resize whose old_size differs from that size. Its memory is
 * a static region (blocks are never reused), never the C library, so it does
 * not show in alloc_count's counter (tests/support/alloc_count.h).
 * Thread: any (one mutex), as weft_pool_options_t.allocator requires. */
#ifndef WEFT_TESTS_COUNTING_ALLOC_H
#define WEFT_TESTS_COUNTING_ALLOC_H

#include <stddef.h>

#include "weft/alloc.h"

typedef struct counting_alloc_stats {
    long allocs;         /* blocks handed out (fresh allocations and resizes) */
    long frees;          /* blocks released (frees and the old side of resizes) */
    long size_mismatches; /* old_size not the size the block was allocated with */
    long unknown;        /* a pointer it never handed out, or one released twice */
    size_t live_blocks;  /* blocks allocated and not yet released */
    size_t live_bytes;   /* their bytes */
} counting_alloc_stats_t;

/* The allocator (a static object). */
const weft_allocator_t *counting_alloc(void);
/* Forgets everything; call with no block live. */
void counting_alloc_reset(void);
counting_alloc_stats_t counting_alloc_stats(void);

/* Test steps (cmocka assertions; link tests/support/alloc_count.c too).
 * counting_alloc_expect_all: runs work(counting_alloc()) while counting the
 * C library's allocations, then asserts the C library saw none, the checking
 * allocator at least min_allocs, and that every block came back, freed with
 * its size. counting_alloc_expect_c_library: runs work(NULL) and asserts the
 * C library saw at least min_allocs (so the first would see a bypass) and the
 * checking allocator nothing. */
void counting_alloc_expect_all(void (*work)(const weft_allocator_t *al), long min_allocs);
void counting_alloc_expect_c_library(void (*work)(const weft_allocator_t *al), long min_allocs);

#endif /* WEFT_TESTS_COUNTING_ALLOC_H */
