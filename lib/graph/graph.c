/* The graph context: its arena, error text, id counters and scratch marks.
 * Everything built in a context is freed in weft_graph_destroy, never
 * earlier; all of it comes from the context's allocator. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph_int.h"

#define ARENA_BLOCK (64u * 1024u)

struct weft__arena_block {
    weft__arena_block_t *next;
    size_t size;
    max_align_t data[];
};

void *weft__arena_alloc(weft__arena_t *a, size_t n)
{
    const size_t align = _Alignof(max_align_t);
    if (n > SIZE_MAX - sizeof(weft__arena_block_t) - align) return NULL; /* cannot be rounded */
    n = (n + align - 1) & ~(align - 1);
    if (n == 0) n = align;
    if (n > a->left) {
        /* Big requests get their own block so the current block keeps its tail. */
        size_t sz = n > ARENA_BLOCK / 4 ? n : ARENA_BLOCK;
        weft__arena_block_t *b = weft__alloc(a->alloc, sizeof(*b) + sz);
        if (!b) return NULL;
        b->size = sizeof(*b) + sz;
        b->next = a->head;
        a->head = b;
        if (sz != ARENA_BLOCK) return (void *)b->data;
        a->cur = (char *)b->data;
        a->left = sz;
    }
    void *p = a->cur;
    a->cur += n;
    a->left -= n;
    return p;
}

void weft__arena_fini(weft__arena_t *a)
{
    weft__arena_block_t *b = a->head;
    while (b) {
        weft__arena_block_t *next = b->next;
        weft__free(a->alloc, b, b->size);
        b = next;
    }
    a->head = NULL;
    a->cur = NULL;
    a->left = 0;
}

char *weft__arena_strdup(weft__arena_t *a, const char *s)
{
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = weft__arena_alloc(a, n);
    if (d) memcpy(d, s, n);
    return d;
}

bool weft__marks_begin(const weft_allocator_t *al, weft__marks_t *m, size_t n)
{
    if (!weft__vec_grow(al, (void **)&m->v, &m->cap, n, sizeof(uint32_t))) return false;
    m->epoch += 2;      /* callers use epoch and epoch + 1 (e.g. gray / black) */
    if (m->epoch < 2) { /* wrapped: old stamps could collide, clear them */
        memset(m->v, 0, m->cap * sizeof(uint32_t));
        m->epoch = 2;
    }
    return true;
}

void weft__marks_free(const weft_allocator_t *al, weft__marks_t *m)
{
    weft__free(al, m->v, m->cap * sizeof(uint32_t));
    m->v = NULL;
    m->cap = 0;
}

weft_status_t weft__graph_errv(weft_graph_t *g, weft_status_t s, const char *fmt, va_list ap)
{
    if (g) vsnprintf(g->err, sizeof(g->err), fmt, ap);
    return s;
}

weft_status_t weft__graph_err(weft_graph_t *g, weft_status_t s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    weft__graph_errv(g, s, fmt, ap);
    va_end(ap);
    return s;
}

weft_status_t weft_graph_set_error(weft_graph_t *g, weft_status_t status, const char *fmt, ...)
{
    if (!g || !fmt) return status;
    /* vsnprintf into a copy: fmt arguments may point into g->err itself. */
    char tmp[WEFT__ERR_CAP];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    memcpy(g->err, tmp, sizeof(tmp));
    return status;
}

const char *weft_graph_last_error(const weft_graph_t *g)
{
    return g ? g->err : "";
}

static weft_status_t output_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                      weft_var_t *const *inputs, size_t *n_out,
                                      const weft_type_t **out_types)
{
    (void)op;
    (void)n_in;
    (void)inputs;
    (void)n_out;
    (void)out_types;
    return weft_graph_set_error(g, WEFT_EINVAL,
                                "Output: pseudo-op of FunctionGraph output slots cannot be "
                                "applied by user code");
}

static const weft_op_class_t output_class = {
    .size = sizeof(weft_op_class_t),
    .name = "Output",
    .make_node = output_make_node,
};

weft_status_t weft_graph_create(const weft_allocator_t *alloc, weft_graph_t **out)
{
    if (!out) return WEFT_EINVAL;
    *out = NULL;
    if (!alloc) alloc = weft_allocator_default();
    weft_graph_t *g = weft__alloc(alloc, sizeof(*g));
    if (!g) return WEFT_ENOMEM;
    memset(g, 0, sizeof(*g));
    g->alloc = alloc;
    g->arena.alloc = alloc;
    weft_status_t s = weft_op_create(g, &output_class, NULL, &g->output_op);
    if (s != WEFT_OK) {
        weft_graph_destroy(g);
        return s;
    }
    *out = g;
    return WEFT_OK;
}

void weft_graph_destroy(weft_graph_t *g)
{
    if (!g) return;
    if (g->release_fgraphs) g->release_fgraphs(g);
    if (g->release_shared) g->release_shared(g);
    for (weft_op_t *op = g->ops; op; op = op->next) {
        void (*fini)(void *) = WEFT__OP_HOOK(op->cls, props_fini);
        if (fini && op->props) fini(op->props);
    }
    weft__free(g->alloc, g->types, g->types_cap * sizeof(*g->types));
    weft__marks_free(g->alloc, &g->amarks);
    weft__marks_free(g->alloc, &g->vmarks);
    weft__arena_fini(&g->arena);
    weft__free(g->alloc, g, sizeof(*g));
}

size_t weft_graph_n_vars(const weft_graph_t *g)
{
    return g ? (size_t)g->n_vars : 0;
}

size_t weft_graph_n_applies(const weft_graph_t *g)
{
    return g ? (size_t)g->n_applies : 0;
}

const weft_allocator_t *weft_graph_allocator(const weft_graph_t *g)
{
    return g ? g->alloc : NULL;
}
