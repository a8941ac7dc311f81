/* Tests of the advanced indexing ops (weft/index_ops.h): take, set_at and
 * inc_at with exact values (NumPy's np.take, x[idx] = y, np.add.at;
 * duplicates and negative indices included), every index dtype, the
 * error messages, same bits at 1, 2 and 4 workers on large gathers and
 * incs, gradients through weft_verify_grad, the JSON round trip and the
 * composed put / one_hot. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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

/* A constant index tensor of dtype dt holding vals (converted). */
static weft_var_t *idx_const(weft_dtype_t dt, int nd, const int64_t *shape, const double *vals)
{
    weft_tensor_t *t = ck_tensor(dt, nd, shape, vals);
    const weft_type_t *ty;
    assert_int_equal(weft_type_tensor(G, dt, nd, shape, &ty), WEFT_OK);
    weft_var_t *v = weft_constant_create(G, ty, weft_tensor_data(t),
                                         weft_tensor_size(t) * weft_dtype_size(dt));
    assert_non_null(v);
    weft_tensor_release(t);
    return v;
}

static const double X34[12] = {0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23};

/* np.take(x, [[2, -1], [0, 2]], axis=1) and axis=0, for every index dtype. */
static void test_take_values(void **state)
{
    (void)state;
    const int64_t xs[2] = {3, 4}, is[2] = {2, 2};
    const double iv[4] = {2, -1, 0, 2};
    weft_dtype_t dts[] = {WEFT_INT8, WEFT_INT16, WEFT_INT32, WEFT_INT64,
                          WEFT_UINT8, WEFT_UINT16, WEFT_UINT32, WEFT_UINT64};
    weft_var_t *x = ck_var(G, WEFT_FLOAT64, 2, xs);
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT64, 2, xs, X34), *r;
    for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++) {
        bool sign = weft_dtype_kind(dts[k]) == WEFT_KIND_INT;
        const double uv[4] = {2, 3, 0, 2};
        weft_var_t *ix = idx_const(dts[k], 2, is, sign ? iv : uv);
        weft_var_t *t1 = weft_take(G, x, ix, 1);
        assert_int_equal(ck_eval(G, 1, &x, &xv, t1, &r), WEFT_OK);
        const int64_t s1[3] = {3, 2, 2};
        const double w1[12] = {2, 3, 0, 2, 12, 13, 10, 12, 22, 23, 20, 22};
        ck_expect(r, 3, s1, w1, 0);
        weft_tensor_release(r);
        if (!sign) continue; /* -1 along axis 0 (length 3): row 2 */
        assert_int_equal(ck_eval(G, 1, &x, &xv, weft_take(G, x, ix, -2), &r), WEFT_OK);
        const int64_t s0[3] = {2, 2, 4};
        const double w0[16] = {20, 21, 22, 23, 20, 21, 22, 23, 0, 1, 2, 3, 20, 21, 22, 23};
        ck_expect(r, 3, s0, w0, 0);
        weft_tensor_release(r);
    }
    weft_tensor_release(xv);
}

/* Every element size moves: int8, float16, int64, complex128 rows. */
static void test_take_dtypes(void **state)
{
    (void)state;
    const int64_t xs[1] = {4}, is[3] = {3};
    const double vals[4] = {5, -6, 7, 8}, iv[3] = {3, 0, -3};
    weft_dtype_t dts[] = {WEFT_INT8, WEFT_FLOAT16, WEFT_INT64, WEFT_BOOL, WEFT_INT16};
    for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++) {
        weft_var_t *x = ck_var(G, dts[k], 1, xs);
        weft_tensor_t *xv = ck_tensor(dts[k], 1, xs, vals), *r;
        weft_var_t *t = weft_take(G, x, idx_const(WEFT_INT32, 1, is, iv), 0);
        assert_int_equal(ck_eval(G, 1, &x, &xv, t, &r), WEFT_OK);
        assert_int_equal(weft_tensor_dtype(r), dts[k]);
        const double want[3] = {8, 5, -6}, wb[3] = {1, 1, 1};
        ck_expect(r, 1, is, dts[k] == WEFT_BOOL ? wb : want, 0);
        weft_tensor_release(r);
        weft_tensor_release(xv);
    }
}

static void test_take_errors(void **state)
{
    (void)state;
    const int64_t xs[2] = {3, 4}, is[1] = {2};
    const double iv[2] = {1, 3}, neg[2] = {-5, 0};
    weft_var_t *x = ck_var(G, WEFT_FLOAT64, 2, xs);
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT64, 2, xs, X34), *r;
    assert_int_equal(ck_eval(G, 1, &x, &xv, weft_take(G, x, idx_const(WEFT_INT64, 1, is, iv), 1),
                             &r),
                     WEFT_OK);
    weft_tensor_release(r);
    assert_int_equal(ck_eval(G, 1, &x, &xv, weft_take(G, x, idx_const(WEFT_INT64, 1, is, iv), 0),
                             &r),
                     WEFT_ERANGE);
    assert_non_null(strstr(weft_graph_last_error(G),
                           "Take: index 3 is out of bounds for axis 0 with size 3"));
    assert_int_equal(ck_eval(G, 1, &x, &xv, weft_take(G, x, idx_const(WEFT_INT8, 1, is, neg), 1),
                             &r),
                     WEFT_ERANGE);
    assert_non_null(strstr(weft_graph_last_error(G),
                           "Take: index -5 is out of bounds for axis 1 with size 4"));
    weft_tensor_release(xv);

    weft_var_t *fi = ck_var(G, WEFT_FLOAT32, 1, is);
    assert_null(weft_take_at(G, x, fi, 0, "m.c", 7));
    assert_int_equal(weft_graph_error(G), WEFT_ETYPE);
    const char *f;
    int l;
    weft_var_trace(fi, &f, &l);
    char want[256];
    snprintf(want, sizeof want, "Take (at m.c:7): indices (created at %s:%d) are float32, not of "
             "an integer dtype", f, l);
    assert_string_equal(weft_graph_error_message(G), want);
    weft_graph_clear_error(G);
    assert_null(weft_take_at(G, x, idx_const(WEFT_INT64, 1, is, iv), 2, "m.c", 8));
    assert_int_equal(weft_graph_error(G), WEFT_ERANGE);
    assert_string_equal(weft_graph_error_message(G),
                        "Take (at m.c:8): axis 2 out of range for x of rank 2");
    weft_graph_clear_error(G);
}

/* np.add.at / x[idx] = y with duplicates and a negative index. */
static void test_set_inc_duplicates(void **state)
{
    (void)state;
    const int64_t xs[1] = {5}, is[4] = {4};
    const double x0[5] = {1, 1, 1, 1, 1}, iv[4] = {1, 1, 3, -4}, yv[4] = {1, 2, 3, 4};
    weft_var_t *x = ck_var(G, WEFT_INT32, 1, xs), *ix = idx_const(WEFT_INT64, 1, is, iv);
    weft_var_t *y = idx_const(WEFT_INT16, 1, is, yv);
    weft_tensor_t *xv = ck_tensor(WEFT_INT32, 1, xs, x0), *r;
    assert_int_equal(ck_eval(G, 1, &x, &xv, weft_inc_at(G, x, ix, y, 0), &r), WEFT_OK);
    const double wi[5] = {1, 8, 1, 4, 1};
    ck_expect(r, 1, xs, wi, 0);
    weft_tensor_release(r);
    assert_int_equal(ck_eval(G, 1, &x, &xv, weft_set_at(G, x, ix, y, 0), &r), WEFT_OK);
    const double ws[5] = {1, 4, 1, 3, 1};
    ck_expect(r, 1, xs, ws, 0);
    weft_tensor_release(r);
    /* a scalar y broadcasts */
    weft_var_t *s = weft_constant_scalar(G, WEFT_INT32, 10);
    assert_int_equal(ck_eval(G, 1, &x, &xv, weft_inc_at(G, x, ix, s, 0), &r), WEFT_OK);
    const double wsc[5] = {1, 31, 1, 11, 1};
    ck_expect(r, 1, xs, wsc, 0);
    weft_tensor_release(r);
    weft_tensor_release(xv);
}

/* Along axis 1 of a (2, 3) float32 with a (2, 2) index. */
static void test_inc_axis1(void **state)
{
    (void)state;
    const int64_t xs[2] = {2, 3}, is[2] = {2, 2}, ys[3] = {2, 2, 2};
    const double x0[6] = {0, 1, 2, 3, 4, 5}, iv[4] = {0, 2, 2, 0};
    const double yv[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    weft_var_t *x = ck_var(G, WEFT_FLOAT32, 2, xs), *ix = idx_const(WEFT_UINT8, 2, is, iv);
    weft_var_t *y = idx_const(WEFT_FLOAT32, 3, ys, yv);
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT32, 2, xs, x0), *r;
    assert_int_equal(ck_eval(G, 1, &x, &xv, weft_inc_at(G, x, ix, y, 1), &r), WEFT_OK);
    /* row 0: +1 at 0, +2 at 2, +3 at 2, +4 at 0; row 1: +5, +6, +7, +8 likewise */
    const double w[6] = {5, 1, 7, 16, 4, 18};
    ck_expect(r, 2, xs, w, 0);
    weft_tensor_release(r);
    weft_tensor_release(xv);
}

static void test_update_errors(void **state)
{
    (void)state;
    const int64_t xs[1] = {5}, is[1] = {2}, ys[1] = {3};
    const double iv[2] = {0, 1};
    weft_var_t *x = ck_var(G, WEFT_INT32, 1, xs), *ix = idx_const(WEFT_INT64, 1, is, iv);
    assert_null(weft_set_at_at(G, x, ix, ck_var(G, WEFT_FLOAT64, 1, is), 0, false, "m.c", 3));
    assert_int_equal(weft_graph_error(G), WEFT_ETYPE);
    assert_string_equal(weft_graph_error_message(G),
                        "AdvancedSetSubtensor (at m.c:3): y is float64, x int32 (y must convert "
                        "to x's dtype safely; no inc into bool)");
    weft_graph_clear_error(G);
    assert_null(weft_set_at_at(G, x, ix, ck_var(G, WEFT_INT32, 1, ys), 0, true, "m.c", 4));
    assert_int_equal(weft_graph_error(G), WEFT_ESHAPE);
    assert_string_equal(weft_graph_error_message(G),
                        "AdvancedIncSubtensor (at m.c:4): y has length 3 in dimension 0, "
                        "x[indices] 2");
    weft_graph_clear_error(G);
    weft_var_t *b = ck_var(G, WEFT_BOOL, 1, xs);
    assert_null(weft_set_at_at(G, b, ix, ck_var(G, WEFT_BOOL, 1, is), 0, true, "m.c", 5));
    assert_int_equal(weft_graph_error(G), WEFT_ETYPE);
    weft_graph_clear_error(G);
    /* out of range at run time: x is left unwritten, the node fails */
    const double bad[2] = {0, 5};
    weft_tensor_t *xv = ck_tensor(WEFT_INT32, 1, xs, NULL), *r;
    const double ones[2] = {1, 1};
    weft_var_t *s = idx_const(WEFT_INT32, 1, is, ones);
    assert_int_equal(ck_eval(G, 1, &x, &xv,
                             weft_inc_at(G, x, idx_const(WEFT_INT64, 1, is, bad), s, 0), &r),
                     WEFT_ERANGE);
    assert_non_null(strstr(weft_graph_last_error(G), "AdvancedIncSubtensor: index 5 is out of "
                                                     "bounds for axis 0 with size 5"));
    weft_tensor_release(xv);
}

/* Large gathers and incs (many duplicates) split over the pool: same bits
 * at 1, 2 and 4 workers and in the evaluator. */
static void test_same_bits(void **state)
{
    (void)state;
    const int64_t xs[2] = {4096, 8}, n = 200000;
    double *iv = malloc((size_t)n * sizeof *iv);
    assert_non_null(iv);
    uint64_t s = ck_seed("index same bits");
    for (int64_t i = 0; i < n; i++) iv[i] = (double)(int64_t)(ck_rand(&s) % 8192) - 4096;
    weft_var_t *x = ck_var(G, WEFT_FLOAT32, 2, xs), *ix = idx_const(WEFT_INT32, 1, &n, iv);
    const int64_t xs1[1] = {4096 * 8};
    weft_var_t *flat = weft_reshape(G, x, 1, xs1);
    weft_var_t *tk = weft_take(G, x, ix, 0), *tk1 = weft_take(G, flat, ix, 0);
    weft_var_t *inc = weft_inc_at(G, x, ix, tk, 0), *set = weft_set_at(G, x, ix, tk, 0);
    weft_var_t *inc1 = weft_inc_at(G, flat, ix, tk1, 0);
    weft_tensor_t *xv = ck_random(WEFT_FLOAT32, 2, xs, -1, 1, s);
    weft_var_t *outs[5] = {tk, tk1, inc, set, inc1};
    ck_same_bits_at_1_2_4(G, x, xv, 5, outs);
    weft_tensor_release(xv);
    free(iv);
}

typedef enum { GK_TAKE, GK_INC_X, GK_INC_Y, GK_SET, GK_MASK, GK_MASK_INC } gk_t;

/* Duplicate and negative indices along axis 1 of a (3, 6) input (set_at:
 * with distinct ones too). */
static bool dup = true;
static weft_var_t *grad_fn(weft_graph_t *g, size_t n_in, weft_var_t *const *in, void *user)
{
    (void)n_in;
    gk_t k = *(gk_t *)user;
    const int64_t is[1] = {5};
    int64_t iv[5] = {1, -1, 1, 0, 3}, uv[5] = {1, -1, 2, 0, -3};
    const weft_type_t *ty;
    if (weft_type_tensor(g, WEFT_INT64, 1, is, &ty) != WEFT_OK) return NULL;
    weft_var_t *ix = weft_constant_create(g, ty, k == GK_SET && dup ? iv : k == GK_SET ? uv : iv,
                                          sizeof iv);
    bool mv[18] = {1, 0, 1, 1, 0, 0, 0, 1, 1, 0, 1, 0, 1, 1, 1, 0, 0, 1};
    const int64_t ms[2] = {3, 6};
    const weft_type_t *mt;
    if (weft_type_tensor(g, WEFT_BOOL, 2, ms, &mt) != WEFT_OK) return NULL;
    weft_var_t *mask = weft_constant_create(g, mt, mv, sizeof mv);
    if (k == GK_MASK) {
        weft_var_t *m = weft_mask_take(g, in[0], mask);
        return weft_mul(g, m, weft_sin(g, m));
    }
    if (k == GK_MASK_INC) {
        weft_var_t *m = weft_mask_inc(g, in[0], mask, weft_sum(g, in[1], 0, NULL, false));
        return weft_mul(g, m, weft_sin(g, m));
    }
    weft_var_t *out = k == GK_TAKE    ? weft_take(g, in[0], ix, 1)
                      : k == GK_SET   ? weft_set_at(g, in[0], ix, in[1], 1)
                                      : weft_inc_at(g, in[0], ix, in[1], 1);
    /* a non-uniform weighting so every position's gradient differs */
    return weft_mul(g, out, weft_sin(g, out));
}

static void test_grads(void **state)
{
    (void)state;
    const int64_t xs[2] = {3, 6}, ys[2] = {3, 5};
    for (int k = GK_TAKE; k <= GK_MASK_INC; k++) {
        gk_t kind = (gk_t)k;
        weft_tensor_t *pts[2] = {ck_random(WEFT_FLOAT64, 2, xs, -1, 1, 10 + (uint64_t)k),
                                 ck_random(WEFT_FLOAT64, 2, ys, -1, 1, 20 + (uint64_t)k)};
        ck_verify(grad_fn, &kind, kind == GK_TAKE || kind == GK_MASK ? 1 : 2, pts);
        if (kind == GK_SET) { /* and without duplicates */
            dup = false;
            ck_verify(grad_fn, &kind, 2, pts);
            dup = true;
        }
        weft_tensor_release(pts[0]);
        weft_tensor_release(pts[1]);
    }
}

/* JSON round trip of Take and both updates (one in place, from the class's
 * inplace_variant hook): the loaded graph computes the same values. */
static void test_json_and_inplace(void **state)
{
    (void)state;
    const int64_t xs[1] = {5}, is[3] = {3};
    const double x0[5] = {1, 2, 3, 4, 5}, iv[3] = {4, -1, 0}, yv[3] = {10, 20, 30};
    weft_var_t *x = ck_var(G, WEFT_FLOAT64, 1, xs), *ix = idx_const(WEFT_INT32, 1, is, iv);
    weft_var_t *y = idx_const(WEFT_FLOAT64, 1, is, yv);
    weft_var_t *inc = weft_inc_at(G, x, ix, y, 0);
    const weft_op_t *op = weft_apply_op(weft_var_owner(inc)), *ip = NULL;
    assert_int_equal(weft_op_class(op)->inplace_variant(G, op, 0, &ip), WEFT_OK);
    assert_int_equal(weft_op_class(op)->inplace_variant(G, op, 2, &ip), WEFT_ENOTIMPL);
    weft_graph_clear_error(G);
    assert_int_equal(weft_op_class(op)->inplace_variant(G, op, 0, &ip), WEFT_OK);
    char buf[64];
    weft_op_print(ip, buf, sizeof buf);
    assert_string_equal(buf, "AdvancedIncSubtensor{axis=0, inplace}");
    weft_var_t *xc = weft_mul(G, x, weft_constant_scalar(G, WEFT_FLOAT64, 1));
    weft_var_t *in[3] = {xc, ix, y};
    weft_var_t *outs[3] = {weft_take(G, x, ix, 0), weft_set_at(G, x, ix, y, 0),
                           weft_op_call(G, ip, 3, in)};
    weft_graph_io_t io = {.n_inputs = 1, .inputs = &x, .n_outputs = 3, .outputs = outs};
    char *text = NULL;
    assert_int_equal(weft_graph_io_save(&io, &text), WEFT_OK);
    assert_non_null(strstr(text, "\"Take\""));
    assert_non_null(strstr(text, "\"inplace\":true"));
    weft_graph_t *h;
    assert_int_equal(weft_graph_create(NULL, &h), WEFT_OK);
    weft_graph_io_t back = {0};
    assert_int_equal(weft_graph_io_load(h, text, strlen(text), NULL, &back), WEFT_OK);
    weft_graph_io_free_text(text);
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT64, 1, xs, x0), *r;
    const double want[3][5] = {{5, 5, 1, 0, 0}, {30, 2, 3, 4, 20}, {31, 2, 3, 4, 35}};
    const int64_t ns[3] = {3, 5, 5};
    for (int k = 0; k < 3; k++) {
        assert_int_equal(ck_eval(h, 1, back.inputs, &xv, back.outputs[k], &r), WEFT_OK);
        ck_expect(r, 1, &ns[k], want[k], 0);
        weft_tensor_release(r);
    }
    weft_graph_io_clear(&back);
    weft_graph_destroy(h);
    weft_tensor_release(xv);
}

/* np.put on the flattened array (last duplicate wins, negative wraps) and
 * np.eye(depth)[indices]. */
static void test_put_one_hot(void **state)
{
    (void)state;
    const int64_t xs[2] = {2, 3}, is[3] = {3};
    const double x0[6] = {0, 1, 2, 3, 4, 5}, iv[3] = {-1, 1, 5}, vv[3] = {10, 20, 30};
    weft_var_t *x = ck_var(G, WEFT_INT64, 2, xs), *ix = idx_const(WEFT_INT32, 1, is, iv);
    weft_tensor_t *xv = ck_tensor(WEFT_INT64, 2, xs, x0), *r;
    weft_var_t *p = weft_put(G, x, ix, idx_const(WEFT_INT64, 1, is, vv));
    assert_int_equal(ck_eval(G, 1, &x, &xv, p, &r), WEFT_OK);
    const double wp[6] = {0, 20, 2, 3, 4, 30};
    ck_expect(r, 2, xs, wp, 0);
    weft_tensor_release(r);
    weft_tensor_release(xv);

    const int64_t hs[2] = {2, 2}, os[3] = {2, 2, 3};
    const double hv[4] = {0, 2, -1, 1};
    weft_var_t *h = weft_one_hot(G, idx_const(WEFT_INT8, 2, hs, hv), 3, WEFT_FLOAT32);
    assert_non_null(h);
    assert_int_equal(weft_type_dtype(weft_var_type(h)), WEFT_FLOAT32);
    assert_int_equal(ck_eval(G, 0, NULL, NULL, h, &r), WEFT_OK);
    const double wh[12] = {1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 1, 0};
    ck_expect(r, 3, os, wh, 0);
    weft_tensor_release(r);
    assert_null(weft_one_hot_at(G, idx_const(WEFT_INT8, 2, hs, hv), -2, WEFT_FLOAT32, "m.c", 9));
    assert_int_equal(weft_graph_error(G), WEFT_EINVAL);
    assert_string_equal(weft_graph_error_message(G),
                        "one_hot (at m.c:9): depth -2 is negative");
    weft_graph_clear_error(G);
    /* depth 0: every index is out of range (np.eye(0)[i] raises) */
    h = weft_one_hot(G, idx_const(WEFT_INT8, 2, hs, hv), 0, WEFT_FLOAT32);
    assert_non_null(h);
    assert_int_equal(weft_type_dim(weft_var_type(h), 2), 0);
    assert_int_equal(ck_eval(G, 0, NULL, NULL, h, &r), WEFT_ERANGE);
    assert_non_null(strstr(weft_graph_last_error(G),
                           "Take: index 0 is out of bounds for axis 0 with size 0"));
}

/* A depth far past the old 4096 limit: exact rows (negative indices from
 * the end), the out-of-range error, and the same bits at 1, 2 and 4
 * workers for three output dtypes. */
static void test_one_hot_large_depth(void **state)
{
    (void)state;
    const int64_t depth = 100003, n = 8;
    const double iv[8] = {0, -1, 100002, 5, -100003, 77777, 5, 1};
    const int64_t want[8] = {0, 100002, 100002, 5, 0, 77777, 5, 1};
    weft_var_t *x = ck_var(G, WEFT_INT64, 1, &n);
    weft_tensor_t *xv = ck_tensor(WEFT_INT64, 1, &n, iv), *r = NULL;
    weft_var_t *h = weft_one_hot(G, x, depth, WEFT_FLOAT64);
    assert_int_equal(ck_eval(G, 1, &x, &xv, h, &r), WEFT_OK);
    assert_int_equal(weft_tensor_dim(r, 1), depth);
    const double *hd = weft_tensor_data(r);
    for (int64_t i = 0; i < n; i++) {
        for (int64_t j = 0; j < depth; j++) {
            if (hd[i * depth + j] != (j == want[i] ? 1.0 : 0.0)) {
                fail_msg("row %lld col %lld: %g", (long long)i, (long long)j, hd[i * depth + j]);
            }
        }
    }
    weft_tensor_release(r);
    weft_var_t *outs[3] = {h, weft_one_hot(G, x, depth, WEFT_FLOAT16),
                           weft_one_hot(G, x, depth, WEFT_BOOL)};
    ck_same_bits_at_1_2_4(G, x, xv, 3, outs);
    weft_tensor_release(xv);
    const double bad[8] = {0, 0, 0, 100003, 0, 0, 0, 0};
    xv = ck_tensor(WEFT_INT64, 1, &n, bad);
    assert_int_equal(ck_eval(G, 1, &x, &xv, h, &r), WEFT_ERANGE);
    assert_non_null(strstr(weft_graph_last_error(G),
                           "Take: index 100003 is out of bounds for axis 0 with size 100003"));
    weft_tensor_release(xv);
}

/* x[mask] with a full and a prefix mask, mask set/inc, the shape error,
 * and the gradient of x[mask] (an inc_at). */
static void test_masks(void **state)
{
    (void)state;
    const int64_t xs[2] = {2, 3}, ms[1] = {2};
    const double x0[6] = {0, 1, 2, 3, 4, 5}, mf[6] = {1, 0, 1, 0, 0, 1}, mp[2] = {0, 1};
    weft_var_t *x = ck_var(G, WEFT_FLOAT64, 2, xs);
    weft_var_t *full = idx_const(WEFT_BOOL, 2, xs, mf), *pre = idx_const(WEFT_BOOL, 1, ms, mp);
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT64, 2, xs, x0), *r;
    weft_var_t *t = weft_mask_take(G, x, full);
    assert_int_equal(weft_type_dim(weft_var_type(t), 0), WEFT_DIM_UNKNOWN);
    assert_int_equal(ck_eval(G, 1, &x, &xv, t, &r), WEFT_OK);
    const int64_t s3[1] = {3}, s13[2] = {1, 3};
    const double w3[3] = {0, 2, 5}, w13[3] = {3, 4, 5};
    ck_expect(r, 1, s3, w3, 0);
    weft_tensor_release(r);
    assert_int_equal(ck_eval(G, 1, &x, &xv, weft_mask_take(G, x, pre), &r), WEFT_OK);
    ck_expect(r, 2, s13, w13, 0);
    weft_tensor_release(r);
    weft_var_t *ten = weft_constant_scalar(G, WEFT_FLOAT64, 10);
    assert_int_equal(ck_eval(G, 1, &x, &xv, weft_mask_inc(G, x, full, ten), &r), WEFT_OK);
    const double wi[6] = {10, 1, 12, 3, 4, 15}, ws[6] = {0, 1, 2, 10, 10, 10};
    ck_expect(r, 2, xs, wi, 0);
    weft_tensor_release(r);
    assert_int_equal(ck_eval(G, 1, &x, &xv, weft_mask_set(G, x, pre, ten), &r), WEFT_OK);
    ck_expect(r, 2, xs, ws, 0);
    weft_tensor_release(r);
    /* d sum(x[mask]) / dx is the mask */
    weft_var_t *gx = weft_grad(G, weft_sum(G, t, 0, NULL, false), x);
    assert_non_null(gx);
    assert_int_equal(ck_eval(G, 1, &x, &xv, gx, &r), WEFT_OK);
    ck_expect(r, 2, xs, mf, 0);
    weft_tensor_release(r);
    weft_tensor_release(xv);

    const int64_t m3[1] = {3};
    const double v3[3] = {1, 1, 1};
    assert_null(weft_mask_take_at(G, x, idx_const(WEFT_BOOL, 1, m3, v3), "m.c", 11));
    assert_int_equal(weft_graph_error(G), WEFT_ESHAPE);
    assert_string_equal(weft_graph_error_message(G), "mask_take (at m.c:11): the mask has length "
                                                     "3 in dimension 0, x 2");
    weft_graph_clear_error(G);
    assert_null(weft_mask_take_at(G, x, idx_const(WEFT_INT32, 1, ms, mp), "m.c", 12));
    assert_int_equal(weft_graph_error(G), WEFT_ETYPE);
    weft_graph_clear_error(G);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_take_values),     cmocka_unit_test(test_take_dtypes),
        cmocka_unit_test(test_take_errors),     cmocka_unit_test(test_set_inc_duplicates),
        cmocka_unit_test(test_inc_axis1),       cmocka_unit_test(test_update_errors),
        cmocka_unit_test(test_same_bits),       cmocka_unit_test(test_grads),
        cmocka_unit_test(test_json_and_inplace),
        cmocka_unit_test(test_put_one_hot),
        cmocka_unit_test(test_one_hot_large_depth),
        cmocka_unit_test(test_masks),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
