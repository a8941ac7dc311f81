/* Scan's gradient: not differentiable yet (weft_grad reports WEFT_ENOGRAD
 * naming the node). */
#include "scan_int.h"

weft_status_t weft__scan_grad(weft_graph_t *g, const weft_apply_t *node,
                              weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    (void)output_grads;
    (void)input_grads;
    char nb[160];
    weft_apply_describe(node, nb, sizeof nb);
    return weft_graph_set_error(g, WEFT_ENOGRAD, "Scan: %s has no gradient", nb);
}
