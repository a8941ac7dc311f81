/* Types: dtypes, tensor / null / disconnected types interned per context,
 * equality, hashing, is_super and printing. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "graph/graph_int.h"

static const char *const dtype_names[WEFT_DTYPE_COUNT] = {
    "bool", "int32", "int64", "float32", "float64", "int8", "int16", "uint8", "uint16", "uint32", "uint64", "float16", "complex64", "complex128"};
static const size_t dtype_sizes[WEFT_DTYPE_COUNT] = {1, 4, 8, 4, 8, 1, 2, 1, 2, 4, 8, 2, 8, 16};

static bool dtype_valid(weft_dtype_t d)
{
    return (int)d >= 0 && (int)d < WEFT_DTYPE_COUNT;
}

const char *weft_dtype_name(weft_dtype_t dtype)
{
    return dtype_valid(dtype) ? dtype_names[dtype] : NULL;
}

size_t weft_dtype_size(weft_dtype_t dtype)
{
    return dtype_valid(dtype) ? dtype_sizes[dtype] : 0;
}

weft_status_t weft_dtype_parse(const char *name, weft_dtype_t *out)
{
    if (!name || !out) return WEFT_EINVAL;
    for (int i = 0; i < WEFT_DTYPE_COUNT; i++) {
        if (strcmp(name, dtype_names[i]) == 0) {
            *out = (weft_dtype_t)i;
            return WEFT_OK;
        }
    }
    return WEFT_ENOTFOUND;
}

/* kind and width in bits per dtype (enum order) */
static const unsigned char dtype_kinds[WEFT_DTYPE_COUNT] = {
    WEFT_KIND_BOOL,  WEFT_KIND_INT,   WEFT_KIND_INT,   WEFT_KIND_FLOAT, WEFT_KIND_FLOAT,
    WEFT_KIND_INT,   WEFT_KIND_INT,   WEFT_KIND_UINT,  WEFT_KIND_UINT,  WEFT_KIND_UINT,
    WEFT_KIND_UINT,  WEFT_KIND_FLOAT, WEFT_KIND_COMPLEX, WEFT_KIND_COMPLEX};

int weft_dtype_kind(weft_dtype_t dtype)
{
    return dtype_valid(dtype) ? dtype_kinds[dtype] : -1;
}

static unsigned dtype_bits(weft_dtype_t d)
{
    return 8u * (unsigned)dtype_sizes[d];
}

/* The dtype of kind k and width bits; WEFT_DTYPE_COUNT when there is none
 * (a signed integer wider than 64 bits). */
static weft_dtype_t dtype_of(int k, unsigned bits)
{
    for (int i = 0; i < WEFT_DTYPE_COUNT; i++)
        if (dtype_kinds[i] == k && dtype_bits((weft_dtype_t)i) == bits) return (weft_dtype_t)i;
    return WEFT_DTYPE_COUNT;
}

/* Bits of the smallest float holding every value of integer dtype d. */
static unsigned float_bits_for_int(weft_dtype_t d)
{
    unsigned b = dtype_bits(d);
    return b <= 8 ? 16 : b <= 16 ? 32 : 64;
}

/* a and b of different kinds, ka < kb, neither bool: the promotion. */
static weft_dtype_t promote_mixed(weft_dtype_t a, int ka, weft_dtype_t b, int kb)
{
    unsigned ab = dtype_bits(a), bb = dtype_bits(b);
    if (ka == WEFT_KIND_INT && kb == WEFT_KIND_UINT) {
        if (bb < ab) return a;
        weft_dtype_t w = dtype_of(WEFT_KIND_INT, 2 * bb);
        return w != WEFT_DTYPE_COUNT ? w : WEFT_FLOAT64;
    }
    if (kb == WEFT_KIND_FLOAT) {
        unsigned need = ka == WEFT_KIND_FLOAT ? ab : float_bits_for_int(a);
        return dtype_of(WEFT_KIND_FLOAT, need > bb ? need : bb);
    }
    /* complex: its parts as wide as the float the other operand needs */
    unsigned part = ka == WEFT_KIND_FLOAT ? ab : float_bits_for_int(a);
    if (part < 32) part = 32;
    return dtype_of(WEFT_KIND_COMPLEX, 2 * part > bb ? 2 * part : bb);
}

weft_dtype_t weft_dtype_promote(weft_dtype_t a, weft_dtype_t b)
{
    if (!dtype_valid(a) || !dtype_valid(b)) return WEFT_DTYPE_COUNT;
    int ka = dtype_kinds[a], kb = dtype_kinds[b];
    if (ka == WEFT_KIND_BOOL) return b;
    if (kb == WEFT_KIND_BOOL) return a;
    if (ka == kb) return dtype_bits(a) >= dtype_bits(b) ? a : b;
    return ka < kb ? promote_mixed(a, ka, b, kb) : promote_mixed(b, kb, a, ka);
}

weft_dtype_t weft_dtype_float_of(weft_dtype_t dtype)
{
    if (!dtype_valid(dtype)) return WEFT_DTYPE_COUNT;
    if (dtype_kinds[dtype] >= WEFT_KIND_FLOAT) return dtype;
    return weft_dtype_promote(dtype, WEFT_FLOAT16);
}

static uint64_t mix64(uint64_t h, uint64_t x)
{
    h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
}

static uint64_t type_hash_fields(const weft_type_t *t)
{
    uint64_t h = mix64(0x7e57u, (uint64_t)t->kind);
    h = mix64(h, (uint64_t)t->dtype);
    h = mix64(h, (uint64_t)t->ndim);
    for (int i = 0; i < t->ndim; i++) h = mix64(h, (uint64_t)t->dims[i]);
    return h;
}

static bool type_fields_equal(const weft_type_t *a, const weft_type_t *b)
{
    if (a->kind != b->kind || a->dtype != b->dtype || a->ndim != b->ndim) return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->dims[i] != b->dims[i]) return false;
    return true;
}

static bool types_rehash(weft_graph_t *g)
{
    size_t ncap = g->types_cap ? g->types_cap * 2 : 64; /* types are arena objects: no wrap */
    weft_type_t **nt = weft__vec_alloc(g->alloc, ncap, sizeof(*nt));
    if (!nt) return false;
    memset(nt, 0, ncap * sizeof(*nt));
    for (size_t i = 0; i < g->types_cap; i++) {
        weft_type_t *t = g->types[i];
        if (!t) continue;
        size_t j = t->hash & (ncap - 1);
        while (nt[j]) j = (j + 1) & (ncap - 1);
        nt[j] = t;
    }
    weft__free(g->alloc, g->types, g->types_cap * sizeof(*g->types));
    g->types = nt;
    g->types_cap = ncap;
    return true;
}

/* Returns the interned copy of proto (allocating it on first use). */
static weft_status_t type_intern(weft_graph_t *g, weft_type_t *proto, const weft_type_t **out)
{
    proto->hash = type_hash_fields(proto);
    if ((g->types_n + 1) * 2 > g->types_cap && !types_rehash(g))
        return weft__graph_err(g, WEFT_ENOMEM, "type: out of memory");
    size_t j = proto->hash & (g->types_cap - 1);
    while (g->types[j]) {
        if (g->types[j]->hash == proto->hash && type_fields_equal(g->types[j], proto)) {
            *out = g->types[j];
            return WEFT_OK;
        }
        j = (j + 1) & (g->types_cap - 1);
    }
    weft_type_t *t = weft__arena_alloc(&g->arena, sizeof(*t));
    if (!t) return weft__graph_err(g, WEFT_ENOMEM, "type: out of memory");
    *t = *proto;
    t->g = g;
    g->types[j] = t;
    g->types_n++;
    *out = t;
    return WEFT_OK;
}

weft_status_t weft_type_tensor(weft_graph_t *g, weft_dtype_t dtype, int ndim, const int64_t *shape,
                               const weft_type_t **out)
{
    if (!g || !out) return WEFT_EINVAL;
    *out = NULL;
    if (!dtype_valid(dtype))
        return weft__graph_err(g, WEFT_EINVAL, "weft_type_tensor: invalid dtype %d", (int)dtype);
    if (ndim < 0 || ndim > WEFT_MAX_NDIM)
        return weft__graph_err(g, WEFT_EINVAL, "weft_type_tensor: ndim %d outside 0..%d", ndim,
                               WEFT_MAX_NDIM);
    weft_type_t proto;
    memset(&proto, 0, sizeof(proto));
    proto.kind = WEFT_TYPE_TENSOR;
    proto.dtype = dtype;
    proto.ndim = ndim;
    for (int i = 0; i < ndim; i++) {
        int64_t d = shape ? shape[i] : WEFT_DIM_UNKNOWN;
        if (d < WEFT_DIM_UNKNOWN)
            return weft__graph_err(g, WEFT_EINVAL,
                                   "weft_type_tensor: length %" PRId64 " of dimension %d", d, i);
        proto.dims[i] = d;
    }
    int64_t count;
    if (!weft__shape_fits(ndim, proto.dims, (int64_t)dtype_sizes[dtype], &count)) {
        char tb[WEFT_MAX_NDIM * 22 + 16];
        weft_type_print(&proto, tb, sizeof(tb));
        return weft__graph_err(g, WEFT_EOVERFLOW,
                               "weft_type_tensor: %s is too big (its byte size does not fit in "
                               "int64)",
                               tb);
    }
    return type_intern(g, &proto, out);
}

static weft_status_t type_special(weft_graph_t *g, weft_type_kind_t kind, const weft_type_t **out)
{
    if (!g || !out) return WEFT_EINVAL;
    weft_type_t proto;
    memset(&proto, 0, sizeof(proto));
    proto.kind = kind;
    proto.dtype = WEFT_FLOAT64;
    return type_intern(g, &proto, out);
}

weft_status_t weft_type_null(weft_graph_t *g, const weft_type_t **out)
{
    return type_special(g, WEFT_TYPE_NULL, out);
}

weft_status_t weft_type_disconnected(weft_graph_t *g, const weft_type_t **out)
{
    return type_special(g, WEFT_TYPE_DISCONNECTED, out);
}

weft_type_kind_t weft_type_kind(const weft_type_t *t)
{
    return t ? t->kind : WEFT_TYPE_NULL;
}

weft_dtype_t weft_type_dtype(const weft_type_t *t)
{
    return t ? t->dtype : (weft_dtype_t)0;
}

int weft_type_ndim(const weft_type_t *t)
{
    return t ? t->ndim : 0;
}

int64_t weft_type_dim(const weft_type_t *t, int i)
{
    if (!t || i < 0 || i >= t->ndim) return WEFT_DIM_UNKNOWN;
    return t->dims[i];
}

bool weft_type_is_broadcastable(const weft_type_t *t, int i)
{
    return weft_type_dim(t, i) == 1;
}

bool weft_type_is_static(const weft_type_t *t)
{
    if (!t || t->kind != WEFT_TYPE_TENSOR) return false;
    for (int i = 0; i < t->ndim; i++)
        if (t->dims[i] == WEFT_DIM_UNKNOWN) return false;
    return true;
}

bool weft_type_equal(const weft_type_t *a, const weft_type_t *b)
{
    if (a == b) return a != NULL;
    if (!a || !b) return false;
    return type_fields_equal(a, b);
}

uint64_t weft_type_hash(const weft_type_t *t)
{
    return t ? t->hash : 0;
}

bool weft_type_is_super(const weft_type_t *self, const weft_type_t *other)
{
    if (!self || !other) return false;
    if (self == other) return true;
    if (!weft_type_in_same_class(self, other)) return false;
    for (int i = 0; i < self->ndim; i++)
        if (self->dims[i] != WEFT_DIM_UNKNOWN && self->dims[i] != other->dims[i]) return false;
    return true;
}

bool weft_type_in_same_class(const weft_type_t *a, const weft_type_t *b)
{
    if (!a || !b) return false;
    return a->kind == b->kind && a->dtype == b->dtype && a->ndim == b->ndim;
}

int weft_type_print(const weft_type_t *t, char *buf, size_t cap)
{
    if (!t) return snprintf(buf, cap, "<null>");
    if (t->kind == WEFT_TYPE_NULL) return snprintf(buf, cap, "NullType");
    if (t->kind == WEFT_TYPE_DISCONNECTED) return snprintf(buf, cap, "DisconnectedType");
    char tmp[WEFT_MAX_NDIM * 22 + 16];
    size_t n = (size_t)snprintf(tmp, sizeof(tmp), "%s[", dtype_names[t->dtype]);
    for (int i = 0; i < t->ndim; i++) {
        const char *sep = i ? "," : "";
        if (t->dims[i] == WEFT_DIM_UNKNOWN)
            n += (size_t)snprintf(tmp + n, sizeof(tmp) - n, "%s?", sep);
        else
            n += (size_t)snprintf(tmp + n, sizeof(tmp) - n, "%s%" PRId64, sep, t->dims[i]);
    }
    snprintf(tmp + n, sizeof(tmp) - n, "]");
    return snprintf(buf, cap, "%s", tmp);
}
