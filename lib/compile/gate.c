/* Gates: on pools of 2+ workers, the nodes sharing one IfElse guard form a
 * scheduler region (weft_dag_add_region) behind a gate node that evaluates
 * the guard once; when it is false the gate retires the region in bulk
 * (docs/control-flow.md §2, docs/execution.md): no member is dispatched,
 * the values its closure reads from outside are counted down once per
 * (slot, count) pair fixed here, and the nodes waiting on it are released
 * per boundary edge. The cost of a branch not taken is then independent of
 * its node count.
 *
 * A gate waits for the producers of its guard's conditions. When some of
 * them are members of another region (a nested IfElse: the inner condition
 * is computed in the outer branch) and the guard implies the outer one, the
 * gate becomes a member of that region (retiring the outer region retires
 * the inner one); otherwise the gate stands alone, released by the outer
 * region's boundary. A gate whose chain of enclosing regions loops gets no
 * region: its nodes keep the per-node skip (call.c node_skip), which is
 * always correct. Members keep their guard: a member that runs finds it
 * true (memo), and a gate offered no retire pointer falls back the same
 * way. */
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"

#define NO_REGION UINT32_MAX

typedef struct gate_ctx {
    weft_function_t *f;
    uint32_t n_memo;
    uint32_t *memo_off;    /* by memo id: the guard's word offset (0: unused) */
    uint32_t *parent;      /* by memo id: enclosing memo id, NO_REGION, or bad */
    bool *ok;              /* by memo id: gets a gate */
    uint32_t *slot_prod;   /* by slot: producing node, or UINT32_MAX */
} gate_ctx_t;

static uint32_t node_memo(const weft_function_t *f, uint32_t i)
{
    uint32_t g = f->nodes[i].guard;
    return g ? f->guards[g] : NO_REGION;
}

/* Literal lit is in the term of length len at w. */
static bool term_has(const uint32_t *w, uint32_t len, uint32_t lit)
{
    for (uint32_t j = 0; j < len; j++)
        if (w[j] == lit) return true;
    return false;
}

/* Guard a (word offset) implies guard b: each term of a contains a term of
 * b (a sufficient test on the normal forms). */
static bool implies(const uint32_t *guards, uint32_t a, uint32_t b)
{
    const uint32_t *wa = guards + a + 1;
    uint32_t na = *wa++;
    for (uint32_t t = 0; t < na; t++, wa += wa[0] + 1) {
        const uint32_t *wb = guards + b + 1;
        uint32_t nb = *wb++;
        bool found = false;
        for (uint32_t u = 0; u < nb && !found; u++, wb += wb[0] + 1) {
            found = true;
            for (uint32_t j = 0; j < wb[0] && found; j++) found = term_has(wa + 1, wa[0], wb[1 + j]);
        }
        if (!found) return false;
    }
    return true;
}

/* The region enclosing memo k's gate: that of its guarded condition
 * producers when they agree and k's guard implies its guard (retiring it
 * then means k's guard is false too); else none - the gate then stands
 * alone and runs once released by their region's boundary. */
static uint32_t gate_parent(const gate_ctx_t *c, uint32_t k)
{
    const uint32_t *w = c->f->guards + c->memo_off[k] + 1;
    uint32_t nt = *w++, parent = NO_REGION;
    for (uint32_t t = 0; t < nt; t++) {
        uint32_t len = *w++;
        for (uint32_t j = 0; j < len; j++, w++) {
            uint32_t p = c->slot_prod[w[0] >> 1];
            uint32_t m = p == UINT32_MAX ? NO_REGION : node_memo(c->f, p);
            if (m == NO_REGION) continue;
            if (m == k || (parent != NO_REGION && parent != m)) return NO_REGION;
            parent = m;
        }
    }
    if (parent != NO_REGION && !implies(c->f->guards, c->memo_off[k], c->memo_off[parent]))
        return NO_REGION;
    return parent;
}

/* ok[k]: memo k has a gate, and so has every region enclosing it (the chain
 * of parents ends within n_memo steps). */
static void mark_ok(gate_ctx_t *c)
{
    for (uint32_t k = 0; k < c->n_memo; k++) {
        c->ok[k] = c->memo_off[k] != 0;
        c->parent[k] = c->ok[k] ? gate_parent(c, k) : NO_REGION;
    }
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t k = 0; k < c->n_memo; k++) {
            bool was = c->ok[k];
            uint32_t q = k, steps = 0;
            while (c->ok[k] && q != NO_REGION) {
                c->ok[k] = c->ok[q] && steps++ <= c->n_memo;
                q = c->parent[q];
            }
            changed = changed || was != c->ok[k];
        }
    }
}

/* Node i (a node, or gate n_nodes + m) is in memo k's closure. */
static bool in_closure(const gate_ctx_t *c, uint32_t i, uint32_t k)
{
    uint32_t n = c->f->n_nodes;
    uint32_t q = i < n ? node_memo(c->f, i) : c->parent[i - n];
    for (; q != NO_REGION && c->ok[q]; q = c->parent[q])
        if (q == k) return true;
    return false;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The gate's closure (nodes only: the profile reports them) and the slots
 * its closure reads from outside, with how many times. */
static weft_status_t gate_tables(const gate_ctx_t *c, uint32_t k, weft__gate_t *g)
{
    const weft_function_t *f = c->f;
    size_t nm = 0, nr = 0;
    for (uint32_t i = 0; i < f->n_nodes; i++)
        if (in_closure(c, i, k)) nm++, nr += weft__cnode_slots(f, &f->nodes[i])->n_dec;
    g->closure = malloc((nm + 1) * sizeof *g->closure);
    uint32_t *reads = malloc((nr + 1) * sizeof *reads);
    g->ext_slot = malloc((nr + 1) * sizeof *g->ext_slot);
    g->ext_count = malloc((nr + 1) * sizeof *g->ext_count);
    if (!g->closure || !reads || !g->ext_slot || !g->ext_count) {
        free(reads);
        return WEFT_ENOMEM;
    }
    nr = 0;
    for (uint32_t i = 0; i < f->n_nodes; i++) {
        if (!in_closure(c, i, k)) continue;
        g->closure[g->n_closure++] = i;
        const weft__node_slots_t *ns = weft__cnode_slots(f, &f->nodes[i]);
        const uint32_t *dec = weft__node_slots_dec(ns);
        for (uint32_t d = 0; d < ns->n_dec; d++) {
            uint32_t p = c->slot_prod[dec[d]];
            if (p == UINT32_MAX || !in_closure(c, p, k)) reads[nr++] = dec[d];
        }
    }
    qsort(reads, nr, sizeof *reads, cmp_u32);
    for (size_t r = 0; r < nr; r++) {
        if (r && reads[r] == reads[r - 1]) {
            g->ext_count[g->n_ext - 1]++;
            continue;
        }
        g->ext_slot[g->n_ext] = reads[r];
        g->ext_count[g->n_ext++] = 1;
    }
    free(reads);
    return WEFT_OK;
}

/* Adds edge p -> the gate unless p already has one (mark[p] == stamp). */
static weft_status_t gate_pred(weft_function_t *f, uint32_t *mark, uint32_t stamp, uint32_t p,
                               uint32_t id)
{
    if (p == UINT32_MAX || mark[p] == stamp) return WEFT_OK;
    mark[p] = stamp;
    return weft_dag_add_edge(f->dag, p, id);
}

/* The gate node of memo k (DAG id `id`). It waits for the producers of its
 * guard's conditions, and for every node outside the closure with an edge
 * into it: when the gate retires the region, whatever the region's nodes
 * would have waited for has finished, so the nodes after the region still
 * run after it (the memory plan and the countdowns rely on that order). */
static weft_status_t gate_node(const gate_ctx_t *c, uint32_t k, weft__gate_t *g, uint32_t id,
                               uint32_t *mark)
{
    weft_function_t *f = c->f;
    weft_status_t st = weft_dag_add_node(f->dag, weft__gate_body, g, "IfElseGate", NULL);
    const uint32_t *w = f->guards + c->memo_off[k] + 1;
    uint32_t nt = *w++;
    for (uint32_t t = 0; st == WEFT_OK && t < nt; t++) {
        uint32_t len = *w++;
        for (uint32_t j = 0; st == WEFT_OK && j < len; j++, w++)
            st = gate_pred(f, mark, k + 1, c->slot_prod[w[0] >> 1], id);
    }
    for (size_t e = 0; st == WEFT_OK && e < f->n_edges; e++) {
        uint32_t u = weft__edge_from(f->edges[e]), v = weft__edge_to(f->edges[e]);
        if (in_closure(c, v, k) && !in_closure(c, u, k)) st = gate_pred(f, mark, k + 1, u, id);
    }
    return st;
}

/* The region of memo k: its own nodes and the gates it encloses. */
static weft_status_t gate_region(const gate_ctx_t *c, uint32_t k, const uint32_t *gate_id,
                                 uint32_t *members)
{
    const weft_function_t *f = c->f;
    size_t m = 0;
    for (uint32_t i = 0; i < f->n_nodes; i++)
        if (node_memo(f, i) == k) members[m++] = i;
    for (uint32_t q = 0; q < c->n_memo; q++)
        if (c->ok[q] && c->parent[q] == k) members[m++] = gate_id[q];
    if (m == 0) return WEFT_OK;
    return weft_dag_add_region(f->dag, gate_id[k], members, m, NULL);
}

static weft_status_t gates_build(gate_ctx_t *c)
{
    weft_function_t *f = c->f;
    uint32_t n_gates = 0, *gate_id = malloc((c->n_memo + 1) * sizeof *gate_id);
    uint32_t *members = malloc(((size_t)f->n_nodes + c->n_memo + 1) * sizeof *members);
    uint32_t *mark = calloc((size_t)f->n_nodes + 1, sizeof *mark);
    f->gates = calloc(c->n_memo + 1, sizeof *f->gates);
    weft_status_t st = gate_id && members && mark && f->gates ? WEFT_OK : WEFT_ENOMEM;
    for (uint32_t k = 0; st == WEFT_OK && k < c->n_memo; k++) {
        if (!c->ok[k]) continue;
        weft__gate_t *g = &f->gates[n_gates];
        g->guard = c->memo_off[k];
        gate_id[k] = f->n_nodes + n_gates++;
        f->n_gates = n_gates;
        st = gate_tables(c, k, g);
        if (st == WEFT_OK) st = gate_node(c, k, g, gate_id[k], mark);
    }
    for (uint32_t k = 0; st == WEFT_OK && k < c->n_memo; k++)
        if (c->ok[k]) st = gate_region(c, k, gate_id, members);
    free(gate_id);
    free(members);
    free(mark);
    return st;
}

weft_status_t weft__gates_add(weft_function_t *f)
{
    gate_ctx_t c = {.f = f, .n_memo = f->n_guard_memo};
    c.memo_off = calloc(c.n_memo + 1, sizeof *c.memo_off);
    c.parent = malloc((c.n_memo + 1) * sizeof *c.parent);
    c.ok = malloc((c.n_memo + 1) * sizeof *c.ok);
    c.slot_prod = malloc(((size_t)f->n_slots + 1) * sizeof *c.slot_prod);
    weft_status_t st = c.memo_off && c.parent && c.ok && c.slot_prod ? WEFT_OK : WEFT_ENOMEM;
    if (st == WEFT_OK) {
        memset(c.slot_prod, 0xff, ((size_t)f->n_slots + 1) * sizeof *c.slot_prod);
        for (uint32_t i = 0; i < f->n_nodes; i++) {
            for (uint32_t k = 0; k < f->node_out[i].n_out; k++)
                c.slot_prod[f->nodes[i].out_base + k] = i;
            if (f->nodes[i].guard) c.memo_off[node_memo(f, i)] = f->nodes[i].guard;
        }
        mark_ok(&c);
        st = gates_build(&c);
    }
    free(c.memo_off);
    free(c.parent);
    free(c.ok);
    free(c.slot_prod);
    return st;
}

void weft__gates_free(weft_function_t *f)
{
    for (uint32_t k = 0; f->gates && k < f->n_gates; k++) {
        free(f->gates[k].closure);
        free(f->gates[k].ext_slot);
        free(f->gates[k].ext_count);
    }
    free(f->gates);
    f->gates = NULL;
    f->n_gates = 0;
}

weft_status_t weft__gate_body(void *arg, const weft_task_ctx_t *ctx)
{
    const weft__gate_t *g = arg;
    weft__call_state_t *cs = ctx->user;
    if (!ctx->retire || weft__guard_holds(cs, g->guard)) return WEFT_OK;
    for (uint32_t k = 0; k < g->n_ext; k++) weft__slot_release(cs, g->ext_slot[k], g->ext_count[k]);
    /* the profile reports each member as skipped (only then per node) */
    if (cs->f->profile)
        for (uint32_t k = 0; k < g->n_closure; k++) cs->skipped[g->closure[k]] = 1;
    /* relaxed: a statistic for tests, read after the calls */
    atomic_fetch_add_explicit(&cs->f->gate_retires, 1, memory_order_relaxed);
    *ctx->retire = true;
    return WEFT_OK;
}
