/* ReplaceValidate with History, built into every fgraph: a change log
 * (checkpoint / revert), validate, and the transactional
 * replace_all_validate[_remove]. A revert undoes changes newest-first with
 * type checks skipped, reinserting each client entry at its old position (by its order key), and
 * re-imports the same (pruned but context-owned) node objects. */
#include <stdio.h>
#include <string.h>

#include "fgraph_int.h"

void weft__fg_log_change(weft_fgraph_t *fg, weft_apply_t *node, size_t i, weft_var_t *old_var,
                         weft_var_t *new_var, uint64_t old_key)
{
    if (!fg->logging || fg->reverting) return;
    if (!weft__vec_grow(fg->alloc, (void **)&fg->log, &fg->log_cap, fg->n_log + 1,
                        sizeof(*fg->log))) {
        /* Without the entry the transaction cannot be undone: poison it. */
        if (fg->cb_status == WEFT_OK)
            fg->cb_status = weft__fg_err(fg, WEFT_ENOMEM, "history: out of memory");
        return;
    }
    fg->log[fg->n_log++] = (weft__hist_t){node, old_var, new_var, i, old_key};
}

void weft__fg_note_import(weft_fgraph_t *fg, weft_apply_t *node)
{
    if (!(fg->aflags[node->id] & WEFT__AF_REMOVED) || fg->reintroduced) return;
    fg->reintroduced = true;
    char ab[200];
    weft_apply_describe(node, ab, sizeof(ab));
    snprintf(fg->reintro_msg, sizeof(fg->reintro_msg), "%s", ab);
}

weft_status_t weft_fgraph_checkpoint(weft_fgraph_t *fg, uint64_t *token)
{
    if (!fg || !token) return WEFT_EINVAL;
    fg->n_log = 0;
    fg->logging = true;
    fg->token = ++fg->token_counter;
    *token = fg->token;
    return WEFT_OK;
}

weft_status_t weft_fgraph_revert(weft_fgraph_t *fg, uint64_t token)
{
    if (!fg) return WEFT_EINVAL;
    if (token == 0 || token != fg->token || !fg->logging)
        return weft__fg_err(fg, WEFT_ESTATE, "revert: token %llu is not the newest checkpoint",
                            (unsigned long long)token);
    fg->reverting = true;
    fg->cb_status = WEFT_OK;
    weft_status_t first = WEFT_OK;
    while (fg->n_log > 0) {
        weft__hist_t h = fg->log[--fg->n_log];
        bool live = weft__fg_is_live_slot(fg, h.node) || weft__fg_has_apply(fg, h.node);
        if (!live || h.node->inputs[h.index] != h.new_var) continue;
        weft_status_t s =
            weft__fg_change_input(fg, h.node, h.index, h.old_var, "Revert", false, h.old_key);
        if (s != WEFT_OK && first == WEFT_OK) first = s;
    }
    fg->reverting = false;
    return first != WEFT_OK ? first : fg->cb_status;
}

weft_status_t weft_fgraph_validate(weft_fgraph_t *fg)
{
    if (!fg) return WEFT_EINVAL;
    for (size_t k = 0; k < fg->n_feat; k++) {
        weft_feature_t *f = fg->features[k];
        if (f->cls->size <
                offsetof(weft_feature_class_t, on_validate) + sizeof(f->cls->on_validate) ||
            !f->cls->on_validate)
            continue;
        fg->err[0] = '\0';
        weft_status_t s = f->cls->on_validate(f, fg);
        if (s == WEFT_OK) continue;
        if (s == WEFT_ENOMEM) return weft__fg_feature_nomem(fg, f, "validate");
        if (!fg->err[0])
            weft__fg_err(fg, s, "validate: feature %s rejected the graph",
                         f->cls->name ? f->cls->name : "?");
        return s;
    }
    if (fg->reintroduced) { /* ReplaceValidate's own check, after the given features */
        fg->reintroduced = false;
        return weft__fg_err(fg, WEFT_EINCONSISTENT, "Trying to reintroduce a removed node: %s",
                            fg->reintro_msg);
    }
    return WEFT_OK;
}

/* Reverts the open transaction, keeping the error text that caused it. */
static weft_status_t rollback(weft_fgraph_t *fg, uint64_t token, weft_status_t s)
{
    char msg[WEFT__ERR_CAP];
    memcpy(msg, fg->err, sizeof(msg));
    weft_fgraph_revert(fg, token);
    fg->logging = false;
    fg->n_log = 0;
    memcpy(fg->err, msg, sizeof(msg));
    return s;
}

static weft_status_t still_there(weft_fgraph_t *fg, size_t n_remove, weft_apply_t *const *remove)
{
    for (size_t k = 0; k < n_remove; k++) {
        if (!remove[k] || !weft__fg_has_apply(fg, remove[k]) || remove[k]->g != fg->g) continue;
        char ab[256];
        weft_apply_describe(remove[k], ab, sizeof(ab));
        return weft__fg_err(fg, WEFT_EINCONSISTENT, "replacement did not remove %s", ab);
    }
    return WEFT_OK;
}

static weft_status_t transaction(weft_fgraph_t *fg, size_t n, weft_var_t *const *vars,
                                 weft_var_t *const *new_vars, size_t n_remove,
                                 weft_apply_t *const *remove, const char *reason)
{
    if (!fg || (n && (!vars || !new_vars)) || (n_remove && !remove)) return WEFT_EINVAL;
    uint64_t token;
    weft_fgraph_checkpoint(fg, &token);
    weft_status_t s = weft_fgraph_replace_all(fg, n, vars, new_vars, reason);
    if (s == WEFT_OK) s = weft_fgraph_validate(fg);
    if (s == WEFT_OK) s = still_there(fg, n_remove, remove);
    if (s != WEFT_OK) return rollback(fg, token, s);
    if (!weft__fg_reserve(fg))
        return rollback(fg, token, weft__fg_err(fg, WEFT_ENOMEM, "replace: out of memory"));
    for (size_t k = 0; k < n_remove; k++)
        if (remove[k] && remove[k]->g == fg->g) fg->aflags[remove[k]->id] |= WEFT__AF_REMOVED;
    fg->logging = false;
    fg->n_log = 0;
    weft__fg_report_replace(fg, n, vars, new_vars, reason);
    return WEFT_OK;
}

weft_status_t weft_fgraph_replace_all_validate(weft_fgraph_t *fg, size_t n, weft_var_t *const *vars,
                                               weft_var_t *const *new_vars, const char *reason)
{
    return transaction(fg, n, vars, new_vars, 0, NULL, reason);
}

weft_status_t weft_fgraph_replace_validate(weft_fgraph_t *fg, weft_var_t *var, weft_var_t *new_var,
                                           const char *reason)
{
    return transaction(fg, 1, &var, &new_var, 0, NULL, reason);
}

weft_status_t weft_fgraph_replace_all_validate_remove(weft_fgraph_t *fg, size_t n,
                                                      weft_var_t *const *vars,
                                                      weft_var_t *const *new_vars, size_t n_remove,
                                                      weft_apply_t *const *remove,
                                                      const char *reason)
{
    return transaction(fg, n, vars, new_vars, n_remove, remove, reason);
}
