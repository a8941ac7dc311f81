/* OpFromGraph props in the JSON graph format: the name, the inline flag, the
 * inner graph (nested, same format as a graph file), the gradient
 * override (a nested op) and the destroy_map (output, input pairs). Loading rebuilds the op with weft_ofg_create. */
#include <stdint.h>
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
    if (s == WEFT_OK && d->n_destroy) {
        int64_t flat[2 * WEFT_OP_MAX_ALIAS];
        for (size_t k = 0; k < d->n_destroy; k++) {
            flat[2 * k] = d->destroy[k].output;
            flat[2 * k + 1] = d->destroy[k].input;
        }
        s = weft_json_props_put_int_array(p, "destroy_map", flat, 2 * d->n_destroy);
    }
    return s;
}

/* "destroy_map": [output, input, ...] pairs into dm (range checked by
 * weft_ofg_create). */
static weft_status_t destroy_from_json(const weft_json_props_t *p, weft_op_alias_t *dm, size_t *n)
{
    int64_t flat[2 * WEFT_OP_MAX_ALIAS];
    size_t len = 0;
    weft_status_t s = weft_json_props_get_int_array(p, "destroy_map", flat, 2 * WEFT_OP_MAX_ALIAS,
                                                    &len);
    if (s != WEFT_OK) return s;
    if (len % 2)
        return weft_json_props_error(p, WEFT_EPARSE,
                                     "destroy_map: %zu numbers (pairs of output, input expected)",
                                     len);
    for (size_t k = 0; k < len; k += 2) {
        if (flat[k] < 0 || flat[k + 1] < 0 || flat[k] > UINT32_MAX || flat[k + 1] > UINT32_MAX)
            return weft_json_props_error(p, WEFT_EPARSE, "destroy_map: entry %zu out of range",
                                         k / 2);
        dm[k / 2] = (weft_op_alias_t){(uint32_t)flat[k], (uint32_t)flat[k + 1]};
    }
    *n = len / 2;
    return WEFT_OK;
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
    weft_op_alias_t dm[WEFT_OP_MAX_ALIAS];
    if (s == WEFT_OK && weft_json_props_has(p, "destroy_map"))
        s = destroy_from_json(p, dm, &o.n_destroy);
    o.destroy_map = dm;
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
