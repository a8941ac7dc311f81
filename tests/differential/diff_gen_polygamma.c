/* The polygamma family (weft/elemwise.h, Polygamma): float inputs mapped
 * into (0.5, 8.5) or (-1.9, -1.1) (off the poles), an order n of 0..5 as a
 * constant of an integer dtype, bool, or x's float dtype (then the node
 * fuses), Polygamma(n, x), and a few elementwise steps after it. Drawn for
 * about one case in forty from a stream of its own
 * (diff_gen_polygamma_drawn), so the other families' cases are the same as
 * without it. */
#include "diff_gen_int.h"

bool diff_gen_polygamma_drawn(uint64_t seed)
{
    diff_rng_t r;
    diff_rng_seed(&r, seed ^ 0x706f6c7967616du); /* "polygam" */
    return diff_rng_chance(&r, 1.0 / 40);
}

/* x mapped to tanh(x)^2 * 8 + 0.5 or tanh(x) * 0.4 - 1.5. */
static diff_val_t *pg_domain(diff_gen_t *gn, diff_val_t *x)
{
    weft_dtype_t dt = gen_dt(x);
    diff_val_t *t = gen_unary(gn, WEFT_ELEMWISE_TANH, x);
    if (diff_rng_chance(&gn->rng, 0.7)) {
        t = gen_binary(gn, WEFT_ELEMWISE_MUL, gen_unary(gn, WEFT_ELEMWISE_SQR, t),
                       gen_const_fill(gn, dt, 0, NULL, 8.0));
        return gen_binary(gn, WEFT_ELEMWISE_ADD, t, gen_const_fill(gn, dt, 0, NULL, 0.5));
    }
    t = gen_binary(gn, WEFT_ELEMWISE_MUL, t, gen_const_fill(gn, dt, 0, NULL, 0.4));
    return gen_binary(gn, WEFT_ELEMWISE_SUB, t, gen_const_fill(gn, dt, 0, NULL, 1.5));
}

static void step_polygamma(diff_gen_t *gn)
{
    diff_val_t *x = gen_pick(gn);
    if (!x || !gen_is_float(gen_dt(x))) x = &gn->vals[0];
    x = pg_domain(gn, x);
    if (!x || !gen_live(gn)) return;
    static const weft_dtype_t orders[] = {WEFT_INT64, WEFT_INT32, WEFT_UINT8, WEFT_INT8,
                                          WEFT_BOOL};
    int pick = diff_rng_int(&gn->rng, 0, 6);
    weft_dtype_t dt = pick < 5 ? orders[pick] : gen_dt(x); /* x's dtype: fusable */
    int n = diff_rng_int(&gn->rng, 0, dt == WEFT_BOOL ? 1 : 5);
    bool full = diff_rng_chance(&gn->rng, 0.3); /* x's shape, else 0-d */
    diff_val_t *order = gen_const_fill(gn, dt, full ? x->nd : 0, full ? x->shape : NULL, n);
    gen_binary(gn, WEFT_ELEMWISE_POLYGAMMA, order, x);
}

/* Polygamma, then Mul / Add / Exp-free steps of the same dtype. */
static void step_after(diff_gen_t *gn)
{
    diff_val_t *y = &gn->vals[gn->n - 1];
    if (diff_rng_chance(&gn->rng, 0.5)) {
        step_polygamma(gn);
        return;
    }
    weft_elemwise_kind_t k = diff_rng_chance(&gn->rng, 0.5) ? WEFT_ELEMWISE_MUL : WEFT_ELEMWISE_ADD;
    gen_binary(gn, k, y, gen_operand_for(gn, y, (int)gen_dt(y)));
}

void gen_family_polygamma(diff_gen_t *gn)
{
    gen_inputs(gn, diff_rng_int(&gn->rng, 1, 2), true);
    if (!gen_live(gn)) return;
    step_polygamma(gn);
    gen_run_steps(gn, 0, 3, step_after);
}
