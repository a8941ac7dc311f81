/* Scan's gradient: backpropagation through time as a reverse Scan
 * (docs/control-flow.md §5.5).
 *
 * Forward step s: h_s = f(x_s, h_{s-1}, p) for each carried output,
 * y_s = f_y(x_s, h_{s-1}, p) for each pure one. Backward, for s = n-1 .. 0,
 * with lam the gradient reaching h_s from later steps (zeros at first):
 *   cost_s = sum_o sum(h_s^o * (gH[s]^o + lam^o)) + sum_k sum(y_s^k * gY[s]^k)
 *   lam <- d cost_s / d h_{s-1};  acc_p <- acc_p + d cost_s / d p;
 *   gx[s] = d cost_s / d x_s.
 * The reverse Scan reads, at its step t, row s = n-1-t of the sequences x,
 * of Hprev = concat(init[None], H[:-1]) (the states the forward loop read,
 * taken from its stacked output: nothing is recomputed), of gH and gY; it
 * carries lam and acc_p and stacks gx. The gradients are then gx flipped
 * back, lam's and acc's last rows (which scan_save_mem keeps alone).
 * Supported: sequence taps {0}, carried taps {-1}, no until, stacked
 * outputs; others report WEFT_ENOGRAD naming the node. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/ctor_int.h"
#include "scan_int.h"
#include "weft/array_ops.h"
#include "weft/elemwise.h"
#include "weft/grad.h"
#include "weft/reduce.h"
#include "weft/shape_ops.h"

#define MAXV (WEFT_SCAN_MAX_SEQS + WEFT_OP_MAX_OUTPUTS + WEFT_SCAN_MAX_NONSEQS)

typedef struct bptt {
    weft_graph_t *g;
    const weft_apply_t *node;
    const weft__scan_props_t *p;
    const weft__scan_layout_t *l;
    const char *file;
    int line;
    size_t n_in;               /* forward inner inputs */
    weft_var_t *ph[MAXV];      /* forward placeholders copied into g: xs, hp, ps */
    weft_var_t *fo[WEFT_OP_MAX_OUTPUTS]; /* forward outputs on them */
    weft_var_t *lam[WEFT_OP_MAX_OUTPUTS], *gh[WEFT_OP_MAX_OUTPUTS], *gy[WEFT_OP_MAX_OUTPUTS];
    weft_var_t *acc[WEFT_SCAN_MAX_NONSEQS];
    weft_var_t *hs[WEFT_OP_MAX_OUTPUTS]; /* the stored h_s (replaces its recomputation) */
    weft_var_t *d[MAXV];       /* d cost_s / d placeholder (float ones) */
    size_t init_pos[WEFT_OP_MAX_OUTPUTS];
} bptt_t;

static bool is_float(const weft_var_t *v)
{
    weft_dtype_t d = weft_type_dtype(weft_var_type(v));
    return d == WEFT_FLOAT16 || d == WEFT_FLOAT32 || d == WEFT_FLOAT64;
}

static weft_status_t unsupported(bptt_t *b, const char *why)
{
    char nb[160];
    weft_apply_describe(b->node, nb, sizeof nb);
    return weft_graph_set_error(b->g, WEFT_ENOGRAD, "Scan: %s has no gradient: %s", nb, why);
}

static weft_status_t check_supported(bptt_t *b)
{
    const weft__scan_layout_t *l = b->l;
    if (l->has_until) return unsupported(b, "until conditions are not differentiated");
    if (l->reverse) return unsupported(b, "reverse scans are not differentiated");
    if (b->p->last_mask) return unsupported(b, "it returns last states only");
    for (uint32_t s = 0; s < l->n_seq; s++)
        if (l->seq_ntaps[s] != 1 || l->seq_taps[s][0] != 0)
            return unsupported(b, "sequence taps other than {0}");
    for (uint32_t o = 0; o < l->n_out; o++)
        if (l->out_ntaps[o] && (l->out_ntaps[o] != 1 || l->out_taps[o][0] != -1))
            return unsupported(b, "output taps other than {-1}");
    return WEFT_OK;
}

/* A placeholder in g of the type (dtype, rank, static lengths) of v. */
static weft_var_t *like(bptt_t *b, const weft_var_t *v, const char *name)
{
    return weft__scan_placeholder_like(b->g, v, name, b->file, b->line);
}

/* The forward inner graph copied onto fresh placeholders of g. */
static weft_status_t copy_forward(bptt_t *b)
{
    const weft__scan_core_t *c = b->p->core;
    weft_status_t s = WEFT_OK;
    b->n_in = c->n_in;
    for (size_t k = 0; k < c->n_in && s == WEFT_OK; k++)
        s = weft__got(b->g, b->ph[k] = like(b, weft_fgraph_input(c->fg, k),
                                             weft_var_name(weft_fgraph_input(c->fg, k))));
    weft_var_t *outs[WEFT_OP_MAX_OUTPUTS + 1];
    if (s == WEFT_OK) s = weft__scan_expand(b->g, c, b->ph, outs, b->file, b->line);
    for (uint32_t o = 0; s == WEFT_OK && o < b->l->n_out; o++) b->fo[o] = outs[o];
    return s;
}

static weft_var_t *add_term(weft_graph_t *g, weft_var_t *cost, weft_var_t *term)
{
    return cost ? weft_add(g, cost, term) : term;
}

/* cost_s and its gradient with respect to every float placeholder. */
static weft_status_t step_grads(bptt_t *b, weft_var_t *const *ograds, bool *any)
{
    weft_graph_t *g = b->g;
    const weft__scan_layout_t *l = b->l;
    weft_var_t *cost = NULL;
    size_t hp = l->n_seq;
    for (uint32_t o = 0; o < l->n_out; o++) {
        bool carried = l->out_ntaps[o] > 0;
        if (carried) hp++;
        if (!is_float(b->fo[o])) continue;
        weft_var_t *tot = NULL;
        if (carried) tot = b->lam[o] = like(b, b->ph[hp - 1], "lam");
        if (ograds[o]) {
            b->gh[o] = like(b, b->fo[o], "g_out_t");
            tot = tot ? weft_add(g, b->gh[o], tot) : b->gh[o];
        }
        if (tot) cost = add_term(g, cost, weft_sum(g, weft_mul(g, b->fo[o], tot), 0, NULL, false));
    }
    *any = cost != NULL;
    if (!cost) return weft__ctor_status(g) ? weft__ctor_status(g) : WEFT_OK;
    weft_var_t *wrt[MAXV];
    size_t n = 0, map[MAXV];
    for (size_t k = 0; k < b->n_in; k++)
        if (is_float(b->ph[k])) {
            map[n] = k;
            wrt[n++] = b->ph[k];
        }
    weft_grad_options_t go = WEFT_GRAD_OPTIONS_INIT;
    go.disconnected = WEFT_GRAD_MISSING_ZERO;
    go.undefined = WEFT_GRAD_MISSING_ZERO;
    weft_var_t *gr[MAXV];
    if (!weft_grads_at(g, cost, n, wrt, &go, gr, b->file, b->line)) return weft__ctor_status(g);
    for (size_t i = 0; i < n; i++) b->d[map[i]] = gr[i];
    return WEFT_OK;
}

/* Hprev = concat(init[None], H[:-1]): the state each forward step read. */
static weft_var_t *states_read(bptt_t *b, size_t o)
{
    weft_graph_t *g = b->g;
    const weft_slice_t head[1] = {WEFT_SLICE(0, -1, 1)};
    weft_var_t *parts[2] = {
        weft_expand_dims_at(g, weft_apply_input(b->node, b->init_pos[o]), 0, b->file, b->line),
        weft_subtensor_at(g, weft_apply_output(b->node, o), 1, head, b->file, b->line)};
    return weft_concatenate_at(g, 2, parts, 0, b->file, b->line);
}

typedef struct bspec {
    weft_scan_seq_t seqs[WEFT_SCAN_MAX_SEQS];
    weft_scan_output_t outs[WEFT_OP_MAX_OUTPUTS];
    weft_var_t *seq_inner[WEFT_SCAN_MAX_SEQS];
    weft_var_t *out_inner[WEFT_OP_MAX_OUTPUTS];
    weft_var_t *ns_outer[WEFT_SCAN_MAX_NONSEQS];
    size_t n_seq, n_out;
    /* what each backward output is: 0 lam of output idx, 1 acc of nonseq idx, 2 gx of seq idx */
    int kind[WEFT_OP_MAX_OUTPUTS];
    size_t idx[WEFT_OP_MAX_OUTPUTS];
} bspec_t;

static weft_status_t add_seq(bptt_t *b, bspec_t *s, weft_var_t *outer, weft_var_t *inner)
{
    if (s->n_seq == WEFT_SCAN_MAX_SEQS) return unsupported(b, "too many sequences for the reverse scan");
    s->seq_inner[s->n_seq] = inner;
    s->seqs[s->n_seq] = (weft_scan_seq_t){outer, 0, NULL, &s->seq_inner[s->n_seq]};
    s->n_seq++;
    return outer ? WEFT_OK : weft__ctor_status(b->g);
}

static weft_status_t add_out(bptt_t *b, bspec_t *s, weft_var_t *update, weft_var_t *init,
                             weft_var_t *inner, int kind, size_t idx)
{
    if (s->n_out == WEFT_OP_MAX_OUTPUTS) return unsupported(b, "too many outputs for the reverse scan");
    s->out_inner[s->n_out] = inner;
    s->outs[s->n_out] = (weft_scan_output_t){update, init, 0, NULL, init ? &s->out_inner[s->n_out] : NULL};
    s->kind[s->n_out] = kind;
    s->idx[s->n_out] = idx;
    s->n_out++;
    return update && (!init || inner) ? WEFT_OK : weft__ctor_status(b->g);
}

/* The reverse scan's sequences and outputs. */
static weft_status_t backward_spec(bptt_t *b, weft_var_t *const *ograds, bspec_t *s)
{
    weft_graph_t *g = b->g;
    const weft__scan_layout_t *l = b->l;
    weft_status_t st = WEFT_OK;
    size_t hp = l->n_seq, ns0 = 1 + l->n_seq + weft__scan_n_carry(l);
    for (uint32_t q = 0; q < l->n_seq && st == WEFT_OK; q++)
        st = add_seq(b, s, weft_apply_input(b->node, 1 + q), b->ph[q]);
    for (uint32_t o = 0; o < l->n_out && st == WEFT_OK; o++) {
        if (l->out_ntaps[o]) st = add_seq(b, s, states_read(b, o), b->ph[hp++]);
        if (st == WEFT_OK && b->gh[o]) st = add_seq(b, s, ograds[o], b->gh[o]);
        if (st == WEFT_OK && b->hs[o]) st = add_seq(b, s, weft_apply_output(b->node, o), b->hs[o]);
    }
    hp = l->n_seq;
    for (uint32_t o = 0; o < l->n_out && st == WEFT_OK; o++) {
        if (!l->out_ntaps[o]) continue;
        size_t k = hp++;
        if (!b->lam[o]) continue;
        weft_var_t *init = weft_apply_input(b->node, b->init_pos[o]);
        st = add_out(b, s, b->d[k], weft_zeros_like_at(g, init, b->file, b->line), b->lam[o], 0, o);
    }
    for (uint32_t k = 0; k < l->n_nonseq && st == WEFT_OK; k++) {
        size_t ph = l->n_seq + weft__scan_n_carry(l) + k;
        s->ns_outer[k] = weft_apply_input(b->node, ns0 + k);
        if (!b->d[ph]) continue;
        b->acc[k] = like(b, b->ph[ph], "acc");
        st = add_out(b, s, weft_add(g, b->acc[k], b->d[ph]),
                     weft_zeros_like_at(g, s->ns_outer[k], b->file, b->line), b->acc[k], 1, k);
    }
    for (uint32_t q = 0; q < l->n_seq && st == WEFT_OK; q++)
        if (b->d[q]) st = add_out(b, s, b->d[q], NULL, NULL, 2, q);
    return st;
}

/* d cost / d inputs from the reverse scan's outputs. */
static weft_status_t collect(bptt_t *b, const bspec_t *s, weft_var_t *const *outs,
                             weft_var_t **input_grads)
{
    weft_graph_t *g = b->g;
    const weft_slice_t last[1] = {WEFT_SLICE_AT(-1)};
    const int axis0[1] = {0};
    size_t ns0 = 1 + b->l->n_seq + weft__scan_n_carry(b->l);
    for (size_t k = 0; k < s->n_out; k++) {
        weft_var_t *v = NULL;
        size_t pos = 0;
        if (s->kind[k] == 0) {
            pos = b->init_pos[s->idx[k]];
            v = weft_subtensor_at(g, outs[k], 1, last, b->file, b->line);
        } else if (s->kind[k] == 1) {
            pos = ns0 + s->idx[k];
            v = weft_subtensor_at(g, outs[k], 1, last, b->file, b->line);
        } else {
            pos = 1 + s->idx[k];
            v = weft_flip_at(g, outs[k], 1, axis0, b->file, b->line);
        }
        if (!v) return weft__ctor_status(g);
        input_grads[pos] = v;
    }
    return WEFT_OK;
}

/* The gradient expressions read h_s = f(...) (tanh's gradient reads its
 * output): they read the forward pass's stored row instead, so the reverse
 * scan does not recompute the step (the forward nodes left unread are
 * dropped with the copy). An in-place edit of the backward graph through a
 * FunctionGraph over it (clone = false): these nodes are the hook's own. */
static weft_status_t use_stored_states(bptt_t *b)
{
    weft_var_t *upd[MAXV], *in[MAXV + 3 * WEFT_OP_MAX_OUTPUTS];
    size_t n = 0, n_in = 0, map[MAXV];
    weft_status_t st = WEFT_OK;
    for (size_t k = 0; k < b->n_in; k++) {
        in[n_in++] = b->ph[k];
        if (b->d[k]) {
            map[n] = k;
            upd[n++] = b->d[k];
        }
    }
    for (uint32_t o = 0; o < b->l->n_out && st == WEFT_OK; o++) {
        if (b->gh[o]) in[n_in++] = b->gh[o];
        if (!b->lam[o]) continue;
        in[n_in++] = b->lam[o];
        st = weft__got(b->g, b->hs[o] = like(b, b->fo[o], "h_t"));
        in[n_in++] = b->hs[o];
    }
    if (!n || st != WEFT_OK) return st;
    weft_fgraph_options_t fo = WEFT_FGRAPH_OPTIONS_INIT;
    fo.clone = false;
    weft_fgraph_t *fg = NULL;
    st = weft_fgraph_create(b->g, n_in, in, n, upd, &fo, NULL, &fg);
    for (uint32_t o = 0; o < b->l->n_out && st == WEFT_OK; o++) {
        if (!b->hs[o]) continue;
        if (weft_fgraph_contains_var(fg, b->fo[o]))
            st = weft_fgraph_replace(fg, b->fo[o], b->hs[o], "scan_grad_stored");
        else
            b->hs[o] = NULL; /* the gradient does not read h_s */
    }
    for (size_t i = 0; i < n && st == WEFT_OK; i++) b->d[map[i]] = weft_fgraph_output(fg, i);
    if (st != WEFT_OK && fg) weft_graph_set_error(b->g, st, "%s", weft_fgraph_last_error(fg));
    weft_fgraph_destroy(fg);
    return st;
}

static weft_status_t bptt_build(bptt_t *b, weft_var_t *const *ograds, weft_var_t **input_grads)
{
    weft_status_t st = check_supported(b);
    bool any = false;
    if (st == WEFT_OK) st = copy_forward(b);
    if (st == WEFT_OK) st = step_grads(b, ograds, &any);
    if (st != WEFT_OK || !any) return st;
    st = use_stored_states(b);
    if (st != WEFT_OK) return st;
    bspec_t *s = calloc(1, sizeof *s);
    if (!s) return weft_graph_set_error(b->g, WEFT_ENOMEM, "Scan gradient: out of memory");
    st = backward_spec(b, ograds, s);
    weft_var_t *outs[WEFT_OP_MAX_OUTPUTS];
    if (st == WEFT_OK && s->n_out) {
        weft_scan_spec_t sp = WEFT_SCAN_SPEC_INIT;
        char name[WEFT__SCAN_NAME_MAX + 8];
        snprintf(name, sizeof name, "grad_%s", b->p->name[0] ? b->p->name : "scan");
        sp.n_seqs = s->n_seq;
        sp.seqs = s->seqs;
        sp.n_outputs = s->n_out;
        sp.outputs = s->outs;
        sp.n_nonseqs = b->l->n_nonseq;
        sp.nonseq_outer = s->ns_outer;
        sp.nonseq_inner = b->ph + b->l->n_seq + weft__scan_n_carry(b->l);
        sp.n_steps_var = weft_apply_input(b->node, 0);
        sp.reverse = true;
        sp.name = name;
        st = weft__got(b->g, weft_scan_at(b->g, &sp, outs, b->file, b->line));
        if (st == WEFT_OK) st = collect(b, s, outs, input_grads);
    }
    free(s);
    return st;
}

weft_status_t weft__scan_grad(weft_graph_t *g, const weft_apply_t *node,
                              weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    bptt_t *b = calloc(1, sizeof *b);
    if (!b) return weft_graph_set_error(g, WEFT_ENOMEM, "Scan gradient: out of memory");
    b->g = g;
    b->node = node;
    b->p = weft__scan_get(weft_apply_op(node));
    b->l = &b->p->core->lay;
    weft_apply_trace(node, &b->file, &b->line);
    size_t pos = 1 + b->l->n_seq;
    for (uint32_t o = 0; o < b->l->n_out; o++)
        if (b->l->out_ntaps[o]) b->init_pos[o] = pos++;
    weft_status_t st = bptt_build(b, output_grads, input_grads);
    free(b);
    return st;
}
