/* hwloc-specific code: core count and worker pinning. The topology is loaded
 * once per process (it takes milliseconds) and then only read, which hwloc
 * allows from several threads at once. Every failure degrades to "unpinned"
 * (reported by weft_pool_is_pinned), never to an error.
 *
 * Only the cores this process may run on count: the process's CPU binding
 * when the topology is loaded (mpirun, taskset, a cgroup). Two processes
 * bound to different cores (two MPI ranks on one machine) must not both pin
 * their worker 0 to the machine's core 0: that halved the data-parallel MLP
 * (docs/execution.md §3.6). */
#define _POSIX_C_SOURCE 200809L // pthread_once

#include "topology_int.h"

#include <hwloc.h>
#include <stdlib.h>

typedef struct topology_state {
    hwloc_topology_t topo;  // NULL if it could not be read
    hwloc_bitmap_t allowed; // the process's binding at load
    hwloc_obj_t *compact;   // allowed cores in hwloc's order
    hwloc_obj_t *scatter;   // the same, round-robin over packages
    int ncores;             // entries of compact and scatter
} topology_state_t;

static topology_state_t topology = {NULL, NULL, NULL, NULL, 0};
static pthread_once_t topology_once = PTHREAD_ONCE_INIT;

/* The cpuset this process is bound to; the whole machine when it is not
 * bound or the binding cannot be read. */
static hwloc_bitmap_t topology_read_binding(hwloc_topology_t topo)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!set) return NULL;
    if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) != 0 ||
        !hwloc_bitmap_intersects(set, hwloc_topology_get_topology_cpuset(topo)))
        hwloc_bitmap_copy(set, hwloc_topology_get_topology_cpuset(topo));
    return set;
}

/* scatter order: the k-th allowed core of each package in turn, so
 * consecutive workers land on different packages */
static void topology_order_scatter(hwloc_topology_t topo, topology_state_t *s)
{
    int npkg = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE), n = 0;
    if (npkg <= 1) {
        for (int i = 0; i < s->ncores; i++) s->scatter[i] = s->compact[i];
        return;
    }
    for (int round = 0; n < s->ncores; round++)
        for (int p = 0; p < npkg; p++) {
            hwloc_obj_t pkg = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, (unsigned)p);
            int seen = 0;
            for (int i = 0; i < s->ncores; i++)
                if (hwloc_bitmap_intersects(s->compact[i]->cpuset, pkg->cpuset) && seen++ == round)
                    s->scatter[n++] = s->compact[i];
        }
}

/* The cores that intersect the binding, in both orders. False when there
 * are none (or no memory): the process then runs unpinned. */
static int topology_list_cores(hwloc_topology_t topo, topology_state_t *s)
{
    int all = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    if (all <= 0) return 0;
    s->compact = calloc((size_t)all, sizeof *s->compact);
    s->scatter = calloc((size_t)all, sizeof *s->scatter);
    if (!s->compact || !s->scatter) return 0;
    for (int i = 0; i < all; i++) {
        hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)i);
        if (core && hwloc_bitmap_intersects(core->cpuset, s->allowed)) s->compact[s->ncores++] = core;
    }
    if (s->ncores == 0) return 0;
    topology_order_scatter(topo, s);
    return 1;
}

static void topology_load(void)
{
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0) return;
    if (hwloc_topology_load(topo) != 0) {
        hwloc_topology_destroy(topo);
        return;
    }
    topology_state_t s = {topo, topology_read_binding(topo), NULL, NULL, 0};
    if (!s.allowed || !topology_list_cores(topo, &s)) {
        free(s.compact);
        free(s.scatter);
        if (s.allowed) hwloc_bitmap_free(s.allowed);
        hwloc_topology_destroy(topo);
        return;
    }
    topology = s; /* kept for the life of the process */
}

static const topology_state_t *topology_get(void)
{
    pthread_once(&topology_once, topology_load);
    return topology.topo ? &topology : NULL;
}

int weft__topology_core_count(void)
{
    const topology_state_t *s = topology_get();
    return s ? s->ncores : 1;
}

/* Bind one thread to `core`, restricted to the process's binding (a process
 * bound to one hyperthread of a core stays on that hyperthread). */
static int topology_bind(const topology_state_t *s, pthread_t thread, hwloc_obj_t core)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!set) return 0;
    hwloc_bitmap_and(set, core->cpuset, s->allowed);
    int ok = hwloc_set_thread_cpubind(s->topo, thread, set, HWLOC_CPUBIND_THREAD) == 0;
    hwloc_bitmap_free(set);
    return ok;
}

int weft__topology_pin_threads(const pthread_t *threads, int n, weft_pin_policy_t policy)
{
    if (policy == WEFT_PIN_NONE || getenv("WEFT_NO_PIN")) return 0;
    const topology_state_t *s = topology_get();
    if (!s) return 0;
    hwloc_obj_t *order = policy == WEFT_PIN_SCATTER ? s->scatter : s->compact;
    int all = 1;
    for (int i = 0; i < n; i++)
        if (!topology_bind(s, threads[i], order[i % s->ncores])) all = 0;
    return all;
}
