/* weft_profile_create / weft_profile_destroy: a self-contained snapshot of a
 * function's profile (copied under prof_lock, then decorated with printed
 * names, groups and the critical path outside the lock). */
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"

typedef struct snap {
    weft_profile_t p; /* first: the public pointer is the snapshot */
    char *fname;
    weft_profile_apply_t *applies;
    char *strings; /* every apply/op/class name, NUL-separated */
    uint64_t *idle, *busy;
    uint32_t *crit;
    weft_profile_group_t *ops, *classes;
    weft_profile_rewrite_t *rewrites;
    char *rw_names; /* every rewriter name, NUL-separated */
} snap_t;

void weft_profile_destroy(weft_profile_t *p)
{
    snap_t *s = (snap_t *)p;
    if (!s) return;
    free(s->fname);
    free(s->applies);
    free(s->strings);
    free(s->idle);
    free(s->busy);
    free(s->crit);
    free(s->ops);
    free(s->classes);
    free(s->rewrites);
    free(s->rw_names);
    free(s);
}

/* Copies the accumulator for the scope (under prof_lock). */
static void copy_locked(const weft_function_t *f, weft_profile_scope_t scope, snap_t *s)
{
    const weft__prof_acc_t *a = &f->acc;
    bool last = scope == WEFT_PROFILE_LAST_CALL;
    weft_profile_t *p = &s->p;
    p->calls = last ? 1 : a->calls;
    p->call_time_ns = last ? a->last_call_ns : a->call_ns;
    p->run_time_ns = last ? a->last_run_ns : a->run_ns;
    p->node_time_ns = last ? a->last_node_ns : a->node_ns;
    p->peak_bytes = last ? a->last_peak_bytes : a->peak_bytes;
    p->arena_bytes = last ? a->last_arena_bytes : a->arena_bytes;
    p->sequential_peak_bytes = last ? a->last_seq_peak_bytes : a->seq_peak_bytes;
    for (unsigned w = 0; w < f->workers; w++) {
        s->idle[w] = last ? a->last_idle[w] : a->worker_idle[w];
        s->busy[w] = last ? a->last_busy[w] : a->worker_busy[w];
    }
    for (uint32_t i = 0; i < f->n_nodes; i++) {
        weft_profile_apply_t *r = &s->applies[i];
        bool ran = a->last_end[i] != 0 || a->last_start[i] != 0;
        r->index = i;
        r->calls = last ? (ran ? 1 : 0) : a->node_calls[i];
        r->time_ns = last ? a->last_end[i] - a->last_start[i] : a->node_time[i];
        r->worker = a->last_worker[i];
        r->start_ns = a->last_start[i];
        r->end_ns = a->last_end[i];
        r->key = a->node_key[i];
        r->inplace_bytes = a->inplace_bytes[i];
        r->inplace_orderings = a->inplace_ord[i];
        uint32_t reuse = f->mp.reuse_in ? f->mp.reuse_in[i] : UINT32_MAX;
        r->reuses_input = reuse == UINT32_MAX ? -1 : (int)reuse;
        r->skips = last ? a->last_skipped[i] : a->node_skips[i];
    }
}

/* Longest path through the DAG weighted by node time. */
static weft_status_t critical_path(const weft_function_t *f, snap_t *s)
{
    uint32_t n = f->n_nodes;
    uint64_t *best = calloc(n + 1, sizeof *best), *dist = calloc(n + 1, sizeof *dist);
    uint32_t *from = malloc((n + 1) * sizeof *from);
    s->crit = malloc((n + 1) * sizeof *s->crit);
    if (!best || !dist || !from || !s->crit) {
        free(best), free(dist), free(from);
        return WEFT_ENOMEM;
    }
    size_t e = 0;
    uint32_t end = 0;
    for (uint32_t i = 0; i < n; i++) from[i] = UINT32_MAX;
    for (uint32_t i = 0; i < n; i++) {
        dist[i] = best[i] + s->applies[i].time_ns;
        if (dist[i] > dist[end]) end = i;
        /* edges sorted by source: every edge into i came from a lower id */
        for (; e < f->n_edges && weft__edge_from(f->edges[e]) == i; e++) {
            uint32_t to = weft__edge_to(f->edges[e]);
            if (from[to] == UINT32_MAX || dist[i] > best[to]) {
                best[to] = dist[i];
                from[to] = i;
            }
        }
    }
    size_t len = 0;
    for (uint32_t v = n ? end : UINT32_MAX; v != UINT32_MAX; v = from[v]) s->crit[len++] = v;
    for (size_t i = 0; i < len / 2; i++) {
        uint32_t t = s->crit[i];
        s->crit[i] = s->crit[len - 1 - i];
        s->crit[len - 1 - i] = t;
    }
    for (size_t i = 0; i < len; i++) s->applies[s->crit[i]].on_critical_path = true;
    s->p.n_critical = len;
    s->p.critical_path = s->crit;
    s->p.critical_path_ns = n ? dist[end] : 0;
    free(best), free(dist), free(from);
    return WEFT_OK;
}

static int cmp_group(const void *a, const void *b)
{
    const weft_profile_group_t *x = a, *y = b;
    return x->time_ns < y->time_ns ? 1 : x->time_ns > y->time_ns ? -1 : strcmp(x->name, y->name);
}

/* Groups the applies by printed op or by op class name. */
static weft_status_t group_by(snap_t *s, bool by_class, weft_profile_group_t **out, size_t *n_out)
{
    size_t n = s->p.n_applies, ng = 0;
    weft_profile_group_t *g = calloc(n + 1, sizeof *g);
    if (!g) return WEFT_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const weft_profile_apply_t *r = &s->applies[i];
        const char *key = by_class ? r->op_class : r->op;
        size_t k = 0;
        while (k < ng && strcmp(g[k].name, key) != 0) k++;
        if (k == ng) g[ng++].name = key;
        g[k].time_ns += r->time_ns;
        g[k].calls += r->calls;
        g[k].applies++;
    }
    for (size_t k = 0; k < ng; k++)
        g[k].percent = s->p.node_time_ns ? 100.0 * (double)g[k].time_ns / (double)s->p.node_time_ns
                                         : 0.0;
    qsort(g, ng, sizeof *g, cmp_group);
    *out = g;
    *n_out = ng;
    return WEFT_OK;
}

static void set_percents(snap_t *s)
{
    for (size_t i = 0; i < s->p.n_applies; i++)
        s->applies[i].percent =
            s->p.node_time_ns
                ? 100.0 * (double)s->applies[i].time_ns / (double)s->p.node_time_ns
                : 0.0;
}

static int cmp_rewrite(const void *a, const void *b)
{
    const weft_profile_rewrite_t *x = a, *y = b;
    return x->time_ns < y->time_ns ? 1 : x->time_ns > y->time_ns ? -1 : strcmp(x->name, y->name);
}

/* The compile's rewrite profile, names copied into the snapshot. The stats
 * object is written only while compiling, so snapshots on any threads may
 * read it at once. */
static weft_status_t copy_rewrites(const weft_function_t *f, snap_t *s)
{
    size_t n = f->rewrite_stats ? weft_rewrite_stats_n_entries(f->rewrite_stats) : 0, len = 0;
    for (size_t i = 0; i < n; i++) len += strlen(weft_rewrite_stats_name(f->rewrite_stats, i)) + 1;
    s->rewrites = calloc(n + 1, sizeof *s->rewrites);
    s->rw_names = malloc(len + 1);
    if (!s->rewrites || !s->rw_names) return WEFT_ENOMEM;
    char *c = s->rw_names;
    for (size_t i = 0; i < n; i++) {
        const char *name = weft_rewrite_stats_name(f->rewrite_stats, i);
        weft_profile_rewrite_t *r = &s->rewrites[i];
        double sec = 0.0;
        (void)weft_rewrite_stats_get(f->rewrite_stats, name, &r->applied, &r->failed, &sec);
        r->time_ns = (uint64_t)(sec * 1e9);
        r->name = memcpy(c, name, strlen(name) + 1);
        c += strlen(name) + 1;
    }
    qsort(s->rewrites, n, sizeof *s->rewrites, cmp_rewrite);
    s->p.n_rewrites = n;
    s->p.rewrites = s->rewrites;
    return WEFT_OK;
}

static weft_status_t snap_alloc(const weft_function_t *f, snap_t **out)
{
    snap_t *s = calloc(1, sizeof *s);
    if (!s) return WEFT_ENOMEM;
    *out = s;
    s->fname = weft__compile_strdup(f->name);
    s->applies = calloc(f->n_nodes + 1, sizeof *s->applies);
    s->idle = calloc(f->workers + 1, sizeof *s->idle);
    s->busy = calloc(f->workers + 1, sizeof *s->busy);
    s->p.n_applies = f->n_nodes;
    return s->fname && s->applies && s->idle && s->busy ? WEFT_OK : WEFT_ENOMEM;
}

static void fill_public(const weft_function_t *f, weft_profile_scope_t scope, snap_t *s)
{
    weft_profile_t *p = &s->p;
    p->function = s->fname;
    p->scope = scope;
    p->compile_time_ns = f->compile_ns;
    p->rewrite_time_ns = f->rewrite_ns;
    p->workers = f->workers;
    p->worker_idle_ns = s->idle;
    p->worker_busy_ns = s->busy;
    p->n_applies = f->n_nodes;
    p->applies = s->applies;
    p->parallelism = p->run_time_ns ? (double)p->node_time_ns / (double)p->run_time_ns : 0.0;
    p->ideal_speedup =
        p->critical_path_ns ? (double)p->node_time_ns / (double)p->critical_path_ns : 0.0;
}

weft_status_t weft_profile_create(const weft_function_t *f, weft_profile_scope_t scope,
                                  weft_profile_t **out)
{
    if (!f || !out || (scope != WEFT_PROFILE_TOTAL && scope != WEFT_PROFILE_LAST_CALL))
        return WEFT_EINVAL;
    *out = NULL;
    if (!f->profile) return weft__prof_not_profiled(f, "weft_profile_create");
    snap_t *s = NULL;
    weft_status_t st = snap_alloc(f, &s);
    if (!s) return weft__fn_error(f, WEFT_ENOMEM, "%s: profile snapshot: out of memory", f->name);
    if (st == WEFT_OK) {
        weft_function_t *mf = (weft_function_t *)(uintptr_t)f; /* the lock only */
        pthread_mutex_lock(&mf->prof_lock);
        bool have = f->acc.have_last;
        if (have || scope == WEFT_PROFILE_TOTAL) copy_locked(f, scope, s);
        pthread_mutex_unlock(&mf->prof_lock);
        if (!have && scope == WEFT_PROFILE_LAST_CALL)
            st = weft__fn_error(f, WEFT_ESTATE,
                                "%s: weft_profile_create: no call yet to take LAST_CALL from",
                                f->name);
    }
    if (st == WEFT_OK) st = weft__prof_label_applies(f, s->applies, &s->strings);
    if (st == WEFT_OK) set_percents(s);
    if (st == WEFT_OK) st = copy_rewrites(f, s);
    if (st == WEFT_OK) st = critical_path(f, s);
    if (st == WEFT_OK) st = group_by(s, false, &s->ops, &s->p.n_ops);
    if (st == WEFT_OK) st = group_by(s, true, &s->classes, &s->p.n_classes);
    if (st != WEFT_OK) {
        weft_profile_destroy(&s->p);
        return st == WEFT_ENOMEM ? weft__fn_error(f, st, "%s: profile snapshot", f->name) : st;
    }
    s->p.ops = s->ops;
    s->p.classes = s->classes;
    fill_public(f, scope, s);
    *out = &s->p;
    return WEFT_OK;
}
