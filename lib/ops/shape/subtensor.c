/* Basic indexing: Subtensor (x[idx], a view), SetSubtensor and IncSubtensor
 * (a copy of x with x[idx] set to / increased by y, broadcast; in-place
 * variants destroy x). Slices follow Python's slice.indices(): negative
 * bounds count from the end, out-of-range bounds are clamped, negative steps
 * walk backwards; an integer index drops its axis. */
#include <stdio.h>
#include <string.h>

#include "graph/ctor_int.h"
#include "ops_int.h"
#include "weft/kernel.h"

/* Python's slice.indices(len), then the element count. */
static void slice_bounds(const weft__slice_t *s, int64_t len, int64_t *start, int64_t *count)
{
    int64_t st = s->step, lo = st > 0 ? 0 : -1, hi = st > 0 ? len : len - 1;
    int64_t a = s->start, b = s->stop;
    if (a == WEFT_SLICE_NONE) {
        a = st > 0 ? lo : hi;
    } else {
        if (a < 0) a += len;
        a = a < lo ? lo : (a > hi ? hi : a);
    }
    if (b == WEFT_SLICE_NONE) {
        b = st > 0 ? hi : lo;
    } else {
        if (b < 0) b += len;
        b = b < lo ? lo : (b > hi ? hi : b);
    }
    /* ceil((b - a) / st) without overflow for any step, INT64_MAX and
     * INT64_MIN included (|st| taken in unsigned); a and b are clamped to
     * [-1, len], so b - a cannot overflow */
    if (st > 0)
        *count = b > a ? (b - a - 1) / st + 1 : 0;
    else
        *count = a > b ? (int64_t)((uint64_t)(a - b - 1) / -(uint64_t)st) + 1 : 0;
    *start = a;
}

/* *acc += i * stride; false on overflow. */
static bool add_product(int64_t *acc, int64_t i, int64_t stride)
{
    int64_t t;
    return !__builtin_mul_overflow(i, stride, &t) && !__builtin_add_overflow(*acc, t, acc);
}

/* The view x[idx] of a tensor geometry: output ndim, shape, strides and
 * element offset. An axis the slice leaves with at most one element keeps
 * x's stride (the step's is never used, and stride * step may overflow:
 * x[::10**9+7][::10**9+7]). Errors (text in err): WEFT_ERANGE (an index out
 * of range), WEFT_EOVERFLOW (a stride or the offset does not fit in int64;
 * only for geometries no buffer can hold). */
static weft_status_t sub_geometry(const weft__subtensor_props_t *p, int ndim,
                                  const int64_t *shape, const int64_t *strides, int *ondim,
                                  int64_t *oshape, int64_t *ostrides, int64_t *offset, char *err,
                                  size_t cap)
{
    int n = 0;
    *offset = 0;
    for (int d = 0; d < ndim; d++) {
        const weft__slice_t *s = d < p->n ? &p->idx[d] : NULL;
        int64_t start = 0, count = shape[d], step = 1;
        bool fits = true;
        if (s && s->kind == WEFT_SLICE_INDEX) {
            start = s->start < 0 ? s->start + shape[d] : s->start;
            if (start < 0 || start >= shape[d]) {
                snprintf(err, cap, "index %lld out of range for axis %d of length %lld",
                         (long long)s->start, d, (long long)shape[d]);
                return WEFT_ERANGE;
            }
            fits = add_product(offset, start, strides[d]);
        } else {
            if (s) {
                slice_bounds(s, shape[d], &start, &count);
                step = s->step;
            }
            if (count > 0) fits = add_product(offset, start, strides[d]);
            oshape[n] = count;
            ostrides[n] = strides[d];
            if (count > 1) fits = fits && !__builtin_mul_overflow(strides[d], step, &ostrides[n]);
            n++;
        }
        if (!fits) {
            snprintf(err, cap, "axis %d: stride or offset overflows int64", d);
            return WEFT_EOVERFLOW;
        }
    }
    *ondim = n;
    return WEFT_OK;
}

/* The static type of x[idx] given x's type. Errors (on g): WEFT_EINVAL (more
 * entries than axes), WEFT_ERANGE (an index outside a known length). */
static weft_status_t sub_out_type(weft_graph_t *g, const char *name,
                                  const weft__subtensor_props_t *p, const weft_type_t *xt,
                                  const weft_type_t **out)
{
    int ndim = weft_type_ndim(xt), n = 0;
    if (p->n > ndim)
        return weft_graph_set_error(g, WEFT_EINVAL, "%s: %d indices for a %d-dimensional input",
                                    name, (int)p->n, ndim);
    int64_t shape[WEFT_MAX_NDIM];
    for (int d = 0; d < ndim; d++) {
        int64_t len = weft_type_dim(xt, d), start, count = WEFT_DIM_UNKNOWN;
        const weft__slice_t *s = d < p->n ? &p->idx[d] : NULL;
        if (!s) {
            shape[n++] = len;
        } else if (s->kind == WEFT_SLICE_INDEX) {
            if (len != WEFT_DIM_UNKNOWN && (s->start >= len || s->start < -len))
                return weft_graph_set_error(g, WEFT_ERANGE,
                                            "%s: index %lld out of range for axis %d of length "
                                            "%lld",
                                            name, (long long)s->start, d, (long long)len);
        } else {
            if (len != WEFT_DIM_UNKNOWN) slice_bounds(s, len, &start, &count);
            shape[n++] = count;
        }
    }
    return weft_type_tensor(g, weft_type_dtype(xt), n, shape, out);
}

/* x[idx] as a geometry over x's elements: ndim, shape, element strides and
 * the first element. */
typedef struct region {
    int nd;
    int64_t shape[WEFT_MAX_NDIM], strides[WEFT_MAX_NDIM];
    int64_t offset; /* elements from x's first element */
    char *data;
} region_t;

/* x[idx]'s region of tensor x. Errors: WEFT_ERANGE, WEFT_EOVERFLOW (recorded
 * on ctx). */
static weft_status_t sub_region(const weft__subtensor_props_t *p, const weft_tensor_t *x,
                                region_t *r, weft_kernel_ctx_t *ctx)
{
    char err[160];
    weft_status_t st = sub_geometry(p, weft_tensor_ndim(x), weft_tensor_shape(x),
                                    weft_tensor_strides(x), &r->nd, r->shape, r->strides,
                                    &r->offset, err, sizeof err);
    if (st != WEFT_OK) return weft_kernel_error(ctx, st, "%s", err);
    bool empty = false;
    for (int d = 0; d < r->nd; d++) empty |= r->shape[d] == 0;
    char *x0 = weft_tensor_data(x);
    r->data = empty ? x0 : x0 + r->offset * (int64_t)weft_dtype_size(weft_tensor_dtype(x));
    return WEFT_OK;
}

static weft_status_t check_tensor_inputs(weft_graph_t *g, const char *name, size_t n_in,
                                         size_t want, weft_var_t *const *inputs)
{
    if (n_in != want)
        return weft_graph_set_error(g, WEFT_EINVAL, "%s takes %zu inputs, got %zu", name, want,
                                    n_in);
    for (size_t i = 0; i < n_in; i++)
        if (weft_type_kind(weft_var_type(inputs[i])) != WEFT_TYPE_TENSOR)
            return weft_graph_set_error(g, WEFT_ETYPE, "%s: input %zu is not a tensor", name, i);
    return WEFT_OK;
}

static size_t alias_input0(weft_op_alias_t *out, size_t cap, bool want)
{
    if (!want || cap < 1) return 0;
    out[0].output = 0;
    out[0].input = 0;
    return 1;
}

/* "idx=[1:3,::-1,2]" (+ ", inplace"). */
static int sub_props_print(const void *props, char *buf, size_t cap)
{
    const weft__subtensor_props_t *p = props;
    char tmp[WEFT_MAX_NDIM * 70 + 16];
    int n = 0;
    tmp[0] = '\0';
    for (int d = 0; d < p->n; d++) {
        const weft__slice_t *s = &p->idx[d];
        size_t left = sizeof tmp - (size_t)n;
        if (s->kind == WEFT_SLICE_INDEX) {
            n += snprintf(tmp + n, left, "%s%lld", d ? "," : "", (long long)s->start);
            continue;
        }
        char a[24] = "", b[24] = "", c[24] = "";
        if (s->start != WEFT_SLICE_NONE) snprintf(a, sizeof a, "%lld", (long long)s->start);
        if (s->stop != WEFT_SLICE_NONE) snprintf(b, sizeof b, "%lld", (long long)s->stop);
        if (s->step != 1) snprintf(c, sizeof c, ":%lld", (long long)s->step);
        n += snprintf(tmp + n, left, "%s%s:%s%s", d ? "," : "", a, b, c);
    }
    return snprintf(buf, cap, "idx=[%s]%s", tmp, p->inplace ? ", inplace" : "");
}

/* ---- Subtensor ------------------------------------------------------------------- */

static weft_status_t sub_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                   weft_var_t *const *inputs, size_t *n_out,
                                   const weft_type_t **out_types)
{
    weft_status_t st = check_tensor_inputs(g, "Subtensor", n_in, 1, inputs);
    if (st != WEFT_OK) return st;
    *n_out = 1;
    return sub_out_type(g, "Subtensor", weft_op_props(op), weft_var_type(inputs[0]),
                        &out_types[0]);
}

static weft_status_t sub_perform(const weft_apply_t *node, weft_tensor_t *const *inputs,
                                 weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    region_t r;
    weft_status_t st = sub_region(weft_op_props(weft_apply_op(node)), inputs[0], &r, ctx);
    if (st != WEFT_OK) return st;
    return weft_kernel_view_output(ctx, &outputs[0], inputs[0], r.nd, r.shape, r.strides,
                                   r.offset);
}

static size_t sub_view_map(const weft_op_t *op, weft_op_alias_t *out, size_t cap)
{
    (void)op;
    return alias_input0(out, cap, true);
}

/* gx = IncSubtensor(zeros_like(x), gz, idx). */
static weft_status_t sub_grad(weft_graph_t *g, const weft_apply_t *node,
                              weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    const weft_op_t *fwd = weft_apply_op(node);
    weft__subtensor_props_t q = *(const weft__subtensor_props_t *)weft_op_props(fwd);
    weft_var_t *x = weft_apply_input(node, 0), *z;
    input_grads[0] = NULL;
    if (!output_grads[0] || !weft__dtype_is_float(weft_type_dtype(weft_var_type(x))))
        return WEFT_OK;
    const weft_op_t *op;
    q.inplace = 0;
    weft_status_t st = weft__got(g, z = weft_zeros_like_at(g, x, __FILE__, __LINE__));
    if (st == WEFT_OK) st = weft_op_create(g, &weft__inc_subtensor_class, &q, &op);
    if (st != WEFT_OK) return st;
    weft_var_t *in[2] = {z, output_grads[0]};
    return weft__got(g, input_grads[0] = weft_op_call_at(g, op, 2, in, __FILE__, __LINE__));
}

const weft_op_class_t weft__subtensor_class = {
    .size = sizeof(weft_op_class_t),
    .name = "Subtensor",
    .props_size = sizeof(weft__subtensor_props_t),
    .props_print = sub_props_print,
    .props_to_json = weft__subtensor_to_json,
    .props_from_json = weft__subtensor_from_json,
    .make_node = sub_make_node,
    .perform = sub_perform,
    .view_map = sub_view_map,
    .grad = sub_grad,
};

/* ---- SetSubtensor / IncSubtensor ------------------------------------------------------ */

static bool is_inc(const weft_op_t *op)
{
    return weft_op_class(op) == &weft__inc_subtensor_class;
}

static weft_status_t set_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                   weft_var_t *const *inputs, size_t *n_out,
                                   const weft_type_t **out_types)
{
    const char *name = weft_op_name(op);
    const weft_type_t *sub;
    weft_status_t st = check_tensor_inputs(g, name, n_in, 2, inputs);
    if (st != WEFT_OK) return st;
    const weft_type_t *xt = weft_var_type(inputs[0]), *yt = weft_var_type(inputs[1]);
    if ((st = sub_out_type(g, name, weft_op_props(op), xt, &sub)) != WEFT_OK) return st;
    if (is_inc(op) && weft_type_dtype(xt) == WEFT_BOOL)
        return weft_graph_set_error(g, WEFT_ETYPE, "%s: input 0 is bool (no addition)", name);
    /* y must convert to x's dtype safely: their promotion is x's dtype */
    if (weft_dtype_promote(weft_type_dtype(xt), weft_type_dtype(yt)) != weft_type_dtype(xt))
        return weft_graph_set_error(g, WEFT_ETYPE, "%s: input 1 is %s, larger than input 0's %s",
                                    name, weft_dtype_name(weft_type_dtype(yt)),
                                    weft_dtype_name(weft_type_dtype(xt)));
    if (weft_type_ndim(yt) != weft_type_ndim(sub))
        return weft_graph_set_error(g, WEFT_ETYPE, "%s: input 1 has %d dimensions, x[idx] %d",
                                    name, weft_type_ndim(yt), weft_type_ndim(sub));
    for (int d = 0; d < weft_type_ndim(yt); d++) {
        int64_t a = weft_type_dim(yt, d), b = weft_type_dim(sub, d);
        if (a != WEFT_DIM_UNKNOWN && a != 1 && b != WEFT_DIM_UNKNOWN && a != b)
            return weft_graph_set_error(g, WEFT_ESHAPE,
                                        "%s: input 1 has length %lld in dimension %d, x[idx] "
                                        "%lld",
                                        name, (long long)a, d, (long long)b);
    }
    *n_out = 1;
    out_types[0] = xt;
    return WEFT_OK;
}

/* y's element strides broadcast over region v (0 on y's static-1 axes that
 * v does not share). Errors: WEFT_ESHAPE (recorded on ctx). */
static weft_status_t broadcast_y(const weft_apply_t *node, const weft_tensor_t *y,
                                 const region_t *v, int64_t *ystrides, weft_kernel_ctx_t *ctx)
{
    const weft_type_t *yt = weft_var_type(weft_apply_input(node, 1));
    for (int d = 0; d < v->nd; d++) {
        int64_t l = weft_tensor_dim(y, d);
        if (l == v->shape[d])
            ystrides[d] = weft_tensor_stride(y, d);
        else if (l == 1 && weft_type_dim(yt, d) == 1)
            ystrides[d] = 0;
        else
            return weft_kernel_error(ctx, WEFT_ESHAPE,
                                     "input 1 has length %lld in dimension %d, x[idx] %lld",
                                     (long long)l, d, (long long)v->shape[d]);
    }
    return WEFT_OK;
}

/* Inc with y of a narrower dtype: each row of y is converted to x's dtype
 * in chunks on the stack, then added (no temporary tensor). Operands: 0 the
 * region of the output, 1 y. */
#define INC_CHUNK 64
typedef struct inc_convert {
    weft__row_fn convert, add;
    int64_t xsz, ysz; /* element sizes */
} inc_convert_t;

static void inc_convert_row(size_t n, char *const *p, const int64_t *s, void *arg)
{
    const inc_convert_t *ic = arg;
    _Alignas(16) char tmp[INC_CHUNK * sizeof(double)];
    const int64_t cs[2] = {1, s[1]}, as[3] = {s[0], s[0], 1};
    for (size_t i = 0; i < n; i += INC_CHUNK) {
        size_t m = n - i < INC_CHUNK ? n - i : INC_CHUNK;
        char *xo = p[0] + (int64_t)i * s[0] * ic->xsz;
        char *yo = p[1] + (int64_t)i * s[1] * ic->ysz;
        char *cv[2] = {tmp, yo};
        ic->convert(m, cv, cs, NULL);
        char *ad[3] = {xo, xo, tmp};
        ic->add(m, ad, as, NULL);
    }
}

static weft_status_t set_output(const weft__subtensor_props_t *p, weft_tensor_t *x,
                                weft_tensor_t **cell, weft_kernel_ctx_t *ctx)
{
    if (p->inplace) {
        weft_kernel_set_output(ctx, cell, weft_tensor_retain(x));
        return WEFT_OK;
    }
    weft_status_t st = weft_kernel_alloc_output(ctx, cell, weft_tensor_dtype(x),
                                                weft_tensor_ndim(x), weft_tensor_shape(x));
    if (st == WEFT_OK) weft_tensor_copy(*cell, x);
    return st;
}

/* out[idx] = y or out[idx] += y over region v of the output, y broadcast
 * with strides ys and converted to the output's dtype. */
static void set_region(bool inc, const weft_tensor_t *out, const region_t *v,
                       const weft_tensor_t *y, const int64_t *ys)
{
    weft_dtype_t xd = weft_tensor_dtype(out), yd = weft_tensor_dtype(y);
    size_t xsz = weft_dtype_size(xd), ysz = weft_dtype_size(yd);
    char *base2[2] = {v->data, weft_tensor_data(y)};
    const int64_t *st2[2] = {v->strides, ys};
    size_t isz2[2] = {xsz, ysz};
    if (!inc) { /* the conversion kernel copies when the dtypes agree */
        weft__iter_rows(v->nd, v->shape, 2, base2, st2, isz2, weft__convert_fn(xd, yd), NULL);
        return;
    }
    /* make_node refused a bool x, so the Add kernel exists for xd */
    weft__row_fn add = weft__elemwise_kernel(WEFT_ELEMWISE_ADD, xd);
    if (xd != yd) {
        inc_convert_t ic = {weft__convert_fn(xd, yd), add, (int64_t)xsz, (int64_t)ysz};
        weft__iter_rows(v->nd, v->shape, 2, base2, st2, isz2, inc_convert_row, &ic);
        return;
    }
    char *base3[3] = {v->data, v->data, weft_tensor_data(y)};
    const int64_t *st3[3] = {v->strides, v->strides, ys};
    size_t isz3[3] = {xsz, xsz, xsz};
    weft__iter_rows(v->nd, v->shape, 3, base3, st3, isz3, add, NULL);
}

static weft_status_t set_perform(const weft_apply_t *node, weft_tensor_t *const *inputs,
                                 weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    const weft_op_t *op = weft_apply_op(node);
    const weft__subtensor_props_t *p = weft_op_props(op);
    region_t v;
    int64_t ys[WEFT_MAX_NDIM];
    /* idx and y's lengths are validated before anything is written */
    weft_status_t st = sub_region(p, inputs[0], &v, ctx);
    if (st == WEFT_OK) st = broadcast_y(node, inputs[1], &v, ys, ctx);
    if (st == WEFT_OK) st = set_output(p, inputs[0], &outputs[0], ctx);
    /* the output's own region: its strides may differ from x's */
    if (st == WEFT_OK) st = sub_region(p, outputs[0], &v, ctx);
    if (st == WEFT_OK) set_region(is_inc(op), outputs[0], &v, inputs[1], ys);
    return st;
}

static size_t set_destroy_map(const weft_op_t *op, weft_op_alias_t *out, size_t cap)
{
    const weft__subtensor_props_t *p = weft_op_props(op);
    return alias_input0(out, cap, p->inplace != 0);
}

static weft_status_t set_inplace_variant(weft_graph_t *g, const weft_op_t *op, size_t input,
                                         const weft_op_t **out)
{
    if (input != 0)
        return weft_graph_set_error(g, WEFT_ENOTIMPL, "%s has no in-place variant for input %zu",
                                    weft_op_name(op), input);
    weft__subtensor_props_t q = *(const weft__subtensor_props_t *)weft_op_props(op);
    q.inplace = 1;
    return weft_op_create(g, weft_op_class(op), &q, out);
}

/* gx: gz with the indexed region zeroed (Set) or gz itself (Inc);
 * gy: gz[idx] reduced to y's broadcast pattern and dtype. */
static weft_status_t set_grad(weft_graph_t *g, const weft_apply_t *node,
                              weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    const weft_op_t *op = weft_apply_op(node), *sub, *set;
    weft__subtensor_props_t q = *(const weft__subtensor_props_t *)weft_op_props(op);
    weft_var_t *x = weft_apply_input(node, 0), *y = weft_apply_input(node, 1);
    weft_var_t *gz = output_grads[0], *zero, *padded, *gsub;
    q.inplace = 0;
    input_grads[0] = input_grads[1] = NULL;
    if (!gz || !weft__dtype_is_float(weft_type_dtype(weft_var_type(x)))) return WEFT_OK;
    weft_status_t st = WEFT_OK;
    input_grads[0] = gz;
    if (!is_inc(op)) {
        int yd = weft_type_ndim(weft_var_type(y));
        if (!(st = weft__got(g, zero = weft_constant_scalar_at(g, weft_type_dtype(weft_var_type(x)),
                                                               0.0, __FILE__, __LINE__))) &&
            !(st = weft_op_create(g, &weft__set_subtensor_class, &q, &set)) &&
            !(st = weft__got(g, padded = weft_pad_left_at(g, zero, yd, __FILE__, __LINE__)))) {
            weft_var_t *in[2] = {gz, padded};
            st = weft__got(g, input_grads[0] = weft_op_call_at(g, set, 2, in, __FILE__, __LINE__));
        }
        if (st != WEFT_OK) return st;
    }
    if (!weft__dtype_is_float(weft_type_dtype(weft_var_type(y)))) return WEFT_OK;
    if ((st = weft_op_create(g, &weft__subtensor_class, &q, &sub)) ||
        (st = weft__got(g, gsub = weft_op_call_at(g, sub, 1, &gz, __FILE__, __LINE__))))
        return st;
    return weft__grad_reduce_to(g, gsub, y, &input_grads[1]);
}

#define SET_CLASS(cname)                               \
    {                                                  \
        .size = sizeof(weft_op_class_t),               \
        .name = cname,                                 \
        .props_size = sizeof(weft__subtensor_props_t), \
        .props_print = sub_props_print,                \
        .props_to_json = weft__subtensor_to_json,      \
        .props_from_json = weft__subtensor_from_json,  \
        .make_node = set_make_node,                    \
        .perform = set_perform,                        \
        .destroy_map = set_destroy_map,                \
        .grad = set_grad,                              \
        .inplace_variant = set_inplace_variant,        \
    }

const weft_op_class_t weft__set_subtensor_class = SET_CLASS("SetSubtensor");
const weft_op_class_t weft__inc_subtensor_class = SET_CLASS("IncSubtensor");

/* ---- constructors -------------------------------------------------------------------- */

static weft_status_t pack_props(weft_graph_t *g, size_t n_idx, const weft_slice_t *idx,
                                bool inplace, weft__subtensor_props_t *p)
{
    memset(p, 0, sizeof *p);
    if (n_idx > WEFT_MAX_NDIM || (n_idx > 0 && !idx))
        return weft_graph_set_error(g, WEFT_EINVAL, "%zu index entries (at most %d, non-NULL)",
                                    n_idx, WEFT_MAX_NDIM);
    p->n = (int32_t)n_idx;
    p->inplace = inplace;
    for (size_t d = 0; d < n_idx; d++) {
        const weft_slice_t *s = &idx[d];
        if (s->kind == WEFT_SLICE_INDEX && s->start != WEFT_SLICE_NONE) {
            p->idx[d] = (weft__slice_t){WEFT_SLICE_INDEX, s->start, 0, 1};
            continue;
        }
        if (s->kind != WEFT_SLICE_RANGE)
            return weft_graph_set_error(g, WEFT_EINVAL, "index entry %zu: kind %d%s", d,
                                        (int)s->kind,
                                        s->kind == WEFT_SLICE_INDEX ? " without an index" : "");
        if (s->step == 0)
            return weft_graph_set_error(g, WEFT_EINVAL, "index entry %zu: step %lld", d,
                                        (long long)s->step);
        p->idx[d] = (weft__slice_t){WEFT_SLICE_RANGE, s->start, s->stop, s->step};
    }
    return WEFT_OK;
}

weft_status_t weft_subtensor_op(weft_graph_t *g, size_t n_idx, const weft_slice_t *idx,
                                const weft_op_t **out)
{
    if (out) *out = NULL;
    if (!g) return WEFT_EINVAL;
    if (!out) return weft_graph_set_error(g, WEFT_EINVAL, "Subtensor: NULL out");
    weft__subtensor_props_t p;
    weft_status_t st = pack_props(g, n_idx, idx, false, &p);
    return st ? st : weft_op_create(g, &weft__subtensor_class, &p, out);
}

weft_status_t weft_set_subtensor_op(weft_graph_t *g, size_t n_idx, const weft_slice_t *idx,
                                    bool inc, bool inplace, const weft_op_t **out)
{
    if (out) *out = NULL;
    if (!g) return WEFT_EINVAL;
    if (!out) return weft_graph_set_error(g, WEFT_EINVAL, "SetSubtensor: NULL out");
    weft__subtensor_props_t p;
    weft_status_t st = pack_props(g, n_idx, idx, inplace, &p);
    if (st != WEFT_OK) return st;
    return weft_op_create(g, inc ? &weft__inc_subtensor_class : &weft__set_subtensor_class, &p,
                          out);
}

static weft_status_t subtensor_impl(weft_graph_t *g, weft_var_t *x, size_t n_idx,
                                    const weft_slice_t *idx, const char *file, int line,
                                    weft_var_t **out)
{
    const weft_op_t *op;
    if (out) *out = NULL;
    if (!g) return WEFT_EINVAL;
    if (!x || !out) return weft_graph_set_error(g, WEFT_EINVAL, "Subtensor: NULL argument");
    weft_status_t st = weft_subtensor_op(g, n_idx, idx, &op);
    return st ? st : weft__got(g, *out = weft_op_call_at(g, op, 1, &x, file, line));
}

static weft_status_t set_build(weft_graph_t *g, weft_var_t *x, weft_var_t *y, size_t n_idx,
                               const weft_slice_t *idx, bool inc, const char *file, int line,
                               weft_var_t **out)
{
    const weft_op_t *op;
    const weft_type_t *sub;
    const char *name = inc ? "IncSubtensor" : "SetSubtensor";
    if (out) *out = NULL;
    if (!g) return WEFT_EINVAL;
    if (!x || !y || !out) return weft_graph_set_error(g, WEFT_EINVAL, "%s: NULL argument", name);
    weft_status_t st = weft_set_subtensor_op(g, n_idx, idx, inc, false, &op);
    if (st != WEFT_OK) return st;
    if (weft_type_kind(weft_var_type(x)) != WEFT_TYPE_TENSOR ||
        weft_type_kind(weft_var_type(y)) != WEFT_TYPE_TENSOR)
        return weft_graph_set_error(g, WEFT_ETYPE, "%s: inputs must be tensors", name);
    if ((st = sub_out_type(g, name, weft_op_props(op), weft_var_type(x), &sub))) return st;
    weft_var_t *in[2] = {x, y};
    if (weft_type_ndim(weft_var_type(y)) < weft_type_ndim(sub) &&
        (st = weft__got(g, in[1] = weft_pad_left_at(g, y, weft_type_ndim(sub), file, line))))
        return st;
    return weft__got(g, *out = weft_op_call_at(g, op, 2, in, file, line));
}

weft_var_t *weft_subtensor_at(weft_graph_t *g, weft_var_t *x, size_t n_idx, const weft_slice_t *idx,
                              const char *file, int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t st = subtensor_impl(g, x, n_idx, idx, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_subtensor", file, line);
}

weft_var_t *weft_set_subtensor_at(weft_graph_t *g, weft_var_t *x, weft_var_t *y, size_t n_idx,
                                  const weft_slice_t *idx, const char *file, int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t st = set_build(g, x, y, n_idx, idx, false, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_set_subtensor", file, line);
}

weft_var_t *weft_inc_subtensor_at(weft_graph_t *g, weft_var_t *x, weft_var_t *y, size_t n_idx,
                                  const weft_slice_t *idx, const char *file, int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t st = set_build(g, x, y, n_idx, idx, true, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_inc_subtensor", file, line);
}
