/* TriMask{lower, diag_scale}(x): the lower (or upper) triangle of a matrix
 * (of each matrix of a stack (..., r, c)) with its diagonal multiplied by
 * diag_scale and zeros elsewhere. Internal: the building block of the
 * Cholesky, Trsm and SolveTriangular gradients (tril, and the "tril with
 * halved diagonal" Phi of the Cholesky gradient). It is linear and
 * self-adjoint, so its gradient is itself applied to the output gradient. */
#include <stdio.h>
#include <string.h>

#include "lapack_int.h"
#include "props_fields_int.h"

typedef struct tri_props {
    double diag_scale;
    int64_t lower;
} tri_props_t;

static weft_status_t tri_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                   weft_var_t *const *in, size_t *n_out,
                                   const weft_type_t **out_types)
{
    static const int ranks[1] = {-1};
    weft_dtype_t dt;
    (void)op;
    weft_status_t st = weft__linalg_check(g, "TriMask", n_in, in, 1, ranks, &dt);
    if (st != WEFT_OK) {
        return st;
    }
    if (weft_type_ndim(weft_var_type(in[0])) < 2) {
        return weft_graph_set_error(g, WEFT_ETYPE, "TriMask: input 0 has %d dims (need 2 or "
                                    "more)", weft_type_ndim(weft_var_type(in[0])));
    }
    *n_out = 1;
    out_types[0] = weft_var_type(in[0]);
    return WEFT_OK;
}

static double tri_factor(const tri_props_t *p, int64_t i, int64_t j)
{
    if (i == j) {
        return p->diag_scale;
    }
    return (p->lower ? j < i : j > i) ? 1.0 : 0.0;
}

/* One matrix: xd (strides s0, s1) masked into the contiguous o. */
static void tri_matrix(const tri_props_t *p, weft_dtype_t dt, const void *xd, int64_t r,
                       int64_t c, int64_t s0, int64_t s1, void *o)
{
    for (int64_t i = 0; i < r; i++) {
        for (int64_t j = 0; j < c; j++) {
            double f = tri_factor(p, i, j); /* f == 0: a true zero, even for Inf/NaN */
            if (dt == WEFT_FLOAT64) {
                double v = ((const double *)xd)[i * s0 + j * s1];
                ((double *)o)[i * c + j] = f == 0.0 ? 0.0 : f * v;
            } else {
                float v = ((const float *)xd)[i * s0 + j * s1];
                ((float *)o)[i * c + j] = f == 0.0 ? 0.0f : (float)(f * v);
            }
        }
    }
}

static weft_status_t tri_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                 weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    const tri_props_t *p = weft_op_props(weft_apply_op(node));
    const weft_tensor_t *x = in[0];
    weft_dtype_t dt = weft_tensor_dtype(x);
    int nd = weft_tensor_ndim(x);
    weft_status_t st = weft_kernel_alloc_output(ctx, &outputs[0], dt, nd, weft_tensor_shape(x));
    if (st != WEFT_OK) {
        return st;
    }
    int64_t r = weft_tensor_dim(x, nd - 2), c = weft_tensor_dim(x, nd - 1);
    int64_t s0 = weft_tensor_stride(x, nd - 2), s1 = weft_tensor_stride(x, nd - 1);
    size_t es = weft_dtype_size(dt);
    char *o = weft_tensor_data(outputs[0]);
    const char *xd = weft_tensor_data(x);
    for (int64_t b = 0, count = weft__batch_count(x, 2); b < count; b++) {
        tri_matrix(p, dt, xd + weft__batch_offset(x, 2, b) * (int64_t)es, r, c, s0, s1,
                   o + b * r * c * (int64_t)es);
    }
    return WEFT_OK;
}

static weft_status_t tri_grad(weft_graph_t *g, const weft_apply_t *node,
                              weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    const tri_props_t *p = weft_op_props(weft_apply_op(node));
    if (!output_grads[0]) {
        return WEFT_OK;
    }
    return weft__trimask(g, output_grads[0], p->lower != 0, p->diag_scale, &input_grads[0]);
}

static int tri_props_print(const void *props, char *buf, size_t cap)
{
    const tri_props_t *p = props;
    return snprintf(buf, cap, "lower=%d, diag=%g", p->lower ? 1 : 0, p->diag_scale);
}

/* JSON props: {"diag_scale": 0.5, "lower": true}. */
static const weft__props_fields_t tri_fields = {
    sizeof(tri_props_t),
    {WEFT__PROPS_FIELD("diag_scale", WEFT__FIELD_F64, tri_props_t, diag_scale),
     WEFT__PROPS_FIELD("lower", WEFT__FIELD_I64_BOOL, tri_props_t, lower)},
};
WEFT__PROPS_FIELDS_HOOKS(tri, tri_fields)

const weft_op_class_t weft__trimask_class = {
    .size = sizeof(weft_op_class_t),
    .name = "TriMask",
    .props_size = sizeof(tri_props_t),
    .props_print = tri_props_print,
    .props_to_json = tri_to_json,
    .props_from_json = tri_from_json,
    .make_node = tri_make_node,
    .perform = tri_perform,
    .grad = tri_grad,
};

weft_status_t weft__trimask(weft_graph_t *g, weft_var_t *x, bool lower, double diag_scale,
                            weft_var_t **out)
{
    tri_props_t p;
    memset(&p, 0, sizeof p);
    p.diag_scale = diag_scale;
    p.lower = lower ? 1 : 0;
    return weft__linalg_call(g, &weft__trimask_class, &p, 1, &x, __FILE__, __LINE__, out);
}
