/* Internal layout of compiled functions (lib/compile): the immutable program
 * built by weft_function_compile, the per-call state reused across calls, the
 * buffer pool, the profile accumulator, and the helpers shared by the files
 * of the module. Not part of the API.
 *
 * Storage protocol (docs/execution.md §2, §4):
 * - every variable of the compiled fgraph has a slot; a call state holds one
 *   cell (weft_tensor_t *) per slot. A node's outputs occupy consecutive
 *   slots, so perform gets &cells[out_base] as its output cells;
 * - input cells borrow the caller's tensors for the duration of the call;
 *   constant cells hold the function's constant tensors (set once per state);
 *   owned cells start empty each call;
 * - each freeable slot (owned, not a graph output) has a countdown: the
 *   number of distinct nodes reading it (or 1, counted by the producer, for a
 *   value nobody reads). Each reader decrements after running; the one that
 *   reaches 0 empties the cell: the tensor goes back to the buffer pool when
 *   nothing else references its handle or buffer, else it is just released
 *   (a view or destroyer output elsewhere keeps the buffer alive through the
 *   tensor refcounts);
 * - the DAG's edges (data + DestroyHandler prerequisites) order a producer
 *   before its readers; the scheduler's release/acquire on its pending
 *   counters makes cell writes visible to readers. */
#ifndef WEFT_COMPILE_INT_H
#define WEFT_COMPILE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tensor/kernel_int.h"
#include "weft/destroy.h"
#include "weft/fgraph.h"
#include "weft/function.h"
#include "weft/graph.h"
#include "weft/rewrite.h"
#include "weft/op.h"
#include "weft/profile.h"
#include "weft/sched.h"
#include "weft/tensor.h"

typedef weft_status_t (*weft__perform_fn)(const weft_apply_t *node, weft_tensor_t *const *inputs,
                                          weft_tensor_t **outputs, weft_kernel_ctx_t *ctx);

/* One DAG node: what its body needs on every call, resolved at compile time,
 * in 32 bytes (two per cache line; a 24-byte record straddling lines was
 * measured slower). Nodes are laid out in the order one worker runs them
 * (schedule_order.c), so consecutive runs stream through consecutive
 * records. Its index is its position in f->nodes. Its slot lists
 * (weft__node_slots_t) live in f->slot_storage at word offset slots:
 * weft__cnode_slots finds them; what only the checks read is in
 * f->node_out. */
typedef struct weft__cnode {
    _Alignas(32) weft__perform_fn perform;
    const weft_apply_t *apply;
    uint32_t slots : 30; /* word offset of the slot lists in f->slot_storage */
    /* output 0 is the only output and an exclusive kept slot (WEFT__SLOT_KEPT
     * and nothing aliases it): see cs->own */
    uint32_t own : 1;
    /* output 0 is a graph output the node may write straight into the
     * caller's tensor (direct_out.c): see cs->own */
    uint32_t direct : 1;
    uint32_t out_base; /* output j lives in slot out_base + j */
    /* word offset of the node's guard in f->guards (guard.c,
     * docs/control-flow.md §2): it runs only when the guard holds; 0: always */
    uint32_t guard;
} weft__cnode_t;

_Static_assert(sizeof(weft__cnode_t) == 32 && _Alignof(weft__cnode_t) == 32,
               "weft__cnode_t: two per 64-byte cache line");

/* Bound on f->slot_storage's length in words: offsets fit weft__cnode_t.slots. */
#define WEFT__SLOT_STORAGE_MAX (1u << 30)

/* A node's slot lists: this header and, right after it, n_in input slots
 * then n_dec slots to count down after running (each distinct freeable
 * input, and its own outputs nobody reads). Consecutive nodes' lists are
 * packed back to back in f->slot_storage, in node order, so one node's lists
 * are one short contiguous run of 32-bit words. */
typedef struct weft__node_slots {
    uint32_t n_in;  /* inputs: slot[0 .. n_in) */
    uint32_t n_dec; /* countdowns: slot[n_in .. n_in + n_dec) */
    uint32_t n_out; /* outputs: slots out_base .. out_base + n_out (weft__cnode_t) */
    uint32_t slot[];
} weft__node_slots_t;

_Static_assert(sizeof(weft__node_slots_t) == 3 * sizeof(uint32_t),
               "weft__node_slots_t: a 3-word header, no padding before the slots");

/* The n_in input slots: input k is the tensor in cells[weft__node_slots_in(ns)[k]]. */
static inline const uint32_t *weft__node_slots_in(const weft__node_slots_t *ns)
{
    return ns->slot;
}

/* The n_dec slots the node counts down after running. */
static inline const uint32_t *weft__node_slots_dec(const weft__node_slots_t *ns)
{
    return ns->slot + ns->n_in;
}

/* Length in storage words of slot lists with n_in inputs and n_dec countdowns. */
static inline size_t weft__node_slots_words(size_t n_in, size_t n_dec)
{
    return sizeof(weft__node_slots_t) / sizeof(uint32_t) + n_in + n_dec;
}

/* A node's cold data: read by output checks and memory tracking only. */
typedef struct weft__cnode_out {
    const weft_type_t *const *out_types; /* every output's type */
    uint32_t n_out;
    uint32_t fresh_mask; /* bit j: output j is neither a view nor a destroy output,
                            nor a kept slot (memory tracking) */
} weft__cnode_out_t;

typedef enum weft__slot_kind {
    WEFT__SLOT_OWNED = 0,
    WEFT__SLOT_INPUT = 1,
    WEFT__SLOT_CONST = 2,
    /* A small fresh value (output of static size <= WEFT__KEEP_BYTES that
     * views and destroys nothing; graph outputs included, see lower.c
     * mark_kept): its buffer stays in its cell between calls and the
     * producer reuses it (weft_kernel_alloc_output), so it needs no countdown
     * and no pool traffic. Memory bound: WEFT__KEEP_BYTES per such slot. */
    WEFT__SLOT_KEPT = 3
} weft__slot_kind_t;

#define WEFT__KEEP_BYTES 256

/* The buffer pool: exclusive tensors handed back by emptied cells, kept by
 * (dtype, shape) and handed out again by the kernels' allocation hook.
 * One mutex; shared by every call state and worker, so a buffer freed on one
 * worker serves an allocation on any other and a call of unchanged shapes
 * finds every buffer it needs (no steady-state allocation, whatever the
 * node-to-worker placement). Small fresh values, graph outputs included,
 * never come here (kept in their cells, WEFT__SLOT_KEPT). */
typedef struct weft__bucket {
    weft_dtype_t dtype;
    int ndim;
    int64_t shape[WEFT_MAX_NDIM];
    size_t nbytes;
    size_t n, cap;
    weft_tensor_t **items;
} weft__bucket_t;

typedef struct weft__bufpool {
    pthread_mutex_t lock;
    size_t n_buckets, cap_buckets;
    weft__bucket_t *buckets;
    size_t held_bytes; /* bytes parked in buckets; bounded by max_bytes */
    size_t max_bytes;
    uint64_t allocated, reused; /* statistics, under lock */
} weft__bufpool_t;

/* The static memory plan (memplan.c, arena.c; docs/execution.md §4.6). A
 * planned value: a fresh intermediate (owned, not kept, not a graph output,
 * no alias of it a graph output) and the nodes using its memory. */
typedef struct weft__mp_value {
    uint32_t writer;         /* the node writing it */
    uint32_t n_readers;      /* >= 1 */
    const uint32_t *readers; /* nodes reading it or an alias of it; the writer when none */
} weft__mp_value_t;

#define WEFT__MP_NONE UINT64_MAX /* a value without a byte size (not placed) */
#define WEFT__MP_MAX_VALUES 4096u /* more values: no plan, the pool serves them */
#define WEFT__MP_MAX_BITS ((size_t)1 << 28) /* bound on the ancestor bit sets */

/* Geometry of a planned value: from its type, or measured in a call. */
typedef struct weft__mp_geom {
    weft_dtype_t dtype;
    int ndim; /* -1: unknown */
    int64_t shape[WEFT_MAX_NDIM];
} weft__mp_geom_t;

typedef struct weft__memplan {
    uint32_t n;               /* planned values */
    weft__mp_value_t *vals;
    uint32_t *slot;           /* per value: its slot */
    uint32_t *reader_storage;
    uint32_t *value_of_slot;  /* per slot: value index, or UINT32_MAX */
    /* Slot reuse (memplan_reuse.c): a planned value may be a chain of
     * slots, each written by the last reader of the one before over its
     * memory. next_member[s]: the slot after s in its value's chain
     * (UINT32_MAX: none; NULL: no chains); reuse_in[node]: the input whose
     * memory the node's output takes, or UINT32_MAX (NULL: none does). */
    uint32_t *next_member;
    uint32_t *reuse_in;
    uint64_t *conflict;       /* n rows of weft__memplan_words(n) words: conflict bits */
    weft__mp_geom_t *type_geom; /* per value: from its type (ndim -1: not static) */
    bool all_static;
    /* the compile-time plan of the statically sized values */
    uint64_t *static_off, static_arena, static_seq_peak;
} weft__memplan_t;

/* Strict-ancestor sets of a DAG's nodes among its "reader" nodes (those
 * reading some planned value): col[node] is its column (UINT32_MAX: not a
 * reader), row x of anc (w words) holds the columns of x's strict ancestors. */
typedef struct weft__mp_reach {
    uint32_t *col;
    uint64_t *anc;
    size_t w;
} weft__mp_reach_t;

static inline bool weft__mp_bit_get(const uint64_t *row, uint32_t i)
{
    return (row[i >> 6] >> (i & 63)) & 1u;
}

/* Reader node a is a strict ancestor of node x: a finishes before x starts
 * in every schedule. */
static inline bool weft__mp_reach_before(const weft__mp_reach_t *r, uint32_t a, uint32_t x)
{
    return weft__mp_bit_get(r->anc + (size_t)x * r->w, r->col[a]);
}

/* Words of one row of a conflict matrix of n values. */
static inline size_t weft__memplan_words(size_t n)
{
    return (n + 63) / 64;
}

typedef struct weft__call_state weft__call_state_t;

/* Profile accumulator (profile.c); under f->prof_lock. */
typedef struct weft__prof_acc {
    uint64_t calls, call_ns, run_ns, node_ns, peak_bytes;
    uint64_t *node_time, *node_calls; /* per node */
    uint64_t *node_skips;             /* per node: calls that skipped it (guard false) */
    uint8_t *last_skipped;            /* per node: the last call skipped it */
    uint32_t *node_worker;
    uint64_t *worker_idle, *worker_busy;
    /* the last call */
    bool have_last;
    uint64_t last_call_ns, last_run_ns, last_node_ns, last_peak_bytes;
    /* the memory plan's arena and its sequential peak (largest / last call) */
    uint64_t arena_bytes, seq_peak_bytes, last_arena_bytes, last_seq_peak_bytes;
    uint64_t *last_start, *last_end, *last_idle, *last_busy;
    uint32_t *last_worker;
    /* per node, fixed at compile (profile_inplace.c): structural key, bytes
     * written in place, ordering edges into the node */
    uint64_t *node_key, *inplace_bytes;
    uint32_t *inplace_ord;
} weft__prof_acc_t;

/* The arguments of a compile as the caller gave them, or as expanded for
 * shared variables (function_shared.c). */
typedef struct weft__compile_in {
    size_t n_in, n_out, n_upd;
    weft_var_t *const *inputs, *const *outputs;
    const weft_update_t *updates;
} weft__compile_in_t;

/* A function's shared variables (function_shared.c, weft/shared.h). */
typedef struct weft__fn_shared weft__fn_shared_t;

/* The arguments with the shared variables made extra inputs and their
 * updates extra outputs (*ex: new arrays, weft__compile_in_free); *out NULL
 * (and *ex zeroed) when no shared variable is involved. Errors (message
 * through weft__fn_error): WEFT_EINVAL (a shared variable listed as an input,
 * or updated twice), WEFT_ETYPE (an update value's type), WEFT_ENOMEM. */
weft_status_t weft__shared_expand(const weft__compile_in_t *in, weft__compile_in_t *ex,
                                  weft__fn_shared_t **out);
void weft__compile_in_free(weft__compile_in_t *ex);
void weft__fn_shared_free(weft__fn_shared_t *sh);
size_t weft__fn_shared_n_inputs(const weft__fn_shared_t *sh);
size_t weft__fn_shared_n_outputs(const weft__fn_shared_t *sh);
/* weft_function_call_ex of a function with shared variables. */
weft_status_t weft__shared_call(weft_function_t *f, size_t n_in, weft_tensor_t *const *inputs,
                                size_t n_out, weft_tensor_t **outputs,
                                const weft_call_options_t *opts);
/* weft_function_call_ex on the expanded inputs and outputs (call.c). */
weft_status_t weft__function_call_plain(weft_function_t *f, size_t n_in,
                                        weft_tensor_t *const *inputs, size_t n_out,
                                        weft_tensor_t **outputs,
                                        const weft_call_options_t *opts);

struct weft_function {
    char *name;
    uint64_t serial; /* unique per process: tags per-thread error text */
    weft_graph_t *g; /* the function's own context */
    weft_fgraph_t *fg;
    size_t n_in, n_out, n_upd;   /* n_out user outputs; update outputs follow */
    weft__fn_shared_t *shared;   /* NULL: no shared variable (n_in, n_out: expanded) */
    weft_var_t **in_vars;        /* fgraph inputs (our copies) */
    weft_var_t **out_vars;       /* fgraph outputs, user's then updates' */
    uint32_t *upd_input;         /* update u writes input upd_input[u] */
    bool *in_mutable;            /* declared mutable or updated */
    /* per user output: its producer may write it into the caller's tensor
     * (direct_out.c); NULL when no output may */
    uint8_t *direct_out;
    /* caller-supplied outputs delivered by a copy / written in place by
     * their producer, every call state together (relaxed: statistics) */
    _Atomic uint64_t out_copies, out_direct;
    bool any_mutable;
    uint32_t *in_slot, *out_slot;
    /* program */
    uint32_t n_nodes, n_slots, n_argv;
    weft__cnode_t *nodes; /* 64-byte aligned */
    weft__cnode_out_t *node_out; /* per node */
    uint32_t *slot_storage;      /* every node's slot lists: weft__cnode_slots */
    const weft_type_t **type_storage;
    uint8_t *slot_kind;
    uint32_t *countdown_init;       /* per slot (0: no countdown); restored by its last reader */
    uint32_t *owned_slots, n_owned; /* WEFT__SLOT_OWNED slots (emptied after a failed call) */
    /* reset plan (reset_plan.c): the owned slots without a countdown (graph
     * outputs: emptied after every call); per guard memo id k, the slots
     * reset_slots[reset_off[k] .. reset_off[k + 1]) a call restores and
     * empties when guard k did not hold (NULL without guards) */
    uint32_t *owned_out, n_owned_out;
    uint32_t *reset_off, *reset_slots;
    uint32_t *argv_off; /* per node: input pointers at state->argv[argv_off ..] (n_in > 8) */
    weft_tensor_t **const_cells; /* per slot: the constant's tensor, else NULL */
    /* per node: 1 when it overwrites a caller's input tensor (a destroyer whose
     * destroyed value aliases a mutable input); its start commits a
     * cancelable call (call_cancel.c). NULL when no node does. */
    uint8_t *writes_caller;
    /* the guards of lazy IfElse branches (weft__cnode_t.guard; NULL: none);
     * per slot, the guard of its producer (0: none or not guarded); per
     * node, on a one-worker pool, the first node id after its run of
     * consecutive nodes with the same guard (NULL when not used) */
    uint32_t *guards;
    uint32_t n_guarded, n_guard_memo;
    uint32_t *slot_guard;
    uint32_t *skip_end;
    /* pools of 2+ workers: one gate per IfElse guard whose nodes form a
     * scheduler region (gate.c); DAG node n_nodes + k runs gates[k] */
    struct weft__gate *gates;
    uint32_t n_gates;
    _Atomic uint64_t gate_retires; /* regions retired by a gate, all calls (tests) */
    weft_dag_t *dag;
    uint64_t *edges;  /* DAG edges (weft__edge_pack), sorted, unique: critical path */
    size_t n_edges;
    weft_pool_t *pool;
    bool own_pool;
    bool nan_check;
    bool profile;
    bool deferrable; /* options.deferrable_nodes */
    bool critical_path_first; /* options.critical_path_first */
    bool env_profile; /* WEFT_PROFILE=1: print at destroy */
    unsigned workers;
    unsigned node_threads; /* workers a node's kernel may split over (options) */
    /* per-call states: free list under state_lock */
    pthread_mutex_t state_lock;
    weft__call_state_t *free_states;
    weft__call_state_t *all_states;
    uint64_t n_states;
    atomic_uint in_flight; /* calls running: refcount-like, for destroy's EBUSY */
    weft__bufpool_t bufpool;
    weft__memplan_t mp; /* the static memory plan (arena.c) */
    /* kernel plans built or rebuilt, every call state together
     * (tensor/kernel_int.h plan cells; relaxed: a statistic) */
    _Atomic uint64_t plan_builds;
    /* statistics under prof_lock */
    pthread_mutex_t prof_lock;
    uint64_t calls, peak_live_buffers;
    weft__prof_acc_t acc;
    uint64_t compile_ns, rewrite_ns;
    weft_rewrite_stats_t *rewrite_stats; /* per rewriter, when profiling; else NULL */
    /* registry of live functions (for the WEFT_PROFILE atexit report) */
    weft_function_t *reg_prev, *reg_next;
};

struct weft__call_state {
    weft__call_state_t *next_free, *next_all;
    weft_function_t *f;
    weft_tensor_t **cells;
    /* per node, guarded nodes only: 1 when this call skipped it (its guard
     * was false), written by the worker deciding, read by the profile after
     * the run; NULL when the function has no guard */
    uint8_t *skipped;
    /* per distinct guard (memo id): 0 not evaluated yet this call, 1 false,
     * 2 true; reset before each run (relaxed atomics: workers evaluating one
     * guard at once compute the same value from the same conditions) */
    _Atomic uint8_t *guard_memo;
    /* per slot: the raw handle (tensor/tensor_int.h) of the view the
     * slot's cell held when it was last emptied, or NULL; its producer
     * rebuilds its next view in it (weft_kernel_view_output), so views cost
     * no malloc in steady state. Written by the thread emptying the cell,
     * read by the producer in a later call: ordered by the call boundary,
     * like the cells. */
    weft_tensor_t **stash;
    atomic_uint *countdown; /* f->countdown_init at each call's start (reset_plan.c) */
    weft_tensor_t **argv;
    /* per node: its plan cell (tensor/kernel_int.h, docs/execution.md §3.7):
     * the plan its kernel cached on an earlier call of this state, or NULL.
     * One call of the state runs the node once, so the cell needs no lock. */
    void **plans;
    /* per slot, for own nodes (weft__cnode_t.own): 1 when the cell holds a tensor
     * checked exclusive, contiguous and of its variable's type when it was
     * placed. Nothing else can reference it since (no alias of the slot
     * exists), so the next calls reuse it without reading reference counts
     * and skip its output check while perform leaves it in place. For
     * direct nodes (weft__cnode_t.direct): 1 while the cell holds the
     * caller's output tensor for this call (direct_out.c). */
    uint8_t *own;
    /* per user output: the caller's tensor put in its cell for this call
     * (one reference held by the state), or NULL (direct_out.c) */
    weft_tensor_t **direct;
    weft_dag_run_t *run;
    /* cancellation (call_cancel.c): the call's token (NULL: not cancelable;
     * set by the calling thread before the run) and its phase (WEFT__PHASE_*),
     * decided by a CAS among the call's own threads */
    weft_call_token_t *token;
    _Atomic int phase;
    /* the call's failure hook (weft_call_options_t.on_node_failure), or NULL */
    void (*fail_hook)(void *user, weft_status_t status, const char *message);
    void *fail_user;
    /* first failure (failure path only: under err_lock) */
    pthread_mutex_t err_lock;
    bool failed;
    weft_status_t err_status;
    uint32_t err_node;
    char err_msg[1024];
    /* memory tracking (profiling only): bytes / buffers of fresh outputs live
     * in cells; countdown-style counters updated by the workers */
    atomic_llong live_bytes, live_buffers;
    atomic_llong peak_bytes, peak_buffers;
    int64_t *slot_bytes; /* bytes counted for each fresh slot (profiling) */
    /* Tensors whose cell was emptied while a view or destroyer output still
     * held their buffer (the handle itself exclusive): parked in the buffer
     * pool at the end of the call, once those holders are gone too, so a view
     * of an intermediate does not cost a fresh allocation every call. At most
     * one entry per slot per call; workers take indices with n_deferred. */
    weft_tensor_t **deferred;
    atomic_uint n_deferred;
    /* The arena (arena.c): per slot, the handle on the arena memory of a
     * planned value (NULL: the pool serves the slot), which stays in its
     * cell from call to call; the plan's values' geometry, exclusions and
     * the input shapes it was made for. Touched by the calling thread
     * between runs, except mp_geom[v] (written by the one thread emptying
     * value v's cell in a measuring call). */
    weft_tensor_t **arena_h;
    void *arena;
    uint64_t arena_bytes, seq_peak_bytes;
    weft__mp_geom_t *mp_geom;
    uint8_t *mp_excluded;
    int64_t *mp_key; /* n_in * WEFT_MAX_NDIM input lengths */
    bool mp_ready, mp_dirty, mp_measure;
};

/* Node n's slot lists. */
static inline const weft__node_slots_t *weft__cnode_slots(const weft_function_t *f,
                                                          const weft__cnode_t *n)
{
    return (const weft__node_slots_t *)(f->slot_storage + n->slots);
}

/* qsort order of uint64_t keys (edges below, reset_plan.c's pairs). */
static inline int weft__cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* A DAG edge as one sort key: sorting keys orders edges by source, then
 * target, and equal keys are equal edges. */
static inline uint64_t weft__edge_pack(uint32_t from, uint32_t to)
{
    return ((uint64_t)from << 32) | to;
}

static inline uint32_t weft__edge_from(uint64_t e)
{
    return (uint32_t)(e >> 32);
}

static inline uint32_t weft__edge_to(uint64_t e)
{
    return (uint32_t)e;
}

/* A malloc'ed copy of s (strdup is not C11). */
static inline char *weft__compile_strdup(const char *s)
{
    size_t n = __builtin_strlen(s) + 1;
    char *c = __builtin_malloc(n);
    return c ? __builtin_memcpy(c, s, n) : NULL;
}

/* ---- errors (last_error.c) ----------------------------------------------------- */
/* Records the calling thread's error for f (NULL: compile) and returns st. */
weft_status_t weft__fn_error(const weft_function_t *f, weft_status_t st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Clears the calling thread's error, tagging it with f. */
void weft__fn_clear_error(const weft_function_t *f);

/* ---- graph copy into the function's context (graph_copy.c) -------------------- */
/* Copies the subgraph from inputs to outputs of the user's context into dst.
 * new_in / new_out receive the copies. Errors with a message (weft__fn_error). */
weft_status_t weft__compile_copy_graph(weft_graph_t *dst, size_t n_in, weft_var_t *const *inputs,
                                       size_t n_out, weft_var_t *const *outputs,
                                       weft_var_t **new_in, weft_var_t **new_out,
                                       bool *has_destroyers);

/* ---- aliasing and boundary copies (output_aliasing.c) ---------------------------- */
/* The variable whose buffer v may share: follows view_map / destroy_map. */
weft_var_t *weft__alias_root(weft_var_t *v);
/* Inserts DeepCopy nodes on output slots (docs/execution.md §7). */
weft_status_t weft__insert_deepcopies(weft_function_t *f);
/* Refuses a graph in which a destroyer destroys a protected input or an
 * output's buffer (D6, checked on the final graph). */
weft_status_t weft__check_protected(weft_function_t *f, const bool *mutable_in);

/* ---- lowering (lower.c) ----------------------------------------------------- */
weft_status_t weft__compile_lower(weft_function_t *f);
void weft__compile_free_program(weft_function_t *f);

/* ---- guards of lazy IfElse branches (guard.c) ------------------------------------- */
/* Per toposort index, the offset of its guard in words (0: runs always).
 * A guard is [memo id, n_terms, then per term: len, len literals]; it
 * holds when some term's literals all do, a literal (x << 1 | negated)
 * being condition x true (or false). x is a variable id in the plan and a
 * slot once lowered. Equal guards share one encoding (the first
 * GUARD_DEDUPE distinct ones are compared), so equal offsets mean equal
 * guards; memo ids number the encodings (a call evaluates each once). */
typedef struct weft__guard_plan {
    uint32_t *off;
    uint32_t *words;
    size_t n_words, n_guarded;
    uint32_t *distinct; /* offsets of the distinct encodings */
    size_t *len;        /* their lengths in words, past the memo id */
    size_t n_distinct;
} weft__guard_plan_t;
/* Guards of the n nodes of a toposort (apply_idx: toposort index by apply
 * id) and *edges (sorted, distinct, between toposort indices) extended by
 * the edges from each guard's condition producers (sorted; may repeat).
 * Nothing (gp zeroed) when the graph has no IfElse. Errors: WEFT_ENOMEM. */
weft_status_t weft__guard_plan(const weft_function_t *f, weft_apply_t *const *order, size_t n,
                               const uint32_t *apply_idx, uint64_t **edges, size_t *ne,
                               weft__guard_plan_t *gp);
void weft__guard_plan_free(weft__guard_plan_t *gp);
/* A gate (gate.c): guard (word offset), its region's closure (node
 * indices, for the profile) and the slots the closure reads from outside,
 * each with its number of reads (counted down at once on retirement). */
typedef struct weft__gate {
    uint32_t guard;
    uint32_t *closure, n_closure;
    uint32_t *ext_slot, *ext_count, n_ext;
} weft__gate_t;
/* Adds the gates and their regions to f->dag (before finalize). */
weft_status_t weft__gates_add(weft_function_t *f);
void weft__gates_free(weft_function_t *f);
/* The reset plan (reset_plan.c), after the guards are placed; freed with
 * the program. Errors: WEFT_ENOMEM. */
weft_status_t weft__reset_plan(weft_function_t *f);
void weft__reset_plan_free(weft_function_t *f);
/* A gate's DAG body: retires its region when the guard is false. */
weft_status_t weft__gate_body(void *arg, const weft_task_ctx_t *ctx);
/* Counts slot s down by k reads; the last empties its cell (call.c). */
void weft__slot_release(weft__call_state_t *cs, uint32_t s, uint32_t k);
/* The guard at word offset off holds in this call's cells. */
bool weft__guard_holds(const weft__call_state_t *cs, uint32_t off);

/* ---- node order (schedule_order.c) ------------------------------------------ */
/* rank[i]: the position of node i when one worker runs the DAG of n nodes
 * with edges (weft__edge_pack; sorted by source; a repeated edge counts
 * once per copy on both ends, and edges may go from a higher index to a
 * lower one: guard.c adds such) by the pool's
 * policy (continuation to the first ready successor, the other ready ones
 * last in first out). Errors: WEFT_ENOMEM, WEFT_EINCONSISTENT (a cycle). */
weft_status_t weft__schedule_order(uint32_t n, const uint64_t *edges, size_t ne, uint32_t *rank);
/* The same for a prioritized DAG (options.critical_path_first): the order
 * one worker runs it in, the best ready node first (base/prio_heap.h). */
weft_status_t weft__schedule_order_prio(uint32_t n, const uint64_t *edges, size_t ne,
                                        const int64_t *prio, uint32_t *rank);

/* ---- buffer pool (buffer_pool.c) ------------------------------------------------ */
weft_status_t weft__bufpool_init(weft__bufpool_t *bp);
void weft__bufpool_fini(weft__bufpool_t *bp);
/* Kernel allocation hook (user = the weft__bufpool_t). */
weft_status_t weft__bufpool_alloc(void *user, weft_dtype_t dtype, int ndim, const int64_t *shape,
                                  weft_tensor_t **out);
/* Kernel scratch give-back hook (user = the weft__bufpool_t): bufpool_put. */
void weft__bufpool_give_back(void *user, weft_tensor_t *t);
/* Takes t: parks it when it is a buffer's base handle, exclusive (no other
 * handle, view or caller holds it) and contiguous; else releases it. */
void weft__bufpool_put(weft__bufpool_t *bp, weft_tensor_t *t);

/* ---- static memory plan (memplan.c, arena.c) ------------------------------------ */
/* The conflict matrix of n values of a DAG of n_nodes (edges as f->edges):
 * bit j of row i set when values i and j may be live at once under some
 * schedule. sequential: the only schedule is node id order (a one-worker
 * pool runs the nodes so, weft/sched.h), and lifetimes are id intervals.
 * *out NULL for n 0. Errors: WEFT_ENOMEM, WEFT_ERANGE (over
 * WEFT__MP_MAX_VALUES or WEFT__MP_MAX_BITS: no plan). */
weft_status_t weft__memplan_conflicts(uint32_t n_nodes, const uint64_t *edges, size_t ne,
                                      size_t n, const weft__mp_value_t *v, bool sequential,
                                      uint64_t **out);
/* The strict-ancestor sets among the reader nodes of values v (freed with
 * weft__memplan_reach_free). Errors: WEFT_ENOMEM, WEFT_ERANGE (over
 * WEFT__MP_MAX_BITS). */
weft_status_t weft__memplan_reach(uint32_t n_nodes, const uint64_t *edges, size_t ne, size_t n,
                                  const weft__mp_value_t *v, weft__mp_reach_t *r);
void weft__memplan_reach_free(weft__mp_reach_t *r);
/* A candidate for slot reuse (memplan_reuse.c): node `node` reads value
 * `in` and may write its fresh value `out`, of in's exact geometry, element
 * for element over in's memory. */
typedef struct weft__mp_reuse {
    uint32_t node, in, out;
} weft__mp_reuse_t;
/* Decides the candidates c (in node id order): prev[out] = in for each one
 * taken, WEFT__MP_NO_PREV elsewhere. Taken when no value took in's memory
 * yet, out takes none yet, and every other node using in's memory (its
 * readers) finishes before node starts in every schedule the DAG allows
 * (sequential: in node id order). Errors: WEFT_ENOMEM, WEFT_ERANGE (too
 * large: nothing taken). */
#define WEFT__MP_NO_PREV UINT32_MAX
weft_status_t weft__memplan_reuse(uint32_t n_nodes, const uint64_t *edges, size_t ne, size_t n,
                                  const weft__mp_value_t *v, bool sequential, size_t nc,
                                  const weft__mp_reuse_t *c, uint32_t *prev);
/* Offsets (64-byte aligned) for the values of known size (bytes[i] !=
 * WEFT__MP_NONE; the others get WEFT__MP_NONE) such that conflicting values
 * get disjoint ranges: largest first, best fit. Errors: WEFT_ENOMEM. */
weft_status_t weft__memplan_place(size_t n, const uint64_t *bytes, const uint64_t *conflict,
                                  uint64_t *offset, uint64_t *arena_bytes);
/* The peak bytes of the sized values when one worker runs the nodes in id
 * order and frees each value after its last use (0 on ENOMEM). */
uint64_t weft__memplan_seq_peak(uint32_t n_nodes, size_t n, const weft__mp_value_t *v,
                                const uint64_t *bytes);
/* Compile time, on the lowered program: the planned values, their conflicts
 * and the plan of the statically sized ones (is_output: by slot, graph
 * outputs and updates). Errors: WEFT_ENOMEM (with a message). */
weft_status_t weft__arena_analyze(weft_function_t *f, const bool *is_output);
/* Slot reuse (memplan_reuse.c): with the per-value plan values made
 * (mp->vals over one slot each), decides which nodes write their output
 * over an input's memory and folds each chain of such values into one
 * planned value (mp->next_member, mp->reuse_in). root: alias roots by slot.
 * Errors: WEFT_ENOMEM. */
weft_status_t weft__arena_reuse(weft_function_t *f, const uint32_t *root, bool sequential);
void weft__arena_free_plan(weft_function_t *f);
/* Per call state: allocation of its arrays, and release. */
weft_status_t weft__arena_state_init(weft__call_state_t *cs);
void weft__arena_state_fini(weft__call_state_t *cs);
/* Before a run: (re)builds the state's arena when the input shapes changed
 * or the last call asked for it, and puts each planned value's handle in
 * its cell. Falls back to the pool (no arena) when memory is short. */
void weft__arena_prepare(weft__call_state_t *cs, weft_tensor_t *const *inputs);
/* After a run (calling thread): notes planned values whose kernel did not
 * take the arena handle (their size varies: the pool serves them from the
 * next plan on) and whether a measuring call found new sizes. */
void weft__arena_settle(weft__call_state_t *cs);
/* The cell of slot s holds its arena handle: emptying it keeps it there. */
static inline bool weft__arena_holds(const weft__call_state_t *cs, uint32_t s,
                                     const weft_tensor_t *t)
{
    return t && cs->arena_h[s] == t;
}
/* A measuring call records the geometry of the value in slot s (t) when its
 * cell is emptied. */
void weft__arena_measure(weft__call_state_t *cs, uint32_t s, const weft_tensor_t *t);

/* ---- outputs written into the caller's tensors (direct_out.c) ------------------- */
/* Compile time, after the nodes are built: marks the user outputs whose
 * producer may write into the caller's tensor (f->direct_out, cnode.direct).
 * aliased: by slot, as lower.c. Errors: WEFT_ENOMEM. */
weft_status_t weft__direct_plan(weft_function_t *f, const bool *aliased);
/* Before a run: puts each eligible caller-supplied output in its cell. */
void weft__direct_place(weft__call_state_t *cs, weft_tensor_t *const *inputs,
                        weft_tensor_t *const *outputs);
/* Whether output k's value already lies in outputs[k] (no copy needed). */
bool weft__direct_written(const weft__call_state_t *cs, size_t k, const weft_tensor_t *o);
/* After a run (delivered or failed): takes the caller's tensors out of
 * their cells and drops the state's references. */
void weft__direct_clear(weft__call_state_t *cs);

/* ---- calls (call.c, call_state.c) ---------------------------------------------------- */
weft_status_t weft__state_acquire(weft_function_t *f, weft__call_state_t **out);
void weft__state_release(weft_function_t *f, weft__call_state_t *cs);
void weft__states_free(weft_function_t *f);
weft_status_t weft__node_body(void *arg, const weft_task_ctx_t *ctx);

/* ---- cancellation (call_cancel.c) ------------------------------------------------ */
/* A cancelable call's phase: OPEN until it commits (its first write to
 * memory the caller sees) or is canceled, whichever comes first. */
enum { WEFT__PHASE_OPEN = 0, WEFT__PHASE_COMMITTED = 1, WEFT__PHASE_CANCELED = 2 };
/* Marks the nodes that overwrite a caller's input (f->writes_caller). */
weft_status_t weft__cancel_plan(weft_function_t *f);
/* Registers a call given tok (NULL: none) before it runs: WEFT_ECANCELED
 * (with the message) when tok is canceled already, WEFT_EINVAL for a
 * foreign pointer. Pair each WEFT_OK with weft__token_leave. */
weft_status_t weft__token_enter(const weft_function_t *f, weft_call_token_t *tok);
void weft__token_leave(weft_call_token_t *tok);
/* Node `node` of a cancelable call is about to run: true when it must not
 * (the token was canceled before the call committed). A node that writes a
 * caller's tensor commits the call first. */
bool weft__call_stop(weft__call_state_t *cs, uint32_t node);
/* The calling thread is about to deliver results: false when the call was
 * canceled first (it must then leave the caller's tensors alone). Always
 * true for a call without a token. */
bool weft__call_commit(weft__call_state_t *cs);

/* ---- BLAS threading (openblas_threads.c) ------------------------------------- */
weft_status_t weft__compile_blas_check(void);
void weft__compile_blas_enter(void);
void weft__compile_blas_exit(void);

/* ---- pools and the live-function registry (process_wide.c) ---------------------- */
weft_status_t weft__default_pool(weft_pool_t **out);
void weft__registry_add(weft_function_t *f);
void weft__registry_remove(weft_function_t *f);
uint64_t weft__next_serial(void);
bool weft__env_profile(void);

/* ---- profiling (profile.c) ------------------------------------------------------ */
weft_status_t weft__prof_init(weft_function_t *f);
void weft__prof_fini(weft_function_t *f);
/* profile_inplace.c: fills acc's per-node key and in-place columns (after
 * lowering; f->acc's arrays allocated). */
weft_status_t weft__prof_node_info(weft_function_t *f);
/* Whether the node's op destroys an input (a non-empty destroy_map). */
bool weft__apply_destroys(const weft_apply_t *a);
/* profile_inplace.c: gives f->fg the measured costs of profile p's rows
 * (options.cost_profile; weft/node_cost.h). Errors: WEFT_EINVAL (a profile
 * with rows but no row array), WEFT_ENOMEM. */
weft_status_t weft__cost_profile_apply(weft_function_t *f, const weft_profile_t *p);
/* WEFT_ESTATE for a profile call (who) on f compiled without profiling, with
 * the message on f (weft_function_last_error). */
/* Fills rows[i].name / op / op_class / out_types / out_bytes / destroys for
 * f's nodes (profile_labels.c); *strings is the one block they point into
 * (new; free it). Errors: WEFT_ENOMEM. */
weft_status_t weft__prof_label_applies(const weft_function_t *f, weft_profile_apply_t *rows,
                                       char **strings);
weft_status_t weft__prof_not_profiled(const weft_function_t *f, const char *who);
/* Folds a finished run's records into f's accumulator. */
void weft__prof_record(weft_function_t *f, weft__call_state_t *cs, uint64_t call_ns);

#endif /* WEFT_COMPILE_INT_H */
