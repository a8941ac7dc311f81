/* Einsum{subscripts, path}: np.einsum as one node (weft/einsum.h). Its type
 * inference parses the subscripts against the inputs' ranks; the direct
 * kernel is einsum_kernel.c, the lowering einsum_lower.c, the gradient
 * einsum_grad.c. The constructor casts the operands to one dtype and picks
 * the path (einsum_path.c) from their static lengths. */
#include <stdio.h>
#include <string.h>

#include "einsum_int.h"
#include "graph/ctor_int.h"
#include "weft/elemwise.h"
#include "weft/json_props.h"

void weft__ein_describe(const weft_var_t *v, char *buf, size_t cap)
{
    char vb[200];
    const char *file = NULL;
    int line = 0;
    weft_var_print(v, vb, sizeof vb);
    weft_var_trace(v, &file, &line);
    snprintf(buf, cap, "%s (built at %s:%d)", vb, file ? file : "?", line);
}

static int einsum_props_print(const void *props, char *buf, size_t cap)
{
    const weft__einsum_props_t *p = props;
    int n = snprintf(buf, cap, "subscripts=%s, path=(", p->subscripts);
    for (int k = 0; k < p->n_path; k++) {
        size_t at = (size_t)n < cap ? (size_t)n : cap;
        n += snprintf(buf + at, cap - at, k ? ",(%d,%d)" : "(%d,%d)", (int)p->path[2 * k],
                      (int)p->path[2 * k + 1]);
    }
    size_t at = (size_t)n < cap ? (size_t)n : cap;
    return n + snprintf(buf + at, cap - at, ")");
}

static weft_status_t einsum_to_json(const weft_op_t *op, weft_json_props_t *p)
{
    const weft__einsum_props_t *e = weft_op_props(op);
    int64_t path[2 * (WEFT_EINSUM_MAX_OPERANDS - 1)];
    for (int k = 0; k < 2 * e->n_path; k++) {
        path[k] = e->path[k];
    }
    weft_status_t st = weft_json_props_put_string(p, "subscripts", e->subscripts);
    if (st == WEFT_OK) {
        st = weft_json_props_put_int(p, "n_operands", e->n_operands);
    }
    return st == WEFT_OK ? weft_json_props_put_int_array(p, "path", path, 2 * (size_t)e->n_path)
                         : st;
}

/* A path of n - 1 pairs (i, j), i < j < operands left at that step. */
static bool path_valid(const int32_t *path, int n_path, int n)
{
    if (n_path != n - 1) {
        return false;
    }
    for (int k = 0; k < n_path; k++) {
        if (path[2 * k] < 0 || path[2 * k] >= path[2 * k + 1] || path[2 * k + 1] >= n - k) {
            return false;
        }
    }
    return true;
}

static weft_status_t einsum_from_json(weft_graph_t *g, const weft_op_class_t *cls,
                                      const weft_json_props_t *p, const weft_op_t **out)
{
    weft__einsum_props_t e;
    memset(&e, 0, sizeof e);
    const char *s = NULL;
    int64_t n_ops = 0, path[2 * WEFT_EINSUM_MAX_OPERANDS];
    size_t n = 0;
    weft_status_t st = weft_json_props_get_string(p, "subscripts", &s);
    if (st == WEFT_OK) {
        st = weft_json_props_get_int(p, "n_operands", &n_ops);
    }
    if (st == WEFT_OK) {
        st = weft_json_props_get_int_array(p, "path", path, 2 * WEFT_EINSUM_MAX_OPERANDS, &n);
    }
    if (st != WEFT_OK) {
        return st;
    }
    if (strlen(s) >= sizeof e.subscripts || n_ops < 1 || n_ops > WEFT_EINSUM_MAX_OPERANDS ||
        n % 2) {
        return weft_json_props_error(p, WEFT_EPARSE, "subscripts longer than %d characters, "
                                     "n_operands outside [1, %d] or an odd path length",
                                     WEFT_EINSUM_MAX_SUBSCRIPTS - 1, WEFT_EINSUM_MAX_OPERANDS);
    }
    memcpy(e.subscripts, s, strlen(s));
    e.n_operands = (int32_t)n_ops;
    e.n_path = (int32_t)(n / 2);
    for (size_t k = 0; k < n; k++) {
        e.path[k] = path[k] < 0 || path[k] > WEFT_EINSUM_MAX_OPERANDS ? -1 : (int32_t)path[k];
    }
    if (!path_valid(e.path, e.n_path, e.n_operands)) {
        return weft_json_props_error(p, WEFT_EPARSE, "path: not %d valid pairs for %d operands",
                                     e.n_operands - 1, e.n_operands);
    }
    return weft_op_create(g, cls, &e, out);
}

/* The spec and label lengths of the inputs' static types; messages name the
 * operands. */
static weft_status_t spec_of(weft_graph_t *g, const char *subscripts, size_t n,
                             weft_var_t *const *in, weft__ein_spec_t *spec, int64_t *len)
{
    int nd[WEFT_EINSUM_MAX_OPERANDS];
    int64_t dims[WEFT_EINSUM_MAX_OPERANDS][WEFT_MAX_NDIM];
    const int64_t *dp[WEFT_EINSUM_MAX_OPERANDS];
    char msg[300], vb[300];
    for (size_t i = 0; i < n; i++) {
        const weft_type_t *t = weft_var_type(in[i]);
        nd[i] = weft_type_ndim(t);
        for (int a = 0; a < nd[i]; a++) {
            dims[i][a] = weft_type_dim(t, a);
        }
        dp[i] = dims[i];
    }
    if (weft__ein_parse(subscripts, (int)n, nd, spec, msg, sizeof msg) != WEFT_OK) {
        int k = -1;
        if (sscanf(msg, "operand %d", &k) == 1 && k >= 0 && (size_t)k < n) {
            weft__ein_describe(in[k], vb, sizeof vb);
            return weft_graph_set_error(g, WEFT_EINVAL, "einsum '%s': %s: %s", subscripts, msg,
                                        vb);
        }
        return weft_graph_set_error(g, WEFT_EINVAL, "einsum '%s': %s", subscripts, msg);
    }
    int bad = 0, axis = 0;
    if (!weft__ein_lengths(spec, dp, len, &bad, &axis)) {
        weft__ein_describe(in[bad], vb, sizeof vb);
        int l = spec->lab[bad][axis];
        return weft_graph_set_error(g, WEFT_ESHAPE, "einsum '%s': operand %d %s has length %lld "
                                    "on axis %d, which does not match the other lengths of its "
                                    "subscript %c%s", subscripts, bad, vb,
                                    (long long)dims[bad][axis], axis,
                                    l < 26 ? 'A' + l : l < 52 ? 'a' + l - 26 : '.',
                                    l < 52 ? "" : " (an ellipsis axis)");
    }
    return WEFT_OK;
}

static weft_status_t einsum_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                      weft_var_t *const *in, size_t *n_out,
                                      const weft_type_t **out_types)
{
    const weft__einsum_props_t *p = weft_op_props(op);
    if (n_in != (size_t)p->n_operands) {
        return weft_graph_set_error(g, WEFT_EINVAL, "Einsum '%s': takes %d operands, got %zu",
                                    p->subscripts, (int)p->n_operands, n_in);
    }
    weft_dtype_t dt = weft_type_dtype(weft_var_type(in[0]));
    for (size_t i = 0; i < n_in; i++) {
        const weft_type_t *t = weft_var_type(in[i]);
        if (weft_type_kind(t) != WEFT_TYPE_TENSOR || weft_type_dtype(t) != dt) {
            char vb[300];
            weft__ein_describe(in[i], vb, sizeof vb);
            return weft_graph_set_error(g, WEFT_ETYPE, "Einsum '%s': operand %zu %s is not a "
                                        "tensor of operand 0's dtype %s", p->subscripts, i, vb,
                                        weft_dtype_name(dt));
        }
    }
    weft__ein_spec_t spec;
    int64_t len[WEFT__EIN_LABELS], shape[WEFT_MAX_NDIM];
    weft_status_t st = spec_of(g, p->subscripts, n_in, in, &spec, len);
    if (st != WEFT_OK) {
        return st;
    }
    for (int k = 0; k < spec.n_out; k++) {
        shape[k] = len[spec.out[k]];
    }
    *n_out = 1;
    return weft_type_tensor(g, dt, spec.n_out, shape, &out_types[0]);
}

weft_status_t weft__einsum_grad(weft_graph_t *g, const weft_apply_t *node,
                                weft_var_t *const *output_grads, weft_var_t **input_grads);

const weft_op_class_t weft__einsum_class = {
    .size = sizeof(weft_op_class_t),
    .name = "Einsum",
    .props_size = sizeof(weft__einsum_props_t),
    .props_print = einsum_props_print,
    .props_to_json = einsum_to_json,
    .props_from_json = einsum_from_json,
    .make_node = einsum_make_node,
    .perform = weft__einsum_perform,
    .grad = weft__einsum_grad,
};

/* The operands checked (a NULL one: the kept error) and cast to their
 * promoted dtype into cast[]. */
static weft_status_t promote(weft_graph_t *g, size_t n, weft_var_t *const *ops,
                             const char *file, int line, weft_var_t **cast)
{
    weft_dtype_t dt = WEFT_BOOL;
    for (size_t i = 0; i < n; i++) {
        if (!ops[i]) {
            weft_status_t kept = weft_graph_error(g);
            return kept != WEFT_OK ? kept
                                   : weft_graph_set_error(g, WEFT_EINVAL, "einsum (at %s:%d): "
                                                          "operand %zu is NULL", file, line, i);
        }
        const weft_type_t *t = weft_var_type(ops[i]);
        if (weft_type_kind(t) != WEFT_TYPE_TENSOR) {
            char vb[300];
            weft__ein_describe(ops[i], vb, sizeof vb);
            return weft_graph_set_error(g, WEFT_ETYPE, "einsum (at %s:%d): operand %zu %s is "
                                        "not a tensor", file, line, i, vb);
        }
        dt = i == 0 ? weft_type_dtype(t) : weft_dtype_promote(dt, weft_type_dtype(t));
    }
    for (size_t i = 0; i < n; i++) {
        cast[i] = ops[i];
        if (weft_type_dtype(weft_var_type(ops[i])) != dt) {
            weft_status_t st = weft__got(g, cast[i] = weft_cast_at(g, ops[i], dt, file, line));
            if (st != WEFT_OK) {
                return st;
            }
        }
    }
    return WEFT_OK;
}

static weft_status_t einsum_impl(weft_graph_t *g, const char *subscripts, size_t n,
                                 weft_var_t *const *operands, const char *file, int line,
                                 weft_var_t **out)
{
    if (!subscripts || !operands || n == 0 || n > WEFT_EINSUM_MAX_OPERANDS) {
        return weft_graph_set_error(g, WEFT_EINVAL, "einsum (at %s:%d): NULL subscripts or "
                                    "operands, or %zu operands (1 to %d)", file, line, n,
                                    WEFT_EINSUM_MAX_OPERANDS);
    }
    if (strlen(subscripts) >= WEFT_EINSUM_MAX_SUBSCRIPTS) {
        return weft_graph_set_error(g, WEFT_EINVAL, "einsum (at %s:%d): subscripts longer than "
                                    "%d characters", file, line, WEFT_EINSUM_MAX_SUBSCRIPTS - 1);
    }
    weft_var_t *cast[WEFT_EINSUM_MAX_OPERANDS];
    weft__ein_spec_t spec;
    int64_t len[WEFT__EIN_LABELS];
    weft__einsum_props_t p;
    memset(&p, 0, sizeof p);
    weft_status_t st = promote(g, n, operands, file, line, cast);
    if (st == WEFT_OK) {
        st = spec_of(g, subscripts, n, cast, &spec, len);
    }
    if (st != WEFT_OK) {
        return st;
    }
    memcpy(p.subscripts, subscripts, strlen(subscripts));
    p.n_operands = (int32_t)n;
    p.n_path = (int32_t)n - 1;
    weft__ein_path(&spec, len, p.path);
    const weft_op_t *op = NULL;
    st = weft_op_create(g, &weft__einsum_class, &p, &op);
    return st == WEFT_OK ? weft__got(g, *out = weft_op_call_at(g, op, n, cast, file, line)) : st;
}

weft_var_t *weft_einsum_at(weft_graph_t *g, const char *subscripts, size_t n,
                           weft_var_t *const *operands, const char *file, int line)
{
    weft_var_t *out = NULL;
    if (!g) {
        return NULL;
    }
    weft__ctor_begin(g);
    weft_status_t st = einsum_impl(g, subscripts, n, operands, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_einsum", file, line);
}

weft_status_t weft_einsum_op_info(const weft_op_t *op, const char **subscripts,
                                  size_t *n_operands, int32_t *path, size_t *n_pairs)
{
    if (!op || !subscripts || !n_operands || !path || !n_pairs) {
        return WEFT_EINVAL;
    }
    if (weft_op_class(op) != &weft__einsum_class) {
        return WEFT_ETYPE;
    }
    const weft__einsum_props_t *p = weft_op_props(op);
    *subscripts = p->subscripts;
    *n_operands = (size_t)p->n_operands;
    *n_pairs = (size_t)p->n_path;
    memcpy(path, p->path, 2 * (size_t)p->n_path * sizeof *path);
    return WEFT_OK;
}
