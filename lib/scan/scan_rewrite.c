/* The Scan rewrites (docs/control-flow.md §5.3): scan_save_mem,
 * PyTensor's save-memory rewrite in its most common form - an output whose
 * every client reads y[-1] is computed as its last state alone (the node
 * keeps a ring of lag + 1 states instead of n_steps rows, scan_run.c) - and
 * scan_inline_one_step, which replaces a scan of one static step by its
 * inner graph. lib/catalog lists both in the default rewrite database. */
#include <string.h>

#include "graph/ctor_int.h"
#include "scan_int.h"
#include "weft/array_ops.h"
#include "weft/rewrite.h"
#include "weft/rewrite_db.h"
#include "weft/shape_ops.h"

bool weft__scan_read_last_only(weft_fgraph_t *fg, const weft_var_t *v, const weft_op_t *last)
{
    const weft_client_t *cl = NULL;
    size_t n = 0;
    if (weft_fgraph_clients(fg, v, &cl, &n) != WEFT_OK || n == 0) return false;
    for (size_t i = 0; i < n; i++)
        if (weft_apply_is_output_slot(cl[i].node) || !weft_op_equal(weft_apply_op(cl[i].node), last))
            return false;
    return true;
}

weft_status_t weft__scan_reapply(weft_graph_t *g, const weft_apply_t *node, const weft_op_t *op,
                                 weft_apply_t **out)
{
    weft_var_t *in[WEFT_OP_MAX_OUTPUTS + WEFT_SCAN_MAX_SEQS + WEFT_SCAN_MAX_NONSEQS + 1];
    for (size_t i = 0; i < weft_apply_n_inputs(node); i++) in[i] = weft_apply_input(node, i);
    const char *file = NULL;
    int line = 0;
    weft_apply_trace(node, &file, &line);
    return weft__got(g, *out = weft_apply_create_at(g, op, weft_apply_n_inputs(node), in, file,
                                                    line));
}

static weft_status_t save_mem_transform(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                        weft_rewrite_result_t *res)
{
    (void)user;
    const weft__scan_props_t *p = weft__scan_get(weft_apply_op(node));
    if (!p) return WEFT_OK;
    weft_graph_t *g = weft_fgraph_graph(fg);
    const weft_slice_t idx[1] = {WEFT_SLICE_AT(-1)};
    const weft_op_t *last = NULL;
    weft_status_t s = weft_subtensor_op(g, 1, idx, &last);
    if (s != WEFT_OK) return s;
    uint32_t mask = p->last_mask;
    for (uint32_t o = 0; o < p->core->lay.n_out; o++)
        if (!((mask >> o) & 1) && weft__scan_read_last_only(fg, weft_apply_output(node, o), last))
            mask |= 1u << o;
    if (mask == p->last_mask) return WEFT_OK;
    const weft_op_t *op = NULL;
    s = weft__scan_op_ex(g, p->core, mask, p->chunk_mask, p->name[0] ? p->name : NULL, &op);
    weft_apply_t *a = NULL;
    if (s == WEFT_OK) s = weft__scan_reapply(g, node, op, &a);
    for (uint32_t o = 0; o < p->core->lay.n_out && s == WEFT_OK; o++) {
        weft_var_t *old = weft_apply_output(node, o), *nw = weft_apply_output(a, o);
        if (!((mask >> o) & 1) || ((p->last_mask >> o) & 1)) {
            s = weft_rewrite_result_replace(res, old, nw);
            continue;
        }
        const weft_client_t *cl = NULL;
        size_t n = 0;
        s = weft_fgraph_clients(fg, old, &cl, &n);
        for (size_t i = 0; i < n && s == WEFT_OK; i++)
            s = weft_rewrite_result_replace(res, weft_apply_output(cl[i].node, 0), nw);
    }
    return s;
}

/* ---- scan_inline_one_step ---------------------------------------------------- */

bool weft__scan_const_steps(const weft_apply_t *node, int64_t *n)
{
    const weft_var_t *v = weft_apply_input(node, 0);
    const void *data = NULL;
    size_t nb = 0;
    if (!weft_var_is_constant(v) || weft_constant_data(v, &data, &nb) != WEFT_OK || nb != sizeof *n)
        return false;
    memcpy(n, data, sizeof *n);
    return true;
}

/* Row `row` of x (axis 0 dropped). */
static weft_var_t *row_of(weft_graph_t *g, weft_var_t *x, int64_t row, const char *file, int line)
{
    const weft_slice_t idx[1] = {WEFT_SLICE_AT(row)};
    return weft_subtensor_at(g, x, 1, idx, file, line);
}

/* The inner inputs of step 0: sequence rows, initial states, non-sequences. */
static weft_status_t step0_inputs(weft_graph_t *g, const weft_apply_t *node,
                                  const weft__scan_layout_t *l, weft_var_t **in, const char *file,
                                  int line)
{
    size_t a = 0, pos = 1;
    for (uint32_t q = 0; q < l->n_seq; q++, pos++)
        for (uint32_t k = 0; k < l->seq_ntaps[q]; k++, a++)
            in[a] = row_of(g, weft_apply_input(node, pos), l->seq_taps[q][k] - l->seq_taps[q][0],
                           file, line);
    for (uint32_t o = 0; o < l->n_out; o++) {
        if (!l->out_ntaps[o]) continue;
        weft_var_t *init = weft_apply_input(node, pos++);
        int64_t lag = weft__scan_lag(l, o);
        for (uint32_t k = 0; k < l->out_ntaps[o]; k++, a++)
            in[a] = l->out_ntaps[o] == 1 && lag == 1 ? init
                                                     : row_of(g, init, lag + l->out_taps[o][k], file, line);
    }
    for (uint32_t k = 0; k < l->n_nonseq; k++) in[a++] = weft_apply_input(node, pos++);
    for (size_t i = 0; i < a; i++)
        if (!in[i]) return weft__ctor_status(g);
    return WEFT_OK;
}

static weft_status_t inline_transform(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                      weft_rewrite_result_t *res)
{
    (void)user;
    const weft__scan_props_t *p = weft__scan_get(weft_apply_op(node));
    int64_t n = -1;
    if (!p || !weft__scan_const_steps(node, &n) || n != 1) return WEFT_OK;
    weft_graph_t *g = weft_fgraph_graph(fg);
    const weft__scan_core_t *c = p->core;
    const char *file = NULL;
    int line = 0;
    weft_apply_trace(node, &file, &line);
    weft_var_t *in[WEFT_SCAN_MAX_SEQS * WEFT_SCAN_MAX_TAPS + WEFT_OP_MAX_OUTPUTS * WEFT_SCAN_MAX_TAPS +
                   WEFT_SCAN_MAX_NONSEQS];
    weft_var_t *upd[WEFT_OP_MAX_OUTPUTS + 1], *outs[WEFT_OP_MAX_OUTPUTS];
    weft_status_t s = step0_inputs(g, node, &c->lay, in, file, line);
    if (s == WEFT_OK) s = weft__scan_expand(g, c, in, upd, file, line);
    for (uint32_t o = 0; s == WEFT_OK && o < c->lay.n_out; o++)
        s = weft__got(g, outs[o] = ((p->last_mask >> o) & 1)
                                       ? upd[o]
                                       : weft_expand_dims_at(g, upd[o], 0, file, line));
    return s == WEFT_OK ? weft_rewrite_result_outputs(res, c->lay.n_out, outs) : s;
}

/* The tag sets of the Scan rewrites: the first n_tags of {scan, fast_run,
 * fast_math}. fast_math: a rewrite that may change the result's rounding;
 * tag `scan` alone: in no mode, run on request only. */
enum { SCAN_ONLY = 1, FAST_RUN = 2, FAST_MATH = 3 };

/* Registers a node rewrite on Scan nodes as an in2out walk named name. */
static weft_status_t register_walk_tags(weft_rewrite_db_t *db, const char *name,
                                        const char *node_name, weft_node_rewrite_fn fn,
                                        double position, size_t n_tags)
{
    if (weft_rewrite_db_has(db, name)) return WEFT_OK;
    const weft_op_class_t *cls[1] = {weft_scan_class()};
    weft_node_rewriter_desc_t nd = WEFT_NODE_REWRITER_DESC_INIT;
    nd.name = node_name;
    nd.transform = fn;
    nd.n_classes = 1;
    nd.classes = cls;
    weft_rewriter_t *node = NULL, *walk = NULL;
    weft_status_t s = weft_rewriter_node_create(&nd, &node);
    if (s != WEFT_OK) return s;
    s = weft_rewriter_walk_create(name, WEFT_WALK_IN2OUT, false, 1, &node, &walk);
    if (s != WEFT_OK) return s;
    const char *tags[3] = {"scan", "fast_run", "fast_math"};
    s = weft_rewrite_db_register(db, name, walk, position, n_tags, tags);
    return s == WEFT_EDUPLICATE ? WEFT_OK : s;
}

static weft_status_t register_walk(weft_rewrite_db_t *db, const char *name, const char *node_name,
                                   weft_node_rewrite_fn fn, double position)
{
    return register_walk_tags(db, name, node_name, fn, position, FAST_RUN);
}

weft_status_t weft_scan_register_rewrites(weft_rewrite_db_t *db)
{
    if (!db) return WEFT_EINVAL;
    /* inlining early, so the outer rewrites see through it; save_mem late
     * (after canonicalization and merging have settled the readers),
     * before fusion and the in-place pass */
    weft_status_t s = register_walk(db, WEFT_SCAN_INLINE_REWRITE, "local_scan_inline_one_step",
                                    inline_transform, 0.5);
    if (s == WEFT_OK)
        s = register_walk(db, WEFT_SCAN_MERGE_REWRITE, "local_scan_merge", weft__scan_merge_fn(),
                          0.55);
    if (s == WEFT_OK)
        s = register_walk(db, WEFT_SCAN_PUSH_OUT_REWRITE, "local_scan_push_out_non_seq",
                          weft__scan_push_out_fn(), 0.6);
    if (s == WEFT_OK)
        s = register_walk(db, WEFT_SCAN_FILL_SEQ_REWRITE, "local_scan_fill_seq",
                          weft__scan_fill_seq_fn(), 0.57);
    if (s == WEFT_OK)
        s = register_walk_tags(db, WEFT_SCAN_PUSH_OUT_DOT_REWRITE, "local_scan_push_out_dot",
                               weft__scan_push_out_dot_fn(), 0.59, FAST_MATH);
    if (s == WEFT_OK) /* after save_mem: it marks last-state outputs */
        s = register_walk_tags(db, WEFT_SCAN_CHUNK_SUM_REWRITE, "local_scan_chunk_sum",
                               weft__scan_chunk_sum_fn(), 40.5, FAST_MATH);
    if (s == WEFT_OK) /* on request only: a Scan node pipelines its carry-independent
                       * part with the carried loop itself (scan_pipe.h), which the
                       * split would turn into a loop that cannot overlap */
        s = register_walk_tags(db, WEFT_SCAN_SPLIT_MAP_REWRITE, "local_scan_split_map",
                               weft__scan_split_map_fn(), 0.7, SCAN_ONLY);
    if (s == WEFT_OK)
        s = register_walk(db, WEFT_SCAN_PRUNE_REWRITE, "local_scan_prune_outputs",
                          weft__scan_prune_fn(), 0.58);
    if (s == WEFT_OK)
        s = register_walk(db, WEFT_SCAN_SAVE_MEM_REWRITE, "local_scan_save_mem",
                          save_mem_transform, 40.0);
    return s;
}
