/* The field table codec of fixed-width props (props_fields_int.h): the
 * reductions, SumAxes and the linear algebra ops describe their props
 * structs with a table beside the op and save and load them here. Fields are
 * copied with memcpy at their offsets, so a table needs no cast to the
 * props type and the codec no knowledge of it. */
#include <stdint.h>
#include <string.h>

#include "props_fields_int.h"
#include "weft/type.h"

static weft_status_t layout_check(const weft_json_props_t *p, const weft_op_class_t *cls,
                                  size_t size)
{
    if (cls->props_size == size) return WEFT_OK;
    return weft_json_props_error(p, WEFT_ENOTIMPL,
                                 "%s: props layout changed (%zu bytes, codec "
                                 "expects %zu)",
                                 cls->name, cls->props_size, size);
}

static weft_status_t put_mask(weft_json_props_t *p, const char *key, uint32_t mask)
{
    int64_t axes[32];
    size_t n = 0;
    for (int d = 0; d < 32; d++)
        if (mask & (1u << d)) axes[n++] = d;
    return weft_json_props_put_int_array(p, key, axes, n);
}

static weft_status_t put_field(weft_json_props_t *p, const weft__props_field_t *f,
                               const unsigned char *b)
{
    int32_t i32;
    int64_t i64;
    uint32_t u32;
    double f64;
    switch (f->type) {
    case WEFT__FIELD_I32:
        memcpy(&i32, b + f->off, 4);
        return weft_json_props_put_int(p, f->key, i32);
    case WEFT__FIELD_I32_BOOL:
        memcpy(&i32, b + f->off, 4);
        return weft_json_props_put_bool(p, f->key, i32 != 0);
    case WEFT__FIELD_I64_BOOL:
        memcpy(&i64, b + f->off, 8);
        return weft_json_props_put_bool(p, f->key, i64 != 0);
    case WEFT__FIELD_U32:
        memcpy(&u32, b + f->off, 4);
        return weft_json_props_put_int(p, f->key, u32);
    case WEFT__FIELD_F64:
        memcpy(&f64, b + f->off, 8);
        return weft_json_props_put_double(p, f->key, f64);
    default: break;
    }
    memcpy(&u32, b + f->off, 4);
    return put_mask(p, f->key, u32);
}

/* A uint32 axis mask from a list of axes. */
static weft_status_t get_mask(const weft_json_props_t *p, const weft__props_field_t *f,
                              unsigned char *b)
{
    int64_t axes[32];
    size_t n = 0;
    uint32_t mask = 0;
    weft_status_t s = weft_json_props_get_int_array(p, f->key, axes, 32, &n);
    for (size_t i = 0; i < n && s == WEFT_OK; i++) {
        if (axes[i] < 0 || axes[i] >= WEFT_MAX_NDIM)
            return weft_json_props_error(p, WEFT_EPARSE, "%s[%zu]: bad axis %lld", f->key, i,
                                         (long long)axes[i]);
        mask |= 1u << axes[i];
    }
    if (s == WEFT_OK) memcpy(b + f->off, &mask, 4);
    return s;
}

/* An int32 or uint32 field, range-checked. */
static weft_status_t get_int32(const weft_json_props_t *p, const weft__props_field_t *f,
                               unsigned char *b)
{
    bool u = f->type == WEFT__FIELD_U32;
    int64_t i64 = 0;
    weft_status_t s = weft_json_props_get_int(p, f->key, &i64);
    if (s == WEFT_OK && (i64 < (u ? 0 : INT32_MIN) || i64 > (u ? (int64_t)UINT32_MAX : INT32_MAX)))
        s = weft_json_props_error(p, WEFT_EPARSE, "%s: %lld out of range", f->key,
                                  (long long)i64);
    int32_t i32 = (int32_t)i64;
    uint32_t u32 = (uint32_t)i64;
    if (s == WEFT_OK) memcpy(b + f->off, u ? (void *)&u32 : (void *)&i32, 4);
    return s;
}

/* An int32 or int64 0/1 field from a boolean. */
static weft_status_t get_flag(const weft_json_props_t *p, const weft__props_field_t *f,
                              unsigned char *b)
{
    bool flag = false;
    weft_status_t s = weft_json_props_get_bool(p, f->key, &flag);
    int32_t i32 = flag;
    int64_t i64 = flag;
    bool wide = f->type == WEFT__FIELD_I64_BOOL;
    if (s == WEFT_OK) memcpy(b + f->off, wide ? (void *)&i64 : (void *)&i32, wide ? 8 : 4);
    return s;
}

static weft_status_t get_f64(const weft_json_props_t *p, const weft__props_field_t *f,
                             unsigned char *b)
{
    double v = 0;
    weft_status_t s = weft_json_props_get_double(p, f->key, &v);
    if (s == WEFT_OK) memcpy(b + f->off, &v, 8);
    return s;
}

static weft_status_t get_field(const weft_json_props_t *p, const weft__props_field_t *f,
                               unsigned char *b)
{
    switch (f->type) {
    case WEFT__FIELD_I32:
    case WEFT__FIELD_U32: return get_int32(p, f, b);
    case WEFT__FIELD_I32_BOOL:
    case WEFT__FIELD_I64_BOOL: return get_flag(p, f, b);
    case WEFT__FIELD_F64: return get_f64(p, f, b);
    default: return get_mask(p, f, b);
    }
}

weft_status_t weft__props_fields_put(weft_json_props_t *p, const weft__props_fields_t *t,
                                     const void *props)
{
    weft_status_t s = WEFT_OK;
    for (size_t i = 0; i < WEFT__PROPS_FIELDS_MAX && t->f[i].key && s == WEFT_OK; i++)
        s = put_field(p, &t->f[i], props);
    return s;
}

weft_status_t weft__props_fields_get(const weft_json_props_t *p, const weft__props_fields_t *t,
                                     void *props)
{
    weft_status_t s = WEFT_OK;
    for (size_t i = 0; i < WEFT__PROPS_FIELDS_MAX && t->f[i].key && s == WEFT_OK; i++)
        s = get_field(p, &t->f[i], props);
    return s;
}

weft_status_t weft__props_fields_to_json(const weft_op_t *op, weft_json_props_t *p,
                                         const weft__props_fields_t *t)
{
    weft_status_t s = layout_check(p, weft_op_class(op), t->size);
    return s != WEFT_OK ? s : weft__props_fields_put(p, t, weft_op_props(op));
}

weft_status_t weft__props_fields_from_json(weft_graph_t *g, const weft_op_class_t *cls,
                                           const weft_json_props_t *p,
                                           const weft__props_fields_t *t, const weft_op_t **out)
{
    _Alignas(max_align_t) unsigned char buf[64];
    memset(buf, 0, sizeof(buf));
    weft_status_t s = layout_check(p, cls, t->size);
    if (s == WEFT_OK && t->size > sizeof(buf))
        s = weft_json_props_error(p, WEFT_ENOTIMPL, "%s: props of %zu bytes, at most %zu coded",
                                  cls->name, t->size, sizeof(buf));
    if (s == WEFT_OK) s = weft__props_fields_get(p, t, buf);
    return s != WEFT_OK ? s : weft_op_create(g, cls, buf, out);
}
