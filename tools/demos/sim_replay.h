/* sim_replay: the event replay behind cholesky_mpi_sim (docs/distributed.md
 * §9). A task DAG whose tasks each run on one rank, one task at a time per
 * rank (one worker), replayed with given task costs:
 *
 * - a rank starts, whenever it is idle, its ready task with the longest
 *   path of cost below it (its bottom level over the whole DAG, a message
 *   counting latency + bytes / bw), ties to the smallest index: the local
 *   functions' critical-path-first order (docs/distributed.md §3.5); the
 *   task list is in the distributed function's global order, producers
 *   before consumers;
 * - an edge between two ranks is a message: when its producer (the sender's
 *   MpiSend task) ends, it leaves on the sender's link once the link is free
 *   (one message at a time per sender), takes bytes / bw there, and arrives
 *   `lat` later;
 * - ranks_per_host consecutive ranks share a host of `cores` cores: while k
 *   ranks of a host run a task, each progresses at min(1, cores / k) of its
 *   cost per second (processor sharing, the scheduler's fair share).
 *
 * Ownership: sim_replay borrows its arguments. Errors: it returns a negative
 * time when memory runs out or the DAG has a cycle. */
#ifndef WEFT_DEMOS_SIM_REPLAY_H
#define WEFT_DEMOS_SIM_REPLAY_H

#include <stdint.h>

typedef struct sim_task {
    uint8_t kind;  /* index into the cost table */
    int32_t rank;
    int32_t in[3]; /* producer tasks, -1: none; another rank's: a message */
    double bytes;  /* a message's size, on its producer */
} sim_task_t;

typedef struct sim_model {
    int ranks, ranks_per_host, cores;
    double lat, bw;     /* seconds, bytes per second */
    int n_kinds;
    const double *cost; /* seconds: [rank * n_kinds + kind] when per_rank, else [kind] */
    int per_rank;
} sim_model_t;

/* The makespan in seconds of tasks[0..n) under m (tasks in index order). */
double sim_replay(const sim_task_t *tasks, int32_t n, const sim_model_t *m);

#endif /* WEFT_DEMOS_SIM_REPLAY_H */
