/* weft_scan: checks the user's spec, turns it into a layout, the inner
 * input and output lists and the outer inputs, interns the core and applies
 * the Scan op. */
#include <stdio.h>
#include <string.h>

#include "graph/ctor_int.h"
#include "scan_int.h"

#define MAX_OUTER_IN (1 + WEFT_SCAN_MAX_SEQS + WEFT_OP_MAX_OUTPUTS + WEFT_SCAN_MAX_NONSEQS)

typedef struct build {
    weft__scan_layout_t lay;
    weft_var_t *inner_in[WEFT__SCAN_MAX_INNER_IN], *inner_out[WEFT_OP_MAX_OUTPUTS + 1];
    weft_var_t *outer[MAX_OUTER_IN];
    size_t n_inner_in, n_outer;
} build_t;

static weft_status_t bad(weft_graph_t *g, weft_status_t s, const char *what)
{
    return weft_graph_set_error(g, s, "weft_scan: %s", what);
}

/* taps[0..n) strictly increasing, each within [lo, hi]. */
static bool taps_ok(size_t n, const int64_t *taps, int64_t lo, int64_t hi)
{
    for (size_t k = 0; k < n; k++)
        if (taps[k] < lo || taps[k] > hi || (k && taps[k] <= taps[k - 1])) return false;
    return true;
}

static weft_status_t add_placeholder(weft_graph_t *g, build_t *b, weft_var_t *v)
{
    if (!v) return bad(g, WEFT_EINVAL, "a NULL placeholder");
    if (weft_var_owner(v) || weft_var_is_constant(v)) {
        char vb[200];
        weft__scan_describe_var(v, vb, sizeof vb);
        return weft_graph_set_error(g, WEFT_EINVAL,
                                    "weft_scan: placeholder %s is not a root variable", vb);
    }
    b->inner_in[b->n_inner_in++] = v;
    return WEFT_OK;
}

static weft_status_t add_seqs(weft_graph_t *g, const weft_scan_spec_t *sp, build_t *b)
{
    static const int64_t zero = 0;
    if (sp->n_seqs > WEFT_SCAN_MAX_SEQS) return bad(g, WEFT_EINVAL, "too many sequences");
    if (sp->n_seqs && !sp->seqs) return bad(g, WEFT_EINVAL, "NULL seqs");
    b->lay.n_seq = (uint32_t)sp->n_seqs;
    for (size_t s = 0; s < sp->n_seqs; s++) {
        const weft_scan_seq_t *q = &sp->seqs[s];
        size_t nt = q->n_taps ? q->n_taps : 1;
        const int64_t *taps = q->n_taps ? q->taps : &zero;
        if (!q->outer || !q->inner || !taps) return bad(g, WEFT_EINVAL, "a sequence with NULL fields");
        if (nt > WEFT_SCAN_MAX_TAPS || !taps_ok(nt, taps, -(INT64_C(1) << 40), INT64_C(1) << 40))
            return bad(g, WEFT_EINVAL, "sequence taps must be increasing (at most 8)");
        b->lay.seq_ntaps[s] = (uint32_t)nt;
        for (size_t k = 0; k < nt; k++) {
            b->lay.seq_taps[s][k] = taps[k];
            weft_status_t st = add_placeholder(g, b, q->inner[k]);
            if (st != WEFT_OK) return st;
        }
        b->outer[b->n_outer++] = q->outer;
    }
    return WEFT_OK;
}

static weft_status_t add_outputs(weft_graph_t *g, const weft_scan_spec_t *sp, build_t *b)
{
    static const int64_t minus_one = -1;
    if (!sp->n_outputs || sp->n_outputs > WEFT_OP_MAX_OUTPUTS || !sp->outputs)
        return bad(g, WEFT_EINVAL, "1 to 16 outputs expected");
    b->lay.n_out = (uint32_t)sp->n_outputs;
    for (size_t o = 0; o < sp->n_outputs; o++) {
        const weft_scan_output_t *q = &sp->outputs[o];
        if (!q->update) return bad(g, WEFT_EINVAL, "an output without update");
        b->inner_out[o] = q->update;
        if (!q->init) {
            if (q->n_taps || q->inner) return bad(g, WEFT_EINVAL, "taps on an output without init");
            continue;
        }
        size_t nt = q->n_taps ? q->n_taps : 1;
        const int64_t *taps = q->n_taps ? q->taps : &minus_one;
        if (!q->inner || !taps) return bad(g, WEFT_EINVAL, "a carried output with NULL fields");
        if (nt > WEFT_SCAN_MAX_TAPS || !taps_ok(nt, taps, -(INT64_C(1) << 40), -1))
            return bad(g, WEFT_EINVAL, "output taps must be negative and increasing (at most 8)");
        b->lay.out_ntaps[o] = (uint32_t)nt;
        for (size_t k = 0; k < nt; k++) {
            b->lay.out_taps[o][k] = taps[k];
            weft_status_t st = add_placeholder(g, b, q->inner[k]);
            if (st != WEFT_OK) return st;
        }
        b->outer[b->n_outer++] = q->init;
    }
    return WEFT_OK;
}

static weft_status_t add_rest(weft_graph_t *g, const weft_scan_spec_t *sp, build_t *b)
{
    if (sp->n_nonseqs > WEFT_SCAN_MAX_NONSEQS) return bad(g, WEFT_EINVAL, "too many non-sequences");
    if (sp->n_nonseqs && (!sp->nonseq_outer || !sp->nonseq_inner))
        return bad(g, WEFT_EINVAL, "NULL non-sequence arrays");
    b->lay.n_nonseq = (uint32_t)sp->n_nonseqs;
    for (size_t k = 0; k < sp->n_nonseqs; k++) {
        if (!sp->nonseq_outer[k]) return bad(g, WEFT_EINVAL, "a NULL non-sequence");
        weft_status_t st = add_placeholder(g, b, sp->nonseq_inner[k]);
        if (st != WEFT_OK) return st;
        b->outer[b->n_outer++] = sp->nonseq_outer[k];
    }
    if (sp->until) {
        const weft_type_t *t = weft_var_type(sp->until);
        if (weft_type_kind(t) != WEFT_TYPE_TENSOR || weft_type_ndim(t) != 0 ||
            weft_type_dtype(t) != WEFT_BOOL) {
            char vb[200];
            weft__scan_describe_var(sp->until, vb, sizeof vb);
            return weft_graph_set_error(g, WEFT_ETYPE,
                                        "weft_scan: the until condition (%s) must be a bool 0-d "
                                        "value", vb);
        }
        b->lay.has_until = 1;
        b->inner_out[b->lay.n_out] = sp->until;
    }
    if (!sp->n_seqs && sp->n_steps < 0 && !sp->n_steps_var)
        return bad(g, WEFT_EINVAL, "no sequence, n_steps or n_steps_var: the step count is unknown");
    return WEFT_OK;
}

static weft_var_t *steps_input(weft_graph_t *g, const weft_scan_spec_t *sp, const char *file,
                               int line)
{
    if (sp->n_steps_var) return sp->n_steps_var; /* make_node checks its type */
    return weft_constant_scalar_at(g, WEFT_INT64, sp->n_steps >= 0 ? (double)sp->n_steps : -1.0,
                                   file, line);
}

static weft_status_t scan_build(weft_graph_t *g, const weft_scan_spec_t *sp, weft_var_t **outputs,
                                const char *file, int line)
{
    if (!sp || !outputs) return bad(g, WEFT_EINVAL, "NULL spec or outputs");
    if (sp->size < sizeof(weft_scan_spec_t)) return bad(g, WEFT_EINVAL, "spec->size too small");
    build_t b;
    memset(&b, 0, sizeof b);
    weft_var_t *steps = steps_input(g, sp, file, line);
    weft_status_t s = weft__got(g, steps);
    b.outer[b.n_outer++] = steps;
    if (s == WEFT_OK) s = add_seqs(g, sp, &b);
    if (s == WEFT_OK) s = add_outputs(g, sp, &b);
    if (s == WEFT_OK) s = add_rest(g, sp, &b);
    b.lay.reverse = sp->reverse;
    const weft__scan_core_t *core = NULL;
    const weft_op_t *op = NULL;
    if (s == WEFT_OK) s = weft__scan_core_make(g, &b.lay, b.inner_in, b.inner_out, &core);
    if (s == WEFT_OK) s = weft__scan_op(g, core, 0, sp->name, &op);
    weft_apply_t *a = NULL;
    if (s == WEFT_OK) s = weft__got(g, a = weft_apply_create_at(g, op, b.n_outer, b.outer, file, line));
    for (size_t o = 0; s == WEFT_OK && o < sp->n_outputs; o++) outputs[o] = weft_apply_output(a, o);
    return s;
}

weft_var_t *weft_scan_at(weft_graph_t *g, const weft_scan_spec_t *spec, weft_var_t **outputs,
                         const char *file, int line)
{
    if (!g) return NULL;
    weft__ctor_begin(g);
    weft_status_t s = scan_build(g, spec, outputs, file, line);
    return weft__ctor_end(g, s, s == WEFT_OK ? outputs[0] : NULL, "weft_scan", file, line);
}
