#define _POSIX_C_SOURCE 200809L
/* The JSON graph format: load(save(g)) equals g (structurally and by the
 * saved text), every built-in op class's props, constants of every dtype
 * (NaN/Inf), updates and mutable flags, OpFromGraph (nested, with override),
 * user class registration, files, and every malformed-file status with the
 * line or key it names. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "weft/composite.h"
#include "weft/elemwise.h"
#include "weft/eval.h"
#include "weft/grad.h"
#include "weft/graph.h"
#include "weft/graph_io.h"
#include "weft/json_props.h"
#include "weft/linalg.h"
#include "weft/opfromgraph.h"
#include "weft/reduce.h"
#include "weft/shape_ops.h"
#include "weft/tensor.h"

#include "support/shared_cycle.h"

typedef struct fx {
    weft_graph_t *g, *g2;
} fx_t;

static int setup(void **state)
{
    fx_t *f = calloc(1, sizeof(*f));
    if (!f || weft_graph_create(NULL, &f->g) != WEFT_OK ||
        weft_graph_create(NULL, &f->g2) != WEFT_OK)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx_t *f = *state;
    weft_graph_destroy(f->g);
    weft_graph_destroy(f->g2);
    free(f);
    return 0;
}

static weft_var_t *var(weft_graph_t *g, weft_dtype_t dt, int nd, const int64_t *shape,
                       const char *name)
{
    const weft_type_t *t;
    weft_var_t *v;
    assert_int_equal(weft_type_tensor(g, dt, nd, shape, &t), WEFT_OK);
    assert_non_null(v = weft_var_create(g, t, name));
    return v;
}

#define OK(call)                                                                            \
    do {                                                                                    \
        weft_status_t s_ = (call);                                                          \
        if (s_ != WEFT_OK) fprintf(stderr, "%s: %s\n", #call, weft_graph_last_error(f->g)); \
        assert_int_equal(s_, WEFT_OK);                                                      \
    } while (0)

#define OKV(expr) \
    do { \
        if (!(expr)) fprintf(stderr, "%s: %s\n", #expr, weft_graph_error_message(f->g)); \
        assert_int_equal(weft_graph_error(f->g), WEFT_OK); \
    } while (0)

/* Saves gr, loads the text into g2, saves again: the texts must be equal and
 * the loaded outputs structurally equal to the originals (inputs paired).
 * Returns the first text (free it) and the loaded graph in *loaded. */
/* With WEFT_SAVED_GRAPHS_DIR set, every graph the round trips save is kept
 * there as saved_N.json, for the schema check (tests/io/check_schema.sh). */
static void keep_saved(const char *text)
{
    static int n;
    const char *dir = getenv("WEFT_SAVED_GRAPHS_DIR");
    if (!dir) return;
    char path[4096];
    snprintf(path, sizeof path, "%s/saved_%d.json", dir, n++);
    FILE *out = fopen(path, "w");
    assert_non_null(out);
    fputs(text, out);
    assert_int_equal(fclose(out), 0);
}

static char *round_trip(fx_t *f, const weft_graph_io_t *gr, weft_graph_io_t *loaded)
{
    char *t1 = NULL, *t2 = NULL;
    OK(weft_graph_io_save(gr, &t1));
    keep_saved(t1);
    weft_status_t s = weft_graph_io_load(f->g2, t1, strlen(t1), "t1", loaded);
    if (s != WEFT_OK) fprintf(stderr, "load: %s\n%s", weft_graph_last_error(f->g2), t1);
    assert_int_equal(s, WEFT_OK);
    assert_int_equal(weft_graph_io_save(loaded, &t2), WEFT_OK);
    if (strcmp(t1, t2) != 0) fprintf(stderr, "first:\n%s\nsecond:\n%s", t1, t2);
    assert_string_equal(t1, t2);
    weft_graph_io_free_text(t2);
    assert_int_equal(loaded->n_inputs, gr->n_inputs);
    assert_int_equal(loaded->n_outputs, gr->n_outputs);
    bool eq = false;
    assert_int_equal(weft_graph_equal_computations(gr->n_outputs, gr->outputs, loaded->outputs,
                                                   gr->n_inputs, gr->inputs, loaded->inputs, &eq),
                     WEFT_OK);
    assert_true(eq);
    return t1;
}

/* ---- round trips --------------------------------------------------------------- */

static void test_io_mlp_step_round_trips_and_evaluates_equal(void **state)
{
    fx_t *f = *state;
    int64_t xs[2] = {4, 3}, ws[2] = {3, 2}, bs[1] = {2};
    weft_var_t *x = var(f->g, WEFT_FLOAT64, 2, xs, "x"), *w = var(f->g, WEFT_FLOAT64, 2, ws, "w");
    weft_var_t *b = var(f->g, WEFT_FLOAT64, 1, bs, "b"), *h, *hb, *t, *c, *lr, *step, *w2;
    OKV(h = weft_dot(f->g, x, w));
    OKV(hb = weft_add(f->g, h, b));
    OKV(t = weft_tanh(f->g, hb));
    OK(weft_var_set_name(t, "hidden"));
    OKV(c = weft_mean(f->g, t, 0, NULL, false));
    OKV(lr = weft_binary_scalar(f->g, WEFT_ELEMWISE_MUL, w, 0.5));
    OKV(step = weft_sub(f->g, w, lr));
    OKV(w2 = weft_transpose(f->g, step));
    weft_var_t *in[3] = {x, w, b}, *out[2] = {c, w2};
    weft_update_t up[1] = {{w, step}};
    bool mut[3] = {false, true, false};
    weft_graph_io_t gr = {3, in, mut, 2, out, 1, up};
    weft_graph_io_t ld;
    char *text = round_trip(f, &gr, &ld);
    /* one entry per line, names and mutability kept */
    assert_non_null(strstr(text, "\"format\": \"weft-graph\""));
    assert_non_null(strstr(text, "\n  {\"op\":\"Dot\",\"inputs\":[0,1],\"outputs\":[3]}"));
    assert_non_null(strstr(text, "\"names\":[\"hidden\"]"));
    assert_string_equal(weft_var_name(ld.inputs[1]), "w");
    assert_false(ld.input_mutable[0]);
    assert_true(ld.input_mutable[1]);
    assert_int_equal(ld.n_updates, 1);
    assert_ptr_equal(ld.updates[0].var, ld.inputs[1]);
    /* same values in both contexts */
    weft_tensor_t *v[3], *r1[2], *r2[2];
    const int64_t *shapes[3] = {xs, ws, bs};
    int nds[3] = {2, 2, 1};
    for (int i = 0; i < 3; i++)
        assert_int_equal(
            weft_verify_grad_random(WEFT_FLOAT64, nds[i], shapes[i], -1, 1, 11 + i, &v[i]),
            WEFT_OK);
    OK(weft_eval(f->g, 3, in, v, 2, out, r1));
    assert_int_equal(weft_eval(f->g2, 3, ld.inputs, v, 2, ld.outputs, r2), WEFT_OK);
    for (int k = 0; k < 2; k++) {
        bool eq = false;
        assert_int_equal(weft_tensor_allclose(r1[k], r2[k], 0, 0, &eq), WEFT_OK);
        assert_true(eq);
        weft_tensor_release(r1[k]);
        weft_tensor_release(r2[k]);
    }
    for (int i = 0; i < 3; i++) weft_tensor_release(v[i]);
    weft_graph_io_clear(&ld);
    weft_graph_io_free_text(text);
}

/* Whether kind k refuses float64 inputs (the bitwise kinds and shifts: they
 * take integers). */
static bool kind_refuses_float64(weft_graph_t *g, weft_elemwise_kind_t k)
{
    int64_t v3[1] = {3};
    weft_var_t *x = var(g, WEFT_FLOAT64, 1, v3, NULL), *in[3] = {x, x, x};
    const weft_op_t *op;
    if (k == WEFT_ELEMWISE_SWITCH || k == WEFT_ELEMWISE_CAST) return false;
    assert_int_equal(weft_elemwise_op(g, k, -1, WEFT_FLOAT32, &op), WEFT_OK);
    if (weft_op_call(g, op, weft_elemwise_arity(k), in)) return false;
    assert_int_equal(weft_graph_error(g), WEFT_ETYPE);
    weft_graph_clear_error(g);
    return true;
}

/* Applies every elementwise kind (with and without in-place variants and
 * Cast) and every shape, reduction and linear algebra op once. */
static void test_io_every_builtin_op_props_round_trip(void **state)
{
    fx_t *f = *state;
    int64_t v3[1] = {3}, m33[2] = {3, 3}, m23[2] = {2, 3};
    weft_var_t *a = var(f->g, WEFT_FLOAT64, 1, v3, "a"), *b = var(f->g, WEFT_FLOAT64, 1, v3, "b");
    weft_var_t *m = var(f->g, WEFT_FLOAT64, 2, m33, "m"), *r = var(f->g, WEFT_FLOAT64, 2, m23, "r");
    weft_var_t *outs[2 * WEFT_ELEMWISE_KIND_COUNT + 64]; /* every elementwise op, then the others */
    size_t n = 0;
    weft_var_t *cond, *ia, *ib;
    OKV(cond = weft_lt(f->g, a, b));
    OKV(ia = weft_cast(f->g, a, WEFT_INT64));
    OKV(ib = weft_cast(f->g, b, WEFT_INT64));
    for (int k = 0; k < WEFT_ELEMWISE_KIND_COUNT; k++) {
        size_t ar = weft_elemwise_arity((weft_elemwise_kind_t)k);
        bool ints = kind_refuses_float64(f->g, (weft_elemwise_kind_t)k);
        weft_var_t *x = ints ? ia : a, *y = ints ? ib : b;
        weft_var_t *args[3] = {k == WEFT_ELEMWISE_SWITCH ? cond : x, y, x};
        for (int inpl = -1; inpl <= 0; inpl++) {
            const weft_op_t *op;
            /* in place only where input 0 can hold the result */
            if (inpl == 0 && !weft_type_equal(weft_var_type(outs[n - 1]), weft_var_type(args[0])))
                continue;
            OK(weft_elemwise_op(f->g, (weft_elemwise_kind_t)k, inpl, WEFT_FLOAT32, &op));
            OKV(outs[n++] = weft_op_call(f->g, op, ar, args));
        }
    }
    int order[3] = {1, WEFT_DIMSHUFFLE_NEW, 0};
    int64_t shp[2] = {-1, 1}, axes_dummy = 0;
    (void)axes_dummy;
    weft_slice_t idx[2] = {WEFT_SLICE(2, WEFT_SLICE_NONE, -1), WEFT_SLICE_AT(-1)};
    weft_slice_t row[1] = {WEFT_SLICE_AT(0)};
    int ax[2] = {0, 1};
    weft_var_t *sub;
    OKV(outs[n++] = weft_dimshuffle(f->g, m, 3, order));
    OKV(outs[n++] = weft_reshape(f->g, m, 2, shp));
    OKV(outs[n++] = weft_reshape_like(f->g, a, b));
    OKV(outs[n++] = weft_subtensor(f->g, m, 2, idx));
    OKV(sub = weft_subtensor(f->g, m, 1, row));
    OKV(outs[n++] = weft_set_subtensor(f->g, m, a, 1, row));
    OKV(outs[n++] = weft_inc_subtensor(f->g, m, a, 1, row));
    OKV(outs[n++] = weft_sum(f->g, m, 1, ax, true));
    OKV(outs[n++] = weft_mean(f->g, m, 2, ax, false));
    OKV(outs[n++] = weft_max(f->g, m, 1, &ax[1], false));
    OKV(outs[n++] = weft_min(f->g, m, 0, NULL, false));
    OKV(outs[n++] = weft_prod(f->g, m, 1, ax, false));
    OKV(outs[n++] = weft_argmax(f->g, m, 1, true));
    OKV(outs[n++] = weft_dot(f->g, r, m));
    weft_var_t *one, *two;
    OKV(one = weft_constant_scalar(f->g, WEFT_FLOAT64, 1.0));
    OKV(two = weft_constant_scalar(f->g, WEFT_FLOAT64, 2.0));
    OKV(outs[n++] = weft_gemm(f->g, m, one, m, m, two, false));
    OKV(outs[n++] = weft_gemv(f->g, a, one, m, b, two, false));
    OKV(outs[n++] = weft_cholesky(f->g, m));
    OKV(outs[n++] = weft_trsm(f->g, m, r, WEFT_TRSM_RIGHT | WEFT_TRSM_UPPER));
    OKV(outs[n++] = weft_syrk(f->g, r, true, 0.25));
    const weft_composite_step_t prog[3] = {{WEFT_ELEMWISE_ADD, {0, 1}},
                                           {WEFT_ELEMWISE_TANH, {2, 0}},
                                           {WEFT_ELEMWISE_MUL, {3, 0}}};
    const weft_op_t *cop;
    weft_var_t *ab[2] = {a, b};
    OKV(outs[n++] = weft_composite(f->g, 2, ab, 3, prog));
    OK(weft_composite_op(f->g, 2, 3, prog, 1, &cop));
    OKV(outs[n++] = weft_op_call(f->g, cop, 2, ab));
    weft_var_t *in[4] = {a, b, m, r};
    weft_graph_io_t gr = {4, in, NULL, n, outs, 0, NULL};
    weft_graph_io_t ld;
    char *text = round_trip(f, &gr, &ld);
    assert_non_null(
        strstr(text, "{\"op\":\"Cast\",\"props\":{\"inplace\":-1,\"dtype\":\"float32\"}"));
    assert_non_null(strstr(text, "\"props\":{\"idx\":\"2::-1, -1\"}"));
    assert_non_null(strstr(text, "\"props\":{\"order\":[1,-1,0]}"));
    assert_non_null(strstr(text,
                           "{\"op\":\"Sum\",\"props\":{\"kind\":\"Sum\",\"ndim\":2,\"axes\":[0],"
                           "\"keepdims\":true}"));
    assert_non_null(strstr(text, "\"props\":{\"alpha\":0.25,\"trans\":true}"));
    assert_non_null(strstr(text, "{\"op\":\"Composite\",\"props\":{\"n_in\":2,\"steps\":"
                                 "\"Add(0,1) Tanh(2) Mul(3,0)\",\"inplace\":1}"));
    /* every op printed the same way after loading */
    for (size_t k = 0; k < n; k++) {
        char p1[128], p2[128];
        weft_op_print(weft_apply_op(weft_var_owner(outs[k])), p1, sizeof(p1));
        weft_op_print(weft_apply_op(weft_var_owner(ld.outputs[k])), p2, sizeof(p2));
        assert_string_equal(p1, p2);
    }
    weft_graph_io_clear(&ld);
    weft_graph_io_free_text(text);
}

static void test_io_constants_of_every_dtype_load_bit_exact(void **state)
{
    fx_t *f = *state;
    double d[5] = {0.1, -1e300, NAN, INFINITY, -INFINITY};
    float fl[2] = {1.5f, 1e-30f};
    int32_t i32[3] = {INT32_MIN, 0, 7};
    int64_t i64[2] = {INT64_MIN, INT64_MAX};
    uint8_t bo[3] = {1, 0, 1};
    const void *data[5] = {d, fl, i32, i64, bo};
    int64_t lens[5] = {5, 2, 3, 2, 3};
    weft_dtype_t dts[5] = {WEFT_FLOAT64, WEFT_FLOAT32, WEFT_INT32, WEFT_INT64, WEFT_BOOL};
    weft_var_t *cs[5];
    for (int i = 0; i < 5; i++) {
        const weft_type_t *t;
        OK(weft_type_tensor(f->g, dts[i], 1, &lens[i], &t));
        OKV(cs[i] =
                weft_constant_create(f->g, t, data[i], (size_t)lens[i] * weft_dtype_size(dts[i])));
    }
    weft_graph_io_t gr = {0, NULL, NULL, 5, cs, 0, NULL};
    weft_graph_io_t ld;
    char *text = round_trip(f, &gr, &ld);
    assert_non_null(strstr(
        text, "\"data\":[0.10000000000000001,-1.0000000000000001e300,\"nan\",\"inf\",\"-inf\"]"));
    assert_non_null(strstr(text, "\"data\":[true,false,true]"));
    for (int i = 0; i < 5; i++) {
        const void *p;
        size_t nb;
        assert_int_equal(weft_constant_data(ld.outputs[i], &p, &nb), WEFT_OK);
        assert_int_equal(nb, (size_t)lens[i] * weft_dtype_size(dts[i]));
        assert_memory_equal(p, data[i], nb);
    }
    weft_graph_io_clear(&ld);
    weft_graph_io_free_text(text);
}

/* The new real dtypes: integers as JSON integers (uint64 above INT64_MAX
 * as a decimal string), float16 as its exact double. */
static void test_io_constants_of_new_dtypes_load_bit_exact(void **state)
{
    fx_t *f = *state;
    int8_t i8[2] = {-128, 127};
    int16_t i16[2] = {-32768, 32767};
    uint8_t u8[2] = {0, 255};
    uint16_t u16[2] = {1, 65535};
    uint32_t u32[2] = {7, 4294967295u};
    uint64_t u64[2] = {9223372036854775807u, 18446744073709551615u};
    uint16_t f16[2] = {0x3555, 0x0001}; /* 0.333251953125, the smallest subnormal */
    const void *data[7] = {i8, i16, u8, u16, u32, u64, f16};
    weft_dtype_t dts[7] = {WEFT_INT8,   WEFT_INT16,  WEFT_UINT8,  WEFT_UINT16,
                           WEFT_UINT32, WEFT_UINT64, WEFT_FLOAT16};
    weft_var_t *cs[7];
    int64_t two = 2;
    for (int i = 0; i < 7; i++) {
        const weft_type_t *t;
        OK(weft_type_tensor(f->g, dts[i], 1, &two, &t));
        OKV(cs[i] = weft_constant_create(f->g, t, data[i], 2 * weft_dtype_size(dts[i])));
    }
    weft_graph_io_t gr = {0, NULL, NULL, 7, cs, 0, NULL};
    weft_graph_io_t ld;
    char *text = round_trip(f, &gr, &ld);
    assert_non_null(strstr(text, "\"dtype\":\"int8\",\"shape\":[2],\"data\":[-128,127]"));
    assert_non_null(strstr(text, "\"data\":[9223372036854775807,\"18446744073709551615\"]"));
    assert_non_null(strstr(text, "\"data\":[0.333251953125,5.9604644775390625e-8]"));
    for (int i = 0; i < 7; i++) {
        const void *p;
        size_t nb;
        assert_int_equal(weft_constant_data(ld.outputs[i], &p, &nb), WEFT_OK);
        assert_int_equal(nb, 2 * weft_dtype_size(dts[i]));
        assert_memory_equal(p, data[i], nb);
    }
    weft_graph_io_clear(&ld);
    weft_graph_io_free_text(text);
}

/* Cast's JSON dtype names cover the new dtypes; the loaded node computes
 * NumPy's promotion (int8 + uint8 -> int16) and its Cast's target. */
static void test_io_cast_to_new_dtypes_loads(void **state)
{
    fx_t *f = *state;
    const char *text =
        "{\"format\":\"weft-graph\",\"version\":1,"
        "\"inputs\":[{\"id\":0,\"dtype\":\"int8\",\"shape\":[3]},"
        "{\"id\":1,\"dtype\":\"uint8\",\"shape\":[3]}],"
        "\"nodes\":[{\"op\":\"Add\",\"inputs\":[0,1],\"outputs\":[2]},"
        "{\"op\":\"Cast\",\"props\":{\"dtype\":\"float16\"},\"inputs\":[2],\"outputs\":[3]},"
        "{\"op\":\"Cast\",\"props\":{\"dtype\":\"uint64\"},\"inputs\":[3],\"outputs\":[4]}],"
        "\"outputs\":[2,3,4]}";
    weft_graph_io_t ld;
    OK(weft_graph_io_load(f->g2, text, strlen(text), "cast.json", &ld));
    assert_int_equal(weft_type_dtype(weft_var_type(ld.outputs[0])), WEFT_INT16);
    assert_int_equal(weft_type_dtype(weft_var_type(ld.outputs[1])), WEFT_FLOAT16);
    assert_int_equal(weft_type_dtype(weft_var_type(ld.outputs[2])), WEFT_UINT64);
    char buf[64];
    weft_op_print(weft_apply_op(weft_var_owner(ld.outputs[1])), buf, sizeof buf);
    assert_string_equal(buf, "Cast{dtype=float16}");
    weft_graph_io_clear(&ld);
}

static void test_io_opfromgraph_nested_round_trips(void **state)
{
    fx_t *f = *state;
    int64_t v3[1] = {3};
    weft_var_t *x = var(f->g, WEFT_FLOAT64, 1, v3, "x"), *y = var(f->g, WEFT_FLOAT64, 1, v3, "y");
    weft_var_t *xy, *e, *in[2] = {x, y};
    OKV(xy = weft_mul(f->g, x, y));
    OKV(e = weft_binary_scalar(f->g, WEFT_ELEMWISE_ADD, xy, 1.0));
    const weft_op_t *inner, *outer, *ovr;
    weft_ofg_options_t o = WEFT_OFG_OPTIONS_INIT;
    o.name = "inner";
    o.inline_expand = true;
    OK(weft_ofg_create(f->g, 2, in, 1, &e, &o, &inner));
    weft_var_t *p = var(f->g, WEFT_FLOAT64, 1, v3, "p"), *q = var(f->g, WEFT_FLOAT64, 1, v3, "q");
    weft_var_t *pq[2] = {p, q}, *r, *rt, *g3 = var(f->g, WEFT_FLOAT64, 1, v3, "g");
    OKV(r = weft_op_call(f->g, inner, 2, pq));
    OKV(rt = weft_tanh(f->g, r));
    weft_var_t *oin[3] = {p, q, g3}, *oo[2] = {g3, g3};
    OK(weft_ofg_create(f->g, 3, oin, 2, oo, NULL, &ovr));
    weft_ofg_options_t o2 = WEFT_OFG_OPTIONS_INIT;
    o2.grad_override = ovr;
    OK(weft_ofg_create(f->g, 2, pq, 1, &rt, &o2, &outer));
    weft_var_t *a = var(f->g, WEFT_FLOAT64, 1, v3, "a"), *b = var(f->g, WEFT_FLOAT64, 1, v3, "b");
    weft_var_t *ab[2] = {a, b}, *res;
    OKV(res = weft_op_call(f->g, outer, 2, ab));
    weft_graph_io_t gr = {2, ab, NULL, 1, &res, 0, NULL};
    weft_graph_io_t ld;
    char *text = round_trip(f, &gr, &ld);
    assert_non_null(strstr(text, "\"name\":\"inner\",\"inline\":true,\"graph\":{"));
    const weft_op_t *lo = weft_apply_op(weft_var_owner(ld.outputs[0]));
    assert_true(weft_ofg_is(lo));
    assert_true(weft_op_equal(lo, outer));
    assert_non_null(weft_ofg_grad_override(lo));
    weft_graph_io_clear(&ld);
    weft_graph_io_free_text(text);
}

static void test_io_save_file_and_load_file(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = var(f->g, WEFT_FLOAT32, 0, NULL, "x"), *e;
    OKV(e = weft_exp(f->g, x));
    weft_graph_io_t gr = {1, &x, NULL, 1, &e, 0, NULL}, ld;
    char path[] = "/tmp/weft_io_testXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    OK(weft_graph_io_save_file(&gr, path));
    assert_int_equal(weft_graph_io_load_file(f->g2, path, &ld), WEFT_OK);
    assert_string_equal(weft_op_name(weft_apply_op(weft_var_owner(ld.outputs[0]))), "Exp");
    weft_graph_io_clear(&ld);
    remove(path);
    assert_int_equal(weft_graph_io_load_file(f->g2, path, &ld), WEFT_EIO);
    assert_non_null(strstr(weft_graph_last_error(f->g2), path));
    assert_int_equal(weft_graph_io_save_file(&gr, "/nonexistent-dir/x.json"), WEFT_EIO);
}

/* ---- user classes ----------------------------------------------------------------- */

typedef struct scale_props {
    double factor;
} scale_props_t;

static weft_status_t scale_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                     weft_var_t *const *in, size_t *n_out, const weft_type_t **out)
{
    (void)op;
    if (n_in != 1) return weft_graph_set_error(g, WEFT_EINVAL, "Scale takes 1 input");
    *n_out = 1;
    out[0] = weft_var_type(in[0]);
    return WEFT_OK;
}

static weft_status_t scale_to_json(const weft_op_t *op, weft_json_props_t *p)
{
    const scale_props_t *s = weft_op_props(op);
    return weft_json_props_put_double(p, "factor", s->factor);
}

static weft_status_t scale_from_json(weft_graph_t *g, const weft_op_class_t *cls,
                                     const weft_json_props_t *p, const weft_op_t **out)
{
    scale_props_t s;
    weft_status_t st = weft_json_props_get_double(p, "factor", &s.factor);
    if (st == WEFT_OK && s.factor == 0)
        return weft_json_props_error(p, WEFT_EPARSE, "factor must not be 0");
    return st != WEFT_OK ? st : weft_op_create(g, cls, &s, out);
}

static const weft_op_class_t scale_class = {.size = sizeof(weft_op_class_t),
                                            .name = "UserScale",
                                            .props_size = sizeof(scale_props_t),
                                            .make_node = scale_make_node,
                                            .props_to_json = scale_to_json,
                                            .props_from_json = scale_from_json};
/* Same name, another class; and a class with props but no hooks. */
static const weft_op_class_t scale_twin = {
    .size = sizeof(weft_op_class_t), .name = "UserScale", .make_node = scale_make_node};
static const weft_op_class_t nohook_class = {.size = sizeof(weft_op_class_t),
                                             .name = "NoHook",
                                             .props_size = sizeof(scale_props_t),
                                             .make_node = scale_make_node};
/* An old class compiled before the JSON hooks existed (size field smaller). */
static const weft_op_class_t old_class = {.size = offsetof(weft_op_class_t, props_to_json),
                                          .name = "OldNoProps",
                                          .make_node = scale_make_node};

static void test_io_user_class_registered_round_trips(void **state)
{
    fx_t *f = *state;
    assert_null(weft_op_class_find("UserScale"));
    assert_int_equal(weft_op_class_register(&scale_class), WEFT_OK);
    assert_int_equal(weft_op_class_register(&scale_class), WEFT_OK);
    assert_int_equal(weft_op_class_register(&scale_twin), WEFT_EALREADY);
    assert_int_equal(weft_op_class_register(weft_ofg_class()), WEFT_OK);
    static const weft_op_class_t fake_add = {
        .size = sizeof(weft_op_class_t), .name = "Add", .make_node = scale_make_node};
    assert_int_equal(weft_op_class_register(&fake_add), WEFT_EALREADY);
    assert_int_equal(weft_op_class_register(NULL), WEFT_EINVAL);
    assert_int_equal(weft_op_class_register(&old_class), WEFT_OK);
    assert_ptr_equal(weft_op_class_find("UserScale"), &scale_class);
    assert_ptr_equal(weft_op_class_find("OpFromGraph"), weft_ofg_class());
    assert_null(weft_op_class_find(NULL));
    scale_props_t sp = {2.5};
    const weft_op_t *op, *old;
    weft_var_t *x = var(f->g, WEFT_FLOAT64, 0, NULL, "x"), *y, *z;
    OK(weft_op_create(f->g, &scale_class, &sp, &op));
    OK(weft_op_create(f->g, &old_class, NULL, &old));
    OKV(y = weft_op_call(f->g, op, 1, &x));
    OKV(z = weft_op_call(f->g, old, 1, &y));
    weft_graph_io_t gr = {1, &x, NULL, 1, &z, 0, NULL}, ld;
    char *text = round_trip(f, &gr, &ld);
    assert_non_null(strstr(text, "{\"op\":\"UserScale\",\"props\":{\"factor\":2.5}"));
    assert_non_null(strstr(text, "{\"op\":\"OldNoProps\",\"inputs\""));
    weft_graph_io_clear(&ld);
    weft_graph_io_free_text(text);
    /* a class with props and no hook cannot be saved */
    const weft_op_t *nh;
    OK(weft_op_create(f->g, &nohook_class, &sp, &nh));
    OKV(y = weft_op_call(f->g, nh, 1, &x));
    weft_graph_io_t g2 = {1, &x, NULL, 1, &y, 0, NULL};
    assert_int_equal(weft_graph_io_save(&g2, &text), WEFT_ENOTIMPL);
    assert_non_null(strstr(weft_graph_last_error(f->g), "NoHook"));
    assert_null(text);
    /* a hook's own error names the props path */
    const char *bad = "{\"format\":\"weft-graph\",\"version\":1,\"inputs\":[{\"id\":0,\"dtype\":"
                      "\"float64\",\"shape\":[]}],\"nodes\":[{\"op\":\"UserScale\",\"props\":"
                      "{\"factor\":0},\"inputs\":[0],\"outputs\":[1]}],\"outputs\":[1]}";
    assert_int_equal(weft_graph_io_load(f->g2, bad, strlen(bad), NULL, &ld), WEFT_EPARSE);
    assert_string_equal(weft_graph_last_error(f->g2), "nodes[0].props: factor must not be 0");
}

/* ---- bad input ---------------------------------------------------------------------- */

static weft_status_t load_text(fx_t *f, const char *text)
{
    weft_graph_io_t ld;
    weft_status_t s = weft_graph_io_load(f->g2, text, strlen(text), "bad.json", &ld);
    if (s == WEFT_OK) weft_graph_io_clear(&ld);
    return s;
}

#define HEAD "{\"format\":\"weft-graph\",\"version\":1,"
#define IN0  "\"inputs\":[{\"id\":0,\"dtype\":\"float64\",\"shape\":[3]}],"

static void expect(fx_t *f, const char *text, weft_status_t want, const char *msg)
{
    weft_status_t s = load_text(f, text);
    if (s != want || strstr(weft_graph_last_error(f->g2), msg) == NULL)
        fprintf(stderr, "text: %s\nstatus %s, message: %s\n", text, weft_status_name(s),
                weft_graph_last_error(f->g2));
    assert_int_equal(s, want);
    assert_non_null(strstr(weft_graph_last_error(f->g2), msg));
}

static void test_io_malformed_files_name_line_or_key(void **state)
{
    fx_t *f = *state;
    /* syntax: truncated, and an error on line 3 */
    expect(f, HEAD IN0 "\"nodes\":[", WEFT_EPARSE, "bad.json:1:");
    expect(f, "{\n \"format\": \"weft-graph\",\n \"version\": 1,,\n}", WEFT_EPARSE, "bad.json:3:");
    expect(f, "[1, 2]", WEFT_EPARSE, "expected a JSON object");
    expect(f, "{\"format\":\"other\"}", WEFT_EPARSE, "format: expected \"weft-graph\"");
    expect(f, "{\"format\":\"weft-graph\",\"version\":2}", WEFT_EPARSE,
           "version: unsupported version 2");
    /* wrong types */
    expect(f, HEAD "\"inputs\":{},\"nodes\":[],\"outputs\":[]}", WEFT_EPARSE,
           "inputs: expected an array");
    expect(f, HEAD IN0 "\"nodes\":[],\"outputs\":[\"x\"]}", WEFT_EPARSE,
           "outputs[0]: expected a variable id");
    expect(f,
           HEAD "\"inputs\":[{\"id\":0,\"dtype\":\"float64\",\"shape\":[3],"
                "\"mutable\":1}],"
                "\"nodes\":[],\"outputs\":[0]}",
           WEFT_EPARSE, "inputs[0].mutable: expected true or false");
    expect(f,
           HEAD "\"inputs\":[{\"dtype\":\"float64\",\"shape\":[3]}],\"nodes\":[],\"outputs\":[0]}",
           WEFT_EPARSE, "inputs[0].id: missing");
    expect(f, HEAD IN0 "\"nodes\":[],\"outputs\":[]}", WEFT_EPARSE, "outputs: no outputs");
    /* unknown op, dangling and duplicate ids, output count */
    expect(f,
           HEAD IN0 "\"nodes\":[{\"op\":\"Exp\",\"inputs\":[0],\"outputs\":[1]},"
                    "{\"op\":\"Foo\",\"inputs\":[1],\"outputs\":[2]}],\"outputs\":[2]}",
           WEFT_EPARSE, "nodes[1].op: unknown op 'Foo'");
    expect(f,
           HEAD IN0
           "\"nodes\":[{\"op\":\"Add\",\"inputs\":[0,99],\"outputs\":[1]}],\"outputs\":[1]}",
           WEFT_EPARSE, "nodes[0].inputs[1]: unknown variable id 99");
    expect(f,
           HEAD IN0 "\"nodes\":[{\"op\":\"Exp\",\"inputs\":[0],\"outputs\":[0]}],\"outputs\":[0]}",
           WEFT_EPARSE, "nodes[0].outputs[0]: duplicate variable id 0");
    expect(f,
           HEAD IN0
           "\"nodes\":[{\"op\":\"Exp\",\"inputs\":[0],\"outputs\":[1,2]}],\"outputs\":[1]}",
           WEFT_EPARSE, "nodes[0].outputs: 2 ids for the op's 1 outputs");
    expect(f, HEAD IN0 "\"nodes\":[],\"outputs\":[5]}", WEFT_EPARSE,
           "outputs[0]: unknown variable id 5");
    expect(f,
           HEAD IN0 "\"nodes\":[{\"op\":\"Exp\",\"inputs\":[0],\"outputs\":[1]}],\"outputs\":[1],"
                    "\"updates\":[{\"input\":1,\"value\":0}]}",
           WEFT_EPARSE, "updates[0].input: not one of the graph inputs or shared variables");
    /* props */
    expect(f,
           HEAD IN0 "\"nodes\":[{\"op\":\"Exp\",\"props\":{\"inplace\":5},\"inputs\":[0],"
                    "\"outputs\":[1]}],\"outputs\":[1]}",
           WEFT_EPARSE, "nodes[0].props: inplace: 5");
    expect(f,
           HEAD IN0
           "\"nodes\":[{\"op\":\"Sum\",\"props\":{\"kind\":\"Sum\",\"ndim\":1,"
           "\"axes\":\"0\",\"keepdims\":false},\"inputs\":[0],\"outputs\":[1]}],\"outputs\":[1]}",
           WEFT_EPARSE, "nodes[0].props: axes: expected an array of integers");
    expect(f,
           HEAD IN0 "\"nodes\":[{\"op\":\"Cast\",\"props\":{\"inplace\":-1},\"inputs\":[0],"
                    "\"outputs\":[1]}],\"outputs\":[1]}",
           WEFT_EPARSE, "nodes[0].props: missing key 'dtype'");
    /* types and shapes */
    expect(f,
           HEAD "\"inputs\":[{\"id\":0,\"dtype\":\"bfloat16\",\"shape\":[3]}],\"nodes\":[],"
                "\"outputs\":[0]}",
           WEFT_ETYPE, "inputs[0].dtype: unknown dtype 'bfloat16'");
    expect(f,
           HEAD "\"inputs\":[{\"id\":0,\"dtype\":\"float128\",\"shape\":[3]}],\"nodes\":[],"
                "\"outputs\":[0]}",
           WEFT_ETYPE, "inputs[0].dtype: unknown dtype 'float128'");
    expect(f,
           HEAD "\"inputs\":[{\"id\":0,\"dtype\":\"float64\",\"shape\":[-2]}],\"nodes\":[],"
                "\"outputs\":[0]}",
           WEFT_ESHAPE, "inputs[0].shape: entry 0");
    expect(f,
           HEAD "\"inputs\":[],\"constants\":[{\"id\":0,\"dtype\":\"int32\",\"shape\":[2,3],"
                "\"data\":[1,2,3,4,5]}],\"nodes\":[],\"outputs\":[0]}",
           WEFT_ESHAPE, "constants[0].data: 5 values for type int32[2,3] (6 expected)");
    expect(f,
           HEAD "\"inputs\":[],\"constants\":[{\"id\":0,\"dtype\":\"int32\",\"shape\":[1],"
                "\"data\":[1.5]}],\"nodes\":[],\"outputs\":[0]}",
           WEFT_EPARSE, "constants[0].data: value 0 is not a int32");
    expect(f,
           HEAD "\"inputs\":[],\"constants\":[{\"id\":0,\"dtype\":\"uint8\",\"shape\":[1],"
                "\"data\":[256]}],\"nodes\":[],\"outputs\":[0]}",
           WEFT_EPARSE, "constants[0].data: value 0 is not a uint8");
    expect(f,
           HEAD "\"inputs\":[],\"constants\":[{\"id\":0,\"dtype\":\"uint64\",\"shape\":[1],"
                "\"data\":[\"18446744073709551616\"]}],\"nodes\":[],\"outputs\":[0]}",
           WEFT_EPARSE, "constants[0].data: value 0 is not a uint64");
    expect(f,
           HEAD "\"inputs\":[],\"constants\":[{\"id\":0,\"dtype\":\"float64\",\"shape\":[null],"
                "\"data\":[]}],\"nodes\":[],\"outputs\":[0]}",
           WEFT_ESHAPE, "constants[0].shape: entry 0");
    /* a node whose op rejects its input types names the node */
    expect(f,
           HEAD "\"inputs\":[{\"id\":0,\"dtype\":\"bool\",\"shape\":[3]}],\"nodes\":[{\"op\":"
                "\"Neg\",\"inputs\":[0],\"outputs\":[1]}],\"outputs\":[1]}",
           WEFT_ETYPE, "nodes[0]: ");
    /* NULL arguments */
    weft_graph_io_t ld;
    assert_int_equal(weft_graph_io_load(NULL, "{}", 2, NULL, &ld), WEFT_EINVAL);
    assert_int_equal(weft_graph_io_load(f->g2, NULL, 2, NULL, &ld), WEFT_EINVAL);
    assert_int_equal(weft_graph_io_load(f->g2, "{}", 2, NULL, NULL), WEFT_EINVAL);
    assert_int_equal(weft_graph_io_load_file(f->g2, NULL, &ld), WEFT_EINVAL);
}

/* Exact message of loading text into g2 (status want). */
static void expect_exact(fx_t *f, const char *text, weft_status_t want, const char *msg)
{
    weft_status_t s = load_text(f, text);
    if (s != want) fprintf(stderr, "text: %s\nstatus %s\n", text, weft_status_name(s));
    assert_int_equal(s, want);
    assert_string_equal(weft_graph_last_error(f->g2), msg);
}

#define EXP_NODE(extra) \
    HEAD IN0 "\"nodes\":[{\"op\":\"Exp\"," extra "\"inputs\":[0],\"outputs\":[1]}],\"outputs\":[1]}"
#define SUM_NODE(kind) \
    HEAD IN0 "\"nodes\":[{\"op\":\"Sum\",\"props\":{\"kind\":\"" kind "\",\"ndim\":1," \
             "\"axes\":[0],\"keepdims\":false},\"inputs\":[0],\"outputs\":[1]}],\"outputs\":[1]}"

static void test_io_unknown_keys_and_props_are_named(void **state)
{
    fx_t *f = *state;
    static const struct {
        const char *text, *msg;
    } cases[] = {
        {HEAD IN0 "\"nodes\":[],\"outputs\":[0],\"extra\":1}", "<top>: unknown key 'extra'"},
        {HEAD "\"inputs\":[{\"id\":0,\"dtype\":\"float64\",\"shape\":[3],\"mutabel\":true}],"
              "\"nodes\":[],\"outputs\":[0]}",
         "inputs[0]: unknown key 'mutabel'"},
        {HEAD "\"inputs\":[],\"constants\":[{\"id\":0,\"dtype\":\"int32\",\"shape\":[],"
              "\"data\":[1],\"value\":1}],\"nodes\":[],\"outputs\":[0]}",
         "constants[0]: unknown key 'value'"},
        {EXP_NODE("\"name\":[\"e\"],"), "nodes[0]: unknown key 'name'"},
        {HEAD IN0 "\"nodes\":[],\"outputs\":[0],\"updates\":[{\"input\":0,\"value\":0,"
                  "\"when\":1}]}",
         "updates[0]: unknown key 'when'"},
        {EXP_NODE("\"props\":{\"inplace\":-1,\"inpalce\":0},"),
         "nodes[0].props: unknown key 'inpalce' (Exp reads inplace)"},
        {HEAD IN0 "\"nodes\":[{\"op\":\"Dot\",\"props\":{\"x\":1},\"inputs\":[0,0],"
                  "\"outputs\":[1]}],\"outputs\":[1]}",
         "nodes[0].props: unknown key 'x' (Dot reads no props)"},
        {SUM_NODE("Mean"), "nodes[0].props: kind: 'Mean' on a Sum node (expected 'Sum')"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_exact(f, cases[i].text, WEFT_EPARSE, cases[i].msg);
    assert_int_equal(load_text(f, SUM_NODE("Sum")), WEFT_OK);
}

/* Add of a [2,3] and a [3] input. */
#define BCAST_GRAPH \
    HEAD "\"inputs\":[{\"id\":0,\"dtype\":\"float64\",\"shape\":[2,3]}," \
         "{\"id\":1,\"dtype\":\"float64\",\"shape\":[3]}]," \
         "\"nodes\":[{\"op\":\"Add\",\"inputs\":[0,1],\"outputs\":[2]}],\"outputs\":[2]}"

/* Elementwise nodes left-pad lower-rank inputs, as weft_add does in C; a
 * rejected node's creation site names the node, not a line. */
static void test_io_elemwise_nodes_broadcast_as_in_c(void **state)
{
    fx_t *f = *state;
    weft_graph_io_t ld;
    OK(weft_graph_io_load(f->g2, BCAST_GRAPH, strlen(BCAST_GRAPH), "b.json", &ld));
    const weft_apply_t *a = weft_var_owner(ld.outputs[0]);
    char buf[256];
    weft_apply_print(a, buf, sizeof buf);
    assert_string_equal(buf, "Add(<float64[2,3]>, DimShuffle{order=(x,0)}.out)");
    weft_graph_io_clear(&ld);
    expect_exact(f,
                 HEAD "\"inputs\":[{\"id\":0,\"dtype\":\"float64\",\"shape\":[2,3]},"
                      "{\"id\":1,\"dtype\":\"float64\",\"shape\":[2]}],"
                      "\"nodes\":[{\"op\":\"Add\",\"inputs\":[0,1],\"outputs\":[2]}],"
                      "\"outputs\":[2]}",
                 WEFT_ESHAPE,
                 "nodes[0]: apply of Add at bad.json node 0: Add: input 0 has length 3 and input "
                 "1 length 2 in dimension 1");
}

/* Loaded entries are at "FILE KIND N" with line 0, so messages print the
 * entry's index as such ("b.json node 0"), never as a line ("b.json node:0"). */
static void test_io_loaded_sites_name_entries(void **state)
{
    fx_t *f = *state;
    weft_graph_io_t ld;
    OK(weft_graph_io_load(f->g2, BCAST_GRAPH, strlen(BCAST_GRAPH), "b.json", &ld));
    weft_apply_t *a = weft_var_owner(ld.outputs[0]);
    const char *file = NULL;
    int line = -1;
    weft_apply_trace(a, &file, &line);
    assert_string_equal(file, "b.json node 0");
    assert_int_equal(line, 0);
    line = -1; /* the DimShuffle padding input 1 is part of node 0 */
    weft_apply_trace(weft_var_owner(weft_apply_input(a, 1)), &file, &line);
    assert_string_equal(file, "b.json node 0");
    assert_int_equal(line, 0);
    line = -1;
    weft_var_trace(ld.inputs[1], &file, &line);
    assert_string_equal(file, "b.json input 1");
    assert_int_equal(line, 0);
    char buf[256], want[256];
    weft_apply_describe(a, buf, sizeof buf);
    snprintf(want, sizeof want, "apply %llu (Add, built at b.json node 0)",
             (unsigned long long)weft_apply_id(a));
    assert_string_equal(buf, want);
    char *text = NULL; /* a later stage's message names the input entry */
    weft_graph_io_t part = {1, ld.inputs, NULL, 1, ld.outputs, 0, NULL};
    assert_int_equal(weft_graph_io_save(&part, &text), WEFT_EMISSING_INPUT);
    assert_string_equal(weft_graph_last_error(f->g2),
                        "weft_graph_io_save: variable <float64[3]> (created at b.json input 1) "
                        "is a root but not among the inputs");
    weft_graph_io_clear(&ld);
}

/* Mutability means the same in C and JSON: NULL flags save as false, and an
 * absent "mutable" loads as false. */
static void test_io_input_mutability_defaults_to_false(void **state)
{
    fx_t *f = *state;
    int64_t s3[1] = {3};
    weft_var_t *x = var(f->g, WEFT_FLOAT64, 1, s3, "x"), *y;
    OKV(y = weft_exp(f->g, x));
    weft_graph_io_t gr = {1, &x, NULL, 1, &y, 0, NULL}, ld;
    char *text = round_trip(f, &gr, &ld);
    assert_non_null(strstr(text, "\"mutable\":false"));
    assert_false(ld.input_mutable[0]);
    weft_graph_io_clear(&ld);
    weft_graph_io_free_text(text);
    const char *absent = EXP_NODE("");
    OK(weft_graph_io_load(f->g2, absent, strlen(absent), NULL, &ld));
    assert_false(ld.input_mutable[0]);
    weft_graph_io_clear(&ld);
}

static void test_io_save_bad_graphs_rejected(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = var(f->g, WEFT_FLOAT64, 0, NULL, "x"),
               *y = var(f->g, WEFT_FLOAT64, 0, NULL, "y");
    weft_var_t *e, *z = var(f->g2, WEFT_FLOAT64, 0, NULL, "z");
    OKV(e = weft_add(f->g, x, y));
    char *text = NULL;
    weft_graph_io_t gr = {1, &x, NULL, 1, &e, 0, NULL};
    assert_int_equal(weft_graph_io_save(&gr, &text), WEFT_EMISSING_INPUT);
    assert_non_null(strstr(weft_graph_last_error(f->g), "y"));
    assert_int_equal(weft_graph_io_save(NULL, &text), WEFT_EINVAL);
    assert_int_equal(weft_graph_io_save(&gr, NULL), WEFT_EINVAL);
    weft_graph_io_t none = {1, &x, NULL, 0, NULL, 0, NULL};
    assert_int_equal(weft_graph_io_save(&none, &text), WEFT_EINVAL);
    weft_var_t *xx[2] = {x, x}, *xz[2] = {x, z}, *xy[2] = {x, y};
    weft_graph_io_t twice = {2, xx, NULL, 1, &e, 0, NULL};
    assert_int_equal(weft_graph_io_save(&twice, &text), WEFT_EINVAL);
    weft_graph_io_t foreign = {2, xz, NULL, 1, &e, 0, NULL};
    assert_int_equal(weft_graph_io_save(&foreign, &text), WEFT_EFOREIGN);
    weft_graph_io_t owned = {1, &e, NULL, 1, &e, 0, NULL};
    assert_int_equal(weft_graph_io_save(&owned, &text), WEFT_EINVAL);
    weft_update_t eu = {e, e};
    weft_graph_io_t upd = {2, xy, NULL, 1, &e, 1, &eu};
    assert_int_equal(weft_graph_io_save(&upd, &text), WEFT_EINVAL);
    assert_non_null(strstr(weft_graph_last_error(f->g), "update 0"));
    assert_null(text);
}

/* A cycle that reached the graph (tests/support/shared_cycle.h): WEFT_ECYCLE
 * naming it, never a file that refers to a node not yet written. */
static void test_io_save_of_a_cycle_is_ecycle(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = var(f->g, WEFT_FLOAT64, 0, NULL, "x"),
               *y = var(f->g, WEFT_FLOAT64, 0, NULL, "y");
    const weft_op_t *e, *n, *a;
    OK(weft_elemwise_op(f->g, WEFT_ELEMWISE_EXP, -1, WEFT_FLOAT64, &e));
    OK(weft_elemwise_op(f->g, WEFT_ELEMWISE_NEG, -1, WEFT_FLOAT64, &n));
    OK(weft_elemwise_op(f->g, WEFT_ELEMWISE_ADD, -1, WEFT_FLOAT64, &a));
    weft_var_t *out = shared_cycle_build(f->g, e, n, a, x, y, NULL, NULL), *in[2] = {x, y};
    assert_non_null(out);
    char *text = NULL;
    weft_graph_io_t gr = {2, in, NULL, 1, &out, 0, NULL};
    assert_int_equal(weft_graph_io_save(&gr, &text), WEFT_ECYCLE);
    assert_null(text);
    assert_string_equal(msg_without_sites(weft_graph_last_error(f->g)),
                        "weft_graph_io_save: graph contains a cycle: apply 0 (Exp) -> apply 2 "
                        "(Neg) -> apply 1 (Neg)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_io_mlp_step_round_trips_and_evaluates_equal, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_io_every_builtin_op_props_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_io_constants_of_new_dtypes_load_bit_exact, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_io_cast_to_new_dtypes_loads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_io_constants_of_every_dtype_load_bit_exact, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_io_opfromgraph_nested_round_trips, setup, teardown),
        cmocka_unit_test_setup_teardown(test_io_save_file_and_load_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_io_user_class_registered_round_trips, setup, teardown),
        cmocka_unit_test_setup_teardown(test_io_malformed_files_name_line_or_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_io_unknown_keys_and_props_are_named, setup, teardown),
        cmocka_unit_test_setup_teardown(test_io_elemwise_nodes_broadcast_as_in_c, setup, teardown),
        cmocka_unit_test_setup_teardown(test_io_loaded_sites_name_entries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_io_input_mutability_defaults_to_false, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_io_save_bad_graphs_rejected, setup, teardown),
        cmocka_unit_test_setup_teardown(test_io_save_of_a_cycle_is_ecycle, setup, teardown),
    };
    return cmocka_run_group_tests_name("graph_io", tests, NULL, NULL);
}
