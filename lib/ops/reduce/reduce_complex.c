/* Sum, Mean and Prod of complex64 / complex128 (docs/dtypes.md, "Complex
 * numbers"), and the refusal of the orderings (Max, Min, Argmax) on them.
 *
 * The fold visits x in C order, each element into its output element, in
 * the parts' precision (complex64 sums in float32, as NumPy's complex64
 * add): one fixed order, so the same bits at any thread count. Prod
 * multiplies as the elementwise Mul does ((ar br - ai bi, ar bi + ai br),
 * NumPy's loop). Not vectorized: a scalar loop. NumPy sums contiguous runs
 * pairwise, so long sums may differ from NumPy's in the last bits. */
#include <string.h>

#include "reduce_ops_int.h"
#include "weft/graph.h"

bool weft__reduce_is_complex(weft_dtype_t dt)
{
    return dt == WEFT_COMPLEX64 || dt == WEFT_COMPLEX128;
}

weft_status_t weft__reduce_check_complex(weft_graph_t *g, const char *opname, bool orders,
                                         const weft_type_t *t)
{
    if (!orders || !weft__reduce_is_complex(weft_type_dtype(t))) return WEFT_OK;
    char tb[64];
    weft_type_print(t, tb, sizeof tb);
    return weft_graph_set_error(g, WEFT_ETYPE, "%s: input 0 has type %s (complex numbers have "
                                "no order in weft; reduce their Real or Abs)", opname, tb);
}

/* out[o] = out[o] F x[i]; T the part type. */
#define DEF_FOLD(name, T, F)                                                            \
    static void name(T *o, const T *x)                                                 \
    {                                                                                   \
        T ar = o[0], ai = o[1], br = x[0], bi = x[1];                                   \
        F;                                                                              \
    }
DEF_FOLD(add_c64, float, (o[0] = ar + br, o[1] = ai + bi))
DEF_FOLD(add_c128, double, (o[0] = ar + br, o[1] = ai + bi))
DEF_FOLD(mul_c64, float, (o[0] = ar * br - ai * bi, o[1] = ar * bi + ai * br))
DEF_FOLD(mul_c128, double, (o[0] = ar * br - ai * bi, o[1] = ar * bi + ai * br))

#define DEF_RUN(sfx, T)                                                                 \
    static void run_##sfx(bool prod, const T *x, T *out, int64_t n_out,                \
                          const weft__rloop_t *l)                                       \
    {                                                                                   \
        for (int64_t i = 0; i < n_out; i++) {                                           \
            out[2 * i] = prod ? 1 : 0;                                                  \
            out[2 * i + 1] = 0;                                                         \
        }                                                                               \
        for (int d = 0; d < l->ndim; d++)                                               \
            if (l->shape[d] == 0) return;                                               \
        int64_t idx[WEFT_MAX_NDIM] = {0}, ox = 0, oo = 0;                               \
        for (;;) {                                                                      \
            (prod ? mul_##sfx : add_##sfx)(out + 2 * oo, x + 2 * ox);                   \
            int d = l->ndim - 1;                                                        \
            for (; d >= 0; d--) { /* odometer in C order */                            \
                ox += l->sx[d];                                                         \
                oo += l->so[d];                                                         \
                if (++idx[d] < l->shape[d]) break;                                      \
                ox -= l->sx[d] * l->shape[d];                                           \
                oo -= l->so[d] * l->shape[d];                                           \
                idx[d] = 0;                                                             \
            }                                                                           \
            if (d < 0) return;                                                          \
        }                                                                               \
    }
DEF_RUN(c64, float)
DEF_RUN(c128, double)

void weft__reduce_run_complex(weft_reduce_kind_t kind, weft_dtype_t dt, const void *x, void *out,
                              int64_t n_out, const weft__rloop_t *loop)
{
    bool prod = kind == WEFT_REDUCE_PROD; /* else Sum, or Mean's sum */
    if (dt == WEFT_COMPLEX64)
        run_c64(prod, x, out, n_out, loop);
    else
        run_c128(prod, x, out, n_out, loop);
}
