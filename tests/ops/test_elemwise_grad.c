/* Elementwise and SumAxes gradients: each grad hook checked against central
 * finite differences (float64, seeded random points, broadcast inputs so the
 * gradient is summed back), plus the dtype and disconnection rules. */
#include "ops_fixture.h"
#include "weft/grad.h"
#include "weft/reduce.h"

static const int64_t S34[2] = {3, 4}, S14[2] = {1, 4};

static void check_kind(weft_graph_t *g, weft_elemwise_kind_t k, uint64_t seed)
{
    size_t ar = weft_elemwise_arity(k);
    bool positive = k == WEFT_ELEMWISE_LOG || k == WEFT_ELEMWISE_SQRT ||
                    k == WEFT_ELEMWISE_POW || k == WEFT_ELEMWISE_LOG1P;
    weft_var_t *in[3];
    weft_tensor_t *v[3];
    for (size_t i = 0; i < ar; i++) {
        bool cond = k == WEFT_ELEMWISE_SWITCH && i == 0;
        const int64_t *shape = i == ar - 1 && ar > 1 ? S14 : S34; /* last input broadcast */
        weft_dtype_t dt = cond ? WEFT_BOOL : WEFT_FLOAT64;
        in[i] = fx_var(g, dt, 2, shape);
        v[i] = cond ? fx_random(dt, 2, shape, 0, 2, 0, &seed)
                    : fx_random(dt, 2, shape, positive ? 0.5 : -1.5, 1.5, positive ? 0 : 0.2,
                                &seed);
    }
    weft_var_t *y;
    assert_non_null(y = weft_elemwise(g, k, ar, in));
    fx_check_grad(g, y, ar, in, v, seed);
    for (size_t i = 0; i < ar; i++) weft_tensor_release(v[i]);
}

static void test_elemwise_grad_every_differentiable_kind_matches_finite_differences(void **state)
{
    weft_graph_t *g = *state;
    uint64_t seed = 1234;
    printf("seed=%llu\n", (unsigned long long)seed);
    weft_elemwise_kind_t kinds[] = {
        WEFT_ELEMWISE_NEG,     WEFT_ELEMWISE_ABS,     WEFT_ELEMWISE_EXP,  WEFT_ELEMWISE_LOG,
        WEFT_ELEMWISE_LOG1P,   WEFT_ELEMWISE_SQRT,    WEFT_ELEMWISE_SQR,  WEFT_ELEMWISE_TANH,
        WEFT_ELEMWISE_SIGMOID, WEFT_ELEMWISE_RELU,    WEFT_ELEMWISE_SIN,  WEFT_ELEMWISE_COS,
        WEFT_ELEMWISE_ADD,     WEFT_ELEMWISE_SUB,     WEFT_ELEMWISE_MUL,  WEFT_ELEMWISE_DIV,
        WEFT_ELEMWISE_POW,     WEFT_ELEMWISE_MAXIMUM, WEFT_ELEMWISE_MINIMUM,
        WEFT_ELEMWISE_SECOND,  WEFT_ELEMWISE_SWITCH,
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) check_kind(g, kinds[i], seed + i);
}

static void test_elemwise_grad_is_cast_back_to_a_float32_input(void **state)
{
    weft_graph_t *g = *state;
    weft_var_t *a = fx_var(g, WEFT_FLOAT32, 2, S34), *b = fx_var(g, WEFT_FLOAT64, 2, S14), *y;
    assert_non_null(y = weft_mul(g, a, b));
    weft_var_t *gz, *grads[2] = {NULL, NULL};
    assert_non_null(gz = weft_var_create(g, weft_var_type(y), "gz"));
    const weft_op_class_t *cls = weft_op_class(weft_apply_op(weft_var_owner(y)));
    assert_int_equal(cls->grad(g, weft_var_owner(y), &gz, grads), WEFT_OK);
    assert_true(weft_type_equal(weft_var_type(grads[0]), weft_var_type(a)));
    assert_true(weft_type_equal(weft_var_type(grads[1]), weft_var_type(b))); /* summed to [1,4] */
}

static void test_elemwise_grad_disconnects_integer_and_boolean_inputs(void **state)
{
    weft_graph_t *g = *state;
    weft_var_t *i = fx_var(g, WEFT_INT32, 2, S34), *f = fx_var(g, WEFT_FLOAT64, 2, S34), *y, *c;
    assert_non_null(y = weft_add(g, i, f));
    assert_non_null(c = weft_lt(g, f, f));
    weft_var_t *gz, *grads[2] = {(weft_var_t *)1, (weft_var_t *)1};
    assert_non_null(gz = weft_var_create(g, weft_var_type(y), "gz"));
    const weft_op_class_t *cls = weft_op_class(weft_apply_op(weft_var_owner(y)));
    assert_int_equal(cls->grad(g, weft_var_owner(y), &gz, grads), WEFT_OK);
    assert_null(grads[0]);
    assert_non_null(grads[1]);
    weft_var_t *gc;
    assert_non_null(gc = weft_var_create(g, weft_var_type(c), "gc"));
    grads[0] = grads[1] = (weft_var_t *)1;
    assert_int_equal(cls->grad(g, weft_var_owner(c), &gc, grads), WEFT_OK);
    assert_null(grads[0]);
    assert_null(grads[1]);
    weft_var_t *none[1] = {NULL};
    grads[0] = grads[1] = (weft_var_t *)1;
    assert_int_equal(cls->grad(g, weft_var_owner(y), none, grads), WEFT_OK); /* no gz: nothing */
    assert_null(grads[0]);
    assert_null(grads[1]);
}

static void test_elemwise_grad_of_cast_and_sum_axes(void **state)
{
    weft_graph_t *g = *state;
    uint64_t seed = 99;
    weft_var_t *x = fx_var(g, WEFT_FLOAT64, 2, S34), *c, *s;
    assert_non_null(c = weft_cast(g, x, WEFT_FLOAT32));
    weft_tensor_t *v = fx_random(WEFT_FLOAT64, 2, S34, -1, 1, 0, &seed);
    /* Cast's gradient is the output gradient cast back */
    weft_var_t *gz, *grads[1];
    assert_non_null(gz = weft_var_create(g, weft_var_type(c), "gz"));
    const weft_op_class_t *cls = weft_op_class(weft_apply_op(weft_var_owner(c)));
    assert_int_equal(cls->grad(g, weft_var_owner(c), &gz, grads), WEFT_OK);
    assert_int_equal(weft_type_dtype(weft_var_type(grads[0])), WEFT_FLOAT64);
    /* SumAxes (built by the gradients of broadcasting ops) and its own gradient */
    weft_var_t *b = fx_var(g, WEFT_FLOAT64, 2, S14), *y;
    assert_non_null(y = weft_add(g, x, b));
    assert_non_null(gz = weft_var_create(g, weft_var_type(y), "gy"));
    weft_var_t *g2[2];
    cls = weft_op_class(weft_apply_op(weft_var_owner(y)));
    assert_int_equal(cls->grad(g, weft_var_owner(y), &gz, g2), WEFT_OK);
    s = g2[1];
    assert_string_equal(weft_op_name(weft_apply_op(weft_var_owner(s))), "SumAxes");
    char buf[64];
    weft_op_print(weft_apply_op(weft_var_owner(s)), buf, sizeof buf);
    assert_string_equal(buf, "SumAxes{axes=(0)}");
    weft_tensor_t *r = fx_eval(g, 1, &gz, &v, s);
    double want[4] = {0};
    for (size_t i = 0; i < 12; i++) want[i % 4] += weft_tensor_flat_get(v, i);
    fx_expect(r, want, 4, 1e-15);
    weft_tensor_release(r);
    fx_check_grad(g, s, 1, &gz, &v, seed);
    weft_tensor_release(v);
}

/* A composed expression through weft_grad and weft_verify_grad: broadcasting,
 * a transpose, slicing, in-graph constants and a float32 input. */
static weft_var_t *composed(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    (void)n;
    (void)user;
    weft_slice_t idx[2] = {WEFT_SLICE(WEFT_SLICE_NONE, WEFT_SLICE_NONE, -1), WEFT_SLICE(-4, 9, 1)};
    weft_var_t *s = weft_tanh(g, weft_add(g, weft_mul(g, in[0], weft_transpose(g, in[1])), in[2]));
    weft_var_t *q = weft_sigmoid(g, weft_subtensor(g, s, 2, idx));
    return weft_div(g, weft_maximum(g, q, weft_exp(g, in[2])), in[0]);
}

static void test_elemwise_grad_composed_expression_passes_verify_grad(void **state)
{
    (void)state;
    uint64_t seed = 31337;
    printf("seed=%llu\n", (unsigned long long)seed);
    weft_tensor_t *pts[3];
    assert_int_equal(weft_verify_grad_random(WEFT_FLOAT64, 2, S34, 0.5, 1.5, seed, &pts[0]),
                     WEFT_OK);
    assert_int_equal(weft_verify_grad_random(WEFT_FLOAT64, 2, (int64_t[]){4, 3}, -1, 1,
                                             seed + 1, &pts[1]),
                     WEFT_OK);
    assert_int_equal(weft_verify_grad_random(WEFT_FLOAT64, 1, (int64_t[]){4}, -2, -1, seed + 2,
                                             &pts[2]),
                     WEFT_OK);
    weft_verify_grad_result_t res;
    weft_status_t st = weft_verify_grad(composed, NULL, 3, pts, NULL, &res);
    if (st != WEFT_OK) fprintf(stderr, "verify_grad: %s\n", res.message);
    assert_int_equal(st, WEFT_OK);
    assert_true(res.max_abs_err < 1e-6);
    for (int i = 0; i < 3; i++) weft_tensor_release(pts[i]);
}

/* kind(in[0], in[n-1]): with one input, kind(x, x). */
static weft_var_t *extreme_of(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    return weft_binary(g, *(const weft_elemwise_kind_t *)user, in[0], in[n - 1]);
}

static void verify(weft_elemwise_kind_t k, size_t n, weft_tensor_t *const *pts)
{
    weft_verify_grad_result_t res;
    weft_status_t st = weft_verify_grad(extreme_of, &k, n, pts, NULL, &res);
    if (st != WEFT_OK) fprintf(stderr, "verify_grad: %s\n", res.message);
    assert_int_equal(st, WEFT_OK);
}

/* Maximum / Minimum split a tie: maximum(x, x) has gradient 1 (not 2), and
 * two variables holding equal values get 1/2 each, as central differences
 * say; both through weft_grad + weft_verify_grad. */
static void test_elemwise_grad_maximum_minimum_ties_match_finite_differences(void **state)
{
    weft_graph_t *g = *state;
    weft_tensor_t *p;
    assert_int_equal(weft_verify_grad_random(WEFT_FLOAT64, 2, S34, -1, 1, 7, &p), WEFT_OK);
    weft_tensor_t *two[2] = {p, p};
    const weft_elemwise_kind_t kinds[2] = {WEFT_ELEMWISE_MAXIMUM, WEFT_ELEMWISE_MINIMUM};
    for (int i = 0; i < 2; i++) {
        verify(kinds[i], 1, &p);
        verify(kinds[i], 2, two);
        /* exactly: d/dx sum(kind(x, x)) = 1 */
        weft_var_t *x = fx_var(g, WEFT_FLOAT64, 2, S34), *y, *c, *gx;
        assert_non_null(y = weft_binary(g, kinds[i], x, x));
        assert_non_null(c = weft_sum(g, y, 0, NULL, false));
        assert_non_null(weft_grads(g, c, 1, &x, NULL, &gx));
        weft_tensor_t *r = fx_eval(g, 1, &x, &p, gx);
        const double ones[12] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
        fx_expect(r, ones, 12, 0);
        weft_tensor_release(r);
    }
    weft_tensor_release(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)
        T(test_elemwise_grad_every_differentiable_kind_matches_finite_differences),
        T(test_elemwise_grad_is_cast_back_to_a_float32_input),
        T(test_elemwise_grad_disconnects_integer_and_boolean_inputs),
        T(test_elemwise_grad_of_cast_and_sum_axes),
        T(test_elemwise_grad_composed_expression_passes_verify_grad),
        T(test_elemwise_grad_maximum_minimum_ties_match_finite_differences),
#undef T
    };
    return cmocka_run_group_tests_name("elemwise_grad", tests, NULL, NULL);
}
