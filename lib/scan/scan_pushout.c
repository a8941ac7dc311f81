/* scan_push_out_non_seq (PyTensor's scan_push_out_non_seq): invariant code
 * motion. An inner node whose inputs depend on no sequence and no carried
 * state computes the same value at every step; the maximal such values that
 * the rest of the step reads (the "frontier") are computed once outside the
 * loop and passed in as new non-sequences (an RNN's b * 2, a weight's
 * transpose, ...).
 *
 * The rewrite works on a copy of the inner graph in the outer context (the
 * interned inner graph is never edited), on fresh placeholders P. The
 * frontier's outer values are its invariant subgraph rebuilt with the
 * non-sequence placeholders replaced by the node's outer non-sequences;
 * the new inner graph is the step's variant nodes rebuilt with each
 * frontier value replaced by a fresh placeholder Q. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/ctor_int.h"
#include "scan_int.h"
#include "weft/array_ops.h"
#include "weft/rewrite.h"

#define MAX_IN \
    (WEFT_SCAN_MAX_SEQS * WEFT_SCAN_MAX_TAPS + WEFT_OP_MAX_OUTPUTS * WEFT_SCAN_MAX_TAPS + \
     WEFT_SCAN_MAX_NONSEQS)

typedef struct push {
    weft_graph_t *g;
    const weft_apply_t *node;
    const weft__scan_props_t *p;
    const weft__scan_layout_t *l;
    const char *file;
    int line;
    size_t n_in, n_out, n_var_in; /* inner inputs, inner outputs, seq + carry taps */
    weft_var_t *ph[MAX_IN], *out[WEFT_OP_MAX_OUTPUTS + 1];
    weft_var_t **variant; /* variables known to vary per step */
    size_t n_variant;
    weft_var_t *front[WEFT_SCAN_MAX_NONSEQS];
    size_t n_front;
    weft_apply_t *const *order; /* copy's toposort (borrowed from its fgraph) */
    size_t n_order;
    /* What varies: the placeholders ph[root_lo, root_hi) and what depends on
     * them; output slots count as readers of the frontier when outputs_read;
     * at most max_front frontier values. */
    size_t root_lo, root_hi, max_front;
    bool outputs_read;
    bool keep_views; /* scan_split_map: views read only by the loop stay in it */
} push_t;

/* old -> new variables, linear (inner graphs are small). */
typedef struct vmap {
    weft_var_t **k, **v;
    size_t n;
} vmap_t;

static weft_var_t *vmap_get(const vmap_t *m, weft_var_t *x)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->k[i] == x) return m->v[i];
    return x;
}

static bool is_variant(const push_t *s, const weft_var_t *v)
{
    for (size_t i = 0; i < s->n_variant; i++)
        if (s->variant[i] == v) return true;
    return false;
}

/* Copy B: the inner graph on fresh placeholders of g. */
static weft_status_t copy_inner(push_t *s)
{
    const weft__scan_core_t *c = s->p->core;
    weft_status_t st = WEFT_OK;
    for (size_t k = 0; k < c->n_in && st == WEFT_OK; k++) {
        const weft_var_t *v = weft_fgraph_input(c->fg, k);
        st = weft__got(s->g, s->ph[k] = weft__scan_placeholder_like(s->g, v, weft_var_name(v),
                                                                     s->file, s->line));
    }
    return st == WEFT_OK ? weft__scan_expand(s->g, c, s->ph, s->out, s->file, s->line) : st;
}

/* Whether some client of v (in fg) varies per step or is an output. */
static bool read_by_loop(const push_t *s, weft_fgraph_t *fg, const weft_var_t *v)
{
    const weft_client_t *cl = NULL;
    size_t n = 0;
    if (weft_fgraph_clients(fg, v, &cl, &n) != WEFT_OK) return false;
    for (size_t i = 0; i < n; i++) {
        if (weft_apply_is_output_slot(cl[i].node)) {
            if (s->outputs_read) return true;
            continue;
        }
        if (is_variant(s, weft_apply_output(cl[i].node, 0))) return true;
    }
    return false;
}

static bool is_placeholder(const push_t *s, const weft_var_t *v)
{
    for (size_t k = 0; k < s->n_in; k++)
        if (s->ph[k] == v) return true;
    return false;
}

/* An invariant one-output view of inner inputs (a transpose of x_t) read
 * only by per-step nodes: moved into the map it would be stored for every
 * step, a copy of the sequence; left in the loop it costs nothing. Marking
 * it variant changes no other node (its readers vary already). */
static bool free_view_for_loop(const push_t *s, weft_fgraph_t *fg, const weft_apply_t *a)
{
    const weft_op_t *op = weft_apply_op(a);
    const weft_op_class_t *cls = weft_op_class(op);
    weft_op_alias_t al[WEFT_OP_MAX_ALIAS];
    weft_var_t *v = weft_apply_output(a, 0);
    if (weft_apply_n_outputs(a) != 1 || is_variant(s, v) || !cls || !cls->view_map ||
        !cls->view_map(op, al, WEFT_OP_MAX_ALIAS))
        return false;
    for (size_t i = 0; i < weft_apply_n_inputs(a); i++)
        if (!is_placeholder(s, weft_apply_input(a, i))) return false;
    const weft_client_t *cl = NULL;
    size_t n = 0;
    if (weft_fgraph_clients(fg, v, &cl, &n) != WEFT_OK || n == 0) return false;
    for (size_t i = 0; i < n; i++)
        if (weft_apply_is_output_slot(cl[i].node) ||
            !is_variant(s, weft_apply_output(cl[i].node, 0)))
            return false;
    return true;
}

/* Marks the variant variables (toposort order) and collects the frontier. */
static weft_status_t analyse(push_t *s, weft_fgraph_t *fg)
{
    weft_apply_t *const *order = NULL;
    size_t n = 0;
    weft_status_t st = weft_fgraph_toposort(fg, &order, &n);
    if (st != WEFT_OK) return st;
    s->order = order;
    s->n_order = n;
    s->variant = calloc(s->n_var_in + 1 + n * WEFT_OP_MAX_OUTPUTS, sizeof *s->variant);
    if (!s->variant) return WEFT_ENOMEM;
    for (size_t k = s->root_lo; k < s->root_hi; k++) s->variant[s->n_variant++] = s->ph[k];
    for (size_t j = 0; j < n; j++) {
        bool var = false;
        for (size_t i = 0; i < weft_apply_n_inputs(order[j]) && !var; i++)
            var = is_variant(s, weft_apply_input(order[j], i));
        for (size_t o = 0; var && o < weft_apply_n_outputs(order[j]); o++)
            s->variant[s->n_variant++] = weft_apply_output(order[j], o);
    }
    if (s->keep_views)
        for (size_t j = n; j-- > 0;)
            if (free_view_for_loop(s, fg, order[j]))
                s->variant[s->n_variant++] = weft_apply_output(order[j], 0);
    for (size_t j = 0; j < n; j++)
        for (size_t o = 0; o < weft_apply_n_outputs(order[j]); o++) {
            weft_var_t *v = weft_apply_output(order[j], o);
            if (is_variant(s, v) || !read_by_loop(s, fg, v)) continue;
            if (s->n_front == s->max_front) return WEFT_OK;
            s->front[s->n_front++] = v;
        }
    return WEFT_OK;
}

/* Rebuilds, in order, the applies of one kind (variant or invariant) that
 * read a mapped variable, extending the map with their outputs. */
static weft_status_t rebuild(push_t *s, bool variant, vmap_t *m)
{
    for (size_t j = 0; j < s->n_order; j++) {
        weft_apply_t *a = s->order[j], *na = NULL;
        if (is_variant(s, weft_apply_output(a, 0)) != variant) continue;
        size_t n_in = weft_apply_n_inputs(a);
        weft_var_t *in[64];
        bool changed = false;
        if (n_in > 64) return WEFT_ENOTIMPL;
        for (size_t i = 0; i < n_in; i++) {
            in[i] = vmap_get(m, weft_apply_input(a, i));
            changed = changed || in[i] != weft_apply_input(a, i);
        }
        if (!changed) continue;
        weft_status_t st = weft_apply_clone_with_new_inputs(s->g, a, n_in, in, false, &na);
        if (st != WEFT_OK) return st;
        for (size_t o = 0; o < weft_apply_n_outputs(a); o++) {
            m->k[m->n] = weft_apply_output(a, o);
            m->v[m->n++] = weft_apply_output(na, o);
        }
    }
    return WEFT_OK;
}

static weft_status_t map_init(vmap_t *m, size_t cap)
{
    m->k = calloc(cap, sizeof *m->k);
    m->v = calloc(cap, sizeof *m->v);
    m->n = 0;
    return m->k && m->v ? WEFT_OK : WEFT_ENOMEM;
}

static void map_free(vmap_t *m)
{
    free(m->k);
    free(m->v);
}

typedef struct newscan {
    weft_scan_seq_t seqs[WEFT_SCAN_MAX_SEQS];
    weft_scan_output_t outs[WEFT_OP_MAX_OUTPUTS];
    weft_var_t *ns_outer[WEFT_SCAN_MAX_NONSEQS], *ns_inner[WEFT_SCAN_MAX_NONSEQS];
    weft_var_t *upd[WEFT_OP_MAX_OUTPUTS + 1];
    /* added sequences (one tap {0}) and non-sequences */
    size_t n_xseq, n_xns;
    weft_var_t *xseq_outer[WEFT_SCAN_MAX_SEQS], *xseq_inner[WEFT_SCAN_MAX_SEQS];
    weft_var_t *xns_outer[WEFT_SCAN_MAX_NONSEQS], *xns_inner[WEFT_SCAN_MAX_NONSEQS];
} newscan_t;

/* The rewritten Scan: the node's sequences, states and non-sequences, the
 * updates ns->upd, plus ns's added sequences and non-sequences. */
static weft_status_t build_scan(push_t *s, newscan_t *ns, weft_var_t **outs)
{
    const weft__scan_layout_t *l = s->l;
    size_t a = 0, pos = 1, n_seq = 0;
    for (uint32_t k = 0; k < l->n_seq; k++, n_seq++) {
        ns->seqs[n_seq] = (weft_scan_seq_t){weft_apply_input(s->node, pos++), l->seq_ntaps[k],
                                            l->seq_taps[k], s->ph + a};
        a += l->seq_ntaps[k];
    }
    for (size_t k = 0; k < ns->n_xseq; k++, n_seq++)
        ns->seqs[n_seq] = (weft_scan_seq_t){ns->xseq_outer[k], 0, NULL, &ns->xseq_inner[k]};
    for (uint32_t o = 0; o < l->n_out; o++) {
        ns->outs[o] = (weft_scan_output_t){ns->upd[o], NULL, 0, NULL, NULL};
        if (!l->out_ntaps[o]) continue;
        ns->outs[o].init = weft_apply_input(s->node, pos++);
        ns->outs[o].n_taps = l->out_ntaps[o];
        ns->outs[o].taps = l->out_taps[o];
        ns->outs[o].inner = s->ph + a;
        a += l->out_ntaps[o];
    }
    size_t n_ns = 0;
    for (uint32_t k = 0; k < l->n_nonseq; k++, n_ns++) {
        ns->ns_outer[n_ns] = weft_apply_input(s->node, pos++);
        ns->ns_inner[n_ns] = s->ph[a++];
    }
    for (size_t i = 0; i < ns->n_xns; i++, n_ns++) {
        ns->ns_outer[n_ns] = ns->xns_outer[i];
        ns->ns_inner[n_ns] = ns->xns_inner[i];
    }
    weft_scan_spec_t sp = WEFT_SCAN_SPEC_INIT;
    sp.n_seqs = n_seq;
    sp.seqs = ns->seqs;
    sp.n_outputs = l->n_out;
    sp.outputs = ns->outs;
    sp.n_nonseqs = n_ns;
    sp.nonseq_outer = ns->ns_outer;
    sp.nonseq_inner = ns->ns_inner;
    sp.n_steps_var = weft_apply_input(s->node, 0);
    sp.until = l->has_until ? ns->upd[l->n_out] : NULL;
    sp.name = s->p->name[0] ? s->p->name : NULL;
    sp.reverse = l->reverse != 0;
    return weft__got(s->g, weft_scan_at(s->g, &sp, outs, s->file, s->line));
}

/* Copies the inner graph, builds its FunctionGraph and finds the frontier;
 * *fg is the caller's to destroy. */
static weft_status_t prepare(push_t *s, weft_fgraph_t **fg)
{
    weft_status_t st = copy_inner(s);
    weft_fgraph_options_t fo = WEFT_FGRAPH_OPTIONS_INIT;
    fo.clone = false;
    if (st == WEFT_OK) st = weft_fgraph_create(s->g, s->n_in, s->ph, s->n_out, s->out, &fo, NULL, fg);
    return st == WEFT_OK ? analyse(s, *fg) : st;
}

/* The variant nodes rebuilt with each frontier value replaced by a new
 * placeholder q[i]; the new updates in ns->upd. */
static weft_status_t replace_frontier(push_t *s, vmap_t *m, weft_var_t **q, newscan_t *ns)
{
    weft_status_t st = WEFT_OK;
    m->n = 0;
    for (size_t i = 0; i < s->n_front && st == WEFT_OK; i++) {
        st = weft__got(s->g, q[i] = weft__scan_placeholder_like(s->g, s->front[i],
                                                                 weft_var_name(s->front[i]),
                                                                 s->file, s->line));
        m->k[m->n] = s->front[i];
        m->v[m->n++] = q[i];
    }
    if (st == WEFT_OK) st = rebuild(s, true, m);
    for (size_t k = 0; k < s->n_out && st == WEFT_OK; k++) ns->upd[k] = vmap_get(m, s->out[k]);
    return st;
}

static void push_init(push_t *s, weft_fgraph_t *fg, const weft_apply_t *node,
                      const weft__scan_props_t *p, bool split_map)
{
    s->g = weft_fgraph_graph(fg);
    s->node = node;
    s->p = p;
    s->l = &p->core->lay;
    s->n_in = p->core->n_in;
    s->n_out = p->core->n_inner_out;
    s->n_var_in = weft__scan_n_seq_taps(s->l) + weft__scan_n_carry_taps(s->l);
    weft_apply_trace(node, &s->file, &s->line);
    s->root_hi = s->n_var_in;
    if (split_map) { /* only the carried states vary; the frontier becomes sequences */
        s->keep_views = true;
        s->root_lo = weft__scan_n_seq_taps(s->l);
        s->max_front = WEFT_SCAN_MAX_SEQS - s->l->n_seq;
        if (s->max_front > WEFT_OP_MAX_OUTPUTS) s->max_front = WEFT_OP_MAX_OUTPUTS;
    } else { /* sequences and states vary; the frontier becomes non-sequences */
        s->max_front = WEFT_SCAN_MAX_NONSEQS - s->l->n_nonseq;
        s->outputs_read = true;
    }
}

static weft_status_t transform_scan(push_t *s, bool split_map, weft_var_t **outs, bool *done);

/* Runs one of the two rewrites on node and records its outputs' replacements. */
static weft_status_t rewrite_node(weft_fgraph_t *fg, weft_apply_t *node, bool split_map,
                                  weft_rewrite_result_t *res)
{
    const weft__scan_props_t *p = weft__scan_get(weft_apply_op(node));
    if (!p || p->last_mask) return WEFT_OK;
    if (split_map && (p->core->lay.has_until || !p->core->n_carry)) return WEFT_OK;
    push_t *s = calloc(1, sizeof *s);
    if (!s) return WEFT_ENOMEM;
    push_init(s, fg, node, p, split_map);
    weft_var_t *outs[WEFT_OP_MAX_OUTPUTS];
    bool done = false;
    weft_status_t st = transform_scan(s, split_map, outs, &done);
    free(s->variant);
    free(s);
    if (st != WEFT_OK || !done) return st;
    return weft_rewrite_result_outputs(res, p->core->lay.n_out, outs);
}

static weft_status_t push_out_transform(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                        weft_rewrite_result_t *res)
{
    (void)user;
    return rewrite_node(fg, node, false, res);
}

weft__scan_node_rewrite_fn weft__scan_push_out_fn(void)
{
    return push_out_transform;
}

/* ---- scan_split_map ------------------------------------------------------------ */

/* The map scan: the frontier values computed for every step from the
 * sequences and non-sequences alone (no carried state: its steps run in
 * parallel, scan_run.c). */
static weft_status_t map_scan(push_t *s, weft_var_t **mo)
{
    const weft__scan_layout_t *l = s->l;
    weft_scan_seq_t seqs[WEFT_SCAN_MAX_SEQS];
    weft_scan_output_t outs[WEFT_OP_MAX_OUTPUTS];
    weft_var_t *nso[WEFT_SCAN_MAX_NONSEQS];
    size_t a = 0, ns0 = 1 + l->n_seq + weft__scan_n_carry(l);
    for (uint32_t k = 0; k < l->n_seq; k++) {
        seqs[k] = (weft_scan_seq_t){weft_apply_input(s->node, 1 + k), l->seq_ntaps[k],
                                    l->seq_taps[k], s->ph + a};
        a += l->seq_ntaps[k];
    }
    for (size_t i = 0; i < s->n_front; i++) outs[i] = (weft_scan_output_t){s->front[i], NULL, 0, NULL, NULL};
    for (uint32_t k = 0; k < l->n_nonseq; k++) nso[k] = weft_apply_input(s->node, ns0 + k);
    char name[WEFT__SCAN_NAME_MAX + 8];
    snprintf(name, sizeof name, "%s_map", s->p->name[0] ? s->p->name : "scan");
    weft_scan_spec_t sp = WEFT_SCAN_SPEC_INIT;
    sp.n_seqs = l->n_seq;
    sp.seqs = seqs;
    sp.n_outputs = s->n_front;
    sp.outputs = outs;
    sp.n_nonseqs = l->n_nonseq;
    sp.nonseq_outer = nso;
    sp.nonseq_inner = s->ph + s->n_var_in;
    sp.n_steps_var = weft_apply_input(s->node, 0);
    sp.reverse = l->reverse != 0;
    sp.name = name;
    return weft__got(s->g, weft_scan_at(s->g, &sp, mo, s->file, s->line));
}

static weft_status_t split_transform(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                     weft_rewrite_result_t *res)
{
    (void)user;
    return rewrite_node(fg, node, true, res);
}

weft__scan_node_rewrite_fn weft__scan_split_map_fn(void)
{
    return split_transform;
}

/* ---- both ---------------------------------------------------------------------- */

/* The frontier's values outside the loop. Push-out: its invariant subgraph
 * rebuilt on the outer non-sequences, passed as non-sequences. Split: the
 * outputs of the map scan, passed as sequences (flipped for a reverse scan,
 * which reads row n-1-t at its step t). */
static weft_status_t frontier_outside(push_t *s, bool split_map, vmap_t *m, newscan_t *ns)
{
    weft_status_t st = WEFT_OK;
    if (split_map) {
        weft_var_t *mo[WEFT_OP_MAX_OUTPUTS];
        const int axis0[1] = {0};
        st = map_scan(s, mo);
        for (size_t i = 0; i < s->n_front && st == WEFT_OK; i++)
            st = weft__got(s->g, ns->xseq_outer[i] = s->l->reverse ? weft_flip_at(s->g, mo[i], 1, axis0,
                                                                                  s->file, s->line)
                                                                   : mo[i]);
        ns->n_xseq = s->n_front;
        return st;
    }
    size_t ns0 = 1 + s->l->n_seq + weft__scan_n_carry(s->l);
    for (uint32_t k = 0; k < s->l->n_nonseq; k++) {
        m->k[m->n] = s->ph[s->n_var_in + k];
        m->v[m->n++] = weft_apply_input(s->node, ns0 + k);
    }
    st = rebuild(s, false, m);
    for (size_t i = 0; i < s->n_front && st == WEFT_OK; i++)
        ns->xns_outer[i] = vmap_get(m, s->front[i]);
    ns->n_xns = s->n_front;
    return st;
}

static weft_status_t transform_scan(push_t *s, bool split_map, weft_var_t **outs, bool *done)
{
    weft_fgraph_t *fg = NULL;
    weft_status_t st = prepare(s, &fg);
    if (st != WEFT_OK || !s->n_front) {
        weft_fgraph_destroy(fg);
        return st;
    }
    vmap_t m = {0};
    newscan_t *ns = calloc(1, sizeof *ns);
    size_t cap = s->n_in + s->n_front + s->n_order * WEFT_OP_MAX_OUTPUTS + 1;
    st = ns ? map_init(&m, cap) : WEFT_ENOMEM;
    if (st == WEFT_OK) st = frontier_outside(s, split_map, &m, ns);
    if (st == WEFT_OK)
        st = replace_frontier(s, &m, split_map ? ns->xseq_inner : ns->xns_inner, ns);
    weft_fgraph_destroy(fg); /* s->order is not read after this */
    if (st == WEFT_OK) st = build_scan(s, ns, outs);
    *done = st == WEFT_OK;
    map_free(&m);
    free(ns);
    return st;
}
