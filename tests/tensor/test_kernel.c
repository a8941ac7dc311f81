/* Kernel context: output allocation (reuse of an exclusive tensor, fresh
 * allocation otherwise, through the allocation hook), error recording (the
 * first error wins), worker index and user pointer, bad inputs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lib/tensor/kernel_int.h"
#include "weft/kernel.h"
#include "weft/tensor.h"

static int g_allocs;

static weft_status_t counting_alloc(void *user, weft_dtype_t dtype, int ndim,
                                    const int64_t *shape, weft_tensor_t **out)
{
    assert_ptr_equal(user, &g_allocs);
    g_allocs++;
    return weft_tensor_empty(dtype, ndim, shape, out);
}

static void test_kernel_alloc_output_reuses_exclusive_cell(void **state)
{
    (void)state;
    weft_kernel_ctx_t ctx;
    weft__kernel_ctx_init(&ctx, counting_alloc, &g_allocs, NULL, 0);
    g_allocs = 0;
    int64_t shape[2] = {2, 3}, other[2] = {3, 2};
    weft_tensor_t *cell = NULL;
    assert_int_equal(weft_kernel_alloc_output(&ctx, &cell, WEFT_FLOAT64, 2, shape), WEFT_OK);
    assert_int_equal(g_allocs, 1);
    weft_tensor_t *first = cell;
    assert_int_equal(weft_kernel_alloc_output(&ctx, &cell, WEFT_FLOAT64, 2, shape), WEFT_OK);
    assert_ptr_equal(cell, first); /* exclusive, right dtype and shape: kept */
    assert_int_equal(g_allocs, 1);
    weft_tensor_t *held = weft_tensor_retain(cell); /* someone else holds it now */
    assert_int_equal(weft_kernel_alloc_output(&ctx, &cell, WEFT_FLOAT64, 2, shape), WEFT_OK);
    assert_ptr_not_equal(cell, held);
    assert_int_equal(g_allocs, 2);
    assert_int_equal(weft_tensor_refcount(held), 1); /* the cell dropped its reference */
    weft_tensor_release(held);
    assert_int_equal(weft_kernel_alloc_output(&ctx, &cell, WEFT_FLOAT64, 2, other), WEFT_OK);
    assert_int_equal(weft_tensor_dim(cell, 0), 3);
    assert_int_equal(weft_kernel_alloc_output(&ctx, &cell, WEFT_FLOAT32, 2, other), WEFT_OK);
    assert_int_equal(weft_tensor_dtype(cell), WEFT_FLOAT32);
    assert_int_equal(g_allocs, 4);
    weft_tensor_release(cell);
}

static void test_kernel_alloc_output_does_not_reuse_a_view(void **state)
{
    (void)state;
    weft_kernel_ctx_t ctx;
    weft__kernel_ctx_init(&ctx, NULL, NULL, NULL, 0);
    int64_t shape[1] = {4}, st[1] = {1};
    weft_tensor_t *base, *cell;
    assert_int_equal(weft_tensor_zeros(WEFT_INT32, 1, shape, &base), WEFT_OK);
    assert_int_equal(weft_tensor_view(base, 1, shape, st, 0, &cell), WEFT_OK);
    assert_int_equal(weft_kernel_alloc_output(&ctx, &cell, WEFT_INT32, 1, shape), WEFT_OK);
    assert_false(weft_tensor_shares_buffer(cell, base)); /* the buffer had another viewer */
    weft_tensor_release(cell);
    weft_tensor_release(base);
}

static void test_kernel_error_first_wins_and_context_fields(void **state)
{
    (void)state;
    int user = 5;
    weft_kernel_ctx_t ctx;
    weft__kernel_ctx_init(&ctx, NULL, NULL, &user, 3);
    assert_int_equal(weft_kernel_worker(&ctx), 3);
    assert_ptr_equal(weft_kernel_user(&ctx), &user);
    assert_int_equal(weft_kernel_status(&ctx), WEFT_OK);
    assert_string_equal(weft_kernel_message(&ctx), "");
    assert_int_equal(weft_kernel_error(&ctx, WEFT_ESHAPE, "input %d has %d dims", 1, 3),
                     WEFT_ESHAPE);
    assert_int_equal(weft_kernel_error(&ctx, WEFT_ENOMEM, "later"), WEFT_ESHAPE);
    assert_string_equal(weft_kernel_message(&ctx), "input 1 has 3 dims");
    weft__kernel_ctx_reset(&ctx);
    assert_int_equal(weft_kernel_error(&ctx, WEFT_OK, "x"), WEFT_EINVAL);
    assert_string_equal(weft_kernel_message(&ctx), "kernel reported an error with WEFT_OK");
    assert_int_equal(weft_kernel_error(NULL, WEFT_ERANGE, "x"), WEFT_ERANGE);
}

static void test_kernel_bad_arguments_return_exact_statuses(void **state)
{
    (void)state;
    weft_kernel_ctx_t ctx;
    weft__kernel_ctx_init(&ctx, NULL, NULL, NULL, 0);
    int64_t shape[1] = {-2};
    weft_tensor_t *cell = NULL;
    assert_int_equal(weft_kernel_alloc_output(NULL, &cell, WEFT_FLOAT64, 1, shape), WEFT_EINVAL);
    assert_int_equal(weft_kernel_alloc_output(&ctx, NULL, WEFT_FLOAT64, 1, shape), WEFT_EINVAL);
    assert_int_equal(weft_kernel_alloc_output(&ctx, &cell, WEFT_FLOAT64, 1, shape), WEFT_EINVAL);
    assert_non_null(strstr(weft_kernel_message(&ctx), "negative length -2"));
    weft__kernel_ctx_reset(&ctx);
    assert_int_equal(weft_kernel_alloc_output(&ctx, &cell, (weft_dtype_t)7, 0, NULL), WEFT_EINVAL);
    assert_null(cell);
    weft_tensor_t *t;
    int64_t one[1] = {1};
    weft_tensor_zeros(WEFT_FLOAT64, 1, one, &t);
    weft_kernel_set_output(&ctx, &cell, t);
    assert_ptr_equal(cell, t);
    weft_kernel_set_output(&ctx, &cell, NULL); /* releases what the cell held */
    assert_null(cell);
    weft_tensor_zeros(WEFT_FLOAT64, 1, one, &t);
    weft_kernel_set_output(&ctx, NULL, t); /* no cell: t is released, not leaked */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernel_alloc_output_reuses_exclusive_cell),
        cmocka_unit_test(test_kernel_alloc_output_does_not_reuse_a_view),
        cmocka_unit_test(test_kernel_error_first_wins_and_context_fields),
        cmocka_unit_test(test_kernel_bad_arguments_return_exact_statuses),
    };
    return cmocka_run_group_tests_name("kernel", tests, NULL, NULL);
}
