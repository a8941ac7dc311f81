/* This rank's local function (docs/distributed.md §3): the nodes the
 * partition gives this rank (and the replicated ones), a receive node per
 * message coming in, a send node per message going out, each collective
 * lowered to a start and a wait node, compiled with weft_function_compile.
 * The communication nodes' outputs that nothing reads (send and start
 * tokens) are kept as extra outputs so the compile keeps them. */
#include <stdlib.h>
#include <string.h>

#include "mpi_int.h"

typedef struct builder {
    weft_mpi_function_t *f;
    weft_graph_t *g;
    weft_var_t **loc;   /* per partition variable: its local variable, or NULL */
    weft_var_t **outs;  /* local outputs: user outputs, then tokens */
    size_t n_outs;
    weft_var_t *last;   /* the chain's token: every send and collective start so far */
    int32_t *recv_of;   /* per variable: the message this rank receives it by, or -1 */
    weft_var_t **tok_at; /* per message received: the chain token at its position */
    weft_update_t *upd; /* the updates the local function applies itself */
    size_t n_upd;
} builder_t;

static weft_var_t *comm_node(builder_t *b, const weft_op_class_t *cls, uint32_t index,
                             const weft_type_t *t, weft_var_t *in, weft_var_t *tok)
{
    wm_props_t p;
    memset(&p, 0, sizeof p); /* bytewise equality and hash: no stray padding */
    p.rt = &b->f->rt;
    p.index = index;
    if (t) {
        p.dtype = (int32_t)weft_type_dtype(t);
        p.ndim = weft_type_ndim(t);
        for (int i = 0; i < p.ndim; i++) p.shape[i] = weft_type_dim(t, i);
    }
    const weft_op_t *op;
    if (weft_op_create(b->g, cls, &p, &op) != WEFT_OK) return NULL;
    weft_var_t *args[2] = {in ? in : tok, tok};
    size_t n = (in != NULL) + (tok != NULL);
    return weft_op_call(b->g, op, n, n ? args : NULL);
}

static weft_var_t *local_value(builder_t *b, size_t pos);

static weft_status_t ctor_failed(builder_t *b, const char *what)
{
    weft_status_t st = weft_graph_error(b->g);
    return wm__error(st == WEFT_OK ? WEFT_ENOMEM : st, "local graph: %s: %s", what,
                     weft_graph_error_message(b->g));
}

static weft_status_t keep(builder_t *b, weft_var_t *tok)
{
    if (!tok) return ctor_failed(b, "a communication node");
    b->outs[b->n_outs++] = tok;
    b->f->n_keep++;
    return WEFT_OK;
}

static MPI_Datatype sum_type(weft_dtype_t dt)
{
    switch (dt) {
    case WEFT_FLOAT32: return MPI_FLOAT;
    case WEFT_FLOAT64: return MPI_DOUBLE;
    case WEFT_INT32: return MPI_INT32_T;
    case WEFT_INT64: return MPI_INT64_T;
    case WEFT_COMPLEX64: return MPI_C_FLOAT_COMPLEX;
    default: return MPI_C_DOUBLE_COMPLEX;
    }
}

/* The collective's buffers and communicator (every rank, in creation order). */
static weft_status_t coll_setup(weft_mpi_function_t *f, wm_coll_t *c, int kind, int root,
                                const weft_type_t *xt, const weft_type_t *rt_)
{
    c->kind = kind;
    c->root = root;
    c->dtype = weft_type_dtype(xt);
    int nd = weft_type_ndim(xt);
    int64_t xs[WEFT_MAX_NDIM];
    c->count = 1;
    for (int i = 0; i < nd; i++) c->count *= (size_t)(xs[i] = weft_type_dim(xt, i));
    c->bytes = c->count * weft_dtype_size(c->dtype);
    c->mtype = kind == WM_ALLREDUCE || kind == WM_REDUCE ? sum_type(c->dtype) : MPI_BYTE;
    c->ndim = weft_type_ndim(rt_);
    c->rbytes = weft_dtype_size(c->dtype);
    for (int i = 0; i < c->ndim; i++) c->rbytes *= (size_t)(c->shape[i] = weft_type_dim(rt_, i));
    if (MPI_Comm_dup(f->data, &c->comm) != MPI_SUCCESS)
        return wm__error(WEFT_ESYSTEM, "local graph: MPI_Comm_dup failed");
    weft_status_t st = weft_tensor_empty(c->dtype, nd, xs, &c->sbuf_t);
    if (st == WEFT_OK && kind == WM_BCAST) c->rbuf_t = weft_tensor_retain(c->sbuf_t);
    else if (st == WEFT_OK && wm__coll_gets(kind, root, f->rank))
        st = weft_tensor_empty(c->dtype, c->ndim, c->shape, &c->rbuf_t);
    /* a reduce's result off the root: zeros, which MPI never writes */
    if (st == WEFT_OK && kind == WM_REDUCE && f->rank != root)
        memset(weft_tensor_data(c->rbuf_t), 0, c->rbytes);
    if (st != WEFT_OK) return wm__error(st, "local graph: collective buffer: %s",
                                        weft_tensor_last_error());
    c->sbuf = weft_tensor_data(c->sbuf_t);
    c->rbuf = c->rbuf_t ? weft_tensor_data(c->rbuf_t) : NULL;
    return WEFT_OK;
}

/* Start (where the rank contributes) and wait (where it gets the result). */
static weft_status_t lower_coll(builder_t *b, const weft_apply_t *a, uint32_t index)
{
    weft_mpi_function_t *f = b->f;
    wm_part_t *p = &f->part;
    int root = 0, kind = wm__coll_kind(weft_apply_op(a), &root);
    weft_var_t *x = weft_apply_input(a, 0), *y = weft_apply_output(a, 0);
    weft_status_t st = coll_setup(f, &f->rt.colls[index], kind, root, weft_var_type(x),
                                  weft_var_type(y));
    if (st != WEFT_OK) return st;
    f->rt.colls[index].tail_ns = p->coll_tail[index];
    bool gives = wm__coll_gives(kind, root, f->rank);
    bool gets = wm__coll_gets(kind, root, f->rank);
    weft_var_t *tok = NULL;
    if (gives) {
        weft_var_t *xl = local_value(b, wm__var_pos(p, x));
        if (!xl) return ctor_failed(b, "a receive node");
        tok = comm_node(b, &wm__cstart_class, index, NULL, xl, b->last);
        st = keep(b, tok);
        b->last = tok;
    }
    if (st == WEFT_OK && gets) {
        weft_var_t *r = comm_node(b, &wm__cwait_class, index, weft_var_type(y), NULL, b->last);
        if (!r) return ctor_failed(b, "a collective wait node");
        b->loc[wm__var_pos(p, y)] = r;
    }
    return st;
}

/* The node on local inputs: itself when none was replaced, else a clone. */
static weft_status_t local_node(builder_t *b, const weft_apply_t *a)
{
    wm_part_t *p = &b->f->part;
    size_t n = weft_apply_n_inputs(a);
    weft_var_t *in[64], **ins = n <= 64 ? in : malloc(n * sizeof *ins);
    if (!ins) return wm__error(WEFT_ENOMEM, "local graph: out of memory");
    bool same = true;
    for (size_t i = 0; i < n; i++) {
        weft_var_t *v = weft_apply_input(a, i);
        ins[i] = local_value(b, wm__var_pos(p, v));
        if (!ins[i]) {
            if (ins != in) free(ins);
            return ctor_failed(b, "a receive node");
        }
        same &= ins[i] == v;
    }
    weft_apply_t *na = (weft_apply_t *)a;
    weft_status_t st = same ? WEFT_OK
                            : weft_apply_clone_with_new_inputs(b->g, a, n, ins, true, &na);
    if (ins != in) free(ins);
    if (st != WEFT_OK) return ctor_failed(b, "cloning a node onto received values");
    for (size_t i = 0; i < weft_apply_n_outputs(a); i++)
        b->loc[wm__var_pos(p, weft_apply_output(a, i))] = weft_apply_output(na, i);
    return WEFT_OK;
}

static weft_status_t msg_buffers(weft_mpi_function_t *f)
{
    f->rt.n_dyn_recv = 0;
    for (size_t m = 0; m < f->rt.n_msgs; m++) {
        wm_msg_t *g = &f->rt.msgs[m];
        f->rt.n_dyn_recv += g->dynamic && g->dst == f->rank;
        if ((g->src != f->rank && g->dst != f->rank) || g->dynamic) continue; /* dynmsg.c */
        weft_status_t st = weft_tensor_empty(g->dtype, g->ndim, g->shape, &g->buf_t);
        if (st != WEFT_OK) return wm__error(st, "local graph: message buffer of %s: %s",
                                            g->name, weft_tensor_last_error());
        g->buf = weft_tensor_data(g->buf_t);
    }
    return WEFT_OK;
}

static int by_lo(const void *a, const void *b)
{
    uintptr_t x = ((const wm_bufref_t *)a)->lo, y = ((const wm_bufref_t *)b)->lo;
    return x < y ? -1 : x > y;
}

/* The receive buffer holding address p (refs sorted by lo), or NULL. */
static wm_bufref_t *buffer_at(wm_bufref_t *refs, size_t n, uintptr_t p)
{
    size_t lo = 0, hi = n; /* the first ref starting above p */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (refs[mid].lo <= p) lo = mid + 1;
        else hi = mid;
    }
    return lo > 0 && p < refs[lo - 1].hi ? &refs[lo - 1] : NULL;
}

static weft_status_t fresh_buffer(weft_mpi_function_t *f, wm_msg_t *g)
{
    weft_tensor_t *fresh;
    weft_status_t st = weft_tensor_empty(g->dtype, g->ndim, g->shape, &fresh);
    if (st != WEFT_OK) return wm__error(st, "rank %d: message buffer of %s: %s", f->rank,
                                        g->name, weft_tensor_last_error());
    weft_tensor_release(g->buf_t); /* the output keeps the old one */
    g->buf_t = fresh;
    g->buf = weft_tensor_data(fresh);
    return WEFT_OK;
}

/* The outputs' addresses looked up among the receive buffers' ranges (a
 * view of a buffer points inside it): O((outputs + messages) log messages)
 * per call, for a root that gathers many outputs. */
weft_status_t wm__unshare_recv_buffers(weft_mpi_function_t *f)
{
    size_t n = 0;
    for (size_t m = 0; m < f->rt.n_msgs; m++) {
        wm_msg_t *g = &f->rt.msgs[m];
        if (g->dst != f->rank || g->dynamic || !g->buf_t || !g->bytes) continue;
        uintptr_t lo = (uintptr_t)weft_tensor_data(g->buf_t);
        f->bufrefs[n++] = (wm_bufref_t){lo, lo + g->bytes, (uint32_t)m};
    }
    if (n == 0) return WEFT_OK;
    qsort(f->bufrefs, n, sizeof *f->bufrefs, by_lo);
    for (size_t k = 0; k < f->n_lout; k++) {
        if (!f->lout[k]) continue;
        wm_bufref_t *r = buffer_at(f->bufrefs, n, (uintptr_t)weft_tensor_data(f->lout[k]));
        if (!r || r->msg == UINT32_MAX) continue;
        weft_status_t st = fresh_buffer(f, &f->rt.msgs[r->msg]);
        if (st != WEFT_OK) return st;
        r->msg = UINT32_MAX; /* replaced once */
    }
    return WEFT_OK;
}

/* The messages of value var_pos: this rank's sends first, then its
 * receives (after every earlier send). A send node reads only its value, so
 * it goes out the moment the value is ready; a join node adds its token to
 * the chain, which each receive reads: the order that keeps the waits
 * deadlock-free (docs/distributed.md §3.2). */
static uint32_t first_msg(const wm_part_t *p, size_t var_pos)
{
    uint32_t lo = 0, hi = (uint32_t)p->n_msgs; /* messages are sorted by var_pos */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (p->msgs[mid].var_pos < var_pos) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static weft_status_t value_msgs(builder_t *b, size_t var_pos)
{
    weft_mpi_function_t *f = b->f;
    wm_part_t *p = &f->part;
    uint32_t m0 = first_msg(p, var_pos);
    for (uint32_t m = m0; m < (uint32_t)p->n_msgs && p->msgs[m].var_pos == var_pos; m++) {
        if (p->msgs[m].src != f->rank) continue;
        weft_var_t *x = local_value(b, var_pos);
        weft_var_t *t = comm_node(b, &wm__send_class, m, NULL, x, NULL);
        p->msgs[m].direct_ok = weft_var_owner(p->vars[var_pos]) != NULL;
        /* the send-wait reads the token, which keeps the send node */
        weft_status_t st = p->msgs[m].dynamic
                               ? keep(b, t)
                               : keep(b, comm_node(b, &wm__swait_class, m, NULL, x, t));
        if (st != WEFT_OK) return st;
        b->last = b->last ? comm_node(b, &wm__join_class, m, NULL, b->last, t) : t;
        if (!b->last) return ctor_failed(b, "a token join node");
    }
    for (uint32_t m = m0; m < (uint32_t)p->n_msgs && p->msgs[m].var_pos == var_pos; m++) {
        if (p->msgs[m].dst != f->rank) continue;
        b->recv_of[var_pos] = (int32_t)m;
        b->tok_at[m] = b->last;
    }
    return WEFT_OK;
}

/* The local value of partition variable pos. A received one gets its
 * receive node now, before its first reader, after every send up to the
 * message's position (its token; docs/distributed.md §3.2). The receive
 * never holds its worker (it parks, ops.c), so it needs no other order. */
static weft_var_t *local_value(builder_t *b, size_t pos)
{
    int32_t m = b->recv_of[pos];
    if (b->loc[pos] || m < 0) return b->loc[pos];
    wm_part_t *p = &b->f->part;
    const weft_type_t *t = weft_var_type(p->vars[pos]);
    if (!p->msgs[m].dynamic) {
        b->loc[pos] = comm_node(b, &wm__recv_class, (uint32_t)m, t, NULL, b->tok_at[m]);
        return b->loc[pos];
    }
    /* the shape comes with the message: wait, then take (dynmsg.c) */
    weft_var_t *w = comm_node(b, &wm__rwait_class, (uint32_t)m, NULL, NULL, b->tok_at[m]);
    b->loc[pos] = w ? comm_node(b, &wm__rtake_class, (uint32_t)m, t, w, NULL) : NULL;
    return b->loc[pos];
}

/* In the global order every rank shares: the roots' messages, then each
 * apply in creation order followed by its outputs' messages. */
static weft_status_t build_nodes(builder_t *b)
{
    weft_mpi_function_t *f = b->f;
    wm_part_t *p = &f->part;
    weft_status_t st = WEFT_OK;
    for (size_t k = 0; k < p->n_vars; k++)
        if (p->owner[k] == f->rank || p->owner[k] == WEFT_MPI_REPLICATED) b->loc[k] = p->vars[k];
    for (size_t k = 0; k < p->n_vars && st == WEFT_OK; k++)
        if (!weft_var_owner(p->vars[k])) st = value_msgs(b, k);
    uint32_t coll = 0;
    for (size_t j = 0; j < p->n_applies && st == WEFT_OK; j++) {
        const weft_apply_t *a = p->applies[j];
        int root;
        if (wm__coll_kind(weft_apply_op(a), &root) >= 0) st = lower_coll(b, a, coll++);
        else if (wm__runs_on(p, j, f->rank)) st = local_node(b, a);
        for (size_t i = 0; i < weft_apply_n_outputs(a) && st == WEFT_OK; i++) {
            size_t pos = wm__var_pos(p, weft_apply_output(a, i));
            if (pos < p->n_vars) st = value_msgs(b, pos);
        }
    }
    return st;
}

/* Which caller inputs this rank gives and which outputs it gets. */
static weft_status_t map_io(builder_t *b, size_t n_in, weft_var_t *const *inputs, size_t n_out,
                            weft_var_t *const *outputs, const weft_mpi_options_t *o,
                            weft_var_t **lin)
{
    weft_mpi_function_t *f = b->f;
    for (size_t k = 0; k < n_in; k++) {
        int ow = f->part.owner[wm__var_pos(&f->part, inputs[k])];
        bool gives = o->inputs_on_root ? f->rank == 0
                                       : ow == f->rank || ow == WEFT_MPI_REPLICATED;
        f->in_local[k] = gives ? (int)f->n_lin : -1;
        if (gives) lin[f->n_lin++] = inputs[k];
    }
    for (size_t k = 0; k < n_out; k++) {
        size_t pos = wm__var_pos(&f->part, outputs[k]);
        int ow = f->part.owner[pos];
        bool gets = ow == f->rank || ow == WEFT_MPI_REPLICATED ||
                    (o->outputs_to_root && f->rank == 0);
        f->out_local[k] = gets ? (int)b->n_outs : -1;
        if (gets && !(b->outs[b->n_outs++] = local_value(b, pos)))
            return ctor_failed(b, "a receive node");
    }
    /* the updates this rank holds: hidden outputs, committed after the
     * ranks agree (update.c); but a mutable input this rank gives is updated
     * by the local function itself, in place where the rewrite computed it
     * so: no copy (docs/distributed.md §2, item 5) */
    for (size_t k = 0; k < f->part.n_upd; k++) {
        int j = f->upd_input[k] = wm__input_index(n_in, inputs, f->part.upd[k].var);
        bool holds = wm__holds_update(&f->part, k, f->rank);
        weft_var_t *v = holds ? local_value(b, wm__var_pos(&f->part, f->part.upd[k].value)) : NULL;
        if (holds && !v) return ctor_failed(b, "a receive node");
        bool here = holds && j >= 0 && f->in_local[j] >= 0 && o->function &&
                    o->function->input_mutable && o->function->input_mutable[j];
        f->upd_local[k] = holds && !here ? (int)b->n_outs : -1;
        if (here) b->upd[b->n_upd++] = (weft_update_t){inputs[j], v};
        else if (holds) b->outs[b->n_outs++] = v;
    }
    f->n_lout = b->n_outs;
    return WEFT_OK;
}

static weft_status_t alloc_builder(builder_t *b, weft_mpi_function_t *f, size_t n_in, size_t n_out)
{
    wm_part_t *p = &f->part;
    f->rt.n_colls = p->n_colls;
    size_t max_out = n_out + p->n_upd + p->n_msgs + f->rt.n_colls + 1;
    b->loc = calloc(p->n_vars + 1, sizeof *b->loc);
    b->recv_of = malloc((p->n_vars + 1) * sizeof *b->recv_of);
    b->tok_at = calloc(p->n_msgs + 1, sizeof *b->tok_at);
    b->outs = calloc(max_out, sizeof *b->outs);
    b->upd = calloc(p->n_upd + 1, sizeof *b->upd);
    f->rt.colls = calloc(f->rt.n_colls + 1, sizeof *f->rt.colls);
    f->in_local = calloc(n_in + 1, sizeof *f->in_local);
    f->out_local = calloc(n_out + 1, sizeof *f->out_local);
    f->upd_local = calloc(p->n_upd + 1, sizeof *f->upd_local);
    f->upd_input = calloc(p->n_upd + 1, sizeof *f->upd_input);
    f->lin = calloc(n_in + 1, sizeof *f->lin);
    f->lout = calloc(max_out, sizeof *f->lout);
    f->keep = calloc(max_out, sizeof *f->keep);
    size_t n_req = p->n_msgs + f->rt.n_colls + 1;
    f->reqs = malloc(n_req * sizeof *f->reqs);
    f->done_idx = malloc(n_req * sizeof *f->done_idx);
    f->bufrefs = malloc((p->n_msgs + 1) * sizeof *f->bufrefs);
    if (!b->loc || !b->outs || !b->upd || !b->recv_of || !b->tok_at || !f->rt.colls || !f->in_local ||
        !f->out_local || !f->upd_local || !f->upd_input || !f->lin || !f->lout || !f->keep ||
        !f->reqs || !f->done_idx || !f->bufrefs)
        return wm__error(WEFT_ENOMEM, "local graph: out of memory");
    for (size_t i = 0; i < n_req; i++) f->reqs[i] = MPI_REQUEST_NULL;
    for (size_t k = 0; k < p->n_vars; k++) b->recv_of[k] = -1;
    return WEFT_OK;
}

static weft_status_t compile_local(builder_t *b, weft_var_t **lin, const weft_mpi_options_t *o)
{
    weft_mpi_function_t *f = b->f;
    for (size_t k = 0; k < f->n_keep; k++) {
        weft_status_t st = weft_tensor_empty(WEFT_INT8, 0, NULL, &f->keep[k]);
        if (st != WEFT_OK) return wm__error(st, "local graph: %s", weft_tensor_last_error());
    }
    if (b->n_outs == 0 && b->n_upd == 0) return WEFT_OK; /* nothing runs here */
    /* input_mutable is the caller's, by caller input: remapped to the local ones */
    weft_function_options_t fo = WEFT_FUNCTION_OPTIONS_INIT;
    if (o->function) fo = *o->function;
    fo.deferrable_nodes = true; /* receives park (ops.c) */
    fo.critical_path_first = true; /* sends and collective starts weigh what they feed (priority.c) */
    bool *mut = NULL;
    if (fo.input_mutable) {
        mut = calloc(f->n_in + 1, sizeof *mut);
        if (!mut) return wm__error(WEFT_ENOMEM, "local graph: out of memory");
        for (size_t k = 0; k < f->n_in; k++)
            if (f->in_local[k] >= 0) mut[f->in_local[k]] = o->function->input_mutable[k];
        fo.input_mutable = mut;
    }
    weft_status_t st = weft_function_compile(f->n_lin, lin, b->n_outs, b->outs, b->n_upd,
                                             b->upd, &fo, &f->local);
    free(mut);
    if (st != WEFT_OK)
        return wm__error(st, "rank %d: local compile: %s", f->rank, weft_function_last_error(NULL));
    return WEFT_OK;
}

weft_status_t wm__build_local(weft_mpi_function_t *f, size_t n_in, weft_var_t *const *inputs,
                              size_t n_out, weft_var_t *const *outputs,
                              const weft_mpi_options_t *o)
{
    builder_t b = {.f = f, .g = weft_var_graph(n_out ? outputs[0] : f->part.upd[0].value)};
    f->rt.msgs = f->part.msgs;
    f->rt.n_msgs = f->part.n_msgs;
    weft_var_t **lin = calloc(n_in + 1, sizeof *lin);
    weft_status_t st = lin ? alloc_builder(&b, f, n_in, n_out)
                           : wm__error(WEFT_ENOMEM, "local graph: out of memory");
    if (st == WEFT_OK) st = msg_buffers(f);
    if (st == WEFT_OK) st = build_nodes(&b);
    if (st == WEFT_OK) {
        /* user outputs first, then the tokens build_nodes kept */
        size_t n_tok = b.n_outs;
        weft_var_t **tok = malloc((n_tok + 1) * sizeof *tok);
        if (!tok) st = wm__error(WEFT_ENOMEM, "local graph: out of memory");
        else {
            memcpy(tok, b.outs, n_tok * sizeof *tok);
            b.n_outs = 0;
            st = map_io(&b, n_in, inputs, n_out, outputs, o, lin);
            memcpy(b.outs + b.n_outs, tok, n_tok * sizeof *tok);
            b.n_outs += n_tok;
            free(tok);
        }
    }
    if (st == WEFT_OK) st = compile_local(&b, lin, o);
    free(lin);
    free(b.loc);
    free(b.outs);
    free(b.upd);
    free(b.recv_of);
    free(b.tok_at);
    return st;
}

void wm__free_runtime(weft_mpi_function_t *f)
{
    for (size_t m = 0; m < f->rt.n_msgs; m++) weft_tensor_release(f->rt.msgs[m].buf_t);
    for (size_t c = 0; c < f->rt.n_colls; c++) {
        wm_coll_t *k = &f->rt.colls[c];
        weft_tensor_release(k->sbuf_t);
        weft_tensor_release(k->rbuf_t);
        if (k->comm != MPI_COMM_NULL && k->comm != 0 && !f->broken) MPI_Comm_free(&k->comm);
    }
    for (size_t k = 0; k < f->n_keep; k++) weft_tensor_release(f->keep[k]);
    free(f->rt.colls);
    free(f->in_local);
    free(f->out_local);
    free(f->upd_local);
    free(f->upd_input);
    free(f->lin);
    free(f->lout);
    free(f->keep);
    free(f->reqs);
    free(f->done_idx);
    free(f->bufrefs);
    free(f->orphans);
}
