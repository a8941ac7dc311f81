/* IfElse's gradient (verify_grad on both branches, several pairs, a pair
 * that does not reach the cost) and its JSON round trip. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ops_check.h"
#include "weft/weft.h"

/* IfElse(c, tanh(x) * y, x * x + y) with c a constant (user: its value). */
static weft_var_t *f_one(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    (void)n;
    weft_var_t *c = weft_constant_scalar(g, WEFT_INT32, *(const double *)user);
    return weft_ifelse1(g, c, weft_mul(g, weft_tanh(g, in[0]), in[1]),
                        weft_add(g, weft_mul(g, in[0], in[0]), in[1]));
}

/* Two pairs, both outputs in the cost: sum of out0 * out1. */
static weft_var_t *f_two(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    (void)n;
    weft_var_t *c = weft_constant_scalar(g, WEFT_BOOL, *(const double *)user), *o[2];
    weft_var_t *tv[2] = {weft_tanh(g, in[0]), in[1]}, *ev[2] = {in[1], weft_mul(g, in[0], in[1])};
    if (!weft_ifelse(g, c, 2, tv, ev, o)) return NULL;
    return weft_mul(g, o[0], o[1]);
}

/* Two pairs, only output 0 reaches the cost: pair 1 is disconnected. */
static weft_var_t *f_partial(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    (void)n;
    weft_var_t *c = weft_constant_scalar(g, WEFT_FLOAT64, *(const double *)user), *o[2];
    weft_var_t *tv[2] = {weft_mul(g, in[0], in[1]), in[1]}, *ev[2] = {in[1], in[0]};
    return weft_ifelse(g, c, 2, tv, ev, o) ? weft_tanh(g, o[0]) : NULL;
}

static void test_grad_both_branches(void **state)
{
    (void)state;
    int64_t s[2] = {3, 4};
    weft_tensor_t *xv = ck_random(WEFT_FLOAT64, 2, s, -2, 2, ck_seed("ifelse_grad"));
    weft_tensor_t *yv = ck_random(WEFT_FLOAT64, 2, s, -2, 2, ck_seed("ifelse_grad2") + 1);
    weft_tensor_t *pts[2] = {xv, yv};
    for (int taken = 0; taken < 2; taken++) {
        double c = taken ? 1.0 : 0.0;
        ck_verify(f_one, &c, 2, pts);
        ck_verify(f_two, &c, 2, pts);
        ck_verify(f_partial, &c, 2, pts);
    }
    weft_tensor_release(xv);
    weft_tensor_release(yv);
}

/* The gradient graph is an IfElse of the branch gradients: with c false the
 * then side's gradient is exactly zero, and the else side's 2x. */
static void test_grad_structure(void **state)
{
    (void)state;
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    int64_t s[1] = {3};
    weft_var_t *x = ck_var(g, WEFT_FLOAT64, 1, s), *c = ck_var(g, WEFT_FLOAT64, 0, NULL);
    weft_var_t *y = weft_ifelse1(g, c, weft_mul(g, x, weft_constant_scalar(g, WEFT_FLOAT64, 3.0)),
                                 weft_mul(g, x, x));
    weft_var_t *cost = weft_sum(g, y, 0, NULL, false);
    weft_var_t *gx = weft_grad(g, cost, x);
    assert_non_null(gx);
    const double xs[3] = {1.0, -2.0, 0.5}, want_t[3] = {3, 3, 3}, want_e[3] = {2, -4, 1};
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT64, 1, s, xs);
    for (int taken = 0; taken < 2; taken++) {
        double cval = taken;
        weft_tensor_t *cv = ck_tensor(WEFT_FLOAT64, 0, NULL, &cval), *out = NULL;
        weft_var_t *in[2] = {x, c};
        weft_tensor_t *vals[2] = {xv, cv};
        assert_int_equal(weft_eval(g, 2, in, vals, 1, &gx, &out), WEFT_OK);
        ck_expect(out, 1, s, taken ? want_t : want_e, 0.0);
        weft_tensor_release(out);
        weft_tensor_release(cv);
    }
    weft_tensor_release(xv);
    weft_graph_destroy(g);
}

/* Saved and loaded: op name, props (n, as_view), and the same values. */
static void test_json_round_trip(void **state)
{
    (void)state;
    weft_graph_t *g = NULL, *h = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    assert_int_equal(weft_graph_create(NULL, &h), WEFT_OK);
    int64_t s[1] = {3};
    weft_var_t *x = ck_var(g, WEFT_FLOAT64, 1, s), *c = ck_var(g, WEFT_BOOL, 0, NULL), *o[2];
    weft_var_t *tv[2] = {x, weft_neg(g, x)}, *ev[2] = {weft_tanh(g, x), x};
    assert_non_null(weft_ifelse(g, c, 2, tv, ev, o));
    weft_var_t *in[2] = {x, c};
    weft_graph_io_t io = {.n_inputs = 2, .inputs = in, .n_outputs = 2, .outputs = o};
    char *text = NULL;
    assert_int_equal(weft_graph_io_save(&io, &text), WEFT_OK);
    assert_non_null(strstr(text, "{\"op\":\"IfElse\",\"props\":{\"n\":2,\"as_view\":false}"));
    weft_graph_io_t back = {0};
    assert_int_equal(weft_graph_io_load(h, text, strlen(text), NULL, &back), WEFT_OK);
    /* bad props: n that does not match the inputs, an unknown key */
    static const char *bad[] = {"\"n\":3,\"as_view\":false", "\"n\":2,\"as_view\":false,\"x\":1"};
    const char *good = "\"n\":2,\"as_view\":false";
    for (int b = 0; b < 2; b++) {
        char *t2 = malloc(strlen(text) + 64);
        const char *at = strstr(text, good);
        memcpy(t2, text, (size_t)(at - text));
        strcpy(t2 + (at - text), bad[b]);
        strcat(t2, at + strlen(good));
        weft_graph_t *k = NULL;
        weft_graph_io_t tmp = {0};
        assert_int_equal(weft_graph_create(NULL, &k), WEFT_OK);
        weft_status_t st = weft_graph_io_load(k, t2, strlen(t2), "bad.json", &tmp);
        assert_int_equal(st, b == 0 ? WEFT_EINVAL : WEFT_EPARSE);
        assert_non_null(strstr(weft_graph_last_error(k), b == 0 ? "IfElse{n=3} takes 1 + 2n inputs"
                                                                 : "unknown key 'x'"));
        weft_graph_destroy(k);
        free(t2);
    }
    const double xs[3] = {1.0, -2.0, 0.5};
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT64, 1, s, xs);
    for (int taken = 0; taken < 2; taken++) {
        double cval = taken;
        weft_tensor_t *cv = ck_tensor(WEFT_BOOL, 0, NULL, &cval), *vals[2] = {xv, cv};
        weft_tensor_t *a[2] = {0}, *b[2] = {0};
        assert_int_equal(weft_eval(g, 2, in, vals, 2, o, a), WEFT_OK);
        assert_int_equal(weft_eval(h, 2, back.inputs, vals, 2, back.outputs, b), WEFT_OK);
        for (int k = 0; k < 2; k++) {
            for (size_t i = 0; i < 3; i++)
                assert_true(weft_tensor_flat_get(a[k], i) == weft_tensor_flat_get(b[k], i));
            weft_tensor_release(a[k]);
            weft_tensor_release(b[k]);
        }
        weft_tensor_release(cv);
    }
    weft_tensor_release(xv);
    weft_graph_io_clear(&back);
    weft_graph_io_free_text(text);
    weft_graph_destroy(g);
    weft_graph_destroy(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grad_both_branches),
        cmocka_unit_test(test_grad_structure),
        cmocka_unit_test(test_json_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
