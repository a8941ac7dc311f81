/* check_integrity: recomputes the subgraph between inputs and outputs
 * (iteratively, marks only) and compares it with the fgraph's indexes, in
 * the order of docs/fgraph.md §4. O(V + E + total clients). */
#include <stdio.h>
#include <string.h>

#include "fgraph_int.h"

/* Walks back from the outputs; marks reached applies (amarks) and variables
 * (vmarks: node inputs, all outputs of reached nodes, the outputs); counts. */
static weft_status_t walk(weft_fgraph_t *fg, size_t *n_nodes, size_t *n_vars)
{
    const uint32_t ep = fg->amarks.epoch, vp = fg->vmarks.epoch;
    weft__pvec_t *st = &fg->rm_stack;
    size_t base = st->n;
    *n_nodes = *n_vars = 0;
    for (size_t k = 0; k < fg->n_out; k++)
        if (!weft__pvec_push(fg->alloc, st, fg->outputs[k])) return WEFT_ENOMEM;
    while (st->n > base) {
        weft_var_t *v = st->p[--st->n];
        if (weft__marks_has(&fg->vmarks, v->id, vp)) continue;
        fg->vmarks.v[v->id] = vp;
        (*n_vars)++;
        weft_apply_t *a = v->owner;
        if (!a || weft__marks_has(&fg->amarks, a->id, ep)) continue;
        fg->amarks.v[a->id] = ep;
        (*n_nodes)++;
        for (uint32_t k = 0; k < a->n_out; k++)
            if (!weft__pvec_push(fg->alloc, st, a->outputs[k])) return WEFT_ENOMEM;
        for (uint32_t i = 0; i < a->n_in; i++)
            if (!weft__pvec_push(fg->alloc, st, a->inputs[i])) return WEFT_ENOMEM;
    }
    return WEFT_OK;
}

static bool has_client(const weft_fgraph_t *fg, const weft_var_t *v, const weft_apply_t *a,
                       size_t i)
{
    if (v->id >= fg->vcap) return false;
    const weft__cvec_t *c = &fg->clients[v->id];
    for (uint32_t k = 0; k < c->end; k++)
        if (c->items[k].node == a && c->items[k].index == i)
            return weft__fg_client_slot(fg, a, i) == k; /* the O(1) removal's index */
    return false;
}

static weft_status_t fail(weft_fgraph_t *fg, const char *what, const weft_apply_t *a,
                          const weft_var_t *v)
{
    char ab[256] = "", vb[512] = "";
    if (a) weft_apply_describe(a, ab, sizeof(ab));
    if (v) weft__var_describe(v, vb, sizeof(vb));
    return weft__fg_err(fg, WEFT_EINCONSISTENT, "%s: %s%s%s", what, ab, a && v ? ", " : "", vb);
}

/* Conditions 1 and 2 (docs/fgraph.md §4): the apply set and each node's input edges. */
static weft_status_t check_nodes(weft_fgraph_t *fg, size_t n_nodes)
{
    for (size_t k = 0; k < fg->n_applies; k++) {
        weft_apply_t *a = fg->applies[k];
        if (!weft__marks_has(&fg->amarks, a->id, fg->amarks.epoch))
            return fail(fg, "The following nodes are inappropriately cached (excess)", a, NULL);
    }
    if (n_nodes != fg->n_applies)
        return weft__fg_err(fg, WEFT_EINCONSISTENT,
                            "The following nodes are inappropriately cached (%zu missing)",
                            n_nodes - fg->n_applies);
    for (size_t k = 0; k < fg->n_applies; k++) {
        weft_apply_t *a = fg->applies[k];
        for (uint32_t i = 0; i < a->n_in; i++)
            if (!has_client(fg, a->inputs[i], a, i))
                return fail(fg, "Inconsistent clients list", a, a->inputs[i]);
    }
    size_t n_back = 0;
    for (size_t k = 0; k < fg->n_applies; k++)
        for (uint32_t i = 0; i < fg->applies[k]->n_in; i++)
            n_back += weft__fg_back_edge(fg->applies[k], fg->applies[k]->inputs[i]);
    if (n_back != fg->n_back)
        return weft__fg_err(fg, WEFT_EINCONSISTENT,
                            "Inconsistent edge count (%zu edges against id order, %zu counted)",
                            n_back, fg->n_back);
    return WEFT_OK;
}

/* Conditions 3 to 6 for one reached variable. */
static weft_status_t check_var(weft_fgraph_t *fg, weft_var_t *v)
{
    if (!weft__fg_has_var(fg, v))
        return fail(fg, "The following variables are inappropriately cached (missing)", NULL, v);
    if (!v->owner && !(v->flags & WEFT__VAR_CONSTANT) && !weft__fg_is_input(fg, v))
        return fail(fg, "Undeclared input", NULL, v);
    const weft__cvec_t *c = &fg->clients[v->id];
    uint32_t live = 0;
    for (uint32_t k = 0; k < c->end; k++) live += c->items[k].node != NULL;
    if (live != c->n) return fail(fg, "Inconsistent clients list (live count)", NULL, v);
    for (uint32_t k = 0; k < c->end; k++) {
        weft_apply_t *cn = c->items[k].node;
        size_t i = c->items[k].index;
        if (!cn) continue; /* tombstone */
        if (cn->slot_fg) {
            if (!weft__fg_is_live_slot(fg, cn) || fg->outputs[cn->slot] != v)
                return fail(fg, "Inconsistent clients list (output slot)", cn, v);
            continue;
        }
        if (!weft__fg_has_apply(fg, cn)) return fail(fg, "Client not in FunctionGraph", cn, v);
        if (i >= cn->n_in || cn->inputs[i] != v)
            return fail(fg, "Inconsistent clients list", cn, v);
    }
    return WEFT_OK;
}

static weft_status_t check_vars(weft_fgraph_t *fg, size_t n_vars)
{
    if (n_vars != fg->n_vars_in)
        return weft__fg_err(fg, WEFT_EINCONSISTENT,
                            "The following variables are inappropriately cached (%zu in the "
                            "graph, %zu in the set)",
                            n_vars, fg->n_vars_in);
    /* Every reached variable is an output or an input/output of a reached
     * node, and the reached nodes are the apply set (checked before). */
    for (size_t k = 0; k < fg->n_out; k++) {
        weft_status_t s = check_var(fg, fg->outputs[k]);
        if (s != WEFT_OK) return s;
    }
    for (size_t k = 0; k < fg->n_applies; k++) {
        weft_apply_t *a = fg->applies[k];
        for (uint32_t i = 0; i < a->n_in + a->n_out; i++) {
            weft_var_t *v = i < a->n_in ? a->inputs[i] : a->outputs[i - a->n_in];
            weft_status_t s = check_var(fg, v);
            if (s != WEFT_OK) return s;
        }
    }
    return WEFT_OK;
}

weft_status_t weft_fgraph_check_integrity(const weft_fgraph_t *cfg)
{
    if (!cfg) return WEFT_EINVAL;
    /* The marks and the error text are caches, not part of the graph state. */
    weft_fgraph_t *fg = (weft_fgraph_t *)cfg;
    if (!weft__fg_reserve(fg))
        return weft__fg_err(fg, WEFT_ENOMEM, "check_integrity: out of memory");
    weft_status_t s = weft__fg_check_ranks(fg); /* a cycle first: it confuses the rest */
    if (s != WEFT_OK) return s;
    if (!weft__marks_begin(fg->alloc, &fg->amarks, fg->acap) ||
        !weft__marks_begin(fg->alloc, &fg->vmarks, fg->vcap))
        return weft__fg_err(fg, WEFT_ENOMEM, "check_integrity: out of memory");
    size_t n_nodes, n_vars, base = fg->rm_stack.n;
    s = walk(fg, &n_nodes, &n_vars);
    fg->rm_stack.n = base;
    if (s != WEFT_OK) return weft__fg_err(fg, s, "check_integrity: out of memory");
    s = check_nodes(fg, n_nodes);
    if (s == WEFT_OK) s = check_vars(fg, n_vars);
    return s;
}
