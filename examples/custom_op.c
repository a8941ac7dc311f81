/* Custom ops in a few lines (weft/custom_op.h), in both styles:
 *
 * - Softplus, elementwise: one scalar function, log(1 + e^x), plus an
 *   optional gradient callback; weft broadcasts, converts dtypes, walks
 *   strides and splits the work.
 * - Cumsum, whole-tensor: a kernel that gets the input tensor (any strides;
 *   weft_kernel_contiguous gives a contiguous view or a pooled copy) and
 *   fills the output weft allocated (here of the input's shape, the
 *   default; a shape function gives other shapes).
 *
 * Both classes are registered by name, so graphs using them save and load as
 * JSON and show under those names in profiles and error messages.
 *
 * Build: see examples/CMakeLists.txt. Run: ./example_custom_op */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <weft/weft.h>

#define CHECK(call)                                                                          \
    do {                                                                                     \
        weft_status_t st_ = (call);                                                          \
        if (st_ != WEFT_OK) {                                                                \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,             \
                    weft_status_name(st_));                                                  \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

/* ---- Softplus, a one-callback op: this function and four lines in main ----------- */
static double softplus(const double *x, void *user)
{
    (void)user;
    return log1p(exp(x[0]));
}

/* Its gradient: d softplus(x) / dx = sigmoid(x). */
static weft_status_t softplus_grad(weft_graph_t *g, size_t n_in, weft_var_t *const *in,
                                   size_t n_out, weft_var_t *const *out,
                                   weft_var_t *const *gout, weft_var_t **gin, void *user)
{
    (void)n_in, (void)n_out, (void)out, (void)user;
    gin[0] = weft_mul(g, gout[0], weft_sigmoid(g, in[0]));
    return gin[0] ? WEFT_OK : weft_graph_error(g);
}

/* ---- Cumsum along the last axis of a matrix: the whole-tensor style ---------------- */
static weft_status_t cumsum(weft_kernel_ctx_t *ctx, size_t n_in, weft_tensor_t *const *in,
                            size_t n_out, weft_tensor_t *const *out, void *user)
{
    (void)n_in, (void)n_out, (void)user;
    if (weft_tensor_ndim(in[0]) != 2 || weft_tensor_dtype(in[0]) != WEFT_FLOAT64)
        return weft_kernel_error(ctx, WEFT_ETYPE, "Cumsum takes a float64 matrix");
    weft_tensor_t *c;
    weft_status_t st = weft_kernel_contiguous(ctx, in[0], &c);
    if (st != WEFT_OK) return st;
    int64_t rows = weft_tensor_dim(c, 0), cols = weft_tensor_dim(c, 1);
    const double *x = weft_tensor_data(c);
    double *y = weft_tensor_data(out[0]); /* allocated by weft, C-contiguous */
    for (int64_t i = 0; i < rows; i++) {
        double acc = 0;
        for (int64_t j = 0; j < cols; j++) y[i * cols + j] = acc += x[i * cols + j];
    }
    weft_kernel_contiguous_done(ctx, in[0], c);
    return WEFT_OK;
}

static const weft_op_class_t *make_class(weft_custom_op_desc_t d)
{
    const weft_op_class_t *cls;
    if (weft_custom_op_class(&d, &cls) != WEFT_OK) {
        fprintf(stderr, "custom op: %s\n", weft_custom_op_last_error());
        exit(1);
    }
    return cls;
}

static void print_row(const char *label, const weft_tensor_t *t)
{
    printf("%s", label);
    for (size_t i = 0; i < weft_tensor_size(t); i++) printf(" %.4f", weft_tensor_flat_get(t, i));
    printf("\n");
}

int main(void)
{
    weft_custom_op_desc_t sp = WEFT_CUSTOM_OP_DESC_INIT; /* Softplus's class */
    sp.name = "Softplus";
    sp.scalar = softplus;
    sp.grad = softplus_grad; /* optional */
    const weft_op_class_t *softplus_op = make_class(sp);

    weft_custom_op_desc_t cs = WEFT_CUSTOM_OP_DESC_INIT;
    cs.name = "Cumsum";
    cs.kernel = cumsum;
    const weft_op_class_t *cumsum_op = make_class(cs);

    /* y = softplus(x), dx = d sum(y) / dx, z = cumsum(transpose(m)) */
    weft_graph_t *g;
    CHECK(weft_graph_create(NULL, &g));
    const weft_type_t *vec3, *mat32;
    CHECK(weft_type_tensor(g, WEFT_FLOAT64, 1, (int64_t[]){3}, &vec3));
    CHECK(weft_type_tensor(g, WEFT_FLOAT64, 2, (int64_t[]){3, 2}, &mat32));
    weft_var_t *x = weft_var_create(g, vec3, "x"), *m = weft_var_create(g, mat32, "m");
    weft_var_t *y = weft_custom_call(g, softplus_op, 1, &x);
    weft_var_t *dx = weft_grad(g, weft_sum(g, y, 0, NULL, false), x);
    weft_var_t *mt = weft_transpose(g, m); /* a strided view: Cumsum reads it as is */
    weft_var_t *z = weft_custom_call(g, cumsum_op, 1, &mt);

    weft_function_t *f; /* the one check: a construction error is reported here */
    weft_var_t *ins[2] = {x, m}, *outs[3] = {y, dx, z};
    if (weft_function_compile(2, ins, 3, outs, 0, NULL, NULL, &f) != WEFT_OK) {
        fprintf(stderr, "compile: %s\n", weft_function_last_error(NULL));
        return 1;
    }
    weft_tensor_t *tx, *tm;
    CHECK(weft_tensor_empty(WEFT_FLOAT64, 1, (int64_t[]){3}, &tx));
    CHECK(weft_tensor_empty(WEFT_FLOAT64, 2, (int64_t[]){3, 2}, &tm));
    for (int i = 0; i < 3; i++) ((double *)weft_tensor_data(tx))[i] = i - 1; /* -1, 0, 1 */
    for (int i = 0; i < 6; i++) ((double *)weft_tensor_data(tm))[i] = i + 1; /* 1 .. 6 */
    weft_tensor_t *args[2] = {tx, tm}, *res[3] = {NULL, NULL, NULL};
    CHECK(weft_function_call(f, 2, args, 3, res));
    print_row("softplus(-1, 0, 1):", res[0]);
    print_row("gradient (sigmoid):", res[1]);
    print_row("cumsum(m^T):", res[2]);

    for (int i = 0; i < 3; i++) weft_tensor_release(res[i]);
    weft_tensor_release(tx);
    weft_tensor_release(tm);
    CHECK(weft_function_destroy(f));
    weft_graph_destroy(g);
    return 0;
}
