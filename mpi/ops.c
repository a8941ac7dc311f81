/* The communication ops: the user-level collectives (weft_mpi_allreduce,
 * _broadcast, _gather), which act as on one rank when compiled plainly, and
 * the ops a distributed compile lowers cut edges and collectives into (send,
 * receive, collective start and wait; docs/distributed.md §3). The lowered
 * ops never call MPI: they fill or read buffers and states that the
 * communication thread (comm.c) drives. */
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "mpi_int.h"
#include "weft/kernel.h"
#include "weft/tensor.h"

/* ---- waiting and failing ---------------------------------------------------- */

void wm__rt_kick(wm_rt_t *rt)
{
    pthread_mutex_lock(&rt->comm_mu);
    rt->kicked = true;
    pthread_cond_signal(&rt->comm_cv);
    pthread_mutex_unlock(&rt->comm_mu);
    /* bound to one core (mpirun binds a rank so), the woken communication
     * thread would wait for this busy worker's next timer tick (4 ms here)
     * to run; a yield hands it the core now (docs/distributed.md §3.1) */
    if (rt->yield_on_kick) sched_yield();
}

void wm__rt_fail(wm_rt_t *rt, bool local, weft_status_t st, const char *msg)
{
    pthread_mutex_lock(&rt->mu);
    /* relaxed: fail_* are written under mu, and read under mu or after the
     * call's end (joined thread) */
    if (!atomic_load_explicit(&rt->failed, memory_order_relaxed)) {
        rt->fail_local = local;
        rt->fail_status = st;
        snprintf(rt->fail_msg, sizeof rt->fail_msg, "%s", msg);
        /* release: a waiter's acquire load that sees it also sees fail_msg */
        atomic_store_explicit(&rt->failed, 1, memory_order_release);
    }
    pthread_mutex_unlock(&rt->mu);
}

weft_status_t wm__token_output(weft_kernel_ctx_t *ctx, weft_tensor_t **cell)
{
    weft_status_t st = weft_kernel_alloc_output(ctx, cell, WEFT_INT8, 0, NULL);
    if (st == WEFT_OK) *(int8_t *)weft_tensor_data(*cell) = 1;
    return st;
}

static weft_status_t copy_out(weft_kernel_ctx_t *ctx, weft_tensor_t **cell, const wm_props_t *p,
                              const void *src, size_t bytes)
{
    weft_status_t st = weft_kernel_alloc_output(ctx, cell, (weft_dtype_t)p->dtype, p->ndim,
                                                p->shape);
    if (st == WEFT_OK && bytes) memcpy(weft_tensor_data(*cell), src, bytes);
    return st;
}

/* ---- lowered ops -------------------------------------------------------------- */

int wm__props_print(const void *props, char *buf, size_t cap)
{
    return snprintf(buf, cap, "index=%u", ((const wm_props_t *)props)->index);
}

bool wm__never_fold(const weft_apply_t *node)
{
    (void)node;
    return false;
}

static weft_status_t token_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                     weft_var_t *const *in, size_t *n_out,
                                     const weft_type_t **out)
{
    /* the value, then the ordering token (docs/distributed.md §3.2) */
    if (n_in < 1 || n_in > 2 || !in[0])
        return weft_graph_set_error(g, WEFT_EINVAL, "%s takes 1 or 2 inputs", weft_op_name(op));
    *n_out = 1;
    return weft_type_tensor(g, WEFT_INT8, 0, NULL, &out[0]);
}

weft_status_t wm__typed_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                  weft_var_t *const *in, size_t *n_out, const weft_type_t **out)
{
    (void)in;
    if (n_in > 2) return weft_graph_set_error(g, WEFT_EINVAL, "%s takes at most 2 inputs",
                                              weft_op_name(op));
    const wm_props_t *p = weft_op_props(op);
    *n_out = 1;
    return weft_type_tensor(g, (weft_dtype_t)p->dtype, p->ndim, p->shape, &out[0]);
}

/* A static message whose value the local function computes (direct_ok) and
 * is contiguous goes out from the value's own memory: MPI reads it while the
 * send-wait node (a reader of the value, so nothing destroys or reuses it
 * first) stays parked; a failed call waits for it (comm.c settle_failed).
 * Others are copied. */
static bool send_in_place(wm_msg_t *m, weft_tensor_t *x)
{
    m->zero_copy = m->direct_ok && !m->dynamic && weft_tensor_is_contiguous(x) &&
                   weft_tensor_size(x) * weft_dtype_size(weft_tensor_dtype(x)) == m->bytes;
    m->send_t = m->zero_copy ? weft_tensor_retain(x) : NULL;
    return m->zero_copy;
}

static weft_status_t send_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                  weft_tensor_t **out, weft_kernel_ctx_t *ctx)
{
    const wm_props_t *p = weft_op_props(weft_apply_op(node));
    wm_msg_t *m = &p->rt->msgs[p->index];
    weft_status_t st = m->dynamic           ? wm__send_dynamic(m, in[0], ctx)
                       : send_in_place(m, in[0]) ? WEFT_OK
                                                 : weft_tensor_copy(m->buf_t, in[0]);
    if (st != WEFT_OK) return m->dynamic ? st : weft_kernel_error(ctx, st, "send %u: %s", p->index,
                                                                  weft_tensor_last_error());
    /* release: the copy above happens-before the comm thread's Isend */
    atomic_store_explicit(&m->state, WM_QUEUED, memory_order_release);
    wm__rt_kick(p->rt);
    return wm__token_output(ctx, &out[0]);
}

/* Receives and collective waits never hold their worker (docs/distributed.md
 * §3.1): when the data has not come they allocate their output and park
 * (collective waits; a receive's output is its buffer, recv_perform). */
static weft_status_t take(wm_rt_t *rt, _Atomic int *state, wm_park_t *pk, weft_kernel_ctx_t *ctx,
                          weft_tensor_t **cell, const wm_props_t *p, const void *src,
                          size_t bytes)
{
    /* acquire: pairs with the comm thread's release of WM_DONE (the bytes) */
    if (atomic_load_explicit(state, memory_order_acquire) == WM_DONE)
        return copy_out(ctx, cell, p, src, bytes);
    weft_status_t st = copy_out(ctx, cell, p, NULL, 0);
    return st != WEFT_OK ? st : wm__park(rt, pk, ctx, weft_tensor_data(*cell), src, bytes);
}

/* The output is the message's buffer itself, which MPI receives into: no
 * copy. Only this call's nodes see it (a buffer that leaves the call as an
 * output is replaced before the next, wm__unshare_recv_buffers), and the
 * next call's receive lands in it only after they all ran. */
static weft_status_t recv_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                  weft_tensor_t **out, weft_kernel_ctx_t *ctx)
{
    (void)in;
    const wm_props_t *p = weft_op_props(weft_apply_op(node));
    wm_msg_t *m = &p->rt->msgs[p->index];
    weft_kernel_set_output(ctx, &out[0], weft_tensor_retain(m->buf_t));
    return wm__park_unless_done(p->rt, m, ctx);
}

static weft_status_t cstart_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                    weft_tensor_t **out, weft_kernel_ctx_t *ctx)
{
    const wm_props_t *p = weft_op_props(weft_apply_op(node));
    wm_coll_t *c = &p->rt->colls[p->index];
    weft_status_t st = weft_tensor_copy(c->sbuf_t, in[0]);
    if (st != WEFT_OK) return weft_kernel_error(ctx, st, "collective %u: %s", p->index,
                                                weft_tensor_last_error());
    /* release: the copy happens-before the comm thread starts the collective */
    atomic_store_explicit(&c->state, WM_QUEUED, memory_order_release);
    wm__rt_kick(p->rt);
    return wm__token_output(ctx, &out[0]);
}

static weft_status_t cwait_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                   weft_tensor_t **out, weft_kernel_ctx_t *ctx)
{
    (void)in;
    const wm_props_t *p = weft_op_props(weft_apply_op(node));
    wm_coll_t *c = &p->rt->colls[p->index];
    return take(p->rt, &c->state, &c->park, ctx, &out[0], p, c->rbuf, c->rbytes);
}

/* The send's weight in its rank's critical-path order (priority.c). */
static double send_cost_ns(const weft_apply_t *node)
{
    const wm_props_t *p = weft_op_props(weft_apply_op(node));
    return p->rt->msgs[p->index].tail_ns;
}

WM_CLASS_COST(wm__send_class, "MpiSend", token_make_node, send_perform, send_cost_ns);
WM_CLASS(wm__recv_class, "MpiRecv", wm__typed_make_node, recv_perform);

/* The chain's token after a send (local.c): both inputs are done. */
static weft_status_t join_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                  weft_tensor_t **out, weft_kernel_ctx_t *ctx)
{
    (void)node;
    (void)in;
    return wm__token_output(ctx, &out[0]);
}

WM_CLASS(wm__join_class, "MpiJoin", token_make_node, join_perform);

/* Inputs: the value and the send's token (so it runs after the send node). */
static weft_status_t swait_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                   weft_tensor_t **out, weft_kernel_ctx_t *ctx)
{
    (void)in;
    const wm_props_t *p = weft_op_props(weft_apply_op(node));
    wm_msg_t *m = &p->rt->msgs[p->index];
    weft_status_t st = wm__token_output(ctx, &out[0]);
    /* zero_copy was written by the send node, a predecessor */
    return st != WEFT_OK || !m->zero_copy ? st : wm__park_unless_done(p->rt, m, ctx);
}

WM_CLASS(wm__swait_class, "MpiSendWait", token_make_node, swait_perform);

/* The start's weight in its rank's critical-path order (priority.c). */
static double cstart_cost_ns(const weft_apply_t *node)
{
    const wm_props_t *p = weft_op_props(weft_apply_op(node));
    return p->rt->colls[p->index].tail_ns;
}

WM_CLASS_COST(wm__cstart_class, "MpiCollectiveStart", token_make_node, cstart_perform,
              cstart_cost_ns);
WM_CLASS(wm__cwait_class, "MpiCollectiveWait", wm__typed_make_node, cwait_perform);

/* ---- user-level collectives --------------------------------------------------------- */

const char *const wm__coll_names[5] = {"MpiAllreduce", "MpiBroadcast", "MpiGather",
                                       "MpiReduce", "MpiScatter"};

static int coll_print(const void *props, char *buf, size_t cap)
{
    const wm_coll_props_t *p = props;
    if (p->kind == WM_ALLREDUCE) return snprintf(buf, cap, "sum");
    if (p->kind == WM_BCAST) return snprintf(buf, cap, "root=%d", p->root);
    if (p->kind == WM_REDUCE) return snprintf(buf, cap, "sum, root=%d", p->root);
    return snprintf(buf, cap, "%s, root=%d, ranks=%d", p->kind == WM_GATHER ? "gather" : "scatter",
                    p->root, p->n_ranks);
}

static bool reducible(weft_dtype_t dt)
{
    return dt == WEFT_FLOAT32 || dt == WEFT_FLOAT64 || dt == WEFT_INT32 || dt == WEFT_INT64 ||
           dt == WEFT_COMPLEX64 || dt == WEFT_COMPLEX128;
}

/* Scatter: x [n_ranks, ...] on the root, each rank its slice [...]. */
static weft_status_t scatter_type(weft_graph_t *g, const wm_coll_props_t *p, const weft_type_t *t,
                                  const weft_type_t **out)
{
    int nd = weft_type_ndim(t);
    if (p->n_ranks < 1) /* wm__coll_call found no static leading length */
        return weft_graph_set_error(g, WEFT_ESHAPE, "MpiScatter: the input needs a static "
                                    "leading axis (one entry per rank)");
    int64_t shape[WEFT_MAX_NDIM];
    for (int i = 1; i < nd; i++) shape[i - 1] = weft_type_dim(t, i);
    return weft_type_tensor(g, weft_type_dtype(t), nd - 1, shape, &out[0]);
}

static weft_status_t coll_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                    weft_var_t *const *in, size_t *n_out,
                                    const weft_type_t **out)
{
    const wm_coll_props_t *p = weft_op_props(op);
    if (n_in != 1) return weft_graph_set_error(g, WEFT_EINVAL, "%s takes 1 input",
                                               weft_op_name(op));
    bool rooted = p->kind == WM_GATHER || p->kind == WM_SCATTER;
    if (p->root < 0 || (rooted && p->n_ranks >= 1 && p->root >= p->n_ranks))
        return weft_graph_set_error(g, WEFT_EINVAL, "%s: root %d outside %d ranks",
                                    wm__coll_names[p->kind], p->root, p->n_ranks);
    if (p->kind == WM_GATHER && p->n_ranks < 1)
        return weft_graph_set_error(g, WEFT_EINVAL, "MpiGather: %d ranks", p->n_ranks);
    const weft_type_t *t = weft_var_type(in[0]);
    if (weft_type_kind(t) != WEFT_TYPE_TENSOR)
        return weft_graph_set_error(g, WEFT_ETYPE, "%s: input is not a tensor", weft_op_name(op));
    weft_dtype_t dt = weft_type_dtype(t);
    if ((p->kind == WM_ALLREDUCE || p->kind == WM_REDUCE) && !reducible(dt))
        return weft_graph_set_error(g, WEFT_ETYPE, "%s: dtype %s cannot be summed over MPI "
                                    "(float32/64, int32/64, complex64/128)",
                                    wm__coll_names[p->kind], weft_dtype_name(dt));
    *n_out = 1;
    if (p->kind == WM_SCATTER) return scatter_type(g, p, t, out);
    if (p->kind != WM_GATHER) {
        out[0] = t;
        return WEFT_OK;
    }
    int nd = weft_type_ndim(t);
    if (nd >= WEFT_MAX_NDIM)
        return weft_graph_set_error(g, WEFT_EINVAL, "MpiGather: input has %d axes", nd);
    int64_t shape[WEFT_MAX_NDIM];
    shape[0] = p->n_ranks;
    for (int i = 0; i < nd; i++) shape[i + 1] = weft_type_dim(t, i);
    return weft_type_tensor(g, dt, nd + 1, shape, &out[0]);
}

/* On one rank: allreduce, broadcast and reduce copy x; gather adds a
 * leading axis of 1, scatter drops it. */
static weft_status_t coll_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                  weft_tensor_t **out, weft_kernel_ctx_t *ctx)
{
    const wm_coll_props_t *p = weft_op_props(weft_apply_op(node));
    if (p->n_ranks != 1)
        return weft_kernel_error(ctx, WEFT_ENOTIMPL, "%s over %d ranks runs only in a function "
                                 "compiled by weft_mpi_function_compile",
                                 wm__coll_names[p->kind], p->n_ranks);
    const weft_type_t *ot = weft_var_type(weft_apply_output(node, 0));
    int on = weft_type_ndim(ot);
    int64_t shape[WEFT_MAX_NDIM];
    const int64_t *xs = weft_tensor_shape(in[0]);
    for (int i = 0; i < on; i++)
        shape[i] = p->kind == WM_GATHER    ? (i ? xs[i - 1] : 1)
                   : p->kind == WM_SCATTER ? xs[i + 1]
                                           : xs[i];
    weft_status_t st = weft_kernel_alloc_output(ctx, &out[0], weft_tensor_dtype(in[0]), on, shape);
    if (st != WEFT_OK) return st;
    weft_tensor_t *view = NULL;
    st = weft_tensor_reshape(out[0], weft_tensor_ndim(in[0]), xs, &view);
    if (st == WEFT_OK) st = weft_tensor_copy(view, in[0]);
    weft_tensor_release(view);
    return st == WEFT_OK ? st : weft_kernel_error(ctx, st, "%s", weft_tensor_last_error());
}

static const weft_op_class_t coll_class = {.size = sizeof(weft_op_class_t),
                                           .name = "MpiCollective",
                                           .props_size = sizeof(wm_coll_props_t),
                                           .props_print = coll_print,
                                           .make_node = coll_make_node,
                                           .perform = coll_perform,
                                           .do_constant_folding = wm__never_fold,
                                           .grad = wm__coll_grad,
                                           .props_to_json = wm__coll_to_json,
                                           .props_from_json = wm__coll_from_json};

/* In the registry before main runs (libweft's own classes are, and this
 * library's constructor runs after libweft's), so a saved graph with
 * collectives loads (weft/graph_io.h). Registering cannot fail but for
 * memory; the loader then reports the unknown op by name. */
__attribute__((constructor)) static void register_coll_class(void)
{
    (void)weft_op_class_register(&coll_class);
}

/* A scatter's rank count: its input's leading length (0 when it has none or
 * it is not static: refused). */
static int scatter_ranks(const weft_var_t *x)
{
    const weft_type_t *t = weft_var_type(x);
    if (weft_type_kind(t) != WEFT_TYPE_TENSOR || weft_type_ndim(t) < 1) return 0;
    int64_t n = weft_type_dim(t, 0);
    return n > 0 && n <= INT32_MAX ? (int)n : 0;
}

int wm__coll_kind(const weft_op_t *op, int *root)
{
    if (weft_op_class(op) != &coll_class) return -1;
    const wm_coll_props_t *p = weft_op_props(op);
    *root = p->root;
    return p->kind;
}

weft_var_t *wm__coll_call(weft_graph_t *g, weft_var_t *x, wm_coll_props_t p, const char *file,
                          int line)
{
    /* the checks are make_node's, so that weft_op_call_at keeps the error
     * with this site (weft/graph.h "Errors"); a NULL x is its to report */
    if (p.kind == WM_SCATTER && x) p.n_ranks = scatter_ranks(x);
    const weft_op_t *op;
    if (weft_op_create(g, &coll_class, &p, &op) != WEFT_OK) return NULL;
    return weft_op_call_at(g, op, 1, &x, file, line);
}

weft_var_t *weft_mpi_allreduce_at(weft_graph_t *g, weft_var_t *x, const char *file, int line)
{
    wm_coll_props_t p = {WM_ALLREDUCE, 0, 1};
    return wm__coll_call(g, x, p, file, line);
}

weft_var_t *weft_mpi_broadcast_at(weft_graph_t *g, weft_var_t *x, int root, const char *file,
                                  int line)
{
    /* the rank count does not change the type: root's upper bound is
     * checked by the distributed compile */
    wm_coll_props_t p = {WM_BCAST, root, 1};
    return wm__coll_call(g, x, p, file, line);
}

weft_var_t *weft_mpi_gather_at(weft_graph_t *g, weft_var_t *x, int root, int n_ranks,
                               const char *file, int line)
{
    wm_coll_props_t p = {WM_GATHER, root, n_ranks};
    return wm__coll_call(g, x, p, file, line);
}

weft_var_t *weft_mpi_reduce_at(weft_graph_t *g, weft_var_t *x, int root, const char *file,
                               int line)
{
    wm_coll_props_t p = {WM_REDUCE, root, 1};
    return wm__coll_call(g, x, p, file, line);
}

weft_var_t *weft_mpi_scatter_at(weft_graph_t *g, weft_var_t *x, int root, const char *file,
                                int line)
{
    wm_coll_props_t p = {WM_SCATTER, root, 0}; /* n_ranks: x's leading length */
    return wm__coll_call(g, x, p, file, line);
}
