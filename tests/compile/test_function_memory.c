/* Memory of compiled functions: intermediates freed as soon as their last
 * reader ran (peak live buffers of a chain), buffers recycled through the
 * buffer pool, and a steady-state call that allocates nothing (every
 * malloc/calloc/realloc/aligned_alloc of the process is counted through the
 * linker's --wrap). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "compile_test_ops.h"
#include "support/alloc_count.h"

/* ---- fixtures --------------------------------------------------------------- */

static weft_graph_t *g;
static const int64_t S64[1] = {64}; /* 512 bytes: above the kept-in-cell size */

static int setup(void **state)
{
    (void)state;
    return weft_graph_create(NULL, &g) == WEFT_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    weft_graph_destroy(g);
    return 0;
}

/* y = Twice^depth(x) */
static weft_function_t *chain(int depth, int threads, bool profile, weft_var_t **x_out)
{
    weft_var_t *x = ct_var(g, "x", 1, S64), *v = x;
    for (int i = 0; i < depth; i++) v = ct_call(g, &ct_twice_class, NULL, 1, v, NULL);
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.mode = "none";
    o.threads = threads;
    o.profile = profile;
    weft_function_t *f = NULL;
    assert_int_equal(weft_function_compile(1, &x, 1, &v, 0, NULL, &o, &f), WEFT_OK);
    if (x_out) *x_out = x;
    return f;
}

static void stats(const weft_function_t *f, weft_function_stats_t *st)
{
    memset(st, 0, sizeof *st);
    st->size = sizeof *st;
    assert_int_equal(weft_function_stats(f, st), WEFT_OK);
}

/* A root variable of dtype and static shape. */
static weft_var_t *var_of(weft_dtype_t dtype, int ndim, const int64_t *shape, const char *name)
{
    const weft_type_t *t;
    assert_int_equal(weft_type_tensor(g, dtype, ndim, shape, &t), WEFT_OK);
    weft_var_t *v;
    assert_non_null(v = weft_var_create(g, t, name));
    return v;
}

/* A chain frees each intermediate after its reader: 2 live buffers at most.
 * The memory plan puts the 7 intermediates in an arena of 2 buffers (every
 * schedule of a chain is the sequential one); the output's producer writes
 * into the caller's y (docs/execution.md §4.7): the pool allocates nothing. */
static void test_memory_chain_frees_intermediates_after_last_reader(void **state)
{
    (void)state;
    weft_function_t *f = chain(8, 1, true, NULL);
    weft_tensor_t *x = ct_tensor(1, S64, 1.0), *y = ct_tensor(1, S64, 0.0);
    for (int c = 0; c < 5; c++) {
        assert_int_equal(weft_function_call(f, 1, &x, 1, &y), WEFT_OK);
        assert_true(weft_tensor_flat_get(y, 3) == 256.0 * 4.0);
    }
    weft_function_stats_t st;
    stats(f, &st);
    assert_int_equal(st.calls, 5);
    assert_int_equal(st.peak_live_buffers, 2);
    assert_int_equal(st.buffers_allocated, 0);
    assert_int_equal(st.buffers_reused, 0);
    assert_int_equal(st.call_states, 1);
    weft_profile_t *p;
    assert_int_equal(weft_profile_create(f, WEFT_PROFILE_TOTAL, &p), WEFT_OK);
    assert_int_equal(p->peak_bytes, 2 * 512);
    assert_int_equal(p->arena_bytes, 2 * 512);
    assert_int_equal(p->sequential_peak_bytes, 2 * 512);
    weft_profile_destroy(p);
    weft_tensor_release(x);
    weft_tensor_release(y);
    weft_function_destroy(f);
}

/* a = Twice(x), b = Twice(a), c = Add(a, b), d = Twice(c): a lives until c
 * ran, so a, b and c are alive together while c is computed - the sequential
 * peak, 3 buffers. The memory plan's arena holds exactly a, b and c (d is
 * the output: written into the caller's ty, it takes no buffer). */
static void test_memory_diamond_peak_matches_sequential_run(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S64);
    weft_var_t *a = ct_call(g, &ct_twice_class, NULL, 1, x, NULL);
    weft_var_t *b = ct_call(g, &ct_twice_class, NULL, 1, a, NULL);
    weft_var_t *c = ct_call(g, &ct_add_class, NULL, 2, a, b);
    weft_var_t *d = ct_call(g, &ct_twice_class, NULL, 1, c, NULL);
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.mode = "none";
    o.threads = 1;
    o.profile = true;
    weft_function_t *f = NULL;
    assert_int_equal(weft_function_compile(1, &x, 1, &d, 0, NULL, &o, &f), WEFT_OK);
    weft_tensor_t *tx = ct_tensor(1, S64, 1.0), *ty = ct_tensor(1, S64, 0.0);
    for (int i = 0; i < 3; i++) assert_int_equal(weft_function_call(f, 1, &tx, 1, &ty), WEFT_OK);
    assert_true(weft_tensor_flat_get(ty, 0) == 2 * (2 + 4));
    weft_function_stats_t st;
    stats(f, &st);
    assert_int_equal(st.peak_live_buffers, 3); /* a, b and c while c is computed */
    assert_int_equal(st.buffers_allocated, 0);
    weft_profile_t *p;
    assert_int_equal(weft_profile_create(f, WEFT_PROFILE_LAST_CALL, &p), WEFT_OK);
    assert_int_equal(p->arena_bytes, 3 * 512);
    assert_int_equal(p->sequential_peak_bytes, 3 * 512);
    weft_profile_destroy(p);
    weft_tensor_release(tx);
    weft_tensor_release(ty);
    weft_function_destroy(f);
}

static void steady_state_allocates_nothing(int threads)
{
    weft_function_t *f = chain(6, threads, false, NULL);
    weft_tensor_t *x = ct_tensor(1, S64, 1.0), *y = ct_tensor(1, S64, 0.0);
    for (int c = 0; c < 5; c++) assert_int_equal(weft_function_call(f, 1, &x, 1, &y), WEFT_OK);
    alloc_count_start();
    for (int c = 0; c < 20; c++) assert_int_equal(weft_function_call(f, 1, &x, 1, &y), WEFT_OK);
    long n = alloc_count_stop();
    assert_int_equal(n, 0);
    assert_true(weft_tensor_flat_get(y, 1) == 2.0 * 64.0);
    weft_tensor_release(x);
    weft_tensor_release(y);
    weft_function_destroy(f);
}

/* An intermediate read through a view (here a Sum's keepdims result dropped
 * to 1-d by a DimShuffle) goes back to the buffer pool at the end of the
 * call even though the view still held its buffer when its own cell was
 * emptied: with an update b <- b - 0.05 * sum_rows(G), warm calls take every
 * buffer from the pool (none allocated) at T=1 and T=2 and b's value is
 * exact. The graph's two DimShuffle nodes (the one above and the broadcast
 * of the constant 0.05, not folded in mode "none") build their views in the
 * handles their slots kept from the previous call: nothing is allocated at
 * all. */
static void test_memory_view_of_intermediate_allocates_nothing_when_warm(void **state)
{
    (void)state;
    for (int threads = 1; threads <= 2; threads++) {
        const int64_t sg[2] = {64, 256}, sb[1] = {256};
        weft_var_t *vg = var_of(WEFT_FLOAT64, 2, sg, "G"), *vb = var_of(WEFT_FLOAT64, 1, sb, "b");
        weft_var_t *s, *d, *m, *nb;
        const int axis0 = 0, keep1[1] = {1};
        assert_non_null(s = weft_sum(g, vg, 1, &axis0, true));
        assert_non_null(d = weft_dimshuffle(g, s, 1, keep1));
        assert_non_null(m = weft_binary_scalar(g, WEFT_ELEMWISE_MUL, d, 0.05));
        assert_non_null(nb = weft_sub(g, vb, m));
        weft_var_t *ins[2] = {vg, vb};
        weft_update_t up = {vb, nb};
        weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
        o.mode = "none";
        o.threads = threads;
        weft_function_t *f = NULL;
        assert_int_equal(weft_function_compile(2, ins, 0, NULL, 1, &up, &o, &f), WEFT_OK);
        weft_tensor_t *tgv = NULL, *tbv = NULL;
        assert_int_equal(weft_tensor_full(WEFT_FLOAT64, 2, sg, 1.0, &tgv), WEFT_OK);
        assert_int_equal(weft_tensor_full(WEFT_FLOAT64, 1, sb, 0.0, &tbv), WEFT_OK);
        weft_tensor_t *args[2] = {tgv, tbv};
        for (int c = 0; c < 5; c++) assert_int_equal(weft_function_call(f, 2, args, 0, NULL), WEFT_OK);
        weft_function_stats_t st;
        stats(f, &st);
        uint64_t allocated_warm = st.buffers_allocated;
        alloc_count_start();
        for (int c = 0; c < 20; c++)
            assert_int_equal(weft_function_call(f, 2, args, 0, NULL), WEFT_OK);
        long n = alloc_count_stop();
        stats(f, &st);
        assert_int_equal(st.buffers_allocated, allocated_warm);
        assert_int_equal(n, 0);
        double want = 0.0; /* 25 calls of b -= 64 * 0.05, rounded as the kernels do */
        for (int c = 0; c < 25; c++) want = want - 64.0 * 0.05;
        assert_true(weft_tensor_flat_get(tbv, 255) == want);
        weft_tensor_release(tgv);
        weft_tensor_release(tbv);
        weft_function_destroy(f);
    }
}

/* Every view op and the subtensor updates in one graph of mode "none":
 * Reshape as a view and as a copy (of a transpose), a Subtensor with a
 * negative step, IncSubtensor converting an int32 y, SetSubtensor
 * broadcasting a float32 y. Warm calls allocate nothing (handles from the
 * slots' stashes, buffers from the pool) and every output is exact. */
static weft_var_t *views_graph(weft_var_t *x, weft_var_t *y, weft_var_t *yb, weft_var_t **outs)
{
    weft_var_t *a, *t;
    const int64_t s64x8[2] = {64, 8}, s512[1] = {512};
    weft_slice_t sub[2] = {WEFT_SLICE(1, 7, 2), WEFT_SLICE(WEFT_SLICE_NONE, WEFT_SLICE_NONE, -1)};
    weft_slice_t row2[1] = {WEFT_SLICE_AT(2)}, col5[2] = {WEFT_SLICE_ALL, WEFT_SLICE_AT(5)};
    assert_non_null(a = weft_binary_scalar(g, WEFT_ELEMWISE_MUL, x, 2.0));
    assert_non_null(outs[0] = weft_reshape(g, a, 2, s64x8));
    assert_non_null(t = weft_transpose(g, a));
    assert_non_null(outs[1] = weft_reshape(g, t, 1, s512));
    assert_non_null(outs[2] = weft_subtensor(g, a, 2, sub));
    assert_non_null(outs[3] = weft_inc_subtensor(g, a, y, 1, row2));
    assert_non_null(outs[4] = weft_set_subtensor(g, a, yb, 2, col5));
    return a;
}

static void check_views_outputs(weft_tensor_t *const *o, int call)
{
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 64; j++) {
            double a = 2.0 * (i * 64 + j + call);
            size_t k = (size_t)(i * 64 + j);
            assert_true(weft_tensor_flat_get(o[0], k) == a);
            assert_true(weft_tensor_flat_get(o[1], (size_t)(j * 8 + i)) == a);
            if (i >= 1 && i < 7 && i % 2 == 1)
                assert_true(weft_tensor_flat_get(o[2], (size_t)((i - 1) / 2 * 64 + 63 - j)) == a);
            assert_true(weft_tensor_flat_get(o[3], k) == a + (i == 2 ? j - 7 : 0));
            assert_true(weft_tensor_flat_get(o[4], k) == (j == 5 ? 0.5 : a));
        }
}

static void test_memory_view_ops_and_subtensor_updates_allocate_nothing_when_warm(void **state)
{
    (void)state;
    const int64_t sx[2] = {8, 64}, sy[1] = {64}, s1[1] = {1};
    weft_var_t *x = var_of(WEFT_FLOAT64, 2, sx, "x"), *y = var_of(WEFT_INT32, 1, sy, "y");
    weft_var_t *yb = var_of(WEFT_FLOAT32, 1, s1, "yb"), *outs[5];
    views_graph(x, y, yb, outs);
    weft_var_t *ins[3] = {x, y, yb};
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.mode = "none";
    o.threads = 1;
    weft_function_t *f = NULL;
    assert_int_equal(weft_function_compile(3, ins, 5, outs, 0, NULL, &o, &f), WEFT_OK);
    weft_tensor_t *vx = NULL, *vy = NULL, *vb = NULL, *res[5];
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, 2, sx, &vx), WEFT_OK);
    assert_int_equal(weft_tensor_empty(WEFT_INT32, 1, sy, &vy), WEFT_OK);
    assert_int_equal(weft_tensor_full(WEFT_FLOAT32, 1, s1, 0.5, &vb), WEFT_OK);
    for (int j = 0; j < 64; j++) ((int32_t *)weft_tensor_data(vy))[j] = j - 7;
    const int64_t shapes[5][2] = {{64, 8}, {512, 0}, {3, 64}, {8, 64}, {8, 64}};
    for (int k = 0; k < 5; k++)
        assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, k == 1 ? 1 : 2, shapes[k], &res[k]),
                         WEFT_OK);
    weft_tensor_t *args[3] = {vx, vy, vb};
    for (int call = 0; call < 8; call++) {
        for (int e = 0; e < 512; e++) ((double *)weft_tensor_data(vx))[e] = e + call;
        if (call == 3) alloc_count_start();
        assert_int_equal(weft_function_call(f, 3, args, 5, res), WEFT_OK);
        check_views_outputs(res, call);
    }
    assert_int_equal(alloc_count_stop(), 0);
    for (int k = 0; k < 5; k++) weft_tensor_release(res[k]);
    weft_tensor_release(vx);
    weft_tensor_release(vy);
    weft_tensor_release(vb);
    weft_function_destroy(f);
}

/* Kernels that need scratch take it from the buffer pool: an elementwise
 * Add converting an int32 input, an Argmax with more than 64 groups, the
 * gradient of a Max (per-group value and index) and a Dot whose left operand
 * (inner stride 2) BLAS cannot read. Warm calls allocate nothing; results
 * are exact (the Dot to rounding). */
static double scratch_x(int i, int j)
{
    return (double)((i * 5 + j * 3) % 8) + 0.001 * i;
}

static void scratch_fill(weft_tensor_t *x, weft_tensor_t *k, weft_tensor_t *w)
{
    for (int i = 0; i < 100; i++)
        for (int j = 0; j < 8; j++) {
            ((double *)weft_tensor_data(x))[i * 8 + j] = scratch_x(i, j);
            ((int32_t *)weft_tensor_data(k))[i * 8 + j] = i - j;
        }
    for (int e = 0; e < 12; e++) ((double *)weft_tensor_data(w))[e] = 0.5 * e - 2.0;
}

static void scratch_check(weft_tensor_t *const *o)
{
    for (int i = 0; i < 100; i++) {
        int jmax = 0;
        for (int j = 0; j < 8; j++) {
            size_t e = (size_t)(i * 8 + j);
            assert_true(weft_tensor_flat_get(o[0], e) == scratch_x(i, j) + (i - j));
            if (scratch_x(i, j) > scratch_x(i, jmax)) jmax = j;
        }
        assert_true(weft_tensor_flat_get(o[1], (size_t)i) == jmax);
        for (int j = 0; j < 8; j++)
            assert_true(weft_tensor_flat_get(o[2], (size_t)(i * 8 + j)) == (j == jmax));
        for (int c = 0; c < 3; c++) {
            double want = 0.0;
            for (int q = 0; q < 4; q++) want += scratch_x(i, 2 * q) * (0.5 * (q * 3 + c) - 2.0);
            assert_true(fabs(weft_tensor_flat_get(o[3], (size_t)(i * 3 + c)) - want) < 1e-12);
        }
    }
}

static weft_function_t *scratch_function(void)
{
    const int64_t sx[2] = {100, 8}, sw[2] = {4, 3};
    weft_var_t *x = var_of(WEFT_FLOAT64, 2, sx, "x"), *k = var_of(WEFT_INT32, 2, sx, "k");
    weft_var_t *w = var_of(WEFT_FLOAT64, 2, sw, "W"), *m, *cost, *strided, *outs[4];
    const int axis1 = 1;
    weft_slice_t every2[2] = {WEFT_SLICE_ALL, WEFT_SLICE(WEFT_SLICE_NONE, WEFT_SLICE_NONE, 2)};
    assert_non_null(outs[0] = weft_add(g, x, k));
    assert_non_null(outs[1] = weft_argmax(g, x, 1, false));
    assert_non_null(m = weft_max(g, x, 1, &axis1, false));
    assert_non_null(cost = weft_sum(g, m, 0, NULL, false));
    assert_non_null(weft_grads(g, cost, 1, &x, NULL, &outs[2]));
    assert_non_null(strided = weft_subtensor(g, x, 2, every2));
    assert_non_null(outs[3] = weft_dot(g, strided, w));
    weft_var_t *ins[3] = {x, k, w};
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.mode = "none";
    o.threads = 1;
    weft_function_t *f = NULL;
    assert_int_equal(weft_function_compile(3, ins, 4, outs, 0, NULL, &o, &f), WEFT_OK);
    return f;
}

static void test_memory_kernel_scratch_comes_from_the_pool(void **state)
{
    (void)state;
    weft_function_t *f = scratch_function();
    const int64_t sx[2] = {100, 8}, sw[2] = {4, 3}, s100[1] = {100}, sd[2] = {100, 3};
    weft_tensor_t *vx = NULL, *vk = NULL, *vw = NULL, *res[4] = {NULL};
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, 2, sx, &vx), WEFT_OK);
    assert_int_equal(weft_tensor_empty(WEFT_INT32, 2, sx, &vk), WEFT_OK);
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, 2, sw, &vw), WEFT_OK);
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, 2, sx, &res[0]), WEFT_OK);
    assert_int_equal(weft_tensor_empty(WEFT_INT64, 1, s100, &res[1]), WEFT_OK);
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, 2, sx, &res[2]), WEFT_OK);
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, 2, sd, &res[3]), WEFT_OK);
    scratch_fill(vx, vk, vw);
    weft_tensor_t *args[3] = {vx, vk, vw};
    for (int c = 0; c < 3; c++) assert_int_equal(weft_function_call(f, 3, args, 4, res), WEFT_OK);
    alloc_count_start();
    for (int c = 0; c < 5; c++) assert_int_equal(weft_function_call(f, 3, args, 4, res), WEFT_OK);
    assert_int_equal(alloc_count_stop(), 0);
    scratch_check(res);
    for (int k = 0; k < 4; k++) weft_tensor_release(res[k]);
    weft_tensor_release(vx);
    weft_tensor_release(vk);
    weft_tensor_release(vw);
    weft_function_destroy(f);
}

/* An OpFromGraph run through its perform hook (not inlined; mode "none"):
 * its inner values come from the function's buffer pool and go back to it,
 * its inner views (Reshape, transpose) reuse their slots' handles, and its
 * output that is an inner view comes out as a copy. Warm calls allocate
 * nothing; results are exact. */
static weft_function_t *ofg_function(void)
{
    const int64_t sx[2] = {8, 64}, s64x8[2] = {64, 8};
    weft_var_t *a = var_of(WEFT_FLOAT64, 2, sx, "a"), *b, *r, *inner[2], *x, *outs[2];
    const int axis1 = 1;
    assert_non_null(b = weft_binary_scalar(g, WEFT_ELEMWISE_MUL, a, 2.0));
    assert_non_null(r = weft_reshape(g, b, 2, s64x8));
    assert_non_null(inner[0] = weft_sum(g, r, 1, &axis1, false));
    assert_non_null(inner[1] = weft_transpose(g, b));
    weft_ofg_options_t oo = WEFT_OFG_OPTIONS_INIT;
    oo.inline_expand = false;
    const weft_op_t *op = NULL;
    assert_int_equal(weft_ofg_create(g, 1, &a, 2, inner, &oo, &op), WEFT_OK);
    x = var_of(WEFT_FLOAT64, 2, sx, "x");
    weft_apply_t *node = NULL;
    assert_non_null(node = weft_apply_create(g, op, 1, &x));
    outs[0] = weft_apply_output(node, 0);
    outs[1] = weft_apply_output(node, 1);
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.mode = "none";
    o.threads = 1;
    weft_function_t *f = NULL;
    assert_int_equal(weft_function_compile(1, &x, 2, outs, 0, NULL, &o, &f), WEFT_OK);
    return f;
}

static void test_memory_opfromgraph_perform_allocates_nothing_when_warm(void **state)
{
    (void)state;
    weft_function_t *f = ofg_function();
    const int64_t sx[2] = {8, 64}, s64[1] = {64}, st[2] = {64, 8};
    weft_tensor_t *vx = NULL, *res[2] = {NULL};
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, 2, sx, &vx), WEFT_OK);
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, 1, s64, &res[0]), WEFT_OK);
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, 2, st, &res[1]), WEFT_OK);
    double *xd = weft_tensor_data(vx);
    for (int e = 0; e < 512; e++) xd[e] = e % 13 - 6;
    for (int c = 0; c < 3; c++) assert_int_equal(weft_function_call(f, 1, &vx, 2, res), WEFT_OK);
    alloc_count_start();
    for (int c = 0; c < 5; c++) assert_int_equal(weft_function_call(f, 1, &vx, 2, res), WEFT_OK);
    assert_int_equal(alloc_count_stop(), 0);
    for (int p = 0; p < 64; p++) {
        double want = 0.0;
        for (int q = 0; q < 8; q++) want += 2.0 * xd[p * 8 + q];
        assert_true(weft_tensor_flat_get(res[0], (size_t)p) == want);
    }
    for (int j = 0; j < 64; j++)
        for (int i = 0; i < 8; i++)
            assert_true(weft_tensor_flat_get(res[1], (size_t)(j * 8 + i)) == 2.0 * xd[i * 64 + j]);
    weft_tensor_release(res[0]);
    weft_tensor_release(res[1]);
    weft_tensor_release(vx);
    weft_function_destroy(f);
}

static void test_memory_steady_state_call_allocates_nothing_t1(void **state)
{
    (void)state;
    steady_state_allocates_nothing(1);
}

static void test_memory_steady_state_call_allocates_nothing_t2(void **state)
{
    (void)state;
    steady_state_allocates_nothing(2);
}

/* The counter works: a NULL output slot allocates the handed-over result. */
static void test_memory_null_output_slot_allocates_and_is_owned_by_caller(void **state)
{
    (void)state;
    weft_function_t *f = chain(2, 1, false, NULL);
    weft_tensor_t *x = ct_tensor(1, S64, 1.0), *y = NULL;
    assert_int_equal(weft_function_call(f, 1, &x, 1, &y), WEFT_OK);
    weft_tensor_release(y);
    y = NULL;
    alloc_count_start();
    assert_int_equal(weft_function_call(f, 1, &x, 1, &y), WEFT_OK);
    assert_true(alloc_count_stop() > 0); /* the pool's buffer went to the caller */
    assert_int_equal(weft_tensor_refcount(y), 1);
    assert_true(weft_tensor_flat_get(y, 0) == 4.0);
    weft_tensor_release(y);
    weft_tensor_release(x);
    weft_function_destroy(f);
}

/* Small intermediates keep their buffer in their cell: 0-d chains allocate
 * only on the first call. */
static void test_memory_small_intermediates_reuse_their_cell(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 0, NULL), *v = x;
    for (int i = 0; i < 10; i++) v = ct_call(g, &ct_twice_class, NULL, 1, v, NULL);
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.mode = "none";
    o.threads = 2;
    weft_function_t *f = NULL;
    assert_int_equal(weft_function_compile(1, &x, 1, &v, 0, NULL, &o, &f), WEFT_OK);
    weft_tensor_t *tx = ct_tensor(0, NULL, 1.0), *ty = ct_tensor(0, NULL, 0.0);
    assert_int_equal(weft_function_call(f, 1, &tx, 1, &ty), WEFT_OK);
    alloc_count_start();
    for (int c = 0; c < 10; c++) assert_int_equal(weft_function_call(f, 1, &tx, 1, &ty), WEFT_OK);
    assert_int_equal(alloc_count_stop(), 0);
    assert_true(weft_tensor_flat_get(ty, 0) == 1024.0);
    weft_function_stats_t st;
    stats(f, &st);
    /* one per slot (9 intermediates and the output), first call only: the
     * small output stays in its cell like the intermediates and is copied to
     * ty, so no call takes a buffer from the pool (reused 0; it was one per
     * call when outputs went through the pool) */
    assert_int_equal(st.buffers_allocated, 10);
    assert_int_equal(st.buffers_reused, 0);
    weft_tensor_release(tx);
    weft_tensor_release(ty);
    weft_function_destroy(f);
}

/* A small (kept) output handed over to a NULL output slot leaves its cell:
 * the caller's tensor shares memory with nothing the function keeps, and the
 * next call allocates a new output buffer (the pool has none: a kept output
 * never goes back to it). */
static void test_memory_small_output_null_slot_gets_unshared_tensor(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 0, NULL), *v = x;
    for (int i = 0; i < 3; i++) v = ct_call(g, &ct_twice_class, NULL, 1, v, NULL);
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.mode = "none";
    o.threads = 1;
    weft_function_t *f = NULL;
    assert_int_equal(weft_function_compile(1, &x, 1, &v, 0, NULL, &o, &f), WEFT_OK);
    weft_tensor_t *t1 = ct_tensor(0, NULL, 1.0), *t3 = ct_tensor(0, NULL, 3.0);
    weft_tensor_t *y1 = NULL, *y3 = NULL, *ys = ct_tensor(0, NULL, 0.0);
    assert_int_equal(weft_function_call(f, 1, &t1, 1, &y1), WEFT_OK);
    assert_int_equal(weft_function_call(f, 1, &t3, 1, &y3), WEFT_OK);
    assert_int_equal(weft_function_call(f, 1, &t1, 1, &ys), WEFT_OK);
    assert_int_equal(weft_function_call(f, 1, &t3, 1, &ys), WEFT_OK);
    assert_ptr_not_equal(y1, y3);
    assert_false(weft_tensor_shares_buffer(y1, y3));
    assert_int_equal(weft_tensor_refcount(y1), 1);
    assert_int_equal(weft_tensor_refcount(y3), 1);
    assert_true(weft_tensor_flat_get(y1, 0) == 8.0); /* later calls left it alone */
    assert_true(weft_tensor_flat_get(y3, 0) == 24.0);
    assert_true(weft_tensor_flat_get(ys, 0) == 24.0);
    weft_function_stats_t st;
    stats(f, &st);
    /* call 1: 2 intermediates + the output; calls 2 and 3 each find the
     * output cell emptied by the previous hand-over: 1 each; call 4: none */
    assert_int_equal(st.buffers_allocated, 5);
    assert_int_equal(st.buffers_reused, 0);
    weft_tensor_release(ys);
    weft_tensor_release(y3);
    weft_tensor_release(y1);
    weft_tensor_release(t3);
    weft_tensor_release(t1);
    weft_function_destroy(f);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_memory_chain_frees_intermediates_after_last_reader),
        T(test_memory_diamond_peak_matches_sequential_run),
        T(test_memory_steady_state_call_allocates_nothing_t1),
        T(test_memory_view_of_intermediate_allocates_nothing_when_warm),
        T(test_memory_view_ops_and_subtensor_updates_allocate_nothing_when_warm),
        T(test_memory_kernel_scratch_comes_from_the_pool),
        T(test_memory_opfromgraph_perform_allocates_nothing_when_warm),
        T(test_memory_steady_state_call_allocates_nothing_t2),
        T(test_memory_null_output_slot_allocates_and_is_owned_by_caller),
        T(test_memory_small_intermediates_reuse_their_cell),
        T(test_memory_small_output_null_slot_gets_unshared_tensor),
    };
    return cmocka_run_group_tests_name("function_memory", tests, NULL, NULL);
}
