/* Compiled functions: a graph compiled once and called many times,
 * node-parallel, on a work-stealing pool (weft/sched.h).
 *
 * Pipeline (docs/execution.md §1): weft_function_compile copies the user's
 * graph into the function's own graph context (the user may destroy theirs
 * afterwards), builds a FunctionGraph with a Supervisor that protects every
 * input not declared mutable and every output (weft/destroy.h, rule D6),
 * refuses in-place ops built by the user unless accept_inplace (then a
 * DestroyHandler is attached), runs the rewrite mode, wraps outputs that alias
 * an input, a constant or another output in a DeepCopy node (§7), toposorts
 * with every feature's orderings and lowers the result to a task DAG: one node
 * per apply, one edge per data dependency and one per DestroyHandler
 * prerequisite (docs/destroy.md §5). The DAG is built once; its nodes are laid
 * out in the order one worker runs them, so consecutive runs touch adjacent
 * memory (weft_function_print lists that order).
 *
 * Calling: weft_function_call borrows the input tensors, checks them (arity,
 * dtype, ndim, static lengths), runs the DAG on the pool and delivers the
 * outputs. Every variable has a storage cell per call. Intermediates follow
 * a static memory plan (docs/execution.md §4.6): each gets a byte range in
 * one arena per call state, and two share memory only when every schedule
 * the DAG allows finishes all uses of the first before the second is
 * written, so the plan holds at any worker count. It is made at compile
 * time when the intermediates' sizes are static, else from the sizes the
 * first call for given input shapes measures (a change of input shapes
 * re-plans once). Values it does not cover - graph outputs and what aliases
 * them, intermediates whose size only their kernel knows, graphs too large
 * to plan - use the function's buffer pool: their cell is emptied when
 * their last client has run (the buffer goes back to the pool when nothing
 * else views it). Small intermediates (a static size of at most 256 bytes,
 * e.g. 0-d values) keep their buffer in their cell between calls instead.
 * Per-call state (cells, countdowns, the arena, a weft_dag_run_t) is
 * preallocated and reused, and so is the tensor handle of each view
 * (DimShuffle, Reshape, Subtensor, and user ops filling their outputs with
 * weft_kernel_view_output); kernels take their scratch from the buffer pool
 * (weft_kernel_scratch) and an OpFromGraph run without inlining reuses its
 * inner storage.
 *
 * What a warm call allocates: a call whose input shapes equal the previous
 * call's on the same call state (after the first call for those shapes; the
 * second too when some intermediate's size is not static), with
 * caller-supplied outputs, allocates nothing at any worker count - no
 * buffer (weft_function_stats counts the pool's), no handle, no scratch, no
 * arena - OpFromGraph nodes run without inlining included. Exceptions: a
 * value whose size changes between calls of equal input shapes (sized by
 * its kernel) goes through the pool, which on several workers may take one
 * more buffer when such values interleave as never before (bounded by
 * their number per concurrent call); a kernel's scratch likewise; each NULL
 * output slot receives a new tensor; a new level of concurrency creates a
 * call state.
 *
 * Updates (as PyTensor's `updates`): each update pairs an input variable (the
 * state) with an expression (its new value). Every node of a call reads the
 * state's old value; after the graph has finished, the new value is written
 * into the caller's tensor for that input (nothing to copy when the rewrite
 * computed it in place). An updated input is mutable.
 *
 * Shared variables (weft/shared.h, docs/shared.md): the function finds every
 * shared variable its outputs and update values depend on and reads its
 * value itself at the start of each call (the latest weft_shared_set, by
 * reference to the variable's storage); the caller neither lists nor passes
 * them. An update may name a shared variable: its new value is computed
 * into a fresh buffer (never over the old value) and becomes the value only
 * when the call returns WEFT_OK, together with the call's other shared
 * updates (a failed or canceled call changes no shared value).
 *
 * Kernels run single-threaded inside nodes: OpenBLAS is set to one thread
 * while the function's nodes run (and restored after); the serial OpenBLAS
 * build is refused (weft/linalg.h weft_blas_check).
 *
 * Same bits at any worker count: a function's outputs and updates are
 * bit-identical whatever the number of workers of its pool (1, 2, 8 or
 * 64), its node_threads option and the placement of nodes on workers (in
 * mode "none" they equal the sequential evaluator's, weft/eval.h). Every
 * split weft makes inside a node (matrix products in Dot and Gemm,
 * elementwise loops and Composite) cuts the work into blocks chosen from
 * the shape alone, and a block is computed the same way on any worker (a
 * product block is one one-thread BLAS call); the worker count only decides
 * whether blocks run in parallel (docs/execution.md §5). Not covered: user
 * ops whose kernels split by the worker count, and products while
 * weft_blas_set_threads gives level-3 nodes several BLAS threads (one
 * threaded OpenBLAS call then, whose bits follow that BLAS thread count).
 *
 * Thread: a function may be called from several threads at once (each call
 * takes its own per-call state from a small free list); several functions may
 * share one pool. Calls that use a common shared variable (of one function or
 * several) run one after the other: a call holds the locks of the shared
 * variables its function uses from start to end, taken in creation order;
 * weft_shared_get / set wait for such a call. Compile and destroy are not
 * concurrent with calls on the same function. Any thread may cancel a call
 * given a token (weft_call_token_cancel, weft_function_call_ex). */
#ifndef WEFT_FUNCTION_H
#define WEFT_FUNCTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "weft/export.h"
#include "weft/fgraph.h"
#include "weft/graph.h"
#include "weft/sched.h"
#include "weft/status.h"
#include "weft/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_function weft_function_t;

/* An update: after each call, input `var` takes the value of `value`. */
typedef struct weft_update {
    weft_var_t *var;   /* one of the function's inputs */
    weft_var_t *value; /* an expression of the inputs, same type as var */
} weft_update_t;

typedef struct weft_function_options {
    size_t size;      /* sizeof(weft_function_options_t) */
    /* Rewrite mode: "fast_run" (default when NULL), "fast_compile", "none",
     * or any other tag of the default rewrite database (weft/rewrite_db.h),
     * plus rewrite names or tags to include / exclude (weft/rewrite.h).
     * fast_run includes the rewrites tagged "fast_math", which may change
     * results involving NaN, inf, signed zeros, overflow or rounding (x*0 ->
     * 0, x-x -> 0, exp(log x) -> x, Gemm's blocked sums: docs/rewrites.md
     * §6.5); exclude "fast_math" to get mode none's bits on every input. */
    const char *mode;
    size_t n_include;
    const char *const *include;
    size_t n_exclude;
    const char *const *exclude;
    /* The pool to run on (borrowed; must outlive the function). NULL: with
     * threads == 0, the process-wide default pool (created lazily and
     * thread-safely with weft_pool_default_threads() workers, freed at exit);
     * with threads > 0, a private pool of that many workers, owned by the
     * function. With a pool given, threads must be 0 or the pool's size. */
    weft_pool_t *pool;
    int threads;
    /* Optional, parallel to the inputs: true lets the graph overwrite the
     * caller's tensor for that input (in place). NULL: only updated inputs
     * are mutable. Unlike PyTensor, an input destroyed by an accepted user
     * in-place op is not made mutable implicitly: declare it (else the
     * compile fails with WEFT_EINCONSISTENT), so a caller's buffer is only
     * ever overwritten when declared. A mutable input may not share memory
     * with another input of the same call (WEFT_EINVAL). One whose memory
     * overlaps itself (a stride-0 broadcast view, a sliding window) is
     * copied for the call instead of written: see weft_function_call. */
    const bool *input_mutable;
    /* Accept in-place ops that the user built (refused otherwise, as in
     * PyTensor: "Graph must not contain inplace operations"). */
    bool accept_inplace;
    /* Record a profile (weft/profile.h). Also on when the environment has
     * WEFT_PROFILE=1, which additionally prints the report at destroy. */
    bool profile;
    /* Check every floating-point output of every node for NaN / Inf: the node
     * fails with WEFT_ENAN. */
    bool nan_check;
    /* Name used in reports and error messages (copied); NULL: "function". */
    const char *name;
    /* Workers one node may spread its own work over (intra-node parallelism,
     * weft_kernel_parallel_for: large matrix products and elementwise loops
     * split into ranges). 0: all of the pool's workers; 1: every node runs on
     * one worker (graphs with ample node parallelism, such as a tile
     * factorization, lose nothing to splitting); larger than the pool: all
     * of its workers. */
    int node_threads;
    /* Verbose rewriting (PyTensor's optimizer_verbose): each replacement a
     * rewrite commits during the compile is reported, in order, to
     * rewrite_hook (with rewrite_hook_user) if set, else written as one line
     * to rewrite_log if set (weft_fgraph_set_replace_hook / _log and the line
     * format, weft/fgraph.h; docs/rewrites.md §9). Variables and nodes are the
     * function's copies (same names and creation sites as the caller's).
     * Called on the compiling thread, during weft_function_compile only.
     * Borrowed for the compile. */
    FILE *rewrite_log;
    weft_replace_hook_fn rewrite_hook;
    void *rewrite_hook_user;
    /* Measured node costs for the inplace rewrite (borrowed during the
     * compile only): a profile of an earlier function (weft/profile.h),
     * usually of the same graph. Each row's mean time per call becomes the
     * cost of the nodes with its key (weft/node_cost.h); the others keep
     * their estimates. The rewrite then keeps a node out of place where the
     * measured times say destroying its input would lengthen the critical
     * path (docs/rewrites.md §6.6). NULL: estimates only. */
    const struct weft_profile *cost_profile;
    /* Nodes may defer their completion (weft_kernel_defer, weft/kernel.h):
     * every call's DAG run is deferrable (weft/sched.h), so even one worker
     * runs other ready nodes while a node is pending, and the memory plan
     * assumes any schedule the DAG allows rather than node id order. */
    bool deferrable_nodes;
    /* Critical path first: of the nodes ready at a moment, a worker runs the
     * one with the longest path of estimated cost (weft/node_cost.h) from it
     * to the end of the call, through one queue every worker shares (the
     * DAG's priorities, weft/sched.h weft_dag_set_priority), and the nodes
     * are laid out in that order. For graphs of coarse nodes whose order
     * decides how soon the critical path runs (tile factorizations,
     * distributed functions); each node then costs a lock round trip more
     * (docs/execution.md §3.4.2). Results are the same bits either way. */
    bool critical_path_first;
} weft_function_options_t;

#define WEFT_FUNCTION_OPTIONS_INIT \
    { sizeof(weft_function_options_t), NULL, 0, NULL, 0, NULL, NULL, 0, NULL, false, false, \
      false, NULL, 0, NULL, NULL, NULL, NULL, false, false }

/* Compiles outputs[0..n_out) as functions of inputs[0..n_in) (root, non-
 * constant, non-shared variables of one graph context, each listed once),
 * with updates[0..n_updates) (each var an input or a shared variable).
 * Shared variables the outputs and update values use are found, not listed.
 * opts may be NULL (defaults).
 * Ownership: borrows everything; the function keeps its own copy of the
 * graph. Returns new *out, free with weft_function_destroy.
 * Errors (message: weft_function_last_error(NULL) on this thread, naming the
 * variable or node and its creation site):
 *   WEFT_EINVAL (NULL out, NULL arrays with a count > 0, NULL entries,
 *     n_out + n_updates == 0, opts->size too small or ending inside a field,
 *     an input with an owner or constant, an input listed twice, a shared
 *     variable listed as an input, an update var that is not an input nor
 *     shared, or updated twice,
 *     unknown mode, threads < 0 or not matching the pool,
 *     node_threads < 0,
 *     in-place ops without accept_inplace: "Graph must not contain inplace
 *     operations"),
 *   WEFT_EFOREIGN (variables of different contexts),
 *   WEFT_EMISSING_INPUT (an output needs a root variable not among inputs),
 *   WEFT_ETYPE (an update value's type differs from its variable's),
 *   WEFT_ENOTIMPL (an op without perform, or whose props own memory
 *     (props_fini) and so cannot be copied into the function's context),
 *   WEFT_EINCONSISTENT (an accepted in-place op destroys a protected input or
 *     an output: Supervisor / DestroyHandler message),
 *   WEFT_ECYCLE (the user's graph has a cycle, docs/fgraph.md §3: its nodes
 *     named),
 *   WEFT_ESTATE (the serial OpenBLAS build), WEFT_ESYSTEM (pool threads),
 *   a rewrite's error, WEFT_ENOMEM. Nothing leaks on error; *out is NULL.
 * Thread: any; the user's context must not be used concurrently. */
WEFT_API weft_status_t weft_function_compile(size_t n_in, weft_var_t *const *inputs,
                                             size_t n_out, weft_var_t *const *outputs,
                                             size_t n_updates, const weft_update_t *updates,
                                             const weft_function_options_t *opts,
                                             weft_function_t **out);

/* Frees f. With WEFT_PROFILE=1 in the environment, prints f's profile report
 * to stderr first. NULL: no-op (WEFT_OK).
 * Ownership: takes f on success.
 * Errors: WEFT_EBUSY (a call is in flight: nothing is freed).
 * Thread: not concurrently with calls on f. */
WEFT_API weft_status_t weft_function_destroy(weft_function_t *f);

/* Calls f: inputs[k] is the value of input k (n_in must equal the input
 * count; shared variables are not passed); outputs has n_out == the output
 * count entries (updates are not outputs). For each k:
 *   outputs[k] != NULL: a caller-supplied tensor of exactly the output's dtype
 *     and shape (any strides); the value is copied into it, or written
 *     straight into it by the node producing it when the tensor is
 *     contiguous, overlaps no input and no other supplied output, the call
 *     has no cancellation token and the output is a fresh value
 *     (docs/execution.md §4.7) - either way it is the same value, and the
 *     function keeps no reference to the tensor after the call;
 *   outputs[k] == NULL: receives a new tensor the caller owns (release with
 *     weft_tensor_release); it shares memory with no input and no other
 *     output.
 * Updated inputs' tensors hold the new state values on return (WEFT_OK only).
 * Inputs not declared mutable are never written.
 * Self-overlapping inputs: a mutable input whose elements share memory (an
 * axis of stride 0 as in a broadcast view, or a stride not larger than the
 * span of the axes of smaller stride, as in a sliding window; layouts that
 * interleave without overlapping count too) is never written in place, as
 * NumPy refuses writes to broadcast views: a declared-mutable one is copied
 * into a private contiguous tensor for this call (the call allocates it;
 * the caller's tensor is left unchanged, even where the rewrite had chosen
 * to overwrite the input); an updated one is refused (WEFT_EINVAL naming
 * it), since its new value cannot be stored in it. The check costs one scan
 * of the strides per mutable input and call.
 * Ownership: borrows f and inputs; fills or returns outputs as above.
 * Errors (message: weft_function_last_error(f) on the calling thread):
 *   WEFT_EINVAL (NULL f, NULL arrays with a count > 0, wrong n_in / n_out, a
 *     NULL input tensor, a mutable input sharing memory with another input,
 *     an updated input whose memory overlaps itself),
 *   WEFT_ETYPE (an input's or a supplied output's dtype or ndim differs; the
 *     message names the variable or output and both types),
 *   WEFT_ESHAPE (a length differs from the input variable's static length,
 *     or a supplied output's shape differs from the result's: both named),
 *   a failing node's status (its kernel's, e.g. WEFT_ESHAPE; WEFT_ENAN under
 *     nan_check; WEFT_ETYPE/WEFT_ESHAPE when a node's result does not match
 *     its variable's type): the message names the node (node index, op
 *     and creation site, weft_apply_describe) and the kernel's message; nodes
 *     not yet started are skipped, nothing leaks, the next call works;
 *     NULL output slots are left NULL and supplied outputs' contents are
 *     unspecified; updates are not applied,
 *   WEFT_ENOMEM.
 * Thread: any; several threads may call f at once. Such a call cannot be
 * canceled: give a token to weft_function_call_ex for that. */
WEFT_API weft_status_t weft_function_call(weft_function_t *f, size_t n_in,
                                          weft_tensor_t *const *inputs, size_t n_out,
                                          weft_tensor_t **outputs);

/* ---- cancelling calls ---------------------------------------------------------------- */

/* A cancellation token: another thread stops the calls that were given it
 * (weft_function_call_ex). A token is a sticky flag, as .NET's
 * CancellationToken or Go's context: once canceled, every call given it -
 * in flight or started later - returns WEFT_ECANCELED, until
 * weft_call_token_reset. One token per call cancels that call alone; one
 * token shared by several calls (of one or several functions) cancels them
 * all. Nothing a cancel does can reach a call that was not given the token,
 * so it is race-free with respect to other calls and to later calls that
 * reuse the same per-call state.
 *
 * What a canceled call does. Nodes running when the cancel arrives finish
 * (a kernel is not interrupted: the delay is at most the longest node);
 * nodes not yet started are skipped. A call *commits* when it first writes
 * memory the caller sees: the start of a node that overwrites a mutable
 * input in place (an update computed in place, docs/execution.md §6), or
 * else the delivery of its results after the last node. A cancel that
 * arrives before the commit makes the call return WEFT_ECANCELED with no
 * effect visible to the caller: supplied output tensors are left unchanged,
 * NULL output slots stay NULL (nothing is handed over), mutable inputs and
 * update states are untouched, no update is applied; every intermediate
 * went back to the function's buffer pool, and the next call (canceled or
 * not) works and allocates nothing more than a call before it. A cancel
 * that arrives after the commit has no effect on that call: it completes
 * and returns WEFT_OK (or its own error). So a call either ran in full or
 * left the caller's tensors as they were - never half-applied updates.
 * A node failure that happens first wins over a cancel (its status is
 * returned). */
typedef struct weft_call_token weft_call_token_t;

/* A new, not canceled token.
 * Ownership: returns new *out, free with weft_call_token_destroy.
 * Errors: WEFT_EINVAL (NULL out), WEFT_ENOMEM.  Thread: any. */
WEFT_API weft_status_t weft_call_token_create(weft_call_token_t **out);

/* Frees tok. NULL: no-op (WEFT_OK).
 * Ownership: takes tok on success.
 * Errors: WEFT_EINVAL (not a token), WEFT_EBUSY (a call given tok is in
 * flight: nothing is freed).  Thread: any, not concurrently with calls given
 * tok or other uses of tok. */
WEFT_API weft_status_t weft_call_token_destroy(weft_call_token_t *tok);

/* Cancels every call given tok, now and until reset (see above). Cancelling
 * twice is the same as once. Returns at once; it does not wait for the calls
 * to return. Allocates nothing, takes no lock: safe from a signal-handling
 * thread.  Errors: WEFT_EINVAL (NULL or not a token).
 * Thread: any, also concurrently with calls given tok and other cancels. */
WEFT_API weft_status_t weft_call_token_cancel(weft_call_token_t *tok);

/* Whether tok has been canceled (and not reset since); false for NULL.
 * Thread: any. */
WEFT_API bool weft_call_token_is_canceled(const weft_call_token_t *tok);

/* Makes tok not canceled again, for the next calls (a token is reusable:
 * no allocation per call). Errors: WEFT_EINVAL (NULL or not a token),
 * WEFT_EBUSY (a call given tok is in flight: tok stays canceled).
 * Thread: any, not concurrently with calls given tok. */
WEFT_API weft_status_t weft_call_token_reset(weft_call_token_t *tok);

/* Per-call options of weft_function_call_ex. */
typedef struct weft_call_options {
    size_t size;              /* sizeof(weft_call_options_t) */
    weft_call_token_t *token; /* borrowed, must outlive the call; NULL: not cancelable */
    /* Optional: called once per call, when its first node fails, on the
     * worker running that node, with the status and the node's message (the
     * call's message without the function's name in front; valid during
     * the hook only) - before the call waits for
     * the nodes still running. A component that runs nodes waiting on
     * something outside the process (weft/mpi.h: receives) uses it to wake
     * them. It must not block or call into this function. NULL: none. */
    void (*on_node_failure)(void *user, weft_status_t status, const char *message);
    void *failure_user; /* passed to on_node_failure; borrowed */
} weft_call_options_t;

#define WEFT_CALL_OPTIONS_INIT { sizeof(weft_call_options_t), NULL, NULL, NULL }

/* weft_function_call with options (opts NULL: as weft_function_call).
 * Errors: as weft_function_call, plus WEFT_EINVAL (opts->size too small, a
 * token that is not one) and WEFT_ECANCELED (opts->token canceled before the
 * call committed: see weft_call_token_t; the message says so; the argument
 * checks come first, so a canceled call with bad arguments returns their
 * error). A call canceled before it started runs no node and does not count
 * in weft_function_stats' calls.
 * Ownership: as weft_function_call; borrows opts and the token.
 * Thread: any; several threads may call f at once, with the same token or
 * different ones. */
WEFT_API weft_status_t weft_function_call_ex(weft_function_t *f, size_t n_in,
                                             weft_tensor_t *const *inputs, size_t n_out,
                                             weft_tensor_t **outputs,
                                             const weft_call_options_t *opts);

/* Text of the calling thread's last failed weft_function_compile (f NULL) or
 * weft_function_call(_ex) (or profile call, weft/profile.h) on f; "" when
 * that thread's last such call succeeded or concerned another function. An
 * out-of-memory failure always says "out of memory", after the step that ran
 * out. Concurrent calls on other threads never change it. Returns borrowed,
 * valid until the calling thread's next weft_function_compile /
 * weft_function_call(_ex).  Thread: any. */
WEFT_API const char *weft_function_last_error(const weft_function_t *f);

/* Shape queries (0 / NULL for a NULL f or k out of range). The variables are
 * the function's own copies (owned by f, valid until it is destroyed). The
 * inputs and outputs are the caller's: shared variables and their updates
 * are not counted.
 * Thread: any. */
WEFT_API size_t weft_function_n_inputs(const weft_function_t *f);
WEFT_API size_t weft_function_n_outputs(const weft_function_t *f);
WEFT_API weft_var_t *weft_function_input(const weft_function_t *f, size_t k);
WEFT_API weft_var_t *weft_function_output(const weft_function_t *f, size_t k);
/* Number of apply nodes executed per call (after rewriting and copies). */
WEFT_API size_t weft_function_n_nodes(const weft_function_t *f);
/* The pool f runs on (borrowed, valid while f lives). */
WEFT_API weft_pool_t *weft_function_pool(const weft_function_t *f);
/* Prints the compiled graph, in execution order, one node per line:
 * "index: Apply" (e.g. "2: Add(x, y)").  Errors: WEFT_EINVAL, WEFT_EIO. */
WEFT_API weft_status_t weft_function_print(const weft_function_t *f, FILE *out);
/* Writes the compiled graph as a Graphviz digraph: one box per node labeled
 * as weft_function_print ("index: Apply"; nodes that overwrite an input are
 * filled), the inputs (ellipses, "(mutable)" when declared so), one edge per
 * data dependency, a dashed edge per DestroyHandler ordering, and the outputs
 * and updates. Errors: WEFT_EINVAL (NULL args), WEFT_EIO, WEFT_ENOMEM.
 * Ownership: borrows.  Thread: any, also while calls run. */
WEFT_API weft_status_t weft_function_dot(const weft_function_t *f, FILE *out);

/* Buffer statistics of f since compile: buffers the buffer pool had to
 * allocate (misses), buffers it handed back out (hits), and the peak number
 * of intermediate buffers live at once in any one call (fresh outputs in
 * cells, views and destroy outputs not counted; small kept intermediates
 * not counted). */
typedef struct weft_function_stats {
    size_t size;                  /* set by the caller: sizeof(weft_function_stats_t) */
    uint64_t calls;               /* completed calls (OK or failed) */
    uint64_t buffers_allocated;   /* output buffers allocated by the buffer pool */
    uint64_t buffers_reused;      /* output buffers served from the buffer pool */
    uint64_t peak_live_buffers;   /* max intermediate buffers alive in one call
                                     (measured with profiling on; else 0) */
    uint64_t call_states;         /* per-call states created (concurrency reached) */
} weft_function_stats_t;

/* Errors: WEFT_EINVAL (NULL args, out->size too small).  Thread: any
 * (a snapshot; counters from calls in flight may be partial). */
WEFT_API weft_status_t weft_function_stats(const weft_function_t *f, weft_function_stats_t *out);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_FUNCTION_H */
