/* Element-level tensor helpers: fill, copy and conversion, reshape (a view
 * when the strides allow, else a copy), element get/set, and comparison. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/base_int.h"
#include "tensor/tensor_int.h"

/* Writes src's elements into dst (same shape), converting dtypes. */
static void tensor_copy_into(weft_tensor_t *dst, const weft_tensor_t *src)
{
    const int64_t *st[2] = {dst->strides, src->strides};
    char *base[2] = {dst->data, src->data};
    size_t isz[2] = {weft__dtype_size(dst->dtype), weft__dtype_size(src->dtype)};
    weft__iter_rows(dst->ndim, dst->shape, 2, base, st, isz,
                    weft__convert_fn(dst->dtype, src->dtype), NULL);
}

/* Fast path of weft_tensor_copy (a compiled function delivers many small
 * outputs per call; the row iterator costs more than the copy there): the
 * byte count when dst and src (same shape) have the same dtype, are both
 * C-contiguous and hold at most COPY_SMALL_BYTES; 0 otherwise. */
#define COPY_SMALL_BYTES 256
static size_t small_contig_bytes(const weft_tensor_t *dst, const weft_tensor_t *src)
{
    if (dst->dtype != src->dtype) return 0;
    size_t isz = weft__dtype_size(dst->dtype), elems = 1;
    for (int d = dst->ndim - 1; d >= 0; d--) {
        int64_t len = dst->shape[d];
        if (len <= 0 || len > COPY_SMALL_BYTES) return 0; /* empty: the general path is cheap */
        if (len != 1 && (dst->strides[d] != (int64_t)elems || src->strides[d] != (int64_t)elems))
            return 0;
        elems *= (size_t)len;
        if (elems * isz > COPY_SMALL_BYTES) return 0;
    }
    return elems * isz;
}

weft_status_t weft_tensor_copy(weft_tensor_t *dst, const weft_tensor_t *src)
{
    if (!dst || !src) return weft__tensor_error(WEFT_EINVAL, "NULL dst or src");
    bool same = dst->ndim == src->ndim;
    for (int d = 0; same && d < dst->ndim; d++) same = dst->shape[d] == src->shape[d];
    if (!same) {
        char a[WEFT_MAX_NDIM * 22 + 32], b[WEFT_MAX_NDIM * 22 + 32];
        weft_tensor_print_type(dst, a, sizeof a);
        weft_tensor_print_type(src, b, sizeof b);
        return weft__tensor_error(WEFT_ESHAPE, "copy: destination %s vs source %s", a, b);
    }
    size_t nbytes = small_contig_bytes(dst, src);
    if (nbytes) memmove(dst->data, src->data, nbytes); /* full overlap allowed */
    else tensor_copy_into(dst, src);
    return WEFT_OK;
}

weft_status_t weft_tensor_copy_as(const weft_tensor_t *src, weft_dtype_t dtype,
                                  weft_tensor_t **out)
{
    if (!out) return weft__tensor_error(WEFT_EINVAL, "NULL out");
    *out = NULL;
    if (!src) return weft__tensor_error(WEFT_EINVAL, "NULL src");
    weft_status_t st = weft_tensor_empty(dtype, src->ndim, src->shape, out);
    if (st == WEFT_OK) tensor_copy_into(*out, src);
    return st;
}

weft_status_t weft_tensor_clone(const weft_tensor_t *src, weft_tensor_t **out)
{
    if (!src) {
        if (out) *out = NULL;
        return weft__tensor_error(WEFT_EINVAL, "NULL src");
    }
    return weft_tensor_copy_as(src, src->dtype, out);
}

weft_status_t weft_tensor_contiguous(weft_tensor_t *src, weft_tensor_t **out)
{
    if (!out || !src) {
        if (out) *out = NULL;
        return weft__tensor_error(WEFT_EINVAL, "NULL src or out");
    }
    if (weft_tensor_is_contiguous(src)) {
        *out = weft_tensor_retain(src);
        return WEFT_OK;
    }
    return weft_tensor_copy_as(src, src->dtype, out);
}

/* ---- fill ------------------------------------------------------------------ */

/* arg: the element's bytes (already converted to the tensor's dtype) */
typedef struct fill_value {
    size_t isz;
    unsigned char bytes[16]; /* complex128: two doubles */
} fill_value_t;

static void fill_row(size_t n, char *const *p, const int64_t *s, void *arg)
{
    const fill_value_t *v = arg;
    if (v->isz == 1) {
        unsigned char *o = (unsigned char *)p[0];
        for (size_t i = 0; i < n; i++) o[(int64_t)i * s[0]] = v->bytes[0];
    } else if (v->isz == 2) {
        uint16_t x, *o = (uint16_t *)p[0];
        memcpy(&x, v->bytes, 2);
        for (size_t i = 0; i < n; i++) o[(int64_t)i * s[0]] = x;
    } else if (v->isz == 4) {
        uint32_t x, *o = (uint32_t *)p[0];
        memcpy(&x, v->bytes, 4);
        for (size_t i = 0; i < n; i++) o[(int64_t)i * s[0]] = x;
    } else if (v->isz == 8) {
        uint64_t x, *o = (uint64_t *)p[0];
        memcpy(&x, v->bytes, 8);
        for (size_t i = 0; i < n; i++) o[(int64_t)i * s[0]] = x;
    } else { /* complex128 */
        for (size_t i = 0; i < n; i++) memcpy(p[0] + (int64_t)i * s[0] * 16, v->bytes, 16);
    }
}

weft_status_t weft_tensor_fill(weft_tensor_t *t, double value)
{
    if (!t) return weft__tensor_error(WEFT_EINVAL, "NULL tensor");
    fill_value_t v = {weft__dtype_size(t->dtype), {0}};
    char *cb[2] = {(char *)v.bytes, (char *)&value};
    int64_t cs[2] = {1, 1};
    weft__convert_fn(t->dtype, WEFT_FLOAT64)(1, cb, cs, NULL); /* same rules as copy_as */
    const int64_t *st[1] = {t->strides};
    char *base[1] = {t->data};
    weft__iter_rows(t->ndim, t->shape, 1, base, st, &v.isz, fill_row, &v);
    return WEFT_OK;
}

/* ---- element access --------------------------------------------------------- */

weft_status_t weft__tensor_element_ptr(const weft_tensor_t *t, const int64_t *index, char **p)
{
    if (!t || (t->ndim > 0 && !index))
        return weft__tensor_error(WEFT_EINVAL, "NULL tensor or index");
    int64_t off = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (index[d] < 0 || index[d] >= t->shape[d])
            return weft__tensor_error(WEFT_ERANGE, "index %lld outside [0, %lld) in dimension %d",
                                      (long long)index[d], (long long)t->shape[d], d);
        off += index[d] * t->strides[d];
    }
    *p = t->data + off * (int64_t)weft__dtype_size(t->dtype);
    return WEFT_OK;
}

static double load_f64(weft_dtype_t dtype, const char *p)
{
    double v;
    char *base[2] = {(char *)&v, (char *)p};
    int64_t s[2] = {1, 1};
    weft__convert_fn(WEFT_FLOAT64, dtype)(1, base, s, NULL);
    return v;
}

weft_status_t weft_tensor_get(const weft_tensor_t *t, const int64_t *index, double *value)
{
    char *p;
    if (!value) return weft__tensor_error(WEFT_EINVAL, "NULL value");
    weft_status_t st = weft__tensor_element_ptr(t, index, &p);
    if (st == WEFT_OK) *value = load_f64(t->dtype, p);
    return st;
}

weft_status_t weft_tensor_set(weft_tensor_t *t, const int64_t *index, double value)
{
    char *p;
    weft_status_t st = weft__tensor_element_ptr(t, index, &p);
    if (st != WEFT_OK) return st;
    char *base[2] = {p, (char *)&value};
    int64_t s[2] = {1, 1};
    weft__convert_fn(t->dtype, WEFT_FLOAT64)(1, base, s, NULL);
    return WEFT_OK;
}

double weft_tensor_flat_get(const weft_tensor_t *t, size_t i)
{
    if (!t || i >= weft_tensor_size(t)) return NAN;
    int64_t off = 0;
    for (int d = t->ndim - 1; d >= 0; d--) {
        off += (int64_t)(i % (size_t)t->shape[d]) * t->strides[d];
        i /= (size_t)t->shape[d];
    }
    return load_f64(t->dtype, t->data + off * (int64_t)weft__dtype_size(t->dtype));
}

weft_status_t weft_tensor_to_f64(const weft_tensor_t *t, double *dst)
{
    if (!t || !dst) return weft__tensor_error(WEFT_EINVAL, "NULL tensor or dst");
    /* dst seen as a contiguous float64 tensor (geometry only, no buffer) */
    int64_t strides[WEFT_MAX_NDIM];
    weft_tensor_t view = {.dtype = WEFT_FLOAT64, .ndim = t->ndim, .data = (char *)dst,
                          .shape = t->shape, .strides = strides};
    weft__tensor_contig_strides(t->ndim, t->shape, strides);
    tensor_copy_into(&view, t);
    return WEFT_OK;
}

weft_status_t weft_tensor_allclose(const weft_tensor_t *a, const weft_tensor_t *b, double rtol,
                                   double atol, bool *equal)
{
    if (!a || !b || !equal) return weft__tensor_error(WEFT_EINVAL, "NULL argument");
    *equal = false;
    if (a->ndim != b->ndim) return WEFT_OK;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d]) return WEFT_OK;
    if (weft__dtype_is_complex(a->dtype) || weft__dtype_is_complex(b->dtype))
        return weft__tensor_allclose_complex(a, b, rtol, atol, equal); /* tensor_complex.c */
    size_t n = weft_tensor_size(a);
    *equal = true;
    for (size_t i = 0; i < n && *equal; i++) {
        double x = weft_tensor_flat_get(a, i), y = weft_tensor_flat_get(b, i);
        if (isnan(x) || isnan(y))
            *equal = isnan(x) && isnan(y);
        else if (x != y) /* equal infinities pass above; inf - inf would be NaN */
            *equal = fabs(x - y) <= atol + rtol * fabs(y);
    }
    return WEFT_OK;
}

/* ---- reshape ----------------------------------------------------------------- */

/* Resolves a -1 entry and checks the element counts; writes the shape to res. */
static weft_status_t reshape_resolve(const weft_tensor_t *t, int ndim, const int64_t *shape,
                                     int64_t *res)
{
    int infer = -1;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < -1)
            return weft__tensor_error(WEFT_EINVAL, "reshape: length %lld in dimension %d",
                                      (long long)shape[d], d);
        if (shape[d] == -1 && infer >= 0)
            return weft__tensor_error(WEFT_EINVAL,
                                      "reshape: two -1 lengths (dimensions %d and %d)", infer, d);
        if (shape[d] == -1) infer = d;
        res[d] = shape[d];
    }
    int64_t known;
    if (!weft__shape_fits(ndim, shape, (int64_t)weft__dtype_size(t->dtype), &known))
        return weft__tensor_error(WEFT_EOVERFLOW,
                                  "reshape: the target shape is too big (its byte size does not "
                                  "fit in int64)");
    int64_t total = (int64_t)weft_tensor_size(t);
    if (infer >= 0) {
        if (known == 0 || total % known != 0)
            return weft__tensor_error(WEFT_ESHAPE,
                                      "reshape: cannot infer dimension %d for %lld elements",
                                      infer, (long long)total);
        res[infer] = total / known;
        known = total;
    }
    if (known != total)
        return weft__tensor_error(WEFT_ESHAPE, "reshape: %lld elements into a shape of %lld",
                                  (long long)total, (long long)known);
    return WEFT_OK;
}

/* numpy's no-copy reshape (_attempt_nocopy_reshape): walk old axes (length-1
 * ones dropped) and new axes grouping runs of equal products; each old run
 * must be contiguous within itself, and the new run's strides follow from the
 * run's innermost stride. Returns false when a copy is needed. Requires a
 * non-empty tensor. */
static bool reshape_strides(const weft_tensor_t *t, int ndim, const int64_t *shape, int64_t *st)
{
    int64_t od[WEFT_MAX_NDIM], os[WEFT_MAX_NDIM];
    int on = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (t->shape[d] == 1) continue;
        od[on] = t->shape[d];
        os[on++] = t->strides[d];
    }
    int oi = 0, oj = 1, ni = 0, nj = 1;
    while (ni < ndim && oi < on) {
        int64_t np = shape[ni], op = od[oi];
        while (np != op) {
            if (np < op)
                np *= shape[nj++];
            else
                op *= od[oj++];
        }
        for (int k = oi; k < oj - 1; k++)
            if (os[k] != od[k + 1] * os[k + 1]) return false;
        st[nj - 1] = os[oj - 1];
        for (int k = nj - 1; k > ni; k--) st[k - 1] = st[k] * shape[k];
        ni = nj++;
        oi = oj++;
    }
    for (int k = ni; k < ndim; k++) st[k] = 1; /* trailing length-1 axes */
    return true;
}

weft_status_t weft__tensor_reshape_plan(const weft_tensor_t *t, int ndim, const int64_t *shape,
                                       int64_t *res, int64_t *strides, bool *view)
{
    if (!t || (ndim > 0 && !shape))
        return weft__tensor_error(WEFT_EINVAL, "NULL tensor or shape");
    if (ndim < 0 || ndim > WEFT_MAX_NDIM)
        return weft__tensor_error(WEFT_EINVAL, "reshape: ndim %d outside [0, %d]", ndim,
                                  WEFT_MAX_NDIM);
    weft_status_t s = reshape_resolve(t, ndim, shape, res);
    if (s != WEFT_OK) return s;
    *view = weft_tensor_size(t) == 0 || reshape_strides(t, ndim, res, strides);
    if (weft_tensor_size(t) == 0 || !*view) weft__tensor_contig_strides(ndim, res, strides);
    return WEFT_OK;
}

void weft__tensor_copy_c_order(weft_tensor_t *dst, const weft_tensor_t *src)
{
    /* dst's memory seen with src's shape: C order matches element for element */
    int64_t dst_st[WEFT_MAX_NDIM];
    weft__tensor_contig_strides(src->ndim, src->shape, dst_st);
    const int64_t *st[2] = {dst_st, src->strides};
    char *base[2] = {dst->data, src->data};
    size_t isz[2] = {weft__dtype_size(dst->dtype), weft__dtype_size(src->dtype)};
    weft__iter_rows(src->ndim, src->shape, 2, base, st, isz,
                    weft__convert_fn(dst->dtype, src->dtype), NULL);
}

weft_status_t weft_tensor_reshape(weft_tensor_t *t, int ndim, const int64_t *shape,
                                  weft_tensor_t **out)
{
    if (!out) return weft__tensor_error(WEFT_EINVAL, "NULL out");
    *out = NULL;
    int64_t res[WEFT_MAX_NDIM], st[WEFT_MAX_NDIM];
    bool view = false;
    weft_status_t s = weft__tensor_reshape_plan(t, ndim, shape, res, st, &view);
    if (s != WEFT_OK) return s;
    if (view) {
        *out = weft__tensor_view_unchecked(t, ndim, res, st, t->data);
    } else if ((s = weft_tensor_empty(t->dtype, ndim, res, out)) == WEFT_OK) {
        weft__tensor_copy_c_order(*out, t);
        return WEFT_OK;
    } else {
        return s;
    }
    return *out ? WEFT_OK
                : weft__tensor_error(WEFT_ENOMEM, "cannot allocate a tensor handle: out of memory");
}
