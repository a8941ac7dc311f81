/* scan_push_out_dot (PyTensor's scan_pushout_dot1, docs/control-flow.md
 * §5.3): an accumulator acc_t = acc_{t-1} + P_t^T @ B_t whose last state
 * alone is read (a gradient's weight sum, sum_t x_t^T dz_t) becomes one
 * product after the loop: the loop stacks P_t and B_t as pure outputs and
 * the last state is init + reshape(P, (-1, m))^T @ reshape(B, (-1, k)).
 * Per step this trades a copy of the accumulator (an inner function cannot
 * overwrite its input state: each step wrote acc + P^T B into a fresh
 * state) and a product of inner length r for two stacked rows; the one
 * product of inner length n*r runs at full BLAS speed and splits over the
 * workers. The sum is taken in another order than the loop's: the rewrite
 * is tagged fast_math (docs/rewrites.md §6.5). */
#include <string.h>

#include "graph/ctor_int.h"
#include "scan_int.h"
#include "weft/elemwise.h"
#include "weft/linalg.h"
#include "weft/op_info.h"
#include "weft/rewrite.h"
#include "weft/shape_ops.h"

static bool op_is(const weft_apply_t *a, const char *cls)
{
    return a && !strcmp(weft_op_name(weft_apply_op(a)), cls);
}

/* v has exactly one client in fg: node `who`, or an output slot when who is
 * NULL. */
static bool sole_client(weft_fgraph_t *fg, const weft_var_t *v, const weft_apply_t *who)
{
    const weft_client_t *cl = NULL;
    size_t n = 0;
    if (weft_fgraph_clients(fg, v, &cl, &n) != WEFT_OK || n != 1) return false;
    return who ? cl[0].node == who : weft_apply_is_output_slot(cl[0].node);
}

/* The Dot's operands are matrices whose last lengths are static (the
 * stacked rows are reshaped to them). */
bool weft__scan_acc_parts(const weft_var_t *u, const weft_var_t *acc, weft_var_t **p,
                          weft_var_t **b)
{
    weft_apply_t *add = weft_var_owner(u);
    if (!op_is(add, "Add") || weft_apply_n_inputs(add) != 2) return false;
    int k = weft_apply_input(add, 0) == acc ? 0 : 1;
    weft_var_t *d = weft_apply_input(add, 1 - k);
    weft_apply_t *dot = weft_var_owner(d), *ds = NULL;
    if (weft_apply_input(add, k) != acc || d == acc || !op_is(dot, "Dot") ||
        !weft_type_equal(weft_var_type(d), weft_var_type(acc)) ||
        !weft_type_equal(weft_var_type(u), weft_var_type(acc)))
        return false;
    int order[WEFT_MAX_NDIM], n = 0;
    ds = weft_var_owner(weft_apply_input(dot, 0));
    if (!op_is(ds, "DimShuffle") ||
        weft_dimshuffle_op_info(weft_apply_op(ds), order, &n) != WEFT_OK || n != 2 ||
        order[0] != 1 || order[1] != 0)
        return false;
    *p = weft_apply_input(ds, 0);
    *b = weft_apply_input(dot, 1);
    const weft_type_t *tp = weft_var_type(*p), *tb = weft_var_type(*b);
    return weft_type_ndim(tp) == 2 && weft_type_ndim(tb) == 2 && weft_type_dim(tp, 1) >= 0 &&
           weft_type_dim(tb, 1) >= 0;
}

bool weft__scan_inner_acc(const weft__scan_core_t *c, uint32_t o)
{
    const weft__scan_layout_t *l = &c->lay;
    size_t slot = weft__scan_n_seq_taps(l);
    for (uint32_t q = 0; q < o; q++) slot += l->out_ntaps[q];
    weft_var_t *acc = weft_fgraph_input(c->fg, slot), *u = weft_fgraph_output(c->fg, o);
    weft_var_t *pv = NULL, *bv = NULL;
    return l->out_ntaps[o] == 1 && l->out_taps[o][0] == -1 &&
           weft__scan_acc_parts(u, acc, &pv, &bv) && sole_client(c->fg, acc, weft_var_owner(u)) &&
           sole_client(c->fg, u, NULL);
}

bool weft__scan_has_chain(const weft__scan_core_t *c)
{
    for (uint32_t o = 0; o < c->lay.n_out; o++)
        if (c->lay.out_ntaps[o] && !weft__scan_inner_acc(c, o)) return !c->lay.has_until;
    return false;
}

/* Bit o: output o is such an accumulator read only as y[-1] outside. None
 * when the loop has a chain to overlap: scan_chunk_sum sums them in chunks
 * beside it instead. */
static uint32_t accumulators(weft_fgraph_t *fg, const weft_apply_t *node,
                             const weft__scan_props_t *p, const weft_op_t *last)
{
    const weft__scan_core_t *c = p->core;
    uint32_t mask = 0;
    if (weft__scan_has_chain(c)) return 0;
    for (uint32_t o = 0; o < c->lay.n_out; o++)
        if (weft__scan_read_last_only(fg, weft_apply_output(node, o), last) &&
            weft__scan_inner_acc(c, o))
            mask |= 1u << o;
    return mask;
}

/* Index in r->outs[0..*n) of the pure output whose update is v, appended
 * when there is none (dz_t serves both of an RNN's weight sums). */
static size_t stack_out(weft__scan_rebuilt_t *r, size_t *n, weft_var_t *v)
{
    for (size_t j = 0; j < *n; j++)
        if (r->outs[j].update == v && !r->outs[j].init) return j;
    r->outs[*n] = (weft_scan_output_t){v, NULL, 0, NULL, NULL};
    return (*n)++;
}

/* node's spec on r's placeholders with the accumulators in mask replaced
 * by stacked outputs of their P and B (at[o][0], at[o][1]). */
static void spec_stacked(const weft_apply_t *node, const weft__scan_props_t *p, uint32_t mask,
                         weft__scan_rebuilt_t *r, weft_scan_spec_t *sp, size_t (*at)[2])
{
    const weft__scan_layout_t *l = &p->core->lay;
    weft__scan_spec_without(node, p, mask, r, sp);
    size_t slot = weft__scan_n_seq_taps(l), n = r->n_kept;
    for (uint32_t o = 0; o < l->n_out; slot += l->out_ntaps[o], o++) {
        weft_var_t *pv = NULL, *bv = NULL;
        if (!((mask >> o) & 1)) continue;
        weft__scan_acc_parts(r->upd[o], r->ph[slot], &pv, &bv); /* the copy matches as the original did */
        at[o][0] = stack_out(r, &n, pv);
        at[o][1] = stack_out(r, &n, bv);
    }
    sp->n_outputs = n;
}

/* init + reshape(ps, (-1, m))^T @ reshape(bs, (-1, k)): the last state. */
static weft_var_t *sum_after(weft_graph_t *g, weft_var_t *init, weft_var_t *ps, weft_var_t *bs,
                             const char *file, int line)
{
    const int64_t sp[2] = {-1, weft_type_dim(weft_var_type(ps), 2)};
    const int64_t sb[2] = {-1, weft_type_dim(weft_var_type(bs), 2)};
    weft_var_t *pf = weft_reshape_at(g, ps, 2, sp, file, line);
    weft_var_t *bf = weft_reshape_at(g, bs, 2, sb, file, line);
    weft_var_t *pt = weft_transpose_at(g, pf, file, line);
    return weft_binary_at(g, WEFT_ELEMWISE_ADD, init, weft_dot_at(g, pt, bf, file, line), file,
                          line);
}

/* Whether every reader y[-1] of old has v's type (a user's initial value of
 * another static shape than the state's would change it: left alone). */
static bool same_type_readers(weft_fgraph_t *fg, weft_var_t *old, const weft_var_t *v)
{
    const weft_client_t *cl = NULL;
    size_t n = 0;
    if (weft_fgraph_clients(fg, old, &cl, &n) != WEFT_OK) return false;
    for (size_t i = 0; i < n; i++)
        if (!weft_type_equal(weft_var_type(weft_apply_output(cl[i].node, 0)), weft_var_type(v)))
            return false;
    return true;
}

/* Records the replacements, if every sum has its readers' type: kept
 * outputs by the new node's, each reader y[-1] of an accumulator by its sum
 * after the loop. */
static weft_status_t replace(weft_fgraph_t *fg, const weft_apply_t *node,
                             const weft__scan_rebuilt_t *r, weft_var_t *const *outs,
                             uint32_t mask, size_t (*at)[2], const char *file, int line,
                             weft_rewrite_result_t *res)
{
    weft_graph_t *g = weft_fgraph_graph(fg);
    const weft__scan_layout_t *l = &weft__scan_get(weft_apply_op(node))->core->lay;
    weft_var_t *sum[WEFT_OP_MAX_OUTPUTS] = {0};
    weft_status_t s = WEFT_OK;
    size_t pos = 1 + l->n_seq;
    for (uint32_t o = 0; o < l->n_out && s == WEFT_OK; o++) {
        weft_var_t *init = l->out_ntaps[o] ? weft_apply_input(node, pos++) : NULL;
        if (!((mask >> o) & 1)) continue;
        s = weft__got(g, sum[o] = sum_after(g, init, outs[at[o][0]], outs[at[o][1]], file, line));
        if (s == WEFT_OK && !same_type_readers(fg, weft_apply_output(node, o), sum[o]))
            return WEFT_OK;
    }
    for (size_t j = 0; j < r->n_kept && s == WEFT_OK; j++)
        s = weft_rewrite_result_replace(res, weft_apply_output(node, r->kept[j]), outs[j]);
    for (uint32_t o = 0; o < l->n_out && s == WEFT_OK; o++) {
        const weft_client_t *cl = NULL;
        size_t n = 0;
        if (!sum[o]) continue;
        s = weft_fgraph_clients(fg, weft_apply_output(node, o), &cl, &n);
        for (size_t i = 0; i < n && s == WEFT_OK; i++)
            s = weft_rewrite_result_replace(res, weft_apply_output(cl[i].node, 0), sum[o]);
    }
    return s;
}

static weft_status_t pushout_dot_transform(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                           weft_rewrite_result_t *res)
{
    (void)user;
    const weft__scan_props_t *p = weft__scan_get(weft_apply_op(node));
    /* last-state outputs come from scan_save_mem, which runs later */
    if (!p || p->last_mask) return WEFT_OK;
    weft_graph_t *g = weft_fgraph_graph(fg);
    const weft_slice_t idx[1] = {WEFT_SLICE_AT(-1)};
    const weft_op_t *last = NULL;
    weft_status_t s = weft_subtensor_op(g, 1, idx, &last);
    if (s != WEFT_OK) return s;
    uint32_t mask = accumulators(fg, node, p, last);
    size_t n_acc = (size_t)__builtin_popcount(mask);
    if (!mask || p->core->lay.n_out + n_acc > WEFT_OP_MAX_OUTPUTS) return WEFT_OK;
    const char *file = NULL;
    int line = 0;
    weft_apply_trace(node, &file, &line);
    weft__scan_rebuilt_t r = {0};
    s = weft__scan_copy_inner(g, p->core, &r, file, line);
    if (s != WEFT_OK) return s;
    weft_scan_spec_t sp = WEFT_SCAN_SPEC_INIT;
    size_t at[WEFT_OP_MAX_OUTPUTS][2];
    spec_stacked(node, p, mask, &r, &sp, at);
    weft_var_t *outs[WEFT_OP_MAX_OUTPUTS];
    s = weft__got(g, weft_scan_at(g, &sp, outs, file, line));
    return s == WEFT_OK ? replace(fg, node, &r, outs, mask, at, file, line, res) : s;
}

weft__scan_node_rewrite_fn weft__scan_push_out_dot_fn(void)
{
    return pushout_dot_transform;
}
