/* Elementwise loop plans (docs/execution.md §3.7): what an elementwise node's
 * perform decides from its input geometry - the output shape, the operand
 * strides with broadcasting resolved, whether the loop collapses to one row
 * (a contiguous or scalar-broadcast case: one row-kernel call), whether it
 * may split over workers, the row kernel - decided on the first run with a
 * geometry and cached in the runtime's plan cell (tensor/kernel_int.h). A run
 * whose inputs have the cached dtypes, shapes and strides compares them and
 * goes straight to the loop.
 *
 * Same bits as an unplanned run: a one-row plan makes the call
 * weft__iter_rows would make (weft__iter_one_row), the others call
 * weft__iter_rows or, when the loop may split, weft__ew_loop_run itself. */
#include <string.h>

#include "ops_int.h"
#include "tensor/kernel_int.h"

static const int64_t *plan_strides(const weft__ew_plan_t *p, int o)
{
    return weft__ew_plan_shape(p) + (size_t)p->ndim * (size_t)(1 + o);
}

static size_t plan_bytes(int n_in, int ndim)
{
    size_t nop = (size_t)n_in + 1, nd = (size_t)ndim;
    size_t words = (size_t)n_in * (1 + 2 * nd) + nop + nd + nop * nd;
    return offsetof(weft__ew_plan_t, w) + words * sizeof(int64_t);
}

const weft__ew_plan_t *weft__ew_plan_cached(const weft_kernel_ctx_t *ctx,
                                            const weft_apply_t *node, weft_tensor_t *const *in)
{
    const weft__ew_plan_t *p = ctx->plan ? *ctx->plan : NULL;
    if (!p || p->node != node) return NULL;
    const int nd = p->ndim;
    const int64_t *k = p->w;
    for (int i = 0; i < p->n_in; i++, k += 1 + 2 * nd) {
        const weft_tensor_t *t = in[i];
        if (!t || t->dtype != k[0] || t->ndim != nd) return NULL;
        for (int d = 0; d < nd; d++)
            if (t->shape[d] != k[1 + d] || t->strides[d] != k[1 + nd + d]) return NULL;
    }
    return p;
}

/* The strides of operand t over the output shape: 0 on broadcast axes. */
static void resolve_strides(const weft_tensor_t *t, int ndim, const int64_t *shape, int64_t *st)
{
    for (int d = 0; d < ndim; d++) st[d] = t->shape[d] == shape[d] ? t->strides[d] : 0;
}

/* Whether the output (ops[0]) matches the node's output type. */
static bool output_typed(const weft_type_t *ot, const weft_tensor_t *out)
{
    if (out->dtype != weft_type_dtype(ot) || out->ndim != weft_type_ndim(ot)) return false;
    for (int d = 0; d < out->ndim; d++)
        if (weft_type_dim(ot, d) >= 0 && weft_type_dim(ot, d) != out->shape[d]) return false;
    return true;
}

const weft__ew_plan_t *weft__ew_plan_build(weft_kernel_ctx_t *ctx, const weft__ew_plan_t *spec,
                                           const weft_type_t *out_type, const int64_t *shape,
                                           weft_tensor_t *const *in, weft_tensor_t *const *ops,
                                           weft__ew_plan_buf_t *buf)
{
    return weft__ew_plan_build_with(ctx, spec, out_type, shape, in, ops, NULL, 0, buf);
}

const weft__ew_plan_t *weft__ew_plan_build_with(weft_kernel_ctx_t *ctx,
                                                const weft__ew_plan_t *spec,
                                                const weft_type_t *out_type,
                                                const int64_t *shape, weft_tensor_t *const *in,
                                                weft_tensor_t *const *ops, const void *payload,
                                                size_t bytes, weft__ew_plan_buf_t *buf)
{
    weft__ew_plan_t *p = (weft__ew_plan_t *)(void *)buf->room; /* only ever used as a plan */
    *p = *spec;
    const int nd = p->ndim, nop = p->n_in + 1;
    p->bytes = (uint32_t)plan_bytes(p->n_in, nd);
    int64_t *w = p->w, count = 1;
    for (int i = 0; i < p->n_in; i++, w += 1 + 2 * nd) {
        w[0] = in[i]->dtype;
        memcpy(w + 1, in[i]->shape, (size_t)nd * sizeof *w);
        memcpy(w + 1 + nd, in[i]->strides, (size_t)nd * sizeof *w);
    }
    int64_t *row_s = w, *out_shape = w + nop;
    memcpy(out_shape, shape, (size_t)nd * sizeof *w);
    const int64_t *sp[WEFT__ITER_MAX_OPS];
    for (int o = 0; o < nop; o++) {
        int64_t *st = out_shape + (size_t)nd * (size_t)(1 + o);
        resolve_strides(ops[o], nd, shape, st);
        sp[o] = st;
    }
    int axis = 0; /* the axis weft__ew_loop_run would split */
    for (int d = 0; d < nd; d++) {
        count *= shape[d];
        if (shape[axis] == 1 && shape[d] != 1) axis = d;
    }
    p->may_split = nd > 0 && count >= p->min_split && shape[axis] >= 2;
    p->one_row = weft__iter_one_row(nd, shape, nop, sp, &p->row_n, row_s);
    p->typed = output_typed(out_type, ops[0]);
    p->payload_off = 0;
    if (payload && bytes <= WEFT__EW_PLAN_PAYLOAD_MAX) {
        size_t off = (p->bytes + 15) & ~(size_t)15; /* aligned for any payload field */
        memcpy((unsigned char *)p + off, payload, bytes);
        p->payload_off = (uint32_t)off;
        p->bytes = (uint32_t)(off + bytes);
    }
    return weft__kernel_plan_store(ctx, p, p->bytes);
}

/* The loop split over workers: large, so the operand array costs nothing. */
static weft_status_t split_loop(weft_kernel_ctx_t *ctx, const weft__ew_plan_t *p,
                                weft_tensor_t *out, weft_tensor_t *const *in)
{
    weft_tensor_t *ops[WEFT__ITER_MAX_OPS];
    ops[0] = out;
    memcpy(ops + 1, in, p->n_in * sizeof *ops);
    void *arg = p->payload_off ? (unsigned char *)p + p->payload_off : p->fn_arg;
    return weft__ew_loop_run(ctx, (size_t)p->n_in + 1, ops, p->ndim, weft__ew_plan_shape(p),
                             p->fn, arg, p->min_split);
}

weft_status_t weft__ew_plan_loop(weft_kernel_ctx_t *ctx, const weft__ew_plan_t *p,
                                 weft_tensor_t *out, weft_tensor_t *const *in)
{
    const int nop = p->n_in + 1;
    if (p->may_split && ctx->pfor && ctx->threads > 1) return split_loop(ctx, p, out, in);
    void *arg = p->payload_off ? (unsigned char *)p + p->payload_off : p->fn_arg;
    char *base[WEFT__ITER_MAX_OPS];
    base[0] = out->data;
    for (int i = 0; i < p->n_in; i++) base[i + 1] = in[i]->data;
    if (p->one_row) {
        if (p->row_n) p->fn(p->row_n, base, weft__ew_plan_row_strides(p), arg);
        return WEFT_OK;
    }
    const int64_t *sp[WEFT__ITER_MAX_OPS];
    size_t isz[WEFT__ITER_MAX_OPS];
    for (int o = 0; o < nop; o++) {
        sp[o] = plan_strides(p, o);
        isz[o] = weft__dtype_size(o ? in[o - 1]->dtype : out->dtype);
    }
    weft__iter_rows(p->ndim, weft__ew_plan_shape(p), nop, base, sp, isz, p->fn, arg);
    return WEFT_OK;
}

int weft__ew_inplace_input(int ip, weft_tensor_t *const *in)
{
    return ip >= 0 && weft_tensor_is_contiguous(in[ip]) ? ip : -1;
}

weft_status_t weft__ew_plan_run(weft_kernel_ctx_t *ctx, const weft__ew_plan_t *p,
                                weft_tensor_t *const *in, weft_tensor_t *const *loop_in,
                                weft_tensor_t **out)
{
    if (p->inplace < 0) {
        weft_status_t st =
            weft_kernel_alloc_output(ctx, &out[0], p->odt, p->ndim, weft__ew_plan_shape(p));
        if (st != WEFT_OK) return st;
    } else if (out[0] != in[p->inplace]) { /* else the cell holds it already */
        weft_kernel_set_output(ctx, &out[0], weft_tensor_retain(in[p->inplace]));
    }
    weft_status_t st = weft__ew_plan_loop(ctx, p, out[0], loop_in);
    if (st != WEFT_OK) return weft_kernel_error(ctx, st, "cannot split the loop over workers");
    ctx->out_typed = p->typed;
    return WEFT_OK;
}
