/* Aliasing at the function boundary (docs/execution.md §7): DeepCopy nodes on
 * output slots whose value may share memory with an input, a constant or a
 * later output, and the final check that no destroyer overwrites a protected
 * input or an output's buffer (rule D6, on the graph as compiled;
 * docs/execution.md §1 step 6). */
#include <stdlib.h>
#include <string.h>

#include "graph/ctor_int.h"
#include "compile_int.h"

static weft_status_t deepcopy_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                        weft_var_t *const *in, size_t *n_out,
                                        const weft_type_t **out)
{
    (void)op;
    if (n_in != 1) return weft_graph_set_error(g, WEFT_EINVAL, "DeepCopyOp takes 1 input");
    *n_out = 1;
    out[0] = weft_var_type(in[0]);
    return WEFT_OK;
}

static weft_status_t deepcopy_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                      weft_tensor_t **out, weft_kernel_ctx_t *ctx)
{
    (void)node;
    weft_status_t st = weft_kernel_alloc_output(ctx, &out[0], weft_tensor_dtype(in[0]),
                                                weft_tensor_ndim(in[0]), weft_tensor_shape(in[0]));
    if (st != WEFT_OK) return st;
    st = weft_tensor_copy(out[0], in[0]);
    return st == WEFT_OK ? WEFT_OK : weft_kernel_error(ctx, st, "%s", weft_tensor_last_error());
}

static const weft_op_class_t deepcopy_class = {
    .size = sizeof(weft_op_class_t),
    .name = "DeepCopyOp",
    .make_node = deepcopy_make_node,
    .perform = deepcopy_perform,
};

/* Input index aliased by output k of a (view_map or destroy_map), or -1. */
static long alias_input(const weft_apply_t *a, size_t k)
{
    const weft_op_alias_t *e;
    size_t n;
    weft_op_view_map(weft_apply_op(a), &e, &n);
    for (size_t i = 0; i < n; i++)
        if (e[i].output == k) return (long)e[i].input;
    weft_op_destroy_map(weft_apply_op(a), &e, &n);
    for (size_t i = 0; i < n; i++)
        if (e[i].output == k) return (long)e[i].input;
    return -1;
}

weft_var_t *weft__alias_root(weft_var_t *v)
{
    for (;;) {
        weft_apply_t *a = weft_var_owner(v);
        if (!a) return v;
        long i = alias_input(a, weft_var_index(v));
        if (i < 0) return v;
        v = weft_apply_input(a, (size_t)i);
    }
}

static weft_apply_t *output_slot_node(weft_fgraph_t *fg, size_t k)
{
    const weft_client_t *cl;
    size_t n;
    if (weft_fgraph_clients(fg, weft_fgraph_output(fg, k), &cl, &n) != WEFT_OK) return NULL;
    for (size_t i = 0; i < n; i++)
        if (weft_apply_is_output_slot(cl[i].node) && weft_apply_output_slot(cl[i].node) == k)
            return cl[i].node;
    return NULL;
}

typedef struct root_ref {
    weft_var_t *root;
    size_t k;
} root_ref_t;

static int cmp_root(const void *a, const void *b)
{
    const root_ref_t *x = a, *y = b;
    if (x->root != y->root) return (uintptr_t)x->root < (uintptr_t)y->root ? -1 : 1;
    return (x->k > y->k) - (x->k < y->k);
}

/* need[k]: output slot k needs a copy (docs/execution.md §7): a later output
 * shares its alias root, or its root is an input or a constant - except an
 * update whose root is its own state (computed in place, or s <- s).
 * Sorting (root, k) pairs finds shared roots in O(n log n). */
static weft_status_t find_copies(weft_function_t *f, bool *need)
{
    size_t n = weft_fgraph_n_outputs(f->fg);
    root_ref_t *r = malloc((n + 1) * sizeof *r);
    if (!r) return weft__fn_error(NULL, WEFT_ENOMEM, "out of memory");
    for (size_t k = 0; k < n; k++)
        r[k] = (root_ref_t){weft__alias_root(weft_fgraph_output(f->fg, k)), k};
    qsort(r, n, sizeof *r, cmp_root);
    for (size_t i = 0; i < n; i++) {
        size_t k = r[i].k;
        weft_var_t *root = r[i].root;
        bool later = i + 1 < n && r[i + 1].root == root;
        bool own_state = k >= f->n_out && f->in_vars[f->upd_input[k - f->n_out]] == root;
        need[k] = later || (!weft_var_owner(root) && !own_state);
    }
    free(r);
    return WEFT_OK;
}

weft_status_t weft__insert_deepcopies(weft_function_t *f)
{
    weft_fgraph_t *fg = f->fg;
    const weft_op_t *op = NULL;
    size_t n = weft_fgraph_n_outputs(fg);
    bool *need = calloc(n + 1, sizeof *need);
    weft_status_t st =
        need ? find_copies(f, need) : weft__fn_error(NULL, WEFT_ENOMEM, "out of memory");
    for (size_t k = 0; st == WEFT_OK && k < n; k++) {
        if (!need[k]) continue;
        st = op ? WEFT_OK : weft_op_create(f->g, &deepcopy_class, NULL, &op);
        weft_var_t *v = weft_fgraph_output(fg, k), *c = NULL;
        if (st == WEFT_OK)
            st = weft__got(f->g, c = weft_op_call_at(f->g, op, 1, &v, __FILE__, __LINE__));
        weft_apply_t *slot = st == WEFT_OK ? output_slot_node(fg, k) : NULL;
        if (st == WEFT_OK && !slot) st = WEFT_ENOTFOUND;
        if (st == WEFT_OK) st = weft_fgraph_change_node_input(fg, slot, 0, c, "deepcopy");
        if (st != WEFT_OK)
            weft__fn_error(NULL, st, "inserting a DeepCopyOp on output %zu: %s", k,
                           weft_fgraph_last_error(fg));
    }
    free(need);
    return st;
}

static weft_status_t protected_error(weft_apply_t *a, weft_var_t *victim, const char *what)
{
    char node[256], var[128];
    weft_apply_describe(a, node, sizeof node);
    weft_var_print(victim, var, sizeof var);
    return weft__fn_error(NULL, WEFT_EINCONSISTENT,
                          "Trying to destroy a protected variable: %s (%s) is destroyed by %s",
                          var, what, node);
}

/* Output o shares root r's buffer and is not computed from destroyer d's
 * output: d overwrites it. */
static bool output_is_victim(weft_var_t *o, weft_var_t *r, const weft_apply_t *d)
{
    for (weft_var_t *v = o;;) {
        weft_apply_t *a = weft_var_owner(v);
        if (a == d) return false;
        long i = a ? alias_input(a, weft_var_index(v)) : -1;
        if (i < 0) return v == r;
        v = weft_apply_input(a, (size_t)i);
    }
}

weft_status_t weft__check_protected(weft_function_t *f, const bool *mutable_in)
{
    weft_apply_t *const *nodes;
    size_t n;
    weft_status_t st = weft_fgraph_applies(f->fg, &nodes, &n);
    if (st != WEFT_OK) return weft__fn_error(NULL, st, "listing nodes failed");
    for (size_t i = 0; i < n; i++) {
        const weft_op_alias_t *e;
        size_t nd;
        weft_op_destroy_map(weft_apply_op(nodes[i]), &e, &nd);
        for (size_t d = 0; d < nd; d++) {
            weft_var_t *r = weft__alias_root(weft_apply_input(nodes[i], e[d].input));
            for (size_t k = 0; k < f->n_in; k++)
                if (f->in_vars[k] == r && !mutable_in[k])
                    return protected_error(nodes[i], r, "an input not declared mutable");
            if (weft_var_is_constant(r)) return protected_error(nodes[i], r, "a constant");
            for (size_t k = 0; k < weft_fgraph_n_outputs(f->fg); k++)
                if (output_is_victim(weft_fgraph_output(f->fg, k), r, nodes[i]))
                    return protected_error(nodes[i], weft_fgraph_output(f->fg, k),
                                           "a function output");
        }
    }
    return WEFT_OK;
}

