/* The jansson side of the props view handed to the ops' props_to_json /
 * props_from_json hooks: the codec table (graph/json_props_vt.h) behind the
 * public weft_json_props_* functions - typed getters and putters over one
 * jansson object, with errors that name the full key path. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "io_int.h"

weft_status_t weft__io_err(weft_graph_t *g, weft_status_t status, const char *path, const char *fmt,
                           ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (!g) return status;
    return weft_graph_set_error(g, status, "%s%s%s", path ? path : "", path && *path ? ": " : "",
                                msg);
}

weft_status_t weft__io_check_keys(weft_graph_t *g, json_t *obj, const char *path,
                                  const char *const *allowed)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v) {
        size_t k = 0;
        while (allowed[k] && strcmp(allowed[k], key) != 0) k++;
        if (!allowed[k]) return weft__io_err(g, WEFT_EPARSE, path, "unknown key '%s'", key);
    }
    return WEFT_OK;
}

/* Loading: notes that the hook asked for key (weft__io_load_op then refuses
 * the keys nobody asked for). A failed note only weakens that check. */
static void mark_seen(const weft_json_props_t *p, const char *key)
{
    if (p->seen) (void)json_object_set_new(p->seen, key, json_true());
}

static weft_status_t props_error(const weft_json_props_t *p, weft_status_t status,
                                 const char *msg)
{
    return weft__io_err(p->g, status, p->path, "%s", msg);
}

static bool props_has(const weft_json_props_t *p, const char *key)
{
    if (!p || !key) return false;
    mark_seen(p, key);
    return json_object_get(p->obj, key) != NULL;
}

/* The value of key, or NULL after recording "path.key: missing". */
static json_t *need(const weft_json_props_t *p, const char *key)
{
    mark_seen(p, key);
    json_t *v = json_object_get(p->obj, key);
    if (!v) weft__io_err(p->g, WEFT_EPARSE, p->path, "missing key '%s'", key);
    return v;
}

static weft_status_t bad_type(const weft_json_props_t *p, const char *key, const char *what)
{
    return weft__io_err(p->g, WEFT_EPARSE, p->path, "%s: expected %s", key, what);
}

static weft_status_t props_get_int(const weft_json_props_t *p, const char *key, int64_t *out)
{
    if (!p || !key || !out) return WEFT_EINVAL;
    json_t *v = need(p, key);
    if (!v) return WEFT_EPARSE;
    if (!json_is_integer(v)) return bad_type(p, key, "an integer");
    *out = (int64_t)json_integer_value(v);
    return WEFT_OK;
}

static weft_status_t props_get_double(const weft_json_props_t *p, const char *key, double *out)
{
    if (!p || !key || !out) return WEFT_EINVAL;
    json_t *v = need(p, key);
    if (!v) return WEFT_EPARSE;
    if (json_is_number(v)) {
        *out = json_number_value(v);
        return WEFT_OK;
    }
    const char *s = json_string_value(v);
    if (s && strcmp(s, "nan") == 0)
        *out = NAN;
    else if (s && strcmp(s, "inf") == 0)
        *out = INFINITY;
    else if (s && strcmp(s, "-inf") == 0)
        *out = -INFINITY;
    else
        return bad_type(p, key, "a number");
    return WEFT_OK;
}

static weft_status_t props_get_bool(const weft_json_props_t *p, const char *key, bool *out)
{
    if (!p || !key || !out) return WEFT_EINVAL;
    json_t *v = need(p, key);
    if (!v) return WEFT_EPARSE;
    if (!json_is_boolean(v)) return bad_type(p, key, "true or false");
    *out = json_is_true(v);
    return WEFT_OK;
}

static weft_status_t props_get_string(const weft_json_props_t *p, const char *key,
                                         const char **out)
{
    if (!p || !key || !out) return WEFT_EINVAL;
    json_t *v = need(p, key);
    if (!v) return WEFT_EPARSE;
    if (!json_is_string(v)) return bad_type(p, key, "a string");
    *out = json_string_value(v);
    return WEFT_OK;
}

static weft_status_t props_get_int_array(const weft_json_props_t *p, const char *key,
                                            int64_t *out, size_t cap, size_t *n)
{
    if (!p || !key || !n || (cap && !out)) return WEFT_EINVAL;
    json_t *v = need(p, key);
    if (!v) return WEFT_EPARSE;
    if (!json_is_array(v)) return bad_type(p, key, "an array of integers");
    if (json_array_size(v) > cap)
        return weft__io_err(p->g, WEFT_EPARSE, p->path, "%s: %zu entries, at most %zu allowed", key,
                            json_array_size(v), cap);
    for (size_t i = 0; i < json_array_size(v); i++) {
        json_t *e = json_array_get(v, i);
        if (!json_is_integer(e)) return bad_type(p, key, "an array of integers");
        out[i] = (int64_t)json_integer_value(e);
    }
    *n = json_array_size(v);
    return WEFT_OK;
}

static void sub_path(char *dst, const weft_json_props_t *p, const char *key)
{
    if (snprintf(dst, WEFT__IO_PATH_MAX, "%s.%s", p->path, key) < 0) dst[0] = '\0';
}

static weft_status_t props_get_op(const weft_json_props_t *p, const char *key, weft_graph_t *g,
                                     const weft_op_t **out)
{
    if (!p || !key || !g || !out) return WEFT_EINVAL;
    json_t *v = need(p, key);
    if (!v) return WEFT_EPARSE;
    static const char *const keys[] = {"op", "props", NULL};
    char path[WEFT__IO_PATH_MAX];
    sub_path(path, p, key);
    weft_status_t s = json_is_object(v) ? weft__io_check_keys(p->g, v, path, keys) : WEFT_OK;
    return s != WEFT_OK ? s : weft__io_load_op(g, v, path, p->source, out);
}

static weft_status_t props_get_graph(const weft_json_props_t *p, const char *key,
                                        weft_graph_t *g, weft_graph_io_t *out)
{
    if (!p || !key || !g || !out) return WEFT_EINVAL;
    json_t *v = need(p, key);
    if (!v) return WEFT_EPARSE;
    char path[WEFT__IO_PATH_MAX];
    sub_path(path, p, key);
    return weft__io_load_obj(g, v, path, p->source, out);
}

/* ---- writers ------------------------------------------------------------------ */

static weft_status_t put(weft_json_props_t *p, const char *key, json_t *v)
{
    if (!v || json_object_set_new(p->obj, key, v) != 0)
        return weft__io_err(p->g, WEFT_ENOMEM, p->path, "%s: out of memory", key);
    return WEFT_OK;
}

static weft_status_t props_put_int(weft_json_props_t *p, const char *key, int64_t v)
{
    if (!p || !key) return WEFT_EINVAL;
    return put(p, key, json_integer((json_int_t)v));
}

static weft_status_t props_put_double(weft_json_props_t *p, const char *key, double v)
{
    if (!p || !key) return WEFT_EINVAL;
    if (isnan(v)) return put(p, key, json_string("nan"));
    if (isinf(v)) return put(p, key, json_string(v > 0 ? "inf" : "-inf"));
    return put(p, key, json_real(v));
}

static weft_status_t props_put_bool(weft_json_props_t *p, const char *key, bool v)
{
    if (!p || !key) return WEFT_EINVAL;
    return put(p, key, json_boolean(v));
}

static weft_status_t props_put_string(weft_json_props_t *p, const char *key, const char *v)
{
    if (!p || !key) return WEFT_EINVAL;
    return put(p, key, v ? json_string(v) : json_null());
}

static weft_status_t props_put_int_array(weft_json_props_t *p, const char *key, const int64_t *v,
                                            size_t n)
{
    if (!p || !key || (n && !v)) return WEFT_EINVAL;
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        if (json_array_append_new(a, json_integer((json_int_t)v[i])) != 0) {
            json_decref(a);
            a = NULL;
        }
    return put(p, key, a);
}

static weft_status_t props_put_op(weft_json_props_t *p, const char *key, const weft_op_t *op)
{
    if (!p || !key || !op) return WEFT_EINVAL;
    json_t *e = NULL;
    weft_status_t s = weft__io_save_op(p->g, op, &e);
    return s != WEFT_OK ? s : put(p, key, e);
}

static weft_status_t props_put_graph(weft_json_props_t *p, const char *key,
                                        const weft_graph_io_t *graph)
{
    if (!p || !key || !graph) return WEFT_EINVAL;
    json_t *e = NULL;
    weft_status_t s = weft__io_save_obj(graph, &e);
    return s != WEFT_OK ? s : put(p, key, e);
}

const weft__json_vt_t weft__json_props_vt = {
    .has = props_has,
    .get_int = props_get_int,
    .get_double = props_get_double,
    .get_bool = props_get_bool,
    .get_string = props_get_string,
    .get_int_array = props_get_int_array,
    .get_op = props_get_op,
    .get_graph = props_get_graph,
    .put_int = props_put_int,
    .put_double = props_put_double,
    .put_bool = props_put_bool,
    .put_string = props_put_string,
    .put_int_array = props_put_int_array,
    .put_op = props_put_op,
    .put_graph = props_put_graph,
    .error = props_error,
};
