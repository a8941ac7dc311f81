/* Private to lib/ops/custom: the class object behind a one-callback op
 * (weft/custom_op.h). The op class is the first member, so the hooks get
 * back to the description from weft_op_class(op). */
#ifndef WEFT_CUSTOM_INT_H
#define WEFT_CUSTOM_INT_H

#include "weft/custom_op.h"

typedef struct weft__custom_class {
    weft_op_class_t cls; /* first: hooks cast the class pointer back */
    weft_custom_op_desc_t d;
    weft_dtype_t fixed_dtype; /* d.dtype when set */
    struct weft__custom_class *next;
} weft__custom_class_t;

static inline const weft__custom_class_t *weft__custom_of(const weft_apply_t *node)
{
    return (const weft__custom_class_t *)weft_op_class(weft_apply_op(node));
}

static inline bool weft__custom_is_elemwise(const weft__custom_class_t *c)
{
    return c->d.kernel == NULL;
}

/* The hooks (custom_run.c: perform; custom_class.c: the rest). */
weft_status_t weft__custom_perform(const weft_apply_t *node, weft_tensor_t *const *inputs,
                                   weft_tensor_t **outputs, weft_kernel_ctx_t *ctx);

#endif /* WEFT_CUSTOM_INT_H */
