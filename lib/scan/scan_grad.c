/* Scan's gradient: backpropagation through time as a reverse Scan
 * (docs/control-flow.md §5.5). This half builds the backward step.
 *
 * Forward step t reads sequence rows x_{t+d} (d = tap - min tap), carried
 * states h_{t+k} (k < 0, rows of init before step 0) and non-sequences p,
 * and computes each output's update u_t. Backward, for t = n-1 .. 0, with
 * lam the gradient reaching h_t from later steps (zeros at first):
 *   cost_t = sum_o sum(u_t^o * (gY[t]^o + lam_t^o))
 * whose gradient with respect to every placeholder gives the contributions
 * of step t: to x's rows, to the earlier states h_{t+k} (gathered into lam
 * by the reverse scan, scan_grad_rev.c) and to p (accumulated). The
 * expressions read stored forward values only: u_t is replaced by the
 * forward node's stored row, nothing is recomputed. A reverse node (a
 * go_backwards scan, or a gradient's own: second order) is differentiated
 * as the forward scan over its flipped sequences ("reverse scans" below). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/ctor_int.h"
#include "scan_grad_int.h"
#include "weft/array_ops.h"
#include "weft/elemwise.h"
#include "weft/grad.h"
#include "weft/index_ops.h"
#include "weft/reduce.h"
#include "weft/shape_ops.h"
#include "weft/symshape.h"

static bool is_float(const weft_var_t *v)
{
    weft_dtype_t d = weft_type_dtype(weft_var_type(v));
    return d == WEFT_FLOAT16 || d == WEFT_FLOAT32 || d == WEFT_FLOAT64;
}

bool weft__bptt_is_window(const weft__bptt_t *b, size_t o)
{
    return b->l->out_ntaps[o] && (b->l->out_ntaps[o] != 1 || b->l->out_taps[o][0] != -1);
}

weft_status_t weft__bptt_unsupported(weft__bptt_t *b, const char *why)
{
    char nb[160];
    weft_apply_describe(b->node, nb, sizeof nb);
    return weft_graph_set_error(b->g, WEFT_ENOGRAD, "Scan: %s has no gradient: %s", nb, why);
}

/* The gradient is built on the graph the user wrote, before any rewrite:
 * a node already rewritten to last states (a JSON graph saved after
 * compilation) is refused. */
static weft_status_t check_supported(weft__bptt_t *b)
{
    if (b->p->last_mask)
        return weft__bptt_unsupported(b, "it returns last states only (scan_save_mem ran): "
                                         "take the gradient before rewriting");
    return WEFT_OK;
}

/* ---- reverse scans --------------------------------------------------------------------
 * Step t of a reverse scan of n steps reads x[n-1-t+d] (d = tap - min tap):
 * so does step t of the forward scan over x' = flip(x[:n+D]) (D the taps'
 * span) with taps -tap in reverse order (x'[t + D - d]), and both stack the
 * same outputs (in step order). The gradient is that forward scan's, taken
 * back from x' to x. */

/* Sequence taps negated and reversed (lay.reverse cleared). */
static void forward_layout(weft__bptt_t *b)
{
    b->lay = b->p->core->lay;
    b->l = &b->lay;
    const weft__scan_layout_t *node = &b->p->core->lay;
    for (uint32_t q = 0; b->lay.reverse && q < b->lay.n_seq; q++) {
        uint32_t n = b->lay.seq_ntaps[q];
        for (uint32_t i = 0; i < n; i++) b->lay.seq_taps[q][i] = -node->seq_taps[q][n - 1 - i];
    }
    b->lay.reverse = 0;
}

/* The placeholders of each sequence in forward_layout's tap order. */
static void forward_placeholders(weft__bptt_t *b)
{
    for (uint32_t q = 0; b->p->core->lay.reverse && q < b->l->n_seq; q++)
        for (size_t i = 0, j = b->l->seq_ntaps[q] - 1; i < j; i++, j--) {
            weft_var_t *t = b->ph[b->seq0[q] + i];
            b->ph[b->seq0[q] + i] = b->ph[b->seq0[q] + j];
            b->ph[b->seq0[q] + j] = t;
        }
}

static int64_t span(const weft__scan_layout_t *l, uint32_t q)
{
    return l->seq_taps[q][l->seq_ntaps[q] - 1] - l->seq_taps[q][0];
}

/* The step count asked for (scan_run.c's rule: n_steps, else the shortest
 * sequence's rows less its span): *n when static, else *n = -1 and an
 * int64 0-d variable holding it. */
static weft_var_t *asked_steps(weft__bptt_t *b, int64_t *n)
{
    weft_graph_t *g = b->g;
    weft_var_t *v = weft_apply_input(b->node, 0), *m = NULL;
    *n = -1;
    if (!weft__scan_const_steps(b->node, n) || *n >= 0) return v;
    /* count from the sequences: the least rows less span, when all static */
    bool all_static = b->l->n_seq > 0;
    for (uint32_t q = 0; q < b->l->n_seq && all_static; q++) {
        int64_t len = weft_type_dim(weft_var_type(weft_apply_input(b->node, 1 + q)), 0);
        all_static = len >= 0;
        if (all_static && (q == 0 || len - span(b->l, q) < *n)) *n = len - span(b->l, q);
    }
    if (all_static) {
        if (*n < 0) *n = 0; /* too short a sequence: the node fails at run time */
        return v;
    }
    *n = -1;
    for (uint32_t q = 0; q < b->l->n_seq; q++) {
        weft_var_t *x = weft_apply_input(b->node, 1 + q);
        weft_var_t *r = weft_sub(g, weft_shape_i_at(g, x, 0, b->file, b->line),
                                 weft_constant_scalar_at(g, WEFT_INT64, (double)span(b->l, q),
                                                         b->file, b->line));
        m = m ? weft_minimum(g, m, r) : r;
    }
    return m;
}

/* x' of sequence q: flipped views of x (rows [:n+D]) when n is static, a
 * gather of those rows in reverse order otherwise. */
static weft_var_t *flipped(weft__bptt_t *b, uint32_t q, int64_t n, weft_var_t *nv)
{
    weft_graph_t *g = b->g;
    const int axis0[1] = {0};
    weft_var_t *x = weft_apply_input(b->node, 1 + q);
    int64_t d = span(b->l, q);
    if (n < 0) {
        weft_var_t *m1 = weft_constant_scalar_at(g, WEFT_INT64, -1.0, b->file, b->line);
        weft_var_t *last = weft_add(g, nv, weft_constant_scalar_at(g, WEFT_INT64, (double)d - 1.0,
                                                                   b->file, b->line));
        b->rows[q] = weft_arange_sym_at(g, last, m1, m1, WEFT_INT64, b->file, b->line);
        return weft_take_at(g, x, b->rows[q], 0, b->file, b->line);
    }
    b->n_read[q] = n + d;
    if (weft_type_dim(weft_var_type(x), 0) != n + d) {
        const weft_slice_t head[1] = {WEFT_SLICE(0, n + d, 1)};
        x = weft_subtensor_at(g, x, 1, head, b->file, b->line);
    }
    return weft_flip_at(g, x, 1, axis0, b->file, b->line);
}

weft_var_t *weft__bptt_seq(weft__bptt_t *b, uint32_t q)
{
    if (b->seq[q]) return b->seq[q];
    if (!b->p->core->lay.reverse) return b->seq[q] = weft_apply_input(b->node, 1 + q);
    if (!b->asked) {
        b->asked_var = asked_steps(b, &b->asked_n);
        b->asked = true;
    }
    return b->seq[q] = flipped(b, q, b->asked_n, b->asked_var);
}

/* The gradients gx' of x' taken back to the reverse node's sequences x:
 * gx' flipped back, zeros on the rows no step read (added into zeros at
 * rows [0, n+D), or at the gathered rows for a run-time count). */
static weft_status_t sequences_back(weft__bptt_t *b, weft_var_t **input_grads)
{
    weft_graph_t *g = b->g;
    const int axis0[1] = {0};
    weft_status_t st = WEFT_OK;
    for (uint32_t q = 0; b->p->core->lay.reverse && q < b->l->n_seq && st == WEFT_OK; q++) {
        weft_var_t **gx = &input_grads[1 + q], *x = weft_apply_input(b->node, 1 + q), *v;
        if (!*gx) continue;
        weft_var_t *zeros = weft_zeros_like_at(g, x, b->file, b->line);
        if (b->rows[q]) {
            v = weft_set_at_at(g, zeros, b->rows[q], *gx, 0, true, b->file, b->line);
        } else {
            v = weft_flip_at(g, *gx, 1, axis0, b->file, b->line);
            const weft_slice_t head[1] = {WEFT_SLICE(0, b->n_read[q], 1)};
            if (weft_type_dim(weft_var_type(x), 0) != b->n_read[q])
                v = weft_inc_subtensor_at(g, zeros, v, 1, head, b->file, b->line);
        }
        st = weft__got(g, *gx = v);
    }
    return st;
}

/* A placeholder in g of the type (dtype, rank, static lengths) of v. */
static weft_var_t *like(weft__bptt_t *b, const weft_var_t *v, const char *name)
{
    return weft__scan_placeholder_like(b->g, v, name, b->file, b->line);
}

/* The forward inner graph copied onto fresh placeholders of g. */
static weft_status_t copy_forward(weft__bptt_t *b)
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

/* The gradient reaching u_t^o from later steps, or NULL (not carried):
 * the state lam itself, or the last row of the window. */
static weft_var_t *carried_adjoint(weft__bptt_t *b, size_t o)
{
    if (!b->l->out_ntaps[o]) return NULL;
    if (!weft__bptt_is_window(b, o)) return b->lam[o] = like(b, b->ph[b->car0[o]], "lam");
    b->lam[o] = like(b, weft_apply_input(b->node, b->init_pos[o]), "lam_window");
    const weft_slice_t last[1] = {WEFT_SLICE_AT(-1)};
    return weft_subtensor_at(b->g, b->lam[o], 1, last, b->file, b->line);
}

/* cost_t and its gradient with respect to every float placeholder. */
static weft_status_t step_grads(weft__bptt_t *b, weft_var_t *const *ograds, bool *any)
{
    weft_graph_t *g = b->g;
    weft_var_t *cost = NULL;
    for (uint32_t o = 0; o < b->l->n_out; o++) {
        if (!is_float(b->fo[o])) continue;
        weft_var_t *tot = carried_adjoint(b, o);
        if (ograds[o]) {
            b->gh[o] = like(b, b->fo[o], "g_out_t");
            tot = tot ? weft_add(g, b->gh[o], tot) : b->gh[o];
        }
        if (!tot) continue;
        weft_var_t *term = weft_sum(g, weft_mul(g, b->fo[o], tot), 0, NULL, false);
        cost = cost ? weft_add(g, cost, term) : term;
    }
    *any = cost != NULL;
    if (!cost) return weft__ctor_status(g) ? weft__ctor_status(g) : WEFT_OK;
    weft_var_t *wrt[WEFT__SCAN_MAX_INNER_IN];
    size_t n = 0, map[WEFT__SCAN_MAX_INNER_IN];
    for (size_t k = 0; k < b->n_in; k++)
        if (is_float(b->ph[k])) {
            map[n] = k;
            wrt[n++] = b->ph[k];
        }
    weft_grad_options_t go = WEFT_GRAD_OPTIONS_INIT;
    go.disconnected = WEFT_GRAD_MISSING_ZERO;
    go.undefined = WEFT_GRAD_MISSING_ZERO;
    weft_var_t *gr[WEFT__SCAN_MAX_INNER_IN];
    if (!weft_grads_at(g, cost, n, wrt, &go, gr, b->file, b->line)) return weft__ctor_status(g);
    for (size_t i = 0; i < n; i++) b->d[map[i]] = gr[i];
    return WEFT_OK;
}

typedef struct step_io {
    weft_var_t *in[WEFT__SCAN_MAX_INNER_IN + 3 * WEFT_OP_MAX_OUTPUTS];
    weft_var_t *upd[WEFT__SCAN_MAX_INNER_IN];
    size_t n_in, n_upd, map[WEFT__SCAN_MAX_INNER_IN];
} step_io_t;

/* The backward step's inputs (placeholders, output gradients, adjoints and
 * a stored-row placeholder per output reaching the cost) and outputs. */
static weft_status_t step_io(weft__bptt_t *b, step_io_t *io)
{
    weft_status_t st = WEFT_OK;
    for (size_t k = 0; k < b->n_in; k++) {
        io->in[io->n_in++] = b->ph[k];
        if (!b->d[k]) continue;
        io->map[io->n_upd] = k;
        io->upd[io->n_upd++] = b->d[k];
    }
    for (uint32_t o = 0; o < b->l->n_out && st == WEFT_OK; o++) {
        if (b->gh[o]) io->in[io->n_in++] = b->gh[o];
        if (b->lam[o]) io->in[io->n_in++] = b->lam[o];
        /* an update that is a placeholder itself is read as that */
        if (!(b->gh[o] || b->lam[o]) || !weft_var_owner(b->fo[o])) continue;
        st = weft__got(b->g, b->hs[o] = like(b, b->fo[o], "u_t"));
        io->in[io->n_in++] = b->hs[o];
    }
    return st;
}

/* The gradient expressions read u_t (tanh's gradient reads its output):
 * they read the forward pass's stored row instead, so the reverse scan does
 * not recompute the step (the forward nodes left unread are dropped with
 * the copy). An in-place edit of the backward graph through a FunctionGraph
 * over it (clone = false): these nodes are the hook's own. Also records
 * which placeholders the step reads (the reverse scan is given only those). */
static weft_status_t use_stored_states(weft__bptt_t *b)
{
    step_io_t *io = calloc(1, sizeof *io);
    if (!io) return weft_graph_set_error(b->g, WEFT_ENOMEM, "Scan gradient: out of memory");
    weft_status_t st = step_io(b, io);
    weft_fgraph_t *fg = NULL;
    weft_fgraph_options_t fo = WEFT_FGRAPH_OPTIONS_INIT;
    fo.clone = false;
    if (st == WEFT_OK && io->n_upd)
        st = weft_fgraph_create(b->g, io->n_in, io->in, io->n_upd, io->upd, &fo, NULL, &fg);
    for (uint32_t o = 0; o < b->l->n_out && st == WEFT_OK; o++) {
        if (!b->hs[o]) continue;
        if (fg && weft_fgraph_contains_var(fg, b->fo[o]))
            st = weft_fgraph_replace(fg, b->fo[o], b->hs[o], "scan_grad_stored");
        else
            b->hs[o] = NULL; /* the gradient does not read u_t */
    }
    for (size_t i = 0; i < io->n_upd && st == WEFT_OK; i++)
        b->d[io->map[i]] = weft_fgraph_output(fg, i);
    for (size_t k = 0; k < b->n_in && st == WEFT_OK; k++)
        b->used[k] = fg && weft_fgraph_n_clients(fg, b->ph[k]) > 0;
    for (uint32_t o = 0; o < b->l->n_out && st == WEFT_OK; o++)
        if (b->gh[o] && !(fg && weft_fgraph_n_clients(fg, b->gh[o]) > 0)) b->gh[o] = NULL;
    if (st != WEFT_OK && fg) weft_graph_set_error(b->g, st, "%s", weft_fgraph_last_error(fg));
    weft_fgraph_destroy(fg);
    free(io);
    return st;
}

static void layout(weft__bptt_t *b)
{
    const weft__scan_layout_t *l = b->l;
    size_t k = 0, pos = 1 + l->n_seq;
    for (uint32_t q = 0; q < l->n_seq; q++) {
        b->seq0[q] = k;
        k += l->seq_ntaps[q];
    }
    for (uint32_t o = 0; o < l->n_out; o++) {
        b->car0[o] = k;
        k += l->out_ntaps[o];
        if (l->out_ntaps[o]) b->init_pos[o] = pos++;
    }
    b->ns0 = k;
}

weft_status_t weft__scan_grad(weft_graph_t *g, const weft_apply_t *node,
                              weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    weft__bptt_t *b = calloc(1, sizeof *b);
    if (!b) return weft_graph_set_error(g, WEFT_ENOMEM, "Scan gradient: out of memory");
    b->g = g;
    b->node = node;
    b->p = weft__scan_get(weft_apply_op(node));
    weft_apply_trace(node, &b->file, &b->line);
    forward_layout(b);
    layout(b);
    bool any = false;
    weft_status_t st = check_supported(b);
    if (st == WEFT_OK) st = copy_forward(b);
    forward_placeholders(b);
    if (st == WEFT_OK) st = step_grads(b, output_grads, &any);
    if (st == WEFT_OK && any) st = use_stored_states(b);
    if (st == WEFT_OK && any) st = weft__bptt_reverse(b, output_grads, input_grads);
    if (st == WEFT_OK && any) st = sequences_back(b, input_grads);
    if (st == WEFT_OK && any) st = weft__bptt_guard_no_steps(b, input_grads);
    free(b);
    return st;
}
