/* scan_prune_outputs (docs/control-flow.md §5.3): a Scan output that is not
 * carried, is stacked and has no reader is dropped. The inner graph is
 * copied on fresh placeholders and the node rebuilt with weft_scan on the
 * outputs kept, so the inner nodes only the dropped output needed are not
 * part of the new inner graph (the gradient's reverse scan computes
 * d cost / d x_t for every sequence: one Gemm per step and a stacked
 * (n, ...) output that a gradient with respect to the weights never reads). */
#include "graph/ctor_int.h"
#include "scan_int.h"
#include "weft/rewrite.h"

/* Bit o: output o can go. */
static uint32_t droppable(weft_fgraph_t *fg, const weft_apply_t *node, const weft__scan_props_t *p)
{
    uint32_t mask = 0;
    for (uint32_t o = 0; o < p->core->lay.n_out; o++) {
        const weft_client_t *cl = NULL;
        size_t n = 0;
        if (p->core->lay.out_ntaps[o] ||
            weft_fgraph_clients(fg, weft_apply_output(node, o), &cl, &n) != WEFT_OK || n)
            continue;
        mask |= 1u << o;
    }
    return mask;
}

void weft__scan_spec_without(const weft_apply_t *node, const weft__scan_props_t *p, uint32_t drop,
                             weft__scan_rebuilt_t *r, weft_scan_spec_t *sp)
{
    const weft__scan_layout_t *l = &p->core->lay;
    size_t a = 0, pos = 1;
    for (uint32_t q = 0; q < l->n_seq; q++, pos++) {
        r->seqs[q] = (weft_scan_seq_t){weft_apply_input(node, pos), l->seq_ntaps[q],
                                       l->seq_taps[q], r->ph + a};
        a += l->seq_ntaps[q];
    }
    for (uint32_t o = 0; o < l->n_out; o++) {
        bool carried = l->out_ntaps[o] > 0;
        if (!((drop >> o) & 1)) {
            r->kept[r->n_kept] = o;
            r->outs[r->n_kept++] = (weft_scan_output_t){
                r->upd[o], carried ? weft_apply_input(node, pos) : NULL,
                carried ? l->out_ntaps[o] : 0, carried ? l->out_taps[o] : NULL,
                carried ? r->ph + a : NULL};
        }
        if (carried) pos++;
        a += l->out_ntaps[o];
    }
    for (uint32_t k = 0; k < l->n_nonseq; k++) r->nso[k] = weft_apply_input(node, pos + k);
    sp->n_seqs = l->n_seq;
    sp->seqs = r->seqs;
    sp->n_outputs = r->n_kept;
    sp->outputs = r->outs;
    sp->n_nonseqs = l->n_nonseq;
    sp->nonseq_outer = r->nso;
    sp->nonseq_inner = r->ph + a;
    sp->n_steps_var = weft_apply_input(node, 0);
    sp->until = l->has_until ? r->upd[l->n_out] : NULL;
    sp->reverse = l->reverse != 0;
    sp->name = p->name[0] ? p->name : NULL;
}

static weft_status_t prune_transform(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                     weft_rewrite_result_t *res)
{
    (void)user;
    const weft__scan_props_t *p = weft__scan_get(weft_apply_op(node));
    /* last-state outputs come from scan_save_mem, which runs later */
    if (!p || p->last_mask) return WEFT_OK;
    uint32_t drop = droppable(fg, node, p);
    if (!drop || drop == (1u << p->core->lay.n_out) - 1) return WEFT_OK;
    weft_graph_t *g = weft_fgraph_graph(fg);
    const char *file = NULL;
    int line = 0;
    weft_apply_trace(node, &file, &line);
    weft__scan_rebuilt_t r = {0};
    weft_status_t s = weft__scan_copy_inner(g, p->core, &r, file, line);
    if (s != WEFT_OK) return s;
    weft_scan_spec_t sp = WEFT_SCAN_SPEC_INIT;
    weft__scan_spec_without(node, p, drop, &r, &sp);
    weft_var_t *outs[WEFT_OP_MAX_OUTPUTS];
    s = weft__got(g, weft_scan_at(g, &sp, outs, file, line));
    for (size_t j = 0; j < r.n_kept && s == WEFT_OK; j++)
        s = weft_rewrite_result_replace(res, weft_apply_output(node, r.kept[j]), outs[j]);
    return s;
}

weft_status_t weft__scan_copy_inner(weft_graph_t *g, const weft__scan_core_t *c,
                                    weft__scan_rebuilt_t *r, const char *file, int line)
{
    weft_status_t s = WEFT_OK;
    for (size_t k = 0; k < c->n_in && s == WEFT_OK; k++) {
        const weft_var_t *v = weft_fgraph_input(c->fg, k);
        s = weft__got(g, r->ph[k] = weft__scan_placeholder_like(g, v, weft_var_name(v), file, line));
    }
    return s == WEFT_OK ? weft__scan_expand(g, c, r->ph, r->upd, file, line) : s;
}

weft__scan_node_rewrite_fn weft__scan_prune_fn(void)
{
    return prune_transform;
}
