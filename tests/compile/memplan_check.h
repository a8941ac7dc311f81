/* Brute-force checks of the static memory plan (docs/execution.md §4.6),
 * independent of lib/compile's planner: reachability by depth-first search
 * over the DAG's edges, readers found by following every view_map and
 * destroy_map entry. Whitebox: reads the function's and its call states'
 * internals (link with WHITEBOX weft_compile). */
#ifndef WEFT_TESTS_MEMPLAN_CHECK_H
#define WEFT_TESTS_MEMPLAN_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "weft/weft.h"

/* reach (n x n bytes, row-major): reach[a * n + b] = 1 when a path of at
 * least one edge leads from node a to node b. edges: (from << 32 | to). */
void memplan_check_reach(uint32_t n, const uint64_t *edges, size_t ne, uint8_t *reach);

/* Checks every call state of f: any two planned values whose arena bytes
 * overlap are ordered (every node reading one of them, or a view or
 * destroyed alias of it, is a strict DAG ancestor of the other's writer),
 * and the planner's reader lists hold every such reader. Also checks that
 * the conflict matrix is exactly the brute-force relation. Returns the
 * number of violations (0: sound); *pairs_out (may be NULL): overlapping
 * pairs seen (so a test can tell sharing happened at all). */
size_t memplan_check_function(const weft_function_t *f, size_t *pairs_out);

/* Nodes of f whose output the plan puts over an input's memory (slot
 * reuse), so a test can tell reuse happened at all. */
size_t memplan_check_reuses(const weft_function_t *f);

#endif
