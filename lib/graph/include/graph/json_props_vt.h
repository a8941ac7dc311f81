/* The codec interface behind the props view of weft/json_props.h: every
 * weft_json_props_t starts with a pointer to this call table, filled by the
 * module that implements the JSON graph format (lib/io). The public
 * weft_json_props_* functions (lib/graph/json_props.c) check their arguments
 * and dispatch through it, so op classes in any module read and write their
 * props through the public header alone, without linking lib/io or jansson
 * (docs/architecture.md, "Layers"). Internal: not part of the API. */
#ifndef WEFT_GRAPH_JSON_PROPS_VT_H
#define WEFT_GRAPH_JSON_PROPS_VT_H

#include "weft/json_props.h"

typedef struct weft__json_vt {
    bool (*has)(const weft_json_props_t *p, const char *key);
    weft_status_t (*get_int)(const weft_json_props_t *p, const char *key, int64_t *out);
    weft_status_t (*get_double)(const weft_json_props_t *p, const char *key, double *out);
    weft_status_t (*get_bool)(const weft_json_props_t *p, const char *key, bool *out);
    weft_status_t (*get_string)(const weft_json_props_t *p, const char *key, const char **out);
    weft_status_t (*get_int_array)(const weft_json_props_t *p, const char *key, int64_t *out,
                                   size_t cap, size_t *n);
    weft_status_t (*get_op)(const weft_json_props_t *p, const char *key, weft_graph_t *g,
                            const weft_op_t **out);
    weft_status_t (*get_graph)(const weft_json_props_t *p, const char *key, weft_graph_t *g,
                               weft_graph_io_t *out);
    weft_status_t (*put_int)(weft_json_props_t *p, const char *key, int64_t v);
    weft_status_t (*put_double)(weft_json_props_t *p, const char *key, double v);
    weft_status_t (*put_bool)(weft_json_props_t *p, const char *key, bool v);
    weft_status_t (*put_string)(weft_json_props_t *p, const char *key, const char *v);
    weft_status_t (*put_int_array)(weft_json_props_t *p, const char *key, const int64_t *v,
                                   size_t n);
    weft_status_t (*put_op)(weft_json_props_t *p, const char *key, const weft_op_t *op);
    weft_status_t (*put_graph)(weft_json_props_t *p, const char *key,
                               const weft_graph_io_t *graph);
    /* Records msg (already formatted) prefixed with the view's path. */
    weft_status_t (*error)(const weft_json_props_t *p, weft_status_t status, const char *msg);
} weft__json_vt_t;

/* The first member of every props view's struct. */
typedef struct weft__json_head {
    const weft__json_vt_t *vt;
} weft__json_head_t;

/* The call table of view p. */
#define WEFT__JSON_VT(p) (((const weft__json_head_t *)(const void *)(p))->vt)

#endif /* WEFT_GRAPH_JSON_PROPS_VT_H */
