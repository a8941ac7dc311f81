/* Task DAG construction and validation: nodes, edges, names, error text, and
 * weft_dag_finalize, which freezes the DAG into the CSR layout described in
 * dag_int.h (counting sort by source), refusing duplicate edges and cycles
 * (Kahn's algorithm; a cycle is then found by walking predecessors among the
 * nodes Kahn could not remove, each of which has such a predecessor).
 * Kahn's queue is kept as the order of runs on one-worker pools unless the
 * ids are already a topological order (or, with priorities, the list
 * schedule of dag_prio.c). */
#define _POSIX_C_SOURCE 200809L // clock_gettime, pthreads

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/vec.h"
#include "dag_int.h"

void weft__dag_set_error(weft_dag_t *dag, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dag->err, sizeof dag->err, fmt, ap);
    va_end(ap);
}

static int dag_ok(const weft_dag_t *dag)
{
    return dag && dag->magic == WEFT__DAG_MAGIC;
}

weft_status_t weft_dag_create(const weft_allocator_t *alloc, weft_dag_t **out)
{
    if (!out) return WEFT_EINVAL;
    const weft_allocator_t *a = alloc ? alloc : weft_allocator_default();
    weft_dag_t *dag = weft__alloc(a, sizeof *dag);
    *out = NULL;
    if (!dag) return WEFT_ENOMEM;
    memset(dag, 0, sizeof *dag);
    dag->alloc = a;
    dag->magic = WEFT__DAG_MAGIC;
    *out = dag;
    return WEFT_OK;
}

static void dag_free_frozen(weft_dag_t *dag)
{
    const weft_allocator_t *a = dag->alloc;
    size_t n = dag->n;
    weft__free(a, dag->succ_off, (n + 1) * sizeof(uint32_t));
    weft__free(a, dag->succ, ((size_t)dag->ne + n + 1 + dag->succ_extra) * sizeof(uint32_t));
    weft__free(a, dag->indeg, (n + 1) * sizeof(uint32_t));
    weft__free(a, dag->order, (n + 1) * sizeof(uint32_t));
    dag->succ_off = dag->succ = dag->indeg = dag->order = NULL;
    dag->nsrc = 0;
    dag->succ_extra = 0;
    weft__free(a, dag->region_of, (n + 1) * sizeof(uint32_t));
    weft__free(a, dag->gate_region, (n + 1) * sizeof(uint32_t));
    dag->region_of = dag->gate_region = NULL;
    weft__free(a, dag->reset_nodes, (dag->n_reset + 1) * sizeof(uint32_t));
    dag->reset_nodes = NULL;
    dag->n_reset = 0;
}

weft_status_t weft_dag_destroy(weft_dag_t *dag)
{
    if (!dag) return WEFT_OK;
    if (!dag_ok(dag)) return WEFT_EINVAL;
    /* acquire: pairs with the release decrement in weft_dag_run_destroy */
    if (atomic_load_explicit(&dag->runs, memory_order_acquire)) {
        weft__dag_set_error(dag, "destroy: %u run objects still exist",
                            atomic_load_explicit(&dag->runs, memory_order_relaxed)); // relaxed: text
        return WEFT_EBUSY;
    }
    const weft_allocator_t *a = dag->alloc;
    dag_free_frozen(dag);
    weft__dag_regions_free(dag);
    weft__prio_free(dag);
    weft__free(a, dag->nodes, (size_t)dag->cap * sizeof *dag->nodes);
    weft__free(a, dag->name_off, (size_t)dag->cap * sizeof *dag->name_off);
    weft__free(a, dag->names, dag->names_cap);
    weft__free(a, dag->edges, dag->ecap * sizeof(*dag->edges));
    dag->magic = 0;
    weft__free(a, dag, sizeof *dag);
    return WEFT_OK;
}

static weft_status_t dag_check_mutable(weft_dag_t *dag, const char *what)
{
    if (!dag->finalized) return WEFT_OK;
    weft__dag_set_error(dag, "%s: the DAG is finalized and can no longer change", what);
    return WEFT_ESTATE;
}

static weft_status_t dag_grow_nodes(weft_dag_t *dag)
{
    uint32_t ncap = dag->cap ? dag->cap * 2 : 64;
    if (ncap > WEFT__DAG_MAX_NODES + 1u) ncap = WEFT__DAG_MAX_NODES + 1u;
    const weft_allocator_t *a = dag->alloc;
    weft__dag_node_t *nodes = weft__realloc(a, dag->nodes, (size_t)dag->cap * sizeof *nodes,
                                            (size_t)ncap * sizeof *nodes);
    if (!nodes) return WEFT_ENOMEM;
    dag->nodes = nodes;
    uint32_t *off = weft__realloc(a, dag->name_off, (size_t)dag->cap * sizeof *off,
                                  (size_t)ncap * sizeof *off);
    if (!off) { /* keep nodes at the new capacity: both arrays must match */
        nodes = weft__realloc(a, dag->nodes, (size_t)ncap * sizeof *nodes,
                              (size_t)dag->cap * sizeof *nodes);
        if (nodes || dag->cap == 0) dag->nodes = nodes;
        return WEFT_ENOMEM;
    }
    dag->name_off = off;
    dag->cap = ncap;
    return WEFT_OK;
}

static weft_status_t dag_store_name(weft_dag_t *dag, const char *name, uint32_t *off)
{
    *off = WEFT__DAG_NO_NAME;
    if (!name) return WEFT_OK;
    size_t len = strlen(name) + 1;
    if (dag->names_len + len >= WEFT__DAG_NO_NAME) {
        weft__dag_set_error(dag, "add_node: the node names exceed %u bytes", WEFT__DAG_NO_NAME);
        return WEFT_ERANGE;
    }
    if (dag->names_len + len > dag->names_cap &&
        !weft__vec_reserve(dag->alloc, (void **)&dag->names, &dag->names_cap,
                           dag->names_len + len, 1))
        return WEFT_ENOMEM;
    memcpy(dag->names + dag->names_len, name, len);
    *off = (uint32_t)dag->names_len;
    dag->names_len += len;
    return WEFT_OK;
}

static weft_status_t dag_nomem(weft_dag_t *dag, const char *what)
{
    weft__dag_set_error(dag, "%s: out of memory", what);
    return WEFT_ENOMEM;
}

weft_status_t weft_dag_add_node(weft_dag_t *dag, weft_node_fn fn, void *arg, const char *name,
                                uint32_t *id_out)
{
    if (!dag_ok(dag) || !fn) return WEFT_EINVAL;
    weft_status_t st = dag_check_mutable(dag, "add_node");
    if (st != WEFT_OK) return st;
    if (dag->n >= WEFT__DAG_MAX_NODES) {
        weft__dag_set_error(dag, "add_node: more than %u nodes", WEFT__DAG_MAX_NODES);
        return WEFT_ERANGE;
    }
    if (dag->n == dag->cap && dag_grow_nodes(dag) != WEFT_OK) return dag_nomem(dag, "add_node");
    uint32_t off;
    if ((st = dag_store_name(dag, name, &off)) != WEFT_OK)
        return st == WEFT_ENOMEM ? dag_nomem(dag, "add_node") : st;
    dag->nodes[dag->n] = (weft__dag_node_t){ fn, arg };
    dag->name_off[dag->n] = off;
    if (id_out) *id_out = dag->n;
    dag->n++;
    return WEFT_OK;
}

/* "'name' (id)" or "(id)" for an unnamed node, into buf. */
const char *weft__dag_label(const weft_dag_t *dag, uint32_t id, char *buf, size_t cap)
{
    const char *name = weft_dag_node_name(dag, id);
    if (name && *name)
        snprintf(buf, cap, "'%s' (%u)", name, id);
    else
        snprintf(buf, cap, "(%u)", id);
    return buf;
}

weft_status_t weft_dag_add_edge(weft_dag_t *dag, uint32_t from, uint32_t to)
{
    if (!dag_ok(dag)) return WEFT_EINVAL;
    weft_status_t st = dag_check_mutable(dag, "add_edge");
    if (st != WEFT_OK) return st;
    if (from >= dag->n || to >= dag->n) {
        weft__dag_set_error(dag, "add_edge %u -> %u: no node %u (the DAG has %u nodes)", from, to,
                            from >= dag->n ? from : to, dag->n);
        return WEFT_ENOTFOUND;
    }
    if (from == to) {
        char b[160];
        weft__dag_set_error(dag, "add_edge: self edge on node %s",
                            weft__dag_label(dag, from, b, sizeof b));
        return WEFT_ECYCLE;
    }
    if (dag->ne + dag->n >= WEFT__DAG_MAX_ENTRIES) {
        weft__dag_set_error(dag, "add_edge: too many edges");
        return WEFT_ERANGE;
    }
    if (dag->ne == dag->ecap &&
        !weft__vec_reserve(dag->alloc, (void **)&dag->edges, &dag->ecap, dag->ne + 1,
                        sizeof(*dag->edges)))
        return dag_nomem(dag, "add_edge");
    dag->edges[dag->ne++] = (weft__dag_edge_t){from, to};
    return WEFT_OK;
}

uint32_t weft_dag_node_count(const weft_dag_t *dag)
{
    return dag_ok(dag) ? dag->n : 0;
}

uint64_t weft_dag_edge_count(const weft_dag_t *dag)
{
    return dag_ok(dag) ? dag->ne : 0;
}

const char *weft_dag_node_name(const weft_dag_t *dag, uint32_t id)
{
    if (!dag_ok(dag) || id >= dag->n) return NULL;
    uint32_t off = dag->name_off[id];
    return off == WEFT__DAG_NO_NAME ? "" : dag->names + off;
}

const char *weft_dag_last_error(const weft_dag_t *dag)
{
    return dag_ok(dag) ? dag->err : "";
}

/* ------------------------------------------------------------- finalize */

/* Build succ_off/succ (unflagged) and indeg from the edge list. Returns
 * whether the ids are a topological order (every edge goes to a higher id). */
static bool dag_build_csr(weft_dag_t *dag, uint32_t *fill)
{
    uint32_t n = dag->n;
    bool ids_ordered = true;
    memset(dag->succ_off, 0, ((size_t)n + 1) * sizeof(uint32_t));
    memset(dag->indeg, 0, (size_t)n * sizeof(uint32_t));
    for (uint64_t e = 0; e < dag->ne; e++) {
        dag->succ_off[dag->edges[e].from + 1]++;
        dag->indeg[dag->edges[e].to]++;
        ids_ordered &= dag->edges[e].from < dag->edges[e].to;
    }
    for (uint32_t i = 0; i < n; i++) dag->succ_off[i + 1] += dag->succ_off[i];
    memcpy(fill, dag->succ_off, (size_t)n * sizeof(uint32_t));
    for (uint64_t e = 0; e < dag->ne; e++) {
        dag->succ[fill[dag->edges[e].from]++] = dag->edges[e].to;
    }
    return ids_ordered;
}

/* WEFT_EDUPLICATE if some edge appears twice. mark: n scratch entries. */
static weft_status_t dag_check_duplicates(weft_dag_t *dag, uint32_t *mark)
{
    memset(mark, 0xff, (size_t)dag->n * sizeof(uint32_t));
    for (uint32_t u = 0; u < dag->n; u++) {
        for (uint32_t e = dag->succ_off[u]; e < dag->succ_off[u + 1]; e++) {
            uint32_t v = dag->succ[e];
            if (mark[v] == u) {
                char a[160], b[160];
                weft__dag_set_error(dag, "duplicate edge %s -> %s", weft__dag_label(dag, u, a, sizeof a),
                                    weft__dag_label(dag, v, b, sizeof b));
                return WEFT_EDUPLICATE;
            }
            mark[v] = u;
        }
    }
    return WEFT_OK;
}

/* Kahn's algorithm; leaves deg[v] > 0 exactly for nodes it could not remove.
 * Returns the number of nodes removed. */
static uint32_t dag_kahn(const weft_dag_t *dag, uint32_t *deg, uint32_t *queue)
{
    uint32_t head = 0, tail = 0;
    memcpy(deg, dag->indeg, (size_t)dag->n * sizeof(uint32_t));
    for (uint32_t v = 0; v < dag->n; v++)
        if (!deg[v]) queue[tail++] = v;
    while (head < tail) {
        uint32_t u = queue[head++];
        for (uint32_t e = dag->succ_off[u]; e < dag->succ_off[u + 1]; e++)
            if (--deg[dag->succ[e]] == 0) queue[tail++] = dag->succ[e];
    }
    return tail;
}

/* Write "cycle of K nodes: x -> y -> ... -> x" for some cycle among the nodes
 * with deg > 0 (those Kahn could not remove; each has such a predecessor).
 * pick: n scratch entries. */
static void dag_report_cycle(weft_dag_t *dag, const uint32_t *deg, uint32_t *pick)
{
    uint32_t start = 0;
    for (uint64_t e = 0; e < dag->ne; e++) {
        uint32_t u = dag->edges[e].from, v = dag->edges[e].to;
        if (deg[u] && deg[v]) pick[v] = u, start = v;
    }
    /* after n steps back along pick we are on a cycle */
    uint32_t v = start;
    for (uint32_t i = 0; i < dag->n; i++) v = pick[v];
    uint32_t len = 1;
    for (uint32_t u = pick[v]; u != v; u = pick[u]) len++;
    /* pick walks the cycle backwards: fill order[] from its end */
    uint32_t order[12], shown = len > 12 ? 12 : len, u = v;
    for (uint32_t i = 0; i < shown; i++) order[shown - 1 - i] = u, u = pick[u];
    size_t pos = (size_t)snprintf(dag->err, sizeof dag->err, "cycle of %u nodes:", len);
    char b[160];
    for (uint32_t i = 0; i < shown && pos < sizeof dag->err; i++)
        pos += (size_t)snprintf(dag->err + pos, sizeof dag->err - pos, "%s %s", i ? " ->" : "",
                                weft__dag_label(dag, order[i], b, sizeof b));
    if (pos < sizeof dag->err) /* close the cycle (elide the middle of a long one) */
        snprintf(dag->err + pos, sizeof dag->err - pos, "%s -> %s", len > shown ? " -> ..." : "",
                 weft__dag_label(dag, order[0], b, sizeof b));
}

/* Flag successor entries and append the sources (see dag_int.h). */
static void dag_flag_entries(weft_dag_t *dag)
{
    dag->has_multi = 0;
    for (uint64_t e = 0; e < dag->ne; e++) {
        uint32_t v = dag->succ[e], d = dag->indeg[v];
        if (d == 1) dag->succ[e] = v | WEFT__DAG_SINGLE;
        /* a prioritized run sends every ready node through its queue: no
         * batched decrements, which would push the node past it */
        else if (d >= WEFT__DAG_DEFER_MIN && !dag->prio) dag->succ[e] = v | WEFT__DAG_DEFER;
        if (d >= 2) dag->has_multi = 1;
    }
    uint32_t k = 0;
    dag->nsinks = 0;
    for (uint32_t v = 0; v < dag->n; v++) {
        if (!dag->indeg[v]) dag->succ[dag->ne + k++] = v | WEFT__DAG_SINGLE;
        if (dag->succ_off[v] == dag->succ_off[v + 1]) dag->nsinks++;
    }
    dag->nsrc = k;
}

/* On success, *order is s2 (Kahn's queue: a topological order) when the ids
 * are not one, else NULL. */
static weft_status_t dag_validate(weft_dag_t *dag, uint32_t *s1, uint32_t *s2, uint32_t **order)
{
    bool ids_ordered = dag_build_csr(dag, s1);
    weft_status_t st = dag_check_duplicates(dag, s1);
    if (st != WEFT_OK) return st;
    if (dag_kahn(dag, s1, s2) != dag->n) {
        dag_report_cycle(dag, s1, s2);
        return WEFT_ECYCLE;
    }
    *order = ids_ordered ? NULL : s2;
    return WEFT_OK;
}

weft_status_t weft_dag_finalize(weft_dag_t *dag)
{
    if (!dag_ok(dag)) return WEFT_EINVAL;
    weft_status_t st = dag_check_mutable(dag, "finalize");
    if (st != WEFT_OK) return st;
    const weft_allocator_t *a = dag->alloc;
    size_t n = dag->n;
    /* succ holds the edges then up to n sources (sizes as in dag_free_frozen) */
    dag->succ_off = weft__alloc(a, (n + 1) * sizeof(uint32_t));
    dag->succ = weft__alloc(a, ((size_t)dag->ne + n + 1) * sizeof(uint32_t));
    dag->indeg = weft__alloc(a, (n + 1) * sizeof(uint32_t));
    uint32_t *s1 = weft__alloc(a, (n + 1) * sizeof(uint32_t));
    uint32_t *s2 = weft__alloc(a, (n + 1) * sizeof(uint32_t));
    if (!dag->succ_off || !dag->succ || !dag->indeg || !s1 || !s2)
        st = WEFT_ENOMEM;
    else
        st = dag_validate(dag, s1, s2, &dag->order);
    weft__free(a, s1, (n + 1) * sizeof(uint32_t));
    if (!dag->order) weft__free(a, s2, (n + 1) * sizeof(uint32_t)); /* else kept as order */
    if (st == WEFT_OK && dag->prio) st = weft__prio_freeze(dag, &dag->order);
    if (st != WEFT_OK) {
        dag_free_frozen(dag);
        return st == WEFT_ENOMEM ? dag_nomem(dag, "finalize") : st;
    }
    dag_flag_entries(dag);
    st = dag->nreg ? weft__dag_regions_freeze(dag) : WEFT_OK;
    if (st != WEFT_OK) {
        dag_free_frozen(dag);
        return st == WEFT_ENOMEM ? dag_nomem(dag, "finalize") : st;
    }
    weft__free(a, dag->edges, dag->ecap * sizeof(*dag->edges)); /* no longer needed */
    dag->edges = NULL;
    dag->ecap = 0;
    dag->finalized = 1;
    dag->err[0] = '\0';
    return WEFT_OK;
}
