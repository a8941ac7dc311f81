/* Text forms of graphs: the dprint-style indented tree (iterative, so deep
 * chains cannot overflow the stack) and structural equality of two graphs
 * (equal_computations), which tests use as "graph equals expected graph". */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "graph/graph_int.h"

typedef struct pitem {
    weft_var_t *v;
    size_t depth;
} pitem_t;

/* Deeper lines show this many bars, then their depth as a number: bars for
 * every level would make the text of a chain of n nodes n^2 long. */
#define DPRINT_MAX_BARS 32

/* The indentation: " |" per depth level up to DPRINT_MAX_BARS, then
 * "(depth d) " for deeper lines; one write. */
static int dprint_indent(FILE *f, size_t depth)
{
    static const char bars[] = " | | | | | | | | | | | | | | | | | | | | | | | | | | | | | | | |";
    _Static_assert(sizeof(bars) == 2 * DPRINT_MAX_BARS + 1, "one bar per level");
    size_t nb = depth < DPRINT_MAX_BARS ? depth : DPRINT_MAX_BARS;
    if (nb && fwrite(bars, 2, nb, f) != nb) return -1;
    return depth > DPRINT_MAX_BARS ? fprintf(f, "(depth %zu) ", depth) : 0;
}

/* One line: the indentation, then the apply or leaf text. */
static int dprint_line(FILE *f, const weft_var_t *v, size_t depth, bool repeat)
{
    char buf[512];
    if (dprint_indent(f, depth) < 0) return -1;
    const weft_apply_t *a = v->owner;
    if (!a) {
        weft_var_print(v, buf, sizeof(buf));
        return fprintf(f, "%s [id v%" PRIu64 "]\n", buf, v->id);
    }
    weft_op_print(a->op, buf, sizeof(buf));
    int r = fprintf(f, "%s", buf);
    if (r >= 0 && a->n_out > 1) r = fprintf(f, ".%" PRIu32, v->index);
    if (r >= 0) r = fprintf(f, " [id %" PRIu64 "]", a->id);
    if (r >= 0 && v->name) r = fprintf(f, " '%s'", v->name);
    if (r >= 0 && repeat) r = fprintf(f, " (see above)");
    if (r >= 0) r = fprintf(f, "\n");
    return r;
}

weft_status_t weft_graph_dprint(size_t n_out, weft_var_t *const *outputs, FILE *f)
{
    if (!f || !outputs || n_out == 0) return WEFT_EINVAL;
    for (size_t k = 0; k < n_out; k++)
        if (!outputs[k] || outputs[k]->g != outputs[0]->g) return WEFT_EINVAL;
    weft_graph_t *g = outputs[0]->g;
    if (!weft__marks_begin(g->alloc, &g->amarks, g->n_applies))
        return weft__graph_err(g, WEFT_ENOMEM, "weft_graph_dprint: out of memory");
    const uint32_t done = g->amarks.epoch;
    pitem_t *st = NULL;
    size_t cap = 0, sp = 0;
    weft_status_t s = WEFT_OK;
    for (size_t k = 0; k < n_out && s == WEFT_OK; k++) {
        if (!weft__vec_grow(g->alloc, (void **)&st, &cap, 1, sizeof(*st)))
            s = WEFT_ENOMEM;
        else
            st[sp++] = (pitem_t){outputs[k], 0};
        while (sp > 0 && s == WEFT_OK) {
            pitem_t it = st[--sp];
            weft_apply_t *a = it.v->owner;
            bool repeat = a && weft__marks_has(&g->amarks, a->id, done);
            if (dprint_line(f, it.v, it.depth, repeat) < 0) s = WEFT_EIO;
            if (!a || repeat || s != WEFT_OK) continue;
            g->amarks.v[a->id] = done;
            if (!weft__vec_grow(g->alloc, (void **)&st, &cap, sp + a->n_in, sizeof(*st))) {
                s = WEFT_ENOMEM;
                break;
            }
            for (uint32_t i = a->n_in; i-- > 0;) st[sp++] = (pitem_t){a->inputs[i], it.depth + 1};
        }
    }
    weft__free(g->alloc, st, cap * sizeof(*st));
    return s == WEFT_ENOMEM ? weft__graph_err(g, s, "weft_graph_dprint: out of memory") : s;
}

/* ---- equal_computations --------------------------------------------------- */

typedef struct pairset {
    const weft_allocator_t *al;
    const weft_var_t **k; /* 2 per slot: x, y */
    size_t cap, n;
} pairset_t;

static size_t pair_hash(const weft_var_t *x, const weft_var_t *y)
{
    uint64_t h = (uint64_t)(uintptr_t)x * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)y;
    return (size_t)(h ^ (h >> 29));
}

/* Inserts (x, y); returns 1 if new, 0 if present, -1 on OOM. */
static int pairset_add(pairset_t *p, const weft_var_t *x, const weft_var_t *y)
{
    if ((p->n + 1) * 2 > p->cap) {
        size_t ncap = p->cap ? p->cap * 2 : 64; /* at most twice the pairs: no wrap */
        pairset_t q = {p->al, weft__vec_alloc(p->al, 2 * ncap, sizeof(*q.k)), ncap, 0};
        if (!q.k) return -1;
        memset(q.k, 0, 2 * ncap * sizeof(*q.k));
        for (size_t i = 0; i < p->cap; i++)
            if (p->k[2 * i]) pairset_add(&q, p->k[2 * i], p->k[2 * i + 1]);
        weft__free(p->al, p->k, 2 * p->cap * sizeof(*p->k));
        *p = q;
    }
    size_t j = pair_hash(x, y) & (p->cap - 1);
    while (p->k[2 * j]) {
        if (p->k[2 * j] == x && p->k[2 * j + 1] == y) return 0;
        j = (j + 1) & (p->cap - 1);
    }
    p->k[2 * j] = x;
    p->k[2 * j + 1] = y;
    p->n++;
    return 1;
}

static bool leaves_equal(const weft_var_t *x, const weft_var_t *y, size_t n_in,
                         weft_var_t *const *in_xs, weft_var_t *const *in_ys)
{
    for (size_t i = 0; i < n_in; i++) {
        if (in_xs[i] == x || in_ys[i] == y) return in_xs[i] == x && in_ys[i] == y;
    }
    if (x == y) return true;
    return weft_constant_equal(x, y);
}

static bool nodes_match(const weft_var_t *x, const weft_var_t *y)
{
    const weft_apply_t *a = x->owner, *b = y->owner;
    return x->index == y->index && a->n_in == b->n_in && a->n_out == b->n_out &&
           weft_op_equal(a->op, b->op);
}

weft_status_t weft_graph_equal_computations(size_t n, weft_var_t *const *xs, weft_var_t *const *ys,
                                            size_t n_in, weft_var_t *const *in_xs,
                                            weft_var_t *const *in_ys, bool *equal)
{
    if (!equal || (n && (!xs || !ys)) || (n_in && (!in_xs || !in_ys))) return WEFT_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!xs[i] || !ys[i]) return WEFT_EINVAL;
    *equal = false;
    if (n == 0) {
        *equal = true;
        return WEFT_OK;
    }
    /* scratch from the first left-hand variable's context */
    const weft_allocator_t *al = xs[0]->g->alloc;
    pairset_t seen = {al, NULL, 0, 0};
    const weft_var_t **st = NULL; /* a stack of (x, y) pairs */
    size_t cap = 0, sp = 0;
    bool oom = !weft__vec_grow(al, (void **)&st, &cap, n, 2 * sizeof(*st)), eq = !oom;
    for (size_t i = 0; i < n && eq; i++) {
        st[2 * sp] = xs[i];
        st[2 * sp + 1] = ys[i];
        sp++;
    }
    while (sp > 0 && eq) {
        sp--;
        const weft_var_t *x = st[2 * sp], *y = st[2 * sp + 1];
        if (x == y && x->owner) continue;
        int added = pairset_add(&seen, x, y);
        if (added < 0) {
            oom = true;
            break;
        }
        if (added == 0) continue;
        if (!x->owner || !y->owner) {
            eq = !x->owner && !y->owner && leaves_equal(x, y, n_in, in_xs, in_ys);
            continue;
        }
        if (!(eq = nodes_match(x, y))) break;
        const weft_apply_t *a = x->owner, *b = y->owner;
        if (!weft__vec_grow(al, (void **)&st, &cap, sp + a->n_in, 2 * sizeof(*st))) {
            oom = true;
            break;
        }
        for (uint32_t i = 0; i < a->n_in; i++) {
            st[2 * sp] = a->inputs[i];
            st[2 * sp + 1] = b->inputs[i];
            sp++;
        }
    }
    weft__free(al, st, cap * 2 * sizeof(*st));
    weft__free(al, seen.k, 2 * seen.cap * sizeof(*seen.k));
    if (oom)
        return weft__graph_err(xs[0]->g, WEFT_ENOMEM,
                               "weft_graph_equal_computations: out of memory");
    *equal = eq;
    return WEFT_OK;
}
