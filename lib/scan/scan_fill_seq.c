/* scan_fill_seq (docs/control-flow.md §5.3): a sequence whose every row is
 * the same 0-d value - the gradient of a sum over every axis,
 * ReduceGrad{Sum}(x, gz), which is gz broadcast to x's shape - and whose x
 * is itself a sequence of the node (same taps, so the step count stays) is
 * not materialized when its rows have static lengths: gz becomes a
 * non-sequence and the row's placeholder Alloc(gz, row shape), which
 * depends on no sequence nor state, so scan_push_out_non_seq computes it
 * once before the loop (a row, not n of them). The (n, ...) tensor of gz
 * values (the RNN gradient's ones, 6.5 MB) is never written nor read; the
 * values are gz's exactly. (Second(x_t, gz) would keep the row shape of a
 * dynamic x, but scan_split_map stacks it again for every step.) */
#include <string.h>

#include "graph/ctor_int.h"
#include "scan_int.h"
#include "weft/array_ops.h"
#include "weft/op_info.h"
#include "weft/rewrite.h"
#include "weft/symshape.h"

/* The gz of v = ReduceGrad{Sum over every axis}(x, gz), its x in *xo; NULL
 * for another v. */
static weft_var_t *sum_grad_of(const weft_var_t *v, const weft_var_t **xo)
{
    weft_apply_t *a = weft_var_owner(v);
    weft_reduce_kind_t kind;
    int axes[WEFT_MAX_NDIM], n = 0;
    bool keep = false;
    const weft_type_t *t = weft_var_type(v);
    if (!a || weft_reduce_grad_op_info(weft_apply_op(a), &kind, axes, &n, &keep) != WEFT_OK ||
        kind != WEFT_REDUCE_SUM || keep || n != weft_type_ndim(t))
        return NULL;
    *xo = weft_apply_input(a, 0);
    return weft_apply_input(a, 1);
}

static bool same_taps(const weft__scan_layout_t *l, uint32_t q, uint32_t r)
{
    return l->seq_ntaps[q] == l->seq_ntaps[r] &&
           !memcmp(l->seq_taps[q], l->seq_taps[r], l->seq_ntaps[q] * sizeof l->seq_taps[q][0]);
}

/* Whether the inner row placeholders of sequence q have static lengths. */
static bool static_rows(const weft__scan_core_t *c, uint32_t q)
{
    size_t a0 = 0;
    for (uint32_t k = 0; k < q; k++) a0 += c->lay.seq_ntaps[k];
    for (uint32_t k = 0; k < c->lay.seq_ntaps[q]; k++) {
        const weft_type_t *t = weft_var_type(weft_fgraph_input(c->fg, a0 + k));
        for (int d = 0; d < weft_type_ndim(t); d++)
            if (weft_type_dim(t, d) < 0) return false;
    }
    return true;
}

/* Whether the node's step count is Shape_i{0}(x) (the gradient's reverse
 * scans when the forward length is not static): a sequence shaped as x
 * then has exactly the rows read, so dropping it changes no count. */
static bool steps_are_length_of(const weft_apply_t *node, const weft_var_t *x)
{
    const weft_apply_t *a = weft_var_owner(weft_apply_input(node, 0));
    int axis = -1;
    return a && weft_shape_op_info(weft_apply_op(a), &axis) && axis == 0 &&
           weft_apply_input(a, 0) == x;
}

/* The first sequence that can go: another sequence with the same outer x
 * and taps keeps the step count, or the count is x's length and the
 * sequence has one tap; false if none. */
static bool fill_seq(const weft_apply_t *node, const weft__scan_core_t *c, uint32_t *q)
{
    const weft__scan_layout_t *l = &c->lay;
    for (*q = 0; *q < l->n_seq; (*q)++) {
        const weft_var_t *xo = NULL;
        if (!sum_grad_of(weft_apply_input(node, 1 + *q), &xo) || !static_rows(c, *q)) continue;
        if (l->seq_ntaps[*q] == 1 && steps_are_length_of(node, xo)) return true;
        for (uint32_t src = 0; src < l->n_seq; src++)
            if (src != *q && weft_apply_input(node, 1 + src) == xo && same_taps(l, *q, src))
                return true;
    }
    return false;
}

typedef struct filled {
    weft__scan_rebuilt_t r;
    weft_var_t *in[WEFT__SCAN_MAX_INNER_IN]; /* what the inner graph is applied to */
    weft_var_t *nsi[WEFT_SCAN_MAX_NONSEQS];
} filled_t;

/* Inner inputs: fresh placeholders, sequence q's taps replaced by
 * Alloc(gz_in, row shape); then the inner graph's copy on them (r->upd). */
static weft_status_t inner(weft_graph_t *g, const weft__scan_core_t *c, uint32_t q, weft_var_t *gz,
                           filled_t *f, const char *file, int line)
{
    const weft__scan_layout_t *l = &c->lay;
    weft_status_t s = WEFT_OK;
    for (size_t k = 0; k < c->n_in && s == WEFT_OK; k++) {
        const weft_var_t *v = weft_fgraph_input(c->fg, k);
        s = weft__got(g, f->r.ph[k] = weft__scan_placeholder_like(g, v, weft_var_name(v), file,
                                                                  line));
        f->in[k] = f->r.ph[k];
    }
    weft_var_t *gz_in = NULL;
    if (s == WEFT_OK) s = weft__got(g, gz_in = weft__scan_placeholder_like(g, gz, "gz", file, line));
    size_t a0 = 0;
    for (uint32_t k = 0; k < q; k++) a0 += l->seq_ntaps[k];
    const weft_type_t *row = weft_var_type(f->r.ph[a0]);
    int64_t shape[WEFT_MAX_NDIM];
    for (int d = 0; d < weft_type_ndim(row); d++) shape[d] = weft_type_dim(row, d);
    for (uint32_t k = 0; k < l->seq_ntaps[q] && s == WEFT_OK; k++)
        s = weft__got(g, f->in[a0 + k] = weft_broadcast_to_at(g, gz_in, weft_type_ndim(row), shape,
                                                              file, line));
    size_t n_ns = l->n_nonseq, ns0 = c->n_in - n_ns;
    for (size_t k = 0; k < n_ns; k++) f->nsi[k] = f->r.ph[ns0 + k];
    f->nsi[n_ns] = gz_in;
    return s == WEFT_OK ? weft__scan_expand(g, c, f->in, f->r.upd, file, line) : s;
}

/* node's spec without sequence q, gz appended to the non-sequences. */
static void spec_filled(const weft_apply_t *node, const weft__scan_props_t *p, uint32_t q,
                        weft_var_t *gz, filled_t *f, weft_scan_spec_t *sp)
{
    weft__scan_rebuilt_t *r = &f->r;
    weft__scan_spec_without(node, p, 0, r, sp);
    const weft__scan_layout_t *l = &p->core->lay;
    memmove(r->seqs + q, r->seqs + q + 1, (l->n_seq - q - 1) * sizeof r->seqs[0]);
    sp->n_seqs = l->n_seq - 1;
    r->nso[l->n_nonseq] = gz;
    sp->n_nonseqs = l->n_nonseq + 1;
    sp->nonseq_inner = f->nsi;
}

static weft_status_t fill_transform(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                    weft_rewrite_result_t *res)
{
    (void)user;
    const weft__scan_props_t *p = weft__scan_get(weft_apply_op(node));
    uint32_t q = 0;
    if (!p || p->last_mask || p->core->lay.n_nonseq == WEFT_SCAN_MAX_NONSEQS ||
        !fill_seq(node, p->core, &q))
        return WEFT_OK;
    weft_graph_t *g = weft_fgraph_graph(fg);
    const char *file = NULL;
    int line = 0;
    weft_apply_trace(node, &file, &line);
    const weft_var_t *xo = NULL;
    weft_var_t *gz = sum_grad_of(weft_apply_input(node, 1 + q), &xo);
    filled_t f;
    memset(&f, 0, sizeof f);
    weft_status_t s = inner(g, p->core, q, gz, &f, file, line);
    if (s != WEFT_OK) return s;
    weft_scan_spec_t sp = WEFT_SCAN_SPEC_INIT;
    spec_filled(node, p, q, gz, &f, &sp);
    weft_var_t *outs[WEFT_OP_MAX_OUTPUTS];
    s = weft__got(g, weft_scan_at(g, &sp, outs, file, line));
    for (size_t o = 0; o < p->core->lay.n_out && s == WEFT_OK; o++)
        s = weft_rewrite_result_replace(res, weft_apply_output(node, o), outs[o]);
    return s;
}

weft__scan_node_rewrite_fn weft__scan_fill_seq_fn(void)
{
    return fill_transform;
}
