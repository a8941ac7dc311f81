/* DAG regions (weft_dag_add_region): sets of nodes a gate node can retire
 * in bulk, and their boundaries, fixed at finalize (dag_int.h).
 *
 * Why a retired region never runs: every member has an edge from its gate,
 * and a retiring gate releases its boundary instead of its own successor
 * entries, so no member's counter can reach 0; the members' other
 * predecessors may still decrement them (harmlessly). A nested region's
 * gate is a member of the outer region: retiring the outer one means the
 * inner gate never runs, so the outer boundary is that of the closure (the
 * members of the region and, recursively, of the regions they gate). */
#include <stdlib.h>
#include <string.h>

#include "dag_int.h"

#include "base/vec.h"

static weft_status_t region_check_ids(weft_dag_t *dag, uint32_t gate, const uint32_t *members,
                                      size_t n)
{
    char b[160];
    if (gate >= dag->n) {
        weft__dag_set_error(dag, "add_region: no gate node %u (the DAG has %u nodes)", gate, dag->n);
        return WEFT_ENOTFOUND;
    }
    for (size_t k = 0; k < n; k++) {
        if (members[k] >= dag->n) {
            weft__dag_set_error(dag, "add_region: no member node %u (the DAG has %u nodes)",
                                members[k], dag->n);
            return WEFT_ENOTFOUND;
        }
        if (members[k] == gate) {
            weft__dag_set_error(dag, "add_region: the gate %s is among its members",
                                weft__dag_label(dag, gate, b, sizeof b));
            return WEFT_EDUPLICATE;
        }
    }
    return WEFT_OK;
}

weft_status_t weft_dag_add_region(weft_dag_t *dag, uint32_t gate, const uint32_t *members,
                                  size_t n, uint32_t *id_out)
{
    if (!dag || dag->magic != WEFT__DAG_MAGIC || (!members && n) || n == 0) return WEFT_EINVAL;
    if (dag->finalized) {
        weft__dag_set_error(dag, "add_region: the DAG is finalized and can no longer change");
        return WEFT_ESTATE;
    }
    weft_status_t st = region_check_ids(dag, gate, members, n);
    if (st != WEFT_OK) return st;
    if (n > WEFT__DAG_MAX_ENTRIES || dag->ne + dag->n + n >= WEFT__DAG_MAX_ENTRIES ||
        dag->nreg >= WEFT__DAG_MAX_NODES) {
        weft__dag_set_error(dag, "add_region: too many edges or regions");
        return WEFT_ERANGE;
    }
    size_t rcap = dag->regcap;
    /* reserve everything first: nothing is added on error */
    if (!weft__vec_reserve(dag->alloc, (void **)&dag->edges, &dag->ecap, dag->ne + n,
                           sizeof *dag->edges) ||
        !weft__vec_reserve(dag->alloc, (void **)&dag->members, &dag->memcap, dag->nmembers + n,
                           sizeof *dag->members) ||
        !weft__vec_reserve(dag->alloc, (void **)&dag->regions, &rcap, (size_t)dag->nreg + 1,
                           sizeof *dag->regions)) {
        dag->regcap = (uint32_t)rcap;
        weft__dag_set_error(dag, "add_region: out of memory");
        return WEFT_ENOMEM;
    }
    dag->regcap = (uint32_t)rcap;
    dag->regions[dag->nreg] = (weft__dag_region_t){ .gate = gate, .moff = (uint32_t)dag->nmembers };
    for (size_t k = 0; k < n; k++) {
        dag->members[dag->nmembers++] = members[k];
        dag->edges[dag->ne++] = (weft__dag_edge_t){ gate, members[k] };
    }
    if (id_out) *id_out = dag->nreg;
    dag->nreg++;
    return WEFT_OK;
}

void weft__dag_regions_free(weft_dag_t *dag)
{
    const weft_allocator_t *a = dag->alloc;
    weft__free(a, dag->regions, (size_t)dag->regcap * sizeof *dag->regions);
    weft__free(a, dag->members, dag->memcap * sizeof *dag->members);
    dag->regions = NULL;
    dag->members = NULL;
    dag->nreg = dag->regcap = 0;
    dag->nmembers = dag->memcap = 0;
}

static size_t region_members_end(const weft_dag_t *dag, uint32_t r)
{
    return r + 1 < dag->nreg ? dag->regions[r + 1].moff : dag->nmembers;
}

/* region_of, gate_region and parents; a node in two regions, or gating
 * two, is refused. */
static weft_status_t region_maps(weft_dag_t *dag)
{
    char b[160];
    for (uint32_t v = 0; v < dag->n; v++) dag->region_of[v] = dag->gate_region[v] = WEFT__DAG_NO_REGION;
    for (uint32_t r = 0; r < dag->nreg; r++) {
        uint32_t g = dag->regions[r].gate;
        if (dag->gate_region[g] != WEFT__DAG_NO_REGION) {
            weft__dag_set_error(dag, "finalize: node %s gates regions %u and %u",
                                weft__dag_label(dag, g, b, sizeof b), dag->gate_region[g], r);
            return WEFT_EDUPLICATE;
        }
        dag->gate_region[g] = r;
        for (size_t k = dag->regions[r].moff; k < region_members_end(dag, r); k++) {
            uint32_t v = dag->members[k];
            if (dag->region_of[v] != WEFT__DAG_NO_REGION) {
                weft__dag_set_error(dag, "finalize: node %s is a member of regions %u and %u",
                                    weft__dag_label(dag, v, b, sizeof b), dag->region_of[v], r);
                return WEFT_EDUPLICATE;
            }
            dag->region_of[v] = r;
        }
    }
    for (uint32_t r = 0; r < dag->nreg; r++) dag->regions[r].parent = dag->region_of[dag->regions[r].gate];
    return WEFT_OK;
}

/* Node v is in region r's closure: r is v's region or encloses it. The
 * chain ends: a region enclosing itself would put its gate on a cycle,
 * which validation refused before. */
static bool in_closure(const weft_dag_t *dag, uint32_t v, uint32_t r)
{
    for (uint32_t q = dag->region_of[v]; q != WEFT__DAG_NO_REGION; q = dag->regions[q].parent)
        if (q == r) return true;
    return false;
}

/* Walks the closure of every region (each member once per enclosing
 * region): counts boundary entries and sinks, and with out != NULL stores
 * the entries there. Returns the entry count. */
static size_t region_boundaries(weft_dag_t *dag, uint32_t *out, uint32_t base)
{
    size_t m = 0;
    for (uint32_t r = 0; r < dag->nreg; r++) {
        dag->regions[r].blo = base + (uint32_t)m;
        dag->regions[r].sinks = 0;
        for (uint32_t v = 0; v < dag->n; v++) {
            if (dag->region_of[v] == WEFT__DAG_NO_REGION || !in_closure(dag, v, r)) continue;
            uint32_t lo = dag->succ_off[v], hi = dag->succ_off[v + 1];
            if (lo == hi) dag->regions[r].sinks++;
            for (uint32_t e = lo; e < hi; e++) {
                uint32_t s = dag->succ[e] & WEFT__DAG_ID_MASK;
                if (in_closure(dag, s, r)) continue;
                if (out) out[m] = dag->succ[e];
                m++;
            }
        }
        dag->regions[r].bhi = base + (uint32_t)m;
    }
    return m;
}

/* Edge u -> v counts down v's pending counter even when region r, whose
 * closure holds v, is retired: v has in-degree >= 2 (the others have no
 * counter) and u is outside the closure and not r's gate (a retiring gate
 * releases none of its own entries). Counters only edges inside the
 * closure or from the gate reach stay untouched when r retires. */
static bool region_touches(const weft_dag_t *dag, uint32_t r, uint32_t u, uint32_t v)
{
    return dag->indeg[v] >= 2 && u != dag->regions[r].gate && !in_closure(dag, u, r);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* reset_nodes and each region's (rlo, rhi), from the (region, node) pairs
 * of the edges entering a closure from outside (region_touches). */
static weft_status_t region_resets(weft_dag_t *dag)
{
    const weft_allocator_t *a = dag->alloc;
    size_t np = 0, cap = 1;
    for (uint64_t e = 0; e < dag->ne; e++)
        for (uint32_t r = dag->region_of[dag->edges[e].to]; r != WEFT__DAG_NO_REGION;
             r = dag->regions[r].parent)
            cap++;
    uint64_t *pairs = weft__alloc(a, cap * sizeof *pairs);
    if (!pairs) return WEFT_ENOMEM;
    for (uint64_t e = 0; e < dag->ne; e++) {
        uint32_t u = dag->edges[e].from, v = dag->edges[e].to;
        for (uint32_t r = dag->region_of[v]; r != WEFT__DAG_NO_REGION; r = dag->regions[r].parent)
            if (region_touches(dag, r, u, v)) pairs[np++] = (uint64_t)r << 32 | v;
    }
    qsort(pairs, np, sizeof *pairs, cmp_u64);
    dag->reset_nodes = weft__alloc(a, (np + 1) * sizeof(uint32_t));
    if (!dag->reset_nodes) {
        weft__free(a, pairs, cap * sizeof *pairs);
        return WEFT_ENOMEM;
    }
    size_t n = 0;
    for (uint32_t r = 0; r < dag->nreg; r++) dag->regions[r].rlo = dag->regions[r].rhi = 0;
    for (size_t k = 0; k < np; k++) {
        if (k && pairs[k] == pairs[k - 1]) continue;
        weft__dag_region_t *rg = &dag->regions[pairs[k] >> 32];
        if (rg->rhi == 0) rg->rlo = (uint32_t)n;
        dag->reset_nodes[n++] = (uint32_t)pairs[k];
        rg->rhi = (uint32_t)n;
    }
    dag->n_reset = np;
    weft__free(a, pairs, cap * sizeof *pairs);
    return WEFT_OK;
}

weft_status_t weft__dag_regions_freeze(weft_dag_t *dag)
{
    const weft_allocator_t *a = dag->alloc;
    size_t n = dag->n, used = (size_t)dag->ne + dag->nsrc, cap = (size_t)dag->ne + n + 1;
    dag->region_of = weft__alloc(a, (n + 1) * sizeof(uint32_t));
    dag->gate_region = weft__alloc(a, (n + 1) * sizeof(uint32_t));
    if (!dag->region_of || !dag->gate_region) return WEFT_ENOMEM;
    weft_status_t st = region_maps(dag);
    if (st == WEFT_OK) st = region_resets(dag);
    if (st != WEFT_OK) return st;
    size_t nb = region_boundaries(dag, NULL, (uint32_t)used);
    if (used + nb >= WEFT__DAG_MAX_ENTRIES) {
        weft__dag_set_error(dag, "finalize: the regions' boundaries hold too many edges");
        return WEFT_ERANGE;
    }
    /* the boundaries go after the sources; succ grows to hold them */
    size_t extra = used + nb > cap ? used + nb - cap : 0;
    uint32_t *succ = weft__alloc(a, (cap + extra) * sizeof(uint32_t));
    if (!succ) return WEFT_ENOMEM;
    memcpy(succ, dag->succ, used * sizeof(uint32_t));
    region_boundaries(dag, succ + used, (uint32_t)used);
    weft__free(a, dag->succ, cap * sizeof(uint32_t));
    dag->succ = succ;
    dag->succ_extra = extra;
    return WEFT_OK;
}
