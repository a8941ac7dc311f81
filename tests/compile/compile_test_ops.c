/* Test ops for tests/compile (see compile_test_ops.h). */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include "compile_test_ops.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <time.h>

atomic_int ct_counted_runs;

static weft_status_t same_type_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                         weft_var_t *const *in, size_t *n_out,
                                         const weft_type_t **out)
{
    (void)op;
    (void)n_in;
    if (n_in >= 1 && weft_type_dtype(weft_var_type(in[0])) != WEFT_FLOAT64 &&
        weft_type_ndim(weft_var_type(in[0])) != 0)
        return weft_graph_set_error(g, WEFT_ETYPE, "test ops take float64");
    *n_out = 1;
    out[0] = weft_var_type(in[0]);
    return WEFT_OK;
}

static weft_status_t alloc_like(weft_kernel_ctx_t *ctx, weft_tensor_t **cell,
                                const weft_tensor_t *x)
{
    return weft_kernel_alloc_output(ctx, cell, weft_tensor_dtype(x), weft_tensor_ndim(x),
                                    weft_tensor_shape(x));
}

static weft_status_t add_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                 weft_tensor_t **out, weft_kernel_ctx_t *ctx)
{
    (void)node;
    if (!weft_tensor_same_shape(in[0], in[1]))
        return weft_kernel_error(ctx, WEFT_ESHAPE, "input shapes differ: %lld vs %lld elements",
                                 (long long)weft_tensor_size(in[0]),
                                 (long long)weft_tensor_size(in[1]));
    weft_status_t st = alloc_like(ctx, &out[0], in[0]);
    if (st != WEFT_OK) return st;
    size_t n = weft_tensor_size(in[0]);
    for (size_t i = 0; i < n; i++) {
        double v = weft_tensor_flat_get(in[0], i) + weft_tensor_flat_get(in[1], i);
        ((double *)weft_tensor_data(out[0]))[i] = v;
    }
    return WEFT_OK;
}

static weft_status_t add_inplace_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                         weft_tensor_t **out, weft_kernel_ctx_t *ctx)
{
    (void)node;
    if (!weft_tensor_same_shape(in[0], in[1]) || !weft_tensor_is_contiguous(in[0]))
        return weft_kernel_error(ctx, WEFT_ESHAPE, "AddInplace: shapes differ");
    size_t n = weft_tensor_size(in[0]);
    double *d = weft_tensor_data(in[0]);
    for (size_t i = 0; i < n; i++) d[i] += weft_tensor_flat_get(in[1], i);
    weft_kernel_set_output(ctx, &out[0], weft_tensor_retain(in[0]));
    return WEFT_OK;
}

static size_t first_in_map(const weft_op_t *op, weft_op_alias_t *out, size_t cap)
{
    (void)op;
    if (cap) out[0] = (weft_op_alias_t){0, 0};
    return 1;
}

static weft_status_t twice_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                   weft_tensor_t **out, weft_kernel_ctx_t *ctx)
{
    (void)node;
    weft_status_t st = alloc_like(ctx, &out[0], in[0]);
    if (st != WEFT_OK) return st;
    for (size_t i = 0; i < weft_tensor_size(in[0]); i++)
        ((double *)weft_tensor_data(out[0]))[i] = 2.0 * weft_tensor_flat_get(in[0], i);
    return WEFT_OK;
}

static weft_status_t view_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                  weft_tensor_t **out, weft_kernel_ctx_t *ctx)
{
    (void)node;
    weft_tensor_t *v;
    weft_status_t st = weft_tensor_view(in[0], weft_tensor_ndim(in[0]), weft_tensor_shape(in[0]),
                                        weft_tensor_strides(in[0]), 0, &v);
    if (st != WEFT_OK) return weft_kernel_error(ctx, st, "view failed");
    weft_kernel_set_output(ctx, &out[0], v);
    return WEFT_OK;
}

static weft_status_t fail_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                  weft_tensor_t **out, weft_kernel_ctx_t *ctx)
{
    for (size_t i = 0; i < weft_tensor_size(in[0]); i++)
        if (weft_tensor_flat_get(in[0], i) < 0)
            return weft_kernel_error(ctx, WEFT_ERANGE, "negative value %g at element %zu",
                                     weft_tensor_flat_get(in[0], i), i);
    return twice_perform(node, in, out, ctx);
}

static weft_status_t sleep_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                   weft_tensor_t **out, weft_kernel_ctx_t *ctx)
{
    int us = *(const int *)weft_op_props(weft_apply_op(node));
    struct timespec ts = {0, (long)us * 1000};
    nanosleep(&ts, NULL);
    weft_status_t st = alloc_like(ctx, &out[0], in[0]);
    return st != WEFT_OK ? st : weft_tensor_copy(out[0], in[0]);
}

static weft_status_t touch_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                     weft_var_t *const *in, size_t *n_out,
                                     const weft_type_t **out)
{
    (void)op;
    (void)n_in;
    (void)in;
    *n_out = 1;
    return weft_type_tensor(g, WEFT_FLOAT64, 0, NULL, &out[0]);
}

static weft_status_t touch_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                   weft_tensor_t **out, weft_kernel_ctx_t *ctx)
{
    (void)node;
    (void)in;
    weft_status_t st = weft_kernel_alloc_output(ctx, &out[0], WEFT_FLOAT64, 0, NULL);
    if (st == WEFT_OK) *(double *)weft_tensor_data(out[0]) = 1.0;
    return st;
}

static weft_status_t badout_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                    weft_tensor_t **out, weft_kernel_ctx_t *ctx)
{
    (void)node;
    (void)in;
    int64_t shape[1] = {7};
    return weft_kernel_alloc_output(ctx, &out[0], WEFT_FLOAT64, 1, shape);
}

static weft_status_t counted_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                     weft_tensor_t **out, weft_kernel_ctx_t *ctx)
{
    (void)node;
    /* relaxed: a test counter read after the call returned */
    atomic_fetch_add_explicit(&ct_counted_runs, 1, memory_order_relaxed);
    weft_status_t st = alloc_like(ctx, &out[0], in[0]);
    return st != WEFT_OK ? st : weft_tensor_copy(out[0], in[0]);
}

#define CT_CLASS(var, nm, ...)                                                         \
    const weft_op_class_t var = {.size = sizeof(weft_op_class_t), .name = nm,                \
                                 .make_node = same_type_make_node, .perform = __VA_ARGS__}

CT_CLASS(ct_add_class, "Add", add_perform);
CT_CLASS(ct_add_inplace_class, "AddInplace", add_inplace_perform, .destroy_map = first_in_map);
CT_CLASS(ct_twice_class, "Twice", twice_perform);
CT_CLASS(ct_view_class, "View", view_perform, .view_map = first_in_map);
CT_CLASS(ct_fail_class, "Fail", fail_perform);
CT_CLASS(ct_sleep_class, "Sleep", sleep_perform, .props_size = sizeof(int));
CT_CLASS(ct_noperform_class, "NoPerform", NULL);
CT_CLASS(ct_badout_class, "BadOut", badout_perform);
CT_CLASS(ct_counted_class, "Counted", counted_perform);
const weft_op_class_t ct_touch_class = {.size = sizeof(weft_op_class_t), .name = "Touch",
                                        .make_node = touch_make_node, .perform = touch_perform};

weft_var_t *ct_call(weft_graph_t *g, const weft_op_class_t *cls, const void *props, int n,
                    weft_var_t *a, weft_var_t *b)
{
    const weft_op_t *op;
    assert_int_equal(weft_op_create(g, cls, props, &op), WEFT_OK);
    weft_var_t *in[2] = {a, b}, *out;
    assert_non_null(out = weft_op_call(g, op, (size_t)n, in));
    return out;
}

weft_var_t *ct_var(weft_graph_t *g, const char *name, int ndim, const int64_t *shape)
{
    const weft_type_t *t;
    assert_int_equal(weft_type_tensor(g, WEFT_FLOAT64, ndim, shape, &t), WEFT_OK);
    weft_var_t *v;
    assert_non_null(v = weft_var_create(g, t, name));
    return v;
}

weft_tensor_t *ct_tensor(int ndim, const int64_t *shape, double base)
{
    weft_tensor_t *t;
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, ndim, shape, &t), WEFT_OK);
    for (size_t i = 0; i < weft_tensor_size(t); i++)
        ((double *)weft_tensor_data(t))[i] = base + (double)i;
    return t;
}
