/* mlp_train demo: the hand-written reference step, "the best straightforward
 * C" (docs/performance-notes.md §5): cblas_dgemm for the products and one
 * fused loop per elementwise stage (bias + tanh together; bias + difference +
 * squared loss + output gradient together; tanh derivative times the
 * back-propagated gradient). The weight update rides on the gradient's dgemm
 * (beta = 1, alpha = -lr), after the product that still needs the old
 * weights. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>

#include "mlp_train_int.h"

void mlp__matmul(const double *a, const double *b, double *z, size_t rows, size_t w)
{
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, (int)w, (int)w, 1.0, a,
                (int)w, b, (int)w, 0.0, z, (int)w);
}

weft_status_t mlp__handc_init(mlp_trainer_t *t)
{
    size_t n = (size_t)t->data->cfg.batch * (size_t)t->data->cfg.width;
    for (int k = 1; k < MLP_LAYERS; k++)
        if (!(t->h[k] = mlp__alloc(n))) return WEFT_ENOMEM;
    t->g = mlp__alloc(n);
    t->gtmp = mlp__alloc(n);
    t->colsum = mlp__alloc((size_t)t->data->cfg.width);
    return t->g && t->gtmp && t->colsum ? WEFT_OK : WEFT_ENOMEM;
}

void mlp__handc_fini(mlp_trainer_t *t)
{
    for (int k = 1; k < MLP_LAYERS; k++) free(t->h[k]);
    free(t->g);
    free(t->gtmp);
    free(t->colsum);
}

/* h = tanh(h + b), row by row. */
static void bias_tanh(double *h, const double *b, size_t rows, size_t w)
{
    for (size_t i = 0; i < rows; i++, h += w)
        for (size_t j = 0; j < w; j++) h[j] = tanh(h[j] + b[j]);
}

/* d = z + b - y; returns sum d^2 and stores g = 2 d / (rows w). */
static double bias_loss_grad(const double *z, const double *b, const double *y, double *g,
                             size_t rows, size_t w)
{
    double sum = 0.0, scale = 2.0 / ((double)rows * (double)w);
    for (size_t i = 0; i < rows; i++, z += w, y += w, g += w) {
        for (size_t j = 0; j < w; j++) {
            double d = z[j] + b[j] - y[j];
            sum += d * d;
            g[j] = scale * d;
        }
    }
    return sum;
}

/* b -= lr * column sums of g. */
static void bias_update(double *b, const double *g, double *colsum, double lr, size_t rows,
                        size_t w)
{
    for (size_t j = 0; j < w; j++) colsum[j] = 0.0;
    for (size_t i = 0; i < rows; i++, g += w)
        for (size_t j = 0; j < w; j++) colsum[j] += g[j];
    for (size_t j = 0; j < w; j++) b[j] -= lr * colsum[j];
}

/* g = gtmp * (1 - h^2): the gradient through tanh. */
static void tanh_back(double *g, const double *gtmp, const double *h, size_t n)
{
    for (size_t i = 0; i < n; i++) g[i] = gtmp[i] * (1.0 - h[i] * h[i]);
}

static double forward(mlp_trainer_t *t, size_t rows, size_t w)
{
    const double *in = t->data->x;
    for (int k = 0; k < MLP_LAYERS - 1; k++) {
        mlp__matmul(in, t->w[k], t->h[k + 1], rows, w);
        bias_tanh(t->h[k + 1], t->b[k], rows, w);
        in = t->h[k + 1];
    }
    mlp__matmul(in, t->w[MLP_LAYERS - 1], t->gtmp, rows, w);
    double sum = bias_loss_grad(t->gtmp, t->b[MLP_LAYERS - 1], t->data->y, t->g, rows, w);
    return sum / ((double)rows * (double)w);
}

static void backward(mlp_trainer_t *t, size_t rows, size_t w, double lr)
{
    int r = (int)rows, n = (int)w;
    for (int k = MLP_LAYERS - 1; k >= 0; k--) {
        const double *hin = k == 0 ? t->data->x : t->h[k];
        if (k > 0) /* gradient w.r.t. h_k, with the old W_k */
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, r, n, n, 1.0, t->g, n, t->w[k],
                        n, 0.0, t->gtmp, n);
        /* W_k -= lr * h_k^T g */
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n, n, r, -lr, hin, n, t->g, n, 1.0,
                    t->w[k], n);
        bias_update(t->b[k], t->g, t->colsum, lr, rows, w);
        if (k > 0) tanh_back(t->g, t->gtmp, t->h[k], rows * w);
    }
}

weft_status_t mlp__handc_step(mlp_trainer_t *t, double *loss)
{
    weft_blas_scope_t scope;
    weft_status_t st = weft_blas_scope_enter(&scope, t->blas_threads);
    if (st != WEFT_OK) return st;
    size_t rows = (size_t)t->data->cfg.batch, w = (size_t)t->data->cfg.width;
    *loss = forward(t, rows, w);
    backward(t, rows, w, t->data->cfg.lr);
    weft_blas_scope_exit(&scope);
    return WEFT_OK;
}
