/* Features on a FunctionGraph: attach / remove / find, callback dispatch in
 * attach order (a callback error is remembered, the edit still completes),
 * and the orderings builder features fill. */
#include <stdio.h>
#include <string.h>

#include "fgraph_int.h"

#define FEAT_HOOK(f, field)                                                                        \
    (offsetof(weft_feature_class_t, field) + sizeof((f)->cls->field) <= (f)->cls->size             \
         ? (f)->cls->field                                                                         \
         : NULL)

static void feature_free(weft_feature_t *f)
{
    if (f && f->cls && FEAT_HOOK(f, destroy)) f->cls->destroy(f);
}

static const char *feature_name(const weft_feature_t *f)
{
    return f->cls->name ? f->cls->name : "?";
}

weft_status_t weft__fg_feature_nomem(weft_fgraph_t *fg, const weft_feature_t *f, const char *hook)
{
    if (strstr(fg->err, "out of memory")) return WEFT_ENOMEM; /* the feature said so */
    return weft__fg_err(fg, WEFT_ENOMEM, "%s: feature %s: out of memory", hook, feature_name(f));
}

/* The first callback error of the edit is its status; an out-of-memory one
 * also gets a message naming the feature if it left none. */
static void note(weft_fgraph_t *fg, const weft_feature_t *f, const char *hook, weft_status_t s)
{
    if (s == WEFT_OK || fg->cb_status != WEFT_OK) return;
    fg->cb_status = s == WEFT_ENOMEM ? weft__fg_feature_nomem(fg, f, hook) : s;
}

void weft__fg_fire_import(weft_fgraph_t *fg, weft_apply_t *node, const char *reason)
{
    for (size_t k = 0; k < fg->n_feat; k++) {
        weft_feature_t *f = fg->features[k];
        if (FEAT_HOOK(f, on_import))
            note(fg, f, "on_import", f->cls->on_import(f, fg, node, reason));
    }
}

void weft__fg_fire_prune(weft_fgraph_t *fg, weft_apply_t *node, const char *reason)
{
    for (size_t k = 0; k < fg->n_feat; k++) {
        weft_feature_t *f = fg->features[k];
        if (FEAT_HOOK(f, on_prune)) note(fg, f, "on_prune", f->cls->on_prune(f, fg, node, reason));
    }
}

void weft__fg_fire_change(weft_fgraph_t *fg, weft_apply_t *node, size_t i, weft_var_t *old_var,
                          weft_var_t *new_var, const char *reason)
{
    for (size_t k = 0; k < fg->n_feat; k++) {
        weft_feature_t *f = fg->features[k];
        if (FEAT_HOOK(f, on_change_input))
            note(fg, f, "on_change_input",
                 f->cls->on_change_input(f, fg, node, i, old_var, new_var, reason));
    }
}

weft_status_t weft_fgraph_attach_feature(weft_fgraph_t *fg, weft_feature_t *f)
{
    if (!f || !f->cls)
        return fg ? weft__fg_err(fg, WEFT_EINVAL, "attach_feature: NULL feature or class")
                  : WEFT_EINVAL;
    if (!fg) {
        feature_free(f);
        return WEFT_EINVAL;
    }
    for (size_t k = 0; k < fg->n_feat; k++)
        if (fg->features[k] == f) return WEFT_OK; /* the same object twice: ignored */
    if (!weft__vec_grow(fg->alloc, (void **)&fg->features, &fg->feat_cap, fg->n_feat + 1,
                        sizeof(*fg->features))) {
        feature_free(f);
        return weft__fg_err(fg, WEFT_ENOMEM, "attach_feature: out of memory");
    }
    fg->err[0] = '\0'; /* what on_attach writes is its reason */
    weft_status_t s = FEAT_HOOK(f, on_attach) ? f->cls->on_attach(f, fg) : WEFT_OK;
    if (s != WEFT_OK) {
        if (s == WEFT_ENOMEM) weft__fg_feature_nomem(fg, f, "attach_feature");
        else if (!fg->err[0] && s != WEFT_EALREADY)
            weft__fg_err(fg, s, "attach_feature: %s refused to attach", feature_name(f));
        feature_free(f);
        return s == WEFT_EALREADY ? WEFT_OK : s; /* EALREADY: an equivalent one is there */
    }
    fg->features[fg->n_feat++] = f;
    return WEFT_OK;
}

weft_status_t weft_fgraph_remove_feature(weft_fgraph_t *fg, weft_feature_t *f)
{
    if (!fg || !f) return WEFT_EINVAL;
    for (size_t k = 0; k < fg->n_feat; k++) {
        if (fg->features[k] != f) continue;
        memmove(fg->features + k, fg->features + k + 1,
                (fg->n_feat - k - 1) * sizeof(*fg->features));
        fg->n_feat--;
        if (FEAT_HOOK(f, on_detach)) f->cls->on_detach(f, fg);
        feature_free(f);
        return WEFT_OK;
    }
    return weft__fg_err(fg, WEFT_ENOTFOUND, "remove_feature: feature %s is not attached",
                        f->cls && f->cls->name ? f->cls->name : "?");
}

weft_feature_t *weft_fgraph_find_feature(const weft_fgraph_t *fg, const weft_feature_class_t *cls)
{
    if (!fg || !cls) return NULL;
    for (size_t k = 0; k < fg->n_feat; k++)
        if (fg->features[k]->cls == cls) return fg->features[k];
    return NULL;
}

void weft__fg_detach_all_features(weft_fgraph_t *fg)
{
    while (fg->n_feat > 0) { /* newest first */
        weft_feature_t *f = fg->features[--fg->n_feat];
        if (FEAT_HOOK(f, on_detach)) f->cls->on_detach(f, fg);
        feature_free(f);
    }
    weft__free(fg->alloc, fg->features, fg->feat_cap * sizeof(*fg->features));
    fg->features = NULL;
    fg->feat_cap = 0;
}

weft_status_t weft_orderings_add(weft_orderings_t *o, weft_apply_t *before, weft_apply_t *after)
{
    if (!o || !before || !after) return WEFT_EINVAL;
    weft_fgraph_t *fg = o->fg;
    if (before->slot_fg || after->slot_fg || before == after)
        return weft__fg_err(fg, WEFT_EINVAL, "orderings_add: %s",
                            before == after ? "a node cannot precede itself"
                                            : "Output pseudo-nodes cannot be ordered");
    if (before->g != fg->g || after->g != fg->g)
        return weft__fg_err(fg, WEFT_EINVAL, "orderings_add: node of another graph context");
    if (!weft__pvec_push(fg->alloc, &fg->ord_before, before) ||
        !weft__pvec_push(fg->alloc, &fg->ord_after, after)) {
        if (fg->ord_before.n > fg->ord_after.n) fg->ord_before.n--;
        return weft__fg_err(fg, WEFT_ENOMEM, "orderings_add: out of memory");
    }
    return WEFT_OK;
}

weft_status_t weft__fg_collect_orderings(weft_fgraph_t *fg)
{
    fg->ord_before.n = 0;
    fg->ord_after.n = 0;
    for (size_t k = 0; k < fg->n_feat; k++) {
        weft_feature_t *f = fg->features[k];
        if (!FEAT_HOOK(f, orderings)) continue;
        weft_orderings_t o = {fg, WEFT_OK};
        weft_status_t s = f->cls->orderings(f, fg, &o);
        if (s == WEFT_ENOMEM) return weft__fg_feature_nomem(fg, f, "orderings");
        if (s != WEFT_OK) return s;
    }
    return WEFT_OK;
}

weft_status_t weft__fg_attach_new(weft_fgraph_t *fg, const weft_feature_class_t *cls, size_t size)
{
    if (!fg) return WEFT_EINVAL;
    if (weft_fgraph_find_feature(fg, cls)) return WEFT_OK;
    weft__fg_feature_hdr_t *h = weft__alloc(fg->alloc, size);
    if (!h) return weft__fg_err(fg, WEFT_ENOMEM, "%s: out of memory", cls->name);
    memset(h, 0, size);
    h->base = (weft_feature_t){cls, NULL};
    h->alloc = fg->alloc;
    return weft_fgraph_attach_feature(fg, &h->base);
}
