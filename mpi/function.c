/* weft_mpi_function_*: compile (partition, local graph, local compile),
 * call (argument mapping around comm.c's call), queries, errors. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_int.h"

static _Thread_local char last_error[1400];

weft_status_t wm__error(weft_status_t st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return st;
}

const char *weft_mpi_last_error(void)
{
    return last_error;
}

weft_status_t weft_mpi_init(int *argc, char ***argv, int *provided)
{
    int init = 0, prov = MPI_THREAD_SINGLE;
    MPI_Initialized(&init);
    if (init) MPI_Query_thread(&prov);
    else if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &prov) != MPI_SUCCESS)
        return wm__error(WEFT_ESYSTEM, "MPI_Init_thread failed");
    if (provided) *provided = prov;
    return WEFT_OK;
}

int weft_mpi_block_cyclic_owner(int64_t i, int64_t j, int p, int q)
{
    if (p < 1 || q < 1 || i < 0 || j < 0) return -1;
    return (int)(i % p) * q + (int)(j % q);
}

/* FUNNELED from MPI's main thread, else SERIALIZED (mpi.h "Messages"). */
static weft_status_t check_mpi(void)
{
    int init = 0, fin = 0, prov = MPI_THREAD_SINGLE, is_main = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (!init || fin)
        return wm__error(WEFT_ESTATE, "MPI is not initialized (weft_mpi_init)");
    MPI_Query_thread(&prov);
    MPI_Is_thread_main(&is_main);
    int need = is_main ? MPI_THREAD_FUNNELED : MPI_THREAD_SERIALIZED;
    if (prov < need)
        return wm__error(WEFT_ESTATE, "MPI provides thread level %d, weft needs %s (%d) %s: "
                         "initialize with MPI_Init_thread (weft_mpi_init)", prov,
                         is_main ? "MPI_THREAD_FUNNELED" : "MPI_THREAD_SERIALIZED", need,
                         is_main ? "on the main thread" : "off MPI's main thread");
    return WEFT_OK;
}

static weft_status_t check_updates_args(size_t n_upd, const weft_update_t *upd)
{
    if (n_upd && !upd) return wm__error(WEFT_EINVAL, "weft_mpi_function_compile: NULL updates");
    for (size_t k = 0; k < n_upd; k++)
        if (!upd[k].var || !upd[k].value)
            return wm__error(WEFT_EINVAL, "weft_mpi_function_compile: update %zu has a NULL "
                             "variable or value", k);
    return WEFT_OK;
}

static weft_status_t check_args(MPI_Comm comm, size_t n_in, weft_var_t *const *inputs,
                                size_t n_out, weft_var_t *const *outputs, size_t n_upd,
                                const weft_update_t *upd, const weft_mpi_options_t *o,
                                weft_mpi_function_t **out)
{
    if (!out) return wm__error(WEFT_EINVAL, "weft_mpi_function_compile: NULL out");
    *out = NULL;
    if (comm == MPI_COMM_NULL) return wm__error(WEFT_EINVAL, "weft_mpi_function_compile: "
                                                "MPI_COMM_NULL");
    if ((n_in && !inputs) || (n_out && !outputs) || n_out + n_upd == 0)
        return wm__error(WEFT_EINVAL, "weft_mpi_function_compile: NULL arrays, or neither "
                         "outputs nor updates");
    for (size_t k = 0; k < n_in; k++)
        if (!inputs[k]) return wm__error(WEFT_EINVAL, "weft_mpi_function_compile: input %zu is "
                                         "NULL", k);
    for (size_t k = 0; k < n_out; k++)
        if (!outputs[k]) return wm__error(WEFT_EINVAL, "weft_mpi_function_compile: output %zu "
                                          "is NULL", k);
    if (o && o->size < sizeof(weft_mpi_options_t))
        return wm__error(WEFT_EINVAL, "weft_mpi_function_compile: options size %zu too small",
                         o->size);
    if (o && o->placement != WEFT_MPI_PLACE_OWNER && o->placement != WEFT_MPI_PLACE_METIS)
        return wm__error(WEFT_EINVAL, "weft_mpi_function_compile: unknown placement %d",
                         (int)o->placement);
    weft_graph_t *g = weft_var_graph(n_out ? outputs[0] : upd[0].value);
    if (weft_graph_error(g) != WEFT_OK)
        return wm__error(weft_graph_error(g), "weft_mpi_function_compile: the graph has an "
                         "error: %s", weft_graph_error_message(g));
    return check_mpi();
}

static weft_status_t init_comm(weft_mpi_function_t *f, MPI_Comm comm)
{
    int *ub = NULL, flag = 0;
    if (MPI_Comm_dup(comm, &f->data) != MPI_SUCCESS || MPI_Comm_dup(comm, &f->ctl) != MPI_SUCCESS)
        return wm__error(WEFT_ESYSTEM, "weft_mpi_function_compile: MPI_Comm_dup failed");
    MPI_Comm_rank(comm, &f->rank);
    MPI_Comm_size(comm, &f->size);
    MPI_Comm_get_attr(comm, MPI_TAG_UB, &ub, &flag);
    f->tag_ub = flag && ub && *ub > 0 ? *ub : 32767;
    f->rt.rank = f->rank;
    f->rt.size = f->size;
    return WEFT_OK;
}

weft_status_t weft_mpi_function_compile(MPI_Comm comm, size_t n_in, weft_var_t *const *inputs,
                                        size_t n_out, weft_var_t *const *outputs,
                                        const weft_mpi_options_t *opts,
                                        weft_mpi_function_t **out)
{
    return weft_mpi_function_compile_updates(comm, n_in, inputs, n_out, outputs, 0, NULL, opts,
                                             out);
}

weft_status_t weft_mpi_function_compile_updates(MPI_Comm comm, size_t n_in,
                                                weft_var_t *const *inputs, size_t n_out,
                                                weft_var_t *const *outputs, size_t n_upd,
                                                const weft_update_t *upd,
                                                const weft_mpi_options_t *opts,
                                                weft_mpi_function_t **out)
{
    last_error[0] = '\0';
    if (out) *out = NULL;
    weft_status_t st = check_updates_args(n_upd, upd);
    if (st == WEFT_OK) st = check_args(comm, n_in, inputs, n_out, outputs, n_upd, upd, opts, out);
    if (st != WEFT_OK) return st;
    weft_mpi_options_t o = WEFT_MPI_OPTIONS_INIT;
    if (opts) o = *opts;
    weft_mpi_function_t *f = calloc(1, sizeof *f);
    if (!f) return wm__error(WEFT_ENOMEM, "weft_mpi_function_compile: out of memory");
    pthread_mutex_init(&f->rt.mu, NULL);
    pthread_mutex_init(&f->rt.comm_mu, NULL);
    pthread_cond_init(&f->rt.comm_cv, NULL);
    cpu_set_t cpus;
    f->rt.yield_on_kick = sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) == 1;
    f->data = f->ctl = MPI_COMM_NULL;
    f->n_in = n_in;
    f->n_out = n_out;
    f->timeout_s = o.timeout_s > 0 ? o.timeout_s : 60.0;
    f->agree = calloc(1, sizeof *f->agree);
    st = f->agree ? init_comm(f, comm) : wm__error(WEFT_ENOMEM, "weft_mpi_function_compile: "
                                                   "out of memory");
    if (st == WEFT_OK)
        st = wm__partition(n_in, inputs, n_out, outputs, n_upd, upd, &o, f->size, &f->part);
    if (st == WEFT_OK) st = wm__build_local(f, n_in, inputs, n_out, outputs, &o);
    if (st != WEFT_OK) {
        char keep[sizeof last_error];
        memcpy(keep, last_error, sizeof keep);
        weft_mpi_function_destroy(f);
        memcpy(last_error, keep, sizeof keep);
        return st;
    }
    *out = f;
    return WEFT_OK;
}

/* Agreement blocks of functions destroyed after a timeout: MPI may still
 * complete their requests into them, so they stay allocated (and reachable)
 * until the process exits. */
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static wm_agree_t *kept;

static void keep_agree(wm_agree_t *a)
{
    pthread_mutex_lock(&kept_lock);
    a->next = kept;
    kept = a;
    pthread_mutex_unlock(&kept_lock);
}

/* Likewise the local function of a broken one: a send left to MPI may read
 * its value's memory, which the local function's arena holds. */
static weft_function_t **kept_fns;
static size_t n_kept_fns;

static void keep_local(weft_function_t *fn)
{
    if (!fn) return;
    pthread_mutex_lock(&kept_lock);
    weft_function_t **k = realloc(kept_fns, (n_kept_fns + 1) * sizeof *k);
    /* out of memory: dropped unreachable (a leak, never freed under MPI) */
    if (k) kept_fns = k, kept_fns[n_kept_fns++] = fn;
    pthread_mutex_unlock(&kept_lock);
}

/* Likewise buffers of requests left to MPI (wm__abandon). */
static weft_tensor_t **kept_bufs;
static size_t n_kept_bufs, cap_kept_bufs;

void wm__keep_buffer(weft_tensor_t *t)
{
    if (!t) return;
    pthread_mutex_lock(&kept_lock);
    if (n_kept_bufs == cap_kept_bufs) {
        size_t cap = cap_kept_bufs ? 2 * cap_kept_bufs : 16;
        weft_tensor_t **k = realloc(kept_bufs, cap * sizeof *k);
        if (k) kept_bufs = k, cap_kept_bufs = cap;
    }
    /* out of memory: the reference is dropped unreachable (a leak, never a
     * buffer freed under MPI) */
    if (n_kept_bufs < cap_kept_bufs) kept_bufs[n_kept_bufs++] = weft_tensor_retain(t);
    else weft_tensor_retain(t);
    pthread_mutex_unlock(&kept_lock);
}

weft_status_t weft_mpi_function_destroy(weft_mpi_function_t *f)
{
    if (!f) return WEFT_OK;
    if (f->busy) return wm__error(WEFT_EBUSY, "weft_mpi_function_destroy: a call is in flight");
    wm__drain_orphans(f, true);
    if (f->broken && f->reqs) wm__abandon(f);
    if (f->broken) keep_local(f->local);
    else weft_function_destroy(f->local);
    if (!f->broken) free(f->agree);
    else keep_agree(f->agree);
    wm__free_runtime(f);
    wm__part_free(&f->part);
    /* after a timeout, requests may still be pending on them: Open MPI does
     * not survive freeing a communicator under a pending collective, so a
     * broken function's communicators are left to MPI_Finalize */
    if (f->data != MPI_COMM_NULL && !f->broken) MPI_Comm_free(&f->data);
    if (f->ctl != MPI_COMM_NULL && !f->broken) MPI_Comm_free(&f->ctl);
    pthread_mutex_destroy(&f->rt.mu);
    pthread_mutex_destroy(&f->rt.comm_mu);
    pthread_cond_destroy(&f->rt.comm_cv);
    free(f);
    return WEFT_OK;
}

static weft_status_t bind_args(weft_mpi_function_t *f, size_t n_in, weft_tensor_t *const *inputs,
                               size_t n_out, weft_tensor_t **outputs)
{
    if ((n_in && !inputs) || (n_out && !outputs) || n_in != f->n_in || n_out != f->n_out)
        return wm__error(WEFT_EINVAL, "weft_mpi_function_call: expected %zu inputs and %zu "
                         "outputs, got %zu and %zu (or NULL arrays)", f->n_in, f->n_out, n_in,
                         n_out);
    for (size_t k = 0; k < n_in; k++) {
        if (f->in_local[k] < 0) continue;
        if (!inputs[k])
            return wm__error(WEFT_EINVAL, "weft_mpi_function_call: rank %d owns input %zu "
                             "but got NULL", f->rank, k);
        f->lin[f->in_local[k]] = inputs[k];
    }
    for (size_t k = 0; k < n_out; k++)
        if (f->out_local[k] >= 0) f->lout[f->out_local[k]] = outputs[k];
    for (size_t k = 0; k < f->n_keep; k++) f->lout[f->n_lout + k] = f->keep[k];
    return WEFT_OK;
}

/* Hands the local outputs over; on a failed call, takes back the tensors
 * the local call created for NULL slots. */
static void deliver(weft_mpi_function_t *f, size_t n_out, weft_tensor_t **outputs, bool ok)
{
    for (size_t k = 0; k < n_out; k++) {
        int l = f->out_local[k];
        if (l < 0 || outputs[k] == f->lout[l]) continue;
        if (ok) outputs[k] = f->lout[l];
        else weft_tensor_release(f->lout[l]);
    }
}

weft_status_t weft_mpi_function_call(weft_mpi_function_t *f, size_t n_in,
                                     weft_tensor_t *const *inputs, size_t n_out,
                                     weft_tensor_t **outputs)
{
    last_error[0] = '\0';
    if (!f) return wm__error(WEFT_EINVAL, "weft_mpi_function_call: NULL function");
    if (f->broken)
        return wm__error(WEFT_ESTATE, "weft_mpi_function_call: rank %d: a peer timed out in "
                         "an earlier call; the function cannot be called again", f->rank);
    weft_status_t st = bind_args(f, n_in, inputs, n_out, outputs);
    if (st != WEFT_OK) return st;
    f->busy = true;
    char msg[1400];
    st = wm__call(f, msg, sizeof msg);
    f->busy = false;
    weft_status_t ust = wm__unshare_recv_buffers(f);
    if (st == WEFT_OK && ust != WEFT_OK) {
        f->broken = true; /* a receive would overwrite a result: no further call */
        snprintf(msg, sizeof msg, "%s", weft_mpi_last_error());
        st = ust;
    }
    weft_status_t cst = wm__commit_updates(f, inputs, st == WEFT_OK);
    deliver(f, n_out, outputs, st == WEFT_OK && cst == WEFT_OK);
    if (st != WEFT_OK) wm__error(st, "%s", msg);
    return st != WEFT_OK ? st : cst;
}

bool weft_mpi_function_gives_input(const weft_mpi_function_t *f, size_t k)
{
    return f && k < f->n_in && f->in_local[k] >= 0;
}

bool weft_mpi_function_gets_output(const weft_mpi_function_t *f, size_t k)
{
    return f && k < f->n_out && f->out_local[k] >= 0;
}

int weft_mpi_function_node_rank(const weft_mpi_function_t *f, const weft_apply_t *a)
{
    if (!f || !a) return WM_NOT_IN_F;
    for (size_t j = 0; j < f->part.n_applies; j++)
        if (f->part.applies[j] == a) return f->part.node_rank[j];
    return WM_NOT_IN_F;
}

weft_function_t *weft_mpi_function_local(const weft_mpi_function_t *f)
{
    return f ? f->local : NULL;
}

weft_status_t weft_mpi_function_stats(const weft_mpi_function_t *f, weft_mpi_stats_t *out)
{
    if (!f || !out || out->size < sizeof *out)
        return wm__error(WEFT_EINVAL, "weft_mpi_function_stats: NULL or short arguments");
    memset((char *)out + sizeof out->size, 0, sizeof *out - sizeof out->size);
    out->calls = f->calls;
    out->collectives = (uint32_t)f->rt.n_colls;
    for (size_t j = 0; j < f->part.n_applies; j++) out->nodes += wm__runs_on(&f->part, j, f->rank);
    for (size_t m = 0; m < f->rt.n_msgs; m++) {
        const wm_msg_t *g = &f->rt.msgs[m];
        if (g->src == f->rank) out->messages_out++, out->bytes_out += g->bytes;
        if (g->dst == f->rank) out->messages_in++, out->bytes_in += g->bytes;
    }
    return WEFT_OK;
}
