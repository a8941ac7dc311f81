/* Tensor runtime: creation, alignment, borrowed/wrapped memory, views and
 * their lifetime, reshape (view vs copy), conversion, element helpers, the
 * N-d iterator's collapsing, concurrent reference counting, bad inputs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tensor/tensor_int.h"
#include "weft/tensor.h"

static void check_values(const weft_tensor_t *t, const double *want, size_t n)
{
    assert_int_equal(weft_tensor_size(t), n);
    for (size_t i = 0; i < n; i++) assert_float_equal(weft_tensor_flat_get(t, i), want[i], 0.0);
}

static void test_tensor_empty_small_is_aligned_16_after_its_handle(void **state)
{
    (void)state;
    int64_t two = 2, three = 3;
    weft_tensor_t *s0, *s1, *big;
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, 0, NULL, &s0), WEFT_OK);
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, 1, &two, &s1), WEFT_OK);
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, 1, &three, &big), WEFT_OK);
    assert_int_equal((uintptr_t)weft_tensor_data(s0) % 16, 0);
    assert_int_equal((uintptr_t)weft_tensor_data(s1) % 16, 0);
    assert_int_equal((uintptr_t)weft_tensor_data(big) % WEFT_TENSOR_ALIGN, 0);
    /* a 0-d value shares its handle's cache line */
    assert_int_equal((uintptr_t)weft_tensor_data(s0) / 64, (uintptr_t)s0 / 64);
    *(double *)weft_tensor_data(s0) = 4.5;
    weft_tensor_t *v;
    assert_int_equal(weft_tensor_view(s0, 0, NULL, NULL, 0, &v), WEFT_OK);
    weft_tensor_release(s0); /* the view keeps the block (handle included) alive */
    assert_true(weft_tensor_flat_get(v, 0) == 4.5);
    weft_tensor_release(v);
    weft_tensor_release(s1);
    weft_tensor_release(big);
}

static void test_tensor_empty_is_aligned_contiguous_with_refcount_one(void **state)
{
    (void)state;
    int64_t shape[3] = {2, 3, 5};
    weft_tensor_t *t;
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT32, 3, shape, &t), WEFT_OK);
    assert_int_equal(weft_tensor_dtype(t), WEFT_FLOAT32);
    assert_int_equal(weft_tensor_ndim(t), 3);
    assert_int_equal(weft_tensor_dim(t, 2), 5);
    assert_int_equal(weft_tensor_stride(t, 0), 15);
    assert_int_equal(weft_tensor_stride(t, 1), 5);
    assert_int_equal(weft_tensor_stride(t, 2), 1);
    assert_int_equal(weft_tensor_size(t), 30);
    assert_int_equal((uintptr_t)weft_tensor_data(t) % WEFT_TENSOR_ALIGN, 0);
    assert_true(weft_tensor_is_contiguous(t));
    assert_int_equal(weft_tensor_refcount(t), 1);
    assert_int_equal(weft_tensor_buffer_refcount(t), 1);
    assert_true(weft_tensor_is_exclusive(t));
    weft_tensor_retain(t);
    assert_false(weft_tensor_is_exclusive(t));
    weft_tensor_release(t);
    weft_tensor_release(t);
}

static void test_tensor_zeros_full_and_zero_dim(void **state)
{
    (void)state;
    int64_t shape[1] = {4};
    weft_tensor_t *z, *f, *b, *s;
    assert_int_equal(weft_tensor_zeros(WEFT_INT64, 1, shape, &z), WEFT_OK);
    assert_int_equal(weft_tensor_full(WEFT_INT32, 1, shape, -2.7, &f), WEFT_OK);
    assert_int_equal(weft_tensor_full(WEFT_BOOL, 1, shape, 0.25, &b), WEFT_OK);
    assert_int_equal(weft_tensor_full(WEFT_FLOAT64, 0, NULL, 3.5, &s), WEFT_OK);
    check_values(z, (double[]){0, 0, 0, 0}, 4);
    check_values(f, (double[]){-2, -2, -2, -2}, 4); /* truncation toward zero */
    check_values(b, (double[]){1, 1, 1, 1}, 4);
    check_values(s, (double[]){3.5}, 1);
    assert_int_equal(weft_tensor_ndim(s), 0);
    weft_tensor_release(z);
    weft_tensor_release(f);
    weft_tensor_release(b);
    weft_tensor_release(s);
}

static void test_tensor_empty_shape_has_no_elements(void **state)
{
    (void)state;
    int64_t shape[2] = {0, 3};
    weft_tensor_t *t;
    assert_int_equal(weft_tensor_zeros(WEFT_FLOAT64, 2, shape, &t), WEFT_OK);
    assert_int_equal(weft_tensor_size(t), 0);
    assert_true(weft_tensor_is_contiguous(t));
    assert_int_equal(weft_tensor_fill(t, 1.0), WEFT_OK);
    assert_true(isnan(weft_tensor_flat_get(t, 0)));
    weft_tensor_release(t);
}

static void test_tensor_from_data_borrows_user_memory(void **state)
{
    (void)state;
    double data[6] = {1, 2, 3, 4, 5, 6};
    int64_t shape[2] = {3, 2}, strides[2] = {1, 3}; /* the transpose of a 2x3 */
    weft_tensor_t *t;
    assert_int_equal(weft_tensor_from_data(WEFT_FLOAT64, 2, shape, strides, data, &t), WEFT_OK);
    assert_ptr_equal(weft_tensor_data(t), data);
    assert_false(weft_tensor_is_contiguous(t));
    check_values(t, (double[]){1, 4, 2, 5, 3, 6}, 6);
    assert_int_equal(weft_tensor_set(t, (int64_t[]){2, 1}, 60.0), WEFT_OK);
    assert_float_equal(data[5], 60.0, 0.0);
    double v;
    assert_int_equal(weft_tensor_get(t, (int64_t[]){0, 1}, &v), WEFT_OK);
    assert_float_equal(v, 4.0, 0.0);
    assert_int_equal(weft_tensor_get(t, (int64_t[]){3, 0}, &v), WEFT_ERANGE);
    assert_non_null(strstr(weft_tensor_last_error(), "index 3 outside [0, 3)"));
    weft_tensor_release(t);
}

static int g_freed;
static void count_free(void *user, void *data)
{
    assert_ptr_equal(user, &g_freed);
    free(data);
    g_freed++;
}

static void test_tensor_wrap_frees_once_after_last_view(void **state)
{
    (void)state;
    g_freed = 0;
    float *mem = malloc(8 * sizeof *mem);
    for (int i = 0; i < 8; i++) mem[i] = (float)i;
    int64_t shape[1] = {8}, vshape[1] = {4}, vstr[1] = {-2};
    weft_tensor_t *t, *v;
    assert_int_equal(weft_tensor_wrap(WEFT_FLOAT32, 1, shape, NULL, mem, count_free, &g_freed, &t),
                     WEFT_OK);
    /* every other element, backwards from the last: 7 5 3 1 */
    assert_int_equal(weft_tensor_view(t, 1, vshape, vstr, 7, &v), WEFT_OK);
    assert_int_equal(weft_tensor_buffer_refcount(t), 2);
    assert_true(weft_tensor_shares_buffer(t, v));
    weft_tensor_release(t);
    assert_int_equal(g_freed, 0);
    check_values(v, (double[]){7, 5, 3, 1}, 4);
    weft_tensor_release(v);
    assert_int_equal(g_freed, 1);
}

static void test_tensor_wrap_failure_takes_memory(void **state)
{
    (void)state;
    g_freed = 0;
    int64_t shape[1] = {-1};
    weft_tensor_t *t;
    assert_int_equal(weft_tensor_wrap(WEFT_FLOAT32, 1, shape, NULL, malloc(4), count_free,
                                      &g_freed, &t),
                     WEFT_EINVAL);
    assert_int_equal(g_freed, 1);
    assert_null(t);
}

static void test_tensor_view_keeps_base_alive_and_checks_bounds(void **state)
{
    (void)state;
    int64_t shape[2] = {3, 4};
    weft_tensor_t *t, *v, *bad = (weft_tensor_t *)1;
    assert_int_equal(weft_tensor_empty(WEFT_INT32, 2, shape, &t), WEFT_OK);
    for (size_t i = 0; i < 12; i++) ((int32_t *)weft_tensor_data(t))[i] = (int32_t)i;
    int64_t vs[1] = {3}, vst[1] = {4};
    assert_int_equal(weft_tensor_view(t, 1, vs, vst, 1, &v), WEFT_OK); /* column 1 */
    weft_tensor_release(t);
    check_values(v, (double[]){1, 5, 9}, 3);
    int64_t big[1] = {4};
    assert_int_equal(weft_tensor_view(v, 1, big, vst, 0, &bad), WEFT_ERANGE);
    assert_null(bad);
    assert_non_null(strstr(weft_tensor_last_error(), "outside its base's buffer"));
    int64_t neg[1] = {-4};
    assert_int_equal(weft_tensor_view(v, 1, vs, neg, 0, &bad), WEFT_ERANGE);
    /* walking backwards from the last element of the column stays inside */
    assert_int_equal(weft_tensor_view(v, 1, vs, neg, 8, &bad), WEFT_OK);
    check_values(bad, (double[]){9, 5, 1}, 3);
    weft_tensor_release(bad);
    weft_tensor_release(v);
}

static void test_tensor_bad_arguments_return_exact_statuses(void **state)
{
    (void)state;
    int64_t shape[2] = {2, 2}, neg[1] = {-3}, huge[2] = {INT64_MAX / 2, 4};
    int64_t many[WEFT_MAX_NDIM + 1] = {0};
    weft_tensor_t *t = (weft_tensor_t *)1;
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, 2, shape, NULL), WEFT_EINVAL);
    assert_int_equal(weft_tensor_empty((weft_dtype_t)WEFT_DTYPE_COUNT, 2, shape, &t), WEFT_EINVAL);
    assert_null(t);
    assert_non_null(strstr(weft_tensor_last_error(), "invalid dtype 14"));
    assert_int_equal(weft_tensor_empty((weft_dtype_t)99, 2, shape, &t), WEFT_EINVAL);
    assert_null(t);
    assert_non_null(strstr(weft_tensor_last_error(), "invalid dtype 99"));
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, WEFT_MAX_NDIM + 1, many, &t), WEFT_EINVAL);
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, -1, shape, &t), WEFT_EINVAL);
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, 2, NULL, &t), WEFT_EINVAL);
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, 1, neg, &t), WEFT_EINVAL);
    assert_non_null(strstr(weft_tensor_last_error(), "negative length -3 in dimension 0"));
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, 2, huge, &t), WEFT_EOVERFLOW);
    assert_int_equal(weft_tensor_from_data(WEFT_FLOAT64, 2, shape, NULL, NULL, &t), WEFT_EINVAL);
    assert_int_equal(weft_tensor_wrap(WEFT_FLOAT64, 2, shape, NULL, NULL, NULL, NULL, &t),
                     WEFT_EINVAL);
    assert_int_equal(weft_tensor_view(NULL, 0, NULL, NULL, 0, &t), WEFT_EINVAL);
    assert_int_equal(weft_tensor_copy(NULL, NULL), WEFT_EINVAL);
    assert_int_equal(weft_tensor_fill(NULL, 0), WEFT_EINVAL);
    assert_int_equal(weft_tensor_clone(NULL, &t), WEFT_EINVAL);
    assert_int_equal(weft_tensor_reshape(NULL, 1, shape, &t), WEFT_EINVAL);
    weft_tensor_release(NULL);
    assert_null(weft_tensor_retain(NULL));
    assert_int_equal(weft_tensor_size(NULL), 0);
}

static void test_tensor_reshape_views_when_possible_and_copies_otherwise(void **state)
{
    (void)state;
    double data[6] = {0, 1, 2, 3, 4, 5};
    int64_t shape[2] = {2, 3}, tstr[2] = {1, 2}, target[2] = {3, -1}, flat[1] = {6};
    weft_tensor_t *a, *v, *tr, *c;
    assert_int_equal(weft_tensor_from_data(WEFT_FLOAT64, 2, shape, NULL, data, &a), WEFT_OK);
    assert_int_equal(weft_tensor_reshape(a, 2, target, &v), WEFT_OK);
    assert_true(weft_tensor_shares_buffer(a, v));
    assert_int_equal(weft_tensor_dim(v, 0), 3);
    assert_int_equal(weft_tensor_dim(v, 1), 2);
    check_values(v, data, 6);
    /* a 2x3 view with transposed strides (the transpose of a 3x2): no view possible */
    int64_t tshape[2] = {2, 3};
    assert_int_equal(weft_tensor_from_data(WEFT_FLOAT64, 2, tshape, tstr, data, &tr), WEFT_OK);
    assert_int_equal(weft_tensor_reshape(tr, 1, flat, &c), WEFT_OK);
    assert_false(weft_tensor_shares_buffer(tr, c));
    check_values(c, (double[]){0, 2, 4, 1, 3, 5}, 6);
    weft_tensor_release(c);
    /* a column slice of a contiguous matrix flattens without a copy only if
     * contiguous: every other element of a vector reshaped to 3x1 is a view */
    int64_t s3[1] = {3}, st2[1] = {2}, t31[2] = {3, 1};
    weft_tensor_t *ev, *r31;
    assert_int_equal(weft_tensor_view(a, 1, s3, st2, 0, &ev), WEFT_OK);
    assert_int_equal(weft_tensor_reshape(ev, 2, t31, &r31), WEFT_OK);
    assert_true(weft_tensor_shares_buffer(a, r31));
    check_values(r31, (double[]){0, 2, 4}, 3);
    int64_t bad[1] = {4}, two[2] = {-1, -1};
    assert_int_equal(weft_tensor_reshape(a, 1, bad, &c), WEFT_ESHAPE);
    assert_non_null(strstr(weft_tensor_last_error(), "6 elements into a shape of 4"));
    assert_int_equal(weft_tensor_reshape(a, 2, two, &c), WEFT_EINVAL);
    int64_t four_m1[2] = {4, -1};
    assert_int_equal(weft_tensor_reshape(a, 2, four_m1, &c), WEFT_ESHAPE);
    weft_tensor_release(r31);
    weft_tensor_release(ev);
    weft_tensor_release(tr);
    weft_tensor_release(v);
    weft_tensor_release(a);
}

/* weft_tensor_copy's small same-dtype contiguous fast path and the cases that
 * must leave it (strided source, other dtype, over 256 bytes, 0-d) give the
 * same elements as the general path. */
static void test_tensor_copy_small_and_strided_exact_values(void **state)
{
    (void)state;
    double d6[6] = {1, 2, 3, 4, 5, 6}, big[40];
    for (int i = 0; i < 40; i++) big[i] = i * 0.5;
    int64_t s23[2] = {2, 3}, s32[2] = {3, 2}, tr[2] = {1, 3}, s40[1] = {40};
    weft_tensor_t *a, *t, *dst, *dst2, *i32, *b40, *d40, *z0, *z1;
    assert_int_equal(weft_tensor_from_data(WEFT_FLOAT64, 2, s23, NULL, d6, &a), WEFT_OK);
    assert_int_equal(weft_tensor_zeros(WEFT_FLOAT64, 2, s23, &dst), WEFT_OK);
    assert_int_equal(weft_tensor_copy(dst, a), WEFT_OK); /* fast path */
    check_values(dst, d6, 6);
    assert_int_equal(weft_tensor_copy(dst, dst), WEFT_OK); /* full overlap */
    check_values(dst, d6, 6);
    assert_int_equal(weft_tensor_view(a, 2, s32, tr, 0, &t), WEFT_OK); /* transposed */
    assert_int_equal(weft_tensor_zeros(WEFT_FLOAT64, 2, s32, &dst2), WEFT_OK);
    assert_int_equal(weft_tensor_copy(dst2, t), WEFT_OK);
    check_values(dst2, (double[]){1, 4, 2, 5, 3, 6}, 6);
    assert_int_equal(weft_tensor_zeros(WEFT_INT32, 2, s23, &i32), WEFT_OK);
    assert_int_equal(weft_tensor_copy(i32, a), WEFT_OK); /* converts */
    check_values(i32, d6, 6);
    assert_int_equal(weft_tensor_from_data(WEFT_FLOAT64, 1, s40, NULL, big, &b40), WEFT_OK);
    assert_int_equal(weft_tensor_zeros(WEFT_FLOAT64, 1, s40, &d40), WEFT_OK);
    assert_int_equal(weft_tensor_copy(d40, b40), WEFT_OK); /* 320 bytes: general path */
    check_values(d40, big, 40);
    assert_int_equal(weft_tensor_zeros(WEFT_FLOAT64, 0, NULL, &z0), WEFT_OK);
    assert_int_equal(weft_tensor_zeros(WEFT_FLOAT64, 0, NULL, &z1), WEFT_OK);
    assert_int_equal(weft_tensor_fill(z1, -2.5), WEFT_OK);
    assert_int_equal(weft_tensor_copy(z0, z1), WEFT_OK); /* 0-d */
    check_values(z0, (double[]){-2.5}, 1);
    weft_tensor_release(z1);
    weft_tensor_release(z0);
    weft_tensor_release(d40);
    weft_tensor_release(b40);
    weft_tensor_release(i32);
    weft_tensor_release(dst2);
    weft_tensor_release(t);
    weft_tensor_release(dst);
    weft_tensor_release(a);
}

static void test_tensor_copy_as_converts_and_clone_compacts(void **state)
{
    (void)state;
    double data[4] = {-1.75, 0.0, 2.5, 3.0};
    int64_t shape[1] = {4}, rev[1] = {-1};
    weft_tensor_t *a, *r, *i32, *b, *cl, *cont;
    assert_int_equal(weft_tensor_from_data(WEFT_FLOAT64, 1, shape, NULL, data, &a), WEFT_OK);
    assert_int_equal(weft_tensor_copy_as(a, WEFT_INT32, &i32), WEFT_OK);
    check_values(i32, (double[]){-1, 0, 2, 3}, 4);
    assert_int_equal(weft_tensor_copy_as(a, WEFT_BOOL, &b), WEFT_OK);
    check_values(b, (double[]){1, 0, 1, 1}, 4);
    assert_int_equal(weft_tensor_view(a, 1, shape, rev, 3, &r), WEFT_OK);
    assert_int_equal(weft_tensor_clone(r, &cl), WEFT_OK);
    assert_true(weft_tensor_is_contiguous(cl));
    check_values(cl, (double[]){3.0, 2.5, 0.0, -1.75}, 4);
    assert_int_equal(weft_tensor_contiguous(a, &cont), WEFT_OK);
    assert_ptr_equal(cont, a); /* already contiguous: the same handle, retained */
    assert_int_equal(weft_tensor_refcount(a), 2);
    weft_tensor_release(cont);
    assert_int_equal(weft_tensor_contiguous(r, &cont), WEFT_OK);
    assert_false(weft_tensor_shares_buffer(cont, r));
    weft_tensor_release(cont);
    int64_t s3[1] = {3};
    weft_tensor_t *small;
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, 1, s3, &small), WEFT_OK);
    assert_int_equal(weft_tensor_copy(small, a), WEFT_ESHAPE);
    assert_non_null(strstr(weft_tensor_last_error(), "float64[3] vs source float64[4]"));
    weft_tensor_release(small);
    weft_tensor_release(cl);
    weft_tensor_release(r);
    weft_tensor_release(b);
    weft_tensor_release(i32);
    weft_tensor_release(a);
}

/* Float to int conversions of NaN, infinities and out-of-range values give
 * the target's minimum (what NumPy 1.24 returns on x86-64, the table below),
 * with no undefined behaviour (clang's UBSan checks float-cast-overflow):
 * contiguous and strided rows, from float64 and float32. */
#define I32MIN INT32_MIN
#define I64MIN INT64_MIN
static const struct {
    double x;
    int32_t i32;     /* float64 -> int32 */
    int64_t i64;     /* float64 -> int64 */
    int32_t i32_f;   /* float32(x) -> int32 */
    int64_t i64_f;   /* float32(x) -> int64 */
} cast_table[] = {
    {NAN, I32MIN, I64MIN, I32MIN, I64MIN},
    {INFINITY, I32MIN, I64MIN, I32MIN, I64MIN},
    {-INFINITY, I32MIN, I64MIN, I32MIN, I64MIN},
    {1e30, I32MIN, I64MIN, I32MIN, I64MIN},
    {-1e30, I32MIN, I64MIN, I32MIN, I64MIN},
    {3e9, I32MIN, 3000000000, I32MIN, 3000000000},
    {-3e9, I32MIN, -3000000000, I32MIN, -3000000000},
    {2147483648.0, I32MIN, 2147483648, I32MIN, 2147483648},
    {2147483647.9, 2147483647, 2147483647, I32MIN, 2147483648},
    {-2147483648.9, I32MIN, -2147483648, I32MIN, -2147483648},
    {-2147483649.0, I32MIN, -2147483649, I32MIN, -2147483648},
    {9.3e18, I32MIN, I64MIN, I32MIN, I64MIN},
    {-9.3e18, I32MIN, I64MIN, I32MIN, I64MIN},
    {9223372036854775808.0, I32MIN, I64MIN, I32MIN, I64MIN},
    {-9223372036854775808.0, I32MIN, I64MIN, I32MIN, I64MIN},
    {4294967301.0, I32MIN, 4294967301, I32MIN, 4294967296},
    {1.5, 1, 1, 1, 1},
    {-1.5, -1, -1, -1, -1},
    {-0.0, 0, 0, 0, 0},
};
#define CAST_N (sizeof cast_table / sizeof cast_table[0])

/* dst (int32 or int64, n elements, contiguous) holds the table's column. */
static void check_cast_column(const weft_tensor_t *t, bool from_f32, size_t stride)
{
    for (size_t i = 0; i < CAST_N; i++) {
        int64_t want = weft_tensor_dtype(t) == WEFT_INT32
                           ? (from_f32 ? cast_table[i].i32_f : cast_table[i].i32)
                           : (from_f32 ? cast_table[i].i64_f : cast_table[i].i64);
        int64_t got = weft_tensor_dtype(t) == WEFT_INT32
                          ? ((const int32_t *)weft_tensor_data(t))[i * stride]
                          : ((const int64_t *)weft_tensor_data(t))[i * stride];
        if (got != want) fail_msg("x = %.17g: got %lld, want %lld", cast_table[i].x,
                                  (long long)got, (long long)want);
    }
}

static void test_tensor_float_to_int_out_of_range_gives_the_minimum(void **state)
{
    (void)state;
    double d[CAST_N], d2[2 * CAST_N];
    float f[CAST_N];
    for (size_t i = 0; i < CAST_N; i++) {
        d[i] = d2[2 * i] = d2[2 * i + 1] = cast_table[i].x;
        f[i] = (float)cast_table[i].x;
    }
    int64_t n[1] = {CAST_N}, two[1] = {2};
    weft_tensor_t *src[3], *c;
    assert_int_equal(weft_tensor_from_data(WEFT_FLOAT64, 1, n, NULL, d, &src[0]), WEFT_OK);
    assert_int_equal(weft_tensor_from_data(WEFT_FLOAT32, 1, n, NULL, f, &src[1]), WEFT_OK);
    assert_int_equal(weft_tensor_from_data(WEFT_FLOAT64, 1, n, two, d2, &src[2]), WEFT_OK);
    weft_dtype_t to[2] = {WEFT_INT32, WEFT_INT64};
    for (int s = 0; s < 3; s++)
        for (int k = 0; k < 2; k++) {
            assert_int_equal(weft_tensor_copy_as(src[s], to[k], &c), WEFT_OK);
            check_cast_column(c, s == 1, 1);
            weft_tensor_release(c);
        }
    /* strided destination: the general loop of the conversion kernel */
    int64_t n2[1] = {2 * CAST_N};
    weft_tensor_t *dst, *view;
    assert_int_equal(weft_tensor_zeros(WEFT_INT64, 1, n2, &dst), WEFT_OK);
    assert_int_equal(weft_tensor_view(dst, 1, n, two, 0, &view), WEFT_OK);
    assert_int_equal(weft_tensor_copy(view, src[0]), WEFT_OK);
    check_cast_column(dst, false, 2);
    for (int s = 0; s < 3; s++) weft_tensor_release(src[s]);
    weft_tensor_release(view);
    weft_tensor_release(dst);
}

/* The element helpers convert a double as the kernels do: fill of an int32
 * tensor with NaN, full of int64 with 1e30, set with -inf. */
static void test_tensor_fill_full_set_of_ints_with_nan_or_huge_give_the_minimum(void **state)
{
    (void)state;
    int64_t shape[1] = {3}, at[1] = {1};
    weft_tensor_t *a, *b;
    assert_int_equal(weft_tensor_empty(WEFT_INT32, 1, shape, &a), WEFT_OK);
    assert_int_equal(weft_tensor_fill(a, NAN), WEFT_OK);
    assert_int_equal(weft_tensor_set(a, at, 2.75), WEFT_OK);
    assert_memory_equal(weft_tensor_data(a), ((int32_t[]){INT32_MIN, 2, INT32_MIN}), 12);
    assert_int_equal(weft_tensor_full(WEFT_INT64, 1, shape, 1e30, &b), WEFT_OK);
    assert_int_equal(weft_tensor_set(b, at, -INFINITY), WEFT_OK);
    assert_memory_equal(weft_tensor_data(b), ((int64_t[]){INT64_MIN, INT64_MIN, INT64_MIN}), 24);
    assert_int_equal(weft_tensor_set(b, at, -9.3e18 / 2), WEFT_OK);
    assert_int_equal(((int64_t *)weft_tensor_data(b))[1], -4650000000000000000);
    weft_tensor_release(a);
    weft_tensor_release(b);
}

/* Shapes follow NumPy's size rule (the product of the non-zero lengths times
 * the item size fits in int64) everywhere a shape is made or resolved. */
static void test_tensor_shapes_beyond_int64_are_eoverflow(void **state)
{
    (void)state;
    const int64_t big = (int64_t)1 << 32;
    weft_tensor_t *t = NULL, *e, *r;
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, 2, (int64_t[]){big, big}, &t),
                     WEFT_EOVERFLOW);
    assert_string_equal(weft_tensor_last_error(),
                        "float64[4294967296,4294967296] is too big (its byte size does not fit "
                        "in int64)");
    assert_int_equal(weft_tensor_empty(WEFT_INT32, 3, (int64_t[]){big, 0, big}, &t),
                     WEFT_EOVERFLOW);
    assert_null(t);
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, 1, (int64_t[]){0}, &e), WEFT_OK);
    assert_int_equal(weft_tensor_reshape(e, 3, (int64_t[]){big, big, 0}, &r), WEFT_EOVERFLOW);
    assert_string_equal(weft_tensor_last_error(),
                        "reshape: the target shape is too big (its byte size does not fit in "
                        "int64)");
    assert_int_equal(weft_tensor_reshape(e, 3, (int64_t[]){big, -1, big}, &r), WEFT_EOVERFLOW);
    weft_tensor_release(e);
}

static void test_tensor_fill_on_strided_view_touches_only_its_elements(void **state)
{
    (void)state;
    int64_t shape[2] = {3, 3}, dshape[1] = {3}, dst[1] = {4};
    weft_tensor_t *m, *diag;
    assert_int_equal(weft_tensor_zeros(WEFT_INT64, 2, shape, &m), WEFT_OK);
    assert_int_equal(weft_tensor_view(m, 1, dshape, dst, 0, &diag), WEFT_OK);
    assert_int_equal(weft_tensor_fill(diag, 7.0), WEFT_OK);
    check_values(m, (double[]){7, 0, 0, 0, 7, 0, 0, 0, 7}, 9);
    weft_tensor_release(diag);
    weft_tensor_release(m);
}

static void test_tensor_allclose_compares_values_nan_and_shapes(void **state)
{
    (void)state;
    double a[3] = {1.0, NAN, 3.0}, b[3] = {1.0 + 1e-12, NAN, 3.0};
    float c[3] = {1.0f, NAN, 3.5f};
    int64_t s3[1] = {3}, s2[1] = {2};
    weft_tensor_t *ta, *tb, *tc, *t2;
    bool eq;
    weft_tensor_from_data(WEFT_FLOAT64, 1, s3, NULL, a, &ta);
    weft_tensor_from_data(WEFT_FLOAT64, 1, s3, NULL, b, &tb);
    weft_tensor_from_data(WEFT_FLOAT32, 1, s3, NULL, c, &tc);
    weft_tensor_from_data(WEFT_FLOAT64, 1, s2, NULL, a, &t2);
    assert_int_equal(weft_tensor_allclose(ta, tb, 1e-9, 0, &eq), WEFT_OK);
    assert_true(eq);
    assert_int_equal(weft_tensor_allclose(ta, tc, 1e-9, 0, &eq), WEFT_OK);
    assert_false(eq);
    assert_int_equal(weft_tensor_allclose(ta, tc, 0, 0.6, &eq), WEFT_OK);
    assert_true(eq);
    assert_int_equal(weft_tensor_allclose(ta, t2, 1, 1, &eq), WEFT_OK);
    assert_false(eq);
    assert_int_equal(weft_tensor_allclose(ta, NULL, 1, 1, &eq), WEFT_EINVAL);
    double out[3];
    assert_int_equal(weft_tensor_to_f64(tc, out), WEFT_OK);
    assert_float_equal(out[2], 3.5, 0.0);
    char buf[32];
    weft_tensor_print_type(tc, buf, sizeof buf);
    assert_string_equal(buf, "float32[3]");
    weft_tensor_release(ta);
    weft_tensor_release(tb);
    weft_tensor_release(tc);
    weft_tensor_release(t2);
}

/* ---- iterator ---------------------------------------------------------------------- */

typedef struct rows {
    int calls;
    size_t total;
    size_t last_n;
} rows_t;

static void count_rows(size_t n, char *const *p, const int64_t *s, void *arg)
{
    (void)p;
    (void)s;
    rows_t *r = arg;
    r->calls++;
    r->total += n;
    r->last_n = n;
}

static rows_t run_rows(int ndim, const int64_t *shape, const int64_t *s0, const int64_t *s1)
{
    rows_t r = {0, 0, 0};
    char buf[8];
    char *base[2] = {buf, buf};
    const int64_t *st[2] = {s0, s1};
    size_t isz[2] = {8, 8};
    weft__iter_rows(ndim, shape, 2, base, st, isz, count_rows, &r);
    return r;
}

static void test_tensor_iter_collapses_contiguous_and_broadcast_axes(void **state)
{
    (void)state;
    int64_t shape[3] = {4, 5, 6}, c[3] = {30, 6, 1}, zero[3] = {0, 0, 0}, tr[3] = {1, 4, 20};
    rows_t r = run_rows(3, shape, c, c);
    assert_int_equal(r.calls, 1); /* fully contiguous: one row of 120 */
    assert_int_equal(r.last_n, 120);
    r = run_rows(3, shape, c, zero);
    assert_int_equal(r.calls, 1); /* scalar broadcast: one row */
    r = run_rows(3, shape, c, tr);
    assert_int_equal(r.calls, 20); /* transposed input: 4*5 rows of 6 */
    assert_int_equal(r.total, 120);
    int64_t bshape[3] = {4, 1, 6}, bst[3] = {0, 0, 1}, cb[3] = {6, 6, 1};
    r = run_rows(3, bshape, cb, bst); /* a row broadcast down the columns */
    assert_int_equal(r.calls, 4);
    assert_int_equal(r.last_n, 6);
    /* a large plane with a strided operand is walked in 64x64 tiles: 130 rows
     * times 2 column tiles (64 + 6) */
    int64_t big[2] = {130, 70}, bc[2] = {70, 1}, bt[2] = {1, 130};
    r = run_rows(2, big, bc, bt);
    assert_int_equal(r.calls, 260);
    assert_int_equal(r.total, 9100);
    r = run_rows(2, big, bc, bc);
    assert_int_equal(r.calls, 1);
    int64_t empty[2] = {3, 0}, es[2] = {0, 1};
    r = run_rows(2, empty, es, es);
    assert_int_equal(r.calls, 0);
    r = run_rows(0, NULL, NULL, NULL);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.last_n, 1);
}

/* ---- concurrency --------------------------------------------------------------------- */

static void *hammer(void *arg)
{
    weft_tensor_t *t = arg;
    int64_t s1[1] = {1}, st[1] = {1};
    for (int i = 0; i < 20000; i++) {
        weft_tensor_t *v = NULL;
        weft_tensor_retain(t);
        weft_tensor_view(t, 1, s1, st, 0, &v);
        weft_tensor_release(t);
        weft_tensor_release(v);
    }
    weft_tensor_release(t); /* each thread was handed one reference */
    return NULL;
}

static void test_tensor_refcounts_are_exact_under_concurrent_retain_release(void **state)
{
    (void)state;
    int64_t shape[1] = {16};
    weft_tensor_t *t;
    pthread_t th[2];
    assert_int_equal(weft_tensor_zeros(WEFT_FLOAT64, 1, shape, &t), WEFT_OK);
    for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, hammer, weft_tensor_retain(t));
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    assert_int_equal(weft_tensor_refcount(t), 1);
    assert_int_equal(weft_tensor_buffer_refcount(t), 1);
    weft_tensor_release(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tensor_empty_is_aligned_contiguous_with_refcount_one),
        cmocka_unit_test(test_tensor_empty_small_is_aligned_16_after_its_handle),
        cmocka_unit_test(test_tensor_zeros_full_and_zero_dim),
        cmocka_unit_test(test_tensor_empty_shape_has_no_elements),
        cmocka_unit_test(test_tensor_from_data_borrows_user_memory),
        cmocka_unit_test(test_tensor_wrap_frees_once_after_last_view),
        cmocka_unit_test(test_tensor_wrap_failure_takes_memory),
        cmocka_unit_test(test_tensor_view_keeps_base_alive_and_checks_bounds),
        cmocka_unit_test(test_tensor_bad_arguments_return_exact_statuses),
        cmocka_unit_test(test_tensor_reshape_views_when_possible_and_copies_otherwise),
        cmocka_unit_test(test_tensor_copy_as_converts_and_clone_compacts),
        cmocka_unit_test(test_tensor_copy_small_and_strided_exact_values),
        cmocka_unit_test(test_tensor_fill_on_strided_view_touches_only_its_elements),
        cmocka_unit_test(test_tensor_float_to_int_out_of_range_gives_the_minimum),
        cmocka_unit_test(test_tensor_fill_full_set_of_ints_with_nan_or_huge_give_the_minimum),
        cmocka_unit_test(test_tensor_shapes_beyond_int64_are_eoverflow),
        cmocka_unit_test(test_tensor_allclose_compares_values_nan_and_shapes),
        cmocka_unit_test(test_tensor_iter_collapses_contiguous_and_broadcast_axes),
        cmocka_unit_test(test_tensor_refcounts_are_exact_under_concurrent_retain_release),
    };
    return cmocka_run_group_tests_name("tensor", tests, NULL, NULL);
}
