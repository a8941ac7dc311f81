/* Types: dtypes, interning, equality, hashing, is_super, printing and the
 * bad-input statuses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "graph_fixture.h"

static void test_type_dtype_names_sizes_and_parse(void **state)
{
    (void)state;
    assert_string_equal(weft_dtype_name(WEFT_FLOAT32), "float32");
    assert_null(weft_dtype_name((weft_dtype_t)99));
    assert_int_equal(weft_dtype_size(WEFT_BOOL), 1);
    assert_int_equal(weft_dtype_size(WEFT_INT64), 8);
    assert_int_equal(weft_dtype_size((weft_dtype_t)-1), 0);
    weft_dtype_t d;
    assert_int_equal(weft_dtype_parse("int32", &d), WEFT_OK);
    assert_int_equal(d, WEFT_INT32);
    assert_int_equal(weft_dtype_parse("complex", &d), WEFT_ENOTFOUND);
    assert_int_equal(weft_dtype_parse(NULL, &d), WEFT_EINVAL);
}

static void test_type_equal_types_are_interned(void **state)
{
    fx_t *f = *state;
    int64_t s1[2] = {3, WEFT_DIM_UNKNOWN};
    const weft_type_t *a, *b, *c;
    assert_int_equal(weft_type_tensor(f->g, WEFT_FLOAT64, 2, s1, &a), WEFT_OK);
    assert_int_equal(weft_type_tensor(f->g, WEFT_FLOAT64, 2, s1, &b), WEFT_OK);
    assert_ptr_equal(a, b);
    assert_int_equal(weft_type_tensor(f->g, WEFT_FLOAT32, 2, s1, &c), WEFT_OK);
    assert_ptr_not_equal(a, c);
    assert_false(weft_type_equal(a, c));
    assert_int_equal(weft_type_ndim(a), 2);
    assert_int_equal(weft_type_dim(a, 0), 3);
    assert_int_equal(weft_type_dim(a, 1), WEFT_DIM_UNKNOWN);
    assert_int_equal(weft_type_dim(a, 7), WEFT_DIM_UNKNOWN);
    assert_false(weft_type_is_static(a));
    assert_int_equal(weft_type_kind(a), WEFT_TYPE_TENSOR);
}

static void test_type_equality_and_hash_across_contexts(void **state)
{
    fx_t *f = *state;
    weft_graph_t *g2;
    assert_int_equal(weft_graph_create(NULL, &g2), WEFT_OK);
    int64_t s[1] = {3};
    const weft_type_t *a, *b;
    assert_int_equal(weft_type_tensor(f->g, WEFT_FLOAT64, 1, s, &a), WEFT_OK);
    assert_int_equal(weft_type_tensor(g2, WEFT_FLOAT64, 1, s, &b), WEFT_OK);
    assert_ptr_not_equal(a, b);
    assert_true(weft_type_equal(a, b));
    assert_int_equal(weft_type_hash(a), weft_type_hash(b));
    assert_ptr_equal(a, f->vec3);
    weft_graph_destroy(g2);
}

static void test_type_broadcastable_is_static_length_one(void **state)
{
    fx_t *f = *state;
    int64_t s[3] = {1, 4, WEFT_DIM_UNKNOWN};
    const weft_type_t *t;
    assert_int_equal(weft_type_tensor(f->g, WEFT_BOOL, 3, s, &t), WEFT_OK);
    assert_true(weft_type_is_broadcastable(t, 0));
    assert_false(weft_type_is_broadcastable(t, 1));
    assert_false(weft_type_is_broadcastable(t, 2));
    int64_t s2[2] = {1, 4};
    assert_int_equal(weft_type_tensor(f->g, WEFT_BOOL, 2, s2, &t), WEFT_OK);
    assert_true(weft_type_is_static(t));
}

static void test_type_is_super_allows_unknown_to_take_known(void **state)
{
    fx_t *f = *state;
    assert_true(weft_type_is_super(f->vec, f->vec3));  /* [?] accepts [3] */
    assert_false(weft_type_is_super(f->vec3, f->vec)); /* [3] does not accept [?] */
    assert_true(weft_type_is_super(f->vec, f->vec));
    assert_false(weft_type_is_super(f->vec, f->ivec));   /* dtype */
    assert_false(weft_type_is_super(f->vec, f->scalar)); /* ndim */
    assert_true(weft_type_in_same_class(f->vec, f->vec3));
    assert_false(weft_type_in_same_class(f->vec, f->ivec));
    const weft_type_t *n, *d;
    assert_int_equal(weft_type_null(f->g, &n), WEFT_OK);
    assert_int_equal(weft_type_disconnected(f->g, &d), WEFT_OK);
    assert_false(weft_type_is_super(n, d));
    assert_false(weft_type_is_super(f->vec, n));
    assert_true(weft_type_is_super(n, n));
    assert_false(weft_type_is_super(NULL, n));
}

static void test_type_print_forms(void **state)
{
    fx_t *f = *state;
    char buf[64];
    int64_t s[2] = {3, WEFT_DIM_UNKNOWN};
    const weft_type_t *t, *n, *d;
    assert_int_equal(weft_type_tensor(f->g, WEFT_FLOAT64, 2, s, &t), WEFT_OK);
    assert_int_equal(weft_type_print(t, buf, sizeof(buf)), 12);
    assert_string_equal(buf, "float64[3,?]");
    weft_type_print(f->scalar, buf, sizeof(buf));
    assert_string_equal(buf, "float64[]");
    weft_type_null(f->g, &n);
    weft_type_disconnected(f->g, &d);
    weft_type_print(n, buf, sizeof(buf));
    assert_string_equal(buf, "NullType");
    weft_type_print(d, buf, sizeof(buf));
    assert_string_equal(buf, "DisconnectedType");
    assert_int_equal(weft_type_kind(n), WEFT_TYPE_NULL);
    assert_int_equal(weft_type_print(t, buf, 4), 12); /* truncated, snprintf-like */
    assert_string_equal(buf, "flo");
}

static void test_type_bad_arguments_return_einval(void **state)
{
    fx_t *f = *state;
    const weft_type_t *t = (const weft_type_t *)1;
    int64_t bad[1] = {-5};
    assert_int_equal(weft_type_tensor(NULL, WEFT_FLOAT64, 1, NULL, &t), WEFT_EINVAL);
    assert_int_equal(weft_type_tensor(f->g, WEFT_FLOAT64, 1, NULL, NULL), WEFT_EINVAL);
    assert_int_equal(weft_type_tensor(f->g, (weft_dtype_t)WEFT_DTYPE_COUNT, 1, NULL, &t), WEFT_EINVAL);
    assert_int_equal(weft_type_tensor(f->g, (weft_dtype_t)99, 1, NULL, &t), WEFT_EINVAL);
    assert_null(t);
    assert_non_null(strstr(weft_graph_last_error(f->g), "invalid dtype"));
    assert_int_equal(weft_type_tensor(f->g, WEFT_FLOAT64, -1, NULL, &t), WEFT_EINVAL);
    assert_int_equal(weft_type_tensor(f->g, WEFT_FLOAT64, WEFT_MAX_NDIM + 1, NULL, &t),
                     WEFT_EINVAL);
    assert_int_equal(weft_type_tensor(f->g, WEFT_FLOAT64, 1, bad, &t), WEFT_EINVAL);
    assert_non_null(strstr(weft_graph_last_error(f->g), "length -5"));
    assert_int_equal(weft_type_null(NULL, &t), WEFT_EINVAL);
    assert_int_equal(weft_type_ndim(NULL), 0);
    assert_false(weft_type_equal(NULL, NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_type_dtype_names_sizes_and_parse, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(test_type_equal_types_are_interned, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_type_equality_and_hash_across_contexts, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(test_type_broadcastable_is_static_length_one, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(test_type_is_super_allows_unknown_to_take_known, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(test_type_print_forms, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_type_bad_arguments_return_einval, fx_setup,
                                        fx_teardown),
    };
    return cmocka_run_group_tests_name("type", tests, NULL, NULL);
}
