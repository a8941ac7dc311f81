/* The random ops with the dtypes beyond float32/float64 and int64
 * (weft/random.h, docs/random.md §3, §5): float16 uniform samples from the
 * documented counter mapping, float16 normal samples equal to the float32
 * ones rounded to half, integer parameters of every integer dtype, and
 * uint64 bounds beyond INT64_MAX kept exact (high up to 2^63, errors past
 * it, never a wrapped value). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ops_check.h"

static weft_graph_t *new_graph(void)
{
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    return g;
}

/* A 0-d constant of dt holding the raw 8 bytes of v (truncated to dt's size). */
static weft_var_t *raw_scalar(weft_graph_t *g, weft_dtype_t dt, uint64_t v)
{
    const weft_type_t *t = NULL;
    assert_int_equal(weft_type_tensor(g, dt, 0, NULL, &t), WEFT_OK);
    weft_var_t *c = weft_constant_create(g, t, &v, weft_dtype_size(dt));
    assert_non_null(c);
    return c;
}

static weft_tensor_t *eval1(weft_graph_t *g, weft_var_t *out)
{
    weft_tensor_t *r = NULL;
    assert_non_null(out);
    weft_status_t st = weft_eval(g, 0, NULL, NULL, 1, &out, &r);
    if (st != WEFT_OK) print_error("eval: %s\n", weft_graph_last_error(g));
    assert_int_equal(st, WEFT_OK);
    return r;
}

static const int64_t key_val[2] = {(int64_t)0x123456789abcdef0ull, 7};

static weft_var_t *fixed_key(weft_graph_t *g)
{
    const int64_t two = 2;
    const weft_type_t *kt;
    assert_int_equal(weft_type_tensor(g, WEFT_INT64, 1, &two, &kt), WEFT_OK);
    return weft_constant_create(g, kt, key_val, sizeof key_val);
}

/* float16 uniform on [0, 1): element i is (word 0 of block (i, 0)) >> 21
 * times 2^-11, exact in half (docs/random.md §3). */
static void test_float16_uniform_counter_mapping(void **state)
{
    (void)state;
    weft_graph_t *g = new_graph();
    const int64_t n = 70000;
    weft_var_t *zero = weft_constant_scalar(g, WEFT_FLOAT64, 0.0);
    weft_var_t *one = weft_constant_scalar(g, WEFT_FLOAT64, 1.0);
    weft_var_t *u = weft_random_uniform(g, fixed_key(g), zero, one, WEFT_FLOAT16, 1, &n, NULL);
    assert_non_null(u);
    assert_int_equal(weft_type_dtype(weft_var_type(u)), WEFT_FLOAT16);
    weft_tensor_t *r = eval1(g, u);
    const int64_t idx[4] = {0, 1, 4095, 65537};
    for (int t = 0; t < 4; t++) {
        uint64_t i = (uint64_t)idx[t];
        uint32_t ctr[4] = {(uint32_t)i, (uint32_t)(i >> 32), 7, 0}, out[4];
        const uint32_t k[2] = {0x9abcdef0u, 0x12345678u};
        weft_philox4x32_10(ctr, k, out);
        double got = 0;
        assert_int_equal(weft_tensor_get(r, &idx[t], &got), WEFT_OK);
        assert_true(got == (double)(out[0] >> 21) * 0x1.0p-11);
    }
    double sum = 0, mx = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = 0;
        assert_int_equal(weft_tensor_get(r, &i, &v), WEFT_OK);
        assert_true(v >= 0.0 && v < 1.0);
        sum += v;
        mx = v > mx ? v : mx;
    }
    assert_true(fabs(sum / (double)n - (0.5 - 0x1.0p-12)) < 0.005); /* mean of k 2^-11 */
    assert_true(mx == 1.0 - 0x1.0p-11);
    weft_tensor_release(r);
    weft_graph_destroy(g);
}

/* float16 normal(mean, std) is the float32 sample (computed in float32)
 * rounded to half, bit for bit. */
static void test_float16_normal_is_float32_rounded(void **state)
{
    (void)state;
    weft_graph_t *g = new_graph();
    const int64_t n = 5000;
    weft_var_t *m = weft_constant_scalar(g, WEFT_FLOAT64, 1.5);
    weft_var_t *s = weft_constant_scalar(g, WEFT_FLOAT64, 0.25);
    weft_var_t *h = weft_random_normal(g, fixed_key(g), m, s, WEFT_FLOAT16, 1, &n, NULL);
    weft_var_t *f = weft_random_normal(g, fixed_key(g), m, s, WEFT_FLOAT32, 1, &n, NULL);
    weft_tensor_t *rh = eval1(g, h), *rf = eval1(g, weft_cast(g, f, WEFT_FLOAT16));
    assert_int_equal(weft_tensor_dtype(rh), WEFT_FLOAT16);
    assert_memory_equal(weft_tensor_data(rh), weft_tensor_data(rf), (size_t)n * 2);
    weft_tensor_release(rh);
    weft_tensor_release(rf);
    weft_graph_destroy(g);
}

/* Integers takes low/high of every integer dtype; the sample is int64. */
static void test_integer_parameters_of_every_dtype(void **state)
{
    (void)state;
    const weft_dtype_t dts[8] = {WEFT_INT8,  WEFT_INT16,  WEFT_INT32,  WEFT_INT64,
                                 WEFT_UINT8, WEFT_UINT16, WEFT_UINT32, WEFT_UINT64};
    for (int d = 0; d < 8; d++) {
        weft_graph_t *g = new_graph();
        const int64_t n = 2000;
        bool sgn = d < 4;
        uint64_t lo = sgn ? (uint64_t)-3 : 250, hi = sgn ? 4 : 254;
        weft_var_t *x = weft_random_integers(g, weft_random_key(g, 5), raw_scalar(g, dts[d], lo),
                                             raw_scalar(g, dts[d], hi), 1, &n, NULL);
        weft_tensor_t *r = eval1(g, x);
        assert_int_equal(weft_tensor_dtype(r), WEFT_INT64);
        int64_t want_lo = sgn ? -3 : 250, want_hi = sgn ? 4 : 254, seen = 0;
        for (int64_t i = 0; i < n; i++) {
            int64_t v = ((const int64_t *)weft_tensor_data(r))[i];
            assert_true(v >= want_lo && v < want_hi);
            seen |= (int64_t)1 << (v - want_lo);
        }
        assert_int_equal(seen, ((int64_t)1 << (want_hi - want_lo)) - 1); /* every value drawn */
        weft_tensor_release(r);
        weft_graph_destroy(g);
    }
}

/* uint64 bounds: high = 2^63 (exclusive) is allowed and exact; beyond it,
 * or low at 2^63 or more, the node fails naming the value (NumPy: "high is
 * out of bounds for int64"); nothing wraps. */
static void test_uint64_bounds_stay_exact(void **state)
{
    (void)state;
    weft_graph_t *g = new_graph();
    const int64_t n = 3000;
    const uint64_t top = UINT64_C(1) << 63;
    weft_var_t *key = weft_random_key(g, 11);
    weft_var_t *x = weft_random_integers(g, key, raw_scalar(g, WEFT_UINT64, top - 4),
                                         raw_scalar(g, WEFT_UINT64, top), 1, &n, NULL);
    weft_tensor_t *r = eval1(g, x);
    int seen = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t v = ((const int64_t *)weft_tensor_data(r))[i];
        assert_true(v >= INT64_MAX - 3); /* in [2^63 - 4, 2^63) */
        seen |= 1 << (INT64_MAX - v);
    }
    assert_int_equal(seen, 15);
    weft_tensor_release(r);
    /* an int64 low with a uint64 high of 2^63: the whole upper half */
    weft_var_t *y = weft_random_integers(g, key, raw_scalar(g, WEFT_INT64, 0),
                                         raw_scalar(g, WEFT_UINT64, top), 1, &n, NULL);
    r = eval1(g, y);
    for (int64_t i = 0; i < n; i++) assert_true(((const int64_t *)weft_tensor_data(r))[i] >= 0);
    weft_tensor_release(r);
    struct {
        uint64_t lo, hi;
        const char *msg;
    } bad[3] = {
        {0, top + 1,
         "RandomIntegers: high = 9223372036854775809 is out of bounds for int64 (at sample "
         "element 0)"},
        {top, UINT64_MAX,
         "RandomIntegers: low = 9223372036854775808 is out of bounds for int64 (at sample "
         "element 0)"},
        {9, 9, "RandomIntegers: low >= high (low = 9, high = 9 at sample element 0)"},
    };
    for (int b = 0; b < 3; b++) {
        weft_var_t *z = weft_random_integers(g, key, raw_scalar(g, WEFT_UINT64, bad[b].lo),
                                             raw_scalar(g, WEFT_UINT64, bad[b].hi), 1, &n, NULL);
        weft_tensor_t *rz = NULL;
        assert_non_null(z);
        assert_int_equal(weft_eval(g, 0, NULL, NULL, 1, &z, &rz), WEFT_EINVAL);
        assert_null(rz);
        if (!strstr(weft_graph_last_error(g), bad[b].msg))
            print_error("got '%s'\nwant '%s'\n", weft_graph_last_error(g), bad[b].msg);
        assert_non_null(strstr(weft_graph_last_error(g), bad[b].msg));
    }
    weft_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_float16_uniform_counter_mapping),
        cmocka_unit_test(test_float16_normal_is_float32_rounded),
        cmocka_unit_test(test_integer_parameters_of_every_dtype),
        cmocka_unit_test(test_uint64_bounds_stay_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
