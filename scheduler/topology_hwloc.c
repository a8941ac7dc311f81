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
    hwloc_obj_type_t unit;  // cores, or PUs where hwloc reports no cores
    int ncores;             // units intersecting the binding
    int npkg_used;          // packages holding some of them
} topology_state_t;

static topology_state_t topology = {NULL, NULL, HWLOC_OBJ_CORE, 0, 0};
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

/* Allowed cores inside `within` (the machine or a package), and the k-th of
 * them in hwloc's order. Walked on every call rather than kept in an array:
 * pool creation is rare, and the scheduler allocates nothing from the C
 * library when given an allocator (tests/scheduler/test_sched_alloc.c). */
static int topology_count_in(const topology_state_t *s, hwloc_const_bitmap_t within)
{
    int all = hwloc_get_nbobjs_by_type(s->topo, s->unit), n = 0;
    for (int i = 0; i < all; i++) {
        hwloc_obj_t core = hwloc_get_obj_by_type(s->topo, s->unit, (unsigned)i);
        n += core && hwloc_bitmap_intersects(core->cpuset, s->allowed) &&
             hwloc_bitmap_intersects(core->cpuset, within);
    }
    return n;
}

static hwloc_obj_t topology_nth_in(const topology_state_t *s, hwloc_const_bitmap_t within, int k)
{
    int all = hwloc_get_nbobjs_by_type(s->topo, s->unit);
    for (int i = 0; i < all; i++) {
        hwloc_obj_t core = hwloc_get_obj_by_type(s->topo, s->unit, (unsigned)i);
        if (core && hwloc_bitmap_intersects(core->cpuset, s->allowed) &&
            hwloc_bitmap_intersects(core->cpuset, within) && k-- == 0)
            return core;
    }
    return NULL;
}

/* The core for worker i. SCATTER walks the packages that hold allowed cores
 * round-robin: worker i goes to the (i % npkg)-th of them, its
 * (i / npkg)-th allowed core there. */
static hwloc_obj_t topology_core_for(const topology_state_t *s, int i, weft_pin_policy_t policy)
{
    hwloc_const_bitmap_t machine = hwloc_topology_get_topology_cpuset(s->topo);
    int npkg = hwloc_get_nbobjs_by_type(s->topo, HWLOC_OBJ_PACKAGE), used = s->npkg_used;
    if (policy == WEFT_PIN_SCATTER && used > 1) {
        for (int p = 0, seen = 0; p < npkg; p++) {
            hwloc_obj_t pkg = hwloc_get_obj_by_type(s->topo, HWLOC_OBJ_PACKAGE, (unsigned)p);
            int in_pkg = topology_count_in(s, pkg->cpuset);
            if (in_pkg > 0 && seen++ == i % used) return topology_nth_in(s, pkg->cpuset, (i / used) % in_pkg);
        }
    }
    return topology_nth_in(s, machine, i % s->ncores);
}

static void topology_load(void)
{
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0) return;
    if (hwloc_topology_load(topo) != 0) {
        hwloc_topology_destroy(topo);
        return;
    }
    topology_state_t s = {topo, topology_read_binding(topo), HWLOC_OBJ_CORE, 0, 0};
    if (hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE) <= 0) s.unit = HWLOC_OBJ_PU;
    if (s.allowed) s.ncores = topology_count_in(&s, hwloc_topology_get_topology_cpuset(topo));
    int npkg = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
    for (int p = 0; p < npkg && s.ncores > 0; p++)
        s.npkg_used += topology_count_in(&s, hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, (unsigned)p)->cpuset) > 0;
    if (s.ncores == 0) {
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
    int all = 1;
    for (int i = 0; i < n; i++) {
        hwloc_obj_t core = topology_core_for(s, i, policy);
        if (!core || !topology_bind(s, threads[i], core)) all = 0;
    }
    return all;
}
