/* Reshape: the same elements under a new shape, a view when the input's
 * strides allow it (view_map {0: [0]}: the output may alias the input), else
 * a copy. Three forms: a constant target shape (props; one -1 inferred),
 * "like" with a second input whose run-time shape is the target (only its
 * shape is read; used by the gradient, which reshapes back to x), and
 * "shape input" (weft/symshape.h) with a second input, an integer vector of
 * static length, whose values are the target (one -1 inferred at run time). */
#include <stdio.h>
#include <string.h>

#include "graph/ctor_int.h"
#include "base/base_int.h"
#include "ops_int.h"
#include "shape/array_int.h"
#include "shape/symshape_int.h"
#include "weft/json_props.h"
#include "weft/kernel.h"
#include "weft/symshape.h"

enum { RS_CONST = 0, RS_LIKE = 1, RS_SYM = 2 };

typedef struct reshape_props {
    int32_t ndim; /* target ndim (form "like": 0, taken from input 1) */
    int32_t like; /* RS_LIKE: input 1's run-time shape; RS_SYM: input 1's values */
    int64_t shape[WEFT_MAX_NDIM];
} reshape_props_t;

static int rs_props_print(const void *props, char *buf, size_t cap);

/* Static element count of t, or -1 when some length is unknown (the count
 * fits: weft_type_tensor refuses types too big for int64). */
static int64_t static_count(const weft_type_t *t)
{
    int64_t shape[WEFT_MAX_NDIM], n;
    int nd = weft_type_ndim(t);
    for (int d = 0; d < nd; d++)
        if ((shape[d] = weft_type_dim(t, d)) == WEFT_DIM_UNKNOWN) return -1;
    return weft__shape_fits(nd, shape, 1, &n) ? n : -1;
}

static weft_status_t target_static_shape(weft_graph_t *g, const reshape_props_t *p,
                                         weft_dtype_t dt, int64_t x_count, int64_t *shape)
{
    int64_t known;
    int infer = -1;
    for (int d = 0; d < p->ndim; d++) {
        shape[d] = p->shape[d];
        if (p->shape[d] == -1) infer = d;
    }
    /* NumPy's size rule (a -1 skipped), checked before the product is used */
    if (!weft__shape_fits(p->ndim, p->shape, (int64_t)weft_dtype_size(dt), &known)) {
        char tb[WEFT_MAX_NDIM * 22 + 16];
        rs_props_print(p, tb, sizeof tb);
        return weft_graph_set_error(g, WEFT_EOVERFLOW,
                                    "Reshape: target %s is too big for %s (its byte size does "
                                    "not fit in int64)",
                                    tb, weft_dtype_name(dt));
    }
    if (x_count < 0) return WEFT_OK; /* a -1 stays unknown */
    if (infer >= 0) {
        if (known == 0 || x_count % known != 0)
            return weft_graph_set_error(g, WEFT_ESHAPE,
                                        "Reshape: cannot infer dimension %d: %lld elements in "
                                        "blocks of %lld",
                                        infer, (long long)x_count, (long long)known);
        shape[infer] = x_count / known;
    } else if (known != x_count) {
        return weft_graph_set_error(g, WEFT_ESHAPE,
                                    "Reshape: input 0 has %lld elements, the target shape %lld",
                                    (long long)x_count, (long long)known);
    }
    return WEFT_OK;
}

/* Form "shape input": input 1 is an integer vector of static length (the
 * output's ndim). Static lengths come from the entries the graph fixes
 * (weft__shape_entry_static: a constant, sizes stacked; all of them: checked
 * as a constant target, a -1 inferred) or from a Shape(y) input 1 (y's),
 * else are unknown. */
static weft_status_t sym_static_shape(weft_graph_t *g, weft_var_t *const *inputs,
                                      int64_t x_count, int *ndim, int64_t *shape)
{
    const weft_type_t *st = weft_var_type(inputs[1]);
    int64_t n = weft_type_ndim(st) == 1 ? weft_type_dim(st, 0) : -1;
    if (!weft__dtype_is_int(weft_type_dtype(st)) || weft_type_ndim(st) != 1)
        return weft_graph_set_error(g, WEFT_ETYPE, "Reshape: input 1 (the shape) is not a 1-d "
                                    "integer tensor");
    if (n < 0 || n > WEFT_MAX_NDIM)
        return weft_graph_set_error(g, WEFT_ESHAPE, "Reshape: input 1 (the shape) needs a static "
                                    "length in [0, %d], not %lld", WEFT_MAX_NDIM, (long long)n);
    *ndim = (int)n;
    reshape_props_t q;
    memset(&q, 0, sizeof q);
    q.ndim = (int32_t)n;
    int minus = 0, known = 0;
    for (int d = 0; d < *ndim; d++) {
        shape[d] = WEFT_DIM_UNKNOWN;
        if (!weft__shape_entry_static(inputs[1], d, &q.shape[d])) continue;
        known++;
        minus += q.shape[d] == -1;
        if (q.shape[d] < -1 || minus > 1)
            return weft_graph_set_error(g, WEFT_ESHAPE, "Reshape: shape entry %d is %lld%s", d,
                                        (long long)q.shape[d], minus > 1 ? " (a second -1)" : "");
        if (q.shape[d] >= 0) shape[d] = q.shape[d];
    }
    if (known == *ndim)
        return target_static_shape(g, &q, weft_type_dtype(weft_var_type(inputs[0])), x_count,
                                   shape);
    weft_apply_t *own = weft_var_owner(inputs[1]);
    int axis;
    if (own && weft_shape_op_info(weft_apply_op(own), &axis) && axis < 0) {
        const weft_type_t *yt = weft_var_type(weft_apply_input(own, 0));
        for (int d = 0; d < *ndim; d++) shape[d] = weft_type_dim(yt, d);
        int64_t b = static_count(yt);
        if (x_count >= 0 && b >= 0 && x_count != b)
            return weft_graph_set_error(g, WEFT_ESHAPE, "Reshape: input 0 has %lld elements, "
                                        "the shape of %lld", (long long)x_count, (long long)b);
    }
    return WEFT_OK;
}

static weft_status_t rs_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                  weft_var_t *const *inputs, size_t *n_out,
                                  const weft_type_t **out_types)
{
    const reshape_props_t *p = weft_op_props(op);
    size_t want = p->like ? 2 : 1;
    if (n_in != want)
        return weft_graph_set_error(g, WEFT_EINVAL, "Reshape takes %zu inputs, got %zu", want,
                                    n_in);
    for (size_t i = 0; i < n_in; i++)
        if (weft_type_kind(weft_var_type(inputs[i])) != WEFT_TYPE_TENSOR)
            return weft_graph_set_error(g, WEFT_ETYPE, "Reshape: input %zu is not a tensor", i);
    const weft_type_t *xt = weft_var_type(inputs[0]);
    int64_t shape[WEFT_MAX_NDIM];
    int ndim = p->ndim;
    weft_status_t st = WEFT_OK;
    if (p->like == RS_SYM) {
        st = sym_static_shape(g, inputs, static_count(xt), &ndim, shape);
    } else if (p->like) {
        const weft_type_t *lt = weft_var_type(inputs[1]);
        ndim = weft_type_ndim(lt);
        for (int d = 0; d < ndim; d++) shape[d] = weft_type_dim(lt, d);
        int64_t a = static_count(xt), b = static_count(lt);
        if (a >= 0 && b >= 0 && a != b)
            return weft_graph_set_error(g, WEFT_ESHAPE,
                                        "Reshape: input 0 has %lld elements, input 1's shape %lld",
                                        (long long)a, (long long)b);
    } else {
        st = target_static_shape(g, p, weft_type_dtype(xt), static_count(xt), shape);
    }
    if (st != WEFT_OK) return st;
    *n_out = 1;
    return weft_type_tensor(g, weft_type_dtype(xt), ndim, shape, &out_types[0]);
}

static weft_status_t rs_perform(const weft_apply_t *node, weft_tensor_t *const *inputs,
                                weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    const reshape_props_t *p = weft_op_props(weft_apply_op(node));
    int ndim = p->like ? weft_tensor_ndim(inputs[1]) : p->ndim;
    const int64_t *shape = p->like ? weft_tensor_shape(inputs[1]) : p->shape;
    int64_t values[WEFT_MAX_NDIM];
    if (p->like == RS_SYM) { /* the values of input 1, a vector of the output's ndim */
        ndim = weft_type_ndim(weft_var_type(weft_apply_output(node, 0)));
        if (weft_tensor_ndim(inputs[1]) != 1 || weft_tensor_dim(inputs[1], 0) != ndim)
            return weft_kernel_error(ctx, WEFT_ESHAPE, "Reshape: the shape input is not a "
                                     "vector of %d entries", ndim);
        for (int d = 0; d < ndim; d++) values[d] = weft__tensor_int_at(inputs[1], d);
        shape = values;
    }
    weft_tensor_t *x = inputs[0];
    int64_t res[WEFT_MAX_NDIM], strides[WEFT_MAX_NDIM];
    bool view = false;
    weft_status_t st = weft__tensor_reshape_plan(x, ndim, shape, res, strides, &view);
    if (st != WEFT_OK) return weft_kernel_error(ctx, st, "%s", weft_tensor_last_error());
    if (view) return weft_kernel_view_output(ctx, &outputs[0], x, ndim, res, strides, 0);
    /* the strides do not allow a view: a copy, from the buffer pool */
    st = weft_kernel_alloc_output(ctx, &outputs[0], weft_tensor_dtype(x), ndim, res);
    if (st == WEFT_OK) weft__tensor_copy_c_order(outputs[0], x);
    return st;
}

static size_t rs_view_map(const weft_op_t *op, weft_op_alias_t *out, size_t cap)
{
    (void)op;
    if (cap < 1) return 0;
    out[0].output = 0;
    out[0].input = 0;
    return 1;
}

static bool rs_connection(const weft_apply_t *node, size_t in, size_t out)
{
    (void)node;
    (void)out;
    return in == 0; /* input 1 contributes only its shape */
}

static int rs_props_print(const void *props, char *buf, size_t cap)
{
    const reshape_props_t *p = props;
    if (p->like == RS_SYM) return snprintf(buf, cap, "shape=input 1");
    if (p->like) return snprintf(buf, cap, "shape=like(input 1)");
    char tmp[WEFT_MAX_NDIM * 22 + 4];
    int n = 0;
    tmp[0] = '\0';
    for (int d = 0; d < p->ndim; d++)
        n += snprintf(tmp + n, sizeof tmp - (size_t)n, d ? ",%lld" : "%lld",
                      (long long)p->shape[d]);
    return snprintf(buf, cap, "shape=(%s)", tmp);
}

static weft_status_t rs_grad(weft_graph_t *g, const weft_apply_t *node,
                             weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    weft_var_t *x = weft_apply_input(node, 0);
    input_grads[0] = NULL;
    if (weft_apply_n_inputs(node) > 1) input_grads[1] = NULL;
    if (!output_grads[0] || !weft__dtype_is_float(weft_type_dtype(weft_var_type(x))))
        return WEFT_OK;
    return weft__got(g, input_grads[0] =
                            weft_reshape_like_at(g, output_grads[0], x, __FILE__, __LINE__));
}

/* JSON props: {"shape": [..]}, {"like": true} or {"shape_input": true}. */
static weft_status_t rs_to_json(const weft_op_t *op, weft_json_props_t *p)
{
    const reshape_props_t *r = weft_op_props(op);
    if (r->like == RS_SYM) return weft_json_props_put_bool(p, "shape_input", true);
    if (r->like) return weft_json_props_put_bool(p, "like", true);
    return weft_json_props_put_int_array(p, "shape", r->shape, (size_t)r->ndim);
}

static weft_status_t rs_from_json(weft_graph_t *g, const weft_op_class_t *cls,
                                  const weft_json_props_t *p, const weft_op_t **out)
{
    reshape_props_t r;
    memset(&r, 0, sizeof(r));
    bool like = false, sym = false;
    weft_status_t s = WEFT_OK;
    if (weft_json_props_has(p, "like")) s = weft_json_props_get_bool(p, "like", &like);
    if (s == WEFT_OK && weft_json_props_has(p, "shape_input"))
        s = weft_json_props_get_bool(p, "shape_input", &sym);
    if (s != WEFT_OK) return s;
    r.like = sym ? RS_SYM : like ? RS_LIKE : RS_CONST;
    like = like || sym;
    size_t n = 0;
    if (!like) s = weft_json_props_get_int_array(p, "shape", r.shape, WEFT_MAX_NDIM, &n);
    if (s != WEFT_OK) return s;
    int minus = 0;
    for (size_t i = 0; i < n; i++) {
        minus += r.shape[i] == -1;
        if (r.shape[i] < -1 || minus > 1)
            return weft_json_props_error(p, WEFT_ESHAPE, "shape[%zu]: bad length %lld", i,
                                         (long long)r.shape[i]);
    }
    r.ndim = (int32_t)n;
    return weft_op_create(g, cls, &r, out);
}

const weft_op_class_t weft__reshape_class = {
    .size = sizeof(weft_op_class_t),
    .name = "Reshape",
    .props_size = sizeof(reshape_props_t),
    .props_print = rs_props_print,
    .props_to_json = rs_to_json,
    .props_from_json = rs_from_json,
    .make_node = rs_make_node,
    .perform = rs_perform,
    .view_map = rs_view_map,
    .connection_pattern = rs_connection,
    .grad = rs_grad,
};

static weft_status_t reshape_build(weft_graph_t *g, const reshape_props_t *p, size_t n_in,
                                   weft_var_t *const *in, const char *file, int line,
                                   weft_var_t **out)
{
    const weft_op_t *op;
    weft_status_t st = weft_op_create(g, &weft__reshape_class, p, &op);
    if (st != WEFT_OK) return st;
    return weft__got(g, *out = weft_op_call_at(g, op, n_in, in, file, line));
}

static weft_status_t reshape_impl(weft_graph_t *g, weft_var_t *x, int ndim, const int64_t *shape,
                                  const char *file, int line, weft_var_t **out)
{
    if (out) *out = NULL;
    if (!g) return WEFT_EINVAL;
    if (!x || !out || (ndim > 0 && !shape))
        return weft_graph_set_error(g, WEFT_EINVAL, "Reshape: NULL argument");
    if (ndim < 0 || ndim > WEFT_MAX_NDIM)
        return weft_graph_set_error(g, WEFT_EINVAL, "Reshape: ndim %d outside [0, %d]", ndim,
                                    WEFT_MAX_NDIM);
    reshape_props_t p;
    memset(&p, 0, sizeof p);
    p.ndim = ndim;
    int infer = -1;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < -1)
            return weft_graph_set_error(g, WEFT_EINVAL, "Reshape: length %lld in dimension %d",
                                        (long long)shape[d], d);
        if (shape[d] == -1 && infer >= 0)
            return weft_graph_set_error(g, WEFT_EINVAL,
                                        "Reshape: two -1 lengths (dimensions %d and %d)", infer, d);
        if (shape[d] == -1) infer = d;
        p.shape[d] = shape[d];
    }
    return reshape_build(g, &p, 1, &x, file, line, out);
}

static weft_status_t reshape_like_impl(weft_graph_t *g, weft_var_t *x, weft_var_t *like,
                                       const char *file, int line, weft_var_t **out)
{
    if (out) *out = NULL;
    if (!g) return WEFT_EINVAL;
    if (!x || !like || !out)
        return weft_graph_set_error(g, WEFT_EINVAL, "Reshape: NULL argument");
    reshape_props_t p;
    memset(&p, 0, sizeof p);
    p.like = RS_LIKE;
    weft_var_t *in[2] = {x, like};
    return reshape_build(g, &p, 2, in, file, line, out);
}

static weft_status_t reshape_sym_impl(weft_graph_t *g, weft_var_t *x, weft_var_t *shape,
                                      const char *file, int line, weft_var_t **out)
{
    weft_var_t *in[2] = {x, shape};
    int nd;
    weft_dtype_t dt;
    for (size_t i = 0; i < 2; i++) { /* shape's own type: make_node */
        weft_status_t st = weft__array_check_inputs(g, "reshape_sym", 1, &in[i], 0, file, line,
                                                    &nd, &dt);
        if (st != WEFT_OK) return st;
    }
    reshape_props_t p;
    memset(&p, 0, sizeof p);
    p.like = RS_SYM;
    return reshape_build(g, &p, 2, in, file, line, out);
}

weft_var_t *weft_reshape_sym_at(weft_graph_t *g, weft_var_t *x, weft_var_t *shape,
                                const char *file, int line)
{
    weft_var_t *out = NULL;
    if (!g) return NULL;
    weft__ctor_begin(g);
    weft_status_t st = reshape_sym_impl(g, x, shape, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_reshape_sym", file, line);
}

bool weft_reshape_sym_op_info(const weft_op_t *op)
{
    return op && weft_op_class(op) == &weft__reshape_class &&
           ((const reshape_props_t *)weft_op_props(op))->like == RS_SYM;
}

weft_var_t *weft_reshape_at(weft_graph_t *g, weft_var_t *x, int ndim, const int64_t *shape,
                            const char *file, int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t st = reshape_impl(g, x, ndim, shape, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_reshape", file, line);
}

weft_var_t *weft_reshape_like_at(weft_graph_t *g, weft_var_t *x, weft_var_t *like, const char *file,
                                 int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t st = reshape_like_impl(g, x, like, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_reshape_like", file, line);
}
