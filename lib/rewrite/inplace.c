/* The in-place rewrite (docs/rewrites.md §6.4) and add_destroy_handler (§6.3);
 * the variant node builder is shared with update_inplace.c.
 *
 * For each node whose op is not destructive and whose class has an
 * inplace_variant hook, the candidate inputs are the DestroyHandler's
 * inplace_candidates (no constants, nothing protected by the Supervisor or
 * being an output, nothing already destroyed, no two inputs sharing a root)
 * with exactly the output's type. Each attempt builds the variant node and
 * replaces through replace_all_validate, so a rejection leaves the graph as
 * it was.
 *
 * "Free the most memory": nodes are visited largest output first (static
 * element count; unknown lengths count as largest), and two sweeps run: the
 * first only destroys inputs whose last reader is the node (one client: the
 * buffer is dead afterwards, reusing it costs no ordering constraint), the
 * second any candidate the DestroyHandler accepts. */
#include <stdlib.h>
#include <string.h>

#include "graph/ctor_int.h"
#include "rewrite_int.h"
#include "weft/destroy.h"

static weft_status_t add_dh(weft_fgraph_t *fg, void *user, weft_rewrite_stats_t *stats,
                            size_t *n_changes)
{
    (void)user;
    (void)stats;
    *n_changes = 0;
    return weft_dh_attach(fg, NULL);
}

weft_status_t weft_rewriter_add_destroy_handler_create(const char *name, weft_rewriter_t **out)
{
    if (!out) return WEFT_EINVAL;
    return weft_rewriter_graph_create(name ? name : "add_destroy_handler", add_dh, NULL, NULL,
                                      out);
}

typedef struct cand_node {
    weft_apply_t *node;
    double size; /* static element count of output 0 (unknown: huge) */
    size_t topo;
} cand_node_t;

static double static_size(const weft_type_t *t, bool *scalar_like)
{
    double s = 1;
    *scalar_like = true;
    for (int d = 0; d < weft_type_ndim(t); d++) {
        int64_t n = weft_type_dim(t, d);
        if (n != 1) *scalar_like = false;
        s *= n < 0 ? 1e12 : (double)n;
    }
    return s;
}

bool weft__inplace_has_variant(const weft_op_t *op)
{
    const weft_op_class_t *c = weft_op_class(op);
    size_t end = offsetof(weft_op_class_t, inplace_variant) + sizeof c->inplace_variant;
    return c->size >= end && c->inplace_variant && !weft_op_is_destructive(op);
}

static int by_size(const void *a, const void *b)
{
    const cand_node_t *x = a, *y = b;
    if (x->size != y->size) return x->size < y->size ? 1 : -1;
    return x->topo < y->topo ? -1 : x->topo > y->topo;
}

/* Nodes worth trying, largest output first (ties: topological order). */
static weft_status_t collect(weft_fgraph_t *fg, cand_node_t **out, size_t *n_out)
{
    weft_apply_t *const *order;
    size_t n;
    weft_status_t st = weft_fgraph_toposort(fg, &order, &n);
    if (st != WEFT_OK) return st;
    cand_node_t *c = weft__vec_malloc(n + 1, sizeof *c);
    if (!c) return WEFT_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (weft_apply_n_outputs(order[i]) != 1 ||
            !weft__inplace_has_variant(weft_apply_op(order[i])))
            continue;
        bool scalar;
        double s = static_size(weft_var_type(weft_apply_output(order[i], 0)), &scalar);
        if (n > 500 && scalar) continue; /* copying scalars is cheap */
        c[k++] = (cand_node_t){order[i], s, i};
    }
    qsort(c, k, sizeof *c, by_size);
    *out = c;
    *n_out = k;
    return WEFT_OK;
}

/* The variant ops built in one inplace run, keyed by (equal op, input): the
 * graph's nodes mostly share a few distinct ops, and building each variant
 * once (not once per node) saves an op object per rewrite. An open-
 * addressing table, at most half full; vop NULL caches "no variant". */
typedef struct vop_entry {
    const weft_op_t *op, *vop;
    size_t input;
    uint64_t h;
    bool used;
} vop_entry_t;

typedef struct vop_cache {
    vop_entry_t *s;
    size_t cap, n;
} vop_cache_t;

static vop_entry_t *vop_find(vop_cache_t *vc, const weft_op_t *op, size_t i, uint64_t h)
{
    size_t mask = vc->cap - 1;
    for (size_t k = (size_t)h & mask;; k = (k + 1) & mask) {
        vop_entry_t *e = &vc->s[k];
        if (!e->used || (e->h == h && e->input == i && (e->op == op || weft_op_equal(e->op, op))))
            return e; /* the match, or the empty slot to fill */
    }
}

static weft_status_t vop_grow(vop_cache_t *vc)
{
    if ((vc->n + 1) * 2 <= vc->cap) return WEFT_OK;
    vop_cache_t nc = {NULL, vc->cap ? vc->cap * 2 : 32, vc->n};
    nc.s = calloc(nc.cap, sizeof *nc.s);
    if (!nc.s) return WEFT_ENOMEM;
    for (size_t k = 0; k < vc->cap; k++)
        if (vc->s[k].used) *vop_find(&nc, vc->s[k].op, vc->s[k].input, vc->s[k].h) = vc->s[k];
    free(vc->s);
    *vc = nc;
    return WEFT_OK;
}

/* op's variant destroying input i (*vop NULL: none), built once per run
 * (vc NULL: no cache, built on each call). */
static weft_status_t variant_op(weft_graph_t *g, vop_cache_t *vc, const weft_op_t *op, size_t i,
                                const weft_op_t **vop)
{
    uint64_t h = (weft_op_hash(op) ^ (uint64_t)i) * 0x9e3779b97f4a7c15ull;
    vop_entry_t *e = NULL;
    if (vc) {
        weft_status_t st = vop_grow(vc);
        if (st != WEFT_OK) return st;
        e = vop_find(vc, op, i, h);
        if (e->used) {
            *vop = e->vop;
            return WEFT_OK;
        }
    }
    const weft_op_t *v = NULL;
    if (weft_op_class(op)->inplace_variant(g, op, i, &v) != WEFT_OK) v = NULL;
    if (e) {
        *e = (vop_entry_t){op, v, i, h, true};
        vc->n++;
    }
    *vop = v;
    return WEFT_OK;
}

/* Builds the node that computes node's outputs by destroying input i, when
 * the op has such a variant and the DestroyHandler says it may (*nn NULL:
 * not possible). vc: the run's variant cache, or NULL. */
static weft_status_t variant_node(weft_fgraph_t *fg, vop_cache_t *vc, weft_apply_t *node,
                                  size_t i, weft_apply_t **nn)
{
    weft_graph_t *g = weft_fgraph_graph(fg);
    const weft_op_t *op = weft_apply_op(node), *vop;
    *nn = NULL;
    weft_status_t st0 = variant_op(g, vc, op, i, &vop);
    if (st0 != WEFT_OK || !vop) return st0;
    bool ok = false;
    weft_status_t st = weft_dh_can_destroy(fg, node, i, vop, &ok);
    if (st == WEFT_ENOMEM) return st;
    if (st != WEFT_OK || !ok) return WEFT_OK;
    size_t n_in = weft_apply_n_inputs(node);
    weft_var_t *local[64], **ins = n_in <= 64 ? local : weft__vec_malloc(n_in, sizeof *ins);
    if (!ins) return WEFT_ENOMEM;
    for (size_t k = 0; k < n_in; k++) ins[k] = weft_apply_input(node, k);
    const char *file;
    int line;
    weft_apply_trace(node, &file, &line);
    st = weft__got(g, *nn = weft_apply_create_at(g, vop, n_in, ins, file, line));
    if (ins != local) free(ins);
    if (st != WEFT_OK) *nn = NULL;
    return st == WEFT_ENOMEM ? st : WEFT_OK;
}

weft_status_t weft__inplace_variant_node(weft_fgraph_t *fg, weft_apply_t *node, size_t i,
                                         weft_apply_t **nn)
{
    return variant_node(fg, NULL, node, i, nn);
}

/* Tries to make node destroy input i in its own transaction; *done on success. */
static weft_status_t try_input(weft_fgraph_t *fg, vop_cache_t *vc, weft_apply_t *node, size_t i,
                               bool *done, size_t *failed)
{
    weft_apply_t *nn;
    *done = false;
    weft_status_t st = variant_node(fg, vc, node, i, &nn);
    if (st != WEFT_OK || !nn) return st;
    st = weft_fgraph_replace_validate(fg, weft_apply_output(node, 0), weft_apply_output(nn, 0),
                                      "inplace");
    if (st == WEFT_ENOMEM) return st;
    *done = st == WEFT_OK;
    *failed += st != WEFT_OK;
    return WEFT_OK;
}

/* The inputs node may try to destroy, in preference order, into idx. */
static weft_status_t candidates(weft_fgraph_t *fg, weft_apply_t *node, bool last_reader_only,
                                size_t *idx, size_t *nc)
{
    size_t n_in = weft_apply_n_inputs(node), k = 0, raw[64];
    *nc = 0;
    if (n_in == 0 || n_in > 64) return WEFT_OK;
    const weft_var_t *ins[64];
    for (size_t i = 0; i < n_in; i++) ins[i] = weft_apply_input(node, i);
    size_t n_raw;
    weft_status_t st = weft_dh_inplace_candidates(fg, n_in, ins, 0, NULL, raw, &n_raw);
    if (st == WEFT_ENOMEM) return st;
    if (st != WEFT_OK) return WEFT_OK;
    const weft_type_t *ot = weft_var_type(weft_apply_output(node, 0));
    for (size_t c = 0; c < n_raw; c++) {
        const weft_var_t *v = ins[raw[c]];
        if (!weft_type_equal(weft_var_type(v), ot)) continue;
        if (last_reader_only && weft_fgraph_n_clients(fg, v) != 1) continue;
        idx[k++] = raw[c];
    }
    *nc = k;
    return WEFT_OK;
}

static weft_status_t try_node(weft_fgraph_t *fg, vop_cache_t *vc, weft_apply_t *node,
                              bool last_reader_only, size_t *changes, size_t *failed)
{
    size_t idx[64], nc;
    weft_status_t st = candidates(fg, node, last_reader_only, idx, &nc);
    for (size_t c = 0; st == WEFT_OK && c < nc; c++) {
        bool done;
        st = try_input(fg, vc, node, idx[c], &done, failed);
        if (st == WEFT_OK && done) {
            ++*changes;
            return WEFT_OK;
        }
    }
    return st;
}

/* Sweep 0 as one transaction: every node destroying an input whose last
 * reader it is, at most one destroyer per root. The DestroyHandler's
 * validation then runs once instead of once per node (it is linear in the
 * graph, so per-node transactions would make the rewrite quadratic). If the
 * batch is rejected it is reverted and the caller falls back to one
 * transaction per node. */
typedef struct batch_pair {
    weft_var_t *old_var, *new_var;
    size_t topo;
} batch_pair_t;

typedef struct batch {
    batch_pair_t *p;
    const weft_var_t **roots;
    size_t n, cap, n_roots, cap_roots;
} batch_t;

static int by_topo_desc(const void *a, const void *b)
{
    const batch_pair_t *x = a, *y = b;
    return x->topo < y->topo ? 1 : x->topo > y->topo ? -1 : 0;
}

/* Roots already destroyed in the batch: an open-addressing pointer set
 * (roots has cap_roots slots, a power of two, at most half full). */
static bool root_taken(const batch_t *b, const weft_var_t *r)
{
    if (!b->cap_roots) return false;
    size_t m = b->cap_roots - 1;
    for (size_t i = ((uintptr_t)r >> 4) * 0x9e3779b97f4a7c15ull & m; b->roots[i]; i = (i + 1) & m)
        if (b->roots[i] == r) return true;
    return false;
}

static weft_status_t root_add(batch_t *b, const weft_var_t *r)
{
    if ((b->n_roots + 1) * 2 > b->cap_roots) {
        size_t nc = b->cap_roots ? b->cap_roots * 2 : 64;
        const weft_var_t **old = b->roots, **nr = calloc(nc, sizeof *nr);
        if (!nr) return WEFT_ENOMEM;
        size_t oc = b->cap_roots;
        b->roots = nr;
        b->cap_roots = nc;
        b->n_roots = 0;
        for (size_t i = 0; i < oc; i++)
            if (old[i]) (void)root_add(b, old[i]);
        free(old);
    }
    size_t m = b->cap_roots - 1;
    size_t i = ((uintptr_t)r >> 4) * 0x9e3779b97f4a7c15ull & m;
    while (b->roots[i]) i = (i + 1) & m;
    b->roots[i] = r;
    b->n_roots++;
    return WEFT_OK;
}

static weft_status_t batch_add(weft_fgraph_t *fg, vop_cache_t *vc, batch_t *b,
                               const cand_node_t *cn)
{
    weft_apply_t *node = cn->node;
    size_t idx[64], nc;
    weft_status_t st = candidates(fg, node, true, idx, &nc);
    for (size_t c = 0; st == WEFT_OK && c < nc; c++) {
        weft_var_t *r;
        st = weft_dh_root(fg, weft_apply_input(node, idx[c]), &r);
        if (st != WEFT_OK || root_taken(b, r)) continue; /* ENOMEM is the only hard error */
        weft_apply_t *nn;
        st = variant_node(fg, vc, node, idx[c], &nn);
        if (st != WEFT_OK || !nn) continue;
        if (!weft__vec_grow(NULL, (void **)&b->p, &b->cap, b->n + 1, sizeof *b->p) ||
            root_add(b, r))
            return WEFT_ENOMEM;
        b->p[b->n++] = (batch_pair_t){weft_apply_output(node, 0), weft_apply_output(nn, 0),
                                      cn->topo};
        return WEFT_OK;
    }
    return st == WEFT_ENOMEM ? st : WEFT_OK;
}

/* Replaces consumers before producers: each new node reads the old
 * producer's output, which must still be in the graph when it is imported
 * (replacing a producer first would re-import the old chain behind it). */
static weft_status_t batch_commit(weft_fgraph_t *fg, batch_t *b)
{
    qsort(b->p, b->n, sizeof *b->p, by_topo_desc);
    weft_var_t **olds = weft__vec_malloc(b->n, 2 * sizeof *olds);
    if (!olds) return WEFT_ENOMEM;
    weft_var_t **news = olds + b->n;
    for (size_t i = 0; i < b->n; i++) {
        olds[i] = b->p[i].old_var;
        news[i] = b->p[i].new_var;
    }
    weft_status_t st = weft_fgraph_replace_all_validate(fg, b->n, olds, news, "inplace");
    free(olds);
    return st;
}

/* *done: the batch was accepted (or empty). */
static weft_status_t batch_sweep(weft_fgraph_t *fg, vop_cache_t *vc, const cand_node_t *c,
                                 size_t n, size_t *changes, bool *done)
{
    batch_t b;
    memset(&b, 0, sizeof b);
    weft_status_t st = WEFT_OK;
    for (size_t k = 0; k < n && st == WEFT_OK; k++) st = batch_add(fg, vc, &b, &c[k]);
    *done = true;
    if (st == WEFT_OK && b.n) {
        st = batch_commit(fg, &b);
        *done = st == WEFT_OK;
        if (st == WEFT_OK) *changes += b.n;
        else if (st != WEFT_ENOMEM) st = WEFT_OK;
    }
    free(b.p);
    free(b.roots);
    return st;
}

static weft_status_t inplace_apply(weft_fgraph_t *fg, void *user, weft_rewrite_stats_t *stats,
                                   size_t *n_changes)
{
    weft_status_t st = weft_dh_attach(fg, NULL);
    cand_node_t *c = NULL;
    size_t n = 0, failed = 0;
    if (st == WEFT_OK) st = collect(fg, &c, &n);
    bool batched = false;
    vop_cache_t vc = {NULL, 0, 0};
    if (st == WEFT_OK) st = batch_sweep(fg, &vc, c, n, n_changes, &batched);
    for (int sweep = batched ? 1 : 0; sweep < 2 && st == WEFT_OK; sweep++)
        for (size_t k = 0; k < n && st == WEFT_OK; k++) {
            weft_apply_t *node = c[k].node;
            if (!weft_fgraph_contains_apply(fg, node)) continue; /* replaced in sweep 0 */
            st = try_node(fg, &vc, node, sweep == 0, n_changes, &failed);
        }
    free(c);
    free(vc.s);
    if (st == WEFT_OK && failed) st = weft_rewrite_stats_record(stats, user, 0, failed, 0.0);
    return st;
}

weft_status_t weft_rewriter_inplace_create(const char *name, weft_rewriter_t **out)
{
    if (!out) return WEFT_EINVAL;
    weft_status_t st =
        weft_rewriter_graph_create(name ? name : "inplace", inplace_apply, NULL, NULL, out);
    if (st == WEFT_OK) (*out)->user = (*out)->name;
    return st;
}
