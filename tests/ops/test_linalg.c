/* Tests of the linear algebra ops (weft/linalg.h): Dot for every rank pair
 * (with transposed, strided, reversed and empty operands), Gemm/Gemv in
 * place and copying (the inplace_variant hook, aliasing, b == 0), Cholesky
 * (including the not-positive-definite error), Trsm for every flag
 * combination, Syrk; randomized comparison with naive loops; the BLAS
 * threading API; bad arguments; every gradient through weft_verify_grad. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "linalg/linalg_int.h"
#include "tensor/kernel_int.h"
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

static weft_var_t *var_like(weft_graph_t *g, const weft_tensor_t *t)
{
    return ck_var(g, weft_tensor_dtype(t), weft_tensor_ndim(t), weft_tensor_shape(t));
}

/* Evaluates dot(x, y) for the values xv, yv. */
static weft_tensor_t *run_dot(weft_graph_t *g, weft_tensor_t *xv, weft_tensor_t *yv)
{
    weft_var_t *in[2] = {var_like(g, xv), var_like(g, yv)}, *z = NULL;
    weft_tensor_t *vals[2] = {xv, yv}, *r = NULL;
    assert_non_null(z = weft_dot(g, in[0], in[1]));
    assert_int_equal(ck_eval(g, 2, in, vals, z, &r), WEFT_OK);
    return r;
}

static const int64_t s23[2] = {2, 3}, s32[2] = {3, 2}, s3[1] = {3};

static void test_linalg_dot_all_rank_pairs_exact(void **state)
{
    fx_t *f = *state;
    weft_tensor_t *a = ck_tensor(WEFT_FLOAT64, 2, s23, (double[]){1, 2, 3, 4, 5, 6});
    weft_tensor_t *b = ck_tensor(WEFT_FLOAT64, 2, s32, (double[]){1, 0, 0, 1, 2, -1});
    weft_tensor_t *v = ck_tensor(WEFT_FLOAT64, 1, s3, (double[]){1, -1, 2});
    weft_tensor_t *w = ck_tensor(WEFT_FLOAT64, 1, (int64_t[]){2}, (double[]){3, 1});
    weft_tensor_t *mm = run_dot(f->g, a, b), *mv = run_dot(f->g, a, v);
    weft_tensor_t *vm = run_dot(f->g, w, a), *vv = run_dot(f->g, v, v);
    ck_expect(mm, 2, (int64_t[]){2, 2}, (double[]){7, -1, 16, -1}, 0);
    ck_expect(mv, 1, (int64_t[]){2}, (double[]){5, 11}, 0);
    ck_expect(vm, 1, s3, (double[]){7, 11, 15}, 0);
    ck_expect(vv, 0, NULL, (double[]){6}, 0);
    weft_tensor_t *ts[] = {a, b, v, w, mm, mv, vm, vv};
    for (size_t i = 0; i < 8; i++) {
        weft_tensor_release(ts[i]);
    }
}

static void test_linalg_dot_batched_and_float32(void **state)
{
    fx_t *f = *state;
    int64_t sa[3] = {2, 2, 2}, sb[3] = {2, 2, 1};
    weft_tensor_t *a = ck_tensor(WEFT_FLOAT32, 3, sa, (double[]){1, 2, 3, 4, 0, 1, 1, 0});
    weft_tensor_t *b = ck_tensor(WEFT_FLOAT32, 3, sb, (double[]){1, 1, 2, 3});
    weft_tensor_t *r = run_dot(f->g, a, b);
    assert_int_equal(weft_tensor_dtype(r), WEFT_FLOAT32);
    ck_expect(r, 3, (int64_t[]){2, 2, 1}, (double[]){3, 7, 3, 2}, 0);
    weft_tensor_release(a);
    weft_tensor_release(b);
    weft_tensor_release(r);
}

/* Transposed views go to BLAS as flags, a step-2 view is copied, a reversed
 * vector is copied; all give the same products. */
static void test_linalg_dot_views_transposed_strided_reversed(void **state)
{
    fx_t *f = *state;
    double buf[12] = {1, 4, 2, 5, 3, 6, 9, 9, 9, 9, 9, 9};
    double sbuf[12] = {1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0};
    weft_tensor_t *tv = NULL, *sv = NULL, *rv = NULL;
    assert_int_equal(weft_tensor_from_data(WEFT_FLOAT64, 2, s23, (int64_t[]){1, 2}, buf, &tv),
                     WEFT_OK); /* [[1,2,3],[4,5,6]] stored transposed */
    assert_int_equal(weft_tensor_from_data(WEFT_FLOAT64, 2, s23, (int64_t[]){6, 2}, sbuf, &sv),
                     WEFT_OK); /* [[1,2,3],[4,5,6]] with inner stride 2 */
    double vb[3] = {2, -1, 1};
    assert_int_equal(weft_tensor_from_data(WEFT_FLOAT64, 1, s3, (int64_t[]){-1}, vb + 2, &rv),
                     WEFT_OK); /* [1,-1,2] */
    weft_tensor_t *b = ck_tensor(WEFT_FLOAT64, 2, s32, (double[]){1, 0, 0, 1, 2, -1});
    weft_tensor_t *r1 = run_dot(f->g, tv, b), *r2 = run_dot(f->g, sv, b);
    weft_tensor_t *r3 = run_dot(f->g, tv, rv), *r4 = run_dot(f->g, rv, rv);
    double want[4] = {7, -1, 16, -1};
    ck_expect(r1, 2, (int64_t[]){2, 2}, want, 0);
    ck_expect(r2, 2, (int64_t[]){2, 2}, want, 0);
    ck_expect(r3, 1, (int64_t[]){2}, (double[]){5, 11}, 0);
    ck_expect(r4, 0, NULL, (double[]){6}, 0);
    weft_tensor_t *ts[] = {tv, sv, rv, b, r1, r2, r3, r4};
    for (size_t i = 0; i < 8; i++) {
        weft_tensor_release(ts[i]);
    }
}

/* The stride -> BLAS layout rules: no copy for row-major with any row stride,
 * for transposed views, and for length-1 axes with any stride; a copy only
 * for non-unit inner strides on both axes or negative / zero strides. */
static void test_linalg_layout_uses_flags_not_copies(void **state)
{
    (void)state;
    double d[64];
    weft__bmat_t m;
    assert_true(weft__bmat_layout(d, 3, 4, 10, 1, &m)); /* row stride 10: ld */
    assert_false(m.trans);
    assert_int_equal(m.ld, 10);
    assert_true(weft__bmat_layout(d, 3, 4, 1, 5, &m)); /* transposed view: flag */
    assert_true(m.trans);
    assert_int_equal(m.ld, 5);
    assert_true(weft__bmat_layout(d, 1, 4, 99, 3, &m)); /* one strided row = a column */
    assert_true(m.trans);
    assert_int_equal(m.ld, 3);
    assert_true(weft__bmat_layout(d, 4, 1, 6, 42, &m)); /* one column, row stride 6 */
    assert_false(m.trans);
    assert_int_equal(m.ld, 6);
    assert_false(weft__bmat_layout(d, 3, 4, 8, 2, &m));  /* inner stride 2 both ways */
    assert_false(weft__bmat_layout(d, 3, 4, -4, 1, &m)); /* reversed rows */
    assert_false(weft__bmat_layout(d, 3, 4, 0, 1, &m));  /* broadcast rows */
    weft_tensor_t *t = ck_tensor(WEFT_FLOAT64, 2, s23, NULL), *v = NULL;
    weft_kernel_ctx_t ctx;
    weft__kernel_ctx_init(&ctx, NULL, NULL, NULL, 0);
    assert_int_equal(weft_tensor_view(t, 2, s32, (int64_t[]){1, 3}, 0, &v), WEFT_OK);
    assert_int_equal(weft__bmat_from(&ctx, v, &m), WEFT_OK);
    assert_null(m.copy);
    assert_ptr_equal(m.data, weft_tensor_data(t));
    weft__bmat_fini(&ctx, &m);
    weft_tensor_release(v);
    assert_int_equal(weft_tensor_view(t, 2, (int64_t[]){2, 2}, (int64_t[]){3, 2}, 0, &v), WEFT_OK);
    assert_int_equal(weft__bmat_from(&ctx, v, &m), WEFT_OK);
    assert_non_null(m.copy); /* inner stride 2: copied */
    bool same = false;
    assert_int_equal(weft_tensor_allclose(m.copy, v, 0.0, 0.0, &same), WEFT_OK);
    assert_true(same);
    weft__bmat_fini(&ctx, &m);
    assert_null(m.copy);
    weft_tensor_release(v);
    weft_tensor_release(t);
}

/* Length-1 axes with odd strides: (1,3) row with inner stride 2 times a
 * (3,1) column slice. */
static void test_linalg_dot_length1_axes_odd_strides(void **state)
{
    fx_t *f = *state;
    double rb[6] = {1, 9, 2, 9, 3, 9}, cb[12] = {4, 0, 0, 0, 5, 0, 0, 0, 6, 0, 0, 0};
    weft_tensor_t *row = NULL, *col = NULL;
    assert_int_equal(weft_tensor_from_data(WEFT_FLOAT64, 2, (int64_t[]){1, 3}, (int64_t[]){7, 2},
                                           rb, &row), WEFT_OK);
    assert_int_equal(weft_tensor_from_data(WEFT_FLOAT64, 2, (int64_t[]){3, 1}, (int64_t[]){4, 1},
                                           cb, &col), WEFT_OK);
    weft_tensor_t *in = run_dot(f->g, row, col), *out = run_dot(f->g, col, row);
    ck_expect(in, 2, (int64_t[]){1, 1}, (double[]){32}, 0);
    ck_expect(out, 2, (int64_t[]){3, 3}, (double[]){4, 8, 12, 5, 10, 15, 6, 12, 18}, 0);
    weft_tensor_release(row);
    weft_tensor_release(col);
    weft_tensor_release(in);
    weft_tensor_release(out);
}

static void test_linalg_dot_empty_inner_and_outer(void **state)
{
    fx_t *f = *state;
    weft_tensor_t *a = ck_tensor(WEFT_FLOAT64, 2, (int64_t[]){2, 0}, NULL);
    weft_tensor_t *b = ck_tensor(WEFT_FLOAT64, 2, (int64_t[]){0, 3}, NULL);
    weft_tensor_t *e = ck_tensor(WEFT_FLOAT64, 1, (int64_t[]){0}, NULL);
    weft_tensor_t *c = ck_tensor(WEFT_FLOAT64, 2, s32, NULL);
    weft_tensor_t *b0 = ck_tensor(WEFT_FLOAT64, 2, (int64_t[]){0, 3}, NULL);
    weft_tensor_t *r1 = run_dot(f->g, a, b), *r2 = run_dot(f->g, b0, c), *r3 = run_dot(f->g, a, e);
    weft_tensor_t *r4 = run_dot(f->g, e, e);
    ck_expect(r1, 2, s23, (double[]){0, 0, 0, 0, 0, 0}, 0);
    ck_expect(r2, 2, (int64_t[]){0, 2}, NULL, 0);
    ck_expect(r3, 1, (int64_t[]){2}, (double[]){0, 0}, 0);
    ck_expect(r4, 0, NULL, (double[]){0}, 0);
    weft_tensor_t *ts[] = {a, b, e, c, b0, r1, r2, r3, r4};
    for (size_t i = 0; i < 9; i++) {
        weft_tensor_release(ts[i]);
    }
}

/* Builds gemm(z, a, x, y, b) (or gemv) with scalar constants a, b. */
static weft_var_t *build_gemx(weft_graph_t *g, bool gemv, bool inplace, weft_var_t *z,
                              double a, weft_var_t *x, weft_var_t *y, double b)
{
    weft_var_t *ca = NULL, *cb = NULL, *out = NULL;
    weft_dtype_t dt = weft_type_dtype(weft_var_type(z));
    assert_non_null(ca = weft_constant_scalar(g, dt, a));
    assert_non_null(cb = weft_constant_scalar(g, dt, b));
    weft_status_t st =
        gemv ? ((out = weft_gemv(g, z, ca, x, y, cb, inplace)) ? WEFT_OK : weft_graph_error(g))
             : ((out = weft_gemm(g, z, ca, x, y, cb, inplace)) ? WEFT_OK : weft_graph_error(g));
    assert_int_equal(st, WEFT_OK);
    return out;
}

static void test_linalg_gemm_copy_keeps_z_inplace_overwrites(void **state)
{
    fx_t *f = *state;
    int64_t s22[2] = {2, 2};
    weft_tensor_t *zv = ck_tensor(WEFT_FLOAT64, 2, s22, (double[]){1, 1, 1, 1});
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT64, 2, s23, (double[]){1, 2, 3, 4, 5, 6});
    weft_tensor_t *yv = ck_tensor(WEFT_FLOAT64, 2, s32, (double[]){1, 0, 0, 1, 2, -1});
    weft_var_t *z = var_like(f->g, zv), *x = var_like(f->g, xv), *y = var_like(f->g, yv);
    weft_var_t *in[3] = {z, x, y};
    weft_tensor_t *vals[3] = {zv, xv, yv}, *r = NULL;
    weft_var_t *copy = build_gemx(f->g, false, false, z, 2.0, x, y, 0.5);
    assert_int_equal(ck_eval(f->g, 3, in, vals, copy, &r), WEFT_OK);
    ck_expect(r, 2, s22, (double[]){14.5, -1.5, 32.5, -1.5}, 0);
    ck_expect(zv, 2, s22, (double[]){1, 1, 1, 1}, 0);
    assert_false(weft_tensor_shares_buffer(r, zv));
    weft_tensor_release(r);
    const weft_op_alias_t *dm = NULL;
    size_t n = 0;
    weft_op_destroy_map(weft_apply_op(weft_var_owner(copy)), &dm, &n);
    assert_int_equal(n, 0);
    weft_var_t *inp = build_gemx(f->g, false, true, z, 2.0, x, y, 0.5);
    weft_op_destroy_map(weft_apply_op(weft_var_owner(inp)), &dm, &n);
    assert_int_equal(n, 1);
    assert_int_equal(dm[0].output, 0);
    assert_int_equal(dm[0].input, 0);
    assert_int_equal(ck_eval(f->g, 3, in, vals, inp, &r), WEFT_OK);
    assert_true(weft_tensor_shares_buffer(r, zv));
    ck_expect(zv, 2, s22, (double[]){14.5, -1.5, 32.5, -1.5}, 0);
    weft_tensor_release(r);
    weft_tensor_t *ts[] = {zv, xv, yv};
    for (size_t i = 0; i < 3; i++) {
        weft_tensor_release(ts[i]);
    }
}

/* The copying Gemm broadcasts a z row (1,n), column (m,1) or 1x1 over the
 * product (a bias); the in-place Gemm refuses one (it would write into z). */
static void test_linalg_gemm_broadcasts_bias_row_column(void **state)
{
    fx_t *f = *state;
    int64_t s22[2] = {2, 2};
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT64, 2, s23, (double[]){1, 2, 3, 4, 5, 6});
    weft_tensor_t *yv = ck_tensor(WEFT_FLOAT64, 2, s32, (double[]){1, 0, 0, 1, 2, -1});
    weft_tensor_t *zs[3] = {ck_tensor(WEFT_FLOAT64, 2, (int64_t[]){1, 2}, (double[]){10, 20}),
                            ck_tensor(WEFT_FLOAT64, 2, (int64_t[]){2, 1}, (double[]){10, 20}),
                            ck_tensor(WEFT_FLOAT64, 2, (int64_t[]){1, 1}, (double[]){4})};
    /* 2*x@y = [[14,-2],[32,-2]], plus 0.5*z broadcast */
    const double want[3][4] = {{19, 8, 37, 8}, {19, 3, 42, 8}, {16, 0, 34, 0}};
    weft_var_t *x = var_like(f->g, xv), *y = var_like(f->g, yv);
    for (int k = 0; k < 3; k++) {
        weft_var_t *z = var_like(f->g, zs[k]), *in[3] = {z, x, y};
        weft_var_t *o = build_gemx(f->g, false, false, z, 2.0, x, y, 0.5);
        assert_int_equal(weft_type_dim(weft_var_type(o), 0), 2);
        assert_int_equal(weft_type_dim(weft_var_type(o), 1), 2);
        weft_tensor_t *vals[3] = {zs[k], xv, yv}, *r = NULL;
        assert_int_equal(ck_eval(f->g, 3, in, vals, o, &r), WEFT_OK);
        ck_expect(r, 2, s22, want[k], 0);
        weft_tensor_release(r);
        weft_var_t *ca = NULL, *out = (weft_var_t *)1;
        assert_non_null(ca = weft_constant_scalar(f->g, WEFT_FLOAT64, 1.0));
        assert_null(out = weft_gemm(f->g, z, ca, x, y, ca, true));
        assert_int_equal(weft_graph_error(f->g), WEFT_ETYPE);
        weft_graph_clear_error(f->g);
        assert_null(out);
        assert_non_null(strstr(weft_graph_last_error(f->g), "Gemm: input 0 dim"));
    }
    /* a row of 3 does not broadcast over 2 columns */
    weft_var_t *z3 = ck_var(f->g, WEFT_FLOAT64, 2, (int64_t[]){1, 3}), *ca = NULL, *out = NULL;
    assert_non_null(ca = weft_constant_scalar(f->g, WEFT_FLOAT64, 1.0));
    assert_null(out = weft_gemm(f->g, z3, ca, x, y, ca, false));
    assert_int_equal(weft_graph_error(f->g), WEFT_ETYPE);
    assert_non_null(strstr(weft_graph_error_message(f->g), "input 0 dim 1 has length 3"));
    weft_graph_clear_error(f->g);
    /* z of unknown rows: one row at run time broadcasts, three rows fail */
    weft_var_t *zu = ck_var(f->g, WEFT_FLOAT64, 2, (int64_t[]){WEFT_DIM_UNKNOWN, 2}), *in[3] = {zu, x, y};
    weft_var_t *o = build_gemx(f->g, false, false, zu, 2.0, x, y, 0.5);
    weft_tensor_t *vals[3] = {zs[0], xv, yv}, *r = NULL;
    assert_int_equal(ck_eval(f->g, 3, in, vals, o, &r), WEFT_OK);
    ck_expect(r, 2, s22, want[0], 0);
    weft_tensor_release(r);
    weft_tensor_t *z32 = ck_tensor(WEFT_FLOAT64, 2, s32, NULL);
    vals[0] = z32;
    assert_int_equal(ck_eval(f->g, 3, in, vals, o, &r), WEFT_ESHAPE);
    weft_tensor_t *ts[] = {xv, yv, zs[0], zs[1], zs[2], z32};
    for (size_t i = 0; i < 6; i++) {
        weft_tensor_release(ts[i]);
    }
}

static void test_linalg_gemm_inplace_variant_hook(void **state)
{
    fx_t *f = *state;
    int64_t s22[2] = {2, 2};
    weft_var_t *z = ck_var(f->g, WEFT_FLOAT64, 2, s22), *x = ck_var(f->g, WEFT_FLOAT64, 2, s22);
    weft_var_t *out = build_gemx(f->g, false, false, z, 1.0, x, x, 1.0);
    const weft_op_t *op = weft_apply_op(weft_var_owner(out)), *ip = NULL;
    const weft_op_class_t *cls = weft_op_class(op);
    assert_int_equal(cls->inplace_variant(f->g, op, 0, &ip), WEFT_OK);
    assert_true(weft_op_is_destructive(ip));
    assert_false(weft_op_is_destructive(op));
    assert_int_equal(cls->inplace_variant(f->g, op, 2, &ip), WEFT_ENOTIMPL);
    assert_int_equal(cls->inplace_variant(f->g, ip, 0, &ip), WEFT_ENOTIMPL);
    weft_var_t *yv = ck_var(f->g, WEFT_FLOAT64, 1, (int64_t[]){2});
    weft_var_t *gv = build_gemx(f->g, true, false, yv, 1.0, x, yv, 1.0);
    const weft_op_t *gop = weft_apply_op(weft_var_owner(gv)), *gip = NULL;
    assert_int_equal(weft_op_class(gop)->inplace_variant(f->g, gop, 0, &gip), WEFT_OK);
    assert_true(weft_op_is_destructive(gip));
}

/* b == 0 ignores z (NaN does not propagate); a transposed in-place z is
 * written through its strides; x aliasing z in place is read before written. */
static void test_linalg_gemm_beta0_transposed_z_and_aliasing(void **state)
{
    fx_t *f = *state;
    int64_t s22[2] = {2, 2};
    weft_tensor_t *zn = ck_tensor(WEFT_FLOAT64, 2, s22, (double[]){NAN, NAN, NAN, NAN});
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT64, 2, s22, (double[]){1, 2, 3, 4});
    weft_var_t *z = var_like(f->g, zn), *x = var_like(f->g, xv);
    weft_var_t *in[2] = {z, x};
    weft_tensor_t *vals[2] = {zn, xv}, *r = NULL;
    weft_var_t *o1 = build_gemx(f->g, false, false, z, 1.0, x, x, 0.0);
    assert_int_equal(ck_eval(f->g, 2, in, vals, o1, &r), WEFT_OK);
    ck_expect(r, 2, s22, (double[]){7, 10, 15, 22}, 0);
    weft_tensor_release(r);
    double zb[4] = {1, 2, 3, 4};
    weft_tensor_t *zt = NULL;
    assert_int_equal(weft_tensor_from_data(WEFT_FLOAT64, 2, s22, (int64_t[]){1, 2}, zb, &zt),
                     WEFT_OK); /* z = [[1,3],[2,4]] */
    weft_var_t *o2 = build_gemx(f->g, false, true, z, 1.0, x, x, 1.0);
    vals[0] = zt;
    assert_int_equal(ck_eval(f->g, 2, in, vals, o2, &r), WEFT_OK);
    ck_expect(r, 2, s22, (double[]){8, 13, 17, 26}, 0);
    /* a transposed z is not written: a fresh output keeps mode none's C
     * layout (linalg_gemm.c gemx_output) */
    ck_expect(zt, 2, s22, (double[]){1, 3, 2, 4}, 0);
    weft_tensor_release(r);
    /* z and x are the same tensor: the in-place node must copy x first. */
    weft_var_t *o3 = build_gemx(f->g, false, true, z, 1.0, x, x, 1.0);
    vals[0] = xv;
    vals[1] = xv;
    assert_int_equal(ck_eval(f->g, 2, in, vals, o3, &r), WEFT_OK);
    ck_expect(xv, 2, s22, (double[]){8, 12, 18, 26}, 0);
    weft_tensor_release(r);
    weft_tensor_release(zn);
    weft_tensor_release(zt);
    weft_tensor_release(xv);
}

static void test_linalg_gemv_copy_and_inplace_reversed_y(void **state)
{
    fx_t *f = *state;
    weft_tensor_t *Av = ck_tensor(WEFT_FLOAT64, 2, s23, (double[]){1, 2, 3, 4, 5, 6});
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT64, 1, s3, (double[]){1, -1, 2});
    double yb[2] = {20, 10};
    weft_tensor_t *yv = NULL;
    assert_int_equal(weft_tensor_from_data(WEFT_FLOAT64, 1, (int64_t[]){2}, (int64_t[]){-1},
                                           yb + 1, &yv), WEFT_OK); /* y = [10, 20] */
    weft_var_t *y = var_like(f->g, yv), *A = var_like(f->g, Av), *x = var_like(f->g, xv);
    weft_var_t *in[3] = {y, A, x};
    weft_tensor_t *vals[3] = {yv, Av, xv}, *r = NULL;
    weft_var_t *o1 = build_gemx(f->g, true, false, y, 2.0, A, x, 1.0);
    assert_int_equal(ck_eval(f->g, 3, in, vals, o1, &r), WEFT_OK);
    ck_expect(r, 1, (int64_t[]){2}, (double[]){20, 42}, 0);
    weft_tensor_release(r);
    weft_var_t *o2 = build_gemx(f->g, true, true, y, 2.0, A, x, 1.0);
    assert_int_equal(ck_eval(f->g, 3, in, vals, o2, &r), WEFT_OK);
    ck_expect(r, 1, (int64_t[]){2}, (double[]){20, 42}, 0);
    assert_true(yb[1] == 10 && yb[0] == 20); /* a reversed y is not written (gemx_output) */
    weft_tensor_release(r);
    weft_tensor_release(Av);
    weft_tensor_release(xv);
    weft_tensor_release(yv);
}

/* a == 0 keeps NumPy's b*z + 0*(x@y): an Inf or NaN in the product gives
 * NaN (BLAS alone would skip the product). 90x90 is larger than the kernel's
 * stack block, so the blocks' offsets are checked too; transposed operands,
 * b == 0 and a reversed Gemv y as well. */
static void test_linalg_gemm_gemv_zero_a_keeps_nan_of_product(void **state)
{
    fx_t *f = *state;
    enum { N = 90 };
    int64_t sn[2] = {N, N};
    static double xb[N * N], zb[N * N], want[N * N];
    for (int i = 0; i < N * N; i++) {
        xb[i] = 1.0;
        zb[i] = (double)(i % 7) - 3.0;
    }
    xb[70 * N + 5] = INFINITY; /* product column 5, and row 70 (x@x) or 5 (x^T@x) */
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT64, 2, sn, xb), *zv = ck_tensor(WEFT_FLOAT64, 2, sn, zb);
    weft_var_t *z = var_like(f->g, zv), *x = var_like(f->g, xv), *in[2] = {z, x};
    weft_var_t *xt = weft_transpose(f->g, x);
    weft_var_t *o[3] = {build_gemx(f->g, false, false, z, 0.0, x, x, 2.0),
                        build_gemx(f->g, false, false, z, 0.0, xt, x, 2.0),
                        build_gemx(f->g, false, false, z, 0.0, x, x, 0.0)};
    for (int c = 0; c < 3; c++) {
        for (int i = 0; i < N * N; i++) {
            bool hit = i % N == 5 || i / N == (c == 1 ? 5 : 70);
            want[i] = hit ? NAN : c == 2 ? 0.0 : 2.0 * zb[i];
        }
        weft_tensor_t *vals[2] = {zv, xv}, *r = NULL;
        assert_int_equal(ck_eval(f->g, 2, in, vals, o[c], &r), WEFT_OK);
        ck_expect(r, 2, sn, want, 0);
        weft_tensor_release(r);
    }
    double yb[2] = {20, 10};
    weft_tensor_t *yv = NULL, *Av = ck_tensor(WEFT_FLOAT64, 2, s23, (double[]){1, 2, 3, 4, 5, 6});
    weft_tensor_t *vv = ck_tensor(WEFT_FLOAT64, 1, s3, (double[]){NAN, 0, 0});
    assert_int_equal(weft_tensor_from_data(WEFT_FLOAT64, 1, (int64_t[]){2}, (int64_t[]){-1},
                                           yb + 1, &yv), WEFT_OK); /* y = [10, 20] */
    weft_tensor_t *w3 = ck_tensor(WEFT_FLOAT64, 1, s3, (double[]){1, 1, -1});
    weft_var_t *y = var_like(f->g, yv), *A = var_like(f->g, Av), *v = var_like(f->g, vv);
    weft_var_t *gin[3] = {y, A, v};
    weft_tensor_t *gvals[3] = {yv, Av, vv}, *r = NULL;
    weft_var_t *gv = build_gemx(f->g, true, false, y, 0.0, A, v, 1.0);
    assert_int_equal(ck_eval(f->g, 3, gin, gvals, gv, &r), WEFT_OK);
    ck_expect(r, 1, (int64_t[]){2}, (double[]){NAN, NAN}, 0);
    weft_tensor_release(r);
    gvals[2] = w3; /* a finite product: 0*p adds nothing */
    assert_int_equal(ck_eval(f->g, 3, gin, gvals, gv, &r), WEFT_OK);
    ck_expect(r, 1, (int64_t[]){2}, (double[]){10, 20}, 0);
    weft_tensor_release(r);
    weft_tensor_t *ts[] = {xv, zv, yv, Av, vv, w3};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) {
        weft_tensor_release(ts[i]);
    }
}

/* Product blocks depend on the shape alone: an RNN step's products (2^21
 * multiply-adds: 32x256 @ 256x256, and the weight gradient's 256x32 @
 * 32x256) are one BLAS call, whose blocks would each repack an operand;
 * from 2^22 multiply-adds C is cut into panels at least 128 long and at
 * least half as long as C's other side, or as long when C is near-square
 * (capped at 512): a 256-tile product is one call. */
static void test_linalg_small_products_are_one_blas_call(void **state)
{
    (void)state;
    assert_int_equal(weft__gemm_split_block(32, 256, 256), 0);
    assert_int_equal(weft__gemm_split_block(256, 256, 32), 0);
    assert_int_equal(weft__gemm_split_block(103, 169, 66), 0);
    assert_int_equal(weft__gemm_split_block(2047, 2048, 1), 0);   /* 2^22 - 2048 */
    assert_int_equal(weft__gemm_split_block(64, 256, 256), 128);  /* 2^22: columns */
    assert_int_equal(weft__gemm_split_block(1000, 300, 200), 160); /* rows, >= 300/2 */
    assert_int_equal(weft__gemm_split_block(256, 256, 256), 0);    /* a Cholesky tile */
    assert_int_equal(weft__gemm_split_block(512, 512, 512), 0);
    assert_int_equal(weft__gemm_split_block(384, 256, 256), 256);  /* near-square: >= 256 */
    assert_int_equal(weft__gemm_split_block(2048, 512, 64), 256);  /* long: 8 blocks */
    assert_int_equal(weft__gemm_split_block(2048, 1024, 64), 512); /* capped: 4 blocks */
    assert_int_equal(weft__gemm_split_block(128, 100, 1000), 0);   /* one block covers C */
}

/* An empty tensor: NULL data (weft_tensor_from_data allows it), or a view
 * over a NaN buffer that no element of the empty shape may read. */
static weft_tensor_t *empty(int nd, const int64_t *shape, double *nan_behind)
{
    weft_tensor_t *t = NULL;
    const int64_t ones[3] = {1, 1, 1};
    assert_int_equal(weft_tensor_from_data(WEFT_FLOAT64, nd, shape, nan_behind ? ones : NULL,
                                           nan_behind, &t), WEFT_OK);
    return t;
}

/* gemm(z, a, x(2,0), y(0,3), b) is b*z (zeros for b == 0, which ignores z);
 * gemv with n == 0 is b*y; m == 0 gives empty outputs: OpenBLAS is never
 * handed the empty operands (NULL data crashed it; a phantom column read the
 * NaN behind a view). */
static void test_linalg_gemm_gemv_empty_lengths_never_read_operands(void **state)
{
    fx_t *f = *state;
    double nan[8] = {NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN};
    int64_t s20[2] = {2, 0}, s03[2] = {0, 3}, s0[1] = {0};
    weft_tensor_t *zv = ck_tensor(WEFT_FLOAT64, 2, s23, (double[]){1, 2, 3, 4, 5, 6});
    weft_tensor_t *zn = ck_tensor(WEFT_FLOAT64, 2, s23, (double[]){NAN, 1, 2, 3, 4, 5});
    weft_tensor_t *xs[2] = {empty(2, s20, NULL), empty(2, s20, nan)};
    weft_tensor_t *ys[2] = {empty(2, s03, NULL), empty(2, s03, nan)};
    weft_var_t *z = var_like(f->g, zv), *x = var_like(f->g, xs[0]), *y = var_like(f->g, ys[0]);
    weft_var_t *in[3] = {z, x, y};
    weft_var_t *o[3] = {build_gemx(f->g, false, false, z, 2.0, x, y, 3.0),
                        build_gemx(f->g, false, true, z, 2.0, x, y, 0.5),
                        build_gemx(f->g, false, false, z, 2.0, x, y, 0.0)};
    for (int k = 0; k < 2; k++) {
        weft_tensor_t *vals[3] = {zv, xs[k], ys[k]}, *r = NULL;
        assert_int_equal(ck_eval(f->g, 3, in, vals, o[0], &r), WEFT_OK);
        ck_expect(r, 2, s23, (double[]){3, 6, 9, 12, 15, 18}, 0);
        weft_tensor_release(r);
        vals[0] = zn; /* b == 0 ignores z, NaN included */
        assert_int_equal(ck_eval(f->g, 3, in, vals, o[2], &r), WEFT_OK);
        ck_expect(r, 2, s23, (double[]){0, 0, 0, 0, 0, 0}, 0);
        weft_tensor_release(r);
    }
    weft_tensor_t *vals[3] = {zv, xs[1], ys[0]}, *r = NULL;
    assert_int_equal(ck_eval(f->g, 3, in, vals, o[1], &r), WEFT_OK); /* in place: z *= 0.5 */
    ck_expect(zv, 2, s23, (double[]){0.5, 1, 1.5, 2, 2.5, 3}, 0);
    weft_tensor_release(r);
    /* gemv: A (2,0) and x (0,) empty; m == 0: A (0,3), y (0,) */
    weft_tensor_t *yv = ck_tensor(WEFT_FLOAT64, 1, (int64_t[]){2}, (double[]){1, -2});
    weft_tensor_t *xe = empty(1, s0, NULL), *A03 = empty(2, s03, NULL), *x3 = NULL;
    x3 = ck_tensor(WEFT_FLOAT64, 1, s3, (double[]){1, 2, 3});
    weft_var_t *gy = var_like(f->g, yv), *gA = ck_var(f->g, WEFT_FLOAT64, 2, (int64_t[]){-1, -1});
    weft_var_t *gx = ck_var(f->g, WEFT_FLOAT64, 1, (int64_t[]){-1}), *gin[3] = {gy, gA, gx};
    weft_var_t *gv = build_gemx(f->g, true, false, gy, 2.0, gA, gx, -1.5);
    weft_tensor_t *gvals[3] = {yv, xs[1], xe};
    assert_int_equal(ck_eval(f->g, 3, gin, gvals, gv, &r), WEFT_OK);
    ck_expect(r, 1, (int64_t[]){2}, (double[]){-1.5, 3}, 0);
    weft_tensor_release(r);
    weft_var_t *ey = ck_var(f->g, WEFT_FLOAT64, 1, (int64_t[]){-1}), *ein[3] = {ey, gA, gx};
    weft_var_t *ev = build_gemx(f->g, true, false, ey, 2.0, gA, gx, 1.0);
    weft_tensor_t *evals[3] = {xe, A03, x3};
    assert_int_equal(ck_eval(f->g, 3, ein, evals, ev, &r), WEFT_OK);
    ck_expect(r, 1, s0, NULL, 0);
    weft_tensor_release(r);
    weft_tensor_t *ts[] = {zv, zn, xs[0], xs[1], ys[0], ys[1], yv, xe, A03, x3};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) {
        weft_tensor_release(ts[i]);
    }
}

/* Dot of empty operands with NULL data: zeros for an empty inner length,
 * empty results for an empty outer one (batched too). */
static void test_linalg_dot_of_null_data_empty_operands(void **state)
{
    fx_t *f = *state;
    int64_t s20[2] = {2, 0}, s03[2] = {0, 3}, s02[2] = {0, 2}, s0[1] = {0};
    weft_tensor_t *a = empty(2, s20, NULL), *b = empty(2, s03, NULL), *e = empty(1, s0, NULL);
    weft_tensor_t *c = empty(2, s02, NULL), *d = ck_tensor(WEFT_FLOAT64, 2, s23, NULL);
    weft_tensor_t *b3 = empty(3, (int64_t[]){2, 0, 3}, NULL);
    weft_tensor_t *y3 = ck_tensor(WEFT_FLOAT64, 3, (int64_t[]){2, 3, 4}, NULL);
    weft_tensor_t *r[5] = {run_dot(f->g, a, b), run_dot(f->g, c, d), run_dot(f->g, a, e),
                           run_dot(f->g, e, e), run_dot(f->g, b3, y3)};
    ck_expect(r[0], 2, s23, (double[]){0, 0, 0, 0, 0, 0}, 0);
    ck_expect(r[1], 2, s03, NULL, 0);
    ck_expect(r[2], 1, (int64_t[]){2}, (double[]){0, 0}, 0);
    ck_expect(r[3], 0, NULL, (double[]){0}, 0);
    ck_expect(r[4], 3, (int64_t[]){2, 0, 4}, NULL, 0);
    weft_tensor_t *ts[] = {a, b, e, c, d, b3, y3, r[0], r[1], r[2], r[3], r[4]};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) {
        weft_tensor_release(ts[i]);
    }
}

static void test_linalg_cholesky_exact_and_float32(void **state)
{
    fx_t *f = *state;
    int64_t s33[2] = {3, 3};
    /* A = L L^T with L = [[2,0,0],[1,3,0],[-1,2,1]]; the upper triangle is junk (never read). */
    double a[9] = {4, 99, 99, 2, 10, 99, -2, 5, 6};
    double l[9] = {2, 0, 0, 1, 3, 0, -1, 2, 1};
    for (int dt = WEFT_FLOAT32; dt <= WEFT_FLOAT64; dt++) {
        weft_tensor_t *av = ck_tensor((weft_dtype_t)dt, 2, s33, a), *r = NULL;
        weft_var_t *x = var_like(f->g, av), *c = NULL;
        assert_non_null(c = weft_cholesky(f->g, x));
        assert_int_equal(ck_eval(f->g, 1, &x, &av, c, &r), WEFT_OK);
        ck_expect(r, 2, s33, l, dt == WEFT_FLOAT32 ? 1e-6 : 1e-15);
        weft_tensor_release(r);
        weft_tensor_release(av);
    }
}

static void test_linalg_cholesky_not_positive_definite_names_node(void **state)
{
    fx_t *f = *state;
    int64_t s22[2] = {2, 2};
    weft_tensor_t *av = ck_tensor(WEFT_FLOAT64, 2, s22, (double[]){1, 0, 2, 1}), *r = NULL;
    weft_var_t *x = var_like(f->g, av), *c = NULL;
    assert_non_null(c = weft_cholesky(f->g, x));
    assert_int_equal(weft_eval(f->g, 1, &x, &av, 1, &c, &r), WEFT_ERANGE);
    assert_null(r);
    const char *msg = weft_graph_last_error(f->g);
    assert_non_null(strstr(msg, "not positive definite"));
    assert_non_null(strstr(msg, "order 2"));
    assert_non_null(strstr(msg, "Cholesky"));
    assert_non_null(strstr(msg, "test_linalg.c"));
    weft_tensor_release(av);
}

/* Naive solve of op(A) X = B (left) or X op(A) = B (right), reading only the
 * flagged triangle of A. */
static void naive_trsm(unsigned fl, int n, int k, const double *a, const double *b, double *x)
{
    double m[16];
    for (int i = 0; i < n; i++) { /* m = op(A) as read */
        for (int j = 0; j < n; j++) {
            int r = (fl & WEFT_TRSM_TRANS) ? j : i, c = (fl & WEFT_TRSM_TRANS) ? i : j;
            bool in_tri = (fl & WEFT_TRSM_UPPER) ? c >= r : c <= r;
            double v = in_tri ? a[r * n + c] : 0.0;
            m[i * n + j] = (r == c && (fl & WEFT_TRSM_UNIT)) ? 1.0 : v;
        }
    }
    bool right = fl & WEFT_TRSM_RIGHT;
    int rows = right ? k : n; /* X is rows x cols */
    int cols = right ? n : k;
    /* Gaussian elimination on m (small, well conditioned), solving per column/row. */
    for (int q = 0; q < (right ? rows : cols); q++) {
        double rhs[4], sol[4], mm[16];
        memcpy(mm, m, sizeof mm);
        for (int i = 0; i < n; i++) {
            rhs[i] = right ? b[q * n + i] : b[i * k + q];
        }
        if (right) { /* x op(A) = b  <=>  op(A)^T x^T = b^T */
            for (int i = 0; i < n; i++) {
                for (int j = 0; j < n; j++) {
                    mm[i * n + j] = m[j * n + i];
                }
            }
        }
        for (int p = 0; p < n; p++) {
            for (int i = p + 1; i < n; i++) {
                double fct = mm[i * n + p] / mm[p * n + p];
                for (int j = p; j < n; j++) {
                    mm[i * n + j] -= fct * mm[p * n + j];
                }
                rhs[i] -= fct * rhs[p];
            }
        }
        for (int i = n - 1; i >= 0; i--) {
            double s = rhs[i];
            for (int j = i + 1; j < n; j++) {
                s -= mm[i * n + j] * sol[j];
            }
            sol[i] = s / mm[i * n + i];
        }
        for (int i = 0; i < n; i++) {
            if (right) {
                x[q * n + i] = sol[i];
            } else {
                x[i * k + q] = sol[i];
            }
        }
    }
    (void)cols;
}

static void test_linalg_trsm_every_flag_combination(void **state)
{
    fx_t *f = *state;
    int64_t s33[2] = {3, 3}, s32b[2] = {3, 2}, s23b[2] = {2, 3};
    double a[9] = {2, 0.5, -1, 1, 3, 0.25, -1, 2, 4};
    double b[6] = {1, 2, 3, 4, 5, 6};
    weft_tensor_t *av = ck_tensor(WEFT_FLOAT64, 2, s33, a);
    for (unsigned fl = 0; fl < 16; fl++) {
        bool right = fl & WEFT_TRSM_RIGHT;
        weft_tensor_t *bv = ck_tensor(WEFT_FLOAT64, 2, right ? s23b : s32b, b), *r = NULL;
        weft_var_t *in[2] = {var_like(f->g, av), var_like(f->g, bv)}, *x = NULL;
        weft_tensor_t *vals[2] = {av, bv};
        assert_non_null(x = weft_trsm(f->g, in[0], in[1], fl));
        assert_int_equal(ck_eval(f->g, 2, in, vals, x, &r), WEFT_OK);
        double want[6];
        naive_trsm(fl, 3, 2, a, b, want);
        ck_expect(r, 2, right ? s23b : s32b, want, 1e-12);
        weft_tensor_release(r);
        weft_tensor_release(bv);
    }
    /* A transposed view of a: flags are flipped internally, no copy. */
    weft_tensor_t *at = NULL, *bv = ck_tensor(WEFT_FLOAT64, 2, s32b, b), *r = NULL;
    assert_int_equal(weft_tensor_from_data(WEFT_FLOAT64, 2, s33, (int64_t[]){1, 3}, a, &at),
                     WEFT_OK);
    weft_var_t *in[2] = {var_like(f->g, at), var_like(f->g, bv)}, *x = NULL;
    weft_tensor_t *vals[2] = {at, bv};
    assert_non_null(x = weft_trsm(f->g, in[0], in[1], WEFT_TRSM_UPPER));
    assert_int_equal(ck_eval(f->g, 2, in, vals, x, &r), WEFT_OK);
    double want[6];
    naive_trsm(WEFT_TRSM_TRANS, 3, 2, a, b, want); /* upper of a^T == (lower of a)^T */
    ck_expect(r, 2, s32b, want, 1e-12);
    weft_tensor_t *ts[] = {av, at, bv, r};
    for (size_t i = 0; i < 4; i++) {
        weft_tensor_release(ts[i]);
    }
}

static void test_linalg_trsm_vector_rhs(void **state)
{
    fx_t *f = *state;
    int64_t s22[2] = {2, 2};
    weft_tensor_t *av = ck_tensor(WEFT_FLOAT64, 2, s22, (double[]){2, 0, 1, 4});
    weft_tensor_t *bv = ck_tensor(WEFT_FLOAT64, 1, (int64_t[]){2}, (double[]){4, 10}), *r = NULL;
    weft_var_t *in[2] = {var_like(f->g, av), var_like(f->g, bv)}, *x = NULL;
    weft_tensor_t *vals[2] = {av, bv};
    assert_non_null(x = weft_trsm(f->g, in[0], in[1], 0));
    assert_int_equal(ck_eval(f->g, 2, in, vals, x, &r), WEFT_OK);
    ck_expect(r, 1, (int64_t[]){2}, (double[]){2, 2}, 0);
    weft_tensor_release(r);
    weft_tensor_release(av);
    weft_tensor_release(bv);
}

static void test_linalg_syrk_both_orientations(void **state)
{
    fx_t *f = *state;
    weft_tensor_t *av = ck_tensor(WEFT_FLOAT64, 2, s23, (double[]){1, 2, 3, 4, 5, 6}), *r = NULL;
    weft_var_t *a = var_like(f->g, av), *c1 = NULL, *c2 = NULL;
    assert_non_null(c1 = weft_syrk(f->g, a, false, 2.0));
    assert_non_null(c2 = weft_syrk(f->g, a, true, 1.0));
    assert_int_equal(ck_eval(f->g, 1, &a, &av, c1, &r), WEFT_OK);
    ck_expect(r, 2, (int64_t[]){2, 2}, (double[]){28, 64, 64, 154}, 0);
    weft_tensor_release(r);
    assert_int_equal(ck_eval(f->g, 1, &a, &av, c2, &r), WEFT_OK);
    ck_expect(r, 2, (int64_t[]){3, 3}, (double[]){17, 22, 27, 22, 29, 36, 27, 36, 45}, 0);
    weft_tensor_release(r);
    weft_tensor_release(av);
}

/* Random gemm / dot against a naive triple loop, operands randomly
 * transposed views, float32 and float64. */
static void test_linalg_random_gemm_matches_naive_loop(void **state)
{
    fx_t *f = *state;
    uint64_t rs = ck_seed("test_linalg_random_gemm_matches_naive_loop");
    for (int iter = 0; iter < 60; iter++) {
        weft_dtype_t dt = (ck_rand(&rs) & 1) ? WEFT_FLOAT64 : WEFT_FLOAT32;
        int64_t m = 1 + (int64_t)(ck_rand(&rs) % 9), k = 1 + (int64_t)(ck_rand(&rs) % 9);
        int64_t n = 1 + (int64_t)(ck_rand(&rs) % 9);
        bool tx = ck_rand(&rs) & 1, ty = ck_rand(&rs) & 1;
        weft_tensor_t *xb = ck_random(dt, 2, tx ? (int64_t[]){k, m} : (int64_t[]){m, k}, -1, 1,
                                      ck_rand(&rs));
        weft_tensor_t *yb = ck_random(dt, 2, ty ? (int64_t[]){n, k} : (int64_t[]){k, n}, -1, 1,
                                      ck_rand(&rs));
        weft_tensor_t *zv = ck_random(dt, 2, (int64_t[]){m, n}, -1, 1, ck_rand(&rs));
        weft_tensor_t *xv = NULL, *yv = NULL, *r = NULL;
        assert_int_equal(weft_tensor_view(xb, 2, (int64_t[]){m, k},
                                          tx ? (int64_t[]){1, m} : (int64_t[]){k, 1}, 0, &xv),
                         WEFT_OK);
        assert_int_equal(weft_tensor_view(yb, 2, (int64_t[]){k, n},
                                          ty ? (int64_t[]){1, k} : (int64_t[]){n, 1}, 0, &yv),
                         WEFT_OK);
        weft_var_t *in[3] = {var_like(f->g, zv), var_like(f->g, xv), var_like(f->g, yv)};
        weft_tensor_t *vals[3] = {zv, xv, yv};
        weft_var_t *o = build_gemx(f->g, false, false, in[0], 1.5, in[1], in[2], -0.5);
        assert_int_equal(ck_eval(f->g, 3, in, vals, o, &r), WEFT_OK);
        double want[81];
        for (int64_t i = 0; i < m; i++) {
            for (int64_t j = 0; j < n; j++) {
                double s = 0, xe, ye, ze;
                for (int64_t p = 0; p < k; p++) {
                    weft_tensor_get(xv, (int64_t[]){i, p}, &xe);
                    weft_tensor_get(yv, (int64_t[]){p, j}, &ye);
                    s += xe * ye;
                }
                weft_tensor_get(zv, (int64_t[]){i, j}, &ze);
                want[i * n + j] = -0.5 * ze + 1.5 * s;
            }
        }
        ck_expect(r, 2, (int64_t[]){m, n}, want, dt == WEFT_FLOAT32 ? 1e-5 : 1e-13);
        weft_tensor_t *ts[] = {xb, yb, zv, xv, yv, r};
        for (size_t i = 0; i < 6; i++) {
            weft_tensor_release(ts[i]);
        }
    }
}

static void test_linalg_blas_threading_api(void **state)
{
    (void)state;
    int prev = 0;
    assert_int_equal(weft_blas_check(), WEFT_OK); /* the pthread build is linked */
    assert_int_equal(weft_blas_get_threads(WEFT_BLAS_KIND_LEVEL3), 1);
    assert_int_equal(weft_blas_set_threads(WEFT_BLAS_KIND_LEVEL3, 2, &prev), WEFT_OK);
    assert_int_equal(prev, 1);
    assert_int_equal(weft_blas_get_threads(WEFT_BLAS_KIND_LEVEL3), 2);
    assert_int_equal(weft_blas_set_threads(WEFT_BLAS_KIND_LEVEL3, 1, NULL), WEFT_OK);
    assert_int_equal(weft_blas_set_threads(WEFT_BLAS_KIND_LAPACK, 0, NULL), WEFT_EINVAL);
    assert_int_equal(weft_blas_set_threads(WEFT_BLAS_KIND_LAPACK, 257, NULL), WEFT_EINVAL);
    assert_int_equal(weft_blas_set_threads((weft_blas_kind_t)7, 1, NULL), WEFT_EINVAL);
    assert_int_equal(weft_blas_get_threads((weft_blas_kind_t)7), 1);
    weft_blas_scope_t sc;
    assert_int_equal(weft_blas_scope_enter(NULL, 1), WEFT_EINVAL);
    assert_int_equal(weft_blas_scope_enter(&sc, 0), WEFT_EINVAL);
    assert_int_equal(weft_blas_scope_enter(&sc, 1), WEFT_OK);
    assert_true(sc.active);
    weft_blas_scope_exit(&sc);
    assert_false(sc.active);
    weft_blas_scope_exit(&sc); /* inactive: no-op */
    weft_blas_scope_exit(NULL);
}

static void test_linalg_bad_arguments_are_rejected(void **state)
{
    fx_t *f = *state;
    weft_var_t *a = ck_var(f->g, WEFT_FLOAT64, 2, s23), *b = ck_var(f->g, WEFT_FLOAT64, 2, s23);
    weft_var_t *a32 = ck_var(f->g, WEFT_FLOAT32, 2, s32), *i = ck_var(f->g, WEFT_INT64, 2, s32);
    weft_var_t *t3 = ck_var(f->g, WEFT_FLOAT64, 3, (int64_t[]){2, 2, 2}), *out = (weft_var_t *)1;
    weft_var_t *s0 = NULL;
    assert_non_null(s0 = weft_constant_scalar(f->g, WEFT_FLOAT64, 1.0));
    assert_null(out = weft_dot(f->g, a, b));
    assert_int_equal(weft_graph_error(f->g), WEFT_ETYPE);
    weft_graph_clear_error(f->g);
    assert_null(out);
    assert_non_null(strstr(weft_graph_last_error(f->g), "length 3 but input 1 dim 0 has 2"));
    assert_null(out = weft_dot(f->g, a, a32));
    assert_int_equal(weft_graph_error(f->g), WEFT_ETYPE);
    assert_non_null(strstr(weft_graph_error_message(f->g), "float32"));
    weft_graph_clear_error(f->g);
    assert_null(out = weft_dot(f->g, i, a));
    assert_int_equal(weft_graph_error(f->g), WEFT_ETYPE);
    weft_graph_clear_error(f->g);
    assert_null(out = weft_dot(f->g, a, t3));
    assert_int_equal(weft_graph_error(f->g), WEFT_ETYPE);
    weft_graph_clear_error(f->g);
    assert_null(out = weft_dot(f->g, NULL, a));
    assert_int_equal(weft_graph_error(f->g), WEFT_EINVAL);
    weft_graph_clear_error(f->g);
    assert_null(out = weft_gemm(f->g, a, s0, a, b, s0, false));
    assert_int_equal(weft_graph_error(f->g), WEFT_ETYPE);
    weft_graph_clear_error(f->g);
    assert_null(out = weft_gemm(f->g, a, a, a, b, s0, false));
    assert_int_equal(weft_graph_error(f->g), WEFT_ETYPE);
    weft_graph_clear_error(f->g);
    assert_null(out = weft_gemv(f->g, a, s0, a, b, s0, false));
    assert_int_equal(weft_graph_error(f->g), WEFT_ETYPE);
    weft_graph_clear_error(f->g);
    assert_null(out = weft_cholesky(f->g, a));
    assert_int_equal(weft_graph_error(f->g), WEFT_ETYPE);
    assert_non_null(strstr(weft_graph_error_message(f->g), "Cholesky"));
    weft_graph_clear_error(f->g);
    assert_null(out = weft_trsm(f->g, a, b, 0));
    assert_int_equal(weft_graph_error(f->g), WEFT_ETYPE);
    weft_graph_clear_error(f->g);
    assert_null(out = weft_trsm(f->g, a, b, 16));
    assert_int_equal(weft_graph_error(f->g), WEFT_EINVAL);
    weft_graph_clear_error(f->g);
    weft_var_t *sq = ck_var(f->g, WEFT_FLOAT64, 2, (int64_t[]){3, 3});
    weft_var_t *v = ck_var(f->g, WEFT_FLOAT64, 1, (int64_t[]){3});
    assert_null(out = weft_trsm(f->g, sq, v, WEFT_TRSM_RIGHT));
    assert_int_equal(weft_graph_error(f->g), WEFT_EINVAL);
    weft_graph_clear_error(f->g);
    assert_null(out = weft_syrk(f->g, v, false, 1.0));
    assert_int_equal(weft_graph_error(f->g), WEFT_ETYPE);
    weft_graph_clear_error(f->g);
    weft_graph_t *g2 = NULL;
    assert_int_equal(weft_graph_create(NULL, &g2), WEFT_OK);
    assert_null(out = weft_dot(g2, a, a));
    assert_int_equal(weft_graph_error(g2), WEFT_EFOREIGN);
    weft_graph_clear_error(g2);
    weft_graph_destroy(g2);
    /* Unknown static lengths: the mismatch is found at run time. */
    weft_var_t *u = ck_var(f->g, WEFT_FLOAT64, 2, (int64_t[]){WEFT_DIM_UNKNOWN, 4}), *d = NULL;
    weft_var_t *w = ck_var(f->g, WEFT_FLOAT64, 2, (int64_t[]){WEFT_DIM_UNKNOWN, 2});
    assert_non_null(d = weft_dot(f->g, u, w));
    weft_tensor_t *uv = ck_tensor(WEFT_FLOAT64, 2, (int64_t[]){2, 4}, NULL);
    weft_tensor_t *wv = ck_tensor(WEFT_FLOAT64, 2, (int64_t[]){3, 2}, NULL), *r = NULL;
    weft_var_t *in[2] = {u, w};
    weft_tensor_t *vals[2] = {uv, wv};
    assert_int_equal(weft_eval(f->g, 2, in, vals, 1, &d, &r), WEFT_ESHAPE);
    assert_non_null(strstr(weft_graph_last_error(f->g), "Dot"));
    weft_tensor_release(uv);
    weft_tensor_release(wv);
}

static void test_linalg_classes_are_registered(void **state)
{
    (void)state;
    const char *names[] = {"Dot", "Gemm", "Gemv", "Cholesky", "Trsm", "Syrk", "TriMask"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const weft_op_class_t *c = weft_ops_find_class(names[i]);
        assert_non_null(c);
        assert_string_equal(c->name, names[i]);
        assert_non_null(c->grad);
    }
    assert_non_null(weft_ops_find_class("Gemm")->inplace_variant);
}

/* ---- gradients through verify_grad ------------------------------------------- */

typedef enum lcase { L_DOT, L_GEMM, L_GEMV, L_CHOL, L_TRSM, L_SYRK } lcase_t;

typedef struct lfn {
    lcase_t kind;
    unsigned flags; /* trsm flags; syrk: trans */
} lfn_t;

/* Cholesky of the SPD matrix x x^T + n I, so any point is valid. */
static weft_var_t *chol_of_spd(weft_graph_t *g, weft_var_t *x)
{
    int64_t n = weft_type_dim(weft_var_type(x), 0);
    double id[16] = {0};
    for (int64_t i = 0; i < n; i++) {
        id[i * n + i] = (double)n;
    }
    weft_var_t *eye =
        weft_constant_create(g, weft_var_type(x), id, (size_t)(n * n) * sizeof(double));
    return weft_cholesky(g, weft_add(g, weft_syrk(g, x, false, 1.0), eye));
}

static weft_var_t *linalg_fn(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    const lfn_t *c = user;
    (void)n;
    switch (c->kind) {
    case L_DOT: return weft_dot(g, in[0], in[1]);
    case L_GEMM: return weft_gemm(g, in[0], in[1], in[2], in[3], in[4], false);
    case L_GEMV: return weft_gemv(g, in[0], in[1], in[2], in[3], in[4], false);
    case L_CHOL: return c->flags ? chol_of_spd(g, in[0]) : weft_cholesky(g, in[0]);
    case L_TRSM: return weft_trsm(g, in[0], in[1], c->flags);
    default: return weft_syrk(g, in[0], c->flags != 0, 0.5);
    }
}

static void verify_shapes(lfn_t c, size_t n, const int *nd, const int64_t (*shapes)[2],
                          weft_dtype_t dt, uint64_t seed)
{
    weft_tensor_t *pts[5];
    for (size_t i = 0; i < n; i++) {
        pts[i] = ck_random(dt, nd[i], shapes[i], 0.5, 1.5, seed + i);
    }
    ck_verify(linalg_fn, &c, n, pts);
    for (size_t i = 0; i < n; i++) {
        weft_tensor_release(pts[i]);
    }
}

static void test_linalg_dot_grads_verify(void **state)
{
    (void)state;
    const int64_t mm[2][2] = {{2, 3}, {3, 4}}, mv[2][2] = {{2, 3}, {3, 0}};
    const int64_t vm[2][2] = {{3, 0}, {3, 2}}, vv[2][2] = {{4, 0}, {4, 0}};
    const int64_t bt[2][2] = {{2, 2}, {2, 2}};
    lfn_t c = {L_DOT, 0};
    verify_shapes(c, 2, (int[]){2, 2}, mm, WEFT_FLOAT64, 1);
    verify_shapes(c, 2, (int[]){2, 1}, mv, WEFT_FLOAT64, 2);
    verify_shapes(c, 2, (int[]){1, 2}, vm, WEFT_FLOAT64, 3);
    verify_shapes(c, 2, (int[]){1, 1}, vv, WEFT_FLOAT64, 4);
    verify_shapes(c, 2, (int[]){2, 2}, mm, WEFT_FLOAT32, 5);
    /* batched: (2,2,2) @ (2,2,2) built from 3-D points */
    weft_tensor_t *pts[2] = {ck_random(WEFT_FLOAT64, 3, (int64_t[]){2, 2, 3}, -1, 1, 6),
                             ck_random(WEFT_FLOAT64, 3, (int64_t[]){2, 3, 2}, -1, 1, 7)};
    (void)bt;
    ck_verify(linalg_fn, &c, 2, pts);
    weft_tensor_release(pts[0]);
    weft_tensor_release(pts[1]);
}

static void test_linalg_gemm_gemv_grads_verify(void **state)
{
    (void)state;
    const int64_t gm[5][2] = {{2, 4}, {0, 0}, {2, 3}, {3, 4}, {0, 0}};
    const int64_t gv[5][2] = {{2, 0}, {0, 0}, {2, 3}, {3, 0}, {0, 0}};
    verify_shapes((lfn_t){L_GEMM, 0}, 5, (int[]){2, 0, 2, 2, 0}, gm, WEFT_FLOAT64, 10);
    /* broadcast z (bias row / column): its gradient sums over the broadcast axis */
    const int64_t grow[5][2] = {{1, 4}, {0, 0}, {2, 3}, {3, 4}, {0, 0}};
    const int64_t gcol[5][2] = {{2, 1}, {0, 0}, {2, 3}, {3, 4}, {0, 0}};
    verify_shapes((lfn_t){L_GEMM, 0}, 5, (int[]){2, 0, 2, 2, 0}, grow, WEFT_FLOAT64, 11);
    verify_shapes((lfn_t){L_GEMM, 0}, 5, (int[]){2, 0, 2, 2, 0}, gcol, WEFT_FLOAT64, 12);
    verify_shapes((lfn_t){L_GEMV, 0}, 5, (int[]){1, 0, 2, 1, 0}, gv, WEFT_FLOAT64, 20);
}

static void test_linalg_cholesky_grad_verify(void **state)
{
    (void)state;
    const int64_t s[1][2] = {{3, 3}};
    verify_shapes((lfn_t){L_CHOL, 1}, 1, (int[]){2}, s, WEFT_FLOAT64, 30);
    /* Directly on an SPD point: the upper triangle is not read, its gradient is 0. */
    weft_tensor_t *a = ck_tensor(WEFT_FLOAT64, 2, (int64_t[]){3, 3},
                                 (double[]){4, 0.3, -0.2, 2, 10, 0.1, -2, 5, 6});
    lfn_t c = {L_CHOL, 0};
    ck_verify(linalg_fn, &c, 1, &a);
    weft_tensor_release(a);
}

static void test_linalg_trsm_grads_verify(void **state)
{
    (void)state;
    const int64_t left[2][2] = {{3, 3}, {3, 2}}, right[2][2] = {{3, 3}, {2, 3}};
    const int64_t vec[2][2] = {{3, 3}, {3, 0}};
    for (unsigned fl = 0; fl < 16; fl++) {
        const int64_t(*sh)[2] = (fl & WEFT_TRSM_RIGHT) ? right : left;
        /* Diagonally dominant points keep the solves well conditioned. */
        weft_tensor_t *pts[2] = {ck_random(WEFT_FLOAT64, 2, sh[0], -0.3, 0.3, 40 + fl),
                                 ck_random(WEFT_FLOAT64, 2, sh[1], -1, 1, 60 + fl)};
        for (int i = 0; i < 3; i++) {
            weft_tensor_set(pts[0], (int64_t[]){i, i}, 2.0 + i);
        }
        lfn_t c = {L_TRSM, fl};
        ck_verify(linalg_fn, &c, 2, pts);
        weft_tensor_release(pts[0]);
        weft_tensor_release(pts[1]);
    }
    verify_shapes((lfn_t){L_TRSM, WEFT_TRSM_TRANS}, 2, (int[]){2, 1}, vec, WEFT_FLOAT64, 80);
}

static void test_linalg_syrk_grads_verify(void **state)
{
    (void)state;
    const int64_t s[1][2] = {{2, 3}};
    verify_shapes((lfn_t){L_SYRK, 0}, 1, (int[]){2}, s, WEFT_FLOAT64, 90);
    verify_shapes((lfn_t){L_SYRK, 1}, 1, (int[]){2}, s, WEFT_FLOAT64, 91);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_linalg_dot_all_rank_pairs_exact),
        T(test_linalg_dot_batched_and_float32),
        T(test_linalg_dot_views_transposed_strided_reversed),
        T(test_linalg_layout_uses_flags_not_copies),
        T(test_linalg_dot_length1_axes_odd_strides),
        T(test_linalg_dot_empty_inner_and_outer),
        T(test_linalg_gemm_copy_keeps_z_inplace_overwrites),
        T(test_linalg_gemm_broadcasts_bias_row_column),
        T(test_linalg_gemm_inplace_variant_hook),
        T(test_linalg_gemm_beta0_transposed_z_and_aliasing),
        T(test_linalg_gemv_copy_and_inplace_reversed_y),
        T(test_linalg_gemm_gemv_empty_lengths_never_read_operands),
    T(test_linalg_gemm_gemv_zero_a_keeps_nan_of_product),
        T(test_linalg_small_products_are_one_blas_call),
        T(test_linalg_dot_of_null_data_empty_operands),
        T(test_linalg_cholesky_exact_and_float32),
        T(test_linalg_cholesky_not_positive_definite_names_node),
        T(test_linalg_trsm_every_flag_combination),
        T(test_linalg_trsm_vector_rhs),
        T(test_linalg_syrk_both_orientations),
        T(test_linalg_random_gemm_matches_naive_loop),
        T(test_linalg_blas_threading_api),
        T(test_linalg_bad_arguments_are_rejected),
        T(test_linalg_classes_are_registered),
        T(test_linalg_dot_grads_verify),
        T(test_linalg_gemm_gemv_grads_verify),
        T(test_linalg_cholesky_grad_verify),
        T(test_linalg_trsm_grads_verify),
        T(test_linalg_syrk_grads_verify),
    };
#undef T
    return cmocka_run_group_tests_name("linalg", tests, NULL, NULL);
}
