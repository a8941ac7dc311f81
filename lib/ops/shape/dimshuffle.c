/* DimShuffle: permute axes, insert length-1 axes, drop length-1 axes. A view
 * (view_map {0: [0]}); the gradient is the inverse DimShuffle. Also the
 * transpose and left-padding constructors built on it. */
#include <stdio.h>
#include <string.h>

#include "graph/ctor_int.h"
#include "ops_int.h"
#include "weft/json_props.h"
#include "weft/kernel.h"

typedef struct dimshuffle_props {
    int32_t n;                    /* output ndim */
    int32_t order[WEFT_MAX_NDIM]; /* input axis or WEFT_DIMSHUFFLE_NEW; unused entries 0 */
} dimshuffle_props_t;

static weft_status_t check_order(weft_graph_t *g, const dimshuffle_props_t *p,
                                 const weft_type_t *xt)
{
    int in_ndim = weft_type_ndim(xt);
    bool used[WEFT_MAX_NDIM] = {false};
    for (int k = 0; k < p->n; k++) {
        int a = p->order[k];
        if (a == WEFT_DIMSHUFFLE_NEW) continue;
        if (a < -1 || a >= in_ndim)
            return weft_graph_set_error(g, WEFT_EINVAL,
                                        "DimShuffle: order[%d] = %d outside [-1, %d)", k, a,
                                        in_ndim);
        if (used[a])
            return weft_graph_set_error(g, WEFT_EINVAL, "DimShuffle: axis %d listed twice", a);
        used[a] = true;
    }
    for (int a = 0; a < in_ndim; a++)
        if (!used[a] && weft_type_dim(xt, a) != 1)
            return weft_graph_set_error(g, WEFT_ESHAPE,
                                        "DimShuffle: dropped axis %d has static length %lld, "
                                        "not 1",
                                        a, (long long)weft_type_dim(xt, a));
    return WEFT_OK;
}

static weft_status_t ds_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                  weft_var_t *const *inputs, size_t *n_out,
                                  const weft_type_t **out_types)
{
    const dimshuffle_props_t *p = weft_op_props(op);
    if (n_in != 1)
        return weft_graph_set_error(g, WEFT_EINVAL, "DimShuffle takes 1 input, got %zu", n_in);
    const weft_type_t *xt = weft_var_type(inputs[0]);
    if (weft_type_kind(xt) != WEFT_TYPE_TENSOR)
        return weft_graph_set_error(g, WEFT_ETYPE, "DimShuffle: input 0 is not a tensor");
    weft_status_t st = check_order(g, p, xt);
    if (st != WEFT_OK) return st;
    int64_t shape[WEFT_MAX_NDIM];
    for (int k = 0; k < p->n; k++)
        shape[k] = p->order[k] == WEFT_DIMSHUFFLE_NEW ? 1 : weft_type_dim(xt, p->order[k]);
    *n_out = 1;
    return weft_type_tensor(g, weft_type_dtype(xt), p->n, shape, &out_types[0]);
}

static weft_status_t ds_perform(const weft_apply_t *node, weft_tensor_t *const *inputs,
                                weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    const dimshuffle_props_t *p = weft_op_props(weft_apply_op(node));
    weft_tensor_t *x = inputs[0];
    int64_t shape[WEFT_MAX_NDIM], strides[WEFT_MAX_NDIM];
    for (int a = 0; a < weft_tensor_ndim(x); a++) {
        bool kept = false;
        for (int k = 0; k < p->n; k++) kept |= p->order[k] == a;
        if (!kept && weft_tensor_dim(x, a) != 1)
            return weft_kernel_error(ctx, WEFT_ESHAPE, "dropped axis %d has length %lld, not 1",
                                     a, (long long)weft_tensor_dim(x, a));
    }
    for (int k = 0; k < p->n; k++) {
        bool fresh = p->order[k] == WEFT_DIMSHUFFLE_NEW;
        shape[k] = fresh ? 1 : weft_tensor_dim(x, p->order[k]);
        strides[k] = fresh ? 0 : weft_tensor_stride(x, p->order[k]);
    }
    return weft_kernel_view_output(ctx, &outputs[0], x, p->n, shape, strides, 0);
}

static size_t ds_view_map(const weft_op_t *op, weft_op_alias_t *out, size_t cap)
{
    (void)op;
    if (cap < 1) return 0;
    out[0].output = 0;
    out[0].input = 0;
    return 1;
}

static int ds_props_print(const void *props, char *buf, size_t cap)
{
    const dimshuffle_props_t *p = props;
    char tmp[WEFT_MAX_NDIM * 4 + 8];
    int n = 0;
    tmp[0] = '\0';
    for (int k = 0; k < p->n; k++)
        n += p->order[k] == WEFT_DIMSHUFFLE_NEW
                 ? snprintf(tmp + n, sizeof tmp - (size_t)n, k ? ",x" : "x")
                 : snprintf(tmp + n, sizeof tmp - (size_t)n, k ? ",%d" : "%d", (int)p->order[k]);
    return snprintf(buf, cap, "order=(%s)", tmp);
}

/* JSON props: {"order": [1, 0, -1]} (-1: new axis). */
static weft_status_t ds_to_json(const weft_op_t *op, weft_json_props_t *p)
{
    const dimshuffle_props_t *d = weft_op_props(op);
    int64_t order[WEFT_MAX_NDIM];
    for (int i = 0; i < d->n && i < WEFT_MAX_NDIM; i++) order[i] = d->order[i];
    return weft_json_props_put_int_array(p, "order", order, (size_t)d->n);
}

static weft_status_t ds_from_json(weft_graph_t *g, const weft_op_class_t *cls,
                                  const weft_json_props_t *p, const weft_op_t **out)
{
    dimshuffle_props_t d;
    memset(&d, 0, sizeof(d));
    int64_t order[WEFT_MAX_NDIM];
    size_t n = 0;
    weft_status_t s = weft_json_props_get_int_array(p, "order", order, WEFT_MAX_NDIM, &n);
    if (s != WEFT_OK) return s;
    for (size_t i = 0; i < n; i++) {
        if (order[i] < -1 || order[i] >= WEFT_MAX_NDIM)
            return weft_json_props_error(p, WEFT_EPARSE, "order[%zu]: bad axis %lld", i,
                                         (long long)order[i]);
        d.order[i] = (int32_t)order[i];
    }
    d.n = (int32_t)n;
    return weft_op_create(g, cls, &d, out);
}

/* Inverse: input axis a comes back from output position k (order[k] == a);
 * dropped input axes come back as new axes; new output axes are dropped. */
static weft_status_t ds_grad(weft_graph_t *g, const weft_apply_t *node,
                             weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    const dimshuffle_props_t *p = weft_op_props(weft_apply_op(node));
    weft_var_t *x = weft_apply_input(node, 0);
    input_grads[0] = NULL;
    if (!output_grads[0] || !weft__dtype_is_float(weft_type_dtype(weft_var_type(x))))
        return WEFT_OK;
    int inv[WEFT_MAX_NDIM], nd = weft_type_ndim(weft_var_type(x));
    for (int a = 0; a < nd; a++) {
        inv[a] = WEFT_DIMSHUFFLE_NEW;
        for (int k = 0; k < p->n; k++)
            if (p->order[k] == a) inv[a] = k;
    }
    return weft__got(g, input_grads[0] =
                            weft_dimshuffle_at(g, output_grads[0], nd, inv, __FILE__, __LINE__));
}

const weft_op_class_t weft__dimshuffle_class = {
    .size = sizeof(weft_op_class_t),
    .name = "DimShuffle",
    .props_size = sizeof(dimshuffle_props_t),
    .props_print = ds_props_print,
    .props_to_json = ds_to_json,
    .props_from_json = ds_from_json,
    .make_node = ds_make_node,
    .perform = ds_perform,
    .view_map = ds_view_map,
    .grad = ds_grad,
};

static weft_status_t dimshuffle_impl(weft_graph_t *g, weft_var_t *x, int n_order, const int *order,
                                     const char *file, int line, weft_var_t **out)
{
    if (out) *out = NULL;
    if (!g) return WEFT_EINVAL;
    if (!x || !out || (n_order > 0 && !order))
        return weft_graph_set_error(g, WEFT_EINVAL, "DimShuffle: NULL argument");
    if (n_order < 0 || n_order > WEFT_MAX_NDIM)
        return weft_graph_set_error(g, WEFT_EINVAL, "DimShuffle: %d axes outside [0, %d]",
                                    n_order, WEFT_MAX_NDIM);
    dimshuffle_props_t p;
    memset(&p, 0, sizeof p);
    p.n = n_order;
    for (int k = 0; k < n_order; k++) p.order[k] = order[k];
    const weft_op_t *op;
    weft_status_t st = weft_op_create(g, &weft__dimshuffle_class, &p, &op);
    if (st != WEFT_OK) return st;
    return weft__got(g, *out = weft_op_call_at(g, op, 1, &x, file, line));
}

static weft_status_t transpose_impl(weft_graph_t *g, weft_var_t *x, const char *file, int line,
                                    weft_var_t **out)
{
    if (out) *out = NULL;
    if (!g) return WEFT_EINVAL;
    if (!x || !out) return weft_graph_set_error(g, WEFT_EINVAL, "transpose: NULL argument");
    int nd = weft_type_ndim(weft_var_type(x)), order[WEFT_MAX_NDIM];
    for (int k = 0; k < nd; k++) order[k] = nd - 1 - k;
    return weft__got(g, *out = weft_dimshuffle_at(g, x, nd, order, file, line));
}

static weft_status_t pad_left_impl(weft_graph_t *g, weft_var_t *x, int ndim, const char *file,
                                   int line, weft_var_t **out)
{
    if (out) *out = NULL;
    if (!g) return WEFT_EINVAL;
    if (!x || !out) return weft_graph_set_error(g, WEFT_EINVAL, "pad_left: NULL argument");
    int nd = weft_type_ndim(weft_var_type(x)), order[WEFT_MAX_NDIM];
    if (ndim < nd || ndim > WEFT_MAX_NDIM)
        return weft_graph_set_error(g, WEFT_EINVAL, "pad_left: %d dimensions to %d", nd, ndim);
    if (ndim == nd) {
        *out = x;
        return WEFT_OK;
    }
    for (int k = 0; k < ndim; k++)
        order[k] = k < ndim - nd ? WEFT_DIMSHUFFLE_NEW : k - (ndim - nd);
    return weft__got(g, *out = weft_dimshuffle_at(g, x, ndim, order, file, line));
}

weft_var_t *weft_dimshuffle_at(weft_graph_t *g, weft_var_t *x, int n_order, const int *order,
                               const char *file, int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t st = dimshuffle_impl(g, x, n_order, order, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_dimshuffle", file, line);
}

weft_var_t *weft_transpose_at(weft_graph_t *g, weft_var_t *x, const char *file, int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t st = transpose_impl(g, x, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_transpose", file, line);
}

weft_var_t *weft_pad_left_at(weft_graph_t *g, weft_var_t *x, int ndim, const char *file, int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t st = pad_left_impl(g, x, ndim, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_pad_left", file, line);
}
