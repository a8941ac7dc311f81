/* A weft-prof plugin (weft/plugin.h), as a user would write one: a shared
 * library that links weft and registers the op class UserTriple
 * (y = 3 * x, float64, contiguous or not) from weft_plugin_init.
 * tests/prof/user_op.json uses it. */
#include "weft/weft.h"

static weft_status_t triple_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                      weft_var_t *const *in, size_t *n_out,
                                      const weft_type_t **out)
{
    (void)op;
    if (n_in != 1) return weft_graph_set_error(g, WEFT_EINVAL, "UserTriple takes 1 input");
    if (weft_type_dtype(weft_var_type(in[0])) != WEFT_FLOAT64)
        return weft_graph_set_error(g, WEFT_ETYPE, "UserTriple: input 0 is not float64");
    *n_out = 1;
    out[0] = weft_var_type(in[0]);
    return WEFT_OK;
}

static weft_status_t triple_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                    weft_tensor_t **out, weft_kernel_ctx_t *ctx)
{
    (void)node;
    weft_tensor_t *x = NULL;
    weft_status_t st = weft_tensor_contiguous(in[0], &x);
    if (st == WEFT_OK)
        st = weft_kernel_alloc_output(ctx, &out[0], WEFT_FLOAT64, weft_tensor_ndim(x),
                                      weft_tensor_shape(x));
    if (st == WEFT_OK) {
        const double *a = weft_tensor_data(x);
        double *y = weft_tensor_data(out[0]);
        for (size_t i = 0; i < weft_tensor_size(x); i++) y[i] = 3.0 * a[i];
    }
    weft_tensor_release(x);
    return st;
}

static const weft_op_class_t triple_class = {.size = sizeof(weft_op_class_t),
                                             .name = "UserTriple",
                                             .make_node = triple_make_node,
                                             .perform = triple_perform};

WEFT_PLUGIN_EXPORT weft_status_t weft_plugin_init(void);
WEFT_PLUGIN_EXPORT weft_status_t weft_plugin_init(void)
{
    return weft_op_class_register(&triple_class);
}
