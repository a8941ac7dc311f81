/* Raw strided kernels of the reductions and of their gradients (reduce_int.h).
 *
 * A reduction walks x with an odometer over every axis but one (the inner
 * axis, chosen with the smallest x stride), carrying the x offset and the
 * output offset. The inner loop is either a fold into one accumulator (the
 * inner axis is reduced) or an element-wise fold into a row of the output
 * (the inner axis is kept); both have a unit-stride branch: the kept-axis
 * one vectorizes (built at -O3), the fold runs four independent accumulator
 * chains (a float fold cannot be reordered by the compiler). Integer sums
 * and products wrap in two's complement (computed in uint64_t, as the
 * elementwise ops do). Every table row comes from the dtype lists of
 * base/dtype_list.h. The gradient kernels visit x in plain C order so
 * "first" means first in C order. How a large reduction is cut into boxes
 * and how their partials merge: reduce_split.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/dtype_list.h"
#include "tensor/tensor_int.h"
#include "reduce_int.h"

typedef weft__rred_fn red_fn;
typedef weft__rkeep_fn keep_fn;

#define SUM_F(a, b) ((a) + (b))
#define PROD_F(a, b) ((a) * (b))
/* b != b: NaN wins and then sticks (b > NaN and b < NaN are false). */
#define MAX_F(a, b) (((b) > (a) || (b) != (b)) ? (b) : (a))
#define MIN_F(a, b) (((b) < (a) || (b) != (b)) ? (b) : (a))

#define DEF_LOOPS(name, TI, TO, TA, TK, F)                                            \
    static void name##_red(const char *xp, int64_t n, int64_t sx, char *op)        \
    {                                                                               \
        const TI *x = (const TI *)xp;                                               \
        TA acc = (TA) * (TO *)op;                                                   \
        if (sx == 1 && n >= 8) {                                                    \
            /* four independent chains hide the fold's latency */                  \
            TA a1 = (TA)x[1], a2 = (TA)x[2], a3 = (TA)x[3];                         \
            acc = F(acc, (TA)x[0]);                                                 \
            int64_t i = 4;                                                          \
            for (; i + 4 <= n; i += 4) {                                            \
                acc = F(acc, (TA)x[i]);                                             \
                a1 = F(a1, (TA)x[i + 1]);                                           \
                a2 = F(a2, (TA)x[i + 2]);                                           \
                a3 = F(a3, (TA)x[i + 3]);                                           \
            }                                                                       \
            for (; i < n; i++) {                                                    \
                acc = F(acc, (TA)x[i]);                                             \
            }                                                                       \
            acc = F(F(acc, a1), F(a2, a3));                                         \
        } else if (sx == 1) {                                                       \
            for (int64_t i = 0; i < n; i++) {                                       \
                acc = F(acc, (TA)x[i]);                                             \
            }                                                                       \
        } else {                                                                    \
            for (int64_t i = 0; i < n; i++) {                                       \
                acc = F(acc, (TA)x[i * sx]);                                        \
            }                                                                       \
        }                                                                           \
        *(TO *)op = (TO)acc;                                                        \
    }                                                                               \
    static void name##_keep(const char *xp, int64_t n, int64_t sx, char *op,        \
                            int64_t so)                                             \
    {                                                                               \
        const TI *x = (const TI *)xp;                                               \
        TO *o = (TO *)op;                                                           \
        if (sx == 1 && so == 1) {                                                   \
            for (int64_t i = 0; i < n; i++) {                                       \
                o[i] = (TO)F((TK)o[i], (TK)x[i]);                                   \
            }                                                                       \
        } else {                                                                    \
            for (int64_t i = 0; i < n; i++) {                                       \
                o[i * so] = (TO)F((TK)o[i * so], (TK)x[i * sx]);                    \
            }                                                                       \
        }                                                                           \
    }

/* DEF_LOOPS(name, input, output, fold accumulator, kept-axis arithmetic, F),
 * per dtype list (base/dtype_list.h) through the *_LOOPS_* generators.
 * Output dtypes (weft__reduce_out_dtype, NumPy's): Sum/Prod of bool and
 * signed integers int64, of unsigned ones uint64 (wrapping, in uint64_t);
 * Mean of integers and bool float64; float16 folds in float32 (as NumPy's
 * half loops) and rounds to half once per output element; Max/Min keep
 * the dtype. */
#define SUMPROD_LOOPS_S(A, F, T, UT, sn, D) DEF_LOOPS(A##_##sn, T, int64_t, uint64_t, uint64_t, F)
#define SUMPROD_LOOPS_U(A, F, T, UT, sn, D) DEF_LOOPS(A##_##sn, T, uint64_t, uint64_t, uint64_t, F)
#define MEANI_LOOPS(A, B, T, UT, sn, D) DEF_LOOPS(meani_##sn, T, double, double, double, SUM_F)
#define EXTREME_LOOPS_I(A, F, T, UT, sn, D) DEF_LOOPS(A##_##sn, T, T, T, T, F)

/* A kind over every real dtype: floats (float32 folding in facc), float16
 * (in float32), bool (output bo, accumulator ba) and the integer lists
 * through the generators GS / GU. */
#define LOOPS_ALL(k, F, facc, bo, ba, GS, GU)                       \
    DEF_LOOPS(k##_f32, float, float, facc, float, F)                \
    DEF_LOOPS(k##_f64, double, double, double, double, F)           \
    DEF_LOOPS(k##_f16, weft__f16, weft__f16, float, float, F)       \
    DEF_LOOPS(k##_b, weft__bool_el, bo, ba, ba, F)                  \
    WEFT__SINT_DTYPES(GS, k, F)                                     \
    WEFT__UINT_DTYPES(GU, k, F)
/* Sum/Prod: bool as int64; Max/Min: bool as bool */
#define SUMPROD_ALL(k, F) \
    LOOPS_ALL(k, F, double, int64_t, uint64_t, SUMPROD_LOOPS_S, SUMPROD_LOOPS_U)
#define EXTREME_ALL(k, F) \
    LOOPS_ALL(k, F, float, weft__bool_el, weft__bool_el, EXTREME_LOOPS_I, EXTREME_LOOPS_I)

SUMPROD_ALL(sum, SUM_F)
SUMPROD_ALL(prod, PROD_F)
EXTREME_ALL(max, MAX_F)
EXTREME_ALL(min, MIN_F)
DEF_LOOPS(meani_b, weft__bool_el, double, double, double, SUM_F)
WEFT__SINT_DTYPES(MEANI_LOOPS, ~, ~)
WEFT__UINT_DTYPES(MEANI_LOOPS, ~, ~)

/* Index: [kind (weft_reduce_kind_t order)][input dtype]; NULL: not here
 * (complex: reduce_complex.c's loops, loops_of). MEAN sums (floats in their dtype, integers and bool into
 * float64); the caller scales. */
#define RCELL_I(A, SUF, T, UT, sn, D) [D] = A##_##sn##SUF,
#define RCELL_MI(A, SUF, T, UT, sn, D) [D] = meani_##sn##SUF,
#define RROW(k, SUF)                                                          \
    {[WEFT_FLOAT32] = k##_f32##SUF, [WEFT_FLOAT64] = k##_f64##SUF,             \
     [WEFT_FLOAT16] = k##_f16##SUF, [WEFT_BOOL] = k##_b##SUF,                 \
     WEFT__SINT_DTYPES(RCELL_I, k, SUF) WEFT__UINT_DTYPES(RCELL_I, k, SUF)}
#define RROW_MEAN(SUF)                                                        \
    {[WEFT_FLOAT32] = sum_f32##SUF, [WEFT_FLOAT64] = sum_f64##SUF,             \
     [WEFT_FLOAT16] = sum_f16##SUF, [WEFT_BOOL] = meani_b##SUF,               \
     WEFT__SINT_DTYPES(RCELL_MI, ~, SUF) WEFT__UINT_DTYPES(RCELL_MI, ~, SUF)}

static const red_fn red_table[WEFT_REDUCE_KIND_COUNT][WEFT_DTYPE_COUNT] = {
    [WEFT_REDUCE_SUM] = RROW(sum, _red),  [WEFT_REDUCE_MEAN] = RROW_MEAN(_red),
    [WEFT_REDUCE_MAX] = RROW(max, _red),  [WEFT_REDUCE_MIN] = RROW(min, _red),
    [WEFT_REDUCE_PROD] = RROW(prod, _red)};
static const keep_fn keep_table[WEFT_REDUCE_KIND_COUNT][WEFT_DTYPE_COUNT] = {
    [WEFT_REDUCE_SUM] = RROW(sum, _keep), [WEFT_REDUCE_MEAN] = RROW_MEAN(_keep),
    [WEFT_REDUCE_MAX] = RROW(max, _keep), [WEFT_REDUCE_MIN] = RROW(min, _keep),
    [WEFT_REDUCE_PROD] = RROW(prod, _keep)};

/* The loops of (kind, dt): complex ones from reduce_complex.c, else the
 * tables'. */
static void loops_of(weft_reduce_kind_t kind, weft_dtype_t dt, red_fn *red, keep_fn *keep)
{
    if (weft__reduce_complex_loops(kind, dt, red, keep)) return;
    *red = red_table[kind][dt];
    *keep = keep_table[kind][dt];
}

bool weft__reduce_dtype_ok(weft_dtype_t dt)
{
    /* complex: Sum/Mean/Prod (reduce_complex.c); Max/Min refuse it in make_node */
    return ((unsigned)dt < WEFT_DTYPE_COUNT && red_table[WEFT_REDUCE_SUM][dt] != NULL) ||
           weft__reduce_is_complex(dt);
}

weft_dtype_t weft__reduce_out_dtype(weft_reduce_kind_t kind, weft_dtype_t in)
{
    int k = weft_dtype_kind(in);
    bool floaty = k == WEFT_KIND_FLOAT || k == WEFT_KIND_COMPLEX;
    if (floaty || kind == WEFT_REDUCE_MAX || kind == WEFT_REDUCE_MIN) return in;
    if (kind == WEFT_REDUCE_MEAN) return WEFT_FLOAT64;
    return k == WEFT_KIND_UINT ? WEFT_UINT64 : WEFT_INT64;
}

/* The fold's identity (its starting value) for an output of dtype dt: 0 for
 * Sum/Mean, 1 for Prod, the dtype's lowest / highest value for Max / Min. */
#define IDENT_S(A, B, T, UT, sn, D)                                      \
    case D: {                                                            \
        T lo = (T)((UT)1 << (8 * sizeof(T) - 1)), hi = (T)((UT)-1 >> 1); \
        T v = is_max ? lo : is_min ? hi : (T)iv;                         \
        for (int64_t i = 0; i < n; i++) ((T *)out)[i] = v;               \
        return;                                                          \
    }
#define IDENT_U(A, B, T, UT, sn, D)                        \
    case D: {                                              \
        T v = is_max ? (T)0 : is_min ? (T)-1 : (T)iv;      \
        for (int64_t i = 0; i < n; i++) ((T *)out)[i] = v; \
        return;                                            \
    }
#define IDENT_F(A, B, T, sn, D)                                \
    case D:                                                    \
        for (int64_t i = 0; i < n; i++) ((T *)out)[i] = (T)fv; \
        return;

void weft__reduce_fill_identity(weft_reduce_kind_t kind, weft_dtype_t dt, void *out, int64_t n)
{
    bool is_max = kind == WEFT_REDUCE_MAX, is_min = kind == WEFT_REDUCE_MIN;
    double fv = kind == WEFT_REDUCE_PROD ? 1.0 : is_max ? -INFINITY : is_min ? INFINITY : 0.0;
    int iv = kind == WEFT_REDUCE_PROD ? 1 : 0;
    switch (dt) {
    WEFT__SINT_DTYPES(IDENT_S, ~, ~)
    WEFT__UINT_DTYPES(IDENT_U, ~, ~)
    WEFT__FLOAT_DTYPES(IDENT_F, ~, ~)
    IDENT_F(~, ~, weft__f16, f16, WEFT_FLOAT16)
    case WEFT_BOOL: memset(out, is_min ? 1 : 0, (size_t)n); return;
    case WEFT_COMPLEX64: /* (fv, 0): Sum's 0, Prod's 1 */
    case WEFT_COMPLEX128:
        weft__reduce_fill_identity(kind, dt == WEFT_COMPLEX64 ? WEFT_FLOAT32 : WEFT_FLOAT64, out,
                                   2 * n);
        for (int64_t i = 0; fv != 0 && i < n; i++) {
            if (dt == WEFT_COMPLEX64) ((float *)out)[2 * i + 1] = 0;
            else ((double *)out)[2 * i + 1] = 0;
        }
        return;
    default: return;
    }
}

bool weft__rloop_prepare(const weft__rloop_t *in, weft__rloop_t *l)
{
    l->ndim = 0;
    for (int d = 0; d < in->ndim; d++) {
        if (in->shape[d] == 0) {
            return false;
        }
        if (in->shape[d] == 1) {
            continue;
        }
        int k = l->ndim++;
        l->shape[k] = in->shape[d];
        l->sx[k] = in->sx[d];
        l->so[k] = in->so[d];
        l->sg[k] = in->sg[d];
    }
    if (l->ndim == 0) {
        l->ndim = 1;
        l->shape[0] = 1;
        l->sx[0] = l->so[0] = l->sg[0] = 0;
        return true;
    }
    int best = l->ndim - 1, last = l->ndim - 1;
    for (int d = 0; d < l->ndim; d++) {
        if (llabs(l->sx[d]) < llabs(l->sx[best])) {
            best = d;
        }
    }
    int64_t t;
#define RLOOP_SWAP(f) (t = l->f[best], l->f[best] = l->f[last], l->f[last] = t)
    RLOOP_SWAP(shape);
    RLOOP_SWAP(sx);
    RLOOP_SWAP(so);
    RLOOP_SWAP(sg);
#undef RLOOP_SWAP
    return true;
}

void weft__reduce_box(weft_reduce_kind_t kind, weft_dtype_t dx, const void *x,
                      weft_dtype_t dout, void *out, const weft__rloop_t *l)
{
    int64_t ex = (int64_t)weft_dtype_size(dx), eo = (int64_t)weft_dtype_size(dout);
    int inner = l->ndim - 1;
    red_fn red = NULL;
    keep_fn keep = NULL;
    loops_of(kind, dx, &red, &keep);
    int64_t idx[WEFT_MAX_NDIM] = {0};
    int64_t ox = 0, oo = 0;
    for (;;) {
        const char *xp = (const char *)x + ox * ex;
        char *op = (char *)out + oo * eo;
        if (l->so[inner] == 0) {
            red(xp, l->shape[inner], l->sx[inner], op);
        } else {
            keep(xp, l->shape[inner], l->sx[inner], op, l->so[inner]);
        }
        int d = inner - 1;
        for (; d >= 0; d--) { /* odometer over the outer axes */
            ox += l->sx[d];
            oo += l->so[d];
            if (++idx[d] < l->shape[d]) {
                break;
            }
            ox -= l->sx[d] * l->shape[d];
            oo -= l->so[d] * l->shape[d];
            idx[d] = 0;
        }
        if (d < 0) {
            return;
        }
    }
}

/* The kept-axis loop of (kind, dout) folds a row of partials of the output's
 * dtype: Sum/Mean of an integer x add int64 (wrapping) or float64 partials,
 * as the kernels of an int64 or float64 x do. */
void weft__reduce_merge(weft_reduce_kind_t kind, weft_dtype_t dout, void *out, const void *part,
                        int64_t n)
{
    red_fn red = NULL;
    keep_fn keep = NULL;
    loops_of(kind, dout, &red, &keep);
    keep((const char *)part, n, 1, (char *)out, 1);
}

void weft__reduce_divide(weft_dtype_t dt, void *out, int64_t n, double count)
{
    if (weft__reduce_is_complex(dt)) { /* each part */
        weft__reduce_divide(dt == WEFT_COMPLEX64 ? WEFT_FLOAT32 : WEFT_FLOAT64, out, 2 * n, count);
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        if (dt == WEFT_FLOAT32) {
            ((float *)out)[i] = (float)((double)((float *)out)[i] / count);
        } else if (dt == WEFT_FLOAT16) {
            ((weft__f16 *)out)[i] = (weft__f16)((double)((weft__f16 *)out)[i] / count);
        } else {
            ((double *)out)[i] /= count;
        }
    }
}

/* Visits every element of x in C order over loop->shape, giving x's offset,
 * the output offset, the output-gradient offset, the C-order position within
 * its group and the flat C-order index. */
typedef struct rvisit {
    int64_t ox, oo, og, pos_in_group, flat;
} rvisit_t;

typedef void (*rvisit_fn)(void *ctx, const rvisit_t *v);

static void reduce_visit(const weft__rloop_t *l, rvisit_fn fn, void *ctx)
{
    for (int d = 0; d < l->ndim; d++) {
        if (l->shape[d] == 0) {
            return;
        }
    }
    int64_t idx[WEFT_MAX_NDIM] = {0};
    rvisit_t v = {0, 0, 0, 0, 0};
    for (;;) {
        v.pos_in_group = 0;
        for (int d = 0; d < l->ndim; d++) { /* position among the reduced axes, C order */
            if (l->so[d] == 0) {
                v.pos_in_group = v.pos_in_group * l->shape[d] + idx[d];
            }
        }
        fn(ctx, &v);
        v.flat++;
        int d = l->ndim - 1;
        for (; d >= 0; d--) {
            v.ox += l->sx[d];
            v.oo += l->so[d];
            v.og += l->sg[d];
            if (++idx[d] < l->shape[d]) {
                break;
            }
            v.ox -= l->sx[d] * l->shape[d];
            v.oo -= l->so[d] * l->shape[d];
            v.og -= l->sg[d] * l->shape[d];
            idx[d] = 0;
        }
        if (d < 0) {
            return;
        }
    }
}

/* ---- gradient kernels ----------------------------------------------------- */

static double loadf(weft_dtype_t dt, const void *p, int64_t i)
{
    if (dt == WEFT_FLOAT16) return (double)((const weft__f16 *)p)[i];
    return dt == WEFT_FLOAT32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

static void storef(weft_dtype_t dt, void *p, int64_t i, double v)
{
    if (dt == WEFT_FLOAT32) {
        ((float *)p)[i] = (float)v;
    } else if (dt == WEFT_FLOAT16) {
        ((weft__f16 *)p)[i] = (weft__f16)v;
    } else {
        ((double *)p)[i] = v;
    }
}

typedef struct rgrad_ctx {
    weft_dtype_t dt;
    const void *x, *g;
    void *dx;
    double scale;
    bool is_max;
    double *acc;  /* per group: extreme value / product of non-zeros */
    int64_t *cnt; /* per group: zero count (prod) / chosen flat index + 1 (extreme) */
} rgrad_ctx_t;

/* dx = g * scale along a row: operand 0 dx, operand 1 g (stride 0 where g
 * broadcasts); arg: the scale. */
#define DEF_BCAST_ROW(name, T)                                                        \
    static void name(size_t n, char *const *p, const int64_t *s, void *arg)           \
    {                                                                                 \
        double scale = *(const double *)arg;                                          \
        T *o = (T *)p[0];                                                             \
        const T *g = (const T *)p[1];                                                 \
        if (s[0] == 1 && s[1] == 0) {                                                 \
            T v = (T)((double)g[0] * scale);                                          \
            for (size_t i = 0; i < n; i++) o[i] = v;                                  \
            return;                                                                   \
        }                                                                             \
        for (size_t i = 0; i < n; i++)                                                \
            o[(int64_t)i * s[0]] = (T)((double)g[(int64_t)i * s[1]] * scale);         \
    }
DEF_BCAST_ROW(bcast_row_f32, float)
DEF_BCAST_ROW(bcast_row_f64, double)
DEF_BCAST_ROW(bcast_row_f16, weft__f16)

/* Through the N-d iterator (not the per-element visitor): a full reduction's
 * gradient is one fill of dx, a partial one a few strided rows. */
void weft__reduce_grad_broadcast(weft_dtype_t dt, const void *g, void *dx, double scale,
                                 const weft__rloop_t *loop)
{
    int64_t sdx[WEFT_MAX_NDIM];
    weft__tensor_contig_strides(loop->ndim, loop->shape, sdx);
    char *base[2] = {dx, (char *)(uintptr_t)g};
    const int64_t *st[2] = {sdx, loop->sg};
    size_t isz[2] = {weft_dtype_size(dt), weft_dtype_size(dt)};
    weft__iter_rows(loop->ndim, loop->shape, 2, base, st, isz,
                    dt == WEFT_FLOAT32   ? bcast_row_f32
                    : dt == WEFT_FLOAT16 ? bcast_row_f16
                                         : bcast_row_f64,
                    &scale);
}

/* Pass 1: the first extreme position of each group (NaN counts as extreme). */
static void extreme_find_visit(void *p, const rvisit_t *v)
{
    rgrad_ctx_t *c = p;
    double xv = loadf(c->dt, c->x, v->ox);
    if (c->cnt[v->oo] != 0) {
        double b = c->acc[v->oo];
        bool better = !isnan(b) && (isnan(xv) || (c->is_max ? xv > b : xv < b));
        if (!better) {
            return;
        }
    }
    c->acc[v->oo] = xv;
    c->cnt[v->oo] = v->flat + 1;
}

/* Pass 2: g goes to the chosen position, 0 elsewhere. */
static void extreme_write_visit(void *p, const rvisit_t *v)
{
    rgrad_ctx_t *c = p;
    bool chosen = c->cnt[v->oo] == v->flat + 1;
    storef(c->dt, c->dx, v->flat, chosen ? loadf(c->dt, c->g, v->og) : 0.0);
}

void weft__reduce_grad_extreme(weft_dtype_t dt, bool is_max, const void *x, const void *g,
                               void *dx, int64_t n_out, double *acc, int64_t *cnt,
                               const weft__rloop_t *loop)
{
    rgrad_ctx_t c = {.dt = dt, .x = x, .g = g, .dx = dx, .is_max = is_max, .acc = acc, .cnt = cnt};
    memset(cnt, 0, (size_t)n_out * sizeof *cnt);
    reduce_visit(loop, extreme_find_visit, &c);
    reduce_visit(loop, extreme_write_visit, &c);
}

static void prod_count_visit(void *p, const rvisit_t *v)
{
    rgrad_ctx_t *c = p;
    double xv = loadf(c->dt, c->x, v->ox);
    if (xv == 0.0) {
        c->cnt[v->oo]++;
    } else {
        c->acc[v->oo] *= xv;
    }
}

/* With z zeros in the group and P the product of its non-zeros:
 * z == 0: g*P/x; z == 1: g*P at the zero, 0 elsewhere; z >= 2: 0. */
static void prod_write_visit(void *p, const rvisit_t *v)
{
    rgrad_ctx_t *c = p;
    double xv = loadf(c->dt, c->x, v->ox), gv = loadf(c->dt, c->g, v->og);
    int64_t z = c->cnt[v->oo];
    double d = 0.0;
    if (z == 0) {
        d = gv * c->acc[v->oo] / xv;
    } else if (z == 1 && xv == 0.0) {
        d = gv * c->acc[v->oo];
    }
    storef(c->dt, c->dx, v->flat, d);
}

void weft__reduce_grad_prod(weft_dtype_t dt, const void *x, const void *g, void *dx,
                            int64_t n_out, double *acc, int64_t *cnt, const weft__rloop_t *loop)
{
    rgrad_ctx_t c = {.dt = dt, .x = x, .g = g, .dx = dx, .acc = acc, .cnt = cnt};
    memset(cnt, 0, (size_t)n_out * sizeof *cnt);
    for (int64_t i = 0; i < n_out; i++) {
        c.acc[i] = 1.0;
    }
    reduce_visit(loop, prod_count_visit, &c);
    reduce_visit(loop, prod_write_visit, &c);
}
