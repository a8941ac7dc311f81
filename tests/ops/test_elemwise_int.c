/* The rounding, integer and logical kinds (weft/elemwise.h, issue 17):
 * exact values with NumPy 1.24's sign rules and special cases (the expected
 * values were printed by NumPy 1.24.2), result dtypes, dtype errors with
 * their messages, gradients, in-place variants, fusion into a Composite and
 * a JSON round trip. */
#include <float.h>

#include "ops/ops_fixture.h"
#include "weft/composite.h"
#include "weft/function.h"
#include "weft/grad.h"
#include "weft/graph_io.h"
#include "weft/reduce.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))
#define I32_MIN (-2147483648.0)
#define I64_MIN (-9223372036854775808.0)

/* Equal, NaN to NaN, and zeros of the same sign. */
static bool same_value(double a, double b)
{
    return isnan(b) ? isnan(a) : (a == b && !signbit(a) == !signbit(b));
}

/* Every element the same value as want's. */
static void expect_exact(const weft_tensor_t *t, const double *want, size_t n)
{
    assert_int_equal(weft_tensor_size(t), n);
    for (size_t i = 0; i < n; i++) {
        double v = weft_tensor_flat_get(t, i);
        if (!same_value(v, want[i])) {
            fprintf(stderr, "element %zu: got %.17g want %.17g\n", i, v, want[i]);
            fail();
        }
    }
}

/* kind over 1-d inputs ins[0..arity) of dtype dt (n elements each, or
 * lens[i] of them: 1 broadcasts) gives want[0..n) in dtype want_dt. */
static void check_kind(weft_graph_t *g, weft_elemwise_kind_t kind, weft_dtype_t dt, size_t n,
                       const double *const *ins, const size_t *lens, weft_dtype_t want_dt,
                       const double *want)
{
    size_t ar = weft_elemwise_arity(kind);
    weft_var_t *v[3], *y;
    weft_tensor_t *t[3];
    for (size_t i = 0; i < ar; i++) {
        int64_t len = (int64_t)(lens ? lens[i] : n);
        v[i] = fx_var(g, dt, 1, &len);
        t[i] = fx_tensor(dt, 1, &len, ins[i]);
    }
    y = weft_elemwise(g, kind, ar, v);
    if (!y) fprintf(stderr, "%s\n", weft_graph_error_message(g));
    assert_non_null(y);
    assert_int_equal(weft_type_dtype(weft_var_type(y)), want_dt);
    weft_tensor_t *r = fx_eval(g, ar, v, t, y);
    assert_int_equal(weft_tensor_dtype(r), want_dt);
    expect_exact(r, want, n);
    weft_tensor_release(r);
    for (size_t i = 0; i < ar; i++) weft_tensor_release(t[i]);
}

static void un(weft_graph_t *g, weft_elemwise_kind_t k, weft_dtype_t dt, size_t n,
               const double *x, weft_dtype_t want_dt, const double *want)
{
    check_kind(g, k, dt, n, (const double *const[]){x}, NULL, want_dt, want);
}

static void bin(weft_graph_t *g, weft_elemwise_kind_t k, weft_dtype_t dt, size_t n,
                const double *x, const double *y, weft_dtype_t want_dt, const double *want)
{
    check_kind(g, k, dt, n, (const double *const[]){x, y}, NULL, want_dt, want);
}

/* ---- mod, floor_divide, fmod -------------------------------------------------------- */

static void test_int_mod_floor_divide_fmod_follow_numpy_sign_rules_on_integers(void **state)
{
    weft_graph_t *g = *state;
    const double x[] = {-7, 7, -7, 7, 0, 5, I32_MIN, 6}, y[] = {3, -3, -3, 3, 0, 0, -1, 3};
    const double mod[] = {2, -2, -1, 1, 0, 0, 0, 0}, fdiv[] = {-3, -3, 2, 2, 0, 0, I32_MIN, 2};
    const double fmod_[] = {-1, 1, -1, 1, 0, 0, 0, 0};
    bin(g, WEFT_ELEMWISE_MOD, WEFT_INT32, 8, x, y, WEFT_INT32, mod);
    bin(g, WEFT_ELEMWISE_FLOOR_DIVIDE, WEFT_INT32, 8, x, y, WEFT_INT32, fdiv);
    bin(g, WEFT_ELEMWISE_FMOD, WEFT_INT32, 8, x, y, WEFT_INT32, fmod_);
    const double x64[] = {-7, 7, -7, 7, 0, 5, I64_MIN, 6};
    const double fdiv64[] = {-3, -3, 2, 2, 0, 0, I64_MIN, 2};
    bin(g, WEFT_ELEMWISE_MOD, WEFT_INT64, 8, x64, y, WEFT_INT64, mod);
    bin(g, WEFT_ELEMWISE_FLOOR_DIVIDE, WEFT_INT64, 8, x64, y, WEFT_INT64, fdiv64);
    bin(g, WEFT_ELEMWISE_FMOD, WEFT_INT64, 8, x64, y, WEFT_INT64, fmod_);
}

static void test_int_mod_floor_divide_fmod_match_numpy_on_floats(void **state)
{
    weft_graph_t *g = *state;
    const double I = INFINITY, N = NAN;
    const double x[] = {-7, 7, -7, 7, 0, 5, -0.0, I, -I, N, 1, -1, 1, -1, 0.0, I, 5};
    const double y[] = {3, -3, -3, 3, 0, 0, 3, 3, 3, 3, I, I, -I, -I, -3, I, -0.0};
    const double mod[] = {2, -2, -1, 1, N, N, 0.0, N, N, N, 1, I, -I, -1, -0.0, N, N};
    const double fdiv[] = {-3, -3, 2, 2, N, I, -0.0, N, N, N, 0.0, -1, -1, 0.0, -0.0, N, -I};
    const double fmod_[] = {-1, 1, -1, 1, N, N, -0.0, N, N, N, 1, -1, 1, -1, 0.0, N, N};
    for (weft_dtype_t dt = WEFT_FLOAT32; dt <= WEFT_FLOAT64; dt++) {
        bin(g, WEFT_ELEMWISE_MOD, dt, N_OF(x), x, y, dt, mod);
        bin(g, WEFT_ELEMWISE_FLOOR_DIVIDE, dt, N_OF(x), x, y, dt, fdiv);
        bin(g, WEFT_ELEMWISE_FMOD, dt, N_OF(x), x, y, dt, fmod_);
    }
    /* the quotient is snapped to the nearest integer: 1 // 0.1 is 9 (1 - 9 * 0.1 > 0) */
    bin(g, WEFT_ELEMWISE_FLOOR_DIVIDE, WEFT_FLOAT64, 1, (double[]){1}, (double[]){0.1},
        WEFT_FLOAT64, (double[]){9});
}

/* ---- rounding ----------------------------------------------------------------------- */

static void test_int_rounding_kinds_exact_values_and_dtypes(void **state)
{
    weft_graph_t *g = *state;
    const double I = INFINITY, N = NAN;
    const double x[] = {-1.5, -0.5, 0.5, 1.5, -0.0, I, N, 2.5};
    for (weft_dtype_t dt = WEFT_FLOAT32; dt <= WEFT_FLOAT64; dt++) {
        un(g, WEFT_ELEMWISE_FLOOR, dt, 8, x, dt, (double[]){-2, -1, 0, 1, -0.0, I, N, 2});
        un(g, WEFT_ELEMWISE_CEIL, dt, 8, x, dt, (double[]){-1, -0.0, 1, 2, -0.0, I, N, 3});
        un(g, WEFT_ELEMWISE_TRUNC, dt, 8, x, dt, (double[]){-1, -0.0, 0, 1, -0.0, I, N, 2});
        /* half to even: round(2.5) = 2, round(-0.5) = -0.0 */
        un(g, WEFT_ELEMWISE_ROUND, dt, 8, x, dt, (double[]){-2, -0.0, 0, 2, -0.0, I, N, 2});
        un(g, WEFT_ELEMWISE_RINT, dt, 8, x, dt, (double[]){-2, -0.0, 0, 2, -0.0, I, N, 2});
    }
    /* below 2^53 every float64 is exact; the largest one below 0.5 rounds to 0 */
    un(g, WEFT_ELEMWISE_ROUND, WEFT_FLOAT64, 2, (double[]){0.49999999999999994, 4503599627370497.0},
       WEFT_FLOAT64, (double[]){0, 4503599627370497.0});
    /* NumPy 1.24: floor/ceil/trunc/rint of integers are float64, round keeps the integer */
    const double xi[] = {-7, 7, 2};
    for (weft_dtype_t dt = WEFT_INT32; dt <= WEFT_INT64; dt++) {
        un(g, WEFT_ELEMWISE_FLOOR, dt, 3, xi, WEFT_FLOAT64, xi);
        un(g, WEFT_ELEMWISE_CEIL, dt, 3, xi, WEFT_FLOAT64, xi);
        un(g, WEFT_ELEMWISE_TRUNC, dt, 3, xi, WEFT_FLOAT64, xi);
        un(g, WEFT_ELEMWISE_RINT, dt, 3, xi, WEFT_FLOAT64, xi);
        un(g, WEFT_ELEMWISE_ROUND, dt, 3, xi, dt, xi);
    }
}

static void test_int_sign_is_sgn_and_abs_takes_bool(void **state)
{
    weft_graph_t *g = *state;
    weft_var_t *x = fx_var(g, WEFT_FLOAT64, 1, (int64_t[]){3}), *s;
    assert_non_null(s = weft_sign(g, x));
    char text[64];
    weft_op_print(weft_apply_op(weft_var_owner(s)), text, sizeof text);
    assert_string_equal(text, "Sgn");
    un(g, WEFT_ELEMWISE_SGN, WEFT_FLOAT64, 4, (double[]){-0.0, 0.0, NAN, -3}, WEFT_FLOAT64,
       (double[]){0.0, 0.0, NAN, -1});
    un(g, WEFT_ELEMWISE_ABS, WEFT_BOOL, 2, (double[]){1, 0}, WEFT_BOOL, (double[]){1, 0});
}

/* ---- predicates and logical kinds ---------------------------------------------------- */

static void test_int_isnan_isinf_isfinite_of_every_dtype(void **state)
{
    weft_graph_t *g = *state;
    const double x[] = {NAN, INFINITY, -INFINITY, 1, -0.0, DBL_MAX};
    for (weft_dtype_t dt = WEFT_FLOAT32; dt <= WEFT_FLOAT64; dt++) {
        const double *xs = x;
        size_t n = dt == WEFT_FLOAT32 ? 5 : 6; /* DBL_MAX is inf in float32 */
        un(g, WEFT_ELEMWISE_ISNAN, dt, n, xs, WEFT_BOOL, (double[]){1, 0, 0, 0, 0, 0});
        un(g, WEFT_ELEMWISE_ISINF, dt, n, xs, WEFT_BOOL, (double[]){0, 1, 1, 0, 0, 0});
        un(g, WEFT_ELEMWISE_ISFINITE, dt, n, xs, WEFT_BOOL, (double[]){0, 0, 0, 1, 1, 1});
    }
    const double xi[] = {5, -5, 0};
    for (weft_dtype_t dt = WEFT_BOOL; dt <= WEFT_INT64; dt++) {
        un(g, WEFT_ELEMWISE_ISNAN, dt, 3, xi, WEFT_BOOL, (double[]){0, 0, 0});
        un(g, WEFT_ELEMWISE_ISINF, dt, 3, xi, WEFT_BOOL, (double[]){0, 0, 0});
        un(g, WEFT_ELEMWISE_ISFINITE, dt, 3, xi, WEFT_BOOL, (double[]){1, 1, 1});
    }
}

/* Nonzero is true: NaN is true, -0.0 false. */
static void test_int_logical_kinds_treat_nonzero_as_true(void **state)
{
    weft_graph_t *g = *state;
    const double x[] = {NAN, 0, -0.0, 2, 3}, y[] = {1, 1, 1, 0, -4};
    for (weft_dtype_t dt = WEFT_FLOAT32; dt <= WEFT_FLOAT64; dt++) {
        bin(g, WEFT_ELEMWISE_LOGICAL_AND, dt, 5, x, y, WEFT_BOOL, (double[]){1, 0, 0, 0, 1});
        bin(g, WEFT_ELEMWISE_LOGICAL_OR, dt, 5, x, y, WEFT_BOOL, (double[]){1, 1, 1, 1, 1});
        bin(g, WEFT_ELEMWISE_LOGICAL_XOR, dt, 5, x, y, WEFT_BOOL, (double[]){0, 1, 1, 1, 0});
        un(g, WEFT_ELEMWISE_LOGICAL_NOT, dt, 5, x, WEFT_BOOL, (double[]){0, 1, 1, 0, 0});
    }
    const double xi[] = {0, 0, 2, -3}, yi[] = {0, 7, 0, 1};
    for (weft_dtype_t dt = WEFT_BOOL; dt <= WEFT_INT64; dt++) {
        const double *a = dt == WEFT_BOOL ? (double[]){0, 0, 1, 1} : xi;
        const double *b = dt == WEFT_BOOL ? (double[]){0, 1, 0, 1} : yi;
        bin(g, WEFT_ELEMWISE_LOGICAL_AND, dt, 4, a, b, WEFT_BOOL, (double[]){0, 0, 0, 1});
        bin(g, WEFT_ELEMWISE_LOGICAL_OR, dt, 4, a, b, WEFT_BOOL, (double[]){0, 1, 1, 1});
        bin(g, WEFT_ELEMWISE_LOGICAL_XOR, dt, 4, a, b, WEFT_BOOL, (double[]){0, 1, 1, 0});
        un(g, WEFT_ELEMWISE_LOGICAL_NOT, dt, 4, a, WEFT_BOOL, (double[]){1, 1, 0, 0});
    }
    /* mixed dtypes compute in the common dtype: 0.5 is true, not truncated to 0 */
    weft_var_t *i = fx_var(g, WEFT_INT32, 1, (int64_t[]){1});
    weft_var_t *f = fx_var(g, WEFT_FLOAT32, 1, (int64_t[]){1}), *l;
    assert_non_null(l = weft_logical_and(g, i, f));
    assert_int_equal(weft_type_dtype(weft_var_type(l)), WEFT_BOOL);
    weft_tensor_t *tv[2] = {fx_tensor(WEFT_INT32, 1, (int64_t[]){1}, (double[]){3}),
                            fx_tensor(WEFT_FLOAT32, 1, (int64_t[]){1}, (double[]){0.5})};
    weft_tensor_t *r = fx_eval(g, 2, (weft_var_t *[]){i, f}, tv, l);
    expect_exact(r, (double[]){1}, 1);
    weft_tensor_release(r);
    for (int k = 0; k < 2; k++) weft_tensor_release(tv[k]);
}

/* ---- bitwise and shifts ------------------------------------------------------------- */

static void test_int_bitwise_kinds_on_integers_and_bool(void **state)
{
    weft_graph_t *g = *state;
    const double x[] = {12, -1, 0}, y[] = {10, 5, -8};
    for (weft_dtype_t dt = WEFT_INT32; dt <= WEFT_INT64; dt++) {
        bin(g, WEFT_ELEMWISE_BITWISE_AND, dt, 3, x, y, dt, (double[]){8, 5, 0});
        bin(g, WEFT_ELEMWISE_BITWISE_OR, dt, 3, x, y, dt, (double[]){14, -1, -8});
        bin(g, WEFT_ELEMWISE_BITWISE_XOR, dt, 3, x, y, dt, (double[]){6, -6, -8});
        un(g, WEFT_ELEMWISE_INVERT, dt, 3, x, dt, (double[]){-13, 0, -1});
    }
    const double a[] = {0, 0, 1, 1}, b[] = {0, 1, 0, 1};
    bin(g, WEFT_ELEMWISE_BITWISE_AND, WEFT_BOOL, 4, a, b, WEFT_BOOL, (double[]){0, 0, 0, 1});
    bin(g, WEFT_ELEMWISE_BITWISE_OR, WEFT_BOOL, 4, a, b, WEFT_BOOL, (double[]){0, 1, 1, 1});
    bin(g, WEFT_ELEMWISE_BITWISE_XOR, WEFT_BOOL, 4, a, b, WEFT_BOOL, (double[]){0, 1, 1, 0});
    un(g, WEFT_ELEMWISE_INVERT, WEFT_BOOL, 4, a, WEFT_BOOL, (double[]){1, 1, 0, 0});
}

/* Counts of the width or more, or negative: 0, and -1 for a right shift of a
 * negative value (NumPy on x86-64). */
static void test_int_shifts_follow_numpy_out_of_range(void **state)
{
    weft_graph_t *g = *state;
    const double x[] = {1, -1, 5, -8, 1, -1, 3, -8};
    const double s32[] = {31, 31, 32, 33, -1, 100, 2, 1}, s64[] = {63, 63, 64, 65, -1, 100, 2, 1};
    bin(g, WEFT_ELEMWISE_LEFT_SHIFT, WEFT_INT32, 8, x, s32, WEFT_INT32,
        (double[]){I32_MIN, I32_MIN, 0, 0, 0, 0, 12, -16});
    bin(g, WEFT_ELEMWISE_RIGHT_SHIFT, WEFT_INT32, 8, x, s32, WEFT_INT32,
        (double[]){0, -1, 0, -1, 0, -1, 0, -4});
    bin(g, WEFT_ELEMWISE_LEFT_SHIFT, WEFT_INT64, 8, x, s64, WEFT_INT64,
        (double[]){I64_MIN, I64_MIN, 0, 0, 0, 0, 12, -16});
    bin(g, WEFT_ELEMWISE_RIGHT_SHIFT, WEFT_INT64, 8, x, s64, WEFT_INT64,
        (double[]){0, -1, 0, -1, 0, -1, 0, -4});
}

/* ---- nan_to_num, clip --------------------------------------------------------------- */

static void test_int_nan_to_num_uses_the_dtype_extremes(void **state)
{
    weft_graph_t *g = *state;
    const double x[] = {NAN, INFINITY, -INFINITY, 1.5, -0.0};
    un(g, WEFT_ELEMWISE_NAN_TO_NUM, WEFT_FLOAT32, 5, x, WEFT_FLOAT32,
       (double[]){0, FLT_MAX, -FLT_MAX, 1.5, -0.0});
    un(g, WEFT_ELEMWISE_NAN_TO_NUM, WEFT_FLOAT64, 5, x, WEFT_FLOAT64,
       (double[]){0, DBL_MAX, -DBL_MAX, 1.5, -0.0});
    un(g, WEFT_ELEMWISE_NAN_TO_NUM, WEFT_INT32, 2, (double[]){-7, 7}, WEFT_INT32,
       (double[]){-7, 7});
    un(g, WEFT_ELEMWISE_NAN_TO_NUM, WEFT_BOOL, 2, (double[]){1, 0}, WEFT_BOOL, (double[]){1, 0});
    /* other replacement values, composed */
    int64_t s5[1] = {5};
    weft_var_t *v = fx_var(g, WEFT_FLOAT32, 1, s5), *y, *iv = fx_var(g, WEFT_INT32, 1, s5);
    assert_non_null(y = weft_nan_to_num_values(g, v, -1, 7, -8));
    assert_int_equal(weft_type_dtype(weft_var_type(y)), WEFT_FLOAT32);
    weft_tensor_t *t = fx_tensor(WEFT_FLOAT32, 1, s5, x), *r = fx_eval(g, 1, &v, &t, y);
    expect_exact(r, (double[]){-1, 7, -8, 1.5, -0.0}, 5);
    weft_tensor_release(r);
    weft_tensor_release(t);
    assert_non_null(y = weft_nan_to_num_values(g, iv, -1, 7, -8));
    assert_string_equal(weft_op_name(weft_apply_op(weft_var_owner(y))), "NanToNum");
    fx_expect_error(g, weft_nan_to_num_values(g, NULL, 0, 1, -1), WEFT_EINVAL,
                    "NanToNum at ");
}

/* NaN anywhere gives NaN; lo > hi gives hi; signed zeros as NumPy's
 * maximum-then-minimum: clip(0.0, -0.0, 1) is -0.0 (float16: 0.0). */
static void test_int_clip_matches_numpy_with_nan_and_signed_zero(void **state)
{
    weft_graph_t *g = *state;
    const double N = NAN;
    const double x[] = {N, .5, 2, -1, .5, .5, 0.0, -0.0, .5, .5};
    const double lo[] = {0, 0, 0, 0, N, 2, -0.0, 0.0, 0, 2};
    const double hi[] = {1, 1, 1, 1, 1, 1, 1, 1, N, 1};
    const double want[] = {N, .5, 1, 0, N, 1, -0.0, 0.0, N, 1};
    for (weft_dtype_t dt = WEFT_FLOAT32; dt <= WEFT_FLOAT64; dt++)
        check_kind(g, WEFT_ELEMWISE_CLIP, dt, 10, (const double *const[]){x, lo, hi}, NULL, dt,
                   want);
    /* float16 follows NumPy's half loop, which compares with >= and <=
     * (npy_half_ge / npy_half_le): an equal bound keeps x's zero, where the
     * float32/float64 loops (> and <) take the bound's */
    const double zx[] = {-0.0, 0.0, -0.0, 0.0}, zlo[] = {0.0, -0.0, -1, -1};
    const double zhi[] = {5, 5, 0.0, -0.0};
    check_kind(g, WEFT_ELEMWISE_CLIP, WEFT_FLOAT16, 4, (const double *const[]){zx, zlo, zhi},
               NULL, WEFT_FLOAT16, (double[]){-0.0, 0.0, -0.0, 0.0});
    check_kind(g, WEFT_ELEMWISE_CLIP, WEFT_FLOAT32, 4, (const double *const[]){zx, zlo, zhi},
               NULL, WEFT_FLOAT32, (double[]){0.0, -0.0, 0.0, -0.0});
    check_kind(g, WEFT_ELEMWISE_CLIP, WEFT_FLOAT16, 10, (const double *const[]){x, lo, hi}, NULL,
               WEFT_FLOAT16, (double[]){N, .5, 1, 0, N, 1, 0.0, -0.0, N, 1});
    /* integers, with scalar bounds (length-1 static axes: the broadcast fast path) */
    check_kind(g, WEFT_ELEMWISE_CLIP, WEFT_INT32, 4, (const double *const[]){
                   (double[]){-5, 5, 15, 10}, (double[]){0}, (double[]){10}},
               (size_t[]){4, 1, 1}, WEFT_INT32, (double[]){0, 5, 10, 10});
    weft_var_t *v = fx_var(g, WEFT_INT64, 1, (int64_t[]){2}), *c;
    weft_var_t *f = fx_var(g, WEFT_FLOAT32, 0, NULL);
    assert_non_null(c = weft_clip(g, v, f, f)); /* lower-rank bounds broadcast */
    /* int64 with float32 promotes to float64, as np.result_type */
    assert_int_equal(weft_type_dtype(weft_var_type(c)), WEFT_FLOAT64);
}

/* ---- dtype errors ------------------------------------------------------------------- */

static void test_int_dtype_errors_name_the_kind_and_the_rule(void **state)
{
    weft_graph_t *g = *state;
    int64_t s3[1] = {3};
    weft_var_t *f = fx_var(g, WEFT_FLOAT64, 1, s3), *b = fx_var(g, WEFT_BOOL, 1, s3);
    weft_var_t *h = fx_var(g, WEFT_FLOAT32, 1, s3), *i = fx_var(g, WEFT_INT32, 1, s3);
    fx_expect_error(g, weft_bitwise_and(g, f, i), WEFT_ETYPE,
                    "BitwiseAnd: inputs are float64; bitwise ops need integer or bool inputs");
    fx_expect_error(g, weft_invert(g, h), WEFT_ETYPE,
                    "Invert: inputs are float32; bitwise ops need integer or bool inputs");

    fx_expect_error(g, weft_right_shift(g, i, f), WEFT_ETYPE,
                    "RightShift: inputs are float64; shifts need an integer input");
    fx_expect_error(g, weft_clip(g, b, b, b), WEFT_ETYPE,
                    "Clip: inputs are bool; a numeric input is required");
    fx_expect_error(g, weft_clip(g, f, f, NULL), WEFT_EINVAL, "input 2 is NULL");
    /* bool computes as NumPy's loops: shifts and Mod in int8, Floor in
     * float16 (weft_dtype_float_of), Round in float16 */
    weft_var_t *y;
    const struct {
        weft_var_t *y;
        weft_dtype_t want;
    } bools[] = {{weft_left_shift(g, b, b), WEFT_INT8},
                 {weft_mod(g, b, b), WEFT_INT8},
                 {weft_floor(g, b), WEFT_FLOAT16},
                 {weft_round(g, b), WEFT_FLOAT16}};
    for (size_t k = 0; k < sizeof bools / sizeof bools[0]; k++) {
        assert_non_null(bools[k].y);
        assert_int_equal(weft_type_dtype(weft_var_type(bools[k].y)), bools[k].want);
    }
    /* a bool input is converted when another is an integer */
    assert_non_null(y = weft_bitwise_or(g, b, i));
    assert_int_equal(weft_type_dtype(weft_var_type(y)), WEFT_INT32);
    /* Composite refuses the bool-valued kinds */
    const weft_op_t *op;
    weft_composite_step_t st[1] = {{WEFT_ELEMWISE_ISNAN, {0, 0}}};
    assert_int_equal(weft_composite_op(g, 1, 1, st, -1, &op), WEFT_EINVAL);
    assert_non_null(strstr(weft_graph_last_error(g), "is not an arithmetic kind of one dtype"));
    weft_graph_clear_error(g);
}

/* ---- gradients ---------------------------------------------------------------------- */

static weft_var_t *kind_of(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    return weft_elemwise(g, *(const weft_elemwise_kind_t *)user, n, in);
}

static void verify(weft_elemwise_kind_t k, size_t n, weft_tensor_t *const *pts)
{
    weft_verify_grad_result_t res;
    weft_status_t st = weft_verify_grad(kind_of, &k, n, pts, NULL, &res);
    if (st != WEFT_OK) fprintf(stderr, "%s: %s\n", weft_elemwise_name(k), res.message);
    assert_int_equal(st, WEFT_OK);
}

/* Points away from the jumps: x / y in (0.08, 0.54) or its negative. */
static void test_int_mod_fmod_clip_nan_to_num_pass_verify_grad(void **state)
{
    (void)state;
    int64_t s6[1] = {6};
    weft_tensor_t *x = fx_tensor(WEFT_FLOAT64, 1, s6, (double[]){0.2, 0.8, -0.3, -0.7, 0.5, -0.5});
    weft_tensor_t *y = fx_tensor(WEFT_FLOAT64, 1, s6, (double[]){1.5, 2.5, 1.7, -2.2, -1.9, 2});
    verify(WEFT_ELEMWISE_MOD, 2, (weft_tensor_t *[]){x, y});
    verify(WEFT_ELEMWISE_FMOD, 2, (weft_tensor_t *[]){x, y});
    verify(WEFT_ELEMWISE_NAN_TO_NUM, 1, &x);
    /* clip: x inside, below and above, each at least 0.1 from a bound */
    weft_tensor_t *lo = fx_tensor(WEFT_FLOAT64, 1, s6, (double[]){0, 0.9, -0.5, -0.5, 0.6, -1});
    weft_tensor_t *hi = fx_tensor(WEFT_FLOAT64, 1, s6, (double[]){0.5, 1, 0, -0.4, 1, -0.6});
    weft_tensor_t *all[4] = {x, lo, hi, y};
    verify(WEFT_ELEMWISE_CLIP, 3, all);
    for (int k = 0; k < 4; k++) weft_tensor_release(all[k]);
}

/* PyTensor's conventions: a step function's gradient is zeros (connected,
 * not an error); Clip's x gets gz at the bounds themselves. */
static void test_int_step_functions_have_zero_gradient_and_clip_includes_bounds(void **state)
{
    weft_graph_t *g = *state;
    int64_t s3[1] = {3};
    weft_var_t *x = fx_var(g, WEFT_FLOAT64, 1, s3), *lo, *hi, *gx;
    const weft_elemwise_kind_t steps[] = {WEFT_ELEMWISE_FLOOR, WEFT_ELEMWISE_CEIL,
                                          WEFT_ELEMWISE_TRUNC, WEFT_ELEMWISE_ROUND,
                                          WEFT_ELEMWISE_RINT,  WEFT_ELEMWISE_SGN};
    weft_tensor_t *xv = fx_tensor(WEFT_FLOAT64, 1, s3, (double[]){-1.5, 0.25, 2});
    for (size_t k = 0; k < N_OF(steps); k++) {
        weft_var_t *c = weft_sum(g, weft_unary(g, steps[k], x), 0, NULL, false);
        assert_non_null(gx = weft_grad(g, c, x));
        weft_tensor_t *r = fx_eval(g, 1, &x, &xv, gx);
        expect_exact(r, (double[]){0, 0, 0}, 3);
        weft_tensor_release(r);
    }
    /* floor_divide: zeros for both inputs */
    weft_var_t *y = fx_var(g, WEFT_FLOAT64, 1, s3), *gs[2], *xy[2] = {x, y};
    weft_var_t *c = weft_sum(g, weft_floor_divide(g, x, y), 0, NULL, false);
    assert_non_null(weft_grads(g, c, 2, xy, NULL, gs));
    weft_tensor_t *yv = fx_tensor(WEFT_FLOAT64, 1, s3, (double[]){0.5, -3, 7});
    for (int k = 0; k < 2; k++) {
        weft_tensor_t *r = fx_eval(g, 2, xy, (weft_tensor_t *[]){xv, yv}, gs[k]);
        expect_exact(r, (double[]){0, 0, 0}, 3);
        weft_tensor_release(r);
    }
    weft_tensor_release(yv);
    /* clip(x, lo, hi) with x = lo, inside, x = hi: x gets all three */
    lo = fx_var(g, WEFT_FLOAT64, 1, s3);
    hi = fx_var(g, WEFT_FLOAT64, 1, s3);
    c = weft_sum(g, weft_clip(g, x, lo, hi), 0, NULL, false);
    weft_var_t *g3[3];
    weft_var_t *xlh[3] = {x, lo, hi};
    assert_non_null(weft_grads(g, c, 3, xlh, NULL, g3));
    weft_tensor_t *v[3] = {fx_tensor(WEFT_FLOAT64, 1, s3, (double[]){0, 0.5, 1}),
                           fx_tensor(WEFT_FLOAT64, 1, s3, (double[]){0, 0, 0}),
                           fx_tensor(WEFT_FLOAT64, 1, s3, (double[]){1, 1, 1})};
    const double want[3][3] = {{1, 1, 1}, {0, 0, 0}, {0, 0, 0}};
    for (int k = 0; k < 3; k++) {
        weft_tensor_t *r = fx_eval(g, 3, xlh, v, g3[k]);
        expect_exact(r, want[k], 3);
        weft_tensor_release(r);
    }
    for (int k = 0; k < 3; k++) weft_tensor_release(v[k]);
    weft_tensor_release(xv);
}

/* ---- in place ----------------------------------------------------------------------- */

/* The in-place variant writing input `target` gives the out-of-place result
 * in that input's buffer. */
static void check_inplace(weft_graph_t *g, weft_elemwise_kind_t k, weft_dtype_t dt,
                          size_t target, const double *const *vals)
{
    size_t ar = weft_elemwise_arity(k);
    int64_t s4[1] = {4};
    weft_var_t *in[3];
    weft_tensor_t *v1[3], *v2[3];
    for (size_t i = 0; i < ar; i++) {
        in[i] = fx_var(g, dt, 1, s4);
        v1[i] = fx_tensor(dt, 1, s4, vals[i]);
        v2[i] = fx_tensor(dt, 1, s4, vals[i]);
    }
    const weft_op_t *op, *ip;
    assert_int_equal(weft_elemwise_op(g, k, -1, WEFT_BOOL, &op), WEFT_OK);
    assert_int_equal(weft_op_class(op)->inplace_variant(g, op, target, &ip), WEFT_OK);
    weft_var_t *y = weft_op_call(g, op, ar, in), *yi = weft_op_call(g, ip, ar, in);
    assert_non_null(y);
    assert_non_null(yi);
    weft_tensor_t *r = fx_eval(g, ar, in, v1, y), *ri = fx_eval(g, ar, in, v2, yi);
    bool eq = false;
    assert_int_equal(weft_tensor_allclose(r, ri, 0, 0, &eq), WEFT_OK);
    assert_true(eq);
    assert_true(weft_tensor_shares_buffer(ri, v2[target]));
    weft_tensor_release(r);
    weft_tensor_release(ri);
    for (size_t i = 0; i < ar; i++) {
        weft_tensor_release(v1[i]);
        weft_tensor_release(v2[i]);
    }
}

static void test_int_inplace_variants_write_into_their_input(void **state)
{
    weft_graph_t *g = *state;
    const double a[] = {-7, 7, 5, -2}, b[] = {3, -3, 2, 5}, c[] = {6, 6, 6, 6};
    const double *ab[] = {a, b}, *abc[] = {a, b, c};
    check_inplace(g, WEFT_ELEMWISE_MOD, WEFT_INT32, 0, ab);
    check_inplace(g, WEFT_ELEMWISE_FLOOR_DIVIDE, WEFT_FLOAT64, 1, ab);
    check_inplace(g, WEFT_ELEMWISE_FMOD, WEFT_INT64, 1, ab);
    check_inplace(g, WEFT_ELEMWISE_LEFT_SHIFT, WEFT_INT64, 0, ab);
    check_inplace(g, WEFT_ELEMWISE_BITWISE_XOR, WEFT_INT32, 1, ab);
    check_inplace(g, WEFT_ELEMWISE_FLOOR, WEFT_FLOAT32, 0, ab);
    check_inplace(g, WEFT_ELEMWISE_ROUND, WEFT_INT32, 0, ab);
    check_inplace(g, WEFT_ELEMWISE_INVERT, WEFT_INT64, 0, ab);
    check_inplace(g, WEFT_ELEMWISE_CLIP, WEFT_FLOAT64, 0, abc);
    check_inplace(g, WEFT_ELEMWISE_CLIP, WEFT_INT32, 2, abc);
    /* no in-place variant where the output type differs: Floor of int32 is float64 */
    const weft_op_t *op, *ip;
    weft_var_t *x = fx_var(g, WEFT_INT32, 1, (int64_t[]){4});
    assert_int_equal(weft_elemwise_op(g, WEFT_ELEMWISE_FLOOR, 0, WEFT_BOOL, &ip), WEFT_OK);
    fx_expect_error(g, weft_op_call(g, ip, 1, &x), WEFT_ETYPE,
                    "Floor{inplace=0}: input 0 type int32[4] differs from the output type "
                    "float64[4], so it cannot hold the result");
    (void)op;
}

/* ---- fusion and JSON ---------------------------------------------------------------- */

static weft_function_t *compile(size_t n_in, weft_var_t *const *in, weft_var_t *out,
                                const char *mode)
{
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.mode = mode;
    weft_function_t *fn = NULL;
    weft_status_t st = weft_function_compile(n_in, in, 1, &out, 0, NULL, &o, &fn);
    if (st != WEFT_OK) fprintf(stderr, "compile: %s\n", weft_function_last_error(NULL));
    assert_int_equal(st, WEFT_OK);
    return fn;
}

/* fast_run fuses the chain into one Composite, and gives mode none's bits. */
static void check_fused(size_t n_in, weft_var_t *const *in, weft_tensor_t *const *vals,
                        weft_var_t *out, const char *want_listing)
{
    weft_function_t *fused = compile(n_in, in, out, "fast_run");
    weft_function_t *plain = compile(n_in, in, out, "none");
    static char text[8192];
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    assert_int_equal(weft_function_print(fused, tmp), WEFT_OK);
    rewind(tmp);
    text[fread(text, 1, sizeof text - 1, tmp)] = '\0';
    fclose(tmp);
    if (!strstr(text, want_listing)) fprintf(stderr, "listing:\n%s\n", text);
    assert_non_null(strstr(text, want_listing));
    weft_tensor_t *r1 = NULL, *r2 = NULL;
    assert_int_equal(weft_function_call(fused, n_in, vals, 1, &r1), WEFT_OK);
    assert_int_equal(weft_function_call(plain, n_in, vals, 1, &r2), WEFT_OK);
    assert_int_equal(weft_tensor_dtype(r1), weft_tensor_dtype(r2));
    for (size_t i = 0; i < weft_tensor_size(r1); i++)
        assert_true(same_value(weft_tensor_flat_get(r1, i), weft_tensor_flat_get(r2, i)));
    weft_tensor_release(r1);
    weft_tensor_release(r2);
    weft_function_destroy(fused);
    weft_function_destroy(plain);
}

static void test_int_kinds_fuse_like_arithmetic(void **state)
{
    weft_graph_t *g = *state;
    int64_t s[1] = {300};
    uint64_t seed = 17;
    weft_var_t *x = fx_var(g, WEFT_FLOAT64, 1, s), *y = fx_var(g, WEFT_FLOAT64, 1, s);
    /* floor(mod(x, y) * x) - fmod(x, y) + floor_divide(trunc(x), y) */
    weft_var_t *f = weft_sub(g, weft_floor(g, weft_mul(g, weft_mod(g, x, y), x)),
                             weft_fmod(g, x, y));
    f = weft_add(g, f, weft_floor_divide(g, weft_trunc(g, x), y));
    f = weft_clip(g, f, weft_neg(g, y), y); /* a ternary step */
    assert_non_null(f);
    weft_tensor_t *fv[2] = {fx_random(WEFT_FLOAT64, 1, s, -9, 9, 0, &seed),
                            fx_random(WEFT_FLOAT64, 1, s, -3, 3, 0.2, &seed)};
    check_fused(2, (weft_var_t *[]){x, y}, fv,  f,
                "Composite{Clip(((Floor((Mod(i0, i1) * i0)) - Fmod(i0, i1)) + "
                "FloorDivide(Trunc(i0), i1)), Neg(i1), i1)}(<float64[300]>, <float64[300]>)");
    for (int k = 0; k < 2; k++) weft_tensor_release(fv[k]);
    /* integers: (i << j) & ~i ^ (i >> j), rounded and mod */
    weft_var_t *i = fx_var(g, WEFT_INT64, 1, s), *j = fx_var(g, WEFT_INT64, 1, s);
    weft_var_t *e = weft_bitwise_and(g, weft_left_shift(g, i, j), weft_invert(g, i));
    e = weft_mod(g, weft_bitwise_xor(g, e, weft_right_shift(g, i, j)), weft_round(g, j));
    assert_non_null(e);
    weft_tensor_t *iv[2] = {fx_random(WEFT_FLOAT64, 1, s, -1e6, 1e6, 0, &seed),
                            fx_random(WEFT_FLOAT64, 1, s, -3, 70, 0, &seed)};
    weft_tensor_t *ic[2];
    for (int k = 0; k < 2; k++) {
        assert_int_equal(weft_tensor_empty(WEFT_INT64, 1, s, &ic[k]), WEFT_OK);
        weft_tensor_copy(ic[k], iv[k]);
        weft_tensor_release(iv[k]);
    }
    check_fused(2, (weft_var_t *[]){i, j}, ic, e,
                "Composite{Mod(BitwiseXor(BitwiseAnd(LeftShift(i0, i1), Invert(i0)), "
                "RightShift(i0, i1)), Round(i1))}");
    for (int k = 0; k < 2; k++) weft_tensor_release(ic[k]);
}

/* Large loops split over 2 workers (fixed blocks) give the sequential
 * evaluator's values exactly: Mod and Clip (float64), shifts (int64) and
 * IsNan. */
static void test_int_kinds_split_over_workers_match_sequential(void **state)
{
    weft_graph_t *g = *state;
    int64_t s[2] = {400, 500};
    uint64_t seed = 23;
    weft_var_t *x = fx_var(g, WEFT_FLOAT64, 2, s), *y = fx_var(g, WEFT_FLOAT64, 2, s);
    weft_var_t *i = weft_cast(g, x, WEFT_INT64), *j = weft_cast(g, y, WEFT_INT64);
    weft_var_t *outs[4] = {weft_mod(g, x, y), weft_clip(g, x, y, weft_abs(g, y)),
                           weft_left_shift(g, i, j), weft_isnan(g, weft_fmod(g, x, y))};
    weft_tensor_t *v[2] = {fx_random(WEFT_FLOAT64, 2, s, -1e3, 1e3, 0, &seed),
                           fx_random(WEFT_FLOAT64, 2, s, -70, 70, 0, &seed)};
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.mode = "none";
    o.threads = 2;
    weft_function_t *fn = NULL;
    assert_int_equal(weft_function_compile(2, (weft_var_t *[]){x, y}, 4, outs, 0, NULL, &o, &fn),
                     WEFT_OK);
    weft_tensor_t *got[4] = {NULL};
    assert_int_equal(weft_function_call(fn, 2, v, 4, got), WEFT_OK);
    for (int k = 0; k < 4; k++) {
        weft_tensor_t *want = fx_eval(g, 2, (weft_var_t *[]){x, y}, v, outs[k]);
        for (size_t e = 0; e < weft_tensor_size(want); e++)
            assert_true(same_value(weft_tensor_flat_get(got[k], e),
                                   weft_tensor_flat_get(want, e)));
        weft_tensor_release(want);
        weft_tensor_release(got[k]);
    }
    weft_function_destroy(fn);
    for (int k = 0; k < 2; k++) weft_tensor_release(v[k]);
}

/* Save and load: the class names round-trip and the loaded graph computes
 * the same values. */
static void test_int_kinds_json_round_trip(void **state)
{
    weft_graph_t *g = *state, *g2;
    int64_t s[1] = {5};
    weft_var_t *x = fx_var(g, WEFT_FLOAT64, 1, s), *i = fx_var(g, WEFT_INT32, 1, s);
    weft_var_t *outs[] = {
        weft_mod(g, x, weft_cast(g, i, WEFT_FLOAT64)),
        weft_clip(g, x, weft_constant_scalar(g, WEFT_FLOAT64, -1),
                  weft_constant_scalar(g, WEFT_FLOAT64, 1)),
        weft_logical_xor(g, weft_isnan(g, x), weft_isinf(g, i)),
        weft_right_shift(g, weft_bitwise_or(g, i, i), weft_floor_divide(g, i, i)),
        weft_nan_to_num(g, weft_round(g, x)),
        weft_composite(g, 3, ((weft_var_t *[]){x, x, x}), 2, ((weft_composite_step_t[]){
                           {WEFT_ELEMWISE_CLIP, {0, 1, 2}}, {WEFT_ELEMWISE_MOD, {3, 0, 0}}})),
    };
    for (size_t k = 0; k < N_OF(outs); k++) assert_non_null(outs[k]);
    weft_var_t *in[2] = {x, i};
    weft_graph_io_t gr = {2, in, NULL, N_OF(outs), outs, 0, NULL};
    char *text = NULL;
    assert_int_equal(weft_graph_io_save(&gr, &text), WEFT_OK);
    const char *names[] = {"\"Mod\"", "\"Clip\"", "\"LogicalXor\"", "\"IsNan\"", "\"IsInf\"",
                           "\"RightShift\"", "\"BitwiseOr\"", "\"FloorDivide\"", "\"NanToNum\"",
                           "\"Round\"", "\"steps\":\"Clip(0,1,2) Mod(3,0)\""};
    for (size_t k = 0; k < N_OF(names); k++) assert_non_null(strstr(text, names[k]));
    assert_int_equal(weft_graph_create(NULL, &g2), WEFT_OK);
    weft_graph_io_t ld;
    weft_status_t st = weft_graph_io_load(g2, text, strlen(text), NULL, &ld);
    if (st != WEFT_OK) fprintf(stderr, "load: %s\n%s\n", weft_graph_last_error(g2), text);
    assert_int_equal(st, WEFT_OK);
    weft_tensor_t *v[2] = {fx_tensor(WEFT_FLOAT64, 1, s, (double[]){-7.5, NAN, 2.5, INFINITY, 3}),
                           fx_tensor(WEFT_INT32, 1, s, (double[]){3, -3, 0, 2, -7})};
    for (size_t k = 0; k < N_OF(outs); k++) {
        weft_tensor_t *r1 = fx_eval(g, 2, in, v, outs[k]);
        weft_tensor_t *r2 = fx_eval(g2, 2, ld.inputs, v, ld.outputs[k]);
        assert_int_equal(weft_tensor_dtype(r1), weft_tensor_dtype(r2));
        for (size_t e = 0; e < 5; e++) /* NaN where x is NaN */
            assert_true(same_value(weft_tensor_flat_get(r2, e), weft_tensor_flat_get(r1, e)));
        weft_tensor_release(r1);
        weft_tensor_release(r2);
    }
    for (int k = 0; k < 2; k++) weft_tensor_release(v[k]);
    weft_graph_io_clear(&ld);
    weft_graph_io_free_text(text);
    weft_graph_destroy(g2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)
        T(test_int_mod_floor_divide_fmod_follow_numpy_sign_rules_on_integers),
        T(test_int_mod_floor_divide_fmod_match_numpy_on_floats),
        T(test_int_rounding_kinds_exact_values_and_dtypes),
        T(test_int_sign_is_sgn_and_abs_takes_bool),
        T(test_int_isnan_isinf_isfinite_of_every_dtype),
        T(test_int_logical_kinds_treat_nonzero_as_true),
        T(test_int_bitwise_kinds_on_integers_and_bool),
        T(test_int_shifts_follow_numpy_out_of_range),
        T(test_int_nan_to_num_uses_the_dtype_extremes),
        T(test_int_clip_matches_numpy_with_nan_and_signed_zero),
        T(test_int_dtype_errors_name_the_kind_and_the_rule),
        T(test_int_mod_fmod_clip_nan_to_num_pass_verify_grad),
        T(test_int_step_functions_have_zero_gradient_and_clip_includes_bounds),
        T(test_int_inplace_variants_write_into_their_input),
        T(test_int_kinds_fuse_like_arithmetic),
        T(test_int_kinds_split_over_workers_match_sequential),
        T(test_int_kinds_json_round_trip),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
