/* weft_kernel_defer (weft/kernel.h): in a function compiled with
 * deferrable_nodes a kernel defers its node, another thread fills its output
 * and completes it, and the node's reader sees the value (one worker and
 * two); without deferrable_nodes the call fails with WEFT_ESTATE and a
 * message naming the option. */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "weft/custom_op.h"
#include "weft/elemwise.h"
#include "weft/function.h"

typedef struct late {
    weft_dag_deferred_t node;
    double *out;
    double value;
    pthread_t th;
} late_t;

static void *finish_later(void *arg)
{
    late_t *l = arg;
    *l->out = l->value;
    return (void *)(intptr_t)weft_dag_run_complete(&l->node, WEFT_OK);
}

/* out = 2 x, written by a thread started here after the node deferred. */
static weft_status_t doubles_later(weft_kernel_ctx_t *ctx, size_t n_in, weft_tensor_t *const *in,
                                   size_t n_out, weft_tensor_t *const *out, void *user)
{
    (void)n_in, (void)n_out;
    late_t *l = user;
    weft_status_t st = weft_kernel_defer(ctx, &l->node);
    if (st != WEFT_OK) return st;
    l->out = weft_tensor_data(out[0]);
    l->value = 2.0 * *(const double *)weft_tensor_data(in[0]);
    if (pthread_create(&l->th, NULL, finish_later, l) != 0)
        return weft_kernel_error(ctx, WEFT_ESYSTEM, "no thread");
    return WEFT_OK;
}

static void kernel_defer(void **state)
{
    (void)state;
    static late_t l;
    weft_custom_op_desc_t d = WEFT_CUSTOM_OP_DESC_INIT;
    d.name = "DeferTestLate";
    d.n_inputs = 1;
    d.kernel = doubles_later;
    d.user = &l;
    const weft_op_class_t *cls;
    assert_int_equal(weft_custom_op_class(&d, &cls), WEFT_OK);
    weft_graph_t *g;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    const weft_type_t *t;
    assert_int_equal(weft_type_tensor(g, WEFT_FLOAT64, 0, NULL, &t), WEFT_OK);
    weft_var_t *x = weft_var_create(g, t, "x");
    weft_var_t *y = weft_tanh(g, weft_custom_call(g, cls, 1, &x));
    weft_tensor_t *in;
    assert_int_equal(weft_tensor_full(WEFT_FLOAT64, 0, NULL, 0.25, &in), WEFT_OK);
    for (int threads = 1; threads <= 2; threads++) {
        weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
        o.threads = threads;
        o.deferrable_nodes = true;
        weft_function_t *f;
        assert_int_equal(weft_function_compile(1, &x, 1, &y, 0, NULL, &o, &f), WEFT_OK);
        for (int rep = 0; rep < 20; rep++) {
            weft_tensor_t *out = NULL;
            assert_int_equal(weft_function_call(f, 1, &in, 1, &out), WEFT_OK);
            void *ret;
            assert_int_equal(pthread_join(l.th, &ret), 0);
            assert_int_equal((weft_status_t)(intptr_t)ret, WEFT_OK);
            assert_true(*(const double *)weft_tensor_data(out) == tanh(0.5));
            weft_tensor_release(out);
        }
        weft_function_destroy(f);
    }
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.threads = 1;
    weft_function_t *f;
    assert_int_equal(weft_function_compile(1, &x, 1, &y, 0, NULL, &o, &f), WEFT_OK);
    weft_tensor_t *out = NULL;
    assert_int_equal(weft_function_call(f, 1, &in, 1, &out), WEFT_ESTATE);
    assert_non_null(strstr(weft_function_last_error(f),
                           "defer: the function was not compiled with deferrable_nodes"));
    assert_null(out);
    assert_int_equal(weft_kernel_defer(NULL, &l.node), WEFT_EINVAL);
    weft_function_destroy(f);
    weft_tensor_release(in);
    weft_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(kernel_defer)};
    return cmocka_run_group_tests_name("kernel_defer", tests, NULL, NULL);
}
