/* The IfElse rewrites (docs/control-flow.md §3), each applied alone to an
 * fgraph, then all of fast_run through compiled functions: the resulting
 * structure, and the values of both branches unchanged; ifelse_inplace
 * making the then side a view, and refused where the DestroyHandler must. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "weft/weft.h"

static weft_graph_t *g;
static const int64_t S8[1] = {8};

static int setup(void **state)
{
    (void)state;
    return weft_graph_create(NULL, &g) == WEFT_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    weft_graph_destroy(g);
    return 0;
}

static weft_var_t *var(const char *name, int nd)
{
    const weft_type_t *t;
    assert_int_equal(weft_type_tensor(g, WEFT_FLOAT64, nd, S8, &t), WEFT_OK);
    weft_var_t *v = weft_var_create(g, t, name);
    assert_non_null(v);
    return v;
}

/* Applies the built-in rewriter `name` to an fgraph of inputs -> outputs
 * (no clone) and returns it. */
static weft_fgraph_t *rewrite(const char *name, size_t n_in, weft_var_t *const *in, size_t n_out,
                              weft_var_t *const *out)
{
    weft_fgraph_options_t o = WEFT_FGRAPH_OPTIONS_INIT;
    o.clone = false;
    weft_fgraph_t *fg = NULL;
    assert_int_equal(weft_fgraph_create(g, n_in, in, n_out, out, &o, NULL, &fg), WEFT_OK);
    weft_rewriter_t *rw = NULL;
    assert_int_equal(weft_rewriter_builtin_create(name, &rw), WEFT_OK);
    assert_int_equal(weft_rewriter_apply(rw, fg, NULL), WEFT_OK);
    weft_rewriter_release(rw);
    return fg;
}

static const char *owner_class(const weft_var_t *v)
{
    const weft_apply_t *a = weft_var_owner(v);
    return a ? weft_op_name(weft_apply_op(a)) : "(root)";
}

static void test_constant_cond(void **state)
{
    (void)state;
    weft_var_t *x = var("x", 1), *y = var("y", 1);
    for (int truth = 0; truth < 2; truth++) {
        weft_var_t *c = weft_constant_scalar(g, WEFT_BOOL, truth);
        weft_var_t *t = weft_tanh(g, x), *e = weft_neg(g, y);
        weft_var_t *out = weft_ifelse1(g, c, t, e), *in[2] = {x, y};
        weft_fgraph_t *fg = rewrite("ifelse_constant_cond", 2, in, 1, &out);
        assert_ptr_equal(weft_fgraph_output(fg, 0), truth ? t : e);
        weft_fgraph_destroy(fg);
    }
}

static void test_same_branches(void **state)
{
    (void)state;
    weft_var_t *x = var("x", 1), *y = var("y", 1), *c = var("c", 0);
    weft_var_t *t = weft_tanh(g, x), *tv[2] = {t, x}, *ev[2] = {t, y}, *o[2];
    assert_non_null(weft_ifelse(g, c, 2, tv, ev, o));
    weft_var_t *in[3] = {x, y, c};
    weft_fgraph_t *fg = rewrite("ifelse_same_branches", 3, in, 2, o);
    assert_ptr_equal(weft_fgraph_output(fg, 0), t); /* collapsed */
    assert_string_equal(owner_class(weft_fgraph_output(fg, 1)), "IfElse"); /* kept */
    weft_fgraph_destroy(fg);
}

static void test_merge(void **state)
{
    (void)state;
    weft_var_t *x = var("x", 1), *y = var("y", 1), *c = var("c", 0), *d = var("d", 0);
    weft_var_t *a = weft_ifelse1(g, c, weft_tanh(g, x), y);
    weft_var_t *b = weft_ifelse1(g, c, x, weft_neg(g, y));
    weft_var_t *other = weft_ifelse1(g, d, x, y);      /* another condition: kept apart */
    weft_var_t *dep = weft_ifelse1(g, c, weft_tanh(g, a), x); /* depends on a: kept apart */
    weft_var_t *outs[4] = {a, b, other, dep}, *in[4] = {x, y, c, d};
    weft_fgraph_t *fg = rewrite("ifelse_merge", 4, in, 4, outs);
    weft_var_t *na = weft_fgraph_output(fg, 0), *nb = weft_fgraph_output(fg, 1);
    assert_string_equal(owner_class(na), "IfElse");
    assert_ptr_equal(weft_var_owner(na), weft_var_owner(nb)); /* one node, two pairs */
    assert_int_equal(weft_apply_n_outputs(weft_var_owner(na)), 2);
    assert_ptr_equal(weft_fgraph_output(fg, 2), other);
    assert_int_equal(weft_apply_n_outputs(weft_var_owner(weft_fgraph_output(fg, 3))), 1);
    weft_fgraph_destroy(fg);
}

static void test_lift(void **state)
{
    (void)state;
    weft_var_t *x = var("x", 1), *y = var("y", 1), *c = var("c", 0), *d = var("d", 0);
    weft_var_t *p = weft_ifelse1(g, c, x, y), *q = weft_ifelse1(g, c, weft_tanh(g, y), x);
    weft_var_t *s = weft_add(g, p, q);
    /* refused: two conditions */
    weft_var_t *r = weft_mul(g, weft_ifelse1(g, c, x, y), weft_ifelse1(g, d, x, y));
    weft_var_t *outs[2] = {s, r}, *in[4] = {x, y, c, d};
    weft_fgraph_t *fg = rewrite("ifelse_lift_elemwise", 4, in, 2, outs);
    weft_var_t *ns = weft_fgraph_output(fg, 0);
    assert_string_equal(owner_class(ns), "IfElse");
    const weft_apply_t *ie = weft_var_owner(ns);
    assert_ptr_equal(weft_apply_input(ie, 0), c);
    assert_string_equal(owner_class(weft_apply_input(ie, 1)), "Add"); /* x + tanh(y) */
    assert_string_equal(owner_class(weft_apply_input(ie, 2)), "Add"); /* y + x */
    assert_string_equal(owner_class(weft_fgraph_output(fg, 1)), "Mul");
    weft_fgraph_destroy(fg);
}

/* fast_run keeps the values of both branches (the evaluator on the
 * original graph as the reference) with all four rewrites applicable. */
static void test_fast_run_values(void **state)
{
    (void)state;
    weft_var_t *x = var("x", 1), *y = var("y", 1), *c = var("c", 0);
    weft_var_t *p = weft_ifelse1(g, c, x, y), *q = weft_ifelse1(g, c, weft_tanh(g, y), x);
    weft_var_t *k = weft_ifelse1(g, weft_constant_scalar(g, WEFT_INT8, 1), x, y);
    weft_var_t *same = weft_ifelse1(g, c, y, y);
    weft_var_t *s = weft_mul(g, weft_add(g, p, q), weft_add(g, k, same)), *in[3] = {x, y, c};
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.threads = 2;
    weft_function_t *f = NULL;
    assert_int_equal(weft_function_compile(3, in, 1, &s, 0, NULL, &o, &f), WEFT_OK);
    weft_tensor_t *xv = NULL, *yv = NULL;
    assert_int_equal(weft_tensor_zeros(WEFT_FLOAT64, 1, S8, &xv), WEFT_OK);
    assert_int_equal(weft_tensor_zeros(WEFT_FLOAT64, 1, S8, &yv), WEFT_OK);
    for (int i = 0; i < 8; i++) {
        ((double *)weft_tensor_data(xv))[i] = i * 0.5;
        ((double *)weft_tensor_data(yv))[i] = i - 4.0;
    }
    for (int taken = 0; taken < 2; taken++) {
        weft_tensor_t *cv = NULL, *got = NULL, *want = NULL;
        assert_int_equal(weft_tensor_full(WEFT_FLOAT64, 0, NULL, taken, &cv), WEFT_OK);
        weft_tensor_t *vals[3] = {xv, yv, cv};
        assert_int_equal(weft_function_call(f, 3, vals, 1, &got), WEFT_OK);
        assert_int_equal(weft_eval(g, 3, in, vals, 1, &s, &want), WEFT_OK);
        for (size_t i = 0; i < 8; i++)
            assert_true(weft_tensor_flat_get(got, i) == weft_tensor_flat_get(want, i));
        weft_tensor_release(got);
        weft_tensor_release(want);
        weft_tensor_release(cv);
    }
    weft_tensor_release(xv);
    weft_tensor_release(yv);
    weft_function_destroy(f);
}

/* Entries of the view_map of v's owner (an IfElse here). */
static size_t n_views(const weft_var_t *v)
{
    const weft_op_alias_t *e;
    size_t n = 99;
    weft_op_view_map(weft_apply_op(weft_var_owner(v)), &e, &n);
    return n;
}

/* Constructors build IfElse{as_view=0} (PyTensor's ifelse()); the
 * ifelse_inplace rewrite (cond_make_inplace) makes the then side a view. */
static void test_inplace_view(void **state)
{
    (void)state;
    weft_var_t *x = var("x", 1), *c = var("c", 0);
    weft_var_t *in[2] = {x, c}, *tv[2] = {weft_tanh(g, x), weft_exp(g, x)};
    weft_var_t *ev[2] = {weft_neg(g, x), x}, *o[2];
    assert_non_null(weft_ifelse(g, c, 2, tv, ev, o));
    assert_int_equal(n_views(o[0]), 0);
    weft_fgraph_t *fg = rewrite("ifelse_inplace", 2, in, 2, o);
    weft_var_t *y = weft_fgraph_output(fg, 0);
    assert_string_equal(owner_class(y), "IfElse");
    assert_int_equal(n_views(y), 2);
    const weft_op_alias_t *e;
    size_t n;
    weft_op_view_map(weft_apply_op(weft_var_owner(y)), &e, &n);
    assert_int_equal(e[0].output, 0);
    assert_int_equal(e[0].input, 1);
    assert_int_equal(e[1].output, 1);
    assert_int_equal(e[1].input, 2);
    assert_ptr_equal(weft_var_owner(weft_fgraph_output(fg, 1)), weft_var_owner(y));
    weft_fgraph_destroy(fg);
}

/* y = IfElse(c, a, b), z = Neg{destroys a}(a), w = y + z: a view y of a
 * would be read after z overwrote a, so the DestroyHandler refuses the
 * view and y keeps its copy. */
static void test_inplace_view_refused(void **state)
{
    (void)state;
    weft_var_t *x = var("x", 1), *c = var("c", 0), *b = var("b", 1);
    weft_var_t *a = weft_mul(g, x, x), *y = weft_ifelse1(g, c, a, b), *z = weft_neg(g, a);
    const weft_op_t *nop = weft_apply_op(weft_var_owner(z)), *iop = NULL;
    assert_int_equal(weft_op_class(nop)->inplace_variant(g, nop, 0, &iop), WEFT_OK);
    weft_var_t *za = weft_apply_output(weft_apply_create(g, iop, 1, &a), 0);
    weft_var_t *w = weft_add(g, y, za), *in[3] = {x, c, b};
    weft_fgraph_options_t fo = WEFT_FGRAPH_OPTIONS_INIT;
    fo.clone = false;
    weft_fgraph_t *fg = NULL;
    assert_int_equal(weft_fgraph_create(g, 3, in, 1, &w, &fo, NULL, &fg), WEFT_OK);
    assert_int_equal(weft_dh_attach(fg, NULL), WEFT_OK);
    weft_rewriter_t *rw = NULL;
    assert_int_equal(weft_rewriter_builtin_create("ifelse_inplace", &rw), WEFT_OK);
    assert_int_equal(weft_rewriter_apply(rw, fg, NULL), WEFT_OK);
    weft_rewriter_release(rw);
    assert_ptr_equal(weft_var_owner(y), weft_var_owner(weft_apply_input(weft_var_owner(
                                            weft_fgraph_output(fg, 0)), 0)));
    assert_int_equal(n_views(y), 0);
    weft_fgraph_destroy(fg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_constant_cond, setup, teardown),
        cmocka_unit_test_setup_teardown(test_same_branches, setup, teardown),
        cmocka_unit_test_setup_teardown(test_merge, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lift, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fast_run_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_inplace_view, setup, teardown),
        cmocka_unit_test_setup_teardown(test_inplace_view_refused, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
