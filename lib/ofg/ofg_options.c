/* OpFromGraph creation options beyond the inner graph itself
 * (weft/opfromgraph.h): inputs bound to constants, the unused-input policy
 * (ignore / warn / raise) and the declared destroy_map. */
#include <stdio.h>
#include <string.h>

#include "graph/ctor_int.h"
#include "ofg_int.h"

weft_status_t weft__ofg_read_options(weft_graph_t *g, const weft_ofg_options_t *in,
                                     weft_ofg_options_t *o)
{
    const weft_ofg_options_t dflt = WEFT_OFG_OPTIONS_INIT;
    *o = dflt;
    if (!in) return WEFT_OK;
    /* The first four fields are the original struct: older callers pass that size. Any
     * other size below the current one would cut a field (a pointer) in two. */
    size_t old = offsetof(weft_ofg_options_t, input_constants);
    if (in->size < old)
        return weft_graph_set_error(g, WEFT_EINVAL, "weft_ofg_create: options size %zu too small",
                                    in->size);
    if (in->size != old && in->size < sizeof(*o))
        return weft_graph_set_error(g, WEFT_EINVAL,
                                    "weft_ofg_create: options size %zu is neither the original "
                                    "struct's (%zu) nor at least the current one's (%zu)",
                                    in->size, old, sizeof(*o));
    memcpy(o, in, in->size < sizeof(*o) ? in->size : sizeof(*o));
    o->size = sizeof(*o);
    if ((unsigned)o->on_unused_input > WEFT_OFG_UNUSED_RAISE)
        return weft_graph_set_error(g, WEFT_EINVAL, "weft_ofg_create: on_unused_input %d unknown",
                                    (int)o->on_unused_input);
    return WEFT_OK;
}

weft_status_t weft__ofg_count_bound(weft_graph_t *g, size_t n_in, const weft_ofg_options_t *o,
                                    size_t *n_bound)
{
    *n_bound = 0;
    for (size_t i = 0; o->input_constants && i < n_in; i++) {
        weft_var_t *c = o->input_constants[i];
        if (!c) continue;
        char vb[256];
        weft_var_print(c, vb, sizeof(vb));
        if (!weft_var_is_constant(c))
            return weft_graph_set_error(
                g, WEFT_EINVAL, "weft_ofg_create: input_constants[%zu], %s, is not a constant", i,
                vb);
        if (weft_var_graph(c) != g)
            return weft_graph_set_error(
                g, WEFT_EFOREIGN,
                "weft_ofg_create: input_constants[%zu], %s, belongs to another context", i, vb);
        ++*n_bound;
    }
    return WEFT_OK;
}

/* A copy of constant c in d's private context (same creation site). */
static weft_status_t copy_constant(weft_graph_t *g, weft__ofg_t *d, const weft_var_t *c,
                                   weft_var_t **out)
{
    const weft_type_t *t;
    const void *data;
    size_t nbytes;
    const char *file;
    int line;
    weft_var_trace(c, &file, &line);
    weft_status_t s = weft__ofg_type_in(d->g, weft_var_type(c), &t);
    if (s == WEFT_OK) s = weft_constant_data(c, &data, &nbytes);
    if (s == WEFT_OK)
        s = weft__got(d->g, *out = weft_constant_create_at(d->g, t, data, nbytes, file, line));
    return s == WEFT_OK ? s : weft_graph_set_error(g, s, "weft_ofg_create: copying a constant");
}

weft_status_t weft__ofg_bind(weft_graph_t *g, weft__ofg_t *d, size_t n_in,
                             const weft_ofg_options_t *o, size_t *keep)
{
    size_t n_keep = 0;
    for (size_t i = 0; i < n_in; i++)
        if (!o->input_constants || !o->input_constants[i]) keep[n_keep++] = i;
    /* Last first, so the positions still to remove do not move. */
    for (size_t i = n_in; o->input_constants && i-- > 0;) {
        if (!o->input_constants[i]) continue;
        weft_var_t *c;
        weft_status_t s = copy_constant(g, d, o->input_constants[i], &c);
        if (s == WEFT_OK) s = weft_fgraph_replace(d->fg, weft_fgraph_input(d->fg, i), c, "bind");
        if (s == WEFT_OK) s = weft_fgraph_remove_input(d->fg, i, "bind");
        if (s != WEFT_OK)
            return weft_graph_set_error(g, s, "weft_ofg_create: binding input %zu: %s", i,
                                        weft_fgraph_last_error(d->fg));
    }
    for (size_t k = 0; k < n_keep; k++) d->in[k] = weft_fgraph_input(d->fg, k);
    d->n_in = n_keep;
    return WEFT_OK;
}

weft_status_t weft__ofg_check_unused(weft_graph_t *g, const weft__ofg_t *d,
                                     weft_var_t *const *inputs, const size_t *keep,
                                     const weft_ofg_options_t *o)
{
    if (o->on_unused_input == WEFT_OFG_UNUSED_IGNORE) return WEFT_OK;
    for (size_t k = 0; k < d->n_in; k++) {
        if (weft_fgraph_n_clients(d->fg, d->in[k]) > 0) continue;
        const weft_var_t *v = inputs[keep[k]];
        char vb[128], msg[512];
        const char *file;
        int line;
        weft_var_print(v, vb, sizeof(vb));
        weft_var_trace(v, &file, &line);
        snprintf(msg, sizeof(msg),
                 "weft_ofg_create: input %zu (%s, created at %s:%d) is not used by any output", k,
                 vb, file ? file : "?", line);
        if (o->on_unused_input == WEFT_OFG_UNUSED_RAISE)
            return weft_graph_set_error(g, WEFT_EINVAL, "%s", msg);
        if (o->warn)
            o->warn(o->warn_user, msg);
        else
            fprintf(stderr, "weft: warning: %s\n", msg);
    }
    return WEFT_OK;
}

weft_status_t weft__ofg_set_destroy(weft_graph_t *g, weft__ofg_t *d, const weft_ofg_options_t *o)
{
    if (o->n_destroy && !o->destroy_map)
        return weft_graph_set_error(g, WEFT_EINVAL, "weft_ofg_create: NULL destroy_map");
    if (o->n_destroy > WEFT_OP_MAX_ALIAS)
        return weft_graph_set_error(g, WEFT_EINVAL,
                                    "weft_ofg_create: destroy_map has %zu entries (at most %d)",
                                    o->n_destroy, WEFT_OP_MAX_ALIAS);
    for (size_t k = 0; k < o->n_destroy; k++) {
        weft_op_alias_t e = o->destroy_map[k];
        const char *why = NULL;
        if (e.output >= d->n_out || e.input >= d->n_in)
            why = "is out of range";
        else if (!weft_type_equal(weft_var_type(d->out[e.output]), weft_var_type(d->in[e.input])))
            why = "pairs an output and an input of different types";
        for (size_t j = 0; j < k && !why; j++)
            if (o->destroy_map[j].output == e.output || o->destroy_map[j].input == e.input)
                why = "repeats an output or an input";
        if (why)
            return weft_graph_set_error(g, WEFT_EINVAL,
                                        "weft_ofg_create: destroy_map entry %zu {output %u, input "
                                        "%u} %s (%zu inputs, %zu outputs)",
                                        k, e.output, e.input, why, d->n_in, d->n_out);
        d->destroy[k] = e;
    }
    d->n_destroy = o->n_destroy;
    return WEFT_OK;
}
