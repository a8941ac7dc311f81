/* FunctionGraph lifecycle: creation (argument checks, input discovery, the
 * missing-input check, cloning, feature attach, importing the outputs),
 * destruction, cloning an fgraph (update pairs included), and the O(1)
 * queries. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "fgraph_int.h"
#include "weft/supervisor.h"

/* Formats into a copy first: an argument may be fg->err itself. */
static weft_status_t fg_verr(weft_fgraph_t *fg, weft_status_t s, const char *fmt, va_list ap)
{
    char tmp[WEFT__ERR_CAP];
    vsnprintf(tmp, sizeof(tmp), fmt, ap);
    memcpy(fg->err, tmp, sizeof(tmp));
    return s;
}

weft_status_t weft__fg_err(weft_fgraph_t *fg, weft_status_t s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fg_verr(fg, s, fmt, ap);
    va_end(ap);
    return s;
}

weft_status_t weft_fgraph_set_error(weft_fgraph_t *fg, weft_status_t status, const char *fmt, ...)
{
    if (!fg || !fmt) return status;
    va_list ap;
    va_start(ap, fmt);
    fg_verr(fg, status, fmt, ap);
    va_end(ap);
    return status;
}

const char *weft_fgraph_last_error(const weft_fgraph_t *fg)
{
    return fg ? fg->err : "";
}

weft_graph_t *weft_fgraph_graph(const weft_fgraph_t *fg)
{
    return fg ? fg->g : NULL;
}

/* ---- options ------------------------------------------------------------------ */

typedef struct opts {
    bool clone, import_missing;
    size_t n_features;
    weft_feature_t *const *features;
    const bool *input_mutable;
} opts_t;

#define OPT_HAS(o, f) (offsetof(weft_fgraph_options_t, f) + sizeof((o)->f) <= (o)->size)

static void read_opts(const weft_fgraph_options_t *o, opts_t *r)
{
    *r = (opts_t){true, false, 0, NULL, NULL};
    if (!o) return;
    if (OPT_HAS(o, clone)) r->clone = o->clone;
    if (OPT_HAS(o, import_missing)) r->import_missing = o->import_missing;
    if (OPT_HAS(o, features) && o->features) {
        r->n_features = o->n_features;
        r->features = o->features;
    }
    if (OPT_HAS(o, input_mutable)) r->input_mutable = o->input_mutable;
}

static void destroy_features(const opts_t *o, size_t from)
{
    for (size_t k = from; k < o->n_features; k++) {
        weft_feature_t *f = o->features[k];
        if (f && f->cls && f->cls->destroy) f->cls->destroy(f);
    }
}

/* ---- argument checks on the caller's variables -------------------------------- */

static weft_status_t check_io(weft_graph_t *g, size_t n_in, weft_var_t *const *inputs, size_t n_out,
                              weft_var_t *const *outputs)
{
    if (n_out == 0 || !outputs)
        return weft__graph_err(g, WEFT_EINVAL, "weft_fgraph_create: no outputs given");
    if (n_in && !inputs) return weft__graph_err(g, WEFT_EINVAL, "weft_fgraph_create: NULL inputs");
    if (!weft__marks_begin(g->alloc, &g->vmarks, g->n_vars))
        return weft__graph_err(g, WEFT_ENOMEM, "weft_fgraph_create: out of memory");
    const uint32_t seen = g->vmarks.epoch;
    char vb[512];
    for (size_t k = 0; k < n_out + n_in; k++) {
        weft_var_t *v = k < n_out ? outputs[k] : inputs[k - n_out];
        const char *what = k < n_out ? "output" : "input";
        size_t idx = k < n_out ? k : k - n_out;
        if (!v)
            return weft__graph_err(g, WEFT_EINVAL, "weft_fgraph_create: %s %zu is NULL", what, idx);
        bool foreign = v->g != g,
             owned = k >= n_out && (v->owner || (v->flags & WEFT__VAR_CONSTANT));
        bool twice = !foreign && k >= n_out && weft__marks_has(&g->vmarks, v->id, seen);
        if (!foreign && !owned && !twice) {
            if (k >= n_out) g->vmarks.v[v->id] = seen;
            continue;
        }
        weft__var_describe(v, vb, sizeof(vb)); /* only on the error path: it is slow */
        if (foreign)
            return weft__graph_err(g, WEFT_EFOREIGN,
                                   "weft_fgraph_create: %s %zu, %s, belongs to "
                                   "another graph context",
                                   what, idx, vb);
        if (owned)
            return weft__graph_err(g, WEFT_EINVAL, "weft_fgraph_create: input %zu, %s, %s", idx, vb,
                                   v->owner ? "has an owner" : "is a constant");
        return weft__graph_err(g, WEFT_EINVAL, "weft_fgraph_create: input %zu, %s, is listed twice",
                               idx, vb);
    }
    return WEFT_OK;
}

/* Owner-less, non-constant ancestors of outs not marked `stop` in g->vmarks,
 * in discovery order (depth-first, inputs left to right). */
static weft_status_t find_roots(weft_graph_t *g, size_t n_out, weft_var_t *const *outs,
                                uint32_t stop, weft__pvec_t *roots)
{
    weft__pvec_t st = {0};
    weft_status_t s = WEFT_OK;
    const uint32_t seen = stop + 1;
    for (size_t k = n_out; k-- > 0 && s == WEFT_OK;)
        if (!weft__pvec_push(g->alloc, &st, outs[k])) s = WEFT_ENOMEM;
    while (st.n > 0 && s == WEFT_OK) {
        weft_var_t *v = st.p[--st.n];
        if (weft__marks_has(&g->vmarks, v->id, stop) || weft__marks_has(&g->vmarks, v->id, seen))
            continue;
        g->vmarks.v[v->id] = seen;
        if (!v->owner) {
            if (!(v->flags & WEFT__VAR_CONSTANT) && !weft__pvec_push(g->alloc, roots, v))
                s = WEFT_ENOMEM;
            continue;
        }
        for (uint32_t i = v->owner->n_in; i-- > 0 && s == WEFT_OK;)
            if (!weft__pvec_push(g->alloc, &st, v->owner->inputs[i])) s = WEFT_ENOMEM;
    }
    weft__pvec_free(g->alloc, &st);
    return s == WEFT_OK ? s : weft__graph_err(g, s, "weft_fgraph_create: out of memory");
}

/* Discovered roots become inputs; a null-type one is an error. */
static weft_status_t check_roots(weft_graph_t *g, const weft__pvec_t *roots, bool import_missing)
{
    char vb[512];
    for (size_t k = 0; k < roots->n; k++) {
        weft_var_t *v = roots->p[k];
        weft__var_describe(v, vb, sizeof(vb));
        if (v->type->kind == WEFT_TYPE_NULL)
            return weft__graph_err(g, WEFT_ETYPE,
                                   "weft_fgraph_create: %s has the null type "
                                   "(an undefined gradient)",
                                   vb);
        if (!import_missing)
            return weft__graph_err(g, WEFT_EMISSING_INPUT,
                                   "weft_fgraph_create: Undeclared input: %s", vb);
    }
    return WEFT_OK;
}

/* ---- creation ------------------------------------------------------------------- */

/* The context's release hook: its fgraphs go before it. */
static void destroy_all(weft_graph_t *g)
{
    while (g->fgraphs) weft_fgraph_destroy(g->fgraphs);
}

static weft_fgraph_t *fg_alloc(weft_graph_t *g)
{
    weft_fgraph_t *fg = weft__alloc(g->alloc, sizeof(*fg));
    if (!fg) return NULL;
    memset(fg, 0, sizeof(*fg));
    fg->g = g;
    fg->alloc = g->alloc;
    fg->carena.alloc = g->alloc;
    fg->applies_by_id = true; /* empty */
    g->release_fgraphs = destroy_all;
    fg->next = g->fgraphs;
    if (g->fgraphs) g->fgraphs->prev = fg;
    g->fgraphs = fg;
    return fg;
}

weft_status_t weft__fg_add_output(weft_fgraph_t *fg, weft_var_t *v, bool import_missing,
                                  const char *reason)
{
    weft_status_t s = weft__fg_plan_import(fg, v, NULL, import_missing);
    if (s != WEFT_OK) return s;
    if (!weft__vec_grow(fg->alloc, (void **)&fg->outputs, &fg->out_cap, fg->n_out + 1,
                        sizeof(*fg->outputs)) ||
        !weft__vec_grow(fg->alloc, (void **)&fg->out_nodes, &fg->onode_cap, fg->n_out + 1,
                        sizeof(*fg->out_nodes)))
        return weft__fg_err(fg, WEFT_ENOMEM, "add_output: out of memory");
    weft_apply_t *p = weft__apply_new_output_slot(fg->g, fg, fg->n_out, v);
    if (!p) return weft__fg_err(fg, WEFT_ENOMEM, "add_output: out of memory");
    s = weft__fg_commit_import(fg, v, reason, WEFT__RANK_GAP);
    if (s != WEFT_OK) return s;
    fg->outputs[fg->n_out] = v;
    fg->out_nodes[fg->n_out++] = p;
    if (!weft__fg_add_client(fg, v, p, 0, WEFT__CLIENT_NOKEY))
        return weft__fg_err(fg, WEFT_ENOMEM, "add_output: out of memory");
    return WEFT_OK;
}

/* Attaches the features, declares the inputs, imports the outputs. */
static weft_status_t fg_populate(weft_fgraph_t *fg, const opts_t *o, size_t n_in,
                                 weft_var_t *const *ins, size_t n_out, weft_var_t *const *outs)
{
    weft_status_t s = WEFT_OK;
    for (size_t k = 0; k < o->n_features; k++) {
        s = weft_fgraph_attach_feature(fg, o->features[k]);
        if (s != WEFT_OK) {
            destroy_features(o, k + 1);
            return s;
        }
    }
    fg->has_mutable = o->input_mutable != NULL;
    for (size_t k = 0; k < n_in && s == WEFT_OK; k++)
        s = weft__fg_add_input(fg, ins[k], o->input_mutable ? o->input_mutable[k] : true);
    /* Rule D6: declared inputs get a Supervisor (supervisor.c, weft/destroy.h). */
    if (s == WEFT_OK && o->input_mutable) {
        weft_feature_t *sup = NULL;
        s = weft_supervisor_create(0, NULL, fg->alloc, &sup);
        if (s == WEFT_OK) s = weft_fgraph_attach_feature(fg, sup);
    }
    fg->cb_status = WEFT_OK;
    for (size_t k = 0; k < n_out && s == WEFT_OK; k++)
        s = weft__fg_add_output(fg, outs[k], o->import_missing, "init");
    return s != WEFT_OK ? s : fg->cb_status;
}

/* Maps vars through the clone map into a new array (or returns vs itself). */
static weft_var_t **map_vars(weft_graph_t *g, const weft_clone_map_t *m, size_t n,
                             weft_var_t *const *vs)
{
    weft_var_t **r = weft__vec_alloc(g->alloc, n ? n : 1, sizeof(*r));
    if (!r) return NULL;
    for (size_t k = 0; k < n; k++) r[k] = m ? weft_clone_map_var(m, vs[k]) : vs[k];
    return r;
}

/* Builds the fgraph on (possibly cloned) variables; on failure the message
 * is copied to the context, since the fgraph is gone. */
static weft_status_t fg_build(weft_graph_t *g, const opts_t *o, size_t n_in, weft_var_t *const *ins,
                              size_t n_out, weft_var_t *const *outs, const weft_clone_map_t *m,
                              weft_fgraph_t **out)
{
    weft_var_t **mi = map_vars(g, m, n_in, ins), **mo = map_vars(g, m, n_out, outs);
    weft_fgraph_t *fg = mi && mo ? fg_alloc(g) : NULL;
    weft_status_t s = WEFT_ENOMEM;
    if (!fg) {
        destroy_features(o, 0);
        weft__graph_err(g, s, "weft_fgraph_create: out of memory");
    } else if ((s = fg_populate(fg, o, n_in, mi, n_out, mo)) != WEFT_OK) {
        weft__graph_err(g, s, "%s", fg->err);
        weft_fgraph_destroy(fg);
        fg = NULL;
    }
    weft__free(g->alloc, mi, (n_in ? n_in : 1) * sizeof(*mi));
    weft__free(g->alloc, mo, (n_out ? n_out : 1) * sizeof(*mo));
    *out = fg;
    return s;
}

static weft_status_t create_checked(weft_graph_t *g, size_t n_in, weft_var_t *const *inputs,
                                    size_t n_out, weft_var_t *const *outputs, const opts_t *o,
                                    weft__pvec_t *roots, weft_clone_map_t **m)
{
    weft_status_t s = check_io(g, n_in, inputs, n_out, outputs);
    if (s != WEFT_OK) return s;
    /* Discovery only: with declared inputs, undeclared roots and null types
     * are found by the import plan (before anything is imported), which
     * saves a full traversal. check_io marked the inputs: they stop the walk. */
    if (!inputs) s = find_roots(g, n_out, outputs, g->vmarks.epoch, roots);
    if (s == WEFT_OK) s = check_roots(g, roots, true);
    if (s == WEFT_OK && o->clone) {
        weft_var_t *const *ins = inputs ? inputs : (weft_var_t *const *)roots->p;
        size_t ni = inputs ? n_in : roots->n;
        s = weft_graph_clone_get_equiv(g, ni, ins, n_out, outputs, true, true, m);
    }
    return s;
}

weft_status_t weft_fgraph_create(weft_graph_t *g, size_t n_in, weft_var_t *const *inputs,
                                 size_t n_out, weft_var_t *const *outputs,
                                 const weft_fgraph_options_t *opts, weft_clone_map_t **equiv,
                                 weft_fgraph_t **out)
{
    opts_t o;
    read_opts(opts, &o);
    if (equiv) *equiv = NULL;
    if (out) *out = NULL;
    if (!g || !out) {
        destroy_features(&o, 0);
        return WEFT_EINVAL;
    }
    if (g->kept_status != WEFT_OK) { /* weft/graph.h "Errors": the first mistake, reported */
        destroy_features(&o, 0);
        return weft_graph_set_error(g, g->kept_status,
                                    "weft_fgraph_create: the graph has an "
                                    "error: %s",
                                    g->kept);
    }
    weft__pvec_t roots = {0};
    weft_clone_map_t *m = NULL;
    weft_status_t s = create_checked(g, n_in, inputs, n_out, outputs, &o, &roots, &m);
    if (s == WEFT_OK) {
        weft_var_t *const *ins = inputs ? inputs : (weft_var_t *const *)roots.p;
        s = fg_build(g, &o, inputs ? n_in : roots.n, ins, n_out, outputs, m, out);
    } else {
        destroy_features(&o, 0);
    }
    weft__pvec_free(g->alloc, &roots);
    if (s == WEFT_OK && equiv)
        *equiv = m;
    else
        weft_clone_map_destroy(m);
    return s;
}

void weft_fgraph_destroy(weft_fgraph_t *fg)
{
    if (!fg) return;
    weft_graph_t *g = fg->g;
    weft__fg_detach_all_features(fg);
    if (fg->prev)
        fg->prev->next = fg->next;
    else
        g->fgraphs = fg->next;
    if (fg->next) fg->next->prev = fg->prev;
    const weft_allocator_t *al = fg->alloc;
    weft__free(al, fg->inputs, fg->in_cap * sizeof(*fg->inputs));
    weft__free(al, fg->input_mutable, fg->mut_cap * sizeof(bool));
    weft__free(al, fg->outputs, fg->out_cap * sizeof(*fg->outputs));
    weft__free(al, fg->out_nodes, fg->onode_cap * sizeof(*fg->out_nodes));
    weft__free(al, fg->upd, fg->upd_cap * sizeof(*fg->upd));
    weft__free(al, fg->vflags, fg->vflags_cap * sizeof(uint8_t));
    weft__free(al, fg->clients, fg->clients_cap * sizeof(weft__cvec_t));
    weft__free(al, fg->apos, fg->apos_cap * sizeof(uint32_t));
    weft__free(al, fg->aflags, fg->aflags_cap * sizeof(uint8_t));
    weft__free(al, fg->rank, fg->rank_cap * sizeof(uint64_t));
    weft__free(al, fg->applies, fg->applies_cap * sizeof(*fg->applies));
    weft__free(al, fg->ibase, fg->ibase_cap * sizeof(uint32_t));
    weft__free(al, fg->islot, fg->islot_cap * sizeof(uint32_t));
    weft__free(al, fg->log, fg->log_cap * sizeof(*fg->log));
    weft__free(al, fg->ord_head, fg->ord_head_cap * sizeof(uint32_t));
    weft__free(al, fg->ord_stamp, fg->ord_stamp_cap * sizeof(uint32_t));
    weft__free(al, fg->ord_next, fg->ord_next_cap * sizeof(uint32_t));
    weft__pvec_t *vecs[] = {&fg->plan,       &fg->missing,   &fg->dfs,   &fg->rc_stack,
                            &fg->rm_stack,   &fg->topo,      &fg->roots, &fg->roots_tmp,
                            &fg->ord_before, &fg->ord_after, &fg->raise};
    for (size_t k = 0; k < WEFT_ARRAY_LEN(vecs); k++) weft__pvec_free(al, vecs[k]);
    weft__marks_free(al, &fg->amarks);
    weft__marks_free(al, &fg->vmarks);
    weft__arena_fini(&fg->carena);
    weft__free(al, fg, sizeof(*fg));
}


/* ---- queries ---------------------------------------------------------------------- */

size_t weft_fgraph_n_inputs(const weft_fgraph_t *fg)
{
    return fg ? fg->n_in : 0;
}

weft_var_t *weft_fgraph_input(const weft_fgraph_t *fg, size_t k)
{
    return fg && k < fg->n_in ? fg->inputs[k] : NULL;
}

size_t weft_fgraph_n_outputs(const weft_fgraph_t *fg)
{
    return fg ? fg->n_out : 0;
}

weft_var_t *weft_fgraph_output(const weft_fgraph_t *fg, size_t k)
{
    return fg && k < fg->n_out ? fg->outputs[k] : NULL;
}

bool weft_fgraph_input_is_mutable(const weft_fgraph_t *fg, size_t k)
{
    if (!fg || k >= fg->n_in) return true;
    return fg->input_mutable[k];
}

size_t weft_fgraph_n_applies(const weft_fgraph_t *fg)
{
    return fg ? fg->n_applies : 0;
}

weft_status_t weft_fgraph_applies(weft_fgraph_t *fg, weft_apply_t *const **nodes, size_t *n)
{
    if (!fg || !nodes || !n) return WEFT_EINVAL;
    *nodes = fg->applies;
    *n = fg->n_applies;
    return WEFT_OK;
}

bool weft_fgraph_contains_var(const weft_fgraph_t *fg, const weft_var_t *v)
{
    return fg && v && v->g == fg->g && weft__fg_has_var(fg, v);
}

bool weft_fgraph_contains_apply(const weft_fgraph_t *fg, const weft_apply_t *a)
{
    return fg && a && a->g == fg->g && weft__fg_has_apply(fg, a);
}

weft_status_t weft_fgraph_clients(const weft_fgraph_t *fg, const weft_var_t *v,
                                  const weft_client_t **clients, size_t *n)
{
    if (!fg || !v || !clients || !n) return WEFT_EINVAL;
    *clients = NULL;
    *n = 0;
    if (v->g != fg->g || (!weft__fg_has_var(fg, v) && !weft__fg_is_input(fg, v)))
        return WEFT_ENOTFOUND;
    if (!weft__fg_has_var(fg, v)) return WEFT_OK; /* a declared input nobody uses */
    const weft__cvec_t *c = weft__fg_clients_live(fg, v);
    *clients = c->items;
    *n = c->n;
    return WEFT_OK;
}

size_t weft_fgraph_n_clients(const weft_fgraph_t *fg, const weft_var_t *v)
{
    if (!fg || !v || v->g != fg->g || !weft__fg_has_var(fg, v)) return 0;
    return fg->clients[v->id].n;
}

/* ---- cloning ---------------------------------------------------------------------- */

static weft_status_t clone_features(const weft_fgraph_t *fg, weft_fgraph_t *nfg)
{
    for (size_t k = 0; k < fg->n_feat; k++) {
        weft_feature_t *f = fg->features[k], *c = NULL;
        if (!f->cls->clone) continue;
        weft_status_t s = f->cls->clone(f, &c);
        if (s == WEFT_OK) s = weft_fgraph_attach_feature(nfg, c);
        if (s != WEFT_OK) return s;
    }
    return WEFT_OK;
}

weft_status_t weft_fgraph_clone(const weft_fgraph_t *fg, bool check_integrity,
                                weft_clone_map_t **equiv, weft_fgraph_t **out)
{
    if (equiv) *equiv = NULL;
    if (!fg || !out) return WEFT_EINVAL;
    *out = NULL;
    weft_graph_t *g = fg->g;
    weft_clone_map_t *m = NULL;
    weft_status_t s = weft_graph_clone_get_equiv(g, fg->n_in, fg->inputs, fg->n_out, fg->outputs,
                                                 true, false, &m);
    opts_t o = {false, false, 0, NULL, fg->has_mutable ? fg->input_mutable : NULL};
    weft_fgraph_t *nfg = NULL;
    if (s == WEFT_OK) s = fg_build(g, &o, fg->n_in, fg->inputs, fg->n_out, fg->outputs, m, &nfg);
    if (s == WEFT_OK && check_integrity) s = weft_fgraph_check_integrity(nfg);
    if (s == WEFT_OK) s = weft__fg_updates_copy(fg, nfg);
    if (s == WEFT_OK) s = clone_features(fg, nfg);
    if (s != WEFT_OK) {
        if (nfg) weft__graph_err(g, s, "%s", nfg->err);
        weft_fgraph_destroy(nfg);
        weft_clone_map_destroy(m);
        return weft__fg_err((weft_fgraph_t *)fg, s, "%s", g->err);
    }
    *out = nfg;
    if (equiv)
        *equiv = m;
    else
        weft_clone_map_destroy(m);
    return WEFT_OK;
}
