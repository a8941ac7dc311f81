/* Bad input to the public functions added or changed by issues 15 and 16
 * (shared variables, custom ops, tensor_iter, kernel helpers, History,
 * NodeFinder, fgraph utilities, op clone, OpFromGraph options, node costs,
 * profile writers, npy save, the graph's kept error, scalar helpers): NULL
 * pointers, out-of-range counts, objects of another graph context, a
 * missing feature and wrong dtypes give the documented status and a
 * message naming the argument, never a crash or a leak (run under
 * ASan+UBSan, tools/dev/test.sh). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "weft/custom_op.h"
#include "weft/history.h"
#include "weft/node_cost.h"
#include "weft/node_finder.h"
#include "weft/npy.h"
#include "weft/shared.h"
#include "weft/tensor_iter.h"
#include "weft/weft.h"

typedef struct fixture {
    weft_graph_t *g, *g2; /* g2: "another context" */
    weft_var_t *x, *y;    /* float64[3] of g */
    weft_var_t *z;        /* float64[3] of g2 */
    weft_fgraph_t *fg;    /* (x) -> (x + y... ) built lazily */
} fixture_t;

static weft_var_t *vec(weft_graph_t *g, weft_dtype_t dt, const char *name)
{
    const weft_type_t *t = NULL;
    int64_t shape[1] = {3};
    assert_int_equal(weft_type_tensor(g, dt, 1, shape, &t), WEFT_OK);
    weft_var_t *v = weft_var_create(g, t, name);
    assert_non_null(v);
    return v;
}

static int setup(void **state)
{
    static fixture_t f;
    memset(&f, 0, sizeof(f));
    if (weft_graph_create(NULL, &f.g) != WEFT_OK) return -1;
    if (weft_graph_create(NULL, &f.g2) != WEFT_OK) return -1;
    f.x = vec(f.g, WEFT_FLOAT64, "x");
    f.y = vec(f.g, WEFT_FLOAT64, "y");
    f.z = vec(f.g2, WEFT_FLOAT64, "z");
    weft_var_t *in[2] = {f.x, f.y};
    weft_var_t *out = weft_tanh(f.g, weft_add(f.g, f.x, f.y));
    assert_non_null(out);
    if (weft_fgraph_create(f.g, 2, in, 1, &out, NULL, NULL, &f.fg) != WEFT_OK) return -1;
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    weft_fgraph_destroy(f->fg);
    weft_graph_destroy(f->g);
    weft_graph_destroy(f->g2);
    return 0;
}

/* Asserts that the constructor's NULL came with `status` kept on g, a
 * message containing `part`, then forgets it. */
static void expect_kept(weft_graph_t *g, const void *result, weft_status_t status,
                        const char *part)
{
    /* cleared before asserting, so one failure does not cascade */
    weft_status_t kept = weft_graph_error(g);
    char msg[1024];
    snprintf(msg, sizeof(msg), "%s", weft_graph_error_message(g));
    weft_graph_clear_error(g);
    assert_int_equal(weft_graph_error(g), WEFT_OK);
    assert_null(result);
    assert_int_equal(kept, status);
    if (!strstr(msg, part)) fail_msg("message \"%s\" lacks \"%s\"", msg, part);
}

static void expect_text(const char *msg, const char *part)
{
    assert_non_null(msg);
    if (!strstr(msg, part)) fail_msg("message \"%s\" lacks \"%s\"", msg, part);
}

static weft_tensor_t *tensor(weft_dtype_t dt, int nd, int64_t len)
{
    weft_tensor_t *t = NULL;
    int64_t shape[2] = {len, len};
    assert_int_equal(weft_tensor_empty(dt, nd, shape, &t), WEFT_OK);
    return t;
}

/* ---- graph error functions, scalar helpers, foreign operands -------------- */

static void test_graph_error_null(void **state)
{
    fixture_t *f = *state;
    assert_int_equal(weft_graph_error(NULL), WEFT_OK);
    assert_string_equal(weft_graph_error_message(NULL), "");
    weft_graph_clear_error(NULL);
    assert_int_equal(weft_graph_error(f->g), WEFT_OK);
    assert_string_equal(weft_graph_error_message(f->g), "");
}

static void test_scalar_helpers(void **state)
{
    fixture_t *f = *state;
    assert_null(weft_binary_scalar(NULL, WEFT_ELEMWISE_ADD, f->x, 1.0));
    assert_null(weft_scalar_binary(NULL, WEFT_ELEMWISE_ADD, 1.0, f->x));
    expect_kept(f->g, weft_binary_scalar(f->g, WEFT_ELEMWISE_ADD, NULL, 1.0), WEFT_EINVAL,
                "input 0 is NULL");
    expect_kept(f->g, weft_scalar_binary(f->g, WEFT_ELEMWISE_MUL, 2.0, NULL), WEFT_EINVAL,
                "input 1 is NULL");
    expect_kept(f->g, weft_binary_scalar(f->g, WEFT_ELEMWISE_ADD, f->z, 1.0), WEFT_EFOREIGN, "z");
    expect_kept(f->g, weft_scalar_binary(f->g, WEFT_ELEMWISE_SUB, 1.0, f->z), WEFT_EFOREIGN, "z");
    expect_kept(f->g, weft_binary_scalar(f->g, (weft_elemwise_kind_t)9999, f->x, 1.0),
                WEFT_EINVAL, "invalid elementwise kind 9999");
}

static void test_foreign_operands(void **state)
{
    fixture_t *f = *state;
    expect_kept(f->g, weft_add(f->g, f->x, f->z), WEFT_EFOREIGN, "z");
    expect_kept(f->g, weft_cast(f->g, f->z, WEFT_FLOAT32), WEFT_EFOREIGN, "z");
    expect_kept(f->g, weft_zeros_like(f->g, f->z), WEFT_EFOREIGN, "z");
    expect_kept(f->g, weft_dot(f->g, f->x, f->z), WEFT_EFOREIGN, "z");
}

static weft_var_t *mat(weft_graph_t *g, weft_dtype_t dt, const char *name)
{
    const weft_type_t *t = NULL;
    int64_t shape[2] = {3, 3};
    assert_int_equal(weft_type_tensor(g, dt, 2, shape, &t), WEFT_OK);
    weft_var_t *v = weft_var_create(g, t, name);
    assert_non_null(v);
    return v;
}

/* Every composing constructor given a variable of another context: NULL,
 * WEFT_EFOREIGN kept on g, the message naming it ("zm"). */
static void test_constructors_foreign(void **state)
{
    fixture_t *f = *state;
    weft_graph_t *g = f->g;
    weft_var_t *m = mat(g, WEFT_FLOAT64, "m"), *zm = mat(f->g2, WEFT_FLOAT64, "zm");
    weft_var_t *s = weft_constant_scalar(g, WEFT_FLOAT64, 1.0);
    weft_var_t *pair[2] = {m, zm};
    weft_composite_step_t step = {WEFT_ELEMWISE_ADD, {0, 1}};
    expect_kept(g, weft_composite(g, 2, pair, 1, &step), WEFT_EFOREIGN, "zm");
    expect_kept(g, weft_elemwise(g, WEFT_ELEMWISE_ADD, 2, pair), WEFT_EFOREIGN, "zm");
    expect_kept(g, weft_unary(g, WEFT_ELEMWISE_TANH, zm), WEFT_EFOREIGN, "zm");
    expect_kept(g, weft_binary(g, WEFT_ELEMWISE_MUL, zm, m), WEFT_EFOREIGN, "zm");
    weft_var_t *c = weft_cast(g, m, WEFT_BOOL);
    expect_kept(g, weft_switch(g, c, m, zm), WEFT_EFOREIGN, "zm");
    expect_kept(g, weft_gemm(g, m, s, m, zm, s, false), WEFT_EFOREIGN, "zm");
    expect_kept(g, weft_gemv(g, f->x, s, zm, f->x, s, false), WEFT_EFOREIGN, "zm");
    expect_kept(g, weft_cholesky(g, zm), WEFT_EFOREIGN, "zm");
    expect_kept(g, weft_trsm(g, m, zm, 0), WEFT_EFOREIGN, "zm");
    expect_kept(g, weft_syrk(g, zm, false, 1.0), WEFT_EFOREIGN, "zm");
    expect_kept(g, weft_sum(g, zm, 0, NULL, false), WEFT_EFOREIGN, "zm");
    expect_kept(g, weft_argmax(g, zm, 0, false), WEFT_EFOREIGN, "zm");
    int order[2] = {1, 0};
    expect_kept(g, weft_dimshuffle(g, zm, 2, order), WEFT_EFOREIGN, "zm");
    expect_kept(g, weft_transpose(g, zm), WEFT_EFOREIGN, "zm");
    expect_kept(g, weft_pad_left(g, zm, 3), WEFT_EFOREIGN, "zm");
    int64_t nine[1] = {9};
    expect_kept(g, weft_reshape(g, zm, 1, nine), WEFT_EFOREIGN, "zm");
    expect_kept(g, weft_reshape_like(g, m, zm), WEFT_EFOREIGN, "zm");
    weft_slice_t all[1] = {WEFT_SLICE_ALL};
    expect_kept(g, weft_subtensor(g, zm, 1, all), WEFT_EFOREIGN, "zm");
    expect_kept(g, weft_set_subtensor(g, m, zm, 1, all), WEFT_EFOREIGN, "zm");
    expect_kept(g, weft_inc_subtensor(g, zm, m, 1, all), WEFT_EFOREIGN, "zm");
    expect_kept(g, weft_grad(g, weft_sum(f->g2, zm, 0, NULL, false), m), WEFT_EFOREIGN, "cost");
    expect_kept(g, weft_grad(g, weft_sum(g, m, 0, NULL, false), zm), WEFT_EFOREIGN, "zm");
    expect_kept(g, weft_var_create(g, weft_var_type(zm), "v"), WEFT_EFOREIGN,
                "type float64");
    double nine_d[9] = {0};
    expect_kept(g, weft_constant_create(g, weft_var_type(zm), nine_d, sizeof(nine_d)),
                WEFT_EFOREIGN, "type float64");
    const weft_op_t *tanh2 = weft_apply_op(weft_var_owner(weft_tanh(f->g2, zm)));
    expect_kept(g, weft_op_call(g, tanh2, 1, &m), WEFT_EFOREIGN, "Tanh");
    expect_kept(g, weft_apply_create(g, tanh2, 1, &m), WEFT_EFOREIGN, "Tanh");
    const weft_op_t *tanh1 = weft_apply_op(weft_var_owner(weft_tanh(g, m)));
    expect_kept(g, weft_op_call(g, tanh1, 1, &zm), WEFT_EFOREIGN, "zm");
}

/* Out-of-range arguments and wrong dtypes, named in the kept message. */
static void test_constructors_out_of_range(void **state)
{
    fixture_t *f = *state;
    weft_graph_t *g = f->g;
    weft_var_t *m = mat(g, WEFT_FLOAT64, "m"), *k = mat(g, WEFT_INT32, "k");
    int axes[1] = {5};
    expect_kept(g, weft_sum(g, m, 1, axes, false), WEFT_EINVAL, "5");
    expect_kept(g, weft_argmax(g, m, 2, false), WEFT_EINVAL, "2");
    int order[2] = {0, 7};
    expect_kept(g, weft_dimshuffle(g, m, 2, order), WEFT_EINVAL, "7");
    expect_kept(g, weft_pad_left(g, m, 1), WEFT_EINVAL, "2 dimensions to 1");
    int64_t eight[1] = {8};
    expect_kept(g, weft_reshape(g, m, 1, eight), WEFT_ESHAPE, "8");
    weft_slice_t three[3] = {WEFT_SLICE_ALL, WEFT_SLICE_ALL, WEFT_SLICE_ALL};
    expect_kept(g, weft_subtensor(g, m, 3, three), WEFT_EINVAL,
                "3 indices for a 2-dimensional input");
    expect_kept(g, weft_cholesky(g, k), WEFT_ETYPE, "int32");
    expect_kept(g, weft_cholesky(g, f->x), WEFT_ETYPE, "float64[3]");
}

/* weft_grads, constants and weft_var_create: NULL, sizes, dtypes. */
static void test_grads_and_leaves_bad_input(void **state)
{
    fixture_t *f = *state;
    weft_graph_t *g = f->g;
    weft_var_t *cost = weft_sum(g, f->x, 0, NULL, false), *grads[2] = {NULL, NULL};
    weft_var_t *wrt[2] = {f->x, f->y};
    assert_null(weft_grads(NULL, cost, 1, wrt, NULL, grads));
    expect_kept(g, weft_grads(g, cost, 1, wrt, NULL, NULL), WEFT_EINVAL, "grads_out");
    expect_kept(g, weft_grads(g, cost, 1, NULL, NULL, grads), WEFT_EINVAL, "wrt");
    weft_var_t *null_wrt[1] = {NULL};
    expect_kept(g, weft_grads(g, cost, 1, null_wrt, NULL, grads), WEFT_EINVAL, "wrt 0 is NULL");
    weft_grad_options_t small = WEFT_GRAD_OPTIONS_INIT;
    small.size = 1;
    expect_kept(g, weft_grads(g, cost, 1, wrt, &small, grads), WEFT_EINVAL, "size");
    expect_kept(g, weft_grads(g, cost, 2, wrt, NULL, grads), WEFT_EDISCONNECTED, "y");
    assert_null(grads[0]);
    assert_null(grads[1]);
    weft_var_t *k = vec(g, WEFT_INT32, "k");
    expect_kept(g, weft_grad(g, cost, k), WEFT_ETYPE, "k");
    expect_kept(g, weft_grad(g, f->x, f->x), WEFT_ETYPE, "float64[3]");

    expect_kept(g, weft_constant_scalar(g, (weft_dtype_t)99, 1.0), WEFT_EINVAL, "99");
    expect_kept(g, weft_constant_scalar(g, WEFT_INT32, 1e12), WEFT_EINVAL,
                "1e+12 is not representable as int32");
    double three[3] = {1, 2, 3};
    const weft_type_t *t = weft_var_type(f->x);
    expect_kept(g, weft_constant_create(g, t, three, 16), WEFT_ESHAPE, "16");
    expect_kept(g, weft_constant_create(g, t, NULL, 24), WEFT_EINVAL, "NULL data");
    expect_kept(g, weft_constant_create(g, NULL, three, 24), WEFT_EINVAL, "NULL type");
    assert_null(weft_var_create(NULL, t, "v"));
    assert_null(weft_constant_create(NULL, t, three, 24));
    assert_null(weft_constant_scalar(NULL, WEFT_FLOAT64, 1.0));
}

/* ---- shared variables ----------------------------------------------------- */

static void test_shared_bad_input(void **state)
{
    fixture_t *f = *state;
    weft_tensor_t *w0 = tensor(WEFT_FLOAT64, 1, 3);
    assert_null(weft_shared(NULL, w0, "W"));
    expect_kept(f->g, weft_shared(f->g, NULL, "W"), WEFT_EINVAL, "value");
    weft_var_t *W = weft_shared(f->g, w0, "W");
    assert_non_null(W);
    assert_true(weft_var_is_shared(W));
    assert_false(weft_var_is_shared(NULL));
    assert_false(weft_var_is_shared(f->x));

    weft_tensor_t *out = (weft_tensor_t *)1;
    assert_int_equal(weft_shared_get(NULL, &out), WEFT_EINVAL);
    assert_int_equal(weft_shared_get(W, NULL), WEFT_EINVAL);
    assert_int_equal(weft_shared_get(f->x, &out), WEFT_EINVAL);
    expect_text(weft_shared_last_error(), "x");

    assert_int_equal(weft_shared_set(NULL, w0), WEFT_EINVAL);
    assert_int_equal(weft_shared_set(W, NULL), WEFT_EINVAL);
    assert_int_equal(weft_shared_set(f->x, w0), WEFT_EINVAL);
    expect_text(weft_shared_last_error(), "x");
    weft_tensor_t *wrong_dt = tensor(WEFT_INT32, 1, 3);
    assert_int_equal(weft_shared_set(W, wrong_dt), WEFT_ETYPE);
    expect_text(weft_shared_last_error(), "W");
    weft_tensor_t *wrong_nd = tensor(WEFT_FLOAT64, 2, 3);
    assert_int_equal(weft_shared_set(W, wrong_nd), WEFT_ETYPE);
    weft_tensor_t *wrong_len = tensor(WEFT_FLOAT64, 1, 4);
    assert_int_equal(weft_shared_set(W, wrong_len), WEFT_ESHAPE);
    expect_text(weft_shared_last_error(), "W");

    /* a shared variable of g used in g2 is foreign there */
    expect_kept(f->g2, weft_add(f->g2, f->z, W), WEFT_EFOREIGN, "W");
    weft_tensor_release(w0);
    weft_tensor_release(wrong_dt);
    weft_tensor_release(wrong_nd);
    weft_tensor_release(wrong_len);
}

/* ---- custom ops ----------------------------------------------------------- */

static double ident(const double *x, void *user)
{
    (void)user;
    return x[0];
}

static char contig_msg[256];

static weft_status_t contig_kernel(weft_kernel_ctx_t *ctx, size_t n_in, weft_tensor_t *const *in,
                                   size_t n_out, weft_tensor_t *const *out, void *user)
{
    (void)n_in;
    (void)n_out;
    (void)out;
    weft_status_t *seen = user;
    weft_tensor_t *c = (weft_tensor_t *)1;
    seen[0] = weft_kernel_contiguous(NULL, in[0], &c);
    seen[1] = weft_kernel_contiguous(ctx, NULL, &c);
    if (c) seen[1] = WEFT_OK; /* *out must be NULL */
    /* no cmocka assertion here: this runs on a worker thread */
    snprintf(contig_msg, sizeof(contig_msg), "%s", weft_kernel_message(ctx));
    seen[2] = weft_kernel_contiguous(ctx, in[0], NULL);
    weft_kernel_contiguous_done(ctx, in[0], NULL);
    weft_kernel_contiguous_done(NULL, NULL, NULL);
    /* the errors above were recorded on ctx: the node reports the last */
    return WEFT_OK;
}

static void expect_class_error(const weft_custom_op_desc_t *d, weft_status_t st, const char *part)
{
    const weft_op_class_t *cls = (const weft_op_class_t *)1;
    assert_int_equal(weft_custom_op_class(d, &cls), st);
    assert_null(cls);
    expect_text(weft_custom_op_last_error(), part);
}

static void test_custom_op_class_bad_input(void **state)
{
    (void)state;
    const weft_op_class_t *cls = NULL;
    assert_int_equal(weft_custom_op_class(NULL, &cls), WEFT_EINVAL);
    weft_custom_op_desc_t d = WEFT_CUSTOM_OP_DESC_INIT;
    d.name = "BadInputIdent";
    d.scalar = ident;
    assert_int_equal(weft_custom_op_class(&d, NULL), WEFT_EINVAL);
    /* each case: d with one field spoiled, the status, a part of the text */
    static const struct {
        weft_status_t st;
        const char *part;
    } cases[] = {{WEFT_EINVAL, "name"},      {WEFT_EINVAL, "size"},
                 {WEFT_EINVAL, "exactly one"}, {WEFT_EINVAL, "exactly one"},
                 {WEFT_EINVAL, "n_inputs 0"}, {WEFT_EINVAL, "n_inputs 8"},
                 {WEFT_EINVAL, "n_outputs"}, {WEFT_EINVAL, "bad dtype 999"},
                 {WEFT_EINVAL, "bad dtype -7"}, {WEFT_EALREADY, "Add"}};
    for (int k = 0; k < (int)(sizeof(cases) / sizeof(cases[0])); k++) {
        weft_custom_op_desc_t e = d;
        switch (k) {
        case 0: e.name = NULL; break;
        case 1: e.size = 4; break;
        case 2: e.kernel = contig_kernel; break;
        case 3: e.scalar = NULL; break;
        case 4: e.n_inputs = 0; break;
        case 5: e.n_inputs = WEFT_CUSTOM_MAX_ELEMWISE_INPUTS + 1; break;
        case 6: e.n_outputs = 2; break;
        case 7: e.dtype = 999; break;
        case 8: e.dtype = -7; break;
        default: e.name = "Add"; /* a built-in class */
        }
        expect_class_error(&e, cases[k].st, cases[k].part);
    }
    assert_int_equal(weft_custom_op_class(&d, &cls), WEFT_OK);
    weft_custom_op_desc_t e = d;
    e.scalar = NULL;
    e.kernel = contig_kernel;
    e.n_inputs = WEFT_OP_MAX_OUTPUTS + 1;
    expect_class_error(&e, WEFT_EINVAL, "n_inputs 17 outside [1, 16]");
    e = d;
    e.user = &e; /* same name, another description */
    expect_class_error(&e, WEFT_EALREADY, "BadInputIdent");
}

static void test_custom_call_bad_input(void **state)
{
    fixture_t *f = *state;
    weft_custom_op_desc_t d = WEFT_CUSTOM_OP_DESC_INIT;
    d.name = "BadInputIdent";
    d.scalar = ident;
    const weft_op_class_t *cls = NULL;
    assert_int_equal(weft_custom_op_class(&d, &cls), WEFT_OK);
    weft_var_t *in[2] = {f->x, f->y};
    assert_null(weft_custom_call(NULL, cls, 1, in));
    expect_kept(f->g, weft_custom_call(f->g, NULL, 1, in), WEFT_EINVAL, "cls");
    expect_kept(f->g, weft_custom_call(f->g, cls, 1, NULL), WEFT_EINVAL, "inputs");
    expect_kept(f->g, weft_custom_call(f->g, cls, 2, in), WEFT_EINVAL, "BadInputIdent");
    expect_kept(f->g, weft_custom_call(f->g, cls, 0, in), WEFT_EINVAL, "BadInputIdent");
    weft_var_t *null_in[1] = {NULL};
    expect_kept(f->g, weft_custom_call(f->g, cls, 1, null_in), WEFT_EINVAL,
                "BadInputIdent: input 0 is NULL");
    weft_var_t *foreign[1] = {f->z};
    expect_kept(f->g, weft_custom_call(f->g, cls, 1, foreign), WEFT_EFOREIGN, "z");
    /* a built-in class is not a custom op class */
    const weft_op_t *tanh_op = weft_apply_op(weft_var_owner(weft_tanh(f->g, f->x)));
    expect_kept(f->g, weft_custom_call(f->g, weft_op_class(tanh_op), 1, in), WEFT_EINVAL,
                "Tanh");
}

/* A kernel-style custom op of one input applied to f->x. */
static weft_var_t *kernel_call(fixture_t *f, const char *name, weft_custom_kernel_fn kernel,
                               weft_custom_shape_fn shape, void *user)
{
    weft_custom_op_desc_t d = WEFT_CUSTOM_OP_DESC_INIT;
    d.name = name;
    d.kernel = kernel;
    d.shape = shape;
    d.user = user;
    const weft_op_class_t *cls = NULL;
    assert_int_equal(weft_custom_op_class(&d, &cls), WEFT_OK);
    weft_var_t *y = weft_custom_call(f->g, cls, 1, &f->x);
    assert_non_null(y);
    return y;
}

static void test_kernel_contiguous_bad_input(void **state)
{
    fixture_t *f = *state;
    static weft_status_t seen[3];
    weft_var_t *y = kernel_call(f, "BadInputContig", contig_kernel, NULL, seen);
    weft_function_t *fn = NULL;
    assert_int_equal(weft_function_compile(1, &f->x, 1, &y, 0, NULL, NULL, &fn), WEFT_OK);
    weft_tensor_t *xv = tensor(WEFT_FLOAT64, 1, 3), *yv = NULL;
    assert_int_equal(weft_function_call(fn, 1, &xv, 1, &yv), WEFT_OK);
    assert_int_equal(seen[0], WEFT_EINVAL);
    assert_int_equal(seen[1], WEFT_EINVAL);
    assert_int_equal(seen[2], WEFT_EINVAL);
    assert_string_equal(contig_msg, "weft_kernel_contiguous: NULL t");
    weft_tensor_release(yv);
    weft_tensor_release(xv);
    assert_int_equal(weft_function_destroy(fn), WEFT_OK);
}

/* A shape function that answers input 0's shape until user[1] is set, then
 * what user[0] says: a length, or -1 for an extra axis. */
static weft_status_t fickle_shape(void *user, size_t n_in, const int *in_ndim,
                                  const int64_t *const *in_shape, size_t k, int *ndim,
                                  int64_t *shape)
{
    (void)n_in, (void)k;
    int64_t *mode = user;
    *ndim = in_ndim[0];
    for (int d = 0; d < *ndim; d++) shape[d] = in_shape[0][d];
    if (!mode[1]) return WEFT_OK;
    if (mode[0] >= 0) {
        shape[0] = mode[0];
    } else {
        shape[*ndim] = 1;
        ++*ndim;
    }
    return WEFT_OK;
}

static weft_status_t fill_kernel(weft_kernel_ctx_t *ctx, size_t n_in, weft_tensor_t *const *in,
                                 size_t n_out, weft_tensor_t *const *out, void *user)
{
    (void)ctx, (void)n_in, (void)in, (void)n_out, (void)user;
    int64_t n = weft_tensor_size(out[0]);
    for (int64_t i = 0; i < n; i++) ((double *)weft_tensor_data(out[0]))[i] = 1.0;
    return WEFT_OK;
}

/* A run-time shape that contradicts the static output type (another
 * length, a negative one, another ndim) fails the call naming the op; it
 * never reaches the consumers. */
static void test_custom_shape_function_contradicting_the_type(void **state)
{
    fixture_t *f = *state;
    static int64_t mode[2];
    const int64_t modes[3] = {5, -7, -1};
    const char *names[3] = {"FickleLen", "FickleNeg", "FickleNdim"};
    for (int m = 0; m < 3; m++) {
        mode[0] = modes[m];
        mode[1] = 0;
        weft_var_t *y = kernel_call(f, names[m], fill_kernel, fickle_shape, mode);
        weft_var_t *z = weft_tanh(f->g, weft_add(f->g, y, f->x));
        weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
        o.threads = 1;
        weft_function_t *fn = NULL;
        assert_int_equal(weft_function_compile(1, &f->x, 1, &z, 0, NULL, &o, &fn), WEFT_OK);
        weft_tensor_t *xv = tensor(WEFT_FLOAT64, 1, 3), *zv = NULL;
        mode[1] = 1; /* from now on the shape function contradicts the type */
        weft_status_t st = weft_function_call(fn, 1, &xv, 1, &zv);
        if (st == WEFT_OK) fail_msg("%s: call succeeded", names[m]);
        expect_text(weft_function_last_error(fn), names[m]);
        weft_tensor_release(zv);
        weft_tensor_release(xv);
        assert_int_equal(weft_function_destroy(fn), WEFT_OK);
    }
}

/* ---- tensor_iter ------------------------------------------------------------ */

static void count_rows(size_t n, char *const *p, const int64_t *s, void *arg)
{
    (void)p;
    (void)s;
    *(size_t *)arg += n;
}

static void test_tensor_iter_bad_input(void **state)
{
    (void)state;
    weft_tensor_t *a = tensor(WEFT_FLOAT64, 1, 3), *b = tensor(WEFT_FLOAT64, 1, 4);
    weft_tensor_t *ts[WEFT_TENSOR_ITER_MAX + 1];
    for (size_t k = 0; k <= WEFT_TENSOR_ITER_MAX; k++) ts[k] = a;
    size_t calls = 0;
    assert_int_equal(weft_tensor_iter_rows(0, ts, count_rows, &calls), WEFT_EINVAL);
    assert_int_equal(weft_tensor_iter_rows(WEFT_TENSOR_ITER_MAX + 1, ts, count_rows, &calls),
                     WEFT_EINVAL);
    assert_int_equal(weft_tensor_iter_rows(1, NULL, count_rows, &calls), WEFT_EINVAL);
    assert_int_equal(weft_tensor_iter_rows(1, ts, NULL, &calls), WEFT_EINVAL);
    weft_tensor_t *with_null[2] = {a, NULL};
    assert_int_equal(weft_tensor_iter_rows(2, with_null, count_rows, &calls), WEFT_EINVAL);
    weft_tensor_t *mismatch[2] = {a, b};
    assert_int_equal(weft_tensor_iter_rows(2, mismatch, count_rows, &calls), WEFT_ESHAPE);
    expect_text(weft_tensor_last_error(), "4");
    weft_tensor_t *m = tensor(WEFT_FLOAT64, 2, 3);
    weft_tensor_t *more_axes[2] = {a, m}; /* an input with more axes than the output */
    assert_int_equal(weft_tensor_iter_rows(2, more_axes, count_rows, &calls), WEFT_ESHAPE);
    weft_tensor_release(m);
    assert_int_equal(calls, 0);

    int nd = -1;
    int64_t shape[WEFT_MAX_NDIM];
    assert_int_equal(weft_tensor_broadcast_shape(0, ts, &nd, shape), WEFT_EINVAL);
    assert_int_equal(weft_tensor_broadcast_shape(WEFT_TENSOR_ITER_MAX + 1, ts, &nd, shape),
                     WEFT_EINVAL);
    assert_int_equal(weft_tensor_broadcast_shape(1, NULL, &nd, shape), WEFT_EINVAL);
    assert_int_equal(weft_tensor_broadcast_shape(1, ts, NULL, shape), WEFT_EINVAL);
    assert_int_equal(weft_tensor_broadcast_shape(1, ts, &nd, NULL), WEFT_EINVAL);
    assert_int_equal(weft_tensor_broadcast_shape(2, with_null, &nd, shape), WEFT_EINVAL);
    assert_int_equal(weft_tensor_broadcast_shape(2, mismatch, &nd, shape), WEFT_ESHAPE);
    expect_text(weft_tensor_last_error(), "3");
    weft_tensor_release(a);
    weft_tensor_release(b);
}

/* ---- History and NodeFinder ------------------------------------------------- */

static void test_history_bad_input(void **state)
{
    fixture_t *f = *state;
    uint64_t tok = 77;
    weft_history_entry_t e;
    assert_int_equal(weft_history_attach(NULL), WEFT_EINVAL);
    assert_int_equal(weft_history_checkpoint(NULL, &tok), WEFT_EINVAL);
    assert_int_equal(weft_history_checkpoint(f->fg, NULL), WEFT_EINVAL);
    assert_int_equal(weft_history_checkpoint(f->fg, &tok), WEFT_ENOTFOUND);
    expect_text(weft_fgraph_last_error(f->fg), "History");
    assert_int_equal(weft_history_revert(NULL, 0), WEFT_EINVAL);
    assert_int_equal(weft_history_revert(f->fg, 0), WEFT_ENOTFOUND);
    assert_int_equal(weft_history_redo(NULL, 0), WEFT_EINVAL);
    assert_int_equal(weft_history_redo(f->fg, 0), WEFT_ENOTFOUND);
    assert_int_equal(weft_history_n_entries(NULL), 0);
    assert_int_equal(weft_history_n_entries(f->fg), 0);
    assert_int_equal(weft_history_position(NULL), 0);
    assert_int_equal(weft_history_entry(NULL, 0, &e), WEFT_EINVAL);
    assert_int_equal(weft_history_entry(f->fg, 0, &e), WEFT_ENOTFOUND);

    assert_int_equal(weft_history_attach(f->fg), WEFT_OK);
    assert_int_equal(weft_history_attach(f->fg), WEFT_OK);
    assert_int_equal(weft_history_checkpoint(f->fg, &tok), WEFT_OK);
    assert_int_equal(weft_history_entry(f->fg, 0, &e), WEFT_EINVAL);
    assert_int_equal(weft_history_entry(f->fg, SIZE_MAX, &e), WEFT_EINVAL);
    assert_int_equal(weft_history_entry(f->fg, 0, NULL), WEFT_EINVAL);
    /* tokens never handed out: ahead of the position */
    assert_int_equal(weft_history_revert(f->fg, tok + 5), WEFT_ESTATE);
    assert_int_equal(weft_history_redo(f->fg, tok + 5), WEFT_ESTATE);
    assert_int_equal(weft_history_revert(f->fg, UINT64_MAX), WEFT_ESTATE);
    assert_int_equal(weft_history_revert(f->fg, tok), WEFT_OK);
    assert_int_equal(weft_fgraph_remove_feature(
                         f->fg, weft_fgraph_find_feature(f->fg, weft_history_class())),
                     WEFT_OK);
    /* a detached History is gone: its log with it */
    assert_int_equal(weft_history_checkpoint(f->fg, &tok), WEFT_ENOTFOUND);
    assert_int_equal(weft_history_n_entries(f->fg), 0);
}

static void test_node_finder_bad_input(void **state)
{
    fixture_t *f = *state;
    weft_apply_t *const *nodes = NULL;
    size_t n = 99;
    const weft_op_t *tanh_op = weft_apply_op(weft_var_owner(weft_tanh(f->g, f->x)));
    const weft_op_class_t *cls = weft_op_class(tanh_op);
    assert_int_equal(weft_node_finder_attach(NULL), WEFT_EINVAL);
    assert_int_equal(weft_node_finder_by_class(f->fg, cls, &nodes, &n), WEFT_ENOTFOUND);
    expect_text(weft_fgraph_last_error(f->fg), "NodeFinder");
    assert_int_equal(weft_node_finder_by_op(f->fg, tanh_op, &nodes, &n), WEFT_ENOTFOUND);
    assert_int_equal(weft_node_finder_attach(f->fg), WEFT_OK);
    assert_int_equal(weft_node_finder_by_class(NULL, cls, &nodes, &n), WEFT_EINVAL);
    assert_int_equal(weft_node_finder_by_class(f->fg, NULL, &nodes, &n), WEFT_EINVAL);
    assert_int_equal(weft_node_finder_by_class(f->fg, cls, NULL, &n), WEFT_EINVAL);
    assert_int_equal(weft_node_finder_by_class(f->fg, cls, &nodes, NULL), WEFT_EINVAL);
    assert_int_equal(weft_node_finder_by_op(NULL, tanh_op, &nodes, &n), WEFT_EINVAL);
    assert_int_equal(weft_node_finder_by_op(f->fg, NULL, &nodes, &n), WEFT_EINVAL);
    assert_int_equal(weft_node_finder_by_op(f->fg, tanh_op, NULL, &n), WEFT_EINVAL);
    assert_int_equal(weft_node_finder_by_op(f->fg, tanh_op, &nodes, NULL), WEFT_EINVAL);
    /* an op of another context is compared by value */
    const weft_op_t *tanh2 = weft_apply_op(weft_var_owner(weft_tanh(f->g2, f->z)));
    assert_int_equal(weft_node_finder_by_op(f->fg, tanh2, &nodes, &n), WEFT_OK);
    assert_int_equal(n, 1);
    assert_int_equal(weft_fgraph_remove_feature(
                         f->fg, weft_fgraph_find_feature(f->fg, weft_node_finder_class())),
                     WEFT_OK);
    assert_int_equal(weft_node_finder_by_class(f->fg, cls, &nodes, &n), WEFT_ENOTFOUND);
}

/* ---- fgraph utilities, destroy readers, node costs ------------------------ */

static void hook(void *user, weft_fgraph_t *fg, const char *reason, weft_var_t *o, weft_var_t *n)
{
    (void)user, (void)fg, (void)reason, (void)o, (void)n;
}

static void test_fgraph_utilities_bad_input(void **state)
{
    fixture_t *f = *state;
    weft_var_t *const *vars = NULL;
    size_t n = 99, len = 0;
    assert_int_equal(weft_fgraph_variables(NULL, &vars, &n), WEFT_EINVAL);
    assert_int_equal(weft_fgraph_variables(f->fg, NULL, &n), WEFT_EINVAL);
    assert_int_equal(weft_fgraph_variables(f->fg, &vars, NULL), WEFT_EINVAL);
    assert_int_equal(weft_fgraph_n_variables(NULL), 0);
    char buf[8];
    assert_int_equal(weft_fgraph_str(NULL, buf, sizeof(buf), &len), WEFT_EINVAL);
    assert_int_equal(weft_fgraph_str(f->fg, NULL, 5, &len), WEFT_EINVAL);
    assert_int_equal(weft_fgraph_str(f->fg, NULL, 0, &len), WEFT_OK);
    assert_int_equal(len, strlen("FunctionGraph(Tanh(Add(x, y)))"));
    assert_int_equal(weft_fgraph_str(f->fg, buf, sizeof(buf), NULL), WEFT_OK);
    assert_string_equal(buf, "Functio");
    assert_int_equal(weft_fgraph_set_replace_hook(NULL, hook, NULL), WEFT_EINVAL);
    assert_int_equal(weft_fgraph_set_replace_log(NULL, stderr), WEFT_EINVAL);
    assert_int_equal(weft_fgraph_set_replace_hook(f->fg, NULL, NULL), WEFT_OK);
    /* NULL everything: "?" parts, and a NULL buffer only measures */
    int full = weft_fgraph_replace_line(NULL, NULL, NULL, NULL, 0);
    assert_true(full > 0);
    char line[256];
    assert_int_equal(weft_fgraph_replace_line(NULL, NULL, NULL, line, sizeof(line)), full);
    expect_text(line, "rewriting: rewrite ? replaces ");
    assert_int_equal(weft_fgraph_replace_line("r", f->x, f->y, NULL, 100), -1);
}

static void test_destroy_readers_bad_input(void **state)
{
    fixture_t *f = *state;
    weft_var_t *out = weft_fgraph_output(f->fg, 0);
    weft_apply_t *node = weft_var_owner(out);
    bool ok = true;
    size_t n = 99;
    weft_apply_t *readers[2];
    assert_int_equal(weft_dh_destroy_readers(NULL, node, 0, NULL, &ok, 2, readers, &n),
                     WEFT_EINVAL);
    assert_int_equal(weft_dh_destroy_readers(f->fg, NULL, 0, NULL, &ok, 2, readers, &n),
                     WEFT_EINVAL);
    assert_int_equal(weft_dh_destroy_readers(f->fg, node, 0, NULL, NULL, 2, readers, &n),
                     WEFT_EINVAL);
    assert_int_equal(weft_dh_destroy_readers(f->fg, node, 0, NULL, &ok, 2, NULL, &n),
                     WEFT_EINVAL);
    assert_int_equal(weft_dh_destroy_readers(f->fg, node, 0, NULL, &ok, 2, readers, NULL),
                     WEFT_EINVAL);
    /* no DestroyHandler attached */
    assert_int_equal(weft_dh_destroy_readers(f->fg, node, 0, NULL, &ok, 2, readers, &n),
                     WEFT_ESTATE);
    expect_text(weft_fgraph_last_error(f->fg), "DestroyHandler");
    weft_feature_t *dh = NULL;
    assert_int_equal(weft_dh_attach(f->fg, &dh), WEFT_OK);
    assert_int_equal(weft_dh_destroy_readers(f->fg, node, 7, NULL, &ok, 2, readers, &n),
                     WEFT_EINVAL);
    expect_text(weft_fgraph_last_error(f->fg), "7");
    weft_apply_t *foreign = weft_var_owner(weft_tanh(f->g2, f->z));
    assert_int_equal(weft_dh_destroy_readers(f->fg, foreign, 0, NULL, &ok, 2, readers, &n),
                     WEFT_ENOTFOUND);
    assert_int_equal(weft_fgraph_remove_feature(f->fg, dh), WEFT_OK);
}

static void test_node_cost_bad_input(void **state)
{
    fixture_t *f = *state;
    assert_true(weft_node_cost_estimate(NULL) == 0.0);
    uint64_t keys[64];
    assert_int_equal(weft_fgraph_node_keys(NULL, 64, keys), WEFT_EINVAL);
    assert_int_equal(weft_fgraph_node_keys(f->fg, 64, NULL), WEFT_EINVAL);
    assert_int_equal(weft_fgraph_node_keys(f->fg, 0, keys), WEFT_EINVAL);
    uint64_t k2[2] = {1, 2};
    double ns[2] = {5.0, -1.0}, nan2[2] = {NAN, 1.0};
    assert_int_equal(weft_fgraph_set_node_costs(NULL, 2, k2, ns), WEFT_EINVAL);
    assert_int_equal(weft_fgraph_set_node_costs(f->fg, 2, NULL, ns), WEFT_EINVAL);
    assert_int_equal(weft_fgraph_set_node_costs(f->fg, 2, k2, NULL), WEFT_EINVAL);
    assert_int_equal(weft_fgraph_set_node_costs(f->fg, 2, k2, ns), WEFT_EINVAL);
    expect_text(weft_fgraph_last_error(f->fg), "1");
    assert_int_equal(weft_fgraph_set_node_costs(f->fg, 2, k2, nan2), WEFT_EINVAL);
    expect_text(weft_fgraph_last_error(f->fg), "0");
    assert_int_equal(weft_fgraph_set_node_costs(f->fg, 0, NULL, NULL), WEFT_OK);
    assert_true(weft_fgraph_node_cost(NULL, NULL, 0) == 0.0);
    assert_true(weft_fgraph_node_cost(f->fg, NULL, 0) == 0.0);
}

/* ---- op clone, OpFromGraph options ----------------------------------------- */

static void test_op_clone_bad_input(void **state)
{
    fixture_t *f = *state;
    const weft_op_t *tanh_op = weft_apply_op(weft_var_owner(weft_tanh(f->g, f->x)));
    const weft_op_t *out = (const weft_op_t *)1;
    assert_int_equal(weft_op_clone(NULL, tanh_op, &out), WEFT_EINVAL);
    assert_null(out);
    out = (const weft_op_t *)1;
    assert_int_equal(weft_op_clone(f->g, NULL, &out), WEFT_EINVAL);
    assert_null(out);
    assert_int_equal(weft_op_clone(f->g, tanh_op, NULL), WEFT_EINVAL);
    /* into another context */
    assert_int_equal(weft_op_clone(f->g2, tanh_op, &out), WEFT_OK);
    assert_true(weft_op_equal(out, tanh_op));
}

static void expect_ofg(weft_graph_t *g, size_t n_in, weft_var_t *const *in, weft_var_t *out,
                       const weft_ofg_options_t *o, weft_status_t st, const char *part)
{
    const weft_op_t *op = (const weft_op_t *)1;
    assert_int_equal(weft_ofg_create(g, n_in, in, 1, &out, o, &op), st);
    assert_null(op);
    expect_text(weft_graph_last_error(g), part);
}

static void test_ofg_options_bad_input(void **state)
{
    fixture_t *f = *state;
    weft_var_t *in[2] = {f->x, f->y};
    weft_var_t *sum = weft_add(f->g, f->x, f->y);
    weft_ofg_options_t o = WEFT_OFG_OPTIONS_INIT;
    o.on_unused_input = (weft_ofg_unused_t)7;
    expect_ofg(f->g, 2, in, sum, &o, WEFT_EINVAL, "on_unused_input");

    /* a size that cuts input_constants in two */
    o = (weft_ofg_options_t)WEFT_OFG_OPTIONS_INIT;
    o.size = offsetof(weft_ofg_options_t, input_constants) + 4;
    expect_ofg(f->g, 2, in, sum, &o, WEFT_EINVAL, "neither the original");

    o = (weft_ofg_options_t)WEFT_OFG_OPTIONS_INIT;
    weft_var_t *only_x = weft_tanh(f->g, f->x);
    o.on_unused_input = WEFT_OFG_UNUSED_RAISE;
    expect_ofg(f->g, 2, in, only_x, &o, WEFT_EINVAL, "y");

    o = (weft_ofg_options_t)WEFT_OFG_OPTIONS_INIT;
    weft_var_t *consts[2] = {NULL, f->x}; /* not a constant */
    o.input_constants = consts;
    expect_ofg(f->g, 2, in, sum, &o, WEFT_EINVAL, "x");
    weft_var_t *foreign_c[2] = {NULL, weft_constant_scalar(f->g2, WEFT_FLOAT64, 1.0)};
    o.input_constants = foreign_c;
    expect_ofg(f->g, 2, in, sum, &o, WEFT_EFOREIGN, "input_constants[1]");
    weft_var_t *wrong_t[2] = {NULL, weft_constant_scalar(f->g, WEFT_FLOAT64, 1.0)};
    o.input_constants = wrong_t; /* 0-d where float64[3] was */
    expect_ofg(f->g, 2, in, sum, &o, WEFT_ETYPE, "binding input 1");

    o = (weft_ofg_options_t)WEFT_OFG_OPTIONS_INIT;
    weft_op_alias_t bad_out = {5, 0}, bad_in = {0, 5};
    o.n_destroy = 1;
    o.destroy_map = NULL;
    expect_ofg(f->g, 2, in, sum, &o, WEFT_EINVAL, "destroy_map");
    o.destroy_map = &bad_out;
    expect_ofg(f->g, 2, in, sum, &o, WEFT_EINVAL, "destroy_map");
    o.destroy_map = &bad_in;
    expect_ofg(f->g, 2, in, sum, &o, WEFT_EINVAL, "destroy_map");
    weft_op_alias_t twice[2] = {{0, 0}, {0, 1}};
    o.n_destroy = 2;
    o.destroy_map = twice;
    expect_ofg(f->g, 2, in, sum, &o, WEFT_EINVAL, "destroy_map");
    o.n_destroy = SIZE_MAX;
    expect_ofg(f->g, 2, in, sum, &o, WEFT_EINVAL, "destroy_map");
    weft_var_t *i32 = vec(f->g, WEFT_INT32, "k");
    weft_var_t *in2[2] = {f->x, i32};
    weft_op_alias_t type_diff = {0, 1}; /* float64 output into an int32 input */
    o.n_destroy = 1;
    o.destroy_map = &type_diff;
    expect_ofg(f->g, 2, in2, weft_add(f->g, f->x, weft_cast(f->g, i32, WEFT_FLOAT64)), &o,
               WEFT_EINVAL, "type");

    const weft_op_alias_t *entries = (const weft_op_alias_t *)1;
    size_t n = 99;
    weft_ofg_destroy_map(NULL, &entries, &n);
    assert_int_equal(n, 0);
    assert_null(entries);
    weft_ofg_destroy_map(NULL, NULL, NULL);
}

/* ---- profile writers, npy save ------------------------------------------------ */

/* Option sizes: one that ends inside a pointer field is refused, one that
 * ends between fields (an older, shorter layout) is read that far. */
static void test_function_options_size(void **state)
{
    fixture_t *f = *state;
    weft_var_t *y = weft_tanh(f->g, f->x);
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    weft_function_t *fn = (weft_function_t *)1;
    o.size = offsetof(weft_function_options_t, rewrite_log) + 4;
    assert_int_equal(weft_function_compile(1, &f->x, 1, &y, 0, NULL, &o, &fn), WEFT_EINVAL);
    expect_text(weft_function_last_error(NULL), "ends inside a field");
    o.size = offsetof(weft_function_options_t, rewrite_log);
    o.rewrite_log = (FILE *)8; /* beyond size: never read */
    assert_int_equal(weft_function_compile(1, &f->x, 1, &y, 0, NULL, &o, &fn), WEFT_OK);
    assert_int_equal(weft_function_destroy(fn), WEFT_OK);
}

static void test_profile_writers_bad_input(void **state)
{
    fixture_t *f = *state;
    weft_var_t *y = weft_tanh(f->g, f->x), *y2 = weft_dot(f->g, f->x, weft_tanh(f->g, f->x));
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.profile = true;
    weft_function_t *fn = NULL, *fn2 = NULL;
    assert_int_equal(weft_function_compile(1, &f->x, 1, &y, 0, NULL, &o, &fn), WEFT_OK);
    assert_int_equal(weft_function_compile(1, &f->x, 1, &y2, 0, NULL, &o, &fn2), WEFT_OK);
    weft_tensor_t *xv = tensor(WEFT_FLOAT64, 1, 3), *yv = NULL;
    assert_int_equal(weft_function_call(fn, 1, &xv, 1, &yv), WEFT_OK);
    weft_profile_t *p = NULL;
    assert_int_equal(weft_profile_create(fn, WEFT_PROFILE_LAST_CALL, &p), WEFT_OK);
    FILE *devnull = fopen("/dev/null", "w");
    assert_non_null(devnull);

    assert_int_equal(weft_profile_write_json(NULL, devnull), WEFT_EINVAL);
    assert_int_equal(weft_profile_write_json(p, NULL), WEFT_EINVAL);
    assert_int_equal(weft_profile_write_csv(NULL, devnull), WEFT_EINVAL);
    assert_int_equal(weft_profile_write_csv(p, NULL), WEFT_EINVAL);
    const weft_profile_t *calls[1] = {p};
    uint64_t off[1] = {0};
    assert_int_equal(weft_profile_write_trace_calls(NULL, off, 1, devnull), WEFT_EINVAL);
    assert_int_equal(weft_profile_write_trace_calls(calls, NULL, 1, devnull), WEFT_EINVAL);
    assert_int_equal(weft_profile_write_trace_calls(calls, off, 0, devnull), WEFT_EINVAL);
    assert_int_equal(weft_profile_write_trace_calls(calls, off, 1, NULL), WEFT_EINVAL);
    const weft_profile_t *with_null[1] = {NULL};
    assert_int_equal(weft_profile_write_trace_calls(with_null, off, 1, devnull), WEFT_EINVAL);
    assert_int_equal(weft_profile_write_dot(NULL, p, devnull), WEFT_EINVAL);
    assert_int_equal(weft_profile_write_dot(fn, NULL, devnull), WEFT_EINVAL);
    assert_int_equal(weft_profile_write_dot(fn, p, NULL), WEFT_EINVAL);
    /* p of another function (told apart by its node count) */
    assert_int_equal(weft_profile_write_dot(fn2, p, devnull), WEFT_EINVAL);
    /* a stream open for reading: every write fails */
    FILE *ro = fopen("/dev/null", "r");
    assert_non_null(ro);
    assert_int_equal(weft_profile_write_json(p, ro), WEFT_EIO);
    assert_int_equal(weft_profile_write_csv(p, ro), WEFT_EIO);
    assert_int_equal(weft_profile_write_trace_calls(calls, off, 1, ro), WEFT_EIO);
    assert_int_equal(weft_profile_write_dot(fn, p, ro), WEFT_EIO);
    fclose(ro);
    fclose(devnull);
    weft_profile_destroy(p);
    weft_tensor_release(yv);
    weft_tensor_release(xv);
    assert_int_equal(weft_function_destroy(fn), WEFT_OK);
    assert_int_equal(weft_function_destroy(fn2), WEFT_OK);
}

static void test_npy_save_bad_input(void **state)
{
    (void)state;
    weft_tensor_t *t = tensor(WEFT_FLOAT64, 1, 3);
    char msg[256] = "";
    assert_int_equal(weft_npy_save(NULL, t, msg, sizeof(msg)), WEFT_EINVAL);
    assert_int_equal(weft_npy_save("/tmp/x.npy", NULL, msg, sizeof(msg)), WEFT_EINVAL);
    assert_int_equal(weft_npy_save("/nonexistent-dir/x.npy", t, msg, sizeof(msg)), WEFT_EIO);
    expect_text(msg, "/nonexistent-dir/x.npy");
    assert_int_equal(weft_npy_save("/nonexistent-dir/x.npy", t, NULL, 0), WEFT_EIO);
    assert_int_equal(weft_npy_save("/nonexistent-dir/x.npy", t, NULL, 10), WEFT_EIO);
    weft_tensor_release(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graph_error_null),
        cmocka_unit_test(test_scalar_helpers),
        cmocka_unit_test(test_foreign_operands),
        cmocka_unit_test(test_constructors_foreign),
        cmocka_unit_test(test_constructors_out_of_range),
        cmocka_unit_test(test_grads_and_leaves_bad_input),
        cmocka_unit_test(test_shared_bad_input),
        cmocka_unit_test(test_custom_op_class_bad_input),
        cmocka_unit_test(test_custom_call_bad_input),
        cmocka_unit_test(test_kernel_contiguous_bad_input),
        cmocka_unit_test(test_custom_shape_function_contradicting_the_type),
        cmocka_unit_test(test_tensor_iter_bad_input),
        cmocka_unit_test(test_history_bad_input),
        cmocka_unit_test(test_node_finder_bad_input),
        cmocka_unit_test(test_fgraph_utilities_bad_input),
        cmocka_unit_test(test_destroy_readers_bad_input),
        cmocka_unit_test(test_node_cost_bad_input),
        cmocka_unit_test(test_op_clone_bad_input),
        cmocka_unit_test(test_ofg_options_bad_input),
        cmocka_unit_test(test_function_options_size),
        cmocka_unit_test(test_profile_writers_bad_input),
        cmocka_unit_test(test_npy_save_bad_input),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
