/* Node priorities (weft_dag_set_priority, docs/execution.md §3.4.2): the
 * per-node table and the finalize-time list schedule (the order of runs on
 * one-worker pools); the heap is base/prio_heap.h, shared with a
 * prioritized run's ready queue (dag_run.c). */
#include <string.h>

#include "base/prio_heap.h"
#include "dag_int.h"

weft_status_t weft_dag_set_priority(weft_dag_t *dag, uint32_t id, int64_t priority)
{
    if (!dag || dag->magic != WEFT__DAG_MAGIC) return WEFT_EINVAL;
    if (dag->finalized) {
        weft__dag_set_error(dag, "set_priority: the DAG is finalized and can no longer change");
        return WEFT_ESTATE;
    }
    if (id >= dag->n) {
        weft__dag_set_error(dag, "set_priority: no node %u (the DAG has %u)", id, dag->n);
        return WEFT_ENOTFOUND;
    }
    if (id >= dag->prio_cap) {
        uint32_t cap = dag->cap > id ? dag->cap : id + 1;
        int64_t *p = weft__realloc(dag->alloc, dag->prio, (size_t)dag->prio_cap * sizeof *p,
                                   (size_t)cap * sizeof *p);
        if (!p) {
            weft__dag_set_error(dag, "set_priority: out of memory");
            return WEFT_ENOMEM;
        }
        memset(p + dag->prio_cap, 0, (size_t)(cap - dag->prio_cap) * sizeof *p);
        dag->prio = p;
        dag->prio_cap = cap;
    }
    dag->prio[id] = priority;
    return WEFT_OK;
}

/* Kahn's algorithm with the ready set in a heap: the order one worker of a
 * prioritized run follows. */
static void prio_list_schedule(const weft_dag_t *dag, uint32_t *deg, uint32_t *heap,
                               uint32_t *order)
{
    uint32_t nh = 0, k = 0;
    memcpy(deg, dag->indeg, (size_t)dag->n * sizeof(uint32_t));
    for (uint32_t v = 0; v < dag->n; v++)
        if (!deg[v]) weft__prio_heap_push(dag->prio, heap, &nh, v);
    while (nh) {
        uint32_t u = order[k++] = weft__prio_heap_pop(dag->prio, heap, &nh);
        for (uint32_t e = dag->succ_off[u]; e < dag->succ_off[u + 1]; e++)
            if (--deg[dag->succ[e]] == 0) weft__prio_heap_push(dag->prio, heap, &nh, dag->succ[e]);
    }
}

weft_status_t weft__prio_freeze(weft_dag_t *dag, uint32_t **order)
{
    const weft_allocator_t *a = dag->alloc;
    size_t n = dag->n;
    if (dag->prio_cap != n + 1) {
        int64_t *p = weft__realloc(a, dag->prio, (size_t)dag->prio_cap * sizeof *p,
                                   (n + 1) * sizeof *p);
        if (!p) return WEFT_ENOMEM;
        if (n + 1 > dag->prio_cap)
            memset(p + dag->prio_cap, 0, (n + 1 - dag->prio_cap) * sizeof *p);
        dag->prio = p;
        dag->prio_cap = (uint32_t)(n + 1);
    }
    uint32_t *o = *order ? *order : weft__alloc(a, (n + 1) * sizeof(uint32_t));
    uint32_t *deg = weft__alloc(a, (n + 1) * sizeof(uint32_t));
    uint32_t *heap = weft__alloc(a, (n + 1) * sizeof(uint32_t));
    if (o && deg && heap) prio_list_schedule(dag, deg, heap, o);
    weft__free(a, deg, (n + 1) * sizeof(uint32_t));
    weft__free(a, heap, (n + 1) * sizeof(uint32_t));
    if (!o || !deg || !heap) {
        if (o != *order) weft__free(a, o, (n + 1) * sizeof(uint32_t));
        return WEFT_ENOMEM;
    }
    /* the ids already in list order (a compiled function lays its nodes out
     * so): no order table, as dag_validate's rule, so that a sequential run
     * keeps skip_to */
    bool identity = true;
    for (size_t i = 0; i < n && identity; i++) identity = o[i] == i;
    if (identity) {
        weft__free(a, o, (n + 1) * sizeof(uint32_t));
        o = NULL;
    }
    *order = o;
    return WEFT_OK;
}

void weft__prio_free(weft_dag_t *dag)
{
    weft__free(dag->alloc, dag->prio, (size_t)dag->prio_cap * sizeof(int64_t));
    dag->prio = NULL;
    dag->prio_cap = 0;
}
