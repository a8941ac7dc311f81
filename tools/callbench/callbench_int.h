/* Shared pieces of weft-callbench's files: the random shape, the clock and
 * the median. */
#ifndef WEFT_CALLBENCH_INT_H
#define WEFT_CALLBENCH_INT_H

#include <stddef.h>
#include <stdint.h>

#include "weft/weft.h"

/* docs/performance-notes.md §6 random: preds of node i are
 * pred[off[i] .. off[i+1]), all lower than i. */
typedef struct callbench_shape {
    uint32_t n;
    uint32_t *off;
    uint32_t *pred;
} callbench_shape_t;

/* A compiled function with its graph, its input x and caller-supplied
 * output tensors. */
typedef struct callbench_fn {
    weft_graph_t *g;
    weft_function_t *f;
    weft_tensor_t *x;
    size_t n_out;
    weft_tensor_t **outs;
} callbench_fn_t;

/* Releases everything b holds. */
void callbench_fn_free(callbench_fn_t *b);

uint64_t callbench_now_ns(void);
/* The median of v[0..n) (sorts v). */
double callbench_median(double *v, int n);
/* Prints one small-node line (small_nodes.c): graph `name`, n nodes (s NULL:
 * a tanh chain, else the first n nodes of s), on a pool of `threads`,
 * rewrite mode `mode`. */
void callbench_small(const char *name, const callbench_shape_t *s, uint32_t n, int threads,
                     const char *mode);

#endif /* WEFT_CALLBENCH_INT_H */
