/* The destroy tests' shared fixture (see destroy_fixture.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "destroy/destroy_fixture.h"

int dt_fixture_setup(dt_fixture_t **out)
{
    dt_fixture_t *f = calloc(1, sizeof *f);
    *out = f;
    if (!f || weft_graph_create(NULL, &f->g) != WEFT_OK) return -1;
    if (dt_ops_create(f->g, &f->ops) != WEFT_OK) return -1;
    const weft_type_t *t;
    if (weft_type_tensor(f->g, WEFT_FLOAT64, 1, NULL, &t) != WEFT_OK) return -1;
    if (!(f->x = weft_var_create(f->g, t, "x"))) return -1;
    if (!(f->y = weft_var_create(f->g, t, "y"))) return -1;
    if (!(f->z = weft_var_create(f->g, t, "z"))) return -1;
    return 0;
}

void dt_fixture_teardown(dt_fixture_t *f)
{
    if (!f) return;
    weft_fgraph_destroy(f->fg);
    weft_graph_destroy(f->g);
    free(f);
}

weft_var_t *dt_ap1(dt_fixture_t *f, const weft_op_t *op, weft_var_t *a)
{
    weft_var_t *out = NULL, *in[1] = {a};
    assert_non_null(out = weft_op_call(f->g, op, 1, in));
    return out;
}

weft_var_t *dt_ap2(dt_fixture_t *f, const weft_op_t *op, weft_var_t *a, weft_var_t *b)
{
    weft_var_t *out = NULL, *in[2] = {a, b};
    assert_non_null(out = weft_op_call(f->g, op, 2, in));
    return out;
}
