/* toposort with orderings: dependency order, feature orderings honoured and
 * merged, cycles in orderings or in the data graph reported (never looping),
 * deep chains sorted iteratively. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "graph_fixture.h"
#include "support/shared_cycle.h"

static size_t pos_of(weft_apply_t *const *order, size_t n, const weft_apply_t *a)
{
    for (size_t k = 0; k < n; k++)
        if (order[k] == a) return k;
    fail_msg("node not in the order");
    return n;
}

/* Every node after the owners of its inputs. */
static void assert_dependency_order(weft_apply_t *const *order, size_t n)
{
    for (size_t k = 0; k < n; k++)
        for (size_t i = 0; i < weft_apply_n_inputs(order[k]); i++) {
            weft_apply_t *o = weft_var_owner(weft_apply_input(order[k], i));
            if (o) assert_true(pos_of(order, n, o) < k);
        }
}

static void test_toposort_respects_dependencies(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *y = fx_var(f, "y");
    weft_var_t *e = fx_un(f, f->exp, x), *a = fx_bin(f, f->add, e, y);
    weft_var_t *z = fx_bin(f, f->mul, a, fx_un(f, f->neg, e));
    weft_var_t *in[2] = {x, y};
    weft_fgraph_t *fg = fx_fgraph(f, 2, in, 1, &z, true, 0, NULL);
    weft_apply_t *const *order;
    size_t n;
    assert_int_equal(weft_fgraph_toposort(fg, &order, &n), WEFT_OK);
    assert_int_equal(n, 4);
    assert_dependency_order(order, n);
    assert_string_equal(weft_op_name(weft_apply_op(order[3])), "Mul");
    assert_int_equal(weft_fgraph_toposort(NULL, &order, &n), WEFT_EINVAL);
    weft_fgraph_destroy(fg);
}

static void test_toposort_honours_orderings_both_ways(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *a = fx_un(f, f->exp, x), *b = fx_un(f, f->neg, x);
    weft_var_t *outs[2] = {a, b};
    rec_t *r = rec_new();
    weft_feature_t *feats[1] = {&r->base};
    weft_fgraph_t *fg = fx_fgraph(f, 1, &x, 2, outs, false, 1, feats);
    weft_apply_t *na = weft_var_owner(a), *nb = weft_var_owner(b), *const * order;
    size_t n;
    assert_int_equal(weft_fgraph_toposort(fg, &order, &n), WEFT_OK);
    assert_true(pos_of(order, n, na) < pos_of(order, n, nb)); /* unconstrained: output order */
    r->ord_before[0] = nb;
    r->ord_after[0] = na;
    r->n_ord = 1;
    assert_int_equal(weft_fgraph_toposort(fg, &order, &n), WEFT_OK);
    assert_int_equal(n, 2);
    assert_true(pos_of(order, n, nb) < pos_of(order, n, na));
    r->ord_before[0] = na;
    r->ord_after[0] = nb;
    assert_int_equal(weft_fgraph_toposort(fg, &order, &n), WEFT_OK);
    assert_true(pos_of(order, n, na) < pos_of(order, n, nb));
    weft_fgraph_destroy(fg);
}

static void test_toposort_merges_orderings_of_several_features(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *a = fx_un(f, f->exp, x), *b = fx_un(f, f->neg, x);
    weft_var_t *c = fx_un(f, f->view, x);
    weft_var_t *outs[3] = {a, b, c};
    rec_t *r1 = rec_new(), *r2 = rec_new();
    weft_feature_t *feats[2] = {&r1->base, &r2->base};
    weft_fgraph_t *fg = fx_fgraph(f, 1, &x, 3, outs, false, 2, feats);
    weft_apply_t *na = weft_var_owner(a), *nb = weft_var_owner(b), *nc = weft_var_owner(c);
    r1->ord_before[0] = nc; /* c before b */
    r1->ord_after[0] = nb;
    r1->n_ord = 1;
    r2->ord_before[0] = nb; /* b before a */
    r2->ord_after[0] = na;
    r2->ord_before[1] = nb; /* duplicates are harmless */
    r2->ord_after[1] = na;
    r2->n_ord = 2;
    weft_apply_t *const *before, *const *after, *const *order;
    size_t n;
    assert_int_equal(weft_fgraph_orderings(fg, &before, &after, &n), WEFT_OK);
    assert_int_equal(n, 3);
    assert_ptr_equal(before[0], nc);
    assert_ptr_equal(after[0], nb);
    assert_ptr_equal(before[2], nb);
    assert_int_equal(weft_fgraph_toposort(fg, &order, &n), WEFT_OK);
    assert_int_equal(n, 3);
    assert_ptr_equal(order[0], nc);
    assert_ptr_equal(order[1], nb);
    assert_ptr_equal(order[2], na);
    weft_fgraph_destroy(fg);
}

static void test_toposort_orderings_cycle_is_ecycle_naming_nodes(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *a = fx_un(f, f->exp, x), *b = fx_un(f, f->neg, x);
    weft_var_t *outs[2] = {a, b};
    rec_t *r = rec_new();
    weft_feature_t *feats[1] = {&r->base};
    weft_fgraph_t *fg = fx_fgraph(f, 1, &x, 2, outs, false, 1, feats);
    weft_apply_t *na = weft_var_owner(a), *nb = weft_var_owner(b), *const * order;
    r->ord_before[0] = na;
    r->ord_after[0] = nb;
    r->ord_before[1] = nb;
    r->ord_after[1] = na;
    r->n_ord = 2;
    size_t n = 7;
    assert_int_equal(weft_fgraph_toposort(fg, &order, &n), WEFT_ECYCLE);
    assert_int_equal(n, 0);
    const char *msg = weft_fgraph_last_error(fg);
    assert_non_null(strstr(msg, "graph contains a cycle (2 nodes)"));
    assert_non_null(strstr(msg, "(Exp, built at"));
    assert_non_null(strstr(msg, "(Neg, built at"));
    weft_fgraph_destroy(fg);
}

/* A data cycle that reached the IR behind an fgraph's back (two fgraphs
 * sharing nodes, tests/support/shared_cycle.h): the toposort and both clone
 * functions report it, naming its nodes; they never loop. */
static void test_toposort_data_cycle_reaching_the_graph_is_detected(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *y = fx_var(f, "y");
    weft_fgraph_t *fg;
    /* the second fgraph: its edge count knows the edge against id order */
    weft_var_t *z = shared_cycle_build(f->g, f->exp, f->neg, f->add, x, y, NULL, &fg);
    assert_non_null(z);
    weft_apply_t *const *order;
    size_t n;
    assert_int_equal(weft_fgraph_toposort(fg, &order, &n), WEFT_ECYCLE);
    assert_non_null(strstr(weft_fgraph_last_error(fg), "graph contains a cycle (3 nodes)"));
    assert_non_null(strstr(weft_fgraph_last_error(fg), "(Exp, built at"));
    weft_fgraph_t *c;
    assert_int_equal(weft_fgraph_clone(fg, false, NULL, &c), WEFT_ECYCLE);
    weft_clone_map_t *m;
    weft_var_t *in[2] = {x, y};
    assert_int_equal(weft_graph_clone_get_equiv(f->g, 2, in, 1, &z, true, false, &m), WEFT_ECYCLE);
    assert_non_null(strstr(weft_graph_last_error(f->g), "graph contains a cycle"));
    weft_fgraph_destroy(fg);
}

static weft_status_t erring_orderings(weft_feature_t *self, weft_fgraph_t *fg, weft_orderings_t *o)
{
    (void)self;
    (void)o;
    return weft_fgraph_set_error(fg, WEFT_ESTATE, "orderings unavailable");
}

static const weft_feature_class_t erring_class = {
    .size = sizeof(weft_feature_class_t),
    .name = "ErringOrderings",
    .orderings = erring_orderings,
};

static void test_toposort_orderings_error_is_returned(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *z = fx_un(f, f->exp, x);
    weft_fgraph_t *fg = fx_fgraph(f, 1, &x, 1, &z, false, 0, NULL);
    weft_feature_t e = {&erring_class, NULL};
    assert_int_equal(weft_fgraph_attach_feature(fg, &e), WEFT_OK);
    weft_apply_t *const *order, *const *b, *const *a;
    size_t n;
    assert_int_equal(weft_fgraph_toposort(fg, &order, &n), WEFT_ESTATE);
    assert_string_equal(weft_fgraph_last_error(fg), "orderings unavailable");
    assert_int_equal(weft_fgraph_orderings(fg, &b, &a, &n), WEFT_ESTATE);
    weft_fgraph_destroy(fg);
}

static void test_toposort_deep_chain_is_iterative(void **state)
{
    fx_t *f = *state;
#ifdef WEFT_SANITIZED
    const size_t len = 100000;
#else
    const size_t len = 1000000;
#endif
    weft_var_t *x = fx_var(f, "x"), *y = x;
    for (size_t k = 0; k < len; k++) y = fx_un(f, (k & 1) ? f->neg : f->exp, y);
    weft_fgraph_t *fg = fx_fgraph(f, 1, &x, 1, &y, true, 0, NULL);
    weft_apply_t *const *order;
    size_t n;
    assert_int_equal(weft_fgraph_toposort(fg, &order, &n), WEFT_OK);
    assert_int_equal(n, len);
    assert_ptr_equal(weft_apply_input(order[0], 0), weft_fgraph_input(fg, 0));
    assert_ptr_equal(weft_apply_output(order[len - 1], 0), weft_fgraph_output(fg, 0));
    assert_int_equal(weft_fgraph_check_integrity(fg), WEFT_OK);
    /* replacing the input's first client prunes the whole chain iteratively */
    assert_int_equal(
        weft_fgraph_replace(fg, weft_fgraph_output(fg, 0), weft_fgraph_input(fg, 0), "short"),
        WEFT_OK);
    assert_int_equal(weft_fgraph_n_applies(fg), 0);
    weft_fgraph_destroy(fg);
}

/* Sparse ids (a small fgraph in a big context): the sort orders the roots by
 * id with a radix sort, one pass below 2^11 and two passes above. */
static void test_toposort_sparse_ids_in_a_big_context(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *junk = fx_var(f, "junk");
    weft_var_t *a = fx_un(f, f->exp, x); /* low id */
    for (int k = 0; k < 1500; k++) fx_un(f, f->neg, junk);
    weft_var_t *b = fx_bin(f, f->add, a, x); /* id ~1500: one radix pass */
    weft_var_t *outs1[1] = {fx_un(f, f->neg, b)};
    weft_fgraph_t *fg = fx_fgraph(f, 1, &x, 1, outs1, false, 0, NULL);
    weft_apply_t *const *order;
    size_t n;
    assert_int_equal(weft_fgraph_toposort(fg, &order, &n), WEFT_OK);
    assert_int_equal(n, 3);
    assert_ptr_equal(order[0], weft_var_owner(a));
    assert_ptr_equal(order[1], weft_var_owner(b));
    for (int k = 0; k < 5000; k++) fx_un(f, f->neg, junk);
    weft_var_t *c = fx_bin(f, f->mul, b, a); /* id ~6500: two passes */
    assert_int_equal(weft_fgraph_add_output(fg, c, "more"), WEFT_OK);
    /* rewire a's user to a later node so id order is no longer topological */
    weft_var_t *late = fx_un(f, f->exp, x);
    assert_int_equal(weft_fgraph_replace(fg, a, late, "late"), WEFT_OK);
    assert_int_equal(weft_fgraph_toposort(fg, &order, &n), WEFT_OK);
    assert_int_equal(n, 4);
    assert_dependency_order(order, n);
    assert_ptr_equal(order[0], weft_var_owner(late));
    weft_fgraph_destroy(fg);
}

/* A graph whose ids follow a topological order is returned in id order
 * without the DFS; an edit that makes an edge go backwards in id order (a new
 * node replacing an old one), or a removal that reorders the apply list,
 * falls back to the DFS, whose order is exact (inputs first, in input order). */
static void test_toposort_id_order_fast_path_and_fallback_are_exact(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *a = fx_un(f, f->exp, x), *b = fx_un(f, f->neg, a);
    weft_var_t *c = fx_bin(f, f->add, b, a), *d = fx_un(f, f->neg, x), *e = fx_bin(f, f->mul, c, d);
    weft_fgraph_t *fg = fx_fgraph(f, 1, &x, 1, &e, false, 0, NULL);
    weft_apply_t *const *order;
    size_t n;
    assert_int_equal(weft_fgraph_toposort(fg, &order, &n), WEFT_OK);
    weft_apply_t *want1[5] = {weft_var_owner(a), weft_var_owner(b), weft_var_owner(c),
                              weft_var_owner(d), weft_var_owner(e)};
    assert_int_equal(n, 5);
    for (size_t k = 0; k < 5; k++) assert_ptr_equal(order[k], want1[k]);
    weft_var_t *a2 = fx_un(f, f->exp, x); /* newest id, used by b and c */
    assert_int_equal(weft_fgraph_replace(fg, a, a2, "new"), WEFT_OK);
    assert_int_equal(weft_fgraph_toposort(fg, &order, &n), WEFT_OK);
    weft_apply_t *want2[5] = {weft_var_owner(a2), weft_var_owner(b), weft_var_owner(c),
                              weft_var_owner(d), weft_var_owner(e)};
    assert_int_equal(n, 5);
    for (size_t k = 0; k < 5; k++) assert_ptr_equal(order[k], want2[k]);
    assert_int_equal(weft_fgraph_check_integrity(fg), WEFT_OK);
    /* back to an id-ordered graph, but the apply list was reordered by the removal */
    assert_int_equal(weft_fgraph_replace(fg, a2, x, "x"), WEFT_OK);
    assert_int_equal(weft_fgraph_check_integrity(fg), WEFT_OK);
    assert_int_equal(weft_fgraph_toposort(fg, &order, &n), WEFT_OK);
    weft_apply_t *want3[4] = {weft_var_owner(b), weft_var_owner(c), weft_var_owner(d),
                              weft_var_owner(e)};
    assert_int_equal(n, 4);
    for (size_t k = 0; k < 4; k++) assert_ptr_equal(order[k], want3[k]);
    weft_fgraph_destroy(fg);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_toposort_respects_dependencies),
        T(test_toposort_honours_orderings_both_ways),
        T(test_toposort_merges_orderings_of_several_features),
        T(test_toposort_orderings_cycle_is_ecycle_naming_nodes),
        T(test_toposort_data_cycle_reaching_the_graph_is_detected),
        T(test_toposort_orderings_error_is_returned),
        T(test_toposort_deep_chain_is_iterative),
        T(test_toposort_sparse_ids_in_a_big_context),
        T(test_toposort_id_order_fast_path_and_fallback_are_exact),
    };
    return cmocka_run_group_tests_name("toposort", tests, NULL, NULL);
}
