/* weft-ops-bench: timing, medians and error exits shared by its files. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "opsbench.h"

double ob_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double ob_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void ob_die(const char *what, weft_status_t st, weft_graph_t *g)
{
    fprintf(stderr, "weft-ops-bench: %s: %s %s\n", what, weft_status_name(st),
            g ? weft_graph_last_error(g) : "");
    exit(1);
}

void ob_check(weft_status_t st, const char *what, weft_graph_t *g)
{
    if (st != WEFT_OK) {
        ob_die(what, st, g);
    }
}

void ob_check_built(const weft_var_t *v, const char *what, weft_graph_t *g)
{
    if (!v) {
        fprintf(stderr, "weft-ops-bench: %s: %s\n", what, weft_graph_error_message(g));
        exit(1);
    }
}

void *ob_xmalloc(size_t bytes)
{
    void *p = malloc(bytes);
    if (!p) {
        ob_die("out of memory", WEFT_ENOMEM, NULL);
    }
    return p;
}
