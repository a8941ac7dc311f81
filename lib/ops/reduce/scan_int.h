/* Internal interface of the scans CumSum / CumProd (weft/reduce.h "Scans")
 * between their ops (scan.c) and kernels (scan_kernels.c).
 *
 * Every lane (the elements along the axis, for one position of the other
 * axes) is cut into fixed blocks of WEFT__SCAN_BLOCK elements, counted from
 * the lane's start (from its end for a reverse scan). Pass 1 folds each
 * block into its total (8 interleaved chains, then those 8 in a fixed
 * tree); a short sequential pass folds the totals left to right into each
 * block's carry; pass 2 scans each block from its carry. Lanes of one block
 * skip pass 1. The split depends on the shape alone: same bits at any
 * worker count. On one worker the passes run per group of 4 blocks (pass 2
 * then reads the group from cache): the same operations in the same order. */
#ifndef WEFT_OPS_REDUCE_SCAN_INT_H
#define WEFT_OPS_REDUCE_SCAN_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "weft/kernel.h"
#include "weft/tensor.h"

#define WEFT__SCAN_BLOCK 65536

/* Output dtype of a scan of dx (NumPy: bool and integers give int64). */
weft_dtype_t weft__scan_out_dtype(weft_dtype_t dx);
/* out (contiguous, x's shape, weft__scan_out_dtype) = the scan of x along
 * axis. Errors: WEFT_ENOMEM (scratch), recorded on ctx. */
weft_status_t weft__scan_run(weft_kernel_ctx_t *ctx, bool is_prod, bool reverse, int axis,
                             const weft_tensor_t *x, weft_tensor_t *out);

#endif /* WEFT_OPS_REDUCE_SCAN_INT_H */
