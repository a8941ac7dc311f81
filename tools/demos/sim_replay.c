/* The event replay of sim_replay.h: events are task ends (per rank, with a
 * version so that an end moved by a change of the host's sharing is
 * recognised as stale) and tasks becoming ready (a message's arrival, or at
 * once when every input is local). All events at one instant are applied
 * before idle ranks pick their next task, so a rank picks among everything
 * ready at that instant. */
#include "sim_replay.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- a binary min-heap of (key, id, version), ordered by key then id ---- */

typedef struct ev {
    double key;
    int32_t id;
    uint32_t ver;
} ev_t;

typedef struct heap {
    ev_t *e;
    size_t n, cap;
} heap_t;

static int ev_less(const ev_t *a, const ev_t *b)
{
    return a->key < b->key || (a->key == b->key && a->id < b->id);
}

static int heap_push(heap_t *h, double key, int32_t id, uint32_t ver)
{
    if (h->n == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 64;
        ev_t *e = realloc(h->e, cap * sizeof *e);
        if (!e) return -1;
        h->e = e;
        h->cap = cap;
    }
    ev_t x = {key, id, ver};
    size_t i = h->n++;
    while (i > 0 && ev_less(&x, &h->e[(i - 1) / 2])) {
        h->e[i] = h->e[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->e[i] = x;
    return 0;
}

static ev_t heap_pop(heap_t *h)
{
    ev_t top = h->e[0], x = h->e[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && ev_less(&h->e[c + 1], &h->e[c])) c++;
        if (!ev_less(&h->e[c], &x)) break;
        h->e[i] = h->e[c];
        i = c;
    }
    if (h->n) h->e[i] = x;
    return top;
}

/* ---- replay state ---- */

typedef struct rs {
    const sim_task_t *t;
    const sim_model_t *m;
    int32_t n, *succ_off, *succ, *pending, *running;
    double *ready, *rem, *fin_at, *link_free, *host_t, *rate;
    double *level; /* per task: its bottom level, the ready queues' key */
    uint32_t *ver;
    int *busy;
    heap_t *rq;       /* per rank: ready tasks by index */
    heap_t ends, due; /* task ends (id = rank), tasks becoming ready */
    int32_t *touched;
    int n_touched;
    char *is_touched;
} rs_t;

static double cost_of(const rs_t *s, int32_t u)
{
    const sim_model_t *m = s->m;
    int r = m->per_rank ? s->t[u].rank : 0;
    return m->cost[(size_t)r * (size_t)m->n_kinds + s->t[u].kind];
}

static double share(const rs_t *s, int h)
{
    int k = s->busy[h];
    return k > s->m->cores ? (double)s->m->cores / k : 1.0;
}

/* Work done on host h's running tasks since its last change. */
static void host_advance(rs_t *s, int h, double now)
{
    int r0 = h * s->m->ranks_per_host;
    for (int r = r0; r < r0 + s->m->ranks_per_host && r < s->m->ranks; r++)
        if (s->running[r] >= 0) s->rem[r] -= (now - s->host_t[h]) * s->rate[h];
    s->host_t[h] = now;
}

/* New ends for host h's running tasks when its share changed (skip: rank
 * `fresh`, whose end the caller sets). */
static int host_reshare(rs_t *s, int h, double now, int fresh)
{
    double rate = share(s, h);
    int changed = rate != s->rate[h], r0 = h * s->m->ranks_per_host;
    s->rate[h] = rate;
    for (int r = r0; r < r0 + s->m->ranks_per_host && r < s->m->ranks; r++) {
        if (s->running[r] < 0 || (!changed && r != fresh)) continue;
        s->fin_at[r] = now + s->rem[r] / rate;
        if (heap_push(&s->ends, s->fin_at[r], r, ++s->ver[r]) != 0) return -1;
    }
    return 0;
}

static int try_start(rs_t *s, int r, double now)
{
    if (s->running[r] >= 0 || !s->rq[r].n) return 0;
    int32_t u = heap_pop(&s->rq[r]).id;
    int h = r / s->m->ranks_per_host;
    host_advance(s, h, now);
    s->running[r] = u;
    s->rem[r] = cost_of(s, u);
    s->busy[h]++;
    return host_reshare(s, h, now, r);
}

static void touch(rs_t *s, int r)
{
    if (s->is_touched[r]) return;
    s->is_touched[r] = 1;
    s->touched[s->n_touched++] = r;
}

/* Task u ended at `now` on its rank: its consumers get their inputs. */
static int finish(rs_t *s, int32_t u, double now)
{
    const sim_task_t *t = &s->t[u];
    int r = t->rank, h = r / s->m->ranks_per_host;
    host_advance(s, h, now);
    s->running[r] = -1;
    s->busy[h]--;
    if (host_reshare(s, h, now, -1) != 0) return -1;
    touch(s, r);
    double arrival = now;
    for (int32_t e = s->succ_off[u]; e < s->succ_off[u + 1]; e++) {
        int32_t c = s->succ[e];
        if (s->t[c].rank != r) { /* a message (one consumer per send) */
            double start = fmax(now, s->link_free[r]);
            s->link_free[r] = start + t->bytes / s->m->bw;
            arrival = s->link_free[r] + s->m->lat;
        }
        double at = s->t[c].rank != r ? arrival : now;
        s->ready[c] = fmax(s->ready[c], at);
        if (--s->pending[c] == 0 && heap_push(&s->due, s->ready[c], c, 0) != 0) return -1;
    }
    return 0;
}

/* Every event at the earliest instant; then idle touched ranks start. */
static int step(rs_t *s, double *now)
{
    while (s->ends.n && (s->ends.e[0].ver != s->ver[s->ends.e[0].id] ||
                         s->running[s->ends.e[0].id] < 0))
        heap_pop(&s->ends); /* stale */
    double t_end = s->ends.n ? s->ends.e[0].key : INFINITY;
    double t_due = s->due.n ? s->due.e[0].key : INFINITY;
    if (isinf(t_end) && isinf(t_due)) return 1; /* stuck: a cycle */
    *now = fmin(t_end, t_due);
    for (;;) {
        if (s->ends.n && s->ends.e[0].key <= *now) {
            ev_t e = heap_pop(&s->ends);
            if (e.ver != s->ver[e.id] || s->running[e.id] < 0) continue;
            if (finish(s, s->running[e.id], *now) != 0) return -1;
        }
        else if (s->due.n && s->due.e[0].key <= *now) {
            int32_t u = heap_pop(&s->due).id;
            if (heap_push(&s->rq[s->t[u].rank], -s->level[u], u, 0) != 0) return -1;
            touch(s, s->t[u].rank);
        }
        else break;
    }
    for (int k = 0; k < s->n_touched; k++) {
        s->is_touched[s->touched[k]] = 0;
        if (try_start(s, s->touched[k], *now) != 0) return -1;
    }
    s->n_touched = 0;
    return 0;
}

static int build_succ(rs_t *s)
{
    int32_t n = s->n;
    s->succ_off = calloc((size_t)n + 1, sizeof *s->succ_off);
    if (!s->succ_off) return -1;
    for (int32_t u = 0; u < n; u++)
        for (int e = 0; e < 3; e++)
            if (s->t[u].in[e] >= 0) s->succ_off[s->t[u].in[e] + 1]++, s->pending[u]++;
    for (int32_t u = 0; u < n; u++) s->succ_off[u + 1] += s->succ_off[u];
    s->succ = malloc(((size_t)s->succ_off[n] + 1) * sizeof *s->succ);
    int32_t *fill = calloc((size_t)n + 1, sizeof *fill);
    if (!s->succ || !fill) {
        free(fill);
        return -1;
    }
    for (int32_t u = 0; u < n; u++)
        for (int e = 0; e < 3; e++) {
            int32_t v = s->t[u].in[e];
            if (v >= 0) s->succ[s->succ_off[v] + fill[v]++] = u;
        }
    free(fill);
    return 0;
}

static void rs_free(rs_t *s)
{
    for (int r = 0; s->rq && r < s->m->ranks; r++) free(s->rq[r].e);
    free(s->rq);
    free(s->ends.e);
    free(s->due.e);
    free(s->succ_off);
    free(s->succ);
    free(s->pending);
    free(s->running);
    free(s->ready);
    free(s->rem);
    free(s->fin_at);
    free(s->link_free);
    free(s->host_t);
    free(s->rate);
    free(s->ver);
    free(s->busy);
    free(s->touched);
    free(s->is_touched);
    free(s->level);
}

/* Bottom levels, consumers first (they have higher indices). */
static int levels(rs_t *s)
{
    s->level = malloc(((size_t)s->n + 1) * sizeof *s->level);
    if (!s->level) return -1;
    for (int32_t u = s->n; u-- > 0;) {
        double below = 0;
        for (int32_t e = s->succ_off[u]; e < s->succ_off[u + 1]; e++) {
            int32_t c = s->succ[e];
            double msg = s->t[c].rank != s->t[u].rank ? s->m->lat + s->t[u].bytes / s->m->bw : 0;
            below = fmax(below, msg + s->level[c]);
        }
        s->level[u] = cost_of(s, u) + below;
    }
    return 0;
}

static int rs_init(rs_t *s, const sim_task_t *t, int32_t n, const sim_model_t *m)
{
    memset(s, 0, sizeof *s);
    s->t = t;
    s->m = m;
    s->n = n;
    size_t R = (size_t)m->ranks, H = R / (size_t)m->ranks_per_host + 1;
    s->pending = calloc((size_t)n + 1, sizeof *s->pending);
    s->ready = calloc((size_t)n + 1, sizeof *s->ready);
    s->running = malloc(R * sizeof *s->running);
    s->rem = calloc(R, sizeof *s->rem);
    s->fin_at = calloc(R, sizeof *s->fin_at);
    s->link_free = calloc(R, sizeof *s->link_free);
    s->ver = calloc(R, sizeof *s->ver);
    s->touched = malloc(R * sizeof *s->touched);
    s->is_touched = calloc(R, 1);
    s->rq = calloc(R, sizeof *s->rq);
    s->host_t = calloc(H, sizeof *s->host_t);
    s->rate = malloc(H * sizeof *s->rate);
    s->busy = calloc(H, sizeof *s->busy);
    if (!s->pending || !s->ready || !s->running || !s->rem || !s->fin_at || !s->link_free ||
        !s->ver || !s->touched || !s->is_touched || !s->rq || !s->host_t || !s->rate || !s->busy)
        return -1;
    for (size_t r = 0; r < R; r++) s->running[r] = -1;
    for (size_t h = 0; h < H; h++) s->rate[h] = 1.0;
    return build_succ(s) != 0 ? -1 : levels(s);
}

double sim_replay(const sim_task_t *tasks, int32_t n, const sim_model_t *m)
{
    rs_t s;
    if (m->ranks < 1 || m->ranks_per_host < 1 || m->cores < 1) return -1.0;
    double now = 0, makespan = -1.0;
    int rc = rs_init(&s, tasks, n, m);
    for (int32_t u = 0; rc == 0 && u < n; u++)
        if (!s.pending[u]) rc = heap_push(&s.due, 0.0, u, 0);
    while (rc == 0 && (s.ends.n || s.due.n)) rc = step(&s, &now);
    if (rc >= 0) { /* every task ran iff no rank is left running or waiting */
        makespan = now;
        for (int r = 0; r < m->ranks; r++)
            if (s.rq[r].n || s.running[r] >= 0) makespan = -1.0;
        for (int32_t u = 0; u < n; u++)
            if (s.pending[u] > 0) makespan = -1.0;
    }
    rs_free(&s);
    return makespan;
}
