/* The run plan of an OpFromGraph (inner nodes in topological order with each
 * input resolved to an inner input, a constant or an earlier node's output
 * slot) and the structural hash and connection pattern derived from it. The
 * perform hook that interprets the plan is in ofg_run.c. */
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "ofg_int.h"
#include "weft/kernel.h"

/* ---- variable -> ref map (open addressing on the pointer) ------------------ */

typedef struct refmap {
    const weft_var_t **keys;
    ofg_ref_t *vals;
    uint64_t *hash; /* structural hash of each value, for the op hash */
    size_t cap;
} refmap_t;

static size_t ptr_slot(const refmap_t *m, const weft_var_t *v)
{
    uint64_t h = (uint64_t)(uintptr_t)v * 0x9e3779b97f4a7c15ull;
    size_t j = (size_t)(h >> 17) & (m->cap - 1);
    while (m->keys[j] && m->keys[j] != v) j = (j + 1) & (m->cap - 1);
    return j;
}

static bool refmap_init(refmap_t *m, size_t n)
{
    m->cap = 16;
    while (m->cap < 2 * n + 2) m->cap *= 2;
    m->keys = calloc(m->cap, sizeof(*m->keys));
    m->vals = calloc(m->cap, sizeof(*m->vals));
    m->hash = calloc(m->cap, sizeof(*m->hash));
    return m->keys && m->vals && m->hash;
}

static void refmap_free(refmap_t *m)
{
    free(m->keys);
    free(m->vals);
    free(m->hash);
}

static void refmap_put(refmap_t *m, const weft_var_t *v, ofg_ref_t r, uint64_t h)
{
    size_t j = ptr_slot(m, v);
    m->keys[j] = v;
    m->vals[j] = r;
    m->hash[j] = h;
}

static uint64_t mix(uint64_t h, uint64_t x)
{
    h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

/* ---- plan building -------------------------------------------------------- */

void weft__ofg_plan_free(weft__ofg_plan_t *p)
{
    weft__ofg_runs_free(p->runs);
    for (size_t c = 0; c < p->n_consts; c++) weft_tensor_release(p->consts[c]);
    free(p->consts);
    free((void *)p->nodes);
    free(p->in_off);
    free(p->refs);
    free(p->slot0);
    free(p->out_refs);
    memset(p, 0, sizeof(*p));
}

/* A read-only tensor viewing the constant's data (owned by the context). */
static weft_status_t const_tensor(const weft_var_t *c, weft_tensor_t **out)
{
    const weft_type_t *t = weft_var_type(c);
    int64_t shape[WEFT_MAX_NDIM];
    for (int i = 0; i < weft_type_ndim(t); i++) shape[i] = weft_type_dim(t, i);
    const void *data;
    size_t nbytes;
    weft_status_t s = weft_constant_data(c, &data, &nbytes);
    if (s != WEFT_OK) return s;
    return weft_tensor_from_data(weft_type_dtype(t), weft_type_ndim(t), shape, NULL, (void *)data,
                                 out);
}

/* Resolves v (an input of a plan node or an inner output) to a ref, adding
 * constants on first sight. */
static weft_status_t resolve(weft__ofg_t *d, weft_graph_t *eg, refmap_t *m, const weft_var_t *v,
                             ofg_ref_t *r, uint64_t *h)
{
    size_t j = ptr_slot(m, v);
    if (m->keys[j]) {
        *r = m->vals[j];
        *h = m->hash[j];
        return WEFT_OK;
    }
    if (!weft_var_is_constant(v))
        return weft_graph_set_error(eg, WEFT_EMISSING_INPUT,
                                    "OpFromGraph: inner variable %llu is not an input",
                                    (unsigned long long)weft_var_id(v));
    weft__ofg_plan_t *p = &d->plan;
    weft_status_t s = const_tensor(v, &p->consts[p->n_consts]);
    if (s != WEFT_OK)
        return weft_graph_set_error(eg, s, "OpFromGraph: %s", weft_tensor_last_error());
    *r = (ofg_ref_t){OFG_REF_CONST, (uint32_t)p->n_consts++};
    *h = mix(0xc0, weft_constant_hash(v));
    refmap_put(m, v, *r, *h);
    return WEFT_OK;
}

static weft_status_t check_not_inplace(weft_graph_t *eg, const weft_apply_t *a)
{
    if (!weft_op_is_destructive(weft_apply_op(a))) return WEFT_OK;
    char buf[160];
    weft_apply_describe(a, buf, sizeof(buf));
    return weft_graph_set_error(eg, WEFT_EINVAL,
                                "weft_ofg_create: inner node %s destroys an input; in-place "
                                "ops are not allowed in an inner graph",
                                buf);
}

static weft_status_t plan_alloc(weft__ofg_plan_t *p, size_t n_nodes, size_t n_refs, size_t n_out)
{
    p->nodes = calloc(n_nodes ? n_nodes : 1, sizeof(*p->nodes));
    p->in_off = calloc(n_nodes + 1, sizeof(*p->in_off));
    p->refs = calloc(n_refs ? n_refs : 1, sizeof(*p->refs));
    p->slot0 = calloc(n_nodes ? n_nodes : 1, sizeof(*p->slot0));
    p->consts = calloc(n_refs + n_out, sizeof(*p->consts));
    p->out_refs = calloc(n_out, sizeof(*p->out_refs));
    return p->nodes && p->in_off && p->refs && p->slot0 && p->consts && p->out_refs ? WEFT_OK
                                                                                    : WEFT_ENOMEM;
}

/* Adds node j of the order: resolves its inputs, names its output slots and
 * hashes them (op hash mixed with the input hashes and the output index). */
static weft_status_t plan_node(weft__ofg_t *d, weft_graph_t *eg, refmap_t *m, size_t j,
                               const weft_apply_t *a)
{
    weft__ofg_plan_t *p = &d->plan;
    weft_status_t s = check_not_inplace(eg, a);
    size_t n_in = weft_apply_n_inputs(a), off = p->in_off[j];
    uint64_t h = mix(0xa9, weft_op_hash(weft_apply_op(a)));
    for (size_t i = 0; i < n_in && s == WEFT_OK; i++) {
        uint64_t hi = 0;
        s = resolve(d, eg, m, weft_apply_input(a, i), &p->refs[off + i], &hi);
        h = mix(h, hi);
    }
    if (s != WEFT_OK) return s;
    p->nodes[j] = a;
    p->in_off[j + 1] = off + n_in;
    p->slot0[j] = p->n_slots;
    if (n_in > p->max_in) p->max_in = n_in;
    for (size_t o = 0; o < weft_apply_n_outputs(a); o++)
        refmap_put(m, weft_apply_output(a, o), (ofg_ref_t){OFG_REF_SLOT, (uint32_t)p->n_slots++},
                   mix(h, o));
    return WEFT_OK;
}

static weft_status_t plan_conn(weft__ofg_t *d, const refmap_t *m);

weft_status_t weft__ofg_plan_build(weft__ofg_t *d, weft_graph_t *eg)
{
    weft_apply_t *const *order = NULL;
    size_t n = 0, n_refs = 0;
    weft_status_t s = WEFT_OK;
    /* An inner graph without nodes (outputs are inputs or constants) needs no
     * order. */
    if (weft_fgraph_n_applies(d->fg) > 0) s = weft_fgraph_toposort(d->fg, &order, &n);
    if (s != WEFT_OK) return weft_graph_set_error(eg, s, "%s", weft_fgraph_last_error(d->fg));
    for (size_t j = 0; j < n; j++) n_refs += weft_apply_n_inputs(order[j]);
    refmap_t m = {0};
    if (!refmap_init(&m, n_refs + d->n_in + d->n_out) ||
        plan_alloc(&d->plan, n, n_refs, d->n_out) != WEFT_OK) {
        refmap_free(&m);
        return WEFT_ENOMEM;
    }
    for (size_t i = 0; i < d->n_in; i++)
        refmap_put(&m, d->in[i], (ofg_ref_t){OFG_REF_INPUT, (uint32_t)i}, mix(0x1f, i));
    d->plan.n_nodes = n;
    for (size_t j = 0; j < n && s == WEFT_OK; j++) s = plan_node(d, eg, &m, j, order[j]);
    uint64_t h = mix(mix(0x0f6, d->n_in), d->inline_expand);
    for (size_t k = 0; k < d->n_out && s == WEFT_OK; k++) {
        uint64_t hk = 0;
        s = resolve(d, eg, &m, d->out[k], &d->plan.out_refs[k], &hk);
        h = mix(h, hk);
    }
    d->hash = h;
    if (s == WEFT_OK) s = plan_conn(d, &m);
    if (s == WEFT_OK && !(d->plan.runs = weft__ofg_runs_create())) s = WEFT_ENOMEM;
    refmap_free(&m);
    return s;
}

/* ---- connection pattern ------------------------------------------------------ */

/* dep[v] = the set of inner inputs v depends on, one bool row of n_in per
 * input, slot and constant; a node output depends on the inputs its node's
 * own connection pattern links it to. */
static const bool *ref_row(const weft__ofg_t *d, const bool *rows, ofg_ref_t r)
{
    size_t base = r.kind == OFG_REF_INPUT  ? 0
                  : r.kind == OFG_REF_SLOT ? d->n_in
                                           : d->n_in + d->plan.n_slots;
    return rows + (base + (r.kind == OFG_REF_CONST ? 0 : r.idx)) * d->n_in;
}

static bool node_connected(const weft_apply_t *a, size_t i, size_t o)
{
    const weft_op_class_t *c = weft_op_class(weft_apply_op(a));
    bool (*cp)(const weft_apply_t *, size_t, size_t) = WEFT__OFG_HOOK(c, connection_pattern);
    return cp ? cp(a, i, o) : true;
}

static weft_status_t plan_conn(weft__ofg_t *d, const refmap_t *m)
{
    (void)m;
    const weft__ofg_plan_t *p = &d->plan;
    size_t n_rows = d->n_in + p->n_slots + 1, w = d->n_in, cells;
    if (!weft__mul_size(n_rows, w ? w : 1, &cells)) return WEFT_ENOMEM; /* n_in^2 and more */
    bool *rows = calloc(cells, sizeof(bool));
    d->conn = calloc((w ? w : 1) * d->n_out, sizeof(bool));
    if (!rows || !d->conn) {
        free(rows);
        return WEFT_ENOMEM;
    }
    for (size_t i = 0; i < w; i++) rows[i * w + i] = true;
    for (size_t j = 0; j < p->n_nodes; j++) {
        const weft_apply_t *a = p->nodes[j];
        for (size_t o = 0; o < weft_apply_n_outputs(a); o++) {
            bool *dst = rows + (w + p->slot0[j] + o) * w;
            for (size_t i = p->in_off[j]; i < p->in_off[j + 1]; i++) {
                if (!node_connected(a, i - p->in_off[j], o)) continue;
                const bool *src = ref_row(d, rows, p->refs[i]);
                for (size_t x = 0; x < w; x++) dst[x] = dst[x] || src[x];
            }
        }
    }
    for (size_t k = 0; k < d->n_out; k++) {
        const bool *src = ref_row(d, rows, p->out_refs[k]);
        for (size_t i = 0; i < w; i++) d->conn[i * d->n_out + k] = src[i];
    }
    free(rows);
    return WEFT_OK;
}

bool weft__ofg_connection_pattern(const weft_apply_t *node, size_t in, size_t out)
{
    const weft__ofg_t *d = weft__ofg_get(weft_apply_op(node));
    if (!d || in >= d->n_in || out >= d->n_out) return false;
    return d->conn[in * d->n_out + out];
}
