/* Shape and indexing ops: DimShuffle, Reshape, Subtensor, SetSubtensor and
 * IncSubtensor - static types, values (negative steps, clamped bounds,
 * integer indices, empty slices), view outputs really aliasing their input,
 * in-place variants writing into their input, gradients by finite
 * differences, and bad inputs with exact statuses. */
#include "ops_fixture.h"

static const int64_t S34[2] = {3, 4};

static weft_tensor_t *iota34(void)
{
    double v[12];
    for (int i = 0; i < 12; i++) v[i] = i;
    return fx_tensor(WEFT_FLOAT64, 2, S34, v);
}

static void test_shape_ops_dimshuffle_transposes_as_a_view(void **state)
{
    weft_graph_t *g = *state;
    weft_var_t *x = fx_var(g, WEFT_FLOAT64, 2, S34), *t;
    assert_non_null(t = weft_transpose(g, x));
    assert_int_equal(weft_type_dim(weft_var_type(t), 0), 4);
    assert_true(weft_op_is_view(weft_apply_op(weft_var_owner(t))));
    char buf[64];
    weft_op_print(weft_apply_op(weft_var_owner(t)), buf, sizeof buf);
    assert_string_equal(buf, "DimShuffle{order=(1,0)}");
    weft_tensor_t *v = iota34(), *r = fx_eval(g, 1, &x, &v, t);
    assert_true(weft_tensor_shares_buffer(r, v));
    fx_expect(r, (double[]){0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}, 12, 0);
    weft_tensor_release(v); /* the view keeps the buffer alive */
    fx_expect(r, (double[]){0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}, 12, 0);
    weft_tensor_release(r);
}

static void test_shape_ops_dimshuffle_adds_and_drops_broadcastable_axes(void **state)
{
    weft_graph_t *g = *state;
    int64_t s13[2] = {1, 3};
    weft_var_t *x = fx_var(g, WEFT_INT64, 2, s13), *y, *z;
    int order[3] = {1, WEFT_DIMSHUFFLE_NEW, WEFT_DIMSHUFFLE_NEW};
    assert_non_null(y = weft_dimshuffle(g, x, 3, order)); /* drop axis 0 */
    const weft_type_t *t = weft_var_type(y);
    assert_int_equal(weft_type_ndim(t), 3);
    assert_int_equal(weft_type_dim(t, 0), 3);
    assert_int_equal(weft_type_dim(t, 2), 1);
    char buf[64];
    weft_op_print(weft_apply_op(weft_var_owner(y)), buf, sizeof buf);
    assert_string_equal(buf, "DimShuffle{order=(1,x,x)}");
    weft_tensor_t *v = fx_tensor(WEFT_INT64, 2, s13, (double[]){7, 8, 9});
    weft_tensor_t *r = fx_eval(g, 1, &x, &v, y);
    assert_int_equal(weft_tensor_dim(r, 0), 3);
    fx_expect(r, (double[]){7, 8, 9}, 3, 0);
    weft_tensor_release(r);
    assert_non_null(z = weft_pad_left(g, x, 4));
    assert_int_equal(weft_type_ndim(weft_var_type(z)), 4);
    assert_non_null(z = weft_pad_left(g, x, 2));
    assert_ptr_equal(z, x);
    weft_tensor_release(v);
}

static void test_shape_ops_dimshuffle_bad_orders_return_exact_statuses(void **state)
{
    weft_graph_t *g = *state;
    weft_var_t *x = fx_var(g, WEFT_FLOAT64, 2, S34), *y;
    int drop[1] = {0}, dup[2] = {0, 0}, far[2] = {0, 2}, bad[2] = {-2, 0};
    fx_expect_error(g, weft_dimshuffle(g, x, 1, drop), WEFT_ESHAPE,
                    "dropped axis 1 has static length 4, not 1");
    fx_expect_error(g, weft_dimshuffle(g, x, 2, dup), WEFT_EINVAL, "axis 0 listed twice");
    fx_expect_error(g, weft_dimshuffle(g, x, 2, far), WEFT_EINVAL, "order[1] = 2 outside [-1, 2)");
    fx_expect_error(g, y = weft_dimshuffle(g, x, 2, bad), WEFT_EINVAL, "");
    fx_expect_error(g, y = weft_dimshuffle(g, x, 17, drop), WEFT_EINVAL, "");
    fx_expect_error(g, y = weft_dimshuffle(g, x, 2, NULL), WEFT_EINVAL, "");
    fx_expect_error(g, y = weft_pad_left(g, x, 1), WEFT_EINVAL, "");
    /* unknown static length dropped: accepted statically, checked at run time */
    int64_t u1[2] = {-1, 4};
    weft_var_t *u = fx_var(g, WEFT_FLOAT64, 2, u1);
    fx_expect_error(g, weft_dimshuffle(g, u, 1, (int[]){1}), WEFT_ESHAPE, "dropped axis 0");
}

static void test_shape_ops_reshape_views_contiguous_and_copies_transposed(void **state)
{
    weft_graph_t *g = *state;
    weft_var_t *x = fx_var(g, WEFT_FLOAT64, 2, S34), *r1, *t, *r2;
    int64_t target[3] = {2, -1, 3}, flat[1] = {12};
    assert_non_null(r1 = weft_reshape(g, x, 3, target));
    assert_int_equal(weft_type_dim(weft_var_type(r1), 1), 2); /* -1 inferred statically */
    assert_non_null(t = weft_transpose(g, x));
    assert_non_null(r2 = weft_reshape(g, t, 1, flat));
    char buf[64];
    weft_op_print(weft_apply_op(weft_var_owner(r1)), buf, sizeof buf);
    assert_string_equal(buf, "Reshape{shape=(2,-1,3)}");
    weft_tensor_t *v = iota34(), *a = fx_eval(g, 1, &x, &v, r1), *b = fx_eval(g, 1, &x, &v, r2);
    assert_true(weft_tensor_shares_buffer(a, v));
    assert_false(weft_tensor_shares_buffer(b, v));
    fx_expect(a, (double[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 12, 0);
    fx_expect(b, (double[]){0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}, 12, 0);
    weft_tensor_release(a);
    weft_tensor_release(b);
    weft_tensor_release(v);
}

static void test_shape_ops_reshape_bad_shapes_return_exact_statuses(void **state)
{
    weft_graph_t *g = *state;
    weft_var_t *x = fx_var(g, WEFT_FLOAT64, 2, S34), *y;
    int64_t five[2] = {5, -1}, two[2] = {-1, -1}, neg[1] = {-3}, eleven[1] = {11};
    fx_expect_error(g, weft_reshape(g, x, 2, five), WEFT_ESHAPE,
                    "cannot infer dimension 1: 12 elements in blocks of 5");
    fx_expect_error(g, weft_reshape(g, x, 1, eleven), WEFT_ESHAPE,
                    "input 0 has 12 elements, the target shape 11");
    fx_expect_error(g, weft_reshape(g, x, 2, two), WEFT_EINVAL, "two -1 lengths");
    fx_expect_error(g, y = weft_reshape(g, x, 1, neg), WEFT_EINVAL, "");
    fx_expect_error(g, y = weft_reshape(g, x, 17, neg), WEFT_EINVAL, "");
    /* unknown length: the count is checked at run time */
    int64_t u[1] = {-1};
    weft_var_t *xu = fx_var(g, WEFT_FLOAT64, 1, u);
    assert_non_null(y = weft_reshape(g, xu, 1, eleven));
    weft_tensor_t *v = fx_tensor(WEFT_FLOAT64, 1, (int64_t[]){12}, (double[12]){0}), *r;
    fx_expect_status(g, weft_eval(g, 1, &xu, &v, 1, &y, &r), WEFT_ESHAPE,
                     "12 elements into a shape of 11");
    weft_tensor_release(v);
}

static void test_shape_ops_subtensor_slices_steps_and_indices(void **state)
{
    weft_graph_t *g = *state;
    weft_var_t *x = fx_var(g, WEFT_FLOAT64, 2, S34);
    struct {
        size_t n;
        weft_slice_t idx[2];
        int nd;
        int64_t dims[2];
        double want[12];
        size_t count;
        const char *printed;
    } cases[] = {
        {1, {WEFT_SLICE(1, 3, 1)}, 2, {2, 4}, {4, 5, 6, 7, 8, 9, 10, 11}, 8,
         "Subtensor{idx=[1:3]}"},
        {2, {WEFT_SLICE_ALL, WEFT_SLICE(WEFT_SLICE_NONE, WEFT_SLICE_NONE, -1)}, 2, {3, 4},
         {3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8}, 12, "Subtensor{idx=[:,::-1]}"},
        {2, {WEFT_SLICE(WEFT_SLICE_NONE, WEFT_SLICE_NONE, 2), WEFT_SLICE_AT(-1)}, 1, {2},
         {3, 11}, 2, "Subtensor{idx=[::2,-1]}"},
        {1, {WEFT_SLICE(-100, 100, 1)}, 2, {3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 12,
         "Subtensor{idx=[-100:100]}"},
        {1, {WEFT_SLICE(3, 1, 1)}, 2, {0, 4}, {0}, 0, "Subtensor{idx=[3:1]}"},
        {2, {WEFT_SLICE(2, 0, -1), WEFT_SLICE(3, WEFT_SLICE_NONE, -2)}, 2, {2, 2},
         {11, 9, 7, 5}, 4, "Subtensor{idx=[2:0:-1,3::-2]}"},
        {2, {WEFT_SLICE_AT(1), WEFT_SLICE_AT(2)}, 0, {0}, {6}, 1, "Subtensor{idx=[1,2]}"},
    };
    weft_tensor_t *v = iota34();
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        weft_var_t *y;
        assert_non_null(y = weft_subtensor(g, x, cases[c].n, cases[c].idx));
        const weft_type_t *t = weft_var_type(y);
        assert_int_equal(weft_type_ndim(t), cases[c].nd);
        for (int d = 0; d < cases[c].nd; d++)
            assert_int_equal(weft_type_dim(t, d), cases[c].dims[d]);
        char buf[96];
        weft_op_print(weft_apply_op(weft_var_owner(y)), buf, sizeof buf);
        assert_string_equal(buf, cases[c].printed);
        weft_tensor_t *r = fx_eval(g, 1, &x, &v, y);
        assert_true(weft_tensor_shares_buffer(r, v));
        fx_expect(r, cases[c].want, cases[c].count, 0);
        weft_tensor_release(r);
    }
    weft_tensor_release(v);
}

static void test_shape_ops_subtensor_bad_indices_return_exact_statuses(void **state)
{
    weft_graph_t *g = *state;
    weft_var_t *x = fx_var(g, WEFT_FLOAT64, 2, S34), *y;
    weft_slice_t out_of_range[1] = {WEFT_SLICE_AT(3)}, step0[1] = {WEFT_SLICE(0, 1, 0)};
    weft_slice_t three[3] = {WEFT_SLICE_ALL, WEFT_SLICE_ALL, WEFT_SLICE_ALL};
    weft_slice_t badkind[1] = {{(weft_slice_kind_t)5, 0, 0, 1}};
    fx_expect_error(g, weft_subtensor(g, x, 1, out_of_range), WEFT_ERANGE,
                    "index 3 out of range for axis 0 of length 3");
    fx_expect_error(g, weft_subtensor(g, x, 1, step0), WEFT_EINVAL, "step 0");
    fx_expect_error(g, weft_subtensor(g, x, 3, three), WEFT_EINVAL,
                    "3 indices for a 2-dimensional input");
    fx_expect_error(g, y = weft_subtensor(g, x, 1, badkind), WEFT_EINVAL, "");
    fx_expect_error(g, y = weft_subtensor(g, x, 1, NULL), WEFT_EINVAL, "");
    /* unknown length: the index is checked at run time */
    int64_t u[1] = {-1};
    weft_var_t *xu = fx_var(g, WEFT_FLOAT64, 1, u);
    weft_slice_t at5[1] = {WEFT_SLICE_AT(-5)};
    assert_non_null(y = weft_subtensor(g, xu, 1, at5));
    weft_tensor_t *v = fx_tensor(WEFT_FLOAT64, 1, (int64_t[]){4}, (double[]){1, 2, 3, 4}), *r;
    fx_expect_status(g, weft_eval(g, 1, &xu, &v, 1, &y, &r), WEFT_ERANGE,
                     "index -5 out of range for axis 0 of length 4");
    weft_tensor_release(v);
}

/* Shapes whose byte size overflows int64 are refused with WEFT_EOVERFLOW
 * naming the node, never computed with an overflowing product: a reshape
 * to (2^32, 2^32), with or without a -1, with a known or unknown input
 * length; an input type of shape (2^32, 2^32); a bool type just below the
 * limit still reshapes to (-1). */
static void test_shape_ops_reshape_beyond_int64_is_eoverflow(void **state)
{
    weft_graph_t *g = *state;
    const int64_t big = (int64_t)1 << 32;
    int64_t u[1] = {-1}, twelve[1] = {12}, bb[2] = {big, big}, bb1[3] = {big, big, -1};
    int64_t b0b[3] = {big, 0, big}, below[2] = {big, big / 2 - 1};
    weft_var_t *xs[2] = {fx_var(g, WEFT_FLOAT64, 1, twelve), fx_var(g, WEFT_FLOAT64, 1, u)}, *y;
    for (int i = 0; i < 2; i++) {
        fx_expect_error(g, weft_reshape(g, xs[i], 2, bb), WEFT_EOVERFLOW,
                        ": Reshape: target shape=(4294967296,4294967296) is too big for float64 "
                        "(its byte size does not fit in int64)");
        assert_non_null(strstr(weft_graph_last_error(g), "apply of Reshape at "));
        fx_expect_error(g, weft_reshape(g, xs[i], 3, bb1), WEFT_EOVERFLOW,
                        "target shape=(4294967296,4294967296,-1) is too big");
    }
    const weft_type_t *t;
    fx_expect_status(g, weft_type_tensor(g, WEFT_FLOAT64, 2, bb, &t), WEFT_EOVERFLOW,
                     "weft_type_tensor: float64[4294967296,4294967296] is too big (its byte size "
                     "does not fit in int64)");
    /* NumPy's rule: a zero length does not excuse the others */
    fx_expect_status(g, weft_type_tensor(g, WEFT_INT32, 3, b0b, &t), WEFT_EOVERFLOW,
                     "int32[4294967296,0,4294967296] is too big");
    weft_var_t *b = fx_var(g, WEFT_BOOL, 2, below);
    assert_non_null(y = weft_reshape(g, b, 1, u));
    assert_int_equal(weft_type_dim(weft_var_type(y), 0), big * (big / 2 - 1));
}

/* Slices with huge steps are valid NumPy slices: step INT64_MAX, -INT64_MAX
 * or INT64_MIN of a length-5 axis has length 1 (the element count used to
 * overflow to -1), statically and at run time; a second huge step on the
 * length-1 result keeps x's stride instead of multiplying it
 * (x[::10**9+7][::10**9+7] overflowed the stride product). */
static void test_shape_ops_subtensor_huge_steps_follow_numpy(void **state)
{
    weft_graph_t *g = *state;
    int64_t five[1] = {5}, u[1] = {-1};
    weft_var_t *xs[2] = {fx_var(g, WEFT_FLOAT64, 1, five), fx_var(g, WEFT_FLOAT64, 1, u)};
    weft_tensor_t *v = fx_tensor(WEFT_FLOAT64, 1, five, (double[]){0, 1, 2, 3, 4});
    struct {
        weft_slice_t idx;
        double want;
    } cases[] = {
        {WEFT_SLICE(WEFT_SLICE_NONE, WEFT_SLICE_NONE, INT64_MAX), 0},
        {WEFT_SLICE(WEFT_SLICE_NONE, WEFT_SLICE_NONE, -INT64_MAX), 4},
        {WEFT_SLICE(1, INT64_MAX, INT64_MAX), 1},
        {WEFT_SLICE(-2, INT64_MIN + 1, -INT64_MAX), 3},
        {WEFT_SLICE(WEFT_SLICE_NONE, WEFT_SLICE_NONE, INT64_MIN), 4},
    };
    for (int i = 0; i < 2; i++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            weft_var_t *y;
            assert_non_null(y = weft_subtensor(g, xs[i], 1, &cases[c].idx));
            assert_int_equal(weft_type_dim(weft_var_type(y), 0), i == 0 ? 1 : -1);
            weft_tensor_t *r = fx_eval(g, 1, &xs[i], &v, y);
            fx_expect(r, &cases[c].want, 1, 0);
            weft_tensor_release(r);
        }
    weft_tensor_release(v);
    int64_t s512[2] = {5, 12};
    weft_var_t *x = fx_var(g, WEFT_FLOAT64, 2, s512), *a, *b;
    weft_slice_t step = WEFT_SLICE(WEFT_SLICE_NONE, WEFT_SLICE_NONE, 1000000007);
    assert_non_null(a = weft_subtensor(g, x, 1, &step));
    assert_non_null(b = weft_subtensor(g, a, 1, &step));
    double vals[60];
    for (int i = 0; i < 60; i++) vals[i] = i;
    v = fx_tensor(WEFT_FLOAT64, 2, s512, vals);
    weft_tensor_t *r = fx_eval(g, 1, &x, &v, b);
    assert_int_equal(weft_tensor_dim(r, 0), 1);
    assert_int_equal(weft_tensor_stride(r, 0), 12);
    fx_expect(r, vals, 12, 0);
    weft_tensor_release(r);
    weft_tensor_release(v);
}

static void test_shape_ops_set_and_inc_subtensor_copy_then_write(void **state)
{
    weft_graph_t *g = *state;
    weft_var_t *x = fx_var(g, WEFT_FLOAT64, 2, S34);
    weft_var_t *row = fx_var(g, WEFT_INT32, 1, (int64_t[]){4});
    weft_var_t *sc = fx_var(g, WEFT_FLOAT64, 0, NULL), *s, *i;
    weft_slice_t idx[2] = {WEFT_SLICE(0, 3, 2), WEFT_SLICE_ALL}; /* rows 0 and 2 */
    weft_slice_t col[2] = {WEFT_SLICE_ALL, WEFT_SLICE_AT(1)};
    assert_non_null(s = weft_set_subtensor(g, x, sc, 2, idx)); /* scalar broadcast */
    assert_non_null(i = weft_inc_subtensor(g, x, row, 1, &idx[0]));
    weft_var_t *sc2;
    assert_non_null(sc2 = weft_inc_subtensor(g, x, sc, 2, col));
    assert_true(weft_type_equal(weft_var_type(s), weft_var_type(x)));
    weft_var_t *vars[3] = {x, row, sc};
    weft_tensor_t *vals[3] = {iota34(), fx_tensor(WEFT_INT32, 1, (int64_t[]){4},
                                                  (double[]){100, 200, 300, 400}),
                              fx_tensor(WEFT_FLOAT64, 0, NULL, (double[]){-1})};
    weft_tensor_t *r = fx_eval(g, 3, vars, vals, s);
    assert_false(weft_tensor_shares_buffer(r, vals[0]));
    fx_expect(r, (double[]){-1, -1, -1, -1, 4, 5, 6, 7, -1, -1, -1, -1}, 12, 0);
    weft_tensor_release(r);
    r = fx_eval(g, 3, vars, vals, i);
    fx_expect(r, (double[]){100, 201, 302, 403, 4, 5, 6, 7, 108, 209, 310, 411}, 12, 0);
    weft_tensor_release(r);
    r = fx_eval(g, 3, vars, vals, sc2);
    fx_expect(r, (double[]){0, 0, 2, 3, 4, 4, 6, 7, 8, 8, 10, 11}, 12, 0);
    weft_tensor_release(r);
    fx_expect(vals[0], (double[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 12, 0); /* untouched */
    for (int k = 0; k < 3; k++) weft_tensor_release(vals[k]);
}

static void test_shape_ops_inplace_inc_subtensor_writes_into_x(void **state)
{
    weft_graph_t *g = *state;
    weft_var_t *x = fx_var(g, WEFT_FLOAT64, 2, S34), *y = fx_var(g, WEFT_FLOAT64, 0, NULL), *o;
    weft_slice_t idx[1] = {WEFT_SLICE_AT(1)};
    assert_non_null(o = weft_inc_subtensor(g, x, y, 1, idx));
    const weft_op_t *op = weft_apply_op(weft_var_owner(o)), *ip;
    assert_int_equal(weft_op_class(op)->inplace_variant(g, op, 0, &ip), WEFT_OK);
    assert_int_equal(weft_op_class(op)->inplace_variant(g, op, 1, &ip), WEFT_ENOTIMPL);
    assert_int_equal(weft_op_class(op)->inplace_variant(g, op, 0, &ip), WEFT_OK);
    const weft_op_alias_t *dm;
    size_t n;
    weft_op_destroy_map(ip, &dm, &n);
    assert_int_equal(n, 1);
    assert_int_equal(dm[0].input, 0);
    char buf[64];
    weft_op_print(ip, buf, sizeof buf);
    assert_string_equal(buf, "IncSubtensor{idx=[1], inplace}");
    weft_var_t *in[2] = {x, weft_apply_input(weft_var_owner(o), 1)}, *oi;
    assert_non_null(oi = weft_op_call(g, ip, 2, in));
    weft_var_t *vars[2] = {x, y};
    weft_tensor_t *vals[2] = {iota34(), fx_tensor(WEFT_FLOAT64, 0, NULL, (double[]){0.5})};
    weft_tensor_t *r = fx_eval(g, 2, vars, vals, oi);
    assert_ptr_equal(r, vals[0]);
    fx_expect(vals[0], (double[]){0, 1, 2, 3, 4.5, 5.5, 6.5, 7.5, 8, 9, 10, 11}, 12, 0);
    weft_tensor_release(r);
    for (int k = 0; k < 2; k++) weft_tensor_release(vals[k]);
}

static void test_shape_ops_set_subtensor_bad_inputs_return_exact_statuses(void **state)
{
    weft_graph_t *g = *state;
    weft_var_t *x = fx_var(g, WEFT_FLOAT32, 2, S34), *y64 = fx_var(g, WEFT_FLOAT64, 0, NULL);
    weft_var_t *y3 = fx_var(g, WEFT_FLOAT32, 1, (int64_t[]){3});
    weft_var_t *b = fx_var(g, WEFT_BOOL, 1, (int64_t[]){4});
    weft_var_t *o;
    weft_slice_t idx[1] = {WEFT_SLICE_AT(0)};
    fx_expect_error(g, weft_set_subtensor(g, x, y64, 1, idx), WEFT_ETYPE,
                    "input 1 is float64, larger than input 0's float32");
    /* NumPy's safe casting: int64 does not fit float32, uint8 not int8 */
    weft_var_t *yi64 = fx_var(g, WEFT_INT64, 0, NULL), *x8 = fx_var(g, WEFT_INT8, 2, S34);
    fx_expect_error(g, weft_set_subtensor(g, x, yi64, 1, idx), WEFT_ETYPE,
                    "input 1 is int64, larger than input 0's float32");
    fx_expect_error(g, weft_set_subtensor(g, x8, fx_var(g, WEFT_UINT8, 0, NULL), 1, idx),
                    WEFT_ETYPE, "input 1 is uint8, larger than input 0's int8");
    fx_expect_error(g, weft_set_subtensor(g, x, y3, 1, idx), WEFT_ESHAPE,
                    "input 1 has length 3 in dimension 0, x[idx] 4");
    fx_expect_error(g, weft_inc_subtensor(g, b, b, 0, NULL), WEFT_ETYPE,
                    "input 0 is bool (no addition)");
    fx_expect_error(g, o = weft_set_subtensor(g, x, NULL, 1, idx), WEFT_EINVAL, "");
    weft_slice_t far[1] = {WEFT_SLICE_AT(7)};
    fx_expect_error(g, o = weft_set_subtensor(g, x, y3, 1, far), WEFT_ERANGE, "");
}

static void test_shape_ops_gradients_match_finite_differences(void **state)
{
    weft_graph_t *g = *state;
    uint64_t seed = 4242;
    printf("seed=%llu\n", (unsigned long long)seed);
    weft_var_t *x = fx_var(g, WEFT_FLOAT64, 2, S34), *y;
    weft_tensor_t *v = fx_random(WEFT_FLOAT64, 2, S34, -1, 1, 0, &seed);
    int order[3] = {1, WEFT_DIMSHUFFLE_NEW, 0};
    assert_non_null(y = weft_dimshuffle(g, x, 3, order));
    fx_check_grad(g, y, 1, &x, &v, seed);
    int64_t shp[2] = {6, -1};
    assert_non_null(y = weft_reshape(g, x, 2, shp));
    fx_check_grad(g, y, 1, &x, &v, seed);
    weft_slice_t idx[2] = {WEFT_SLICE(2, WEFT_SLICE_NONE, -2), WEFT_SLICE_AT(1)};
    assert_non_null(y = weft_subtensor(g, x, 2, idx));
    fx_check_grad(g, y, 1, &x, &v, seed);
    weft_var_t *row = fx_var(g, WEFT_FLOAT64, 2, (int64_t[]){1, 4}), *in[2] = {x, row};
    weft_tensor_t *rv = fx_random(WEFT_FLOAT64, 2, (int64_t[]){1, 4}, -1, 1, 0, &seed);
    weft_tensor_t *vals[2] = {v, rv};
    weft_slice_t rows[1] = {WEFT_SLICE(0, 2, 1)};
    assert_non_null(y = weft_set_subtensor(g, x, row, 1, rows));
    fx_check_grad(g, y, 2, in, vals, seed);
    assert_non_null(y = weft_inc_subtensor(g, x, row, 1, rows));
    fx_check_grad(g, y, 2, in, vals, seed);
    weft_tensor_release(rv);
    weft_tensor_release(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)
        T(test_shape_ops_dimshuffle_transposes_as_a_view),
        T(test_shape_ops_dimshuffle_adds_and_drops_broadcastable_axes),
        T(test_shape_ops_dimshuffle_bad_orders_return_exact_statuses),
        T(test_shape_ops_reshape_views_contiguous_and_copies_transposed),
        T(test_shape_ops_reshape_bad_shapes_return_exact_statuses),
        T(test_shape_ops_subtensor_slices_steps_and_indices),
        T(test_shape_ops_subtensor_bad_indices_return_exact_statuses),
        T(test_shape_ops_reshape_beyond_int64_is_eoverflow),
        T(test_shape_ops_subtensor_huge_steps_follow_numpy),
        T(test_shape_ops_set_and_inc_subtensor_copy_then_write),
        T(test_shape_ops_inplace_inc_subtensor_writes_into_x),
        T(test_shape_ops_set_subtensor_bad_inputs_return_exact_statuses),
        T(test_shape_ops_gradients_match_finite_differences),
#undef T
    };
    return cmocka_run_group_tests_name("shape_ops", tests, NULL, NULL);
}
