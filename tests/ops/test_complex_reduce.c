/* Complex Sum, Mean and Prod over the pool (docs/dtypes.md "Complex
 * numbers", reduce_complex.c): the real reductions' fixed split, so the
 * same bits at 1, 2 and 4 workers and in the evaluator, over trailing,
 * leading and all axes and a strided view; a long sum is the left fold of
 * its chunks' sums and within the fold's error bound of the exact sum. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ops_check.h"
#include "ops_threads.h"

/* complex(x, cos x) in dt */
static weft_var_t *cx_of(weft_graph_t *g, weft_var_t *x, weft_dtype_t dt)
{
    return weft_cast(g, weft_complex(g, x, weft_cos(g, x)), dt);
}

/* complex(1 + x / 1000, x / 1000): products near 1 */
static weft_var_t *near_one(weft_graph_t *g, weft_var_t *x, weft_dtype_t dt)
{
    weft_var_t *s = weft_mul_scalar(g, x, 1e-3);
    return weft_cast(g, weft_complex(g, weft_add_scalar(g, s, 1.0), s), dt);
}

static void test_same_bits_at_1_2_4_workers(void **state)
{
    (void)state;
    weft_graph_t *g;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    const weft_dtype_t dts[2] = {WEFT_COMPLEX128, WEFT_COMPLEX64};
    int a0 = 0, a1 = 1;
    int64_t s[2] = {4, 300001}, p[2] = {300001, 3};
    weft_tensor_t *xv = ck_random(WEFT_FLOAT64, 2, s, -1, 1, ck_seed("cx_trailing"));
    weft_var_t *x = ck_var(g, WEFT_FLOAT64, 2, s), *outs[CK_THREADS_MAX_OUTS];
    size_t n = 0;
    for (int k = 0; k < 2; k++) {
        weft_var_t *z = cx_of(g, x, dts[k]), *q = near_one(g, x, dts[k]);
        outs[n++] = weft_sum(g, z, 1, &a1, false);  /* trailing: chunks of each lane */
        outs[n++] = weft_mean(g, z, 1, &a0, false); /* leading: kept columns */
        outs[n++] = weft_sum(g, z, 0, NULL, false); /* all axes */
        outs[n++] = weft_mean(g, z, 0, NULL, true);
        outs[n++] = weft_prod(g, q, 1, &a1, false);
        outs[n++] = weft_prod(g, q, 0, NULL, false);
    }
    for (size_t i = 0; i < n; i++) assert_non_null(outs[i]);
    ck_same_bits_at_1_2_4(g, x, xv, n, outs);
    weft_tensor_release(xv);
    /* leading axes over few columns: chunks of rows; a strided view */
    xv = ck_random(WEFT_FLOAT64, 2, p, -1, 1, ck_seed("cx_rows"));
    x = ck_var(g, WEFT_FLOAT64, 2, p);
    n = 0;
    for (int k = 0; k < 2; k++) {
        weft_var_t *z = cx_of(g, x, dts[k]);
        outs[n++] = weft_sum(g, z, 1, &a0, false);
        outs[n++] = weft_prod(g, near_one(g, x, dts[k]), 1, &a0, false);
        outs[n++] = weft_mean(g, weft_transpose(g, z), 1, &a1, false);
    }
    for (size_t i = 0; i < n; i++) assert_non_null(outs[i]);
    ck_same_bits_at_1_2_4(g, x, xv, n, outs);
    weft_tensor_release(xv);
    weft_graph_destroy(g);
}

/* The complex128 Sum of z (n elements as (re, im) in zs), evaluated. */
static void sum_of(const double *zs, int64_t n, double *out)
{
    weft_graph_t *g;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    int64_t shape[1] = {n};
    weft_var_t *z = ck_var(g, WEFT_COMPLEX128, 1, shape);
    weft_tensor_t *zv = NULL, *r = NULL;
    assert_int_equal(weft_tensor_empty(WEFT_COMPLEX128, 1, shape, &zv), WEFT_OK);
    memcpy(weft_tensor_data(zv), zs, (size_t)n * 2 * sizeof(double));
    assert_int_equal(ck_eval(g, 1, &z, &zv, weft_sum(g, z, 0, NULL, false), &r), WEFT_OK);
    memcpy(out, weft_tensor_data(r), 2 * sizeof(double));
    weft_tensor_release(r);
    weft_tensor_release(zv);
    weft_graph_destroy(g);
}

/* 300001 elements split into 5 chunks (4 of 65536, one of 37857), each
 * below the split size (one box); their sums merge left to right. */
static void test_split_order_and_bound(void **state)
{
    (void)state;
    const int64_t n = 300001, grain = 65536;
    int64_t shape[1] = {2 * n};
    weft_tensor_t *pv = ck_random(WEFT_FLOAT64, 1, shape, -1, 1, ck_seed("cx_order"));
    const double *zs = weft_tensor_data(pv);
    double got[2], want[2] = {0, 0}, part[2];
    sum_of(zs, n, got);
    for (int64_t lo = 0; lo < n; lo += grain) {
        sum_of(zs + 2 * lo, n - lo < grain ? n - lo : grain, part);
        want[0] = lo ? want[0] + part[0] : part[0];
        want[1] = lo ? want[1] + part[1] : part[1];
    }
    assert_memory_equal(got, want, sizeof got);
    for (int c = 0; c < 2; c++) {
        long double exact = 0, abs_sum = 0;
        for (int64_t i = 0; i < n; i++) {
            exact += zs[2 * i + c];
            abs_sum += fabsl((long double)zs[2 * i + c]);
        }
        assert_true(fabsl((long double)got[c] - exact) <= (n + 2) * 0x1p-52L * abs_sum);
    }
    weft_tensor_release(pv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_bits_at_1_2_4_workers),
        cmocka_unit_test(test_split_order_and_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
