/* Moving graphs between contexts for OpFromGraph: the user's subgraph is
 * copied into the op's private context at creation (types, constants and ops
 * recreated, props copied by value, creation sites kept), and the inner graph
 * is instantiated in a caller's context for the inline expansion and the
 * derived gradient. */
#include <stdlib.h>
#include <string.h>

#include "graph/ctor_int.h"
#include "base/vec.h"
#include "ofg_int.h"

weft_status_t weft__ofg_type_in(weft_graph_t *g, const weft_type_t *t, const weft_type_t **out)
{
    switch (weft_type_kind(t)) {
    case WEFT_TYPE_NULL: return weft_type_null(g, out);
    case WEFT_TYPE_DISCONNECTED: return weft_type_disconnected(g, out);
    default: break;
    }
    int64_t shape[WEFT_MAX_NDIM];
    for (int d = 0; d < weft_type_ndim(t); d++) shape[d] = weft_type_dim(t, d);
    return weft_type_tensor(g, weft_type_dtype(t), weft_type_ndim(t), shape, out);
}

weft_status_t weft__ofg_op_in(weft_graph_t *g, const weft_op_t *op, const weft_op_t **out)
{
    const weft_op_class_t *cls = weft_op_class(op);
    if (cls != weft_ofg_class() && WEFT__OFG_HOOK(cls, props_fini))
        return weft_graph_set_error(g, WEFT_ENOTIMPL,
                                    "OpFromGraph: op %s owns memory in its props (props_fini): it "
                                    "cannot be copied into or out of an inner graph",
                                    weft_op_name(op));
    return weft_op_create(g, cls, weft_op_props(op), out);
}

/* ---- user graph -> private context -------------------------------------------- */

typedef struct import {
    weft_graph_t *src, *dst;
    weft_var_t **map; /* by source var id */
    uint8_t *state;   /* by source apply id: 0 new, 1 open, 2 copied */
} import_t;

static weft_status_t import_root(import_t *im, weft_var_t *v)
{
    const char *file;
    int line;
    weft_var_trace(v, &file, &line);
    if (!weft_var_is_constant(v)) {
        char vb[128];
        weft_var_print(v, vb, sizeof(vb));
        return weft_graph_set_error(im->src, WEFT_EMISSING_INPUT,
                                    "weft_ofg_create: variable %s (created at %s:%d) is needed by "
                                    "an output but is not among the inputs",
                                    vb, file ? file : "?", line);
    }
    const weft_type_t *t;
    const void *data;
    size_t nbytes;
    weft_var_t **slot = &im->map[weft_var_id(v)];
    weft_status_t s = weft__ofg_type_in(im->dst, weft_var_type(v), &t);
    if (s == WEFT_OK) s = weft_constant_data(v, &data, &nbytes);
    if (s == WEFT_OK)
        s = weft__got(im->dst,
                      *slot = weft_constant_create_at(im->dst, t, data, nbytes, file, line));
    if (s == WEFT_OK && weft_var_name(v)) s = weft_var_set_name(*slot, weft_var_name(v));
    return s == WEFT_OK ? s
                        : weft_graph_set_error(im->src, s, "weft_ofg_create: copying a constant");
}

static weft_status_t import_apply(import_t *im, const weft_apply_t *a)
{
    size_t n_in = weft_apply_n_inputs(a);
    weft_var_t **ins = calloc(n_in + 1, sizeof(*ins));
    if (!ins) return weft_graph_set_error(im->src, WEFT_ENOMEM, "out of memory");
    for (size_t i = 0; i < n_in; i++) ins[i] = im->map[weft_var_id(weft_apply_input(a, i))];
    const weft_op_t *op = NULL;
    const char *file;
    int line;
    weft_apply_trace(a, &file, &line);
    weft_apply_t *c = NULL;
    weft_status_t s = weft__ofg_op_in(im->dst, weft_apply_op(a), &op);
    if (s == WEFT_OK)
        s = weft__got(im->dst, c = weft_apply_create_at(im->dst, op, n_in, ins, file, line));
    free(ins);
    if (s != WEFT_OK)
        return weft_graph_set_error(im->src, s, "weft_ofg_create: %s",
                                    weft_graph_last_error(im->dst));
    for (size_t k = 0; k < weft_apply_n_outputs(a) && s == WEFT_OK; k++) {
        weft_var_t *ov = weft_apply_output(a, k);
        im->map[weft_var_id(ov)] = weft_apply_output(c, k);
        if (weft_var_name(ov)) s = weft_var_set_name(weft_apply_output(c, k), weft_var_name(ov));
    }
    return s;
}

typedef struct frame {
    const weft_apply_t *a;
    size_t next;
} frame_t;

/* Post-order walk from v: every node after the producers of its inputs. */
static weft_status_t import_walk(import_t *im, weft_var_t *v)
{
    if (im->map[weft_var_id(v)]) return WEFT_OK;
    if (!weft_var_owner(v)) return import_root(im, v);
    size_t cap = 0, sp = 0;
    frame_t *st = NULL;
    if (!weft__vec_grow(NULL, (void **)&st, &cap, 64, sizeof(*st)))
        return weft_graph_set_error(im->src, WEFT_ENOMEM, "out of memory");
    weft_status_t s = WEFT_OK;
    st[sp++] = (frame_t){weft_var_owner(v), 0};
    im->state[weft_apply_id(weft_var_owner(v))] = 1;
    while (sp > 0 && s == WEFT_OK) {
        frame_t *f = &st[sp - 1];
        if (f->next == weft_apply_n_inputs(f->a)) {
            s = import_apply(im, f->a);
            im->state[weft_apply_id(f->a)] = 2;
            sp--;
            continue;
        }
        weft_var_t *in = weft_apply_input(f->a, f->next++);
        const weft_apply_t *o = weft_var_owner(in);
        if (im->map[weft_var_id(in)] || (o && im->state[weft_apply_id(o)])) continue;
        if (!o) {
            s = import_root(im, in);
            continue;
        }
        if (!weft__vec_grow(NULL, (void **)&st, &cap, sp + 1, sizeof(*st))) {
            s = weft_graph_set_error(im->src, WEFT_ENOMEM, "out of memory");
            break;
        }
        im->state[weft_apply_id(o)] = 1;
        st[sp++] = (frame_t){o, 0};
    }
    free(st);
    return s;
}

weft_status_t weft__ofg_import(weft_graph_t *dst, weft_graph_t *g, size_t n_in,
                               weft_var_t *const *inputs, weft_var_t **new_inputs, size_t n_out,
                               weft_var_t *const *outputs, weft_var_t **new_outputs)
{
    import_t im = {g, dst, calloc(weft_graph_n_vars(g) + 1, sizeof(weft_var_t *)),
                   calloc(weft_graph_n_applies(g) + 1, 1)};
    weft_status_t s = im.map && im.state ? WEFT_OK : WEFT_ENOMEM;
    for (size_t i = 0; i < n_in && s == WEFT_OK; i++) {
        const weft_type_t *t;
        s = weft__ofg_type_in(dst, weft_var_type(inputs[i]), &t);
        if (s == WEFT_OK)
            s = weft__got(dst, new_inputs[i] = weft_var_create(dst, t, weft_var_name(inputs[i])));
        if (s == WEFT_OK) im.map[weft_var_id(inputs[i])] = new_inputs[i];
    }
    for (size_t k = 0; k < n_out && s == WEFT_OK; k++) {
        s = import_walk(&im, outputs[k]);
        new_outputs[k] = s == WEFT_OK ? im.map[weft_var_id(outputs[k])] : NULL;
    }
    free(im.map);
    free(im.state);
    return s == WEFT_ENOMEM ? weft_graph_set_error(g, s, "weft_ofg_create: out of memory") : s;
}

/* ---- inner graph -> a caller's context ---------------------------------------------- */

typedef struct inst {
    const weft__ofg_t *d;
    weft_graph_t *g;
    weft_var_t *const *inputs;
    weft_var_t **slots, **consts;
} inst_t;

static weft_status_t inst_ref(inst_t *in, ofg_ref_t r, weft_var_t **out)
{
    if (r.kind == OFG_REF_INPUT) return (*out = in->inputs[r.idx]), WEFT_OK;
    if (r.kind == OFG_REF_SLOT) return (*out = in->slots[r.idx]), WEFT_OK;
    if (in->consts[r.idx]) return (*out = in->consts[r.idx]), WEFT_OK;
    weft_tensor_t *t = in->d->plan.consts[r.idx];
    const weft_type_t *ty;
    int64_t shape[WEFT_MAX_NDIM];
    for (int k = 0; k < weft_tensor_ndim(t); k++) shape[k] = weft_tensor_dim(t, k);
    weft_status_t s =
        weft_type_tensor(in->g, weft_tensor_dtype(t), weft_tensor_ndim(t), shape, &ty);
    if (s == WEFT_OK)
        s = weft__got(in->g, in->consts[r.idx] = weft_constant_create(
                                 in->g, ty, weft_tensor_data(t),
                                 weft_tensor_size(t) * weft_dtype_size(weft_tensor_dtype(t))));
    *out = in->consts[r.idx];
    return s;
}

static weft_status_t inst_node(inst_t *in, size_t j, weft_var_t **args)
{
    const weft__ofg_plan_t *p = &in->d->plan;
    const weft_apply_t *a = p->nodes[j];
    size_t n = p->in_off[j + 1] - p->in_off[j];
    weft_status_t s = WEFT_OK;
    for (size_t i = 0; i < n && s == WEFT_OK; i++)
        s = inst_ref(in, p->refs[p->in_off[j] + i], &args[i]);
    const weft_op_t *op = NULL;
    if (s == WEFT_OK) s = weft__ofg_op_in(in->g, weft_apply_op(a), &op);
    const char *file;
    int line;
    weft_apply_trace(a, &file, &line);
    weft_apply_t *c = NULL;
    if (s == WEFT_OK)
        s = weft__got(in->g, c = weft_apply_create_at(in->g, op, n, args, file, line));
    for (size_t o = 0; s == WEFT_OK && o < weft_apply_n_outputs(a); o++) {
        weft_var_t *ov = weft_apply_output(a, o);
        in->slots[p->slot0[j] + o] = weft_apply_output(c, o);
        if (weft_var_name(ov)) s = weft_var_set_name(weft_apply_output(c, o), weft_var_name(ov));
    }
    return s;
}

weft_status_t weft__ofg_copy_inner(const weft__ofg_t *d, weft_graph_t *g,
                                   weft_var_t *const *new_inputs, weft_var_t **outs)
{
    const weft__ofg_plan_t *p = &d->plan;
    inst_t in = {d, g, new_inputs, calloc(p->n_slots + 1, sizeof(weft_var_t *)),
                 calloc(p->n_consts + 1, sizeof(weft_var_t *))};
    weft_var_t **args = calloc(p->max_in + 1, sizeof(*args));
    weft_status_t s = in.slots && in.consts && args ? WEFT_OK : WEFT_ENOMEM;
    for (size_t j = 0; j < p->n_nodes && s == WEFT_OK; j++) s = inst_node(&in, j, args);
    for (size_t k = 0; k < d->n_out && s == WEFT_OK; k++)
        s = inst_ref(&in, p->out_refs[k], &outs[k]);
    free(in.slots);
    free(in.consts);
    free(args);
    return s == WEFT_ENOMEM ? weft_graph_set_error(g, s, "OpFromGraph: out of memory") : s;
}
