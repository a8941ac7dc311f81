/* Scan's gradient, second half (docs/control-flow.md §5.5): the reverse
 * Scan over the backward step of scan_grad.c, and the input gradients
 * taken from its outputs.
 *
 * The reverse scan runs n steps, n the forward steps actually run (the
 * length of the forward node's stacked output 0: with until, fewer than
 * n_steps); its step t' handles forward step t = n-1-t' (reverse: it reads
 * sequence rows as the forward step t did, taps included). Sequences:
 * the forward sequences with the taps the step reads, the stored states
 * (init's rows before the forward output's), the output gradients. State:
 * the carried adjoints lam (a window of L rows for taps other than {-1})
 * and one accumulator per float non-sequence. Stacked: each sequence tap's
 * contribution, placed on its rows and summed afterwards. With a static n,
 * the steps that read init's rows run in a second reverse scan, so that
 * the first reads the stored states as views (weft__bptt_reverse). A node
 * that may run 0 steps gets its gradients guarded by IfElse
 * (weft__bptt_guard_no_steps). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/ctor_int.h"
#include "scan_grad_int.h"
#include "weft/array_ops.h"
#include "weft/elemwise.h"
#include "weft/ifelse.h"
#include "weft/index_ops.h"
#include "weft/shape_ops.h"
#include "weft/symshape.h"

enum { KIND_ADJOINT, KIND_ACC, KIND_SEQ };

typedef struct rspec {
    weft_scan_seq_t seqs[WEFT_SCAN_MAX_SEQS];
    int64_t taps[WEFT_SCAN_MAX_SEQS][WEFT_SCAN_MAX_TAPS];
    weft_var_t *seq_inner[WEFT_SCAN_MAX_SEQS][WEFT_SCAN_MAX_TAPS];
    weft_scan_output_t outs[WEFT_OP_MAX_OUTPUTS];
    weft_var_t *out_inner[WEFT_OP_MAX_OUTPUTS];
    weft_var_t *ns_outer[WEFT_SCAN_MAX_NONSEQS];
    size_t n_seq, n_out;
    /* what reverse output k is: kind, and output / non-sequence / sequence
     * index idx, tap index tap (KIND_SEQ) */
    int kind[WEFT_OP_MAX_OUTPUTS];
    size_t idx[WEFT_OP_MAX_OUTPUTS], tap[WEFT_OP_MAX_OUTPUTS];
} rspec_t;

static weft_status_t add_seq(weft__bptt_t *b, rspec_t *s, weft_var_t *outer, size_t n,
                             const int64_t *taps, weft_var_t *const *inner)
{
    if (!outer) return weft__ctor_status(b->g);
    if (s->n_seq == WEFT_SCAN_MAX_SEQS)
        return weft__bptt_unsupported(b, "its reverse scan would need more than "
                                         "WEFT_SCAN_MAX_SEQS sequences");
    size_t q = s->n_seq++;
    memcpy(s->taps[q], taps, n * sizeof *taps);
    memcpy(s->seq_inner[q], inner, n * sizeof *inner);
    s->seqs[q] = (weft_scan_seq_t){outer, n, s->taps[q], s->seq_inner[q]};
    return WEFT_OK;
}

static weft_status_t add_out(weft__bptt_t *b, rspec_t *s, weft_var_t *update, weft_var_t *init,
                             weft_var_t *inner, int kind, size_t idx, size_t tap)
{
    if (!update || (init && !inner)) return weft__ctor_status(b->g);
    if (s->n_out == WEFT_OP_MAX_OUTPUTS)
        return weft__bptt_unsupported(b, "its reverse scan would need more than "
                                         "WEFT_OP_MAX_OUTPUTS outputs");
    size_t k = s->n_out++;
    s->out_inner[k] = inner;
    s->outs[k] = (weft_scan_output_t){update, init, 0, NULL, init ? &s->out_inner[k] : NULL};
    s->kind[k] = kind;
    s->idx[k] = idx;
    s->tap[k] = tap;
    return WEFT_OK;
}

/* x[from:] (x itself when from is 0). */
static weft_var_t *rows_from(weft__bptt_t *b, weft_var_t *x, int64_t from)
{
    if (!from) return x;
    const weft_slice_t tail[1] = {WEFT_SLICE(from, WEFT_SLICE_NONE, 1)};
    return weft_subtensor_at(b->g, x, 1, tail, b->file, b->line);
}

/* The used taps among n taps of placeholders ph[first ..]: their count. */
static size_t used_taps(const weft__bptt_t *b, size_t first, size_t n, const int64_t *taps,
                        int64_t *t, weft_var_t **in)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (b->used[first + i]) {
            t[m] = taps[i];
            in[m++] = b->ph[first + i];
        }
    return m;
}

/* The forward steps one reverse scan handles: [from, from + cnt), cnt < 0
 * for all the steps run from `from` (a length known at run time only). */
typedef struct part {
    int64_t from, cnt;
} part_t;

/* Sequence q with the taps the step reads, from the row forward step
 * `from` reads with the first of them. */
static weft_status_t sequence_rows(weft__bptt_t *b, rspec_t *s, uint32_t q, part_t pt)
{
    const int64_t *taps = b->l->seq_taps[q];
    int64_t t[WEFT_SCAN_MAX_TAPS];
    weft_var_t *in[WEFT_SCAN_MAX_TAPS];
    size_t m = used_taps(b, b->seq0[q], b->l->seq_ntaps[q], taps, t, in);
    if (!m) return WEFT_OK;
    weft_var_t *x = rows_from(b, weft__bptt_seq(b, q), pt.from + t[0] - taps[0]);
    return add_seq(b, s, x, m, t, in);
}

/* parts[0]'s rows then parts[1]'s. A Join has no gradient for an input of
 * unknown length (second order): then parts[1] padded with parts[0]'s
 * (static) count of zero rows in front, parts[0] set on them. */
static weft_var_t *join_rows(weft__bptt_t *b, weft_var_t *const *parts)
{
    weft_graph_t *g = b->g;
    int64_t r = weft_type_dim(weft_var_type(parts[0]), 0);
    if (r < 0 || weft_type_dim(weft_var_type(parts[1]), 0) >= 0)
        return weft_concatenate_at(g, 2, parts, 0, b->file, b->line);
    int64_t pw[2 * WEFT_MAX_NDIM] = {r};
    weft_var_t *buf = weft_pad_at(g, parts[1], weft_type_ndim(weft_var_type(parts[1])), pw,
                                  WEFT_PAD_CONSTANT, 0.0, b->file, b->line);
    const weft_slice_t head[1] = {WEFT_SLICE(0, r, 1)};
    return weft_set_subtensor_at(g, buf, parts[0], 1, head, b->file, b->line);
}

/* The buffer whose row 0 is h_j, j = pt.from + k0 (k0 the first tap
 * read): H[j:] when j >= 0 (a view: no copy); else init's rows from
 * h_j's and the states of the part's steps, joined (a copy). */
static weft_var_t *state_buffer(weft__bptt_t *b, uint32_t o, int64_t k0, part_t pt)
{
    weft_graph_t *g = b->g;
    weft_var_t *h = weft_apply_output(b->node, o), *parts[2];
    int64_t j = pt.from + k0;
    if (j >= 0) return rows_from(b, h, j);
    weft_var_t *init = weft_apply_input(b->node, b->init_pos[o]);
    if (weft__bptt_is_window(b, o))
        parts[0] = rows_from(b, init, weft__scan_lag(b->l, o) + j);
    else
        parts[0] = weft_expand_dims_at(g, init, 0, b->file, b->line);
    parts[1] = h;
    if (pt.cnt >= 0) {
        const weft_slice_t head[1] = {WEFT_SLICE(0, pt.from + pt.cnt, 1)};
        parts[1] = weft_subtensor_at(g, h, 1, head, b->file, b->line);
    }
    return join_rows(b, parts);
}

/* The states the step reads of carried output o: h_{t+k} for its used taps
 * k, and the stored h_t (tap 0) riding along. */
static weft_status_t state_rows(weft__bptt_t *b, rspec_t *s, uint32_t o, part_t pt)
{
    const weft__scan_layout_t *l = b->l;
    int64_t t[WEFT_SCAN_MAX_TAPS + 1];
    weft_var_t *in[WEFT_SCAN_MAX_TAPS + 1];
    size_t m = used_taps(b, b->car0[o], l->out_ntaps[o], l->out_taps[o], t, in);
    const int64_t zero[1] = {0};
    if (!m && !b->hs[o]) return WEFT_OK;
    weft_var_t *h = rows_from(b, weft_apply_output(b->node, o), pt.from);
    if (!m) return add_seq(b, s, h, 1, zero, &b->hs[o]);
    weft_var_t *buf = state_buffer(b, o, t[0], pt);
    weft_status_t st = WEFT_OK;
    if (b->hs[o] && m < WEFT_SCAN_MAX_TAPS) {
        t[m] = 0;
        in[m++] = b->hs[o];
    } else if (b->hs[o]) {
        st = add_seq(b, s, h, 1, zero, &b->hs[o]);
    }
    return st == WEFT_OK ? add_seq(b, s, buf, m, t, in) : st;
}

static weft_status_t reverse_seqs(weft__bptt_t *b, weft_var_t *const *ograds, rspec_t *s,
                                  part_t pt)
{
    const int64_t zero[1] = {0};
    weft_status_t st = WEFT_OK;
    s->n_seq = 0;
    for (uint32_t q = 0; q < b->l->n_seq && st == WEFT_OK; q++) st = sequence_rows(b, s, q, pt);
    for (uint32_t o = 0; o < b->l->n_out && st == WEFT_OK; o++) {
        if (b->l->out_ntaps[o])
            st = state_rows(b, s, o, pt);
        else if (b->hs[o])
            st = add_seq(b, s, rows_from(b, weft_apply_output(b->node, o), pt.from), 1, zero,
                         &b->hs[o]);
        if (st == WEFT_OK && b->gh[o])
            st = add_seq(b, s, rows_from(b, ograds[o], pt.from), 1, zero, &b->gh[o]);
    }
    return st;
}

/* The number K of first forward steps that read init's rows (0 when the
 * step reads no earlier state): later steps read H only. */
static int64_t steps_reading_init(const weft__bptt_t *b)
{
    int64_t k = 0;
    for (uint32_t o = 0; o < b->l->n_out; o++)
        for (uint32_t i = 0; i < b->l->out_ntaps[o]; i++)
            if (b->used[b->car0[o] + i]) {
                if (-b->l->out_taps[o][i] > k) k = -b->l->out_taps[o][i];
                break; /* the first used tap is the lowest */
            }
    return k;
}

/* The window after step t (rows for h_{t-L} .. h_{t-1}): row j is the
 * previous window's row j-1 (h_{t-L+j}'s gradient so far) plus step t's
 * contribution through tap j-L; row 0 is tap -L's alone. */
static weft_var_t *window_update(weft__bptt_t *b, uint32_t o)
{
    weft_graph_t *g = b->g;
    const weft__scan_layout_t *l = b->l;
    size_t lag = (size_t)weft__scan_lag(l, o);
    weft_var_t **rows = calloc(lag, sizeof *rows);
    if (!rows) {
        weft_graph_set_error(g, WEFT_ENOMEM, "Scan gradient: out of memory");
        return NULL;
    }
    for (size_t j = 0; j < lag; j++) {
        if (j > 0) {
            const weft_slice_t at[1] = {WEFT_SLICE_AT((int64_t)j - 1)};
            rows[j] = weft_subtensor_at(g, b->lam[o], 1, at, b->file, b->line);
        }
        for (uint32_t i = 0; i < l->out_ntaps[o]; i++) {
            weft_var_t *c = b->d[b->car0[o] + i];
            if (l->out_taps[o][i] != (int64_t)j - (int64_t)lag || !c) continue;
            rows[j] = rows[j] ? weft_add(g, rows[j], c) : c;
        }
    }
    /* row 0 holds tap -L's contribution: the first tap is -L */
    weft_var_t *w = weft_stack_at(g, lag, rows, 0, b->file, b->line);
    free(rows);
    return w;
}

static weft_status_t reverse_outs(weft__bptt_t *b, rspec_t *s)
{
    weft_graph_t *g = b->g;
    const weft__scan_layout_t *l = b->l;
    weft_status_t st = WEFT_OK;
    for (uint32_t o = 0; o < l->n_out && st == WEFT_OK; o++) {
        if (!b->lam[o]) continue;
        weft_var_t *init = weft_apply_input(b->node, b->init_pos[o]);
        weft_var_t *upd = weft__bptt_is_window(b, o) ? window_update(b, o) : b->d[b->car0[o]];
        st = add_out(b, s, upd, weft_zeros_like_at(g, init, b->file, b->line), b->lam[o],
                     KIND_ADJOINT, o, 0);
    }
    for (uint32_t k = 0; k < l->n_nonseq && st == WEFT_OK; k++) {
        size_t ph = b->ns0 + k;
        s->ns_outer[k] = weft_apply_input(b->node, 1 + l->n_seq + weft__scan_n_carry(l) + k);
        if (!b->d[ph]) continue;
        b->acc[k] = weft__scan_placeholder_like(g, b->ph[ph], "acc", b->file, b->line);
        st = add_out(b, s, weft_add(g, b->acc[k], b->d[ph]),
                     weft_zeros_like_at(g, s->ns_outer[k], b->file, b->line), b->acc[k], KIND_ACC,
                     k, 0);
    }
    for (uint32_t q = 0; q < l->n_seq && st == WEFT_OK; q++)
        for (uint32_t i = 0; i < l->seq_ntaps[q] && st == WEFT_OK; i++)
            if (b->d[b->seq0[q] + i]) st = add_out(b, s, b->d[b->seq0[q] + i], NULL, NULL, KIND_SEQ, q, i);
    return st;
}

/* Zeros of x's shape with `rows` (an int64 0-d) rows, in c's dtype. */
static weft_var_t *zero_rows(weft__bptt_t *b, weft_var_t *x, weft_var_t *c, weft_var_t *rows)
{
    int nd = weft_type_ndim(weft_var_type(x));
    weft_var_t *sz[WEFT_MAX_NDIM];
    sz[0] = rows;
    for (int d = 1; d < nd; d++) sz[d] = weft_shape_i_at(b->g, x, d, b->file, b->line);
    return weft_full_sym_at(b->g, nd, sz, 0.0, weft_type_dtype(weft_var_type(c)), b->file,
                            b->line);
}

/* c (rows latest first) added into zeros of x's shape at rows
 * off + len(c) - 1 .. off: a Join of pieces of unknown static length has no
 * gradient (second order), an inc_at has. */
static weft_var_t *scatter_rows(weft__bptt_t *b, weft_var_t *c, weft_var_t *len, int64_t off,
                                weft_var_t *x)
{
    weft_graph_t *g = b->g;
    weft_var_t *m1 = weft_constant_scalar_at(g, WEFT_INT64, -1.0, b->file, b->line);
    weft_var_t *stop = weft_constant_scalar_at(g, WEFT_INT64, (double)off - 1.0, b->file, b->line);
    weft_var_t *idx = weft_arange_sym_at(g, weft_add(g, stop, len), stop, m1, WEFT_INT64, b->file,
                                         b->line);
    return weft_set_at_at(g, weft_zeros_like_at(g, x, b->file, b->line), idx, c, 0, true, b->file,
                          b->line);
}

/* A sequence tap's contributions placed on the rows of x they came from:
 * pieces c[0..n) stacked by the reverse scans (the latest forward step
 * first), c[0] the earliest steps', rows off .. off+steps-1; zeros
 * elsewhere (rows no step read; with until, the rows after the last step
 * run). One flipped view when it is all of x, else one Join. */
static weft_var_t *place_rows(weft__bptt_t *b, weft_var_t *const *c, size_t n, int64_t off,
                              weft_var_t *x)
{
    weft_graph_t *g = b->g;
    const int axis0[1] = {0};
    weft_var_t *parts[4], *rows = NULL;
    int64_t lx = weft_type_dim(weft_var_type(x), 0), lc = 0;
    size_t k = 1;
    for (size_t i = 0; i < n; i++) {
        int64_t li = weft_type_dim(weft_var_type(c[i]), 0);
        lc = lc < 0 || li < 0 ? -1 : lc + li;
        parts[k++] = weft_flip_at(g, c[i], 1, axis0, b->file, b->line);
        weft_var_t *len = weft_shape_i_at(g, c[i], 0, b->file, b->line);
        rows = rows ? weft_add(g, rows, len) : len;
    }
    bool no_tail = lx >= 0 && lc >= 0 && lx == lc + off;
    if (n == 1 && off == 0 && no_tail) return parts[1];
    if (n == 1 && lc < 0) return scatter_rows(b, c[0], rows, off, x);
    weft_var_t *offv = weft_constant_scalar_at(g, WEFT_INT64, (double)off, b->file, b->line);
    if (!no_tail) {
        weft_var_t *left = weft_sub(g, weft_shape_i_at(g, x, 0, b->file, b->line), rows);
        parts[k++] = zero_rows(b, x, c[0], weft_sub(g, left, offv));
    }
    if (!off) return weft_concatenate_at(g, k - 1, parts + 1, 0, b->file, b->line);
    parts[0] = zero_rows(b, x, c[0], offv);
    return weft_concatenate_at(g, k, parts, 0, b->file, b->line);
}

/* d cost / d inputs from the reverse scans' outputs outs[0..n_parts) (the
 * latest steps' scan first): the adjoints' and accumulators' last rows in
 * the last scan (scan_save_mem keeps one state of each), the sequence
 * contributions placed and summed over taps. */
static weft_status_t collect(weft__bptt_t *b, const rspec_t *s, weft_var_t *outs[][WEFT_OP_MAX_OUTPUTS],
                             size_t n_parts, weft_var_t **input_grads)
{
    weft_graph_t *g = b->g;
    const weft_slice_t last[1] = {WEFT_SLICE_AT(-1)};
    size_t ns0 = 1 + b->l->n_seq + weft__scan_n_carry(b->l);
    for (size_t k = 0; k < s->n_out; k++) {
        size_t pos = 0;
        weft_var_t *v = NULL;
        if (s->kind[k] == KIND_SEQ) {
            const int64_t *taps = b->l->seq_taps[s->idx[k]];
            weft_var_t *c[2];
            for (size_t i = 0; i < n_parts; i++) c[i] = outs[n_parts - 1 - i][k];
            pos = 1 + s->idx[k];
            weft_var_t *x = weft__bptt_seq(b, (uint32_t)s->idx[k]);
            v = x ? place_rows(b, c, n_parts, taps[s->tap[k]] - taps[0], x) : NULL;
            if (v && input_grads[pos]) v = weft_add(g, input_grads[pos], v);
        } else {
            pos = s->kind[k] == KIND_ADJOINT ? b->init_pos[s->idx[k]] : ns0 + s->idx[k];
            v = weft_subtensor_at(g, outs[n_parts - 1][k], 1, last, b->file, b->line);
        }
        if (!v) return weft__ctor_status(g);
        input_grads[pos] = v;
    }
    return WEFT_OK;
}

/* The reverse scan over the forward steps of pt. */
static weft_status_t run_part(weft__bptt_t *b, weft_var_t *const *ograds, rspec_t *s,
                              part_t pt, weft_var_t **outs)
{
    weft_status_t st = reverse_seqs(b, ograds, s, pt);
    if (st != WEFT_OK) return st;
    weft_scan_spec_t sp = WEFT_SCAN_SPEC_INIT;
    char name[WEFT__SCAN_NAME_MAX + 8];
    snprintf(name, sizeof name, "grad_%s", b->p->name[0] ? b->p->name : "scan");
    sp.n_seqs = s->n_seq;
    sp.seqs = s->seqs;
    sp.n_outputs = s->n_out;
    sp.outputs = s->outs;
    sp.n_nonseqs = b->l->n_nonseq;
    sp.nonseq_outer = s->ns_outer;
    sp.nonseq_inner = b->ph + b->ns0;
    sp.n_steps = pt.cnt;
    /* the steps actually run (with until, the stacked outputs' length) */
    if (pt.cnt < 0)
        sp.n_steps_var = weft_shape_i_at(b->g, weft_apply_output(b->node, 0), 0, b->file, b->line);
    sp.reverse = true;
    sp.name = name;
    return weft__got(b->g, weft_scan_at(b->g, &sp, outs, b->file, b->line));
}

/* Forward steps K .. n-1 read stored states only: with n static and above
 * K, their reverse scan reads H through views, and a second one runs the
 * first K steps from a buffer of init's rows and H's first K (a copy of K
 * rows, not of H), carrying on from the first's last states. Otherwise one
 * scan over a buffer of init's rows joined to H. */
weft_status_t weft__bptt_reverse(weft__bptt_t *b, weft_var_t *const *ograds,
                                 weft_var_t **input_grads)
{
    rspec_t *s = calloc(1, sizeof *s);
    if (!s) return weft_graph_set_error(b->g, WEFT_ENOMEM, "Scan gradient: out of memory");
    weft_var_t *outs[2][WEFT_OP_MAX_OUTPUTS];
    int64_t k = steps_reading_init(b);
    int64_t n = weft_type_dim(weft_var_type(weft_apply_output(b->node, 0)), 0);
    const weft_slice_t last[1] = {WEFT_SLICE_AT(-1)};
    size_t n_parts = k > 0 && n > k ? 2 : 1;
    weft_status_t st = reverse_outs(b, s);
    if (st == WEFT_OK && s->n_out && n_parts == 2) {
        st = run_part(b, ograds, s, (part_t){k, n - k}, outs[0]);
        for (size_t j = 0; j < s->n_out && st == WEFT_OK; j++)
            if (s->outs[j].init)
                st = weft__got(b->g, s->outs[j].init = weft_subtensor_at(b->g, outs[0][j], 1, last,
                                                                         b->file, b->line));
        if (st == WEFT_OK) st = run_part(b, ograds, s, (part_t){0, k}, outs[1]);
    } else if (st == WEFT_OK && s->n_out) {
        st = run_part(b, ograds, s, (part_t){0, -1}, outs[0]);
    }
    if (st == WEFT_OK && s->n_out) st = collect(b, s, outs, n_parts, input_grads);
    free(s);
    return st;
}

/* A forward scan that may run 0 steps (a length known at run time only, or
 * 0) would have its reverse scans read the adjoints' [-1] of empty stacks:
 * each input gradient becomes IfElse(n > 0, gradient, zeros), so that with
 * 0 steps the reverse scans are skipped and nothing reaches the inputs
 * through the loop. One IfElse per gradient (an unread one is dropped with
 * what only it reads: scan_prune_outputs still drops unread stacks), all on
 * one condition variable (one guard, docs/control-flow.md §1.2). */
weft_status_t weft__bptt_guard_no_steps(weft__bptt_t *b, weft_var_t **input_grads)
{
    weft_graph_t *g = b->g;
    weft_var_t *h = weft_apply_output(b->node, 0);
    if (weft_type_dim(weft_var_type(h), 0) > 0) return WEFT_OK;
    weft_var_t *cond = weft_gt(g, weft_shape_i_at(g, h, 0, b->file, b->line),
                               weft_constant_scalar_at(g, WEFT_INT64, 0.0, b->file, b->line));
    weft_status_t st = weft__got(g, cond);
    for (size_t i = 0; i < weft_apply_n_inputs(b->node) && st == WEFT_OK; i++) {
        if (!input_grads[i]) continue;
        weft_var_t *zeros = weft_zeros_like_at(g, weft_apply_input(b->node, i), b->file, b->line);
        st = weft__got(g, input_grads[i] = weft_ifelse1_at(g, cond, input_grads[i], zeros, b->file,
                                                           b->line));
    }
    return st;
}
