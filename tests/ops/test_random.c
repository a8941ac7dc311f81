/* The random ops under the sequential evaluator (weft/random.h,
 * docs/random.md): the Philox4x32-10 known-answer vectors, the documented
 * counter mapping, distribution sanity at fixed keys (deterministic: the
 * bounds hold for these keys, they cannot flake), NumPy's parameter rules
 * and broadcasting, exact error messages, and the reparameterized
 * gradients of uniform and normal (verify_grad with the key fixed). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ops_check.h"

/* ---- helpers -------------------------------------------------------------------- */

static weft_graph_t *new_graph(void)
{
    weft_graph_t *g = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    return g;
}

static weft_var_t *f64(weft_graph_t *g, double v)
{
    weft_var_t *c = weft_constant_scalar(g, WEFT_FLOAT64, v);
    assert_non_null(c);
    return c;
}

static weft_var_t *i64(weft_graph_t *g, double v)
{
    weft_var_t *c = weft_constant_scalar(g, WEFT_INT64, v);
    assert_non_null(c);
    return c;
}

/* Evaluates out (no inputs) and returns its value. */
static weft_tensor_t *eval1(weft_graph_t *g, weft_var_t *out)
{
    weft_tensor_t *r = NULL;
    assert_non_null(out);
    weft_status_t st = weft_eval(g, 0, NULL, NULL, 1, &out, &r);
    if (st != WEFT_OK) print_error("eval: %s\n", weft_graph_last_error(g));
    assert_int_equal(st, WEFT_OK);
    return r;
}

/* Runs out and expects the node to fail with st and a message containing want. */
static void eval_fails(weft_graph_t *g, weft_var_t *out, weft_status_t st, const char *want)
{
    weft_tensor_t *r = NULL;
    assert_non_null(out);
    assert_int_equal(weft_eval(g, 0, NULL, NULL, 1, &out, &r), st);
    assert_null(r);
    if (!strstr(weft_graph_last_error(g), want))
        print_error("got '%s'\nwant '%s'\n", weft_graph_last_error(g), want);
    assert_non_null(strstr(weft_graph_last_error(g), want));
}

static void mean_var(const weft_tensor_t *t, double *mean, double *var)
{
    size_t n = weft_tensor_size(t);
    double s = 0, q = 0;
    for (size_t i = 0; i < n; i++) s += weft_tensor_flat_get(t, i);
    *mean = s / (double)n;
    for (size_t i = 0; i < n; i++) {
        double d = weft_tensor_flat_get(t, i) - *mean;
        q += d * d;
    }
    *var = q / (double)n;
}

/* ---- the generator -------------------------------------------------------------- */

/* Random123's kat_vectors for philox4x32_10 (Salmon et al., SC'11). */
static void test_philox_known_answers(void **state)
{
    (void)state;
    static const uint32_t kat[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d,
         0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09,
         0x94fdcceb, 0x5001e420, 0x24126ea1},
    };
    for (int v = 0; v < 3; v++) {
        uint32_t out[4];
        weft_philox4x32_10(kat[v], kat[v] + 4, out);
        for (int w = 0; w < 4; w++) assert_int_equal(out[w], kat[v][6 + w]);
    }
}

/* docs/random.md §3: element i of a float64 uniform draw with key {k, s} is
 * the top 53 bits of words 1:0 of philox((lo32 i, hi16 i, lo32 s, hi32 s),
 * (lo32 k, hi32 k)) / 2^53; the new key is {k, s + 1}. */
static void test_uniform_counter_mapping(void **state)
{
    (void)state;
    weft_graph_t *g = new_graph();
    const int64_t key_val[2] = {(int64_t)0x123456789abcdef0ull, 7}, two = 2, n = 70000;
    const weft_type_t *kt;
    assert_int_equal(weft_type_tensor(g, WEFT_INT64, 1, &two, &kt), WEFT_OK);
    weft_var_t *key = weft_constant_create(g, kt, key_val, sizeof key_val), *nk = NULL;
    weft_var_t *u = weft_random_uniform(g, key, f64(g, 0), f64(g, 1), WEFT_FLOAT64, 1, &n, &nk);
    weft_tensor_t *r = eval1(g, u), *rk = eval1(g, nk);
    const double *d = weft_tensor_data(r);
    const int64_t idx[4] = {0, 1, 4095, 65537};
    for (int t = 0; t < 4; t++) {
        uint64_t i = (uint64_t)idx[t];
        uint32_t ctr[4] = {(uint32_t)i, (uint32_t)(i >> 32), 7, 0}, out[4];
        const uint32_t k[2] = {0x9abcdef0u, 0x12345678u};
        weft_philox4x32_10(ctr, k, out);
        double want = (double)((((uint64_t)out[1] << 32) | out[0]) >> 11) * 0x1.0p-53;
        assert_true(d[i] == want);
    }
    const int64_t *kv = weft_tensor_data(rk);
    assert_true(kv[0] == key_val[0] && kv[1] == 8);
    weft_tensor_release(r);
    weft_tensor_release(rk);
    weft_graph_destroy(g);
}

/* ---- distributions (fixed keys: deterministic) ---------------------------------- */

static void test_uniform_normal_statistics(void **state)
{
    (void)state;
    weft_graph_t *g = new_graph();
    const int64_t n = 200000;
    weft_var_t *k0 = weft_random_key(g, 2026), *k1 = NULL, *k2 = NULL, *k3 = NULL;
    weft_var_t *u = weft_random_uniform(g, k0, f64(g, -2), f64(g, 3), WEFT_FLOAT64, 1, &n, &k1);
    weft_var_t *z = weft_random_normal(g, k1, f64(g, 1.5), f64(g, 2), WEFT_FLOAT64, 1, &n, &k2);
    weft_var_t *u32 = weft_random_uniform(g, k2, f64(g, 0), f64(g, 1), WEFT_FLOAT32, 1, &n, &k3);
    weft_var_t *z32 = weft_random_normal(g, k3, f64(g, 0), f64(g, 1), WEFT_FLOAT32, 1, &n, NULL);
    weft_tensor_t *ru = eval1(g, u), *rz = eval1(g, z), *ru32 = eval1(g, u32),
                  *rz32 = eval1(g, z32);
    double m, v;
    /* uniform(-2, 3): mean 0.5, var 25/12; 5 sigma of the sample mean is 0.016 */
    mean_var(ru, &m, &v);
    assert_true(fabs(m - 0.5) < 0.016 && fabs(v - 25.0 / 12) < 0.03);
    for (size_t i = 0; i < (size_t)n; i++) {
        double x = weft_tensor_flat_get(ru, i);
        assert_true(x >= -2 && x < 3);
    }
    mean_var(rz, &m, &v); /* normal(1.5, 2): 5 sigma of the mean is 0.022 */
    assert_true(fabs(m - 1.5) < 0.022 && fabs(v - 4) < 0.07);
    mean_var(ru32, &m, &v);
    assert_int_equal(weft_tensor_dtype(ru32), WEFT_FLOAT32);
    assert_true(fabs(m - 0.5) < 0.0033 && fabs(v - 1.0 / 12) < 0.002);
    mean_var(rz32, &m, &v);
    assert_true(fabs(m) < 0.011 && fabs(v - 1) < 0.02);
    /* the tails: |z| > 3 has probability 0.0027 */
    size_t tail = 0;
    for (size_t i = 0; i < (size_t)n; i++) tail += fabs(weft_tensor_flat_get(rz32, i)) > 3;
    assert_true(tail > 400 && tail < 680);
    weft_tensor_release(ru);
    weft_tensor_release(rz);
    weft_tensor_release(ru32);
    weft_tensor_release(rz32);
    weft_graph_destroy(g);
}

static void test_bernoulli_categorical_statistics(void **state)
{
    (void)state;
    weft_graph_t *g = new_graph();
    const int64_t n = 100000, pshape[1] = {4};
    const double pv[4] = {0.1, 0.2, 0.3, 0.4};
    weft_var_t *k0 = weft_random_key(g, 5), *k1 = NULL;
    weft_var_t *b = weft_random_bernoulli(g, k0, f64(g, 0.3), 1, &n, &k1);
    weft_var_t *p = weft_constant_create(g, weft_var_type(ck_var(g, WEFT_FLOAT64, 1, pshape)), pv,
                                         sizeof pv);
    weft_var_t *c = weft_random_categorical(g, k1, p, 1, &n, NULL);
    weft_tensor_t *rb = eval1(g, b), *rc = eval1(g, c);
    assert_int_equal(weft_tensor_dtype(rb), WEFT_BOOL);
    assert_int_equal(weft_tensor_dtype(rc), WEFT_INT64);
    size_t ones = 0, cnt[4] = {0};
    for (size_t i = 0; i < (size_t)n; i++) {
        ones += ((const bool *)weft_tensor_data(rb))[i];
        int64_t k = ((const int64_t *)weft_tensor_data(rc))[i];
        assert_true(k >= 0 && k < 4);
        cnt[k]++;
    }
    assert_true(ones > 29275 && ones < 30725); /* 5 sigma of 30000 */
    for (int k = 0; k < 4; k++) /* 5 sigma of n p_k */
        assert_true(fabs((double)cnt[k] - n * pv[k]) < 5 * sqrt(n * pv[k] * (1 - pv[k])));
    /* p = 0 and 1 are allowed and exact; a zero-probability category never comes */
    const int64_t small = 1000;
    weft_var_t *b0 = weft_random_bernoulli(g, k0, f64(g, 0), 1, &small, NULL);
    weft_var_t *b1 = weft_random_bernoulli(g, k0, f64(g, 1), 1, &small, NULL);
    const double pz[4] = {0, 0.5, 0, 0.5};
    weft_var_t *pzv = weft_constant_create(g, weft_var_type(p), pz, sizeof pz);
    weft_var_t *cz = weft_random_categorical(g, k0, pzv, 1, &small, NULL);
    weft_tensor_t *r0 = eval1(g, b0), *r1 = eval1(g, b1), *rz = eval1(g, cz);
    for (size_t i = 0; i < (size_t)small; i++) {
        assert_false(((const bool *)weft_tensor_data(r0))[i]);
        assert_true(((const bool *)weft_tensor_data(r1))[i]);
        int64_t k = ((const int64_t *)weft_tensor_data(rz))[i];
        assert_true(k == 1 || k == 3);
    }
    weft_tensor_t *all[5] = {rb, rc, r0, r1, rz};
    for (int i = 0; i < 5; i++) weft_tensor_release(all[i]);
    weft_graph_destroy(g);
}

/* [low, high) with every value about n / range times (chi-square below its
 * 0.9999 quantile for 6 degrees of freedom, 27.9), and the full int64 range. */
static void test_integers_unbiased_range(void **state)
{
    (void)state;
    weft_graph_t *g = new_graph();
    const int64_t n = 140000, m = 20000;
    weft_var_t *k0 = weft_random_key(g, 99), *k1 = NULL;
    weft_var_t *x = weft_random_integers(g, k0, i64(g, -3), i64(g, 4), 1, &n, &k1);
    const int64_t big_lo = INT64_MIN, big_hi = INT64_MAX;
    const weft_type_t *t0 = weft_var_type(i64(g, 0));
    weft_var_t *lo = weft_constant_create(g, t0, &big_lo, sizeof big_lo);
    weft_var_t *hi = weft_constant_create(g, t0, &big_hi, sizeof big_hi);
    weft_var_t *w = weft_random_integers(g, k1, lo, hi, 1, &m, NULL);
    weft_tensor_t *rx = eval1(g, x), *rw = eval1(g, w);
    size_t cnt[7] = {0};
    for (size_t i = 0; i < (size_t)n; i++) {
        int64_t v = ((const int64_t *)weft_tensor_data(rx))[i];
        assert_true(v >= -3 && v < 4);
        cnt[v + 3]++;
    }
    double chi = 0, e = (double)n / 7;
    for (int k = 0; k < 7; k++) chi += ((double)cnt[k] - e) * ((double)cnt[k] - e) / e;
    assert_true(chi < 27.9);
    size_t neg = 0; /* the full range: about half negative, never INT64_MAX */
    for (size_t i = 0; i < (size_t)m; i++) {
        int64_t v = ((const int64_t *)weft_tensor_data(rw))[i];
        assert_true(v != INT64_MAX);
        neg += v < 0;
    }
    assert_true(neg > 9646 && neg < 10354);
    weft_tensor_release(rx);
    weft_tensor_release(rw);
    weft_graph_destroy(g);
}

static void test_permutation_is_a_permutation(void **state)
{
    (void)state;
    weft_graph_t *g = new_graph();
    weft_var_t *k0 = weft_random_key(g, 3), *k1 = NULL;
    weft_var_t *p1 = weft_random_permutation(g, k0, 1000, &k1);
    weft_var_t *p2 = weft_random_permutation(g, k1, 1000, NULL);
    weft_var_t *p0 = weft_random_permutation(g, k0, 0, NULL);
    weft_tensor_t *r1 = eval1(g, p1), *r2 = eval1(g, p2), *r0 = eval1(g, p0);
    assert_int_equal(weft_tensor_size(r0), 0);
    char seen[1000] = {0};
    size_t same = 0, fixed = 0;
    for (size_t i = 0; i < 1000; i++) {
        int64_t a = ((const int64_t *)weft_tensor_data(r1))[i];
        int64_t b = ((const int64_t *)weft_tensor_data(r2))[i];
        assert_true(a >= 0 && a < 1000 && !seen[a]);
        seen[a] = 1;
        same += a == b;
        fixed += a == (int64_t)i;
    }
    assert_true(same < 10 && fixed < 10); /* about 1 expected for each */
    weft_tensor_release(r0);
    weft_tensor_release(r1);
    weft_tensor_release(r2);
    weft_graph_destroy(g);
}

/* Parameters broadcast against the sample shape as NumPy's Generator: a
 * low per row, one high; a p per column. */
static void test_parameters_broadcast(void **state)
{
    (void)state;
    weft_graph_t *g = new_graph();
    const int64_t shape[2] = {3, 500}, col[2] = {3, 1}, row[1] = {500};
    const double lows[3] = {0, 10, 20};
    weft_var_t *lo = weft_constant_create(g, weft_var_type(ck_var(g, WEFT_FLOAT64, 2, col)), lows,
                                          sizeof lows);
    weft_var_t *k0 = weft_random_key(g, 1);
    weft_var_t *u = weft_random_uniform(g, k0, lo, f64(g, 30), WEFT_FLOAT64, 2, shape, NULL);
    double pv[500];
    for (int j = 0; j < 500; j++) pv[j] = j % 2;
    weft_var_t *p = weft_constant_create(g, weft_var_type(ck_var(g, WEFT_FLOAT64, 1, row)), pv,
                                         sizeof pv);
    weft_var_t *b = weft_random_bernoulli(g, k0, p, 2, shape, NULL);
    weft_tensor_t *ru = eval1(g, u), *rb = eval1(g, b);
    for (int r = 0; r < 3; r++)
        for (int j = 0; j < 500; j++) {
            double x = ((const double *)weft_tensor_data(ru))[r * 500 + j];
            assert_true(x >= lows[r] && x < 30);
            assert_int_equal(((const bool *)weft_tensor_data(rb))[r * 500 + j], j % 2);
        }
    weft_tensor_release(ru);
    weft_tensor_release(rb);
    weft_graph_destroy(g);
}

/* Empty and 0-d samples: bernoulli's and integers' parameters are checked
 * at the elements drawn, so an empty sample never fails (docs/random.md
 * §5); a 0-d sample is element 0. */
static void test_empty_and_scalar_samples(void **state)
{
    (void)state;
    weft_graph_t *g = new_graph();
    const int64_t empty[2] = {0, 3};
    weft_var_t *key = weft_random_key(g, 4);
    weft_var_t *e[3] = {weft_random_integers(g, key, i64(g, 5), i64(g, 5), 2, empty, NULL),
                        weft_random_bernoulli(g, key, f64(g, 2), 2, empty, NULL),
                        weft_random_normal(g, key, f64(g, 0), f64(g, 1), WEFT_FLOAT64, 2, empty,
                                           NULL)};
    for (int i = 0; i < 3; i++) {
        weft_tensor_t *r = eval1(g, e[i]);
        assert_int_equal(weft_tensor_ndim(r), 2);
        assert_int_equal(weft_tensor_size(r), 0);
        weft_tensor_release(r);
    }
    const int64_t one = 1;
    weft_var_t *s = weft_random_uniform(g, key, f64(g, 0), f64(g, 1), WEFT_FLOAT64, 0, NULL, NULL);
    weft_var_t *v = weft_random_uniform(g, key, f64(g, 0), f64(g, 1), WEFT_FLOAT64, 1, &one, NULL);
    weft_tensor_t *rs = eval1(g, s), *rv = eval1(g, v);
    assert_int_equal(weft_tensor_ndim(rs), 0);
    assert_true(weft_tensor_flat_get(rs, 0) == weft_tensor_flat_get(rv, 0)); /* element 0 */
    weft_tensor_release(rs);
    weft_tensor_release(rv);
    weft_graph_destroy(g);
}

/* ---- errors ------------------------------------------------------------------------ */

/* The kept error is exactly "<ctor> (at this file:line): <what>". */
static void expect_kept(weft_graph_t *g, weft_status_t st, const char *ctor, int line,
                        const char *what)
{
    char want[512];
    snprintf(want, sizeof want, "%s (at %s:%d): %s", ctor, __FILE__, line, what);
    assert_int_equal(weft_graph_error(g), st);
    if (strcmp(weft_graph_error_message(g), want) != 0)
        print_error("got  '%s'\nwant '%s'\n", weft_graph_error_message(g), want);
    assert_string_equal(weft_graph_error_message(g), want);
    weft_graph_clear_error(g);
}

static void test_constructor_errors(void **state)
{
    (void)state;
    weft_graph_t *g = new_graph();
    const int64_t n = 4, three = 3, bad[2] = {2, -1};
    weft_var_t *key = weft_random_key(g, 0), *nk = key, *zero = f64(g, 0), *one = f64(g, 1);
    int line = __LINE__ + 1;
    assert_null(weft_random_uniform(g, NULL, zero, one, WEFT_FLOAT64, 1, &n, &nk));
    assert_null(nk); /* *new_key is NULL on failure */
    expect_kept(g, WEFT_EINVAL, "weft_random_uniform", line, "NULL key");
    line = __LINE__ + 1;
    assert_null(weft_random_normal(g, key, zero, one, WEFT_INT32, 1, &n, NULL));
    expect_kept(g, WEFT_ETYPE, "weft_random_normal", line, "dtype: must be float32 or float64");
    line = __LINE__ + 1;
    assert_null(weft_random_bernoulli(g, key, one, 2, bad, NULL));
    expect_kept(g, WEFT_EINVAL, "weft_random_bernoulli", line, "shape: a negative length");
    line = __LINE__ + 1;
    assert_null(weft_random_integers(g, key, zero, i64(g, 3), 1, &n, NULL));
    expect_kept(g, WEFT_ETYPE, "weft_random_integers", line,
                "parameter 0 has type float64[] (need an integer tensor)");
    line = __LINE__ + 1;
    assert_null(weft_random_categorical(g, key, one, 1, &n, NULL));
    expect_kept(g, WEFT_ETYPE, "weft_random_categorical", line,
                "parameter 0 has type float64[]: p needs a category axis");
    weft_var_t *kf = ck_var(g, WEFT_FLOAT64, 1, &three);
    assert_null(weft_random_permutation(g, kf, 5, NULL));
    assert_non_null(strstr(weft_graph_error_message(g), "RandomPermutation: the key, input 0 "
                                                        "(created at "));
    assert_non_null(strstr(weft_graph_error_message(g), "), has type float64[3] (need int64[2])"));
    weft_graph_clear_error(g);
    weft_var_t *lo3 = ck_var(g, WEFT_FLOAT64, 1, &three);
    assert_int_equal(weft_var_set_name(lo3, "lo"), WEFT_OK);
    assert_null(weft_random_uniform(g, key, lo3, one, WEFT_FLOAT64, 1, &n, NULL));
    assert_int_equal(weft_graph_error(g), WEFT_ESHAPE);
    assert_non_null(strstr(weft_graph_error_message(g), "RandomUniform: input 1 ('lo', created "
                                                        "at "));
    assert_non_null(strstr(weft_graph_error_message(g), ") has length 3 in dimension 0, which "
                                                        "does not broadcast to the sample's 4"));
    weft_graph_destroy(g);
}

static void test_run_time_parameter_errors(void **state)
{
    (void)state;
    weft_graph_t *g = new_graph();
    const int64_t n = 4, two = 2;
    weft_var_t *key = weft_random_key(g, 0);
    const double pb[2] = {0.5, 1.5};
    weft_var_t *p = weft_constant_create(g, weft_var_type(ck_var(g, WEFT_FLOAT64, 1, &two)), pb,
                                         sizeof pb);
    const int64_t shape2[2] = {2, 2};
    eval_fails(g, weft_random_bernoulli(g, key, p, 2, shape2, NULL), WEFT_EINVAL,
               "RandomBernoulli: p < 0, p > 1 or p is NaN (p = 1.5 at sample element 1)");
    eval_fails(g, weft_random_bernoulli(g, key, f64(g, NAN), 1, &n, NULL), WEFT_EINVAL,
               "RandomBernoulli: p < 0, p > 1 or p is NaN (p = nan at sample element 0)");
    eval_fails(g, weft_random_integers(g, key, i64(g, 5), i64(g, 5), 1, &n, NULL), WEFT_EINVAL,
               "RandomIntegers: low >= high (low = 5, high = 5 at sample element 0)");
    const double pc[2] = {0.5, 0.4};
    weft_var_t *c = weft_constant_create(g, weft_var_type(p), pc, sizeof pc);
    eval_fails(g, weft_random_categorical(g, key, c, 1, &n, NULL), WEFT_EINVAL,
               "RandomCategorical: probabilities do not sum to 1 (row 0 sums to "
               "0.90000000000000002)");
    const double pn[2] = {1.5, -0.5};
    c = weft_constant_create(g, weft_var_type(p), pn, sizeof pn);
    eval_fails(g, weft_random_categorical(g, key, c, 1, &n, NULL), WEFT_EINVAL,
               "RandomCategorical: probabilities are not non-negative (p = -0.5 in row 0)");
    /* a parameter of unknown static length must equal the sample's at run time */
    const int64_t unknown = WEFT_DIM_UNKNOWN;
    weft_var_t *lo = ck_var(g, WEFT_FLOAT64, 1, &unknown);
    weft_var_t *u = weft_random_uniform(g, key, lo, f64(g, 1), WEFT_FLOAT64, 1, &n, NULL);
    const int64_t three = 3;
    weft_tensor_t *lv = ck_tensor(WEFT_FLOAT64, 1, &three, NULL), *r = NULL;
    assert_int_equal(weft_eval(g, 1, &lo, &lv, 1, &u, &r), WEFT_ESHAPE);
    assert_non_null(strstr(weft_graph_last_error(g), "RandomUniform: input 1 has length 3 in "
                                                     "dimension 0, the sample 4"));
    weft_tensor_release(lv);
    weft_graph_destroy(g);
}

/* The printed op: its sample dtype and shape. */
static void test_op_print(void **state)
{
    (void)state;
    weft_graph_t *g = new_graph();
    const int64_t shape[2] = {2, 3};
    weft_var_t *x = weft_random_integers(g, weft_random_key(g, 0), i64(g, 0), i64(g, 9), 2, shape,
                                         NULL);
    char buf[128];
    weft_op_print(weft_apply_op(weft_var_owner(x)), buf, sizeof buf);
    assert_string_equal(buf, "RandomIntegers{dtype=int64, shape=(2,3)}");
    weft_graph_destroy(g);
}

/* ---- gradients ---------------------------------------------------------------------- */

static weft_var_t *uniform_fn(weft_graph_t *g, size_t n_in, weft_var_t *const *in, void *user)
{
    (void)n_in;
    const int64_t shape[2] = {3, 4};
    weft_dtype_t dt = *(const weft_dtype_t *)user;
    return weft_random_uniform(g, weft_random_key(g, 11), in[0], in[1], dt, 2, shape, NULL);
}

static weft_var_t *normal_fn(weft_graph_t *g, size_t n_in, weft_var_t *const *in, void *user)
{
    (void)n_in;
    const int64_t shape[2] = {3, 4};
    weft_dtype_t dt = *(const weft_dtype_t *)user;
    return weft_random_normal(g, weft_random_key(g, 12), in[0], in[1], dt, 2, shape, NULL);
}

/* low per row (broadcast over columns), high per element; mean scalar,
 * std per column: the gradients sum over the broadcast axes. */
static void test_reparameterized_gradients(void **state)
{
    (void)state;
    const int64_t col[2] = {3, 1}, full[2] = {3, 4}, row[2] = {1, 4};
    weft_dtype_t dts[2] = {WEFT_FLOAT64, WEFT_FLOAT32};
    for (int d = 0; d < 2; d++) {
        weft_tensor_t *lu[2] = {ck_random(dts[d], 2, col, -1, 0, 1),
                                ck_random(dts[d], 2, full, 1, 2, 2)};
        ck_verify(uniform_fn, &dts[d], 2, lu);
        weft_tensor_t *ms[2] = {ck_random(dts[d], 0, NULL, -1, 1, 3),
                                ck_random(dts[d], 2, row, 0.5, 2, 4)};
        ck_verify(normal_fn, &dts[d], 2, ms);
        for (int i = 0; i < 2; i++) {
            weft_tensor_release(lu[i]);
            weft_tensor_release(ms[i]);
        }
    }
}

/* A bool sample reaches a float cost only through Cast, whose gradient
 * stops at a bool input: p is disconnected (the op's own hook would give
 * the undefined gradient, as PyTensor's RandomVariable). */
static void test_bernoulli_gradient_disconnected(void **state)
{
    (void)state;
    weft_graph_t *g = new_graph();
    weft_var_t *p = ck_var(g, WEFT_FLOAT64, 0, NULL), *gp = NULL;
    const int64_t n = 3;
    weft_var_t *b = weft_random_bernoulli(g, weft_random_key(g, 0), p, 1, &n, NULL);
    weft_var_t *cost = weft_sum(g, weft_cast(g, b, WEFT_FLOAT64), 0, NULL, false);
    assert_null(weft_grads(g, cost, 1, &p, NULL, &gp));
    assert_int_equal(weft_graph_error(g), WEFT_EDISCONNECTED);
    weft_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_philox_known_answers),
        cmocka_unit_test(test_uniform_counter_mapping),
        cmocka_unit_test(test_uniform_normal_statistics),
        cmocka_unit_test(test_bernoulli_categorical_statistics),
        cmocka_unit_test(test_integers_unbiased_range),
        cmocka_unit_test(test_permutation_is_a_permutation),
        cmocka_unit_test(test_parameters_broadcast),
        cmocka_unit_test(test_empty_and_scalar_samples),
        cmocka_unit_test(test_constructor_errors),
        cmocka_unit_test(test_run_time_parameter_errors),
        cmocka_unit_test(test_op_print),
        cmocka_unit_test(test_reparameterized_gradients),
        cmocka_unit_test(test_bernoulli_gradient_disconnected),
    };
    return cmocka_run_group_tests_name("random", tests, NULL, NULL);
}
