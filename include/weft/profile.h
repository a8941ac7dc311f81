/* Profiles of compiled functions (weft/function.h), built on the scheduler's
 * per-run records (weft/sched.h weft_dag_profile_t).
 *
 * A function compiled with profiling (options.profile, or WEFT_PROFILE=1 in
 * the environment) records, for each call and accumulated over all calls:
 * per apply node its time, call count and worker; per op and per op class the
 * time, share, calls and number of applies (the layout of PyTensor's
 * ProfileStats, docs/execution.md §9: "Function profiling" block, Class, Ops
 * and Apply tables); and what only a parallel executor can tell: the call's
 * wall time vs the sum of node times (achieved parallelism), the critical
 * path (the chain of nodes that bounds the run, the longest path through the
 * task DAG weighted by node durations), the ideal speedup it allows (sum of
 * node times / critical path), the idle time of each worker, and the peak
 * bytes of intermediates alive at once.
 *
 * Percentages in the tables are relative to the sum of node times; node
 * times are per-thread wall times, so they may add up to more than the
 * call's wall time.
 *
 * A profile is taken as a snapshot (weft_profile_create): plain data, owned by
 * the caller, consistent even while other threads call the function.
 * With WEFT_PROFILE=1, every function prints its report to stderr when it is
 * destroyed; functions still alive at exit print theirs from an atexit
 * handler.
 *
 * Thread: snapshots are immutable; any thread may read one. */
#ifndef WEFT_PROFILE_H
#define WEFT_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "weft/export.h"
#include "weft/function.h"
#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which calls a snapshot covers. */
typedef enum weft_profile_scope {
    WEFT_PROFILE_TOTAL = 0,     /* accumulated over every call since compile */
    WEFT_PROFILE_LAST_CALL = 1, /* the last completed call only */
} weft_profile_scope_t;

/* One apply node (rows in node order: index == DAG node id; the node order
 * is a topological order, the one a single worker runs the graph in). */
typedef struct weft_profile_apply {
    uint32_t index;          /* position in the node order = DAG node id */
    /* the apply in weft's terms: op without in-place props, inputs named
     * unambiguously (a node's output "Dot.out#12": node 12's; a named variable
     * by name; a function input by name or "input k"; a constant by value),
     * and the overwritten input said in words, e.g.
     * "Tanh(Gemm.out#1) destroys input 0" */
    const char *name;
    const char *op;          /* the op likewise, e.g. "Tanh destroys input 0" */
    const char *op_class;    /* class name, e.g. "Tanh" */
    uint64_t calls;          /* times it ran */
    uint64_t time_ns;        /* summed run time */
    double percent;          /* of the sum of node times */
    uint32_t worker;         /* worker of its last run */
    uint64_t start_ns;       /* last run: start, relative to the run's start */
    uint64_t end_ns;         /* last run: end, relative to the run's start */
    bool on_critical_path;   /* on the scope's critical path */
    /* Structural key (weft/node_cost.h): the same for the node out of place
     * and in place, and in another compile of the same graph; what the
     * compile option cost_profile matches nodes by. */
    uint64_t key;
    /* In-place nodes (destroys >= 0; docs/rewrites.md §6.6):
     * inplace_bytes, the bytes of the output written into the destroyed
     * input instead of a new buffer (0 when the output's static shape has an
     * unknown length; 0 for other nodes); inplace_orderings, the ordering
     * edges of the task DAG into this node that carry no data (readers of
     * the destroyed value that must finish first: 0 means the in-place
     * choice cost no parallelism). */
    uint64_t inplace_bytes;
    uint32_t inplace_orderings;
    const char *out_types;   /* static output types, e.g. "float64[64,256]" ("?": unknown) */
    uint64_t out_bytes;      /* bytes its outputs allocate per call: views and
                              * overwritten inputs allocate none; 0 when a length
                              * is unknown before run time */
    int destroys;            /* the input it overwrites in place, or -1 */
    /* The input whose memory the static memory plan gives this node's
     * output, or -1 (docs/execution.md §4.6, slot reuse): the node is that
     * input's last reader in every schedule the plan covers and writes over
     * it element for element, with no ordering added (unlike destroys). */
    int reuses_input;
    /* Calls that skipped the node: it lies in an IfElse branch not taken
     * (its guard was false, docs/control-flow.md §2), so it neither ran nor
     * allocated. A skip is not a run: it adds nothing to calls, time_ns or
     * the worker's busy time; a last-call row of a skipped node has calls 0
     * and skips 1. */
    uint64_t skips;
} weft_profile_apply_t;

/* One rewriter of the compile's rewrite mode (weft_rewrite_stats_t). */
typedef struct weft_profile_rewrite {
    const char *name;
    uint64_t applied;        /* replacements it made */
    uint64_t failed;         /* replacements refused or callback failures */
    uint64_t time_ns;        /* time in it (callback, replacement, validation) */
} weft_profile_rewrite_t;

/* One row of the Ops (equal ops) or Class (op classes) table. */
typedef struct weft_profile_group {
    const char *name;        /* printed op, or class name */
    uint64_t time_ns;
    double percent;          /* of the sum of node times */
    uint64_t calls;          /* node runs */
    uint32_t applies;        /* apply nodes in the group */
} weft_profile_group_t;

typedef struct weft_profile {
    const char *function;        /* the function's name */
    weft_profile_scope_t scope;
    uint64_t calls;              /* calls covered (failed calls included) */
    uint64_t call_time_ns;       /* wall time inside weft_function_call */
    uint64_t run_time_ns;        /* wall time of the DAG runs */
    uint64_t node_time_ns;       /* sum of node times ("time in thunks") */
    double parallelism;          /* node_time / run_time (achieved) */
    uint64_t critical_path_ns;   /* length of the critical path */
    double ideal_speedup;        /* node_time / critical_path */
    uint64_t compile_time_ns;    /* weft_function_compile, total */
    uint64_t rewrite_time_ns;    /* of which the rewrite mode */
    uint64_t peak_bytes;         /* peak bytes of intermediates alive in a call */
    /* The static memory plan (docs/execution.md §4.6): the arena of the
     * scope's call (of the largest plan over the scope's calls), and the
     * peak the same values need when one worker runs the nodes in order and
     * frees each after its last use. 0 when nothing is planned. */
    uint64_t arena_bytes;
    uint64_t sequential_peak_bytes;
    unsigned workers;            /* entries in worker_idle_ns / worker_busy_ns */
    const uint64_t *worker_idle_ns;  /* idle time of each worker during runs */
    const uint64_t *worker_busy_ns;  /* node time run by each worker */
    size_t n_applies;
    const weft_profile_apply_t *applies;     /* execution order */
    size_t n_critical;
    const uint32_t *critical_path;           /* apply indices, first to last */
    size_t n_ops;
    const weft_profile_group_t *ops;         /* by time, descending */
    size_t n_classes;
    const weft_profile_group_t *classes;     /* by time, descending */
    size_t n_rewrites;
    const weft_profile_rewrite_t *rewrites;  /* the compile's rewriters, by time, descending */
} weft_profile_t;

/* A snapshot of f's profile for the scope.
 * Ownership: borrows f; returns new *out, free with weft_profile_destroy
 * (every pointer inside lives as long as the snapshot).
 * Errors (with f, message: weft_function_last_error(f) on the calling
 * thread): WEFT_EINVAL (NULL args, unknown scope), WEFT_ESTATE (f was not
 * compiled with profiling; or scope LAST_CALL before any call), WEFT_ENOMEM.
 * Thread: any, also while other threads call f. */
WEFT_API weft_status_t weft_profile_create(const weft_function_t *f,
                                           weft_profile_scope_t scope, weft_profile_t **out);

/* Frees a snapshot. NULL: no-op. */
WEFT_API void weft_profile_destroy(weft_profile_t *p);

/* Writes the text report: the "Function profiling" block (calls, call / run /
 * node times, parallelism, critical path and ideal speedup, idle time per
 * worker, peak memory of intermediates, compile and rewrite times, number of
 * apply nodes), then the Class, Ops and Apply tables (first max_rows rows of
 * each, 0: 20, then "... (remaining K ...)"; Apply rows also give each node's
 * output bytes and types), then the critical path, then the rewrite profile
 * (time, applications and failures per rewriter).
 * Errors: WEFT_EINVAL (NULL args), WEFT_EIO (write failed).
 * Ownership: borrows.  Thread: any. */
WEFT_API weft_status_t weft_profile_print(const weft_profile_t *p, size_t max_rows, FILE *out);

/* The profile as data: one JSON document (its schema:
 * docs/weft-profile.schema.json; format: docs/profiling.md) or CSV (one row
 * per apply node, header first; docs/profiling.md).
 * Errors: WEFT_EINVAL (NULL args), WEFT_EIO (write failed).
 * Ownership: borrows.  Thread: any. */
WEFT_API weft_status_t weft_profile_write_json(const weft_profile_t *p, FILE *out);
WEFT_API weft_status_t weft_profile_write_csv(const weft_profile_t *p, FILE *out);

/* Chrome trace of several calls: calls[k] (each a LAST_CALL snapshot) with
 * its events shifted by offset_ns[k] (e.g. the call's start relative to the
 * first), so a trace can cover every profiled call, or the last N.
 * Errors: WEFT_EINVAL (NULL args, n == 0), WEFT_EIO.
 * Ownership: borrows.  Thread: any. */
WEFT_API weft_status_t weft_profile_write_trace_calls(const weft_profile_t *const *calls,
                                                      const uint64_t *offset_ns, size_t n,
                                                      FILE *out);

/* Graphviz dot of f's compiled graph (as weft_function_dot) labelled from the
 * snapshot p of f: "id: apply", output types, time per call; nodes filled by
 * their share of the node time (white to red), in-place nodes with a double
 * border, orderings dashed.
 * Errors: WEFT_EINVAL (NULL args, p not of f: another node count), WEFT_EIO,
 * WEFT_ENOMEM.  Ownership: borrows.  Thread: any. */
WEFT_API weft_status_t weft_profile_write_dot(const weft_function_t *f, const weft_profile_t *p,
                                              FILE *out);

/* Writes the covered runs' node slices as Chrome trace / Perfetto JSON
 * ({"traceEvents": [...]}, loadable in chrome://tracing and ui.perfetto.dev):
 * one track (tid) per worker, one complete event ("ph":"X") per node run of
 * the last call, timestamps in microseconds from the run's start, plus
 * thread-name metadata. Errors: WEFT_EINVAL, WEFT_EIO.
 * Ownership: borrows.  Thread: any. */
WEFT_API weft_status_t weft_profile_write_trace(const weft_profile_t *p, FILE *out);

/* Convenience: snapshot (TOTAL), print, free.
 * Errors: as weft_profile_create and weft_profile_print. */
WEFT_API weft_status_t weft_function_print_profile(const weft_function_t *f, FILE *out);

/* Discards the accumulated profile of f (e.g. after warm-up calls).
 * Errors: WEFT_EINVAL (NULL f), WEFT_ESTATE (no profiling; message:
 * weft_function_last_error(f)).
 * Thread: any; calls in flight are counted in the new totals. */
WEFT_API weft_status_t weft_profile_reset(weft_function_t *f);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_PROFILE_H */
