/* Sort, Argsort and Topk along one axis (weft/reduce.h "Sorting"), and
 * AxisScatter, their gradients' scatter: constructors, type inference,
 * kernels, JSON props.
 *
 * Each lane (the elements along the axis for one position of the other
 * axes) is sorted on its own by a stable merge sort of indices; lanes run
 * over the pool in ranges fixed by the shape, and a lane's result does not
 * depend on the others, so the bits are the same at any worker count (one
 * long lane is sorted by one worker). Keys are compared as double, or as
 * int64 for an int64 input (exact). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/ctor_int.h"
#include "lred_int.h"
#include "props_fields_int.h"
#include "reduce_ops_int.h"

typedef struct sort_props {
    int32_t ndim, axis, indices; /* indices: Argsort / Topk's index output */
    int32_t k;                   /* Topk: kept length (Sort/Argsort: 0) */
} sort_props_t;

/* ---- kernel --------------------------------------------------------------- */

/* The element at e (of dtype dt) as a double. */
static double load_d(weft_dtype_t dt, const char *e)
{
#define LOAD_D_CASE(T, sfx, DT) \
    case DT: {                  \
        T v;                    \
        memcpy(&v, e, sizeof v); \
        return (double)v;       \
    }
    switch (dt) {
        WEFT__LRED_DTYPES(LOAD_D_CASE)
    default: return 0.0;
    }
}

typedef struct sort_lanes {
    const weft_tensor_t *x;
    weft_tensor_t *out;
    int axis;
    bool desc, indices;
    int64_t k; /* elements written per lane */
} sort_lanes_t;

/* Key order: ascending with NaN last, or (desc) descending with NaN first;
 * ties (including -0.0 vs 0.0) are not "before", so the merge keeps them in
 * index order. */
static bool before_d(double a, double b, bool desc)
{
    if (desc) return (isnan(a) && !isnan(b)) || a > b;
    return !isnan(a) && (isnan(b) || a < b);
}

static bool before(const double *kd, const int64_t *ki, int64_t a, int64_t b, bool desc)
{
    if (ki) return desc ? ki[a] > ki[b] : ki[a] < ki[b];
    return before_d(kd[a], kd[b], desc);
}

/* Stable merge sort of idx[0..n) by key, tmp of n. */
static void merge_sort(int64_t *idx, int64_t *tmp, int64_t n, const double *kd,
                       const int64_t *ki, bool desc)
{
    for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int64_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi) {
                tmp[o++] = before(kd, ki, idx[j], idx[i], desc) ? idx[j++] : idx[i++];
            }
            while (i < mid) tmp[o++] = idx[i++];
            while (j < hi) tmp[o++] = idx[j++];
        }
        memcpy(idx, tmp, (size_t)n * sizeof *idx);
    }
}

static weft_status_t sort_range(void *arg, size_t begin, size_t end)
{
    const sort_lanes_t *s = arg;
    const weft_tensor_t *x = s->x;
    weft_dtype_t dt = weft_tensor_dtype(x);
    int64_t n = weft_tensor_dim(x, s->axis), sx = weft_tensor_stride(x, s->axis);
    int64_t so = weft_tensor_stride(s->out, s->axis);
    size_t esz = weft_dtype_size(dt);
    int64_t *idx = malloc((size_t)(3 * n + 1) * sizeof(int64_t));
    if (!idx) return WEFT_ENOMEM;
    int64_t *tmp = idx + n, *ki = dt == WEFT_INT64 ? tmp + n : NULL;
    double *kd = ki ? NULL : (double *)(tmp + n);
    for (size_t lane = begin; lane < end; lane++) {
        int64_t bx = 0, bo = 0, j = (int64_t)lane; /* lane bases over the other axes */
        for (int d = weft_tensor_ndim(x) - 1; d >= 0; d--) {
            if (d == s->axis) continue;
            int64_t i = j % weft_tensor_dim(x, d);
            j /= weft_tensor_dim(x, d);
            bx += i * weft_tensor_stride(x, d);
            bo += i * weft_tensor_stride(s->out, d);
        }
        const char *xp = (const char *)weft_tensor_data(x);
        for (int64_t i = 0; i < n; i++) {
            idx[i] = i;
            const char *e = xp + (bx + i * sx) * (int64_t)esz;
            if (ki) memcpy(&ki[i], e, sizeof(int64_t));
            else kd[i] = load_d(dt, e);
        }
        merge_sort(idx, tmp, n, kd, ki, s->desc);
        char *op = weft_tensor_data(s->out);
        for (int64_t i = 0; i < s->k; i++) {
            int64_t off = bo + i * so;
            if (s->indices) ((int64_t *)op)[off] = idx[i];
            else memcpy(op + off * (int64_t)esz, xp + (bx + idx[i] * sx) * (int64_t)esz, esz);
        }
    }
    free(idx);
    return WEFT_OK;
}

/* ---- Sort / Argsort / Topk ops -------------------------------------------- */

static bool is_topk(const weft_op_t *op)
{
    return weft_op_class(op) == &weft__topk_class;
}

static weft_status_t sort_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                    weft_var_t *const *inputs, size_t *n_out,
                                    const weft_type_t **out_types)
{
    const sort_props_t *p = weft_op_props(op);
    int64_t shape[WEFT_MAX_NDIM];
    weft_status_t st = weft__axis_op_input(g, op, p->ndim, p->axis, n_in, inputs, shape);
    if (st != WEFT_OK) {
        return st;
    }
    const weft_type_t *t = weft_var_type(inputs[0]);
    if (is_topk(op)) {
        int64_t len = shape[p->axis];
        if (p->k < 0 || (len != WEFT_DIM_UNKNOWN && p->k > len)) {
            return weft_graph_set_error(g, WEFT_ESHAPE, "Topk: k %d out of range for axis %d "
                                        "of length %lld", (int)p->k, (int)p->axis,
                                        (long long)len);
        }
        shape[p->axis] = p->k;
    }
    *n_out = 1;
    return weft_type_tensor(g, p->indices ? WEFT_INT64 : weft_type_dtype(t), p->ndim, shape,
                            &out_types[0]);
}

static weft_status_t sort_perform(const weft_apply_t *node, weft_tensor_t *const *inputs,
                                  weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    const weft_op_t *op = weft_apply_op(node);
    const sort_props_t *p = weft_op_props(op);
    const weft_tensor_t *x = inputs[0];
    const char *name = weft_op_name(op);
    if (!x || weft_tensor_ndim(x) != p->ndim || !weft__lred_dtype_ok(weft_tensor_dtype(x))) {
        return weft_kernel_error(ctx, WEFT_ESHAPE, "%s: input has %d dims or an unsupported "
                                 "dtype, expected %d dims", name, x ? weft_tensor_ndim(x) : -1,
                                 (int)p->ndim);
    }
    int64_t shape[WEFT_MAX_NDIM], len = weft_tensor_dim(x, p->axis);
    memcpy(shape, weft_tensor_shape(x), (size_t)p->ndim * sizeof *shape);
    if (is_topk(op) && p->k > len) {
        return weft_kernel_error(ctx, WEFT_ESHAPE, "Topk: k %d out of range for axis %d of "
                                 "length %lld", (int)p->k, (int)p->axis, (long long)len);
    }
    shape[p->axis] = is_topk(op) ? p->k : len;
    weft_dtype_t dout = p->indices ? WEFT_INT64 : weft_tensor_dtype(x);
    weft_status_t st = weft_kernel_alloc_output(ctx, &outputs[0], dout, p->ndim, shape);
    if (st != WEFT_OK) {
        return st;
    }
    sort_lanes_t s = {x, outputs[0], p->axis, is_topk(op), p->indices != 0, shape[p->axis]};
    int64_t lanes = len > 0 ? (int64_t)weft_tensor_size(x) / len : 0;
    size_t grain = (size_t)(len > 0 && 65536 / len > 0 ? 65536 / len : 1);
    st = weft_kernel_parallel_for(ctx, (size_t)lanes, grain, sort_range, &s);
    return st == WEFT_OK ? st : weft_kernel_error(ctx, st, "%s: out of memory", name);
}

/* Sort: gz scattered back through argsort(x); Topk values: gz scattered to
 * the chosen positions, 0 elsewhere; index outputs: none (disconnected). */
static weft_status_t sort_grad(weft_graph_t *g, const weft_apply_t *node,
                               weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    const weft_op_t *op = weft_apply_op(node);
    const sort_props_t *p = weft_op_props(op);
    weft_var_t *x = weft_apply_input(node, 0), *gz = output_grads[0];
    weft_dtype_t dt = weft_type_dtype(weft_var_type(x));
    input_grads[0] = NULL;
    if (!gz || p->indices || (dt != WEFT_FLOAT32 && dt != WEFT_FLOAT64)) {
        return WEFT_OK;
    }
    const char *file;
    int line;
    weft_apply_trace(node, &file, &line);
    weft_var_t *idx = is_topk(op) ? weft_topk_at(g, x, p->axis, p->k, true, file, line)
                                  : weft_sort_at(g, x, p->axis, true, file, line);
    sort_props_t sp = {p->ndim, p->axis, 0, 0};
    const weft_op_t *sop = NULL;
    weft_status_t st = weft__got(g, idx);
    if (st == WEFT_OK) st = weft_op_create(g, &weft__axis_scatter_class, &sp, &sop);
    weft_var_t *in[3] = {x, gz, idx};
    return st != WEFT_OK ? st
                         : weft__got(g, input_grads[0] = weft_op_call_at(g, sop, 3, in, file,
                                                                         line));
}

static bool sort_connected(const weft_apply_t *node, size_t in, size_t out)
{
    const sort_props_t *p = weft_op_props(weft_apply_op(node));
    (void)in;
    (void)out;
    return !p->indices;
}

static int sort_props_print(const void *props, char *buf, size_t cap)
{
    const sort_props_t *p = props;
    return snprintf(buf, cap, "axis=%d, indices=%d, k=%d", (int)p->axis, p->indices ? 1 : 0,
                    (int)p->k);
}

/* JSON props: {"ndim": 2, "axis": 1, "indices": false[, "k": 3]}. */
#define SORT_FIELDS3                                                        \
    WEFT__PROPS_FIELD("ndim", WEFT__FIELD_I32, sort_props_t, ndim),         \
        WEFT__PROPS_FIELD("axis", WEFT__FIELD_I32, sort_props_t, axis),     \
        WEFT__PROPS_FIELD("indices", WEFT__FIELD_I32_BOOL, sort_props_t, indices)
static const weft__props_fields_t sort_fields = {sizeof(sort_props_t), {SORT_FIELDS3}};
static const weft__props_fields_t topk_fields = {
    sizeof(sort_props_t),
    {SORT_FIELDS3, WEFT__PROPS_FIELD("k", WEFT__FIELD_I32, sort_props_t, k)}};
WEFT__PROPS_FIELDS_HOOKS(sort, sort_fields)
WEFT__PROPS_FIELDS_HOOKS(topk, topk_fields)

#define SORT_CLASS(var, cname, pre)               \
    const weft_op_class_t var = {                 \
        .size = sizeof(weft_op_class_t),          \
        .name = cname,                            \
        .props_size = sizeof(sort_props_t),       \
        .props_print = sort_props_print,          \
        .props_to_json = pre##_to_json,           \
        .props_from_json = pre##_from_json,       \
        .make_node = sort_make_node,              \
        .perform = sort_perform,                  \
        .connection_pattern = sort_connected,     \
        .grad = sort_grad,                        \
    };
SORT_CLASS(weft__sort_class, "Sort", sort)
SORT_CLASS(weft__topk_class, "Topk", topk)

/* ---- AxisScatter{ndim, axis}(x, src, idx) --------------------------------
 * out: zeros of x's type, then out[.., idx[.., i, ..], ..] += src[.., i, ..]
 * along the axis (src and idx of one shape, idx int64 in range). No grad
 * hook: second order through Sort/Topk reports WEFT_ENOGRAD. */

static weft_status_t scat_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                    weft_var_t *const *inputs, size_t *n_out,
                                    const weft_type_t **out_types)
{
    const sort_props_t *p = weft_op_props(op);
    if (n_in != 3) {
        return weft_graph_set_error(g, WEFT_EINVAL, "AxisScatter: takes 3 inputs, got %zu", n_in);
    }
    const weft_type_t *tx = weft_var_type(inputs[0]), *ts = weft_var_type(inputs[1]),
                      *ti = weft_var_type(inputs[2]);
    weft_dtype_t dt = weft_type_dtype(tx);
    if ((dt != WEFT_FLOAT32 && dt != WEFT_FLOAT64) || weft_type_dtype(ts) != dt ||
        weft_type_dtype(ti) != WEFT_INT64 ||
        weft_type_ndim(tx) != p->ndim || weft_type_ndim(ts) != p->ndim ||
        weft_type_ndim(ti) != p->ndim) {
        return weft_graph_set_error(g, WEFT_ETYPE, "AxisScatter: needs (x, src) of one float "
                                    "dtype and int64 indices, all of rank %d", (int)p->ndim);
    }
    *n_out = 1;
    out_types[0] = tx;
    return WEFT_OK;
}

typedef struct scat {
    weft_tensor_t *out;
    const weft_tensor_t *src, *idx;
    int axis;
} scat_t;

static weft_status_t scat_range(void *arg, size_t begin, size_t end)
{
    const scat_t *c = arg;
    int nd = weft_tensor_ndim(c->src);
    int64_t n = weft_tensor_dim(c->src, c->axis), len = weft_tensor_dim(c->out, c->axis);
    bool f32 = weft_tensor_dtype(c->out) == WEFT_FLOAT32;
    for (size_t lane = begin; lane < end; lane++) {
        int64_t bs = 0, bi = 0, bo = 0, j = (int64_t)lane;
        for (int d = nd - 1; d >= 0; d--) {
            if (d == c->axis) continue;
            int64_t i = j % weft_tensor_dim(c->src, d);
            j /= weft_tensor_dim(c->src, d);
            bs += i * weft_tensor_stride(c->src, d);
            bi += i * weft_tensor_stride(c->idx, d);
            bo += i * weft_tensor_stride(c->out, d);
        }
        for (int64_t i = 0; i < n; i++) {
            int64_t t = ((const int64_t *)weft_tensor_data(c->idx))
                [bi + i * weft_tensor_stride(c->idx, c->axis)];
            if (t < 0 || t >= len) return WEFT_ERANGE;
            int64_t o = bo + t * weft_tensor_stride(c->out, c->axis);
            int64_t si = bs + i * weft_tensor_stride(c->src, c->axis);
            if (f32) ((float *)weft_tensor_data(c->out))[o] +=
                ((const float *)weft_tensor_data(c->src))[si];
            else ((double *)weft_tensor_data(c->out))[o] +=
                ((const double *)weft_tensor_data(c->src))[si];
        }
    }
    return WEFT_OK;
}

static weft_status_t scat_perform(const weft_apply_t *node, weft_tensor_t *const *inputs,
                                  weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    const sort_props_t *p = weft_op_props(weft_apply_op(node));
    const weft_tensor_t *x = inputs[0], *src = inputs[1], *idx = inputs[2];
    weft_dtype_t dt = weft_tensor_dtype(x);
    bool ok = (dt == WEFT_FLOAT32 || dt == WEFT_FLOAT64) && weft_tensor_dtype(src) == dt &&
              weft_tensor_dtype(idx) == WEFT_INT64 && weft_tensor_ndim(x) == p->ndim &&
              weft_tensor_ndim(src) == p->ndim && weft_tensor_ndim(idx) == p->ndim;
    for (int d = 0; ok && d < p->ndim; d++) {
        ok = weft_tensor_dim(src, d) == weft_tensor_dim(idx, d) &&
             (d == p->axis || weft_tensor_dim(src, d) == weft_tensor_dim(x, d));
    }
    if (!ok) {
        return weft_kernel_error(ctx, WEFT_ESHAPE, "AxisScatter: input shapes do not match");
    }
    weft_status_t st = weft_kernel_alloc_output(ctx, &outputs[0], dt, p->ndim,
                                                weft_tensor_shape(x));
    if (st != WEFT_OK) {
        return st;
    }
    weft_tensor_fill(outputs[0], 0.0);
    int64_t n = weft_tensor_dim(src, p->axis);
    int64_t lanes = n > 0 ? (int64_t)weft_tensor_size(src) / n : 0;
    scat_t c = {outputs[0], src, idx, p->axis};
    size_t grain = (size_t)(n > 0 && 65536 / n > 0 ? 65536 / n : 1);
    st = weft_kernel_parallel_for(ctx, (size_t)lanes, grain, scat_range, &c);
    return st == WEFT_OK ? st
                         : weft_kernel_error(ctx, st, "AxisScatter: index out of range");
}

const weft_op_class_t weft__axis_scatter_class = {
    .size = sizeof(weft_op_class_t),
    .name = "AxisScatter",
    .props_size = sizeof(sort_props_t),
    .props_print = sort_props_print,
    .props_to_json = sort_to_json,
    .props_from_json = sort_from_json,
    .make_node = scat_make_node,
    .perform = scat_perform,
};

/* ---- constructors ---------------------------------------------------------- */

static weft_status_t sort_impl(weft_graph_t *g, bool topk, weft_var_t *x, int axis, int64_t k,
                               bool want_indices, const char *file, int line, weft_var_t **out)
{
    const char *name = topk ? "Topk" : want_indices ? "Argsort" : "Sort";
    sort_props_t p = {0, 0, want_indices ? 1 : 0, 0};
    *out = NULL;
    weft_status_t st = weft__axis_arg(g, x, name, axis, file, line, &p.ndim, &p.axis);
    if (st != WEFT_OK) {
        return st;
    }
    if (topk) {
        int64_t len = weft_type_dim(weft_var_type(x), p.axis);
        if (k < 0 || k > INT32_MAX || (len != WEFT_DIM_UNKNOWN && k > len)) {
            return weft_graph_set_error(g, WEFT_ESHAPE, "Topk (at %s:%d): k %lld out of range "
                                        "for axis %d of length %lld", file, line, (long long)k,
                                        p.axis, (long long)len);
        }
        p.k = (int32_t)k;
    }
    const weft_op_t *op = NULL;
    st = weft_op_create(g, topk ? &weft__topk_class : &weft__sort_class, &p, &op);
    return st == WEFT_OK ? weft__got(g, *out = weft_op_call_at(g, op, 1, &x, file, line)) : st;
}

weft_var_t *weft_sort_at(weft_graph_t *g, weft_var_t *x, int axis, bool want_indices,
                         const char *file, int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t st = sort_impl(g, false, x, axis, 0, want_indices, file, line, &out);
    return weft__ctor_end(g, st, out, want_indices ? "weft_argsort" : "weft_sort", file, line);
}

weft_var_t *weft_topk_at(weft_graph_t *g, weft_var_t *x, int axis, int64_t k,
                         bool want_indices, const char *file, int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t st = sort_impl(g, true, x, axis, k, want_indices, file, line, &out);
    return weft__ctor_end(g, st, out, want_indices ? "weft_topk_indices" : "weft_topk_values",
                          file, line);
}
