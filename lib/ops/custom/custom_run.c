/* Running one-callback ops (weft/custom_op.h): the perform hook of every
 * custom class.
 *
 * Elementwise: the output is allocated with the broadcast shape and the
 * shared elementwise loop (weft__ew_loop_run: ranges fixed by the shape, so
 * the same bits at any worker count) calls row_adapter per row. The adapter
 * cuts a row into pieces of PIECE elements; for each piece it converts every
 * input that is strided or of another dtype into a stack buffer of the
 * compute dtype (float64 for a scalar function, the output dtype for a chunk
 * function), calls the user's function, and converts / scatters the result
 * into the output when the output row is strided. Contiguous inputs of the
 * compute dtype are passed without a copy.
 *
 * Kernel: each output is allocated with its shape (the shape function at
 * run time, else input 0's) and the user's kernel fills them. */
#include <string.h>

#include "custom_int.h"
#include "ops_int.h"
#include "tensor/tensor_int.h" /* weft__convert_fn, WEFT__ITER_MAX_OPS */

#define PIECE 256

typedef struct custom_rows {
    const weft__custom_class_t *c;
    int nop;                                 /* output + inputs */
    weft_dtype_t cdt;                        /* compute dtype */
    size_t csz;                              /* its size */
    weft_dtype_t dt[WEFT__ITER_MAX_OPS];     /* each operand's dtype */
    weft__row_fn load[WEFT__ITER_MAX_OPS];   /* input k -> compute dtype */
    weft__row_fn store;                      /* compute dtype -> output */
} custom_rows_t;

static void scalar_piece(const custom_rows_t *r, size_t m, void *out, const void *const *in)
{
    double x[WEFT_CUSTOM_MAX_ELEMWISE_INPUTS], *o = out;
    size_t n_in = (size_t)r->nop - 1;
    for (size_t i = 0; i < m; i++) {
        for (size_t k = 0; k < n_in; k++) x[k] = ((const double *)in[k])[i];
        o[i] = r->c->d.scalar(x, r->c->d.user);
    }
}

/* Operand k's pointer at element `off` of a row with stride s. */
static char *at(char *p, int64_t s, size_t off, weft_dtype_t dt)
{
    return p + (int64_t)off * s * (int64_t)weft__dtype_size(dt);
}

static void row_adapter(size_t n, char *const *p, const int64_t *s, void *arg)
{
    const custom_rows_t *r = arg;
    _Alignas(16) char buf[WEFT__ITER_MAX_OPS][PIECE * sizeof(double)];
    const void *in[WEFT_CUSTOM_MAX_ELEMWISE_INPUTS];
    for (size_t off = 0; off < n; off += PIECE) {
        size_t m = n - off < PIECE ? n - off : PIECE;
        for (int k = 1; k < r->nop; k++) {
            char *src = at(p[k], s[k], off, r->dt[k]);
            if (s[k] == 1 && r->dt[k] == r->cdt) {
                in[k - 1] = src;
                continue;
            }
            r->load[k](m, (char *[]){buf[k], src}, (const int64_t[]){1, s[k]}, NULL);
            in[k - 1] = buf[k];
        }
        char *dst = at(p[0], s[0], off, r->dt[0]);
        bool direct = s[0] == 1 && r->dt[0] == r->cdt;
        void *out = direct ? (void *)dst : (void *)buf[0];
        if (r->c->d.chunk) r->c->d.chunk(m, out, in, r->c->d.user);
        else scalar_piece(r, m, out, in);
        if (!direct) r->store(m, (char *[]){dst, buf[0]}, (const int64_t[]){s[0], 1}, NULL);
    }
}

static weft_status_t perform_elemwise(const weft__custom_class_t *c, const weft_apply_t *node,
                                      weft_tensor_t *const *in, weft_tensor_t **outputs,
                                      weft_kernel_ctx_t *ctx)
{
    size_t n_in = weft_apply_n_inputs(node);
    const weft_type_t *ot = weft_var_type(weft_apply_output(node, 0));
    int ndim = weft_type_ndim(ot);
    int64_t shape[WEFT_MAX_NDIM];
    weft_status_t st = weft__ew_check_input_tensors(node, in, n_in, ctx);
    if (st == WEFT_OK) st = weft__ew_runtime_shape(node, in, n_in, ndim, shape, ctx);
    if (st == WEFT_OK) st = weft_kernel_alloc_output(ctx, &outputs[0], weft_type_dtype(ot), ndim,
                                                    shape);
    if (st != WEFT_OK) return st;
    custom_rows_t r = {.c = c, .nop = (int)n_in + 1};
    r.dt[0] = weft_type_dtype(ot);
    r.cdt = c->d.chunk ? r.dt[0] : WEFT_FLOAT64;
    r.csz = weft__dtype_size(r.cdt);
    r.store = weft__convert_fn(r.dt[0], r.cdt);
    weft_tensor_t *ops[WEFT__ITER_MAX_OPS] = {outputs[0]};
    for (size_t k = 0; k < n_in; k++) {
        ops[k + 1] = in[k];
        r.dt[k + 1] = weft_tensor_dtype(in[k]);
        r.load[k + 1] = weft__convert_fn(r.cdt, r.dt[k + 1]);
    }
    st = weft__ew_loop_run(ctx, n_in + 1, ops, ndim, shape, row_adapter, &r,
                           WEFT__EW_SPLIT_COSTLY);
    return st == WEFT_OK ? st : weft_kernel_error(ctx, st, "%s: the loop failed", c->cls.name);
}

/* Output k's run-time shape. */
static weft_status_t output_shape(const weft__custom_class_t *c, size_t n_in,
                                  weft_tensor_t *const *in, size_t k, int *ndim, int64_t *shape,
                                  weft_kernel_ctx_t *ctx)
{
    *ndim = weft_tensor_ndim(in[0]);
    memcpy(shape, weft_tensor_shape(in[0]), (size_t)*ndim * sizeof *shape);
    if (!c->d.shape) return WEFT_OK;
    int nd[WEFT_OP_MAX_OUTPUTS];
    const int64_t *sp[WEFT_OP_MAX_OUTPUTS];
    for (size_t i = 0; i < n_in; i++) {
        nd[i] = weft_tensor_ndim(in[i]);
        sp[i] = weft_tensor_shape(in[i]);
    }
    weft_status_t st = c->d.shape(c->d.user, n_in, nd, sp, k, ndim, shape);
    if (st != WEFT_OK)
        return weft_kernel_error(ctx, st, "%s: the shape function failed for output %zu",
                                 c->cls.name, k);
    return WEFT_OK;
}

static weft_status_t perform_kernel(const weft__custom_class_t *c, const weft_apply_t *node,
                                    weft_tensor_t *const *in, weft_tensor_t **outputs,
                                    weft_kernel_ctx_t *ctx)
{
    size_t n_in = weft_apply_n_inputs(node), n_out = weft_apply_n_outputs(node);
    for (size_t k = 0; k < n_out; k++) {
        int ndim;
        int64_t shape[WEFT_MAX_NDIM];
        weft_dtype_t dt = weft_type_dtype(weft_var_type(weft_apply_output(node, k)));
        weft_status_t st = output_shape(c, n_in, in, k, &ndim, shape, ctx);
        if (st == WEFT_OK) st = weft_kernel_alloc_output(ctx, &outputs[k], dt, ndim, shape);
        if (st != WEFT_OK) return st;
    }
    weft_status_t st = c->d.kernel(ctx, n_in, in, n_out, outputs, c->d.user);
    if (st == WEFT_OK || weft_kernel_status(ctx) != WEFT_OK) return st;
    return weft_kernel_error(ctx, st, "%s: the kernel returned %s", c->cls.name,
                             weft_status_name(st));
}

weft_status_t weft__custom_perform(const weft_apply_t *node, weft_tensor_t *const *inputs,
                                   weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    const weft__custom_class_t *c = weft__custom_of(node);
    return weft__custom_is_elemwise(c) ? perform_elemwise(c, node, inputs, outputs, ctx)
                                       : perform_kernel(c, node, inputs, outputs, ctx);
}
