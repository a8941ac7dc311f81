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

/* ---- broadcast batches of two operands ------------------------------------------ */

/* The static length of broadcast batch axis d (of nbo) of a (nba batch axes)
 * and b (nbb); WEFT_ETYPE when two known lengths do not broadcast. */
static weft_status_t bcast_dim(weft_graph_t *g, const char *opname, const weft_type_t *ta,
                               int nba, const weft_type_t *tb, int nbb, int nbo, int d,
                               int64_t *out)
{
    int64_t la = d >= nbo - nba ? weft_type_dim(ta, d - (nbo - nba)) : 1;
    int64_t lb = d >= nbo - nbb ? weft_type_dim(tb, d - (nbo - nbb)) : 1;
    if (la == 1 || la == lb) {
        *out = lb;
    } else if (lb == 1) {
        *out = la;
    } else if (la != WEFT_DIM_UNKNOWN && lb != WEFT_DIM_UNKNOWN) {
        return weft_graph_set_error(g, WEFT_ETYPE, "%s: batch axis %d: lengths %lld (input 0) "
                                    "and %lld (input 1) do not broadcast", opname, d,
                                    (long long)la, (long long)lb);
    } else {
        *out = la == WEFT_DIM_UNKNOWN ? lb : la;
    }
    return WEFT_OK;
}

weft_status_t weft__bcast_solve_type(weft_graph_t *g, const char *opname, weft_var_t *const *in,
                                     int core_b, const weft_type_t **out)
{
    const weft_type_t *ta = weft_var_type(in[0]), *tb = weft_var_type(in[1]);
    int na = weft_type_ndim(ta), nb = weft_type_ndim(tb);
    int nba = na - 2, nbb = nb - core_b, nbo = nba > nbb ? nba : nbb;
    weft_status_t st = weft__linalg_match(g, opname, in, 0, na - 1, 1, nb - core_b);
    int64_t shape[WEFT_MAX_NDIM];
    for (int d = 0; d < nbo && st == WEFT_OK; d++) {
        st = bcast_dim(g, opname, ta, nba, tb, nbb, nbo, d, &shape[d]);
    }
    if (st != WEFT_OK) {
        return st;
    }
    int nd = nbo;
    shape[nd++] = weft_type_dim(ta, na - 1);
    if (core_b == 2) {
        shape[nd++] = weft_type_dim(tb, nb - 1);
    }
    return weft_type_tensor(g, weft_type_dtype(ta), nd, shape, out);
}

bool weft__bcast_init(const weft_tensor_t *a, const weft_tensor_t *b, int core_b,
                      weft__bcast_t *t)
{
    int nba = weft_tensor_ndim(a) - 2, nbb = weft_tensor_ndim(b) - core_b;
    t->nbo = nba > nbb ? nba : nbb;
    t->count = 1;
    for (int d = 0; d < t->nbo; d++) {
        int da = d - (t->nbo - nba), db = d - (t->nbo - nbb);
        int64_t la = da >= 0 ? weft_tensor_dim(a, da) : 1;
        int64_t lb = db >= 0 ? weft_tensor_dim(b, db) : 1;
        if (la != lb && la != 1 && lb != 1) {
            return false;
        }
        t->shape[d] = la == 1 ? lb : la;
        t->sa[d] = la == 1 ? 0 : weft_tensor_stride(a, da);
        t->sb[d] = lb == 1 ? 0 : weft_tensor_stride(b, db);
        t->count *= t->shape[d];
    }
    return true;
}

void weft__bcast_offsets(const weft__bcast_t *t, int64_t i, int64_t *oa, int64_t *ob)
{
    *oa = *ob = 0;
    for (int d = t->nbo - 1; d >= 0; d--) {
        int64_t k = i % t->shape[d];
        *oa += k * t->sa[d];
        *ob += k * t->sb[d];
        i /= t->shape[d];
    }
}

int weft__bcast_out_shape(const weft__bcast_t *t, int core_b, int64_t n, int64_t k,
                          int64_t *shape)
{
    memcpy(shape, t->shape, (size_t)t->nbo * sizeof *shape);
    int nd = t->nbo;
    shape[nd++] = n;
    if (core_b == 2) {
        shape[nd++] = k;
    }
    return nd;
}
