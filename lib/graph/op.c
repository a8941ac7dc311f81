/* Ops: instances of an op class with a copy of their props, equality and
 * hashing by (class, props), printing, and the cached aliasing maps. */
#include <stdio.h>
#include <string.h>

#include "graph/graph_int.h"

/* Reads one aliasing map hook into dst; false when an entry is out of range. */
static bool read_alias(const weft_op_t *op,
                       size_t (*hook)(const weft_op_t *, weft_op_alias_t *, size_t),
                       weft_op_alias_t *dst, uint8_t *n, bool outputs_are_indices)
{
    *n = 0;
    if (!hook) return true;
    size_t k = hook(op, dst, WEFT_OP_MAX_ALIAS);
    if (k > WEFT_OP_MAX_ALIAS) return false;
    for (size_t i = 0; i < k; i++)
        if (outputs_are_indices && dst[i].output >= WEFT_OP_MAX_OUTPUTS) return false;
    *n = (uint8_t)k;
    return true;
}

static weft_status_t op_read_maps(weft_graph_t *g, weft_op_t *op)
{
    const weft_op_class_t *c = op->cls;
    bool ok =
        read_alias(op, WEFT__OP_HOOK(c, destroy_map), op->destroy, &op->n_destroy, true) &&
        read_alias(op, WEFT__OP_HOOK(c, view_map), op->view, &op->n_view, true) &&
        read_alias(op, WEFT__OP_HOOK(c, tolerate_same), op->tol_same, &op->n_tol_same, false) &&
        read_alias(op, WEFT__OP_HOOK(c, tolerate_aliased), op->tol_alias, &op->n_tol_alias, false);
    if (!ok)
        return weft__graph_err(g, WEFT_EINVAL,
                               "weft_op_create: op %s: an aliasing map has more than %d entries "
                               "or an output index >= %d",
                               c->name, WEFT_OP_MAX_ALIAS, WEFT_OP_MAX_OUTPUTS);
    int (*dflt)(const weft_op_t *) = WEFT__OP_HOOK(c, default_output);
    op->default_output = dflt ? dflt(op) : -1;
    if (op->default_output < -1 || op->default_output >= WEFT_OP_MAX_OUTPUTS)
        return weft__graph_err(g, WEFT_EINVAL, "weft_op_create: op %s: default output %d", c->name,
                               op->default_output);
    return WEFT_OK;
}

weft_status_t weft_op_create(weft_graph_t *g, const weft_op_class_t *cls, const void *props,
                             const weft_op_t **out)
{
    if (!g || !cls || !out) return WEFT_EINVAL;
    *out = NULL;
    if (cls->size < offsetof(weft_op_class_t, make_node) + sizeof(cls->make_node) || !cls->name ||
        !cls->make_node)
        return weft__graph_err(g, WEFT_EINVAL,
                               "weft_op_create: op class %s lacks a name, make_node, or its size "
                               "field is too small",
                               cls->name && cls->size > sizeof(size_t) ? cls->name : "?");
    if (cls->props_size && !props)
        return weft__graph_err(g, WEFT_EINVAL, "weft_op_create: op %s: NULL props", cls->name);
    weft_op_t *op = weft__arena_alloc(&g->arena, sizeof(*op));
    void *p = cls->props_size ? weft__arena_alloc(&g->arena, cls->props_size) : NULL;
    if (!op || (cls->props_size && !p)) return weft__graph_err(g, WEFT_ENOMEM, "out of memory");
    memset(op, 0, sizeof(*op));
    if (p) memcpy(p, props, cls->props_size);
    op->cls = cls;
    op->props = p;
    op->g = g;
    weft_status_t s = op_read_maps(g, op);
    /* Registered for props_fini even on failure: the props were copied, and
     * whatever they own must be released exactly once, with the context. */
    op->next = g->ops;
    g->ops = op;
    if (s != WEFT_OK) return s;
    *out = op;
    return WEFT_OK;
}

const weft_op_class_t *weft_op_class(const weft_op_t *op)
{
    return op ? op->cls : NULL;
}

const void *weft_op_props(const weft_op_t *op)
{
    return op ? op->props : NULL;
}

const char *weft_op_name(const weft_op_t *op)
{
    return op ? op->cls->name : NULL;
}

bool weft_op_equal(const weft_op_t *a, const weft_op_t *b)
{
    if (a == b) return a != NULL;
    if (!a || !b || a->cls != b->cls) return false;
    const weft_op_class_t *c = a->cls;
    if (!c->props_size) return true;
    bool (*eq)(const void *, const void *) = WEFT__OP_HOOK(c, props_equal);
    return eq ? eq(a->props, b->props) : memcmp(a->props, b->props, c->props_size) == 0;
}

uint64_t weft_op_hash(const weft_op_t *op)
{
    if (!op) return 0;
    const weft_op_class_t *c = op->cls;
    uint64_t h = 0xcbf29ce484222325ull;
    for (const char *s = c->name; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    h ^= (uint64_t)(uintptr_t)c;
    if (!c->props_size) return h;
    uint64_t (*hh)(const void *) = WEFT__OP_HOOK(c, props_hash);
    if (hh) return h ^ (hh(op->props) * 0x9e3779b97f4a7c15ull);
    const unsigned char *p = op->props;
    for (size_t i = 0; i < c->props_size; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

int weft_op_print(const weft_op_t *op, char *buf, size_t cap)
{
    if (!op) return snprintf(buf, cap, "<null op>");
    int (*pp)(const void *, char *, size_t) = WEFT__OP_HOOK(op->cls, props_print);
    if (!pp || !op->cls->props_size) return snprintf(buf, cap, "%s", op->cls->name);
    char pb[256];
    pb[0] = '\0';
    pp(op->props, pb, sizeof(pb));
    /* Props that print nothing (e.g. an elemwise op that is not in place)
     * read as the bare class name, as PyTensor prints ops without props. */
    if (!pb[0]) return snprintf(buf, cap, "%s", op->cls->name);
    return snprintf(buf, cap, "%s{%s}", op->cls->name, pb);
}

void weft_op_destroy_map(const weft_op_t *op, const weft_op_alias_t **entries, size_t *n)
{
    if (entries) *entries = op ? op->destroy : NULL;
    if (n) *n = op ? op->n_destroy : 0;
}

void weft_op_view_map(const weft_op_t *op, const weft_op_alias_t **entries, size_t *n)
{
    if (entries) *entries = op ? op->view : NULL;
    if (n) *n = op ? op->n_view : 0;
}

void weft_op_tolerate_same(const weft_op_t *op, const weft_op_alias_t **entries, size_t *n)
{
    if (entries) *entries = op ? op->tol_same : NULL;
    if (n) *n = op ? op->n_tol_same : 0;
}

void weft_op_tolerate_aliased(const weft_op_t *op, const weft_op_alias_t **entries, size_t *n)
{
    if (entries) *entries = op ? op->tol_alias : NULL;
    if (n) *n = op ? op->n_tol_alias : 0;
}

int weft_op_default_output(const weft_op_t *op)
{
    return op ? op->default_output : -1;
}

bool weft_op_is_destructive(const weft_op_t *op)
{
    return op && op->n_destroy > 0;
}

bool weft_op_is_view(const weft_op_t *op)
{
    return op && op->n_view > 0;
}

weft_status_t weft_op_clone(weft_graph_t *g, const weft_op_t *op, const weft_op_t **out)
{
    if (!g || !op || !out) {
        if (out) *out = NULL;
        return g ? weft__graph_err(g, WEFT_EINVAL, "weft_op_clone: NULL op or out") : WEFT_EINVAL;
    }
    *out = NULL;
    /* Props are copied by value: what they own would be released twice. */
    if (WEFT__OP_HOOK(op->cls, props_fini))
        return weft__graph_err(g, WEFT_ENOTIMPL,
                               "weft_op_clone: op %s owns memory in its props (props_fini): it "
                               "cannot be copied by value",
                               op->cls->name);
    return weft_op_create(g, op->cls, op->props, out);
}
