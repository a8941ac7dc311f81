/* The symbolic-shape canonicalizations (docs/shapes.md §3; PyTensor's
 * local_shape_to_shape_i, constant-folded Shape_i and the constant-shape
 * forms of Reshape and Alloc). Each replaces a node by one that knows more
 * at compile time; none changes a value, so none is fast_math. */
#include "graph/ctor_int.h"
#include "rewrite_int.h"
#include "weft/array_ops.h"
#include "weft/shape_ops.h"
#include "weft/symshape.h"

static weft_status_t give(weft_rewrite_result_t *res, const weft_apply_t *node, weft_var_t *v)
{
    weft_var_t *old = weft_apply_output(node, 0);
    if (!weft__can_replace(old, v)) return WEFT_OK;
    return weft_rewrite_result_replace(res, old, v);
}

/* Integer element i of constant v (any integer dtype), as graph constants
 * hold it. */
static bool const_int(const weft_var_t *v, int64_t i, int64_t *out)
{
    const void *data;
    size_t nbytes;
    if (!weft_var_is_constant(v) || weft_constant_data(v, &data, &nbytes) != WEFT_OK) return false;
    weft_dtype_t dt = weft_type_dtype(weft_var_type(v));
    size_t es = weft_dtype_size(dt);
    if ((size_t)(i + 1) * es > nbytes) return false;
    const char *p = (const char *)data + (size_t)i * es;
    switch (dt) {
    case WEFT_INT8: *out = *(const int8_t *)p; return true;
    case WEFT_INT16: *out = *(const int16_t *)p; return true;
    case WEFT_INT32: *out = *(const int32_t *)p; return true;
    case WEFT_INT64: *out = *(const int64_t *)p; return true;
    case WEFT_UINT8: *out = *(const uint8_t *)p; return true;
    case WEFT_UINT16: *out = *(const uint16_t *)p; return true;
    case WEFT_UINT32: *out = *(const uint32_t *)p; return true;
    case WEFT_UINT64: *out = (int64_t)*(const uint64_t *)p; return *out >= 0;
    default: return false;
    }
}

/* Shape_i{i}(x) with x's length i static -> that length; Shape(x) with x
 * fully static -> the constant vector. */
static weft_status_t local_shape_static(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                        weft_rewrite_result_t *res)
{
    (void)user;
    int i;
    if (!weft_shape_op_info(weft_apply_op(node), &i)) return WEFT_OK;
    const weft_type_t *xt = weft_var_type(weft_apply_input(node, 0));
    int64_t len[WEFT_MAX_NDIM], n = i < 0 ? weft_type_ndim(xt) : 1;
    for (int d = 0; d < n; d++)
        if ((len[d] = weft_type_dim(xt, i < 0 ? d : i)) == WEFT_DIM_UNKNOWN) return WEFT_OK;
    weft_graph_t *g = weft_fgraph_graph(fg);
    const weft_type_t *ct;
    weft_status_t st = weft_type_tensor(g, WEFT_INT64, i < 0 ? 1 : 0, &n, &ct);
    const char *file;
    int line;
    weft_apply_trace(node, &file, &line);
    weft_var_t *c = NULL;
    if (st == WEFT_OK)
        st = weft__got(g, c = weft_constant_create_at(g, ct, len, (size_t)n * sizeof *len, file,
                                                      line));
    return st == WEFT_OK ? give(res, node, c) : st;
}

/* Shape(x)[i] (a Subtensor of one index) -> Shape_i{i}(x). */
static weft_status_t local_shape_to_shape_i(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                            weft_rewrite_result_t *res)
{
    (void)user;
    int64_t idx;
    int which;
    if (!weft_subtensor_index_op_info(weft_apply_op(node), &idx)) return WEFT_OK;
    weft_apply_t *sh = weft_var_owner(weft_apply_input(node, 0));
    if (!sh || !weft_shape_op_info(weft_apply_op(sh), &which) || which >= 0) return WEFT_OK;
    weft_var_t *x = weft_apply_input(sh, 0), *r;
    int nd = weft_type_ndim(weft_var_type(x));
    if (idx < -nd || idx >= nd) return WEFT_OK; /* the Subtensor reports it at run time */
    weft_graph_t *g = weft_fgraph_graph(fg);
    const char *file;
    int line;
    weft_apply_trace(node, &file, &line);
    weft_status_t st = weft__got(g, r = weft_shape_i_at(g, x, (int)idx, file, line));
    return st == WEFT_OK ? give(res, node, r) : st;
}

/* Reshape(x, c) with a constant shape c -> Reshape{c}(x), the static form;
 * Alloc(v, c0, .., cn) with constant sizes -> Alloc{c0..cn}(v). */
static weft_status_t local_constant_shape(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                          weft_rewrite_result_t *res)
{
    (void)user;
    const weft_op_t *op = weft_apply_op(node);
    int n;
    bool alloc = weft_alloc_sym_op_info(op, &n);
    if (!alloc && !weft_reshape_sym_op_info(op)) return WEFT_OK;
    if (!alloc) n = (int)weft_type_dim(weft_var_type(weft_apply_input(node, 1)), 0);
    int64_t c[WEFT_MAX_NDIM];
    for (int d = 0; d < n; d++)
        if (!const_int(weft_apply_input(node, alloc ? (size_t)d + 1 : 1), alloc ? 0 : d, &c[d]))
            return WEFT_OK;
    weft_graph_t *g = weft_fgraph_graph(fg);
    const char *file;
    int line;
    weft_apply_trace(node, &file, &line);
    weft_var_t *x = weft_apply_input(node, 0), *r;
    weft__kept_error_t saved; /* a speculative build: its failure is not the user's */
    weft__graph_error_save(g, &saved);
    r = alloc ? weft_broadcast_to_at(g, x, n, c, file, line)
              : weft_reshape_at(g, x, n, c, file, line);
    weft__graph_error_restore(g, &saved);
    return r ? give(res, node, r) : WEFT_OK;
}

const weft__builtin_node_t weft__shape_nodes[] = {
    {"local_shape_static", local_shape_static, {"Shape", "Shape_i", NULL}},
    {"local_shape_to_shape_i", local_shape_to_shape_i, {"Subtensor", NULL}},
    {"local_constant_shape", local_constant_shape, {"Reshape", "Alloc", NULL}},
};
const size_t weft__n_shape_nodes = sizeof weft__shape_nodes / sizeof weft__shape_nodes[0];
