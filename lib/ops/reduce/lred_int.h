/* Internal interface of the lane reductions (weft_lreduce_at: Argmax/Argmin
 * over several axes, Any, All, Var, Std, LogSumExp, NanSum, NanMean, NanMax,
 * NanMin) between their ops (lred.c, argmax.c) and their kernels
 * (lred_kernels.c).
 *
 * A group is one output element; its lane is the group's elements in C order
 * over the reduced axes. The engine cuts every lane into fixed blocks of
 * WEFT__LRED_BLOCK elements and each block into pieces of WEFT__LRED_PIECE:
 * a piece is folded into a partial state, pieces merge left to right into
 * their block's state, blocks left to right into the group's. Blocks run on
 * any worker, so the result depends on the shape alone. */
#ifndef WEFT_OPS_REDUCE_LRED_INT_H
#define WEFT_OPS_REDUCE_LRED_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "weft/kernel.h"
#include "weft/reduce.h"
#include "weft/tensor.h"

#define WEFT__LRED_PIECE 1024
#define WEFT__LRED_BLOCK 65536

/* The dtypes the lane kernels handle (C type, suffix, dtype); a new dtype is
 * one more X line here (and in scan/sort lists: see those files). */
#define WEFT__LRED_DTYPES(X)            \
    X(uint8_t, b, WEFT_BOOL)            \
    X(int32_t, i32, WEFT_INT32)         \
    X(int64_t, i64, WEFT_INT64)         \
    X(float, f32, WEFT_FLOAT32)         \
    X(double, f64, WEFT_FLOAT64)

/* One reduction of x over the axes in mask, into out (contiguous, n_out
 * elements of dout). */
typedef struct weft__lane_job {
    weft_lreduce_kind_t kind;
    weft_dtype_t dx, dout;
    double ddof;
    const char *x;
    void *out;
    int nk, nr; /* kept / reduced axes (length-1 axes dropped) */
    int64_t kshape[WEFT_MAX_NDIM], ksx[WEFT_MAX_NDIM];
    int64_t rshape[WEFT_MAX_NDIM], rsx[WEFT_MAX_NDIM];
    int64_t n_out, lane; /* groups, elements per group */
    bool contig;         /* every lane is unit-stride (rsx describes C order) */
} weft__lane_job_t;

/* Output dtype of kind over an x of dtype dx (weft/reduce.h). */
weft_dtype_t weft__lred_out_dtype(weft_lreduce_kind_t kind, weft_dtype_t dx);
/* Fills job for x reduced over mask, writing into out (n_out elements). */
void weft__lane_job_init(weft__lane_job_t *job, weft_lreduce_kind_t kind, double ddof,
                         const weft_tensor_t *x, uint32_t mask, weft_tensor_t *out);
/* Runs the job, split over the pool by fixed blocks. Errors: WEFT_ENOMEM
 * (scratch), recorded on ctx. */
weft_status_t weft__lane_reduce(weft_kernel_ctx_t *ctx, const weft__lane_job_t *job);

#endif /* WEFT_OPS_REDUCE_LRED_INT_H */
