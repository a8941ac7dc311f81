/* AxisIndex{mode, a, b}: the int64 source indices along one axis of length
 * n (input 0, an integer 0-d size) that np.roll, np.pad (edge, reflect),
 * np.tile and np.repeat read; Take along the axis then moves the data
 * (split over the pool by Take), and Take's gradient (an accumulating
 * scatter) sums the repeated slices. Used when the axis has no static
 * length (symshape_ops.c); the index vector is O(output length) and built
 * sequentially (a repeat's positions are a running sum).
 * Modes (docs/shapes.md §4):
 *   ROLL       a = shift        out[i] = (i - a) mod n, length n
 *   EDGE       a, b = widths    out[i] = clip(i - a, 0, n - 1), length a + n + b
 *   REFLECT    a, b = widths    NumPy's reflection (repeated for widths >= n)
 *   TILE       a = reps         out[i] = i mod n, length a * n
 *   REPEAT     a = repeats      out[i] = i / a, length a * n
 *   REPEAT_VEC (input 1 = repeats, length n or 1) index j repeated reps[j]
 * Not differentiable (integer output). */
#include <stdio.h>
#include <string.h>

#include "graph/ctor_int.h"
#include "ops_int.h"
#include "symshape_int.h"
#include "weft/json_props.h"
#include "weft/kernel.h"

static const char *const mode_names[WEFT__AXIS_INDEX_MODES] = {"roll", "edge", "reflect",
                                                               "tile", "repeat", "repeat_vec"};

/* Repeat count j: from the run-time tensor t, else from the constants arr. */
static int64_t rep_at(const int64_t *arr, const weft_tensor_t *t, int64_t j)
{
    return t ? weft__tensor_int_at(t, j) : arr[j];
}

/* The output length for axis length n (and, for REPEAT_VEC, the n_reps
 * repeat counts of t or arr), or -1 with *why set. */
static int64_t out_len(const weft__axis_index_props_t *p, int64_t n, const int64_t *arr,
                       const weft_tensor_t *t, int64_t n_reps, const char **why)
{
    int64_t len = 0;
    switch ((weft__axis_index_mode_t)p->mode) {
    case WEFT__AXIS_ROLL: return n;
    case WEFT__AXIS_EDGE:
    case WEFT__AXIS_REFLECT:
        if (n == 0 && p->a + p->b > 0) {
            *why = "an empty axis cannot be padded in this mode";
            return -1;
        }
        return __builtin_add_overflow(n, p->a + p->b, &len) ? (*why = "too long", -1) : len;
    case WEFT__AXIS_TILE:
    case WEFT__AXIS_REPEAT:
        return __builtin_mul_overflow(n, p->a, &len) ? (*why = "too long", -1) : len;
    default:
        if (n_reps != n && n_reps != 1) {
            *why = "the repeats' length is neither the axis length nor 1";
            return -1;
        }
        for (int64_t j = 0; j < n; j++) {
            int64_t r = rep_at(arr, t, n_reps == 1 ? 0 : j);
            if (r < 0) {
                *why = "a repeat count is negative";
                return -1;
            }
            if (__builtin_add_overflow(len, r, &len)) {
                *why = "too long";
                return -1;
            }
        }
        return len;
    }
}

/* NumPy's reflect: mirror without repeating the edge, period 2 (n - 1). */
static int64_t reflect(int64_t i, int64_t n)
{
    if (n == 1) return 0;
    int64_t period = 2 * (n - 1), j = (i < 0 ? -i : i) % period;
    return j >= n ? period - j : j;
}

static void fill(const weft__axis_index_props_t *p, int64_t n, const weft_tensor_t *reps,
                 int64_t len, int64_t *out)
{
    int64_t k = 0;
    if (len == 0) return; /* n may be 0: no modulo by it */
    switch ((weft__axis_index_mode_t)p->mode) {
    case WEFT__AXIS_ROLL: {
        int64_t s = (p->a % n + n) % n; /* no overflow for any shift */
        for (int64_t i = 0; i < len; i++) out[i] = (i - s + n) % n;
        break;
    }
    case WEFT__AXIS_EDGE:
        for (int64_t i = 0; i < len; i++)
            out[i] = i < p->a ? 0 : i - p->a >= n ? n - 1 : i - p->a;
        break;
    case WEFT__AXIS_REFLECT:
        for (int64_t i = 0; i < len; i++) out[i] = reflect(i - p->a, n);
        break;
    case WEFT__AXIS_TILE:
        for (int64_t i = 0; i < len; i++) out[i] = i % n;
        break;
    case WEFT__AXIS_REPEAT:
        for (int64_t i = 0; i < len; i++) out[i] = i / p->a;
        break;
    default: {
        int64_t n_reps = weft_tensor_dim(reps, 0);
        for (int64_t j = 0; j < n; j++)
            for (int64_t r = weft__tensor_int_at(reps, n_reps == 1 ? 0 : j); r > 0; r--)
                out[k++] = j;
    }
    }
}

static weft_status_t ai_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                  weft_var_t *const *inputs, size_t *n_out,
                                  const weft_type_t **out_types)
{
    const weft__axis_index_props_t *p = weft_op_props(op);
    bool vec = p->mode == WEFT__AXIS_REPEAT_VEC;
    if (n_in != (vec ? 2u : 1u))
        return weft_graph_set_error(g, WEFT_EINVAL, "AxisIndex: takes %d inputs, got %zu",
                                    vec ? 2 : 1, n_in);
    const weft_type_t *nt = weft_var_type(inputs[0]);
    if (weft_type_kind(nt) != WEFT_TYPE_TENSOR || weft_type_ndim(nt) != 0 ||
        !weft__dtype_is_int(weft_type_dtype(nt)))
        return weft_graph_set_error(g, WEFT_ETYPE, "AxisIndex: input 0 (the axis length) is not "
                                    "an integer 0-d tensor");
    const weft_type_t *rt = vec ? weft_var_type(inputs[1]) : NULL;
    if (vec && (weft_type_kind(rt) != WEFT_TYPE_TENSOR || weft_type_ndim(rt) != 1 ||
                !weft__dtype_is_int(weft_type_dtype(rt))))
        return weft_graph_set_error(g, WEFT_ETYPE, "AxisIndex: input 1 (the repeats) is not a "
                                    "1-d integer tensor");
    int64_t n = weft__size_static(inputs[0]), len = WEFT_DIM_UNKNOWN, reps[64];
    int64_t n_reps = vec ? weft_type_dim(rt, 0) : 0;
    bool known = n >= 0 && (!vec || (n_reps >= 0 && n_reps <= 64));
    for (int64_t j = 0; known && vec && j < n_reps; j++)
        known = weft__const_int_at(inputs[1], j, &reps[j]);
    const char *why = NULL;
    if (known && (len = out_len(p, n, reps, NULL, n_reps, &why)) < 0)
        return weft_graph_set_error(g, WEFT_ESHAPE, "AxisIndex{%s}: axis of length %lld: %s",
                                    mode_names[p->mode], (long long)n, why);
    *n_out = 1;
    return weft_type_tensor(g, WEFT_INT64, 1, &len, &out_types[0]);
}

static weft_status_t ai_perform(const weft_apply_t *node, weft_tensor_t *const *inputs,
                                weft_tensor_t **outputs, weft_kernel_ctx_t *ctx)
{
    const weft__axis_index_props_t *p = weft_op_props(weft_apply_op(node));
    bool vec = p->mode == WEFT__AXIS_REPEAT_VEC;
    int64_t n = weft__tensor_int_at(inputs[0], 0), len = -1;
    const char *why = n < 0 ? "negative" : NULL;
    if (!why) len = out_len(p, n, NULL, vec ? inputs[1] : NULL,
                            vec ? weft_tensor_dim(inputs[1], 0) : 0, &why);
    if (why)
        return weft_kernel_error(ctx, WEFT_ESHAPE, "AxisIndex{%s}: axis of length %lld: %s",
                                 mode_names[p->mode], (long long)n, why);
    weft_status_t st = weft_kernel_alloc_output(ctx, &outputs[0], WEFT_INT64, 1, &len);
    if (st == WEFT_OK) fill(p, n, vec ? inputs[1] : NULL, len, weft_tensor_data(outputs[0]));
    return st;
}

static int ai_print(const void *props, char *buf, size_t cap)
{
    const weft__axis_index_props_t *p = props;
    return snprintf(buf, cap, "mode=%s, a=%lld, b=%lld", mode_names[p->mode], (long long)p->a,
                    (long long)p->b);
}

static weft_status_t ai_to_json(const weft_op_t *op, weft_json_props_t *out)
{
    const weft__axis_index_props_t *p = weft_op_props(op);
    weft_status_t st = weft_json_props_put_string(out, "mode", mode_names[p->mode]);
    if (st == WEFT_OK) st = weft_json_props_put_int(out, "a", p->a);
    return st == WEFT_OK ? weft_json_props_put_int(out, "b", p->b) : st;
}

static weft_status_t ai_from_json(weft_graph_t *g, const weft_op_class_t *cls,
                                  const weft_json_props_t *in, const weft_op_t **out)
{
    weft__axis_index_props_t p;
    memset(&p, 0, sizeof p);
    const char *m = NULL;
    weft_status_t st = weft_json_props_get_string(in, "mode", &m);
    if (st == WEFT_OK) st = weft_json_props_get_int(in, "a", &p.a);
    if (st == WEFT_OK) st = weft_json_props_get_int(in, "b", &p.b);
    if (st != WEFT_OK) return st;
    p.mode = -1;
    for (int k = 0; k < WEFT__AXIS_INDEX_MODES; k++)
        if (strcmp(m, mode_names[k]) == 0) p.mode = k;
    const char *why = weft__axis_index_check(&p);
    if (why) return weft_json_props_error(in, WEFT_EINVAL, "%s", why);
    return weft_op_create(g, cls, &p, out);
}

const char *weft__axis_index_check(const weft__axis_index_props_t *p)
{
    if (p->mode < 0 || p->mode >= WEFT__AXIS_INDEX_MODES) return "mode: unknown";
    if (p->mode != WEFT__AXIS_ROLL && (p->a < 0 || p->b < 0)) return "a, b: negative";
    if ((p->mode == WEFT__AXIS_REPEAT || p->mode == WEFT__AXIS_TILE) && p->b != 0)
        return "b: not used by this mode (0)";
    return NULL;
}

const weft_op_class_t weft__axis_index_class = {
    .size = sizeof(weft_op_class_t),
    .name = "AxisIndex",
    .props_size = sizeof(weft__axis_index_props_t),
    .props_print = ai_print,
    .props_to_json = ai_to_json,
    .props_from_json = ai_from_json,
    .make_node = ai_make_node,
    .perform = ai_perform,
};
