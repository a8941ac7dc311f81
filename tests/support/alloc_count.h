/* Counting the process's allocations in tests: every malloc, calloc, realloc
 * and aligned_alloc made from the test executable's own objects (its code
 * and the static weft libraries linked into it) between alloc_count_start and
 * alloc_count_stop. A test links tests/support/alloc_count.c and the linker's
 * --wrap options through weft_test_count_allocs (tests/CMakeLists.txt).
 * Thread: any thread's allocations count; start/stop from the test thread. */
#ifndef WEFT_TESTS_ALLOC_COUNT_H
#define WEFT_TESTS_ALLOC_COUNT_H

/* Zeroes the counter and starts counting. */
void alloc_count_start(void);
/* Stops counting; returns the allocations counted since alloc_count_start. */
long alloc_count_stop(void);

#endif /* WEFT_TESTS_ALLOC_COUNT_H */
