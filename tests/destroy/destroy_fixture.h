/* The fixture shared by the destroy tests: a context holding the test ops
 * (destroy_test_ops.h) and the unprotected root inputs x, y, z of
 * docs/destroy.md §8.2, plus the fgraph (and DestroyHandler) a test builds,
 * which teardown frees. Helpers apply an op and assert it built. */
#ifndef WEFT_TESTS_DESTROY_FIXTURE_H
#define WEFT_TESTS_DESTROY_FIXTURE_H

#include "destroy/destroy_test_ops.h"

typedef struct dt_fixture {
    weft_graph_t *g;
    dt_ops_t ops;
    weft_var_t *x, *y, *z;
    weft_fgraph_t *fg;  /* built by the test; destroyed by teardown */
    weft_feature_t *dh; /* borrowed from fg when a test records it */
} dt_fixture_t;

/* cmocka setup / teardown: 0 on success, -1 when the fixture cannot be made. */
int dt_fixture_setup(dt_fixture_t **out);
void dt_fixture_teardown(dt_fixture_t *f);

/* op applied to a (and b), asserting WEFT_OK; the default output. */
weft_var_t *dt_ap1(dt_fixture_t *f, const weft_op_t *op, weft_var_t *a);
weft_var_t *dt_ap2(dt_fixture_t *f, const weft_op_t *op, weft_var_t *a, weft_var_t *b);

#endif
