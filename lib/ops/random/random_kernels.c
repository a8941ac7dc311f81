/* The random ops' element loops (docs/random.md §3-§4): element i of a
 * sample is computed from Philox blocks (i, d) of the key alone, so a range
 * of elements gives the same bits whichever worker runs it and however the
 * sample is split. Parameters are read through their strides over the
 * sample's shape (0 on broadcast axes). Each distribution is a per-element
 * body in one odometer loop; the float dtypes come from RANDOM_FLOAT_TYPES
 * (a new float dtype is one line there). */
#include <math.h>
#include <stdlib.h>

#include "random_int.h"

/* The float sample dtypes of uniform and normal: C type, suffix, dtype. */
#define RANDOM_FLOAT_TYPES(X) X(double, f64, WEFT_FLOAT64) X(float, f32, WEFT_FLOAT32)

/* Loop over elements [begin, end) of job's sample in C order with i the
 * element index and o0 / o1 the offsets of the two parameters. */
#define RANDOM_LOOP(job, begin, end, BODY)                                        \
    do {                                                                          \
        int64_t idx_[WEFT_MAX_NDIM], o0 = 0, o1 = 0, rest_ = (int64_t)(begin);   \
        for (int d_ = (job)->ndim - 1; d_ >= 0; d_--) {                           \
            int64_t len_ = (job)->shape[d_];                                      \
            idx_[d_] = rest_ % len_;                                              \
            rest_ /= len_;                                                        \
            o0 += idx_[d_] * (job)->pstride[0][d_];                               \
            o1 += idx_[d_] * (job)->pstride[1][d_];                               \
        }                                                                         \
        (void)o1; /* one-parameter bodies read o0 only */                         \
        for (int64_t i = (int64_t)(begin); i < (int64_t)(end); i++) {             \
            BODY;                                                                 \
            for (int d_ = (job)->ndim - 1; d_ >= 0; d_--) {                       \
                o0 += (job)->pstride[0][d_];                                      \
                o1 += (job)->pstride[1][d_];                                      \
                if (++idx_[d_] < (job)->shape[d_]) break;                         \
                o0 -= (job)->pstride[0][d_] * (job)->shape[d_];                   \
                o1 -= (job)->pstride[1][d_] * (job)->shape[d_];                   \
                idx_[d_] = 0;                                                     \
            }                                                                     \
        }                                                                         \
    } while (0)

/* ---- per-element draws ----------------------------------------------------- */

/* uniform on [0, 1): 53 bits of words 0-1 (float64), 24 of word 0 (float32) */
static inline double u01_f64(const uint32_t b[4])
{
    return weft__r53(b[0], b[1]);
}
static inline float u01_f32(const uint32_t b[4])
{
    return (float)(b[0] >> 8) * 0x1.0p-24f;
}

/* Box-Muller's first output: u1 in (0, 1] from words 0-1, u2 in [0, 1) from
 * words 2-3; computed in double for both dtypes. */
static inline double std_normal(const uint32_t b[4])
{
    double u1 = (double)((weft__r64(b[0], b[1]) >> 11) + 1) * 0x1.0p-53;
    double u2 = weft__r53(b[2], b[3]);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* High and low 64 bits of a * b, without a 128-bit type. */
static inline uint64_t mul_hilo(uint64_t a, uint64_t b, uint64_t *lo)
{
    uint64_t al = (uint32_t)a, ah = a >> 32, bl = (uint32_t)b, bh = b >> 32;
    uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
    uint64_t mid = (ll >> 32) + (uint32_t)lh + (uint32_t)hl;
    *lo = (mid << 32) | (uint32_t)ll;
    return hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}

/* Lemire's unbiased draw from [0, range) (range >= 1): 64-bit candidates
 * are words 0-1 then 2-3 of blocks d = 0, 1, ... of element i; a candidate
 * is rejected with probability < 2^-63 * range. After the last block
 * (WEFT__RANDOM_MAX_DRAWS: 2^17 rejections in a row, never seen) the last
 * candidate is taken. */
static uint64_t bounded_u64(const weft__rkey_t *key, uint64_t i, uint64_t range)
{
    uint32_t b[4];
    weft__rblock(key, i, 0, b);
    uint64_t lo, hi = mul_hilo(weft__r64(b[0], b[1]), range, &lo);
    if (lo >= range) return hi; /* accepted without the division (Lemire's shortcut) */
    uint64_t threshold = (0 - range) % range;
    for (uint32_t d = 0, w = 2;;) {
        if (lo >= threshold) return hi;
        if (w == 4) { /* the next block's candidates */
            if (++d == WEFT__RANDOM_MAX_DRAWS) return hi;
            weft__rblock(key, i, d, b);
            w = 0;
        }
        hi = mul_hilo(weft__r64(b[w], b[w + 1]), range, &lo);
        w += 2;
    }
}

/* Inverse CDF on one row of p (k entries, stride st, sum already checked):
 * the first category whose running sum exceeds u * sum; rounding past the
 * end gives the last category with non-zero probability. */
static int64_t categorical_pick(const double *p, int64_t k, int64_t st, double u)
{
    double total = 0;
    for (int64_t j = 0; j < k; j++) total += p[j * st];
    double target = u * total, run = 0;
    int64_t last = 0;
    for (int64_t j = 0; j < k; j++) {
        double pj = p[j * st];
        run += pj;
        if (pj > 0) last = j;
        if (run > target && pj > 0) return j;
    }
    return last;
}

/* ---- loops per distribution ---------------------------------------------------- */

#define UNIFORM_LOOP(T, sfx, DT)                                                          \
    static void uniform_##sfx(const weft__rjob_t *job, size_t begin, size_t end)          \
    {                                                                                     \
        const T *lo = job->par[0], *hi = job->par[1];                                     \
        T *out = job->out;                                                                \
        RANDOM_LOOP(job, begin, end, {                                                    \
            uint32_t b[4];                                                                \
            weft__rblock(&job->key, (uint64_t)i, 0, b);                                   \
            out[i] = lo[o0] + (hi[o1] - lo[o0]) * (T)u01_##sfx(b);                        \
        });                                                                               \
    }                                                                                     \
    static void normal_##sfx(const weft__rjob_t *job, size_t begin, size_t end)           \
    {                                                                                     \
        const T *mean = job->par[0], *sd = job->par[1];                                   \
        T *out = job->out;                                                                \
        RANDOM_LOOP(job, begin, end, {                                                    \
            uint32_t b[4];                                                                \
            weft__rblock(&job->key, (uint64_t)i, 0, b);                                   \
            out[i] = mean[o0] + sd[o1] * (T)std_normal(b);                                \
        });                                                                               \
    }
RANDOM_FLOAT_TYPES(UNIFORM_LOOP)
#undef UNIFORM_LOOP

static void bernoulli_run(const weft__rjob_t *job, size_t begin, size_t end)
{
    const double *p = job->par[0];
    bool *out = job->out;
    RANDOM_LOOP(job, begin, end, {
        uint32_t b[4];
        weft__rblock(&job->key, (uint64_t)i, 0, b);
        out[i] = u01_f64(b) < p[o0];
    });
}

static void integers_run(const weft__rjob_t *job, size_t begin, size_t end)
{
    const int64_t *lo = job->par[0], *hi = job->par[1];
    int64_t *out = job->out;
    RANDOM_LOOP(job, begin, end, {
        uint64_t range = (uint64_t)hi[o1] - (uint64_t)lo[o0];
        /* wraps back into [low, high) in two's complement */
        out[i] = (int64_t)((uint64_t)lo[o0] + bounded_u64(&job->key, (uint64_t)i, range));
    });
}

static void categorical_run(const weft__rjob_t *job, size_t begin, size_t end)
{
    const double *p = job->par[0];
    int64_t *out = job->out;
    RANDOM_LOOP(job, begin, end, {
        uint32_t b[4];
        weft__rblock(&job->key, (uint64_t)i, 0, b);
        out[i] = categorical_pick(p + o0, job->ncat, job->cat_stride, u01_f64(b));
    });
}

weft_status_t weft__random_fill(void *arg, size_t begin, size_t end)
{
    const weft__rjob_t *job = arg;
    switch (job->kind) {
#define FLOAT_CASE(T, sfx, DT)                         \
    case DT:                                           \
        if (job->kind == WEFT__RANDOM_UNIFORM)         \
            uniform_##sfx(job, begin, end);            \
        else                                           \
            normal_##sfx(job, begin, end);             \
        break;
    case WEFT__RANDOM_UNIFORM:
    case WEFT__RANDOM_NORMAL:
        switch (job->dtype) {
            RANDOM_FLOAT_TYPES(FLOAT_CASE)
        default:
            break; /* make_node admits only the listed dtypes */
        }
        break;
#undef FLOAT_CASE
    case WEFT__RANDOM_BERNOULLI: bernoulli_run(job, begin, end); break;
    case WEFT__RANDOM_INTEGERS: integers_run(job, begin, end); break;
    case WEFT__RANDOM_CATEGORICAL: categorical_run(job, begin, end); break;
    default: break; /* permutation: weft__random_permutation */
    }
    return WEFT_OK;
}

/* ---- parameter checks (NumPy's rules, docs/random.md §5) -------------------------- */

static weft_status_t check_bernoulli(weft_kernel_ctx_t *ctx, const char *name,
                                     const weft__rjob_t *job, int64_t n)
{
    const double *p = job->par[0];
    RANDOM_LOOP(job, 0, n, {
        if (!(p[o0] >= 0 && p[o0] <= 1))
            return weft_kernel_error(ctx, WEFT_EINVAL, "%s: p < 0, p > 1 or p is NaN (p = %g "
                                     "at sample element %lld)", name, p[o0], (long long)i);
    });
    return WEFT_OK;
}

static weft_status_t check_integers(weft_kernel_ctx_t *ctx, const char *name,
                                    const weft__rjob_t *job, int64_t n)
{
    const int64_t *lo = job->par[0], *hi = job->par[1];
    RANDOM_LOOP(job, 0, n, {
        if (lo[o0] >= hi[o1])
            return weft_kernel_error(ctx, WEFT_EINVAL, "%s: low >= high (low = %lld, high = "
                                     "%lld at sample element %lld)", name, (long long)lo[o0],
                                     (long long)hi[o1], (long long)i);
    });
    return WEFT_OK;
}

/* Every row of p (rows: p's contiguous data, ncat entries each). */
static weft_status_t check_categorical(weft_kernel_ctx_t *ctx, const char *name,
                                       const weft__rjob_t *job, int64_t rows)
{
    const double *p = job->par[0];
    if (job->ncat == 0)
        return weft_kernel_error(ctx, WEFT_EINVAL, "%s: p has no categories (last axis of "
                                 "length 0)", name);
    for (int64_t r = 0; r < rows; r++) {
        double sum = 0;
        for (int64_t j = 0; j < job->ncat; j++) {
            double v = p[r * job->ncat + j];
            if (!(v >= 0))
                return weft_kernel_error(ctx, WEFT_EINVAL, "%s: probabilities are not "
                                         "non-negative (p = %g in row %lld)", name, v,
                                         (long long)r);
            sum += v;
        }
        if (!(fabs(sum - 1.0) <= 1.4901161193847656e-08)) /* sqrt(float64 eps) */
            return weft_kernel_error(ctx, WEFT_EINVAL, "%s: probabilities do not sum to 1 "
                                     "(row %lld sums to %.17g)", name, (long long)r, sum);
    }
    return WEFT_OK;
}

weft_status_t weft__random_check_params(weft_kernel_ctx_t *ctx, const char *name,
                                        const weft__rjob_t *job, int64_t n, int64_t rows)
{
    if (n == 0 && job->kind != WEFT__RANDOM_CATEGORICAL) return WEFT_OK; /* no element */
    switch (job->kind) {
    case WEFT__RANDOM_BERNOULLI: return check_bernoulli(ctx, name, job, n);
    case WEFT__RANDOM_INTEGERS: return check_integers(ctx, name, job, n);
    case WEFT__RANDOM_CATEGORICAL: return check_categorical(ctx, name, job, rows);
    default: return WEFT_OK;
    }
}

/* ---- permutation ------------------------------------------------------------------ */

static int perm_cmp(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b; /* {draw, index} pairs */
    if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

void weft__random_permutation(const weft__rkey_t *key, int64_t n, int64_t *out, int64_t *keys)
{
    uint64_t *pairs = (uint64_t *)keys;
    for (int64_t i = 0; i < n; i++) {
        uint32_t b[4];
        weft__rblock(key, (uint64_t)i, 0, b);
        pairs[2 * i] = weft__r64(b[0], b[1]);
        pairs[2 * i + 1] = (uint64_t)i;
    }
    /* a total order (ties broken by index): qsort's instability cannot show */
    qsort(pairs, (size_t)n, 2 * sizeof(uint64_t), perm_cmp);
    for (int64_t i = 0; i < n; i++) out[i] = (int64_t)pairs[2 * i + 1];
}

void weft_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    if (!ctr || !key || !out) return;
    for (int w = 0; w < 4; w++) out[w] = ctr[w];
    weft__philox(out, key[0], key[1]);
}
