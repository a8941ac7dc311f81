/* The public props view functions (weft/json_props.h): argument checks, then
 * a call through the view's codec table (graph/json_props_vt.h), which the
 * JSON graph format module fills. Op classes of every module use these. */
#include <stdarg.h>
#include <stdio.h>

#include "graph/json_props_vt.h"

bool weft_json_props_has(const weft_json_props_t *p, const char *key)
{
    return p && key && WEFT__JSON_VT(p)->has(p, key);
}

weft_status_t weft_json_props_get_int(const weft_json_props_t *p, const char *key, int64_t *out)
{
    if (!p || !key || !out) return WEFT_EINVAL;
    return WEFT__JSON_VT(p)->get_int(p, key, out);
}

weft_status_t weft_json_props_get_double(const weft_json_props_t *p, const char *key, double *out)
{
    if (!p || !key || !out) return WEFT_EINVAL;
    return WEFT__JSON_VT(p)->get_double(p, key, out);
}

weft_status_t weft_json_props_get_bool(const weft_json_props_t *p, const char *key, bool *out)
{
    if (!p || !key || !out) return WEFT_EINVAL;
    return WEFT__JSON_VT(p)->get_bool(p, key, out);
}

weft_status_t weft_json_props_get_string(const weft_json_props_t *p, const char *key,
                                         const char **out)
{
    if (!p || !key || !out) return WEFT_EINVAL;
    return WEFT__JSON_VT(p)->get_string(p, key, out);
}

weft_status_t weft_json_props_get_int_array(const weft_json_props_t *p, const char *key,
                                            int64_t *out, size_t cap, size_t *n)
{
    if (!p || !key || !n || (cap && !out)) return WEFT_EINVAL;
    return WEFT__JSON_VT(p)->get_int_array(p, key, out, cap, n);
}

weft_status_t weft_json_props_get_op(const weft_json_props_t *p, const char *key, weft_graph_t *g,
                                     const weft_op_t **out)
{
    if (!p || !key || !g || !out) return WEFT_EINVAL;
    return WEFT__JSON_VT(p)->get_op(p, key, g, out);
}

weft_status_t weft_json_props_get_graph(const weft_json_props_t *p, const char *key,
                                        weft_graph_t *g, weft_graph_io_t *out)
{
    if (!p || !key || !g || !out) return WEFT_EINVAL;
    return WEFT__JSON_VT(p)->get_graph(p, key, g, out);
}

weft_status_t weft_json_props_put_int(weft_json_props_t *p, const char *key, int64_t v)
{
    if (!p || !key) return WEFT_EINVAL;
    return WEFT__JSON_VT(p)->put_int(p, key, v);
}

weft_status_t weft_json_props_put_double(weft_json_props_t *p, const char *key, double v)
{
    if (!p || !key) return WEFT_EINVAL;
    return WEFT__JSON_VT(p)->put_double(p, key, v);
}

weft_status_t weft_json_props_put_bool(weft_json_props_t *p, const char *key, bool v)
{
    if (!p || !key) return WEFT_EINVAL;
    return WEFT__JSON_VT(p)->put_bool(p, key, v);
}

weft_status_t weft_json_props_put_string(weft_json_props_t *p, const char *key, const char *v)
{
    if (!p || !key) return WEFT_EINVAL;
    return WEFT__JSON_VT(p)->put_string(p, key, v);
}

weft_status_t weft_json_props_put_int_array(weft_json_props_t *p, const char *key,
                                            const int64_t *v, size_t n)
{
    if (!p || !key || (n && !v)) return WEFT_EINVAL;
    return WEFT__JSON_VT(p)->put_int_array(p, key, v, n);
}

weft_status_t weft_json_props_put_op(weft_json_props_t *p, const char *key, const weft_op_t *op)
{
    if (!p || !key || !op) return WEFT_EINVAL;
    return WEFT__JSON_VT(p)->put_op(p, key, op);
}

weft_status_t weft_json_props_put_graph(weft_json_props_t *p, const char *key,
                                        const weft_graph_io_t *graph)
{
    if (!p || !key || !graph) return WEFT_EINVAL;
    return WEFT__JSON_VT(p)->put_graph(p, key, graph);
}

weft_status_t weft_json_props_error(const weft_json_props_t *p, weft_status_t status,
                                    const char *fmt, ...)
{
    if (!p || !fmt) return status;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return WEFT__JSON_VT(p)->error(p, status, msg);
}
