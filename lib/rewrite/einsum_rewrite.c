/* local_einsum_lower (fast_run, tags "einsum" and "fast_math"): an Einsum
 * node of float or complex operands with static lengths becomes its
 * pairwise contractions in the order of its path prop
 * (weft_einsum_lowered, docs/linalg.md "What is lowered to what"). Tagged
 * fast_math because Dot sums in another order than the direct kernel:
 * excluding it keeps mode none's bits. Other Einsum nodes (integer, bool,
 * float16 dtypes, unknown lengths) keep the direct kernel. */
#include "graph/ctor_int.h"
#include "rewrite_int.h"
#include "weft/einsum.h"

static bool lowerable(const weft_apply_t *node)
{
    weft_dtype_t dt = weft_type_dtype(weft_var_type(weft_apply_input(node, 0)));
    if (dt != WEFT_FLOAT32 && dt != WEFT_FLOAT64 && dt != WEFT_COMPLEX64 &&
        dt != WEFT_COMPLEX128) {
        return false;
    }
    for (size_t i = 0; i < weft_apply_n_inputs(node); i++) {
        if (!weft_type_is_static(weft_var_type(weft_apply_input(node, i)))) {
            return false;
        }
    }
    return true;
}

weft_status_t weft__local_einsum_lower(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                       weft_rewrite_result_t *res)
{
    (void)user;
    const char *subs = NULL;
    size_t n = 0, n_pairs = 0;
    int32_t path[2 * (WEFT_EINSUM_MAX_OPERANDS - 1)];
    if (weft_einsum_op_info(weft_apply_op(node), &subs, &n, path, &n_pairs) != WEFT_OK ||
        !lowerable(node)) {
        return WEFT_OK;
    }
    weft_var_t *ops[WEFT_EINSUM_MAX_OPERANDS], *out = weft_apply_output(node, 0), *r;
    for (size_t i = 0; i < n; i++) {
        ops[i] = weft_apply_input(node, i);
    }
    const char *file;
    int line;
    weft_apply_trace(node, &file, &line);
    weft_graph_t *g = weft_fgraph_graph(fg);
    weft_status_t st = weft__got(g, r = weft_einsum_lowered_at(g, subs, n, ops, path, file, line));
    if (st != WEFT_OK || !weft__can_replace(out, r)) {
        return st;
    }
    return weft_rewrite_result_replace(res, out, r);
}
