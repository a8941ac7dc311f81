/* Differential steps of the lane reductions, scans and sorting ops
 * (weft/reduce.h: Argmax/Argmin over several axes, Any, All, Var, Std,
 * LogSumExp, NanSum, NanMean, NanMax, NanMin, CumSum, CumProd, Sort,
 * Argsort, Topk), drawn by the reduce family. */
#include "diff_gen_int.h"

/* Drawn axes of x (none, some, or NULL: all); fills the result shape. */
static int draw_axes(diff_gen_t *gn, const diff_val_t *x, bool keep, int *axes, size_t *n,
                     bool *all, int64_t *shape)
{
    int u = diff_rng_int(&gn->rng, 0, 9), nd = 0;
    bool red[DIFF_MAX_RANK] = { false };
    *n = 0;
    *all = u < 2;
    for (int d = 0; d < x->nd && u > 2; d++)
        if (diff_rng_chance(&gn->rng, 0.5)) {
            red[d] = true;
            axes[(*n)++] = diff_rng_chance(&gn->rng, 0.3) ? d - x->nd : d;
        }
    for (int d = 0; d < x->nd; d++) {
        red[d] |= *all;
        if (!red[d]) shape[nd++] = x->shape[d];
        else if (keep) shape[nd++] = 1;
    }
    return nd;
}

static void step_lreduce(diff_gen_t *gn, diff_val_t *x)
{
    int axes[DIFF_MAX_RANK];
    size_t n;
    bool all, keep = diff_rng_chance(&gn->rng, 0.3);
    int64_t shape[DIFF_MAX_RANK];
    int nd = draw_axes(gn, x, keep, axes, &n, &all, shape);
    weft_lreduce_kind_t kind =
        (weft_lreduce_kind_t)diff_rng_int(&gn->rng, 0, WEFT_LREDUCE_KIND_COUNT - 1);
    double ddof = (double)diff_rng_int(&gn->rng, 0, 2);
    weft_var_t *out = weft_lreduce_at(gn->g, kind, x->v, n, all ? NULL : axes, ddof, keep,
                                      __FILE__, __LINE__);
    gen_push(gn, out ? WEFT_OK : weft_graph_error(gn->g), out, nd, shape);
}

static void step_axis_op(diff_gen_t *gn, diff_val_t *x)
{
    if (x->nd == 0) return;
    int axis = diff_rng_int(&gn->rng, -x->nd, x->nd - 1), a = axis < 0 ? axis + x->nd : axis;
    int64_t shape[DIFF_MAX_RANK];
    for (int d = 0; d < x->nd; d++) shape[d] = x->shape[d];
    weft_var_t *out = NULL;
    switch (diff_rng_int(&gn->rng, 0, 4)) {
    case 0: out = weft_cumsum(gn->g, x->v, axis); break;
    case 1: out = weft_cumprod(gn->g, x->v, axis); break;
    case 2: out = weft_sort_at(gn->g, x->v, axis, diff_rng_chance(&gn->rng, 0.5), __FILE__,
                               __LINE__);
        break;
    default: {
        int64_t k = diff_rng_int(&gn->rng, 0, (int)x->shape[a]);
        shape[a] = k;
        out = weft_topk_at(gn->g, x->v, axis, k, diff_rng_chance(&gn->rng, 0.5), __FILE__,
                           __LINE__);
        break;
    }
    }
    gen_push(gn, out ? WEFT_OK : weft_graph_error(gn->g), out, x->nd, shape);
}

void gen_step_reduce_more(diff_gen_t *gn)
{
    diff_val_t *x = gen_pick(gn);
    if (!x || !gen_live(gn)) return;
    if (diff_rng_chance(&gn->rng, 0.6)) step_lreduce(gn, x);
    else step_axis_op(gn, x);
}
