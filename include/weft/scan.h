/* Scan: a loop inside the graph (PyTensor's scan, docs/control-flow.md
 * "Scan"). An inner graph - built by the user in the same context from
 * placeholder variables, as for OpFromGraph - runs once per step with
 * slices of the sequences, the carried states of earlier steps and the
 * non-sequences; each output is stacked over the steps.
 *
 * Inner graph: every placeholder (a root, non-constant variable of g) is an
 * inner input; the inner outputs are expressions of the placeholders and
 * constants only (another root is refused, named: WEFT_EMISSING_INPUT).
 * Inner inputs at step t (t = 0 .. n_steps-1):
 * - sequence s, tap k (taps[k] >= 0 or < 0): seq[t + taps[k] - min(taps)],
 *   a row of the outer sequence (its type: the sequence's without axis 0);
 * - output o with taps (outputs_info with an initial value), tap k (< 0):
 *   the output of step t + taps[k], or, before step 0, the initial value:
 *   with taps {-1} the initial value is the state itself (same shape as the
 *   update); otherwise it has a leading axis of length L = -min(taps), and
 *   init[L + t + taps[k]] is read;
 * - the non-sequences, unchanged.
 * Inner outputs: one update per output (the value of step t; for a carried
 * output also the state later steps read) and, optionally, the until
 * condition (a 0-d value: the loop stops after the first step at which it is
 * non-zero, that step included; PyTensor's until).
 *
 * Number of steps: n_steps (>= 0) or n_steps_var (an int64 0-d outer
 * variable); when neither is given (n_steps < 0, no variable) it is the
 * largest the sequences allow: min over s of len(seq_s) - (max(taps_s) -
 * min(taps_s)). A sequence too short for n_steps fails at run time
 * (WEFT_ESHAPE naming it).
 *
 * Result: outputs[o] has shape (steps run, update's shape...) - PyTensor's
 * shape: the initial values are not included. Reading only its last row
 * (weft_subtensor(g, y, 1, {WEFT_SLICE_AT(-1)})) lets the compile-time
 * rewrite "scan_save_mem" keep only the states the loop reads (L + 1 of
 * them, not n_steps): the Scan node then returns the last state itself.
 *
 * Running: the inner graph is compiled as a weft_function_t (fast_run
 * rewrites, DestroyHandler, static memory plan) on the pool running the
 * outer node, once per call state of the outer function (at its first
 * call: the pool is known to the node only then), and each step is one node-parallel run of it on that pool (a
 * nested run: the waiting worker keeps executing ready work, so this does
 * not deadlock, even on one worker). Each step writes straight into its row
 * of the stacked output (or into one of the L + 1 saved states), so a
 * carried state is never copied. Without until, a loop whose inner graph
 * splits into stages (values that depend on no carried state, groups of
 * carries in dependency order, values only pure outputs need) runs them as
 * separately compiled functions, a DAG of (stage, step) tasks on the same
 * pool, so that later steps' carry-independent work and independent
 * accumulations overlap the recurrent chain: the same bits at any worker
 * count (docs/control-flow.md §5.2). In the sequential evaluator
 * (weft/eval.h) the inner function is compiled for the call on the default
 * pool and the steps run one after the other.
 *
 * Gradient: backpropagation through time as reverse Scans over the stored
 * states (docs/control-flow.md §5.5) for any sequence and carried taps
 * (init's rows get their gradient) and for until (over the steps run; the
 * condition has no gradient); sequence rows no step read get zeros.
 * Reverse scans too (so second order through a Scan works), and scans of 0
 * steps (nothing reaches the inputs through the loop). Nodes already
 * returning last states (compiled graphs) report WEFT_ENOGRAD naming the
 * node and why.
 *
 * JSON: the op's props carry the inner graph and the layout
 * (docs/graph-format.md, "Scan").
 *
 * Ownership: weft_scan borrows g and spec; the outputs are owned by g. The
 * inner graph is copied and interned (kept until the process exits).
 * Thread: building, as every graph function; the op may run on several
 * workers and in several calls at once. */
#ifndef WEFT_SCAN_H
#define WEFT_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/export.h"
#include "weft/graph.h"
#include "weft/op.h"
#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Limits of one Scan (WEFT_EINVAL beyond them). */
#define WEFT_SCAN_MAX_SEQS 16
#define WEFT_SCAN_MAX_NONSEQS 32
#define WEFT_SCAN_MAX_TAPS 8
/* Outputs: at most WEFT_OP_MAX_OUTPUTS (16). */

/* A sequence: outer (L, ...) and one inner placeholder per tap. */
typedef struct weft_scan_seq {
    weft_var_t *outer;
    size_t n_taps;             /* 0: one tap {0} */
    const int64_t *taps;       /* n_taps offsets, increasing; NULL when n_taps 0 */
    weft_var_t *const *inner;  /* max(n_taps, 1) placeholders */
} weft_scan_seq_t;

/* An output (PyTensor's outputs_info entry with its inner update). */
typedef struct weft_scan_output {
    weft_var_t *update;        /* inner expression: the value of step t */
    weft_var_t *init;          /* outer initial value; NULL: not carried */
    size_t n_taps;             /* carried: 0 means {-1}; must be 0 when init is NULL */
    const int64_t *taps;       /* n_taps negative offsets, increasing */
    weft_var_t *const *inner;  /* carried: max(n_taps, 1) placeholders; else NULL */
} weft_scan_output_t;

typedef struct weft_scan_spec {
    size_t size; /* sizeof(weft_scan_spec_t) */
    size_t n_seqs;
    const weft_scan_seq_t *seqs;
    size_t n_outputs; /* 1 .. WEFT_OP_MAX_OUTPUTS */
    const weft_scan_output_t *outputs;
    size_t n_nonseqs;
    weft_var_t *const *nonseq_outer; /* outer values */
    weft_var_t *const *nonseq_inner; /* their placeholders */
    int64_t n_steps;                 /* >= 0: static; < 0: n_steps_var or the sequences */
    weft_var_t *n_steps_var;         /* int64 0-d outer variable, or NULL */
    weft_var_t *until;               /* inner 0-d condition, or NULL */
    const char *name;                /* for printing (copied, cut to 31 bytes); NULL: none */
    /* Step t reads the sequences at row n_steps - 1 - t (plus its taps)
     * instead of t: the loop walks the sequences backwards (the gradient's
     * reverse scan). Outputs are stacked in step order. */
    bool reverse;
} weft_scan_spec_t;

#define WEFT_SCAN_SPEC_INIT \
    {sizeof(weft_scan_spec_t), 0, NULL, 0, NULL, 0, NULL, NULL, -1, NULL, NULL, NULL, false}

/* Builds one Scan node and stores its n_outputs results in outputs[]
 * (stacked, see above). Returns outputs[0], or NULL on error with the first
 * error kept on g (weft_graph_error; constructor style, weft/graph.h).
 * Errors: WEFT_EINVAL (NULL args, spec->size too small, counts beyond the
 * limits, taps not increasing, a non-negative output tap, a placeholder
 * that is not a root variable or is listed twice, taps on an output without
 * init), WEFT_ETYPE (a placeholder whose type does not fit its outer value
 * - named with its creation site -, an update whose dtype or rank differs
 * from its state's, an n_steps_var that is not int64 0-d, an until that is
 * not 0-d), WEFT_ESHAPE (static lengths that differ), WEFT_EMISSING_INPUT
 * (an inner root that is not a placeholder), WEFT_EFOREIGN, WEFT_ENOMEM. */
#define weft_scan(g, spec, outputs) weft_scan_at((g), (spec), (outputs), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_scan_at(weft_graph_t *g, const weft_scan_spec_t *spec,
                                  weft_var_t **outputs, const char *file, int line);

/* The Scan op class (class name "Scan"). Returns static. */
WEFT_API const weft_op_class_t *weft_scan_class(void);
/* Whether op is a Scan. */
WEFT_API bool weft_scan_is(const weft_op_t *op);
/* Whether output o of a Scan op returns only the last state (after
 * scan_save_mem); false for another op or o out of range. */
WEFT_API bool weft_scan_output_is_last(const weft_op_t *op, size_t o);

typedef struct weft_rewrite_db weft_rewrite_db_t;

/* Name of the save-memory rewrite (in2out walk, tags "fast_run", "scan"):
 * a Scan output read only as y[-1] is computed as its last state alone. */
#define WEFT_SCAN_SAVE_MEM_REWRITE "scan_save_mem"
/* Name of the one-step inlining rewrite (in2out walk, tags "fast_run",
 * "scan"): a Scan whose n_steps is the constant 1 is replaced by its inner
 * graph applied to the sequences' rows, the initial states and the
 * non-sequences (the stacked outputs get their leading axis of length 1). */
#define WEFT_SCAN_INLINE_REWRITE "scan_inline_one_step"
/* Name of the invariant code motion rewrite (in2out walk, tags "fast_run",
 * "scan"): inner values that depend on no sequence and no carried state are
 * computed once before the loop and passed in as non-sequences. */
#define WEFT_SCAN_PUSH_OUT_REWRITE "scan_push_out_non_seq"
/* Name of the merge (in2out walk, tags "fast_run", "scan"): two scans with
 * the same step count and sequences, neither reading the other, become one
 * loop. */
#define WEFT_SCAN_MERGE_REWRITE "scan_merge"
/* Name of the map split (in2out walk, tag "scan" only: in no mode, applied
 * when included by name or tag): the inner values that depend on the
 * sequences and non-sequences but on no carried state (an RNN's x_t @ W)
 * move to a map scan of their own, whose steps run in parallel; the carried
 * loop reads them as sequences. Without it a Scan node runs those values in
 * a stage of its own, pipelined with the carried loop
 * (docs/control-flow.md §5.3). */
#define WEFT_SCAN_SPLIT_MAP_REWRITE "scan_split_map"
/* Name of the output pruning (in2out walk, tags "fast_run", "scan"): a
 * stacked output that is not carried and that nothing reads (the gradient
 * with respect to a sequence nobody asked for) is dropped with the inner
 * nodes only it needed. */
#define WEFT_SCAN_PRUNE_REWRITE "scan_prune_outputs"
/* Name of the accumulation push-out (in2out walk, tags "fast_run", "scan",
 * "fast_math"): an output acc_t = acc_{t-1} + P_t^T @ B_t read only as
 * y[-1] (a gradient's weight sum) is computed after the loop as init +
 * P^T @ B over the stacked P_t and B_t, one product (summed in another
 * order than the loop's). */
#define WEFT_SCAN_PUSH_OUT_DOT_REWRITE "scan_push_out_dot"
/* Name of the chunked accumulation (in2out walk, tags "fast_run", "scan",
 * "fast_math"; after scan_save_mem): in a loop that also carries another
 * value (a chain), such an accumulator returning its last state is summed
 * by a pipelined run in chunks of 8 steps beside the chain, one product per
 * chunk (docs/control-flow.md §5.2); scan_push_out_dot leaves those loops
 * alone. */
#define WEFT_SCAN_CHUNK_SUM_REWRITE "scan_chunk_sum"
/* Name of the broadcast-sequence fold (in2out walk, tags "fast_run",
 * "scan"): a sequence ReduceGrad{Sum over every axis}(x, gz) - gz in every
 * element - whose x is also a sequence of the scan is dropped; the loop
 * reads gz as a non-sequence (Second(x_t, gz)). The same values. */
#define WEFT_SCAN_FILL_SEQ_REWRITE "scan_fill_seq"

/* Registers the Scan rewrites in db; WEFT_OK when already there. The default
 * database has them. Errors: WEFT_EINVAL (NULL db), WEFT_ENOMEM. */
WEFT_API weft_status_t weft_scan_register_rewrites(weft_rewrite_db_t *db);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_SCAN_H */
