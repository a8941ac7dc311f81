/* Public accessors of built-in op parameters (weft/op_info.h): DimShuffle's
 * order, a reduction's kind/axes/keepdims, SumAxes' axes. The props layouts
 * of DimShuffle and SumAxes are private to their files; they are mirrored
 * here and checked against the class's props_size before use, so a layout
 * change is reported as WEFT_ETYPE rather than misread. */
#include <stdint.h>

#include "ops_int.h"
#include "reduce/reduce_ops_int.h"
#include "weft/op_info.h"
#include "weft/shape_ops.h"

typedef struct ds_props_mirror {
    int32_t n;
    int32_t order[WEFT_MAX_NDIM];
} ds_props_mirror_t;

typedef struct sum_axes_mirror {
    uint32_t mask;
} sum_axes_mirror_t;

/* The props of op when its class is cls with the mirrored size, else NULL. */
static const void *props_of(const weft_op_t *op, const weft_op_class_t *cls, size_t size)
{
    const weft_op_class_t *c = weft_op_class(op);
    return c == cls && c->props_size == size ? weft_op_props(op) : NULL;
}

/* Writes the set bits of mask below ndim into axes in increasing order. */
static void mask_axes(uint32_t mask, int ndim, int *axes, int *n_axes)
{
    int n = 0;
    for (int d = 0; d < ndim && d < WEFT_MAX_NDIM; d++)
        if ((mask >> d) & 1u) axes[n++] = d;
    *n_axes = n;
}

weft_status_t weft_dimshuffle_op_info(const weft_op_t *op, int *order, int *n_order)
{
    if (!op || !order || !n_order) return WEFT_EINVAL;
    const ds_props_mirror_t *p = props_of(op, &weft__dimshuffle_class, sizeof *p);
    if (!p || p->n < 0 || p->n > WEFT_MAX_NDIM) return WEFT_ETYPE;
    for (int k = 0; k < p->n; k++) order[k] = p->order[k];
    *n_order = p->n;
    return WEFT_OK;
}

weft_status_t weft_reduce_op_info(const weft_op_t *op, weft_reduce_kind_t *kind, int *axes,
                                  int *n_axes, bool *keepdims)
{
    if (!op || !kind || !axes || !n_axes || !keepdims) return WEFT_EINVAL;
    const weft__reduce_props_t *p = NULL;
    for (int k = 0; k < WEFT_REDUCE_KIND_COUNT && !p; k++)
        p = props_of(op, weft__reduce_class((weft_reduce_kind_t)k), sizeof *p);
    if (!p) return WEFT_ETYPE;
    *kind = (weft_reduce_kind_t)p->kind;
    mask_axes(p->axes, p->ndim, axes, n_axes);
    *keepdims = p->keepdims != 0;
    return WEFT_OK;
}

weft_status_t weft_reduce_grad_op_info(const weft_op_t *op, weft_reduce_kind_t *kind,
                                       int *axes, int *n_axes, bool *keepdims)
{
    if (!op || !kind || !axes || !n_axes || !keepdims) return WEFT_EINVAL;
    const weft__reduce_props_t *p = props_of(op, &weft__reduce_grad_class, sizeof *p);
    if (!p) return WEFT_ETYPE;
    *kind = (weft_reduce_kind_t)p->kind;
    mask_axes(p->axes, p->ndim, axes, n_axes);
    *keepdims = p->keepdims != 0;
    return WEFT_OK;
}

weft_status_t weft_sum_axes_op_info(const weft_op_t *op, int *axes, int *n_axes)
{
    if (!op || !axes || !n_axes) return WEFT_EINVAL;
    const sum_axes_mirror_t *p = props_of(op, &weft__sum_axes_class, sizeof *p);
    if (!p) return WEFT_ETYPE;
    mask_axes(p->mask, 32, axes, n_axes);
    return WEFT_OK;
}
