/* Guards: which nodes of a compiled function run only under some IfElse
 * conditions (docs/control-flow.md §2). Computed on the toposort before the
 * node order is fixed:
 * - a node's guard is the disjunction, over the ways its outputs are
 *   demanded, of the conditions on that way: a graph output is always
 *   demanded; an input of a node C is demanded under C's guard, and, for a
 *   branch input of an IfElse on condition c, under C's guard and c (then)
 *   or not c (else). Guards are kept in disjunctive normal form, literals in
 *   the order met from the outputs down (outer conditions first), with
 *   absorption and resolution (t & c | t & !c = t);
 * - a guard with more than GUARD_TERMS terms or GUARD_LITS literals in a
 *   term is dropped: the node runs eagerly (always correct: it only does
 *   work nobody may need);
 * - a guarded node waits for the producer of every condition of its guard
 *   (one DAG edge each) and at run time runs only when its guard holds
 *   (call.c); a node that is an ancestor of such a producer runs eagerly
 *   (the edge would close a cycle). If the added edges still close a cycle
 *   through several conditions, every ancestor of a condition runs eagerly;
 *   that set of edges cannot close one (every edge then enters a node that
 *   reaches no condition).
 * Evaluating a term left to right never reads a condition whose producer
 * was skipped: the literals before condition c are those under which c's
 * IfElse is demanded, so c's producer ran. */
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"
#include "graph/ifelse_id.h"

#define GUARD_TERMS 4
#define GUARD_LITS 8
#define GUARD_MAX_CONDS 32767u /* literals are 16-bit: cond << 1 | negated */
#define GUARD_MAX_BITS ((size_t)1 << 27)

typedef struct guard {
    bool eager;      /* always runs (TRUE, or too complex) */
    uint8_t n_terms; /* 0 and not eager: never demanded */
    uint8_t len[GUARD_TERMS];
    uint16_t lit[GUARD_TERMS][GUARD_LITS];
} guard_t;

typedef struct guard_ctx {
    weft_apply_t *const *order;
    size_t n;
    const uint32_t *apply_idx; /* by apply id: toposort index */
    const uint64_t *edges;     /* data + orderings, sorted, distinct */
    size_t ne;
    size_t *cond_of_var;      /* by var id + 1: cond index + 1, 0 none */
    weft_var_t **conds;       /* by cond index */
    size_t n_conds;
    uint64_t *anc;            /* n_conds rows of n bits: ancestors of the cond's producer */
    size_t w;
    guard_t *g;               /* by toposort index */
} guard_ctx_t;

static bool term_has(const guard_t *g, size_t t, uint16_t lit)
{
    for (size_t k = 0; k < g->len[t]; k++)
        if (g->lit[t][k] == lit) return true;
    return false;
}

/* Term t of a is a subset of term u of b (as literal sets). */
static bool term_subset(const guard_t *a, size_t t, const guard_t *b, size_t u)
{
    for (size_t k = 0; k < a->len[t]; k++)
        if (!term_has(b, u, a->lit[t][k])) return false;
    return true;
}

static void drop_term(guard_t *g, size_t t)
{
    g->n_terms--;
    g->len[t] = g->len[g->n_terms];
    memcpy(g->lit[t], g->lit[g->n_terms], sizeof g->lit[t]);
}

/* Resolution: terms equal but for the polarity of their last differing
 * literal at the same position merge into the shorter term (the literal
 * dropped keeps the others' order, so the term stays safe to evaluate). */
static bool resolve_once(guard_t *g)
{
    for (size_t t = 0; t < g->n_terms; t++)
        for (size_t u = t + 1; u < g->n_terms; u++) {
            if (g->len[t] != g->len[u]) continue;
            size_t diff = 0, at = 0;
            for (size_t k = 0; k < g->len[t]; k++)
                if (g->lit[t][k] != g->lit[u][k]) diff++, at = k;
            if (diff != 1 || (g->lit[t][at] ^ g->lit[u][at]) != 1) continue;
            memmove(&g->lit[t][at], &g->lit[t][at + 1], (g->len[t] - at - 1) * sizeof(uint16_t));
            g->len[t]--;
            drop_term(g, u);
            return true;
        }
    return false;
}

/* Absorption (a term containing another goes) and resolution, to a fixed point. */
static void simplify(guard_t *g)
{
    bool changed = true;
    while (changed && !g->eager) {
        changed = false;
        for (size_t t = 0; t < g->n_terms && !changed; t++) {
            if (g->len[t] == 0) {
                g->eager = true;
                return;
            }
            for (size_t u = 0; u < g->n_terms && !changed; u++)
                if (u != t && g->len[t] <= g->len[u] && term_subset(g, t, g, u)) {
                    drop_term(g, u);
                    changed = true;
                }
        }
        changed = changed || resolve_once(g);
    }
}

/* dst |= src & lit (lit UINT32_MAX: none). Over the caps: eager. */
static void guard_add(guard_t *dst, const guard_t *src, uint32_t lit)
{
    if (dst->eager) return;
    if (src->eager && lit == UINT32_MAX) {
        dst->eager = true;
        return;
    }
    guard_t one = {.n_terms = 1}; /* TRUE as one empty term */
    const guard_t *s = src->eager ? &one : src;
    for (size_t t = 0; t < s->n_terms && !dst->eager; t++) {
        if (lit != UINT32_MAX && term_has(s, t, (uint16_t)(lit ^ 1))) continue; /* c & !c */
        bool add = lit != UINT32_MAX && !term_has(s, t, (uint16_t)lit);
        if (dst->n_terms == GUARD_TERMS || s->len[t] + add > GUARD_LITS) {
            dst->eager = true;
            return;
        }
        size_t d = dst->n_terms++;
        memcpy(dst->lit[d], s->lit[t], s->len[t] * sizeof(uint16_t));
        dst->len[d] = (uint8_t)(s->len[t] + add);
        if (add) dst->lit[d][s->len[t]] = (uint16_t)lit;
        simplify(dst);
    }
}

/* The conditions of the graph's IfElse nodes, numbered. */
static weft_status_t find_conds(guard_ctx_t *c, size_t n_vars)
{
    c->cond_of_var = calloc(n_vars + 1, sizeof *c->cond_of_var);
    c->conds = malloc((c->n + 1) * sizeof *c->conds);
    if (!c->cond_of_var || !c->conds) return WEFT_ENOMEM;
    for (size_t i = 0; i < c->n; i++) {
        if (weft__ifelse_pairs(c->order[i]) == 0) continue;
        weft_var_t *v = weft_apply_input(c->order[i], 0);
        if (c->cond_of_var[weft_var_id(v)] == 0 && c->n_conds < GUARD_MAX_CONDS) {
            c->conds[c->n_conds++] = v;
            c->cond_of_var[weft_var_id(v)] = c->n_conds;
        }
    }
    return WEFT_OK;
}

/* anc row k: the strict ancestors of cond k's producer (none for a root),
 * by a walk over the edges backwards (one pass in reverse topological
 * order: a node is an ancestor when one of its successors is or is the
 * producer). */
static weft_status_t cond_ancestors(guard_ctx_t *c)
{
    c->w = (c->n + 63) / 64;
    if (c->n_conds * c->w * 64 > GUARD_MAX_BITS) return WEFT_ERANGE;
    c->anc = calloc(c->n_conds * c->w + 1, sizeof *c->anc);
    if (!c->anc) return WEFT_ENOMEM;
    for (size_t k = 0; k < c->n_conds; k++) {
        weft_apply_t *p = weft_var_owner(c->conds[k]);
        if (!p) continue;
        uint64_t *row = c->anc + k * c->w;
        uint32_t pi = c->apply_idx[weft_apply_id(p)];
        /* edges are sorted by source: scan sources from high to low */
        for (size_t e = c->ne; e-- > 0;) {
            uint32_t from = weft__edge_from(c->edges[e]), to = weft__edge_to(c->edges[e]);
            if (to == pi || weft__mp_bit_get(row, to)) row[from >> 6] |= 1ull << (from & 63);
        }
    }
    return WEFT_OK;
}

/* Nodes producing a graph output or update: always demanded. */
static void mark_outputs(guard_ctx_t *c, const weft_function_t *f)
{
    for (size_t k = 0; k < f->n_out + f->n_upd; k++) {
        weft_apply_t *p = weft_var_owner(f->out_vars[k]);
        if (p) c->g[c->apply_idx[weft_apply_id(p)]].eager = true;
    }
}

/* A guarded node that an edge from one of its conditions' producers would
 * put on a cycle (strict: it is that producer's ancestor; all: it is any
 * condition's ancestor) runs eagerly. */
static void check_cycle(guard_ctx_t *c, size_t i, bool all)
{
    guard_t *g = &c->g[i];
    if (g->eager) return;
    if (all) {
        for (size_t k = 0; k < c->n_conds && !g->eager; k++)
            g->eager = weft__mp_bit_get(c->anc + k * c->w, (uint32_t)i);
        return;
    }
    for (size_t t = 0; t < g->n_terms && !g->eager; t++)
        for (size_t j = 0; j < g->len[t] && !g->eager; j++)
            g->eager = weft__mp_bit_get(c->anc + (size_t)(g->lit[t][j] >> 1) * c->w, (uint32_t)i);
}

/* Guards in reverse toposort order: each node's guard is final when its
 * consumers (later in the order) have added to it. */
static void compute_guards(guard_ctx_t *c, const weft_function_t *f, bool all)
{
    memset(c->g, 0, c->n * sizeof *c->g);
    mark_outputs(c, f);
    for (size_t i = c->n; i-- > 0;) {
        weft_apply_t *a = c->order[i];
        check_cycle(c, i, all);
        size_t pairs = weft__ifelse_pairs(a), cond = 0;
        if (pairs) cond = c->cond_of_var[weft_var_id(weft_apply_input(a, 0))];
        for (size_t k = 0; k < weft_apply_n_inputs(a); k++) {
            weft_apply_t *p = weft_var_owner(weft_apply_input(a, k));
            if (!p) continue;
            uint32_t lit = UINT32_MAX;
            if (cond && weft__ifelse_is_then(pairs, k)) lit = (uint32_t)(cond - 1) << 1;
            if (cond && weft__ifelse_is_else(pairs, k)) lit = (uint32_t)(cond - 1) << 1 | 1;
            guard_add(&c->g[c->apply_idx[weft_apply_id(p)]], &c->g[i], lit);
        }
    }
}

/* The distinct conditions node i's guard reads, into k[] (at most
 * GUARD_TERMS * GUARD_LITS); returns their count. */
static size_t guard_conds(const guard_t *g, uint32_t *k)
{
    size_t m = 0;
    for (size_t t = 0; t < g->n_terms; t++)
        for (size_t j = 0; j < g->len[t]; j++) {
            uint32_t x = g->lit[t][j] >> 1;
            bool seen = false;
            for (size_t q = 0; q < m && !seen; q++) seen = k[q] == x;
            if (!seen) k[m++] = x;
        }
    return m;
}

/* The guard edges: producer of each condition of a guard -> the node;
 * out NULL: only counts them. */
static size_t guard_edges(const guard_ctx_t *c, uint64_t *out)
{
    size_t m = 0;
    uint32_t k[GUARD_TERMS * GUARD_LITS];
    for (size_t i = 0; i < c->n; i++) {
        if (c->g[i].eager) continue;
        size_t nk = guard_conds(&c->g[i], k);
        for (size_t q = 0; q < nk; q++) {
            weft_apply_t *p = weft_var_owner(c->conds[k[q]]);
            if (!p) continue;
            if (out) out[m] = weft__edge_pack(c->apply_idx[weft_apply_id(p)], (uint32_t)i);
            m++;
        }
    }
    return m;
}

/* Whether n nodes and edges e (sorted by source) form a DAG: the
 * one-worker replay (schedule_order.c) reaches every node only then. */
static bool acyclic(size_t n, const uint64_t *e, size_t ne, weft_status_t *st)
{
    uint32_t *rank = malloc((n + 1) * sizeof *rank);
    weft_status_t s = rank ? weft__schedule_order((uint32_t)n, e, ne, rank) : WEFT_ENOMEM;
    free(rank);
    if (s == WEFT_ENOMEM) *st = s;
    return s == WEFT_OK;
}

static int cmp_edge(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The edges plus the guard edges, sorted (duplicates kept). */
static uint64_t *with_guard_edges(const guard_ctx_t *c, size_t *ne)
{
    size_t k = guard_edges(c, NULL);
    uint64_t *all = malloc((c->ne + k + 1) * sizeof *all);
    if (!all) return NULL;
    memcpy(all, c->edges, c->ne * sizeof *all);
    guard_edges(c, all + c->ne);
    qsort(all, c->ne + k, sizeof *all, cmp_edge);
    *ne = c->ne + k;
    return all;
}

static void guard_ctx_free(guard_ctx_t *c)
{
    free(c->cond_of_var);
    free(c->conds);
    free(c->anc);
    free(c->g);
}

/* Encodes node i's guard into words: [n_terms, (len, lit...)...], a
 * literal being (cond var id << 1 | negated) until slots are known. */
static size_t encode(const guard_ctx_t *c, size_t i, uint32_t *w)
{
    const guard_t *g = &c->g[i];
    size_t m = 0;
    w[m++] = g->n_terms;
    for (size_t t = 0; t < g->n_terms; t++) {
        w[m++] = g->len[t];
        for (size_t k = 0; k < g->len[t]; k++) {
            uint16_t l = g->lit[t][k];
            w[m++] = (uint32_t)weft_var_id(c->conds[l >> 1]) << 1 | (l & 1u);
        }
    }
    return m;
}

/* Distinct guards compared for sharing one encoding (and so one offset and
 * one per-call memo entry); beyond, a guard gets its own. */
#define GUARD_DEDUPE 64

/* The offset of an encoding equal to w[0..m) among the first ones, or 0. */
static uint32_t find_equal(const weft__guard_plan_t *gp, const uint32_t *w, size_t m)
{
    for (size_t k = 0; k < gp->n_distinct && k < GUARD_DEDUPE; k++) {
        uint32_t o = gp->distinct[k];
        if (gp->len[k] == m && memcmp(gp->words + o + 1, w, m * sizeof *w) == 0) return o;
    }
    return 0;
}

/* Each guard once: [memo id, n_terms, terms...]; node i's offset in off[i]. */
static weft_status_t encode_all(const guard_ctx_t *c, weft__guard_plan_t *gp)
{
    size_t words = 1;
    for (size_t i = 0; i < c->n; i++)
        if (!c->g[i].eager) words += 2 + c->g[i].n_terms * (1 + GUARD_LITS);
    gp->off = calloc(c->n + 1, sizeof *gp->off);
    gp->words = malloc(words * sizeof *gp->words);
    gp->distinct = malloc((c->n + 1) * sizeof *gp->distinct);
    gp->len = malloc((c->n + 1) * sizeof *gp->len);
    if (!gp->off || !gp->words || !gp->distinct || !gp->len) return WEFT_ENOMEM;
    size_t m = 1; /* offset 0: no guard */
    for (size_t i = 0; i < c->n; i++) {
        if (c->g[i].eager) continue;
        gp->n_guarded++;
        size_t len = encode(c, i, gp->words + m + 1);
        uint32_t same = find_equal(gp, gp->words + m + 1, len);
        if (same) {
            gp->off[i] = same;
            continue;
        }
        gp->words[m] = (uint32_t)gp->n_distinct;
        gp->off[i] = (uint32_t)m;
        gp->len[gp->n_distinct] = len;
        gp->distinct[gp->n_distinct++] = (uint32_t)m;
        m += 1 + len;
    }
    gp->n_words = m;
    return WEFT_OK;
}

weft_status_t weft__guard_plan(const weft_function_t *f, weft_apply_t *const *order, size_t n,
                               const uint32_t *apply_idx, uint64_t **edges, size_t *ne,
                               weft__guard_plan_t *gp)
{
    memset(gp, 0, sizeof *gp);
    bool any = false;
    for (size_t i = 0; i < n && !any; i++) any = weft__ifelse_pairs(order[i]) != 0;
    if (!any) return WEFT_OK;
    guard_ctx_t c = {.order = order, .n = n, .apply_idx = apply_idx, .edges = *edges, .ne = *ne};
    c.g = malloc((n + 1) * sizeof *c.g);
    weft_status_t st = c.g ? find_conds(&c, weft_graph_n_vars(f->g)) : WEFT_ENOMEM;
    if (st == WEFT_OK) st = cond_ancestors(&c);
    uint64_t *all = NULL;
    size_t m = 0;
    for (int pass = 0; st == WEFT_OK && pass < 2 && !all; pass++) {
        compute_guards(&c, f, pass == 1);
        all = with_guard_edges(&c, &m);
        if (!all) st = WEFT_ENOMEM;
        else if (!acyclic(n, all, m, &st)) {
            free(all);
            all = NULL;
        }
    }
    if (st == WEFT_OK && all) st = encode_all(&c, gp);
    if (st == WEFT_OK && all) {
        free(*edges);
        *edges = all;
        *ne = m;
        all = NULL;
    }
    free(all);
    guard_ctx_free(&c);
    if (st == WEFT_ERANGE) st = WEFT_OK; /* too many conditions: everything eager */
    if (st != WEFT_OK) weft__guard_plan_free(gp);
    return st;
}

void weft__guard_plan_free(weft__guard_plan_t *gp)
{
    free(gp->off);
    free(gp->words);
    free(gp->distinct);
    free(gp->len);
    memset(gp, 0, sizeof *gp);
}
