/* Internal interface of the elementwise and shape ops (elemwise*.c,
 * dimshuffle.c, reshape.c, subtensor*.c, builtin_classes.c). Not part of the
 * API. */
#ifndef WEFT_OPS_OPS_INT_H
#define WEFT_OPS_OPS_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "tensor/tensor_int.h"
#include "weft/elemwise.h"
#include "weft/op.h"
#include "weft/shape_ops.h"

/* ---- elementwise ------------------------------------------------------------ */

/* Props of every elementwise class (no padding: compared bytewise). */
typedef struct weft__elemwise_props {
    int32_t inplace;    /* destroyed input, -1: none */
    int32_t cast_dtype; /* Cast's target dtype + 1; 0 for the other kinds */
} weft__elemwise_props_t;

/* One class per kind, indexed by weft_elemwise_kind_t. */
extern const weft_op_class_t weft__elemwise_classes[WEFT_ELEMWISE_KIND_COUNT];

/* The row kernel computing kind in dtype dt (the operands' common dtype;
 * comparisons write bool, Switch reads a bool condition as operand 1), or
 * NULL when kind is not defined for dt. Operand 0 is the output. Cast is not
 * here (weft__convert_fn). */
weft__row_fn weft__elemwise_kernel(weft_elemwise_kind_t kind, weft_dtype_t dt);
/* The same for the float math kinds (WEFT_ELEMWISE_TAN .. NEXTAFTER, the
 * table's contiguous "float math" block; elemwise_math_kernels.c), NULL for
 * any other kind; weft__elemwise_kernel falls back to it. */
weft__row_fn weft__elemwise_math_kernel(weft_elemwise_kind_t kind, weft_dtype_t dt);
/* Whether kind is one of the float math kinds (float-only, costly). */
static inline bool weft__elemwise_is_math(weft_elemwise_kind_t kind)
{
    return kind >= WEFT_ELEMWISE_TAN && kind <= WEFT_ELEMWISE_NEXTAFTER;
}
/* Special functions libm lacks (ew_special.c), float64: erfinv (NaN outside
 * [-1, 1], +-inf at +-1), digamma and trigamma (poles: digamma(+-0) is -+inf,
 * a negative integer NaN; trigamma +inf at every integer <= 0). */
double weft__erfinv(double x);
double weft__digamma(double x);
double weft__trigamma(double x);
/* Polygamma (polygamma.c): its value in float64 (NaN for a negative or
 * non-integral n), its output dtype (errors name the op and input) and the
 * partial gradient of input i (NULL for n) times gz. */
double weft__polygamma(double n, double x);
weft_status_t weft__polygamma_dtype(weft_graph_t *g, weft_var_t *const *inputs,
                                    weft_dtype_t *out);
weft_status_t weft__polygamma_partial(weft_graph_t *g, size_t i, const weft_apply_t *node,
                                      weft_var_t *gz, weft_var_t **o);

/* The rounding, integer and logical kinds (elemwise_int.c,
 * elemwise_int_kernels.c). weft__ew_int_dtype: when kind's dtype rule is
 * there (for the common input dtype dt), sets *out (or records the error on
 * g in *st) and returns true. A predicate reads any dtype (computing in the
 * inputs' common dtype) and writes bool, as the comparisons; costly kinds
 * split over workers from WEFT__EW_SPLIT_COSTLY elements. The kernel lookup
 * is weft__elemwise_kernel's for these kinds (and Abs of bool). */
bool weft__ew_int_dtype(weft_graph_t *g, weft_elemwise_kind_t kind, weft_dtype_t dt,
                        weft_dtype_t *out, weft_status_t *st);
bool weft__ew_int_is_predicate(weft_elemwise_kind_t kind);
bool weft__ew_int_is_costly(weft_elemwise_kind_t kind);
weft__row_fn weft__elemwise_int_kernel(weft_elemwise_kind_t kind, weft_dtype_t dt);

/* Complex numbers (elemwise_complex.c). The kinds Real, Imag, Conj, Angle,
 * Complex ("the complex family"), and any kind with a complex input except
 * Cast, are typed and dispatched there: */
bool weft__ew_kind_is_complex_family(weft_elemwise_kind_t k);
/* Whether make_node of kind k on inputs goes through weft__ew_complex_infer. */
bool weft__ew_complex_involved(weft_elemwise_kind_t k, size_t n_in, weft_var_t *const *inputs);
/* The output dtype (errors name the op, the input and its dtype; a compute
 * dtype with no kernel, e.g. Angle of float16, is WEFT_ETYPE too). */
weft_status_t weft__ew_complex_infer(weft_graph_t *g, weft_elemwise_kind_t k, size_t n_in,
                                     weft_var_t *const *inputs, weft_dtype_t *out);
/* The dtype a node of kind k computes in, for input tensors in and output
 * dtype odt; WEFT_DTYPE_COUNT when the node is not complex-involved. */
weft_dtype_t weft__ew_complex_compute(weft_elemwise_kind_t k, weft_tensor_t *const *in,
                                      size_t n_in, weft_dtype_t odt);
/* Gradients (elemwise_complex_grad.c): whether the node is complex-family
 * or has a complex input or output, and its grad hook. */
bool weft__ew_complex_grad_applies(const weft_apply_t *node);
weft_status_t weft__ew_complex_grad(weft_graph_t *g, const weft_apply_t *node,
                                    weft_var_t *const *output_grads, weft_var_t **input_grads);
/* weft__elemwise_kernel for a complex compute dtype or a complex-family kind. */
weft__row_fn weft__elemwise_complex_kernel(weft_elemwise_kind_t kind, weft_dtype_t dt);

/* Shared by the elementwise classes and Composite (composite.c): make_node
 * checks (every input a tensor of one rank) and static broadcasting, and at
 * run time the input checks against the node's types and the broadcast
 * output shape (errors name the input and dimension). */
weft_status_t weft__ew_check_inputs(weft_graph_t *g, const char *name, size_t n_in,
                                    weft_var_t *const *inputs, int *ndim);
weft_status_t weft__ew_infer_shape(weft_graph_t *g, const char *name, size_t n_in,
                                   weft_var_t *const *inputs, int ndim, int64_t *shape);
weft_status_t weft__ew_check_input_tensors(const weft_apply_t *node, weft_tensor_t *const *in,
                                           size_t n_in, weft_kernel_ctx_t *ctx);
weft_status_t weft__ew_runtime_shape(const weft_apply_t *node, weft_tensor_t *const *in,
                                     size_t n_in, int ndim, int64_t *shape,
                                     weft_kernel_ctx_t *ctx);

/* Elements below which an elementwise loop stays on one worker: waking a
 * second one costs a few us, about 8K transcendental evaluations or 64K
 * additions. */
#define WEFT__EW_SPLIT_COSTLY 8192
#define WEFT__EW_SPLIT_CHEAP 65536
/* The split threshold of one kind. */
int64_t weft__ew_split_min(weft_elemwise_kind_t kind);

/* Runs row kernel fn over the broadcast shape of ops[0..nop) (ops[0] the
 * output, of exactly that shape; inputs broadcast where their length is 1).
 * With several workers and at least min_split elements, the outermost
 * non-unit axis is cut into ranges of a length fixed by the shape, run by
 * weft_kernel_parallel_for. Returns
 * its status (WEFT_ENOMEM when ranges cannot be queued). */
weft_status_t weft__ew_loop_run(weft_kernel_ctx_t *ctx, size_t nop, weft_tensor_t *const *ops,
                                int ndim, const int64_t *shape, weft__row_fn fn, void *fn_arg,
                                int64_t min_split);

/* A cached elementwise loop plan (ew_plan.c, docs/execution.md §3.7): set by
 * the perform hook (the spec fields) and weft__ew_plan_build (the rest). A
 * plan is plain data (no pointer into itself, no reference held), so it is
 * copied into the runtime's plan cell as it is. */
typedef struct weft__ew_plan {
    /* what a planned run reads, in the plan's first 64 bytes */
    const weft_apply_t *node; /* spec: the node planned (a cell serves one node) */
    weft__row_fn fn;          /* spec */
    void *fn_arg;             /* spec; must stay valid as long as the plan */
    size_t row_n;             /* one_row: the row's length */
    uint32_t bytes;           /* the whole plan, w[] and payload included */
    /* nonzero: the row kernel's arg is instead the payload stored at this
     * byte offset inside the plan (weft__ew_plan_build_with) */
    uint32_t payload_off;
    weft_dtype_t odt;         /* spec */
    uint8_t n_in;             /* inputs; operand 0 is the output */
    uint8_t ndim;
    int8_t inplace;  /* spec: the input the output is written into, -1: a fresh output */
    bool convert;    /* spec: some input is converted to the compute dtype (scratch) */
    bool may_split;  /* large enough to split over workers (weft__ew_loop_run) */
    bool one_row;    /* the loop is one row-kernel call: row_n, the row strides */
    bool typed;      /* the output matches its variable's type */
    /* what only the full path and the split loop read */
    int kind;                 /* spec: the owner's kind (weft_elemwise_kind_t) */
    weft_dtype_t compute;     /* spec */
    int64_t min_split;        /* spec */
    /* per input: dtype, shape[ndim], strides[ndim] (the key); the row
     * strides of the operands (one_row); the output shape; per operand, the
     * strides over the output shape (0 on broadcast axes) */
    int64_t w[];
} weft__ew_plan_t;

/* Largest payload of a plan (Composite's program). */
#define WEFT__EW_PLAN_PAYLOAD_MAX 512

/* Room for the largest plan (every operand at WEFT_MAX_NDIM axes, the
 * largest payload). */
#define WEFT__EW_PLAN_MAX_WORDS                                                 \
    ((WEFT__ITER_MAX_OPS - 1) * (1 + 2 * WEFT_MAX_NDIM) /* keys */ +            \
     WEFT__ITER_MAX_OPS /* row strides */ + WEFT_MAX_NDIM /* output shape */ + \
     WEFT__ITER_MAX_OPS * WEFT_MAX_NDIM /* operand strides */)
typedef struct weft__ew_plan_buf {
    _Alignas(16) unsigned char room[sizeof(weft__ew_plan_t) +
                                    sizeof(int64_t) * WEFT__EW_PLAN_MAX_WORDS +
                                    16 /* payload alignment */ + WEFT__EW_PLAN_PAYLOAD_MAX];
} weft__ew_plan_buf_t;

/* The plan in ctx's plan cell when it was built for node and inputs of in's
 * dtypes, shapes and strides (in[0..n_in) of the plan), else NULL. */
const weft__ew_plan_t *weft__ew_plan_cached(const weft_kernel_ctx_t *ctx,
                                            const weft_apply_t *node, weft_tensor_t *const *in);
/* Builds the plan of spec (its spec fields set) for inputs in, output shape
 * `shape` and operands ops (ops[0] the prepared output, then the inputs as
 * the loop reads them: converted ones replaced), in buf, and caches it in
 * ctx's plan cell. Returns the cached plan, or buf's when none could be
 * cached. */
const weft__ew_plan_t *weft__ew_plan_build(weft_kernel_ctx_t *ctx, const weft__ew_plan_t *spec,
                                           const weft_type_t *out_type, const int64_t *shape,
                                           weft_tensor_t *const *in, weft_tensor_t *const *ops,
                                           weft__ew_plan_buf_t *buf);
/* As weft__ew_plan_build, with payload[0..bytes) (at most
 * WEFT__EW_PLAN_PAYLOAD_MAX, plain data) stored in the plan and handed to
 * the row kernel as its arg. */
const weft__ew_plan_t *weft__ew_plan_build_with(weft_kernel_ctx_t *ctx,
                                                const weft__ew_plan_t *spec,
                                                const weft_type_t *out_type,
                                                const int64_t *shape, weft_tensor_t *const *in,
                                                weft_tensor_t *const *ops, const void *payload,
                                                size_t bytes, weft__ew_plan_buf_t *buf);
/* A run with cached plan p (inputs of its geometry): the output prepared
 * from the plan (a fresh one from its shape, or the in-place input), then
 * the loop over loop_in (the inputs, converted ones replaced). */
weft_status_t weft__ew_plan_run(weft_kernel_ctx_t *ctx, const weft__ew_plan_t *p,
                                weft_tensor_t *const *in, weft_tensor_t *const *loop_in,
                                weft_tensor_t **out);
/* The input an in-place node writes at run time: ip (its op's in-place
 * input, -1 for none) when that input is C-contiguous, else -1 (a fresh
 * output). A reduction's summation order follows its input's strides
 * (reduce_kernels.c), so an output with the destroyed input's layout would
 * give a later reduction other bits than the fresh output of the node
 * without the in-place rewrite; excluding fast_math must give mode none's
 * bits (docs/rewrites.md). The plan cache keys on input strides, so a plan
 * holds the decision. */
int weft__ew_inplace_input(int ip, weft_tensor_t *const *in);
/* The row strides of p's operands (after the key in w[]). */
static inline const int64_t *weft__ew_plan_row_strides(const weft__ew_plan_t *p)
{
    return p->w + (size_t)p->n_in * (1 + 2 * (size_t)p->ndim);
}
/* The output shape of p (after the row strides). */
static inline const int64_t *weft__ew_plan_shape(const weft__ew_plan_t *p)
{
    return weft__ew_plan_row_strides(p) + p->n_in + 1;
}
/* Runs p's loop: out, then the inputs as the loop reads them (converted
 * ones replaced; the geometry p was built for). */
weft_status_t weft__ew_plan_loop(weft_kernel_ctx_t *ctx, const weft__ew_plan_t *p,
                                 weft_tensor_t *out, weft_tensor_t *const *in);

/* The fused elementwise expression class (composite.c, weft/composite.h). */
extern const weft_op_class_t weft__composite_class;

/* The elementwise grad hook (elemwise_grad.c), shared by every kind. */
weft_status_t weft__elemwise_grad(weft_graph_t *g, const weft_apply_t *node,
                                  weft_var_t *const *output_grads, weft_var_t **input_grads);

/* float16, float32 or float64. (Mixed dtypes promote with
 * weft_dtype_promote, weft/type.h.) */
static inline bool weft__dtype_is_float(weft_dtype_t d)
{
    return weft_dtype_kind(d) == WEFT_KIND_FLOAT;
}

/* Integer Pow's check before its kernel runs (pow_check.c): WEFT_ERANGE,
 * recorded on ctx, when the exponent tensor (of a signed integer dtype) has
 * a negative element, as NumPy refuses integers to negative integer powers;
 * WEFT_OK for any other dtype. */
weft_status_t weft__pow_check_exponent(const weft_tensor_t *exponent, weft_kernel_ctx_t *ctx);

/* Gradient helper: grad (of a broadcast result) summed over the axes where
 * target's static length is 1 but grad's is not (keepdims), then cast to
 * target's dtype. grad and target have the same ndim. */
weft_status_t weft__grad_reduce_to(weft_graph_t *g, weft_var_t *grad, weft_var_t *target,
                                   weft_var_t **out);

/* A variable of the null type (an undefined gradient), created at node's
 * site, into *out (elemwise_grad.c): for grad hooks of ops without one. */
weft_status_t weft__grad_null(weft_graph_t *g, const weft_apply_t *node, weft_var_t **out);

/* Sums float x over the axes in mask (bit d: axis d), keeping them with
 * length 1 (the SumAxes op, sum_axes.c). */
weft_status_t weft__sum_axes(weft_graph_t *g, weft_var_t *x, uint32_t mask, const char *file,
                             int line, weft_var_t **out);
extern const weft_op_class_t weft__sum_axes_class;

/* ---- subtensor ------------------------------------------------------------------ */

/* Packed index entry (no padding: props compare bytewise). */
typedef struct weft__slice {
    int64_t kind; /* weft_slice_kind_t */
    int64_t start, stop, step;
} weft__slice_t;

typedef struct weft__subtensor_props {
    int32_t n;       /* entries used */
    int32_t inplace; /* Set/Inc: destroys input 0 */
    weft__slice_t idx[WEFT_MAX_NDIM];
} weft__subtensor_props_t;

/* The JSON props hooks of the three index classes (subtensor_json.c):
 * {"idx": "1:3, 2, ::-1"}, plus "inplace" for SetSubtensor / IncSubtensor. */
weft_status_t weft__subtensor_to_json(const weft_op_t *op, weft_json_props_t *p);
weft_status_t weft__subtensor_from_json(weft_graph_t *g, const weft_op_class_t *cls,
                                        const weft_json_props_t *p, const weft_op_t **out);

extern const weft_op_class_t weft__dimshuffle_class;
extern const weft_op_class_t weft__reshape_class;
extern const weft_op_class_t weft__subtensor_class;
extern const weft_op_class_t weft__set_subtensor_class;
extern const weft_op_class_t weft__inc_subtensor_class;

#endif /* WEFT_OPS_OPS_INT_H */
