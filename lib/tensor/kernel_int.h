/* The kernel context's layout, for the runtimes that execute nodes (the
 * reference evaluator in lib/ops/eval.c, the compiled-function runtime).
 * Not part of the API. */
#ifndef WEFT_KERNEL_INT_H
#define WEFT_KERNEL_INT_H

#include <stddef.h>

#include "weft/kernel.h"

/* Output allocation hook: a new C-contiguous tensor of dtype/shape (elements
 * may be uninitialized). Errors: WEFT_ENOMEM, WEFT_EOVERFLOW. */
typedef weft_status_t (*weft__kernel_alloc_fn)(void *user, weft_dtype_t dtype, int ndim,
                                               const int64_t *shape, weft_tensor_t **out);

#define WEFT__KERNEL_MSG_CAP 512

struct weft_kernel_ctx {
    weft__kernel_alloc_fn alloc; /* never NULL after init */
    void *alloc_user;
    void *user;    /* the run's user pointer */
    size_t worker; /* worker index */
    weft_status_t status;
    char msg[WEFT__KERNEL_MSG_CAP];
};

/* Sets ctx up: alloc NULL selects weft_tensor_empty. Clears the error. */
void weft__kernel_ctx_init(weft_kernel_ctx_t *ctx, weft__kernel_alloc_fn alloc, void *alloc_user,
                           void *user, size_t worker);
/* Clears the recorded error before running the next node. */
void weft__kernel_ctx_reset(weft_kernel_ctx_t *ctx);

#endif /* WEFT_KERNEL_INT_H */
