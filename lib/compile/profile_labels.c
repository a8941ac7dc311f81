/* The profile's per-node labels in weft's own terms (weft/profile.h): an
 * apply's op without its in-place props ("Tanh", "Composite{(i0 + i1)}"),
 * the input it overwrites said in words ("destroys input 0"), its inputs
 * named unambiguously (a node's output is "Dot.out#12", node 12 in the
 * report's numbering; named variables by name; function inputs by name or
 * "input k"; constants by value), its output types and the bytes its outputs
 * allocate per call. Built once per snapshot into one string block. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"

/* A growable text block; entries are recorded as offsets (the block moves). */
typedef struct sbuf {
    char *s;
    size_t len, cap;
    bool oom;
} sbuf_t;

static void sb_printf(sbuf_t *b, const char *fmt, ...) WEFT_PRINTF(2, 3);
static void sb_printf(sbuf_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || b->oom) return;
    if (b->len + (size_t)n + 1 > b->cap) {
        size_t cap = 2 * (b->len + (size_t)n + 1) + 256;
        char *s = realloc(b->s, cap);
        if (!s) {
            b->oom = true;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* Ends the entry begun at offset start (NUL-terminates it) and records
 * start in *off. */
static void sb_close(sbuf_t *b, size_t start, size_t *off)
{
    sb_printf(b, "%c", '\0');
    *off = start;
}

/* Removes the in-place props ("inplace=..." entries) from a printed op: the
 * report says what is destroyed in words instead. */
static void strip_inplace(char *op)
{
    char *p;
    while ((p = strstr(op, "inplace=")) != NULL) {
        char *end = p + strlen("inplace=");
        while (*end && *end != ',' && *end != '}') end++;
        if (*end == ',') end += *(end + 1) == ' ' ? 2 : 1;
        else if (p >= op + 2 && p[-1] == ' ' && p[-2] == ',') p -= 2;
        memmove(p, end, strlen(end) + 1);
    }
    size_t n = strlen(op);
    if (n >= 2 && strcmp(op + n - 2, "{}") == 0) op[n - 2] = '\0';
}

/* The input an op overwrites, or -1. */
static int destroyed_input(const weft_op_t *op)
{
    const weft_op_alias_t *dm;
    size_t n;
    weft_op_destroy_map(op, &dm, &n);
    return n ? (int)dm[0].input : -1;
}

static void op_label(const weft_apply_t *a, sbuf_t *b)
{
    char ob[512];
    weft_op_print(weft_apply_op(a), ob, sizeof ob);
    strip_inplace(ob);
    sb_printf(b, "%s", ob);
}

static void input_label(const weft_function_t *f, const uint32_t *node_of, const weft_var_t *v,
                        sbuf_t *b)
{
    const weft_apply_t *p = weft_var_owner(v);
    char vb[256];
    if (weft_var_name(v)) {
        sb_printf(b, "%s", weft_var_name(v));
    } else if (p) {
        const char *cls = weft_op_name(weft_apply_op(p));
        uint32_t at = node_of[weft_apply_id(p)];
        if (weft_apply_n_outputs(p) == 1) sb_printf(b, "%s.out#%u", cls, at);
        else sb_printf(b, "%s.out%zu#%u", cls, weft_var_index(v), at);
    } else if (weft_var_is_constant(v)) {
        weft_var_print(v, vb, sizeof vb);
        sb_printf(b, "%s", vb);
    } else {
        size_t k = 0;
        while (k < f->n_in && f->in_vars[k] != v) k++;
        sb_printf(b, "input %zu", k);
    }
}

static void apply_label(const weft_function_t *f, const uint32_t *node_of, uint32_t i, sbuf_t *b)
{
    const weft_apply_t *a = f->nodes[i].apply;
    op_label(a, b);
    sb_printf(b, "(");
    for (size_t k = 0; k < weft_apply_n_inputs(a); k++) {
        if (k) sb_printf(b, ", ");
        input_label(f, node_of, weft_apply_input(a, k), b);
    }
    sb_printf(b, ")");
    int d = destroyed_input(weft_apply_op(a));
    if (d >= 0) sb_printf(b, " destroys input %d", d);
}

/* Output types, and the bytes of the outputs the node allocates (a view or
 * an overwritten input allocates nothing; an unknown length counts 0). */
static uint64_t out_types(const weft_apply_t *a, sbuf_t *b)
{
    const weft_op_t *op = weft_apply_op(a);
    const weft_op_alias_t *dm, *vm;
    size_t nd, nv;
    weft_op_destroy_map(op, &dm, &nd);
    weft_op_view_map(op, &vm, &nv);
    uint64_t bytes = 0;
    for (size_t o = 0; o < weft_apply_n_outputs(a); o++) {
        const weft_type_t *t = weft_var_type(weft_apply_output(a, o));
        char tb[128];
        weft_type_print(t, tb, sizeof tb);
        sb_printf(b, "%s%s", o ? ", " : "", tb);
        bool alias = false;
        for (size_t k = 0; k < nd; k++) alias = alias || dm[k].output == o;
        for (size_t k = 0; k < nv; k++) alias = alias || vm[k].output == o;
        if (alias || weft_type_kind(t) != WEFT_TYPE_TENSOR) continue;
        uint64_t n = weft_dtype_size(weft_type_dtype(t));
        for (int d = 0; d < weft_type_ndim(t); d++)
            n = weft_type_dim(t, d) < 0 ? 0 : n * (uint64_t)weft_type_dim(t, d);
        bytes += n;
    }
    return bytes;
}

/* Per node: label, op, class and types offsets into one block (4 per node). */
static void label_node(const weft_function_t *f, const uint32_t *node_of, uint32_t i, sbuf_t *b,
                       size_t *offs, weft_profile_apply_t *r)
{
    const weft_apply_t *a = f->nodes[i].apply;
    size_t at = b->len;
    apply_label(f, node_of, i, b);
    sb_close(b, at, &offs[4 * i]);
    at = b->len;
    op_label(a, b);
    r->destroys = destroyed_input(weft_apply_op(a));
    if (r->destroys >= 0) sb_printf(b, " destroys input %d", r->destroys);
    sb_close(b, at, &offs[4 * i + 1]);
    at = b->len;
    sb_printf(b, "%s", weft_op_name(weft_apply_op(a)));
    sb_close(b, at, &offs[4 * i + 2]);
    at = b->len;
    r->out_bytes = out_types(a, b);
    sb_close(b, at, &offs[4 * i + 3]);
}

weft_status_t weft__prof_label_applies(const weft_function_t *f, weft_profile_apply_t *rows,
                                       char **strings)
{
    size_t na = weft_graph_n_applies(f->g);
    uint32_t *node_of = calloc(na + 1, sizeof *node_of);
    size_t *offs = malloc((4 * (size_t)f->n_nodes + 1) * sizeof *offs);
    sbuf_t b = {0};
    for (uint32_t i = 0; node_of && i < f->n_nodes; i++)
        node_of[weft_apply_id(f->nodes[i].apply)] = i;
    for (uint32_t i = 0; node_of && offs && i < f->n_nodes && !b.oom; i++)
        label_node(f, node_of, i, &b, offs, &rows[i]);
    bool ok = node_of && offs && !b.oom; /* b.s stays NULL without nodes */
    for (uint32_t i = 0; ok && i < f->n_nodes; i++) {
        rows[i].name = b.s + offs[4 * i];
        rows[i].op = b.s + offs[4 * i + 1];
        rows[i].op_class = b.s + offs[4 * i + 2];
        rows[i].out_types = b.s + offs[4 * i + 3];
    }
    free(node_of);
    free(offs);
    if (!ok) free(b.s);
    *strings = ok ? b.s : NULL;
    return ok ? WEFT_OK : WEFT_ENOMEM;
}
