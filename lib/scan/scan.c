/* Scan: the interned core (the inner graph as an interned OpFromGraph plus
 * the layout), the op class (props equality, hash, printing, make_node with
 * the type checks of every outer input against its placeholder) and the
 * accessors. weft_scan itself is in scan_build.c. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "graph/ctor_int.h"
#include "scan_int.h"
#include "weft/opfromgraph.h"

static const weft_op_class_t scan_class;

const weft__scan_props_t *weft__scan_get(const weft_op_t *op)
{
    if (!op || weft_op_class(op) != &scan_class) return NULL;
    return weft_op_props(op);
}

/* ---- layout counts ------------------------------------------------------------ */

size_t weft__scan_n_seq_taps(const weft__scan_layout_t *lay)
{
    size_t n = 0;
    for (uint32_t s = 0; s < lay->n_seq; s++) n += lay->seq_ntaps[s];
    return n;
}

size_t weft__scan_n_carry_taps(const weft__scan_layout_t *lay)
{
    size_t n = 0;
    for (uint32_t o = 0; o < lay->n_out; o++) n += lay->out_ntaps[o];
    return n;
}

size_t weft__scan_n_carry(const weft__scan_layout_t *lay)
{
    size_t n = 0;
    for (uint32_t o = 0; o < lay->n_out; o++) n += lay->out_ntaps[o] > 0;
    return n;
}

int64_t weft__scan_lag(const weft__scan_layout_t *lay, size_t o)
{
    return lay->out_ntaps[o] ? -lay->out_taps[o][0] : 0;
}

void weft__scan_describe_var(const weft_var_t *v, char *buf, size_t cap)
{
    char nb[96];
    const char *file = NULL;
    int line = 0;
    weft_var_print(v, nb, sizeof nb);
    weft_var_trace(v, &file, &line);
    snprintf(buf, cap, "%s, created at %s:%d", nb, file ? file : "?", line);
}

weft_var_t *weft__scan_placeholder_like(weft_graph_t *g, const weft_var_t *v, const char *name,
                                        const char *file, int line)
{
    const weft_type_t *t = weft_var_type(v), *nt = NULL;
    int64_t shape[WEFT_MAX_NDIM];
    for (int d = 0; d < weft_type_ndim(t); d++) shape[d] = weft_type_dim(t, d);
    weft_status_t s = weft_type_tensor(g, weft_type_dtype(t), weft_type_ndim(t), shape, &nt);
    if (s != WEFT_OK) {
        weft_graph_set_error(g, s, "Scan: cannot copy a placeholder's type");
        return NULL;
    }
    return weft_var_create_at(g, nt, name, file, line);
}

weft_status_t weft__scan_expand(weft_graph_t *g, const weft__scan_core_t *c,
                                weft_var_t *const *in, weft_var_t **outs, const char *file,
                                int line)
{
    const weft_op_t *ofg = NULL;
    weft_apply_t *a = NULL;
    weft_status_t s = weft_op_clone(g, c->ofg, &ofg);
    if (s == WEFT_OK) s = weft__got(g, a = weft_apply_create_at(g, ofg, c->n_in, in, file, line));
    return s == WEFT_OK ? weft_ofg_expand(g, a, outs) : s;
}

/* ---- interning ------------------------------------------------------------------ */

static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;
static weft__scan_core_t **interned; /* guarded by intern_lock; kept until exit */
static size_t n_interned, cap_interned;

static uint64_t layout_hash(const weft__scan_layout_t *lay, const weft_fgraph_t *fg)
{
    uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)(uintptr_t)fg;
    const unsigned char *b = (const unsigned char *)lay;
    for (size_t i = 0; i < sizeof *lay; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

static weft_status_t core_new(const weft__scan_layout_t *lay, const weft_op_t *ofg,
                              weft__scan_core_t **out)
{
    weft__scan_core_t *c = calloc(1, sizeof *c);
    if (!c || weft_graph_create(NULL, &c->g) != WEFT_OK) {
        free(c);
        return WEFT_ENOMEM;
    }
    weft_status_t s = weft_op_clone(c->g, ofg, &c->ofg);
    if (s != WEFT_OK) {
        weft_graph_destroy(c->g);
        free(c);
        return s;
    }
    c->fg = weft_ofg_fgraph(ofg);
    c->lay = *lay;
    c->n_in = weft_ofg_n_inputs(ofg);
    c->n_inner_out = weft_ofg_n_outputs(ofg);
    c->n_carry = weft__scan_n_carry(lay);
    c->hash = layout_hash(lay, c->fg);
    *out = c;
    return WEFT_OK;
}

static const weft__scan_core_t *intern_find(const weft__scan_layout_t *lay, const weft_fgraph_t *fg)
{
    for (size_t i = 0; i < n_interned; i++)
        if (interned[i]->fg == fg && !memcmp(&interned[i]->lay, lay, sizeof *lay))
            return interned[i];
    return NULL;
}

weft_status_t weft__scan_core_make(weft_graph_t *g, const weft__scan_layout_t *lay,
                                   weft_var_t *const *inner_in, weft_var_t *const *inner_out,
                                   const weft__scan_core_t **out)
{
    size_t n_in = weft__scan_n_seq_taps(lay) + weft__scan_n_carry_taps(lay) + lay->n_nonseq;
    size_t n_out = lay->n_out + lay->has_until;
    weft_ofg_options_t o = WEFT_OFG_OPTIONS_INIT;
    o.name = "scan_inner";
    const weft_op_t *ofg = NULL;
    weft_status_t s = weft_ofg_create(g, n_in, inner_in, n_out, inner_out, &o, &ofg);
    if (s != WEFT_OK) return s;
    pthread_mutex_lock(&intern_lock);
    const weft__scan_core_t *found = intern_find(lay, weft_ofg_fgraph(ofg));
    weft__scan_core_t *c = NULL;
    if (!found) s = core_new(lay, ofg, &c);
    if (c && !weft__vec_grow(NULL, (void **)&interned, &cap_interned, n_interned + 1,
                             sizeof(*interned))) {
        weft_graph_destroy(c->g);
        free(c);
        c = NULL;
        s = WEFT_ENOMEM;
    }
    if (c) interned[n_interned++] = c;
    pthread_mutex_unlock(&intern_lock);
    if (s != WEFT_OK) return weft_graph_set_error(g, s, "weft_scan: out of memory");
    *out = found ? found : c;
    return WEFT_OK;
}

weft_status_t weft__scan_op(weft_graph_t *g, const weft__scan_core_t *core, uint32_t last_mask,
                            const char *name, const weft_op_t **out)
{
    return weft__scan_op_ex(g, core, last_mask, 0, name, out);
}

weft_status_t weft__scan_op_ex(weft_graph_t *g, const weft__scan_core_t *core, uint32_t last_mask,
                               uint32_t chunk_mask, const char *name, const weft_op_t **out)
{
    weft__scan_props_t p;
    memset(&p, 0, sizeof p);
    p.core = core;
    p.last_mask = last_mask;
    p.chunk_mask = chunk_mask;
    if (name) snprintf(p.name, sizeof p.name, "%s", name);
    return weft_op_create(g, &scan_class, &p, out);
}

/* ---- class hooks --------------------------------------------------------------- */

static bool scan_props_equal(const void *pa, const void *pb)
{
    const weft__scan_props_t *a = pa, *b = pb;
    return a->core == b->core && a->last_mask == b->last_mask && a->chunk_mask == b->chunk_mask;
}

static uint64_t scan_props_hash(const void *pv)
{
    const weft__scan_props_t *p = pv;
    return p->core->hash ^ ((uint64_t)p->last_mask * 0x9e3779b97f4a7c15ull) ^
           ((uint64_t)p->chunk_mask * 0xc2b2ae3d27d4eb4full);
}

static int scan_props_print(const void *pv, char *buf, size_t cap)
{
    const weft__scan_props_t *p = pv;
    const weft__scan_layout_t *l = &p->core->lay;
    return snprintf(buf, cap, "%s%s%zu seqs, %u outputs (%zu carried), %u non-seqs%s%s%s%s",
                    p->name[0] ? p->name : "", p->name[0] ? ": " : "", (size_t)l->n_seq, l->n_out,
                    p->core->n_carry, l->n_nonseq, l->has_until ? ", until" : "",
                    l->reverse ? ", reverse" : "", p->last_mask ? ", last-state outputs" : "",
                    p->chunk_mask ? ", chunk sums" : "");
}

/* An outer value fits its placeholder: same dtype, the placeholder's rank
 * plus `extra` leading axes, equal static lengths where both are known. */
static bool fits(const weft_type_t *outer, const weft_type_t *inner, int extra)
{
    if (weft_type_kind(outer) != WEFT_TYPE_TENSOR || weft_type_kind(inner) != WEFT_TYPE_TENSOR ||
        weft_type_dtype(outer) != weft_type_dtype(inner) ||
        weft_type_ndim(outer) != weft_type_ndim(inner) + extra)
        return false;
    for (int d = 0; d < weft_type_ndim(inner); d++) {
        int64_t a = weft_type_dim(outer, d + extra), b = weft_type_dim(inner, d);
        if (a >= 0 && b >= 0 && a != b) return false;
    }
    return true;
}

static weft_status_t misfit(weft_graph_t *g, const weft__scan_props_t *p, const char *what,
                            size_t k, const weft_var_t *outer, const weft_var_t *inner, int extra)
{
    char ob[200], ib[200], ot[96], it[96];
    weft__scan_describe_var(outer, ob, sizeof ob);
    weft__scan_describe_var(inner, ib, sizeof ib);
    weft_type_print(weft_var_type(outer), ot, sizeof ot);
    weft_type_print(weft_var_type(inner), it, sizeof it);
    return weft_graph_set_error(g, WEFT_ETYPE,
                                "Scan%s%s: %s %zu (%s) has type %s, which does not fit its "
                                "placeholder (%s) of type %s%s",
                                p->name[0] ? " " : "", p->name, what, k, ob, ot, ib, it,
                                extra ? " with a leading axis" : "");
}

/* Checks the outer inputs against the placeholders. */
static weft_status_t check_inputs(weft_graph_t *g, const weft__scan_props_t *p,
                                  weft_var_t *const *in)
{
    const weft__scan_core_t *c = p->core;
    const weft__scan_layout_t *l = &c->lay;
    const weft_type_t *t0 = weft_var_type(in[0]);
    if (weft_type_kind(t0) != WEFT_TYPE_TENSOR || weft_type_dtype(t0) != WEFT_INT64 ||
        weft_type_ndim(t0) != 0) {
        char vb[200];
        weft__scan_describe_var(in[0], vb, sizeof vb);
        return weft_graph_set_error(g, WEFT_ETYPE, "Scan: n_steps (%s) must be an int64 0-d value",
                                    vb);
    }
    size_t pos = 1, slot = 0;
    for (uint32_t s = 0; s < l->n_seq; s++, pos++) {
        for (uint32_t k = 0; k < l->seq_ntaps[s]; k++, slot++)
            if (!fits(weft_var_type(in[pos]), weft_var_type(weft_fgraph_input(c->fg, slot)), 1))
                return misfit(g, p, "sequence", s, in[pos], weft_fgraph_input(c->fg, slot), 1);
    }
    for (uint32_t o = 0; o < l->n_out; o++) {
        if (!l->out_ntaps[o]) continue;
        int extra = l->out_ntaps[o] == 1 && l->out_taps[o][0] == -1 ? 0 : 1;
        for (uint32_t k = 0; k < l->out_ntaps[o]; k++, slot++)
            if (!fits(weft_var_type(in[pos]), weft_var_type(weft_fgraph_input(c->fg, slot)), extra))
                return misfit(g, p, "initial value of output", o, in[pos],
                              weft_fgraph_input(c->fg, slot), extra);
        pos++;
    }
    for (uint32_t k = 0; k < l->n_nonseq; k++, pos++, slot++)
        if (!fits(weft_var_type(in[pos]), weft_var_type(weft_fgraph_input(c->fg, slot)), 0))
            return misfit(g, p, "non-sequence", k, in[pos], weft_fgraph_input(c->fg, slot), 0);
    return WEFT_OK;
}

/* The static step count: n_steps a constant >= 0 and no until; else unknown. */
static int64_t static_steps(const weft__scan_layout_t *l, const weft_var_t *n_steps)
{
    const void *data = NULL;
    size_t nb = 0;
    if (l->has_until || !weft_var_is_constant(n_steps) ||
        weft_constant_data(n_steps, &data, &nb) != WEFT_OK || nb != sizeof(int64_t))
        return WEFT_DIM_UNKNOWN;
    int64_t v;
    memcpy(&v, data, sizeof v);
    return v >= 0 ? v : WEFT_DIM_UNKNOWN;
}

static weft_status_t scan_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                    weft_var_t *const *inputs, size_t *n_out,
                                    const weft_type_t **out_types)
{
    const weft__scan_props_t *p = weft__scan_get(op);
    const weft__scan_core_t *c = p->core;
    const weft__scan_layout_t *l = &c->lay;
    size_t want = 1 + l->n_seq + c->n_carry + l->n_nonseq;
    if (n_in != want)
        return weft_graph_set_error(g, WEFT_EINVAL, "Scan: Expected %zu input(s), got %zu", want,
                                    n_in);
    weft_status_t s = check_inputs(g, p, inputs);
    int64_t steps = static_steps(l, inputs[0]);
    for (uint32_t o = 0; o < l->n_out && s == WEFT_OK; o++) {
        const weft_type_t *u = weft_var_type(weft_fgraph_output(c->fg, o));
        int nd = weft_type_ndim(u), last = (p->last_mask >> o) & 1;
        int64_t shape[WEFT_MAX_NDIM];
        if (!last && nd + 1 > WEFT_MAX_NDIM)
            return weft_graph_set_error(g, WEFT_EINVAL, "Scan: output %u has too many axes", o);
        shape[0] = steps;
        for (int d = 0; d < nd; d++) shape[d + !last] = weft_type_dim(u, d);
        s = weft_type_tensor(g, weft_type_dtype(u), nd + !last, shape, &out_types[o]);
    }
    *n_out = l->n_out;
    return s;
}

/* Never folded: the loop runs through a compiled inner function. */
static bool scan_do_constant_folding(const weft_apply_t *node)
{
    (void)node;
    return false;
}

static const weft_op_class_t scan_class = {
    .size = sizeof(weft_op_class_t),
    .name = "Scan",
    .props_size = sizeof(weft__scan_props_t),
    .props_equal = scan_props_equal,
    .props_hash = scan_props_hash,
    .props_print = scan_props_print,
    .make_node = scan_make_node,
    .perform = weft__scan_perform,
    .do_constant_folding = scan_do_constant_folding,
    .grad = weft__scan_grad,
    .props_to_json = weft__scan_to_json,
    .props_from_json = weft__scan_from_json,
};

const weft_op_class_t *weft_scan_class(void)
{
    return &scan_class;
}

bool weft_scan_is(const weft_op_t *op)
{
    return weft__scan_get(op) != NULL;
}

bool weft_scan_output_is_last(const weft_op_t *op, size_t o)
{
    const weft__scan_props_t *p = weft__scan_get(op);
    return p && o < p->core->lay.n_out && ((p->last_mask >> o) & 1);
}
