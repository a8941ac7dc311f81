/* The random ops' gradient (weft/random.h, docs/random.md §7). The sample
 * of uniform and normal is low + (high - low) * u and mean + std * z with u
 * and z functions of the key alone, so the reparameterized gradient needs
 * u or z: the hook draws them again from the same key with low 0, high 1
 * (mean 0, std 1), which gives exactly the u (z) of the forward draw.
 * Bernoulli's and categorical's float parameter gets an undefined gradient
 * (as PyTensor's RandomVariable); the key and integer parameters none. */
#include "graph/ctor_int.h"
#include "ops_int.h"
#include "random_int.h"

static weft_status_t reparam_grad(weft_graph_t *g, const weft_apply_t *node,
                                  weft__random_kind_t k, weft_var_t *gz, weft_var_t **input_grads)
{
    const weft__random_props_t *p = weft_op_props(weft_apply_op(node));
    weft_dtype_t dt = (weft_dtype_t)p->dtype;
    const char *file;
    int line;
    weft_apply_trace(node, &file, &line);
    weft_var_t *std[2] = {weft_constant_scalar_at(g, dt, 0.0, file, line),
                          weft_constant_scalar_at(g, dt, 1.0, file, line)};
    weft_var_t *e = NULL, *ga = gz, *gb;
    weft_status_t st = weft__random_draw(g, weft__random_name(k), k, weft_apply_input(node, 0),
                                         std, dt, p->ndim, p->shape, file, line, &e, NULL);
    if (st != WEFT_OK) return st;
    if (k == WEFT__RANDOM_UNIFORM)
        ga = weft_binary_at(g, WEFT_ELEMWISE_MUL, gz,
                            weft_binary_at(g, WEFT_ELEMWISE_SUB, std[1], e, file, line), file,
                            line);
    gb = weft_binary_at(g, WEFT_ELEMWISE_MUL, gz, e, file, line);
    if ((st = weft__got(g, ga)) != WEFT_OK || (st = weft__got(g, gb)) != WEFT_OK) return st;
    st = weft__grad_reduce_to(g, ga, weft_apply_input(node, 1), &input_grads[1]);
    return st == WEFT_OK ? weft__grad_reduce_to(g, gb, weft_apply_input(node, 2), &input_grads[2])
                         : st;
}

weft_status_t weft__random_grad(weft_graph_t *g, const weft_apply_t *node,
                                weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    weft__random_kind_t k =
        (weft__random_kind_t)(weft_op_class(weft_apply_op(node)) - weft__random_classes);
    weft_var_t *gz = output_grads[1];
    if (!gz) return WEFT_OK; /* the new key carries no gradient */
    switch (k) {
    case WEFT__RANDOM_UNIFORM:
    case WEFT__RANDOM_NORMAL: return reparam_grad(g, node, k, gz, input_grads);
    case WEFT__RANDOM_BERNOULLI:
    case WEFT__RANDOM_CATEGORICAL: return weft__grad_null(g, node, &input_grads[1]);
    default: return WEFT_OK;
    }
}
