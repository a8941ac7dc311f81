/* The inplace rewrite keeps the parallelism (docs/rewrites.md §6.6): a node
 * does not destroy a value when the DestroyHandler orderings this adds would
 * lengthen the critical path beyond the slack; it takes another input, or
 * stays out of place. Costs are the size-based estimates, or measured ones
 * given by key (weft_fgraph_set_node_costs). Also weft_dh_destroy_readers,
 * the node keys and the cost table's errors. Every case checks the rewritten
 * graph's values against the unrewritten graph's. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rw_fixture.h"

#define TOL_R 1e-12
#define TOL_A 1e-12

typedef struct cp_case {
    rfx_t *f;
    const weft_type_t *m; /* float64[64,64]: big enough that Dot dominates */
    weft_var_t *in[4];
    size_t n_in, n_out;
    weft_var_t *out[2];
} cp_case_t;

static void cp_init(cp_case_t *c, rfx_t *f, size_t n_in)
{
    memset(c, 0, sizeof *c);
    c->f = f;
    int64_t s[2] = {64, 64};
    assert_int_equal(weft_type_tensor(f->g, WEFT_FLOAT64, 2, s, &c->m), WEFT_OK);
    static const char *names[4] = {"a", "b", "x", "y"};
    for (size_t k = 0; k < n_in; k++) c->in[k] = rfx_var(f, c->m, names[k]);
    c->n_in = n_in;
}

/* An fgraph over the case; the inputs are protected. The case's one
 * construction check: no constructor failed. */
static weft_fgraph_t *cp_fgraph(cp_case_t *c)
{
    assert_string_equal(weft_graph_error_message(c->f->g), "");
    assert_int_equal(weft_graph_error(c->f->g), WEFT_OK);
    return rfx_fgraph(c->f, c->n_in, c->in, c->n_out, c->out, false);
}

/* Runs the inplace rewrite alone; checks validity and values against the
 * unrewritten graph; returns the expression in buf. */
static void cp_run(cp_case_t *c, weft_fgraph_t *fg, char *buf, size_t cap)
{
    weft_tensor_t *vals[4], *ref[2], *got[2];
    rfx_random_inputs(c->f, c->n_in, c->in, vals, -1, 1);
    rfx_eval(c->f, c->n_in, c->in, vals, c->n_out, c->out, ref);
    weft_rewriter_t *r;
    assert_int_equal(weft_rewriter_inplace_create(NULL, &r), WEFT_OK);
    assert_int_equal(weft_rewriter_apply(r, fg, NULL), WEFT_OK);
    weft_rewriter_release(r);
    assert_int_equal(weft_fgraph_validate(fg), WEFT_OK);
    rfx_fg_expr(fg, buf, cap);
    rfx_eval_fgraph(c->f, fg, c->n_in, c->in, vals, got);
    for (size_t k = 0; k < c->n_out; k++) rfx_assert_close(got[k], ref[k], TOL_R, TOL_A);
    rfx_release(c->n_out, got);
    rfx_release(c->n_out, ref);
    rfx_release(c->n_in, vals);
}

/* The number of orderings in fg; *first: the node before in the first one. */
static size_t n_orderings(weft_fgraph_t *fg, weft_apply_t **first)
{
    weft_apply_t *const *bef, *const *aft;
    size_t n;
    assert_int_equal(weft_fgraph_orderings(fg, &bef, &aft, &n), WEFT_OK);
    *first = n ? bef[0] : NULL;
    return n;
}

/* The example: g = a @ b read by Tanh and Exp, summed. Either
 * destroying g orders one branch after the other (the critical path grows by
 * a whole Tanh, 50% here): both stay out of place; the Add still overwrites
 * its input (its last reader, no ordering). The Exp is built before the Tanh
 * (declarators are sequenced, a call's arguments are not), so it comes first
 * in the toposort on every compiler. */
static void build_gemm_tanh_exp(cp_case_t *c, rfx_t *f)
{
    cp_init(c, f, 2);
    weft_var_t *g = weft_dot(f->g, c->in[0], c->in[1]);
    weft_var_t *e = weft_exp(f->g, g), *t = weft_tanh(f->g, g);
    c->out[0] = weft_add(f->g, t, e);
    c->n_out = 1;
}

static void test_inplace_cp_gemm_tanh_exp_stays_parallel(void **state)
{
    cp_case_t c;
    build_gemm_tanh_exp(&c, *state);
    weft_fgraph_t *fg = cp_fgraph(&c);
    char buf[512];
    cp_run(&c, fg, buf, sizeof buf);
    assert_string_equal(buf, "Add{inplace=0}(Tanh(Dot(a, b)), Exp(Dot(a, b)))");
    weft_apply_t *before;
    assert_int_equal(n_orderings(fg, &before), 0); /* nothing serialized */
    weft_fgraph_destroy(fg);
}

/* n = Add(g, w) where g's other reader, Tanh, is a parallel branch (ordering
 * it first lengthens the path) and w = Exp(x)'s other reader, a Sum, lies
 * off the critical path (the Dot is longer than Exp + Sum): n takes w. */
static void test_inplace_cp_takes_the_other_input(void **state)
{
    rfx_t *f = *state;
    cp_case_t c;
    cp_init(&c, f, 3);
    weft_graph_t *G = f->g;
    weft_var_t *g = weft_dot(G, c.in[0], c.in[1]), *w = weft_exp(G, c.in[2]);
    weft_var_t *n = weft_add(G, g, w);
    c.out[0] = weft_mul(G, weft_tanh(G, g), n);
    c.out[1] = weft_sum(G, w, 0, NULL, false);
    c.n_out = 2;
    weft_fgraph_t *fg = cp_fgraph(&c);
    char buf[512];
    cp_run(&c, fg, buf, sizeof buf);
    assert_string_equal(buf, "Mul{inplace=0}(Tanh(Dot(a, b)), Add{inplace=1}(Dot(a, b), Exp(x))); "
                             "Sum{axes=(0,1), keepdims=0}(Exp(x))");
    weft_apply_t *before;
    assert_int_equal(n_orderings(fg, &before), 1); /* Sum -> Add{inplace=1}: off the critical path */
    assert_string_equal(weft_op_name(weft_apply_op(before)), "Sum");
    weft_fgraph_destroy(fg);
}

/* Two chains from one value: the heads stay out of place, every later link
 * goes in place (its input's last reader, no ordering), as without the rule. */
static void test_inplace_cp_chains_still_go_in_place(void **state)
{
    rfx_t *f = *state;
    cp_case_t c;
    cp_init(&c, f, 2);
    weft_graph_t *G = f->g;
    weft_var_t *g = weft_dot(G, c.in[0], c.in[1]);
    weft_var_t *t = weft_neg(G, weft_tanh(G, g)), *e = weft_sqr(G, weft_exp(G, g));
    c.out[0] = weft_add(G, t, e);
    c.n_out = 1;
    weft_fgraph_t *fg = cp_fgraph(&c);
    char buf[512];
    cp_run(&c, fg, buf, sizeof buf);
    assert_string_equal(buf, "Add{inplace=0}(Neg{inplace=0}(Tanh(Dot(a, b))), "
                             "Sqr{inplace=0}(Exp(Dot(a, b))))");
    weft_fgraph_destroy(fg);
}

/* A pure chain: every node after the first overwrites its input. */
static void test_inplace_cp_pure_chain(void **state)
{
    rfx_t *f = *state;
    cp_case_t c;
    cp_init(&c, f, 1);
    c.out[0] = weft_neg(f->g, weft_tanh(f->g, weft_exp(f->g, c.in[0])));
    c.n_out = 1;
    weft_fgraph_t *fg = cp_fgraph(&c);
    char buf[512];
    cp_run(&c, fg, buf, sizeof buf);
    assert_string_equal(buf, "Neg{inplace=0}(Tanh{inplace=0}(Exp(a)))");
    weft_fgraph_destroy(fg);
}

/* The same graph built in two contexts gets the same choice and the same
 * node keys, position by position in the toposort. */
static void test_inplace_cp_is_deterministic(void **state)
{
    rfx_t *f = *state;
    char first[512] = "", buf[512];
    uint64_t first_keys[16];
    for (int run = 0; run < 2; run++) {
        rfx_t f2 = *f;
        assert_int_equal(weft_graph_create(NULL, &f2.g), WEFT_OK);
        cp_case_t c;
        build_gemm_tanh_exp(&c, &f2);
        weft_fgraph_t *fg = cp_fgraph(&c);
        size_t n_ids = weft_graph_n_applies(f2.g);
        uint64_t *keys = calloc(n_ids + 1, sizeof *keys);
        assert_int_equal(weft_fgraph_node_keys(fg, n_ids, keys), WEFT_OK);
        weft_apply_t *const *order;
        size_t n;
        assert_int_equal(weft_fgraph_toposort(fg, &order, &n), WEFT_OK);
        assert_int_equal(n, 4);
        for (size_t i = 0; i < n; i++) {
            if (run == 0) first_keys[i] = keys[weft_apply_id(order[i])];
            else assert_true(first_keys[i] == keys[weft_apply_id(order[i])]);
        }
        free(keys);
        cp_run(&c, fg, buf, sizeof buf);
        if (run == 0) strcpy(first, buf);
        else assert_string_equal(buf, first);
        weft_fgraph_destroy(fg);
        weft_graph_destroy(f2.g);
    }
}

/* The example's Tanh and Exp nodes (the Add's inputs' owners), as now. */
static void branches(weft_fgraph_t *fg, weft_apply_t **t, weft_apply_t **e)
{
    weft_apply_t *sum = weft_var_owner(weft_fgraph_output(fg, 0));
    *t = weft_var_owner(weft_apply_input(sum, 0));
    *e = weft_var_owner(weft_apply_input(sum, 1));
}

/* The key of the node computing v in fg. */
static uint64_t key_of(weft_fgraph_t *fg, weft_apply_t *a)
{
    size_t n_ids = weft_graph_n_applies(weft_fgraph_graph(fg));
    uint64_t *keys = calloc(n_ids + 1, sizeof *keys), k;
    assert_int_equal(weft_fgraph_node_keys(fg, n_ids, keys), WEFT_OK);
    k = keys[weft_apply_id(a)];
    free(keys);
    return k;
}

/* Measured costs flip the choice: with Exp measured at 1 ns and Tanh at
 * 1 ms, the Exp branch has a whole Tanh of slack; ordering it after the Tanh
 * lengthens the ~1 ms path by 1 ns, so the Exp (first in topological order)
 * overwrites g. An in-place variant keeps its key; with the costs removed
 * the estimate rules again. */
static void test_inplace_cp_measured_costs_flip_the_choice(void **state)
{
    rfx_t *f = *state;
    cp_case_t c;
    build_gemm_tanh_exp(&c, f);
    weft_fgraph_t *fg = cp_fgraph(&c);
    weft_apply_t *t, *e;
    branches(fg, &t, &e);
    uint64_t keys[2] = {key_of(fg, t), key_of(fg, e)};
    assert_true(keys[0] != keys[1]);
    double ns[2] = {1e6, 1.0};
    assert_int_equal(weft_fgraph_set_node_costs(fg, 2, keys, ns), WEFT_OK);
    assert_true(weft_fgraph_node_cost(fg, e, keys[1]) == 1.0);
    char buf[512];
    cp_run(&c, fg, buf, sizeof buf);
    assert_string_equal(buf, "Add{inplace=0}(Tanh(Dot(a, b)), Exp{inplace=0}(Dot(a, b)))");
    weft_apply_t *before;
    assert_int_equal(n_orderings(fg, &before), 1);
    assert_string_equal(weft_op_name(weft_apply_op(before)), "Tanh");
    branches(fg, &t, &e);
    assert_true(key_of(fg, e) == keys[1]); /* the in-place Exp keeps the key */
    assert_int_equal(weft_fgraph_set_node_costs(fg, 0, NULL, NULL), WEFT_OK);
    assert_true(weft_fgraph_node_cost(fg, e, keys[1]) == weft_node_cost_estimate(e));
    assert_true(weft_node_cost_estimate(e) == 100.0 + 64 * 64 * 8.0);
    weft_fgraph_destroy(fg);
}

/* The D4 readers a destroy would add, and the cost table's argument errors. */
static void test_inplace_cp_readers_and_errors(void **state)
{
    rfx_t *f = *state;
    cp_case_t c;
    build_gemm_tanh_exp(&c, f);
    weft_fgraph_t *fg = cp_fgraph(&c);
    weft_apply_t *tanh_node, *exp_node;
    branches(fg, &tanh_node, &exp_node);
    weft_apply_t *sum = weft_var_owner(weft_fgraph_output(fg, 0));
    assert_int_equal(weft_dh_attach(fg, NULL), WEFT_OK);
    weft_apply_t *rd[2] = {NULL, NULL};
    size_t n_rd = 9;
    bool ok = false;
    assert_int_equal(weft_dh_destroy_readers(fg, tanh_node, 0, NULL, &ok, 2, rd, &n_rd), WEFT_OK);
    assert_true(ok);
    assert_int_equal(n_rd, 1);
    assert_ptr_equal(rd[0], exp_node);
    assert_int_equal(weft_dh_destroy_readers(fg, tanh_node, 0, NULL, &ok, 0, NULL, &n_rd),
                     WEFT_OK);
    assert_int_equal(n_rd, 1); /* counted, none written */
    assert_int_equal(weft_dh_destroy_readers(fg, tanh_node, 0, NULL, &ok, 1, NULL, &n_rd),
                     WEFT_EINVAL);
    assert_int_equal(weft_dh_destroy_readers(fg, sum, 0, NULL, &ok, 2, rd, &n_rd), WEFT_OK);
    assert_true(ok); /* the Add's input 0 has no other reader */
    assert_int_equal(n_rd, 0);
    uint64_t k[2] = {1, 2};
    double ns[2] = {5.0, NAN};
    assert_int_equal(weft_fgraph_set_node_costs(fg, 2, k, ns), WEFT_EINVAL);
    assert_string_equal(weft_fgraph_last_error(fg), "node costs: cost 1 is negative or NaN");
    assert_int_equal(weft_fgraph_set_node_costs(fg, 2, NULL, ns), WEFT_EINVAL);
    assert_int_equal(weft_fgraph_set_node_costs(NULL, 0, NULL, NULL), WEFT_EINVAL);
    uint64_t one;
    assert_int_equal(weft_fgraph_node_keys(fg, 0, &one), WEFT_EINVAL);
    k[1] = 1, ns[1] = 7.0; /* a key given twice: the mean */
    assert_int_equal(weft_fgraph_set_node_costs(fg, 2, k, ns), WEFT_OK);
    assert_true(weft_fgraph_node_cost(fg, tanh_node, 1) == 6.0);
    assert_true(weft_node_cost_estimate(NULL) == 0.0);
    weft_fgraph_destroy(fg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_inplace_cp_gemm_tanh_exp_stays_parallel, rfx_setup,
                                        rfx_teardown),
        cmocka_unit_test_setup_teardown(test_inplace_cp_takes_the_other_input, rfx_setup,
                                        rfx_teardown),
        cmocka_unit_test_setup_teardown(test_inplace_cp_chains_still_go_in_place, rfx_setup,
                                        rfx_teardown),
        cmocka_unit_test_setup_teardown(test_inplace_cp_pure_chain, rfx_setup, rfx_teardown),
        cmocka_unit_test_setup_teardown(test_inplace_cp_is_deterministic, rfx_setup,
                                        rfx_teardown),
        cmocka_unit_test_setup_teardown(test_inplace_cp_measured_costs_flip_the_choice,
                                        rfx_setup, rfx_teardown),
        cmocka_unit_test_setup_teardown(test_inplace_cp_readers_and_errors, rfx_setup,
                                        rfx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
