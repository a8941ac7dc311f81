/* The median of a demo's timings (sorts v in place). */
#ifndef WEFT_DEMOS_DEMO_MEDIAN_H
#define WEFT_DEMOS_DEMO_MEDIAN_H

#include <stdlib.h>

static inline int demo_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static inline double demo_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, demo_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif /* WEFT_DEMOS_DEMO_MEDIAN_H */
