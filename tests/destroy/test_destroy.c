/* DestroyHandler tests: the numbered cases #1-#27 of docs/destroy.md §8.2 (x,
 * y, z unprotected; the Supervisor variants of #2, #22 and #23 are in
 * test_supervisor.c), the transaction cases of docs/destroy.md §8.3,
 * incremental tracking through import / prune / change / revert, protocol
 * errors, attach paths, the query API (weft_dh_can_destroy on the §8.2 cases
 * cited by number) and every bad-input status. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "destroy/destroy_fixture.h"
#include "weft/destroy.h"

typedef dt_fixture_t fx_t;

static fx_t *F;

static int setup(void **state)
{
    int rc = dt_fixture_setup(&F);
    *state = F;
    return rc;
}

static int teardown(void **state)
{
    (void)state;
    dt_fixture_teardown(F);
    F = NULL;
    return 0;
}

/* ---- helpers ------------------------------------------------------------------ */

static weft_var_t *ap1(const weft_op_t *op, weft_var_t *a)
{
    return dt_ap1(F, op, a);
}

static weft_var_t *ap2(const weft_op_t *op, weft_var_t *a, weft_var_t *b)
{
    return dt_ap2(F, op, a, b);
}

static weft_apply_t *ap2n(const weft_op_t *op, weft_var_t *a, weft_var_t *b)
{
    weft_apply_t *out = NULL;
    weft_var_t *in[2] = {a, b};
    assert_non_null(out = weft_apply_create(F->g, op, 2, in));
    return out;
}

static weft_apply_t *O(const weft_var_t *v)
{
    return weft_var_owner(v);
}

/* fgraph over the outputs (no cloning, inputs x, y, z) with a DH attached
 * before the import, as the rewrite pipeline does. */
static void build_opts(size_t n, weft_var_t **outs, const bool *mutable_inputs)
{
    weft_feature_t *dh;
    assert_int_equal(weft_dh_create(NULL, &dh), WEFT_OK);
    weft_fgraph_options_t o = WEFT_FGRAPH_OPTIONS_INIT;
    o.clone = false;
    o.n_features = 1;
    o.features = &dh;
    o.input_mutable = mutable_inputs;
    weft_var_t *ins[3] = {F->x, F->y, F->z};
    assert_int_equal(weft_fgraph_create(F->g, 3, ins, n, outs, &o, NULL, &F->fg), WEFT_OK);
    F->dh = weft_fgraph_find_feature(F->fg, &weft_dh_class);
    assert_ptr_equal(F->dh, dh);
}

static void build(size_t n, weft_var_t **outs)
{
    build_opts(n, outs, NULL);
}

static void expect_validate(weft_status_t want, const char *substr)
{
    weft_status_t s = weft_fgraph_validate(F->fg);
    if (s != want) fprintf(stderr, "validate: %d, error: %s\n", s, weft_fgraph_last_error(F->fg));
    assert_int_equal(s, want);
    if (substr) {
        const char *msg = weft_fgraph_last_error(F->fg);
        if (!strstr(msg, substr)) fprintf(stderr, "message: %s\nwanted: %s\n", msg, substr);
        assert_non_null(strstr(msg, substr));
    }
}

typedef struct pair {
    uint64_t before, after;
} pair_t;

static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int pair_cmp(const void *a, const void *b)
{
    const pair_t *p = a, *q = b;
    if (p->after != q->after) return p->after < q->after ? -1 : 1;
    if (p->before != q->before) return p->before < q->before ? -1 : 1;
    return 0;
}

/* Expects exactly the pairs before -> after (given as nodes, any order). */
static void expect_orderings(size_t n, ...)
{
    weft_apply_t *const *b, *const *a;
    size_t m;
    assert_int_equal(weft_dh_orderings(F->fg, &b, &a, &m), WEFT_OK);
    assert_int_equal(m, n);
    pair_t got[32], want[32];
    assert_true(n <= 32);
    va_list ap;
    va_start(ap, n);
    for (size_t k = 0; k < n; k++) {
        weft_apply_t *bn = va_arg(ap, weft_apply_t *);
        weft_apply_t *an = va_arg(ap, weft_apply_t *);
        want[k] = (pair_t){weft_apply_id(bn), weft_apply_id(an)};
        got[k] = (pair_t){weft_apply_id(b[k]), weft_apply_id(a[k])};
    }
    va_end(ap);
    qsort(got, n, sizeof *got, pair_cmp);
    qsort(want, n, sizeof *want, pair_cmp);
    for (size_t k = 0; k < n; k++) {
        assert_int_equal(got[k].before, want[k].before);
        assert_int_equal(got[k].after, want[k].after);
    }
}

static void expect_orderings_error(weft_status_t want, const char *substr)
{
    weft_apply_t *const *b, *const *a;
    size_t m;
    assert_int_equal(weft_dh_orderings(F->fg, &b, &a, &m), want);
    assert_non_null(strstr(weft_fgraph_last_error(F->fg), substr));
}

/* ---- docs/destroy.md §8.2 cases -------------------------------------------------- */

static void test_destroy_ex01_aip_alone_is_accepted(void **s)
{
    (void)s;
    weft_var_t *o = ap2(F->ops.aip, F->x, F->y);
    build(1, &o);
    expect_validate(WEFT_OK, NULL);
    expect_orderings(0);
}

static void test_destroy_ex02_dh_alone_accepts_destroying_an_input(void **s)
{
    (void)s; /* §8.2 #2 is D6 (test_supervisor.c); without a Supervisor the DH accepts */
    weft_var_t *o = ap2(F->ops.aip, F->x, F->y);
    build(1, &o);
    expect_validate(WEFT_OK, NULL);
}

static void test_destroy_ex03_reader_runs_before_destroyer(void **s)
{
    (void)s;
    weft_var_t *sg = ap1(F->ops.sig, F->x), *a = ap2(F->ops.aip, F->x, F->y);
    weft_var_t *o = ap2(F->ops.dot, sg, a);
    build(1, &o);
    expect_validate(WEFT_OK, NULL);
    expect_orderings(1, O(sg), O(a));
    weft_apply_t *const *order;
    size_t n;
    assert_int_equal(weft_fgraph_toposort(F->fg, &order, &n), WEFT_OK);
    assert_int_equal(n, 3);
    assert_ptr_equal(order[0], O(sg));
    assert_ptr_equal(order[1], O(a));
    assert_ptr_equal(order[2], O(o));
}

static void test_destroy_ex04_reader_needing_destroyer_is_a_cycle(void **s)
{
    (void)s;
    weft_var_t *a = ap2(F->ops.aip, F->x, F->z), *o = ap2(F->ops.dot, a, F->x);
    build(1, &o);
    expect_orderings(1, O(o), O(a));
    expect_validate(WEFT_EINCONSISTENT, "Dependency graph contains cycles");
    weft_apply_t *const *order;
    size_t n;
    assert_int_equal(weft_fgraph_toposort(F->fg, &order, &n), WEFT_ECYCLE);
}

static void test_destroy_ex05_view_reader_needing_destroyer_is_a_cycle(void **s)
{
    (void)s;
    weft_var_t *a = ap2(F->ops.aip, F->x, F->y), *t = ap1(F->ops.tv, F->x);
    weft_var_t *o = ap2(F->ops.dot, a, t);
    build(1, &o);
    expect_orderings(2, O(t), O(a), O(o), O(a));
    expect_validate(WEFT_EINCONSISTENT, "Dependency graph contains cycles");
}

static void test_destroy_ex06_views_of_fresh_buffer_are_not_readers(void **s)
{
    (void)s;
    weft_var_t *sg = ap1(F->ops.sig, F->x);
    weft_var_t *t2 = ap1(F->ops.tv, ap1(F->ops.tv, sg));
    weft_var_t *a = ap2(F->ops.aip, F->x, F->y), *o = ap2(F->ops.dot, a, t2);
    build(1, &o);
    expect_validate(WEFT_OK, NULL);
    expect_orderings(1, O(sg), O(a));
}

static void test_destroy_ex07_two_destroyers_of_one_root_is_rejected(void **s)
{
    (void)s;
    weft_var_t *a1 = ap2(F->ops.aip, F->x, F->y), *a2 = ap2(F->ops.aip, F->x, F->y);
    weft_var_t *o = ap2(F->ops.add, a1, a2);
    build(1, &o);
    expect_validate(WEFT_EINCONSISTENT, "Multiple destroyers of x");
    expect_orderings_error(WEFT_EINCONSISTENT, "Multiple destroyers of x");
}

static void test_destroy_ex08_destroying_a_view_and_its_root_is_rejected(void **s)
{
    (void)s;
    weft_var_t *a1 = ap2(F->ops.aip, ap1(F->ops.tv, F->x), F->y);
    weft_var_t *a2 = ap2(F->ops.aip, F->x, F->z);
    weft_var_t *o = ap2(F->ops.add, a1, a2);
    build(1, &o);
    expect_validate(WEFT_EINCONSISTENT, "Multiple destroyers of x");
}

static void test_destroy_ex09_same_input_twice_is_input_aliasing(void **s)
{
    (void)s;
    weft_var_t *o = ap2(F->ops.aip, F->x, F->x);
    build(1, &o);
    expect_validate(WEFT_EINCONSISTENT, "Input aliasing: AddInPlace(x, x) (0, 1)");
}

static void test_destroy_ex10_tolerate_same_accepts_identical_input(void **s)
{
    (void)s;
    weft_var_t *o = ap2(F->ops.aip_same, F->x, F->x);
    build(1, &o);
    expect_validate(WEFT_OK, NULL);
    expect_orderings(0);
}

static void test_destroy_ex11_tolerate_same_rejects_a_view(void **s)
{
    (void)s;
    weft_var_t *o = ap2(F->ops.aip_same, F->x, ap1(F->ops.tv, F->x));
    build(1, &o);
    expect_validate(WEFT_EINCONSISTENT, "Input aliasing: AddInPlaceS(");
    expect_validate(WEFT_EINCONSISTENT, ") (0, 1)");
}

static void test_destroy_ex12_tolerate_aliased_ignores_the_view(void **s)
{
    (void)s;
    weft_var_t *t = ap1(F->ops.tv, F->x), *o = ap2(F->ops.aip_aliased, F->x, t);
    build(1, &o);
    expect_validate(WEFT_OK, NULL);
    expect_orderings(1, O(t), O(o));
}

static void test_destroy_ex13_other_output_reader_runs_first(void **s)
{
    (void)s;
    weft_var_t *o[2] = {ap2(F->ops.aip, F->x, F->y), ap2(F->ops.add, F->y, F->x)};
    build(2, o);
    expect_validate(WEFT_OK, NULL);
    expect_orderings(1, O(o[1]), O(o[0]));
}

static void test_destroy_ex14_mutual_destroyers_are_a_cycle(void **s)
{
    (void)s;
    weft_var_t *o[2] = {ap2(F->ops.aip, F->x, F->y), ap2(F->ops.aip, F->y, F->x)};
    build(2, o);
    expect_orderings(2, O(o[1]), O(o[0]), O(o[0]), O(o[1]));
    expect_validate(WEFT_EINCONSISTENT, "Dependency graph contains cycles");
}

static void test_destroy_ex15_chain_of_destroyers_is_ordered(void **s)
{
    (void)s;
    weft_var_t *a1 = ap2(F->ops.aip, F->x, F->y), *a2 = ap2(F->ops.aip, F->y, F->z);
    weft_var_t *r = ap2(F->ops.add, F->z, F->x);
    weft_var_t *o = ap2(F->ops.dot, ap2(F->ops.dot, a1, a2), r);
    build(1, &o);
    expect_validate(WEFT_OK, NULL);
    expect_orderings(2, O(r), O(a1), O(a1), O(a2));
}

static void test_destroy_ex16_three_cycle_is_rejected(void **s)
{
    (void)s;
    weft_var_t *a1 = ap2(F->ops.aip, F->x, F->y), *a2 = ap2(F->ops.aip, F->y, F->z);
    weft_var_t *a3 = ap2(F->ops.aip, F->z, F->x);
    weft_var_t *o = ap2(F->ops.dot, ap2(F->ops.dot, a1, a2), a3);
    build(1, &o);
    expect_orderings(3, O(a3), O(a1), O(a1), O(a2), O(a2), O(a3));
    expect_validate(WEFT_EINCONSISTENT, "Dependency graph contains cycles");
}

static weft_var_t *constant3(void)
{
    const weft_type_t *t;
    int64_t shape[1] = {3};
    assert_int_equal(weft_type_tensor(F->g, WEFT_FLOAT64, 1, shape, &t), WEFT_OK);
    double data[3] = {1, 2, 3};
    weft_var_t *c;
    assert_non_null(c = weft_constant_create(F->g, t, data, sizeof data));
    assert_int_equal(weft_var_set_name(c, "c"), WEFT_OK);
    return c;
}

static void test_destroy_ex17_destroying_a_constant_is_rejected(void **s)
{
    (void)s;
    weft_var_t *o = ap2(F->ops.aip, constant3(), F->y);
    build(1, &o);
    expect_validate(WEFT_EINCONSISTENT, "Attempting to destroy indestructible variables: [c]");
}

static void test_destroy_ex18_destroying_a_view_of_a_constant_is_rejected(void **s)
{
    (void)s;
    weft_var_t *o = ap2(F->ops.aip, ap1(F->ops.tv, constant3()), F->y);
    build(1, &o);
    expect_validate(WEFT_EINCONSISTENT, "Attempting to destroy indestructible variables: [c]");
}

static void test_destroy_ex19_reading_a_constant_is_accepted(void **s)
{
    (void)s;
    weft_var_t *o = ap2(F->ops.aip, F->y, constant3());
    build(1, &o);
    expect_validate(WEFT_OK, NULL);
    expect_orderings(0);
}

static void test_destroy_ex20_indestructible_root_is_rejected(void **s)
{
    (void)s;
    weft_var_set_indestructible(F->x, true);
    weft_var_t *o = ap2(F->ops.aip, ap1(F->ops.tv, F->x), F->y);
    build(1, &o);
    expect_validate(WEFT_EINCONSISTENT, "Attempting to destroy indestructible variables: [x]");
}

static void test_destroy_ex21_chain_of_in_place_ops_is_accepted(void **s)
{
    (void)s;
    weft_var_t *o = ap2(F->ops.aip, ap2(F->ops.aip, F->x, F->y), F->z);
    build(1, &o);
    expect_validate(WEFT_OK, NULL);
    expect_orderings(0);
}

static void test_destroy_ex22_dh_alone_accepts_destroying_an_output(void **s)
{
    (void)s;
    weft_var_t *sg = ap1(F->ops.sig, F->x);
    weft_var_t *o[2] = {sg, ap2(F->ops.aip, sg, F->y)};
    build(2, o);
    expect_validate(WEFT_OK, NULL);
    expect_orderings(0);
}

static void test_destroy_ex23_dh_alone_orders_the_output_view(void **s)
{
    (void)s;
    weft_var_t *o[2] = {ap1(F->ops.tv, F->x), ap2(F->ops.aip, F->x, F->y)};
    build(2, o);
    expect_validate(WEFT_OK, NULL);
    expect_orderings(1, O(o[0]), O(o[1]));
}

static void test_destroy_ex24_second_output_destroyed_after_its_reader(void **s)
{
    (void)s;
    weft_apply_t *m = ap2n(F->ops.mip1, F->x, F->y);
    weft_var_t *d1 = ap2(F->ops.dot, weft_apply_output(m, 0), F->x);
    weft_var_t *d2 = ap2(F->ops.dot, F->y, F->y);
    weft_var_t *o[2] = {d1, d2};
    build(2, o);
    expect_validate(WEFT_OK, NULL);
    expect_orderings(1, O(d2), m);
}

static void test_destroy_ex25_first_output_destroyed_is_a_cycle(void **s)
{
    (void)s;
    weft_apply_t *m = ap2n(F->ops.mip0, F->x, F->y);
    weft_var_t *d1 = ap2(F->ops.dot, weft_apply_output(m, 0), F->x);
    weft_var_t *o[2] = {d1, ap2(F->ops.dot, F->y, F->y)};
    build(2, o);
    expect_orderings(1, O(d1), m);
    expect_validate(WEFT_EINCONSISTENT, "Dependency graph contains cycles");
}

static void test_destroy_ex26_one_node_destroying_a_root_twice_is_rejected(void **s)
{
    (void)s;
    weft_apply_t *m = ap2n(F->ops.mip01, F->x, ap1(F->ops.tv, F->x));
    weft_var_t *o = weft_apply_output(m, 0);
    build(1, &o);
    expect_validate(WEFT_EINCONSISTENT, "Multiple destroyers of x");
}

static void test_destroy_ex27_destroying_a_view_orders_all_readers(void **s)
{
    (void)s;
    weft_var_t *t = ap1(F->ops.tv, F->x), *a = ap2(F->ops.aip, t, F->y);
    weft_var_t *sg = ap1(F->ops.sig, t), *o = ap2(F->ops.dot, a, sg);
    build(1, &o);
    expect_validate(WEFT_OK, NULL);
    expect_orderings(2, O(t), O(a), O(sg), O(a));
    weft_apply_t *d;
    assert_int_equal(weft_dh_destroyer(F->fg, F->x, &d), WEFT_OK);
    assert_ptr_equal(d, O(a));
    assert_int_equal(weft_dh_destroyer(F->fg, t, &d), WEFT_OK);
    assert_ptr_equal(d, O(a));
    assert_int_equal(weft_dh_destroyer(F->fg, sg, &d), WEFT_OK);
    assert_null(d);
}

/* ---- transactions --------------------------------------------------------------- */

typedef struct snap {
    uint64_t order[64];
    size_t n_order;
    pair_t pairs[64];
    size_t n_pairs;
    uint64_t clients[8][16];
    size_t n_clients[8];
} snap_t;

/* toposort, client sets of the given variables and the DH orderings. */
static void snapshot(snap_t *sn, size_t nv, weft_var_t **vars)
{
    memset(sn, 0, sizeof *sn);
    weft_apply_t *const *order;
    assert_int_equal(weft_fgraph_toposort(F->fg, &order, &sn->n_order), WEFT_OK);
    for (size_t k = 0; k < sn->n_order; k++) sn->order[k] = weft_apply_id(order[k]);
    weft_apply_t *const *b, *const *a;
    assert_int_equal(weft_dh_orderings(F->fg, &b, &a, &sn->n_pairs), WEFT_OK);
    for (size_t k = 0; k < sn->n_pairs; k++) {
        sn->pairs[k] = (pair_t){weft_apply_id(b[k]), weft_apply_id(a[k])};
    }
    for (size_t v = 0; v < nv; v++) {
        const weft_client_t *cl;
        assert_int_equal(weft_fgraph_clients(F->fg, vars[v], &cl, &sn->n_clients[v]), WEFT_OK);
        for (size_t k = 0; k < sn->n_clients[v]; k++) {
            sn->clients[v][k] = weft_apply_id(cl[k].node) * 16 + cl[k].index;
        }
        /* a revert restores client sets, not their order (fgraph.h) */
        qsort(sn->clients[v], sn->n_clients[v], sizeof(uint64_t), u64_cmp);
    }
}

static void test_destroy_transaction_second_in_place_swap_is_reverted(void **s)
{
    (void)s;
    weft_var_t *o[2] = {ap2(F->ops.add, F->x, F->y), ap2(F->ops.add, F->y, F->x)};
    build(2, o);
    weft_var_t *a1 = ap2(F->ops.aip, F->x, F->y);
    assert_int_equal(weft_fgraph_replace_validate(F->fg, o[0], a1, "inplace"), WEFT_OK);
    expect_orderings(1, O(o[1]), O(a1));
    snap_t before, after;
    weft_var_t *vars[3] = {F->x, F->y, o[1]};
    snapshot(&before, 3, vars);
    weft_var_t *a2 = ap2(F->ops.aip, F->y, F->x);
    assert_int_equal(weft_fgraph_replace_validate(F->fg, o[1], a2, "inplace"),
                     WEFT_EINCONSISTENT);
    assert_non_null(strstr(weft_fgraph_last_error(F->fg), "Dependency graph contains cycles"));
    snapshot(&after, 3, vars);
    assert_memory_equal(&before, &after, sizeof before);
    assert_false(weft_fgraph_contains_apply(F->fg, O(a2)));
    assert_int_equal(weft_fgraph_check_integrity(F->fg), WEFT_OK);
    expect_validate(WEFT_OK, NULL);
}

static void test_destroy_transaction_opposite_order_also_fails_second(void **s)
{
    (void)s;
    weft_var_t *o[2] = {ap2(F->ops.add, F->x, F->y), ap2(F->ops.add, F->y, F->x)};
    build(2, o);
    weft_var_t *a2 = ap2(F->ops.aip, F->y, F->x), *a1 = ap2(F->ops.aip, F->x, F->y);
    assert_int_equal(weft_fgraph_replace_validate(F->fg, o[1], a2, "inplace"), WEFT_OK);
    expect_orderings(1, O(o[0]), O(a2));
    assert_int_equal(weft_fgraph_replace_validate(F->fg, o[0], a1, "inplace"),
                     WEFT_EINCONSISTENT);
    expect_orderings(1, O(o[0]), O(a2));
    assert_ptr_equal(weft_fgraph_output(F->fg, 0), o[0]);
    assert_ptr_equal(weft_fgraph_output(F->fg, 1), a2);
}

static void test_destroy_transaction_removing_destroyer_makes_consistent(void **s)
{
    (void)s;
    weft_var_t *a = ap2(F->ops.aip, F->x, F->y), *t = ap1(F->ops.tv, F->x);
    weft_var_t *o = ap2(F->ops.dot, a, t);
    build(1, &o);
    expect_validate(WEFT_EINCONSISTENT, "Dependency graph contains cycles");
    assert_int_equal(weft_fgraph_replace_validate(F->fg, a, ap2(F->ops.add, F->x, F->z), "undo"),
                     WEFT_OK);
    size_t n;
    assert_int_equal(weft_dh_n_destroyers(F->fg, &n), WEFT_OK);
    assert_int_equal(n, 0);
    expect_orderings(0);
}

static void test_destroy_transaction_reading_view_through_add_fixes_cycle(void **s)
{
    (void)s;
    weft_var_t *a = ap2(F->ops.aip, F->x, F->y), *e0 = ap1(F->ops.tv, F->x);
    weft_var_t *o = ap2(F->ops.dot, ap1(F->ops.sig, a), e0);
    build(1, &o);
    expect_validate(WEFT_EINCONSISTENT, "Dependency graph contains cycles");
    weft_var_t *e1 = ap2(F->ops.add, e0, F->y);
    assert_int_equal(weft_fgraph_replace_validate(F->fg, e0, e1, "fix"), WEFT_OK);
    expect_orderings(2, O(e0), O(a), O(e1), O(a));
}

static void test_destroy_transaction_walk_add_to_aip_keeps_one(void **s)
{
    (void)s;
    weft_var_t *t = ap1(F->ops.tv, F->z);
    weft_var_t *p1 = ap2(F->ops.add, t, F->y), *p2 = ap2(F->ops.add, F->z, F->x);
    weft_var_t *o = ap2(F->ops.dot, p1, p2);
    build(1, &o);
    weft_var_t *i1 = ap2(F->ops.aip, t, F->y), *i2 = ap2(F->ops.aip, F->z, F->x);
    assert_int_equal(weft_fgraph_replace_validate(F->fg, p1, i1, "walk"), WEFT_OK);
    snap_t before, after;
    weft_var_t *vars[2] = {F->z, t};
    snapshot(&before, 2, vars);
    assert_int_equal(weft_fgraph_replace_validate(F->fg, p2, i2, "walk"), WEFT_EINCONSISTENT);
    assert_non_null(strstr(weft_fgraph_last_error(F->fg), "Multiple destroyers of z"));
    snapshot(&after, 2, vars);
    assert_memory_equal(&before, &after, sizeof before);
    expect_orderings(2, O(t), O(i1), O(p2), O(i1));
    expect_validate(WEFT_OK, NULL);
}

static void test_destroy_transaction_walk_sig_to_view_keeps_one_sig(void **s)
{
    (void)s;
    weft_var_t *a = ap2(F->ops.aip, F->x, ap2(F->ops.add, F->y, F->z));
    weft_var_t *chain[6];
    chain[0] = F->x;
    for (int k = 1; k <= 5; k++) chain[k] = ap1(F->ops.sig, chain[k - 1]);
    weft_var_t *o = ap2(F->ops.dot, a, chain[5]);
    build(1, &o);
    expect_validate(WEFT_OK, NULL);
    int accepted = 0;
    for (int k = 1; k <= 5; k++) {
        weft_var_t *in = weft_apply_input(O(chain[k]), 0);
        weft_var_t *v = ap1(F->ops.tv, in);
        weft_status_t st = weft_fgraph_replace_validate(F->fg, chain[k], v, "walk");
        if (st == WEFT_OK) accepted++;
        else assert_int_equal(st, WEFT_EINCONSISTENT);
        if (st == WEFT_OK) chain[k] = v;
    }
    assert_int_equal(accepted, 4);
    assert_ptr_equal(weft_apply_op(O(chain[5])), F->ops.sig);
    expect_validate(WEFT_OK, NULL);
}

/* ---- incremental tracking ------------------------------------------------------------ */

static void test_destroy_view_forest_follows_change_prune_and_revert(void **s)
{
    (void)s;
    weft_var_t *t1 = ap1(F->ops.tv, F->x), *t2 = ap1(F->ops.tv, t1);
    weft_var_t *o = ap2(F->ops.add, t2, F->z);
    build(1, &o);
    weft_var_t *p, *r;
    assert_int_equal(weft_dh_view_parent(F->fg, t2, &p), WEFT_OK);
    assert_ptr_equal(p, t1);
    assert_int_equal(weft_dh_root(F->fg, t2, &r), WEFT_OK);
    assert_ptr_equal(r, F->x);
    assert_int_equal(weft_dh_view_parent(F->fg, F->x, &p), WEFT_OK);
    assert_null(p);
    uint64_t chk;
    assert_int_equal(weft_fgraph_checkpoint(F->fg, &chk), WEFT_OK);
    /* t2 = tv(t1) -> tv(y): t1 is pruned, t2 re-parented */
    assert_int_equal(weft_fgraph_change_node_input(F->fg, O(t2), 0, F->y, "edit"), WEFT_OK);
    assert_false(weft_fgraph_contains_apply(F->fg, O(t1)));
    assert_int_equal(weft_dh_root(F->fg, t2, &r), WEFT_OK);
    assert_ptr_equal(r, F->y);
    assert_int_equal(weft_fgraph_revert(F->fg, chk), WEFT_OK);
    assert_true(weft_fgraph_contains_apply(F->fg, O(t1)));
    assert_int_equal(weft_dh_view_parent(F->fg, t2, &p), WEFT_OK);
    assert_ptr_equal(p, t1);
    assert_int_equal(weft_dh_root(F->fg, t2, &r), WEFT_OK);
    assert_ptr_equal(r, F->x);
}

static void test_destroy_destroyer_set_follows_replace_and_revert(void **s)
{
    (void)s;
    weft_var_t *p = ap2(F->ops.add, F->x, F->y), *r = ap1(F->ops.sig, F->x);
    weft_var_t *o = ap2(F->ops.dot, p, r);
    build(1, &o);
    size_t n;
    uint64_t chk;
    assert_int_equal(weft_fgraph_checkpoint(F->fg, &chk), WEFT_OK);
    weft_var_t *a = ap2(F->ops.aip, F->x, F->y);
    assert_int_equal(weft_fgraph_replace(F->fg, p, a, "edit"), WEFT_OK);
    assert_int_equal(weft_dh_n_destroyers(F->fg, &n), WEFT_OK);
    assert_int_equal(n, 1);
    expect_orderings(1, O(r), O(a));
    /* the reader moves off x: ordering goes away */
    assert_int_equal(weft_fgraph_change_node_input(F->fg, O(r), 0, F->z, "edit"), WEFT_OK);
    expect_orderings(0);
    assert_int_equal(weft_fgraph_revert(F->fg, chk), WEFT_OK);
    assert_int_equal(weft_dh_n_destroyers(F->fg, &n), WEFT_OK);
    assert_int_equal(n, 0);
    expect_orderings(0);
    /* re-import after prune: same node object comes back */
    assert_int_equal(weft_fgraph_replace(F->fg, p, a, "again"), WEFT_OK);
    expect_orderings(1, O(r), O(a));
    expect_validate(WEFT_OK, NULL);
}

static void test_destroy_reattached_handler_matches_incremental_state(void **s)
{
    (void)s;
    weft_var_t *t = ap1(F->ops.tv, F->x), *a = ap2(F->ops.aip, t, F->y);
    weft_var_t *sg = ap1(F->ops.sig, t), *b = ap2(F->ops.aip, F->z, sg);
    weft_var_t *o[2] = {ap2(F->ops.dot, a, sg), b};
    build(2, o);
    weft_var_t *q = ap2(F->ops.add, F->y, t);
    assert_int_equal(weft_fgraph_replace(F->fg, sg, ap1(F->ops.sig, q), "edit"), WEFT_OK);
    snap_t inc, fresh;
    weft_var_t *vars[1] = {F->x};
    snapshot(&inc, 1, vars);
    assert_int_equal(weft_fgraph_remove_feature(F->fg, F->dh), WEFT_OK);
    weft_feature_t *dh2;
    assert_int_equal(weft_dh_attach(F->fg, &dh2), WEFT_OK);
    snapshot(&fresh, 1, vars);
    assert_memory_equal(&inc, &fresh, sizeof inc);
    F->dh = dh2;
}

static void test_destroy_protocol_errors_are_reported(void **s)
{
    (void)s;
    weft_var_t *a = ap2(F->ops.aip, F->x, F->y);
    build(1, &a);
    const weft_feature_class_t *c = &weft_dh_class;
    assert_int_equal(c->on_import(F->dh, F->fg, O(a), "again"), WEFT_ESTATE);
    assert_non_null(strstr(weft_fgraph_last_error(F->fg), "double import"));
    weft_var_t *stray = ap1(F->ops.sig, F->z);
    assert_int_equal(c->on_prune(F->dh, F->fg, O(stray), "x"), WEFT_ESTATE);
    assert_non_null(strstr(weft_fgraph_last_error(F->fg), "prune of never-imported"));
    assert_int_equal(c->on_change_input(F->dh, F->fg, O(stray), 0, F->x, F->z, "x"),
                     WEFT_ESTATE);
    assert_int_equal(c->on_change_input(F->dh, F->fg, O(a), 0, F->z, F->y, "x"), WEFT_ESTATE);
    assert_non_null(strstr(weft_fgraph_last_error(F->fg), "wrong new input"));
    expect_validate(WEFT_OK, NULL);
}

static void test_destroy_malformed_maps_are_not_implemented(void **s)
{
    (void)s;
    weft_var_t *o = ap2(F->ops.bad_destroy, F->x, F->y);
    build(1, &o);
    expect_validate(WEFT_ENOTIMPL, "rule D0");
    weft_var_t *v = ap2(F->ops.bad_view, F->x, F->y);
    assert_int_equal(weft_fgraph_replace(F->fg, o, v, "edit"), WEFT_ENOTIMPL);
    expect_validate(WEFT_ENOTIMPL, "BadView");
    assert_int_equal(weft_fgraph_replace(F->fg, v, ap2(F->ops.add, F->x, F->y), "fix"),
                     WEFT_OK);
    expect_validate(WEFT_OK, NULL);
}

static void test_destroy_two_views_on_one_input_are_tracked(void **s)
{
    (void)s;
    weft_var_t *in[1] = {F->x};
    weft_apply_t *sv;
    assert_non_null(sv = weft_apply_create(F->g, F->ops.tv2, 1, in));
    weft_var_t *v0 = weft_apply_output(sv, 0), *v1 = weft_apply_output(sv, 1);
    weft_var_t *a = ap2(F->ops.aip, v0, F->y);
    weft_var_t *o = ap2(F->ops.dot, a, ap1(F->ops.sig, v1));
    build(1, &o);
    expect_orderings(2, sv, O(a), O(weft_apply_input(O(o), 1)), O(a));
    expect_validate(WEFT_OK, NULL);
}

/* ---- attach paths ------------------------------------------------------------------ */

static void test_destroy_attach_twice_keeps_one_handler(void **s)
{
    (void)s;
    weft_var_t *a = ap2(F->ops.aip, F->x, F->y);
    build(1, &a);
    assert_int_equal(weft_fgraph_attach_feature(F->fg, F->dh), WEFT_OK);
    weft_feature_t *other;
    assert_int_equal(weft_dh_create(NULL, &other), WEFT_OK);
    assert_int_equal(weft_fgraph_attach_feature(F->fg, other), WEFT_OK); /* EALREADY: freed */
    assert_ptr_equal(weft_fgraph_find_feature(F->fg, &weft_dh_class), F->dh);
    weft_feature_t *got;
    assert_int_equal(weft_dh_attach(F->fg, &got), WEFT_OK);
    assert_ptr_equal(got, F->dh);
    expect_validate(WEFT_OK, NULL);
}

static void test_destroy_attach_to_second_fgraph_is_busy(void **s)
{
    (void)s;
    weft_var_t *a = ap2(F->ops.aip, F->x, F->y);
    build(1, &a);
    weft_var_t *b = ap2(F->ops.add, F->x, F->y);
    weft_fgraph_options_t o = WEFT_FGRAPH_OPTIONS_INIT;
    o.clone = false;
    weft_fgraph_t *fg2;
    assert_int_equal(weft_fgraph_create(F->g, 0, NULL, 1, &b, &o, NULL, &fg2), WEFT_OK);
    assert_int_equal(weft_fgraph_attach_feature(fg2, F->dh), WEFT_EBUSY);
    assert_null(weft_fgraph_find_feature(fg2, &weft_dh_class));
    expect_validate(WEFT_OK, NULL); /* still serving the first fgraph */
    size_t n;
    assert_int_equal(weft_dh_n_destroyers(F->fg, &n), WEFT_OK);
    assert_int_equal(n, 1);
    weft_fgraph_destroy(fg2);
}

static void test_destroy_late_attach_scans_existing_nodes(void **s)
{
    (void)s;
    weft_var_t *sg = ap1(F->ops.sig, F->x), *a = ap2(F->ops.aip, F->x, F->y);
    weft_var_t *o = ap2(F->ops.dot, sg, a);
    weft_fgraph_options_t opt = WEFT_FGRAPH_OPTIONS_INIT;
    opt.clone = false;
    assert_int_equal(weft_fgraph_create(F->g, 0, NULL, 1, &o, &opt, NULL, &F->fg), WEFT_OK);
    assert_int_equal(weft_dh_attach(F->fg, &F->dh), WEFT_OK);
    expect_orderings(1, O(sg), O(a));
    weft_apply_t *const *b, *const *af;
    size_t n;
    assert_int_equal(weft_fgraph_orderings(F->fg, &b, &af, &n), WEFT_OK);
    assert_int_equal(n, 1);
    assert_ptr_equal(b[0], O(sg));
    assert_ptr_equal(af[0], O(a));
}

static void test_destroy_cloned_fgraph_gets_its_own_handler(void **s)
{
    (void)s;
    weft_var_t *sg = ap1(F->ops.sig, F->x), *a = ap2(F->ops.aip, F->x, F->y);
    weft_var_t *o = ap2(F->ops.dot, sg, a);
    build(1, &o);
    weft_fgraph_t *c;
    weft_clone_map_t *m;
    assert_int_equal(weft_fgraph_clone(F->fg, true, &m, &c), WEFT_OK);
    weft_feature_t *cd = weft_fgraph_find_feature(c, &weft_dh_class);
    assert_non_null(cd);
    assert_ptr_not_equal(cd, F->dh);
    weft_apply_t *const *b, *const *af;
    size_t n;
    assert_int_equal(weft_dh_orderings(c, &b, &af, &n), WEFT_OK);
    assert_int_equal(n, 1);
    assert_ptr_equal(b[0], weft_clone_map_apply(m, O(sg)));
    assert_ptr_equal(af[0], weft_clone_map_apply(m, O(a)));
    weft_clone_map_destroy(m);
    weft_fgraph_destroy(c);
}

/* ---- queries ---------------------------------------------------------------------------- */

static void test_destroy_can_destroy_matches_spec_examples(void **s)
{
    (void)s;
    weft_var_t *o[2] = {ap2(F->ops.add, F->x, F->y), ap2(F->ops.add, F->y, F->x)};
    weft_var_t *sg = ap1(F->ops.sig, F->z);
    weft_var_t *o3 = ap2(F->ops.dot, sg, F->z);
    weft_var_t *outs[4] = {o[0], o[1], sg, o3};
    build(4, outs);
    bool ok;
    assert_int_equal(weft_dh_can_destroy(F->fg, O(o[0]), 0, NULL, &ok), WEFT_OK);
    assert_true(ok);
    /* sg is an output: destroying it breaks D6 (§8.2 #22) */
    assert_int_equal(weft_dh_can_destroy(F->fg, O(o3), 0, NULL, &ok), WEFT_OK);
    assert_false(ok);
    assert_non_null(strstr(weft_fgraph_last_error(F->fg), "rule D6"));
    assert_int_equal(weft_dh_can_destroy(F->fg, O(o3), 1, NULL, &ok), WEFT_OK);
    assert_true(ok);
    assert_int_equal(weft_fgraph_replace_validate(F->fg, o[0], ap2(F->ops.aip, F->x, F->y), "i"),
                     WEFT_OK);
    /* §8.2 #14: the second swap closes a cycle through the first one's ordering */
    assert_int_equal(weft_dh_can_destroy(F->fg, O(o[1]), 0, NULL, &ok), WEFT_OK);
    assert_false(ok);
    assert_non_null(strstr(weft_fgraph_last_error(F->fg), "rule D5"));
    assert_int_equal(weft_dh_can_destroy(F->fg, O(o[1]), 1, NULL, &ok), WEFT_OK);
    assert_false(ok);
    assert_non_null(strstr(weft_fgraph_last_error(F->fg), "rule D1"));
}

static void test_destroy_can_destroy_checks_aliasing_and_constants(void **s)
{
    (void)s;
    weft_var_t *t = ap1(F->ops.tv, F->x);
    weft_var_t *p = ap2(F->ops.add, F->x, t), *q = ap2(F->ops.add, F->x, F->x);
    weft_var_t *c = ap2(F->ops.add, constant3(), F->y);
    weft_var_t *outs[3] = {p, q, c};
    build(3, outs);
    bool ok;
    assert_int_equal(weft_dh_can_destroy(F->fg, O(p), 0, F->ops.aip_same, &ok), WEFT_OK);
    assert_false(ok); /* §8.2 #11: a view is not the same variable */
    assert_non_null(strstr(weft_fgraph_last_error(F->fg), "rule D3"));
    assert_int_equal(weft_dh_can_destroy(F->fg, O(p), 0, F->ops.aip_aliased, &ok),
                     WEFT_OK);
    assert_true(ok); /* §8.2 #12 */
    assert_int_equal(weft_dh_can_destroy(F->fg, O(q), 0, F->ops.aip_same, &ok), WEFT_OK);
    assert_true(ok); /* §8.2 #10 */
    assert_int_equal(weft_dh_can_destroy(F->fg, O(q), 0, NULL, &ok), WEFT_OK);
    assert_false(ok); /* §8.2 #9 */
    assert_non_null(strstr(weft_fgraph_last_error(F->fg), "rule D3"));
    assert_int_equal(weft_dh_can_destroy(F->fg, O(c), 0, NULL, &ok), WEFT_OK);
    assert_false(ok); /* §8.2 #17 */
    assert_non_null(strstr(weft_fgraph_last_error(F->fg), "rule D2"));
    assert_int_equal(weft_dh_can_destroy(F->fg, O(c), 1, NULL, &ok), WEFT_OK);
    assert_true(ok); /* §8.2 #19 */
}

static void test_destroy_inplace_candidates_filters_inputs(void **s)
{
    (void)s;
    weft_var_t *t = ap1(F->ops.tv, F->x), *sg = ap1(F->ops.sig, F->y);
    weft_var_t *a = ap2(F->ops.aip, F->z, sg);
    weft_var_t *cst = constant3();
    weft_var_t *outs[2] = {ap2(F->ops.dot, ap2(F->ops.dot, t, F->x), ap2(F->ops.add, sg, cst)), a};
    build(2, outs);
    const weft_var_t *ins[5] = {t, F->x, sg, cst, F->z};
    size_t idx[5], n;
    assert_int_equal(weft_dh_inplace_candidates(F->fg, 5, ins, 0, NULL, idx, &n), WEFT_OK);
    /* t and x share root x: both dropped; sg kept; constant dropped; z destroyed */
    assert_int_equal(n, 1);
    assert_int_equal(idx[0], 2);
    const weft_var_t *prot[1] = {sg};
    assert_int_equal(weft_dh_inplace_candidates(F->fg, 2, &ins[1], 1, prot, idx, &n),
                     WEFT_OK);
    assert_int_equal(n, 1);
    assert_int_equal(idx[0], 0);
    const weft_var_t *vt[2] = {t, F->y};
    const weft_var_t *px[1] = {F->x};
    assert_int_equal(weft_dh_inplace_candidates(F->fg, 2, vt, 1, px, idx, &n), WEFT_OK);
    assert_int_equal(n, 1);
    assert_int_equal(idx[0], 1);
    bool has;
    assert_int_equal(weft_dh_has_destroyers(F->fg, 2, vt, &has), WEFT_OK);
    assert_false(has);
    const weft_var_t *vz[2] = {F->y, F->z};
    assert_int_equal(weft_dh_has_destroyers(F->fg, 2, vz, &has), WEFT_OK);
    assert_true(has);
}

/* ---- bad input ----------------------------------------------------------------------------- */

static void test_destroy_queries_without_handler_are_estate(void **s)
{
    (void)s;
    weft_var_t *a = ap2(F->ops.aip, F->x, F->y);
    weft_var_t *p;
    weft_apply_t *d;
    bool ok;
    size_t n, idx[2];
    weft_apply_t *const *b, *const *af;
    const weft_var_t *vs[1] = {F->x};
    /* no DH attached yet */
    weft_fgraph_options_t o = WEFT_FGRAPH_OPTIONS_INIT;
    o.clone = false;
    assert_int_equal(weft_fgraph_create(F->g, 0, NULL, 1, &a, &o, NULL, &F->fg), WEFT_OK);
    assert_int_equal(weft_dh_view_parent(F->fg, F->x, &p), WEFT_ESTATE);
    assert_int_equal(weft_dh_root(F->fg, F->x, &p), WEFT_ESTATE);
    assert_int_equal(weft_dh_destroyer(F->fg, F->x, &d), WEFT_ESTATE);
    assert_int_equal(weft_dh_has_destroyers(F->fg, 1, vs, &ok), WEFT_ESTATE);
    assert_int_equal(weft_dh_n_destroyers(F->fg, &n), WEFT_ESTATE);
    assert_int_equal(weft_dh_orderings(F->fg, &b, &af, &n), WEFT_ESTATE);
    assert_int_equal(weft_dh_can_destroy(F->fg, O(a), 0, NULL, &ok), WEFT_ESTATE);
    assert_int_equal(weft_dh_inplace_candidates(F->fg, 1, vs, 0, NULL, idx, &n),
                     WEFT_ESTATE);
    assert_non_null(strstr(weft_fgraph_last_error(F->fg), "no DestroyHandler"));
}

static void test_destroy_null_arguments_are_einval(void **s)
{
    (void)s;
    weft_var_t *a = ap2(F->ops.aip, F->x, F->y);
    build(1, &a);
    weft_var_t *p;
    weft_apply_t *d;
    bool ok;
    size_t n, idx[2];
    weft_apply_t *const *b, *const *af;
    const weft_var_t *vs[1] = {F->x};
    /* NULL arguments */
    assert_int_equal(weft_dh_view_parent(NULL, F->x, &p), WEFT_EINVAL);
    assert_int_equal(weft_dh_view_parent(F->fg, NULL, &p), WEFT_EINVAL);
    assert_int_equal(weft_dh_view_parent(F->fg, F->x, NULL), WEFT_EINVAL);
    assert_int_equal(weft_dh_root(NULL, F->x, &p), WEFT_EINVAL);
    assert_int_equal(weft_dh_root(F->fg, F->x, NULL), WEFT_EINVAL);
    assert_int_equal(weft_dh_destroyer(F->fg, NULL, &d), WEFT_EINVAL);
    assert_int_equal(weft_dh_destroyer(F->fg, F->x, NULL), WEFT_EINVAL);
    assert_int_equal(weft_dh_has_destroyers(F->fg, 1, NULL, &ok), WEFT_EINVAL);
    assert_int_equal(weft_dh_has_destroyers(F->fg, 1, vs, NULL), WEFT_EINVAL);
    const weft_var_t *vnull[1] = {NULL};
    assert_int_equal(weft_dh_has_destroyers(F->fg, 1, vnull, &ok), WEFT_EINVAL);
    assert_int_equal(weft_dh_n_destroyers(F->fg, NULL), WEFT_EINVAL);
    assert_int_equal(weft_dh_n_destroyers(NULL, &n), WEFT_EINVAL);
    assert_int_equal(weft_dh_orderings(F->fg, NULL, &af, &n), WEFT_EINVAL);
    assert_int_equal(weft_dh_orderings(NULL, &b, &af, &n), WEFT_EINVAL);
    assert_int_equal(weft_dh_can_destroy(NULL, O(a), 0, NULL, &ok), WEFT_EINVAL);
    assert_int_equal(weft_dh_can_destroy(F->fg, NULL, 0, NULL, &ok), WEFT_EINVAL);
    assert_int_equal(weft_dh_can_destroy(F->fg, O(a), 0, NULL, NULL), WEFT_EINVAL);
    assert_int_equal(weft_dh_can_destroy(F->fg, O(a), 2, NULL, &ok), WEFT_EINVAL);
    assert_int_equal(weft_dh_inplace_candidates(NULL, 1, vs, 0, NULL, idx, &n),
                     WEFT_EINVAL);
    assert_int_equal(weft_dh_inplace_candidates(F->fg, 1, NULL, 0, NULL, idx, &n),
                     WEFT_EINVAL);
    assert_int_equal(weft_dh_inplace_candidates(F->fg, 1, vs, 0, NULL, NULL, &n),
                     WEFT_EINVAL);
    assert_int_equal(weft_dh_inplace_candidates(F->fg, 1, vs, 0, NULL, idx, NULL),
                     WEFT_EINVAL);
    assert_int_equal(weft_dh_inplace_candidates(F->fg, 1, vs, 1, NULL, idx, &n),
                     WEFT_EINVAL);
    assert_int_equal(weft_dh_inplace_candidates(F->fg, 1, vs, 1, vnull, idx, &n),
                     WEFT_EINVAL);
    assert_int_equal(weft_dh_create(NULL, NULL), WEFT_EINVAL);
    assert_int_equal(weft_dh_attach(NULL, NULL), WEFT_EINVAL);
}

static void test_destroy_unknown_variables_and_nodes_are_enotfound(void **s)
{
    (void)s;
    weft_var_t *a = ap2(F->ops.aip, F->x, F->y);
    weft_var_t *stray = ap1(F->ops.sig, F->x);
    weft_fgraph_options_t o = WEFT_FGRAPH_OPTIONS_INIT;
    o.clone = false;
    assert_int_equal(weft_fgraph_create(F->g, 0, NULL, 1, &a, &o, NULL, &F->fg), WEFT_OK);
    assert_int_equal(weft_dh_attach(F->fg, &F->dh), WEFT_OK);
    weft_var_t *p;
    weft_apply_t *d;
    bool ok;
    size_t n, idx[2];
    /* not in the graph */
    assert_int_equal(weft_dh_view_parent(F->fg, stray, &p), WEFT_ENOTFOUND);
    assert_non_null(strstr(weft_fgraph_last_error(F->fg), "not in this FunctionGraph"));
    assert_int_equal(weft_dh_root(F->fg, F->z, &p), WEFT_ENOTFOUND);
    assert_int_equal(weft_dh_destroyer(F->fg, stray, &d), WEFT_ENOTFOUND);
    const weft_var_t *vstray[1] = {stray};
    assert_int_equal(weft_dh_has_destroyers(F->fg, 1, vstray, &ok), WEFT_ENOTFOUND);
    assert_int_equal(weft_dh_inplace_candidates(F->fg, 1, vstray, 0, NULL, idx, &n),
                     WEFT_ENOTFOUND);
    assert_int_equal(weft_dh_can_destroy(F->fg, O(stray), 0, NULL, &ok), WEFT_ENOTFOUND);
    /* an Output pseudo-node */
    const weft_client_t *cl;
    assert_int_equal(weft_fgraph_clients(F->fg, a, &cl, &n), WEFT_OK);
    assert_int_equal(n, 1);
    assert_int_equal(weft_dh_can_destroy(F->fg, cl[0].node, 0, NULL, &ok), WEFT_EINVAL);
    /* a variable of another context */
    weft_graph_t *g2;
    assert_int_equal(weft_graph_create(NULL, &g2), WEFT_OK);
    const weft_type_t *t2;
    weft_var_t *foreign;
    assert_int_equal(weft_type_tensor(g2, WEFT_FLOAT64, 1, NULL, &t2), WEFT_OK);
    assert_non_null(foreign = weft_var_create(g2, t2, "f"));
    assert_int_equal(weft_dh_root(F->fg, foreign, &p), WEFT_ENOTFOUND);
    weft_graph_destroy(g2);
    /* an unattached handler is freed through its class */
    weft_feature_t *loose;
    assert_int_equal(weft_dh_create(NULL, &loose), WEFT_OK);
    loose->cls->destroy(loose);
}

/* ---- allocation failures ------------------------------------------------------ */

/* Fails exactly one allocation: the `fail_at`-th (0-based). */
typedef struct one_failure {
    int fail_at, count;
} one_failure_t;

static void *one_failure_resize(void *user, void *ptr, size_t old_size, size_t new_size)
{
    one_failure_t *f = user;
    (void)old_size;
    if (new_size == 0) {
        free(ptr);
        return NULL;
    }
    if (f->count++ == f->fail_at) return NULL;
    return realloc(ptr, new_size);
}

static bool ok_or_enomem(weft_status_t s)
{
    return s == WEFT_OK || s == WEFT_ENOMEM;
}

/* OK, or WEFT_ENOMEM with a message (read after the call) that says so. */
static bool ok_or_said_nomem(weft_status_t s, const char *msg)
{
    if (s == WEFT_ENOMEM && !strstr(msg, "out of memory")) print_message("message: '%s'\n", msg);
    return s == WEFT_OK || (s == WEFT_ENOMEM && strstr(msg, "out of memory"));
}

/* The queries a rewrite asks of the DH, each OK or a said WEFT_ENOMEM. */
static void dh_queries_ok_or_said_nomem(weft_apply_t *node)
{
    const weft_var_t *ins[2] = {weft_apply_input(node, 0), weft_apply_input(node, 1)};
    size_t idx[2], n;
    bool ok;
    weft_apply_t *const *bef, *const *aft;
    weft_status_t st = weft_dh_inplace_candidates(F->fg, 2, ins, 0, NULL, idx, &n);
    assert_true(ok_or_said_nomem(st, weft_fgraph_last_error(F->fg)));
    st = weft_dh_can_destroy(F->fg, node, 0, NULL, &ok);
    assert_true(ok_or_said_nomem(st, weft_fgraph_last_error(F->fg)));
    st = weft_dh_orderings(F->fg, &bef, &aft, &n);
    assert_true(ok_or_said_nomem(st, weft_fgraph_last_error(F->fg)));
}

/* One failed allocation anywhere in the DH: every call returns OK or
 * WEFT_ENOMEM with a message that says so, nothing leaks (ASan), and
 * afterwards the DH recovers (a callback that failed makes the next use
 * rescan): validate passes and the orderings are exact. */
static void test_destroy_allocation_failure_recovers_and_leaks_nothing(void **s)
{
    (void)s;
    weft_var_t *t = ap1(F->ops.tv, F->x), *a = ap2(F->ops.aip, t, F->y);
    weft_var_t *sg = ap1(F->ops.sig, t), *o = ap2(F->ops.dot, a, sg);
    int injected = 0;
    for (int at = 0; at < 1000; at++) {
        one_failure_t fa = {at, 0};
        weft_allocator_t al = {one_failure_resize, &fa};
        weft_feature_t *dh;
        weft_status_t st = weft_dh_create(&al, &dh);
        assert_true(ok_or_enomem(st));
        if (st == WEFT_OK) {
            weft_fgraph_options_t opt = WEFT_FGRAPH_OPTIONS_INIT;
            opt.clone = false;
            opt.n_features = 1;
            opt.features = &dh;
            st = weft_fgraph_create(F->g, 0, NULL, 1, &o, &opt, NULL, &F->fg);
            assert_true(ok_or_said_nomem(st, weft_graph_last_error(F->g)));
        }
        if (st == WEFT_OK) {
            st = weft_fgraph_validate(F->fg);
            assert_true(ok_or_said_nomem(st, weft_fgraph_last_error(F->fg)));
            /* clone=false: an earlier round's replace rewired o's input in place */
            weft_var_t *cur = weft_apply_input(O(o), 1), *sg2 = ap1(F->ops.sig, t);
            st = weft_fgraph_replace_validate(F->fg, cur, sg2, "edit");
            assert_true(ok_or_said_nomem(st, weft_fgraph_last_error(F->fg)));
            dh_queries_ok_or_said_nomem(O(a));
            expect_validate(WEFT_OK, NULL);
            weft_apply_t *reader = O(weft_apply_input(O(o), 1));
            expect_orderings(2, O(t), O(a), reader, O(a));
            weft_fgraph_destroy(F->fg);
            F->fg = NULL;
        }
        if (fa.count <= at) break; /* nothing left to fail */
        injected++;
    }
    assert_true(injected > 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
        T(test_destroy_ex01_aip_alone_is_accepted),
        T(test_destroy_ex02_dh_alone_accepts_destroying_an_input),
        T(test_destroy_ex03_reader_runs_before_destroyer),
        T(test_destroy_ex04_reader_needing_destroyer_is_a_cycle),
        T(test_destroy_ex05_view_reader_needing_destroyer_is_a_cycle),
        T(test_destroy_ex06_views_of_fresh_buffer_are_not_readers),
        T(test_destroy_ex07_two_destroyers_of_one_root_is_rejected),
        T(test_destroy_ex08_destroying_a_view_and_its_root_is_rejected),
        T(test_destroy_ex09_same_input_twice_is_input_aliasing),
        T(test_destroy_ex10_tolerate_same_accepts_identical_input),
        T(test_destroy_ex11_tolerate_same_rejects_a_view),
        T(test_destroy_ex12_tolerate_aliased_ignores_the_view),
        T(test_destroy_ex13_other_output_reader_runs_first),
        T(test_destroy_ex14_mutual_destroyers_are_a_cycle),
        T(test_destroy_ex15_chain_of_destroyers_is_ordered),
        T(test_destroy_ex16_three_cycle_is_rejected),
        T(test_destroy_ex17_destroying_a_constant_is_rejected),
        T(test_destroy_ex18_destroying_a_view_of_a_constant_is_rejected),
        T(test_destroy_ex19_reading_a_constant_is_accepted),
        T(test_destroy_ex20_indestructible_root_is_rejected),
        T(test_destroy_ex21_chain_of_in_place_ops_is_accepted),
        T(test_destroy_ex22_dh_alone_accepts_destroying_an_output),
        T(test_destroy_ex23_dh_alone_orders_the_output_view),
        T(test_destroy_ex24_second_output_destroyed_after_its_reader),
        T(test_destroy_ex25_first_output_destroyed_is_a_cycle),
        T(test_destroy_ex26_one_node_destroying_a_root_twice_is_rejected),
        T(test_destroy_ex27_destroying_a_view_orders_all_readers),
        T(test_destroy_transaction_second_in_place_swap_is_reverted),
        T(test_destroy_transaction_opposite_order_also_fails_second),
        T(test_destroy_transaction_removing_destroyer_makes_consistent),
        T(test_destroy_transaction_reading_view_through_add_fixes_cycle),
        T(test_destroy_transaction_walk_add_to_aip_keeps_one),
        T(test_destroy_transaction_walk_sig_to_view_keeps_one_sig),
        T(test_destroy_view_forest_follows_change_prune_and_revert),
        T(test_destroy_destroyer_set_follows_replace_and_revert),
        T(test_destroy_reattached_handler_matches_incremental_state),
        T(test_destroy_protocol_errors_are_reported),
        T(test_destroy_malformed_maps_are_not_implemented),
        T(test_destroy_two_views_on_one_input_are_tracked),
        T(test_destroy_attach_twice_keeps_one_handler),
        T(test_destroy_attach_to_second_fgraph_is_busy),
        T(test_destroy_late_attach_scans_existing_nodes),
        T(test_destroy_cloned_fgraph_gets_its_own_handler),
        T(test_destroy_can_destroy_matches_spec_examples),
        T(test_destroy_can_destroy_checks_aliasing_and_constants),
        T(test_destroy_inplace_candidates_filters_inputs),
        T(test_destroy_queries_without_handler_are_estate),
        T(test_destroy_null_arguments_are_einval),
        T(test_destroy_unknown_variables_and_nodes_are_enotfound),
        T(test_destroy_allocation_failure_recovers_and_leaks_nothing),
#undef T
    };
    return cmocka_run_group_tests_name("destroy", tests, NULL, NULL);
}
