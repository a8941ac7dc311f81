/* tile_cholesky demo (tools/demos/tile_cholesky_core.h) on small matrices:
 * the weft tile factorization on 2 workers matches LAPACKE_dpotrf and
 * reconstructs A (square and ragged tilings, repeated calls on reloaded
 * tiles), the graph holds exactly the tile ops (no copies: every tile is
 * updated in place), a matrix that is not positive definite fails the call
 * with the tile op named, and bad arguments are refused. The diagonal-tile
 * kernel (tile_cholesky_kernel.h) alone: factor and inverse against LAPACK
 * at orders that recurse unevenly, padded rows, the failing minor's order. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <cblas.h>
#include <lapacke.h>

#include "tile_cholesky_core.h"
#include "tile_cholesky_kernel.h"

static weft_pool_t *pool;

static int setup(void **state)
{
    (void)state;
    return weft_pool_create(2, NULL, &pool) == WEFT_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return weft_pool_destroy(pool) == WEFT_OK ? 0 : -1;
}

/* Factors the seeded n x n matrix `calls` times (reloading the tiles each
 * time) and checks the last factor against LAPACKE. */
static void factor_and_check(int n, int nb, int calls)
{
    size_t bytes = (size_t)n * (size_t)n * sizeof(double);
    double *a = NULL, *l = malloc(bytes), *lw = malloc(bytes);
    chol_tiles_t *t = NULL;
    assert_non_null(l);
    assert_non_null(lw);
    assert_int_equal(chol_make_spd(n, 11, &a), WEFT_OK);
    assert_int_equal(chol_tiles_create(n, nb, pool, &t), WEFT_OK);
    for (int c = 0; c < calls; c++) {
        chol_tiles_load(t, a);
        assert_int_equal(chol_tiles_run(t), WEFT_OK);
    }
    chol_tiles_store(t, lw);
    memcpy(l, a, bytes);
    assert_int_equal(chol_lapacke(l, n, 2), 0);
    double res = chol_residual(a, lw, n, 1), diff = chol_max_diff(lw, l, n);
    printf("n=%d nb=%d residual=%.3g diff_vs_lapacke=%.3g\n", n, nb, res, diff);
    assert_true(res < 1e-12);
    assert_true(diff < 1e-12);
    assert_true(lw[1] == 0.0); /* upper triangle zeroed */
    chol_tiles_destroy(t);
    free(a);
    free(l);
    free(lw);
}

static void test_tile_cholesky_n64_nb16_matches_lapacke(void **state)
{
    (void)state;
    factor_and_check(64, 16, 1);
}

static void test_tile_cholesky_ragged_tiles_match_lapacke(void **state)
{
    (void)state;
    factor_and_check(50, 16, 1); /* tiles 16, 16, 16, 2 */
    factor_and_check(7, 16, 1);  /* one tile smaller than nb */
    factor_and_check(200, 96, 1); /* tiles 96, 96, 8: the kernel recurses */
}

static void test_tile_cholesky_repeated_calls_on_reloaded_tiles_match(void **state)
{
    (void)state;
    factor_and_check(48, 16, 3);
}

/* nt = 4 tiles per side: 3 potrf with the inverse + the last one without +
 * 6 trmm + 6 syrk + 4 gemm + 3 transposed views (of the trmm results that a
 * gemm reads), and no DeepCopy. */
static void test_tile_cholesky_graph_has_only_tile_ops(void **state)
{
    (void)state;
    chol_tiles_t *t = NULL;
    assert_int_equal(chol_tiles_create(64, 16, pool, &t), WEFT_OK);
    weft_function_t *f = chol_tiles_function(t);
    assert_int_equal(weft_function_n_nodes(f), 23);
    assert_int_equal(weft_function_n_inputs(f), 10);
    assert_int_equal(weft_function_n_outputs(f), 0);
    chol_tiles_destroy(t);
}

static void test_tile_cholesky_not_positive_definite_fails_naming_potrf(void **state)
{
    (void)state;
    int n = 32;
    double *a = NULL;
    chol_tiles_t *t = NULL;
    assert_int_equal(chol_make_spd(n, 5, &a), WEFT_OK);
    a[20 * n + 20] = -1.0; /* a negative diagonal entry in tile (1, 1) */
    assert_int_equal(chol_tiles_create(n, 16, pool, &t), WEFT_OK);
    chol_tiles_load(t, a);
    assert_int_equal(chol_tiles_run(t), WEFT_ERANGE);
    assert_non_null(strstr(weft_function_last_error(chol_tiles_function(t)), "TilePotrf"));
    chol_tiles_destroy(t);
    free(a);
}

static void test_tile_cholesky_bad_arguments_return_einval(void **state)
{
    (void)state;
    weft_graph_t *g = NULL; /* the factor ops refuse a wrong input count */
    const weft_op_t *op = NULL;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    assert_int_equal(weft_op_create(g, &chol_potrf_inv_class, NULL, &op), WEFT_OK);
    assert_null(weft_apply_create(g, op, 0, NULL));
    assert_int_equal(weft_graph_error(g), WEFT_EINVAL);
    assert_non_null(strstr(weft_graph_error_message(g), "TilePotrfInv takes 1 input"));
    weft_graph_destroy(g);
    chol_tiles_t *t = (chol_tiles_t *)&pool;
    double *a = NULL;
    assert_int_equal(chol_tiles_create(0, 16, pool, &t), WEFT_EINVAL);
    assert_null(t);
    assert_int_equal(chol_tiles_create(64, 0, pool, &t), WEFT_EINVAL);
    assert_int_equal(chol_tiles_create(64, 16, NULL, &t), WEFT_EINVAL);
    assert_int_equal(chol_tiles_create(64, 16, pool, NULL), WEFT_EINVAL);
    assert_int_equal(chol_make_spd(0, 1, &a), WEFT_EINVAL);
}

/* ---- the diagonal-tile kernel ---------------------------------------------------- */

/* An n x n SPD tile in rows of ld doubles; the padding and the strict upper
 * triangle hold a sentinel the kernel must leave. */
static double *spd_tile(int n, int ld, double sentinel)
{
    double *a = NULL;
    double *t = malloc((size_t)n * (size_t)ld * sizeof *t + 1);
    assert_int_equal(chol_make_spd(n, 3, &a), WEFT_OK);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < ld; j++) t[(size_t)i * ld + j] = j <= i ? a[(size_t)i * n + j] : sentinel;
    free(a);
    return t;
}

static void kernel_matches_lapack(int n, int ld)
{
    const double sentinel = 12345.0;
    double *a = spd_tile(n, ld, sentinel), *f = spd_tile(n, ld, sentinel);
    double *ref = spd_tile(n, n, 0.0), *w = malloc((size_t)n * ld * sizeof *w + 1);
    double *p = calloc((size_t)n * n + 1, sizeof *p);
    assert_int_equal(chol_tile_factor(a, ld, w, ld, n, 1), 0);
    assert_int_equal(chol_tile_factor(f, ld, p, n, n, 0), 0); /* p as scratch */
    assert_int_equal(LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', n, ref, n), 0);
    double diff = 0, eye = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < ld; j++) {
            double x = a[(size_t)i * ld + j];
            if (j > i) assert_true(x == sentinel); /* upper and padding untouched */
            else diff = fmax(diff, fabs(x - ref[(size_t)i * n + j]));
            if (j <= i) assert_true(f[(size_t)i * ld + j] == x); /* same bits without W */
        }
    for (int i = 0; i < n; i++) /* L L^-1, lower triangles only */
        for (int j = 0; j <= i; j++) {
            double s = 0;
            for (int k = j; k <= i; k++) s += a[(size_t)i * ld + k] * w[(size_t)k * ld + j];
            eye = fmax(eye, fabs(s - (i == j)));
        }
    printf("kernel n=%d ld=%d diff_vs_lapack=%.3g |L Linv - I|=%.3g\n", n, ld, diff, eye);
    assert_true(diff < 1e-12 * n);
    assert_true(eye < 1e-13);
    free(a);
    free(f);
    free(ref);
    free(w);
    free(p);
}

static void test_tile_kernel_factor_and_inverse_match_lapack(void **state)
{
    (void)state;
    kernel_matches_lapack(1, 1);
    kernel_matches_lapack(CHOL_TILE_BASE, CHOL_TILE_BASE); /* LAPACK alone */
    kernel_matches_lapack(17, 20);  /* halves 16 and 1 */
    kernel_matches_lapack(100, 103); /* 56 + 44, each halved again */
    kernel_matches_lapack(257, 257);
}

static void test_tile_kernel_names_the_failing_minor(void **state)
{
    (void)state;
    int n = 100;
    double *a = spd_tile(n, n, 0.0), *w = malloc((size_t)n * n * sizeof *w);
    a[70 * n + 70] = -1.0; /* minors of order 1..70 stay positive definite */
    assert_int_equal(chol_tile_factor(a, n, w, n, n, 1), 71);
    a[0] = -1.0;
    assert_int_equal(chol_tile_factor(a, n, w, n, n, 0), 1);
    assert_int_equal(chol_tile_factor(a, n - 1, w, n, n, 1), -1); /* lda < n */
    assert_int_equal(chol_tile_factor(a, n, w, n, -1, 1), -1);
    assert_int_equal(chol_tile_factor(NULL, n, w, n, n, 1), -1);
    assert_int_equal(chol_tile_factor(a, n, w, n, 0, 1), 0); /* nothing to do */
    free(a);
    free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tile_cholesky_n64_nb16_matches_lapacke),
        cmocka_unit_test(test_tile_cholesky_ragged_tiles_match_lapacke),
        cmocka_unit_test(test_tile_cholesky_repeated_calls_on_reloaded_tiles_match),
        cmocka_unit_test(test_tile_cholesky_graph_has_only_tile_ops),
        cmocka_unit_test(test_tile_cholesky_not_positive_definite_fails_naming_potrf),
        cmocka_unit_test(test_tile_cholesky_bad_arguments_return_einval),
        cmocka_unit_test(test_tile_kernel_factor_and_inverse_match_lapack),
        cmocka_unit_test(test_tile_kernel_names_the_failing_minor),
    };
    return cmocka_run_group_tests_name("tile_cholesky", tests, setup, teardown);
}
