/* local_elemwise_fusion (weft/composite.h): which producers a chain absorbs
 * (single-client, same type, out of place), the program it builds, the
 * 16-step cap, and that fused graphs compute the unfused values bit for bit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "rw_fixture.h"
#include "weft/composite.h"
#include "weft/elemwise.h"
#include "weft/rewrite.h"
#include "weft/rewrite_db.h"

/* Runs the fusion rewriter alone on fg; returns how often it applied. */
static uint64_t fuse(weft_fgraph_t *fg)
{
    weft_rewriter_t *node, *walk;
    assert_int_equal(weft_rewriter_builtin_create("local_elemwise_fusion", &node), WEFT_OK);
    assert_int_equal(weft_rewriter_walk_create("fusion_walk", WEFT_WALK_OUT2IN, true, 1, &node,
                                               &walk),
                     WEFT_OK);
    uint64_t applied = rfx_apply_count(walk, fg, "local_elemwise_fusion");
    weft_rewriter_release(walk);
    assert_int_equal(weft_fgraph_check_integrity(fg), WEFT_OK);
    return applied;
}

static void assert_bit_equal(const weft_tensor_t *a, const weft_tensor_t *b)
{
    assert_true(weft_tensor_same_shape(a, b));
    for (size_t i = 0; i < weft_tensor_size(a); i++)
        assert_true(weft_tensor_flat_get(a, i) == weft_tensor_flat_get(b, i));
}

/* Fuses outs over in, checks the printed graph, and that the fused graph
 * evaluates exactly as the original expression. */
static void check_fused(rfx_t *f, size_t n_in, weft_var_t **in, size_t n_out, weft_var_t **outs,
                        uint64_t want_applied, const char *want)
{
    weft_tensor_t *vals[4], *ref[4], *got[4];
    rfx_random_inputs(f, n_in, in, vals, 0.5, 2.0);
    rfx_eval(f, n_in, in, vals, n_out, outs, ref);
    weft_fgraph_t *fg = rfx_fgraph(f, n_in, in, n_out, outs, false);
    assert_int_equal(fuse(fg), want_applied);
    char buf[1024];
    rfx_fg_expr(fg, buf, sizeof buf);
    assert_string_equal(buf, want);
    rfx_eval_fgraph(f, fg, n_in, in, vals, got);
    for (size_t k = 0; k < n_out; k++) assert_bit_equal(got[k], ref[k]);
    rfx_release(n_out, got);
    rfx_release(n_out, ref);
    rfx_release(n_in, vals);
    weft_fgraph_destroy(fg);
}

/* tanh(x + b) * y, b broadcast (its DimShuffle is not elementwise): one node. */
static void test_fusion_chain_becomes_one_composite(void **state)
{
    rfx_t *f = *state;
    weft_var_t *x = rfx_var(f, f->m34, "x"), *y = rfx_var(f, f->m34, "y");
    weft_var_t *b = rfx_var(f, f->v4, "b");
    weft_var_t *out = rfx_bin(f, WEFT_ELEMWISE_MUL, rfx_un(f, WEFT_ELEMWISE_TANH,
                                                   rfx_bin(f, WEFT_ELEMWISE_ADD, x, b)), y);
    weft_var_t *in[3] = {x, b, y};
    check_fused(f, 3, in, 1, &out, 1,
                "Composite{(Tanh((i0 + i1)) * i2)}(x, DimShuffle{order=(x,0)}(b), y)");
}

/* e = exp(x) read twice stays a node; an input used twice is one register. */
static void test_fusion_keeps_multi_client_values(void **state)
{
    rfx_t *f = *state;
    weft_var_t *x = rfx_var(f, f->m34, "x");
    weft_var_t *e = rfx_un(f, WEFT_ELEMWISE_EXP, x);
    weft_var_t *out = rfx_bin(f, WEFT_ELEMWISE_ADD, rfx_un(f, WEFT_ELEMWISE_TANH, e), e);
    check_fused(f, 1, &x, 1, &out, 1, "Composite{(Tanh(i0) + i0)}(Exp(x))");
}

/* An output is materialized even with a single consumer. */
static void test_fusion_keeps_outputs(void **state)
{
    rfx_t *f = *state;
    weft_var_t *x = rfx_var(f, f->m34, "x"), *y = rfx_var(f, f->m34, "y");
    weft_var_t *s = rfx_bin(f, WEFT_ELEMWISE_SUB, x, y);
    weft_var_t *t = rfx_un(f, WEFT_ELEMWISE_SIN, rfx_un(f, WEFT_ELEMWISE_SQR, s));
    weft_var_t *in[2] = {x, y}, *outs[2] = {s, t};
    check_fused(f, 2, in, 2, outs, 1, "Sub(x, y); Composite{Sin(Sqr(i0))}(Sub(x, y))");
}

/* exp(c) of a (1, 4) row feeding a (3, 4) product is not absorbed (it would
 * be recomputed per row); a lone node is left alone; int32 fuses too. */
static void test_fusion_skips_broadcast_producers_and_lone_nodes(void **state)
{
    rfx_t *f = *state;
    weft_var_t *x = rfx_var(f, f->m34, "x"), *c = rfx_var(f, f->m14, "c");
    weft_var_t *out = rfx_bin(f, WEFT_ELEMWISE_MUL, x, rfx_un(f, WEFT_ELEMWISE_EXP, c));
    weft_var_t *in[2] = {x, c};
    check_fused(f, 2, in, 1, &out, 0, "Mul(x, Exp(c))");
    weft_var_t *i = rfx_var(f, f->i34, "i");
    weft_var_t *io = rfx_bin(f, WEFT_ELEMWISE_MUL, rfx_un(f, WEFT_ELEMWISE_NEG, i), i);
    check_fused(f, 1, &i, 1, &io, 1, "Composite{(Neg(i0) * i0)}(i)");
}

/* 20 Sin steps: the last 16 are one Composite, the first 4 another. */
static void test_fusion_caps_programs_at_16_steps(void **state)
{
    rfx_t *f = *state;
    weft_var_t *x = rfx_var(f, f->m34, "x"), *v = x;
    for (int k = 0; k < 20; k++) v = rfx_un(f, WEFT_ELEMWISE_SIN, v);
    weft_tensor_t *val[1], *ref[1], *got[1];
    rfx_random_inputs(f, 1, &x, val, 0.5, 2.0);
    rfx_eval(f, 1, &x, val, 1, &v, ref);
    weft_fgraph_t *fg = rfx_fgraph(f, 1, &x, 1, &v, false);
    assert_int_equal(fuse(fg), 2);
    assert_int_equal(weft_fgraph_n_applies(fg), 2);
    weft_apply_t *last = weft_var_owner(weft_fgraph_output(fg, 0));
    size_t n_steps = 0;
    assert_true(weft_composite_op_info(weft_apply_op(last), NULL, &n_steps, NULL, NULL));
    assert_int_equal(n_steps, 16);
    weft_apply_t *first = weft_var_owner(weft_apply_input(last, 0));
    assert_true(weft_composite_op_info(weft_apply_op(first), NULL, &n_steps, NULL, NULL));
    assert_int_equal(n_steps, 4);
    assert_ptr_equal(weft_apply_input(first, 0), x);
    rfx_eval_fgraph(f, fg, 1, &x, val, got);
    assert_bit_equal(got[0], ref[0]);
    rfx_release(1, got);
    rfx_release(1, ref);
    rfx_release(1, val);
    weft_fgraph_destroy(fg);
}

/* In fast_run (whose walker revisits new nodes) a value read twice inside
 * one expression still fuses, computed once; excluding "fusion" keeps the
 * chain. */
static void test_fusion_in_fast_run_and_excluded_by_tag(void **state)
{
    rfx_t *f = *state;
    weft_var_t *x = rfx_var(f, f->m34, "x"), *y = rfx_var(f, f->m34, "y");
    weft_var_t *e = rfx_un(f, WEFT_ELEMWISE_EXP, x);
    weft_var_t *out = rfx_bin(f, WEFT_ELEMWISE_MUL, rfx_un(f, WEFT_ELEMWISE_TANH, e), y);
    weft_var_t *in[2] = {x, y};
    weft_fgraph_t *fg = rfx_fgraph(f, 2, in, 1, &out, false);
    assert_int_equal(weft_rewrite_mode(fg, "fast_run", 0, NULL, 0, NULL, NULL), WEFT_OK);
    char buf[512];
    rfx_fg_expr(fg, buf, sizeof buf);
    assert_string_equal(buf, "Composite{(Tanh(Exp(i0)) * i1)}(x, y)");
    weft_fgraph_destroy(fg);
    weft_var_t *e2 = rfx_un(f, WEFT_ELEMWISE_EXP, x);
    weft_var_t *out2 = rfx_bin(f, WEFT_ELEMWISE_ADD, rfx_un(f, WEFT_ELEMWISE_TANH, e2), e2);
    fg = rfx_fgraph(f, 1, &x, 1, &out2, false);
    assert_int_equal(weft_rewrite_mode(fg, "fast_run", 0, NULL, 0, NULL, NULL), WEFT_OK);
    rfx_fg_expr(fg, buf, sizeof buf);
    /* fusion revisits the Composite it built: Exp(x) now has one client
     * and joins as one step read twice (printed as a tree) */
    assert_string_equal(buf, "Composite{(Tanh(Exp(i0)) + Exp(i0))}(x)");
    weft_fgraph_destroy(fg);
    const char *ex[] = {"fusion"};
    fg = rfx_fgraph(f, 2, in, 1, &out, false);
    assert_int_equal(weft_rewrite_mode(fg, "fast_run", 0, NULL, 1, ex, NULL), WEFT_OK);
    rfx_fg_expr(fg, buf, sizeof buf);
    assert_string_equal(buf, "Mul{inplace=0}(Tanh{inplace=0}(Exp(x)), y)");
    weft_fgraph_destroy(fg);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, rfx_setup, rfx_teardown)
    const struct CMUnitTest tests[] = {
        T(test_fusion_chain_becomes_one_composite),
        T(test_fusion_keeps_multi_client_values),
        T(test_fusion_keeps_outputs),
        T(test_fusion_skips_broadcast_producers_and_lone_nodes),
        T(test_fusion_caps_programs_at_16_steps),
        T(test_fusion_in_fast_run_and_excluded_by_tag),
    };
    return cmocka_run_group_tests_name("rewrite_fusion", tests, NULL, NULL);
}
