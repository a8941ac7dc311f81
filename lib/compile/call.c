/* Calling a compiled function: argument checks, the node body run by the
 * pool for every apply, delivering outputs and applying updates, and the
 * cleanup that leaves a per-call state empty for the next call.
 *
 * Node path (kept lean: no hashing, no allocation): gather the input tensors
 * from preresolved slots, run perform with the node's consecutive output
 * cells, check the outputs against their types, then count down each freeable
 * input; the last reader empties the cell into the buffer pool. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base_int.h" /* WEFT_UNLIKELY */
#include "base/clock.h"
#include "base/vec.h"
#include "compile_int.h"
#include "graph/ifelse_id.h"
#include "graph/site.h"
#include "tensor/tensor_int.h" /* weft__tensor_is_block_base */

static uint32_t node_index(const weft__call_state_t *cs, const weft__cnode_t *n)
{
    return (uint32_t)(n - cs->f->nodes);
}

static void describe_node(const weft__call_state_t *cs, const weft__cnode_t *n, char *buf,
                          size_t cap)
{
    char d[320];
    weft_apply_describe(n->apply, d, sizeof d);
    snprintf(buf, cap, "node %u, %s", node_index(cs, n), d);
}

/* First failure of the call wins (failure path only, so a mutex is fine). */
static weft_status_t node_fail(weft__call_state_t *cs, const weft__cnode_t *n, weft_status_t st,
                               const char *msg)
{
    pthread_mutex_lock(&cs->err_lock);
    bool first = !cs->failed;
    if (first) {
        char d[400];
        describe_node(cs, n, d, sizeof d);
        cs->failed = true;
        cs->err_status = st;
        cs->err_node = node_index(cs, n);
        snprintf(cs->err_msg, sizeof cs->err_msg, "%s failed with %s: %s", d,
                 weft_status_name(st), msg && msg[0] ? msg : weft_status_str(st));
    }
    pthread_mutex_unlock(&cs->err_lock);
    /* err_msg is written once (first failure) and read only after the run */
    if (first && cs->fail_hook) cs->fail_hook(cs->fail_user, st, cs->err_msg);
    return st;
}

static bool has_nan(const weft_tensor_t *t)
{
    weft_dtype_t dt = weft_tensor_dtype(t);
    if (weft_dtype_kind(dt) != WEFT_KIND_FLOAT) return false;
    size_t n = weft_tensor_size(t);
    for (size_t i = 0; i < n; i++)
        if (!isfinite(weft_tensor_flat_get(t, i))) return true;
    return false;
}

/* The node filled every output with a value of its variable's type. */
static weft_status_t check_outputs(weft__call_state_t *cs, const weft__cnode_t *n)
{
    char msg[256], got[96], want[96];
    const weft__cnode_out_t *no = &cs->f->node_out[node_index(cs, n)];
    for (uint32_t k = 0; k < no->n_out; k++) {
        const weft_tensor_t *t = cs->cells[n->out_base + k];
        const weft_type_t *ty = no->out_types[k];
        if (!t) {
            snprintf(msg, sizeof msg, "output %u was not filled by perform", k);
            return node_fail(cs, n, WEFT_EINVAL, msg);
        }
        bool dt_ok = weft_tensor_dtype(t) == weft_type_dtype(ty) &&
                     weft_tensor_ndim(t) == weft_type_ndim(ty);
        bool sh_ok = dt_ok;
        for (int d = 0; sh_ok && d < weft_type_ndim(ty); d++)
            sh_ok = weft_type_dim(ty, d) < 0 || weft_type_dim(ty, d) == weft_tensor_dim(t, d);
        if (!sh_ok) {
            weft_tensor_print_type(t, got, sizeof got);
            weft_type_print(ty, want, sizeof want);
            snprintf(msg, sizeof msg, "output %u is %s, its variable's type is %s", k, got, want);
            return node_fail(cs, n, dt_ok ? WEFT_ESHAPE : WEFT_ETYPE, msg);
        }
        if (cs->f->nan_check && has_nan(t)) {
            snprintf(msg, sizeof msg, "output %u contains NaN or Inf", k);
            return node_fail(cs, n, WEFT_ENAN, msg);
        }
    }
    return WEFT_OK;
}

/* Empties an owned cell: back to the buffer pool when nothing else sees it.
 * When t is a buffer's own base handle and only the buffer is still shared (a
 * view of this call holds it), parking waits for the end of the call
 * (cs->deferred), when the views' cells are empty too. A view drops its
 * buffer reference - what makes its base parkable - and its handle stays in
 * the slot's stash for the producer's next view. A planned value's arena
 * handle stays in its cell for the next call (arena.c); a measuring call
 * notes its geometry first. */
static void cell_empty(weft__call_state_t *cs, uint32_t s)
{
    weft_tensor_t *t = cs->cells[s];
    if (WEFT_UNLIKELY(cs->mp_measure)) weft__arena_measure(cs, s, t);
    if (weft__arena_holds(cs, s, t)) return; /* the arena's memory stays in the cell */
    cs->cells[s] = NULL;
    if (weft__tensor_is_block_base(t)) {
        if (weft_tensor_refcount(t) == 1 && !weft_tensor_is_exclusive(t)) {
            /* relaxed: only hands out distinct indices; the calling thread
             * reads the entries after weft_dag_run_execute returned (which
             * orders every node's writes before it) or writes them itself
             * in cleanup */
            unsigned k = atomic_fetch_add_explicit(&cs->n_deferred, 1, memory_order_relaxed);
            cs->deferred[k] = t;
            return;
        }
    } else if (t && !cs->stash[s]) {
        /* NULL (t left as it was) when another holder still has the handle */
        if ((cs->stash[s] = weft__tensor_detach(t))) return;
    }
    weft__bufpool_put(&cs->f->bufpool, t);
}

static void counter_max(atomic_llong *peak, long long v)
{
    /* relaxed: statistics only; the CAS loop just keeps the maximum */
    long long cur = atomic_load_explicit(peak, memory_order_relaxed);
    while (v > cur && !atomic_compare_exchange_weak_explicit(peak, &cur, v, memory_order_relaxed,
                                                             memory_order_relaxed)) {
    }
}

/* The input slot whose counted bytes output k of node n takes over, or
 * UINT32_MAX: a destroy output lives in its destroyed input's buffer, and an
 * output the memory plan put over its input's memory (slot reuse,
 * docs/execution.md §4.6) lives in that input's arena range when both cells
 * hold their arena handles this call. Either way the node is the input's
 * last reader: no other thread counts that input down. */
static uint32_t bytes_from(const weft__call_state_t *cs, const weft__cnode_t *n, uint32_t k)
{
    const weft_function_t *f = cs->f;
    const uint32_t *in = weft__node_slots_in(weft__cnode_slots(f, n));
    uint32_t i = node_index(cs, n), s;
    if (f->mp.reuse_in && f->mp.reuse_in[i] != UINT32_MAX) {
        s = in[f->mp.reuse_in[i]];
        bool held = weft__arena_holds(cs, s, cs->cells[s]) &&
                    weft__arena_holds(cs, n->out_base, cs->cells[n->out_base]);
        return held ? s : UINT32_MAX;
    }
    const weft_op_alias_t *dm;
    size_t nd;
    weft_op_destroy_map(weft_apply_op(n->apply), &dm, &nd);
    for (size_t e = 0; e < nd; e++)
        if (dm[e].output == k) return in[dm[e].input];
    return UINT32_MAX;
}

/* Profiling only: fresh outputs count as live intermediate memory. An
 * output living in its input's memory (bytes_from) adds none: the input's
 * counted bytes pass to it, and are counted down with it. */
static void track_alloc(weft__call_state_t *cs, const weft__cnode_t *n)
{
    long long bytes = 0, bufs = 0;
    const weft__cnode_out_t *no = &cs->f->node_out[node_index(cs, n)];
    for (uint32_t k = 0; k < no->n_out && k < 32; k++) {
        uint32_t from = bytes_from(cs, n, k), s = n->out_base + k;
        if (from != UINT32_MAX) {
            if (cs->slot_bytes[from]) { /* 0: not counted (an input, a view, a kept value) */
                cs->slot_bytes[s] = cs->slot_bytes[from];
                cs->slot_bytes[from] = 0;
            }
            continue;
        }
        if (!(no->fresh_mask & (1u << k))) continue;
        if (k == 0 && n->direct && cs->own[s]) continue; /* the caller's memory */
        const weft_tensor_t *t = cs->cells[s];
        int64_t b = (int64_t)(weft_tensor_size(t) * weft_dtype_size(weft_tensor_dtype(t)));
        cs->slot_bytes[s] = b;
        bytes += b;
        bufs++;
    }
    if (bufs == 0) return; /* views, in-place and kept outputs: nothing new to count */
    /* relaxed: statistics only (a countdown-style counter; its peak is a hint) */
    counter_max(&cs->peak_bytes, atomic_fetch_add_explicit(&cs->live_bytes, bytes,
                                                           memory_order_relaxed) + bytes);
    counter_max(&cs->peak_buffers, atomic_fetch_add_explicit(&cs->live_buffers, bufs,
                                                             memory_order_relaxed) + bufs);
}

static void track_free(weft__call_state_t *cs, uint32_t s)
{
    int64_t b = cs->slot_bytes[s];
    if (b == 0 && !cs->cells[s]) return;
    cs->slot_bytes[s] = 0;
    /* relaxed: statistics only */
    atomic_fetch_sub_explicit(&cs->live_bytes, b, memory_order_relaxed);
    atomic_fetch_sub_explicit(&cs->live_buffers, 1, memory_order_relaxed);
}

/* The last reader of slot s restores its countdown for the next call
 * (reset_plan.c). Relaxed: no node of this call touches it again, and the
 * next call's workers see it through weft_dag_run_start's publication, as
 * every other write of this call. */
static inline void countdown_restore(weft__call_state_t *cs, uint32_t s)
{
    atomic_store_explicit(&cs->countdown[s], cs->f->countdown_init[s], memory_order_relaxed);
}

/* Counts down the node's countdown slots (weft__node_slots_dec). */
static void count_down(weft__call_state_t *cs, const weft__node_slots_t *ns, bool prof)
{
    const uint32_t *dec = weft__node_slots_dec(ns);
    for (uint32_t i = 0, n_dec = ns->n_dec; i < n_dec; i++) {
        uint32_t s = dec[i];
        /* acq_rel: our reads of the cell's tensor happen before the last
         * reader's emptying (release); the last reader acquires every other
         * reader's release. Pairs with the same fetch_sub in other readers. */
        if (atomic_fetch_sub_explicit(&cs->countdown[s], 1, memory_order_acq_rel) == 1) {
            countdown_restore(cs, s);
            if (prof && cs->slot_bytes[s]) track_free(cs, s);
            cell_empty(cs, s);
        }
    }
}

/* An own node's output (weft__cnode_t.own) placed by this call: it may skip the
 * reference-count reads and the output check from the next call on when it
 * is exclusive and contiguous now (nothing can reference it later). */
static uint8_t own_placed(const weft_tensor_t *t)
{
    return weft_tensor_is_exclusive(t) && weft_tensor_is_contiguous(t);
}

/* Intra-node parallel loops (weft_kernel_parallel_for) on the pool running
 * the node: the kernel's range function behind the pool's range signature. */
typedef struct kernel_loop {
    weft_kernel_range_fn fn;
    void *arg;
} kernel_loop_t;

static weft_status_t kernel_loop_range(void *arg, size_t begin, size_t end,
                                       const weft_task_ctx_t *ctx)
{
    (void)ctx;
    const kernel_loop_t *kl = arg;
    return kl->fn(kl->arg, begin, end);
}

static weft_status_t kernel_loop_run(void *pool, size_t n, size_t grain, weft_kernel_range_fn fn,
                                     void *arg)
{
    kernel_loop_t kl = { fn, arg };
    return weft_pool_parallel_for(pool, 0, n, grain, kernel_loop_range, &kl);
}

/* The pool's idle workers for weft_kernel_idle_workers. */
static size_t kernel_idle(void *pool)
{
    int n = weft_pool_idle_workers(pool);
    return n > 0 ? (size_t)n : 0;
}

/* Evaluates the guard at word offset off: term by term, literal by
 * literal, left to right - a literal is read only when those before it
 * hold (guard.c: its condition was computed then). */
static bool guard_eval(const weft__call_state_t *cs, uint32_t off)
{
    const uint32_t *w = cs->f->guards + off + 1;
    uint32_t nt = *w++;
    for (uint32_t t = 0; t < nt; t++) {
        uint32_t len = *w++;
        bool all = true;
        for (uint32_t k = 0; k < len && all; k++) {
            const weft_tensor_t *c = cs->cells[w[k] >> 1];
            all = c && weft__ifelse_cond_true(weft_tensor_flat_get(c, 0)) != (w[k] & 1u);
        }
        if (all) return true;
        w += len;
    }
    return false;
}

bool weft__guard_holds(const weft__call_state_t *cs, uint32_t off)
{
    _Atomic uint8_t *memo = &cs->guard_memo[cs->f->guards[off]];
    /* relaxed: nodes sharing a guard wait for the same conditions, so any
     * worker evaluating it gets the same answer; the memo only saves work */
    uint8_t m = atomic_load_explicit(memo, memory_order_relaxed);
    if (m) return m == 2;
    bool v = guard_eval(cs, off);
    atomic_store_explicit(memo, v ? 2 : 1, memory_order_relaxed);
    return v;
}

void weft__slot_release(weft__call_state_t *cs, uint32_t s, uint32_t k)
{
    /* acq_rel: as count_down (k readers' worth at once) */
    if (atomic_fetch_sub_explicit(&cs->countdown[s], k, memory_order_acq_rel) == k) {
        countdown_restore(cs, s);
        if (cs->f->profile && cs->slot_bytes[s]) track_free(cs, s);
        cell_empty(cs, s);
    }
}

/* A guarded node whose guard is false this call: it neither runs nor
 * allocates (docs/control-flow.md §2). It counts down the values it would
 * have read, so their last reader still frees them - except values made by
 * a node of the same guard, skipped too (nothing to free; the count is
 * reset by the next call). On a one-worker pool the nodes right after it
 * with the same guard are not even called (weft_task_ctx_t.skip_to),
 * unless profiling (which reports each skip): the values they would have
 * counted down are then freed at the end of the call instead. Its outputs
 * stay as they are (empty, or a planned value's arena handle): every node
 * that reads them is skipped too, or an IfElse reading its other side. */
static weft_status_t node_skip(weft__call_state_t *cs, const weft__cnode_t *n,
                               const weft_task_ctx_t *tctx)
{
    const weft_function_t *f = cs->f;
    uint32_t i = node_index(cs, n);
    cs->skipped[i] = 1;
    const weft__node_slots_t *ns = weft__cnode_slots(f, n);
    const uint32_t *dec = weft__node_slots_dec(ns);
    for (uint32_t k = 0; k < ns->n_dec; k++)
        if (f->slot_guard[dec[k]] != n->guard) weft__slot_release(cs, dec[k], 1);
    if (tctx->skip_to && f->skip_end && !f->profile) *tctx->skip_to = f->skip_end[i];
    return WEFT_OK;
}

weft_status_t weft__node_body(void *arg, const weft_task_ctx_t *tctx)
{
    const weft__cnode_t *n = arg;
    weft__call_state_t *cs = tctx->user;
    /* a cancelable call checks its token (call_cancel.c); the others pay one
     * test of a field on a line the node reads anyway */
    if (WEFT_UNLIKELY(cs->token != NULL) && weft__call_stop(cs, node_index(cs, n)))
        return WEFT_ECANCELED;
    if (WEFT_UNLIKELY(n->guard != 0)) {
        if (!weft__guard_holds(cs, n->guard)) return node_skip(cs, n, tctx);
        cs->skipped[node_index(cs, n)] = 0;
    }
    weft_function_t *f = cs->f;
    weft_tensor_t **out = cs->cells + n->out_base;
    /* the output cell usually holds last call's tensor, which perform will
     * reuse: start loading it while the inputs are gathered */
    weft_tensor_t *prev = *out;
    if (prev) __builtin_prefetch(prev);
    /* small arities use the (hot) stack; larger ones the state's scratch */
    const weft__node_slots_t *ns = weft__cnode_slots(f, n);
    uint32_t n_in = ns->n_in;
    const uint32_t *in_slots = weft__node_slots_in(ns);
    weft_tensor_t *local[8];
    weft_tensor_t **argv = n_in <= 8 ? local : cs->argv + f->argv_off[node_index(cs, n)];
    for (uint32_t k = 0; k < n_in; k++) argv[k] = cs->cells[in_slots[k]];
    weft_kernel_ctx_t kctx;
    weft__kernel_ctx_init(&kctx, weft__bufpool_alloc, &f->bufpool, NULL, tctx->worker);
    kctx.give_back = weft__bufpool_give_back;
    kctx.pfor = kernel_loop_run;
    kctx.pfor_user = tctx->pool;
    kctx.idle = kernel_idle;
    kctx.pool = tctx->pool;
    kctx.threads = f->node_threads;
    kctx.out_cells = out;
    kctx.stash = cs->stash + n->out_base;
    kctx.n_out = ns->n_out;
    kctx.plan = cs->plans + node_index(cs, n);
    kctx.plan_builds = &f->plan_builds;
    kctx.task = tctx;
    /* own: a kept exclusive tensor, or the caller's output (direct_out.c) */
    bool own = (n->own || n->direct) && cs->own[n->out_base];
    if (own) kctx.own_cell = out;
    weft_status_t st = n->perform(n->apply, argv, out, &kctx);
    if (own && *out != prev) { /* perform replaced it */
        cs->own[n->out_base] = 0;
        own = false;
    }
    if (st != WEFT_OK) return node_fail(cs, n, st, kctx.msg);
    if (!own || f->nan_check) {
        /* a kernel's checked plan vouches for its outputs' types */
        if (!kctx.out_typed || f->nan_check) st = check_outputs(cs, n);
        if (st != WEFT_OK) return st;
        if (n->own) cs->own[n->out_base] = own_placed(*out);
    }
    if (f->profile) track_alloc(cs, n);
    count_down(cs, ns, f->profile);
    return WEFT_OK;
}

/* ---- argument checks ------------------------------------------------------ */

static weft_status_t check_input(weft_function_t *f, size_t k, const weft_tensor_t *t)
{
    weft_var_t *v = f->in_vars[k];
    const weft_type_t *ty = weft_var_type(v);
    bool dt_ok = t && weft_tensor_dtype(t) == weft_type_dtype(ty) &&
                 weft_tensor_ndim(t) == weft_type_ndim(ty);
    bool sh_ok = dt_ok;
    for (int d = 0; sh_ok && d < weft_type_ndim(ty); d++)
        sh_ok = weft_type_dim(ty, d) < 0 || weft_type_dim(ty, d) == weft_tensor_dim(t, d);
    if (sh_ok) return WEFT_OK;
    /* names and types are printed only for the error: every call checks */
    char name[128], want[96], got[96];
    weft_var_print(v, name, sizeof name);
    if (!t) return weft__fn_error(f, WEFT_EINVAL, "input %zu (%s) is NULL", k, name);
    const char *file;
    int line;
    char sb[WEFT__SITE_CAP];
    weft_var_trace(v, &file, &line);
    weft_type_print(ty, want, sizeof want);
    weft_tensor_print_type(t, got, sizeof got);
    return weft__fn_error(f, dt_ok ? WEFT_ESHAPE : WEFT_ETYPE,
                          "input %zu (%s, created at %s): expected %s, got %s", k, name,
                          weft__site_str(sb, sizeof sb, file, line), want, got);
}

/* An input the graph may overwrite must not share memory with another
 * input: one in-place write would corrupt the other argument
 * (docs/execution.md §6). Refused rather than copied: which input should
 * win is the caller's to say (unlike an input that overlaps itself, which
 * copy_overlapping copies). */
static weft_status_t check_mutable_aliasing(weft_function_t *f, weft_tensor_t *const *inputs)
{
    for (size_t k = 0; k < f->n_in; k++) {
        if (!f->in_mutable[k]) continue;
        for (size_t j = 0; j < f->n_in; j++)
            if (j != k && weft_tensor_shares_buffer(inputs[k], inputs[j]))
                return weft__fn_error(f, WEFT_EINVAL,
                                      "input %zu is mutable (declared or updated) and shares "
                                      "memory with input %zu: pass a copy", k, j);
    }
    return WEFT_OK;
}

/* Whether two index tuples of t may address one element: an axis of stride
 * 0 (a broadcast view) or, with the axes sorted by |stride|, a stride not
 * larger than the span of the axes below it (a sliding window). Layouts
 * that interleave without overlapping fail the test too: such an input is
 * only copied (or, when updated, refused) needlessly. At most
 * WEFT_MAX_NDIM^2 steps, no allocation. */
static bool may_overlap_itself(const weft_tensor_t *t)
{
    int64_t st[WEFT_MAX_NDIM], len[WEFT_MAX_NDIM];
    int n = 0;
    for (int d = 0; d < weft_tensor_ndim(t); d++) {
        int64_t l = weft_tensor_dim(t, d), s = weft_tensor_stride(t, d);
        if (l == 0) return false; /* no elements */
        if (l == 1) continue;
        s = s < 0 ? -s : s;
        int i = n++;
        for (; i > 0 && st[i - 1] > s; i--) { /* insertion sort by |stride| */
            st[i] = st[i - 1];
            len[i] = len[i - 1];
        }
        st[i] = s;
        len[i] = l;
    }
    int64_t span = 0; /* the axes below the current one reach offsets [0, span] */
    for (int i = 0; i < n; i++) {
        if (st[i] <= span) return true;
        span += (len[i] - 1) * st[i]; /* within the tensor's buffer: cannot overflow */
    }
    return false;
}

static bool is_updated(const weft_function_t *f, size_t k)
{
    for (size_t u = 0; u < f->n_upd; u++)
        if (f->upd_input[u] == k) return true;
    return false;
}

static weft_status_t refuse_overlapping_update(weft_function_t *f, size_t k,
                                               const weft_tensor_t *t)
{
    char name[128], type[96], strides[24 * WEFT_MAX_NDIM] = "";
    weft_var_print(f->in_vars[k], name, sizeof name);
    weft_tensor_print_type(t, type, sizeof type);
    for (int d = 0, at = 0; d < weft_tensor_ndim(t) && at < (int)sizeof strides; d++)
        at += snprintf(strides + at, sizeof strides - (size_t)at, "%s%lld", d ? ", " : "",
                       (long long)weft_tensor_stride(t, d));
    const char *file;
    int line;
    char sb[WEFT__SITE_CAP];
    weft_var_trace(f->in_vars[k], &file, &line);
    return weft__fn_error(f, WEFT_EINVAL, "input %zu (%s, created at %s) is updated but its "
                          "memory overlaps itself (%s, strides [%s]): its new value cannot be "
                          "stored in it; pass a tensor whose elements do not share memory", k,
                          name, weft__site_str(sb, sizeof sb, file, line), type, strides);
}

static void args_release(const weft_function_t *f, weft_tensor_t *const *inputs,
                         weft_tensor_t **args)
{
    if (!args) return;
    for (size_t k = 0; k < f->n_in; k++)
        if (args[k] != inputs[k]) weft_tensor_release(args[k]);
    free(args);
}

/* A mutable input whose memory overlaps itself (a broadcast view, a sliding
 * window) cannot be written in place: one element's result would overwrite
 * other elements' operands. It runs from a private contiguous copy, so the
 * caller's tensor is never written; an updated one is refused, as its new
 * value cannot be stored back (function.h, weft_function_call). *args is
 * NULL when no input needs a copy (the common case: one stride scan per
 * mutable input, nothing allocated), else a new array of the inputs with
 * the copies in their places (args_release). */
static weft_status_t copy_overlapping(weft_function_t *f, weft_tensor_t *const *inputs,
                                      weft_tensor_t ***args_out)
{
    weft_tensor_t **args = NULL;
    weft_status_t st = WEFT_OK;
    for (size_t k = 0; st == WEFT_OK && k < f->n_in; k++) {
        if (!f->in_mutable[k] || !may_overlap_itself(inputs[k])) continue;
        if (is_updated(f, k)) {
            st = refuse_overlapping_update(f, k, inputs[k]);
            break;
        }
        if (!args && (args = weft__vec_malloc(f->n_in, sizeof *args)))
            memcpy(args, inputs, f->n_in * sizeof *args);
        if (!args || weft_tensor_clone(inputs[k], &args[k]) != WEFT_OK) {
            if (args) args[k] = inputs[k];
            st = weft__fn_error(f, WEFT_ENOMEM, "cannot copy input %zu, whose memory overlaps "
                                "itself", k);
        }
    }
    if (st != WEFT_OK) {
        args_release(f, inputs, args);
        args = NULL;
    }
    *args_out = args;
    return st;
}

/* Checks the call's arguments; *args: as copy_overlapping. */
static weft_status_t check_args(weft_function_t *f, size_t n_in, weft_tensor_t *const *inputs,
                                size_t n_out, weft_tensor_t **outputs, weft_tensor_t ***args)
{
    *args = NULL;
    if (n_in != f->n_in || (n_in && !inputs))
        return weft__fn_error(f, WEFT_EINVAL, "%s takes %zu inputs, got %zu%s", f->name, f->n_in,
                              n_in, n_in && !inputs ? " (NULL array)" : "");
    if (n_out != f->n_out || (n_out && !outputs))
        return weft__fn_error(f, WEFT_EINVAL, "%s has %zu outputs, got %zu%s", f->name, f->n_out,
                              n_out, n_out && !outputs ? " (NULL array)" : "");
    for (size_t k = 0; k < n_in; k++) {
        weft_status_t st = check_input(f, k, inputs[k]);
        if (st != WEFT_OK) return st;
    }
    if (!f->any_mutable) return WEFT_OK;
    weft_status_t st = check_mutable_aliasing(f, inputs);
    return st == WEFT_OK ? copy_overlapping(f, inputs, args) : st;
}

/* ---- delivering results ------------------------------------------------------ */

static weft_status_t check_supplied(weft_function_t *f, weft__call_state_t *cs,
                                    weft_tensor_t **outputs)
{
    for (size_t k = 0; k < f->n_out; k++) {
        const weft_tensor_t *r = cs->cells[f->out_slot[k]], *o = outputs[k];
        if (!o || weft_tensor_same_shape(o, r)) continue;
        char name[128], got[96], want[96];
        weft_var_print(f->out_vars[k], name, sizeof name);
        weft_tensor_print_type(r, want, sizeof want);
        weft_tensor_print_type(o, got, sizeof got);
        bool dt = weft_tensor_dtype(o) == weft_tensor_dtype(r) &&
                  weft_tensor_ndim(o) == weft_tensor_ndim(r);
        return weft__fn_error(f, dt ? WEFT_ESHAPE : WEFT_ETYPE,
                              "output %zu (%s): the result is %s but the supplied tensor is %s", k,
                              name, want, got);
    }
    return WEFT_OK;
}

static bool same_memory(const weft_tensor_t *a, const weft_tensor_t *b)
{
    if (weft_tensor_data(a) != weft_tensor_data(b)) return false;
    for (int d = 0; d < weft_tensor_ndim(a); d++)
        if (weft_tensor_dim(a, d) > 1 && weft_tensor_stride(a, d) != weft_tensor_stride(b, d))
            return false;
    return true;
}

/* An update's new value into its state. A value computed in place and then
 * viewed in another layout (s <- transpose(2 s)) lives in the state's own
 * buffer: copied element by element it would read entries already
 * overwritten, so it goes through a temporary (one allocation, for such
 * updates only). */
static weft_status_t copy_update(weft_tensor_t *dst, const weft_tensor_t *val)
{
    if (!weft_tensor_shares_buffer(dst, val)) return weft_tensor_copy(dst, val);
    weft_tensor_t *tmp = NULL;
    weft_status_t st = weft_tensor_clone(val, &tmp);
    if (st == WEFT_OK) st = weft_tensor_copy(dst, tmp);
    weft_tensor_release(tmp);
    return st;
}

static weft_status_t deliver(weft_function_t *f, weft__call_state_t *cs,
                             weft_tensor_t *const *inputs, weft_tensor_t **outputs)
{
    weft_status_t st = check_supplied(f, cs, outputs);
    for (size_t k = 0; st == WEFT_OK && k < f->n_out; k++) {
        uint32_t s = f->out_slot[k];
        if (outputs[k]) {
            /* relaxed: statistics */
            if (weft__direct_written(cs, k, outputs[k])) {
                atomic_fetch_add_explicit(&f->out_direct, 1, memory_order_relaxed);
                continue;
            }
            atomic_fetch_add_explicit(&f->out_copies, 1, memory_order_relaxed);
            st = weft_tensor_copy(outputs[k], cs->cells[s]);
        } else {
            /* hand over: no other output or input aliases it; a kept slot
             * (WEFT__SLOT_KEPT) starts the next call empty, so its producer
             * allocates anew and the caller's tensor stays unshared */
            outputs[k] = cs->cells[s];
            cs->cells[s] = NULL;
            cs->own[s] = 0;
        }
    }
    /* updates last: every node and every output read the old values */
    for (size_t u = 0; st == WEFT_OK && u < f->n_upd; u++) {
        weft_tensor_t *dst = inputs[f->upd_input[u]], *val = cs->cells[f->out_slot[f->n_out + u]];
        if (!same_memory(dst, val)) st = copy_update(dst, val);
    }
    if (st != WEFT_OK && !weft_function_last_error(f)[0])
        weft__fn_error(f, st, "delivering outputs: %s", weft_tensor_last_error());
    return st;
}

/* After a failed or canceled call, where any node may not have run: every
 * owned cell emptied, every countdown and guard memo reset. */
static void reset_all(weft_function_t *f, weft__call_state_t *cs)
{
    for (uint32_t i = 0; i < f->n_owned; i++)
        if (cs->cells[f->owned_slots[i]]) cell_empty(cs, f->owned_slots[i]);
    memcpy((void *)cs->countdown, f->countdown_init, f->n_slots * sizeof *f->countdown_init);
    for (uint32_t k = 0; k < f->n_guard_memo; k++)
        atomic_store_explicit(&cs->guard_memo[k], 0, memory_order_relaxed); /* as below */
}

/* After a call whose nodes all ran or were skipped by their guard: only
 * what the guards that did not hold left behind (reset_plan.c), and the
 * graph outputs' cells. */
static void reset_ran(weft_function_t *f, weft__call_state_t *cs)
{
    for (uint32_t i = 0; i < f->n_owned_out; i++)
        if (cs->cells[f->owned_out[i]]) cell_empty(cs, f->owned_out[i]);
    for (uint32_t k = 0; k < f->n_guard_memo; k++) {
        /* relaxed: this thread is the only one touching the state now */
        if (atomic_load_explicit(&cs->guard_memo[k], memory_order_relaxed) != 2) {
            for (uint32_t j = f->reset_off[k]; j < f->reset_off[k + 1]; j++) {
                uint32_t s = f->reset_slots[j];
                countdown_restore(cs, s);
                if (cs->cells[s]) cell_empty(cs, s);
            }
        }
        atomic_store_explicit(&cs->guard_memo[k], 0, memory_order_relaxed);
    }
}

/* Leaves the state empty: owned cells back to the pool, inputs forgotten,
 * countdowns and guard memos as at the call's start. */
static void cleanup(weft_function_t *f, weft__call_state_t *cs, bool ran)
{
    weft__direct_clear(cs); /* first: the caller's tensors never go to the pool */
    if (ran) reset_ran(f, cs);
    else reset_all(f, cs);
    for (size_t k = 0; k < f->n_in; k++) cs->cells[f->in_slot[k]] = NULL;
    /* relaxed: this thread is the only one touching the state now */
    unsigned n = atomic_exchange_explicit(&cs->n_deferred, 0, memory_order_relaxed);
    for (unsigned k = 0; k < n; k++) weft__bufpool_put(&f->bufpool, cs->deferred[k]);
    weft__arena_settle(cs);
}

_Static_assert(sizeof(atomic_uint) == sizeof(uint32_t), "countdowns are reset by a copy");

/* The countdowns and guard memos are as the last call's cleanup left them
 * (reset_plan.c); plain state is published by weft_dag_run_start. */

static void prepare(weft_function_t *f, weft__call_state_t *cs, weft_tensor_t *const *inputs,
                    weft_tensor_t *const *outputs)
{
    weft__arena_prepare(cs, inputs);
    weft__direct_place(cs, inputs, outputs);
    for (size_t k = 0; k < f->n_in; k++) cs->cells[f->in_slot[k]] = inputs[k];
    cs->failed = false;
    /* relaxed: published by weft_dag_run_start like the countdowns */
    atomic_store_explicit(&cs->phase, WEFT__PHASE_OPEN, memory_order_relaxed);
    if (!f->profile) return;
    memset(cs->slot_bytes, 0, f->n_slots * sizeof *cs->slot_bytes);
    /* relaxed: published by weft_dag_run_start like the countdowns */
    atomic_store_explicit(&cs->live_bytes, 0, memory_order_relaxed);
    atomic_store_explicit(&cs->live_buffers, 0, memory_order_relaxed);
    atomic_store_explicit(&cs->peak_bytes, 0, memory_order_relaxed);
    atomic_store_explicit(&cs->peak_buffers, 0, memory_order_relaxed);
}

static weft_status_t run_failed(weft_function_t *f, weft__call_state_t *cs, weft_status_t st)
{
    if (cs->failed)
        return weft__fn_error(f, cs->err_status, "%s: %s", f->name, cs->err_msg);
    if (st == WEFT_ECANCELED) /* only the token check returns it without node_fail */
        return weft__fn_error(f, st, "%s: canceled by its call token before it committed: "
                              "nodes not yet started were skipped, the caller's tensors are "
                              "unchanged", f->name);
    return weft__fn_error(f, st, "%s: the run failed with %s", f->name, weft_status_name(st));
}

static weft_status_t call_with_state(weft_function_t *f, weft__call_state_t *cs,
                                     weft_tensor_t *const *inputs, weft_tensor_t **outputs,
                                     uint64_t t0)
{
    prepare(f, cs, inputs, outputs);
    weft__compile_blas_enter();
    weft_status_t st = weft_dag_run_execute(cs->run, cs);
    weft__compile_blas_exit();
    if (st == WEFT_OK && !weft__call_commit(cs)) st = WEFT_ECANCELED;
    bool ran = st == WEFT_OK;
    if (st != WEFT_OK) st = run_failed(f, cs, st);
    else st = deliver(f, cs, inputs, outputs);
    if (f->profile) weft__prof_record(f, cs, weft__now_ns() - t0);
    else {
        pthread_mutex_lock(&f->prof_lock);
        f->calls++;
        pthread_mutex_unlock(&f->prof_lock);
    }
    cleanup(f, cs, ran);
    return st;
}

weft_status_t weft_function_call(weft_function_t *f, size_t n_in, weft_tensor_t *const *inputs,
                                 size_t n_out, weft_tensor_t **outputs)
{
    return weft_function_call_ex(f, n_in, inputs, n_out, outputs, NULL);
}

#define CALL_OPT_END(fld) \
    (offsetof(weft_call_options_t, fld) + sizeof(((weft_call_options_t *)0)->fld))

/* The call's token (NULL without options); options of an older, shorter
 * layout are read as far as their size reaches. */
static weft_status_t call_options(const weft_function_t *f, const weft_call_options_t *opts,
                                  weft_call_token_t **token)
{
    *token = NULL;
    if (!opts) return WEFT_OK;
    if (opts->size < CALL_OPT_END(token))
        return weft__fn_error(f, WEFT_EINVAL, "%s: call options: size %zu too small", f->name,
                              opts->size);
    *token = opts->token;
    return WEFT_OK;
}

/* The failure hook, when opts is long enough to have one. */
static void call_fail_hook(const weft_call_options_t *opts, weft__call_state_t *cs)
{
    bool has = opts && opts->size >= CALL_OPT_END(failure_user);
    cs->fail_hook = has ? opts->on_node_failure : NULL;
    cs->fail_user = has ? opts->failure_user : NULL;
}

static weft_status_t call_registered(weft_function_t *f, weft_call_token_t *token,
                                     const weft_call_options_t *opts,
                                     weft_tensor_t *const *inputs, weft_tensor_t **outputs,
                                     uint64_t t0)
{
    /* relaxed: a hint for weft_function_destroy's EBUSY, which the caller
     * must not race with calls anyway */
    atomic_fetch_add_explicit(&f->in_flight, 1, memory_order_relaxed);
    weft__call_state_t *cs;
    weft_status_t st = weft__state_acquire(f, &cs);
    if (st == WEFT_OK) {
        cs->token = token;
        call_fail_hook(opts, cs);
        st = call_with_state(f, cs, inputs, outputs, t0);
        cs->token = NULL;
        call_fail_hook(NULL, cs);
        weft__state_release(f, cs);
    } else {
        weft__fn_error(f, st, "%s: cannot create a call state", f->name);
    }
    atomic_fetch_sub_explicit(&f->in_flight, 1, memory_order_relaxed);
    return st;
}

weft_status_t weft_function_call_ex(weft_function_t *f, size_t n_in,
                                    weft_tensor_t *const *inputs, size_t n_out,
                                    weft_tensor_t **outputs, const weft_call_options_t *opts)
{
    if (!f) return weft__fn_error(NULL, WEFT_EINVAL, "NULL function");
    if (f->shared) return weft__shared_call(f, n_in, inputs, n_out, outputs, opts);
    return weft__function_call_plain(f, n_in, inputs, n_out, outputs, opts);
}

weft_status_t weft__function_call_plain(weft_function_t *f, size_t n_in,
                                        weft_tensor_t *const *inputs, size_t n_out,
                                        weft_tensor_t **outputs, const weft_call_options_t *opts)
{
    uint64_t t0 = f->profile ? weft__now_ns() : 0;
    weft__fn_clear_error(f);
    weft_call_token_t *token;
    weft_tensor_t **copies = NULL; /* private copies of self-overlapping mutable inputs */
    weft_status_t st = call_options(f, opts, &token);
    if (st == WEFT_OK) st = check_args(f, n_in, inputs, n_out, outputs, &copies);
    if (st != WEFT_OK) return st;
    st = weft__token_enter(f, token);
    if (st == WEFT_OK) {
        st = call_registered(f, token, opts, copies ? copies : inputs, outputs, t0);
        weft__token_leave(token);
    }
    args_release(f, inputs, copies);
    return st;
}
