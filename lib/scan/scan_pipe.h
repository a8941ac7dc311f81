/* Pipelined steps (docs/control-flow.md §5.2): the inner graph of a Scan
 * split into stages - "pre" (values that depend on no carried state), one
 * stage per group of carried outputs that feed each other, in dependency
 * order, and "post" (values only pure outputs need) - each compiled as its
 * own function. The steps then run as a DAG of (stage, step) tasks on
 * the node's pool: a stage's step t after its step t-1, and after the
 * producers of the values it reads at step t, so that
 * later steps' pre-stage work (an RNN's x_t @ W) and the gradient's weight
 * accumulations overlap the recurrent chain. A value crossing stages is
 * stored in a ring of WEFT__PIPE_RING rows kept with the DAG: the producer
 * of step t + WEFT__PIPE_RING waits for the readers of step t (an edge), so
 * the producing stage runs at most that many steps ahead and the rows stay
 * in cache; an inner output is read from the Scan's own output rows.
 *
 * Used by scan_run.c: built with the compiled inner function (one per plan
 * cell), run by the one thread running the Scan node; the tasks run on the
 * pool, each on its own view handles. */
#ifndef WEFT_SCAN_PIPE_H
#define WEFT_SCAN_PIPE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "scan_int.h"
#include "tensor/kernel_int.h"
#include "weft/function.h"
#include "weft/sched.h"

#define WEFT__PIPE_MAX_STAGES (WEFT_OP_MAX_OUTPUTS + 2)
#define WEFT__PIPE_MAX_X 32 /* crossing values */
/* Rows of a crossing value's ring: a constant, never the worker count, so
 * the DAG (and the bits) are the same at any worker count. */
#define WEFT__PIPE_RING 8
/* Steps of one chunk of a chunk-summed accumulator (scan_chunk.c): one
 * product of inner length 8 * rows per chunk. Chunks start at multiples of
 * 8 from step 0 (the last one may be shorter): fixed by the step count,
 * never by the worker count. */
#define WEFT__PIPE_CHUNK 8
/* Chunks of rows in each ring of a pipeline with a chunk stage: the chain
 * may run two chunks ahead of the products reading the third. With two
 * (one ahead) a worker that took a whole product while the chain waited
 * for a ring row held the chain for that product, and the other worker ran
 * out of chunks to sum meanwhile (docs/control-flow.md §5.6). A constant,
 * never the worker count. */
#define WEFT__PIPE_CHUNK_RINGS 3
#define WEFT__PIPE_MAX_ARGS (WEFT__SCAN_MAX_INNER_IN + WEFT_OP_MAX_OUTPUTS + WEFT__PIPE_MAX_X)

/* Where a stage function's argument or result lives at step t. */
typedef enum weft__pipe_src_kind {
    WEFT__PIPE_IN,  /* inner input idx (a sequence row, a carried state, a non-sequence) */
    WEFT__PIPE_OUT, /* row t of the Scan's output idx */
    WEFT__PIPE_X    /* row t of crossing value idx */
} weft__pipe_src_kind_t;

typedef struct weft__pipe_src {
    uint32_t kind, idx;
} weft__pipe_src_t;

/* One successor pattern of a stage's tasks: (stage, t + dt). */
typedef struct weft__pipe_succ {
    uint32_t stage;
    int64_t dt;
} weft__pipe_succ_t;

typedef struct weft__pipe_stage {
    weft_function_t *f;
    bool carried; /* runs a group of carried outputs (else pre or post) */
    size_t n_args, n_res;
    weft__pipe_src_t args[WEFT__PIPE_MAX_ARGS], res[WEFT_OP_MAX_OUTPUTS + WEFT__PIPE_MAX_X];
    size_t n_succ;
    weft__pipe_succ_t succ[WEFT__PIPE_MAX_STAGES * (WEFT_SCAN_MAX_TAPS + 1) + 1];
    char name[48];
    /* a chunk stage (scan_pipe_chunk.c): its step t does nothing unless it
     * ends a chunk; then chunk_f sums carried output chunk_o's chunk,
     * chunk_f(acc, P rows, B rows) = acc + reshape(P)^T @ reshape(B) */
    bool chunk;
    uint32_t chunk_o;
    weft__pipe_src_t chunk_src[2]; /* P_t and B_t: a sequence row or a crossing value */
    weft_function_t *chunk_f;
} weft__pipe_stage_t;

typedef struct weft__pipe_task weft__pipe_task_t;

/* What one run of the Scan node hands the pipeline: every output's storage
 * is allocated (stacked, (n, S...), or the ring of a last-state output). */
typedef struct weft__pipe_io {
    const weft__scan_layout_t *l;
    const char *label;
    weft_tensor_t *const *in; /* outer inputs */
    weft_tensor_t **out;      /* outer outputs */
    const size_t *init_pos;   /* outer input of carried output o's initial value */
    int64_t n;
    /* outputs returning their last state only (bit o): step j's state is
     * ring[o][(n - 1 - j) % period[o]] (scan_run.c) */
    uint32_t last_mask;
    weft_tensor_t *(*ring)[WEFT_SCAN_MAX_TAPS + 1];
    const int64_t *period;
} weft__pipe_io_t;

typedef struct weft__scan_pipe {
    size_t n_stages;
    weft__pipe_stage_t st[WEFT__PIPE_MAX_STAGES];
    size_t n_x; /* crossing values: dtype and static state shape */
    weft_dtype_t x_dt[WEFT__PIPE_MAX_X];
    int x_nd[WEFT__PIPE_MAX_X];
    int64_t x_shape[WEFT__PIPE_MAX_X][WEFT_MAX_NDIM];
    int64_t ring; /* rows of each crossing value's ring: WEFT__PIPE_RING, or
                     WEFT__PIPE_CHUNK_RINGS chunks with a chunk stage */
    /* the DAG of steps 1..dag_n-1, rebuilt when the step count or pool changes */
    int64_t dag_n;
    void *dag_pool;
    weft_dag_t *dag;
    weft_dag_run_t *run;
    weft__pipe_task_t *tasks;
    size_t n_tasks;
    weft_tensor_t **handles;
    size_t n_handles;
    weft_tensor_t *x_rows[WEFT__PIPE_MAX_X]; /* (min(dag_n, ring), state shape) each */
    /* one run */
    const weft__pipe_io_t *io;
    pthread_mutex_t lock; /* guards the failure record */
    int64_t bad_step;     /* first failing step, or -1 */
    char msg[WEFT__KERNEL_MSG_CAP];
} weft__scan_pipe_t;

/* The stages of core's inner graph compiled with opts (scan_pipe_part.c).
 * *out stays NULL (WEFT_OK) when the loop does not split: until, no
 * carried output, fewer than two stages, a last-state output that another
 * stage than its writer reads, an inner output that
 * is an inner input, a constant or another output, a crossing value
 * without a complete static type, too many crossing values. Errors: a
 * stage's compile (message in weft_function_last_error(NULL)), WEFT_ENOMEM.
 * Caller holds the lock guarding core's interned graph. */
weft_status_t weft__scan_pipe_build(const weft__scan_props_t *p,
                                    const weft_function_options_t *opts,
                                    weft__scan_pipe_t **out);
/* Frees pp (NULL: nothing). No run may be in flight. */
void weft__scan_pipe_destroy(weft__scan_pipe_t *pp);
/* The steps of one run of the Scan node on ctx's pool (scan_pipe.c).
 * Errors (ctx untouched): building the DAG (pp->bad_step -1, pp->msg the
 * reason), or the first failing task's status with pp->bad_step its step
 * and pp->msg "step T: the stage function's message". */
weft_status_t weft__scan_pipe_run(weft__scan_pipe_t *pp, const weft__pipe_io_t *io,
                                  weft_kernel_ctx_t *ctx);

/* The ring row of step t's crossing values: t mod ring, counted from the
 * top in a reverse scan. A reverse scan reads its sequence rows downwards
 * in memory, so a chunk (scan_pipe_chunk.c) reads both a sequence's rows
 * and a ring's upwards - one positive-stride view each, pairing the same
 * steps - and its reshape to one matrix is a view, not a copy. */
int64_t weft__pipe_x_slot(const weft__scan_pipe_t *pp, int64_t t);

/* Chunk stages (scan_pipe_chunk.c). Marks the carried stages of pp that
 * write one output of chunk_mask alone, as acc + P^T @ B with P and B
 * sequence rows or crossing values (part's copy: in[] its inner inputs,
 * out[] its updates, x[] the crossing values), compiles their chunk_f with
 * opts on g and sets pp->ring. Errors: the compile's. */
weft_status_t weft__pipe_chunk_stages(weft__scan_pipe_t *pp, weft_graph_t *g,
                                      const weft__scan_props_t *sp, weft_var_t *const *in,
                                      weft_var_t *const *out, weft_var_t *const *x,
                                      const weft_function_options_t *opts);
/* Runs step t of chunk stage st (a task of scan_pipe.c; the view handles
 * h[0], h[1]). Errors: a view's or chunk_f's, message in *msg. */
weft_status_t weft__pipe_chunk_run(weft__scan_pipe_t *pp, const weft__pipe_stage_t *st,
                                   int64_t t, weft_tensor_t **h, const char **msg);

/* *h becomes the view of base (nd, shape, strides, offset off in
 * elements), rewritten in place when nothing else holds it. Uses no kernel
 * context; the message is weft_tensor_last_error's. */
weft_status_t weft__scan_view(weft_tensor_t **h, weft_tensor_t *base, int nd, const int64_t *shape,
                              const int64_t *strides, int64_t off);
/* *h becomes the view of row `row` of base (axis 0 dropped), rewritten in
 * place when nothing else holds it. Uses no kernel context (tasks call
 * it); the message is weft_tensor_last_error's. */
weft_status_t weft__scan_row_view(weft_tensor_t **h, weft_tensor_t *base, int64_t row);

#endif /* WEFT_SCAN_PIPE_H */
