/* Elementwise kinds on the new real dtypes and on mixed dtypes, against
 * NumPy 1.24's results bit for bit (dtypes_elemwise_expected.h, generated
 * by gen_dtypes_elemwise.py): integer wrapping, unsigned Neg/Abs, integer
 * Pow, true division to float64, float-only kinds in weft_dtype_float_of,
 * bool arithmetic, float16 computed in float32 and rounded; and the run-time
 * refusal of negative integer exponents. */
#include "ops_fixture.h"
#include "weft/composite.h"
#include "weft/grad.h"
#include "weft/linalg.h"
#include "weft/reduce.h"

#include "dtypes_elemwise_expected.h"

/* A tensor of dt with n elements from raw bits (zero-extended words). */
static weft_tensor_t *raw_tensor(weft_dtype_t dt, const uint64_t *bits, int64_t n)
{
    weft_tensor_t *t;
    assert_int_equal(weft_tensor_empty(dt, 1, &n, &t), WEFT_OK);
    size_t es = weft_dtype_size(dt);
    for (int64_t i = 0; i < n; i++) /* little-endian: the low bytes of the word */
        memcpy((char *)weft_tensor_data(t) + (size_t)i * es, &bits[i], es);
    return t;
}

static void run_case(weft_graph_t *g, size_t c)
{
    const ew_case_t *e = &ew_cases[c];
    int64_t n = 6;
    bool unary = e->b == WEFT_DTYPE_COUNT;
    weft_var_t *in[2] = {fx_var(g, e->a, 1, &n), unary ? NULL : fx_var(g, e->b, 1, &n)};
    weft_var_t *y = weft_elemwise(g, e->kind, unary ? 1 : 2, in);
    if (!y) print_error("case %zu: %s\n", c, weft_graph_last_error(g));
    assert_non_null(y);
    assert_int_equal(weft_type_dtype(weft_var_type(y)), e->out);
    weft_tensor_t *vals[2] = {raw_tensor(e->a, e->av, n), unary ? NULL : raw_tensor(e->b, e->bv, n)};
    weft_tensor_t *r = fx_eval(g, unary ? 1 : 2, in, vals, y);
    size_t es = weft_dtype_size(e->out);
    for (int64_t i = 0; i < n; i++) {
        uint64_t got = 0;
        memcpy(&got, (const char *)weft_tensor_data(r) + (size_t)i * es, es);
        if (got != e->want[i])
            print_error("case %zu (%s %s %s) element %lld: got 0x%llx, want 0x%llx\n", c,
                        weft_elemwise_name(e->kind), weft_dtype_name(e->a),
                        unary ? "" : weft_dtype_name(e->b), (long long)i,
                        (unsigned long long)got, (unsigned long long)e->want[i]);
        assert_true(got == e->want[i]);
    }
    weft_tensor_release(r);
    weft_tensor_release(vals[0]);
    weft_tensor_release(vals[1]);
}

static void test_dtypes_elemwise_match_numpy_bit_for_bit(void **state)
{
    weft_graph_t *g = *state;
    for (size_t c = 0; c < sizeof ew_cases / sizeof ew_cases[0]; c++) run_case(g, c);
}

static void test_dtypes_negative_integer_exponent_fails_the_node(void **state)
{
    weft_graph_t *g = *state;
    int64_t n = 3;
    weft_var_t *a = fx_var(g, WEFT_INT16, 1, &n), *b = fx_var(g, WEFT_INT8, 1, &n), *y;
    int line = __LINE__ + 1;
    assert_non_null(y = weft_pow(g, a, b));
    assert_int_equal(weft_type_dtype(weft_var_type(y)), WEFT_INT16);
    weft_tensor_t *va = fx_tensor(WEFT_INT16, 1, &n, (double[]){2, 3, 4});
    weft_tensor_t *vb = fx_tensor(WEFT_INT8, 1, &n, (double[]){1, -1, 2});
    weft_var_t *vars[2] = {a, b};
    weft_tensor_t *vals[2] = {va, vb}, *out = NULL;
    weft_status_t st = weft_eval(g, 2, vars, vals, 1, &y, &out);
    if (st != WEFT_ERANGE) print_error("%s\n", weft_graph_last_error(g));
    assert_int_equal(st, WEFT_ERANGE);
    char want[256];
    snprintf(want, sizeof want,
             "apply 0 (Pow, built at %s:%d): integers to negative integer powers are not "
             "allowed (the int16 exponent has a negative element)",
             __FILE__, line);
    assert_string_equal(weft_graph_last_error(g), want);
    weft_tensor_release(va);
    weft_tensor_release(vb);
}

/* v rounded to float16 (through a 0-d float16 tensor) */
static double half(double v)
{
    weft_tensor_t *t;
    assert_int_equal(weft_tensor_full(WEFT_FLOAT16, 0, NULL, v, &t), WEFT_OK);
    double r = weft_tensor_flat_get(t, 0);
    weft_tensor_release(t);
    return r;
}

/* d/dx sum(x * x + sigmoid(x)) for float16 x: the gradient graph is float16
 * (each of its nodes computed in float32 and rounded), equal to the same
 * graph evaluated in float32 and rounded per node. */
static void test_dtypes_float16_gradient_stays_float16(void **state)
{
    weft_graph_t *g = *state;
    int64_t n = 4;
    weft_var_t *x = fx_var(g, WEFT_FLOAT16, 1, &n), *y, *c, *dx;
    assert_non_null(y = weft_add(g, weft_mul(g, x, x), weft_sigmoid(g, x)));
    assert_non_null(c = weft_sum(g, y, 0, NULL, false));
    assert_int_equal(weft_type_dtype(weft_var_type(c)), WEFT_FLOAT16);
    assert_non_null(dx = weft_grad(g, c, x));
    assert_int_equal(weft_type_dtype(weft_var_type(dx)), WEFT_FLOAT16);
    weft_tensor_t *xv = fx_tensor(WEFT_FLOAT16, 1, &n, (double[]){0.5, -1.5, 3.0, 0.0});
    weft_tensor_t *r = fx_eval(g, 1, &x, &xv, dx);
    assert_int_equal(weft_tensor_dtype(r), WEFT_FLOAT16);
    for (int i = 0; i < 4; i++) {
        double v = weft_tensor_flat_get(xv, (size_t)i);
        double s = half(1.0f / (1.0f + expf((float)-v)));
        /* 2x (exact) + s * (1 - s), each node rounded to half */
        double want = half(2.0 * v + half(s * half(1.0 - s)));
        double got = weft_tensor_flat_get(r, (size_t)i);
        if (fabs(got - want) > 0x1p-10 * fabs(want))
            print_error("element %d: got %a, want %a\n", i, got, want);
        assert_true(fabs(got - want) <= 0x1p-10 * fabs(want));
    }
    weft_tensor_release(r);
    weft_tensor_release(xv);
}

/* Integer inputs carry no gradient (a gradient with respect to one is
 * refused), as before. */
static void test_dtypes_integer_input_is_disconnected(void **state)
{
    weft_graph_t *g = *state;
    int64_t n = 3;
    weft_var_t *i = fx_var(g, WEFT_INT16, 1, &n), *x = fx_var(g, WEFT_FLOAT32, 1, &n), *c;
    assert_non_null(c = weft_sum(g, weft_mul(g, weft_exp(g, i), x), 0, NULL, false));
    assert_int_equal(weft_type_dtype(weft_var_type(c)), WEFT_FLOAT32); /* exp(int16): float32 */
    weft_var_t *dx;
    assert_non_null(dx = weft_grad(g, c, x));
    assert_int_equal(weft_type_dtype(weft_var_type(dx)), WEFT_FLOAT32);
    fx_expect_error(g, weft_grad(g, c, i), WEFT_ETYPE, "");
}

/* A Composite (a*b - a) * b on each new dtype gives the unfused graph's
 * bits (wrapping integers; float16 rounded after every step); integer Pow
 * is not fused. */
static void test_dtypes_composite_equals_unfused(void **state)
{
    weft_graph_t *g = *state;
    static const weft_dtype_t dts[] = {WEFT_INT8,   WEFT_INT16,  WEFT_UINT8,  WEFT_UINT16,
                                       WEFT_UINT32, WEFT_UINT64, WEFT_FLOAT16};
    const weft_composite_step_t prog[3] = {
        {WEFT_ELEMWISE_MUL, {0, 1}}, {WEFT_ELEMWISE_SUB, {2, 0}}, {WEFT_ELEMWISE_MUL, {3, 1}}};
    int64_t n = 5;
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
        weft_var_t *a = fx_var(g, dts[d], 1, &n), *b = fx_var(g, dts[d], 1, &n), *in[2] = {a, b};
        weft_var_t *fused, *plain;
        assert_non_null(fused = weft_composite(g, 2, in, 3, prog));
        assert_non_null(plain = weft_mul(g, weft_sub(g, weft_mul(g, a, b), a), b));
        weft_tensor_t *va = fx_tensor(dts[d], 1, &n, (double[]){100, 3, 0.5, 7, 250});
        weft_tensor_t *vb = fx_tensor(dts[d], 1, &n, (double[]){99, 2, 3, 0.25, 200});
        weft_tensor_t *vals[2] = {va, vb};
        weft_tensor_t *rf = fx_eval(g, 2, in, vals, fused), *rp = fx_eval(g, 2, in, vals, plain);
        assert_int_equal(weft_tensor_dtype(rf), dts[d]);
        assert_memory_equal(weft_tensor_data(rf), weft_tensor_data(rp),
                            (size_t)n * weft_dtype_size(dts[d]));
        weft_tensor_release(rf);
        weft_tensor_release(rp);
        weft_tensor_release(va);
        weft_tensor_release(vb);
    }
    weft_var_t *i8 = fx_var(g, WEFT_INT8, 1, &n), *in2[2] = {i8, i8};
    const weft_composite_step_t pw = {WEFT_ELEMWISE_POW, {0, 1}};
    fx_expect_error(g, weft_composite(g, 2, in2, 1, &pw), WEFT_ETYPE,
                    "Composite: step 0 (Pow) on int8 is not fused (integer Pow refuses negative "
                    "exponents at run time, which a program cannot)");
}

/* Dot takes float32/float64 only: NumPy's integer and float16 matmul are
 * refused by name (docs/dtypes.md §3). */
static void test_dtypes_dot_refuses_integers_and_float16(void **state)
{
    weft_graph_t *g = *state;
    int64_t s[2] = {2, 2};
    weft_var_t *a = fx_var(g, WEFT_INT8, 2, s), *h = fx_var(g, WEFT_FLOAT16, 2, s);
    fx_expect_error(g, weft_dot(g, a, a), WEFT_ETYPE,
                    "Dot: input 0 has type int8[2,2] (need a float32/float64/complex64/complex128 tensor)");
    fx_expect_error(g, weft_dot(g, h, h), WEFT_ETYPE,
                    "Dot: input 0 has type float16[2,2] (need a float32/float64/complex64/complex128 tensor)");
}

/* complex dtypes mix with the real ones as NumPy's promotion says; the
 * orderings refuse them by name (docs/dtypes.md "Complex numbers"). */
static void test_dtypes_complex_kinds_promote_or_refuse(void **state)
{
    weft_graph_t *g = *state;
    int64_t n = 2;
    weft_var_t *c = fx_var(g, WEFT_COMPLEX64, 1, &n), *f = fx_var(g, WEFT_FLOAT32, 1, &n);
    weft_var_t *i = fx_var(g, WEFT_INT16, 1, &n), *y;
    assert_non_null(y = weft_exp(g, c));
    assert_int_equal(weft_type_dtype(weft_var_type(y)), WEFT_COMPLEX64);
    assert_non_null(y = weft_add(g, c, f));
    assert_int_equal(weft_type_dtype(weft_var_type(y)), WEFT_COMPLEX64);
    assert_non_null(y = weft_add(g, c, i)); /* int16 + complex64: complex64 */
    assert_int_equal(weft_type_dtype(weft_var_type(y)), WEFT_COMPLEX64);
    assert_non_null(y = weft_add(g, c, fx_var(g, WEFT_UINT32, 1, &n)));
    assert_int_equal(weft_type_dtype(weft_var_type(y)), WEFT_COMPLEX128);
    assert_non_null(y = weft_cast(g, c, WEFT_UINT8));
    assert_int_equal(weft_type_dtype(weft_var_type(y)), WEFT_UINT8);
    fx_expect_error(g, weft_lt(g, f, c), WEFT_ETYPE,
                    "Lt: input 1 is complex64; complex numbers have no order");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_dtypes_elemwise_match_numpy_bit_for_bit, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(test_dtypes_negative_integer_exponent_fails_the_node,
                                        fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_dtypes_float16_gradient_stays_float16, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(test_dtypes_integer_input_is_disconnected, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(test_dtypes_composite_equals_unfused, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(test_dtypes_dot_refuses_integers_and_float16, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(test_dtypes_complex_kinds_promote_or_refuse, fx_setup,
                                        fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
