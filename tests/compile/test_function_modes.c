/* Compiled functions with the rewrite modes (needs lib/rewrite and the
 * elementwise ops): fast_compile merges, fast_run rewrites in place without
 * touching protected inputs, update outputs computed in place in their
 * state (the update_inplace rewrite, excluded by name or tag),
 * include/exclude, and mode errors. */
#define _POSIX_C_SOURCE 200809L /* fmemopen */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "compile_test_ops.h"

static weft_graph_t *g;
static const int64_t S4[1] = {4};

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

static weft_var_t *un(weft_elemwise_kind_t k, weft_var_t *x)
{
    weft_var_t *y;
    assert_non_null(y = weft_unary(g, k, x));
    return y;
}

static weft_var_t *bin(weft_elemwise_kind_t k, weft_var_t *a, weft_var_t *b)
{
    weft_var_t *y;
    assert_non_null(y = weft_binary(g, k, a, b));
    return y;
}

static weft_function_t *compile_mode(const char *mode, size_t n_in, weft_var_t **in, size_t n_out,
                                     weft_var_t **out, size_t n_upd, const weft_update_t *upd,
                                     const bool *mutable_in)
{
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.mode = mode;
    o.threads = 2;
    o.input_mutable = mutable_in;
    weft_function_t *f = NULL;
    weft_status_t st = weft_function_compile(n_in, in, n_out, out, n_upd, upd, &o, &f);
    if (st != WEFT_OK) print_message("%s\n", weft_function_last_error(NULL));
    assert_int_equal(st, WEFT_OK);
    return f;
}

static void program_text(const weft_function_t *f, char *buf, size_t cap)
{
    memset(buf, 0, cap);
    FILE *m = fmemopen(buf, cap - 1, "w");
    assert_int_equal(weft_function_print(f, m), WEFT_OK);
    fclose(m);
}

static void test_modes_fast_compile_merges_duplicates(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S4);
    weft_var_t *y = bin(WEFT_ELEMWISE_ADD, un(WEFT_ELEMWISE_EXP, x), un(WEFT_ELEMWISE_EXP, x));
    weft_function_t *none = compile_mode("none", 1, &x, 1, &y, 0, NULL, NULL);
    weft_function_t *fc = compile_mode("fast_compile", 1, &x, 1, &y, 0, NULL, NULL);
    assert_int_equal(weft_function_n_nodes(none), 3);
    assert_int_equal(weft_function_n_nodes(fc), 2);
    weft_tensor_t *tx = ct_tensor(1, S4, 0.0), *y1 = NULL, *y2 = NULL;
    assert_int_equal(weft_function_call(none, 1, &tx, 1, &y1), WEFT_OK);
    assert_int_equal(weft_function_call(fc, 1, &tx, 1, &y2), WEFT_OK);
    for (size_t i = 0; i < 4; i++) {
        assert_true(weft_tensor_flat_get(y1, i) == 2.0 * exp((double)i));
        assert_true(weft_tensor_flat_get(y2, i) == weft_tensor_flat_get(y1, i));
    }
    weft_tensor_release(y1);
    weft_tensor_release(y2);
    weft_tensor_release(tx);
    weft_function_destroy(none);
    weft_function_destroy(fc);
}

/* fast_run works in place on intermediates, never on the protected input:
 * e = exp(x) is read twice (so not fused away): the Mul, its last reader,
 * overwrites e; tanh(-e) is one Composite. */
static void test_modes_fast_run_inplace_never_touches_protected_input(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S4), *e = un(WEFT_ELEMWISE_EXP, x), *z;
    weft_var_t *y = un(WEFT_ELEMWISE_TANH, un(WEFT_ELEMWISE_NEG, e));
    assert_non_null(z = weft_mul(g, x, e));
    weft_var_t *outs[2] = {y, z};
    weft_function_t *f = compile_mode("fast_run", 1, &x, 2, outs, 0, NULL, NULL);
    char text[2048];
    program_text(f, text, sizeof text);
    assert_non_null(strstr(text, "Composite{Tanh(Neg(i0))")); /* the chain on e, fused */
    assert_non_null(strstr(text, "inplace=1}(x, Exp.out)")); /* e overwritten, not x */
    weft_tensor_t *tx = ct_tensor(1, S4, 0.5), *o[2] = {NULL, NULL};
    for (int c = 0; c < 3; c++) {
        assert_int_equal(weft_function_call(f, 1, &tx, 2, o), WEFT_OK);
        for (size_t i = 0; i < 4; i++) {
            double xi = 0.5 + (double)i;
            assert_true(weft_tensor_flat_get(tx, i) == xi); /* caller's buffer intact */
            assert_true(fabs(weft_tensor_flat_get(o[0], i) - tanh(-exp(xi))) < 1e-12);
            assert_true(weft_tensor_flat_get(o[1], i) == xi * exp(xi));
        }
        weft_tensor_release(o[0]);
        weft_tensor_release(o[1]);
        o[0] = o[1] = NULL;
    }
    weft_tensor_release(tx);
    weft_function_destroy(f);
}

/* s <- s + x under fast_run: the update runs in s's buffer, no copy node. */
static void test_modes_fast_run_update_runs_in_place(void **state)
{
    (void)state;
    weft_var_t *s = ct_var(g, "s", 1, S4), *x = ct_var(g, "x", 1, S4);
    weft_var_t *y = un(WEFT_ELEMWISE_SQR, s);
    weft_update_t upd = {s, bin(WEFT_ELEMWISE_ADD, s, x)};
    weft_var_t *in[2] = {s, x};
    weft_function_t *f = compile_mode("fast_run", 2, in, 1, &y, 1, &upd, NULL);
    char text[2048];
    program_text(f, text, sizeof text);
    assert_non_null(strstr(text, "Add{inplace=0}(s, x)"));
    assert_null(strstr(text, "DeepCopyOp"));
    weft_tensor_t *ts = ct_tensor(1, S4, 0.0), *tx = ct_tensor(1, S4, 1.0);
    weft_tensor_t *ty = ct_tensor(1, S4, 0);
    for (int c = 1; c <= 3; c++) {
        weft_tensor_t *ins[2] = {ts, tx};
        double old1 = weft_tensor_flat_get(ts, 1);
        assert_int_equal(weft_function_call(f, 2, ins, 1, &ty), WEFT_OK);
        assert_true(weft_tensor_flat_get(ty, 1) == old1 * old1); /* read the old s */
        assert_true(weft_tensor_flat_get(ts, 1) == 1.0 + c * 2.0);
        assert_true(weft_tensor_flat_get(tx, 1) == 2.0);
    }
    weft_tensor_release(ts);
    weft_tensor_release(tx);
    weft_tensor_release(ty);
    weft_function_destroy(f);
}

/* s <- s + exp(x), s also read by y = s^2 (fusion excluded to keep the Add):
 * the update_inplace rewrite gives the Add s's buffer, no copy; excluded by
 * name, inplace alone makes the Add overwrite exp(x) (its last reader) and
 * the new s is copied back; with the "inplace" tag excluded nothing is in
 * place. Every variant computes the same values. */
static void test_modes_update_inplace_excluded_by_name_or_tag(void **state)
{
    (void)state;
    weft_var_t *s = ct_var(g, "s", 1, S4), *x = ct_var(g, "x", 1, S4);
    weft_var_t *y = un(WEFT_ELEMWISE_SQR, s), *in[2] = {s, x};
    weft_update_t upd = {s, bin(WEFT_ELEMWISE_ADD, s, un(WEFT_ELEMWISE_EXP, x))};
    const char *ex[3][2] = {{"fusion", NULL}, {"fusion", "update_inplace"}, {"fusion", "inplace"}};
    const char *want[3] = {"Add{inplace=0}(s, Exp.out)", "Add{inplace=1}(s, Exp.out)",
                           "Add(s, Exp.out)"};
    for (int c = 0; c < 3; c++) {
        weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
        o.mode = "fast_run";
        o.threads = 2;
        o.n_exclude = ex[c][1] ? 2 : 1;
        o.exclude = ex[c];
        weft_function_t *f = NULL;
        assert_int_equal(weft_function_compile(2, in, 1, &y, 1, &upd, &o, &f), WEFT_OK);
        char text[2048];
        program_text(f, text, sizeof text);
        assert_non_null(strstr(text, want[c]));
        if (c == 0) assert_null(strstr(text, "DeepCopyOp"));
        if (c > 0) assert_null(strstr(text, "Add{inplace=0}")); /* s is not destroyed */
        if (c == 2) assert_null(strstr(text, "inplace="));
        weft_tensor_t *ts = ct_tensor(1, S4, 0.0), *tx = ct_tensor(1, S4, 0.5), *ty = NULL;
        for (int call = 0; call < 3; call++) {
            weft_tensor_t *ins[2] = {ts, tx};
            double old[4];
            for (size_t i = 0; i < 4; i++) old[i] = weft_tensor_flat_get(ts, i);
            assert_int_equal(weft_function_call(f, 2, ins, 1, &ty), WEFT_OK);
            for (size_t i = 0; i < 4; i++) {
                double xi = 0.5 + (double)i;
                assert_true(weft_tensor_flat_get(ty, i) == old[i] * old[i]); /* the old s */
                assert_true(weft_tensor_flat_get(ts, i) == old[i] + exp(xi));
                assert_true(weft_tensor_flat_get(tx, i) == xi);
            }
            weft_tensor_release(ty);
            ty = NULL;
        }
        weft_tensor_release(ts);
        weft_tensor_release(tx);
        weft_function_destroy(f);
    }
}

static void test_modes_exclude_inplace_and_unknown_include(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S4);
    weft_var_t *y = un(WEFT_ELEMWISE_NEG, un(WEFT_ELEMWISE_EXP, x));
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    const char *ex[1] = {"inplace"}, *inc[1] = {"no_such_rewrite"};
    o.mode = "fast_run";
    o.n_exclude = 1;
    o.exclude = ex;
    weft_function_t *f = NULL;
    assert_int_equal(weft_function_compile(1, &x, 1, &y, 0, NULL, &o, &f), WEFT_OK);
    char text[2048];
    program_text(f, text, sizeof text);
    assert_null(strstr(text, "inplace"));
    weft_function_destroy(f);
    o.n_exclude = 0;
    o.n_include = 1;
    o.include = inc;
    f = NULL;
    assert_int_equal(weft_function_compile(1, &x, 1, &y, 0, NULL, &o, &f), WEFT_ENOTFOUND);
    assert_null(f);
    assert_non_null(strstr(weft_function_last_error(NULL), "no_such_rewrite"));
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_modes_fast_compile_merges_duplicates),
        T(test_modes_fast_run_inplace_never_touches_protected_input),
        T(test_modes_fast_run_update_runs_in_place),
        T(test_modes_update_inplace_excluded_by_name_or_tag),
        T(test_modes_exclude_inplace_and_unknown_include),
    };
    return cmocka_run_group_tests_name("function_modes", tests, NULL, NULL);
}
