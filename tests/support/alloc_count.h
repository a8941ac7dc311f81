/* Counting the process's allocations in tests, and failing one of them on
 * purpose: every malloc, calloc, realloc and aligned_alloc made from the test
 * executable's own objects (its code and the static weft libraries linked
 * into it) between alloc_count_start (or alloc_fail_at) and
 * alloc_count_stop. A test links tests/support/alloc_count.c and the
 * linker's --wrap options through weft_test_count_allocs
 * (tests/CMakeLists.txt).
 * Thread: any thread's allocations count; start/stop from the test thread. */
#ifndef WEFT_TESTS_ALLOC_COUNT_H
#define WEFT_TESTS_ALLOC_COUNT_H

/* Zeroes the counter and starts counting. */
void alloc_count_start(void);
/* As alloc_count_start, and the k-th allocation counted from now (k >= 1)
 * fails: malloc, calloc and aligned_alloc return NULL, realloc returns NULL
 * and leaves its block as it was. The others go through. k = 0: none fails. */
void alloc_fail_at(long k);
/* Stops counting (and failing); returns the allocations counted since
 * alloc_count_start or alloc_fail_at. */
long alloc_count_stop(void);

#endif /* WEFT_TESTS_ALLOC_COUNT_H */
