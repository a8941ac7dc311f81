/* Constant folding (docs/rewrites.md §3): a node whose inputs are all constants
 * (true for zero-input nodes), whose op allows it (do_constant_folding hook)
 * and has a perform hook, and which destroys nothing, is run once now with a
 * kernel context of its own, and each output is replaced by a constant of the
 * output type narrowed to the value's shape, carrying the node's creation site.
 * Running the one node directly (not weft_eval) keeps the cost independent of
 * the context's size.
 *
 * constant_dimshuffle (fast_run, before the first merge): a DimShuffle of a
 * constant that only inserts length-1 axes (the broadcast padding the
 * elementwise constructors put on scalar constants) is that constant's data
 * under the padded type, so it becomes a constant without running anything.
 * Doing it before merging removes those nodes (two of every five in a scalar
 * chain) from every later pass; equal paddings get one shared constant. */
#include <stdlib.h>
#include <string.h>

#include "graph/ctor_int.h"
#include "rewrite_int.h"
#include "tensor/kernel_int.h"
#include "weft/kernel.h"
#include "weft/shape_ops.h"
#include "weft/tensor.h"

static bool foldable(const weft_apply_t *node)
{
    const weft_op_t *op = weft_apply_op(node);
    const weft_op_class_t *cls = weft_op_class(op);
    if (!cls->perform || weft_op_is_destructive(op)) return false;
    if (weft_apply_n_outputs(node) > WEFT_OP_MAX_OUTPUTS) return false;
    for (size_t i = 0; i < weft_apply_n_inputs(node); i++)
        if (!weft_var_is_constant(weft_apply_input(node, i))) return false;
    /* hooks beyond the author's size are never read (weft/op.h) */
    size_t end = offsetof(weft_op_class_t, do_constant_folding) + sizeof cls->do_constant_folding;
    if (cls->size >= end && cls->do_constant_folding && !cls->do_constant_folding(node))
        return false;
    return true;
}

/* Tensors viewing the constants' data (read-only by contract). */
static weft_status_t input_tensors(const weft_apply_t *node, weft_tensor_t **in)
{
    for (size_t i = 0; i < weft_apply_n_inputs(node); i++) {
        weft_var_t *c = weft_apply_input(node, i);
        const weft_type_t *t = weft_var_type(c);
        int nd = weft_type_ndim(t);
        int64_t shape[WEFT_MAX_NDIM];
        for (int d = 0; d < nd; d++) shape[d] = weft_type_dim(t, d);
        const void *data;
        size_t nbytes;
        weft_status_t st = weft_constant_data(c, &data, &nbytes);
        if (st == WEFT_OK)
            st = weft_tensor_from_data(weft_type_dtype(t), nd, shape, NULL, (void *)data, &in[i]);
        if (st != WEFT_OK) return st;
    }
    return WEFT_OK;
}

/* The constant holding value t for output v (type narrowed to t's shape). */
static weft_status_t make_constant(weft_graph_t *g, const weft_apply_t *node, weft_var_t *v,
                                   weft_tensor_t *t, weft_var_t **out)
{
    const weft_type_t *vt = weft_var_type(v), *ct;
    if (weft_tensor_dtype(t) != weft_type_dtype(vt) || weft_tensor_ndim(t) != weft_type_ndim(vt))
        return WEFT_ETYPE;
    weft_status_t st = weft_type_tensor(g, weft_type_dtype(vt), weft_type_ndim(vt),
                                        weft_tensor_shape(t), &ct);
    if (st != WEFT_OK) return st;
    if (!weft_type_is_super(vt, ct)) return WEFT_ESHAPE;
    weft_tensor_t *c;
    st = weft_tensor_contiguous(t, &c);
    if (st != WEFT_OK) return st;
    const char *file;
    int line;
    weft_apply_trace(node, &file, &line);
    size_t nbytes = weft_tensor_size(c) * weft_dtype_size(weft_tensor_dtype(c));
    st = weft__got(g,
                   *out = weft_constant_create_at(g, ct, weft_tensor_data(c), nbytes, file, line));
    weft_tensor_release(c);
    return st;
}

static weft_status_t run_node(const weft_apply_t *node, weft_tensor_t **in, weft_tensor_t **outs)
{
    weft_kernel_ctx_t ctx;
    weft__kernel_ctx_init(&ctx, NULL, NULL, NULL, 0);
    weft_status_t st = input_tensors(node, in);
    if (st != WEFT_OK) return st;
    const weft_op_class_t *cls = weft_op_class(weft_apply_op(node));
    st = cls->perform(node, in, outs, &ctx);
    for (size_t k = 0; st == WEFT_OK && k < weft_apply_n_outputs(node); k++)
        if (!outs[k]) st = WEFT_EINVAL;
    return st;
}

static weft_status_t fold_transform(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                    weft_rewrite_result_t *res)
{
    (void)user;
    if (!foldable(node)) return WEFT_OK;
    size_t n_in = weft_apply_n_inputs(node), n_out = weft_apply_n_outputs(node);
    weft_tensor_t **in = calloc(n_in + 1, sizeof *in);
    weft_tensor_t *outs[WEFT_OP_MAX_OUTPUTS] = {NULL};
    weft_var_t *consts[WEFT_OP_MAX_OUTPUTS];
    if (!in) return WEFT_ENOMEM;
    weft_status_t st = run_node(node, in, outs);
    for (size_t k = 0; st == WEFT_OK && k < n_out; k++)
        st = make_constant(weft_fgraph_graph(fg), node, weft_apply_output(node, k), outs[k],
                           &consts[k]);
    if (st == WEFT_OK) st = weft_rewrite_result_outputs(res, n_out, consts);
    for (size_t i = 0; i < n_in; i++) weft_tensor_release(in[i]);
    for (size_t k = 0; k < n_out; k++) weft_tensor_release(outs[k]);
    free(in);
    return st;
}

weft_status_t weft_rewriter_constant_folding_create(const char *name, weft_rewriter_t **out)
{
    if (!out) return WEFT_EINVAL;
    weft_node_rewriter_desc_t d = WEFT_NODE_REWRITER_DESC_INIT;
    d.name = name ? name : "constant_folding";
    d.transform = fold_transform;
    return weft_rewriter_node_create(&d, out);
}

/* ---- constant_dimshuffle --------------------------------------------------------- */

/* Whether order only inserts new axes, keeping the input axes in order: then
 * the output's C-order data is the input's. */
static bool padding_only(const int *order, int n)
{
    int next = 0;
    for (int k = 0; k < n; k++) {
        if (order[k] == WEFT_DIMSHUFFLE_NEW) continue;
        if (order[k] != next++) return false;
    }
    return true;
}

/* Constants made by one constant_dimshuffle run, keyed by (type, data): equal
 * paddings share one constant, as merge1 would make them right after
 * (creating each and merging it away costs more than the lookup). An open-
 * addressing table, at most half full. */
typedef struct made {
    const weft_type_t *type;
    const void *data;
    size_t nbytes;
    weft_var_t *c;
} made_t;

typedef struct made_table {
    made_t *s;
    size_t cap, n;
} made_table_t;

static uint64_t made_hash(const weft_type_t *t, const void *data, size_t nbytes)
{
    const unsigned char *b = data;
    uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)(uintptr_t)t;
    for (size_t i = 0; i < nbytes; i++) h = (h ^ b[i]) * 0x100000001b3ull; /* FNV-1a */
    return h;
}

static made_t *made_find(made_table_t *m, const weft_type_t *t, const void *data, size_t nbytes)
{
    size_t mask = m->cap - 1;
    for (size_t i = made_hash(t, data, nbytes) & mask;; i = (i + 1) & mask) {
        made_t *e = &m->s[i];
        if (!e->c || (e->type == t && e->nbytes == nbytes && memcmp(e->data, data, nbytes) == 0))
            return e; /* the match, or the empty slot to fill */
    }
}

static weft_status_t made_grow(made_table_t *m)
{
    if ((m->n + 1) * 2 <= m->cap) return WEFT_OK;
    made_table_t nm = {NULL, m->cap ? m->cap * 2 : 64, m->n};
    nm.s = calloc(nm.cap, sizeof *nm.s);
    if (!nm.s) return WEFT_ENOMEM;
    for (size_t i = 0; i < m->cap; i++)
        if (m->s[i].c) *made_find(&nm, m->s[i].type, m->s[i].data, m->s[i].nbytes) = m->s[i];
    free(m->s);
    *m = nm;
    return WEFT_OK;
}

/* The constant replacing node's output (*out NULL: node is not a padding
 * DimShuffle of a constant). */
static weft_status_t padded_constant(weft_graph_t *g, made_table_t *m, const weft_apply_t *node,
                                     weft_var_t **out)
{
    int order[WEFT_MAX_NDIM], n;
    *out = NULL;
    if (weft_op_class(weft_apply_op(node)) != weft__classes()->dimshuffle) return WEFT_OK;
    weft_var_t *c = weft_apply_input(node, 0);
    if (!weft_var_is_constant(c) || !weft__dimshuffle_order(weft_apply_op(node), order, &n) ||
        !padding_only(order, n))
        return WEFT_OK;
    const void *data;
    size_t nbytes;
    weft_status_t st = weft_constant_data(c, &data, &nbytes);
    if (st == WEFT_OK) st = made_grow(m);
    if (st != WEFT_OK) return st == WEFT_ENOMEM ? st : WEFT_OK;
    const weft_type_t *t = weft_var_type(weft_apply_output(node, 0));
    made_t *e = made_find(m, t, data, nbytes);
    if (e->c) {
        *out = e->c;
        return WEFT_OK;
    }
    const char *file;
    int line;
    weft_apply_trace(node, &file, &line);
    st = weft__got(g, *out = weft_constant_create_at(g, t, data, nbytes, file, line));
    if (st != WEFT_OK) return st;
    /* the key points at the source constant's data: it lives as long as g */
    *e = (made_t){t, data, nbytes, *out};
    m->n++;
    return WEFT_OK;
}

static weft_status_t fold_ds_apply(weft_fgraph_t *fg, void *user, weft_rewrite_stats_t *stats,
                                   size_t *n_changes)
{
    (void)user;
    (void)stats;
    weft_apply_t *const *nodes;
    size_t n, k = 0, cap_o = 0, cap_n = 0;
    *n_changes = 0;
    weft_status_t st = weft_fgraph_applies(fg, &nodes, &n);
    weft_var_t **olds = NULL, **news = NULL;
    made_table_t made = {NULL, 0, 0};
    for (size_t i = 0; st == WEFT_OK && i < n; i++) {
        weft_var_t *c;
        st = padded_constant(weft_fgraph_graph(fg), &made, nodes[i], &c);
        if (st != WEFT_OK || !c) continue;
        if (!weft__vec_grow(NULL, (void **)&olds, &cap_o, k + 1, sizeof *olds) ||
            !weft__vec_grow(NULL, (void **)&news, &cap_n, k + 1, sizeof *news)) {
            st = WEFT_ENOMEM;
            break;
        }
        olds[k] = weft_apply_output(nodes[i], 0);
        news[k++] = c;
    }
    /* one transaction: the olds are outputs of distinct nodes reading only a
     * constant, so no replacement removes another old from the graph */
    if (st == WEFT_OK && k)
        st = weft_fgraph_replace_all_validate(fg, k, olds, news, "constant_dimshuffle");
    if (st == WEFT_OK) *n_changes = k;
    free(olds);
    free(news);
    free(made.s);
    return st;
}

weft_status_t weft__constant_dimshuffle_create(const char *name, weft_rewriter_t **out)
{
    return weft_rewriter_graph_create(name, fold_ds_apply, NULL, NULL, out);
}
