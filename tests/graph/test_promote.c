/* weft_dtype_promote and weft_dtype_float_of against NumPy 1.24's
 * np.result_type on dtypes for every pair of the 14 dtypes (the tables were
 * printed by /usr/bin/python3 with numpy: result_type(a, b) and
 * result_type(d, float16) for real d), and invalid dtypes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "weft/type.h"

static const weft_dtype_t promoted[WEFT_DTYPE_COUNT][WEFT_DTYPE_COUNT] = {
    /* row a, column b (weft_dtype_t order) */
    {WEFT_BOOL, WEFT_INT32, WEFT_INT64, WEFT_FLOAT32, WEFT_FLOAT64, WEFT_INT8, WEFT_INT16, WEFT_UINT8, WEFT_UINT16, WEFT_UINT32, WEFT_UINT64, WEFT_FLOAT16, WEFT_COMPLEX64, WEFT_COMPLEX128},
    {WEFT_INT32, WEFT_INT32, WEFT_INT64, WEFT_FLOAT64, WEFT_FLOAT64, WEFT_INT32, WEFT_INT32, WEFT_INT32, WEFT_INT32, WEFT_INT64, WEFT_FLOAT64, WEFT_FLOAT64, WEFT_COMPLEX128, WEFT_COMPLEX128},
    {WEFT_INT64, WEFT_INT64, WEFT_INT64, WEFT_FLOAT64, WEFT_FLOAT64, WEFT_INT64, WEFT_INT64, WEFT_INT64, WEFT_INT64, WEFT_INT64, WEFT_FLOAT64, WEFT_FLOAT64, WEFT_COMPLEX128, WEFT_COMPLEX128},
    {WEFT_FLOAT32, WEFT_FLOAT64, WEFT_FLOAT64, WEFT_FLOAT32, WEFT_FLOAT64, WEFT_FLOAT32, WEFT_FLOAT32, WEFT_FLOAT32, WEFT_FLOAT32, WEFT_FLOAT64, WEFT_FLOAT64, WEFT_FLOAT32, WEFT_COMPLEX64, WEFT_COMPLEX128},
    {WEFT_FLOAT64, WEFT_FLOAT64, WEFT_FLOAT64, WEFT_FLOAT64, WEFT_FLOAT64, WEFT_FLOAT64, WEFT_FLOAT64, WEFT_FLOAT64, WEFT_FLOAT64, WEFT_FLOAT64, WEFT_FLOAT64, WEFT_FLOAT64, WEFT_COMPLEX128, WEFT_COMPLEX128},
    {WEFT_INT8, WEFT_INT32, WEFT_INT64, WEFT_FLOAT32, WEFT_FLOAT64, WEFT_INT8, WEFT_INT16, WEFT_INT16, WEFT_INT32, WEFT_INT64, WEFT_FLOAT64, WEFT_FLOAT16, WEFT_COMPLEX64, WEFT_COMPLEX128},
    {WEFT_INT16, WEFT_INT32, WEFT_INT64, WEFT_FLOAT32, WEFT_FLOAT64, WEFT_INT16, WEFT_INT16, WEFT_INT16, WEFT_INT32, WEFT_INT64, WEFT_FLOAT64, WEFT_FLOAT32, WEFT_COMPLEX64, WEFT_COMPLEX128},
    {WEFT_UINT8, WEFT_INT32, WEFT_INT64, WEFT_FLOAT32, WEFT_FLOAT64, WEFT_INT16, WEFT_INT16, WEFT_UINT8, WEFT_UINT16, WEFT_UINT32, WEFT_UINT64, WEFT_FLOAT16, WEFT_COMPLEX64, WEFT_COMPLEX128},
    {WEFT_UINT16, WEFT_INT32, WEFT_INT64, WEFT_FLOAT32, WEFT_FLOAT64, WEFT_INT32, WEFT_INT32, WEFT_UINT16, WEFT_UINT16, WEFT_UINT32, WEFT_UINT64, WEFT_FLOAT32, WEFT_COMPLEX64, WEFT_COMPLEX128},
    {WEFT_UINT32, WEFT_INT64, WEFT_INT64, WEFT_FLOAT64, WEFT_FLOAT64, WEFT_INT64, WEFT_INT64, WEFT_UINT32, WEFT_UINT32, WEFT_UINT32, WEFT_UINT64, WEFT_FLOAT64, WEFT_COMPLEX128, WEFT_COMPLEX128},
    {WEFT_UINT64, WEFT_FLOAT64, WEFT_FLOAT64, WEFT_FLOAT64, WEFT_FLOAT64, WEFT_FLOAT64, WEFT_FLOAT64, WEFT_UINT64, WEFT_UINT64, WEFT_UINT64, WEFT_UINT64, WEFT_FLOAT64, WEFT_COMPLEX128, WEFT_COMPLEX128},
    {WEFT_FLOAT16, WEFT_FLOAT64, WEFT_FLOAT64, WEFT_FLOAT32, WEFT_FLOAT64, WEFT_FLOAT16, WEFT_FLOAT32, WEFT_FLOAT16, WEFT_FLOAT32, WEFT_FLOAT64, WEFT_FLOAT64, WEFT_FLOAT16, WEFT_COMPLEX64, WEFT_COMPLEX128},
    {WEFT_COMPLEX64, WEFT_COMPLEX128, WEFT_COMPLEX128, WEFT_COMPLEX64, WEFT_COMPLEX128, WEFT_COMPLEX64, WEFT_COMPLEX64, WEFT_COMPLEX64, WEFT_COMPLEX64, WEFT_COMPLEX128, WEFT_COMPLEX128, WEFT_COMPLEX64, WEFT_COMPLEX64, WEFT_COMPLEX128},
    {WEFT_COMPLEX128, WEFT_COMPLEX128, WEFT_COMPLEX128, WEFT_COMPLEX128, WEFT_COMPLEX128, WEFT_COMPLEX128, WEFT_COMPLEX128, WEFT_COMPLEX128, WEFT_COMPLEX128, WEFT_COMPLEX128, WEFT_COMPLEX128, WEFT_COMPLEX128, WEFT_COMPLEX128, WEFT_COMPLEX128},
};

static const weft_dtype_t float_of[WEFT_DTYPE_COUNT] = {WEFT_FLOAT16, WEFT_FLOAT64, WEFT_FLOAT64, WEFT_FLOAT32, WEFT_FLOAT64, WEFT_FLOAT16, WEFT_FLOAT32, WEFT_FLOAT16, WEFT_FLOAT32, WEFT_FLOAT64, WEFT_FLOAT64, WEFT_FLOAT16, WEFT_COMPLEX64, WEFT_COMPLEX128};

static void test_promote_matches_numpy_result_type_for_every_pair(void **state)
{
    (void)state;
    for (int a = 0; a < WEFT_DTYPE_COUNT; a++)
        for (int b = 0; b < WEFT_DTYPE_COUNT; b++) {
            weft_dtype_t got = weft_dtype_promote((weft_dtype_t)a, (weft_dtype_t)b);
            if (got != promoted[a][b])
                print_error("%s with %s: got %s, want %s\n", weft_dtype_name((weft_dtype_t)a),
                            weft_dtype_name((weft_dtype_t)b), weft_dtype_name(got),
                            weft_dtype_name(promoted[a][b]));
            assert_int_equal(got, promoted[a][b]);
        }
}

static void test_float_of_matches_numpy_for_every_dtype(void **state)
{
    (void)state;
    for (int d = 0; d < WEFT_DTYPE_COUNT; d++)
        assert_int_equal(weft_dtype_float_of((weft_dtype_t)d), float_of[d]);
}

static void test_promote_of_an_invalid_dtype_is_dtype_count(void **state)
{
    (void)state;
    assert_int_equal(weft_dtype_promote((weft_dtype_t)99, WEFT_INT8), WEFT_DTYPE_COUNT);
    assert_int_equal(weft_dtype_promote(WEFT_INT8, (weft_dtype_t)-1), WEFT_DTYPE_COUNT);
    assert_int_equal(weft_dtype_float_of((weft_dtype_t)WEFT_DTYPE_COUNT), WEFT_DTYPE_COUNT);
    assert_int_equal(weft_dtype_kind((weft_dtype_t)99), -1);
    assert_int_equal(weft_dtype_kind(WEFT_UINT16), WEFT_KIND_UINT);
    assert_int_equal(weft_dtype_kind(WEFT_FLOAT16), WEFT_KIND_FLOAT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_promote_matches_numpy_result_type_for_every_pair),
        cmocka_unit_test(test_float_of_matches_numpy_for_every_dtype),
        cmocka_unit_test(test_promote_of_an_invalid_dtype_is_dtype_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
