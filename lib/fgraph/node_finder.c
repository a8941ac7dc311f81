/* The NodeFinder feature (weft/node_finder.h): one array per op class of the
 * apply nodes using it, sorted by node id, kept by on_import / on_prune.
 * Classes are few (tens), so they are found by a linear scan. */
#include <string.h>

#include "base/vec.h"
#include "fgraph_int.h"
#include "weft/node_finder.h"

typedef struct bucket {
    const weft_op_class_t *cls;
    weft_apply_t **nodes; /* increasing id */
    size_t n, cap;
} bucket_t;

typedef struct finder {
    weft__fg_feature_hdr_t h; /* first member */
    bucket_t *b;
    size_t nb, bcap;
    weft__pvec_t found; /* by_op's result */
} finder_t;

static bucket_t *bucket_of(finder_t *f, const weft_op_class_t *cls)
{
    for (size_t k = 0; k < f->nb; k++)
        if (f->b[k].cls == cls) return &f->b[k];
    return NULL;
}

/* Index of the first node with id >= id in b. */
static size_t lower_bound(const bucket_t *b, uint64_t id)
{
    size_t lo = 0, hi = b->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (b->nodes[mid]->id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static weft_status_t finder_add(finder_t *f, weft_fgraph_t *fg, weft_apply_t *node)
{
    bucket_t *b = bucket_of(f, node->op->cls);
    if (!b) {
        if (!weft__vec_grow(f->h.alloc, (void **)&f->b, &f->bcap, f->nb + 1, sizeof(*f->b)))
            return weft__fg_err(fg, WEFT_ENOMEM, "NodeFinder: out of memory");
        b = &f->b[f->nb++];
        b->cls = node->op->cls;
    }
    if (!weft__vec_grow(f->h.alloc, (void **)&b->nodes, &b->cap, b->n + 1, sizeof(*b->nodes)))
        return weft__fg_err(fg, WEFT_ENOMEM, "NodeFinder: out of memory");
    size_t at = lower_bound(b, node->id);
    memmove(b->nodes + at + 1, b->nodes + at, (b->n - at) * sizeof(*b->nodes));
    b->nodes[at] = node;
    b->n++;
    return WEFT_OK;
}

static weft_status_t finder_on_import(weft_feature_t *self, weft_fgraph_t *fg,
                                      weft_apply_t *node, const char *reason)
{
    (void)reason;
    return finder_add((finder_t *)self, fg, node);
}

static weft_status_t finder_on_prune(weft_feature_t *self, weft_fgraph_t *fg, weft_apply_t *node,
                                     const char *reason)
{
    (void)fg;
    (void)reason;
    bucket_t *b = bucket_of((finder_t *)self, node->op->cls);
    size_t at = b ? lower_bound(b, node->id) : 0;
    if (!b || at == b->n || b->nodes[at] != node) return WEFT_OK; /* its import ran out of memory */
    memmove(b->nodes + at, b->nodes + at + 1, (b->n - at - 1) * sizeof(*b->nodes));
    b->n--;
    return WEFT_OK;
}

static weft_status_t finder_on_attach(weft_feature_t *self, weft_fgraph_t *fg)
{
    for (size_t k = 0; k < fg->n_applies; k++) {
        weft_status_t s = finder_add((finder_t *)self, fg, fg->applies[k]);
        if (s != WEFT_OK) return s;
    }
    return WEFT_OK;
}

static void finder_destroy(weft_feature_t *self)
{
    finder_t *f = (finder_t *)self;
    for (size_t k = 0; k < f->nb; k++)
        weft__free(f->h.alloc, f->b[k].nodes, f->b[k].cap * sizeof(*f->b[k].nodes));
    weft__free(f->h.alloc, f->b, f->bcap * sizeof(*f->b));
    weft__pvec_free(f->h.alloc, &f->found);
    weft__free(f->h.alloc, f, sizeof(*f));
}

static const weft_feature_class_t finder_class = {
    .size = sizeof(weft_feature_class_t),
    .name = "NodeFinder",
    .on_attach = finder_on_attach,
    .on_import = finder_on_import,
    .on_prune = finder_on_prune,
    .destroy = finder_destroy,
};

const weft_feature_class_t *weft_node_finder_class(void)
{
    return &finder_class;
}

weft_status_t weft_node_finder_attach(weft_fgraph_t *fg)
{
    return weft__fg_attach_new(fg, &finder_class, sizeof(finder_t));
}

static weft_status_t lookup(weft_fgraph_t *fg, const void *key, weft_apply_t *const **nodes,
                            size_t *n, finder_t **f)
{
    if (!fg || !key || !nodes || !n) return WEFT_EINVAL;
    *f = (finder_t *)weft_fgraph_find_feature(fg, &finder_class);
    if (*f) return WEFT_OK;
    return weft__fg_err(fg, WEFT_ENOTFOUND,
                        "NodeFinder: none is attached (weft_node_finder_attach)");
}

weft_status_t weft_node_finder_by_class(weft_fgraph_t *fg, const weft_op_class_t *cls,
                                        weft_apply_t *const **nodes, size_t *n)
{
    finder_t *f;
    weft_status_t s = lookup(fg, cls, nodes, n, &f);
    if (s != WEFT_OK) return s;
    const bucket_t *b = bucket_of(f, cls);
    *nodes = b ? b->nodes : NULL;
    *n = b ? b->n : 0;
    return WEFT_OK;
}

weft_status_t weft_node_finder_by_op(weft_fgraph_t *fg, const weft_op_t *op,
                                     weft_apply_t *const **nodes, size_t *n)
{
    finder_t *f;
    weft_status_t s = lookup(fg, op, nodes, n, &f);
    if (s != WEFT_OK) return s;
    const bucket_t *b = bucket_of(f, op->cls);
    f->found.n = 0;
    for (size_t k = 0; b && k < b->n; k++)
        if (weft_op_equal(b->nodes[k]->op, op) &&
            !weft__pvec_push(f->h.alloc, &f->found, b->nodes[k]))
            return weft__fg_err(fg, WEFT_ENOMEM, "NodeFinder: out of memory");
    *nodes = (weft_apply_t *const *)f->found.p;
    *n = f->found.n;
    return WEFT_OK;
}
