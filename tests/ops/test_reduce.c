/* Tests of the reductions (weft/reduce.h): exact small cases (axes, keepdims,
 * dtypes, NaN, empty and length-1 axes, strided / transposed / reversed
 * views), argument errors, randomized comparison with a naive loop, and every
 * gradient through weft_verify_grad. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ops_check.h"

typedef struct fx {
    weft_graph_t *g;
} fx_t;

static int setup(void **state)
{
    static fx_t f;
    assert_int_equal(weft_graph_create(NULL, &f.g), WEFT_OK);
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fx_t *f = *state;
    weft_graph_destroy(f->g);
    return 0;
}

/* Evaluates kind(x; axes, keepdims) for the value xv. */
static weft_tensor_t *run_reduce(weft_graph_t *g, weft_reduce_kind_t kind, weft_tensor_t *xv,
                                 size_t n_axes, const int *axes, bool keepdims)
{
    weft_var_t *x = ck_var(g, weft_tensor_dtype(xv), weft_tensor_ndim(xv), weft_tensor_shape(xv));
    weft_var_t *y = NULL;
    weft_tensor_t *res = NULL;
    assert_non_null(y = weft_reduce_at(g, kind, x, n_axes, axes, keepdims, __FILE__, __LINE__));
    assert_int_equal(ck_eval(g, 1, &x, &xv, y, &res), WEFT_OK);
    return res;
}

static const int64_t s23[2] = {2, 3};
static const double v23[6] = {1, 2, 3, 4, 5, 6};

static void test_reduce_sum_axis0_axis1_all_exact(void **state)
{
    fx_t *f = *state;
    weft_tensor_t *x = ck_tensor(WEFT_FLOAT64, 2, s23, v23);
    int a0 = 0, a1 = -1;
    weft_tensor_t *r0 = run_reduce(f->g, WEFT_REDUCE_SUM, x, 1, &a0, false);
    weft_tensor_t *r1 = run_reduce(f->g, WEFT_REDUCE_SUM, x, 1, &a1, false);
    weft_tensor_t *ra = run_reduce(f->g, WEFT_REDUCE_SUM, x, 0, NULL, false);
    weft_tensor_t *rk = run_reduce(f->g, WEFT_REDUCE_SUM, x, 1, &a1, true);
    ck_expect(r0, 1, (int64_t[]){3}, (double[]){5, 7, 9}, 0);
    ck_expect(r1, 1, (int64_t[]){2}, (double[]){6, 15}, 0);
    ck_expect(ra, 0, NULL, (double[]){21}, 0);
    ck_expect(rk, 2, (int64_t[]){2, 1}, (double[]){6, 15}, 0);
    weft_tensor_t *ts[] = {x, r0, r1, ra, rk};
    for (size_t i = 0; i < 5; i++) {
        weft_tensor_release(ts[i]);
    }
}

static void test_reduce_mean_max_min_prod_exact(void **state)
{
    fx_t *f = *state;
    double v[6] = {3, -1, 7, 0.5, 2, -4};
    weft_tensor_t *x = ck_tensor(WEFT_FLOAT32, 2, s23, v);
    int a1 = 1;
    weft_tensor_t *mean = run_reduce(f->g, WEFT_REDUCE_MEAN, x, 1, &a1, false);
    weft_tensor_t *mx = run_reduce(f->g, WEFT_REDUCE_MAX, x, 0, NULL, true);
    weft_tensor_t *mn = run_reduce(f->g, WEFT_REDUCE_MIN, x, 1, &a1, false);
    weft_tensor_t *pr = run_reduce(f->g, WEFT_REDUCE_PROD, x, 1, &a1, false);
    assert_int_equal(weft_tensor_dtype(mean), WEFT_FLOAT32);
    ck_expect(mean, 1, (int64_t[]){2}, (double[]){3, -0.5}, 1e-6);
    ck_expect(mx, 2, (int64_t[]){1, 1}, (double[]){7}, 0);
    ck_expect(mn, 1, (int64_t[]){2}, (double[]){-1, -4}, 0);
    ck_expect(pr, 1, (int64_t[]){2}, (double[]){-21, -4}, 0);
    weft_tensor_t *ts[] = {x, mean, mx, mn, pr};
    for (size_t i = 0; i < 5; i++) {
        weft_tensor_release(ts[i]);
    }
}

static void test_reduce_integer_dtypes_upcast(void **state)
{
    fx_t *f = *state;
    weft_tensor_t *x =
        ck_tensor(WEFT_INT32, 2, s23, (double[]){2000000000, 2000000000, 1, -5, 4, 3});
    int a1 = 1;
    weft_tensor_t *s = run_reduce(f->g, WEFT_REDUCE_SUM, x, 1, &a1, false);
    weft_tensor_t *m = run_reduce(f->g, WEFT_REDUCE_MEAN, x, 1, &a1, false);
    weft_tensor_t *mx = run_reduce(f->g, WEFT_REDUCE_MAX, x, 1, &a1, false);
    weft_tensor_t *p = run_reduce(f->g, WEFT_REDUCE_PROD, x, 1, &a1, false);
    assert_int_equal(weft_tensor_dtype(s), WEFT_INT64);
    assert_int_equal(weft_tensor_dtype(m), WEFT_FLOAT64);
    assert_int_equal(weft_tensor_dtype(mx), WEFT_INT32);
    assert_int_equal(weft_tensor_dtype(p), WEFT_INT64);
    ck_expect(s, 1, (int64_t[]){2}, (double[]){4000000001.0, 2}, 0);
    ck_expect(m, 1, (int64_t[]){2}, (double[]){4000000001.0 / 3, 2.0 / 3}, 1e-12);
    ck_expect(mx, 1, (int64_t[]){2}, (double[]){2000000000, 4}, 0);
    ck_expect(p, 1, (int64_t[]){2}, (double[]){4e18, -60}, 0);
    weft_tensor_t *ts[] = {x, s, m, mx, p};
    for (size_t i = 0; i < 5; i++) {
        weft_tensor_release(ts[i]);
    }
}

static void test_reduce_max_min_propagate_nan(void **state)
{
    fx_t *f = *state;
    weft_tensor_t *x = ck_tensor(WEFT_FLOAT64, 2, s23, (double[]){1, NAN, 3, 4, 5, 6});
    int a1 = 1;
    weft_tensor_t *mx = run_reduce(f->g, WEFT_REDUCE_MAX, x, 1, &a1, false);
    weft_tensor_t *mn = run_reduce(f->g, WEFT_REDUCE_MIN, x, 1, &a1, false);
    ck_expect(mx, 1, (int64_t[]){2}, (double[]){NAN, 6}, 0);
    ck_expect(mn, 1, (int64_t[]){2}, (double[]){NAN, 4}, 0);
    weft_tensor_release(x);
    weft_tensor_release(mx);
    weft_tensor_release(mn);
}

/* A (2,3) transposed view of a (3,2) buffer, a reversed view, a step-2 view. */
static void test_reduce_strided_transposed_reversed_views(void **state)
{
    fx_t *f = *state;
    double buf[12] = {1, 4, 2, 5, 3, 6, 10, 20, 30, 40, 50, 60};
    weft_tensor_t *tv = NULL, *rv = NULL, *sv = NULL;
    assert_int_equal(weft_tensor_from_data(WEFT_FLOAT64, 2, s23, (int64_t[]){1, 2}, buf, &tv),
                     WEFT_OK); /* == [[1,2,3],[4,5,6]] */
    assert_int_equal(weft_tensor_from_data(WEFT_FLOAT64, 1, (int64_t[]){6},
                                           (int64_t[]){-1}, buf + 11, &rv), WEFT_OK);
    assert_int_equal(weft_tensor_from_data(WEFT_FLOAT64, 2, (int64_t[]){2, 3},
                                           (int64_t[]){6, 2}, buf, &sv), WEFT_OK);
    int a0 = 0, a1 = 1;
    weft_tensor_t *r1 = run_reduce(f->g, WEFT_REDUCE_SUM, tv, 1, &a0, false);
    weft_tensor_t *r2 = run_reduce(f->g, WEFT_REDUCE_PROD, tv, 1, &a1, false);
    weft_tensor_t *r3 = run_reduce(f->g, WEFT_REDUCE_MAX, rv, 0, NULL, false);
    weft_tensor_t *r4 = run_reduce(f->g, WEFT_REDUCE_SUM, sv, 1, &a1, false);
    weft_tensor_t *r5 = NULL;
    weft_var_t *x = ck_var(f->g, WEFT_FLOAT64, 1, (int64_t[]){6}), *am = NULL;
    assert_non_null(am = weft_argmax(f->g, x, 0, false));
    assert_int_equal(ck_eval(f->g, 1, &x, &rv, am, &r5), WEFT_OK);
    ck_expect(r1, 1, (int64_t[]){3}, (double[]){5, 7, 9}, 0);
    ck_expect(r2, 1, (int64_t[]){2}, (double[]){6, 120}, 0);
    ck_expect(r3, 0, NULL, (double[]){60}, 0);
    ck_expect(r4, 1, (int64_t[]){2}, (double[]){1 + 2 + 3, 10 + 30 + 50}, 0);
    ck_expect(r5, 0, NULL, (double[]){0}, 0); /* reversed: 60 comes first */
    weft_tensor_t *ts[] = {tv, rv, sv, r1, r2, r3, r4, r5};
    for (size_t i = 0; i < 8; i++) {
        weft_tensor_release(ts[i]);
    }
}

static void test_reduce_empty_and_length1_axes(void **state)
{
    fx_t *f = *state;
    int64_t s03[2] = {0, 3}, s13[2] = {1, 3};
    weft_tensor_t *e = ck_tensor(WEFT_FLOAT64, 2, s03, NULL);
    weft_tensor_t *one = ck_tensor(WEFT_FLOAT64, 2, s13, (double[]){4, 5, 6});
    int a0 = 0, a1 = 1;
    weft_tensor_t *s = run_reduce(f->g, WEFT_REDUCE_SUM, e, 1, &a0, false);
    weft_tensor_t *p = run_reduce(f->g, WEFT_REDUCE_PROD, e, 1, &a0, false);
    weft_tensor_t *m = run_reduce(f->g, WEFT_REDUCE_MEAN, e, 1, &a0, false);
    weft_tensor_t *mx1 = run_reduce(f->g, WEFT_REDUCE_MAX, e, 1, &a1, false); /* no groups */
    weft_tensor_t *o = run_reduce(f->g, WEFT_REDUCE_SUM, one, 1, &a0, true);
    ck_expect(s, 1, (int64_t[]){3}, (double[]){0, 0, 0}, 0);
    ck_expect(p, 1, (int64_t[]){3}, (double[]){1, 1, 1}, 0);
    ck_expect(m, 1, (int64_t[]){3}, (double[]){NAN, NAN, NAN}, 0);
    ck_expect(mx1, 1, (int64_t[]){0}, NULL, 0);
    ck_expect(o, 2, (int64_t[]){1, 3}, (double[]){4, 5, 6}, 0);
    /* Max over an empty axis has no identity: the node fails. */
    weft_var_t *x = ck_var(f->g, WEFT_FLOAT64, 2, s03), *y = NULL;
    weft_tensor_t *res = NULL;
    assert_non_null(y = weft_max(f->g, x, 1, &a0, false));
    assert_int_equal(weft_eval(f->g, 1, &x, &e, 1, &y, &res), WEFT_ESHAPE);
    assert_null(res);
    assert_non_null(strstr(weft_graph_last_error(f->g), "Max: zero-size array to reduction "
                                                        "operation maximum which has no "
                                                        "identity (reduced axis 0 has "
                                                        "length 0)"));
    weft_tensor_t *ts[] = {e, one, s, p, m, mx1, o};
    for (size_t i = 0; i < 7; i++) {
        weft_tensor_release(ts[i]);
    }
}

static void test_reduce_argmax_axis_flat_ties_first(void **state)
{
    fx_t *f = *state;
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT64, 2, s23, (double[]){5, 9, 9, 7, 1, 7});
    weft_var_t *x = ck_var(f->g, WEFT_FLOAT64, 2, s23), *a = NULL, *b = NULL, *c = NULL;
    assert_non_null(a = weft_argmax(f->g, x, 1, false));
    assert_non_null(b = weft_argmax(f->g, x, 0, true));
    assert_non_null(c = weft_argmax(f->g, x, WEFT_ARGMAX_FLAT, false));
    assert_int_equal(weft_type_dtype(weft_var_type(a)), WEFT_INT64);
    weft_var_t *outs[3] = {a, b, c};
    weft_tensor_t *r[3] = {NULL, NULL, NULL};
    assert_int_equal(weft_eval(f->g, 1, &x, &xv, 3, outs, r), WEFT_OK);
    ck_expect(r[0], 1, (int64_t[]){2}, (double[]){1, 0}, 0);
    ck_expect(r[1], 2, (int64_t[]){1, 3}, (double[]){1, 0, 0}, 0);
    ck_expect(r[2], 0, NULL, (double[]){1}, 0);
    for (int i = 0; i < 3; i++) {
        weft_tensor_release(r[i]);
    }
    weft_tensor_release(xv);
}

/* Evaluates argmax(x, axis) for the value xv (any layout). */
static weft_tensor_t *run_argmax(weft_graph_t *g, weft_tensor_t *xv, int axis)
{
    weft_var_t *x = ck_var(g, weft_tensor_dtype(xv), weft_tensor_ndim(xv), weft_tensor_shape(xv));
    weft_var_t *a = NULL;
    weft_tensor_t *r = NULL;
    assert_non_null(a = weft_argmax(g, x, axis, false));
    assert_int_equal(ck_eval(g, 1, &x, &xv, a, &r), WEFT_OK);
    return r;
}

/* "First" is in the view's index order, as NumPy's argmax: reversed views
 * (negative element offsets), transposed views, ties and NaN (the first NaN). */
static void test_reduce_argmax_of_reversed_and_transposed_views_is_first_in_view_order(
    void **state)
{
    fx_t *f = *state;
    double v[4] = {1, 3, 3, 2}, m[6] = {1, 5, 2, 7, 0, 6}, b[6] = {9, 1, 9, 4, 9, 0};
    double nan4[4] = {NAN, 1, NAN, 5}, t[6] = {4, 8, 8, 8, 2, 8};
    weft_tensor_t *xs[5] = {NULL};
    /* x[::-1] = [2, 3, 3, 1] */
    assert_int_equal(weft_tensor_from_data(WEFT_FLOAT64, 1, (int64_t[]){4}, (int64_t[]){-1},
                                           v + 3, &xs[0]), WEFT_OK);
    /* columns reversed: [[2, 5, 1], [6, 0, 7]] */
    assert_int_equal(weft_tensor_from_data(WEFT_FLOAT64, 2, s23, (int64_t[]){3, -1}, m + 2,
                                           &xs[1]), WEFT_OK);
    /* both axes reversed: [[0, 9, 4], [9, 1, 9]] */
    assert_int_equal(weft_tensor_from_data(WEFT_FLOAT64, 2, s23, (int64_t[]){-3, -1}, b + 5,
                                           &xs[2]), WEFT_OK);
    /* [5, NaN, 1, NaN] */
    assert_int_equal(weft_tensor_from_data(WEFT_FLOAT64, 1, (int64_t[]){4}, (int64_t[]){-1},
                                           nan4 + 3, &xs[3]), WEFT_OK);
    /* transposed: [[4, 8], [8, 2], [8, 8]] */
    assert_int_equal(weft_tensor_from_data(WEFT_FLOAT64, 2, (int64_t[]){3, 2}, (int64_t[]){1, 3},
                                           t, &xs[4]), WEFT_OK);
    weft_tensor_t *r[6] = {run_argmax(f->g, xs[0], 0), run_argmax(f->g, xs[1], 1),
                           run_argmax(f->g, xs[2], WEFT_ARGMAX_FLAT),
                           run_argmax(f->g, xs[3], 0), run_argmax(f->g, xs[4], 0),
                           run_argmax(f->g, xs[2], 0)};
    ck_expect(r[0], 0, NULL, (double[]){1}, 0);
    ck_expect(r[1], 1, (int64_t[]){2}, (double[]){1, 2}, 0);
    ck_expect(r[2], 0, NULL, (double[]){1}, 0);
    ck_expect(r[3], 0, NULL, (double[]){1}, 0);
    ck_expect(r[4], 1, (int64_t[]){2}, (double[]){1, 0}, 0);
    ck_expect(r[5], 1, (int64_t[]){3}, (double[]){1, 0, 1}, 0);
    for (int i = 0; i < 6; i++) {
        weft_tensor_release(r[i]);
    }
    for (int i = 0; i < 5; i++) {
        weft_tensor_release(xs[i]);
    }
}

/* The integer and float32 loads take the same path: x[::-1] of [1, 3, 3, 2]. */
static void test_reduce_argmax_of_reversed_view_every_dtype(void **state)
{
    fx_t *f = *state;
    const weft_dtype_t dts[3] = {WEFT_FLOAT32, WEFT_INT32, WEFT_INT64};
    for (int i = 0; i < 3; i++) {
        weft_tensor_t *base = ck_tensor(dts[i], 1, (int64_t[]){4}, (double[]){1, 3, 3, 2});
        weft_tensor_t *rv = NULL;
        assert_int_equal(weft_tensor_view(base, 1, (int64_t[]){4}, (int64_t[]){-1}, 3, &rv),
                         WEFT_OK);
        weft_tensor_t *r = run_argmax(f->g, rv, 0);
        ck_expect(r, 0, NULL, (double[]){1}, 0);
        weft_tensor_release(r);
        weft_tensor_release(rv);
        weft_tensor_release(base);
    }
}

/* NumPy raises for Max, Min and Argmax over an empty axis even when the
 * output is empty too (axis 0 of shape (0,0)); over a non-empty axis of an
 * empty tensor the empty result is fine. */
static void test_reduce_extremes_over_empty_axis_fail_even_with_empty_output(void **state)
{
    fx_t *f = *state;
    int64_t s00[2] = {0, 0}, s03[2] = {0, 3};
    weft_tensor_t *e00 = ck_tensor(WEFT_FLOAT64, 2, s00, NULL);
    weft_tensor_t *e03 = ck_tensor(WEFT_FLOAT64, 2, s03, NULL);
    weft_var_t *x = ck_var(f->g, WEFT_FLOAT64, 2, (int64_t[]){WEFT_DIM_UNKNOWN, WEFT_DIM_UNKNOWN});
    weft_var_t *y[5] = {NULL};
    int a0 = 0, a1 = 1;
    assert_non_null(y[0] = weft_max(f->g, x, 1, &a0, false));
    assert_non_null(y[1] = weft_min(f->g, x, 1, &a1, true));
    assert_non_null(y[2] = weft_argmax(f->g, x, 0, false));
    assert_non_null(y[3] = weft_argmax(f->g, x, WEFT_ARGMAX_FLAT, false));
    assert_non_null(y[4] = weft_argmax(f->g, x, 1, false));
    const char *want[4] = {
        "Max: zero-size array to reduction operation maximum which has no identity (reduced "
        "axis 0 has length 0)",
        "Min: zero-size array to reduction operation minimum which has no identity (reduced "
        "axis 1 has length 0)",
        "Argmax: zero-size array to reduction operation argmax which has no identity (reduced "
        "axis 0 has length 0)",
        "Argmax: zero-size array to reduction operation argmax which has no identity (reduced "
        "axis 0 has length 0)"};
    weft_tensor_t *r = NULL;
    for (int i = 0; i < 4; i++) {
        assert_int_equal(ck_eval(f->g, 1, &x, i < 3 ? &e00 : &e03, y[i], &r), WEFT_ESHAPE);
        assert_null(r);
        const char *msg = weft_graph_last_error(f->g);
        assert_non_null(strstr(msg, want[i]));
        assert_non_null(strstr(msg, i == 0 ? "Max{" : i == 1 ? "Min{" : "Argmax{")); /* node */
    }
    assert_int_equal(ck_eval(f->g, 1, &x, &e03, y[4], &r), WEFT_OK);
    ck_expect(r, 1, (int64_t[]){0}, NULL, 0);
    weft_tensor_release(r);
    weft_tensor_release(e00);
    weft_tensor_release(e03);
}

static void test_reduce_static_shape_inference(void **state)
{
    fx_t *f = *state;
    int64_t shape[3] = {4, WEFT_DIM_UNKNOWN, 5};
    weft_var_t *x = ck_var(f->g, WEFT_FLOAT64, 3, shape), *y = NULL, *z = NULL;
    int axes[2] = {0, 2};
    assert_non_null(y = weft_sum(f->g, x, 2, axes, false));
    assert_non_null(z = weft_prod(f->g, x, 2, axes, true));
    char b[64];
    weft_type_print(weft_var_type(y), b, sizeof b);
    assert_string_equal(b, "float64[?]");
    weft_type_print(weft_var_type(z), b, sizeof b);
    assert_string_equal(b, "float64[1,?,1]");
    char p[96];
    weft_apply_print(weft_var_owner(z), p, sizeof p);
    assert_non_null(strstr(p, "Prod{axes=(0,2), keepdims=1}"));
}

static void test_reduce_bad_arguments_are_rejected(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = ck_var(f->g, WEFT_FLOAT64, 2, s23), *y = (weft_var_t *)1;
    weft_var_t *bx = ck_var(f->g, WEFT_COMPLEX64, 1, (int64_t[]){3});
    int bad[1] = {2}, rep[2] = {1, -1}, neg[1] = {-3};
    assert_null(y = weft_sum(f->g, x, 1, bad, false));
    assert_int_equal(weft_graph_error(f->g), WEFT_EINVAL);
    weft_graph_clear_error(f->g);
    assert_null(y);
    assert_non_null(strstr(weft_graph_last_error(f->g), "axis 2 out of range"));
    assert_non_null(strstr(weft_graph_last_error(f->g), "test_reduce.c"));
    assert_null(y = weft_mean(f->g, x, 2, rep, false));
    assert_int_equal(weft_graph_error(f->g), WEFT_EINVAL);
    assert_non_null(strstr(weft_graph_error_message(f->g), "repeated"));
    weft_graph_clear_error(f->g);
    assert_null(y = weft_max(f->g, x, 1, neg, false));
    assert_int_equal(weft_graph_error(f->g), WEFT_EINVAL);
    weft_graph_clear_error(f->g);
    assert_null(y = weft_min(f->g, x, 1, NULL, false));
    assert_int_equal(weft_graph_error(f->g), WEFT_EINVAL);
    weft_graph_clear_error(f->g);
    /* complex: Sum/Mean/Prod take it (test_complex.c), the orderings not */
    assert_null(y = weft_max(f->g, bx, 0, NULL, false));
    assert_int_equal(weft_graph_error(f->g), WEFT_ETYPE);
    assert_non_null(strstr(weft_graph_error_message(f->g),
                           "Max: input 0 has type complex64[3] (complex numbers have no order"));
    weft_graph_clear_error(f->g);
    assert_null(y = weft_sum(f->g, NULL, 0, NULL, false));
    assert_int_equal(weft_graph_error(f->g), WEFT_EINVAL);
    weft_graph_clear_error(f->g);
    assert_null(weft_sum(NULL, x, 0, NULL, false));
    assert_null(y = weft_reduce_at(f->g, (weft_reduce_kind_t)9, x, 0, NULL, false, "f.c", 1));
    assert_int_equal(weft_graph_error(f->g), WEFT_EINVAL);
    weft_graph_clear_error(f->g);
    assert_null(y = weft_argmax(f->g, x, 2, false));
    assert_int_equal(weft_graph_error(f->g), WEFT_EINVAL);
    weft_graph_clear_error(f->g);
    /* bool x: NumPy's argmax takes it */
    assert_non_null(y = weft_argmax(f->g, ck_var(f->g, WEFT_BOOL, 1, (int64_t[]){3}), 0, false));
    weft_graph_t *g2 = NULL;
    assert_int_equal(weft_graph_create(NULL, &g2), WEFT_OK);
    assert_null(y = weft_sum(g2, x, 0, NULL, false));
    assert_int_equal(weft_graph_error(g2), WEFT_EFOREIGN);
    weft_graph_clear_error(g2);
    weft_graph_destroy(g2);
}

static void test_reduce_classes_are_registered(void **state)
{
    (void)state;
    const char *names[] = {"Sum", "Mean", "Max", "Min", "Prod", "ReduceGrad", "Argmax"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        assert_non_null(weft_ops_find_class(names[i]));
        assert_string_equal(weft_ops_find_class(names[i])->name, names[i]);
    }
}

/* ---- randomized comparison with a naive loop ---------------------------------- */

static double naive_init(weft_reduce_kind_t k)
{
    return k == WEFT_REDUCE_PROD ? 1.0 : k == WEFT_REDUCE_MAX ? -INFINITY
                                       : k == WEFT_REDUCE_MIN ? INFINITY : 0.0;
}

/* The reference: folds every element by multi-index into its output slot. */
static void naive_reduce(weft_reduce_kind_t k, const weft_tensor_t *x, uint32_t mask,
                         double *out, size_t n_out)
{
    int nd = weft_tensor_ndim(x);
    int64_t idx[WEFT_MAX_NDIM] = {0};
    size_t cnt = 0;
    for (size_t i = 0; i < n_out; i++) {
        out[i] = naive_init(k);
    }
    for (size_t e = 0; e < weft_tensor_size(x); e++) {
        size_t o = 0;
        for (int d = 0; d < nd; d++) {
            if (!(mask & (1u << d))) {
                o = o * (size_t)weft_tensor_dim(x, d) + (size_t)idx[d];
            }
        }
        double v;
        weft_tensor_get(x, idx, &v);
        out[o] = k == WEFT_REDUCE_PROD ? out[o] * v : k == WEFT_REDUCE_MAX ? fmax(out[o], v)
               : k == WEFT_REDUCE_MIN ? fmin(out[o], v) : out[o] + v;
        for (int d = nd - 1; d >= 0; d--) {
            if (++idx[d] < weft_tensor_dim(x, d)) {
                break;
            }
            idx[d] = 0;
        }
    }
    cnt = n_out ? weft_tensor_size(x) / n_out : 0;
    for (size_t i = 0; k == WEFT_REDUCE_MEAN && i < n_out; i++) {
        out[i] /= (double)cnt;
    }
}

/* A random 1-4-d float64 view: a permutation of a contiguous base's axes,
 * sometimes with a step of 2 on one axis. */
static weft_tensor_t *random_view(uint64_t *rs, weft_tensor_t **base_out)
{
    int nd = 1 + (int)(ck_rand(rs) % 4);
    int64_t shape[4], bshape[4], perm[4], strides[4], bstr[4];
    int step_axis = (int)(ck_rand(rs) % 6); /* >= nd: none */
    for (int d = 0; d < nd; d++) {
        shape[d] = 1 + (int64_t)(ck_rand(rs) % 5);
        perm[d] = d;
    }
    for (int d = nd - 1; d > 0; d--) {
        int j = (int)(ck_rand(rs) % (uint64_t)(d + 1));
        int64_t t = perm[d];
        perm[d] = perm[j];
        perm[j] = t;
    }
    for (int d = 0; d < nd; d++) { /* base axis perm[d] holds view axis d */
        bshape[perm[d]] = shape[d] * (d == step_axis ? 2 : 1);
    }
    weft_tensor_t *base = ck_random(WEFT_FLOAT64, nd, bshape, -2, 2, ck_rand(rs));
    int64_t s = 1;
    for (int d = nd - 1; d >= 0; d--) {
        bstr[d] = s;
        s *= bshape[d];
    }
    for (int d = 0; d < nd; d++) {
        strides[d] = bstr[perm[d]] * (d == step_axis ? 2 : 1);
    }
    weft_tensor_t *v = NULL;
    assert_int_equal(weft_tensor_view(base, nd, shape, strides, 0, &v), WEFT_OK);
    *base_out = base;
    return v;
}

/* Long contiguous rows take the four-chain fold; lengths 8..1001 cover its
 * remainder handling; NaN stays sticky across the chains. */
static void test_reduce_long_rows_match_naive_loop(void **state)
{
    fx_t *f = *state;
    uint64_t rs = ck_seed("test_reduce_long_rows_match_naive_loop");
    const int64_t lens[4] = {8, 9, 11, 1001};
    for (int li = 0; li < 4; li++) {
        int64_t shape[2] = {3, lens[li]};
        weft_tensor_t *x = ck_random(WEFT_FLOAT64, 2, shape, 0.9, 1.1, ck_rand(&rs));
        int a1 = 1;
        for (int k = 0; k < WEFT_REDUCE_KIND_COUNT; k++) {
            weft_tensor_t *r = run_reduce(f->g, (weft_reduce_kind_t)k, x, 1, &a1, false);
            double want[3];
            naive_reduce((weft_reduce_kind_t)k, x, 2u, want, 3);
            ck_expect(r, 1, (int64_t[]){3}, want, 1e-13);
            weft_tensor_release(r);
        }
        weft_tensor_set(x, (int64_t[]){1, lens[li] - 2}, NAN);
        weft_tensor_t *mx = run_reduce(f->g, WEFT_REDUCE_MAX, x, 1, &a1, false);
        assert_true(isnan(weft_tensor_flat_get(mx, 1)));
        assert_false(isnan(weft_tensor_flat_get(mx, 0)));
        weft_tensor_release(mx);
        weft_tensor_release(x);
    }
}

/* Integer sums and products wrap in two's complement (no undefined overflow). */
static void test_reduce_integer_overflow_wraps(void **state)
{
    fx_t *f = *state;
    weft_tensor_t *x = ck_tensor(WEFT_INT64, 1, (int64_t[]){2}, NULL);
    int64_t *d = weft_tensor_data(x);
    d[0] = INT64_MAX;
    d[1] = 1;
    weft_tensor_t *s = run_reduce(f->g, WEFT_REDUCE_SUM, x, 0, NULL, false);
    assert_true(*(int64_t *)weft_tensor_data(s) == INT64_MIN);
    d[1] = 2;
    weft_tensor_t *p = run_reduce(f->g, WEFT_REDUCE_PROD, x, 0, NULL, false);
    assert_true(*(int64_t *)weft_tensor_data(p) == -2);
    weft_tensor_release(s);
    weft_tensor_release(p);
    weft_tensor_release(x);
}

static void test_reduce_random_views_match_naive_loop(void **state)
{
    fx_t *f = *state;
    uint64_t rs = ck_seed("test_reduce_random_views_match_naive_loop");
    for (int iter = 0; iter < 150; iter++) {
        weft_tensor_t *base = NULL, *x = random_view(&rs, &base);
        int nd = weft_tensor_ndim(x), axes[4], n_axes = 0;
        uint32_t mask = (uint32_t)(ck_rand(&rs) % (1u << nd));
        for (int d = 0; d < nd; d++) {
            if (mask & (1u << d)) {
                axes[n_axes++] = d;
            }
        }
        weft_reduce_kind_t k = (weft_reduce_kind_t)(ck_rand(&rs) % WEFT_REDUCE_KIND_COUNT);
        bool keep = ck_rand(&rs) & 1;
        weft_tensor_t *r = run_reduce(f->g, k, x, (size_t)n_axes, axes, keep);
        double want[1024];
        size_t n_out = weft_tensor_size(r);
        naive_reduce(k, x, mask, want, n_out);
        for (size_t i = 0; i < n_out; i++) {
            double got = weft_tensor_flat_get(r, i);
            if (fabs(got - want[i]) > 1e-12 * (1 + fabs(want[i]))) {
                print_error("iter %d kind %d mask %u: element %zu got %.17g want %.17g\n", iter,
                            (int)k, mask, i, got, want[i]);
                fail();
            }
        }
        weft_tensor_release(r);
        weft_tensor_release(x);
        weft_tensor_release(base);
    }
}

/* ---- gradients through verify_grad ------------------------------------------------ */

typedef struct rcase {
    weft_reduce_kind_t kind;
    size_t n_axes;
    const int *axes;
    bool keepdims;
} rcase_t;

static weft_var_t *reduce_fn(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    const rcase_t *c = user;
    (void)n;
    return weft_reduce_at(g, c->kind, in[0], c->n_axes, c->axes, c->keepdims, __FILE__, __LINE__);
}

static void test_reduce_grads_verify_every_kind(void **state)
{
    (void)state;
    static const int a0[1] = {0}, a1[1] = {1}, a02[2] = {0, 2}, a2[1] = {-1};
    const rcase_t cases[] = {
        {WEFT_REDUCE_SUM, 1, a0, false}, {WEFT_REDUCE_SUM, 0, NULL, false},
        {WEFT_REDUCE_SUM, 2, a02, true}, {WEFT_REDUCE_MEAN, 1, a1, false},
        {WEFT_REDUCE_MEAN, 0, NULL, true}, {WEFT_REDUCE_MAX, 1, a2, false},
        {WEFT_REDUCE_MAX, 0, NULL, false}, {WEFT_REDUCE_MIN, 2, a02, false},
        {WEFT_REDUCE_PROD, 1, a1, false}, {WEFT_REDUCE_PROD, 2, a02, true},
    };
    int64_t shape[3] = {2, 3, 4};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        weft_tensor_t *x = ck_random(WEFT_FLOAT64, 3, shape, 0.5, 2.0, 100 + i);
        ck_verify(reduce_fn, (void *)&cases[i], 1, &x);
        weft_tensor_release(x);
    }
}

static void test_reduce_grad_float32_point(void **state)
{
    (void)state;
    static const int a1[1] = {1};
    const rcase_t c = {WEFT_REDUCE_MEAN, 1, a1, false};
    weft_tensor_t *x = ck_random(WEFT_FLOAT32, 2, s23, -1, 1, 7);
    ck_verify(reduce_fn, (void *)&c, 1, &x);
    weft_tensor_release(x);
}

/* Prod's gradient at points with one and with two zeros in a group. */
static void test_reduce_prod_grad_exact_with_zeros(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = ck_var(f->g, WEFT_FLOAT64, 2, s23), *p = NULL, *c = NULL, *gx = NULL;
    int a1 = 1;
    assert_non_null(p = weft_prod(f->g, x, 1, &a1, false));
    assert_non_null(c = weft_sum(f->g, p, 0, NULL, false));
    assert_non_null(weft_grads(f->g, c, 1, &x, NULL, &gx));
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT64, 2, s23, (double[]){2, 0, 5, 0, 3, 0});
    weft_tensor_t *r = NULL;
    assert_int_equal(ck_eval(f->g, 1, &x, &xv, gx, &r), WEFT_OK);
    ck_expect(r, 2, s23, (double[]){0, 10, 0, 0, 0, 0}, 0);
    weft_tensor_release(r);
    weft_tensor_release(xv);
    const rcase_t rc = {WEFT_REDUCE_PROD, 1, &a1, false};
    weft_tensor_t *z1 = ck_tensor(WEFT_FLOAT64, 2, s23, (double[]){2, 0, 5, 1.5, 0, 0});
    ck_verify(reduce_fn, (void *)&rc, 1, &z1);
    weft_tensor_release(z1);
}

/* Max sends the gradient to the first maximum only. */
static void test_reduce_max_grad_goes_to_first_argmax(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = ck_var(f->g, WEFT_FLOAT64, 2, s23), *m = NULL, *c = NULL, *gx = NULL;
    int a1 = 1;
    assert_non_null(m = weft_max(f->g, x, 1, &a1, false));
    assert_non_null(c = weft_sum(f->g, m, 0, NULL, false));
    assert_non_null(weft_grads(f->g, c, 1, &x, NULL, &gx));
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT64, 2, s23, (double[]){1, 7, 7, 9, 2, 3});
    weft_tensor_t *r = NULL;
    assert_int_equal(ck_eval(f->g, 1, &x, &xv, gx, &r), WEFT_OK);
    ck_expect(r, 2, s23, (double[]){0, 1, 0, 1, 0, 0}, 0);
    weft_tensor_release(r);
    weft_tensor_release(xv);
}

/* Sum's gradient op is differentiable (second order); Max's is not. */
static void test_reduce_second_order_sum_ok_max_enograd(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = ck_var(f->g, WEFT_FLOAT64, 2, s23), *s = NULL, *sq = NULL, *c = NULL;
    weft_var_t *gx = NULL, *c2 = NULL, *ggx = NULL;
    int a1 = 1;
    assert_non_null(s = weft_sum(f->g, x, 1, &a1, false));
    assert_non_null(sq = weft_mul(f->g, s, s));
    assert_non_null(c = weft_sum(f->g, sq, 0, NULL, false));
    assert_non_null(weft_grads(f->g, c, 1, &x, NULL, &gx)); /* 2*rowsum broadcast */
    assert_non_null(c2 = weft_sum(f->g, gx, 0, NULL, false));
    assert_non_null(weft_grads(f->g, c2, 1, &x, NULL, &ggx)); /* 2*3 everywhere */
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT64, 2, s23, v23), *r = NULL;
    assert_int_equal(ck_eval(f->g, 1, &x, &xv, ggx, &r), WEFT_OK);
    ck_expect(r, 2, s23, (double[]){6, 6, 6, 6, 6, 6}, 0);
    weft_tensor_release(r);
    weft_var_t *m = NULL, *mc = NULL, *gm = NULL, *gmc = NULL, *ggm = NULL;
    assert_non_null(m = weft_max(f->g, x, 0, NULL, false));
    assert_non_null(mc = weft_mul(f->g, m, m));
    assert_non_null(weft_grads(f->g, mc, 1, &x, NULL, &gm));
    assert_non_null(gmc = weft_sum(f->g, gm, 0, NULL, false));
    assert_null(weft_grads(f->g, gmc, 1, &x, NULL, &ggm));
    assert_int_equal(weft_graph_error(f->g), WEFT_ENOGRAD);
    assert_non_null(strstr(weft_graph_error_message(f->g), "ReduceGrad"));
    weft_graph_clear_error(f->g);
    weft_tensor_release(xv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_reduce_sum_axis0_axis1_all_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reduce_mean_max_min_prod_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reduce_integer_dtypes_upcast, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reduce_max_min_propagate_nan, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reduce_strided_transposed_reversed_views, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_reduce_empty_and_length1_axes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reduce_argmax_axis_flat_ties_first, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_reduce_argmax_of_reversed_and_transposed_views_is_first_in_view_order, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_reduce_argmax_of_reversed_view_every_dtype, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_reduce_extremes_over_empty_axis_fail_even_with_empty_output, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reduce_static_shape_inference, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reduce_bad_arguments_are_rejected, setup, teardown),
        cmocka_unit_test(test_reduce_classes_are_registered),
        cmocka_unit_test_setup_teardown(test_reduce_random_views_match_naive_loop, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_reduce_long_rows_match_naive_loop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reduce_integer_overflow_wraps, setup, teardown),
        cmocka_unit_test(test_reduce_grads_verify_every_kind),
        cmocka_unit_test(test_reduce_grad_float32_point),
        cmocka_unit_test_setup_teardown(test_reduce_prod_grad_exact_with_zeros, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reduce_max_grad_goes_to_first_argmax, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_reduce_second_order_sum_ok_max_enograd, setup,
                                        teardown),
    };
    return cmocka_run_group_tests_name("reduce", tests, NULL, NULL);
}
