/* DestroyHandler queries for rewrites and compilers: view parent, root,
 * destroyer, has_destroyers, the DH's orderings, "may this node destroy input
 * i?" (answered without editing the graph) and inplace_candidates. */
#include <stdlib.h>
#include <string.h>

#include "destroy_int.h"
#include "base/base_int.h"
#include "base/vec.h"

/* A query's WEFT_ENOMEM says so on fg ("who: out of memory") unless the step
 * that ran out already did; other statuses pass through. */
static weft_status_t dq_said(weft_fgraph_t *fg, weft_status_t s, const char *who)
{
    if (s != WEFT_ENOMEM || strstr(weft_fgraph_last_error(fg), "out of memory")) return s;
    return weft_fgraph_set_error(fg, s, "%s: out of memory", who);
}

/* Finds the DH of fg and checks v is known to it. */
static weft_status_t dq_var(weft_fgraph_t *fg, const weft_var_t *v, dh_t **dh)
{
    if (!fg || !v) return WEFT_EINVAL;
    weft_status_t s = weft__dh_find(fg, dh);
    return s != WEFT_OK ? s : weft__dh_known_var(*dh, v);
}

/* Fresh maps whose droot / destroyer entries are complete (D0 and D1 passed). */
static weft_status_t dq_maps(dh_t *dh)
{
    weft_status_t s = weft__dh_report(dh);
    return dh->maps_ok ? WEFT_OK : s;
}

static weft_apply_t *dq_destroyer(dh_t *dh, const weft_var_t *v)
{
    const dh_var_t *r = weft__dh_var(dh, v);
    if (r->epoch != dh->epoch) return NULL;
    return weft__dh_var(dh, r->droot)->destroyer;
}

weft_status_t weft_dh_view_parent(weft_fgraph_t *fg, const weft_var_t *v,
                                       weft_var_t **parent)
{
    dh_t *dh;
    if (!parent) return WEFT_EINVAL;
    weft_status_t s = dq_var(fg, v, &dh);
    if (s == WEFT_OK) *parent = weft__dh_var(dh, v)->parent;
    return dq_said(fg, s, "weft_dh_view_parent");
}

weft_status_t weft_dh_root(weft_fgraph_t *fg, const weft_var_t *v, weft_var_t **root)
{
    dh_t *dh;
    if (!root) return WEFT_EINVAL;
    weft_status_t s = dq_var(fg, v, &dh);
    if (s == WEFT_OK) *root = weft__dh_root(dh, v);
    return dq_said(fg, s, "weft_dh_root");
}

weft_status_t weft_dh_destroyer(weft_fgraph_t *fg, const weft_var_t *v,
                                     weft_apply_t **destroyer)
{
    dh_t *dh;
    if (!destroyer) return WEFT_EINVAL;
    weft_status_t s = dq_var(fg, v, &dh);
    if (s == WEFT_OK) s = dq_maps(dh);
    if (s == WEFT_OK) *destroyer = dq_destroyer(dh, v);
    return dq_said(fg, s, "weft_dh_destroyer");
}

weft_status_t weft_dh_has_destroyers(weft_fgraph_t *fg, size_t n,
                                          const weft_var_t *const *vars, bool *out)
{
    if (!fg || !out || (n > 0 && !vars)) return WEFT_EINVAL;
    dh_t *dh;
    weft_status_t s = weft__dh_find(fg, &dh);
    for (size_t k = 0; s == WEFT_OK && k < n; k++) {
        s = vars[k] ? weft__dh_known_var(dh, vars[k]) : WEFT_EINVAL;
    }
    if (s == WEFT_OK) s = dq_maps(dh);
    if (s != WEFT_OK) return dq_said(fg, s, "weft_dh_has_destroyers");
    *out = false;
    for (size_t k = 0; k < n && !*out; k++) *out = dq_destroyer(dh, vars[k]) != NULL;
    return WEFT_OK;
}

weft_status_t weft_dh_n_destroyers(weft_fgraph_t *fg, size_t *n)
{
    dh_t *dh;
    if (!n) return WEFT_EINVAL;
    weft_status_t s = weft__dh_find(fg, &dh);
    if (s == WEFT_OK) *n = dh->destroyers.n;
    return dq_said(fg, s, "weft_dh_n_destroyers");
}

weft_status_t weft_dh_orderings(weft_fgraph_t *fg, weft_apply_t *const **before,
                                     weft_apply_t *const **after, size_t *n)
{
    dh_t *dh;
    if (!before || !after || !n) return WEFT_EINVAL;
    weft_status_t s = weft__dh_find(fg, &dh);
    if (s == WEFT_OK) s = weft__dh_report(dh);
    if (s != WEFT_OK) return dq_said(fg, s, "weft_dh_orderings");
    *before = dh->pre_before;
    *after = dh->pre_after;
    *n = dh->n_pre;
    return WEFT_OK;
}

/* ---- can_destroy --------------------------------------------------------------- */

typedef struct dq_list {
    void **items;
    size_t n, cap;
} dq_list_t;

static weft_status_t dq_push(dh_t *dh, dq_list_t *l, void *item)
{
    if (!weft__vec_grow(dh->alloc, (void **)&l->items, &l->cap, l->n + 1, sizeof(void *)))
        return WEFT_ENOMEM;
    l->items[l->n++] = item;
    return WEFT_OK;
}

static void dq_free(dh_t *dh, dq_list_t *l)
{
    weft__free(dh->alloc, l->items, l->cap * sizeof(void *));
}

/* impact(r) from the view forest, root first (r need not be destroyed). */
static weft_status_t dq_impact(dh_t *dh, weft_var_t *r, dq_list_t *out)
{
    weft_status_t s = dq_push(dh, out, r);
    for (size_t k = 0; s == WEFT_OK && k < out->n; k++) {
        const dh_var_t *vr = weft__dh_var(dh, out->items[k]);
        for (uint32_t c = 0; s == WEFT_OK && c < vr->n_kids; c++) s = dq_push(dh, out, vr->kids[c]);
    }
    return s;
}

/* Records why the answer is "no" and returns WEFT_OK with *ok false. */
static weft_status_t dq_no(dh_t *dh, bool *ok, const weft_apply_t *node, size_t input,
                           const char *rule, const weft_var_t *v)
{
    char d[160], vd[256];
    weft_apply_describe(node, d, sizeof d);
    weft__dh_describe_var(v, vd, sizeof vd);
    weft_fgraph_set_error(dh->fg, WEFT_EINCONSISTENT, "%s may not destroy input %zu: %s %s", d,
                          input, rule, vd);
    *ok = false;
    return WEFT_OK;
}

/* D6 against the fgraph's own protected set. */
static const weft_var_t *dq_protected_hit(dh_t *dh, const weft_var_t *r)
{
    for (size_t k = 0; k < weft_fgraph_n_inputs(dh->fg); k++) {
        if (weft_fgraph_input(dh->fg, k) == r && !weft_fgraph_input_is_mutable(dh->fg, k))
            return r;
    }
    for (size_t k = 0; k < weft_fgraph_n_outputs(dh->fg); k++) {
        const weft_var_t *o = weft_fgraph_output(dh->fg, k);
        if (weft_fgraph_contains_var(dh->fg, o) && weft__dh_root(dh, o) == r) return o;
    }
    return NULL;
}

static bool dq_listed(const weft_op_t *variant, bool aliased, size_t d, size_t j)
{
    if (!variant) return false;
    const weft_op_alias_t *e;
    size_t m;
    if (aliased) weft_op_tolerate_aliased(variant, &e, &m);
    else weft_op_tolerate_same(variant, &e, &m);
    for (size_t k = 0; k < m; k++) {
        if (e[k].output == d && e[k].input == j) return true;
    }
    return false;
}

/* D2, D3 on the hypothetical destroyer; D4's prerequisites into pre. */
static weft_status_t dq_rules(dh_t *dh, const weft_apply_t *node, size_t input,
                              const weft_op_t *variant, dq_list_t *imp, dq_list_t *pre,
                              bool *ok)
{
    weft_var_t *dv = weft_apply_input(node, input);
    weft_var_t *r = weft__dh_root(dh, dv);
    for (size_t k = 0; k < imp->n; k++) {
        const weft_var_t *v = imp->items[k];
        if (weft_var_is_constant(v) || weft_var_is_indestructible(v))
            return dq_no(dh, ok, node, input, "(rule D2) indestructible variable", v);
    }
    for (size_t j = 0; j < weft_apply_n_inputs(node); j++) {
        weft_var_t *in = weft_apply_input(node, j);
        if (j == input || dq_listed(variant, true, input, j)) continue;
        if (weft__dh_root(dh, in) != r) continue;
        if (in == dv && dq_listed(variant, false, input, j)) continue;
        return dq_no(dh, ok, node, input, "(rule D3) another input aliases", in);
    }
    uint32_t stamp = weft__dh_next_stamp(dh);
    weft__dh_node(dh, node)->mark = stamp;
    for (size_t k = 0; k < imp->n; k++) {
        const weft_client_t *cl;
        size_t nc;
        if (weft_fgraph_clients(dh->fg, imp->items[k], &cl, &nc) != WEFT_OK) continue;
        for (size_t c = 0; c < nc; c++) {
            if (weft_apply_is_output_slot(cl[c].node)) continue;
            dh_node_t *cr = weft__dh_node(dh, cl[c].node);
            if (cr->mark == stamp) continue;
            cr->mark = stamp;
            weft_status_t s = dq_push(dh, pre, cl[c].node);
            if (s != WEFT_OK) return s;
        }
    }
    return WEFT_OK;
}

/* can_destroy; with rd, the D4 readers of an accepted replacement are copied
 * to rd->out (room for rd->cap) and counted in rd->n. */
typedef struct dq_readers {
    weft_apply_t **out;
    size_t cap, n;
} dq_readers_t;

static void dq_copy_readers(const dq_list_t *pre, dq_readers_t *rd)
{
    rd->n = pre->n;
    for (size_t k = 0; k < pre->n && k < rd->cap; k++) rd->out[k] = pre->items[k];
}

static weft_status_t dq_can_destroy(dh_t *dh, const weft_apply_t *node, size_t input,
                                    const weft_op_t *variant, bool *ok, dq_readers_t *rd)
{
    weft_var_t *dv = weft_apply_input(node, input);
    weft_var_t *r = weft__dh_root(dh, dv);
    weft_apply_t *owner = dq_destroyer(dh, r);
    *ok = true;
    if (owner) return dq_no(dh, ok, node, input, "(rule D1) already destroyed: root", r);
    const weft_var_t *p = dq_protected_hit(dh, r);
    if (p) return dq_no(dh, ok, node, input, "(rule D6) protected variable", p);
    dq_list_t imp = {0}, pre = {0};
    weft_status_t s = dq_impact(dh, r, &imp);
    if (s == WEFT_OK) s = dq_rules(dh, node, input, variant, &imp, &pre, ok);
    if (s == WEFT_OK && *ok && pre.n > 0) {
        bool cyc;
        s = weft__dh_reaches(dh, (weft_apply_t *const *)pre.items, pre.n, node, &cyc);
        if (s == WEFT_OK && cyc) {
            s = dq_no(dh, ok, node, input, "(rule D5) a reader depends on the node; root", r);
        }
    }
    if (s == WEFT_OK && *ok && rd) dq_copy_readers(&pre, rd);
    dq_free(dh, &imp);
    dq_free(dh, &pre);
    return s;
}

static weft_status_t dq_can_destroy_checked(weft_fgraph_t *fg, const weft_apply_t *node,
                                            size_t input, const weft_op_t *variant, bool *ok,
                                            dq_readers_t *rd)
{
    if (!fg || !node || !ok) return WEFT_EINVAL;
    dh_t *dh;
    weft_status_t s = weft__dh_find(fg, &dh);
    if (s != WEFT_OK) return dq_said(fg, s, "weft_dh_can_destroy");
    if (weft_apply_is_output_slot(node)) {
        return weft_fgraph_set_error(fg, WEFT_EINVAL, "can_destroy: an Output pseudo-node");
    }
    if (!weft_fgraph_contains_apply(fg, node)) {
        char d[160];
        weft_apply_describe(node, d, sizeof d);
        return weft_fgraph_set_error(fg, WEFT_ENOTFOUND, "%s is not in this FunctionGraph", d);
    }
    if (input >= weft_apply_n_inputs(node)) {
        char d[160];
        weft_apply_describe(node, d, sizeof d);
        return weft_fgraph_set_error(fg, WEFT_EINVAL, "%s has no input %zu", d, input);
    }
    s = weft__dh_report(dh);
    if (s == WEFT_OK) s = dq_can_destroy(dh, node, input, variant, ok, rd);
    return dq_said(fg, s, "weft_dh_can_destroy");
}

weft_status_t weft_dh_can_destroy(weft_fgraph_t *fg, const weft_apply_t *node,
                                       size_t input, const weft_op_t *variant, bool *ok)
{
    return dq_can_destroy_checked(fg, node, input, variant, ok, NULL);
}

weft_status_t weft_dh_destroy_readers(weft_fgraph_t *fg, const weft_apply_t *node, size_t input,
                                      const weft_op_t *variant, bool *ok, size_t cap,
                                      weft_apply_t **readers, size_t *n_readers)
{
    if (!n_readers || (cap && !readers)) return WEFT_EINVAL;
    dq_readers_t rd = {readers, cap, 0};
    weft_status_t s = dq_can_destroy_checked(fg, node, input, variant, ok, &rd);
    *n_readers = rd.n;
    return s;
}

/* ---- inplace_candidates ---------------------------------------------------------- */

static int dq_cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)*(void *const *)a, y = (uintptr_t)*(void *const *)b;
    return (x > y) - (x < y);
}

static weft_status_t dq_default_protected(dh_t *dh, dq_list_t *out)
{
    weft_status_t s = WEFT_OK;
    for (size_t k = 0; s == WEFT_OK && k < weft_fgraph_n_inputs(dh->fg); k++) {
        if (!weft_fgraph_input_is_mutable(dh->fg, k))
            s = dq_push(dh, out, weft_fgraph_input(dh->fg, k));
    }
    for (size_t k = 0; s == WEFT_OK && k < weft_fgraph_n_outputs(dh->fg); k++) {
        s = dq_push(dh, out, weft_fgraph_output(dh->fg, k));
    }
    return s;
}

static bool dq_is_protected(const dq_list_t *prot, const weft_var_t *v)
{
    return prot->n > 0 && bsearch(&v, prot->items, prot->n, sizeof(void *), dq_cmp_ptr) != NULL;
}

/* The PyTensor algorithm: roots[k] / state[k] pair each root seen with the
 * candidate position it admitted, or SIZE_MAX once it is shared or refused. */
static weft_status_t dq_candidates(dh_t *dh, size_t n, const weft_var_t *const *inputs,
                                   const dq_list_t *prot, size_t *out_idx, size_t *n_out)
{
    dq_list_t roots = {0};
    size_t *state = weft__vec_alloc(dh->alloc, n ? n : 1, sizeof(size_t));
    bool *keep = weft__alloc(dh->alloc, n ? n : 1);
    weft_status_t s = (state && keep) ? WEFT_OK : WEFT_ENOMEM;
    for (size_t i = 0; s == WEFT_OK && i < n; i++) {
        const weft_var_t *v = inputs[i];
        keep[i] = false;
        if (weft_var_is_constant(v)) continue;
        bool view_of_protected = false;
        const weft_var_t *r = v;
        for (const weft_var_t *p = v; p; p = weft__dh_var(dh, p)->parent) {
            if (dq_is_protected(prot, p)) view_of_protected = true;
            r = p;
        }
        size_t k = 0;
        while (k < roots.n && roots.items[k] != r) k++;
        if (k < roots.n) {
            if (state[k] != SIZE_MAX) keep[state[k]] = false;
            state[k] = SIZE_MAX;
            continue;
        }
        s = dq_push(dh, &roots, (void *)r);
        if (s != WEFT_OK) break;
        bool ok = !view_of_protected && !dq_destroyer(dh, v);
        state[k] = ok ? i : SIZE_MAX;
        keep[i] = ok;
    }
    *n_out = 0;
    for (size_t i = 0; s == WEFT_OK && i < n; i++) {
        if (keep[i]) out_idx[(*n_out)++] = i;
    }
    weft__free(dh->alloc, state, (n ? n : 1) * sizeof(size_t));
    weft__free(dh->alloc, keep, n ? n : 1);
    dq_free(dh, &roots);
    return s;
}

weft_status_t weft_dh_inplace_candidates(weft_fgraph_t *fg, size_t n,
                                              const weft_var_t *const *inputs,
                                              size_t n_protected,
                                              const weft_var_t *const *protected_vars,
                                              size_t *out_idx, size_t *n_out)
{
    if (!fg || !n_out || (n > 0 && (!inputs || !out_idx))) return WEFT_EINVAL;
    if (n_protected > 0 && !protected_vars) return WEFT_EINVAL;
    for (size_t k = 0; k < n_protected; k++) {
        if (!protected_vars[k]) return WEFT_EINVAL;
    }
    dh_t *dh;
    weft_status_t s = weft__dh_find(fg, &dh);
    for (size_t k = 0; s == WEFT_OK && k < n; k++) {
        s = inputs[k] ? weft__dh_known_var(dh, inputs[k]) : WEFT_EINVAL;
    }
    if (s == WEFT_OK) s = dq_maps(dh);
    if (s != WEFT_OK) return dq_said(fg, s, "weft_dh_inplace_candidates");
    dq_list_t prot = {0};
    if (protected_vars) {
        for (size_t k = 0; s == WEFT_OK && k < n_protected; k++)
            s = dq_push(dh, &prot, (void *)protected_vars[k]);
    } else {
        s = dq_default_protected(dh, &prot);
    }
    if (s == WEFT_OK) {
        if (prot.n > 1) qsort(prot.items, prot.n, sizeof(void *), dq_cmp_ptr);
        s = dq_candidates(dh, n, inputs, &prot, out_idx, n_out);
    }
    dq_free(dh, &prot);
    return dq_said(fg, s, "weft_dh_inplace_candidates");
}
