/* Messages of values whose shape is not static (docs/distributed.md §3.4).
 * The sender writes one MPI message: a header with the shape, then the
 * elements, into a buffer of this call's size. The receiver does not know
 * the size, so its communication thread, instead of posting MPI_Irecv at the
 * call's start, probes for the message (MPI_Iprobe on the message's source
 * and tag), reads its size (MPI_Get_count) and posts MPI_Irecv into a buffer
 * of that size, completed like any receive. A plain probe is enough (no
 * matched probe, MPI_Improbe): only this thread receives on the function's
 * communicator, and the tag is the message's own, so nothing can take the
 * message between the probe and the receive. On the receiving rank
 * the value is two nodes: a wait that parks (never holding its worker) until
 * the message is in, and a take that allocates the value of the header's
 * shape and copies the elements. */
#include <stdio.h>
#include <string.h>

#include "mpi_int.h"
#include "weft/kernel.h"
#include "weft/tensor.h"

/* m's buffer, of `bytes`: kept when it already has that size and nobody
 * else (an orphaned request of a failed call) holds it. */
static weft_status_t ensure_buffer(wm_msg_t *m, size_t bytes)
{
    if (m->buf_t && weft_tensor_size(m->buf_t) == bytes && weft_tensor_is_exclusive(m->buf_t))
        return WEFT_OK;
    weft_tensor_t *t = NULL;
    int64_t n = (int64_t)bytes;
    weft_status_t st = weft_tensor_empty(WEFT_UINT8, 1, &n, &t);
    if (st != WEFT_OK) return st;
    weft_tensor_release(m->buf_t);
    m->buf_t = t;
    m->buf = weft_tensor_data(t);
    return WEFT_OK;
}

weft_status_t wm__send_dynamic(wm_msg_t *m, const weft_tensor_t *x, weft_kernel_ctx_t *ctx)
{
    int nd = weft_tensor_ndim(x);
    size_t bytes = WM_DYN_HEADER + weft_tensor_size(x) * weft_dtype_size(weft_tensor_dtype(x));
    weft_status_t st = ensure_buffer(m, bytes);
    weft_tensor_t *body = NULL;
    if (st == WEFT_OK) {
        memset(m->buf, 0, WM_DYN_HEADER);
        memcpy(m->buf, weft_tensor_shape(x), (size_t)nd * sizeof(int64_t));
        st = weft_tensor_from_data(weft_tensor_dtype(x), nd, weft_tensor_shape(x), NULL,
                                   (char *)m->buf + WM_DYN_HEADER, &body);
    }
    if (st == WEFT_OK) st = weft_tensor_copy(body, x);
    weft_tensor_release(body);
    if (st != WEFT_OK)
        return weft_kernel_error(ctx, st, "sending %s: %s", m->name, weft_tensor_last_error());
    m->bytes = bytes; /* read by the comm thread after the node's release of WM_QUEUED */
    return WEFT_OK;
}

int wm__probe_dynamic(weft_mpi_function_t *f, uint64_t tag_base, int *rc)
{
    int n = 0;
    if (f->rt.n_dyn_recv == 0) return 0; /* the usual case: every round of the call */
    for (size_t k = 0; k < f->rt.n_msgs && *rc == MPI_SUCCESS; k++) {
        wm_msg_t *m = &f->rt.msgs[k];
        if (!m->dynamic || m->dst != f->rank || m->matched) continue;
        int flag = 0, count = 0, tag = wm__data_tag(f->tag_ub, tag_base, k);
        MPI_Status s;
        *rc = MPI_Iprobe(m->src, tag, f->data, &flag, &s);
        if (*rc == MPI_SUCCESS && flag) *rc = MPI_Get_count(&s, MPI_BYTE, &count);
        if (*rc != MPI_SUCCESS || !flag) continue;
        if (ensure_buffer(m, count > 0 ? (size_t)count : 1) != WEFT_OK) {
            /* left unreceived: the failed call orphans it (drained later) */
            char text[320];
            snprintf(text, sizeof text, "receiving %s: no memory for %d bytes", m->name, count);
            wm__rt_fail(&f->rt, true, WEFT_ENOMEM, text);
            continue;
        }
        m->bytes = (size_t)count;
        m->matched = true;
        *rc = MPI_Irecv(m->buf, count, MPI_BYTE, m->src, tag, f->data, &f->reqs[k]);
        n++;
    }
    return n;
}

weft_status_t wm__orphan_unmatched(weft_mpi_function_t *f, uint64_t tag_base)
{
    for (size_t k = 0; k < f->rt.n_msgs; k++) {
        wm_msg_t *m = &f->rt.msgs[k];
        if (!m->dynamic || m->dst != f->rank || m->matched) continue;
        wm_orphan_t o = {MPI_REQUEST_NULL, NULL, true, true, m->src,
                         wm__data_tag(f->tag_ub, tag_base, k)};
        weft_status_t st = wm__orphan(f, o);
        if (st != WEFT_OK) return st;
        m->matched = true; /* handed over */
    }
    return WEFT_OK;
}

void wm__drain_probe(weft_mpi_function_t *f, wm_orphan_t *o)
{
    int flag = 0, count = 0;
    MPI_Status s;
    if (MPI_Iprobe(o->src, o->tag, f->data, &flag, &s) != MPI_SUCCESS || !flag) return;
    MPI_Get_count(&s, MPI_BYTE, &count);
    int64_t n = count > 0 ? count : 1;
    weft_tensor_t *t = NULL;
    if (weft_tensor_empty(WEFT_UINT8, 1, &n, &t) != WEFT_OK) return; /* a later call retries */
    if (MPI_Irecv(weft_tensor_data(t), count, MPI_BYTE, o->src, o->tag, f->data, &o->req) !=
        MPI_SUCCESS) {
        weft_tensor_release(t);
        return;
    }
    o->buf = t; /* the orphan's reference */
    o->probe = false;
}

/* ---- the receiving nodes ---------------------------------------------------- */

static weft_status_t rwait_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                     weft_var_t *const *in, size_t *n_out,
                                     const weft_type_t **out)
{
    (void)in;
    if (n_in > 1) return weft_graph_set_error(g, WEFT_EINVAL, "%s takes at most 1 input",
                                              weft_op_name(op));
    *n_out = 1;
    return weft_type_tensor(g, WEFT_INT8, 0, NULL, &out[0]);
}

/* Parks until the message is in; its output is an ordering token. */
static weft_status_t rwait_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                   weft_tensor_t **out, weft_kernel_ctx_t *ctx)
{
    (void)in;
    const wm_props_t *p = weft_op_props(weft_apply_op(node));
    wm_msg_t *m = &p->rt->msgs[p->index];
    weft_status_t st = wm__token_output(ctx, &out[0]);
    return st != WEFT_OK ? st : wm__park_unless_done(p->rt, m, ctx);
}

/* The header's shape, checked against the value's type (its known lengths)
 * and the message's size. */
static weft_status_t header_shape(const wm_props_t *p, const wm_msg_t *m, int64_t *shape,
                                  weft_kernel_ctx_t *ctx)
{
    size_t n = weft_dtype_size((weft_dtype_t)p->dtype);
    memcpy(shape, m->buf, (size_t)p->ndim * sizeof *shape);
    for (int i = 0; i < p->ndim; i++) {
        if (shape[i] < 0 || (p->shape[i] >= 0 && shape[i] != p->shape[i]))
            return weft_kernel_error(ctx, WEFT_ESHAPE, "%s: rank %d sent length %lld on axis "
                                     "%d, its type says %lld", m->name, m->src,
                                     (long long)shape[i], i, (long long)p->shape[i]);
        n *= (size_t)shape[i];
    }
    if (m->bytes != WM_DYN_HEADER + n)
        return weft_kernel_error(ctx, WEFT_EIO, "%s: %zu bytes from rank %d, its header says "
                                 "%zu", m->name, m->bytes, m->src, WM_DYN_HEADER + n);
    return WEFT_OK;
}

/* Runs after the wait (its input): the message is in m's buffer. */
static weft_status_t rtake_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                   weft_tensor_t **out, weft_kernel_ctx_t *ctx)
{
    (void)in;
    const wm_props_t *p = weft_op_props(weft_apply_op(node));
    const wm_msg_t *m = &p->rt->msgs[p->index];
    int64_t shape[WEFT_MAX_NDIM];
    weft_status_t st = header_shape(p, m, shape, ctx);
    if (st == WEFT_OK)
        st = weft_kernel_alloc_output(ctx, &out[0], (weft_dtype_t)p->dtype, p->ndim, shape);
    if (st == WEFT_OK && m->bytes > WM_DYN_HEADER)
        memcpy(weft_tensor_data(out[0]), (const char *)m->buf + WM_DYN_HEADER,
               m->bytes - WM_DYN_HEADER);
    return st;
}

WM_CLASS(wm__rwait_class, "MpiRecvWait", rwait_make_node, rwait_perform);
WM_CLASS(wm__rtake_class, "MpiRecvTake", wm__typed_make_node, rtake_perform);
