/* scan_merge (PyTensor's scan_merge): two Scan nodes with the same step
 * count and the same sequences (same outer variables, same taps), neither
 * depending on the other, become one Scan whose inner graph holds both
 * inner graphs on shared sequence placeholders: one loop, one read of each
 * sequence row per step. Scans with until or last-state outputs, or of
 * different directions, are left alone. */
#include <stdlib.h>
#include <string.h>

#include "graph/ctor_int.h"
#include "scan_int.h"
#include "weft/rewrite.h"

#define MAX_IN \
    (WEFT_SCAN_MAX_SEQS * WEFT_SCAN_MAX_TAPS + WEFT_OP_MAX_OUTPUTS * WEFT_SCAN_MAX_TAPS + \
     WEFT_SCAN_MAX_NONSEQS)

/* ---- ancestry ------------------------------------------------------------------- */

/* Whether target is an ancestor of v: a depth-first walk over owners with
 * a visited list (linear; the walk stops at the first hit). */
static weft_status_t depends_on(const weft_var_t *v, const weft_apply_t *target, bool *hit)
{
    size_t cap = 64, n_stack = 0, n_seen = 0;
    const weft_apply_t **stack = malloc(cap * sizeof *stack), **seen = malloc(cap * sizeof *seen);
    size_t cap_seen = cap;
    *hit = false;
    if (!stack || !seen) goto oom;
    if (weft_var_owner(v)) stack[n_stack++] = weft_var_owner(v);
    while (n_stack && !*hit) {
        const weft_apply_t *a = stack[--n_stack];
        bool done = false;
        for (size_t i = 0; i < n_seen && !done; i++) done = seen[i] == a;
        if (done) continue;
        if (a == target) {
            *hit = true;
            break;
        }
        if (n_seen == cap_seen) {
            const weft_apply_t **ns = realloc(seen, 2 * cap_seen * sizeof *seen);
            if (!ns) goto oom;
            seen = ns;
            cap_seen *= 2;
        }
        seen[n_seen++] = a;
        for (size_t i = 0; i < weft_apply_n_inputs(a); i++) {
            const weft_apply_t *o = weft_var_owner(weft_apply_input(a, i));
            if (!o) continue;
            if (n_stack == cap) {
                const weft_apply_t **ns = realloc(stack, 2 * cap * sizeof *stack);
                if (!ns) goto oom;
                stack = ns;
                cap *= 2;
            }
            stack[n_stack++] = o;
        }
    }
    free(stack);
    free(seen);
    return WEFT_OK;
oom:
    free(stack);
    free(seen);
    return WEFT_ENOMEM;
}

/* Whether some input of a depends on b. */
static weft_status_t node_depends_on(const weft_apply_t *a, const weft_apply_t *b, bool *hit)
{
    weft_status_t st = WEFT_OK;
    *hit = false;
    for (size_t i = 0; i < weft_apply_n_inputs(a) && st == WEFT_OK && !*hit; i++)
        st = depends_on(weft_apply_input(a, i), b, hit);
    return st;
}

/* ---- compatibility -------------------------------------------------------------- */

static bool mergeable_alone(const weft__scan_props_t *p)
{
    return p && !p->last_mask && !p->core->lay.has_until;
}

/* Same step count, sequences, taps and direction; the sum fits one Scan. */
static bool compatible(const weft_apply_t *a, const weft_apply_t *b)
{
    const weft__scan_props_t *pa = weft__scan_get(weft_apply_op(a));
    const weft__scan_props_t *pb = weft__scan_get(weft_apply_op(b));
    if (a == b || !mergeable_alone(pa) || !mergeable_alone(pb)) return false;
    const weft__scan_layout_t *la = &pa->core->lay, *lb = &pb->core->lay;
    if (weft_apply_input(a, 0) != weft_apply_input(b, 0) || la->n_seq != lb->n_seq ||
        la->reverse != lb->reverse || la->n_out + lb->n_out > WEFT_OP_MAX_OUTPUTS ||
        la->n_nonseq + lb->n_nonseq > WEFT_SCAN_MAX_NONSEQS)
        return false;
    for (uint32_t k = 0; k < la->n_seq; k++)
        if (weft_apply_input(a, 1 + k) != weft_apply_input(b, 1 + k) ||
            la->seq_ntaps[k] != lb->seq_ntaps[k] ||
            memcmp(la->seq_taps[k], lb->seq_taps[k], la->seq_ntaps[k] * sizeof(int64_t)))
            return false;
    return true;
}

/* ---- building ------------------------------------------------------------------- */

typedef struct merged {
    weft_scan_seq_t seqs[WEFT_SCAN_MAX_SEQS];
    weft_scan_output_t outs[WEFT_OP_MAX_OUTPUTS];
    weft_var_t *ns_outer[WEFT_SCAN_MAX_NONSEQS], *ns_inner[WEFT_SCAN_MAX_NONSEQS];
    weft_var_t *ph[2][MAX_IN], *upd[2][WEFT_OP_MAX_OUTPUTS + 1];
    size_t n_out, n_ns;
} merged_t;

/* Node x's (0: a, 1: b) placeholders (b shares a's sequence ones) and its
 * inner graph's copy on them. */
static weft_status_t copy_node(weft_graph_t *g, const weft_apply_t *node, merged_t *m, int x,
                               const char *file, int line)
{
    const weft__scan_core_t *c = weft__scan_get(weft_apply_op(node))->core;
    size_t n_seq_taps = weft__scan_n_seq_taps(&c->lay);
    weft_status_t st = WEFT_OK;
    for (size_t k = 0; k < c->n_in && st == WEFT_OK; k++) {
        const weft_var_t *v = weft_fgraph_input(c->fg, k);
        if (x == 1 && k < n_seq_taps) m->ph[1][k] = m->ph[0][k];
        else
            st = weft__got(g, m->ph[x][k] = weft__scan_placeholder_like(g, v, weft_var_name(v), file, line));
    }
    return st == WEFT_OK ? weft__scan_expand(g, c, m->ph[x], m->upd[x], file, line) : st;
}

/* Node x's outputs and non-sequences appended to the merged spec. */
static void add_node(const weft_apply_t *node, merged_t *m, int x)
{
    const weft__scan_layout_t *l = &weft__scan_get(weft_apply_op(node))->core->lay;
    size_t a = weft__scan_n_seq_taps(l), pos = 1 + l->n_seq;
    for (uint32_t o = 0; o < l->n_out; o++) {
        weft_scan_output_t *q = &m->outs[m->n_out++];
        *q = (weft_scan_output_t){m->upd[x][o], NULL, 0, NULL, NULL};
        if (!l->out_ntaps[o]) continue;
        q->init = weft_apply_input(node, pos++);
        q->n_taps = l->out_ntaps[o];
        q->taps = l->out_taps[o];
        q->inner = m->ph[x] + a;
        a += l->out_ntaps[o];
    }
    for (uint32_t k = 0; k < l->n_nonseq; k++, m->n_ns++) {
        m->ns_outer[m->n_ns] = weft_apply_input(node, pos++);
        m->ns_inner[m->n_ns] = m->ph[x][a++];
    }
}

static weft_status_t merge(weft_graph_t *g, const weft_apply_t *a, const weft_apply_t *b,
                           merged_t *m, weft_var_t **outs)
{
    const char *file = NULL;
    int line = 0;
    weft_apply_trace(a, &file, &line);
    weft_status_t st = copy_node(g, a, m, 0, file, line);
    if (st == WEFT_OK) st = copy_node(g, b, m, 1, file, line);
    if (st != WEFT_OK) return st;
    const weft__scan_props_t *pa = weft__scan_get(weft_apply_op(a));
    const weft__scan_layout_t *la = &pa->core->lay;
    size_t t = 0;
    for (uint32_t k = 0; k < la->n_seq; k++) {
        m->seqs[k] = (weft_scan_seq_t){weft_apply_input(a, 1 + k), la->seq_ntaps[k],
                                       la->seq_taps[k], m->ph[0] + t};
        t += la->seq_ntaps[k];
    }
    add_node(a, m, 0);
    add_node(b, m, 1);
    weft_scan_spec_t sp = WEFT_SCAN_SPEC_INIT;
    sp.n_seqs = la->n_seq;
    sp.seqs = m->seqs;
    sp.n_outputs = m->n_out;
    sp.outputs = m->outs;
    sp.n_nonseqs = m->n_ns;
    sp.nonseq_outer = m->ns_outer;
    sp.nonseq_inner = m->ns_inner;
    sp.n_steps_var = weft_apply_input(a, 0);
    sp.reverse = la->reverse != 0;
    sp.name = pa->name[0] ? pa->name : NULL;
    return weft__got(g, weft_scan_at(g, &sp, outs, file, line));
}

/* The first other Scan reading node's step count that can merge with it. */
static weft_status_t find_partner(weft_fgraph_t *fg, const weft_apply_t *node,
                                  const weft_apply_t **out)
{
    const weft_client_t *cl = NULL;
    size_t n = 0;
    *out = NULL;
    weft_status_t st = weft_fgraph_clients(fg, weft_apply_input(node, 0), &cl, &n);
    for (size_t i = 0; i < n && st == WEFT_OK && !*out; i++) {
        const weft_apply_t *b = cl[i].node;
        if (weft_apply_is_output_slot(b) || cl[i].index != 0 || !compatible(node, b)) continue;
        bool ab = false, ba = false;
        st = node_depends_on(node, b, &ab);
        if (st == WEFT_OK && !ab) st = node_depends_on(b, node, &ba);
        if (st == WEFT_OK && !ab && !ba) *out = b;
    }
    return st;
}

static weft_status_t merge_transform(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                     weft_rewrite_result_t *res)
{
    (void)user;
    if (!mergeable_alone(weft__scan_get(weft_apply_op(node)))) return WEFT_OK;
    const weft_apply_t *b = NULL;
    weft_status_t st = find_partner(fg, node, &b);
    if (st != WEFT_OK || !b) return st;
    merged_t *m = calloc(1, sizeof *m);
    if (!m) return WEFT_ENOMEM;
    weft_var_t *outs[WEFT_OP_MAX_OUTPUTS];
    st = merge(weft_fgraph_graph(fg), node, b, m, outs);
    size_t na = weft_apply_n_outputs(node);
    for (size_t o = 0; o < na && st == WEFT_OK; o++)
        st = weft_rewrite_result_replace(res, weft_apply_output(node, o), outs[o]);
    for (size_t o = 0; o < weft_apply_n_outputs(b) && st == WEFT_OK; o++)
        st = weft_rewrite_result_replace(res, weft_apply_output(b, o), outs[na + o]);
    free(m);
    return st;
}

weft__scan_node_rewrite_fn weft__scan_merge_fn(void)
{
    return merge_transform;
}
