/* DestroyHandler incremental state: the feature object, its per-variable and
 * per-apply tables, and the callbacks that keep the view forest, the destroyer
 * set and the import flags exact through import, prune, change_node_input,
 * attach and detach (protocol in destroy_int.h). */
#include <stdio.h>
#include <string.h>

#include "destroy_int.h"
#include "base/base_int.h"
#include "base/vec.h"
#include "graph/site.h"

/* ---- small helpers ---------------------------------------------------------- */

weft_status_t weft__dh_vec_push(dh_t *dh, dh_vec_t *vec, void *item)
{
    if (!weft__vec_grow(dh->alloc, (void **)&vec->items, &vec->cap, vec->n + 1, sizeof(void *)))
        return WEFT_ENOMEM;
    vec->items[vec->n++] = item;
    return WEFT_OK;
}

/* Removes the item at 1-based position *pos by moving the last one there. */
static void dh_vec_remove(dh_t *dh, dh_vec_t *vec, uint32_t *pos, bool destroyers)
{
    size_t at = *pos - 1;
    void *last = vec->items[--vec->n];
    if (at != vec->n) {
        vec->items[at] = last;
        dh_node_t *ln = weft__dh_node(dh, last);
        if (destroyers) ln->dpos = (uint32_t)at + 1;
        else ln->mpos = (uint32_t)at + 1;
    }
    *pos = 0;
}

/* Makes the tables cover every id of the context (callers then index freely;
 * pointers into the tables stay valid until the next reserve). */
weft_status_t weft__dh_reserve(dh_t *dh)
{
    weft_graph_t *g = weft_fgraph_graph(dh->fg);
    bool ok = weft__vec_grow(dh->alloc, (void **)&dh->vars, &dh->cap_vars, weft_graph_n_vars(g),
                             sizeof(dh_var_t)) &&
              weft__vec_grow(dh->alloc, (void **)&dh->nodes, &dh->cap_nodes,
                             weft_graph_n_applies(g), sizeof(dh_node_t));
    return ok ? WEFT_OK : WEFT_ENOMEM;
}

uint32_t weft__dh_next_stamp(dh_t *dh)
{
    if (++dh->stamp == 0) {
        for (size_t k = 0; k < dh->cap_nodes; k++) dh->nodes[k].mark = dh->nodes[k].color_epoch = 0;
        dh->stamp = 1;
    }
    return dh->stamp;
}

dh_var_t *weft__dh_var(dh_t *dh, const weft_var_t *v)
{
    uint64_t id = weft_var_id(v);
    WEFT_ASSERT(id < dh->cap_vars, "dh: variable table not reserved");
    return &dh->vars[id];
}

dh_node_t *weft__dh_node(dh_t *dh, const weft_apply_t *a)
{
    uint64_t id = weft_apply_id(a);
    WEFT_ASSERT(id < dh->cap_nodes, "dh: node table not reserved");
    return &dh->nodes[id];
}

weft_var_t *weft__dh_root(dh_t *dh, const weft_var_t *v)
{
    weft_var_t *r = (weft_var_t *)v;
    for (weft_var_t *p = weft__dh_var(dh, r)->parent; p; p = weft__dh_var(dh, r)->parent) r = p;
    return r;
}

int weft__dh_describe_var(const weft_var_t *v, char *buf, size_t cap)
{
    char name[96], sb[WEFT__SITE_CAP];
    const char *file = NULL;
    int line = 0;
    weft_var_print(v, name, sizeof name);
    weft_var_trace(v, &file, &line);
    return snprintf(buf, cap, "%s (var %llu, built at %s)", name,
                    (unsigned long long)weft_var_id(v), weft__site_str(sb, sizeof sb, file, line));
}

dh_t *weft__dh_of(weft_feature_t *f)
{
    return (dh_t *)f->data;
}

weft_status_t weft__dh_find(weft_fgraph_t *fg, dh_t **out)
{
    if (!fg) return WEFT_EINVAL;
    weft_feature_t *f = weft_fgraph_find_feature(fg, &weft_dh_class);
    if (!f) {
        return weft_fgraph_set_error(fg, WEFT_ESTATE,
                                     "no DestroyHandler is attached to this FunctionGraph");
    }
    dh_t *dh = weft__dh_of(f);
    weft_status_t s = weft__dh_ready(dh);
    if (s != WEFT_OK) return s;
    *out = dh;
    return WEFT_OK;
}

weft_status_t weft__dh_known_var(dh_t *dh, const weft_var_t *v)
{
    if (weft_fgraph_contains_var(dh->fg, v)) return WEFT_OK;
    size_t n = weft_fgraph_n_inputs(dh->fg);
    for (size_t k = 0; k < n; k++) {
        if (weft_fgraph_input(dh->fg, k) == v) return WEFT_OK;
    }
    char d[256];
    weft__dh_describe_var(v, d, sizeof d);
    return weft_fgraph_set_error(dh->fg, WEFT_ENOTFOUND,
                                 "variable %s is not in this FunctionGraph", d);
}

/* ---- node classification ------------------------------------------------------ */

/* D0 shape: every output listed at most once, indices in range. */
static bool dh_map_ok(const weft_apply_t *n, const weft_op_alias_t *e, size_t m)
{
    uint32_t seen = 0;
    for (size_t k = 0; k < m; k++) {
        if (e[k].output >= weft_apply_n_outputs(n) || e[k].input >= weft_apply_n_inputs(n))
            return false;
        if (seen & (1u << e[k].output)) return false;
        seen |= 1u << e[k].output;
    }
    return true;
}

static bool dh_view_map_malformed(const weft_apply_t *n)
{
    const weft_op_alias_t *e;
    size_t m;
    weft_op_view_map(weft_apply_op(n), &e, &m);
    return !dh_map_ok(n, e, m);
}

static bool dh_node_malformed(const weft_apply_t *n)
{
    const weft_op_alias_t *e;
    size_t m;
    weft_op_destroy_map(weft_apply_op(n), &e, &m);
    return !dh_map_ok(n, e, m) || dh_view_map_malformed(n);
}

/* A rejected rebuild may have stopped early (partial maps): any edit then
 * invalidates it. */
static void dh_mark_var(dh_t *dh, const weft_var_t *v)
{
    if (dh->verdict != WEFT_OK || weft__dh_var(dh, v)->epoch == dh->epoch) dh->stale = true;
}

/* A node edit changes the derived maps only if the node views or destroys,
 * or reads a variable of a destroyed impact set. */
static void dh_mark_node(dh_t *dh, const weft_apply_t *n)
{
    dh->cycle_stale = true;
    if (dh->stale) return;
    if (dh->verdict != WEFT_OK) {
        dh->stale = true;
        return;
    }
    const weft_op_t *op = weft_apply_op(n);
    if (weft_op_is_destructive(op) || weft_op_is_view(op)) {
        dh->stale = true;
        return;
    }
    for (size_t i = 0; i < weft_apply_n_inputs(n); i++) dh_mark_var(dh, weft_apply_input(n, i));
}

/* ---- view forest ----------------------------------------------------------------- */

static weft_status_t dh_link(dh_t *dh, weft_var_t *child, weft_var_t *parent)
{
    dh_var_t *p = weft__dh_var(dh, parent);
    if (p->n_kids == p->cap_kids) {
        /* uint32_t capacity, starting at 2: most views have one or two kids
         * and every variable of the context has this record */
        if (p->cap_kids > UINT32_MAX / 2) return WEFT_ENOMEM;
        uint32_t ncap = p->cap_kids ? p->cap_kids * 2 : 2;
        weft_var_t **nk = weft__realloc(dh->alloc, p->kids, p->cap_kids * sizeof *nk,
                                        ncap * sizeof *nk);
        if (!nk) return WEFT_ENOMEM;
        p->kids = nk;
        p->cap_kids = ncap;
    }
    p->kids[p->n_kids++] = child;
    weft__dh_var(dh, child)->parent = parent;
    return WEFT_OK;
}

static void dh_unlink(dh_t *dh, weft_var_t *child, weft_var_t *parent)
{
    dh_var_t *p = weft__dh_var(dh, parent);
    for (uint32_t k = 0; k < p->n_kids; k++) {
        if (p->kids[k] == child) {
            /* keep order: impact sets list views in discovery order */
            memmove(&p->kids[k], &p->kids[k + 1], (p->n_kids - k - 1) * sizeof *p->kids);
            p->n_kids--;
            break;
        }
    }
    weft__dh_var(dh, child)->parent = NULL;
}

static weft_status_t dh_views(dh_t *dh, weft_apply_t *n, bool add)
{
    const weft_op_alias_t *e;
    size_t m;
    weft_op_view_map(weft_apply_op(n), &e, &m);
    for (size_t k = 0; k < m; k++) {
        weft_var_t *child = weft_apply_output(n, e[k].output);
        weft_var_t *parent = weft_apply_input(n, e[k].input);
        if (!add) {
            dh_unlink(dh, child, parent);
            continue;
        }
        weft_status_t s = dh_link(dh, child, parent);
        if (s != WEFT_OK) return s;
    }
    return WEFT_OK;
}

/* An allocation failure inside a callback leaves the tables behind the
 * graph: remember it, so the next use rescans (weft__dh_ready). */
static weft_status_t dh_check_alloc(dh_t *dh, weft_status_t s)
{
    if (s == WEFT_ENOMEM || s == WEFT_EOVERFLOW) dh->broken = true;
    return s;
}

/* ---- callbacks ------------------------------------------------------------------- */

static weft_status_t dh_protocol(dh_t *dh, const weft_apply_t *n, const char *what)
{
    char d[160];
    weft_apply_describe(n, d, sizeof d);
    return weft_fgraph_set_error(dh->fg, WEFT_ESTATE, "DestroyHandler protocol error: %s %s",
                                 what, d);
}

static weft_status_t dh_malformed_error(dh_t *dh, const weft_apply_t *n)
{
    char d[160];
    weft_apply_describe(n, d, sizeof d);
    return weft_fgraph_set_error(dh->fg, WEFT_ENOTIMPL,
                                 "%s: view_map/destroy_map must map each output to exactly one "
                                 "input index in range (rule D0)", d);
}

static uint32_t dh_owner_ref(const weft_var_t *v)
{
    weft_apply_t *o = weft_var_owner(v);
    return o ? (uint32_t)weft_apply_id(o) + 1 : 0;
}

static void dh_free_preds(dh_t *dh, dh_node_t *rec)
{
    if (rec->n_in > 2) weft__free(dh->alloc, rec->in_heap, rec->n_in * sizeof(uint32_t));
    rec->in_heap = NULL;
    rec->n_in = 0;
}

static weft_status_t dh_set_preds(dh_t *dh, dh_node_t *rec, weft_apply_t *n)
{
    size_t n_in = weft_apply_n_inputs(n);
    if (n_in > 2) {
        rec->in_heap = weft__alloc(dh->alloc, n_in * sizeof(uint32_t));
        if (!rec->in_heap) return WEFT_ENOMEM;
    }
    rec->n_in = (uint32_t)n_in;
    uint32_t *p = dh_preds(rec);
    for (size_t i = 0; i < n_in; i++) p[i] = dh_owner_ref(weft_apply_input(n, i));
    rec->self = n;
    return WEFT_OK;
}

static weft_status_t dh_import(dh_t *dh, weft_apply_t *n)
{
    dh_node_t *rec = weft__dh_node(dh, n);
    if (rec->flags & DH_IMPORTED) return dh_protocol(dh, n, "double import of");
    weft_status_t ps = dh_set_preds(dh, rec, n);
    if (ps != WEFT_OK) return ps;
    dh_mark_node(dh, n);
    if (dh_node_malformed(n)) {
        weft_status_t s = weft__dh_vec_push(dh, &dh->malformed, n);
        if (s != WEFT_OK) {
            dh_free_preds(dh, rec);
            return s;
        }
        rec->mpos = (uint32_t)dh->malformed.n;
        rec->flags = DH_IMPORTED | DH_MALFORMED;
        dh->stale = true;
        /* As in PyTensor: a bad view_map fails at import, a bad destroy_map at
         * the next rebuild (validate / orderings). */
        return dh_view_map_malformed(n) ? dh_malformed_error(dh, n) : WEFT_OK;
    }
    if (weft_op_is_destructive(weft_apply_op(n))) {
        weft_status_t s = weft__dh_vec_push(dh, &dh->destroyers, n);
        if (s != WEFT_OK) {
            dh_free_preds(dh, rec);
            return s;
        }
        rec->dpos = (uint32_t)dh->destroyers.n;
    }
    weft_status_t s = dh_views(dh, n, true);
    if (s != WEFT_OK) {
        if (rec->dpos) dh_vec_remove(dh, &dh->destroyers, &rec->dpos, true);
        dh_free_preds(dh, rec);
        return s;
    }
    rec->flags = DH_IMPORTED;
    return WEFT_OK;
}

static weft_status_t dh_on_import(weft_feature_t *self, weft_fgraph_t *fg, weft_apply_t *node,
                                  const char *reason)
{
    (void)fg;
    (void)reason;
    dh_t *dh = weft__dh_of(self);
    if (dh->broken) return WEFT_OK;
    weft_status_t s = weft__dh_reserve(dh);
    if (s == WEFT_OK) s = dh_import(dh, node);
    return dh_check_alloc(dh, s);
}

static weft_status_t dh_on_prune(weft_feature_t *self, weft_fgraph_t *fg, weft_apply_t *node,
                                 const char *reason)
{
    (void)fg;
    (void)reason;
    dh_t *dh = weft__dh_of(self);
    if (dh->broken) return WEFT_OK;
    weft_status_t s = weft__dh_reserve(dh);
    if (s != WEFT_OK) return dh_check_alloc(dh, s);
    dh_node_t *rec = weft__dh_node(dh, node);
    if (!(rec->flags & DH_IMPORTED)) return dh_protocol(dh, node, "prune of never-imported");
    dh_mark_node(dh, node);
    if (rec->flags & DH_MALFORMED) {
        dh_vec_remove(dh, &dh->malformed, &rec->mpos, false);
        dh->stale = true;
    } else {
        if (rec->dpos) dh_vec_remove(dh, &dh->destroyers, &rec->dpos, true);
        dh_views(dh, node, false);
    }
    dh_free_preds(dh, rec);
    rec->flags = 0;
    return WEFT_OK;
}

/* Moves the views node makes of input i from old to new (docs/destroy.md §2). */
static weft_status_t dh_reparent(dh_t *dh, weft_apply_t *n, size_t i, weft_var_t *old_var,
                                 weft_var_t *new_var)
{
    const weft_op_alias_t *e;
    size_t m;
    weft_op_view_map(weft_apply_op(n), &e, &m);
    for (size_t k = 0; k < m; k++) {
        if (e[k].input != i) continue;
        weft_var_t *child = weft_apply_output(n, e[k].output);
        dh_unlink(dh, child, old_var);
        weft_status_t s = dh_link(dh, child, new_var);
        if (s != WEFT_OK) return s;
    }
    return WEFT_OK;
}

static weft_status_t dh_on_change_input(weft_feature_t *self, weft_fgraph_t *fg,
                                        weft_apply_t *node, size_t i, weft_var_t *old_var,
                                        weft_var_t *new_var, const char *reason)
{
    (void)fg;
    (void)reason;
    /* Output pseudo-clients are not DH clients: nothing the DH derives changes. */
    if (weft_apply_is_output_slot(node)) return WEFT_OK;
    dh_t *dh = weft__dh_of(self);
    if (dh->broken) return WEFT_OK;
    weft_status_t s = weft__dh_reserve(dh);
    if (s != WEFT_OK) return dh_check_alloc(dh, s);
    dh_node_t *rec = weft__dh_node(dh, node);
    if (!(rec->flags & DH_IMPORTED)) return dh_protocol(dh, node, "change of never-imported");
    if (weft_apply_input(node, i) != new_var) return dh_protocol(dh, node, "wrong new input on");
    dh->cycle_stale = true;
    dh_preds(rec)[i] = dh_owner_ref(new_var);
    dh_mark_var(dh, old_var);
    dh_mark_var(dh, new_var);
    dh_mark_node(dh, node);
    if (rec->flags & DH_MALFORMED) return WEFT_OK;
    return dh_check_alloc(dh, dh_reparent(dh, node, i, old_var, new_var));
}

/* Drops every table entry (detach, failed attach, destroy). */
static void dh_reset(dh_t *dh)
{
    for (size_t k = 0; k < dh->cap_vars; k++) {
        weft__free(dh->alloc, dh->vars[k].kids, dh->vars[k].cap_kids * sizeof(weft_var_t *));
    }
    weft__free(dh->alloc, dh->vars, dh->cap_vars * sizeof(dh_var_t));
    for (size_t k = 0; k < dh->cap_nodes; k++) dh_free_preds(dh, &dh->nodes[k]);
    weft__free(dh->alloc, dh->nodes, dh->cap_nodes * sizeof(dh_node_t));
    weft__free(dh->alloc, dh->destroyers.items, dh->destroyers.cap * sizeof(void *));
    weft__free(dh->alloc, dh->malformed.items, dh->malformed.cap * sizeof(void *));
    weft__dh_clear_derived(dh);
    dh->vars = NULL;
    dh->nodes = NULL;
    dh->cap_vars = dh->cap_nodes = 0;
    memset(&dh->destroyers, 0, sizeof dh->destroyers);
    memset(&dh->malformed, 0, sizeof dh->malformed);
    dh->stale = dh->cycle_stale = true;
    dh->broken = false;
    dh->epoch = 1;
}

/* Rebuilds every table from the nodes in the graph (attach, recovery). A
 * malformed node is recorded (validate keeps failing); only allocation
 * failures fail the scan. */
static weft_status_t dh_scan(dh_t *dh)
{
    dh_reset(dh);
    weft_status_t s = weft__dh_reserve(dh);
    weft_apply_t *const *nodes = NULL;
    size_t n = 0;
    if (s == WEFT_OK) s = weft_fgraph_applies(dh->fg, &nodes, &n);
    for (size_t k = 0; s == WEFT_OK && k < n; k++) {
        weft_status_t r = dh_import(dh, nodes[k]);
        if (r == WEFT_ENOMEM || r == WEFT_EOVERFLOW) s = r;
    }
    return s;
}

weft_status_t weft__dh_ready(dh_t *dh)
{
    weft_status_t s = weft__dh_reserve(dh);
    if (s != WEFT_OK || !dh->broken) return s;
    s = dh_scan(dh);
    dh->broken = s != WEFT_OK;
    return s;
}

static weft_status_t dh_on_attach(weft_feature_t *self, weft_fgraph_t *fg)
{
    dh_t *dh = weft__dh_of(self);
    if (dh->fg == fg) return WEFT_EALREADY;
    if (dh->fg) {
        return weft_fgraph_set_error(fg, WEFT_EBUSY,
                                     "this DestroyHandler already serves another FunctionGraph");
    }
    weft_feature_t *other = weft_fgraph_find_feature(fg, &weft_dh_class);
    if (other && other != self) return WEFT_EALREADY;
    dh->fg = fg;
    weft_status_t s = dh_scan(dh);
    if (s != WEFT_OK) {
        dh_reset(dh);
        dh->fg = NULL;
    }
    return s;
}

static void dh_on_detach(weft_feature_t *self, weft_fgraph_t *fg)
{
    (void)fg;
    dh_t *dh = weft__dh_of(self);
    dh_reset(dh);
    dh->fg = NULL;
}

static weft_status_t dh_clone(const weft_feature_t *self, weft_feature_t **out)
{
    const dh_t *dh = (const dh_t *)self->data;
    return weft_dh_create(dh->alloc, out);
}

static void dh_destroy(weft_feature_t *self)
{
    dh_t *dh = weft__dh_of(self);
    /* Still serving an fgraph: this is the destroy of a refused second attach
     * (attach takes the feature on every outcome); the owner fgraph frees it. */
    if (dh->fg) return;
    dh_reset(dh);
    weft__free(dh->alloc, dh, sizeof *dh);
}

const weft_feature_class_t weft_dh_class = {
    .size = sizeof(weft_feature_class_t),
    .name = "DestroyHandler",
    .on_attach = dh_on_attach,
    .on_detach = dh_on_detach,
    .on_import = dh_on_import,
    .on_prune = dh_on_prune,
    .on_change_input = dh_on_change_input,
    .on_validate = weft__dh_on_validate,
    .orderings = weft__dh_orderings,
    .clone = dh_clone,
    .destroy = dh_destroy,
};

weft_status_t weft_dh_create(const weft_allocator_t *alloc, weft_feature_t **out)
{
    if (!out) return WEFT_EINVAL;
    *out = NULL;
    if (!alloc) alloc = weft_allocator_default();
    dh_t *dh = weft__alloc(alloc, sizeof *dh);
    if (!dh) return WEFT_ENOMEM;
    memset(dh, 0, sizeof *dh);
    dh->alloc = alloc;
    dh->feature.cls = &weft_dh_class;
    dh->feature.data = dh;
    dh->stale = dh->cycle_stale = true;
    dh->epoch = 1;
    *out = &dh->feature;
    return WEFT_OK;
}

weft_status_t weft_dh_attach(weft_fgraph_t *fg, weft_feature_t **out)
{
    if (!fg) return WEFT_EINVAL;
    weft_feature_t *f = weft_fgraph_find_feature(fg, &weft_dh_class);
    if (!f) {
        /* weft's own DH: from the allocator of the context fg lives in */
        weft_status_t s = weft_dh_create(weft_graph_allocator(weft_fgraph_graph(fg)), &f);
        if (s != WEFT_OK) return s;
        s = weft_fgraph_attach_feature(fg, f);
        if (s != WEFT_OK) return s;
    }
    if (out) *out = f;
    return WEFT_OK;
}
