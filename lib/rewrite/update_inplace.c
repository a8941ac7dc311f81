/* The update_inplace rewrite (docs/execution.md §6, docs/rewrites.md §6.3): an
 * update `s <- f(s, x)` should run inside s's buffer. For each update pair of
 * the fgraph (weft_fgraph_set_update), the node computing the output gets its
 * in-place variant on the updated input when its op has one and the
 * DestroyHandler accepts it: one validated transaction per update, so a
 * rejection changes nothing. Registered just before "inplace", which would
 * otherwise be free to give the state's buffer to another reader first. */
#include <stdint.h>
#include <stdlib.h>

#include "rewrite_int.h"
#include "weft/destroy.h"

/* Replaces every output of node by its variant destroying input i, counting
 * an accepted transaction in *changes and a rejected one in *failed. */
static weft_status_t update_try(weft_fgraph_t *fg, weft_apply_t *node, size_t i, size_t *changes,
                                size_t *failed)
{
    weft_apply_t *nn;
    weft_status_t st = weft__inplace_variant_node(fg, node, i, &nn);
    size_t n_out = weft_apply_n_outputs(node);
    if (st != WEFT_OK || !nn || weft_apply_n_outputs(nn) != n_out) return st;
    weft_var_t **olds = weft__vec_malloc(2 * n_out, sizeof *olds);
    if (!olds) return WEFT_ENOMEM;
    weft_var_t **news = olds + n_out;
    for (size_t k = 0; k < n_out; k++) {
        olds[k] = weft_apply_output(node, k);
        news[k] = weft_apply_output(nn, k);
    }
    st = weft_fgraph_replace_all_validate(fg, n_out, olds, news, "update_inplace");
    free(olds);
    *changes += st == WEFT_OK;
    *failed += st != WEFT_OK;
    return st == WEFT_ENOMEM ? st : WEFT_OK; /* a rejection was reverted: not an error */
}

/* Output k's update, when it is computed by a node that may destroy the
 * updated input s (its first occurrence among the node's inputs). */
static weft_status_t update_one(weft_fgraph_t *fg, size_t k, size_t *changes, size_t *failed)
{
    size_t in = weft_fgraph_update_input(fg, k);
    if (in == SIZE_MAX) return WEFT_OK;
    weft_var_t *v = weft_fgraph_output(fg, k), *s = weft_fgraph_input(fg, in);
    weft_apply_t *node = weft_var_owner(v);
    if (!node || !weft__inplace_has_variant(weft_apply_op(node))) return WEFT_OK;
    for (size_t i = 0; i < weft_apply_n_inputs(node); i++) {
        if (weft_apply_input(node, i) != s) continue;
        if (!weft_type_equal(weft_var_type(s), weft_var_type(v))) return WEFT_OK;
        return update_try(fg, node, i, changes, failed);
    }
    return WEFT_OK;
}

static weft_status_t update_inplace_apply(weft_fgraph_t *fg, void *user,
                                          weft_rewrite_stats_t *stats, size_t *n_changes)
{
    if (weft_fgraph_n_updates(fg) == 0) return WEFT_OK;
    size_t failed = 0;
    weft_status_t st = weft_dh_attach(fg, NULL);
    for (size_t k = 0; st == WEFT_OK && k < weft_fgraph_n_outputs(fg); k++)
        st = update_one(fg, k, n_changes, &failed);
    if (st == WEFT_OK && failed) st = weft_rewrite_stats_record(stats, user, 0, failed, 0.0);
    return st;
}

weft_status_t weft_rewriter_update_inplace_create(const char *name, weft_rewriter_t **out)
{
    if (!out) return WEFT_EINVAL;
    weft_status_t st = weft_rewriter_graph_create(name ? name : "update_inplace",
                                                  update_inplace_apply, NULL, NULL, out);
    if (st == WEFT_OK) (*out)->user = (*out)->name;
    return st;
}
