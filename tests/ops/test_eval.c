/* The sequential reference evaluator: order and single execution of shared
 * nodes, constants, outputs that are inputs, every documented error (with
 * the node named), kernel errors and mistyped kernel outputs; and the op
 * registry by name. */
#include "ops_fixture.h"
#include "weft/kernel.h"
#include "weft/ops.h"

/* A test op: y = x (a copy) counting its runs; props select a misbehaviour. */
typedef struct probe_props {
    int32_t mode; /* 0 copy, 1 fail, 2 wrong shape, 3 leave empty, 4 error but OK */
} probe_props_t;

static int g_runs;

static weft_status_t probe_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                     weft_var_t *const *in, size_t *n_out,
                                     const weft_type_t **out)
{
    (void)g;
    (void)op;
    (void)n_in;
    *n_out = 1;
    out[0] = weft_var_type(in[0]);
    return WEFT_OK;
}

static weft_status_t probe_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                   weft_tensor_t **out, weft_kernel_ctx_t *ctx)
{
    const probe_props_t *p = weft_op_props(weft_apply_op(node));
    g_runs++;
    if (p->mode == 1) return weft_kernel_error(ctx, WEFT_ERANGE, "value %d too large", 42);
    if (p->mode == 3) return WEFT_OK;
    if (p->mode == 4) {
        weft_kernel_error(ctx, WEFT_ENAN, "NaN produced");
        return WEFT_OK;
    }
    int64_t shape[1] = {weft_tensor_dim(in[0], 0) + (p->mode == 2)};
    weft_status_t st = weft_kernel_alloc_output(ctx, &out[0], weft_tensor_dtype(in[0]), 1, shape);
    if (st == WEFT_OK && p->mode == 0) weft_tensor_copy(out[0], in[0]);
    if (st == WEFT_OK && p->mode == 2) weft_tensor_fill(out[0], 0);
    return st;
}

static const weft_op_class_t probe_class = {
    .size = sizeof(weft_op_class_t),
    .name = "Probe",
    .props_size = sizeof(probe_props_t),
    .make_node = probe_make_node,
    .perform = probe_perform,
};

static const weft_op_class_t noperform_class = {
    .size = sizeof(weft_op_class_t),
    .name = "NoPerform",
    .make_node = probe_make_node,
};

static weft_var_t *probe(weft_graph_t *g, weft_var_t *x, int mode)
{
    probe_props_t p = {mode};
    const weft_op_t *op;
    weft_var_t *y;
    assert_int_equal(weft_op_create(g, &probe_class, &p, &op), WEFT_OK);
    assert_non_null(y = weft_op_call(g, op, 1, &x));
    return y;
}

static const int64_t S3[1] = {3};

static void test_eval_shared_node_runs_once_and_constants_evaluate(void **state)
{
    weft_graph_t *g = *state;
    weft_var_t *x = fx_var(g, WEFT_FLOAT64, 1, S3), *p = probe(g, x, 0), *c, *a, *b;
    assert_non_null(
        c = weft_constant_create(g, weft_var_type(x), ((double[]){1, 2, 3}), 3 * sizeof(double)));
    assert_non_null(a = weft_add(g, p, c));
    assert_non_null(b = weft_mul(g, p, p));
    weft_tensor_t *v = fx_tensor(WEFT_FLOAT64, 1, S3, (double[]){10, 20, 30}), *r[3];
    weft_var_t *outs[3] = {a, b, x};
    g_runs = 0;
    assert_int_equal(weft_eval(g, 1, &x, &v, 3, outs, r), WEFT_OK);
    assert_int_equal(g_runs, 1);
    fx_expect(r[0], (double[]){11, 22, 33}, 3, 0);
    fx_expect(r[1], (double[]){100, 400, 900}, 3, 0);
    assert_ptr_equal(r[2], v); /* an output that is an input: that tensor, retained */
    assert_int_equal(weft_tensor_refcount(v), 2);
    for (int k = 0; k < 3; k++) weft_tensor_release(r[k]);
    weft_tensor_release(v);
    weft_var_t *only_const;
    assert_non_null(only_const = weft_neg(g, c));
    assert_int_equal(weft_eval(g, 0, NULL, NULL, 1, &only_const, r), WEFT_OK);
    fx_expect(r[0], (double[]){-1, -2, -3}, 3, 0);
    weft_tensor_release(r[0]);
}

static void test_eval_argument_errors_return_exact_statuses(void **state)
{
    weft_graph_t *g = *state, *g2;
    weft_var_t *x = fx_var(g, WEFT_FLOAT64, 1, S3), *z = fx_var(g, WEFT_FLOAT64, 1, S3), *y, *w;
    assert_int_equal(weft_var_set_name(z, "zed"), WEFT_OK);
    assert_non_null(y = weft_add(g, x, z));
    weft_tensor_t *v = fx_tensor(WEFT_FLOAT64, 1, S3, (double[]){1, 2, 3}), *r = (weft_tensor_t *)1;
    weft_var_t *dup[2] = {x, x};
    weft_tensor_t *dupv[2] = {v, v};
    assert_int_equal(weft_eval(NULL, 1, &x, &v, 1, &y, &r), WEFT_EINVAL);
    assert_null(r);
    assert_int_equal(weft_eval(g, 1, &x, &v, 0, &y, &r), WEFT_EINVAL);
    assert_int_equal(weft_eval(g, 1, &x, NULL, 1, &y, &r), WEFT_EINVAL);
    fx_expect_status(g, weft_eval(g, 1, &x, &v, 1, &y, &r), WEFT_EMISSING_INPUT,
                     "(zed, created at");
    fx_expect_status(g, weft_eval(g, 2, dup, dupv, 1, &y, &r), WEFT_EINVAL, "listed twice");
    fx_expect_status(g, weft_eval(g, 1, &y, &v, 1, &y, &r), WEFT_EINVAL, "has an owner");
    weft_tensor_t *f32 = fx_tensor(WEFT_FLOAT32, 1, S3, (double[]){1, 2, 3});
    weft_tensor_t *f4 = fx_tensor(WEFT_FLOAT64, 1, (int64_t[]){4}, (double[]){1, 2, 3, 4});
    fx_expect_status(g, weft_eval(g, 1, &x, &f32, 1, &x, &r), WEFT_ETYPE,
                     "value float32[3] does not match type float64[3]");
    fx_expect_status(g, weft_eval(g, 1, &x, &f4, 1, &x, &r), WEFT_ESHAPE,
                     "value float64[4] does not match type float64[3]");
    assert_int_equal(weft_graph_create(NULL, &g2), WEFT_OK);
    w = fx_var(g2, WEFT_FLOAT64, 1, S3);
    assert_int_equal(weft_eval(g, 1, &w, &v, 1, &w, &r), WEFT_EFOREIGN);
    weft_graph_destroy(g2);
    const weft_type_t *nt;
    weft_var_t *nv;
    weft_type_null(g, &nt);
    nv = weft_var_create(g, nt, NULL);
    fx_expect_status(g, weft_eval(g, 0, NULL, NULL, 1, &nv, &r), WEFT_EINVAL,
                     "null or disconnected type");
    weft_tensor_release(f32);
    weft_tensor_release(f4);
    weft_tensor_release(v);
}

static void test_eval_kernel_errors_name_the_node(void **state)
{
    weft_graph_t *g = *state;
    weft_var_t *x = fx_var(g, WEFT_FLOAT64, 1, S3), *y, *r2;
    weft_tensor_t *v = fx_tensor(WEFT_FLOAT64, 1, S3, (double[]){1, 2, 3}), *r = NULL;
    y = probe(g, x, 1);
    assert_non_null(r2 = weft_exp(g, y));
    fx_expect_status(g, weft_eval(g, 1, &x, &v, 1, &r2, &r), WEFT_ERANGE, "value 42 too large");
    assert_non_null(strstr(weft_graph_last_error(g), "(Probe"));
    assert_non_null(strstr(weft_graph_last_error(g), "test_eval.c"));
    assert_null(r);
    y = probe(g, x, 2);
    fx_expect_status(g, weft_eval(g, 1, &x, &v, 1, &y, &r), WEFT_ESHAPE,
                     "output 0: value float64[4] does not match type float64[3]");
    y = probe(g, x, 3);
    fx_expect_status(g, weft_eval(g, 1, &x, &v, 1, &y, &r), WEFT_EINVAL,
                     "perform left output 0 empty");
    y = probe(g, x, 4);
    fx_expect_status(g, weft_eval(g, 1, &x, &v, 1, &y, &r), WEFT_ENAN, "NaN produced");
    const weft_op_t *op;
    assert_int_equal(weft_op_create(g, &noperform_class, NULL, &op), WEFT_OK);
    assert_non_null(y = weft_op_call(g, op, 1, &x));
    fx_expect_status(g, weft_eval(g, 1, &x, &v, 1, &y, &r), WEFT_ENOTIMPL, "no perform hook");
    weft_tensor_release(v);
}

static void test_eval_destroy_op_overwrites_the_callers_input(void **state)
{
    weft_graph_t *g = *state;
    weft_var_t *x = fx_var(g, WEFT_FLOAT64, 1, S3), *y;
    const weft_op_t *op;
    assert_int_equal(weft_elemwise_op(g, WEFT_ELEMWISE_SQR, 0, WEFT_BOOL, &op), WEFT_OK);
    assert_non_null(y = weft_op_call(g, op, 1, &x));
    weft_tensor_t *v = fx_tensor(WEFT_FLOAT64, 1, S3, (double[]){1, 2, 3}), *r;
    assert_int_equal(weft_eval(g, 1, &x, &v, 1, &y, &r), WEFT_OK);
    fx_expect(v, (double[]){1, 4, 9}, 3, 0);
    assert_ptr_equal(r, v);
    weft_tensor_release(r);
    weft_tensor_release(v);
}

static void test_eval_registry_finds_every_class_by_name(void **state)
{
    (void)state;
    assert_true(weft_ops_n_classes() >= WEFT_ELEMWISE_KIND_COUNT + 6);
    for (size_t i = 0; i < weft_ops_n_classes(); i++) {
        const weft_op_class_t *c = weft_ops_class_at(i);
        assert_non_null(c);
        assert_ptr_equal(weft_ops_find_class(c->name), c);
    }
    assert_string_equal(weft_ops_find_class("Add")->name, "Add");
    assert_string_equal(weft_ops_find_class("IncSubtensor")->name, "IncSubtensor");
    assert_non_null(weft_ops_find_class("DimShuffle"));
    assert_non_null(weft_ops_find_class("SumAxes"));
    assert_null(weft_ops_find_class("add"));
    assert_null(weft_ops_find_class(NULL));
    assert_null(weft_ops_class_at(weft_ops_n_classes()));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)
        T(test_eval_shared_node_runs_once_and_constants_evaluate),
        T(test_eval_argument_errors_return_exact_statuses),
        T(test_eval_kernel_errors_name_the_node),
        T(test_eval_destroy_op_overwrites_the_callers_input),
        T(test_eval_registry_finds_every_class_by_name),
#undef T
    };
    return cmocka_run_group_tests_name("eval", tests, NULL, NULL);
}
