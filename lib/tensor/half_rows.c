/* float16 rows through a float32 row kernel (docs/dtypes.md §4): NumPy
 * computes float16 on processors without half arithmetic by loading into
 * float32, computing in float32 and rounding the result to half; here a row
 * is cut into chunks whose float16 operands are converted into float32
 * scratch, the float32 kernel runs on the chunk (stride 1) and a float16
 * output is rounded back. Any float32 row kernel thereby serves float16,
 * so a kind that has a float32 kernel gets float16 by one table entry. */
#include "base/dtype_list.h"
#include "tensor/tensor_int.h"

/* 256 elements per chunk: 8 operands of float32 scratch fit 8 KiB of stack
 * and the L1 cache, and the per-chunk call costs little beside 256 elements. */
#define HALF_CHUNK 256

void weft__half_rows(size_t n, char *const *p, const int64_t *s, void *arg, int nop,
                     unsigned half_mask, weft__row_fn f32)
{
    float scratch[WEFT__ITER_MAX_OPS][HALF_CHUNK];
    char *q[WEFT__ITER_MAX_OPS];
    int64_t qs[WEFT__ITER_MAX_OPS];
    for (size_t i0 = 0; i0 < n; i0 += HALF_CHUNK) {
        size_t m = n - i0 < HALF_CHUNK ? n - i0 : HALF_CHUNK;
        for (int k = 0; k < nop; k++) {
            bool half = half_mask >> k & 1u;
            size_t isz = half ? sizeof(weft__f16) : sizeof(weft__bool_el);
            char *src = p[k] + (int64_t)i0 * s[k] * (int64_t)isz;
            q[k] = half ? (char *)scratch[k] : src;
            qs[k] = half ? 1 : s[k];
            if (!half || k == 0) continue; /* the output is written, not read */
            const weft__f16 *h = (const weft__f16 *)src;
            for (size_t i = 0; i < m; i++) scratch[k][i] = (float)h[(int64_t)i * s[k]];
        }
        f32(m, q, qs, arg);
        if (!(half_mask & 1u)) continue;
        weft__f16 *o = (weft__f16 *)(p[0] + (int64_t)i0 * s[0] * (int64_t)sizeof(weft__f16));
        for (size_t i = 0; i < m; i++) o[(int64_t)i * s[0]] = (weft__f16)scratch[0][i];
    }
}
