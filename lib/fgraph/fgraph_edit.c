/* FunctionGraph edits: import_var / import_node, the primitive
 * change_node_input, replace / replace_all, remove_node, and adding or
 * removing inputs and outputs. Every edit validates its arguments (and plans
 * its imports) before changing anything; callbacks fire import(s) ->
 * prune(s) -> change per edit. */
#include <stdio.h>
#include <string.h>

#include "fgraph_int.h"

/* Starts a public edit: clears the callback status. */
static void edit_begin(weft_fgraph_t *fg)
{
    fg->cb_status = WEFT_OK;
}

static weft_status_t edit_end(weft_fgraph_t *fg, weft_status_t s)
{
    return s != WEFT_OK ? s : fg->cb_status;
}

weft_status_t weft_fgraph_import_var(weft_fgraph_t *fg, weft_var_t *v, bool import_missing,
                                     const char *reason)
{
    if (!fg) return WEFT_EINVAL;
    weft_status_t s = weft__fg_check_var(fg, v, "import_var: variable");
    if (s != WEFT_OK) return s;
    edit_begin(fg);
    s = weft__fg_plan_import(fg, v, NULL, import_missing);
    if (s == WEFT_OK) s = weft__fg_commit_import(fg, v, reason, WEFT__RANK_GAP);
    return edit_end(fg, s);
}

weft_status_t weft_fgraph_import_node(weft_fgraph_t *fg, weft_apply_t *node, bool import_missing,
                                      const char *reason)
{
    if (!fg || !node)
        return fg ? weft__fg_err(fg, WEFT_EINVAL, "import_node: NULL node") : WEFT_EINVAL;
    if (node->g != fg->g || node->slot_fg)
        return weft__fg_err(fg, node->g != fg->g ? WEFT_EFOREIGN : WEFT_EINVAL,
                            "import_node: node of another context, or an Output pseudo-node");
    edit_begin(fg);
    weft_status_t s = weft__fg_plan_import(fg, NULL, node, import_missing);
    if (s == WEFT_OK) s = weft__fg_commit_import(fg, NULL, reason, WEFT__RANK_GAP);
    return edit_end(fg, s);
}

/* node must be in fg's apply set or be one of fg's live Output pseudo-nodes. */
static weft_status_t check_node_in(weft_fgraph_t *fg, const weft_apply_t *node, const char *fn)
{
    if (!node) return weft__fg_err(fg, WEFT_EINVAL, "%s: NULL node", fn);
    char ab[256];
    weft_apply_describe(node, ab, sizeof(ab));
    if (node->g != fg->g)
        return weft__fg_err(fg, WEFT_EFOREIGN, "%s: %s belongs to another graph context", fn, ab);
    if (weft__fg_is_live_slot(fg, node) || weft__fg_has_apply(fg, node)) return WEFT_OK;
    return weft__fg_err(fg, WEFT_ENOTFOUND, "%s: %s is not in the FunctionGraph", fn, ab);
}

static weft_status_t type_refused(weft_fgraph_t *fg, const weft_var_t *old_var,
                                  const weft_var_t *new_var, const char *what)
{
    char ob[512], nb[512];
    weft__var_describe(old_var, ob, sizeof(ob));
    weft__var_describe(new_var, nb, sizeof(nb));
    return weft__fg_err(fg, WEFT_ETYPE, "%s: %s cannot replace %s (type is not a subtype)", what,
                        nb, ob);
}

static weft_status_t change_input_planned(weft_fgraph_t *fg, weft_apply_t *node, size_t i,
                                          weft_var_t *new_var, const char *reason, uint64_t key);

weft_status_t weft__fg_change_input(weft_fgraph_t *fg, weft_apply_t *node, size_t i,
                                    weft_var_t *new_var, const char *reason, bool check,
                                    uint64_t key)
{
    weft_var_t *old = node->inputs[i];
    if (old == new_var) return WEFT_OK;
    if (check && !weft_type_is_super(old->type, new_var->type)) {
        char ab[256];
        weft_apply_describe(node, ab, sizeof(ab));
        char what[320];
        snprintf(what, sizeof(what), "change_node_input of %s input %zu", ab, i);
        return type_refused(fg, old, new_var, what);
    }
    weft_status_t s = weft__fg_plan_import(fg, new_var, NULL, false);
    if (s != WEFT_OK) return s;
    fg->change_depth++;
    s = change_input_planned(fg, node, i, new_var, reason, key);
    fg->change_depth--;
    return s;
}

/* The change once new_var's import is planned (see weft__fg_change_input). */
static weft_status_t change_input_planned(weft_fgraph_t *fg, weft_apply_t *node, size_t i,
                                          weft_var_t *new_var, const char *reason, uint64_t key)
{
    weft_var_t *old = node->inputs[i];
    weft_status_t s;
    if (!node->slot_fg) /* Output pseudo-nodes are not in the apply set */
        fg->n_back += (size_t)weft__fg_back_edge(node, new_var) - weft__fg_back_edge(node, old);
    node->inputs[i] = new_var;
    if (node->slot_fg) fg->outputs[node->slot] = new_var;
    s = weft__fg_commit_import(fg, new_var, reason, 1);
    if (s == WEFT_OK && !node->slot_fg) weft__fg_rank_edge(fg, node, new_var);
    /* (node, i)'s slot in old's clients, read before the add records the new one. */
    uint32_t old_slot = weft__fg_client_slot(fg, node, i);
    if (s == WEFT_OK && !weft__fg_add_client(fg, new_var, node, i, key))
        s = weft__fg_err(fg, WEFT_ENOMEM, "change_node_input: out of memory");
    uint64_t old_key = WEFT__CLIENT_NOKEY;
    if (s == WEFT_OK) s = weft__fg_remove_client(fg, old, node, i, old_slot, reason, &old_key);
    if (s != WEFT_OK) return s;
    weft__fg_log_change(fg, node, i, old, new_var, old_key);
    fg->last_old_key = old_key;
    weft__fg_fire_change(fg, node, i, old, new_var, reason);
    return WEFT_OK;
}

weft_status_t weft_fgraph_change_node_input(weft_fgraph_t *fg, weft_apply_t *node, size_t i,
                                            weft_var_t *new_var, const char *reason)
{
    if (!fg) return WEFT_EINVAL;
    weft_status_t s = check_node_in(fg, node, "change_node_input");
    if (s == WEFT_OK) s = weft__fg_check_var(fg, new_var, "change_node_input: new variable");
    if (s != WEFT_OK) return s;
    if (i >= node->n_in) {
        char ab[256];
        weft_apply_describe(node, ab, sizeof(ab));
        return weft__fg_err(fg, WEFT_EINVAL, "change_node_input: %s has no input %zu", ab, i);
    }
    if (!node->slot_fg && node->inputs[i] != new_var &&
        (s = weft__fg_refuse_cycle(fg, NULL, node, i, new_var)) != WEFT_OK)
        return s;
    edit_begin(fg);
    return edit_end(fg, weft__fg_change_input(fg, node, i, new_var, reason, true, WEFT__CLIENT_NOKEY));
}

/* Argument checks of one replace pair: both variables valid, var known to fg
 * (in the variable set, or a declared input that nothing uses yet;
 * docs/fgraph.md §1). An unknown variable is an error naming it, not a silent
 * no-op. */
static weft_status_t check_pair(weft_fgraph_t *fg, weft_var_t *var, weft_var_t *new_var)
{
    weft_status_t s = weft__fg_check_var(fg, var, "replace: variable");
    if (s == WEFT_OK) s = weft__fg_check_var(fg, new_var, "replace: new variable");
    if (s != WEFT_OK || weft__fg_has_var(fg, var) || weft__fg_is_input(fg, var)) return s;
    char vb[512];
    weft__var_describe(var, vb, sizeof(vb));
    return weft__fg_err(fg, WEFT_ENOTFOUND, "replace: %s is not in the FunctionGraph", vb);
}

/* Replace without the argument checks (done by the callers). A var no longer
 * in fg (pruned by an earlier pair of the same replace_all) is skipped. */
static weft_status_t replace_one(weft_fgraph_t *fg, weft_var_t *var, weft_var_t *new_var,
                                 const char *reason)
{
    if (!weft_type_is_super(var->type, new_var->type))
        return type_refused(fg, var, new_var, "replace");
    if (!weft__fg_has_var(fg, var) || var == new_var) return WEFT_OK;
    /* Refuse a cycle and validate new_var's import before the first edit: a
     * missing input then leaves the graph untouched. */
    weft_status_t s = weft__fg_refuse_cycle(fg, var, NULL, 0, new_var);
    if (s == WEFT_OK) s = weft__fg_plan_import(fg, new_var, NULL, false);
    if (s != WEFT_OK) return s;
    const weft__cvec_t *c = weft__fg_clients_live(fg, var);
    size_t n = c->n;
    weft_client_t local[8];
    weft_client_t *snap = n <= 8 ? local : weft__vec_alloc(fg->alloc, n, sizeof(*snap));
    if (!snap) return weft__fg_err(fg, WEFT_ENOMEM, "replace: out of memory");
    if (n) memcpy(snap, c->items, n * sizeof(*snap));
    for (size_t k = 0; k < n && s == WEFT_OK; k++) {
        weft_apply_t *node = snap[k].node;
        bool live = weft__fg_is_live_slot(fg, node) || weft__fg_has_apply(fg, node);
        if (!live || node->inputs[snap[k].index] != var) continue;
        s = weft__fg_change_input(fg, node, snap[k].index, new_var, reason, false,
                                  WEFT__CLIENT_NOKEY);
    }
    if (snap != local) weft__free(fg->alloc, snap, n * sizeof(*snap));
    return s;
}

weft_status_t weft_fgraph_replace(weft_fgraph_t *fg, weft_var_t *var, weft_var_t *new_var,
                                  const char *reason)
{
    if (!fg) return WEFT_EINVAL;
    weft_status_t s = check_pair(fg, var, new_var);
    if (s != WEFT_OK) return s;
    edit_begin(fg);
    return edit_end(fg, replace_one(fg, var, new_var, reason));
}

weft_status_t weft_fgraph_replace_all(weft_fgraph_t *fg, size_t n, weft_var_t *const *vars,
                                      weft_var_t *const *new_vars, const char *reason)
{
    if (!fg || (n && (!vars || !new_vars))) return WEFT_EINVAL;
    /* Every pair is checked before the first edit, so a bad one changes nothing. */
    for (size_t k = 0; k < n; k++) {
        weft_status_t s = check_pair(fg, vars[k], new_vars[k]);
        if (s != WEFT_OK) return s;
    }
    for (size_t k = 0; k < n; k++) {
        edit_begin(fg);
        weft_status_t s = edit_end(fg, replace_one(fg, vars[k], new_vars[k], reason));
        if (s != WEFT_OK) return s;
    }
    return WEFT_OK;
}

/* Removes every client of v: output slots are dropped, nodes queued. */
static weft_status_t queue_clients(weft_fgraph_t *fg, weft_var_t *v)
{
    weft__cvec_t *c = &fg->clients[v->id];
    while (c->end > 0) {
        weft_client_t cl = c->items[--c->end];
        if (!cl.node) continue; /* tombstone */
        c->n--;
        if (cl.node->slot_fg) {
            if (weft__fg_is_live_slot(fg, cl.node)) weft__fg_drop_output_slot(fg, cl.node->slot);
        } else if (!weft__pvec_push(fg->alloc, &fg->rm_stack, cl.node)) {
            return weft__fg_err(fg, WEFT_ENOMEM, "remove_node: out of memory");
        }
    }
    return WEFT_OK;
}

/* Iterative removal of node and of everything using its outputs. */
static weft_status_t remove_node_rec(weft_fgraph_t *fg, weft_apply_t *node, const char *reason)
{
    size_t base = fg->rm_stack.n;
    if (!weft__pvec_push(fg->alloc, &fg->rm_stack, node))
        return weft__fg_err(fg, WEFT_ENOMEM, "remove_node: out of memory");
    weft_status_t s = WEFT_OK;
    while (fg->rm_stack.n > base && s == WEFT_OK) {
        weft_apply_t *a = fg->rm_stack.p[--fg->rm_stack.n];
        if (!weft__fg_has_apply(fg, a)) continue;
        weft__fg_detach_node(fg, a, reason);
        for (uint32_t i = 0; i < a->n_in && s == WEFT_OK; i++)
            s = weft__fg_remove_client(fg, a->inputs[i], a, i, UINT32_MAX, reason, NULL);
        for (uint32_t k = 0; k < a->n_out && s == WEFT_OK; k++)
            s = queue_clients(fg, a->outputs[k]);
    }
    fg->rm_stack.n = base;
    return s;
}

weft_status_t weft_fgraph_remove_node(weft_fgraph_t *fg, weft_apply_t *node, const char *reason)
{
    if (!fg) return WEFT_EINVAL;
    weft_status_t s = check_node_in(fg, node, "remove_node");
    if (s != WEFT_OK) return s;
    if (node->slot_fg)
        return weft__fg_err(fg, WEFT_EINVAL,
                            "remove_node: Output(%zu) is a pseudo-node; use "
                            "weft_fgraph_remove_output",
                            node->slot);
    edit_begin(fg);
    return edit_end(fg, remove_node_rec(fg, node, reason));
}

weft_status_t weft_fgraph_add_input(weft_fgraph_t *fg, weft_var_t *v)
{
    if (!fg) return WEFT_EINVAL;
    weft_status_t s = weft__fg_check_var(fg, v, "add_input: variable");
    if (s != WEFT_OK) return s;
    if (v->owner || (v->flags & WEFT__VAR_CONSTANT)) {
        char vb[512];
        weft__var_describe(v, vb, sizeof(vb));
        return weft__fg_err(fg, WEFT_EINVAL, "add_input: %s %s", vb,
                            v->owner ? "has an owner" : "is a constant");
    }
    if (!weft__fg_reserve(fg)) return weft__fg_err(fg, WEFT_ENOMEM, "add_input: out of memory");
    if (weft__fg_is_input(fg, v)) return WEFT_OK;
    return weft__fg_add_input(fg, v, true);
}

weft_status_t weft_fgraph_remove_input(weft_fgraph_t *fg, size_t k, const char *reason)
{
    if (!fg) return WEFT_EINVAL;
    if (k >= fg->n_in)
        return weft__fg_err(fg, WEFT_EINVAL, "remove_input: no input %zu (%zu inputs)", k,
                            fg->n_in);
    edit_begin(fg);
    fg->slots_epoch++;
    weft_var_t *v = fg->inputs[k];
    memmove(fg->inputs + k, fg->inputs + k + 1, (fg->n_in - k - 1) * sizeof(*fg->inputs));
    memmove(fg->input_mutable + k, fg->input_mutable + k + 1, (fg->n_in - k - 1) * sizeof(bool));
    fg->n_in--;
    weft__fg_updates_drop(fg, k, true);
    fg->vflags[v->id] &= (uint8_t)~WEFT__VF_INPUT;
    if (!weft__fg_has_var(fg, v)) return edit_end(fg, WEFT_OK);
    size_t base = fg->rm_stack.n;
    weft_status_t s = queue_clients(fg, v);
    while (s == WEFT_OK && fg->rm_stack.n > base) {
        weft_apply_t *a = fg->rm_stack.p[--fg->rm_stack.n];
        s = remove_node_rec(fg, a, reason);
    }
    fg->rm_stack.n = base;
    fg->vflags[v->id] &= (uint8_t)~WEFT__VF_IN;
    fg->n_vars_in--;
    return edit_end(fg, s);
}

weft_status_t weft_fgraph_add_output(weft_fgraph_t *fg, weft_var_t *v, const char *reason)
{
    if (!fg) return WEFT_EINVAL;
    weft_status_t s = weft__fg_check_var(fg, v, "add_output: variable");
    if (s != WEFT_OK) return s;
    edit_begin(fg);
    return edit_end(fg, weft__fg_add_output(fg, v, false, reason));
}

weft_status_t weft_fgraph_remove_output(weft_fgraph_t *fg, size_t k, const char *reason)
{
    if (!fg) return WEFT_EINVAL;
    if (k >= fg->n_out)
        return weft__fg_err(fg, WEFT_EINVAL, "remove_output: no output %zu (%zu outputs)", k,
                            fg->n_out);
    edit_begin(fg);
    weft_var_t *v = fg->outputs[k];
    weft_apply_t *p = fg->out_nodes[k];
    weft__fg_drop_output_slot(fg, k);
    return edit_end(fg, weft__fg_remove_client(fg, v, p, 0, UINT32_MAX, reason, NULL));
}
