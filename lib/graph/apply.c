/* Apply nodes: construction through the op's make_node (with argument and
 * type checks and the creation trace), the raw constructors the fgraph and
 * cloning use, Output(k) pseudo-nodes, accessors, clone_with_new_inputs and
 * the printed / "describe" forms used in error messages. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "graph/graph_int.h"

weft_apply_t *weft__apply_new(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                              weft_var_t *const *inputs, size_t n_out,
                              const weft_type_t *const *out_types, const char *file, int line)
{
    /* One arena block for the node, its input and its output pointer arrays. */
    size_t bytes;
    if (!weft__mul_size(n_in + n_out, sizeof(weft_var_t *), &bytes) ||
        bytes > SIZE_MAX - sizeof(weft_apply_t))
        return NULL;
    weft_apply_t *a = weft__arena_alloc(&g->arena, sizeof(weft_apply_t) + bytes);
    if (!a) return NULL;
    memset(a, 0, sizeof(*a));
    a->inputs = (weft_var_t **)(a + 1);
    a->outputs = a->inputs + n_in;
    if (n_in) memcpy(a->inputs, inputs, n_in * sizeof(*inputs));
    a->op = op;
    a->g = g;
    a->file = file;
    a->line = line;
    a->n_in = (uint32_t)n_in;
    a->n_out = (uint32_t)n_out;
    a->id = g->n_applies++;
    for (size_t k = 0; k < n_out; k++) {
        weft_var_t *v = weft__var_new(g, out_types[k], NULL, file, line);
        if (!v) return NULL;
        v->owner = a;
        v->index = (uint32_t)k;
        a->outputs[k] = v;
    }
    return a;
}

weft_apply_t *weft__apply_new_output_slot(weft_graph_t *g, weft_fgraph_t *fg, size_t k,
                                          weft_var_t *input)
{
    weft_apply_t *a = weft__apply_new(g, g->output_op, 1, &input, 0, NULL, "<output slot>", 0);
    if (!a) return NULL;
    a->slot_fg = fg;
    a->slot = k;
    return a;
}

weft_apply_t *weft__apply_clone_raw(weft_graph_t *g, const weft_apply_t *a,
                                    weft_var_t *const *inputs)
{
    const weft_type_t *types[WEFT_OP_MAX_OUTPUTS];
    for (uint32_t k = 0; k < a->n_out; k++) types[k] = a->outputs[k]->type;
    weft_apply_t *c = weft__apply_new(g, a->op, a->n_in, inputs, a->n_out, types, a->file, a->line);
    if (!c) return NULL;
    for (uint32_t k = 0; k < a->n_out; k++) {
        c->outputs[k]->name = a->outputs[k]->name; /* arena strings: shared safely */
        c->outputs[k]->file = a->outputs[k]->file;
        c->outputs[k]->line = a->outputs[k]->line;
    }
    return c;
}

/* Checks op and inputs belong to g; the message names the op, input and site. */
static weft_status_t check_apply_args(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                      weft_var_t *const *inputs, const char *file, int line)
{
    if (op->g != g)
        return weft__graph_err(g, WEFT_EFOREIGN,
                               "apply of %s at %s:%d: the op belongs to another graph context",
                               op->cls->name, file, line);
    for (size_t i = 0; i < n_in; i++) {
        if (!inputs[i])
            return weft__graph_err(g, WEFT_EINVAL, "apply of %s at %s:%d: input %zu is NULL",
                                   op->cls->name, file, line, i);
        if (inputs[i]->g != g) {
            char vb[512];
            weft__var_describe(inputs[i], vb, sizeof(vb));
            return weft__graph_err(g, WEFT_EFOREIGN,
                                   "apply of %s at %s:%d: input %zu, %s, belongs to another "
                                   "graph context",
                                   op->cls->name, file, line, i, vb);
        }
    }
    return WEFT_OK;
}

/* Runs make_node and validates what it returns. */
static weft_status_t run_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                   weft_var_t *const *inputs, const char *file, int line,
                                   size_t *n_out, const weft_type_t **types)
{
    *n_out = 0;
    g->err[0] = '\0';
    weft_status_t s = op->cls->make_node(g, op, n_in, inputs, n_out, types);
    if (s != WEFT_OK) {
        char msg[WEFT__ERR_CAP];
        snprintf(msg, sizeof(msg), "%s", g->err[0] ? g->err : weft_status_str(s));
        return weft__graph_err(g, s, "apply of %s at %s:%d: %s", op->cls->name, file, line, msg);
    }
    if (*n_out < 1 || *n_out > WEFT_OP_MAX_OUTPUTS)
        return weft__graph_err(g, WEFT_EINVAL, "apply of %s at %s:%d: make_node gave %zu outputs",
                               op->cls->name, file, line, *n_out);
    for (size_t k = 0; k < *n_out; k++) {
        if (!types[k] || types[k]->g != g)
            return weft__graph_err(g, types[k] ? WEFT_EFOREIGN : WEFT_EINVAL,
                                   "apply of %s at %s:%d: make_node gave output %zu a %s type",
                                   op->cls->name, file, line, k, types[k] ? "foreign" : "NULL");
    }
    return WEFT_OK;
}

static weft_status_t apply_create(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                  weft_var_t *const *inputs, const char *file, int line,
                                  weft_apply_t **out)
{
    *out = NULL;
    if (!op || (n_in && !inputs))
        return weft__graph_err(g, WEFT_EINVAL, "weft_apply_create at %s:%d: NULL %s",
                               file ? file : "?", line, op ? "inputs array" : "op");
    if (!file) file = "?";
    if (n_in > UINT32_MAX)
        return weft__graph_err(g, WEFT_EINVAL, "apply of %s at %s:%d: %zu inputs", op->cls->name,
                               file, line, n_in);
    weft_status_t s = check_apply_args(g, op, n_in, inputs, file, line);
    if (s != WEFT_OK) return s;
    size_t n_out;
    const weft_type_t *types[WEFT_OP_MAX_OUTPUTS];
    s = run_make_node(g, op, n_in, inputs, file, line, &n_out, types);
    if (s != WEFT_OK) return s;
    const char *f = weft__trace_file(g, file);
    weft_apply_t *a = f ? weft__apply_new(g, op, n_in, inputs, n_out, types, f, line) : NULL;
    if (!a) return weft__graph_err(g, WEFT_ENOMEM, "apply of %s: out of memory", op->cls->name);
    *out = a;
    return WEFT_OK;
}

weft_apply_t *weft_apply_create_at(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                   weft_var_t *const *inputs, const char *file, int line)
{
    weft_apply_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t s = g ? apply_create(g, op, n_in, inputs, file, line, &out) : WEFT_EINVAL;
    return weft__ctor_end(g, s, out, "weft_apply_create", file, line);
}

static weft_status_t op_call(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                             weft_var_t *const *inputs, const char *file, int line,
                             weft_var_t **out)
{
    weft_apply_t *a;
    weft_status_t s = apply_create(g, op, n_in, inputs, file, line, &a);
    if (s != WEFT_OK) return s;
    /* The node stays in the context (owned by g) even if it has no default. */
    s = weft_apply_default_output(a, out);
    if (s != WEFT_OK)
        return weft__graph_err(g, s, "call of %s at %s:%d: %u outputs and no default output",
                               op->cls->name, file ? file : "?", line, a->n_out);
    return WEFT_OK;
}

weft_var_t *weft_op_call_at(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                            weft_var_t *const *inputs, const char *file, int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t s = g ? op_call(g, op, n_in, inputs, file, line, &out) : WEFT_EINVAL;
    return weft__ctor_end(g, s, out, "weft_op_call", file, line);
}

const weft_op_t *weft_apply_op(const weft_apply_t *a)
{
    return a ? a->op : NULL;
}

size_t weft_apply_n_inputs(const weft_apply_t *a)
{
    return a ? a->n_in : 0;
}

weft_var_t *weft_apply_input(const weft_apply_t *a, size_t i)
{
    return a && i < a->n_in ? a->inputs[i] : NULL;
}

size_t weft_apply_n_outputs(const weft_apply_t *a)
{
    return a ? a->n_out : 0;
}

weft_var_t *weft_apply_output(const weft_apply_t *a, size_t i)
{
    return a && i < a->n_out ? a->outputs[i] : NULL;
}

uint64_t weft_apply_id(const weft_apply_t *a)
{
    return a ? a->id : 0;
}

weft_graph_t *weft_apply_graph(const weft_apply_t *a)
{
    return a ? a->g : NULL;
}

void weft_apply_trace(const weft_apply_t *a, const char **file, int *line)
{
    if (file) *file = a ? a->file : NULL;
    if (line) *line = a ? a->line : 0;
}

weft_status_t weft_apply_default_output(const weft_apply_t *a, weft_var_t **out)
{
    if (!a || !out) return WEFT_EINVAL;
    *out = NULL;
    int d = a->op->default_output;
    if (d >= 0 && (uint32_t)d < a->n_out) {
        *out = a->outputs[d];
        return WEFT_OK;
    }
    if (a->n_out != 1) return WEFT_EINVAL;
    *out = a->outputs[0];
    return WEFT_OK;
}

bool weft_apply_is_output_slot(const weft_apply_t *a)
{
    return a && a->slot_fg != NULL;
}

size_t weft_apply_output_slot(const weft_apply_t *a)
{
    return a && a->slot_fg ? a->slot : 0;
}

/* Strict check: old input type must accept the new one; names both on error. */
static weft_status_t check_new_input(weft_graph_t *g, const weft_apply_t *a, size_t i,
                                     const weft_var_t *nv, bool strict, bool *differs)
{
    if (!nv) return weft__graph_err(g, WEFT_EINVAL, "clone_with_new_inputs: input %zu is NULL", i);
    if (nv->g != g) {
        char ab[256];
        weft_apply_describe(a, ab, sizeof(ab));
        return weft__graph_err(g, WEFT_EFOREIGN,
                               "%s: new input %zu belongs to another graph context", ab, i);
    }
    const weft_type_t *ot = a->inputs[i]->type;
    if (!weft_type_equal(ot, nv->type)) *differs = true;
    if (strict && !weft_type_is_super(ot, nv->type)) {
        char ab[256], tb1[128], tb2[128], vb[512];
        weft_apply_describe(a, ab, sizeof(ab));
        weft_type_print(ot, tb1, sizeof(tb1));
        weft_type_print(nv->type, tb2, sizeof(tb2));
        weft__var_describe(nv, vb, sizeof(vb));
        return weft__graph_err(g, WEFT_ETYPE, "%s: input %zu type %s cannot take %s", ab, i, tb1,
                               vb);
    }
    return WEFT_OK;
}

weft_status_t weft_apply_clone_with_new_inputs(weft_graph_t *g, const weft_apply_t *a, size_t n_in,
                                               weft_var_t *const *inputs, bool strict,
                                               weft_apply_t **out)
{
    if (!g || !a || !out || (n_in && !inputs)) return WEFT_EINVAL;
    *out = NULL;
    if (a->g != g)
        return weft__graph_err(g, WEFT_EFOREIGN, "clone_with_new_inputs: node of another context");
    if (a->slot_fg)
        return weft__graph_err(g, WEFT_EINVAL, "clone_with_new_inputs: Output pseudo-node");
    if (n_in != a->n_in) {
        char ab[256];
        weft_apply_describe(a, ab, sizeof(ab));
        return weft__graph_err(g, WEFT_EINVAL, "%s: clone_with_new_inputs got %zu inputs, not %u",
                               ab, n_in, a->n_in);
    }
    bool differs = false;
    for (size_t i = 0; i < n_in; i++) {
        weft_status_t s = check_new_input(g, a, i, inputs[i], strict, &differs);
        if (s != WEFT_OK) return s;
    }
    if (differs) /* output types may change: rebuild through make_node */
        return apply_create(g, a->op, n_in, inputs, a->file, a->line, out);
    weft_apply_t *c = weft__apply_clone_raw(g, a, inputs);
    if (!c) return weft__graph_err(g, WEFT_ENOMEM, "clone_with_new_inputs: out of memory");
    *out = c;
    return WEFT_OK;
}

int weft_apply_print(const weft_apply_t *a, char *buf, size_t cap)
{
    if (!a) return snprintf(buf, cap, "<null apply>");
    char tmp[1024];
    size_t n = (size_t)weft_op_print(a->op, tmp, sizeof(tmp));
    if (a->slot_fg && n < sizeof(tmp))
        n += (size_t)snprintf(tmp + n, sizeof(tmp) - n, "%zu", a->slot);
    if (n < sizeof(tmp)) n += (size_t)snprintf(tmp + n, sizeof(tmp) - n, "(");
    for (uint32_t i = 0; i < a->n_in && n < sizeof(tmp); i++) {
        if (i) n += (size_t)snprintf(tmp + n, sizeof(tmp) - n, ", ");
        if (n < sizeof(tmp)) n += (size_t)weft_var_print(a->inputs[i], tmp + n, sizeof(tmp) - n);
    }
    if (n < sizeof(tmp)) snprintf(tmp + n, sizeof(tmp) - n, ")");
    return snprintf(buf, cap, "%s", tmp);
}

int weft_apply_describe(const weft_apply_t *a, char *buf, size_t cap)
{
    if (!a) return snprintf(buf, cap, "<null apply>");
    char ob[256];
    weft_op_print(a->op, ob, sizeof(ob));
    if (a->slot_fg)
        return snprintf(buf, cap, "apply %" PRIu64 " (Output(%zu) pseudo-node)", a->id, a->slot);
    return snprintf(buf, cap, "apply %" PRIu64 " (%s, built at %s:%d)", a->id, ob, a->file,
                    a->line);
}
