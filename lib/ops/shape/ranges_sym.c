/* ARange{dtype} and Linspace{dtype, endpoint}: np.arange and np.linspace
 * whose arguments are 0-d inputs (weft/symshape.h), so the length is known
 * at run time. The values follow weft_arange / weft_linspace exactly (the
 * same fill functions, ranges.c): computed in float64 in blocks, converted
 * to the dtype. The output is split over the pool in ranges of a fixed
 * RANGE_GRAIN elements (the same bits at any worker count: each element's
 * value depends on its index alone). With constant inputs the length is
 * static and constant folding makes the node a constant.
 * Gradients (float outputs, float inputs), the length held fixed: ARange's
 * value start + i step gives start sum(gz) and step sum(i gz); Linspace's
 * start (1 - t_i) + stop t_i, t_i = i / max(num - endpoint, 1), gives
 * start sum((1 - t) gz) and stop sum(t gz). stop (ARange) and num have
 * none (disconnected). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "graph/ctor_int.h"
#include "ops_int.h"
#include "symshape_int.h"
#include "weft/json_props.h"
#include "weft/elemwise.h"
#include "weft/kernel.h"
#include "weft/reduce.h"
#include "weft/symshape.h"

#define RANGE_GRAIN ((size_t)1 << 16)
#define RANGE_BLOCK 256

typedef struct range_props {
    int32_t dtype;
    int32_t endpoint; /* Linspace only */
} range_props_t;

typedef struct range_args {
    bool linspace, endpoint;
    double start, stop, step; /* linspace: step unused */
    int64_t num;
    weft_dtype_t dtype;
} range_args_t;

/* The element count of a (validated) call, or a message in why. */
static int64_t range_len(const range_args_t *a, const char **why)
{
    double n = a->linspace ? (double)a->num : weft__arange_len(a->start, a->stop, a->step);
    if (!a->linspace && (a->step == 0 || isnan(a->step))) *why = "step is 0 or NaN";
    else if (a->linspace && a->num < 0) *why = "num is negative";
    else if (!(n <= (double)WEFT__RANGE_MAX_LEN)) *why = "the length is above 2^31 (or NaN)";
    else return (int64_t)n;
    return -1;
}

static double real_at(const weft_tensor_t *t)
{
    return weft_tensor_flat_get(t, 0);
}

/* A constant's value as a double (any real dtype). */
static bool const_real(const weft_var_t *v, double *out)
{
    const void *data;
    size_t nbytes;
    weft_tensor_t *t;
    if (!weft_var_is_constant(v) || weft_constant_data(v, &data, &nbytes) != WEFT_OK ||
        weft_tensor_from_data(weft_type_dtype(weft_var_type(v)), 0, NULL, NULL, (void *)data,
                              &t) != WEFT_OK)
        return false;
    *out = real_at(t);
    weft_tensor_release(t);
    return true;
}

static void args_of(const weft_op_t *op, range_args_t *a)
{
    const range_props_t *p = weft_op_props(op);
    memset(a, 0, sizeof *a);
    a->linspace = weft_op_class(op) == &weft__linspace_class;
    a->endpoint = p->endpoint != 0;
    a->dtype = (weft_dtype_t)p->dtype;
}

static weft_status_t range_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                     weft_var_t *const *inputs, size_t *n_out,
                                     const weft_type_t **out_types)
{
    range_args_t a;
    args_of(op, &a);
    const char *name = a.linspace ? "Linspace" : "ARange";
    if (n_in != 3) return weft_graph_set_error(g, WEFT_EINVAL, "%s takes 3 inputs", name);
    double v[3];
    bool known = true;
    for (size_t i = 0; i < 3; i++) {
        const weft_type_t *t = weft_var_type(inputs[i]);
        int k = weft_dtype_kind(weft_type_dtype(t));
        bool ints = a.linspace && i == 2;
        if (weft_type_kind(t) != WEFT_TYPE_TENSOR || weft_type_ndim(t) != 0 ||
            k == WEFT_KIND_COMPLEX || k == WEFT_KIND_BOOL ||
            (ints && !weft__dtype_is_int(weft_type_dtype(t))))
            return weft_graph_set_error(g, WEFT_ETYPE, "%s: input %zu is not a 0-d %s tensor",
                                        name, i, ints ? "integer" : "integer or float");
        known = known && const_real(inputs[i], &v[i]);
    }
    int64_t len = WEFT_DIM_UNKNOWN;
    if (known) {
        const char *why = NULL;
        a.start = v[0];
        a.stop = v[1];
        a.step = v[2];
        a.num = (int64_t)v[2];
        if ((len = range_len(&a, &why)) < 0)
            return weft_graph_set_error(g, WEFT_EINVAL, "%s: %s", name, why);
    }
    *n_out = 1;
    return weft_type_tensor(g, a.dtype, 1, &len, &out_types[0]);
}

typedef struct range_run {
    const range_args_t *a;
    weft__row_fn conv;
    char *dst;
    size_t es;
} range_run_t;

static weft_status_t range_block(void *arg, size_t begin, size_t end)
{
    const range_run_t *r = arg;
    double v[RANGE_BLOCK];
    for (size_t b = begin; b < end; b += RANGE_BLOCK) {
        size_t n = end - b < RANGE_BLOCK ? end - b : RANGE_BLOCK;
        if (r->a->linspace)
            weft__linspace_fill(r->a->start, r->a->stop, r->a->num, r->a->endpoint, (int64_t)b,
                                (int64_t)n, v);
        else
            weft__arange_fill(r->a->start, r->a->step, r->a->dtype, (int64_t)b, (int64_t)n, v);
        char *p[2] = {r->dst + b * r->es, (char *)v};
        r->conv(n, p, (const int64_t[2]){1, 1}, NULL);
    }
    return WEFT_OK;
}

static weft_status_t range_perform(const weft_apply_t *node, weft_tensor_t *const *inputs,
                                   weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    range_args_t a;
    args_of(weft_apply_op(node), &a);
    a.start = real_at(inputs[0]);
    a.stop = real_at(inputs[1]);
    a.step = real_at(inputs[2]);
    a.num = weft__tensor_int_at(inputs[2], 0);
    const char *why = NULL;
    int64_t n = range_len(&a, &why);
    if (n < 0)
        return weft_kernel_error(ctx, WEFT_EINVAL, "%s: %s", a.linspace ? "Linspace" : "ARange",
                                 why);
    weft_status_t st = weft_kernel_alloc_output(ctx, &outputs[0], a.dtype, 1, &n);
    if (st != WEFT_OK) return st;
    range_run_t r = {&a, weft__convert_fn(a.dtype, WEFT_FLOAT64), weft_tensor_data(outputs[0]),
                     weft_dtype_size(a.dtype)};
    return weft_kernel_parallel_for(ctx, (size_t)n, RANGE_GRAIN, range_block, &r);
}

static int range_print(const void *props, char *buf, size_t cap)
{
    const range_props_t *p = props;
    return snprintf(buf, cap, "dtype=%s, endpoint=%d", weft_dtype_name((weft_dtype_t)p->dtype),
                    (int)p->endpoint);
}

static weft_status_t range_to_json(const weft_op_t *op, weft_json_props_t *out)
{
    const range_props_t *p = weft_op_props(op);
    weft_status_t st =
        weft_json_props_put_string(out, "dtype", weft_dtype_name((weft_dtype_t)p->dtype));
    if (st == WEFT_OK && weft_op_class(op) == &weft__linspace_class)
        st = weft_json_props_put_bool(out, "endpoint", p->endpoint != 0);
    return st;
}

static bool real_dtype(weft_dtype_t dt)
{
    int k = weft_dtype_kind(dt);
    return k >= 0 && k != WEFT_KIND_COMPLEX;
}

static weft_status_t range_from_json(weft_graph_t *g, const weft_op_class_t *cls,
                                     const weft_json_props_t *in, const weft_op_t **out)
{
    const char *dname = NULL;
    weft_dtype_t dt;
    bool endpoint = false;
    weft_status_t st = weft_json_props_get_string(in, "dtype", &dname);
    if (st == WEFT_OK && (weft_dtype_parse(dname, &dt) != WEFT_OK || !real_dtype(dt)))
        return weft_json_props_error(in, WEFT_ETYPE, "dtype: '%s' is not a real dtype", dname);
    if (st == WEFT_OK && cls == &weft__linspace_class)
        st = weft_json_props_get_bool(in, "endpoint", &endpoint);
    range_props_t p = {st == WEFT_OK ? (int32_t)dt : 0, endpoint};
    return st == WEFT_OK ? weft_op_create(g, cls, &p, out) : st;
}


static bool range_connected(const weft_apply_t *node, size_t in, size_t out)
{
    (void)out;
    return weft_op_class(weft_apply_op(node)) == &weft__linspace_class ? in < 2 : in != 1;
}

/* sum(gz * w) (w NULL: sum(gz)) cast to input k's dtype, when that is a float. */
static weft_status_t grad_of(weft_graph_t *g, const weft_apply_t *node, size_t k,
                             weft_var_t *gz, weft_var_t *w, const char *file, int line,
                             weft_var_t **out)
{
    weft_dtype_t dt = weft_type_dtype(weft_var_type(weft_apply_input(node, k)));
    if (!weft__dtype_is_float(dt)) return WEFT_OK;
    weft_var_t *p = gz, *sum;
    weft_status_t st = w ? weft__got(g, p = weft_binary_at(g, WEFT_ELEMWISE_MUL, gz, w, file, line))
                         : WEFT_OK;
    if (st == WEFT_OK)
        st = weft__got(g, sum = weft_reduce_at(g, WEFT_REDUCE_SUM, p, 0, NULL, false, file, line));
    return st == WEFT_OK ? weft__got(g, *out = weft_cast_at(g, sum, dt, file, line)) : st;
}

static weft_status_t range_grad(weft_graph_t *g, const weft_apply_t *node,
                                weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    range_args_t a;
    args_of(weft_apply_op(node), &a);
    input_grads[0] = input_grads[1] = input_grads[2] = NULL;
    weft_var_t *out = weft_apply_output(node, 0), *gz = output_grads[0], *i, *t, *zero, *one;
    if (!gz || !weft__dtype_is_float(a.dtype)) return WEFT_OK;
    const char *file;
    int line;
    weft_apply_trace(node, &file, &line);
    weft_status_t st = weft__got(g, gz = weft_cast_at(g, gz, WEFT_FLOAT64, file, line));
    if (st == WEFT_OK)
        st = weft__got(g, zero = weft_constant_scalar_at(g, WEFT_INT64, 0, file, line));
    if (st == WEFT_OK)
        st = weft__got(g, one = weft_constant_scalar_at(g, WEFT_INT64, 1, file, line));
    if (st == WEFT_OK)
        st = weft__got(g, i = weft_arange_sym_at(g, zero, weft_shape_i_at(g, out, 0, file, line),
                                                 one, WEFT_FLOAT64, file, line));
    if (st != WEFT_OK) return st;
    if (!a.linspace) {
        st = grad_of(g, node, 0, gz, NULL, file, line, &input_grads[0]);
        return st == WEFT_OK ? grad_of(g, node, 2, gz, i, file, line, &input_grads[2]) : st;
    }
    weft_var_t *div = weft_cast_at(g, weft_apply_input(node, 2), WEFT_FLOAT64, file, line);
    div = weft_binary_scalar_at(g, WEFT_ELEMWISE_SUB, div, a.endpoint ? 1 : 0, file, line);
    div = weft_binary_scalar_at(g, WEFT_ELEMWISE_MAXIMUM, div, 1, file, line);
    weft_var_t *s = NULL;
    st = weft__got(g, t = weft_binary_at(g, WEFT_ELEMWISE_DIV, i, div, file, line));
    if (st == WEFT_OK)
        st = weft__got(g, s = weft_scalar_binary_at(g, WEFT_ELEMWISE_SUB, 1, t, file, line));
    if (st == WEFT_OK) st = grad_of(g, node, 1, gz, t, file, line, &input_grads[1]);
    return st == WEFT_OK ? grad_of(g, node, 0, gz, s, file, line, &input_grads[0]) : st;
}

#define RANGE_CLASS(cname)                   \
    {                                        \
        .size = sizeof(weft_op_class_t),     \
        .name = cname,                       \
        .props_size = sizeof(range_props_t), \
        .props_print = range_print,          \
        .props_to_json = range_to_json,      \
        .props_from_json = range_from_json,  \
        .make_node = range_make_node,        \
        .perform = range_perform,            \
        .connection_pattern = range_connected, \
        .grad = range_grad,                  \
    }
const weft_op_class_t weft__arange_class = RANGE_CLASS("ARange");
const weft_op_class_t weft__linspace_class = RANGE_CLASS("Linspace");

static weft_status_t range_build(weft_graph_t *g, const weft_op_class_t *cls,
                                 weft_var_t *const *in, bool endpoint, weft_dtype_t dtype,
                                 const char *file, int line, weft_var_t **out)
{
    const char *name = cls == &weft__linspace_class ? "linspace_sym" : "arange_sym";
    if (!real_dtype(dtype))
        return weft_graph_set_error(g, WEFT_ETYPE, "%s (at %s:%d): dtype %d is not a real dtype",
                                    name, file, line, (int)dtype);
    for (size_t i = 0; i < 3; i++) {
        weft_status_t st = weft__check_size_input(
            g, name, i, in[i], cls == &weft__linspace_class && i == 2, file, line);
        if (st != WEFT_OK) return st;
    }
    range_props_t p = {(int32_t)dtype, endpoint};
    const weft_op_t *op;
    weft_status_t st = weft_op_create(g, cls, &p, &op);
    return st == WEFT_OK ? weft__got(g, *out = weft_op_call_at(g, op, 3, in, file, line)) : st;
}

weft_var_t *weft_arange_sym_at(weft_graph_t *g, weft_var_t *start, weft_var_t *stop,
                               weft_var_t *step, weft_dtype_t dtype, const char *file, int line)
{
    weft_var_t *out = NULL, *in[3] = {start, stop, step};
    if (!g) return NULL;
    weft__ctor_begin(g);
    weft_status_t st = range_build(g, &weft__arange_class, in, false, dtype, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_arange_sym", file, line);
}

weft_var_t *weft_linspace_sym_at(weft_graph_t *g, weft_var_t *start, weft_var_t *stop,
                                 weft_var_t *num, bool endpoint, weft_dtype_t dtype,
                                 const char *file, int line)
{
    weft_var_t *out = NULL, *in[3] = {start, stop, num};
    if (!g) return NULL;
    weft__ctor_begin(g);
    weft_status_t st =
        range_build(g, &weft__linspace_class, in, endpoint, dtype, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_linspace_sym", file, line);
}
