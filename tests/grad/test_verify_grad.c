/* Tests of weft_verify_grad (weft/grad.h): it passes correct gradients,
 * catches a wrong one (naming the input and element), reports the function's
 * own failures and bad arguments with their exact status; the seeded random
 * points; binary elementwise ops with broadcasting checked through it. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ops_check.h"

static const int64_t s23[2] = {2, 3};

static weft_var_t *sum_sq_fn(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    (void)n;
    (void)user;
    return weft_sum(g, weft_mul(g, in[0], in[0]), 0, NULL, false);
}

static void test_verify_grad_correct_gradient_passes(void **state)
{
    (void)state;
    weft_tensor_t *x = ck_random(WEFT_FLOAT64, 2, s23, -1, 1, 3);
    weft_verify_grad_result_t r;
    assert_int_equal(weft_verify_grad(sum_sq_fn, NULL, 1, &x, NULL, &r), WEFT_OK);
    assert_true(r.max_abs_err < 1e-6);
    assert_true(r.max_rel_err < 1e-6);
    assert_int_equal(r.n_evals, 12); /* two cost evaluations per element */
    assert_string_equal(r.message, "");
    weft_tensor_release(x);
}

/* BadSquare(x) = x*x with the gradient g*x (missing the factor 2). */
static weft_status_t bad_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                   weft_var_t *const *in, size_t *n_out,
                                   const weft_type_t **out)
{
    (void)g;
    (void)op;
    (void)n_in;
    *n_out = 1;
    out[0] = weft_var_type(in[0]);
    return WEFT_OK;
}

static weft_status_t bad_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                 weft_tensor_t **out, weft_kernel_ctx_t *ctx)
{
    (void)node;
    const weft_tensor_t *x = in[0];
    weft_status_t st = weft_kernel_alloc_output(ctx, &out[0], weft_tensor_dtype(x),
                                                weft_tensor_ndim(x), weft_tensor_shape(x));
    for (size_t i = 0; st == WEFT_OK && i < weft_tensor_size(x); i++) {
        double v = weft_tensor_flat_get(x, i);
        ((double *)weft_tensor_data(out[0]))[i] = v * v;
    }
    return st;
}

static weft_status_t bad_grad(weft_graph_t *g, const weft_apply_t *node, weft_var_t *const *og,
                              weft_var_t **ig)
{
    return ((ig[0] = weft_mul(g, og[0], weft_apply_input(node, 0))) ? WEFT_OK
                                                                    : weft_graph_error(g));
}

static const weft_op_class_t bad_class = {
    .size = sizeof(weft_op_class_t),
    .name = "BadSquare",
    .make_node = bad_make_node,
    .perform = bad_perform,
    .grad = bad_grad,
};

static weft_var_t *bad_fn(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    const weft_op_t *op = NULL;
    (void)n;
    (void)user;
    weft_status_t st = weft_op_create(g, &bad_class, NULL, &op);
    return st == WEFT_OK ? weft_op_call(g, op, 1, &in[0]) : NULL;
}

static void test_verify_grad_wrong_gradient_is_erange(void **state)
{
    (void)state;
    weft_tensor_t *x = ck_tensor(WEFT_FLOAT64, 2, s23, (double[]){1, 2, 3, 4, 5, 6});
    weft_verify_grad_result_t r;
    assert_int_equal(weft_verify_grad(bad_fn, NULL, 1, &x, NULL, &r), WEFT_ERANGE);
    assert_int_equal(r.worst_input, 0);
    assert_true(r.max_rel_err > 0.1);
    assert_true(fabs(r.numeric - 2 * r.symbolic) < 1e-3 * fabs(r.numeric));
    assert_non_null(strstr(r.message, "input 0 element"));
    assert_non_null(strstr(r.message, "numeric gradient"));
    weft_tensor_release(x);
}

static weft_var_t *failing_fn(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    int axis = 5;
    (void)n;
    (void)user;
    return weft_sum(g, in[0], 1, &axis, false);
}

static weft_var_t *int_fn(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    (void)n;
    (void)user;
    return weft_argmax(g, in[0], WEFT_ARGMAX_FLAT, false);
}

static void test_verify_grad_bad_arguments_and_failures(void **state)
{
    (void)state;
    weft_tensor_t *x = ck_random(WEFT_FLOAT64, 2, s23, -1, 1, 5), *nul = NULL;
    weft_tensor_t *xi = ck_tensor(WEFT_INT32, 2, s23, NULL);
    weft_verify_grad_result_t r;
    weft_verify_grad_options_t o = WEFT_VERIFY_GRAD_OPTIONS_INIT;
    assert_int_equal(weft_verify_grad(NULL, NULL, 1, &x, NULL, &r), WEFT_EINVAL);
    assert_int_equal(weft_verify_grad(sum_sq_fn, NULL, 0, &x, NULL, &r), WEFT_EINVAL);
    assert_int_equal(weft_verify_grad(sum_sq_fn, NULL, 1, NULL, NULL, &r), WEFT_EINVAL);
    assert_int_equal(weft_verify_grad(sum_sq_fn, NULL, 1, &x, NULL, NULL), WEFT_EINVAL);
    assert_int_equal(weft_verify_grad(sum_sq_fn, NULL, 1, &nul, NULL, &r), WEFT_EINVAL);
    assert_int_equal(weft_verify_grad(sum_sq_fn, NULL, 1, &xi, NULL, &r), WEFT_ETYPE);
    o.size = 8;
    assert_int_equal(weft_verify_grad(sum_sq_fn, NULL, 1, &x, &o, &r), WEFT_EINVAL);
    o.size = sizeof o;
    o.eps = -1;
    assert_int_equal(weft_verify_grad(sum_sq_fn, NULL, 1, &x, &o, &r), WEFT_EINVAL);
    assert_int_equal(weft_verify_grad(failing_fn, NULL, 1, &x, NULL, &r), WEFT_EINVAL);
    assert_non_null(strstr(r.message, "the function failed"));
    assert_non_null(strstr(r.message, "axis 5"));
    assert_int_equal(weft_verify_grad(int_fn, NULL, 1, &x, NULL, &r), WEFT_ETYPE);
    assert_non_null(strstr(r.message, "not a float tensor"));
    weft_tensor_release(x);
    weft_tensor_release(xi);
}

static void test_verify_grad_random_points_are_seeded(void **state)
{
    (void)state;
    weft_tensor_t *a = ck_random(WEFT_FLOAT32, 2, s23, 2, 3, 11);
    weft_tensor_t *b = ck_random(WEFT_FLOAT32, 2, s23, 2, 3, 11);
    weft_tensor_t *c = ck_random(WEFT_FLOAT32, 2, s23, 2, 3, 12), *d = NULL;
    bool same = false;
    for (size_t i = 0; i < 6; i++) {
        double v = weft_tensor_flat_get(a, i);
        assert_true(v >= 2 && v < 3);
        assert_true(v == weft_tensor_flat_get(b, i));
        same |= v == weft_tensor_flat_get(c, i);
    }
    assert_false(same);
    assert_int_equal(weft_verify_grad_random(WEFT_INT32, 2, s23, 0, 1, 1, &d), WEFT_EINVAL);
    assert_string_equal(weft_tensor_last_error(),
                        "weft_verify_grad_random: dtype int32 is not float32 or float64");
    assert_int_equal(weft_verify_grad_random(WEFT_FLOAT64, 2, s23, 1, 0, 1, &d), WEFT_EINVAL);
    assert_string_equal(weft_tensor_last_error(),
                        "weft_verify_grad_random: range [1, 0) is empty");
    assert_int_equal(weft_verify_grad_random(WEFT_FLOAT64, 2, s23, 0, 1, 1, NULL), WEFT_EINVAL);
    assert_string_equal(weft_tensor_last_error(), "weft_verify_grad_random: NULL out");
    assert_null(d);
    weft_tensor_release(a);
    weft_tensor_release(b);
    weft_tensor_release(c);
}

/* ---- another engineer's ops through verify_grad -------------------------------- */

/* The elementwise kinds' own finite-difference checks live in
 * tests/ops/test_elemwise_grad.c; here binary ops with a broadcast input
 * check that verify_grad's projection and weft_grad's accumulation handle
 * gradients summed back over broadcast axes. */
typedef struct ecase {
    weft_elemwise_kind_t kind;
    double lo, hi; /* point range (away from kinks and domain edges) */
} ecase_t;

static weft_var_t *elem_fn(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    const ecase_t *c = user;
    return weft_elemwise(g, c->kind, n, in);
}

static void test_verify_grad_binary_elemwise_with_broadcast(void **state)
{
    (void)state;
    const ecase_t cases[] = {
        {WEFT_ELEMWISE_MUL, -2, 2},
        {WEFT_ELEMWISE_DIV, 0.5, 2},
        {WEFT_ELEMWISE_POW, 0.5, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* a (2,3) with b (3,): b broadcasts over the rows. */
        weft_tensor_t *pts[2] = {ck_random(WEFT_FLOAT64, 2, s23, cases[i].lo, cases[i].hi, 40 + i),
                                 ck_random(WEFT_FLOAT64, 1, (int64_t[]){3}, cases[i].lo,
                                           cases[i].hi, 60 + i)};
        ck_verify(elem_fn, (void *)&cases[i], 2, pts);
        weft_tensor_release(pts[0]);
        weft_tensor_release(pts[1]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verify_grad_correct_gradient_passes),
        cmocka_unit_test(test_verify_grad_wrong_gradient_is_erange),
        cmocka_unit_test(test_verify_grad_bad_arguments_and_failures),
        cmocka_unit_test(test_verify_grad_random_points_are_seeded),
        cmocka_unit_test(test_verify_grad_binary_elemwise_with_broadcast),
    };
    return cmocka_run_group_tests_name("verify_grad", tests, NULL, NULL);
}
