/* Test ops of docs/destroy.md §8.2 shared by the destroy tests: pure sig / dot /
 * add, the view tv, the in-place aip (AddInPlace) with its tolerate_same and
 * tolerate_aliased variants, the two-output mip0 / mip1 / mip01, and two ops
 * with malformed maps (rule D0). Every op maps float64 vectors to outputs of
 * input 0's type; none has a perform hook (graph-level tests only). */
#ifndef WEFT_TESTS_DESTROY_TEST_OPS_H
#define WEFT_TESTS_DESTROY_TEST_OPS_H

#include <stdbool.h>
#include <stddef.h>

#include "weft/destroy.h"
#include "weft/fgraph.h"
#include "weft/graph.h"
#include "weft/op.h"

typedef struct dt_ops {
    const weft_op_t *sig, *dot, *add, *tv, *aip, *aip_same, *aip_aliased;
    const weft_op_t *mip0, *mip1, *mip01, *bad_destroy, *bad_view, *tv2;
} dt_ops_t;

/* Creates every op in g. Returns WEFT_OK or the first failure. */
weft_status_t dt_ops_create(weft_graph_t *g, dt_ops_t *ops);

#endif
