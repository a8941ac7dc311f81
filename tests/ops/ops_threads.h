/* Same bits at 1, 2 and 4 workers (tests of ops that split their work over
 * the pool: test_nn.c; test_reduce_more.c has its own copy, which can switch
 * to this one). Needs lib/compile. */
#ifndef WEFT_TESTS_OPS_THREADS_H
#define WEFT_TESTS_OPS_THREADS_H

#include <stddef.h>

#include "weft/weft.h"

/* Compiles outs[0..n_out) (at most 16) of the one input x in mode none at
 * 1, 2 and 4 workers, calls each at xv and fails the test unless every
 * output has the same bytes at every worker count. */
void ck_same_bits_1_2_4(weft_var_t *x, weft_tensor_t *xv, size_t n_out, weft_var_t **outs);

#endif /* WEFT_TESTS_OPS_THREADS_H */
