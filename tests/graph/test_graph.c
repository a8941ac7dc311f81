/* Variables, constants, apply nodes, creation traces, cloning and
 * structural equality, with every documented bad-input status. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "graph_fixture.h"
#include "support/shared_cycle.h"

static void test_graph_var_fields_trace_and_ids(void **state)
{
    fx_t *f = *state;
    size_t before = weft_graph_n_vars(f->g);
    weft_var_t *x;
    int line = __LINE__ + 1;
    assert_non_null(x = weft_var_create(f->g, f->vec, "x"));
    assert_ptr_equal(weft_var_type(x), f->vec);
    assert_null(weft_var_owner(x));
    assert_string_equal(weft_var_name(x), "x");
    assert_int_equal(weft_var_id(x), before);
    assert_int_equal(weft_graph_n_vars(f->g), before + 1);
    assert_ptr_equal(weft_var_graph(x), f->g);
    assert_false(weft_var_is_constant(x));
    const char *file;
    int l;
    weft_var_trace(x, &file, &l);
    assert_non_null(strstr(file, "test_graph.c"));
    assert_int_equal(l, line);
    assert_int_equal(weft_var_set_name(x, "renamed"), WEFT_OK);
    assert_string_equal(weft_var_name(x), "renamed");
    assert_int_equal(weft_var_set_name(x, NULL), WEFT_OK);
    char buf[64];
    weft_var_print(x, buf, sizeof(buf));
    assert_string_equal(buf, "<float64[?]>");
    assert_false(weft_var_is_indestructible(x));
    weft_var_set_indestructible(x, true);
    assert_true(weft_var_is_indestructible(x));
}

static void test_graph_var_bad_arguments(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = (weft_var_t *)1;
    assert_null(weft_var_create(NULL, f->vec, "x"));
    assert_null(x = weft_var_create(f->g, NULL, "x"));
    assert_int_equal(weft_graph_error(f->g), WEFT_EINVAL);
    weft_graph_clear_error(f->g);
    weft_graph_t *g2;
    const weft_type_t *t2;
    assert_int_equal(weft_graph_create(NULL, &g2), WEFT_OK);
    assert_int_equal(weft_type_tensor(g2, WEFT_FLOAT64, 1, NULL, &t2), WEFT_OK);
    assert_null(x = weft_var_create(f->g, t2, "x"));
    assert_int_equal(weft_graph_error(f->g), WEFT_EFOREIGN);
    weft_graph_clear_error(f->g);
    assert_null(x);
    assert_non_null(strstr(weft_graph_last_error(f->g), "another graph context"));
    weft_graph_destroy(g2);
    assert_null(weft_var_type(NULL));
    assert_int_equal(weft_var_set_name(NULL, "a"), WEFT_EINVAL);
}

static void test_graph_constant_value_equality_and_hash(void **state)
{
    fx_t *f = *state;
    double d1[3] = {1, 2, 3}, d2[3] = {1, 2, 4};
    weft_var_t *a, *b, *c;
    assert_non_null(a = weft_constant_create(f->g, f->vec3, d1, sizeof(d1)));
    assert_non_null(b = weft_constant_create(f->g, f->vec3, d1, sizeof(d1)));
    assert_non_null(c = weft_constant_create(f->g, f->vec3, d2, sizeof(d2)));
    d1[0] = 99; /* data was copied */
    assert_ptr_not_equal(a, b);
    assert_true(weft_var_is_constant(a));
    assert_true(weft_constant_equal(a, b));
    assert_int_equal(weft_constant_hash(a), weft_constant_hash(b));
    assert_false(weft_constant_equal(a, c));
    const void *data;
    size_t nb;
    assert_int_equal(weft_constant_data(a, &data, &nb), WEFT_OK);
    assert_int_equal(nb, 24);
    assert_true(((const double *)data)[0] == 1.0);
    char buf[64];
    weft_var_print(a, buf, sizeof(buf));
    assert_string_equal(buf, "[1, 2, 3]");
    weft_var_t *x = fx_var(f, "x");
    assert_false(weft_constant_equal(a, x));
    /* an earlier error must not stand in for this one's message */
    assert_null(x = weft_var_create(f->g, NULL, "bad"));
    assert_int_equal(weft_graph_error(f->g), WEFT_EINVAL);
    weft_graph_clear_error(f->g);
    x = fx_var(f, "x");
    assert_int_equal(weft_constant_data(x, &data, &nb), WEFT_EINVAL);
    assert_string_equal(msg_without_sites(weft_graph_last_error(f->g)),
                        "weft_constant_data: variable 4 'x' (float64[?]) is not a constant");
    assert_int_equal(weft_constant_data(a, NULL, &nb), WEFT_EINVAL);
    assert_string_equal(weft_graph_last_error(f->g), "weft_constant_data: NULL data pointer");
}

static void test_graph_constant_scalar_and_bad_input(void **state)
{
    fx_t *f = *state;
    weft_var_t *c, *d;
    assert_non_null(c = weft_constant_scalar(f->g, WEFT_INT32, 7.0));
    assert_non_null(d = weft_constant_scalar(f->g, WEFT_INT32, 7.0));
    assert_true(weft_constant_equal(c, d));
    char buf[32];
    weft_var_print(c, buf, sizeof(buf));
    assert_string_equal(buf, "7");
    assert_non_null(c = weft_constant_scalar(f->g, WEFT_BOOL, 2.0));
    weft_var_print(c, buf, sizeof(buf));
    assert_string_equal(buf, "true");
    assert_null(c = weft_constant_scalar(f->g, WEFT_INT32, 1e12));
    assert_int_equal(weft_graph_error(f->g), WEFT_EINVAL);
    assert_non_null(strstr(weft_graph_error_message(f->g), "not representable as int32"));
    weft_graph_clear_error(f->g);
    double v[2] = {1, 2};
    assert_null(c = weft_constant_create(f->g, f->vec, v, sizeof(v)));
    assert_int_equal(weft_graph_error(f->g), WEFT_EINVAL);
    assert_non_null(strstr(weft_graph_error_message(f->g), "not a static tensor type"));
    weft_graph_clear_error(f->g);
    assert_null(c = weft_constant_create(f->g, f->vec3, v, sizeof(v)));
    assert_int_equal(weft_graph_error(f->g), WEFT_ESHAPE);
    assert_non_null(strstr(weft_graph_error_message(f->g), "16 bytes given for type float64[3]"));
    weft_graph_clear_error(f->g);
    assert_null(c = weft_constant_create(f->g, f->vec3, NULL, 24));
    assert_int_equal(weft_graph_error(f->g), WEFT_EINVAL);
    weft_graph_clear_error(f->g);
}

static void test_graph_apply_outputs_owner_and_default_output(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *y = fx_var(f, "y");
    weft_var_t *in[2] = {x, y};
    weft_apply_t *a;
    assert_non_null(a = weft_apply_create(f->g, f->add, 2, in));
    assert_ptr_equal(weft_apply_op(a), f->add);
    assert_int_equal(weft_apply_n_inputs(a), 2);
    assert_ptr_equal(weft_apply_input(a, 1), y);
    assert_null(weft_apply_input(a, 2));
    assert_int_equal(weft_apply_n_outputs(a), 1);
    weft_var_t *z = weft_apply_output(a, 0);
    assert_ptr_equal(weft_var_owner(z), a);
    assert_int_equal(weft_var_index(z), 0);
    weft_var_t *d;
    assert_int_equal(weft_apply_default_output(a, &d), WEFT_OK);
    assert_ptr_equal(d, z);
    assert_false(weft_apply_is_output_slot(a));
    char buf[128];
    weft_apply_print(a, buf, sizeof(buf));
    assert_string_equal(buf, "Add(x, y)");
    weft_var_print(z, buf, sizeof(buf));
    assert_string_equal(buf, "Add.out");

    weft_apply_t *s;
    assert_non_null(s = weft_apply_create(f->g, f->split, 1, &x));
    assert_int_equal(weft_apply_default_output(s, &d), WEFT_EINVAL);
    weft_var_print(weft_apply_output(s, 1), buf, sizeof(buf));
    assert_string_equal(buf, "Split.1");
    assert_null(d = weft_op_call(f->g, f->split, 1, &x));
    assert_int_equal(weft_graph_error(f->g), WEFT_EINVAL);
    assert_non_null(strstr(weft_graph_error_message(f->g), "no default output"));
    weft_graph_clear_error(f->g);
    assert_non_null(d = weft_op_call(f->g, f->split_d, 1, &x));
    assert_int_equal(weft_var_index(d), 1);
}

static void test_graph_apply_errors_name_op_input_and_trace(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *i = NULL, *out = NULL;
    assert_non_null(i = weft_var_create(f->g, f->ivec, "iv"));
    int line = __LINE__ + 1;
    assert_null(out = weft_op_call(f->g, f->add, 1, &x));
    assert_int_equal(weft_graph_error(f->g), WEFT_EINVAL);
    weft_graph_clear_error(f->g);
    char want[128];
    snprintf(want, sizeof(want), "test_graph.c:%d: Add takes 2 inputs, got 1", line);
    assert_non_null(strstr(weft_graph_last_error(f->g), "apply of Add at "));
    assert_non_null(strstr(weft_graph_last_error(f->g), want));
    weft_var_t *in[2] = {x, i};
    assert_null(out = weft_op_call(f->g, f->add, 2, in));
    assert_int_equal(weft_graph_error(f->g), WEFT_ETYPE);
    assert_non_null(strstr(weft_graph_error_message(f->g), "input 1 type int32[?] vs float64[?]"));
    weft_graph_clear_error(f->g);
    int64_t s3 = 3, s4 = 4;
    const weft_type_t *t3, *t4;
    weft_type_tensor(f->g, WEFT_FLOAT64, 1, &s3, &t3);
    weft_type_tensor(f->g, WEFT_FLOAT64, 1, &s4, &t4);
    weft_var_t *a, *b;
    a = weft_var_create(f->g, t3, "a");
    b = weft_var_create(f->g, t4, "b");
    weft_var_t *ab[2] = {a, b};
    assert_null(out = weft_op_call(f->g, f->add, 2, ab));
    assert_int_equal(weft_graph_error(f->g), WEFT_ETYPE);
    weft_graph_clear_error(f->g);
    in[1] = NULL;
    assert_null(out = weft_op_call(f->g, f->add, 2, in));
    assert_int_equal(weft_graph_error(f->g), WEFT_EINVAL);
    weft_graph_clear_error(f->g);
    assert_null(out = weft_op_call(f->g, NULL, 2, in));
    assert_int_equal(weft_graph_error(f->g), WEFT_EINVAL);
    weft_graph_clear_error(f->g);
    assert_null(out);
}

static void test_graph_apply_of_foreign_variable_is_eforeign(void **state)
{
    fx_t *f = *state;
    weft_graph_t *g2;
    const weft_type_t *t2;
    const weft_op_t *neg2;
    weft_var_t *y, *out;
    assert_int_equal(weft_graph_create(NULL, &g2), WEFT_OK);
    weft_type_tensor(g2, WEFT_FLOAT64, 1, NULL, &t2);
    int line = __LINE__ + 1;
    y = weft_var_create(g2, t2, "other");
    assert_null(out = weft_op_call(f->g, f->neg, 1, &y));
    assert_int_equal(weft_graph_error(f->g), WEFT_EFOREIGN);
    weft_graph_clear_error(f->g);
    char want[64];
    snprintf(want, sizeof(want), "test_graph.c:%d", line);
    assert_non_null(strstr(weft_graph_last_error(f->g), "'other'"));
    assert_non_null(strstr(weft_graph_last_error(f->g), want));
    assert_int_equal(weft_op_create(g2, &fx_neg_class, NULL, &neg2), WEFT_OK);
    weft_var_t *x = fx_var(f, "x");
    assert_null(out = weft_op_call(f->g, neg2, 1, &x));
    assert_int_equal(weft_graph_error(f->g), WEFT_EFOREIGN);
    weft_graph_clear_error(f->g);
    weft_graph_destroy(g2);
}

static void test_graph_apply_describe_names_id_op_and_site(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *y;
    int line = __LINE__ + 1;
    assert_non_null(y = weft_op_call(f->g, f->exp, 1, &x));
    weft_apply_t *a = weft_var_owner(y);
    char buf[256], want[256];
    weft_apply_describe(a, buf, sizeof(buf));
    const char *file;
    int l;
    weft_apply_trace(a, &file, &l);
    assert_int_equal(l, line);
    snprintf(want, sizeof(want), "apply %llu (Exp, built at %s:%d)",
             (unsigned long long)weft_apply_id(a), file, line);
    assert_string_equal(buf, want);
}

static void test_graph_clone_get_equiv_maps_everything(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *o = fx_var(f, "orphan"), *c;
    assert_non_null(c = weft_constant_scalar(f->g, WEFT_FLOAT64, 2.0));
    weft_var_t *y = fx_bin(f, f->add, fx_un(f, f->exp, x), o);
    weft_var_t *z = fx_bin(f, f->mul, y, x);
    weft_clone_map_t *m;
    assert_int_equal(weft_graph_clone_get_equiv(f->g, 1, &x, 1, &z, true, false, &m), WEFT_OK);
    weft_var_t *x2 = weft_clone_map_var(m, x), *z2 = weft_clone_map_var(m, z);
    assert_non_null(x2);
    assert_ptr_not_equal(x2, x);
    assert_string_equal(weft_var_name(x2), "x");
    assert_ptr_equal(weft_clone_map_var(m, o), o); /* orphans kept without copy_orphans */
    assert_ptr_not_equal(z2, z);
    assert_ptr_equal(weft_apply_op(weft_var_owner(z2)), f->mul);
    assert_ptr_equal(weft_clone_map_apply(m, weft_var_owner(z)), weft_var_owner(z2));
    assert_ptr_equal(weft_apply_input(weft_var_owner(z2), 1), x2);
    bool eq;
    assert_int_equal(weft_graph_equal_computations(1, &z, &z2, 1, &x, &x2, &eq), WEFT_OK);
    assert_true(eq);
    assert_int_equal(weft_graph_equal_computations(1, &z, &z2, 0, NULL, NULL, &eq), WEFT_OK);
    assert_false(eq); /* x and x2 are different leaves */
    weft_clone_map_destroy(m);
    assert_int_equal(weft_graph_clone_get_equiv(f->g, 1, &x, 1, &z, false, true, &m), WEFT_OK);
    assert_ptr_equal(weft_clone_map_var(m, x), x);
    assert_ptr_not_equal(weft_clone_map_var(m, o), o);
    assert_null(weft_clone_map_var(m, c)); /* not in the subgraph */
    weft_clone_map_destroy(m);
    weft_clone_map_destroy(NULL);
}

static void test_graph_clone_keeps_constants(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *c;
    double d[3] = {1, 2, 3};
    assert_non_null(c = weft_constant_create(f->g, f->vec3, d, sizeof(d)));
    weft_var_t *z = fx_bin(f, f->add, x, c);
    weft_clone_map_t *m;
    assert_int_equal(weft_graph_clone_get_equiv(f->g, 1, &x, 1, &z, true, true, &m), WEFT_OK);
    assert_ptr_equal(weft_clone_map_var(m, c), c);
    weft_clone_map_destroy(m);
}

static void test_graph_clone_with_new_inputs_strict_and_rebuild(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *y = fx_var(f, "y"), *x3, *iv;
    assert_non_null(x3 = weft_var_create(f->g, f->vec3, "x3"));
    assert_non_null(iv = weft_var_create(f->g, f->ivec, "iv"));
    weft_apply_t *a = weft_var_owner(fx_bin(f, f->add, x, y)), *b;
    weft_var_t *in[2] = {y, x};
    assert_int_equal(weft_apply_clone_with_new_inputs(f->g, a, 2, in, true, &b), WEFT_OK);
    assert_ptr_equal(weft_apply_input(b, 0), y);
    assert_ptr_equal(weft_var_type(weft_apply_output(b, 0)), f->vec);
    in[0] = x3; /* narrower type: rebuilt through make_node, output narrowed */
    assert_int_equal(weft_apply_clone_with_new_inputs(f->g, a, 2, in, true, &b), WEFT_OK);
    assert_ptr_equal(weft_var_type(weft_apply_output(b, 0)), f->vec);
    in[1] = x3;
    assert_int_equal(weft_apply_clone_with_new_inputs(f->g, a, 2, in, true, &b), WEFT_OK);
    assert_ptr_equal(weft_var_type(weft_apply_output(b, 0)), f->vec3);
    in[0] = iv;
    assert_int_equal(weft_apply_clone_with_new_inputs(f->g, a, 2, in, true, &b), WEFT_ETYPE);
    assert_non_null(strstr(weft_graph_last_error(f->g), "'iv'"));
    assert_int_equal(weft_apply_clone_with_new_inputs(f->g, a, 2, in, false, &b), WEFT_ETYPE);
    assert_int_equal(weft_apply_clone_with_new_inputs(f->g, a, 1, in, true, &b), WEFT_EINVAL);
}

static void test_graph_equal_computations_ops_and_constants(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *c1, *c2, *c3;
    c1 = weft_constant_scalar(f->g, WEFT_FLOAT64, 2.0);
    c2 = weft_constant_scalar(f->g, WEFT_FLOAT64, 2.0);
    c3 = weft_constant_scalar(f->g, WEFT_FLOAT64, 3.0);
    weft_var_t *a = fx_un(f, f->exp, x), *b = fx_un(f, f->exp, x), *n = fx_un(f, f->neg, x);
    bool eq;
    assert_int_equal(weft_graph_equal_computations(1, &a, &b, 0, NULL, NULL, &eq), WEFT_OK);
    assert_true(eq);
    assert_int_equal(weft_graph_equal_computations(1, &a, &n, 0, NULL, NULL, &eq), WEFT_OK);
    assert_false(eq);
    assert_int_equal(weft_graph_equal_computations(1, &c1, &c2, 0, NULL, NULL, &eq), WEFT_OK);
    assert_true(eq);
    assert_int_equal(weft_graph_equal_computations(1, &c1, &c3, 0, NULL, NULL, &eq), WEFT_OK);
    assert_false(eq);
    assert_int_equal(weft_graph_equal_computations(1, &a, &x, 0, NULL, NULL, &eq), WEFT_OK);
    assert_false(eq);
    assert_int_equal(weft_graph_equal_computations(1, &a, NULL, 0, NULL, NULL, &eq), WEFT_EINVAL);
}

/* A chain far deeper than any C stack could recurse: clone and compare must
 * be iterative. */
static void test_graph_deep_chain_clone_is_iterative(void **state)
{
    fx_t *f = *state;
#ifdef WEFT_SANITIZED
    const size_t n = 100000;
#else
    const size_t n = 400000;
#endif
    weft_var_t *x = fx_var(f, "x"), *y = x;
    for (size_t k = 0; k < n; k++) y = fx_un(f, (k & 1) ? f->neg : f->exp, y);
    weft_clone_map_t *m;
    assert_int_equal(weft_graph_clone_get_equiv(f->g, 1, &x, 1, &y, true, false, &m), WEFT_OK);
    weft_var_t *x2 = weft_clone_map_var(m, x), *y2 = weft_clone_map_var(m, y);
    bool eq;
    assert_int_equal(weft_graph_equal_computations(1, &y, &y2, 1, &x, &x2, &eq), WEFT_OK);
    assert_true(eq);
    weft_clone_map_destroy(m);
}

static void test_graph_clone_bad_arguments(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x");
    weft_clone_map_t *m = (weft_clone_map_t *)1;
    assert_int_equal(weft_graph_clone_get_equiv(NULL, 1, &x, 1, &x, true, true, &m), WEFT_EINVAL);
    assert_int_equal(weft_graph_clone_get_equiv(f->g, 1, NULL, 1, &x, true, true, &m), WEFT_EINVAL);
    weft_graph_t *g2;
    const weft_type_t *t2;
    weft_var_t *y;
    weft_graph_create(NULL, &g2);
    weft_type_tensor(g2, WEFT_FLOAT64, 1, NULL, &t2);
    y = weft_var_create(g2, t2, "y");
    assert_int_equal(weft_graph_clone_get_equiv(f->g, 1, &x, 1, &y, true, true, &m), WEFT_EFOREIGN);
    assert_null(m);
    weft_graph_destroy(g2);
    weft_graph_destroy(NULL);
    assert_int_equal(weft_graph_create(NULL, NULL), WEFT_EINVAL);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_graph_var_fields_trace_and_ids),
        T(test_graph_var_bad_arguments),
        T(test_graph_constant_value_equality_and_hash),
        T(test_graph_constant_scalar_and_bad_input),
        T(test_graph_apply_outputs_owner_and_default_output),
        T(test_graph_apply_errors_name_op_input_and_trace),
        T(test_graph_apply_of_foreign_variable_is_eforeign),
        T(test_graph_apply_describe_names_id_op_and_site),
        T(test_graph_clone_get_equiv_maps_everything),
        T(test_graph_clone_keeps_constants),
        T(test_graph_clone_with_new_inputs_strict_and_rebuild),
        T(test_graph_equal_computations_ops_and_constants),
        T(test_graph_deep_chain_clone_is_iterative),
        T(test_graph_clone_bad_arguments),
    };
    return cmocka_run_group_tests_name("graph", tests, NULL, NULL);
}
