/* The static memory plan of a compiled function (docs/execution.md §4.6):
 * which values it covers and their users (compile time), and each call
 * state's arena - one block in which every planned value has its byte
 * range, and per value a tensor handle on that range that stays in the
 * value's cell from call to call, so its producer's weft_kernel_alloc_output
 * reuses it and a warm call takes nothing from the pool.
 *
 * Values whose size is known from their type are placed at compile time.
 * The others are measured in the first call for given input shapes (the
 * pool serves them in that call) and placed before the next one. A value
 * whose producer does not take its handle (its size varies between calls of
 * equal input shapes, or its kernel builds its own tensor) leaves the plan
 * for good: the pool serves it from the next plan on. */
#include <stdlib.h>
#include <string.h>

#include "base/base_int.h"
#include "compile_int.h"

#define NONE32 UINT32_MAX

static weft_status_t analyze_oom(void)
{
    return weft__fn_error(NULL, WEFT_ENOMEM, "out of memory planning the memory");
}

/* Input index aliased by output k of a, for each view_map / destroy_map
 * entry of output k: how many (up to 2) and the first. */
static size_t alias_inputs(const weft_apply_t *a, size_t k, size_t *first)
{
    const weft_op_alias_t *e[2];
    size_t n[2], count = 0;
    weft_op_view_map(weft_apply_op(a), &e[0], &n[0]);
    weft_op_destroy_map(weft_apply_op(a), &e[1], &n[1]);
    for (int m = 0; m < 2; m++)
        for (size_t i = 0; i < n[m]; i++)
            if (e[m][i].output == k && count++ == 0) *first = e[m][i].input;
    return count;
}

/* root[s]: the slot whose buffer slot s's value lives in (itself for a fresh
 * value, an input or a constant); bad[r]: some value may live in r's buffer
 * or another's (an output aliasing several inputs), so r is not planned. */
static void alias_roots(const weft_function_t *f, uint32_t *root, bool *bad)
{
    for (uint32_t s = 0; s < f->n_slots; s++) root[s] = s;
    for (uint32_t i = 0; i < f->n_nodes; i++) {
        const weft__cnode_t *n = &f->nodes[i];
        const weft__node_slots_t *ns = weft__cnode_slots(f, n);
        const uint32_t *in = weft__node_slots_in(ns);
        for (uint32_t k = 0; k < ns->n_out; k++) {
            size_t first = 0, c = alias_inputs(n->apply, k, &first);
            if (c == 0) continue;
            root[n->out_base + k] = root[in[first]];
            if (c == 1) continue;
            for (uint32_t j = 0; j < ns->n_in; j++) bad[root[in[j]]] = true;
        }
    }
}

static bool tensor_geom(const weft_type_t *t, weft__mp_geom_t *g)
{
    g->ndim = -1;
    if (weft_type_kind(t) != WEFT_TYPE_TENSOR || !weft_type_is_static(t)) return false;
    g->dtype = weft_type_dtype(t);
    g->ndim = weft_type_ndim(t);
    for (int d = 0; d < g->ndim; d++) g->shape[d] = weft_type_dim(t, d);
    return true;
}

static uint64_t geom_bytes(const weft__mp_geom_t *g)
{
    if (g->ndim < 0) return WEFT__MP_NONE;
    uint64_t b = weft_dtype_size(g->dtype);
    for (int d = 0; d < g->ndim; d++) {
        if (g->shape[d] != 0 && b > UINT64_MAX / 2 / (uint64_t)g->shape[d]) return WEFT__MP_NONE;
        b *= (uint64_t)g->shape[d];
    }
    return b;
}

/* The planned values: fresh owned tensors, not graph outputs, nothing
 * aliasing them a graph output, each with its writer. */
static weft_status_t pick_values(weft_function_t *f, const uint32_t *root, const bool *bad,
                                 const bool *is_output)
{
    weft__memplan_t *mp = &f->mp;
    bool *escapes = calloc(f->n_slots + 1, sizeof *escapes);
    mp->value_of_slot = malloc((f->n_slots + 1) * sizeof *mp->value_of_slot);
    mp->slot = malloc((f->n_slots + 1) * sizeof *mp->slot);
    mp->vals = calloc(f->n_slots + 1, sizeof *mp->vals);
    if (!escapes || !mp->value_of_slot || !mp->slot || !mp->vals) {
        free(escapes);
        return analyze_oom();
    }
    for (uint32_t s = 0; s < f->n_slots; s++)
        if (is_output[s]) escapes[root[s]] = true;
    memset(mp->value_of_slot, 0xff, (f->n_slots + 1) * sizeof *mp->value_of_slot);
    for (uint32_t i = 0; i < f->n_nodes; i++) {
        const weft__cnode_t *n = &f->nodes[i];
        for (uint32_t k = 0; k < f->node_out[i].n_out; k++) {
            uint32_t s = n->out_base + k;
            if (root[s] != s || bad[s] || escapes[s] || f->slot_kind[s] != WEFT__SLOT_OWNED ||
                weft_type_kind(f->node_out[i].out_types[k]) != WEFT_TYPE_TENSOR)
                continue;
            mp->value_of_slot[s] = mp->n;
            mp->slot[mp->n] = s;
            mp->vals[mp->n++].writer = i;
        }
    }
    free(escapes);
    return WEFT_OK;
}

/* Calls fn(mp, v, i, aux) once for each node i that reads planned value v
 * or an alias of it. Nodes are visited in id order, so a repeat of (v, i)
 * is always v's latest one. */
static void each_reader(weft_function_t *f, const uint32_t *root, uint32_t *last,
                        void (*fn)(weft__memplan_t *mp, uint32_t v, uint32_t i, uint32_t *aux),
                        uint32_t *aux)
{
    weft__memplan_t *mp = &f->mp;
    memset(last, 0xff, (mp->n + 1) * sizeof *last);
    for (uint32_t i = 0; i < f->n_nodes; i++) {
        const weft__node_slots_t *ns = weft__cnode_slots(f, &f->nodes[i]);
        for (uint32_t k = 0; k < ns->n_in; k++) {
            uint32_t v = mp->value_of_slot[root[weft__node_slots_in(ns)[k]]];
            if (v == NONE32 || last[v] == i) continue;
            last[v] = i;
            fn(mp, v, i, aux);
        }
    }
}

static void count_reader(weft__memplan_t *mp, uint32_t v, uint32_t i, uint32_t *cnt)
{
    (void)mp;
    (void)i;
    cnt[v]++;
}

static void add_reader(weft__memplan_t *mp, uint32_t v, uint32_t i, uint32_t *at)
{
    mp->reader_storage[at[v] + mp->vals[v].n_readers++] = i;
}

/* Each value's readers (weft__mp_value_t); the writer alone for a value
 * nobody reads. */
static weft_status_t collect_readers(weft_function_t *f, const uint32_t *root)
{
    weft__memplan_t *mp = &f->mp;
    uint32_t *cnt = calloc(mp->n + 1, sizeof *cnt), *last = malloc((mp->n + 1) * sizeof *last);
    size_t total = 0;
    if (cnt && last) {
        each_reader(f, root, last, count_reader, cnt);
        for (uint32_t v = 0; v < mp->n; v++) {
            uint32_t c = cnt[v];
            cnt[v] = (uint32_t)total; /* from now on: v's first entry */
            total += c ? c : 1;
        }
        mp->reader_storage = malloc((total + 1) * sizeof *mp->reader_storage);
    }
    if (!cnt || !last || !mp->reader_storage) {
        free(cnt);
        free(last);
        return analyze_oom();
    }
    each_reader(f, root, last, add_reader, cnt);
    for (uint32_t v = 0; v < mp->n; v++) {
        weft__mp_value_t *val = &mp->vals[v];
        if (val->n_readers == 0) mp->reader_storage[cnt[v] + val->n_readers++] = val->writer;
        val->readers = mp->reader_storage + cnt[v];
    }
    free(cnt);
    free(last);
    return WEFT_OK;
}

/* The compile-time plan of the statically sized values. */
static weft_status_t plan_static(weft_function_t *f)
{
    weft__memplan_t *mp = &f->mp;
    uint64_t *bytes = malloc((mp->n + 1) * sizeof *bytes);
    mp->type_geom = malloc((mp->n + 1) * sizeof *mp->type_geom);
    mp->static_off = malloc((mp->n + 1) * sizeof *mp->static_off);
    if (!bytes || !mp->type_geom || !mp->static_off) {
        free(bytes);
        return analyze_oom();
    }
    mp->all_static = true;
    for (uint32_t v = 0; v < mp->n; v++) {
        uint32_t s = mp->slot[v], w = mp->vals[v].writer;
        const weft_type_t *t = f->node_out[w].out_types[s - f->nodes[w].out_base];
        mp->all_static &= tensor_geom(t, &mp->type_geom[v]);
        bytes[v] = geom_bytes(&mp->type_geom[v]);
    }
    weft_status_t st = weft__memplan_place(mp->n, bytes, mp->conflict, mp->static_off,
                                           &mp->static_arena);
    mp->static_seq_peak = weft__memplan_seq_peak(f->n_nodes, mp->n, mp->vals, bytes);
    free(bytes);
    return st == WEFT_OK ? WEFT_OK : analyze_oom();
}

/* A one-worker pool has one schedule, node id order (weft/sched.h): it runs
 * the bodies in id order when every edge goes to a higher id, as lowering
 * lays the nodes out in a topological order. Not so when nodes may defer:
 * then one worker runs other ready nodes while one is pending. */
static bool plan_sequential(const weft_function_t *f)
{
    bool sequential = weft_pool_thread_count(f->pool) == 1 && !f->deferrable;
    for (size_t k = 0; sequential && k < f->n_edges; k++)
        WEFT_ASSERT(weft__edge_from(f->edges[k]) < weft__edge_to(f->edges[k]),
                    "task DAG edges go to higher node ids");
    return sequential;
}

weft_status_t weft__arena_analyze(weft_function_t *f, const bool *is_output)
{
    uint32_t *root = malloc((f->n_slots + 1) * sizeof *root);
    bool *bad = calloc(f->n_slots + 1, sizeof *bad);
    bool sequential = plan_sequential(f);
    weft_status_t st = root && bad ? WEFT_OK : analyze_oom();
    if (st == WEFT_OK) {
        alias_roots(f, root, bad);
        st = pick_values(f, root, bad, is_output);
    }
    if (st == WEFT_OK) st = collect_readers(f, root);
    if (st == WEFT_OK && f->mp.n && weft__arena_reuse(f, root, sequential) != WEFT_OK)
        st = analyze_oom();
    free(root);
    free(bad);
    if (st != WEFT_OK || f->mp.n == 0) return st;
    st = weft__memplan_conflicts(f->n_nodes, f->edges, f->n_edges, f->mp.n, f->mp.vals,
                                 sequential, &f->mp.conflict);
    if (st == WEFT_ERANGE) { /* too large to plan: the pool serves every value */
        f->mp.n = 0;
        return WEFT_OK;
    }
    return st == WEFT_OK ? plan_static(f) : analyze_oom();
}

void weft__arena_free_plan(weft_function_t *f)
{
    weft__memplan_t *mp = &f->mp;
    free(mp->vals);
    free(mp->slot);
    free(mp->reader_storage);
    free(mp->value_of_slot);
    free(mp->next_member);
    free(mp->reuse_in);
    free(mp->conflict);
    free(mp->type_geom);
    free(mp->static_off);
    memset(mp, 0, sizeof *mp);
}

/* ---- per call state ---------------------------------------------------------- */

weft_status_t weft__arena_state_init(weft__call_state_t *cs)
{
    const weft_function_t *f = cs->f;
    cs->arena_h = calloc(f->n_slots + 1, sizeof *cs->arena_h);
    cs->mp_geom = malloc((f->mp.n + 1) * sizeof *cs->mp_geom);
    cs->mp_excluded = calloc(f->mp.n + 1, 1);
    cs->mp_key = calloc(f->n_in * WEFT_MAX_NDIM + 1, sizeof *cs->mp_key);
    if (!cs->arena_h || !cs->mp_geom || !cs->mp_excluded || !cs->mp_key) return WEFT_ENOMEM;
    for (uint32_t v = 0; v < f->mp.n; v++) cs->mp_geom[v].ndim = -1;
    return WEFT_OK;
}

/* The slot after s in its planned value's chain of slots (memplan_reuse.c),
 * or NONE32. */
static uint32_t next_slot(const weft__memplan_t *mp, uint32_t s)
{
    return mp->next_member ? mp->next_member[s] : NONE32;
}

/* Takes every handle back from its cell and frees the arena. */
static void arena_drop(weft__call_state_t *cs)
{
    const weft__memplan_t *mp = &cs->f->mp;
    for (uint32_t v = 0; cs->arena_h && v < mp->n; v++)
        for (uint32_t s = mp->slot[v]; s != NONE32; s = next_slot(mp, s)) {
            weft_tensor_t *h = cs->arena_h[s];
            if (!h) continue;
            cs->arena_h[s] = NULL;
            if (cs->cells[s] == h) cs->cells[s] = NULL;
            weft_tensor_release(h);
        }
    free(cs->arena);
    cs->arena = NULL;
    cs->arena_bytes = cs->seq_peak_bytes = 0;
}

void weft__arena_state_fini(weft__call_state_t *cs)
{
    if (cs->cells) arena_drop(cs);
    free(cs->arena_h);
    free(cs->mp_geom);
    free(cs->mp_excluded);
    free(cs->mp_key);
}

/* The geometry value v gets in this state's plan (ndim -1: none). */
static const weft__mp_geom_t *plan_geom(const weft__call_state_t *cs, uint32_t v)
{
    static const weft__mp_geom_t none = {.ndim = -1};
    const weft__memplan_t *mp = &cs->f->mp;
    if (cs->mp_excluded[v]) return &none;
    return mp->type_geom[v].ndim >= 0 ? &mp->type_geom[v] : &cs->mp_geom[v];
}

/* The offsets of this state's plan: the compile-time one while it covers
 * every value, else placed now (*own: then *off is the caller's to free). */
static weft_status_t plan_offsets(weft__call_state_t *cs, uint64_t *bytes, uint64_t **off,
                                  bool *own)
{
    const weft__memplan_t *mp = &cs->f->mp;
    bool compile_time = mp->all_static;
    for (uint32_t v = 0; v < mp->n; v++) {
        bytes[v] = geom_bytes(plan_geom(cs, v));
        compile_time &= !cs->mp_excluded[v];
    }
    *own = !compile_time;
    if (compile_time) {
        *off = mp->static_off;
        cs->arena_bytes = mp->static_arena;
        cs->seq_peak_bytes = mp->static_seq_peak;
        return WEFT_OK;
    }
    *off = malloc((mp->n + 1) * sizeof **off);
    if (!*off) return WEFT_ENOMEM;
    weft_status_t st = weft__memplan_place(mp->n, bytes, mp->conflict, *off, &cs->arena_bytes);
    cs->seq_peak_bytes = weft__memplan_seq_peak(cs->f->n_nodes, mp->n, mp->vals, bytes);
    return st;
}

/* A handle per slot of each placed value, in its cell (the slots of a
 * chain share the value's range and geometry). */
static weft_status_t arena_handles(weft__call_state_t *cs, const uint64_t *off)
{
    const weft__memplan_t *mp = &cs->f->mp;
    for (uint32_t v = 0; v < mp->n; v++) {
        if (off[v] == WEFT__MP_NONE) continue;
        const weft__mp_geom_t *g = plan_geom(cs, v);
        for (uint32_t s = mp->slot[v]; s != NONE32; s = next_slot(mp, s)) {
            weft_tensor_t *h = NULL;
            weft_status_t st = weft_tensor_from_data(g->dtype, g->ndim, g->shape, NULL,
                                                     (char *)cs->arena + off[v], &h);
            if (st != WEFT_OK) return st;
            cs->arena_h[s] = cs->cells[s] = h;
        }
    }
    return WEFT_OK;
}

static void arena_build(weft__call_state_t *cs)
{
    const weft__memplan_t *mp = &cs->f->mp;
    arena_drop(cs);
    uint64_t *bytes = malloc((mp->n + 1) * sizeof *bytes), *off = NULL;
    bool own = false;
    weft_status_t st = bytes ? plan_offsets(cs, bytes, &off, &own) : WEFT_ENOMEM;
    if (st == WEFT_OK) {
        /* at least one line: aligned_alloc of 0 bytes may return NULL */
        cs->arena = aligned_alloc(64, cs->arena_bytes ? cs->arena_bytes : 64);
        st = cs->arena ? arena_handles(cs, off) : WEFT_ENOMEM;
    }
    cs->mp_measure = false;
    for (uint32_t v = 0; st == WEFT_OK && v < mp->n; v++)
        cs->mp_measure |= !cs->mp_excluded[v] && bytes[v] == WEFT__MP_NONE;
    if (own) free(off);
    free(bytes);
    cs->mp_ready = true;
    cs->mp_dirty = st != WEFT_OK; /* short of memory: the pool serves all; retried next call */
    if (st != WEFT_OK) arena_drop(cs);
}

/* Whether the inputs' shapes differ from those the plan was made for
 * (recorded as the new key). */
static bool key_changed(weft__call_state_t *cs, weft_tensor_t *const *inputs)
{
    bool changed = false;
    for (size_t k = 0; k < cs->f->n_in; k++) {
        int64_t *key = cs->mp_key + k * WEFT_MAX_NDIM;
        for (int d = 0; d < weft_tensor_ndim(inputs[k]); d++) {
            changed |= key[d] != weft_tensor_dim(inputs[k], d);
            key[d] = weft_tensor_dim(inputs[k], d);
        }
    }
    return changed;
}

void weft__arena_prepare(weft__call_state_t *cs, weft_tensor_t *const *inputs)
{
    const weft__memplan_t *mp = &cs->f->mp;
    if (mp->n == 0) return;
    if (!mp->all_static && key_changed(cs, inputs)) {
        for (uint32_t v = 0; v < mp->n; v++) cs->mp_geom[v].ndim = -1;
        cs->mp_dirty = true;
    }
    if (!cs->mp_ready || cs->mp_dirty) arena_build(cs);
}

void weft__arena_measure(weft__call_state_t *cs, uint32_t s, const weft_tensor_t *t)
{
    uint32_t v = cs->f->mp.value_of_slot[s];
    /* a chain's later slots have its static geometry: nothing to measure */
    if (v == NONE32 || !t || cs->arena_h[s] || cs->f->mp.slot[v] != s) return;
    weft__mp_geom_t *g = &cs->mp_geom[v];
    g->dtype = weft_tensor_dtype(t);
    g->ndim = weft_tensor_ndim(t);
    for (int d = 0; d < g->ndim; d++) g->shape[d] = weft_tensor_dim(t, d);
}

void weft__arena_settle(weft__call_state_t *cs)
{
    const weft__memplan_t *mp = &cs->f->mp;
    for (uint32_t v = 0; v < mp->n; v++) {
        uint32_t s = mp->slot[v];
        weft_tensor_t *h = cs->arena_h[s];
        /* a producer released its handle (weft_kernel_alloc_output found
         * another geometry, or the kernel set a tensor of its own) */
        for (uint32_t m = s; m != NONE32; m = next_slot(mp, m))
            if (cs->arena_h[m] && cs->cells[m] != cs->arena_h[m]) {
                cs->arena_h[m] = NULL;
                cs->mp_excluded[v] = 1;
                cs->mp_dirty = true;
            }
        /* a value the pool served was measured: place it from the next call on */
        if (!h && cs->mp_measure && !cs->mp_excluded[v] && cs->mp_geom[v].ndim >= 0)
            cs->mp_dirty = true;
    }
    cs->mp_measure = false;
}
