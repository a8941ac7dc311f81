/* Differential steps of symbolic shapes (weft/symshape.h, docs/shapes.md):
 * Reshape to a shape vector built from Shape_i sizes (Shape, Shape_i,
 * Join), Alloc with size inputs, ARange / Linspace with size arguments, and
 * tile / repeat / pad / roll / repeat_vec, which go through AxisIndex + Take
 * when the drawn input has an unknown length (the static path otherwise).
 * Whether a step is one of these is drawn from a stream of its own
 * (gen_symshape_drawn), so other cases keep their graphs. */
#include "diff_gen_int.h"

bool gen_symshape_drawn(diff_gen_t *gn)
{
    return diff_rng_chance(&gn->srng, 0.08);
}

static weft_var_t *isize(diff_gen_t *gn, int64_t v)
{
    return weft_constant_scalar(gn->g, WEFT_INT64, (double)v);
}

/* x flattened through a shape vector [-1], or back to its own shape. */
static void step_reshape_sym(diff_gen_t *gn, diff_val_t *x)
{
    weft_var_t *m1 = isize(gn, -1), *v = weft_stack(gn->g, 1, &m1, 0);
    int64_t n = (int64_t)gen_count(x->nd, x->shape);
    weft_var_t *flat = weft_reshape_sym(gn->g, x->v, v);
    if (diff_rng_chance(&gn->rng, 0.5) || x->nd == 0) {
        gen_push(gn, WEFT_OK, flat, 1, &n);
        return;
    }
    /* back to x's shape, its first size inferred */
    weft_var_t *sz[DIFF_MAX_RANK];
    sz[0] = m1;
    for (int d = 1; d < x->nd; d++) sz[d] = weft_shape_i(gn->g, x->v, d);
    /* -1 cannot be inferred for no elements (NumPy neither) */
    bool whole = diff_rng_chance(&gn->rng, 0.5) || n == 0;
    weft_var_t *sv = whole ? weft_shape(gn->g, x->v) : weft_stack(gn->g, (size_t)x->nd, sz, 0);
    gen_push(gn, WEFT_OK, weft_reshape_sym(gn->g, flat, sv), x->nd, x->shape);
}

/* broadcast_to_sym(x, (k, x's sizes...)). */
static void step_alloc_sym(diff_gen_t *gn, diff_val_t *x)
{
    if (x->nd + 1 > DIFF_MAX_RANK) return;
    int64_t shape[DIFF_MAX_RANK];
    weft_var_t *sz[DIFF_MAX_RANK];
    shape[0] = diff_rng_int(&gn->rng, 0, 3);
    sz[0] = isize(gn, shape[0]);
    for (int d = 0; d < x->nd; d++) {
        shape[d + 1] = x->shape[d];
        sz[d + 1] = weft_shape_i(gn->g, x->v, d);
    }
    gen_push(gn, WEFT_OK, weft_broadcast_to_sym(gn->g, x->v, x->nd + 1, sz), x->nd + 1, shape);
}

/* arange(k, len(x, 0) + k2, step) as int64, or linspace(-1, 2, len(x, 0)). */
static void step_range_sym(diff_gen_t *gn, diff_val_t *x)
{
    if (x->nd == 0) return;
    int64_t n = x->shape[0], start = diff_rng_int(&gn->rng, -3, 3);
    int64_t step = diff_rng_chance(&gn->rng, 0.5) ? 1 : diff_rng_int(&gn->rng, 2, 3);
    weft_var_t *len = weft_shape_i(gn->g, x->v, 0);
    if (diff_rng_chance(&gn->rng, 0.4)) {
        bool endpoint = diff_rng_chance(&gn->rng, 0.7);
        weft_var_t *a = weft_constant_scalar(gn->g, WEFT_FLOAT64, -1);
        weft_var_t *b = weft_constant_scalar(gn->g, WEFT_FLOAT64, 2);
        gen_push(gn, WEFT_OK, weft_linspace_sym(gn->g, a, b, len, endpoint, WEFT_FLOAT64), 1,
                 &n);
        return;
    }
    int64_t stop = n + start, count = stop > start ? (stop - start + step - 1) / step : 0;
    weft_var_t *r = weft_arange_sym(gn->g, isize(gn, start),
                                    weft_add(gn->g, len, isize(gn, start)), isize(gn, step),
                                    WEFT_INT64);
    gen_push(gn, WEFT_OK, r, 1, &count);
}

/* tile / repeat / pad / roll along drawn axes, or repeat with counts. */
static void step_builders(diff_gen_t *gn, diff_val_t *x)
{
    if (x->nd == 0) return;
    int a = diff_rng_int(&gn->rng, 0, x->nd - 1);
    int64_t shape[DIFF_MAX_RANK], n = x->shape[a];
    for (int d = 0; d < x->nd; d++) shape[d] = x->shape[d];
    weft_var_t *y = NULL;
    switch (diff_rng_int(&gn->rng, 0, 4)) {
    case 0: {
        int64_t reps[DIFF_MAX_RANK];
        for (int d = 0; d < x->nd; d++) shape[d] *= reps[d] = diff_rng_int(&gn->rng, 0, 2);
        y = weft_tile(gn->g, x->v, x->nd, reps);
        break;
    }
    case 1: {
        int64_t r = diff_rng_int(&gn->rng, 0, 3);
        shape[a] *= r;
        y = weft_repeat(gn->g, x->v, r, a);
        break;
    }
    case 2: {
        static const weft_pad_mode_t modes[3] = {WEFT_PAD_CONSTANT, WEFT_PAD_EDGE,
                                                 WEFT_PAD_REFLECT};
        weft_pad_mode_t m = modes[diff_rng_int(&gn->rng, 0, 2)];
        int64_t w[2 * DIFF_MAX_RANK] = {0};
        for (int d = 0; d < x->nd; d++) {
            /* edge and reflect cannot extend an empty axis; reflect past the
             * length (static or not) repeats NumPy's reflection */
            int hi = m == WEFT_PAD_CONSTANT ? 2 : m == WEFT_PAD_EDGE ? (x->shape[d] ? 2 : 0)
                     : (x->shape[d] > 0 ? 4 : 0);
            if (hi < 0) hi = 0;
            w[2 * d] = diff_rng_int(&gn->rng, 0, hi);
            w[2 * d + 1] = diff_rng_int(&gn->rng, 0, hi);
            shape[d] += w[2 * d] + w[2 * d + 1];
        }
        y = weft_pad(gn->g, x->v, x->nd, w, m, 1.5);
        break;
    }
    case 3:
        y = weft_roll(gn->g, x->v, diff_rng_int(&gn->rng, -7, 7), a);
        break;
    default: {
        int64_t counts[8], nr = n <= 8 && diff_rng_chance(&gn->rng, 0.7) ? n : 1, total = 0;
        for (int64_t j = 0; j < nr; j++) counts[j] = diff_rng_int(&gn->rng, 0, 3);
        for (int64_t j = 0; j < n; j++) total += counts[nr == 1 ? 0 : j];
        const weft_type_t *t;
        if (weft_type_tensor(gn->g, WEFT_INT64, 1, &nr, &t) != WEFT_OK) return;
        shape[a] = total;
        y = weft_repeat_vec(gn->g, x->v, weft_constant_create(gn->g, t, counts,
                                                              (size_t)nr * sizeof *counts), a);
    }
    }
    gen_push(gn, WEFT_OK, y, x->nd, shape);
}

void gen_step_symshape(diff_gen_t *gn)
{
    diff_val_t *x = gen_pick(gn);
    if (!x) return;
    switch (diff_rng_int(&gn->rng, 0, 4)) {
    case 0: step_reshape_sym(gn, x); break;
    case 1: step_alloc_sym(gn, x); break;
    case 2: step_range_sym(gn, x); break;
    default: step_builders(gn, x); break;
    }
}
