/* Loading the JSON graph format: parsing with jansson (syntax errors carry
 * its line and column), then inputs, constants, nodes (op by registry name,
 * props through the class's props_from_json hook), outputs and updates, with
 * every error naming the key path at fault. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dtype_list.h"
#include "base/vec.h"
#include "graph/ctor_int.h"
#include "graph/input_prep.h"
#include "io_int.h"
#include "weft/shared.h"

/* ---- id map (int64 -> variable; open addressing) ------------------------------- */

typedef struct idmap {
    int64_t *keys;
    weft_var_t **vals;
    size_t cap, n;
} idmap_t;

static size_t id_slot(const idmap_t *m, int64_t id)
{
    size_t j = (size_t)(((uint64_t)id * 0x9e3779b97f4a7c15ull) >> 20) & (m->cap - 1);
    while (m->vals[j] && m->keys[j] != id) j = (j + 1) & (m->cap - 1);
    return j;
}

static weft_var_t *id_get(const idmap_t *m, int64_t id)
{
    return m->cap ? m->vals[id_slot(m, id)] : NULL;
}

static bool id_put(idmap_t *m, int64_t id, weft_var_t *v)
{
    if (2 * (m->n + 1) > m->cap) {
        idmap_t q = {0};
        q.cap = m->cap ? 2 * m->cap : 64;
        q.keys = calloc(q.cap, sizeof(*q.keys));
        q.vals = calloc(q.cap, sizeof(*q.vals));
        if (!q.keys || !q.vals) {
            free(q.keys);
            free(q.vals);
            return false;
        }
        for (size_t i = 0; i < m->cap; i++)
            if (m->vals[i]) id_put(&q, m->keys[i], m->vals[i]);
        free(m->keys);
        free(m->vals);
        *m = q;
    }
    size_t j = id_slot(m, id);
    m->keys[j] = id;
    m->vals[j] = v;
    m->n++;
    return true;
}

typedef struct io_load {
    weft_graph_t *g;
    const char *path;   /* prefix of every key path ("" at the top) */
    const char *source; /* the document's name (file), for creation sites */
    idmap_t ids;
} io_load_t;

/* "prefix.key" (or "key" at the top level) into dst. */
static void keypath(char *dst, const io_load_t *ld, const char *fmt, ...) WEFT_PRINTF(3, 4);
static void keypath(char *dst, const io_load_t *ld, const char *fmt, ...)
{
    char tail[WEFT__IO_PATH_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tail, sizeof(tail), fmt, ap);
    va_end(ap);
    /* A path longer than the buffer is cut: it only feeds messages. */
    if (snprintf(dst, WEFT__IO_PATH_MAX, "%s%s%s", ld->path, *ld->path ? "." : "", tail) < 0)
        dst[0] = '\0';
}

/* The creation site of entry idx of a kind: "g.json node 6" (nested:
 * "g.json nodes[0].props.graph node 1"), built with line 0, so a message
 * prints the entry's index as such rather than as a line (graph/site.h). */
static void site_file(char *dst, const io_load_t *ld, const char *kind, size_t idx)
{
    if (snprintf(dst, WEFT__IO_PATH_MAX, "%s%s%s %s %zu", ld->source, *ld->path ? " " : "",
                 ld->path, kind, idx) < 0)
        dst[0] = '\0';
}

/* Fails with "where: unknown key 'k'" for a key of obj not in allowed
 * (NULL-terminated): a misspelt key is an error, not silently ignored. */
static weft_status_t check_keys(io_load_t *ld, json_t *obj, const char *where,
                                const char *const *allowed)
{
    char p[WEFT__IO_PATH_MAX];
    keypath(p, ld, "%s", where);
    return weft__io_check_keys(ld->g, obj, *p ? p : "<top>", allowed);
}

/* ---- small readers --------------------------------------------------------------- */

static weft_status_t get_member(io_load_t *ld, json_t *obj, const char *key, const char *where,
                                bool (*is)(const json_t *), const char *what, json_t **out)
{
    char p[WEFT__IO_PATH_MAX];
    keypath(p, ld, "%s%s%s", where, *where ? "." : "", key);
    *out = json_object_get(obj, key);
    if (!*out) return weft__io_err(ld->g, WEFT_EPARSE, p, "missing");
    if (!is(*out)) return weft__io_err(ld->g, WEFT_EPARSE, p, "expected %s", what);
    return WEFT_OK;
}

static bool is_array(const json_t *v)
{
    return json_is_array(v);
}
static bool is_string(const json_t *v)
{
    return json_is_string(v);
}
static bool is_integer(const json_t *v)
{
    return json_is_integer(v);
}

/* The variable an id refers to; where names the entry ("nodes[3].inputs[1]"). */
static weft_status_t ref(io_load_t *ld, json_t *v, const char *where, weft_var_t **out)
{
    char p[WEFT__IO_PATH_MAX];
    keypath(p, ld, "%s", where);
    if (!json_is_integer(v)) return weft__io_err(ld->g, WEFT_EPARSE, p, "expected a variable id");
    *out = id_get(&ld->ids, (int64_t)json_integer_value(v));
    if (!*out)
        return weft__io_err(ld->g, WEFT_EPARSE, p, "unknown variable id %lld",
                            (long long)json_integer_value(v));
    return WEFT_OK;
}

static weft_status_t define(io_load_t *ld, json_t *idv, const char *where, weft_var_t *v)
{
    char p[WEFT__IO_PATH_MAX];
    keypath(p, ld, "%s", where);
    if (!json_is_integer(idv) || json_integer_value(idv) < 0)
        return weft__io_err(ld->g, WEFT_EPARSE, p, "expected a variable id (integer >= 0)");
    int64_t id = (int64_t)json_integer_value(idv);
    if (id_get(&ld->ids, id))
        return weft__io_err(ld->g, WEFT_EPARSE, p, "duplicate variable id %lld", (long long)id);
    if (!id_put(&ld->ids, id, v)) return weft__io_err(ld->g, WEFT_ENOMEM, p, "out of memory");
    return WEFT_OK;
}

/* dtype and shape of an input/constant entry at `where`. */
static weft_status_t read_type(io_load_t *ld, json_t *e, const char *where, bool need_static,
                               const weft_type_t **out)
{
    json_t *dt, *sh;
    char p[WEFT__IO_PATH_MAX];
    weft_status_t s = get_member(ld, e, "dtype", where, is_string, "a dtype name", &dt);
    if (s == WEFT_OK) s = get_member(ld, e, "shape", where, is_array, "an array", &sh);
    if (s != WEFT_OK) return s;
    weft_dtype_t dtype;
    keypath(p, ld, "%s.dtype", where);
    if (weft_dtype_parse(json_string_value(dt), &dtype) != WEFT_OK)
        return weft__io_err(ld->g, WEFT_ETYPE, p, "unknown dtype '%s'", json_string_value(dt));
    keypath(p, ld, "%s.shape", where);
    size_t nd = json_array_size(sh);
    if (nd > WEFT_MAX_NDIM)
        return weft__io_err(ld->g, WEFT_ESHAPE, p, "%zu dimensions (at most %d)", nd,
                            WEFT_MAX_NDIM);
    int64_t shape[WEFT_MAX_NDIM];
    for (size_t i = 0; i < nd; i++) {
        json_t *d = json_array_get(sh, i);
        bool unknown = json_is_null(d) && !need_static;
        if (!unknown && (!json_is_integer(d) || json_integer_value(d) < 0))
            return weft__io_err(ld->g, WEFT_ESHAPE, p, "entry %zu: expected a length >= 0%s", i,
                                need_static ? "" : " or null");
        shape[i] = unknown ? WEFT_DIM_UNKNOWN : (int64_t)json_integer_value(d);
    }
    s = weft_type_tensor(ld->g, dtype, (int)nd, shape, out);
    if (s == WEFT_OK) return s;
    return weft__io_err(ld->g, s, p, s == WEFT_ENOMEM ? "out of memory" : "bad type");
}

static weft_status_t opt_name(io_load_t *ld, json_t *e, const char *where, const char **name)
{
    json_t *n = json_object_get(e, "name");
    *name = NULL;
    if (!n || json_is_null(n)) return WEFT_OK;
    char p[WEFT__IO_PATH_MAX];
    keypath(p, ld, "%s.name", where);
    if (!json_is_string(n)) return weft__io_err(ld->g, WEFT_EPARSE, p, "expected a string");
    *name = json_string_value(n);
    return WEFT_OK;
}

/* ---- sections ---------------------------------------------------------------------- */

static weft_status_t load_inputs(io_load_t *ld, json_t *arr, weft_graph_io_t *out)
{
    size_t n = json_array_size(arr);
    out->inputs = calloc(n + 1, sizeof(*out->inputs));
    out->input_mutable = calloc(n + 1, sizeof(*out->input_mutable));
    if (!out->inputs || !out->input_mutable)
        return weft__io_err(ld->g, WEFT_ENOMEM, ld->path, "out of memory");
    for (size_t i = 0; i < n; i++) {
        char w[64], p[WEFT__IO_PATH_MAX];
        snprintf(w, sizeof(w), "inputs[%zu]", i);
        json_t *e = json_array_get(arr, i), *idv, *mut;
        keypath(p, ld, "%s", w);
        if (!json_is_object(e)) return weft__io_err(ld->g, WEFT_EPARSE, p, "expected an object");
        static const char *const keys[] = {"id", "name", "dtype", "shape", "mutable", NULL};
        const weft_type_t *t;
        const char *name;
        char site[WEFT__IO_PATH_MAX];
        site_file(site, ld, "input", i);
        weft_status_t s = check_keys(ld, e, w, keys);
        if (s == WEFT_OK) s = get_member(ld, e, "id", w, is_integer, "an integer", &idv);
        if (s == WEFT_OK) s = read_type(ld, e, w, false, &t);
        if (s == WEFT_OK) s = opt_name(ld, e, w, &name);
        if (s == WEFT_OK)
            s = weft__got(ld->g, out->inputs[i] = weft_var_create_at(ld->g, t, name, site, 0));
        if (s == WEFT_OK) s = define(ld, idv, w, out->inputs[i]);
        if (s != WEFT_OK) return s;
        mut = json_object_get(e, "mutable");
        if (mut && !json_is_boolean(mut)) {
            keypath(p, ld, "%s.mutable", w);
            return weft__io_err(ld->g, WEFT_EPARSE, p, "expected true or false");
        }
        out->input_mutable[i] = json_is_true(mut); /* absent: false, as NULL in C */
        out->n_inputs++;
    }
    return WEFT_OK;
}

/* A uint64 element: a JSON integer >= 0 or a decimal string (values above
 * INT64_MAX, which a JSON integer here cannot hold). */
static bool get_u64(json_t *v, uint64_t *x)
{
    const char *s = json_string_value(v);
    if (json_is_integer(v) && json_integer_value(v) >= 0) {
        *x = (uint64_t)json_integer_value(v);
        return true;
    }
    if (!s || *s < '0' || *s > '9') return false;
    char *end;
    errno = 0;
    unsigned long long u = strtoull(s, &end, 10);
    if (errno || *end) return false;
    *x = (uint64_t)u;
    return true;
}

/* Stores integer x into a signed / unsigned element when it fits. */
#define PUT_SINT(A_, B_, T, UT, sn, D)                                                 \
    case D:                                                                    \
        if (x < (int64_t)(T)((UT)1 << (8 * sizeof(T) - 1)) ||                 \
            x > (int64_t)(T)((UT)-1 >> 1))                                     \
            return false;                                                      \
        ((T *)data)[i] = (T)x;                                                 \
        return true;
#define PUT_UINT(A_, B_, T, UT, sn, D)                                                 \
    case D:                                                                    \
        if (x < 0 || (uint64_t)x > (uint64_t)(T)-1) return false;              \
        ((T *)data)[i] = (T)x;                                                 \
        return true;

/* Converts one data element; false when it has the wrong JSON type or does
 * not fit the dtype. */
static bool put_int_elem(weft_dtype_t dt, json_t *v, void *data, size_t i)
{
    int64_t x;
    if (dt == WEFT_UINT64) {
        uint64_t u;
        if (!get_u64(v, &u)) return false;
        ((uint64_t *)data)[i] = u;
        return true;
    }
    if (json_is_boolean(v))
        x = json_is_true(v);
    else if (json_is_integer(v))
        x = (int64_t)json_integer_value(v);
    else
        return false;
    switch (dt) {
    case WEFT_BOOL:
        if (x != 0 && x != 1) return false;
        ((uint8_t *)data)[i] = (uint8_t)x;
        return true;
    WEFT__SINT_DTYPES(PUT_SINT, ~, ~)
    WEFT__UINT_DTYPES(PUT_UINT, ~, ~) /* uint64 returned above */
    default:
        return false;
    }
}

#define PUT_FLOAT(A_, B_, T, sn, D) \
    case D: ((T *)data)[i] = (T)x; return true;

static bool put_elem(weft_dtype_t dt, json_t *v, void *data, size_t i)
{
    if (dt == WEFT_COMPLEX64 || dt == WEFT_COMPLEX128) { /* [re, im], parts as floats */
        weft_dtype_t part = dt == WEFT_COMPLEX64 ? WEFT_FLOAT32 : WEFT_FLOAT64;
        return json_is_array(v) && json_array_size(v) == 2 &&
               put_elem(part, json_array_get(v, 0), data, 2 * i) &&
               put_elem(part, json_array_get(v, 1), data, 2 * i + 1);
    }
    if (weft_dtype_kind(dt) != WEFT_KIND_FLOAT) return put_int_elem(dt, v, data, i);
    double x;
    const char *s = json_string_value(v);
    if (json_is_number(v))
        x = json_number_value(v);
    else if (s && strcmp(s, "nan") == 0)
        x = NAN;
    else if (s && strcmp(s, "inf") == 0)
        x = INFINITY;
    else if (s && strcmp(s, "-inf") == 0)
        x = -INFINITY;
    else
        return false;
    switch (dt) {
    WEFT__FLOAT_DTYPES(PUT_FLOAT, ~, ~)
    PUT_FLOAT(~, ~, weft__f16, f16, WEFT_FLOAT16)
    default: return false;
    }
}

/* An entry with a static type and its elements (constants, shared): *buf is
 * new (free), *bytes its size. */
static weft_status_t read_data_entry(io_load_t *ld, json_t *e, const char *w, json_t **idv_out,
                                     const weft_type_t **t_out, const char **name_out,
                                     void **buf_out, size_t *bytes_out)
{
    char p[WEFT__IO_PATH_MAX];
    keypath(p, ld, "%s", w);
    if (!json_is_object(e)) return weft__io_err(ld->g, WEFT_EPARSE, p, "expected an object");
    static const char *const keys[] = {"id", "name", "dtype", "shape", "data", NULL};
    json_t *idv, *data;
    const weft_type_t *t;
    const char *name;
    weft_status_t s = check_keys(ld, e, w, keys);
    if (s == WEFT_OK) s = get_member(ld, e, "id", w, is_integer, "an integer", &idv);
    if (s == WEFT_OK) s = read_type(ld, e, w, true, &t);
    if (s == WEFT_OK) s = opt_name(ld, e, w, &name);
    if (s == WEFT_OK) s = get_member(ld, e, "data", w, is_array, "an array", &data);
    if (s != WEFT_OK) return s;
    size_t count = 1, n = json_array_size(data), es = weft_dtype_size(weft_type_dtype(t)), bytes;
    bool fits = true;
    for (int d = 0; d < weft_type_ndim(t); d++)
        fits = fits && weft__mul_size(count, (size_t)weft_type_dim(t, d), &count);
    keypath(p, ld, "%s.data", w);
    if (!fits || !weft__mul_size(count, es, &bytes) || bytes == SIZE_MAX) {
        char tb[96];
        weft_type_print(t, tb, sizeof(tb));
        return weft__io_err(ld->g, WEFT_ESHAPE, p, "type %s has more bytes than memory can hold",
                            tb);
    }
    if (n != count) {
        char tb[96];
        weft_type_print(t, tb, sizeof(tb));
        return weft__io_err(ld->g, WEFT_ESHAPE, p, "%zu values for type %s (%zu expected)", n, tb,
                            count);
    }
    void *buf = malloc(bytes + 1);
    if (!buf) return weft__io_err(ld->g, WEFT_ENOMEM, p, "out of memory");
    for (size_t k = 0; k < n && s == WEFT_OK; k++)
        if (!put_elem(weft_type_dtype(t), json_array_get(data, k), buf, k))
            s = weft__io_err(ld->g, WEFT_EPARSE, p, "value %zu is not a %s", k,
                             weft_dtype_name(weft_type_dtype(t)));
    if (s != WEFT_OK) {
        free(buf);
        return s;
    }
    *idv_out = idv;
    *t_out = t;
    *name_out = name;
    *buf_out = buf;
    *bytes_out = bytes;
    return WEFT_OK;
}

/* The variable an entry with data stands for: a constant, or a shared
 * variable (weft/shared.h) holding the data. */
static weft_status_t make_data_var(io_load_t *ld, const char *w, size_t i, bool shared,
                                   const weft_type_t *t, void *buf, size_t bytes,
                                   weft_var_t **v)
{
    char site[WEFT__IO_PATH_MAX];
    site_file(site, ld, shared ? "shared" : "constant", i);
    if (!shared)
        return weft__got(ld->g, *v = weft_constant_create_at(ld->g, t, buf, bytes, site, 0));
    int64_t shape[WEFT_MAX_NDIM];
    for (int d = 0; d < weft_type_ndim(t); d++) shape[d] = weft_type_dim(t, d);
    weft_tensor_t *value = NULL;
    weft_status_t s =
        weft_tensor_from_data(weft_type_dtype(t), weft_type_ndim(t), shape, NULL, buf, &value);
    if (s != WEFT_OK) return weft_graph_set_error(ld->g, s, "%s: %s", w, weft_tensor_last_error());
    *v = weft_shared_at(ld->g, value, NULL, site, 0);
    weft_tensor_release(value);
    return weft__got(ld->g, *v);
}

/* constants[i], or shared[i] when shared. */
static weft_status_t load_data_var(io_load_t *ld, json_t *e, size_t i, bool shared)
{
    char w[64];
    snprintf(w, sizeof(w), "%s[%zu]", shared ? "shared" : "constants", i);
    json_t *idv = NULL;
    const weft_type_t *t = NULL;
    const char *name = NULL;
    void *buf = NULL;
    size_t bytes = 0;
    weft_status_t s = read_data_entry(ld, e, w, &idv, &t, &name, &buf, &bytes);
    if (s != WEFT_OK) return s;
    weft_var_t *v = NULL;
    s = make_data_var(ld, w, i, shared, t, buf, bytes, &v);
    free(buf);
    if (s == WEFT_OK && name) s = weft_var_set_name(v, name);
    if (s == WEFT_OK) s = define(ld, idv, w, v);
    return s;
}

/* Fails for a props key the class's hook never asked for (a misspelt or
 * foreign key), naming it and the keys the class reads. */
static weft_status_t unread_props(const weft_json_props_t *view, const weft_op_class_t *cls)
{
    const char *key, *k2;
    json_t *v, *v2;
    json_object_foreach(view->obj, key, v) {
        if (json_object_get(view->seen, key)) continue;
        char known[256] = "";
        size_t len = 0;
        json_object_foreach(view->seen, k2, v2) {
            int w = snprintf(known + len, sizeof known - len, "%s%s", len ? ", " : "", k2);
            if (w < 0 || (size_t)w >= sizeof known - len) break;
            len += (size_t)w;
        }
        return weft__io_err(view->g, WEFT_EPARSE, view->path, "unknown key '%s' (%s reads %s)",
                            key, cls->name, len ? known : "no props");
    }
    return WEFT_OK;
}

weft_status_t weft__io_load_op(weft_graph_t *g, json_t *entry, const char *path,
                               const char *source, const weft_op_t **out)
{
    char p[WEFT__IO_PATH_MAX];
    json_t *name = json_object_get(entry, "op"), *props = json_object_get(entry, "props");
    snprintf(p, sizeof(p), "%s.op", path);
    if (!json_is_string(name)) return weft__io_err(g, WEFT_EPARSE, p, "expected an op name");
    const weft_op_class_t *cls = weft_op_class_find(json_string_value(name));
    if (!cls) return weft__io_err(g, WEFT_EPARSE, p, "unknown op '%s'", json_string_value(name));
    snprintf(p, sizeof(p), "%s.props", path);
    if (props && !json_is_object(props))
        return weft__io_err(g, WEFT_EPARSE, p, "expected an object");
    weft_status_t (*from)(weft_graph_t *, const weft_op_class_t *, const weft_json_props_t *,
                          const weft_op_t **) = WEFT__IO_HOOK(cls, props_from_json);
    if (!from) {
        if (props && json_object_size(props) != 0) {
            const char *key = json_object_iter_key(json_object_iter(props));
            return weft__io_err(g, WEFT_EPARSE, p, "unknown key '%s' (%s reads no props)", key,
                                cls->name);
        }
        if (cls->props_size == 0) return weft_op_create(g, cls, NULL, out);
        return weft__io_err(g, WEFT_ENOTIMPL, p,
                            "op class %s has props but no props_from_json hook", cls->name);
    }
    json_t *empty = props ? NULL : json_object();
    weft_json_props_t view = {{&weft__json_props_vt}, props ? props : empty, g, "", json_object(),
                              source};
    snprintf(view.path, sizeof(view.path), "%s", p);
    weft_status_t s = view.obj && view.seen ? from(g, cls, &view, out) : WEFT_ENOMEM;
    if (s == WEFT_OK) s = unread_props(&view, cls);
    json_decref(empty);
    json_decref(view.seen);
    return s;
}

/* The apply of op on in[0..n) (room for 2n): the inputs prepared as the C
 * constructors would (graph/input_prep.h) go to in[n..2n). */
static weft_status_t build_apply(io_load_t *ld, const weft_op_t *op, size_t n, weft_var_t **in,
                                 size_t idx, weft_apply_t **a)
{
    char site[WEFT__IO_PATH_MAX];
    site_file(site, ld, "node", idx);
    weft__input_prep_fn prep = weft__input_prep_get();
    weft_status_t s = WEFT_OK;
    if (prep) s = prep(ld->g, op, n, in, site, 0, in + n);
    else memcpy(in + n, in, n * sizeof(*in));
    if (s == WEFT_OK)
        s = weft__got(ld->g, *a = weft_apply_create_at(ld->g, op, n, in + n, site, 0));
    return s;
}

static weft_status_t node_apply(io_load_t *ld, json_t *e, const char *w, size_t idx,
                                const weft_op_t *op, weft_apply_t **a)
{
    char p[WEFT__IO_PATH_MAX];
    json_t *ins;
    weft_status_t s = get_member(ld, e, "inputs", w, is_array, "an array of ids", &ins);
    size_t n = json_array_size(ins);
    weft_var_t **in = s == WEFT_OK ? calloc(2 * n + 1, sizeof(*in)) : NULL;
    if (s == WEFT_OK && !in) s = weft__io_err(ld->g, WEFT_ENOMEM, ld->path, "out of memory");
    for (size_t i = 0; i < n && s == WEFT_OK; i++) {
        char wi[96];
        snprintf(wi, sizeof(wi), "%s.inputs[%zu]", w, i);
        s = ref(ld, json_array_get(ins, i), wi, &in[i]);
    }
    if (s == WEFT_OK && (s = build_apply(ld, op, n, in, idx, a)) != WEFT_OK) {
        char msg[512]; /* the op's message, under the node's path */
        snprintf(msg, sizeof(msg), "%s", weft_graph_last_error(ld->g));
        keypath(p, ld, "%s", w);
        s = weft__io_err(ld->g, s, p, "%s", msg);
    }
    free(in);
    return s;
}

static weft_status_t node_outputs(io_load_t *ld, json_t *e, const char *w, weft_apply_t *a)
{
    char p[WEFT__IO_PATH_MAX];
    json_t *outs, *names = json_object_get(e, "names");
    weft_status_t s = get_member(ld, e, "outputs", w, is_array, "an array of ids", &outs);
    if (s != WEFT_OK) return s;
    size_t n = weft_apply_n_outputs(a);
    keypath(p, ld, "%s.outputs", w);
    if (json_array_size(outs) != n)
        return weft__io_err(ld->g, WEFT_EPARSE, p, "%zu ids for the op's %zu outputs",
                            json_array_size(outs), n);
    keypath(p, ld, "%s.names", w);
    if (names && (!json_is_array(names) || json_array_size(names) != n))
        return weft__io_err(ld->g, WEFT_EPARSE, p, "expected one name or null per output");
    for (size_t o = 0; o < n && s == WEFT_OK; o++) {
        char wo[96];
        snprintf(wo, sizeof(wo), "%s.outputs[%zu]", w, o);
        s = define(ld, json_array_get(outs, o), wo, weft_apply_output(a, o));
        json_t *nm = names ? json_array_get(names, o) : NULL;
        if (s == WEFT_OK && nm && !json_is_null(nm)) {
            if (!json_is_string(nm)) return weft__io_err(ld->g, WEFT_EPARSE, p, "expected strings");
            s = weft_var_set_name(weft_apply_output(a, o), json_string_value(nm));
        }
    }
    return s;
}

static weft_status_t load_node(io_load_t *ld, json_t *e, size_t i)
{
    static const char *const keys[] = {"op", "props", "inputs", "outputs", "names", NULL};
    char w[64], p[WEFT__IO_PATH_MAX];
    snprintf(w, sizeof(w), "nodes[%zu]", i);
    keypath(p, ld, "%s", w);
    if (!json_is_object(e)) return weft__io_err(ld->g, WEFT_EPARSE, p, "expected an object");
    const weft_op_t *op = NULL;
    weft_apply_t *a = NULL;
    weft_status_t s = check_keys(ld, e, w, keys);
    if (s == WEFT_OK) s = weft__io_load_op(ld->g, e, p, ld->source, &op);
    if (s == WEFT_OK) s = node_apply(ld, e, w, i, op, &a);
    if (s == WEFT_OK) s = node_outputs(ld, e, w, a);
    return s;
}

static weft_status_t load_refs(io_load_t *ld, json_t *arr, const char *key, weft_var_t ***out,
                               size_t *n)
{
    *n = json_array_size(arr);
    *out = calloc(*n + 1, sizeof(**out));
    if (!*out) return weft__io_err(ld->g, WEFT_ENOMEM, ld->path, "out of memory");
    for (size_t i = 0; i < *n; i++) {
        char w[64];
        snprintf(w, sizeof(w), "%s[%zu]", key, i);
        weft_status_t s = ref(ld, json_array_get(arr, i), w, &(*out)[i]);
        if (s != WEFT_OK) return s;
    }
    return WEFT_OK;
}

static weft_status_t load_updates(io_load_t *ld, json_t *arr, weft_graph_io_t *out)
{
    size_t n = json_array_size(arr);
    out->updates = calloc(n + 1, sizeof *out->updates);
    if (!out->updates) return weft__io_err(ld->g, WEFT_ENOMEM, ld->path, "out of memory");
    for (size_t u = 0; u < n; u++) {
        char w[64], wi[80], wv[80], p[WEFT__IO_PATH_MAX];
        snprintf(w, sizeof(w), "updates[%zu]", u);
        snprintf(wi, sizeof(wi), "%s.input", w);
        snprintf(wv, sizeof(wv), "%s.value", w);
        json_t *e = json_array_get(arr, u);
        keypath(p, ld, "%s", w);
        if (!json_is_object(e)) return weft__io_err(ld->g, WEFT_EPARSE, p, "expected an object");
        static const char *const keys[] = {"input", "value", NULL};
        weft_var_t *in, *val;
        weft_status_t s = check_keys(ld, e, w, keys);
        if (s == WEFT_OK) s = ref(ld, json_object_get(e, "input"), wi, &in);
        if (s == WEFT_OK) s = ref(ld, json_object_get(e, "value"), wv, &val);
        if (s != WEFT_OK) return s;
        bool is_input = weft_var_is_shared(in);
        for (size_t i = 0; i < out->n_inputs; i++) is_input = is_input || out->inputs[i] == in;
        keypath(p, ld, "%s", wi);
        if (!is_input)
            return weft__io_err(ld->g, WEFT_EPARSE, p,
                                "not one of the graph inputs or shared variables");
        out->updates[u] = (weft_update_t){in, val};
        out->n_updates++;
    }
    return WEFT_OK;
}

static weft_status_t check_header(io_load_t *ld, json_t *root)
{
    char p[WEFT__IO_PATH_MAX];
    keypath(p, ld, "format");
    const char *fmt = json_string_value(json_object_get(root, "format"));
    if (!fmt || strcmp(fmt, "weft-graph") != 0)
        return weft__io_err(ld->g, WEFT_EPARSE, p, "expected \"weft-graph\"");
    keypath(p, ld, "version");
    json_t *v = json_object_get(root, "version");
    if (!json_is_integer(v)) return weft__io_err(ld->g, WEFT_EPARSE, p, "expected an integer");
    if (json_integer_value(v) != WEFT_GRAPH_IO_VERSION)
        return weft__io_err(ld->g, WEFT_EPARSE, p, "unsupported version %lld (this weft reads %d)",
                            (long long)json_integer_value(v), WEFT_GRAPH_IO_VERSION);
    return WEFT_OK;
}

static weft_status_t load_body(io_load_t *ld, json_t *root, weft_graph_io_t *out)
{
    json_t *ins = NULL, *consts, *nodes = NULL, *outs = NULL,
           *ups = json_object_get(root, "updates");
    static const char *const keys[] = {"format", "version", "inputs", "constants",
                                       "nodes",  "outputs", "updates", "shared", NULL};
    weft_status_t s = check_header(ld, root);
    if (s == WEFT_OK) s = check_keys(ld, root, "", keys);
    if (s == WEFT_OK) s = get_member(ld, root, "inputs", "", is_array, "an array", &ins);
    if (s == WEFT_OK) s = get_member(ld, root, "nodes", "", is_array, "an array", &nodes);
    if (s == WEFT_OK) s = get_member(ld, root, "outputs", "", is_array, "an array", &outs);
    consts = json_object_get(root, "constants");
    if (s == WEFT_OK && consts && !json_is_array(consts))
        s = get_member(ld, root, "constants", "", is_array, "an array", &consts);
    json_t *shared = json_object_get(root, "shared");
    if (s == WEFT_OK && shared && !json_is_array(shared))
        s = get_member(ld, root, "shared", "", is_array, "an array", &shared);
    if (s == WEFT_OK && ups && !json_is_array(ups))
        s = get_member(ld, root, "updates", "", is_array, "an array", &ups);
    if (s == WEFT_OK) s = load_inputs(ld, ins, out);
    for (size_t i = 0; s == WEFT_OK && i < json_array_size(consts); i++)
        s = load_data_var(ld, json_array_get(consts, i), i, false);
    for (size_t i = 0; s == WEFT_OK && i < json_array_size(shared); i++)
        s = load_data_var(ld, json_array_get(shared, i), i, true);
    for (size_t i = 0; s == WEFT_OK && i < json_array_size(nodes); i++)
        s = load_node(ld, json_array_get(nodes, i), i);
    if (s == WEFT_OK) s = load_refs(ld, outs, "outputs", &out->outputs, &out->n_outputs);
    if (s == WEFT_OK && out->n_outputs == 0)
        s = weft__io_err(ld->g, WEFT_EPARSE, *ld->path ? ld->path : "outputs", "no outputs");
    if (s == WEFT_OK && ups) s = load_updates(ld, ups, out);
    return s;
}

weft_status_t weft__io_load_obj(weft_graph_t *g, json_t *root, const char *path,
                                const char *source, weft_graph_io_t *out)
{
    memset(out, 0, sizeof(*out));
    io_load_t ld = {g, path ? path : "", source ? source : "<string>", {0}};
    weft_status_t s =
        json_is_object(root)
            ? load_body(&ld, root, out)
            : weft__io_err(g, WEFT_EPARSE, *ld.path ? ld.path : "<top>", "expected a JSON object");
    free(ld.ids.keys);
    free(ld.ids.vals);
    if (s != WEFT_OK) weft_graph_io_clear(out);
    return s;
}

weft_status_t weft_graph_io_load(weft_graph_t *g, const char *text, size_t len, const char *source,
                                 weft_graph_io_t *out)
{
    if (!g || !text || !out) return WEFT_EINVAL;
    memset(out, 0, sizeof(*out));
    json_error_t err;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
    if (!root)
        return weft_graph_set_error(g, WEFT_EPARSE, "%s:%d:%d: %s", source ? source : "<string>",
                                    err.line, err.column, err.text);
    /* A bad file is reported by the status; it leaves no kept constructor
     * error behind (weft/graph.h "Errors"). */
    weft__kept_error_t saved;
    weft__graph_error_save(g, &saved);
    weft_status_t s = weft__io_load_obj(g, root, "", source, out);
    weft__graph_error_restore(g, &saved);
    json_decref(root);
    return s;
}

weft_status_t weft_graph_io_load_file(weft_graph_t *g, const char *path, weft_graph_io_t *out)
{
    if (!g || !path || !out) return WEFT_EINVAL;
    memset(out, 0, sizeof(*out));
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t n = 0, cap = 0;
    bool ok = f != NULL;
    while (ok) {
        if (!weft__vec_grow(NULL, (void **)&buf, &cap, n + 65536, 1)) {
            ok = false;
            break;
        }
        size_t k = fread(buf + n, 1, cap - n, f);
        n += k;
        if (k == 0) {
            ok = !ferror(f);
            break;
        }
    }
    if (f) fclose(f);
    weft_status_t s = ok ? weft_graph_io_load(g, buf, n, path, out)
                         : weft_graph_set_error(g, WEFT_EIO, "%s: cannot read the file", path);
    free(buf);
    return s;
}

void weft_graph_io_clear(weft_graph_io_t *graph)
{
    if (!graph) return;
    free(graph->inputs);
    free(graph->input_mutable);
    free(graph->outputs);
    free(graph->updates);
    memset(graph, 0, sizeof(*graph));
}
