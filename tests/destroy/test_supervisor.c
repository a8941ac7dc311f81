/* Supervisor tests (rule D6): docs/destroy.md §8.2 cases #2, #22, #23,
 * declared-mutable inputs, the explicit protected list of a compiled
 * function, merging with the Supervisor weft_fgraph_create attaches,
 * transactions, cloning and bad input. */
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
#include "weft/supervisor.h"

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

static weft_var_t *ap1(const weft_op_t *op, weft_var_t *a)
{
    return dt_ap1(F, op, a);
}

static weft_var_t *ap2(const weft_op_t *op, weft_var_t *a, weft_var_t *b)
{
    return dt_ap2(F, op, a, b);
}

/* fgraph on inputs x, y, z (no clone); with_dh attaches a DestroyHandler. */
static void build(size_t n, weft_var_t **outs, const bool *mut, bool with_dh)
{
    weft_feature_t *dh = NULL;
    weft_fgraph_options_t o = WEFT_FGRAPH_OPTIONS_INIT;
    o.clone = false;
    if (with_dh) {
        assert_int_equal(weft_dh_create(NULL, &dh), WEFT_OK);
        o.n_features = 1;
        o.features = &dh;
    }
    o.input_mutable = mut;
    weft_var_t *ins[3] = {F->x, F->y, F->z};
    assert_int_equal(weft_fgraph_create(F->g, 3, ins, n, outs, &o, NULL, &F->fg), WEFT_OK);
}

static void expect_validate(weft_status_t want, const char *substr)
{
    weft_status_t s = weft_fgraph_validate(F->fg);
    if (s != want) fprintf(stderr, "validate: %d: %s\n", s, weft_fgraph_last_error(F->fg));
    assert_int_equal(s, want);
    if (substr && !strstr(weft_fgraph_last_error(F->fg), substr)) {
        fprintf(stderr, "message: %s\nwanted: %s\n", weft_fgraph_last_error(F->fg), substr);
        fail();
    }
}

static const bool x_immutable[3] = {false, true, true};
static const bool all_mutable[3] = {true, true, true};

static void test_supervisor_ex02_immutable_input_destroyed_is_rejected(void **s)
{
    (void)s;
    weft_var_t *o = ap2(F->ops.aip, F->x, F->y);
    build(1, &o, x_immutable, true);
    assert_non_null(weft_fgraph_find_feature(F->fg, &weft_supervisor_class));
    expect_validate(WEFT_EINCONSISTENT, "Trying to destroy a protected variable: x");
    expect_validate(WEFT_EINCONSISTENT, "AddInPlace");
}

static void test_supervisor_ex22_destroyed_output_is_rejected(void **s)
{
    (void)s;
    weft_var_t *sg = ap1(F->ops.sig, F->x);
    assert_int_equal(weft_var_set_name(sg, "s"), WEFT_OK);
    weft_var_t *o[2] = {sg, ap2(F->ops.aip, sg, F->y)};
    build(2, o, all_mutable, true);
    expect_validate(WEFT_EINCONSISTENT, "Trying to destroy a protected variable: s");
}

static void test_supervisor_ex23_output_view_of_destroyed_input_is_rejected(void **s)
{
    (void)s;
    weft_var_t *t = ap1(F->ops.tv, F->x);
    assert_int_equal(weft_var_set_name(t, "t"), WEFT_OK);
    weft_var_t *o[2] = {t, ap2(F->ops.aip, F->x, F->y)};
    build(2, o, all_mutable, true);
    expect_validate(WEFT_EINCONSISTENT, "Trying to destroy a protected variable: t");
}

static void test_supervisor_declared_mutable_input_is_accepted(void **s)
{
    (void)s;
    weft_var_t *o = ap2(F->ops.aip, F->y, F->x); /* y mutable, x only read */
    build(1, &o, x_immutable, true);
    expect_validate(WEFT_OK, NULL);
    assert_true(weft_fgraph_input_is_mutable(F->fg, 1));
    assert_false(weft_fgraph_input_is_mutable(F->fg, 0));
}

static void test_supervisor_destroying_through_a_view_is_rejected(void **s)
{
    (void)s;
    weft_var_t *o = ap2(F->ops.aip, ap1(F->ops.tv, ap1(F->ops.tv, F->x)), F->y);
    build(1, &o, x_immutable, true);
    expect_validate(WEFT_EINCONSISTENT, "Trying to destroy a protected variable: x");
}

static void test_supervisor_without_declarations_is_not_attached(void **s)
{
    (void)s;
    weft_var_t *o = ap2(F->ops.aip, F->x, F->y);
    build(1, &o, NULL, true);
    assert_null(weft_fgraph_find_feature(F->fg, &weft_supervisor_class));
    expect_validate(WEFT_OK, NULL);
}

static void test_supervisor_rejected_inplace_replace_is_reverted(void **s)
{
    (void)s;
    weft_var_t *p = ap2(F->ops.add, F->x, F->y), *q = ap2(F->ops.add, F->y, F->z);
    weft_var_t *o = ap2(F->ops.dot, p, q);
    build(1, &o, x_immutable, true);
    assert_int_equal(weft_fgraph_replace_validate(F->fg, p, ap2(F->ops.aip, F->x, F->y), "i"),
                     WEFT_EINCONSISTENT);
    assert_non_null(strstr(weft_fgraph_last_error(F->fg), "protected variable: x"));
    assert_ptr_equal(weft_apply_input(weft_var_owner(o), 0), p);
    weft_var_t *a = ap2(F->ops.aip, F->y, F->x);
    assert_int_equal(weft_fgraph_replace_validate(F->fg, p, a, "i"), WEFT_OK);
    assert_ptr_equal(weft_apply_input(weft_var_owner(o), 0), a);
    expect_validate(WEFT_OK, NULL);
}

static void test_supervisor_explicit_list_protects_inputs(void **s)
{
    (void)s;
    weft_var_t *o = ap2(F->ops.aip, F->z, F->y);
    build(1, &o, NULL, true);
    expect_validate(WEFT_OK, NULL);
    weft_feature_t *sup;
    weft_var_t *prot[1] = {F->z};
    assert_int_equal(weft_supervisor_create(1, prot, NULL, &sup), WEFT_OK);
    assert_int_equal(weft_fgraph_attach_feature(F->fg, sup), WEFT_OK);
    expect_validate(WEFT_EINCONSISTENT, "Trying to destroy a protected variable: z");
}

static void test_supervisor_explicit_list_merges_into_attached_one(void **s)
{
    (void)s;
    weft_var_t *o = ap2(F->ops.aip, F->z, F->y);
    build(1, &o, all_mutable, true);
    weft_feature_t *first = weft_fgraph_find_feature(F->fg, &weft_supervisor_class);
    assert_non_null(first);
    expect_validate(WEFT_OK, NULL);
    weft_feature_t *sup;
    weft_var_t *prot[1] = {F->z};
    assert_int_equal(weft_supervisor_create(1, prot, NULL, &sup), WEFT_OK);
    assert_int_equal(weft_fgraph_attach_feature(F->fg, sup), WEFT_OK); /* merged, freed */
    assert_ptr_equal(weft_fgraph_find_feature(F->fg, &weft_supervisor_class), first);
    expect_validate(WEFT_EINCONSISTENT, "Trying to destroy a protected variable: z");
}

static void test_supervisor_checks_without_destroy_handler(void **s)
{
    (void)s;
    weft_var_t *o = ap2(F->ops.aip, F->x, F->y);
    build(1, &o, x_immutable, false);
    expect_validate(WEFT_EINCONSISTENT, "Trying to destroy a protected variable: x");
}

static void test_supervisor_clone_protects_same_positions(void **s)
{
    (void)s;
    weft_var_t *o = ap2(F->ops.aip, F->z, F->y);
    build(1, &o, all_mutable, true);
    weft_feature_t *sup;
    weft_var_t *prot[1] = {F->z};
    assert_int_equal(weft_supervisor_create(1, prot, NULL, &sup), WEFT_OK);
    assert_int_equal(weft_fgraph_attach_feature(F->fg, sup), WEFT_OK);
    weft_fgraph_t *c;
    weft_clone_map_t *m;
    assert_int_equal(weft_fgraph_clone(F->fg, true, &m, &c), WEFT_OK);
    assert_int_equal(weft_fgraph_validate(c), WEFT_EINCONSISTENT);
    assert_non_null(strstr(weft_fgraph_last_error(c), "protected variable: z"));
    weft_clone_map_destroy(m);
    weft_fgraph_destroy(c);
}

static void test_supervisor_bad_arguments_return_exact_status(void **s)
{
    (void)s;
    weft_feature_t *sup;
    weft_var_t *prot[1] = {F->x}, *nul[1] = {NULL};
    assert_int_equal(weft_supervisor_create(0, NULL, NULL, NULL), WEFT_EINVAL);
    assert_int_equal(weft_supervisor_create(1, NULL, NULL, &sup), WEFT_EINVAL);
    assert_int_equal(weft_supervisor_create(1, nul, NULL, &sup), WEFT_EINVAL);
    weft_var_t *o = ap2(F->ops.aip, F->y, F->z);
    build(1, &o, NULL, true);
    /* a protected variable that is not an input of the fgraph */
    weft_var_t *notin[1] = {o};
    assert_int_equal(weft_supervisor_create(1, notin, NULL, &sup), WEFT_OK);
    assert_int_equal(weft_fgraph_attach_feature(F->fg, sup), WEFT_EINVAL);
    assert_non_null(strstr(weft_fgraph_last_error(F->fg), "is not an input"));
    /* an instance serving another fgraph */
    assert_int_equal(weft_supervisor_create(1, prot, NULL, &sup), WEFT_OK);
    assert_int_equal(weft_fgraph_attach_feature(F->fg, sup), WEFT_OK);
    weft_var_t *b = ap2(F->ops.add, F->x, F->y);
    weft_fgraph_options_t opt = WEFT_FGRAPH_OPTIONS_INIT;
    opt.clone = false;
    weft_fgraph_t *fg2;
    assert_int_equal(weft_fgraph_create(F->g, 0, NULL, 1, &b, &opt, NULL, &fg2), WEFT_OK);
    assert_int_equal(weft_fgraph_attach_feature(fg2, sup), WEFT_EBUSY);
    assert_null(weft_fgraph_find_feature(fg2, &weft_supervisor_class));
    weft_fgraph_destroy(fg2);
    expect_validate(WEFT_OK, NULL); /* still serving F->fg: x is not destroyed */
    /* an unattached Supervisor is freed through its class */
    assert_int_equal(weft_supervisor_create(0, NULL, NULL, &sup), WEFT_OK);
    sup->cls->destroy(sup);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
        T(test_supervisor_ex02_immutable_input_destroyed_is_rejected),
        T(test_supervisor_ex22_destroyed_output_is_rejected),
        T(test_supervisor_ex23_output_view_of_destroyed_input_is_rejected),
        T(test_supervisor_declared_mutable_input_is_accepted),
        T(test_supervisor_destroying_through_a_view_is_rejected),
        T(test_supervisor_without_declarations_is_not_attached),
        T(test_supervisor_rejected_inplace_replace_is_reverted),
        T(test_supervisor_explicit_list_protects_inputs),
        T(test_supervisor_explicit_list_merges_into_attached_one),
        T(test_supervisor_checks_without_destroy_handler),
        T(test_supervisor_clone_protects_same_positions),
        T(test_supervisor_bad_arguments_return_exact_status),
#undef T
    };
    return cmocka_run_group_tests_name("supervisor", tests, NULL, NULL);
}
