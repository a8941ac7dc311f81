/* Sum, Mean and Prod of complex64 / complex128 (docs/dtypes.md, "Complex
 * numbers"), and the refusal of the orderings (Max, Min, Argmax) on them.
 *
 * The raw loops of reduce_kernels.c's tables for complex x: a fold into one
 * accumulator (a reduced inner axis; four independent chains over a
 * contiguous run, as the real folds) and an element-wise fold into a row of
 * the output (a kept inner axis, also the merge of a split's partials). So
 * complex reductions take the real ones' fixed split over the pool
 * (reduce_split.c): the same bits at any worker count and in the evaluator.
 * Both parts accumulate in double (complex64 too, as float32 sums do) and
 * round to the parts' type once per output element (per step in the
 * kept-axis loop, as the real kernels); Prod multiplies as the elementwise
 * Mul does ((ar br - ai bi, ar bi + ai br), NumPy's loop). NumPy sums
 * contiguous runs pairwise, so long sums may differ from NumPy's in the
 * last bits. */
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

/* A complex accumulator (both parts in double). */
typedef struct cx_acc {
    double re, im;
} cx_acc_t;

static inline cx_acc_t cx_fold(bool prod, cx_acc_t a, cx_acc_t b)
{
    if (prod) return (cx_acc_t){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
    return (cx_acc_t){a.re + b.re, a.im + b.im};
}

/* Element i (in complex elements) of x, T the part type. */
#define CX_AT(x, i) ((cx_acc_t){(double)(x)[2 * (i)], (double)(x)[2 * (i) + 1]})

/* name_red / name_keep (reduce_int.h's weft__rred_fn / weft__rkeep_fn) of
 * part type T; PROD: Prod, else Sum (Mean's sum). */
#define DEF_CX_LOOPS(name, T, PROD)                                                     \
    static void name##_red(const char *xp, int64_t n, int64_t sx, char *op)            \
    {                                                                                   \
        const T *x = (const T *)xp;                                                     \
        T *o = (T *)op;                                                                 \
        cx_acc_t acc = CX_AT(o, 0);                                                     \
        if (sx == 1 && n >= 8) { /* four chains hide the fold's latency */             \
            cx_acc_t a1 = CX_AT(x, 1), a2 = CX_AT(x, 2), a3 = CX_AT(x, 3);              \
            acc = cx_fold(PROD, acc, CX_AT(x, 0));                                      \
            int64_t i = 4;                                                              \
            for (; i + 4 <= n; i += 4) {                                                \
                acc = cx_fold(PROD, acc, CX_AT(x, i));                                  \
                a1 = cx_fold(PROD, a1, CX_AT(x, i + 1));                                \
                a2 = cx_fold(PROD, a2, CX_AT(x, i + 2));                                \
                a3 = cx_fold(PROD, a3, CX_AT(x, i + 3));                                \
            }                                                                           \
            for (; i < n; i++) acc = cx_fold(PROD, acc, CX_AT(x, i));                   \
            acc = cx_fold(PROD, cx_fold(PROD, acc, a1), cx_fold(PROD, a2, a3));         \
        } else {                                                                        \
            for (int64_t i = 0; i < n; i++) acc = cx_fold(PROD, acc, CX_AT(x, i * sx)); \
        }                                                                               \
        o[0] = (T)acc.re;                                                               \
        o[1] = (T)acc.im;                                                               \
    }                                                                                   \
    static void name##_keep(const char *xp, int64_t n, int64_t sx, char *op, int64_t so) \
    {                                                                                   \
        const T *x = (const T *)xp;                                                     \
        T *o = (T *)op;                                                                 \
        for (int64_t i = 0; i < n; i++) {                                               \
            cx_acc_t r = cx_fold(PROD, CX_AT(o, i * so), CX_AT(x, i * sx));             \
            o[2 * i * so] = (T)r.re;                                                    \
            o[2 * i * so + 1] = (T)r.im;                                                \
        }                                                                               \
    }
DEF_CX_LOOPS(sum_c64, float, false)
DEF_CX_LOOPS(sum_c128, double, false)
DEF_CX_LOOPS(prod_c64, float, true)
DEF_CX_LOOPS(prod_c128, double, true)

bool weft__reduce_complex_loops(weft_reduce_kind_t kind, weft_dtype_t dt, weft__rred_fn *red,
                                weft__rkeep_fn *keep)
{
    if (!weft__reduce_is_complex(dt)) return false;
    bool c64 = dt == WEFT_COMPLEX64;
    if (kind == WEFT_REDUCE_PROD) {
        *red = c64 ? prod_c64_red : prod_c128_red;
        *keep = c64 ? prod_c64_keep : prod_c128_keep;
    } else { /* Sum, Mean's sum; Max/Min are refused in make_node */
        *red = c64 ? sum_c64_red : sum_c128_red;
        *keep = c64 ? sum_c64_keep : sum_c128_keep;
    }
    return true;
}
