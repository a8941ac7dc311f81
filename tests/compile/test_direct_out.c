/* Outputs written straight into the caller's tensors (docs/execution.md
 * §4.7): a caller-supplied output whose producer writes a fresh value gets
 * it written in place - the kernel's output pointer is the caller's, and
 * delivering copies nothing (whitebox: f->out_copies / f->out_direct) -
 * while views, destroyer outputs, outputs overlapping an input, outputs
 * shared with an update, non-contiguous tensors and cancelable calls keep
 * the copy. Values are checked in every case; wrong shapes and dtypes fail
 * exactly as before. */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "compile_int.h" /* out_copies, out_direct */
#include "compile_test_ops.h"
#include "weft/weft.h"

/* 64 float64: above the size kept in cells (WEFT__KEEP_BYTES), which are
 * always copied */
#define N 64
static const int64_t S4[1] = {N};

/* Spy(x) = 2x, noting where it wrote. */
static const void *spy_wrote;

static weft_status_t spy_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                   weft_var_t *const *in, size_t *n_out, const weft_type_t **out)
{
    (void)g;
    (void)op;
    (void)n_in;
    *n_out = 1;
    out[0] = weft_var_type(in[0]);
    return WEFT_OK;
}

static weft_status_t spy_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                 weft_tensor_t **out, weft_kernel_ctx_t *ctx)
{
    (void)node;
    weft_status_t st = weft_kernel_alloc_output(ctx, &out[0], WEFT_FLOAT64,
                                                weft_tensor_ndim(in[0]), weft_tensor_shape(in[0]));
    if (st != WEFT_OK) return st;
    for (size_t i = 0; i < weft_tensor_size(in[0]); i++)
        ((double *)weft_tensor_data(out[0]))[i] = 2.0 * weft_tensor_flat_get(in[0], i);
    spy_wrote = weft_tensor_data(out[0]);
    return WEFT_OK;
}

static const weft_op_class_t spy_class = {.size = sizeof(weft_op_class_t), .name = "Spy",
                                          .make_node = spy_make_node, .perform = spy_perform};

static weft_graph_t *g;

static int setup(void **state)
{
    (void)state;
    spy_wrote = NULL;
    return weft_graph_create(NULL, &g) == WEFT_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    weft_graph_destroy(g);
    return 0;
}

static weft_function_t *compile(size_t n_out, weft_var_t *x, weft_var_t *const *outs,
                                size_t n_upd, const weft_update_t *upd, bool inplace)
{
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.mode = "none";
    o.threads = 2;
    o.accept_inplace = inplace;
    weft_function_t *f = NULL;
    assert_int_equal(weft_function_compile(1, &x, n_out, outs, n_upd, upd, &o, &f), WEFT_OK);
    return f;
}

/* Deliveries by copy and in place since compile. */
static void assert_delivered(weft_function_t *f, uint64_t copies, uint64_t direct)
{
    assert_int_equal(atomic_load(&f->out_copies), copies);
    assert_int_equal(atomic_load(&f->out_direct), direct);
}

static void assert_twice(const weft_tensor_t *y, double base)
{
    for (size_t i = 0; i < N; i++) assert_true(weft_tensor_flat_get(y, i) == 2.0 * (base + (double)i));
}

static void test_direct_fresh_output_written_in_place(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S4);
    weft_var_t *y = ct_call(g, &spy_class, NULL, 1, x, NULL);
    weft_function_t *f = compile(1, x, &y, 0, NULL, false);
    weft_tensor_t *tx = ct_tensor(1, S4, 1.0), *o1 = ct_tensor(1, S4, 0.0),
                  *o2 = ct_tensor(1, S4, 0.0), *h = NULL;
    assert_int_equal(weft_function_call(f, 1, &tx, 1, &o1), WEFT_OK);
    assert_ptr_equal(spy_wrote, weft_tensor_data(o1));
    assert_twice(o1, 1.0);
    assert_delivered(f, 0, 1);
    /* another caller tensor, then a handed-over one, then the first again */
    ((double *)weft_tensor_data(tx))[0] = 5.0;
    assert_int_equal(weft_function_call(f, 1, &tx, 1, &o2), WEFT_OK);
    assert_ptr_equal(spy_wrote, weft_tensor_data(o2));
    assert_true(weft_tensor_flat_get(o2, 0) == 10.0);
    assert_true(weft_tensor_flat_get(o1, 0) == 2.0); /* untouched by the second call */
    assert_int_equal(weft_function_call(f, 1, &tx, 1, &h), WEFT_OK);
    assert_non_null(h);
    assert_ptr_equal(spy_wrote, weft_tensor_data(h));
    assert_true(weft_tensor_data(h) != weft_tensor_data(o1) &&
                weft_tensor_data(h) != weft_tensor_data(o2));
    assert_int_equal(weft_tensor_refcount(h), 1);
    assert_int_equal(weft_function_call(f, 1, &tx, 1, &o1), WEFT_OK);
    assert_ptr_equal(spy_wrote, weft_tensor_data(o1));
    assert_true(weft_tensor_flat_get(o1, 0) == 10.0 && weft_tensor_flat_get(o1, 3) == 8.0);
    assert_delivered(f, 0, 3);
    /* the caller's references are the only ones left */
    assert_int_equal(weft_tensor_refcount(o1), 1);
    assert_int_equal(weft_tensor_refcount(o2), 1);
    weft_tensor_release(h);
    weft_tensor_release(tx);
    weft_tensor_release(o1);
    weft_tensor_release(o2);
    weft_function_destroy(f);
}

/* A library elementwise kernel (Exp, fresh output) writes in place too. */
static void test_direct_library_elemwise(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S4);
    weft_var_t *y = weft_exp(g, x);
    weft_function_t *f = compile(1, x, &y, 0, NULL, false);
    weft_tensor_t *tx = ct_tensor(1, S4, 0.0), *o = ct_tensor(1, S4, 0.0);
    for (int c = 0; c < 3; c++) assert_int_equal(weft_function_call(f, 1, &tx, 1, &o), WEFT_OK);
    assert_true(weft_tensor_flat_get(o, 0) == 1.0 && weft_tensor_flat_get(o, 2) == exp(2.0));
    assert_delivered(f, 0, 3);
    weft_tensor_release(tx);
    weft_tensor_release(o);
    weft_function_destroy(f);
}

/* A view of an intermediate: the view's cell holds a view, copied. */
static void test_direct_view_output_copied(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S4);
    weft_var_t *v = ct_call(g, &ct_view_class, NULL, 1, ct_call(g, &spy_class, NULL, 1, x, NULL),
                            NULL);
    weft_function_t *f = compile(1, x, &v, 0, NULL, false);
    weft_tensor_t *tx = ct_tensor(1, S4, 1.0), *o = ct_tensor(1, S4, 0.0);
    assert_int_equal(weft_function_call(f, 1, &tx, 1, &o), WEFT_OK);
    assert_true(spy_wrote != weft_tensor_data(o));
    assert_twice(o, 1.0);
    assert_delivered(f, 1, 0);
    weft_tensor_release(tx);
    weft_tensor_release(o);
    weft_function_destroy(f);
}

/* The caller's output is the input tensor: the result is copied after the
 * graph read the input, as before. */
static void test_direct_output_overlapping_input_copied(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S4);
    weft_var_t *y = ct_call(g, &spy_class, NULL, 1, x, NULL);
    weft_function_t *f = compile(1, x, &y, 0, NULL, false);
    weft_tensor_t *tx = ct_tensor(1, S4, 1.0);
    assert_int_equal(weft_function_call(f, 1, &tx, 1, &tx), WEFT_OK);
    assert_true(spy_wrote != weft_tensor_data(tx));
    assert_twice(tx, 1.0);
    assert_delivered(f, 1, 0);
    weft_tensor_release(tx);
    weft_function_destroy(f);
}

/* One variable given as two outputs: the second is a DeepCopy of the first
 * (output_aliasing.c), which writes its fresh copy into the second caller
 * tensor; the first is Spy's. Neither is copied at delivery. */
static void test_direct_duplicate_output(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S4);
    weft_var_t *y = ct_call(g, &spy_class, NULL, 1, x, NULL);
    weft_var_t *outs[2] = {y, y};
    weft_function_t *f = compile(2, x, outs, 0, NULL, false);
    weft_tensor_t *tx = ct_tensor(1, S4, 1.0), *o[2] = {ct_tensor(1, S4, 0.0), ct_tensor(1, S4, 0.0)};
    assert_int_equal(weft_function_call(f, 1, &tx, 2, o), WEFT_OK);
    assert_true(spy_wrote == weft_tensor_data(o[0]) || spy_wrote == weft_tensor_data(o[1]));
    assert_twice(o[0], 1.0);
    assert_twice(o[1], 1.0);
    assert_delivered(f, 0, 2);
    /* the same tensor twice: the second overlaps the first, so it is copied */
    weft_tensor_t *same[2] = {o[0], o[0]};
    assert_int_equal(weft_function_call(f, 1, &tx, 2, same), WEFT_OK);
    assert_twice(o[0], 1.0);
    assert_delivered(f, 2, 2);
    weft_tensor_release(tx);
    weft_tensor_release(o[0]);
    weft_tensor_release(o[1]);
    weft_function_destroy(f);
}

/* An in-place chain ending in the output: the destroyer's output lives in
 * its input's buffer, so it is copied. */
static void test_direct_inplace_chain_copied(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S4);
    weft_var_t *t = ct_call(g, &spy_class, NULL, 1, x, NULL);
    weft_var_t *y = ct_call(g, &ct_add_inplace_class, NULL, 2, t, x);
    weft_function_t *f = compile(1, x, &y, 0, NULL, true);
    weft_tensor_t *tx = ct_tensor(1, S4, 1.0), *o = ct_tensor(1, S4, 0.0);
    assert_int_equal(weft_function_call(f, 1, &tx, 1, &o), WEFT_OK);
    for (size_t i = 0; i < N; i++) assert_true(weft_tensor_flat_get(o, i) == 3.0 * (1.0 + (double)i));
    assert_delivered(f, 1, 0);
    weft_tensor_release(tx);
    weft_tensor_release(o);
    weft_function_destroy(f);
}

/* An output that is also an update's value: one of them becomes a DeepCopy
 * (output_aliasing.c), so the output's value is fresh and written in place
 * while the update's goes to the input's tensor as before. */
static void test_direct_output_shared_with_update(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S4);
    weft_var_t *y = ct_call(g, &spy_class, NULL, 1, x, NULL);
    weft_update_t u = {x, y};
    weft_function_t *f = compile(1, x, &y, 1, &u, false);
    weft_tensor_t *tx = ct_tensor(1, S4, 1.0), *o = ct_tensor(1, S4, 0.0);
    assert_int_equal(weft_function_call(f, 1, &tx, 1, &o), WEFT_OK);
    assert_twice(o, 1.0);
    assert_twice(tx, 1.0);
    assert_delivered(f, 0, 1);
    assert_int_equal(weft_tensor_refcount(o), 1);
    assert_int_equal(weft_function_call(f, 1, &tx, 1, &o), WEFT_OK);
    for (size_t i = 0; i < N; i++) assert_true(weft_tensor_flat_get(o, i) == 4.0 * (1.0 + (double)i));
    for (size_t i = 0; i < N; i++) assert_true(weft_tensor_flat_get(tx, i) == 4.0 * (1.0 + (double)i));
    weft_tensor_release(tx);
    weft_tensor_release(o);
    weft_function_destroy(f);
}

/* A shared variable updated with the output's value: the update is an
 * output of the expanded call with the same variable, so one of them
 * becomes a DeepCopy (output_aliasing.c); the output is written in place
 * and the shared value never lives in the caller's tensor. */
static void test_direct_output_is_shared_update(void **state)
{
    (void)state;
    weft_tensor_t *v0 = ct_tensor(1, S4, 1.0), *tx = ct_tensor(1, S4, 0.0),
                  *o = ct_tensor(1, S4, 0.0), *sv = NULL;
    weft_var_t *x = ct_var(g, "x", 1, S4), *sh = weft_shared(g, v0, "s");
    assert_non_null(sh);
    memset(weft_tensor_data(tx), 0, N * sizeof(double)); /* y = 2 (s + 0) */
    weft_var_t *y = ct_call(g, &spy_class, NULL, 1, ct_call(g, &ct_add_class, NULL, 2, sh, x),
                            NULL);
    weft_update_t u = {sh, y};
    weft_function_t *f = compile(1, x, &y, 1, &u, false);
    assert_int_equal(weft_function_call(f, 1, &tx, 1, &o), WEFT_OK);
    assert_twice(o, 1.0);
    assert_int_equal(weft_shared_get(sh, &sv), WEFT_OK);
    assert_true(weft_tensor_data(sv) != weft_tensor_data(o));
    assert_twice(sv, 1.0);
    weft_tensor_release(sv);
    assert_int_equal(weft_function_call(f, 1, &tx, 1, &o), WEFT_OK);
    for (size_t i = 0; i < N; i++) assert_true(weft_tensor_flat_get(o, i) == 4.0 * (1.0 + (double)i));
    ((double *)weft_tensor_data(o))[0] = -1.0; /* the caller's: the shared value keeps 4 */
    assert_int_equal(weft_shared_get(sh, &sv), WEFT_OK);
    assert_true(weft_tensor_flat_get(sv, 0) == 4.0);
    assert_int_equal(weft_tensor_refcount(o), 1);
    assert_delivered(f, 0, 2);
    weft_tensor_release(sv);
    weft_tensor_release(o);
    weft_tensor_release(tx);
    weft_tensor_release(v0);
    weft_function_destroy(f);
}

/* A non-contiguous caller tensor, and a cancelable call: copied. */
static void test_direct_strided_and_cancelable_copied(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S4);
    weft_var_t *y = ct_call(g, &spy_class, NULL, 1, x, NULL);
    weft_function_t *f = compile(1, x, &y, 0, NULL, false);
    int64_t s8[1] = {2 * N}, st2[1] = {2};
    weft_tensor_t *tx = ct_tensor(1, S4, 1.0), *big = ct_tensor(1, s8, 0.0), *o;
    assert_int_equal(weft_tensor_view(big, 1, S4, st2, 0, &o), WEFT_OK);
    assert_int_equal(weft_function_call(f, 1, &tx, 1, &o), WEFT_OK);
    assert_twice(o, 1.0);
    assert_true(weft_tensor_flat_get(big, 1) == 1.0); /* between the strided elements */
    assert_delivered(f, 1, 0);
    weft_call_token_t *tok;
    assert_int_equal(weft_call_token_create(&tok), WEFT_OK);
    weft_call_options_t co = WEFT_CALL_OPTIONS_INIT;
    co.token = tok;
    weft_tensor_t *c = ct_tensor(1, S4, 0.0);
    assert_int_equal(weft_function_call_ex(f, 1, &tx, 1, &c, &co), WEFT_OK);
    assert_true(spy_wrote != weft_tensor_data(c));
    assert_twice(c, 1.0);
    assert_delivered(f, 2, 0);
    weft_call_token_destroy(tok);
    weft_tensor_release(c);
    weft_tensor_release(o);
    weft_tensor_release(big);
    weft_tensor_release(tx);
    weft_function_destroy(f);
}

/* Wrong shape (dynamic length) and wrong dtype: the errors of before, the
 * caller's tensor left as the caller's only. */
static void test_direct_wrong_shape_and_dtype(void **state)
{
    (void)state;
    int64_t dyn[1] = {WEFT_DIM_UNKNOWN}, s5[1] = {N + 1};
    weft_var_t *x = ct_var(g, "x", 1, dyn);
    weft_var_t *y = ct_call(g, &spy_class, NULL, 1, x, NULL);
    weft_function_t *f = compile(1, x, &y, 0, NULL, false);
    weft_tensor_t *tx = ct_tensor(1, S4, 1.0), *o5 = ct_tensor(1, s5, 0.0), *oi;
    assert_int_equal(weft_function_call(f, 1, &tx, 1, &o5), WEFT_ESHAPE);
    assert_non_null(strstr(weft_function_last_error(f), "the result is float64[64] but the "
                           "supplied tensor is float64[65]"));
    assert_int_equal(weft_tensor_refcount(o5), 1);
    assert_int_equal(weft_tensor_empty(WEFT_INT32, 1, S4, &oi), WEFT_OK);
    assert_int_equal(weft_function_call(f, 1, &tx, 1, &oi), WEFT_ETYPE);
    assert_non_null(strstr(weft_function_last_error(f), "the result is float64[64] but the "
                           "supplied tensor is int32[64]"));
    assert_int_equal(weft_tensor_refcount(oi), 1);
    /* a right one afterwards is written in place */
    weft_tensor_t *o4 = ct_tensor(1, S4, 0.0);
    assert_int_equal(weft_function_call(f, 1, &tx, 1, &o4), WEFT_OK);
    assert_ptr_equal(spy_wrote, weft_tensor_data(o4));
    assert_twice(o4, 1.0);
    assert_int_equal(atomic_load(&f->out_direct), 1);
    weft_tensor_release(o4);
    weft_tensor_release(oi);
    weft_tensor_release(o5);
    weft_tensor_release(tx);
    weft_function_destroy(f);
}

/* Two threads calling one function at once, each with its own input and
 * output tensors (two call states): each output written in place, values
 * right (TSan in the sanitizer build). */
typedef struct caller {
    weft_function_t *f;
    double base;
    int bad;
} caller_t;

static void *call_loop(void *arg)
{
    caller_t *c = arg;
    weft_tensor_t *tx = ct_tensor(1, S4, c->base), *o = ct_tensor(1, S4, 0.0);
    for (int r = 0; r < 200; r++) {
        if (weft_function_call(c->f, 1, &tx, 1, &o) != WEFT_OK) c->bad++;
        for (size_t i = 0; i < N; i++)
            if (weft_tensor_flat_get(o, i) != 2.0 * (c->base + (double)i)) c->bad++;
    }
    weft_tensor_release(tx);
    weft_tensor_release(o);
    return NULL;
}

static void test_direct_concurrent_callers(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S4);
    weft_var_t *y = ct_call(g, &ct_twice_class, NULL, 1, x, NULL);
    weft_function_t *f = compile(1, x, &y, 0, NULL, false);
    caller_t c[2] = {{f, 1.0, 0}, {f, 100.0, 0}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&th[i], NULL, call_loop, &c[i]), 0);
    for (int i = 0; i < 2; i++) assert_int_equal(pthread_join(th[i], NULL), 0);
    assert_int_equal(c[0].bad + c[1].bad, 0);
    assert_delivered(f, 0, 400);
    weft_function_destroy(f);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_direct_fresh_output_written_in_place),
        T(test_direct_library_elemwise),
        T(test_direct_view_output_copied),
        T(test_direct_output_overlapping_input_copied),
        T(test_direct_duplicate_output),
        T(test_direct_inplace_chain_copied),
        T(test_direct_output_shared_with_update),
        T(test_direct_output_is_shared_update),
        T(test_direct_strided_and_cancelable_copied),
        T(test_direct_wrong_shape_and_dtype),
        T(test_direct_concurrent_callers),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
