/* The props_to_json / props_from_json hooks of the built-in op classes (the
 * JSON graph format, weft/graph_io.h): elementwise (in-place input, Cast's
 * dtype), DimShuffle (order), Reshape (shape), Subtensor / SetSubtensor /
 * IncSubtensor (numpy-style index text), and a field table for the
 * fixed-width props of the reductions, SumAxes and the linear algebra ops.
 * Loading goes through the public op constructors where they exist, so bad
 * props get the constructors' validation. The props view is used through its
 * call table (lib/io/json_vt.h): lib/ops does not link lib/io. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft/json_props.h"
#include "ops_int.h"
#include "ops_json_int.h"
#include "reduce/reduce_ops_int.h"
#include "weft/ops.h"

/* Layouts of the props private to lib/ops files (checked against the class's
 * props_size before use, so a change there is reported, not misread). */
typedef struct dimshuffle_props {
    int32_t n;
    int32_t order[WEFT_MAX_NDIM];
} dimshuffle_props_t;

typedef struct reshape_props {
    int32_t ndim;
    int32_t like;
    int64_t shape[WEFT_MAX_NDIM];
} reshape_props_t;

static weft_status_t layout_check(const weft_json_props_t *p, const weft_op_class_t *cls,
                                  size_t size)
{
    if (cls->props_size == size) return WEFT_OK;
    return weft_json_props_error(p, WEFT_ENOTIMPL,
                                   "%s: props layout changed (%zu bytes, codec "
                                   "expects %zu)",
                                   cls->name, cls->props_size, size);
}

/* ---- elementwise ----------------------------------------------------------------- */

/* The kind of an elementwise class, or -1 (compared by address: no pointer
 * arithmetic across unrelated objects). */
static int elemwise_kind(const weft_op_class_t *cls)
{
    for (int k = 0; k < WEFT_ELEMWISE_KIND_COUNT; k++)
        if (cls == &weft__elemwise_classes[k]) return k;
    return -1;
}

weft_status_t weft__ops_json_elemwise_to_json(const weft_op_t *op, weft_json_props_t *p)
{
    const weft__elemwise_props_t *e = weft_op_props(op);
    weft_status_t s = weft_json_props_put_int(p, "inplace", e->inplace);
    if (s == WEFT_OK && e->cast_dtype > 0)
        s = weft_json_props_put_string(p, "dtype",
                                         weft_dtype_name((weft_dtype_t)(e->cast_dtype - 1)));
    return s;
}

weft_status_t weft__ops_json_elemwise_from_json(weft_graph_t *g, const weft_op_class_t *cls,
                                                const weft_json_props_t *p, const weft_op_t **out)
{
    int64_t inplace = -1;
    weft_dtype_t dt = WEFT_FLOAT64;
    int kind = elemwise_kind(cls);
    if (kind < 0)
        return weft_json_props_error(p, WEFT_EINVAL, "%s is not an elementwise class", cls->name);
    if (weft_json_props_has(p, "inplace")) {
        weft_status_t s = weft_json_props_get_int(p, "inplace", &inplace);
        if (s != WEFT_OK) return s;
    }
    if (kind == WEFT_ELEMWISE_CAST) {
        const char *name;
        weft_status_t s = weft_json_props_get_string(p, "dtype", &name);
        if (s != WEFT_OK) return s;
        if (weft_dtype_parse(name, &dt) != WEFT_OK)
            return weft_json_props_error(p, WEFT_ETYPE, "dtype: unknown dtype '%s'", name);
    }
    if (inplace < -1 || inplace >= (int64_t)weft_elemwise_arity((weft_elemwise_kind_t)kind))
        return weft_json_props_error(p, WEFT_EPARSE, "inplace: %lld is not -1 or an input index",
                                       (long long)inplace);
    return weft_elemwise_op(g, (weft_elemwise_kind_t)kind, (int)inplace, dt, out);
}

/* ---- DimShuffle, Reshape ------------------------------------------------------ */

weft_status_t weft__ops_json_dimshuffle_to_json(const weft_op_t *op, weft_json_props_t *p)
{
    const dimshuffle_props_t *d = weft_op_props(op);
    weft_status_t s = layout_check(p, weft_op_class(op), sizeof(*d));
    int64_t order[WEFT_MAX_NDIM];
    for (int i = 0; i < d->n && i < WEFT_MAX_NDIM; i++) order[i] = d->order[i];
    return s != WEFT_OK ? s : weft_json_props_put_int_array(p, "order", order, (size_t)d->n);
}

weft_status_t weft__ops_json_dimshuffle_from_json(weft_graph_t *g, const weft_op_class_t *cls,
                                                  const weft_json_props_t *p, const weft_op_t **out)
{
    dimshuffle_props_t d;
    memset(&d, 0, sizeof(d));
    int64_t order[WEFT_MAX_NDIM];
    size_t n = 0;
    weft_status_t s = layout_check(p, cls, sizeof(d));
    if (s == WEFT_OK) s = weft_json_props_get_int_array(p, "order", order, WEFT_MAX_NDIM, &n);
    if (s != WEFT_OK) return s;
    for (size_t i = 0; i < n; i++) {
        if (order[i] < -1 || order[i] >= WEFT_MAX_NDIM)
            return weft_json_props_error(p, WEFT_EPARSE, "order[%zu]: bad axis %lld", i,
                                           (long long)order[i]);
        d.order[i] = (int32_t)order[i];
    }
    d.n = (int32_t)n;
    return weft_op_create(g, cls, &d, out);
}

weft_status_t weft__ops_json_reshape_to_json(const weft_op_t *op, weft_json_props_t *p)
{
    const reshape_props_t *r = weft_op_props(op);
    weft_status_t s = layout_check(p, weft_op_class(op), sizeof(*r));
    if (s != WEFT_OK) return s;
    if (r->like) return weft_json_props_put_bool(p, "like", true);
    return weft_json_props_put_int_array(p, "shape", r->shape, (size_t)r->ndim);
}

weft_status_t weft__ops_json_reshape_from_json(weft_graph_t *g, const weft_op_class_t *cls,
                                               const weft_json_props_t *p, const weft_op_t **out)
{
    reshape_props_t r;
    memset(&r, 0, sizeof(r));
    weft_status_t s = layout_check(p, cls, sizeof(r));
    bool like = false;
    if (s == WEFT_OK && weft_json_props_has(p, "like"))
        s = weft_json_props_get_bool(p, "like", &like);
    if (s != WEFT_OK) return s;
    if (like) {
        r.like = 1;
        return weft_op_create(g, cls, &r, out);
    }
    size_t n = 0;
    s = weft_json_props_get_int_array(p, "shape", r.shape, WEFT_MAX_NDIM, &n);
    if (s != WEFT_OK) return s;
    int minus = 0;
    for (size_t i = 0; i < n; i++) {
        minus += r.shape[i] == -1;
        if (r.shape[i] < -1 || minus > 1)
            return weft_json_props_error(p, WEFT_ESHAPE, "shape[%zu]: bad length %lld", i,
                                           (long long)r.shape[i]);
    }
    r.ndim = (int32_t)n;
    return weft_op_create(g, cls, &r, out);
}

/* ---- Subtensor family: "1:3, 2, ::-1, :" ------------------------------------------------ */

static void print_bound(char **w, char *end, int64_t v)
{
    if (v != WEFT_SLICE_NONE) *w += snprintf(*w, (size_t)(end - *w), "%lld", (long long)v);
}

static void print_idx(const weft__subtensor_props_t *sp, char *buf, size_t cap)
{
    char *w = buf, *end = buf + cap;
    *w = '\0';
    for (int i = 0; i < sp->n && w < end - 64; i++) {
        const weft__slice_t *s = &sp->idx[i];
        if (i) w += snprintf(w, (size_t)(end - w), ", ");
        if (s->kind == WEFT_SLICE_INDEX) {
            w += snprintf(w, (size_t)(end - w), "%lld", (long long)s->start);
            continue;
        }
        print_bound(&w, end, s->start);
        w += snprintf(w, (size_t)(end - w), ":");
        print_bound(&w, end, s->stop);
        if (s->step != 1) w += snprintf(w, (size_t)(end - w), ":%lld", (long long)s->step);
    }
}

/* Parses one optional integer at *s (spaces skipped); *v unchanged if none. */
static bool parse_bound(const char **s, int64_t *v)
{
    while (**s == ' ') (*s)++;
    if (**s != '-' && (**s < '0' || **s > '9')) return true;
    char *e;
    long long x = strtoll(*s, &e, 10);
    if (e == *s) return false;
    *v = x;
    *s = e;
    while (**s == ' ') (*s)++;
    return true;
}

static bool parse_entry(const char **s, weft_slice_t *out)
{
    weft_slice_t sl = WEFT_SLICE_ALL;
    int64_t first = WEFT_SLICE_NONE;
    if (!parse_bound(s, &first)) return false;
    if (**s != ':') { /* a single index */
        if (first == WEFT_SLICE_NONE) return false;
        *out = (weft_slice_t)WEFT_SLICE_AT(first);
        return true;
    }
    (*s)++;
    sl.start = first;
    if (!parse_bound(s, &sl.stop)) return false;
    if (**s == ':') {
        (*s)++;
        if (!parse_bound(s, &sl.step)) return false;
    }
    *out = sl;
    return true;
}

static size_t parse_idx(const char *text, weft_slice_t *idx, bool *ok)
{
    size_t n = 0;
    const char *s = text;
    *ok = true;
    while (*s == ' ') s++;
    while (*s && *ok) {
        *ok = n < WEFT_MAX_NDIM && parse_entry(&s, &idx[n]);
        n++;
        if (*s == ',')
            s++;
        else if (*s)
            *ok = false;
    }
    return n;
}

weft_status_t weft__ops_json_subtensor_to_json(const weft_op_t *op, weft_json_props_t *p)
{
    const weft__subtensor_props_t *sp = weft_op_props(op);
    char buf[WEFT_MAX_NDIM * 72];
    print_idx(sp, buf, sizeof(buf));
    weft_status_t s = weft_json_props_put_string(p, "idx", buf);
    if (s == WEFT_OK && weft_op_class(op) != &weft__subtensor_class)
        s = weft_json_props_put_bool(p, "inplace", sp->inplace != 0);
    return s;
}

weft_status_t weft__ops_json_subtensor_from_json(weft_graph_t *g, const weft_op_class_t *cls,
                                                 const weft_json_props_t *p, const weft_op_t **out)
{
    const char *text;
    bool inplace = false, ok;
    weft_status_t s = weft_json_props_get_string(p, "idx", &text);
    if (s == WEFT_OK && cls != &weft__subtensor_class && weft_json_props_has(p, "inplace"))
        s = weft_json_props_get_bool(p, "inplace", &inplace);
    if (s != WEFT_OK) return s;
    weft_slice_t idx[WEFT_MAX_NDIM];
    size_t n = parse_idx(text, idx, &ok);
    if (!ok)
        return weft_json_props_error(p, WEFT_EPARSE,
                                       "idx: cannot parse '%s' (expected e.g. "
                                       "\"1:3, 2, ::-1\")",
                                       text);
    if (cls == &weft__subtensor_class)
        s = weft_subtensor_op(g, n, idx, out);
    else
        s = weft_set_subtensor_op(g, n, idx, cls == &weft__inc_subtensor_class, inplace, out);
    if (s != WEFT_OK) return weft_json_props_error(p, s, "idx: '%s' rejected", text);
    return WEFT_OK;
}

/* ---- table-driven codecs: fixed-width POD props ---------------------------------- */

typedef enum ftype {
    F_I32,      /* int32 as an integer */
    F_I32_BOOL, /* int32 0/1 as a boolean */
    F_I64_BOOL, /* int64 0/1 as a boolean */
    F_U32,      /* uint32 as an integer */
    F_F64,      /* double */
    F_MASK,     /* uint32 bit set of axes as a list of axes */
    F_RKIND,    /* int32 weft_reduce_kind_t as its name ("Sum", ...) */
} ftype_t;

typedef struct field {
    const char *key;
    ftype_t t;
    size_t off;
} field_t;

typedef struct layout {
    const char *cls; /* class name (the built-in of that name) */
    size_t size;     /* the props_size the layout describes */
    size_t n;
    field_t f[4];
} layout_t;

#define RF(k, t, m) {k, t, offsetof(weft__reduce_props_t, m)}
/* clang-format off */
#define REDUCE_LAYOUT(name)                                                               \
    {name, sizeof(weft__reduce_props_t), 4,                                               \
     {RF("kind", F_RKIND, kind), RF("ndim", F_I32, ndim), RF("axes", F_MASK, axes),       \
      RF("keepdims", F_I32_BOOL, keepdims)}}
/* clang-format on */

static const layout_t layouts[] = {
    REDUCE_LAYOUT("Sum"),
    REDUCE_LAYOUT("Mean"),
    REDUCE_LAYOUT("Max"),
    REDUCE_LAYOUT("Min"),
    REDUCE_LAYOUT("Prod"),
    REDUCE_LAYOUT("ReduceGrad"),
    REDUCE_LAYOUT("Argmax"),
    {"SumAxes", sizeof(uint32_t), 1, {{"axes", F_MASK, 0}}},
    {"Gemm", sizeof(int32_t), 1, {{"inplace", F_I32_BOOL, 0}}},
    {"Gemv", sizeof(int32_t), 1, {{"inplace", F_I32_BOOL, 0}}},
    {"Trsm", sizeof(uint32_t), 1, {{"flags", F_U32, 0}}},
    {"Syrk", 16, 2, {{"alpha", F_F64, 0}, {"trans", F_I64_BOOL, 8}}},
    {"TriMask", 16, 2, {{"diag_scale", F_F64, 0}, {"lower", F_I64_BOOL, 8}}},
};

static const layout_t *find_layout(const weft_op_class_t *cls)
{
    for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
        if (strcmp(cls->name, layouts[i].cls) == 0 && weft_ops_find_class(cls->name) == cls)
            return &layouts[i];
    return NULL;
}

static weft_status_t put_field(weft_json_props_t *p, const field_t *f, const unsigned char *b)
{
    int32_t i32;
    int64_t i64;
    uint32_t u32;
    double f64;
    switch (f->t) {
    case F_I32: memcpy(&i32, b + f->off, 4); return weft_json_props_put_int(p, f->key, i32);
    case F_I32_BOOL:
        memcpy(&i32, b + f->off, 4);
        return weft_json_props_put_bool(p, f->key, i32 != 0);
    case F_I64_BOOL:
        memcpy(&i64, b + f->off, 8);
        return weft_json_props_put_bool(p, f->key, i64 != 0);
    case F_U32: memcpy(&u32, b + f->off, 4); return weft_json_props_put_int(p, f->key, u32);
    case F_F64: memcpy(&f64, b + f->off, 8); return weft_json_props_put_double(p, f->key, f64);
    case F_RKIND:
        memcpy(&i32, b + f->off, 4);
        return weft_json_props_put_string(p, f->key,
                                            weft__reduce_kind_name((weft_reduce_kind_t)i32));
    default: break;
    }
    memcpy(&u32, b + f->off, 4);
    int64_t axes[32];
    size_t n = 0;
    for (int d = 0; d < 32; d++)
        if (u32 & (1u << d)) axes[n++] = d;
    return weft_json_props_put_int_array(p, f->key, axes, n);
}

static weft_status_t get_mask(const weft_json_props_t *p, const field_t *f, uint32_t *mask)
{
    int64_t axes[32];
    size_t n = 0;
    weft_status_t s = weft_json_props_get_int_array(p, f->key, axes, 32, &n);
    *mask = 0;
    for (size_t i = 0; i < n && s == WEFT_OK; i++) {
        if (axes[i] < 0 || axes[i] >= WEFT_MAX_NDIM)
            return weft_json_props_error(p, WEFT_EPARSE, "%s[%zu]: bad axis %lld", f->key, i,
                                           (long long)axes[i]);
        *mask |= 1u << axes[i];
    }
    return s;
}

static weft_status_t get_kind(const weft_json_props_t *p, const field_t *f, int32_t *kind)
{
    const char *name;
    weft_status_t s = weft_json_props_get_string(p, f->key, &name);
    for (int k = 0; s == WEFT_OK && k < WEFT_REDUCE_KIND_COUNT; k++)
        if (strcmp(name, weft__reduce_kind_name((weft_reduce_kind_t)k)) == 0) {
            *kind = k;
            return WEFT_OK;
        }
    return s != WEFT_OK
               ? s
               : weft_json_props_error(p, WEFT_EPARSE, "%s: unknown kind '%s'", f->key, name);
}

static weft_status_t get_field(const weft_json_props_t *p, const field_t *f, unsigned char *b)
{
    int64_t i64 = 0;
    uint32_t u32 = 0;
    int32_t i32 = 0;
    bool flag = false;
    weft_status_t s;
    switch (f->t) {
    case F_I32:
    case F_U32:
        s = weft_json_props_get_int(p, f->key, &i64);
        if (s == WEFT_OK && (i64 < (f->t == F_U32 ? 0 : INT32_MIN) ||
                             i64 > (f->t == F_U32 ? (int64_t)UINT32_MAX : INT32_MAX)))
            s = weft_json_props_error(p, WEFT_EPARSE, "%s: %lld out of range", f->key,
                                        (long long)i64);
        i32 = (int32_t)i64;
        u32 = (uint32_t)i64;
        if (s == WEFT_OK) memcpy(b + f->off, f->t == F_U32 ? (void *)&u32 : (void *)&i32, 4);
        return s;
    case F_I32_BOOL:
    case F_I64_BOOL:
        s = weft_json_props_get_bool(p, f->key, &flag);
        i32 = flag;
        i64 = flag;
        if (s == WEFT_OK)
            memcpy(b + f->off, f->t == F_I32_BOOL ? (void *)&i32 : (void *)&i64,
                   f->t == F_I32_BOOL ? 4 : 8);
        return s;
    case F_F64: return weft_json_props_get_double(p, f->key, (double *)(void *)(b + f->off));
    case F_RKIND:
        s = get_kind(p, f, &i32);
        if (s == WEFT_OK) memcpy(b + f->off, &i32, 4);
        return s;
    default: break;
    }
    s = get_mask(p, f, &u32);
    if (s == WEFT_OK) memcpy(b + f->off, &u32, 4);
    return s;
}

weft_status_t weft__ops_json_table_to_json(const weft_op_t *op, weft_json_props_t *p)
{
    const layout_t *l = find_layout(weft_op_class(op));
    if (!l)
        return weft_json_props_error(p, WEFT_ENOTIMPL, "no props codec for %s", weft_op_name(op));
    weft_status_t s = layout_check(p, weft_op_class(op), l->size);
    for (size_t i = 0; i < l->n && s == WEFT_OK; i++) s = put_field(p, &l->f[i], weft_op_props(op));
    return s;
}

weft_status_t weft__ops_json_table_from_json(weft_graph_t *g, const weft_op_class_t *cls,
                                             const weft_json_props_t *p, const weft_op_t **out)
{
    const layout_t *l = find_layout(cls);
    if (!l) return weft_json_props_error(p, WEFT_ENOTIMPL, "no props codec for %s", cls->name);
    _Alignas(max_align_t) unsigned char buf[64];
    memset(buf, 0, sizeof(buf));
    weft_status_t s = layout_check(p, cls, l->size);
    for (size_t i = 0; i < l->n && s == WEFT_OK; i++) s = get_field(p, &l->f[i], buf);
    return s != WEFT_OK ? s : weft_op_create(g, cls, buf, out);
}
