/* Memory of compiled functions: intermediates freed as soon as their last
 * reader ran (peak live buffers of a chain), buffers recycled through the
 * buffer pool, and a steady-state call that allocates nothing (every
 * malloc/calloc/realloc/aligned_alloc of the process is counted through the
 * linker's --wrap). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tests/compile/compile_test_ops.h"

/* ---- allocation counting (linked with -Wl,--wrap=...) --------------------- */
void *__real_malloc(size_t n);
void *__real_calloc(size_t a, size_t b);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t al, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t a, size_t b);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_aligned_alloc(size_t al, size_t n);

static atomic_bool counting;
static atomic_long n_allocs;

static void count_one(void)
{
    /* relaxed: a test counter, read after the calls returned */
    if (atomic_load_explicit(&counting, memory_order_relaxed))
        atomic_fetch_add_explicit(&n_allocs, 1, memory_order_relaxed);
}

void *__wrap_malloc(size_t n)
{
    count_one();
    return __real_malloc(n);
}
void *__wrap_calloc(size_t a, size_t b)
{
    count_one();
    return __real_calloc(a, b);
}
void *__wrap_realloc(void *p, size_t n)
{
    count_one();
    return __real_realloc(p, n);
}
void *__wrap_aligned_alloc(size_t al, size_t n)
{
    count_one();
    return __real_aligned_alloc(al, n);
}

static void count_start(void)
{
    atomic_store_explicit(&n_allocs, 0, memory_order_relaxed);
    atomic_store_explicit(&counting, true, memory_order_relaxed);
}

static long count_stop(void)
{
    atomic_store_explicit(&counting, false, memory_order_relaxed);
    return atomic_load_explicit(&n_allocs, memory_order_relaxed);
}

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

/* A chain frees each intermediate after its reader: 2 live buffers at most,
 * 2 buffers allocated in all, reused by every later call. */
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
    assert_int_equal(st.buffers_allocated, 2);
    assert_int_equal(st.buffers_reused, 5 * 8 - 2);
    assert_int_equal(st.call_states, 1);
    weft_profile_t *p;
    assert_int_equal(weft_profile_get(f, WEFT_PROFILE_TOTAL, &p), WEFT_OK);
    assert_int_equal(p->peak_bytes, 2 * 512);
    weft_profile_destroy(p);
    weft_tensor_release(x);
    weft_tensor_release(y);
    weft_function_destroy(f);
}

/* a = Twice(x), b = Twice(a), c = Add(a, b), d = Twice(c): a lives until c
 * ran, so a, b and c are alive together while c is computed - the sequential
 * peak, 3 buffers; then a and b are freed and d reuses one of them. */
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
    assert_int_equal(st.buffers_allocated, 3);
    weft_tensor_release(tx);
    weft_tensor_release(ty);
    weft_function_destroy(f);
}

static void steady_state_allocates_nothing(int threads)
{
    weft_function_t *f = chain(6, threads, false, NULL);
    weft_tensor_t *x = ct_tensor(1, S64, 1.0), *y = ct_tensor(1, S64, 0.0);
    for (int c = 0; c < 5; c++) assert_int_equal(weft_function_call(f, 1, &x, 1, &y), WEFT_OK);
    count_start();
    for (int c = 0; c < 20; c++) assert_int_equal(weft_function_call(f, 1, &x, 1, &y), WEFT_OK);
    long n = count_stop();
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
 * exact. The only allocations left are the view handles themselves: each of
 * the graph's two DimShuffle nodes (the one above and the broadcast of the
 * constant 0.05, not folded in mode "none") makes one small handle per call
 * (no element data) - a known limit, asserted exactly so a change shows. */
static void test_memory_view_of_intermediate_allocates_nothing_when_warm(void **state)
{
    (void)state;
    for (int threads = 1; threads <= 2; threads++) {
        const int64_t sg[2] = {64, 256}, sb[1] = {256};
        const weft_type_t *tg, *tb;
        assert_int_equal(weft_type_tensor(g, WEFT_FLOAT64, 2, sg, &tg), WEFT_OK);
        assert_int_equal(weft_type_tensor(g, WEFT_FLOAT64, 1, sb, &tb), WEFT_OK);
        weft_var_t *vg, *vb, *s, *d, *m, *nb;
        assert_int_equal(weft_var_create(g, tg, "G", &vg), WEFT_OK);
        assert_int_equal(weft_var_create(g, tb, "b", &vb), WEFT_OK);
        const int axis0 = 0, keep1[1] = {1};
        assert_int_equal(weft_sum(g, vg, 1, &axis0, true, &s), WEFT_OK);
        assert_int_equal(weft_dimshuffle(g, s, 1, keep1, &d), WEFT_OK);
        assert_int_equal(weft_binary_scalar(g, WEFT_ELEMWISE_MUL, d, 0.05, &m), WEFT_OK);
        assert_int_equal(weft_sub(g, vb, m, &nb), WEFT_OK);
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
        count_start();
        for (int c = 0; c < 20; c++)
            assert_int_equal(weft_function_call(f, 2, args, 0, NULL), WEFT_OK);
        long n = count_stop();
        stats(f, &st);
        assert_int_equal(st.buffers_allocated, allocated_warm);
        assert_int_equal(n, 2 * 20); /* two view handles per call */
        double want = 0.0; /* 25 calls of b -= 64 * 0.05, rounded as the kernels do */
        for (int c = 0; c < 25; c++) want = want - 64.0 * 0.05;
        assert_true(weft_tensor_flat_get(tbv, 255) == want);
        weft_tensor_release(tgv);
        weft_tensor_release(tbv);
        weft_function_destroy(f);
    }
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
    count_start();
    assert_int_equal(weft_function_call(f, 1, &x, 1, &y), WEFT_OK);
    assert_true(count_stop() > 0); /* the pool's buffer went to the caller */
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
    count_start();
    for (int c = 0; c < 10; c++) assert_int_equal(weft_function_call(f, 1, &tx, 1, &ty), WEFT_OK);
    assert_int_equal(count_stop(), 0);
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
        T(test_memory_steady_state_call_allocates_nothing_t2),
        T(test_memory_null_output_slot_allocates_and_is_owned_by_caller),
        T(test_memory_small_intermediates_reuse_their_cell),
        T(test_memory_small_output_null_slot_gets_unshared_tensor),
    };
    return cmocka_run_group_tests_name("function_memory", tests, NULL, NULL);
}
