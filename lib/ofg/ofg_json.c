/* OpFromGraph props in the JSON graph format: the name, the inline flag, the
 * inner graph (nested, same format as a graph file) and the gradient
 * override (a nested op). Loading rebuilds the op with weft_ofg_create. */
#include <stdio.h>

#include "ofg_int.h"
#include "weft/graph_io.h"
#include "weft/json_props.h"

weft_status_t weft__ofg_to_json(const weft_op_t *op, weft_json_props_t *p)
{
    const weft__ofg_t *d = weft__ofg_get(op);
    weft_graph_io_t inner = {d->n_in, d->in, NULL, d->n_out, d->out, 0, NULL};
    weft_status_t s = WEFT_OK;
    if (weft_ofg_name(op)) s = weft_json_props_put_string(p, "name", weft_ofg_name(op));
    if (s == WEFT_OK) s = weft_json_props_put_bool(p, "inline", d->inline_expand);
    if (s == WEFT_OK) s = weft_json_props_put_graph(p, "graph", &inner);
    if (s == WEFT_OK && d->grad_override)
        s = weft_json_props_put_op(p, "grad_override", d->grad_override);
    return s;
}

weft_status_t weft__ofg_from_json(weft_graph_t *g, const weft_op_class_t *cls,
                                  const weft_json_props_t *p, const weft_op_t **out)
{
    (void)cls;
    weft_ofg_options_t o = WEFT_OFG_OPTIONS_INIT;
    weft_status_t s = WEFT_OK;
    if (weft_json_props_has(p, "name")) s = weft_json_props_get_string(p, "name", &o.name);
    if (s == WEFT_OK && weft_json_props_has(p, "inline"))
        s = weft_json_props_get_bool(p, "inline", &o.inline_expand);
    if (s == WEFT_OK && weft_json_props_has(p, "grad_override"))
        s = weft_json_props_get_op(p, "grad_override", g, &o.grad_override);
    weft_graph_io_t inner = {0};
    if (s == WEFT_OK) s = weft_json_props_get_graph(p, "graph", g, &inner);
    if (s == WEFT_OK) {
        s = weft_ofg_create(g, inner.n_inputs, inner.inputs, inner.n_outputs, inner.outputs, &o,
                            out);
        if (s != WEFT_OK) {
            char msg[512];
            snprintf(msg, sizeof(msg), "%s", weft_graph_last_error(g));
            s = weft_json_props_error(p, s, "%s", msg);
        }
    }
    weft_graph_io_clear(&inner);
    return s;
}
