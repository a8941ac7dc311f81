/* Training a small MLP with shared variables and updates.
 *
 * The parameters W1, b1, W2, b2 are shared variables: the compiled training
 * step reads them and writes their new values (plain SGD) after each call,
 * so a call passes only the batch. Afterwards the trained parameters are read
 * back with weft_shared_get and a second function, compiled from the same
 * graph, predicts with them.
 *
 * Build: see examples/CMakeLists.txt (in the weft tree, or standalone against
 * an installed weft). Run: ./example_mlp_shared */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <weft/weft.h>

#define N 64      /* batch */
#define D 2       /* inputs */
#define H 16      /* hidden units */
#define STEPS 300 /* SGD steps */

/* Stops at the first failing call, naming it. */
#define CHECK(call)                                                                          \
    do {                                                                                     \
        weft_status_t st_ = (call);                                                          \
        if (st_ != WEFT_OK) {                                                                \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,             \
                    weft_status_name(st_));                                                  \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

/* A deterministic pseudo-random number in [-1, 1). */
static double uniform(unsigned *state)
{
    *state = *state * 1664525u + 1013904223u;
    return (double)(*state >> 8) / (double)(1u << 23) - 1.0;
}

/* A float64 tensor of the given shape, filled with scale * uniform. */
static weft_tensor_t *random_tensor(int ndim, const int64_t *shape, double scale,
                                    unsigned *rng)
{
    weft_tensor_t *t;
    CHECK(weft_tensor_empty(WEFT_FLOAT64, ndim, shape, &t));
    double *p = weft_tensor_data(t);
    for (size_t i = 0; i < weft_tensor_size(t); i++) p[i] = scale * uniform(rng);
    return t;
}

/* The model: its inputs, parameters (shared) and expressions. */
typedef struct mlp {
    weft_var_t *x, *y, *params[4], *pred, *loss;
    weft_update_t ups[4];
} mlp_t;

/* pred = tanh(x W1 + b1) W2 + b2, loss = mean((pred - y)^2), and the SGD
 * updates p <- p - lr * dloss/dp. Constructors nest; an error is kept on g
 * and reported by the compile (one check). */
static void build(weft_graph_t *g, mlp_t *m, double lr, unsigned *rng)
{
    const int64_t shapes[4][2] = {{D, H}, {H}, {H, 1}, {1}};
    const int nds[4] = {2, 1, 2, 1};
    const char *names[4] = {"W1", "b1", "W2", "b2"};
    for (int i = 0; i < 4; i++) {
        weft_tensor_t *init = random_tensor(nds[i], shapes[i], nds[i] == 2 ? 0.5 : 0.0, rng);
        m->params[i] = weft_shared(g, init, names[i]); /* takes a copy */
        weft_tensor_release(init);
    }
    const weft_type_t *xt, *yt;
    CHECK(weft_type_tensor(g, WEFT_FLOAT64, 2, (int64_t[]){N, D}, &xt));
    CHECK(weft_type_tensor(g, WEFT_FLOAT64, 2, (int64_t[]){N, 1}, &yt));
    weft_var_t *x = m->x = weft_var_create(g, xt, "x"), **p = m->params, *grads[4];
    m->y = weft_var_create(g, yt, "y");
    weft_var_t *h = weft_tanh(g, weft_add(g, weft_dot(g, x, p[0]), p[1]));
    m->pred = weft_add(g, weft_dot(g, h, p[2]), p[3]);
    m->loss = weft_mean(g, weft_sqr(g, weft_sub(g, m->pred, m->y)), 0, NULL, false);
    weft_grads(g, m->loss, 4, p, NULL, grads);
    for (int i = 0; i < 4; i++)
        m->ups[i] = (weft_update_t){p[i], weft_sub(g, p[i], weft_mul_scalar(g, grads[i], lr))};
}

/* The task: y = sin(2 x0) * x1 on points in [-1, 1)^2. */
static void make_data(weft_tensor_t **x, weft_tensor_t **y, unsigned *rng)
{
    *x = random_tensor(2, (int64_t[]){N, D}, 1.0, rng);
    CHECK(weft_tensor_empty(WEFT_FLOAT64, 2, (int64_t[]){N, 1}, y));
    const double *px = weft_tensor_data(*x);
    double *py = weft_tensor_data(*y);
    for (int i = 0; i < N; i++) py[i] = sin(2 * px[i * D]) * px[i * D + 1];
}

/* Compiles with the one check of the construction: a kept error is the
 * compile's. */
static weft_function_t *compile(size_t n_in, weft_var_t **in, weft_var_t *out, size_t n_upd,
                                const weft_update_t *ups)
{
    weft_function_t *f;
    if (weft_function_compile(n_in, in, 1, &out, n_upd, ups, NULL, &f) != WEFT_OK) {
        fprintf(stderr, "compile: %s\n", weft_function_last_error(NULL));
        exit(1);
    }
    return f;
}

int main(void)
{
    unsigned rng = 42;
    weft_graph_t *g;
    CHECK(weft_graph_create(NULL, &g));
    mlp_t m;
    build(g, &m, 0.2, &rng);

    /* The step takes only the batch: the parameters are shared. */
    weft_var_t *batch[2] = {m.x, m.y};
    weft_function_t *step = compile(2, batch, m.loss, 4, m.ups);
    weft_function_t *predict = compile(1, &m.x, m.pred, 0, NULL);

    weft_tensor_t *x, *y, *loss;
    make_data(&x, &y, &rng);
    CHECK(weft_tensor_empty(WEFT_FLOAT64, 0, NULL, &loss));
    weft_tensor_t *args[2] = {x, y};
    for (int k = 0; k <= STEPS; k++) {
        CHECK(weft_function_call(step, 2, args, 1, &loss));
        if (k % 100 == 0) printf("step %3d loss %.4f\n", k, weft_tensor_flat_get(loss, 0));
    }

    /* The trained parameters, read back; the second function sees them. */
    weft_tensor_t *b2, *pred = NULL;
    CHECK(weft_shared_get(m.params[3], &b2));
    printf("b2 after training %.4f\n", weft_tensor_flat_get(b2, 0));
    CHECK(weft_function_call(predict, 1, &x, 1, &pred));
    printf("x0 = (%.3f, %.3f): target %.4f, prediction %.4f\n", weft_tensor_flat_get(x, 0),
           weft_tensor_flat_get(x, 1), weft_tensor_flat_get(y, 0), weft_tensor_flat_get(pred, 0));

    weft_tensor_release(pred);
    weft_tensor_release(b2);
    weft_tensor_release(loss);
    weft_tensor_release(x);
    weft_tensor_release(y);
    CHECK(weft_function_destroy(predict));
    CHECK(weft_function_destroy(step));
    weft_graph_destroy(g);
    return 0;
}
