/* The differential runner's graph generator: inputs, constants, the
 * elementwise, shape and reduction steps, and the family driver
 * (diff_gen_case). A step picks its operands among the values built so far
 * (recent ones preferred, so graphs grow deep as well as wide), or makes a
 * constant that fits. */
#include <stdlib.h>
#include <string.h>

#include "diff_gen_int.h"

static const char *const family_names[DIFF_FAM_COUNT] = {
    "elemwise", "shape", "reduce", "linalg", "fusion", "rewrite", "mixed", "grad", "dtypes",
    "complex", "polygamma",
};

const char *diff_family_name(diff_family_t f)
{
    return (unsigned)f < DIFF_FAM_COUNT ? family_names[f] : "?";
}

/* ---- core ---------------------------------------------------------------------- */

weft_dtype_t gen_dt(const diff_val_t *x)
{
    return weft_type_dtype(weft_var_type(x->v));
}

int64_t gen_stat(const diff_val_t *x, int d)
{
    return weft_type_dim(weft_var_type(x->v), d);
}

bool gen_is_float(weft_dtype_t dt)
{
    return weft_dtype_kind(dt) == WEFT_KIND_FLOAT;
}

size_t gen_count(int nd, const int64_t *shape)
{
    size_t n = 1;
    for (int d = 0; d < nd; d++) n *= (size_t)shape[d];
    return n;
}

bool gen_live(const diff_gen_t *gn)
{
    return gn->st == WEFT_OK && gn->n < DIFF_MAX_VALS - 8;
}

diff_val_t *gen_push(diff_gen_t *gn, weft_status_t st, weft_var_t *v, int nd,
                     const int64_t *shape)
{
    if (gn->st != WEFT_OK) return NULL;
    if (st != WEFT_OK || !v) { /* a NULL v: the constructor's error kept on the graph */
        weft_status_t kept = weft_graph_error(gn->g);
        gn->st = st != WEFT_OK ? st : kept != WEFT_OK ? kept : WEFT_EINVAL;
        return NULL;
    }
    /* full, or too large to be worth it (a broadcast of two large vectors) */
    if (gn->n == DIFF_MAX_VALS || gen_count(nd, shape) > DIFF_MAX_ELEMS) return NULL;
    diff_val_t *x = &gn->vals[gn->n++];
    x->v = v;
    x->nd = nd;
    for (int d = 0; d < nd; d++) x->shape[d] = shape[d];
    x->distinct = false;
    return x;
}

static diff_values_t int_values(diff_rng_t *r)
{
    return diff_rng_chance(r, 0.3) ? DIFF_VAL_SPECIAL : DIFF_VAL_SMALL;
}

static weft_var_t *input_var(diff_gen_t *gn, const diff_input_t *in, weft_status_t *st)
{
    if (gn->given) {
        if ((size_t)gn->c->n_in >= gn->n_given) {
            *st = WEFT_ERANGE;
            return NULL;
        }
        *st = WEFT_OK;
        return gn->given[gn->c->n_in];
    }
    const weft_type_t *t;
    weft_var_t *v = NULL;
    char name[8];
    snprintf(name, sizeof name, "x%d", gn->c->n_in);
    *st = weft_type_tensor(gn->g, in->dt, in->nd, in->stat, &t);
    if (*st == WEFT_OK)
        *st = ((v = weft_var_create(gn->g, t, name)) ? WEFT_OK : weft_graph_error(gn->g));
    return v;
}

diff_val_t *gen_input(diff_gen_t *gn, weft_dtype_t dt, int nd, const int64_t *shape,
                      bool all_static)
{
    if (!gen_live(gn)) return NULL;
    if (gn->c->n_in == DIFF_MAX_INPUTS) return gen_const(gn, dt, nd, shape);
    diff_input_t *in = &gn->c->in[gn->c->n_in];
    memset(in, 0, sizeof *in);
    in->dt = dt;
    in->nd = nd;
    for (int d = 0; d < nd; d++) {
        in->shape[d] = shape[d];
        bool known = all_static || diff_rng_chance(&gn->rng, shape[d] == 1 ? 0.75 : 0.5);
        in->stat[d] = known ? shape[d] : WEFT_DIM_UNKNOWN;
    }
    in->values = gn->smooth ? DIFF_VAL_UNIT
                 : gen_is_float(dt) ? gn->float_values : int_values(&gn->rng);
    diff_input_layout(&gn->rng, in, gn->smooth);
    weft_status_t st;
    weft_var_t *v = input_var(gn, in, &st);
    if (st == WEFT_OK) gn->c->in_vars[gn->c->n_in++] = v;
    diff_val_t *x = gen_push(gn, st, v, nd, shape);
    if (x) x->distinct = true;
    return x;
}

static diff_val_t *make_const(diff_gen_t *gn, weft_dtype_t dt, int nd, const int64_t *shape,
                              const void *data)
{
    const weft_type_t *t;
    weft_var_t *v = NULL;
    size_t bytes = gen_count(nd, shape) * weft_dtype_size(dt);
    weft_status_t st = weft_type_tensor(gn->g, dt, nd, shape, &t);
    if (st == WEFT_OK) v = weft_constant_create(gn->g, t, data, bytes);
    return gen_push(gn, st, v, nd, shape);
}

diff_val_t *gen_const(diff_gen_t *gn, weft_dtype_t dt, int nd, const int64_t *shape)
{
    if (!gen_live(gn)) return NULL;
    size_t n = gen_count(nd, shape);
    void *buf = malloc(n * weft_dtype_size(dt) + 1);
    if (!buf) {
        gn->st = WEFT_ENOMEM;
        return NULL;
    }
    diff_values_t vc = gn->smooth ? DIFF_VAL_UNIT
                       : gen_is_float(dt) ? gn->float_values : int_values(&gn->vrng);
    diff_fill_values(&gn->vrng, dt, vc, buf, n);
    diff_val_t *x = make_const(gn, dt, nd, shape, buf);
    free(buf);
    return x;
}

diff_val_t *gen_const_fill(diff_gen_t *gn, weft_dtype_t dt, int nd, const int64_t *shape,
                           double value)
{
    if (!gen_live(gn)) return NULL;
    weft_tensor_t *t;
    if (weft_tensor_full(dt, nd, shape, value, &t) != WEFT_OK) {
        gn->st = WEFT_ENOMEM;
        return NULL;
    }
    diff_val_t *x = make_const(gn, dt, nd, shape, weft_tensor_data(t));
    weft_tensor_release(t);
    return x;
}

diff_val_t *gen_pick(diff_gen_t *gn)
{
    if (gn->n == 0) return NULL;
    if (diff_rng_chance(&gn->rng, 0.6)) {
        int lo = gn->n > 3 ? gn->n - 3 : 0;
        return &gn->vals[diff_rng_int(&gn->rng, lo, gn->n - 1)];
    }
    return &gn->vals[diff_rng_int(&gn->rng, 0, gn->n - 1)];
}

int64_t gen_len(diff_gen_t *gn)
{
    int u = diff_rng_int(&gn->rng, 0, 99);
    if (gn->smooth) return 1 + u % 4;
    if (u < 5) return 0;
    if (u < 25) return 1;
    return 2 + u % 4;
}

void gen_shape(diff_gen_t *gn, int nd, int64_t *shape)
{
    for (int d = 0; d < nd; d++) shape[d] = gen_len(gn);
}

static int64_t aligned_len(const diff_val_t *x, int i, int n, bool *bcast)
{
    int d = i - (n - x->nd);
    *bcast = d < 0 || gen_stat(x, d) == 1;
    return d < 0 ? 1 : x->shape[d];
}

bool gen_compat(const diff_val_t *a, const diff_val_t *b, int *nd, int64_t *shape)
{
    int n = a->nd > b->nd ? a->nd : b->nd;
    for (int i = 0; i < n; i++) {
        bool ba, bb;
        int64_t la = aligned_len(a, i, n, &ba), lb = aligned_len(b, i, n, &bb), l;
        if (la == lb) l = la;
        else if (la == 1 && ba) l = lb;
        else if (lb == 1 && bb) l = la;
        else return false;
        if (shape) shape[i] = l;
    }
    if (nd) *nd = n;
    return true;
}

weft_dtype_t gen_random_dtype(diff_gen_t *gn)
{
    static const weft_dtype_t real[] = { WEFT_BOOL,   WEFT_INT8,    WEFT_INT16,   WEFT_INT32,
                                         WEFT_INT64,  WEFT_UINT8,   WEFT_UINT16,  WEFT_UINT32,
                                         WEFT_UINT64, WEFT_FLOAT16, WEFT_FLOAT32, WEFT_FLOAT64 };
    if (gn->all_dtypes && !gn->smooth) return real[diff_rng_int(&gn->rng, 0, 11)];
    static const weft_dtype_t dts[] = { WEFT_FLOAT64, WEFT_FLOAT64, WEFT_FLOAT32, WEFT_FLOAT32,
                                        WEFT_INT32, WEFT_INT64, WEFT_BOOL };
    return gn->smooth ? WEFT_FLOAT64 : dts[diff_rng_int(&gn->rng, 0, 6)];
}

/* A constant shape that broadcasts against a: some axes 1, maybe fewer or
 * one more leading axis. */
static int shape_for(diff_gen_t *gn, const diff_val_t *a, int64_t *shape)
{
    int nd = diff_rng_int(&gn->rng, 0, a->nd);
    if (a->nd < DIFF_MAX_RANK && diff_rng_chance(&gn->rng, 0.1)) nd = a->nd + 1;
    for (int j = 0; j < nd; j++) {
        int i = j - (nd - a->nd);
        if (i < 0 || gen_stat(a, i) == 1) shape[j] = diff_rng_int(&gn->rng, 1, 3);
        else shape[j] = diff_rng_chance(&gn->rng, 0.3) ? 1 : a->shape[i];
    }
    return nd;
}

diff_val_t *gen_operand_for(diff_gen_t *gn, const diff_val_t *a, int dt)
{
    if (diff_rng_chance(&gn->rng, 0.55)) {
        for (int tries = 0; tries < 6; tries++) {
            diff_val_t *b = gen_pick(gn);
            if ((b != a || diff_rng_chance(&gn->rng, 0.15)) && (dt < 0 || (int)gen_dt(b) == dt) &&
                gen_compat(a, b, NULL, NULL))
                return b;
        }
    }
    int64_t shape[DIFF_MAX_RANK];
    int nd = shape_for(gn, a, shape);
    weft_dtype_t cdt = dt >= 0 ? (weft_dtype_t)dt
                       : diff_rng_chance(&gn->rng, 0.5) ? gen_dt(a) : gen_random_dtype(gn);
    return gen_const(gn, cdt, nd, shape);
}

/* ---- elementwise ------------------------------------------------------------------ */

const weft_elemwise_kind_t gen_unary_kinds[GEN_N_UNARY] = {
    WEFT_ELEMWISE_NEG, WEFT_ELEMWISE_ABS,  WEFT_ELEMWISE_SGN,     WEFT_ELEMWISE_EXP,
    WEFT_ELEMWISE_LOG, WEFT_ELEMWISE_LOG1P, WEFT_ELEMWISE_SQRT,   WEFT_ELEMWISE_SQR,
    WEFT_ELEMWISE_TANH, WEFT_ELEMWISE_SIGMOID, WEFT_ELEMWISE_RELU, WEFT_ELEMWISE_SIN,
    WEFT_ELEMWISE_COS,
};
const weft_elemwise_kind_t gen_arith_kinds[GEN_N_ARITH] = {
    WEFT_ELEMWISE_ADD, WEFT_ELEMWISE_SUB,     WEFT_ELEMWISE_MUL,     WEFT_ELEMWISE_DIV,
    WEFT_ELEMWISE_POW, WEFT_ELEMWISE_MAXIMUM, WEFT_ELEMWISE_MINIMUM, WEFT_ELEMWISE_SECOND,
};

/* The kinds that need a float operand (include/weft/elemwise.h). */
static bool kind_float_only(weft_elemwise_kind_t k)
{
    static const bool float_only[WEFT_ELEMWISE_KIND_COUNT] = {
        [WEFT_ELEMWISE_EXP] = true,  [WEFT_ELEMWISE_LOG] = true, [WEFT_ELEMWISE_LOG1P] = true,
        [WEFT_ELEMWISE_SQRT] = true, [WEFT_ELEMWISE_TANH] = true, [WEFT_ELEMWISE_SIGMOID] = true,
        [WEFT_ELEMWISE_SIN] = true,  [WEFT_ELEMWISE_COS] = true, [WEFT_ELEMWISE_DIV] = true,
        [WEFT_ELEMWISE_POW] = true,
    };
    bool math = k >= WEFT_ELEMWISE_TAN && k <= WEFT_ELEMWISE_NEXTAFTER; /* issue 17's block */
    return (unsigned)k < WEFT_ELEMWISE_KIND_COUNT && (float_only[k] || math);
}

static bool kind_is_comparison(weft_elemwise_kind_t k)
{
    return k >= WEFT_ELEMWISE_LT && k <= WEFT_ELEMWISE_NE;
}

diff_val_t *gen_cast(diff_gen_t *gn, diff_val_t *x, weft_dtype_t dt)
{
    if (!x || !gen_live(gn)) return NULL;
    /* NumPy's float -> uint32 of NaN or an out-of-range value depends on the
     * array's length (docs/dtypes.md §2): not drawn */
    if (dt == WEFT_UINT32 && gen_is_float(gen_dt(x))) dt = WEFT_UINT16;
    if (gen_dt(x) == dt) return x;
    weft_var_t *out = weft_cast(gn->g, x->v, dt);
    weft_status_t st = WEFT_OK;
    diff_val_t *y = gen_push(gn, st, out, x->nd, x->shape);
    if (y) y->distinct = x->distinct && gen_is_float(dt);
    return y;
}

/* x converted so that kind k accepts it as its only non-constant operand. */
static diff_val_t *fit_operand(diff_gen_t *gn, weft_elemwise_kind_t k, diff_val_t *x)
{
    if (!x) return NULL;
    weft_dtype_t dt = gen_dt(x);
    if (kind_float_only(k) && !gen_is_float(dt))
        return gen_cast(gn, x, diff_rng_chance(&gn->rng, 0.5) ? WEFT_FLOAT32 : WEFT_FLOAT64);
    if (!kind_is_comparison(k) && k != WEFT_ELEMWISE_SWITCH && dt == WEFT_BOOL)
        return gen_cast(gn, x, diff_rng_chance(&gn->rng, 0.5) ? WEFT_INT32 : WEFT_FLOAT64);
    return x;
}

diff_val_t *gen_unary(diff_gen_t *gn, weft_elemwise_kind_t k, diff_val_t *x)
{
    if (!x || !gen_live(gn)) return NULL;
    weft_var_t *out = weft_unary(gn->g, k, x->v);
    weft_status_t st = WEFT_OK;
    diff_val_t *y = gen_push(gn, st, out, x->nd, x->shape);
    if (y) y->distinct = x->distinct && k != WEFT_ELEMWISE_SGN && k != WEFT_ELEMWISE_RELU;
    return y;
}

diff_val_t *gen_binary(diff_gen_t *gn, weft_elemwise_kind_t k, diff_val_t *a, diff_val_t *b)
{
    if (!a || !b || !gen_live(gn)) return NULL;
    int nd = 0;
    int64_t shape[DIFF_MAX_RANK];
    if (!gen_compat(a, b, &nd, shape)) return NULL;
    weft_var_t *out = weft_binary(gn->g, k, a->v, b->v);
    weft_status_t st = WEFT_OK;
    diff_val_t *y = gen_push(gn, st, out, nd, shape);
    if (y) y->distinct = a->distinct && b->distinct && a->nd == b->nd && nd == a->nd &&
                         memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)nd) == 0;
    return y;
}

static void step_arith(diff_gen_t *gn, weft_elemwise_kind_t k)
{
    diff_val_t *a = gen_pick(gn), *b = a ? gen_operand_for(gn, a, -1) : NULL;
    if (!b) return;
    bool af = gen_is_float(gen_dt(a)), bf = gen_is_float(gen_dt(b));
    if (kind_float_only(k) && !af && !bf) a = fit_operand(gn, k, a);
    else if (!kind_is_comparison(k) && gen_dt(a) == WEFT_BOOL && gen_dt(b) == WEFT_BOOL)
        a = fit_operand(gn, k, a);
    gen_binary(gn, k, a, b);
}

int gen_joint_shape(int k, diff_val_t *const *xs, int64_t *shape)
{
    int n = 0;
    for (int j = 0; j < k; j++) n = xs[j]->nd > n ? xs[j]->nd : n;
    for (int i = 0; i < n; i++) {
        shape[i] = 1;
        for (int j = 0; j < k; j++) {
            int d = i - (n - xs[j]->nd);
            if (d >= 0 && xs[j]->shape[d] != 1) shape[i] = xs[j]->shape[d];
        }
    }
    return n;
}

static void step_switch(diff_gen_t *gn)
{
    diff_val_t *c = gen_pick(gn);
    if (!c) return;
    if (gen_dt(c) != WEFT_BOOL) {
        weft_elemwise_kind_t k = (weft_elemwise_kind_t)diff_rng_int(&gn->rng, WEFT_ELEMWISE_LT,
                                                                    WEFT_ELEMWISE_NE);
        c = gen_binary(gn, k, c, gen_operand_for(gn, c, -1));
    }
    diff_val_t *a = c ? gen_operand_for(gn, c, -1) : NULL, *b = a ? gen_pick(gn) : NULL;
    if (!b) return;
    int64_t shape[DIFF_MAX_RANK];
    if (!gen_compat(c, b, NULL, NULL) || !gen_compat(a, b, NULL, NULL)) {
        int nd = gen_joint_shape(2, (diff_val_t *[]){ c, a }, shape);
        b = gen_const(gn, gen_random_dtype(gn), nd, shape);
    }
    if (!b || !gen_live(gn)) return;
    weft_var_t *out = weft_switch(gn->g, c->v, a->v, b->v);
    weft_status_t st = WEFT_OK;
    int nd = gen_joint_shape(3, (diff_val_t *[]){ c, a, b }, shape);
    gen_push(gn, st, out, nd, shape);
}

/* ---- the float math kinds (issue 17) --------------------------------------------------- */

/* Where a kind's operand is mapped first, so results stay finite: any
 * value; tanh(x) scaled into (-0.9, 0.9) or (-8, 8) (poles and overflow
 * stay out); tanh(x)^2 + c in [c, c + 1). */
typedef enum { DOM_ANY, DOM_UNIT, DOM_SMALL, DOM_POS, DOM_ABOVE1 } math_dom_t;

static const struct {
    weft_elemwise_kind_t kind;
    math_dom_t dom;
} math_kinds[] = {
    {WEFT_ELEMWISE_TAN, DOM_UNIT},      {WEFT_ELEMWISE_ARCSIN, DOM_UNIT},
    {WEFT_ELEMWISE_ARCCOS, DOM_UNIT},   {WEFT_ELEMWISE_ARCTAN, DOM_ANY},
    {WEFT_ELEMWISE_ARCTAN2, DOM_ANY},   {WEFT_ELEMWISE_SINH, DOM_SMALL},
    {WEFT_ELEMWISE_COSH, DOM_SMALL},    {WEFT_ELEMWISE_ARCSINH, DOM_ANY},
    {WEFT_ELEMWISE_ARCCOSH, DOM_ABOVE1}, {WEFT_ELEMWISE_ARCTANH, DOM_UNIT},
    {WEFT_ELEMWISE_EXP2, DOM_SMALL},    {WEFT_ELEMWISE_EXPM1, DOM_SMALL},
    {WEFT_ELEMWISE_LOG2, DOM_POS},      {WEFT_ELEMWISE_LOG10, DOM_POS},
    {WEFT_ELEMWISE_HYPOT, DOM_ANY},     {WEFT_ELEMWISE_ERF, DOM_ANY},
    {WEFT_ELEMWISE_ERFC, DOM_ANY},      {WEFT_ELEMWISE_ERFINV, DOM_UNIT},
    {WEFT_ELEMWISE_GAMMALN, DOM_POS},   {WEFT_ELEMWISE_DIGAMMA, DOM_POS},
    {WEFT_ELEMWISE_TRIGAMMA, DOM_POS},  {WEFT_ELEMWISE_COPYSIGN, DOM_ANY},
    {WEFT_ELEMWISE_NEXTAFTER, DOM_ANY},
};

/* x (float) mapped into dom. */
static diff_val_t *math_domain(diff_gen_t *gn, diff_val_t *x, math_dom_t dom)
{
    if (dom == DOM_ANY) return x;
    weft_dtype_t dt = gen_dt(x);
    diff_val_t *t = gen_unary(gn, WEFT_ELEMWISE_TANH, x);
    if (dom == DOM_UNIT || dom == DOM_SMALL)
        return gen_binary(gn, WEFT_ELEMWISE_MUL, t,
                          gen_const_fill(gn, dt, 0, NULL, dom == DOM_UNIT ? 0.9 : 8.0));
    return gen_binary(gn, WEFT_ELEMWISE_ADD, gen_unary(gn, WEFT_ELEMWISE_SQR, t),
                      gen_const_fill(gn, dt, 0, NULL, dom == DOM_POS ? 0.5 : 1.5));
}

static void step_math(diff_gen_t *gn)
{
    int i = diff_rng_int(&gn->rng, 0, (int)(sizeof math_kinds / sizeof math_kinds[0]) - 1);
    weft_elemwise_kind_t k = math_kinds[i].kind;
    diff_val_t *x = math_domain(gn, fit_operand(gn, k, gen_pick(gn)), math_kinds[i].dom);
    if (weft_elemwise_arity(k) == 1) {
        gen_unary(gn, k, x);
        return;
    }
    diff_val_t *b = x ? gen_operand_for(gn, x, -1) : NULL;
    if (b && !gen_is_float(gen_dt(b)) && diff_rng_chance(&gn->rng, 0.5))
        b = gen_cast(gn, b, gen_dt(x));
    gen_binary(gn, k, x, b);
}

void gen_step_elemwise(diff_gen_t *gn)
{
    int what = diff_rng_int(&gn->rng, 0, 99);
    if (what < 30) {
        weft_elemwise_kind_t k = gen_unary_kinds[diff_rng_int(&gn->rng, 0, GEN_N_UNARY - 1)];
        gen_unary(gn, k, fit_operand(gn, k, gen_pick(gn)));
    } else if (what < 62) {
        step_arith(gn, gen_arith_kinds[diff_rng_int(&gn->rng, 0, GEN_N_ARITH - 1)]);
    } else if (what < 75) {
        step_arith(gn, (weft_elemwise_kind_t)diff_rng_int(&gn->rng, WEFT_ELEMWISE_LT,
                                                          WEFT_ELEMWISE_NE));
    } else if (what < 85) {
        if (diff_rng_chance(&gn->rng, 0.5)) step_switch(gn);
        else step_math(gn);
    } else if (what < 92) {
        gen_cast(gn, gen_pick(gn), gen_random_dtype(gn));
    } else {
        gen_step_rounding(gn);
    }
}

/* ---- shape ops ---------------------------------------------------------------------- */

static void step_dimshuffle(diff_gen_t *gn)
{
    diff_val_t *x = gen_pick(gn);
    if (!x) return;
    int kept[DIFF_MAX_RANK], nk = 0, order[DIFF_MAX_RANK], n = 0;
    for (int d = 0; d < x->nd; d++)
        if (!(gen_stat(x, d) == 1 && diff_rng_chance(&gn->rng, 0.4))) kept[nk++] = d;
    for (int i = nk - 1; i > 0 && diff_rng_chance(&gn->rng, 0.6); i--) {
        int j = diff_rng_int(&gn->rng, 0, i), t = kept[i];
        kept[i] = kept[j];
        kept[j] = t;
    }
    int n_new = diff_rng_int(&gn->rng, 0, DIFF_MAX_RANK - nk > 2 ? 2 : DIFF_MAX_RANK - nk);
    int64_t shape[DIFF_MAX_RANK];
    for (int k = 0; n < nk + n_new; n++) {
        bool fresh = k == nk || (n - k < n_new && diff_rng_chance(&gn->rng, 0.4));
        order[n] = fresh ? WEFT_DIMSHUFFLE_NEW : kept[k++];
        shape[n] = fresh ? 1 : x->shape[order[n]];
    }
    weft_var_t *out = weft_dimshuffle(gn->g, x->v, n, order);
    weft_status_t st = WEFT_OK;
    diff_val_t *y = gen_push(gn, st, out, n, shape);
    if (y) y->distinct = x->distinct;
}

/* A random shape of `count` elements, 0-4 axes. */
static int factor_shape(diff_gen_t *gn, size_t count, int64_t *shape)
{
    int nd = diff_rng_int(&gn->rng, count == 1 ? 0 : 1, DIFF_MAX_RANK);
    for (int d = 0; d < nd; d++) shape[d] = 1;
    if (count == 0) {
        for (int d = 0; d < nd; d++) shape[d] = diff_rng_int(&gn->rng, 1, 3);
        shape[diff_rng_int(&gn->rng, 0, nd - 1)] = 0;
        return nd;
    }
    size_t rest = count;
    for (size_t p = 2; rest > 1; p++)
        while (rest % p == 0) {
            rest /= p;
            shape[diff_rng_int(&gn->rng, 0, nd - 1)] *= (int64_t)p;
        }
    return nd;
}

static void step_reshape(diff_gen_t *gn)
{
    diff_val_t *x = gen_pick(gn);
    if (!x) return;
    size_t count = gen_count(x->nd, x->shape);
    int64_t shape[DIFF_MAX_RANK] = { 0 }, spec[DIFF_MAX_RANK];
    int nd = factor_shape(gn, count, shape);
    memcpy(spec, shape, sizeof shape);
    if (count > 0 && nd > 0 && diff_rng_chance(&gn->rng, 0.3))
        spec[diff_rng_int(&gn->rng, 0, nd - 1)] = -1;
    weft_var_t *out = weft_reshape(gn->g, x->v, nd, spec);
    weft_status_t st = WEFT_OK;
    diff_val_t *y = gen_push(gn, st, out, nd, shape);
    if (y) y->distinct = x->distinct;
}

/* numpy's PySlice_AdjustIndices: a bound after counting from the end and
 * clamping to [lo, hi]. */
static int64_t slice_bound(int64_t v, int64_t len, int64_t lo, int64_t hi)
{
    if (v < 0) {
        v += len;
        return v < lo ? lo : v;
    }
    return v > hi ? hi : v;
}

static int64_t slice_len(int64_t len, const weft_slice_t *s)
{
    int64_t lo = s->step < 0 ? -1 : 0, hi = s->step < 0 ? len - 1 : len;
    int64_t b = s->start == WEFT_SLICE_NONE ? (s->step < 0 ? hi : lo)
                                            : slice_bound(s->start, len, lo, hi);
    int64_t e = s->stop == WEFT_SLICE_NONE ? (s->step < 0 ? lo : hi)
                                           : slice_bound(s->stop, len, lo, hi);
    if (s->step > 0) return b < e ? (e - b - 1) / s->step + 1 : 0;
    return e < b ? (b - e - 1) / (-s->step) + 1 : 0;
}

static int64_t slice_end(diff_gen_t *gn, int64_t len)
{
    return diff_rng_chance(&gn->rng, 0.4) ? WEFT_SLICE_NONE
                                          : diff_rng_int(&gn->rng, (int)(-len - 2), (int)(len + 2));
}

/* A basic index of x (n_idx entries returned); the indexed shape in
 * *nd / shape. */
static size_t draw_index(diff_gen_t *gn, const diff_val_t *x, weft_slice_t *idx, int *nd,
                         int64_t *shape)
{
    static const int64_t steps[] = { 1, 1, 1, 2, -1, -1, -2, 3 };
    size_t n_idx = x->nd ? (size_t)diff_rng_int(&gn->rng, 1, x->nd) : 0;
    int on = 0;
    for (size_t d = 0; d < n_idx; d++) {
        int64_t len = x->shape[d];
        if (len > 0 && diff_rng_chance(&gn->rng, 0.3)) {
            idx[d] = (weft_slice_t)WEFT_SLICE_AT(diff_rng_int(&gn->rng, (int)-len, (int)len - 1));
            continue;
        }
        idx[d] = (weft_slice_t){ WEFT_SLICE_RANGE, slice_end(gn, len), slice_end(gn, len),
                                 steps[diff_rng_int(&gn->rng, 0, 7)] };
        if (gn->smooth && slice_len(len, &idx[d]) == 0) /* no empty means in gradients */
            idx[d].start = idx[d].stop = WEFT_SLICE_NONE;
        shape[on++] = slice_len(len, &idx[d]);
    }
    for (int d = (int)n_idx; d < x->nd; d++) shape[on++] = x->shape[d];
    *nd = on;
    return n_idx;
}

static void step_subtensor(diff_gen_t *gn)
{
    diff_val_t *x = gen_pick(gn);
    if (!x) return;
    weft_slice_t idx[DIFF_MAX_RANK];
    int nd;
    int64_t shape[DIFF_MAX_RANK];
    size_t n_idx = draw_index(gn, x, idx, &nd, shape);
    weft_var_t *out = weft_subtensor(gn->g, x->v, n_idx, idx);
    weft_status_t st = WEFT_OK;
    diff_val_t *y = gen_push(gn, st, out, nd, shape);
    if (y) y->distinct = x->distinct;
}

/* Whether y can be assigned to a region of shape (nd, shape): no larger
 * dtype than dt, no more axes, each axis equal or a static 1. */
static bool fits_region(const diff_val_t *y, weft_dtype_t dt, int nd, const int64_t *shape)
{
    if (weft_dtype_promote(dt, gen_dt(y)) != dt || y->nd > nd) return false;
    for (int d = 0; d < y->nd; d++) {
        int64_t l = shape[d + nd - y->nd];
        if (y->shape[d] != l && !(y->shape[d] == 1 && gen_stat(y, d) == 1)) return false;
    }
    return true;
}

static diff_val_t *region_operand(diff_gen_t *gn, weft_dtype_t dt, int nd, const int64_t *shape)
{
    for (int tries = 0; tries < 4; tries++) {
        diff_val_t *y = gen_pick(gn);
        if (y && fits_region(y, dt, nd, shape)) return y;
    }
    int yn = diff_rng_int(&gn->rng, 0, nd);
    int64_t ys[DIFF_MAX_RANK];
    for (int d = 0; d < yn; d++)
        ys[d] = diff_rng_chance(&gn->rng, 0.3) ? 1 : shape[d + nd - yn];
    weft_dtype_t ydt = gn->smooth       ? dt
                       : gn->all_dtypes ? gen_random_dtype(gn)
                                        : (weft_dtype_t)diff_rng_int(&gn->rng, WEFT_BOOL, (int)dt);
    if (weft_dtype_promote(dt, ydt) != dt) ydt = dt; /* y converts to x's dtype safely */
    return gen_const(gn, ydt, yn, ys);
}

static void step_set_subtensor(diff_gen_t *gn, bool inc)
{
    diff_val_t *x = gen_pick(gn);
    if (x && inc && gen_dt(x) == WEFT_BOOL) x = gen_cast(gn, x, WEFT_INT32);
    if (!x) return;
    weft_slice_t idx[DIFF_MAX_RANK];
    int nd;
    int64_t shape[DIFF_MAX_RANK];
    size_t n_idx = draw_index(gn, x, idx, &nd, shape);
    diff_val_t *y = region_operand(gn, gen_dt(x), nd, shape);
    if (!y || !gen_live(gn)) return;
    weft_var_t *out = NULL;
    weft_status_t st =
        inc ? ((out = weft_inc_subtensor(gn->g, x->v, y->v, n_idx, idx)) ? WEFT_OK
                                                                         : weft_graph_error(gn->g))
            : ((out = weft_set_subtensor(gn->g, x->v, y->v, n_idx, idx)) ? WEFT_OK
                                                                         : weft_graph_error(gn->g));
    gen_push(gn, st, out, x->nd, x->shape);
}

/* concatenate (Join) of x with itself along a random axis, given in its
 * negative form. */
static void step_concatenate(diff_gen_t *gn)
{
    diff_val_t *x = gen_pick(gn);
    if (!x || x->nd == 0 || 2 * gen_count(x->nd, x->shape) > DIFF_MAX_ELEMS) return;
    int axis = diff_rng_int(&gn->rng, 0, x->nd - 1);
    weft_var_t *xs[2] = {x->v, x->v};
    int64_t shape[DIFF_MAX_RANK];
    memcpy(shape, x->shape, sizeof shape);
    shape[axis] *= 2;
    gen_push(gn, WEFT_OK, weft_concatenate(gn->g, 2, xs, axis - x->nd), x->nd, shape);
}

/* broadcast_to (Alloc) of x under a new leading axis of length 1..3. */
static void step_broadcast_to(diff_gen_t *gn)
{
    diff_val_t *x = gen_pick(gn);
    int64_t shape[DIFF_MAX_RANK];
    if (!x || x->nd + 1 > DIFF_MAX_RANK) return;
    shape[0] = diff_rng_int(&gn->rng, 1, 3);
    memcpy(shape + 1, x->shape, (size_t)x->nd * sizeof *shape);
    if (gen_count(x->nd + 1, shape) > DIFF_MAX_ELEMS) return;
    gen_push(gn, WEFT_OK, weft_broadcast_to(gn->g, x->v, x->nd + 1, shape), x->nd + 1, shape);
}

void gen_step_shape(diff_gen_t *gn)
{
    switch (diff_rng_int(&gn->rng, 0, 7)) {
    case 0: step_dimshuffle(gn); break;
    case 1: step_reshape(gn); break;
    case 2: case 3: step_subtensor(gn); break;
    case 4: step_set_subtensor(gn, false); break;
    case 5: step_concatenate(gn); break;
    case 6: step_broadcast_to(gn); break;
    default: step_set_subtensor(gn, true); break;
    }
}

/* ---- reductions ----------------------------------------------------------------------- */

static diff_val_t *pick_numeric(diff_gen_t *gn)
{
    diff_val_t *x = gen_pick(gn);
    if (x && gen_dt(x) == WEFT_BOOL) x = gen_cast(gn, x, WEFT_INT32);
    return x;
}

void gen_reduce(diff_gen_t *gn, weft_reduce_kind_t kind, diff_val_t *x)
{
    int axes[DIFF_MAX_RANK], n = 0, u = diff_rng_int(&gn->rng, 0, 9);
    bool red[DIFF_MAX_RANK] = { false }, keep = diff_rng_chance(&gn->rng, 0.3);
    for (int d = 0; d < x->nd && u > 2; d++)
        if (diff_rng_chance(&gn->rng, 0.5)) {
            red[d] = true;
            axes[n++] = diff_rng_chance(&gn->rng, 0.3) ? d - x->nd : d;
        }
    int64_t shape[DIFF_MAX_RANK];
    int nd = 0;
    for (int d = 0; d < x->nd; d++) {
        red[d] |= u < 2;
        if (!red[d]) shape[nd++] = x->shape[d];
        else if (keep) shape[nd++] = 1;
    }
    weft_var_t *out = NULL;
    weft_status_t st = ((out = weft_reduce_at(gn->g, kind, x->v, (size_t)n, u < 2 ? NULL : axes,
                                              keep, __FILE__, __LINE__))
                            ? WEFT_OK
                            : weft_graph_error(gn->g));
    gen_push(gn, st, out, nd, shape);
}

static void step_argmax(diff_gen_t *gn, diff_val_t *x)
{
    bool flat = x->nd == 0 || diff_rng_chance(&gn->rng, 0.3), keep = diff_rng_chance(&gn->rng, 0.3);
    int axis = flat ? WEFT_ARGMAX_FLAT : diff_rng_int(&gn->rng, -x->nd, x->nd - 1);
    int64_t shape[DIFF_MAX_RANK];
    int nd = 0;
    for (int d = 0; d < x->nd; d++) {
        bool red = flat || d == (axis < 0 ? axis + x->nd : axis);
        if (!red) shape[nd++] = x->shape[d];
        else if (keep) shape[nd++] = 1;
    }
    weft_var_t *out = weft_argmax(gn->g, x->v, axis, keep);
    weft_status_t st = WEFT_OK;
    gen_push(gn, st, out, nd, shape);
}

void gen_step_reduce(diff_gen_t *gn)
{
    diff_val_t *x = pick_numeric(gn);
    if (!x || !gen_live(gn)) return;
    if (diff_rng_chance(&gn->rng, 0.25)) step_argmax(gn, x);
    else gen_reduce(gn, (weft_reduce_kind_t)diff_rng_int(&gn->rng, 0, 4), x);
}

/* ---- families ------------------------------------------------------------------------- */

static int draw_rank(diff_gen_t *gn)
{
    static const int ranks[] = { 0, 1, 1, 2, 2, 2, 3, 3, 4, 4 };
    return ranks[diff_rng_int(&gn->rng, 0, 9)];
}

/* n inputs; later ones often share the first one's shape (some axes 1). */
void gen_inputs(diff_gen_t *gn, int n, bool float_only)
{
    for (int i = 0; i < n && gen_live(gn); i++) {
        weft_dtype_t fdt = diff_rng_chance(&gn->rng, 0.5) ? WEFT_FLOAT32 : WEFT_FLOAT64;
        weft_dtype_t dt = gn->smooth ? WEFT_FLOAT64 : float_only ? fdt : gen_random_dtype(gn);
        int64_t shape[DIFF_MAX_RANK];
        int nd;
        if (i > 0 && diff_rng_chance(&gn->rng, 0.5)) {
            nd = gn->vals[0].nd;
            for (int d = 0; d < nd; d++)
                shape[d] = diff_rng_chance(&gn->rng, 0.3) ? 1 : gn->vals[0].shape[d];
        } else if (i == 0 && !gn->smooth && diff_rng_chance(&gn->rng, 0.03)) {
            nd = diff_rng_int(&gn->rng, 1, 2); /* large enough to be split over workers */
            shape[0] = nd == 1 ? diff_rng_int(&gn->rng, 9000, 12000)
                               : diff_rng_int(&gn->rng, 90, 120);
            shape[1] = diff_rng_int(&gn->rng, 90, 120);
        } else {
            nd = draw_rank(gn);
            /* dtypes family: 1-d and larger (NumPy 1.24 promotes 0-d operands by value) */
            if (gn->all_dtypes && nd == 0) nd = 1;
            gen_shape(gn, nd, shape);
        }
        gen_input(gn, dt, nd, shape, gn->smooth);
    }
}

void gen_run_steps(diff_gen_t *gn, int lo, int hi, void (*step)(diff_gen_t *))
{
    int n = diff_rng_int(&gn->rng, lo, hi);
    for (int i = 0; i < n && gen_live(gn); i++) step(gn);
}

static void step_shape_or_elemwise(diff_gen_t *gn)
{
    if (gen_symshape_drawn(gn)) gen_step_symshape(gn);
    else if (diff_rng_chance(&gn->rng, 0.1)) gen_step_index(gn);
    else if (diff_rng_chance(&gn->rng, 0.05)) gen_step_ifelse(gn);
    else if (diff_rng_chance(&gn->rng, 0.55)) gen_step_shape(gn);
    else gen_step_elemwise(gn);
}

static void step_any(diff_gen_t *gn)
{
    switch (diff_rng_int(&gn->rng, 0, 9)) {
    case 0: case 1: case 2: case 3: gen_step_elemwise(gn); break;
    case 4: case 5: gen_step_shape(gn); break;
    case 6: case 7: gen_step_reduce(gn); break;
    default: gen_step_composite(gn); break;
    }
}

/* Float arithmetic only: chains the fusion rewrite turns into Composites. */
static void step_fusable(diff_gen_t *gn)
{
    if (diff_rng_chance(&gn->rng, 0.15)) {
        gen_step_composite(gn);
        return;
    }
    if (diff_rng_chance(&gn->rng, 0.15)) { /* fusable too, into a domain (issue 17) */
        step_math(gn);
        return;
    }
    diff_val_t *x = gen_pick(gn);
    if (!x || !gen_is_float(gen_dt(x))) x = &gn->vals[0];
    if (diff_rng_chance(&gn->rng, 0.12)) {
        gen_rounding_fusable(gn, x);
        return;
    }
    if (diff_rng_chance(&gn->rng, 0.4)) {
        gen_unary(gn, gen_unary_kinds[diff_rng_int(&gn->rng, 0, GEN_N_UNARY - 1)], x);
        return;
    }
    weft_elemwise_kind_t k = gen_arith_kinds[diff_rng_int(&gn->rng, 0, GEN_N_ARITH - 1)];
    gen_binary(gn, k, x, gen_operand_for(gn, x, (int)gen_dt(x)));
}

static void step_reduce_family(diff_gen_t *gn)
{
    double u = diff_rng_unit(&gn->rng);
    if (u < 0.4) gen_step_reduce(gn);
    else if (u < 0.65) gen_step_reduce_more(gn);
    else if (u < 0.75) gen_step_nn(gn);
    else gen_step_elemwise(gn);
}

static diff_family_t draw_family(diff_rng_t *r)
{
    static const diff_family_t weights[] = {
        DIFF_FAM_ELEMWISE, DIFF_FAM_ELEMWISE, DIFF_FAM_ELEMWISE, DIFF_FAM_ELEMWISE,
        DIFF_FAM_SHAPE,    DIFF_FAM_SHAPE,    DIFF_FAM_SHAPE,    DIFF_FAM_REDUCE,
        DIFF_FAM_REDUCE,   DIFF_FAM_REDUCE,   DIFF_FAM_LINALG,   DIFF_FAM_LINALG,
        DIFF_FAM_LINALG,   DIFF_FAM_FUSION,   DIFF_FAM_FUSION,   DIFF_FAM_REWRITE,
        DIFF_FAM_REWRITE,  DIFF_FAM_MIXED,    DIFF_FAM_MIXED,    DIFF_FAM_GRAD,
    };
    return weights[diff_rng_int(r, 0, (int)(sizeof weights / sizeof weights[0]) - 1)];
}

static diff_values_t draw_float_values(diff_rng_t *r)
{
    static const diff_values_t v[] = { DIFF_VAL_SMALL,   DIFF_VAL_SMALL,   DIFF_VAL_SMALL,
                                       DIFF_VAL_SPECIAL, DIFF_VAL_SPECIAL, DIFF_VAL_SPECIAL,
                                       DIFF_VAL_WIDE,    DIFF_VAL_POSITIVE };
    return v[diff_rng_int(r, 0, 7)];
}

static void gen_family(diff_gen_t *gn)
{
    switch (gn->c->family) {
    case DIFF_FAM_ELEMWISE:
        gen_inputs(gn, diff_rng_int(&gn->rng, 1, 3), false);
        gen_run_steps(gn, 1, 6, gen_step_elemwise);
        break;
    case DIFF_FAM_SHAPE:
        gen_inputs(gn, diff_rng_int(&gn->rng, 1, 2), false);
        gen_run_steps(gn, 1, 6, step_shape_or_elemwise);
        break;
    case DIFF_FAM_REDUCE:
        gen_inputs(gn, diff_rng_int(&gn->rng, 1, 2), false);
        gen_run_steps(gn, 0, 2, gen_step_elemwise);
        gen_step_reduce(gn);
        gen_run_steps(gn, 0, 3, step_reduce_family);
        break;
    case DIFF_FAM_LINALG: gen_family_linalg(gn); break;
    case DIFF_FAM_FUSION:
        gen_inputs(gn, diff_rng_int(&gn->rng, 1, 3), true);
        gen_run_steps(gn, 3, 10, step_fusable);
        break;
    case DIFF_FAM_REWRITE: gen_family_rewrite(gn); break;
    case DIFF_FAM_GRAD: gen_family_grad(gn); break;
    case DIFF_FAM_DTYPES: gen_family_dtypes(gn); break;
    case DIFF_FAM_COMPLEX: gen_family_complex(gn); break;
    case DIFF_FAM_POLYGAMMA: gen_family_polygamma(gn); break;
    case DIFF_FAM_MIXED:
    default:
        gen_inputs(gn, diff_rng_int(&gn->rng, 1, 3), false);
        gen_run_steps(gn, 2, 8, step_any);
        break;
    }
}

static void pick_outputs(diff_gen_t *gn)
{
    diff_case_t *c = gn->c;
    c->out_vars[c->n_out++] = gn->vals[gn->n - 1].v;
    while (!gn->smooth && c->n_out < DIFF_MAX_OUTPUTS && diff_rng_chance(&gn->rng, 0.3))
        c->out_vars[c->n_out++] = gen_pick(gn)->v;
}

weft_status_t diff_gen_case(weft_graph_t *g, diff_case_t *c, weft_var_t *const *given,
                            size_t n_given)
{
    diff_gen_t gn = { .g = g, .c = c, .given = given, .n_given = n_given };
    diff_rng_seed(&gn.rng, c->seed);
    diff_rng_seed(&gn.vrng, c->seed ^ 0x76616c756573u);
    diff_rng_seed(&gn.srng, c->seed ^ 0x73796d736870u);
    c->n_in = c->n_out = 0;
    /* The dtypes family is drawn from its own stream, so every other case
     * keeps the graph it had before the family existed (same seed, same
     * case): about 1 case in 11 becomes a dtypes case instead. */
    diff_rng_t frng;
    diff_rng_seed(&frng, c->seed ^ 0x6474797065u);
    c->family = draw_family(&gn.rng);
    if (diff_rng_chance(&frng, 0.09)) c->family = DIFF_FAM_DTYPES;
    /* the complex family, from a stream of its own too (diff_gen_complex.c):
     * 1 case in 16, taken from any family (dtypes included) */
    if (diff_gen_complex_drawn(c->seed)) c->family = DIFF_FAM_COMPLEX;
    /* Polygamma (diff_gen_polygamma.c): 1 case in 40, its own stream */
    if (diff_gen_polygamma_drawn(c->seed)) c->family = DIFF_FAM_POLYGAMMA;
    gn.float_values = draw_float_values(&gn.rng);
    gn.smooth = c->family == DIFF_FAM_GRAD;
    gen_family(&gn);
    if (gn.st == WEFT_OK && gn.n == 0) gn.st = WEFT_EINVAL;
    if (gn.st == WEFT_OK) pick_outputs(&gn);
    return gn.st;
}
