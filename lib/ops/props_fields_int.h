/* The JSON codec of fixed-width props described by a field table
 * (props_fields.c): each field is a member of the op's props struct, written
 * under its key with the weft_json_props_* functions and read back the same
 * way. The reductions, SumAxes and the linear algebra ops code their props
 * with it, each with its table beside the op. Not part of the API. */
#ifndef WEFT_OPS_PROPS_FIELDS_INT_H
#define WEFT_OPS_PROPS_FIELDS_INT_H

#include <stddef.h>

#include "weft/json_props.h"
#include "weft/op.h"

typedef enum weft__field_type {
    WEFT__FIELD_I32,      /* int32 as an integer */
    WEFT__FIELD_I32_BOOL, /* int32 0/1 as a boolean */
    WEFT__FIELD_I64_BOOL, /* int64 0/1 as a boolean */
    WEFT__FIELD_U32,      /* uint32 as an integer */
    WEFT__FIELD_F64,      /* double */
    WEFT__FIELD_MASK,     /* uint32 bit set of axes as a list of axes */
} weft__field_type_t;

/* The bytes a field of type t occupies. */
#define WEFT__FIELD_WIDTH(t) ((t) == WEFT__FIELD_I64_BOOL || (t) == WEFT__FIELD_F64 ? 8 : 4)

typedef struct weft__props_field {
    const char *key;
    weft__field_type_t type;
    size_t off;
} weft__props_field_t;

#define WEFT__PROPS_FIELDS_MAX 4

/* A props layout: its size (the class's props_size) and its fields in the
 * order they are written, the unused entries zero (key NULL). */
typedef struct weft__props_fields {
    size_t size;
    weft__props_field_t f[WEFT__PROPS_FIELDS_MAX];
} weft__props_fields_t;

/* The field of member m of props struct T, of type t under key k. The codec
 * copies WEFT__FIELD_WIDTH(t) bytes: the array size below stops the build
 * when m has another width. */
#define WEFT__PROPS_FIELD(k, t, T, m) \
    {k, t, offsetof(T, m) + 0 * sizeof(char[sizeof(((T *)0)->m) == WEFT__FIELD_WIDTH(t) ? 1 : -1])}

/* Writes / reads every field of t from / into props (zeroed by the caller:
 * bytes outside the fields are left alone). Errors: the props view's. */
weft_status_t weft__props_fields_put(weft_json_props_t *p, const weft__props_fields_t *t,
                                     const void *props);
weft_status_t weft__props_fields_get(const weft_json_props_t *p, const weft__props_fields_t *t,
                                     void *props);

/* The props_to_json / props_from_json hooks over table t, after checking
 * that the class's props_size is t's (else WEFT_ENOTIMPL: a layout the table
 * does not describe is reported, not misread). */
weft_status_t weft__props_fields_to_json(const weft_op_t *op, weft_json_props_t *p,
                                         const weft__props_fields_t *t);
weft_status_t weft__props_fields_from_json(weft_graph_t *g, const weft_op_class_t *cls,
                                           const weft_json_props_t *p,
                                           const weft__props_fields_t *t, const weft_op_t **out);

/* Defines the static hooks <prefix>_to_json and <prefix>_from_json of an op
 * class whose props table is t (a weft__props_fields_t), so that an op's
 * codec is its table and this line rather than two wrappers each. */
#define WEFT__PROPS_FIELDS_HOOKS(prefix, t)                                                    \
    static weft_status_t prefix##_to_json(const weft_op_t *op, weft_json_props_t *p)           \
    {                                                                                          \
        return weft__props_fields_to_json(op, p, &(t));                                        \
    }                                                                                          \
    static weft_status_t prefix##_from_json(weft_graph_t *g, const weft_op_class_t *cls,       \
                                            const weft_json_props_t *p, const weft_op_t **out) \
    {                                                                                          \
        return weft__props_fields_from_json(g, cls, p, &(t), out);                             \
    }

#endif /* WEFT_OPS_PROPS_FIELDS_INT_H */
