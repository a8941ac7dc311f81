/* Kernels of the lane reductions (lred_int.h): the fixed-block engine, the
 * per-kind piece folds and merges. Built with -O3 and, for the LogSumExp
 * piece loop, per-ISA clones (the file comment of elemwise_kernels.c).
 *
 * A piece's elements are converted into a buffer of the piece's domain:
 * double for float inputs and the float kinds, int64 for the exact integer
 * kinds (argmax/argmin, nansum, nanmax/nanmin of an integer x; any/all
 * read doubles: an int64 converts to 0.0 only when it is 0), so
 * each fold is written once per domain; a unit-stride lane already in its
 * domain's type is read in place. */
#include <math.h>
#include <string.h>

#include "lred_int.h"
#include "vexp_int.h"

#if defined(__x86_64__) && defined(__GNUC__) && defined(__GLIBC__) && defined(__has_attribute)
#if __has_attribute(target_clones) && !defined(WEFT_SANITIZED)
#define LRED_CLONES __attribute__((target_clones("default", "avx2", "arch=x86-64-v4")))
#endif
#endif
#ifndef LRED_CLONES
#define LRED_CLONES
#endif

/* A partial result. n: elements folded. m, s: float value / sum (argmax:
 * the best value; var: mean, M2; logsumexp: max, sum of exp(x - max)); i:
 * index (argmax) or non-NaN count (nanmean, nanmax); k: integer value or
 * flag. */
typedef struct lstate {
    double m, s;
    int64_t n, i, k;
} lstate_t;

static bool is_float(weft_dtype_t dt)
{
    return dt == WEFT_FLOAT32 || dt == WEFT_FLOAT64;
}

weft_dtype_t weft__lred_out_dtype(weft_lreduce_kind_t kind, weft_dtype_t dx)
{
    switch (kind) {
    case WEFT_LREDUCE_ARGMAX:
    case WEFT_LREDUCE_ARGMIN: return WEFT_INT64;
    case WEFT_LREDUCE_ANY:
    case WEFT_LREDUCE_ALL: return WEFT_BOOL;
    case WEFT_LREDUCE_NANSUM: return is_float(dx) ? dx : WEFT_INT64;
    case WEFT_LREDUCE_NANMAX:
    case WEFT_LREDUCE_NANMIN: return dx;
    default: return dx == WEFT_FLOAT32 ? WEFT_FLOAT32 : WEFT_FLOAT64;
    }
}

/* Whether the job folds int64 values (exact) rather than doubles. */
static bool int_domain(const weft__lane_job_t *job)
{
    weft_lreduce_kind_t k = job->kind;
    return !is_float(job->dx) &&
           (k == WEFT_LREDUCE_ARGMAX || k == WEFT_LREDUCE_ARGMIN || k == WEFT_LREDUCE_NANSUM ||
            k == WEFT_LREDUCE_NANMAX || k == WEFT_LREDUCE_NANMIN);
}

void weft__lane_job_init(weft__lane_job_t *job, weft_lreduce_kind_t kind, double ddof,
                         const weft_tensor_t *x, uint32_t mask, weft_tensor_t *out)
{
    memset(job, 0, sizeof *job);
    job->kind = kind;
    job->ddof = ddof;
    job->dx = weft_tensor_dtype(x);
    job->dout = weft_tensor_dtype(out);
    job->x = weft_tensor_data(x);
    job->out = weft_tensor_data(out);
    job->n_out = 1;
    job->lane = 1;
    for (int d = 0; d < weft_tensor_ndim(x); d++) {
        int64_t len = weft_tensor_dim(x, d), st = weft_tensor_stride(x, d);
        bool red = (mask >> d) & 1u;
        if (red) job->lane *= len;
        else job->n_out *= len;
        if (len == 1) continue;
        if (red) {
            job->rshape[job->nr] = len;
            job->rsx[job->nr++] = st;
        } else {
            job->kshape[job->nk] = len;
            job->ksx[job->nk++] = st;
        }
    }
    int64_t want = 1;
    job->contig = true;
    for (int d = job->nr - 1; d >= 0; d--) {
        job->contig = job->contig && job->rsx[d] == want;
        want *= job->rshape[d];
    }
}

/* x offset (elements) of the group j's first element. */
static int64_t group_base(const weft__lane_job_t *job, int64_t j)
{
    int64_t off = 0;
    for (int d = job->nk - 1; d >= 0; d--) {
        off += (j % job->kshape[d]) * job->ksx[d];
        j /= job->kshape[d];
    }
    return off;
}

/* Offsets of lane elements p0 .. p0+n-1 of the group at base. */
static void lane_offsets(const weft__lane_job_t *job, int64_t base, int64_t p0, int64_t n,
                         int64_t *offs)
{
    int64_t idx[WEFT_MAX_NDIM], off = base, p = p0;
    for (int d = job->nr - 1; d >= 0; d--) {
        idx[d] = p % job->rshape[d];
        p /= job->rshape[d];
        off += idx[d] * job->rsx[d];
    }
    for (int64_t i = 0; i < n; i++) {
        offs[i] = off;
        for (int d = job->nr - 1; d >= 0; d--) {
            off += job->rsx[d];
            if (++idx[d] < job->rshape[d]) break;
            off -= job->rsx[d] * job->rshape[d];
            idx[d] = 0;
        }
    }
}

/* Converters: n elements from x at base + i (offs NULL) or at offs[i]. */
typedef void (*conv_d_fn)(const char *x, int64_t base, const int64_t *offs, int64_t n,
                          double *buf);
typedef void (*conv_i_fn)(const char *x, int64_t base, const int64_t *offs, int64_t n,
                          int64_t *buf);
#define DEF_CONV(T, sfx, DT)                                                                \
    static void conv_d_##sfx(const char *xp, int64_t base, const int64_t *offs, int64_t n, \
                             double *buf)                                                   \
    {                                                                                       \
        const T *x = (const T *)xp;                                                         \
        if (!offs) {                                                                        \
            for (int64_t i = 0; i < n; i++) buf[i] = (double)x[base + i];                   \
        } else {                                                                            \
            for (int64_t i = 0; i < n; i++) buf[i] = (double)x[offs[i]];                    \
        }                                                                                   \
    }                                                                                       \
    static void conv_i_##sfx(const char *xp, int64_t base, const int64_t *offs, int64_t n, \
                             int64_t *buf)                                                  \
    {                                                                                       \
        const T *x = (const T *)xp;                                                         \
        if (!offs) {                                                                        \
            for (int64_t i = 0; i < n; i++) buf[i] = (int64_t)x[base + i];                  \
        } else {                                                                            \
            for (int64_t i = 0; i < n; i++) buf[i] = (int64_t)x[offs[i]];                   \
        }                                                                                   \
    }
WEFT__LRED_DTYPES(DEF_CONV)

static conv_d_fn conv_d(weft_dtype_t dt)
{
#define CONV_D_CASE(T, sfx, DT) \
    case DT: return conv_d_##sfx;
    switch (dt) {
        WEFT__LRED_DTYPES(CONV_D_CASE)
    default: return conv_d_f64;
    }
}

static conv_i_fn conv_i(weft_dtype_t dt)
{
#define CONV_I_CASE(T, sfx, DT) \
    case DT: return conv_i_##sfx;
    switch (dt) {
        WEFT__LRED_DTYPES(CONV_I_CASE)
    default: return conv_i_i64;
    }
}

/* ---- LogSumExp ------------------------------------------------------------ */

/* sum of exp(x[i] - m) with m finite: 8 independent sums (vectorized). */
LRED_CLONES static double lse_sum(const double *x, int64_t n, double m)
{
    double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        for (int k = 0; k < 8; k++) acc[k] += weft__vexp(x[i + k] - m);
    }
    for (; i < n; i++) acc[0] += weft__vexp(x[i] - m);
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

/* The largest non-NaN element (-inf when none): 8 lanes, vectorized. */
LRED_CLONES static double lse_max(const double *x, int64_t n)
{
    double mm[8] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY,
                    -INFINITY, -INFINITY, -INFINITY, -INFINITY};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        for (int k = 0; k < 8; k++) mm[k] = x[i + k] > mm[k] ? x[i + k] : mm[k];
    }
    for (; i < n; i++) mm[0] = x[i] > mm[0] ? x[i] : mm[0];
    double m = mm[0];
    for (int k = 1; k < 8; k++) m = mm[k] > m ? mm[k] : m;
    return m;
}

static void lse_piece(const double *x, int64_t n, lstate_t *st)
{
    double m = lse_max(x, n);
    st->m = m;
    if (isfinite(m)) {
        st->s = lse_sum(x, n, m); /* a NaN term makes the sum NaN */
        return;
    }
    /* every term -inf or NaN (m -inf), or a +inf term: the sum is 0 or 1
     * unless a NaN is present */
    st->s = m < 0 ? 0.0 : 1.0;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(x[i])) st->s = NAN;
    }
}

static void lse_merge(lstate_t *a, const lstate_t *b)
{
    double m = a->m > b->m ? a->m : b->m;
    if (isnan(a->s) || isnan(b->s)) a->s = NAN;
    else if (isinf(m)) a->s = m < 0 ? 0.0 : 1.0;
    else a->s = a->s * exp(a->m - m) + b->s * exp(b->m - m);
    a->m = m;
}

/* ---- folds of a piece ----------------------------------------------------- */

static void piece_d(weft_lreduce_kind_t kind, const double *x, int64_t n, int64_t pos,
                    lstate_t *st)
{
    bool hi = kind == WEFT_LREDUCE_ARGMAX || kind == WEFT_LREDUCE_NANMAX;
    switch (kind) {
    case WEFT_LREDUCE_ARGMAX:
    case WEFT_LREDUCE_ARGMIN: {
        int64_t b = 0;
        for (int64_t i = 1; i < n && !isnan(x[b]); i++) {
            if (isnan(x[i]) || (hi ? x[i] > x[b] : x[i] < x[b])) b = i;
        }
        st->m = x[b];
        st->i = pos + b;
        break;
    }
    case WEFT_LREDUCE_ANY:
    case WEFT_LREDUCE_ALL: {
        bool any = kind == WEFT_LREDUCE_ANY;
        st->k = any ? 0 : 1;
        for (int64_t i = 0; i < n; i++) {
            if ((x[i] != 0) == any) {
                st->k = any ? 1 : 0;
                break;
            }
        }
        break;
    }
    case WEFT_LREDUCE_VAR:
    case WEFT_LREDUCE_STD: {
        double sum = 0, m2 = 0;
        for (int64_t i = 0; i < n; i++) sum += x[i];
        double mean = sum / (double)n;
        for (int64_t i = 0; i < n; i++) m2 += (x[i] - mean) * (x[i] - mean);
        st->m = mean;
        st->s = m2;
        break;
    }
    case WEFT_LREDUCE_LOGSUMEXP: lse_piece(x, n, st); break;
    case WEFT_LREDUCE_NANSUM:
    case WEFT_LREDUCE_NANMEAN:
        st->s = 0;
        st->i = 0;
        for (int64_t i = 0; i < n; i++) {
            bool ok = !isnan(x[i]);
            st->s += ok ? x[i] : 0.0;
            st->i += ok;
        }
        break;
    default: /* NANMAX, NANMIN */
        st->m = hi ? -INFINITY : INFINITY;
        st->i = 0;
        for (int64_t i = 0; i < n; i++) {
            if (isnan(x[i])) continue;
            st->i++;
            st->m = (hi ? x[i] > st->m : x[i] < st->m) ? x[i] : st->m;
        }
        break;
    }
    st->n = n;
}

static void piece_i(weft_lreduce_kind_t kind, const int64_t *x, int64_t n, int64_t pos,
                    lstate_t *st)
{
    bool hi = kind == WEFT_LREDUCE_ARGMAX || kind == WEFT_LREDUCE_NANMAX;
    switch (kind) {
    case WEFT_LREDUCE_ARGMAX:
    case WEFT_LREDUCE_ARGMIN: {
        int64_t b = 0;
        for (int64_t i = 1; i < n; i++) {
            if (hi ? x[i] > x[b] : x[i] < x[b]) b = i;
        }
        st->k = x[b];
        st->i = pos + b;
        break;
    }
    case WEFT_LREDUCE_NANSUM: {
        uint64_t s = 0; /* wraps, as NumPy's int64 sum */
        for (int64_t i = 0; i < n; i++) s += (uint64_t)x[i];
        st->k = (int64_t)s;
        break;
    }
    default: { /* NANMAX, NANMIN */
        int64_t m = x[0];
        for (int64_t i = 1; i < n; i++) m = (hi ? x[i] > m : x[i] < m) ? x[i] : m;
        st->k = m;
        break;
    }
    }
    st->n = n;
}

/* a = a then b (b later in the lane); both non-empty. */
static void merge(weft_lreduce_kind_t kind, bool ints, lstate_t *a, const lstate_t *b)
{
    bool hi = kind == WEFT_LREDUCE_ARGMAX || kind == WEFT_LREDUCE_NANMAX;
    switch (kind) {
    case WEFT_LREDUCE_ARGMAX:
    case WEFT_LREDUCE_ARGMIN: {
        bool take = ints ? (hi ? b->k > a->k : b->k < a->k)
                         : !isnan(a->m) && (isnan(b->m) || (hi ? b->m > a->m : b->m < a->m));
        if (take) {
            a->m = b->m;
            a->k = b->k;
            a->i = b->i;
        }
        break;
    }
    case WEFT_LREDUCE_ANY: a->k |= b->k; break;
    case WEFT_LREDUCE_ALL: a->k &= b->k; break;
    case WEFT_LREDUCE_VAR:
    case WEFT_LREDUCE_STD: { /* Chan et al.'s pairwise update */
        double na = (double)a->n, nb = (double)b->n, nt = na + nb, d = b->m - a->m;
        a->m += d * (nb / nt);
        a->s += b->s + d * d * (na * nb / nt);
        break;
    }
    case WEFT_LREDUCE_LOGSUMEXP: lse_merge(a, b); break;
    case WEFT_LREDUCE_NANSUM:
    case WEFT_LREDUCE_NANMEAN:
        a->s += b->s;
        a->i += b->i;
        a->k = (int64_t)((uint64_t)a->k + (uint64_t)b->k);
        break;
    default: /* NANMAX, NANMIN */
        if (ints) {
            a->k = (hi ? b->k > a->k : b->k < a->k) ? b->k : a->k;
        } else if (b->i > 0) {
            a->m = a->i == 0 || (hi ? b->m > a->m : b->m < a->m) ? b->m : a->m;
            a->i += b->i;
        }
        break;
    }
    a->n += b->n;
}

/* Folds elements [lo, hi) of group j's lane into *st (n == 0 when empty). */
static void block_state(const weft__lane_job_t *job, int64_t j, int64_t lo, int64_t hi,
                        lstate_t *st)
{
    bool ints = int_domain(job);
    int64_t base = group_base(job, j), offs[WEFT__LRED_PIECE];
    union {
        double d[WEFT__LRED_PIECE];
        int64_t i[WEFT__LRED_PIECE];
    } buf;
    bool in_place = job->contig && job->dx == (ints ? WEFT_INT64 : WEFT_FLOAT64);
    memset(st, 0, sizeof *st);
    for (int64_t p = lo; p < hi; p += WEFT__LRED_PIECE) {
        int64_t n = hi - p < WEFT__LRED_PIECE ? hi - p : WEFT__LRED_PIECE;
        const int64_t *op = NULL;
        if (!job->contig) {
            lane_offsets(job, base, p, n, offs);
            op = offs;
        }
        lstate_t ps;
        memset(&ps, 0, sizeof ps);
        if (ints) {
            const int64_t *v = in_place ? (const int64_t *)job->x + base + p : buf.i;
            if (!in_place) conv_i(job->dx)(job->x, base + p, op, n, buf.i);
            piece_i(job->kind, v, n, p, &ps);
        } else {
            const double *v = in_place ? (const double *)job->x + base + p : buf.d;
            if (!in_place) conv_d(job->dx)(job->x, base + p, op, n, buf.d);
            piece_d(job->kind, v, n, p, &ps);
        }
        if (st->n == 0) *st = ps;
        else merge(job->kind, ints, st, &ps);
    }
}

static void store_float(weft_dtype_t dt, void *out, int64_t j, double v)
{
    if (dt == WEFT_FLOAT32) ((float *)out)[j] = (float)v;
    else ((double *)out)[j] = v;
}

static void store_int(weft_dtype_t dt, void *out, int64_t j, int64_t v)
{
#define STORE_INT_CASE(T, sfx, DT) \
    case DT: ((T *)out)[j] = (T)v; break;
    switch (dt) {
        WEFT__LRED_DTYPES(STORE_INT_CASE)
    default: break;
    }
}

static double lse_final(const lstate_t *st)
{
    if (st->n == 0 || isnan(st->s) || isinf(st->m)) return isnan(st->s) ? NAN : st->m;
    return st->m + log(st->s);
}

static void finalize(const weft__lane_job_t *job, int64_t j, const lstate_t *st)
{
    weft_dtype_t dt = job->dout;
    double rc = (double)st->n - job->ddof;
    switch (job->kind) {
    case WEFT_LREDUCE_ARGMAX:
    case WEFT_LREDUCE_ARGMIN: store_int(dt, job->out, j, st->i); break;
    case WEFT_LREDUCE_ANY: store_int(dt, job->out, j, st->n ? st->k : 0); break;
    case WEFT_LREDUCE_ALL: store_int(dt, job->out, j, st->n ? st->k : 1); break;
    case WEFT_LREDUCE_VAR:
    case WEFT_LREDUCE_STD: {
        double v = (st->n ? st->s : NAN) / (rc > 0 ? rc : 0.0);
        store_float(dt, job->out, j, job->kind == WEFT_LREDUCE_STD ? sqrt(v) : v);
        break;
    }
    case WEFT_LREDUCE_LOGSUMEXP:
        store_float(dt, job->out, j, st->n ? lse_final(st) : -INFINITY);
        break;
    case WEFT_LREDUCE_NANSUM:
        if (int_domain(job)) store_int(dt, job->out, j, st->k);
        else store_float(dt, job->out, j, st->s);
        break;
    case WEFT_LREDUCE_NANMEAN:
        store_float(dt, job->out, j, st->i ? st->s / (double)st->i : NAN);
        break;
    default: /* NANMAX, NANMIN */
        if (int_domain(job)) store_int(dt, job->out, j, st->k);
        else store_float(dt, job->out, j, st->i ? st->m : NAN);
        break;
    }
}

typedef struct lrun {
    const weft__lane_job_t *job;
    lstate_t *states; /* NULL: one block per lane, finalized in place */
    int64_t nblk;
} lrun_t;

static weft_status_t lrun_range(void *arg, size_t begin, size_t end)
{
    const lrun_t *r = arg;
    for (size_t t = begin; t < end; t++) {
        int64_t j = (int64_t)t / r->nblk, b = (int64_t)t % r->nblk;
        int64_t lo = b * WEFT__LRED_BLOCK, hi = lo + WEFT__LRED_BLOCK;
        lstate_t st;
        block_state(r->job, j, lo, hi < r->job->lane ? hi : r->job->lane, &st);
        if (r->states) r->states[t] = st;
        else finalize(r->job, j, &st);
    }
    return WEFT_OK;
}

weft_status_t weft__lane_reduce(weft_kernel_ctx_t *ctx, const weft__lane_job_t *job)
{
    int64_t nblk = (job->lane + WEFT__LRED_BLOCK - 1) / WEFT__LRED_BLOCK;
    lrun_t r = {job, NULL, nblk > 0 ? nblk : 1};
    if (job->n_out == 0) return WEFT_OK;
    if (r.nblk == 1) { /* whole lanes: about one block of elements per range */
        int64_t per = job->lane > 0 ? job->lane : 1;
        size_t grain = (size_t)(WEFT__LRED_BLOCK / per > 0 ? WEFT__LRED_BLOCK / per : 1);
        return weft_kernel_parallel_for(ctx, (size_t)job->n_out, grain, lrun_range, &r);
    }
    const int64_t len[1] = {job->n_out * r.nblk * (int64_t)(sizeof(lstate_t) / 8)};
    weft_tensor_t *scratch = NULL;
    weft_status_t st = weft_kernel_scratch(ctx, WEFT_INT64, 1, len, &scratch);
    if (st != WEFT_OK) return st;
    r.states = weft_tensor_data(scratch);
    st = weft_kernel_parallel_for(ctx, (size_t)(job->n_out * r.nblk), 1, lrun_range, &r);
    for (int64_t j = 0; st == WEFT_OK && j < job->n_out; j++) {
        lstate_t acc = r.states[j * r.nblk];
        for (int64_t b = 1; b < r.nblk; b++) {
            merge(job->kind, int_domain(job), &acc, &r.states[j * r.nblk + b]);
        }
        finalize(job, j, &acc);
    }
    weft_kernel_scratch_done(ctx, scratch);
    return st;
}
