/* One-node inner graphs (docs/control-flow.md §5): when the inner graph is a
 * single node whose inputs are all inner inputs and whose one output is the
 * only inner output, each step runs that node's kernel directly into the
 * step's storage, with a kernel context set up once per run, instead of a
 * call of the compiled inner function (argument checks, call state, DAG
 * run, delivery). Used by scan_run.c; one run (one thread) at a time per
 * plan cell, as the rest of the Scan node's run state. */
#ifndef WEFT_SCAN_DIRECT_H
#define WEFT_SCAN_DIRECT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "scan_int.h"
#include "tensor/kernel_int.h"

#define WEFT__SCAN_DIRECT_MAX_IN 64

typedef struct weft__scan_direct {
    const weft_apply_t *node; /* NULL: the inner graph is not one such node */
    weft_status_t (*perform)(const weft_apply_t *, weft_tensor_t *const *, weft_tensor_t **,
                             weft_kernel_ctx_t *);
    size_t n_in;
    uint32_t in_map[WEFT__SCAN_DIRECT_MAX_IN]; /* node input i is inner input in_map[i] */
    void *plan;                                /* the node's plan cell across steps and calls */
    _Atomic uint64_t plan_builds;              /* relaxed: a statistic, as the runtime's */
    weft_kernel_ctx_t k;
} weft__scan_direct_t;

/* Fills d for core: d->node stays NULL when the inner graph does not
 * qualify (then the compiled inner function runs every step). */
void weft__scan_direct_init(weft__scan_direct_t *d, const weft__scan_core_t *core);
/* Sets the kernel context up for one run of the Scan node running on outer
 * (same allocation hook, pool and intra-node parallelism). */
void weft__scan_direct_begin(weft__scan_direct_t *d, const weft_kernel_ctx_t *outer);
/* Runs the node on the inner inputs args into *cell (a C-contiguous
 * tensor of the output's shape, or any tensor: the kernel may then replace
 * it, and the caller compares). Errors: the kernel's, message in d->k.msg. */
weft_status_t weft__scan_direct_step(weft__scan_direct_t *d, weft_tensor_t *const *args,
                                     weft_tensor_t **cell);
/* Frees the plan cell. */
void weft__scan_direct_fini(weft__scan_direct_t *d);

#endif /* WEFT_SCAN_DIRECT_H */
