/* One-callback ops (weft/custom_op.h) and the kernel helpers
 * (weft/tensor_iter.h, weft_kernel_contiguous): elementwise scalar and chunk
 * styles with broadcasting, strides and dtypes, the whole-tensor style with a
 * shape function, gradients through weft_grad, the same bits at 1 and 2
 * workers, JSON, errors naming the op, and a pooled contiguous copy that
 * warm calls do not allocate. */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "support/alloc_count.h"
#include "support/fault_sweep.h"
#include "weft/weft.h"

#define OK(expr) assert_int_equal((expr), WEFT_OK)
#define OKV(expr) assert_non_null(expr)

static weft_graph_t *g;

static int setup(void **state)
{
    (void)state;
    return weft_graph_create(NULL, &g) == WEFT_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    weft_graph_destroy(g);
    g = NULL;
    return 0;
}

static weft_var_t *var(weft_dtype_t dt, int ndim, const int64_t *shape)
{
    const weft_type_t *t;
    weft_var_t *v;
    OK(weft_type_tensor(g, dt, ndim, shape, &t));
    OKV(v = weft_var_create(g, t, NULL));
    return v;
}

/* A tensor of dt and shape with elements vals (C order). */
static weft_tensor_t *tens(weft_dtype_t dt, int ndim, const int64_t *shape, const double *vals)
{
    weft_tensor_t *t;
    OK(weft_tensor_empty(dt, ndim, shape, &t));
    int64_t idx[WEFT_MAX_NDIM] = {0};
    for (size_t i = 0; i < weft_tensor_size(t); i++) {
        OK(weft_tensor_set(t, idx, vals[i]));
        for (int d = ndim - 1; d >= 0 && ++idx[d] == shape[d]; d--) idx[d] = 0;
    }
    return t;
}

static void assert_vals(const weft_tensor_t *t, size_t n, const double *want)
{
    assert_int_equal(weft_tensor_size(t), n);
    for (size_t i = 0; i < n; i++) assert_true(weft_tensor_flat_get(t, i) == want[i]);
}

static weft_function_t *compile(size_t n_in, weft_var_t **in, size_t n_out, weft_var_t **out,
                                int threads)
{
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.threads = threads;
    weft_function_t *f = NULL;
    weft_status_t st = weft_function_compile(n_in, in, n_out, out, 0, NULL, &o, &f);
    if (st != WEFT_OK) print_message("compile: %s\n", weft_function_last_error(NULL));
    OK(st);
    return f;
}

/* Compiles out(in), calls it once and returns the (new) result. */
static weft_tensor_t *run1(size_t n_in, weft_var_t **in, weft_tensor_t **args, weft_var_t *out)
{
    weft_function_t *f = compile(n_in, in, 1, &out, 2);
    weft_tensor_t *r = NULL;
    weft_status_t st = weft_function_call(f, n_in, args, 1, &r);
    if (st != WEFT_OK) print_message("call: %s\n", weft_function_last_error(f));
    OK(st);
    OK(weft_function_destroy(f));
    return r;
}

/* ---- the ops under test ------------------------------------------------------------ */

static double axpy(const double *x, void *user)
{
    return x[0] * *(const double *)user + x[1];
}

static void half_sum(size_t n, void *out, const void *const *in, void *user)
{
    (void)user;
    float *o = out;
    const float *a = in[0], *b = in[1];
    for (size_t i = 0; i < n; i++) o[i] = (a[i] + b[i]) * 0.5f;
}

static double mul2(const double *x, void *user)
{
    (void)user;
    return x[0] * x[1];
}

static weft_status_t mul2_grad(weft_graph_t *gg, size_t n_in, weft_var_t *const *in,
                               size_t n_out, weft_var_t *const *out, weft_var_t *const *gout,
                               weft_var_t **gin, void *user)
{
    (void)n_in, (void)n_out, (void)out, (void)user;
    gin[0] = weft_mul(gg, gout[0], in[1]);
    gin[1] = weft_mul(gg, gout[0], in[0]);
    return gin[0] && gin[1] ? WEFT_OK : weft_graph_error(gg);
}

/* RowSum: float64 [r, c] -> [r], reading a pooled contiguous copy. */
static weft_status_t rowsum_shape(void *user, size_t n_in, const int *in_ndim,
                                  const int64_t *const *in_shape, size_t k, int *ndim,
                                  int64_t *shape)
{
    (void)user, (void)n_in, (void)k;
    if (in_ndim[0] != 2) return WEFT_ESHAPE;
    *ndim = 1;
    shape[0] = in_shape[0][0];
    return WEFT_OK;
}

static weft_status_t rowsum(weft_kernel_ctx_t *ctx, size_t n_in, weft_tensor_t *const *in,
                            size_t n_out, weft_tensor_t *const *out, void *user)
{
    (void)n_in, (void)n_out, (void)user;
    weft_tensor_t *c;
    weft_status_t st = weft_kernel_contiguous(ctx, in[0], &c);
    if (st != WEFT_OK) return st;
    int64_t r = weft_tensor_dim(c, 0), n = weft_tensor_dim(c, 1);
    const double *x = weft_tensor_data(c);
    double *o = weft_tensor_data(out[0]);
    for (int64_t i = 0; i < r; i++) {
        o[i] = 0;
        for (int64_t j = 0; j < n; j++) o[i] += x[i * n + j];
    }
    weft_kernel_contiguous_done(ctx, in[0], c);
    return WEFT_OK;
}

static weft_status_t refuse_negative(weft_kernel_ctx_t *ctx, size_t n_in,
                                     weft_tensor_t *const *in, size_t n_out,
                                     weft_tensor_t *const *out, void *user)
{
    (void)n_in, (void)n_out, (void)user;
    if (weft_tensor_flat_get(in[0], 0) < 0)
        return weft_kernel_error(ctx, WEFT_ERANGE, "x[0] = %g is negative",
                                 weft_tensor_flat_get(in[0], 0));
    if (weft_tensor_flat_get(in[0], 0) > 100) return WEFT_EOVERFLOW; /* no message */
    return weft_tensor_copy(out[0], in[0]);
}

static const weft_op_class_t *make(weft_custom_op_desc_t d)
{
    const weft_op_class_t *cls = NULL;
    weft_status_t st = weft_custom_op_class(&d, &cls);
    if (st != WEFT_OK) print_message("class: %s\n", weft_custom_op_last_error());
    OK(st);
    return cls;
}

static double two = 2.0;

static const weft_op_class_t *axpy_class(void)
{
    weft_custom_op_desc_t d = WEFT_CUSTOM_OP_DESC_INIT;
    d.name = "TestAxpy";
    d.n_inputs = 2;
    d.scalar = axpy;
    d.user = &two;
    return make(d);
}

static const weft_op_class_t *rowsum_class(void)
{
    weft_custom_op_desc_t d = WEFT_CUSTOM_OP_DESC_INIT;
    d.name = "TestRowSum";
    d.kernel = rowsum;
    d.shape = rowsum_shape;
    return make(d);
}

/* ---- tests -------------------------------------------------------------------------- */

/* 2 * x + b: x float32 [2, 3] transposed from [3, 2] (strided), b int32 [3]
 * left-padded and broadcast; the output dtype is NumPy's promotion of the
 * inputs' (float32 with int32: float64). */
static void test_custom_scalar_broadcasts_strides_and_dtypes(void **state)
{
    (void)state;
    int64_t s32[2] = {3, 2}, s3[1] = {3};
    weft_var_t *x = var(WEFT_FLOAT32, 2, s32), *b = var(WEFT_INT32, 1, s3), *xt;
    OKV(xt = weft_transpose(g, x));
    weft_var_t *in2[2] = {xt, b}, *y = weft_custom_call(g, axpy_class(), 2, in2);
    assert_non_null(y);
    char tb[32];
    weft_type_print(weft_var_type(y), tb, sizeof tb);
    assert_string_equal(tb, "float64[2,3]");
    weft_tensor_t *tx = tens(WEFT_FLOAT32, 2, s32, (double[]){1, 2, 3, 4, 5, 6});
    weft_tensor_t *tb3 = tens(WEFT_INT32, 1, s3, (double[]){10, 20, 30});
    weft_var_t *in[2] = {x, b};
    weft_tensor_t *args[2] = {tx, tb3}, *r = run1(2, in, args, y);
    assert_vals(r, 6, (double[]){12, 26, 40, 14, 28, 42});
    weft_tensor_release(r);
    weft_tensor_release(tx);
    weft_tensor_release(tb3);
}

/* A chunk function works in the output dtype: int32 inputs converted to
 * float32 (dtype fixed), a 0-d input broadcast. */
static void test_custom_chunk_gets_contiguous_arrays_of_the_compute_dtype(void **state)
{
    (void)state;
    weft_custom_op_desc_t d = WEFT_CUSTOM_OP_DESC_INIT;
    d.name = "TestHalfSum";
    d.n_inputs = 2;
    d.chunk = half_sum;
    d.dtype = WEFT_FLOAT32;
    const weft_op_class_t *cls = make(d);
    int64_t s4[1] = {4};
    weft_var_t *a = var(WEFT_INT32, 1, s4), *c = var(WEFT_INT32, 0, NULL);
    weft_var_t *in[2] = {a, c}, *y = weft_custom_call(g, cls, 2, in);
    assert_int_equal(weft_type_dtype(weft_var_type(y)), WEFT_FLOAT32);
    weft_tensor_t *ta = tens(WEFT_INT32, 1, s4, (double[]){1, 2, 3, 4});
    weft_tensor_t *tc = tens(WEFT_INT32, 0, NULL, (double[]){10});
    weft_tensor_t *args[2] = {ta, tc}, *r = run1(2, in, args, y);
    assert_vals(r, 4, (double[]){5.5, 6, 6.5, 7});
    weft_tensor_release(r);
    weft_tensor_release(ta);
    weft_tensor_release(tc);
}

/* Large enough to be split over workers: the same bits at 1 and 2. */
static void test_custom_elemwise_same_bits_at_any_worker_count(void **state)
{
    (void)state;
    int64_t n = 300000;
    weft_var_t *x = var(WEFT_FLOAT64, 1, &n), *in2[2] = {x, x};
    weft_var_t *y = weft_custom_call(g, axpy_class(), 2, in2);
    weft_tensor_t *tx, *r[2] = {NULL, NULL};
    OK(weft_tensor_empty(WEFT_FLOAT64, 1, &n, &tx));
    for (int64_t i = 0; i < n; i++) ((double *)weft_tensor_data(tx))[i] = sin((double)i) / 3;
    for (int t = 0; t < 2; t++) {
        weft_function_t *f = compile(1, &x, 1, &y, t + 1);
        OK(weft_function_call(f, 1, &tx, 1, &r[t]));
        OK(weft_function_destroy(f));
    }
    assert_memory_equal(weft_tensor_data(r[0]), weft_tensor_data(r[1]), (size_t)n * 8);
    assert_true(weft_tensor_flat_get(r[0], 7) == sin(7.0) / 3 * 2 + sin(7.0) / 3);
    weft_tensor_release(r[0]);
    weft_tensor_release(r[1]);
    weft_tensor_release(tx);
}

/* The shape function gives the type at build time (unknown lengths stay
 * unknown) and the run-time shape; the kernel reads a strided view. */
static void test_custom_kernel_with_shape_function(void **state)
{
    (void)state;
    int64_t s23[2] = {WEFT_DIM_UNKNOWN, 3};
    weft_var_t *x = var(WEFT_FLOAT64, 2, s23), *xt;
    OKV(xt = weft_transpose(g, x));
    weft_var_t *y = weft_custom_call(g, rowsum_class(), 1, &xt);
    char tb[32];
    weft_type_print(weft_var_type(y), tb, sizeof tb);
    assert_string_equal(tb, "float64[3]");
    int64_t s[2] = {2, 3};
    weft_tensor_t *tx = tens(WEFT_FLOAT64, 2, s, (double[]){1, 2, 3, 4, 5, 6});
    weft_tensor_t *r = run1(1, &x, &tx, y);
    assert_vals(r, 3, (double[]){5, 7, 9});
    weft_tensor_release(r);
    weft_tensor_release(tx);
    /* build-time refusal by the shape function */
    int64_t s3[1] = {3};
    weft_var_t *v = var(WEFT_FLOAT64, 1, s3);
    assert_null(weft_custom_call(g, rowsum_class(), 1, &v));
    assert_non_null(strstr(weft_graph_last_error(g),
                           "TestRowSum: the shape function failed for output 0 with WEFT_ESHAPE"));
}

/* MinMax: two 0-d outputs of a vector. */
static weft_status_t scalar_shape(void *user, size_t n_in, const int *in_ndim,
                                  const int64_t *const *in_shape, size_t k, int *ndim,
                                  int64_t *shape)
{
    (void)user, (void)n_in, (void)in_ndim, (void)in_shape, (void)k, (void)shape;
    *ndim = 0;
    return WEFT_OK;
}

static weft_status_t minmax(weft_kernel_ctx_t *ctx, size_t n_in, weft_tensor_t *const *in,
                            size_t n_out, weft_tensor_t *const *out, void *user)
{
    (void)ctx, (void)n_in, (void)n_out, (void)user;
    double lo = weft_tensor_flat_get(in[0], 0), hi = lo;
    for (size_t i = 1; i < weft_tensor_size(in[0]); i++) {
        double v = weft_tensor_flat_get(in[0], i);
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    weft_status_t st = weft_tensor_fill(out[0], lo);
    return st == WEFT_OK ? weft_tensor_fill(out[1], hi) : st;
}

/* Several outputs: weft_custom_call returns output 0, its owner the rest. */
static void test_custom_kernel_with_two_outputs(void **state)
{
    (void)state;
    weft_custom_op_desc_t d = WEFT_CUSTOM_OP_DESC_INIT;
    d.name = "TestMinMax";
    d.kernel = minmax;
    d.n_outputs = 2;
    d.shape = scalar_shape;
    d.dtype = WEFT_FLOAT32;
    const weft_op_class_t *cls = make(d);
    int64_t s4[1] = {4};
    weft_var_t *x = var(WEFT_INT64, 1, s4), *lo = weft_custom_call(g, cls, 1, &x);
    weft_var_t *outs[2] = {lo, weft_apply_output(weft_var_owner(lo), 1)};
    assert_int_equal(weft_type_dtype(weft_var_type(outs[1])), WEFT_FLOAT32);
    weft_function_t *f = compile(1, &x, 2, outs, 2);
    weft_tensor_t *tx = tens(WEFT_INT64, 1, s4, (double[]){3, -7, 12, 0}), *r[2] = {NULL, NULL};
    OK(weft_function_call(f, 1, &tx, 2, r));
    assert_int_equal(weft_tensor_ndim(r[0]), 0);
    assert_vals(r[0], 1, (double[]){-7});
    assert_vals(r[1], 1, (double[]){12});
    OK(weft_function_destroy(f));
    weft_tensor_release(r[0]);
    weft_tensor_release(r[1]);
    weft_tensor_release(tx);
}

/* The gradient callback through weft_grad: d sum(x * y) / dx is y summed
 * over the axis x was broadcast along. */
static void test_custom_grad_callback_through_weft_grad(void **state)
{
    (void)state;
    weft_custom_op_desc_t d = WEFT_CUSTOM_OP_DESC_INIT;
    d.name = "TestMul2";
    d.n_inputs = 2;
    d.scalar = mul2;
    d.grad = mul2_grad;
    const weft_op_class_t *cls = make(d);
    int64_t s13[2] = {1, 3}, s23[2] = {2, 3};
    weft_var_t *x = var(WEFT_FLOAT64, 2, s13), *y = var(WEFT_FLOAT64, 2, s23);
    weft_var_t *in[2] = {x, y}, *p = weft_custom_call(g, cls, 2, in), *cost, *grads[2];
    OKV(cost = weft_sum(g, p, 0, NULL, false));
    OKV(weft_grads(g, cost, 2, in, NULL, grads));
    weft_tensor_t *tx = tens(WEFT_FLOAT64, 2, s13, (double[]){1, 2, 3});
    weft_tensor_t *ty = tens(WEFT_FLOAT64, 2, s23, (double[]){1, 10, 100, 2, 20, 200});
    weft_function_t *f = compile(2, in, 2, grads, 2);
    weft_tensor_t *args[2] = {tx, ty}, *r[2] = {NULL, NULL};
    OK(weft_function_call(f, 2, args, 2, r));
    assert_int_equal(weft_tensor_ndim(r[0]), 2);
    assert_vals(r[0], 3, (double[]){3, 30, 300});
    assert_vals(r[1], 6, (double[]){1, 2, 3, 1, 2, 3});
    OK(weft_function_destroy(f));
    for (int i = 0; i < 2; i++) weft_tensor_release(r[i]);
    weft_tensor_release(tx);
    weft_tensor_release(ty);
    /* without the callback: WEFT_ENOGRAD naming the node */
    int64_t s2[1] = {2};
    weft_var_t *z = var(WEFT_FLOAT64, 1, s2), *zz[2] = {z, z};
    weft_var_t *q = weft_custom_call(g, axpy_class(), 2, zz), *c2, *gz;
    OKV(c2 = weft_sum(g, q, 0, NULL, false));
    assert_null(gz = weft_grad(g, c2, z));
    assert_int_equal(weft_graph_error(g), WEFT_ENOGRAD);
    assert_non_null(strstr(weft_graph_error_message(g), "TestAxpy"));
}

/* A kernel's error fails the call with a message naming the op; one without
 * a message gets one. */
static void test_custom_kernel_error_names_the_op(void **state)
{
    (void)state;
    weft_custom_op_desc_t d = WEFT_CUSTOM_OP_DESC_INIT;
    d.name = "TestRefuseNegative";
    d.kernel = refuse_negative;
    const weft_op_class_t *cls = make(d);
    int64_t s2[1] = {2};
    weft_var_t *x = var(WEFT_FLOAT64, 1, s2), *y = weft_custom_call(g, cls, 1, &x);
    weft_function_t *f = compile(1, &x, 1, &y, 2);
    weft_tensor_t *neg = tens(WEFT_FLOAT64, 1, s2, (double[]){-1, 0});
    weft_tensor_t *big = tens(WEFT_FLOAT64, 1, s2, (double[]){1000, 0}), *r = NULL;
    assert_int_equal(weft_function_call(f, 1, &neg, 1, &r), WEFT_ERANGE);
    const char *msg = weft_function_last_error(f);
    assert_non_null(strstr(msg, "function: node 0, apply 0 (TestRefuseNegative, built at "));
    assert_non_null(strstr(msg, ") failed with WEFT_ERANGE: x[0] = -1 is negative"));
    assert_int_equal(weft_function_call(f, 1, &big, 1, &r), WEFT_EOVERFLOW);
    assert_non_null(strstr(weft_function_last_error(f),
                           "TestRefuseNegative: the kernel returned WEFT_EOVERFLOW"));
    assert_null(r);
    OK(weft_function_destroy(f));
    weft_tensor_release(neg);
    weft_tensor_release(big);
}

/* The class is registered by name: a graph using it saves and loads, and
 * profiles show it by that name. */
static void test_custom_op_round_trips_through_json(void **state)
{
    (void)state;
    int64_t s2[1] = {2};
    weft_var_t *x = var(WEFT_FLOAT64, 1, s2), *xx[2] = {x, x};
    weft_var_t *y = weft_custom_call(g, axpy_class(), 2, xx);
    weft_graph_io_t gr = {1, &x, NULL, 1, &y, 0, NULL};
    char *text = NULL;
    OK(weft_graph_io_save(&gr, &text));
    assert_non_null(strstr(text, "{\"op\":\"TestAxpy\",\"inputs\":[0,0],\"outputs\":[1]}"));
    weft_graph_t *g2;
    OK(weft_graph_create(NULL, &g2));
    weft_graph_io_t ld;
    OK(weft_graph_io_load(g2, text, strlen(text), "t.json", &ld));
    weft_graph_io_free_text(text);
    weft_tensor_t *tx = tens(WEFT_FLOAT64, 1, s2, (double[]){1, 2});
    weft_tensor_t *r = run1(1, ld.inputs, &tx, ld.outputs[0]);
    assert_vals(r, 2, (double[]){3, 6});
    weft_tensor_release(r);
    r = NULL;
    /* and profiles name it */
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.profile = true;
    weft_function_t *f = NULL;
    OK(weft_function_compile(1, ld.inputs, 1, ld.outputs, 0, NULL, &o, &f));
    OK(weft_function_call(f, 1, &tx, 1, &r));
    char *report = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&report, &len);
    OK(weft_function_print_profile(f, mem));
    fclose(mem);
    assert_non_null(strstr(report, "TestAxpy"));
    free(report);
    OK(weft_function_destroy(f));
    weft_tensor_release(r);
    weft_tensor_release(tx);
    weft_graph_io_clear(&ld);
    weft_graph_destroy(g2);
}

static void test_custom_class_bad_descriptions(void **state)
{
    (void)state;
    const weft_op_class_t *cls = (const weft_op_class_t *)&cls;
    weft_custom_op_desc_t d = WEFT_CUSTOM_OP_DESC_INIT;
    assert_int_equal(weft_custom_op_class(&d, &cls), WEFT_EINVAL);
    assert_null(cls);
    assert_string_equal(weft_custom_op_last_error(), "a custom op needs a name");
    d.name = "TestBad";
    assert_int_equal(weft_custom_op_class(&d, &cls), WEFT_EINVAL);
    assert_string_equal(weft_custom_op_last_error(),
                        "TestBad: give exactly one of scalar, chunk and kernel (got 0)");
    d.scalar = mul2;
    d.n_inputs = 8;
    assert_int_equal(weft_custom_op_class(&d, &cls), WEFT_EINVAL);
    assert_string_equal(weft_custom_op_last_error(), "TestBad: n_inputs 8 outside [1, 7]");
    d.n_inputs = 1;
    d.shape = rowsum_shape;
    assert_int_equal(weft_custom_op_class(&d, &cls), WEFT_EINVAL);
    d.shape = NULL;
    d.dtype = 17;
    assert_int_equal(weft_custom_op_class(&d, &cls), WEFT_EINVAL);
    assert_string_equal(weft_custom_op_last_error(), "TestBad: bad dtype 17");
    d.dtype = WEFT_CUSTOM_DTYPE_AUTO;
    d.name = "Add";
    assert_int_equal(weft_custom_op_class(&d, &cls), WEFT_EALREADY);
    assert_int_equal(weft_custom_op_class(NULL, &cls), WEFT_EINVAL);
    /* the same description twice: one class; another one under that name */
    assert_ptr_equal(axpy_class(), axpy_class());
    assert_ptr_equal(weft_op_class_find("TestAxpy"), axpy_class());
    d.name = "TestAxpy";
    d.n_inputs = 2;
    assert_int_equal(weft_custom_op_class(&d, &cls), WEFT_EALREADY);
    assert_string_equal(weft_custom_op_last_error(),
                        "TestAxpy: a custom op of that name with another description exists");
    /* weft_custom_call's own checks */
    int64_t s2[1] = {2};
    weft_var_t *x = var(WEFT_FLOAT64, 1, s2);
    assert_null(weft_custom_call(g, axpy_class(), 1, &x));
    assert_string_equal(weft_graph_last_error(g), "TestAxpy takes 2 inputs, got 1");
    const weft_op_class_t *add = weft_op_class_find("Add");
    assert_null(weft_custom_call(g, add, 1, &x));
    assert_non_null(strstr(weft_graph_last_error(g), "Add is not a custom op class"));
    weft_var_t *nul[2] = {x, NULL};
    assert_null(weft_custom_call(g, axpy_class(), 2, nul));
    assert_string_equal(weft_graph_last_error(g), "TestAxpy: input 1 is NULL");
    assert_null(weft_custom_call(NULL, axpy_class(), 1, &x));
}

static void add_rows(size_t n, char *const *p, const int64_t *s, void *arg)
{
    (*(int *)arg)++;
    double *o = (double *)p[0];
    const double *a = (const double *)p[1], *b = (const double *)p[2];
    for (size_t i = 0; i < n; i++)
        o[(int64_t)i * s[0]] = a[(int64_t)i * s[1]] + b[(int64_t)i * s[2]];
}

/* weft_tensor_iter_rows over broadcast operands, and its errors. */
static void test_tensor_iter_rows_walks_broadcast_operands(void **state)
{
    (void)state;
    int64_t s23[2] = {2, 3}, s3[1] = {3}, s2[1] = {2};
    weft_tensor_t *out, *a = tens(WEFT_FLOAT64, 2, s23, (double[]){1, 2, 3, 4, 5, 6});
    weft_tensor_t *b = tens(WEFT_FLOAT64, 1, s3, (double[]){10, 20, 30});
    weft_tensor_t *bad = tens(WEFT_FLOAT64, 1, s2, (double[]){1, 2});
    OK(weft_tensor_zeros(WEFT_FLOAT64, 2, s23, &out));
    weft_tensor_t *ops[3] = {out, a, b}, *mism[3] = {out, a, bad};
    int rows = 0;
    OK(weft_tensor_iter_rows(3, ops, add_rows, &rows));
    assert_int_equal(rows, 2); /* b is re-read per row: one call per row of out */
    assert_vals(out, 6, (double[]){11, 22, 33, 14, 25, 36});
    assert_int_equal(weft_tensor_iter_rows(3, ops, NULL, NULL), WEFT_EINVAL);
    assert_string_equal(weft_tensor_last_error(),
                        "iter: NULL tensors or function, or 3 operands (1 to 8)");
    assert_int_equal(weft_tensor_iter_rows(3, mism, add_rows, &rows), WEFT_ESHAPE);
    assert_string_equal(weft_tensor_last_error(),
                        "iter: operand 2 (float64[2]) does not broadcast to float64[2,3]");
    assert_int_equal(rows, 2);
    int ndim;
    int64_t shape[WEFT_MAX_NDIM];
    OK(weft_tensor_broadcast_shape(2, (weft_tensor_t *[]){b, a}, &ndim, shape));
    assert_int_equal(ndim, 2);
    assert_int_equal(shape[0], 2);
    assert_int_equal(shape[1], 3);
    assert_int_equal(weft_tensor_broadcast_shape(2, (weft_tensor_t *[]){a, bad}, &ndim, shape),
                     WEFT_ESHAPE);
    weft_tensor_release(out);
    weft_tensor_release(a);
    weft_tensor_release(b);
    weft_tensor_release(bad);
}

/* A kernel's contiguous copy of a strided input comes from the function's
 * buffer pool: warm calls allocate nothing (weft_tensor_contiguous would). */
static void test_kernel_contiguous_copy_is_pooled(void **state)
{
    (void)state;
    int64_t s[2] = {64, 32};
    weft_var_t *x = var(WEFT_FLOAT64, 2, s), *xt;
    OKV(xt = weft_transpose(g, x));
    weft_var_t *y = weft_custom_call(g, rowsum_class(), 1, &xt);
    weft_function_t *f = compile(1, &x, 1, &y, 2);
    weft_tensor_t *tx, *ty;
    OK(weft_tensor_full(WEFT_FLOAT64, 2, s, 0.5, &tx));
    int64_t n = 32;
    OK(weft_tensor_zeros(WEFT_FLOAT64, 1, &n, &ty));
    for (int k = 0; k < 3; k++) OK(weft_function_call(f, 1, &tx, 1, &ty));
    alloc_count_start();
    OK(weft_function_call(f, 1, &tx, 1, &ty));
    assert_int_equal(alloc_count_stop(), 0);
    assert_true(weft_tensor_flat_get(ty, 31) == 32.0);
    /* the control: the unpooled helper allocates on every use */
    weft_tensor_t *view, *c;
    OK(weft_tensor_view(tx, 2, (int64_t[]){32, 64}, (int64_t[]){1, 32}, 0, &view));
    alloc_count_start();
    OK(weft_tensor_contiguous(view, &c));
    assert_true(alloc_count_stop() > 0);
    weft_tensor_release(c);
    weft_tensor_release(view);
    assert_int_equal(weft_kernel_contiguous(NULL, tx, &c), WEFT_EINVAL);
    OK(weft_function_destroy(f));
    weft_tensor_release(tx);
    weft_tensor_release(ty);
}

/* One run of: a custom class made (a new name per run), applied, compiled
 * and called, with allocation k failing (0: none). Returns the allocations
 * made; *res the result's last element (0 on failure). */
static long faulted_once(long k, weft_status_t *st, char *msg, size_t cap, double *res)
{
    static int serial;
    char name[32];
    snprintf(name, sizeof name, "TestFault%d", serial++);
    weft_custom_op_desc_t d = WEFT_CUSTOM_OP_DESC_INIT;
    d.name = name;
    d.n_inputs = 2;
    d.scalar = axpy;
    d.user = &two;
    int64_t s4[1] = {4};
    weft_tensor_t *tx = tens(WEFT_FLOAT64, 1, s4, (double[]){1, 2, 3, 4}), *r = NULL;
    const weft_op_class_t *cls = NULL;
    weft_graph_t *g2 = NULL;
    weft_function_t *f = NULL;
    const weft_type_t *t;
    weft_var_t *x = NULL, *y = NULL, *xx[2];
    *res = 0;
    snprintf(msg, cap, "out of memory (no context to say so)");
    alloc_fail_at(k);
    *st = weft_custom_op_class(&d, &cls);
    if (*st != WEFT_OK) snprintf(msg, cap, "%s", weft_custom_op_last_error());
    if (*st == WEFT_OK) *st = weft_graph_create(NULL, &g2);
    if (*st == WEFT_OK) *st = weft_type_tensor(g2, WEFT_FLOAT64, 1, s4, &t);
    if (*st == WEFT_OK) { /* the construction, checked once */
        xx[0] = xx[1] = x = weft_var_create(g2, t, "x");
        y = weft_custom_call(g2, cls, 2, xx);
        *st = weft_graph_error(g2);
        if (*st != WEFT_OK) snprintf(msg, cap, "%s", weft_graph_error_message(g2));
    }
    if (*st == WEFT_OK) {
        *st = weft_function_compile(1, &x, 1, &y, 0, NULL, NULL, &f);
        if (*st != WEFT_OK) snprintf(msg, cap, "%s", weft_function_last_error(NULL));
    }
    if (*st == WEFT_OK) {
        *st = weft_function_call(f, 1, &tx, 1, &r);
        if (*st != WEFT_OK) snprintf(msg, cap, "%s", weft_function_last_error(f));
    }
    if (*st == WEFT_OK) *res = weft_tensor_flat_get(r, 3);
    weft_tensor_release(r);
    OK(weft_function_destroy(f));
    weft_graph_destroy(g2);
    long n = alloc_count_stop();
    weft_tensor_release(tx);
    return n;
}

/* Allocation k fails, for every k: WEFT_ENOMEM saying so, or the same
 * result; nothing leaks (LeakSanitizer in the ASan build). */
static void test_custom_allocation_failures_are_clean(void **state)
{
    (void)state;
    fault_sweep(faulted_once, 12, 10);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_custom_scalar_broadcasts_strides_and_dtypes),
        T(test_custom_chunk_gets_contiguous_arrays_of_the_compute_dtype),
        T(test_custom_elemwise_same_bits_at_any_worker_count),
        T(test_custom_kernel_with_shape_function),
        T(test_custom_kernel_with_two_outputs),
        T(test_custom_grad_callback_through_weft_grad),
        T(test_custom_kernel_error_names_the_op),
        T(test_custom_op_round_trips_through_json),
        T(test_custom_class_bad_descriptions),
        T(test_tensor_iter_rows_walks_broadcast_operands),
        T(test_kernel_contiguous_copy_is_pooled),
        T(test_custom_allocation_failures_are_clean),
    };
    return cmocka_run_group_tests_name("custom_op", tests, NULL, NULL);
}
