/* The JSON props codec of the classes sharing the reduction props (Sum,
 * Mean, Max, Min, Prod, ReduceGrad, Argmax, Argmin): {"kind": "Sum", "ndim": 2,
 * "axes": [0], "keepdims": true}. The kind is written by name; the other
 * fields go through the field table codec (props_fields_int.h). */
#include <string.h>

#include "props_fields_int.h"
#include "reduce_ops_int.h"

static const weft__props_fields_t reduce_fields = {
    sizeof(weft__reduce_props_t),
    {WEFT__PROPS_FIELD("ndim", WEFT__FIELD_I32, weft__reduce_props_t, ndim),
     WEFT__PROPS_FIELD("axes", WEFT__FIELD_MASK, weft__reduce_props_t, axes),
     WEFT__PROPS_FIELD("keepdims", WEFT__FIELD_I32_BOOL, weft__reduce_props_t, keepdims)},
};

static weft_status_t get_kind(const weft_json_props_t *p, int32_t *kind)
{
    const char *name;
    weft_status_t s = weft_json_props_get_string(p, "kind", &name);
    for (int k = 0; s == WEFT_OK && k < WEFT_REDUCE_KIND_COUNT; k++)
        if (strcmp(name, weft__reduce_kind_name((weft_reduce_kind_t)k)) == 0) {
            *kind = k;
            return WEFT_OK;
        }
    return s != WEFT_OK ? s
                        : weft_json_props_error(p, WEFT_EPARSE, "kind: unknown kind '%s'", name);
}

/* The kind a class allows: a reduction class its own (a Sum node with
 * "kind": "Mean" would print as Sum and compute a mean), Argmax "Max";
 * Argmin "Min"; ReduceGrad, the gradient of any kind, every kind. */
static weft_status_t check_kind(const weft_json_props_t *p, const weft_op_class_t *cls,
                                int32_t kind)
{
    const char *name = weft__reduce_kind_name((weft_reduce_kind_t)kind), *want = NULL;
    for (int k = 0; k < WEFT_REDUCE_KIND_COUNT; k++)
        if (strcmp(cls->name, weft__reduce_kind_name((weft_reduce_kind_t)k)) == 0) want = cls->name;
    if (strcmp(cls->name, "Argmax") == 0) want = "Max";
    if (strcmp(cls->name, "Argmin") == 0) want = "Min";
    if (!want || strcmp(want, name) == 0) return WEFT_OK;
    return weft_json_props_error(p, WEFT_EPARSE, "kind: '%s' on a %s node (expected '%s')", name,
                                 cls->name, want);
}

weft_status_t weft__reduce_props_to_json(const weft_op_t *op, weft_json_props_t *p)
{
    const weft__reduce_props_t *r = weft_op_props(op);
    weft_status_t s =
        weft_json_props_put_string(p, "kind", weft__reduce_kind_name((weft_reduce_kind_t)r->kind));
    return s != WEFT_OK ? s : weft__props_fields_put(p, &reduce_fields, r);
}

weft_status_t weft__reduce_props_from_json(weft_graph_t *g, const weft_op_class_t *cls,
                                           const weft_json_props_t *p, const weft_op_t **out)
{
    weft__reduce_props_t r;
    memset(&r, 0, sizeof(r));
    weft_status_t s = get_kind(p, &r.kind);
    if (s == WEFT_OK) s = check_kind(p, cls, r.kind);
    if (s == WEFT_OK) s = weft__props_fields_get(p, &reduce_fields, &r);
    return s != WEFT_OK ? s : weft_op_create(g, cls, &r, out);
}
