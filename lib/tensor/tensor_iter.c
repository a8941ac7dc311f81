/* The public strided walk (weft/tensor_iter.h): checks the operands,
 * computes broadcast strides and hands the geometry to the internal row
 * iterator (iter.c), which collapses and tiles it. */
#include <stdio.h>

#include "tensor/tensor_int.h"
#include "weft/tensor_iter.h"

static void shape_text(const weft_tensor_t *t, char *buf, size_t cap)
{
    weft_tensor_print_type(t, buf, cap);
}

static weft_status_t check_operands(size_t n, weft_tensor_t *const *ts, bool fn_ok)
{
    if (!fn_ok || !ts || n < 1 || n > WEFT_TENSOR_ITER_MAX)
        return weft__tensor_error(WEFT_EINVAL, "iter: NULL tensors or function, or %zu operands "
                                  "(1 to %d)", n, WEFT_TENSOR_ITER_MAX);
    for (size_t k = 0; k < n; k++)
        if (!ts[k]) return weft__tensor_error(WEFT_EINVAL, "iter: operand %zu is NULL", k);
    return WEFT_OK;
}

/* strides of t seen through out_ndim/out_shape: 0 on broadcast axes. */
static weft_status_t broadcast_strides(const weft_tensor_t *t, size_t k, int out_ndim,
                                       const int64_t *out_shape, const weft_tensor_t *ref,
                                       int64_t *st)
{
    int lead = out_ndim - t->ndim;
    bool ok = lead >= 0;
    for (int d = 0; ok && d < out_ndim; d++) {
        int64_t len = d < lead ? 1 : t->shape[d - lead];
        ok = len == out_shape[d] || len == 1;
        st[d] = d < lead || len == 1 ? 0 : t->strides[d - lead];
    }
    if (ok) return WEFT_OK;
    char a[96], b[96];
    shape_text(t, a, sizeof a);
    shape_text(ref, b, sizeof b);
    return weft__tensor_error(WEFT_ESHAPE, "iter: operand %zu (%s) does not broadcast to %s", k,
                              a, b);
}

weft_status_t weft_tensor_iter_rows(size_t n, weft_tensor_t *const *ts, weft_tensor_row_fn fn,
                                    void *arg)
{
    weft_status_t st = check_operands(n, ts, fn != NULL);
    if (st != WEFT_OK) return st;
    const weft_tensor_t *out = ts[0];
    int64_t strides[WEFT_TENSOR_ITER_MAX][WEFT_MAX_NDIM];
    const int64_t *sp[WEFT_TENSOR_ITER_MAX];
    char *base[WEFT_TENSOR_ITER_MAX];
    size_t isz[WEFT_TENSOR_ITER_MAX];
    for (size_t k = 0; k < n; k++) {
        st = broadcast_strides(ts[k], k, out->ndim, out->shape, out, strides[k]);
        if (st != WEFT_OK) return st;
        sp[k] = strides[k];
        base[k] = ts[k]->data;
        isz[k] = weft__dtype_size(ts[k]->dtype);
    }
    weft__iter_rows(out->ndim, out->shape, (int)n, base, sp, isz, fn, arg);
    return WEFT_OK;
}

weft_status_t weft_tensor_broadcast_shape(size_t n, weft_tensor_t *const *ts, int *ndim,
                                          int64_t *shape)
{
    if (!ndim || !shape) return weft__tensor_error(WEFT_EINVAL, "broadcast: NULL ndim or shape");
    weft_status_t st = check_operands(n, ts, true);
    if (st != WEFT_OK) return st;
    int nd = 0;
    for (size_t k = 0; k < n; k++) nd = ts[k]->ndim > nd ? ts[k]->ndim : nd;
    for (int d = 0; d < nd; d++) shape[d] = 1;
    for (size_t k = 0; k < n; k++) {
        int lead = nd - ts[k]->ndim;
        for (int d = lead; d < nd; d++) {
            int64_t len = ts[k]->shape[d - lead];
            if (len == shape[d] || len == 1) continue;
            if (shape[d] != 1) {
                char a[96];
                shape_text(ts[k], a, sizeof a);
                return weft__tensor_error(WEFT_ESHAPE, "broadcast: operand %zu (%s) has length "
                                          "%lld on axis %d where another has %lld", k, a,
                                          (long long)len, d, (long long)shape[d]);
            }
            shape[d] = len;
        }
    }
    *ndim = nd;
    return WEFT_OK;
}
