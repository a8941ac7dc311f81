/* Rewrite statistics: per rewriter name, applications, failures and time;
 * composites add passes and node counts. Printed in the docs/rewrites.md §8
 * style. */
#include <stdlib.h>
#include <string.h>

#include "rewrite_int.h"

typedef struct stat_entry {
    const char *key; /* the name pointer last used to find it (fast path) */
    char *name;
    uint64_t applied, failed;
    double seconds;
    bool composite;
    size_t runs, passes, nodes_before, nodes_after;
} stat_entry_t;

struct weft_rewrite_stats {
    stat_entry_t *e;
    size_t n, cap;
};

weft_status_t weft_rewrite_stats_create(weft_rewrite_stats_t **out)
{
    if (!out) return WEFT_EINVAL;
    *out = calloc(1, sizeof **out);
    return *out ? WEFT_OK : WEFT_ENOMEM;
}

void weft_rewrite_stats_reset(weft_rewrite_stats_t *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n; i++) free(s->e[i].name);
    s->n = 0;
}

void weft_rewrite_stats_destroy(weft_rewrite_stats_t *s)
{
    if (!s) return;
    weft_rewrite_stats_reset(s);
    free(s->e);
    free(s);
}

static stat_entry_t *find(const weft_rewrite_stats_t *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->e[i].key == name) return &s->e[i];
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->e[i].name, name) == 0) {
            s->e[i].key = name;
            return &s->e[i];
        }
    return NULL;
}

static weft_status_t find_or_add(weft_rewrite_stats_t *s, const char *name, stat_entry_t **out)
{
    *out = find(s, name);
    if (*out) return WEFT_OK;
    if (!weft__vec_grow(NULL, (void **)&s->e, &s->cap, s->n + 1, sizeof *s->e)) return WEFT_ENOMEM;
    char *nm = weft__strdup(name);
    if (!nm) return WEFT_ENOMEM;
    stat_entry_t *e = &s->e[s->n++];
    memset(e, 0, sizeof *e);
    e->name = nm;
    e->key = name;
    *out = e;
    return WEFT_OK;
}

weft_status_t weft_rewrite_stats_record(weft_rewrite_stats_t *s, const char *name,
                                        uint64_t applied, uint64_t failed, double seconds)
{
    if (!name) return WEFT_EINVAL;
    if (!s) return WEFT_OK;
    stat_entry_t *e;
    weft_status_t st = find_or_add(s, name, &e);
    if (st != WEFT_OK) return st;
    e->applied += applied;
    e->failed += failed;
    e->seconds += seconds;
    return WEFT_OK;
}

weft_status_t weft__stats_composite(weft_rewrite_stats_t *s, const char *name, double seconds,
                                    size_t passes, size_t nodes_before, size_t nodes_after)
{
    if (!s) return WEFT_OK;
    stat_entry_t *e;
    weft_status_t st = find_or_add(s, name, &e);
    if (st != WEFT_OK) return st;
    e->composite = true;
    e->seconds += seconds;
    e->runs++;
    e->passes += passes;
    e->nodes_before = nodes_before;
    e->nodes_after = nodes_after;
    return WEFT_OK;
}

weft_status_t weft_rewrite_stats_get(const weft_rewrite_stats_t *s, const char *name,
                                     uint64_t *applied, uint64_t *failed, double *seconds)
{
    if (!s || !name) return WEFT_EINVAL;
    const stat_entry_t *e = find(s, name);
    if (!e) return WEFT_ENOTFOUND;
    if (applied) *applied = e->applied;
    if (failed) *failed = e->failed;
    if (seconds) *seconds = e->seconds;
    return WEFT_OK;
}

size_t weft_rewrite_stats_n_entries(const weft_rewrite_stats_t *s)
{
    return s ? s->n : 0;
}

const char *weft_rewrite_stats_name(const weft_rewrite_stats_t *s, size_t i)
{
    return s && i < s->n ? s->e[i].name : NULL;
}

static int by_time(const void *a, const void *b)
{
    const stat_entry_t *x = *(const stat_entry_t *const *)a, *y = *(const stat_entry_t *const *)b;
    if (x->seconds != y->seconds) return x->seconds < y->seconds ? 1 : -1;
    return strcmp(x->name, y->name);
}

weft_status_t weft_rewrite_stats_print(const weft_rewrite_stats_t *s, FILE *f)
{
    if (!s || !f) return WEFT_EINVAL;
    const stat_entry_t **order = weft__vec_malloc(s->n ? s->n : 1, sizeof *order);
    if (!order) return WEFT_ENOMEM;
    for (size_t i = 0; i < s->n; i++) order[i] = &s->e[i];
    qsort(order, s->n, sizeof *order, by_time);
    int bad = fprintf(f, "Rewrite profile (%zu entries)\n", s->n) < 0;
    for (size_t i = 0; i < s->n && !bad; i++) {
        const stat_entry_t *e = order[i];
        if (e->composite)
            bad |= fprintf(f, "  %.6fs - %s: %zu run(s), %zu pass(es), nodes %zu -> %zu\n",
                           e->seconds, e->name, e->runs, e->passes, e->nodes_before,
                           e->nodes_after) < 0;
    }
    for (size_t i = 0; i < s->n && !bad; i++) {
        const stat_entry_t *e = order[i];
        if (!e->composite)
            bad |= fprintf(f, "  %.6fs - %llu applied - %llu failed - %s\n", e->seconds,
                           (unsigned long long)e->applied, (unsigned long long)e->failed,
                           e->name) < 0;
    }
    free(order);
    return bad ? WEFT_EIO : WEFT_OK;
}
