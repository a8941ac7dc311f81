/* Shared pieces of weft-callbench's files: the random shape, the clock and
 * the median. */
#ifndef WEFT_CALLBENCH_INT_H
#define WEFT_CALLBENCH_INT_H

#include <stdint.h>

/* docs/performance-notes.md §6 random: preds of node i are
 * pred[off[i] .. off[i+1]), all lower than i. */
typedef struct callbench_shape {
    uint32_t n;
    uint32_t *off;
    uint32_t *pred;
} callbench_shape_t;

uint64_t callbench_now_ns(void);
/* The median of v[0..n) (sorts v). */
double callbench_median(double *v, int n);
/* Prints one small-node line (small_nodes.c): graph `name`, n nodes (s NULL:
 * a tanh chain, else the first n nodes of s), on a pool of `threads`,
 * rewrite mode `mode`. */
void callbench_small(const char *name, const callbench_shape_t *s, uint32_t n, int threads,
                     const char *mode);

#endif /* WEFT_CALLBENCH_INT_H */
