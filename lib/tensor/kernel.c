/* The kernel context: error reporting and output allocation for op perform
 * hooks (weft/kernel.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tensor/kernel_int.h"
#include "tensor/tensor_int.h"

weft_status_t weft__kernel_default_alloc(void *user, weft_dtype_t dtype, int ndim,
                                         const int64_t *shape, weft_tensor_t **out)
{
    (void)user;
    return weft_tensor_empty(dtype, ndim, shape, out);
}

weft_status_t weft_kernel_error(weft_kernel_ctx_t *ctx, weft_status_t status, const char *fmt,
                                ...)
{
    bool was_ok = status == WEFT_OK;
    if (was_ok) status = WEFT_EINVAL;
    if (!ctx) return status;
    if (ctx->status != WEFT_OK) return ctx->status; /* the node's first error wins */
    ctx->status = status;
    if (was_ok || !fmt) {
        snprintf(ctx->msg, sizeof ctx->msg, "kernel reported an error with WEFT_OK");
        return status;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->msg, sizeof ctx->msg, fmt, ap);
    va_end(ap);
    return status;
}

static bool same_geometry(const weft_tensor_t *t, weft_dtype_t dtype, int ndim,
                          const int64_t *shape)
{
    if (!t || t->dtype != dtype || t->ndim != ndim) return false;
    for (int d = 0; d < ndim; d++)
        if (t->shape[d] != shape[d]) return false;
    return true;
}

static bool cell_reusable(const weft_tensor_t *t, weft_dtype_t dtype, int ndim,
                          const int64_t *shape)
{
    return same_geometry(t, dtype, ndim, shape) && weft_tensor_is_contiguous(t) &&
           weft_tensor_is_exclusive(t);
}

/* weft_kernel_alloc_output past the runtime's own-cell case. Out of line, so
 * that case, taken by most nodes of a warm call, saves no registers. */
static __attribute__((noinline)) weft_status_t
alloc_output_slow(weft_kernel_ctx_t *ctx, weft_tensor_t **cell, weft_dtype_t dtype, int ndim,
                  const int64_t *shape)
{
    if (!ctx || !cell) return weft__tensor_error(WEFT_EINVAL, "NULL kernel context or cell");
    size_t count;
    weft_status_t st = weft__tensor_check_shape(dtype, ndim, shape, &count);
    if (st != WEFT_OK) return weft_kernel_error(ctx, st, "output: %s", weft_tensor_last_error());
    if (cell_reusable(*cell, dtype, ndim, shape)) return WEFT_OK;
    weft_tensor_release(*cell);
    *cell = NULL;
    st = ctx->alloc(ctx->alloc_user, dtype, ndim, shape, cell);
    if (st != WEFT_OK) {
        *cell = NULL;
        return weft_kernel_error(ctx, st, "cannot allocate a %s output of %zu elements: %s",
                                 weft__dtype_name(dtype), count, weft_status_str(st));
    }
    return WEFT_OK;
}

weft_status_t weft_kernel_alloc_output(weft_kernel_ctx_t *ctx, weft_tensor_t **cell,
                                       weft_dtype_t dtype, int ndim, const int64_t *shape)
{
    /* the runtime's own exclusive tensor (kernel_int.h): an existing tensor of
     * exactly this geometry, so the request is valid too */
    if (ctx && cell && cell == ctx->own_cell && same_geometry(*cell, dtype, ndim, shape))
        return WEFT_OK;
    return alloc_output_slow(ctx, cell, dtype, ndim, shape);
}

weft_status_t weft_kernel_scratch(weft_kernel_ctx_t *ctx, weft_dtype_t dtype, int ndim,
                                  const int64_t *shape, weft_tensor_t **out)
{
    if (!out) return weft__tensor_error(WEFT_EINVAL, "NULL out");
    *out = NULL;
    if (!ctx) return weft__tensor_error(WEFT_EINVAL, "NULL kernel context");
    size_t count;
    weft_status_t st = weft__tensor_check_shape(dtype, ndim, shape, &count);
    if (st != WEFT_OK) return weft_kernel_error(ctx, st, "scratch: %s", weft_tensor_last_error());
    st = ctx->alloc(ctx->alloc_user, dtype, ndim, shape, out);
    if (st != WEFT_OK) {
        *out = NULL;
        return weft_kernel_error(ctx, st, "cannot allocate %zu %s elements of scratch: %s", count,
                                 weft__dtype_name(dtype), weft_status_str(st));
    }
    return WEFT_OK;
}

weft_status_t weft__kernel_scratch_copy(weft_kernel_ctx_t *ctx, const weft_tensor_t *t,
                                        weft_tensor_t **out)
{
    weft_status_t st = weft_kernel_scratch(ctx, t->dtype, t->ndim, t->shape, out);
    if (st == WEFT_OK) weft_tensor_copy(*out, t); /* same shape and dtype: cannot fail */
    return st;
}

weft_status_t weft_kernel_contiguous(weft_kernel_ctx_t *ctx, weft_tensor_t *t,
                                     weft_tensor_t **out)
{
    if (out) *out = NULL;
    if (!ctx || !t || !out) {
        weft_status_t st = weft__tensor_error(WEFT_EINVAL, "weft_kernel_contiguous: NULL %s",
                                              !ctx ? "ctx" : !t ? "t" : "out");
        return ctx ? weft_kernel_error(ctx, st, "%s", weft_tensor_last_error()) : st;
    }
    if (weft_tensor_is_contiguous(t)) {
        *out = t;
        return WEFT_OK;
    }
    return weft__kernel_scratch_copy(ctx, t, out);
}

void weft_kernel_contiguous_done(weft_kernel_ctx_t *ctx, const weft_tensor_t *t,
                                 weft_tensor_t *c)
{
    if (c != t) weft_kernel_scratch_done(ctx, c);
}

void weft_kernel_scratch_done(weft_kernel_ctx_t *ctx, weft_tensor_t *t)
{
    if (!t) return;
    if (ctx && ctx->give_back) ctx->give_back(ctx->alloc_user, t);
    else weft_tensor_release(t);
}

/* The raw handle the runtime kept for cell (an output cell of the node), if
 * it has the wanted ndim; taken out of the stash. */
static weft_tensor_t *stash_take(weft_kernel_ctx_t *ctx, weft_tensor_t **cell, int ndim)
{
    for (uint32_t k = 0; k < ctx->n_out; k++) {
        if (cell != &ctx->out_cells[k]) continue;
        weft_tensor_t *raw = ctx->stash[k];
        if (!raw || raw->ndim != ndim) return NULL;
        ctx->stash[k] = NULL;
        return raw;
    }
    return NULL;
}

weft_status_t weft_kernel_view_output(weft_kernel_ctx_t *ctx, weft_tensor_t **cell,
                                      weft_tensor_t *base, int ndim, const int64_t *shape,
                                      const int64_t *strides, int64_t offset)
{
    if (!ctx || !cell || !base)
        return weft__tensor_error(WEFT_EINVAL, "NULL kernel context, cell or base");
    char *data = NULL;
    weft_status_t st = weft__tensor_view_check(base, ndim, shape, strides, offset, &data);
    if (st != WEFT_OK) return weft_kernel_error(ctx, st, "view: %s", weft_tensor_last_error());
    /* copies: shape or strides may point into the handle about to change */
    int64_t sh[WEFT_MAX_NDIM], str[WEFT_MAX_NDIM];
    if (ndim > 0) {
        memcpy(sh, shape, (size_t)ndim * sizeof *sh);
        memcpy(str, strides, (size_t)ndim * sizeof *str);
    }
    weft_tensor_t *old = *cell;
    if (old && old != base && old->ndim == ndim && weft__tensor_handle_alone(old)) {
        weft__tensor_repoint(old, base, sh, str, data);
        return WEFT_OK;
    }
    weft_tensor_t *v = weft__tensor_view_at(stash_take(ctx, cell, ndim), base, ndim, sh, str, data);
    if (!v)
        return weft_kernel_error(ctx, WEFT_ENOMEM, "cannot allocate a view handle: out of memory");
    *cell = v;
    weft_tensor_release(old);
    return WEFT_OK;
}

void weft_kernel_set_output(weft_kernel_ctx_t *ctx, weft_tensor_t **cell, weft_tensor_t *t)
{
    (void)ctx;
    if (!cell) {
        weft_tensor_release(t);
        return;
    }
    weft_tensor_t *old = *cell;
    *cell = t;
    weft_tensor_release(old);
}

size_t weft_kernel_worker(const weft_kernel_ctx_t *ctx)
{
    return ctx ? ctx->worker : 0;
}

void *weft_kernel_user(const weft_kernel_ctx_t *ctx)
{
    return ctx ? ctx->user : NULL;
}

size_t weft_kernel_threads(const weft_kernel_ctx_t *ctx)
{
    return ctx && ctx->pfor ? ctx->threads : 1;
}

size_t weft_kernel_idle_workers(const weft_kernel_ctx_t *ctx)
{
    return ctx && ctx->idle ? ctx->idle(ctx->pfor_user) : 0;
}

/* Ranges a grain of 0 cuts a loop into (weft/kernel.h). */
#define KERNEL_DEFAULT_RANGES 16

weft_status_t weft_kernel_parallel_for(weft_kernel_ctx_t *ctx, size_t n, size_t grain,
                                       weft_kernel_range_fn fn, void *arg)
{
    if (!ctx || !fn) return WEFT_EINVAL;
    if (n == 0) return WEFT_OK;
    /* the default grain depends on n alone, like every split weft makes
     * (execution.md §5) */
    if (grain == 0) grain = (n + KERNEL_DEFAULT_RANGES - 1) / KERNEL_DEFAULT_RANGES;
    if (weft_kernel_threads(ctx) <= 1 || n <= grain) return fn(arg, 0, n);
    return ctx->pfor(ctx->pfor_user, n, grain, fn, arg);
}

weft_status_t weft_kernel_status(const weft_kernel_ctx_t *ctx)
{
    return ctx ? ctx->status : WEFT_EINVAL;
}

const char *weft_kernel_message(const weft_kernel_ctx_t *ctx)
{
    return ctx ? ctx->msg : "";
}
