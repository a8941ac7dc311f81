/* The kernel context: what an op's perform hook (weft/op.h) receives for one
 * node execution.
 *
 * The runtime that executes nodes (the sequential evaluator, weft/eval.h, and
 * the compiled-function runtime) owns the context and sets it up per run and
 * worker. It carries:
 * - the error slot: a kernel reports failure with
 *   `return weft_kernel_error(ctx, WEFT_ESHAPE, "input 1 has %d dims", n);`
 *   naming what is wrong; the runtime prefixes the failing node
 *   (weft_apply_describe) when it reports the error;
 * - the output allocator (weft_kernel_alloc_output): the runtime may route it
 *   to a buffer pool; by default it allocates aligned memory;
 * - the worker index and the run's user pointer;
 * - intra-node parallelism (weft_kernel_parallel_for): a large kernel splits
 *   its work into ranges that the pool running the node spreads over its
 *   workers, so one big node (a large matrix product, a long elementwise
 *   pass) is not bound to one core while the rest of the pool idles.
 *
 * Threading policy of kernels: a kernel never starts threads of its own; the
 * pool provides parallelism across nodes and, through
 * weft_kernel_parallel_for, within a node. BLAS-backed kernels run OpenBLAS with their node kind's thread count,
 * 1 by default (openblas_set_num_threads, changed only when it differs; see
 * weft/linalg.h, weft_blas_set_threads), so P workers run at most P BLAS
 * threads. The OpenBLAS pthread build is required: the serial build is not
 * safe to call from several threads at once, and BLAS-backed kernels fail
 * with WEFT_ESTATE on it.
 *
 * Thread: a context is used by one thread (one worker) at a time. */
#ifndef WEFT_KERNEL_H
#define WEFT_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "weft/export.h"
#include "weft/sched.h"
#include "weft/status.h"
#include "weft/tensor.h"
#include "weft/type.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_kernel_ctx weft_kernel_ctx_t;

/* Records the kernel's error (printf-style message; the first error of a node
 * wins, later ones are ignored) and returns status, so kernels can write
 * `return weft_kernel_error(ctx, ...)`. status must be an error (< 0);
 * WEFT_OK is recorded as WEFT_EINVAL ("kernel reported an error with
 * WEFT_OK").
 * Ownership: borrows ctx and fmt. Errors: returns status (WEFT_EINVAL for a
 * NULL ctx). */
WEFT_API weft_status_t weft_kernel_error(weft_kernel_ctx_t *ctx, weft_status_t status,
                                         const char *fmt, ...) WEFT_PRINTF(3, 4);

/* Makes *cell hold a C-contiguous tensor of dtype and shape whose elements the
 * kernel may overwrite: the tensor already in the cell is kept when it is
 * exclusively owned (weft_tensor_is_exclusive), contiguous and of that dtype
 * and shape; otherwise it is released and a new one is allocated through the
 * context's allocation hook (default: weft_tensor_empty). The elements are
 * uninitialized (old values when reused).
 * Ownership: borrows ctx and shape; the cell owns the tensor (the runtime
 * releases it).
 * Errors: WEFT_EINVAL (NULL ctx/cell, bad dtype/ndim), WEFT_EOVERFLOW,
 * WEFT_ENOMEM; each also recorded on ctx as with weft_kernel_error. */
WEFT_API weft_status_t weft_kernel_alloc_output(weft_kernel_ctx_t *ctx, weft_tensor_t **cell,
                                                weft_dtype_t dtype, int ndim,
                                                const int64_t *shape);

/* Defers the running node's completion (a function compiled with
 * deferrable_nodes, weft/function.h): perform fills its outputs' tensors
 * (they may stay unwritten) and returns WEFT_OK; its readers run only once
 * weft_dag_run_complete(out, st) is called, from any thread, after writing
 * the outputs' elements. Its worker runs other ready nodes meanwhile.
 * Ownership: borrows ctx; fills *out. Errors: WEFT_EINVAL (ctx or out NULL),
 * WEFT_ESTATE (not a compiled function's call, or one compiled without
 * deferrable_nodes); each also recorded on ctx. Thread: perform's. */
WEFT_API weft_status_t weft_kernel_defer(weft_kernel_ctx_t *ctx, weft_dag_deferred_t *out);

/* Puts t into *cell, releasing what the cell held (a view output, or a destroy
 * output holding its input). Takes t (the caller's reference moves into the
 * cell); borrows ctx. No-op for a NULL cell (t is released). */
WEFT_API void weft_kernel_set_output(weft_kernel_ctx_t *ctx, weft_tensor_t **cell,
                                     weft_tensor_t *t);

/* Scratch memory for the running perform hook: a new C-contiguous tensor of
 * dtype and shape (elements uninitialized) from the context's allocation
 * hook - in a compiled function the buffer pool, so a warm call of
 * unchanged shapes allocates nothing. Give it back with
 * weft_kernel_scratch_done before perform returns.
 * Ownership: *out is the caller's until weft_kernel_scratch_done.
 * Errors: WEFT_EINVAL (NULL ctx/out, bad dtype/ndim/length), WEFT_EOVERFLOW,
 * WEFT_ENOMEM; each also recorded on ctx; *out NULL. */
WEFT_API weft_status_t weft_kernel_scratch(weft_kernel_ctx_t *ctx, weft_dtype_t dtype, int ndim,
                                           const int64_t *shape, weft_tensor_t **out);
/* Takes back scratch from weft_kernel_scratch (to the pool it came from, or
 * released). NULL t: nothing. */
WEFT_API void weft_kernel_scratch_done(weft_kernel_ctx_t *ctx, weft_tensor_t *t);

/* A C-contiguous tensor with t's elements, for kernels that need one: t
 * itself (not retained) when it is already contiguous, else scratch from the
 * context's allocation hook holding a copy (weft_kernel_scratch: in a
 * compiled function the buffer pool, so a warm call allocates nothing; unlike
 * weft_tensor_contiguous, which allocates on every call). Hand it back with
 * weft_kernel_contiguous_done(ctx, t, *out) before perform returns.
 * Ownership: borrows ctx and t; *out is borrowed (t) or the kernel's until
 * weft_kernel_contiguous_done. Errors: WEFT_EINVAL (NULL ctx/t/out),
 * WEFT_ENOMEM; each also recorded on ctx; *out NULL. */
WEFT_API weft_status_t weft_kernel_contiguous(weft_kernel_ctx_t *ctx, weft_tensor_t *t,
                                              weft_tensor_t **out);
/* Ends the use of c = weft_kernel_contiguous(ctx, t): gives a copy back to
 * its pool; nothing when c is t or NULL. */
WEFT_API void weft_kernel_contiguous_done(weft_kernel_ctx_t *ctx, const weft_tensor_t *t,
                                          weft_tensor_t *c);

/* Makes *cell hold a view of base: ndim axes of the given shape and strides
 * (in elements), starting `offset` elements from base's first element, with
 * weft_tensor_view's checks (the view must stay inside base's buffer). Same
 * result as weft_tensor_view + weft_kernel_set_output, without allocating
 * in steady state: the handle in the cell is rewritten when nothing else
 * holds it, else a compiled function hands over the handle it kept from this
 * output's view of the previous call. A view op (view_map) fills its output
 * with it.
 * Ownership: borrows ctx, base, shape and strides (they may point into the
 * tensor in the cell); the cell owns the view, which holds base's buffer.
 * Errors: WEFT_EINVAL (NULL ctx/cell/base/strides, bad ndim or length),
 * WEFT_EOVERFLOW, WEFT_ERANGE (outside base's buffer), WEFT_ENOMEM; each also
 * recorded on ctx as with weft_kernel_error; *cell unchanged. */
WEFT_API weft_status_t weft_kernel_view_output(weft_kernel_ctx_t *ctx, weft_tensor_t **cell,
                                               weft_tensor_t *base, int ndim,
                                               const int64_t *shape, const int64_t *strides,
                                               int64_t offset);

/* Index of the worker running the node (0 for the sequential evaluator). */
WEFT_API size_t weft_kernel_worker(const weft_kernel_ctx_t *ctx);
/* The run's user pointer (NULL when none). Returns borrowed. */
WEFT_API void *weft_kernel_user(const weft_kernel_ctx_t *ctx);
/* Workers of the pool running the node: 1 for the sequential evaluator, or
 * when nodes run without a pool. A kernel uses it to decide whether splitting
 * its work can pay (weft_kernel_parallel_for runs inline when it is 1), never
 * to choose how to split: see weft_kernel_parallel_for. */
WEFT_API size_t weft_kernel_threads(const weft_kernel_ctx_t *ctx);

/* Workers of the node's pool idle (asleep, waiting for work) at this moment:
 * a hint that is stale as soon as it is read and depends on timing; 0 for
 * the sequential evaluator or without a pool. Never base a split whose
 * result must not depend on the worker count on it (see
 * weft_kernel_parallel_for): weft reads it only for the opt-in
 * WEFT_BLAS_THREADS_FREE (weft/linalg.h). Thread: the thread running the
 * node's perform hook. */
WEFT_API size_t weft_kernel_idle_workers(const weft_kernel_ctx_t *ctx);

/* One range [begin, end) of a weft_kernel_parallel_for. Ranges run at the
 * same time on different workers: a range writes only its own part of the
 * output and must not use the kernel context (report failures through the
 * return value, then with weft_kernel_error once the loop returned). */
typedef weft_status_t (*weft_kernel_range_fn)(void *arg, size_t begin, size_t end);

/* Runs fn over [0, n) in ranges of `grain` elements (the last one shorter;
 * 0: ceil(n / 16), 16 ranges at most) on the pool running the node, and
 * returns when all ranges are done. The calling worker takes part and, while
 * it waits, runs other ready work, so this never deadlocks, even on one
 * worker. With one worker (weft_kernel_threads(ctx) == 1) or n <= grain it is
 * a single inline call fn(arg, 0, n).
 * Same bits at any worker count: the range boundaries are the multiples of
 * grain, fixed by n and grain alone; only which worker runs a range, and
 * whether the ranges run as one inline call, depend on the pool. A kernel
 * whose result must not depend on the worker count (weft's own promise,
 * weft/function.h) passes a grain computed from the problem and computes
 * each grain-sized block of [begin, end) the same way whichever range it
 * arrives in (weft's matrix products run one BLAS call per block). The first failing range's status is returned; ranges
 * not yet started are then skipped. Allocates nothing.
 * Ownership: borrows ctx, arg.
 * Errors: WEFT_EINVAL (ctx or fn NULL), WEFT_ENOMEM (the pool could not queue
 * the ranges), or the first status a range returned.
 * Thread: the thread running the node's perform hook. */
WEFT_API weft_status_t weft_kernel_parallel_for(weft_kernel_ctx_t *ctx, size_t n, size_t grain,
                                                weft_kernel_range_fn fn, void *arg);

/* The status and message recorded by weft_kernel_error ("" / WEFT_OK when
 * none). Returns borrowed, valid until the context is reset. */
WEFT_API weft_status_t weft_kernel_status(const weft_kernel_ctx_t *ctx);
WEFT_API const char *weft_kernel_message(const weft_kernel_ctx_t *ctx);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_KERNEL_H */
