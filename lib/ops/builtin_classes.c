/* The list of built-in op classes (weft/ops.h), one entry per line: each op
 * file's classes are appended here. lib/catalog registers them all in the op
 * class registry (weft_op_class_register) at load. */
#include <string.h>

#include "index/index_int.h"
#include "linalg/einsum_int.h"
#include "control/ifelse_int.h"
#include "linalg/lapack_int.h"
#include "linalg/linalg_int.h"
#include "nn/nn_int.h"
#include "ops_int.h"
#include "random/random_int.h"
#include "reduce/reduce_ops_int.h"
#include "shape/array_int.h"
#include "shape/symshape_int.h"
#include "weft/ops.h"

static const weft_op_class_t *const registry[] = {
#define ELEMWISE_ENTRY_(name, cls, arity) &weft__elemwise_classes[WEFT_ELEMWISE_##name],
    WEFT_ELEMWISE_TABLE(ELEMWISE_ENTRY_)
#undef ELEMWISE_ENTRY_
    &weft__dimshuffle_class,
    &weft__reshape_class,
    &weft__subtensor_class,
    &weft__set_subtensor_class,
    &weft__inc_subtensor_class,
    &weft__join_class,
    &weft__alloc_class,
    &weft__shape_class,
    &weft__shape_i_class,
    &weft__arange_class,
    &weft__linspace_class,
    &weft__axis_index_class,
    &weft__take_class,
    &weft__adv_set_class,
    &weft__adv_inc_class,
    &weft__nonzero_class,
    &weft__sum_axes_class,
    &weft__reduce_class_sum,
    &weft__reduce_class_mean,
    &weft__reduce_class_max,
    &weft__reduce_class_min,
    &weft__reduce_class_prod,
    &weft__reduce_grad_class,
    &weft__argmax_class,
    &weft__argmin_class,
    &weft__lred_classes[0],
    &weft__lred_classes[1],
    &weft__lred_classes[2],
    &weft__lred_classes[3],
    &weft__lred_classes[4],
    &weft__lred_classes[5],
    &weft__lred_classes[6],
    &weft__lred_classes[7],
    &weft__lred_classes[8],
    &weft__cumsum_class,
    &weft__cumprod_class,
    &weft__sort_class,
    &weft__topk_class,
    &weft__axis_scatter_class,
    &weft__dot_class,
    &weft__gemm_class,
    &weft__gemv_class,
    &weft__cholesky_class,
    &weft__trsm_class,
    &weft__syrk_class,
    &weft__trimask_class,
    &weft__solve_class,
    &weft__inv_class,
    &weft__det_class,
    &weft__slogdet_class,
    &weft__cho_solve_class,
    &weft__solve_tri_class,
    &weft__svd_class,
    &weft__eigh_class,
    &weft__qr_class,
    &weft__lstsq_class,
    &weft__einsum_class,
    &weft__composite_class,
    &weft__softmax_class,
    &weft__log_softmax_class,
    &weft__random_classes[WEFT__RANDOM_UNIFORM],
    &weft__random_classes[WEFT__RANDOM_NORMAL],
    &weft__random_classes[WEFT__RANDOM_BERNOULLI],
    &weft__random_classes[WEFT__RANDOM_CATEGORICAL],
    &weft__random_classes[WEFT__RANDOM_INTEGERS],
    &weft__random_classes[WEFT__RANDOM_PERMUTATION],
    &weft__ifelse_class,
};

size_t weft_ops_n_classes(void)
{
    return sizeof registry / sizeof registry[0];
}

const weft_op_class_t *weft_ops_class_at(size_t i)
{
    return i < weft_ops_n_classes() ? registry[i] : NULL;
}

const weft_op_class_t *weft_ops_find_class(const char *name)
{
    if (!name) return NULL;
    for (size_t i = 0; i < weft_ops_n_classes(); i++)
        if (strcmp(registry[i]->name, name) == 0) return registry[i];
    return NULL;
}
