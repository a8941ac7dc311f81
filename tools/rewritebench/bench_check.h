/* CHECK(x): weft-rewrite-bench's guard - a call that fails ends the run with
 * its file, line, expression and status (a benchmark has nothing to recover). */
#ifndef WEFT_TOOLS_BENCH_CHECK_H
#define WEFT_TOOLS_BENCH_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include "weft/status.h"

#define CHECK(x)                                                                      \
    do {                                                                              \
        weft_status_t st_ = (x);                                                      \
        if (st_ != WEFT_OK) {                                                         \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,                \
                    weft_status_name(st_));                                           \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

#endif
