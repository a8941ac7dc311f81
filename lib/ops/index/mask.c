/* Boolean masks (weft/index_ops.h): Nonzero (the flat positions of a bool
 * tensor's true elements, C order - np.flatnonzero) and the mask
 * constructors composed of it, Reshape, Take and the updates: x[mask] is
 * take(x reshaped to (-1,) + x.shape[k:], flatnonzero(mask), 0) for a mask
 * of x's leading k dimensions, so its gradient is Take's (an inc_at). The
 * output length is data-dependent: its static length is unknown. */
#include <string.h>

#include "graph/ctor_int.h"
#include "index/index_int.h"
#include "ops_int.h"

static weft_status_t nz_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                  weft_var_t *const *inputs, size_t *n_out,
                                  const weft_type_t **out_types)
{
    (void)op;
    if (n_in < 1 || n_in > 2 || weft_type_kind(weft_var_type(inputs[0])) != WEFT_TYPE_TENSOR ||
        weft_type_dtype(weft_var_type(inputs[0])) != WEFT_BOOL) {
        return weft_graph_set_error(g, WEFT_ETYPE, "Nonzero: takes a bool tensor (and "
                                    "the masked tensor)");
    }
    const int64_t len = WEFT_DIM_UNKNOWN;
    *n_out = 1;
    return weft_type_tensor(g, WEFT_INT64, 1, &len, &out_types[0]);
}

/* Sequential: the count decides the output's length before any write.
 * A second input (the masked tensor) is checked for shape only. */
static weft_status_t nz_perform(const weft_apply_t *node, weft_tensor_t *const *inputs,
                                weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    const weft_tensor_t *mk = inputs[0];
    if (weft_apply_n_inputs(node) == 2) { /* the masked tensor: its leading lengths */
        const weft_tensor_t *x = inputs[1];
        bool ok = weft_tensor_ndim(mk) <= weft_tensor_ndim(x);
        for (int d = 0; ok && d < weft_tensor_ndim(mk); d++) {
            ok = weft_tensor_dim(mk, d) == weft_tensor_dim(x, d);
        }
        if (!ok) {
            return weft_kernel_error(ctx, WEFT_ESHAPE, "Nonzero: the mask's shape does not match "
                                     "the leading dimensions of the masked tensor");
        }
    }
    weft_tensor_t *m = NULL;
    weft_status_t st = weft_kernel_contiguous(ctx, inputs[0], &m);
    if (st != WEFT_OK) return st;
    const unsigned char *b = weft_tensor_data(m);
    int64_t n = (int64_t)weft_tensor_size(m), count = 0;
    for (int64_t i = 0; i < n; i++) count += b[i] != 0;
    st = weft_kernel_alloc_output(ctx, &outputs[0], WEFT_INT64, 1, &count);
    if (st == WEFT_OK) {
        int64_t *o = weft_tensor_data(outputs[0]), j = 0;
        for (int64_t i = 0; i < n; i++) {
            if (b[i]) o[j++] = i;
        }
    }
    weft_kernel_contiguous_done(ctx, inputs[0], m);
    return st;
}

static bool nz_connected(const weft_apply_t *node, size_t in, size_t out)
{
    (void)node;
    (void)in;
    (void)out;
    return false;
}

const weft_op_class_t weft__nonzero_class = {
    .size = sizeof(weft_op_class_t),
    .name = "Nonzero",
    .make_node = nz_make_node,
    .perform = nz_perform,
    .connection_pattern = nz_connected,
};

/* Checks mask against x (bool, rank k <= x's, static lengths agreeing; x's
 * dimensions from k on static unless k is x's rank) and builds x reshaped
 * to (-1,) + x.shape[k:] in *flat and flatnonzero(mask) in *pos. */
static weft_status_t mask_prepare(weft_graph_t *g, const char *name, weft_var_t *x,
                                  weft_var_t *mask, const char *file, int line,
                                  weft_var_t **flat, weft_var_t **pos)
{
    const weft_type_t *xt = weft_var_type(x), *mt = weft_var_type(mask);
    if (weft_type_kind(xt) != WEFT_TYPE_TENSOR || weft_type_kind(mt) != WEFT_TYPE_TENSOR ||
        weft_type_dtype(mt) != WEFT_BOOL || weft_type_ndim(mt) > weft_type_ndim(xt) ||
        weft_type_ndim(mt) < 1) {
        return weft_graph_set_error(g, WEFT_ETYPE, "%s (at %s:%d): the mask must be a bool "
                                    "tensor of rank 1 .. x's rank", name, file, line);
    }
    int k = weft_type_ndim(mt), nd = weft_type_ndim(xt);
    int64_t shape[WEFT_MAX_NDIM];
    shape[0] = -1;
    for (int d = 0; d < nd; d++) {
        int64_t a = weft_type_dim(mt, d < k ? d : 0), b = weft_type_dim(xt, d);
        if (d < k && a != WEFT_DIM_UNKNOWN && b != WEFT_DIM_UNKNOWN && a != b) {
            return weft_graph_set_error(g, WEFT_ESHAPE, "%s (at %s:%d): the mask has length "
                                        "%lld in dimension %d, x %lld", name, file, line,
                                        (long long)a, d, (long long)b);
        }
        if (d >= k && b == WEFT_DIM_UNKNOWN) {
            return weft_graph_set_error(g, WEFT_ESHAPE, "%s (at %s:%d): x's dimension %d after "
                                        "the mask needs a static length", name, file, line, d);
        }
        if (d >= k) shape[d - k + 1] = b;
    }
    const weft_op_t *op;
    weft_status_t st = weft_op_create(g, &weft__nonzero_class, NULL, &op);
    weft_var_t *in[2] = {mask, x};
    if (st == WEFT_OK) st = weft__got(g, *pos = weft_op_call_at(g, op, 2, in, file, line));
    if (st == WEFT_OK) {
        st = weft__got(g, *flat = weft_reshape_at(g, x, nd - k + 1, shape, file, line));
    }
    return st;
}

weft_var_t *weft_mask_take_at(weft_graph_t *g, weft_var_t *x, weft_var_t *mask,
                              const char *file, int line)
{
    weft_var_t *out = NULL, *flat = NULL, *pos = NULL;
    weft__ctor_begin(g);
    weft_status_t st = (!x || !mask) ? WEFT_EINVAL
                                     : mask_prepare(g, "mask_take", x, mask, file, line, &flat,
                                                    &pos);
    if (st == WEFT_OK) st = weft__got(g, out = weft_take_at(g, flat, pos, 0, file, line));
    return weft__ctor_end(g, st, out, "weft_mask_take", file, line);
}

weft_var_t *weft_mask_set_at(weft_graph_t *g, weft_var_t *x, weft_var_t *mask, weft_var_t *y,
                             bool inc, const char *file, int line)
{
    weft_var_t *out = NULL, *flat = NULL, *pos = NULL, *set = NULL;
    weft__ctor_begin(g);
    weft_status_t st = (!x || !mask || !y)
                           ? WEFT_EINVAL
                           : mask_prepare(g, inc ? "mask_inc" : "mask_set", x, mask, file, line,
                                          &flat, &pos);
    if (st == WEFT_OK) {
        st = weft__got(g, set = weft_set_at_at(g, flat, pos, y, 0, inc, file, line));
    }
    if (st == WEFT_OK) st = weft__got(g, out = weft_reshape_like_at(g, set, x, file, line));
    return weft__ctor_end(g, st, out, inc ? "weft_mask_inc" : "weft_mask_set", file, line);
}
