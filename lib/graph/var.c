/* Variables and constants: creation (with creation trace), accessors, value
 * equality and hashing of constants, printing and the "describe" text that
 * error messages use. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/dtype_list.h"

#include "graph/graph_int.h"
#include "graph/site.h"

weft_var_t *weft__var_new(weft_graph_t *g, const weft_type_t *type, const char *name,
                          const char *file, int line)
{
    weft_var_t *v = weft__arena_alloc(&g->arena, sizeof(*v));
    if (!v) return NULL;
    memset(v, 0, sizeof(*v));
    if (name && !(v->name = weft__arena_strdup(&g->arena, name))) return NULL;
    v->type = type;
    v->g = g;
    v->file = file;
    v->line = line;
    v->id = g->n_vars++;
    return v;
}

const char *weft__trace_file(weft_graph_t *g, const char *file)
{
    if (!file) return "?";
    /* Creation sites are usually one __FILE__ literal called many times:
     * reuse the last copy when the text matches (a caller's temporary buffer
     * is still safe: the text is compared, not the pointer). */
    if (g->last_file && strcmp(g->last_file, file) == 0) return g->last_file;
    const char *c = weft__arena_strdup(&g->arena, file);
    if (c) g->last_file = c;
    return c;
}

static weft_status_t check_type_arg(weft_graph_t *g, const weft_type_t *type, const char *fn)
{
    if (type->g != g) {
        char tb[128];
        weft_type_print(type, tb, sizeof(tb));
        return weft__graph_err(g, WEFT_EFOREIGN, "%s: type %s belongs to another graph context", fn,
                               tb);
    }
    return WEFT_OK;
}

static weft_status_t var_create(weft_graph_t *g, const weft_type_t *type, const char *name,
                                const char *file, int line, weft_var_t **out)
{
    if (!type) return weft__graph_err(g, WEFT_EINVAL, "weft_var_create: NULL type");
    *out = NULL;
    weft_status_t s = check_type_arg(g, type, "weft_var_create");
    if (s != WEFT_OK) return s;
    const char *f = weft__trace_file(g, file);
    weft_var_t *v = f ? weft__var_new(g, type, name, f, line) : NULL;
    if (!v) return weft__graph_err(g, WEFT_ENOMEM, "weft_var_create: out of memory");
    *out = v;
    return WEFT_OK;
}

static size_t type_elems(const weft_type_t *t)
{
    size_t n = 1;
    for (int i = 0; i < t->ndim; i++)
        if (!weft__mul_size(n, (size_t)t->dims[i], &n)) return SIZE_MAX;
    return n;
}

static weft_status_t constant_create(weft_graph_t *g, const weft_type_t *type, const void *data,
                                     size_t nbytes, const char *file, int line, weft_var_t **out)
{
    if (!type || (!data && nbytes))
        return weft__graph_err(g, WEFT_EINVAL, "weft_constant_create: NULL %s",
                               type ? "data" : "type");
    *out = NULL;
    weft_status_t s = check_type_arg(g, type, "weft_constant_create");
    if (s != WEFT_OK) return s;
    char tb[128], sb[WEFT__SITE_CAP];
    weft_type_print(type, tb, sizeof(tb));
    if (!weft_type_is_static(type))
        return weft__graph_err(g, WEFT_EINVAL,
                               "weft_constant_create at %s: type %s is not a static tensor type",
                               weft__site_str(sb, sizeof sb, file, line), tb);
    size_t want;
    if (!weft__mul_size(type_elems(type), weft_dtype_size(type->dtype), &want) || want != nbytes)
        return weft__graph_err(g, WEFT_ESHAPE,
                               "weft_constant_create at %s: %zu bytes given for type %s",
                               weft__site_str(sb, sizeof sb, file, line), nbytes, tb);
    const char *f = weft__trace_file(g, file);
    weft_var_t *v = f ? weft__var_new(g, type, NULL, f, line) : NULL;
    void *copy = v ? weft__arena_alloc(&g->arena, nbytes) : NULL;
    if (!copy) return weft__graph_err(g, WEFT_ENOMEM, "weft_constant_create: out of memory");
    if (nbytes) memcpy(copy, data, nbytes);
    v->data = copy;
    v->nbytes = nbytes;
    v->flags |= WEFT__VAR_CONSTANT;
    *out = v;
    return WEFT_OK;
}

/* Converts value to dtype into buf; false when it is not representable
 * (outside an integer dtype's range: the fraction is truncated). */
#define SCALAR_SINT(A_, B_, T, UT, sn, D)                                                   \
    case D: {                                                                       \
        double hi = (double)((UT)-1 / 2) + 1.0; /* 2^(bits-1), exact */             \
        if (!(value >= -hi && value < hi)) return false;                            \
        T x = (T)value;                                                             \
        memcpy(buf, &x, sizeof(x));                                                 \
        return true;                                                                \
    }
#define SCALAR_UINT(A_, B_, T, UT, sn, D)                                                   \
    case D: {                                                                       \
        double hi = 2.0 * ((double)((UT)-1 / 2) + 1.0); /* 2^bits, exact */         \
        if (!(value >= 0.0 && value < hi)) return false;                            \
        T x = (T)value;                                                             \
        memcpy(buf, &x, sizeof(x));                                                 \
        return true;                                                                \
    }
#define SCALAR_FLOAT(A_, B_, T, sn, D)                                                      \
    case D: {                                                                       \
        T x = (T)value;                                                             \
        memcpy(buf, &x, sizeof(x));                                                 \
        return true;                                                                \
    }

static bool scalar_convert(weft_dtype_t dtype, double value, unsigned char *buf)
{
    switch (dtype) {
    case WEFT_BOOL:
        buf[0] = value != 0.0;
        return true;
    WEFT__SINT_DTYPES(SCALAR_SINT, ~, ~)
    WEFT__UINT_DTYPES(SCALAR_UINT, ~, ~)
    WEFT__FLOAT_DTYPES(SCALAR_FLOAT, ~, ~)
    SCALAR_FLOAT(~, ~, weft__f16, f16, WEFT_FLOAT16)
    case WEFT_COMPLEX64: { /* value + 0j */
        float x[2] = {(float)value, 0.0f};
        memcpy(buf, x, sizeof(x));
        return true;
    }
    case WEFT_COMPLEX128: {
        double x[2] = {value, 0.0};
        memcpy(buf, x, sizeof(x));
        return true;
    }
    default:
        return false;
    }
}

static weft_status_t constant_scalar(weft_graph_t *g, weft_dtype_t dtype, double value,
                                     const char *file, int line, weft_var_t **out)
{
    *out = NULL;
    const weft_type_t *t;
    weft_status_t s = weft_type_tensor(g, dtype, 0, NULL, &t);
    if (s != WEFT_OK) return s;
    unsigned char buf[16];
    char sb[WEFT__SITE_CAP];
    if (!scalar_convert(dtype, value, buf))
        return weft__graph_err(g, WEFT_EINVAL,
                               "weft_constant_scalar at %s: %g is not representable as %s",
                               weft__site_str(sb, sizeof sb, file, line), value,
                               weft_dtype_name(dtype));
    return constant_create(g, t, buf, weft_dtype_size(dtype), file, line, out);
}

weft_var_t *weft_var_create_at(weft_graph_t *g, const weft_type_t *type, const char *name,
                               const char *file, int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t s = g ? var_create(g, type, name, file, line, &out) : WEFT_EINVAL;
    return weft__ctor_end(g, s, out, "weft_var_create", file, line);
}

weft_var_t *weft_constant_create_at(weft_graph_t *g, const weft_type_t *type, const void *data,
                                    size_t nbytes, const char *file, int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t s = g ? constant_create(g, type, data, nbytes, file, line, &out) : WEFT_EINVAL;
    return weft__ctor_end(g, s, out, "weft_constant_create", file, line);
}

weft_var_t *weft_constant_scalar_at(weft_graph_t *g, weft_dtype_t dtype, double value,
                                    const char *file, int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t s = g ? constant_scalar(g, dtype, value, file, line, &out) : WEFT_EINVAL;
    return weft__ctor_end(g, s, out, "weft_constant_scalar", file, line);
}

const weft_type_t *weft_var_type(const weft_var_t *v)
{
    return v ? v->type : NULL;
}

weft_apply_t *weft_var_owner(const weft_var_t *v)
{
    return v ? v->owner : NULL;
}

size_t weft_var_index(const weft_var_t *v)
{
    return v ? v->index : 0;
}

const char *weft_var_name(const weft_var_t *v)
{
    return v ? v->name : NULL;
}

uint64_t weft_var_id(const weft_var_t *v)
{
    return v ? v->id : 0;
}

weft_graph_t *weft_var_graph(const weft_var_t *v)
{
    return v ? v->g : NULL;
}

bool weft_var_is_constant(const weft_var_t *v)
{
    return v && (v->flags & WEFT__VAR_CONSTANT);
}

void weft_var_trace(const weft_var_t *v, const char **file, int *line)
{
    if (file) *file = v ? v->file : NULL;
    if (line) *line = v ? v->line : 0;
}

weft_status_t weft_var_set_name(weft_var_t *v, const char *name)
{
    if (!v) return WEFT_EINVAL;
    /* The old name stays in the arena until the context dies (pointers to it
     * handed out earlier remain valid). */
    const char *n = weft__arena_strdup(&v->g->arena, name);
    if (name && !n) return weft__graph_err(v->g, WEFT_ENOMEM, "weft_var_set_name: out of memory");
    v->name = n;
    return WEFT_OK;
}

void weft_var_set_indestructible(weft_var_t *v, bool flag)
{
    if (!v) return;
    if (flag)
        v->flags |= WEFT__VAR_INDESTRUCTIBLE;
    else
        v->flags &= ~WEFT__VAR_INDESTRUCTIBLE;
}

bool weft_var_is_indestructible(const weft_var_t *v)
{
    return v && (v->flags & WEFT__VAR_INDESTRUCTIBLE);
}

weft_status_t weft_constant_data(const weft_var_t *c, const void **data, size_t *nbytes)
{
    if (!c) return WEFT_EINVAL;
    if (!data || !nbytes)
        return weft__graph_err(c->g, WEFT_EINVAL, "weft_constant_data: NULL %s pointer",
                               data ? "nbytes" : "data");
    if (!weft_var_is_constant(c)) {
        char vb[512];
        weft__var_describe(c, vb, sizeof(vb));
        return weft__graph_err(c->g, WEFT_EINVAL, "weft_constant_data: %s is not a constant", vb);
    }
    *data = c->data;
    *nbytes = c->nbytes;
    return WEFT_OK;
}

bool weft_constant_equal(const weft_var_t *a, const weft_var_t *b)
{
    if (!weft_var_is_constant(a) || !weft_var_is_constant(b)) return false;
    if (!weft_type_equal(a->type, b->type) || a->nbytes != b->nbytes) return false;
    return a->nbytes == 0 || memcmp(a->data, b->data, a->nbytes) == 0;
}

uint64_t weft_constant_hash(const weft_var_t *c)
{
    if (!weft_var_is_constant(c)) return 0;
    uint64_t h = 0xcbf29ce484222325ull ^ weft_type_hash(c->type); /* FNV-1a over the bytes */
    const unsigned char *p = c->data;
    for (size_t i = 0; i < c->nbytes; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

#define PRINT_SINT(A_, B_, T, UT, sn, D)                              \
    case D: {                                                 \
        T x;                                                  \
        memcpy(&x, p, sizeof(x));                             \
        return snprintf(buf, cap, "%" PRId64, (int64_t)x);    \
    }
#define PRINT_UINT(A_, B_, T, UT, sn, D)                              \
    case D: {                                                 \
        T x;                                                  \
        memcpy(&x, p, sizeof(x));                             \
        return snprintf(buf, cap, "%" PRIu64, (uint64_t)x);   \
    }
#define PRINT_FLOAT(A_, B_, T, sn, D)                                 \
    case D: {                                                 \
        T x;                                                  \
        memcpy(&x, p, sizeof(x));                             \
        return snprintf(buf, cap, "%g", (double)x);           \
    }

static int print_scalar(const weft_var_t *c, size_t k, char *buf, size_t cap)
{
    const unsigned char *p = (const unsigned char *)c->data + k * weft_dtype_size(c->type->dtype);
    switch (c->type->dtype) {
    case WEFT_BOOL:
        return snprintf(buf, cap, "%s", p[0] ? "true" : "false");
    WEFT__SINT_DTYPES(PRINT_SINT, ~, ~)
    WEFT__UINT_DTYPES(PRINT_UINT, ~, ~)
    WEFT__FLOAT_DTYPES(PRINT_FLOAT, ~, ~)
    PRINT_FLOAT(~, ~, weft__f16, f16, WEFT_FLOAT16)
    case WEFT_COMPLEX64: { /* NumPy's form: (1+2j) */
        float x[2];
        memcpy(x, p, sizeof(x));
        return snprintf(buf, cap, "(%g%+gj)", (double)x[0], (double)x[1]);
    }
    case WEFT_COMPLEX128: {
        double x[2];
        memcpy(x, p, sizeof(x));
        return snprintf(buf, cap, "(%g%+gj)", x[0], x[1]);
    }
    default:
        break;
    }
    return snprintf(buf, cap, "?");
}

#define SMALL_CONSTANT 8

/* Constants of up to SMALL_CONSTANT elements print their value ("2", "[1, 2]"),
 * larger ones "Constant{float64[100]}". */
static int print_constant(const weft_var_t *c, char *buf, size_t cap)
{
    size_t n = c->nbytes / weft_dtype_size(c->type->dtype);
    char tmp[512];
    size_t len = 0;
    if (c->type->ndim == 0) return print_scalar(c, 0, buf, cap);
    if (n > SMALL_CONSTANT) {
        char tb[128];
        weft_type_print(c->type, tb, sizeof(tb));
        return snprintf(buf, cap, "Constant{%s}", tb);
    }
    len += (size_t)snprintf(tmp + len, sizeof(tmp) - len, "[");
    for (size_t k = 0; k < n; k++) {
        if (k) len += (size_t)snprintf(tmp + len, sizeof(tmp) - len, ", ");
        len += (size_t)print_scalar(c, k, tmp + len, sizeof(tmp) - len);
    }
    snprintf(tmp + len, sizeof(tmp) - len, "]");
    return snprintf(buf, cap, "%s", tmp);
}

int weft_var_print(const weft_var_t *v, char *buf, size_t cap)
{
    if (!v) return snprintf(buf, cap, "<null>");
    if (v->name) return snprintf(buf, cap, "%s", v->name);
    if (v->owner) {
        char ob[256];
        weft_op_print(v->owner->op, ob, sizeof(ob));
        if (v->owner->n_out == 1) return snprintf(buf, cap, "%s.out", ob);
        return snprintf(buf, cap, "%s.%" PRIu32, ob, v->index);
    }
    if (v->flags & WEFT__VAR_CONSTANT) return print_constant(v, buf, cap);
    char tb[128];
    weft_type_print(v->type, tb, sizeof(tb));
    return snprintf(buf, cap, "<%s>", tb);
}

int weft__var_describe(const weft_var_t *v, char *buf, size_t cap)
{
    if (!v) return snprintf(buf, cap, "<null variable>");
    char pb[256], tb[128], sb[WEFT__SITE_CAP];
    weft_var_print(v, pb, sizeof(pb));
    weft_type_print(v->type, tb, sizeof(tb));
    const char *kind = (v->flags & WEFT__VAR_CONSTANT) ? "constant" : "variable";
    return snprintf(buf, cap, "%s %" PRIu64 " '%s' (%s, created at %s)", kind, v->id, pb, tb,
                    weft__site_str(sb, sizeof sb, v->file, v->line));
}
