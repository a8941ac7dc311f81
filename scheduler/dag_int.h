/* Task-DAG internals shared by dag.c (building, validation) and dag_run.c
 * (execution).
 *
 * Frozen layout (after weft_dag_finalize), chosen to keep the per-node
 * footprint small and never walk a predecessor list at run time:
 *   nodes[n]        {fn, arg}, 16 bytes
 *   succ_off[n+1]   CSR offsets into succ (32-bit)
 *   succ[ne+nsrc]   successor entries of every node, then the sources;
 *                   entry = node id | DAG_SINGLE (in-degree 1, or a source:
 *                   ready without touching a counter) | DAG_DEFER (in-degree
 *                   >= DAG_DEFER_MIN: decrements are batched per worker)
 *   indeg[n]        copied into a run's pending[] at each start
 *   order[n]        a topological order, for runs on one-worker pools
 *                   (Kahn's queue); NULL when the ids are one already
 *                   (every edge goes to a higher id): then order[i] = i
 *   regions         (dag_region.c) per region: its gate, the region holding
 *                   its gate (nesting), its boundary - the entries of the
 *                   edges leaving its closure (members and nested regions'
 *                   members), stored in succ after the sources so that range
 *                   items can walk them - and the closure's sinks;
 *                   region_of[n] / gate_region[n] map nodes to regions
 *                   (NULL when the DAG has none); reset_nodes: the pending
 *                   counters a retired region leaves partly counted down
 *                   (dag_run.c restores them at the next start) */
#ifndef WEFT_SCHED_DAG_INT_H
#define WEFT_SCHED_DAG_INT_H

#include <stdatomic.h>
#include <stdint.h>

#include "pool_int.h"
#include "weft/sched.h"

#define WEFT__DAG_MAGIC 0x64616721u
#define WEFT__DAG_SINGLE 0x80000000u
#define WEFT__DAG_DEFER 0x40000000u
#define WEFT__DAG_ID_MASK 0x3fffffffu
#define WEFT__DAG_MAX_NODES 0x3fffffffu
#define WEFT__DAG_MAX_ENTRIES 0x7fffffffu
#define WEFT__DAG_DEFER_MIN 64u
#define WEFT__DAG_NO_NAME UINT32_MAX

/* An edge as added, before finalize sorts edges into successor lists. */
typedef struct weft__dag_edge {
    uint32_t from, to;
} weft__dag_edge_t;

#define WEFT__DAG_NO_REGION UINT32_MAX

typedef struct weft__dag_region {
    uint32_t gate;
    uint32_t parent;   // region whose member the gate is, or WEFT__DAG_NO_REGION
    uint32_t blo, bhi; // boundary entries: succ[blo, bhi)
    uint32_t sinks;    // members of the closure without successors
    uint32_t rlo, rhi; // reset_nodes[rlo, rhi): pending counters a retire leaves touched
    uint32_t moff;     // while building: its members are members[moff, next moff)
} weft__dag_region_t;

typedef struct weft__dag_node {
    weft_node_fn fn;
    void *arg;
} weft__dag_node_t;

struct weft_dag {
    uint32_t magic;
    int finalized;
    const weft_allocator_t *alloc;
    /* nodes */
    weft__dag_node_t *nodes;
    uint32_t n, cap;
    uint32_t *name_off; // offset into names, or WEFT__DAG_NO_NAME
    char *names;
    size_t names_len, names_cap;
    /* edges while building; freed at finalize */
    weft__dag_edge_t *edges;
    uint64_t ne;
    size_t ecap;
    /* frozen form */
    uint32_t *succ_off;
    uint32_t *succ;
    uint32_t *indeg;
    uint32_t *order;
    uint32_t nsrc, nsinks;
    int has_multi; // some node has in-degree >= 2 (pending[] must be reset)
    size_t succ_extra; // boundary entries stored in succ after the sources
    /* regions (dag_region.c) */
    weft__dag_region_t *regions;
    uint32_t nreg, regcap;
    uint32_t *members;  // while building: every region's members, in order
    size_t nmembers, memcap;
    uint32_t *region_of;   // frozen, n entries: the region a node is a member of
    uint32_t *gate_region; // frozen, n entries: the region a node gates
    uint32_t *reset_nodes; // frozen: per region (rlo, rhi), the closure's nodes of in-degree
    size_t n_reset;        // >= 2 with a predecessor outside it; n_reset + 1 allocated
    /* priorities (dag_prio.c): NULL unless weft_dag_set_priority was called;
     * prio_cap entries while building, n + 1 once frozen */
    int64_t *prio;
    uint32_t prio_cap;
    /* run objects alive; written by run create/destroy on any thread */
    _Atomic uint32_t runs;
    char err[512];
};

void weft__dag_set_error(weft_dag_t *dag, const char *fmt, ...) WEFT_PRINTF(2, 3);
/* A node's label for messages ('name' (id) or (id)) into buf. */
const char *weft__dag_label(const weft_dag_t *dag, uint32_t id, char *buf, size_t cap);
/* After validation and entry flags: the region maps and boundaries
 * (dag_region.c). Errors: WEFT_EDUPLICATE, WEFT_ERANGE, WEFT_ENOMEM. */
weft_status_t weft__dag_regions_freeze(weft_dag_t *dag);
/* Priorities (dag_prio.c). At finalize, for a DAG with priorities: prio grown to n + 1 entries and
 * *order the list schedule (Kahn's algorithm taking the best ready node
 * first), allocated from the DAG's allocator. Errors: WEFT_ENOMEM. */
weft_status_t weft__prio_freeze(weft_dag_t *dag, uint32_t **order);
/* Frees prio (building or frozen). */
void weft__prio_free(weft_dag_t *dag);
/* Frees the region tables (building and frozen). */
void weft__dag_regions_free(weft_dag_t *dag);

#endif /* WEFT_SCHED_DAG_INT_H */
