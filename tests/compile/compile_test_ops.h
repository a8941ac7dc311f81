/* Small test ops for the compiled-function tests (float64 unless noted):
 * Add(a, b), AddInplace(a, b) (destroys a), Twice(x), View(x) (view of x),
 * Fail(x) (fails on a negative element), Sleep{us}(x) (sleeps, then copies),
 * Touch(...) (0-d, marks 1), NoPerform(x), BadOut(x) (wrong output shape),
 * Counted(x) (copies x and counts its runs). */
#ifndef WEFT_TESTS_COMPILE_TEST_OPS_H
#define WEFT_TESTS_COMPILE_TEST_OPS_H

#include <stdatomic.h>

#include "weft/weft.h"

extern const weft_op_class_t ct_add_class, ct_add_inplace_class, ct_twice_class, ct_view_class,
    ct_fail_class, ct_sleep_class, ct_touch_class, ct_noperform_class, ct_badout_class,
    ct_counted_class;

/* Runs of Counted ops since the last reset. */
extern atomic_int ct_counted_runs;

/* Builds op(inputs) in g (asserts success). */
weft_var_t *ct_call(weft_graph_t *g, const weft_op_class_t *cls, const void *props, int n,
                    weft_var_t *a, weft_var_t *b);
/* A float64 root variable of the given static shape. */
weft_var_t *ct_var(weft_graph_t *g, const char *name, int ndim, const int64_t *shape);
/* A float64 tensor of shape filled with base, base+1, ... */
weft_tensor_t *ct_tensor(int ndim, const int64_t *shape, double base);

#endif
