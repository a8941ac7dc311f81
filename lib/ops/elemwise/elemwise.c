/* Elementwise ops: the op classes (one per kind) and their JSON props codec,
 * type and static-shape inference, the perform hook (run-time broadcasting,
 * dtype conversion, in-place output) and the public constructors. Kernels:
 * elemwise_kernels.c; gradients: elemwise_grad.c. */
#include <stdio.h>
#include <string.h>

#include "graph/ctor_int.h"
#include "ops_int.h"
#include "split_int.h"
#include "tensor/kernel_int.h" /* ctx->out_typed */
#include "weft/json_props.h"
#include "weft/kernel.h"

static const char *const kind_names[] = {
#define KIND_NAME_(name, cls, arity) cls,
    WEFT_ELEMWISE_TABLE(KIND_NAME_)
#undef KIND_NAME_
};
static const size_t kind_arity[] = {
#define KIND_ARITY_(name, cls, arity) arity,
    WEFT_ELEMWISE_TABLE(KIND_ARITY_)
#undef KIND_ARITY_
};

size_t weft_elemwise_arity(weft_elemwise_kind_t kind)
{
    return (unsigned)kind < WEFT_ELEMWISE_KIND_COUNT ? kind_arity[kind] : 0;
}

const char *weft_elemwise_name(weft_elemwise_kind_t kind)
{
    return (unsigned)kind < WEFT_ELEMWISE_KIND_COUNT ? kind_names[kind] : NULL;
}

static weft_elemwise_kind_t op_kind(const weft_op_t *op)
{
    return (weft_elemwise_kind_t)(weft_op_class(op) - weft__elemwise_classes);
}

static const weft__elemwise_props_t *op_props(const weft_op_t *op)
{
    return weft_op_props(op);
}

static bool kind_is_comparison(weft_elemwise_kind_t k)
{
    return k >= WEFT_ELEMWISE_LT && k <= WEFT_ELEMWISE_NE;
}

static bool kind_is_float_only(weft_elemwise_kind_t k)
{
    switch (k) {
    case WEFT_ELEMWISE_EXP: case WEFT_ELEMWISE_LOG: case WEFT_ELEMWISE_LOG1P:
    case WEFT_ELEMWISE_SQRT: case WEFT_ELEMWISE_TANH: case WEFT_ELEMWISE_SIGMOID:
    case WEFT_ELEMWISE_SIN: case WEFT_ELEMWISE_COS: case WEFT_ELEMWISE_DIV:
    case WEFT_ELEMWISE_POW:
        return true;
    default:
        return weft__elemwise_is_math(k);
    }
}

/* ---- type inference --------------------------------------------------------------- */

/* The output dtype of kind k on inputs promoted to dt (NumPy's ufunc loops,
 * docs/dtypes.md §3): comparisons bool; true division of integers and bool
 * float64; the other float-only kinds weft_dtype_float_of(dt); Pow and Sqr
 * of bool int8; else dt. Every kind computes in its output dtype but the
 * comparisons, which compute in dt. */
static weft_dtype_t kind_out_dtype(weft_elemwise_kind_t k, weft_dtype_t dt)
{
    bool number = dt == WEFT_BOOL || weft_dtype_kind(dt) == WEFT_KIND_INT ||
                  weft_dtype_kind(dt) == WEFT_KIND_UINT;
    if (kind_is_comparison(k)) return WEFT_BOOL;
    if (k == WEFT_ELEMWISE_DIV && number) return WEFT_FLOAT64;
    if (k == WEFT_ELEMWISE_POW || k == WEFT_ELEMWISE_SQR) return dt == WEFT_BOOL ? WEFT_INT8 : dt;
    return kind_is_float_only(k) ? weft_dtype_float_of(dt) : dt;
}

/* Why kind k has no kernel for dt: NumPy's refusals of bool arithmetic
 * named, else "<dtype> is not supported by <kind>". */
static weft_status_t no_kernel_error(weft_graph_t *g, weft_elemwise_kind_t k, weft_dtype_t dt)
{
    if (dt == WEFT_BOOL && k == WEFT_ELEMWISE_SUB)
        return weft_graph_set_error(g, WEFT_ETYPE, "Sub: bool - bool is not supported (as in "
                                    "NumPy): use a logical xor, or Cast the inputs to a number");
    if (dt == WEFT_BOOL && k == WEFT_ELEMWISE_NEG)
        return weft_graph_set_error(g, WEFT_ETYPE, "Neg: negating a bool is not supported (as "
                                    "in NumPy): use a logical not, or Cast to a number");
    return weft_graph_set_error(g, WEFT_ETYPE, "%s is not supported by %s", weft_dtype_name(dt),
                                kind_names[k]);
}

/* The output dtype of a node of op on inputs: their promotion (NumPy's
 * result_type, weft_dtype_promote; the Switch condition, input 0, does not
 * take part) through kind_out_dtype; refused when no kernel computes it. */
static weft_status_t infer_dtype(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                 weft_var_t *const *inputs, weft_dtype_t *out)
{
    weft_elemwise_kind_t k = op_kind(op);
    size_t first = k == WEFT_ELEMWISE_SWITCH ? 1 : 0;
    weft_dtype_t c0 = weft_type_dtype(weft_var_type(inputs[0]));
    if (k == WEFT_ELEMWISE_SWITCH && c0 != WEFT_BOOL)
        return weft_graph_set_error(g, WEFT_ETYPE, "Switch: condition (input 0) is %s, not bool",
                                    weft_dtype_name(c0));
    if (k == WEFT_ELEMWISE_CAST) {
        *out = (weft_dtype_t)(op_props(op)->cast_dtype - 1);
        if (weft__convert_fn(*out, c0)) return WEFT_OK;
        return weft_graph_set_error(g, WEFT_ETYPE, "Cast: %s to %s is not supported by Cast",
                                    weft_dtype_name(c0), weft_dtype_name(*out));
    }
    weft_dtype_t dt = weft_type_dtype(weft_var_type(inputs[first]));
    for (size_t i = first + 1; i < n_in; i++)
        dt = weft_dtype_promote(dt, weft_type_dtype(weft_var_type(inputs[i])));
    weft_status_t st;
    if (k == WEFT_ELEMWISE_POLYGAMMA) { /* x's float dtype, not the promotion (polygamma.c) */
        if ((st = weft__polygamma_dtype(g, inputs, out)) != WEFT_OK) return st;
    } else if (!weft__ew_int_dtype(g, k, dt, out, &st)) {
        *out = kind_out_dtype(k, dt);
    } else if (st != WEFT_OK) {
        return st;
    }
    bool bool_out = kind_is_comparison(k) || weft__ew_int_is_predicate(k);
    weft_dtype_t compute = bool_out ? dt : *out;
    return weft__elemwise_kernel(k, compute) ? WEFT_OK : no_kernel_error(g, k, compute);
}

/* Per dimension: known lengths other than 1 must agree; 1 broadcasts; the
 * result is unknown when only 1s and unknowns meet. */
weft_status_t weft__ew_infer_shape(weft_graph_t *g, const char *name, size_t n_in,
                                   weft_var_t *const *inputs, int ndim, int64_t *shape)
{
    for (int d = 0; d < ndim; d++) {
        int64_t len = 1;
        size_t who = 0;
        bool unknown = false;
        for (size_t i = 0; i < n_in; i++) {
            int64_t l = weft_type_dim(weft_var_type(inputs[i]), d);
            if (l == WEFT_DIM_UNKNOWN) {
                unknown = true;
            } else if (l != 1 && len != 1 && l != len) {
                return weft_graph_set_error(g, WEFT_ESHAPE,
                                            "%s: input %zu has length %lld and input %zu length "
                                            "%lld in dimension %d",
                                            name, who, (long long)len, i, (long long)l, d);
            } else if (l != 1) {
                len = l;
                who = i;
            }
        }
        shape[d] = (len == 1 && unknown) ? WEFT_DIM_UNKNOWN : len;
    }
    return WEFT_OK;
}

weft_status_t weft__ew_check_inputs(weft_graph_t *g, const char *name, size_t n_in,
                                    weft_var_t *const *inputs, int *ndim)
{
    int nd0 = weft_type_ndim(weft_var_type(inputs[0]));
    for (size_t i = 0; i < n_in; i++) {
        const weft_type_t *t = weft_var_type(inputs[i]);
        if (weft_type_kind(t) != WEFT_TYPE_TENSOR)
            return weft_graph_set_error(g, WEFT_ETYPE, "%s: input %zu is not a tensor", name, i);
        if (weft_type_ndim(t) != nd0)
            return weft_graph_set_error(g, WEFT_ETYPE,
                                        "%s: input %zu has %d dimensions, input 0 has %d "
                                        "(the constructors left-pad lower-rank inputs)",
                                        name, i, weft_type_ndim(t), nd0);
    }
    *ndim = nd0;
    return WEFT_OK;
}

static weft_status_t elemwise_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                        weft_var_t *const *inputs, size_t *n_out,
                                        const weft_type_t **out_types)
{
    weft_elemwise_kind_t k = op_kind(op);
    const char *name = kind_names[k];
    if (n_in != kind_arity[k])
        return weft_graph_set_error(g, WEFT_EINVAL, "%s takes %zu inputs, got %zu", name,
                                    kind_arity[k], n_in);
    int ndim = 0;
    weft_dtype_t odt = WEFT_BOOL;
    int64_t shape[WEFT_MAX_NDIM];
    weft_status_t st = weft__ew_check_inputs(g, name, n_in, inputs, &ndim);
    if (st == WEFT_OK)
        st = weft__ew_complex_involved(k, n_in, inputs)
                 ? weft__ew_complex_infer(g, k, n_in, inputs, &odt) /* elemwise_complex.c */
                 : infer_dtype(g, op, n_in, inputs, &odt);
    if (st == WEFT_OK) st = weft__ew_infer_shape(g, name, n_in, inputs, ndim, shape);
    if (st == WEFT_OK) st = weft_type_tensor(g, odt, ndim, shape, &out_types[0]);
    if (st != WEFT_OK) return st;
    *n_out = 1;
    int ip = op_props(op)->inplace;
    if (ip >= 0 && !weft_type_equal(weft_var_type(inputs[ip]), out_types[0])) {
        char a[128], b[128];
        weft_type_print(weft_var_type(inputs[ip]), a, sizeof a);
        weft_type_print(out_types[0], b, sizeof b);
        return weft_graph_set_error(g, WEFT_ETYPE,
                                    "%s{inplace=%d}: input %d type %s differs from the output "
                                    "type %s, so it cannot hold the result",
                                    name, ip, ip, a, b);
    }
    return WEFT_OK;
}

/* ---- perform ---------------------------------------------------------------------- */

/* Run-time output shape; a dimension broadcasts only where the input's static
 * length is 1. */
weft_status_t weft__ew_runtime_shape(const weft_apply_t *node, weft_tensor_t *const *in,
                                     size_t n_in, int ndim, int64_t *shape,
                                     weft_kernel_ctx_t *ctx)
{
    for (int d = 0; d < ndim; d++) {
        shape[d] = 1;
        for (size_t i = 0; i < n_in; i++)
            if (shape[d] == 1) shape[d] = weft_tensor_dim(in[i], d); /* first non-1 wins */
        for (size_t i = 0; i < n_in; i++) {
            int64_t l = weft_tensor_dim(in[i], d);
            int64_t stat = weft_type_dim(weft_var_type(weft_apply_input(node, i)), d);
            if (l == shape[d] || (l == 1 && stat == 1)) continue;
            return weft_kernel_error(ctx, WEFT_ESHAPE,
                                     "input %zu has length %lld in dimension %d where the result "
                                     "has %lld%s",
                                     i, (long long)l, d, (long long)shape[d],
                                     l == 1 ? " (run-time broadcasting needs static length 1)"
                                            : "");
        }
    }
    return WEFT_OK;
}

weft_status_t weft__ew_check_input_tensors(const weft_apply_t *node, weft_tensor_t *const *in,
                                           size_t n_in, weft_kernel_ctx_t *ctx)
{
    for (size_t i = 0; i < n_in; i++) {
        const weft_type_t *t = weft_var_type(weft_apply_input(node, i));
        if (!in[i] || weft_tensor_ndim(in[i]) != weft_type_ndim(t) ||
            weft_tensor_dtype(in[i]) != weft_type_dtype(t))
            return weft_kernel_error(ctx, WEFT_ETYPE, "input %zu does not match its type", i);
    }
    return WEFT_OK;
}

typedef struct ew_run {
    weft_tensor_t *ops[WEFT__ITER_MAX_OPS]; /* output, then inputs (converted) */
    weft_tensor_t *tmp[WEFT__ITER_MAX_OPS]; /* converted copies to release */
} ew_run_t;

/* Inputs not in the compute dtype are converted into scratch tensors (from
 * the runtime's pool: no allocation in steady state). */
static weft_status_t convert_inputs(weft_elemwise_kind_t k, weft_dtype_t compute,
                                    weft_tensor_t *const *in, size_t n_in, ew_run_t *r,
                                    weft_kernel_ctx_t *ctx)
{
    for (size_t i = 0; i < n_in; i++) {
        r->ops[i + 1] = in[i];
        bool cond = k == WEFT_ELEMWISE_SWITCH && i == 0;
        if (k == WEFT_ELEMWISE_CAST || cond || weft_tensor_dtype(in[i]) == compute) continue;
        weft_status_t st = weft_kernel_scratch(ctx, compute, weft_tensor_ndim(in[i]),
                                               weft_tensor_shape(in[i]), &r->tmp[i + 1]);
        if (st != WEFT_OK) return st;
        weft_tensor_copy(r->tmp[i + 1], in[i]); /* same shape: converts, cannot fail */
        r->ops[i + 1] = r->tmp[i + 1];
    }
    return WEFT_OK;
}

/* A resolved elementwise loop: operand pointers, element strides and sizes
 * over the output shape, and the row kernel. */
typedef struct ew_loop {
    char *base[WEFT__ITER_MAX_OPS];
    int64_t st[WEFT__ITER_MAX_OPS][WEFT_MAX_NDIM];
    size_t isz[WEFT__ITER_MAX_OPS];
    int nop, ndim, axis; /* axis: the one ranges split (outer axes have length 1) */
    int64_t shape[WEFT_MAX_NDIM];
    weft__row_fn fn;
    void *fn_arg;
} ew_loop_t;

/* Indices [begin, end) of the split axis. */
static weft_status_t ew_loop_range(void *arg, size_t begin, size_t end)
{
    const ew_loop_t *l = arg;
    char *base[WEFT__ITER_MAX_OPS];
    const int64_t *sp[WEFT__ITER_MAX_OPS];
    int64_t shape[WEFT_MAX_NDIM];
    memcpy(shape, l->shape, (size_t)l->ndim * sizeof *shape);
    shape[l->axis] = (int64_t)(end - begin);
    for (int o = 0; o < l->nop; o++) {
        int64_t skip = begin ? (int64_t)begin * l->st[o][l->axis] : 0; /* 0-d: no strides */
        base[o] = l->base[o] + skip * (int64_t)l->isz[o];
        sp[o] = l->st[o];
    }
    weft__iter_rows(l->ndim, shape, l->nop, base, sp, l->isz, l->fn, l->fn_arg);
    return WEFT_OK;
}

/* The split's ranges (split_int.h) depend on the shape alone, never on the
 * worker count (execution.md §5); every element is computed by the same row
 * kernel in any range, so splitting never changes a result anyway. */
weft_status_t weft__ew_loop_run(weft_kernel_ctx_t *ctx, size_t nop, weft_tensor_t *const *ops,
                                int ndim, const int64_t *shape, weft__row_fn fn, void *fn_arg,
                                int64_t min_split)
{
    ew_loop_t l; /* not zero-initialized: only the first nop x ndim strides are used */
    l.nop = (int)nop;
    l.ndim = ndim;
    l.axis = 0;
    l.fn = fn;
    l.fn_arg = fn_arg;
    int64_t count = 1;
    for (int d = 0; d < ndim; d++) {
        l.shape[d] = shape[d];
        count *= shape[d];
        if (shape[l.axis] == 1 && shape[d] != 1) l.axis = d;
    }
    for (size_t o = 0; o < nop; o++) {
        weft_tensor_t *t = ops[o];
        l.base[o] = weft_tensor_data(t);
        l.isz[o] = weft_dtype_size(weft_tensor_dtype(t));
        for (int d = 0; d < ndim; d++) /* broadcast axes read one element: stride 0 */
            l.st[o][d] = weft_tensor_dim(t, d) == shape[d] ? weft_tensor_stride(t, d) : 0;
    }
    if (ndim == 0 || weft_kernel_threads(ctx) <= 1 || count < min_split || l.shape[l.axis] < 2)
        return ew_loop_range(&l, 0, ndim ? (size_t)l.shape[l.axis] : 1);
    size_t len = (size_t)l.shape[l.axis];
    return weft_kernel_parallel_for(ctx, len, weft__split_grain(len, (size_t)count, min_split),
                                    ew_loop_range, &l);
}

static bool kind_is_costly(weft_elemwise_kind_t k)
{
    return (kind_is_float_only(k) && k != WEFT_ELEMWISE_DIV && k != WEFT_ELEMWISE_SQRT) ||
           weft__ew_int_is_costly(k);
}

int64_t weft__ew_split_min(weft_elemwise_kind_t kind)
{
    return kind_is_costly(kind) ? WEFT__EW_SPLIT_COSTLY : WEFT__EW_SPLIT_CHEAP;
}

static weft_status_t prepare_output(const weft_op_t *op, weft_tensor_t *const *in,
                                    weft_tensor_t **cell, weft_dtype_t odt, int ndim,
                                    const int64_t *shape, weft_kernel_ctx_t *ctx)
{
    int ip = weft__ew_inplace_input(op_props(op)->inplace, in);
    if (ip < 0) return weft_kernel_alloc_output(ctx, cell, odt, ndim, shape);
    for (int d = 0; d < ndim; d++)
        if (weft_tensor_dim(in[ip], d) != shape[d])
            return weft_kernel_error(ctx, WEFT_ESHAPE,
                                     "in-place input %d has length %lld in dimension %d, the "
                                     "result %lld",
                                     ip, (long long)weft_tensor_dim(in[ip], d), d,
                                     (long long)shape[d]);
    weft_kernel_set_output(ctx, cell, weft_tensor_retain(in[ip]));
    return WEFT_OK;
}

/* A non-NULL row-kernel arg tells the kernels the output is fresh (not an
 * input written in place): large rows may then be written with streaming
 * stores (elemwise_kernels.c). */
static const int fresh_marker = 1;

/* What the node's op decides, before any geometry: the plan's spec fields. */
static void plan_spec(const weft_op_t *op, weft_dtype_t odt, weft_dtype_t compute,
                      weft_tensor_t *const *in, weft__ew_plan_t *p)
{
    weft_elemwise_kind_t k = op_kind(op);
    p->kind = (int)k;
    p->n_in = (uint8_t)kind_arity[k];
    p->inplace = (int8_t)weft__ew_inplace_input(op_props(op)->inplace, in);
    p->odt = odt;
    p->compute = compute;
    p->fn = k == WEFT_ELEMWISE_CAST ? weft__convert_fn(compute, weft_tensor_dtype(in[0]))
                                    : weft__elemwise_kernel(k, compute);
    p->fn_arg = p->inplace < 0 ? (void *)&fresh_marker : NULL;
    p->min_split = weft__ew_split_min(k);
}

/* The run of a node with plan p: inputs converted when the plan says so,
 * then the plan's output and loop. */
static weft_status_t planned_run(const weft__ew_plan_t *p, weft_tensor_t *const *in,
                                 weft_tensor_t **out, weft_kernel_ctx_t *ctx)
{
    bool pow = p->kind == WEFT_ELEMWISE_POW;
    if (!p->convert && pow && weft__pow_check_exponent(in[1], ctx) != WEFT_OK)
        return weft_kernel_status(ctx);
    if (!p->convert) return weft__ew_plan_run(ctx, p, in, in, out);
    ew_run_t r = {{NULL}, {NULL}};
    weft_status_t st =
        convert_inputs((weft_elemwise_kind_t)p->kind, p->compute, in, p->n_in, &r, ctx);
    if (st == WEFT_OK && pow) st = weft__pow_check_exponent(r.ops[2], ctx);
    if (st == WEFT_OK) st = weft__ew_plan_run(ctx, p, in, r.ops + 1, out);
    for (size_t i = 0; i < WEFT__ITER_MAX_OPS; i++) weft_kernel_scratch_done(ctx, r.tmp[i]);
    return st;
}

/* The first run of a node with its input geometry: every check, the shape,
 * then the plan, cached for the next runs, and the loop. */
static weft_status_t plan_and_run(const weft_apply_t *node, weft_tensor_t *const *inputs,
                                  weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    const weft_op_t *op = weft_apply_op(node);
    weft_elemwise_kind_t k = op_kind(op);
    size_t n_in = kind_arity[k];
    const weft_type_t *ot = weft_var_type(weft_apply_output(node, 0));
    int ndim = weft_type_ndim(ot);
    int64_t shape[WEFT_MAX_NDIM];
    weft_status_t st = weft__ew_check_input_tensors(node, inputs, n_in, ctx);
    if (st == WEFT_OK) st = weft__ew_runtime_shape(node, inputs, n_in, ndim, shape, ctx);
    if (st != WEFT_OK) return st;
    weft_dtype_t odt = weft_type_dtype(ot), compute = odt;
    if (kind_is_comparison(k) || weft__ew_int_is_predicate(k)) { /* any dtype in, bool out */
        compute = weft_tensor_dtype(inputs[0]);
        for (size_t i = 1; i < n_in; i++)
            compute = weft_dtype_promote(compute, weft_tensor_dtype(inputs[i]));
    }
    weft_dtype_t cx = weft__ew_complex_compute(k, inputs, n_in, odt);
    if (cx != WEFT_DTYPE_COUNT) compute = cx; /* elemwise_complex.c */
    ew_run_t r = {{NULL}, {NULL}};
    st = convert_inputs(k, compute, inputs, n_in, &r, ctx);
    if (st == WEFT_OK && k == WEFT_ELEMWISE_POW) st = weft__pow_check_exponent(r.ops[2], ctx);
    if (st == WEFT_OK) st = prepare_output(op, inputs, &outputs[0], odt, ndim, shape, ctx);
    if (st == WEFT_OK) {
        weft__ew_plan_buf_t buf;
        weft__ew_plan_t spec = {.ndim = (uint8_t)ndim, .node = node};
        plan_spec(op, odt, compute, inputs, &spec);
        for (size_t i = 0; i < n_in; i++) spec.convert |= r.tmp[i + 1] != NULL;
        r.ops[0] = outputs[0];
        const weft__ew_plan_t *p = weft__ew_plan_build(ctx, &spec, ot, shape, inputs, r.ops, &buf);
        st = weft__ew_plan_loop(ctx, p, r.ops[0], r.ops + 1);
        if (st != WEFT_OK) st = weft_kernel_error(ctx, st, "cannot split the loop over workers");
    }
    for (size_t i = 0; i < WEFT__ITER_MAX_OPS; i++) weft_kernel_scratch_done(ctx, r.tmp[i]);
    return st;
}

/* A run whose inputs have the dtypes, shapes and strides of the cached plan
 * skips every decision (docs/execution.md §3.7). */
static weft_status_t elemwise_perform(const weft_apply_t *node, weft_tensor_t *const *inputs,
                                      weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    const weft__ew_plan_t *p = weft__ew_plan_cached(ctx, node, inputs);
    if (p) return planned_run(p, inputs, outputs, ctx);
    return plan_and_run(node, inputs, outputs, ctx);
}

/* ---- class hooks ----------------------------------------------------------------- */

static size_t elemwise_destroy_map(const weft_op_t *op, weft_op_alias_t *out, size_t cap)
{
    int ip = op_props(op)->inplace;
    if (ip < 0 || cap < 1) return 0;
    out[0].output = 0;
    out[0].input = (uint32_t)ip;
    return 1;
}

static int elemwise_props_print(const void *props, char *buf, size_t cap)
{
    const weft__elemwise_props_t *p = props;
    const char *dt = p->cast_dtype ? weft_dtype_name((weft_dtype_t)(p->cast_dtype - 1)) : NULL;
    if (dt && p->inplace >= 0)
        return snprintf(buf, cap, "dtype=%s, inplace=%d", dt, (int)p->inplace);
    if (dt) return snprintf(buf, cap, "dtype=%s", dt);
    if (p->inplace >= 0) return snprintf(buf, cap, "inplace=%d", (int)p->inplace);
    if (cap > 0) buf[0] = '\0';
    return 0;
}

static weft_status_t elemwise_inplace_variant(weft_graph_t *g, const weft_op_t *op, size_t input,
                                              const weft_op_t **out)
{
    weft_elemwise_kind_t k = op_kind(op);
    if (input >= kind_arity[k] || (k == WEFT_ELEMWISE_SWITCH && input == 0))
        return weft_graph_set_error(g, WEFT_ENOTIMPL, "%s has no in-place variant for input %zu",
                                    kind_names[k], input);
    int32_t cd = op_props(op)->cast_dtype;
    return weft_elemwise_op(g, k, (int)input, (weft_dtype_t)(cd ? cd - 1 : 0), out);
}

/* ---- JSON props: {"inplace": i} (+ "dtype" for Cast) ------------------------------ */

/* The kind of an elementwise class, or -1 (compared by address: no pointer
 * arithmetic across unrelated objects). */
static int class_kind(const weft_op_class_t *cls)
{
    for (int k = 0; k < WEFT_ELEMWISE_KIND_COUNT; k++)
        if (cls == &weft__elemwise_classes[k]) return k;
    return -1;
}

static weft_status_t elemwise_to_json(const weft_op_t *op, weft_json_props_t *p)
{
    const weft__elemwise_props_t *e = op_props(op);
    weft_status_t s = weft_json_props_put_int(p, "inplace", e->inplace);
    if (s == WEFT_OK && e->cast_dtype > 0)
        s = weft_json_props_put_string(p, "dtype",
                                       weft_dtype_name((weft_dtype_t)(e->cast_dtype - 1)));
    return s;
}

/* Loads through weft_elemwise_op, so bad props get its validation. */
static weft_status_t elemwise_from_json(weft_graph_t *g, const weft_op_class_t *cls,
                                        const weft_json_props_t *p, const weft_op_t **out)
{
    int64_t inplace = -1;
    weft_dtype_t dt = WEFT_FLOAT64;
    int kind = class_kind(cls);
    if (kind < 0)
        return weft_json_props_error(p, WEFT_EINVAL, "%s is not an elementwise class", cls->name);
    if (weft_json_props_has(p, "inplace")) {
        weft_status_t s = weft_json_props_get_int(p, "inplace", &inplace);
        if (s != WEFT_OK) return s;
    }
    if (kind == WEFT_ELEMWISE_CAST) {
        const char *name;
        weft_status_t s = weft_json_props_get_string(p, "dtype", &name);
        if (s != WEFT_OK) return s;
        if (weft_dtype_parse(name, &dt) != WEFT_OK)
            return weft_json_props_error(p, WEFT_ETYPE, "dtype: unknown dtype '%s'", name);
    }
    if (inplace < -1 || inplace >= (int64_t)kind_arity[kind])
        return weft_json_props_error(p, WEFT_EPARSE, "inplace: %lld is not -1 or an input index",
                                     (long long)inplace);
    return weft_elemwise_op(g, (weft_elemwise_kind_t)kind, (int)inplace, dt, out);
}

#define ELEMWISE_CLASS_(kname, cls, arity)            \
    {                                                 \
        .size = sizeof(weft_op_class_t),              \
        .name = cls,                                  \
        .props_size = sizeof(weft__elemwise_props_t), \
        .props_print = elemwise_props_print,          \
        .props_to_json = elemwise_to_json,            \
        .props_from_json = elemwise_from_json,        \
        .make_node = elemwise_make_node,              \
        .perform = elemwise_perform,                  \
        .destroy_map = elemwise_destroy_map,          \
        .grad = weft__elemwise_grad,                  \
        .inplace_variant = elemwise_inplace_variant,  \
    },

const weft_op_class_t weft__elemwise_classes[WEFT_ELEMWISE_KIND_COUNT] = {
    WEFT_ELEMWISE_TABLE(ELEMWISE_CLASS_)};

/* ---- public API ------------------------------------------------------------------ */

weft_status_t weft_elemwise_op(weft_graph_t *g, weft_elemwise_kind_t kind, int inplace_input,
                               weft_dtype_t cast_dtype, const weft_op_t **out)
{
    if (out) *out = NULL;
    if (!g) return WEFT_EINVAL;
    if (!out) return weft_graph_set_error(g, WEFT_EINVAL, "elementwise op: NULL out");
    if ((unsigned)kind >= WEFT_ELEMWISE_KIND_COUNT)
        return weft_graph_set_error(g, WEFT_EINVAL, "invalid elementwise kind %d", (int)kind);
    if (inplace_input < -1 || inplace_input >= (int)kind_arity[kind])
        return weft_graph_set_error(g, WEFT_EINVAL, "%s: in-place input %d outside [-1, %zu)",
                                    kind_names[kind], inplace_input, kind_arity[kind]);
    weft__elemwise_props_t p = {inplace_input, 0};
    if (kind == WEFT_ELEMWISE_CAST) {
        if (weft_dtype_size(cast_dtype) == 0)
            return weft_graph_set_error(g, WEFT_EINVAL, "Cast: invalid dtype %d", (int)cast_dtype);
        p.cast_dtype = (int32_t)cast_dtype + 1;
    }
    return weft_op_create(g, &weft__elemwise_classes[kind], &p, out);
}

bool weft_elemwise_op_info(const weft_op_t *op, weft_elemwise_kind_t *kind, int *inplace_input)
{
    const weft_op_class_t *c = weft_op_class(op);
    if (!c || c < weft__elemwise_classes || c >= weft__elemwise_classes + WEFT_ELEMWISE_KIND_COUNT)
        return false;
    if (kind) *kind = op_kind(op);
    if (inplace_input) *inplace_input = op_props(op)->inplace;
    return true;
}

/* Applies op to inputs, left-padding lower-rank ones with DimShuffles. */
static weft_status_t elemwise_build(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                    weft_var_t *const *inputs, const char *file, int line,
                                    weft_var_t **out)
{
    weft_var_t *padded[4];
    int ndim = 0;
    for (size_t i = 0; i < n_in; i++) {
        if (!inputs[i])
            return weft_graph_set_error(g, WEFT_EINVAL, "%s at %s:%d: input %zu is NULL",
                                        weft_op_name(op), file, line, i);
        const weft_type_t *t = weft_var_type(inputs[i]);
        if (weft_type_kind(t) != WEFT_TYPE_TENSOR)
            return weft_graph_set_error(g, WEFT_ETYPE, "%s: input %zu is not a tensor",
                                        weft_op_name(op), i);
        if (weft_type_ndim(t) > ndim) ndim = weft_type_ndim(t);
    }
    for (size_t i = 0; i < n_in; i++)
        if (!(padded[i] = weft_pad_left_at(g, inputs[i], ndim, file, line)))
            return weft__ctor_status(g);
    *out = weft_op_call_at(g, op, n_in, padded, file, line);
    return *out ? WEFT_OK : weft__ctor_status(g);
}

static weft_status_t elemwise_apply(weft_graph_t *g, weft_elemwise_kind_t kind, size_t n_in,
                                    weft_var_t *const *inputs, const char *file, int line,
                                    weft_var_t **out)
{
    if (kind == WEFT_ELEMWISE_CAST)
        return weft_graph_set_error(g, WEFT_EINVAL, "Cast needs a dtype: use weft_cast");
    const weft_op_t *op;
    weft_status_t st = weft_elemwise_op(g, kind, -1, WEFT_BOOL, &op); /* checks kind */
    if (st != WEFT_OK) return st;
    if (!inputs)
        return weft_graph_set_error(g, WEFT_EINVAL, "%s: NULL inputs array", kind_names[kind]);
    if (n_in != kind_arity[kind])
        return weft_graph_set_error(g, WEFT_EINVAL, "%s takes %zu inputs, got %zu",
                                    kind_names[kind], kind_arity[kind], n_in);
    return elemwise_build(g, op, n_in, inputs, file, line, out);
}

weft_var_t *weft_elemwise_at(weft_graph_t *g, weft_elemwise_kind_t kind, size_t n_in,
                             weft_var_t *const *inputs, const char *file, int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t st = g ? elemwise_apply(g, kind, n_in, inputs, file, line, &out) : WEFT_EINVAL;
    const char *name = weft_elemwise_name(kind);
    return weft__ctor_end(g, st, out, name ? name : "weft_elemwise", file, line);
}

weft_var_t *weft_unary_at(weft_graph_t *g, weft_elemwise_kind_t kind, weft_var_t *x,
                          const char *file, int line)
{
    return weft_elemwise_at(g, kind, 1, &x, file, line);
}

weft_var_t *weft_binary_at(weft_graph_t *g, weft_elemwise_kind_t kind, weft_var_t *a, weft_var_t *b,
                           const char *file, int line)
{
    weft_var_t *in[2] = {a, b};
    return weft_elemwise_at(g, kind, 2, in, file, line);
}

weft_var_t *weft_switch_at(weft_graph_t *g, weft_var_t *cond, weft_var_t *a, weft_var_t *b,
                           const char *file, int line)
{
    weft_var_t *in[3] = {cond, a, b};
    return weft_elemwise_at(g, WEFT_ELEMWISE_SWITCH, 3, in, file, line);
}

static weft_status_t cast_build(weft_graph_t *g, weft_var_t *x, weft_dtype_t dtype,
                                const char *file, int line, weft_var_t **out)
{
    if (!x)
        return weft_graph_set_error(g, WEFT_EINVAL, "Cast at %s:%d: input 0 is NULL", file, line);
    if (weft_type_kind(weft_var_type(x)) == WEFT_TYPE_TENSOR &&
        weft_type_dtype(weft_var_type(x)) == dtype) {
        *out = x;
        return WEFT_OK;
    }
    const weft_op_t *op;
    weft_status_t st = weft_elemwise_op(g, WEFT_ELEMWISE_CAST, -1, dtype, &op);
    if (st != WEFT_OK) return st;
    return elemwise_build(g, op, 1, &x, file, line, out);
}

weft_var_t *weft_cast_at(weft_graph_t *g, weft_var_t *x, weft_dtype_t dtype, const char *file,
                         int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t st = g ? cast_build(g, x, dtype, file, line, &out) : WEFT_EINVAL;
    return weft__ctor_end(g, st, out, "Cast", file, line);
}

/* The dtype of the constant c combined with x, as NumPy promotes a Python
 * scalar: x's dtype, except a non-integral c with an integer or bool x is
 * float64 and an integral c with a bool x is int64. */
static weft_dtype_t scalar_dtype(weft_dtype_t x, double c)
{
    /* the range first: converting an infinite or huge c to int64 is undefined */
    bool integral = c > -9.3e18 && c < 9.3e18 && c == (double)(int64_t)c;
    if (weft_dtype_kind(x) == WEFT_KIND_FLOAT || weft_dtype_kind(x) == WEFT_KIND_COMPLEX) return x;
    if (!integral) return WEFT_FLOAT64;
    return x == WEFT_BOOL ? WEFT_INT64 : x;
}

/* x kind c (c_first false) or c kind x (c_first true). */
static weft_status_t scalar_build(weft_graph_t *g, weft_elemwise_kind_t kind, weft_var_t *x,
                                  double c, bool c_first, const char *file, int line,
                                  weft_var_t **out)
{
    const char *name = weft_elemwise_name(kind);
    if (!x)
        return weft_graph_set_error(g, WEFT_EINVAL, "%s at %s:%d: input %d is NULL",
                                    name ? name : "?", file, line, c_first ? 1 : 0);
    if (weft_type_kind(weft_var_type(x)) != WEFT_TYPE_TENSOR)
        return weft_graph_set_error(g, WEFT_ETYPE, "%s: input %d is not a tensor",
                                    name ? name : "?", c_first ? 1 : 0);
    weft_dtype_t dt = weft_type_dtype(weft_var_type(x));
    if (kind != WEFT_ELEMWISE_SECOND) dt = scalar_dtype(dt, c);
    weft_var_t *k = weft_constant_scalar_at(g, dt, c, file, line);
    if (!k) return weft__ctor_status(g);
    *out = c_first ? weft_binary_at(g, kind, k, x, file, line)
                   : weft_binary_at(g, kind, x, k, file, line);
    return *out ? WEFT_OK : weft__ctor_status(g);
}

weft_var_t *weft_binary_scalar_at(weft_graph_t *g, weft_elemwise_kind_t kind, weft_var_t *x,
                                  double c, const char *file, int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t st = g ? scalar_build(g, kind, x, c, false, file, line, &out) : WEFT_EINVAL;
    return weft__ctor_end(g, st, out, "weft_binary_scalar", file, line);
}

weft_var_t *weft_scalar_binary_at(weft_graph_t *g, weft_elemwise_kind_t kind, double c,
                                  weft_var_t *x, const char *file, int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t st = g ? scalar_build(g, kind, x, c, true, file, line, &out) : WEFT_EINVAL;
    return weft__ctor_end(g, st, out, "weft_scalar_binary", file, line);
}

weft_var_t *weft_zeros_like_at(weft_graph_t *g, weft_var_t *x, const char *file, int line)
{
    return weft_binary_scalar_at(g, WEFT_ELEMWISE_SECOND, x, 0.0, file, line);
}
