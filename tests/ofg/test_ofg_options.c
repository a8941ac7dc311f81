/* OpFromGraph creation options: inputs bound to constants, the unused-input
 * policy (ignore / warn / raise), and a declared destroy_map that the
 * DestroyHandler, the Supervisor and compiled functions honour. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "weft/weft.h"

typedef struct fx {
    weft_graph_t *g;
    const weft_type_t *vec3, *vec3f;
} fx_t;

static int setup(void **state)
{
    fx_t *f = calloc(1, sizeof(*f));
    if (!f || weft_graph_create(NULL, &f->g) != WEFT_OK) return -1;
    int64_t three = 3;
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

static weft_var_t *var(fx_t *f, const char *name)
{
    weft_var_t *v = weft_var_create(f->g, f->vec3, name);
    assert_non_null(v);
    return v;
}

static weft_var_t *cst(fx_t *f, const weft_type_t *t, double a, double b, double c)
{
    double d[3] = {a, b, c};
    float s[3] = {(float)a, (float)b, (float)c};
    weft_var_t *v = t == f->vec3 ? weft_constant_create(f->g, t, d, sizeof(d))
                                 : weft_constant_create(f->g, t, s, sizeof(s));
    assert_non_null(v);
    return v;
}

static const char *str_of(weft_fgraph_t *fg)
{
    static char buf[256];
    assert_int_equal(weft_fgraph_str(fg, buf, sizeof(buf), NULL), WEFT_OK);
    return buf;
}

/* ---- constant inputs ----------------------------------------------------------- */

static void test_ofg_constant_input_is_bound_inside_the_inner_graph(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = var(f, "x"), *c = var(f, "c"), *w = var(f, "w");
    weft_var_t *y = weft_add(f->g, weft_mul(f->g, x, c), w);
    assert_non_null(y);
    weft_var_t *in[] = {x, c, w}, *bind[] = {NULL, cst(f, f->vec3, 1, 2, 3), NULL};
    weft_ofg_options_t o = WEFT_OFG_OPTIONS_INIT;
    o.input_constants = bind;
    const weft_op_t *op;
    assert_int_equal(weft_ofg_create(f->g, 3, in, 1, &y, &o, &op), WEFT_OK);
    assert_int_equal(weft_ofg_n_inputs(op), 2);
    assert_string_equal(str_of(weft_ofg_fgraph(op)), "FunctionGraph(Add(Mul(x, [1, 2, 3]), w))");
    /* The same as writing the constant into the expression. */
    weft_var_t *x2 = var(f, "x"), *w2 = var(f, "w");
    weft_var_t *y2 = weft_add(f->g, weft_mul(f->g, x2, cst(f, f->vec3, 1, 2, 3)), w2);
    assert_non_null(y2);
    const weft_op_t *op2;
    assert_int_equal(weft_ofg_create(f->g, 2, (weft_var_t *[]){x2, w2}, 1, &y2, NULL, &op2),
                     WEFT_OK);
    assert_true(weft_op_equal(op, op2));
    /* Evaluated: a * [1, 2, 3] + b. */
    weft_var_t *a = var(f, "a"), *b = var(f, "b"), *ab[] = {a, b};
    weft_var_t *r = weft_op_call(f->g, op, 2, ab);
    assert_non_null(r);
    weft_tensor_t *vals[2], *out = NULL;
    int64_t three = 3;
    assert_int_equal(weft_tensor_full(WEFT_FLOAT64, 1, &three, 2.0, &vals[0]), WEFT_OK);
    assert_int_equal(weft_tensor_full(WEFT_FLOAT64, 1, &three, 10.0, &vals[1]), WEFT_OK);
    assert_int_equal(weft_eval(f->g, 2, ab, vals, 1, &r, &out), WEFT_OK);
    assert_true(weft_tensor_flat_get(out, 0) == 12.0);
    assert_true(weft_tensor_flat_get(out, 1) == 14.0);
    assert_true(weft_tensor_flat_get(out, 2) == 16.0);
    weft_tensor_release(out);
    weft_tensor_release(vals[0]);
    weft_tensor_release(vals[1]);
}

static void test_ofg_constant_input_errors_name_the_entry(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = var(f, "x"), *c = var(f, "c"), *in[] = {x, c};
    weft_var_t *y = weft_mul(f->g, x, c);
    assert_non_null(y);
    weft_var_t *bind[] = {NULL, var(f, "not_constant")};
    weft_ofg_options_t o = WEFT_OFG_OPTIONS_INIT;
    o.input_constants = bind;
    const weft_op_t *op = NULL;
    assert_int_equal(weft_ofg_create(f->g, 2, in, 1, &y, &o, &op), WEFT_EINVAL);
    assert_string_equal(weft_graph_last_error(f->g),
                        "weft_ofg_create: input_constants[1], not_constant, is not a constant");
    assert_null(op);
    bind[1] = cst(f, f->vec3f, 1, 2, 3); /* float32 where float64 is expected */
    assert_int_equal(weft_ofg_create(f->g, 2, in, 1, &y, &o, &op), WEFT_ETYPE);
    const char *msg = weft_graph_last_error(f->g);
    const char *prefix = "weft_ofg_create: binding input 1: replace: constant ";
    assert_int_equal(strncmp(msg, prefix, strlen(prefix)), 0);
    assert_non_null(strstr(msg, "(float32[3], created at "));
    assert_non_null(strstr(msg, "(type is not a subtype)"));
    /* A grad_override must then match the op's own (unbound) inputs. */
    bind[1] = cst(f, f->vec3, 1, 2, 3);
    assert_int_equal(weft_ofg_create(f->g, 2, in, 1, &y, &o, &op), WEFT_OK);
    weft_var_t *p = var(f, "p"), *q = var(f, "q"), *pq[] = {p, q};
    const weft_op_t *ov;
    assert_int_equal(weft_ofg_create(f->g, 2, pq, 1, &p, NULL, &ov), WEFT_OK);
    o.grad_override = ov; /* (x, g_y) -> g_x: 2 inputs, as required */
    assert_int_equal(weft_ofg_create(f->g, 2, in, 1, &y, &o, &op), WEFT_OK);
    o.input_constants = NULL; /* now 3 inputs would be needed */
    assert_int_equal(weft_ofg_create(f->g, 2, in, 1, &y, &o, &op), WEFT_EINVAL);
    assert_string_equal(weft_graph_last_error(f->g),
                        "weft_ofg_create: grad_override must be an OpFromGraph taking 3 inputs "
                        "(inputs, then output gradients)");
}

/* ---- unused inputs --------------------------------------------------------------- */

typedef struct warned {
    char text[512];
    int n;
} warned_t;

static void on_warn(void *user, const char *message)
{
    warned_t *w = user;
    snprintf(w->text, sizeof(w->text), "%s", message);
    w->n++;
}

static void test_ofg_unused_input_ignore_warn_raise(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = var(f, "x");
    int y_line = __LINE__ + 1;
    weft_var_t *y = weft_var_create(f->g, f->vec3, "y");
    weft_var_t *e = weft_exp(f->g, x);
    assert_string_equal(weft_graph_error_message(f->g), "");
    weft_var_t *in[] = {x, y};
    weft_ofg_options_t o = WEFT_OFG_OPTIONS_INIT;
    const weft_op_t *op;
    assert_int_equal(weft_ofg_create(f->g, 2, in, 1, &e, &o, &op), WEFT_OK); /* ignore */
    char want[256];
    snprintf(want, sizeof(want),
             "weft_ofg_create: input 1 (y, created at %s:%d) is not used by any output", __FILE__,
             y_line);
    warned_t w = {{0}, 0};
    o.on_unused_input = WEFT_OFG_UNUSED_WARN;
    o.warn = on_warn;
    o.warn_user = &w;
    assert_int_equal(weft_ofg_create(f->g, 2, in, 1, &e, &o, &op), WEFT_OK);
    assert_int_equal(w.n, 1);
    assert_string_equal(w.text, want);
    o.on_unused_input = WEFT_OFG_UNUSED_RAISE;
    op = NULL;
    assert_int_equal(weft_ofg_create(f->g, 2, in, 1, &e, &o, &op), WEFT_EINVAL);
    assert_string_equal(weft_graph_last_error(f->g), want);
    assert_null(op);
    /* A bound input is not an op input: never reported. */
    weft_var_t *bind[] = {NULL, cst(f, f->vec3, 0, 0, 0)};
    o.input_constants = bind;
    assert_int_equal(weft_ofg_create(f->g, 2, in, 1, &e, &o, &op), WEFT_OK);
    o.on_unused_input = (weft_ofg_unused_t)7;
    assert_int_equal(weft_ofg_create(f->g, 2, in, 1, &e, &o, &op), WEFT_EINVAL);
    assert_string_equal(weft_graph_last_error(f->g), "weft_ofg_create: on_unused_input 7 unknown");
    /* Callers built against the original four-field struct still work. */
    weft_ofg_options_t old = WEFT_OFG_OPTIONS_INIT;
    old.size = offsetof(weft_ofg_options_t, input_constants);
    old.on_unused_input = WEFT_OFG_UNUSED_RAISE; /* beyond size: not read */
    assert_int_equal(weft_ofg_create(f->g, 2, in, 1, &e, &old, &op), WEFT_OK);
    old.size = offsetof(weft_ofg_options_t, grad_override);
    assert_int_equal(weft_ofg_create(f->g, 2, in, 1, &e, &old, &op), WEFT_EINVAL);
}

/* ---- destroy_map ------------------------------------------------------------------ */

/* incr(x) = x + [1, 1, 1], declared to destroy its input 0 into output 0. */
static const weft_op_t *incr_op(fx_t *f, size_t n_destroy, const weft_op_alias_t *dm)
{
    weft_var_t *x = var(f, "x");
    weft_var_t *y = weft_add(f->g, x, cst(f, f->vec3, 1, 1, 1));
    assert_non_null(y);
    weft_ofg_options_t o = WEFT_OFG_OPTIONS_INIT;
    o.name = "incr";
    o.n_destroy = n_destroy;
    o.destroy_map = dm;
    const weft_op_t *op = NULL;
    weft_status_t s = weft_ofg_create(f->g, 1, &x, 1, &y, &o, &op);
    if (s != WEFT_OK) fprintf(stderr, "%s\n", weft_graph_last_error(f->g));
    assert_int_equal(s, WEFT_OK);
    return op;
}

static const weft_op_alias_t DM00[] = {{0, 0}};

static void test_ofg_destroy_map_is_declared_printed_and_compared(void **state)
{
    fx_t *f = *state;
    const weft_op_t *op = incr_op(f, 1, DM00), *plain = incr_op(f, 0, NULL);
    const weft_op_alias_t *e;
    size_t n;
    weft_op_destroy_map(op, &e, &n);
    assert_int_equal(n, 1);
    assert_int_equal(e[0].output, 0);
    assert_int_equal(e[0].input, 0);
    weft_ofg_destroy_map(op, &e, &n);
    assert_int_equal(n, 1);
    assert_true(weft_op_is_destructive(op));
    assert_false(weft_op_is_destructive(plain));
    assert_false(weft_op_equal(op, plain));
    assert_true(weft_op_equal(op, incr_op(f, 1, DM00)));
    char buf[128];
    weft_op_print(op, buf, sizeof(buf));
    assert_string_equal(buf, "OpFromGraph{name=incr, destroy_map={0:0}}");
    weft_op_print(plain, buf, sizeof(buf));
    assert_string_equal(buf, "OpFromGraph{name=incr}");
}

static void test_ofg_destroy_map_bad_entries_are_refused(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = var(f, "x"), *y = var(f, "y"), *in[] = {x, y};
    weft_var_t *outs[] = {weft_mul(f->g, x, y), weft_sum(f->g, x, 0, NULL, false)};
    assert_string_equal(weft_graph_error_message(f->g), "");
    static const struct {
        weft_op_alias_t dm[2];
        size_t n;
        const char *msg;
    } cases[] = {
        {{{2, 0}}, 1, "weft_ofg_create: destroy_map entry 0 {output 2, input 0} is out of range "
                      "(2 inputs, 2 outputs)"},
        {{{0, 2}}, 1, "weft_ofg_create: destroy_map entry 0 {output 0, input 2} is out of range "
                      "(2 inputs, 2 outputs)"},
        {{{1, 0}}, 1, "weft_ofg_create: destroy_map entry 0 {output 1, input 0} pairs an output "
                      "and an input of different types (2 inputs, 2 outputs)"},
        {{{0, 0}, {0, 1}}, 2, "weft_ofg_create: destroy_map entry 1 {output 0, input 1} repeats "
                              "an output or an input (2 inputs, 2 outputs)"},
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        weft_ofg_options_t o = WEFT_OFG_OPTIONS_INIT;
        o.n_destroy = cases[k].n;
        o.destroy_map = cases[k].dm;
        const weft_op_t *op = NULL;
        assert_int_equal(weft_ofg_create(f->g, 2, in, 2, outs, &o, &op), WEFT_EINVAL);
        assert_string_equal(weft_graph_last_error(f->g), cases[k].msg);
        assert_null(op);
    }
    weft_ofg_options_t o = WEFT_OFG_OPTIONS_INIT;
    o.n_destroy = 1;
    const weft_op_t *op = NULL;
    assert_int_equal(weft_ofg_create(f->g, 2, in, 2, outs, &o, &op), WEFT_EINVAL);
    assert_string_equal(weft_graph_last_error(f->g), "weft_ofg_create: NULL destroy_map");
}

/* The DestroyHandler orders the other reader of x before the destroying
 * OpFromGraph, refuses a second destroyer, and the Supervisor refuses a
 * protected x. */
static void test_ofg_destroy_map_is_honoured_by_destroy_handler(void **state)
{
    fx_t *f = *state;
    const weft_op_t *op = incr_op(f, 1, DM00);
    weft_var_t *x = var(f, "x");
    weft_var_t *a = weft_op_call(f->g, op, 1, &x), *b = weft_exp(f->g, x);
    assert_string_equal(weft_graph_error_message(f->g), "");
    weft_var_t *outs[] = {a, b};
    weft_fgraph_options_t fo = WEFT_FGRAPH_OPTIONS_INIT;
    fo.clone = false;
    weft_fgraph_t *fg;
    assert_int_equal(weft_fgraph_create(f->g, 1, &x, 2, outs, &fo, NULL, &fg), WEFT_OK);
    assert_int_equal(weft_dh_attach(fg, NULL), WEFT_OK);
    assert_int_equal(weft_fgraph_validate(fg), WEFT_OK);
    weft_apply_t *const *before, *const *after;
    size_t n;
    assert_int_equal(weft_dh_orderings(fg, &before, &after, &n), WEFT_OK);
    assert_int_equal(n, 1);
    assert_ptr_equal(before[0], weft_var_owner(b));
    assert_ptr_equal(after[0], weft_var_owner(a));
    weft_apply_t *const *order;
    assert_int_equal(weft_fgraph_toposort(fg, &order, &n), WEFT_OK);
    assert_int_equal(n, 2);
    assert_ptr_equal(order[0], weft_var_owner(b));
    assert_ptr_equal(order[1], weft_var_owner(a));
    /* A second destroyer of x. */
    weft_var_t *a2 = weft_op_call(f->g, op, 1, &x);
    assert_non_null(a2);
    assert_int_equal(weft_fgraph_add_output(fg, a2, "test"), WEFT_OK);
    assert_int_equal(weft_fgraph_validate(fg), WEFT_EINCONSISTENT);
    weft_fgraph_destroy(fg);
    /* x protected. */
    bool mut[] = {false};
    fo.input_mutable = mut;
    assert_int_equal(weft_fgraph_create(f->g, 1, &x, 1, &a, &fo, NULL, &fg), WEFT_OK);
    assert_int_equal(weft_fgraph_validate(fg), WEFT_EINCONSISTENT);
    weft_fgraph_destroy(fg);
}

static void test_ofg_destroy_map_compiled_overwrites_the_input(void **state)
{
    fx_t *f = *state;
    const weft_op_t *op = incr_op(f, 1, DM00);
    weft_var_t *x = var(f, "x");
    weft_var_t *y = weft_op_call(f->g, op, 1, &x);
    assert_non_null(y);
    weft_function_options_t o = WEFT_FUNCTION_OPTIONS_INIT;
    o.mode = "none";
    o.threads = 1;
    weft_function_t *fn = NULL;
    assert_int_equal(weft_function_compile(1, &x, 1, &y, 0, NULL, &o, &fn), WEFT_EINVAL);
    const char *msg = weft_function_last_error(NULL);
    assert_non_null(strstr(msg, "Graph must not contain inplace operations: apply "));
    bool mut[] = {true};
    o.accept_inplace = true;
    o.input_mutable = mut;
    assert_int_equal(weft_function_compile(1, &x, 1, &y, 0, NULL, &o, &fn), WEFT_OK);
    weft_tensor_t *in, *out = NULL;
    int64_t three = 3;
    assert_int_equal(weft_tensor_full(WEFT_FLOAT64, 1, &three, 5.0, &in), WEFT_OK);
    assert_int_equal(weft_function_call(fn, 1, &in, 1, &out), WEFT_OK);
    for (size_t i = 0; i < 3; i++) {
        assert_true(weft_tensor_flat_get(out, i) == 6.0);
        assert_true(weft_tensor_flat_get(in, i) == 6.0); /* destroyed: holds the result */
    }
    weft_tensor_release(out);
    weft_tensor_release(in);
    assert_int_equal(weft_function_destroy(fn), WEFT_OK);
}

static void test_ofg_destroy_map_survives_json(void **state)
{
    fx_t *f = *state;
    const weft_op_t *op = incr_op(f, 1, DM00);
    weft_var_t *x = var(f, "x");
    weft_var_t *y = weft_op_call(f->g, op, 1, &x);
    assert_non_null(y);
    weft_graph_io_t io = {1, &x, NULL, 1, &y, 0, NULL};
    char *text = NULL;
    assert_int_equal(weft_graph_io_save(&io, &text), WEFT_OK);
    assert_non_null(strstr(text, "\"destroy_map\":[0,0]"));
    weft_graph_io_t back = {0};
    assert_int_equal(weft_graph_io_load(f->g, text, strlen(text), "test", &back), WEFT_OK);
    assert_true(weft_op_equal(weft_apply_op(weft_var_owner(back.outputs[0])), op));
    weft_graph_io_clear(&back);
    weft_graph_io_free_text(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        T(test_ofg_constant_input_is_bound_inside_the_inner_graph),
        T(test_ofg_constant_input_errors_name_the_entry),
        T(test_ofg_unused_input_ignore_warn_raise),
        T(test_ofg_destroy_map_is_declared_printed_and_compared),
        T(test_ofg_destroy_map_bad_entries_are_refused),
        T(test_ofg_destroy_map_is_honoured_by_destroy_handler),
        T(test_ofg_destroy_map_compiled_overwrites_the_input),
        T(test_ofg_destroy_map_survives_json),
#undef T
    };
    return cmocka_run_group_tests_name("ofg_options", tests, NULL, NULL);
}
