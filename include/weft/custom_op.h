/* One-callback ops: an op class made from a kernel function, for users who
 * do not need everything the full op class (weft/op.h) offers.
 *
 * Two styles:
 * - elementwise (scalar or chunk): the inputs broadcast together as weft's
 *   own elementwise ops do (lower-rank inputs are left-padded, a length-1
 *   axis stretches), and weft handles dtypes, strides and splitting the
 *   work. A scalar function computes one element from the inputs' values as
 *   doubles; a chunk function computes n elements at once from contiguous
 *   arrays of the op's compute dtype. One output.
 * - whole-tensor (kernel): the function gets the input tensors (any
 *   strides: see weft/tensor_iter.h and weft_kernel_contiguous to walk them)
 *   and fills output tensors that weft allocated (C-contiguous) with the
 *   shapes the optional shape function gives (default: input 0's shape).
 *
 *     static double softplus(const double *x, void *user)
 *     {
 *         (void)user;
 *         return log1p(exp(x[0]));
 *     }
 *     weft_custom_op_desc_t d = WEFT_CUSTOM_OP_DESC_INIT;
 *     d.name = "Softplus";
 *     d.scalar = softplus;
 *     const weft_op_class_t *cls;
 *     weft_custom_op_class(&d, &cls);            // once per process
 *     weft_var_t *y = weft_custom_call(g, cls, 1, &x);
 *
 * The class is registered under its name in the op class registry
 * (weft/op.h), so graphs using it save and load as JSON (the op has no
 * props: "op": "Softplus") and appear under that name in profiles and error
 * messages. Its ops are pure: two applications to the same inputs may be
 * merged, and one whose inputs are all constant may be evaluated at compile
 * time.
 *
 * Determinism: an elementwise op is split into ranges fixed by the shape
 * alone (never by the worker count) and each element is computed by the same
 * call sequence wherever it runs, so a pure function gives the same bits at
 * any thread count. Ranges may run concurrently on several workers: the
 * scalar and chunk functions must be safe to call from several threads at
 * once (pure functions of their arguments are). A kernel runs once per node
 * execution on one worker (it may split its own work with
 * weft_kernel_parallel_for).
 *
 * Gradients: the optional grad callback builds, in g, the gradient with
 * respect to each input from the output gradients, with weft's ops (or other
 * custom ops). For the elementwise style weft then sums each input gradient
 * over the axes that input was broadcast along and casts it to the input's
 * dtype. Without the callback, weft_grad reports WEFT_ENOGRAD naming the
 * node.
 *
 * Errors at run time: a kernel reports failure by returning an error status,
 * best through weft_kernel_error(ctx, status, "what went wrong"); a compiled
 * function's call then fails with "node N, Name(...) failed with STATUS:
 * message" naming the op (weft/function.h). Scalar and chunk functions
 * cannot fail.
 *
 * Ownership: classes live until the process exits (the registry holds them);
 * the description is copied, the name too, and `user` is borrowed (it must
 * outlive every use of the class).
 * Thread: weft_custom_op_class may be called from any thread. */
#ifndef WEFT_CUSTOM_OP_H
#define WEFT_CUSTOM_OP_H

#include <stddef.h>
#include <stdint.h>

#include "weft/export.h"
#include "weft/graph.h"
#include "weft/kernel.h"
#include "weft/op.h"
#include "weft/status.h"
#include "weft/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Elementwise, one element: x[0..n_inputs) are the inputs' values converted
 * to double; the result is converted to the output dtype (weft/tensor.h
 * "Conversions"). */
typedef double (*weft_custom_scalar_fn)(const double *x, void *user);

/* Elementwise, n elements: in[k] and out are contiguous arrays of the compute
 * dtype (the output dtype, see dtype below): e.g. cast them to const double *
 * for float64. Inputs are converted and broadcast, output strides handled, by
 * weft. */
typedef void (*weft_custom_chunk_fn)(size_t n, void *out, const void *const *in, void *user);

/* Whole-tensor: computes out[0..n_out) (allocated, C-contiguous, dtype and
 * shape as declared) from in[0..n_in) (read-only, any strides). Returns
 * WEFT_OK or an error (weft_kernel_error). */
typedef weft_status_t (*weft_custom_kernel_fn)(weft_kernel_ctx_t *ctx, size_t n_in,
                                               weft_tensor_t *const *in, size_t n_out,
                                               weft_tensor_t *const *out, void *user);

/* Shape of output k from the input shapes (in_ndim[i] axes, in_shape[i]):
 * sets *ndim and shape[0..*ndim). Called when the graph is built, with
 * WEFT_DIM_UNKNOWN for lengths not known yet (return WEFT_DIM_UNKNOWN for
 * output lengths that depend on them), and at run time with every length
 * known. Returns WEFT_OK, or an error status (WEFT_ESHAPE, WEFT_ETYPE...)
 * that becomes the graph's or the node's error. */
typedef weft_status_t (*weft_custom_shape_fn)(void *user, size_t n_in, const int *in_ndim,
                                              const int64_t *const *in_shape, size_t k,
                                              int *ndim, int64_t *shape);

/* Gradient: sets input_grads[i] (NULL: no gradient, disconnected) from
 * output_grads[k] (NULL entries: that output does not reach the cost),
 * building expressions in g with weft's constructors. inputs and outputs
 * are the node's. Returns WEFT_OK, or an error: when a constructor returned
 * NULL, weft_graph_error(g) (the kept error, weft/graph.h "Errors"). */
typedef weft_status_t (*weft_custom_grad_fn)(weft_graph_t *g, size_t n_in,
                                             weft_var_t *const *inputs, size_t n_out,
                                             weft_var_t *const *outputs,
                                             weft_var_t *const *output_grads,
                                             weft_var_t **input_grads, void *user);

/* dtype value: the default rule (see below). */
#define WEFT_CUSTOM_DTYPE_AUTO (-1)
/* Inputs an elementwise custom op may take. */
#define WEFT_CUSTOM_MAX_ELEMWISE_INPUTS 7

typedef struct weft_custom_op_desc {
    size_t size;      /* sizeof(weft_custom_op_desc_t) */
    const char *name; /* required: the class name (registry, JSON, profiles) */
    size_t n_inputs;  /* required, >= 1 (elementwise: at most 7; kernel: 16) */
    /* Exactly one of the three. */
    weft_custom_scalar_fn scalar;
    weft_custom_chunk_fn chunk;
    weft_custom_kernel_fn kernel;
    /* Kernel style only: number of outputs (0 means 1) and their shapes
     * (NULL: every output has input 0's shape). */
    size_t n_outputs;
    weft_custom_shape_fn shape;
    /* Output dtype (every output), a weft_dtype_t or WEFT_CUSTOM_DTYPE_AUTO:
     * elementwise - the inputs' dtypes promoted as weft's elementwise ops do
     * (weft_dtype_promote, NumPy's result_type); kernel - input 0's. The compute
     * dtype of a chunk function is the output dtype; a scalar function
     * computes in double. */
    int dtype;
    weft_custom_grad_fn grad; /* optional */
    void *user;               /* passed to every callback; borrowed */
} weft_custom_op_desc_t;

#define WEFT_CUSTOM_OP_DESC_INIT \
    { sizeof(weft_custom_op_desc_t), NULL, 1, NULL, NULL, NULL, 0, NULL, \
      WEFT_CUSTOM_DTYPE_AUTO, NULL, NULL }

/* Makes (or finds) the op class described by desc and registers it under
 * desc->name. Asking again with an identical description (same callbacks,
 * user pointer and counts) returns the same class.
 * Ownership: borrows desc; *out is borrowed, valid until the process exits.
 * Errors: WEFT_EINVAL (NULL desc/out/name, size too small, not exactly one
 * of scalar/chunk/kernel, n_inputs 0, above 7 for the elementwise style or
 * above WEFT_OP_MAX_OUTPUTS (16) for the kernel style,
 * n_outputs above 1 for it or above WEFT_OP_MAX_OUTPUTS, a shape function
 * without a kernel, a bad dtype), WEFT_EALREADY (another class has that
 * name: a built-in, or a custom op with another description), WEFT_ENOMEM;
 * *out NULL. The message: weft_custom_op_last_error().
 * Thread: any. */
WEFT_API weft_status_t weft_custom_op_class(const weft_custom_op_desc_t *desc,
                                            const weft_op_class_t **out);

/* Text of the calling thread's last failed weft_custom_op_class ("" when
 * none). Returns borrowed, valid until that thread's next call. */
WEFT_API const char *weft_custom_op_last_error(void);

/* Applies a custom op class to inputs[0..n_in) in g and returns its output
 * (output 0 for several; the others: weft_apply_output of its owner).
 * Elementwise classes left-pad lower-rank inputs with DimShuffles. The
 * creation site is recorded; use the macro.
 * Ownership: borrows; returns borrowed, owned by g.
 * Errors: a constructor (weft/graph.h "Errors"): returns NULL and keeps the
 * first error on g (weft_graph_error, weft_graph_error_message; a NULL input,
 * an earlier constructor's failure, adds none): WEFT_EINVAL
 * (NULL g/cls/inputs/entry, cls not a custom op class, wrong n_in),
 * WEFT_ETYPE (an input not a tensor), WEFT_ESHAPE (inputs that do not
 * broadcast; a shape function's error), WEFT_EFOREIGN (an input of another
 * context, named), WEFT_ENOMEM.
 * Thread: as every constructor (one thread per context). */
#define weft_custom_call(g, cls, n_in, inputs) \
    weft_custom_call_at((g), (cls), (n_in), (inputs), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_custom_call_at(weft_graph_t *g, const weft_op_class_t *cls,
                                         size_t n_in, weft_var_t *const *inputs,
                                         const char *file, int line);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_CUSTOM_OP_H */
