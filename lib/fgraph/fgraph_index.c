/* The fgraph's indexes: per-id arrays, membership, importing subgraphs
 * (plan first, so a missing input changes nothing; then commit) and pruning
 * what became unused (an iterative worklist, as PyTensor's remove_client). */
#include <stdio.h>
#include <string.h>

#include "fgraph_int.h"

bool weft__pvec_push(const weft_allocator_t *al, weft__pvec_t *v, void *x)
{
    if (v->n == v->cap && !weft__vec_grow(al, (void **)&v->p, &v->cap, v->n + 1, sizeof(void *)))
        return false;
    v->p[v->n++] = x;
    return true;
}

void weft__pvec_free(const weft_allocator_t *al, weft__pvec_t *v)
{
    weft__free(al, v->p, v->cap * sizeof(void *));
    v->p = NULL;
    v->n = v->cap = 0;
}

/* Capacity to ask for when the context outgrew cap: need plus half again.
 * The id-indexed arrays cover every id of the context, and rewriting keeps
 * adding nodes to it, so growing to exactly the next power of two would make
 * the first rewrites after building a large fgraph pay a full copy and
 * clear of every array (measured: 20% of replacing 10% of a 10^6-node graph). */
static size_t with_headroom(size_t need, size_t cap)
{
    return need <= cap ? need : need + need / 2;
}

bool weft__fg_reserve(weft_fgraph_t *fg)
{
    /* Each array keeps its own capacity, so a failed second grow leaves
     * both consistent (and freed with the right sizes). */
    const weft_graph_t *g = fg->g;
    size_t nv = with_headroom(g->n_vars, fg->vcap), na = with_headroom(g->n_applies, fg->acap);
    bool ok =
        weft__vec_grow(fg->alloc, (void **)&fg->vflags, &fg->vflags_cap, nv, sizeof(uint8_t)) &&
        weft__vec_grow(fg->alloc, (void **)&fg->clients, &fg->clients_cap, nv,
                       sizeof(weft__cvec_t)) &&
        weft__vec_grow(fg->alloc, (void **)&fg->apos, &fg->apos_cap, na, sizeof(uint32_t)) &&
        weft__vec_grow(fg->alloc, (void **)&fg->aflags, &fg->aflags_cap, na, sizeof(uint8_t)) &&
        weft__vec_grow(fg->alloc, (void **)&fg->rank, &fg->rank_cap, na, sizeof(uint64_t));
    fg->vcap = fg->vflags_cap < fg->clients_cap ? fg->vflags_cap : fg->clients_cap;
    fg->acap = fg->apos_cap < fg->aflags_cap ? fg->apos_cap : fg->aflags_cap;
    fg->acap = fg->acap < fg->rank_cap ? fg->acap : fg->rank_cap;
    return ok;
}

/* ---- membership ------------------------------------------------------------ */

static void var_enter(weft_fgraph_t *fg, weft_var_t *v)
{
    if (fg->vflags[v->id] & WEFT__VF_IN) return;
    fg->vflags[v->id] |= WEFT__VF_IN;
    fg->clients[v->id].n = fg->clients[v->id].end = 0;
    fg->n_vars_in++;
}

static void var_leave(weft_fgraph_t *fg, weft_var_t *v)
{
    if (!(fg->vflags[v->id] & WEFT__VF_IN)) return;
    fg->vflags[v->id] &= (uint8_t)~WEFT__VF_IN;
    fg->n_vars_in--;
}

/* The caller reserved room in fg->applies. */
static void apply_enter(weft_fgraph_t *fg, weft_apply_t *a)
{
    if (fg->n_applies && fg->applies[fg->n_applies - 1]->id > a->id) fg->applies_by_id = false;
    fg->applies[fg->n_applies++] = a;
    fg->apos[a->id] = (uint32_t)fg->n_applies;
}

void weft__fg_detach_node(weft_fgraph_t *fg, weft_apply_t *node, const char *reason)
{
    uint32_t pos = fg->apos[node->id] - 1;
    weft_apply_t *last = fg->applies[--fg->n_applies];
    if (pos != fg->n_applies) fg->applies_by_id = false;
    fg->applies[pos] = last;
    fg->apos[last->id] = pos + 1;
    fg->apos[node->id] = 0;
    for (uint32_t i = 0; i < node->n_in; i++)
        fg->n_back -= weft__fg_back_edge(node, node->inputs[i]);
    for (uint32_t k = 0; k < node->n_out; k++) var_leave(fg, node->outputs[k]);
    weft__fg_fire_prune(fg, node, reason);
}

/* ---- import ---------------------------------------------------------------- */

weft_status_t weft__fg_check_var(weft_fgraph_t *fg, const weft_var_t *v, const char *what)
{
    if (!v) return weft__fg_err(fg, WEFT_EINVAL, "%s is NULL", what);
    if (v->g != fg->g) {
        char vb[512];
        weft__var_describe(v, vb, sizeof(vb));
        return weft__fg_err(fg, WEFT_EFOREIGN, "%s, %s, belongs to another graph context", what,
                            vb);
    }
    return WEFT_OK;
}

/* A leaf (owner-less) met while planning: constant, declared input, or missing. */
static weft_status_t plan_leaf(weft_fgraph_t *fg, weft_var_t *v, bool import_missing,
                               const weft_apply_t *user)
{
    if ((v->flags & WEFT__VAR_CONSTANT) || weft__fg_is_input(fg, v)) return WEFT_OK;
    char vb[512], ab[256] = "";
    weft__var_describe(v, vb, sizeof(vb));
    if (user) {
        snprintf(ab, sizeof(ab), " (input of ");
        weft_apply_describe(user, ab + strlen(ab), sizeof(ab) - strlen(ab) - 1);
        strcat(ab, ")");
    }
    if (v->type->kind == WEFT_TYPE_NULL)
        return weft__fg_err(fg, WEFT_ETYPE,
                            "cannot import %s%s: it has the null type "
                            "(an undefined gradient)",
                            vb, ab);
    if (!import_missing)
        return weft__fg_err(fg, WEFT_EMISSING_INPUT, "Undeclared input: %s%s", vb, ab);
    if (weft__marks_has(&fg->vmarks, v->id, fg->vmarks.epoch)) return WEFT_OK;
    fg->vmarks.v[v->id] = fg->vmarks.epoch;
    if (!weft__pvec_push(fg->alloc, &fg->missing, v))
        return weft__fg_err(fg, WEFT_ENOMEM, "import: out of memory");
    return WEFT_OK;
}

typedef struct dframe {
    weft_apply_t *a;
    size_t next;
} dframe_t;

static weft_status_t plan_cycle(weft_fgraph_t *fg, weft_apply_t *a)
{
    char ab[256];
    weft_apply_describe(a, ab, sizeof(ab));
    return weft__fg_err(fg, WEFT_ECYCLE, "cannot import %s: its ancestry contains a cycle", ab);
}

/* Pushes a (not in fg, not yet visited) on the DFS stack. */
static weft_status_t plan_push(weft_fgraph_t *fg, weft_apply_t *a, size_t *sp, uint32_t gray)
{
    if (weft__fg_has_apply(fg, a) || weft__marks_has(&fg->amarks, a->id, gray + 1)) return WEFT_OK;
    if (weft__marks_has(&fg->amarks, a->id, gray)) return plan_cycle(fg, a);
    size_t need = (*sp + 1) * 2; /* two pointer slots per frame */
    if (!weft__vec_grow(fg->alloc, (void **)&fg->dfs.p, &fg->dfs.cap, need, sizeof(void *)))
        return weft__fg_err(fg, WEFT_ENOMEM, "import: out of memory");
    dframe_t *st = (dframe_t *)(void *)fg->dfs.p;
    fg->amarks.v[a->id] = gray;
    st[(*sp)++] = (dframe_t){a, 0};
    return WEFT_OK;
}

/* Iterative post-order DFS over the part of the ancestry not yet in fg. */
static weft_status_t plan_nodes(weft_fgraph_t *fg, weft_apply_t *root, bool import_missing)
{
    const uint32_t gray = fg->amarks.epoch;
    size_t sp = 0;
    weft_status_t s = plan_push(fg, root, &sp, gray);
    while (sp > 0 && s == WEFT_OK) {
        dframe_t *f = &((dframe_t *)(void *)fg->dfs.p)[sp - 1];
        weft_apply_t *a = f->a;
        if (f->next < a->n_in) {
            weft_var_t *v = a->inputs[f->next++];
            if (v->g != fg->g)
                s = weft__fg_check_var(fg, v, "input of an imported node");
            else if (weft__fg_has_var(fg, v))
                continue;
            else if (v->owner)
                s = plan_push(fg, v->owner, &sp, gray);
            else
                s = plan_leaf(fg, v, import_missing, a);
            continue;
        }
        fg->amarks.v[a->id] = gray + 1;
        if (!weft__pvec_push(fg->alloc, &fg->plan, a))
            s = weft__fg_err(fg, WEFT_ENOMEM, "import: out of memory");
        sp--;
    }
    return s;
}

weft_status_t weft__fg_plan_import(weft_fgraph_t *fg, weft_var_t *v, weft_apply_t *node,
                                   bool import_missing)
{
    fg->plan.n = 0;
    fg->missing.n = 0;
    if (!weft__fg_reserve(fg) || !weft__marks_begin(fg->alloc, &fg->amarks, fg->acap) ||
        !weft__marks_begin(fg->alloc, &fg->vmarks, fg->vcap))
        return weft__fg_err(fg, WEFT_ENOMEM, "import: out of memory");
    if (v && v->type->kind == WEFT_TYPE_NULL) {
        char vb[512];
        weft__var_describe(v, vb, sizeof(vb));
        return weft__fg_err(fg, WEFT_ETYPE, "cannot import %s: it has the null type", vb);
    }
    if (v && weft__fg_has_var(fg, v)) return WEFT_OK;
    if (v && !v->owner) return plan_leaf(fg, v, import_missing, NULL);
    return plan_nodes(fg, v ? v->owner : node, import_missing);
}

static void import_one(weft_fgraph_t *fg, weft_apply_t *a, const char *reason, uint64_t rank_step)
{
    weft__fg_rank_import(fg, a, rank_step); /* its input owners are in the apply set */
    for (uint32_t k = 0; k < a->n_out; k++) var_enter(fg, a->outputs[k]);
    for (uint32_t i = 0; i < a->n_in; i++) {
        fg->n_back += weft__fg_back_edge(a, a->inputs[i]);
        var_enter(fg, a->inputs[i]);
        if (!weft__fg_add_client(fg, a->inputs[i], a, i, WEFT__CLIENT_NOKEY) && fg->cb_status == WEFT_OK)
            fg->cb_status = weft__fg_err(fg, WEFT_ENOMEM, "import: out of memory");
    }
    weft__fg_note_import(fg, a);
    weft__fg_fire_import(fg, a, reason);
}

weft_status_t weft__fg_commit_import(weft_fgraph_t *fg, weft_var_t *v, const char *reason,
                                     uint64_t rank_step)
{
    for (size_t k = 0; k < fg->missing.n; k++) {
        weft_status_t s = weft__fg_add_input(fg, fg->missing.p[k], true);
        if (s != WEFT_OK) return s;
    }
    /* Reserve every apply slot first so the node loop cannot fail half-way. */
    if (!weft__vec_grow(fg->alloc, (void **)&fg->applies, &fg->applies_cap,
                        fg->n_applies + fg->plan.n, sizeof(*fg->applies)))
        return weft__fg_err(fg, WEFT_ENOMEM, "import: out of memory");
    for (size_t k = 0; k < fg->plan.n; k++) {
        weft_apply_t *a = fg->plan.p[k];
        apply_enter(fg, a);
        import_one(fg, a, reason, rank_step);
    }
    fg->plan.n = 0;
    if (v) var_enter(fg, v);
    return WEFT_OK;
}

/* ---- pruning ------------------------------------------------------------------ */

static bool owner_unused(const weft_fgraph_t *fg, const weft_apply_t *a)
{
    for (uint32_t k = 0; k < a->n_out; k++)
        if (fg->clients[a->outputs[k]->id].n) return false;
    return true;
}

static bool rc_push(weft_fgraph_t *fg, weft_var_t *v, weft_apply_t *node, size_t i)
{
    return weft__pvec_push(fg->alloc, &fg->rc_stack, v) &&
           weft__pvec_push(fg->alloc, &fg->rc_stack, node) &&
           weft__pvec_push(fg->alloc, &fg->rc_stack, (void *)(uintptr_t)i);
}

weft_status_t weft__fg_remove_client(weft_fgraph_t *fg, weft_var_t *v, weft_apply_t *node, size_t i,
                                     uint32_t slot, const char *reason, uint64_t *key)
{
    size_t base = fg->rc_stack.n;
    uint64_t taken = weft__fg_client_take(fg, v, node, i, slot);
    if (key) *key = taken;
    if (taken == WEFT__CLIENT_NOKEY) return WEFT_OK;
    if (!rc_push(fg, v, NULL, 0)) return weft__fg_err(fg, WEFT_ENOMEM, "prune: out of memory");
    while (fg->rc_stack.n > base) {
        size_t top = fg->rc_stack.n -= 3;
        weft_var_t *var = fg->rc_stack.p[top];
        weft_apply_t *cn = fg->rc_stack.p[top + 1];
        size_t ci = (size_t)(uintptr_t)fg->rc_stack.p[top + 2];
        if (cn && weft__fg_client_take(fg, var, cn, ci, UINT32_MAX) == WEFT__CLIENT_NOKEY)
            continue;
        if (fg->clients[var->id].n) continue;
        if (!var->owner) {
            var_leave(fg, var);
            continue;
        }
        weft_apply_t *a = var->owner;
        if (!weft__fg_has_apply(fg, a) || !owner_unused(fg, a)) continue;
        weft__fg_detach_node(fg, a, reason);
        for (uint32_t k = a->n_in; k-- > 0;) /* input 0 is processed first */
            if (!rc_push(fg, a->inputs[k], a, k))
                return weft__fg_err(fg, WEFT_ENOMEM, "prune: out of memory");
    }
    return WEFT_OK;
}

weft_status_t weft__fg_add_input(weft_fgraph_t *fg, weft_var_t *v, bool is_mutable)
{
    if (!weft__fg_reserve(fg) ||
        !weft__vec_grow(fg->alloc, (void **)&fg->inputs, &fg->in_cap, fg->n_in + 1,
                        sizeof(*fg->inputs)) ||
        !weft__vec_grow(fg->alloc, (void **)&fg->input_mutable, &fg->mut_cap, fg->n_in + 1,
                        sizeof(bool)))
        return weft__fg_err(fg, WEFT_ENOMEM, "add_input: out of memory");
    fg->input_mutable[fg->n_in] = is_mutable;
    fg->inputs[fg->n_in++] = v;
    fg->vflags[v->id] |= WEFT__VF_INPUT;
    return WEFT_OK;
}

void weft__fg_drop_output_slot(weft_fgraph_t *fg, size_t k)
{
    fg->slots_epoch++;
    memmove(fg->outputs + k, fg->outputs + k + 1, (fg->n_out - k - 1) * sizeof(*fg->outputs));
    memmove(fg->out_nodes + k, fg->out_nodes + k + 1, (fg->n_out - k - 1) * sizeof(*fg->out_nodes));
    fg->n_out--;
    /* Renumber the later slots' pseudo-nodes in place: their client entries
     * (node pointer, index 0) stay valid. */
    for (size_t j = k; j < fg->n_out; j++) fg->out_nodes[j]->slot = j;
    weft__fg_updates_drop(fg, k, false);
}
