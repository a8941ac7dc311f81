/* Kernels of Softmax and LogSoftmax (nn_int.h). Built with -O3,
 * -ffp-contract=off and -fno-trapping-math (as the lane reductions: GCC
 * if-converts the float compares of the vector exp only without trapping
 * math, which changes no value) and per-ISA clones that give the same bits
 * (no contraction).
 *
 * Per lane: m = the largest non-NaN element (-inf when none); s = the sum of
 * exp(x - m) (weft__vexp, the reductions' branch-free exp, computed in
 * double, float32 too); softmax = exp(x - m) / s, log_softmax = (x - m) -
 * log(s). NumPy's formula, np.exp(x - x.max(axis, keepdims=True)) / sum, term
 * for term: a NaN anywhere in the lane makes the sum and so the whole lane
 * NaN; a lane of -inf only (x - m = -inf - -inf) and a lane holding +inf
 * (inf - inf) are NaN too. A row's sum runs in 8 interleaved chains added
 * in a fixed tree (so it vectorizes); a column block's in lane order. */
#include <math.h>
#include <string.h>

#include "nn_int.h"
#include "reduce/vexp_int.h"

#if defined(__x86_64__) && defined(__GNUC__) && defined(__GLIBC__) && defined(__has_attribute)
#if __has_attribute(target_clones) && !defined(WEFT_SANITIZED)
#define SMAX_CLONES __attribute__((target_clones("default", "avx2", "arch=x86-64-v4")))
#endif
#endif
#ifndef SMAX_CLONES
#define SMAX_CLONES
#endif

/* Lane elements per parallel range: enough to outweigh waking a worker. */
#define SMAX_RANGE_ELEMS 65536

typedef struct smax_job {
    bool is_log;
    weft_dtype_t dt;
    const char *x;
    char *y;
    int64_t outer, len, inner, n_blocks; /* n_blocks: column blocks per outer */
} smax_job_t;

/* The float dtypes the kernels take (C type, suffix); a new float dtype
 * (float16) is one more line, computed in double as float32 is. */
#define SMAX_DTYPES(X) \
    X(float, f32)      \
    X(double, f64)

/* Row kernels: one contiguous lane of n elements. Only double stores its
 * exp terms (a float would round them before the division). */
#define DEF_ROW(T, sfx)                                                                   \
    static SMAX_CLONES void row_##sfx(const T *x, T *y, int64_t n, bool is_log)           \
    {                                                                                     \
        const bool keep_e = sizeof(T) == sizeof(double) && !is_log;                       \
        double mx[8], acc[8];                                                             \
        for (int j = 0; j < 8; j++) mx[j] = -INFINITY, acc[j] = 0.0;                      \
        int64_t i = 0;                                                                    \
        for (; i + 8 <= n; i += 8)                                                        \
            for (int j = 0; j < 8; j++) mx[j] = (double)x[i + j] > mx[j] ? x[i + j] : mx[j]; \
        for (; i < n; i++) mx[0] = (double)x[i] > mx[0] ? x[i] : mx[0];                   \
        double m = mx[0];                                                                 \
        for (int j = 1; j < 8; j++) m = mx[j] > m ? mx[j] : m;                            \
        for (i = 0; i + 8 <= n; i += 8)                                                   \
            for (int j = 0; j < 8; j++) {                                                 \
                double e = weft__vexp((double)x[i + j] - m);                              \
                if (keep_e) y[i + j] = (T)e;                                              \
                acc[j] += e;                                                              \
            }                                                                             \
        for (; i < n; i++) {                                                              \
            double e = weft__vexp((double)x[i] - m);                                      \
            if (keep_e) y[i] = (T)e;                                                      \
            acc[i & 7] += e;                                                              \
        }                                                                                 \
        double s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) +                              \
                   ((acc[4] + acc[5]) + (acc[6] + acc[7]));                               \
        if (is_log) {                                                                     \
            double ls = log(s);                                                           \
            for (i = 0; i < n; i++) y[i] = (T)(((double)x[i] - m) - ls);                  \
        } else if (keep_e) {                                                              \
            for (i = 0; i < n; i++) y[i] = (T)((double)y[i] / s);                         \
        } else {                                                                          \
            for (i = 0; i < n; i++) y[i] = (T)(weft__vexp((double)x[i] - m) / s);         \
        }                                                                                 \
    }
SMAX_DTYPES(DEF_ROW)
#undef DEF_ROW

/* Column kernels: w <= WEFT__SMAX_COLS lanes side by side, lane element l of
 * lane j at x[l * inner + j]. */
#define DEF_COLS(T, sfx)                                                                  \
    static SMAX_CLONES void cols_##sfx(const T *x, T *y, int64_t len, int64_t inner,      \
                                       int64_t w, bool is_log)                            \
    {                                                                                     \
        double m[WEFT__SMAX_COLS], s[WEFT__SMAX_COLS];                                    \
        for (int64_t j = 0; j < w; j++) m[j] = -INFINITY, s[j] = 0.0;                     \
        for (int64_t l = 0; l < len; l++)                                                 \
            for (int64_t j = 0; j < w; j++) {                                             \
                double v = (double)x[l * inner + j];                                      \
                m[j] = v > m[j] ? v : m[j];                                               \
            }                                                                             \
        for (int64_t l = 0; l < len; l++)                                                 \
            for (int64_t j = 0; j < w; j++) s[j] += weft__vexp((double)x[l * inner + j] - m[j]); \
        if (is_log)                                                                       \
            for (int64_t j = 0; j < w; j++) s[j] = log(s[j]);                             \
        for (int64_t l = 0; l < len; l++)                                                 \
            for (int64_t j = 0; j < w; j++) {                                             \
                double d = (double)x[l * inner + j] - m[j];                               \
                y[l * inner + j] = (T)(is_log ? d - s[j] : weft__vexp(d) / s[j]);         \
            }                                                                             \
    }
SMAX_DTYPES(DEF_COLS)
#undef DEF_COLS

/* Units [begin, end): rows (inner == 1) or (outer, column block) pairs. */
static weft_status_t smax_range(void *arg, size_t begin, size_t end)
{
    const smax_job_t *J = arg;
    size_t esz = J->dt == WEFT_FLOAT32 ? sizeof(float) : sizeof(double);
    for (size_t u = begin; u < end; u++) {
        int64_t o = (int64_t)u, c0 = 0, w = 1;
        if (J->inner > 1) {
            o = (int64_t)u / J->n_blocks;
            c0 = ((int64_t)u % J->n_blocks) * WEFT__SMAX_COLS;
            w = J->inner - c0 < WEFT__SMAX_COLS ? J->inner - c0 : WEFT__SMAX_COLS;
        }
        size_t off = (size_t)(o * J->len * J->inner + c0) * esz;
        const void *x = J->x + off;
        void *y = J->y + off;
        if (J->dt == WEFT_FLOAT32) {
            if (J->inner == 1) row_f32(x, y, J->len, J->is_log);
            else cols_f32(x, y, J->len, J->inner, w, J->is_log);
        } else {
            if (J->inner == 1) row_f64(x, y, J->len, J->is_log);
            else cols_f64(x, y, J->len, J->inner, w, J->is_log);
        }
    }
    return WEFT_OK;
}

weft_status_t weft__softmax_run(weft_kernel_ctx_t *ctx, bool is_log, int axis,
                                const weft_tensor_t *x, weft_tensor_t *out)
{
    smax_job_t J = {is_log, weft_tensor_dtype(x), weft_tensor_data(x), weft_tensor_data(out),
                    1, weft_tensor_dim(x, axis), 1, 1};
    for (int d = 0; d < weft_tensor_ndim(x); d++) {
        if (d < axis) J.outer *= weft_tensor_dim(x, d);
        if (d > axis) J.inner *= weft_tensor_dim(x, d);
    }
    if (weft_tensor_size(x) == 0) return WEFT_OK;
    J.n_blocks = (J.inner + WEFT__SMAX_COLS - 1) / WEFT__SMAX_COLS;
    int64_t units = J.outer * (J.inner > 1 ? J.n_blocks : 1);
    int64_t unit_elems = J.len * (J.inner > 1 ? (J.inner < WEFT__SMAX_COLS ? J.inner
                                                                            : WEFT__SMAX_COLS)
                                              : 1);
    int64_t grain = SMAX_RANGE_ELEMS / unit_elems; /* from the shape alone */
    return weft_kernel_parallel_for(ctx, (size_t)units, (size_t)(grain < 1 ? 1 : grain),
                                    smax_range, &J);
}
