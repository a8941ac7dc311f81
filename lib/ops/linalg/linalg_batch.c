/* Batch helpers of the LAPACK-backed ops (lapack_int.h): a stacked operand
 * (..., rows, cols) is solved one matrix at a time, each copied from its own
 * strides into a contiguous buffer in the order LAPACK wants, and the result
 * written back. The copies are O(n^2) per matrix beside LAPACK's O(n^3). */
#include <string.h>

#include "lapack_int.h"

int64_t weft__batch_count(const weft_tensor_t *t, int core)
{
    int64_t count = 1;
    for (int d = 0; d < weft_tensor_ndim(t) - core; d++) {
        count *= weft_tensor_dim(t, d);
    }
    return count;
}

int64_t weft__batch_offset(const weft_tensor_t *t, int core, int64_t index)
{
    int64_t off = 0;
    for (int d = weft_tensor_ndim(t) - core - 1; d >= 0; d--) {
        int64_t len = weft_tensor_dim(t, d);
        off += (index % len) * weft_tensor_stride(t, d);
        index /= len;
    }
    return off;
}

#define BATCH_LOAD_(ctype, dtype)                                                          \
    static void load_##ctype(const ctype *src, int64_t rows, int64_t cols, int64_t s0,     \
                             int64_t s1, bool colmajor, ctype *dst)                        \
    {                                                                                      \
        for (int64_t i = 0; i < rows; i++) {                                               \
            for (int64_t j = 0; j < cols; j++) {                                           \
                dst[colmajor ? j * rows + i : i * cols + j] = src[i * s0 + j * s1];        \
            }                                                                              \
        }                                                                                  \
    }
WEFT__LAPACK_TYPES(BATCH_LOAD_)
#undef BATCH_LOAD_

void weft__batch_load(const weft_tensor_t *t, int core, int64_t off, int64_t rows,
                      int64_t cols, bool colmajor, void *dst)
{
    int nd = weft_tensor_ndim(t);
    int64_t s0 = weft_tensor_stride(t, nd - core);
    int64_t s1 = core == 2 ? weft_tensor_stride(t, nd - 1) : 0;
    weft_dtype_t dt = weft_tensor_dtype(t);
    size_t es = weft_dtype_size(dt);
    const char *src = (const char *)weft_tensor_data(t) + off * (int64_t)es;
    if (rows * cols == 0) {
        return;
    }
    /* the common case, a contiguous row-major matrix (or a vector) */
    if ((s1 == 1 || cols == 1) && (s0 == cols || rows == 1) &&
        (!colmajor || cols == 1 || rows == 1)) {
        memcpy(dst, src, (size_t)(rows * cols) * es);
        return;
    }
#define BATCH_LOAD_CALL_(ctype, dtype) \
    if (dt == dtype) load_##ctype((const ctype *)src, rows, cols, s0, s1, colmajor, dst);
    WEFT__LAPACK_TYPES(BATCH_LOAD_CALL_)
#undef BATCH_LOAD_CALL_
}

weft_status_t weft__batch_check_square(weft_graph_t *g, const char *opname, weft_var_t *a,
                                       int index)
{
    const weft_type_t *t = weft_var_type(a);
    weft_dtype_t d = weft_type_dtype(t);
    char tb[96];
    weft_type_print(t, tb, sizeof tb);
    if (weft_type_kind(t) != WEFT_TYPE_TENSOR || (d != WEFT_FLOAT32 && d != WEFT_FLOAT64) ||
        weft_type_ndim(t) < 2) {
        return weft_graph_set_error(g, WEFT_ETYPE, "%s: input %d has type %s (need a "
                                    "float32/float64 tensor of 2 or more dims)", opname, index,
                                    tb);
    }
    int nd = weft_type_ndim(t);
    int64_t r = weft_type_dim(t, nd - 2), c = weft_type_dim(t, nd - 1);
    if (r != WEFT_DIM_UNKNOWN && c != WEFT_DIM_UNKNOWN && r != c) {
        return weft_graph_set_error(g, WEFT_ETYPE, "%s: input %d has type %s: its last two "
                                    "dims are not square", opname, index, tb);
    }
    return WEFT_OK;
}

int weft__batch_type_dims(const weft_type_t *t, int drop, int64_t *shape)
{
    int nd = weft_type_ndim(t) - drop;
    for (int d = 0; d < nd; d++) {
        shape[d] = weft_type_dim(t, d);
    }
    return nd;
}
