/* Verbose rewriting through the compile options (weft_function_options_t
 * rewrite_log / rewrite_hook): each replacement a rewrite commits, one exact
 * line naming the rewriter, the node replaced with its creation site and the
 * replacement. */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "weft/weft.h"

static weft_graph_t *g;

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

/* y = exp(x * 1.0) + 0.0; lines[0..2]: where Mul, Exp and Add were built,
 * lines[3]: where x was. */
static weft_var_t *build(weft_var_t **x, int lines[4])
{
    const weft_type_t *t;
    assert_int_equal(weft_type_tensor(g, WEFT_FLOAT64, 1, NULL, &t), WEFT_OK);
    lines[3] = __LINE__ + 1;
    *x = weft_var_create(g, t, "x");
    weft_var_t *one = weft_constant_scalar(g, WEFT_FLOAT64, 1.0);
    weft_var_t *zero = weft_constant_scalar(g, WEFT_FLOAT64, 0.0);
    /* One statement per op: the expected lines tell their creation sites apart. */
    lines[0] = __LINE__ + 1;
    weft_var_t *m = weft_mul(g, *x, one);
    lines[1] = __LINE__ + 1;
    weft_var_t *e = weft_exp(g, m);
    lines[2] = __LINE__ + 1;
    weft_var_t *y = weft_add(g, e, zero);
    assert_string_equal(weft_graph_error_message(g), "");
    assert_non_null(y);
    return y;
}

static void test_rewrite_log_writes_one_line_per_replacement(void **state)
{
    (void)state;
    weft_var_t *x;
    int lines[4];
    weft_var_t *y = build(&x, lines);
    char *text = NULL;
    size_t len = 0;
    FILE *log = open_memstream(&text, &len);
    assert_non_null(log);
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.mode = "fast_run";
    o.threads = 1;
    o.rewrite_log = log;
    weft_function_t *f = NULL;
    assert_int_equal(weft_function_compile(1, &x, 1, &y, 0, NULL, &o, &f), WEFT_OK);
    fclose(log);
    char want[2048];
    const char *F = __FILE__;
    snprintf(want, sizeof(want),
             "rewriting: rewrite constant_dimshuffle replaces DimShuffle{order=(x)}.out of apply 0 "
             "(DimShuffle{order=(x)}, built at %s:%d) with [1] (created at %s:%d)\n"
             "rewriting: rewrite constant_dimshuffle replaces DimShuffle{order=(x)}.out of apply 3 "
             "(DimShuffle{order=(x)}, built at %s:%d) with [0] (created at %s:%d)\n"
             "rewriting: rewrite local_mul_one replaces Mul.out of apply 1 (Mul, built at %s:%d) "
             "with x (created at %s:%d)\n"
             "rewriting: rewrite local_add_zero replaces Add.out of apply 4 (Add, built at %s:%d) "
             "with Exp.out of apply 2 (Exp, built at %s:%d)\n",
             F, lines[0], F, lines[0], F, lines[2], F, lines[2], F, lines[0], F, lines[3], F,
             lines[2], F, lines[1]);
    assert_string_equal(text, want);
    free(text);
    weft_function_destroy(f);
}

typedef struct seen {
    char reasons[256];
    size_t n;
} seen_t;

static void hook(void *user, weft_fgraph_t *fg, const char *reason, weft_var_t *old_var,
                 weft_var_t *new_var)
{
    seen_t *s = user;
    assert_non_null(fg);
    assert_ptr_not_equal(old_var, new_var);
    size_t len = strlen(s->reasons);
    snprintf(s->reasons + len, sizeof(s->reasons) - len, "%s;", reason);
    s->n++;
}

/* The callback wins over the FILE*, and nothing is reported after the compile. */
static void test_rewrite_hook_receives_each_replacement(void **state)
{
    (void)state;
    weft_var_t *x;
    int lines[4];
    weft_var_t *y = build(&x, lines);
    seen_t s = {{0}, 0};
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.threads = 1;
    o.rewrite_log = stderr;
    o.rewrite_hook = hook;
    o.rewrite_hook_user = &s;
    weft_function_t *f = NULL;
    assert_int_equal(weft_function_compile(1, &x, 1, &y, 0, NULL, &o, &f), WEFT_OK);
    assert_string_equal(s.reasons,
                        "constant_dimshuffle;constant_dimshuffle;local_mul_one;local_add_zero;");
    assert_int_equal(s.n, 4);
    weft_function_destroy(f);
    /* Mode none runs no rewrite: nothing to report. */
    s = (seen_t){{0}, 0};
    o.mode = "none";
    assert_int_equal(weft_function_compile(1, &x, 1, &y, 0, NULL, &o, &f), WEFT_OK);
    assert_int_equal(s.n, 0);
    weft_function_destroy(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_rewrite_log_writes_one_line_per_replacement, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_rewrite_hook_receives_each_replacement, setup,
                                        teardown),
    };
    return cmocka_run_group_tests_name("rewrite_log", tests, NULL, NULL);
}
