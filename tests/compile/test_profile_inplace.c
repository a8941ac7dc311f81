/* The profile's in-place columns (weft/profile.h: key, in_place,
 * inplace_bytes, inplace_orderings) and the compile option cost_profile: a
 * profile whose measured times say one branch is cheap lets the inplace
 * rewrite overwrite the shared value there (docs/rewrites.md §6.6); the
 * results stay bit for bit those of the function compiled without it. */
#define _POSIX_C_SOURCE 200809L /* fmemopen */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "compile_test_ops.h"

static weft_graph_t *g;
static const int64_t M[2] = {64, 64};

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

/* y = tanh(a @ b) + exp(a @ b), fusion excluded so that both readers of the
 * product stay nodes. */
static weft_function_t *compile_example(weft_var_t **in, const weft_profile_t *costs)
{
    /* declarators are sequenced: the Tanh is built before the Exp */
    weft_var_t *d = weft_dot(g, in[0], in[1]), *t = weft_tanh(g, d), *e = weft_exp(g, d);
    weft_var_t *y = weft_add(g, t, e);
    assert_string_equal(weft_graph_error_message(g), "");
    assert_non_null(y);
    const char *ex[] = {"fusion"};
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.threads = 2;
    o.profile = true;
    o.n_exclude = 1;
    o.exclude = ex;
    o.cost_profile = costs;
    weft_function_t *f = NULL;
    weft_status_t st = weft_function_compile(2, in, 1, &y, 0, NULL, &o, &f);
    if (st != WEFT_OK) print_message("%s\n", weft_function_last_error(NULL));
    assert_int_equal(st, WEFT_OK);
    return f;
}

static const weft_profile_apply_t *row_of(const weft_profile_t *p, const char *op_class)
{
    for (size_t i = 0; i < p->n_applies; i++)
        if (!strcmp(p->applies[i].op_class, op_class)) return &p->applies[i];
    fail_msg("no %s row", op_class);
    return NULL;
}

static void check_row(const weft_profile_t *p, const char *cls, bool in_place, uint64_t bytes,
                      uint32_t ord)
{
    const weft_profile_apply_t *r = row_of(p, cls);
    assert_int_equal(r->destroys >= 0, in_place);
    assert_int_equal(r->inplace_bytes, bytes);
    assert_int_equal(r->inplace_orderings, ord);
}

static weft_tensor_t *call(weft_function_t *f, weft_tensor_t **vals)
{
    weft_tensor_t *y = NULL;
    assert_int_equal(weft_function_call(f, 2, vals, 1, &y), WEFT_OK);
    return y;
}

static void test_profile_inplace_columns_and_cost_profile(void **state)
{
    (void)state;
    weft_var_t *in[2] = {ct_var(g, "a", 2, M), ct_var(g, "b", 2, M)};
    weft_function_t *f1 = compile_example(in, NULL);
    weft_profile_t *p1;
    assert_int_equal(weft_profile_create(f1, WEFT_PROFILE_TOTAL, &p1), WEFT_OK);
    assert_int_equal(p1->n_applies, 4);
    /* estimates: neither branch may wait for the other; the Add overwrites
     * the Tanh's result, its last reader, with no ordering */
    check_row(p1, "Tanh", false, 0, 0);
    check_row(p1, "Exp", false, 0, 0);
    check_row(p1, "Add", true, 64 * 64 * 8, 0);
    /* measured: Exp 1 ns, Tanh 1 ms */
    weft_profile_apply_t rows[4];
    memcpy(rows, p1->applies, sizeof rows);
    for (size_t i = 0; i < 4; i++) {
        rows[i].calls = 2;
        rows[i].time_ns = !strcmp(rows[i].op_class, "Tanh") ? 2000000 : 2;
    }
    weft_profile_t costs = *p1;
    costs.applies = rows;
    weft_function_t *f2 = compile_example(in, &costs);
    weft_profile_t *p2;
    assert_int_equal(weft_profile_create(f2, WEFT_PROFILE_TOTAL, &p2), WEFT_OK);
    /* the Tanh (first in this function's node order) overwrites the
     * product after the Exp has read it: 1 ns longer on a ~1 ms path */
    check_row(p2, "Tanh", true, 64 * 64 * 8, 1);
    check_row(p2, "Exp", false, 0, 0);
    check_row(p2, "Add", true, 64 * 64 * 8, 0);
    for (size_t i = 0; i < 4; i++) assert_true(row_of(p2, rows[i].op_class)->key == rows[i].key);
    weft_tensor_t *vals[2] = {ct_tensor(2, M, 0.001), ct_tensor(2, M, -0.002)};
    weft_tensor_t *y1 = call(f1, vals), *y2 = call(f2, vals);
    for (size_t i = 0; i < 64 * 64; i++)
        assert_true(weft_tensor_flat_get(y1, i) == weft_tensor_flat_get(y2, i));
    weft_tensor_release(y1);
    weft_tensor_release(y2);
    weft_tensor_release(vals[0]);
    weft_tensor_release(vals[1]);
    /* a profile with rows but no row array */
    costs.applies = NULL;
    weft_var_t *y = weft_add(g, in[0], in[1]);
    assert_non_null(y);
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.cost_profile = &costs;
    weft_function_t *bad = NULL;
    assert_int_equal(weft_function_compile(2, in, 1, &y, 0, NULL, &o, &bad), WEFT_EINVAL);
    assert_null(bad);
    assert_string_equal(weft_function_last_error(NULL),
                        "options.cost_profile: 4 rows but no rows");
    weft_profile_destroy(p1);
    weft_profile_destroy(p2);
    weft_function_destroy(f1);
    weft_function_destroy(f2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_profile_inplace_columns_and_cost_profile, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
