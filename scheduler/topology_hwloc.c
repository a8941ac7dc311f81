/* hwloc-specific code: core count and worker pinning. The topology is loaded
 * once per process (it takes milliseconds) and then only read, which hwloc
 * allows from several threads at once. Every failure degrades to "unpinned"
 * (reported by weft_pool_is_pinned), never to an error. */
#define _POSIX_C_SOURCE 200809L // pthread_once

#include "topology_int.h"

#include <hwloc.h>
#include <stdlib.h>

static hwloc_topology_t topology;  // NULL if it could not be read
static int topology_cores = 1;
static pthread_once_t topology_once = PTHREAD_ONCE_INIT;

static void topology_load(void)
{
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0) return;
    if (hwloc_topology_load(topo) != 0) {
        hwloc_topology_destroy(topo);
        return;
    }
    int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    if (n <= 0) n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    if (n > 0) topology_cores = n;
    topology = topo; /* kept for the life of the process */
}

static hwloc_topology_t topology_get(void)
{
    pthread_once(&topology_once, topology_load);
    return topology;
}

int weft__topology_core_count(void)
{
    topology_get();
    return topology_cores;
}

/* The core for worker i. SCATTER walks packages round-robin: worker i goes to
 * package i % npkg, its (i / npkg)-th core there. */
static hwloc_obj_t topology_core_for(hwloc_topology_t topo, int i, weft_pin_policy_t policy)
{
    int ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    if (ncores <= 0) return NULL;
    int npkg = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
    if (policy == WEFT_PIN_COMPACT || npkg <= 1)
        return hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)(i % ncores));
    hwloc_obj_t pkg = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, (unsigned)(i % npkg));
    int in_pkg = hwloc_get_nbobjs_inside_cpuset_by_type(topo, pkg->cpuset, HWLOC_OBJ_CORE);
    if (in_pkg <= 0) return hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)(i % ncores));
    return hwloc_get_obj_inside_cpuset_by_type(topo, pkg->cpuset, HWLOC_OBJ_CORE,
                                               (unsigned)((i / npkg) % in_pkg));
}

int weft__topology_pin_threads(const pthread_t *threads, int n, weft_pin_policy_t policy)
{
    if (policy == WEFT_PIN_NONE || getenv("WEFT_NO_PIN")) return 0;
    hwloc_topology_t topo = topology_get();
    if (!topo) return 0;
    int all = 1;
    for (int i = 0; i < n; i++) {
        hwloc_obj_t core = topology_core_for(topo, i, policy);
        if (!core || hwloc_set_thread_cpubind(topo, threads[i], core->cpuset, HWLOC_CPUBIND_THREAD))
            all = 0;
    }
    return all;
}
