/* Rewrites never change a shape, drop a broadcast or change a dtype
 * (docs/rewrites.md §1.2, §5). One case (or more) per built-in node rewrite,
 * on broadcasting inputs: static length 1 beside unknown lengths, integer
 * inputs beside float constants, empty operands. Each case is compiled in
 * mode none, in none with only the rewrite under test (plus
 * constant_dimshuffle, which turns padded scalar constants into the constants
 * the rewrites look for) and in fast_run; the three calls must give the same
 * output shape, dtype and values. The rewrite alone is also applied to an
 * fgraph of the case, counting how often it fired, so each case shows that
 * it reached the rewrite (fires > 0) or that the rewrite declined. A user's
 * pattern rewriter gets the same guard. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "reduce/reduce_ops_int.h"
#include "rw_fixture.h"
#include "weft/rewrite_db.h"
#include "weft/rewrite_pattern.h"

#define U WEFT_DIM_UNKNOWN

typedef weft_var_t *(*build_fn)(weft_graph_t *g, weft_var_t **in);

/* An input: dtype, static shape, run-time shape; null: an empty tensor
 * with NULL data (weft_tensor_from_data allows it). */
typedef struct in_spec {
    weft_dtype_t dt;
    int nd;
    int64_t stat[2], run[2];
    bool null;
} in_spec_t;

typedef struct shape_case {
    const char *rewrite;
    build_fn build;
    int n_in;
    in_spec_t in[3];
    uint64_t fires; /* times the rewrite applies when run alone */
} shape_case_t;

/* ---- the expressions ------------------------------------------------------------ */

static weft_var_t *scalar_bin(weft_graph_t *g, weft_elemwise_kind_t k, weft_var_t *x, double v)
{
    return weft_binary(g, k, x, weft_constant_scalar(g, WEFT_FLOAT64, v));
}

static weft_var_t *b_add_zero(weft_graph_t *g, weft_var_t **in)
{
    return scalar_bin(g, WEFT_ELEMWISE_ADD, in[0], 0.0);
}

static weft_var_t *b_mul_one(weft_graph_t *g, weft_var_t **in)
{
    return scalar_bin(g, WEFT_ELEMWISE_MUL, in[0], 1.0);
}

static weft_var_t *b_mul_zero(weft_graph_t *g, weft_var_t **in)
{
    return scalar_bin(g, WEFT_ELEMWISE_MUL, in[0], 0.0);
}

static weft_var_t *b_neg_neg(weft_graph_t *g, weft_var_t **in)
{
    return weft_neg(g, weft_neg(g, in[0]));
}

/* A Cast node to x's own dtype (weft_cast would return x itself). */
static weft_var_t *b_cast_same(weft_graph_t *g, weft_var_t **in)
{
    const weft_op_t *op;
    weft_dtype_t dt = weft_type_dtype(weft_var_type(in[0]));
    assert_int_equal(weft_elemwise_op(g, WEFT_ELEMWISE_CAST, -1, dt, &op), WEFT_OK);
    return weft_op_call(g, op, 1, in);
}

static weft_var_t *b_sub_self(weft_graph_t *g, weft_var_t **in)
{
    return weft_sub(g, in[0], in[0]);
}

static weft_var_t *b_exp_log(weft_graph_t *g, weft_var_t **in)
{
    return weft_exp(g, weft_log(g, in[0]));
}

static weft_var_t *b_log_exp(weft_graph_t *g, weft_var_t **in)
{
    return weft_log(g, weft_exp(g, in[0]));
}

static weft_var_t *b_transpose2(weft_graph_t *g, weft_var_t **in)
{
    return weft_transpose(g, weft_transpose(g, in[0]));
}

static weft_var_t *b_sum_axis0(weft_graph_t *g, weft_var_t **in)
{
    int ax = 0;
    return weft_sum(g, in[0], 1, &ax, false);
}

/* ReduceGrad{Sum over axis 1}(x, gz) * y, as weft_grad builds it. */
static weft_var_t *b_reduce_grad_mul(weft_graph_t *g, weft_var_t **in)
{
    weft__reduce_props_t p = {WEFT_REDUCE_SUM, 2, 2u, 0};
    weft_var_t *r;
    assert_int_equal(weft__reduce_grad_build(g, &p, in[0], in[1], __FILE__, __LINE__, &r), WEFT_OK);
    return weft_mul(g, r, in[2]);
}

/* z + 2 * dot(x, y) */
static weft_var_t *b_gemm(weft_graph_t *g, weft_var_t **in)
{
    return weft_add(g, in[0], scalar_bin(g, WEFT_ELEMWISE_MUL, weft_dot(g, in[1], in[2]), 2.0));
}

static weft_var_t *b_tanh_add(weft_graph_t *g, weft_var_t **in)
{
    return weft_tanh(g, weft_add(g, in[0], in[1]));
}

static weft_var_t *b_div_mul(weft_graph_t *g, weft_var_t **in)
{
    return weft_div(g, weft_mul(g, in[0], in[1]), in[1]);
}

static weft_var_t *b_mul_div(weft_graph_t *g, weft_var_t **in)
{
    return weft_mul(g, weft_div(g, in[0], in[1]), in[1]);
}

/* ---- the cases ------------------------------------------------------------------ */

#define F64 WEFT_FLOAT64
#define I32 WEFT_INT32
#define V(dt, s, r) {dt, 1, {s, 0}, {r, 0}, false}
#define M(dt, s0, s1, r0, r1) {dt, 2, {s0, s1}, {r0, r1}, false}
#define EMPTY(r0, r1) {F64, 2, {U, U}, {r0, r1}, true}

static const shape_case_t cases[] = {
    {"local_add_zero", b_add_zero, 1, {V(F64, U, 5)}, 1},
    {"local_add_zero", b_add_zero, 1, {V(I32, U, 5)}, 0},     /* the sum is float64 */
    {"local_mul_one", b_mul_one, 1, {M(F64, 1, U, 1, 4)}, 1},
    {"local_mul_one", b_mul_one, 1, {V(I32, 1, 1)}, 0},
    {"local_mul_zero", b_mul_zero, 1, {V(F64, U, 5)}, 1},     /* Second(x, 0): [5] */
    {"local_mul_zero", b_mul_zero, 1, {M(I32, U, 1, 5, 1)}, 1}, /* float64 zeros */
    {"local_neg_neg", b_neg_neg, 1, {M(F64, 1, U, 1, 4)}, 1},
    {"local_useless_cast", b_cast_same, 1, {M(I32, U, 1, 3, 1)}, 1},
    {"local_sub_self", b_sub_self, 1, {V(F64, U, 5)}, 1},
    {"local_sub_self", b_sub_self, 1, {M(I32, 1, U, 1, 4)}, 1},
    {"local_exp_log", b_exp_log, 1, {M(F64, 1, U, 1, 4)}, 1},
    {"local_log_exp", b_log_exp, 1, {M(F64, U, 1, 3, 1)}, 1},
    {"local_dimshuffle_dimshuffle", b_transpose2, 1, {M(F64, 1, U, 1, 4)}, 1},
    {"local_sum_broadcastable", b_sum_axis0, 1, {M(F64, 1, U, 1, 4)}, 1},
    {"local_reduce_grad_sink", b_reduce_grad_mul, 3,
     {M(F64, U, U, 3, 4), V(F64, U, 3), M(F64, U, U, 3, 4)}, 1},
    {"local_gemm", b_gemm, 3, {M(F64, 1, U, 1, 3), M(F64, U, U, 2, 4), M(F64, U, U, 4, 3)}, 1},
    {"local_gemm", b_gemm, 3, {M(F64, U, U, 2, 3), EMPTY(2, 0), EMPTY(0, 3)}, 1}, /* k = 0 */
    {"local_gemm", b_gemm, 3, {M(F64, U, 1, 0, 1), EMPTY(0, 2), M(F64, U, U, 2, 3)}, 1}, /* m = 0 */
    /* a product of static length 1 that the addition broadcasts: not folded */
    {"local_gemm", b_gemm, 3, {M(F64, U, U, 3, 2), M(F64, 1, U, 1, 4), M(F64, U, U, 4, 2)}, 0},
    {"local_gemm", b_gemm, 3, {M(F64, 1, U, 1, 2), M(F64, 1, U, 1, 4), M(F64, U, U, 4, 2)}, 1},
    {"local_elemwise_fusion", b_tanh_add, 2, {M(F64, 1, U, 1, 4), M(F64, U, U, 3, 4)}, 1},
    {"local_div_mul_cancel", b_div_mul, 2, {V(F64, 1, 1), V(F64, U, 4)}, 0}, /* y widens x */
    {"local_div_mul_cancel", b_div_mul, 2, {V(F64, U, 4), V(F64, 1, 1)}, 1},
    {"local_div_mul_cancel", b_div_mul, 2, {V(I32, U, 4), V(F64, U, 4)}, 1}, /* Cast(x) */
    {"local_mul_div_cancel", b_mul_div, 2, {V(F64, 1, 1), V(F64, U, 4)}, 0},
    {"local_mul_div_cancel", b_mul_div, 2, {M(F64, U, U, 2, 4), M(F64, 1, U, 1, 4)}, 1},
};

/* ---- running a case ------------------------------------------------------------- */

static weft_tensor_t *case_value(const in_spec_t *s, size_t k)
{
    weft_tensor_t *t = NULL;
    if (s->null) {
        assert_int_equal(weft_tensor_from_data(s->dt, s->nd, s->run, NULL, NULL, &t), WEFT_OK);
        return t;
    }
    assert_int_equal(weft_tensor_empty(s->dt, s->nd, s->run, &t), WEFT_OK);
    for (size_t e = 0; e < weft_tensor_size(t); e++) { /* positive, distinct, exact */
        int64_t idx[2] = {s->nd == 2 ? (int64_t)e / s->run[1] : (int64_t)e,
                          s->nd == 2 ? (int64_t)e % s->run[1] : 0};
        assert_int_equal(weft_tensor_set(t, idx, 1.0 + (double)((e * 7 + k * 3) % 11) / 4),
                         WEFT_OK);
    }
    return t;
}

static weft_tensor_t *call(size_t n_in, weft_var_t **in, weft_tensor_t **vals, weft_var_t *out,
                           const char *mode, size_t n_include, const char *const *include)
{
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.mode = mode;
    o.n_include = n_include;
    o.include = include;
    o.threads = 1;
    weft_function_t *fn = NULL;
    weft_status_t st = weft_function_compile(n_in, in, 1, &out, 0, NULL, &o, &fn);
    if (st != WEFT_OK) fprintf(stderr, "compile: %s\n", weft_function_last_error(NULL));
    assert_int_equal(st, WEFT_OK);
    weft_tensor_t *r = NULL;
    st = weft_function_call(fn, n_in, vals, 1, &r);
    if (st != WEFT_OK) fprintf(stderr, "call: %s\n", weft_function_last_error(fn));
    assert_int_equal(st, WEFT_OK);
    weft_function_destroy(fn);
    return r;
}

/* Same output type (dtype and shape) and values as mode none's; prints the
 * difference (a failing case does not hide the next ones). */
static bool same(const shape_case_t *c, const weft_tensor_t *got, const weft_tensor_t *want,
                 const char *how)
{
    char a[64], b[64];
    weft_tensor_print_type(got, a, sizeof a);
    weft_tensor_print_type(want, b, sizeof b);
    bool ok = strcmp(a, b) == 0;
    for (size_t e = 0; ok && e < weft_tensor_size(want); e++) {
        double x = weft_tensor_flat_get(got, e), y = weft_tensor_flat_get(want, e);
        ok = fabs(x - y) <= 1e-12 * (1.0 + fabs(y));
    }
    if (!ok) fprintf(stderr, "%s (%s): %s, mode none gives %s\n", c->rewrite, how, a, b);
    return ok;
}

/* How often the rewrite fires when applied alone to an fgraph of the case
 * (this edits the user graph: run it after compiling). */
static uint64_t fired(rfx_t *f, const shape_case_t *c, weft_var_t **in, weft_var_t *out,
                      const char *const *include)
{
    weft_fgraph_t *fg = rfx_fgraph(f, (size_t)c->n_in, in, 1, &out, false);
    weft_rewriter_t *rw;
    assert_int_equal(weft_rewrite_db_query(weft_rewrite_db_default(), "none", 2, include, 0,
                                           NULL, &rw), WEFT_OK);
    uint64_t n = rfx_apply_count(rw, fg, c->rewrite);
    weft_rewriter_release(rw);
    weft_fgraph_destroy(fg);
    return n;
}

static bool run_case(rfx_t *f, const shape_case_t *c)
{
    weft_var_t *in[3], *out = NULL;
    weft_tensor_t *vals[3];
    for (int i = 0; i < c->n_in; i++) {
        const weft_type_t *t;
        assert_int_equal(weft_type_tensor(f->g, c->in[i].dt, c->in[i].nd, c->in[i].stat, &t),
                         WEFT_OK);
        in[i] = rfx_var(f, t, NULL);
        vals[i] = case_value(&c->in[i], (size_t)i);
    }
    assert_non_null(out = c->build(f->g, in));
    const char *include[2] = {c->rewrite, "constant_dimshuffle"};
    size_t n = (size_t)c->n_in;
    weft_tensor_t *ref = call(n, in, vals, out, "none", 0, NULL);
    weft_tensor_t *alone = call(n, in, vals, out, "none", 2, include);
    weft_tensor_t *fast = call(n, in, vals, out, "fast_run", 0, NULL);
    bool ok_alone = same(c, alone, ref, "alone"); /* both report their mismatches */
    bool ok = same(c, fast, ref, "fast_run") && ok_alone;
    uint64_t got = fired(f, c, in, out, include);
    if (got != c->fires) {
        fprintf(stderr, "%s fired %llu times, expected %llu\n", c->rewrite,
                (unsigned long long)got, (unsigned long long)c->fires);
        ok = false;
    }
    weft_tensor_release(ref);
    weft_tensor_release(alone);
    weft_tensor_release(fast);
    rfx_release(n, vals);
    return ok;
}

static void test_rewrite_shapes_every_builtin_keeps_shape_and_dtype(void **state)
{
    rfx_t *f = *state;
    size_t bad = 0, n = sizeof cases / sizeof cases[0];
    for (size_t i = 0; i < n; i++) bad += !run_case(f, &cases[i]);
    if (bad) fprintf(stderr, "%zu of %zu cases differ from mode none\n", bad, n);
    assert_int_equal(bad, 0);
}

/* ---- a user's pattern -------------------------------------------------------- */

/* How often the pattern (Mul x y) -> y fires on x * y for these types. */
static uint64_t mul_to_second_fires(rfx_t *f, const int64_t *sx, const int64_t *sy)
{
    const weft_type_t *tx, *ty;
    assert_int_equal(weft_type_tensor(f->g, WEFT_FLOAT64, 1, sx, &tx), WEFT_OK);
    assert_int_equal(weft_type_tensor(f->g, WEFT_FLOAT64, 1, sy, &ty), WEFT_OK);
    weft_var_t *in[2] = {rfx_var(f, tx, "x"), rfx_var(f, ty, "y")};
    weft_var_t *out = rfx_bin(f, WEFT_ELEMWISE_MUL, in[0], in[1]);
    weft_fgraph_t *fg = rfx_fgraph(f, 2, in, 1, &out, false);
    weft_pattern_desc_t d = WEFT_PATTERN_DESC_INIT;
    d.name = "mul_to_second";
    d.in_pattern = "(Mul x y)";
    d.out_pattern = "y";
    weft_rewriter_t *rw;
    assert_int_equal(weft_rewriter_pattern_create(&d, &rw), WEFT_OK);
    uint64_t n = rfx_apply_count(rw, fg, "mul_to_second");
    weft_rewriter_release(rw);
    weft_fgraph_destroy(fg);
    return n;
}

/* A user's pattern gets the same guard: y of static length 1 may not stand
 * in for x * y when x's length is unknown (it may be longer); y of unknown
 * length may (without run-time broadcasting both have the output's length). */
static void test_rewrite_shapes_user_pattern_may_not_drop_a_broadcast(void **state)
{
    rfx_t *f = *state;
    assert_int_equal(mul_to_second_fires(f, (int64_t[]){U}, (int64_t[]){1}), 0);
    assert_int_equal(mul_to_second_fires(f, (int64_t[]){U}, (int64_t[]){U}), 1);
    assert_int_equal(mul_to_second_fires(f, (int64_t[]){1}, (int64_t[]){1}), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, rfx_setup, rfx_teardown)
        T(test_rewrite_shapes_every_builtin_keeps_shape_and_dtype),
        T(test_rewrite_shapes_user_pattern_may_not_drop_a_broadcast),
#undef T
    };
    return cmocka_run_group_tests_name("rewrite_shapes", tests, NULL, NULL);
}
