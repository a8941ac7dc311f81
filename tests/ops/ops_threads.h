/* Shared helper of the split-kernel tests (test_reduce_more.c,
 * test_dtypes_lane.c, test_nn.c): a compiled function's outputs at 1, 2 and 4 workers
 * and in the sequential evaluator, asserted bit for bit equal. */
#ifndef WEFT_TESTS_OPS_THREADS_H
#define WEFT_TESTS_OPS_THREADS_H

#include <stddef.h>

#include "weft/weft.h"

/* The most outputs one call checks. */
#define CK_THREADS_MAX_OUTS 40

/* Compiles outs (functions of the one input x, mode none) at 1, 2 and 4
 * workers, calls each with xv and asserts the same bytes, also against
 * weft_eval in g; fails the test (naming the output) otherwise. */
void ck_same_bits_at_1_2_4(weft_graph_t *g, weft_var_t *x, weft_tensor_t *xv, size_t n_out,
                           weft_var_t **outs);

#endif /* WEFT_TESTS_OPS_THREADS_H */
