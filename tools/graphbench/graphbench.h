/* weft-graph-bench: shared context and step table.
 *
 * A benchmark run builds, per size n, one context (gb_ctx_t) holding a seeded
 * random DAG of unary and binary ops (each node takes 1-2 inputs drawn from
 * the previous 1000 variables) and, on demand, a FunctionGraph cloned from
 * it. Steps are entries of step tables; each prints one line
 *   graphbench step=STEP n=NODES ns_per_node=X
 * Adding steps (e.g. the DestroyHandler's dh_attach / dh_validate /
 * dh_toposort) means writing a new source file in this folder that defines a
 * gb_step_t table and listing it in gb_step_tables (main.c) and in
 * CMakeLists.txt; steps_destroy.c (gb_destroy_steps) is written that way and
 * is enabled by those two lines. Steps get their prerequisites with
 * gb_need_graph / gb_need_fgraph (built untimed when an earlier step did not)
 * or keep their own graph; each step's timing is process CPU time
 * (gb_now_ns). */
#ifndef WEFT_GRAPHBENCH_H
#define WEFT_GRAPHBENCH_H

#include <stddef.h>
#include <stdint.h>

#include "weft/feature.h"
#include "weft/fgraph.h"
#include "weft/graph.h"
#include "weft/op.h"
#include "weft/type.h"

typedef struct gb_ctx {
    size_t n;      /* apply nodes in the random DAG */
    uint64_t seed; /* per-run seed (same graph for every step of one size) */
    uint64_t rng;  /* generator state for the steps' own random choices */
    weft_graph_t *g;
    const weft_type_t *type;
    const weft_op_t *unary[2], *binary[2];
    weft_var_t **vars; /* the n node outputs, in creation order */
    weft_var_t *inputs[4];
    weft_var_t **outputs; /* variables no node uses */
    size_t n_outputs;
    weft_fgraph_t *fg; /* cloned FunctionGraph over the DAG */
} gb_ctx_t;

/* A step returns 0 and sets *ns (the timed nanoseconds), or prints an error
 * to stderr and returns nonzero. */
typedef struct gb_step {
    const char *name;
    int (*run)(gb_ctx_t *c, double *ns);
} gb_step_t;

typedef struct gb_step_table {
    const gb_step_t *steps;
    size_t n;
} gb_step_table_t;

/* Graph core steps: build, fgraph, toposort, replace (steps_graph.c). */
extern const gb_step_table_t gb_graph_steps;

/* Process CPU time in nanoseconds (the steps are single-threaded). */
double gb_now_ns(void);
uint64_t gb_rand(gb_ctx_t *c);

/* Prerequisites (untimed when missing): the DAG, then the fgraph. */
int gb_need_graph(gb_ctx_t *c);
int gb_need_fgraph(gb_ctx_t *c);
/* Frees everything the context holds (the fgraph, the graph context). */
void gb_ctx_fini(gb_ctx_t *c);

/* Cold caches (the default): before each timed region, gb_flush_caches()
 * streams through a buffer larger than the last-level cache, so every size
 * starts from memory under the same conditions. With --warm it does nothing:
 * then a 10^4-node graph stays cache-resident between repetitions while
 * larger ones cannot, which measures the cache hierarchy (up to ~2x per node
 * from 10^4 to 10^5) rather than the algorithm's growth. */
extern int gb_cold;
void gb_flush_caches(void);

#endif /* WEFT_GRAPHBENCH_H */
