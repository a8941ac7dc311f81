/* Allocator hook, and exactly which weft objects use it.
 *
 * These objects take an optional allocator at creation (NULL: the C
 * library, weft_allocator_default). Each takes every byte it owns from that
 * allocator, its scratch included, and frees every block through it with
 * the size the block was allocated with:
 * - a graph context (weft_graph_create; weft_graph_allocator returns it):
 *   the context and everything built in it - types, variables, constants
 *   and their data, ops and their props copies, apply nodes, names, clone
 *   maps - and the scratch of the graph functions (toposort, cloning,
 *   weft_graph_dprint; weft_graph_equal_computations uses the allocator of
 *   xs[0]'s context). Also every FunctionGraph created on the context, with
 *   its indexes, client lists, history and traversal stacks, and the
 *   features weft itself attaches to those fgraphs: the Supervisor of
 *   declared inputs (weft_fgraph_create), the DestroyHandler that
 *   weft_dh_attach creates, and the MergeFeature and import tracker of
 *   rewrite passes. Nodes that rewrites, weft_grad, OpFromGraph expansion
 *   or graph loading build in a context are part of it.
 * - a DestroyHandler (weft_dh_create) or Supervisor (weft_supervisor_create)
 *   the caller creates: the allocator given there, whichever fgraph it
 *   serves; the clones weft_fgraph_clone makes keep it.
 * - a task DAG (weft_dag_create): the DAG, its node, name and edge tables,
 *   its successor arrays, and the run objects created on it
 *   (weft_dag_run_create) with their profile records.
 * - a pool (weft_pool_options_t.allocator): the pool, its workers, their
 *   deques (grown on worker threads: the allocator must be thread-safe) and
 *   its submission queue.
 *
 * Everything else uses the C library (malloc, calloc, realloc,
 * aligned_alloc, free) and takes no allocator:
 * - tensors and their buffers (weft/tensor.h), kernel outputs and scratch;
 * - compiled functions (weft/function.h): the function, the graph context it
 *   copies the graph into (with its FunctionGraph, DestroyHandler and
 *   Supervisor), its lowered nodes, call states, buffer pool and profiles,
 *   and the pools it starts, the process-wide default pool included;
 * - rewriters, rewrite databases (the default one included), rewrite
 *   statistics and patterns, and the scratch of rewrite passes;
 * - the scratch of weft_grad, weft_eval and the JSON graph format
 *   (weft/graph_io.h: the parsed document and the weft_graph_io_t arrays
 *   it returns), .npy files, and weft_verify_grad (its graph context too);
 * - OpFromGraph definitions, interned process-wide (inner graph context,
 *   plans, run states), and the scratch of their import and gradients;
 * - the op class registry (weft_op_class_register).
 * What an op's props own is the op author's (props_fini); weft's op
 * classes own nothing there. Threads, hwloc's topology, stdio and the C
 * library's own internal buffers (qsort's, for large sorts) are the
 * system's. No global setting replaces the C library in the list above. */
#ifndef WEFT_ALLOC_H
#define WEFT_ALLOC_H

#include <stddef.h>

#include "weft/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_allocator {
    /* realloc semantics: (NULL, 0 -> n) allocates, (p, n -> 0) frees and
     * returns NULL, otherwise resizes. Must be thread-safe if the objects
     * using it are used from several threads. */
    void *(*resize)(void *user, void *ptr, size_t old_size, size_t new_size);
    void *user;
} weft_allocator_t;

/* The default allocator (malloc/realloc/free). Returns a static object. */
WEFT_API const weft_allocator_t *weft_allocator_default(void);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_ALLOC_H */
