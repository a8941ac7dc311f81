/* Lowering a compiled fgraph to a program and a task DAG (built once):
 * - slots: inputs first, then each node's outputs consecutively (so a node's
 *   output cells are one array), constants where first read;
 * - per node: input slots, the slots it counts down after running (each
 *   distinct freeable input, and its own outputs that nobody reads);
 * - DAG: one node per apply, one edge per producer -> consumer pair and one
 *   per feature ordering (DestroyHandler prerequisites: docs/destroy.md §5),
 *   deduplicated;
 * - node order (DAG id, slot and record layout): a topological order, the
 *   one a single worker runs the DAG in (schedule_order.c), so consecutive
 *   runs touch consecutive memory. */
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"
#include "weft/node_cost.h"

#define NO_SLOT UINT32_MAX

typedef struct lower_ctx {
    weft_function_t *f;
    weft_apply_t **order; /* owned: the node order */
    size_t n_order;
    uint32_t *var_slot;   /* by var id */
    uint32_t *apply_idx;  /* by apply id: index in order, or NO_SLOT */
    uint32_t *rank;       /* toposort index -> index in order */
    uint64_t *topo_edges; /* the DAG edges between toposort indices, sorted, distinct */
    size_t n_edges;
    bool *is_output;      /* by slot */
    bool *aliased;        /* by slot: some other variable views or destroys it */
    weft__guard_plan_t gp; /* guards by toposort index (guard.c) */
    int64_t *prio;        /* critical_path_first: per node index, its bottom level */
    uint32_t n_consumers_total;
} lower_ctx_t;

static weft_status_t lower_oom(void)
{
    return weft__fn_error(NULL, WEFT_ENOMEM, "out of memory lowering the graph");
}

static uint32_t slot_of(lower_ctx_t *c, const weft_var_t *v)
{
    return c->var_slot[weft_var_id(v)];
}

/* Assigns slots; returns the slot count. Constants get a slot when first read. */
static uint32_t assign_slots(lower_ctx_t *c)
{
    weft_function_t *f = c->f;
    uint32_t s = 0;
    for (size_t k = 0; k < f->n_in; k++) c->var_slot[weft_var_id(f->in_vars[k])] = s++;
    for (size_t i = 0; i < c->n_order; i++) {
        weft_apply_t *a = c->order[i];
        for (size_t k = 0; k < weft_apply_n_inputs(a); k++) {
            weft_var_t *v = weft_apply_input(a, k);
            if (weft_var_is_constant(v) && slot_of(c, v) == NO_SLOT)
                c->var_slot[weft_var_id(v)] = s++;
        }
        /* outputs after the constants so they stay consecutive */
        for (size_t k = 0; k < weft_apply_n_outputs(a); k++)
            c->var_slot[weft_var_id(weft_apply_output(a, k))] = s++;
    }
    return s;
}

static weft_status_t make_const_cell(weft_function_t *f, weft_var_t *v, uint32_t slot)
{
    const void *data;
    size_t nbytes;
    const weft_type_t *t = weft_var_type(v);
    int64_t shape[WEFT_MAX_NDIM];
    for (int d = 0; d < weft_type_ndim(t); d++) shape[d] = weft_type_dim(t, d);
    weft_status_t st = weft_constant_data(v, &data, &nbytes);
    if (st == WEFT_OK)
        st = weft_tensor_from_data(weft_type_dtype(t), weft_type_ndim(t), shape, NULL,
                                   (void *)(uintptr_t)data, &f->const_cells[slot]);
    return st == WEFT_OK ? WEFT_OK : weft__fn_error(NULL, st, "constant tensor: %s",
                                                    weft_tensor_last_error());
}

/* Slot kinds, constant tensors and output flags. */
static weft_status_t classify_slots(lower_ctx_t *c)
{
    weft_function_t *f = c->f;
    for (size_t k = 0; k < f->n_in; k++) f->slot_kind[k] = WEFT__SLOT_INPUT;
    for (size_t i = 0; i < c->n_order; i++) {
        weft_apply_t *a = c->order[i];
        for (size_t k = 0; k < weft_apply_n_inputs(a); k++) {
            weft_var_t *v = weft_apply_input(a, k);
            uint32_t s = slot_of(c, v);
            if (!weft_var_is_constant(v) || f->slot_kind[s] == WEFT__SLOT_CONST) continue;
            f->slot_kind[s] = WEFT__SLOT_CONST;
            weft_status_t st = make_const_cell(f, v, s);
            if (st != WEFT_OK) return st;
        }
    }
    for (size_t k = 0; k < f->n_out + f->n_upd; k++) {
        uint32_t s = slot_of(c, f->out_vars[k]);
        c->is_output[s] = true;
        f->out_slot[k] = s;
    }
    for (size_t k = 0; k < f->n_in; k++) f->in_slot[k] = (uint32_t)k;
    return WEFT_OK;
}

static bool freeable(lower_ctx_t *c, uint32_t s)
{
    return c->f->slot_kind[s] == WEFT__SLOT_OWNED && !c->is_output[s];
}

/* Static byte size of a tensor type; SIZE_MAX when some length is unknown. */
static size_t static_bytes(const weft_type_t *t)
{
    if (weft_type_kind(t) != WEFT_TYPE_TENSOR || !weft_type_is_static(t)) return SIZE_MAX;
    size_t n = weft_dtype_size(weft_type_dtype(t));
    for (int d = 0; d < weft_type_ndim(t); d++) {
        if (weft_type_dim(t, d) > (int64_t)WEFT__KEEP_BYTES) return SIZE_MAX;
        n *= (size_t)weft_type_dim(t, d);
        if (n > WEFT__KEEP_BYTES) return SIZE_MAX;
    }
    return n;
}

/* Small fresh values keep their buffer in their cell (WEFT__SLOT_KEPT):
 * intermediates and graph outputs alike. A kept output is copied to the
 * caller's tensor (deliver) and stays in its cell for the next call; one
 * handed over to a NULL output slot leaves its cell empty, so the next call
 * allocates a new one and the caller's tensor shares memory with nothing.
 * Also notes the slots that another variable views or destroys. */
static void mark_kept(lower_ctx_t *c)
{
    for (size_t i = 0; i < c->n_order; i++) {
        weft_apply_t *a = c->order[i];
        for (size_t k = 0; k < weft_apply_n_outputs(a); k++) {
            weft_var_t *o = weft_apply_output(a, k), *r = weft__alias_root(o);
            uint32_t s = slot_of(c, o);
            if (r != o && slot_of(c, r) != NO_SLOT) c->aliased[slot_of(c, r)] = true;
            bool owned = c->f->slot_kind[s] == WEFT__SLOT_OWNED;
            if (owned && r == o && static_bytes(weft_var_type(o)) <= WEFT__KEEP_BYTES)
                c->f->slot_kind[s] = WEFT__SLOT_KEPT;
        }
    }
}

/* Fills node i (storage pointers advance through the shared arrays). */
static weft_status_t build_node(lower_ctx_t *c, size_t i, uint32_t **slots,
                                const weft_type_t ***types, uint32_t *argv)
{
    weft_function_t *f = c->f;
    weft_apply_t *a = c->order[i];
    weft__cnode_t *n = &f->nodes[i];
    const weft_op_class_t *cls = weft_op_class(weft_apply_op(a));
    if (!cls->perform) {
        char d[256];
        weft_apply_describe(a, d, sizeof d);
        return weft__fn_error(NULL, WEFT_ENOTIMPL, "%s: op %s has no perform hook", d,
                              weft_op_name(weft_apply_op(a)));
    }
    weft__cnode_out_t *no = &f->node_out[i];
    n->apply = a;
    n->perform = cls->perform;
    uint32_t n_in = (uint32_t)weft_apply_n_inputs(a);
    no->n_out = (uint32_t)weft_apply_n_outputs(a);
    n->out_base = slot_of(c, weft_apply_output(a, 0));
    f->argv_off[i] = *argv;
    *argv += n_in;
    n->slots = (uint32_t)(*slots - f->slot_storage);
    weft__node_slots_t *ns = (weft__node_slots_t *)*slots;
    ns->n_in = n_in;
    ns->n_out = no->n_out;
    uint32_t *in = ns->slot, *dec = ns->slot + n_in, nd = 0;
    for (uint32_t k = 0; k < n_in; k++) in[k] = slot_of(c, weft_apply_input(a, k));
    for (uint32_t k = 0; k < n_in; k++) {
        bool seen = false;
        for (uint32_t j = 0; j < nd; j++) seen = seen || dec[j] == in[k];
        if (!seen && freeable(c, in[k])) dec[nd++] = in[k];
    }
    for (uint32_t k = 0; k < no->n_out; k++) {
        uint32_t s = n->out_base + k;
        if (freeable(c, s) && f->countdown_init[s] == 0) dec[nd++] = s; /* nobody reads it */
    }
    ns->n_dec = nd;
    *slots += weft__node_slots_words(n_in, nd);
    const weft_type_t **ot = *types;
    no->fresh_mask = 0;
    for (uint32_t k = 0; k < no->n_out; k++) {
        weft_var_t *o = weft_apply_output(a, k);
        ot[k] = weft_var_type(o);
        if (weft__alias_root(o) == o && k < 32 && f->slot_kind[n->out_base + k] != WEFT__SLOT_KEPT)
            no->fresh_mask |= 1u << k;
    }
    no->out_types = ot;
    *types = ot + no->n_out;
    /* a view may hand the kept buffer to the caller, a destroyer overwrite it:
     * only an unaliased kept slot is exclusive by construction */
    n->own = no->n_out == 1 && f->slot_kind[n->out_base] == WEFT__SLOT_KEPT &&
             !c->aliased[n->out_base];
    return WEFT_OK;
}

/* countdown_init: distinct reader nodes per freeable slot; 1 for unread ones
 * (their producer counts them down). */
static void count_readers(lower_ctx_t *c)
{
    weft_function_t *f = c->f;
    for (size_t i = 0; i < c->n_order; i++) {
        weft_apply_t *a = c->order[i];
        size_t n = weft_apply_n_inputs(a);
        for (size_t k = 0; k < n; k++) {
            uint32_t s = slot_of(c, weft_apply_input(a, k));
            bool dup = false;
            for (size_t j = 0; j < k; j++) dup = dup || slot_of(c, weft_apply_input(a, j)) == s;
            if (!dup && freeable(c, s)) f->countdown_init[s]++;
        }
    }
}

/* The slots a call empties (owned cells), so the per-call loop skips
 * kept, constant and input slots. */
static weft_status_t slot_lists(weft_function_t *f)
{
    f->owned_slots = malloc((f->n_slots + 1) * sizeof *f->owned_slots);
    if (!f->owned_slots) return lower_oom();
    f->n_owned = 0;
    for (uint32_t s = 0; s < f->n_slots; s++)
        if (f->slot_kind[s] == WEFT__SLOT_OWNED) f->owned_slots[f->n_owned++] = s;
    return WEFT_OK;
}

static weft_status_t build_nodes(lower_ctx_t *c)
{
    weft_function_t *f = c->f;
    /* slot lists: countdowns <= inputs + outputs; offsets must fit
     * weft__cnode_t.slots */
    size_t total_in = 0, total_out = 0, n_storage = 1;
    for (size_t i = 0; i < c->n_order; i++) {
        size_t n_in = weft_apply_n_inputs(c->order[i]), n_out = weft_apply_n_outputs(c->order[i]);
        total_in += n_in;
        total_out += n_out;
        n_storage += weft__node_slots_words(n_in, n_in + n_out);
    }
    if (n_storage >= WEFT__SLOT_STORAGE_MAX)
        return weft__fn_error(NULL, WEFT_EOVERFLOW, "the graph has too many node inputs (%zu)",
                              total_in);
    size_t nodes_bytes = (c->n_order + 1) * sizeof *f->nodes;
    f->nodes = aligned_alloc(64, (nodes_bytes + 63) / 64 * 64);
    if (f->nodes) memset(f->nodes, 0, nodes_bytes);
    f->node_out = calloc(c->n_order + 1, sizeof *f->node_out);
    f->slot_storage = malloc(n_storage * sizeof(uint32_t));
    f->type_storage = malloc((total_out + 1) * sizeof *f->type_storage);
    f->argv_off = malloc((c->n_order + 1) * sizeof *f->argv_off);
    if (!f->nodes || !f->node_out || !f->slot_storage || !f->type_storage || !f->argv_off)
        return lower_oom();
    count_readers(c);
    uint32_t *slots = f->slot_storage, argv = 0;
    const weft_type_t **types = f->type_storage;
    for (size_t i = 0; i < c->n_order; i++) {
        weft_status_t st = build_node(c, i, &slots, &types, &argv);
        if (st != WEFT_OK) return st;
    }
    for (size_t i = 0; i < c->n_order; i++)
        for (uint32_t k = 0; k < f->node_out[i].n_out; k++) {
            uint32_t s = f->nodes[i].out_base + k;
            if (freeable(c, s) && f->countdown_init[s] == 0) f->countdown_init[s] = 1;
        }
    f->n_argv = argv;
    return slot_lists(f);
}

static size_t collect_data_edges(lower_ctx_t *c, uint64_t *e)
{
    size_t ne = 0;
    for (size_t i = 0; i < c->n_order; i++) {
        weft_apply_t *a = c->order[i];
        for (size_t k = 0; k < weft_apply_n_inputs(a); k++) {
            weft_apply_t *p = weft_var_owner(weft_apply_input(a, k));
            if (p) e[ne++] = weft__edge_pack(c->apply_idx[weft_apply_id(p)], (uint32_t)i);
        }
    }
    return ne;
}

/* Data edges plus every feature ordering between node indices (in the
 * current order), sorted; *ne counts them with duplicates. */
static weft_status_t collect_edges(lower_ctx_t *c, uint64_t **out, size_t *ne)
{
    weft_function_t *f = c->f;
    weft_apply_t *const *before, *const *after;
    size_t n_ord = 0, total_in = 0;
    weft_status_t st = weft_fgraph_orderings(f->fg, &before, &after, &n_ord);
    if (st != WEFT_OK) return weft__fn_error(NULL, st, "orderings: %s",
                                             weft_fgraph_last_error(f->fg));
    for (size_t i = 0; i < c->n_order; i++) total_in += weft_apply_n_inputs(c->order[i]);
    uint64_t *e = malloc((total_in + n_ord + 1) * sizeof *e);
    if (!e) return lower_oom();
    size_t n = collect_data_edges(c, e);
    for (size_t k = 0; k < n_ord; k++)
        e[n++] = weft__edge_pack(c->apply_idx[weft_apply_id(before[k])],
                                 c->apply_idx[weft_apply_id(after[k])]);
    qsort(e, n, sizeof *e, weft__cmp_u64);
    *out = e;
    *ne = n;
    return WEFT_OK;
}

/* Drops repeated edges of a sorted array; returns the distinct count. */
static size_t dedupe_edges(uint64_t *e, size_t ne)
{
    size_t nu = 0;
    for (size_t k = 0; k < ne; k++)
        if (k == 0 || e[k] != e[k - 1]) e[nu++] = e[k];
    return nu;
}

/* Sorted edges between node indices (in order), rank[from] to the toposort
 * index (topo_targets) or the node index of to. */
static uint64_t *ranked_edges(const lower_ctx_t *c, bool topo_targets)
{
    uint64_t *r = malloc((c->n_edges + 1) * sizeof *r);
    if (!r) return NULL;
    for (size_t k = 0; k < c->n_edges; k++) {
        uint32_t from = weft__edge_from(c->topo_edges[k]), to = weft__edge_to(c->topo_edges[k]);
        r[k] = weft__edge_pack(c->rank[from], topo_targets ? to : c->rank[to]);
    }
    qsort(r, c->n_edges, sizeof *r, weft__cmp_u64);
    return r;
}

/* The DAG gets each node's successors in toposort order: the order the
 * compile-time replay (schedule_order.c) visited them in, so the pool's
 * continuation and LIFO choices repeat that replay exactly on one worker and
 * the run walks the nodes in layout order. The profiler keeps the edges
 * sorted by node index (f->edges). */
static weft_status_t build_dag_once(lower_ctx_t *c, bool gates)
{
    weft_function_t *f = c->f;
    uint64_t *by_topo = ranked_edges(c, true);
    weft_status_t st = by_topo ? weft_dag_create(NULL, &f->dag) : WEFT_ENOMEM;
    for (size_t i = 0; st == WEFT_OK && i < c->n_order; i++)
        st = weft_dag_add_node(f->dag, weft__node_body, &f->nodes[i],
                               weft_op_name(weft_apply_op(c->order[i])), NULL);
    for (size_t k = 0; st == WEFT_OK && k < c->n_edges; k++) {
        uint32_t to = c->rank[weft__edge_to(by_topo[k])];
        st = weft_dag_add_edge(f->dag, weft__edge_from(by_topo[k]), to);
    }
    free(by_topo);
    for (size_t i = 0; st == WEFT_OK && c->prio && i < c->n_order; i++)
        st = weft_dag_set_priority(f->dag, (uint32_t)i, c->prio[i]);
    if (st == WEFT_OK && gates) st = weft__gates_add(f);
    /* a gate is cheap and decides which work exists: first among the ready */
    uint32_t n_all = weft_dag_node_count(f->dag);
    for (uint32_t i = (uint32_t)c->n_order; st == WEFT_OK && c->prio && i < n_all; i++)
        st = weft_dag_set_priority(f->dag, i, INT64_MAX);
    if (st == WEFT_OK) st = weft_dag_finalize(f->dag);
    return st;
}

/* With gates for the IfElse guards on pools of 2+ workers (gate.c); if
 * their edges close a cycle, without (per-node skips, always correct). */
static weft_status_t build_dag(lower_ctx_t *c)
{
    weft_function_t *f = c->f;
    f->edges = ranked_edges(c, false);
    f->n_edges = c->n_edges;
    bool gates = f->guards && weft_pool_thread_count(f->pool) > 1;
    weft_status_t st = f->edges ? build_dag_once(c, gates) : WEFT_ENOMEM;
    if (st == WEFT_ECYCLE && gates) {
        weft_dag_destroy(f->dag);
        f->dag = NULL;
        weft__gates_free(f);
        st = build_dag_once(c, false);
    }
    if (st != WEFT_OK)
        return weft__fn_error(NULL, st, "building the task DAG: %s",
                              f->dag ? weft_dag_last_error(f->dag) : "out of memory");
    return WEFT_OK;
}

static void index_order(lower_ctx_t *c)
{
    for (size_t i = 0; i < c->n_order; i++) c->apply_idx[weft_apply_id(c->order[i])] = (uint32_t)i;
}

/* critical_path_first: per toposort index, its bottom level - its cost
 * (weft_node_cost_estimate) plus the largest of its successors' - into
 * c->prio. The edges go from lower to higher indices, sorted by source, so
 * one backward walk sees every successor's final level first. */
static weft_status_t bottom_levels(lower_ctx_t *c)
{
    c->prio = malloc((c->n_order + 1) * sizeof *c->prio);
    if (!c->prio) return lower_oom();
    size_t k = c->n_edges;
    for (size_t i = c->n_order; i-- > 0;) {
        int64_t succ_max = 0;
        for (; k > 0 && weft__edge_from(c->topo_edges[k - 1]) == i; k--) {
            int64_t s = c->prio[weft__edge_to(c->topo_edges[k - 1])];
            if (s > succ_max) succ_max = s;
        }
        c->prio[i] = succ_max + (int64_t)weft_node_cost_estimate(c->order[i]) + 1;
    }
    return WEFT_OK;
}

/* Reorders c->prio from toposort indices to node indices. */
static weft_status_t prio_by_rank(lower_ctx_t *c)
{
    int64_t *p = malloc((c->n_order + 1) * sizeof *p);
    if (!p) return lower_oom();
    for (size_t i = 0; i < c->n_order; i++) p[c->rank[i]] = c->prio[i];
    free(c->prio);
    c->prio = p;
    return WEFT_OK;
}

/* Collects the DAG edges (between toposort indices) and replaces the
 * toposort order by the order one worker runs the DAG in. */
static weft_status_t order_by_schedule(lower_ctx_t *c)
{
    weft_status_t st = collect_edges(c, &c->topo_edges, &c->n_edges);
    if (st != WEFT_OK) return st;
    c->n_edges = dedupe_edges(c->topo_edges, c->n_edges);
    st = weft__guard_plan(c->f, c->order, c->n_order, c->apply_idx, &c->topo_edges, &c->n_edges,
                          &c->gp);
    if (st != WEFT_OK) return weft__fn_error(NULL, st, "planning the IfElse guards");
    c->n_edges = dedupe_edges(c->topo_edges, c->n_edges);
    if (c->f->critical_path_first && (st = bottom_levels(c)) != WEFT_OK) return st;
    c->rank = malloc((c->n_order + 1) * sizeof *c->rank);
    weft_apply_t **order = malloc((c->n_order + 1) * sizeof *order);
    if (!c->rank || !order) st = WEFT_ENOMEM;
    else if (c->prio)
        st = weft__schedule_order_prio((uint32_t)c->n_order, c->topo_edges, c->n_edges, c->prio,
                                       c->rank);
    else
        st = weft__schedule_order((uint32_t)c->n_order, c->topo_edges, c->n_edges, c->rank);
    if (st == WEFT_OK && c->prio) st = prio_by_rank(c);
    if (st == WEFT_OK) {
        for (size_t i = 0; i < c->n_order; i++) order[c->rank[i]] = c->order[i];
        free(c->order);
        c->order = order;
        order = NULL;
        index_order(c);
    }
    free(order);
    return st == WEFT_OK ? WEFT_OK : weft__fn_error(NULL, st, "ordering the nodes: %s",
                                                    weft_status_str(st));
}

/* Rewrites each distinct guard's literals from variable ids to slots. */
static void guard_slots(lower_ctx_t *c)
{
    for (size_t k = 0; k < c->gp.n_distinct; k++) {
        uint32_t *w = c->gp.words + c->gp.distinct[k] + 1, nt = *w++;
        for (uint32_t t = 0; t < nt; t++) {
            uint32_t len = *w++;
            for (uint32_t j = 0; j < len; j++, w++) w[0] = c->var_slot[w[0] >> 1] << 1 | (w[0] & 1u);
        }
    }
}

/* Per slot, its producer's guard; on a one-worker pool, per node, the end
 * of its run of consecutive nodes with one guard (call.c skips it whole). */
static weft_status_t guard_tables(weft_function_t *f)
{
    f->slot_guard = calloc(f->n_slots + 1, sizeof *f->slot_guard);
    if (!f->slot_guard) return lower_oom();
    for (uint32_t i = 0; i < f->n_nodes; i++)
        for (uint32_t k = 0; k < f->node_out[i].n_out; k++)
            f->slot_guard[f->nodes[i].out_base + k] = f->nodes[i].guard;
    if (weft_pool_thread_count(f->pool) != 1) return WEFT_OK;
    f->skip_end = malloc((f->n_nodes + 1) * sizeof *f->skip_end);
    if (!f->skip_end) return lower_oom();
    for (uint32_t i = f->n_nodes; i-- > 0;) {
        bool same = i + 1 < f->n_nodes && f->nodes[i + 1].guard == f->nodes[i].guard;
        f->skip_end[i] = same ? f->skip_end[i + 1] : i + 1;
    }
    return WEFT_OK;
}

/* Moves the guards to the program: node records get their offsets (by
 * node index: rank maps the toposort), literals their condition's slot. */
static weft_status_t place_guards(lower_ctx_t *c)
{
    weft_function_t *f = c->f;
    if (!c->gp.n_guarded) return WEFT_OK;
    for (size_t i = 0; i < c->n_order; i++) f->nodes[c->rank[i]].guard = c->gp.off[i];
    guard_slots(c);
    f->guards = c->gp.words;
    f->n_guarded = (uint32_t)c->gp.n_guarded;
    f->n_guard_memo = (uint32_t)c->gp.n_distinct;
    c->gp.words = NULL;
    return guard_tables(f);
}

static weft_status_t lower_alloc(lower_ctx_t *c, size_t nv)
{
    weft_function_t *f = c->f;
    c->var_slot = malloc((nv + 1) * sizeof *c->var_slot);
    if (!c->var_slot) return lower_oom();
    memset(c->var_slot, 0xff, (nv + 1) * sizeof *c->var_slot);
    f->n_slots = assign_slots(c);
    f->slot_kind = calloc(f->n_slots + 1, 1);
    f->countdown_init = calloc(f->n_slots + 1, sizeof *f->countdown_init);
    f->const_cells = calloc(f->n_slots + 1, sizeof *f->const_cells);
    c->is_output = calloc(f->n_slots + 1, sizeof *c->is_output);
    c->aliased = calloc(f->n_slots + 1, sizeof *c->aliased);
    if (!f->slot_kind || !f->countdown_init || !f->const_cells || !c->is_output || !c->aliased)
        return lower_oom();
    return WEFT_OK;
}

/* c->order: an owned copy of the fgraph's toposort; c->apply_idx indexes it. */
static weft_status_t lower_toposort(lower_ctx_t *c)
{
    weft_function_t *f = c->f;
    weft_apply_t *const *topo;
    weft_status_t st = weft_fgraph_toposort(f->fg, &topo, &c->n_order);
    if (st != WEFT_OK)
        return weft__fn_error(NULL, st, "toposort: %s", weft_fgraph_last_error(f->fg));
    if (c->n_order >= ((size_t)1 << 30))
        return weft__fn_error(NULL, WEFT_ERANGE, "too many nodes");
    size_t na = weft_graph_n_applies(f->g);
    c->order = malloc((c->n_order + 1) * sizeof *c->order);
    c->apply_idx = malloc((na + 1) * sizeof *c->apply_idx);
    if (!c->order || !c->apply_idx) return lower_oom();
    memcpy(c->order, topo, c->n_order * sizeof *c->order);
    memset(c->apply_idx, 0xff, (na + 1) * sizeof *c->apply_idx);
    index_order(c);
    f->n_nodes = (uint32_t)c->n_order;
    return WEFT_OK;
}

weft_status_t weft__compile_lower(weft_function_t *f)
{
    lower_ctx_t c = {.f = f};
    weft_status_t st = lower_toposort(&c);
    if (st == WEFT_OK) st = order_by_schedule(&c);
    if (st == WEFT_OK) st = lower_alloc(&c, weft_graph_n_vars(f->g));
    if (st == WEFT_OK) st = classify_slots(&c);
    if (st == WEFT_OK) mark_kept(&c);
    if (st == WEFT_OK) st = build_nodes(&c);
    if (st == WEFT_OK) st = place_guards(&c);
    if (st == WEFT_OK) st = weft__reset_plan(f);
    if (st == WEFT_OK) st = weft__direct_plan(f, c.aliased);
    if (st == WEFT_OK) st = build_dag(&c);
    if (st == WEFT_OK) st = weft__arena_analyze(f, c.is_output);
    free(c.order);
    free(c.rank);
    free(c.prio);
    free(c.topo_edges);
    free(c.var_slot);
    free(c.apply_idx);
    free(c.is_output);
    free(c.aliased);
    weft__guard_plan_free(&c.gp);
    return st;
}

void weft__compile_free_program(weft_function_t *f)
{
    weft__arena_free_plan(f);
    weft_dag_destroy(f->dag);
    free(f->edges);
    if (f->const_cells)
        for (uint32_t s = 0; s < f->n_slots; s++) weft_tensor_release(f->const_cells[s]);
    free(f->const_cells);
    free(f->countdown_init);
    free(f->owned_slots);
    free(f->argv_off);
    free(f->slot_kind);
    free(f->type_storage);
    free(f->slot_storage);
    free(f->nodes);
    free(f->node_out);
    free(f->direct_out);
    free(f->guards);
    free(f->slot_guard);
    free(f->skip_end);
    weft__reset_plan_free(f);
    weft__gates_free(f);
}
