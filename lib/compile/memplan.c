/* The static memory plan's placement (docs/execution.md §4.6): which
 * intermediates may share memory under every schedule the task DAG allows,
 * and an offset in one arena for each.
 *
 * Rule: value u may occupy memory of value v only when every reader of v
 * (every node that reads v or an alias of it: a view, a destroyer's output)
 * is a strict DAG ancestor of u's writer, or the same with u and v swapped.
 * A node starts only after all its ancestors have finished (the scheduler's
 * pending counters), so under any schedule v's last use is over before u's
 * first write. Values that are not ordered this way "conflict" and get
 * disjoint byte ranges.
 *
 * Ancestors come from bit sets: per node, the set of "reader" nodes (those
 * that read some planned value) that are its strict ancestors, built in one
 * pass over the nodes in id order (every edge goes from a lower id to a
 * higher one). Its size is bounded (WEFT__MP_MAX_BITS); larger graphs and
 * more than WEFT__MP_MAX_VALUES values are not planned (the pool serves
 * them, as without a plan). */
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "compile_int.h"

#define ALIGN 64u

static inline void bit_set(uint64_t *row, uint32_t i)
{
    row[i >> 6] |= (uint64_t)1 << (i & 63);
}

/* col[node]: its column among the reader nodes, or UINT32_MAX. Returns the
 * number of columns. */
static uint32_t reader_columns(uint32_t n_nodes, size_t n, const weft__mp_value_t *v,
                               uint32_t *col)
{
    memset(col, 0xff, (size_t)n_nodes * sizeof *col);
    uint32_t nc = 0;
    for (size_t i = 0; i < n; i++)
        for (uint32_t r = 0; r < v[i].n_readers; r++)
            if (col[v[i].readers[r]] == UINT32_MAX) col[v[i].readers[r]] = nc++;
    return nc;
}

/* anc: n_nodes rows of w words; row x holds the reader columns of x's strict
 * ancestors. edges sorted by target is not required: rows are filled in
 * target order by walking a predecessor CSR. */
static bool ancestor_rows(uint32_t n_nodes, const uint64_t *edges, size_t ne, const uint32_t *col,
                          size_t w, uint64_t *anc)
{
    uint32_t *start = calloc((size_t)n_nodes + 2, sizeof *start);
    uint32_t *pred = malloc((ne + 1) * sizeof *pred);
    if (!start || !pred) {
        free(start);
        free(pred);
        return false;
    }
    for (size_t k = 0; k < ne; k++) start[weft__edge_to(edges[k]) + 2]++;
    for (uint32_t x = 0; x < n_nodes; x++) start[x + 2] += start[x + 1];
    for (size_t k = 0; k < ne; k++) pred[start[weft__edge_to(edges[k]) + 1]++] = weft__edge_from(edges[k]);
    for (uint32_t x = 0; x < n_nodes; x++) {
        uint64_t *row = anc + (size_t)x * w;
        for (uint32_t k = start[x]; k < start[x + 1]; k++) {
            uint32_t p = pred[k];
            const uint64_t *pr = anc + (size_t)p * w;
            for (size_t j = 0; j < w; j++) row[j] |= pr[j];
            if (col[p] != UINT32_MAX) bit_set(row, col[p]);
        }
    }
    free(start);
    free(pred);
    return true;
}

/* Every reader of a is a strict ancestor of b's writer. */
static bool all_before(const weft__mp_value_t *a, const weft__mp_value_t *b,
                       const weft__mp_reach_t *r)
{
    for (uint32_t k = 0; k < a->n_readers; k++)
        if (!weft__mp_reach_before(r, a->readers[k], b->writer)) return false;
    return true;
}

void weft__memplan_reach_free(weft__mp_reach_t *r)
{
    free(r->col);
    free(r->anc);
    r->col = NULL;
    r->anc = NULL;
}

weft_status_t weft__memplan_reach(uint32_t n_nodes, const uint64_t *edges, size_t ne, size_t n,
                                  const weft__mp_value_t *v, weft__mp_reach_t *r)
{
    r->anc = NULL;
    r->col = malloc(((size_t)n_nodes + 1) * sizeof *r->col);
    if (!r->col) return WEFT_ENOMEM;
    r->w = (reader_columns(n_nodes, n, v, r->col) + 63) / 64;
    if ((size_t)n_nodes * r->w * 64 > WEFT__MP_MAX_BITS) {
        weft__memplan_reach_free(r);
        return WEFT_ERANGE;
    }
    r->anc = calloc((size_t)n_nodes * r->w + 1, sizeof *r->anc);
    if (r->anc && ancestor_rows(n_nodes, edges, ne, r->col, r->w, r->anc)) return WEFT_OK;
    weft__memplan_reach_free(r);
    return WEFT_ENOMEM;
}

/* The last node (in id order) that uses a: its readers follow its writer,
 * and a value without readers lists its writer. */
static uint32_t last_use(const weft__mp_value_t *a)
{
    uint32_t last = a->writer;
    for (uint32_t r = 0; r < a->n_readers; r++)
        if (a->readers[r] > last) last = a->readers[r];
    return last;
}

/* One worker runs the nodes in id order: a value is live from its writer
 * to its last use, and two values conflict when those intervals meet. */
static weft_status_t sequential_conflicts(size_t n, const weft__mp_value_t *v, uint64_t **out)
{
    size_t cw = weft__memplan_words(n);
    uint64_t *m = calloc(n * cw + 1, sizeof *m);
    uint32_t *last = malloc((n + 1) * sizeof *last);
    if (!m || !last) {
        free(m);
        free(last);
        return WEFT_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) last[i] = last_use(&v[i]);
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            if (last[i] < v[j].writer || last[j] < v[i].writer) continue;
            bit_set(m + i * cw, (uint32_t)j);
            bit_set(m + j * cw, (uint32_t)i);
        }
    free(last);
    *out = m;
    return WEFT_OK;
}

weft_status_t weft__memplan_conflicts(uint32_t n_nodes, const uint64_t *edges, size_t ne,
                                      size_t n, const weft__mp_value_t *v, bool sequential,
                                      uint64_t **out)
{
    *out = NULL;
    if (n == 0) return WEFT_OK;
    if (n > WEFT__MP_MAX_VALUES) return WEFT_ERANGE;
    if (sequential) return sequential_conflicts(n, v, out);
    weft__mp_reach_t r;
    weft_status_t st = weft__memplan_reach(n_nodes, edges, ne, n, v, &r);
    if (st != WEFT_OK) return st;
    size_t cw = weft__memplan_words(n);
    uint64_t *m = calloc(n * cw + 1, sizeof *m);
    for (size_t i = 0; m && i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            if (all_before(&v[i], &v[j], &r) || all_before(&v[j], &v[i], &r)) continue;
            bit_set(m + i * cw, (uint32_t)j);
            bit_set(m + j * cw, (uint32_t)i);
        }
    weft__memplan_reach_free(&r);
    if (!m) return WEFT_ENOMEM;
    *out = m;
    return WEFT_OK;
}

typedef struct span {
    uint64_t lo, hi;
} span_t;

static int cmp_span(const void *a, const void *b)
{
    const span_t *x = a, *y = b;
    return (x->lo > y->lo) - (x->lo < y->lo);
}

/* Placement order: largest first, ties by index (deterministic). */
typedef struct by_size {
    uint64_t bytes;
    uint32_t i;
} by_size_t;

static int cmp_by_size(const void *a, const void *b)
{
    const by_size_t *x = a, *y = b;
    if (x->bytes != y->bytes) return x->bytes < y->bytes ? 1 : -1;
    return (x->i > y->i) - (x->i < y->i);
}

static uint64_t round_up(uint64_t b)
{
    return (b + ALIGN - 1) / ALIGN * ALIGN;
}

/* Best fit among the gaps the placed conflicting spans (sorted) leave: the
 * smallest gap that holds size, else the end of the highest span. */
static uint64_t best_fit(const span_t *s, size_t ns, uint64_t size)
{
    uint64_t at = 0, best = UINT64_MAX, best_gap = UINT64_MAX;
    for (size_t k = 0; k < ns; k++) {
        if (s[k].lo > at && s[k].lo - at >= size && s[k].lo - at < best_gap) {
            best_gap = s[k].lo - at;
            best = at;
        }
        if (s[k].hi > at) at = s[k].hi;
    }
    return best != UINT64_MAX ? best : at;
}

weft_status_t weft__memplan_place(size_t n, const uint64_t *bytes, const uint64_t *conflict,
                                  uint64_t *offset, uint64_t *arena_bytes)
{
    *arena_bytes = 0;
    by_size_t *order = malloc((n + 1) * sizeof *order);
    span_t *s = malloc((n + 1) * sizeof *s);
    if (!order || !s) {
        free(order);
        free(s);
        return WEFT_ENOMEM;
    }
    size_t cw = weft__memplan_words(n), m = 0;
    for (size_t i = 0; i < n; i++) {
        offset[i] = WEFT__MP_NONE;
        if (bytes[i] != WEFT__MP_NONE) order[m++] = (by_size_t){bytes[i], (uint32_t)i};
    }
    qsort(order, m, sizeof *order, cmp_by_size);
    for (size_t k = 0; k < m; k++) {
        uint32_t i = order[k].i;
        size_t ns = 0;
        for (size_t j = 0; j < k; j++) {
            uint32_t p = order[j].i;
            if (weft__mp_bit_get(conflict + (size_t)i * cw, p))
                s[ns++] = (span_t){offset[p], offset[p] + round_up(bytes[p])};
        }
        qsort(s, ns, sizeof *s, cmp_span);
        offset[i] = best_fit(s, ns, round_up(bytes[i]));
        uint64_t end = offset[i] + round_up(bytes[i]);
        if (end > *arena_bytes) *arena_bytes = end;
    }
    free(order);
    free(s);
    return WEFT_OK;
}

uint64_t weft__memplan_seq_peak(uint32_t n_nodes, size_t n, const weft__mp_value_t *v,
                                const uint64_t *bytes)
{
    /* per node: bytes written, bytes whose last use it is */
    uint64_t *born = calloc((size_t)n_nodes + 1, sizeof *born);
    uint64_t *dies = calloc((size_t)n_nodes + 1, sizeof *dies);
    uint64_t live = 0, peak = 0;
    if (!born || !dies) goto out;
    for (size_t i = 0; i < n; i++) {
        if (bytes[i] == WEFT__MP_NONE) continue;
        uint32_t last = v[i].writer;
        for (uint32_t r = 0; r < v[i].n_readers; r++)
            if (v[i].readers[r] > last) last = v[i].readers[r];
        born[v[i].writer] += round_up(bytes[i]);
        dies[last] += round_up(bytes[i]);
    }
    for (uint32_t x = 0; x < n_nodes; x++) {
        live += born[x];
        if (live > peak) peak = live;
        live -= dies[x];
    }
out:
    free(born);
    free(dies);
    return peak;
}
