/* OpFromGraph: creation (inner FunctionGraph over canonical inputs), the op
 * class with its props hooks (equality by inner graph, structural hash,
 * printing, release), make_node (arity and type checks) and the accessors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ofg_int.h"

static const weft_op_class_t ofg_class;

const weft__ofg_t *weft__ofg_get(const weft_op_t *op)
{
    if (!op || weft_op_class(op) != &ofg_class) return NULL;
    const weft__ofg_props_t *p = weft_op_props(op);
    return p->d;
}

/* ---- props hooks ------------------------------------------------------------ */

static bool types_equal(size_t n, weft_var_t *const *a, weft_var_t *const *b)
{
    for (size_t i = 0; i < n; i++)
        if (!weft_type_equal(weft_var_type(a[i]), weft_var_type(b[i]))) return false;
    return true;
}

/* Inner graphs equal with the inner inputs paired by position (canonical
 * inputs), same declared types, same inline flag and override. */
static bool ofg_props_equal(const void *pa, const void *pb)
{
    const weft__ofg_t *a = ((const weft__ofg_props_t *)pa)->d;
    const weft__ofg_t *b = ((const weft__ofg_props_t *)pb)->d;
    if (a == b) return true;
    if (a->hash != b->hash || a->n_in != b->n_in || a->n_out != b->n_out ||
        a->inline_expand != b->inline_expand)
        return false;
    if ((a->grad_override || b->grad_override) &&
        !weft_op_equal(a->grad_override, b->grad_override))
        return false;
    if (!types_equal(a->n_in, a->in, b->in) || !types_equal(a->n_out, a->out, b->out)) return false;
    bool eq = false;
    if (weft_graph_equal_computations(a->n_out, a->out, b->out, a->n_in, a->in, b->in, &eq) !=
        WEFT_OK)
        return false;
    return eq;
}

static uint64_t ofg_props_hash(const void *p)
{
    return ((const weft__ofg_props_t *)p)->d->hash;
}

static int ofg_props_print(const void *p, char *buf, size_t cap)
{
    const weft__ofg_t *d = ((const weft__ofg_props_t *)p)->d;
    if (d->name)
        return snprintf(buf, cap, "name=%s%s", d->name, d->inline_expand ? ", inline" : "");
    return snprintf(buf, cap, "%s", d->inline_expand ? "inline" : "");
}

static void ofg_free(weft__ofg_t *d)
{
    if (!d) return;
    weft__ofg_plan_free(&d->plan);
    free(d->in);
    free(d->out);
    free(d->conn);
    free(d->name);
    free(d);
}

/* The inner fgraph itself belongs to the context (weft_graph_destroy frees
 * every fgraph before calling props_fini), so only the heap state goes here. */
static void ofg_props_fini(void *p)
{
    ofg_free(((weft__ofg_props_t *)p)->d);
}

/* ---- node building --------------------------------------------------------- */

static const char *ofg_label(const weft__ofg_t *d)
{
    return d->name ? d->name : "OpFromGraph";
}

static weft_status_t ofg_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                   weft_var_t *const *inputs, size_t *n_out,
                                   const weft_type_t **out_types)
{
    const weft__ofg_t *d = weft__ofg_get(op);
    if (n_in != d->n_in)
        return weft_graph_set_error(g, WEFT_EINVAL,
                                    "OpFromGraph '%s': Expected %zu input(s), got %zu",
                                    ofg_label(d), d->n_in, n_in);
    for (size_t i = 0; i < n_in; i++) {
        const weft_type_t *want = weft_var_type(d->in[i]), *got = weft_var_type(inputs[i]);
        if (weft_type_is_super(want, got)) continue;
        char wb[96], gb[96], vb[96];
        weft_type_print(want, wb, sizeof(wb));
        weft_type_print(got, gb, sizeof(gb));
        weft_var_print(inputs[i], vb, sizeof(vb));
        return weft_graph_set_error(g, WEFT_ETYPE,
                                    "OpFromGraph '%s': input %zu (%s) has type %s, expected %s",
                                    ofg_label(d), i, vb, gb, wb);
    }
    *n_out = d->n_out;
    for (size_t k = 0; k < d->n_out; k++) out_types[k] = weft_var_type(d->out[k]);
    return WEFT_OK;
}

static weft_fgraph_t *ofg_inner_fgraph(const weft_op_t *op)
{
    const weft__ofg_t *d = weft__ofg_get(op);
    return d ? d->fg : NULL;
}

/* Never folded at compile time: constant folding would hide the inner graph
 * from the inline expansion and from the other outer rewrites. */
static bool ofg_do_constant_folding(const weft_apply_t *node)
{
    (void)node;
    return false;
}

static const weft_op_class_t ofg_class = {
    .size = sizeof(weft_op_class_t),
    .name = "OpFromGraph",
    .props_size = sizeof(weft__ofg_props_t),
    .props_equal = ofg_props_equal,
    .props_hash = ofg_props_hash,
    .props_print = ofg_props_print,
    .props_fini = ofg_props_fini,
    .make_node = ofg_make_node,
    .perform = weft__ofg_perform,
    .do_constant_folding = ofg_do_constant_folding,
    .connection_pattern = weft__ofg_connection_pattern,
    .grad = weft__ofg_grad,
    .inner_fgraph = ofg_inner_fgraph,
    .props_to_json = weft__ofg_to_json,
    .props_from_json = weft__ofg_from_json,
};

const weft_op_class_t *weft_ofg_class(void)
{
    return &ofg_class;
}

/* ---- creation ----------------------------------------------------------- */

static weft_status_t check_args(weft_graph_t *g, size_t n_in, weft_var_t *const *inputs,
                                size_t n_out, weft_var_t *const *outputs,
                                const weft_ofg_options_t *o)
{
    if ((n_in && !inputs) || !outputs || !o) return WEFT_EINVAL;
    if (o->size < sizeof(weft_ofg_options_t))
        return weft_graph_set_error(g, WEFT_EINVAL, "weft_ofg_create: options size %zu too small",
                                    o->size);
    if (n_out == 0 || n_out > WEFT_OP_MAX_OUTPUTS)
        return weft_graph_set_error(g, WEFT_EINVAL, "weft_ofg_create: %zu outputs (1..%d allowed)",
                                    n_out, WEFT_OP_MAX_OUTPUTS);
    for (size_t i = 0; i < n_in; i++) {
        if (!inputs[i])
            return weft_graph_set_error(g, WEFT_EINVAL, "weft_ofg_create: input %zu is NULL", i);
        if (weft_var_graph(inputs[i]) != g)
            return weft_graph_set_error(g, WEFT_EFOREIGN,
                                        "weft_ofg_create: input %zu belongs to another context", i);
        if (weft_var_is_constant(inputs[i]) || weft_var_owner(inputs[i]))
            return weft_graph_set_error(g, WEFT_EINVAL,
                                        "weft_ofg_create: input %zu is a constant or has an owner "
                                        "(inputs must be root variables)",
                                        i);
    }
    for (size_t k = 0; k < n_out; k++)
        if (!outputs[k])
            return weft_graph_set_error(g, WEFT_EINVAL, "weft_ofg_create: output %zu is NULL", k);
    const weft_op_t *ov = o->grad_override;
    if (ov && weft_ofg_is(ov) && weft_ofg_n_inputs(ov) != n_in + n_out)
        return weft_graph_set_error(g, WEFT_EINVAL,
                                    "weft_ofg_create: grad_override takes %zu inputs, expected "
                                    "%zu (inputs, then output gradients)",
                                    weft_ofg_n_inputs(ov), n_in + n_out);
    return WEFT_OK;
}

/* Clones the subgraph into an fgraph; its inputs are fresh variables standing
 * for the positions 0..n-1. The fgraph's error goes to the context. */
static weft_status_t build_inner(weft_graph_t *g, weft__ofg_t *d, size_t n_in,
                                 weft_var_t *const *inputs, size_t n_out,
                                 weft_var_t *const *outputs)
{
    weft_fgraph_options_t fo = WEFT_FGRAPH_OPTIONS_INIT;
    weft_status_t s = weft_fgraph_create(g, n_in, inputs, n_out, outputs, &fo, NULL, &d->fg);
    if (s != WEFT_OK) {
        if (weft_graph_last_error(g)[0] == '\0')
            weft_graph_set_error(g, s, "weft_ofg_create: cannot build the inner graph");
        return s;
    }
    d->in = calloc(n_in ? n_in : 1, sizeof(*d->in));
    d->out = calloc(n_out, sizeof(*d->out));
    if (!d->in || !d->out) return weft_graph_set_error(g, WEFT_ENOMEM, "out of memory");
    for (size_t i = 0; i < n_in; i++) d->in[i] = weft_fgraph_input(d->fg, i);
    for (size_t k = 0; k < n_out; k++) d->out[k] = weft_fgraph_output(d->fg, k);
    d->n_in = n_in;
    d->n_out = n_out;
    return WEFT_OK;
}

weft_status_t weft_ofg_create(weft_graph_t *g, size_t n_in, weft_var_t *const *inputs, size_t n_out,
                              weft_var_t *const *outputs, const weft_ofg_options_t *opts,
                              const weft_op_t **out)
{
    if (!g || !out) return WEFT_EINVAL;
    *out = NULL;
    weft_ofg_options_t dflt = WEFT_OFG_OPTIONS_INIT;
    const weft_ofg_options_t *o = opts ? opts : &dflt;
    weft_status_t s = check_args(g, n_in, inputs, n_out, outputs, o);
    if (s != WEFT_OK) return s;
    weft__ofg_t *d = calloc(1, sizeof(*d));
    if (!d) return weft_graph_set_error(g, WEFT_ENOMEM, "out of memory");
    d->g = g;
    d->inline_expand = o->inline_expand;
    d->grad_override = o->grad_override;
    if (o->name) {
        size_t len = strlen(o->name) + 1;
        if ((d->name = malloc(len)) != NULL)
            memcpy(d->name, o->name, len);
        else
            s = WEFT_ENOMEM;
    }
    if (s == WEFT_OK) s = build_inner(g, d, n_in, inputs, n_out, outputs);
    if (s == WEFT_OK) s = weft__ofg_plan_build(d);
    if (s != WEFT_OK) {
        weft_fgraph_destroy(d->fg);
        ofg_free(d);
        return s == WEFT_ENOMEM ? weft_graph_set_error(g, s, "weft_ofg_create: out of memory") : s;
    }
    weft__ofg_register_default();
    weft__ofg_props_t props = {d};
    /* From here the op owns d: props_fini releases it with the context, even
     * when weft_op_create fails after registering the props. */
    return weft_op_create(g, &ofg_class, &props, out);
}

/* ---- accessors ------------------------------------------------------------- */

bool weft_ofg_is(const weft_op_t *op)
{
    return weft__ofg_get(op) != NULL;
}

weft_fgraph_t *weft_ofg_fgraph(const weft_op_t *op)
{
    const weft__ofg_t *d = weft__ofg_get(op);
    return d ? d->fg : NULL;
}

size_t weft_ofg_n_inputs(const weft_op_t *op)
{
    const weft__ofg_t *d = weft__ofg_get(op);
    return d ? d->n_in : 0;
}

size_t weft_ofg_n_outputs(const weft_op_t *op)
{
    const weft__ofg_t *d = weft__ofg_get(op);
    return d ? d->n_out : 0;
}

bool weft_ofg_is_inline(const weft_op_t *op)
{
    const weft__ofg_t *d = weft__ofg_get(op);
    return d && d->inline_expand;
}

const char *weft_ofg_name(const weft_op_t *op)
{
    const weft__ofg_t *d = weft__ofg_get(op);
    return d ? d->name : NULL;
}

const weft_op_t *weft_ofg_grad_override(const weft_op_t *op)
{
    const weft__ofg_t *d = weft__ofg_get(op);
    return d ? d->grad_override : NULL;
}
