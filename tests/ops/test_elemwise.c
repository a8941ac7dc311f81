/* Elementwise ops: exact small cases (broadcasting, size-1 and empty
 * dimensions, 0-d, integers, comparisons, switch, cast, NaN), every kind
 * against a naive reference on seeded random data with strided/transposed
 * inputs, in-place variants (same values, written into the input), static
 * type/shape inference and bad inputs with exact statuses. Gradients:
 * test_elemwise_grad.c. */
#include "ops_fixture.h"
#include "weft/composite.h"

static const int64_t S23[2] = {2, 3}, S13[2] = {1, 3}, S3[1] = {3};

static void test_elemwise_add_broadcasts_lower_rank_input(void **state)
{
    weft_graph_t *g = *state;
    weft_var_t *a = fx_var(g, WEFT_FLOAT64, 2, S23), *b = fx_var(g, WEFT_FLOAT64, 1, S3), *y;
    assert_non_null(y = weft_add(g, a, b));
    const weft_type_t *t = weft_var_type(y);
    assert_int_equal(weft_type_ndim(t), 2);
    assert_int_equal(weft_type_dim(t, 0), 2);
    assert_int_equal(weft_type_dim(t, 1), 3);
    /* the constructor inserted a DimShuffle for b and recorded this file */
    const char *file;
    int line;
    weft_apply_trace(weft_var_owner(y), &file, &line);
    assert_non_null(strstr(file, "test_elemwise.c"));
    assert_string_equal(weft_op_name(weft_apply_op(weft_var_owner(weft_apply_input(
                            weft_var_owner(y), 1)))),
                        "DimShuffle");
    weft_tensor_t *va = fx_tensor(WEFT_FLOAT64, 2, S23, (double[]){1, 2, 3, 4, 5, 6});
    weft_tensor_t *vb = fx_tensor(WEFT_FLOAT64, 1, S3, (double[]){10, 20, 30});
    weft_var_t *vars[2] = {a, b};
    weft_tensor_t *vals[2] = {va, vb};
    weft_tensor_t *r = fx_eval(g, 2, vars, vals, y);
    fx_expect(r, (double[]){11, 22, 33, 14, 25, 36}, 6, 0);
    weft_tensor_release(r);
    weft_tensor_release(va);
    weft_tensor_release(vb);
}

static void test_elemwise_static_shape_inference_follows_broadcast_rules(void **state)
{
    weft_graph_t *g = *state;
    int64_t unk[2] = {-1, 1}, one3[2] = {1, 3}, u4[2] = {-1, 4}, s34[2] = {3, 4};
    weft_var_t *a = fx_var(g, WEFT_FLOAT32, 2, unk), *b = fx_var(g, WEFT_FLOAT32, 2, one3), *y;
    assert_non_null(y = weft_mul(g, a, b));
    assert_int_equal(weft_type_dim(weft_var_type(y), 0), WEFT_DIM_UNKNOWN); /* ? vs 1 */
    assert_int_equal(weft_type_dim(weft_var_type(y), 1), 3);                /* 1 vs 3 */
    weft_var_t *c = fx_var(g, WEFT_FLOAT32, 2, u4), *d = fx_var(g, WEFT_FLOAT32, 2, s34);
    assert_non_null(y = weft_sub(g, c, d));
    assert_int_equal(weft_type_dim(weft_var_type(y), 0), 3); /* ? vs 3: 3 */
    int64_t s35[2] = {3, 5};
    weft_var_t *e = fx_var(g, WEFT_FLOAT32, 2, s35);
    fx_expect_error(g, y = weft_add(g, d, e), WEFT_ESHAPE,
                    "input 0 has length 4 and input 1 length 5 in dimension 1");
    assert_null(y);
}

/* y was built and has dtype dt. */
static void expect_dtype(const weft_var_t *y, weft_dtype_t dt)
{
    assert_non_null(y);
    assert_int_equal(weft_type_dtype(weft_var_type(y)), dt);
}

static void test_elemwise_dtype_rules_and_bad_dtypes(void **state)
{
    weft_graph_t *g = *state;
    weft_var_t *i32 = fx_var(g, WEFT_INT32, 1, S3), *f32 = fx_var(g, WEFT_FLOAT32, 1, S3);
    weft_var_t *f64 = fx_var(g, WEFT_FLOAT64, 1, S3), *i64 = fx_var(g, WEFT_INT64, 1, S3);
    weft_var_t *b = fx_var(g, WEFT_BOOL, 1, S3), *y;
    /* NumPy's result_type: int32 or int64 with float32 is float64 */
    expect_dtype(weft_add(g, i32, f32), WEFT_FLOAT64);
    expect_dtype(weft_add(g, i64, f32), WEFT_FLOAT64);
    expect_dtype(weft_mul(g, f32, f64), WEFT_FLOAT64);
    expect_dtype(weft_add(g, b, i32), WEFT_INT32);
    expect_dtype(weft_lt(g, i32, f64), WEFT_BOOL);
    /* float-only kinds on integers compute in float_of; true division float64 */
    expect_dtype(weft_exp(g, i32), WEFT_FLOAT64);
    expect_dtype(weft_div(g, i32, i64), WEFT_FLOAT64);
    expect_dtype(weft_sqrt(g, b), WEFT_FLOAT16);
    /* bool arithmetic: + and * stay bool, Pow and Sqr int8, - and Neg refused */
    expect_dtype(weft_add(g, b, b), WEFT_BOOL);
    expect_dtype(weft_mul(g, b, b), WEFT_BOOL);
    expect_dtype(weft_sqr(g, b), WEFT_INT8);
    expect_dtype(weft_pow(g, b, b), WEFT_INT8);
    expect_dtype(weft_pow(g, i32, i64), WEFT_INT64);
    fx_expect_error(g, weft_sub(g, b, b), WEFT_ETYPE,
                    "Sub: bool - bool is not supported (as in NumPy): use a logical xor, or Cast "
                    "the inputs to a number");
    fx_expect_error(g, weft_neg(g, b), WEFT_ETYPE,
                    "Neg: negating a bool is not supported (as in NumPy): use a logical not, or "
                    "Cast to a number");
    fx_expect_error(g, weft_sgn(g, b), WEFT_ETYPE, "bool is not supported by Sgn");
    fx_expect_error(g, weft_switch(g, f32, f32, f64), WEFT_ETYPE,
                    "condition (input 0) is float32, not bool");
    assert_non_null(y = weft_switch(g, b, i32, f64));
    assert_int_equal(weft_type_dtype(weft_var_type(y)), WEFT_FLOAT64);
}

static void test_elemwise_bad_arguments_return_exact_statuses(void **state)
{
    weft_graph_t *g = *state, *g2;
    weft_var_t *x = fx_var(g, WEFT_FLOAT64, 1, S3), *y = (weft_var_t *)1, *in[3] = {x, x, x};
    const weft_op_t *op;
    assert_null(weft_add(NULL, x, x));
    char want[256];
    snprintf(want, sizeof want, "Add at %s:%d: input 1 is NULL", __FILE__, __LINE__ + 1);
    fx_expect_error(g, y = weft_add(g, x, NULL), WEFT_EINVAL, want);
    assert_null(y);
    fx_expect_error(g, weft_elemwise(g, WEFT_ELEMWISE_TANH, 1, NULL), WEFT_EINVAL,
                    "Tanh: NULL inputs array");
    fx_expect_error(g, y = weft_elemwise(g, (weft_elemwise_kind_t)99, 1, in), WEFT_EINVAL, "");
    fx_expect_error(g, weft_elemwise(g, WEFT_ELEMWISE_ADD, 3, in), WEFT_EINVAL,
                    "Add takes 2 inputs, got 3");
    fx_expect_error(g, y = weft_elemwise(g, WEFT_ELEMWISE_CAST, 1, in), WEFT_EINVAL, "");
    fx_expect_status(g, weft_elemwise_op(g, WEFT_ELEMWISE_ADD, 2, WEFT_BOOL, &op), WEFT_EINVAL,
                     "in-place input 2 outside [-1, 2)");
    assert_int_equal(weft_elemwise_op(g, WEFT_ELEMWISE_CAST, -1, (weft_dtype_t)WEFT_DTYPE_COUNT, &op),
                     WEFT_EINVAL);
    assert_int_equal(weft_elemwise_op(g, WEFT_ELEMWISE_CAST, -1, (weft_dtype_t)99, &op),
                     WEFT_EINVAL);
    /* make_node directly with a wrong rank mix (the constructors pad, apply_create does not) */
    int64_t s23[2] = {2, 3};
    weft_var_t *m = fx_var(g, WEFT_FLOAT64, 2, s23), *mix[2] = {m, x};
    assert_int_equal(weft_elemwise_op(g, WEFT_ELEMWISE_ADD, -1, WEFT_BOOL, &op), WEFT_OK);
    fx_expect_error(g, weft_apply_create(g, op, 2, mix), WEFT_ETYPE,
                    "input 1 has 1 dimensions, input 0 has 2");
    assert_int_equal(weft_graph_create(NULL, &g2), WEFT_OK);
    weft_var_t *foreign = fx_var(g2, WEFT_FLOAT64, 1, S3);
    fx_expect_error(g, y = weft_add(g, x, foreign), WEFT_EFOREIGN, "");
    weft_graph_destroy(g2);
    const weft_type_t *nt;
    weft_var_t *nv;
    assert_int_equal(weft_type_null(g, &nt), WEFT_OK);
    assert_non_null(nv = weft_var_create(g, nt, NULL));
    fx_expect_error(g, y = weft_add(g, x, nv), WEFT_ETYPE, "");
    assert_int_equal(weft_elemwise_arity(WEFT_ELEMWISE_SWITCH), 3);
    assert_int_equal(weft_elemwise_arity((weft_elemwise_kind_t)-1), 0);
    assert_null(weft_elemwise_name(WEFT_ELEMWISE_KIND_COUNT));
    assert_string_equal(weft_elemwise_name(WEFT_ELEMWISE_LOG1P), "Log1p");
}

static void test_elemwise_integer_ops_comparisons_and_switch_exact(void **state)
{
    weft_graph_t *g = *state;
    int64_t s4[1] = {4};
    weft_var_t *a = fx_var(g, WEFT_INT32, 1, s4), *b = fx_var(g, WEFT_INT32, 1, s4);
    weft_tensor_t *va = fx_tensor(WEFT_INT32, 1, s4, (double[]){-3, 0, 7, 2147483647});
    weft_tensor_t *vb = fx_tensor(WEFT_INT32, 1, s4, (double[]){2, 0, -7, 1});
    weft_var_t *vars[2] = {a, b};
    weft_tensor_t *vals[2] = {va, vb};
    struct { weft_elemwise_kind_t k; double want[4]; } cases[] = {
        {WEFT_ELEMWISE_ADD, {-1, 0, 0, -2147483648.0}}, /* wraps */
        {WEFT_ELEMWISE_SUB, {-5, 0, 14, 2147483646}},
        {WEFT_ELEMWISE_MUL, {-6, 0, -49, 2147483647}},
        {WEFT_ELEMWISE_MAXIMUM, {2, 0, 7, 2147483647}},
        {WEFT_ELEMWISE_MINIMUM, {-3, 0, -7, 1}},
        {WEFT_ELEMWISE_LT, {1, 0, 0, 0}},
        {WEFT_ELEMWISE_LE, {1, 1, 0, 0}},
        {WEFT_ELEMWISE_GT, {0, 0, 1, 1}},
        {WEFT_ELEMWISE_GE, {0, 1, 1, 1}},
        {WEFT_ELEMWISE_EQ, {0, 1, 0, 0}},
        {WEFT_ELEMWISE_NE, {1, 0, 1, 1}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        weft_var_t *y;
        assert_non_null(y = weft_binary(g, cases[c].k, a, b));
        weft_tensor_t *r = fx_eval(g, 2, vars, vals, y);
        fx_expect(r, cases[c].want, 4, 0);
        weft_tensor_release(r);
    }
    weft_var_t *n, *ab, *sq, *re, *sg, *cond, *sw;
    assert_non_null(n = weft_neg(g, a));
    assert_non_null(ab = weft_abs(g, a));
    assert_non_null(sq = weft_sqr(g, b));
    assert_non_null(re = weft_relu(g, a));
    assert_non_null(sg = weft_sgn(g, b));
    assert_non_null(cond = weft_gt(g, a, b));
    assert_non_null(sw = weft_switch(g, cond, a, b));
    weft_var_t *outs[5] = {n, ab, sq, re, sg};
    double want[5][4] = {{3, 0, -7, -2147483647}, {3, 0, 7, 2147483647}, {4, 0, 49, 1},
                         {0, 0, 7, 2147483647}, {1, 0, -1, 1}};
    for (int k = 0; k < 5; k++) {
        weft_tensor_t *r = fx_eval(g, 2, vars, vals, outs[k]);
        assert_int_equal(weft_tensor_dtype(r), WEFT_INT32);
        fx_expect(r, want[k], 4, 0);
        weft_tensor_release(r);
    }
    weft_tensor_t *r = fx_eval(g, 2, vars, vals, sw);
    fx_expect(r, (double[]){2, 0, 7, 2147483647}, 4, 0);
    weft_tensor_release(r);
    weft_tensor_release(va);
    weft_tensor_release(vb);
}

static void test_elemwise_mixed_dtypes_are_converted(void **state)
{
    weft_graph_t *g = *state;
    weft_var_t *a = fx_var(g, WEFT_INT32, 1, S3), *b = fx_var(g, WEFT_FLOAT32, 1, S3), *y, *c;
    weft_var_t *bl = fx_var(g, WEFT_BOOL, 1, S3);
    assert_non_null(y = weft_div(g, a, b));
    assert_non_null(c = weft_eq(g, a, b));
    weft_var_t *s, *vars[3] = {a, b, bl};
    assert_non_null(s = weft_mul(g, bl, b));
    weft_tensor_t *vals[3] = {fx_tensor(WEFT_INT32, 1, S3, (double[]){1, 2, 3}),
                              fx_tensor(WEFT_FLOAT32, 1, S3, (double[]){4, 2, 0.5}),
                              fx_tensor(WEFT_BOOL, 1, S3, (double[]){1, 0, 1})};
    weft_tensor_t *r = fx_eval(g, 3, vars, vals, y);
    assert_int_equal(weft_tensor_dtype(r), WEFT_FLOAT64); /* int32 / float32: float64 */
    fx_expect(r, (double[]){0.25, 1, 6}, 3, 0);
    weft_tensor_release(r);
    r = fx_eval(g, 3, vars, vals, c);
    fx_expect(r, (double[]){0, 1, 0}, 3, 0);
    weft_tensor_release(r);
    r = fx_eval(g, 3, vars, vals, s);
    fx_expect(r, (double[]){4, 0, 0.5}, 3, 0);
    weft_tensor_release(r);
    for (int i = 0; i < 3; i++) weft_tensor_release(vals[i]);
}

static void test_elemwise_cast_truncates_and_makes_bool(void **state)
{
    weft_graph_t *g = *state;
    weft_var_t *x = fx_var(g, WEFT_FLOAT64, 1, S3), *ci, *cb, *same;
    assert_non_null(ci = weft_cast(g, x, WEFT_INT32));
    assert_non_null(cb = weft_cast(g, x, WEFT_BOOL));
    assert_non_null(same = weft_cast(g, x, WEFT_FLOAT64));
    assert_ptr_equal(same, x);
    char buf[64];
    weft_op_print(weft_apply_op(weft_var_owner(cb)), buf, sizeof buf);
    assert_string_equal(buf, "Cast{dtype=bool}");
    weft_tensor_t *v = fx_tensor(WEFT_FLOAT64, 1, S3, (double[]){-2.9, 0.0, 7.5});
    weft_tensor_t *r = fx_eval(g, 1, &x, &v, ci);
    assert_int_equal(weft_tensor_dtype(r), WEFT_INT32);
    fx_expect(r, (double[]){-2, 0, 7}, 3, 0);
    weft_tensor_release(r);
    r = fx_eval(g, 1, &x, &v, cb);
    fx_expect(r, (double[]){1, 0, 1}, 3, 0);
    weft_tensor_release(r);
    weft_tensor_release(v);
}

/* Cast of log(-1) (NaN), of infinities and of out-of-range values to int32
 * gives INT32_MIN, as NumPy on x86-64 (weft/tensor.h, "Conversions"); in
 * range it truncates toward zero. */
static void test_elemwise_cast_of_nan_inf_and_out_of_range_gives_int_min(void **state)
{
    weft_graph_t *g = *state;
    int64_t s6[1] = {6};
    weft_var_t *x = fx_var(g, WEFT_FLOAT32, 1, s6), *l, *c32, *c64;
    assert_non_null(l = weft_log(g, x));
    assert_non_null(c32 = weft_cast(g, l, WEFT_INT32));
    assert_non_null(c64 = weft_cast(g, x, WEFT_INT64));
    float in[6] = {-1.0f, 0.0f, INFINITY, 1e20f, 3e9f, 20.0f};
    weft_tensor_t *v, *r;
    assert_int_equal(weft_tensor_from_data(WEFT_FLOAT32, 1, s6, NULL, in, &v), WEFT_OK);
    r = fx_eval(g, 1, &x, &v, c32); /* log: NaN, -inf, inf, 46.05, 21.82, 2.99 */
    assert_memory_equal(weft_tensor_data(r),
                        ((int32_t[]){INT32_MIN, INT32_MIN, INT32_MIN, 46, 21, 2}), 24);
    weft_tensor_release(r);
    r = fx_eval(g, 1, &x, &v, c64);
    assert_memory_equal(weft_tensor_data(r),
                        ((int64_t[]){-1, 0, INT64_MIN, INT64_MIN, 3000000000, 20}), 48);
    weft_tensor_release(r);
    weft_tensor_release(v);
}

static void test_elemwise_empty_size_one_and_zero_dim_shapes(void **state)
{
    weft_graph_t *g = *state;
    int64_t e3[2] = {0, 3}, one1[2] = {1, 1};
    weft_var_t *e = fx_var(g, WEFT_FLOAT64, 2, e3), *r13 = fx_var(g, WEFT_FLOAT64, 2, S13);
    weft_var_t *s = fx_var(g, WEFT_FLOAT64, 0, NULL), *o = fx_var(g, WEFT_FLOAT64, 2, one1), *y;
    assert_non_null(y = weft_add(g, e, r13));
    weft_var_t *vars[4] = {e, r13, s, o};
    weft_tensor_t *vals[4] = {fx_tensor(WEFT_FLOAT64, 2, e3, NULL),
                              fx_tensor(WEFT_FLOAT64, 2, S13, (double[]){1, 2, 3}),
                              fx_tensor(WEFT_FLOAT64, 0, NULL, (double[]){5}),
                              fx_tensor(WEFT_FLOAT64, 2, one1, (double[]){-1})};
    weft_tensor_t *r = fx_eval(g, 4, vars, vals, y);
    assert_int_equal(weft_tensor_dim(r, 0), 0);
    assert_int_equal(weft_tensor_dim(r, 1), 3);
    weft_tensor_release(r);
    assert_non_null(y = weft_mul(g, s, r13)); /* 0-d scalar broadcast */
    r = fx_eval(g, 4, vars, vals, y);
    fx_expect(r, (double[]){5, 10, 15}, 3, 0);
    weft_tensor_release(r);
    assert_non_null(y = weft_sub(g, s, s));
    assert_int_equal(weft_type_ndim(weft_var_type(y)), 0);
    r = fx_eval(g, 4, vars, vals, y);
    fx_expect(r, (double[]){0}, 1, 0);
    weft_tensor_release(r);
    assert_non_null(y = weft_add(g, o, r13)); /* [1,1] + [1,3] */
    r = fx_eval(g, 4, vars, vals, y);
    fx_expect(r, (double[]){0, 1, 2}, 3, 0);
    weft_tensor_release(r);
    for (int i = 0; i < 4; i++) weft_tensor_release(vals[i]);
}

static void test_elemwise_maximum_minimum_propagate_nan(void **state)
{
    weft_graph_t *g = *state;
    weft_var_t *a = fx_var(g, WEFT_FLOAT64, 1, S3), *b = fx_var(g, WEFT_FLOAT64, 1, S3), *mx, *mn;
    assert_non_null(mx = weft_maximum(g, a, b));
    assert_non_null(mn = weft_minimum(g, a, b));
    weft_var_t *vars[2] = {a, b};
    weft_tensor_t *vals[2] = {fx_tensor(WEFT_FLOAT64, 1, S3, (double[]){NAN, 1, 2}),
                              fx_tensor(WEFT_FLOAT64, 1, S3, (double[]){0, NAN, 3})};
    weft_tensor_t *r = fx_eval(g, 2, vars, vals, mx);
    fx_expect(r, (double[]){NAN, NAN, 3}, 3, 0);
    weft_tensor_release(r);
    r = fx_eval(g, 2, vars, vals, mn);
    fx_expect(r, (double[]){NAN, NAN, 2}, 3, 0);
    weft_tensor_release(r);
    weft_tensor_release(vals[0]);
    weft_tensor_release(vals[1]);
}

static void test_elemwise_runtime_broadcast_needs_static_one(void **state)
{
    weft_graph_t *g = *state;
    int64_t u[1] = {-1}, s1[1] = {1};
    weft_var_t *a = fx_var(g, WEFT_FLOAT64, 1, u), *b = fx_var(g, WEFT_FLOAT64, 1, u), *y;
    assert_non_null(y = weft_add(g, a, b));
    weft_var_t *vars[2] = {a, b};
    weft_tensor_t *vals[2] = {fx_tensor(WEFT_FLOAT64, 1, S3, (double[]){1, 2, 3}),
                              fx_tensor(WEFT_FLOAT64, 1, s1, (double[]){1})};
    weft_tensor_t *r = (weft_tensor_t *)1;
    fx_expect_status(g, weft_eval(g, 2, vars, vals, 1, &y, &r), WEFT_ESHAPE,
                     "input 1 has length 1 in dimension 0 where the result has 3 (run-time "
                     "broadcasting needs static length 1)");
    assert_null(r);
    assert_non_null(strstr(weft_graph_last_error(g), "Add"));
    weft_tensor_release(vals[1]);
    vals[1] = fx_tensor(WEFT_FLOAT64, 1, (int64_t[]){2}, (double[]){1, 2});
    fx_expect_status(g, weft_eval(g, 2, vars, vals, 1, &y, &r), WEFT_ESHAPE,
                     "input 1 has length 2 in dimension 0 where the result has 3");
    weft_tensor_release(vals[0]);
    weft_tensor_release(vals[1]);
}

/* ---- random data vs a naive reference ------------------------------------------------ */

static double ref_apply(weft_elemwise_kind_t k, double x, double y)
{
    switch (k) {
    case WEFT_ELEMWISE_NEG: return -x;
    case WEFT_ELEMWISE_ABS: return fabs(x);
    case WEFT_ELEMWISE_SGN: return x > 0 ? 1 : (x < 0 ? -1 : 0);
    case WEFT_ELEMWISE_EXP: return exp(x);
    case WEFT_ELEMWISE_LOG: return log(x);
    case WEFT_ELEMWISE_LOG1P: return log1p(x);
    case WEFT_ELEMWISE_SQRT: return sqrt(x);
    case WEFT_ELEMWISE_SQR: return x * x;
    case WEFT_ELEMWISE_TANH: return tanh(x);
    case WEFT_ELEMWISE_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case WEFT_ELEMWISE_RELU: return x > 0 ? x : 0;
    case WEFT_ELEMWISE_SIN: return sin(x);
    case WEFT_ELEMWISE_COS: return cos(x);
    case WEFT_ELEMWISE_ADD: return x + y;
    case WEFT_ELEMWISE_SUB: return x - y;
    case WEFT_ELEMWISE_MUL: return x * y;
    case WEFT_ELEMWISE_DIV: return x / y;
    case WEFT_ELEMWISE_POW: return pow(x, y);
    case WEFT_ELEMWISE_MAXIMUM: return x > y ? x : y;
    case WEFT_ELEMWISE_MINIMUM: return x < y ? x : y;
    case WEFT_ELEMWISE_SECOND: return y;
    case WEFT_ELEMWISE_LT: return x < y;
    case WEFT_ELEMWISE_LE: return x <= y;
    case WEFT_ELEMWISE_GT: return x > y;
    case WEFT_ELEMWISE_GE: return x >= y;
    case WEFT_ELEMWISE_EQ: return x == y;
    case WEFT_ELEMWISE_NE: return x != y;
    default: return NAN;
    }
}

static bool kind_needs_positive(weft_elemwise_kind_t k)
{
    return k == WEFT_ELEMWISE_LOG || k == WEFT_ELEMWISE_SQRT || k == WEFT_ELEMWISE_POW ||
           k == WEFT_ELEMWISE_LOG1P;
}

/* A [rows, cols] tensor whose memory is the transpose: non-contiguous. */
static weft_tensor_t *transposed_random(weft_dtype_t dt, int64_t rows, int64_t cols, double lo,
                                        double hi, uint64_t *seed)
{
    int64_t tshape[2] = {cols, rows}, shape[2] = {rows, cols}, st[2] = {1, rows};
    weft_tensor_t *base = fx_random(dt, 2, tshape, lo, hi, 0, seed), *v;
    assert_int_equal(weft_tensor_view(base, 2, shape, st, 0, &v), WEFT_OK);
    weft_tensor_release(base);
    return v;
}

static void test_elemwise_unary_kinds_match_reference_on_strided_random_data(void **state)
{
    weft_graph_t *g = *state;
    uint64_t seed = 20240611;
    printf("seed=%llu\n", (unsigned long long)seed);
    int64_t shape[2] = {7, 9};
    weft_dtype_t dts[2] = {WEFT_FLOAT64, WEFT_FLOAT32};
    for (int k = WEFT_ELEMWISE_NEG; k <= WEFT_ELEMWISE_COS; k++) {
        for (int di = 0; di < 2; di++) {
            double lo = kind_needs_positive((weft_elemwise_kind_t)k) ? 0.1 : -3.0;
            weft_tensor_t *x = transposed_random(dts[di], 7, 9, lo, 3.0, &seed);
            weft_var_t *xv = fx_var(g, dts[di], 2, shape), *y;
            assert_non_null(y = weft_unary(g, (weft_elemwise_kind_t)k, xv));
            weft_tensor_t *r = fx_eval(g, 1, &xv, &x, y);
            assert_true(weft_tensor_is_contiguous(r));
            double want[63];
            for (size_t i = 0; i < 63; i++)
                want[i] = ref_apply((weft_elemwise_kind_t)k, weft_tensor_flat_get(x, i), 0);
            fx_expect(r, want, 63, di == 0 ? 1e-15 : 2e-6);
            weft_tensor_release(r);
            weft_tensor_release(x);
        }
    }
}

static void test_elemwise_binary_kinds_match_reference_with_broadcasting(void **state)
{
    weft_graph_t *g = *state;
    uint64_t seed = 77;
    printf("seed=%llu\n", (unsigned long long)seed);
    int64_t sa[3] = {4, 1, 5}, sb[3] = {1, 3, 5};
    for (int k = WEFT_ELEMWISE_ADD; k <= WEFT_ELEMWISE_NE; k++) {
        for (int di = 0; di < 2; di++) {
            weft_dtype_t dt = di ? WEFT_FLOAT32 : WEFT_FLOAT64;
            double lo = kind_needs_positive((weft_elemwise_kind_t)k) ? 0.1 : -3.0;
            weft_tensor_t *va = fx_random(dt, 3, sa, lo, 3.0, 0, &seed);
            weft_tensor_t *vb = fx_random(dt, 3, sb, lo, 3.0, 0, &seed);
            if (k >= WEFT_ELEMWISE_LT) /* make some elements equal */
                weft_tensor_set(vb, (int64_t[]){0, 1, 2}, weft_tensor_flat_get(va, 2));
            weft_var_t *a = fx_var(g, dt, 3, sa), *b = fx_var(g, dt, 3, sb), *y;
            assert_non_null(y = weft_binary(g, (weft_elemwise_kind_t)k, a, b));
            weft_var_t *vars[2] = {a, b};
            weft_tensor_t *vals[2] = {va, vb};
            weft_tensor_t *r = fx_eval(g, 2, vars, vals, y);
            double want[60];
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 3; j++)
                    for (int l = 0; l < 5; l++)
                        want[(i * 3 + j) * 5 + l] =
                            ref_apply((weft_elemwise_kind_t)k,
                                      weft_tensor_flat_get(va, (size_t)(i * 5 + l)),
                                      weft_tensor_flat_get(vb, (size_t)(j * 5 + l)));
            fx_expect(r, want, 60, di == 0 ? 1e-15 : 2e-6);
            weft_tensor_release(r);
            weft_tensor_release(va);
            weft_tensor_release(vb);
        }
    }
}

static void test_elemwise_scalar_broadcast_and_negative_stride_inputs(void **state)
{
    weft_graph_t *g = *state;
    int64_t s100[1] = {100}, rev[1] = {-1}, one[1] = {1};
    double data[100];
    for (int i = 0; i < 100; i++) data[i] = i;
    weft_tensor_t *base, *r, *v;
    assert_int_equal(weft_tensor_from_data(WEFT_FLOAT64, 1, s100, NULL, data, &base), WEFT_OK);
    assert_int_equal(weft_tensor_view(base, 1, s100, rev, 99, &v), WEFT_OK); /* x[::-1] */
    weft_var_t *x = fx_var(g, WEFT_FLOAT64, 1, s100), *c = fx_var(g, WEFT_FLOAT64, 1, one), *y;
    assert_non_null(y = weft_mul(g, c, x));
    weft_var_t *vars[2] = {x, c};
    weft_tensor_t *vals[2] = {v, fx_tensor(WEFT_FLOAT64, 1, one, (double[]){2})};
    r = fx_eval(g, 2, vars, vals, y);
    double want[100];
    for (int i = 0; i < 100; i++) want[i] = 2.0 * (99 - i);
    fx_expect(r, want, 100, 0);
    weft_tensor_release(r);
    weft_tensor_release(vals[1]);
    weft_tensor_release(v);
    weft_tensor_release(base);
}

static void test_elemwise_large_transposed_operand_matches_reference(void **state)
{
    weft_graph_t *g = *state;
    uint64_t seed = 8;
    printf("seed=%llu\n", (unsigned long long)seed);
    int64_t shape[2] = {130, 70}; /* not a multiple of the iterator's 64x64 tiles */
    weft_tensor_t *a = fx_random(WEFT_FLOAT64, 2, shape, -1, 1, 0, &seed);
    weft_tensor_t *b = transposed_random(WEFT_FLOAT64, 130, 70, -1, 1, &seed);
    weft_var_t *va = fx_var(g, WEFT_FLOAT64, 2, shape), *vb = fx_var(g, WEFT_FLOAT64, 2, shape);
    weft_var_t *y, *vars[2] = {va, vb};
    weft_tensor_t *vals[2] = {a, b};
    assert_non_null(y = weft_sub(g, va, vb));
    weft_tensor_t *r = fx_eval(g, 2, vars, vals, y);
    double *want = malloc(130 * 70 * sizeof *want);
    for (size_t i = 0; i < 130 * 70; i++)
        want[i] = weft_tensor_flat_get(a, i) - weft_tensor_flat_get(b, i);
    fx_expect(r, want, 130 * 70, 0);
    free(want);
    weft_tensor_release(r);
    weft_tensor_release(a);
    weft_tensor_release(b);
}

/* Results of 16 MB and more are written with streaming stores
 * (elemwise_kernels.c): float64 Add, float32 Exp, and a row-broadcast Add
 * whose rows (not collapsible: the second operand has stride 0 across rows)
 * start at unaligned addresses, with lengths leaving a partial last line,
 * match the naive loop exactly; an in-place Add of the same size too. */
static void test_elemwise_streamed_large_outputs_match_reference(void **state)
{
    weft_graph_t *g = *state;
    uint64_t seed = 21;
    printf("seed=%llu\n", (unsigned long long)seed);
    int64_t n64[1] = {((int64_t)1 << 21) + 13}, n32[1] = {((int64_t)1 << 22) + 5};
    int64_t rows[2] = {3, ((int64_t)1 << 21) + 3}, row1[2] = {1, ((int64_t)1 << 21) + 3};
    weft_tensor_t *a = fx_random(WEFT_FLOAT64, 1, n64, -1, 1, 0, &seed);
    weft_tensor_t *b = fx_random(WEFT_FLOAT64, 1, n64, -1, 1, 0, &seed);
    weft_tensor_t *c = fx_random(WEFT_FLOAT32, 1, n32, -2, 2, 0, &seed);
    weft_tensor_t *d = fx_random(WEFT_FLOAT64, 2, rows, -1, 1, 0, &seed);
    weft_tensor_t *e = fx_random(WEFT_FLOAT64, 2, row1, -1, 1, 0, &seed);
    weft_var_t *va = fx_var(g, WEFT_FLOAT64, 1, n64), *vb = fx_var(g, WEFT_FLOAT64, 1, n64);
    weft_var_t *vc = fx_var(g, WEFT_FLOAT32, 1, n32), *vd = fx_var(g, WEFT_FLOAT64, 2, rows);
    weft_var_t *ve = fx_var(g, WEFT_FLOAT64, 2, row1);
    weft_var_t *sum, *ex, *rsum;
    assert_non_null(sum = weft_add(g, va, vb));
    assert_non_null(ex = weft_exp(g, vc));
    assert_non_null(rsum = weft_add(g, vd, ve));
    weft_var_t *v2[2] = {va, vb};
    weft_tensor_t *t2[2] = {a, b};
    weft_tensor_t *r_sum = fx_eval(g, 2, v2, t2, sum);
    weft_tensor_t *r_ex = fx_eval(g, 1, &vc, &c, ex);
    weft_var_t *vde[2] = {vd, ve};
    weft_tensor_t *tde[2] = {d, e};
    weft_tensor_t *r_rows = fx_eval(g, 2, vde, tde, rsum);
    size_t bad = 0;
    const double *pa = weft_tensor_data(a), *pb = weft_tensor_data(b), *ps = weft_tensor_data(r_sum);
    for (int64_t i = 0; i < n64[0]; i++) bad += ps[i] != pa[i] + pb[i];
    const float *pc = weft_tensor_data(c), *pe = weft_tensor_data(r_ex);
    for (int64_t i = 0; i < n32[0]; i++) bad += pe[i] != expf(pc[i]);
    const double *pd = weft_tensor_data(d), *pf = weft_tensor_data(e),
                 *pr = weft_tensor_data(r_rows);
    for (int64_t i = 0; i < rows[0] * rows[1]; i++) bad += pr[i] != pd[i] + pf[i % rows[1]];
    assert_int_equal(bad, 0);
    const weft_op_t *add_ip;
    weft_var_t *isum;
    assert_int_equal(weft_elemwise_op(g, WEFT_ELEMWISE_ADD, 0, WEFT_FLOAT64, &add_ip), WEFT_OK);
    assert_non_null(isum = weft_op_call(g, add_ip, 2, v2));
    weft_tensor_t *r_ip = fx_eval(g, 2, v2, t2, isum); /* writes into a */
    assert_ptr_equal(weft_tensor_data(r_ip), weft_tensor_data(a));
    for (int64_t i = 0; i < n64[0]; i++) bad += pa[i] != ps[i];
    assert_int_equal(bad, 0);
    weft_tensor_t *all[] = {a, b, c, d, e, r_sum, r_ex, r_rows, r_ip};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) weft_tensor_release(all[i]);
}

/* ---- in place ------------------------------------------------------------------------ */

static void test_elemwise_inplace_variant_writes_into_its_input(void **state)
{
    weft_graph_t *g = *state;
    weft_var_t *a = fx_var(g, WEFT_FLOAT64, 2, S23), *b = fx_var(g, WEFT_FLOAT64, 2, S13), *y;
    assert_non_null(y = weft_sub(g, a, b));
    const weft_op_t *op = weft_apply_op(weft_var_owner(y)), *ip;
    const weft_op_class_t *cls = weft_op_class(op);
    assert_int_equal(cls->inplace_variant(g, op, 0, &ip), WEFT_OK);
    const weft_op_alias_t *dm;
    size_t n;
    weft_op_destroy_map(ip, &dm, &n);
    assert_int_equal(n, 1);
    assert_int_equal(dm[0].output, 0);
    assert_int_equal(dm[0].input, 0);
    assert_true(weft_op_is_destructive(ip));
    assert_false(weft_op_is_destructive(op));
    char buf[64];
    weft_op_print(ip, buf, sizeof buf);
    assert_string_equal(buf, "Sub{inplace=0}");
    weft_elemwise_kind_t kind;
    int inplace;
    assert_true(weft_elemwise_op_info(ip, &kind, &inplace));
    assert_int_equal(kind, WEFT_ELEMWISE_SUB);
    assert_int_equal(inplace, 0);
    weft_var_t *in[2] = {a, b}, *yi;
    assert_non_null(yi = weft_op_call(g, ip, 2, in));
    weft_tensor_t *vals[2] = {fx_tensor(WEFT_FLOAT64, 2, S23, (double[]){1, 2, 3, 4, 5, 6}),
                              fx_tensor(WEFT_FLOAT64, 2, S13, (double[]){1, 1, 1})};
    weft_tensor_t *r = fx_eval(g, 2, in, vals, y), *ri;
    fx_expect(r, (double[]){0, 1, 2, 3, 4, 5}, 6, 0);
    ri = fx_eval(g, 2, in, vals, yi);
    fx_expect(ri, (double[]){0, 1, 2, 3, 4, 5}, 6, 0);
    assert_ptr_equal(ri, vals[0]); /* the input tensor itself */
    fx_expect(vals[0], (double[]){0, 1, 2, 3, 4, 5}, 6, 0);
    weft_tensor_release(ri);
    weft_tensor_release(r);
    /* input 1 is broadcast (type [1,3] vs output [2,3]): it cannot hold the result */
    assert_int_equal(cls->inplace_variant(g, op, 1, &ip), WEFT_OK);
    fx_expect_error(g, weft_op_call(g, ip, 2, in), WEFT_ETYPE,
                    "input 1 type float64[1,3] differs from the output type float64[2,3]");
    assert_int_equal(cls->inplace_variant(g, op, 2, &ip), WEFT_ENOTIMPL);
    for (int i = 0; i < 2; i++) weft_tensor_release(vals[i]);
}

/* Whether kind k maps float64 inputs (Switch: a bool condition) to a
 * float64 result, so an in-place variant over float64 inputs exists (not the
 * comparisons and predicates, nor the integer-only kinds). */
static bool keeps_float64(weft_graph_t *g, weft_elemwise_kind_t k)
{
    weft_var_t *x = fx_var(g, WEFT_FLOAT64, 2, S23), *c = fx_var(g, WEFT_BOOL, 2, S23), *y;
    weft_var_t *in[3] = {k == WEFT_ELEMWISE_SWITCH ? c : x, x, x};
    y = weft_elemwise(g, k, weft_elemwise_arity(k), in);
    weft_graph_clear_error(g);
    return y && weft_type_dtype(weft_var_type(y)) == WEFT_FLOAT64;
}

static void test_elemwise_every_kind_inplace_matches_out_of_place(void **state)
{
    weft_graph_t *g = *state;
    uint64_t seed = 5;
    printf("seed=%llu\n", (unsigned long long)seed);
    for (int k = 0; k < WEFT_ELEMWISE_KIND_COUNT; k++) {
        size_t ar = weft_elemwise_arity((weft_elemwise_kind_t)k);
        if (k == WEFT_ELEMWISE_CAST || !keeps_float64(g, (weft_elemwise_kind_t)k)) continue;
        weft_var_t *in[3];
        weft_tensor_t *v1[3], *v2[3];
        for (size_t i = 0; i < ar; i++) {
            weft_dtype_t dt = k == WEFT_ELEMWISE_SWITCH && i == 0 ? WEFT_BOOL : WEFT_FLOAT64;
            in[i] = fx_var(g, dt, 2, S23);
            v1[i] = fx_random(dt, 2, S23, 0.1, 2.0, 0, &seed);
            if (dt == WEFT_BOOL) weft_tensor_set(v1[i], (int64_t[]){0, 0}, 0);
            weft_tensor_clone(v1[i], &v2[i]);
        }
        size_t target = k == WEFT_ELEMWISE_SWITCH ? 2 : ar - 1;
        const weft_op_t *op, *ip;
        weft_var_t *y, *yi;
        assert_int_equal(weft_elemwise_op(g, (weft_elemwise_kind_t)k, -1, WEFT_BOOL, &op), WEFT_OK);
        assert_int_equal(weft_op_class(op)->inplace_variant(g, op, target, &ip), WEFT_OK);
        assert_non_null(y = weft_op_call(g, op, ar, in));
        assert_non_null(yi = weft_op_call(g, ip, ar, in));
        weft_tensor_t *r = fx_eval(g, ar, in, v1, y), *ri = fx_eval(g, ar, in, v2, yi);
        bool eq;
        assert_int_equal(weft_tensor_allclose(r, ri, 0, 0, &eq), WEFT_OK);
        assert_true(eq);
        assert_true(weft_tensor_shares_buffer(ri, v2[target]));
        weft_tensor_release(r);
        weft_tensor_release(ri);
        for (size_t i = 0; i < ar; i++) {
            weft_tensor_release(v1[i]);
            weft_tensor_release(v2[i]);
        }
    }
}

/* ---- sigmoid near underflow ----------------------------------------------------------- */

/* The values checked: a sweep across the range where 1 / (1 + exp(-x)) used
 * to underflow early ((-745, -709) float64, (-104, -88.7) float32), a sweep
 * around 0 and the special values. */
static size_t sigmoid_inputs(double *x, size_t cap)
{
    size_t n = 0;
    for (double v = -760; v <= -690 && n < cap; v += 0.25) x[n++] = v;
    for (double v = -110; v <= -80 && n < cap; v += 0.125) x[n++] = v;
    for (double v = -40; v <= 40 && n < cap; v += 0.5) x[n++] = v;
    const double special[] = {-745.13, -745.1, -709.79, -709.78, -103.97, -103.9, -88.73, -88.72,
                              -0.0, 1e-300, 800, -INFINITY, INFINITY, NAN};
    for (size_t i = 0; i < sizeof special / sizeof *special && n < cap; i++) x[n++] = special[i];
    return n;
}

/* NumPy's 1 / (1 + exp(-x)) where exp(-x) is finite, else exp(x) / (1 + exp(x));
 * *ref: the exact value to long double precision. */
static double sigmoid_want(weft_dtype_t dt, double x, long double *ref)
{
    long double lx = dt == WEFT_FLOAT32 ? (float)x : x;
    *ref = lx < 0 ? expl(lx) / (1 + expl(lx)) : 1 / (1 + expl(-lx));
    if (dt == WEFT_FLOAT32) {
        float f = (float)x;
        *ref = (float)*ref;
        return isinf(expf(-f)) ? expf(f) / (1.0f + expf(f)) : 1.0f / (1.0f + expf(-f));
    }
    return isinf(exp(-x)) ? exp(x) / (1.0 + exp(x)) : 1.0 / (1.0 + exp(-x));
}

static void check_sigmoid_values(weft_dtype_t dt, const double *x, const weft_tensor_t *r)
{
    double tiny = dt == WEFT_FLOAT32 ? 0x1p-149 : 0x1p-1074; /* smallest subnormal */
    for (size_t i = 0; i < weft_tensor_size(r); i++) {
        long double ref;
        double want = sigmoid_want(dt, x[i], &ref), got = weft_tensor_flat_get(r, i);
        bool same = isnan(want) ? isnan(got) : (got == want && !signbit(got));
        /* the formula itself is right to an ulp, subnormals to one unit */
        bool close = isnan(want) || fabsl((long double)got - ref) <=
                                        fmaxl(tiny, fabsl(ref) * (dt == WEFT_FLOAT32 ? 0x1p-22 : 0x1p-51));
        if (!same || !close) {
            fprintf(stderr, "%s sigmoid(%.17g): got %a want %a (exact %La)\n", weft_dtype_name(dt),
                    x[i], got, want, ref);
            fail();
        }
    }
}

/* NumPy: sign(-0.0) and sign(0.0) are +0.0, sign(nan) is nan, for both float
 * dtypes, contiguous and through a fused Composite. */
static void test_elemwise_sgn_of_signed_zero_is_positive_zero(void **state)
{
    weft_graph_t *g = *state;
    int64_t n = 5;
    double x[5] = {-0.0, 0.0, NAN, -INFINITY, 3.0};
    const weft_composite_step_t prog[] = {{WEFT_ELEMWISE_SGN, {0, 0}}};
    weft_dtype_t dts[2] = {WEFT_FLOAT64, WEFT_FLOAT32};
    for (int di = 0; di < 2; di++) {
        weft_var_t *xv = fx_var(g, dts[di], 1, &n), *y, *yc;
        assert_non_null(y = weft_sgn(g, xv));
        assert_non_null(yc = weft_composite(g, 1, &xv, 1, prog));
        weft_tensor_t *xt = fx_tensor(dts[di], 1, &n, x);
        weft_var_t *outs[2] = {y, yc};
        for (int k = 0; k < 2; k++) {
            weft_tensor_t *r = fx_eval(g, 1, &xv, &xt, outs[k]);
            for (int i = 0; i < 2; i++) {
                assert_true(weft_tensor_flat_get(r, i) == 0.0);
                assert_false(signbit(weft_tensor_flat_get(r, i)));
            }
            assert_true(isnan(weft_tensor_flat_get(r, 2)));
            assert_true(weft_tensor_flat_get(r, 3) == -1.0 && weft_tensor_flat_get(r, 4) == 1.0);
            weft_tensor_release(r);
        }
        weft_tensor_release(xt);
    }
}

static void test_elemwise_sigmoid_reaches_subnormals_and_composite_agrees(void **state)
{
    weft_graph_t *g = *state;
    double x[700];
    int64_t n = (int64_t)sigmoid_inputs(x, 700), half = n / 2;
    const weft_composite_step_t prog[] = {{WEFT_ELEMWISE_SIGMOID, {0, 0}}};
    weft_dtype_t dts[2] = {WEFT_FLOAT64, WEFT_FLOAT32};
    for (int di = 0; di < 2; di++) {
        weft_var_t *xv = fx_var(g, dts[di], 1, &n), *sv = fx_var(g, dts[di], 1, &half), *y, *yc, *ys;
        assert_non_null(y = weft_sigmoid(g, xv));
        assert_non_null(yc = weft_composite(g, 1, &xv, 1, prog));
        assert_non_null(ys = weft_sigmoid(g, sv));
        weft_tensor_t *xt = fx_tensor(dts[di], 1, &n, x), *every_other;
        weft_tensor_t *r = fx_eval(g, 1, &xv, &xt, y), *rc = fx_eval(g, 1, &xv, &xt, yc);
        check_sigmoid_values(dts[di], x, r);
        assert_int_equal(memcmp(weft_tensor_data(r), weft_tensor_data(rc),
                                (size_t)n * weft_dtype_size(dts[di])), 0);
        /* the strided loop: every other element */
        assert_int_equal(weft_tensor_view(xt, 1, &half, (int64_t[]){2}, 0, &every_other), WEFT_OK);
        weft_tensor_t *rs = fx_eval(g, 1, &sv, &every_other, ys);
        for (int64_t i = 0; i < half; i++)
            assert_true(memcmp((char *)weft_tensor_data(rs) + i * weft_dtype_size(dts[di]),
                               (char *)weft_tensor_data(r) + 2 * i * weft_dtype_size(dts[di]),
                               weft_dtype_size(dts[di])) == 0);
        weft_tensor_release(rs);
        weft_tensor_release(every_other);
        weft_tensor_release(r);
        weft_tensor_release(rc);
        weft_tensor_release(xt);
    }
    /* the value: sigmoid(-720) is the subnormal exp(-720), not 0 */
    weft_var_t *xv = fx_var(g, WEFT_FLOAT64, 0, NULL), *y;
    assert_non_null(y = weft_sigmoid(g, xv));
    weft_tensor_t *xt = fx_tensor(WEFT_FLOAT64, 0, NULL, (double[]){-720}), *r = fx_eval(g, 1, &xv, &xt, y);
    assert_true(weft_tensor_flat_get(r, 0) > 2.0322e-313 && weft_tensor_flat_get(r, 0) < 2.0323e-313);
    weft_tensor_release(r);
    weft_tensor_release(xt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)
        T(test_elemwise_add_broadcasts_lower_rank_input),
        T(test_elemwise_static_shape_inference_follows_broadcast_rules),
        T(test_elemwise_dtype_rules_and_bad_dtypes),
        T(test_elemwise_bad_arguments_return_exact_statuses),
        T(test_elemwise_integer_ops_comparisons_and_switch_exact),
        T(test_elemwise_mixed_dtypes_are_converted),
        T(test_elemwise_cast_truncates_and_makes_bool),
        T(test_elemwise_cast_of_nan_inf_and_out_of_range_gives_int_min),
        T(test_elemwise_empty_size_one_and_zero_dim_shapes),
        T(test_elemwise_maximum_minimum_propagate_nan),
        T(test_elemwise_runtime_broadcast_needs_static_one),
        T(test_elemwise_unary_kinds_match_reference_on_strided_random_data),
        T(test_elemwise_binary_kinds_match_reference_with_broadcasting),
        T(test_elemwise_scalar_broadcast_and_negative_stride_inputs),
        T(test_elemwise_large_transposed_operand_matches_reference),
        T(test_elemwise_streamed_large_outputs_match_reference),
        T(test_elemwise_inplace_variant_writes_into_its_input),
        T(test_elemwise_every_kind_inplace_matches_out_of_place),
        T(test_elemwise_sigmoid_reaches_subnormals_and_composite_agrees),
        T(test_elemwise_sgn_of_signed_zero_is_positive_zero),
#undef T
    };
    return cmocka_run_group_tests_name("elemwise", tests, NULL, NULL);
}
