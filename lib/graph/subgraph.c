/* Graph-level traversals: iterative topological order of a subgraph (with
 * cycle detection), clone_get_equiv and its clone map, and structural
 * equality (equal_computations). */
#include <stdio.h>
#include <string.h>

#include "graph/graph_int.h"

typedef struct frame {
    weft_apply_t *a;
    uint32_t next;
} frame_t;

void weft__describe_cycle(char *buf, size_t cap, weft_apply_t *const *nodes, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && i < 8 && len + 1 < cap; i++) {
        if (i) len += (size_t)snprintf(buf + len, cap - len, " -> ");
        if (len + 1 < cap) len += (size_t)weft_apply_describe(nodes[i], buf + len, cap - len);
    }
    if (n > 8 && len + 1 < cap) snprintf(buf + len, cap - len, " -> ... (%zu nodes)", n);
}

static bool leaf(const weft_graph_t *g, const weft_var_t *v, bool use_stop, uint32_t stop_val)
{
    return !v->owner || (use_stop && weft__marks_has(&g->vmarks, v->id, stop_val));
}

static weft_status_t cycle_error(weft_graph_t *g, frame_t *stack, size_t sp, weft_apply_t *o)
{
    size_t from = sp;
    while (from > 0 && stack[from - 1].a != o) from--;
    if (from > 0) from--;
    weft_apply_t *nodes[8];
    size_t n = 0;
    for (size_t i = from; i < sp && n < 8; i++) nodes[n++] = stack[i].a;
    char cb[WEFT__ERR_CAP - 64];
    weft__describe_cycle(cb, sizeof(cb), nodes, sp - from < 8 ? sp - from : 8);
    return weft__graph_err(g, WEFT_ECYCLE, "graph contains a cycle: %s", cb);
}

/* Pushes v's owner if it is unvisited; reports a cycle if it is on the stack. */
static weft_status_t visit(weft_graph_t *g, weft_var_t *v, frame_t **stack, size_t *cap, size_t *sp,
                           uint32_t gray)
{
    weft_apply_t *o = v->owner;
    if (weft__marks_has(&g->amarks, o->id, gray + 1)) return WEFT_OK;
    if (weft__marks_has(&g->amarks, o->id, gray)) return cycle_error(g, *stack, *sp, o);
    if (!weft__vec_grow(g->alloc, (void **)stack, cap, *sp + 1, sizeof(frame_t)))
        return weft__graph_err(g, WEFT_ENOMEM, "toposort: out of memory");
    g->amarks.v[o->id] = gray;
    (*stack)[(*sp)++] = (frame_t){o, 0};
    return WEFT_OK;
}

weft_status_t weft__graph_toposort(weft_graph_t *g, size_t n_out, weft_var_t *const *outs,
                                   bool use_stop, uint32_t stop_val, weft_apply_t ***order,
                                   size_t *n)
{
    *order = NULL;
    *n = 0;
    if (!weft__marks_begin(g->alloc, &g->amarks, g->n_applies))
        return weft__graph_err(g, WEFT_ENOMEM, "toposort: out of memory");
    const uint32_t gray = g->amarks.epoch;
    frame_t *stack = NULL;
    size_t scap = 0, sp = 0, ocap = 0;
    weft_apply_t **res = NULL;
    weft_status_t s = WEFT_OK;
    for (size_t k = 0; k < n_out && s == WEFT_OK; k++) {
        if (leaf(g, outs[k], use_stop, stop_val)) continue;
        s = visit(g, outs[k], &stack, &scap, &sp, gray);
        while (sp > 0 && s == WEFT_OK) {
            frame_t *f = &stack[sp - 1];
            if (f->next < f->a->n_in) {
                weft_var_t *v = f->a->inputs[f->next++];
                if (!leaf(g, v, use_stop, stop_val)) s = visit(g, v, &stack, &scap, &sp, gray);
                continue;
            }
            if (!weft__vec_grow(g->alloc, (void **)&res, &ocap, *n + 1, sizeof(*res))) {
                s = weft__graph_err(g, WEFT_ENOMEM, "toposort: out of memory");
                break;
            }
            g->amarks.v[f->a->id] = gray + 1;
            res[(*n)++] = f->a;
            sp--;
        }
    }
    weft__free(g->alloc, stack, scap * sizeof(frame_t));
    if (s != WEFT_OK || *n == 0) {
        weft__free(g->alloc, res, ocap * sizeof(*res));
        *n = 0;
        return s;
    }
    /* Exact size, so callers free n * sizeof(pointer). */
    weft_apply_t **exact = weft__realloc(g->alloc, res, ocap * sizeof(*res), *n * sizeof(*res));
    *order = exact ? exact : res;
    if (!exact && *n != ocap) {
        weft__free(g->alloc, res, ocap * sizeof(*res));
        *order = NULL;
        *n = 0;
        return weft__graph_err(g, WEFT_ENOMEM, "toposort: out of memory");
    }
    return WEFT_OK;
}

weft_status_t weft__graph_cycle_error(weft_graph_t *g, const weft_apply_t *a, const char *who)
{
    weft_apply_t **order = NULL;
    size_t n = 0;
    weft_status_t s = weft__graph_toposort(g, a->n_out, a->outputs, false, 0, &order, &n);
    weft__free(g->alloc, order, n * sizeof(*order));
    if (s == WEFT_ECYCLE) return weft_graph_set_error(g, s, "%s: %s", who, g->err);
    if (s != WEFT_OK) return weft_graph_set_error(g, s, "%s: out of memory", who);
    char ab[256]; /* the caller's walk saw a cycle the search did not: name where
                   */
    weft_apply_describe(a, ab, sizeof(ab));
    return weft_graph_set_error(g, WEFT_ECYCLE, "%s: graph contains a cycle through %s", who, ab);
}

weft_clone_map_t *weft__clone_map_new(weft_graph_t *g)
{
    weft_clone_map_t *m = weft__alloc(g->alloc, sizeof(*m));
    if (!m) return NULL;
    memset(m, 0, sizeof(*m));
    m->g = g;
    return m;
}

static bool map_var(weft_clone_map_t *m, const weft_var_t *old, weft_var_t *nv)
{
    if (!weft__vec_grow(m->g->alloc, (void **)&m->vmap, &m->nv, old->id + 1, sizeof(*m->vmap)))
        return false;
    m->vmap[old->id] = nv;
    return true;
}

static bool map_apply(weft_clone_map_t *m, const weft_apply_t *old, weft_apply_t *na)
{
    if (!weft__vec_grow(m->g->alloc, (void **)&m->amap, &m->na, old->id + 1, sizeof(*m->amap)))
        return false;
    m->amap[old->id] = na;
    return true;
}

weft_var_t *weft_clone_map_var(const weft_clone_map_t *m, const weft_var_t *v)
{
    if (!m || !v || v->g != m->g || v->id >= m->nv) return NULL;
    return m->vmap[v->id];
}

weft_apply_t *weft_clone_map_apply(const weft_clone_map_t *m, const weft_apply_t *a)
{
    if (!m || !a || a->g != m->g || a->id >= m->na) return NULL;
    return m->amap[a->id];
}

void weft_clone_map_destroy(weft_clone_map_t *m)
{
    if (!m) return;
    weft__free(m->g->alloc, m->vmap, m->nv * sizeof(*m->vmap));
    weft__free(m->g->alloc, m->amap, m->na * sizeof(*m->amap));
    weft__free(m->g->alloc, m, sizeof(*m));
}

static weft_status_t check_vars(weft_graph_t *g, size_t n, weft_var_t *const *vs, const char *what)
{
    if (n && !vs) return WEFT_EINVAL;
    for (size_t i = 0; i < n; i++) {
        if (!vs[i]) return weft__graph_err(g, WEFT_EINVAL, "%s %zu is NULL", what, i);
        if (vs[i]->g != g) {
            char vb[512];
            weft__var_describe(vs[i], vb, sizeof(vb));
            return weft__graph_err(g, WEFT_EFOREIGN, "%s %zu, %s, belongs to another context", what,
                                   i, vb);
        }
    }
    return WEFT_OK;
}

/* The clone (or identity) of a leaf: constants are shared, other roots are
 * cloned iff copy_orphans. */
static weft_var_t *clone_leaf(weft_graph_t *g, weft_var_t *v, bool copy)
{
    if (!copy || (v->flags & WEFT__VAR_CONSTANT)) return v;
    weft_var_t *c = weft__var_new(g, v->type, NULL, v->file, v->line);
    if (c) {
        c->name = v->name;
        c->flags = v->flags;
    }
    return c;
}

static weft_status_t clone_nodes(weft_graph_t *g, weft_clone_map_t *m, weft_apply_t **order,
                                 size_t n, bool copy_orphans)
{
    weft_var_t *ins[64];
    weft_var_t **buf = ins;
    size_t bcap = 0;
    weft_status_t s = WEFT_OK;
    for (size_t k = 0; k < n && s == WEFT_OK; k++) {
        weft_apply_t *a = order[k];
        if (a->n_in > 64 &&
            !weft__vec_grow(g->alloc, (void **)&buf, &bcap, a->n_in, sizeof(*buf))) {
            s = WEFT_ENOMEM;
            break;
        }
        weft_var_t **in = a->n_in > 64 ? buf : ins;
        for (uint32_t i = 0; i < a->n_in && s == WEFT_OK; i++) {
            weft_var_t *v = a->inputs[i], *c = weft_clone_map_var(m, v);
            if (!c && (!(c = clone_leaf(g, v, copy_orphans)) || !map_var(m, v, c))) s = WEFT_ENOMEM;
            in[i] = c;
        }
        weft_apply_t *na = s == WEFT_OK ? weft__apply_clone_raw(g, a, in) : NULL;
        if (!na || !map_apply(m, a, na)) s = WEFT_ENOMEM;
        for (uint32_t o = 0; o < a->n_out && s == WEFT_OK; o++)
            if (!map_var(m, a->outputs[o], na->outputs[o])) s = WEFT_ENOMEM;
    }
    if (buf != ins) weft__free(g->alloc, buf, bcap * sizeof(*buf));
    return s == WEFT_ENOMEM ? weft__graph_err(g, s, "clone: out of memory") : s;
}

weft_status_t weft_graph_clone_get_equiv(weft_graph_t *g, size_t n_in, weft_var_t *const *inputs,
                                         size_t n_out, weft_var_t *const *outputs, bool copy_inputs,
                                         bool copy_orphans, weft_clone_map_t **out)
{
    if (!g || !out) return WEFT_EINVAL;
    *out = NULL;
    weft_status_t s = check_vars(g, n_in, inputs, "input");
    if (s == WEFT_OK) s = check_vars(g, n_out, outputs, "output");
    if (s != WEFT_OK) return s;
    weft_clone_map_t *m = weft__clone_map_new(g);
    /* Old ids are below the current counts: size the map once. */
    if (!m || !weft__vec_grow(g->alloc, (void **)&m->vmap, &m->nv, g->n_vars, sizeof(*m->vmap)) ||
        !weft__vec_grow(g->alloc, (void **)&m->amap, &m->na, g->n_applies, sizeof(*m->amap)) ||
        !weft__marks_begin(g->alloc, &g->vmarks, g->n_vars)) {
        weft_clone_map_destroy(m);
        return weft__graph_err(g, WEFT_ENOMEM, "clone: out of memory");
    }
    const uint32_t stop = g->vmarks.epoch;
    for (size_t i = 0; i < n_in && s == WEFT_OK; i++) {
        g->vmarks.v[inputs[i]->id] = stop;
        weft_var_t *c = weft_clone_map_var(m, inputs[i]);
        if (!c && (!(c = clone_leaf(g, inputs[i], copy_inputs)) || !map_var(m, inputs[i], c)))
            s = weft__graph_err(g, WEFT_ENOMEM, "clone: out of memory");
    }
    weft_apply_t **order = NULL;
    size_t n = 0;
    if (s == WEFT_OK) s = weft__graph_toposort(g, n_out, outputs, true, stop, &order, &n);
    if (s == WEFT_OK) s = clone_nodes(g, m, order, n, copy_orphans);
    for (size_t k = 0; k < n_out && s == WEFT_OK; k++) { /* outputs that are leaves */
        weft_var_t *v = outputs[k], *c = weft_clone_map_var(m, v);
        if (!c && (!(c = clone_leaf(g, v, copy_orphans)) || !map_var(m, v, c)))
            s = weft__graph_err(g, WEFT_ENOMEM, "clone: out of memory");
    }
    weft__free(g->alloc, order, n * sizeof(*order));
    if (s != WEFT_OK) {
        weft_clone_map_destroy(m);
        return s;
    }
    *out = m;
    return WEFT_OK;
}
