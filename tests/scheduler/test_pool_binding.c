/* Pinning honours the process's CPU binding (docs/execution.md §3.6): a
 * process bound to one CPU before its first pool (as mpirun binds each
 * rank) counts one core, and its workers, pinned, run on that CPU only.
 * Two ranks on one machine used to pin both their worker 0 to core 0. The
 * binding is set before anything loads the topology, so this is a process
 * of its own. Skipped on a one-CPU machine. */
#define _GNU_SOURCE // sched_setaffinity, sched_getcpu, CPU_SET
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "weft/sched.h"

#define CHUNKS 64

static int cpu_seen[CHUNKS];

static weft_status_t record_cpu(void *arg, size_t begin, size_t end, const weft_task_ctx_t *ctx)
{
    (void)arg;
    (void)ctx;
    for (size_t i = begin; i < end; i++) cpu_seen[i] = sched_getcpu();
    return WEFT_OK;
}

/* The last CPU this process may use: not CPU 0, so that pinning to the
 * machine's first core (the old behaviour) fails the test. */
static int last_allowed_cpu(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return -1;
    int last = -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set)) last = c;
    return CPU_COUNT(&set) >= 2 ? last : -1;
}

static void test_pool_bound_process_pins_inside_its_binding(void **state)
{
    (void)state;
    int cpu = last_allowed_cpu();
    if (cpu < 0 || getenv("WEFT_NO_PIN")) skip();
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    assert_int_equal(sched_setaffinity(0, sizeof one, &one), 0);

    assert_int_equal(weft_pool_default_threads(), 1);
    weft_pool_t *pool = NULL;
    assert_int_equal(weft_pool_create(2, NULL, &pool), WEFT_OK);
    assert_true(weft_pool_is_pinned(pool));
    for (int i = 0; i < CHUNKS; i++) cpu_seen[i] = -1;
    assert_int_equal(weft_pool_parallel_for(pool, 0, CHUNKS, 1, record_cpu, NULL), WEFT_OK);
    for (int i = 0; i < CHUNKS; i++) assert_int_equal(cpu_seen[i], cpu);
    assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pool_bound_process_pins_inside_its_binding),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
