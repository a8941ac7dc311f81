/* Profile accumulation and snapshots: each finished call folds the
 * scheduler's per-run records (node start/end/worker, worker idle) into the
 * function's accumulator under prof_lock; weft_profile_create turns the
 * accumulator into plain data: per-apply rows, Ops and Class groups sorted by
 * time, parallelism and the critical path (longest path through the DAG
 * weighted by node time; DAG ids are positions in a topological order
 * (lower.c), so every edge goes from a lower to a higher id and one pass in
 * id order suffices). */
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"

weft_status_t weft__prof_init(weft_function_t *f)
{
    if (!f->profile) return WEFT_OK;
    weft__prof_acc_t *a = &f->acc;
    size_t n = f->n_nodes + 1, w = f->workers + 1;
    a->node_time = calloc(n, sizeof *a->node_time);
    a->node_calls = calloc(n, sizeof *a->node_calls);
    a->node_worker = calloc(n, sizeof *a->node_worker);
    a->last_start = calloc(n, sizeof *a->last_start);
    a->last_end = calloc(n, sizeof *a->last_end);
    a->last_worker = calloc(n, sizeof *a->last_worker);
    a->worker_idle = calloc(w, sizeof *a->worker_idle);
    a->worker_busy = calloc(w, sizeof *a->worker_busy);
    a->last_idle = calloc(w, sizeof *a->last_idle);
    a->last_busy = calloc(w, sizeof *a->last_busy);
    a->node_key = calloc(n, sizeof *a->node_key);
    a->inplace_bytes = calloc(n, sizeof *a->inplace_bytes);
    a->inplace_ord = calloc(n, sizeof *a->inplace_ord);
    a->node_skips = calloc(n, sizeof *a->node_skips);
    a->last_skipped = calloc(n, sizeof *a->last_skipped);
    bool ok = a->node_skips && a->last_skipped && a->node_time && a->node_calls && a->node_worker && a->last_start && a->last_end &&
              a->last_worker && a->worker_idle && a->worker_busy && a->last_idle && a->last_busy &&
              a->node_key && a->inplace_bytes && a->inplace_ord;
    return ok ? weft__prof_node_info(f) : WEFT_ENOMEM;
}

void weft__prof_fini(weft_function_t *f)
{
    weft__prof_acc_t *a = &f->acc;
    free(a->node_time);
    free(a->node_calls);
    free(a->node_worker);
    free(a->last_start);
    free(a->last_end);
    free(a->last_worker);
    free(a->worker_idle);
    free(a->worker_busy);
    free(a->last_idle);
    free(a->last_busy);
    free(a->node_key);
    free(a->inplace_bytes);
    free(a->inplace_ord);
    free(a->node_skips);
    free(a->last_skipped);
    memset(a, 0, sizeof *a);
    weft_rewrite_stats_destroy(f->rewrite_stats);
    f->rewrite_stats = NULL;
}

/* Under prof_lock. A node the call skipped (its IfElse guard was false,
 * docs/control-flow.md §2) counts as a skip, not as a run: no time, no
 * call, no worker. */
static void record_nodes(weft_function_t *f, const uint8_t *skipped, const weft_dag_profile_t *p)
{
    weft__prof_acc_t *a = &f->acc;
    uint64_t sum = 0;
    memset(a->last_busy, 0, f->workers * sizeof *a->last_busy);
    for (uint32_t i = 0; i < p->nodes && i < f->n_nodes; i++) {
        uint64_t s = p->node_start_ns[i], e = p->node_end_ns[i];
        unsigned w = p->node_worker[i] < f->workers ? p->node_worker[i] : 0;
        bool skip = skipped && skipped[i];
        a->last_skipped[i] = skip;
        if (skip) {
            a->node_skips[i]++;
            a->last_start[i] = a->last_end[i] = 0;
            continue;
        }
        bool ran = s != 0 || e != 0;
        uint64_t dt = ran && e > s ? e - s : 0;
        a->last_start[i] = ran ? s - p->run_start_ns : 0;
        a->last_end[i] = ran ? e - p->run_start_ns : 0;
        a->last_worker[i] = w;
        if (!ran) continue;
        a->node_time[i] += dt;
        a->node_calls[i]++;
        a->node_worker[i] = w;
        a->worker_busy[w] += dt;
        a->last_busy[w] += dt;
        sum += dt;
    }
    for (unsigned w = 0; w < p->workers && w < f->workers; w++) {
        a->worker_idle[w] += p->worker_idle_ns[w];
        a->last_idle[w] = p->worker_idle_ns[w];
    }
    a->node_ns += sum;
    a->last_node_ns = sum;
    a->last_run_ns = p->run_end_ns - p->run_start_ns;
    a->run_ns += a->last_run_ns;
}

void weft__prof_record(weft_function_t *f, weft__call_state_t *cs, uint64_t call_ns)
{
    weft_dag_profile_t p = {.size = sizeof p};
    bool have = weft_dag_run_profile(cs->run, &p) == WEFT_OK;
    /* relaxed: the run has finished (weft_dag_run_wait synchronized with the
     * workers), these are plain statistics */
    uint64_t peak_b = (uint64_t)atomic_load_explicit(&cs->peak_bytes, memory_order_relaxed);
    uint64_t peak_n = (uint64_t)atomic_load_explicit(&cs->peak_buffers, memory_order_relaxed);
    pthread_mutex_lock(&f->prof_lock);
    weft__prof_acc_t *a = &f->acc;
    f->calls++;
    if (peak_n > f->peak_live_buffers) f->peak_live_buffers = peak_n;
    a->calls++;
    a->call_ns += call_ns;
    a->last_call_ns = call_ns;
    a->last_peak_bytes = peak_b;
    if (peak_b > a->peak_bytes) a->peak_bytes = peak_b;
    a->last_arena_bytes = cs->arena_bytes;
    a->last_seq_peak_bytes = cs->seq_peak_bytes;
    if (cs->arena_bytes >= a->arena_bytes) {
        a->arena_bytes = cs->arena_bytes;
        a->seq_peak_bytes = cs->seq_peak_bytes;
    }
    if (have) record_nodes(f, cs->skipped, &p);
    a->have_last = true;
    pthread_mutex_unlock(&f->prof_lock);
}

weft_status_t weft__prof_not_profiled(const weft_function_t *f, const char *who)
{
    return weft__fn_error(f, WEFT_ESTATE,
                          "%s: function '%s' was compiled without profiling (set "
                          "options.profile, or WEFT_PROFILE=1 in the environment)",
                          who, f->name);
}

weft_status_t weft_profile_reset(weft_function_t *f)
{
    if (!f) return WEFT_EINVAL;
    if (!f->profile) return weft__prof_not_profiled(f, "weft_profile_reset");
    pthread_mutex_lock(&f->prof_lock);
    weft__prof_acc_t *a = &f->acc;
    size_t n = f->n_nodes, w = f->workers;
    memset(a->node_time, 0, n * sizeof *a->node_time);
    memset(a->node_calls, 0, n * sizeof *a->node_calls);
    memset(a->node_skips, 0, n * sizeof *a->node_skips);
    memset(a->worker_idle, 0, w * sizeof *a->worker_idle);
    memset(a->worker_busy, 0, w * sizeof *a->worker_busy);
    a->calls = a->call_ns = a->run_ns = a->node_ns = a->peak_bytes = 0;
    a->arena_bytes = a->seq_peak_bytes = 0;
    pthread_mutex_unlock(&f->prof_lock);
    return WEFT_OK;
}
