/* The symbolic-shape canonicalizations (lib/rewrite/shape_rewrite.c,
 * docs/shapes.md §3): each applied alone to an fgraph, with the exact
 * expression after and the count of fires (0 where it must decline), the
 * rewritten graph giving the values of the original; and the full fast_run
 * database reaching them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "rw_fixture.h"
#include "weft/rewrite_db.h"

#define U WEFT_DIM_UNKNOWN

static const weft_type_t *type_of(rfx_t *f, weft_dtype_t dt, int nd, const int64_t *shape)
{
    const weft_type_t *t;
    assert_int_equal(weft_type_tensor(f->g, dt, nd, shape, &t), WEFT_OK);
    return t;
}

static weft_var_t *ivec(rfx_t *f, int n, const int64_t *v)
{
    int64_t len = n;
    return weft_constant_create(f->g, type_of(f, WEFT_INT64, 1, &len), v,
                                (size_t)n * sizeof *v);
}

/* Applies the built-in rewrite `name` to an fgraph of outs; checks its fires
 * and the expression after; evaluates before and after at vals. */
static void check(rfx_t *f, const char *name, size_t n_in, weft_var_t *const *in,
                  weft_tensor_t *const *vals, size_t n_out, weft_var_t *const *outs,
                  uint64_t fires, const char *want)
{
    weft_tensor_t *before[4] = {NULL}, *after[4] = {NULL};
    rfx_eval(f, n_in, in, vals, n_out, outs, before);
    weft_fgraph_t *fg = rfx_fgraph(f, n_in, in, n_out, outs, false);
    weft_rewriter_t *rw;
    assert_int_equal(weft_rewriter_builtin_create(name, &rw), WEFT_OK);
    assert_int_equal(rfx_apply_count(rw, fg, name), fires);
    char buf[1024];
    rfx_fg_expr(fg, buf, sizeof buf);
    assert_string_equal(buf, want);
    rfx_eval_fgraph(f, fg, n_in, in, vals, after);
    for (size_t i = 0; i < n_out; i++) rfx_assert_close(after[i], before[i], 0, 0);
    rfx_release(n_out, before);
    rfx_release(n_out, after);
    weft_rewriter_release(rw);
    weft_fgraph_destroy(fg);
}

static void test_shape_static(void **state)
{
    rfx_t *f = *state;
    int64_t sx[2] = {3, U}, sy[2] = {3, 4};
    weft_var_t *x = rfx_var(f, type_of(f, WEFT_FLOAT64, 2, sx), "x");
    weft_var_t *y = rfx_var(f, type_of(f, WEFT_INT32, 2, sy), "y");
    weft_var_t *in[2] = {x, y};
    weft_tensor_t *vals[2];
    int64_t rx[2] = {3, 2};
    assert_int_equal(weft_tensor_zeros(WEFT_FLOAT64, 2, rx, &vals[0]), WEFT_OK);
    assert_int_equal(weft_tensor_zeros(WEFT_INT32, 2, sy, &vals[1]), WEFT_OK);
    weft_var_t *outs[4] = {weft_shape_i(f->g, x, 0), weft_shape_i(f->g, x, 1), weft_shape(f->g, y),
                           weft_shape(f->g, x)};
    check(f, "local_shape_static", 2, in, vals, 4, outs, 2,
          "3; Shape_i{i=1}(x); [3, 4]; Shape(x)");
    rfx_release(2, vals);
}

static void test_shape_to_shape_i(void **state)
{
    rfx_t *f = *state;
    int64_t sx[3] = {U, U, U};
    weft_var_t *x = rfx_var(f, type_of(f, WEFT_FLOAT32, 3, sx), "x");
    weft_tensor_t *xv;
    int64_t rx[3] = {2, 5, 1};
    assert_int_equal(weft_tensor_zeros(WEFT_FLOAT32, 3, rx, &xv), WEFT_OK);
    weft_var_t *s = weft_shape(f->g, x);
    weft_slice_t at[1] = {WEFT_SLICE_AT(-2)}, sl[1] = {WEFT_SLICE(0, 2, 1)};
    weft_var_t *outs[2] = {weft_subtensor(f->g, s, 1, at), weft_subtensor(f->g, s, 1, sl)};
    check(f, "local_shape_to_shape_i", 1, &x, &xv, 2, outs, 1,
          "Shape_i{i=1}(x); Subtensor{idx=[0:2]}(Shape(x))");
    weft_tensor_release(xv);
}

static void test_constant_shape(void **state)
{
    rfx_t *f = *state;
    int64_t sx[2] = {U, U}, sv[1] = {U};
    weft_var_t *x = rfx_var(f, type_of(f, WEFT_FLOAT64, 2, sx), "x");
    weft_var_t *v = rfx_var(f, type_of(f, WEFT_FLOAT64, 1, sv), "v");
    weft_var_t *n = rfx_var(f, type_of(f, WEFT_INT64, 0, NULL), "n");
    weft_var_t *in[3] = {x, v, n};
    weft_tensor_t *vals[3];
    int64_t rx[2] = {2, 3}, rv[1] = {3};
    assert_int_equal(weft_tensor_zeros(WEFT_FLOAT64, 2, rx, &vals[0]), WEFT_OK);
    assert_int_equal(weft_tensor_full(WEFT_FLOAT64, 1, rv, 1.5, &vals[1]), WEFT_OK);
    assert_int_equal(weft_tensor_full(WEFT_INT64, 0, NULL, 3, &vals[2]), WEFT_OK);
    weft_var_t *two = weft_constant_scalar(f->g, WEFT_INT64, 2);
    weft_var_t *c23[2] = {two, weft_constant_scalar(f->g, WEFT_INT8, 3)}, *cn[2] = {two, n};
    weft_var_t *outs[4] = {weft_reshape_sym(f->g, x, ivec(f, 2, (int64_t[]){-1, 2})),
                           weft_reshape_sym(f->g, x, weft_shape(f->g, weft_transpose(f->g, x))),
                           weft_alloc_sym(f->g, v, 2, c23), weft_alloc_sym(f->g, v, 2, cn)};
    check(f, "local_constant_shape", 3, in, vals, 4, outs, 2,
          "Reshape{shape=(-1,2)}(x); Reshape{shape=input 1}(x, Shape(DimShuffle{order=(1,0)}(x)));"
          " Alloc{shape=(2,3)}(v); Alloc{shape=inputs 1..2}(v, 2, n)");
    rfx_release(3, vals);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_shape_static, rfx_setup, rfx_teardown),
        cmocka_unit_test_setup_teardown(test_shape_to_shape_i, rfx_setup, rfx_teardown),
        cmocka_unit_test_setup_teardown(test_constant_shape, rfx_setup, rfx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
