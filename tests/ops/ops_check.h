/* Shared helpers of the reduction and linear algebra tests (test_reduce.c,
 * test_linalg.c) and the gradient tests: tensors from literal values, graph
 * inputs, one-call evaluation, element comparison, a seeded generator and a
 * verify_grad wrapper that prints the failure. */
#ifndef WEFT_TESTS_OPS_CHECK_H
#define WEFT_TESTS_OPS_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/weft.h"

/* A contiguous tensor of dtype/shape holding vals (C order; NULL: zeros).
 * Fails the test on error. */
weft_tensor_t *ck_tensor(weft_dtype_t dt, int nd, const int64_t *shape, const double *vals);
/* A root variable of static type dt[shape]. */
weft_var_t *ck_var(weft_graph_t *g, weft_dtype_t dt, int nd, const int64_t *shape);
/* Evaluates out given inputs; returns the status, *res (NULL on error). */
weft_status_t ck_eval(weft_graph_t *g, size_t n_in, weft_var_t *const *in,
                      weft_tensor_t *const *vals, weft_var_t *out, weft_tensor_t **res);
/* Asserts t's shape (nd, shape) and every element (C order) within tol of
 * want (NaN matches NaN). */
void ck_expect(const weft_tensor_t *t, int nd, const int64_t *shape, const double *want,
               double tol);
/* Evaluates y (built on x) in g at x = xv and checks its dtype, shape and
 * values within tol (ck_expect). */
void ck_expect_eval(weft_graph_t *g, weft_var_t *x, weft_tensor_t *xv, weft_var_t *y,
                    weft_dtype_t dt, int nd, const int64_t *shape, const double *want,
                    double tol);
/* The same on inputs xs[0..n) at vals. */
void ck_expect_eval_n(weft_graph_t *g, size_t n, weft_var_t *const *xs,
                      weft_tensor_t *const *vals, weft_var_t *y, weft_dtype_t dt, int nd,
                      const int64_t *shape, const double *want, double tol);
/* splitmix64 and a uniform double in [lo, hi). */
uint64_t ck_rand(uint64_t *state);
double ck_uniform(uint64_t *state, double lo, double hi);
/* Seed for randomized tests: WEFT_TEST_SEED from the environment, else fixed;
 * printed so a failure can be replayed. */
uint64_t ck_seed(const char *test);
/* ck_verify of fn at two float64 points drawn uniform in [-1, 1) with seeds
 * seed and seed + 1, of shapes sa (nda dims) and sb (ndb dims). */
void ck_verify_random2(weft_verify_grad_fn fn, void *user, int nda, const int64_t *sa, int ndb,
                       const int64_t *sb, uint64_t seed);
/* Asserts got ends with msg and contains site (a creation site such as
 * "test_x.c:"), printing got first when it does not end with msg. */
void ck_expect_tail(const char *got, const char *msg, const char *site);
/* Runs weft_verify_grad with default options and asserts WEFT_OK, printing
 * the result's message first when it fails. */
void ck_verify(weft_verify_grad_fn fn, void *user, size_t n_in, weft_tensor_t *const *points);
/* A random float tensor (uniform [lo, hi)). */
weft_tensor_t *ck_random(weft_dtype_t dt, int nd, const int64_t *shape, double lo, double hi,
                         uint64_t seed);
/* Writes a saved graph's text to the file $WEFT_SAVED_GRAPH names, if set:
 * how the graphs under tests/ops/data/ were made (tests/io's schema check
 * validates them). */
void ck_write_saved_graph(const char *text);

#endif /* WEFT_TESTS_OPS_CHECK_H */
