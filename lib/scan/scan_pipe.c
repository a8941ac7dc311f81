/* Running a pipelined Scan (scan_pipe.h): the steps as a DAG of
 * (stage, step) tasks, built once per step count and pool and kept with
 * the plan cell, run as a nested DAG run on the node's pool (a worker that
 * waits keeps executing ready work, docs/execution.md §3.3: no deadlock at
 * one worker nor with nested scans). Task ids go step by step, stages in
 * order within a step; a carried stage's first successor is its own next
 * step, so the chain continues on the worker that ran it while the other
 * ready tasks (later steps' pre stage, the accumulators of this step) are
 * pushed for the other workers.
 *
 * Every task computes one stage of one step with the same function
 * whatever the worker count, and every value it reads is complete before it
 * starts (DAG edges): the same bits at any worker count. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan_pipe.h"
#include "tensor/tensor_int.h"

struct weft__pipe_task {
    weft__scan_pipe_t *pp;
    uint32_t stage;
    int64_t t;
    weft_tensor_t **h; /* view handles: the stage's arguments, then its results */
};

weft_status_t weft__scan_view(weft_tensor_t **h, weft_tensor_t *base, int nd, const int64_t *shape,
                              const int64_t *strides, int64_t off)
{
    if (*h && weft_tensor_ndim(*h) == nd && weft__tensor_handle_alone(*h)) {
        size_t item = weft_dtype_size(weft_tensor_dtype(base));
        char *data = (char *)weft_tensor_data(base) + off * (int64_t)item;
        weft__tensor_repoint(*h, base, shape, strides, data);
        return WEFT_OK;
    }
    weft_tensor_release(*h);
    *h = NULL;
    return weft_tensor_view(base, nd, shape, strides, off, h);
}

weft_status_t weft__scan_row_view(weft_tensor_t **h, weft_tensor_t *base, int64_t row)
{
    return weft__scan_view(h, base, weft_tensor_ndim(base) - 1, weft_tensor_shape(base) + 1,
                           weft_tensor_strides(base) + 1, row * weft_tensor_stride(base, 0));
}

/* Inner input a at step t: a sequence row, a carried state (a row of the
 * output, or before step 0 the initial value or its row), a non-sequence. */
static weft_status_t inner_input(const weft__pipe_io_t *io, size_t a, int64_t t,
                                 weft_tensor_t **h, weft_tensor_t **v)
{
    const weft__scan_layout_t *l = io->l;
    for (uint32_t q = 0; q < l->n_seq; q++) {
        if (a < l->seq_ntaps[q]) {
            int64_t row = (l->reverse ? io->n - 1 - t : t) + l->seq_taps[q][a] - l->seq_taps[q][0];
            weft_status_t s = weft__scan_row_view(h, io->in[1 + q], row);
            *v = *h;
            return s;
        }
        a -= l->seq_ntaps[q];
    }
    for (uint32_t o = 0; o < l->n_out; o++) {
        if (a >= l->out_ntaps[o]) {
            a -= l->out_ntaps[o];
            continue;
        }
        int64_t j = t + l->out_taps[o][a], lag = weft__scan_lag(l, o);
        weft_tensor_t *init = io->in[io->init_pos[o]];
        if (j < 0 && l->out_ntaps[o] == 1 && lag == 1) {
            *v = init;
            return WEFT_OK;
        }
        if (j >= 0 && (io->last_mask >> o & 1)) {
            *v = io->ring[o][(io->n - 1 - j) % io->period[o]];
            return WEFT_OK;
        }
        weft_status_t s = j >= 0 ? weft__scan_row_view(h, io->out[o], j)
                                 : weft__scan_row_view(h, init, lag + j);
        *v = *h;
        return s;
    }
    *v = io->in[1 + l->n_seq + weft__scan_n_carry(l) + a];
    return WEFT_OK;
}

int64_t weft__pipe_x_slot(const weft__scan_pipe_t *pp, int64_t t)
{
    const weft__pipe_io_t *io = pp->io;
    int64_t rows = io->n < pp->ring ? io->n : pp->ring;
    return io->l->reverse ? rows - 1 - t % pp->ring : t % pp->ring;
}

static weft_status_t source(weft__scan_pipe_t *pp, weft__pipe_src_t src, int64_t t,
                            weft_tensor_t **h, weft_tensor_t **v)
{
    const weft__pipe_io_t *io = pp->io;
    if (src.kind == WEFT__PIPE_IN) return inner_input(io, src.idx, t, h, v);
    if (src.kind == WEFT__PIPE_OUT && (io->last_mask >> src.idx & 1)) {
        *v = io->ring[src.idx][(io->n - 1 - t) % io->period[src.idx]];
        return WEFT_OK;
    }
    weft_status_t s = src.kind == WEFT__PIPE_OUT
                          ? weft__scan_row_view(h, io->out[src.idx], t)
                          : weft__scan_row_view(h, pp->x_rows[src.idx], weft__pipe_x_slot(pp, t));
    *v = *h;
    return s;
}

/* Keeps the failure of the earliest step (the message the sequential loop
 * would give when one step fails). */
static weft_status_t task_fail(weft__pipe_task_t *k, weft_status_t s, const char *msg)
{
    weft__scan_pipe_t *pp = k->pp;
    pthread_mutex_lock(&pp->lock);
    if (pp->bad_step < 0 || k->t < pp->bad_step) {
        pp->bad_step = k->t;
        snprintf(pp->msg, sizeof pp->msg, "step %lld: %s", (long long)k->t, msg);
    }
    pthread_mutex_unlock(&pp->lock);
    return s;
}

static weft_status_t task_body(void *arg, const weft_task_ctx_t *tc)
{
    (void)tc;
    weft__pipe_task_t *k = arg;
    weft__scan_pipe_t *pp = k->pp;
    const weft__pipe_stage_t *st = &pp->st[k->stage];
    weft_tensor_t *args[WEFT__PIPE_MAX_ARGS], *res[WEFT_OP_MAX_OUTPUTS + WEFT__PIPE_MAX_X];
    weft_status_t s = WEFT_OK;
    if (st->chunk) {
        const char *msg = NULL;
        s = weft__pipe_chunk_run(pp, st, k->t, k->h, &msg);
        return s == WEFT_OK ? s : task_fail(k, s, msg);
    }
    for (size_t i = 0; i < st->n_args && s == WEFT_OK; i++)
        s = source(pp, st->args[i], k->t, &k->h[i], &args[i]);
    for (size_t i = 0; i < st->n_res && s == WEFT_OK; i++)
        s = source(pp, st->res[i], k->t, &k->h[st->n_args + i], &res[i]);
    if (s != WEFT_OK) return task_fail(k, s, weft_tensor_last_error());
    s = weft_function_call(st->f, st->n_args, args, st->n_res, res);
    return s == WEFT_OK ? s : task_fail(k, s, weft_function_last_error(st->f));
}

/* ---- the DAG ------------------------------------------------------------------ */

/* The rings of the crossing values (step t in row weft__pipe_x_slot),
 * kept with the DAG: warm calls allocate nothing. */
static weft_status_t x_alloc(weft__scan_pipe_t *pp, int64_t n)
{
    weft_status_t s = WEFT_OK;
    for (size_t x = 0; x < pp->n_x && s == WEFT_OK; x++) {
        int64_t shape[WEFT_MAX_NDIM];
        shape[0] = n < pp->ring ? n : pp->ring;
        memcpy(shape + 1, pp->x_shape[x], (size_t)pp->x_nd[x] * sizeof *shape);
        s = weft_tensor_empty(pp->x_dt[x], pp->x_nd[x] + 1, shape, &pp->x_rows[x]);
    }
    return s;
}

static void dag_free(weft__scan_pipe_t *pp)
{
    for (size_t x = 0; x < pp->n_x; x++) {
        weft_tensor_release(pp->x_rows[x]);
        pp->x_rows[x] = NULL;
    }
    weft_dag_run_destroy(pp->run);
    weft_dag_destroy(pp->dag);
    for (size_t i = 0; i < pp->n_handles; i++) weft_tensor_release(pp->handles[i]);
    free(pp->handles);
    free(pp->tasks);
    pp->run = NULL;
    pp->dag = NULL;
    pp->handles = NULL;
    pp->tasks = NULL;
    pp->n_handles = pp->n_tasks = 0;
    pp->dag_n = 0;
}

static uint32_t task_id(const weft__scan_pipe_t *pp, size_t stage, int64_t t)
{
    return (uint32_t)((size_t)t * pp->n_stages + stage);
}

static weft_status_t dag_nodes(weft__scan_pipe_t *pp, int64_t n)
{
    size_t per_step = 0;
    for (size_t s = 0; s < pp->n_stages; s++) per_step += pp->st[s].n_args + pp->st[s].n_res;
    pp->n_tasks = (size_t)n * pp->n_stages;
    pp->n_handles = (size_t)n * per_step;
    pp->tasks = calloc(pp->n_tasks, sizeof *pp->tasks);
    pp->handles = calloc(pp->n_handles, sizeof *pp->handles);
    if (!pp->tasks || !pp->handles) return WEFT_ENOMEM;
    weft_status_t s = WEFT_OK;
    size_t hpos = 0;
    for (int64_t t = 0; t < n; t++)
        for (size_t q = 0; q < pp->n_stages && s == WEFT_OK; q++) {
            weft__pipe_task_t *k = &pp->tasks[task_id(pp, q, t)];
            *k = (weft__pipe_task_t){pp, (uint32_t)q, t, pp->handles + hpos};
            hpos += pp->st[q].n_args + pp->st[q].n_res;
            s = weft_dag_add_node(pp->dag, task_body, k, NULL, NULL);
        }
    return s;
}

static weft_status_t dag_build(weft__scan_pipe_t *pp, int64_t n, weft_pool_t *pool)
{
    dag_free(pp);
    weft_status_t s = weft_dag_create(NULL, &pp->dag);
    if (s == WEFT_OK) s = dag_nodes(pp, n);
    if (s == WEFT_OK) s = x_alloc(pp, n);
    for (int64_t t = 0; t < n && s == WEFT_OK; t++)
        for (size_t q = 0; q < pp->n_stages && s == WEFT_OK; q++)
            for (size_t e = 0; e < pp->st[q].n_succ && s == WEFT_OK; e++) {
                weft__pipe_succ_t u = pp->st[q].succ[e];
                if (t + u.dt < n)
                    s = weft_dag_add_edge(pp->dag, task_id(pp, q, t), task_id(pp, u.stage, t + u.dt));
            }
    if (s == WEFT_OK) s = weft_dag_finalize(pp->dag);
    if (s == WEFT_OK) s = weft_dag_run_create(pp->dag, pool, NULL, &pp->run);
    if (s != WEFT_OK) {
        snprintf(pp->msg, sizeof pp->msg, "%s",
                 pp->dag && *weft_dag_last_error(pp->dag) ? weft_dag_last_error(pp->dag)
                                                          : "out of memory");
        dag_free(pp);
        return s;
    }
    pp->dag_n = n;
    pp->dag_pool = pool;
    return WEFT_OK;
}


weft_status_t weft__scan_pipe_run(weft__scan_pipe_t *pp, const weft__pipe_io_t *io,
                                  weft_kernel_ctx_t *ctx)
{
    weft_pool_t *pool = ctx->pool;
    weft_status_t s = WEFT_OK;
    pp->bad_step = -1;
    if (io->n < 1) return WEFT_OK;
    if (pp->dag_n != io->n || pp->dag_pool != pool) s = dag_build(pp, io->n, pool);
    if (s != WEFT_OK) return s;
    pp->io = io;
    s = weft_dag_run_execute(pp->run, pp);
    /* the rows' buffers go back to the outer function's pool (scan_park.c) */
    weft__scan_views_park(pp->handles, pp->n_handles);
    return s;
}

void weft__scan_pipe_destroy(weft__scan_pipe_t *pp)
{
    if (!pp) return;
    dag_free(pp);
    for (size_t k = 0; k < pp->n_stages; k++) {
        weft_function_destroy(pp->st[k].f);
        weft_function_destroy(pp->st[k].chunk_f);
    }
    pthread_mutex_destroy(&pp->lock);
    free(pp);
}
