/* A graph with a cycle, made through the public API: the way a cycle can
 * still reach the IR after the FunctionGraph edits refuse cycles
 * (docs/fgraph.md §3), for the tests of what meets one downstream
 * (check_integrity, toposort, grad, graph_io_save, function_compile). */
#ifndef WEFT_TESTS_SHARED_CYCLE_H
#define WEFT_TESTS_SHARED_CYCLE_H

#include "weft/fgraph.h"
#include "weft/graph.h"

/* Builds out = b(u(x), v(v(y))) (u, v unary, b binary ops accepting x's and
 * y's types; x and y root variables of g), then two FunctionGraphs on
 * inputs {x, y} and output out, sharing its nodes (clone=false): through the
 * second, u's node reads the outer v instead of x; through the first, whose
 * ranks do not know that edge, the inner v's node reads u's output instead of
 * y. The cycle: u -> outer v -> inner v -> u (each reading the next). Returns
 * out, or NULL if a step failed. *first and *second receive the fgraphs (the
 * first's indexes miss the second's edit) when not NULL, else they are
 * destroyed; the nodes keep the edits either way. */
weft_var_t *shared_cycle_build(weft_graph_t *g, const weft_op_t *u, const weft_op_t *v,
                               const weft_op_t *b, weft_var_t *x, weft_var_t *y,
                               weft_fgraph_t **first, weft_fgraph_t **second);

/* msg with the creation sites cut out, for comparing whole messages:
 * "apply 3 (Exp, built at f.c:12)" -> "apply 3 (Exp)", ", created at f.c:9)" ->
 * ")". Returns a static buffer (overwritten by the next call). */
const char *msg_without_sites(const char *msg);

#endif /* WEFT_TESTS_SHARED_CYCLE_H */
