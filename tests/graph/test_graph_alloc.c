/* One memory model (weft/alloc.h): a graph context created with an allocator
 * takes every byte it and its FunctionGraphs, indexes and features
 * (DestroyHandler, Supervisor) own - scratch included - from that allocator,
 * and frees each block with the size it was allocated with. The C library's
 * allocation calls are counted at the same time (tests/support/alloc_count.h)
 * and must stay at zero. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "graph_fixture.h"
#include "support/counting_alloc.h"
#include "weft/destroy.h"
#include "weft/supervisor.h"

typedef struct ctx {
    weft_graph_t *g;
    const weft_type_t *vec, *vec3;
    const weft_op_t *add, *mul, *exp, *add_inplace, *view;
} ctx_t;

/* Fails on error without calling anything that allocates (cmocka's
 * assertions allocate only when they fail). */
static void ok(weft_status_t s)
{
    assert_int_equal(s, WEFT_OK);
}

static void okv(const void *p)
{
    assert_non_null(p);
}

static weft_var_t *call(ctx_t *c, const weft_op_t *op, weft_var_t *a, weft_var_t *b)
{
    weft_var_t *in[2] = {a, b}, *v = NULL;
    okv(v = weft_op_call(c->g, op, b ? 2 : 1, in));
    return v;
}

static void ctx_build(ctx_t *c, const weft_allocator_t *al)
{
    int64_t three = 3;
    ok(weft_graph_create(al, &c->g));
    ok(weft_type_tensor(c->g, WEFT_FLOAT64, 1, NULL, &c->vec));
    ok(weft_type_tensor(c->g, WEFT_FLOAT64, 1, &three, &c->vec3));
    ok(weft_op_create(c->g, &fx_add_class, NULL, &c->add));
    ok(weft_op_create(c->g, &fx_mul_class, NULL, &c->mul));
    ok(weft_op_create(c->g, &fx_exp_class, NULL, &c->exp));
    ok(weft_op_create(c->g, &fx_add_inplace_class, NULL, &c->add_inplace));
    ok(weft_op_create(c->g, &fx_view_class, NULL, &c->view));
}

/* Builds a graph, an fgraph with a DestroyHandler and Supervisors, edits it
 * (accepted and rejected transactions), queries, clones and destroys it all. */
static void exercise_graph(const weft_allocator_t *al)
{
    ctx_t c = {0};
    ctx_build(&c, al);
    assert_ptr_equal(weft_graph_allocator(c.g), al ? al : weft_allocator_default());
    weft_var_t *x, *y, *k;
    okv(x = weft_var_create(c.g, c.vec, "x"));
    okv(y = weft_var_create(c.g, c.vec, "y"));
    const double kd[3] = {1.0, 2.0, 3.0};
    okv(k = weft_constant_create(c.g, c.vec3, kd, sizeof kd));
    weft_var_t *a = call(&c, c.add, x, y), *b = call(&c, c.exp, a, NULL);
    weft_var_t *d = call(&c, c.mul, b, k), *v = call(&c, c.view, a, NULL);
    weft_var_t *ip = call(&c, c.add_inplace, d, x); /* destroys d: allowed */
    /* many nodes, so the fgraph's indexes and the arena grow past their
     * first capacities */
    weft_var_t *chain = ip;
    for (int i = 0; i < 300; i++) chain = call(&c, i % 2 ? c.exp : c.add, chain, i % 2 ? NULL : y);

    weft_fgraph_options_t o = WEFT_FGRAPH_OPTIONS_INIT;
    const bool mut[2] = {true, false}; /* y protected: a Supervisor is attached */
    o.input_mutable = mut;
    o.clone = false;
    weft_var_t *ins[2] = {x, y}, *outs[3] = {chain, v, b};
    weft_fgraph_t *fg = NULL;
    ok(weft_fgraph_create(c.g, 2, ins, 3, outs, &o, NULL, &fg));
    weft_feature_t *dh = NULL, *sup = NULL;
    ok(weft_dh_attach(fg, &dh)); /* weft's own DH: the context's allocator */
    ok(weft_supervisor_create(1, &x, al, &sup));
    ok(weft_fgraph_attach_feature(fg, sup)); /* merges into the attached one */

    /* accepted edits */
    weft_var_t *a2 = call(&c, c.mul, x, y);
    ok(weft_fgraph_replace_validate(fg, a, a2, "test"));
    weft_var_t *olds[2] = {b, v};
    weft_var_t *news[2] = {call(&c, c.exp, a2, NULL), call(&c, c.view, a2, NULL)};
    ok(weft_fgraph_replace_all_validate(fg, 2, olds, news, "test"));
    ok(weft_fgraph_add_output(fg, call(&c, c.add, a2, k), "test"));
    ok(weft_fgraph_remove_output(fg, 3, "test"));
    /* rejected edits (history reverts them): destroying protected y, and a
     * second destroyer of news[0]'s root */
    weft_var_t *bad = call(&c, c.add_inplace, y, x);
    assert_int_not_equal(weft_fgraph_replace_validate(fg, news[0], call(&c, c.add, bad, y), "bad"),
                         WEFT_OK);
    uint64_t tok;
    ok(weft_fgraph_checkpoint(fg, &tok));
    ok(weft_fgraph_replace(fg, news[1], call(&c, c.exp, x, NULL), "undone"));
    ok(weft_fgraph_revert(fg, tok));

    /* queries */
    weft_apply_t *const *order, *const *before, *const *after;
    size_t n, nd, idx[2];
    ok(weft_fgraph_toposort(fg, &order, &n));
    ok(weft_fgraph_orderings(fg, &before, &after, &n));
    ok(weft_dh_orderings(fg, &before, &after, &n));
    ok(weft_dh_n_destroyers(fg, &nd));
    assert_true(nd >= 1);
    weft_var_t *root;
    weft_apply_t *destroyer;
    ok(weft_dh_root(fg, news[1], &root));
    ok(weft_dh_destroyer(fg, d, &destroyer));
    const weft_var_t *cand[2] = {x, y}, *prot[1] = {y};
    ok(weft_dh_inplace_candidates(fg, 2, cand, 1, prot, idx, &n));
    ok(weft_fgraph_check_integrity(fg));

    /* clones: an fgraph clone (with clones of its features) and a graph clone */
    weft_fgraph_t *fg2 = NULL;
    weft_clone_map_t *m = NULL;
    ok(weft_fgraph_clone(fg, true, &m, &fg2));
    bool eq = false;
    weft_var_t *o1 = weft_fgraph_output(fg, 0), *o2 = weft_fgraph_output(fg2, 0);
    weft_var_t *ins2[2] = {weft_clone_map_var(m, x), weft_clone_map_var(m, y)};
    ok(weft_graph_equal_computations(1, &o1, &o2, 2, ins, ins2, &eq));
    assert_true(eq);
    weft_clone_map_destroy(m);
    ok(weft_graph_clone_get_equiv(c.g, 2, ins, 1, &o1, true, false, &m));
    weft_clone_map_destroy(m);
    weft_fgraph_destroy(fg2);
    /* fg is left to weft_graph_destroy */
    weft_graph_destroy(c.g);
}

static void test_graph_alloc_custom_allocator_takes_everything(void **state)
{
    (void)state;
    counting_alloc_expect_all(exercise_graph, 100);
}

/* Without an allocator the same work goes to the C library (so the test
 * above would see a bypass). */
static void test_graph_alloc_null_allocator_is_the_c_library(void **state)
{
    (void)state;
    counting_alloc_expect_c_library(exercise_graph, 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graph_alloc_custom_allocator_takes_everything),
        cmocka_unit_test(test_graph_alloc_null_allocator_is_the_c_library),
    };
    return cmocka_run_group_tests_name("graph_alloc", tests, NULL, NULL);
}
