/* The complex family (docs/dtypes.md, "Complex numbers"): float inputs made
 * complex by Complex(x, y) or a Cast, then complex steps - arithmetic with
 * complex or real operands (promotion), the transcendental kinds, Real,
 * Imag, Conj, Abs, Angle, and Sum/Mean/Prod. Drawn for about one case in
 * sixteen from a stream of its own (diff_gen_complex_drawn), so the other
 * families' cases are the same as without it. */
#include "diff_gen_int.h"

static bool is_complex(weft_dtype_t dt)
{
    return dt == WEFT_COMPLEX64 || dt == WEFT_COMPLEX128;
}

bool diff_gen_complex_drawn(uint64_t seed)
{
    diff_rng_t r;
    diff_rng_seed(&r, seed ^ 0x636f6d706c6578u); /* "complex" */
    return diff_rng_chance(&r, 1.0 / 16);
}

/* The most recent complex value, or NULL. */
static diff_val_t *latest_complex(diff_gen_t *gn)
{
    for (int i = gn->n - 1; i >= 0; i--)
        if (is_complex(gen_dt(&gn->vals[i]))) return &gn->vals[i];
    return NULL;
}

/* A complex value from the float input x: Complex(x, y) or a Cast. */
static diff_val_t *make_complex(diff_gen_t *gn, diff_val_t *x)
{
    weft_dtype_t dt = gen_dt(x);
    if (diff_rng_chance(&gn->rng, 0.6))
        return gen_binary(gn, WEFT_ELEMWISE_COMPLEX, x, gen_operand_for(gn, x, (int)dt));
    return gen_cast(gn, x, dt == WEFT_FLOAT32 ? WEFT_COMPLEX64 : WEFT_COMPLEX128);
}

static const weft_elemwise_kind_t cx_unary[] = {
    WEFT_ELEMWISE_NEG,  WEFT_ELEMWISE_CONJ, WEFT_ELEMWISE_SQR, WEFT_ELEMWISE_EXP,
    WEFT_ELEMWISE_LOG,  WEFT_ELEMWISE_SQRT, WEFT_ELEMWISE_SIN, WEFT_ELEMWISE_COS,
    WEFT_ELEMWISE_TANH, WEFT_ELEMWISE_REAL, WEFT_ELEMWISE_IMAG, WEFT_ELEMWISE_ABS,
    WEFT_ELEMWISE_ANGLE,
};
static const weft_elemwise_kind_t cx_binary[] = {
    WEFT_ELEMWISE_ADD, WEFT_ELEMWISE_SUB, WEFT_ELEMWISE_MUL, WEFT_ELEMWISE_DIV, WEFT_ELEMWISE_EQ,
};

static void step_complex(diff_gen_t *gn)
{
    diff_val_t *z = latest_complex(gn);
    if (!z || diff_rng_chance(&gn->rng, 0.2)) z = make_complex(gn, &gn->vals[0]);
    if (!z || !gen_live(gn)) return;
    int u = diff_rng_int(&gn->rng, 0, 9);
    if (u < 5) {
        gen_unary(gn, cx_unary[diff_rng_int(&gn->rng, 0, (int)(sizeof cx_unary /
                                                               sizeof cx_unary[0]) - 1)], z);
    } else if (u < 9) {
        weft_elemwise_kind_t k =
            cx_binary[diff_rng_int(&gn->rng, 0, (int)(sizeof cx_binary / sizeof cx_binary[0]) - 1)];
        /* a complex operand of z's dtype, or a real one (promotion) */
        weft_dtype_t part = gen_dt(z) == WEFT_COMPLEX64 ? WEFT_FLOAT32 : WEFT_FLOAT64;
        int dt = diff_rng_chance(&gn->rng, 0.6) ? (int)gen_dt(z) : (int)part;
        diff_val_t *b = gen_operand_for(gn, z, dt);
        if (diff_rng_chance(&gn->rng, 0.5)) gen_binary(gn, k, z, b);
        else gen_binary(gn, k, b, z);
    } else {
        static const weft_reduce_kind_t kinds[] = {WEFT_REDUCE_SUM, WEFT_REDUCE_MEAN,
                                                   WEFT_REDUCE_PROD};
        gen_reduce(gn, kinds[diff_rng_int(&gn->rng, 0, 2)], z);
    }
}

void gen_family_complex(diff_gen_t *gn)
{
    gen_inputs(gn, diff_rng_int(&gn->rng, 1, 2), true);
    if (!gen_live(gn)) return;
    make_complex(gn, &gn->vals[0]);
    gen_run_steps(gn, 1, 5, step_complex);
}
