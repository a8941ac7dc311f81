/* mlp_train demo: the seeded data set, the weft training step (graph built
 * with weft_grad, SGD as updates, compiled once) and the trainer front end
 * that dispatches to it or to the hand-written C step (mlp_train_handc.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlp_train_core.h"
#include "mlp_train_int.h"

/* ---- data ------------------------------------------------------------------- */

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull); /* splitmix64 */
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [-a, a]. */
static void rng_fill(uint64_t *s, double *v, size_t n, double a)
{
    for (size_t i = 0; i < n; i++) v[i] = a * (2.0 * ((double)(rng_next(s) >> 11) * 0x1p-53) - 1.0);
}

double *mlp__alloc(size_t n)
{
    size_t bytes = (n * sizeof(double) + 63) / 64 * 64;
    return aligned_alloc(64, bytes ? bytes : 64);
}

/* The teacher's outputs: the same network with its own weights (biases 0.1). */
static void teacher_outputs(mlp_data_t *d, uint64_t *s)
{
    size_t w = (size_t)d->cfg.width, b = (size_t)d->cfg.batch;
    double *tw = mlp__alloc(w * w), *h = mlp__alloc(b * w), *z = mlp__alloc(b * w);
    memcpy(h, d->x, b * w * sizeof(double));
    for (int k = 0; k < MLP_LAYERS; k++) {
        rng_fill(s, tw, w * w, sqrt(3.0 / (double)w) * 1.5);
        mlp__matmul(h, tw, z, b, w);
        for (size_t i = 0; i < b * w; i++)
            h[i] = k == MLP_LAYERS - 1 ? z[i] + 0.1 : tanh(z[i] + 0.1);
    }
    memcpy(d->y, h, b * w * sizeof(double));
    free(tw);
    free(h);
    free(z);
}

weft_status_t mlp_data_create(const mlp_config_t *cfg, mlp_data_t **out)
{
    if (out) *out = NULL;
    if (!cfg || !out || cfg->batch < 1 || cfg->width < 1) return WEFT_EINVAL;
    mlp_data_t *d = calloc(1, sizeof *d);
    if (!d) return WEFT_ENOMEM;
    d->cfg = *cfg;
    size_t w = (size_t)cfg->width, b = (size_t)cfg->batch;
    bool ok = (d->x = mlp__alloc(b * w)) && (d->y = mlp__alloc(b * w));
    for (int k = 0; ok && k < MLP_LAYERS; k++)
        ok = (d->w0[k] = mlp__alloc(w * w)) && (d->b0[k] = mlp__alloc(w));
    if (!ok) {
        mlp_data_destroy(d);
        return WEFT_ENOMEM;
    }
    uint64_t s = cfg->seed;
    rng_fill(&s, d->x, b * w, 1.0);
    for (int k = 0; k < MLP_LAYERS; k++) {
        rng_fill(&s, d->w0[k], w * w, sqrt(3.0 / (double)w)); /* variance 1/width */
        memset(d->b0[k], 0, w * sizeof(double));
    }
    teacher_outputs(d, &s);
    *out = d;
    return WEFT_OK;
}

void mlp_data_destroy(mlp_data_t *d)
{
    if (!d) return;
    free(d->x);
    free(d->y);
    for (int k = 0; k < MLP_LAYERS; k++) {
        free(d->w0[k]);
        free(d->b0[k]);
    }
    free(d);
}

/* ---- the weft graph ----------------------------------------------------------- */

#define CHECK(call)                                                                  \
    do {                                                                             \
        weft_status_t s_ = (call);                                                   \
        if (s_ != WEFT_OK) {                                                         \
            fprintf(stderr, "mlp_train: %s: %s (%s)\n", #call, weft_status_name(s_), \
                    weft_graph_last_error(m->g));                                    \
            return s_;                                                               \
        }                                                                            \
    } while (0)
static weft_status_t build_inputs(mlp_graph_t *m, int batch, int width)
{
    const weft_type_t *tx, *tw, *tb;
    int64_t xs[2] = {batch, width}, ws[2] = {width, width}, bs[1] = {width};
    CHECK(weft_type_tensor(m->g, WEFT_FLOAT64, 2, xs, &tx));
    CHECK(weft_type_tensor(m->g, WEFT_FLOAT64, 2, ws, &tw));
    CHECK(weft_type_tensor(m->g, WEFT_FLOAT64, 1, bs, &tb));
    m->in[0] = weft_var_create(m->g, tx, "x");
    m->in[1] = weft_var_create(m->g, tx, "y");
    for (int k = 0; k < MLP_LAYERS; k++) {
        char wn[16], bn[16];
        snprintf(wn, sizeof wn, "W%d", k + 1);
        snprintf(bn, sizeof bn, "b%d", k + 1);
        m->in[2 + 2 * k] = weft_var_create(m->g, tw, wn);
        m->in[3 + 2 * k] = weft_var_create(m->g, tb, bn);
    }
    return WEFT_OK;
}

/* The network on x (rows of the batch): its output (before the loss). A
 * construction error is kept on m->g (checked once, in mlp__graph_build). */
static weft_var_t *build_net(mlp_graph_t *m, weft_var_t *x)
{
    weft_var_t *h = x;
    for (int k = 0; k < MLP_LAYERS; k++) {
        h = weft_add(m->g, weft_dot(m->g, h, m->in[2 + 2 * k]), m->in[3 + 2 * k]);
        if (k < MLP_LAYERS - 1) h = weft_tanh(m->g, h);
    }
    return h;
}

/* One shard: sum((net(x[r0:r1]) - y[r0:r1])^2). */
static weft_var_t *build_shard_sse(mlp_graph_t *m, int64_t r0, int64_t r1)
{
    weft_slice_t rows[1] = {WEFT_SLICE(r0, r1, 1)};
    weft_var_t *xs = weft_subtensor(m->g, m->in[0], 1, rows);
    weft_var_t *ys = weft_subtensor(m->g, m->in[1], 1, rows);
    weft_var_t *d = weft_sub(m->g, build_net(m, xs), ys);
    return weft_sum(m->g, weft_sqr(m->g, d), 0, NULL, false);
}

/* shards <= 1: loss = mean((net(x) - y)^2), the graph of weft-mlp-gen.
 * shards S > 1: the batch split into S row blocks, each its own forward and
 * backward chain (independent nodes a pool can run at once), loss = (sum of
 * the blocks' squared errors) / (batch width) - the same value. */
static weft_var_t *build_loss(mlp_graph_t *m, const mlp_config_t *cfg)
{
    int shards = cfg->shards > 1 ? cfg->shards : 1;
    if (shards == 1) {
        weft_var_t *d = weft_sub(m->g, build_net(m, m->in[0]), m->in[1]);
        return weft_mean(m->g, weft_sqr(m->g, d), 0, NULL, false);
    }
    weft_var_t *total = NULL;
    for (int s = 0; s < shards; s++) {
        int64_t r0 = (int64_t)cfg->batch * s / shards, r1 = (int64_t)cfg->batch * (s + 1) / shards;
        weft_var_t *sse = build_shard_sse(m, r0, r1);
        total = s ? weft_add(m->g, total, sse) : sse;
    }
    return weft_mul_scalar(m->g, total, 1.0 / ((double)cfg->batch * (double)cfg->width));
}

/* news[i] = param i - lr * d loss / d param i. */
static void build_sgd(mlp_graph_t *m, double lr)
{
    weft_var_t *grads[MLP_N_PARAMS];
    weft_grads(m->g, m->loss, MLP_N_PARAMS, m->in + 2, NULL, grads);
    for (int i = 0; i < MLP_N_PARAMS; i++)
        m->news[i] = weft_sub(m->g, m->in[2 + i], weft_mul_scalar(m->g, grads[i], lr));
}

weft_status_t mlp__graph_build(mlp_graph_t *m, const mlp_config_t *cfg)
{
    memset(m, 0, sizeof *m);
    weft_status_t st = weft_graph_create(NULL, &m->g);
    if (st != WEFT_OK) return st;
    st = build_inputs(m, cfg->batch, cfg->width);
    if (st != WEFT_OK) return st;
    m->loss = build_loss(m, cfg);
    build_sgd(m, cfg->lr);
    if (weft_graph_error(m->g) != WEFT_OK) { /* the one check of the construction */
        fprintf(stderr, "mlp_train: %s\n", weft_graph_error_message(m->g));
        return weft_graph_error(m->g);
    }
    return weft_var_set_name(m->loss, "loss");
}

weft_status_t mlp_save_graph(const mlp_config_t *cfg, const char *path)
{
    if (!cfg || !path) return WEFT_EINVAL;
    mlp_graph_t m;
    weft_status_t st = mlp__graph_build(&m, cfg);
    bool mut[MLP_N_INPUTS];
    for (int i = 0; i < MLP_N_INPUTS; i++) mut[i] = i >= 2;
    weft_graph_io_t gr = {MLP_N_INPUTS, m.in, mut, 1, &m.loss, MLP_N_PARAMS, m.in + 2, m.news};
    if (st == WEFT_OK) st = weft_graph_io_save_file(&gr, path);
    if (st != WEFT_OK)
        fprintf(stderr, "mlp_train: saving %s: %s (%s)\n", path, weft_status_name(st),
                m.g ? weft_graph_last_error(m.g) : "");
    weft_graph_destroy(m.g);
    return st;
}

/* ---- the weft trainer ----------------------------------------------------------- */

static weft_status_t weft_compile_step(mlp_trainer_t *t, weft_pool_t *pool)
{
    mlp_graph_t m;
    weft_status_t st = mlp__graph_build(&m, &t->data->cfg);
    weft_update_t upd[MLP_N_PARAMS];
    for (int i = 0; i < MLP_N_PARAMS; i++) upd[i] = (weft_update_t){m.in[2 + i], m.news[i]};
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.pool = pool;
    o.name = "mlp_train_step";
    const char *excl[1] = {t->data->cfg.exclude};
    o.n_exclude = excl[0] ? 1 : 0;
    o.exclude = excl;
    if (st == WEFT_OK)
        st = weft_function_compile(MLP_N_INPUTS, m.in, 1, &m.loss, MLP_N_PARAMS, upd, &o, &t->fn);
    if (st != WEFT_OK && m.g)
        fprintf(stderr, "mlp_train: compile: %s (%s)\n", weft_status_name(st),
                weft_function_last_error(NULL));
    weft_graph_destroy(m.g);
    return st;
}

/* Tensors over the trainer's own arrays, created once: a call borrows them. */
static weft_status_t weft_wrap_inputs(mlp_trainer_t *t)
{
    const mlp_config_t *c = &t->data->cfg;
    int64_t xs[2] = {c->batch, c->width}, ws[2] = {c->width, c->width}, bs[1] = {c->width};
    weft_status_t st = weft_tensor_from_data(WEFT_FLOAT64, 2, xs, NULL, t->data->x, &t->in[0]);
    if (st == WEFT_OK)
        st = weft_tensor_from_data(WEFT_FLOAT64, 2, xs, NULL, t->data->y, &t->in[1]);
    for (int k = 0; st == WEFT_OK && k < MLP_LAYERS; k++) {
        st = weft_tensor_from_data(WEFT_FLOAT64, 2, ws, NULL, t->w[k], &t->in[2 + 2 * k]);
        if (st == WEFT_OK)
            st = weft_tensor_from_data(WEFT_FLOAT64, 1, bs, NULL, t->b[k], &t->in[3 + 2 * k]);
    }
    if (st == WEFT_OK) st = weft_tensor_empty(WEFT_FLOAT64, 0, NULL, &t->loss);
    return st;
}

static weft_status_t weft_step(mlp_trainer_t *t, double *loss)
{
    weft_tensor_t *out[1] = {t->loss};
    weft_status_t st = weft_function_call(t->fn, MLP_N_INPUTS, t->in, 1, out);
    if (st != WEFT_OK) {
        fprintf(stderr, "mlp_train: call: %s (%s)\n", weft_status_name(st),
                weft_function_last_error(t->fn));
        return st;
    }
    *loss = *(const double *)weft_tensor_data(t->loss);
    return WEFT_OK;
}

/* ---- trainer front end ------------------------------------------------------------ */

static weft_status_t copy_params(mlp_trainer_t *t)
{
    size_t w = (size_t)t->data->cfg.width;
    for (int k = 0; k < MLP_LAYERS; k++) {
        if (!(t->w[k] = mlp__alloc(w * w)) || !(t->b[k] = mlp__alloc(w))) return WEFT_ENOMEM;
        memcpy(t->w[k], t->data->w0[k], w * w * sizeof(double));
        memcpy(t->b[k], t->data->b0[k], w * sizeof(double));
    }
    return WEFT_OK;
}

weft_status_t mlp_trainer_create(const mlp_data_t *data, mlp_impl_t impl, weft_pool_t *pool,
                                 int blas_threads, mlp_trainer_t **out)
{
    if (out) *out = NULL;
    if (!data || !out || (impl == MLP_IMPL_WEFT && !pool) ||
        (impl == MLP_IMPL_HANDC && blas_threads < 1) ||
        (impl != MLP_IMPL_WEFT && impl != MLP_IMPL_HANDC))
        return WEFT_EINVAL;
    mlp_trainer_t *t = calloc(1, sizeof *t);
    if (!t) return WEFT_ENOMEM;
    t->data = data;
    t->impl = impl;
    t->blas_threads = blas_threads;
    weft_status_t st = copy_params(t);
    if (st == WEFT_OK && impl == MLP_IMPL_WEFT) st = weft_compile_step(t, pool);
    if (st == WEFT_OK && impl == MLP_IMPL_WEFT) st = weft_wrap_inputs(t);
    if (st == WEFT_OK && impl == MLP_IMPL_HANDC) st = mlp__handc_init(t);
    if (st != WEFT_OK) {
        mlp_trainer_destroy(t);
        return st;
    }
    *out = t;
    return WEFT_OK;
}

void mlp_trainer_destroy(mlp_trainer_t *t)
{
    if (!t) return;
    weft_function_destroy(t->fn);
    for (int i = 0; i < MLP_N_INPUTS; i++) weft_tensor_release(t->in[i]);
    weft_tensor_release(t->loss);
    mlp__handc_fini(t);
    for (int k = 0; k < MLP_LAYERS; k++) {
        free(t->w[k]);
        free(t->b[k]);
    }
    free(t);
}

weft_status_t mlp_trainer_step(mlp_trainer_t *t, double *loss)
{
    if (!t || !loss) return WEFT_EINVAL;
    return t->impl == MLP_IMPL_WEFT ? weft_step(t, loss) : mlp__handc_step(t, loss);
}

weft_function_t *mlp_trainer_function(const mlp_trainer_t *t)
{
    return t ? t->fn : NULL;
}

double mlp_trainer_param_diff(const mlp_trainer_t *a, const mlp_trainer_t *b)
{
    size_t w = (size_t)a->data->cfg.width;
    double m = 0.0;
    for (int k = 0; k < MLP_LAYERS; k++) {
        for (size_t i = 0; i < w * w; i++) m = fmax(m, fabs(a->w[k][i] - b->w[k][i]));
        for (size_t i = 0; i < w; i++) m = fmax(m, fabs(a->b[k][i] - b->b[k][i]));
    }
    return m;
}
