/* The Scan rewrites (docs/control-flow.md "Scan"): scan_save_mem, PyTensor's
 * save-memory rewrite in its most common form - an output whose every
 * client reads y[-1] is computed as its last state alone (the node keeps a
 * ring of lag + 1 states instead of n_steps rows, scan_run.c). lib/catalog
 * lists it in the default rewrite database. */
#include "graph/ctor_int.h"
#include "scan_int.h"
#include "weft/rewrite.h"
#include "weft/rewrite_db.h"
#include "weft/shape_ops.h"

/* Every client of v is a Subtensor x[-1] (none is a graph output). */
static bool read_last_only(weft_fgraph_t *fg, const weft_var_t *v, const weft_op_t *last)
{
    const weft_client_t *cl = NULL;
    size_t n = 0;
    if (weft_fgraph_clients(fg, v, &cl, &n) != WEFT_OK || n == 0) return false;
    for (size_t i = 0; i < n; i++)
        if (weft_apply_is_output_slot(cl[i].node) || !weft_op_equal(weft_apply_op(cl[i].node), last))
            return false;
    return true;
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
        if (!((mask >> o) & 1) && read_last_only(fg, weft_apply_output(node, o), last))
            mask |= 1u << o;
    if (mask == p->last_mask) return WEFT_OK;
    const weft_op_t *op = NULL;
    s = weft__scan_op(g, p->core, mask, p->name[0] ? p->name : NULL, &op);
    weft_var_t *in[WEFT_OP_MAX_OUTPUTS + WEFT_SCAN_MAX_SEQS + WEFT_SCAN_MAX_NONSEQS + 1];
    for (size_t i = 0; i < weft_apply_n_inputs(node); i++) in[i] = weft_apply_input(node, i);
    const char *file = NULL;
    int line = 0;
    weft_apply_trace(node, &file, &line);
    weft_apply_t *a = NULL;
    if (s == WEFT_OK)
        s = weft__got(g, a = weft_apply_create_at(g, op, weft_apply_n_inputs(node), in, file, line));
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

weft_status_t weft_scan_register_rewrites(weft_rewrite_db_t *db)
{
    if (!db) return WEFT_EINVAL;
    if (weft_rewrite_db_has(db, WEFT_SCAN_SAVE_MEM_REWRITE)) return WEFT_OK;
    const weft_op_class_t *cls[1] = {weft_scan_class()};
    weft_node_rewriter_desc_t nd = WEFT_NODE_REWRITER_DESC_INIT;
    nd.name = "local_scan_save_mem";
    nd.transform = save_mem_transform;
    nd.n_classes = 1;
    nd.classes = cls;
    weft_rewriter_t *node = NULL, *walk = NULL;
    weft_status_t s = weft_rewriter_node_create(&nd, &node);
    if (s != WEFT_OK) return s;
    s = weft_rewriter_walk_create(WEFT_SCAN_SAVE_MEM_REWRITE, WEFT_WALK_IN2OUT, false, 1, &node,
                                  &walk);
    if (s != WEFT_OK) return s;
    const char *tags[2] = {"fast_run", "scan"};
    /* late (after canonicalization and merging have settled the readers),
     * before the in-place pass */
    s = weft_rewrite_db_register(db, WEFT_SCAN_SAVE_MEM_REWRITE, walk, 40.0, 2, tags);
    return s == WEFT_EDUPLICATE ? WEFT_OK : s;
}
