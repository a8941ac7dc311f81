/* Join{axis, ndim}: NumPy's concatenate of n inputs of one dtype along an
 * axis (the constructors cast mixed dtypes to their promotion first).
 * The kernel only moves bytes, so it serves every dtype by element size: the
 * output, seen as a flat byte array, is cut into fixed byte ranges (the
 * grain depends on the output's size alone, docs/execution.md §5) and each
 * range is filled with memcpy from the rows of the inputs it covers.
 * Gradient: input i gets gz[..., off_i:off_i + len_i, ...] (a Subtensor),
 * which needs the static lengths along the axis. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array_int.h"
#include "graph/ctor_int.h"
#include "ops_int.h"
#include "props_fields_int.h"
#include "weft/array_ops.h"
#include "weft/kernel.h"
#include "weft/tensor.h"

typedef struct join_props {
    int32_t axis;
    int32_t ndim;
} join_props_t;

static const weft__props_fields_t join_fields = {
    sizeof(join_props_t),
    {WEFT__PROPS_FIELD("axis", WEFT__FIELD_I32, join_props_t, axis),
     WEFT__PROPS_FIELD("ndim", WEFT__FIELD_I32, join_props_t, ndim)}};
WEFT__PROPS_FIELDS_HOOKS(join_props, join_fields)

static int join_props_print(const void *props, char *buf, size_t cap)
{
    const join_props_t *p = props;
    return snprintf(buf, cap, "axis=%d", (int)p->axis);
}

/* Below this many output bytes a range is not worth a wake-up. */
#define JOIN_MIN_GRAIN ((size_t)1 << 16)

static weft_status_t join_input_error(weft_graph_t *g, weft_status_t st, size_t i,
                                      weft_var_t *x, const char *why)
{
    char vb[256];
    weft_var_print(x, vb, sizeof vb);
    return weft_graph_set_error(g, st, "Join: input %zu %s %s", i, vb, why);
}

/* Folds input i's static length on axis d into shape[d] (unknown stays
 * unknown on the join axis; elsewhere a known length wins and two known
 * lengths must agree). */
static weft_status_t join_fold_dim(weft_graph_t *g, const join_props_t *p, size_t i,
                                   weft_var_t *x, int d, int64_t *shape)
{
    int64_t len = weft_type_dim(weft_var_type(x), d);
    if (d == p->axis) {
        shape[d] = (shape[d] < 0 || len < 0) ? WEFT_DIM_UNKNOWN : shape[d] + len;
    } else if (len >= 0 && shape[d] >= 0 && len != shape[d]) {
        char why[192];
        snprintf(why, sizeof why, "has length %lld on axis %d where an earlier input has %lld "
                 "(all but the join axis %d must match)", (long long)len, d,
                 (long long)shape[d], (int)p->axis);
        return join_input_error(g, WEFT_ESHAPE, i, x, why);
    } else if (len >= 0) {
        shape[d] = len;
    }
    return WEFT_OK;
}

static weft_status_t join_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                    weft_var_t *const *inputs, size_t *n_out,
                                    const weft_type_t **out_types)
{
    const join_props_t *p = weft_op_props(op);
    if (n_in == 0 || p->ndim < 1 || p->ndim > WEFT_MAX_NDIM || p->axis < 0 ||
        p->axis >= p->ndim) {
        return weft_graph_set_error(g, WEFT_EINVAL, "Join: needs at least one input and "
                                    "0 <= axis < ndim <= %d (has %zu inputs, axis %d, ndim %d)",
                                    WEFT_MAX_NDIM, n_in, (int)p->axis, (int)p->ndim);
    }
    int64_t shape[WEFT_MAX_NDIM];
    weft_dtype_t dt = weft_type_dtype(weft_var_type(inputs[0]));
    for (int d = 0; d < p->ndim; d++) {
        shape[d] = d == p->axis ? 0 : WEFT_DIM_UNKNOWN;
    }
    for (size_t i = 0; i < n_in; i++) {
        const weft_type_t *t = weft_var_type(inputs[i]);
        if (weft_type_kind(t) != WEFT_TYPE_TENSOR || weft_type_ndim(t) != p->ndim ||
            weft_type_dtype(t) != dt) {
            char why[96];
            snprintf(why, sizeof why, "is not a %d-d %s tensor like input 0", (int)p->ndim,
                     weft_dtype_name(dt));
            return join_input_error(g, WEFT_ETYPE, i, inputs[i], why);
        }
        for (int d = 0; d < p->ndim; d++) {
            weft_status_t st = join_fold_dim(g, p, i, inputs[i], d, shape);
            if (st != WEFT_OK) {
                return st;
            }
        }
    }
    *n_out = 1;
    return weft_type_tensor(g, dt, p->ndim, shape, &out_types[0]);
}

/* The copy plan: output rows of row_bytes, input i filling bytes
 * [cum[i], cum[i+1]) of each row from its own contiguous rows. */
typedef struct join_plan {
    size_t n;
    size_t row_bytes;
    const size_t *cum;
    const char *const *src;
    char *dst;
} join_plan_t;

static weft_status_t join_range(void *arg, size_t begin, size_t end)
{
    const join_plan_t *s = arg;
    size_t i = 0;
    while (begin < end) {
        size_t r = begin / s->row_bytes, o = begin % s->row_bytes;
        if (o < s->cum[i]) {
            i = 0;
        }
        while (o >= s->cum[i + 1]) {
            i++;
        }
        size_t len = s->cum[i + 1] - o < end - begin ? s->cum[i + 1] - o : end - begin;
        size_t in_row = s->cum[i + 1] - s->cum[i];
        memcpy(s->dst + begin, s->src[i] + r * in_row + (o - s->cum[i]), len);
        begin += len;
    }
    return WEFT_OK;
}

/* Checks the run-time shapes and sets the output shape. */
static weft_status_t join_shapes(const join_props_t *p, size_t n, weft_tensor_t *const *in,
                                 weft_kernel_ctx_t *ctx, int64_t *shape)
{
    memcpy(shape, weft_tensor_shape(in[0]), (size_t)p->ndim * sizeof *shape);
    shape[p->axis] = 0;
    for (size_t i = 0; i < n; i++) {
        for (int d = 0; d < p->ndim; d++) {
            int64_t len = weft_tensor_dim(in[i], d);
            if (d != p->axis && len != shape[d]) {
                return weft_kernel_error(ctx, WEFT_ESHAPE, "Join: input %zu has length %lld on "
                                         "axis %d, input 0 has %lld", i, (long long)len, d,
                                         (long long)shape[d]);
            }
        }
        shape[p->axis] += weft_tensor_dim(in[i], p->axis);
    }
    return WEFT_OK;
}

static weft_status_t join_copy(const join_props_t *p, size_t n, weft_tensor_t *const *c,
                               weft_tensor_t *out, weft_kernel_ctx_t *ctx, void *mem)
{
    size_t es = weft_dtype_size(weft_tensor_dtype(out)), inner = es;
    for (int d = p->axis + 1; d < p->ndim; d++) {
        inner *= (size_t)weft_tensor_dim(out, d);
    }
    size_t *cum = mem;
    const char **src = (const char **)(cum + n + 1);
    cum[0] = 0;
    for (size_t i = 0; i < n; i++) {
        cum[i + 1] = cum[i] + (size_t)weft_tensor_dim(c[i], p->axis) * inner;
        src[i] = weft_tensor_data(c[i]);
    }
    size_t total = weft_tensor_size(out) * es;
    if (total == 0) {
        return WEFT_OK;
    }
    join_plan_t s = {n, cum[n], cum, src, weft_tensor_data(out)};
    size_t grain = (total + 15) / 16 > JOIN_MIN_GRAIN ? (total + 15) / 16 : JOIN_MIN_GRAIN;
    return weft_kernel_parallel_for(ctx, total, grain, join_range, &s);
}

static weft_status_t join_perform(const weft_apply_t *node, weft_tensor_t *const *inputs,
                                  weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    const join_props_t *p = weft_op_props(weft_apply_op(node));
    size_t n = weft_apply_n_inputs(node);
    int64_t shape[WEFT_MAX_NDIM];
    weft_status_t st = join_shapes(p, n, inputs, ctx, shape);
    if (st == WEFT_OK) {
        st = weft_kernel_alloc_output(ctx, &outputs[0], weft_tensor_dtype(inputs[0]), p->ndim,
                                      shape);
    }
    weft_tensor_t **c = st == WEFT_OK ? calloc(n, sizeof *c) : NULL;
    void *mem = c ? malloc((2 * n + 1) * sizeof(size_t)) : NULL;
    if (st == WEFT_OK && !mem) {
        st = weft_kernel_error(ctx, WEFT_ENOMEM, "Join: out of memory");
    }
    for (size_t i = 0; st == WEFT_OK && i < n; i++) {
        st = weft_kernel_contiguous(ctx, inputs[i], &c[i]);
    }
    if (st == WEFT_OK) {
        st = join_copy(p, n, c, outputs[0], ctx, mem);
    }
    for (size_t i = 0; c && i < n; i++) {
        weft_kernel_contiguous_done(ctx, inputs[i], c[i]);
    }
    free(c);
    free(mem);
    return st;
}

/* Input i gets the slice of gz it filled. */
static weft_status_t join_grad(weft_graph_t *g, const weft_apply_t *node,
                               weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    const join_props_t *p = weft_op_props(weft_apply_op(node));
    size_t n = weft_apply_n_inputs(node);
    int64_t off = 0;
    for (size_t i = 0; i < n; i++) {
        weft_var_t *x = weft_apply_input(node, i);
        int64_t len = weft_type_dim(weft_var_type(x), p->axis);
        if (len < 0) {
            return join_input_error(g, WEFT_ENOGRAD, i, x, "has no static length on the join "
                                    "axis (Join's gradient needs each input's)");
        }
        weft_status_t st = output_grads[0]
                               ? weft__array_axis_slice(g, output_grads[0], p->axis, off,
                                                        off + len, 1, __FILE__, __LINE__,
                                                        &input_grads[i])
                               : WEFT_OK;
        if (st != WEFT_OK) {
            return st;
        }
        off += len;
    }
    return WEFT_OK;
}

const weft_op_class_t weft__join_class = {
    .size = sizeof(weft_op_class_t),
    .name = "Join",
    .props_size = sizeof(join_props_t),
    .props_print = join_props_print,
    .props_to_json = join_props_to_json,
    .props_from_json = join_props_from_json,
    .make_node = join_make_node,
    .perform = join_perform,
    .grad = join_grad,
};
