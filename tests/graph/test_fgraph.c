/* FunctionGraph: construction (cloning, input discovery, missing inputs),
 * clients and Output pseudo-clients, import, change_node_input, replace,
 * remove_node, inputs and outputs, update pairs, check_integrity, cloning an
 * fgraph, and every documented bad-input status. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "graph_fixture.h"
#include "support/shared_cycle.h"

static const char *fg_err(const weft_fgraph_t *fg)
{
    return weft_fgraph_last_error(fg);
}

static void test_fgraph_create_clones_and_returns_map(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *y = fx_var(f, "y");
    weft_var_t *z = fx_bin(f, f->add, fx_un(f, f->exp, x), y);
    weft_var_t *in[2] = {x, y};
    weft_fgraph_options_t o = WEFT_FGRAPH_OPTIONS_INIT;
    weft_clone_map_t *m;
    weft_fgraph_t *fg;
    assert_int_equal(weft_fgraph_create(f->g, 2, in, 1, &z, &o, &m, &fg), WEFT_OK);
    assert_ptr_equal(weft_fgraph_graph(fg), f->g);
    assert_int_equal(weft_fgraph_n_inputs(fg), 2);
    assert_ptr_equal(weft_fgraph_input(fg, 0), weft_clone_map_var(m, x));
    assert_ptr_not_equal(weft_fgraph_input(fg, 0), x);
    assert_ptr_equal(weft_fgraph_output(fg, 0), weft_clone_map_var(m, z));
    assert_null(weft_fgraph_output(fg, 1));
    assert_int_equal(weft_fgraph_n_applies(fg), 2);
    assert_true(weft_fgraph_contains_apply(fg, weft_clone_map_apply(m, weft_var_owner(z))));
    assert_false(weft_fgraph_contains_apply(fg, weft_var_owner(z)));
    assert_false(weft_fgraph_contains_var(fg, x));
    assert_true(weft_fgraph_contains_var(fg, weft_clone_map_var(m, x)));
    assert_int_equal(weft_fgraph_check_integrity(fg), WEFT_OK);
    assert_true(weft_fgraph_input_is_mutable(fg, 0)); /* nothing declared */
    weft_clone_map_destroy(m);
    weft_fgraph_destroy(fg);
}

static void test_fgraph_create_without_clone_uses_originals(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *e = fx_un(f, f->exp, x);
    weft_var_t *z = fx_bin(f, f->add, e, x);
    weft_fgraph_t *fg = fx_fgraph(f, 1, &x, 1, &z, false, 0, NULL);
    assert_true(weft_fgraph_contains_apply(fg, weft_var_owner(z)));
    const weft_client_t *c;
    size_t n;
    assert_int_equal(weft_fgraph_clients(fg, x, &c, &n), WEFT_OK);
    assert_int_equal(n, 2); /* (Exp, 0) then (Add, 1), in import order */
    assert_ptr_equal(c[0].node, weft_var_owner(e));
    assert_int_equal(c[0].index, 0);
    assert_ptr_equal(c[1].node, weft_var_owner(z));
    assert_int_equal(c[1].index, 1);
    weft_fgraph_destroy(fg);
}

/* Removals are O(1) (tombstones, compacted later): the remaining clients keep
 * the order they were added in, and a client added again goes last. */
static void test_fgraph_clients_keep_order_across_removals(void **state)
{
    fx_t *f = *state;
    enum { N = 40 };
    weft_var_t *ins[2];
    ins[0] = fx_var(f, "x");
    ins[1] = fx_var(f, "y");
    weft_apply_t *nodes[N];
    weft_var_t *acc = NULL;
    for (size_t k = 0; k < N; k++) {
        weft_var_t *e = fx_un(f, f->neg, ins[0]);
        nodes[k] = weft_var_owner(e);
        acc = acc ? fx_bin(f, f->add, acc, e) : e;
    }
    weft_fgraph_t *fg = fx_fgraph(f, 2, ins, 1, &acc, false, 0, NULL);
    bool moved[N] = {false};
    /* the last, then every third, then the first: tail, middle and head holes */
    size_t order[N], n_moved = 0;
    order[n_moved++] = N - 1;
    for (size_t k = 1; k < N - 1; k += 3) order[n_moved++] = k;
    order[n_moved++] = 0;
    for (size_t j = 0; j < n_moved; j++) {
        assert_int_equal(weft_fgraph_change_node_input(fg, nodes[order[j]], 0, ins[1], "t"),
                         WEFT_OK);
        moved[order[j]] = true;
        const weft_client_t *c;
        size_t n, at = 0;
        assert_int_equal(weft_fgraph_clients(fg, ins[0], &c, &n), WEFT_OK);
        assert_int_equal(n, N - j - 1);
        for (size_t k = 0; k < N; k++)
            if (!moved[k]) assert_ptr_equal(c[at++].node, nodes[k]);
    }
    assert_int_equal(weft_fgraph_check_integrity(fg), WEFT_OK);
    /* node 1 comes back: appended after every remaining client */
    assert_int_equal(weft_fgraph_change_node_input(fg, nodes[1], 0, ins[0], "t"), WEFT_OK);
    const weft_client_t *c;
    size_t n;
    assert_int_equal(weft_fgraph_clients(fg, ins[0], &c, &n), WEFT_OK);
    assert_int_equal(n, N - n_moved + 1);
    assert_ptr_equal(c[n - 1].node, nodes[1]);
    assert_ptr_equal(c[0].node, nodes[2]);
    assert_int_equal(weft_fgraph_clients(fg, ins[1], &c, &n), WEFT_OK);
    assert_int_equal(n, n_moved - 1);
    assert_ptr_equal(c[0].node, nodes[N - 1]);
    assert_ptr_equal(c[1].node, nodes[4]); /* nodes[1] left y's list */
    assert_int_equal(weft_fgraph_check_integrity(fg), WEFT_OK);
    weft_fgraph_destroy(fg);
}

static void test_fgraph_output_pseudo_clients(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *z = fx_un(f, f->neg, x);
    weft_var_t *outs[3] = {z, x, z};
    weft_fgraph_t *fg = fx_fgraph(f, 1, &x, 3, outs, false, 0, NULL);
    const weft_client_t *c;
    size_t n;
    assert_int_equal(weft_fgraph_clients(fg, z, &c, &n), WEFT_OK);
    assert_int_equal(n, 2);
    assert_true(weft_apply_is_output_slot(c[0].node));
    assert_int_equal(weft_apply_output_slot(c[0].node), 0);
    assert_int_equal(weft_apply_output_slot(c[1].node), 2);
    assert_false(weft_fgraph_contains_apply(fg, c[0].node));
    assert_string_equal(weft_op_name(weft_apply_op(c[0].node)), "Output");
    assert_int_equal(weft_fgraph_n_clients(fg, x), 2); /* Neg and Output(1) */
    assert_int_equal(weft_fgraph_n_applies(fg), 1);
    assert_int_equal(weft_fgraph_check_integrity(fg), WEFT_OK);
    weft_fgraph_destroy(fg);
}

static void test_fgraph_inputs_discovered_in_order_without_constants(void **state)
{
    fx_t *f = *state;
    weft_var_t *a = fx_var(f, "a"), *b = fx_var(f, "b");
    assert_non_null(weft_constant_scalar(f->g, WEFT_FLOAT64, 1.0));
    weft_var_t *c1 = NULL;
    double d[3] = {1, 2, 3};
    c1 = weft_constant_create(f->g, f->vec3, d, sizeof(d));
    weft_var_t *z = fx_bin(f, f->add, fx_bin(f, f->mul, b, c1), fx_un(f, f->exp, a));
    weft_fgraph_options_t o = WEFT_FGRAPH_OPTIONS_INIT;
    o.clone = false;
    weft_fgraph_t *fg;
    assert_int_equal(weft_fgraph_create(f->g, 0, NULL, 1, &z, &o, NULL, &fg), WEFT_OK);
    assert_int_equal(weft_fgraph_n_inputs(fg), 2);
    assert_ptr_equal(weft_fgraph_input(fg, 0), b);
    assert_ptr_equal(weft_fgraph_input(fg, 1), a);
    assert_true(weft_fgraph_contains_var(fg, c1));
    assert_int_equal(weft_fgraph_check_integrity(fg), WEFT_OK);
    weft_fgraph_destroy(fg);
}

static void test_fgraph_missing_input_is_reported_or_imported(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *w = fx_var(f, "w");
    weft_var_t *z = fx_bin(f, f->add, x, w);
    weft_fgraph_options_t o = WEFT_FGRAPH_OPTIONS_INIT;
    weft_fgraph_t *fg = (weft_fgraph_t *)1;
    int destroyed = 0;
    rec_t *r = rec_new();
    r->destroyed = &destroyed;
    weft_feature_t *feats[1] = {&r->base};
    o.n_features = 1;
    o.features = feats;
    assert_int_equal(weft_fgraph_create(f->g, 1, &x, 1, &z, &o, NULL, &fg), WEFT_EMISSING_INPUT);
    assert_null(fg);
    assert_int_equal(destroyed, 1); /* features are taken on every outcome */
    assert_non_null(strstr(weft_graph_last_error(f->g), "Undeclared input: variable"));
    assert_non_null(strstr(weft_graph_last_error(f->g), "'w'"));
    o.n_features = 0;
    o.import_missing = true;
    assert_int_equal(weft_fgraph_create(f->g, 1, &x, 1, &z, &o, NULL, &fg), WEFT_OK);
    assert_int_equal(weft_fgraph_n_inputs(fg), 2);
    assert_string_equal(weft_var_name(weft_fgraph_input(fg, 1)), "w");
    assert_int_equal(weft_fgraph_check_integrity(fg), WEFT_OK);
    weft_fgraph_destroy(fg);
}

static void test_fgraph_create_bad_arguments(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *z = fx_un(f, f->neg, x), *c;
    c = weft_constant_scalar(f->g, WEFT_FLOAT64, 1.0);
    weft_fgraph_t *fg;
    assert_int_equal(weft_fgraph_create(NULL, 1, &x, 1, &z, NULL, NULL, &fg), WEFT_EINVAL);
    assert_int_equal(weft_fgraph_create(f->g, 1, &x, 1, &z, NULL, NULL, NULL), WEFT_EINVAL);
    assert_int_equal(weft_fgraph_create(f->g, 1, &x, 0, &z, NULL, NULL, &fg), WEFT_EINVAL);
    assert_non_null(strstr(weft_graph_last_error(f->g), "no outputs"));
    assert_int_equal(weft_fgraph_create(f->g, 1, &z, 1, &z, NULL, NULL, &fg), WEFT_EINVAL);
    assert_non_null(strstr(weft_graph_last_error(f->g), "has an owner"));
    assert_int_equal(weft_fgraph_create(f->g, 1, &c, 1, &z, NULL, NULL, &fg), WEFT_EINVAL);
    weft_var_t *two[2] = {x, x};
    assert_int_equal(weft_fgraph_create(f->g, 2, two, 1, &z, NULL, NULL, &fg), WEFT_EINVAL);
    assert_non_null(strstr(weft_graph_last_error(f->g), "listed twice"));
    weft_graph_t *g2;
    const weft_type_t *t2;
    weft_var_t *y;
    weft_graph_create(NULL, &g2);
    weft_type_tensor(g2, WEFT_FLOAT64, 1, NULL, &t2);
    y = weft_var_create(g2, t2, "alien");
    assert_int_equal(weft_fgraph_create(f->g, 1, &x, 1, &y, NULL, NULL, &fg), WEFT_EFOREIGN);
    assert_non_null(strstr(weft_graph_last_error(f->g), "'alien'"));
    weft_graph_destroy(g2);
    const weft_type_t *nt;
    weft_var_t *nv;
    weft_type_null(f->g, &nt);
    nv = weft_var_create(f->g, nt, "undefined_grad");
    assert_int_equal(weft_fgraph_create(f->g, 0, NULL, 1, &nv, NULL, NULL, &fg), WEFT_ETYPE);
    assert_non_null(strstr(weft_graph_last_error(f->g), "null type"));
}

static void test_fgraph_input_mutable_flags_are_stored(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *y = fx_var(f, "y"), *z = fx_bin(f, f->add, x, y);
    weft_var_t *in[2] = {x, y};
    bool mut[2] = {false, true};
    weft_fgraph_options_t o = WEFT_FGRAPH_OPTIONS_INIT;
    o.input_mutable = mut;
    weft_fgraph_t *fg;
    assert_int_equal(weft_fgraph_create(f->g, 2, in, 1, &z, &o, NULL, &fg), WEFT_OK);
    assert_false(weft_fgraph_input_is_mutable(fg, 0));
    assert_true(weft_fgraph_input_is_mutable(fg, 1));
    assert_true(weft_fgraph_input_is_mutable(fg, 5));
    weft_fgraph_t *c;
    assert_int_equal(weft_fgraph_clone(fg, true, NULL, &c), WEFT_OK);
    assert_false(weft_fgraph_input_is_mutable(c, 0));
    weft_fgraph_destroy(c);
    weft_fgraph_destroy(fg);
}

static void test_fgraph_import_var_and_node(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *w = fx_var(f, "w"), *z = fx_un(f, f->neg, x);
    weft_fgraph_t *fg = fx_fgraph(f, 1, &x, 1, &z, false, 0, NULL);
    weft_var_t *e = fx_un(f, f->exp, fx_bin(f, f->add, x, w));
    assert_int_equal(weft_fgraph_import_var(fg, e, false, "test"), WEFT_EMISSING_INPUT);
    assert_non_null(strstr(fg_err(fg), "'w'"));
    assert_int_equal(weft_fgraph_n_applies(fg), 1); /* nothing imported */
    assert_int_equal(weft_fgraph_import_node(fg, weft_var_owner(e), false, "t"),
                     WEFT_EMISSING_INPUT);
    assert_int_equal(weft_fgraph_import_node(fg, weft_var_owner(e), true, "t"), WEFT_OK);
    assert_int_equal(weft_fgraph_n_applies(fg), 3);
    assert_int_equal(weft_fgraph_n_inputs(fg), 2);
    assert_ptr_equal(weft_fgraph_input(fg, 1), w);
    assert_true(weft_fgraph_contains_var(fg, e));
    /* e has no client and is not an output: check_integrity's vars_between
     * does not reach it, so the imported dangling subgraph is reported. */
    assert_int_equal(weft_fgraph_check_integrity(fg), WEFT_EINCONSISTENT);
    assert_non_null(strstr(fg_err(fg), "inappropriately cached"));
    assert_int_equal(weft_fgraph_add_output(fg, e, "keep"), WEFT_OK);
    assert_int_equal(weft_fgraph_check_integrity(fg), WEFT_OK);
    assert_int_equal(weft_fgraph_import_var(fg, NULL, false, NULL), WEFT_EINVAL);
    assert_int_equal(weft_fgraph_import_node(fg, NULL, false, NULL), WEFT_EINVAL);
    weft_fgraph_destroy(fg);
}

static void test_fgraph_change_node_input_checks(void **state)
{
    fx_t *f = *state;
    weft_var_t *y = fx_var(f, "y");
    weft_var_t *x3 = weft_var_create(f->g, f->vec3, "x3"),
               *y3 = weft_var_create(f->g, f->vec3, "y3");
    assert_non_null(weft_var_create(f->g, f->ivec, "iv"));
    weft_var_t *e = fx_un(f, f->exp, x3), *z = fx_un(f, f->neg, e);
    weft_var_t *in[3] = {x3, y, y3};
    weft_fgraph_t *fg = fx_fgraph(f, 3, in, 1, &z, false, 0, NULL);
    weft_apply_t *neg = weft_var_owner(z);
    assert_int_equal(weft_fgraph_change_node_input(fg, neg, 0, y, "r"), WEFT_ETYPE);
    assert_non_null(strstr(fg_err(fg), "'y' (float64[?]"));
    assert_non_null(strstr(fg_err(fg), "cannot replace"));
    assert_non_null(strstr(fg_err(fg), "(Neg, built at"));
    assert_int_equal(weft_fgraph_change_node_input(fg, neg, 1, y3, "r"), WEFT_EINVAL);
    assert_int_equal(weft_fgraph_change_node_input(fg, neg, 0, e, "r"), WEFT_OK); /* no-op */
    assert_int_equal(weft_fgraph_change_node_input(fg, neg, 0, y3, "r"), WEFT_OK);
    assert_ptr_equal(weft_apply_input(neg, 0), y3);
    assert_false(weft_fgraph_contains_apply(fg, weft_var_owner(e))); /* pruned */
    assert_false(weft_fgraph_contains_var(fg, e));
    assert_false(weft_fgraph_contains_var(fg, x3)); /* unused input leaves the variables */
    const weft_client_t *c;
    size_t n;
    assert_int_equal(weft_fgraph_clients(fg, x3, &c, &n), WEFT_OK);
    assert_int_equal(n, 0);
    assert_int_equal(weft_fgraph_check_integrity(fg), WEFT_OK);
    assert_int_equal(weft_fgraph_change_node_input(fg, weft_var_owner(e), 0, x3, "r"),
                     WEFT_ENOTFOUND);
    assert_non_null(strstr(fg_err(fg), "not in the FunctionGraph"));
    assert_int_equal(weft_fgraph_change_node_input(fg, neg, 0, NULL, "r"), WEFT_EINVAL);
    weft_fgraph_destroy(fg);
}

static void test_fgraph_replace_rewires_all_clients_and_prunes(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *e = fx_un(f, f->exp, x);
    weft_var_t *a = fx_bin(f, f->add, e, e), *z = fx_bin(f, f->mul, a, e);
    weft_var_t *outs[2] = {z, e};
    weft_fgraph_t *fg = fx_fgraph(f, 1, &x, 2, outs, false, 0, NULL);
    weft_var_t *n = fx_un(f, f->neg, x);
    assert_int_equal(weft_fgraph_replace(fg, e, n, "test"), WEFT_OK);
    assert_ptr_equal(weft_apply_input(weft_var_owner(a), 0), n);
    assert_ptr_equal(weft_apply_input(weft_var_owner(a), 1), n);
    assert_ptr_equal(weft_apply_input(weft_var_owner(z), 1), n);
    assert_ptr_equal(weft_fgraph_output(fg, 1), n);
    assert_false(weft_fgraph_contains_apply(fg, weft_var_owner(e)));
    assert_int_equal(weft_fgraph_n_clients(fg, n), 4);
    assert_int_equal(weft_fgraph_check_integrity(fg), WEFT_OK);
    /* var not in the graph (already replaced): an error naming it, nothing changed */
    assert_int_equal(weft_fgraph_replace(fg, e, n, "again"), WEFT_ENOTFOUND);
    assert_non_null(strstr(fg_err(fg), "replace: variable"));
    assert_non_null(strstr(fg_err(fg), "is not in the FunctionGraph"));
    assert_non_null(strstr(fg_err(fg), "created at "));
    assert_int_equal(weft_fgraph_n_clients(fg, n), 4);
    assert_int_equal(weft_fgraph_check_integrity(fg), WEFT_OK);
    weft_var_t *iv;
    iv = weft_var_create(f->g, f->ivec, "iv");
    assert_int_equal(weft_fgraph_replace(fg, n, iv, "bad"), WEFT_ETYPE);
    assert_non_null(strstr(fg_err(fg), "'iv' (int32[?]"));
    weft_var_t *w = fx_var(f, "w");
    assert_int_equal(weft_fgraph_replace(fg, n, fx_un(f, f->exp, w), "missing"),
                     WEFT_EMISSING_INPUT);
    assert_int_equal(weft_fgraph_n_clients(fg, n), 4); /* untouched */
    assert_int_equal(weft_fgraph_check_integrity(fg), WEFT_OK);
    weft_var_t *pairs_old[2] = {a, z}, *pairs_new[2] = {fx_un(f, f->neg, n), x};
    assert_int_equal(weft_fgraph_replace_all(fg, 2, pairs_old, pairs_new, "all"), WEFT_OK);
    assert_ptr_equal(weft_fgraph_output(fg, 0), x);
    assert_int_equal(weft_fgraph_check_integrity(fg), WEFT_OK);
    weft_fgraph_destroy(fg);
}

static void test_fgraph_replace_with_foreign_variable_is_eforeign(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *z = fx_un(f, f->neg, x);
    weft_fgraph_t *fg = fx_fgraph(f, 1, &x, 1, &z, false, 0, NULL);
    weft_graph_t *g2;
    const weft_type_t *t2;
    weft_var_t *y;
    weft_graph_create(NULL, &g2);
    weft_type_tensor(g2, WEFT_FLOAT64, 1, NULL, &t2);
    y = weft_var_create(g2, t2, "alien");
    assert_int_equal(weft_fgraph_replace(fg, z, y, "r"), WEFT_EFOREIGN);
    assert_non_null(strstr(fg_err(fg), "'alien'"));
    assert_non_null(strstr(fg_err(fg), "test_fgraph.c:"));
    assert_int_equal(weft_fgraph_replace(fg, y, z, "r"), WEFT_EFOREIGN);
    assert_int_equal(weft_fgraph_change_node_input(fg, weft_var_owner(z), 0, y, "r"),
                     WEFT_EFOREIGN);
    assert_int_equal(weft_fgraph_add_output(fg, y, "r"), WEFT_EFOREIGN);
    weft_graph_destroy(g2);
    weft_fgraph_destroy(fg);
}

static void test_fgraph_remove_node_removes_dependents_and_slots(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *e = fx_un(f, f->exp, x), *n = fx_un(f, f->neg, e);
    weft_var_t *m = fx_un(f, f->neg, x);
    weft_var_t *outs[3] = {n, m, e};
    weft_fgraph_t *fg = fx_fgraph(f, 1, &x, 3, outs, false, 0, NULL);
    assert_int_equal(weft_fgraph_remove_node(fg, weft_var_owner(e), "rm"), WEFT_OK);
    assert_int_equal(weft_fgraph_n_applies(fg), 1);
    assert_int_equal(weft_fgraph_n_outputs(fg), 1);
    assert_ptr_equal(weft_fgraph_output(fg, 0), m);
    const weft_client_t *c;
    size_t k;
    assert_int_equal(weft_fgraph_clients(fg, m, &c, &k), WEFT_OK);
    assert_int_equal(k, 1);
    assert_int_equal(weft_apply_output_slot(c[0].node), 0); /* renumbered */
    assert_int_equal(weft_fgraph_check_integrity(fg), WEFT_OK);
    assert_int_equal(weft_fgraph_remove_node(fg, weft_var_owner(e), "rm"), WEFT_ENOTFOUND);
    assert_non_null(strstr(fg_err(fg), "(Exp, built at"));
    assert_non_null(strstr(fg_err(fg), "not in the FunctionGraph"));
    assert_int_equal(weft_fgraph_remove_node(fg, c[0].node, "rm"), WEFT_EINVAL);
    weft_fgraph_destroy(fg);
}

static void test_fgraph_inputs_and_outputs_add_and_remove(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *y = fx_var(f, "y"), *c;
    weft_var_t *a = fx_un(f, f->exp, x), *b = fx_bin(f, f->add, x, y);
    c = weft_constant_scalar(f->g, WEFT_FLOAT64, 1.0);
    weft_fgraph_t *fg = fx_fgraph(f, 1, &x, 1, &a, false, 0, NULL);
    assert_int_equal(weft_fgraph_add_output(fg, b, "r"), WEFT_EMISSING_INPUT);
    assert_int_equal(weft_fgraph_n_outputs(fg), 1);
    assert_int_equal(weft_fgraph_add_input(fg, y), WEFT_OK);
    assert_int_equal(weft_fgraph_add_input(fg, y), WEFT_OK); /* already there */
    assert_int_equal(weft_fgraph_n_inputs(fg), 2);
    assert_int_equal(weft_fgraph_add_input(fg, a), WEFT_EINVAL);
    assert_int_equal(weft_fgraph_add_input(fg, c), WEFT_EINVAL);
    assert_int_equal(weft_fgraph_add_output(fg, b, "r"), WEFT_OK);
    assert_int_equal(weft_fgraph_add_output(fg, a, "r"), WEFT_OK);
    assert_int_equal(weft_fgraph_n_outputs(fg), 3);
    assert_int_equal(weft_fgraph_check_integrity(fg), WEFT_OK);
    assert_int_equal(weft_fgraph_remove_output(fg, 0, "r"), WEFT_OK);
    assert_true(weft_fgraph_contains_apply(fg, weft_var_owner(a))); /* slot 2 -> 1 keeps it */
    assert_ptr_equal(weft_fgraph_output(fg, 1), a);
    assert_int_equal(weft_fgraph_remove_output(fg, 1, "r"), WEFT_OK);
    assert_false(weft_fgraph_contains_apply(fg, weft_var_owner(a)));
    assert_int_equal(weft_fgraph_remove_output(fg, 1, "r"), WEFT_EINVAL);
    assert_int_equal(weft_fgraph_check_integrity(fg), WEFT_OK);
    assert_int_equal(weft_fgraph_remove_input(fg, 1, "r"), WEFT_OK); /* y: removes Add */
    assert_int_equal(weft_fgraph_n_applies(fg), 0);
    assert_int_equal(weft_fgraph_n_outputs(fg), 0);
    assert_int_equal(weft_fgraph_n_inputs(fg), 1);
    assert_int_equal(weft_fgraph_check_integrity(fg), WEFT_OK);
    assert_int_equal(weft_fgraph_remove_input(fg, 3, "r"), WEFT_EINVAL);
    weft_fgraph_destroy(fg);
}

/* Update pairs name positions: removing an input or an output slot (directly
 * or as remove_input / remove_node drop it) drops the pairs naming it and
 * renumbers the later ones; clone copies them; bad arguments change nothing. */
static void test_fgraph_update_pairs_follow_removals_and_clone(void **state)
{
    fx_t *f = *state;
    weft_var_t *in[5] = {fx_var(f, "a"), fx_var(f, "b"), fx_var(f, "c"), fx_var(f, "d"), NULL};
    assert_non_null(in[4] = weft_var_create(f->g, f->scalar, "s"));
    weft_var_t *outs[5] = {fx_un(f, f->neg, in[0]), fx_un(f, f->exp, in[1]),
                           fx_bin(f, f->add, in[2], in[3]), fx_un(f, f->neg, in[3]),
                           fx_un(f, f->neg, in[4])};
    weft_fgraph_t *fg = fx_fgraph(f, 5, in, 5, outs, false, 0, NULL), *c;
    /* bad arguments: named errors, nothing recorded */
    assert_int_equal(weft_fgraph_set_update(NULL, 0, 0), WEFT_EINVAL);
    assert_int_equal(weft_fgraph_set_update(fg, 5, 0), WEFT_EINVAL);
    assert_non_null(strstr(fg_err(fg), "no output 5 (5 outputs)"));
    assert_int_equal(weft_fgraph_set_update(fg, 0, 5), WEFT_EINVAL);
    assert_non_null(strstr(fg_err(fg), "no input 5 (5 inputs)"));
    assert_int_equal(weft_fgraph_set_update(fg, 4, 3), WEFT_ETYPE); /* float64[] into [?] */
    assert_non_null(strstr(fg_err(fg), "cannot update input 3"));
    assert_int_equal(weft_fgraph_n_updates(fg), 0);
    for (size_t k = 0; k < 4; k++) assert_int_equal(weft_fgraph_set_update(fg, k, k), WEFT_OK);
    assert_int_equal(weft_fgraph_set_update(fg, 2, 2), WEFT_OK); /* the same pair again */
    assert_int_equal(weft_fgraph_set_update(fg, 0, 1), WEFT_EDUPLICATE);
    assert_non_null(strstr(fg_err(fg), "output 0 already updates input 0"));
    assert_int_equal(weft_fgraph_set_update(fg, 4, 1), WEFT_EDUPLICATE);
    assert_non_null(strstr(fg_err(fg), "input 1 is already updated by output 1"));
    assert_int_equal(weft_fgraph_n_updates(fg), 4);
    assert_int_equal(weft_fgraph_set_update(fg, 4, SIZE_MAX), WEFT_OK); /* had none */
    assert_int_equal(weft_fgraph_set_update(fg, 3, SIZE_MAX), WEFT_OK);
    assert_int_equal(weft_fgraph_update_input(fg, 3), SIZE_MAX);
    assert_int_equal(weft_fgraph_set_update(fg, 3, 3), WEFT_OK);
    assert_int_equal(weft_fgraph_update_input(fg, 4), SIZE_MAX);
    assert_int_equal(weft_fgraph_update_input(fg, 99), SIZE_MAX);
    assert_int_equal(weft_fgraph_update_input(NULL, 0), SIZE_MAX);
    assert_int_equal(weft_fgraph_n_updates(NULL), 0);
    assert_int_equal(weft_fgraph_clone(fg, true, NULL, &c), WEFT_OK);
    /* outputs -a, exp b, c + d, -d, -s; drop exp b: its pair goes, later slots shift */
    assert_int_equal(weft_fgraph_remove_output(fg, 1, "r"), WEFT_OK);
    size_t want1[4] = {0, 2, 3, SIZE_MAX};
    for (size_t k = 0; k < 4; k++) assert_int_equal(weft_fgraph_update_input(fg, k), want1[k]);
    /* drop input a: -a's slot 0 goes with it; inputs b c d s, outputs c + d, -d, -s */
    assert_int_equal(weft_fgraph_remove_input(fg, 0, "r"), WEFT_OK);
    assert_int_equal(weft_fgraph_n_updates(fg), 2);
    size_t want2[3] = {1, 2, SIZE_MAX};
    for (size_t k = 0; k < 3; k++) assert_int_equal(weft_fgraph_update_input(fg, k), want2[k]);
    /* drop input c: the Add and slot 0; inputs b d s, outputs -d, -s */
    assert_int_equal(weft_fgraph_remove_input(fg, 1, "r"), WEFT_OK);
    assert_int_equal(weft_fgraph_n_updates(fg), 1);
    assert_int_equal(weft_fgraph_update_input(fg, 0), 1);
    assert_int_equal(weft_fgraph_update_input(fg, 1), SIZE_MAX);
    /* remove_node drops -d's slot */
    assert_int_equal(weft_fgraph_remove_node(fg, weft_var_owner(outs[3]), "r"), WEFT_OK);
    assert_int_equal(weft_fgraph_n_updates(fg), 0);
    assert_int_equal(weft_fgraph_check_integrity(fg), WEFT_OK);
    /* the clone kept its own copy */
    assert_int_equal(weft_fgraph_n_updates(c), 4);
    for (size_t k = 0; k < 4; k++) assert_int_equal(weft_fgraph_update_input(c, k), k);
    assert_int_equal(weft_fgraph_update_input(c, 4), SIZE_MAX);
    weft_fgraph_destroy(c);
    weft_fgraph_destroy(fg);
}

static void test_fgraph_multi_output_siblings_are_variables(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x");
    weft_apply_t *s;
    assert_non_null(s = weft_apply_create(f->g, f->split, 1, &x));
    weft_var_t *o0 = weft_apply_output(s, 0), *o1 = weft_apply_output(s, 1);
    weft_var_t *z = fx_un(f, f->neg, o0);
    weft_fgraph_t *fg = fx_fgraph(f, 1, &x, 1, &z, false, 0, NULL);
    assert_true(weft_fgraph_contains_var(fg, o1));
    assert_int_equal(weft_fgraph_n_clients(fg, o1), 0);
    assert_int_equal(weft_fgraph_check_integrity(fg), WEFT_OK);
    weft_fgraph_destroy(fg);
}

/* An unknown variable in replace is an error naming it (and its
 * creation site); replace_all checks every pair first, so nothing changes;
 * replace_all_validate reverts. A listed sibling output pruned by an earlier
 * pair of the same call is skipped. */
static void test_fgraph_replace_unknown_variable_is_enotfound(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x");
    weft_apply_t *sp;
    assert_non_null(sp = weft_apply_create(f->g, f->split, 1, &x));
    weft_var_t *o0 = weft_apply_output(sp, 0), *o1 = weft_apply_output(sp, 1);
    weft_var_t *e = fx_un(f, f->exp, o0), *z = fx_bin(f, f->add, e, x);
    weft_fgraph_t *fg = fx_fgraph(f, 1, &x, 1, &z, false, 0, NULL);
    weft_var_t *stray = fx_un(f, f->neg, x), *n = fx_un(f, f->neg, x);
    weft_var_set_name(stray, "stray");
    assert_int_equal(weft_fgraph_replace(fg, stray, n, "r"), WEFT_ENOTFOUND);
    assert_non_null(strstr(fg_err(fg), "replace: variable"));
    assert_non_null(strstr(fg_err(fg), "'stray'"));
    assert_non_null(strstr(fg_err(fg), "graph_fixture.c:"));
    assert_non_null(strstr(fg_err(fg), "is not in the FunctionGraph"));
    assert_int_equal(weft_fgraph_replace(fg, stray, stray, "same"), WEFT_ENOTFOUND);
    /* the valid first pair is not applied either */
    weft_var_t *olds[2] = {e, stray}, *news[2] = {n, n};
    assert_int_equal(weft_fgraph_replace_all(fg, 2, olds, news, "all"), WEFT_ENOTFOUND);
    assert_non_null(strstr(fg_err(fg), "'stray'"));
    assert_ptr_equal(weft_apply_input(weft_var_owner(z), 0), e);
    assert_int_equal(weft_fgraph_n_clients(fg, n), 0);
    assert_int_equal(weft_fgraph_replace_all_validate(fg, 2, olds, news, "v"), WEFT_ENOTFOUND);
    assert_ptr_equal(weft_apply_input(weft_var_owner(z), 0), e);
    assert_true(weft_fgraph_contains_var(fg, e));
    assert_int_equal(weft_fgraph_check_integrity(fg), WEFT_OK);
    /* o0's replacement prunes Split, so o1 (listed, in the graph when called) is skipped */
    weft_var_t *o_old[2] = {o0, o1}, *o_new[2] = {x, x};
    assert_int_equal(weft_fgraph_replace_all(fg, 2, o_old, o_new, "split"), WEFT_OK);
    assert_false(weft_fgraph_contains_apply(fg, sp));
    assert_false(weft_fgraph_contains_var(fg, o1));
    assert_ptr_equal(weft_apply_input(weft_var_owner(e), 0), x);
    assert_int_equal(weft_fgraph_replace(fg, o1, x, "gone"), WEFT_ENOTFOUND);
    /* a declared input nothing uses is known: no clients, nothing to do */
    weft_var_t *fresh = fx_var(f, "fresh");
    assert_int_equal(weft_fgraph_add_input(fg, fresh), WEFT_OK);
    assert_false(weft_fgraph_contains_var(fg, fresh));
    assert_int_equal(weft_fgraph_replace(fg, fresh, x, "unused input"), WEFT_OK);
    assert_int_equal(weft_fgraph_check_integrity(fg), WEFT_OK);
    weft_fgraph_destroy(fg);
}

/* e = Exp(x), n1 = Neg(e), z = Neg(n1): an edit that would make Exp read n1
 * or z closes a cycle and is refused with the cycle named; nothing changes,
 * no callback fires. */
typedef struct cyc {
    weft_var_t *x, *e, *n1, *z;
    weft_fgraph_t *fg;
    rec_t *r;
} cyc_t;

static cyc_t cyc_build(fx_t *f)
{
    cyc_t c;
    c.x = fx_var(f, "x");
    c.e = fx_un(f, f->exp, c.x);  /* apply 0 */
    c.n1 = fx_un(f, f->neg, c.e); /* apply 1 */
    c.z = fx_un(f, f->neg, c.n1); /* apply 2 */
    c.r = rec_new();
    weft_feature_t *feats[1] = {&c.r->base};
    c.fg = fx_fgraph(f, 1, &c.x, 1, &c.z, false, 1, feats);
    c.r->len = 0;
    c.r->log[0] = '\0';
    return c;
}

/* The graph is as built: Exp reads x, the order is Exp, Neg, Neg, and no
 * callback fired. */
static void cyc_expect_unchanged(const cyc_t *c)
{
    assert_ptr_equal(weft_apply_input(weft_var_owner(c->e), 0), c->x);
    assert_int_equal(weft_fgraph_n_clients(c->fg, c->x), 1);
    assert_int_equal(weft_fgraph_n_clients(c->fg, c->n1), 1);
    assert_string_equal(c->r->log, "");
    assert_int_equal(weft_fgraph_check_integrity(c->fg), WEFT_OK);
    weft_apply_t *const *order;
    size_t n;
    assert_int_equal(weft_fgraph_toposort(c->fg, &order, &n), WEFT_OK);
    assert_int_equal(n, 3);
    assert_ptr_equal(order[0], weft_var_owner(c->e));
    assert_ptr_equal(order[2], weft_var_owner(c->z));
}

static void test_fgraph_change_node_input_closing_a_cycle_is_ecycle(void **state)
{
    cyc_t c = cyc_build(*state);
    weft_apply_t *exp = weft_var_owner(c.e);
    assert_int_equal(weft_fgraph_change_node_input(c.fg, exp, 0, c.n1, "loop"), WEFT_ECYCLE);
    assert_string_equal(msg_without_sites(fg_err(c.fg)),
                        "change_node_input: variable 2 'Neg.out' (float64[?]) as input 0 of "
                        "apply 0 (Exp) would close a cycle (2 nodes): apply 0 (Exp) -> apply 1 "
                        "(Neg)");
    cyc_expect_unchanged(&c);
    /* a node's own output, and a variable not yet in the graph built on one */
    weft_apply_t *n2 = weft_var_owner(c.z);
    assert_int_equal(weft_fgraph_change_node_input(c.fg, n2, 0, c.z, "self"), WEFT_ECYCLE);
    assert_non_null(strstr(msg_without_sites(fg_err(c.fg)), "cycle (1 nodes): apply 2 (Neg)"));
    fx_t *f = *state;
    weft_var_t *fresh = fx_bin(f, f->add, c.z, c.x); /* apply 4 (3: Output(0)), not in fg */
    assert_int_equal(weft_fgraph_change_node_input(c.fg, exp, 0, fresh, "loop"), WEFT_ECYCLE);
    assert_non_null(strstr(msg_without_sites(fg_err(c.fg)),
                           "(4 nodes): apply 0 (Exp) -> apply 4 (Add) -> apply 2 (Neg) -> "
                           "apply 1 (Neg)"));
    cyc_expect_unchanged(&c);
    weft_fgraph_destroy(c.fg);
}

static void test_fgraph_replace_closing_a_cycle_is_ecycle(void **state)
{
    cyc_t c = cyc_build(*state);
    /* every client of e (the first Neg) would read z, which reads it */
    assert_int_equal(weft_fgraph_replace(c.fg, c.e, c.z, "loop"), WEFT_ECYCLE);
    assert_string_equal(msg_without_sites(fg_err(c.fg)),
                        "replace: variable 1 'Exp.out' (float64[?]) by variable 3 'Neg.out' "
                        "(float64[?]) would close a cycle (2 nodes): apply 1 (Neg) -> apply 2 "
                        "(Neg)");
    cyc_expect_unchanged(&c);
    /* the second pair closes the cycle once the first made z unused */
    weft_var_t *olds[2] = {c.z, c.e}, *news[2] = {c.n1, c.z};
    assert_int_equal(weft_fgraph_replace_all_validate(c.fg, 2, olds, news, "loop"), WEFT_ECYCLE);
    assert_non_null(strstr(fg_err(c.fg), "replace: variable 1 'Exp.out'"));
    assert_ptr_equal(weft_fgraph_output(c.fg, 0), c.z); /* the first pair reverted */
    c.r->len = 0;                                       /* the revert's callbacks */
    c.r->log[0] = '\0';
    cyc_expect_unchanged(&c);
    assert_int_equal(weft_fgraph_replace_validate(c.fg, c.e, c.n1, "loop"), WEFT_ECYCLE);
    cyc_expect_unchanged(&c);
    assert_int_equal(weft_fgraph_replace_all(c.fg, 1, &c.e, &c.z, "loop"), WEFT_ECYCLE);
    cyc_expect_unchanged(&c);
    weft_fgraph_destroy(c.fg);
}

/* A cycle closed behind the fgraphs' backs (tests/support/shared_cycle.h):
 * check_integrity reports it on both, naming its nodes, before any index
 * inconsistency it also causes. */
static void test_fgraph_check_integrity_reports_a_cycle_as_ecycle(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *y = fx_var(f, "y");
    weft_fgraph_t *a, *b;
    assert_non_null(shared_cycle_build(f->g, f->exp, f->neg, f->add, x, y, &a, &b));
    /* a's ranks miss b's edit: the rank check finds it, the pass names the cycle */
    assert_int_equal(weft_fgraph_check_integrity(a), WEFT_ECYCLE);
    assert_string_equal(msg_without_sites(fg_err(a)),
                        "graph contains a cycle (3 nodes): apply 0 (Exp) -> apply 2 (Neg) -> "
                        "apply 1 (Neg)");
    assert_int_equal(weft_fgraph_check_integrity(b), WEFT_ECYCLE);
    assert_non_null(strstr(msg_without_sites(fg_err(b)), "cycle (3 nodes): apply 0 (Exp) -> "));
    weft_fgraph_destroy(a);
    weft_fgraph_destroy(b);
}

/* Two fgraphs sharing nodes (clone=false): an edit through one changes the
 * shared node's inputs behind the other's indexes; check_integrity sees it. */
static void test_fgraph_check_integrity_detects_inconsistent_clients(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *y = fx_var(f, "y"), *z = fx_un(f, f->neg, x);
    weft_var_t *in[2] = {x, y};
    weft_fgraph_t *a = fx_fgraph(f, 2, in, 1, &z, false, 0, NULL);
    weft_fgraph_t *b = fx_fgraph(f, 2, in, 1, &z, false, 0, NULL);
    assert_int_equal(weft_fgraph_change_node_input(a, weft_var_owner(z), 0, y, "r"), WEFT_OK);
    assert_int_equal(weft_fgraph_check_integrity(a), WEFT_OK);
    assert_int_equal(weft_fgraph_check_integrity(b), WEFT_EINCONSISTENT);
    assert_non_null(strstr(weft_fgraph_last_error(b), "Inconsistent clients list"));
    assert_non_null(strstr(weft_fgraph_last_error(b), "(Neg, built at"));
    /* b is left to weft_graph_destroy: remaining fgraphs are freed with the context */
    weft_fgraph_destroy(a);
}

static void test_fgraph_clone_gets_equiv_and_features(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *z = fx_un(f, f->neg, fx_un(f, f->exp, x));
    rec_t *r = rec_new();
    weft_feature_t *feats[1] = {&r->base};
    weft_fgraph_t *fg = fx_fgraph(f, 1, &x, 1, &z, false, 1, feats), *c;
    weft_clone_map_t *m;
    assert_int_equal(weft_fgraph_clone(fg, true, &m, &c), WEFT_OK);
    assert_ptr_equal(weft_fgraph_output(c, 0), weft_clone_map_var(m, z));
    assert_ptr_equal(weft_fgraph_input(c, 0), weft_clone_map_var(m, x));
    assert_int_equal(weft_fgraph_n_applies(c), 2);
    rec_t *rc = (rec_t *)weft_fgraph_find_feature(c, &rec_class);
    assert_non_null(rc);
    assert_ptr_not_equal(rc, r);
    assert_string_equal(rc->log, "attach;"); /* attached after the import: no replay */
    assert_int_equal(weft_fgraph_check_integrity(c), WEFT_OK);
    weft_clone_map_destroy(m);
    weft_fgraph_destroy(c);
    weft_fgraph_destroy(fg);
    assert_int_equal(weft_fgraph_clone(NULL, true, NULL, &c), WEFT_EINVAL);
}

static void test_fgraph_queries_on_null_and_foreign(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *z = fx_un(f, f->neg, x), *w = fx_var(f, "w");
    weft_fgraph_t *fg = fx_fgraph(f, 1, &x, 1, &z, false, 0, NULL);
    const weft_client_t *c;
    size_t n;
    assert_int_equal(weft_fgraph_clients(fg, w, &c, &n), WEFT_ENOTFOUND);
    assert_int_equal(weft_fgraph_clients(NULL, w, &c, &n), WEFT_EINVAL);
    assert_int_equal(weft_fgraph_n_clients(fg, w), 0);
    weft_apply_t *const *nodes;
    assert_int_equal(weft_fgraph_applies(fg, &nodes, &n), WEFT_OK);
    assert_int_equal(n, 1);
    assert_ptr_equal(nodes[0], weft_var_owner(z));
    assert_int_equal(weft_fgraph_applies(NULL, &nodes, &n), WEFT_EINVAL);
    assert_int_equal(weft_fgraph_n_inputs(NULL), 0);
    assert_string_equal(weft_fgraph_last_error(NULL), "");
    assert_false(weft_fgraph_contains_var(fg, NULL));
    weft_fgraph_destroy(fg);
    weft_fgraph_destroy(NULL);
}

/* ---- allocation failures ------------------------------------------------------ */

typedef struct fail_alloc {
    long budget; /* allocations left before failing; < 0: never fail */
    long live;   /* bytes currently allocated */
} fail_alloc_t;

static void *fail_resize(void *user, void *ptr, size_t old_size, size_t new_size)
{
    fail_alloc_t *fa = user;
    if (new_size == 0) {
        fa->live -= (long)old_size;
        free(ptr);
        return NULL;
    }
    if (fa->budget == 0) return NULL;
    if (fa->budget > 0) fa->budget--;
    void *p = realloc(ptr, new_size);
    if (p) fa->live += (long)new_size - (long)(ptr ? old_size : 0);
    return p;
}

/* Runs a whole scenario; every step may fail with a status, none may crash. */
static bool oom_scenario(const weft_allocator_t *al)
{
    weft_graph_t *g = NULL;
    if (weft_graph_create(al, &g) != WEFT_OK) return false;
    const weft_type_t *t;
    const weft_op_t *add = NULL, *neg = NULL;
    weft_var_t *x = NULL, *y = NULL, *z = NULL, *n = NULL;
    bool ok = weft_type_tensor(g, WEFT_FLOAT64, 1, NULL, &t) == WEFT_OK &&
              weft_op_create(g, &fx_add_class, NULL, &add) == WEFT_OK &&
              weft_op_create(g, &fx_neg_class, NULL, &neg) == WEFT_OK &&
              (x = weft_var_create(g, t, "x")) != NULL && (y = weft_var_create(g, t, "y")) != NULL;
    for (int k = 0; k < 200 && ok; k++) {
        weft_var_t *in[2] = {k ? z : x, y};
        ok = (z = weft_op_call(g, add, 2, in)) != NULL;
    }
    weft_var_t *ins[2] = {x, y};
    weft_fgraph_t *fg = NULL;
    rec_t *r = rec_new();
    weft_feature_t *feats[1] = {&r->base};
    weft_fgraph_options_t o = WEFT_FGRAPH_OPTIONS_INIT;
    o.n_features = 1;
    o.features = feats;
    if (ok)
        ok = weft_fgraph_create(g, 2, ins, 1, &z, &o, NULL, &fg) == WEFT_OK;
    else
        rec_class.destroy(&r->base);
    weft_var_t *y2 = ok ? weft_fgraph_input(fg, 1) : NULL; /* the clone of y */
    if (ok) ok = (n = weft_op_call(g, neg, 1, &y2)) != NULL;
    /* may fail half-way through with ENOMEM and revert: its status is not the point */
    if (ok) (void)weft_fgraph_replace_validate(fg, weft_fgraph_input(fg, 0), n, "r");
    if (ok) ok = weft_fgraph_n_clients(fg, n) == 1; /* the first Add now reads Neg(y) */
    /* a replacement ranked far above its client: the ranks are raised (or,
     * out of memory, marked stale and rebuilt by the next cycle check) */
    weft_var_t *deep = n;
    for (int k = 0; k < 40 && ok; k++) {
        weft_var_t *in1 = deep;
        ok = (deep = weft_op_call(g, neg, 1, &in1)) != NULL;
    }
    if (ok) (void)weft_fgraph_replace_validate(fg, n, deep, "deep");
    if (ok) ok = weft_fgraph_replace(fg, y2, weft_fgraph_output(fg, 0), "loop") == WEFT_ECYCLE;
    weft_apply_t *const *order;
    size_t cnt;
    if (ok) ok = weft_fgraph_toposort(fg, &order, &cnt) == WEFT_OK;
    if (ok) ok = weft_fgraph_check_integrity(fg) == WEFT_OK;
    weft_graph_destroy(g); /* frees fg too */
    return ok;
}

static void test_fgraph_allocation_failures_never_crash_or_leak(void **state)
{
    (void)state;
    fail_alloc_t fa = {-1, 0};
    weft_allocator_t al = {fail_resize, &fa};
    assert_true(oom_scenario(&al)); /* sanity: succeeds without failures */
    assert_int_equal(fa.live, 0);
    long completed_at = -1;
    for (long k = 0; k < 5000 && completed_at < 0; k++) {
        fa.budget = k;
        fa.live = 0;
        if (oom_scenario(&al)) completed_at = k;
        assert_int_equal(fa.live, 0); /* every byte returned, on every path */
    }
    assert_true(completed_at > 20); /* the scenario does allocate at many points */
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_fgraph_create_clones_and_returns_map),
        T(test_fgraph_create_without_clone_uses_originals),
        T(test_fgraph_clients_keep_order_across_removals),
        T(test_fgraph_output_pseudo_clients),
        T(test_fgraph_inputs_discovered_in_order_without_constants),
        T(test_fgraph_missing_input_is_reported_or_imported),
        T(test_fgraph_create_bad_arguments),
        T(test_fgraph_input_mutable_flags_are_stored),
        T(test_fgraph_import_var_and_node),
        T(test_fgraph_change_node_input_checks),
        T(test_fgraph_replace_rewires_all_clients_and_prunes),
        T(test_fgraph_replace_with_foreign_variable_is_eforeign),
        T(test_fgraph_remove_node_removes_dependents_and_slots),
        T(test_fgraph_inputs_and_outputs_add_and_remove),
        T(test_fgraph_update_pairs_follow_removals_and_clone),
        T(test_fgraph_multi_output_siblings_are_variables),
        T(test_fgraph_replace_unknown_variable_is_enotfound),
        T(test_fgraph_change_node_input_closing_a_cycle_is_ecycle),
        T(test_fgraph_replace_closing_a_cycle_is_ecycle),
        T(test_fgraph_check_integrity_reports_a_cycle_as_ecycle),
        T(test_fgraph_check_integrity_detects_inconsistent_clients),
        T(test_fgraph_clone_gets_equiv_and_features),
        T(test_fgraph_queries_on_null_and_foreign),
        T(test_fgraph_allocation_failures_never_crash_or_leak),
    };
    return cmocka_run_group_tests_name("fgraph", tests, NULL, NULL);
}
