/* The lane reductions Any, All, Var, Std, LogSumExp, NanSum, NanMean, NanMax
 * and NanMin (weft/reduce.h; one class each, props: the reduction props plus
 * ddof): constructor, type inference, perform (the lane engine of
 * lred_kernels.c), JSON props and gradients (composed from existing ops).
 * Argmax/Argmin over several axes go through here to argmax.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "graph/ctor_int.h"
#include "lred_int.h"
#include "props_fields_int.h"
#include "reduce_ops_int.h"
#include "weft/elemwise.h"
#include "weft/shape_ops.h"

#define LRED_FIRST WEFT_LREDUCE_ANY
#define LRED_N (WEFT_LREDUCE_KIND_COUNT - LRED_FIRST)

static const char *const lred_names[WEFT_LREDUCE_KIND_COUNT] = {
    "Argmax", "Argmin", "Any", "All", "Var", "Std", "LogSumExp", "NanSum", "NanMean", "NanMax",
    "NanMin"};

bool weft__lred_dtype_ok(weft_dtype_t dt)
{
#define LRED_DTYPE_CASE(T, sfx, DT) case DT:
    switch (dt) {
        WEFT__LRED_DTYPES(LRED_DTYPE_CASE)
        return true;
    default: return false;
    }
#undef LRED_DTYPE_CASE
}

weft_status_t weft__lred_check_input(weft_graph_t *g, const char *opname,
                                     const weft__reduce_props_t *p, size_t n_in,
                                     weft_var_t *const *inputs)
{
    weft_status_t st = weft__input_check(g, opname, p, n_in, inputs, 1, true);
    weft_dtype_t dt = st == WEFT_OK ? weft_type_dtype(weft_var_type(inputs[0])) : WEFT_BOOL;
    if (st == WEFT_OK && !weft__lred_dtype_ok(dt))
        return weft_graph_set_error(g, WEFT_ETYPE, "%s: input 0 is %s (%s is not supported by "
                                    "%s)", opname, weft_dtype_name(dt), weft_dtype_name(dt),
                                    opname);
    return st;
}

weft_status_t weft__lred_input_type(weft_graph_t *g, weft_var_t *x, const char *opname,
                                    const char *file, int line, int *ndim)
{
    weft_status_t st = weft__input_type_check(g, x, opname, file, line, true, ndim);
    weft_dtype_t dt = st == WEFT_OK ? weft_type_dtype(weft_var_type(x)) : WEFT_BOOL;
    if (st == WEFT_OK && !weft__lred_dtype_ok(dt))
        return weft_graph_set_error(g, WEFT_ETYPE, "%s (at %s:%d): input is %s (%s is not "
                                    "supported by %s)", opname, file, line, weft_dtype_name(dt),
                                    weft_dtype_name(dt), opname);
    return st;
}

static bool needs_nonempty(weft_lreduce_kind_t kind)
{
    return kind == WEFT_LREDUCE_ARGMAX || kind == WEFT_LREDUCE_ARGMIN ||
           kind == WEFT_LREDUCE_NANMAX || kind == WEFT_LREDUCE_NANMIN;
}

weft_status_t weft__lred_perform(weft_kernel_ctx_t *ctx, weft_lreduce_kind_t kind,
                                 const weft__reduce_props_t *p, double ddof,
                                 const weft_tensor_t *x, weft_tensor_t **outputs)
{
    static const char *const ops[] = {"argmax", "argmin", "", "", "", "", "", "", "",
                                      "fmax", "fmin"};
    const char *name = lred_names[kind];
    if (!x || weft_tensor_ndim(x) != p->ndim || !weft__lred_dtype_ok(weft_tensor_dtype(x))) {
        return weft_kernel_error(ctx, WEFT_ESHAPE, "%s: input has %d dims or an unsupported "
                                 "dtype, expected %d dims", name, x ? weft_tensor_ndim(x) : -1,
                                 (int)p->ndim);
    }
    weft_status_t st = WEFT_OK;
    if (needs_nonempty(kind)) {
        st = weft__reduce_check_nonempty(ctx, name, ops[kind], p, x);
    }
    int64_t out_shape[WEFT_MAX_NDIM];
    int nd = weft__reduce_out_shape(p, weft_tensor_shape(x), out_shape);
    weft_dtype_t dout = weft__lred_out_dtype(kind, weft_tensor_dtype(x));
    if (st == WEFT_OK) {
        st = weft_kernel_alloc_output(ctx, &outputs[0], dout, nd, out_shape);
    }
    if (st != WEFT_OK) {
        return st;
    }
    weft__lane_job_t job;
    weft__lane_job_init(&job, kind, ddof, x, p->axes, outputs[0]);
    return weft__lane_reduce(ctx, &job);
}

static weft_status_t lred_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                    weft_var_t *const *inputs, size_t *n_out,
                                    const weft_type_t **out_types)
{
    const weft__lred_props_t *p = weft_op_props(op);
    weft_status_t st = weft__lred_check_input(g, weft_op_name(op), &p->r, n_in, inputs);
    if (st != WEFT_OK) {
        return st;
    }
    const weft_type_t *t = weft_var_type(inputs[0]);
    int64_t shape[WEFT_MAX_NDIM], out_shape[WEFT_MAX_NDIM];
    for (int d = 0; d < p->r.ndim; d++) {
        shape[d] = weft_type_dim(t, d);
    }
    int nd = weft__reduce_out_shape(&p->r, shape, out_shape);
    weft_dtype_t dt = weft__lred_out_dtype((weft_lreduce_kind_t)p->r.kind, weft_type_dtype(t));
    *n_out = 1;
    return weft_type_tensor(g, dt, nd, out_shape, &out_types[0]);
}

static weft_status_t lred_perform(const weft_apply_t *node, weft_tensor_t *const *inputs,
                                  weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    const weft__lred_props_t *p = weft_op_props(weft_apply_op(node));
    return weft__lred_perform(ctx, (weft_lreduce_kind_t)p->r.kind, &p->r, p->ddof, inputs[0],
                              outputs);
}

static int lred_props_print(const void *props, char *buf, size_t cap)
{
    const weft__lred_props_t *p = props;
    int n = weft__reduce_props_print(&p->r, buf, cap);
    bool dd = p->r.kind == WEFT_LREDUCE_VAR || p->r.kind == WEFT_LREDUCE_STD;
    if (!dd || n < 0 || (size_t)n >= cap) {
        return n;
    }
    return n + snprintf(buf + n, cap - (size_t)n, ", ddof=%g", p->ddof);
}

/* ---- JSON: {"ndim": 2, "axes": [1], "keepdims": false[, "ddof": 1.0]} ---- */

#define LRED_FIELDS3                                                                  \
    WEFT__PROPS_FIELD("ndim", WEFT__FIELD_I32, weft__lred_props_t, r.ndim),           \
        WEFT__PROPS_FIELD("axes", WEFT__FIELD_MASK, weft__lred_props_t, r.axes),      \
        WEFT__PROPS_FIELD("keepdims", WEFT__FIELD_I32_BOOL, weft__lred_props_t, r.keepdims)
static const weft__props_fields_t lred_fields = {sizeof(weft__lred_props_t), {LRED_FIELDS3}};
static const weft__props_fields_t lred_fields_ddof = {
    sizeof(weft__lred_props_t),
    {LRED_FIELDS3, WEFT__PROPS_FIELD("ddof", WEFT__FIELD_F64, weft__lred_props_t, ddof)}};

static const weft__props_fields_t *fields_of(weft_lreduce_kind_t kind)
{
    bool dd = kind == WEFT_LREDUCE_VAR || kind == WEFT_LREDUCE_STD;
    return dd ? &lred_fields_ddof : &lred_fields;
}

static weft_status_t lred_to_json(const weft_op_t *op, weft_json_props_t *p)
{
    const weft__lred_props_t *r = weft_op_props(op);
    return weft__props_fields_put(p, fields_of((weft_lreduce_kind_t)r->r.kind), r);
}

static weft_status_t lred_from_json(weft_graph_t *g, const weft_op_class_t *cls,
                                    const weft_json_props_t *p, const weft_op_t **out)
{
    weft__lred_props_t r;
    memset(&r, 0, sizeof r);
    r.r.kind = (int32_t)(cls - weft__lred_classes) + LRED_FIRST;
    weft_status_t s = weft__props_fields_get(p, fields_of((weft_lreduce_kind_t)r.r.kind), &r);
    if (s == WEFT_OK && (r.r.ndim < 0 || r.r.ndim > WEFT_MAX_NDIM ||
                         (r.r.ndim < 32 && (r.r.axes >> r.r.ndim) != 0))) {
        s = weft_json_props_error(p, WEFT_EPARSE, "axes: beyond ndim %d", (int)r.r.ndim);
    }
    return s != WEFT_OK ? s : weft_op_create(g, cls, &r, out);
}

/* ---- gradients ------------------------------------------------------------ */

/* v (the reduction's output or its gradient) with the reduced axes back as
 * length-1 axes, so it broadcasts against x. */
static weft_var_t *keep_axes(weft_graph_t *g, const weft__reduce_props_t *p, weft_var_t *v)
{
    if (p->keepdims) {
        return v;
    }
    int order[WEFT_MAX_NDIM], k = 0;
    for (int d = 0; d < p->ndim; d++) {
        order[d] = (p->axes >> d) & 1u ? WEFT_DIMSHUFFLE_NEW : k++;
    }
    return weft_dimshuffle(g, v, p->ndim, order);
}

/* kind of x over p's axes, keeping them (length 1). */
static weft_var_t *reduce_keep(weft_graph_t *g, weft_reduce_kind_t kind,
                               const weft__reduce_props_t *p, weft_var_t *x)
{
    int axes[WEFT_MAX_NDIM];
    size_t n = 0;
    for (int d = 0; d < p->ndim; d++) {
        if ((p->axes >> d) & 1u) axes[n++] = d;
    }
    return weft_reduce_at(g, kind, x, n, axes, true, __FILE__, __LINE__);
}

/* Var: gz * 2 (x - mean) / (N - ddof); Std: gz (x - mean) / ((N - ddof) std).
 * N counts the reduced elements at run time (a Sum of ones). */
static weft_var_t *var_grad(weft_graph_t *g, const weft__lred_props_t *p, weft_var_t *x,
                            weft_var_t *y, weft_var_t *gk)
{
    weft_var_t *ones = weft_scalar_binary(g, WEFT_ELEMWISE_ADD, 1.0, weft_zeros_like(g, x));
    weft_var_t *denom = weft_binary_scalar(g, WEFT_ELEMWISE_SUB,
                                           reduce_keep(g, WEFT_REDUCE_SUM, &p->r, ones), p->ddof);
    weft_var_t *dev = weft_binary(g, WEFT_ELEMWISE_SUB, x,
                                  reduce_keep(g, WEFT_REDUCE_MEAN, &p->r, x));
    if (p->r.kind == WEFT_LREDUCE_VAR) {
        dev = weft_binary_scalar(g, WEFT_ELEMWISE_MUL, dev, 2.0);
    } else {
        denom = weft_binary(g, WEFT_ELEMWISE_MUL, denom, keep_axes(g, &p->r, y));
    }
    return weft_binary(g, WEFT_ELEMWISE_MUL, gk, weft_binary(g, WEFT_ELEMWISE_DIV, dev, denom));
}

/* NanMax/NanMin: Max/Min's rule (ReduceGrad) on x with NaNs replaced by the
 * value that never wins (-inf / +inf). */
static weft_status_t nanext_grad(weft_graph_t *g, const weft__lred_props_t *p, weft_var_t *x,
                                 weft_var_t *isnan_x, weft_var_t *gz, const char *file,
                                 int line, weft_var_t **out)
{
    bool hi = p->r.kind == WEFT_LREDUCE_NANMAX;
    weft_var_t *fill = weft_scalar_binary(g, WEFT_ELEMWISE_ADD, hi ? -INFINITY : INFINITY,
                                          weft_zeros_like(g, x));
    weft_var_t *xc = weft_switch(g, isnan_x, fill, x);
    weft__reduce_props_t r = p->r;
    r.kind = hi ? WEFT_REDUCE_MAX : WEFT_REDUCE_MIN;
    weft_status_t st = weft__got(g, xc);
    return st != WEFT_OK ? st : weft__reduce_grad_build(g, &r, xc, gz, file, line, out);
}

static weft_status_t lred_grad(weft_graph_t *g, const weft_apply_t *node,
                               weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    const weft__lred_props_t *p = weft_op_props(weft_apply_op(node));
    weft_var_t *x = weft_apply_input(node, 0), *gz = output_grads[0];
    weft_dtype_t dt = weft_type_dtype(weft_var_type(x));
    input_grads[0] = NULL;
    if (!gz || (dt != WEFT_FLOAT32 && dt != WEFT_FLOAT64) || p->r.kind == WEFT_LREDUCE_ANY ||
        p->r.kind == WEFT_LREDUCE_ALL) {
        return WEFT_OK;
    }
    const char *file;
    int line;
    weft_apply_trace(node, &file, &line);
    weft_var_t *y = weft_apply_output(node, 0), *gk = keep_axes(g, &p->r, gz), *dx = NULL;
    weft_var_t *isnan_x = weft_binary(g, WEFT_ELEMWISE_NE, x, x);
    switch ((weft_lreduce_kind_t)p->r.kind) {
    case WEFT_LREDUCE_LOGSUMEXP: /* softmax(x) * gz */
        dx = weft_binary(g, WEFT_ELEMWISE_MUL,
                         weft_exp(g, weft_binary(g, WEFT_ELEMWISE_SUB, x, keep_axes(g, &p->r, y))),
                         gk);
        break;
    case WEFT_LREDUCE_VAR:
    case WEFT_LREDUCE_STD: dx = var_grad(g, p, x, y, gk); break;
    case WEFT_LREDUCE_NANSUM:
    case WEFT_LREDUCE_NANMEAN:
        if (p->r.kind == WEFT_LREDUCE_NANMEAN) {
            weft_var_t *ok = weft_cast(g, weft_binary(g, WEFT_ELEMWISE_EQ, x, x), dt);
            gk = weft_binary(g, WEFT_ELEMWISE_DIV, gk, reduce_keep(g, WEFT_REDUCE_SUM, &p->r, ok));
        }
        dx = weft_switch(g, isnan_x, weft_zeros_like(g, x), gk);
        break;
    default: return nanext_grad(g, p, x, isnan_x, gz, file, line, &input_grads[0]);
    }
    return weft__got(g, input_grads[0] = dx);
}

static bool lred_connected(const weft_apply_t *node, size_t in, size_t out)
{
    const weft__lred_props_t *p = weft_op_props(weft_apply_op(node));
    (void)in;
    (void)out;
    return p->r.kind != WEFT_LREDUCE_ANY && p->r.kind != WEFT_LREDUCE_ALL;
}

#define LRED_CLASS(kind)                                    \
    {                                                       \
        .size = sizeof(weft_op_class_t),                    \
        .name = lred_names_const_##kind,                    \
        .props_size = sizeof(weft__lred_props_t),           \
        .props_print = lred_props_print,                    \
        .props_to_json = lred_to_json,                      \
        .props_from_json = lred_from_json,                  \
        .make_node = lred_make_node,                        \
        .perform = lred_perform,                            \
        .connection_pattern = lred_connected,               \
        .grad = lred_grad,                                  \
    }
#define lred_names_const_ANY "Any"
#define lred_names_const_ALL "All"
#define lred_names_const_VAR "Var"
#define lred_names_const_STD "Std"
#define lred_names_const_LOGSUMEXP "LogSumExp"
#define lred_names_const_NANSUM "NanSum"
#define lred_names_const_NANMEAN "NanMean"
#define lred_names_const_NANMAX "NanMax"
#define lred_names_const_NANMIN "NanMin"
const weft_op_class_t weft__lred_classes[LRED_N] = {
    LRED_CLASS(ANY),    LRED_CLASS(ALL),     LRED_CLASS(VAR),
    LRED_CLASS(STD),    LRED_CLASS(LOGSUMEXP), LRED_CLASS(NANSUM),
    LRED_CLASS(NANMEAN), LRED_CLASS(NANMAX),  LRED_CLASS(NANMIN)};

/* ---- constructor ---------------------------------------------------------- */

static weft_status_t lred_impl(weft_graph_t *g, weft_lreduce_kind_t kind, weft_var_t *x,
                               size_t n_axes, const int *axes, double ddof, bool keepdims,
                               const char *file, int line, weft_var_t **out)
{
    *out = NULL;
    if (!g || !x || (unsigned)kind >= WEFT_LREDUCE_KIND_COUNT) {
        return g ? weft_graph_set_error(g, WEFT_EINVAL, "lreduce (at %s:%d): NULL argument or "
                                        "bad kind", file ? file : "?", line)
                 : WEFT_EINVAL;
    }
    const char *name = lred_names[kind];
    int ndim = 0;
    weft__lred_props_t p;
    memset(&p, 0, sizeof p);
    weft_status_t st = weft__lred_input_type(g, x, name, file, line, &ndim);
    for (size_t i = 0; st == WEFT_OK && axes && i < n_axes; i++) {
        int a = axes[i] < 0 ? axes[i] + ndim : axes[i];
        bool rep = false;
        for (size_t j = 0; j < i && a >= 0 && a < ndim; j++) {
            rep = rep || (axes[j] < 0 ? axes[j] + ndim : axes[j]) == a;
        }
        if (a < 0 || a >= ndim || rep) {
            st = weft__axis_error(g, name, x, axes[i], rep ? "repeated" : "out of range", ndim,
                                  file, line);
        }
    }
    if (st == WEFT_OK) { /* NULL axes with n_axes != 0; the mask */
        st = weft__reduce_axes_mask(g, name, ndim, n_axes, axes, file, line, &p.r.axes);
    }
    if (st != WEFT_OK) {
        return st;
    }
    if (kind == WEFT_LREDUCE_ARGMAX || kind == WEFT_LREDUCE_ARGMIN) {
        return weft__arg_build(g, kind == WEFT_LREDUCE_ARGMAX, x, p.r.axes, ndim, keepdims, file,
                               line, out);
    }
    p.r.kind = (int32_t)kind;
    p.r.ndim = ndim;
    p.r.keepdims = keepdims ? 1 : 0;
    p.ddof = (kind == WEFT_LREDUCE_VAR || kind == WEFT_LREDUCE_STD) ? ddof : 0.0;
    if (!isfinite(p.ddof)) {
        return weft_graph_set_error(g, WEFT_EINVAL, "%s (at %s:%d): ddof %g is not finite", name,
                                    file, line, p.ddof);
    }
    const weft_op_t *op = NULL;
    st = weft_op_create(g, &weft__lred_classes[kind - LRED_FIRST], &p, &op);
    return st == WEFT_OK ? weft__got(g, *out = weft_op_call_at(g, op, 1, &x, file, line)) : st;
}

weft_var_t *weft_lreduce_at(weft_graph_t *g, weft_lreduce_kind_t kind, weft_var_t *x,
                            size_t n_axes, const int *axes, double ddof, bool keepdims,
                            const char *file, int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t st = lred_impl(g, kind, x, n_axes, axes, ddof, keepdims, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_lreduce", file, line);
}
