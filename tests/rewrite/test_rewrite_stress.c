/* Randomized equivalence (label stress): seeded random expression graphs
 * over three float64[3,4] inputs and one float64[1,4] input, mixing
 * ordinary ops with shapes the rewrites target (x*1, x+0, x*0, x-x,
 * neg(neg x), exp(log(pos)), log(exp x), double transposes, x*y/y with y
 * non-zero, repeated subexpressions, constant subgraphs, scaled matrix
 * products added to a matrix). Each graph is evaluated, rewritten with the
 * full fast_run pipeline (inputs protected, so in-place ops only reuse
 * intermediates), evaluated again: every output must agree within
 * rtol 1e-9, atol 1e-9 (the rewrites only reassociate nothing, so the
 * differences are a few ulps: Gemm vs dot+add). The rewritten graph runs in
 * its toposort order (DestroyHandler orderings included). The seed is printed;
 * WEFT_SEED overrides it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rw_fixture.h"

#ifdef WEFT_SANITIZED
#define N_GRAPHS 40
#else
#define N_GRAPHS 300
#endif
#define POOL 24

static uint64_t rng;

static unsigned pick(unsigned n)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)((rng >> 33) % n);
}

static weft_var_t *B(rfx_t *f, weft_elemwise_kind_t k, weft_var_t *a, weft_var_t *b)
{
    weft_var_t *r;
    assert_non_null(r = weft_binary(f->g, k, a, b));
    return r;
}

static weft_var_t *U(rfx_t *f, weft_elemwise_kind_t k, weft_var_t *a)
{
    weft_var_t *r;
    assert_non_null(r = weft_unary(f->g, k, a));
    return r;
}

static weft_var_t *C(rfx_t *f, double v)
{
    return rfx_const(f, WEFT_FLOAT64, v);
}

/* One random node over pool entries (all float64[3,4] or broadcastable to it). */
static weft_var_t *random_node(rfx_t *f, weft_var_t **pool, size_t n)
{
    weft_var_t *a = pool[pick((unsigned)n)], *b = pool[pick((unsigned)n)], *t;
    switch (pick(16)) {
    case 0: return B(f, WEFT_ELEMWISE_ADD, a, b);
    case 1: return B(f, WEFT_ELEMWISE_SUB, a, b);
    case 2: return B(f, WEFT_ELEMWISE_MUL, a, b);
    case 3: return U(f, WEFT_ELEMWISE_TANH, a);
    case 4: return B(f, WEFT_ELEMWISE_MUL, a, C(f, 1.0));
    case 5: return B(f, WEFT_ELEMWISE_ADD, C(f, 0.0), a);
    case 6: return B(f, WEFT_ELEMWISE_SUB, a, a);
    case 7: return U(f, WEFT_ELEMWISE_NEG, U(f, WEFT_ELEMWISE_NEG, a));
    case 8:
        return U(f, WEFT_ELEMWISE_EXP,
                 U(f, WEFT_ELEMWISE_LOG, U(f, WEFT_ELEMWISE_EXP, U(f, WEFT_ELEMWISE_TANH, a))));
    case 9: return U(f, WEFT_ELEMWISE_LOG, U(f, WEFT_ELEMWISE_EXP, U(f, WEFT_ELEMWISE_TANH, a)));
    case 10:
        assert_non_null(t = weft_transpose(f->g, a));
        assert_non_null(t = weft_transpose(f->g, t));
        return t;
    case 11: /* x*y/y with y = exp(tanh b) > 0 */
        t = U(f, WEFT_ELEMWISE_EXP, U(f, WEFT_ELEMWISE_TANH, b));
        return B(f, WEFT_ELEMWISE_DIV, B(f, WEFT_ELEMWISE_MUL, a, t), t);
    case 12: return B(f, WEFT_ELEMWISE_MUL, a, B(f, WEFT_ELEMWISE_ADD, C(f, 2.0), C(f, 0.5)));
    case 13: return B(f, WEFT_ELEMWISE_MUL, B(f, WEFT_ELEMWISE_ADD, a, b), C(f, 0.0));
    case 14: { /* a + 0.5 * (b @ I-ish 4x4 constant) -> Gemm */
        double m[16];
        for (int i = 0; i < 16; i++) m[i] = (i % 5 == 0) ? 1.0 : 0.125 * (double)(i % 3);
        weft_var_t *w, *d, *s;
        assert_non_null(w = weft_constant_create(f->g, f->m44, m, sizeof m));
        assert_non_null(d = weft_dot(f->g, b, w));
        int64_t s11[] = {1, 1};
        const weft_type_t *t11;
        assert_int_equal(weft_type_tensor(f->g, WEFT_FLOAT64, 2, s11, &t11), WEFT_OK);
        double half = 0.5;
        assert_non_null(s = weft_constant_create(f->g, t11, &half, sizeof half));
        return B(f, WEFT_ELEMWISE_ADD, a, B(f, WEFT_ELEMWISE_MUL, s, d));
    }
    default:
        return B(f, WEFT_ELEMWISE_ADD, U(f, WEFT_ELEMWISE_TANH, a), U(f, WEFT_ELEMWISE_TANH, a));
    }
}

static void one_graph(rfx_t *f, unsigned g_index)
{
    weft_var_t *in[4] = {rfx_var(f, f->m34, "a"), rfx_var(f, f->m34, "b"), rfx_var(f, f->m34, "c"),
                         rfx_var(f, f->m14, "r")};
    weft_var_t *pool[POOL + 4];
    size_t n = 4;
    memcpy(pool, in, sizeof in);
    pool[3] = B(f, WEFT_ELEMWISE_ADD, in[3], in[0]); /* the (1,4) input broadcast to (3,4) */
    size_t steps = 4 + pick(POOL - 4);
    for (size_t s = 0; s < steps; s++) {
        weft_var_t *v = random_node(f, pool, n);
        pool[n++] = v;
    }
    weft_var_t *outs[2] = {pool[n - 1], pool[4 + pick((unsigned)(n - 4))]};
    weft_tensor_t *vals[4], *ref[2], *got[2];
    rfx_random_inputs(f, 4, in, vals, -1.5, 1.5);
    rfx_eval(f, 4, in, vals, 2, outs, ref);
    weft_fgraph_t *fg = rfx_fgraph(f, 4, in, 2, outs, false);
    weft_status_t st = weft_rewrite_mode(fg, "fast_run", 0, NULL, 0, NULL, NULL);
    if (st != WEFT_OK) fprintf(stderr, "graph %u: %s\n", g_index, weft_fgraph_last_error(fg));
    assert_int_equal(st, WEFT_OK);
    assert_int_equal(weft_fgraph_check_integrity(fg), WEFT_OK);
    assert_int_equal(weft_fgraph_validate(fg), WEFT_OK);
    /* in-place nodes need the DestroyHandler's orderings: run in toposort order */
    rfx_eval_fgraph(f, fg, 4, in, vals, got);
    for (int k = 0; k < 2; k++) {
        bool eq = false;
        assert_int_equal(weft_tensor_allclose(got[k], ref[k], 1e-9, 1e-9, &eq), WEFT_OK);
        if (!eq) fprintf(stderr, "graph %u output %d differs\n", g_index, k);
        assert_true(eq);
    }
    rfx_release(2, ref);
    rfx_release(2, got);
    rfx_release(4, vals);
    weft_fgraph_destroy(fg);
}

static void test_rewrite_stress_fast_run_preserves_values(void **state)
{
    rfx_t *f = *state;
    uint64_t seed = getenv("WEFT_SEED") ? strtoull(getenv("WEFT_SEED"), NULL, 10) : 20261122u;
    printf("test_rewrite_stress seed=%llu graphs=%d\n", (unsigned long long)seed, N_GRAPHS);
    rng = seed;
    f->seed = seed;
    for (unsigned i = 0; i < N_GRAPHS; i++) one_graph(f, i);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_rewrite_stress_fast_run_preserves_values, rfx_setup,
                                        rfx_teardown),
    };
    return cmocka_run_group_tests_name("rewrite_stress", tests, NULL, NULL);
}
