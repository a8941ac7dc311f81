/* libweft_mpi internals: the partition of a graph over ranks, the messages and
 * collectives it implies, and the runtime the communication nodes share with
 * the communication thread (docs/distributed.md). */
#ifndef WEFT_MPI_INT_H
#define WEFT_MPI_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "weft/kernel.h"
#include "weft/mpi.h"
#include "weft/op.h"
#include "weft/type.h"

/* Node placement, as weft_mpi_owner_fn's values. */
#define WM_NOT_IN_F (-3)

/* States of a message or collective within one call. Written by a node
 * (worker thread) or by the communication thread, read by the other. */
enum {
    WM_IDLE = 0,    /* nothing yet this call */
    WM_QUEUED = 1,  /* send / collective start node ran: data in the buffer */
    WM_POSTED = 2,  /* the MPI request is active */
    WM_DONE = 3     /* the MPI request completed */
};

/* A receive or collective-wait node that found its data missing deferred
 * itself (weft_kernel_defer) and parked here; the comm thread copies `bytes`
 * from `src` into `out` and completes `node` (park.c). flag: 0 nothing,
 * 1 parked, 2 the data came (the node copies itself if it parks late),
 * 3 failed by the comm thread. out, src, bytes and node are written by the
 * node before its release CAS 0 -> 1 and read by the comm thread after its
 * acquire of 1. */
typedef struct wm_park {
    _Atomic int flag;
    void *out;
    const void *src;
    size_t bytes;
    weft_dag_deferred_t node;
} wm_park_t;

enum { WM_ALLREDUCE = 0, WM_BCAST = 1, WM_GATHER = 2, WM_REDUCE = 3, WM_SCATTER = 4 };

/* Does this rank contribute to a collective of kind (run its start node), and
 * does it get a result (run its wait node)? A rank that gets a result
 * without contributing posts the collective at the call's start. */
static inline bool wm__coll_gives(int kind, int root, int rank)
{
    return (kind != WM_BCAST && kind != WM_SCATTER) || rank == root;
}

static inline bool wm__coll_gets(int kind, int root, int rank)
{
    return kind != WM_GATHER || rank == root;
}

/* A message of a value whose shape is not static (docs/distributed.md §3.4)
 * is one MPI message: this header (the shape), then the elements. */
#define WM_DYN_HEADER ((sizeof(int64_t) * WEFT_MAX_NDIM + 63) / 64 * 64)

/* One message: value var_pos (index into the partition's variables) from
 * rank src to rank dst; sent once per call. */
typedef struct wm_msg {
    int src, dst;
    uint32_t var_pos;
    /* the message's bytes: fixed, or for a dynamic message this call's
     * (written by the send node before its release of WM_QUEUED, or by the
     * communication thread when it matched the receive) */
    size_t bytes;
    bool dynamic;  /* the value's shape is not static: a header, then the elements */
    double tail_ns; /* the send node's cost: the work the message feeds (priority.c) */
    bool matched;  /* dynamic receive: probed and its MPI_Irecv posted (comm thread) */
    weft_dtype_t dtype;
    int ndim;
    int64_t shape[WEFT_MAX_NDIM];
    char name[160];      /* the value, for messages: "variable 'x' (built at f.c:3)" */
    weft_tensor_t *buf_t; /* the message buffer (this rank is src or dst), owned */
    void *buf;            /* its data */
    /* A send straight from the value's memory (ops.c): the send node sets
     * them before its release of WM_QUEUED; send_t is the value, retained
     * until the request completes (comm thread) or an orphan holds it. */
    bool zero_copy;
    weft_tensor_t *send_t;
    /* the value is computed by the local function (not a caller's input or
     * a shared variable, whose memory the caller may free after a failed
     * call): it may be sent in place (local.c) */
    bool direct_ok;
    /* release: the send node's copy into buf happens-before the comm thread's
     * acquire load that sees WM_QUEUED; acquire on the receive node's side
     * pairs with the comm thread's release store of WM_DONE */
    _Atomic int state;
    wm_park_t park; /* its receive node, when parked */
    /* profile (the communication thread's alone): CLOCK_MONOTONIC ns of the
     * last call's post (Irecv / Isend) and completion; totals over calls */
    uint64_t t_post, t_done;
    uint64_t wait_ns, completions;
} wm_msg_t;

/* One collective node: its own duplicated communicator, so the ranks may
 * start their collectives in any order. */
typedef struct wm_coll {
    int kind, root;
    MPI_Comm comm;
    MPI_Datatype mtype; /* element type (MPI_BYTE for broadcast / gather) */
    size_t count;       /* elements of mtype in x */
    size_t bytes;       /* bytes of x */
    size_t rbytes;      /* bytes of the result */
    weft_dtype_t dtype;
    int ndim;           /* the result's */
    int64_t shape[WEFT_MAX_NDIM];
    weft_tensor_t *sbuf_t, *rbuf_t; /* owned; the same tensor for a broadcast */
    void *sbuf, *rbuf;              /* their data */
    MPI_Request req;
    _Atomic int state; /* as wm_msg_t.state */
    wm_park_t park;    /* its wait node, when parked */
    double tail_ns;    /* the start node's cost: the work the result feeds (priority.c) */
} wm_coll_t;

/* The runtime shared by this rank's communication nodes and its
 * communication thread. */
typedef struct wm_rt {
    int rank, size;
    wm_msg_t *msgs;
    size_t n_msgs;
    size_t n_dyn_recv; /* dynamic messages this rank receives: 0 skips their probe round */
    wm_coll_t *colls;
    size_t n_colls;
    /* guards the first failure's fields below */
    pthread_mutex_t mu;
    /* the call failed on this rank (a node, an abort from a peer, a timeout):
     * release/acquire so the thread that sees it also sees fail_msg */
    _Atomic int failed;
    /* nodes parked now (for the timeout: a wait, not a long node, is what a
     * silent peer causes) */
    _Atomic int waiting;
    /* the communication thread, idle while no node waits, sleeps on comm_cv;
     * send and collective-start nodes signal it */
    pthread_mutex_t comm_mu;
    pthread_cond_t comm_cv;
    bool kicked; /* under comm_mu: a kick since the last sleep */
    bool yield_on_kick; /* the process is bound to one core (ops.c wm__rt_kick) */
    /* first failure of the call on this rank: written once, under mu */
    bool fail_local;        /* a node of this rank failed first */
    weft_status_t fail_status;
    char fail_msg[1024];
} wm_rt_t;

/* Props of the lowered communication ops: which message / collective, and
 * the value's type (receive and wait outputs). */
typedef struct wm_props {
    wm_rt_t *rt;
    uint32_t index;
    int32_t dtype;
    int32_t ndim;
    int32_t pad;
    int64_t shape[WEFT_MAX_NDIM];
} wm_props_t;

/* The user-level collective ops' props (weft_mpi_allreduce...). */
typedef struct wm_coll_props {
    int32_t kind;
    int32_t root;
    int32_t n_ranks;
} wm_coll_props_t;

/* A receive buffer's address range (local.c wm__unshare_recv_buffers). */
typedef struct wm_bufref {
    uintptr_t lo, hi;
    uint32_t msg;
} wm_bufref_t;

/* The partition of one graph (partition.c): what every rank computes alike. */
typedef struct wm_part {
    size_t n_vars;
    weft_var_t **vars;     /* every variable reached, roots first then apply outputs in apply order */
    int *owner;            /* per var: rank or WEFT_MPI_REPLICATED */
    size_t n_applies;
    weft_apply_t **applies; /* reached applies in creation (topological) order */
    int *node_rank;         /* per apply: rank or WEFT_MPI_REPLICATED */
    uint8_t *on_demand;     /* per apply: a view computed on each rank that reads it
                               (docs/distributed.md §2, item 3) rather than on node_rank */
    uint8_t *runs;          /* [j * n_ranks + r]: on-demand apply j runs on rank r */
    wm_msg_t *msgs;
    size_t n_msgs;
    int n_ranks;
    size_t n_upd;
    size_t n_colls;    /* collective applies */
    double *coll_tail; /* per collective, in creation order: its tail_ns (priority.c) */
    weft_update_t *upd; /* the caller's updates (a copy) */
} wm_part_t;

/* After a call: a receive buffer that an output of the local function (a
 * user output or an update) now holds is left to it, and the message gets a
 * fresh one, so the next call's receive cannot overwrite a result the
 * caller keeps (local.c). Errors: WEFT_ENOMEM. */
struct weft_mpi_function;
weft_status_t wm__unshare_recv_buffers(struct weft_mpi_function *f);

/* Each message's tail_ns, and the collectives' count and tails (p->n_colls,
 * p->coll_tail), from the partition (priority.c). Errors: WEFT_ENOMEM. */
weft_status_t wm__message_tails(wm_part_t *p);

/* A request MPI still owns after a failed call (its message never matched
 * or its peer gave up): kept, with its buffer, until it completes or f is
 * destroyed. */
/* What a rank tells the others about a failure (abort message, outcome). */
typedef struct wm_abort_msg {
    int32_t rank;
    int32_t status;
    char text[1024];
} wm_abort_msg_t;

/* The end-of-call agreement's buffers: on the heap, since after a timeout
 * MPI may still write them (then they are never freed). */
typedef struct wm_agree {
    int mine, origin;
    wm_abort_msg_t am;
    wm_abort_msg_t in, out; /* the call's abort receive and sends */
    MPI_Request req;
    struct wm_agree *next; /* in the list of kept blocks (function.c) */
} wm_agree_t;

typedef struct wm_orphan {
    MPI_Request req;
    weft_tensor_t *buf;
    bool is_recv;
    /* a dynamic message a failed call never matched: no request yet; later
     * calls probe for it (src, tag on the data communicator) and drop it */
    bool probe;
    int src, tag;
} wm_orphan_t;

struct weft_mpi_function {
    MPI_Comm data, ctl; /* duplicates of the caller's communicator */
    int rank, size;
    int tag_ub;
    double timeout_s;
    wm_part_t part;
    wm_rt_t rt;
    weft_function_t *local; /* NULL when this rank has nothing to run */
    size_t n_in, n_out;     /* the caller's */
    int *in_local, *out_local; /* caller index -> local index, or -1 */
    size_t n_lin, n_lout, n_keep; /* local inputs; local user outputs; keep-alive tokens */
    int *upd_local;   /* per update: its value's local output, or -1 (not held here) */
    int *upd_input;   /* per update: the caller's input index of its variable, or -1 */
    weft_tensor_t **lin, **lout;  /* per-call argument arrays (lout: n_lout + n_keep) */
    weft_tensor_t **keep;         /* the tokens' caller-supplied tensors */
    MPI_Request *reqs; /* n_msgs + n_colls + 1 (the abort receive) */
    int *done_idx;
    wm_bufref_t *bufrefs; /* n_msgs: scratch of wm__unshare_recv_buffers */
    wm_orphan_t *orphans;
    size_t n_orphans, cap_orphans;
    uint64_t calls;
    uint64_t t_local0; /* last call: the local call's start (helper thread), ns */
    wm_agree_t *agree;
    bool broken; /* a peer timed out: the communicators' state is unknown */
    bool busy;
};

/* The data tag of message m in the call whose first tag is tag_base
 * (docs/distributed.md §3.3). */
static inline int wm__data_tag(int tag_ub, uint64_t tag_base, size_t m)
{
    return (int)((tag_base + m) % (uint64_t)tag_ub);
}

/* ---- errors (function.c) ---- */
weft_status_t wm__error(weft_status_t st, const char *fmt, ...) WEFT_PRINTF(2, 3);

/* ---- ops (ops.c) ---- */
extern const weft_op_class_t wm__send_class, wm__recv_class, wm__cstart_class, wm__cwait_class;
/* Joins the ordering chain's token and a send's (local.c, docs/distributed.md §3.2). */
extern const weft_op_class_t wm__join_class;
/* After a send straight from its value's memory: parked until the request
 * completes, a reader of the value until then (ops.c, docs/distributed.md §3.1). */
extern const weft_op_class_t wm__swait_class;
/* Shared by the lowered ops' classes (ops.c): their props print as
 * "index=I", they never fold, a token output is an int8 scalar, and a
 * typed node's output type comes from its props. */
int wm__props_print(const void *props, char *buf, size_t cap);
bool wm__never_fold(const weft_apply_t *node);
weft_status_t wm__token_output(weft_kernel_ctx_t *ctx, weft_tensor_t **cell);
weft_status_t wm__typed_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                  weft_var_t *const *in, size_t *n_out, const weft_type_t **out);
#define WM_CLASS_COST(var, nm, mk, perf, cost)                                          \
    const weft_op_class_t var = {.size = sizeof(weft_op_class_t),                        \
                                 .name = nm,                                             \
                                 .props_size = sizeof(wm_props_t),                       \
                                 .props_print = wm__props_print,                         \
                                 .make_node = mk,                                        \
                                 .perform = perf,                                        \
                                 .do_constant_folding = wm__never_fold,                  \
                                 .cost_ns = cost}
#define WM_CLASS(var, nm, mk, perf) WM_CLASS_COST(var, nm, mk, perf, NULL)
/* A dynamic message's receive: the wait (a token, parked until the message
 * is in) and the take (the value, of the shape in the header). dynmsg.c */
extern const weft_op_class_t wm__rwait_class, wm__rtake_class;
/* Send node of a dynamic message: the header and the elements into a buffer
 * of this call's size. dynmsg.c */
weft_status_t wm__send_dynamic(wm_msg_t *m, const weft_tensor_t *x, weft_kernel_ctx_t *ctx);
/* Comm thread: probes the dynamic receives not matched yet and posts an
 * MPI_Irecv into a buffer of the size found. Returns how many it matched;
 * *rc an MPI error. */
int wm__probe_dynamic(weft_mpi_function_t *f, uint64_t tag_base, int *rc);
/* After a failed call: the dynamic receives never matched become probe
 * orphans (so a late message is drained, not left to match a later call). */
weft_status_t wm__orphan_unmatched(weft_mpi_function_t *f, uint64_t tag_base);
/* Later calls: drains probe orphans whose message came. */
void wm__drain_probe(weft_mpi_function_t *f, wm_orphan_t *o);
/* The user-level collective class of op, or -1 when op is none. */
int wm__coll_kind(const weft_op_t *op, int *root);
/* A user-level collective of props p on x (ops.c); NULL with the error on g. */
weft_var_t *wm__coll_call(weft_graph_t *g, weft_var_t *x, wm_coll_props_t p, const char *file,
                          int line);
extern const char *const wm__coll_names[5];
/* The collectives' gradients and JSON codec (coll_io.c). */
weft_status_t wm__coll_grad(weft_graph_t *g, const weft_apply_t *node,
                            weft_var_t *const *output_grads, weft_var_t **input_grads);
weft_status_t wm__coll_to_json(const weft_op_t *op, weft_json_props_t *out);
weft_status_t wm__coll_from_json(weft_graph_t *g, const weft_op_class_t *cls,
                                 const weft_json_props_t *in, const weft_op_t **out);
/* Wakes the communication thread (a send or start was queued). */
void wm__rt_kick(wm_rt_t *rt);
/* ---- parked nodes (park.c) ---- */
/* Node side, its data not there yet: defers the node and parks it, or, when
 * the data came meanwhile, copies it and completes the node at once. */
weft_status_t wm__park(wm_rt_t *rt, wm_park_t *pk, weft_kernel_ctx_t *ctx, void *out,
                       const void *src, size_t bytes);
/* Node side, nothing to copy (a receive into its output, a wait): returns
 * when message m's request completed, else parks the node on it. */
weft_status_t wm__park_unless_done(wm_rt_t *rt, wm_msg_t *m, weft_kernel_ctx_t *ctx);
/* Comm thread: the request of *state completed (its data is in place). */
void wm__arrived(wm_rt_t *rt, _Atomic int *state, wm_park_t *pk);
/* Comm thread, after a failure: fails every parked node. */
void wm__fail_parked(wm_rt_t *rt);
void wm__rt_fail(wm_rt_t *rt, bool local, weft_status_t st, const char *msg);

/* ---- partition (partition.c, metis.c) ---- */
weft_status_t wm__partition(size_t n_in, weft_var_t *const *inputs, size_t n_out,
                            weft_var_t *const *outputs, size_t n_upd, const weft_update_t *upd,
                            const weft_mpi_options_t *o, int n_ranks, wm_part_t *p);
/* Does rank r hold update k's variable (shared: every rank; an input: its
 * owner, or every rank when replicated)? */
bool wm__holds_update(const wm_part_t *p, size_t k, int r);
/* Does apply j (index in p->applies) run on rank r: its placement, or,
 * for an on-demand view, where it is read (partition.c). */
bool wm__runs_on(const wm_part_t *p, size_t j, int r);
void wm__part_free(wm_part_t *p);
size_t wm__var_pos(const wm_part_t *p, const weft_var_t *v); /* n_vars if absent */
/* v's index among inputs[0..n_in), or -1. */
int wm__input_index(size_t n_in, weft_var_t *const *inputs, const weft_var_t *v);
/* The elements of a tensor type (a length unknown statically counts as 1). */
double wm__type_elements(const weft_type_t *t);
/* ---- the local function (local.c) and a call's communication (comm.c) ---- */
weft_status_t wm__build_local(weft_mpi_function_t *f, size_t n_in, weft_var_t *const *inputs,
                              size_t n_out, weft_var_t *const *outputs,
                              const weft_mpi_options_t *o);
/* After a call the ranks agreed on: the updates this rank holds become the
 * new values (update.c); every update slot is emptied either way. */
weft_status_t wm__commit_updates(weft_mpi_function_t *f, weft_tensor_t *const *inputs, bool ok);
void wm__free_runtime(weft_mpi_function_t *f);
weft_status_t wm__call(weft_mpi_function_t *f, char *msg, size_t cap);
void wm__drain_orphans(weft_mpi_function_t *f, bool final);
/* Keeps o (its buffer retained) until its request completes or f is
 * destroyed. Errors: WEFT_ENOMEM. */
weft_status_t wm__orphan(weft_mpi_function_t *f, wm_orphan_t o);
/* At destroy: requests still active (after a timeout) are cancelled
 * (receives) or left to MPI with their buffers (sends, collectives). */
void wm__abandon(weft_mpi_function_t *f);
/* Keeps a reference to t until the process exits (function.c). */
void wm__keep_buffer(weft_tensor_t *t);
/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t wm__now_ns(void);
/* The local call's failure hook (weft_call_options_t.on_node_failure). */
void wm__on_node_failure(void *user, weft_status_t st, const char *msg);

weft_status_t wm__metis(const wm_part_t *p, const weft_mpi_options_t *o, const bool *fixed,
                        int *node_rank);

#endif /* WEFT_MPI_INT_H */
