/* Critical path first (weft_function_options_t.critical_path_first,
 * docs/execution.md §3.4.2) and the op class's cost_ns hook
 * (weft/node_cost.h): a one-worker function runs the node with the longest
 * path of estimated cost below it first, a hook's answer replaces the
 * size-based estimate (a negative one keeps it), and results are the same
 * bits with or without the option, at 1, 2 and 4 workers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "weft/weft.h"

/* "Step": y = x + 1, costing props.cost_ns, logging props.tag when it runs. */
typedef struct step_props {
    double cost_ns;
    int32_t tag;
    int32_t pad;
} step_props_t;

static int step_log[16], step_n;

static weft_status_t step_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                    weft_var_t *const *in, size_t *n_out,
                                    const weft_type_t **out_types)
{
    (void)op;
    if (n_in != 1) return weft_graph_set_error(g, WEFT_EINVAL, "Step takes 1 input");
    *n_out = 1;
    out_types[0] = weft_var_type(in[0]);
    return WEFT_OK;
}

static weft_status_t step_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                  weft_tensor_t **out, weft_kernel_ctx_t *ctx)
{
    const step_props_t *p = weft_op_props(weft_apply_op(node));
    int64_t len = weft_tensor_dim(in[0], 0);
    weft_status_t st = weft_kernel_alloc_output(ctx, &out[0], WEFT_FLOAT64, 1, &len);
    if (st != WEFT_OK) return st;
    const double *x = weft_tensor_data(in[0]);
    double *y = weft_tensor_data(out[0]);
    for (int64_t i = 0; i < len; i++) y[i] = x[i] + 1.0;
    if (step_n < 16) step_log[step_n++] = p->tag; /* one worker in the order tests */
    return WEFT_OK;
}

static double step_cost_ns(const weft_apply_t *node)
{
    return ((const step_props_t *)weft_op_props(weft_apply_op(node)))->cost_ns;
}

static const weft_op_class_t step_class = {
    .size = sizeof(weft_op_class_t),
    .name = "Step",
    .props_size = sizeof(step_props_t),
    .make_node = step_make_node,
    .perform = step_perform,
    .cost_ns = step_cost_ns,
};

static weft_var_t *step(weft_graph_t *g, weft_var_t *x, double cost_ns, int tag)
{
    step_props_t p = {cost_ns, tag, 0};
    const weft_op_t *op;
    assert_int_equal(weft_op_create(g, &step_class, &p, &op), WEFT_OK);
    return weft_op_call(g, op, 1, &x);
}

/* x -> a1 -> a2 (cheap, built first) and x -> b1 -> b2 -> b3 (costly). */
typedef struct two_chains {
    weft_graph_t *g;
    weft_var_t *x, *out[2];
    const weft_apply_t *b1;
} two_chains_t;

static void build(two_chains_t *t)
{
    assert_int_equal(weft_graph_create(NULL, &t->g), WEFT_OK);
    int64_t len = 4;
    const weft_type_t *ty;
    assert_int_equal(weft_type_tensor(t->g, WEFT_FLOAT64, 1, &len, &ty), WEFT_OK);
    t->x = weft_var_create(t->g, ty, "x");
    t->out[0] = step(t->g, step(t->g, t->x, 10, 1), 10, 2);
    weft_var_t *b1 = step(t->g, t->x, 5000, 3);
    t->b1 = weft_var_owner(b1);
    t->out[1] = step(t->g, step(t->g, b1, 5000, 4), 5000, 5);
    assert_non_null(t->out[1]);
}

static void run_order(bool cpf, const int *want)
{
    two_chains_t t;
    build(&t);
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.threads = 1;
    o.critical_path_first = cpf;
    weft_function_t *f;
    assert_int_equal(weft_function_compile(1, &t.x, 2, t.out, 0, NULL, &o, &f), WEFT_OK);
    int64_t len = 4;
    weft_tensor_t *x, *y[2] = {NULL, NULL};
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, 1, &len, &x), WEFT_OK);
    memset(weft_tensor_data(x), 0, 4 * sizeof(double));
    step_n = 0;
    assert_int_equal(weft_function_call(f, 1, &x, 2, y), WEFT_OK);
    assert_int_equal(step_n, 5);
    for (int i = 0; i < 5; i++) assert_int_equal(step_log[i], want[i]);
    assert_true(((double *)weft_tensor_data(y[0]))[3] == 2.0);
    assert_true(((double *)weft_tensor_data(y[1]))[3] == 3.0);
    weft_tensor_release(x);
    weft_tensor_release(y[0]);
    weft_tensor_release(y[1]);
    weft_function_destroy(f);
    weft_graph_destroy(t.g);
}

static void longest_path_runs_first(void **state)
{
    (void)state;
    static const int costly_first[5] = {3, 4, 5, 1, 2};
    run_order(true, costly_first);
}

static void default_order_is_depth_first(void **state)
{
    (void)state;
    /* without the option: the layout replay, the first-built chain first */
    static const int built_first[5] = {1, 2, 3, 4, 5};
    run_order(false, built_first);
}

static void hook_replaces_the_estimate(void **state)
{
    (void)state;
    two_chains_t t;
    build(&t);
    assert_true(weft_node_cost_estimate(t.b1) == 5000.0);
    /* a negative answer: the size-based estimate (100 per node + 4 elements) */
    weft_var_t *neg = step(t.g, t.x, -1, 6);
    assert_true(weft_node_cost_estimate(weft_var_owner(neg)) == 104.0);
    weft_graph_destroy(t.g);
}

/* A wider graph of Adds and Muls: the same bits with and without the option. */
static void same_bits_any_workers(void **state)
{
    (void)state;
    weft_graph_t *g;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    int64_t len = 1000;
    const weft_type_t *ty;
    assert_int_equal(weft_type_tensor(g, WEFT_FLOAT64, 1, &len, &ty), WEFT_OK);
    weft_var_t *x = weft_var_create(g, ty, "x"), *v[24];
    for (int i = 0; i < 24; i++) {
        weft_var_t *a = i < 2 ? x : v[i - 1 - i % 2], *b = i < 3 ? x : v[i / 3];
        v[i] = i % 3 ? weft_add(g, weft_tanh(g, a), b) : weft_mul(g, a, weft_exp(g, b));
    }
    weft_tensor_t *xt, *want = NULL;
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, 1, &len, &xt), WEFT_OK);
    for (int i = 0; i < len; i++) ((double *)weft_tensor_data(xt))[i] = 1e-3 * (i % 97) - 0.05;
    for (int threads = 1; threads <= 4; threads *= 2)
        for (int cpf = 0; cpf < 2; cpf++) {
            weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
            o.threads = threads;
            o.critical_path_first = cpf;
            weft_function_t *f;
            assert_int_equal(weft_function_compile(1, &x, 1, &v[23], 0, NULL, &o, &f), WEFT_OK);
            for (int rep = 0; rep < 3; rep++) {
                weft_tensor_t *y = NULL;
                assert_int_equal(weft_function_call(f, 1, &xt, 1, &y), WEFT_OK);
                if (!want)
                    want = y;
                else {
                    assert_memory_equal(weft_tensor_data(y), weft_tensor_data(want),
                                        (size_t)len * sizeof(double));
                    weft_tensor_release(y);
                }
            }
            weft_function_destroy(f);
        }
    weft_tensor_release(want);
    weft_tensor_release(xt);
    weft_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(longest_path_runs_first),
        cmocka_unit_test(default_order_is_depth_first),
        cmocka_unit_test(hook_replaces_the_estimate),
        cmocka_unit_test(same_bits_any_workers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
