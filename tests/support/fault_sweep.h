/* An allocation-failure sweep for cmocka tests (tests/support/alloc_count.h):
 * a scenario runs once to count its allocations, then again with allocation
 * k failing, for every k. Each run must fail with WEFT_ENOMEM and a message
 * saying "out of memory", or succeed with the reference result. Leaks are
 * LeakSanitizer's to find (the ASan+UBSan build). */
#ifndef WEFT_TESTS_FAULT_SWEEP_H
#define WEFT_TESTS_FAULT_SWEEP_H

#include <stddef.h>

#include "weft/status.h"

/* One run with allocation k failing (0: none; the scenario calls
 * alloc_fail_at(k) and returns alloc_count_stop()); *st its status, msg the
 * failure's message, *res a number standing for its result. */
typedef long (*fault_run_fn)(long k, weft_status_t *st, char *msg, size_t cap, double *res);

/* Runs the sweep; the reference run must succeed with *res == expected and
 * make more than min_allocs allocations. */
void fault_sweep(fault_run_fn run, double expected, long min_allocs);

#endif /* WEFT_TESTS_FAULT_SWEEP_H */
