/* Differential steps of IfElse (weft/ifelse.h, docs/control-flow.md):
 * IfElse(c, x, y) with x from the pool, y another pool value of x's dtype
 * and run-time shape (or x transformed), and c a 0-d pool value of a real
 * dtype (a reduction's result, so a computed condition) or a constant (which
 * fast_run folds). NumPy's reference picks the side the same way; a
 * condition whose own tolerance leaves its truth open makes the result
 * unchecked. */
#include "diff_gen_int.h"

/* A 0-d real value of the pool (recent first), or NULL. */
static diff_val_t *pick_cond(diff_gen_t *gn)
{
    for (int i = gn->n - 1; i >= 0; i--) {
        diff_val_t *v = &gn->vals[i];
        if (v->nd == 0 && weft_dtype_kind(gen_dt(v)) != WEFT_KIND_COMPLEX) return v;
    }
    return NULL;
}

/* Another pool value of x's dtype and run-time shape, or NULL. */
static diff_val_t *pick_like(diff_gen_t *gn, const diff_val_t *x)
{
    for (int i = gn->n - 1; i >= 0; i--) {
        diff_val_t *v = &gn->vals[i];
        bool same = v != x && v->nd == x->nd && gen_dt(v) == gen_dt(x);
        for (int d = 0; same && d < x->nd; d++) same = v->shape[d] == x->shape[d];
        if (same) return v;
    }
    return NULL;
}

void gen_step_ifelse(diff_gen_t *gn)
{
    diff_val_t *x = gen_pick(gn);
    if (!x || !gen_live(gn)) return;
    diff_val_t *y = pick_like(gn, x);
    if (!y || diff_rng_chance(&gn->rng, 0.3)) y = gen_const(gn, gen_dt(x), x->nd, x->shape);
    diff_val_t *c = diff_rng_chance(&gn->rng, 0.8) ? pick_cond(gn) : NULL;
    if (!c) c = gen_const(gn, WEFT_BOOL, 0, NULL);
    if (!y || !c || !gen_live(gn)) return;
    bool swap = diff_rng_chance(&gn->rng, 0.5);
    weft_var_t *r = weft_ifelse1(gn->g, c->v, swap ? y->v : x->v, swap ? x->v : y->v);
    gen_push(gn, r ? WEFT_OK : weft_graph_error(gn->g), r, x->nd, x->shape);
}
