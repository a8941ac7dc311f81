/* Printing a FunctionGraph: the dprint tree of its outputs followed by its
 * inputs, and Graphviz dot (boxes for applies, ellipses for variables,
 * dashed edges for the features' orderings). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fgraph_int.h"

weft_status_t weft_fgraph_dprint(weft_fgraph_t *fg, FILE *f)
{
    if (!fg || !f) return WEFT_EINVAL;
    weft_status_t s = fg->n_out ? weft_graph_dprint(fg->n_out, fg->outputs, f) : WEFT_OK;
    if (s != WEFT_OK) return s;
    if (fprintf(f, "Inputs:\n") < 0) return WEFT_EIO;
    for (size_t k = 0; k < fg->n_in; k++) {
        char vb[512];
        weft_var_print(fg->inputs[k], vb, sizeof(vb));
        if (fprintf(f, " %s [id v%" PRIu64 "]\n", vb, fg->inputs[k]->id) < 0) return WEFT_EIO;
    }
    return WEFT_OK;
}

/* Escapes quotes and backslashes for a dot label. */
static void dot_label(char *dst, size_t cap, const char *src)
{
    size_t n = 0;
    for (; *src && n + 2 < cap; src++) {
        if (*src == '"' || *src == '\\') dst[n++] = '\\';
        dst[n++] = *src;
    }
    dst[n] = '\0';
}

static int dot_var(FILE *f, const weft_var_t *v)
{
    char vb[256], lb[600];
    weft_var_print(v, vb, sizeof(vb));
    dot_label(lb, sizeof(lb), vb);
    return fprintf(f, "  v%" PRIu64 " [shape=ellipse, label=\"%s\"];\n", v->id, lb);
}

static int dot_apply(FILE *f, const weft_apply_t *a)
{
    char ob[256], lb[600];
    weft_op_print(a->op, ob, sizeof(ob));
    dot_label(lb, sizeof(lb), ob);
    int r = fprintf(f, "  a%" PRIu64 " [shape=box, label=\"%s\"];\n", a->id, lb);
    for (uint32_t i = 0; i < a->n_in && r >= 0; i++) {
        if (a->inputs[i]->flags & WEFT__VAR_CONSTANT) r = dot_var(f, a->inputs[i]);
        if (r >= 0)
            r = fprintf(f, "  v%" PRIu64 " -> a%" PRIu64 " [label=\"%" PRIu32 "\"];\n",
                        a->inputs[i]->id, a->id, i);
    }
    for (uint32_t k = 0; k < a->n_out && r >= 0; k++) {
        r = dot_var(f, a->outputs[k]);
        if (r >= 0) r = fprintf(f, "  a%" PRIu64 " -> v%" PRIu64 ";\n", a->id, a->outputs[k]->id);
    }
    return r;
}

weft_status_t weft_fgraph_dot(weft_fgraph_t *fg, FILE *f)
{
    if (!fg || !f) return WEFT_EINVAL;
    weft_apply_t *const *order;
    size_t n;
    weft_status_t s = weft_fgraph_toposort(fg, &order, &n);
    if (s != WEFT_OK) return s;
    int r = fprintf(f, "digraph fgraph {\n");
    for (size_t k = 0; k < fg->n_in && r >= 0; k++) r = dot_var(f, fg->inputs[k]);
    for (size_t k = 0; k < n && r >= 0; k++) r = dot_apply(f, order[k]);
    for (size_t k = 0; k < fg->n_out && r >= 0; k++) {
        if (!fg->outputs[k]->owner && !weft__fg_is_input(fg, fg->outputs[k]))
            r = dot_var(f, fg->outputs[k]);
        if (r >= 0)
            r = fprintf(f,
                        "  out%zu [shape=plaintext, label=\"output %zu\"];\n"
                        "  v%" PRIu64 " -> out%zu;\n",
                        k, k, fg->outputs[k]->id, k);
    }
    for (size_t p = 0; p < fg->ord_before.n && r >= 0; p++) {
        const weft_apply_t *b = fg->ord_before.p[p], *a = fg->ord_after.p[p];
        r = fprintf(f, "  a%" PRIu64 " -> a%" PRIu64 " [style=dashed];\n", b->id, a->id);
    }
    if (r >= 0) r = fprintf(f, "}\n");
    return r < 0 ? WEFT_EIO : WEFT_OK;
}
