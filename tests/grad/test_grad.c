/* Tests of weft_grad (weft/grad.h): exact gradients of small graphs,
 * accumulation over several uses, gradients with respect to intermediate
 * variables and the cost itself, the cost_grad seed, disconnected inputs and
 * non-differentiable ops (errors naming the variable / node, or zeros when
 * asked), hooks returning bad types, and argument errors. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ops_check.h"
#include "support/shared_cycle.h"

typedef struct fx {
    weft_graph_t *g;
    weft_var_t *x, *y; /* float64[3] inputs named "x", "y" */
    weft_tensor_t *xv, *yv;
} fx_t;

static const int64_t s3[1] = {3};

static int setup(void **state)
{
    static fx_t f;
    assert_int_equal(weft_graph_create(NULL, &f.g), WEFT_OK);
    f.x = ck_var(f.g, WEFT_FLOAT64, 1, s3);
    f.y = ck_var(f.g, WEFT_FLOAT64, 1, s3);
    weft_var_set_name(f.x, "x");
    weft_var_set_name(f.y, "y");
    f.xv = ck_tensor(WEFT_FLOAT64, 1, s3, (double[]){1, 2, 3});
    f.yv = ck_tensor(WEFT_FLOAT64, 1, s3, (double[]){-1, 0.5, 4});
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fx_t *f = *state;
    weft_tensor_release(f->xv);
    weft_tensor_release(f->yv);
    weft_graph_destroy(f->g);
    return 0;
}

/* Evaluates v with x, y bound. */
static weft_tensor_t *eval_xy(fx_t *f, weft_var_t *v)
{
    weft_var_t *in[2] = {f->x, f->y};
    weft_tensor_t *vals[2] = {f->xv, f->yv}, *r = NULL;
    assert_int_equal(ck_eval(f->g, 2, in, vals, v, &r), WEFT_OK);
    return r;
}

static weft_var_t *sum_all(weft_graph_t *g, weft_var_t *v)
{
    weft_var_t *s = NULL;
    assert_non_null(s = weft_sum(g, v, 0, NULL, false));
    return s;
}

/* cost = sum(x*x*y): d/dx = 2xy, d/dy = x^2; x is used twice (accumulation). */
static void test_grad_product_rule_and_accumulation(void **state)
{
    fx_t *f = *state;
    weft_var_t *xx = NULL, *xxy = NULL, *g[2] = {NULL, NULL};
    assert_non_null(xx = weft_mul(f->g, f->x, f->x));
    assert_non_null(xxy = weft_mul(f->g, xx, f->y));
    weft_var_t *cost = sum_all(f->g, xxy), *wrt[2] = {f->x, f->y};
    assert_non_null(weft_grads(f->g, cost, 2, wrt, NULL, g));
    assert_true(weft_type_equal(weft_var_type(g[0]), weft_var_type(f->x)));
    weft_tensor_t *gx = eval_xy(f, g[0]), *gy = eval_xy(f, g[1]);
    ck_expect(gx, 1, s3, (double[]){-2, 2, 24}, 0);
    ck_expect(gy, 1, s3, (double[]){1, 4, 9}, 0);
    weft_tensor_release(gx);
    weft_tensor_release(gy);
}

/* The same wrt twice, the cost itself, an intermediate variable. */
static void test_grad_wrt_cost_intermediate_and_repeated(void **state)
{
    fx_t *f = *state;
    weft_var_t *e = NULL, *g[4] = {NULL};
    assert_non_null(e = weft_exp(f->g, f->x));
    weft_var_t *cost = sum_all(f->g, e), *wrt[4] = {f->x, cost, e, f->x};
    assert_non_null(weft_grads(f->g, cost, 4, wrt, NULL, g));
    assert_ptr_equal(g[0], g[3]);
    weft_tensor_t *r0 = eval_xy(f, g[0]), *r1 = eval_xy(f, g[1]), *r2 = eval_xy(f, g[2]);
    ck_expect(r0, 1, s3, (double[]){exp(1), exp(2), exp(3)}, 1e-15);
    ck_expect(r1, 0, NULL, (double[]){1}, 0);
    ck_expect(r2, 1, s3, (double[]){1, 1, 1}, 0);
    weft_tensor_release(r0);
    weft_tensor_release(r1);
    weft_tensor_release(r2);
}

static void test_grad_cost_grad_seed_scales(void **state)
{
    fx_t *f = *state;
    weft_var_t *seed = NULL, *gx = NULL, *cost = sum_all(f->g, f->x);
    assert_non_null(seed = weft_constant_scalar(f->g, WEFT_FLOAT64, 2.5));
    weft_grad_options_t o = WEFT_GRAD_OPTIONS_INIT;
    o.cost_grad = seed;
    assert_non_null(weft_grads(f->g, cost, 1, &f->x, &o, &gx));
    weft_tensor_t *r = eval_xy(f, gx);
    ck_expect(r, 1, s3, (double[]){2.5, 2.5, 2.5}, 0);
    weft_tensor_release(r);
    weft_var_t *bad = NULL;
    assert_non_null(bad = weft_constant_scalar(f->g, WEFT_FLOAT32, 1.0));
    o.cost_grad = bad;
    assert_null(weft_grads(f->g, cost, 1, &f->x, &o, &gx));
    assert_int_equal(weft_graph_error(f->g), WEFT_ETYPE);
    weft_graph_clear_error(f->g);
    assert_null(gx);
}

static void test_grad_disconnected_error_names_variable_or_zeros(void **state)
{
    fx_t *f = *state;
    weft_var_t *cost = sum_all(f->g, f->x), *wrt[2] = {f->x, f->y}, *g[2] = {NULL, NULL};
    assert_null(weft_grads(f->g, cost, 2, wrt, NULL, g));
    assert_int_equal(weft_graph_error(f->g), WEFT_EDISCONNECTED);
    weft_graph_clear_error(f->g);
    assert_null(g[0]);
    assert_null(g[1]);
    const char *msg = weft_graph_last_error(f->g);
    assert_non_null(strstr(msg, "wrt 1 'y'"));
    assert_non_null(strstr(msg, "(created at "));
    assert_non_null(strstr(msg, "ops_check.c")); /* ck_var made it */
    assert_non_null(strstr(msg, "disconnected"));
    weft_grad_options_t o = WEFT_GRAD_OPTIONS_INIT;
    o.disconnected = WEFT_GRAD_MISSING_ZERO;
    assert_non_null(weft_grads(f->g, cost, 2, wrt, &o, g));
    weft_tensor_t *r = eval_xy(f, g[1]);
    ck_expect(r, 1, s3, (double[]){0, 0, 0}, 0);
    weft_tensor_release(r);
}

/* A test op without a grad hook: Opaque(x) = x. */
static weft_status_t opaque_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
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

static weft_status_t opaque_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                    weft_tensor_t **out, weft_kernel_ctx_t *ctx)
{
    (void)node;
    weft_tensor_t *c = NULL;
    weft_status_t st = weft_tensor_clone(in[0], &c);
    if (st == WEFT_OK) {
        weft_kernel_set_output(ctx, &out[0], c);
    }
    return st;
}

static const weft_op_class_t opaque_class = {
    .size = sizeof(weft_op_class_t),
    .name = "Opaque",
    .make_node = opaque_make_node,
    .perform = opaque_perform,
};

/* A test op whose hook returns the null type (undefined) or a wrong dtype. */
static weft_status_t weird_grad(weft_graph_t *g, const weft_apply_t *node,
                                weft_var_t *const *og, weft_var_t **ig)
{
    const int *mode = weft_op_props(weft_apply_op(node));
    (void)og;
    if (*mode == 0) {
        const weft_type_t *t = NULL;
        weft_status_t st = weft_type_null(g, &t);
        return st == WEFT_OK
                   ? ((ig[0] = weft_var_create(g, t, NULL)) ? WEFT_OK : weft_graph_error(g))
                   : st;
    }
    return ((ig[0] = weft_cast(g, og[0], WEFT_FLOAT32)) ? WEFT_OK : weft_graph_error(g));
}

static const weft_op_class_t weird_class = {
    .size = sizeof(weft_op_class_t),
    .name = "Weird",
    .props_size = sizeof(int),
    .make_node = opaque_make_node,
    .perform = opaque_perform,
    .grad = weird_grad,
};

static weft_var_t *apply1(weft_graph_t *g, const weft_op_class_t *cls, int mode, weft_var_t *x)
{
    const weft_op_t *op = NULL;
    weft_var_t *y = NULL;
    assert_int_equal(weft_op_create(g, cls, cls->props_size ? &mode : NULL, &op), WEFT_OK);
    assert_non_null(y = weft_op_call(g, op, 1, &x));
    return y;
}

static void test_grad_no_hook_is_enograd_naming_node_or_zeros(void **state)
{
    fx_t *f = *state;
    weft_var_t *o = apply1(f->g, &opaque_class, 0, f->x), *xy = NULL, *gx = NULL;
    assert_non_null(xy = weft_mul(f->g, o, f->y));
    weft_var_t *cost = sum_all(f->g, xy), *g[2] = {NULL, NULL}, *wrt[2] = {f->y, f->x};
    assert_null(weft_grads(f->g, cost, 1, &f->x, NULL, &gx));
    assert_int_equal(weft_graph_error(f->g), WEFT_ENOGRAD);
    const char *msg = weft_graph_error_message(f->g);
    assert_non_null(strstr(msg, "'x'"));
    assert_non_null(strstr(msg, "Opaque"));
    assert_non_null(strstr(msg, "has no gradient"));
    weft_graph_clear_error(f->g);
    /* y does not cross Opaque: its gradient is fine; x gets zeros on request. */
    weft_grad_options_t opt = WEFT_GRAD_OPTIONS_INIT;
    opt.undefined = WEFT_GRAD_MISSING_ZERO;
    assert_non_null(weft_grads(f->g, cost, 2, wrt, &opt, g));
    weft_tensor_t *ry = eval_xy(f, g[0]), *rx = eval_xy(f, g[1]);
    ck_expect(ry, 1, s3, (double[]){1, 2, 3}, 0);
    ck_expect(rx, 1, s3, (double[]){0, 0, 0}, 0);
    weft_tensor_release(ry);
    weft_tensor_release(rx);
    assert_non_null(weft_grads(f->g, cost, 1, &f->y, NULL, g));
}

static void test_grad_null_type_and_bad_hook_type(void **state)
{
    fx_t *f = *state;
    weft_var_t *u = apply1(f->g, &weird_class, 0, f->x), *gx = NULL;
    assert_null(weft_grads(f->g, sum_all(f->g, u), 1, &f->x, NULL, &gx));
    assert_int_equal(weft_graph_error(f->g), WEFT_ENOGRAD);
    assert_non_null(strstr(weft_graph_error_message(f->g), "Weird"));
    assert_non_null(strstr(weft_graph_error_message(f->g), "undefined (null-type)"));
    weft_graph_clear_error(f->g);
    weft_var_t *w = apply1(f->g, &weird_class, 1, f->x);
    assert_null(weft_grads(f->g, sum_all(f->g, w), 1, &f->x, NULL, &gx));
    assert_int_equal(weft_graph_error(f->g), WEFT_ETYPE);
    assert_non_null(strstr(weft_graph_error_message(f->g), "Weird"));
    assert_non_null(strstr(weft_graph_error_message(f->g), "float32[3]"));
    weft_graph_clear_error(f->g);
}

/* An integer path (Argmax, cast back to float) carries no gradient. */
static void test_grad_integer_path_is_disconnected(void **state)
{
    fx_t *f = *state;
    weft_var_t *am = NULL, *c = NULL, *gx = NULL;
    assert_non_null(am = weft_argmax(f->g, f->x, 0, false));
    assert_non_null(c = weft_cast(f->g, am, WEFT_FLOAT64));
    assert_null(weft_grads(f->g, c, 1, &f->x, NULL, &gx));
    assert_int_equal(weft_graph_error(f->g), WEFT_EDISCONNECTED);
    weft_graph_clear_error(f->g);
}

static void test_grad_bad_arguments_are_rejected(void **state)
{
    fx_t *f = *state;
    weft_var_t *cost = sum_all(f->g, f->x), *gx = (weft_var_t *)1, *nul = NULL;
    weft_var_t *ic = NULL, *iv = ck_var(f->g, WEFT_INT64, 1, s3);
    assert_null(weft_grads(NULL, cost, 1, &f->x, NULL, &gx));
    assert_null(weft_grads(f->g, NULL, 1, &f->x, NULL, &gx));
    assert_int_equal(weft_graph_error(f->g), WEFT_EINVAL);
    weft_graph_clear_error(f->g);
    assert_null(weft_grads(f->g, cost, 1, NULL, NULL, &gx));
    assert_int_equal(weft_graph_error(f->g), WEFT_EINVAL);
    weft_graph_clear_error(f->g);
    assert_null(weft_grads(f->g, cost, 1, &f->x, NULL, NULL));
    assert_int_equal(weft_graph_error(f->g), WEFT_EINVAL);
    weft_graph_clear_error(f->g);
    assert_null(weft_grads(f->g, cost, 1, &nul, NULL, &gx));
    assert_int_equal(weft_graph_error(f->g), WEFT_EINVAL);
    weft_graph_clear_error(f->g);
    assert_null(gx);
    assert_null(weft_grads(f->g, f->x, 1, &f->x, NULL, &gx));
    assert_int_equal(weft_graph_error(f->g), WEFT_ETYPE);
    assert_non_null(strstr(weft_graph_error_message(f->g), "0-d"));
    weft_graph_clear_error(f->g);
    assert_non_null(ic = weft_sum(f->g, iv, 0, NULL, false));
    assert_null(weft_grads(f->g, ic, 1, &iv, NULL, &gx));
    assert_int_equal(weft_graph_error(f->g), WEFT_ETYPE);
    weft_graph_clear_error(f->g);
    assert_null(weft_grads(f->g, cost, 1, &iv, NULL, &gx));
    assert_int_equal(weft_graph_error(f->g), WEFT_ETYPE);
    assert_non_null(strstr(weft_graph_error_message(f->g), "not a float tensor"));
    weft_graph_clear_error(f->g);
    weft_grad_options_t o = WEFT_GRAD_OPTIONS_INIT;
    o.size = 4;
    assert_null(weft_grads(f->g, cost, 1, &f->x, &o, &gx));
    assert_int_equal(weft_graph_error(f->g), WEFT_EINVAL);
    weft_graph_clear_error(f->g);
    weft_graph_t *g2 = NULL;
    assert_int_equal(weft_graph_create(NULL, &g2), WEFT_OK);
    assert_null(weft_grads(g2, cost, 1, &f->x, NULL, &gx));
    assert_int_equal(weft_graph_error(g2), WEFT_EFOREIGN);
    weft_graph_clear_error(g2);
    weft_var_t *x2 = ck_var(g2, WEFT_FLOAT64, 1, s3);
    assert_null(weft_grads(f->g, cost, 1, &x2, NULL, &gx));
    assert_int_equal(weft_graph_error(f->g), WEFT_EFOREIGN);
    weft_graph_clear_error(f->g);
    weft_graph_destroy(g2);
    assert_non_null(weft_grads(f->g, cost, 0, NULL, NULL, &gx));
}

/* A cycle that reached the graph (tests/support/shared_cycle.h): WEFT_ECYCLE
 * naming it, never a gradient of a graph that cannot be evaluated. */
static void test_grad_cycle_in_the_graph_is_ecycle(void **state)
{
    fx_t *f = *state;
    const weft_op_t *e, *n, *a;
    assert_int_equal(weft_elemwise_op(f->g, WEFT_ELEMWISE_EXP, -1, WEFT_FLOAT64, &e), WEFT_OK);
    assert_int_equal(weft_elemwise_op(f->g, WEFT_ELEMWISE_NEG, -1, WEFT_FLOAT64, &n), WEFT_OK);
    assert_int_equal(weft_elemwise_op(f->g, WEFT_ELEMWISE_ADD, -1, WEFT_FLOAT64, &a), WEFT_OK);
    weft_var_t *out = shared_cycle_build(f->g, e, n, a, f->x, f->y, NULL, NULL), *gx = NULL;
    assert_non_null(out);
    assert_null(weft_grads(f->g, sum_all(f->g, out), 1, &f->x, NULL, &gx));
    assert_int_equal(weft_graph_error(f->g), WEFT_ECYCLE);
    weft_graph_clear_error(f->g);
    assert_null(gx);
    assert_string_equal(msg_without_sites(weft_graph_last_error(f->g)),
                        "weft_grad: graph contains a cycle: apply 0 (Exp) -> apply 2 (Neg) -> "
                        "apply 1 (Neg)");
}

/* A 2000-node chain: the traversal is iterative (no deep recursion). */
static void test_grad_long_chain(void **state)
{
    fx_t *f = *state;
    weft_var_t *v = f->x, *gx = NULL;
    for (int i = 0; i < 2000; i++) {
        assert_non_null(v = weft_binary_scalar(f->g, WEFT_ELEMWISE_MUL, v, 1.0005));
    }
    assert_non_null(weft_grads(f->g, sum_all(f->g, v), 1, &f->x, NULL, &gx));
    weft_tensor_t *r = eval_xy(f, gx);
    double w = pow(1.0005, 2000);
    ck_expect(r, 1, s3, (double[]){w, w, w}, 1e-12);
    weft_tensor_release(r);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_grad_product_rule_and_accumulation),
        T(test_grad_wrt_cost_intermediate_and_repeated),
        T(test_grad_cost_grad_seed_scales),
        T(test_grad_disconnected_error_names_variable_or_zeros),
        T(test_grad_no_hook_is_enograd_naming_node_or_zeros),
        T(test_grad_null_type_and_bad_hook_type),
        T(test_grad_integer_path_is_disconnected),
        T(test_grad_bad_arguments_are_rejected),
        T(test_grad_cycle_in_the_graph_is_ecycle),
        T(test_grad_long_chain),
    };
#undef T
    return cmocka_run_group_tests_name("grad", tests, NULL, NULL);
}
