/* Kernels of CumSum / CumProd (scan_int.h): per-dtype block totals and
 * block scans, and the fixed-block two-pass driver. Integer scans run in
 * uint64_t (two's complement wrap, as NumPy's int64); float32 accumulates in
 * float32 and float64 in double, as NumPy does. Built with -O3. */
#include <stdint.h>
#include <string.h>

#include "scan_int.h"
#include WEFT_STREAM_STORE_HEADER /* selected by lib/ops/CMakeLists.txt */

/* Outputs at least this large stream their full blocks (non-temporal stores
 * skip reading the output's lines first): as the elementwise kernels, half
 * the 32 MB L3 of the machines measured (docs/performance-notes.md §2). */
#define SCAN_STREAM_MIN_BYTES ((int64_t)16 << 20)

/* A block total or carry, in the accumulator type of the dtype. */
typedef union scan_acc {
    uint64_t u;
    float f;
    double d;
} scan_acc_t;

/* (C input type, suffix, dtype, accumulator type, accumulator member,
 * output type); a new dtype is one more line. */
#define SCAN_DTYPES(X)                                        \
    X(uint8_t, b, WEFT_BOOL, uint64_t, u, int64_t)            \
    X(int32_t, i32, WEFT_INT32, uint64_t, u, int64_t)         \
    X(int64_t, i64, WEFT_INT64, uint64_t, u, int64_t)         \
    X(float, f32, WEFT_FLOAT32, float, f, float)              \
    X(double, f64, WEFT_FLOAT64, double, d, double)

#define SCAN_ADD(a, b) ((a) + (b))
#define SCAN_MUL(a, b) ((a) * (b))

/* total: the fold of n elements at stride sx; scan: o[i*so] = running fold
 * from carry (or from x[0] when !has_carry). */
#define DEF_SCAN(TI, sfx, DT, TA, mem, TO, opn, OP, ID)                                     \
    static void total_##opn##_##sfx(const char *xp, int64_t n, int64_t sx, scan_acc_t *out) \
    {                                                                                       \
        const TI *x = (const TI *)xp;                                                       \
        TA acc[8] = {ID, ID, ID, ID, ID, ID, ID, ID};                                       \
        int64_t i = 0;                                                                      \
        if (sx == 1) {                                                                      \
            for (; i + 8 <= n; i += 8) {                                                    \
                for (int k = 0; k < 8; k++) acc[k] = OP(acc[k], (TA)x[i + k]);              \
            }                                                                               \
        }                                                                                   \
        for (; i < n; i++) acc[0] = OP(acc[0], (TA)x[i * sx]);                              \
        out->mem = OP(OP(OP(acc[0], acc[1]), OP(acc[2], acc[3])),                           \
                      OP(OP(acc[4], acc[5]), OP(acc[6], acc[7])));                          \
    }                                                                                       \
    static void scan_##opn##_##sfx(const char *xp, int64_t n, int64_t sx, char *op,         \
                                   int64_t so, const scan_acc_t *carry)                     \
    {                                                                                       \
        const TI *x = (const TI *)xp;                                                       \
        TO *o = (TO *)op;                                                                   \
        if (n == 0) return;                                                                 \
        TA run = carry ? OP(carry->mem, (TA)x[0]) : (TA)x[0];                               \
        o[0] = (TO)run;                                                                     \
        if (sx == 1 && so == 1) {                                                           \
            for (int64_t i = 1; i < n; i++) {                                               \
                run = OP(run, (TA)x[i]);                                                    \
                o[i] = (TO)run;                                                             \
            }                                                                               \
            return;                                                                         \
        }                                                                                   \
        for (int64_t i = 1; i < n; i++) {                                                   \
            run = OP(run, (TA)x[i * sx]);                                                   \
            o[i * so] = (TO)run;                                                            \
        }                                                                                   \
    }
/* Four full unit-stride blocks after the first (every one with a carry)
 * scanned in one loop: four independent chains hide the add's latency; each
 * block's chain is exactly scan_'s, so the bits are the same. stream: the
 * four outputs are 64-byte aligned; results go out a line at a time with
 * streaming stores (the caller fences). */
#define DEF_SCAN4(TI, sfx, DT, TA, mem, TO, opn, OP)                                         \
    static void scan4_##opn##_##sfx(const char *const *xp, char *const *op, int64_t n,       \
                                    const scan_acc_t *carry, bool stream)                    \
    {                                                                                        \
        enum { L = 64 / sizeof(TO) };                                                        \
        const TI *x0 = (const TI *)xp[0], *x1 = (const TI *)xp[1], *x2 = (const TI *)xp[2],  \
                 *x3 = (const TI *)xp[3];                                                    \
        TO *o0 = (TO *)op[0], *o1 = (TO *)op[1], *o2 = (TO *)op[2], *o3 = (TO *)op[3];       \
        TA r0 = carry[0].mem, r1 = carry[1].mem, r2 = carry[2].mem, r3 = carry[3].mem;       \
        int64_t i = 0;                                                                       \
        if (stream && WEFT__STREAM_STORES) {                                                 \
            _Alignas(64) TO l0[L], l1[L], l2[L], l3[L];                                      \
            for (; i + L <= n; i += L) {                                                     \
                for (int k = 0; k < L; k++) {                                                \
                    r0 = OP(r0, (TA)x0[i + k]);                                              \
                    r1 = OP(r1, (TA)x1[i + k]);                                              \
                    r2 = OP(r2, (TA)x2[i + k]);                                              \
                    r3 = OP(r3, (TA)x3[i + k]);                                              \
                    l0[k] = (TO)r0;                                                          \
                    l1[k] = (TO)r1;                                                          \
                    l2[k] = (TO)r2;                                                          \
                    l3[k] = (TO)r3;                                                          \
                }                                                                            \
                weft__stream_line(o0 + i, l0);                                               \
                weft__stream_line(o1 + i, l1);                                               \
                weft__stream_line(o2 + i, l2);                                               \
                weft__stream_line(o3 + i, l3);                                               \
            }                                                                                \
        }                                                                                    \
        for (; i < n; i++) {                                                                 \
            r0 = OP(r0, (TA)x0[i]);                                                          \
            r1 = OP(r1, (TA)x1[i]);                                                          \
            r2 = OP(r2, (TA)x2[i]);                                                          \
            r3 = OP(r3, (TA)x3[i]);                                                          \
            o0[i] = (TO)r0;                                                                  \
            o1[i] = (TO)r1;                                                                  \
            o2[i] = (TO)r2;                                                                  \
            o3[i] = (TO)r3;                                                                  \
        }                                                                                    \
    }
#define DEF_SCAN_BOTH(TI, sfx, DT, TA, mem, TO)            \
    DEF_SCAN(TI, sfx, DT, TA, mem, TO, sum, SCAN_ADD, 0)    \
    DEF_SCAN(TI, sfx, DT, TA, mem, TO, prod, SCAN_MUL, 1)   \
    DEF_SCAN4(TI, sfx, DT, TA, mem, TO, sum, SCAN_ADD)      \
    DEF_SCAN4(TI, sfx, DT, TA, mem, TO, prod, SCAN_MUL)
SCAN_DTYPES(DEF_SCAN_BOTH)

typedef void (*total_fn)(const char *x, int64_t n, int64_t sx, scan_acc_t *out);
typedef void (*scan_fn)(const char *x, int64_t n, int64_t sx, char *o, int64_t so,
                        const scan_acc_t *carry);

typedef void (*scan4_fn)(const char *const *x, char *const *o, int64_t n,
                         const scan_acc_t *carry, bool stream);

typedef struct scan_kern {
    total_fn total;
    scan_fn scan;
    scan4_fn scan4;
    void (*combine)(scan_acc_t *a, const scan_acc_t *b); /* a = a op b */
} scan_kern_t;

#define DEF_COMBINE(TI, sfx, DT, TA, mem, TO)                                   \
    static void comb_sum_##sfx(scan_acc_t *a, const scan_acc_t *b)             \
    {                                                                          \
        a->mem = a->mem + b->mem;                                              \
    }                                                                          \
    static void comb_prod_##sfx(scan_acc_t *a, const scan_acc_t *b)            \
    {                                                                          \
        a->mem = a->mem * b->mem;                                              \
    }
SCAN_DTYPES(DEF_COMBINE)

static scan_kern_t scan_kern(weft_dtype_t dt, bool is_prod)
{
#define SCAN_KERN_CASE(TI, sfx, DT, TA, mem, TO)                                          \
    case DT:                                                                              \
        return is_prod ? (scan_kern_t){total_prod_##sfx, scan_prod_##sfx, scan4_prod_##sfx, \
                                       comb_prod_##sfx}                                     \
                       : (scan_kern_t){total_sum_##sfx, scan_sum_##sfx, scan4_sum_##sfx,    \
                                       comb_sum_##sfx};
    switch (dt) {
        SCAN_DTYPES(SCAN_KERN_CASE)
    default: return (scan_kern_t){total_sum_f64, scan_sum_f64, scan4_sum_f64, comb_sum_f64};
    }
}

weft_dtype_t weft__scan_out_dtype(weft_dtype_t dx)
{
    return dx == WEFT_FLOAT32 || dx == WEFT_FLOAT64 ? dx : WEFT_INT64;
}

typedef struct scan_job {
    scan_kern_t k;
    const char *x;
    char *o;
    int64_t ex, eo;                   /* element sizes */
    int64_t len, sx, so;              /* lane length and strides (elements; signed) */
    int nd;                           /* other axes */
    int64_t shape[WEFT_MAX_NDIM], xst[WEFT_MAX_NDIM], ost[WEFT_MAX_NDIM];
    int64_t nblk;
    bool stream;     /* the output is large enough to stream (pass2_four) */
    scan_acc_t *acc; /* per (lane, block): pass 1 totals, then carries */
} scan_job_t;

/* Byte offsets of lane j's first element (in scan order) in x and out. */
static void lane_base(const scan_job_t *s, int64_t j, int64_t *bx, int64_t *bo)
{
    int64_t ox = 0, oo = 0;
    for (int d = s->nd - 1; d >= 0; d--) {
        int64_t i = j % s->shape[d];
        j /= s->shape[d];
        ox += i * s->xst[d];
        oo += i * s->ost[d];
    }
    *bx = ox * s->ex;
    *bo = oo * s->eo;
}

static void block_range(const scan_job_t *s, int64_t b, int64_t *lo, int64_t *n)
{
    *lo = b * WEFT__SCAN_BLOCK;
    *n = s->len - *lo < WEFT__SCAN_BLOCK ? s->len - *lo : WEFT__SCAN_BLOCK;
}

static weft_status_t pass1(void *arg, size_t begin, size_t end)
{
    const scan_job_t *s = arg;
    for (size_t t = begin; t < end; t++) {
        int64_t j = (int64_t)t / s->nblk, b = (int64_t)t % s->nblk, bx, bo, lo, n;
        lane_base(s, j, &bx, &bo);
        block_range(s, b, &lo, &n);
        s->k.total(s->x + bx + lo * s->sx * s->ex, n, s->sx, &s->acc[t]);
    }
    return WEFT_OK;
}

/* Whether tasks t..t+3 are four full blocks of one unit-stride lane, none
 * its first: scan4 can take them together. */
static bool four_full(const scan_job_t *s, size_t t, size_t end)
{
    int64_t b = (int64_t)t % s->nblk;
    return s->sx == 1 && s->so == 1 && t + 4 <= end && b > 0 && b + 4 < s->nblk;
}

static void pass2_four(const scan_job_t *s, size_t t)
{
    const char *xp[4];
    char *op[4];
    int64_t j = (int64_t)t / s->nblk, bx, bo;
    lane_base(s, j, &bx, &bo);
    for (int q = 0; q < 4; q++) {
        int64_t lo = ((int64_t)t % s->nblk + q) * WEFT__SCAN_BLOCK;
        xp[q] = s->x + bx + lo * s->ex;
        op[q] = s->o + bo + lo * s->eo;
    }
    bool aligned = true;
    for (int q = 0; q < 4; q++) aligned = aligned && ((uintptr_t)op[q] & 63) == 0;
    s->k.scan4(xp, op, WEFT__SCAN_BLOCK, &s->acc[t], s->stream && aligned);
}

/* Pass 2 over tasks [begin, end): four full blocks at a time where it can. */
static void pass2_blocks(const scan_job_t *s, size_t begin, size_t end)
{
    for (size_t t = begin; t < end; t++) {
        if (s->nblk > 1 && four_full(s, t, end)) {
            pass2_four(s, t);
            t += 3;
            continue;
        }
        int64_t j = (int64_t)t / s->nblk, b = (int64_t)t % s->nblk, bx, bo, lo, n;
        lane_base(s, j, &bx, &bo);
        block_range(s, b, &lo, &n);
        s->k.scan(s->x + bx + lo * s->sx * s->ex, n, s->sx, s->o + bo + lo * s->so * s->eo,
                  s->so, b > 0 ? &s->acc[t] : NULL);
    }
}

static weft_status_t pass2(void *arg, size_t begin, size_t end)
{
    const scan_job_t *s = arg;
    pass2_blocks(s, begin, end);
    if (s->stream) {
        weft__stream_fence(); /* this worker's streamed lines, before the node completes */
    }
    return WEFT_OK;
}


static void job_init(scan_job_t *s, bool is_prod, bool reverse, int axis, const weft_tensor_t *x,
                     weft_tensor_t *out)
{
    memset(s, 0, sizeof *s);
    s->k = scan_kern(weft_tensor_dtype(x), is_prod);
    s->ex = (int64_t)weft_dtype_size(weft_tensor_dtype(x));
    s->eo = (int64_t)weft_dtype_size(weft_tensor_dtype(out));
    s->x = weft_tensor_data(x);
    s->o = weft_tensor_data(out);
    for (int d = 0; d < weft_tensor_ndim(x); d++) {
        if (d == axis) {
            s->len = weft_tensor_dim(x, d);
            s->sx = weft_tensor_stride(x, d);
            s->so = weft_tensor_stride(out, d);
            continue;
        }
        s->shape[s->nd] = weft_tensor_dim(x, d);
        s->xst[s->nd] = weft_tensor_stride(x, d);
        s->ost[s->nd++] = weft_tensor_stride(out, d);
    }
    if (reverse && s->len > 0) { /* start at the lane's end, walk back */
        s->x += (s->len - 1) * s->sx * s->ex;
        s->o += (s->len - 1) * s->so * s->eo;
        s->sx = -s->sx;
        s->so = -s->so;
    }
}

/* Turns the totals of tasks [t0, t1) of one lane into carries: each gets
 * the fold of the totals before it (run, carried over from earlier calls
 * for the lane; the lane's first block needs none and starts run). */
static void to_carries(const scan_job_t *s, size_t t0, size_t t1, scan_acc_t *run)
{
    for (size_t t = t0; t < t1; t++) {
        scan_acc_t tot = s->acc[t];
        if ((int64_t)t % s->nblk == 0) {
            *run = tot;
            continue;
        }
        s->acc[t] = *run;
        s->k.combine(run, &tot);
    }
}

/* One worker: the same passes over groups of 4 blocks (2 MB of float64), so
 * pass 2 reads them again from cache rather than memory; the same
 * operations in the same order as the split passes, so the same bits. */
static void scan_one_worker(const scan_job_t *s, int64_t lanes)
{
    for (int64_t j = 0; j < lanes; j++) {
        scan_acc_t run;
        /* block 0 alone (it has no carry), then groups of 4 (pass2_four) */
        for (int64_t b = 0, step = 1; b < s->nblk; b += step, step = 4) {
            size_t t0 = (size_t)(j * s->nblk + b);
            size_t t1 = (size_t)(j * s->nblk + (b + step < s->nblk ? b + step : s->nblk));
            pass1((void *)s, t0, t1);
            to_carries(s, t0, t1, &run);
            pass2_blocks(s, t0, t1);
        }
    }
    if (s->stream) {
        weft__stream_fence();
    }
}

weft_status_t weft__scan_run(weft_kernel_ctx_t *ctx, bool is_prod, bool reverse, int axis,
                             const weft_tensor_t *x, weft_tensor_t *out)
{
    scan_job_t s;
    job_init(&s, is_prod, reverse, axis, x, out);
    int64_t lanes = 1;
    for (int d = 0; d < s.nd; d++) lanes *= s.shape[d];
    if (lanes == 0 || s.len == 0) return WEFT_OK;
    s.nblk = (s.len + WEFT__SCAN_BLOCK - 1) / WEFT__SCAN_BLOCK;
    s.stream = WEFT__STREAM_STORES && lanes * s.len * s.eo >= SCAN_STREAM_MIN_BYTES;
    size_t tasks = (size_t)(lanes * s.nblk);
    if (s.nblk == 1) { /* whole lanes: about one block of elements per range */
        size_t grain = (size_t)(WEFT__SCAN_BLOCK / s.len > 0 ? WEFT__SCAN_BLOCK / s.len : 1);
        return weft_kernel_parallel_for(ctx, tasks, grain, pass2, &s);
    }
    const int64_t len[1] = {(int64_t)tasks};
    weft_tensor_t *scratch = NULL;
    weft_status_t st = weft_kernel_scratch(ctx, WEFT_INT64, 1, len, &scratch);
    if (st != WEFT_OK) return st;
    s.acc = weft_tensor_data(scratch);
    if (weft_kernel_threads(ctx) == 1) {
        scan_one_worker(&s, lanes);
    } else {
        st = weft_kernel_parallel_for(ctx, tasks, 1, pass1, &s);
        for (int64_t j = 0; st == WEFT_OK && j < lanes; j++) {
            scan_acc_t run;
            to_carries(&s, j * s.nblk, (j + 1) * s.nblk, &run);
        }
        /* ranges of 4 blocks, so one worker interleaves them (pass2_four) */
        if (st == WEFT_OK) st = weft_kernel_parallel_for(ctx, tasks, 4, pass2, &s);
    }
    weft_kernel_scratch_done(ctx, scratch);
    return st;
}
