/* Internal interface of the softmax ops (weft/nn.h: Softmax, LogSoftmax)
 * between the ops (softmax.c) and their kernels (softmax_kernels.c).
 *
 * x (C-contiguous) is seen as (outer, len, inner) around the softmax axis.
 * A lane is the len elements of one (outer, inner) position; every lane is
 * computed whole by one worker in three passes (max; exp(x - max) and their
 * sum; the scale), so the result depends on the shape alone: same bits at
 * any worker count. inner == 1 (the last axis): one row per lane. Otherwise
 * the lanes of one outer index are taken WEFT__SMAX_COLS at a time, so each
 * pass reads whole rows of the (len, inner) block. */
#ifndef WEFT_OPS_NN_NN_INT_H
#define WEFT_OPS_NN_NN_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "weft/graph.h"
#include "weft/kernel.h"
#include "weft/op.h"
#include "weft/tensor.h"

#define WEFT__SMAX_COLS 64

/* The classes (softmax.c), registered in builtin_classes.c. */
extern const weft_op_class_t weft__softmax_class, weft__log_softmax_class;

/* The error of a non-float input x of op or constructor `name` called at
 * file:line (file NULL: no site): WEFT_ETYPE "NAME (at FILE:LINE): input X
 * (created at F:L) has dtype int32 (need float32 or float64; cast it
 * first)" (softmax.c). */
weft_status_t weft__nn_float_error(weft_graph_t *g, const char *name, const char *file, int line,
                                   weft_var_t *x);

/* out (contiguous, x's shape and float dtype) = softmax (or log_softmax when
 * is_log) of the contiguous float32/float64 x along axis. Errors: none but
 * the pool's (WEFT_ENOMEM queuing the ranges), recorded on ctx. */
weft_status_t weft__softmax_run(weft_kernel_ctx_t *ctx, bool is_log, int axis,
                                const weft_tensor_t *x, weft_tensor_t *out);

#endif /* WEFT_OPS_NN_NN_INT_H */
