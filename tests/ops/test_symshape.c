/* Tests of symbolic shapes (weft/symshape.h): Shape / Shape_i values and
 * static folding of their types, Reshape to a shape vector (values, -1,
 * static lengths from constants and from Shape, run-time errors naming the
 * node, gradient), Alloc / full with size variables (values, static
 * lengths, gradient wrt the value), ARange / Linspace / eye with variable
 * arguments (NumPy's values, checked by hand), exact error messages and the
 * JSON round trip of the new props. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ops_check.h"
#include "ops_threads.h"

#define U WEFT_DIM_UNKNOWN

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

/* Evaluates y on inputs xs at vals; checks dtype, shape and exact values. */
static void expect_n(size_t n, weft_var_t *const *xs, weft_tensor_t *const *vals, weft_var_t *y,
                     weft_dtype_t dt, int nd, const int64_t *shape, const double *want)
{
    ck_expect_eval_n(G, n, xs, vals, y, dt, nd, shape, want, 0);
}

/* y's static type printed. */
static void expect_type(const weft_var_t *y, const char *want)
{
    char buf[128];
    assert_non_null(y);
    weft_type_print(weft_var_type(y), buf, sizeof buf);
    assert_string_equal(buf, want);
}

/* The kept constructor error: status and exact message. */
static void expect_error(weft_status_t st, const char *msg)
{
    assert_int_equal(weft_graph_error(G), st);
    assert_string_equal(weft_graph_error_message(G), msg);
    weft_graph_clear_error(G);
}

static weft_var_t *i64(int64_t v)
{
    return weft_constant_scalar(G, WEFT_INT64, (double)v);
}

static weft_var_t *iscalar(void)
{
    return ck_var(G, WEFT_INT64, 0, NULL);
}

static weft_tensor_t *ival(int64_t v)
{
    return ck_tensor(WEFT_INT64, 0, NULL, (double[]){(double)v});
}

static void release_all(size_t n, weft_tensor_t **t)
{
    for (size_t i = 0; i < n; i++) weft_tensor_release(t[i]);
}

static void test_shape_and_shape_i(void **state)
{
    (void)state;
    weft_var_t *x = ck_var(G, WEFT_FLOAT32, 2, (int64_t[]){U, 3});
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT32, 2, (int64_t[]){2, 3}, NULL);
    weft_var_t *s = weft_shape(G, x), *s0 = weft_shape_i(G, x, 0), *s1 = weft_shape_i(G, x, -1);
    expect_type(s, "int64[2]");
    expect_type(s0, "int64[]");
    expect_n(1, &x, &xv, s, WEFT_INT64, 1, (int64_t[]){2}, (double[]){2, 3});
    expect_n(1, &x, &xv, s0, WEFT_INT64, 0, NULL, (double[]){2});
    expect_n(1, &x, &xv, s1, WEFT_INT64, 0, NULL, (double[]){3});
    /* a 0-d input: an empty vector; an empty input: its zero length */
    weft_var_t *z = ck_var(G, WEFT_INT8, 0, NULL);
    weft_tensor_t *zv = ck_tensor(WEFT_INT8, 0, NULL, (double[]){7});
    expect_n(1, &z, &zv, weft_shape(G, z), WEFT_INT64, 1, (int64_t[]){0}, NULL);
    weft_tensor_t *ev = ck_tensor(WEFT_FLOAT32, 2, (int64_t[]){0, 3}, NULL);
    expect_n(1, &x, &ev, s0, WEFT_INT64, 0, NULL, (double[]){0});
    /* shape(x)[1] as a Subtensor gives the same value */
    weft_slice_t at1[1] = {WEFT_SLICE_AT(1)};
    expect_n(1, &x, &xv, weft_subtensor(G, s, 1, at1), WEFT_INT64, 0, NULL, (double[]){3});
    /* errors */
    int line = __LINE__ + 1;
    assert_null(weft_shape_i(G, x, 2));
    char msg[512];
    snprintf(msg, sizeof msg, "shape_i (at %s:%d): axis 2 out of range for 2 dims", __FILE__,
             line);
    expect_error(WEFT_EINVAL, msg);
    assert_null(weft_shape(G, NULL));
    assert_int_equal(weft_graph_error(G), WEFT_EINVAL);
    weft_graph_clear_error(G);
    release_all(1, &xv);
    release_all(1, &zv);
    release_all(1, &ev);
}

static void test_shape_no_gradient(void **state)
{
    (void)state;
    /* cost = sum(x) * shape_i(x, 0): only the sum path reaches x */
    weft_var_t *x = ck_var(G, WEFT_FLOAT64, 1, (int64_t[]){U});
    weft_var_t *n = weft_cast(G, weft_shape_i(G, x, 0), WEFT_FLOAT64);
    weft_var_t *cost = weft_mul(G, weft_sum(G, x, 0, NULL, false), n);
    weft_var_t *gx = weft_grad(G, cost, x);
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT64, 1, (int64_t[]){3}, (double[]){1, 2, 3});
    expect_n(1, &x, &xv, gx, WEFT_FLOAT64, 1, (int64_t[]){3}, (double[]){3, 3, 3});
    /* through Shape alone, x is disconnected */
    weft_var_t *c2 = weft_cast(G, weft_shape_i(G, x, 0), WEFT_FLOAT64);
    assert_null(weft_grad(G, c2, x));
    assert_int_equal(weft_graph_error(G), WEFT_EDISCONNECTED);
    weft_graph_clear_error(G);
    release_all(1, &xv);
}

static void test_reshape_sym_values_and_types(void **state)
{
    (void)state;
    weft_var_t *x = ck_var(G, WEFT_FLOAT64, 2, (int64_t[]){U, U});
    weft_var_t *sv = ck_var(G, WEFT_INT64, 1, (int64_t[]){3});
    weft_tensor_t *vals[2] = {ck_tensor(WEFT_FLOAT64, 2, (int64_t[]){2, 3},
                                        (double[]){0, 1, 2, 3, 4, 5}),
                              ck_tensor(WEFT_INT64, 1, (int64_t[]){3}, (double[]){3, -1, 1})};
    weft_var_t *in[2] = {x, sv};
    weft_var_t *r = weft_reshape_sym(G, x, sv);
    expect_type(r, "float64[?,?,?]");
    expect_n(2, in, vals, r, WEFT_FLOAT64, 3, (int64_t[]){3, 2, 1}, (double[]){0, 1, 2, 3, 4, 5});
    /* a transposed input (a copy) keeps C order of the transpose */
    expect_n(2, in, vals, weft_reshape_sym(G, weft_transpose(G, x), sv), WEFT_FLOAT64, 3,
             (int64_t[]){3, 2, 1}, (double[]){0, 3, 1, 4, 2, 5});
    /* a constant target: static lengths, -1 inferred from x's static count */
    weft_var_t *xs = ck_var(G, WEFT_FLOAT64, 2, (int64_t[]){2, 3});
    int64_t c[2] = {-1, 2};
    const weft_type_t *ct;
    assert_int_equal(weft_type_tensor(G, WEFT_INT64, 1, (int64_t[]){2}, &ct), WEFT_OK);
    weft_var_t *cv = weft_constant_create(G, ct, c, sizeof c);
    expect_type(weft_reshape_sym(G, xs, cv), "float64[3,2]");
    expect_type(weft_reshape_sym(G, x, cv), "float64[?,2]");
    /* the shape of another variable: its static lengths */
    weft_var_t *y = ck_var(G, WEFT_FLOAT32, 2, (int64_t[]){3, U});
    expect_type(weft_reshape_sym(G, x, weft_shape(G, y)), "float64[3,?]");
    /* sizes stacked: static where the sizes are (-1 inferred when all are) */
    weft_var_t *m1 = i64(-1), *p1[2] = {weft_shape_i(G, xs, 1), m1}, *p2[2] = {m1, i64(2)};
    weft_var_t *p3[2] = {weft_shape_i(G, x, 1), weft_mul(G, i64(2), i64(1))};
    expect_type(weft_reshape_sym(G, xs, weft_stack(G, 2, p1, 0)), "float64[3,2]");
    expect_type(weft_reshape_sym(G, x, weft_stack(G, 2, p2, 0)), "float64[?,2]");
    expect_type(weft_reshape_sym(G, x, weft_stack(G, 2, p3, 0)), "float64[?,?]");
    /* a shape built from sizes */
    weft_var_t *parts[2] = {weft_shape_i(G, x, 1), weft_shape_i(G, x, 0)};
    weft_var_t *st = weft_stack(G, 2, parts, 0);
    expect_n(2, in, vals, weft_reshape_sym(G, x, st), WEFT_FLOAT64, 2, (int64_t[]){3, 2},
             (double[]){0, 1, 2, 3, 4, 5});
    release_all(2, vals);
}

static void test_reshape_sym_errors(void **state)
{
    (void)state;
    weft_var_t *x = ck_var(G, WEFT_FLOAT64, 2, (int64_t[]){2, 3});
    weft_var_t *sv = ck_var(G, WEFT_INT64, 1, (int64_t[]){2});
    /* a shape of unknown length, a float shape */
    int line = __LINE__ + 1;
    assert_null(weft_reshape_sym(G, x, ck_var(G, WEFT_INT64, 1, (int64_t[]){U})));
    char msg[512];
    snprintf(msg, sizeof msg, "apply of Reshape at %s:%d: Reshape: input 1 (the shape) needs a "
             "static length in [0, 16], not -1", __FILE__, line);
    expect_error(WEFT_ESHAPE, msg);
    line = __LINE__ + 1;
    assert_null(weft_reshape_sym(G, x, ck_var(G, WEFT_FLOAT64, 1, (int64_t[]){2})));
    snprintf(msg, sizeof msg, "apply of Reshape at %s:%d: Reshape: input 1 (the shape) is not "
             "a 1-d integer tensor", __FILE__, line);
    expect_error(WEFT_ETYPE, msg);
    /* a constant shape that does not fit */
    int64_t c[2] = {4, 2};
    const weft_type_t *ct;
    assert_int_equal(weft_type_tensor(G, WEFT_INT64, 1, (int64_t[]){2}, &ct), WEFT_OK);
    line = __LINE__ + 1;
    assert_null(weft_reshape_sym(G, x, weft_constant_create(G, ct, c, sizeof c)));
    snprintf(msg, sizeof msg, "apply of Reshape at %s:%d: Reshape: input 0 has 6 elements, the "
             "target shape 8", __FILE__, line);
    expect_error(WEFT_ESHAPE, msg);
    /* at run time: counts differ; two -1 */
    weft_var_t *r = weft_reshape_sym(G, x, sv), *in[2] = {x, sv}, *out = NULL;
    weft_tensor_t *vals[2] = {ck_tensor(WEFT_FLOAT64, 2, (int64_t[]){2, 3}, NULL),
                              ck_tensor(WEFT_INT64, 1, (int64_t[]){2}, (double[]){4, 2})};
    weft_tensor_t *res = NULL;
    (void)out;
    assert_int_equal(weft_eval(G, 2, in, vals, 1, &r, &res), WEFT_ESHAPE);
    assert_non_null(strstr(weft_graph_last_error(G), "Reshape"));
    assert_non_null(strstr(weft_graph_last_error(G), "reshape: 6 elements into a shape of 8"));
    weft_tensor_release(vals[1]);
    vals[1] = ck_tensor(WEFT_INT64, 1, (int64_t[]){2}, (double[]){-1, -1});
    assert_int_equal(weft_eval(G, 2, in, vals, 1, &r, &res), WEFT_EINVAL);
    assert_non_null(strstr(weft_graph_last_error(G), "two -1 lengths (dimensions 0 and 1)"));
    weft_graph_clear_error(G);
    release_all(2, vals);
}

/* reshape_sym(x, [n0 * n1]) then back to x's shape, times a weight. */
static weft_var_t *grad_reshape(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    (void)n;
    (void)user;
    weft_var_t *x = in[0];
    weft_var_t *len = weft_mul(g, weft_shape_i(g, x, 0), weft_shape_i(g, x, 1));
    weft_var_t *flat = weft_reshape_sym(g, x, weft_stack(g, 1, &len, 0));
    weft_var_t *w = weft_arange(g, 1, 7, 1, WEFT_FLOAT64);
    return weft_reshape_sym(g, weft_mul(g, flat, w), weft_shape(g, in[1]));
}

/* alloc_sym(x, shape_i(y, 0), shape_i(y, 1)) * y: x broadcast over y. */
static weft_var_t *grad_alloc(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    (void)n;
    (void)user;
    weft_var_t *sz[2] = {weft_shape_i(g, in[1], 0), weft_shape_i(g, in[1], 1)};
    return weft_mul(g, weft_alloc_sym(g, in[0], 2, sz), in[1]);
}

static void test_gradients(void **state)
{
    (void)state;
    weft_tensor_t *p[2] = {ck_random(WEFT_FLOAT64, 2, (int64_t[]){2, 3}, -1, 1, 11),
                           ck_random(WEFT_FLOAT64, 2, (int64_t[]){3, 2}, -1, 1, 12)};
    ck_verify(grad_reshape, NULL, 2, p);
    weft_tensor_t *q[2] = {ck_random(WEFT_FLOAT64, 1, (int64_t[]){3}, -1, 1, 13),
                           ck_random(WEFT_FLOAT64, 2, (int64_t[]){2, 3}, -1, 1, 14)};
    ck_verify(grad_alloc, NULL, 2, q);
    weft_tensor_t *r[2] = {ck_random(WEFT_FLOAT64, 2, (int64_t[]){1, 3}, -1, 1, 15),
                           ck_random(WEFT_FLOAT64, 2, (int64_t[]){4, 3}, -1, 1, 16)};
    ck_verify(grad_alloc, NULL, 2, r);
    release_all(2, p);
    release_all(2, q);
    release_all(2, r);
}

static void test_alloc_sym(void **state)
{
    (void)state;
    weft_var_t *n = iscalar(), *v = ck_var(G, WEFT_INT32, 1, (int64_t[]){U});
    weft_var_t *sz[2] = {n, i64(3)};
    weft_var_t *a = weft_alloc_sym(G, v, 2, sz), *in[2] = {n, v};
    expect_type(a, "int32[?,3]");
    weft_tensor_t *vals[2] = {ival(2),
                              ck_tensor(WEFT_INT32, 1, (int64_t[]){3}, (double[]){1, 2, 3})};
    expect_n(2, in, vals, a, WEFT_INT32, 2, (int64_t[]){2, 3}, (double[]){1, 2, 3, 1, 2, 3});
    /* zeros / ones / full, a size of another int dtype, size 0 */
    weft_var_t *n8 = ck_var(G, WEFT_UINT8, 0, NULL);
    weft_var_t *s1[1] = {n8};
    weft_tensor_t *n8v = ck_tensor(WEFT_UINT8, 0, NULL, (double[]){4});
    weft_var_t *f = weft_full_sym(G, 1, s1, 2.5, WEFT_FLOAT32);
    expect_type(f, "float32[?]");
    expect_n(1, &n8, &n8v, f, WEFT_FLOAT32, 1, (int64_t[]){4}, (double[]){2.5, 2.5, 2.5, 2.5});
    expect_n(1, &n8, &n8v, weft_ones_sym(G, 1, s1, WEFT_INT64), WEFT_INT64, 1, (int64_t[]){4},
             (double[]){1, 1, 1, 1});
    weft_tensor_t *zero = ival(0);
    expect_n(1, &n, &zero, weft_zeros_sym(G, 2, sz, WEFT_BOOL), WEFT_BOOL, 2, (int64_t[]){0, 3},
             NULL);
    /* static lengths from constants and Shape_i */
    weft_var_t *y = ck_var(G, WEFT_FLOAT64, 2, (int64_t[]){5, U});
    weft_var_t *ys[3] = {i64(2), weft_shape_i(G, y, 0), weft_shape_i(G, y, 1)};
    expect_type(weft_zeros_sym(G, 3, ys, WEFT_FLOAT64), "float64[2,5,?]");
    /* broadcast_to_sym: a static input length fills an unknown size */
    weft_var_t *b3 = ck_var(G, WEFT_FLOAT64, 1, (int64_t[]){3});
    weft_var_t *bs[2] = {n, n};
    expect_type(weft_broadcast_to_sym(G, b3, 2, bs), "float64[?,3]");
    /* errors: constant size negative, value too wide, float size, run time */
    weft_var_t *neg[1] = {i64(-2)};
    int line = __LINE__ + 1;
    assert_null(weft_zeros_sym(G, 1, neg, WEFT_FLOAT64));
    char msg[512];
    snprintf(msg, sizeof msg, "full_sym (at %s:%d): size 0 is -2", __FILE__, line);
    expect_error(WEFT_EINVAL, msg);
    weft_var_t *fl[1] = {weft_constant_scalar(G, WEFT_FLOAT64, 2)};
    line = __LINE__ + 1;
    assert_null(weft_zeros_sym(G, 1, fl, WEFT_FLOAT64));
    snprintf(msg, sizeof msg, "full_sym (at %s:%d): input 1 2 is not a 0-d integer tensor",
             __FILE__, line);
    expect_error(WEFT_ETYPE, msg);
    weft_var_t *one[1] = {n};
    line = __LINE__ + 1;
    assert_null(weft_alloc_sym(G, a, 1, one));
    assert_int_equal(weft_graph_error(G), WEFT_EINVAL);
    weft_graph_clear_error(G);
    weft_tensor_t *m1 = ival(-1), *res = NULL;
    weft_var_t *zz = weft_zeros_sym(G, 2, sz, WEFT_FLOAT64);
    assert_int_equal(weft_eval(G, 1, &n, &m1, 1, &zz, &res), WEFT_EINVAL);
    assert_non_null(strstr(weft_graph_last_error(G), "Alloc: size 0 (input 1) is -1"));
    weft_tensor_t *bad[2] = {ival(2), ck_tensor(WEFT_INT32, 1, (int64_t[]){2}, NULL)};
    assert_int_equal(weft_eval(G, 2, in, bad, 1, &a, &res), WEFT_ESHAPE);
    assert_non_null(strstr(weft_graph_last_error(G), "Alloc: input has length 2 on axis 0, which "
                                                     "does not broadcast to 3"));
    weft_graph_clear_error(G);
    release_all(2, vals);
    release_all(2, bad);
    release_all(1, &n8v);
    release_all(1, &zero);
    release_all(1, &m1);
}

static void test_ranges_sym(void **state)
{
    (void)state;
    weft_var_t *a = iscalar(), *b = iscalar(), *c = iscalar(), *in[3] = {a, b, c};
    weft_var_t *r = weft_arange_sym(G, a, b, c, WEFT_INT64);
    expect_type(r, "int64[?]");
    weft_tensor_t *v[3] = {ival(2), ival(11), ival(3)};
    expect_n(3, in, v, r, WEFT_INT64, 1, (int64_t[]){3}, (double[]){2, 5, 8});
    /* float arguments, float32 (np.arange(1, 2, 0.25, float32)) */
    weft_var_t *fa = ck_var(G, WEFT_FLOAT64, 0, NULL);
    weft_tensor_t *fv = ck_tensor(WEFT_FLOAT64, 0, NULL, (double[]){0.25});
    weft_var_t *rf = weft_arange_sym(G, i64(1), i64(2), fa, WEFT_FLOAT32);
    expect_n(1, &fa, &fv, rf, WEFT_FLOAT32, 1, (int64_t[]){4}, (double[]){1, 1.25, 1.5, 1.75});
    /* np.arange(1, 3, 0.5, int64): all 1 (NumPy's fill in the dtype) */
    expect_n(1, &fa, &fv, weft_arange_sym(G, i64(1), i64(2), fa, WEFT_INT64), WEFT_INT64, 1,
             (int64_t[]){4}, (double[]){1, 1, 1, 1});
    /* negative step, empty */
    weft_tensor_t *w[3] = {ival(5), ival(0), ival(-2)};
    expect_n(3, in, w, r, WEFT_INT64, 1, (int64_t[]){3}, (double[]){5, 3, 1});
    weft_tensor_t *e[3] = {ival(5), ival(0), ival(2)};
    expect_n(3, in, e, r, WEFT_INT64, 1, (int64_t[]){0}, NULL);
    /* constants: a static length */
    expect_type(weft_arange_sym(G, i64(0), i64(10), i64(4), WEFT_FLOAT64), "float64[3]");
    /* linspace(0, 1, num=5) and endpoint false */
    weft_var_t *num = iscalar();
    weft_tensor_t *nv = ival(5);
    weft_var_t *zero = weft_constant_scalar(G, WEFT_FLOAT64, 0);
    weft_var_t *one = weft_constant_scalar(G, WEFT_FLOAT64, 1);
    expect_n(1, &num, &nv, weft_linspace_sym(G, zero, one, num, true, WEFT_FLOAT64), WEFT_FLOAT64,
             1, (int64_t[]){5}, (double[]){0, 0.25, 0.5, 0.75, 1});
    expect_n(1, &num, &nv, weft_linspace_sym(G, zero, one, num, false, WEFT_FLOAT64),
             WEFT_FLOAT64, 1, (int64_t[]){5}, (double[]){0, 0.2, 0.4, 3 * 0.2, 0.8});
    expect_type(weft_linspace_sym(G, zero, one, i64(7), true, WEFT_FLOAT32), "float32[7]");
    /* eye(n, m, k) */
    weft_var_t *en = iscalar(), *em = iscalar(), *ek = iscalar(), *ein[3] = {en, em, ek};
    weft_tensor_t *ev[3] = {ival(2), ival(3), ival(1)};
    weft_var_t *eye = weft_eye_sym(G, en, em, ek, WEFT_FLOAT32);
    expect_type(eye, "float32[?,?]");
    expect_n(3, ein, ev, eye, WEFT_FLOAT32, 2, (int64_t[]){2, 3}, (double[]){0, 1, 0, 0, 0, 1});
    weft_tensor_t *ev2[3] = {ival(3), ival(2), ival(-1)};
    expect_n(3, ein, ev2, eye, WEFT_FLOAT32, 2, (int64_t[]){3, 2}, (double[]){0, 0, 1, 0, 0, 1});
    /* errors: step 0 at run time and as constants, a float num */
    weft_tensor_t *z[3] = {ival(0), ival(3), ival(0)}, *res = NULL;
    assert_int_equal(weft_eval(G, 3, in, z, 1, &r, &res), WEFT_EINVAL);
    assert_non_null(strstr(weft_graph_last_error(G), "ARange: step is 0 or NaN"));
    weft_graph_clear_error(G);
    int line = __LINE__ + 1;
    assert_null(weft_arange_sym(G, i64(0), i64(3), i64(0), WEFT_INT64));
    char msg[512];
    snprintf(msg, sizeof msg, "apply of ARange at %s:%d: ARange: step is 0 or NaN", __FILE__,
             line);
    expect_error(WEFT_EINVAL, msg);
    line = __LINE__ + 1;
    assert_null(weft_linspace_sym(G, zero, one, one, true, WEFT_FLOAT64));
    snprintf(msg, sizeof msg, "linspace_sym (at %s:%d): input 2 1 is not a 0-d integer tensor",
             __FILE__, line);
    expect_error(WEFT_ETYPE, msg);
    release_all(3, v);
    release_all(3, w);
    release_all(3, e);
    release_all(3, z);
    release_all(3, ev);
    release_all(3, ev2);
    release_all(1, &fv);
    release_all(1, &nv);
}


/* ---- tile, repeat, pad, roll over unknown lengths ----------------------------- */

static void test_unknown_length_builders(void **state)
{
    (void)state;
    weft_var_t *m = ck_var(G, WEFT_FLOAT64, 2, (int64_t[]){U, U});
    weft_tensor_t *mv = ck_tensor(WEFT_FLOAT64, 2, (int64_t[]){2, 2}, (double[]){1, 2, 3, 4});
    /* np.tile([[1,2],[3,4]], (2,1,2)) */
    weft_var_t *t = weft_tile(G, m, 3, ((int64_t[]){2, 1, 2}));
    expect_type(t, "float64[2,?,?]");
    expect_n(1, &m, &mv, t, WEFT_FLOAT64, 3, (int64_t[]){2, 2, 4},
             (double[]){1, 2, 1, 2, 3, 4, 3, 4, 1, 2, 1, 2, 3, 4, 3, 4});
    /* np.pad(m, 1, constant_values=9) */
    expect_n(1, &m, &mv, weft_pad(G, m, 1, ((int64_t[]){1, 1}), WEFT_PAD_CONSTANT, 9),
             WEFT_FLOAT64, 2, (int64_t[]){4, 4},
             (double[]){9, 9, 9, 9, 9, 1, 2, 9, 9, 3, 4, 9, 9, 9, 9, 9});
    weft_var_t *x = ck_var(G, WEFT_INT32, 1, (int64_t[]){U});
    weft_tensor_t *xv = ck_tensor(WEFT_INT32, 1, (int64_t[]){3}, (double[]){1, 2, 3});
    expect_n(1, &x, &xv, weft_repeat(G, x, 2, 0), WEFT_INT32, 1, (int64_t[]){6},
             (double[]){1, 1, 2, 2, 3, 3});
    expect_n(1, &x, &xv, weft_pad(G, x, 1, ((int64_t[]){2, 1}), WEFT_PAD_CONSTANT, 9), WEFT_INT32,
             1, (int64_t[]){6}, (double[]){9, 9, 1, 2, 3, 9});
    expect_n(1, &x, &xv, weft_pad(G, x, 1, ((int64_t[]){2, 1}), WEFT_PAD_EDGE, 0), WEFT_INT32, 1,
             (int64_t[]){6}, (double[]){1, 1, 1, 2, 3, 3});
    expect_n(1, &x, &xv, weft_pad(G, x, 1, ((int64_t[]){2, 2}), WEFT_PAD_REFLECT, 0), WEFT_INT32,
             1, (int64_t[]){7}, (double[]){3, 2, 1, 2, 3, 2, 1});
    /* NumPy's repeated reflection for widths above the length */
    expect_n(1, &x, &xv, weft_pad(G, x, 1, ((int64_t[]){5, 5}), WEFT_PAD_REFLECT, 0), WEFT_INT32,
             1, (int64_t[]){13}, (double[]){2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3, 2});
    weft_tensor_t *one = ck_tensor(WEFT_INT32, 1, (int64_t[]){1}, (double[]){7});
    expect_n(1, &x, &one, weft_pad(G, x, 1, ((int64_t[]){2, 1}), WEFT_PAD_REFLECT, 0), WEFT_INT32,
             1, (int64_t[]){4}, (double[]){7, 7, 7, 7});
    /* np.roll by 2 and by -7 (= 3 mod 5), an empty axis */
    weft_tensor_t *x5 = ck_tensor(WEFT_INT32, 1, (int64_t[]){5}, (double[]){1, 2, 3, 4, 5});
    expect_n(1, &x, &x5, weft_roll(G, x, 2, 0), WEFT_INT32, 1, (int64_t[]){5},
             (double[]){4, 5, 1, 2, 3});
    expect_n(1, &x, &x5, weft_roll(G, x, -7, 0), WEFT_INT32, 1, (int64_t[]){5},
             (double[]){3, 4, 5, 1, 2});
    weft_tensor_t *x0 = ck_tensor(WEFT_INT32, 1, (int64_t[]){0}, NULL), *res = NULL;
    expect_n(1, &x, &x0, weft_roll(G, x, 2, 0), WEFT_INT32, 1, (int64_t[]){0}, NULL);
    expect_n(1, &x, &x0, weft_tile(G, x, 1, (int64_t[]){3}), WEFT_INT32, 1, (int64_t[]){0}, NULL);
    /* edge padding of an empty axis fails at run time */
    weft_var_t *pe = weft_pad(G, x, 1, ((int64_t[]){1, 0}), WEFT_PAD_EDGE, 0);
    assert_int_equal(weft_eval(G, 1, &x, &x0, 1, &pe, &res), WEFT_ESHAPE);
    assert_non_null(strstr(weft_graph_last_error(G), "AxisIndex{edge}: axis of length 0: an "
                                                     "empty axis cannot be padded in this mode"));
    weft_graph_clear_error(G);
    release_all(1, &mv);
    release_all(1, &xv);
    release_all(1, &one);
    release_all(1, &x5);
    release_all(1, &x0);
}

static void test_repeat_vec(void **state)
{
    (void)state;
    weft_var_t *x = ck_var(G, WEFT_FLOAT32, 2, (int64_t[]){2, U});
    weft_var_t *r = ck_var(G, WEFT_INT64, 1, (int64_t[]){U}), *in[2] = {x, r};
    weft_tensor_t *v[2] = {ck_tensor(WEFT_FLOAT32, 2, (int64_t[]){2, 3},
                                     (double[]){1, 2, 3, 4, 5, 6}),
                           ck_tensor(WEFT_INT64, 1, (int64_t[]){3}, (double[]){1, 0, 2})};
    weft_var_t *y = weft_repeat_vec(G, x, r, 1);
    expect_type(y, "float32[2,?]");
    expect_n(2, in, v, y, WEFT_FLOAT32, 2, (int64_t[]){2, 3}, (double[]){1, 3, 3, 4, 6, 6});
    /* one count for every element; a constant repeats vector: static */
    weft_tensor_t *w[2] = {v[0], ck_tensor(WEFT_INT64, 1, (int64_t[]){1}, (double[]){2})};
    expect_n(2, in, w, weft_repeat_vec(G, x, r, 0), WEFT_FLOAT32, 2, (int64_t[]){4, 3},
             (double[]){1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6});
    int64_t c[2] = {3, 1};
    const weft_type_t *ct;
    assert_int_equal(weft_type_tensor(G, WEFT_INT64, 1, (int64_t[]){2}, &ct), WEFT_OK);
    weft_var_t *cr = weft_constant_create(G, ct, c, sizeof c);
    expect_type(weft_repeat_vec(G, x, cr, 0), "float32[4,?]");
    /* errors: static lengths, run-time negative count and wrong length */
    int line = __LINE__ + 1;
    assert_null(weft_repeat_vec(G, ck_var(G, WEFT_FLOAT32, 1, (int64_t[]){3}), cr, 0));
    char msg[512];
    snprintf(msg, sizeof msg, "repeat_vec (at %s:%d): 2 repeats for an axis of length 3", __FILE__,
             line);
    expect_error(WEFT_ESHAPE, msg);
    line = __LINE__ + 1;
    assert_null(weft_repeat_vec(G, x, x, 0));
    snprintf(msg, sizeof msg, "repeat_vec (at %s:%d): input 1 <float32[2,?]> is not a 1-d integer "
             "tensor", __FILE__, line);
    expect_error(WEFT_ETYPE, msg);
    weft_tensor_t *bad[2] = {v[0], ck_tensor(WEFT_INT64, 1, (int64_t[]){3}, (double[]){1, -1, 2})};
    weft_tensor_t *res = NULL;
    assert_int_equal(weft_eval(G, 2, in, bad, 1, &y, &res), WEFT_ESHAPE);
    assert_non_null(strstr(weft_graph_last_error(G), "AxisIndex{repeat_vec}: axis of length 3: a "
                                                     "repeat count is negative"));
    weft_tensor_t *bad2[2] = {v[0], ck_tensor(WEFT_INT64, 1, (int64_t[]){2}, (double[]){1, 1})};
    assert_int_equal(weft_eval(G, 2, in, bad2, 1, &y, &res), WEFT_ESHAPE);
    assert_non_null(strstr(weft_graph_last_error(G), "the repeats' length is neither the axis "
                                                     "length nor 1"));
    weft_graph_clear_error(G);
    release_all(2, v);
    release_all(1, &w[1]);
    release_all(1, &bad[1]);
    release_all(1, &bad2[1]);
}

/* x with its static lengths hidden: a reshape to sizes computed at run time
 * (shape_i * 1: no static value). */
static weft_var_t *hide(weft_graph_t *g, weft_var_t *x)
{
    weft_var_t *one = weft_constant_scalar(g, WEFT_INT64, 1);
    weft_var_t *sz[2] = {weft_mul(g, weft_shape_i(g, x, 0), one),
                         weft_mul(g, weft_shape_i(g, x, 1), one)};
    return weft_reshape_sym(g, x, weft_stack(g, 2, sz, 0));
}

static weft_var_t *grad_builders(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    (void)n;
    weft_var_t *x = hide(g, in[0]), *y;
    int64_t c[3] = {2, 0, 3};
    const weft_type_t *ct;
    switch (*(const int *)user) {
    case 0: y = weft_tile(g, x, 2, ((int64_t[]){2, 3})); break;
    case 1: y = weft_repeat(g, x, 3, 1); break;
    case 2: y = weft_pad(g, x, 2, ((int64_t[]){1, 2, 0, 3}), WEFT_PAD_REFLECT, 0); break;
    case 3: y = weft_pad(g, x, 1, ((int64_t[]){2, 1}), WEFT_PAD_EDGE, 0); break;
    case 4: y = weft_pad(g, x, 1, ((int64_t[]){2, 1}), WEFT_PAD_CONSTANT, 5); break;
    case 5: y = weft_roll(g, x, -4, 1); break;
    default:
        if (weft_type_tensor(g, WEFT_INT64, 1, (int64_t[]){3}, &ct) != WEFT_OK) return NULL;
        y = weft_repeat_vec(g, x, weft_constant_create(g, ct, c, sizeof c), 1);
        break;
    }
    return weft_mul(g, y, y);
}

static void test_unknown_length_gradients(void **state)
{
    (void)state;
    weft_tensor_t *p = ck_random(WEFT_FLOAT64, 2, (int64_t[]){2, 3}, -1, 1, 21);
    for (int k = 0; k < 7; k++) {
        print_message("builder %d\n", k);
        ck_verify(grad_builders, &k, 1, &p);
    }
    weft_tensor_release(p);
}


/* The compiled graph printed (weft_function_print) into buf. */
static void function_text(weft_function_t *f, char *buf, size_t cap)
{
    FILE *tf = tmpfile();
    assert_non_null(tf);
    assert_int_equal(weft_function_print(f, tf), WEFT_OK);
    rewind(tf);
    size_t n = fread(buf, 1, cap - 1, tf);
    buf[n] = '\0';
    fclose(tf);
}

static weft_function_t *compile(size_t n_in, weft_var_t *const *in, weft_var_t *out,
                                const char *mode)
{
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.mode = mode;
    o.threads = 1;
    weft_function_t *f = NULL;
    assert_int_equal(weft_function_compile(n_in, in, 1, &out, 0, NULL, &o, &f), WEFT_OK);
    return f;
}

static void test_fast_run(void **state)
{
    (void)state;
    /* over static lengths the shape graph folds away: Reshape{static} */
    weft_var_t *x = ck_var(G, WEFT_FLOAT64, 2, (int64_t[]){2, 3});
    weft_var_t *sz[2] = {weft_shape_i(G, x, 1), weft_shape_i(G, x, 0)};
    weft_var_t *y = weft_reshape_sym(G, x, weft_stack(G, 2, sz, 0));
    weft_function_t *f = compile(1, &x, y, "fast_run");
    char buf[4096];
    function_text(f, buf, sizeof buf);
    assert_null(strstr(buf, "Shape"));
    assert_non_null(strstr(buf, "Reshape{shape=(3,2)}"));
    weft_function_destroy(f);
    /* a view of a protected input is never destroyed by an in-place op */
    weft_var_t *u = ck_var(G, WEFT_FLOAT64, 2, (int64_t[]){2, U});
    weft_var_t *su[2] = {weft_shape_i(G, u, 1), weft_shape_i(G, u, 0)};
    weft_var_t *v = weft_reshape_sym(G, u, weft_stack(G, 2, su, 0));
    weft_var_t *w = weft_add(G, weft_exp(G, v), weft_constant_scalar(G, WEFT_FLOAT64, 1));
    weft_tensor_t *uv = ck_tensor(WEFT_FLOAT64, 2, (int64_t[]){2, 3},
                                  (double[]){0, 0, 0, 0, 0, 0});
    const char *modes[2] = {"none", "fast_run"};
    for (int m = 0; m < 2; m++) {
        weft_function_t *g = compile(1, &u, w, modes[m]);
        weft_tensor_t *r = NULL;
        assert_int_equal(weft_function_call(g, 1, &uv, 1, &r), WEFT_OK);
        ck_expect(r, 2, (int64_t[]){3, 2}, (double[]){2, 2, 2, 2, 2, 2}, 0);
        ck_expect(uv, 2, (int64_t[]){2, 3}, (double[]){0, 0, 0, 0, 0, 0}, 0);
        weft_tensor_release(r);
        weft_function_destroy(g);
    }
    weft_tensor_release(uv);
}

/* ARange / Linspace of 300001 elements (several fixed ranges), and a large
 * symbolic Alloc, have the same bits at 1, 2 and 4 workers. */
static void test_same_bits_at_1_2_4_workers(void **state)
{
    (void)state;
    weft_var_t *n = iscalar();
    weft_tensor_t *nv = ival(300001);
    weft_var_t *third = weft_constant_scalar(G, WEFT_FLOAT64, 1.0 / 3);
    weft_var_t *sz[2] = {n, i64(3)};
    weft_var_t *outs[4] = {
        weft_arange_sym(G, i64(-5), n, third, WEFT_FLOAT32),
        weft_arange_sym(G, i64(0), n, i64(1), WEFT_FLOAT64),
        weft_linspace_sym(G, third, weft_constant_scalar(G, WEFT_FLOAT64, 7.25), n, true,
                          WEFT_FLOAT64),
        weft_full_sym(G, 2, sz, 0.5, WEFT_FLOAT16),
    };
    ck_same_bits_at_1_2_4(G, n, nv, 4, outs);
    weft_tensor_release(nv);
}

/* arange(start, 5, step) and linspace(start, stop, 5 / 1) in float64,
 * weighted by their index so every element's gradient differs. */
static weft_var_t *grad_range(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    (void)n;
    int k = *(const int *)user;
    weft_var_t *five = weft_constant_scalar(g, WEFT_INT64, k == 3 ? 1 : 5), *y;
    if (k == 0)
        y = weft_arange_sym(g, in[0], weft_constant_scalar(g, WEFT_FLOAT64, 5), in[1],
                            WEFT_FLOAT64);
    else
        y = weft_linspace_sym(g, in[0], in[1], five, k != 2, WEFT_FLOAT64);
    weft_var_t *one = weft_constant_scalar(g, WEFT_INT64, 1);
    weft_var_t *w = weft_arange_sym(g, one, weft_add(g, weft_shape_i(g, y, 0), one), one,
                                    WEFT_FLOAT64);
    return weft_mul(g, y, w);
}

static void test_range_gradients(void **state)
{
    (void)state;
    weft_tensor_t *p[2] = {ck_tensor(WEFT_FLOAT64, 0, NULL, (double[]){0.3}),
                           ck_tensor(WEFT_FLOAT64, 0, NULL, (double[]){0.7})};
    for (int k = 0; k < 4; k++) ck_verify(grad_range, &k, 2, p);
    /* the length is disconnected: grad wrt stop of arange alone */
    weft_var_t *a = ck_var(G, WEFT_FLOAT64, 0, NULL), *b = ck_var(G, WEFT_FLOAT64, 0, NULL);
    weft_var_t *r = weft_arange_sym(G, weft_constant_scalar(G, WEFT_FLOAT64, 0), b, a,
                                    WEFT_FLOAT64);
    assert_null(weft_grad(G, weft_sum(G, r, 0, NULL, false), b));
    assert_int_equal(weft_graph_error(G), WEFT_EDISCONNECTED);
    weft_graph_clear_error(G);
    release_all(2, p);
}

static void test_json_round_trip(void **state)
{
    (void)state;
    weft_var_t *x = ck_var(G, WEFT_FLOAT64, 2, (int64_t[]){U, U}), *n = iscalar();
    weft_var_t *sz[2] = {n, weft_shape_i(G, x, 1)};
    weft_var_t *zero = weft_constant_scalar(G, WEFT_FLOAT64, 0);
    weft_var_t *outs[4] = {
        weft_reshape_sym(G, x, weft_shape(G, weft_transpose(G, x))),
        weft_alloc_sym(G, weft_shape_i(G, x, 0), 2, sz),
        weft_arange_sym(G, n, weft_shape_i(G, x, 0), i64(1), WEFT_INT16),
        weft_linspace_sym(G, zero, weft_constant_scalar(G, WEFT_FLOAT64, 1), n, false,
                          WEFT_FLOAT64),
    };
    weft_var_t *in[2] = {x, n};
    weft_graph_io_t io = {2, in, NULL, 4, outs, 0, NULL}, back;
    char *text = NULL;
    assert_int_equal(weft_graph_io_save(&io, &text), WEFT_OK);
    assert_non_null(strstr(text, "\"op\":\"Reshape\",\"props\":{\"shape_input\":true}"));
    assert_non_null(strstr(text, "\"op\":\"Alloc\",\"props\":{\"shape_inputs\":2}"));
    assert_non_null(strstr(text, "\"op\":\"Shape_i\",\"props\":{\"i\":1}"));
    assert_non_null(strstr(text, "\"op\":\"ARange\",\"props\":{\"dtype\":\"int16\"}"));
    assert_non_null(strstr(text, "\"op\":\"Linspace\",\"props\":{\"dtype\":\"float64\","
                                 "\"endpoint\":false}"));
    weft_graph_t *g2;
    assert_int_equal(weft_graph_create(NULL, &g2), WEFT_OK);
    assert_int_equal(weft_graph_io_load(g2, text, strlen(text), NULL, &back), WEFT_OK);
    weft_tensor_t *xv[2] = {ck_tensor(WEFT_FLOAT64, 2, (int64_t[]){2, 3},
                                      (double[]){1, 2, 3, 4, 5, 6}),
                            ival(1)};
    weft_tensor_t *r1[4] = {NULL}, *r2[4] = {NULL};
    assert_int_equal(weft_eval(G, 2, in, xv, 4, outs, r1), WEFT_OK);
    assert_int_equal(weft_eval(g2, 2, back.inputs, xv, 4, back.outputs, r2), WEFT_OK);
    for (int i = 0; i < 4; i++) {
        size_t bytes = weft_tensor_size(r1[i]) * weft_dtype_size(weft_tensor_dtype(r1[i]));
        assert_int_equal(weft_tensor_size(r1[i]), weft_tensor_size(r2[i]));
        assert_memory_equal(weft_tensor_data(r1[i]), weft_tensor_data(r2[i]), bytes);
    }
    ck_expect(r1[1], 2, (int64_t[]){1, 3}, (double[]){2, 2, 2}, 0);
    ck_expect(r1[2], 1, (int64_t[]){1}, (double[]){1}, 0);
    release_all(4, r1);
    release_all(4, r2);
    release_all(2, xv);
    weft_graph_io_clear(&back);
    weft_graph_io_free_text(text);
    weft_graph_destroy(g2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shape_and_shape_i),
        cmocka_unit_test(test_shape_no_gradient),
        cmocka_unit_test(test_reshape_sym_values_and_types),
        cmocka_unit_test(test_reshape_sym_errors),
        cmocka_unit_test(test_gradients),
        cmocka_unit_test(test_alloc_sym),
        cmocka_unit_test(test_ranges_sym),
        cmocka_unit_test(test_unknown_length_builders),
        cmocka_unit_test(test_repeat_vec),
        cmocka_unit_test(test_unknown_length_gradients),
        cmocka_unit_test(test_fast_run),
        cmocka_unit_test(test_same_bits_at_1_2_4_workers),
        cmocka_unit_test(test_range_gradients),
        cmocka_unit_test(test_json_round_trip),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
