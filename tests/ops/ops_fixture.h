/* Shared helpers of the op tests (tests/ops/test_elemwise*.c, test_shape_ops.c,
 * test_eval.c): variables and tensors from literals, evaluation, a seeded
 * generator and a finite-difference check of one node's grad hook. */
#ifndef WEFT_TESTS_OPS_FIXTURE_H
#define WEFT_TESTS_OPS_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "weft/elemwise.h"
#include "weft/eval.h"
#include "weft/graph.h"
#include "weft/op.h"
#include "weft/shape_ops.h"
#include "weft/tensor.h"

static inline int fx_setup(void **state)
{
    weft_graph_t *g;
    if (weft_graph_create(NULL, &g) != WEFT_OK) return -1;
    *state = g;
    return 0;
}

static inline int fx_teardown(void **state)
{
    weft_graph_destroy(*state);
    return 0;
}

/* A root variable; shape entries -1 mean unknown. */
static inline weft_var_t *fx_var(weft_graph_t *g, weft_dtype_t dt, int nd, const int64_t *shape)
{
    const weft_type_t *t;
    weft_var_t *v;
    assert_int_equal(weft_type_tensor(g, dt, nd, shape, &t), WEFT_OK);
    assert_non_null(v = weft_var_create(g, t, NULL));
    return v;
}

/* An owned C-contiguous tensor holding vals (converted to dt). */
static inline weft_tensor_t *fx_tensor(weft_dtype_t dt, int nd, const int64_t *shape,
                                       const double *vals)
{
    weft_tensor_t *t;
    assert_int_equal(weft_tensor_empty(dt, nd, shape, &t), WEFT_OK);
    size_t n = weft_tensor_size(t);
    int64_t idx[WEFT_MAX_NDIM];
    for (size_t i = 0; i < n; i++) {
        size_t r = i;
        for (int d = nd - 1; d >= 0; d--) {
            idx[d] = (int64_t)(r % (size_t)shape[d]);
            r /= (size_t)shape[d];
        }
        assert_int_equal(weft_tensor_set(t, idx, vals[i]), WEFT_OK);
    }
    return t;
}

/* Evaluates one output; asserts success. Returns new. */
static inline weft_tensor_t *fx_eval(weft_graph_t *g, size_t n, weft_var_t *const *vars,
                                     weft_tensor_t *const *vals, weft_var_t *out)
{
    weft_tensor_t *r = NULL;
    weft_status_t st = weft_eval(g, n, vars, vals, 1, &out, &r);
    if (st != WEFT_OK) fprintf(stderr, "eval failed: %s\n", weft_graph_last_error(g));
    assert_int_equal(st, WEFT_OK);
    return r;
}

static inline void fx_expect(const weft_tensor_t *t, const double *want, size_t n, double tol)
{
    assert_int_equal(weft_tensor_size(t), n);
    for (size_t i = 0; i < n; i++) {
        double v = weft_tensor_flat_get(t, i);
        if (isnan(want[i])) {
            assert_true(isnan(v));
        } else if (fabs(v - want[i]) > tol * (1.0 + fabs(want[i]))) {
            fprintf(stderr, "element %zu: got %.17g want %.17g\n", i, v, want[i]);
            fail();
        }
    }
}

static inline void fx_expect_status(weft_graph_t *g, weft_status_t got, weft_status_t want,
                                    const char *substr)
{
    if (got != want || !strstr(weft_graph_last_error(g), substr))
        fprintf(stderr, "status %s, message: %s\n", weft_status_name(got),
                weft_graph_last_error(g));
    assert_int_equal(got, want);
    assert_non_null(strstr(weft_graph_last_error(g), substr));
}

/* A constructor's failure: got is NULL, the kept error has status want and
 * a message containing substr; then the error is cleared for the next one. */
static inline void fx_expect_error(weft_graph_t *g, const void *got, weft_status_t want,
                                   const char *substr)
{
    const char *msg = weft_graph_error_message(g);
    if (got || weft_graph_error(g) != want || !strstr(msg, substr))
        fprintf(stderr, "status %s, message: %s\n", weft_status_name(weft_graph_error(g)), msg);
    assert_null(got);
    assert_int_equal(weft_graph_error(g), want);
    assert_non_null(strstr(msg, substr));
    weft_graph_clear_error(g);
}

/* splitmix64: seeded, portable. */
static inline double fx_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0;
}

/* A random tensor, uniform in [lo, hi); with `away` > 0 values in
 * (-away, away) are pushed out of it (keeps kinks of abs/relu/max away). */
static inline weft_tensor_t *fx_random(weft_dtype_t dt, int nd, const int64_t *shape, double lo,
                                       double hi, double away, uint64_t *seed)
{
    size_t n = 1;
    for (int d = 0; d < nd; d++) n *= (size_t)shape[d];
    double *v = malloc((n + 1) * sizeof *v);
    for (size_t i = 0; i < n; i++) {
        v[i] = lo + (hi - lo) * fx_rand(seed);
        if (away > 0 && fabs(v[i]) < away) v[i] = v[i] < 0 ? -away : away;
    }
    weft_tensor_t *t = fx_tensor(dt, nd, shape, v);
    free(v);
    return t;
}

/* Checks node(out)'s grad hook against central finite differences of
 * C(x) = sum(out(x) * R), R random, for every float64 input among vars (the
 * node's inputs, in order; vals their values). A NULL (disconnected) gradient
 * must be numerically zero. */
static inline void fx_check_grad(weft_graph_t *g, weft_var_t *out, size_t n, weft_var_t **vars,
                                 weft_tensor_t **vals, uint64_t seed)
{
    weft_apply_t *node = weft_var_owner(out);
    const weft_op_class_t *cls = weft_op_class(weft_apply_op(node));
    assert_non_null(cls->grad);
    weft_var_t *gz; /* the output gradient: a root of out's type */
    assert_non_null(gz = weft_var_create(g, weft_var_type(out), "gz"));
    weft_var_t *grads[8] = {NULL};
    assert_int_equal(cls->grad(g, node, &gz, grads), WEFT_OK);
    weft_tensor_t *y0 = fx_eval(g, n, vars, vals, out);
    weft_tensor_t *R = fx_random(WEFT_FLOAT64, weft_tensor_ndim(y0), weft_tensor_shape(y0), 0.5,
                                 1.5, 0, &seed);
    weft_var_t *all[9];
    weft_tensor_t *allv[9];
    for (size_t i = 0; i < n; i++) {
        all[i] = vars[i];
        allv[i] = vals[i];
    }
    all[n] = gz;
    allv[n] = R;
    for (size_t i = 0; i < n; i++) {
        if (weft_tensor_dtype(vals[i]) != WEFT_FLOAT64) continue;
        /* a NULL gradient (disconnected) must be numerically zero */
        weft_tensor_t *sym = grads[i] ? fx_eval(g, n + 1, all, allv, grads[i]) : NULL;
        size_t m = weft_tensor_size(vals[i]);
        if (sym) assert_int_equal(weft_tensor_size(sym), m);
        for (size_t j = 0; j < m; j++) {
            double *x = (double *)weft_tensor_data(vals[i]) + j, x0 = *x, c[2];
            for (int s = 0; s < 2; s++) {
                *x = x0 + (s ? -1e-6 : 1e-6);
                weft_tensor_t *y = fx_eval(g, n, vars, vals, out);
                c[s] = 0;
                for (size_t k = 0; k < weft_tensor_size(y); k++)
                    c[s] += weft_tensor_flat_get(y, k) * weft_tensor_flat_get(R, k);
                weft_tensor_release(y);
            }
            *x = x0;
            double num = (c[0] - c[1]) / 2e-6, got = sym ? weft_tensor_flat_get(sym, j) : 0.0;
            if (fabs(num - got) > 1e-5 * (1.0 + fabs(num))) {
                fprintf(stderr, "%s: input %zu element %zu: numeric %.10g symbolic %.10g\n",
                        cls->name, i, j, num, got);
                fail();
            }
        }
        weft_tensor_release(sym);
    }
    weft_tensor_release(R);
    weft_tensor_release(y0);
}

#endif /* WEFT_TESTS_OPS_FIXTURE_H */
