/* Internal interface of the JSON graph format (graph_save.c, graph_load.c,
 * json_props_codec.c): the props view over a jansson
 * object, the nested save/load entry points and error helpers. */
#ifndef WEFT_IO_INT_H
#define WEFT_IO_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "graph/json_props_vt.h"
#include "weft/graph.h"
#include "weft/graph_io.h"
#include "weft/json_props.h"
#include "weft/op.h"

#define WEFT__IO_PATH_MAX 384

struct weft_json_props {
    weft__json_head_t head;       /* call table: first, see graph/json_props_vt.h */
    json_t *obj;                  /* the props object (borrowed) */
    weft_graph_t *g;              /* where errors are recorded */
    char path[WEFT__IO_PATH_MAX]; /* e.g. "nodes[3].props" */
    json_t *seen;                 /* loading: the keys the hook asked for (a set; owned) */
    const char *source;           /* loading: the document's name, for nested graphs */
};

/* Records "path: message" on g and returns status. */
weft_status_t weft__io_err(weft_graph_t *g, weft_status_t status, const char *path, const char *fmt,
                           ...) WEFT_PRINTF(4, 5);

/* Saves graph as a JSON object (new reference in *out). Errors: as
 * weft_graph_io_save. */
weft_status_t weft__io_save_obj(const weft_graph_io_t *graph, json_t **out);
/* Loads a graph object into g; path prefixes error messages ("" at the top),
 * source names the document in creation sites. Errors: as weft_graph_io_load. */
weft_status_t weft__io_load_obj(weft_graph_t *g, json_t *root, const char *path,
                                const char *source, weft_graph_io_t *out);

/* WEFT_EPARSE "path: unknown key 'k'" (recorded on g) for the first key of
 * obj not in allowed (NULL-terminated); WEFT_OK when every key is allowed. */
weft_status_t weft__io_check_keys(weft_graph_t *g, json_t *obj, const char *path,
                                  const char *const *allowed);

/* {"op": name, "props": {...}} for op (new reference). Errors: WEFT_ENOTIMPL
 * (props without a hook), a hook's error, WEFT_ENOMEM (on g). */
weft_status_t weft__io_save_op(weft_graph_t *g, const weft_op_t *op, json_t **out);
/* Builds the op described by entry ("op" and optional "props") in g; path
 * names the entry in errors, source the document. A props key the class's
 * hook never reads is an error (WEFT_EPARSE naming it). */
weft_status_t weft__io_load_op(weft_graph_t *g, json_t *entry, const char *path,
                               const char *source, const weft_op_t **out);

/* The call table every props view carries (json_props_codec.c). */
extern const weft__json_vt_t weft__json_props_vt;

/* The JSON-hook of cls if it was compiled with it, else NULL. */
#define WEFT__IO_HOOK(cls, field) \
    ((cls)->size >= offsetof(weft_op_class_t, field) + sizeof((cls)->field) ? (cls)->field : NULL)

#endif /* WEFT_IO_INT_H */
