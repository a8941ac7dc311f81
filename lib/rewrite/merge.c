/* MergeFeature and MergeOptimizer (docs/rewrites.md §2): common subexpression
 * elimination in linear time.
 *
 * The feature keeps two hash tables while attached: distinct apply nodes keyed
 * by (op hash, input identities) and representative constants keyed by value
 * hash. Examining a node looks it up: an equal distinct node (equal op, same
 * input objects) schedules the pair "replace node by it", otherwise the node
 * becomes distinct; each constant input is looked up the same way. Imports
 * and input changes only mark the node dirty (O(1): a node rewritten again
 * or pruned before the next merge is never hashed for nothing); the
 * optimizer examines the dirty nodes still in the graph, then drains the
 * schedule (LIFO), repeating while merging dirtied more (merging a node
 * changes its clients' inputs), so cascades upward finish in the same call.
 * No pairwise comparison of nodes ever happens outside equal hashes.
 *
 * The feature belongs to the fgraph it serves: its memory comes from the
 * allocator of the fgraph's context. The optimizer's own scratch (the pairs
 * rejected in one run) uses the C library, as every rewriter does. */
#include <stdlib.h>
#include <string.h>

#include "rewrite_int.h"

#define TOMB ((void *)1)
#define IN_TABLE 1u
#define DIRTY 2u

typedef struct slot {
    uint64_t h;
    void *p; /* weft_apply_t* or weft_var_t*; NULL empty; TOMB deleted */
} slot_t;

typedef struct table {
    const weft_allocator_t *al;
    slot_t *s;
    size_t cap, used; /* used counts tombstones too */
} table_t;

typedef struct pair {
    void *a, *b; /* replace a by b */
    bool constant;
} pair_t;

typedef struct merge_feature {
    weft_feature_t base; /* first member */
    const weft_allocator_t *al; /* the fgraph's context's */
    weft_fgraph_t *fg;
    table_t nodes, consts;
    uint64_t *hash_of; /* per apply id: its key hash while in the node table */
    uint8_t *in_table; /* per apply id: IN_TABLE | DIRTY */
    size_t id_cap, hash_cap, flag_cap; /* id_cap: the smaller of the two capacities */
    weft_apply_t **dirty; /* nodes to examine at the next merge (DIRTY set) */
    size_t n_dirty, cap_dirty;
    pair_t *sched;
    size_t n_sched, cap_sched;
    bool oom;
} merge_feature_t;

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static uint64_t node_key(const weft_apply_t *a)
{
    size_t n = weft_apply_n_inputs(a);
    uint64_t h = mix(weft_op_hash(weft_apply_op(a)), n);
    for (size_t i = 0; i < n; i++) h = mix(h, (uint64_t)(uintptr_t)weft_apply_input(a, i));
    return h ? h : 1;
}

static bool same_node(const weft_apply_t *a, const weft_apply_t *b)
{
    size_t n = weft_apply_n_inputs(a);
    if (n != weft_apply_n_inputs(b) || weft_apply_n_outputs(a) != weft_apply_n_outputs(b))
        return false;
    for (size_t i = 0; i < n; i++)
        if (weft_apply_input(a, i) != weft_apply_input(b, i)) return false;
    const weft_op_t *oa = weft_apply_op(a), *ob = weft_apply_op(b);
    return oa == ob || weft_op_equal(oa, ob);
}

static weft_status_t table_insert(table_t *t, uint64_t h, void *p);

static weft_status_t table_rehash(table_t *t)
{
    /* the table holds graph objects: its capacity stays far from wrapping */
    table_t nt = {t->al, NULL, t->cap < 64 ? 128 : t->cap * 2, 0};
    size_t live = 0;
    for (size_t i = 0; i < t->cap; i++) live += t->s[i].p && t->s[i].p != TOMB;
    while (live * 2 >= nt.cap) nt.cap *= 2;
    nt.s = weft__vec_alloc(nt.al, nt.cap, sizeof *nt.s);
    if (!nt.s) return WEFT_ENOMEM;
    memset(nt.s, 0, nt.cap * sizeof *nt.s);
    for (size_t i = 0; i < t->cap; i++)
        if (t->s[i].p && t->s[i].p != TOMB) (void)table_insert(&nt, t->s[i].h, t->s[i].p);
    weft__free(t->al, t->s, t->cap * sizeof *t->s);
    *t = nt;
    return WEFT_OK;
}

static weft_status_t table_insert(table_t *t, uint64_t h, void *p)
{
    if ((t->used + 1) * 10 >= t->cap * 7) {
        weft_status_t st = table_rehash(t);
        if (st != WEFT_OK) return st;
    }
    size_t i = (size_t)h & (t->cap - 1);
    while (t->s[i].p && t->s[i].p != TOMB) i = (i + 1) & (t->cap - 1);
    if (!t->s[i].p) t->used++;
    t->s[i].h = h;
    t->s[i].p = p;
    return WEFT_OK;
}

static void table_remove(table_t *t, uint64_t h, const void *p)
{
    if (!t->cap) return;
    for (size_t i = (size_t)h & (t->cap - 1); t->s[i].p; i = (i + 1) & (t->cap - 1))
        if (t->s[i].p == p) {
            t->s[i].p = TOMB;
            return;
        }
}

static weft_status_t schedule(merge_feature_t *m, void *a, void *b, bool constant)
{
    if (!weft__vec_grow(m->al, (void **)&m->sched, &m->cap_sched, m->n_sched + 1, sizeof *m->sched))
        return m->oom = true, WEFT_ENOMEM;
    m->sched[m->n_sched++] = (pair_t){a, b, constant};
    return WEFT_OK;
}

static weft_status_t examine_const(merge_feature_t *m, weft_var_t *c)
{
    uint64_t h = weft_constant_hash(c) | 1;
    table_t *t = &m->consts;
    for (size_t i = t->cap ? (size_t)h & (t->cap - 1) : 0; t->cap && t->s[i].p;
         i = (i + 1) & (t->cap - 1)) {
        if (t->s[i].p == TOMB || t->s[i].h != h) continue;
        weft_var_t *rep = t->s[i].p;
        if (rep == c) return WEFT_OK;
        if (!weft_constant_equal(rep, c)) continue;
        if (weft_fgraph_contains_var(m->fg, rep)) return schedule(m, c, rep, true);
        t->s[i].p = c; /* the old representative left the graph */
        return WEFT_OK;
    }
    return table_insert(t, h, c);
}

static weft_status_t ensure_id(merge_feature_t *m, uint64_t id)
{
    if (id < m->id_cap) return WEFT_OK;
    bool ok =
        weft__vec_grow(m->al, (void **)&m->hash_of, &m->hash_cap, id + 1, sizeof *m->hash_of) &&
        weft__vec_grow(m->al, (void **)&m->in_table, &m->flag_cap, id + 1, 1);
    m->id_cap = m->hash_cap < m->flag_cap ? m->hash_cap : m->flag_cap;
    return ok ? WEFT_OK : WEFT_ENOMEM;
}

static weft_status_t examine_node(merge_feature_t *m, weft_apply_t *a)
{
    for (size_t i = 0; i < weft_apply_n_inputs(a); i++) {
        weft_var_t *v = weft_apply_input(a, i);
        if (weft_var_is_constant(v) && examine_const(m, v) != WEFT_OK) return WEFT_ENOMEM;
    }
    uint64_t id = weft_apply_id(a), h = node_key(a);
    if (ensure_id(m, id) != WEFT_OK) return m->oom = true, WEFT_ENOMEM;
    if (m->in_table[id] & IN_TABLE) return WEFT_OK;
    table_t *t = &m->nodes;
    for (size_t i = t->cap ? (size_t)h & (t->cap - 1) : 0; t->cap && t->s[i].p;
         i = (i + 1) & (t->cap - 1)) {
        if (t->s[i].p == TOMB || t->s[i].h != h) continue;
        weft_apply_t *b = t->s[i].p;
        if (b != a && same_node(a, b) && weft_fgraph_contains_apply(m->fg, b))
            return schedule(m, a, b, false);
    }
    m->hash_of[id] = h;
    m->in_table[id] |= IN_TABLE;
    if (table_insert(t, h, a) != WEFT_OK) return m->oom = true, WEFT_ENOMEM;
    return WEFT_OK;
}

static void forget_node(merge_feature_t *m, weft_apply_t *a)
{
    uint64_t id = weft_apply_id(a);
    if (id >= m->id_cap || !(m->in_table[id] & IN_TABLE)) return;
    table_remove(&m->nodes, m->hash_of[id], a);
    m->in_table[id] &= (uint8_t)~IN_TABLE;
}

/* Queues a for examination at the next merge (once while it is queued). */
static weft_status_t mark_dirty(merge_feature_t *m, weft_apply_t *a)
{
    uint64_t id = weft_apply_id(a);
    if (ensure_id(m, id) != WEFT_OK) return m->oom = true, WEFT_ENOMEM;
    if (m->in_table[id] & DIRTY) return WEFT_OK;
    if (!weft__vec_grow(m->al, (void **)&m->dirty, &m->cap_dirty, m->n_dirty + 1, sizeof *m->dirty))
        return m->oom = true, WEFT_ENOMEM;
    m->in_table[id] |= DIRTY;
    m->dirty[m->n_dirty++] = a;
    return WEFT_OK;
}

/* Examines the queued nodes still in the graph (in queue order). */
static weft_status_t examine_dirty(merge_feature_t *m)
{
    weft_status_t st = WEFT_OK;
    for (size_t k = 0; k < m->n_dirty && st == WEFT_OK; k++) {
        weft_apply_t *a = m->dirty[k];
        m->in_table[weft_apply_id(a)] &= (uint8_t)~DIRTY;
        if (!weft_fgraph_contains_apply(m->fg, a)) continue;
        forget_node(m, a);
        st = examine_node(m, a);
    }
    m->n_dirty = 0;
    return st;
}

static weft_status_t mf_attach(weft_feature_t *self, weft_fgraph_t *fg)
{
    merge_feature_t *m = (merge_feature_t *)self;
    m->fg = fg;
    weft_apply_t *const *nodes;
    size_t n;
    weft_status_t st = weft_fgraph_applies(fg, &nodes, &n);
    for (size_t i = 0; st == WEFT_OK && i < n; i++) st = examine_node(m, nodes[i]);
    return st;
}

static weft_status_t mf_import(weft_feature_t *self, weft_fgraph_t *fg, weft_apply_t *node,
                               const char *reason)
{
    (void)fg;
    (void)reason;
    return mark_dirty((merge_feature_t *)self, node);
}

static weft_status_t mf_prune(weft_feature_t *self, weft_fgraph_t *fg, weft_apply_t *node,
                              const char *reason)
{
    (void)fg;
    (void)reason;
    forget_node((merge_feature_t *)self, node);
    return WEFT_OK;
}

static weft_status_t mf_change(weft_feature_t *self, weft_fgraph_t *fg, weft_apply_t *node,
                               size_t i, weft_var_t *old_var, weft_var_t *new_var,
                               const char *reason)
{
    (void)fg;
    (void)i;
    (void)old_var;
    (void)reason;
    merge_feature_t *m = (merge_feature_t *)self;
    if (weft_apply_is_output_slot(node))
        return weft_var_is_constant(new_var) ? examine_const(m, new_var) : WEFT_OK;
    if (!weft_fgraph_contains_apply(fg, node)) return WEFT_OK;
    forget_node(m, node); /* its key changed: never matched while stale */
    return mark_dirty(m, node);
}

static void mf_destroy(weft_feature_t *self)
{
    merge_feature_t *m = (merge_feature_t *)self;
    const weft_allocator_t *al = m->al;
    weft__free(al, m->nodes.s, m->nodes.cap * sizeof *m->nodes.s);
    weft__free(al, m->consts.s, m->consts.cap * sizeof *m->consts.s);
    weft__free(al, m->hash_of, m->hash_cap * sizeof *m->hash_of);
    weft__free(al, m->in_table, m->flag_cap);
    weft__free(al, m->dirty, m->cap_dirty * sizeof *m->dirty);
    weft__free(al, m->sched, m->cap_sched * sizeof *m->sched);
    weft__free(al, m, sizeof *m);
}

static const weft_feature_class_t merge_feature_class = {
    .size = sizeof(weft_feature_class_t),
    .name = "MergeFeature",
    .on_attach = mf_attach,
    .on_import = mf_import,
    .on_prune = mf_prune,
    .on_change_input = mf_change,
    .destroy = mf_destroy,
};

static weft_status_t merge_feature_get(weft_fgraph_t *fg, merge_feature_t **out)
{
    *out = (merge_feature_t *)weft_fgraph_find_feature(fg, &merge_feature_class);
    if (*out) return WEFT_OK;
    const weft_allocator_t *al = weft_graph_allocator(weft_fgraph_graph(fg));
    merge_feature_t *m = weft__alloc(al, sizeof *m);
    if (!m) return WEFT_ENOMEM;
    memset(m, 0, sizeof *m);
    m->al = m->nodes.al = m->consts.al = al;
    m->base.cls = &merge_feature_class;
    m->base.data = m;
    weft_status_t st = weft_fgraph_attach_feature(fg, &m->base);
    if (st != WEFT_OK) return st;
    *out = (merge_feature_t *)weft_fgraph_find_feature(fg, &merge_feature_class);
    return *out ? WEFT_OK : WEFT_ENOMEM;
}

/* ---- the optimizer ------------------------------------------------------------ */

typedef struct merge_count {
    size_t merged, atomic, failed;
    pair_t *black; /* pairs rejected by validation in this apply */
    size_t n_black, cap_black;
} merge_count_t;

static bool has_destroyer_client(weft_fgraph_t *fg, const weft_var_t *v)
{
    const weft_client_t *cl;
    size_t n;
    if (weft_fgraph_clients(fg, v, &cl, &n) != WEFT_OK) return false;
    for (size_t k = 0; k < n; k++) {
        if (weft_apply_is_output_slot(cl[k].node)) continue;
        const weft_op_alias_t *dm;
        size_t nd;
        weft_op_destroy_map(weft_apply_op(cl[k].node), &dm, &nd);
        for (size_t j = 0; j < nd; j++)
            if (dm[j].input == cl[k].index) return true;
    }
    return false;
}

static bool blacklisted(const merge_count_t *c, const void *a, const void *b)
{
    for (size_t i = 0; i < c->n_black; i++)
        if (c->black[i].a == a && c->black[i].b == b) return true;
    return false;
}

/* Direction: 1 replace a by b, -1 replace b by a, 0 neither is acceptable
 * for every output (keep the more specific static type). */
static int direction(const weft_apply_t *a, const weft_apply_t *b)
{
    bool ab = true, ba = true;
    for (size_t i = 0; i < weft_apply_n_outputs(a); i++) {
        const weft_type_t *ta = weft_var_type(weft_apply_output(a, i));
        const weft_type_t *tb = weft_var_type(weft_apply_output(b, i));
        ab = ab && weft_type_is_super(ta, tb);
        ba = ba && weft_type_is_super(tb, ta);
    }
    return ab ? 1 : ba ? -1 : 0;
}

static weft_status_t merge_nodes(weft_fgraph_t *fg, merge_count_t *c, weft_apply_t *a,
                                 weft_apply_t *b)
{
    size_t n = weft_apply_n_outputs(a);
    bool both = false;
    for (size_t i = 0; i < n && !both; i++)
        both = has_destroyer_client(fg, weft_apply_output(a, i)) &&
               has_destroyer_client(fg, weft_apply_output(b, i));
    if (both) return WEFT_OK; /* docs/destroy.md §6: D1 would reject it anyway */
    int dir = direction(a, b);
    if (dir < 0) {
        weft_apply_t *t = a;
        a = b;
        b = t;
    }
    weft_var_t *olds[WEFT_OP_MAX_OUTPUTS], *news[WEFT_OP_MAX_OUTPUTS];
    for (size_t i = 0; i < n; i++) {
        olds[i] = weft_apply_output(a, i);
        news[i] = weft_apply_output(b, i);
    }
    weft_status_t st = dir == 0 ? WEFT_ETYPE
                                : weft_fgraph_replace_all_validate(fg, n, olds, news, "merge");
    if (st == WEFT_ENOMEM) return st;
    if (st == WEFT_OK) {
        c->merged++;
        return WEFT_OK;
    }
    c->failed++;
    if (!weft__vec_grow(NULL, (void **)&c->black, &c->cap_black, c->n_black + 1, sizeof *c->black))
        return WEFT_ENOMEM;
    c->black[c->n_black++] = (pair_t){a, b, false};
    return WEFT_OK;
}

static weft_status_t merge_one(weft_fgraph_t *fg, merge_count_t *c, pair_t p)
{
    if (p.constant) {
        if (p.a == p.b || !weft_fgraph_contains_var(fg, p.a) || !weft_fgraph_contains_var(fg, p.b))
            return WEFT_OK;
        weft_status_t st = weft_fgraph_replace(fg, p.a, p.b, "merge constant");
        if (st == WEFT_ENOMEM) return st;
        if (st == WEFT_OK) c->atomic++;
        else c->failed++;
        return WEFT_OK;
    }
    weft_apply_t *a = p.a, *b = p.b;
    if (a == b || !weft_fgraph_contains_apply(fg, a) || !weft_fgraph_contains_apply(fg, b) ||
        !same_node(a, b) || blacklisted(c, a, b) || blacklisted(c, b, a))
        return WEFT_OK;
    return merge_nodes(fg, c, a, b);
}

static weft_status_t merge_apply(weft_fgraph_t *fg, void *user, weft_rewrite_stats_t *stats,
                                 size_t *n_changes)
{
    merge_feature_t *m;
    weft_status_t st = merge_feature_get(fg, &m);
    merge_count_t c = {0, 0, 0, NULL, 0, 0};
    while (st == WEFT_OK && (m->n_sched > 0 || m->n_dirty > 0)) {
        if (m->n_sched == 0) {
            st = examine_dirty(m);
            continue;
        }
        pair_t p = m->sched[--m->n_sched];
        st = merge_one(fg, &c, p);
        if (st == WEFT_OK && m->oom) st = WEFT_ENOMEM;
    }
    free(c.black);
    *n_changes = c.merged + c.atomic;
    if (st == WEFT_OK && c.failed)
        st = weft_rewrite_stats_record(stats, (const char *)user, 0, c.failed, 0.0);
    return st;
}

weft_status_t weft_rewriter_merge_create(const char *name, weft_rewriter_t **out)
{
    if (!out) return WEFT_EINVAL;
    weft_status_t st = weft_rewriter_graph_create(name ? name : "merge", merge_apply, NULL,
                                                  NULL, out);
    if (st == WEFT_OK) (*out)->user = (*out)->name; /* the fn records failures by name */
    return st;
}
