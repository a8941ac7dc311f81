/* Expansion of an OpFromGraph node into a copy of its inner graph (used by
 * the inline rewrite and by the derived gradient) and the grad hook: the
 * vector-Jacobian product of the inner graph wrapped as another OpFromGraph,
 * or the user's override applied to (inputs, output gradients). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/ctor_int.h"
#include "ofg_int.h"
#include "weft/elemwise.h"
#include "weft/grad.h"
#include "weft/reduce.h"

/* ---- expansion -------------------------------------------------------------- */

weft_status_t weft_ofg_expand(weft_graph_t *g, const weft_apply_t *node, weft_var_t **outputs)
{
    if (!g || !node || !outputs) return WEFT_EINVAL;
    const weft__ofg_t *d = weft__ofg_get(weft_apply_op(node));
    if (!d)
        return weft_graph_set_error(g, WEFT_EINVAL, "weft_ofg_expand: op %s is not an OpFromGraph",
                                    weft_op_name(weft_apply_op(node)));
    if (weft_apply_graph(node) != g)
        return weft_graph_set_error(g, WEFT_EFOREIGN, "weft_ofg_expand: node of another context");
    weft_var_t **in = calloc(d->n_in + 1, sizeof(*in));
    if (!in) return weft_graph_set_error(g, WEFT_ENOMEM, "out of memory");
    for (size_t i = 0; i < d->n_in; i++) in[i] = weft_apply_input(node, i);
    weft__kept_error_t saved; /* a status-returning call keeps no error (weft/graph.h) */
    weft__graph_error_save(g, &saved);
    weft_status_t s = weft__ofg_copy_inner(d, g, in, outputs);
    weft__graph_error_restore(g, &saved);
    free(in);
    return s;
}

/* ---- gradient ---------------------------------------------------------------- */

static bool is_float(const weft_var_t *v)
{
    const weft_type_t *t = weft_var_type(v);
    weft_dtype_t dt = weft_type_dtype(t);
    return weft_type_kind(t) == WEFT_TYPE_TENSOR && weft_dtype_kind(dt) == WEFT_KIND_FLOAT;
}

/* The override applied to (inputs, output gradients; zeros where NULL). */
static weft_status_t grad_override(weft_graph_t *g, const weft__ofg_t *d, const weft_apply_t *node,
                                   weft_var_t *const *gz, weft_var_t **input_grads)
{
    size_t n = d->n_in + d->n_out;
    weft_var_t **args = calloc(n, sizeof(*args));
    if (!args) return weft_graph_set_error(g, WEFT_ENOMEM, "out of memory");
    weft_status_t s = WEFT_OK;
    for (size_t i = 0; i < d->n_in; i++) args[i] = weft_apply_input(node, i);
    for (size_t k = 0; k < d->n_out && s == WEFT_OK; k++) {
        args[d->n_in + k] = gz[k];
        if (!gz[k])
            s = weft__got(g, args[d->n_in + k] = weft_zeros_like(g, weft_apply_output(node, k)));
    }
    weft_apply_t *a = NULL;
    const weft_op_t *ovr = NULL;
    if (s == WEFT_OK) s = weft__ofg_op_in(g, d->grad_override, &ovr);
    if (s == WEFT_OK) s = weft__got(g, a = weft_apply_create(g, ovr, n, args));
    if (s == WEFT_OK && weft_apply_n_outputs(a) != d->n_in)
        s = weft_graph_set_error(g, WEFT_EINVAL,
                                 "OpFromGraph: grad_override returned %zu outputs, expected %zu",
                                 weft_apply_n_outputs(a), d->n_in);
    for (size_t i = 0; i < d->n_in && s == WEFT_OK; i++) input_grads[i] = weft_apply_output(a, i);
    free(args);
    return s;
}

/* Work arrays of the derived gradient. */
typedef struct vjp {
    weft_var_t **x;    /* fresh inner inputs (n_in) then gradient placeholders (n_out) */
    weft_var_t **outs; /* the inner graph copied onto x (n_out) */
    weft_var_t **wrt;  /* inputs that get a gradient */
    size_t *wrt_idx;
    weft_var_t **grads; /* d cost / d wrt */
    size_t n_wrt, n_gz;
} vjp_t;

static weft_status_t vjp_placeholders(weft_graph_t *g, const weft__ofg_t *d, weft_var_t *const *gz,
                                      vjp_t *v)
{
    weft_status_t s = WEFT_OK;
    for (size_t i = 0; i < d->n_in && s == WEFT_OK; i++) {
        const weft_type_t *t = NULL;
        s = weft__ofg_type_in(g, weft_var_type(d->in[i]), &t);
        if (s == WEFT_OK)
            s = weft__got(g, v->x[i] = weft_var_create(g, t, weft_var_name(d->in[i])));
    }
    for (size_t k = 0; k < d->n_out && s == WEFT_OK; k++) {
        if (!gz[k] || !is_float(d->out[k])) continue;
        s = weft__got(g, v->x[d->n_in + v->n_gz] = weft_var_create(g, weft_var_type(gz[k]), "gz"));
        v->n_gz++;
    }
    return s;
}

/* cost = sum_k sum(out_k * gz_k) over the float outputs receiving a gradient. */
static weft_status_t vjp_cost(weft_graph_t *g, const weft__ofg_t *d, weft_var_t *const *gz,
                              const vjp_t *v, weft_var_t **cost)
{
    weft_status_t s = WEFT_OK;
    size_t m = 0;
    *cost = NULL;
    for (size_t k = 0; k < d->n_out && s == WEFT_OK; k++) {
        if (!gz[k] || !is_float(d->out[k])) continue;
        weft_var_t *prod = NULL, *term = NULL;
        s = weft__got(g, prod = weft_mul(g, v->outs[k], v->x[d->n_in + m++]));
        if (s == WEFT_OK) s = weft__got(g, term = weft_sum(g, prod, 0, NULL, false));
        if (s == WEFT_OK)
            s = *cost ? weft__got(g, *cost = weft_add(g, *cost, term)) : (*cost = term, WEFT_OK);
    }
    return s;
}

static void vjp_wrt(const weft__ofg_t *d, weft_var_t *const *gz, vjp_t *v)
{
    for (size_t i = 0; i < d->n_in; i++) {
        bool conn = false;
        for (size_t k = 0; k < d->n_out; k++)
            conn = conn || (gz[k] && is_float(d->out[k]) && d->conn[i * d->n_out + k]);
        if (!conn || !is_float(d->in[i])) continue;
        v->wrt_idx[v->n_wrt] = i;
        v->wrt[v->n_wrt++] = v->x[i];
    }
}

/* Applies the gradient OpFromGraph to the node's inputs and the output
 * gradients that exist. */
static weft_status_t vjp_apply(weft_graph_t *g, const weft__ofg_t *d, const weft_apply_t *node,
                               weft_var_t *const *gz, vjp_t *v, weft_var_t **input_grads)
{
    char name[WEFT__OFG_NAME_MAX];
    const char *base = weft_ofg_name(weft_apply_op(node));
    snprintf(name, sizeof(name), "grad_%s", base ? base : "OpFromGraph");
    weft_ofg_options_t o = WEFT_OFG_OPTIONS_INIT;
    o.inline_expand = d->inline_expand;
    o.name = name;
    const weft_op_t *op = NULL;
    size_t n_args = d->n_in + v->n_gz;
    weft_status_t s = weft_ofg_create(g, n_args, v->x, v->n_wrt, v->grads, &o, &op);
    weft_var_t **args = v->outs; /* reuse: n_in + n_out >= n_args entries */
    for (size_t i = 0; i < d->n_in; i++) args[i] = weft_apply_input(node, i);
    for (size_t k = 0, m = 0; k < d->n_out; k++)
        if (gz[k] && is_float(d->out[k])) args[d->n_in + m++] = gz[k];
    weft_apply_t *a = NULL;
    if (s == WEFT_OK) s = weft__got(g, a = weft_apply_create(g, op, n_args, args));
    for (size_t w = 0; w < v->n_wrt && s == WEFT_OK; w++)
        input_grads[v->wrt_idx[w]] = weft_apply_output(a, w);
    return s;
}

static weft_status_t grad_derived(weft_graph_t *g, const weft__ofg_t *d, const weft_apply_t *node,
                                  weft_var_t *const *gz, weft_var_t **input_grads)
{
    size_t n = d->n_in + d->n_out;
    vjp_t v = {calloc(n, sizeof(weft_var_t *)),
               calloc(n, sizeof(weft_var_t *)),
               calloc(n, sizeof(weft_var_t *)),
               calloc(n, sizeof(size_t)),
               calloc(n, sizeof(weft_var_t *)),
               0,
               0};
    weft_status_t s = v.x && v.outs && v.wrt && v.wrt_idx && v.grads ? WEFT_OK : WEFT_ENOMEM;
    weft_var_t *cost = NULL;
    if (s == WEFT_OK) s = vjp_placeholders(g, d, gz, &v);
    if (s == WEFT_OK) s = weft__ofg_copy_inner(d, g, v.x, v.outs);
    if (s == WEFT_OK) s = vjp_cost(g, d, gz, &v, &cost);
    if (s == WEFT_OK && cost) vjp_wrt(d, gz, &v);
    if (s == WEFT_OK && v.n_wrt > 0) {
        weft_grad_options_t go = WEFT_GRAD_OPTIONS_INIT;
        go.disconnected = WEFT_GRAD_MISSING_ZERO;
        s = weft__got(g, weft_grads(g, cost, v.n_wrt, v.wrt, &go, v.grads));
        if (s == WEFT_OK) s = vjp_apply(g, d, node, gz, &v, input_grads);
    }
    free(v.x);
    free(v.outs);
    free(v.wrt);
    free(v.wrt_idx);
    free(v.grads);
    return s == WEFT_ENOMEM ? weft_graph_set_error(g, s, "OpFromGraph grad: out of memory") : s;
}

weft_status_t weft__ofg_grad(weft_graph_t *g, const weft_apply_t *node,
                             weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    const weft__ofg_t *d = weft__ofg_get(weft_apply_op(node));
    if (d->grad_override) return grad_override(g, d, node, output_grads, input_grads);
    return grad_derived(g, d, node, output_grads, input_grads);
}
