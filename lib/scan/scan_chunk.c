/* scan_chunk_sum (docs/control-flow.md §5.3): in a Scan with a chain to
 * overlap, a last-state accumulator acc_t = acc_{t-1} + P_t^T @ B_t (a
 * gradient's weight sum) is marked in the props' chunk_mask. A pipelined
 * run then sums it WEFT__PIPE_CHUNK steps at a time, as one product over
 * the chunk's rows beside the chain (scan_pipe.h), instead of a step at a
 * time (a copy of the accumulator and a product of inner length r per
 * step) or after the loop (scan_push_out_dot: it waits for the whole
 * chain). The sum is taken in another order than the loop's: tagged
 * fast_math. Runs after scan_save_mem, which makes the outputs last-state. */
#include "scan_int.h"
#include "weft/rewrite.h"

static weft_status_t chunk_sum_transform(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                         weft_rewrite_result_t *res)
{
    (void)user;
    const weft__scan_props_t *p = weft__scan_get(weft_apply_op(node));
    if (!p || !weft__scan_has_chain(p->core)) return WEFT_OK;
    uint32_t mask = p->chunk_mask;
    for (uint32_t o = 0; o < p->core->lay.n_out; o++)
        if ((p->last_mask >> o & 1) && weft__scan_inner_acc(p->core, o)) mask |= 1u << o;
    if (mask == p->chunk_mask) return WEFT_OK;
    weft_graph_t *g = weft_fgraph_graph(fg);
    const weft_op_t *op = NULL;
    weft_status_t s =
        weft__scan_op_ex(g, p->core, p->last_mask, mask, p->name[0] ? p->name : NULL, &op);
    weft_apply_t *a = NULL;
    if (s == WEFT_OK) s = weft__scan_reapply(g, node, op, &a);
    for (size_t o = 0; o < weft_apply_n_outputs(node) && s == WEFT_OK; o++)
        s = weft_rewrite_result_replace(res, weft_apply_output(node, o), weft_apply_output(a, o));
    return s;
}

weft__scan_node_rewrite_fn weft__scan_chunk_sum_fn(void)
{
    return chunk_sum_transform;
}
