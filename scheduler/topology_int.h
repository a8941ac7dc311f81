/* Thread pinning through hwloc (internal); implementation in
 * topology_hwloc.c, the only file that includes hwloc.h. */
#ifndef WEFT_SCHED_TOPOLOGY_INT_H
#define WEFT_SCHED_TOPOLOGY_INT_H

#include <pthread.h>

#include "weft/sched.h"

/* Cores in this process's allowed cpuset; 1 if the topology is unreadable. */
int weft__topology_core_count(void);

/* Bind each of threads[0..n) per policy. Returns 1 if all were bound, 0
 * otherwise (policy NONE, unreadable topology, binding refused): the threads
 * then simply run unpinned. Never fails otherwise. */
int weft__topology_pin_threads(const pthread_t *threads, int n, weft_pin_policy_t policy);

#endif /* WEFT_SCHED_TOPOLOGY_INT_H */
