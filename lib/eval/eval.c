/* The sequential reference evaluator (weft/eval.h): a depth-first walk from
 * the outputs that runs each apply node once its inputs have values, with
 * values kept per variable id until the end of the call. An IfElse node
 * (weft/ifelse.h) is lazy: its condition is evaluated first, then only the
 * inputs of the branch taken (docs/control-flow.md §1). */
#include <stdlib.h>
#include <string.h>

#include "graph/ifelse_id.h"
#include "graph/site.h"
#include "tensor/kernel_int.h"
#include "weft/eval.h"
#include "weft/kernel.h"
#include "weft/op.h"

enum { NODE_NEW = 0, NODE_ON_STACK = 1, NODE_DONE = 2 };

typedef struct eval_frame {
    weft_apply_t *node;
    size_t next;   /* next input to look at */
    size_t pairs;  /* IfElse: its (then, else) pairs; 0 for any other node */
} eval_frame_t;

typedef struct eval_state {
    weft_graph_t *g;
    size_t n_vars, n_applies;
    weft_tensor_t **vals;  /* by variable id */
    unsigned char *state;  /* by apply id */
    eval_frame_t *stack;
    size_t sp;
    weft_kernel_ctx_t ctx;
} eval_state_t;

static int var_text(const weft_var_t *v, char *buf, size_t cap)
{
    const char *file = "?";
    int line = 0;
    char name[96], sb[WEFT__SITE_CAP];
    weft_var_print(v, name, sizeof name);
    weft_var_trace(v, &file, &line);
    return snprintf(buf, cap, "variable %llu (%s, created at %s)",
                    (unsigned long long)weft_var_id(v), name,
                    weft__site_str(sb, sizeof sb, file, line));
}

/* Checks a tensor against a variable's type: dtype and ndim (WEFT_ETYPE),
 * static lengths (WEFT_ESHAPE). Writes the mismatch into why. */
static weft_status_t check_value(const weft_type_t *t, const weft_tensor_t *x, char *why,
                                 size_t cap)
{
    char a[160], b[160];
    weft_type_print(t, a, sizeof a);
    weft_tensor_print_type(x, b, sizeof b);
    snprintf(why, cap, "value %s does not match type %s", b, a);
    if (weft_tensor_dtype(x) != weft_type_dtype(t) || weft_tensor_ndim(x) != weft_type_ndim(t))
        return WEFT_ETYPE;
    for (int d = 0; d < weft_type_ndim(t); d++)
        if (weft_type_dim(t, d) != WEFT_DIM_UNKNOWN && weft_type_dim(t, d) != weft_tensor_dim(x, d))
            return WEFT_ESHAPE;
    return WEFT_OK;
}

static weft_status_t var_check(eval_state_t *ev, const weft_var_t *v)
{
    char vt[200];
    if (weft_var_graph(v) != ev->g) {
        var_text(v, vt, sizeof vt);
        return weft_graph_set_error(ev->g, WEFT_EFOREIGN, "eval: %s belongs to another graph", vt);
    }
    if (weft_var_id(v) >= ev->n_vars)
        return weft_graph_set_error(ev->g, WEFT_EINVAL, "eval: variable id out of range");
    return WEFT_OK;
}

static weft_status_t set_inputs(eval_state_t *ev, size_t n_in, weft_var_t *const *inputs,
                                weft_tensor_t *const *values)
{
    char vt[200], why[400];
    for (size_t k = 0; k < n_in; k++) {
        if (!inputs[k] || !values[k])
            return weft_graph_set_error(ev->g, WEFT_EINVAL, "eval: input %zu is NULL", k);
        weft_status_t st = var_check(ev, inputs[k]);
        if (st != WEFT_OK) return st;
        var_text(inputs[k], vt, sizeof vt);
        if (weft_var_owner(inputs[k]))
            return weft_graph_set_error(ev->g, WEFT_EINVAL, "eval: input %zu, %s, has an owner",
                                        k, vt);
        size_t id = weft_var_id(inputs[k]);
        if (ev->vals[id])
            return weft_graph_set_error(ev->g, WEFT_EINVAL, "eval: input %zu, %s, listed twice",
                                        k, vt);
        st = check_value(weft_var_type(inputs[k]), values[k], why, sizeof why);
        if (st != WEFT_OK)
            return weft_graph_set_error(ev->g, st, "eval: input %zu, %s: %s", k, vt, why);
        ev->vals[id] = weft_tensor_retain(values[k]);
    }
    return WEFT_OK;
}

/* A value for an owner-less variable without one: constants view their data. */
static weft_status_t leaf_value(eval_state_t *ev, weft_var_t *v)
{
    char vt[200];
    var_text(v, vt, sizeof vt);
    if (!weft_var_is_constant(v))
        return weft_graph_set_error(ev->g, WEFT_EMISSING_INPUT,
                                    "eval: %s is a root the outputs need but not an input", vt);
    const void *data;
    size_t nbytes;
    const weft_type_t *t = weft_var_type(v);
    int64_t shape[WEFT_MAX_NDIM];
    for (int d = 0; d < weft_type_ndim(t); d++) shape[d] = weft_type_dim(t, d);
    weft_status_t st = weft_constant_data(v, &data, &nbytes);
    if (st == WEFT_OK) /* read-only by contract: no op destroys a constant */
        st = weft_tensor_from_data(weft_type_dtype(t), weft_type_ndim(t), shape, NULL,
                                   (void *)(uintptr_t)data, &ev->vals[weft_var_id(v)]);
    if (st != WEFT_OK)
        return weft_graph_set_error(ev->g, st, "eval: constant %s: %s", vt,
                                    weft_tensor_last_error());
    return WEFT_OK;
}

static weft_status_t node_error(eval_state_t *ev, const weft_apply_t *a, weft_status_t st,
                                const char *msg)
{
    char desc[256];
    weft_apply_describe(a, desc, sizeof desc);
    return weft_graph_set_error(ev->g, st, "%s: %s", desc, msg);
}

/* Checks and stores a node's outputs; releases them all on a mismatch. */
static weft_status_t store_outputs(eval_state_t *ev, const weft_apply_t *a, weft_tensor_t **cells,
                                   size_t n_out)
{
    char why[400], msg[480];
    weft_status_t st = WEFT_OK;
    for (size_t o = 0; o < n_out && st == WEFT_OK; o++) {
        if (!cells[o]) {
            snprintf(msg, sizeof msg, "perform left output %zu empty", o);
            st = node_error(ev, a, WEFT_EINVAL, msg);
        } else if ((st = check_value(weft_var_type(weft_apply_output(a, o)), cells[o], why,
                                     sizeof why)) != WEFT_OK) {
            snprintf(msg, sizeof msg, "output %zu: %s", o, why);
            node_error(ev, a, st, msg);
        }
    }
    for (size_t o = 0; o < n_out; o++) {
        if (st == WEFT_OK)
            ev->vals[weft_var_id(weft_apply_output(a, o))] = cells[o];
        else
            weft_tensor_release(cells[o]);
    }
    return st;
}

static weft_status_t run_node(eval_state_t *ev, const weft_apply_t *a)
{
    const weft_op_t *op = weft_apply_op(a);
    const weft_op_class_t *cls = weft_op_class(op);
    if (!cls->perform) return node_error(ev, a, WEFT_ENOTIMPL, "the op has no perform hook");
    size_t n_in = weft_apply_n_inputs(a), n_out = weft_apply_n_outputs(a);
    weft_tensor_t **ins = calloc(n_in + 1, sizeof *ins);
    weft_tensor_t *cells[WEFT_OP_MAX_OUTPUTS] = {NULL};
    if (!ins) return weft_graph_set_error(ev->g, WEFT_ENOMEM, "eval: out of memory");
    for (size_t i = 0; i < n_in; i++) ins[i] = ev->vals[weft_var_id(weft_apply_input(a, i))];
    weft__kernel_ctx_reset(&ev->ctx);
    weft_status_t st = cls->perform(a, ins, cells, &ev->ctx);
    free(ins);
    if (st == WEFT_OK && weft_kernel_status(&ev->ctx) != WEFT_OK)
        st = weft_kernel_status(&ev->ctx); /* reported an error but returned OK */
    if (st != WEFT_OK) {
        for (size_t o = 0; o < n_out; o++) weft_tensor_release(cells[o]);
        const char *m = weft_kernel_message(&ev->ctx);
        return node_error(ev, a, st, m[0] ? m : "perform failed without a message");
    }
    return store_outputs(ev, a, cells, n_out);
}

/* Makes v's value available: present, a leaf, or pushes its owner. */
static weft_status_t want(eval_state_t *ev, weft_var_t *v, bool *pushed)
{
    *pushed = false;
    weft_status_t st = var_check(ev, v);
    if (st != WEFT_OK || ev->vals[weft_var_id(v)]) return st;
    weft_apply_t *a = weft_var_owner(v);
    if (!a) return leaf_value(ev, v);
    if (ev->state[weft_apply_id(a)] == NODE_ON_STACK)
        return node_error(ev, a, WEFT_ECYCLE, "the node depends on itself");
    ev->state[weft_apply_id(a)] = NODE_ON_STACK;
    ev->stack[ev->sp++] = (eval_frame_t){a, 0, weft__ifelse_pairs(a)};
    *pushed = true;
    return WEFT_OK;
}

/* An IfElse frame whose condition has its value skips the inputs of the
 * branch not taken. */
static void skip_untaken(eval_state_t *ev, eval_frame_t *f)
{
    if (f->pairs == 0 || f->next == 0) return;
    weft_tensor_t *c = ev->vals[weft_var_id(weft_apply_input(f->node, 0))];
    bool taken = weft__ifelse_cond_true(weft_tensor_flat_get(c, 0));
    size_t n = f->pairs;
    while (f->next < 1 + 2 * n &&
           (taken ? weft__ifelse_is_else(n, f->next) : weft__ifelse_is_then(n, f->next)))
        f->next++;
}

static weft_status_t eval_output(eval_state_t *ev, weft_var_t *out)
{
    bool pushed;
    weft_status_t st = want(ev, out, &pushed);
    while (st == WEFT_OK && ev->sp > 0) {
        eval_frame_t *f = &ev->stack[ev->sp - 1];
        skip_untaken(ev, f);
        if (f->next < weft_apply_n_inputs(f->node)) {
            st = want(ev, weft_apply_input(f->node, f->next++), &pushed);
            continue;
        }
        st = run_node(ev, f->node);
        ev->state[weft_apply_id(f->node)] = NODE_DONE;
        ev->sp--;
    }
    return st;
}

static weft_status_t check_outputs(weft_graph_t *g, size_t n_out, weft_var_t *const *outputs)
{
    for (size_t k = 0; k < n_out; k++) {
        if (!outputs[k]) return weft_graph_set_error(g, WEFT_EINVAL, "eval: output %zu is NULL", k);
        if (weft_type_kind(weft_var_type(outputs[k])) != WEFT_TYPE_TENSOR)
            return weft_graph_set_error(g, WEFT_EINVAL,
                                        "eval: output %zu has a null or disconnected type", k);
    }
    return WEFT_OK;
}

weft_status_t weft_eval(weft_graph_t *g, size_t n_in, weft_var_t *const *inputs,
                        weft_tensor_t *const *values, size_t n_out, weft_var_t *const *outputs,
                        weft_tensor_t **results)
{
    if (results)
        for (size_t k = 0; k < n_out; k++) results[k] = NULL;
    if (!g) return WEFT_EINVAL;
    if (!outputs || !results || n_out == 0 || (n_in > 0 && (!inputs || !values)))
        return weft_graph_set_error(g, WEFT_EINVAL, "eval: NULL argument or no outputs");
    weft_status_t st = check_outputs(g, n_out, outputs);
    if (st != WEFT_OK) return st;
    eval_state_t ev = {.g = g};
    ev.n_vars = weft_graph_n_vars(g);
    ev.n_applies = weft_graph_n_applies(g);
    ev.vals = calloc(ev.n_vars + 1, sizeof *ev.vals);
    ev.state = calloc(ev.n_applies + 1, 1);
    ev.stack = calloc(ev.n_applies + 1, sizeof *ev.stack);
    weft__kernel_ctx_init(&ev.ctx, NULL, NULL, NULL, 0);
    if (!ev.vals || !ev.state || !ev.stack)
        st = weft_graph_set_error(g, WEFT_ENOMEM, "eval: out of memory");
    if (st == WEFT_OK) st = set_inputs(&ev, n_in, inputs, values);
    for (size_t k = 0; k < n_out && st == WEFT_OK; k++) st = eval_output(&ev, outputs[k]);
    for (size_t k = 0; k < n_out && st == WEFT_OK; k++)
        results[k] = weft_tensor_retain(ev.vals[weft_var_id(outputs[k])]);
    for (size_t i = 0; ev.vals && i < ev.n_vars; i++) weft_tensor_release(ev.vals[i]);
    free(ev.vals);
    free(ev.state);
    free(ev.stack);
    return st;
}
