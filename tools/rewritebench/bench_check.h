/* CHECK(x): weft-rewrite-bench's guard - a call that fails ends the run with
 * its file, line, expression and status (a benchmark has nothing to recover).
 * CHECK_GRAPH(g): the one check after building a graph with composing
 * constructors - a kept error ends the run with its message (the first
 * mistake, with its creation site). */
#ifndef WEFT_TOOLS_BENCH_CHECK_H
#define WEFT_TOOLS_BENCH_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include "weft/graph.h"
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

#define CHECK_GRAPH(g)                                                                \
    do {                                                                              \
        if (weft_graph_error(g) != WEFT_OK) {                                         \
            fprintf(stderr, "%s:%d: weft-rewrite-bench: %s\n", __FILE__, __LINE__,    \
                    weft_graph_error_message(g));                                     \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

#endif
