/* mlp_train demo internals shared by mlp_train_core.c (data, weft step,
 * front end) and mlp_train_handc.c (the hand-written C + cblas step). */
#ifndef WEFT_DEMOS_MLP_TRAIN_INT_H
#define WEFT_DEMOS_MLP_TRAIN_INT_H

#include <stddef.h>

#include "mlp_train_core.h"

#define MLP_N_PARAMS (2 * MLP_LAYERS)
#define MLP_N_INPUTS (2 + MLP_N_PARAMS)

struct mlp_data {
    mlp_config_t cfg;
    double *x, *y;                /* batch x width, row-major */
    double *w0[MLP_LAYERS];       /* initial weights, width x width */
    double *b0[MLP_LAYERS];       /* initial biases (zero), width */
};

/* The training-step graph: inputs x, y, W1, b1, ..., W4, b4 (in that order),
 * the loss and each parameter's new value. */
typedef struct mlp_graph {
    weft_graph_t *g;
    weft_var_t *in[MLP_N_INPUTS];
    weft_var_t *loss;
    weft_var_t *news[MLP_N_PARAMS];
} mlp_graph_t;

struct mlp_trainer {
    const mlp_data_t *data;
    mlp_impl_t impl;
    int blas_threads;             /* hand-C: OpenBLAS threads of its step */
    double *w[MLP_LAYERS], *b[MLP_LAYERS]; /* current parameters */
    /* weft */
    weft_function_t *fn;
    weft_tensor_t *in[MLP_N_INPUTS]; /* views of data->x, data->y, w, b */
    weft_tensor_t *loss;
    /* hand-C work buffers (batch x width each) */
    double *h[MLP_LAYERS];        /* h[0] unused (x), h[1..3] activations */
    double *g, *gtmp;             /* gradient w.r.t. the current layer's output */
    double *colsum;               /* width */
};

/* 64-byte aligned array of n doubles (free with free); NULL when out of memory. */
double *mlp__alloc(size_t n);
/* z = a (rows x w) @ b (w x w), one OpenBLAS call. */
void mlp__matmul(const double *a, const double *b, double *z, size_t rows, size_t w);
/* Builds the step graph into m (m->g is set whenever a graph was created:
 * destroy it also on error). */
weft_status_t mlp__graph_build(mlp_graph_t *m, const mlp_config_t *cfg);

weft_status_t mlp__handc_init(mlp_trainer_t *t);
void mlp__handc_fini(mlp_trainer_t *t);
weft_status_t mlp__handc_step(mlp_trainer_t *t, double *loss);

#endif /* WEFT_DEMOS_MLP_TRAIN_INT_H */
