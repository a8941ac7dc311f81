/* Features: attach / detach / find, EALREADY, ownership on every outcome,
 * and the exact callback order per edit: import(s) -> prune(s) -> change. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "graph_fixture.h"

static void test_feature_initial_imports_fire_with_reason_init(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *z = fx_bin(f, f->add, fx_un(f, f->exp, x), x);
    rec_t *r = rec_new();
    weft_feature_t *feats[1] = {&r->base};
    weft_fgraph_t *fg = fx_fgraph(f, 1, &x, 1, &z, true, 1, feats);
    assert_string_equal(r->log, "attach;import Exp:init;import Add:init;");
    assert_int_equal(rec_n_live(r), 2);
    assert_ptr_equal(weft_fgraph_find_feature(fg, &rec_class), &r->base);
    weft_fgraph_destroy(fg);
}

static void test_feature_replace_fires_import_then_prune_then_change(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *e = fx_un(f, f->exp, x);
    weft_var_t *z = fx_bin(f, f->add, e, x);
    rec_t *r = rec_new();
    weft_feature_t *feats[1] = {&r->base};
    weft_fgraph_t *fg = fx_fgraph(f, 1, &x, 1, &z, false, 1, feats);
    r->len = 0;
    r->log[0] = '\0';
    weft_var_t *n = fx_un(f, f->neg, fx_un(f, f->exp, x));
    assert_int_equal(weft_fgraph_replace(fg, e, n, "rw"), WEFT_OK);
    assert_string_equal(r->log, "import Exp:rw;import Neg:rw;prune Exp;change Add.0:rw;");
    r->len = 0;
    r->log[0] = '\0';
    /* Replacing an output fires on_change_input with the Output pseudo-node. */
    weft_var_t *m = fx_un(f, f->neg, x);
    assert_int_equal(weft_fgraph_replace(fg, z, m, "out"), WEFT_OK);
    assert_string_equal(r->log,
                        "import Neg:out;prune Add;prune Neg;prune Exp;change Output(0).0:out;");
    assert_int_equal(r->protocol_errors, 0);
    assert_int_equal(rec_n_live(r), 1);
    weft_fgraph_destroy(fg);
    /* detach runs on destroy */
}

static void test_feature_two_features_called_in_attach_order(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *z = fx_un(f, f->exp, x);
    rec_t *a = rec_new(), *b = rec_new();
    weft_feature_t *feats[2] = {&a->base, &b->base};
    weft_fgraph_t *fg = fx_fgraph(f, 1, &x, 1, &z, false, 2, feats);
    assert_string_equal(a->log, "attach;import Exp:init;");
    assert_string_equal(b->log, "attach;import Exp:init;");
    assert_int_equal(weft_fgraph_remove_node(fg, weft_var_owner(z), "rm"), WEFT_OK);
    assert_string_equal(a->log, "attach;import Exp:init;prune Exp;");
    assert_ptr_equal(weft_fgraph_find_feature(fg, &rec_class), &a->base); /* first one */
    weft_fgraph_destroy(fg);
}

static void test_feature_attach_later_does_not_replay(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *z = fx_un(f, f->exp, x);
    weft_fgraph_t *fg = fx_fgraph(f, 1, &x, 1, &z, false, 0, NULL);
    rec_t *r = rec_new();
    int destroyed = 0;
    r->destroyed = &destroyed;
    assert_int_equal(weft_fgraph_attach_feature(fg, &r->base), WEFT_OK);
    assert_int_equal(weft_fgraph_attach_feature(fg, &r->base), WEFT_OK); /* same object */
    assert_string_equal(r->log, "attach;");
    assert_int_equal(weft_fgraph_remove_feature(fg, &r->base), WEFT_OK);
    assert_int_equal(destroyed, 1);
    assert_null(weft_fgraph_find_feature(fg, &rec_class));
    rec_t *s = rec_new();
    assert_int_equal(weft_fgraph_remove_feature(fg, &s->base), WEFT_ENOTFOUND);
    assert_non_null(strstr(weft_fgraph_last_error(fg), "Recorder"));
    assert_int_equal(weft_fgraph_attach_feature(fg, &s->base), WEFT_OK);
    weft_fgraph_destroy(fg); /* detaches and destroys s */
}

static void test_feature_ealready_is_a_silent_no_op(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *z = fx_un(f, f->exp, x);
    weft_fgraph_t *fg = fx_fgraph(f, 1, &x, 1, &z, false, 0, NULL);
    rec_t *r = rec_new();
    int destroyed = 0;
    r->destroyed = &destroyed;
    r->refuse_attach = true;
    assert_int_equal(weft_fgraph_attach_feature(fg, &r->base), WEFT_OK);
    assert_int_equal(destroyed, 1);
    assert_null(weft_fgraph_find_feature(fg, &rec_class));
    assert_int_equal(weft_fgraph_attach_feature(NULL, NULL), WEFT_EINVAL);
    weft_fgraph_destroy(fg);
}

static weft_status_t failing_attach(weft_feature_t *self, weft_fgraph_t *fg)
{
    (void)self;
    return weft_fgraph_set_error(fg, WEFT_ESTATE, "failing feature refuses");
}

static int failing_destroyed;
static void failing_destroy(weft_feature_t *self)
{
    (void)self;
    failing_destroyed++;
}

static const weft_feature_class_t failing_class = {
    .size = sizeof(weft_feature_class_t),
    .name = "Failing",
    .on_attach = failing_attach,
    .destroy = failing_destroy,
};

static void test_feature_attach_error_destroys_and_returns(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *z = fx_un(f, f->exp, x);
    weft_fgraph_t *fg = fx_fgraph(f, 1, &x, 1, &z, false, 0, NULL);
    weft_feature_t bad = {&failing_class, NULL};
    failing_destroyed = 0;
    assert_int_equal(weft_fgraph_attach_feature(fg, &bad), WEFT_ESTATE);
    assert_int_equal(failing_destroyed, 1);
    assert_string_equal(weft_fgraph_last_error(fg), "failing feature refuses");
    weft_fgraph_destroy(fg);
    /* at creation: the failing feature and every later one are destroyed */
    rec_t *r = rec_new();
    int destroyed = 0;
    r->destroyed = &destroyed;
    weft_feature_t *feats[2] = {&bad, &r->base};
    weft_fgraph_options_t o = WEFT_FGRAPH_OPTIONS_INIT;
    o.n_features = 2;
    o.features = feats;
    assert_int_equal(weft_fgraph_create(f->g, 1, &x, 1, &z, &o, NULL, &fg), WEFT_ESTATE);
    assert_int_equal(failing_destroyed, 2);
    assert_int_equal(destroyed, 1);
    assert_non_null(strstr(weft_graph_last_error(f->g), "failing feature refuses"));
}

static weft_status_t erring_import(weft_feature_t *self, weft_fgraph_t *fg, weft_apply_t *node,
                                   const char *reason)
{
    (void)self;
    (void)node;
    (void)reason;
    return weft_fgraph_set_error(fg, WEFT_EINCONSISTENT, "import refused");
}

static const weft_feature_class_t erring_class = {
    .size = sizeof(weft_feature_class_t),
    .name = "Erring",
    .on_import = erring_import,
};

static void test_feature_callback_error_is_returned_after_the_edit(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *e = fx_un(f, f->exp, x), *z = fx_un(f, f->neg, e);
    weft_fgraph_t *fg = fx_fgraph(f, 1, &x, 1, &z, false, 0, NULL);
    weft_feature_t err = {&erring_class, NULL}; /* no destroy hook: caller-owned */
    assert_int_equal(weft_fgraph_attach_feature(fg, &err), WEFT_OK);
    weft_var_t *n = fx_un(f, f->neg, x);
    assert_int_equal(weft_fgraph_replace(fg, e, n, "r"), WEFT_EINCONSISTENT);
    assert_string_equal(weft_fgraph_last_error(fg), "import refused");
    assert_ptr_equal(weft_apply_input(weft_var_owner(z), 0), n); /* the edit completed */
    assert_int_equal(weft_fgraph_check_integrity(fg), WEFT_OK);
    weft_fgraph_destroy(fg);
}

static void test_feature_orderings_add_bad_arguments(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *a = fx_un(f, f->exp, x), *b = fx_un(f, f->neg, x);
    weft_var_t *outs[2] = {a, b};
    rec_t *r = rec_new();
    weft_feature_t *feats[1] = {&r->base};
    weft_fgraph_t *fg = fx_fgraph(f, 1, &x, 2, outs, false, 1, feats);
    r->ord_before[0] = weft_var_owner(a);
    r->ord_after[0] = weft_var_owner(a);
    r->n_ord = 1;
    weft_apply_t *const *order;
    size_t n;
    assert_int_equal(weft_fgraph_toposort(fg, &order, &n), WEFT_EINVAL);
    assert_non_null(strstr(weft_fgraph_last_error(fg), "cannot precede itself"));
    assert_int_equal(weft_orderings_add(NULL, NULL, NULL), WEFT_EINVAL);
    weft_fgraph_destroy(fg);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_feature_initial_imports_fire_with_reason_init),
        T(test_feature_replace_fires_import_then_prune_then_change),
        T(test_feature_two_features_called_in_attach_order),
        T(test_feature_attach_later_does_not_replay),
        T(test_feature_ealready_is_a_silent_no_op),
        T(test_feature_attach_error_destroys_and_returns),
        T(test_feature_callback_error_is_returned_after_the_edit),
        T(test_feature_orderings_add_bad_arguments),
    };
    return cmocka_run_group_tests_name("feature", tests, NULL, NULL);
}
