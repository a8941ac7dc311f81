/* The mlp_train demo's model, shared by the tool (mlp_train.c) and its test
 * (tests/demos): a 4-layer tanh MLP trained with MSE and plain SGD, as a weft
 * compiled function and as the hand-written C + cblas reference.
 *
 *   h1 = tanh(x W1 + b1), h2 = tanh(h1 W2 + b2), h3 = tanh(h2 W3 + b3),
 *   out = h3 W4 + b4, loss = mean((out - y)^2) over all batch x width entries,
 *   Wk -= lr * dloss/dWk, bk -= lr * dloss/dbk.
 *
 * Every matrix is width x width (x and y are batch x width), float64. The
 * data are synthetic and seeded: x uniform in [-1, 1], y the outputs of a
 * fixed random teacher network of the same shape; the student starts from
 * other random weights and zero biases. Both implementations start from the
 * same parameters and see the same data, so their losses agree to rounding.
 *
 * Thread: a trainer is used by one thread at a time. */
#ifndef WEFT_DEMOS_MLP_TRAIN_CORE_H
#define WEFT_DEMOS_MLP_TRAIN_CORE_H

#include <stdint.h>

#include "weft/weft.h"

#define MLP_LAYERS 4

typedef struct mlp_config {
    int batch;     /* rows of x and y */
    int width;     /* every layer's width */
    double lr;     /* SGD step */
    uint64_t seed; /* data, teacher and initial weights */
    int shards;    /* weft graph: row blocks of the batch with their own chains (0, 1: none) */
    const char *exclude; /* weft compile: a rewrite name or tag to exclude (NULL: none) */
} mlp_config_t;

typedef enum mlp_impl { MLP_IMPL_WEFT = 0, MLP_IMPL_HANDC = 1 } mlp_impl_t;

/* Data set and initial parameters (immutable once made). */
typedef struct mlp_data mlp_data_t;
typedef struct mlp_trainer mlp_trainer_t;

/* Makes the seeded data set for cfg. Errors: WEFT_EINVAL (NULL args, batch or
 * width < 1), WEFT_ENOMEM. Ownership: returns new, free with mlp_data_destroy. */
weft_status_t mlp_data_create(const mlp_config_t *cfg, mlp_data_t **out);
void mlp_data_destroy(mlp_data_t *d);

/* A trainer with its own copy of the initial parameters.
 * MLP_IMPL_WEFT: the step is compiled on `pool` (borrowed, must outlive the
 * trainer). MLP_IMPL_HANDC: pool is ignored; each step runs OpenBLAS with
 * blas_threads threads (restored after).
 * Ownership: borrows data (must outlive the trainer); returns new, free with
 * mlp_trainer_destroy. Errors: WEFT_EINVAL, WEFT_ENOMEM, or the compile's
 * status (message printed to stderr). */
weft_status_t mlp_trainer_create(const mlp_data_t *data, mlp_impl_t impl, weft_pool_t *pool,
                                 int blas_threads, mlp_trainer_t **out);
void mlp_trainer_destroy(mlp_trainer_t *t);

/* One SGD step; *loss: the loss of the parameters before the step.
 * Errors: the call's status (message printed to stderr). */
weft_status_t mlp_trainer_step(mlp_trainer_t *t, double *loss);

/* The weft trainer's function (NULL for hand-C): stats, profile, print. */
weft_function_t *mlp_trainer_function(const mlp_trainer_t *t);

/* Largest |difference| between two trainers' current parameters. */
double mlp_trainer_param_diff(const mlp_trainer_t *a, const mlp_trainer_t *b);

/* Saves the training step graph (inputs x, y, W1, b1, ..., W4, b4; output
 * loss; the SGD updates) as a weft JSON graph (weft/graph_io.h) at path.
 * Errors: WEFT_EINVAL, WEFT_EIO, the builder's status. */
weft_status_t mlp_save_graph(const mlp_config_t *cfg, const char *path);

#endif /* WEFT_DEMOS_MLP_TRAIN_CORE_H */
