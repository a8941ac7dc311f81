/* Tests of the array-building ops (weft/array_ops.h): concatenate, stack and
 * split - exact values (checked against NumPy by hand), mixed-dtype
 * promotion, static shapes, exact error messages, JSON round trip, same bits
 * at 1, 2 and 4 workers on an output large enough to split, and gradients
 * through weft_verify_grad. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ops_check.h"
#include "ops_threads.h"

static weft_graph_t *G;

static int setup(void **state)
{
    (void)state;
    assert_int_equal(weft_graph_create(NULL, &G), WEFT_OK);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    weft_graph_destroy(G);
    return 0;
}

/* Evaluates y on inputs xs at vals, checks dtype, shape and values. */
static void expect_n(size_t n, weft_var_t *const *xs, weft_tensor_t *const *vals, weft_var_t *y,
                     weft_dtype_t dt, int nd, const int64_t *shape, const double *want)
{
    weft_tensor_t *r = NULL;
    assert_non_null(y);
    assert_int_equal(ck_eval(G, n, xs, vals, y, &r), WEFT_OK);
    assert_int_equal(weft_tensor_dtype(r), dt);
    ck_expect(r, nd, shape, want, 0);
    weft_tensor_release(r);
}

static void test_concatenate_values_axes_and_promotion(void **state)
{
    (void)state;
    int64_t sa[2] = {2, 2}, sb[2] = {2, 1}, sc[2] = {1, 2};
    weft_var_t *x[3] = {ck_var(G, WEFT_FLOAT32, 2, sa), ck_var(G, WEFT_INT64, 2, sb),
                        ck_var(G, WEFT_INT32, 2, sc)};
    weft_tensor_t *v[3] = {ck_tensor(WEFT_FLOAT32, 2, sa, (double[]){1, 2, 3, 4}),
                           ck_tensor(WEFT_INT64, 2, sb, (double[]){5, 6}),
                           ck_tensor(WEFT_INT32, 2, sc, (double[]){7, 8})};
    /* np.concatenate([f32 (2,2), i64 (2,1)], axis=1) -> float64 (2,3) */
    weft_var_t *c1 = weft_concatenate(G, 2, x, -1);
    const weft_type_t *t = weft_var_type(c1);
    assert_int_equal(weft_type_dim(t, 0), 2);
    assert_int_equal(weft_type_dim(t, 1), 3);
    expect_n(3, x, v, c1, WEFT_FLOAT64, 2, (int64_t[]){2, 3}, (double[]){1, 2, 5, 3, 4, 6});
    /* axis 0: f32 and i32 -> float64 (3, 2) */
    weft_var_t *pair[2] = {x[0], x[2]};
    expect_n(3, x, v, weft_concatenate(G, 2, pair, 0), WEFT_FLOAT64, 2, (int64_t[]){3, 2},
             (double[]){1, 2, 3, 4, 7, 8});
    /* one input, and an int32 + int64 pair staying integer */
    weft_var_t *ints[2] = {x[2], x[2]};
    expect_n(3, x, v, weft_concatenate(G, 2, ints, 1), WEFT_INT32, 2, (int64_t[]){1, 4},
             (double[]){7, 8, 7, 8});
    expect_n(3, x, v, weft_concatenate(G, 1, x, 0), WEFT_FLOAT32, 2, sa, (double[]){1, 2, 3, 4});
    /* a transposed (non-contiguous) input */
    weft_var_t *tr[2] = {weft_transpose(G, x[0]), x[0]};
    expect_n(3, x, v, weft_concatenate(G, 2, tr, 0), WEFT_FLOAT32, 2, (int64_t[]){4, 2},
             (double[]){1, 3, 2, 4, 1, 2, 3, 4});
    for (int i = 0; i < 3; i++) weft_tensor_release(v[i]);
}

static void test_concatenate_unknown_lengths_and_empty(void **state)
{
    (void)state;
    int64_t su[2] = {WEFT_DIM_UNKNOWN, WEFT_DIM_UNKNOWN}, s0[2] = {0, 2}, s1[2] = {1, 2};
    weft_var_t *x[2] = {ck_var(G, WEFT_BOOL, 2, su), ck_var(G, WEFT_BOOL, 2, s1)};
    weft_var_t *c = weft_concatenate(G, 2, x, 0);
    assert_int_equal(weft_type_dim(weft_var_type(c), 0), WEFT_DIM_UNKNOWN);
    assert_int_equal(weft_type_dim(weft_var_type(c), 1), 2);
    weft_tensor_t *v[2] = {ck_tensor(WEFT_BOOL, 2, s0, NULL),
                           ck_tensor(WEFT_BOOL, 2, s1, (double[]){1, 0})};
    expect_n(2, x, v, c, WEFT_BOOL, 2, (int64_t[]){1, 2}, (double[]){1, 0});
    weft_tensor_release(v[0]);
    v[0] = ck_tensor(WEFT_BOOL, 2, (int64_t[]){1, 3}, NULL);
    weft_tensor_t *r = NULL;
    assert_int_equal(ck_eval(G, 2, x, v, c, &r), WEFT_ESHAPE);
    assert_null(r);
    for (int i = 0; i < 2; i++) weft_tensor_release(v[i]);
}

static void test_stack_values(void **state)
{
    (void)state;
    int64_t s[1] = {3};
    weft_var_t *x[2] = {ck_var(G, WEFT_INT64, 1, s), ck_var(G, WEFT_INT64, 1, s)};
    weft_tensor_t *v[2] = {ck_tensor(WEFT_INT64, 1, s, (double[]){1, 2, 3}),
                           ck_tensor(WEFT_INT64, 1, s, (double[]){4, 5, 6})};
    expect_n(2, x, v, weft_stack(G, 2, x, 0), WEFT_INT64, 2, (int64_t[]){2, 3},
             (double[]){1, 2, 3, 4, 5, 6});
    expect_n(2, x, v, weft_stack(G, 2, x, -1), WEFT_INT64, 2, (int64_t[]){3, 2},
             (double[]){1, 4, 2, 5, 3, 6});
    /* 0-d inputs */
    weft_var_t *z[2] = {ck_var(G, WEFT_FLOAT64, 0, NULL), ck_var(G, WEFT_INT32, 0, NULL)};
    weft_tensor_t *zv[2] = {ck_tensor(WEFT_FLOAT64, 0, NULL, (double[]){2.5}),
                            ck_tensor(WEFT_INT32, 0, NULL, (double[]){-1})};
    expect_n(2, z, zv, weft_stack(G, 2, z, 0), WEFT_FLOAT64, 1, (int64_t[]){2},
             (double[]){2.5, -1});
    for (int i = 0; i < 2; i++) {
        weft_tensor_release(v[i]);
        weft_tensor_release(zv[i]);
    }
}

static void test_split_sections_and_indices(void **state)
{
    (void)state;
    int64_t s[2] = {2, 6};
    weft_var_t *x = ck_var(G, WEFT_FLOAT64, 2, s);
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT64, 2, s, (double[]){0, 1, 2, 3, 4, 5,
                                                                  6, 7, 8, 9, 10, 11});
    weft_var_t *o[4] = {NULL};
    weft_var_t *first = weft_split(G, x, 3, 1, o);
    assert_ptr_equal(first, o[0]);
    expect_n(1, &x, &xv, o[0], WEFT_FLOAT64, 2, (int64_t[]){2, 2}, (double[]){0, 1, 6, 7});
    expect_n(1, &x, &xv, o[2], WEFT_FLOAT64, 2, (int64_t[]){2, 2}, (double[]){4, 5, 10, 11});
    /* np.split(x, [1, -2, 3], axis=1): [:1], [1:4], [4:3] (empty), [3:] */
    int64_t idx[3] = {1, -2, 3};
    assert_non_null(weft_split_indices(G, x, 3, idx, -1, o));
    expect_n(1, &x, &xv, o[0], WEFT_FLOAT64, 2, (int64_t[]){2, 1}, (double[]){0, 6});
    expect_n(1, &x, &xv, o[1], WEFT_FLOAT64, 2, (int64_t[]){2, 3},
             (double[]){1, 2, 3, 7, 8, 9});
    expect_n(1, &x, &xv, o[2], WEFT_FLOAT64, 2, (int64_t[]){2, 0}, NULL);
    expect_n(1, &x, &xv, o[3], WEFT_FLOAT64, 2, (int64_t[]){2, 3},
             (double[]){3, 4, 5, 9, 10, 11});
    weft_tensor_release(xv);
}

static void test_errors_name_op_input_and_site(void **state)
{
    (void)state;
    const weft_type_t *t23 = NULL, *t33 = NULL, *t0 = NULL;
    assert_int_equal(weft_type_tensor(G, WEFT_FLOAT64, 2, (int64_t[]){2, 3}, &t23), WEFT_OK);
    assert_int_equal(weft_type_tensor(G, WEFT_FLOAT64, 2, (int64_t[]){3, 3}, &t33), WEFT_OK);
    assert_int_equal(weft_type_tensor(G, WEFT_FLOAT64, 0, NULL, &t0), WEFT_OK);
    weft_var_t *x[3] = {weft_var_create_at(G, t23, "a", "model.c", 7),
                        weft_var_create_at(G, t33, "b", "model.c", 8),
                        weft_var_create_at(G, t0, "s", "model.c", 9)};
    assert_null(weft_concatenate_at(G, 2, x, 1, "f.c", 3));
    assert_int_equal(weft_graph_error(G), WEFT_ESHAPE);
    assert_string_equal(weft_graph_error_message(G),
                        "apply of Join at f.c:3: Join: input 1 b has length 3 on axis 0 where "
                        "an earlier input has 2 (all but the join axis 1 must match)");
    weft_graph_clear_error(G);
    assert_null(weft_concatenate_at(G, 2, x, 2, "f.c", 4));
    assert_int_equal(weft_graph_error(G), WEFT_EINVAL);
    assert_string_equal(weft_graph_error_message(G),
                        "concatenate (at f.c:4): axis 2 out of range for 2 dims");
    weft_graph_clear_error(G);
    assert_null(weft_concatenate_at(G, 2, &x[1], 0, "f.c", 5));
    assert_int_equal(weft_graph_error(G), WEFT_ETYPE);
    assert_string_equal(weft_graph_error_message(G),
                        "concatenate (at f.c:5): input 1 s is not a tensor with the ndim of "
                        "input 0 (at least 1)");
    weft_graph_clear_error(G);
    assert_null(weft_concatenate_at(G, 0, x, 0, "f.c", 6));
    assert_string_equal(weft_graph_error_message(G),
                        "concatenate (at f.c:6): needs at least one input");
    weft_graph_clear_error(G);
    weft_var_t *o[4];
    assert_null(weft_split_at(G, x[0], 4, 1, o, "f.c", 7));
    assert_int_equal(weft_graph_error(G), WEFT_ESHAPE);
    assert_string_equal(weft_graph_error_message(G),
                        "split (at f.c:7): length 3 on axis 1 does not divide into 4 equal "
                        "sections");
    weft_graph_clear_error(G);
    assert_null(weft_stack_at(G, 2, x, 3, "f.c", 8));
    assert_string_equal(weft_graph_error_message(G),
                        "stack (at f.c:8): axis 3 out of range for 3 dims");
    weft_graph_clear_error(G);
    /* a NULL input adds no second error */
    weft_var_t *bad[2] = {x[0], NULL};
    assert_null(weft_concatenate_at(G, 2, bad, 0, "f.c", 9));
    weft_graph_clear_error(G);
}

/* Shape of v's static type. */
static void expect_type(weft_var_t *v, int nd, const int64_t *shape)
{
    assert_non_null(v);
    const weft_type_t *t = weft_var_type(v);
    assert_int_equal(weft_type_ndim(t), nd);
    for (int d = 0; d < nd; d++) assert_int_equal(weft_type_dim(t, d), shape[d]);
}

static void test_views_flip_squeeze_expand_swap_move(void **state)
{
    (void)state;
    int64_t s[3] = {2, 1, 3};
    weft_var_t *x = ck_var(G, WEFT_INT32, 3, s);
    weft_tensor_t *xv = ck_tensor(WEFT_INT32, 3, s, (double[]){1, 2, 3, 4, 5, 6});
    int a2 = 2, am1 = -1, a1 = 1;
    /* np.flip(x, 2), np.flip(x) */
    expect_n(1, &x, &xv, weft_flip(G, x, 1, &a2), WEFT_INT32, 3, s, (double[]){3, 2, 1, 6, 5, 4});
    expect_n(1, &x, &xv, weft_flip(G, x, 0, NULL), WEFT_INT32, 3, s,
             (double[]){6, 5, 4, 3, 2, 1});
    weft_var_t *sq = weft_squeeze(G, x, 0, NULL);
    expect_type(sq, 2, (int64_t[]){2, 3});
    expect_type(weft_squeeze(G, x, 1, &a1), 2, (int64_t[]){2, 3});
    weft_var_t *e = weft_expand_dims(G, x, -1);
    expect_type(e, 4, (int64_t[]){2, 1, 3, 1});
    expect_type(weft_expand_dims(G, x, 0), 4, (int64_t[]){1, 2, 1, 3});
    /* np.swapaxes(x, 0, -1): (3, 1, 2) */
    expect_n(1, &x, &xv, weft_swapaxes(G, x, 0, am1), WEFT_INT32, 3, (int64_t[]){3, 1, 2},
             (double[]){1, 4, 2, 5, 3, 6});
    /* np.moveaxis(x, 0, -1): (1, 3, 2); np.moveaxis(x, 2, 0): (3, 2, 1) */
    expect_n(1, &x, &xv, weft_moveaxis(G, x, 0, -1), WEFT_INT32, 3, (int64_t[]){1, 3, 2},
             (double[]){1, 4, 2, 5, 3, 6});
    expect_n(1, &x, &xv, weft_moveaxis(G, x, 2, 0), WEFT_INT32, 3, (int64_t[]){3, 2, 1},
             (double[]){1, 4, 2, 5, 3, 6});
    /* np.roll(x, 1, -1); np.roll(x, -4, 2) (by -1); roll by 3: x itself */
    expect_n(1, &x, &xv, weft_roll(G, x, 1, -1), WEFT_INT32, 3, s, (double[]){3, 1, 2, 6, 4, 5});
    expect_n(1, &x, &xv, weft_roll(G, x, -4, 2), WEFT_INT32, 3, s, (double[]){2, 3, 1, 5, 6, 4});
    expect_n(1, &x, &xv, weft_roll(G, x, 1, 0), WEFT_INT32, 3, s, (double[]){4, 5, 6, 1, 2, 3});
    assert_ptr_equal(weft_roll(G, x, 3, 2), x);
    weft_tensor_release(xv);
}

static void test_view_errors(void **state)
{
    (void)state;
    const weft_type_t *t = NULL;
    assert_int_equal(weft_type_tensor(G, WEFT_FLOAT64, 2, (int64_t[]){2, WEFT_DIM_UNKNOWN}, &t),
                     WEFT_OK);
    weft_var_t *x = weft_var_create_at(G, t, "x", "model.c", 7);
    int a0 = 0, twice[2] = {1, -1};
    assert_null(weft_squeeze_at(G, x, 1, &a0, "f.c", 3));
    assert_int_equal(weft_graph_error(G), WEFT_ESHAPE);
    assert_string_equal(weft_graph_error_message(G),
                        "squeeze (at f.c:3): axis 0 of input x does not have static length 1");
    weft_graph_clear_error(G);
    assert_null(weft_flip_at(G, x, 2, twice, "f.c", 4));
    assert_int_equal(weft_graph_error(G), WEFT_EINVAL);
    assert_string_equal(weft_graph_error_message(G), "flip (at f.c:4): axis -1 repeated");
    weft_graph_clear_error(G);
    /* an unknown length: rolled at run time (docs/shapes.md §4), no error */
    assert_non_null(weft_roll_at(G, x, 1, 1, "f.c", 5));
    assert_int_equal(weft_graph_error(G), WEFT_OK);
    assert_null(weft_expand_dims_at(G, x, 3, "f.c", 6));
    assert_string_equal(weft_graph_error_message(G),
                        "expand_dims (at f.c:6): axis 3 out of range for 3 dims");
    weft_graph_clear_error(G);
    assert_null(weft_moveaxis_at(G, x, 0, -3, "f.c", 7));
    assert_string_equal(weft_graph_error_message(G),
                        "moveaxis (at f.c:7): axis -3 out of range for 2 dims");
    weft_graph_clear_error(G);
}

static void test_alloc_full_tile_repeat_pad(void **state)
{
    (void)state;
    int64_t s[2] = {2, 3};
    weft_var_t *x = ck_var(G, WEFT_FLOAT32, 2, s);
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT32, 2, s, (double[]){1, 2, 3, 4, 5, 6});
    /* np.broadcast_to(x[:, :1], (2, 2, 2)) via a (2, 1) slice */
    weft_slice_t first[2] = {WEFT_SLICE_ALL, WEFT_SLICE(0, 1, 1)};
    weft_var_t *col = weft_subtensor(G, x, 2, first);
    expect_n(1, &x, &xv, weft_broadcast_to(G, col, 3, ((int64_t[]){2, 2, 4})), WEFT_FLOAT32, 3,
             (int64_t[]){2, 2, 4}, (double[]){1, 1, 1, 1, 4, 4, 4, 4, 1, 1, 1, 1, 4, 4, 4, 4});
    expect_n(1, &x, &xv, weft_full(G, 2, ((int64_t[]){1, 3}), 2.5, WEFT_FLOAT64), WEFT_FLOAT64, 2,
             (int64_t[]){1, 3}, (double[]){2.5, 2.5, 2.5});
    expect_n(1, &x, &xv, weft_ones(G, 1, ((int64_t[]){2}), WEFT_INT64), WEFT_INT64, 1,
             (int64_t[]){2}, (double[]){1, 1});
    expect_n(1, &x, &xv, weft_zeros(G, 0, NULL, WEFT_BOOL), WEFT_BOOL, 0, NULL, (double[]){0});
    /* np.tile(x, (2, 1)), np.tile(x, 2), np.tile(x, (2, 1, 1)) */
    expect_n(1, &x, &xv, weft_tile(G, x, 2, ((int64_t[]){2, 1})), WEFT_FLOAT32, 2,
             (int64_t[]){4, 3}, (double[]){1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6});
    expect_n(1, &x, &xv, weft_tile(G, x, 1, ((int64_t[]){2})), WEFT_FLOAT32, 2, (int64_t[]){2, 6},
             (double[]){1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6});
    expect_type(weft_tile(G, x, 3, ((int64_t[]){2, 1, 1})), 3, (int64_t[]){2, 2, 3});
    /* np.repeat(x, 2, axis=1), np.repeat(x, 2, axis=0) */
    expect_n(1, &x, &xv, weft_repeat(G, x, 2, 1), WEFT_FLOAT32, 2, (int64_t[]){2, 6},
             (double[]){1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6});
    expect_n(1, &x, &xv, weft_repeat(G, x, 2, 0), WEFT_FLOAT32, 2, (int64_t[]){4, 3},
             (double[]){1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6});
    /* np.pad(x, ((1, 0), (0, 2)), constant_values=9); edge; reflect */
    int64_t w[4] = {1, 0, 0, 2};
    expect_n(1, &x, &xv, weft_pad(G, x, 2, w, WEFT_PAD_CONSTANT, 9), WEFT_FLOAT32, 2,
             (int64_t[]){3, 5}, (double[]){9, 9, 9, 9, 9, 1, 2, 3, 9, 9, 4, 5, 6, 9, 9});
    expect_n(1, &x, &xv, weft_pad(G, x, 2, w, WEFT_PAD_EDGE, 0), WEFT_FLOAT32, 2,
             (int64_t[]){3, 5}, (double[]){1, 2, 3, 3, 3, 1, 2, 3, 3, 3, 4, 5, 6, 6, 6});
    /* np.pad(x, ((1, 1), (2, 1)), 'reflect') */
    int64_t r1[4] = {1, 1, 2, 1};
    expect_n(1, &x, &xv, weft_pad(G, x, 2, r1, WEFT_PAD_REFLECT, 0), WEFT_FLOAT32, 2,
             (int64_t[]){4, 6},
             (double[]){6, 5, 4, 5, 6, 5, 3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5, 3, 2, 1, 2, 3, 2});
    weft_tensor_release(xv);
}

/* Reflect widths at or above a static length: NumPy's repeated reflection
 * (np.pad(..., mode='reflect') values), static output lengths. */
static void test_pad_reflect_wide_static(void **state)
{
    (void)state;
    int64_t s23[2] = {2, 3}, s3[1] = {3}, s21[2] = {2, 1};
    weft_var_t *x = ck_var(G, WEFT_FLOAT64, 2, s23), *y = ck_var(G, WEFT_FLOAT64, 1, s3);
    weft_var_t *z = ck_var(G, WEFT_FLOAT64, 2, s21);
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT64, 2, s23, (double[]){0, 1, 2, 3, 4, 5});
    weft_tensor_t *yv = ck_tensor(WEFT_FLOAT64, 1, s3, (double[]){1, 2, 3});
    weft_tensor_t *zv = ck_tensor(WEFT_FLOAT64, 2, s21, (double[]){4, 5});
    /* np.pad(x, ((2, 0), (2, 0)), 'reflect'): axis 0 (length 2) by 2 */
    weft_var_t *px = weft_pad(G, x, 1, ((int64_t[]){2, 0}), WEFT_PAD_REFLECT, 0);
    expect_type(px, 2, (int64_t[]){4, 5});
    expect_n(1, &x, &xv, px, WEFT_FLOAT64, 2, (int64_t[]){4, 5},
             (double[]){2, 1, 0, 1, 2, 5, 4, 3, 4, 5, 2, 1, 0, 1, 2, 5, 4, 3, 4, 5});
    /* np.pad([1, 2, 3], (7, 5), 'reflect') */
    weft_var_t *py = weft_pad(G, y, 1, ((int64_t[]){7, 5}), WEFT_PAD_REFLECT, 0);
    expect_type(py, 1, (int64_t[]){15});
    expect_n(1, &y, &yv, py, WEFT_FLOAT64, 1, (int64_t[]){15},
             (double[]){2, 3, 2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3, 2});
    /* a length-1 axis repeats its element: np.pad(z, ((0, 1), (2, 3)), 'reflect') */
    weft_var_t *pz = weft_pad(G, z, 2, ((int64_t[]){0, 1, 2, 3}), WEFT_PAD_REFLECT, 0);
    expect_n(1, &z, &zv, pz, WEFT_FLOAT64, 2, (int64_t[]){3, 6},
             (double[]){4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 4, 4, 4, 4, 4, 4});
    weft_tensor_release(xv);
    weft_tensor_release(yv);
    weft_tensor_release(zv);
}

static void test_alloc_errors(void **state)
{
    (void)state;
    const weft_type_t *t = NULL;
    assert_int_equal(weft_type_tensor(G, WEFT_FLOAT64, 2, (int64_t[]){2, 3}, &t), WEFT_OK);
    weft_var_t *x = weft_var_create_at(G, t, "x", "model.c", 7);
    assert_null(weft_broadcast_to_at(G, x, 2, (int64_t[]){2, 4}, "f.c", 3));
    assert_int_equal(weft_graph_error(G), WEFT_ESHAPE);
    assert_string_equal(weft_graph_error_message(G),
                        "apply of Alloc at f.c:3: Alloc: input x has length 3 on axis 1, which "
                        "does not broadcast to 4");
    weft_graph_clear_error(G);
    assert_null(weft_broadcast_to_at(G, x, 1, (int64_t[]){3}, "f.c", 4));
    assert_int_equal(weft_graph_error(G), WEFT_EINVAL);
    assert_string_equal(weft_graph_error_message(G),
                        "broadcast_to (at f.c:4): input x has more than 1 dims");
    weft_graph_clear_error(G);
    /* an empty axis cannot be extended (NumPy: "can't extend empty axis") */
    assert_int_equal(weft_type_tensor(G, WEFT_FLOAT64, 2, (int64_t[]){0, 2}, &t), WEFT_OK);
    weft_var_t *e = weft_var_create_at(G, t, "e", "model.c", 8);
    int64_t w[4] = {1, 0, 0, 0};
    assert_null(weft_pad_at(G, e, 2, w, WEFT_PAD_REFLECT, 0, "f.c", 5));
    assert_int_equal(weft_graph_error(G), WEFT_EINVAL);
    assert_string_equal(weft_graph_error_message(G),
                        "pad (at f.c:5): axis 0 of length 0 cannot be padded by (1, 0) in this "
                        "mode");
    weft_graph_clear_error(G);
    assert_null(weft_repeat_at(G, x, -1, 0, "f.c", 6));
    assert_string_equal(weft_graph_error_message(G), "repeat (at f.c:6): repeats -1 < 0");
    weft_graph_clear_error(G);
}

/* Evaluates a constant-only y. */
static void expect_c(weft_var_t *y, weft_dtype_t dt, int nd, const int64_t *shape,
                     const double *want)
{
    expect_n(0, NULL, NULL, y, dt, nd, shape, want);
}

static void test_arange_linspace_eye_numpy_values(void **state)
{
    (void)state;
    /* values from NumPy 1.24 (/usr/bin/python3) */
    expect_c(weft_arange(G, 0.1, 1.0, 0.3, WEFT_FLOAT64), WEFT_FLOAT64, 1, (int64_t[]){3},
             (double[]){0.1, 0.4, 0.7000000000000001});
    expect_c(weft_arange(G, 10, 1, -3, WEFT_INT32), WEFT_INT32, 1, (int64_t[]){3},
             (double[]){10, 7, 4});
    expect_c(weft_arange(G, 1, 3, 0.5, WEFT_INT64), WEFT_INT64, 1, (int64_t[]){4},
             (double[]){1, 1, 1, 1});
    expect_c(weft_arange(G, 3, 1, 1, WEFT_INT64), WEFT_INT64, 1, (int64_t[]){0}, NULL);
    expect_c(weft_linspace(G, 0, 1, 7, true, WEFT_FLOAT64), WEFT_FLOAT64, 1, (int64_t[]){7},
             (double[]){0.0, 0.16666666666666666, 0.3333333333333333, 0.5, 0.6666666666666666,
                        0.8333333333333333, 1.0});
    expect_c(weft_linspace(G, -1, 2, 4, false, WEFT_FLOAT64), WEFT_FLOAT64, 1, (int64_t[]){4},
             (double[]){-1.0, -0.25, 0.5, 1.25});
    expect_c(weft_linspace(G, 2, 3, 1, true, WEFT_FLOAT64), WEFT_FLOAT64, 1, (int64_t[]){1},
             (double[]){2.0});
    expect_c(weft_linspace(G, 0, 10, 5, true, WEFT_INT32), WEFT_INT32, 1, (int64_t[]){5},
             (double[]){0, 2, 5, 7, 10});
    expect_c(weft_eye(G, 2, 4, 1, WEFT_FLOAT32), WEFT_FLOAT32, 2, (int64_t[]){2, 4},
             (double[]){0, 1, 0, 0, 0, 0, 1, 0});
    expect_c(weft_eye(G, 3, 2, -1, WEFT_BOOL), WEFT_BOOL, 2, (int64_t[]){3, 2},
             (double[]){0, 0, 1, 0, 0, 1});
    assert_null(weft_arange_at(G, 0, 1, 0, WEFT_FLOAT64, "f.c", 3));
    assert_string_equal(weft_graph_error_message(G), "arange (at f.c:3): step is 0");
    weft_graph_clear_error(G);
    assert_null(weft_linspace_at(G, 0, 1, -2, true, WEFT_FLOAT64, "f.c", 4));
    assert_string_equal(weft_graph_error_message(G),
                        "linspace (at f.c:4): length -2 outside [0, 2^31] (or not a number)");
    weft_graph_clear_error(G);
}

static void test_matmul_batch_broadcast_and_1d(void **state)
{
    (void)state;
    int64_t sa[4] = {2, 1, 2, 3}, sb[3] = {3, 3, 2};
    double av[12], bv[18];
    for (int i = 0; i < 12; i++) av[i] = i - 5;
    for (int i = 0; i < 18; i++) bv[i] = i % 7 - 2;
    weft_var_t *x[4] = {ck_var(G, WEFT_FLOAT64, 4, sa), ck_var(G, WEFT_FLOAT64, 3, sb),
                        ck_var(G, WEFT_FLOAT64, 1, (int64_t[]){3}),
                        ck_var(G, WEFT_FLOAT64, 1, (int64_t[]){2})};
    weft_tensor_t *v[4] = {ck_tensor(WEFT_FLOAT64, 4, sa, av), ck_tensor(WEFT_FLOAT64, 3, sb, bv),
                           ck_tensor(WEFT_FLOAT64, 1, (int64_t[]){3}, (double[]){1, -2, 3}),
                           ck_tensor(WEFT_FLOAT64, 1, (int64_t[]){2}, (double[]){2, -1})};
    /* np.matmul values (NumPy 1.24) */
    expect_n(4, x, v, weft_matmul(G, x[0], x[1]), WEFT_FLOAT64, 4, (int64_t[]){2, 3, 2, 2},
             (double[]){4, -8, 4, 1, -19, 4, -7, 4, -7, -19, -4, -7,
                        4, 10, 4, 19, 5, 4, 17, 4, -1, 5, 2, 17});
    expect_n(4, x, v, weft_matmul(G, x[2], x[1]), WEFT_FLOAT64, 2, (int64_t[]){3, 2},
             (double[]){4, 6, 9, 4, 7, 9});
    expect_n(4, x, v, weft_matmul(G, x[1], x[3]), WEFT_FLOAT64, 2, (int64_t[]){3, 3},
             (double[]){-3, -1, 1, 10, -2, 0, 2, -3, -1});
    /* 2-d and 1-d: Dot itself */
    weft_slice_t m0[1] = {WEFT_SLICE_AT(0)};
    weft_var_t *mat = weft_subtensor(G, x[1], 1, m0);
    expect_n(4, x, v, weft_matmul(G, x[2], mat), WEFT_FLOAT64, 1, (int64_t[]){2},
             (double[]){4, 6});
    weft_var_t *three[3] = {x[1], x[1], x[1]};
    assert_null(weft_matmul_at(G, x[0], weft_stack(G, 3, three, 0), "f.c", 3));
    assert_int_equal(weft_graph_error(G), WEFT_ESHAPE);
    assert_string_equal(weft_graph_error_message(G),
                        "matmul (at f.c:3): batch lengths 2 and 3 do not broadcast (batch axis 0)");
    weft_graph_clear_error(G);
    for (int i = 0; i < 4; i++) weft_tensor_release(v[i]);
}

static void test_large_concatenate_same_bits_at_1_2_4_workers(void **state)
{
    (void)state;
    int64_t s[2] = {300, 1001};
    weft_tensor_t *xv = ck_random(WEFT_FLOAT64, 2, s, -3, 3, ck_seed("concat_threads"));
    weft_var_t *x = ck_var(G, WEFT_FLOAT64, 2, s);
    weft_var_t *parts[3] = {x, weft_transpose(G, weft_transpose(G, x)), x};
    weft_var_t *outs[5] = {weft_concatenate(G, 3, parts, 0), weft_concatenate(G, 3, parts, 1),
                           weft_stack(G, 3, parts, 1), weft_tile(G, x, 2, ((int64_t[]){2, 3})),
                           weft_repeat(G, x, 3, 0)};
    ck_same_bits_at_1_2_4(G, x, xv, 5, outs);
    weft_tensor_release(xv);
}

static void test_json_round_trip(void **state)
{
    (void)state;
    weft_graph_t *g = NULL, *g2 = NULL;
    int64_t s[2] = {2, 3};
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    const weft_type_t *t = NULL;
    assert_int_equal(weft_type_tensor(g, WEFT_FLOAT64, 2, s, &t), WEFT_OK);
    weft_var_t *x = weft_var_create_at(g, t, "x", __FILE__, __LINE__);
    weft_var_t *xs[2] = {x, x}, *parts[3];
    weft_var_t *outs[4] = {weft_concatenate(g, 2, xs, 1), weft_stack(g, 2, xs, 2),
                           weft_split(g, x, 3, 1, parts), weft_repeat(g, x, 2, 0)};
    weft_graph_io_t io = {1, &x, NULL, 4, outs, 0, NULL}, back;
    char *text = NULL;
    assert_int_equal(weft_graph_io_save(&io, &text), WEFT_OK);
    assert_non_null(strstr(text, "\"op\":\"Join\",\"props\":{\"axis\":1,\"ndim\":2}"));
    assert_non_null(strstr(text, "\"op\":\"Alloc\",\"props\":{\"shape\":[2,2,3]}"));
    assert_int_equal(weft_graph_create(NULL, &g2), WEFT_OK);
    assert_int_equal(weft_graph_io_load(g2, text, strlen(text), NULL, &back), WEFT_OK);
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT64, 2, s, (double[]){1, 2, 3, 4, 5, 6});
    weft_tensor_t *r1[4] = {NULL}, *r2[4] = {NULL};
    assert_int_equal(weft_eval(g, 1, &x, &xv, 4, outs, r1), WEFT_OK);
    assert_int_equal(weft_eval(g2, 1, back.inputs, &xv, 4, back.outputs, r2), WEFT_OK);
    for (int i = 0; i < 4; i++) {
        size_t bytes = weft_tensor_size(r1[i]) * weft_dtype_size(weft_tensor_dtype(r1[i]));
        assert_int_equal(weft_tensor_size(r1[i]), weft_tensor_size(r2[i]));
        assert_memory_equal(weft_tensor_data(r1[i]), weft_tensor_data(r2[i]), bytes);
        weft_tensor_release(r1[i]);
        weft_tensor_release(r2[i]);
    }
    weft_tensor_release(xv);
    weft_graph_io_clear(&back);
    weft_graph_io_free_text(text);
    weft_graph_destroy(g2);
    weft_graph_destroy(g);
}

/* ---- gradients ----------------------------------------------------------- */

typedef enum gk { G_CONCAT0, G_CONCAT1, G_STACK, G_SPLIT, G_SPLIT_ONE, G_ROLL, G_FLIP, G_MOVE,
                  G_TILE, G_REPEAT, G_PAD_EDGE, G_PAD_REFLECT, G_PAD_REFLECT_WIDE, G_BCAST,
                  G_MATMUL, G_MATMUL_1D, G_COUNT } gk_t;

static weft_var_t *grad_fn(weft_graph_t *g, size_t n_in, weft_var_t *const *in, void *user)
{
    (void)n_in;
    weft_var_t *parts[3] = {NULL};
    int64_t idx[2] = {1, 3};
    switch (*(const gk_t *)user) {
    case G_CONCAT0: return weft_concatenate(g, 2, in, 0);
    case G_CONCAT1: {
        weft_var_t *three[3] = {in[0], in[1], in[0]};
        return weft_concatenate(g, 3, three, 1);
    }
    case G_STACK: return weft_stack(g, 2, in, 1);
    case G_SPLIT: /* every part reaches the cost, with a different weight */
        weft_split_indices(g, in[0], 2, idx, 1, parts);
        return weft_add(g, weft_sum(g, weft_mul(g, parts[0], parts[0]), 0, NULL, false),
                        weft_add(g, weft_sum(g, parts[1], 0, NULL, false),
                                 weft_sum(g, weft_exp(g, parts[2]), 0, NULL, false)));
    case G_SPLIT_ONE: /* parts 0 and 2 disconnected: zeros there */
        weft_split_indices(g, in[0], 2, idx, 1, parts);
        return weft_mul(g, parts[1], parts[1]);
    case G_ROLL: return weft_roll(g, weft_mul(g, in[0], in[0]), -5, 1);
    case G_FLIP: return weft_exp(g, weft_flip(g, in[0], 0, NULL));
    case G_MOVE: return weft_mul(g, weft_moveaxis(g, in[0], 0, 1), weft_swapaxes(g, in[0], 1, 0));
    case G_TILE: return weft_tile(g, in[0], 3, ((int64_t[]){2, 1, 2}));
    case G_REPEAT: return weft_repeat(g, in[0], 3, -1);
    case G_PAD_EDGE:
        return weft_pad(g, in[0], 2, ((int64_t[]){2, 1, 0, 3}), WEFT_PAD_EDGE, 0);
    case G_PAD_REFLECT:
        return weft_pad(g, in[0], 1, ((int64_t[]){2, 1}), WEFT_PAD_REFLECT, 0);
    case G_PAD_REFLECT_WIDE: /* widths past both lengths (3, 4): repeated reflection */
        return weft_pad(g, weft_mul(g, in[0], in[0]), 2, ((int64_t[]){5, 0, 1, 7}),
                        WEFT_PAD_REFLECT, 0);
    case G_BCAST: {
        weft_slice_t row[1] = {WEFT_SLICE(1, 2, 1)};
        return weft_broadcast_to(g, weft_subtensor(g, in[0], 1, row), 3,
                                 ((int64_t[]){2, 3, 4}));
    }
    case G_MATMUL: /* (2, 1, 3, 4) @ (3, 4, 3): batch (2, 3) */
        return weft_matmul(g, weft_reshape(g, in[0], 4, ((int64_t[]){2, 1, 3, 2})),
                           weft_reshape(g, in[1], 3, ((int64_t[]){2, 2, 3})));
    case G_MATMUL_1D: { /* (4,) @ (3, 4, 3) */
        weft_slice_t r0[1] = {WEFT_SLICE_AT(0)};
        return weft_matmul(g, weft_subtensor(g, in[0], 1, r0),
                           weft_reshape(g, in[1], 3, ((int64_t[]){3, 4, 1})));
    }
    default: return NULL;
    }
}

static void test_gradients_verify(void **state)
{
    (void)state;
    int64_t s[2] = {3, 4};
    for (int k = 0; k < G_COUNT; k++) {
        gk_t kind = (gk_t)k;
        weft_tensor_t *x[2] = {ck_random(WEFT_FLOAT64, 2, s, -1, 1, 400 + (uint64_t)k),
                               ck_random(WEFT_FLOAT64, 2, s, -1, 1, 500 + (uint64_t)k)};
        size_t n = kind <= G_STACK || kind >= G_MATMUL ? 2 : 1;
        ck_verify(grad_fn, &kind, n, x);
        weft_tensor_release(x[0]);
        weft_tensor_release(x[1]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_concatenate_values_axes_and_promotion),
        cmocka_unit_test(test_concatenate_unknown_lengths_and_empty),
        cmocka_unit_test(test_stack_values),
        cmocka_unit_test(test_split_sections_and_indices),
        cmocka_unit_test(test_errors_name_op_input_and_site),
        cmocka_unit_test(test_views_flip_squeeze_expand_swap_move),
        cmocka_unit_test(test_view_errors),
        cmocka_unit_test(test_alloc_full_tile_repeat_pad),
        cmocka_unit_test(test_pad_reflect_wide_static),
        cmocka_unit_test(test_alloc_errors),
        cmocka_unit_test(test_arange_linspace_eye_numpy_values),
        cmocka_unit_test(test_matmul_batch_broadcast_and_1d),
        cmocka_unit_test(test_large_concatenate_same_bits_at_1_2_4_workers),
        cmocka_unit_test(test_json_round_trip),
        cmocka_unit_test(test_gradients_verify),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
