/* Graph-layer utilities: the one-line printer (weft_fgraph_str), the
 * variable listing with its clients map (weft_fgraph_variables), and op
 * cloning (weft_op_clone). */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "graph_fixture.h"

/* weft_fgraph_str into a fixed buffer; checks the reported length. */
static const char *str_of(weft_fgraph_t *fg)
{
    static char buf[512];
    size_t len = 0;
    assert_int_equal(weft_fgraph_str(fg, buf, sizeof(buf), &len), WEFT_OK);
    assert_int_equal(len, strlen(buf));
    return buf;
}

static weft_fgraph_t *plain_fgraph(fx_t *f, size_t n_in, weft_var_t *const *in, size_t n_out,
                                   weft_var_t *const *out)
{
    return fx_fgraph(f, n_in, in, n_out, out, false, 0, NULL);
}

static void test_fgraph_str_nested_expression_reads_as_calls(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *w = fx_var(f, "W"), *b = fx_var(f, "b");
    weft_var_t *in[] = {x, w, b};
    weft_var_t *y = fx_un(f, f->exp, fx_bin(f, f->add, fx_bin(f, f->mul, x, w), b));
    weft_fgraph_t *fg = plain_fgraph(f, 3, in, 1, &y);
    assert_string_equal(str_of(fg), "FunctionGraph(Exp(Add(Mul(x, W), b)))");
    weft_fgraph_destroy(fg);
}

static void test_fgraph_str_multiple_outputs_are_comma_separated(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x");
    weft_var_t *out[] = {fx_un(f, f->exp, x), fx_un(f, f->neg, x), x};
    weft_fgraph_t *fg = plain_fgraph(f, 1, &x, 3, out);
    assert_string_equal(str_of(fg), "FunctionGraph(Exp(x), Neg(x), x)");
    weft_fgraph_destroy(fg);
}

static void test_fgraph_str_shared_subexpression_is_labelled_once(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *y = fx_var(f, "y");
    weft_var_t *in[] = {x, y};
    weft_var_t *a = fx_bin(f, f->add, x, y), *n = fx_un(f, f->neg, x);
    weft_var_t *out[] = {fx_bin(f, f->mul, a, a), fx_bin(f, f->add, n, a), n};
    weft_fgraph_t *fg = plain_fgraph(f, 2, in, 3, out);
    assert_string_equal(str_of(fg),
                        "FunctionGraph(Mul(*1 -> Add(x, y), *1), Add(*2 -> Neg(x), *1), *2)");
    weft_fgraph_destroy(fg);
}

static void test_fgraph_str_multi_output_node_shows_output_index(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x");
    weft_apply_t *sp = weft_apply_create(f->g, f->split, 1, &x);
    assert_non_null(sp);
    weft_var_t *s0 = weft_apply_output(sp, 0), *s1 = weft_apply_output(sp, 1);
    weft_var_t *out[] = {fx_bin(f, f->add, s1, s0)};
    weft_fgraph_t *fg = plain_fgraph(f, 1, &x, 1, out);
    assert_string_equal(str_of(fg), "FunctionGraph(Add(*1::1 -> Split(x), *1::0))");
    weft_fgraph_destroy(fg);
}

static void test_fgraph_str_is_snprintf_like(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x");
    weft_var_t *y = fx_un(f, f->exp, x);
    weft_fgraph_t *fg = plain_fgraph(f, 1, &x, 1, &y);
    char buf[10];
    size_t len = 0;
    assert_int_equal(weft_fgraph_str(fg, buf, sizeof(buf), &len), WEFT_OK);
    assert_string_equal(buf, "FunctionG");
    assert_int_equal(len, strlen("FunctionGraph(Exp(x))"));
    len = 0;
    assert_int_equal(weft_fgraph_str(fg, NULL, 0, &len), WEFT_OK);
    assert_int_equal(len, 21);
    assert_int_equal(weft_fgraph_str(fg, NULL, 4, &len), WEFT_EINVAL);
    assert_int_equal(weft_fgraph_str(NULL, buf, sizeof(buf), &len), WEFT_EINVAL);
    weft_fgraph_destroy(fg);
}

static void test_fgraph_str_long_chain_does_not_recurse(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *y = x;
    for (int k = 0; k < 50000; k++) y = fx_un(f, f->neg, y);
    weft_fgraph_t *fg = plain_fgraph(f, 1, &x, 1, &y);
    size_t len = 0;
    assert_int_equal(weft_fgraph_str(fg, NULL, 0, &len), WEFT_OK);
    /* "FunctionGraph(" + 50000 x "Neg(" + "x" + 50000 x ")" + ")" */
    assert_int_equal(len, 14 + 50000 * 4 + 1 + 50000 + 1);
    weft_fgraph_destroy(fg);
}

static void test_fgraph_variables_lists_by_id_with_clients(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *y = fx_var(f, "y"), *unused = fx_var(f, "u");
    weft_var_t *in[] = {x, y, unused};
    weft_var_t *a = fx_bin(f, f->add, x, y);
    weft_var_t *out[] = {fx_bin(f, f->mul, a, x), a};
    weft_fgraph_t *fg = plain_fgraph(f, 3, in, 2, out);
    weft_var_t *const *vars;
    size_t n = 0;
    assert_int_equal(weft_fgraph_variables(fg, &vars, &n), WEFT_OK);
    assert_int_equal(n, 4);
    assert_int_equal(weft_fgraph_n_variables(fg), 4);
    assert_ptr_equal(vars[0], x);
    assert_ptr_equal(vars[1], y);
    assert_ptr_equal(vars[2], a);
    assert_ptr_equal(vars[3], out[0]);
    const weft_client_t *c;
    size_t nc;
    assert_int_equal(weft_fgraph_clients(fg, x, &c, &nc), WEFT_OK);
    assert_int_equal(nc, 2);
    assert_ptr_equal(c[0].node, weft_var_owner(a));
    assert_int_equal(c[0].index, 0);
    assert_ptr_equal(c[1].node, weft_var_owner(out[0]));
    assert_int_equal(c[1].index, 1);
    assert_int_equal(weft_fgraph_clients(fg, a, &c, &nc), WEFT_OK);
    assert_int_equal(nc, 2);
    assert_ptr_equal(c[0].node, weft_var_owner(out[0]));
    assert_true(weft_apply_is_output_slot(c[1].node));
    assert_int_equal(weft_apply_output_slot(c[1].node), 1);
    assert_int_equal(weft_fgraph_variables(fg, NULL, &n), WEFT_EINVAL);
    assert_int_equal(weft_fgraph_variables(NULL, &vars, &n), WEFT_EINVAL);
    assert_int_equal(weft_fgraph_n_variables(NULL), 0);
    weft_fgraph_destroy(fg);
}

static void test_fgraph_variables_follow_a_replace(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x");
    weft_var_t *e = fx_un(f, f->exp, x);
    weft_var_t *y = fx_un(f, f->neg, e);
    weft_fgraph_t *fg = plain_fgraph(f, 1, &x, 1, &y);
    assert_int_equal(weft_fgraph_replace(fg, e, x, "test"), WEFT_OK);
    weft_var_t *const *vars;
    size_t n = 0;
    assert_int_equal(weft_fgraph_variables(fg, &vars, &n), WEFT_OK);
    assert_int_equal(n, 2);
    assert_ptr_equal(vars[0], x);
    assert_ptr_equal(vars[1], y);
    weft_fgraph_destroy(fg);
}

/* ---- op cloning -------------------------------------------------------------- */

typedef struct scale_props {
    double factor;
} scale_props_t;

static void owning_fini(void *props)
{
    (void)props;
}

static weft_status_t same_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                    weft_var_t *const *in, size_t *n_out,
                                    const weft_type_t **out)
{
    (void)g;
    (void)op;
    (void)n_in;
    *n_out = 1;
    out[0] = weft_var_type(in[0]);
    return WEFT_OK;
}

static const weft_op_class_t scale_class = {.size = sizeof(weft_op_class_t),
                                            .name = "Scale",
                                            .props_size = sizeof(scale_props_t),
                                            .make_node = same_make_node};
static const weft_op_class_t owning_class = {.size = sizeof(weft_op_class_t),
                                             .name = "Owning",
                                             .props_size = sizeof(scale_props_t),
                                             .props_fini = owning_fini,
                                             .make_node = same_make_node};

static void test_op_clone_copies_props_into_another_context(void **state)
{
    fx_t *f = *state;
    const weft_op_t *op, *copy, *same_ctx;
    scale_props_t p = {2.5};
    assert_int_equal(weft_op_create(f->g, &scale_class, &p, &op), WEFT_OK);
    weft_graph_t *g2;
    assert_int_equal(weft_graph_create(NULL, &g2), WEFT_OK);
    assert_int_equal(weft_op_clone(g2, op, &copy), WEFT_OK);
    assert_ptr_not_equal(copy, op);
    assert_true(weft_op_equal(copy, op));
    assert_int_equal(weft_op_hash(copy), weft_op_hash(op));
    assert_ptr_not_equal(weft_op_props(copy), weft_op_props(op));
    assert_true(((const scale_props_t *)weft_op_props(copy))->factor == 2.5);
    assert_int_equal(weft_op_clone(f->g, f->add_inplace, &same_ctx), WEFT_OK);
    const weft_op_alias_t *dm;
    size_t n_dm;
    weft_op_destroy_map(same_ctx, &dm, &n_dm);
    assert_int_equal(n_dm, 1);
    assert_int_equal(dm[0].output, 0);
    assert_int_equal(dm[0].input, 0);
    weft_graph_destroy(g2);
}

static void test_op_clone_refuses_props_that_own_memory(void **state)
{
    fx_t *f = *state;
    const weft_op_t *op, *copy = f->add;
    scale_props_t p = {1.0};
    assert_int_equal(weft_op_create(f->g, &owning_class, &p, &op), WEFT_OK);
    assert_int_equal(weft_op_clone(f->g, op, &copy), WEFT_ENOTIMPL);
    assert_null(copy);
    assert_string_equal(weft_graph_last_error(f->g),
                        "weft_op_clone: op Owning owns memory in its props (props_fini): it "
                        "cannot be copied by value");
    assert_int_equal(weft_op_clone(f->g, NULL, &copy), WEFT_EINVAL);
    assert_int_equal(weft_op_clone(NULL, op, &copy), WEFT_EINVAL);
    assert_int_equal(weft_op_clone(f->g, op, NULL), WEFT_EINVAL);
}

/* ---- the replacement log (verbose rewriting) --------------------------------- */

static void test_fgraph_replace_log_reports_committed_pairs_only(void **state)
{
    fx_t *f = *state;
    int var_line = __LINE__ + 1;
    weft_var_t *x = weft_var_create(f->g, f->vec, "x");
    weft_var_t *y = weft_var_create(f->g, f->vec, "y");
    weft_var_t *in[] = {x, y};
    int exp_line = __LINE__ + 1;
    weft_var_t *e = weft_op_call(f->g, f->exp, 1, &x);
    int neg_line = __LINE__ + 1;
    weft_var_t *n = weft_op_call(f->g, f->neg, 1, &y);
    assert_string_equal(weft_graph_error_message(f->g), "");
    weft_var_t *out[] = {fx_bin(f, f->add, e, n)};
    rec_t *rec = rec_new();
    weft_feature_t *feats[] = {&rec->base};
    weft_fgraph_t *fg = fx_fgraph(f, 2, in, 1, out, false, 1, feats);
    char *text = NULL;
    size_t len = 0;
    FILE *log = open_memstream(&text, &len);
    assert_int_equal(weft_fgraph_set_replace_log(fg, log), WEFT_OK);
    /* Rejected: nothing; plain replace: nothing; committed: one line per pair. */
    rec->reject_validate = true;
    assert_int_equal(weft_fgraph_replace_validate(fg, e, n, "rejected"), WEFT_EINCONSISTENT);
    rec->reject_validate = false;
    weft_var_t *olds[] = {e, n}, *news[] = {y, x};
    assert_int_equal(weft_fgraph_replace_all_validate(fg, 2, olds, news, "swap"), WEFT_OK);
    assert_int_equal(weft_fgraph_set_replace_log(fg, NULL), WEFT_OK);
    fclose(log);
    char want[1024];
    snprintf(want, sizeof(want),
             "rewriting: rewrite swap replaces Exp.out of apply %llu (Exp, built at %s:%d) with y "
             "(created at %s:%d)\n"
             "rewriting: rewrite swap replaces Neg.out of apply %llu (Neg, built at %s:%d) with x "
             "(created at %s:%d)\n",
             (unsigned long long)weft_apply_id(weft_var_owner(e)), __FILE__, exp_line, __FILE__,
             var_line + 1, (unsigned long long)weft_apply_id(weft_var_owner(n)), __FILE__,
             neg_line, __FILE__, var_line);
    assert_string_equal(text, want);
    free(text);
    assert_int_equal(weft_fgraph_set_replace_log(NULL, NULL), WEFT_EINVAL);
    assert_int_equal(weft_fgraph_set_replace_hook(NULL, NULL, NULL), WEFT_EINVAL);
    char buf[64];
    assert_int_equal(weft_fgraph_replace_line(NULL, NULL, NULL, buf, sizeof(buf)),
                     (int)strlen("rewriting: rewrite ? replaces <null> (created at ?:0) with "
                                 "<null> (created at ?:0)"));
    weft_fgraph_destroy(fg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, fx_setup, fx_teardown)
        T(test_fgraph_str_nested_expression_reads_as_calls),
        T(test_fgraph_str_multiple_outputs_are_comma_separated),
        T(test_fgraph_str_shared_subexpression_is_labelled_once),
        T(test_fgraph_str_multi_output_node_shows_output_index),
        T(test_fgraph_str_is_snprintf_like),
        T(test_fgraph_str_long_chain_does_not_recurse),
        T(test_fgraph_variables_lists_by_id_with_clients),
        T(test_fgraph_variables_follow_a_replace),
        T(test_op_clone_copies_props_into_another_context),
        T(test_op_clone_refuses_props_that_own_memory),
        T(test_fgraph_replace_log_reports_committed_pairs_only),
#undef T
    };
    return cmocka_run_group_tests_name("fgraph_utils", tests, NULL, NULL);
}
