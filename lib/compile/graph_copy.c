/* Copying the user's graph into the function's own context, so the user may
 * destroy theirs after compiling. Types, variables (names, traces, the
 * indestructible flag), constants and ops (props copied by value) are
 * recreated in the destination; apply nodes are rebuilt through make_node
 * with their original creation sites. Traversal is iterative, indexed by the
 * dense variable / apply ids of the source context. */
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"
#include "graph/graph_int.h"

typedef struct copy_ctx {
    weft_graph_t *src, *dst;
    weft_var_t **var_map;   /* by source var id */
    uint8_t *apply_state;   /* by source apply id: 0 new, 1 on stack, 2 done */
    const weft_op_t **op_old, **op_new; /* open addressing by pointer */
    size_t op_cap;
    bool has_destroyers;
} copy_ctx_t;

static weft_status_t copy_type(copy_ctx_t *c, const weft_type_t *t, const weft_type_t **out)
{
    switch (weft_type_kind(t)) {
    case WEFT_TYPE_NULL: return weft_type_null(c->dst, out);
    case WEFT_TYPE_DISCONNECTED: return weft_type_disconnected(c->dst, out);
    default: break;
    }
    int64_t shape[WEFT_MAX_NDIM];
    int nd = weft_type_ndim(t);
    for (int d = 0; d < nd; d++) shape[d] = weft_type_dim(t, d);
    return weft_type_tensor(c->dst, weft_type_dtype(t), nd, shape, out);
}

static weft_status_t copy_op(copy_ctx_t *c, const weft_op_t *op, const weft_op_t **out)
{
    size_t h = ((uintptr_t)op >> 4) * 0x9E3779B97F4A7C15ull % c->op_cap;
    while (c->op_old[h] && c->op_old[h] != op) h = (h + 1) % c->op_cap;
    if (c->op_old[h]) {
        *out = c->op_new[h];
        return WEFT_OK;
    }
    const weft_op_class_t *cls = weft_op_class(op);
    if (cls->size >= offsetof(weft_op_class_t, props_fini) + sizeof(cls->props_fini) &&
        cls->props_fini)
        return weft__fn_error(NULL, WEFT_ENOTIMPL,
                              "op %s owns memory in its props (props_fini): it cannot be "
                              "copied into the compiled function's context",
                              weft_op_name(op));
    weft_status_t st = weft_op_create(c->dst, cls, weft_op_props(op), out);
    if (st != WEFT_OK)
        return weft__fn_error(NULL, st, "copying op %s: %s", weft_op_name(op),
                              weft_graph_last_error(c->dst));
    c->op_old[h] = op;
    c->op_new[h] = *out;
    return WEFT_OK;
}

static weft_status_t copy_root(copy_ctx_t *c, weft_var_t *v)
{
    const char *file;
    int line;
    weft_var_trace(v, &file, &line);
    if (!weft_var_is_constant(v)) {
        char name[256];
        weft_var_print(v, name, sizeof name);
        return weft__fn_error(NULL, WEFT_EMISSING_INPUT,
                              "variable %s (created at %s:%d) is needed by an output but is "
                              "not among the inputs",
                              name, file, line);
    }
    const weft_type_t *t;
    const void *data;
    size_t nbytes;
    weft_status_t st = copy_type(c, weft_var_type(v), &t);
    if (st == WEFT_OK) st = weft_constant_data(v, &data, &nbytes);
    if (st == WEFT_OK)
        st = weft__got(c->dst, c->var_map[weft_var_id(v)] =
                                   weft_constant_create_at(c->dst, t, data, nbytes, file, line));
    if (st == WEFT_OK && weft_var_name(v)) st = weft_var_set_name(c->var_map[weft_var_id(v)],
                                                                 weft_var_name(v));
    return st == WEFT_OK ? WEFT_OK : weft__fn_error(NULL, st, "copying a constant failed");
}

/* Rebuilds apply a (whose inputs are all copied) in the destination. */
static weft_status_t copy_apply(copy_ctx_t *c, weft_apply_t *a)
{
    size_t n_in = weft_apply_n_inputs(a);
    weft_var_t **ins = malloc((n_in ? n_in : 1) * sizeof *ins);
    if (!ins) return weft__fn_error(NULL, WEFT_ENOMEM, "out of memory");
    for (size_t i = 0; i < n_in; i++) ins[i] = c->var_map[weft_var_id(weft_apply_input(a, i))];
    const weft_op_t *op;
    weft_status_t st = copy_op(c, weft_apply_op(a), &op);
    const char *file;
    int line;
    weft_apply_trace(a, &file, &line);
    weft_apply_t *na = NULL;
    if (st == WEFT_OK) {
        st = weft__got(c->dst, na = weft_apply_create_at(c->dst, op, n_in, ins, file, line));
        if (st != WEFT_OK)
            weft__fn_error(NULL, st, "rebuilding a node: %s", weft_graph_last_error(c->dst));
    }
    free(ins);
    if (st != WEFT_OK) return st;
    if (weft_op_is_destructive(op)) c->has_destroyers = true;
    for (size_t k = 0; k < weft_apply_n_outputs(a); k++) {
        weft_var_t *ov = weft_apply_output(a, k), *nv = weft_apply_output(na, k);
        c->var_map[weft_var_id(ov)] = nv;
        if (weft_var_name(ov) && weft_var_set_name(nv, weft_var_name(ov)) != WEFT_OK)
            return weft__fn_error(NULL, WEFT_ENOMEM, "out of memory");
        weft_var_set_indestructible(nv, weft_var_is_indestructible(ov));
    }
    return WEFT_OK;
}

/* Pushes the owner of v (if any, not yet visited); copies roots directly. */
static weft_status_t visit_var(copy_ctx_t *c, weft_var_t *v, weft_apply_t **stack, size_t *sp)
{
    if (weft_var_graph(v) != c->src)
        return weft__fn_error(NULL, WEFT_EFOREIGN, "a variable belongs to another context");
    if (c->var_map[weft_var_id(v)]) return WEFT_OK;
    weft_apply_t *a = weft_var_owner(v);
    if (!a) return copy_root(c, v);
    if (c->apply_state[weft_apply_id(a)] == 1) { /* on the stack: the path loops */
        weft_status_t st = weft__graph_cycle_error(c->src, a, "weft_function_compile");
        return weft__fn_error(NULL, st, "%s", weft_graph_last_error(c->src));
    }
    if (c->apply_state[weft_apply_id(a)]) return WEFT_OK; /* done */
    c->apply_state[weft_apply_id(a)] = 1;
    stack[(*sp)++] = a;
    return WEFT_OK;
}

/* Iterative post-order DFS from v: each apply is copied after its inputs. */
static weft_status_t copy_from(copy_ctx_t *c, weft_var_t *v, weft_apply_t **stack)
{
    size_t sp = 0;
    weft_status_t st = visit_var(c, v, stack, &sp);
    while (st == WEFT_OK && sp > 0) {
        weft_apply_t *a = stack[sp - 1];
        size_t before = sp;
        /* one input at a time: a pushed owner is then always on the current
         * path, so an apply is never copied before a sibling's subgraph */
        for (size_t i = 0; st == WEFT_OK && sp == before && i < weft_apply_n_inputs(a); i++)
            st = visit_var(c, weft_apply_input(a, i), stack, &sp);
        if (st != WEFT_OK || sp != before) continue;
        sp--;
        if (c->apply_state[weft_apply_id(a)] == 2) continue;
        c->apply_state[weft_apply_id(a)] = 2;
        st = copy_apply(c, a);
    }
    return st;
}

static weft_status_t copy_inputs(copy_ctx_t *c, size_t n_in, weft_var_t *const *inputs,
                                 weft_var_t **new_in)
{
    for (size_t k = 0; k < n_in; k++) {
        weft_var_t *v = inputs[k];
        if (weft_var_graph(v) != c->src)
            return weft__fn_error(NULL, WEFT_EFOREIGN, "input %zu belongs to another context", k);
        char name[256];
        weft_var_print(v, name, sizeof name);
        if (weft_var_owner(v) || weft_var_is_constant(v))
            return weft__fn_error(NULL, WEFT_EINVAL,
                                  "input %zu (%s) is not a root variable (it has an owner or "
                                  "is a constant)", k, name);
        if (c->var_map[weft_var_id(v)])
            return weft__fn_error(NULL, WEFT_EINVAL, "input %zu (%s) is listed twice", k, name);
        const char *file;
        int line;
        weft_var_trace(v, &file, &line);
        const weft_type_t *t;
        weft_status_t st = copy_type(c, weft_var_type(v), &t);
        if (st == WEFT_OK)
            st = weft__got(c->dst,
                           new_in[k] = weft_var_create_at(c->dst, t, weft_var_name(v), file, line));
        if (st != WEFT_OK) return weft__fn_error(NULL, st, "copying input %zu failed", k);
        weft_var_set_indestructible(new_in[k], weft_var_is_indestructible(v));
        c->var_map[weft_var_id(v)] = new_in[k];
    }
    return WEFT_OK;
}

weft_status_t weft__compile_copy_graph(weft_graph_t *dst, size_t n_in, weft_var_t *const *inputs,
                                       size_t n_out, weft_var_t *const *outputs,
                                       weft_var_t **new_in, weft_var_t **new_out,
                                       bool *has_destroyers)
{
    copy_ctx_t c = {0};
    c.src = weft_var_graph(n_out ? outputs[0] : inputs[0]);
    c.dst = dst;
    size_t nv = weft_graph_n_vars(c.src), na = weft_graph_n_applies(c.src);
    c.op_cap = 2 * na + 16;
    c.var_map = calloc(nv + 1, sizeof *c.var_map);
    c.apply_state = calloc(na + 1, 1);
    c.op_old = calloc(c.op_cap, sizeof *c.op_old);
    c.op_new = calloc(c.op_cap, sizeof *c.op_new);
    weft_apply_t **stack = malloc((na + 1) * sizeof *stack);
    weft_status_t st = WEFT_OK;
    if (!c.var_map || !c.apply_state || !c.op_old || !c.op_new || !stack)
        st = weft__fn_error(NULL, WEFT_ENOMEM, "out of memory copying the graph");
    if (st == WEFT_OK) st = copy_inputs(&c, n_in, inputs, new_in);
    for (size_t k = 0; st == WEFT_OK && k < n_out; k++) {
        st = copy_from(&c, outputs[k], stack);
        if (st == WEFT_OK) new_out[k] = c.var_map[weft_var_id(outputs[k])];
    }
    *has_destroyers = c.has_destroyers;
    free(stack);
    free(c.op_new);
    free(c.op_old);
    free(c.apply_state);
    free(c.var_map);
    return st;
}
