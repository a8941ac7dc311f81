/* Composite (weft/composite.h): results equal to the unfused expression bit
 * for bit (broadcast, strided and in-place operands, rows longer than a
 * block), the printed expression, op info, and every rejected program. */
#include "ops/ops_fixture.h"
#include "weft/composite.h"

#define S(k, a, b) {WEFT_ELEMWISE_##k, {a, b}}

/* Deterministic values in [-1, 1). */
static weft_tensor_t *filled(int nd, const int64_t *shape, uint32_t seed)
{
    weft_tensor_t *t;
    assert_int_equal(weft_tensor_empty(WEFT_FLOAT64, nd, shape, &t), WEFT_OK);
    double *d = weft_tensor_data(t);
    for (size_t i = 0; i < weft_tensor_size(t); i++)
        d[i] = (double)((((uint32_t)i + seed) * 2654435761u) >> 8) / (double)(1u << 23) - 1.0;
    return t;
}

static void assert_bit_equal(const weft_tensor_t *a, const weft_tensor_t *b)
{
    assert_true(weft_tensor_same_shape(a, b));
    for (size_t i = 0; i < weft_tensor_size(a); i++)
        assert_true(weft_tensor_flat_get(a, i) == weft_tensor_flat_get(b, i));
}

/* g * (1 - h*h) with h = tanh(x + b): x, g (300, 130) (rows longer than one
 * 128-element block), b (1, 130) broadcast, and the 1 a broadcast constant. */
static void test_composite_equals_unfused_expression(void **state)
{
    weft_graph_t *g = *state;
    int64_t sx[2] = {300, 130}, sb[2] = {1, 130};
    weft_var_t *x = fx_var(g, WEFT_FLOAT64, 2, sx), *b = fx_var(g, WEFT_FLOAT64, 2, sb);
    weft_var_t *gr = fx_var(g, WEFT_FLOAT64, 2, sx), *one, *s, *h, *hh, *d, *want, *got;
    assert_non_null(one = weft_constant_scalar(g, WEFT_FLOAT64, 1.0));
    assert_non_null(one = weft_pad_left(g, one, 2));
    assert_non_null(s = weft_add(g, x, b));
    assert_non_null(h = weft_tanh(g, s));
    assert_non_null(hh = weft_sqr(g, h));
    assert_non_null(d = weft_sub(g, one, hh));
    assert_non_null(want = weft_mul(g, gr, d));
    /* registers: x0 b1 g2 one3 | s4 h5 hh6 d7 out8 */
    const weft_composite_step_t prog[] = {S(ADD, 0, 1), S(TANH, 4, 0), S(SQR, 5, 0),
                                          S(SUB, 3, 6), S(MUL, 2, 7)};
    weft_var_t *in[4] = {x, b, gr, one};
    assert_non_null(got = weft_composite(g, 4, in, 5, prog));
    char text[256];
    weft_op_print(weft_apply_op(weft_var_owner(got)), text, sizeof text);
    assert_string_equal(text, "Composite{(i2 * (i3 - Sqr(Tanh((i0 + i1)))))}");
    weft_tensor_t *vals[3] = {filled(2, sx, 1), filled(2, sb, 2), filled(2, sx, 3)};
    weft_tensor_t *r1 = fx_eval(g, 3, in, vals, want), *r2 = fx_eval(g, 3, in, vals, got);
    assert_bit_equal(r1, r2);
    weft_tensor_release(r1);
    weft_tensor_release(r2);
    for (int i = 0; i < 3; i++) weft_tensor_release(vals[i]);
}

/* x.T - y (a strided operand), float32, and an in-place variant writing y. */
static void test_composite_strided_float32_and_in_place(void **state)
{
    weft_graph_t *g = *state;
    int64_t sx[2] = {40, 70}, sy[2] = {70, 40};
    weft_var_t *x = fx_var(g, WEFT_FLOAT32, 2, sx), *y = fx_var(g, WEFT_FLOAT32, 2, sy);
    weft_var_t *xt, *d, *want, *got;
    assert_non_null(xt = weft_transpose(g, x));
    assert_non_null(d = weft_sub(g, xt, y));
    assert_non_null(want = weft_exp(g, d));
    const weft_composite_step_t prog[] = {S(SUB, 0, 1), S(EXP, 2, 0)};
    const weft_op_t *op;
    assert_int_equal(weft_composite_op(g, 2, 2, prog, 1, &op), WEFT_OK);
    weft_var_t *in[2] = {xt, y};
    assert_non_null(got = weft_op_call(g, op, 2, in));
    char text[128];
    weft_op_print(op, text, sizeof text);
    assert_string_equal(text, "Composite{Exp((i0 - i1)), inplace=1}");
    weft_tensor_t *vx, *vy, *fx = filled(2, sx, 5), *fy = filled(2, sy, 6);
    assert_int_equal(weft_tensor_copy_as(fx, WEFT_FLOAT32, &vx), WEFT_OK);
    assert_int_equal(weft_tensor_copy_as(fy, WEFT_FLOAT32, &vy), WEFT_OK);
    weft_tensor_release(fx);
    weft_tensor_release(fy);
    weft_var_t *roots[2] = {x, y};
    weft_tensor_t *vals[2] = {vx, vy};
    weft_tensor_t *r1 = fx_eval(g, 2, roots, vals, want), *r2 = fx_eval(g, 2, roots, vals, got);
    assert_bit_equal(r1, r2);
    assert_true(weft_tensor_shares_buffer(r2, vy)); /* written into y */
    weft_tensor_release(r1);
    weft_tensor_release(r2);
    weft_tensor_release(vx);
    weft_tensor_release(vy);
}

static void test_composite_op_info_round_trips(void **state)
{
    weft_graph_t *g = *state;
    const weft_composite_step_t prog[] = {S(MUL, 0, 0), S(NEG, 1, 0), S(MAXIMUM, 2, 1)};
    const weft_op_t *op;
    assert_int_equal(weft_composite_op(g, 1, 3, prog, 0, &op), WEFT_OK);
    size_t n_in = 0, n_steps = 0;
    int ip = -5;
    weft_composite_step_t got[WEFT_COMPOSITE_MAX_STEPS];
    assert_true(weft_composite_op_info(op, &n_in, &n_steps, got, &ip));
    assert_int_equal(n_in, 1);
    assert_int_equal(n_steps, 3);
    assert_int_equal(ip, 0);
    for (int s = 0; s < 3; s++) {
        assert_int_equal(got[s].kind, prog[s].kind);
        assert_int_equal(got[s].arg[0], prog[s].arg[0]);
    }
    assert_int_equal(got[2].arg[1], 1);
    const weft_op_t *add;
    assert_int_equal(weft_elemwise_op(g, WEFT_ELEMWISE_ADD, -1, WEFT_BOOL, &add), WEFT_OK);
    assert_false(weft_composite_op_info(add, NULL, NULL, NULL, NULL));
    assert_false(weft_composite_op_info(NULL, NULL, NULL, NULL, NULL));
}

static void expect_op_error(weft_graph_t *g, size_t n_in, size_t n_steps,
                            const weft_composite_step_t *prog, int inplace, const char *msg)
{
    const weft_op_t *op = (const weft_op_t *)1;
    assert_int_equal(weft_composite_op(g, n_in, n_steps, prog, inplace, &op), WEFT_EINVAL);
    assert_null(op);
    assert_string_equal(weft_graph_last_error(g), msg);
}

static void test_composite_bad_programs_are_refused_naming_the_step(void **state)
{
    weft_graph_t *g = *state;
    const weft_composite_step_t fwd[] = {S(ADD, 0, 2)};
    expect_op_error(g, 2, 1, fwd, -1, "Composite: step 0 (Add): argument 1 is register 2, "
                                      "neither an input nor an earlier step");
    const weft_composite_step_t cast[] = {S(CAST, 0, 0)};
    expect_op_error(g, 1, 1, cast, -1, "Composite: step 0: kind 13 is not an arithmetic "
                                       "kind of one dtype");
    const weft_composite_step_t cmp[] = {S(LT, 0, 0)};
    expect_op_error(g, 1, 1, cmp, -1, "Composite: step 0: kind 22 is not an arithmetic "
                                      "kind of one dtype");
    const weft_composite_step_t unused[] = {S(EXP, 0, 0)};
    expect_op_error(g, 2, 1, unused, -1, "Composite: input 1 is never used");
    expect_op_error(g, 1, 1, unused, 1, "Composite: in-place input 1 outside [-1, 1)");
    expect_op_error(g, 0, 1, unused, -1, "Composite: 0 inputs and 1 steps (1..7 and 1..16)");
    weft_composite_step_t many[17];
    for (int s = 0; s < 17; s++) many[s] = (weft_composite_step_t)S(NEG, (uint8_t)s, 0);
    expect_op_error(g, 1, 17, many, -1, "Composite: 1 inputs and 17 steps (1..7 and 1..16)");
    assert_int_equal(weft_composite_op(g, 1, 1, NULL, -1, NULL), WEFT_EINVAL);
    assert_int_equal(weft_composite_op(NULL, 1, 1, unused, -1, NULL), WEFT_EINVAL);
}

/* make_node errors carry the creation site: "apply of Composite at FILE:LINE: msg". */
static void expect_node_error(weft_graph_t *g, const char *msg)
{
    const char *e = weft_graph_last_error(g);
    assert_non_null(strstr(e, "apply of Composite at "));
    assert_non_null(strstr(e, "test_composite.c:"));
    assert_string_equal(strstr(e, ": Composite") + 2, msg);
}

static void test_composite_bad_inputs_are_refused(void **state)
{
    weft_graph_t *g = *state;
    int64_t s3[1] = {3}, s4[1] = {4};
    weft_var_t *a = fx_var(g, WEFT_FLOAT64, 1, s3), *f32 = fx_var(g, WEFT_FLOAT32, 1, s3);
    weft_var_t *i64 = fx_var(g, WEFT_INT64, 1, s3), *c4 = fx_var(g, WEFT_FLOAT64, 1, s4), *out;
    const weft_composite_step_t add[] = {S(ADD, 0, 1)}, ex[] = {S(EXP, 0, 0)};
    weft_var_t *mixed[2] = {a, f32}, *wrong_len[2] = {a, c4};
    fx_expect_error(g, out = weft_composite(g, 2, mixed, 1, add), WEFT_ETYPE, "");
    expect_node_error(g, "Composite: input 1 is float32, input 0 float64: every input has the "
                         "output's dtype");
    fx_expect_error(g, out = weft_composite(g, 1, &i64, 1, ex), WEFT_ETYPE, "");
    expect_node_error(g, "Composite: step 0 (Exp) is not defined for int64");
    fx_expect_error(g, out = weft_composite(g, 2, wrong_len, 1, add), WEFT_ESHAPE, "");
    assert_null(out = weft_composite(g, 1, &a, 1, add));
    assert_int_equal(weft_graph_error(g), WEFT_EINVAL); /* reads input 1 */
    weft_graph_clear_error(g);
    /* in place into a broadcast input: its type differs from the output's */
    int64_t s1[1] = {1};
    weft_var_t *one = fx_var(g, WEFT_FLOAT64, 1, s1), *bc[2] = {one, a};
    const weft_op_t *op;
    assert_int_equal(weft_composite_op(g, 2, 1, add, 0, &op), WEFT_OK);
    fx_expect_error(g, out = weft_op_call(g, op, 2, bc), WEFT_ETYPE, "");
    expect_node_error(g, "Composite{inplace=0}: input 0's type differs from the output type");
}

/* A run-time length that does not broadcast is the node's error. */
static void test_composite_run_time_shape_mismatch_fails(void **state)
{
    weft_graph_t *g = *state;
    int64_t unk[1] = {-1};
    weft_var_t *a = fx_var(g, WEFT_FLOAT64, 1, unk), *b = fx_var(g, WEFT_FLOAT64, 1, unk), *out;
    const weft_composite_step_t add[] = {S(ADD, 0, 1), S(SQR, 2, 0)};
    weft_var_t *in[2] = {a, b};
    assert_non_null(out = weft_composite(g, 2, in, 2, add));
    int64_t s3[1] = {3}, s4[1] = {4};
    weft_tensor_t *va = filled(1, s3, 1), *vb = filled(1, s4, 2), *r = NULL;
    weft_tensor_t *vals[2] = {va, vb};
    assert_int_equal(weft_eval(g, 2, in, vals, 1, &out, &r), WEFT_ESHAPE);
    assert_non_null(strstr(weft_graph_last_error(g), "Composite"));
    assert_non_null(strstr(weft_graph_last_error(g), "input 1 has length 4 in dimension 0"));
    assert_null(r);
    weft_tensor_release(va);
    weft_tensor_release(vb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_composite_equals_unfused_expression, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(test_composite_strided_float32_and_in_place, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(test_composite_op_info_round_trips, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(test_composite_bad_programs_are_refused_naming_the_step,
                                        fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_composite_bad_inputs_are_refused, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(test_composite_run_time_shape_mismatch_fails, fx_setup,
                                        fx_teardown),
    };
    return cmocka_run_group_tests_name("composite", tests, NULL, NULL);
}
