/* Elementwise ops on complex64 / complex128 (docs/dtypes.md, "Complex
 * numbers"): type inference where an input is complex or the kind is one of
 * Real, Imag, Conj, Angle, Complex; the dtype a node computes in; and the
 * row kernels. elemwise.c calls in here for those nodes only.
 *
 * Arithmetic follows NumPy 1.24's loops, not C's operators (GCC's complex
 * `*` and `/` call __muldc3 / __divdc3, whose infinity recovery NumPy does
 * not do): Mul and Sqr are (ar br - ai bi, ar bi + ai br); Div is Smith's
 * algorithm exactly as NumPy's nc_quot / cdiv (a zero divisor divides each
 * part by |br|, giving inf or NaN parts); Pow is NumPy's nc_pow (b = 0 ->
 * 1; a = 0 -> 0 when b is real and positive, else NaN + NaNj; a real
 * integral b in (-100, 100) by repeated squaring with the products above,
 * a negative one inverted with Smith's division; else C's cpow). Exp, Log,
 * Sqrt, Sin, Cos, Tanh are C's cexp, clog, csqrt, csin, ccos, ctanh (glibc;
 * NumPy calls the platform's too). Abs is NumPy's scaled hypot (cabs_*
 * below), Angle atan2(im, re), as NumPy. Built with -ffp-contract=off (CMakeLists.txt):
 * no multiply-add fusion, so the same bits as NumPy's compiled loops. */
#include <math.h>
#include <string.h>

#include "base/cmplx.h" /* <complex.h>, with CMPLX under clang too */
#include "ops_int.h"
#include "weft/type.h"

typedef unsigned char bool_el;

bool weft__ew_kind_is_complex_family(weft_elemwise_kind_t k)
{
    return k == WEFT_ELEMWISE_REAL || k == WEFT_ELEMWISE_IMAG || k == WEFT_ELEMWISE_CONJ ||
           k == WEFT_ELEMWISE_ANGLE || k == WEFT_ELEMWISE_COMPLEX;
}

static bool is_cx(weft_dtype_t d)
{
    return weft_dtype_kind(d) == WEFT_KIND_COMPLEX;
}

/* The real dtype of a complex dtype's parts, and back. */
static weft_dtype_t part_of(weft_dtype_t cx)
{
    return cx == WEFT_COMPLEX64 ? WEFT_FLOAT32 : WEFT_FLOAT64;
}
static weft_dtype_t complex_of(weft_dtype_t part)
{
    return part == WEFT_FLOAT32 || part == WEFT_FLOAT16 ? WEFT_COMPLEX64 : WEFT_COMPLEX128;
}

/* ---- type inference ------------------------------------------------------------------ */

bool weft__ew_complex_involved(weft_elemwise_kind_t k, size_t n_in, weft_var_t *const *inputs)
{
    if (k == WEFT_ELEMWISE_CAST) return false; /* Cast: any dtype to any, elemwise.c */
    if (weft__ew_kind_is_complex_family(k)) return true;
    for (size_t i = k == WEFT_ELEMWISE_SWITCH ? 1 : 0; i < n_in; i++)
        if (is_cx(weft_type_dtype(weft_var_type(inputs[i])))) return true;
    return false;
}

/* Whether kind k computes on complex operands. */
static bool kind_takes_complex(weft_elemwise_kind_t k)
{
    switch (k) {
    case WEFT_ELEMWISE_NEG: case WEFT_ELEMWISE_ABS: case WEFT_ELEMWISE_EXP:
    case WEFT_ELEMWISE_LOG: case WEFT_ELEMWISE_SQRT: case WEFT_ELEMWISE_SQR:
    case WEFT_ELEMWISE_TANH: case WEFT_ELEMWISE_SIN: case WEFT_ELEMWISE_COS:
    case WEFT_ELEMWISE_ADD: case WEFT_ELEMWISE_SUB: case WEFT_ELEMWISE_MUL:
    case WEFT_ELEMWISE_DIV: case WEFT_ELEMWISE_POW: case WEFT_ELEMWISE_SECOND:
    case WEFT_ELEMWISE_EQ: case WEFT_ELEMWISE_NE: case WEFT_ELEMWISE_SWITCH:
    case WEFT_ELEMWISE_REAL: case WEFT_ELEMWISE_IMAG: case WEFT_ELEMWISE_CONJ:
    case WEFT_ELEMWISE_ANGLE:
        return true;
    default:
        return false;
    }
}

/* Kinds NumPy 1.24 computes on complex numbers that weft does not yet
 * (their refusal says so, rather than "not defined"). */
static bool kind_numpy_only(weft_elemwise_kind_t k)
{
    switch (k) {
    case WEFT_ELEMWISE_SGN: case WEFT_ELEMWISE_TAN: case WEFT_ELEMWISE_ARCSIN:
    case WEFT_ELEMWISE_ARCCOS: case WEFT_ELEMWISE_ARCTAN: case WEFT_ELEMWISE_SINH:
    case WEFT_ELEMWISE_COSH: case WEFT_ELEMWISE_ARCSINH: case WEFT_ELEMWISE_ARCCOSH:
    case WEFT_ELEMWISE_ARCTANH: case WEFT_ELEMWISE_EXP2: case WEFT_ELEMWISE_EXPM1:
    case WEFT_ELEMWISE_LOG2: case WEFT_ELEMWISE_LOG10: case WEFT_ELEMWISE_ISNAN:
    case WEFT_ELEMWISE_ISINF: case WEFT_ELEMWISE_ISFINITE: case WEFT_ELEMWISE_LOGICAL_NOT:
    case WEFT_ELEMWISE_LOGICAL_AND: case WEFT_ELEMWISE_LOGICAL_OR:
    case WEFT_ELEMWISE_LOGICAL_XOR: case WEFT_ELEMWISE_NAN_TO_NUM: case WEFT_ELEMWISE_RINT:
    case WEFT_ELEMWISE_ROUND:
        return true;
    default:
        return false;
    }
}

static bool kind_is_order(weft_elemwise_kind_t k)
{
    return k == WEFT_ELEMWISE_LT || k == WEFT_ELEMWISE_LE || k == WEFT_ELEMWISE_GT ||
           k == WEFT_ELEMWISE_GE || k == WEFT_ELEMWISE_MAXIMUM || k == WEFT_ELEMWISE_MINIMUM;
}

/* The output dtype of a unary complex-family kind on a real input x. */
static weft_status_t family_real_dtype(weft_graph_t *g, weft_elemwise_kind_t k,
                                       weft_dtype_t x, weft_dtype_t *out)
{
    const char *name = weft_elemwise_name(k);
    if (x == WEFT_BOOL && k != WEFT_ELEMWISE_REAL && k != WEFT_ELEMWISE_IMAG &&
        k != WEFT_ELEMWISE_CONJ)
        return weft_graph_set_error(g, WEFT_ETYPE, "%s: input 0 is bool; a numeric input is "
                                    "required", name);
    *out = k == WEFT_ELEMWISE_ANGLE ? weft_dtype_float_of(x) : x;
    return WEFT_OK;
}

/* Complex(re, im): real inputs, the complex dtype of their float dtype. */
static weft_status_t complex_ctor_dtype(weft_graph_t *g, weft_var_t *const *inputs,
                                        weft_dtype_t *out)
{
    weft_dtype_t a = weft_type_dtype(weft_var_type(inputs[0]));
    weft_dtype_t b = weft_type_dtype(weft_var_type(inputs[1]));
    for (int i = 0; i < 2; i++) {
        weft_dtype_t d = i ? b : a;
        if (is_cx(d))
            return weft_graph_set_error(g, WEFT_ETYPE, "Complex: input %d (the %s part) is %s; "
                                        "the parts must be real", i, i ? "imaginary" : "real",
                                        weft_dtype_name(d));
    }
    *out = complex_of(weft_dtype_float_of(weft_dtype_promote(a, b)));
    return WEFT_OK;
}

static weft_status_t infer_out(weft_graph_t *g, weft_elemwise_kind_t k, size_t n_in,
                               weft_var_t *const *inputs, weft_dtype_t *out)
{
    const char *name = weft_elemwise_name(k);
    size_t first = k == WEFT_ELEMWISE_SWITCH ? 1 : 0, who = 0;
    weft_dtype_t c0 = weft_type_dtype(weft_var_type(inputs[0]));
    if (k == WEFT_ELEMWISE_SWITCH && c0 != WEFT_BOOL)
        return weft_graph_set_error(g, WEFT_ETYPE, "Switch: condition (input 0) is %s, not bool",
                                    weft_dtype_name(c0));
    if (k == WEFT_ELEMWISE_COMPLEX) return complex_ctor_dtype(g, inputs, out);
    weft_dtype_t dt = weft_type_dtype(weft_var_type(inputs[first]));
    for (size_t i = first; i < n_in; i++) {
        weft_dtype_t d = weft_type_dtype(weft_var_type(inputs[i]));
        if (is_cx(d) && !is_cx(dt)) who = i;
        dt = weft_dtype_promote(dt, d);
    }
    if (!is_cx(dt)) return family_real_dtype(g, k, dt, out);
    weft_dtype_t w = weft_type_dtype(weft_var_type(inputs[who]));
    if (kind_is_order(k))
        return weft_graph_set_error(g, WEFT_ETYPE, "%s: input %zu is %s; complex numbers have no "
                                    "order in weft (compare their Real or Abs)", name, who,
                                    weft_dtype_name(w));
    if (kind_numpy_only(k))
        return weft_graph_set_error(g, WEFT_ETYPE, "%s: input %zu is %s; weft does not compute "
                                    "%s on complex numbers yet", name, who, weft_dtype_name(w),
                                    name);
    if (!kind_takes_complex(k))
        return weft_graph_set_error(g, WEFT_ETYPE, "%s: input %zu is %s; %s is not defined for "
                                    "complex numbers", name, who, weft_dtype_name(w), name);
    if (k == WEFT_ELEMWISE_EQ || k == WEFT_ELEMWISE_NE)
        *out = WEFT_BOOL;
    else if (k == WEFT_ELEMWISE_ABS || k == WEFT_ELEMWISE_REAL || k == WEFT_ELEMWISE_IMAG ||
             k == WEFT_ELEMWISE_ANGLE)
        *out = part_of(dt);
    else
        *out = dt;
    return WEFT_OK;
}

/* The dtype a node of kind k computes in, from its inputs' dtypes dts and
 * its output dtype odt; WEFT_DTYPE_COUNT where elemwise.c's own rule holds. */
static weft_dtype_t compute_dtype(weft_elemwise_kind_t k, const weft_dtype_t *dts, size_t n_in,
                                  weft_dtype_t odt)
{
    if (k == WEFT_ELEMWISE_CAST) return WEFT_DTYPE_COUNT;
    bool any = false;
    weft_dtype_t dt = WEFT_BOOL;
    for (size_t i = k == WEFT_ELEMWISE_SWITCH ? 1 : 0; i < n_in; i++) {
        any |= is_cx(dts[i]);
        dt = weft_dtype_promote(dt, dts[i]);
    }
    if (any) return dt;
    if (k == WEFT_ELEMWISE_COMPLEX) return part_of(odt);
    return weft__ew_kind_is_complex_family(k) ? odt : WEFT_DTYPE_COUNT;
}

weft_status_t weft__ew_complex_infer(weft_graph_t *g, weft_elemwise_kind_t k, size_t n_in,
                                     weft_var_t *const *inputs, weft_dtype_t *out)
{
    weft_status_t st = infer_out(g, k, n_in, inputs, out);
    if (st != WEFT_OK) return st;
    weft_dtype_t dts[3];
    for (size_t i = 0; i < n_in && i < 3; i++) dts[i] = weft_type_dtype(weft_var_type(inputs[i]));
    weft_dtype_t c = compute_dtype(k, dts, n_in, *out);
    if (c == WEFT_DTYPE_COUNT || weft__elemwise_complex_kernel(k, c)) return WEFT_OK;
    /* e.g. Angle of float16: no kernel computes it */
    return weft_graph_set_error(g, WEFT_ETYPE, "%s: %s is not supported by %s",
                                weft_elemwise_name(k), weft_dtype_name(c), weft_elemwise_name(k));
}

weft_dtype_t weft__ew_complex_compute(weft_elemwise_kind_t k, weft_tensor_t *const *in,
                                      size_t n_in, weft_dtype_t odt)
{
    weft_dtype_t dts[3];
    for (size_t i = 0; i < n_in && i < 3; i++) dts[i] = weft_tensor_dtype(in[i]);
    return compute_dtype(k, dts, n_in, odt);
}

/* ---- complex arithmetic as NumPy's loops ---------------------------------------------- */

/* libm function fn of the part type */
#define CF_c64(fn) fn##f
#define CF_c128(fn) fn

/* X(C part type, suffix, C complex type, CMPLX macro) */
#define CX_TYPES(X)                       \
    X(float, c64, float _Complex, CMPLXF) \
    X(double, c128, double _Complex, CMPLX)

#define DEF_CX_MATH(T, sfx, TC, MK)                                                     \
    static inline TC cmul_##sfx(TC a, TC b)                                             \
    {                                                                                   \
        T ar = (T)creal(a), ai = (T)cimag(a), br = (T)creal(b), bi = (T)cimag(b);       \
        return MK(ar * br - ai * bi, ar * bi + ai * br);                                \
    }                                                                                   \
    static inline TC cdiv_##sfx(TC a, TC b)                                             \
    {                                                                                   \
        T ar = (T)creal(a), ai = (T)cimag(a), br = (T)creal(b), bi = (T)cimag(b);       \
        T abr = br < 0 ? -br : br, abi = bi < 0 ? -bi : bi;                             \
        if (abr >= abi) {                                                               \
            if (abr == 0 && abi == 0) return MK(ar / abr, ai / abr);                    \
            T rat = bi / br, scl = (T)1.0 / (br + bi * rat);                            \
            return MK((ar + ai * rat) * scl, (ai - ar * rat) * scl);                    \
        }                                                                               \
        T rat = br / bi, scl = (T)1.0 / (bi + br * rat);                                \
        return MK((ar * rat + ai) * scl, (ai * rat - ar) * scl);                        \
    }                                                                                   \
    static TC cpow_##sfx(TC a, TC b)                                                    \
    {                                                                                   \
        T ar = (T)creal(a), ai = (T)cimag(a), br = (T)creal(b), bi = (T)cimag(b);       \
        if (br == 0 && bi == 0) return MK(1, 0);                                        \
        if (ar == 0 && ai == 0) return br > 0 && bi == 0 ? MK(0, 0) : MK(NAN, NAN);     \
        if (bi == 0 && br > -100 && br < 100 && br == (T)(int)br) {                     \
            int n = (int)br, m = n < 0 ? -n : n;                                        \
            if (n == 1) return a;                                                       \
            if (n == 2) return cmul_##sfx(a, a);                                        \
            if (n == 3) return cmul_##sfx(a, cmul_##sfx(a, a));                         \
            TC acc = MK(1, 0), p = a;                                                   \
            for (int mask = 1;; mask <<= 1) {                                           \
                if (m & mask) acc = cmul_##sfx(acc, p);                                 \
                if (m < (mask << 1)) break;                                             \
                p = cmul_##sfx(p, p);                                                   \
            }                                                                           \
            return br < 0 ? cdiv_##sfx(MK(1, 0), acc) : acc;                            \
        }                                                                               \
        return CPOW_##sfx(a, b);                                                        \
    }
/* |z| as NumPy 1.24's complex absolute loop (its AVX-512F version, which
 * NumPy runs on the x86-64 machines of docs/performance-notes.md, for any
 * length): an infinite part makes both infinite, then a NaN part both NaN;
 * then larger * sqrt(fma(r, r, 1)) with r = smaller / larger (0 when larger
 * is 0 or smaller infinite). glibc's hypot differs from it in the last bit
 * for about a third of the values. */
#define DEF_CABS(T, sfx, TC, MK)                                                        \
    static inline T cabs_##sfx(T re, T im)                                              \
    {                                                                                   \
        re = CF_##sfx(fabs)(re);                                                        \
        im = CF_##sfx(fabs)(im);                                                        \
        bool re_inf = isinf(re), im_inf = isinf(im);                                    \
        if (im_inf) re = (T)INFINITY;                                                   \
        if (re_inf) im = (T)INFINITY;                                                   \
        bool re_nan = isnan(re), im_nan = isnan(im);                                    \
        if (im_nan) re = (T)NAN;                                                        \
        if (re_nan) im = (T)NAN;                                                        \
        T larger = re > im ? re : im, smaller = re > im ? im : re;                      \
        if (re_nan || im_nan) larger = smaller = (T)NAN;                                \
        T ratio = larger == 0 || isinf(smaller) ? (T)0 : smaller / larger;              \
        return CF_##sfx(sqrt)(CF_##sfx(fma)(ratio, ratio, (T)1)) * larger;              \
    }
#define CPOW_c64 cpowf
#define CPOW_c128 cpow
CX_TYPES(DEF_CX_MATH)
CX_TYPES(DEF_CABS)

/* ---- row kernels ------------------------------------------------------------------------ */

#define AT(ptr, i, k) ptr[(int64_t)(i) * s[k]]

/* Each kernel has a contiguous branch (every stride 1) the compiler can
 * vectorize (built at -O3), then the strided loop. */
#define CX_UNARY(name, sfx, TC, EXPR)                                            \
    static void name##_##sfx(size_t n, char *const *p, const int64_t *s, void *arg) \
    {                                                                            \
        (void)arg;                                                               \
        TC *o = (TC *)p[0];                                                      \
        const TC *a = (const TC *)p[1];                                          \
        if (s[0] == 1 && s[1] == 1) {                                            \
            WEFT_IVDEP for (size_t i = 0; i < n; i++) {                          \
                TC x = a[i];                                                     \
                o[i] = (EXPR);                                                   \
            }                                                                    \
            return;                                                              \
        }                                                                        \
        for (size_t i = 0; i < n; i++) {                                         \
            TC x = AT(a, i, 1);                                                  \
            AT(o, i, 0) = (EXPR);                                                \
        }                                                                        \
    }
#define CX_BINARY(name, sfx, TC, TO, EXPR)                                       \
    static void name##_##sfx(size_t n, char *const *p, const int64_t *s, void *arg) \
    {                                                                            \
        (void)arg;                                                               \
        TO *o = (TO *)p[0];                                                      \
        const TC *a = (const TC *)p[1], *b = (const TC *)p[2];                   \
        if (s[0] == 1 && s[1] == 1 && s[2] == 1) {                               \
            WEFT_IVDEP for (size_t i = 0; i < n; i++) {                          \
                TC x = a[i], y = b[i];                                           \
                o[i] = (EXPR);                                                   \
            }                                                                    \
            return;                                                              \
        }                                                                        \
        for (size_t i = 0; i < n; i++) {                                         \
            TC x = AT(a, i, 1), y = AT(b, i, 2);                                 \
            AT(o, i, 0) = (EXPR);                                                \
        }                                                                        \
    }
/* complex in, real (T) out */
#define CX_TO_REAL(name, sfx, T, TC, EXPR)                                       \
    static void name##_##sfx(size_t n, char *const *p, const int64_t *s, void *arg) \
    {                                                                            \
        (void)arg;                                                               \
        T *o = (T *)p[0];                                                        \
        const TC *a = (const TC *)p[1];                                          \
        if (s[0] == 1 && s[1] == 1) {                                            \
            WEFT_IVDEP for (size_t i = 0; i < n; i++) {                          \
                TC x = a[i];                                                     \
                o[i] = (T)(EXPR);                                                \
            }                                                                    \
            return;                                                              \
        }                                                                        \
        for (size_t i = 0; i < n; i++) {                                         \
            TC x = AT(a, i, 1);                                                  \
            AT(o, i, 0) = (T)(EXPR);                                             \
        }                                                                        \
    }

#define DEF_CX_KERNELS(T, sfx, TC, MK)                                                   \
    CX_UNARY(k_neg, sfx, TC, -x)                                                        \
    CX_UNARY(k_sqr, sfx, TC, cmul_##sfx(x, x))                                           \
    CX_UNARY(k_conj, sfx, TC, CF_##sfx(conj)(x))                                         \
    CX_UNARY(k_exp, sfx, TC, CF_##sfx(cexp)(x))                                          \
    CX_UNARY(k_log, sfx, TC, CF_##sfx(clog)(x))                                          \
    CX_UNARY(k_sqrt, sfx, TC, CF_##sfx(csqrt)(x))                                        \
    CX_UNARY(k_sin, sfx, TC, CF_##sfx(csin)(x))                                          \
    CX_UNARY(k_cos, sfx, TC, CF_##sfx(ccos)(x))                                          \
    CX_UNARY(k_tanh, sfx, TC, CF_##sfx(ctanh)(x))                                        \
    CX_BINARY(k_add, sfx, TC, TC, x + y) /* C's complex + and - are part by part */     \
    CX_BINARY(k_sub, sfx, TC, TC, x - y)                                                 \
    CX_BINARY(k_mul, sfx, TC, TC, cmul_##sfx(x, y))                                      \
    CX_BINARY(k_div, sfx, TC, TC, cdiv_##sfx(x, y))                                      \
    CX_BINARY(k_pow, sfx, TC, TC, cpow_##sfx(x, y))                                      \
    CX_BINARY(k_second, sfx, TC, TC, ((void)x, y))                                       \
    CX_BINARY(k_eq, sfx, TC, bool_el, x == y)                                            \
    CX_BINARY(k_ne, sfx, TC, bool_el, x != y)                                            \
    CX_TO_REAL(k_abs, sfx, T, TC, cabs_##sfx((T)creal(x), (T)cimag(x)))                 \
    CX_TO_REAL(k_real, sfx, T, TC, creal(x))                                             \
    CX_TO_REAL(k_imag, sfx, T, TC, cimag(x))                                             \
    CX_TO_REAL(k_angle, sfx, T, TC, CF_##sfx(atan2)((T)cimag(x), (T)creal(x)))           \
    static void k_switch_##sfx(size_t n, char *const *p, const int64_t *s, void *arg)    \
    {                                                                                    \
        (void)arg;                                                                       \
        TC *o = (TC *)p[0];                                                              \
        const bool_el *c = (const bool_el *)p[1];                                        \
        const TC *a = (const TC *)p[2], *b = (const TC *)p[3];                           \
        for (size_t i = 0; i < n; i++) AT(o, i, 0) = AT(c, i, 1) ? AT(a, i, 2) : AT(b, i, 3); \
    }                                                                                    \
    /* Complex(re, im): two real T inputs */                                           \
    static void k_complex_##sfx(size_t n, char *const *p, const int64_t *s, void *arg)   \
    {                                                                                    \
        (void)arg;                                                                       \
        T *o = (T *)p[0];                                                                \
        const T *a = (const T *)p[1], *b = (const T *)p[2];                              \
        for (size_t i = 0; i < n; i++) {                                                 \
            o[2 * (int64_t)i * s[0]] = AT(a, i, 1);                                      \
            o[2 * (int64_t)i * s[0] + 1] = AT(b, i, 2);                                  \
        }                                                                                \
    }                                                                                    \
    /* Angle of a real T: atan2(0, x) (0, or pi for negative x and -0.0) */            \
    static void k_angle_real_##sfx(size_t n, char *const *p, const int64_t *s, void *arg) \
    {                                                                                    \
        (void)arg;                                                                       \
        T *o = (T *)p[0];                                                                \
        const T *a = (const T *)p[1];                                                    \
        for (size_t i = 0; i < n; i++) AT(o, i, 0) = CF_##sfx(atan2)((T)0, AT(a, i, 1)); \
    }
CX_TYPES(DEF_CX_KERNELS)

/* Imag of a real input: zeros, by element size. */
#define ZERO_KERNEL(name, T)                                                     \
    static void name(size_t n, char *const *p, const int64_t *s, void *arg)     \
    {                                                                            \
        (void)arg;                                                               \
        T *o = (T *)p[0];                                                        \
        for (size_t i = 0; i < n; i++) AT(o, i, 0) = 0;                          \
    }
ZERO_KERNEL(k_zero1, uint8_t)
ZERO_KERNEL(k_zero2, uint16_t)
ZERO_KERNEL(k_zero4, uint32_t)
ZERO_KERNEL(k_zero8, uint64_t)

/* ---- dispatch ---------------------------------------------------------------------------- */

#define CX_ROW(k) {k##_c64, k##_c128}

static const weft__row_fn cx_kernels[WEFT_ELEMWISE_KIND_COUNT][2] = {
    [WEFT_ELEMWISE_NEG] = CX_ROW(k_neg),     [WEFT_ELEMWISE_ABS] = CX_ROW(k_abs),
    [WEFT_ELEMWISE_EXP] = CX_ROW(k_exp),     [WEFT_ELEMWISE_LOG] = CX_ROW(k_log),
    [WEFT_ELEMWISE_SQRT] = CX_ROW(k_sqrt),   [WEFT_ELEMWISE_SQR] = CX_ROW(k_sqr),
    [WEFT_ELEMWISE_TANH] = CX_ROW(k_tanh),   [WEFT_ELEMWISE_SIN] = CX_ROW(k_sin),
    [WEFT_ELEMWISE_COS] = CX_ROW(k_cos),     [WEFT_ELEMWISE_ADD] = CX_ROW(k_add),
    [WEFT_ELEMWISE_SUB] = CX_ROW(k_sub),     [WEFT_ELEMWISE_MUL] = CX_ROW(k_mul),
    [WEFT_ELEMWISE_DIV] = CX_ROW(k_div),     [WEFT_ELEMWISE_POW] = CX_ROW(k_pow),
    [WEFT_ELEMWISE_SECOND] = CX_ROW(k_second), [WEFT_ELEMWISE_EQ] = CX_ROW(k_eq),
    [WEFT_ELEMWISE_NE] = CX_ROW(k_ne),       [WEFT_ELEMWISE_SWITCH] = CX_ROW(k_switch),
    [WEFT_ELEMWISE_REAL] = CX_ROW(k_real),   [WEFT_ELEMWISE_IMAG] = CX_ROW(k_imag),
    [WEFT_ELEMWISE_CONJ] = CX_ROW(k_conj),   [WEFT_ELEMWISE_ANGLE] = CX_ROW(k_angle),
};

/* The complex-family kinds on a real compute dtype dt. */
static weft__row_fn family_real_kernel(weft_elemwise_kind_t k, weft_dtype_t dt)
{
    static const weft__row_fn zeros[9] = {[1] = k_zero1, [2] = k_zero2, [4] = k_zero4,
                                          [8] = k_zero8};
    switch (k) {
    case WEFT_ELEMWISE_REAL:
    case WEFT_ELEMWISE_CONJ: return weft__convert_fn(dt, dt); /* a copy */
    case WEFT_ELEMWISE_IMAG: return weft_dtype_size(dt) <= 8 ? zeros[weft_dtype_size(dt)] : NULL;
    case WEFT_ELEMWISE_ANGLE:
        return dt == WEFT_FLOAT32 ? k_angle_real_c64 : dt == WEFT_FLOAT64 ? k_angle_real_c128 : NULL;
    case WEFT_ELEMWISE_COMPLEX:
        return dt == WEFT_FLOAT32 ? k_complex_c64 : dt == WEFT_FLOAT64 ? k_complex_c128 : NULL;
    default: return NULL;
    }
}

weft__row_fn weft__elemwise_complex_kernel(weft_elemwise_kind_t kind, weft_dtype_t dt)
{
    if ((unsigned)kind >= WEFT_ELEMWISE_KIND_COUNT) return NULL;
    if (!is_cx(dt)) return family_real_kernel(kind, dt);
    return cx_kernels[kind][dt == WEFT_COMPLEX128];
}
