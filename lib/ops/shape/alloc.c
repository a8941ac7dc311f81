/* Alloc{shape}: PyTensor's Alloc, its input broadcast to a constant shape
 * (right-aligned as NumPy's broadcast_to: each of the input's axes has length
 * 1 or the target's) in a new tensor. The kernel only moves bytes, so it
 * serves every dtype by element size: output rows (the last axis) are cut
 * into fixed ranges over the pool (the grain depends on the shape alone) and
 * each row is a memcpy of the input's row or one element repeated.
 * Gradient: gz summed over the new leading axes and the broadcast ones.
 * The symbolic form (props sym, weft/symshape.h) takes the sizes as inputs
 * 1..ndim, read at run time; they are disconnected for gradients. */
#include <stdio.h>
#include <string.h>

#include "array_int.h"
#include "graph/ctor_int.h"
#include "ops_int.h"
#include "symshape_int.h"
#include "weft/array_ops.h"
#include "weft/json_props.h"
#include "weft/kernel.h"
#include "weft/reduce.h"
#include "weft/symshape.h"
#include "weft/tensor.h"

/* Bytes of output per range at least (smaller is not worth a wake-up). */
#define ALLOC_MIN_GRAIN ((size_t)1 << 16)

static int alloc_props_print(const void *props, char *buf, size_t cap)
{
    const weft__alloc_props_t *p = props;
    if (p->sym) return snprintf(buf, cap, "shape=inputs 1..%d", (int)p->ndim);
    int n = snprintf(buf, cap, "shape=(");
    for (int d = 0; d < p->ndim; d++) {
        n += snprintf(buf + ((size_t)n < cap ? (size_t)n : cap),
                      (size_t)n < cap ? cap - (size_t)n : 0, d ? ",%lld" : "%lld",
                      (long long)p->shape[d]);
    }
    return n + snprintf(buf + ((size_t)n < cap ? (size_t)n : cap),
                        (size_t)n < cap ? cap - (size_t)n : 0, ")");
}

static weft_status_t alloc_to_json(const weft_op_t *op, weft_json_props_t *p)
{
    const weft__alloc_props_t *a = weft_op_props(op);
    if (a->sym) return weft_json_props_put_int(p, "shape_inputs", a->ndim);
    return weft_json_props_put_int_array(p, "shape", a->shape, (size_t)a->ndim);
}

static weft_status_t alloc_from_json(weft_graph_t *g, const weft_op_class_t *cls,
                                     const weft_json_props_t *p, const weft_op_t **out)
{
    weft__alloc_props_t a;
    memset(&a, 0, sizeof a);
    size_t n = 0;
    if (weft_json_props_has(p, "shape_inputs")) { /* the symbolic form */
        int64_t nd = 0;
        weft_status_t s = weft_json_props_get_int(p, "shape_inputs", &nd);
        if (s == WEFT_OK && (nd < 0 || nd > WEFT_MAX_NDIM))
            return weft_json_props_error(p, WEFT_EINVAL, "shape_inputs: %lld outside [0, %d]",
                                         (long long)nd, WEFT_MAX_NDIM);
        a.ndim = (int32_t)nd;
        a.sym = 1;
        return s == WEFT_OK ? weft_op_create(g, cls, &a, out) : s;
    }
    weft_status_t s = weft_json_props_get_int_array(p, "shape", a.shape, WEFT_MAX_NDIM, &n);
    for (size_t i = 0; s == WEFT_OK && i < n; i++) {
        if (a.shape[i] < 0) {
            return weft_json_props_error(p, WEFT_ESHAPE, "shape[%zu]: bad length %lld", i,
                                         (long long)a.shape[i]);
        }
    }
    a.ndim = (int32_t)n;
    return s == WEFT_OK ? weft_op_create(g, cls, &a, out) : s;
}

/* The output's static lengths: props' shape, or each size input's static
 * value (weft__size_static). */
static weft_status_t alloc_target(weft_graph_t *g, const weft__alloc_props_t *p, size_t n_in,
                                  weft_var_t *const *inputs, int64_t *shape)
{
    if (n_in != (p->sym ? (size_t)p->ndim + 1 : 1))
        return weft_graph_set_error(g, WEFT_EINVAL, "Alloc: takes %d inputs, got %zu",
                                    p->sym ? (int)p->ndim + 1 : 1, n_in);
    for (int d = 0; d < p->ndim; d++) {
        if (!p->sym) {
            shape[d] = p->shape[d];
            continue;
        }
        const weft_type_t *t = weft_var_type(inputs[d + 1]);
        if (weft_type_kind(t) != WEFT_TYPE_TENSOR || weft_type_ndim(t) != 0 ||
            !weft__dtype_is_int(weft_type_dtype(t)))
            return weft_graph_set_error(g, WEFT_ETYPE, "Alloc: input %d (size %d) is not an "
                                        "integer 0-d tensor", d + 1, d);
        shape[d] = weft__size_static(inputs[d + 1]);
    }
    return WEFT_OK;
}

static weft_status_t alloc_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                     weft_var_t *const *inputs, size_t *n_out,
                                     const weft_type_t **out_types)
{
    const weft__alloc_props_t *p = weft_op_props(op);
    const weft_type_t *t = n_in >= 1 ? weft_var_type(inputs[0]) : NULL;
    if (!t || weft_type_kind(t) != WEFT_TYPE_TENSOR || weft_type_ndim(t) > p->ndim) {
        return weft_graph_set_error(g, WEFT_ETYPE, "Alloc: needs a tensor input 0 of at most "
                                    "%d dims", (int)p->ndim);
    }
    int64_t shape[WEFT_MAX_NDIM];
    weft_status_t st = alloc_target(g, p, n_in, inputs, shape);
    if (st != WEFT_OK) return st;
    int lead = p->ndim - weft_type_ndim(t);
    for (int d = 0; d < weft_type_ndim(t); d++) {
        int64_t len = weft_type_dim(t, d), want = shape[lead + d];
        if (len >= 0 && len != 1 && want >= 0 && len != want) {
            char vb[256];
            weft_var_print(inputs[0], vb, sizeof vb);
            return weft_graph_set_error(g, WEFT_ESHAPE, "Alloc: input %s has length %lld on "
                                        "axis %d, which does not broadcast to %lld", vb,
                                        (long long)len, d, (long long)want);
        }
        /* an unknown size with a static non-1 input length: it must be that */
        if (want < 0 && len >= 0 && len != 1) shape[lead + d] = len;
    }
    *n_out = 1;
    return weft_type_tensor(g, weft_type_dtype(t), p->ndim, shape, &out_types[0]);
}

typedef struct alloc_plan {
    int ndim;
    const int64_t *shape;
    int64_t sv[WEFT_MAX_NDIM]; /* input byte strides per output axis (0: broadcast) */
    size_t es;
    const char *src;
    char *dst;
} alloc_plan_t;

static weft_status_t alloc_range(void *arg, size_t begin, size_t end)
{
    const alloc_plan_t *s = arg;
    int last = s->ndim - 1;
    size_t len = (size_t)s->shape[last], row = len * s->es;
    for (size_t r = begin; r < end; r++) {
        int64_t off = 0;
        size_t j = r;
        for (int d = last - 1; d >= 0; d--) {
            off += (int64_t)(j % (size_t)s->shape[d]) * s->sv[d];
            j /= (size_t)s->shape[d];
        }
        char *o = s->dst + r * row;
        if (s->sv[last] != 0) {
            memcpy(o, s->src + off, row);
            continue;
        }
        for (size_t k = 0; k < len; k++) {
            memcpy(o + k * s->es, s->src + off, s->es);
        }
    }
    return WEFT_OK;
}

static weft_status_t alloc_fill(int ndim, const int64_t *shape, const weft_tensor_t *v,
                                weft_tensor_t *out, weft_kernel_ctx_t *ctx)
{
    alloc_plan_t s = {ndim, shape, {0}, weft_dtype_size(weft_tensor_dtype(v)),
                      weft_tensor_data(v), weft_tensor_data(out)};
    int lead = ndim - weft_tensor_ndim(v);
    for (int d = 0; d < weft_tensor_ndim(v); d++) {
        int64_t len = weft_tensor_dim(v, d);
        if (len != 1 && len != shape[lead + d]) {
            return weft_kernel_error(ctx, WEFT_ESHAPE, "Alloc: input has length %lld on axis "
                                     "%d, which does not broadcast to %lld", (long long)len, d,
                                     (long long)shape[lead + d]);
        }
        s.sv[lead + d] = len == 1 ? 0 : weft_tensor_stride(v, d) * (int64_t)s.es;
    }
    size_t total = weft_tensor_size(out);
    if (total == 0) {
        return WEFT_OK;
    }
    if (ndim == 0) {
        memcpy(s.dst, s.src, s.es);
        return WEFT_OK;
    }
    size_t row = (size_t)shape[ndim - 1] * s.es, rows = total * s.es / row;
    size_t grain = (rows + 15) / 16, min_rows = (ALLOC_MIN_GRAIN + row - 1) / row;
    return weft_kernel_parallel_for(ctx, rows, grain > min_rows ? grain : min_rows, alloc_range,
                                    &s);
}

static weft_status_t alloc_perform(const weft_apply_t *node, weft_tensor_t *const *inputs,
                                   weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    const weft__alloc_props_t *p = weft_op_props(weft_apply_op(node));
    weft_tensor_t *c = NULL;
    int64_t shape[WEFT_MAX_NDIM];
    for (int d = 0; d < p->ndim; d++) {
        shape[d] = p->sym ? weft__tensor_int_at(inputs[d + 1], 0) : p->shape[d];
        if (shape[d] < 0)
            return weft_kernel_error(ctx, WEFT_EINVAL, "Alloc: size %d (input %d) is %lld", d,
                                     d + 1, (long long)shape[d]);
    }
    weft_status_t st = weft_kernel_alloc_output(ctx, &outputs[0], weft_tensor_dtype(inputs[0]),
                                                p->ndim, shape);
    if (st == WEFT_OK) {
        st = weft_kernel_contiguous(ctx, inputs[0], &c);
    }
    if (st == WEFT_OK) {
        st = alloc_fill(p->ndim, shape, c, outputs[0], ctx);
    }
    weft_kernel_contiguous_done(ctx, inputs[0], c);
    return st;
}

/* gz summed over the leading axes the input lacks, then over its broadcast ones. */
static weft_status_t alloc_grad(weft_graph_t *g, const weft_apply_t *node,
                                weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    const weft__alloc_props_t *p = weft_op_props(weft_apply_op(node));
    weft_var_t *v = weft_apply_input(node, 0), *gz = output_grads[0];
    int lead = p->ndim - weft_type_ndim(weft_var_type(v)), axes[WEFT_MAX_NDIM];
    for (size_t i = 0; i < weft_apply_n_inputs(node); i++) {
        input_grads[i] = NULL; /* the sizes: disconnected */
    }
    if (!gz) {
        return WEFT_OK;
    }
    for (int d = 0; d < lead; d++) {
        axes[d] = d;
    }
    weft_status_t st = WEFT_OK;
    if (lead > 0) {
        st = weft__got(g, gz = weft_sum(g, gz, lead, axes, false));
    }
    return st == WEFT_OK ? weft__grad_reduce_to(g, gz, v, &input_grads[0]) : st;
}

static bool alloc_connected(const weft_apply_t *node, size_t in, size_t out)
{
    (void)node;
    (void)out;
    return in == 0;
}

bool weft_alloc_sym_op_info(const weft_op_t *op, int *ndim)
{
    if (!op || weft_op_class(op) != &weft__alloc_class) {
        return false;
    }
    const weft__alloc_props_t *p = weft_op_props(op);
    if (ndim) {
        *ndim = p->ndim;
    }
    return p->sym != 0;
}

const weft_op_class_t weft__alloc_class = {
    .size = sizeof(weft_op_class_t),
    .name = "Alloc",
    .props_size = sizeof(weft__alloc_props_t),
    .props_print = alloc_props_print,
    .props_to_json = alloc_to_json,
    .props_from_json = alloc_from_json,
    .make_node = alloc_make_node,
    .perform = alloc_perform,
    .connection_pattern = alloc_connected,
    .grad = alloc_grad,
};
