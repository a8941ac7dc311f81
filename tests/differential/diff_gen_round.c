/* Differential steps of the rounding, integer and logical kinds (issue 17,
 * include/weft/elemwise.h): Floor ... Clip on drawn operands, converted
 * where a kind refuses a dtype. The value pools already hold what these
 * kinds care about: negative operands and zeros (integer divisors), NaN,
 * infinities and -0.0, quarters (ties of round: 0.5, 2.5, -1.5) and the
 * integer extremes (MIN // -1). */
#include "diff_gen_int.h"

static const weft_elemwise_kind_t unary_kinds[] = {
    WEFT_ELEMWISE_FLOOR,    WEFT_ELEMWISE_CEIL,        WEFT_ELEMWISE_TRUNC,
    WEFT_ELEMWISE_ROUND,    WEFT_ELEMWISE_RINT,        WEFT_ELEMWISE_ISNAN,
    WEFT_ELEMWISE_ISINF,    WEFT_ELEMWISE_ISFINITE,    WEFT_ELEMWISE_LOGICAL_NOT,
    WEFT_ELEMWISE_INVERT,   WEFT_ELEMWISE_NAN_TO_NUM,  WEFT_ELEMWISE_ABS,
};
static const weft_elemwise_kind_t binary_kinds[] = {
    WEFT_ELEMWISE_MOD,         WEFT_ELEMWISE_FLOOR_DIVIDE, WEFT_ELEMWISE_FMOD,
    WEFT_ELEMWISE_LOGICAL_AND, WEFT_ELEMWISE_LOGICAL_OR,   WEFT_ELEMWISE_LOGICAL_XOR,
    WEFT_ELEMWISE_BITWISE_AND, WEFT_ELEMWISE_BITWISE_OR,   WEFT_ELEMWISE_BITWISE_XOR,
    WEFT_ELEMWISE_LEFT_SHIFT,  WEFT_ELEMWISE_RIGHT_SHIFT,
};
/* The kinds keeping a float dtype: they fuse with float arithmetic. */
static const weft_elemwise_kind_t float_kinds[] = {
    WEFT_ELEMWISE_FLOOR, WEFT_ELEMWISE_CEIL, WEFT_ELEMWISE_TRUNC,        WEFT_ELEMWISE_ROUND,
    WEFT_ELEMWISE_RINT,  WEFT_ELEMWISE_MOD,  WEFT_ELEMWISE_FLOOR_DIVIDE, WEFT_ELEMWISE_FMOD,
    WEFT_ELEMWISE_NAN_TO_NUM,
};

#define DRAW(gn, list) list[diff_rng_int(&(gn)->rng, 0, (int)(sizeof list / sizeof list[0]) - 1)]

static bool kind_is_bits(weft_elemwise_kind_t k)
{
    return k == WEFT_ELEMWISE_INVERT || k == WEFT_ELEMWISE_BITWISE_AND ||
           k == WEFT_ELEMWISE_BITWISE_OR || k == WEFT_ELEMWISE_BITWISE_XOR;
}

static bool kind_is_shift(weft_elemwise_kind_t k)
{
    return k == WEFT_ELEMWISE_LEFT_SHIFT || k == WEFT_ELEMWISE_RIGHT_SHIFT;
}

/* Kinds that refuse an all-bool input (numeric rules). */
static bool kind_is_numeric(weft_elemwise_kind_t k)
{
    return k == WEFT_ELEMWISE_FLOOR || k == WEFT_ELEMWISE_CEIL || k == WEFT_ELEMWISE_TRUNC ||
           k == WEFT_ELEMWISE_ROUND || k == WEFT_ELEMWISE_RINT || k == WEFT_ELEMWISE_MOD ||
           k == WEFT_ELEMWISE_FLOOR_DIVIDE || k == WEFT_ELEMWISE_FMOD ||
           k == WEFT_ELEMWISE_CLIP;
}

static weft_dtype_t random_int_dtype(diff_gen_t *gn)
{
    return diff_rng_chance(&gn->rng, 0.5) ? WEFT_INT32 : WEFT_INT64;
}

/* x converted so kind k accepts it: floats to an integer for the bitwise
 * kinds and shifts (bool too for shifts), bool to a number for the numeric
 * kinds when `alone` (no other operand makes the common dtype numeric). */
static diff_val_t *fit(diff_gen_t *gn, weft_elemwise_kind_t k, diff_val_t *x, bool alone)
{
    if (!x) return NULL;
    weft_dtype_t dt = gen_dt(x);
    if ((kind_is_bits(k) || kind_is_shift(k)) && gen_is_float(dt))
        return gen_cast(gn, x, random_int_dtype(gn));
    if (kind_is_shift(k) && dt == WEFT_BOOL && alone)
        return gen_cast(gn, x, random_int_dtype(gn));
    if (kind_is_numeric(k) && dt == WEFT_BOOL && alone)
        return gen_cast(gn, x, diff_rng_chance(&gn->rng, 0.5) ? WEFT_INT32 : WEFT_FLOAT64);
    return x;
}

static void not_distinct(diff_val_t *y)
{
    if (y) y->distinct = false; /* rounding and predicates merge values */
}

static void step_clip(diff_gen_t *gn)
{
    diff_val_t *x = fit(gn, WEFT_ELEMWISE_CLIP, gen_pick(gn), true);
    diff_val_t *lo = x ? gen_operand_for(gn, x, -1) : NULL;
    if (!lo || !gen_compat(x, lo, NULL, NULL)) return;
    int64_t shape[DIFF_MAX_RANK];
    int nd = gen_joint_shape(2, (diff_val_t *[]){ x, lo }, shape);
    diff_val_t *hi = gen_const(gn, diff_rng_chance(&gn->rng, 0.5) ? gen_dt(x) : gen_dt(lo), nd,
                               shape);
    if (!hi || !gen_live(gn)) return;
    weft_var_t *out = weft_clip(gn->g, x->v, lo->v, hi->v);
    nd = gen_joint_shape(3, (diff_val_t *[]){ x, lo, hi }, shape);
    not_distinct(gen_push(gn, WEFT_OK, out, nd, shape));
}

void gen_step_rounding(diff_gen_t *gn)
{
    int what = diff_rng_int(&gn->rng, 0, 9);
    if (what < 4) {
        weft_elemwise_kind_t k = DRAW(gn, unary_kinds);
        not_distinct(gen_unary(gn, k, fit(gn, k, gen_pick(gn), true)));
    } else if (what < 9) {
        weft_elemwise_kind_t k = DRAW(gn, binary_kinds);
        diff_val_t *a = fit(gn, k, gen_pick(gn), false);
        diff_val_t *b = a ? fit(gn, k, gen_operand_for(gn, a, -1), false) : NULL;
        if (a && b && gen_dt(a) == WEFT_BOOL && gen_dt(b) == WEFT_BOOL) a = fit(gn, k, a, true);
        not_distinct(gen_binary(gn, k, a, b));
    } else {
        step_clip(gn);
    }
}

void gen_rounding_fusable(diff_gen_t *gn, diff_val_t *x)
{
    weft_elemwise_kind_t k = DRAW(gn, float_kinds);
    if (weft_elemwise_arity(k) == 1)
        not_distinct(gen_unary(gn, k, x));
    else
        not_distinct(gen_binary(gn, k, x, gen_operand_for(gn, x, (int)gen_dt(x))));
}
