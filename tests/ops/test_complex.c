/* complex64 / complex128 (docs/dtypes.md, "Complex numbers"): tensor
 * conversions and element access, .npy and JSON round trips, every
 * elementwise kind on complex inputs against NumPy 1.24's values (bit for
 * bit, inf and NaN parts included; the tables were printed by NumPy on this
 * machine's Debian 12 python3-numpy), promotion, dtype errors with their
 * messages, and Composite's refusal. */
#define _POSIX_C_SOURCE 200809L /* mkstemp */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/cmplx.h" /* <complex.h>, with CMPLX under clang too */
#include "ops_fixture.h"
#include "weft/composite.h"
#include "weft/grad.h"
#include "weft/graph_io.h"
#include "weft/fgraph.h"
#include "weft/function.h"
#include "weft/rewrite.h"
#include "weft/rewrite_db.h"
#include "weft/linalg.h"
#include "weft/npy.h"
#include "weft/reduce.h"

/* NumPy's values (see the file comment): a and b are the inputs, 8
 * complex128 elements as (re, im) pairs; want_X is np.X(a[, b]). */
static const double want_a[] = {1.0, 2.0, -3.5, 0.25, 0.0, 0.0, 1e+300, 1e+300, INFINITY, 1.0, NAN, 0.0, -0.0, -2.0, 2.0, 0.0};
static const double want_b[] = {3.0, -4.0, 0.0, 0.0, 1e-300, 1e-300, 1e+300, -1e+300, 2.0, 0.0, 1.0, 1.0, 0.5, 0.0, 1e-310, 3.0};
static const double want_add[] = {4.0, -2.0, -3.5, 0.25, 1e-300, 1e-300, 2e+300, 0.0, INFINITY, 1.0, NAN, 1.0, 0.5, -2.0, 2.0, 3.0};
static const double want_sub[] = {-2.0, 6.0, -3.5, 0.25, -1e-300, -1e-300, 0.0, 2e+300, INFINITY, 1.0, NAN, -1.0, -0.5, -2.0, 2.0, -3.0};
static const double want_mul[] = {11.0, 2.0, -0.0, 0.0, 0.0, 0.0, INFINITY, NAN, INFINITY, NAN, NAN, NAN, 0.0, -1.0, 2e-310, 6.0};
static const double want_div[] = {-0.2, 0.4, -INFINITY, INFINITY, 0.0, 0.0, 0.0, 1.0, INFINITY, NAN, NAN, NAN, -0.0, -4.0, 2.222222222222e-311, -0.6666666666666666};
static const double want_pow[] = {932.1391946432217, 95.94653366034154, 1.0, 0.0, NAN, NAN, INFINITY, INFINITY, INFINITY, INFINITY, NAN, NAN, 1.0, -0.9999999999999998, -0.48699441796578125, 0.8734050817748715};
static const double want_neg[] = {-1.0, -2.0, 3.5, -0.25, -0.0, -0.0, -1e+300, -1e+300, -INFINITY, -1.0, NAN, -0.0, 0.0, 2.0, -2.0, -0.0};
static const double want_sqr[] = {-3.0, 4.0, 12.1875, -1.75, 0.0, 0.0, NAN, INFINITY, INFINITY, INFINITY, NAN, NAN, -4.0, 0.0, 4.0, 0.0};
static const double want_exp[] = {-1.1312043837568135, 2.4717266720048188, 0.029258619901043496, 0.007470952217808493, 1.0, 0.0, -INFINITY, -INFINITY, INFINITY, INFINITY, NAN, 0.0, -0.4161468365471424, -0.9092974268256817, 7.38905609893065, 0.0};
static const double want_log[] = {0.8047189562170503, 1.1071487177940904, 1.2553075032491037, 3.070285188804503, -INFINITY, 0.0, 691.1221014884936, 0.7853981633974483, INFINITY, 0.0, NAN, NAN, 0.6931471805599453, -1.5707963267948966, 0.6931471805599453, 0.0};
static const double want_sqrt[] = {1.272019649514069, 0.7861513777574233, 0.0667727935036041, 1.8720199266974362, 0.0, 0.0, 1.09868411346781e+150, 4.550898605622274e+149, INFINITY, 0.0, NAN, NAN, 1.0, -1.0, 1.4142135623730951, 0.0};
static const double want_sin[] = {3.165778513216168, 1.9596010414216063, 0.3618024162571129, -0.23656049336703044, 0.0, 0.0, -INFINITY, -INFINITY, NAN, NAN, NAN, 0.0, -0.0, -3.626860407847019, 0.9092974268256817, -0.0};
static const double want_cos[] = {2.0327230070196656, -3.0518977991518, -0.9658736947415564, -0.08861216384412209, 1.0, -0.0, -INFINITY, INFINITY, NAN, NAN, NAN, 0.0, 3.7621956910836314, -0.0, -0.4161468365471424, -0.0};
static const double want_tanh[] = {1.16673625724092, -0.2434582011857253, -0.9984003950229746, 0.0008729611018350542, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, NAN, 0.0, -0.0, 2.185039863261519, 0.9640275800758168, 0.0};
static const double want_abs[] = {2.23606797749979, 3.50891721190455, 0.0, 1.4142135623730952e+300, INFINITY, NAN, 2.0, 2.0};
static const double want_real[] = {1.0, -3.5, 0.0, 1e+300, INFINITY, NAN, -0.0, 2.0};
static const double want_imag[] = {2.0, 0.25, 0.0, 1e+300, 1.0, 0.0, -2.0, 0.0};
static const double want_conj[] = {1.0, -2.0, -3.5, -0.25, 0.0, -0.0, 1e+300, -1e+300, INFINITY, -1.0, NAN, -0.0, -0.0, 2.0, 2.0, -0.0};
static const double want_angle[] = {1.1071487177940904, 3.070285188804503, 0.0, 0.7853981633974483, 0.0, NAN, -1.5707963267948966, 0.0};
static const double want_eq[] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
static const double want_ne[] = {1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0};
static const double want_pz[] = {2.0, 0.0, 3.0, 0.0, -2.0, 0.0, 0.5, 0.0, 0.0, 0.0, 7.0, 0.0, -1.0, 0.0, 100.0, 0.0};
static const double want_powint[] = {-3.0, 4.0, -11.0, -2.0, -0.12, -0.16, 1.272019649514069, 0.7861513777574233, 1.0, 0.0, 29.0, 278.0, 0.2, -0.4, -6.443164690986047e+34, -6.113241307762496e+34};
static const double want_div64[] = {-0.19999998807907104, 0.3999999761581421, -INFINITY, INFINITY, NAN, NAN, NAN, NAN, INFINITY, NAN, NAN, NAN, -0.0, -4.0, 0.0, -0.6666666865348816};
static const double want_mul64[] = {11.0, 2.0, -0.0, 0.0, 0.0, 0.0, INFINITY, NAN, INFINITY, NAN, NAN, NAN, 0.0, -1.0, 0.0, 6.0};
static const double want_abs64[] = {2.2360680103302, 3.5089170932769775, 0.0, INFINITY, INFINITY, NAN, 2.0, 2.0};

/* Same double: equal bits for numbers (so -0.0 differs from 0.0), any NaN
 * equals any NaN. */
static void expect_same(double got, double want, size_t i)
{
    if (isnan(want) && isnan(got)) return;
    if (got != want || signbit(got) != signbit(want))
        fail_msg("element %zu: got %.17g, want %.17g", i, got, want);
}

/* The complex128 tensor of n (re, im) pairs. */
static weft_tensor_t *cx_tensor(weft_dtype_t dt, size_t n, const double *pairs)
{
    int64_t shape[1] = {(int64_t)n};
    weft_tensor_t *t;
    assert_int_equal(weft_tensor_empty(dt, 1, shape, &t), WEFT_OK);
    for (int64_t i = 0; i < (int64_t)n; i++)
        assert_int_equal(weft_tensor_set_complex(t, &i, pairs[2 * i], pairs[2 * i + 1]), WEFT_OK);
    return t;
}

/* Every element of t read as (re, im) against pairs (or, real_want, against
 * n reals with im 0). */
static void expect_cx(const weft_tensor_t *t, const double *pairs, size_t n)
{
    assert_int_equal(weft_tensor_size(t), n);
    weft_tensor_t *c; /* C order, as complex128 */
    assert_int_equal(weft_tensor_copy_as(t, WEFT_COMPLEX128, &c), WEFT_OK);
    const double *d = weft_tensor_data(c);
    for (size_t i = 0; i < 2 * n; i++) expect_same(d[i], pairs[i], i / 2);
    weft_tensor_release(c);
}
static void expect_real(const weft_tensor_t *t, const double *want, size_t n)
{
    assert_int_equal(weft_tensor_size(t), n);
    for (size_t i = 0; i < n; i++) expect_same(weft_tensor_flat_get(t, i), want[i], i);
}

#define PI 3.14159265358979323846

/* ---- tensors ------------------------------------------------------------------------ */

static void test_convert(void **state)
{
    (void)state;
    static const double z[] = {1.75, -2.5, -3.9, 0.0, 0.0, -0.0, NAN, 1.0, 3e9, 1.0};
    weft_tensor_t *c = cx_tensor(WEFT_COMPLEX128, 5, z), *o;
    static const double want_f64[] = {1.75, -3.9, 0.0, NAN, 3e9};
    assert_int_equal(weft_tensor_copy_as(c, WEFT_FLOAT64, &o), WEFT_OK);
    expect_real(o, want_f64, 5); /* the imaginary part dropped */
    weft_tensor_release(o);
    static const double want_i32[] = {1, -3, 0, INT32_MIN, INT32_MIN}; /* as float64 -> int32 */
    assert_int_equal(weft_tensor_copy_as(c, WEFT_INT32, &o), WEFT_OK);
    expect_real(o, want_i32, 5);
    weft_tensor_release(o);
    static const double want_bool[] = {1, 1, 0, 1, 1}; /* re != 0 || im != 0 */
    assert_int_equal(weft_tensor_copy_as(c, WEFT_BOOL, &o), WEFT_OK);
    expect_real(o, want_bool, 5);
    weft_tensor_release(o);
    static const double want_c64[] = {1.75, -2.5, -3.9000000953674316, 0.0, 0.0, -0.0,
                                      NAN,  1.0,  3e9,                 1.0};
    assert_int_equal(weft_tensor_copy_as(c, WEFT_COMPLEX64, &o), WEFT_OK);
    assert_int_equal(weft_tensor_dtype(o), WEFT_COMPLEX64);
    expect_cx(o, want_c64, 5);
    weft_tensor_t *back;
    assert_int_equal(weft_tensor_copy_as(o, WEFT_COMPLEX128, &back), WEFT_OK);
    expect_cx(back, want_c64, 5);
    weft_tensor_release(back);
    weft_tensor_release(o);
    weft_tensor_release(c);
    /* real -> complex: imaginary +0 */
    int64_t shape[1] = {3};
    static const double r[] = {-7, 0, 2147483647};
    weft_tensor_t *ri = fx_tensor(WEFT_INT64, 1, shape, r);
    static const double want_ri[] = {-7, 0, 0, 0, 2147483647, 0};
    assert_int_equal(weft_tensor_copy_as(ri, WEFT_COMPLEX128, &o), WEFT_OK);
    expect_cx(o, want_ri, 3);
    weft_tensor_release(o);
    static const double want_ri64[] = {-7, 0, 0, 0, 2147483648.0, 0}; /* rounded to float32 */
    assert_int_equal(weft_tensor_copy_as(ri, WEFT_COMPLEX64, &o), WEFT_OK);
    expect_cx(o, want_ri64, 3);
    weft_tensor_release(o);
    weft_tensor_release(ri);
}

static void test_full_fill_get(void **state)
{
    (void)state;
    int64_t shape[2] = {2, 3};
    weft_tensor_t *t;
    assert_int_equal(weft_tensor_full(WEFT_COMPLEX128, 2, shape, -1.5, &t), WEFT_OK);
    static const double want[] = {-1.5, 0, -1.5, 0, -1.5, 0, -1.5, 0, -1.5, 0, -1.5, 0};
    expect_cx(t, want, 6);
    int64_t idx[2] = {1, 2}, bad[2] = {2, 0};
    assert_int_equal(weft_tensor_set_complex(t, idx, 4, -8), WEFT_OK);
    double re = 0, im = 0, d = 0;
    assert_int_equal(weft_tensor_get_complex(t, idx, &re, &im), WEFT_OK);
    assert_true(re == 4 && im == -8);
    assert_int_equal(weft_tensor_get(t, idx, &d), WEFT_OK);
    assert_true(d == 4); /* the real part */
    assert_int_equal(weft_tensor_get_complex(t, bad, &re, &im), WEFT_ERANGE);
    assert_string_equal(weft_tensor_last_error(), "index 2 outside [0, 2) in dimension 0");
    assert_int_equal(weft_tensor_get_complex(t, idx, NULL, &im), WEFT_EINVAL);
    assert_int_equal(weft_tensor_fill(t, 2.0), WEFT_OK);
    assert_int_equal(weft_tensor_get_complex(t, idx, &re, &im), WEFT_OK);
    assert_true(re == 2 && im == 0);
    weft_tensor_release(t);
    /* a real tensor read as complex, written from complex */
    assert_int_equal(weft_tensor_full(WEFT_FLOAT32, 2, shape, 3.0, &t), WEFT_OK);
    assert_int_equal(weft_tensor_set_complex(t, idx, 5, 9), WEFT_OK);
    assert_int_equal(weft_tensor_get_complex(t, idx, &re, &im), WEFT_OK);
    assert_true(re == 5 && im == 0);
    weft_tensor_release(t);
    /* allclose compares both parts */
    static const double p[] = {1, 2}, q[] = {1, 2.5};
    weft_tensor_t *a = cx_tensor(WEFT_COMPLEX64, 1, p), *b = cx_tensor(WEFT_COMPLEX128, 1, q);
    bool eq = true;
    assert_int_equal(weft_tensor_allclose(a, b, 0, 0.4, &eq), WEFT_OK);
    assert_false(eq);
    assert_int_equal(weft_tensor_allclose(a, b, 0, 0.5, &eq), WEFT_OK);
    assert_true(eq);
    weft_tensor_release(a);
    weft_tensor_release(b);
}

static void test_npy_roundtrip(void **state)
{
    (void)state;
    char path[] = "/tmp/weft_test_complex______";
    memset(path + sizeof path - 7, 'X', 6); /* mkstemp's six-letter template */
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    for (int k = 0; k < 2; k++) {
        weft_dtype_t dt = k ? WEFT_COMPLEX128 : WEFT_COMPLEX64;
        weft_tensor_t *t = cx_tensor(dt, 8, want_b), *r = NULL;
        char msg[256];
        assert_int_equal(weft_npy_save(path, t, msg, sizeof msg), WEFT_OK);
        FILE *f = fopen(path, "rb");
        char hdr[129] = {0};
        assert_int_equal(fread(hdr, 1, 128, f), 128);
        fclose(f);
        assert_non_null(strstr(hdr + 10, k ? "'descr': '<c16'" : "'descr': '<c8'"));
        assert_int_equal(weft_npy_load(path, &r, msg, sizeof msg), WEFT_OK);
        assert_int_equal(weft_tensor_dtype(r), dt);
        bool eq = false;
        assert_int_equal(weft_tensor_allclose(r, t, 0, 0, &eq), WEFT_OK);
        assert_true(eq);
        weft_tensor_release(r);
        weft_tensor_release(t);
    }
    unlink(path);
}

/* A complex128 constant (inf and NaN parts) saved as [re, im] pairs and
 * loaded back; its value flows through Add. */
static void test_json_roundtrip(void **state)
{
    weft_graph_t *g = *state;
    const weft_type_t *t;
    int64_t shape[1] = {3};
    static const double data[] = {1.5, -2.0, INFINITY, NAN, -0.0, 1e-310};
    assert_int_equal(weft_type_tensor(g, WEFT_COMPLEX128, 1, shape, &t), WEFT_OK);
    weft_var_t *c = weft_constant_create(g, t, data, sizeof data);
    weft_var_t *x = fx_var(g, WEFT_COMPLEX128, 1, shape), *y = weft_add(g, x, c);
    assert_non_null(y);
    char buf[64];
    weft_var_print(c, buf, sizeof buf);
    assert_string_equal(buf, "[(1.5-2j), (inf+nanj), (-0+1e-310j)]");
    weft_graph_io_t io = {.n_inputs = 1, .inputs = &x, .n_outputs = 1, .outputs = &y};
    char *text = NULL;
    assert_int_equal(weft_graph_io_save(&io, &text), WEFT_OK);
    assert_non_null(strstr(text, "\"dtype\":\"complex128\""));
    assert_non_null(strstr(text, "\"data\":[[1.5,-2.0],[\"inf\",\"nan\"],[-0.0,9.9999999999999694e-311]]"));
    weft_graph_t *g2;
    assert_int_equal(weft_graph_create(NULL, &g2), WEFT_OK);
    weft_graph_io_t back = {0};
    assert_int_equal(weft_graph_io_load(g2, text, strlen(text), NULL, &back), WEFT_OK);
    weft_graph_io_free_text(text);
    static const double zeros[6] = {0};
    weft_tensor_t *xv = cx_tensor(WEFT_COMPLEX128, 3, zeros);
    weft_tensor_t *r = fx_eval(g2, 1, back.inputs, &xv, back.outputs[0]);
    static const double sum[] = {1.5, -2.0, INFINITY, NAN, 0.0, 1e-310}; /* 0 + -0 is +0 */
    expect_cx(r, sum, 3);
    weft_tensor_release(r);
    weft_tensor_release(xv);
    /* a malformed element */
    weft_graph_io_clear(&back);
    const char *bad = "{\"format\": \"weft-graph\", \"version\": 1, \"inputs\": [], "
                      "\"constants\": [{\"id\": 0, \"dtype\": \"complex64\", \"shape\": [], "
                      "\"data\": [[1.0]]}], \"nodes\": [], \"outputs\": [0]}";
    assert_int_equal(weft_graph_io_load(g2, bad, strlen(bad), NULL, &back), WEFT_EPARSE);
    assert_non_null(strstr(weft_graph_last_error(g2), "value 0 is not a complex64"));
    weft_graph_destroy(g2);
}

/* ---- elementwise ------------------------------------------------------------------ */

/* kind on (a[, b]) of dtype dt, evaluated. */
static weft_tensor_t *run_kind(weft_graph_t *g, weft_elemwise_kind_t k, weft_dtype_t dt,
                               const double *a, const double *b)
{
    int64_t shape[1] = {8};
    weft_var_t *v[2] = {fx_var(g, dt, 1, shape), fx_var(g, dt, 1, shape)};
    weft_tensor_t *t[2] = {cx_tensor(dt, 8, a), cx_tensor(dt, 8, b ? b : a)};
    size_t n = weft_elemwise_arity(k);
    weft_var_t *y = weft_elemwise(g, k, n, v);
    if (!y) fail_msg("%s: %s", weft_elemwise_name(k), weft_graph_error_message(g));
    weft_tensor_t *r = fx_eval(g, n, v, t, y);
    weft_tensor_release(t[0]);
    weft_tensor_release(t[1]);
    return r;
}

/* kind on (a[, b]) of dtype dt against want: complex pairs, or reals
 * (real_out: Abs, Real, Imag, Angle; bool for Eq/Ne). */
typedef struct kind_case {
    weft_elemwise_kind_t k;
    weft_dtype_t dt;
    const double *a, *b, *want;
    bool real_out;
} kind_case_t;

static void check_kinds(weft_graph_t *g, const kind_case_t *cases, size_t n)
{
    for (size_t c = 0; c < n; c++) {
        weft_tensor_t *r = run_kind(g, cases[c].k, cases[c].dt, cases[c].a, cases[c].b);
        if (cases[c].real_out)
            expect_real(r, cases[c].want, 8);
        else
            expect_cx(r, cases[c].want, 8);
        weft_tensor_release(r);
    }
}

static void test_binary_kinds(void **state)
{
    weft_graph_t *g = *state;
    static const double z12[16] = {1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2};
    static const double ne_self[] = {0, 0, 0, 0, 0, 1, 0, 0}; /* NaN != NaN */
    const weft_dtype_t C128 = WEFT_COMPLEX128, C64 = WEFT_COMPLEX64;
    const kind_case_t cases[] = {
        {WEFT_ELEMWISE_ADD, C128, want_a, want_b, want_add, false},
        {WEFT_ELEMWISE_SUB, C128, want_a, want_b, want_sub, false},
        {WEFT_ELEMWISE_MUL, C128, want_a, want_b, want_mul, false},
        {WEFT_ELEMWISE_DIV, C128, want_a, want_b, want_div, false},
        {WEFT_ELEMWISE_POW, C128, want_a, want_b, want_pow, false},
        {WEFT_ELEMWISE_POW, C128, z12, want_pz, want_powint, false}, /* integral exponents */
        {WEFT_ELEMWISE_EQ, C128, want_a, want_b, want_eq, true},
        {WEFT_ELEMWISE_NE, C128, want_a, want_b, want_ne, true},
        {WEFT_ELEMWISE_NE, C128, want_a, want_a, ne_self, true},
        /* complex64: computed in float32 (Smith's division in float: 1e300 is inf there) */
        {WEFT_ELEMWISE_DIV, C64, want_a, want_b, want_div64, false},
        {WEFT_ELEMWISE_MUL, C64, want_a, want_b, want_mul64, false},
    };
    check_kinds(g, cases, sizeof cases / sizeof cases[0]);
    weft_tensor_t *r = run_kind(g, WEFT_ELEMWISE_EQ, C128, want_a, want_b);
    assert_int_equal(weft_tensor_dtype(r), WEFT_BOOL);
    weft_tensor_release(r);
}

/* Smith's division's branches and zero divisors, as NumPy's nc_quot. */
static void test_smith_division(void **state)
{
    weft_graph_t *g = *state;
    /* |br| >= |bi|; |br| < |bi|; 0 divisor (x/0 per part: inf, NaN); huge parts
     * that the textbook formula (ar br + ai bi) / (br^2 + bi^2) overflows */
    static const double a[] = {1, 1, 1, 1, 1, 0, 0, 0, 1e308, 1e308, -1, 0, 2, 3, 4, 5};
    static const double b[] = {2, 1, 1, 2, 0, 0, 0, 0, 1e308, 1e308, 0, -0.0, 1, 0, 0, 1};
    weft_tensor_t *r = run_kind(g, WEFT_ELEMWISE_DIV, WEFT_COMPLEX128, a, b);
    /* NumPy 1.24's a / b (1e308(1+j) / itself is NaN there too: the scale
     * 1 / (br + bi rat) is 1 / inf) */
    static const double numpy[] = {0.6000000000000001, 0.2, 0.6000000000000001, -0.2, INFINITY, NAN,
                                   NAN, NAN, NAN, 0.0, -INFINITY, NAN, 2.0, 3.0, 5.0, -4.0};
    expect_cx(r, numpy, 8);
    weft_tensor_release(r);
}

static void test_unary_kinds(void **state)
{
    weft_graph_t *g = *state;
    const weft_dtype_t C128 = WEFT_COMPLEX128;
    const kind_case_t cases[] = {
        {WEFT_ELEMWISE_NEG, C128, want_a, NULL, want_neg, false},
        {WEFT_ELEMWISE_SQR, C128, want_a, NULL, want_sqr, false},
        {WEFT_ELEMWISE_EXP, C128, want_a, NULL, want_exp, false},
        {WEFT_ELEMWISE_LOG, C128, want_a, NULL, want_log, false},
        {WEFT_ELEMWISE_SQRT, C128, want_a, NULL, want_sqrt, false},
        {WEFT_ELEMWISE_SIN, C128, want_a, NULL, want_sin, false},
        {WEFT_ELEMWISE_COS, C128, want_a, NULL, want_cos, false},
        {WEFT_ELEMWISE_TANH, C128, want_a, NULL, want_tanh, false},
        {WEFT_ELEMWISE_CONJ, C128, want_a, NULL, want_conj, false},
        {WEFT_ELEMWISE_ABS, C128, want_a, NULL, want_abs, true},
        {WEFT_ELEMWISE_REAL, C128, want_a, NULL, want_real, true},
        {WEFT_ELEMWISE_IMAG, C128, want_a, NULL, want_imag, true},
        {WEFT_ELEMWISE_ANGLE, C128, want_a, NULL, want_angle, true},
        {WEFT_ELEMWISE_ABS, WEFT_COMPLEX64, want_a, NULL, want_abs64, true},
    };
    check_kinds(g, cases, sizeof cases / sizeof cases[0]);
    /* the real results have the parts' dtype */
    weft_tensor_t *r = run_kind(g, WEFT_ELEMWISE_ABS, WEFT_COMPLEX64, want_a, NULL);
    assert_int_equal(weft_tensor_dtype(r), WEFT_FLOAT32);
    weft_tensor_release(r);
    r = run_kind(g, WEFT_ELEMWISE_ANGLE, C128, want_a, NULL);
    assert_int_equal(weft_tensor_dtype(r), WEFT_FLOAT64);
    weft_tensor_release(r);
}

/* Complex(re, im) and the complex family on real inputs (np.real/imag/conj
 * of a real array: itself, zeros, itself; np.angle: 0 or pi). */
static void test_complex_family_real(void **state)
{
    weft_graph_t *g = *state;
    int64_t shape[1] = {4};
    static const double re[] = {1, -2, 0, -0.0}, im[] = {0.5, NAN, -3, 4};
    weft_var_t *v[2] = {fx_var(g, WEFT_FLOAT32, 1, shape), fx_var(g, WEFT_INT32, 1, shape)};
    weft_tensor_t *t[2] = {fx_tensor(WEFT_FLOAT32, 1, shape, re),
                           fx_tensor(WEFT_INT32, 1, shape, (const double[]){7, -1, 0, 2})};
    weft_var_t *z = weft_complex(g, v[0], v[0]);
    assert_int_equal(weft_type_dtype(weft_var_type(z)), WEFT_COMPLEX64);
    weft_var_t *zi = weft_complex(g, v[0], v[1]); /* float32 with int32: float64 parts */
    assert_int_equal(weft_type_dtype(weft_var_type(zi)), WEFT_COMPLEX128);
    weft_tensor_t *r = fx_eval(g, 2, v, t, zi);
    static const double want_zi[] = {1, 7, -2, -1, 0, 0, -0.0, 2};
    expect_cx(r, want_zi, 4);
    weft_tensor_release(r);
    static const struct {
        weft_elemwise_kind_t k;
        weft_dtype_t out;
        double want[4];
    } cases[] = {{WEFT_ELEMWISE_REAL, WEFT_FLOAT32, {1, -2, 0, -0.0}},
                 {WEFT_ELEMWISE_IMAG, WEFT_FLOAT32, {0, 0, 0, 0}},
                 {WEFT_ELEMWISE_CONJ, WEFT_FLOAT32, {1, -2, 0, -0.0}},
                 {WEFT_ELEMWISE_ANGLE, WEFT_FLOAT32, {0, (float)PI, 0, (float)PI}}};
    for (size_t c = 0; c < 4; c++) {
        weft_var_t *y = weft_unary(g, cases[c].k, v[0]);
        assert_int_equal(weft_type_dtype(weft_var_type(y)), cases[c].out);
        r = fx_eval(g, 1, v, t, y);
        expect_real(r, cases[c].want, 4);
        weft_tensor_release(r);
    }
    weft_var_t *ai = weft_angle(g, v[1]); /* int32: float64, as np.angle */
    assert_int_equal(weft_type_dtype(weft_var_type(ai)), WEFT_FLOAT64);
    r = fx_eval(g, 2, v, t, ai);
    expect_real(r, (const double[]){0, PI, 0, 0}, 4);
    weft_tensor_release(r);
    (void)im;
    weft_tensor_release(t[0]);
    weft_tensor_release(t[1]);
}

/* weft_dtype_promote: float64 + complex64 is complex128 (NumPy), float32 +
 * complex64 complex64; a Python-float scalar keeps the complex dtype. */
static void test_promotion(void **state)
{
    weft_graph_t *g = *state;
    int64_t shape[1] = {2};
    weft_var_t *c64 = fx_var(g, WEFT_COMPLEX64, 1, shape), *f64 = fx_var(g, WEFT_FLOAT64, 1, shape);
    weft_var_t *f32 = fx_var(g, WEFT_FLOAT32, 1, shape), *i64 = fx_var(g, WEFT_INT64, 1, shape);
    assert_int_equal(weft_type_dtype(weft_var_type(weft_add(g, f64, c64))), WEFT_COMPLEX128);
    assert_int_equal(weft_type_dtype(weft_var_type(weft_mul(g, c64, f32))), WEFT_COMPLEX64);
    assert_int_equal(weft_type_dtype(weft_var_type(weft_sub(g, i64, c64))), WEFT_COMPLEX128);
    assert_int_equal(weft_type_dtype(weft_var_type(weft_mul_scalar(g, c64, 0.5))),
                     WEFT_COMPLEX64);
    weft_var_t *v[2] = {f64, c64};
    weft_var_t *y = weft_add(g, f64, c64);
    weft_tensor_t *t[2] = {fx_tensor(WEFT_FLOAT64, 1, shape, (const double[]){0.1, 2}),
                           cx_tensor(WEFT_COMPLEX64, 2, (const double[]){1, 1, 0.5, -3})};
    weft_tensor_t *r = fx_eval(g, 2, v, t, y);
    expect_cx(r, (const double[]){1.1, 1, 2.5, -3}, 2); /* 0.1 not rounded to float32 */
    weft_tensor_release(r);
    weft_var_t *cf = weft_cast(g, c64, WEFT_INT32);
    r = fx_eval(g, 2, v, t, cf);
    expect_real(r, (const double[]){1, 0}, 2);
    weft_tensor_release(r);
    weft_var_t *sw = weft_switch(g, weft_gt(g, f64, weft_constant_scalar(g, WEFT_FLOAT64, 1)),
                                 c64, f64);
    r = fx_eval(g, 2, v, t, sw);
    expect_cx(r, (const double[]){0.1, 0, 0.5, -3}, 2);
    weft_tensor_release(r);
    weft_tensor_release(t[0]);
    weft_tensor_release(t[1]);
}

static void expect_error(weft_graph_t *g, weft_var_t *y, const char *msg)
{
    assert_null(y);
    assert_int_equal(weft_graph_error(g), WEFT_ETYPE);
    assert_non_null(strstr(weft_graph_error_message(g), msg));
    weft_graph_clear_error(g);
}

static void test_dtype_errors(void **state)
{
    weft_graph_t *g = *state;
    int64_t shape[1] = {2};
    weft_var_t *c = fx_var(g, WEFT_COMPLEX128, 1, shape), *f = fx_var(g, WEFT_FLOAT32, 1, shape);
    weft_var_t *c64 = fx_var(g, WEFT_COMPLEX64, 1, shape);
    expect_error(g, weft_sigmoid(g, c),
                 "Sigmoid: input 0 is complex128; Sigmoid is not defined for complex numbers");
    expect_error(g, weft_maximum(g, f, c64),
                 "Maximum: input 1 is complex64; complex numbers have no order in weft "
                 "(compare their Real or Abs)");
    expect_error(g, weft_lt(g, c, f), "Lt: input 0 is complex128; complex numbers have no order");
    expect_error(g, weft_complex(g, f, c),
                 "Complex: input 1 (the imaginary part) is complex128; the parts must be real");
    expect_error(g, weft_angle(g, fx_var(g, WEFT_BOOL, 1, shape)),
                 "Angle: input 0 is bool; a numeric input is required");
    expect_error(g, weft_angle(g, fx_var(g, WEFT_FLOAT16, 1, shape)),
                 "Angle: float16 is not supported by Angle");
    /* the rounding / integer / logical and float math kinds: refused on
     * complex, saying whether NumPy has a complex loop */
    expect_error(g, weft_floor(g, c), "Floor: input 0 is complex128; Floor is not defined for "
                                      "complex numbers");
    expect_error(g, weft_erf(g, c64), "Erf: input 0 is complex64; Erf is not defined for "
                                      "complex numbers");
    expect_error(g, weft_arctan2(g, f, c), "Arctan2: input 1 is complex128; Arctan2 is not "
                                           "defined for complex numbers");
    expect_error(g, weft_clip(g, c, f, f), "Clip: input 0 is complex128; Clip is not defined "
                                           "for complex numbers");
    expect_error(g, weft_tan(g, c), "Tan: input 0 is complex128; weft does not compute Tan on "
                                    "complex numbers yet");
    expect_error(g, weft_isnan(g, c64), "IsNan: input 0 is complex64; weft does not compute "
                                        "IsNan on complex numbers yet");
    expect_error(g, weft_logical_and(g, f, c), "LogicalAnd: input 1 is complex128; weft does "
                                               "not compute LogicalAnd on complex numbers yet");
    /* Composite computes no complex numbers */
    weft_composite_step_t step = {WEFT_ELEMWISE_NEG, {0, 0}};
    expect_error(g, weft_composite(g, 1, &c, 1, &step),
                 "Composite: inputs are complex128; Composite does not compute complex numbers");
    step.kind = WEFT_ELEMWISE_COMPLEX;
    step.arg[1] = 1;
    weft_var_t *ff[2] = {fx_var(g, WEFT_FLOAT64, 1, shape), fx_var(g, WEFT_FLOAT64, 1, shape)};
    expect_error(g, weft_composite(g, 2, ff, 1, &step),
                 "Composite: step 0 (Complex) makes complex numbers");
}

/* ---- Dot: cgemm / zgemm / gemv / dotu against a naive triple loop ---------------------- */

/* Deterministic complex values in [-1, 1) (a 64-bit LCG). */
static weft_tensor_t *cx_random(weft_dtype_t dt, int nd, const int64_t *shape, uint64_t *seed)
{
    weft_tensor_t *t;
    assert_int_equal(weft_tensor_empty(WEFT_COMPLEX128, nd, shape, &t), WEFT_OK);
    double *d = weft_tensor_data(t);
    for (size_t i = 0; i < 2 * weft_tensor_size(t); i++) {
        *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
        d[i] = (double)(*seed >> 11) / 4503599627370496.0 - 1.0; /* 53 bits / 2^52 - 1 */
    }
    weft_tensor_t *c;
    assert_int_equal(weft_tensor_copy_as(t, dt, &c), WEFT_OK);
    weft_tensor_release(t);
    return c;
}

/* Element (i, j) of a 2-D tensor (a 1-D one: row i = 0 or column j = 0 as
 * asked) as complex128. */
static double _Complex cx_at(const weft_tensor_t *t, int64_t i, int64_t j)
{
    int64_t idx[2] = {i, j};
    double re, im;
    const int64_t *ix = weft_tensor_ndim(t) == 2 ? idx : (i ? &idx[0] : &idx[1]);
    assert_int_equal(weft_tensor_get_complex(t, ix, &re, &im), WEFT_OK);
    return CMPLX(re, im);
}

/* x @ y (ranks 1-2) evaluated by weft, against sum_k x[i,k] y[k,j] in
 * long double complex, with a tolerance of the dtype's precision. */
static void check_dot(weft_graph_t *g, weft_dtype_t dt, int nx, const int64_t *sx, int ny,
                      const int64_t *sy, uint64_t seed)
{
    weft_tensor_t *t[2] = {cx_random(dt, nx, sx, &seed), cx_random(dt, ny, sy, &seed)};
    weft_var_t *v[2] = {fx_var(g, dt, nx, sx), fx_var(g, dt, ny, sy)};
    weft_var_t *y = weft_dot(g, v[0], v[1]);
    assert_non_null(y);
    assert_int_equal(weft_type_dtype(weft_var_type(y)), dt);
    weft_tensor_t *r = fx_eval(g, 2, v, t, y);
    int64_t m = nx == 2 ? sx[0] : 1, k = sx[nx - 1], n = ny == 2 ? sy[1] : 1;
    double tol = (dt == WEFT_COMPLEX64 ? 1e-5 : 1e-13) * (double)k;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            long double _Complex want = 0;
            for (int64_t q = 0; q < k; q++)
                want += (long double _Complex)cx_at(t[0], nx == 2 ? i : 0, nx == 2 ? q : q) *
                        (long double _Complex)cx_at(t[1], ny == 2 ? q : q, ny == 2 ? j : 0);
            double _Complex got;
            if (weft_tensor_ndim(r) == 0) {
                double re, im;
                assert_int_equal(weft_tensor_get_complex(r, NULL, &re, &im), WEFT_OK);
                got = CMPLX(re, im);
            } else if (weft_tensor_ndim(r) == 1) {
                got = cx_at(r, nx == 2 ? i : 0, nx == 2 ? 0 : j);
            } else {
                got = cx_at(r, i, j);
            }
            if (cabs(got - (double _Complex)want) > tol)
                fail_msg("(%lld, %lld): got %g%+gj, want %Lg%+Lgj", (long long)i, (long long)j,
                         creal(got), cimag(got), creall(want), cimagl(want));
        }
    weft_tensor_release(r);
    weft_tensor_release(t[0]);
    weft_tensor_release(t[1]);
}

static void test_dot(void **state)
{
    weft_graph_t *g = *state;
    for (int c = 0; c < 2; c++) {
        weft_dtype_t dt = c ? WEFT_COMPLEX128 : WEFT_COMPLEX64;
        check_dot(g, dt, 2, (const int64_t[]){3, 5}, 2, (const int64_t[]){5, 4}, 1); /* gemm */
        check_dot(g, dt, 2, (const int64_t[]){3, 5}, 1, (const int64_t[]){5}, 2);    /* gemv */
        check_dot(g, dt, 1, (const int64_t[]){5}, 2, (const int64_t[]){5, 4}, 3);    /* gemv^T */
        check_dot(g, dt, 1, (const int64_t[]){7}, 1, (const int64_t[]){7}, 4);       /* dotu */
        check_dot(g, dt, 2, (const int64_t[]){3, 0}, 2, (const int64_t[]){0, 2}, 5); /* k = 0 */
    }
    /* large enough to be cut into blocks (run inline by the evaluator) */
    check_dot(g, WEFT_COMPLEX128, 2, (const int64_t[]){200, 64}, 2, (const int64_t[]){64, 150}, 6);
    /* mixed and refused dtypes */
    int64_t s2[2] = {2, 2};
    weft_var_t *c = fx_var(g, WEFT_COMPLEX128, 2, s2), *f = fx_var(g, WEFT_FLOAT64, 2, s2);
    assert_null(weft_dot(g, c, f));
    assert_int_equal(weft_graph_error(g), WEFT_ETYPE);
    assert_non_null(strstr(weft_graph_error_message(g),
                           "Dot: input 1 has type float64[2,2] (need a "
                           "float32/float64/complex64/complex128 tensor of input 0's dtype)"));
    weft_graph_clear_error(g);
}

/* ---- LAPACK / BLAS-3: Cholesky (Hermitian), Trsm, Syrk ---------------------------------- */

/* Element (i, j) of a contiguous n x n complex128 tensor. */
static double _Complex m_at(const weft_tensor_t *t, int64_t n, int64_t i, int64_t j)
{
    const double *d = weft_tensor_data(t);
    return CMPLX(d[2 * (i * n + j)], d[2 * (i * n + j) + 1]);
}

static void test_cholesky_trsm_syrk(void **state)
{
    weft_graph_t *g = *state;
    enum { N = 5 };
    int64_t shape[2] = {N, N};
    uint64_t seed = 11;
    weft_tensor_t *b = cx_random(WEFT_COMPLEX128, 2, shape, &seed), *a;
    /* A = B B^H + N I: Hermitian positive definite */
    assert_int_equal(weft_tensor_empty(WEFT_COMPLEX128, 2, shape, &a), WEFT_OK);
    double *ad = weft_tensor_data(a);
    for (int64_t i = 0; i < N; i++)
        for (int64_t j = 0; j < N; j++) {
            double _Complex s = i == j ? N : 0;
            for (int64_t q = 0; q < N; q++) s += m_at(b, N, i, q) * conj(m_at(b, N, j, q));
            ad[2 * (i * N + j)] = creal(s);
            ad[2 * (i * N + j) + 1] = i == j ? 0.0 : cimag(s);
        }
    weft_var_t *va = fx_var(g, WEFT_COMPLEX128, 2, shape), *vb = fx_var(g, WEFT_COMPLEX128, 2, shape);
    weft_var_t *l = weft_cholesky(g, va);
    assert_non_null(l);
    assert_int_equal(weft_type_dtype(weft_var_type(l)), WEFT_COMPLEX128);
    weft_tensor_t *lt = fx_eval(g, 1, &va, &a, l);
    for (int64_t i = 0; i < N; i++) {
        assert_true(cimag(m_at(lt, N, i, i)) == 0 && creal(m_at(lt, N, i, i)) > 0);
        for (int64_t j = 0; j < N; j++) {
            if (j > i) assert_true(m_at(lt, N, i, j) == 0); /* strictly upper: zeros */
            double _Complex s = 0; /* (L L^H)[i, j] */
            for (int64_t q = 0; q < N; q++) s += m_at(lt, N, i, q) * conj(m_at(lt, N, j, q));
            if (cabs(s - m_at(a, N, i, j)) > 1e-12)
                fail_msg("L L^H [%lld, %lld] = %g%+gj, A %g%+gj", (long long)i, (long long)j,
                         creal(s), cimag(s), creal(m_at(a, N, i, j)), cimag(m_at(a, N, i, j)));
        }
    }
    /* Trsm: L X = B; then L X reproduces B */
    weft_var_t *vl = fx_var(g, WEFT_COMPLEX128, 2, shape), *in2[2] = {vl, vb};
    weft_var_t *x = weft_trsm(g, vl, vb, 0);
    weft_tensor_t *vals[2] = {lt, b}, *xt = fx_eval(g, 2, in2, vals, x);
    for (int64_t i = 0; i < N; i++)
        for (int64_t j = 0; j < N; j++) {
            double _Complex s = 0;
            for (int64_t q = 0; q < N; q++) s += m_at(lt, N, i, q) * m_at(xt, N, q, j);
            assert_true(cabs(s - m_at(b, N, i, j)) < 1e-12);
        }
    /* Syrk: 2 B B^T (plain transpose) */
    weft_var_t *sy = weft_syrk(g, vb, false, 2.0);
    weft_tensor_t *st = fx_eval(g, 1, &vb, &b, sy);
    for (int64_t i = 0; i < N; i++)
        for (int64_t j = 0; j < N; j++) {
            double _Complex s = 0;
            for (int64_t q = 0; q < N; q++) s += 2 * m_at(b, N, i, q) * m_at(b, N, j, q);
            assert_true(cabs(s - m_at(st, N, i, j)) < 1e-12);
        }
    weft_tensor_release(st);
    weft_tensor_release(xt);
    weft_tensor_release(lt);
    /* not positive definite: the named error, not a crash */
    ad[0] = -1;
    weft_tensor_t *r = NULL;
    assert_int_equal(weft_eval(g, 1, &va, &a, 1, &l, &r), WEFT_ERANGE);
    assert_non_null(strstr(weft_graph_last_error(g), "the matrix is not positive definite"));
    assert_null(r);
    weft_tensor_release(a);
    weft_tensor_release(b);
    /* gradients are with respect to real variables */
    assert_null(weft_grad(g, weft_real(g, weft_sum(g, weft_cholesky(g, va), 0, NULL, false)),
                          va));
    assert_int_equal(weft_graph_error(g), WEFT_ETYPE);
    assert_non_null(strstr(weft_graph_error_message(g), "'<complex128[5,5]>' (created at "));
    assert_non_null(strstr(weft_graph_error_message(g), ") is not a float tensor"));
    weft_graph_clear_error(g);
}

/* Gemm(z, a, x, y, b) = b z + a x@y and Gemv with complex a and b (zgemm /
 * zgemv take them as they are), z a broadcast row, against a naive loop. */
static void test_gemm_gemv(void **state)
{
    weft_graph_t *g = *state;
    uint64_t seed = 21;
    int64_t sz[2] = {1, 4}, sx[2] = {3, 5}, sy[2] = {5, 4}, sv[1] = {5}, sw[1] = {3};
    weft_tensor_t *t[5] = {cx_random(WEFT_COMPLEX128, 2, sz, &seed), NULL,
                           cx_random(WEFT_COMPLEX128, 2, sx, &seed),
                           cx_random(WEFT_COMPLEX128, 2, sy, &seed), NULL};
    assert_int_equal(weft_tensor_empty(WEFT_COMPLEX128, 0, NULL, &t[1]), WEFT_OK);
    assert_int_equal(weft_tensor_empty(WEFT_COMPLEX128, 0, NULL, &t[4]), WEFT_OK);
    assert_int_equal(weft_tensor_set_complex(t[1], NULL, 0.5, -2), WEFT_OK); /* a */
    assert_int_equal(weft_tensor_set_complex(t[4], NULL, -1, 0.25), WEFT_OK); /* b */
    weft_var_t *v[5] = {fx_var(g, WEFT_COMPLEX128, 2, sz), fx_var(g, WEFT_COMPLEX128, 0, NULL),
                        fx_var(g, WEFT_COMPLEX128, 2, sx), fx_var(g, WEFT_COMPLEX128, 2, sy),
                        fx_var(g, WEFT_COMPLEX128, 0, NULL)};
    weft_var_t *y = weft_gemm(g, v[0], v[1], v[2], v[3], v[4], false);
    assert_non_null(y);
    weft_tensor_t *r = fx_eval(g, 5, v, t, y);
    double _Complex a = CMPLX(0.5, -2), b = CMPLX(-1, 0.25);
    for (int64_t i = 0; i < 3; i++)
        for (int64_t j = 0; j < 4; j++) {
            double _Complex want = b * cx_at(t[0], 0, j);
            for (int64_t q = 0; q < 5; q++) want += a * cx_at(t[2], i, q) * cx_at(t[3], q, j);
            assert_true(cabs(cx_at(r, i, j) - want) < 1e-13);
        }
    weft_tensor_release(r);
    /* Gemv: b w + a x@u */
    weft_tensor_t *u = cx_random(WEFT_COMPLEX128, 1, sv, &seed), *w = cx_random(WEFT_COMPLEX128, 1, sw, &seed);
    weft_var_t *vu = fx_var(g, WEFT_COMPLEX128, 1, sv), *vw = fx_var(g, WEFT_COMPLEX128, 1, sw);
    weft_var_t *gv = weft_gemv(g, vw, v[1], v[2], vu, v[4], false);
    assert_non_null(gv);
    weft_var_t *iv[5] = {vw, v[1], v[2], vu, v[4]};
    weft_tensor_t *it[5] = {w, t[1], t[2], u, t[4]};
    r = fx_eval(g, 5, iv, it, gv);
    for (int64_t i = 0; i < 3; i++) {
        double _Complex want = b * cx_at(w, i, 0);
        for (int64_t q = 0; q < 5; q++) want += a * cx_at(t[2], i, q) * cx_at(u, q, 0);
        assert_true(cabs(cx_at(r, i, 0) - want) < 1e-13);
    }
    weft_tensor_release(r);
    weft_tensor_release(u);
    weft_tensor_release(w);
    for (int k = 0; k < 5; k++) weft_tensor_release(t[k]);
}

/* ---- gradients (PyTensor's convention, docs/dtypes.md) ------------------------------- */

/* |complex(x, y) * complex(y, x) + complex(x, x)|: Complex, Mul, Add, Abs */
static weft_var_t *cost_abs(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    (void)n;
    (void)user;
    weft_var_t *z = weft_complex(g, in[0], in[1]), *w = weft_complex(g, in[1], in[0]);
    return weft_abs(g, weft_add(g, weft_mul(g, z, w), weft_complex(g, in[0], in[0])));
}

/* imag(z - (-w)) + real(conj(z) * cast(y, complex128)) * 0.5: Imag, Sub,
 * Neg, Real, Conj, Cast, Mul with a real-valued complex */
static weft_var_t *cost_parts(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    (void)n;
    (void)user;
    weft_var_t *z = weft_complex(g, in[0], in[1]), *w = weft_complex(g, in[1], in[0]);
    weft_var_t *a = weft_imag(g, weft_sub(g, z, weft_neg(g, w)));
    weft_var_t *b = weft_real(g, weft_mul(g, weft_conj(g, z), weft_cast(g, in[1], WEFT_COMPLEX128)));
    return weft_add(g, a, weft_mul_scalar(g, b, 0.5));
}

/* |complex(A, B) @ complex(B, A)|: Dot's gradient (conjugated operands) */
static weft_var_t *cost_dot(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    (void)n;
    (void)user;
    return weft_abs(g, weft_dot(g, weft_complex(g, in[0], in[1]), weft_complex(g, in[1], in[0])));
}

/* angle(complex(x, y) * complex(y, y)) + angle(x): Angle of a complex and a
 * real input (complex(x, y) * complex(y, x) would have a constant angle) */
static weft_var_t *cost_angle(weft_graph_t *g, size_t n, weft_var_t *const *in, void *user)
{
    (void)n;
    (void)user;
    weft_var_t *z = weft_mul(g, weft_complex(g, in[0], in[1]), weft_complex(g, in[1], in[1]));
    return weft_add(g, weft_angle(g, z), weft_angle(g, in[0]));
}

static void test_gradients(void **state)
{
    (void)state;
    int64_t shape[1] = {4};
    weft_tensor_t *pts[2];
    assert_int_equal(weft_verify_grad_random(WEFT_FLOAT64, 1, shape, 0.5, 2, 1, &pts[0]), WEFT_OK);
    assert_int_equal(weft_verify_grad_random(WEFT_FLOAT64, 1, shape, -2, -0.5, 2, &pts[1]), WEFT_OK);
    weft_verify_grad_fn fns[3] = {cost_abs, cost_parts, cost_angle};
    for (int f = 0; f < 3; f++) {
        weft_verify_grad_result_t r;
        weft_status_t st = weft_verify_grad(fns[f], NULL, 2, pts, NULL, &r);
        if (st != WEFT_OK) fail_msg("cost %d: %s", f, r.message);
        assert_true(r.n_evals > 0);
    }
    weft_tensor_release(pts[0]);
    weft_tensor_release(pts[1]);
    int64_t sq[2] = {3, 3};
    assert_int_equal(weft_verify_grad_random(WEFT_FLOAT64, 2, sq, -1, 1, 3, &pts[0]), WEFT_OK);
    assert_int_equal(weft_verify_grad_random(WEFT_FLOAT64, 2, sq, -1, 1, 4, &pts[1]), WEFT_OK);
    weft_verify_grad_result_t r;
    if (weft_verify_grad(cost_dot, NULL, 2, pts, NULL, &r) != WEFT_OK) fail_msg("Dot: %s", r.message);
    weft_tensor_release(pts[0]);
    weft_tensor_release(pts[1]);
    /* the holomorphic kinds (Exp, Div, Pow ...): test_complex_grad.c */
}

/* ---- fusion: the rewrite leaves complex nodes alone ------------------------------------ */

static void test_fusion_skips_complex(void **state)
{
    weft_graph_t *g = *state;
    int64_t shape[1] = {8};
    weft_var_t *z = fx_var(g, WEFT_COMPLEX128, 1, shape), *x = fx_var(g, WEFT_FLOAT64, 1, shape);
    weft_var_t *zc = weft_mul(g, weft_exp(g, weft_neg(g, z)), z); /* complex chain */
    weft_var_t *xr = weft_mul(g, weft_tanh(g, weft_neg(g, x)), x); /* the same, real */
    weft_var_t *in[2] = {z, x}, *outs[2] = {zc, xr};
    weft_fgraph_options_t o = WEFT_FGRAPH_OPTIONS_INIT;
    o.clone = false;
    weft_fgraph_t *fg;
    assert_int_equal(weft_fgraph_create(g, 2, in, 2, outs, &o, NULL, &fg), WEFT_OK);
    weft_rewriter_t *node, *walk;
    assert_int_equal(weft_rewriter_builtin_create("local_elemwise_fusion", &node), WEFT_OK);
    assert_int_equal(weft_rewriter_walk_create("w", WEFT_WALK_OUT2IN, true, 1, &node, &walk),
                     WEFT_OK);
    weft_rewrite_stats_t *stats;
    assert_int_equal(weft_rewrite_stats_create(&stats), WEFT_OK);
    assert_int_equal(weft_rewriter_apply(walk, fg, stats), WEFT_OK);
    uint64_t applied = 0, failed = 0;
    assert_int_equal(weft_rewrite_stats_get(stats, "local_elemwise_fusion", &applied, &failed, NULL),
                     WEFT_OK);
    assert_int_equal(applied, 1); /* the real chain only */
    assert_int_equal(failed, 0);
    assert_int_equal(weft_graph_error(g), WEFT_OK); /* and no error left behind */
    weft_rewrite_stats_destroy(stats);
    weft_rewriter_release(walk);
    char a[64], b[64];
    weft_op_print(weft_apply_op(weft_var_owner(weft_fgraph_output(fg, 0))), a, sizeof a);
    weft_op_print(weft_apply_op(weft_var_owner(weft_fgraph_output(fg, 1))), b, sizeof b);
    assert_string_equal(a, "Mul");                      /* complex: not fused */
    assert_string_equal(b, "Composite{(Tanh(Neg(i0)) * i0)}"); /* real: fused */
    weft_fgraph_destroy(fg);
    /* the whole default pipeline (fusion, in-place) computes what eval does */
    weft_function_t *f;
    assert_int_equal(weft_function_compile(2, in, 2, outs, 0, NULL, NULL, &f), WEFT_OK);
    weft_tensor_t *vals[2] = {cx_tensor(WEFT_COMPLEX128, 8, want_a), NULL}, *got[2] = {NULL, NULL};
    assert_int_equal(weft_tensor_full(WEFT_FLOAT64, 1, shape, 0.5, &vals[1]), WEFT_OK);
    assert_int_equal(weft_function_call(f, 2, vals, 2, got), WEFT_OK);
    weft_tensor_t *ref = fx_eval(g, 2, in, vals, zc);
    bool eq = false;
    assert_int_equal(weft_tensor_allclose(got[0], ref, 0, 0, &eq), WEFT_OK);
    assert_true(eq);
    weft_tensor_release(ref);
    weft_tensor_release(got[0]);
    weft_tensor_release(got[1]);
    weft_tensor_release(vals[0]);
    weft_tensor_release(vals[1]);
    assert_int_equal(weft_function_destroy(f), WEFT_OK);
}

/* ---- reductions ------------------------------------------------------------------- */

static void test_reductions(void **state)
{
    weft_graph_t *g = *state;
    int64_t shape[2] = {2, 3};
    /* [[1+2j, -3j, 0.5], [2, 1+1j, -1-1j]] */
    static const double x[] = {1, 2, 0, -3, 0.5, 0, 2, 0, 1, 1, -1, -1};
    weft_var_t *v = fx_var(g, WEFT_COMPLEX128, 2, shape);
    weft_tensor_t *t;
    assert_int_equal(weft_tensor_empty(WEFT_COMPLEX128, 2, shape, &t), WEFT_OK);
    memcpy(weft_tensor_data(t), x, sizeof x);
    static const struct {
        weft_reduce_kind_t k;
        int axis; /* -1: all */
        size_t n;
        double want[6];
    } cases[] = {
        {WEFT_REDUCE_SUM, -1, 1, {3.5, -1, 0, 0, 0, 0}},
        {WEFT_REDUCE_SUM, 1, 2, {1.5, -1, 2, 0, 0, 0}},
        {WEFT_REDUCE_MEAN, 0, 3, {1.5, 1, 0.5, -1, -0.25, -0.5}},
        /* (1+2j)(-3j)(0.5) = (3-1.5j); 2(1+j)(-1-j) = -4j */
        {WEFT_REDUCE_PROD, 1, 2, {3, -1.5, 0, -4, 0, 0}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        weft_var_t *y = weft_reduce_at(g, cases[c].k, v, cases[c].axis >= 0,
                                       cases[c].axis >= 0 ? &cases[c].axis : NULL, false,
                                       __FILE__, __LINE__);
        assert_non_null(y);
        assert_int_equal(weft_type_dtype(weft_var_type(y)), WEFT_COMPLEX128);
        weft_tensor_t *r = fx_eval(g, 1, &v, &t, y);
        expect_cx(r, cases[c].want, cases[c].n);
        weft_tensor_release(r);
    }
    weft_tensor_t *t64;
    assert_int_equal(weft_tensor_copy_as(t, WEFT_COMPLEX64, &t64), WEFT_OK);
    weft_var_t *v64 = fx_var(g, WEFT_COMPLEX64, 2, shape);
    weft_var_t *y64 = weft_mean(g, v64, 0, NULL, false);
    assert_int_equal(weft_type_dtype(weft_var_type(y64)), WEFT_COMPLEX64);
    weft_tensor_t *r = fx_eval(g, 1, &v64, &t64, y64);
    expect_cx(r, (const double[]){(float)(3.5 * (1.0 / 6)), (float)(-1.0 * (1.0 / 6))}, 1);
    weft_tensor_release(r);
    weft_tensor_release(t64);
    weft_tensor_release(t);
    expect_error(g, weft_max(g, v, 0, NULL, false),
                 "Max: input 0 has type complex128[2,3] (complex numbers have no order in weft; "
                 "reduce their Real or Abs)");
    expect_error(g, weft_argmax(g, v, 1, false),
                 "Argmax: input 0 has type complex128[2,3] (complex numbers have no order");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_convert),
        cmocka_unit_test(test_full_fill_get),
        cmocka_unit_test(test_npy_roundtrip),
        cmocka_unit_test_setup_teardown(test_json_roundtrip, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_binary_kinds, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_smith_division, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_unary_kinds, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_complex_family_real, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_promotion, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_dtype_errors, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_dot, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_reductions, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_cholesky_trsm_syrk, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_gemm_gemv, fx_setup, fx_teardown),
        cmocka_unit_test(test_gradients),
        cmocka_unit_test_setup_teardown(test_fusion_skips_complex, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
