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
 * elementwise ops do). The gradient kernels and Argmax visit x in plain C
 * order so "first" means first in C order. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/tensor_int.h"
#include "reduce_int.h"

typedef void (*red_fn)(const char *x, int64_t n, int64_t sx, char *o);
typedef void (*keep_fn)(const char *x, int64_t n, int64_t sx, char *o, int64_t so);

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

/* DEF_LOOPS(name, input, output, fold accumulator, kept-axis arithmetic, F) */
DEF_LOOPS(sum_f32, float, float, double, float, SUM_F)
DEF_LOOPS(sum_f64, double, double, double, double, SUM_F)
DEF_LOOPS(sum_i32, int32_t, int64_t, uint64_t, uint64_t, SUM_F)
DEF_LOOPS(sum_i64, int64_t, int64_t, uint64_t, uint64_t, SUM_F)
DEF_LOOPS(meani_i32, int32_t, double, double, double, SUM_F)
DEF_LOOPS(meani_i64, int64_t, double, double, double, SUM_F)
DEF_LOOPS(prod_f32, float, float, double, float, PROD_F)
DEF_LOOPS(prod_f64, double, double, double, double, PROD_F)
DEF_LOOPS(prod_i32, int32_t, int64_t, uint64_t, uint64_t, PROD_F)
DEF_LOOPS(prod_i64, int64_t, int64_t, uint64_t, uint64_t, PROD_F)
DEF_LOOPS(max_f32, float, float, float, float, MAX_F)
DEF_LOOPS(max_f64, double, double, double, double, MAX_F)
DEF_LOOPS(max_i32, int32_t, int32_t, int32_t, int32_t, MAX_F)
DEF_LOOPS(max_i64, int64_t, int64_t, int64_t, int64_t, MAX_F)
DEF_LOOPS(min_f32, float, float, float, float, MIN_F)
DEF_LOOPS(min_f64, double, double, double, double, MIN_F)
DEF_LOOPS(min_i32, int32_t, int32_t, int32_t, int32_t, MIN_F)
DEF_LOOPS(min_i64, int64_t, int64_t, int64_t, int64_t, MIN_F)

/* Index: [kind (weft_reduce_kind_t order)][input dtype column: f32, f64, i32, i64].
 * MEAN sums (into float64 for integer inputs); the caller scales. */
#define LOOP_ROW(k) {k##_f32_red, k##_f64_red, k##_i32_red, k##_i64_red}
#define KEEP_ROW(k) {k##_f32_keep, k##_f64_keep, k##_i32_keep, k##_i64_keep}
static const red_fn red_table[WEFT_REDUCE_KIND_COUNT][4] = {
    LOOP_ROW(sum), {sum_f32_red, sum_f64_red, meani_i32_red, meani_i64_red}, LOOP_ROW(max),
    LOOP_ROW(min), LOOP_ROW(prod)};
static const keep_fn keep_table[WEFT_REDUCE_KIND_COUNT][4] = {
    KEEP_ROW(sum), {sum_f32_keep, sum_f64_keep, meani_i32_keep, meani_i64_keep},
    KEEP_ROW(max), KEEP_ROW(min), KEEP_ROW(prod)};

static int dtype_col(weft_dtype_t dt)
{
    switch (dt) {
    case WEFT_FLOAT32: return 0;
    case WEFT_FLOAT64: return 1;
    case WEFT_INT32: return 2;
    default: return 3;
    }
}

weft_dtype_t weft__reduce_out_dtype(weft_reduce_kind_t kind, weft_dtype_t in)
{
    bool is_int = in == WEFT_INT32 || in == WEFT_INT64;
    if (!is_int || kind == WEFT_REDUCE_MAX || kind == WEFT_REDUCE_MIN) {
        return in;
    }
    return kind == WEFT_REDUCE_MEAN ? WEFT_FLOAT64 : WEFT_INT64;
}

/* The fold's identity (its starting value) for every output element. */
static void reduce_fill_identity(weft_reduce_kind_t kind, weft_dtype_t dt, void *out, int64_t n)
{
    bool is_max = kind == WEFT_REDUCE_MAX, is_min = kind == WEFT_REDUCE_MIN;
    double fv = kind == WEFT_REDUCE_PROD ? 1.0 : is_max ? -INFINITY : is_min ? INFINITY : 0.0;
    int64_t iv = kind == WEFT_REDUCE_PROD ? 1 : is_max ? INT64_MIN : is_min ? INT64_MAX : 0;
    for (int64_t i = 0; i < n; i++) {
        switch (dt) {
        case WEFT_FLOAT32: ((float *)out)[i] = (float)fv; break;
        case WEFT_FLOAT64: ((double *)out)[i] = fv; break;
        case WEFT_INT32:
            ((int32_t *)out)[i] = is_max ? INT32_MIN : is_min ? INT32_MAX : (int32_t)iv;
            break;
        default: ((int64_t *)out)[i] = iv; break;
        }
    }
}

/* Drops length-1 axes and moves the axis with the smallest x stride last.
 * Returns false when some length is 0 (nothing to fold). */
static bool rloop_prepare(const weft__rloop_t *in, weft__rloop_t *l)
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

void weft__reduce_run(weft_reduce_kind_t kind, weft_dtype_t dx, const void *x, weft_dtype_t dout,
                      void *out, int64_t n_out, const weft__rloop_t *loop)
{
    if (weft__reduce_is_complex(dx)) { /* reduce_complex.c */
        weft__reduce_run_complex(kind, dx, x, out, n_out, loop);
        return;
    }
    reduce_fill_identity(kind, dout, out, n_out);
    weft__rloop_t l;
    if (!rloop_prepare(loop, &l)) {
        return;
    }
    int64_t ex = (int64_t)weft_dtype_size(dx), eo = (int64_t)weft_dtype_size(dout);
    int inner = l.ndim - 1;
    red_fn red = red_table[kind][dtype_col(dx)];
    keep_fn keep = keep_table[kind][dtype_col(dx)];
    int64_t idx[WEFT_MAX_NDIM] = {0};
    int64_t ox = 0, oo = 0;
    for (;;) {
        const char *xp = (const char *)x + ox * ex;
        char *op = (char *)out + oo * eo;
        if (l.so[inner] == 0) {
            red(xp, l.shape[inner], l.sx[inner], op);
        } else {
            keep(xp, l.shape[inner], l.sx[inner], op, l.so[inner]);
        }
        int d = inner - 1;
        for (; d >= 0; d--) { /* odometer over the outer axes */
            ox += l.sx[d];
            oo += l.so[d];
            if (++idx[d] < l.shape[d]) {
                break;
            }
            ox -= l.sx[d] * l.shape[d];
            oo -= l.so[d] * l.shape[d];
            idx[d] = 0;
        }
        if (d < 0) {
            return;
        }
    }
}

void weft__reduce_scale(weft_dtype_t dt, void *out, int64_t n, double factor)
{
    if (weft__reduce_is_complex(dt)) { /* each part */
        weft__reduce_scale(dt == WEFT_COMPLEX64 ? WEFT_FLOAT32 : WEFT_FLOAT64, out, 2 * n, factor);
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        if (dt == WEFT_FLOAT32) {
            ((float *)out)[i] = (float)((double)((float *)out)[i] * factor);
        } else {
            ((double *)out)[i] *= factor;
        }
    }
}

/* Element i of x (any supported dtype) as a double. */
static double load_elem(weft_dtype_t dt, const void *x, int64_t i)
{
    switch (dt) {
    case WEFT_FLOAT32: return ((const float *)x)[i];
    case WEFT_FLOAT64: return ((const double *)x)[i];
    case WEFT_INT32: return ((const int32_t *)x)[i];
    default: return (double)((const int64_t *)x)[i];
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

typedef struct argmax_ctx {
    weft_dtype_t dt;
    const void *x;
    int64_t *out;
    int64_t *best_off; /* x offset of the current best per group (any sign: reversed views) */
} argmax_ctx_t;

/* Whether the element at x offset `off` beats the group's best so far at
 * `best`: greater, or the first NaN (NumPy's argmax stops at a NaN). */
static bool argmax_beats(const argmax_ctx_t *c, int64_t off, int64_t best)
{
    if (c->dt == WEFT_INT64) { /* exact: no round trip through double */
        return ((const int64_t *)c->x)[off] > ((const int64_t *)c->x)[best];
    }
    double xv = load_elem(c->dt, c->x, off), bv = load_elem(c->dt, c->x, best);
    return !isnan(bv) && (xv > bv || isnan(xv));
}

/* A group's first element in C order is the one at position 0 (every reduced
 * index 0): it starts the group, so no offset value has to mean "none yet"
 * (a reversed view's offsets are negative). */
static void argmax_visit(void *p, const rvisit_t *v)
{
    argmax_ctx_t *c = p;
    if (v->pos_in_group != 0 && !argmax_beats(c, v->ox, c->best_off[v->oo])) {
        return;
    }
    c->best_off[v->oo] = v->ox;
    c->out[v->oo] = v->pos_in_group;
}

void weft__reduce_argmax(weft_dtype_t dx, const void *x, int64_t *out, int64_t *best,
                         int64_t n_out, const weft__rloop_t *loop)
{
    for (int64_t i = 0; i < n_out; i++) {
        out[i] = 0;
    }
    argmax_ctx_t c = {dx, x, out, best};
    reduce_visit(loop, argmax_visit, &c);
}

/* ---- gradient kernels ----------------------------------------------------- */

static double loadf(weft_dtype_t dt, const void *p, int64_t i)
{
    return dt == WEFT_FLOAT32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

static void storef(weft_dtype_t dt, void *p, int64_t i, double v)
{
    if (dt == WEFT_FLOAT32) {
        ((float *)p)[i] = (float)v;
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
                    dt == WEFT_FLOAT32 ? bcast_row_f32 : bcast_row_f64, &scale);
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
