/* weft_call_options_t.on_node_failure: called once, with the status and the
 * message the call returns, when the call's first node fails; not called by
 * a call that succeeds, nor by options of the older, shorter layout. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "weft/custom_op.h"
#include "weft/elemwise.h"
#include "weft/function.h"

typedef struct seen {
    int calls;
    weft_status_t st;
    char msg[1024];
} seen_t;

static void hook(void *user, weft_status_t st, const char *msg)
{
    seen_t *s = user;
    s->calls++;
    s->st = st;
    strncpy(s->msg, msg, sizeof s->msg - 1);
}

static weft_status_t fails_if_negative(weft_kernel_ctx_t *ctx, size_t n_in,
                                       weft_tensor_t *const *in, size_t n_out,
                                       weft_tensor_t *const *out, void *user)
{
    (void)n_in, (void)n_out, (void)user;
    double x = *(const double *)weft_tensor_data(in[0]);
    if (x < 0) return weft_kernel_error(ctx, WEFT_ERANGE, "hooktest: negative");
    *(double *)weft_tensor_data(out[0]) = x;
    return WEFT_OK;
}

static void failure_hook(void **state)
{
    (void)state;
    weft_custom_op_desc_t d = WEFT_CUSTOM_OP_DESC_INIT;
    d.name = "HookTestPicky";
    d.kernel = fails_if_negative;
    const weft_op_class_t *cls;
    assert_int_equal(weft_custom_op_class(&d, &cls), WEFT_OK);
    weft_graph_t *g;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    const weft_type_t *t;
    assert_int_equal(weft_type_tensor(g, WEFT_FLOAT64, 0, NULL, &t), WEFT_OK);
    weft_var_t *x = weft_var_create(g, t, "x");
    weft_var_t *y = weft_tanh(g, weft_custom_call(g, cls, 1, &x));
    weft_function_t *f;
    assert_int_equal(weft_function_compile(1, &x, 1, &y, 0, NULL, NULL, &f), WEFT_OK);
    seen_t s = {0, WEFT_OK, ""};
    weft_call_options_t co = WEFT_CALL_OPTIONS_INIT;
    co.on_node_failure = hook;
    co.failure_user = &s;
    weft_tensor_t *in, *out = NULL;
    assert_int_equal(weft_tensor_full(WEFT_FLOAT64, 0, NULL, -1.0, &in), WEFT_OK);
    assert_int_equal(weft_function_call_ex(f, 1, &in, 1, &out, &co), WEFT_ERANGE);
    assert_int_equal(s.calls, 1);
    assert_int_equal(s.st, WEFT_ERANGE);
    /* the call says "function: " first */
    assert_string_equal(weft_function_last_error(f) + strlen("function: "), s.msg);
    assert_int_equal(strncmp(s.msg, "node 0, apply 0 (HookTestPicky", 30), 0);
    assert_non_null(strstr(s.msg, "HookTestPicky"));
    assert_non_null(strstr(s.msg, "hooktest: negative"));
    /* the older layout (token only) has no hook */
    co.size = offsetof(weft_call_options_t, on_node_failure);
    assert_int_equal(weft_function_call_ex(f, 1, &in, 1, &out, &co), WEFT_ERANGE);
    assert_int_equal(s.calls, 1);
    /* a call that succeeds does not call it */
    co.size = sizeof co;
    weft_tensor_fill(in, 2.0);
    assert_int_equal(weft_function_call_ex(f, 1, &in, 1, &out, &co), WEFT_OK);
    assert_int_equal(s.calls, 1);
    weft_tensor_release(out);
    weft_tensor_release(in);
    weft_function_destroy(f);
    weft_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(failure_hook)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
