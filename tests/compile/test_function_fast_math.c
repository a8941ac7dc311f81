/* The fast_math tag (docs/rewrites.md §6.5): fast_run without it gives mode
 * none's bits, on inputs full of NaN, infinities, signed zeros, huge,
 * overflowing and subnormal values, for a graph exercising each built-in
 * rewrite (the tagged ones and the exact ones: folding, merge, fusion,
 * in-place, the reduce-grad sink, the useless ones), in float64 and float32;
 * and with the tag each tagged rewrite still fires. */
#define _POSIX_C_SOURCE 200809L /* fmemopen */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "weft/weft.h"

#define NV 14
#define NSPEC (NV * NV) /* every pair of special values once */

static const double special64[NV] = {NAN,  INFINITY, -INFINITY, -0.0, 0.0, 1e308, -1e308,
                                     710.0, -746.0,  1e-310,    3.0, -2.5, 0.1,   89.0};
/* float32's own huge (3e38), exp-overflowing (89) and subnormal (1e-40) values */
static const double special32[NV] = {NAN, INFINITY, -INFINITY, -0.0, 0.0, 3e38, -3e38,
                                     89.0, -104.0,  1e-40,     3.0, -2.5, 0.1, 710.0};

/* How a case's input is filled: special values in two orders (so a binary
 * node meets every pair), or a deterministic spread of ordinary values with
 * a few signed zeros (matrix products, where one NaN would mask the rest). */
typedef enum fill { FILL_OUTER, FILL_INNER, FILL_SPREAD } fill_t;

typedef weft_var_t *(*build_fn)(weft_graph_t *g, weft_var_t *const *in);

typedef struct fm_case {
    const char *rewrite; /* the rewrite it exercises */
    /* a tagged rewrite: an op the program has without fast_math and not with
     * it (fusion excluded from both, so ops print by name); NULL: exact */
    const char *gone;
    int n_in;
    int ndim[3];
    int64_t shape[3][2];
    fill_t fill[3];
    build_fn build;
} fm_case_t;

#define OK(call) assert_int_equal((call), WEFT_OK)
#define OKV(expr) assert_non_null(expr)

static weft_var_t *bin(weft_graph_t *g, weft_elemwise_kind_t k, weft_var_t *a, weft_var_t *b)
{
    weft_var_t *y = NULL;
    OKV(y = weft_binary(g, k, a, b));
    return y;
}

static weft_var_t *un(weft_graph_t *g, weft_elemwise_kind_t k, weft_var_t *a)
{
    weft_var_t *y = NULL;
    OKV(y = weft_unary(g, k, a));
    return y;
}

static weft_var_t *scal(weft_graph_t *g, weft_elemwise_kind_t k, weft_var_t *a, double v)
{
    weft_var_t *y = NULL;
    OKV(y = weft_binary_scalar(g, k, a, v));
    return y;
}

static weft_var_t *b_add_zero(weft_graph_t *g, weft_var_t *const *in)
{
    return scal(g, WEFT_ELEMWISE_ADD, in[0], 0.0);
}

static weft_var_t *b_mul_zero(weft_graph_t *g, weft_var_t *const *in)
{
    return scal(g, WEFT_ELEMWISE_MUL, in[0], 0.0);
}

static weft_var_t *b_sub_self(weft_graph_t *g, weft_var_t *const *in)
{
    return bin(g, WEFT_ELEMWISE_SUB, in[0], in[0]);
}

static weft_var_t *b_exp_log(weft_graph_t *g, weft_var_t *const *in)
{
    return un(g, WEFT_ELEMWISE_EXP, un(g, WEFT_ELEMWISE_LOG, in[0]));
}

static weft_var_t *b_log_exp(weft_graph_t *g, weft_var_t *const *in)
{
    return un(g, WEFT_ELEMWISE_LOG, un(g, WEFT_ELEMWISE_EXP, in[0]));
}

static weft_var_t *b_div_mul(weft_graph_t *g, weft_var_t *const *in)
{
    return bin(g, WEFT_ELEMWISE_DIV, bin(g, WEFT_ELEMWISE_MUL, in[0], in[1]), in[1]);
}

static weft_var_t *b_mul_div(weft_graph_t *g, weft_var_t *const *in)
{
    return bin(g, WEFT_ELEMWISE_MUL, bin(g, WEFT_ELEMWISE_DIV, in[0], in[1]), in[1]);
}

static weft_var_t *b_sum_axis_one(weft_graph_t *g, weft_var_t *const *in)
{
    weft_var_t *y = NULL;
    OKV(y = weft_sum(g, in[0], 1, (int[]){0}, false));
    return y;
}

/* z + dot(x, y) and z - 0.5 * dot(x, y): Gemm adds z inside BLAS's blocked
 * accumulation (one product each: merged, a shared product stays a Dot) */
static weft_var_t *dot(weft_graph_t *g, weft_var_t *x, weft_var_t *y)
{
    weft_var_t *d = NULL;
    OKV(d = weft_dot(g, x, y));
    return d;
}

static weft_var_t *b_gemm_add(weft_graph_t *g, weft_var_t *const *in)
{
    return bin(g, WEFT_ELEMWISE_ADD, in[0], dot(g, in[1], in[2]));
}

static weft_var_t *b_gemm_sub(weft_graph_t *g, weft_var_t *const *in)
{
    return bin(g, WEFT_ELEMWISE_SUB, in[0], scal(g, WEFT_ELEMWISE_MUL, dot(g, in[1], in[2]), 0.5));
}

static weft_var_t *b_mul_one_neg_neg(weft_graph_t *g, weft_var_t *const *in)
{
    weft_var_t *m = scal(g, WEFT_ELEMWISE_MUL, in[0], 1.0);
    return un(g, WEFT_ELEMWISE_NEG, un(g, WEFT_ELEMWISE_NEG, bin(g, WEFT_ELEMWISE_ADD, m, in[1])));
}

static weft_var_t *b_transpose_twice(weft_graph_t *g, weft_var_t *const *in)
{
    weft_var_t *t = NULL, *tt = NULL;
    OKV(t = weft_transpose(g, in[0]));
    OKV(tt = weft_transpose(g, t));
    return bin(g, WEFT_ELEMWISE_MUL, tt, in[1]);
}

/* d mean(x * y) / dx and d sum(x * y) / dx: ReduceGrad read by a Mul */
static weft_var_t *b_reduce_grad(weft_graph_t *g, weft_var_t *const *in)
{
    weft_var_t *p = bin(g, WEFT_ELEMWISE_MUL, in[0], in[1]), *m = NULL, *s = NULL;
    OKV(m = weft_mean(g, p, 0, NULL, false));
    OKV(s = weft_sum(g, p, 0, NULL, false));
    weft_var_t *gm = NULL, *gs = NULL;
    OKV(weft_grads(g, m, 1, &in[0], NULL, &gm));
    OKV(weft_grads(g, s, 1, &in[0], NULL, &gs));
    return bin(g, WEFT_ELEMWISE_ADD, gm, gs);
}

/* constant folding of special constants, merge of duplicates, and a fused
 * chain computed in place */
static weft_var_t *b_fold_merge_fuse(weft_graph_t *g, weft_var_t *const *in)
{
    weft_dtype_t dt = weft_type_dtype(weft_var_type(in[0]));
    const weft_type_t *t;
    int64_t n = NV;
    assert_int_equal(weft_type_tensor(g, dt, 1, &n, &t), WEFT_OK);
    double d64[NV];
    float d32[NV];
    for (int i = 0; i < NV; i++) d32[i] = (float)(d64[i] = special64[i]);
    weft_var_t *c = NULL;
    OKV(c = weft_constant_create(g, t, dt == WEFT_FLOAT64 ? (void *)d64 : (void *)d32,
                                 (size_t)NV * weft_dtype_size(dt)));
    weft_var_t *folded = bin(g, WEFT_ELEMWISE_MUL, un(g, WEFT_ELEMWISE_LOG, c),
                             un(g, WEFT_ELEMWISE_EXP, c)); /* [NV] */
    weft_var_t *x = in[0], *y = in[1];
    weft_var_t *dup = bin(g, WEFT_ELEMWISE_ADD, un(g, WEFT_ELEMWISE_EXP, x),
                          un(g, WEFT_ELEMWISE_EXP, x));
    weft_var_t *chain = bin(g, WEFT_ELEMWISE_SUB,
                            bin(g, WEFT_ELEMWISE_MUL, un(g, WEFT_ELEMWISE_TANH, x), y),
                            bin(g, WEFT_ELEMWISE_DIV, y, x));
    weft_var_t *r = bin(g, WEFT_ELEMWISE_ADD, dup, chain); /* [NV, NV] */
    return bin(g, WEFT_ELEMWISE_MUL, r, folded);
}

/* an inline OpFromGraph of x, y (expanded by inline_ofg_expansion; mode
 * none runs its inner graph through its perform) */
static weft_var_t *b_inline_ofg(weft_graph_t *g, weft_var_t *const *in)
{
    weft_var_t *a = NULL, *b = NULL;
    OKV(a = weft_var_create(g, weft_var_type(in[0]), "a"));
    OKV(b = weft_var_create(g, weft_var_type(in[1]), "b"));
    weft_var_t *ta = bin(g, WEFT_ELEMWISE_MUL, un(g, WEFT_ELEMWISE_TANH, a), b);
    weft_var_t *inner = bin(g, WEFT_ELEMWISE_SUB, ta,
                            bin(g, WEFT_ELEMWISE_DIV, un(g, WEFT_ELEMWISE_EXP, a), b));
    weft_ofg_options_t o = WEFT_OFG_OPTIONS_INIT;
    o.inline_expand = true;
    const weft_op_t *op = NULL;
    OK(weft_ofg_create(g, 2, (weft_var_t *[]){a, b}, 1, &inner, &o, &op));
    weft_apply_t *node = NULL;
    OKV(node = weft_apply_create(g, op, 2, in));
    return weft_apply_output(node, 0);
}

#define V1(fill) {1, 0, 0}, {{NSPEC, 0}}, {fill}
#define SQ {NV, NV}
/* k = 1000: more than one of OpenBLAS's k blocks */
#define GEMM_SHAPES \
    {2, 2, 2}, {{64, 96}, {64, 1000}, {1000, 96}}, {FILL_OUTER, FILL_SPREAD, FILL_SPREAD}

static const fm_case_t cases[] = {
    {"local_add_zero", "Add", 1, V1(FILL_OUTER), b_add_zero},
    {"local_mul_zero", "Mul", 1, V1(FILL_OUTER), b_mul_zero},
    {"local_sub_self", "Sub", 1, V1(FILL_OUTER), b_sub_self},
    {"local_exp_log", "Log", 1, V1(FILL_OUTER), b_exp_log},
    {"local_log_exp", "Log", 1, V1(FILL_OUTER), b_log_exp},
    {"local_div_mul_cancel", "Div", 2, {1, 1}, {{NSPEC}, {NSPEC}}, {FILL_OUTER, FILL_INNER},
     b_div_mul},
    {"local_mul_div_cancel", "Div", 2, {1, 1}, {{NSPEC}, {NSPEC}}, {FILL_OUTER, FILL_INNER},
     b_mul_div},
    {"local_sum_broadcastable", "Sum", 1, {2}, {{1, NSPEC}}, {FILL_OUTER}, b_sum_axis_one},
    {"local_gemm (z + dot)", "Dot", 3, GEMM_SHAPES, b_gemm_add},
    {"local_gemm (z - s * dot)", "Dot", 3, GEMM_SHAPES, b_gemm_sub},
    {"local_mul_one, local_neg_neg", NULL, 2, {1, 1}, {{NSPEC}, {NSPEC}},
     {FILL_OUTER, FILL_INNER}, b_mul_one_neg_neg},
    {"local_dimshuffle_dimshuffle", NULL, 2, {2, 2}, {SQ, SQ}, {FILL_OUTER, FILL_INNER},
     b_transpose_twice},
    {"local_reduce_grad_sink", NULL, 2, {1, 1}, {{NSPEC}, {NSPEC}}, {FILL_OUTER, FILL_INNER},
     b_reduce_grad},
    {"constant_folding, merge, fusion, inplace", NULL, 2, {2, 2}, {SQ, SQ},
     {FILL_OUTER, FILL_INNER}, b_fold_merge_fuse},
    {"inline_ofg_expansion", NULL, 2, {1, 1}, {{NSPEC}, {NSPEC}}, {FILL_OUTER, FILL_INNER},
     b_inline_ofg},
};

static double fill_value(fill_t fill, const double *sp, size_t i)
{
    if (fill == FILL_OUTER) return sp[(i / NV) % NV];
    if (fill == FILL_INNER) return sp[i % NV];
    if (i % 97 == 5) return i % 2 ? -0.0 : 0.0;
    return (double)((i * 7919u) % 2001u) / 1000.0 - 1.0 + 1.0 / 3.0;
}

static weft_tensor_t *filled(weft_dtype_t dt, int ndim, const int64_t *shape, fill_t fill)
{
    weft_tensor_t *t = NULL;
    assert_int_equal(weft_tensor_empty(dt, ndim, shape, &t), WEFT_OK);
    const double *sp = dt == WEFT_FLOAT64 ? special64 : special32;
    size_t n = weft_tensor_size(t);
    for (size_t i = 0; i < n; i++) {
        double v = fill_value(fill, sp, i);
        if (dt == WEFT_FLOAT64)
            ((double *)weft_tensor_data(t))[i] = v;
        else
            ((float *)weft_tensor_data(t))[i] = (float)v;
    }
    return t;
}

static weft_function_t *compile(weft_var_t *const *in, size_t n_in, weft_var_t *out,
                                const char *mode, size_t n_ex, const char *const *ex)
{
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.mode = mode;
    o.threads = 2;
    o.n_exclude = n_ex;
    o.exclude = ex;
    weft_function_t *f = NULL;
    weft_status_t st = weft_function_compile(n_in, in, 1, &out, 0, NULL, &o, &f);
    if (st != WEFT_OK) print_message("%s\n", weft_function_last_error(NULL));
    assert_int_equal(st, WEFT_OK);
    return f;
}

static weft_tensor_t *call(weft_function_t *f, weft_tensor_t *const *in, size_t n_in)
{
    weft_tensor_t *r = NULL;
    weft_status_t st = weft_function_call(f, n_in, in, 1, &r);
    if (st != WEFT_OK) print_message("%s\n", weft_function_last_error(f));
    assert_int_equal(st, WEFT_OK);
    return r;
}

static void program_text(const weft_function_t *f, char *buf, size_t cap)
{
    memset(buf, 0, cap);
    FILE *m = fmemopen(buf, cap - 1, "w");
    assert_non_null(m);
    assert_int_equal(weft_function_print(f, m), WEFT_OK);
    fclose(m);
}

/* Bit-for-bit equality, naming the first differing element. */
static void assert_same_bits(const fm_case_t *c, weft_dtype_t dt, const weft_tensor_t *want,
                             const weft_tensor_t *got)
{
    assert_true(weft_tensor_same_shape(want, got));
    size_t isz = weft_dtype_size(dt), n = weft_tensor_size(want);
    const unsigned char *a = weft_tensor_data(want), *b = weft_tensor_data(got);
    for (size_t i = 0; i < n; i++) {
        if (memcmp(a + i * isz, b + i * isz, isz) == 0) continue;
        print_message("%s (%s): element %zu: none %.17g, fast_run without fast_math %.17g\n",
                      c->rewrite, weft_dtype_name(dt), i, weft_tensor_flat_get(want, i),
                      weft_tensor_flat_get(got, i));
        fail();
    }
}

/* f's result equals want bit for bit, on a first call and on a second one
 * (which reuses buffers, in place where the rewrite chose it). */
static void assert_calls_match(const fm_case_t *c, weft_dtype_t dt, weft_function_t *f,
                               weft_tensor_t *const *val, const weft_tensor_t *want)
{
    for (int rep = 0; rep < 2; rep++) {
        weft_tensor_t *got = call(f, val, (size_t)c->n_in);
        assert_same_bits(c, dt, want, got);
        weft_tensor_release(got);
    }
}

/* c->gone is in the program without fast_math (unfused) and not with it. */
static void assert_fires(const fm_case_t *c, weft_function_t *fast, weft_function_t *slow)
{
    char pf[2048], ps[2048];
    program_text(fast, pf, sizeof pf);
    program_text(slow, ps, sizeof ps);
    if (!strstr(ps, c->gone) || strstr(pf, c->gone))
        print_message("%s: with fast_math:\n%swithout:\n%s", c->rewrite, pf, ps);
    assert_non_null(strstr(ps, c->gone));
    assert_null(strstr(pf, c->gone));
}

/* Mode none vs fast_run without fast_math, fused (Composites) and unfused
 * (the in-place kernels themselves); and, for a tagged rewrite, fast_run
 * with it. */
static void check_case(const fm_case_t *c, weft_dtype_t dt)
{
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    static const char *const names[3] = {"x", "y", "z"};
    weft_var_t *in[3];
    weft_tensor_t *val[3];
    for (int k = 0; k < c->n_in; k++) {
        const weft_type_t *t;
        assert_int_equal(weft_type_tensor(g, dt, c->ndim[k], c->shape[k], &t), WEFT_OK);
        assert_non_null(in[k] = weft_var_create(g, t, names[k]));
        val[k] = filled(dt, c->ndim[k], c->shape[k], c->fill[k]);
    }
    weft_var_t *out = c->build(g, in);
    const char *no_fusion[] = {"fusion"}, *no_fm[] = {"fast_math", "fusion"};
    size_t n = (size_t)c->n_in;
    weft_function_t *none = compile(in, n, out, "none", 0, NULL);
    weft_function_t *fused = compile(in, n, out, "fast_run", 1, no_fm);
    weft_function_t *unfused = compile(in, n, out, "fast_run", 2, no_fm);
    weft_tensor_t *want = call(none, val, n);
    assert_calls_match(c, dt, fused, val, want);
    assert_calls_match(c, dt, unfused, val, want);
    if (c->gone) {
        weft_function_t *fast = compile(in, n, out, "fast_run", 1, no_fusion);
        assert_fires(c, fast, unfused);
        assert_int_equal(weft_function_destroy(fast), WEFT_OK);
    }
    weft_tensor_release(want);
    for (int k = 0; k < c->n_in; k++) weft_tensor_release(val[k]);
    assert_int_equal(weft_function_destroy(none), WEFT_OK);
    assert_int_equal(weft_function_destroy(fused), WEFT_OK);
    assert_int_equal(weft_function_destroy(unfused), WEFT_OK);
    weft_graph_destroy(g);
}

static void test_fast_math_excluded_gives_mode_none_bits_float64(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) check_case(&cases[i], WEFT_FLOAT64);
}

static void test_fast_math_excluded_gives_mode_none_bits_float32(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) check_case(&cases[i], WEFT_FLOAT32);
}

/* What the tag guards against: with it, these rewrites do change bits. */
static weft_var_t *l_div(weft_graph_t *g, weft_var_t *x)
{
    return weft_div(g, weft_constant_scalar(g, WEFT_FLOAT64, 0.556543), x);
}

/* gemv(x, 1, A, v, 1) = x + A @ v, A (n, 2) and v constants (n <= 121) */
static weft_var_t *l_gemv(weft_graph_t *g, weft_var_t *x)
{
    int64_t n = weft_type_dim(weft_var_type(x), 0), sa[2] = {n, 2}, sv[1] = {2};
    double a[242], v[2] = {1.0 / 3.0, -0.7};
    assert_true(n <= 121);
    for (int64_t i = 0; i < 2 * n; i++) a[i] = 0.3 + 0.01 * (double)i;
    const weft_type_t *ta, *tv;
    OK(weft_type_tensor(g, WEFT_FLOAT64, 2, sa, &ta));
    OK(weft_type_tensor(g, WEFT_FLOAT64, 1, sv, &tv));
    weft_var_t *one = weft_constant_scalar(g, WEFT_FLOAT64, 1.0), *y;
    OKV(y = weft_gemv(g, x, one, weft_constant_create(g, ta, a, (size_t)(2 * n) * sizeof *a),
                      weft_constant_create(g, tv, v, sizeof v), one, false));
    return y;
}

/* sum(f(x)) over a mutable x in a strided or transposed layout: the in-place
 * rewrite may write f(x) into x, but a reduction's summation order follows
 * its input's strides, so a result in x's layout would sum in another order
 * than mode none's fresh C-ordered one (differential seed 6 case 13517, seed 3
 * case 15649). */
static void check_inplace_layout(weft_var_t *(*build)(weft_graph_t *, weft_var_t *), int nd,
                                 const int64_t *shape, const int64_t *strides, int64_t span,
                                 const char *what)
{
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    const weft_type_t *t;
    assert_int_equal(weft_type_tensor(g, WEFT_FLOAT64, nd, shape, &t), WEFT_OK);
    weft_var_t *x = weft_var_create(g, t, "x"), *out;
    OKV(out = weft_sum(g, build(g, x), 0, NULL, false));
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    const bool mut[1] = {true};
    const char *no_fm[] = {"fast_math", "fusion"};
    o.input_mutable = mut;
    weft_function_t *f[3] = {NULL, NULL, NULL};
    for (int m = 0; m < 3; m++) {
        o.mode = m ? "fast_run" : "none";
        o.n_exclude = (size_t)m;
        o.exclude = no_fm;
        OK(weft_function_compile(1, &x, 1, &out, 0, NULL, &o, &f[m]));
    }
    double *buf = test_calloc((size_t)span, sizeof *buf), r[3];
    for (int m = 0; m < 3; m++) {
        for (int64_t i = 0; i < span; i++) buf[i] = 0.5 + (double)((i * 7919) % 2001) / 700.0;
        weft_tensor_t *in = NULL, *res = NULL;
        int64_t first = 0; /* element [0,..] of a view with negative strides */
        for (int d = 0; d < nd; d++) first += strides[d] < 0 ? (shape[d] - 1) * -strides[d] : 0;
        OK(weft_tensor_from_data(WEFT_FLOAT64, nd, shape, strides, buf + first, &in));
        OK(weft_function_call(f[m], 1, &in, 1, &res));
        r[m] = *(const double *)weft_tensor_data(res);
        weft_tensor_release(res);
        weft_tensor_release(in);
        if (m && memcmp(&r[0], &r[m], sizeof r[0]))
            print_message("%s, %s: none %.17g, fast_run without fast_math %.17g\n", what,
                          m == 1 ? "fused" : "unfused", r[0], r[m]);
        assert_memory_equal(&r[0], &r[m], sizeof r[0]);
        OK(weft_function_destroy(f[m]));
    }
    test_free(buf);
    weft_graph_destroy(g);
}

static void test_fast_math_excluded_in_place_on_strided_input_gives_mode_none_bits(void **state)
{
    (void)state;
    check_inplace_layout(l_div, 2, (int64_t[]){1, 121}, (int64_t[]){242, 2}, 242,
                         "div, every other element");
    check_inplace_layout(l_div, 2, (int64_t[]){8, 3}, (int64_t[]){1, 8}, 24, "div, transposed");
    check_inplace_layout(l_gemv, 1, (int64_t[]){121}, (int64_t[]){2}, 242,
                         "gemv, every other element");
    check_inplace_layout(l_gemv, 1, (int64_t[]){121}, (int64_t[]){-1}, 121, "gemv, reversed");
}

static void test_fast_math_rewrites_change_ieee_results(void **state)
{
    (void)state;
    static const struct {
        const char *what;
        build_fn build;
        double x, want_none, want_fast;
    } ex[] = {
        {"inf - inf", b_sub_self, INFINITY, NAN, 0.0},
        {"exp(log(-1))", b_exp_log, -1.0, NAN, -1.0},
        {"NaN * 0", b_mul_zero, NAN, NAN, 0.0},
        {"log(exp(710))", b_log_exp, 710.0, INFINITY, 710.0},
        {"-0.0 + 0", b_add_zero, -0.0, 0.0, -0.0},
    };
    for (size_t i = 0; i < sizeof ex / sizeof *ex; i++) {
        weft_graph_t *g = NULL;
        assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
        const weft_type_t *t;
        assert_int_equal(weft_type_tensor(g, WEFT_FLOAT64, 0, NULL, &t), WEFT_OK);
        weft_var_t *x = NULL;
        assert_non_null(x = weft_var_create(g, t, "x"));
        weft_var_t *out = ex[i].build(g, &x);
        weft_function_t *none = compile(&x, 1, out, "none", 0, NULL);
        weft_function_t *fast = compile(&x, 1, out, "fast_run", 0, NULL);
        weft_tensor_t *tx = NULL;
        assert_int_equal(weft_tensor_full(WEFT_FLOAT64, 0, NULL, ex[i].x, &tx), WEFT_OK);
        weft_tensor_t *rn = call(none, &tx, 1), *rf = call(fast, &tx, 1);
        double vn = *(double *)weft_tensor_data(rn), vf = *(double *)weft_tensor_data(rf);
        print_message("%s: none %g, fast_run %g\n", ex[i].what, vn, vf);
        assert_true(isnan(ex[i].want_none) ? isnan(vn) : vn == ex[i].want_none);
        assert_true(vf == ex[i].want_fast && signbit(vf) == signbit(ex[i].want_fast));
        weft_tensor_release(rn);
        weft_tensor_release(rf);
        weft_tensor_release(tx);
        weft_function_destroy(none);
        weft_function_destroy(fast);
        weft_graph_destroy(g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fast_math_excluded_gives_mode_none_bits_float64),
        cmocka_unit_test(test_fast_math_excluded_gives_mode_none_bits_float32),
        cmocka_unit_test(test_fast_math_excluded_in_place_on_strided_input_gives_mode_none_bits),
        cmocka_unit_test(test_fast_math_rewrites_change_ieee_results),
    };
    return cmocka_run_group_tests_name("function_fast_math", tests, NULL, NULL);
}
