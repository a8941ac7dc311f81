/* The IfElse rewrites (docs/control-flow.md §3), PyTensor's ifelse.py ones:
 * a constant condition folds to its side, identical sides collapse
 * (cond_remove_identical), IfElses on one condition merge (cond_merge_ifs),
 * an elementwise node over IfElse outputs of one condition moves into the
 * branches (ifelse_lift_single_if_through_acceptable_ops), and an IfElse
 * returns its then side as a view (cond_make_inplace). */
#include <stdlib.h>
#include <string.h>

#include "graph/ctor_int.h"
#include "graph/ifelse_id.h"
#include "rewrite_int.h"
#include "weft/ifelse.h"
#include "weft/tensor.h"

/* The truth of a constant 0-d condition; false when c is not a constant. */
static bool constant_truth(const weft_var_t *c, bool *truth)
{
    const void *data;
    size_t nbytes;
    weft_tensor_t *t = NULL;
    if (!weft_var_is_constant(c) || weft_constant_data(c, &data, &nbytes) != WEFT_OK) return false;
    const weft_type_t *ty = weft_var_type(c);
    if (weft_tensor_from_data(weft_type_dtype(ty), 0, NULL, NULL, (void *)(uintptr_t)data, &t) !=
        WEFT_OK)
        return false;
    *truth = weft__ifelse_cond_true(weft_tensor_flat_get(t, 0));
    weft_tensor_release(t);
    return true;
}

/* The side replaces the output: it is that output's value, so any type the
 * IfElse's unified type admits is fine (a then side of static length 1 for
 * an output of unknown length is not a dropped broadcast here). */
static bool side_fits(const weft_fgraph_t *fg, const weft_var_t *out, const weft_var_t *side)
{
    return weft_fgraph_n_clients(fg, out) > 0 &&
           weft_type_is_super(weft_var_type(out), weft_var_type(side));
}

/* IfElse(constant c, t..., e...) -> t... or e... */
static weft_status_t ifelse_constant_cond(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                          weft_rewrite_result_t *res)
{
    (void)user;
    size_t n = weft__ifelse_pairs(node);
    bool truth;
    if (!n || !constant_truth(weft_apply_input(node, 0), &truth)) return WEFT_OK;
    weft_status_t st = WEFT_OK;
    for (size_t i = 0; i < n && st == WEFT_OK; i++) {
        weft_var_t *o = weft_apply_output(node, i), *v = weft_apply_input(node, (truth ? 1 : 1 + n) + i);
        if (side_fits(fg, o, v)) st = weft_rewrite_result_replace(res, o, v);
    }
    return st;
}

/* A pair whose sides are one variable: the output is that variable. */
static weft_status_t ifelse_same_branches(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                          weft_rewrite_result_t *res)
{
    (void)user;
    size_t n = weft__ifelse_pairs(node);
    weft_status_t st = WEFT_OK;
    for (size_t i = 0; i < n && st == WEFT_OK; i++) {
        weft_var_t *t = weft_apply_input(node, 1 + i), *o = weft_apply_output(node, i);
        if (t == weft_apply_input(node, 1 + n + i) && side_fits(fg, o, t))
            st = weft_rewrite_result_replace(res, o, t);
    }
    return st;
}

/* Whether `target` is an ancestor of (or is) node `from`, by a walk up the
 * inputs. Errors: *oom. */
static bool reaches(const weft_apply_t *from, const weft_apply_t *target, size_t n_applies,
                    bool *oom)
{
    unsigned char *seen = calloc(n_applies + 1, 1);
    const weft_apply_t **stack = malloc((n_applies + 1) * sizeof *stack);
    bool found = false;
    *oom = !seen || !stack;
    size_t sp = 0;
    if (!*oom) stack[sp++] = from;
    while (sp && !found) {
        const weft_apply_t *a = stack[--sp];
        found = a == target;
        for (size_t k = 0; k < weft_apply_n_inputs(a) && !found; k++) {
            const weft_apply_t *p = weft_var_owner(weft_apply_input(a, k));
            if (p && weft_apply_id(p) < n_applies && !seen[weft_apply_id(p)]) {
                seen[weft_apply_id(p)] = 1;
                stack[sp++] = p;
            }
        }
    }
    free(seen);
    free(stack);
    return found;
}

/* Another IfElse on node's condition, independent of node, that fits with
 * node's pairs in one node; NULL when none. */
static weft_apply_t *merge_partner(weft_fgraph_t *fg, weft_apply_t *node, weft_status_t *st)
{
    const weft_client_t *cl;
    size_t nc, n = weft__ifelse_pairs(node), na = weft_graph_n_applies(weft_fgraph_graph(fg));
    if ((*st = weft_fgraph_clients(fg, weft_apply_input(node, 0), &cl, &nc)) != WEFT_OK) return NULL;
    for (size_t k = 0; k < nc; k++) {
        weft_apply_t *b = cl[k].node;
        size_t m = weft_fgraph_contains_apply(fg, b) ? weft__ifelse_pairs(b) : 0;
        if (b == node || !m || cl[k].index != 0 || n + m > WEFT_IFELSE_MAX) continue;
        bool oom1 = false, oom2 = false;
        bool dep = reaches(b, node, na, &oom1) || reaches(node, b, na, &oom2);
        if (oom1 || oom2) {
            *st = WEFT_ENOMEM;
            return NULL;
        }
        if (!dep) return b;
    }
    return NULL;
}

/* IfElse(c, a..., b...) and IfElse(c, d..., e...), neither depending on the
 * other -> IfElse(c, a..., d..., b..., e...). */
static weft_status_t ifelse_merge(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                  weft_rewrite_result_t *res)
{
    (void)user;
    weft_status_t st = WEFT_OK;
    weft_apply_t *b = weft__ifelse_pairs(node) ? merge_partner(fg, node, &st) : NULL;
    if (!b) return st;
    size_t n = weft__ifelse_pairs(node), m = weft__ifelse_pairs(b);
    weft_var_t *tv[WEFT_IFELSE_MAX], *ev[WEFT_IFELSE_MAX], *out[WEFT_IFELSE_MAX];
    for (size_t i = 0; i < n; i++) {
        tv[i] = weft_apply_input(node, 1 + i);
        ev[i] = weft_apply_input(node, 1 + n + i);
    }
    for (size_t i = 0; i < m; i++) {
        tv[n + i] = weft_apply_input(b, 1 + i);
        ev[n + i] = weft_apply_input(b, 1 + m + i);
    }
    weft_graph_t *g = weft_fgraph_graph(fg);
    st = weft__got(g, weft_ifelse(g, weft_apply_input(node, 0), n + m, tv, ev, out));
    for (size_t i = 0; i < n + m && st == WEFT_OK; i++) {
        weft_var_t *old = i < n ? weft_apply_output(node, i) : weft_apply_output(b, i - n);
        if (weft_fgraph_n_clients(fg, old) > 0) st = weft_rewrite_result_replace(res, old, out[i]);
    }
    return st;
}

/* The IfElse node (and its condition) all of node's non-constant inputs
 * come from, each output read by node alone; NULL when not so. */
static weft_var_t *lift_cond(weft_fgraph_t *fg, const weft_apply_t *node)
{
    weft_var_t *c = NULL;
    for (size_t k = 0; k < weft_apply_n_inputs(node); k++) {
        weft_var_t *v = weft_apply_input(node, k);
        if (weft_var_is_constant(v)) continue;
        weft_apply_t *p = weft_var_owner(v);
        if (!p || !weft__ifelse_pairs(p) || weft_fgraph_n_clients(fg, v) != 1) return NULL;
        weft_var_t *pc = weft_apply_input(p, 0);
        if (c && pc != c) return NULL;
        c = pc;
    }
    return c;
}

/* The side of IfElse output v (then or else), or v itself (a constant). */
static weft_var_t *side_of(weft_var_t *v, bool then)
{
    weft_apply_t *p = weft_var_owner(v);
    if (!p) return v;
    size_t n = weft__ifelse_pairs(p);
    for (size_t i = 0; i < n; i++)
        if (weft_apply_output(p, i) == v) return weft_apply_input(p, (then ? 1 : 1 + n) + i);
    return v;
}

/* op(IfElse(c, a, b), IfElse(c, d, e)) -> IfElse(c, op(a, d), op(b, e)) for
 * an out-of-place elementwise op whose non-constant inputs are all IfElse
 * outputs on c that nothing else reads: op then runs in the branch taken
 * only, on the side's own value (no copy of an else side first), and the
 * branch's elementwise chain can fuse. */
static weft_status_t ifelse_lift_elemwise(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                          weft_rewrite_result_t *res)
{
    (void)user;
    int kind;
    size_t n_in = weft_apply_n_inputs(node);
    if (!weft__ew_kind(node, &kind) || weft_apply_n_outputs(node) != 1 || n_in > 8) return WEFT_OK;
    weft_var_t *c = lift_cond(fg, node);
    if (!c) return WEFT_OK;
    weft_graph_t *g = weft_fgraph_graph(fg);
    weft_var_t *tin[8], *ein[8], *side[2] = {NULL, NULL};
    for (size_t k = 0; k < n_in; k++) {
        tin[k] = side_of(weft_apply_input(node, k), true);
        ein[k] = side_of(weft_apply_input(node, k), false);
    }
    weft_apply_t *ta = weft_apply_create(g, weft_apply_op(node), n_in, tin);
    weft_apply_t *ea = ta ? weft_apply_create(g, weft_apply_op(node), n_in, ein) : NULL;
    weft_status_t st = ea ? WEFT_OK : weft__ctor_status(g);
    if (st == WEFT_OK) {
        side[0] = weft_apply_output(ta, 0);
        side[1] = weft_apply_output(ea, 0);
        st = weft__got(g, side[0] = weft_ifelse1(g, c, side[0], side[1]));
    }
    if (st == WEFT_OK && weft__can_replace(weft_apply_output(node, 0), side[0]))
        st = weft_rewrite_result_replace(res, weft_apply_output(node, 0), side[0]);
    return st;
}

/* IfElse{n, as_view=0} -> IfElse{n, as_view=1}: output i views then_i when
 * the then branch is taken instead of copying it (PyTensor's
 * cond_make_inplace, with its rule: on graphs of 500 nodes or more, an
 * IfElse of 0-d outputs only is left as it is). A validated replacement:
 * the DestroyHandler refuses it when a view would be read after an
 * in-place node overwrote then_i, and the node then keeps its copy. */
static weft_status_t ifelse_inplace(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                    weft_rewrite_result_t *res)
{
    (void)user;
    size_t n = weft__ifelse_pairs(node), n_in = weft_apply_n_inputs(node);
    const weft_op_t *op = weft_apply_op(node);
    const weft__ifelse_props_t *p = n ? weft_op_props(op) : NULL;
    if (!p || p->as_view) return WEFT_OK;
    bool all_0d = true;
    for (size_t i = 0; i < n; i++)
        all_0d = all_0d && weft_type_ndim(weft_var_type(weft_apply_output(node, i))) == 0;
    if (all_0d && weft_fgraph_n_applies(fg) >= 500) return WEFT_OK;
    weft__ifelse_props_t vp = {p->n, 1};
    weft_graph_t *g = weft_fgraph_graph(fg);
    const weft_op_t *vop = NULL;
    weft_status_t st = weft_op_create(g, weft_op_class(op), &vp, &vop);
    weft_var_t *in[1 + 2 * WEFT_IFELSE_MAX];
    for (size_t k = 0; st == WEFT_OK && k < n_in; k++) in[k] = weft_apply_input(node, k);
    weft_apply_t *va = st == WEFT_OK ? weft_apply_create(g, vop, n_in, in) : NULL;
    if (st == WEFT_OK && !va) st = weft__ctor_status(g);
    for (size_t i = 0; i < n && st == WEFT_OK; i++)
        if (weft_fgraph_n_clients(fg, weft_apply_output(node, i)) > 0)
            st = weft_rewrite_result_replace(res, weft_apply_output(node, i),
                                             weft_apply_output(va, i));
    return st;
}

const weft__builtin_node_t weft__ifelse_nodes[] = {
    {"ifelse_constant_cond", ifelse_constant_cond, {"IfElse", NULL}},
    {"ifelse_same_branches", ifelse_same_branches, {"IfElse", NULL}},
    {"ifelse_merge", ifelse_merge, {"IfElse", NULL}},
    {"ifelse_lift_elemwise", ifelse_lift_elemwise, {NULL}}, /* every elementwise class */
    {"ifelse_inplace", ifelse_inplace, {"IfElse", NULL}},
};
const size_t weft__n_ifelse_nodes = sizeof weft__ifelse_nodes / sizeof weft__ifelse_nodes[0];
