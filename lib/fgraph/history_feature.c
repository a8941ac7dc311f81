/* The History feature (weft/history.h): a log of changes with revert to any
 * checkpoint and redo. Distinct from the built-in single-transaction log of
 * history.c, which ReplaceValidate uses; a rollback of that one fires
 * ordinary changes, which this feature records like any other.
 *
 * Invariant: entries [0, pos) are applied, [pos, n) are reverted (redoable);
 * tokens increase along the log, so a token is found by binary search. For
 * every applied CHANGE entry e, e.node->inputs[e.index] == e.new_var, and
 * old_key is the order key (node, index) had among old_var's clients; for a
 * reverted one, inputs[index] == old_var and new_key is its key among
 * new_var's clients (so a revert and a redo put each client entry back where
 * it was). */
#include <stdio.h>
#include <string.h>

#include "base/vec.h"
#include "fgraph_int.h"
#include "weft/history.h"

typedef struct hentry {
    weft_history_entry_t e;
    uint64_t old_key, new_key;
    uint64_t slots_epoch; /* fg->slots_epoch when recorded */
} hentry_t;

typedef struct history {
    weft__fg_feature_hdr_t h; /* first member */
    hentry_t *log;
    size_t n, pos, cap;
    uint64_t origin;     /* token of the log's start */
    uint64_t next_token; /* last token handed to an entry */
    bool replaying;      /* revert/redo running: do not record */
} history_t;

/* Drops the redo tail before a new entry (a new change forks the history). */
static weft_status_t record(weft_fgraph_t *fg, history_t *h, weft_history_entry_t e,
                            uint64_t old_key)
{
    h->n = h->pos;
    if (!weft__vec_grow(h->h.alloc, (void **)&h->log, &h->cap, h->n + 1, sizeof(*h->log))) {
        /* The log can no longer undo: forget it, so every old token is stale. */
        h->n = h->pos = 0;
        h->origin = ++h->next_token;
        return weft__fg_err(fg, WEFT_ENOMEM, "History: out of memory; the log was cleared");
    }
    e.token = ++h->next_token;
    h->log[h->n++] = (hentry_t){e, old_key, WEFT__CLIENT_NOKEY, fg->slots_epoch};
    h->pos = h->n;
    return WEFT_OK;
}

static weft_status_t hist_on_node(weft_feature_t *self, weft_fgraph_t *fg, weft_apply_t *node,
                                  weft_history_kind_t kind)
{
    history_t *h = (history_t *)self;
    if (h->replaying) return WEFT_OK;
    weft_history_entry_t e = {.kind = kind, .node = node, .by_change = fg->change_depth > 0};
    return record(fg, h, e, WEFT__CLIENT_NOKEY);
}

static weft_status_t hist_on_import(weft_feature_t *self, weft_fgraph_t *fg, weft_apply_t *node,
                                    const char *reason)
{
    (void)reason;
    return hist_on_node(self, fg, node, WEFT_HISTORY_IMPORT);
}

static weft_status_t hist_on_prune(weft_feature_t *self, weft_fgraph_t *fg, weft_apply_t *node,
                                   const char *reason)
{
    (void)reason;
    return hist_on_node(self, fg, node, WEFT_HISTORY_PRUNE);
}

static weft_status_t hist_on_change(weft_feature_t *self, weft_fgraph_t *fg, weft_apply_t *node,
                                    size_t i, weft_var_t *old_var, weft_var_t *new_var,
                                    const char *reason)
{
    (void)reason;
    history_t *h = (history_t *)self;
    if (h->replaying) return WEFT_OK;
    weft_history_entry_t e = {WEFT_HISTORY_CHANGE, 0, node, i, old_var, new_var, true};
    return record(fg, h, e, fg->last_old_key);
}

static void hist_destroy(weft_feature_t *self)
{
    history_t *h = (history_t *)self;
    weft__free(h->h.alloc, h->log, h->cap * sizeof(*h->log));
    weft__free(h->h.alloc, h, sizeof(*h));
}

static const weft_feature_class_t history_class = {
    .size = sizeof(weft_feature_class_t),
    .name = "History",
    .on_import = hist_on_import,
    .on_prune = hist_on_prune,
    .on_change_input = hist_on_change,
    .destroy = hist_destroy,
};

const weft_feature_class_t *weft_history_class(void)
{
    return &history_class;
}

static history_t *find(const weft_fgraph_t *fg)
{
    return fg ? (history_t *)weft_fgraph_find_feature(fg, &history_class) : NULL;
}

weft_status_t weft_history_attach(weft_fgraph_t *fg)
{
    return weft__fg_attach_new(fg, &history_class, sizeof(history_t));
}

/* Checks fg and finds its History; the error names the function. */
static weft_status_t get(weft_fgraph_t *fg, const char *fn, history_t **h)
{
    if (!fg) return WEFT_EINVAL;
    *h = find(fg);
    if (*h) return WEFT_OK;
    return weft__fg_err(fg, WEFT_ENOTFOUND, "%s: no History is attached (weft_history_attach)",
                        fn);
}

weft_status_t weft_history_checkpoint(weft_fgraph_t *fg, uint64_t *token)
{
    if (fg && !token) return weft__fg_err(fg, WEFT_EINVAL, "weft_history_checkpoint: NULL token");
    history_t *h;
    weft_status_t s = get(fg, "weft_history_checkpoint", &h);
    if (s != WEFT_OK) return s;
    *token = h->pos ? h->log[h->pos - 1].e.token : h->origin;
    return WEFT_OK;
}

/* The log position token names (entries before it applied), or SIZE_MAX. */
static size_t position_of(const history_t *h, uint64_t token)
{
    if (token == h->origin) return 0;
    size_t lo = 0, hi = h->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (h->log[mid].e.token < token)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < h->n && h->log[lo].e.token == token ? lo + 1 : SIZE_MAX;
}

/* Refuses a move to `to` that is stale, in the wrong direction, or crosses a
 * structural entry (checked before anything changes). */
static weft_status_t check_move(weft_fgraph_t *fg, const history_t *h, uint64_t token, size_t to,
                                bool back)
{
    const char *fn = back ? "weft_history_revert" : "weft_history_redo";
    if (to == SIZE_MAX)
        return weft__fg_err(fg, WEFT_ESTATE, "%s: token %llu is stale (not in the log)", fn,
                            (unsigned long long)token);
    if (back ? to > h->pos : to < h->pos)
        return weft__fg_err(fg, WEFT_ESTATE, "%s: token %llu is %s the current position (use %s)",
                            fn, (unsigned long long)token, back ? "ahead of" : "behind",
                            back ? "weft_history_redo" : "weft_history_revert");
    size_t lo = back ? to : h->pos, hi = back ? h->pos : to;
    for (size_t k = lo; k < hi; k++) {
        const weft_history_entry_t *e = &h->log[k].e;
        if (h->log[k].slots_epoch != fg->slots_epoch)
            return weft__fg_err(fg, WEFT_ESTATE,
                                "%s: an input or output slot was removed after entry %zu: it "
                                "cannot be %s",
                                fn, k, back ? "undone" : "redone");
        if (e->by_change) continue;
        char ab[256];
        weft_apply_describe(e->node, ab, sizeof(ab));
        return weft__fg_err(fg, WEFT_ESTATE,
                            "%s: entry %zu (%s of %s) is structural, not an input change: it "
                            "cannot be undone",
                            fn, k, e->kind == WEFT_HISTORY_IMPORT ? "import" : "prune", ab);
    }
    return WEFT_OK;
}

/* Undoes (back) or replays entry k through the ordinary change path. */
static weft_status_t step(weft_fgraph_t *fg, hentry_t *he, bool back)
{
    weft_history_entry_t *e = &he->e;
    if (e->kind != WEFT_HISTORY_CHANGE) return WEFT_OK;
    weft_var_t *from = back ? e->new_var : e->old_var, *to = back ? e->old_var : e->new_var;
    bool live = weft__fg_is_live_slot(fg, e->node) || weft__fg_has_apply(fg, e->node);
    if (!live || e->node->inputs[e->index] != from) { /* check_move rules this out */
        char ab[256];
        weft_apply_describe(e->node, ab, sizeof(ab));
        return weft__fg_err(fg, WEFT_EINCONSISTENT, "History: the change of %s input %zu no "
                            "longer matches the graph", ab, e->index);
    }
    weft_status_t s =
        weft__fg_change_input(fg, e->node, e->index, to,
                              back ? WEFT_HISTORY_REVERT_REASON : WEFT_HISTORY_REDO_REASON, false,
                              back ? he->old_key : he->new_key);
    if (s != WEFT_OK) return s;
    /* The key (node, index) had in the variable it left: where the opposite
     * move puts it back. */
    if (back)
        he->new_key = fg->last_old_key;
    else
        he->old_key = fg->last_old_key;
    return WEFT_OK;
}

static weft_status_t move(weft_fgraph_t *fg, uint64_t token, bool back)
{
    history_t *h;
    weft_status_t s = get(fg, back ? "weft_history_revert" : "weft_history_redo", &h);
    if (s != WEFT_OK) return s;
    size_t to = position_of(h, token);
    s = check_move(fg, h, token, to, back);
    if (s != WEFT_OK) return s;
    fg->cb_status = WEFT_OK;
    h->replaying = true;
    while (s == WEFT_OK && h->pos != to) {
        s = step(fg, &h->log[back ? h->pos - 1 : h->pos], back);
        if (s == WEFT_OK) h->pos += back ? (size_t)-1 : 1;
    }
    h->replaying = false;
    return s != WEFT_OK ? s : fg->cb_status;
}

weft_status_t weft_history_revert(weft_fgraph_t *fg, uint64_t token)
{
    return move(fg, token, true);
}

weft_status_t weft_history_redo(weft_fgraph_t *fg, uint64_t token)
{
    return move(fg, token, false);
}

size_t weft_history_n_entries(const weft_fgraph_t *fg)
{
    const history_t *h = find(fg);
    return h ? h->n : 0;
}

size_t weft_history_position(const weft_fgraph_t *fg)
{
    const history_t *h = find(fg);
    return h ? h->pos : 0;
}

weft_status_t weft_history_entry(const weft_fgraph_t *fg, size_t k, weft_history_entry_t *out)
{
    if (!fg || !out) return WEFT_EINVAL;
    const history_t *h = find(fg);
    if (!h) return WEFT_ENOTFOUND;
    if (k >= h->n) return WEFT_EINVAL;
    *out = h->log[k].e;
    return WEFT_OK;
}
