/* The call table at the head of every props view (weft_json_props_t), so
 * that op classes compiled outside lib/io - the built-in ops' props codecs in
 * lib/ops/ops_json.c - read and write props through the view itself, without
 * linking lib/io or jansson (tests link module objects one by one, and lib/ops
 * sits below lib/io). Each entry is the public function of weft/json_props.h
 * of the same name. Internal: not part of the API. */
#ifndef WEFT_IO_JSON_VT_H
#define WEFT_IO_JSON_VT_H

#include "weft/json_props.h"

typedef struct weft__json_vt {
    bool (*has)(const weft_json_props_t *p, const char *key);
    weft_status_t (*get_int)(const weft_json_props_t *p, const char *key, int64_t *out);
    weft_status_t (*get_double)(const weft_json_props_t *p, const char *key, double *out);
    weft_status_t (*get_bool)(const weft_json_props_t *p, const char *key, bool *out);
    weft_status_t (*get_string)(const weft_json_props_t *p, const char *key, const char **out);
    weft_status_t (*get_int_array)(const weft_json_props_t *p, const char *key, int64_t *out,
                                   size_t cap, size_t *n);
    weft_status_t (*put_int)(weft_json_props_t *p, const char *key, int64_t v);
    weft_status_t (*put_double)(weft_json_props_t *p, const char *key, double v);
    weft_status_t (*put_bool)(weft_json_props_t *p, const char *key, bool v);
    weft_status_t (*put_string)(weft_json_props_t *p, const char *key, const char *v);
    weft_status_t (*put_int_array)(weft_json_props_t *p, const char *key, const int64_t *v,
                                   size_t n);
    weft_status_t (*error)(const weft_json_props_t *p, weft_status_t status, const char *fmt, ...)
        WEFT_PRINTF(3, 4);
} weft__json_vt_t;

/* The first member of struct weft_json_props (lib/io/io_int.h). */
typedef struct weft__json_head {
    const weft__json_vt_t *vt;
} weft__json_head_t;

/* The call table of view p. */
#define WEFT__JSON_VT(p) (((const weft__json_head_t *)(const void *)(p))->vt)

#endif /* WEFT_IO_JSON_VT_H */
