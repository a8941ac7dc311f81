/* Op props as JSON: the key/value view an op class's props_to_json and
 * props_from_json hooks (weft/op.h) work with when a graph is saved to or
 * loaded from the JSON graph format (weft/graph_io.h).
 *
 * A weft_json_props_t is the "props" object of one node (or of a nested op).
 * The saver hands the to_json hook an empty object to fill with put_*; the
 * loader hands the from_json hook the stored object to read with get_* and
 * build the op. Keys are plain strings; values are integers (int64), doubles
 * (NaN and infinities are stored as the strings "nan", "inf", "-inf"),
 * booleans, strings, integer arrays, nested ops and nested graphs (for ops
 * that carry a graph, e.g. OpFromGraph). The JSON library stays hidden.
 *
 * Loading records every key the hook asks for (get_* and has); when the hook
 * succeeds, any other key in the object fails the load with WEFT_EPARSE
 * naming it ("nodes[3].props: unknown key 'x' (Scale reads factor)"), so a
 * hook needs no code of its own to refuse foreign keys.
 *
 * Errors: every get_* failure is WEFT_EPARSE with a message naming the full
 * key path, e.g. "nodes[3].props.axes: expected an array of integers"; it is
 * recorded where the load reports errors (the graph context's last error). A
 * hook reports its own validation errors with weft_json_props_error, which
 * prefixes the same path.
 * Ownership: a props view is borrowed, valid only during the hook call;
 * strings returned by get_string are borrowed, valid as long as the view.
 * Thread: used by the one thread running the save or load. */
#ifndef WEFT_JSON_PROPS_H
#define WEFT_JSON_PROPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/export.h"
#include "weft/graph.h"
#include "weft/op.h"
#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_json_props weft_json_props_t;
typedef struct weft_graph_io weft_graph_io_t;

/* Whether key is present. */
WEFT_API bool weft_json_props_has(const weft_json_props_t *p, const char *key);

/* Readers. Errors: WEFT_EINVAL (NULL args), WEFT_EPARSE (key missing or of
 * another type; get_int also for a non-integral number; get_int_array also
 * for more than cap entries). */
WEFT_API weft_status_t weft_json_props_get_int(const weft_json_props_t *p, const char *key,
                                               int64_t *out);
WEFT_API weft_status_t weft_json_props_get_double(const weft_json_props_t *p, const char *key,
                                                  double *out);
WEFT_API weft_status_t weft_json_props_get_bool(const weft_json_props_t *p, const char *key,
                                                bool *out);
WEFT_API weft_status_t weft_json_props_get_string(const weft_json_props_t *p, const char *key,
                                                  const char **out);
/* Reads at most cap integers into out[0..*n). */
WEFT_API weft_status_t weft_json_props_get_int_array(const weft_json_props_t *p, const char *key,
                                                     int64_t *out, size_t cap, size_t *n);
/* A nested op ({"op": name, "props": {...}}) built in g.
 * Ownership: returns borrowed, owned by g. Errors: as above, plus those of
 * loading a node's op (unknown op: WEFT_EPARSE). */
WEFT_API weft_status_t weft_json_props_get_op(const weft_json_props_t *p, const char *key,
                                              weft_graph_t *g, const weft_op_t **out);
/* A nested graph (same format as a graph file) built in g; *out is filled as
 * by weft_graph_io_load (release with weft_graph_io_clear).
 * Errors: as weft_graph_io_load, with the key path in the message. */
WEFT_API weft_status_t weft_json_props_get_graph(const weft_json_props_t *p, const char *key,
                                                 weft_graph_t *g, weft_graph_io_t *out);

/* Writers (a key written twice keeps the last value).
 * Errors: WEFT_EINVAL (NULL args), WEFT_ENOMEM; put_op / put_graph: as
 * weft_graph_io_save for the nested op or graph. */
WEFT_API weft_status_t weft_json_props_put_int(weft_json_props_t *p, const char *key, int64_t v);
WEFT_API weft_status_t weft_json_props_put_double(weft_json_props_t *p, const char *key, double v);
WEFT_API weft_status_t weft_json_props_put_bool(weft_json_props_t *p, const char *key, bool v);
/* v is copied; NULL stores JSON null (get_string then fails). */
WEFT_API weft_status_t weft_json_props_put_string(weft_json_props_t *p, const char *key,
                                                  const char *v);
WEFT_API weft_status_t weft_json_props_put_int_array(weft_json_props_t *p, const char *key,
                                                     const int64_t *v, size_t n);
WEFT_API weft_status_t weft_json_props_put_op(weft_json_props_t *p, const char *key,
                                              const weft_op_t *op);
WEFT_API weft_status_t weft_json_props_put_graph(weft_json_props_t *p, const char *key,
                                                 const weft_graph_io_t *graph);

/* Records a hook's own error, prefixed with the props path, and returns
 * status (e.g. `return weft_json_props_error(p, WEFT_EPARSE, "bad axis %d", a);`). */
WEFT_API weft_status_t weft_json_props_error(const weft_json_props_t *p, weft_status_t status,
                                             const char *fmt, ...) WEFT_PRINTF(3, 4);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_JSON_PROPS_H */
