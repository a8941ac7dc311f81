/* Take{axis}(x, indices): np.take along one axis (weft/index_ops.h) -
 * constructor, type inference, the gather kernel, gradient, JSON props - and
 * the run-time pieces the updates share (index normalization, geometry).
 *
 * The gather copies whole rows (the elements after the axis, contiguous in
 * a contiguous x) by their byte size, so every dtype moves through the same
 * code; rows of 1, 2, 4 or 8 bytes (a 1-d gather) go through typed loops.
 * Output rows are split over the pool in blocks fixed by the row size
 * (WEFT__TAKE_GRAIN_BYTES); a copy has the same bits however it is split. */
#include <stdio.h>
#include <string.h>

#include "base/dtype_list.h"
#include "graph/ctor_int.h"
#include "index/index_int.h"
#include "ops_int.h"
#include "props_fields_int.h"

/* ---- shared run-time pieces -------------------------------------------------- */

weft__take_geom_t weft__take_geom(const weft_tensor_t *x, int axis)
{
    weft__take_geom_t g = {1, weft_tensor_dim(x, axis), 1};
    for (int d = 0; d < axis; d++) g.outer *= weft_tensor_dim(x, d);
    for (int d = axis + 1; d < weft_tensor_ndim(x); d++) g.inner *= weft_tensor_dim(x, d);
    return g;
}

int weft__take_shape(int xnd, const int64_t *xs, int ind, const int64_t *is, int axis,
                     int64_t *out)
{
    int nd = xnd - 1 + ind;
    if (nd > WEFT_MAX_NDIM) return -1;
    memcpy(out, xs, (size_t)axis * sizeof *out);
    memcpy(out + axis, is, (size_t)ind * sizeof *out);
    memcpy(out + axis + ind, xs + axis + 1, (size_t)(xnd - axis - 1) * sizeof *out);
    return nd;
}

/* Element i (C order) of an integer tensor of any strides, as int64 (a
 * uint64 above INT64_MAX saturates: it is out of bounds either way). */
static int64_t index_at(const weft_tensor_t *t, int64_t i)
{
    int64_t off = 0;
    for (int d = weft_tensor_ndim(t) - 1; d >= 0; d--) {
        int64_t n = weft_tensor_dim(t, d);
        off += (i % n) * weft_tensor_stride(t, d);
        i /= n;
    }
    const char *p = weft_tensor_data(t);
#define INDEX_AT_CASE(A, B, T, U, sfx, DT) \
    case DT: return (int64_t)((const T *)p)[off];
    switch (weft_tensor_dtype(t)) {
        WEFT__SINT_DTYPES(INDEX_AT_CASE, ~, ~)
    case WEFT_UINT64: {
        uint64_t u = ((const uint64_t *)p)[off];
        return u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)u;
    }
    case WEFT_UINT8: return ((const uint8_t *)p)[off];
    case WEFT_UINT16: return ((const uint16_t *)p)[off];
    case WEFT_UINT32: return ((const uint32_t *)p)[off];
    default: return 0;
    }
#undef INDEX_AT_CASE
}

static bool is_index_dtype(weft_dtype_t dt)
{
    weft_dtype_kind_t k = weft_dtype_kind(dt);
    return k == WEFT_KIND_INT || k == WEFT_KIND_UINT;
}

weft_status_t weft__take_indices(weft_kernel_ctx_t *ctx, const char *op, const weft_tensor_t *idx,
                                 int axis, int64_t len, weft_tensor_t **out)
{
    *out = NULL;
    if (!is_index_dtype(weft_tensor_dtype(idx))) {
        return weft_kernel_error(ctx, WEFT_ETYPE, "%s: indices are %s, not integers", op,
                                 weft_dtype_name(weft_tensor_dtype(idx)));
    }
    int64_t n = (int64_t)weft_tensor_size(idx);
    weft_status_t st = weft_kernel_scratch(ctx, WEFT_INT64, 1, &n, out);
    if (st != WEFT_OK) return st;
    int64_t *v = weft_tensor_data(*out);
    /* contiguous int64 indices (the common case) are read directly rather
     * than through index_at's per-element stride walk and dtype switch */
    const int64_t *direct = weft_tensor_dtype(idx) == WEFT_INT64 &&
                                    weft_tensor_is_contiguous(idx)
                                ? weft_tensor_data(idx)
                                : NULL;
    for (int64_t i = 0; i < n; i++) {
        int64_t t = direct ? direct[i] : index_at(idx, i);
        if (t < -len || t >= len) {
            weft_kernel_scratch_done(ctx, *out);
            *out = NULL;
            return weft_kernel_error(ctx, WEFT_ERANGE, "%s: index %lld is out of bounds for "
                                     "axis %d with size %lld", op, (long long)t, axis,
                                     (long long)len);
        }
        v[i] = t < 0 ? t + len : t;
    }
    return WEFT_OK;
}

weft_status_t weft__take_args(weft_graph_t *g, const char *name, weft_var_t *x, weft_var_t *idx,
                              int axis, const char *file, int line, int *axis_out)
{
    const weft_type_t *xt = weft_var_type(x), *it = weft_var_type(idx);
    if (weft_type_kind(xt) != WEFT_TYPE_TENSOR || weft_type_kind(it) != WEFT_TYPE_TENSOR) {
        return weft_graph_set_error(g, WEFT_ETYPE, "%s (at %s:%d): input %s is not a tensor",
                                    name, file, line,
                                    weft_type_kind(xt) != WEFT_TYPE_TENSOR ? "x" : "indices");
    }
    int nd = weft_type_ndim(xt);
    if (nd < 1 || axis < -nd || axis >= nd) {
        return weft_graph_set_error(g, WEFT_ERANGE, "%s (at %s:%d): axis %d out of range for "
                                    "x of rank %d", name, file, line, axis, nd);
    }
    if (!is_index_dtype(weft_type_dtype(it))) {
        const char *f;
        int l;
        weft_var_trace(idx, &f, &l);
        return weft_graph_set_error(g, WEFT_ETYPE, "%s (at %s:%d): indices (created at %s:%d) "
                                    "are %s, not of an integer dtype", name, file, line,
                                    f ? f : "?", l, weft_dtype_name(weft_type_dtype(it)));
    }
    *axis_out = axis < 0 ? axis + nd : axis;
    return WEFT_OK;
}

/* ---- Take ----------------------------------------------------------------- */

static weft_status_t take_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                    weft_var_t *const *inputs, size_t *n_out,
                                    const weft_type_t **out_types)
{
    const weft__take_props_t *p = weft_op_props(op);
    if (n_in != 2) {
        return weft_graph_set_error(g, WEFT_EINVAL, "Take: takes 2 inputs, got %zu", n_in);
    }
    const weft_type_t *xt = weft_var_type(inputs[0]), *it = weft_var_type(inputs[1]);
    if (weft_type_kind(xt) != WEFT_TYPE_TENSOR || weft_type_kind(it) != WEFT_TYPE_TENSOR ||
        !is_index_dtype(weft_type_dtype(it)) || p->axis < 0 || p->axis >= weft_type_ndim(xt)) {
        return weft_graph_set_error(g, WEFT_ETYPE, "Take: needs a tensor x of rank > %d and "
                                    "integer indices", (int)p->axis);
    }
    int64_t xs[WEFT_MAX_NDIM], is[WEFT_MAX_NDIM], shape[WEFT_MAX_NDIM];
    for (int d = 0; d < weft_type_ndim(xt); d++) xs[d] = weft_type_dim(xt, d);
    for (int d = 0; d < weft_type_ndim(it); d++) is[d] = weft_type_dim(it, d);
    int nd = weft__take_shape(weft_type_ndim(xt), xs, weft_type_ndim(it), is, p->axis, shape);
    if (nd < 0) {
        return weft_graph_set_error(g, WEFT_ESHAPE, "Take: output rank above %d", WEFT_MAX_NDIM);
    }
    *n_out = 1;
    return weft_type_tensor(g, weft_type_dtype(xt), nd, shape, &out_types[0]);
}

typedef struct gather {
    const char *x;
    char *out;
    const int64_t *idx;
    int64_t n, len; /* index count, x's axis length */
    size_t row;     /* bytes per row */
} gather_t;

/* Rows [begin, end) of the output: row r = (o, k) is x's row (o, idx[k]),
 * or zeros where idx[k] is -1 (Take{last}'s overwritten positions). */
static weft_status_t gather_range(void *arg, size_t begin, size_t end)
{
    const gather_t *c = arg;
    int64_t n = c->n;
#define GATHER_TYPED(T)                                                             \
    {                                                                               \
        const T *restrict xs = (const T *)(const void *)c->x;                      \
        T *restrict os = (T *)(void *)c->out;                                       \
        for (size_t r = begin; r < end; r++) {                                      \
            int64_t o = (int64_t)r / n, k = (int64_t)r % n;                         \
            os[r] = c->idx[k] < 0 ? (T)0 : xs[o * c->len + c->idx[k]];              \
        }                                                                           \
        return WEFT_OK;                                                             \
    }
    switch (c->row) {
    case 1: GATHER_TYPED(uint8_t)
    case 2: GATHER_TYPED(uint16_t)
    case 4: GATHER_TYPED(uint32_t)
    case 8: GATHER_TYPED(uint64_t)
    default: break;
    }
#undef GATHER_TYPED
    /* wider rows: (o, k) advanced without a division per row */
    int64_t o = (int64_t)begin / n, k = (int64_t)begin % n;
    const char *xo = c->x + (size_t)(o * c->len) * c->row;
    for (size_t r = begin; r < end; r++) {
        if (c->idx[k] < 0) memset(c->out + r * c->row, 0, c->row);
        else memcpy(c->out + r * c->row, xo + (size_t)c->idx[k] * c->row, c->row);
        if (++k == n) {
            k = 0;
            xo += (size_t)c->len * c->row;
        }
    }
    return WEFT_OK;
}

size_t weft__take_grain(size_t row_bytes)
{
    size_t g = WEFT__TAKE_GRAIN_BYTES / (row_bytes ? row_bytes : 1);
    return g ? g : 1;
}

/* Take{last}: marks -1 every index entry that a later entry repeats. */
static weft_status_t keep_last(weft_kernel_ctx_t *ctx, weft_tensor_t *ix, int64_t len)
{
    weft_tensor_t *lt = NULL;
    weft_status_t st = weft_kernel_scratch(ctx, WEFT_INT64, 1, &len, &lt);
    if (st != WEFT_OK) return st;
    int64_t *v = weft_tensor_data(ix), *last = weft_tensor_data(lt);
    int64_t n = (int64_t)weft_tensor_size(ix);
    for (int64_t k = 0; k < n; k++) last[v[k]] = k;
    for (int64_t k = 0; k < n; k++) v[k] = last[v[k]] == k ? v[k] : -1;
    weft_kernel_scratch_done(ctx, lt);
    return WEFT_OK;
}

static weft_status_t take_perform(const weft_apply_t *node, weft_tensor_t *const *inputs,
                                  weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    const weft__take_props_t *p = weft_op_props(weft_apply_op(node));
    weft_tensor_t *x = inputs[0], *xc = NULL, *ix = NULL;
    if (weft_tensor_ndim(x) <= p->axis) {
        return weft_kernel_error(ctx, WEFT_ESHAPE, "Take: x has %d dims, axis is %d",
                                 weft_tensor_ndim(x), (int)p->axis);
    }
    int64_t shape[WEFT_MAX_NDIM];
    int nd = weft__take_shape(weft_tensor_ndim(x), weft_tensor_shape(x),
                              weft_tensor_ndim(inputs[1]), weft_tensor_shape(inputs[1]),
                              p->axis, shape);
    weft__take_geom_t gm = weft__take_geom(x, p->axis);
    weft_status_t st = weft__take_indices(ctx, "Take", inputs[1], p->axis, gm.len, &ix);
    if (st == WEFT_OK && p->last) st = keep_last(ctx, ix, gm.len);
    if (st == WEFT_OK) st = weft_kernel_alloc_output(ctx, &outputs[0], weft_tensor_dtype(x), nd,
                                                     shape);
    if (st == WEFT_OK) st = weft_kernel_contiguous(ctx, x, &xc);
    if (st == WEFT_OK) {
        int64_t n = (int64_t)weft_tensor_size(inputs[1]);
        gather_t c = {weft_tensor_data(xc), weft_tensor_data(outputs[0]), weft_tensor_data(ix),
                      n, gm.len, (size_t)gm.inner * weft_dtype_size(weft_tensor_dtype(x))};
        size_t rows = (size_t)(gm.outer * n);
        if (rows > 0 && c.row > 0) {
            st = weft_kernel_parallel_for(ctx, rows, weft__take_grain(c.row), gather_range, &c);
        }
    }
    weft_kernel_contiguous_done(ctx, x, xc);
    weft_kernel_scratch_done(ctx, ix);
    return st;
}

/* gx = inc_at(zeros_like(x), indices, gz, axis) (Take{last}: set_at); the
 * indices get none. */
static weft_status_t take_grad(weft_graph_t *g, const weft_apply_t *node,
                               weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    const weft__take_props_t *p = weft_op_props(weft_apply_op(node));
    weft_var_t *x = weft_apply_input(node, 0), *gz = output_grads[0], *z;
    input_grads[0] = input_grads[1] = NULL;
    if (!gz || !weft__dtype_is_float(weft_type_dtype(weft_var_type(x)))) return WEFT_OK;
    const char *file;
    int line;
    weft_apply_trace(node, &file, &line);
    weft_status_t st = weft__got(g, z = weft_zeros_like_at(g, x, file, line));
    if (st != WEFT_OK) return st;
    /* Take{last} reads each destination once, at its last index: set_at */
    return weft__got(g, input_grads[0] = weft_set_at_at(g, z, weft_apply_input(node, 1), gz,
                                                        p->axis, !p->last, file, line));
}

static bool take_connected(const weft_apply_t *node, size_t in, size_t out)
{
    (void)node;
    (void)out;
    return in == 0;
}

int weft__take_props_print(const void *props, char *buf, size_t cap)
{
    const weft__take_props_t *p = props;
    return snprintf(buf, cap, "axis=%d%s%s", (int)p->axis, p->inplace ? ", inplace" : "",
                    p->last ? ", last" : "");
}

/* JSON props: {"axis": 1, "last": false}. */
static const weft__props_fields_t take_fields = {
    sizeof(weft__take_props_t),
    {WEFT__PROPS_FIELD("axis", WEFT__FIELD_I32, weft__take_props_t, axis),
     WEFT__PROPS_FIELD("last", WEFT__FIELD_I32_BOOL, weft__take_props_t, last)}};
WEFT__PROPS_FIELDS_HOOKS(take, take_fields)

const weft_op_class_t weft__take_class = {
    .size = sizeof(weft_op_class_t),
    .name = "Take",
    .props_size = sizeof(weft__take_props_t),
    .props_print = weft__take_props_print,
    .props_to_json = take_to_json,
    .props_from_json = take_from_json,
    .make_node = take_make_node,
    .perform = take_perform,
    .connection_pattern = take_connected,
    .grad = take_grad,
};

static weft_var_t *take_build(weft_graph_t *g, weft_var_t *x, weft_var_t *indices, int axis,
                              bool last, const char *file, int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft__take_props_t p = {0, 0, last ? 1 : 0};
    const weft_op_t *op = NULL;
    weft_status_t st = (!x || !indices) ? WEFT_EINVAL
                                        : weft__take_args(g, "Take", x, indices, axis, file, line,
                                                          &p.axis);
    if (st == WEFT_OK) st = weft_op_create(g, &weft__take_class, &p, &op);
    if (st == WEFT_OK) {
        weft_var_t *in[2] = {x, indices};
        st = weft__got(g, out = weft_op_call_at(g, op, 2, in, file, line));
    }
    return weft__ctor_end(g, st, out, "weft_take", file, line);
}

weft_var_t *weft_take_at(weft_graph_t *g, weft_var_t *x, weft_var_t *indices, int axis,
                         const char *file, int line)
{
    return take_build(g, x, indices, axis, false, file, line);
}

weft_var_t *weft__take_last_at(weft_graph_t *g, weft_var_t *x, weft_var_t *indices, int axis,
                               const char *file, int line)
{
    return take_build(g, x, indices, axis, true, file, line);
}
