/* Running a Scan node: the inner graph compiled once per plan cell (one per
 * outer call state, docs/execution.md §3.7) as a weft_function_t on the pool
 * running the node, then one call of it per step (a nested run on the same
 * pool: the waiting worker keeps executing ready work, execution.md §3.3).
 *
 * Storage: a stacked output is allocated once as (n_steps, S...) and step t
 * writes straight into its row t (the inner function writes caller-supplied
 * outputs directly, execution.md §4.7), which later steps read through a
 * view: no state is copied. An output that returns its last state only
 * (scan_save_mem) keeps a ring of lag + 1 states: step t writes state
 * (n - 1 - t) mod (lag + 1), so the last step writes ring[0], the node's
 * output. Storage whose shape is known before step 0 (carried outputs,
 * complete static types) is allocated before it, so that step 0 writes in
 * place like the others and a warm call allocates nothing; otherwise step
 * 0 lets the inner function allocate its results, whose shapes are checked
 * against the carried states with named errors, and copies them into place
 * once. A one-node inner graph runs its kernel directly (scan_direct.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan_direct.h"
#include "scan_int.h"
#include "scan_pipe.h"
#include "tensor/kernel_int.h"
#include "tensor/tensor_int.h"
#include "weft/function.h"
#include "weft/kernel.h"

#define MAX_RING (WEFT_SCAN_MAX_TAPS + 1)

typedef struct scan_rt scan_rt_t;

/* ---- one run of the node -------------------------------------------------------- */

typedef struct run {
    const weft__scan_props_t *p;
    const weft__scan_layout_t *l;
    const weft_apply_t *node;
    weft_tensor_t *const *in; /* outer inputs */
    weft_tensor_t **out;      /* outer output cells */
    weft_kernel_ctx_t *ctx;
    scan_rt_t *rt;
    int64_t n;                                  /* steps (at most) */
    size_t init_pos[WEFT_OP_MAX_OUTPUTS];       /* outer input of output o's init */
    size_t slot0[WEFT_OP_MAX_OUTPUTS];          /* output o's first inner tap input */
    weft_tensor_t *ring[WEFT_OP_MAX_OUTPUTS][MAX_RING];
    int64_t period[WEFT_OP_MAX_OUTPUTS];        /* ring length (last-state outputs) */
    bool stored[WEFT_OP_MAX_OUTPUTS];           /* storage allocated */
    bool direct;                                /* steps run the one node's kernel */
    weft_tensor_t *args[WEFT__SCAN_MAX_INNER_IN];
    weft_tensor_t *res[WEFT_OP_MAX_OUTPUTS + 1];
} run_t;

/* What a plan cell keeps between calls: the compiled inner function, the
 * direct kernel of a one-node inner graph, the view handles rebuilt in place
 * every step and the run's state (no allocation per call). */
struct scan_rt {
    weft_function_t *f;
    weft__scan_direct_t direct;
    weft__scan_pipe_t *pipe; /* stages run as a pipeline over the steps (scan_pipe.h) */
    weft_tensor_t *in_view[WEFT__SCAN_MAX_INNER_IN];
    weft_tensor_t *out_view[WEFT_OP_MAX_OUTPUTS];
    weft_tensor_t *until_t;
    run_t run;
};

static void rt_fini(void *pv)
{
    scan_rt_t *rt = pv;
    weft_function_destroy(rt->f);
    for (size_t i = 0; i < WEFT__SCAN_MAX_INNER_IN; i++) weft_tensor_release(rt->in_view[i]);
    for (size_t o = 0; o < WEFT_OP_MAX_OUTPUTS; o++) weft_tensor_release(rt->out_view[o]);
    weft_tensor_release(rt->until_t);
    weft__scan_direct_fini(&rt->direct);
    weft__scan_pipe_destroy(rt->pipe);
    memset(rt, 0, sizeof *rt);
}

/* The interned inner graph is shared by every equal Scan of the process:
 * compiles read it one at a time. */
static pthread_mutex_t compile_lock = PTHREAD_MUTEX_INITIALIZER;

/* pipeline: also split the loop into pipelined stages (scan_pipe.h) when
 * it splits; only with a plan cell, which keeps its DAG across calls, and a
 * pool. */
static weft_status_t rt_compile(scan_rt_t *rt, const weft__scan_props_t *p,
                                weft_kernel_ctx_t *ctx, bool pipeline)
{
    const weft_fgraph_t *fg = p->core->fg;
    size_t n_in = weft_fgraph_n_inputs(fg), n_out = weft_fgraph_n_outputs(fg);
    weft_var_t *in[WEFT__SCAN_MAX_INNER_IN], *out[WEFT_OP_MAX_OUTPUTS + 1];
    for (size_t k = 0; k < n_in; k++) in[k] = weft_fgraph_input(fg, k);
    for (size_t k = 0; k < n_out; k++) out[k] = weft_fgraph_output(fg, k);
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.pool = ctx->pool; /* NULL (the evaluator): the process-wide default pool */
    o.name = p->name[0] ? p->name : "scan";
    /* An output computed in place is a destroy output, which the function
     * must copy into the caller's tensor (docs/execution.md §4.7); without
     * the inplace pass each step's results are written straight into their
     * rows, and the intermediates still share memory through the static
     * memory plan (§4.6). */
    static const char *const no_inplace[1] = {"inplace"};
    o.exclude = no_inplace;
    o.n_exclude = 1;
    pthread_mutex_lock(&compile_lock);
    weft_status_t s = weft_function_compile(n_in, in, n_out, out, 0, NULL, &o, &rt->f);
    if (s == WEFT_OK && pipeline && ctx->pool) s = weft__scan_pipe_build(p, &o, &rt->pipe);
    pthread_mutex_unlock(&compile_lock);
    if (s != WEFT_OK)
        return weft_kernel_error(ctx, s, "compiling the inner graph: %s",
                                 weft_function_last_error(NULL));
    weft__scan_direct_init(&rt->direct, p->core);
    return WEFT_OK;
}

static weft_status_t row_view(weft_kernel_ctx_t *ctx, weft_tensor_t **h, weft_tensor_t *base,
                              int64_t row)
{
    weft_status_t s = weft__scan_row_view(h, base, row);
    return s == WEFT_OK ? s : weft_kernel_error(ctx, s, "%s", weft_tensor_last_error());
}


static const char *label(const run_t *r)
{
    return r->p->name[0] ? r->p->name : "Scan";
}

static bool is_last(const run_t *r, size_t o)
{
    return (r->p->last_mask >> o) & 1;
}

static bool is_ring(const run_t *r, size_t o, const weft_tensor_t *t)
{
    for (size_t k = 0; t && k < MAX_RING; k++)
        if (r->ring[o][k] == t) return true;
    return false;
}

/* The step count, checking every sequence is long enough. */
static weft_status_t count_steps(run_t *r)
{
    int64_t n = *(const int64_t *)weft_tensor_data(r->in[0]);
    bool from_seqs = n < 0;
    for (uint32_t s = 0; from_seqs && s < r->l->n_seq; s++) {
        const int64_t *taps = r->l->seq_taps[s];
        int64_t avail = weft_tensor_dim(r->in[1 + s], 0) - (taps[r->l->seq_ntaps[s] - 1] - taps[0]);
        if (avail < 0) avail = 0;
        if (s == 0 || avail < n) n = avail;
    }
    if (n < 0) n = 0;
    for (uint32_t s = 0; s < r->l->n_seq; s++) {
        const int64_t *taps = r->l->seq_taps[s];
        int64_t need = n + taps[r->l->seq_ntaps[s] - 1] - taps[0];
        if (weft_tensor_dim(r->in[1 + s], 0) >= need) continue;
        char vb[200];
        weft__scan_describe_var(weft_apply_input(r->node, 1 + s), vb, sizeof vb);
        return weft_kernel_error(r->ctx, WEFT_ESHAPE,
                                 "%s: sequence %u (%s) has %lld rows; %lld steps with taps "
                                 "%lld..%lld need %lld",
                                 label(r), s, vb, (long long)weft_tensor_dim(r->in[1 + s], 0),
                                 (long long)n, (long long)taps[0],
                                 (long long)taps[r->l->seq_ntaps[s] - 1], (long long)need);
    }
    r->n = n;
    return WEFT_OK;
}

/* The tensor output o's step j lives in (j in [0, n)). */
static weft_status_t storage(run_t *r, size_t o, int64_t j, weft_tensor_t **h, weft_tensor_t **t)
{
    if (is_last(r, o)) {
        *t = r->ring[o][(r->n - 1 - j) % r->period[o]];
        return WEFT_OK;
    }
    weft_status_t s = row_view(r->ctx, h, r->out[o], j);
    *t = *h;
    return s;
}

/* Inner inputs of step t. */
static weft_status_t gather(run_t *r, int64_t t)
{
    const weft__scan_layout_t *l = r->l;
    size_t a = 0;
    weft_status_t s = WEFT_OK;
    for (uint32_t q = 0; q < l->n_seq; q++)
        for (uint32_t k = 0; k < l->seq_ntaps[q] && s == WEFT_OK; k++, a++) {
            s = row_view(r->ctx, &r->rt->in_view[a], r->in[1 + q],
                         (l->reverse ? r->n - 1 - t : t) + l->seq_taps[q][k] - l->seq_taps[q][0]);
            r->args[a] = r->rt->in_view[a];
        }
    for (uint32_t o = 0; o < l->n_out; o++)
        for (uint32_t k = 0; k < l->out_ntaps[o] && s == WEFT_OK; k++, a++) {
            int64_t j = t + l->out_taps[o][k], lag = weft__scan_lag(l, o);
            weft_tensor_t *init = r->in[r->init_pos[o]];
            if (j >= 0) {
                s = storage(r, o, j, &r->rt->in_view[a], &r->args[a]);
            } else if (l->out_ntaps[o] == 1 && lag == 1) {
                r->args[a] = init;
            } else {
                s = row_view(r->ctx, &r->rt->in_view[a], init, lag + j);
                r->args[a] = r->rt->in_view[a];
            }
        }
    size_t ns = 1 + l->n_seq + weft__scan_n_carry(l);
    for (uint32_t k = 0; k < l->n_nonseq; k++) r->args[a++] = r->in[ns + k];
    return s;
}

/* The shape of output o's state: from its initial value when carried, else
 * from the update's static type when it is complete; false when unknown. */
static bool state_shape(const run_t *r, size_t o, int *nd, int64_t *shape)
{
    const weft__scan_layout_t *l = r->l;
    if (l->out_ntaps[o]) {
        const weft_tensor_t *init = r->in[r->init_pos[o]];
        int drop = !(l->out_ntaps[o] == 1 && weft__scan_lag(l, o) == 1);
        *nd = weft_tensor_ndim(init) - drop;
        memcpy(shape, weft_tensor_shape(init) + drop, (size_t)*nd * sizeof *shape);
        return true;
    }
    const weft_type_t *u = weft_var_type(weft_fgraph_output(r->p->core->fg, o));
    *nd = weft_type_ndim(u);
    for (int d = 0; d < *nd; d++)
        if ((shape[d] = weft_type_dim(u, d)) < 0) return false;
    return true;
}

/* Allocates output o's storage for states of shape (nd, shape). */
static weft_status_t make_storage(run_t *r, size_t o, int nd, const int64_t *shape)
{
    weft_dtype_t dt = weft_type_dtype(weft_var_type(weft_fgraph_output(r->p->core->fg, o)));
    weft_status_t s;
    if (is_last(r, o)) {
        r->period[o] = weft__scan_lag(r->l, o) + 1;
        s = weft_kernel_alloc_output(r->ctx, &r->out[o], dt, nd, shape);
        r->ring[o][0] = r->out[o];
        for (int64_t k = 1; k < r->period[o] && s == WEFT_OK; k++)
            s = weft_kernel_scratch(r->ctx, dt, nd, shape, &r->ring[o][k]);
    } else {
        int64_t full[WEFT_MAX_NDIM];
        full[0] = r->n;
        memcpy(full + 1, shape, (size_t)nd * sizeof *shape);
        s = weft_kernel_alloc_output(r->ctx, &r->out[o], dt, nd + 1, full);
    }
    r->stored[o] = s == WEFT_OK;
    return s;
}

static weft_status_t shape_error(run_t *r, size_t o, const weft_tensor_t *got, int nd,
                                 const int64_t *want)
{
    char ub[200], ib[200], gb[96], wb[96];
    weft__scan_describe_var(weft_fgraph_output(r->p->core->fg, o), ub, sizeof ub);
    weft__scan_describe_var(weft_apply_input(r->node, r->init_pos[o]), ib, sizeof ib);
    weft_tensor_print_type(got, gb, sizeof gb);
    int len = 0;
    wb[0] = '\0';
    for (int d = 0; d < nd && (size_t)len < sizeof wb; d++)
        len += snprintf(wb + len, sizeof wb - (size_t)len, "%s%lld", d ? ", " : "",
                        (long long)want[d]);
    return weft_kernel_error(r->ctx, WEFT_ESHAPE,
                             "%s: output %zu: the update (%s) is %s at step 0, but the carried "
                             "state (initial value %s) has shape (%s)",
                             label(r), o, ub, gb, ib, wb);
}

/* After step 0: checks the carried shapes of the results the inner
 * function handed over (outputs whose storage was not allocated before the
 * step), allocates their storage and copies the step's values into it. */
static weft_status_t place_first(run_t *r)
{
    weft_status_t s = WEFT_OK;
    for (uint32_t o = 0; o < r->l->n_out && s == WEFT_OK; o++) {
        weft_tensor_t *v = r->res[o];
        if (r->stored[o]) continue;
        int nd = 0;
        int64_t shape[WEFT_MAX_NDIM];
        if (r->l->out_ntaps[o] && state_shape(r, o, &nd, shape) &&
            (nd != weft_tensor_ndim(v) ||
             memcmp(shape, weft_tensor_shape(v), (size_t)nd * sizeof *shape)))
            return shape_error(r, o, v, nd, shape);
        s = make_storage(r, o, weft_tensor_ndim(v), weft_tensor_shape(v));
        weft_tensor_t *dst = NULL;
        if (s == WEFT_OK) s = storage(r, o, 0, &r->rt->out_view[o], &dst);
        if (s == WEFT_OK) weft_tensor_copy(dst, v); /* same dtype and shape */
    }
    return s;
}

/* Before step 0: the storage of every output whose state shape is known (a
 * carried output's, from its initial value; a complete static type), so
 * that step 0 writes into it like any other step and a warm call allocates
 * nothing. A step-0 result of another shape is then refused by the inner
 * function, and step 0 runs again unsupplied for the named error
 * (step0_retry). */
static weft_status_t preallocate(run_t *r)
{
    weft_status_t s = WEFT_OK;
    for (uint32_t o = 0; o < r->l->n_out && s == WEFT_OK; o++) {
        int nd = 0;
        int64_t shape[WEFT_MAX_NDIM];
        if (state_shape(r, o, &nd, shape)) s = make_storage(r, o, nd, shape);
    }
    return s;
}

/* Step 0's results are handed over by the inner function when their storage
 * was not allocated before; the others are borrowed views (rt->out_view) or
 * ring states, released elsewhere. */
static void release_results(run_t *r)
{
    for (uint32_t o = 0; o < r->l->n_out; o++) {
        if (r->res[o] != r->rt->out_view[o] && !is_ring(r, o, r->res[o]))
            weft_tensor_release(r->res[o]);
        r->res[o] = NULL;
    }
}

static bool all_stored(const run_t *r)
{
    for (uint32_t o = 0; o < r->l->n_out; o++)
        if (!r->stored[o]) return false;
    return true;
}

/* Step 0 failed writing into preallocated storage: when the results have
 * another shape than the carried states, the scan's own message names them;
 * otherwise the inner function's error stands. */
static weft_status_t step0_retry(run_t *r, weft_status_t s0)
{
    weft_tensor_t *got[WEFT_OP_MAX_OUTPUTS + 1] = {0};
    size_t n_res = r->l->n_out + r->l->has_until;
    weft_status_t s = weft_function_call(r->rt->f, r->p->core->n_in, r->args, n_res, got);
    for (uint32_t o = 0; s == WEFT_OK && o < r->l->n_out; o++) {
        int nd = 0;
        int64_t shape[WEFT_MAX_NDIM];
        if (state_shape(r, o, &nd, shape) &&
            (nd != weft_tensor_ndim(got[o]) ||
             memcmp(shape, weft_tensor_shape(got[o]), (size_t)nd * sizeof *shape))) {
            s0 = shape_error(r, o, got[o], nd, shape);
            break;
        }
    }
    for (size_t k = 0; k < n_res; k++) weft_tensor_release(got[k]);
    if (r->ctx->status != WEFT_OK) return s0;
    return weft_kernel_error(r->ctx, s0, "%s: step 0: %s", label(r),
                             weft_function_last_error(r->rt->f));
}

/* A one-node inner graph's step (scan_direct.h): the kernel writes output
 * 0's storage of step t. A kernel given a cell of another geometry releases
 * it and puts a new tensor there: the storage (a view rt keeps, or a ring
 * state the run keeps) is lent with a reference of its own for that case. */
static weft_status_t step_direct(run_t *r, int64_t t)
{
    weft_tensor_t *want = r->res[0], *cell = want;
    weft_tensor_retain(want);
    weft_status_t s = weft__scan_direct_step(&r->rt->direct, r->args, &cell);
    if (cell == want) {
        weft_tensor_release(want);
    } else {
        int nd = 0;
        int64_t shape[WEFT_MAX_NDIM];
        if (s == WEFT_OK && weft_tensor_same_shape(cell, want)) weft_tensor_copy(want, cell);
        else if (s == WEFT_OK && t == 0 && r->l->out_ntaps[0] && state_shape(r, 0, &nd, shape))
            s = shape_error(r, 0, cell, nd, shape);
        else if (s == WEFT_OK)
            s = weft_kernel_error(r->ctx, WEFT_ESHAPE, "%s: step %lld: the update changed shape",
                                  label(r), (long long)t);
        weft_tensor_release(cell);
    }
    if (s == WEFT_OK || r->ctx->status != WEFT_OK) return s;
    return weft_kernel_error(r->ctx, s, "%s: step %lld: %s", label(r), (long long)t,
                             r->rt->direct.k.msg);
}

static weft_status_t step(run_t *r, int64_t t, bool *stop)
{
    const weft__scan_layout_t *l = r->l;
    weft_status_t s = gather(r, t);
    for (uint32_t o = 0; o < l->n_out && s == WEFT_OK; o++) {
        r->res[o] = NULL;
        if (r->stored[o]) s = storage(r, o, t, &r->rt->out_view[o], &r->res[o]);
    }
    if (l->has_until) r->res[l->n_out] = r->rt->until_t;
    if (s != WEFT_OK) return s;
    if (r->direct) return step_direct(r, t);
    size_t n_res = l->n_out + l->has_until;
    s = weft_function_call(r->rt->f, r->p->core->n_in, r->args, n_res, r->res);
    if (s != WEFT_OK && t == 0 && (s == WEFT_ESHAPE || s == WEFT_ETYPE))
        return step0_retry(r, s);
    if (s != WEFT_OK)
        return weft_kernel_error(r->ctx, s, "%s: step %lld: %s", label(r), (long long)t,
                                 weft_function_last_error(r->rt->f));
    if (t == 0) s = place_first(r);
    release_results(r); /* step 0's handed-over tensors; other steps' views stay in rt */
    if (l->has_until) {
        r->rt->until_t = r->res[l->n_out];
        *stop = *(const unsigned char *)weft_tensor_data(r->rt->until_t) != 0;
    }
    return s;
}

/* With no step run: outputs of 0 rows when their shape is known. */
static weft_status_t no_steps(run_t *r)
{
    for (uint32_t o = 0; o < r->l->n_out; o++) {
        int nd = 0;
        int64_t shape[WEFT_MAX_NDIM];
        if (is_last(r, o))
            return weft_kernel_error(r->ctx, WEFT_ERANGE,
                                     "%s: output %u is read at [-1] but the scan ran 0 steps",
                                     label(r), o);
        if (!state_shape(r, o, &nd, shape))
            return weft_kernel_error(r->ctx, WEFT_ESHAPE,
                                     "%s: output %u: 0 steps and the update's shape is not static",
                                     label(r), o);
        weft_status_t s = make_storage(r, o, nd, shape);
        if (s != WEFT_OK) return s;
    }
    return WEFT_OK;
}

/* The loop stopped (until) after `done` of n steps: stacked outputs keep
 * their first `done` rows (a view), last-state outputs their last state. */
static weft_status_t truncate(run_t *r, int64_t done)
{
    for (uint32_t o = 0; o < r->l->n_out; o++) {
        if (is_last(r, o)) {
            weft_tensor_t *v = r->ring[o][(r->n - done) % r->period[o]];
            if (v != r->out[o]) weft_tensor_copy(r->out[o], v);
            continue;
        }
        weft_tensor_t *base = r->out[o], *view = NULL;
        int64_t shape[WEFT_MAX_NDIM];
        memcpy(shape, weft_tensor_shape(base), (size_t)weft_tensor_ndim(base) * sizeof *shape);
        shape[0] = done;
        weft_status_t s = weft_tensor_view(base, weft_tensor_ndim(base), shape,
                                           weft_tensor_strides(base), 0, &view);
        if (s != WEFT_OK) return weft_kernel_error(r->ctx, s, "%s", weft_tensor_last_error());
        weft_kernel_set_output(r->ctx, &r->out[o], view);
    }
    return WEFT_OK;
}

static void run_end(run_t *r)
{
    for (uint32_t o = 0; o < r->l->n_out; o++)
        for (int64_t k = 1; k < MAX_RING; k++) {
            weft_kernel_scratch_done(r->ctx, r->ring[o][k]);
            r->ring[o][k] = NULL;
        }
    release_results(r);
    /* the rows' buffers go back to the outer function's pool (scan_park.c) */
    weft__scan_views_park(r->rt->in_view, WEFT__SCAN_MAX_INNER_IN);
    weft__scan_views_park(r->rt->out_view, WEFT_OP_MAX_OUTPUTS);
}

static void run_init(run_t *r, const weft_apply_t *node, weft_tensor_t *const *in,
                     weft_tensor_t **out, weft_kernel_ctx_t *ctx, scan_rt_t *rt)
{
    memset(r, 0, sizeof *r);
    r->p = weft__scan_get(weft_apply_op(node));
    r->l = &r->p->core->lay;
    r->node = node;
    r->in = in;
    r->out = out;
    r->ctx = ctx;
    r->rt = rt;
    size_t pos = 1 + r->l->n_seq;
    for (uint32_t o = 0; o < r->l->n_out; o++)
        if (r->l->out_ntaps[o]) r->init_pos[o] = pos++;
}

/* ---- maps: steps in parallel ---------------------------------------------------- */

/* A scan with no carried state and no until is a map: its steps are
 * independent, so after step 0 (which sizes the outputs) the others run as
 * ranges of a parallel-for on the pool, each calling the inner function on
 * its own views (concurrent calls take their own call states). A step's
 * result does not depend on where it runs: the same bits at any worker
 * count. */
typedef struct map_job {
    run_t *r;
    pthread_mutex_t lock;
    int64_t bad_step; /* first failing step (under lock), or -1 */
    char msg[WEFT__KERNEL_MSG_CAP];
} map_job_t;

static bool is_map(const run_t *r)
{
    return !weft__scan_n_carry(r->l) && !r->l->has_until && !r->p->last_mask;
}

static weft_status_t map_fail(map_job_t *j, int64_t t, weft_status_t st, const char *msg)
{
    pthread_mutex_lock(&j->lock);
    if (j->bad_step < 0) {
        j->bad_step = t;
        snprintf(j->msg, sizeof j->msg, "%s", msg);
    }
    pthread_mutex_unlock(&j->lock);
    return st;
}

/* Steps [begin + 1, end + 1): step 0 ran before. */
static weft_status_t map_range(void *arg, size_t begin, size_t end)
{
    map_job_t *j = arg;
    run_t *r = j->r;
    const weft__scan_layout_t *l = r->l;
    weft_tensor_t *h[WEFT__SCAN_MAX_INNER_IN + WEFT_OP_MAX_OUTPUTS] = {0};
    weft_tensor_t *args[WEFT__SCAN_MAX_INNER_IN], *res[WEFT_OP_MAX_OUTPUTS];
    size_t n_taps = weft__scan_n_seq_taps(l);
    weft_status_t st = WEFT_OK;
    for (int64_t t = (int64_t)begin + 1; t < (int64_t)end + 1 && st == WEFT_OK; t++) {
        size_t a = 0;
        for (uint32_t q = 0; q < l->n_seq; q++)
            for (uint32_t k = 0; k < l->seq_ntaps[q] && st == WEFT_OK; k++, a++) {
                int64_t row = (l->reverse ? r->n - 1 - t : t) + l->seq_taps[q][k] - l->seq_taps[q][0];
                st = weft__scan_row_view(&h[a], r->in[1 + q], row);
                args[a] = h[a];
            }
        for (uint32_t k = 0; k < l->n_nonseq; k++) args[a++] = r->in[1 + l->n_seq + k];
        for (uint32_t o = 0; o < l->n_out && st == WEFT_OK; o++) {
            st = weft__scan_row_view(&h[n_taps + o], r->out[o], t);
            res[o] = h[n_taps + o];
        }
        if (st != WEFT_OK) {
            map_fail(j, t, st, weft_tensor_last_error());
            break;
        }
        st = weft_function_call(r->rt->f, r->p->core->n_in, args, l->n_out, res);
        if (st != WEFT_OK) map_fail(j, t, st, weft_function_last_error(r->rt->f));
    }
    for (size_t k = 0; k < n_taps + l->n_out; k++) weft_tensor_release(h[k]);
    return st;
}

static weft_status_t run_map(run_t *r)
{
    map_job_t j;
    j.r = r;
    j.bad_step = -1;
    j.msg[0] = '\0';
    if (pthread_mutex_init(&j.lock, NULL) != 0)
        return weft_kernel_error(r->ctx, WEFT_ENOMEM, "%s: cannot create a lock", label(r));
    weft_status_t s = weft_kernel_parallel_for(r->ctx, (size_t)(r->n - 1), 1, map_range, &j);
    pthread_mutex_destroy(&j.lock);
    if (s != WEFT_OK && j.bad_step >= 0)
        return weft_kernel_error(r->ctx, s, "%s: step %lld: %s", label(r), (long long)j.bad_step,
                                 j.msg);
    return s == WEFT_OK ? s : weft_kernel_error(r->ctx, s, "%s: a step failed", label(r));
}

/* Every step pipelined. A step-0 failure over a shape or type is looked at
 * again with the whole inner function, for the error naming the update and
 * the carried state (step0_retry). */
static weft_status_t run_pipe(run_t *r)
{
    weft__pipe_io_t io = {r->l,         label(r), r->in,   r->out,   r->init_pos,
                          r->n,         r->p->last_mask, r->ring, r->period};
    weft__scan_pipe_t *pp = r->rt->pipe;
    weft_status_t s = weft__scan_pipe_run(pp, &io, r->ctx);
    if (s == WEFT_OK || r->ctx->status != WEFT_OK) return s;
    if (pp->bad_step == 0 && (s == WEFT_ESHAPE || s == WEFT_ETYPE) && gather(r, 0) == WEFT_OK)
        return step0_retry(r, s);
    if (pp->bad_step < 0)
        return weft_kernel_error(r->ctx, s, "%s: the step pipeline: %s", label(r), pp->msg);
    return weft_kernel_error(r->ctx, s, "%s: %s", label(r), pp->msg);
}

static weft_status_t run_loop(run_t *r, bool pipeline)
{
    weft_status_t s = count_steps(r);
    if (s == WEFT_OK && !r->rt->f) s = rt_compile(r->rt, r->p, r->ctx, pipeline);
    if (s != WEFT_OK) return s;
    if (r->n == 0) return no_steps(r);
    bool stop = false;
    int64_t t = 0;
    if (is_map(r) && r->n > 1 && weft_kernel_threads(r->ctx) > 1) {
        s = step(r, 0, &stop);
        return s == WEFT_OK ? run_map(r) : s;
    }
    s = preallocate(r);
    r->direct = s == WEFT_OK && r->rt->direct.node && all_stored(r);
    if (s == WEFT_OK && r->rt->pipe && all_stored(r)) return run_pipe(r);
    if (r->direct) weft__scan_direct_begin(&r->rt->direct, r->ctx);
    for (; t < r->n && !stop && s == WEFT_OK; t++) s = step(r, t, &stop);
    if (s == WEFT_OK && t < r->n) s = truncate(r, t);
    return s;
}

weft_status_t weft__scan_perform(const weft_apply_t *node, weft_tensor_t *const *inputs,
                                 weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    scan_rt_t *local = NULL;
    scan_rt_t *rt = weft__kernel_plan_owned(ctx, sizeof *rt, rt_fini);
    if (!rt) {
        /* no plan cell: compiled for this run only */
        rt = local = calloc(1, sizeof *local);
        if (!rt) return weft_kernel_error(ctx, WEFT_ENOMEM, "Scan: out of memory");
    }
    run_t *r = &rt->run;
    run_init(r, node, inputs, outputs, ctx, rt);
    weft_status_t s = run_loop(r, !local);
    run_end(r);
    if (local) {
        rt_fini(local);
        free(local);
    }
    return s;
}
