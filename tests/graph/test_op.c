/* Ops: the documented user-defined op example (referenced from weft/op.h),
 * equality and hashing by props, printing, cached aliasing maps, hooks, and
 * the bad-class statuses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "graph_fixture.h"

/* ==== User-defined op example =================================================
 * Scale{factor, inplace}: y = factor * x for floating-point x. Everything an
 * op author outside weft writes is below: a props struct, the hooks, and one
 * static const class object. Props are copied by weft_op_create, so the struct
 * must be self-contained (or release what it owns in props_fini). */
typedef struct scale_props {
    double factor;
    int inplace; /* 1: overwrite the input (destroy_map {0: 0}) */
} scale_props_t;

static bool scale_props_equal(const void *a, const void *b)
{
    const scale_props_t *p = a, *q = b;
    return p->factor == q->factor && p->inplace == q->inplace;
}

static uint64_t scale_props_hash(const void *props)
{
    const scale_props_t *p = props;
    uint64_t bits;
    double f = p->factor == 0.0 ? 0.0 : p->factor; /* -0.0 == 0.0 must hash alike */
    memcpy(&bits, &f, sizeof(bits));
    return bits * 31u + (uint64_t)p->inplace;
}

static int scale_props_print(const void *props, char *buf, size_t cap)
{
    const scale_props_t *p = props;
    return snprintf(buf, cap, "factor=%g%s", p->factor, p->inplace ? ", inplace" : "");
}

/* Type checking: one floating-point input; the output has the input's type. */
static weft_status_t scale_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                     weft_var_t *const *inputs, size_t *n_out,
                                     const weft_type_t **out_types)
{
    (void)op;
    if (n_in != 1)
        return weft_graph_set_error(g, WEFT_EINVAL, "Scale takes 1 input, got %zu", n_in);
    const weft_type_t *t = weft_var_type(inputs[0]);
    weft_dtype_t d = weft_type_dtype(t);
    if (weft_type_kind(t) != WEFT_TYPE_TENSOR || (d != WEFT_FLOAT32 && d != WEFT_FLOAT64)) {
        char tb[64], vb[64];
        weft_type_print(t, tb, sizeof(tb));
        weft_var_print(inputs[0], vb, sizeof(vb));
        return weft_graph_set_error(g, WEFT_ETYPE, "input 0 '%s' has type %s, want a float", vb,
                                    tb);
    }
    *n_out = 1;
    out_types[0] = t;
    return WEFT_OK;
}

static size_t scale_destroy_map(const weft_op_t *op, weft_op_alias_t *out, size_t cap)
{
    const scale_props_t *p = weft_op_props(op);
    if (!p->inplace || cap < 1) return 0;
    out[0] = (weft_op_alias_t){.output = 0, .input = 0};
    return 1;
}

/* An in-place node must not be folded at compile time (it would overwrite a constant). */
static bool scale_do_constant_folding(const weft_apply_t *node)
{
    const scale_props_t *p = weft_op_props(weft_apply_op(node));
    return !p->inplace;
}

/* d cost / dx = factor * d cost / dy: build Scale{factor}(gy) in g. */
static weft_status_t scale_grad(weft_graph_t *g, const weft_apply_t *node,
                                weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    if (!output_grads[0]) { /* the output does not reach the cost */
        input_grads[0] = NULL;
        return WEFT_OK;
    }
    scale_props_t p = *(const scale_props_t *)weft_op_props(weft_apply_op(node));
    p.inplace = 0;
    extern const weft_op_class_t scale_class;
    const weft_op_t *op;
    weft_status_t s = weft_op_create(g, &scale_class, &p, &op);
    if (s != WEFT_OK) return s;
    return ((input_grads[0] = weft_op_call(g, op, 1, &output_grads[0])) ? WEFT_OK
                                                                        : weft_graph_error(g));
}

static weft_status_t scale_inplace_variant(weft_graph_t *g, const weft_op_t *op, size_t input,
                                           const weft_op_t **out)
{
    extern const weft_op_class_t scale_class;
    if (input != 0) return WEFT_ENOTIMPL;
    scale_props_t p = *(const scale_props_t *)weft_op_props(op);
    p.inplace = 1;
    return weft_op_create(g, &scale_class, &p, out);
}

const weft_op_class_t scale_class = {
    .size = sizeof(weft_op_class_t),
    .name = "Scale",
    .props_size = sizeof(scale_props_t),
    .props_equal = scale_props_equal,
    .props_hash = scale_props_hash,
    .props_print = scale_props_print,
    .make_node = scale_make_node,
    .perform = NULL, /* kernels come with weft/tensor.h; this op is graph-only */
    .destroy_map = scale_destroy_map,
    .do_constant_folding = scale_do_constant_folding,
    .grad = scale_grad,
    .inplace_variant = scale_inplace_variant,
};
/* ==== end of the example ===================================================== */

static const weft_op_t *scale(fx_t *f, double factor, int inplace)
{
    scale_props_t p = {factor, inplace};
    const weft_op_t *op = NULL;
    assert_int_equal(weft_op_create(f->g, &scale_class, &p, &op), WEFT_OK);
    return op;
}

static void test_op_user_defined_example_builds_and_type_checks(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *y, *iv;
    const weft_op_t *s = scale(f, 2.5, 0);
    assert_non_null(y = weft_op_call(f->g, s, 1, &x));
    assert_ptr_equal(weft_var_type(y), f->vec);
    char buf[128];
    weft_apply_print(weft_var_owner(y), buf, sizeof(buf));
    assert_string_equal(buf, "Scale{factor=2.5}(x)");
    assert_non_null(iv = weft_var_create(f->g, f->ivec, "iv"));
    int line = __LINE__ + 1;
    assert_null(y = weft_op_call(f->g, s, 1, &iv));
    assert_int_equal(weft_graph_error(f->g), WEFT_ETYPE);
    weft_graph_clear_error(f->g);
    char want[160];
    snprintf(want, sizeof(want), "test_op.c:%d: input 0 'iv' has type int32[?], want a float",
             line);
    assert_non_null(strstr(weft_graph_last_error(f->g), "apply of Scale at "));
    assert_non_null(strstr(weft_graph_last_error(f->g), want));
    weft_var_t *two[2] = {x, x};
    assert_null(y = weft_op_call(f->g, s, 2, two));
    assert_int_equal(weft_graph_error(f->g), WEFT_EINVAL);
    assert_non_null(strstr(weft_graph_error_message(f->g), "Scale takes 1 input, got 2"));
    weft_graph_clear_error(f->g);
}

static void test_op_equality_and_hash_follow_props(void **state)
{
    fx_t *f = *state;
    const weft_op_t *a = scale(f, 2.0, 0), *b = scale(f, 2.0, 0), *c = scale(f, 3.0, 0);
    const weft_op_t *d = scale(f, 0.0, 0), *e = scale(f, -0.0, 0);
    assert_ptr_not_equal(a, b);
    assert_true(weft_op_equal(a, b));
    assert_int_equal(weft_op_hash(a), weft_op_hash(b));
    assert_false(weft_op_equal(a, c));
    assert_true(weft_op_equal(d, e));
    assert_int_equal(weft_op_hash(d), weft_op_hash(e));
    assert_false(weft_op_equal(f->add, f->mul)); /* different classes, no props */
    const weft_op_t *add2;
    assert_int_equal(weft_op_create(f->g, &fx_add_class, NULL, &add2), WEFT_OK);
    assert_true(weft_op_equal(f->add, add2));
    weft_graph_t *g2;
    const weft_op_t *a2;
    scale_props_t p = {2.0, 0};
    assert_int_equal(weft_graph_create(NULL, &g2), WEFT_OK);
    assert_int_equal(weft_op_create(g2, &scale_class, &p, &a2), WEFT_OK);
    assert_true(weft_op_equal(a, a2)); /* by value across contexts */
    assert_int_equal(weft_op_hash(a), weft_op_hash(a2));
    weft_graph_destroy(g2);
    assert_string_equal(weft_op_name(a), "Scale");
    assert_ptr_equal(weft_op_class(a), &scale_class);
    assert_true(((const scale_props_t *)weft_op_props(c))->factor == 3.0);
}

static void test_op_print_with_and_without_props(void **state)
{
    fx_t *f = *state;
    char buf[64];
    weft_op_print(scale(f, 0.5, 1), buf, sizeof(buf));
    assert_string_equal(buf, "Scale{factor=0.5, inplace}");
    weft_op_print(f->add, buf, sizeof(buf));
    assert_string_equal(buf, "Add");
}

static void test_op_alias_maps_are_cached(void **state)
{
    fx_t *f = *state;
    const weft_op_alias_t *e;
    size_t n;
    const weft_op_t *ip = scale(f, 2.0, 1), *np = scale(f, 2.0, 0);
    weft_op_destroy_map(ip, &e, &n);
    assert_int_equal(n, 1);
    assert_int_equal(e[0].output, 0);
    assert_int_equal(e[0].input, 0);
    assert_true(weft_op_is_destructive(ip));
    assert_false(weft_op_is_view(ip));
    weft_op_destroy_map(np, &e, &n);
    assert_int_equal(n, 0);
    assert_false(weft_op_is_destructive(np));
    weft_op_view_map(f->view, &e, &n);
    assert_int_equal(n, 1);
    assert_true(weft_op_is_view(f->view));
    weft_op_tolerate_same(f->view, &e, &n);
    assert_int_equal(n, 0);
    weft_op_tolerate_aliased(f->view, &e, &n);
    assert_int_equal(n, 0);
    assert_int_equal(weft_op_default_output(f->split_d), 1);
    assert_int_equal(weft_op_default_output(f->add), -1);
}

static void test_op_hooks_grad_folding_and_inplace_variant(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *gy = fx_var(f, "gy"), *y, *gx = NULL;
    const weft_op_t *s = scale(f, 4.0, 0), *ip;
    assert_non_null(y = weft_op_call(f->g, s, 1, &x));
    weft_apply_t *node = weft_var_owner(y);
    const weft_op_class_t *cls = weft_op_class(s);
    assert_true(cls->do_constant_folding(node));
    assert_int_equal(cls->grad(f->g, node, &gy, &gx), WEFT_OK);
    assert_non_null(gx);
    char buf[64];
    weft_apply_print(weft_var_owner(gx), buf, sizeof(buf));
    assert_string_equal(buf, "Scale{factor=4}(gy)");
    weft_var_t *none = NULL;
    assert_int_equal(cls->grad(f->g, node, &none, &gx), WEFT_OK);
    assert_null(gx);
    assert_int_equal(cls->inplace_variant(f->g, s, 0, &ip), WEFT_OK);
    assert_true(weft_op_is_destructive(ip));
    assert_int_equal(cls->inplace_variant(f->g, s, 1, &ip), WEFT_ENOTIMPL);
}

/* Props that own memory: released by props_fini when the context dies. */
typedef struct label_props {
    char *label;
} label_props_t;

static int label_fini_calls;

static void label_fini(void *props)
{
    free(((label_props_t *)props)->label);
    label_fini_calls++;
}

static const weft_op_class_t label_class = {
    .size = sizeof(weft_op_class_t),
    .name = "Label",
    .props_size = sizeof(label_props_t),
    .props_fini = label_fini,
    .make_node = scale_make_node,
};

static void test_op_props_fini_runs_at_context_destroy(void **state)
{
    (void)state;
    weft_graph_t *g;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    label_fini_calls = 0;
    for (int k = 0; k < 3; k++) {
        label_props_t p = {malloc(16)};
        const weft_op_t *op;
        assert_int_equal(weft_op_create(g, &label_class, &p, &op), WEFT_OK);
    }
    weft_graph_destroy(g);
    assert_int_equal(label_fini_calls, 3);
}

static weft_status_t bad_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                   weft_var_t *const *in, size_t *n_out, const weft_type_t **out)
{
    (void)g;
    (void)op;
    (void)n_in;
    (void)in;
    (void)out;
    *n_out = 0; /* a buggy op: no outputs */
    return WEFT_OK;
}

static size_t bad_map(const weft_op_t *op, weft_op_alias_t *out, size_t cap)
{
    (void)op;
    (void)cap;
    out[0] = (weft_op_alias_t){WEFT_OP_MAX_OUTPUTS, 0};
    return 1;
}

static void test_op_bad_classes_are_einval(void **state)
{
    fx_t *f = *state;
    const weft_op_t *op = (const weft_op_t *)1;
    static weft_op_class_t c; /* classes must outlive the context */
    c = (weft_op_class_t){.size = sizeof(c), .name = "X", .make_node = NULL};
    assert_int_equal(weft_op_create(f->g, &c, NULL, &op), WEFT_EINVAL);
    assert_null(op);
    c.make_node = bad_make_node;
    c.name = NULL;
    assert_int_equal(weft_op_create(f->g, &c, NULL, &op), WEFT_EINVAL);
    c.name = "X";
    c.size = 8;
    assert_int_equal(weft_op_create(f->g, &c, NULL, &op), WEFT_EINVAL);
    c.size = sizeof(c);
    c.props_size = 8;
    assert_int_equal(weft_op_create(f->g, &c, NULL, &op), WEFT_EINVAL);
    c.props_size = 0;
    c.view_map = bad_map;
    assert_int_equal(weft_op_create(f->g, &c, NULL, &op), WEFT_EINVAL);
    assert_non_null(strstr(weft_graph_last_error(f->g), "op X"));
    c.view_map = NULL;
    assert_int_equal(weft_op_create(f->g, &c, NULL, &op), WEFT_OK);
    weft_var_t *x = fx_var(f, "x"), *y;
    assert_null(y = weft_op_call(f->g, op, 1, &x));
    assert_int_equal(weft_graph_error(f->g), WEFT_EINVAL);
    assert_non_null(strstr(weft_graph_error_message(f->g), "make_node gave 0 outputs"));
    weft_graph_clear_error(f->g);
    assert_int_equal(weft_op_create(NULL, &c, NULL, &op), WEFT_EINVAL);
    assert_int_equal(weft_op_create(f->g, NULL, NULL, &op), WEFT_EINVAL);
}

/* An author's class compiled against an older, shorter weft_op_class_t:
 * hooks beyond its size are never read. */
static void test_op_short_class_size_hides_later_hooks(void **state)
{
    fx_t *f = *state;
    static weft_op_class_t c; /* classes must outlive the context */
    c = scale_class;
    c.size = offsetof(weft_op_class_t, perform);
    const weft_op_t *op;
    scale_props_t p = {1.0, 1};
    assert_int_equal(weft_op_create(f->g, &c, &p, &op), WEFT_OK);
    assert_false(weft_op_is_destructive(op)); /* destroy_map lies beyond size */
    char buf[64];
    weft_op_print(op, buf, sizeof(buf));
    assert_string_equal(buf, "Scale{factor=1, inplace}");
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_op_user_defined_example_builds_and_type_checks),
        T(test_op_equality_and_hash_follow_props),
        T(test_op_print_with_and_without_props),
        T(test_op_alias_maps_are_cached),
        T(test_op_hooks_grad_folding_and_inplace_variant),
        T(test_op_props_fini_runs_at_context_destroy),
        T(test_op_bad_classes_are_einval),
        T(test_op_short_class_size_hides_later_hooks),
    };
    return cmocka_run_group_tests_name("op", tests, NULL, NULL);
}
