/* Built-in rewrites one by one: the printed graph before and after, outputs
 * equal to the unrewritten graph's on random data, and the rewrite not
 * firing when excluded by name or by tag. Also merge, constant folding, the
 * inplace and update_inplace rewrites and the modes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ops_int.h"
#include "reduce/reduce_ops_int.h"
#include "rw_fixture.h"

#define TOL_R 1e-12
#define TOL_A 1e-12

/* Builds fg over in -> out, checks the printed form, rewrites with `rw`
 * (a built-in name applied alone) or, when rw is NULL, with mode "fast_run"
 * minus `exclude`, checks the printed form after and the values. */
static void check(rfx_t *f, size_t n_in, weft_var_t **in, weft_var_t *out, const char *rw,
                  const char *before, const char *after)
{
    weft_fgraph_t *fg = rfx_fgraph(f, n_in, in, 1, &out, false);
    char buf[1024];
    rfx_fg_expr(fg, buf, sizeof buf);
    assert_string_equal(buf, before);
    weft_tensor_t *vals[8], *ref, *got;
    rfx_random_inputs(f, n_in, in, vals, 0.5, 2.0);
    rfx_eval(f, n_in, in, vals, 1, &out, &ref);
    weft_rewriter_t *r;
    assert_int_equal(weft_rewriter_builtin_create(rw, &r), WEFT_OK);
    assert_int_equal(rfx_apply_count(r, fg, rw) > 0, strcmp(before, after) != 0);
    weft_rewriter_release(r);
    rfx_fg_expr(fg, buf, sizeof buf);
    assert_string_equal(buf, after);
    assert_int_equal(weft_fgraph_check_integrity(fg), WEFT_OK);
    weft_var_t *o2 = weft_fgraph_output(fg, 0);
    rfx_eval(f, n_in, in, vals, 1, &o2, &got);
    rfx_assert_close(got, ref, TOL_R, TOL_A);
    weft_tensor_release(ref);
    weft_tensor_release(got);
    rfx_release(n_in, vals);
    weft_fgraph_destroy(fg);
}

/* fast_run without `exclude` (and without in-place and fusion, which would
 * fold the remaining chain into a Composite): the graph keeps `expect`. */
static void check_disabled(rfx_t *f, size_t n_in, weft_var_t **in, weft_var_t *out,
                           const char *exclude, const char *expect)
{
    weft_fgraph_t *fg = rfx_fgraph(f, n_in, in, 1, &out, false);
    const char *ex[] = {exclude, "inplace", "fusion"};
    assert_int_equal(weft_rewrite_mode(fg, "fast_run", 0, NULL, 3, ex, NULL), WEFT_OK);
    char buf[1024];
    rfx_fg_expr(fg, buf, sizeof buf);
    assert_string_equal(buf, expect);
    weft_fgraph_destroy(fg);
}

static weft_var_t *cmat(rfx_t *f, const weft_type_t *t, double v)
{
    double d[16];
    for (int i = 0; i < 16; i++) d[i] = v;
    size_t n = 1;
    for (int i = 0; i < weft_type_ndim(t); i++) n *= (size_t)weft_type_dim(t, i);
    weft_var_t *c;
    assert_non_null(c = weft_constant_create(f->g, t, d, n * sizeof(double)));
    return c;
}

static void test_rewrite_add_zero_returns_x(void **state)
{
    rfx_t *f = *state;
    weft_var_t *x = rfx_var(f, f->m34, "x");
    weft_var_t *z = cmat(f, f->m34, 0.0);
    weft_var_t *y = rfx_bin(f, WEFT_ELEMWISE_ADD, z, x);
    check(f, 1, &x, y, "local_add_zero", "Add(Constant{float64[3,4]}, x)", "x");
}

static void test_rewrite_add_zero_broadcasting_zero_does_not_fire(void **state)
{
    rfx_t *f = *state;
    weft_var_t *x = rfx_var(f, f->m14, "x");
    weft_var_t *y = rfx_bin(f, WEFT_ELEMWISE_ADD, x, cmat(f, f->m34, 0.0));
    check(f, 1, &x, y, "local_add_zero", "Add(x, Constant{float64[3,4]})",
          "Add(x, Constant{float64[3,4]})");
}

static void test_rewrite_mul_one_returns_x(void **state)
{
    rfx_t *f = *state;
    weft_var_t *x = rfx_var(f, f->m34, "x");
    weft_var_t *y = rfx_bin(f, WEFT_ELEMWISE_MUL, x, cmat(f, f->m34, 1.0));
    check(f, 1, &x, y, "local_mul_one", "Mul(x, Constant{float64[3,4]})", "x");
    weft_var_t *x2 = rfx_var(f, f->m34, "x2");
    weft_var_t *y2 = rfx_bin(f, WEFT_ELEMWISE_MUL, x2, cmat(f, f->m34, 1.0));
    check_disabled(f, 1, &x2, y2, "local_mul_one", "Mul(x2, Constant{float64[3,4]})");
}

static void test_rewrite_mul_zero_keeps_shape(void **state)
{
    rfx_t *f = *state;
    weft_var_t *x = rfx_var(f, f->m34, "x");
    /* the 0 is a (1,4) constant: the result must still be (3,4) */
    weft_var_t *y = rfx_bin(f, WEFT_ELEMWISE_MUL, x, cmat(f, f->m14, 0.0));
    check(f, 1, &x, y, "local_mul_zero", "Mul(x, [0, 0, 0, 0])", "Second(x, [0, 0, 0, 0])");
    weft_var_t *x2 = rfx_var(f, f->m34, "x2");
    weft_var_t *y2 = rfx_bin(f, WEFT_ELEMWISE_MUL, cmat(f, f->m34, 0.0), x2);
    check(f, 1, &x2, y2, "local_mul_zero", "Mul(Constant{float64[3,4]}, x2)",
          "Constant{float64[3,4]}");
}

static void test_rewrite_sub_self_gives_zeros(void **state)
{
    rfx_t *f = *state;
    weft_var_t *x = rfx_var(f, f->m34, "x");
    weft_var_t *y = rfx_bin(f, WEFT_ELEMWISE_SUB, x, x);
    check(f, 1, &x, y, "local_sub_self", "Sub(x, x)", "Second(x, DimShuffle{order=(x,x)}(0))");
}

static void test_rewrite_neg_neg_returns_x(void **state)
{
    rfx_t *f = *state;
    weft_var_t *x = rfx_var(f, f->m34, "x");
    weft_var_t *y = rfx_un(f, WEFT_ELEMWISE_NEG, rfx_un(f, WEFT_ELEMWISE_NEG, x));
    check(f, 1, &x, y, "local_neg_neg", "Neg(Neg(x))", "x");
    weft_var_t *x2 = rfx_var(f, f->m34, "x2");
    weft_var_t *y2 = rfx_un(f, WEFT_ELEMWISE_NEG, rfx_un(f, WEFT_ELEMWISE_NEG, x2));
    check_disabled(f, 1, &x2, y2, "local_neg_neg", "Neg(Neg(x2))");
    weft_var_t *x3 = rfx_var(f, f->m34, "x3");
    weft_var_t *y3 = rfx_un(f, WEFT_ELEMWISE_NEG, rfx_un(f, WEFT_ELEMWISE_NEG, x3));
    check_disabled(f, 1, &x3, y3, "useless", "Neg(Neg(x3))"); /* by tag */
}

static void test_rewrite_exp_log_and_log_exp_return_x(void **state)
{
    rfx_t *f = *state;
    weft_var_t *x = rfx_var(f, f->m34, "x");
    check(f, 1, &x, rfx_un(f, WEFT_ELEMWISE_EXP, rfx_un(f, WEFT_ELEMWISE_LOG, x)), "local_exp_log",
          "Exp(Log(x))", "x");
    weft_var_t *x2 = rfx_var(f, f->m34, "x2");
    check(f, 1, &x2, rfx_un(f, WEFT_ELEMWISE_LOG, rfx_un(f, WEFT_ELEMWISE_EXP, x2)), "local_log_exp",
          "Log(Exp(x2))", "x2");
    weft_var_t *x3 = rfx_var(f, f->m34, "x3");
    check_disabled(f, 1, &x3, rfx_un(f, WEFT_ELEMWISE_LOG, rfx_un(f, WEFT_ELEMWISE_EXP, x3)),
                   "canonicalize", "Log(Exp(x3))");
}

static void test_rewrite_double_transpose_returns_x(void **state)
{
    rfx_t *f = *state;
    weft_var_t *x = rfx_var(f, f->m34, "x"), *t1, *t2, *p;
    assert_non_null(t1 = weft_transpose(f->g, x));
    assert_non_null(t2 = weft_transpose(f->g, t1));
    check(f, 1, &x, t2, "local_dimshuffle_dimshuffle",
          "DimShuffle{order=(1,0)}(DimShuffle{order=(1,0)}(x))", "x");
    weft_var_t *x2 = rfx_var(f, f->m34, "x2");
    int o1[] = {1, WEFT_DIMSHUFFLE_NEW, 0}, o2[] = {2, 0, 1};
    assert_non_null(t1 = weft_dimshuffle(f->g, x2, 3, o1));
    assert_non_null(p = weft_dimshuffle(f->g, t1, 3, o2));
    check(f, 1, &x2, p, "local_dimshuffle_dimshuffle",
          "DimShuffle{order=(2,0,1)}(DimShuffle{order=(1,x,0)}(x2))",
          "DimShuffle{order=(0,1,x)}(x2)");
}

static void test_rewrite_div_mul_cancel_pattern(void **state)
{
    rfx_t *f = *state;
    weft_var_t *in[2] = {rfx_var(f, f->m34, "x"), rfx_var(f, f->m34, "y")};
    weft_var_t *r = rfx_bin(f, WEFT_ELEMWISE_DIV, rfx_bin(f, WEFT_ELEMWISE_MUL, in[1], in[0]), in[1]);
    check(f, 2, in, r, "local_div_mul_cancel", "Div(Mul(y, x), y)", "x");
    /* y broadcasts x: the output is wider than x, so it must not fire */
    weft_var_t *in2[2] = {rfx_var(f, f->m14, "a"), rfx_var(f, f->m34, "b")};
    r = rfx_bin(f, WEFT_ELEMWISE_DIV, rfx_bin(f, WEFT_ELEMWISE_MUL, in2[0], in2[1]), in2[1]);
    check(f, 2, in2, r, "local_div_mul_cancel", "Div(Mul(a, b), b)", "Div(Mul(a, b), b)");
}

static void test_rewrite_sum_of_broadcast_axes_is_identity(void **state)
{
    rfx_t *f = *state;
    /* what gradients build to fold a broadcast back: SumAxes over axis 0 of a
     * (1,4) value is the value itself */
    weft_var_t *x = rfx_var(f, f->m14, "x"), *s, *s2;
    assert_int_equal(weft__sum_axes(f->g, x, 1u, __FILE__, __LINE__, &s), WEFT_OK);
    check(f, 1, &x, s, "local_sum_broadcastable", "SumAxes{axes=(0)}(x)", "x");
    weft_var_t *y = rfx_var(f, f->m34, "y");
    assert_int_equal(weft__sum_axes(f->g, y, 1u, __FILE__, __LINE__, &s2), WEFT_OK);
    check(f, 1, &y, s2, "local_sum_broadcastable", "SumAxes{axes=(0)}(y)", "SumAxes{axes=(0)}(y)");
}

static void test_rewrite_sum_over_length_one_axes_drops_them(void **state)
{
    rfx_t *f = *state;
    weft_var_t *x = rfx_var(f, f->m14, "x"), *s;
    int ax[] = {0};
    assert_non_null(s = weft_sum(f->g, x, 1, ax, false));
    check(f, 1, &x, s, "local_sum_broadcastable", "Sum{axes=(0), keepdims=0}(x)",
          "DimShuffle{order=(1)}(x)");
}

static weft_var_t *dot(rfx_t *f, weft_var_t *a, weft_var_t *b)
{
    weft_var_t *r;
    assert_non_null(r = weft_dot(f->g, a, b));
    return r;
}

static void test_rewrite_gemm_from_dot_add_and_scaled_sub(void **state)
{
    rfx_t *f = *state;
    weft_var_t *in[3] = {rfx_var(f, f->m34, "z"), rfx_var(f, f->m34, "x"), rfx_var(f, f->m44, "y")};
    weft_var_t *r = rfx_bin(f, WEFT_ELEMWISE_ADD, in[0], dot(f, in[1], in[2]));
    check(f, 3, in, r, "local_gemm", "Add(z, Dot(x, y))", "Gemm{inplace=-1}(z, 1, x, y, 1)");
    /* z - 0.5 * dot(x, y): the scale becomes alpha = -0.5 */
    weft_var_t *in2[3] = {rfx_var(f, f->m34, "z"), rfx_var(f, f->m34, "x"),
                          rfx_var(f, f->m44, "y")};
    weft_var_t *half1;
    int64_t s11[] = {1, 1};
    const weft_type_t *t11;
    assert_int_equal(weft_type_tensor(f->g, WEFT_FLOAT64, 2, s11, &t11), WEFT_OK);
    half1 = cmat(f, t11, 0.5);
    r = rfx_bin(f, WEFT_ELEMWISE_SUB, in2[0], rfx_bin(f, WEFT_ELEMWISE_MUL, half1, dot(f, in2[1], in2[2])));
    check(f, 3, in2, r, "local_gemm", "Sub(z, Mul([0.5], Dot(x, y)))",
          "Gemm{inplace=-1}(z, -0.5, x, y, 1)");
    /* the product has a second client: keep it (no duplicated matmul) */
    weft_var_t *in3[3] = {rfx_var(f, f->m34, "z"), rfx_var(f, f->m34, "x"),
                          rfx_var(f, f->m44, "y")};
    weft_var_t *d = dot(f, in3[1], in3[2]);
    r = rfx_bin(f, WEFT_ELEMWISE_MUL, rfx_bin(f, WEFT_ELEMWISE_ADD, in3[0], d), d);
    check(f, 3, in3, r, "local_gemm", "Mul(Add(z, Dot(x, y)), Dot(x, y))",
          "Mul(Add(z, Dot(x, y)), Dot(x, y))");
    weft_var_t *in4[3] = {rfx_var(f, f->m34, "z"), rfx_var(f, f->m34, "x"),
                          rfx_var(f, f->m44, "y")};
    r = rfx_bin(f, WEFT_ELEMWISE_ADD, in4[0], dot(f, in4[1], in4[2]));
    check_disabled(f, 3, in4, r, "gemm", "Add(z, Dot(x, y))");
}

/* A bias row added to a product (a dense layer) rides on the product: the
 * copying Gemm broadcasts it; values equal the unrewritten graph's. */
static void test_rewrite_gemm_takes_broadcast_bias_row(void **state)
{
    rfx_t *f = *state;
    weft_var_t *in[3] = {rfx_var(f, f->m14, "b"), rfx_var(f, f->m34, "x"), rfx_var(f, f->m44, "w")};
    weft_var_t *r = rfx_bin(f, WEFT_ELEMWISE_ADD, dot(f, in[1], in[2]), in[0]);
    check(f, 3, in, r, "local_gemm", "Add(Dot(x, w), b)", "Gemm{inplace=-1}(b, 1, x, w, 1)");
    /* b - 0.5 * dot: alpha -0.5, still broadcasting the row */
    weft_var_t *in2[3] = {rfx_var(f, f->m14, "b"), rfx_var(f, f->m34, "x"),
                          rfx_var(f, f->m44, "w")};
    const weft_type_t *t11;
    assert_int_equal(weft_type_tensor(f->g, WEFT_FLOAT64, 2, (int64_t[]){1, 1}, &t11), WEFT_OK);
    weft_var_t *half = cmat(f, t11, 0.5);
    r = rfx_bin(f, WEFT_ELEMWISE_SUB, in2[0], rfx_bin(f, WEFT_ELEMWISE_MUL, half, dot(f, in2[1], in2[2])));
    check(f, 3, in2, r, "local_gemm", "Sub(b, Mul([0.5], Dot(x, w)))",
          "Gemm{inplace=-1}(b, -0.5, x, w, 1)");
    /* a 3-row z with a one-row product (x is 1x4): the product would be the
     * broadcast operand, which Gemm cannot take */
    weft_var_t *in3[3] = {rfx_var(f, f->m34, "z"), rfx_var(f, f->m14, "x"),
                          rfx_var(f, f->m44, "w")};
    r = rfx_bin(f, WEFT_ELEMWISE_ADD, in3[0], dot(f, in3[1], in3[2]));
    check(f, 3, in3, r, "local_gemm", "Add(z, Dot(x, w))", "Add(z, Dot(x, w))");
}

/* The gradient of a mean / a sum (ReduceGrad, as weft_grad builds it), read
 * by one elementwise node whose other operand has the full shape, becomes a
 * broadcast operand of that node. */
static weft_var_t *rgrad(rfx_t *f, weft_reduce_kind_t kind, uint32_t axes, weft_var_t *x,
                         weft_var_t *gz)
{
    weft__reduce_props_t p = {(int32_t)kind, 2, axes, 0};
    weft_var_t *r = NULL;
    assert_int_equal(weft__reduce_grad_build(f->g, &p, x, gz, __FILE__, __LINE__, &r), WEFT_OK);
    return r;
}

static void test_rewrite_reduce_grad_sinks_into_elementwise_client(void **state)
{
    rfx_t *f = *state;
    const weft_type_t *t0, *t3;
    assert_int_equal(weft_type_tensor(f->g, WEFT_FLOAT64, 0, NULL, &t0), WEFT_OK);
    assert_int_equal(weft_type_tensor(f->g, WEFT_FLOAT64, 1, (int64_t[]){3}, &t3), WEFT_OK);
    weft_var_t *in[3] = {rfx_var(f, f->m34, "x"), rfx_var(f, f->m34, "y"), rfx_var(f, t0, "g")};
    weft_var_t *r = rfx_bin(f, WEFT_ELEMWISE_MUL, rgrad(f, WEFT_REDUCE_MEAN, 3u, in[0], in[2]), in[1]);
    check(f, 3, in, r, "local_reduce_grad_sink",
          "Mul(ReduceGrad{kind=Mean, axes=(0,1), keepdims=0}(x, g), y)",
          "Mul(DimShuffle{order=(x,x)}(Mul(g, 0.0833333)), y)");
    /* a row sum's gradient: gz (3,) becomes a column (3,1) */
    weft_var_t *in2[3] = {rfx_var(f, f->m34, "x"), rfx_var(f, f->m34, "y"), rfx_var(f, t3, "g")};
    r = rfx_bin(f, WEFT_ELEMWISE_SUB, in2[1], rgrad(f, WEFT_REDUCE_SUM, 2u, in2[0], in2[2]));
    check(f, 3, in2, r, "local_reduce_grad_sink",
          "Sub(y, ReduceGrad{kind=Sum, axes=(1), keepdims=0}(x, g))",
          "Sub(y, DimShuffle{order=(0,x)}(g))");
    /* the other operand is a row: it would not give the node its shape */
    weft_var_t *in3[3] = {rfx_var(f, f->m34, "x"), rfx_var(f, f->m14, "b"), rfx_var(f, t0, "g")};
    r = rfx_bin(f, WEFT_ELEMWISE_MUL, rgrad(f, WEFT_REDUCE_MEAN, 3u, in3[0], in3[2]), in3[1]);
    check(f, 3, in3, r, "local_reduce_grad_sink",
          "Mul(ReduceGrad{kind=Mean, axes=(0,1), keepdims=0}(x, g), b)",
          "Mul(ReduceGrad{kind=Mean, axes=(0,1), keepdims=0}(x, g), b)");
}

/* ---- merge --------------------------------------------------------------------- */

static void test_rewrite_merge_identical_nodes_cascade(void **state)
{
    rfx_t *f = *state;
    weft_var_t *in[2] = {rfx_var(f, f->m34, "x"), rfx_var(f, f->m34, "y")};
    weft_var_t *a = rfx_un(f, WEFT_ELEMWISE_EXP, rfx_bin(f, WEFT_ELEMWISE_ADD, in[0], in[1]));
    weft_var_t *b = rfx_un(f, WEFT_ELEMWISE_EXP, rfx_bin(f, WEFT_ELEMWISE_ADD, in[0], in[1]));
    weft_var_t *c1 = cmat(f, f->m34, 2.0), *c2 = cmat(f, f->m34, 2.0);
    weft_var_t *r = rfx_bin(f, WEFT_ELEMWISE_ADD, rfx_bin(f, WEFT_ELEMWISE_MUL, a, c1),
                        rfx_bin(f, WEFT_ELEMWISE_MUL, b, c2));
    weft_fgraph_t *fg = rfx_fgraph(f, 2, in, 1, &r, false);
    assert_int_equal(weft_fgraph_n_applies(fg), 7);
    weft_tensor_t *vals[2], *ref, *got;
    rfx_random_inputs(f, 2, in, vals, -1, 1);
    rfx_eval(f, 2, in, vals, 1, &r, &ref);
    weft_rewriter_t *m;
    assert_int_equal(weft_rewriter_merge_create(NULL, &m), WEFT_OK);
    weft_rewrite_stats_t *stats;
    assert_int_equal(weft_rewrite_stats_create(&stats), WEFT_OK);
    assert_int_equal(weft_rewriter_apply(m, fg, stats), WEFT_OK);
    weft_rewriter_release(m);
    uint64_t applied;
    assert_int_equal(weft_rewrite_stats_get(stats, "merge", &applied, NULL, NULL), WEFT_OK);
    assert_int_equal(applied, 4); /* one constant, add, exp, mul */
    weft_rewrite_stats_destroy(stats);
    assert_int_equal(weft_fgraph_n_applies(fg), 4);
    char buf[512];
    rfx_fg_expr(fg, buf, sizeof buf);
    assert_string_equal(buf, "Add(Mul(Exp(Add(x, y)), Constant{float64[3,4]}), Mul(Exp(Add(x, y)), "
                             "Constant{float64[3,4]}))");
    weft_var_t *o = weft_fgraph_output(fg, 0);
    weft_apply_t *top = weft_var_owner(o);
    assert_ptr_equal(weft_apply_input(top, 0), weft_apply_input(top, 1));
    rfx_eval(f, 2, in, vals, 1, &o, &got);
    rfx_assert_close(got, ref, TOL_R, TOL_A);
    weft_tensor_release(ref);
    weft_tensor_release(got);
    rfx_release(2, vals);
    weft_fgraph_destroy(fg);
}

static void test_rewrite_merge_skips_two_destroyed_duplicates(void **state)
{
    rfx_t *f = *state;
    weft_var_t *x = rfx_var(f, f->m34, "x");
    weft_var_t *a = rfx_un(f, WEFT_ELEMWISE_EXP, x), *b = rfx_un(f, WEFT_ELEMWISE_EXP, x);
    const weft_op_t *neg_ip;
    assert_int_equal(weft_elemwise_op(f->g, WEFT_ELEMWISE_NEG, 0, WEFT_FLOAT64, &neg_ip), WEFT_OK);
    weft_var_t *na, *nb;
    assert_non_null(na = weft_op_call(f->g, neg_ip, 1, &a));
    assert_non_null(nb = weft_op_call(f->g, neg_ip, 1, &b));
    weft_var_t *outs[2] = {na, nb};
    weft_fgraph_t *fg = rfx_fgraph(f, 1, &x, 2, outs, true);
    assert_int_equal(weft_dh_attach(fg, NULL), WEFT_OK);
    weft_rewriter_t *m;
    assert_int_equal(weft_rewriter_merge_create(NULL, &m), WEFT_OK);
    assert_int_equal(weft_rewriter_apply(m, fg, NULL), WEFT_OK);
    weft_rewriter_release(m);
    /* both Exp outputs are destroyed by their own Neg{inplace}: kept apart */
    assert_int_equal(weft_fgraph_n_applies(fg), 4);
    assert_int_equal(weft_fgraph_validate(fg), WEFT_OK);
    weft_fgraph_destroy(fg);
}

/* ---- constant folding --------------------------------------------------------- */

static void test_rewrite_constant_folding_folds_constant_subgraph(void **state)
{
    rfx_t *f = *state;
    weft_var_t *x = rfx_var(f, f->m34, "x");
    weft_var_t *c = rfx_bin(f, WEFT_ELEMWISE_ADD, rfx_const(f, WEFT_FLOAT64, 2.0),
                        rfx_const(f, WEFT_FLOAT64, 3.0));
    weft_var_t *y = rfx_bin(f, WEFT_ELEMWISE_MUL, x, rfx_un(f, WEFT_ELEMWISE_EXP, c));
    check(f, 1, &x, y, "constant_folding", "Mul(x, DimShuffle{order=(x,x)}(Exp(Add(2, 3))))",
          "Mul(x, [148.413])");
}

/* constant_dimshuffle: the broadcast padding of a scalar constant becomes a
 * constant of the padded type; a DimShuffle of a variable stays. */
static void test_rewrite_constant_dimshuffle_folds_padding_of_constants_only(void **state)
{
    rfx_t *f = *state;
    weft_var_t *in[2] = {rfx_var(f, f->m34, "x"), rfx_var(f, f->v4, "v")};
    weft_var_t *y = rfx_bin(f, WEFT_ELEMWISE_ADD,
                        rfx_bin(f, WEFT_ELEMWISE_MUL, in[0], rfx_const(f, WEFT_FLOAT64, 2.0)), in[1]);
    check(f, 2, in, y, "constant_dimshuffle",
          "Add(Mul(x, DimShuffle{order=(x,x)}(2)), DimShuffle{order=(x,0)}(v))",
          "Add(Mul(x, [2]), DimShuffle{order=(x,0)}(v))");
}

/* Equal paddings (same value, same padded type) share one new constant;
 * another value gets its own. */
static void test_rewrite_constant_dimshuffle_shares_equal_paddings(void **state)
{
    rfx_t *f = *state;
    weft_var_t *x = rfx_var(f, f->m34, "x");
    weft_var_t *a = rfx_bin(f, WEFT_ELEMWISE_MUL, x, rfx_const(f, WEFT_FLOAT64, 2.0));
    weft_var_t *b = rfx_bin(f, WEFT_ELEMWISE_ADD, a, rfx_const(f, WEFT_FLOAT64, 2.0));
    weft_var_t *y = rfx_bin(f, WEFT_ELEMWISE_SUB, b, rfx_const(f, WEFT_FLOAT64, 3.0));
    weft_fgraph_t *fg = rfx_fgraph(f, 1, &x, 1, &y, false);
    assert_int_equal(weft_fgraph_n_applies(fg), 6);
    weft_rewriter_t *r;
    assert_int_equal(weft_rewriter_builtin_create("constant_dimshuffle", &r), WEFT_OK);
    assert_int_equal(weft_rewriter_apply(r, fg, NULL), WEFT_OK);
    weft_rewriter_release(r);
    assert_int_equal(weft_fgraph_n_applies(fg), 3);
    weft_apply_t *sub = weft_var_owner(weft_fgraph_output(fg, 0));
    weft_apply_t *add = weft_var_owner(weft_apply_input(sub, 0));
    weft_apply_t *mul = weft_var_owner(weft_apply_input(add, 0));
    assert_ptr_equal(weft_apply_input(add, 1), weft_apply_input(mul, 1));
    assert_ptr_not_equal(weft_apply_input(sub, 1), weft_apply_input(mul, 1));
    assert_true(weft_var_is_constant(weft_apply_input(sub, 1)));
    assert_int_equal(weft_fgraph_check_integrity(fg), WEFT_OK);
    weft_fgraph_destroy(fg);
}

static void test_rewrite_fast_compile_folds_but_keeps_neg_neg(void **state)
{
    rfx_t *f = *state;
    weft_var_t *x = rfx_var(f, f->m34, "x");
    weft_var_t *c = rfx_bin(f, WEFT_ELEMWISE_ADD, rfx_const(f, WEFT_FLOAT64, 2.0),
                        rfx_const(f, WEFT_FLOAT64, 3.0));
    weft_var_t *y =
        rfx_bin(f, WEFT_ELEMWISE_MUL, rfx_un(f, WEFT_ELEMWISE_NEG, rfx_un(f, WEFT_ELEMWISE_NEG, x)), c);
    weft_fgraph_t *fg = rfx_fgraph(f, 1, &x, 1, &y, false);
    assert_int_equal(weft_rewrite_mode(fg, "fast_compile", 0, NULL, 0, NULL, NULL), WEFT_OK);
    char buf[512];
    rfx_fg_expr(fg, buf, sizeof buf);
    assert_string_equal(buf, "Mul(Neg(Neg(x)), [5])");
    weft_fgraph_destroy(fg);
    /* the fgraph edited y's nodes in place (no clone): build the graph again */
    c = rfx_bin(f, WEFT_ELEMWISE_ADD, rfx_const(f, WEFT_FLOAT64, 2.0), rfx_const(f, WEFT_FLOAT64, 3.0));
    y = rfx_bin(f, WEFT_ELEMWISE_MUL, rfx_un(f, WEFT_ELEMWISE_NEG, rfx_un(f, WEFT_ELEMWISE_NEG, x)), c);
    weft_fgraph_t *fg2 = rfx_fgraph(f, 1, &x, 1, &y, false);
    const char *ex[] = {"constant_folding"};
    assert_int_equal(weft_rewrite_mode(fg2, "fast_compile", 0, NULL, 1, ex, NULL), WEFT_OK);
    rfx_fg_expr(fg2, buf, sizeof buf);
    assert_string_equal(buf, "Mul(Neg(Neg(x)), DimShuffle{order=(x,x)}(Add(2, 3)))");
    weft_fgraph_destroy(fg2);
}

/* ---- inplace ----------------------------------------------------------------------- */

static void test_rewrite_inplace_destroys_only_intermediates_of_protected_inputs(void **state)
{
    rfx_t *f = *state;
    weft_var_t *in[2] = {rfx_var(f, f->m34, "x"), rfx_var(f, f->m34, "y")};
    weft_var_t *y = rfx_un(f, WEFT_ELEMWISE_TANH, rfx_un(f, WEFT_ELEMWISE_EXP,
                                                rfx_bin(f, WEFT_ELEMWISE_ADD, in[0], in[1])));
    weft_fgraph_t *fg = rfx_fgraph(f, 2, in, 1, &y, false);
    weft_tensor_t *vals[2], *ref, *got;
    rfx_random_inputs(f, 2, in, vals, -1, 1);
    rfx_eval(f, 2, in, vals, 1, &y, &ref);
    weft_rewriter_t *r;
    assert_int_equal(weft_rewriter_inplace_create(NULL, &r), WEFT_OK);
    assert_int_equal(weft_rewriter_apply(r, fg, NULL), WEFT_OK);
    weft_rewriter_release(r);
    char buf[512];
    rfx_fg_expr(fg, buf, sizeof buf);
    assert_string_equal(buf, "Tanh{inplace=0}(Exp{inplace=0}(Add(x, y)))");
    assert_int_equal(weft_fgraph_validate(fg), WEFT_OK);
    weft_var_t *o = weft_fgraph_output(fg, 0);
    rfx_eval(f, 2, in, vals, 1, &o, &got);
    rfx_assert_close(got, ref, TOL_R, TOL_A);
    weft_tensor_release(ref);
    weft_tensor_release(got);
    rfx_release(2, vals);
    weft_fgraph_destroy(fg);
}

static void test_rewrite_inplace_mutable_inputs_and_later_readers(void **state)
{
    rfx_t *f = *state;
    weft_var_t *in[2] = {rfx_var(f, f->m34, "x"), rfx_var(f, f->m34, "y")};
    weft_var_t *a = rfx_bin(f, WEFT_ELEMWISE_ADD, in[0], in[1]);
    weft_var_t *b = rfx_bin(f, WEFT_ELEMWISE_MUL, in[0], a);
    weft_fgraph_t *fg = rfx_fgraph(f, 2, in, 1, &b, true);
    weft_rewriter_t *r;
    assert_int_equal(weft_rewriter_inplace_create(NULL, &r), WEFT_OK);
    assert_int_equal(weft_rewriter_apply(r, fg, NULL), WEFT_OK);
    weft_rewriter_release(r);
    char buf[512];
    rfx_fg_expr(fg, buf, sizeof buf);
    /* y's last reader is the Add: it is destroyed there; the Mul overwrites a
     * (its last reader) rather than x */
    assert_string_equal(buf, "Mul{inplace=1}(x, Add{inplace=1}(x, y))");
    assert_int_equal(weft_fgraph_validate(fg), WEFT_OK);
    weft_fgraph_destroy(fg);
}

/* u = exp(y) + s updating s, with another reader of s: update_inplace makes
 * the Add destroy s (its second input) only for an update pair, and leaves a
 * protected s alone (the Supervisor's rejection is no error). Values as the
 * unrewritten graph's, run in toposort order (Neg reads s before the Add). */
static void test_rewrite_update_inplace_destroys_the_updated_input(void **state)
{
    rfx_t *f = *state;
    weft_var_t *in[2] = {rfx_var(f, f->m34, "s"), rfx_var(f, f->m34, "y")};
    weft_var_t *e = rfx_un(f, WEFT_ELEMWISE_EXP, in[1]);
    weft_var_t *outs[2] = {rfx_bin(f, WEFT_ELEMWISE_ADD, e, in[0]),
                           rfx_un(f, WEFT_ELEMWISE_NEG, in[0])};
    weft_tensor_t *vals[2], *ref[2], *got[2];
    rfx_random_inputs(f, 2, in, vals, -1, 1);
    rfx_eval(f, 2, in, vals, 2, outs, ref);
    const char *want[3] = {"Add{inplace=1}(Exp(y), s); Neg(s)", "Add(Exp(y), s); Neg(s)",
                           "Add(Exp(y), s); Neg(s)"};
    for (int c = 0; c < 3; c++) { /* update pair, none, pair on a protected s */
        weft_fgraph_t *fg = rfx_fgraph(f, 2, in, 2, outs, c < 2);
        if (c != 1) assert_int_equal(weft_fgraph_set_update(fg, 0, 0), WEFT_OK);
        weft_rewriter_t *r;
        assert_int_equal(weft_rewriter_builtin_create("update_inplace", &r), WEFT_OK);
        assert_int_equal(weft_rewriter_apply(r, fg, NULL), WEFT_OK);
        weft_rewriter_release(r);
        char buf[512];
        rfx_fg_expr(fg, buf, sizeof buf);
        assert_string_equal(buf, want[c]);
        assert_int_equal(weft_fgraph_validate(fg), WEFT_OK);
        rfx_eval_fgraph(f, fg, 2, in, vals, got);
        for (int k = 0; k < 2; k++) rfx_assert_close(got[k], ref[k], TOL_R, TOL_A);
        rfx_release(2, got);
        weft_fgraph_destroy(fg);
    }
    assert_true(weft_rewrite_db_has(weft_rewrite_db_default(), "update_inplace"));
    rfx_release(2, ref);
    rfx_release(2, vals);
}

static void test_rewrite_mode_excluding_inplace_by_tag_keeps_ops(void **state)
{
    rfx_t *f = *state;
    weft_var_t *x = rfx_var(f, f->m34, "x");
    weft_var_t *y = rfx_un(f, WEFT_ELEMWISE_TANH, rfx_un(f, WEFT_ELEMWISE_EXP, x));
    weft_fgraph_t *fg = rfx_fgraph(f, 1, &x, 1, &y, false);
    const char *ex[] = {"inplace", "fusion"};
    assert_int_equal(weft_rewrite_mode(fg, "fast_run", 0, NULL, 2, ex, NULL), WEFT_OK);
    char buf[512];
    rfx_fg_expr(fg, buf, sizeof buf);
    assert_string_equal(buf, "Tanh(Exp(x))");
    assert_int_equal(weft_rewrite_mode(fg, "fast_run", 0, NULL, 1, ex + 1, NULL), WEFT_OK);
    rfx_fg_expr(fg, buf, sizeof buf);
    assert_string_equal(buf, "Tanh{inplace=0}(Exp(x))");
    weft_fgraph_destroy(fg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_rewrite_add_zero_returns_x, rfx_setup, rfx_teardown),
        cmocka_unit_test_setup_teardown(test_rewrite_add_zero_broadcasting_zero_does_not_fire,
                                        rfx_setup, rfx_teardown),
        cmocka_unit_test_setup_teardown(test_rewrite_mul_one_returns_x, rfx_setup, rfx_teardown),
        cmocka_unit_test_setup_teardown(test_rewrite_mul_zero_keeps_shape, rfx_setup, rfx_teardown),
        cmocka_unit_test_setup_teardown(test_rewrite_sub_self_gives_zeros, rfx_setup, rfx_teardown),
        cmocka_unit_test_setup_teardown(test_rewrite_neg_neg_returns_x, rfx_setup, rfx_teardown),
        cmocka_unit_test_setup_teardown(test_rewrite_exp_log_and_log_exp_return_x, rfx_setup,
                                        rfx_teardown),
        cmocka_unit_test_setup_teardown(test_rewrite_double_transpose_returns_x, rfx_setup,
                                        rfx_teardown),
        cmocka_unit_test_setup_teardown(test_rewrite_div_mul_cancel_pattern, rfx_setup,
                                        rfx_teardown),
        cmocka_unit_test_setup_teardown(test_rewrite_sum_of_broadcast_axes_is_identity, rfx_setup,
                                        rfx_teardown),
        cmocka_unit_test_setup_teardown(test_rewrite_sum_over_length_one_axes_drops_them,
                                        rfx_setup, rfx_teardown),
        cmocka_unit_test_setup_teardown(test_rewrite_reduce_grad_sinks_into_elementwise_client,
                                        rfx_setup, rfx_teardown),
        cmocka_unit_test_setup_teardown(test_rewrite_gemm_takes_broadcast_bias_row, rfx_setup,
                                        rfx_teardown),
        cmocka_unit_test_setup_teardown(test_rewrite_gemm_from_dot_add_and_scaled_sub, rfx_setup,
                                        rfx_teardown),
        cmocka_unit_test_setup_teardown(test_rewrite_merge_identical_nodes_cascade, rfx_setup,
                                        rfx_teardown),
        cmocka_unit_test_setup_teardown(test_rewrite_merge_skips_two_destroyed_duplicates,
                                        rfx_setup, rfx_teardown),
        cmocka_unit_test_setup_teardown(test_rewrite_constant_folding_folds_constant_subgraph,
                                        rfx_setup, rfx_teardown),
        cmocka_unit_test_setup_teardown(
            test_rewrite_constant_dimshuffle_folds_padding_of_constants_only, rfx_setup,
            rfx_teardown),
        cmocka_unit_test_setup_teardown(test_rewrite_constant_dimshuffle_shares_equal_paddings,
                                        rfx_setup, rfx_teardown),
        cmocka_unit_test_setup_teardown(test_rewrite_fast_compile_folds_but_keeps_neg_neg,
                                        rfx_setup, rfx_teardown),
        cmocka_unit_test_setup_teardown(
            test_rewrite_inplace_destroys_only_intermediates_of_protected_inputs, rfx_setup,
            rfx_teardown),
        cmocka_unit_test_setup_teardown(test_rewrite_inplace_mutable_inputs_and_later_readers,
                                        rfx_setup, rfx_teardown),
        cmocka_unit_test_setup_teardown(test_rewrite_update_inplace_destroys_the_updated_input,
                                        rfx_setup, rfx_teardown),
        cmocka_unit_test_setup_teardown(test_rewrite_mode_excluding_inplace_by_tag_keeps_ops,
                                        rfx_setup, rfx_teardown),
    };
    return cmocka_run_group_tests_name("rewrite_builtin", tests, NULL, NULL);
}
