/* Compiled functions: compile + call exact results, modes, in-place refusal
 * and acceptance, protected and mutable inputs, updates, boundary copies,
 * failing nodes, NaN checks and every documented bad input. */
#define _POSIX_C_SOURCE 200809L /* fmemopen */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "compile_test_ops.h"

#include "support/shared_cycle.h"

static weft_graph_t *g;
static const int64_t S3[1] = {3}, S4[1] = {4};

static int setup(void **state)
{
    (void)state;
    return weft_graph_create(NULL, &g) == WEFT_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    weft_graph_destroy(g);
    g = NULL;
    return 0;
}

static weft_function_options_t opts_none(void)
{
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.mode = "none";
    o.threads = 2;
    return o;
}

static void assert_values(const weft_tensor_t *t, const double *want, size_t n)
{
    assert_int_equal(weft_tensor_size(t), n);
    for (size_t i = 0; i < n; i++) assert_true(weft_tensor_flat_get(t, i) == want[i]);
}

static weft_function_t *compile_ok(size_t n_in, weft_var_t **in, size_t n_out, weft_var_t **out,
                                   size_t n_upd, const weft_update_t *upd,
                                   const weft_function_options_t *o)
{
    weft_function_t *f = NULL;
    weft_status_t st = weft_function_compile(n_in, in, n_out, out, n_upd, upd, o, &f);
    if (st != WEFT_OK) print_message("compile: %s\n", weft_function_last_error(NULL));
    assert_int_equal(st, WEFT_OK);
    return f;
}

/* y = x + 2z, w = 2x: supplied and NULL outputs, repeated calls. */
static void test_function_small_graph_gives_exact_results(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S3), *z = ct_var(g, "z", 1, S3);
    weft_var_t *z2 = ct_call(g, &ct_twice_class, NULL, 1, z, NULL);
    weft_var_t *y = ct_call(g, &ct_add_class, NULL, 2, x, z2);
    weft_var_t *w = ct_call(g, &ct_twice_class, NULL, 1, x, NULL);
    weft_function_options_t o = opts_none();
    weft_var_t *in[2] = {x, z}, *out[2] = {y, w};
    weft_function_t *f = compile_ok(2, in, 2, out, 0, NULL, &o);
    assert_int_equal(weft_function_n_inputs(f), 2);
    assert_int_equal(weft_function_n_outputs(f), 2);
    assert_int_equal(weft_function_n_nodes(f), 3);
    weft_tensor_t *tx = ct_tensor(1, S3, 1.0), *tz = ct_tensor(1, S3, 10.0);
    weft_tensor_t *ty = ct_tensor(1, S3, 0.0);
    for (int rep = 0; rep < 3; rep++) {
        weft_tensor_t *ins[2] = {tx, tz}, *outs[2] = {ty, NULL};
        assert_int_equal(weft_function_call(f, 2, ins, 2, outs), WEFT_OK);
        assert_ptr_equal(outs[0], ty);
        assert_values(ty, (double[]){21, 24, 27}, 3);
        assert_values(outs[1], (double[]){2, 4, 6}, 3);
        assert_int_equal(weft_tensor_refcount(outs[1]), 1);
        weft_tensor_release(outs[1]);
    }
    assert_string_equal(weft_function_last_error(f), "");
    weft_tensor_release(tx);
    weft_tensor_release(tz);
    weft_tensor_release(ty);
    assert_int_equal(weft_function_destroy(f), WEFT_OK);
}

/* The function owns a copy: the user's context may go away. */
static void test_function_user_context_destroyed_after_compile_still_runs(void **state)
{
    (void)state;
    weft_graph_t *mine;
    assert_int_equal(weft_graph_create(NULL, &mine), WEFT_OK);
    weft_var_t *x = ct_var(mine, "x", 1, S3), *c;
    assert_non_null(c = weft_constant_scalar(mine, WEFT_FLOAT64, 5.0));
    weft_var_t *y = ct_call(mine, &ct_twice_class, NULL, 1, x, NULL);
    (void)c;
    weft_function_options_t o = opts_none();
    weft_function_t *f = compile_ok(1, &x, 1, &y, 0, NULL, &o);
    weft_graph_destroy(mine);
    weft_tensor_t *tx = ct_tensor(1, S3, 1.0), *out = NULL;
    assert_int_equal(weft_function_call(f, 1, &tx, 1, &out), WEFT_OK);
    assert_values(out, (double[]){2, 4, 6}, 3);
    weft_tensor_release(out);
    weft_tensor_release(tx);
    weft_function_destroy(f);
}

static void test_function_user_inplace_op_is_refused_without_accept_inplace(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S3), *z = ct_var(g, "z", 1, S3);
    weft_var_t *y = ct_call(g, &ct_add_inplace_class, NULL, 2, x, z);
    weft_function_options_t o = opts_none();
    weft_var_t *in[2] = {x, z};
    weft_function_t *f = (weft_function_t *)1;
    assert_int_equal(weft_function_compile(2, in, 1, &y, 0, NULL, &o, &f), WEFT_EINVAL);
    assert_null(f);
    assert_non_null(strstr(weft_function_last_error(NULL),
                           "Graph must not contain inplace operations"));
    assert_non_null(strstr(weft_function_last_error(NULL), "AddInplace"));
}

/* accept_inplace on a protected input: refused naming the variable. */
static void test_function_accepted_inplace_on_protected_input_is_refused(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S3), *z = ct_var(g, "z", 1, S3);
    weft_var_t *y = ct_call(g, &ct_add_inplace_class, NULL, 2, x, z);
    weft_function_options_t o = opts_none();
    o.accept_inplace = true;
    weft_var_t *in[2] = {x, z};
    weft_function_t *f = NULL;
    assert_int_equal(weft_function_compile(2, in, 1, &y, 0, NULL, &o, &f), WEFT_EINCONSISTENT);
    assert_non_null(strstr(weft_function_last_error(NULL), "protected"));
    assert_non_null(strstr(weft_function_last_error(NULL), "x"));
}

/* Declared mutable: the caller's buffer is overwritten, results exact. */
static void test_function_accepted_inplace_on_mutable_input_overwrites_it(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S3), *z = ct_var(g, "z", 1, S3);
    weft_var_t *r = ct_call(g, &ct_twice_class, NULL, 1, x, NULL); /* reads old x */
    weft_var_t *y = ct_call(g, &ct_add_inplace_class, NULL, 2, x, z);
    weft_function_options_t o = opts_none();
    o.accept_inplace = true;
    bool mut[2] = {true, false};
    o.input_mutable = mut;
    weft_var_t *in[2] = {x, z}, *out[2] = {y, r};
    weft_function_t *f = compile_ok(2, in, 2, out, 0, NULL, &o);
    weft_tensor_t *tx = ct_tensor(1, S3, 1.0), *tz = ct_tensor(1, S3, 10.0);
    weft_tensor_t *ins[2] = {tx, tz}, *outs[2] = {NULL, NULL};
    assert_int_equal(weft_function_call(f, 2, ins, 2, outs), WEFT_OK);
    assert_values(outs[0], (double[]){11, 13, 15}, 3);
    assert_values(outs[1], (double[]){2, 4, 6}, 3); /* the reader ran before the destroyer */
    assert_values(tx, (double[]){11, 13, 15}, 3);   /* declared mutable: overwritten */
    assert_values(tz, (double[]){10, 11, 12}, 3);
    assert_false(weft_tensor_shares_buffer(outs[0], tx));
    weft_tensor_release(outs[0]);
    weft_tensor_release(outs[1]);
    weft_tensor_release(tx);
    weft_tensor_release(tz);
    weft_function_destroy(f);
}

/* s <- s + x over several calls; the output reads the old s. */
static void test_function_update_accumulates_over_calls(void **state)
{
    (void)state;
    weft_var_t *s = ct_var(g, "s", 1, S3), *x = ct_var(g, "x", 1, S3);
    weft_var_t *next = ct_call(g, &ct_add_class, NULL, 2, s, x);
    weft_var_t *old2 = ct_call(g, &ct_twice_class, NULL, 1, s, NULL);
    weft_update_t upd = {s, next};
    weft_function_options_t o = opts_none();
    weft_var_t *in[2] = {s, x};
    weft_function_t *f = compile_ok(2, in, 1, &old2, 1, &upd, &o);
    weft_tensor_t *ts = ct_tensor(1, S3, 0.0), *tx = ct_tensor(1, S3, 1.0);
    weft_tensor_t *ty = ct_tensor(1, S3, 0.0);
    for (int c = 1; c <= 4; c++) {
        weft_tensor_t *ins[2] = {ts, tx};
        double before[3] = {weft_tensor_flat_get(ts, 0), weft_tensor_flat_get(ts, 1),
                            weft_tensor_flat_get(ts, 2)};
        assert_int_equal(weft_function_call(f, 2, ins, 1, &ty), WEFT_OK);
        assert_values(ty, (double[]){2 * before[0], 2 * before[1], 2 * before[2]}, 3);
        assert_values(ts, (double[]){c * 1.0, 1 + c * 2.0, 2 + c * 3.0}, 3);
    }
    weft_tensor_release(ts);
    weft_tensor_release(tx);
    weft_tensor_release(ty);
    weft_function_destroy(f);
}

/* A function of updates only; a mutable input aliasing another is refused. */
static void test_function_updates_only_and_aliased_mutable_input(void **state)
{
    (void)state;
    weft_var_t *s = ct_var(g, "s", 1, S3), *x = ct_var(g, "x", 1, S3);
    weft_update_t upd = {s, ct_call(g, &ct_add_class, NULL, 2, s, x)};
    weft_function_options_t o = opts_none();
    weft_var_t *in[2] = {s, x};
    weft_function_t *f = compile_ok(2, in, 0, NULL, 1, &upd, &o);
    weft_tensor_t *ts = ct_tensor(1, S3, 0.0), *tx = ct_tensor(1, S3, 1.0);
    weft_tensor_t *ins[2] = {ts, tx};
    assert_int_equal(weft_function_call(f, 2, ins, 0, NULL), WEFT_OK);
    assert_values(ts, (double[]){1, 3, 5}, 3);
    weft_tensor_t *alias[2] = {ts, ts};
    assert_int_equal(weft_function_call(f, 2, alias, 0, NULL), WEFT_EINVAL);
    assert_non_null(strstr(weft_function_last_error(f),
                           "input 0 is mutable (declared or updated) and shares memory with "
                           "input 1"));
    assert_values(ts, (double[]){1, 3, 5}, 3);
    weft_tensor_release(ts);
    weft_tensor_release(tx);
    weft_function_destroy(f);
}

/* s <- AddInplace(s, x): computed in s's own buffer (updated => mutable). */
static void test_function_update_in_place_runs_in_the_state_buffer(void **state)
{
    (void)state;
    weft_var_t *s = ct_var(g, "s", 1, S3), *x = ct_var(g, "x", 1, S3);
    weft_var_t *next = ct_call(g, &ct_add_inplace_class, NULL, 2, s, x);
    weft_var_t *old2 = ct_call(g, &ct_twice_class, NULL, 1, s, NULL);
    weft_update_t upd = {s, next};
    weft_function_options_t o = opts_none();
    o.accept_inplace = true;
    weft_var_t *in[2] = {s, x};
    weft_function_t *f = compile_ok(2, in, 1, &old2, 1, &upd, &o);
    assert_int_equal(weft_function_n_nodes(f), 2); /* no copy for the in-place update */
    weft_tensor_t *ts = ct_tensor(1, S3, 0.0), *tx = ct_tensor(1, S3, 1.0);
    weft_tensor_t *ty = ct_tensor(1, S3, 0.0);
    for (int c = 1; c <= 3; c++) {
        weft_tensor_t *ins[2] = {ts, tx};
        assert_int_equal(weft_function_call(f, 2, ins, 1, &ty), WEFT_OK);
        assert_values(ty, (double[]){2.0 * (c - 1), 2 * (1 + (c - 1) * 2.0),
                                     2 * (2 + (c - 1) * 3.0)}, 3);
        assert_values(ts, (double[]){c * 1.0, 1 + c * 2.0, 2 + c * 3.0}, 3);
    }
    weft_tensor_release(ts);
    weft_tensor_release(tx);
    weft_tensor_release(ty);
    weft_function_destroy(f);
}

/* An update whose new value is a view of the state's own memory in
 * another layout: s <- transpose(2 s), with the product computed in place
 * in s by the rewrite. Delivering it copies s's memory onto itself
 * transposed, which must go through a temporary (weft_tensor_copy forbids
 * partial overlap); an element-by-element copy would read entries it had
 * already overwritten. */
static void test_function_update_by_a_view_of_the_state_itself(void **state)
{
    (void)state;
    static const int64_t S33[2] = {3, 3};
    weft_var_t *s = ct_var(g, "s", 2, S33);
    weft_var_t *next = weft_transpose(g, weft_mul(g, s, weft_constant_scalar(g, WEFT_FLOAT64, 2)));
    assert_non_null(next);
    weft_update_t upd = {s, next};
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.threads = 1;
    weft_function_t *f = compile_ok(1, &s, 0, NULL, 1, &upd, &o);
    weft_tensor_t *ts = ct_tensor(2, S33, 0.0);
    for (int i = 0; i < 9; i++) ((double *)weft_tensor_data(ts))[i] = i + 1;
    for (int c = 0; c < 2; c++) assert_int_equal(weft_function_call(f, 1, &ts, 0, NULL), WEFT_OK);
    assert_values(ts, (double[]){4, 8, 12, 16, 20, 24, 28, 32, 36}, 9); /* 4 s after two */
    assert_int_equal(weft_function_call(f, 1, &ts, 0, NULL), WEFT_OK);
    assert_values(ts, (double[]){8, 32, 56, 16, 40, 64, 24, 48, 72}, 9);
    weft_tensor_release(ts);
    weft_function_destroy(f);
}

/* ---- mutable inputs whose memory overlaps itself ---------------------------------- */

/* Layouts over a 4-element base [1, 2, 3, 4] whose elements share memory:
 * stride-0 broadcasts (the issue's [1,1,1,1]), sliding windows and a mix;
 * the last one is a control that does not overlap. */
typedef struct overlap_layout {
    int nd;
    int64_t shape[2], strides[2], offset;
} overlap_layout_t;

static const overlap_layout_t overlap_layouts[] = {
    {1, {4, 0}, {0, 0}, 0},  /* base[0] broadcast: [1, 1, 1, 1] */
    {2, {3, 2}, {1, 1}, 0},  /* windows [1,2] [2,3] [3,4] */
    {2, {2, 3}, {1, 1}, 0},  /* windows [1,2,3] [2,3,4] */
    {2, {2, 3}, {0, 1}, 1},  /* [2,3,4] broadcast over 2 rows */
    /* control: [[2,3,4]], no overlap, C-contiguous (in-place kernels
     * write only into a C-contiguous input, docs/execution.md) */
    {2, {1, 3}, {3, 1}, 1},
};
#define N_OVERLAP_LAYOUTS (sizeof overlap_layouts / sizeof *overlap_layouts)

static weft_tensor_t *overlap_view(weft_tensor_t *base, const overlap_layout_t *l)
{
    weft_tensor_t *v;
    assert_int_equal(weft_tensor_view(base, l->nd, l->shape, l->strides, l->offset, &v), WEFT_OK);
    return v;
}

/* exp(x) + x with x declared mutable: fast_run fuses it and computes it in
 * x's memory. An input that overlaps itself is run from a private copy: the
 * results are exact and the caller's data stays as it was. */
static void test_function_mutable_input_overlapping_itself_is_copied(void **state)
{
    (void)state;
    for (size_t li = 0; li < N_OVERLAP_LAYOUTS; li++) {
        const overlap_layout_t *l = &overlap_layouts[li];
        bool control = li + 1 == N_OVERLAP_LAYOUTS;
        weft_var_t *x = ct_var(g, "x", l->nd, l->shape), *e, *y;
        assert_non_null(e = weft_exp(g, x));
        assert_non_null(y = weft_add(g, e, x));
        weft_function_options_t o = opts_none();
        o.mode = "fast_run";
        bool mut[1] = {true};
        o.input_mutable = mut;
        weft_function_t *f = compile_ok(1, &x, 1, &y, 0, NULL, &o);
        weft_tensor_t *base = ct_tensor(1, S4, 1.0), *tx = overlap_view(base, l);
        size_t n = weft_tensor_size(tx);
        double want[8];
        for (size_t i = 0; i < n; i++)
            want[i] = exp(weft_tensor_flat_get(tx, i)) + weft_tensor_flat_get(tx, i);
        for (int c = 0; c < (control ? 1 : 2); c++) {
            weft_tensor_t *out = NULL;
            assert_int_equal(weft_function_call(f, 1, &tx, 1, &out), WEFT_OK);
            assert_values(out, want, n);
            if (!control) assert_values(base, (double[]){1, 2, 3, 4}, 4); /* not written */
            weft_tensor_release(out);
        }
        /* the control does not overlap: computed in the caller's memory */
        if (control) assert_values(tx, want, n);
        weft_tensor_release(tx);
        weft_tensor_release(base);
        weft_function_destroy(f);
    }
}

/* An updated input must hold its new value after the call, which memory
 * overlapping itself cannot: refused, naming the input; nothing written, and
 * the copy already made of the mutable input before it is freed. */
static void test_function_updated_input_overlapping_itself_is_refused(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S4), *s = ct_var(g, "s", 1, S4);
    weft_update_t upd = {s, ct_call(g, &ct_add_class, NULL, 2, s, x)};
    weft_function_options_t o = opts_none();
    bool mut[2] = {true, false};
    o.input_mutable = mut;
    weft_var_t *in[2] = {x, s};
    weft_function_t *f = compile_ok(2, in, 0, NULL, 1, &upd, &o);
    weft_tensor_t *xbase = ct_tensor(1, S4, 10.0), *tx = overlap_view(xbase, &overlap_layouts[0]);
    weft_tensor_t *base = ct_tensor(1, S4, 1.0), *ts = overlap_view(base, &overlap_layouts[0]);
    weft_tensor_t *ins[2] = {tx, ts};
    assert_int_equal(weft_function_call(f, 2, ins, 0, NULL), WEFT_EINVAL);
    assert_non_null(strstr(weft_function_last_error(f), "input 1 (s, created at"));
    assert_non_null(strstr(weft_function_last_error(f),
                           "is updated but its memory overlaps itself (float64[4], strides "
                           "[0]): its new value cannot be stored in it; pass a tensor whose "
                           "elements do not share memory"));
    assert_values(base, (double[]){1, 2, 3, 4}, 4);
    /* a plain state works; the broadcast x is still copied, not written */
    ins[1] = base;
    assert_int_equal(weft_function_call(f, 2, ins, 0, NULL), WEFT_OK);
    assert_values(base, (double[]){11, 12, 13, 14}, 4);
    assert_values(xbase, (double[]){10, 11, 12, 13}, 4);
    weft_tensor_release(ts);
    weft_tensor_release(tx);
    weft_tensor_release(base);
    weft_tensor_release(xbase);
    weft_function_destroy(f);
}

/* Outputs that are an input, a view of an input, or the same variable twice
 * get DeepCopy nodes: handed-over results share no memory. */
static void test_function_outputs_aliasing_inputs_are_copied(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S3);
    weft_var_t *v = ct_call(g, &ct_view_class, NULL, 1, x, NULL);
    weft_var_t *t = ct_call(g, &ct_twice_class, NULL, 1, x, NULL);
    weft_function_options_t o = opts_none();
    weft_var_t *out[4] = {x, v, t, t};
    weft_function_t *f = compile_ok(1, &x, 4, out, 0, NULL, &o);
    assert_int_equal(weft_function_n_nodes(f), 2 + 3); /* View, Twice, 3 DeepCopyOp */
    weft_tensor_t *tx = ct_tensor(1, S3, 1.0), *outs[4] = {NULL, NULL, NULL, NULL};
    assert_int_equal(weft_function_call(f, 1, &tx, 4, outs), WEFT_OK);
    assert_values(outs[0], (double[]){1, 2, 3}, 3);
    assert_values(outs[1], (double[]){1, 2, 3}, 3);
    assert_values(outs[2], (double[]){2, 4, 6}, 3);
    assert_values(outs[3], (double[]){2, 4, 6}, 3);
    for (int i = 0; i < 4; i++) {
        assert_false(weft_tensor_shares_buffer(outs[i], tx));
        for (int j = 0; j < i; j++) assert_false(weft_tensor_shares_buffer(outs[i], outs[j]));
    }
    for (int i = 0; i < 4; i++) weft_tensor_release(outs[i]);
    weft_tensor_release(tx);
    weft_function_destroy(f);
}

/* A small intermediate kept in its cell but viewed by a returned output: the
 * caller's view keeps its values over later calls (the cell's tensor is not
 * reused while the caller holds it), and later results are right. */
static void test_function_kept_intermediate_viewed_by_output_is_not_reused(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S3);
    weft_var_t *y = ct_call(g, &ct_twice_class, NULL, 1, x, NULL);
    weft_var_t *z = ct_call(g, &ct_view_class, NULL, 1, y, NULL);
    weft_var_t *w = ct_call(g, &ct_twice_class, NULL, 1, y, NULL);
    weft_function_options_t o = opts_none();
    weft_var_t *out[2] = {z, w};
    weft_function_t *f = compile_ok(1, &x, 2, out, 0, NULL, &o);
    weft_tensor_t *t1 = ct_tensor(1, S3, 1.0), *t2 = ct_tensor(1, S3, 10.0);
    weft_tensor_t *r1[2] = {NULL, NULL}, *r2[2] = {NULL, NULL}, *r3[2] = {NULL, NULL};
    assert_int_equal(weft_function_call(f, 1, &t1, 2, r1), WEFT_OK);
    assert_int_equal(weft_function_call(f, 1, &t2, 2, r2), WEFT_OK);
    assert_values(r1[0], (double[]){2, 4, 6}, 3);
    assert_values(r1[1], (double[]){4, 8, 12}, 3);
    assert_values(r2[0], (double[]){20, 22, 24}, 3);
    assert_values(r2[1], (double[]){40, 44, 48}, 3);
    assert_false(weft_tensor_shares_buffer(r1[0], r2[0]));
    for (int i = 0; i < 2; i++) weft_tensor_release(r1[i]);
    assert_int_equal(weft_function_call(f, 1, &t1, 2, r3), WEFT_OK);
    assert_values(r2[0], (double[]){20, 22, 24}, 3);
    assert_values(r3[0], (double[]){2, 4, 6}, 3);
    assert_values(r3[1], (double[]){4, 8, 12}, 3);
    for (int i = 0; i < 2; i++) {
        weft_tensor_release(r2[i]);
        weft_tensor_release(r3[i]);
    }
    weft_tensor_release(t1);
    weft_tensor_release(t2);
    weft_function_destroy(f);
}

/* A failing node: status, message naming node/op/trace, dependents skipped,
 * the next call works. */
static void test_function_failing_node_reports_and_next_call_works(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S3);
    const weft_op_t *fail;
    assert_int_equal(weft_op_create(g, &ct_fail_class, NULL, &fail), WEFT_OK);
    weft_var_t *a;
    assert_non_null(a = weft_op_call(g, fail, 1, &x));
    int line = __LINE__ - 1;
    weft_var_t *b = ct_call(g, &ct_counted_class, NULL, 1, a, NULL);
    weft_function_options_t o = opts_none();
    weft_function_t *f = compile_ok(1, &x, 1, &b, 0, NULL, &o);
    weft_tensor_t *tx = ct_tensor(1, S3, -1.0), *out = NULL;
    atomic_store_explicit(&ct_counted_runs, 0, memory_order_relaxed);
    assert_int_equal(weft_function_call(f, 1, &tx, 1, &out), WEFT_ERANGE);
    assert_null(out);
    const char *msg = weft_function_last_error(f);
    char where[64];
    snprintf(where, sizeof where, "test_function.c:%d", line);
    assert_non_null(strstr(msg, "node 0"));
    assert_non_null(strstr(msg, "Fail"));
    assert_non_null(strstr(msg, where));
    assert_non_null(strstr(msg, "negative value -1 at element 0"));
    assert_int_equal(atomic_load_explicit(&ct_counted_runs, memory_order_relaxed), 0);
    assert_string_equal(weft_function_last_error(NULL), "");
    weft_tensor_fill(tx, 1.0);
    assert_int_equal(weft_function_call(f, 1, &tx, 1, &out), WEFT_OK);
    assert_values(out, (double[]){2, 2, 2}, 3);
    assert_int_equal(atomic_load_explicit(&ct_counted_runs, memory_order_relaxed), 1);
    assert_string_equal(weft_function_last_error(f), "");
    weft_tensor_release(out);
    weft_tensor_release(tx);
    weft_function_destroy(f);
}

static void test_function_node_output_of_wrong_shape_fails_the_call(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S3);
    weft_var_t *b = ct_call(g, &ct_badout_class, NULL, 1, x, NULL);
    weft_function_options_t o = opts_none();
    weft_function_t *f = compile_ok(1, &x, 1, &b, 0, NULL, &o);
    weft_tensor_t *tx = ct_tensor(1, S3, 1.0), *out = NULL;
    assert_int_equal(weft_function_call(f, 1, &tx, 1, &out), WEFT_ESHAPE);
    assert_non_null(strstr(weft_function_last_error(f), "BadOut"));
    assert_non_null(strstr(weft_function_last_error(f), "float64[7]"));
    assert_non_null(strstr(weft_function_last_error(f), "float64[3]"));
    weft_tensor_release(tx);
    weft_function_destroy(f);
}

static void test_function_nan_check_fails_the_node(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S3);
    weft_var_t *b = ct_call(g, &ct_twice_class, NULL, 1, x, NULL);
    weft_function_options_t o = opts_none();
    o.nan_check = true;
    weft_function_t *f = compile_ok(1, &x, 1, &b, 0, NULL, &o);
    weft_tensor_t *tx = ct_tensor(1, S3, 1.0), *out = NULL;
    assert_int_equal(weft_function_call(f, 1, &tx, 1, &out), WEFT_OK);
    weft_tensor_release(out);
    out = NULL;
    int64_t idx = 1;
    weft_tensor_set(tx, &idx, 1e308);
    assert_int_equal(weft_function_call(f, 1, &tx, 1, &out), WEFT_ENAN);
    assert_non_null(strstr(weft_function_last_error(f), "Twice"));
    assert_non_null(strstr(weft_function_last_error(f), "NaN or Inf"));
    weft_tensor_release(tx);
    weft_function_destroy(f);
}

/* Every bad call argument: exact status and message. */
static void test_function_call_bad_arguments_return_exact_status(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S3);
    weft_var_t *b = ct_call(g, &ct_twice_class, NULL, 1, x, NULL);
    weft_function_options_t o = opts_none();
    weft_function_t *f = compile_ok(1, &x, 1, &b, 0, NULL, &o);
    weft_tensor_t *tx = ct_tensor(1, S3, 1.0), *t4 = ct_tensor(1, S4, 1.0), *out = NULL;
    weft_tensor_t *ti;
    int64_t s33[2] = {3, 3};
    assert_int_equal(weft_tensor_zeros(WEFT_INT32, 1, S3, &ti), WEFT_OK);
    assert_int_equal(weft_function_call(NULL, 1, &tx, 1, &out), WEFT_EINVAL);
    assert_int_equal(weft_function_call(f, 2, &tx, 1, &out), WEFT_EINVAL);
    assert_non_null(strstr(weft_function_last_error(f), "takes 1 inputs, got 2"));
    assert_int_equal(weft_function_call(f, 1, NULL, 1, &out), WEFT_EINVAL);
    assert_int_equal(weft_function_call(f, 1, &tx, 0, &out), WEFT_EINVAL);
    assert_int_equal(weft_function_call(f, 1, &tx, 1, NULL), WEFT_EINVAL);
    weft_tensor_t *nul = NULL;
    assert_int_equal(weft_function_call(f, 1, &nul, 1, &out), WEFT_EINVAL);
    assert_int_equal(weft_function_call(f, 1, &t4, 1, &out), WEFT_ESHAPE);
    assert_non_null(strstr(weft_function_last_error(f),
                           "input 0 (x, created at"));
    assert_non_null(strstr(weft_function_last_error(f), "expected float64[3], got float64[4]"));
    assert_int_equal(weft_function_call(f, 1, &ti, 1, &out), WEFT_ETYPE);
    assert_non_null(strstr(weft_function_last_error(f), "got int32[3]"));
    weft_tensor_t *t33 = ct_tensor(2, s33, 0.0);
    assert_int_equal(weft_function_call(f, 1, &t33, 1, &out), WEFT_ETYPE);
    /* supplied output of the wrong shape / dtype */
    out = t4;
    assert_int_equal(weft_function_call(f, 1, &tx, 1, &out), WEFT_ESHAPE);
    assert_non_null(strstr(weft_function_last_error(f),
                           "output 0 (Twice.out): the result is float64[3] but the supplied "
                           "tensor is float64[4]"));
    out = ti;
    assert_int_equal(weft_function_call(f, 1, &tx, 1, &out), WEFT_ETYPE);
    out = NULL;
    assert_int_equal(weft_function_call(f, 1, &tx, 1, &out), WEFT_OK);
    weft_tensor_release(out);
    weft_tensor_release(t33);
    weft_tensor_release(ti);
    weft_tensor_release(t4);
    weft_tensor_release(tx);
    weft_function_destroy(f);
}

/* Every bad compile argument: exact status. */
static void test_function_compile_bad_arguments_return_exact_status(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S3), *z = ct_var(g, "z", 1, S3), *c;
    weft_var_t *y = ct_call(g, &ct_add_class, NULL, 2, x, z);
    weft_var_t *np = ct_call(g, &ct_noperform_class, NULL, 1, x, NULL);
    assert_non_null(c = weft_constant_scalar(g, WEFT_FLOAT64, 1.0));
    weft_graph_t *other;
    assert_int_equal(weft_graph_create(NULL, &other), WEFT_OK);
    weft_var_t *ox = ct_var(other, "ox", 1, S3);
    weft_function_options_t o = opts_none();
    weft_function_t *f = NULL;
    weft_var_t *in2[2] = {x, z}, *dup[2] = {x, x}, *in_c[2] = {x, c}, *in_y[2] = {x, y};
    assert_int_equal(weft_function_compile(2, in2, 1, &y, 0, NULL, &o, NULL), WEFT_EINVAL);
    assert_int_equal(weft_function_compile(2, NULL, 1, &y, 0, NULL, &o, &f), WEFT_EINVAL);
    assert_int_equal(weft_function_compile(2, in2, 0, NULL, 0, NULL, &o, &f), WEFT_EINVAL);
    assert_int_equal(weft_function_compile(1, &x, 1, &y, 0, NULL, &o, &f), WEFT_EMISSING_INPUT);
    assert_non_null(strstr(weft_function_last_error(NULL), "z (created at"));
    assert_int_equal(weft_function_compile(2, dup, 1, &y, 0, NULL, &o, &f), WEFT_EINVAL);
    assert_non_null(strstr(weft_function_last_error(NULL), "listed twice"));
    assert_int_equal(weft_function_compile(2, in_c, 1, &y, 0, NULL, &o, &f), WEFT_EINVAL);
    assert_int_equal(weft_function_compile(2, in_y, 1, &y, 0, NULL, &o, &f), WEFT_EINVAL);
    assert_int_equal(weft_function_compile(1, &ox, 1, &y, 0, NULL, &o, &f), WEFT_EFOREIGN);
    assert_int_equal(weft_function_compile(1, &x, 1, &np, 0, NULL, &o, &f), WEFT_ENOTIMPL);
    assert_non_null(strstr(weft_function_last_error(NULL), "NoPerform"));
    weft_update_t bad_var = {y, x}, twice2[2] = {{x, y}, {x, y}};
    assert_int_equal(weft_function_compile(2, in2, 1, &y, 1, &bad_var, &o, &f), WEFT_EINVAL);
    assert_int_equal(weft_function_compile(2, in2, 1, &y, 2, twice2, &o, &f), WEFT_EINVAL);
    assert_non_null(strstr(weft_function_last_error(NULL), "updated twice"));
    weft_update_t bad_type = {x, c};
    assert_int_equal(weft_function_compile(2, in2, 1, &y, 1, &bad_type, &o, &f), WEFT_ETYPE);
    weft_update_t null_upd = {x, NULL};
    assert_int_equal(weft_function_compile(2, in2, 1, &y, 1, &null_upd, &o, &f), WEFT_EINVAL);
    weft_function_options_t bad = o;
    bad.mode = "turbo";
    assert_int_equal(weft_function_compile(2, in2, 1, &y, 0, NULL, &bad, &f), WEFT_EINVAL);
    assert_non_null(strstr(weft_function_last_error(NULL), "unknown mode 'turbo'"));
    bad = o;
    bad.threads = -1;
    assert_int_equal(weft_function_compile(2, in2, 1, &y, 0, NULL, &bad, &f), WEFT_EINVAL);
    bad = o;
    bad.size = 4;
    assert_int_equal(weft_function_compile(2, in2, 1, &y, 0, NULL, &bad, &f), WEFT_EINVAL);
    weft_pool_t *pool;
    assert_int_equal(weft_pool_create(1, NULL, &pool), WEFT_OK);
    bad = o;
    bad.pool = pool;
    bad.threads = 3;
    assert_int_equal(weft_function_compile(2, in2, 1, &y, 0, NULL, &bad, &f), WEFT_EINVAL);
    assert_non_null(strstr(weft_function_last_error(NULL), "does not match the pool's 1"));
    bad.n_include = 1;
    bad.threads = 0;
    assert_int_equal(weft_function_compile(2, in2, 1, &y, 0, NULL, &bad, &f), WEFT_EINVAL);
    assert_null(f);
    assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
    assert_int_equal(weft_function_destroy(NULL), WEFT_OK);
    weft_graph_destroy(other);
}

/* A cycle that reached the graph (tests/support/shared_cycle.h): WEFT_ECYCLE
 * naming it, not a node with a missing input. */
static void test_function_compile_of_a_cycle_is_ecycle(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S3), *y = ct_var(g, "y", 1, S3), *in[2] = {x, y};
    const weft_op_t *e, *n, *a;
    assert_int_equal(weft_elemwise_op(g, WEFT_ELEMWISE_EXP, -1, WEFT_FLOAT64, &e), WEFT_OK);
    assert_int_equal(weft_elemwise_op(g, WEFT_ELEMWISE_NEG, -1, WEFT_FLOAT64, &n), WEFT_OK);
    assert_int_equal(weft_elemwise_op(g, WEFT_ELEMWISE_ADD, -1, WEFT_FLOAT64, &a), WEFT_OK);
    weft_var_t *out = shared_cycle_build(g, e, n, a, x, y, NULL, NULL);
    assert_non_null(out);
    weft_function_options_t o = opts_none();
    weft_function_t *f = (weft_function_t *)1;
    assert_int_equal(weft_function_compile(2, in, 1, &out, 0, NULL, &o, &f), WEFT_ECYCLE);
    assert_null(f);
    assert_string_equal(msg_without_sites(weft_function_last_error(NULL)),
                        "weft_function_compile: graph contains a cycle: apply 0 (Exp) -> apply 2 "
                        "(Neg) -> apply 1 (Neg)");
}

/* The default pool is shared; a given pool is used as is. */
static void test_function_pools_default_shared_and_given(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S3);
    weft_var_t *b = ct_call(g, &ct_twice_class, NULL, 1, x, NULL);
    weft_function_options_t o = opts_none();
    o.threads = 0;
    weft_function_t *f1 = compile_ok(1, &x, 1, &b, 0, NULL, &o);
    weft_function_t *f2 = compile_ok(1, &x, 1, &b, 0, NULL, &o);
    assert_non_null(weft_function_pool(f1));
    assert_ptr_equal(weft_function_pool(f1), weft_function_pool(f2));
    assert_int_equal(weft_pool_thread_count(weft_function_pool(f1)), weft_pool_default_threads());
    weft_pool_t *pool;
    assert_int_equal(weft_pool_create(2, NULL, &pool), WEFT_OK);
    o.pool = pool;
    o.threads = 2;
    weft_function_t *f3 = compile_ok(1, &x, 1, &b, 0, NULL, &o);
    assert_ptr_equal(weft_function_pool(f3), pool);
    weft_tensor_t *tx = ct_tensor(1, S3, 1.0), *out = NULL;
    assert_int_equal(weft_function_call(f3, 1, &tx, 1, &out), WEFT_OK);
    assert_int_equal(weft_pool_destroy(pool), WEFT_EBUSY); /* f3's call state is attached */
    weft_tensor_release(out);
    weft_tensor_release(tx);
    weft_function_destroy(f3);
    assert_int_equal(weft_pool_destroy(pool), WEFT_OK);
    weft_function_destroy(f1);
    weft_function_destroy(f2);
}

static void test_function_print_lists_nodes_in_order(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S3);
    weft_var_t *b = ct_call(g, &ct_twice_class, NULL, 1, x, NULL);
    weft_var_t *c = ct_call(g, &ct_add_class, NULL, 2, b, x);
    weft_function_options_t o = opts_none();
    weft_function_t *f = compile_ok(1, &x, 1, &c, 0, NULL, &o);
    char buf[512] = {0};
    FILE *m = fmemopen(buf, sizeof buf - 1, "w");
    assert_int_equal(weft_function_print(f, m), WEFT_OK);
    fclose(m);
    assert_non_null(strstr(buf, "0: Twice(x)\n1: Add(Twice.out, x)\n"));
    assert_int_equal(weft_function_print(NULL, stdout), WEFT_EINVAL);
    weft_function_destroy(f);
}

/* Nodes are laid out in the order one worker runs them (schedule_order.c),
 * not in the graph's toposort (a, b, s1, s2 here): after a, its first
 * successor s1 still waits for b, so a's chain continues with s2. */
static void test_function_nodes_laid_out_in_run_order(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S3);
    weft_var_t *a = ct_call(g, &ct_twice_class, NULL, 1, x, NULL);
    weft_var_t *b = ct_call(g, &ct_counted_class, NULL, 1, x, NULL);
    weft_var_t *s1 = ct_call(g, &ct_add_class, NULL, 2, a, b);
    weft_var_t *s2 = ct_call(g, &ct_twice_class, NULL, 1, a, NULL);
    weft_var_t *outs[2] = {s1, s2};
    weft_function_options_t o = opts_none();
    weft_function_t *f = compile_ok(1, &x, 2, outs, 0, NULL, &o);
    char buf[1024] = {0};
    FILE *m = fmemopen(buf, sizeof buf - 1, "w");
    assert_int_equal(weft_function_print(f, m), WEFT_OK);
    fclose(m);
    assert_string_equal(buf, "0: Twice(x)\n1: Twice(Twice.out)\n2: Counted(x)\n"
                             "3: Add(Twice.out, Counted.out)\n");
    weft_tensor_t *tx = ct_tensor(1, S3, 1.0), *res[2] = {NULL, NULL};
    assert_int_equal(weft_function_call(f, 1, &tx, 2, res), WEFT_OK);
    const double w1[3] = {3.0, 6.0, 9.0}, w2[3] = {4.0, 8.0, 12.0};
    assert_values(res[0], w1, 3);
    assert_values(res[1], w2, 3);
    weft_tensor_release(res[0]);
    weft_tensor_release(res[1]);
    weft_tensor_release(tx);
    weft_function_destroy(f);
}

/* On one worker the pool runs the nodes exactly in layout order, also when
 * a node readies several successors at once (one continues the chain, the
 * others come back from the deque last in first out): a's three readers
 * start in index order. Sleep nodes keep the start times apart. */
static void test_function_one_worker_runs_nodes_in_layout_order(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S3);
    weft_var_t *a = ct_call(g, &ct_twice_class, NULL, 1, x, NULL), *outs[4];
    int us[4] = {300, 200, 100, 50};
    for (int k = 0; k < 4; k++) outs[k] = ct_call(g, &ct_sleep_class, &us[k], 1, a, NULL);
    weft_function_options_t o = opts_none();
    o.threads = 1;
    o.profile = true;
    weft_function_t *f = compile_ok(1, &x, 4, outs, 0, NULL, &o);
    weft_tensor_t *tx = ct_tensor(1, S3, 1.0), *res[4] = {NULL};
    assert_int_equal(weft_function_call(f, 1, &tx, 4, res), WEFT_OK);
    weft_profile_t *p = NULL;
    assert_int_equal(weft_profile_create(f, WEFT_PROFILE_LAST_CALL, &p), WEFT_OK);
    assert_int_equal(p->n_applies, 5);
    for (size_t i = 0; i + 1 < p->n_applies; i++) {
        const weft_profile_apply_t *r = &p->applies[i], *q = &p->applies[i + 1];
        assert_int_equal(r->index, i);
        assert_true(r->start_ns < q->start_ns); /* node i + 1 starts after node i */
    }
    weft_profile_destroy(p);
    for (int k = 0; k < 4; k++) weft_tensor_release(res[k]);
    weft_tensor_release(tx);
    weft_function_destroy(f);
}

/* The compiled graph as dot: numbered boxes, the in-place node filled, data
 * edges from inputs and producers, the DestroyHandler's ordering dashed
 * (Twice reads x before AddInplace overwrites it), the outputs. */
static void test_function_dot_shows_program_and_orderings(void **state)
{
    (void)state;
    weft_var_t *x = ct_var(g, "x", 1, S3), *y = ct_var(g, "y", 1, S3);
    weft_var_t *a = ct_call(g, &ct_twice_class, NULL, 1, x, NULL);
    weft_var_t *b = ct_call(g, &ct_add_inplace_class, NULL, 2, x, y);
    weft_var_t *in[2] = {x, y}, *outs[2] = {a, b};
    const bool mut[2] = {true, false};
    weft_function_options_t o = opts_none();
    o.accept_inplace = true;
    o.input_mutable = mut;
    weft_function_t *f = compile_ok(2, in, 2, outs, 0, NULL, &o);
    char buf[2048] = {0};
    FILE *m = fmemopen(buf, sizeof buf - 1, "w");
    assert_int_equal(weft_function_dot(f, m), WEFT_OK);
    fclose(m);
    assert_non_null(strstr(buf, "digraph \"function\" {"));
    assert_non_null(strstr(buf, "in0 [shape=ellipse, label=\"x (mutable)\"];"));
    assert_non_null(strstr(buf, "n0 [shape=box, label=\"0: Twice(x)\"];"));
    assert_non_null(strstr(buf, "n1 [shape=box, style=filled, fillcolor=\"#f4cccc\", "
                                "label=\"1: AddInplace(x, y)\"];"));
    assert_non_null(strstr(buf, "in0 -> n0;"));
    assert_non_null(strstr(buf, "in1 -> n1;"));
    assert_non_null(strstr(buf, "n0 -> n1 [style=dashed];"));
    /* output 1 is x's buffer: copied out (DeepCopyOp), as every output that
     * aliases an input */
    assert_non_null(strstr(buf, "n1 -> n2;\n"));
    assert_non_null(strstr(buf, "n2 -> out1;"));
    assert_int_equal(weft_function_dot(NULL, stdout), WEFT_EINVAL);
    assert_int_equal(weft_function_dot(f, NULL), WEFT_EINVAL);
    weft_function_destroy(f);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_function_small_graph_gives_exact_results),
        T(test_function_user_context_destroyed_after_compile_still_runs),
        T(test_function_user_inplace_op_is_refused_without_accept_inplace),
        T(test_function_accepted_inplace_on_protected_input_is_refused),
        T(test_function_accepted_inplace_on_mutable_input_overwrites_it),
        T(test_function_update_accumulates_over_calls),
        T(test_function_update_in_place_runs_in_the_state_buffer),
        T(test_function_update_by_a_view_of_the_state_itself),
        T(test_function_updates_only_and_aliased_mutable_input),
        T(test_function_mutable_input_overlapping_itself_is_copied),
        T(test_function_updated_input_overlapping_itself_is_refused),
        T(test_function_outputs_aliasing_inputs_are_copied),
        T(test_function_kept_intermediate_viewed_by_output_is_not_reused),
        T(test_function_failing_node_reports_and_next_call_works),
        T(test_function_node_output_of_wrong_shape_fails_the_call),
        T(test_function_nan_check_fails_the_node),
        T(test_function_call_bad_arguments_return_exact_status),
        T(test_function_compile_bad_arguments_return_exact_status),
        T(test_function_compile_of_a_cycle_is_ecycle),
        T(test_function_pools_default_shared_and_given),
        T(test_function_print_lists_nodes_in_order),
        T(test_function_nodes_laid_out_in_run_order),
        T(test_function_one_worker_runs_nodes_in_layout_order),
        T(test_function_dot_shows_program_and_orderings),
    };
    return cmocka_run_group_tests_name("function", tests, NULL, NULL);
}
