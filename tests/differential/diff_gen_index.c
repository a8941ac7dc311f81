/* Differential steps of the advanced indexing ops (weft/index_ops.h): Take
 * along a drawn axis with a constant index array (negative entries and
 * duplicates included, any integer dtype), then sometimes inc_at / set_at
 * of a drawn y at those indices (np.add.at / x[idx] = y), and x[mask] /
 * mask updates with a constant mask (Nonzero), drawn by the shape family. */
#include <stdlib.h>

#include "diff_gen_int.h"

static const weft_dtype_t index_dtypes[] = {WEFT_INT8, WEFT_INT32, WEFT_INT64, WEFT_UINT16};

/* A constant index array of drawn shape (rank 0..2) with entries in
 * [-len, len) (unsigned: [0, len)); NULL when len is 0 or on failure. */
static weft_var_t *index_const(diff_gen_t *gn, int64_t len, int *ind, int64_t *ishape)
{
    weft_dtype_t dt = index_dtypes[diff_rng_int(&gn->rng, 0, 3)];
    if (len <= 0 || (dt == WEFT_INT8 && len > 127)) return NULL;
    *ind = diff_rng_int(&gn->rng, 0, 2);
    for (int d = 0; d < *ind; d++) ishape[d] = diff_rng_int(&gn->rng, 1, 4);
    size_t n = gen_count(*ind, ishape);
    int64_t *v = malloc(n * sizeof *v + 1);
    weft_tensor_t *t = NULL;
    weft_var_t *out = NULL;
    const weft_type_t *ty;
    if (!v) return NULL;
    bool sign = weft_dtype_kind(dt) == WEFT_KIND_INT;
    for (size_t i = 0; i < n; i++) {
        v[i] = diff_rng_int(&gn->rng, sign ? (int)-len : 0, (int)len - 1);
    }
    int64_t n1 = (int64_t)n;
    if (weft_tensor_from_data(WEFT_INT64, 1, &n1, NULL, v, &t) == WEFT_OK &&
        weft_type_tensor(gn->g, dt, *ind, ishape, &ty) == WEFT_OK) {
        weft_tensor_t *c = NULL;
        if (weft_tensor_copy_as(t, dt, &c) == WEFT_OK) {
            out = weft_constant_create(gn->g, ty, weft_tensor_data(c),
                                       n * weft_dtype_size(dt));
            weft_tensor_release(c);
        }
    }
    weft_tensor_release(t);
    free(v);
    return out;
}

/* x[mask] with a constant mask of x's full shape, or mask inc/set of 2.
 * The result's length is data-dependent: it is pushed as a 1-d value of
 * the count drawn here. */
static void step_mask(diff_gen_t *gn, diff_val_t *x)
{
    size_t n = gen_count(x->nd, x->shape);
    unsigned char *m = malloc(n + 1);
    const weft_type_t *ty;
    if (!m) return;
    int64_t count = 0;
    for (size_t i = 0; i < n; i++) count += m[i] = diff_rng_chance(&gn->rng, 0.5) ? 1 : 0;
    weft_var_t *mask = NULL;
    if (weft_type_tensor(gn->g, WEFT_BOOL, x->nd, x->shape, &ty) == WEFT_OK) {
        mask = weft_constant_create(gn->g, ty, m, n);
    }
    free(m);
    if (!mask) return;
    if (diff_rng_chance(&gn->rng, 0.5) || weft_dtype_kind(gen_dt(x)) == WEFT_KIND_BOOL) {
        weft_var_t *t = weft_mask_take(gn->g, x->v, mask);
        gen_push(gn, t ? WEFT_OK : weft_graph_error(gn->g), t, 1, &count);
        return;
    }
    weft_var_t *two = weft_constant_scalar(gn->g, gen_dt(x), 2.0);
    weft_var_t *u = diff_rng_chance(&gn->rng, 0.5) ? weft_mask_inc(gn->g, x->v, mask, two)
                                                   : weft_mask_set(gn->g, x->v, mask, two);
    gen_push(gn, u ? WEFT_OK : weft_graph_error(gn->g), u, x->nd, x->shape);
}

/* one_hot(indices, depth) in x's dtype: np.eye(depth, dtype)[indices]. */
static void step_one_hot(diff_gen_t *gn, diff_val_t *x)
{
    int64_t depth = diff_rng_int(&gn->rng, 1, 6), shape[3];
    int ind = 0;
    weft_var_t *ix = index_const(gn, depth, &ind, shape);
    if (!ix || weft_dtype_kind(gen_dt(x)) == WEFT_KIND_COMPLEX) return;
    shape[ind] = depth;
    weft_var_t *h = weft_one_hot(gn->g, ix, depth, gen_dt(x));
    gen_push(gn, h ? WEFT_OK : weft_graph_error(gn->g), h, ind + 1, shape);
}

void gen_step_index(diff_gen_t *gn)
{
    diff_val_t *x = gen_pick(gn);
    if (!x || !gen_live(gn) || x->nd == 0) return;
    if (diff_rng_chance(&gn->rng, 0.25)) {
        step_mask(gn, x);
        return;
    }
    if (diff_rng_chance(&gn->rng, 0.1)) {
        step_one_hot(gn, x);
        return;
    }
    int axis = diff_rng_int(&gn->rng, -x->nd, x->nd - 1), a = axis < 0 ? axis + x->nd : axis;
    int ind = 0;
    int64_t ishape[2], shape[DIFF_MAX_RANK + 2];
    weft_var_t *ix = index_const(gn, x->shape[a], &ind, ishape);
    if (!ix || x->nd - 1 + ind > DIFF_MAX_RANK) return;
    int nd = 0;
    for (int d = 0; d < a; d++) shape[nd++] = x->shape[d];
    for (int d = 0; d < ind; d++) shape[nd++] = ishape[d];
    for (int d = a + 1; d < x->nd; d++) shape[nd++] = x->shape[d];
    weft_var_t *t = weft_take(gn->g, x->v, ix, axis);
    if (!diff_rng_chance(&gn->rng, 0.5) || weft_dtype_kind(gen_dt(x)) == WEFT_KIND_BOOL) {
        gen_push(gn, t ? WEFT_OK : weft_graph_error(gn->g), t, nd, shape);
        return;
    }
    /* y: the taken values transformed (so its shape fits), or a scalar */
    weft_var_t *y = diff_rng_chance(&gn->rng, 0.3)
                        ? weft_constant_scalar(gn->g, gen_dt(x), 2.0)
                        : weft_add(gn->g, t, t);
    bool inc = diff_rng_chance(&gn->rng, 0.6);
    weft_var_t *u = inc ? weft_inc_at(gn->g, x->v, ix, y, axis) : weft_set_at(gn->g, x->v, ix, y, axis);
    gen_push(gn, u ? WEFT_OK : weft_graph_error(gn->g), u, x->nd, x->shape);
}
