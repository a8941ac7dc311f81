/* The allocation-failure sweep (fault_sweep.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "support/fault_sweep.h"

void fault_sweep(fault_run_fn run, double expected, long min_allocs)
{
    weft_status_t st;
    char msg[512];
    double res;
    run(0, &st, msg, sizeof msg, &res); /* builds what lives for the process */
    long total = run(0, &st, msg, sizeof msg, &res);
    assert_int_equal(st, WEFT_OK);
    assert_true(res == expected);
    assert_true(total > min_allocs);
    for (long k = 1; k <= total; k++) {
        run(k, &st, msg, sizeof msg, &res);
        if (st == WEFT_OK) {
            assert_true(res == expected);
            continue;
        }
        if (st != WEFT_ENOMEM || !strstr(msg, "out of memory"))
            fail_msg("allocation %ld: %s '%s'", k, weft_status_name(st), msg);
    }
}
