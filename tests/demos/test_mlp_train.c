/* mlp_train demo (tools/demos/mlp_train_core.h) on a tiny model: weft and the
 * hand-written C step train from the same parameters to the same losses and
 * parameters, the loss goes down, the saved JSON graph loads back, and the
 * demo's entry points reject bad arguments. Runs on a 2-worker pool so the
 * sanitizer builds see concurrent nodes (and concurrent 1-thread BLAS). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include "mlp_train_core.h"
#include "support/alloc_count.h"

#define STEPS 5

static const mlp_config_t tiny = {8, 16, 0.5, 3, 1, NULL};

static void train_cfg(const mlp_config_t *cfg, weft_pool_t *pool, double *lw, double *lh,
                      double *param_diff)
{
    mlp_data_t *d = NULL;
    mlp_trainer_t *w = NULL, *h = NULL;
    assert_int_equal(mlp_data_create(cfg, &d), WEFT_OK);
    assert_int_equal(mlp_trainer_create(d, MLP_IMPL_WEFT, pool, 1, &w), WEFT_OK);
    assert_int_equal(mlp_trainer_create(d, MLP_IMPL_HANDC, NULL, 1, &h), WEFT_OK);
    for (int s = 0; s < STEPS; s++) {
        assert_int_equal(mlp_trainer_step(w, &lw[s]), WEFT_OK);
        assert_int_equal(mlp_trainer_step(h, &lh[s]), WEFT_OK);
    }
    *param_diff = mlp_trainer_param_diff(w, h);
    mlp_trainer_destroy(w);
    mlp_trainer_destroy(h);
    mlp_data_destroy(d);
}

static void train_both(weft_pool_t *pool, double *lw, double *lh, double *param_diff)
{
    train_cfg(&tiny, pool, lw, lh, param_diff);
}

static void test_mlp_train_tiny_model_losses_match_handc_and_decrease(void **state)
{
    (void)state;
    weft_pool_t *pool = NULL;
    double lw[STEPS], lh[STEPS], diff;
    assert_int_equal(weft_pool_create(2, NULL, &pool), WEFT_OK);
    train_both(pool, lw, lh, &diff);
    assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
    for (int s = 0; s < STEPS; s++) {
        printf("step %d loss weft %.17g handc %.17g\n", s, lw[s], lh[s]);
        assert_true(fabs(lw[s] - lh[s]) <= 1e-12 * lh[s]);
        assert_true(lw[s] > 0.0);
    }
    assert_true(lw[STEPS - 1] < lw[0]);
    assert_true(lh[STEPS - 1] < lh[0]);
    assert_true(diff < 1e-12);
}

/* The batch split into 3 row blocks (3 + 3 + 2 rows), each its own chain,
 * without the in-place rewrite: the same losses as the hand-written step. */
/* docs/execution.md §4.5 on the real workload: once warm, a training step
 * (44 nodes: Gemms, views, reductions, in-place updates) allocates nothing,
 * neither buffers nor view handles. One worker, so the buffers a step needs
 * do not depend on the interleaving. Tensors of 4 KiB and more go through
 * the buffer pool (smaller ones stay in their cells). */
static void test_mlp_train_warm_step_allocates_nothing(void **state)
{
    (void)state;
    const mlp_config_t cfg = {16, 32, 0.1, 11, 1, NULL};
    weft_pool_t *pool = NULL;
    mlp_data_t *d = NULL;
    mlp_trainer_t *w = NULL;
    assert_int_equal(weft_pool_create(1, NULL, &pool), WEFT_OK);
    assert_int_equal(mlp_data_create(&cfg, &d), WEFT_OK);
    assert_int_equal(mlp_trainer_create(d, MLP_IMPL_WEFT, pool, 1, &w), WEFT_OK);
    double first, loss;
    assert_int_equal(mlp_trainer_step(w, &first), WEFT_OK);
    for (int s = 0; s < 2; s++) assert_int_equal(mlp_trainer_step(w, &loss), WEFT_OK);
    alloc_count_start();
    for (int s = 0; s < 10; s++) assert_int_equal(mlp_trainer_step(w, &loss), WEFT_OK);
    long n = alloc_count_stop();
    printf("warm steps: %ld allocations, loss %.6g -> %.6g\n", n, first, loss);
    assert_int_equal(n, 0);
    assert_true(loss < first);
    mlp_trainer_destroy(w);
    mlp_data_destroy(d);
    assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
}

static void test_mlp_train_sharded_graph_matches_handc(void **state)
{
    (void)state;
    weft_pool_t *pool = NULL;
    double lw[STEPS], lh[STEPS], diff;
    mlp_config_t cfg = tiny;
    cfg.shards = 3;
    cfg.exclude = "inplace";
    assert_int_equal(weft_pool_create(2, NULL, &pool), WEFT_OK);
    train_cfg(&cfg, pool, lw, lh, &diff);
    assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
    for (int s = 0; s < STEPS; s++) assert_true(fabs(lw[s] - lh[s]) <= 1e-12 * lh[s]);
    assert_true(lw[STEPS - 1] < lw[0]);
    assert_true(diff < 1e-12);
}

/* Same seed, same losses on a fresh pool: the step is deterministic. */
static void test_mlp_train_repeated_run_same_losses(void **state)
{
    (void)state;
    weft_pool_t *pool = NULL;
    double a[STEPS], b[STEPS], ah[STEPS], bh[STEPS], diff;
    assert_int_equal(weft_pool_create(1, NULL, &pool), WEFT_OK);
    train_both(pool, a, ah, &diff);
    train_both(pool, b, bh, &diff);
    assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
    assert_memory_equal(a, b, sizeof a);
    assert_memory_equal(ah, bh, sizeof ah);
}

static void test_mlp_train_saved_graph_loads_back(void **state)
{
    (void)state;
    char path[] = "/tmp/weft_test_mlp_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(mlp_save_graph(&tiny, path), WEFT_OK);
    weft_graph_t *g = NULL;
    weft_graph_io_t io;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    assert_int_equal(weft_graph_io_load_file(g, path, &io), WEFT_OK);
    assert_int_equal(io.n_inputs, 10);
    assert_int_equal(io.n_outputs, 1);
    assert_int_equal(io.n_updates, 8);
    assert_string_equal(weft_var_name(io.inputs[2]), "W1");
    assert_string_equal(weft_var_name(io.outputs[0]), "loss");
    weft_graph_io_clear(&io);
    weft_graph_destroy(g);
    unlink(path);
}

static void test_mlp_train_bad_arguments_return_einval(void **state)
{
    (void)state;
    mlp_config_t bad = tiny;
    mlp_data_t *d = NULL;
    mlp_trainer_t *t = (mlp_trainer_t *)&bad;
    double loss;
    bad.batch = 0;
    assert_int_equal(mlp_data_create(&bad, &d), WEFT_EINVAL);
    assert_int_equal(mlp_data_create(NULL, &d), WEFT_EINVAL);
    assert_int_equal(mlp_data_create(&tiny, &d), WEFT_OK);
    assert_int_equal(mlp_trainer_create(d, MLP_IMPL_WEFT, NULL, 1, &t), WEFT_EINVAL);
    assert_null(t);
    assert_int_equal(mlp_trainer_create(d, MLP_IMPL_HANDC, NULL, 0, &t), WEFT_EINVAL);
    assert_int_equal(mlp_trainer_create(d, (mlp_impl_t)7, NULL, 1, &t), WEFT_EINVAL);
    assert_int_equal(mlp_trainer_step(NULL, &loss), WEFT_EINVAL);
    assert_int_equal(mlp_save_graph(&tiny, NULL), WEFT_EINVAL);
    mlp_data_destroy(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mlp_train_tiny_model_losses_match_handc_and_decrease),
        cmocka_unit_test(test_mlp_train_warm_step_allocates_nothing),
        cmocka_unit_test(test_mlp_train_sharded_graph_matches_handc),
        cmocka_unit_test(test_mlp_train_repeated_run_same_losses),
        cmocka_unit_test(test_mlp_train_saved_graph_loads_back),
        cmocka_unit_test(test_mlp_train_bad_arguments_return_einval),
    };
    return cmocka_run_group_tests_name("mlp_train", tests, NULL, NULL);
}
