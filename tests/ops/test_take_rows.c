/* Take's gather paths that move whole rows wider than 8 bytes: rows taken
 * across several outer blocks (x (2, 3, 2) along axis 1: the row pointer
 * advances block by block) with negative and repeated indices, and int64
 * indices that are a strided view (not read directly) against contiguous
 * ones, both against NumPy's np.take. */
#include "ops_check.h"
#include "ops_fixture.h" /* fx_setup, fx_teardown: *state is the graph */
#include "weft/index_ops.h"

static const int64_t xs[3] = {2, 3, 2};
static const double X[12] = {0, 1, 10, 11, 20, 21, 100, 101, 110, 111, 120, 121};

static void test_wide_rows_over_outer_blocks(void **state)
{
    weft_graph_t *g = *state;
    int64_t is[1] = {4}, s[3] = {2, 4, 2};
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT64, 3, xs, X), *r = NULL;
    weft_tensor_t *iv = ck_tensor(WEFT_INT64, 1, is, (double[]){2, -3, 2, 1});
    weft_var_t *x = ck_var(g, WEFT_FLOAT64, 3, xs), *ix = ck_var(g, WEFT_INT64, 1, is);
    assert_int_equal(ck_eval(g, 2, (weft_var_t *[]){x, ix}, (weft_tensor_t *[]){xv, iv},
                             weft_take(g, x, ix, 1), &r),
                     WEFT_OK);
    /* np.take(X.reshape(2, 3, 2), [2, -3, 2, 1], axis=1) */
    ck_expect(r, 3, s, (double[]){20, 21, 0, 1, 20, 21, 10, 11, 120, 121, 100, 101, 120, 121,
                                  110, 111},
              0);
    weft_tensor_release(r);
    weft_tensor_release(xv);
    weft_tensor_release(iv);
}

static void test_strided_int64_indices(void **state)
{
    weft_graph_t *g = *state;
    int64_t is[1] = {6}, s[2] = {3, 2};
    weft_tensor_t *xv = ck_tensor(WEFT_FLOAT64, 3, xs, X), *r = NULL;
    weft_tensor_t *iv = ck_tensor(WEFT_INT64, 1, is, (double[]){1, 7, 0, 7, -1, 7});
    weft_var_t *x = ck_var(g, WEFT_FLOAT64, 3, xs), *ix = ck_var(g, WEFT_INT64, 1, is);
    weft_slice_t every2 = WEFT_SLICE(WEFT_SLICE_NONE, WEFT_SLICE_NONE, 2);
    weft_var_t *view = weft_subtensor(g, ix, 1, &every2); /* [1, 0, -1], stride 2 */
    static const int64_t s62[2] = {6, 2};
    weft_var_t *flat = weft_reshape(g, x, 2, s62);
    weft_var_t *t = weft_take(g, flat, view, 0);
    assert_int_equal(ck_eval(g, 2, (weft_var_t *[]){x, ix}, (weft_tensor_t *[]){xv, iv}, t, &r),
                     WEFT_OK);
    /* np.take(X.reshape(6, 2), [1, 0, -1], axis=0) */
    ck_expect(r, 2, s, (double[]){10, 11, 0, 1, 120, 121}, 0);
    weft_tensor_release(r);
    weft_tensor_release(xv);
    weft_tensor_release(iv);
}

#define T(name) cmocka_unit_test_setup_teardown(name, fx_setup, fx_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_wide_rows_over_outer_blocks),
        T(test_strided_int64_indices),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
