/* weft_grad: reverse-mode differentiation by graph construction.
 *
 * Algorithm (as PyTensor's grad):
 *  1. collect the apply nodes among the cost's ancestors in topological
 *     order (iterative depth-first post-order);
 *  2. forward over that order, mark "relevant" every variable that depends
 *     on some wrt (respecting the ops' connection patterns), so only nodes
 *     on a wrt -> cost path are differentiated;
 *  3. seed the cost's gradient and walk the order backwards: for a relevant
 *     node with some output gradient, call its grad hook with the output
 *     gradients (NULL = none) and add each returned input gradient into that
 *     input's accumulator. An undefined gradient (no hook, or a null-type
 *     result) is recorded per variable with the node where it arose, and
 *     spreads to the relevant inputs of the nodes it reaches;
 *  4. each wrt gets its accumulator, or an error / zeros when disconnected or
 *     undefined (options).
 * Per-variable state lives in arrays indexed by variable id: every ancestor
 * existed before the call, so ids below the count taken at the start cover
 * them; the gradient graph built meanwhile gets higher ids. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "graph/graph_int.h"
#include "graph/site.h"
#include "weft/elemwise.h"
#include "weft/grad.h"
#include "weft/op.h"

enum {
    GRAD_RELEVANT = 1,  /* depends on some wrt */
    GRAD_UNDEFINED = 2, /* its gradient is undefined (origin in undef_at) */
};

typedef struct grad_state {
    weft_graph_t *g;
    size_t n_vars, n_applies;
    weft_var_t **acc;            /* by var id: accumulated gradient */
    uint8_t *flags;              /* by var id */
    const weft_apply_t **undef_at; /* by var id: the node where the gradient stopped */
    weft_apply_t **order;        /* ancestors of the cost, inputs first */
    size_t n_order;
} grad_state_t;

static void grad_state_free(grad_state_t *s)
{
    free(s->acc);
    free(s->flags);
    free(s->undef_at);
    free(s->order);
}

static weft_status_t grad_state_init(grad_state_t *s, weft_graph_t *g)
{
    memset(s, 0, sizeof *s);
    s->g = g;
    s->n_vars = weft_graph_n_vars(g);
    s->n_applies = weft_graph_n_applies(g);
    size_t nv = s->n_vars ? s->n_vars : 1, na = s->n_applies ? s->n_applies : 1;
    s->acc = calloc(nv, sizeof *s->acc);
    s->flags = calloc(nv, sizeof *s->flags);
    s->undef_at = calloc(nv, sizeof *s->undef_at);
    s->order = calloc(na, sizeof *s->order);
    if (!s->acc || !s->flags || !s->undef_at || !s->order) {
        grad_state_free(s);
        return weft_graph_set_error(g, WEFT_ENOMEM, "weft_grad: out of memory");
    }
    return WEFT_OK;
}

/* Step 1: post-order DFS over owners from the cost, with an explicit stack of
 * (apply, next input) so deep chains do not overflow the C stack; seen: 1
 * while on the stack, 2 once done, so an open node met again is a cycle. */
static weft_status_t grad_toposort(grad_state_t *s, weft_var_t *cost)
{
    weft_apply_t *root = weft_var_owner(cost);
    if (!root) {
        return WEFT_OK;
    }
    uint8_t *seen = calloc(s->n_applies, 1);
    weft_apply_t **stack = weft__vec_malloc(s->n_applies, sizeof *stack);
    size_t *next = weft__vec_malloc(s->n_applies, sizeof *next), top = 0;
    weft_status_t st = (seen && stack && next) ? WEFT_OK : WEFT_ENOMEM;
    if (st == WEFT_OK) {
        seen[weft_apply_id(root)] = 1;
        stack[top] = root;
        next[top++] = 0;
    }
    while (st == WEFT_OK && top > 0) {
        weft_apply_t *a = stack[top - 1];
        size_t i = next[top - 1]++;
        if (i >= weft_apply_n_inputs(a)) {
            s->order[s->n_order++] = a;
            seen[weft_apply_id(a)] = 2;
            top--;
            continue;
        }
        weft_apply_t *owner = weft_var_owner(weft_apply_input(a, i));
        if (owner && seen[weft_apply_id(owner)] == 1) { /* open: a cycle */
            st = weft__graph_cycle_error(s->g, owner, "weft_grad");
            break;
        }
        if (owner && !seen[weft_apply_id(owner)]) {
            seen[weft_apply_id(owner)] = 1;
            stack[top] = owner;
            next[top++] = 0;
        }
    }
    free(seen);
    free(stack);
    free(next);
    return st != WEFT_ENOMEM ? st
                             : weft_graph_set_error(s->g, WEFT_ENOMEM, "weft_grad: out of memory");
}

static bool grad_is_float(const weft_var_t *v)
{
    const weft_type_t *t = weft_var_type(v);
    weft_dtype_t dt = weft_type_dtype(t);
    return weft_type_kind(t) == WEFT_TYPE_TENSOR && weft_dtype_kind(dt) == WEFT_KIND_FLOAT;
}

/* Variables a gradient flows through: floats, and complex intermediates
 * (docs/dtypes.md, "Complex numbers"); cost and wrt stay real. */
static bool grad_carries(const weft_var_t *v)
{
    const weft_type_t *t = weft_var_type(v);
    weft_dtype_t dt = weft_type_dtype(t);
    return grad_is_float(v) ||
           (weft_type_kind(t) == WEFT_TYPE_TENSOR &&
            (dt == WEFT_COMPLEX64 || dt == WEFT_COMPLEX128));
}

static bool grad_connected(const weft_apply_t *a, size_t in, size_t out)
{
    const weft_op_class_t *cls = weft_op_class(weft_apply_op(a));
    return !cls->connection_pattern || cls->connection_pattern(a, in, out);
}

/* Step 2: relevance flows forward from the wrt variables. */
static void grad_mark_relevant(grad_state_t *s, size_t n_wrt, weft_var_t *const *wrt)
{
    for (size_t i = 0; i < n_wrt; i++) {
        s->flags[weft_var_id(wrt[i])] |= GRAD_RELEVANT;
    }
    for (size_t k = 0; k < s->n_order; k++) {
        weft_apply_t *a = s->order[k];
        for (size_t o = 0; o < weft_apply_n_outputs(a); o++) {
            for (size_t i = 0; i < weft_apply_n_inputs(a); i++) {
                uint64_t id = weft_var_id(weft_apply_input(a, i));
                if ((s->flags[id] & GRAD_RELEVANT) && grad_connected(a, i, o)) {
                    s->flags[weft_var_id(weft_apply_output(a, o))] |= GRAD_RELEVANT;
                    break;
                }
            }
        }
    }
}

static void grad_mark_undefined(grad_state_t *s, weft_var_t *v, const weft_apply_t *origin)
{
    uint64_t id = weft_var_id(v);
    if (!(s->flags[id] & GRAD_UNDEFINED)) {
        s->flags[id] |= GRAD_UNDEFINED;
        s->undef_at[id] = origin;
    }
}

/* Adds contribution ig (already type-checked) into input v's accumulator. */
static weft_status_t grad_accumulate(grad_state_t *s, weft_var_t *v, weft_var_t *ig)
{
    uint64_t id = weft_var_id(v);
    if (!s->acc[id]) {
        s->acc[id] = ig;
        return WEFT_OK;
    }
    weft_var_t *sum = NULL;
    weft_status_t st = weft__got(s->g, sum = weft_add(s->g, s->acc[id], ig));
    if (st == WEFT_OK) {
        s->acc[id] = sum;
    }
    return st;
}

/* A hook's result for input i must be of the input's dtype and rank. */
static weft_status_t grad_check_type(grad_state_t *s, const weft_apply_t *a, size_t i,
                                     weft_var_t *ig)
{
    const weft_type_t *ti = weft_var_type(weft_apply_input(a, i)), *tg = weft_var_type(ig);
    if (weft_type_kind(tg) == WEFT_TYPE_TENSOR && weft_type_dtype(tg) == weft_type_dtype(ti) &&
        weft_type_ndim(tg) == weft_type_ndim(ti)) {
        return WEFT_OK;
    }
    char node[160], bi[64], bg[64];
    weft_apply_describe(a, node, sizeof node);
    weft_type_print(ti, bi, sizeof bi);
    weft_type_print(tg, bg, sizeof bg);
    return weft_graph_set_error(s->g, WEFT_ETYPE, "weft_grad: %s: the gradient of input %zu "
                                "has type %s, the input %s", node, i, bg, bi);
}

/* Input gradients of one node from its hook's results. */
static weft_status_t grad_collect(grad_state_t *s, const weft_apply_t *a, weft_var_t **ig)
{
    for (size_t i = 0; i < weft_apply_n_inputs(a); i++) {
        weft_var_t *in = weft_apply_input(a, i);
        if (!ig[i] || !(s->flags[weft_var_id(in)] & GRAD_RELEVANT) || !grad_carries(in)) {
            continue;
        }
        weft_type_kind_t k = weft_type_kind(weft_var_type(ig[i]));
        if (k == WEFT_TYPE_DISCONNECTED) {
            continue;
        }
        if (k == WEFT_TYPE_NULL) {
            grad_mark_undefined(s, in, a);
            continue;
        }
        weft_status_t st = grad_check_type(s, a, i, ig[i]);
        if (st == WEFT_OK) {
            st = grad_accumulate(s, in, ig[i]);
        }
        if (st != WEFT_OK) {
            return st;
        }
    }
    return WEFT_OK;
}

/* Every relevant float input of a becomes undefined, originating at origin. */
static void grad_spread_undefined(grad_state_t *s, const weft_apply_t *a,
                                  const weft_apply_t *origin)
{
    for (size_t i = 0; i < weft_apply_n_inputs(a); i++) {
        weft_var_t *in = weft_apply_input(a, i);
        if ((s->flags[weft_var_id(in)] & GRAD_RELEVANT) && grad_carries(in)) {
            grad_mark_undefined(s, in, origin);
        }
    }
}

/* Step 3 for one node. */
static weft_status_t grad_node(grad_state_t *s, const weft_apply_t *a)
{
    size_t n_out = weft_apply_n_outputs(a), n_in = weft_apply_n_inputs(a);
    weft_var_t *og[WEFT_OP_MAX_OUTPUTS] = {0};
    bool any = false, relevant_in = false;
    for (size_t i = 0; i < n_in; i++) {
        relevant_in |= (s->flags[weft_var_id(weft_apply_input(a, i))] & GRAD_RELEVANT) != 0;
    }
    for (size_t o = 0; o < n_out && o < WEFT_OP_MAX_OUTPUTS; o++) {
        uint64_t id = weft_var_id(weft_apply_output(a, o));
        if (s->flags[id] & GRAD_UNDEFINED) {
            grad_spread_undefined(s, a, s->undef_at[id]);
            return WEFT_OK;
        }
        og[o] = s->acc[id];
        any |= og[o] != NULL;
    }
    if (!any || !relevant_in) {
        return WEFT_OK;
    }
    const weft_op_class_t *cls = weft_op_class(weft_apply_op(a));
    if (!cls->grad) {
        grad_spread_undefined(s, a, a);
        return WEFT_OK;
    }
    weft_var_t **ig = calloc(n_in ? n_in : 1, sizeof *ig);
    if (!ig) {
        return weft_graph_set_error(s->g, WEFT_ENOMEM, "weft_grad: out of memory");
    }
    weft_status_t st = cls->grad(s->g, a, og, ig);
    if (st == WEFT_OK) {
        st = grad_collect(s, a, ig);
    }
    free(ig);
    return st;
}

static void grad_describe_var(const weft_var_t *v, char *buf, size_t cap)
{
    char name[96], sb[WEFT__SITE_CAP];
    const char *file = NULL;
    int line = 0;
    weft_var_print(v, name, sizeof name);
    weft_var_trace(v, &file, &line);
    snprintf(buf, cap, "'%s' (created at %s)", name, weft__site_str(sb, sizeof sb, file, line));
}

/* Step 4 for wrt number i. */
static weft_status_t grad_result(grad_state_t *s, size_t i, weft_var_t *w,
                                 const weft_grad_options_t *o, weft_var_t **out)
{
    uint64_t id = weft_var_id(w);
    char desc[256];
    if (!(s->flags[id] & GRAD_UNDEFINED) && s->acc[id]) {
        *out = s->acc[id];
        return WEFT_OK;
    }
    bool undefined = (s->flags[id] & GRAD_UNDEFINED) != 0;
    if ((undefined ? o->undefined : o->disconnected) == WEFT_GRAD_MISSING_ZERO) {
        return weft__got(s->g, *out = weft_zeros_like(s->g, w));
    }
    grad_describe_var(w, desc, sizeof desc);
    if (!undefined) {
        return weft_graph_set_error(s->g, WEFT_EDISCONNECTED, "weft_grad: wrt %zu %s is "
                                    "disconnected from the cost", i, desc);
    }
    char node[160];
    weft_apply_describe(s->undef_at[id], node, sizeof node);
    return weft_graph_set_error(s->g, WEFT_ENOGRAD, "weft_grad: the gradient of wrt %zu %s is "
                                "undefined: it stops at %s, which %s", i, desc, node,
                                weft_op_class(weft_apply_op(s->undef_at[id]))->grad
                                    ? "returned an undefined (null-type) gradient"
                                    : "has no gradient");
}

static weft_status_t grad_check_args(weft_graph_t *g, weft_var_t *cost, size_t n_wrt,
                                     weft_var_t *const *wrt, const weft_grad_options_t *o)
{
    if (o->size < sizeof(weft_grad_options_t)) {
        return weft_graph_set_error(g, WEFT_EINVAL, "weft_grad: options->size too small");
    }
    const weft_type_t *tc = weft_var_type(cost);
    if (weft_var_graph(cost) != g) {
        char vb[256];
        weft_var_print(cost, vb, sizeof(vb));
        return weft_graph_set_error(g, WEFT_EFOREIGN,
                                    "weft_grad: the cost, %s, belongs to another graph context",
                                    vb);
    }
    if (!grad_is_float(cost) || weft_type_ndim(tc) != 0) {
        char b[64];
        weft_type_print(tc, b, sizeof b);
        return weft_graph_set_error(g, WEFT_ETYPE, "weft_grad: the cost has type %s (need a "
                                    "0-d float32/float64 tensor)", b);
    }
    if (o->cost_grad && (weft_var_graph(o->cost_grad) != g ||
                         !weft_type_equal(weft_var_type(o->cost_grad), tc))) {
        return weft_graph_set_error(g, WEFT_ETYPE, "weft_grad: cost_grad must be a 0-d "
                                    "variable of the cost's dtype in the same context");
    }
    for (size_t i = 0; i < n_wrt; i++) {
        if (!wrt[i]) {
            return weft_graph_set_error(g, WEFT_EINVAL, "weft_grad: wrt %zu is NULL", i);
        }
        if (weft_var_graph(wrt[i]) != g) {
            char vb[256];
            weft_var_print(wrt[i], vb, sizeof(vb));
            return weft_graph_set_error(g, WEFT_EFOREIGN,
                                        "weft_grad: wrt %zu, %s, belongs to another graph context",
                                        i, vb);
        }
        if (!grad_is_float(wrt[i])) {
            char d[256];
            grad_describe_var(wrt[i], d, sizeof d);
            return weft_graph_set_error(g, WEFT_ETYPE, "weft_grad: wrt %zu %s is not a float "
                                        "tensor", i, d);
        }
    }
    return WEFT_OK;
}

static weft_status_t grad_run(grad_state_t *s, weft_var_t *cost, size_t n_wrt,
                              weft_var_t *const *wrt, const weft_grad_options_t *o,
                              weft_var_t **grads_out)
{
    weft_status_t st = grad_toposort(s, cost);
    if (st != WEFT_OK) {
        return st;
    }
    grad_mark_relevant(s, n_wrt, wrt);
    weft_var_t *seed = o->cost_grad;
    if (!seed) {
        st = weft__got(
            s->g, seed = weft_constant_scalar(s->g, weft_type_dtype(weft_var_type(cost)), 1.0));
    }
    s->acc[weft_var_id(cost)] = seed;
    for (size_t k = s->n_order; st == WEFT_OK && k > 0; k--) {
        st = grad_node(s, s->order[k - 1]);
    }
    for (size_t i = 0; st == WEFT_OK && i < n_wrt; i++) {
        st = grad_result(s, i, wrt[i], o, &grads_out[i]);
    }
    return st;
}

static weft_status_t grads_build(weft_graph_t *g, weft_var_t *cost, size_t n_wrt,
                                 weft_var_t *const *wrt, const weft_grad_options_t *options,
                                 weft_var_t **grads_out)
{
    static const weft_grad_options_t defaults = WEFT_GRAD_OPTIONS_INIT;
    const weft_grad_options_t *o = options ? options : &defaults;
    if (!cost || !grads_out || (n_wrt > 0 && !wrt)) {
        return weft_graph_set_error(g, WEFT_EINVAL, "weft_grad: NULL %s",
                                    !cost       ? "cost"
                                    : grads_out ? "wrt array"
                                                : "grads_out");
    }
    weft_status_t st = grad_check_args(g, cost, n_wrt, wrt, o);
    grad_state_t s;
    if (st == WEFT_OK) {
        st = grad_state_init(&s, g);
    }
    if (st != WEFT_OK) {
        return st;
    }
    st = grad_run(&s, cost, n_wrt, wrt, o, grads_out);
    grad_state_free(&s);
    if (st != WEFT_OK) {
        for (size_t i = 0; i < n_wrt; i++) {
            grads_out[i] = NULL;
        }
    }
    return st;
}

weft_var_t **weft_grads_at(weft_graph_t *g, weft_var_t *cost, size_t n_wrt, weft_var_t *const *wrt,
                           const weft_grad_options_t *options, weft_var_t **grads_out,
                           const char *file, int line)
{
    weft__ctor_begin(g);
    for (size_t i = 0; grads_out && i < n_wrt; i++) { /* NULL on every error path */
        grads_out[i] = NULL;
    }
    weft_status_t st = g ? grads_build(g, cost, n_wrt, wrt, options, grads_out) : WEFT_EINVAL;
    return weft__ctor_end(g, st, grads_out, "weft_grad", file, line);
}

weft_var_t *weft_grad_at(weft_graph_t *g, weft_var_t *cost, weft_var_t *wrt, const char *file,
                         int line)
{
    weft_var_t *out = NULL;
    return weft_grads_at(g, cost, 1, &wrt, NULL, &out, file, line) ? out : NULL;
}
