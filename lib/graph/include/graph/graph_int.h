/* Internal layout of the graph core: context, arena, types, variables, apply
 * nodes, ops and clone maps. Shared by the lib/graph sources only.
 *
 * Design: every variable and apply node gets a dense id (creation order in its
 * context), so FunctionGraphs keep their indexes in arrays indexed by id
 * instead of hash tables. All objects live in the context's arena and are
 * freed together in weft_graph_destroy. Traversals are iterative and use
 * epoch-stamped mark arrays (no clearing between traversals). */
#ifndef WEFT_GRAPH_INT_H
#define WEFT_GRAPH_INT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base_int.h"
#include "base/vec.h"
#include "graph/ctor_int.h"
#include "weft/fgraph.h"
#include "weft/graph.h"
#include "weft/op.h"
#include "weft/type.h"

#define WEFT__ERR_CAP 1024
#define WEFT__NONE UINT32_MAX

/* ---- arena: bump allocation in chunks, freed all at once ---------------- */
typedef struct weft__arena_block weft__arena_block_t;
typedef struct weft__arena {
    const weft_allocator_t *alloc;
    weft__arena_block_t *head;
    char *cur;
    size_t left;
} weft__arena_t;

void *weft__arena_alloc(weft__arena_t *a, size_t n);
void weft__arena_fini(weft__arena_t *a);
/* Copies s into the arena; NULL stays NULL. Returns NULL on OOM (with s != NULL). */
char *weft__arena_strdup(weft__arena_t *a, const char *s);

/* ---- objects ------------------------------------------------------------ */
struct weft_type {
    weft_graph_t *g;
    uint64_t hash;
    weft_type_kind_t kind;
    weft_dtype_t dtype;
    int ndim;
    int64_t dims[WEFT_MAX_NDIM];
};

#define WEFT__VAR_CONSTANT 1u
#define WEFT__VAR_INDESTRUCTIBLE 2u

struct weft_var {
    const weft_type_t *type;
    weft_apply_t *owner;
    weft_graph_t *g;
    const char *name;
    const char *file;
    const void *data; /* constants only */
    size_t nbytes;
    uint64_t id;
    uint32_t index;
    uint32_t flags;
    int line;
};

struct weft_apply {
    const weft_op_t *op;
    weft_var_t **inputs;
    weft_var_t **outputs;
    weft_graph_t *g;
    const char *file;
    weft_fgraph_t *slot_fg; /* Output(k) pseudo-node: its fgraph, else NULL */
    size_t slot;
    uint64_t id;
    uint32_t n_in;
    uint32_t n_out;
    int line;
};

struct weft_op {
    const weft_op_class_t *cls;
    void *props;
    weft_graph_t *g;
    weft_op_t *next; /* context's op list (props_fini at destroy) */
    int default_output;
    uint8_t n_destroy, n_view, n_tol_same, n_tol_alias;
    weft_op_alias_t destroy[WEFT_OP_MAX_ALIAS];
    weft_op_alias_t view[WEFT_OP_MAX_ALIAS];
    weft_op_alias_t tol_same[WEFT_OP_MAX_ALIAS];
    weft_op_alias_t tol_alias[WEFT_OP_MAX_ALIAS];
};

/* Epoch-stamped marks indexed by id: a value equal to the current epoch means
 * "marked in this traversal"; bumping the epoch clears every mark at once. */
typedef struct weft__marks {
    uint32_t *v;
    size_t cap;
    uint32_t epoch;
} weft__marks_t;

struct weft_graph {
    const weft_allocator_t *alloc;
    weft__arena_t arena;
    uint64_t n_vars;
    uint64_t n_applies;
    /* interned types: open addressing, power-of-two capacity */
    weft_type_t **types;
    size_t types_cap, types_n;
    weft_op_t *ops;
    /* Live FunctionGraphs of the context (lib/fgraph keeps this list). The IR
     * knows nothing of them: the FunctionGraph module sets release_fgraphs
     * when it creates one, and weft_graph_destroy calls it first. */
    weft_fgraph_t *fgraphs;
    void (*release_fgraphs)(weft_graph_t *g);
    const weft_op_t *output_op; /* the op of Output(k) pseudo-nodes */
    const char *last_file;      /* the last creation-site file copied (see weft__trace_file) */
    weft__marks_t amarks;       /* scratch for graph-level traversals */
    weft__marks_t vmarks;
    char err[WEFT__ERR_CAP];
    /* The kept (first) constructor error (graph_error.c) and the status of
     * the latest failed constructor, kept or not. */
    weft_status_t kept_status;
    weft_status_t ctor_status;
    char kept[WEFT__KEPT_CAP];
};

struct weft_clone_map {
    weft_graph_t *g;
    size_t nv, na;
    weft_var_t **vmap;
    weft_apply_t **amap;
};

/* ---- helpers shared between files --------------------------------------- */
/* OP_HOOK(cls, field): the hook if the author's struct is large enough to hold it. */
#define WEFT__CLS_HAS(cls, field)                                                                  \
    (offsetof(weft_op_class_t, field) + sizeof((cls)->field) <= (cls)->size)
#define WEFT__OP_HOOK(cls, field) (WEFT__CLS_HAS(cls, field) ? (cls)->field : NULL)

weft_status_t weft__graph_errv(weft_graph_t *g, weft_status_t s, const char *fmt, va_list ap);
weft_status_t weft__graph_err(weft_graph_t *g, weft_status_t s, const char *fmt, ...)
    WEFT_PRINTF(3, 4);

/* Marks: prepares a new epoch covering ids < n. Returns false on OOM. */
bool weft__marks_begin(const weft_allocator_t *al, weft__marks_t *m, size_t n);
static inline bool weft__marks_has(const weft__marks_t *m, uint64_t id, uint32_t val)
{
    return id < m->cap && m->v[id] == val;
}
void weft__marks_free(const weft_allocator_t *al, weft__marks_t *m);

/* New variable (owner/index set by the caller). file must outlive g. */
weft_var_t *weft__var_new(weft_graph_t *g, const weft_type_t *type, const char *name,
                          const char *file, int line);
/* A raw apply: no make_node; inputs copied; outputs of the given types (fresh). */
weft_apply_t *weft__apply_new(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                              weft_var_t *const *inputs, size_t n_out,
                              const weft_type_t *const *out_types, const char *file, int line);
/* Output(k) pseudo-node for fg, with `input` as its one input. */
weft_apply_t *weft__apply_new_output_slot(weft_graph_t *g, weft_fgraph_t *fg, size_t k,
                                          weft_var_t *input);
/* Clone of a: same op and inputs, fresh outputs of the same types and names. */
weft_apply_t *weft__apply_clone_raw(weft_graph_t *g, const weft_apply_t *a,
                                    weft_var_t *const *inputs);

/* A context-owned copy of a creation-site file name; consecutive calls with
 * the same text share one copy. NULL on OOM ("?" for a NULL file). */
const char *weft__trace_file(weft_graph_t *g, const char *file);

/* "variable 7 'x' (float64[3], created at f.c:12)"; snprintf-like. */
int weft__var_describe(const weft_var_t *v, char *buf, size_t cap);

/* Applies reachable from outs (stopping at variables marked `stop` in
 * g->vmarks with value stop_val, and at owner-less variables), in topological
 * order. Fails with WEFT_ECYCLE on a cycle (message names the nodes). Returns
 * a new array (free with g->alloc, n * sizeof pointer). */
weft_status_t weft__graph_toposort(weft_graph_t *g, size_t n_out, weft_var_t *const *outs,
                                   bool use_stop, uint32_t stop_val, weft_apply_t ***order,
                                   size_t *n);
/* For a traversal that met a again while a was still open (a lies on a
 * cycle): WEFT_ECYCLE with "who: graph contains a cycle: ..." naming the
 * cycle on g (WEFT_ENOMEM if the search for it runs out of memory). */
weft_status_t weft__graph_cycle_error(weft_graph_t *g, const weft_apply_t *a, const char *who);
/* Writes "apply a (Op), apply b (Op), ..." for a cycle found on a DFS stack. */
void weft__describe_cycle(char *buf, size_t cap, weft_apply_t *const *nodes, size_t n);

weft_clone_map_t *weft__clone_map_new(weft_graph_t *g);

#endif /* WEFT_GRAPH_INT_H */
