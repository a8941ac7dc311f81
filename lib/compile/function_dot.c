/* weft_function_dot: the compiled program as a Graphviz digraph - what the
 * pool runs, after rewriting and with the DestroyHandler's orderings, in the
 * node order and numbering of weft_function_print and the profiler. */
#include <stdio.h>
#include <stdlib.h>

#include "compile_int.h"
#include "weft/profile.h"

/* Writes s as a dot string body (quotes and backslashes escaped). */
static int put_escaped(FILE *out, const char *s)
{
    int r = 0;
    for (; *s && r >= 0; s++)
        r = (*s == '"' || *s == '\\') ? fprintf(out, "\\%c", *s) : fputc(*s, out);
    return r < 0 ? -1 : 0;
}

static int dot_inputs(const weft_function_t *f, FILE *out)
{
    char buf[256];
    int r = 0;
    for (size_t k = 0; k < f->n_in && r >= 0; k++) {
        weft_var_print(f->in_vars[k], buf, sizeof buf);
        r = fprintf(out, "  in%zu [shape=ellipse, label=\"", k);
        if (r >= 0) r = put_escaped(out, buf);
        if (r >= 0) r = fprintf(out, "%s\"];\n", f->in_mutable[k] ? " (mutable)" : "");
    }
    return r;
}

/* Node i: "i: Apply" in a box; destroying nodes are filled. */
static int dot_node(const weft_function_t *f, uint32_t i, FILE *out)
{
    char buf[512];
    const weft_apply_t *a = f->nodes[i].apply;
    weft_op_alias_t dm[WEFT_OP_MAX_ALIAS];
    const weft_op_class_t *cls = weft_op_class(weft_apply_op(a));
    bool destroys = cls->destroy_map && cls->destroy_map(weft_apply_op(a), dm, WEFT_OP_MAX_ALIAS);
    weft_apply_print(a, buf, sizeof buf);
    int r = fprintf(out, "  n%u [shape=box%s, label=\"%u: ", i,
                    destroys ? ", style=filled, fillcolor=\"#f4cccc\"" : "", i);
    if (r >= 0) r = put_escaped(out, buf);
    return r < 0 ? r : fprintf(out, "\"];\n");
}

/* Node i labelled from a profile: "i: name", output types, time per call;
 * filled by its share of the node time (white to red), in-place nodes with
 * a double border. */
static int dot_prof_node(const weft_profile_t *p, uint32_t i, FILE *out)
{
    const weft_profile_apply_t *a = &p->applies[i];
    double share = a->percent / 100.0, per = a->calls ? (double)a->time_ns / (double)a->calls : 0;
    int gb = 255 - (int)(share * 255.0 + 0.5);
    gb = gb < 0 ? 0 : gb;
    int r = fprintf(out, "  n%u [shape=box, style=filled, fillcolor=\"#ff%02x%02x\"%s, label=\"%u: ",
                    i, gb, gb, a->destroys >= 0 ? ", peripheries=2" : "", i);
    if (r >= 0) r = put_escaped(out, a->name);
    if (r >= 0) r = fprintf(out, "\\n");
    if (r >= 0) r = put_escaped(out, a->out_types);
    if (r >= 0)
        r = fprintf(out, "\\n%.3f ms per call (%.1f%%)\"];\n", per * 1e-6, a->percent);
    return r;
}

/* Data edges into node i (from its producers or the function's inputs). */
static int dot_node_inputs(const weft_function_t *f, const uint32_t *node_of, uint32_t i,
                           FILE *out)
{
    const weft_apply_t *a = f->nodes[i].apply;
    int r = 0;
    for (size_t k = 0; k < weft_apply_n_inputs(a) && r >= 0; k++) {
        weft_var_t *v = weft_apply_input(a, k);
        weft_apply_t *p = weft_var_owner(v);
        if (p) {
            r = fprintf(out, "  n%u -> n%u;\n", node_of[weft_apply_id(p)], i);
            continue;
        }
        for (size_t j = 0; j < f->n_in; j++)
            if (f->in_vars[j] == v) r = fprintf(out, "  in%zu -> n%u;\n", j, i);
    }
    return r;
}

/* DAG edges that are no data dependency: the orderings (dashed). */
static int dot_orderings(const weft_function_t *f, FILE *out)
{
    int r = 0;
    for (size_t e = 0; e < f->n_edges && r >= 0; e++) {
        uint32_t from = weft__edge_from(f->edges[e]), to = weft__edge_to(f->edges[e]);
        const weft_apply_t *a = f->nodes[to].apply, *p = f->nodes[from].apply;
        bool data = false;
        for (size_t k = 0; k < weft_apply_n_inputs(a) && !data; k++)
            data = weft_var_owner(weft_apply_input(a, k)) == p;
        if (!data) r = fprintf(out, "  n%u -> n%u [style=dashed];\n", from, to);
    }
    return r;
}

static int dot_outputs(const weft_function_t *f, const uint32_t *node_of, FILE *out)
{
    int r = 0;
    for (size_t k = 0; k < f->n_out + f->n_upd && r >= 0; k++) {
        weft_apply_t *p = weft_var_owner(f->out_vars[k]);
        bool upd = k >= f->n_out;
        r = fprintf(out, "  out%zu [shape=plaintext, label=\"%s %zu\"];\n", k,
                    upd ? "update" : "output", upd ? k - f->n_out : k);
        if (r >= 0 && p) r = fprintf(out, "  n%u -> out%zu;\n", node_of[weft_apply_id(p)], k);
        for (size_t j = 0; !p && j < f->n_in && r >= 0; j++)
            if (f->in_vars[j] == f->out_vars[k]) r = fprintf(out, "  in%zu -> out%zu;\n", j, k);
    }
    return r;
}

/* The dot graph; nodes labelled from p when given. */
static weft_status_t write_dot(const weft_function_t *f, const weft_profile_t *p, FILE *out)
{
    size_t na = weft_graph_n_applies(f->g);
    uint32_t *node_of = malloc((na + 1) * sizeof *node_of);
    if (!node_of) return weft__fn_error(f, WEFT_ENOMEM, "out of memory writing the dot graph");
    for (uint32_t i = 0; i < f->n_nodes; i++) node_of[weft_apply_id(f->nodes[i].apply)] = i;
    int r = fprintf(out, "digraph \"");
    if (r >= 0) r = put_escaped(out, f->name);
    if (r >= 0) r = fprintf(out, "\" {\n  rankdir=TB;\n");
    if (r >= 0) r = dot_inputs(f, out);
    for (uint32_t i = 0; i < f->n_nodes && r >= 0; i++)
        r = p ? dot_prof_node(p, i, out) : dot_node(f, i, out);
    for (uint32_t i = 0; i < f->n_nodes && r >= 0; i++) r = dot_node_inputs(f, node_of, i, out);
    if (r >= 0) r = dot_orderings(f, out);
    if (r >= 0) r = dot_outputs(f, node_of, out);
    if (r >= 0) r = fprintf(out, "}\n");
    free(node_of);
    return r < 0 || ferror(out) ? WEFT_EIO : WEFT_OK;
}

weft_status_t weft_function_dot(const weft_function_t *f, FILE *out)
{
    if (!f || !out) return WEFT_EINVAL;
    return write_dot(f, NULL, out);
}

weft_status_t weft_profile_write_dot(const weft_function_t *f, const weft_profile_t *p, FILE *out)
{
    if (!f || !p || !out || p->n_applies != f->n_nodes) return WEFT_EINVAL;
    return write_dot(f, p, out);
}
