/* In-place priority for update outputs (execution.md §6, rewrites.md §6
 * step 3): `s <- f(s, x)` should run inside s's buffer. The rewrite modes
 * know nothing of updates, so with fast_run the compiler runs the mode with
 * the "inplace" rewrite excluded, then gives each update value's node its
 * in-place variant on the update's own state when the DestroyHandler accepts
 * it (a validated transaction: a rejection changes nothing), then runs the
 * "inplace" rewrite for the rest of the graph. */
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"

static bool has_variant_hook(const weft_op_t *op)
{
    const weft_op_class_t *c = weft_op_class(op);
    size_t end = offsetof(weft_op_class_t, inplace_variant) + sizeof c->inplace_variant;
    return c->size >= end && c->inplace_variant && !weft_op_is_destructive(op);
}

/* Replaces node by its variant destroying input i; WEFT_OK also when the
 * DestroyHandler refuses (nothing changes then). */
static weft_status_t try_variant(weft_function_t *f, weft_apply_t *node, size_t i)
{
    const weft_op_t *op = weft_apply_op(node), *variant = NULL;
    if (weft_op_class(op)->inplace_variant(f->g, op, i, &variant) != WEFT_OK || !variant)
        return WEFT_OK; /* no variant for that input */
    bool ok = false;
    weft_status_t st = weft_dh_can_destroy(f->fg, node, i, variant, &ok);
    if (st != WEFT_OK || !ok) return WEFT_OK;
    size_t n_in = weft_apply_n_inputs(node), n_out = weft_apply_n_outputs(node);
    weft_var_t **in = malloc((n_in + 2 * n_out + 1) * sizeof *in);
    if (!in) return WEFT_ENOMEM;
    weft_var_t **olds = in + n_in, **news = olds + n_out;
    for (size_t k = 0; k < n_in; k++) in[k] = weft_apply_input(node, k);
    const char *file;
    int line;
    weft_apply_trace(node, &file, &line);
    weft_apply_t *na = NULL;
    st = weft_apply_create_at(f->g, variant, n_in, in, file, line, &na);
    if (st == WEFT_OK && weft_apply_n_outputs(na) == n_out) {
        for (size_t k = 0; k < n_out; k++) {
            olds[k] = weft_apply_output(node, k);
            news[k] = weft_apply_output(na, k);
        }
        /* a rejection is reverted by the transaction: not an error here */
        (void)weft_fgraph_replace_all_validate(f->fg, n_out, olds, news, "update_inplace");
    }
    free(in);
    return st == WEFT_ENOMEM ? st : WEFT_OK;
}

weft_status_t weft__update_inplace(weft_function_t *f)
{
    if (f->n_upd == 0) return WEFT_OK;
    weft_status_t st = weft_dh_attach(f->fg, NULL);
    for (size_t u = 0; st == WEFT_OK && u < f->n_upd; u++) {
        weft_var_t *v = weft_fgraph_output(f->fg, f->n_out + u), *s = f->in_vars[f->upd_input[u]];
        weft_apply_t *node = weft_var_owner(v);
        if (!node || !has_variant_hook(weft_apply_op(node))) continue;
        for (size_t i = 0; i < weft_apply_n_inputs(node); i++) {
            if (weft_apply_input(node, i) != s) continue;
            if (!weft_type_equal(weft_var_type(s), weft_var_type(v))) break;
            st = try_variant(f, node, i);
            break;
        }
    }
    if (st != WEFT_OK) return weft__fn_error(NULL, st, "update in-place pass failed");
    return WEFT_OK;
}
