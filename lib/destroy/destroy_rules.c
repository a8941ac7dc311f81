/* DestroyHandler rules: the lazy rebuild of the derived maps (droot,
 * root_destroyer, impact sets) with rules D0-D3, the orderings of D4, and the
 * cycle check of D5 used by validate (docs/destroy.md §3). The rebuild costs
 * O(destroyers + their impact sets + the clients of those sets); D5 is one
 * iterative DFS over the fgraph's nodes, O(V + E), cached until the next
 * edit. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "destroy_int.h"
#include "base/base_int.h"
#include "base/vec.h"

/* ---- messages --------------------------------------------------------------- */

/* Writes (append: appends) a formatted message into a grown buffer. On ENOMEM
 * the message is truncated: it is diagnostic text only. */
static void dh_fmt(dh_t *dh, char **buf, size_t *cap, bool append, const char *fmt, ...)
    WEFT_PRINTF(5, 6);
static void dh_fmt(dh_t *dh, char **buf, size_t *cap, bool append, const char *fmt, ...)
{
    size_t at = (append && *buf) ? strlen(*buf) : 0;
    va_list ap;
    va_start(ap, fmt);
    va_list ap2;
    va_copy(ap2, ap);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (need >= 0 && weft__vec_grow(dh->alloc, (void **)buf, cap, at + (size_t)need + 1, 1)) {
        vsnprintf(*buf + at, (size_t)need + 1, fmt, ap2);
    }
    va_end(ap2);
}

static void dh_describe_node(const weft_apply_t *n, char *buf, size_t cap)
{
    weft_apply_describe(n, buf, cap);
}

/* ---- derived maps ------------------------------------------------------------ */

void weft__dh_clear_derived(dh_t *dh)
{
    weft__free(dh->alloc, dh->msg, dh->msg_cap);
    weft__free(dh->alloc, dh->cycle_msg, dh->cycle_msg_cap);
    weft__free(dh->alloc, dh->impact, dh->cap_impact * sizeof(weft_var_t *));
    weft__free(dh->alloc, dh->pre_before, dh->cap_pre * sizeof(weft_apply_t *));
    weft__free(dh->alloc, dh->pre_after, dh->cap_pre * sizeof(weft_apply_t *));
    weft__free(dh->alloc, dh->pre_before_id, dh->cap_pre * sizeof(uint32_t));
    weft__free(dh->alloc, dh->scratch, dh->cap_scratch);
    dh->msg = dh->cycle_msg = NULL;
    dh->msg_cap = dh->cycle_msg_cap = 0;
    dh->impact = NULL;
    dh->pre_before = dh->pre_after = NULL;
    dh->pre_before_id = NULL;
    dh->scratch = NULL;
    dh->n_impact = dh->cap_impact = dh->n_pre = dh->cap_pre = dh->cap_scratch = 0;
    dh->verdict = WEFT_OK;
    dh->cycle_verdict = WEFT_OK;
}

bool weft__dh_in_impact(dh_t *dh, const weft_var_t *u, const weft_var_t *r)
{
    const dh_var_t *rec = weft__dh_var(dh, u);
    return rec->epoch == dh->epoch && rec->droot == r;
}

typedef struct dh_keyed {
    uint64_t id;
    weft_apply_t *node;
} dh_keyed_t;

static int dh_cmp_key(const void *a, const void *b)
{
    uint64_t x = ((const dh_keyed_t *)a)->id, y = ((const dh_keyed_t *)b)->id;
    return (x > y) - (x < y);
}

/* Destroyers in creation order (deterministic messages and orderings,
 * whatever the edit history). Keys are read once, so the sort itself stays
 * in cache. */
static weft_status_t dh_sort_destroyers(dh_t *dh)
{
    size_t n = dh->destroyers.n;
    if (n < 2) return WEFT_OK;
    dh_keyed_t *k = weft__vec_alloc(dh->alloc, n, sizeof *k);
    if (!k) return WEFT_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        k[i].node = dh->destroyers.items[i];
        k[i].id = weft_apply_id(k[i].node);
    }
    qsort(k, n, sizeof *k, dh_cmp_key);
    for (size_t i = 0; i < n; i++) {
        dh->destroyers.items[i] = k[i].node;
        dh->nodes[k[i].id].dpos = (uint32_t)i + 1;
    }
    weft__free(dh->alloc, k, n * sizeof *k);
    return WEFT_OK;
}

static weft_status_t dh_push_impact(dh_t *dh, weft_var_t *v)
{
    if (!weft__vec_grow(dh->alloc, (void **)&dh->impact, &dh->cap_impact, dh->n_impact + 1,
                        sizeof(weft_var_t *)))
        return WEFT_ENOMEM;
    dh->impact[dh->n_impact++] = v;
    return WEFT_OK;
}

/* D1 for one destroyer entry, and the impact set of its root (breadth-first
 * over the view children, root first). */
static weft_status_t dh_claim_root(dh_t *dh, weft_apply_t *n, weft_var_t *d)
{
    weft_var_t *r = weft__dh_root(dh, d);
    dh_var_t *rr = weft__dh_var(dh, r);
    if (rr->epoch == dh->epoch) {
        char a[160], b[160], v[256], name[96];
        weft_var_print(r, name, sizeof name);
        weft__dh_describe_var(r, v, sizeof v);
        dh_describe_node(rr->destroyer, a, sizeof a);
        dh_describe_node(n, b, sizeof b);
        dh_fmt(dh, &dh->msg, &dh->msg_cap, false,
               "Multiple destroyers of %s: %s and %s both destroy %s (rule D1)", name, a, b, v);
        return WEFT_EINCONSISTENT;
    }
    rr->epoch = dh->epoch;
    rr->droot = r;
    rr->destroyer = n;
    size_t start = dh->n_impact;
    weft_status_t s = dh_push_impact(dh, r);
    for (size_t k = start; s == WEFT_OK && k < dh->n_impact; k++) {
        dh_var_t *vr = weft__dh_var(dh, dh->impact[k]);
        for (uint32_t c = 0; s == WEFT_OK && c < vr->n_kids; c++) {
            weft_var_t *kid = vr->kids[c];
            dh_var_t *kr = weft__dh_var(dh, kid);
            kr->epoch = dh->epoch;
            kr->droot = r;
            s = dh_push_impact(dh, kid);
        }
    }
    rr = weft__dh_var(dh, r);
    rr->impact_start = (uint32_t)start;
    rr->impact_len = (uint32_t)(dh->n_impact - start);
    return s;
}

static weft_status_t dh_d1(dh_t *dh)
{
    for (size_t k = 0; k < dh->destroyers.n; k++) {
        weft_apply_t *n = dh->destroyers.items[k];
        const weft_op_alias_t *e;
        size_t m;
        weft_op_destroy_map(weft_apply_op(n), &e, &m);
        for (size_t j = 0; j < m; j++) {
            weft_status_t s = dh_claim_root(dh, n, weft_apply_input(n, e[j].input));
            if (s != WEFT_OK) return s;
        }
    }
    return WEFT_OK;
}

/* D2: no variable of a destroyed impact set is a constant or indestructible. */
static weft_status_t dh_d2(dh_t *dh)
{
    size_t bad = 0;
    weft_var_t *first = NULL;
    for (size_t k = 0; k < dh->n_impact; k++) {
        weft_var_t *v = dh->impact[k];
        if (!weft_var_is_constant(v) && !weft_var_is_indestructible(v)) continue;
        char name[96];
        weft_var_print(v, name, sizeof name);
        dh_fmt(dh, &dh->msg, &dh->msg_cap, bad > 0, "%s%s",
               bad ? ", " : "Attempting to destroy indestructible variables: [", name);
        if (!first) first = v;
        bad++;
    }
    if (!bad) return WEFT_OK;
    char v[256], d[160];
    weft__dh_describe_var(first, v, sizeof v);
    dh_describe_node(weft__dh_var(dh, weft__dh_var(dh, first)->droot)->destroyer, d, sizeof d);
    dh_fmt(dh, &dh->msg, &dh->msg_cap, true, "] (rule D2: %s destroyed by %s)", v, d);
    return WEFT_EINCONSISTENT;
}

static bool dh_pair_listed(const weft_op_alias_t *e, size_t m, size_t d, size_t j)
{
    for (size_t k = 0; k < m; k++) {
        if (e[k].output == d && e[k].input == j) return true;
    }
    return false;
}

/* D3 for destroyer n's entry destroying input d (docs/destroy.md §3). */
static weft_status_t dh_d3(dh_t *dh, weft_apply_t *n, size_t d)
{
    const weft_op_t *op = weft_apply_op(n);
    const weft_op_alias_t *same, *aliased;
    size_t n_same, n_aliased;
    weft_op_tolerate_same(op, &same, &n_same);
    weft_op_tolerate_aliased(op, &aliased, &n_aliased);
    weft_var_t *dv = weft_apply_input(n, d);
    weft_var_t *r = weft__dh_var(dh, dv)->droot;
    for (size_t j = 0; j < weft_apply_n_inputs(n); j++) {
        if (dh_pair_listed(aliased, n_aliased, d, j)) continue;
        weft_var_t *in = weft_apply_input(n, j);
        if (!weft__dh_in_impact(dh, in, r)) continue;
        bool tolerated = j == d || dh_pair_listed(same, n_same, d, j);
        if (tolerated && in == dv) continue;
        char p[256], desc[160];
        weft_apply_print(n, p, sizeof p);
        dh_describe_node(n, desc, sizeof desc);
        dh_fmt(dh, &dh->msg, &dh->msg_cap, false,
               "Input aliasing: %s (%zu, %zu) (rule D3: %s destroys input %zu while input %zu "
               "aliases it)", p, d, j, desc, d, j);
        return WEFT_EINCONSISTENT;
    }
    return WEFT_OK;
}

static weft_status_t dh_push_pair(dh_t *dh, weft_apply_t *before, weft_apply_t *after)
{
    if (dh->n_pre == dh->cap_pre) {
        size_t cap = dh->cap_pre, c2 = cap, c3 = cap;
        bool ok =
            weft__vec_grow(dh->alloc, (void **)&dh->pre_before, &cap, dh->n_pre + 1,
                           sizeof(weft_apply_t *)) &&
            weft__vec_grow(dh->alloc, (void **)&dh->pre_before_id, &c2, cap, sizeof(uint32_t)) &&
            weft__vec_grow(dh->alloc, (void **)&dh->pre_after, &c3, cap, sizeof(weft_apply_t *));
        if (!ok) return WEFT_ENOMEM; /* arrays grown so far keep their old contents */
        WEFT_ASSERT(c2 == cap && c3 == cap, "dh: pair arrays out of step");
        dh->cap_pre = cap;
    }
    dh->pre_before[dh->n_pre] = before;
    dh->pre_before_id[dh->n_pre] = (uint32_t)weft_apply_id(before);
    dh->pre_after[dh->n_pre++] = after;
    return WEFT_OK;
}

/* D4: every DH client of the impact set of each root n destroys, minus n. */
static weft_status_t dh_d4(dh_t *dh, weft_apply_t *n, size_t d)
{
    weft_var_t *r = weft__dh_var(dh, weft_apply_input(n, d))->droot;
    const dh_var_t *rr = weft__dh_var(dh, r);
    for (uint32_t k = rr->impact_start; k < rr->impact_start + rr->impact_len; k++) {
        const weft_client_t *cl;
        size_t nc;
        if (weft_fgraph_clients(dh->fg, dh->impact[k], &cl, &nc) != WEFT_OK) continue;
        for (size_t c = 0; c < nc; c++) {
            if (weft_apply_is_output_slot(cl[c].node)) continue;
            dh_node_t *cr = weft__dh_node(dh, cl[c].node);
            if (cr->mark == dh->stamp) continue;
            cr->mark = dh->stamp;
            weft_status_t s = dh_push_pair(dh, cl[c].node, n);
            if (s != WEFT_OK) return s;
        }
    }
    return WEFT_OK;
}

static weft_status_t dh_d3_d4(dh_t *dh)
{
    for (size_t k = 0; k < dh->destroyers.n; k++) {
        weft_apply_t *n = dh->destroyers.items[k];
        dh_node_t *nr = weft__dh_node(dh, n);
        nr->mark = weft__dh_next_stamp(dh); /* n never precedes itself */
        nr->pre_start = (uint32_t)dh->n_pre;
        const weft_op_alias_t *e;
        size_t m;
        weft_op_destroy_map(weft_apply_op(n), &e, &m);
        for (size_t j = 0; j < m; j++) {
            weft_status_t s = dh_d3(dh, n, e[j].input);
            if (s == WEFT_OK) s = dh_d4(dh, n, e[j].input);
            if (s != WEFT_OK) return s;
        }
        nr = weft__dh_node(dh, n);
        nr->pre_len = (uint32_t)(dh->n_pre - nr->pre_start);
        nr->pre_epoch = dh->epoch;
    }
    return WEFT_OK;
}

static weft_status_t dh_d0(dh_t *dh)
{
    weft_apply_t *worst = NULL;
    for (size_t k = 0; k < dh->malformed.n; k++) {
        weft_apply_t *a = dh->malformed.items[k];
        if (!worst || weft_apply_id(a) < weft_apply_id(worst)) worst = a;
    }
    if (!worst) return WEFT_OK;
    char d[160];
    dh_describe_node(worst, d, sizeof d);
    dh_fmt(dh, &dh->msg, &dh->msg_cap, false,
           "%s: view_map/destroy_map must map each output to exactly one input index in range "
           "(rule D0)", d);
    return WEFT_ENOTIMPL;
}

/* A new epoch invalidates every droot / pre mark at once; on wrap-around the
 * marks are cleared so an old epoch can never match. */
static void dh_new_epoch(dh_t *dh)
{
    if (++dh->epoch != 0) return;
    for (size_t k = 0; k < dh->cap_vars; k++) dh->vars[k].epoch = 0;
    for (size_t k = 0; k < dh->cap_nodes; k++) dh->nodes[k].pre_epoch = 0;
    dh->epoch = 1;
}

weft_status_t weft__dh_refresh(dh_t *dh)
{
    if (!dh->stale) return dh->verdict;
    dh_new_epoch(dh);
    dh->n_impact = dh->n_pre = 0;
    if (dh->msg) dh->msg[0] = '\0';
    weft_status_t s = dh_sort_destroyers(dh);
    if (s == WEFT_OK) s = dh_d0(dh);
    if (s == WEFT_OK) s = dh_d1(dh);
    dh->maps_ok = s == WEFT_OK;
    if (s == WEFT_OK) s = dh_d2(dh);
    if (s == WEFT_OK) s = dh_d3_d4(dh);
    dh->verdict = s;
    dh->stale = (s == WEFT_ENOMEM || s == WEFT_EOVERFLOW);
    dh->cycle_stale = true;
    return s;
}

weft_status_t weft__dh_report(dh_t *dh)
{
    weft_status_t s = weft__dh_refresh(dh);
    if (s == WEFT_EINCONSISTENT || s == WEFT_ENOTIMPL) {
        return weft_fgraph_set_error(dh->fg, s, "%s", dh->msg ? dh->msg : "");
    }
    return s;
}

/* ---- D5 ---------------------------------------------------------------------------- */

typedef struct dh_frame {
    uint32_t id;
    uint32_t next; /* next predecessor slot: inputs first, then D4 prerequisites */
} dh_frame_t;

/* The k-th predecessor of node id (1 + its id; 0: none), *end past the last. */
static uint32_t dh_pred(dh_t *dh, uint32_t id, uint32_t k, bool *end)
{
    dh_node_t *nr = &dh->nodes[id];
    *end = false;
    if (k < nr->n_in) return dh_preds(nr)[k];
    k -= nr->n_in;
    if (nr->pre_epoch == dh->epoch && k < nr->pre_len) {
        return dh->pre_before_id[nr->pre_start + k] + 1;
    }
    *end = true;
    return 0;
}

static weft_status_t dh_cycle_found(dh_t *dh, dh_frame_t *st, size_t top, uint32_t back)
{
    dh_fmt(dh, &dh->cycle_msg, &dh->cycle_msg_cap, false,
           "Dependency graph contains cycles (rule D5; data edges plus destroy orderings):");
    size_t from = top;
    while (from > 0 && st[from - 1].id != back) from--;
    if (from > 0) from--;
    size_t shown = 0;
    for (size_t k = top; k-- > from && shown < 6; shown++) {
        char d[160];
        dh_describe_node(dh->nodes[st[k].id].self, d, sizeof d);
        dh_fmt(dh, &dh->cycle_msg, &dh->cycle_msg_cap, true, " %s%s", shown ? "after " : "", d);
    }
    return WEFT_EINCONSISTENT;
}

/* Makes dh->scratch (one byte buffer the DFS walks share) hold n elements of
 * elem bytes. */
static weft_status_t dh_scratch(dh_t *dh, size_t n, size_t elem)
{
    size_t bytes;
    bool ok = weft__mul_size(n, elem, &bytes) &&
              weft__vec_grow(dh->alloc, (void **)&dh->scratch, &dh->cap_scratch, bytes, 1);
    return ok ? WEFT_OK : WEFT_ENOMEM;
}

/* Iterative three-colour DFS over predecessors from every imported node, on
 * the dense node table only (cache-friendly: no graph pointers followed). */
static weft_status_t dh_cycle_check(dh_t *dh)
{
    size_t n = weft_fgraph_n_applies(dh->fg);
    weft_status_t s = dh_scratch(dh, n + 1, sizeof(dh_frame_t));
    if (s != WEFT_OK) return s;
    dh_frame_t *st = (dh_frame_t *)dh->scratch;
    uint32_t ep = weft__dh_next_stamp(dh);
    for (size_t i = 0; i < dh->cap_nodes; i++) {
        dh_node_t *r0 = &dh->nodes[i];
        if (!(r0->flags & DH_IMPORTED) || r0->color_epoch == ep) continue;
        r0->color_epoch = ep;
        r0->color = 1;
        size_t top = 0;
        st[top++] = (dh_frame_t){(uint32_t)i, 0};
        while (top > 0) {
            dh_frame_t *f = &st[top - 1];
            bool end;
            uint32_t p = dh_pred(dh, f->id, f->next++, &end);
            if (end) {
                dh->nodes[f->id].color = 2;
                top--;
                continue;
            }
            if (!p || !(dh->nodes[p - 1].flags & DH_IMPORTED)) continue;
            dh_node_t *pr = &dh->nodes[p - 1];
            if (pr->color_epoch == ep && pr->color == 2) continue;
            if (pr->color_epoch == ep) return dh_cycle_found(dh, st, top, p - 1);
            pr->color_epoch = ep;
            pr->color = 1;
            WEFT_ASSERT(top < n + 1, "dh: DFS stack overflow");
            st[top++] = (dh_frame_t){p - 1, 0};
        }
    }
    return WEFT_OK;
}

weft_status_t weft__dh_reaches(dh_t *dh, weft_apply_t *const *from, size_t n,
                               const weft_apply_t *target, bool *found)
{
    size_t need = weft_fgraph_n_applies(dh->fg) + n + 1;
    weft_status_t s = dh_scratch(dh, need, sizeof(uint32_t));
    if (s != WEFT_OK) return s;
    uint32_t *st = (uint32_t *)dh->scratch, tid = (uint32_t)weft_apply_id(target);
    size_t top = 0;
    uint32_t ep = weft__dh_next_stamp(dh);
    for (size_t k = 0; k < n; k++) {
        dh_node_t *r = weft__dh_node(dh, from[k]);
        if (r->color_epoch == ep) continue;
        r->color_epoch = ep;
        st[top++] = (uint32_t)weft_apply_id(from[k]);
    }
    *found = false;
    while (top > 0 && !*found) {
        uint32_t a = st[--top];
        if (a == tid) *found = true;
        bool end = false;
        for (uint32_t k = 0; !end; k++) {
            uint32_t p = dh_pred(dh, a, k, &end);
            if (!p || !(dh->nodes[p - 1].flags & DH_IMPORTED)) continue;
            dh_node_t *pr = &dh->nodes[p - 1];
            if (pr->color_epoch == ep) continue;
            pr->color_epoch = ep;
            WEFT_ASSERT(top < need, "dh: reach stack overflow");
            st[top++] = p - 1;
        }
    }
    return WEFT_OK;
}

/* ---- feature callbacks -------------------------------------------------------- */

weft_status_t weft__dh_on_validate(weft_feature_t *self, weft_fgraph_t *fg)
{
    (void)fg;
    dh_t *dh = weft__dh_of(self);
    weft_status_t r = weft__dh_ready(dh);
    if (r != WEFT_OK) return r;
    /* No destroyer: nothing to check, even a cyclic graph passes (docs/destroy.md §3). */
    if (dh->destroyers.n == 0 && dh->malformed.n == 0) return WEFT_OK;
    weft_status_t s = weft__dh_report(dh);
    if (s != WEFT_OK) return s;
    if (dh->cycle_stale) {
        dh->cycle_verdict = dh_cycle_check(dh);
        dh->cycle_stale = dh->cycle_verdict == WEFT_ENOMEM;
    }
    if (dh->cycle_verdict == WEFT_EINCONSISTENT) {
        return weft_fgraph_set_error(dh->fg, WEFT_EINCONSISTENT, "%s", dh->cycle_msg);
    }
    return dh->cycle_verdict;
}

weft_status_t weft__dh_orderings(weft_feature_t *self, weft_fgraph_t *fg, weft_orderings_t *out)
{
    (void)fg;
    dh_t *dh = weft__dh_of(self);
    if (dh->destroyers.n == 0 && dh->malformed.n == 0) return WEFT_OK;
    weft_status_t s = weft__dh_ready(dh);
    if (s == WEFT_OK) s = weft__dh_report(dh);
    for (size_t k = 0; s == WEFT_OK && k < dh->n_pre; k++) {
        s = weft_orderings_add(out, dh->pre_before[k], dh->pre_after[k]);
    }
    return s;
}
