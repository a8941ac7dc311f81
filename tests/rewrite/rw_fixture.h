/* Shared support for the rewrite tests: a graph context fixture, a compact
 * printer of expressions ("Add(x, Mul(y, 2))") used to compare graphs before
 * and after a rewrite exactly, and an evaluator comparing a rewritten fgraph's
 * outputs with reference values on seeded random data. */
#ifndef WEFT_TESTS_REWRITE_FIXTURE_H
#define WEFT_TESTS_REWRITE_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/weft.h"

typedef struct rfx {
    weft_graph_t *g;
    const weft_type_t *m34;  /* float64[3,4] */
    const weft_type_t *m44;  /* float64[4,4] */
    const weft_type_t *v4;   /* float64[4] */
    const weft_type_t *s;    /* float64[] */
    const weft_type_t *m14;  /* float64[1,4] */
    const weft_type_t *i34;  /* int32[3,4] */
    uint64_t seed;
} rfx_t;

int rfx_setup(void **state);
int rfx_teardown(void **state);

weft_var_t *rfx_var(rfx_t *f, const weft_type_t *t, const char *name);
weft_var_t *rfx_const(rfx_t *f, weft_dtype_t dt, double v); /* 0-d */
/* kind(a, b) / kind(a) in f->g (asserts success). */
weft_var_t *rfx_bin(rfx_t *f, weft_elemwise_kind_t k, weft_var_t *a, weft_var_t *b);
weft_var_t *rfx_un(rfx_t *f, weft_elemwise_kind_t k, weft_var_t *a);
/* Writes the expression of v into buf (recursive; constants by value). */
void rfx_expr(const weft_var_t *v, char *buf, size_t cap);
/* The expressions of every output of fg joined with "; ". */
void rfx_fg_expr(weft_fgraph_t *fg, char *buf, size_t cap);
/* An fgraph (no clone) over inputs/outputs, with a Supervisor protecting
 * nothing but the outputs when mutable_inputs, else protecting the inputs. */
weft_fgraph_t *rfx_fgraph(rfx_t *f, size_t n_in, weft_var_t *const *in, size_t n_out,
                          weft_var_t *const *out, bool mutable_inputs);
/* Random tensors for the inputs (uniform in [lo, hi); ints in [-3, 3]). */
void rfx_random_inputs(rfx_t *f, size_t n, weft_var_t *const *in, weft_tensor_t **vals,
                       double lo, double hi);
/* Evaluates outs into res (asserts success). Values are cloned first so
 * in-place ops cannot change the caller's tensors. */
void rfx_eval(rfx_t *f, size_t n_in, weft_var_t *const *in, weft_tensor_t *const *vals,
              size_t n_out, weft_var_t *const *outs, weft_tensor_t **res);
/* Evaluates fg's outputs running its nodes in weft_fgraph_toposort order
 * (which includes the DestroyHandler's orderings: every reader of a
 * destroyed value runs before its destroyer, unlike weft_eval's depth-first
 * order). Values are cloned first. */
void rfx_eval_fgraph(rfx_t *f, weft_fgraph_t *fg, size_t n_in, weft_var_t *const *in,
                     weft_tensor_t *const *vals, weft_tensor_t **res);
/* Asserts |a - b| <= atol + rtol |b| elementwise, same shape. */
void rfx_assert_close(const weft_tensor_t *a, const weft_tensor_t *b, double rtol, double atol);
void rfx_release(size_t n, weft_tensor_t **t);
/* Applies rw (borrowed) to fg and returns how often the rewrite `name`
 * applied (its statistics entry; 0 when it has none). */
uint64_t rfx_apply_count(weft_rewriter_t *rw, weft_fgraph_t *fg, const char *name);
/* Whether the fgraph holds an apply whose op prints as `op` ("Add", ...). */
size_t rfx_count_op(weft_fgraph_t *fg, const char *op_print);

#endif
