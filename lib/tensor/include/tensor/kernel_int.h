/* The kernel context's layout, for the runtimes that execute nodes (the
 * reference evaluator in lib/eval/eval.c, the compiled-function runtime).
 * Not part of the API. */
#ifndef WEFT_KERNEL_INT_H
#define WEFT_KERNEL_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/kernel.h"

/* Output allocation hook: a new C-contiguous tensor of dtype/shape (elements
 * may be uninitialized). Errors: WEFT_ENOMEM, WEFT_EOVERFLOW. */
typedef weft_status_t (*weft__kernel_alloc_fn)(void *user, weft_dtype_t dtype, int ndim,
                                               const int64_t *shape, weft_tensor_t **out);

/* Scratch give-back hook: takes t (a tensor the alloc hook handed out). */
typedef void (*weft__kernel_give_back_fn)(void *user, weft_tensor_t *t);

/* Parallel-loop hook of the runtime running the node: runs fn over [0, n)
 * in ranges of `grain` on `threads` workers and waits (see
 * weft_kernel_parallel_for). */
typedef weft_status_t (*weft__kernel_pfor_fn)(void *user, size_t n, size_t grain,
                                              weft_kernel_range_fn fn, void *arg);

#define WEFT__KERNEL_MSG_CAP 512

struct weft_kernel_ctx {
    weft__kernel_alloc_fn alloc; /* never NULL after init */
    /* weft_kernel_scratch_done; NULL: weft_tensor_release. Takes alloc_user. */
    weft__kernel_give_back_fn give_back;
    void *alloc_user;
    void *user;    /* the run's user pointer */
    size_t worker; /* worker index */
    /* A cell whose tensor the runtime guarantees exclusive (no other handle,
     * view, caller or pool can reference it) and C-contiguous, or NULL.
     * weft_kernel_alloc_output on this cell reuses the tensor after comparing
     * dtype and shape alone: no reference count is read (a cold line per node
     * on large graphs of small tensors). Set by the runtime after init. */
    weft_tensor_t *const *own_cell;
    /* Intra-node parallelism: NULL pfor (or threads 1) runs ranges inline. Set
     * by a runtime with a pool after init. */
    weft__kernel_pfor_fn pfor;
    void *pfor_user;
    size_t threads;
    /* The pool's idle workers now (weft_kernel_idle_workers), given
     * pfor_user; NULL: 0. Set with pfor. */
    size_t (*idle)(void *pfor_user);
    /* The pool running the node (a weft_pool_t), or NULL when none (the
     * sequential evaluator): a kernel that runs nested graphs on the same
     * pool (Scan's inner function) reads it. Set by the runtime after init. */
    void *pool;
    /* Recycled view handles (weft_kernel_view_output): out_cells[k] is the
     * node's output cell k and stash[k] the raw handle (tensor_int.h) the
     * runtime kept from that slot's last view, or NULL. n_out 0: none. */
    weft_tensor_t **out_cells;
    weft_tensor_t **stash;
    uint32_t n_out;
    /* The node's plan cell (docs/execution.md §3.7), or NULL when the runtime
     * keeps no plans (the sequential evaluator, constant folding): what a
     * kernel decided on an earlier run of this node with the same input
     * geometry. The cell belongs to one node of one call state, so one
     * thread at a time uses it, and calls are ordered by the call
     * boundary. It holds NULL or a block of weft__kernel_plan_store. Set by
     * the runtime after init, with plan_builds: the counter that block
     * (re)builds add to (relaxed: a statistic). */
    void **plan;
    _Atomic uint64_t *plan_builds;
    /* The scheduler's context of the running node body (a weft_task_ctx_t),
     * for weft_kernel_defer; NULL outside a compiled function's call. */
    const void *task;
    /* Set by a kernel whose outputs match their variables' types by
     * construction (checked when its plan was built): the runtime then
     * skips its output check. */
    bool out_typed;
    weft_status_t status;
    char msg[WEFT__KERNEL_MSG_CAP];
};

/* Clears the recorded error before running the next node. */
static inline void weft__kernel_ctx_reset(weft_kernel_ctx_t *ctx)
{
    ctx->status = WEFT_OK;
    ctx->msg[0] = '\0';
}

/* Scratch (weft_kernel_scratch) holding a C-contiguous copy of t. Errors
 * recorded on ctx: WEFT_ENOMEM. */
weft_status_t weft__kernel_scratch_copy(weft_kernel_ctx_t *ctx, const weft_tensor_t *t,
                                        weft_tensor_t **out);

/* The default allocation hook: weft_tensor_empty. */
weft_status_t weft__kernel_default_alloc(void *user, weft_dtype_t dtype, int ndim,
                                         const int64_t *shape, weft_tensor_t **out);

/* Sets ctx up: alloc NULL selects weft_tensor_empty, own_cell NULL. Clears the
 * error. Inline: runtimes set a context up per node. */
static inline void weft__kernel_ctx_init(weft_kernel_ctx_t *ctx, weft__kernel_alloc_fn alloc,
                                         void *alloc_user, void *user, size_t worker)
{
    ctx->alloc = alloc ? alloc : weft__kernel_default_alloc;
    ctx->alloc_user = alloc_user;
    ctx->give_back = NULL;
    ctx->user = user;
    ctx->worker = worker;
    ctx->own_cell = NULL;
    ctx->pfor = NULL;
    ctx->pfor_user = NULL;
    ctx->idle = NULL;
    ctx->threads = 1;
    ctx->pool = NULL;
    ctx->out_cells = ctx->stash = NULL;
    ctx->n_out = 0;
    ctx->plan = NULL;
    ctx->plan_builds = NULL;
    ctx->task = NULL;
    ctx->out_typed = false;
    weft__kernel_ctx_reset(ctx);
}

/* Caches the plan src[0..bytes) in ctx's plan cell: copied into the block
 * already there when it is large enough, else into a new block (the old one
 * freed), and counted in plan_builds. Returns the cached copy, or src when
 * ctx has no plan cell or no block could be allocated (the plan then serves
 * this run only). A plan is plain data: it owns no memory and holds no
 * reference. */
void *weft__kernel_plan_store(weft_kernel_ctx_t *ctx, const void *src, size_t bytes);
/* Frees a block of weft__kernel_plan_store or weft__kernel_plan_owned
 * (NULL: nothing); an owned block's fini runs first. */
void weft__kernel_plan_free(void *plan);
/* A plan that owns resources (a compiled inner function, tensor handles):
 * the block in ctx's plan cell when it was made by this call with the same
 * fini, else a new zeroed block of `bytes` (the old block freed) whose
 * fini(plan) runs when the call state frees it. NULL when ctx has no plan
 * cell or on out of memory: the kernel then keeps its plan for this run
 * only. */
void *weft__kernel_plan_owned(weft_kernel_ctx_t *ctx, size_t bytes, void (*fini)(void *plan));

#endif /* WEFT_KERNEL_INT_H */
