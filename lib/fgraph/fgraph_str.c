/* The one-line expression form of a FunctionGraph (PyTensor's str(fgraph),
 * graph.basic.as_string): "FunctionGraph(Tanh(Add(Dot(x, W), b)))". The
 * format, including the "*n -> " labels of shared subexpressions, is
 * docs/fgraph.md §7. Walks iteratively: a 33000-step chain must not overflow
 * the C stack. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/vec.h"
#include "fgraph_int.h"

/* A bounded writer: counts every byte it would write (snprintf-like). */
typedef struct sbuf {
    char *buf;
    size_t cap, len;
} sbuf_t;

static void put(sbuf_t *b, const char *s)
{
    size_t n = strlen(s);
    if (b->len < b->cap) {
        size_t room = b->cap - b->len - 1, k = n < room ? n : room;
        memcpy(b->buf + b->len, s, k);
        b->buf[b->len + k] = '\0';
    }
    b->len += n;
}

/* Per apply id: references from the printed graph (0, 1, 2 = "several")
 * and the label once shown (0: not shown yet). */
typedef struct ref {
    uint8_t refs;
    bool shown;
    uint32_t label;
} ref_t;

typedef struct frame {
    const weft_var_t *v;
    uint32_t next; /* next input to print */
} frame_t;

typedef struct walk {
    weft_fgraph_t *fg;
    ref_t *ref;
    size_t n_ref;
    frame_t *st;
    size_t sp, st_cap;
    uint32_t labels;
} walk_t;

/* A variable printed as a leaf: no owner, or a declared input. */
static bool is_leaf(const weft_fgraph_t *fg, const weft_var_t *v)
{
    return !v->owner || weft__fg_is_input(fg, v);
}

static bool push(walk_t *w, const weft_var_t *v)
{
    if (!weft__vec_grow(w->fg->alloc, (void **)&w->st, &w->st_cap, w->sp + 1, sizeof(*w->st)))
        return false;
    w->st[w->sp++] = (frame_t){v, 0};
    return true;
}

/* Counts references to each node reachable from the outputs: one per output
 * slot and per input edge of a reachable node (each node's edges once). A
 * node with several outputs counts as shared, so its output index shows. */
static bool count_refs(walk_t *w)
{
    weft_fgraph_t *fg = w->fg;
    for (size_t k = 0; k < fg->n_out; k++)
        if (!is_leaf(fg, fg->outputs[k]) && !push(w, fg->outputs[k])) return false;
    while (w->sp > 0) {
        const weft_apply_t *a = w->st[--w->sp].v->owner;
        ref_t *r = &w->ref[a->id];
        if (r->refs++ > 0 || a->n_out > 1) r->refs = 2;
        if (r->shown) continue;
        r->shown = true; /* "edges counted"; reset before printing */
        for (uint32_t i = 0; i < a->n_in; i++)
            if (!is_leaf(fg, a->inputs[i]) && !push(w, a->inputs[i])) return false;
    }
    for (size_t k = 0; k < w->n_ref; k++) w->ref[k].shown = false;
    return true;
}

static void put_label(sbuf_t *b, const ref_t *r, const weft_var_t *v, const char *tail)
{
    char lb[48];
    if (v->owner->n_out > 1)
        snprintf(lb, sizeof(lb), "*%" PRIu32 "::%" PRIu32 "%s", r->label, v->index, tail);
    else
        snprintf(lb, sizeof(lb), "*%" PRIu32 "%s", r->label, tail);
    put(b, lb);
}

/* Opens v: prints a leaf or a repeat whole (false: nothing to descend),
 * else the label if shared and "Op(" (true). */
static bool open_var(walk_t *w, sbuf_t *b, const weft_var_t *v)
{
    char tb[512];
    if (is_leaf(w->fg, v)) {
        weft_var_print(v, tb, sizeof(tb));
        put(b, tb);
        return false;
    }
    ref_t *r = &w->ref[v->owner->id];
    if (r->shown) {
        put_label(b, r, v, "");
        return false;
    }
    r->shown = true;
    if (r->refs > 1) {
        r->label = ++w->labels;
        put_label(b, r, v, " -> ");
    }
    weft_op_print(v->owner->op, tb, sizeof(tb));
    put(b, tb);
    put(b, "(");
    return true;
}

static bool print_var(walk_t *w, sbuf_t *b, const weft_var_t *v)
{
    if (!open_var(w, b, v)) return true;
    if (!push(w, v)) return false;
    while (w->sp > 0) {
        frame_t *f = &w->st[w->sp - 1];
        const weft_apply_t *a = f->v->owner;
        if (f->next == a->n_in) {
            put(b, ")");
            w->sp--;
            continue;
        }
        if (f->next > 0) put(b, ", ");
        const weft_var_t *in = a->inputs[f->next++];
        if (open_var(w, b, in) && !push(w, in)) return false;
    }
    return true;
}

static weft_status_t render(walk_t *w, sbuf_t *b)
{
    if (!count_refs(w)) return WEFT_ENOMEM;
    put(b, "FunctionGraph(");
    for (size_t k = 0; k < w->fg->n_out; k++) {
        if (k) put(b, ", ");
        if (!print_var(w, b, w->fg->outputs[k])) return WEFT_ENOMEM;
    }
    put(b, ")");
    return WEFT_OK;
}

weft_status_t weft_fgraph_str(weft_fgraph_t *fg, char *buf, size_t cap, size_t *len)
{
    if (!fg || (cap && !buf)) return WEFT_EINVAL;
    walk_t w = {.fg = fg, .n_ref = (size_t)fg->g->n_applies};
    w.ref = weft__vec_alloc(fg->alloc, w.n_ref ? w.n_ref : 1, sizeof(*w.ref));
    weft_status_t s = WEFT_ENOMEM;
    sbuf_t b = {buf, cap, 0};
    if (cap) buf[0] = '\0';
    if (w.ref) {
        memset(w.ref, 0, (w.n_ref ? w.n_ref : 1) * sizeof(*w.ref));
        s = render(&w, &b);
    }
    weft__free(fg->alloc, w.ref, (w.n_ref ? w.n_ref : 1) * sizeof(*w.ref));
    weft__free(fg->alloc, w.st, w.st_cap * sizeof(*w.st));
    if (s != WEFT_OK) {
        if (cap) buf[0] = '\0';
        return weft__fg_err(fg, s, "weft_fgraph_str: out of memory");
    }
    if (len) *len = b.len;
    return WEFT_OK;
}
