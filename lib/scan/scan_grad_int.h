/* Scan's gradient, shared by its two halves (docs/control-flow.md §5.5):
 * scan_grad.c builds the backward step - the forward inner graph copied
 * onto placeholders, the step cost and its gradients - and scan_grad_rev.c
 * wraps it in the reverse Scan and turns that scan's outputs into the
 * input gradients. Everything is built in the caller's graph g; errors are
 * kept on g (constructor style). */
#ifndef WEFT_SCAN_GRAD_INT_H
#define WEFT_SCAN_GRAD_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "scan_int.h"


typedef struct weft__bptt {
    weft_graph_t *g;
    const weft_apply_t *node; /* the forward Scan */
    const weft__scan_props_t *p;
    /* The forward scan differentiated: the node's layout, or for a reverse
     * node the forward scan over its flipped sequences (taps negated, in
     * reverse order; scan_grad.c). l points at lay. */
    weft__scan_layout_t lay;
    const weft__scan_layout_t *l;
    weft_var_t *seq[WEFT_SCAN_MAX_SEQS]; /* the sequences it reads (weft__bptt_seq) */
    bool asked;                          /* a reverse node's step count is known: */
    int64_t asked_n;                     /* static (-1: in asked_var) */
    weft_var_t *asked_var;
    /* A reverse node's sequence rows in the order seq[q] holds them (a
     * gather), when the step count is known at run time only; else NULL. */
    weft_var_t *rows[WEFT_SCAN_MAX_SEQS];
    int64_t n_read[WEFT_SCAN_MAX_SEQS]; /* else the rows of x it reads: n + span */
    const char *file; /* the forward node's creation site: the backward's */
    int line;
    size_t n_in;                          /* forward inner inputs */
    size_t seq0[WEFT_SCAN_MAX_SEQS];      /* placeholder of sequence q's first tap */
    size_t car0[WEFT_OP_MAX_OUTPUTS];     /* placeholder of carried output o's first tap */
    size_t ns0;                           /* placeholder of the first non-sequence */
    size_t init_pos[WEFT_OP_MAX_OUTPUTS]; /* outer input holding o's initial value */
    weft_var_t *ph[WEFT__SCAN_MAX_INNER_IN];    /* forward inner inputs copied into g */
    bool used[WEFT__SCAN_MAX_INNER_IN];         /* read by the backward step */
    weft_var_t *fo[WEFT_OP_MAX_OUTPUTS];  /* forward updates on ph */
    /* Carried adjoint of output o (a reverse-scan state read at backward
     * step t): with taps {-1} the gradient reaching h_t from later steps
     * (state-shaped); otherwise a window of L rows, row j the gradient
     * gathered so far for h_{t-L+1+j} (row L-1: h_t's, complete). */
    weft_var_t *lam[WEFT_OP_MAX_OUTPUTS];
    weft_var_t *gh[WEFT_OP_MAX_OUTPUTS]; /* row t of output o's gradient */
    weft_var_t *hs[WEFT_OP_MAX_OUTPUTS]; /* stored row t of output o (its recomputation replaced) */
    weft_var_t *acc[WEFT_SCAN_MAX_NONSEQS];
    weft_var_t *d[WEFT__SCAN_MAX_INNER_IN]; /* d cost_t / d ph[k] (float placeholders) */
} weft__bptt_t;

/* Sequence q as the forward scan differentiated reads it: the node's, or
 * for a reverse node its flip, built on first use (no dead nodes for the
 * sequences the backward step does not read). NULL on error (kept on g). */
weft_var_t *weft__bptt_seq(weft__bptt_t *b, uint32_t q);

/* Whether output o carries a window of L = lag states (any taps but {-1}). */
bool weft__bptt_is_window(const weft__bptt_t *b, size_t o);

/* WEFT_ENOGRAD naming the forward node and why (kept on g). */
weft_status_t weft__bptt_unsupported(weft__bptt_t *b, const char *why);

/* Builds the reverse Scan over the backward step b describes and stores the
 * input gradients it yields in input_grads (outer input positions). */
weft_status_t weft__bptt_reverse(weft__bptt_t *b, weft_var_t *const *ograds,
                                 weft_var_t **input_grads);

/* Each input gradient as IfElse(steps run > 0, gradient, zeros) when the
 * forward node may run 0 steps (its length is not static and positive). */
weft_status_t weft__bptt_guard_no_steps(weft__bptt_t *b, weft_var_t **input_grads);

#endif /* WEFT_SCAN_GRAD_INT_H */
