/* Saving a graph to the JSON graph format: a depth-first topological walk
 * from the outputs and update values that numbers every variable, writes the
 * constants with their data and each node with its op's props, then the text
 * layout with one entry per line. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dtype_list.h"
#include "base/vec.h"
#include "graph/graph_int.h"
#include "graph/site.h"
#include "io_int.h"
#include "weft/shared.h"

typedef struct io_save {
    weft_graph_t *g;
    int64_t *ids;   /* by weft_var_id: the JSON id, -1 when not numbered yet */
    uint8_t *state; /* by weft_apply_id: 0 new, 1 open, 2 written */
    size_t n_vars, n_applies;
    int64_t next_id;
    json_t *root, *constants, *nodes, *shared;
} io_save_t;

/* ---- entries ----------------------------------------------------------------- */

static json_t *shape_json(const weft_type_t *t)
{
    json_t *a = json_array();
    for (int i = 0; a && i < weft_type_ndim(t); i++) {
        int64_t d = weft_type_dim(t, i);
        json_array_append_new(a, d == WEFT_DIM_UNKNOWN ? json_null() : json_integer(d));
    }
    return a;
}

/* Integers as JSON integers, except uint64 values above INT64_MAX, which a
 * JSON integer of the reader (int64) cannot hold: decimal strings. Floats as
 * JSON numbers (float16 and float32 exactly, as doubles), NaN and the
 * infinities as the strings "nan", "inf", "-inf" (docs/graph-format.md). */
#define VALUE_SINT(A_, B_, T, UT, sn, D) \
    case D: return json_integer((json_int_t)((const T *)data)[i]);
#define VALUE_FLOAT(A_, B_, T, sn, D) \
    case D: v = (double)((const T *)data)[i]; break;

static json_t *value_json(weft_dtype_t dt, const void *data, size_t i)
{
    double v = 0.0;
    switch (dt) {
    case WEFT_BOOL: return json_boolean(((const uint8_t *)data)[i] != 0);
    WEFT__SINT_DTYPES(VALUE_SINT, ~, ~)
    case WEFT_UINT8: return json_integer(((const uint8_t *)data)[i]);
    case WEFT_UINT16: return json_integer(((const uint16_t *)data)[i]);
    case WEFT_UINT32: return json_integer(((const uint32_t *)data)[i]);
    case WEFT_UINT64: {
        uint64_t u = ((const uint64_t *)data)[i];
        if (u <= (uint64_t)INT64_MAX) return json_integer((json_int_t)u);
        char buf[24];
        snprintf(buf, sizeof buf, "%" PRIu64, u);
        return json_string(buf);
    }
    WEFT__FLOAT_DTYPES(VALUE_FLOAT, ~, ~)
    VALUE_FLOAT(~, ~, weft__f16, f16, WEFT_FLOAT16)
    case WEFT_COMPLEX64: /* [re, im], each part as a float32 element */
        return json_pack("[oo]", value_json(WEFT_FLOAT32, data, 2 * i),
                         value_json(WEFT_FLOAT32, data, 2 * i + 1));
    case WEFT_COMPLEX128:
        return json_pack("[oo]", value_json(WEFT_FLOAT64, data, 2 * i),
                         value_json(WEFT_FLOAT64, data, 2 * i + 1));
    default: return NULL;
    }
    if (isnan(v)) return json_string("nan");
    if (isinf(v)) return json_string(v > 0 ? "inf" : "-inf");
    return json_real(v);
}

static json_t *var_entry(const weft_var_t *v, int64_t id)
{
    const weft_type_t *t = weft_var_type(v);
    json_t *e = json_object();
    json_object_set_new(e, "id", json_integer(id));
    if (weft_var_name(v)) json_object_set_new(e, "name", json_string(weft_var_name(v)));
    json_object_set_new(e, "dtype", json_string(weft_dtype_name(weft_type_dtype(t))));
    json_object_set_new(e, "shape", shape_json(t));
    return e;
}

/* Appends v's entry with its n elements (C order) to list and numbers v. */
static weft_status_t add_data_entry(io_save_t *st, const weft_var_t *v, const void *data,
                                    size_t n, json_t *list)
{
    weft_dtype_t dt = weft_type_dtype(weft_var_type(v));
    json_t *e = var_entry(v, st->next_id), *arr = json_array();
    for (size_t i = 0; arr && i < n; i++)
        if (json_array_append_new(arr, value_json(dt, data, i)) != 0) {
            json_decref(arr);
            arr = NULL;
        }
    if (!e || !arr || json_object_set_new(e, "data", arr) != 0 ||
        json_array_append_new(list, e) != 0)
        return weft_graph_set_error(st->g, WEFT_ENOMEM, "weft_graph_io_save: out of memory");
    st->ids[weft_var_id(v)] = st->next_id++;
    return WEFT_OK;
}

static weft_status_t add_constant(io_save_t *st, const weft_var_t *c)
{
    const void *data;
    size_t nbytes;
    weft_constant_data(c, &data, &nbytes);
    size_t n = nbytes / weft_dtype_size(weft_type_dtype(weft_var_type(c)));
    return add_data_entry(st, c, data, n, st->constants);
}

/* A shared variable's current value, in C order. */
static weft_status_t add_shared(io_save_t *st, const weft_var_t *v)
{
    weft_tensor_t *value, *c = NULL;
    if (weft_shared_get(v, &value) != WEFT_OK)
        return weft_graph_set_error(st->g, WEFT_EINVAL, "weft_graph_io_save: %s",
                                    weft_shared_last_error());
    weft_status_t s = weft_tensor_contiguous(value, &c); /* an update may leave a view */
    weft_tensor_release(value);
    if (s != WEFT_OK)
        return weft_graph_set_error(st->g, s, "weft_graph_io_save: out of memory");
    s = add_data_entry(st, v, weft_tensor_data(c), weft_tensor_size(c), st->shared);
    weft_tensor_release(c);
    return s;
}

/* Numbers a root the walk meets: inputs are numbered already, constants and
 * shared variables are added, anything else is an undeclared input. */
static weft_status_t visit_root(io_save_t *st, const weft_var_t *v)
{
    if (st->ids[weft_var_id(v)] >= 0) return WEFT_OK;
    if (weft_var_is_constant(v)) return add_constant(st, v);
    if (weft_var_is_shared(v)) return add_shared(st, v);
    char vb[96], sb[WEFT__SITE_CAP];
    weft_var_print(v, vb, sizeof(vb));
    const char *file;
    int line;
    weft_var_trace(v, &file, &line);
    return weft_graph_set_error(st->g, WEFT_EMISSING_INPUT,
                                "weft_graph_io_save: variable %s (created at %s) is a root "
                                "but not among the inputs",
                                vb, weft__site_str(sb, sizeof sb, file, line));
}

/* ---- ops -------------------------------------------------------------------------- */

weft_status_t weft__io_save_op(weft_graph_t *g, const weft_op_t *op, json_t **out)
{
    const weft_op_class_t *cls = weft_op_class(op);
    weft_status_t (*to)(const weft_op_t *, weft_json_props_t *) = WEFT__IO_HOOK(cls, props_to_json);
    json_t *e = json_object();
    if (!e || json_object_set_new(e, "op", json_string(cls->name)) != 0) {
        json_decref(e);
        return weft_graph_set_error(g, WEFT_ENOMEM, "weft_graph_io_save: out of memory");
    }
    if (!to && cls->props_size > 0) {
        json_decref(e);
        return weft_graph_set_error(g, WEFT_ENOTIMPL,
                                    "weft_graph_io_save: op class %s has props but no "
                                    "props_to_json hook",
                                    cls->name);
    }
    if (to) {
        weft_json_props_t p = {{&weft__json_props_vt}, json_object(), g, "", NULL, NULL};
        snprintf(p.path, sizeof(p.path), "op %s props", cls->name);
        weft_status_t s = p.obj ? to(op, &p) : WEFT_ENOMEM;
        if (s == WEFT_OK)
            json_object_set_new(e, "props", p.obj);
        else
            json_decref(p.obj);
        if (s != WEFT_OK) {
            json_decref(e);
            return s;
        }
    }
    *out = e;
    return WEFT_OK;
}

static json_t *id_list(const io_save_t *st, size_t n,
                       weft_var_t *(*get)(const weft_apply_t *, size_t), const weft_apply_t *a)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < n; i++)
        json_array_append_new(arr, json_integer(st->ids[weft_var_id(get(a, i))]));
    return arr;
}

static weft_status_t write_node(io_save_t *st, const weft_apply_t *a)
{
    json_t *e = NULL;
    weft_status_t s = weft__io_save_op(st->g, weft_apply_op(a), &e);
    if (s != WEFT_OK) return s;
    size_t n_out = weft_apply_n_outputs(a);
    bool named = false;
    for (size_t o = 0; o < n_out; o++) {
        st->ids[weft_var_id(weft_apply_output(a, o))] = st->next_id++;
        named = named || weft_var_name(weft_apply_output(a, o)) != NULL;
    }
    json_object_set_new(e, "inputs", id_list(st, weft_apply_n_inputs(a), weft_apply_input, a));
    json_object_set_new(e, "outputs", id_list(st, n_out, weft_apply_output, a));
    if (named) {
        json_t *names = json_array();
        for (size_t o = 0; o < n_out; o++) {
            const char *nm = weft_var_name(weft_apply_output(a, o));
            json_array_append_new(names, nm ? json_string(nm) : json_null());
        }
        json_object_set_new(e, "names", names);
    }
    if (json_array_append_new(st->nodes, e) != 0)
        return weft_graph_set_error(st->g, WEFT_ENOMEM, "weft_graph_io_save: out of memory");
    return WEFT_OK;
}

/* ---- walk ------------------------------------------------------------------------ */

typedef struct frame {
    const weft_apply_t *a;
    size_t next; /* next input to visit */
} frame_t;

/* Post-order DFS from v: each node is written after the nodes producing its
 * inputs, the inputs visited in order (deterministic numbering). */
static weft_status_t walk(io_save_t *st, const weft_var_t *v)
{
    if (!weft_var_owner(v)) return visit_root(st, v);
    size_t cap = 0, sp = 0;
    frame_t *stack = NULL;
    if (!weft__vec_grow(NULL, (void **)&stack, &cap, 64, sizeof(*stack)))
        return weft_graph_set_error(st->g, WEFT_ENOMEM, "out of memory");
    weft_status_t s = WEFT_OK;
    const weft_apply_t *a0 = weft_var_owner(v);
    if (st->state[weft_apply_id(a0)] == 0) {
        stack[sp++] = (frame_t){a0, 0};
        st->state[weft_apply_id(a0)] = 1;
    }
    while (sp > 0 && s == WEFT_OK) {
        frame_t *f = &stack[sp - 1];
        if (f->next == weft_apply_n_inputs(f->a)) {
            s = write_node(st, f->a);
            st->state[weft_apply_id(f->a)] = 2;
            sp--;
            continue;
        }
        const weft_var_t *in = weft_apply_input(f->a, f->next++);
        const weft_apply_t *o = weft_var_owner(in);
        if (!o) {
            s = visit_root(st, in);
        } else if (st->state[weft_apply_id(o)] == 1) { /* open: on the path, a cycle */
            s = weft__graph_cycle_error(st->g, o, "weft_graph_io_save");
        } else if (st->state[weft_apply_id(o)] == 0) {
            if (!weft__vec_grow(NULL, (void **)&stack, &cap, sp + 1, sizeof(*stack))) {
                s = weft_graph_set_error(st->g, WEFT_ENOMEM, "out of memory");
                break;
            }
            st->state[weft_apply_id(o)] = 1;
            stack[sp++] = (frame_t){o, 0};
        }
    }
    free(stack);
    return s;
}

/* ---- top level -------------------------------------------------------------------- */

static weft_status_t check_graph(const weft_graph_io_t *gr, weft_graph_t **gout)
{
    if (!gr || gr->n_outputs == 0 || !gr->outputs || (gr->n_inputs && !gr->inputs) ||
        (gr->n_updates && !gr->updates))
        return WEFT_EINVAL;
    weft_graph_t *g = gr->outputs[0] ? weft_var_graph(gr->outputs[0]) : NULL;
    if (!g) return WEFT_EINVAL;
    *gout = g;
    size_t n = gr->n_inputs + gr->n_outputs + 2 * gr->n_updates;
    for (size_t i = 0; i < n; i++) {
        size_t j = i - gr->n_inputs - gr->n_outputs;
        const weft_var_t *v = i < gr->n_inputs                  ? gr->inputs[i]
                              : i < gr->n_inputs + gr->n_outputs ? gr->outputs[i - gr->n_inputs]
                              : j % 2 ? gr->updates[j / 2].value : gr->updates[j / 2].var;
        if (!v) return weft_graph_set_error(g, WEFT_EINVAL, "weft_graph_io_save: NULL variable");
        if (weft_var_graph(v) != g)
            return weft_graph_set_error(g, WEFT_EFOREIGN,
                                        "weft_graph_io_save: variables of several contexts");
    }
    return WEFT_OK;
}

static weft_status_t save_inputs(io_save_t *st, const weft_graph_io_t *gr, json_t *inputs)
{
    for (size_t i = 0; i < gr->n_inputs; i++) {
        const weft_var_t *v = gr->inputs[i];
        if (weft_var_owner(v) || weft_var_is_constant(v) || weft_var_is_shared(v) ||
            st->ids[weft_var_id(v)] >= 0)
            return weft_graph_set_error(st->g, WEFT_EINVAL,
                                        "weft_graph_io_save: input %zu has an owner, is a "
                                        "constant or shared, or is listed twice",
                                        i);
        json_t *e = var_entry(v, st->next_id);
        json_object_set_new(e, "mutable", json_boolean(gr->input_mutable && gr->input_mutable[i]));
        if (json_array_append_new(inputs, e) != 0)
            return weft_graph_set_error(st->g, WEFT_ENOMEM, "weft_graph_io_save: out of memory");
        st->ids[weft_var_id(v)] = st->next_id++;
    }
    return WEFT_OK;
}

static weft_status_t save_tail(io_save_t *st, const weft_graph_io_t *gr, json_t *outs, json_t *ups)
{
    for (size_t k = 0; k < gr->n_outputs; k++)
        json_array_append_new(outs, json_integer(st->ids[weft_var_id(gr->outputs[k])]));
    for (size_t u = 0; u < gr->n_updates; u++) {
        const weft_var_t *in = gr->updates[u].var;
        bool is_input = weft_var_is_shared(in);
        for (size_t i = 0; i < gr->n_inputs; i++) is_input = is_input || gr->inputs[i] == in;
        if (!is_input)
            return weft_graph_set_error(st->g, WEFT_EINVAL,
                                        "weft_graph_io_save: update %zu: its variable is not "
                                        "among the graph inputs nor a shared variable",
                                        u);
        weft_status_t s = visit_root(st, in); /* a shared variable only updated */
        if (s != WEFT_OK) return s;
        json_t *e = json_object();
        json_object_set_new(e, "input", json_integer(st->ids[weft_var_id(in)]));
        json_object_set_new(e, "value", json_integer(st->ids[weft_var_id(gr->updates[u].value)]));
        json_array_append_new(ups, e);
    }
    return WEFT_OK;
}

static weft_status_t save_body(io_save_t *st, const weft_graph_io_t *gr)
{
    json_t *inputs = json_array(), *outs = json_array(), *ups = json_array();
    st->constants = json_array();
    st->nodes = json_array();
    st->shared = json_array();
    json_object_set_new(st->root, "format", json_string("weft-graph"));
    json_object_set_new(st->root, "version", json_integer(WEFT_GRAPH_IO_VERSION));
    json_object_set_new(st->root, "inputs", inputs);
    json_object_set_new(st->root, "constants", st->constants);
    bool shared_set = st->shared && json_object_set(st->root, "shared", st->shared) == 0;
    json_object_set_new(st->root, "nodes", st->nodes);
    json_object_set_new(st->root, "outputs", outs);
    if (gr->n_updates)
        json_object_set_new(st->root, "updates", ups);
    else
        json_decref(ups);
    if (!inputs || !outs || !st->constants || !st->nodes || !shared_set) {
        json_decref(st->shared);
        return weft_graph_set_error(st->g, WEFT_ENOMEM, "weft_graph_io_save: out of memory");
    }
    weft_status_t s = save_inputs(st, gr, inputs);
    for (size_t k = 0; k < gr->n_outputs && s == WEFT_OK; k++) s = walk(st, gr->outputs[k]);
    for (size_t u = 0; u < gr->n_updates && s == WEFT_OK; u++) s = walk(st, gr->updates[u].value);
    if (s == WEFT_OK)
        s = save_tail(st, gr, outs, gr->n_updates ? json_object_get(st->root, "updates") : NULL);
    /* "shared" only when the graph has shared variables: older readers' files
     * stay byte-identical */
    if (json_array_size(st->shared) == 0) json_object_del(st->root, "shared");
    json_decref(st->shared);
    return s;
}

weft_status_t weft__io_save_obj(const weft_graph_io_t *gr, json_t **out)
{
    io_save_t st = {0};
    weft_status_t s = check_graph(gr, &st.g);
    if (s != WEFT_OK) return s;
    st.n_vars = weft_graph_n_vars(st.g);
    st.n_applies = weft_graph_n_applies(st.g);
    st.ids = weft__vec_malloc(st.n_vars + 1, sizeof(*st.ids));
    st.state = calloc(st.n_applies + 1, 1);
    st.root = json_object();
    if (!st.ids || !st.state || !st.root)
        s = weft_graph_set_error(st.g, WEFT_ENOMEM, "out of memory");
    for (size_t i = 0; s == WEFT_OK && i < st.n_vars; i++) st.ids[i] = -1;
    if (s == WEFT_OK) s = save_body(&st, gr);
    free(st.ids);
    free(st.state);
    if (s != WEFT_OK) {
        json_decref(st.root);
        return s;
    }
    *out = st.root;
    return WEFT_OK;
}

/* ---- text layout --------------------------------------------------------------- */

#define DUMP_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(17) | JSON_ENSURE_ASCII)

typedef struct sbuf {
    char *p;
    size_t n, cap;
    bool oom;
} sbuf_t;

static void sb_add(sbuf_t *b, const char *s)
{
    size_t k = strlen(s);
    if (b->oom) return;
    if (!weft__vec_grow(NULL, (void **)&b->p, &b->cap, b->n + k + 1, 1)) {
        b->oom = true;
        return;
    }
    memcpy(b->p + b->n, s, k + 1);
    b->n += k;
}

static void sb_json(sbuf_t *b, const json_t *v)
{
    char *s = json_dumps(v, DUMP_FLAGS | JSON_ENCODE_ANY);
    if (!s) {
        b->oom = true;
        return;
    }
    sb_add(b, s);
    free(s);
}

/* Top-level keys one per line; arrays of objects one element per line. */
static char *layout(const json_t *root)
{
    sbuf_t b = {0};
    const char *key;
    json_t *v;
    bool first = true;
    sb_add(&b, "{\n");
    json_object_foreach((json_t *)root, key, v)
    {
        sb_add(&b, first ? " \"" : ",\n \"");
        sb_add(&b, key);
        sb_add(&b, "\": ");
        first = false;
        if (!json_is_array(v) || json_array_size(v) == 0 || !json_is_object(json_array_get(v, 0))) {
            sb_json(&b, v);
            continue;
        }
        sb_add(&b, "[\n");
        for (size_t i = 0; i < json_array_size(v); i++) {
            sb_add(&b, "  ");
            sb_json(&b, json_array_get(v, i));
            sb_add(&b, i + 1 < json_array_size(v) ? ",\n" : "\n");
        }
        sb_add(&b, " ]");
    }
    sb_add(&b, "\n}\n");
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

weft_status_t weft_graph_io_save(const weft_graph_io_t *graph, char **text)
{
    if (!graph || !text) return WEFT_EINVAL;
    *text = NULL;
    json_t *root = NULL;
    weft_status_t s = weft__io_save_obj(graph, &root);
    if (s != WEFT_OK) return s;
    *text = layout(root);
    json_decref(root);
    if (!*text)
        return weft_graph_set_error(weft_var_graph(graph->outputs[0]), WEFT_ENOMEM,
                                    "weft_graph_io_save: out of memory");
    return WEFT_OK;
}

weft_status_t weft_graph_io_save_file(const weft_graph_io_t *graph, const char *path)
{
    if (!graph || !path) return WEFT_EINVAL;
    char *text = NULL;
    weft_status_t s = weft_graph_io_save(graph, &text);
    if (s != WEFT_OK) return s;
    FILE *f = fopen(path, "wb");
    size_t n = strlen(text);
    bool ok = f && fwrite(text, 1, n, f) == n;
    if (f && fclose(f) != 0) ok = false;
    free(text);
    if (!ok)
        return weft_graph_set_error(weft_var_graph(graph->outputs[0]), WEFT_EIO,
                                    "weft_graph_io_save_file: cannot write %s", path);
    return WEFT_OK;
}

void weft_graph_io_free_text(char *text)
{
    free(text);
}
