/* Shared helpers of the reduction, linear algebra and gradient tests. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ops_check.h"

weft_tensor_t *ck_tensor(weft_dtype_t dt, int nd, const int64_t *shape, const double *vals)
{
    weft_tensor_t *t = NULL;
    assert_int_equal(weft_tensor_zeros(dt, nd, shape, &t), WEFT_OK);
    size_t n = weft_tensor_size(t);
    int64_t idx[WEFT_MAX_NDIM] = {0};
    for (size_t i = 0; vals && i < n; i++) {
        assert_int_equal(weft_tensor_set(t, idx, vals[i]), WEFT_OK);
        for (int d = nd - 1; d >= 0; d--) {
            if (++idx[d] < shape[d]) {
                break;
            }
            idx[d] = 0;
        }
    }
    return t;
}

weft_var_t *ck_var(weft_graph_t *g, weft_dtype_t dt, int nd, const int64_t *shape)
{
    const weft_type_t *t = NULL;
    weft_var_t *v = NULL;
    assert_int_equal(weft_type_tensor(g, dt, nd, shape, &t), WEFT_OK);
    assert_non_null(v = weft_var_create(g, t, NULL));
    return v;
}

weft_status_t ck_eval(weft_graph_t *g, size_t n_in, weft_var_t *const *in,
                      weft_tensor_t *const *vals, weft_var_t *out, weft_tensor_t **res)
{
    *res = NULL;
    weft_status_t st = weft_eval(g, n_in, in, vals, 1, &out, res);
    if (st != WEFT_OK) {
        print_message("ck_eval: %s: %s\n", weft_status_name(st), weft_graph_last_error(g));
    }
    return st;
}

void ck_expect(const weft_tensor_t *t, int nd, const int64_t *shape, const double *want,
               double tol)
{
    assert_non_null(t);
    assert_int_equal(weft_tensor_ndim(t), nd);
    for (int d = 0; d < nd; d++) {
        assert_int_equal(weft_tensor_dim(t, d), shape[d]);
    }
    size_t n = weft_tensor_size(t);
    for (size_t i = 0; i < n; i++) {
        double got = weft_tensor_flat_get(t, i);
        bool ok = (isnan(want[i]) && isnan(got)) || got == want[i] ||
                  fabs(got - want[i]) <= tol * (1.0 + fabs(want[i]));
        if (!ok) {
            print_error("element %zu: got %.17g, want %.17g (tol %g)\n", i, got, want[i], tol);
            fail();
        }
    }
}

uint64_t ck_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double ck_uniform(uint64_t *state, double lo, double hi)
{
    return lo + (hi - lo) * (double)(ck_rand(state) >> 11) * (1.0 / 9007199254740992.0);
}

uint64_t ck_seed(const char *test)
{
    const char *env = getenv("WEFT_TEST_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 0) : 20261122u;
    printf("%s: seed %llu (set WEFT_TEST_SEED to replay)\n", test, (unsigned long long)seed);
    return seed;
}

void ck_verify(weft_verify_grad_fn fn, void *user, size_t n_in, weft_tensor_t *const *points)
{
    weft_verify_grad_result_t r;
    weft_status_t st = weft_verify_grad(fn, user, n_in, points, NULL, &r);
    if (st != WEFT_OK) {
        print_error("verify_grad: %s: %s\n", weft_status_name(st), r.message);
    }
    assert_int_equal(st, WEFT_OK);
    assert_true(r.n_evals > 0);
}

weft_tensor_t *ck_random(weft_dtype_t dt, int nd, const int64_t *shape, double lo, double hi,
                         uint64_t seed)
{
    weft_tensor_t *t = NULL;
    assert_int_equal(weft_verify_grad_random(dt, nd, shape, lo, hi, seed, &t), WEFT_OK);
    return t;
}

void ck_expect_eval_n(weft_graph_t *g, size_t n, weft_var_t *const *xs,
                      weft_tensor_t *const *vals, weft_var_t *y, weft_dtype_t dt, int nd,
                      const int64_t *shape, const double *want, double tol)
{
    weft_tensor_t *r = NULL;
    assert_non_null(y);
    assert_int_equal(ck_eval(g, n, xs, vals, y, &r), WEFT_OK);
    assert_int_equal(weft_tensor_dtype(r), dt);
    ck_expect(r, nd, shape, want, tol);
    weft_tensor_release(r);
}

void ck_write_saved_graph(const char *text)
{
    const char *path = getenv("WEFT_SAVED_GRAPH");
    FILE *fp = path ? fopen(path, "w") : NULL;
    if (fp) {
        fputs(text, fp);
        fclose(fp);
    }
}

void ck_expect_eval(weft_graph_t *g, weft_var_t *x, weft_tensor_t *xv, weft_var_t *y,
                    weft_dtype_t dt, int nd, const int64_t *shape, const double *want,
                    double tol)
{
    ck_expect_eval_n(g, 1, &x, &xv, y, dt, nd, shape, want, tol);
}

void ck_expect_tail(const char *got, const char *msg, const char *site)
{
    size_t lg = strlen(got), lm = strlen(msg);
    if (lg < lm || strcmp(got + lg - lm, msg) != 0) {
        print_error("message: %s\n", got);
    }
    assert_true(lg >= lm);
    assert_string_equal(got + lg - lm, msg);
    assert_non_null(strstr(got, site));
}

void ck_verify_random2(weft_verify_grad_fn fn, void *user, int nda, const int64_t *sa, int ndb,
                       const int64_t *sb, uint64_t seed)
{
    weft_tensor_t *pts[2] = {ck_random(WEFT_FLOAT64, nda, sa, -1, 1, seed),
                             ck_random(WEFT_FLOAT64, ndb, sb, -1, 1, seed + 1)};
    ck_verify(fn, user, 2, pts);
    weft_tensor_release(pts[0]);
    weft_tensor_release(pts[1]);
}
