/* Printing: the exact dprint tree (shared subtrees printed once, then
 * referred to by id), deep chains (depth shown as a number past 32 levels),
 * multi-output and constant leaves, fgraph dprint with its inputs, and
 * Graphviz dot. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "graph_fixture.h"

/* Runs the printer into a temporary file and returns its text (static buffer). */
static const char *slurp(FILE *f)
{
    static char buf[16384];
    rewind(f);
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void test_print_dprint_exact_tree_with_shared_subtree(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *y = fx_var(f, "y");
    weft_var_t *e = fx_un(f, f->exp, x);     /* apply 0, var 2 */
    weft_var_t *a = fx_bin(f, f->add, e, y); /* apply 1, var 3 */
    weft_var_t *z = fx_bin(f, f->mul, a, e); /* apply 2, var 4 */
    assert_int_equal(weft_var_set_name(z, "z"), WEFT_OK);
    FILE *t = tmpfile();
    assert_non_null(t);
    assert_int_equal(weft_graph_dprint(1, &z, t), WEFT_OK);
    assert_string_equal(slurp(t), "Mul [id 2] 'z'\n"
                                  " |Add [id 1]\n"
                                  " | |Exp [id 0]\n"
                                  " | | |x [id v0]\n"
                                  " | |y [id v1]\n"
                                  " |Exp [id 0] (see above)\n");
}

static void test_print_dprint_multi_output_and_constants(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *c; /* var 0 */
    weft_apply_t *s;
    assert_non_null(s = weft_apply_create(f->g, f->split, 1, &x)); /* apply 0 */
    double d[3] = {1.5, 2, 3};
    assert_non_null(c = weft_constant_create(f->g, f->vec3, d, sizeof(d)));           /* v3 */
    weft_var_t *z = fx_bin(f, f->add, weft_apply_output(s, 1), c);                    /* apply 1 */
    weft_var_t *outs[2] = {z, weft_apply_output(s, 0)};
    FILE *t = tmpfile();
    assert_int_equal(weft_graph_dprint(2, outs, t), WEFT_OK);
    assert_string_equal(slurp(t), "Add [id 1]\n"
                                  " |Split.1 [id 0]\n"
                                  " | |x [id v0]\n"
                                  " |[1.5, 2, 3] [id v3]\n"
                                  "Split.0 [id 0] (see above)\n");
}

/* A 200,000-node chain prints one line per node; lines deeper than 32 levels
 * show their depth instead of more bars, so the text stays linear (19 MB, not
 * 40 GB). The lines at the start, at the bar limit and at the end. */
static void test_print_dprint_deep_chain_is_linear(void **state)
{
    fx_t *f = *state;
    enum { N = 200000 };
    weft_var_t *v = fx_var(f, "x");
    for (int k = 0; k < N; k++) v = fx_un(f, f->neg, v); /* apply k */
    FILE *t = tmpfile();
    assert_non_null(t);
    assert_int_equal(weft_graph_dprint(1, &v, t), WEFT_OK);
    rewind(t);
    char bars[65], line[256], want[256], prev[256] = "", last[256] = "";
    memset(bars, 0, sizeof(bars));
    for (int d = 0; d < 32; d++) memcpy(bars + 2 * d, " |", 2);
    long n = 0;
    while (fgets(line, sizeof(line), t)) {
        assert_non_null(strchr(line, '\n')); /* every line fits: none is 400,000 bars */
        n++;
        if (n == 1) {
            snprintf(want, sizeof(want), "Neg [id %d]\n", N - 1);
            assert_string_equal(line, want);
        }
        if (n == 33) { /* depth 32: the last line with bars only */
            snprintf(want, sizeof(want), "%sNeg [id %d]\n", bars, N - 33);
            assert_string_equal(line, want);
        }
        if (n == 34) {
            snprintf(want, sizeof(want), "%s(depth 33) Neg [id %d]\n", bars, N - 34);
            assert_string_equal(line, want);
        }
        memcpy(prev, last, sizeof(prev));
        memcpy(last, line, sizeof(last));
    }
    fclose(t);
    assert_int_equal(n, N + 1);
    snprintf(want, sizeof(want), "%s(depth %d) Neg [id 0]\n", bars, N - 1);
    assert_string_equal(prev, want);
    snprintf(want, sizeof(want), "%s(depth %d) x [id v0]\n", bars, N);
    assert_string_equal(last, want);
}

static void test_print_fgraph_dprint_lists_inputs(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *y = fx_var(f, "y");
    weft_var_t *z = fx_un(f, f->neg, x); /* apply 0 */
    weft_var_t *in[2] = {x, y};
    weft_fgraph_t *fg = fx_fgraph(f, 2, in, 1, &z, false, 0, NULL);
    FILE *t = tmpfile();
    assert_int_equal(weft_fgraph_dprint(fg, t), WEFT_OK);
    assert_string_equal(slurp(t), "Neg [id 0]\n"
                                  " |x [id v0]\n"
                                  "Inputs:\n"
                                  " x [id v0]\n"
                                  " y [id v1]\n");
    weft_fgraph_destroy(fg);
}

static void test_print_dot_has_boxes_ellipses_and_dashed_orderings(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *a = fx_un(f, f->exp, x), *b = fx_un(f, f->neg, x);
    weft_var_t *outs[2] = {a, b};
    rec_t *r = rec_new();
    weft_feature_t *feats[1] = {&r->base};
    weft_fgraph_t *fg = fx_fgraph(f, 1, &x, 2, outs, false, 1, feats);
    r->ord_before[0] = weft_var_owner(b);
    r->ord_after[0] = weft_var_owner(a);
    r->n_ord = 1;
    FILE *t = tmpfile();
    assert_int_equal(weft_fgraph_dot(fg, t), WEFT_OK);
    const char *dot = slurp(t);
    assert_non_null(strstr(dot, "digraph fgraph {\n"));
    assert_non_null(strstr(dot, "  v0 [shape=ellipse, label=\"x\"];\n"));
    assert_non_null(strstr(dot, "  a0 [shape=box, label=\"Exp\"];\n"));
    assert_non_null(strstr(dot, "  v0 -> a0 [label=\"0\"];\n"));
    assert_non_null(strstr(dot, "  a0 -> v1;\n"));
    assert_non_null(strstr(dot, "  a1 -> a0 [style=dashed];\n"));
    assert_non_null(strstr(dot, "  out1 [shape=plaintext, label=\"output 1\"];\n"));
    assert_non_null(strstr(dot, "}\n"));
    weft_fgraph_destroy(fg);
}

static void test_print_bad_arguments(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x");
    assert_int_equal(weft_graph_dprint(1, &x, NULL), WEFT_EINVAL);
    assert_int_equal(weft_graph_dprint(0, &x, stdout), WEFT_EINVAL);
    assert_int_equal(weft_fgraph_dprint(NULL, stdout), WEFT_EINVAL);
    assert_int_equal(weft_fgraph_dot(NULL, stdout), WEFT_EINVAL);
    char buf[8];
    assert_int_equal(weft_var_print(NULL, buf, sizeof(buf)), 6);
    assert_string_equal(buf, "<null>");
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_print_dprint_exact_tree_with_shared_subtree),
        T(test_print_dprint_multi_output_and_constants),
        T(test_print_dprint_deep_chain_is_linear),
        T(test_print_fgraph_dprint_lists_inputs),
        T(test_print_dot_has_boxes_ellipses_and_dashed_orderings),
        T(test_print_bad_arguments),
    };
    return cmocka_run_group_tests_name("print", tests, NULL, NULL);
}
