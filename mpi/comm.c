/* One distributed call on this rank (docs/distributed.md §3-§4): the calling
 * thread is the communication thread. It posts the call's receives, runs the
 * local function on a helper thread, and until that returns, starts the
 * sends and collectives the nodes queued and completes requests (waking the
 * nodes waiting for them). Then the ranks agree on the outcome: the lowest
 * rank where something failed first broadcasts its message, so every rank
 * returns the same status and text. Every wait is bounded by timeout_s. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, nanosleep */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi_int.h"

typedef struct call {
    weft_mpi_function_t *f;
    int ctag;           /* this call's tag on the control communicator */
    uint64_t tag_base;  /* this call's first data tag */
    wm_abort_msg_t *in, *out; /* f->agree's: MPI may use them after a timeout */
    MPI_Request *abort_out; /* one per peer */
    bool abort_sent;
    pthread_t helper;
    _Atomic int helper_done; /* release by the helper, acquire here: local_st visible */
    weft_status_t local_st;
    char local_msg[1024];
} call_t;

uint64_t wm__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double now_s(void)
{
    return 1e-9 * (double)wm__now_ns();
}

/* Idle while no node waits and nothing completes soon: sleep until a node
 * queues a send or starts waiting (wm__rt_kick; the flag keeps a kick that
 * comes before the sleep), at most 1 ms (receives still complete into
 * their buffers meanwhile; only noticing them waits). */
static void idle_sleep(wm_rt_t *rt)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 1000000;
    if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
    pthread_mutex_lock(&rt->comm_mu);
    if (!rt->kicked) pthread_cond_timedwait(&rt->comm_cv, &rt->comm_mu, &ts);
    rt->kicked = false;
    pthread_mutex_unlock(&rt->comm_mu);
}

/* Idle backoff while something is awaited: 32 sched_yield rounds, then
 * sleeps of 5 us (32 rounds) and 50 us (a completion resets it). mpirun
 * binds a rank to its core, which its worker shares with this thread: a
 * yield hands the core straight back to the worker, where a sleep's wakeup
 * preempts it; and the waits this ends are often short (an allreduce whose
 * peer is a few us late). Sleeping from the first round (10 us doubling to
 * 500 us) cost the data-parallel MLP 7% at np=2 (1.73-1.78x -> 1.59-1.63x
 * alternated in one session; docs/distributed.md §3.1). When nothing is
 * awaited the thread blocks after 8 rounds (idle_sleep), so a rank's long
 * node is never polled against. */
static void backoff(unsigned *idle)
{
    if (++*idle < 32) {
        sched_yield();
        return;
    }
    unsigned us = *idle < 64 ? 5 : 50;
    struct timespec ts = {0, (long)us * 1000};
    nanosleep(&ts, NULL);
}

static int data_tag(const call_t *c, size_t m)
{
    return wm__data_tag(c->f->tag_ub, c->tag_base, m);
}

static void *helper_main(void *arg)
{
    call_t *c = arg;
    weft_mpi_function_t *f = c->f;
    weft_call_options_t co = WEFT_CALL_OPTIONS_INIT;
    co.on_node_failure = wm__on_node_failure;
    co.failure_user = &f->rt;
    f->t_local0 = wm__now_ns(); /* read after the join */
    c->local_st = weft_function_call_ex(f->local, f->n_lin, f->lin, f->n_lout + f->n_keep,
                                        f->lout, &co);
    /* the message is the helper thread's own (weft_function_last_error) */
    if (c->local_st != WEFT_OK)
        snprintf(c->local_msg, sizeof c->local_msg, "%s", weft_function_last_error(f->local));
    atomic_store_explicit(&c->helper_done, 1, memory_order_release);
    return NULL;
}

/* Starts collective g on this rank: by its start node where the rank
 * contributes, at the call's start where it only gets the result. */
static int start_coll(wm_coll_t *g, MPI_Request *req)
{
    switch (g->kind) {
    case WM_ALLREDUCE:
        return MPI_Iallreduce(g->sbuf, g->rbuf, (int)g->count, g->mtype, MPI_SUM, g->comm, req);
    case WM_BCAST:
        return MPI_Ibcast(g->rbuf, (int)g->bytes, MPI_BYTE, g->root, g->comm, req);
    case WM_REDUCE:
        return MPI_Ireduce(g->sbuf, g->rbuf, (int)g->count, g->mtype, MPI_SUM, g->root, g->comm,
                           req);
    case WM_SCATTER:
        return MPI_Iscatter(g->sbuf, (int)g->rbytes, MPI_BYTE, g->rbuf, (int)g->rbytes, MPI_BYTE,
                            g->root, g->comm, req);
    default:
        return MPI_Igather(g->sbuf, (int)g->bytes, MPI_BYTE, g->rbuf, (int)g->bytes, MPI_BYTE,
                           g->root, g->comm, req);
    }
}

/* Receives of this rank, the collectives where it only gets the result
 * (non-root broadcasts and scatters), the abort receive. */
static weft_status_t post_receives(call_t *c)
{
    weft_mpi_function_t *f = c->f;
    wm_rt_t *rt = &f->rt;
    int rc = MPI_SUCCESS;
    for (size_t m = 0; m < rt->n_msgs; m++) {
        wm_msg_t *g = &rt->msgs[m];
        /* relaxed: no node of this call runs yet */
        atomic_store_explicit(&g->state, WM_IDLE, memory_order_relaxed);
        atomic_store_explicit(&g->park.flag, 0, memory_order_relaxed);
        g->t_post = g->t_done = 0;
        g->matched = false;
        if (f->reqs[m] == MPI_REQUEST_NULL) { /* a send an MPI error left unstarted */
            weft_tensor_release(g->send_t);
            g->send_t = NULL;
        }
        if (g->dst != f->rank || rc != MPI_SUCCESS) continue;
        atomic_store_explicit(&g->state, WM_POSTED, memory_order_relaxed);
        g->t_post = wm__now_ns();
        if (g->dynamic) continue; /* probed for its size (wm__probe_dynamic) */
        rc = MPI_Irecv(g->buf, (int)g->bytes, MPI_BYTE, g->src, data_tag(c, m), f->data,
                       &f->reqs[m]);
    }
    for (size_t k = 0; k < rt->n_colls; k++) {
        wm_coll_t *g = &rt->colls[k];
        /* relaxed: as above */
        atomic_store_explicit(&g->state, WM_IDLE, memory_order_relaxed);
        atomic_store_explicit(&g->park.flag, 0, memory_order_relaxed);
        if (wm__coll_gives(g->kind, g->root, f->rank) || rc != MPI_SUCCESS) continue;
        atomic_store_explicit(&g->state, WM_POSTED, memory_order_relaxed);
        rc = start_coll(g, &f->reqs[rt->n_msgs + k]);
    }
    if (rc == MPI_SUCCESS)
        rc = MPI_Irecv(c->in, sizeof *c->in, MPI_BYTE, MPI_ANY_SOURCE, c->ctag, f->ctl,
                       &f->reqs[rt->n_msgs + rt->n_colls]);
    return rc == MPI_SUCCESS ? WEFT_OK : wm__error(WEFT_ESYSTEM, "rank %d: posting receives "
                                                   "failed (MPI error %d)", f->rank, rc);
}


/* Sends and collective starts the nodes queued. Returns how many started. */
static int start_queued(call_t *c, int *rc)
{
    weft_mpi_function_t *f = c->f;
    wm_rt_t *rt = &f->rt;
    int n = 0;
    for (size_t m = 0; m < rt->n_msgs && *rc == MPI_SUCCESS; m++) {
        wm_msg_t *g = &rt->msgs[m];
        /* acquire: pairs with the send node's release; the buffer is filled */
        if (g->src != f->rank || atomic_load_explicit(&g->state, memory_order_acquire) != WM_QUEUED)
            continue;
        atomic_store_explicit(&g->state, WM_POSTED, memory_order_relaxed);
        g->t_post = wm__now_ns();
        const void *src = g->zero_copy ? weft_tensor_data(g->send_t) : g->buf;
        *rc = MPI_Isend(src, (int)g->bytes, MPI_BYTE, g->dst, data_tag(c, m), f->data,
                        &f->reqs[m]);
        n++;
    }
    for (size_t k = 0; k < rt->n_colls && *rc == MPI_SUCCESS; k++) {
        wm_coll_t *g = &rt->colls[k];
        if (atomic_load_explicit(&g->state, memory_order_acquire) != WM_QUEUED) continue;
        atomic_store_explicit(&g->state, WM_POSTED, memory_order_relaxed);
        *rc = start_coll(g, &f->reqs[rt->n_msgs + k]);
        n++;
    }
    return n;
}

static void send_aborts(call_t *c)
{
    weft_mpi_function_t *f = c->f;
    c->abort_sent = true;
    c->out->rank = f->rank;
    pthread_mutex_lock(&f->rt.mu);
    c->out->status = (int32_t)f->rt.fail_status;
    snprintf(c->out->text, sizeof c->out->text, "%s", f->rt.fail_msg);
    pthread_mutex_unlock(&f->rt.mu);
    for (int r = 0; r < f->size; r++)
        if (r != f->rank)
            MPI_Isend(c->out, sizeof *c->out, MPI_BYTE, r, c->ctag, f->ctl, &c->abort_out[r]);
}

/* Completed requests: wake the waiting nodes; an abort fails the call here. */
static int complete_some(call_t *c, int *rc)
{
    weft_mpi_function_t *f = c->f;
    wm_rt_t *rt = &f->rt;
    int n_req = (int)(rt->n_msgs + rt->n_colls + 1), out = 0;
    *rc = MPI_Testsome(n_req, f->reqs, &out, f->done_idx, MPI_STATUSES_IGNORE);
    if (*rc != MPI_SUCCESS || out == MPI_UNDEFINED || out == 0) return 0;
    for (int i = 0; i < out; i++) {
        size_t k = (size_t)f->done_idx[i];
        /* release: the received bytes happen-before a waiter's acquire */
        if (k < rt->n_msgs) {
            wm_msg_t *g = &rt->msgs[k];
            g->t_done = wm__now_ns();
            g->wait_ns += g->t_done - g->t_post;
            g->completions++;
            weft_tensor_release(g->send_t); /* a send from the value: MPI is done with it */
            g->send_t = NULL;
            wm__arrived(rt, &g->state, &g->park);
        }
        else if (k < rt->n_msgs + rt->n_colls)
            wm__arrived(rt, &rt->colls[k - rt->n_msgs].state, &rt->colls[k - rt->n_msgs].park);
        else {
            char text[1100];
            snprintf(text, sizeof text, "%.*s", (int)sizeof c->in->text - 1, c->in->text);
            wm__rt_fail(rt, false, (weft_status_t)c->in->status, text);
        }
    }
    return out;
}

static bool all_complete(const weft_mpi_function_t *f)
{
    for (size_t k = 0; k < f->rt.n_msgs + f->rt.n_colls; k++)
        if (f->reqs[k] != MPI_REQUEST_NULL) return false;
    return true;
}

/* What this rank waits for, for the timeout message. */
static void pending_text(const weft_mpi_function_t *f, char *buf, size_t cap)
{
    snprintf(buf, cap, "its peers");
    for (size_t m = 0; m < f->rt.n_msgs; m++)
        if (f->reqs[m] != MPI_REQUEST_NULL ||
            (f->rt.msgs[m].dynamic && f->rt.msgs[m].dst == f->rank && !f->rt.msgs[m].matched)) {
            const wm_msg_t *g = &f->rt.msgs[m];
            snprintf(buf, cap, "rank %d (message %zu: %s)", g->dst == f->rank ? g->src : g->dst,
                     m, g->name);
            return;
        }
    for (size_t k = 0; k < f->rt.n_colls; k++)
        if (f->reqs[f->rt.n_msgs + k] != MPI_REQUEST_NULL) {
            snprintf(buf, cap, "the ranks of collective %zu", k);
            return;
        }
}

static void fail_timeout(call_t *c)
{
    weft_mpi_function_t *f = c->f;
    if (getenv("WEFT_MPI_DEBUG")) {
        for (size_t m = 0; m < f->rt.n_msgs; m++)
            fprintf(stderr, "rank %d msg %zu %d->%d state %d req %s tag %d\n", f->rank, m,
                    f->rt.msgs[m].src, f->rt.msgs[m].dst, (int)f->rt.msgs[m].state,
                    f->reqs[m] == MPI_REQUEST_NULL ? "null" : "active", data_tag(c, m));
        if (f->local) weft_function_print(f->local, stderr);
    }
    char what[300], msg[512];
    pending_text(f, what, sizeof what);
    snprintf(msg, sizeof msg, "timed out after %g s waiting for %s (dead or stuck peer?)",
             f->timeout_s, what);
    wm__rt_fail(&f->rt, true, WEFT_ESYSTEM, msg);
}

/* Until the local function returned and (on success) every request is
 * complete, or the call failed. */
static weft_status_t progress(call_t *c)
{
    weft_mpi_function_t *f = c->f;
    wm_rt_t *rt = &f->rt;
    double last = now_s();
    unsigned idle = 0;
    int rc = MPI_SUCCESS;
    for (;;) {
        /* read first: a node queued before the helper finished is started
         * below in this same round */
        bool done = atomic_load_explicit(&c->helper_done, memory_order_acquire);
        int n = start_queued(c, &rc);
        if (rc == MPI_SUCCESS) n += wm__probe_dynamic(f, c->tag_base, &rc);
        if (rc == MPI_SUCCESS) n += complete_some(c, &rc);
        if (rc != MPI_SUCCESS) {
            wm__rt_fail(rt, true, WEFT_ESYSTEM, "MPI failed while communicating");
            return WEFT_ESYSTEM;
        }
        bool failed = atomic_load_explicit(&rt->failed, memory_order_acquire);
        if (failed) wm__fail_parked(rt); /* every round: a node may park late */
        if (failed && rt->fail_local && !c->abort_sent) send_aborts(c);
        if (done && (failed || all_complete(f))) return WEFT_OK;
        if (n) {
            last = now_s();
            idle = 0;
            continue;
        }
        /* only a wait counts: a long node of this rank is no peer's fault;
         * relaxed: a hint, re-read every round */
        bool waiting = done || atomic_load_explicit(&rt->waiting, memory_order_relaxed) > 0;
        if (!waiting) last = now_s();
        if (!failed && now_s() - last > f->timeout_s) {
            fail_timeout(c);
            last = now_s();
        }
        if (!waiting && idle > 8) idle_sleep(rt);
        else backoff(&idle);
    }
}

/* Waits for one request, bounded by the timeout. */
static bool wait_bounded(MPI_Request *req, double timeout_s)
{
    double t0 = now_s();
    unsigned idle = 0;
    for (;;) {
        int flag = 0;
        if (MPI_Test(req, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) return false;
        if (flag) return true;
        if (now_s() - t0 > timeout_s) return false;
        backoff(&idle);
    }
}

/* The lowest rank where the call failed first, and its message. */
static weft_status_t agree(call_t *c, char *msg, size_t cap)
{
    weft_mpi_function_t *f = c->f;
    wm_rt_t *rt = &f->rt;
    wm_agree_t *a = f->agree;
    bool failed = atomic_load_explicit(&rt->failed, memory_order_acquire);
    a->mine = failed && rt->fail_local ? f->rank : f->size;
    a->origin = f->size;
    if (MPI_Iallreduce(&a->mine, &a->origin, 1, MPI_INT, MPI_MIN, f->ctl, &a->req) != MPI_SUCCESS ||
        !wait_bounded(&a->req, f->timeout_s)) {
        f->broken = true;
        snprintf(msg, cap, "rank %d: timed out after %g s agreeing on the call's outcome with "
                 "its peers (dead or stuck peer?)%s%s", f->rank, f->timeout_s,
                 failed ? "; here: " : "", failed ? rt->fail_msg : "");
        return WEFT_ESYSTEM;
    }
    if (a->origin == f->size) return WEFT_OK;
    int origin = a->origin;
    memset(&a->am, 0, sizeof a->am);
    if (origin == f->rank) {
        a->am.status = (int32_t)rt->fail_status;
        snprintf(a->am.text, sizeof a->am.text, "%s", rt->fail_msg);
    }
    if (MPI_Ibcast(&a->am, sizeof a->am, MPI_BYTE, origin, f->ctl, &a->req) != MPI_SUCCESS ||
        !wait_bounded(&a->req, f->timeout_s)) {
        f->broken = true;
        snprintf(msg, cap, "rank %d: timed out after %g s receiving rank %d's failure",
                 f->rank, f->timeout_s, origin);
        return WEFT_ESYSTEM;
    }
    snprintf(msg, cap, "rank %d: %.*s", origin, (int)sizeof a->am.text - 1, a->am.text);
    return (weft_status_t)a->am.status;
}

weft_status_t wm__orphan(weft_mpi_function_t *f, wm_orphan_t orph)
{
    if (f->n_orphans == f->cap_orphans) {
        size_t cap = f->cap_orphans ? 2 * f->cap_orphans : 16;
        wm_orphan_t *o = realloc(f->orphans, cap * sizeof *o);
        if (!o) return WEFT_ENOMEM;
        f->orphans = o;
        f->cap_orphans = cap;
    }
    orph.buf = weft_tensor_retain(orph.buf);
    f->orphans[f->n_orphans++] = orph;
    return WEFT_OK;
}

/* After a failed call: collectives every rank completes (started with
 * whatever the buffer holds where a node did not run), point-to-point
 * requests left pending kept as orphans with their buffers (each message
 * gets a fresh one), so the next call starts clean. */
static weft_status_t settle_failed(call_t *c)
{
    weft_mpi_function_t *f = c->f;
    wm_rt_t *rt = &f->rt;
    for (size_t k = 0; k < rt->n_colls; k++) {
        MPI_Request *req = &f->reqs[rt->n_msgs + k];
        wm_coll_t *g = &rt->colls[k];
        bool gives = wm__coll_gives(g->kind, g->root, f->rank);
        if (*req == MPI_REQUEST_NULL && atomic_load_explicit(&g->state, memory_order_relaxed) !=
                                            WM_DONE && gives)
            start_coll(g, req);
        if (*req != MPI_REQUEST_NULL && !wait_bounded(req, f->timeout_s)) {
            f->broken = true;
            return WEFT_ESYSTEM;
        }
    }
    for (size_t m = 0; m < rt->n_msgs; m++) {
        if (f->reqs[m] == MPI_REQUEST_NULL) continue;
        wm_msg_t *g = &rt->msgs[m];
        if (g->send_t) {
            /* a send from the value's memory, which the local function
             * reuses at its next call: it must end now (its receive was
             * posted at the peer's call start), else the function breaks
             * and keeps that memory (weft_mpi_function_destroy) */
            if (!wait_bounded(&f->reqs[m], f->timeout_s)) {
                f->broken = true;
                return WEFT_ESYSTEM;
            }
            weft_tensor_release(g->send_t);
            g->send_t = NULL;
            continue;
        }
        weft_tensor_t *fresh = NULL; /* a dynamic message allocates its own per call */
        wm_orphan_t o = {f->reqs[m], g->buf_t, g->dst == f->rank, false, 0, 0};
        if ((!g->dynamic && weft_tensor_empty(g->dtype, g->ndim, g->shape, &fresh) != WEFT_OK) ||
            wm__orphan(f, o) != WEFT_OK) {
            weft_tensor_release(fresh);
            f->broken = true;
            return WEFT_ENOMEM;
        }
        weft_tensor_release(g->buf_t);
        g->buf_t = fresh;
        g->buf = fresh ? weft_tensor_data(fresh) : NULL;
        f->reqs[m] = MPI_REQUEST_NULL;
    }
    if (wm__orphan_unmatched(f, c->tag_base) != WEFT_OK) {
        f->broken = true;
        return WEFT_ENOMEM;
    }
    return WEFT_OK;
}

/* The abort receive and sends of this call. */
static void settle_aborts(call_t *c)
{
    weft_mpi_function_t *f = c->f;
    MPI_Request *in = &f->reqs[f->rt.n_msgs + f->rt.n_colls];
    if (*in != MPI_REQUEST_NULL) {
        MPI_Cancel(in);
        MPI_Wait(in, MPI_STATUS_IGNORE);
    }
    for (int r = 0; r < f->size; r++)
        if (c->abort_out[r] != MPI_REQUEST_NULL && !wait_bounded(&c->abort_out[r], f->timeout_s)) {
            f->broken = true;
            MPI_Request_free(&c->abort_out[r]); /* its buffer is f->agree's, kept */
        }
    /* drain the aborts of other failing ranks that already arrived */
    for (;;) {
        int flag = 0;
        MPI_Status s;
        MPI_Iprobe(MPI_ANY_SOURCE, c->ctag, f->ctl, &flag, &s);
        if (!flag) break;
        MPI_Recv(c->in, sizeof *c->in, MPI_BYTE, s.MPI_SOURCE, c->ctag, f->ctl, MPI_STATUS_IGNORE);
    }
}

void wm__abandon(weft_mpi_function_t *f)
{
    for (size_t m = 0; m < f->rt.n_msgs; m++) {
        if (f->reqs[m] == MPI_REQUEST_NULL) continue;
        if (f->rt.msgs[m].dst == f->rank) {
            MPI_Cancel(&f->reqs[m]);
            MPI_Wait(&f->reqs[m], MPI_STATUS_IGNORE);
        } else {
            wm_msg_t *g = &f->rt.msgs[m];
            wm__keep_buffer(g->send_t ? g->send_t : g->buf_t); /* MPI may still read it */
            MPI_Request_free(&f->reqs[m]);
        }
    }
    for (size_t k = 0; k < f->rt.n_colls; k++) {
        if (f->reqs[f->rt.n_msgs + k] == MPI_REQUEST_NULL) continue;
        wm__keep_buffer(f->rt.colls[k].sbuf_t); /* an unfinished collective */
        wm__keep_buffer(f->rt.colls[k].rbuf_t);
    }
}

void wm__drain_orphans(weft_mpi_function_t *f, bool final)
{
    size_t k = 0;
    for (size_t i = 0; i < f->n_orphans; i++) {
        wm_orphan_t *o = &f->orphans[i];
        int flag = 0;
        if (o->probe) wm__drain_probe(f, o); /* may turn it into a receive */
        if (o->probe) {
            if (!final) f->orphans[k++] = *o;
            continue;
        }
        if (final && o->is_recv) MPI_Cancel(&o->req);
        if (final) flag = o->is_recv ? (MPI_Wait(&o->req, MPI_STATUS_IGNORE), 1)
                                     : wait_bounded(&o->req, 1.0);
        else MPI_Test(&o->req, &flag, MPI_STATUS_IGNORE);
        if (flag) {
            weft_tensor_release(o->buf);
        } else if (final) {
            MPI_Request_free(&o->req);
            wm__keep_buffer(o->buf); /* MPI may still read it */
            weft_tensor_release(o->buf);
        } else {
            f->orphans[k++] = *o;
        }
    }
    f->n_orphans = final ? 0 : k;
}

static void reset_rt(wm_rt_t *rt)
{
    pthread_mutex_lock(&rt->mu);
    /* relaxed: no node of the call runs yet; mu orders it for the waiters */
    atomic_store_explicit(&rt->failed, 0, memory_order_relaxed);
    rt->fail_local = false;
    rt->fail_status = WEFT_OK;
    rt->fail_msg[0] = '\0';
    pthread_mutex_unlock(&rt->mu);
}

static weft_status_t run_local(call_t *c)
{
    if (!c->f->local) {
        atomic_store_explicit(&c->helper_done, 1, memory_order_relaxed);
        return WEFT_OK;
    }
    if (pthread_create(&c->helper, NULL, helper_main, c) != 0)
        return wm__error(WEFT_ESYSTEM, "rank %d: cannot start the call's thread", c->f->rank);
    return WEFT_OK;
}

weft_status_t wm__call(weft_mpi_function_t *f, char *msg, size_t cap)
{
    call_t c;
    memset(&c, 0, sizeof c);
    c.f = f;
    c.in = &f->agree->in;
    c.out = &f->agree->out;
    c.ctag = (int)(f->calls % (uint64_t)f->tag_ub);
    uint64_t span = f->rt.n_msgs ? f->rt.n_msgs : 1;
    uint64_t cycle = (uint64_t)f->tag_ub / span;
    c.tag_base = (f->calls % (cycle ? cycle : 1)) * span;
    f->calls++;
    c.abort_out = malloc((size_t)f->size * sizeof *c.abort_out);
    if (!c.abort_out) return wm__error(WEFT_ENOMEM, "rank %d: out of memory", f->rank);
    for (int r = 0; r < f->size; r++) c.abort_out[r] = MPI_REQUEST_NULL;
    wm__drain_orphans(f, false);
    reset_rt(&f->rt);
    weft_status_t st = post_receives(&c);
    bool started = false;
    if (st == WEFT_OK) st = run_local(&c);
    if (st == WEFT_OK) {
        started = f->local != NULL;
        st = progress(&c);
    } else {
        wm__rt_fail(&f->rt, true, st, weft_mpi_last_error());
    }
    if (started) pthread_join(c.helper, NULL);
    if (f->local && c.local_st != WEFT_OK && !atomic_load_explicit(&f->rt.failed, memory_order_acquire))
        wm__rt_fail(&f->rt, true, c.local_st, c.local_msg);
    msg[0] = '\0';
    weft_status_t out = agree(&c, msg, cap);
    if (out != WEFT_OK && !f->broken && settle_failed(&c) != WEFT_OK) f->broken = true;
    settle_aborts(&c);
    free(c.abort_out);
    return out;
}

void wm__on_node_failure(void *user, weft_status_t st, const char *msg)
{
    wm__rt_fail(user, true, st, msg);
}
