/* Distributed compiled functions over MPI: one graph, partitioned over the
 * ranks of a communicator (libweft_mpi, an optional component; libweft itself
 * never depends on MPI). docs/distributed.md explains the design.
 *
 * SPMD: every rank builds the same graph (same constructors in the same
 * order) and calls weft_mpi_function_compile with the same arguments. Each
 * rank computes the same partition from the graph alone (apply creation
 * order, the placement, METIS with a fixed seed), so the ranks agree without
 * talking. Each apply node runs on one rank - where its output lives: the
 * placement gives an owner per variable - or on every rank (replicated: each
 * rank computes its own value, as in data-parallel training). A value used on
 * a rank other than its owner travels as one message per (value, receiving
 * rank), however many nodes there read it: a send node on the owner and a
 * receive node on the reader, built into that rank's local function.
 *
 * Collectives are graph nodes (weft_mpi_allreduce, _broadcast, _gather):
 * compiled with plain weft_function_compile they act as on a single rank;
 * compiled here, they run the MPI collective, non-blocking
 * (MPI_Iallreduce...), so the other nodes of the call overlap it.
 *
 * Inputs: a caller passes the tensor of each input its rank owns (or every
 * input when replicated) and NULL for the others (ignored). With
 * inputs_on_root, rank 0 passes every input and the partition sends each to
 * the rank that needs it. Outputs: a rank fills the outputs it owns (and the
 * replicated ones); the other slots are left as given. With outputs_to_root,
 * rank 0 also receives every output.
 *
 * Messages and progress (docs/distributed.md §3): each call posts its
 * receives at its start; a send node copies its value into the message's
 * buffer and hands it over. All MPI calls of a call are made by the thread
 * that called weft_mpi_function_call (the communication thread for that
 * call): the local function runs on a helper thread (and its pool), so no
 * worker ever calls MPI; a receive node whose message has not arrived waits
 * for the communication thread to deliver it. This needs only
 * MPI_THREAD_FUNNELED when the caller is MPI's main thread, else
 * MPI_THREAD_SERIALIZED (the caller must then not make other MPI calls
 * concurrently); weft_mpi_function_compile checks the level MPI provides and
 * refuses a lower one (WEFT_ESTATE naming both). weft_mpi_init requests
 * FUNNELED.
 *
 * Failure: a node failing on one rank makes the call fail on every rank with
 * that node's message (prefixed "rank R: "); a peer that sends nothing for
 * `timeout_s` seconds while this rank waits for it makes the call fail with
 * WEFT_ESYSTEM ("timed out", naming the peer and the value). The function stays usable
 * after a node failure; after a timeout it refuses further calls (WEFT_ESTATE:
 * the communicator's state is unknown).
 *
 * Ownership: every object is created with _create / _compile and freed with
 * _destroy; borrowed arguments are stated per function.
 * Thread: a distributed function may be called by one thread at a time (the
 * calls of all ranks must match one to one, in the same order). */
#ifndef WEFT_MPI_H
#define WEFT_MPI_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "weft/function.h"
#include "weft/graph.h"
#include "weft/status.h"
#include "weft/tensor.h"

/* WEFT_MPI_API: libweft_mpi's exported symbols (its own macro: it is a
 * separate library). */
#if defined(__GNUC__)
#define WEFT_MPI_API __attribute__((visibility("default")))
#else
#define WEFT_MPI_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Owner values besides a rank 0..size-1. */
#define WEFT_MPI_REPLICATED (-1) /* every rank computes (or is given) its own */
#define WEFT_MPI_FOLLOW (-2)     /* default rule: see weft_mpi_owner_fn */

/* The owner of variable v (a root input or an apply's output): a rank,
 * WEFT_MPI_REPLICATED, or WEFT_MPI_FOLLOW: an apply's output then lives with
 * its first input that has an owner (a replicated one counts), a root input
 * on rank 0. An apply runs where its first output lives. Called once per
 * variable during the compile, on the compiling thread; must give the same
 * answer on every rank. */
typedef int (*weft_mpi_owner_fn)(void *user, const weft_var_t *v);

typedef enum weft_mpi_placement_kind {
    WEFT_MPI_PLACE_OWNER = 0, /* owner() decides (NULL owner: all FOLLOW) */
    WEFT_MPI_PLACE_METIS = 1  /* METIS_PartGraphKway: node cost vs bytes cut */
} weft_mpi_placement_kind_t;

typedef struct weft_mpi_options {
    size_t size; /* sizeof(weft_mpi_options_t) */
    weft_mpi_placement_kind_t placement;
    weft_mpi_owner_fn owner; /* PLACE_OWNER; also fixes owners under METIS when
                                it returns a rank or REPLICATED */
    void *owner_user;        /* borrowed during the compile */
    uint32_t metis_seed;     /* METIS's seed (same on every rank) */
    bool inputs_on_root;     /* rank 0 gives every input */
    bool outputs_to_root;    /* rank 0 also receives every output */
    double timeout_s;        /* peer timeout; <= 0: 60 s */
    /* The local function's compile options (mode, threads, pool...),
     * borrowed during the compile; NULL: defaults. */
    const weft_function_options_t *function;
} weft_mpi_options_t;

#define WEFT_MPI_OPTIONS_INIT \
    { sizeof(weft_mpi_options_t), WEFT_MPI_PLACE_OWNER, NULL, NULL, 1u, false, false, 0.0, NULL }

typedef struct weft_mpi_function weft_mpi_function_t;

/* MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED) unless MPI is already
 * initialized; *provided (may be NULL) gets the level MPI gives.
 * Errors: WEFT_ESYSTEM (MPI failed). Thread: the process's main thread. */
WEFT_MPI_API weft_status_t weft_mpi_init(int *argc, char ***argv, int *provided);

/* 2-D block-cyclic owner of tile (i, j) on a p x q process grid (row-major
 * ranks, as ScaLAPACK's default grid): (i mod p) * q + (j mod q).
 * Returns -1 for p or q < 1 or negative i, j. */
WEFT_MPI_API int weft_mpi_block_cyclic_owner(int64_t i, int64_t j, int p, int q);

/* Compiles outputs as functions of inputs (as weft_function_compile) for this
 * rank of comm (which is duplicated: collective over comm). Every rank must
 * pass an identical graph and arguments.
 * Ownership: borrows everything; returns new *out (weft_mpi_function_destroy).
 * The local graph's send and receive nodes are added to the inputs' graph
 * context (they are not reachable from the caller's outputs).
 * Errors (message: weft_mpi_last_error()): WEFT_EINVAL (NULL arguments, bad
 * options size, an owner out of range, a collective whose input is not
 * replicated), WEFT_ENOTIMPL (a value crossing ranks that is not a tensor,
 * a collective whose input's shape is not static: named; other values of
 * unknown shape do cross, docs/distributed.md §3.4), WEFT_ESTATE (MPI not
 * initialized, or its thread level too low), WEFT_ESYSTEM (METIS or MPI
 * failed), the local compile's errors (weft_function_compile), WEFT_ENOMEM. */
WEFT_MPI_API weft_status_t weft_mpi_function_compile(MPI_Comm comm, size_t n_in,
                                                     weft_var_t *const *inputs, size_t n_out,
                                                     weft_var_t *const *outputs,
                                                     const weft_mpi_options_t *opts,
                                                     weft_mpi_function_t **out);

/* weft_mpi_function_compile with updates, as weft_function_compile's
 * (weft/function.h, docs/shared.md): updates[k].var is a shared variable or
 * one of the inputs; updates[k].value must have its type. Every rank that
 * holds var gets the new value: every rank for a shared variable (shared
 * variables are replicated) or a replicated input, the input's owner
 * otherwise. A value computed on every rank (replicated) is computed there; a
 * value living on one rank is sent from it to each other holder
 * (docs/distributed.md §2, item 5). The updates of a call are committed on every
 * rank only after the ranks agreed that the call succeeded: a call that
 * fails on any rank changes no shared variable and no input on any rank.
 * Except an input declared mutable (opts->function->input_mutable): the
 * local function of each rank holding it (its owner, or every rank when
 * replicated) applies that update itself, in place when the rewrite
 * computes it so (no copy: a distributed factorization overwrites its
 * matrix); a failed call leaves such an input unspecified, as it may any
 * mutable input. n_out may be 0 when n_updates is not.
 * Ownership and errors: as weft_mpi_function_compile, plus WEFT_EINVAL (NULL
 * updates array or entry, var neither shared nor an input, var updated
 * twice: named) and WEFT_ETYPE (value's type is not var's: both named). */
WEFT_MPI_API weft_status_t weft_mpi_function_compile_updates(
    MPI_Comm comm, size_t n_in, weft_var_t *const *inputs, size_t n_out,
    weft_var_t *const *outputs, size_t n_updates, const weft_update_t *updates,
    const weft_mpi_options_t *opts, weft_mpi_function_t **out);

/* Frees f (collective over f's communicator: every rank destroys its f).
 * NULL: no-op. Errors: WEFT_EBUSY (a call in flight). */
WEFT_MPI_API weft_status_t weft_mpi_function_destroy(weft_mpi_function_t *f);

/* One distributed call: inputs[k] for the inputs this rank gives (others
 * NULL), outputs[k] for the outputs this rank receives (a caller tensor of
 * the output's type, or NULL to receive a new one); slots this rank does not
 * receive are left as they are. All ranks call together.
 * Errors (message: weft_mpi_last_error()): WEFT_EINVAL (NULL f or arrays,
 * wrong counts, a missing input this rank owns), WEFT_ESTATE (after a
 * timeout), WEFT_ESYSTEM (a peer silent for timeout_s: "timed out"; or MPI failed), the failing node's
 * status with its message (same on every rank),
 * WEFT_ENOMEM. */
WEFT_MPI_API weft_status_t weft_mpi_function_call(weft_mpi_function_t *f, size_t n_in,
                                                  weft_tensor_t *const *inputs, size_t n_out,
                                                  weft_tensor_t **outputs);

/* Does this rank give input k / receive output k? */
WEFT_MPI_API bool weft_mpi_function_gives_input(const weft_mpi_function_t *f, size_t k);
WEFT_MPI_API bool weft_mpi_function_gets_output(const weft_mpi_function_t *f, size_t k);
/* The rank apply node a (of the compiled graph) is placed on, or
 * WEFT_MPI_REPLICATED; -3 for a node not in f. A full-size view runs instead
 * on each rank that reads it (docs/distributed.md §2, item 3). */
WEFT_MPI_API int weft_mpi_function_node_rank(const weft_mpi_function_t *f, const weft_apply_t *a);
/* This rank's local compiled function (borrowed; weft_function_print etc.). */
WEFT_MPI_API weft_function_t *weft_mpi_function_local(const weft_mpi_function_t *f);

/* Counters of this rank since compile. */
typedef struct weft_mpi_stats {
    size_t size;           /* sizeof(weft_mpi_stats_t) */
    uint64_t calls;        /* calls made (failed ones too) */
    uint32_t nodes;        /* apply nodes of the graph run on this rank */
    uint32_t messages_out; /* messages this rank sends per call */
    uint32_t messages_in;  /* messages this rank receives per call */
    uint64_t bytes_out;    /* bytes sent per call */
    uint64_t bytes_in;     /* bytes received per call */
    uint32_t collectives;  /* collective nodes */
} weft_mpi_stats_t;

WEFT_MPI_API weft_status_t weft_mpi_function_stats(const weft_mpi_function_t *f,
                                                   weft_mpi_stats_t *out);

/* ---- profiling (docs/distributed.md §7) ------------------------------------ */

/* This rank's report: its share of the graph (nodes, messages and bytes in
 * and out per call), then one line per message it sends or receives:
 * "msg M src->dst BYTES bytes last_ms=T mean_ms=U value" (T: from the
 * post (MPI_Irecv at the call's start, MPI_Isend when the send node ran) to
 * the completion, in the last call; U: the mean over calls), then the local
 * function's profile report when it was compiled with profile on.
 * Errors: WEFT_EINVAL (NULL), WEFT_EIO. Thread: not during a call on f. */
WEFT_MPI_API weft_status_t weft_mpi_function_print_report(const weft_mpi_function_t *f,
                                                          FILE *out);

/* Collective over f's communicator (every rank calls it after the same
 * call): rank 0 writes `path` (the other ranks' path is ignored, may be
 * NULL) as one Chrome trace (chrome://tracing, Perfetto) of the last call:
 * a process per rank ("rank R"), the local function's nodes on their
 * workers' threads (when it was compiled with profile on), each message a
 * slice on a "messages" thread of the sender (post to completion of the
 * send) and of the receiver (post of the receive to its completion), joined
 * by a flow arrow from the send's start to the receive's end. Times are
 * CLOCK_MONOTONIC microseconds: comparable across ranks of one machine;
 * across machines only as synchronized as their clocks.
 * Errors: WEFT_EINVAL (NULL f, NULL path on rank 0), WEFT_EIO (rank 0 cannot
 * write path: every rank returns it), WEFT_ESYSTEM (MPI failed),
 * WEFT_ENOMEM. */
WEFT_MPI_API weft_status_t weft_mpi_function_write_trace(const weft_mpi_function_t *f,
                                                         const char *path);

/* Text of the calling thread's last failed weft_mpi_* call ("" if none).
 * Returns borrowed, valid until the thread's next weft_mpi_* call. */
WEFT_MPI_API const char *weft_mpi_last_error(void);

/* ---- collectives (constructors: return the new variable, NULL on error with
 * the error kept on the graph; weft/graph.h "Errors") ---------------------- */

/* The elementwise sum of x over the ranks (x: each rank's own value, so x
 * must be replicated); the result is replicated. dtypes: float32, float64,
 * int32, int64, complex64, complex128 (else WEFT_ETYPE). On one rank (plain
 * weft_function_compile): x. */
#define weft_mpi_allreduce(g, x) weft_mpi_allreduce_at((g), (x), __FILE__, __LINE__)
WEFT_MPI_API weft_var_t *weft_mpi_allreduce_at(weft_graph_t *g, weft_var_t *x, const char *file,
                                               int line);

/* Rank root's x on every rank (replicated result). Any dtype. On one rank: x. */
#define weft_mpi_broadcast(g, x, root) weft_mpi_broadcast_at((g), (x), (root), __FILE__, __LINE__)
WEFT_MPI_API weft_var_t *weft_mpi_broadcast_at(weft_graph_t *g, weft_var_t *x, int root,
                                               const char *file, int line);

/* The n_ranks ranks' x (replicated) stacked along a new axis 0, on rank root:
 * shape [n_ranks, x's shape]. On one rank (n_ranks 1): x with a leading
 * axis of 1. Any dtype. WEFT_EINVAL for n_ranks < 1 or root outside it. */
#define weft_mpi_gather(g, x, root, n_ranks) \
    weft_mpi_gather_at((g), (x), (root), (n_ranks), __FILE__, __LINE__)
WEFT_MPI_API weft_var_t *weft_mpi_gather_at(weft_graph_t *g, weft_var_t *x, int root, int n_ranks,
                                            const char *file, int line);

/* The elementwise sum of x (replicated) over the ranks, on rank root; the
 * result is replicated: the sum on root, zeros on every other rank (so it is
 * broadcast's gradient). dtypes as allreduce. On one rank: x. */
#define weft_mpi_reduce(g, x, root) weft_mpi_reduce_at((g), (x), (root), __FILE__, __LINE__)
WEFT_MPI_API weft_var_t *weft_mpi_reduce_at(weft_graph_t *g, weft_var_t *x, int root,
                                            const char *file, int line);

/* Rank root's x, of shape [n_ranks, ...] (x's leading length, static: else
 * WEFT_ESHAPE), split along axis 0: rank r gets x[r] (replicated result of
 * shape [...]; gather's gradient). Any dtype. On one rank: x[0]. */
#define weft_mpi_scatter(g, x, root) weft_mpi_scatter_at((g), (x), (root), __FILE__, __LINE__)
WEFT_MPI_API weft_var_t *weft_mpi_scatter_at(weft_graph_t *g, weft_var_t *x, int root,
                                             const char *file, int line);

/* Gradients (weft_grad, weft/grad.h) through the collectives take the SPMD
 * view: the cost differentiated is the sum over the ranks of each rank's
 * cost (a cost living on one rank counts once). So allreduce's gradient is
 * the allreduce of its output gradient, broadcast's the reduce to the root,
 * gather's the scatter from the root, reduce's the broadcast and scatter's
 * the gather (docs/distributed.md §5). The collective ops save to and load
 * from the JSON graph format (op "MpiCollective", docs/graph-format.md); the
 * class is registered when libweft_mpi is loaded. */

#ifdef __cplusplus
}
#endif
#endif /* WEFT_MPI_H */
