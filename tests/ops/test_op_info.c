/* Tests of weft/op_info.h: DimShuffle order, reduction parameters and
 * SumAxes axes read back exactly as built, and the documented bad-input
 * statuses (NULL arguments, an op of another class). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "weft/elemwise.h"
#include "weft/grad.h"
#include "weft/graph.h"
#include "weft/op_info.h"
#include "weft/reduce.h"
#include "weft/shape_ops.h"

static int setup(void **state)
{
    weft_graph_t *g;
    if (weft_graph_create(NULL, &g) != WEFT_OK) return -1;
    *state = g;
    return 0;
}

static int teardown(void **state)
{
    weft_graph_destroy(*state);
    return 0;
}

static weft_var_t *var(weft_graph_t *g, int nd, const int64_t *shape)
{
    const weft_type_t *t;
    weft_var_t *v;
    assert_int_equal(weft_type_tensor(g, WEFT_FLOAT64, nd, shape, &t), WEFT_OK);
    assert_non_null(v = weft_var_create(g, t, NULL));
    return v;
}

static const weft_op_t *op_of(const weft_var_t *v)
{
    return weft_apply_op(weft_var_owner(v));
}

static void test_op_info_dimshuffle_order_read_back(void **state)
{
    weft_graph_t *g = *state;
    int64_t s[] = {3, 1, 4};
    weft_var_t *x = var(g, 3, s), *y;
    const int order[] = {2, WEFT_DIMSHUFFLE_NEW, 0}; /* axis 1 (length 1) dropped */
    assert_non_null(y = weft_dimshuffle(g, x, 3, order));
    int got[WEFT_MAX_NDIM], n = -1;
    assert_int_equal(weft_dimshuffle_op_info(op_of(y), got, &n), WEFT_OK);
    assert_int_equal(n, 3);
    assert_int_equal(got[0], 2);
    assert_int_equal(got[1], WEFT_DIMSHUFFLE_NEW);
    assert_int_equal(got[2], 0);
}

static void test_op_info_dimshuffle_bad_input_statuses(void **state)
{
    weft_graph_t *g = *state;
    int64_t s[] = {3};
    weft_var_t *x = var(g, 1, s), *y, *e;
    const int order[] = {WEFT_DIMSHUFFLE_NEW, 0};
    assert_non_null(y = weft_dimshuffle(g, x, 2, order));
    assert_non_null(e = weft_exp(g, x));
    int got[WEFT_MAX_NDIM] = {7}, n = 7;
    assert_int_equal(weft_dimshuffle_op_info(NULL, got, &n), WEFT_EINVAL);
    assert_int_equal(weft_dimshuffle_op_info(op_of(y), NULL, &n), WEFT_EINVAL);
    assert_int_equal(weft_dimshuffle_op_info(op_of(y), got, NULL), WEFT_EINVAL);
    assert_int_equal(weft_dimshuffle_op_info(op_of(e), got, &n), WEFT_ETYPE);
    assert_int_equal(n, 7); /* untouched on error */
    assert_int_equal(got[0], 7);
}

static void test_op_info_reduce_kind_axes_keepdims(void **state)
{
    weft_graph_t *g = *state;
    int64_t s[] = {2, 3, 4};
    weft_var_t *x = var(g, 3, s), *y, *m;
    const int axes[] = {-1, 0}; /* normalized and sorted: 0, 2 */
    assert_non_null(y = weft_sum(g, x, 2, axes, true));
    assert_non_null(m = weft_mean(g, x, 0, NULL, false)); /* every axis */
    weft_reduce_kind_t kind = WEFT_REDUCE_PROD;
    int got[WEFT_MAX_NDIM], n = -1;
    bool keep = false;
    assert_int_equal(weft_reduce_op_info(op_of(y), &kind, got, &n, &keep), WEFT_OK);
    assert_int_equal(kind, WEFT_REDUCE_SUM);
    assert_int_equal(n, 2);
    assert_int_equal(got[0], 0);
    assert_int_equal(got[1], 2);
    assert_true(keep);
    assert_int_equal(weft_reduce_op_info(op_of(m), &kind, got, &n, &keep), WEFT_OK);
    assert_int_equal(kind, WEFT_REDUCE_MEAN);
    assert_int_equal(n, 3);
    assert_int_equal(got[0], 0);
    assert_int_equal(got[2], 2);
    assert_false(keep);
}

static void test_op_info_reduce_bad_input_statuses(void **state)
{
    weft_graph_t *g = *state;
    int64_t s[] = {2, 3};
    weft_var_t *x = var(g, 2, s), *y, *a;
    assert_non_null(y = weft_sum(g, x, 0, NULL, false));
    assert_non_null(a = weft_argmax(g, x, 1, false));
    weft_reduce_kind_t kind = WEFT_REDUCE_PROD;
    int got[WEFT_MAX_NDIM], n = 9;
    bool keep = true;
    const weft_op_t *op = op_of(y);
    assert_int_equal(weft_reduce_op_info(NULL, &kind, got, &n, &keep), WEFT_EINVAL);
    assert_int_equal(weft_reduce_op_info(op, NULL, got, &n, &keep), WEFT_EINVAL);
    assert_int_equal(weft_reduce_op_info(op, &kind, NULL, &n, &keep), WEFT_EINVAL);
    assert_int_equal(weft_reduce_op_info(op, &kind, got, NULL, &keep), WEFT_EINVAL);
    assert_int_equal(weft_reduce_op_info(op, &kind, got, &n, NULL), WEFT_EINVAL);
    /* Argmax shares the props layout but is not a reduction here */
    assert_int_equal(weft_reduce_op_info(op_of(a), &kind, got, &n, &keep), WEFT_ETYPE);
    assert_int_equal(kind, WEFT_REDUCE_PROD);
    assert_int_equal(n, 9);
    assert_true(keep);
}

/* The gradient of x + b with b of shape (1, 4) sums over axis 0: SumAxes. */
static void test_op_info_sum_axes_from_broadcast_grad(void **state)
{
    weft_graph_t *g = *state;
    int64_t sx[] = {3, 4}, sb[] = {1, 4};
    weft_var_t *x = var(g, 2, sx), *b = var(g, 2, sb), *y, *c, *gb;
    assert_non_null(y = weft_add(g, x, b));
    assert_non_null(c = weft_sum(g, y, 0, NULL, false));
    assert_non_null(weft_grads(g, c, 1, &b, NULL, &gb));
    const weft_apply_t *a = weft_var_owner(gb);
    while (a && strcmp(weft_op_name(weft_apply_op(a)), "SumAxes") != 0)
        a = weft_apply_n_inputs(a) ? weft_var_owner(weft_apply_input(a, 0)) : NULL;
    assert_non_null(a);
    int got[WEFT_MAX_NDIM], n = -1;
    assert_int_equal(weft_sum_axes_op_info(weft_apply_op(a), got, &n), WEFT_OK);
    assert_int_equal(n, 1);
    assert_int_equal(got[0], 0);
    assert_int_equal(weft_sum_axes_op_info(NULL, got, &n), WEFT_EINVAL);
    assert_int_equal(weft_sum_axes_op_info(weft_apply_op(a), NULL, &n), WEFT_EINVAL);
    assert_int_equal(weft_sum_axes_op_info(weft_apply_op(a), got, NULL), WEFT_EINVAL);
    assert_int_equal(weft_sum_axes_op_info(op_of(y), got, &n), WEFT_ETYPE);
    assert_int_equal(n, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_op_info_dimshuffle_order_read_back),
        cmocka_unit_test(test_op_info_dimshuffle_bad_input_statuses),
        cmocka_unit_test(test_op_info_reduce_kind_axes_keepdims),
        cmocka_unit_test(test_op_info_reduce_bad_input_statuses),
        cmocka_unit_test(test_op_info_sum_axes_from_broadcast_grad),
    };
    return cmocka_run_group_tests_name("op_info", tests, setup, teardown);
}
