/* IfElse{n, as_view}(cond, then_0..then_{n-1}, else_0..else_{n-1}): output i
 * is then_i when cond is nonzero, else else_i (weft/ifelse.h,
 * docs/control-flow.md §1). The op itself is eager about nothing: it reads
 * only the condition and the branch taken, so the runtimes (lib/compile's
 * guards, lib/eval) may leave the other branch's inputs unset.
 * The constructors build it with as_view off: both sides are copied, as
 * PyTensor's ifelse(). The ifelse_inplace rewrite (fast_run, inplace;
 * PyTensor's cond_make_inplace) turns as_view on where the DestroyHandler
 * accepts it: the then side is then returned as a view (view_map
 * {i: 1 + i}). The else side is always a fresh copy, in PyTensor too: an
 * output may view only one input (docs/destroy.md D0), so a view of else_i
 * would be an alias the DestroyHandler, the memory plan and the kept slots
 * cannot see. */
#include <stdio.h>
#include <string.h>

#include "graph/ctor_int.h"
#include "graph/site.h"
#include "ifelse_int.h"
#include "props_fields_int.h"
#include "tensor/kernel_int.h" /* weft_kernel_ctx_t.own_cell */
#include "weft/elemwise.h"
#include "weft/ifelse.h"
#include "weft/kernel.h"
#include "weft/tensor.h"

static const weft__props_fields_t ifelse_fields = {
    sizeof(weft__ifelse_props_t),
    {WEFT__PROPS_FIELD("n", WEFT__FIELD_U32, weft__ifelse_props_t, n),
     WEFT__PROPS_FIELD("as_view", WEFT__FIELD_I32_BOOL, weft__ifelse_props_t, as_view)}};
WEFT__PROPS_FIELDS_HOOKS(ifelse_props, ifelse_fields)

static int ifelse_props_print(const void *props, char *buf, size_t cap)
{
    const weft__ifelse_props_t *p = props;
    return snprintf(buf, cap, "n=%u%s", (unsigned)p->n, p->as_view ? ", as_view" : "");
}

/* "then 0 (x, created at f.c:3) float64[3]" for messages. */
static void arg_text(const weft_var_t *v, const char *side, size_t i, char *buf, size_t cap)
{
    char name[96], ty[96], sb[WEFT__SITE_CAP];
    const char *file = "?";
    int line = 0;
    weft_var_print(v, name, sizeof name);
    weft_type_print(weft_var_type(v), ty, sizeof ty);
    weft_var_trace(v, &file, &line);
    snprintf(buf, cap, "%s %zu (%s, created at %s) %s", side, i, name,
             weft__site_str(sb, sizeof sb, file, line), ty);
}

static weft_status_t check_cond(weft_graph_t *g, weft_var_t *c)
{
    const weft_type_t *t = weft_var_type(c);
    weft_type_kind_t k = weft_type_kind(t);
    if (k == WEFT_TYPE_TENSOR && weft_type_ndim(t) == 0 &&
        weft_dtype_kind(weft_type_dtype(t)) != WEFT_KIND_COMPLEX)
        return WEFT_OK;
    char a[320];
    arg_text(c, "condition", 0, a, sizeof a);
    return weft_graph_set_error(g, WEFT_ETYPE,
                                "IfElse: the %s must be a 0-d bool, integer or float tensor", a);
}

/* Output type of pair i: the common dtype and rank, static lengths where
 * both sides agree (PyTensor unifies broadcast patterns so). */
static weft_status_t pair_type(weft_graph_t *g, weft_var_t *t, weft_var_t *e, size_t i,
                               const weft_type_t **out)
{
    const weft_type_t *tt = weft_var_type(t), *te = weft_var_type(e);
    if (weft_type_kind(tt) != WEFT_TYPE_TENSOR || weft_type_kind(te) != WEFT_TYPE_TENSOR ||
        !weft_type_in_same_class(tt, te)) {
        char a[320], b[320];
        arg_text(t, "then", i, a, sizeof a);
        arg_text(e, "else", i, b, sizeof b);
        return weft_graph_set_error(g, WEFT_ETYPE,
                                    "IfElse: %s and %s must have the same dtype and rank", a, b);
    }
    int nd = weft_type_ndim(tt);
    int64_t shape[WEFT_MAX_NDIM];
    for (int d = 0; d < nd; d++) {
        int64_t x = weft_type_dim(tt, d), y = weft_type_dim(te, d);
        shape[d] = x == y ? x : WEFT_DIM_UNKNOWN;
    }
    return weft_type_tensor(g, weft_type_dtype(tt), nd, shape, out);
}

static weft_status_t ifelse_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                      weft_var_t *const *in, size_t *n_out,
                                      const weft_type_t **out)
{
    const weft__ifelse_props_t *p = weft_op_props(op);
    if (p->n == 0 || p->n > WEFT_IFELSE_MAX || n_in != 1 + 2 * (size_t)p->n)
        return weft_graph_set_error(g, WEFT_EINVAL,
                                    "IfElse{n=%u} takes 1 + 2n inputs (n in 1..%d), got %zu",
                                    (unsigned)p->n, WEFT_IFELSE_MAX, n_in);
    weft_status_t st = check_cond(g, in[0]);
    for (size_t i = 0; st == WEFT_OK && i < p->n; i++)
        st = pair_type(g, in[1 + i], in[1 + p->n + i], i, &out[i]);
    *n_out = p->n;
    return st;
}

bool weft__ifelse_truth(const weft_tensor_t *cond)
{
    return weft_tensor_flat_get(cond, 0) != 0.0; /* NaN != 0: true, as bool(nan) */
}

/* Reads the condition and the branch taken only (the other branch's inputs
 * may be NULL: a lazy runtime did not compute them). */
static weft_status_t ifelse_perform(const weft_apply_t *node, weft_tensor_t *const *in,
                                    weft_tensor_t **out, weft_kernel_ctx_t *ctx)
{
    const weft__ifelse_props_t *p = weft_op_props(weft_apply_op(node));
    bool taken = weft__ifelse_truth(in[0]);
    for (uint32_t i = 0; i < p->n; i++) {
        weft_tensor_t *src = in[taken ? 1 + i : 1 + p->n + i];
        if (!src)
            return weft_kernel_error(ctx, WEFT_ESTATE, "IfElse: the %s value %u is missing",
                                     taken ? "then" : "else", (unsigned)i);
        int nd = weft_tensor_ndim(src);
        weft_status_t st;
        /* a caller's tensor placed in output 0's cell (a direct output,
         * lib/compile/direct_out.c) takes a copy: delivering a view would
         * copy as much */
        bool into_own = i == 0 && ctx && ctx->own_cell == &out[0];
        if (taken && p->as_view && !into_own) {
            st = weft_kernel_view_output(ctx, &out[i], src, nd, weft_tensor_shape(src),
                                         weft_tensor_strides(src), 0);
        } else {
            st = weft_kernel_alloc_output(ctx, &out[i], weft_tensor_dtype(src), nd,
                                          weft_tensor_shape(src));
            if (st == WEFT_OK && (st = weft_tensor_copy(out[i], src)) != WEFT_OK)
                weft_kernel_error(ctx, st, "IfElse: copying value %u: %s", (unsigned)i,
                                  weft_tensor_last_error());
        }
        if (st != WEFT_OK) return st;
    }
    return WEFT_OK;
}

static size_t ifelse_view_map(const weft_op_t *op, weft_op_alias_t *e, size_t cap)
{
    const weft__ifelse_props_t *p = weft_op_props(op);
    if (!p->as_view) return 0;
    size_t n = 0;
    for (uint32_t i = 0; i < p->n && n < cap; i++) e[n++] = (weft_op_alias_t){i, 1 + i};
    return n;
}

/* gz_i when set, else zeros shaped like the output. */
static weft_var_t *grad_or_zeros(weft_graph_t *g, const weft_apply_t *node,
                                 weft_var_t *const *gz, size_t i)
{
    return gz[i] ? gz[i] : weft_zeros_like(g, weft_apply_output(node, i));
}

/* d/d then_i = IfElse(c, gz_i, 0), d/d else_i = IfElse(c, 0, gz_i), zeros
 * shaped like the input they stand for (PyTensor's IfElse.grad); the
 * condition gets none. Outputs nobody differentiates leave their pair
 * disconnected. */
static weft_status_t ifelse_grad(weft_graph_t *g, const weft_apply_t *node,
                                 weft_var_t *const *gz, weft_var_t **gin)
{
    const weft__ifelse_props_t *p = weft_op_props(weft_apply_op(node));
    weft_var_t *c = weft_apply_input(node, 0);
    bool any = false;
    for (uint32_t i = 0; i < p->n; i++) any = any || gz[i];
    if (!any) return WEFT_OK;
    for (uint32_t i = 0; i < p->n; i++) {
        weft_var_t *t = weft_apply_input(node, 1 + i), *e = weft_apply_input(node, 1 + p->n + i);
        weft_var_t *gi = grad_or_zeros(g, node, gz, i);
        weft_var_t *zt = weft_zeros_like(g, t), *ze = weft_zeros_like(g, e);
        gin[1 + i] = weft_ifelse1(g, c, gi, zt);
        gin[1 + p->n + i] = weft_ifelse1(g, c, ze, gi);
        if (!gin[1 + i] || !gin[1 + p->n + i]) return weft_graph_error(g);
    }
    return WEFT_OK;
}

const weft_op_class_t weft__ifelse_class = {
    .size = sizeof(weft_op_class_t),
    .name = "IfElse",
    .props_size = sizeof(weft__ifelse_props_t),
    .props_print = ifelse_props_print,
    .make_node = ifelse_make_node,
    .perform = ifelse_perform,
    .view_map = ifelse_view_map,
    .grad = ifelse_grad,
    .props_to_json = ifelse_props_to_json,
    .props_from_json = ifelse_props_from_json,
};

weft_status_t weft__ifelse_build(weft_graph_t *g, weft_var_t *cond, size_t n,
                                 weft_var_t *const *tv, weft_var_t *const *ev, bool as_view,
                                 const char *file, int line, weft_var_t **out)
{
    weft_var_t *in[1 + 2 * WEFT_IFELSE_MAX];
    in[0] = cond;
    memcpy(in + 1, tv, n * sizeof *in);
    memcpy(in + 1 + n, ev, n * sizeof *in);
    weft__ifelse_props_t props = {(uint32_t)n, as_view ? 1 : 0};
    const weft_op_t *op = NULL;
    weft_status_t st = weft_op_create(g, &weft__ifelse_class, &props, &op);
    if (st != WEFT_OK) return st;
    weft_apply_t *a = weft_apply_create_at(g, op, 1 + 2 * n, in, file, line);
    if (!a) return weft__ctor_status(g);
    for (size_t i = 0; i < n; i++) out[i] = weft_apply_output(a, i);
    return WEFT_OK;
}

static weft_status_t ifelse_args(weft_graph_t *g, weft_var_t *cond, size_t n,
                                 weft_var_t *const *tv, weft_var_t *const *ev,
                                 weft_var_t **out)
{
    if (!tv || !ev || (!out && n != 1))
        return weft_graph_set_error(g, WEFT_EINVAL, "NULL then_vars, else_vars or out_vars");
    if (n == 0 || n > WEFT_IFELSE_MAX)
        return weft_graph_set_error(g, WEFT_EINVAL, "n is %zu, must be 1..%d", n,
                                    WEFT_IFELSE_MAX);
    /* a NULL input is usually an earlier constructor's failure, whose error
     * stays the first one kept (weft/graph.h "Errors") */
    if (!cond) return weft_graph_set_error(g, WEFT_EINVAL, "NULL condition");
    for (size_t i = 0; i < n; i++)
        if (!tv[i] || !ev[i])
            return weft_graph_set_error(g, WEFT_EINVAL, "NULL %s value %zu",
                                        tv[i] ? "else" : "then", i);
    return WEFT_OK;
}

weft_var_t *weft_ifelse_at(weft_graph_t *g, weft_var_t *cond, size_t n,
                           weft_var_t *const *then_vars, weft_var_t *const *else_vars,
                           weft_var_t **out_vars, const char *file, int line)
{
    weft_var_t *local[WEFT_IFELSE_MAX] = {NULL};
    if (!g) return NULL;
    weft__ctor_begin(g);
    weft_status_t st = ifelse_args(g, cond, n, then_vars, else_vars, out_vars);
    if (st == WEFT_OK) st = weft__ifelse_build(g, cond, n, then_vars, else_vars, false, file,
                                               line, local);
    if (out_vars)
        for (size_t i = 0; i < n && i < WEFT_IFELSE_MAX; i++)
            out_vars[i] = st == WEFT_OK ? local[i] : NULL;
    return weft__ctor_end(g, st, st == WEFT_OK ? local[0] : NULL, "weft_ifelse", file, line);
}

weft_var_t *weft_ifelse1_at(weft_graph_t *g, weft_var_t *cond, weft_var_t *then_var,
                            weft_var_t *else_var, const char *file, int line)
{
    weft_var_t *out = NULL;
    if (!g) return NULL;
    weft__ctor_begin(g);
    weft_status_t st = ifelse_args(g, cond, 1, &then_var, &else_var, &out);
    if (st == WEFT_OK) st = weft__ifelse_build(g, cond, 1, &then_var, &else_var, false, file,
                                               line, &out);
    return weft__ctor_end(g, st, st == WEFT_OK ? out : NULL, "weft_ifelse1", file, line);
}
