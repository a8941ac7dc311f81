/* The NodeFinder feature (weft/node_finder.h): lookups by op class and by op
 * in increasing node id, kept up to date by imports and prunes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "graph_fixture.h"
#include "weft/history.h"
#include "weft/node_finder.h"

/* The ids of nodes[0..n) as "a,b,c". */
static const char *ids(weft_apply_t *const *nodes, size_t n)
{
    static char buf[256];
    size_t len = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < n; k++)
        len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%llu", k ? "," : "",
                                (unsigned long long)weft_apply_id(nodes[k]));
    return buf;
}

static const char *by_class(weft_fgraph_t *fg, const weft_op_class_t *cls)
{
    weft_apply_t *const *nodes;
    size_t n;
    assert_int_equal(weft_node_finder_by_class(fg, cls, &nodes, &n), WEFT_OK);
    return ids(nodes, n);
}

static void test_node_finder_lists_nodes_by_class_in_id_order(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *y = fx_var(f, "y");
    weft_var_t *in[] = {x, y};
    weft_var_t *a0 = fx_bin(f, f->add, x, y);      /* apply 0 */
    weft_var_t *e = fx_un(f, f->exp, a0);          /* 1 */
    weft_var_t *a2 = fx_bin(f, f->add, e, y);      /* 2 */
    weft_var_t *m = fx_bin(f, f->mul, a2, a0);     /* 3 */
    weft_var_t *out[] = {m, fx_bin(f, f->add, m, x)}; /* 4 */
    /* Outputs listed so that imports do not come in id order. */
    weft_var_t *rev[] = {out[1], out[0]};
    weft_fgraph_t *fg = fx_fgraph(f, 2, in, 2, rev, false, 0, NULL);
    assert_int_equal(weft_node_finder_attach(fg), WEFT_OK);
    assert_int_equal(weft_node_finder_attach(fg), WEFT_OK);
    assert_string_equal(by_class(fg, &fx_add_class), "0,2,4");
    assert_string_equal(by_class(fg, &fx_mul_class), "3");
    assert_string_equal(by_class(fg, &fx_neg_class), "");
    /* Incremental: a replace prunes Exp and Add 2, imports a Neg. */
    weft_var_t *n = fx_un(f, f->neg, x); /* 7: the Output pseudo-nodes took 5 and 6 */
    assert_int_equal(weft_fgraph_replace(fg, a2, n, "t"), WEFT_OK);
    assert_string_equal(by_class(fg, &fx_add_class), "0,4");
    assert_string_equal(by_class(fg, &fx_exp_class), "");
    assert_string_equal(by_class(fg, &fx_neg_class), "7");
    weft_fgraph_destroy(fg);
}

static void test_node_finder_by_op_compares_props(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *y = fx_var(f, "y");
    weft_var_t *in[] = {x, y};
    weft_var_t *out[] = {fx_bin(f, f->add, x, y), fx_bin(f, f->add_inplace, y, x)};
    weft_fgraph_t *fg = fx_fgraph(f, 2, in, 2, out, false, 0, NULL);
    assert_int_equal(weft_node_finder_attach(fg), WEFT_OK);
    /* An equal op from another context finds the node. */
    weft_graph_t *g2;
    const weft_op_t *add2;
    assert_int_equal(weft_graph_create(NULL, &g2), WEFT_OK);
    assert_int_equal(weft_op_clone(g2, f->add, &add2), WEFT_OK);
    weft_apply_t *const *nodes;
    size_t n;
    assert_int_equal(weft_node_finder_by_op(fg, add2, &nodes, &n), WEFT_OK);
    assert_int_equal(n, 1);
    assert_ptr_equal(nodes[0], weft_var_owner(out[0]));
    assert_int_equal(weft_node_finder_by_op(fg, f->mul, &nodes, &n), WEFT_OK);
    assert_int_equal(n, 0);
    weft_graph_destroy(g2);
    weft_fgraph_destroy(fg);
}

static void test_node_finder_errors(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x");
    weft_var_t *y = fx_un(f, f->exp, x);
    weft_fgraph_t *fg = fx_fgraph(f, 1, &x, 1, &y, false, 0, NULL);
    weft_apply_t *const *nodes;
    size_t n;
    assert_int_equal(weft_node_finder_by_class(fg, &fx_exp_class, &nodes, &n), WEFT_ENOTFOUND);
    assert_string_equal(weft_fgraph_last_error(fg),
                        "NodeFinder: none is attached (weft_node_finder_attach)");
    assert_int_equal(weft_node_finder_attach(NULL), WEFT_EINVAL);
    assert_int_equal(weft_node_finder_attach(fg), WEFT_OK);
    assert_int_equal(weft_node_finder_by_class(fg, NULL, &nodes, &n), WEFT_EINVAL);
    assert_int_equal(weft_node_finder_by_op(fg, NULL, &nodes, &n), WEFT_EINVAL);
    assert_int_equal(weft_node_finder_by_op(NULL, f->exp, &nodes, &n), WEFT_EINVAL);
    assert_int_equal(weft_node_finder_by_op(fg, f->exp, NULL, &n), WEFT_EINVAL);
    /* Not carried to clones (no clone hook), removable like any feature. */
    weft_fgraph_t *c;
    assert_int_equal(weft_fgraph_clone(fg, false, NULL, &c), WEFT_OK);
    assert_null(weft_fgraph_find_feature(c, weft_node_finder_class()));
    weft_fgraph_destroy(c);
    weft_feature_t *nf = weft_fgraph_find_feature(fg, weft_node_finder_class());
    assert_int_equal(weft_fgraph_remove_feature(fg, nf), WEFT_OK);
    weft_fgraph_destroy(fg);
}

/* A History revert goes through the ordinary change path: the finder sees
 * the pruned node come back (and the replacement leave). */
static void test_node_finder_follows_a_history_revert(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x");
    weft_var_t *e = fx_un(f, f->exp, x); /* apply 0 */
    weft_var_t *y = fx_un(f, f->neg, e); /* apply 1 */
    weft_fgraph_t *fg = fx_fgraph(f, 1, &x, 1, &y, false, 0, NULL);
    assert_int_equal(weft_node_finder_attach(fg), WEFT_OK);
    assert_int_equal(weft_history_attach(fg), WEFT_OK);
    weft_var_t *n = fx_un(f, f->neg, x); /* apply 3: the Output pseudo-node took 2 */
    assert_int_equal(weft_fgraph_replace(fg, e, n, "t"), WEFT_OK);
    assert_string_equal(by_class(fg, &fx_neg_class), "1,3");
    assert_string_equal(by_class(fg, &fx_exp_class), "");
    assert_int_equal(weft_history_revert(fg, 0), WEFT_OK);
    assert_string_equal(by_class(fg, &fx_neg_class), "1");
    assert_string_equal(by_class(fg, &fx_exp_class), "0");
    assert_int_equal(weft_history_redo(fg, 3), WEFT_OK);
    assert_string_equal(by_class(fg, &fx_neg_class), "1,3");
    weft_fgraph_destroy(fg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, fx_setup, fx_teardown)
        T(test_node_finder_lists_nodes_by_class_in_id_order),
        T(test_node_finder_by_op_compares_props),
        T(test_node_finder_errors),
        T(test_node_finder_follows_a_history_revert),
#undef T
    };
    return cmocka_run_group_tests_name("node_finder", tests, NULL, NULL);
}
