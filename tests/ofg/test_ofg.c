/* OpFromGraph: building and evaluating, multiple outputs, nesting, equality
 * by inner graph (and merging), connection pattern, output copies, the
 * expansion and the inline rewrite, gradients through verify_grad, and every
 * documented bad-input status. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "weft/elemwise.h"
#include "weft/eval.h"
#include "weft/fgraph.h"
#include "weft/function.h"
#include "weft/grad.h"
#include "weft/graph.h"
#include "weft/opfromgraph.h"
#include "weft/reduce.h"
#include "weft/rewrite.h"
#include "weft/rewrite_db.h"
#include "weft/tensor.h"

typedef struct fx {
    weft_graph_t *g;
    const weft_type_t *scal, *vec3, *vec3f;
} fx_t;

static int setup(void **state)
{
    fx_t *f = calloc(1, sizeof(*f));
    if (!f || weft_graph_create(NULL, &f->g) != WEFT_OK) return -1;
    int64_t three = 3;
    weft_type_tensor(f->g, WEFT_FLOAT64, 0, NULL, &f->scal);
    weft_type_tensor(f->g, WEFT_FLOAT64, 1, &three, &f->vec3);
    weft_type_tensor(f->g, WEFT_FLOAT32, 1, &three, &f->vec3f);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx_t *f = *state;
    weft_graph_destroy(f->g);
    free(f);
    return 0;
}

static weft_var_t *var(fx_t *f, const weft_type_t *t, const char *name)
{
    weft_var_t *v = NULL;
    assert_non_null(v = weft_var_create(f->g, t, name));
    return v;
}

static weft_tensor_t *scalar(double v)
{
    weft_tensor_t *t = NULL;
    assert_int_equal(weft_tensor_full(WEFT_FLOAT64, 0, NULL, v, &t), WEFT_OK);
    return t;
}

/* Evaluates one output from the given inputs and returns its flat element 0. */
static double eval1(fx_t *f, size_t n, weft_var_t *const *in, weft_tensor_t *const *vals,
                    weft_var_t *out)
{
    weft_tensor_t *r = NULL;
    weft_status_t s = weft_eval(f->g, n, in, vals, 1, &out, &r);
    if (s != WEFT_OK) fprintf(stderr, "eval: %s\n", weft_graph_last_error(f->g));
    assert_int_equal(s, WEFT_OK);
    double v = weft_tensor_flat_get(r, 0);
    weft_tensor_release(r);
    return v;
}

/* e = x + y * z as an OpFromGraph over (x, y, z). */
static const weft_op_t *xyz_op(fx_t *f, bool inl, const char *name)
{
    weft_var_t *x = var(f, f->scal, "x"), *y = var(f, f->scal, "y"), *z = var(f, f->scal, "z");
    weft_var_t *yz, *e, *in[3] = {x, y, z};
    assert_non_null(yz = weft_mul(f->g, y, z));
    assert_non_null(e = weft_add(f->g, x, yz));
    weft_ofg_options_t o = WEFT_OFG_OPTIONS_INIT;
    o.inline_expand = inl;
    o.name = name;
    const weft_op_t *op = NULL;
    assert_int_equal(weft_ofg_create(f->g, 3, in, 1, &e, &o, &op), WEFT_OK);
    return op;
}

static void test_ofg_build_eval_matches_expression(void **state)
{
    fx_t *f = *state;
    const weft_op_t *op = xyz_op(f, false, "xyz");
    weft_var_t *x = var(f, f->scal, "x"), *y = var(f, f->scal, "y"), *z = var(f, f->scal, "z");
    weft_var_t *a1[3] = {x, y, z}, *a2[3] = {z, y, x}, *o1, *o2, *e2;
    assert_non_null(o1 = weft_op_call(f->g, op, 3, a1));
    assert_non_null(o2 = weft_op_call(f->g, op, 3, a2));
    assert_non_null(e2 = weft_add(f->g, o1, o2));
    weft_tensor_t *v[3] = {scalar(2), scalar(3), scalar(4)};
    /* (2 + 3*4) + (4 + 3*2) */
    assert_true(eval1(f, 3, a1, v, e2) == 24.0);
    char buf[128];
    weft_op_print(op, buf, sizeof(buf));
    assert_string_equal(buf, "OpFromGraph{name=xyz}");
    assert_string_equal(weft_op_name(op), "OpFromGraph");
    assert_true(weft_ofg_is(op));
    assert_int_equal(weft_ofg_n_inputs(op), 3);
    assert_int_equal(weft_ofg_n_outputs(op), 1);
    assert_string_equal(weft_ofg_name(op), "xyz");
    assert_false(weft_ofg_is_inline(op));
    assert_null(weft_ofg_grad_override(op));
    weft_fgraph_t *fg = weft_ofg_fgraph(op);
    assert_non_null(fg);
    assert_ptr_equal(weft_op_class(op)->inner_fgraph(op), fg);
    assert_int_equal(weft_fgraph_n_inputs(fg), 3);
    assert_int_equal(weft_fgraph_n_applies(fg), 2);
    /* inner inputs are fresh (canonical), not the caller's variables */
    assert_ptr_not_equal(weft_fgraph_input(fg, 0), x);
    for (int i = 0; i < 3; i++) weft_tensor_release(v[i]);
}

static void test_ofg_multi_output_and_connection_pattern(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = var(f, f->vec3, "x"), *y = var(f, f->vec3, "y"), *two, *in[2] = {x, y};
    weft_var_t *outs[3];
    assert_non_null(two = weft_binary_scalar(f->g, WEFT_ELEMWISE_MUL, x, 2.0));
    outs[0] = two;
    outs[1] = y;
    assert_non_null(outs[2] = weft_add(f->g, x, y));
    const weft_op_t *op = NULL;
    assert_int_equal(weft_ofg_create(f->g, 2, in, 3, outs, NULL, &op), WEFT_OK);
    weft_apply_t *a = NULL;
    assert_non_null(a = weft_apply_create(f->g, op, 2, in));
    assert_int_equal(weft_apply_n_outputs(a), 3);
    bool (*cp)(const weft_apply_t *, size_t, size_t) = weft_op_class(op)->connection_pattern;
    assert_true(cp(a, 0, 0));
    assert_false(cp(a, 1, 0));
    assert_false(cp(a, 0, 1));
    assert_true(cp(a, 1, 1));
    assert_true(cp(a, 0, 2) && cp(a, 1, 2));
    /* evaluate all three; output 1 is input y itself and must come back copied */
    double xs[3] = {1, 2, 3}, ys[3] = {10, 20, 30};
    int64_t three = 3;
    weft_tensor_t *tv[2], *r[3];
    weft_tensor_from_data(WEFT_FLOAT64, 1, &three, NULL, xs, &tv[0]);
    weft_tensor_from_data(WEFT_FLOAT64, 1, &three, NULL, ys, &tv[1]);
    weft_var_t *av[3] = {weft_apply_output(a, 0), weft_apply_output(a, 1), weft_apply_output(a, 2)};
    assert_int_equal(weft_eval(f->g, 2, in, tv, 3, av, r), WEFT_OK);
    for (size_t i = 0; i < 3; i++) {
        assert_true(weft_tensor_flat_get(r[0], i) == 2 * xs[i]);
        assert_true(weft_tensor_flat_get(r[1], i) == ys[i]);
        assert_true(weft_tensor_flat_get(r[2], i) == xs[i] + ys[i]);
    }
    assert_false(weft_tensor_shares_buffer(r[1], tv[1]));
    for (int i = 0; i < 3; i++) weft_tensor_release(r[i]);
    weft_tensor_release(tv[0]);
    weft_tensor_release(tv[1]);
}

static void test_ofg_nested_evaluates_inner_op(void **state)
{
    fx_t *f = *state;
    const weft_op_t *inner = xyz_op(f, false, "inner");
    weft_var_t *a = var(f, f->scal, "a"), *b = var(f, f->scal, "b"), *args[3] = {a, b, b};
    weft_var_t *t, *e, *in[2] = {a, b};
    assert_non_null(t = weft_op_call(f->g, inner, 3, args)); /* a + b*b */
    assert_non_null(e = weft_mul(f->g, t, a));               /* (a + b*b) * a */
    const weft_op_t *outer = NULL;
    assert_int_equal(weft_ofg_create(f->g, 2, in, 1, &e, NULL, &outer), WEFT_OK);
    weft_var_t *p = var(f, f->scal, "p"), *q = var(f, f->scal, "q"), *pq[2] = {p, q}, *r;
    assert_non_null(r = weft_op_call(f->g, outer, 2, pq));
    weft_tensor_t *v[2] = {scalar(3), scalar(5)};
    assert_true(eval1(f, 2, pq, v, r) == (3.0 + 25.0) * 3.0);
    weft_tensor_release(v[0]);
    weft_tensor_release(v[1]);
}

static void test_ofg_equal_iff_same_inner_graph(void **state)
{
    fx_t *f = *state;
    const weft_op_t *a = xyz_op(f, false, "a"), *b = xyz_op(f, false, "other name");
    assert_ptr_not_equal(a, b);
    assert_true(weft_op_equal(a, b));
    assert_true(weft_op_hash(a) == weft_op_hash(b));
    /* a different expression: x - y * z */
    weft_var_t *x = var(f, f->scal, "x"), *y = var(f, f->scal, "y"), *z = var(f, f->scal, "z");
    weft_var_t *yz, *e, *in[3] = {x, y, z}, *perm[3] = {y, x, z};
    assert_non_null(yz = weft_mul(f->g, y, z));
    assert_non_null(e = weft_sub(f->g, x, yz));
    const weft_op_t *c = NULL, *d = NULL, *inl = xyz_op(f, true, NULL);
    assert_int_equal(weft_ofg_create(f->g, 3, in, 1, &e, NULL, &c), WEFT_OK);
    assert_false(weft_op_equal(a, c));
    /* the same expression with the inputs in another order is another op */
    assert_int_equal(weft_ofg_create(f->g, 3, perm, 1, &e, NULL, &d), WEFT_OK);
    assert_false(weft_op_equal(c, d));
    assert_false(weft_op_equal(a, inl));
    /* same structure over float32 inputs: different declared types */
    weft_var_t *u = var(f, f->vec3f, "u"), *w = var(f, f->vec3f, "w"), *uw, *uin[2] = {u, w};
    weft_var_t *s = var(f, f->vec3, "s"), *t = var(f, f->vec3, "t"), *st, *sin_[2] = {s, t};
    assert_non_null(uw = weft_add(f->g, u, w));
    assert_non_null(st = weft_add(f->g, s, t));
    const weft_op_t *o32 = NULL, *o64 = NULL;
    assert_int_equal(weft_ofg_create(f->g, 2, uin, 1, &uw, NULL, &o32), WEFT_OK);
    assert_int_equal(weft_ofg_create(f->g, 2, sin_, 1, &st, NULL, &o64), WEFT_OK);
    assert_false(weft_op_equal(o32, o64));
}

static void test_ofg_merge_unifies_equal_ops(void **state)
{
    fx_t *f = *state;
    const weft_op_t *op1 = xyz_op(f, false, NULL), *op2 = xyz_op(f, false, NULL);
    weft_var_t *x = var(f, f->scal, "x"), *y = var(f, f->scal, "y"), *z = var(f, f->scal, "z");
    weft_var_t *args[3] = {x, y, z}, *rev[3] = {z, y, x}, *o1, *o2, *o3, *s1, *s2;
    assert_non_null(o1 = weft_op_call(f->g, op1, 3, args));
    assert_non_null(o2 = weft_op_call(f->g, op2, 3, args));
    assert_non_null(o3 = weft_op_call(f->g, op2, 3, rev));
    assert_non_null(s1 = weft_add(f->g, o1, o2));
    assert_non_null(s2 = weft_add(f->g, s1, o3));
    weft_fgraph_t *fg = NULL;
    assert_int_equal(weft_fgraph_create(f->g, 3, args, 1, &s2, NULL, NULL, &fg), WEFT_OK);
    assert_int_equal(weft_fgraph_n_applies(fg), 5);
    weft_rewriter_t *merge = NULL;
    assert_int_equal(weft_rewriter_merge_create("merge", &merge), WEFT_OK);
    assert_int_equal(weft_rewriter_apply(merge, fg, NULL), WEFT_OK);
    /* op1(x,y,z) and op2(x,y,z) became one node; op2(z,y,x) stays */
    assert_int_equal(weft_fgraph_n_applies(fg), 4);
    weft_rewriter_release(merge);
    weft_fgraph_destroy(fg);
}

/* Prints fg's dprint form into buf. */
static void dprint(weft_fgraph_t *fg, char *buf, size_t cap)
{
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    assert_int_equal(weft_fgraph_dprint(fg, tmp), WEFT_OK);
    rewind(tmp);
    size_t n = fread(buf, 1, cap - 1, tmp);
    buf[n] = '\0';
    fclose(tmp);
}

static void test_ofg_expand_builds_inner_graph_on_node_inputs(void **state)
{
    fx_t *f = *state;
    const weft_op_t *op = xyz_op(f, true, "xyz");
    weft_var_t *p = var(f, f->scal, "p"), *q = var(f, f->scal, "q"), *args[3] = {p, q, p};
    weft_apply_t *a = NULL;
    assert_non_null(a = weft_apply_create(f->g, op, 3, args));
    weft_var_t *out = NULL;
    assert_int_equal(weft_ofg_expand(f->g, a, &out), WEFT_OK);
    weft_apply_t *add = weft_var_owner(out);
    assert_non_null(add);
    assert_string_equal(weft_op_name(weft_apply_op(add)), "Add");
    assert_ptr_equal(weft_apply_input(add, 0), p);
    weft_apply_t *mul = weft_var_owner(weft_apply_input(add, 1));
    assert_string_equal(weft_op_name(weft_apply_op(mul)), "Mul");
    assert_ptr_equal(weft_apply_input(mul, 0), q);
    assert_ptr_equal(weft_apply_input(mul, 1), p);
    /* the copies keep the inner nodes' creation sites (this file) */
    const char *file;
    int line;
    weft_apply_trace(mul, &file, &line);
    assert_non_null(strstr(file, "test_ofg.c"));
}

static void test_ofg_inline_rewrite_sees_through(void **state)
{
    fx_t *f = *state;
    const weft_op_t *op = xyz_op(f, true, "xyz"), *keep = xyz_op(f, false, "keep");
    weft_var_t *p = var(f, f->scal, "p"), *q = var(f, f->scal, "q");
    weft_var_t *args[3] = {p, q, p}, *o1, *o2, *s, *in[2] = {p, q};
    assert_non_null(o1 = weft_op_call(f->g, op, 3, args));
    assert_non_null(o2 = weft_op_call(f->g, keep, 3, args));
    assert_non_null(s = weft_add(f->g, o1, o2));
    weft_fgraph_t *fg = NULL;
    assert_int_equal(weft_fgraph_create(f->g, 2, in, 1, &s, NULL, NULL, &fg), WEFT_OK);
    const char *inc[1] = {"inline_ofg_expansion"};
    assert_int_equal(weft_rewrite_mode(fg, "none", 1, inc, 0, NULL, NULL), WEFT_OK);
    char buf[1024];
    dprint(fg, buf, sizeof(buf));
    /* the inline op became Add(p, Mul(q, p)); the other one stays one node
     * ("{}" after a props-less op name is dropped: not what is tested here) */
    for (char *e; (e = strstr(buf, "{}")) != NULL;) memmove(e, e + 2, strlen(e + 2) + 1);
    assert_string_equal(buf, "Add [id 9]\n"
                             " |Add [id 12]\n"
                             " | |p [id v15]\n"
                             " | |Mul [id 11]\n"
                             " | | |q [id v16]\n"
                             " | | |p [id v15]\n"
                             " |OpFromGraph{name=keep} [id 8]\n"
                             " | |p [id v15]\n"
                             " | |q [id v16]\n"
                             " | |p [id v15]\n"
                             "Inputs:\n"
                             " p [id v15]\n"
                             " q [id v16]\n");
    weft_tensor_t *v[2] = {scalar(2), scalar(5)};
    weft_tensor_t *r = NULL;
    weft_var_t *o = weft_fgraph_output(fg, 0),
               *fin[2] = {weft_fgraph_input(fg, 0), weft_fgraph_input(fg, 1)};
    assert_int_equal(weft_eval(f->g, 2, fin, v, 1, &o, &r), WEFT_OK);
    assert_true(weft_tensor_flat_get(r, 0) == 2.0 * (2.0 + 5.0 * 2.0));
    weft_tensor_release(r);
    weft_tensor_release(v[0]);
    weft_tensor_release(v[1]);
    weft_fgraph_destroy(fg);
}

static void test_ofg_inline_rewrite_registered_first_in_fast_run(void **state)
{
    fx_t *f = *state;
    (void)xyz_op(f, true, NULL); /* the first OpFromGraph registers the rewrite */
    weft_rewrite_db_t *db = weft_rewrite_db_default();
    assert_true(weft_rewrite_db_has(db, WEFT_OFG_INLINE_REWRITE));
    assert_int_equal(weft_ofg_register_rewrites(db), WEFT_OK); /* idempotent */
    assert_int_equal(weft_ofg_register_rewrites(NULL), WEFT_EINVAL);
    FILE *tmp = tmpfile();
    assert_int_equal(weft_rewrite_db_print(db, tmp), WEFT_OK);
    rewind(tmp);
    char line[512];
    int found = 0, tops = 0;
    /* top-level lines are "position name [tags] (kind)"; the expansion has the
     * lowest position of all and carries the fast_run and inline tags */
    while (fgets(line, sizeof(line), tmp)) {
        if (line[0] == ' ') continue;
        tops++;
        if (strstr(line, "inline_ofg_expansion")) {
            found++;
            assert_non_null(
                strstr(line, "-0.01 inline_ofg_expansion [fast_run fast_compile inline]"));
        } else {
            assert_true(strtod(line, NULL) > -0.01);
        }
    }
    fclose(tmp);
    assert_int_equal(found, 1);
    assert_true(tops > 5);
}

/* ---- gradients --------------------------------------------------------------- */

typedef struct gradcase {
    int kind; /* 0: plain, 1: nested, 2: inline, 3: two outputs */
} gradcase_t;

/* y = OFG(x, w) with inner tanh(x) * w + x*x, nested/inline per case. */
static weft_var_t *grad_fn(weft_graph_t *g, size_t n_in, weft_var_t *const *inputs, void *user)
{
    const gradcase_t *c = user;
    (void)n_in;
    const weft_type_t *ty = weft_var_type(inputs[0]);
    weft_var_t *x = weft_var_create(g, ty, "x"), *w = weft_var_create(g, ty, "w");
    weft_var_t *e = weft_add(g, weft_mul(g, weft_tanh(g, x), w), weft_mul(g, x, x));
    weft_var_t *in[2] = {x, w}, *outs[2] = {e, weft_sub(g, x, w)};
    weft_ofg_options_t o = WEFT_OFG_OPTIONS_INIT;
    o.inline_expand = c->kind == 2;
    const weft_op_t *op = NULL;
    if (weft_ofg_create(g, 2, in, c->kind == 3 ? 2 : 1, outs, &o, &op) != WEFT_OK) return NULL;
    if (c->kind == 1) { /* wrap it again: OFG(a, b) = op(a, b) * 3 */
        weft_var_t *ab[2] = {weft_var_create(g, ty, "a"), weft_var_create(g, ty, "b")};
        weft_var_t *r3 = weft_mul_scalar(g, weft_op_call(g, op, 2, ab), 3.0);
        if (weft_ofg_create(g, 2, ab, 1, &r3, NULL, &op) != WEFT_OK) return NULL;
    }
    if (c->kind != 3) return weft_op_call(g, op, 2, inputs);
    weft_apply_t *ap = weft_apply_create(g, op, 2, inputs);
    return ap ? weft_mul(g, weft_apply_output(ap, 0), weft_apply_output(ap, 1)) : NULL;
}

static void check_grad(int kind)
{
    int64_t shape[1] = {4};
    weft_tensor_t *pts[2];
    assert_int_equal(weft_verify_grad_random(WEFT_FLOAT64, 1, shape, -1, 1, 7, &pts[0]), WEFT_OK);
    assert_int_equal(weft_verify_grad_random(WEFT_FLOAT64, 1, shape, -1, 1, 8, &pts[1]), WEFT_OK);
    gradcase_t c = {kind};
    weft_verify_grad_result_t res;
    weft_status_t s = weft_verify_grad(grad_fn, &c, 2, pts, NULL, &res);
    if (s != WEFT_OK) fprintf(stderr, "verify_grad kind %d: %s\n", kind, res.message);
    assert_int_equal(s, WEFT_OK);
    assert_true(res.max_abs_err < 1e-6);
    weft_tensor_release(pts[0]);
    weft_tensor_release(pts[1]);
}

static void test_ofg_grad_verified_plain(void **state)
{
    (void)state;
    check_grad(0);
}

static void test_ofg_grad_verified_nested(void **state)
{
    (void)state;
    check_grad(1);
}

static void test_ofg_grad_verified_inline_and_multi_output(void **state)
{
    (void)state;
    check_grad(2);
    check_grad(3);
}

static void test_ofg_grad_is_an_ofg_and_disconnected_input_gets_none(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = var(f, f->scal, "x"), *y = var(f, f->scal, "y"), *e, *in[2] = {x, y};
    assert_non_null(e = weft_tanh(f->g, x)); /* y unused */
    const weft_op_t *op = NULL;
    weft_ofg_options_t o = WEFT_OFG_OPTIONS_INIT;
    o.name = "f";
    assert_int_equal(weft_ofg_create(f->g, 2, in, 1, &e, &o, &op), WEFT_OK);
    weft_var_t *p = var(f, f->scal, "p"), *q = var(f, f->scal, "q"), *pq[2] = {p, q}, *r;
    assert_non_null(r = weft_op_call(f->g, op, 2, pq));
    weft_var_t *gz = var(f, f->scal, "gz"), *ig[2] = {NULL, NULL};
    assert_int_equal(weft_op_class(op)->grad(f->g, weft_var_owner(r), &gz, ig), WEFT_OK);
    assert_non_null(ig[0]);
    assert_null(ig[1]);
    const weft_op_t *gop = weft_apply_op(weft_var_owner(ig[0]));
    assert_true(weft_ofg_is(gop));
    assert_string_equal(weft_ofg_name(gop), "grad_f");
    /* d tanh(p) / dp * gz = (1 - tanh(p)^2) * gz */
    weft_var_t *args[3] = {p, q, gz};
    weft_tensor_t *v[3] = {scalar(0.5), scalar(9), scalar(2)};
    double t = tanh(0.5);
    assert_true(fabs(eval1(f, 3, args, v, ig[0]) - (1 - t * t) * 2) < 1e-12);
    for (int i = 0; i < 3; i++) weft_tensor_release(v[i]);
}

static void test_ofg_grad_override_is_used(void **state)
{
    fx_t *f = *state;
    /* override: d/dx = 10 * gz, whatever f is */
    weft_var_t *ox = var(f, f->scal, "x"), *og = var(f, f->scal, "g"), *ten, *oin[2] = {ox, og};
    assert_non_null(ten = weft_binary_scalar(f->g, WEFT_ELEMWISE_MUL, og, 10.0));
    const weft_op_t *ovr = NULL, *op = NULL;
    assert_int_equal(weft_ofg_create(f->g, 2, oin, 1, &ten, NULL, &ovr), WEFT_OK);
    weft_var_t *x = var(f, f->scal, "x"), *e;
    assert_non_null(e = weft_tanh(f->g, x));
    weft_ofg_options_t o = WEFT_OFG_OPTIONS_INIT;
    o.grad_override = ovr;
    assert_int_equal(weft_ofg_create(f->g, 1, &x, 1, &e, &o, &op), WEFT_OK);
    assert_true(weft_op_equal(weft_ofg_grad_override(op), ovr));
    weft_var_t *p = var(f, f->scal, "p"), *r, *gp = NULL;
    assert_non_null(r = weft_op_call(f->g, op, 1, &p));
    assert_non_null(weft_grads(f->g, r, 1, &p, NULL, &gp));
    weft_tensor_t *v = scalar(0.3);
    assert_true(eval1(f, 1, &p, &v, gp) == 10.0);
    weft_tensor_release(v);
    /* same graph without the override is a different op */
    const weft_op_t *plain = NULL;
    assert_int_equal(weft_ofg_create(f->g, 1, &x, 1, &e, NULL, &plain), WEFT_OK);
    assert_false(weft_op_equal(op, plain));
}

/* Two OpFromGraph nodes in a compiled function on 2 workers, called after
 * the building context is gone (the op is copied by value; its inner graph
 * is interned), and equal to an op of another context. */
static void test_ofg_compiled_function_runs_after_context_destroyed(void **state)
{
    (void)state;
    weft_graph_t *g, *g2;
    assert_int_equal(weft_graph_create(NULL, &g), WEFT_OK);
    assert_int_equal(weft_graph_create(NULL, &g2), WEFT_OK);
    int64_t n = 1000;
    const weft_type_t *t, *t2;
    weft_type_tensor(g, WEFT_FLOAT64, 1, &n, &t);
    weft_type_tensor(g2, WEFT_FLOAT64, 1, &n, &t2);
    weft_var_t *x, *y, *e, *xy[2], *a, *b, *o1, *o2, *s, *u, *v, *ue;
    x = weft_var_create(g, t, "x");
    y = weft_var_create(g, t, "y");
    assert_non_null(e = weft_mul(g, x, y));
    assert_non_null(e = weft_tanh(g, e));
    xy[0] = x;
    xy[1] = y;
    const weft_op_t *op = NULL, *op2 = NULL;
    assert_int_equal(weft_ofg_create(g, 2, xy, 1, &e, NULL, &op), WEFT_OK);
    u = weft_var_create(g2, t2, "u");
    v = weft_var_create(g2, t2, "v");
    weft_var_t *uv[2] = {u, v};
    assert_non_null(ue = weft_mul(g2, u, v));
    assert_non_null(ue = weft_tanh(g2, ue));
    assert_int_equal(weft_ofg_create(g2, 2, uv, 1, &ue, NULL, &op2), WEFT_OK);
    assert_true(weft_op_equal(op, op2)); /* across contexts */
    a = weft_var_create(g, t, "a");
    b = weft_var_create(g, t, "b");
    weft_var_t *ab[2] = {a, b}, *ba[2] = {b, a};
    assert_non_null(o1 = weft_op_call(g, op, 2, ab));
    assert_non_null(o2 = weft_op_call(g, op, 2, ba));
    assert_non_null(s = weft_sub(g, o1, o2));
    weft_function_options_t fo = WEFT_FUNCTION_OPTIONS_INIT;
    fo.threads = 2;
    fo.mode = "none"; /* keep both nodes: merge would not unify them anyway */
    weft_function_t *f = NULL;
    weft_status_t st = weft_function_compile(2, ab, 2, (weft_var_t *[]){o1, s}, 0, NULL, &fo, &f);
    if (st != WEFT_OK) fprintf(stderr, "%s\n", weft_function_last_error(NULL));
    assert_int_equal(st, WEFT_OK);
    weft_graph_destroy(g);
    weft_graph_destroy(g2);
    weft_tensor_t *in[2], *out[2] = {NULL, NULL};
    assert_int_equal(weft_verify_grad_random(WEFT_FLOAT64, 1, &n, -1, 1, 3, &in[0]), WEFT_OK);
    assert_int_equal(weft_verify_grad_random(WEFT_FLOAT64, 1, &n, -1, 1, 4, &in[1]), WEFT_OK);
    for (int call = 0; call < 20; call++) {
        assert_int_equal(weft_function_call(f, 2, in, 2, out), WEFT_OK);
        for (size_t i = 0; i < (size_t)n; i++) {
            double p = weft_tensor_flat_get(in[0], i) * weft_tensor_flat_get(in[1], i);
            assert_true(fabs(weft_tensor_flat_get(out[0], i) - tanh(p)) < 1e-15);
            assert_true(weft_tensor_flat_get(out[1], i) == 0.0);
        }
        weft_tensor_release(out[0]);
        weft_tensor_release(out[1]);
        out[0] = out[1] = NULL;
    }
    weft_tensor_release(in[0]);
    weft_tensor_release(in[1]);
    assert_int_equal(weft_function_destroy(f), WEFT_OK);
}

/* In fast_run an inline OpFromGraph disappears from the compiled function. */
static void test_ofg_inline_expanded_when_compiled(void **state)
{
    fx_t *f = *state;
    const weft_op_t *op = xyz_op(f, true, "xyz");
    weft_var_t *p = var(f, f->scal, "p"), *q = var(f, f->scal, "q"), *args[3] = {p, q, p}, *o;
    weft_var_t *in[2] = {p, q};
    assert_non_null(o = weft_op_call(f->g, op, 3, args));
    weft_function_t *fn = NULL;
    assert_int_equal(weft_function_compile(2, in, 1, &o, 0, NULL, NULL, &fn), WEFT_OK);
    FILE *tmp = tmpfile();
    assert_int_equal(weft_function_print(fn, tmp), WEFT_OK);
    rewind(tmp);
    char buf[1024];
    size_t k = fread(buf, 1, sizeof(buf) - 1, tmp);
    buf[k] = '\0';
    fclose(tmp);
    assert_null(strstr(buf, "OpFromGraph"));
    weft_tensor_t *v[2] = {scalar(2), scalar(5)}, *r = NULL;
    assert_int_equal(weft_function_call(fn, 2, v, 1, &r), WEFT_OK);
    assert_true(weft_tensor_flat_get(r, 0) == 12.0);
    weft_tensor_release(r);
    weft_tensor_release(v[0]);
    weft_tensor_release(v[1]);
    assert_int_equal(weft_function_destroy(fn), WEFT_OK);
}

/* ---- bad input ------------------------------------------------------------------ */

static void test_ofg_bad_arity_and_type_rejected(void **state)
{
    fx_t *f = *state;
    const weft_op_t *op = xyz_op(f, false, "xyz");
    weft_var_t *x = var(f, f->scal, "x"), *v = var(f, f->vec3, "v"), *two[2] = {x, x}, *r;
    assert_null(r = weft_op_call(f->g, op, 2, two));
    assert_int_equal(weft_graph_error(f->g), WEFT_EINVAL);
    assert_non_null(strstr(weft_graph_error_message(f->g), "Expected 3 input(s), got 2"));
    weft_graph_clear_error(f->g);
    weft_var_t *bad[3] = {x, v, x};
    assert_null(r = weft_op_call(f->g, op, 3, bad));
    assert_int_equal(weft_graph_error(f->g), WEFT_ETYPE);
    assert_non_null(strstr(weft_graph_error_message(f->g), "input 1"));
    assert_non_null(strstr(weft_graph_error_message(f->g), "float64[3]"));
    weft_graph_clear_error(f->g);
}

static weft_status_t fini_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                    weft_var_t *const *in, size_t *n_out, const weft_type_t **out)
{
    (void)g;
    (void)op;
    (void)n_in;
    *n_out = 1;
    out[0] = weft_var_type(in[0]);
    return WEFT_OK;
}

static void fini_props(void *p)
{
    (void)p;
}

static const weft_op_class_t fini_class = {.size = sizeof(weft_op_class_t),
                                           .name = "OwnsMemory",
                                           .props_size = sizeof(int),
                                           .props_fini = fini_props,
                                           .make_node = fini_make_node};

static void test_ofg_bad_create_arguments(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = var(f, f->scal, "x"), *y = var(f, f->scal, "y"), *e, *two[2] = {x, x};
    const weft_op_t *op = NULL;
    assert_non_null(e = weft_add(f->g, x, y));
    assert_int_equal(weft_ofg_create(NULL, 1, &x, 1, &e, NULL, &op), WEFT_EINVAL);
    assert_int_equal(weft_ofg_create(f->g, 1, &x, 1, &e, NULL, NULL), WEFT_EINVAL);
    assert_int_equal(weft_ofg_create(f->g, 1, NULL, 1, &e, NULL, &op), WEFT_EINVAL);
    assert_int_equal(weft_ofg_create(f->g, 1, &x, 0, &e, NULL, &op), WEFT_EINVAL);
    weft_var_t *many[WEFT_OP_MAX_OUTPUTS + 1];
    for (int i = 0; i <= WEFT_OP_MAX_OUTPUTS; i++) many[i] = e;
    weft_var_t *xy[2] = {x, y};
    assert_int_equal(weft_ofg_create(f->g, 2, xy, WEFT_OP_MAX_OUTPUTS + 1, many, NULL, &op),
                     WEFT_EINVAL);
    weft_ofg_options_t small = WEFT_OFG_OPTIONS_INIT;
    small.size = 4;
    assert_int_equal(weft_ofg_create(f->g, 2, xy, 1, &e, &small, &op), WEFT_EINVAL);
    /* y is used but not declared */
    assert_int_equal(weft_ofg_create(f->g, 1, &x, 1, &e, NULL, &op), WEFT_EMISSING_INPUT);
    /* an input that has an owner, an input listed twice */
    weft_var_t *owned[2] = {x, e};
    assert_int_equal(weft_ofg_create(f->g, 2, owned, 1, &e, NULL, &op), WEFT_EINVAL);
    assert_int_equal(weft_ofg_create(f->g, 2, two, 1, &e, NULL, &op), WEFT_EINVAL);
    /* a variable of another context */
    weft_graph_t *g2;
    weft_var_t *z;
    const weft_type_t *t2;
    assert_int_equal(weft_graph_create(NULL, &g2), WEFT_OK);
    weft_type_tensor(g2, WEFT_FLOAT64, 0, NULL, &t2);
    z = weft_var_create(g2, t2, "z");
    assert_int_equal(weft_ofg_create(f->g, 1, &z, 1, &e, NULL, &op), WEFT_EFOREIGN);
    weft_graph_destroy(g2);
    /* an in-place inner node */
    const weft_op_t *add_inpl = NULL;
    weft_var_t *ie;
    assert_int_equal(weft_elemwise_op(f->g, WEFT_ELEMWISE_ADD, 0, WEFT_FLOAT64, &add_inpl),
                     WEFT_OK);
    assert_non_null(ie = weft_op_call(f->g, add_inpl, 2, xy));
    assert_int_equal(weft_ofg_create(f->g, 2, xy, 1, &ie, NULL, &op), WEFT_EINVAL);
    assert_non_null(strstr(weft_graph_last_error(f->g), "in-place"));
    /* an inner op whose props own memory cannot be copied into the inner graph */
    const weft_op_t *fop = NULL;
    weft_var_t *fe;
    assert_int_equal(weft_op_create(f->g, &fini_class, &(int){1}, &fop), WEFT_OK);
    assert_non_null(fe = weft_op_call(f->g, fop, 1, &x));
    assert_int_equal(weft_ofg_create(f->g, 1, &x, 1, &fe, NULL, &op), WEFT_ENOTIMPL);
    assert_non_null(strstr(weft_graph_last_error(f->g), "OwnsMemory"));
    /* an override that is not an OpFromGraph */
    weft_ofg_options_t bad = WEFT_OFG_OPTIONS_INIT;
    bad.grad_override = add_inpl;
    assert_int_equal(weft_ofg_create(f->g, 1, &x, 1, &x, &bad, &op), WEFT_EINVAL);
    /* an override with the wrong arity */
    const weft_op_t *ovr = xyz_op(f, false, NULL);
    weft_ofg_options_t o = WEFT_OFG_OPTIONS_INIT;
    o.grad_override = ovr;
    assert_int_equal(weft_ofg_create(f->g, 1, &x, 1, &x, &o, &op), WEFT_EINVAL);
}

static void test_ofg_expand_bad_arguments(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = var(f, f->scal, "x"), *e, *out;
    assert_non_null(e = weft_tanh(f->g, x));
    assert_int_equal(weft_ofg_expand(f->g, weft_var_owner(e), &out), WEFT_EINVAL);
    assert_int_equal(weft_ofg_expand(NULL, weft_var_owner(e), &out), WEFT_EINVAL);
    assert_int_equal(weft_ofg_expand(f->g, NULL, &out), WEFT_EINVAL);
    assert_false(weft_ofg_is(weft_apply_op(weft_var_owner(e))));
    assert_null(weft_ofg_fgraph(weft_apply_op(weft_var_owner(e))));
    assert_int_equal(weft_ofg_n_inputs(NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_ofg_build_eval_matches_expression, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ofg_multi_output_and_connection_pattern, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_ofg_nested_evaluates_inner_op, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ofg_equal_iff_same_inner_graph, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ofg_merge_unifies_equal_ops, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ofg_expand_builds_inner_graph_on_node_inputs, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_ofg_inline_rewrite_sees_through, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ofg_inline_rewrite_registered_first_in_fast_run, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_ofg_grad_verified_plain, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ofg_grad_verified_nested, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ofg_grad_verified_inline_and_multi_output, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_ofg_grad_is_an_ofg_and_disconnected_input_gets_none,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_ofg_grad_override_is_used, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ofg_compiled_function_runs_after_context_destroyed,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_ofg_inline_expanded_when_compiled, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ofg_bad_arity_and_type_rejected, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ofg_bad_create_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ofg_expand_bad_arguments, setup, teardown),
    };
    return cmocka_run_group_tests_name("ofg", tests, NULL, NULL);
}
