/* Kernel context: output allocation (reuse of an exclusive tensor, fresh
 * allocation otherwise, through the allocation hook), view outputs (the
 * cell's handle rewritten when nobody else holds it, the runtime's stashed
 * handle used, checks), scratch through the context's hooks, error
 * recording (the first error wins), worker index and user pointer, bad
 * inputs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tensor/kernel_int.h"
#include "tensor/tensor_int.h"
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

static weft_tensor_t *iota_f64(int64_t n)
{
    weft_tensor_t *t = NULL;
    const int64_t shape[1] = {n};
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, 1, shape, &t), WEFT_OK);
    double *d = weft_tensor_data(t);
    for (int64_t i = 0; i < n; i++) d[i] = (double)i;
    return t;
}

/* The cell's view handle is rewritten in place while nobody else holds it:
 * same pointer, new geometry and buffer, the old buffer's reference dropped;
 * a handle someone else holds is left to them and a new one made. */
static void test_kernel_view_output_rewrites_unshared_cell_handle(void **state)
{
    (void)state;
    weft_kernel_ctx_t ctx;
    weft__kernel_ctx_init(&ctx, NULL, NULL, NULL, 0);
    weft_tensor_t *a = iota_f64(6), *b = iota_f64(8), *cell = NULL;
    const int64_t s2[2] = {2, 3}, st2[2] = {1, 2}, s1[2] = {4, 2}, st1[2] = {2, 1};
    assert_int_equal(weft_kernel_view_output(&ctx, &cell, a, 2, s2, st2, 0), WEFT_OK);
    assert_true(weft_tensor_shares_buffer(cell, a));
    assert_int_equal(weft_tensor_buffer_refcount(a), 2);
    assert_true(weft_tensor_flat_get(cell, 1) == 2.0); /* [0][1]: stride 2 */
    weft_tensor_t *first = cell;
    assert_int_equal(weft_kernel_view_output(&ctx, &cell, b, 2, s1, st1, 0), WEFT_OK);
    assert_ptr_equal(cell, first);
    assert_int_equal(weft_tensor_buffer_refcount(a), 1);
    assert_int_equal(weft_tensor_buffer_refcount(b), 2);
    assert_int_equal(weft_tensor_dim(cell, 0), 4);
    assert_true(weft_tensor_flat_get(cell, 7) == 7.0);
    /* shape and strides read from the cell's own handle */
    assert_int_equal(weft_kernel_view_output(&ctx, &cell, a, 2, weft_tensor_shape(cell),
                                             weft_tensor_strides(cell), 0),
                     WEFT_ERANGE); /* 4 x 2 does not fit in a's 6 elements */
    assert_ptr_equal(cell, first); /* unchanged on error */
    assert_non_null(strstr(weft_kernel_message(&ctx), "outside its base's buffer"));
    weft__kernel_ctx_reset(&ctx);
    weft_tensor_t *held = weft_tensor_retain(cell);
    assert_int_equal(weft_kernel_view_output(&ctx, &cell, a, 2, s2, st2, 0), WEFT_OK);
    assert_ptr_not_equal(cell, held);
    assert_int_equal(weft_tensor_refcount(held), 1);
    assert_true(weft_tensor_shares_buffer(held, b));
    assert_true(weft_tensor_shares_buffer(cell, a));
    weft_tensor_release(held);
    weft_tensor_release(cell);
    assert_int_equal(weft_tensor_buffer_refcount(a), 1);
    assert_int_equal(weft_tensor_buffer_refcount(b), 1);
    weft_tensor_release(a);
    weft_tensor_release(b);
}

/* A raw handle the runtime stashed for the output cell is the one the view
 * is built in; one of another ndim, or a cell that is not the node's
 * output, is left in the stash. */
static void test_kernel_view_output_builds_in_stashed_handle(void **state)
{
    (void)state;
    weft_tensor_t *a = iota_f64(6), *tmp = NULL, *out[1] = {NULL}, *stash[1], *other = NULL;
    const int64_t s1[1] = {3}, st1[1] = {2}, s2[2] = {3, 2}, st2[2] = {2, 1};
    assert_int_equal(weft_tensor_view(a, 1, s1, st1, 0, &tmp), WEFT_OK);
    stash[0] = weft__tensor_detach(tmp);
    assert_ptr_equal(stash[0], tmp);
    assert_int_equal(weft_tensor_buffer_refcount(a), 1); /* detaching dropped it */
    weft_kernel_ctx_t ctx;
    weft__kernel_ctx_init(&ctx, NULL, NULL, NULL, 0);
    ctx.out_cells = out;
    ctx.stash = stash;
    ctx.n_out = 1;
    assert_int_equal(weft_kernel_view_output(&ctx, &other, a, 1, s1, st1, 1), WEFT_OK);
    assert_ptr_equal(stash[0], tmp); /* not the node's output cell */
    assert_int_equal(weft_kernel_view_output(&ctx, &out[0], a, 2, s2, st2, 0), WEFT_OK);
    assert_ptr_equal(stash[0], tmp); /* ndim 2: the stashed 1-d handle does not fit */
    weft_tensor_release(out[0]);
    out[0] = NULL;
    assert_int_equal(weft_kernel_view_output(&ctx, &out[0], a, 1, s1, st1, 1), WEFT_OK);
    assert_ptr_equal(out[0], tmp);
    assert_null(stash[0]);
    assert_true(weft_tensor_flat_get(out[0], 2) == 5.0); /* a[1 + 2 * 2] */
    assert_true(weft_tensor_flat_get(other, 0) == 1.0);
    assert_int_equal(weft_tensor_buffer_refcount(a), 3);
    /* a block base is never detached; neither is a shared handle */
    assert_null(weft__tensor_detach(a));
    weft_tensor_t *held = weft_tensor_retain(other);
    assert_null(weft__tensor_detach(other));
    weft_tensor_release(held);
    weft_tensor_release(out[0]);
    weft_tensor_release(other);
    other = NULL;
    assert_int_equal(weft_tensor_buffer_refcount(a), 1);
    assert_int_equal(weft_kernel_view_output(NULL, &other, a, 1, s1, st1, 0), WEFT_EINVAL);
    assert_int_equal(weft_kernel_view_output(&ctx, NULL, a, 1, s1, st1, 0), WEFT_EINVAL);
    assert_int_equal(weft_kernel_view_output(&ctx, &other, NULL, 1, s1, st1, 0), WEFT_EINVAL);
    assert_int_equal(weft_kernel_view_output(&ctx, &other, a, 1, s1, NULL, 0), WEFT_EINVAL);
    assert_null(other);
    weft_tensor_release(a);
}

static weft_tensor_t *g_given_back;

static void recording_give_back(void *user, weft_tensor_t *t)
{
    assert_ptr_equal(user, &g_allocs);
    g_given_back = t;
}

/* Scratch comes from the allocation hook and goes back through the
 * give-back hook (released without one); bad requests fail with ctx's
 * message and a NULL *out. */
static void test_kernel_scratch_uses_the_context_hooks(void **state)
{
    (void)state;
    weft_kernel_ctx_t ctx;
    weft__kernel_ctx_init(&ctx, counting_alloc, &g_allocs, NULL, 0);
    g_allocs = 0;
    g_given_back = NULL;
    const int64_t shape[2] = {3, 5}, bad[1] = {-1};
    weft_tensor_t *t = NULL;
    assert_int_equal(weft_kernel_scratch(&ctx, WEFT_INT64, 2, shape, &t), WEFT_OK);
    assert_int_equal(g_allocs, 1);
    assert_int_equal(weft_tensor_dtype(t), WEFT_INT64);
    assert_int_equal(weft_tensor_dim(t, 1), 5);
    assert_true(weft_tensor_is_contiguous(t));
    ctx.give_back = recording_give_back;
    weft_kernel_scratch_done(&ctx, t);
    assert_ptr_equal(g_given_back, t);
    ctx.give_back = NULL;
    weft_kernel_scratch_done(&ctx, t); /* released: ASan would report a leak otherwise */
    weft_kernel_scratch_done(&ctx, NULL);
    t = (weft_tensor_t *)&ctx; /* overwritten on failure */
    assert_int_equal(weft_kernel_scratch(&ctx, WEFT_FLOAT64, 1, bad, &t), WEFT_EINVAL);
    assert_null(t);
    assert_non_null(strstr(weft_kernel_message(&ctx), "scratch: negative length -1"));
    assert_int_equal(g_allocs, 1);
    assert_int_equal(weft_kernel_scratch(NULL, WEFT_FLOAT64, 1, shape, &t), WEFT_EINVAL);
    assert_int_equal(weft_kernel_scratch(&ctx, WEFT_FLOAT64, 1, shape, NULL), WEFT_EINVAL);
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
    assert_int_equal(weft_kernel_alloc_output(&ctx, &cell, (weft_dtype_t)WEFT_DTYPE_COUNT, 0, NULL), WEFT_EINVAL);
    assert_int_equal(weft_kernel_alloc_output(&ctx, &cell, (weft_dtype_t)99, 0, NULL), WEFT_EINVAL);
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
        cmocka_unit_test(test_kernel_view_output_rewrites_unshared_cell_handle),
        cmocka_unit_test(test_kernel_view_output_builds_in_stashed_handle),
        cmocka_unit_test(test_kernel_scratch_uses_the_context_hooks),
        cmocka_unit_test(test_kernel_error_first_wins_and_context_fields),
        cmocka_unit_test(test_kernel_bad_arguments_return_exact_statuses),
    };
    return cmocka_run_group_tests_name("kernel", tests, NULL, NULL);
}
