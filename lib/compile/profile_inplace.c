/* The profile's in-place columns and the compile option cost_profile
 * (weft/profile.h, weft/node_cost.h, docs/rewrites.md §6.6): per node its
 * structural key, the bytes an in-place node writes into its destroyed input
 * instead of a new buffer, and the ordering edges (no data) the task DAG
 * puts before it; and the measured costs a profile gives the inplace rewrite. */
#include <stdlib.h>

#include "compile_int.h"
#include "weft/node_cost.h"

bool weft__apply_destroys(const weft_apply_t *a)
{
    const weft_op_alias_t *dm;
    size_t nd;
    weft_op_destroy_map(weft_apply_op(a), &dm, &nd);
    return nd > 0;
}

/* Bytes of a static type's value; 0 when a length is unknown. */
static uint64_t static_bytes(const weft_type_t *t)
{
    if (!weft_type_is_static(t)) return 0;
    uint64_t b = weft_dtype_size(weft_type_dtype(t));
    for (int d = 0; d < weft_type_ndim(t); d++) b *= (uint64_t)weft_type_dim(t, d);
    return b;
}

static uint64_t destroyed_bytes(const weft_apply_t *a)
{
    const weft_op_alias_t *dm;
    size_t nd;
    uint64_t b = 0;
    weft_op_destroy_map(weft_apply_op(a), &dm, &nd);
    for (size_t k = 0; k < nd; k++)
        b += static_bytes(weft_var_type(weft_apply_output(a, dm[k].output)));
    return b;
}

/* Whether the edge from -> to carries data (to reads an output of from). */
static bool data_edge(const weft_function_t *f, uint32_t from, uint32_t to)
{
    const weft_apply_t *a = f->nodes[to].apply, *p = f->nodes[from].apply;
    for (size_t k = 0; k < weft_apply_n_inputs(a); k++)
        if (weft_var_owner(weft_apply_input(a, k)) == p) return true;
    return false;
}

weft_status_t weft__prof_node_info(weft_function_t *f)
{
    weft__prof_acc_t *a = &f->acc;
    size_t n_ids = weft_graph_n_applies(f->g);
    uint64_t *keys = calloc(n_ids + 1, sizeof *keys);
    if (!keys) return WEFT_ENOMEM;
    weft_status_t st = weft_fgraph_node_keys(f->fg, n_ids, keys);
    for (uint32_t i = 0; st == WEFT_OK && i < f->n_nodes; i++) {
        const weft_apply_t *ap = f->nodes[i].apply;
        a->node_key[i] = keys[weft_apply_id(ap)];
        if (weft__apply_destroys(ap)) a->inplace_bytes[i] = destroyed_bytes(ap);
    }
    free(keys);
    for (size_t e = 0; st == WEFT_OK && e < f->n_edges; e++) {
        uint32_t from = weft__edge_from(f->edges[e]), to = weft__edge_to(f->edges[e]);
        if (!data_edge(f, from, to)) a->inplace_ord[to]++;
    }
    return st;
}

weft_status_t weft__cost_profile_apply(weft_function_t *f, const weft_profile_t *p)
{
    if (p->n_applies && !p->applies)
        return weft__fn_error(NULL, WEFT_EINVAL, "options.cost_profile: %zu rows but no rows",
                              p->n_applies);
    uint64_t *keys = calloc(p->n_applies + 1, sizeof *keys);
    double *ns = calloc(p->n_applies + 1, sizeof *ns);
    size_t n = 0;
    for (size_t i = 0; keys && ns && i < p->n_applies; i++) {
        const weft_profile_apply_t *r = &p->applies[i];
        if (!r->calls) continue; /* never ran: no measurement */
        keys[n] = r->key;
        ns[n++] = (double)r->time_ns / (double)r->calls;
    }
    weft_status_t st = keys && ns ? weft_fgraph_set_node_costs(f->fg, n, keys, ns) : WEFT_ENOMEM;
    free(keys);
    free(ns);
    if (st != WEFT_OK)
        return weft__fn_error(NULL, st, "options.cost_profile: %s", weft_fgraph_last_error(f->fg));
    return WEFT_OK;
}
