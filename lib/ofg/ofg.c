/* OpFromGraph: creation (the user's subgraph copied into a private context
 * over canonical inputs, then interned), the op class with its props hooks
 * (equality by interned inner graph, structural hash, printing), make_node
 * (arity and type checks) and the accessors. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "ofg_int.h"

static const weft_op_class_t ofg_class;

const weft__ofg_t *weft__ofg_get(const weft_op_t *op)
{
    if (!op || weft_op_class(op) != &ofg_class) return NULL;
    const weft__ofg_props_t *p = weft_op_props(op);
    return p->d;
}

static const char *props_name(const weft_op_t *op)
{
    const weft__ofg_props_t *p = weft_op_props(op);
    return p->name[0] ? p->name : NULL;
}

/* ---- interning ------------------------------------------------------------------ */

static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;
static weft__ofg_t **interned; /* guarded by intern_lock; kept until exit */
static size_t n_interned, cap_interned;

static bool types_equal(size_t n, weft_var_t *const *a, weft_var_t *const *b)
{
    for (size_t i = 0; i < n; i++)
        if (!weft_type_equal(weft_var_type(a[i]), weft_var_type(b[i]))) return false;
    return true;
}

/* Structural equality: declared types, inner graphs with the inner inputs
 * paired by position (canonical inputs), inline flag and override. */
static bool ofg_same(const weft__ofg_t *a, const weft__ofg_t *b)
{
    if (a->hash != b->hash || a->n_in != b->n_in || a->n_out != b->n_out ||
        a->inline_expand != b->inline_expand)
        return false;
    if ((a->grad_override || b->grad_override) &&
        !weft_op_equal(a->grad_override, b->grad_override))
        return false;
    if (!types_equal(a->n_in, a->in, b->in) || !types_equal(a->n_out, a->out, b->out)) return false;
    if (a->n_destroy != b->n_destroy ||
        (a->n_destroy && memcmp(a->destroy, b->destroy, a->n_destroy * sizeof(*a->destroy))))
        return false;
    bool eq = false;
    return weft_graph_equal_computations(a->n_out, a->out, b->out, a->n_in, a->in, b->in, &eq) ==
               WEFT_OK &&
           eq;
}

static void ofg_free(weft__ofg_t *d)
{
    if (!d) return;
    weft__ofg_plan_free(&d->plan);
    weft_graph_destroy(d->g); /* also frees the inner fgraph */
    free(d->in);
    free(d->out);
    free(d->conn);
    free(d);
}

/* The interned state equal to d (d itself when new; d is freed otherwise). */
static weft_status_t intern(weft__ofg_t *d, const weft__ofg_t **out)
{
    weft_status_t s = WEFT_OK;
    const weft__ofg_t *found = NULL;
    pthread_mutex_lock(&intern_lock);
    for (size_t i = 0; i < n_interned && !found; i++)
        if (ofg_same(interned[i], d)) found = interned[i];
    if (!found &&
        weft__vec_grow(NULL, (void **)&interned, &cap_interned, n_interned + 1, sizeof(*interned)))
        interned[n_interned++] = d;
    else if (!found)
        s = WEFT_ENOMEM;
    pthread_mutex_unlock(&intern_lock);
    *out = found ? found : d;
    if (found || s != WEFT_OK) ofg_free(d);
    return s;
}

/* ---- class hooks --------------------------------------------------------------- */

static bool ofg_props_equal(const void *pa, const void *pb)
{
    return ((const weft__ofg_props_t *)pa)->d == ((const weft__ofg_props_t *)pb)->d;
}

static uint64_t ofg_props_hash(const void *p)
{
    return ((const weft__ofg_props_t *)p)->d->hash;
}

/* "destroy_map={0:1, 1:0}" (output:input), or "" when none. */
static void destroy_text(const weft__ofg_t *d, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < d->n_destroy && len < cap; k++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%u:%u%s", k ? ", " : "destroy_map={",
                                d->destroy[k].output, d->destroy[k].input,
                                k + 1 == d->n_destroy ? "}" : "");
}

static int ofg_props_print(const void *pv, char *buf, size_t cap)
{
    const weft__ofg_props_t *p = pv;
    char nb[WEFT__OFG_NAME_MAX + 8], db[160];
    snprintf(nb, sizeof(nb), "%s%s", p->name[0] ? "name=" : "", p->name);
    destroy_text(p->d, db, sizeof(db));
    const char *parts[] = {nb, p->d->inline_expand ? "inline" : "", db};
    size_t len = 0;
    if (cap) buf[0] = '\0';
    for (size_t k = 0; k < 3; k++) {
        if (!parts[k][0]) continue;
        int r = snprintf(len < cap ? buf + len : NULL, len < cap ? cap - len : 0, "%s%s",
                         len ? ", " : "", parts[k]);
        len += (size_t)r;
    }
    return (int)len;
}

static size_t ofg_destroy_map(const weft_op_t *op, weft_op_alias_t *out, size_t cap)
{
    const weft__ofg_t *d = weft__ofg_get(op);
    for (size_t k = 0; k < d->n_destroy && k < cap; k++) out[k] = d->destroy[k];
    return d->n_destroy;
}

static weft_status_t ofg_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                   weft_var_t *const *inputs, size_t *n_out,
                                   const weft_type_t **out_types)
{
    const weft__ofg_t *d = weft__ofg_get(op);
    const char *label = props_name(op) ? props_name(op) : "OpFromGraph";
    if (n_in != d->n_in)
        return weft_graph_set_error(g, WEFT_EINVAL,
                                    "OpFromGraph '%s': Expected %zu input(s), got %zu", label,
                                    d->n_in, n_in);
    for (size_t i = 0; i < n_in; i++) {
        const weft_type_t *want = weft_var_type(d->in[i]), *got = weft_var_type(inputs[i]);
        if (weft_type_is_super(want, got)) continue;
        char wb[96], gb[96], vb[96];
        weft_type_print(want, wb, sizeof(wb));
        weft_type_print(got, gb, sizeof(gb));
        weft_var_print(inputs[i], vb, sizeof(vb));
        return weft_graph_set_error(g, WEFT_ETYPE,
                                    "OpFromGraph '%s': input %zu (%s) has type %s, expected %s",
                                    label, i, vb, gb, wb);
    }
    *n_out = d->n_out;
    for (size_t k = 0; k < d->n_out; k++) {
        weft_status_t s = weft__ofg_type_in(g, weft_var_type(d->out[k]), &out_types[k]);
        if (s != WEFT_OK) return s;
    }
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
    .make_node = ofg_make_node,
    .destroy_map = ofg_destroy_map,
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

/* ---- creation --------------------------------------------------------------------- */

static weft_status_t check_args(weft_graph_t *g, size_t n_in, weft_var_t *const *inputs,
                                size_t n_out, weft_var_t *const *outputs,
                                const weft_ofg_options_t *o, size_t n_bound)
{
    if ((n_in && !inputs) || !outputs) return WEFT_EINVAL;
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
        for (size_t j = 0; j < i; j++)
            if (inputs[j] == inputs[i])
                return weft_graph_set_error(g, WEFT_EINVAL,
                                            "weft_ofg_create: input %zu is listed twice", i);
    }
    for (size_t k = 0; k < n_out; k++) {
        if (!outputs[k])
            return weft_graph_set_error(g, WEFT_EINVAL, "weft_ofg_create: output %zu is NULL", k);
        if (weft_var_graph(outputs[k]) != g)
            return weft_graph_set_error(
                g, WEFT_EFOREIGN, "weft_ofg_create: output %zu belongs to another context", k);
    }
    const weft_op_t *ov = o->grad_override;
    if (ov && (!weft_ofg_is(ov) || weft_ofg_n_inputs(ov) != n_in - n_bound + n_out))
        return weft_graph_set_error(g, WEFT_EINVAL,
                                    "weft_ofg_create: grad_override must be an OpFromGraph taking "
                                    "%zu inputs (inputs, then output gradients)",
                                    n_in - n_bound + n_out);
    return WEFT_OK;
}

/* Copies the subgraph into d's private context and builds the inner fgraph
 * over fresh inputs standing for the positions 0..n-1. */
static weft_status_t build_inner(weft_graph_t *g, weft__ofg_t *d, size_t n_in,
                                 weft_var_t *const *inputs, size_t n_out,
                                 weft_var_t *const *outputs)
{
    d->in = calloc(n_in + 1, sizeof(*d->in));
    d->out = calloc(n_out, sizeof(*d->out));
    if (!d->in || !d->out || weft_graph_create(NULL, &d->g) != WEFT_OK)
        return weft_graph_set_error(g, WEFT_ENOMEM, "weft_ofg_create: out of memory");
    weft_status_t s = weft__ofg_import(d->g, g, n_in, inputs, d->in, n_out, outputs, d->out);
    if (s != WEFT_OK) return s;
    weft_fgraph_options_t fo = WEFT_FGRAPH_OPTIONS_INIT;
    fo.clone = false;
    s = weft_fgraph_create(d->g, n_in, d->in, n_out, d->out, &fo, NULL, &d->fg);
    if (s != WEFT_OK)
        return weft_graph_set_error(g, s, "weft_ofg_create: %s", weft_graph_last_error(d->g));
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
    weft_ofg_options_t opt;
    const weft_ofg_options_t *o = &opt;
    size_t n_bound = 0;
    weft_status_t s = weft__ofg_read_options(g, opts, &opt);
    if (s == WEFT_OK) s = weft__ofg_count_bound(g, n_in, o, &n_bound);
    if (s == WEFT_OK) s = check_args(g, n_in, inputs, n_out, outputs, o, n_bound);
    if (s != WEFT_OK) return s;
    weft__ofg_t *d = calloc(1, sizeof(*d));
    size_t *keep = calloc(n_in + 1, sizeof(*keep));
    if (!d || !keep) {
        free(d);
        free(keep);
        return weft_graph_set_error(g, WEFT_ENOMEM, "out of memory");
    }
    d->inline_expand = o->inline_expand;
    s = build_inner(g, d, n_in, inputs, n_out, outputs);
    if (s == WEFT_OK) s = weft__ofg_bind(g, d, n_in, o, keep);
    if (s == WEFT_OK) s = weft__ofg_set_destroy(g, d, o);
    if (s == WEFT_OK) s = weft__ofg_check_unused(g, d, inputs, keep, o);
    free(keep);
    if (s == WEFT_OK && o->grad_override)
        s = weft__ofg_op_in(d->g, o->grad_override, &d->grad_override);
    if (s == WEFT_OK) s = weft__ofg_plan_build(d, g);
    /* The declared destroy_map distinguishes otherwise equal graphs. */
    for (size_t k = 0; s == WEFT_OK && k < d->n_destroy; k++)
        d->hash = (d->hash ^ (d->destroy[k].output * 31u + d->destroy[k].input + 1)) *
                  0x100000001b3ull;
    if (s != WEFT_OK) {
        ofg_free(d);
        if (s != WEFT_ENOMEM || strstr(weft_graph_last_error(g), "out of memory")) return s;
        return weft_graph_set_error(g, s, "weft_ofg_create: out of memory"); /* the plan's */
    }
    weft__ofg_props_t props;
    memset(&props, 0, sizeof(props));
    s = intern(d, &props.d);
    if (s != WEFT_OK) return weft_graph_set_error(g, s, "weft_ofg_create: out of memory");
    if (o->name) snprintf(props.name, sizeof(props.name), "%s", o->name);
    return weft_op_create(g, &ofg_class, &props, out);
}

/* ---- accessors ------------------------------------------------------------------- */

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
    return weft__ofg_get(op) ? props_name(op) : NULL;
}

const weft_op_t *weft_ofg_grad_override(const weft_op_t *op)
{
    const weft__ofg_t *d = weft__ofg_get(op);
    return d ? d->grad_override : NULL;
}

void weft_ofg_destroy_map(const weft_op_t *op, const weft_op_alias_t **entries, size_t *n)
{
    const weft__ofg_t *d = weft__ofg_get(op);
    if (entries) *entries = d ? d->destroy : NULL;
    if (n) *n = d ? d->n_destroy : 0;
}
