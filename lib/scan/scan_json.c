/* Scan props in the JSON graph format (docs/graph-format.md, "Scan"): the
 * name, the inner graph (nested, same format as a graph file) and the
 * layout - each sequence's taps, each output's taps (an empty list: not
 * carried), the non-sequence count, the until flag and the last-state
 * outputs. Loading checks the layout against the inner graph's arity and
 * rebuilds the op through the same interning as weft_scan. */
#include <stdio.h>
#include <string.h>

#include "scan_int.h"
#include "weft/graph_io.h"
#include "weft/json_props.h"

#define MAX_FLAT (WEFT_OP_MAX_OUTPUTS * (WEFT_SCAN_MAX_TAPS + 1))

/* [n0, taps0..., n1, taps1...] */
static size_t flatten(size_t n, const uint32_t *ntaps, const int64_t (*taps)[WEFT_SCAN_MAX_TAPS],
                      int64_t *flat)
{
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        flat[len++] = ntaps[i];
        for (uint32_t k = 0; k < ntaps[i]; k++) flat[len++] = taps[i][k];
    }
    return len;
}

weft_status_t weft__scan_to_json(const weft_op_t *op, weft_json_props_t *p)
{
    const weft__scan_props_t *sp = weft__scan_get(op);
    const weft__scan_core_t *c = sp->core;
    const weft__scan_layout_t *l = &c->lay;
    weft_var_t *in[512], *out[WEFT_OP_MAX_OUTPUTS + 1];
    for (size_t k = 0; k < c->n_in; k++) in[k] = weft_fgraph_input(c->fg, k);
    for (size_t k = 0; k < c->n_inner_out; k++) out[k] = weft_fgraph_output(c->fg, k);
    weft_graph_io_t inner = {c->n_in, in, NULL, c->n_inner_out, out, 0, NULL};
    int64_t flat[MAX_FLAT];
    weft_status_t s = WEFT_OK;
    if (sp->name[0]) s = weft_json_props_put_string(p, "name", sp->name);
    if (s == WEFT_OK) s = weft_json_props_put_graph(p, "graph", &inner);
    if (s == WEFT_OK)
        s = weft_json_props_put_int_array(p, "seq_taps", flat,
                                          flatten(l->n_seq, l->seq_ntaps, l->seq_taps, flat));
    if (s == WEFT_OK)
        s = weft_json_props_put_int_array(p, "output_taps", flat,
                                          flatten(l->n_out, l->out_ntaps, l->out_taps, flat));
    if (s == WEFT_OK) s = weft_json_props_put_int(p, "n_nonseqs", l->n_nonseq);
    if (s == WEFT_OK) s = weft_json_props_put_bool(p, "until", l->has_until != 0);
    if (s == WEFT_OK && l->reverse) s = weft_json_props_put_bool(p, "reverse", true);
    if (s == WEFT_OK) s = weft_json_props_put_int(p, "last_mask", sp->last_mask);
    if (s == WEFT_OK && sp->chunk_mask) s = weft_json_props_put_int(p, "chunk_mask", sp->chunk_mask);
    return s;
}

/* Reads a flattened tap list into (ntaps, taps); *n counts the entries. */
static weft_status_t unflatten(const weft_json_props_t *p, const char *key, size_t max,
                               uint32_t *ntaps, int64_t (*taps)[WEFT_SCAN_MAX_TAPS], uint32_t *n)
{
    int64_t flat[MAX_FLAT];
    size_t len = 0, i = 0;
    weft_status_t s = weft_json_props_get_int_array(p, key, flat, MAX_FLAT, &len);
    if (s != WEFT_OK) return s;
    *n = 0;
    while (i < len) {
        int64_t nt = flat[i++];
        if (*n >= max || nt < 0 || nt > WEFT_SCAN_MAX_TAPS || i + (size_t)nt > len)
            return weft_json_props_error(p, WEFT_EPARSE, "%s: malformed tap list", key);
        ntaps[*n] = (uint32_t)nt;
        for (int64_t k = 0; k < nt; k++) taps[*n][k] = flat[i++];
        (*n)++;
    }
    return WEFT_OK;
}

static weft_status_t read_layout(const weft_json_props_t *p, weft__scan_layout_t *l,
                                 int64_t *mask)
{
    memset(l, 0, sizeof *l);
    int64_t nn = 0;
    bool until = false;
    weft_status_t s = unflatten(p, "seq_taps", WEFT_SCAN_MAX_SEQS, l->seq_ntaps, l->seq_taps, &l->n_seq);
    if (s == WEFT_OK)
        s = unflatten(p, "output_taps", WEFT_OP_MAX_OUTPUTS, l->out_ntaps, l->out_taps, &l->n_out);
    if (s == WEFT_OK) s = weft_json_props_get_int(p, "n_nonseqs", &nn);
    if (s == WEFT_OK) s = weft_json_props_get_bool(p, "until", &until);
    if (s == WEFT_OK) s = weft_json_props_get_int(p, "last_mask", mask);
    bool rev = false;
    if (s == WEFT_OK && weft_json_props_has(p, "reverse")) s = weft_json_props_get_bool(p, "reverse", &rev);
    l->reverse = rev;
    if (s != WEFT_OK) return s;
    if (nn < 0 || nn > WEFT_SCAN_MAX_NONSEQS || *mask < 0 || *mask >= (INT64_C(1) << l->n_out))
        return weft_json_props_error(p, WEFT_EPARSE, "n_nonseqs or last_mask out of range");
    for (uint32_t q = 0; q < l->n_seq; q++)
        if (!l->seq_ntaps[q]) return weft_json_props_error(p, WEFT_EPARSE, "a sequence without taps");
    l->n_nonseq = (uint32_t)nn;
    l->has_until = until;
    return WEFT_OK;
}

weft_status_t weft__scan_from_json(weft_graph_t *g, const weft_op_class_t *cls,
                                   const weft_json_props_t *p, const weft_op_t **out)
{
    (void)cls;
    weft__scan_layout_t l;
    int64_t mask = 0, chunk = 0;
    const char *name = NULL;
    weft_status_t s = read_layout(p, &l, &mask);
    if (s == WEFT_OK && weft_json_props_has(p, "chunk_mask"))
        s = weft_json_props_get_int(p, "chunk_mask", &chunk);
    if (s == WEFT_OK && (chunk < 0 || (chunk & ~mask)))
        return weft_json_props_error(p, WEFT_EPARSE, "chunk_mask is no subset of last_mask");
    if (s == WEFT_OK && weft_json_props_has(p, "name")) s = weft_json_props_get_string(p, "name", &name);
    weft_graph_io_t inner = {0};
    if (s == WEFT_OK) s = weft_json_props_get_graph(p, "graph", g, &inner);
    if (s != WEFT_OK) return s;
    size_t n_in = weft__scan_n_seq_taps(&l) + weft__scan_n_carry_taps(&l) + l.n_nonseq;
    const weft__scan_core_t *core = NULL;
    if (inner.n_inputs != n_in || inner.n_outputs != l.n_out + l.has_until || l.n_out == 0)
        s = weft_json_props_error(p, WEFT_EPARSE,
                                  "the inner graph has %zu inputs and %zu outputs; the layout "
                                  "needs %zu and %u",
                                  inner.n_inputs, inner.n_outputs, n_in, l.n_out + l.has_until);
    if (s == WEFT_OK) s = weft__scan_core_make(g, &l, inner.inputs, inner.outputs, &core);
    if (s == WEFT_OK) s = weft__scan_op_ex(g, core, (uint32_t)mask, (uint32_t)chunk, name, out);
    if (s != WEFT_OK && s != WEFT_EPARSE) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", weft_graph_last_error(g));
        s = weft_json_props_error(p, s, "%s", msg);
    }
    weft_graph_io_clear(&inner);
    return s;
}
