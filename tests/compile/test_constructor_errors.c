/* Composing constructors (weft/graph.h "Errors"): expressions nest, the first
 * error is kept with its creation site and outer constructors add none, NULL
 * arguments, compile and FunctionGraph creation refusing a graph with a kept
 * error, weft_graph_clear_error, the scalar helpers' operand order and
 * dtypes, and speculative building in rewrites leaving no kept error. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "weft/weft.h"

static int setup(void **state)
{
    weft_graph_t *g = NULL;
    if (weft_graph_create(NULL, &g) != WEFT_OK) return -1;
    *state = g;
    return 0;
}

static int teardown(void **state)
{
    weft_graph_destroy(*state);
    return 0;
}

static weft_var_t *var(weft_graph_t *g, weft_dtype_t dt, int nd, const int64_t *shape,
                       const char *name)
{
    const weft_type_t *t = NULL;
    assert_int_equal(weft_type_tensor(g, dt, nd, shape, &t), WEFT_OK);
    weft_var_t *v = weft_var_create(g, t, name);
    assert_non_null(v);
    return v;
}

static weft_tensor_t *tensor(weft_dtype_t dt, int nd, const int64_t *shape, const double *v)
{
    weft_tensor_t *t = NULL;
    assert_int_equal(weft_tensor_empty(dt, nd, shape, &t), WEFT_OK);
    for (int64_t i = 0; i < (nd ? shape[0] * (nd > 1 ? shape[1] : 1) : 1); i++) {
        int64_t idx[2] = {nd > 1 ? i / shape[1] : i, nd > 1 ? i % shape[1] : 0};
        assert_int_equal(weft_tensor_set(t, idx, v[i]), WEFT_OK);
    }
    return t;
}

/* Evaluates y from the inputs and checks its dtype and values exactly. */
static void expect(weft_graph_t *g, size_t n, weft_var_t *const *in, weft_tensor_t *const *vals,
                   weft_var_t *y, weft_dtype_t dt, size_t n_want, const double *want)
{
    weft_tensor_t *r = NULL;
    assert_int_equal(weft_eval(g, n, in, vals, 1, &y, &r), WEFT_OK);
    assert_int_equal(weft_tensor_dtype(r), dt);
    assert_int_equal(weft_tensor_size(r), n_want);
    for (size_t i = 0; i < n_want; i++) assert_true(weft_tensor_flat_get(r, i) == want[i]);
    weft_tensor_release(r);
}

/* The kept error: status and the exact message, with "%d" the given line. */
static void expect_kept(weft_graph_t *g, weft_status_t st, const char *fmt, int line)
{
    char want[512];
    snprintf(want, sizeof want, fmt, __FILE__, line);
    assert_int_equal(weft_graph_error(g), st);
    assert_string_equal(weft_graph_error_message(g), want);
}

static void test_expressions_nest(void **state)
{
    weft_graph_t *g = *state;
    int64_t s12[2] = {1, 2}, s22[2] = {2, 2}, s2[1] = {2};
    weft_var_t *x = var(g, WEFT_FLOAT64, 2, s12, "x"), *W = var(g, WEFT_FLOAT64, 2, s22, "W");
    weft_var_t *b = var(g, WEFT_FLOAT64, 1, s2, "b");
    weft_var_t *y = weft_tanh(g, weft_add(g, weft_dot(g, x, W), b));
    assert_non_null(y);
    assert_int_equal(weft_graph_error(g), WEFT_OK);
    assert_string_equal(weft_graph_error_message(g), "");
    weft_var_t *in[3] = {x, W, b};
    weft_tensor_t *vals[3] = {tensor(WEFT_FLOAT64, 2, s12, (double[]){1, 2}),
                              tensor(WEFT_FLOAT64, 2, s22, (double[]){0.5, 0, 0, 0.25}),
                              tensor(WEFT_FLOAT64, 1, s2, (double[]){-0.5, 0})};
    /* x W + b = [0, 0.5] */
    expect(g, 3, in, vals, y, WEFT_FLOAT64, 2, (double[]){0.0, tanh(0.5)});
    for (int i = 0; i < 3; i++) weft_tensor_release(vals[i]);
}

/* A shape error deep inside: the Dot's message and site are kept, the Add
 * and Tanh that get its NULL return NULL and add nothing. */
static void test_first_error_kept_with_its_site(void **state)
{
    weft_graph_t *g = *state;
    int64_t s23[2] = {2, 3}, s2[1] = {2};
    weft_var_t *x = var(g, WEFT_FLOAT64, 2, s23, "x"), *W = var(g, WEFT_FLOAT64, 2, s23, "W");
    weft_var_t *b = var(g, WEFT_FLOAT64, 1, s2, "b");
    int line = __LINE__ + 1;
    weft_var_t *y = weft_tanh(g, weft_add(g, weft_dot(g, x, W), b));
    assert_null(y);
    const char *dot_error =
        "apply of Dot at %s:%d: Dot: input 0 dim 1 has length 3 but input 1 dim 0 has 2";
    expect_kept(g, WEFT_ETYPE, dot_error, line);
    /* a later, unrelated error does not replace it */
    assert_null(weft_exp(g, weft_argmax(g, x, 7, false)));
    expect_kept(g, WEFT_ETYPE, dot_error, line);
    /* but the last-error text says what failed last */
    assert_non_null(strstr(weft_graph_last_error(g), "Exp"));
    weft_graph_clear_error(g);
    assert_int_equal(weft_graph_error(g), WEFT_OK);
    assert_string_equal(weft_graph_error_message(g), "");
    /* cleared: the next error is kept again */
    line = __LINE__ + 1;
    assert_null(weft_exp(g, weft_argmax(g, x, 7, false)));
    expect_kept(g, WEFT_EINVAL, "Argmax (at %s:%d): axis 7 out of range for an input with 2 dims",
                line);
    weft_graph_clear_error(g);
}

static void test_null_arguments(void **state)
{
    weft_graph_t *g = *state;
    int64_t s3[1] = {3};
    weft_var_t *x = var(g, WEFT_FLOAT64, 1, s3, "x");
    assert_null(weft_add(NULL, x, x)); /* no graph: nothing to record on */
    assert_null(weft_grad(NULL, x, x));
    int line = __LINE__ + 1;
    assert_null(weft_add(g, x, NULL));
    expect_kept(g, WEFT_EINVAL, "Add at %s:%d: input 1 is NULL", line);
    assert_null(weft_mul(g, NULL, x)); /* kept already: no second error */
    expect_kept(g, WEFT_EINVAL, "Add at %s:%d: input 1 is NULL", line);
    weft_graph_clear_error(g);
    line = __LINE__ + 1;
    assert_null(weft_dot(g, NULL, x));
    expect_kept(g, WEFT_EINVAL, "Dot (at %s:%d): NULL input 0", line);
    weft_graph_clear_error(g);
    line = __LINE__ + 1;
    assert_null(weft_sum(g, NULL, 0, NULL, false));
    expect_kept(g, WEFT_EINVAL, "reduce (at %s:%d): NULL argument or bad kind", line);
    weft_graph_clear_error(g);
    line = __LINE__ + 1;
    assert_null(weft_var_create(g, NULL, "v"));
    expect_kept(g, WEFT_EINVAL, "weft_var_create: NULL type (weft_var_create at %s:%d)", line);
    weft_graph_clear_error(g);
    line = __LINE__ + 1;
    assert_null(weft_grad(g, NULL, x));
    expect_kept(g, WEFT_EINVAL, "weft_grad: NULL cost (weft_grad at %s:%d)", line);
    weft_graph_clear_error(g);
}

/* Compile and fgraph creation report the kept error, even when the NULL it
 * produced is passed as an output. */
static void test_compile_refuses_a_graph_with_a_kept_error(void **state)
{
    weft_graph_t *g = *state;
    int64_t s3[1] = {3}, s4[1] = {4};
    weft_var_t *x = var(g, WEFT_FLOAT64, 1, s3, "x"), *z = var(g, WEFT_FLOAT64, 1, s4, "z");
    weft_var_t *good = weft_exp(g, x);
    int line = __LINE__ + 1;
    weft_var_t *bad = weft_add(g, x, z);
    assert_null(bad);
    char kept[512], want[600];
    snprintf(kept, sizeof kept,
             "apply of Add at %s:%d: Add: input 0 has length 3 and input 1 length 4 in dimension 0",
             __FILE__, line);
    assert_int_equal(weft_graph_error(g), WEFT_ESHAPE);
    assert_string_equal(weft_graph_error_message(g), kept);
    snprintf(want, sizeof want, "the graph has an error: %s", kept);
    weft_function_t *f = (weft_function_t *)1;
    weft_var_t *in[2] = {x, z}, *outs[2] = {good, bad};
    assert_int_equal(weft_function_compile(2, in, 1, &good, 0, NULL, NULL, &f), WEFT_ESHAPE);
    assert_null(f);
    assert_string_equal(weft_function_last_error(NULL), want);
    assert_int_equal(weft_function_compile(2, in, 2, outs, 0, NULL, NULL, &f), WEFT_ESHAPE);
    assert_string_equal(weft_function_last_error(NULL), want);
    weft_fgraph_t *fg = (weft_fgraph_t *)1;
    assert_int_equal(weft_fgraph_create(g, 2, in, 2, outs, NULL, NULL, &fg), WEFT_ESHAPE);
    assert_null(fg);
    snprintf(want, sizeof want, "weft_fgraph_create: the graph has an error: %s", kept);
    assert_string_equal(weft_graph_last_error(g), want);
    /* cleared: the good part compiles */
    weft_graph_clear_error(g);
    assert_int_equal(weft_function_compile(2, in, 1, &good, 0, NULL, NULL, &f), WEFT_OK);
    weft_function_destroy(f);
}

/* x X c and c X x: operand order, and the constant's dtype as NumPy
 * promotes a Python scalar. */
static void test_scalar_helpers_order_and_dtypes(void **state)
{
    weft_graph_t *g = *state;
    int64_t s3[1] = {3};
    weft_var_t *x = var(g, WEFT_FLOAT64, 1, s3, "x"), *xf = var(g, WEFT_FLOAT32, 1, s3, "xf");
    weft_var_t *xi = var(g, WEFT_INT32, 1, s3, "xi"), *xb = var(g, WEFT_BOOL, 1, s3, "xb");
    weft_var_t *in[4] = {x, xf, xi, xb};
    weft_tensor_t *v[4] = {tensor(WEFT_FLOAT64, 1, s3, (double[]){1, 2, 4}),
                           tensor(WEFT_FLOAT32, 1, s3, (double[]){1, 2, 4}),
                           tensor(WEFT_INT32, 1, s3, (double[]){1, 2, 4}),
                           tensor(WEFT_BOOL, 1, s3, (double[]){1, 0, 1})};
    expect(g, 4, in, v, weft_scalar_sub(g, 1.0, x), WEFT_FLOAT64, 3, (double[]){0, -1, -3});
    expect(g, 4, in, v, weft_sub_scalar(g, x, 1.0), WEFT_FLOAT64, 3, (double[]){0, 1, 3});
    expect(g, 4, in, v, weft_scalar_div(g, 8.0, x), WEFT_FLOAT64, 3, (double[]){8, 4, 2});
    expect(g, 4, in, v, weft_div_scalar(g, x, 8.0), WEFT_FLOAT64, 3, (double[]){0.125, 0.25, 0.5});
    expect(g, 4, in, v, weft_scalar_pow(g, 2.0, x), WEFT_FLOAT64, 3, (double[]){2, 4, 16});
    expect(g, 4, in, v, weft_pow_scalar(g, x, 2.0), WEFT_FLOAT64, 3, (double[]){1, 4, 16});
    expect(g, 4, in, v, weft_mul_scalar(g, x, 2.0), WEFT_FLOAT64, 3, (double[]){2, 4, 8});
    expect(g, 4, in, v, weft_scalar_maximum(g, 2.0, x), WEFT_FLOAT64, 3, (double[]){2, 2, 4});
    expect(g, 4, in, v, weft_minimum_scalar(g, x, 2.0), WEFT_FLOAT64, 3, (double[]){1, 2, 2});
    expect(g, 4, in, v, weft_scalar_add(g, 0.5, x), WEFT_FLOAT64, 3, (double[]){1.5, 2.5, 4.5});
    expect(g, 4, in, v, weft_scalar_binary(g, WEFT_ELEMWISE_LT, 2.0, x), WEFT_BOOL, 3,
           (double[]){0, 0, 1});
    /* float32 stays float32 (the constant takes x's dtype) */
    expect(g, 4, in, v, weft_mul_scalar(g, xf, 2.5), WEFT_FLOAT32, 3, (double[]){2.5, 5, 10});
    /* an integral constant keeps int32; a non-integral one makes float64 */
    expect(g, 4, in, v, weft_mul_scalar(g, xi, 2.0), WEFT_INT32, 3, (double[]){2, 4, 8});
    expect(g, 4, in, v, weft_mul_scalar(g, xi, 2.5), WEFT_FLOAT64, 3, (double[]){2.5, 5, 10});
    expect(g, 4, in, v, weft_scalar_sub(g, 1.0, xi), WEFT_INT32, 3, (double[]){0, -1, -3});
    /* bool with an integer is int64, as NumPy's bool array + 1 */
    expect(g, 4, in, v, weft_add_scalar(g, xb, 1.0), WEFT_INT64, 3, (double[]){2, 1, 2});
    expect(g, 4, in, v, weft_mul_scalar(g, xb, 0.5), WEFT_FLOAT64, 3, (double[]){0.5, 0, 0.5});
    assert_int_equal(weft_graph_error(g), WEFT_OK);
    /* an integral constant too big for int32 */
    int line = __LINE__ + 1;
    assert_null(weft_add_scalar(g, xi, 1e12));
    expect_kept(g, WEFT_EINVAL,
                "weft_constant_scalar at %s:%d: 1e+12 is not representable as int32", line);
    weft_graph_clear_error(g);
    for (int i = 0; i < 4; i++) weft_tensor_release(v[i]);
}

/* A pattern builder building a Dot of mismatched operands (x is 3x2): the
 * rewrite fails and does not apply, and leaves the graph's kept error as it
 * was. */
static weft_var_t *failing_builder(weft_fgraph_t *fg, weft_apply_t *node,
                                   const weft_pattern_bindings_t *b, void *user)
{
    (void)b;
    (void)user;
    weft_var_t *x = weft_apply_input(node, 0);
    return weft_dot(weft_fgraph_graph(fg), x, x);
}

static void test_failing_rewrite_builder_leaves_no_kept_error(void **state)
{
    weft_graph_t *g = *state;
    int64_t s23[2] = {2, 3};
    weft_var_t *x = var(g, WEFT_FLOAT64, 2, s23, "x");
    weft_var_t *t = weft_transpose(g, x), *y = weft_neg(g, t);
    weft_pattern_builder_t bd = {"dot_mismatch", failing_builder, NULL};
    weft_pattern_desc_t d = WEFT_PATTERN_DESC_INIT;
    d.name = "fails";
    d.in_pattern = "(Neg x)";
    d.out_pattern = "@dot_mismatch";
    d.n_builders = 1;
    d.builders = &bd;
    weft_rewriter_t *rw = NULL;
    assert_int_equal(weft_rewriter_pattern_create(&d, &rw), WEFT_OK);
    weft_fgraph_options_t o = WEFT_FGRAPH_OPTIONS_INIT;
    o.clone = false;
    weft_fgraph_t *fg = NULL;
    assert_int_equal(weft_fgraph_create(g, 1, &x, 1, &y, &o, NULL, &fg), WEFT_OK);
    weft_rewrite_stats_t *stats = NULL;
    assert_int_equal(weft_rewrite_stats_create(&stats), WEFT_OK);
    assert_int_equal(weft_rewriter_apply(rw, fg, stats), WEFT_OK);
    uint64_t applied = 9, failed = 0;
    double seconds;
    assert_int_equal(weft_rewrite_stats_get(stats, "fails", &applied, &failed, &seconds), WEFT_OK);
    assert_int_equal(applied, 0);
    assert_int_equal(failed, 1);
    assert_ptr_equal(weft_fgraph_output(fg, 0), y);
    assert_int_equal(weft_graph_error(g), WEFT_OK);
    assert_string_equal(weft_graph_error_message(g), "");
    /* a user's kept error made meanwhile survives the rewrite unchanged */
    int line = __LINE__ + 1;
    assert_null(weft_dot(g, x, x));
    char kept[512];
    snprintf(kept, sizeof kept, "%s", weft_graph_error_message(g));
    assert_int_equal(weft_graph_error(g), WEFT_ETYPE);
    char site[256];
    snprintf(site, sizeof site, "Dot at %s:%d", __FILE__, line);
    assert_non_null(strstr(kept, site));
    assert_int_equal(weft_rewriter_apply(rw, fg, stats), WEFT_OK);
    assert_int_equal(weft_graph_error(g), WEFT_ETYPE);
    assert_string_equal(weft_graph_error_message(g), kept);
    weft_graph_clear_error(g);
    weft_rewrite_stats_destroy(stats);
    weft_fgraph_destroy(fg);
    weft_rewriter_release(rw);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_expressions_nest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_first_error_kept_with_its_site, setup, teardown),
        cmocka_unit_test_setup_teardown(test_null_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compile_refuses_a_graph_with_a_kept_error, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_scalar_helpers_order_and_dtypes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failing_rewrite_builder_leaves_no_kept_error, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
