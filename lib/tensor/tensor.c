/* Tensor handles and buffers: creation (owned aligned, borrowed, wrapped),
 * views with bounds checks, atomic reference counting, accessors and the
 * per-thread error text. Element-level helpers live in tensor_data.c. */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/tensor_int.h"
#include "base/base_int.h"

static _Thread_local char tensor_errbuf[256];

weft_status_t weft__tensor_error(weft_status_t status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tensor_errbuf, sizeof tensor_errbuf, fmt, ap);
    va_end(ap);
    return status;
}

const char *weft_tensor_last_error(void)
{
    return tensor_errbuf;
}

/* "float64[3,4]" (weft_tensor_print_type's text). */
static int print_type(weft_dtype_t dtype, int ndim, const int64_t *shape, char *buf, size_t cap)
{
    char tmp[WEFT_MAX_NDIM * 22 + 32];
    int n = snprintf(tmp, sizeof tmp, "%s[", weft__dtype_name(dtype));
    for (int d = 0; d < ndim; d++)
        n += snprintf(tmp + n, sizeof tmp - (size_t)n, d ? ",%lld" : "%lld", (long long)shape[d]);
    snprintf(tmp + n, sizeof tmp - (size_t)n, "]");
    return snprintf(buf, cap, "%s", tmp);
}

weft_status_t weft__tensor_check_shape(weft_dtype_t dtype, int ndim, const int64_t *shape,
                                       size_t *count)
{
    size_t isz = weft__dtype_size(dtype);
    if (isz == 0) return weft__tensor_error(WEFT_EINVAL, "invalid dtype %d", (int)dtype);
    if (ndim < 0 || ndim > WEFT_MAX_NDIM)
        return weft__tensor_error(WEFT_EINVAL, "ndim %d outside [0, %d]", ndim, WEFT_MAX_NDIM);
    if (ndim > 0 && !shape)
        return weft__tensor_error(WEFT_EINVAL, "NULL shape with ndim %d", ndim);
    for (int d = 0; d < ndim; d++)
        if (shape[d] < 0)
            return weft__tensor_error(WEFT_EINVAL, "negative length %lld in dimension %d",
                                      (long long)shape[d], d);
    int64_t n;
    if (!weft__shape_fits(ndim, shape, (int64_t)isz, &n) ||
        n * (int64_t)isz > INT64_MAX - 2 * WEFT_TENSOR_ALIGN) {
        char tb[WEFT_MAX_NDIM * 22 + 32];
        print_type(dtype, ndim, shape, tb, sizeof tb);
        return weft__tensor_error(WEFT_EOVERFLOW,
                                  "%s is too big (its byte size does not fit in int64)", tb);
    }
    *count = (size_t)n;
    return WEFT_OK;
}

void weft__tensor_contig_strides(int ndim, const int64_t *shape, int64_t *strides)
{
    int64_t s = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        strides[d] = s;
        s *= shape[d] > 0 ? shape[d] : 1;
    }
}

/* Element range [min_el, max_el] reached by a geometry (relative to element
 * [0..]); *empty when some length is 0 (nothing reached). Returns false when
 * the extent overflows int64 in bytes. */
static bool geometry_extent(int ndim, const int64_t *shape, const int64_t *strides, size_t isz,
                            int64_t *min_el, int64_t *max_el, bool *empty)
{
    int64_t lo = 0, hi = 0, b;
    *empty = false;
    for (int d = 0; d < ndim; d++)
        if (shape[d] == 0) *empty = true;
    for (int d = 0; d < ndim && !*empty; d++) {
        int64_t span;
        if (__builtin_mul_overflow(shape[d] - 1, strides[d], &span)) return false;
        if (span < 0 && __builtin_add_overflow(lo, span, &lo)) return false;
        if (span > 0 && __builtin_add_overflow(hi, span, &hi)) return false;
    }
    if (__builtin_mul_overflow(lo, (int64_t)isz, &b) ||
        __builtin_mul_overflow(hi + 1, (int64_t)isz, &b))
        return false;
    *min_el = lo;
    *max_el = hi;
    return true;
}

/* Sets a handle up in memory of weft__tensor_handle_bytes(ndim) bytes. */
static weft_tensor_t *tensor_handle_init(void *mem, weft_buffer_t *buf, weft_dtype_t dtype,
                                         int ndim, const int64_t *shape, const int64_t *strides,
                                         char *data)
{
    weft_tensor_t *t = mem;
    /* not an atomic operation: the handle is not shared yet; whatever hands
     * the pointer to another thread publishes it */
    atomic_init(&t->refs, 1);
    t->buf = buf;
    t->data = data;
    t->dtype = dtype;
    t->ndim = ndim;
    t->shape = t->dims;
    t->strides = t->dims + ndim;
    if (ndim > 0) {
        memcpy(t->shape, shape, (size_t)ndim * sizeof *shape);
        if (strides)
            memcpy(t->strides, strides, (size_t)ndim * sizeof *strides);
        else
            weft__tensor_contig_strides(ndim, shape, t->strides);
    }
    return t;
}

static weft_tensor_t *tensor_handle_new(weft_buffer_t *buf, weft_dtype_t dtype, int ndim,
                                        const int64_t *shape, const int64_t *strides, char *data)
{
    void *mem = malloc(weft__tensor_handle_bytes(ndim));
    return mem ? tensor_handle_init(mem, buf, dtype, ndim, shape, strides, data) : NULL;
}

static void buffer_release(weft_buffer_t *buf)
{
    /* acq_rel: the release half publishes this holder's element accesses to
     * whoever frees; the acquire half (what matters on the decrement to zero)
     * pairs with every other holder's release, so their accesses happen
     * before the free. (The release-decrement + acquire-fence idiom is the
     * same on x86 but GCC's TSan rejects fences.) */
    if (atomic_fetch_sub_explicit(&buf->refs, 1, memory_order_acq_rel) != 1) return;
    if (buf->block) { /* owned: the header lives in the block */
        free(buf->block);
        return;
    }
    if (buf->free_fn) buf->free_fn(buf->free_user, buf->data);
    free(buf);
}

static void buffer_retain(weft_buffer_t *buf)
{
    /* relaxed: the caller holds a reference, so the buffer cannot be freed
     * concurrently; an increment publishes nothing */
    atomic_fetch_add_explicit(&buf->refs, 1, memory_order_relaxed);
}

static size_t round_up(size_t n, size_t a)
{
    return (n + a - 1) / a * a;
}

/* One aligned block per owned tensor: [base handle][elements][buffer header].
 * Elements of at most WEFT_TENSOR_SMALL_BYTES follow the handle at 16-byte
 * alignment (same cache line for ndim <= 1); larger ones start at the next
 * WEFT_TENSOR_ALIGN boundary. */
weft_status_t weft_tensor_empty(weft_dtype_t dtype, int ndim, const int64_t *shape,
                                weft_tensor_t **out)
{
    if (!out) return weft__tensor_error(WEFT_EINVAL, "NULL out");
    *out = NULL;
    size_t count = 0; // set by check_shape; initialized for -Wmaybe-uninitialized
    weft_status_t st = weft__tensor_check_shape(dtype, ndim, shape, &count);
    if (st != WEFT_OK) return st;
    size_t bytes = count * weft__dtype_size(dtype);
    size_t data_off = round_up(weft__tensor_handle_bytes(ndim),
                               bytes <= WEFT_TENSOR_SMALL_BYTES ? 16 : WEFT_TENSOR_ALIGN);
    size_t buf_off = round_up(data_off + bytes, 16);
    size_t total = round_up(buf_off + sizeof(weft_buffer_t), WEFT_TENSOR_ALIGN);
    char *block = aligned_alloc(WEFT_TENSOR_ALIGN, total);
    if (!block)
        return weft__tensor_error(WEFT_ENOMEM, "cannot allocate %zu bytes: out of memory", total);
    weft__tensor_advise_huge(block, total);
    char *data = block + data_off;
    weft_buffer_t *buf = (weft_buffer_t *)(block + buf_off);
    atomic_init(&buf->refs, 1);
    buf->lo = (uintptr_t)data;
    buf->hi = (uintptr_t)data + bytes;
    buf->data = data;
    buf->free_fn = NULL;
    buf->free_user = NULL;
    buf->block = block;
    *out = tensor_handle_init(block, buf, dtype, ndim, shape, NULL, data);
    return WEFT_OK;
}

weft_status_t weft_tensor_zeros(weft_dtype_t dtype, int ndim, const int64_t *shape,
                                weft_tensor_t **out)
{
    weft_status_t st = weft_tensor_empty(dtype, ndim, shape, out);
    if (st == WEFT_OK) memset((*out)->data, 0, weft_tensor_size(*out) * weft__dtype_size(dtype));
    return st;
}

weft_status_t weft_tensor_full(weft_dtype_t dtype, int ndim, const int64_t *shape, double value,
                               weft_tensor_t **out)
{
    weft_status_t st = weft_tensor_empty(dtype, ndim, shape, out);
    if (st == WEFT_OK) weft_tensor_fill(*out, value);
    return st;
}

/* Shared by from_data and wrap: validates, then builds a buffer covering the
 * geometry's extent. */
static weft_status_t tensor_over_memory(weft_dtype_t dtype, int ndim, const int64_t *shape,
                                        const int64_t *strides, void *data,
                                        weft_tensor_free_fn free_fn, void *user,
                                        weft_tensor_t **out)
{
    size_t count = 0; // set by check_shape; initialized for -Wmaybe-uninitialized
    weft_status_t st = weft__tensor_check_shape(dtype, ndim, shape, &count);
    if (st != WEFT_OK) return st;
    if (!data && count > 0)
        return weft__tensor_error(WEFT_EINVAL, "NULL data for %zu elements", count);
    int64_t contig[WEFT_MAX_NDIM];
    if (!strides) {
        weft__tensor_contig_strides(ndim, shape, contig);
        strides = contig;
    }
    size_t isz = weft__dtype_size(dtype);
    int64_t lo = 0, hi = 0;
    bool empty;
    if (!geometry_extent(ndim, shape, strides, isz, &lo, &hi, &empty))
        return weft__tensor_error(WEFT_EOVERFLOW, "strides reach beyond the address space");
    weft_buffer_t *buf = malloc(sizeof *buf);
    if (!buf)
        return weft__tensor_error(WEFT_ENOMEM, "cannot allocate a buffer header: out of memory");
    atomic_init(&buf->refs, 1);
    uintptr_t base = (uintptr_t)data;
    buf->lo = empty ? base : base + (uintptr_t)(lo * (int64_t)isz);
    buf->hi = empty ? base : base + (uintptr_t)((hi + 1) * (int64_t)isz);
    buf->data = data;
    buf->free_fn = free_fn;
    buf->free_user = user;
    buf->block = NULL;
    *out = tensor_handle_new(buf, dtype, ndim, shape, strides, data);
    if (!*out) {
        free(buf);
        return weft__tensor_error(WEFT_ENOMEM, "cannot allocate a tensor handle: out of memory");
    }
    return WEFT_OK;
}

weft_status_t weft_tensor_from_data(weft_dtype_t dtype, int ndim, const int64_t *shape,
                                    const int64_t *strides, void *data, weft_tensor_t **out)
{
    if (!out) return weft__tensor_error(WEFT_EINVAL, "NULL out");
    *out = NULL;
    return tensor_over_memory(dtype, ndim, shape, strides, data, NULL, NULL, out);
}

weft_status_t weft_tensor_wrap(weft_dtype_t dtype, int ndim, const int64_t *shape,
                               const int64_t *strides, void *data, weft_tensor_free_fn free_fn,
                               void *user, weft_tensor_t **out)
{
    if (!out || !free_fn) return weft__tensor_error(WEFT_EINVAL, "NULL out or free_fn");
    *out = NULL;
    weft_status_t st = tensor_over_memory(dtype, ndim, shape, strides, data, free_fn, user, out);
    if (st != WEFT_OK) free_fn(user, data); /* taken on every other outcome */
    return st;
}

weft_tensor_t *weft__tensor_view_unchecked(weft_tensor_t *t, int ndim, const int64_t *shape,
                                           const int64_t *strides, char *data)
{
    weft_tensor_t *v = tensor_handle_new(t->buf, t->dtype, ndim, shape, strides, data);
    if (v) buffer_retain(t->buf);
    return v;
}

weft_status_t weft__tensor_view_check(const weft_tensor_t *base, int ndim, const int64_t *shape,
                                      const int64_t *strides, int64_t offset, char **data)
{
    if (!base || (ndim > 0 && !strides))
        return weft__tensor_error(WEFT_EINVAL, "NULL base or strides");
    size_t count = 0; // set by check_shape; initialized for -Wmaybe-uninitialized
    weft_status_t st = weft__tensor_check_shape(base->dtype, ndim, shape, &count);
    if (st != WEFT_OK) return st;
    int64_t isz = (int64_t)weft__dtype_size(base->dtype), lo = 0, hi = 0, off_b;
    bool empty;
    if (!geometry_extent(ndim, shape, strides, (size_t)isz, &lo, &hi, &empty) ||
        __builtin_mul_overflow(offset, isz, &off_b))
        return weft__tensor_error(WEFT_EOVERFLOW, "view geometry overflows");
    /* Compared as integers: forming an out-of-range pointer would be UB. */
    intptr_t start = (intptr_t)base->data + (intptr_t)off_b;
    if (!empty && (start + (intptr_t)(lo * isz) < (intptr_t)base->buf->lo ||
                   start + (intptr_t)((hi + 1) * isz) > (intptr_t)base->buf->hi))
        return weft__tensor_error(WEFT_ERANGE,
                                  "view at offset %lld reaches outside its base's buffer",
                                  (long long)offset);
    *data = empty ? base->data : base->data + off_b;
    return WEFT_OK;
}

weft_status_t weft_tensor_view(weft_tensor_t *base, int ndim, const int64_t *shape,
                               const int64_t *strides, int64_t offset, weft_tensor_t **out)
{
    if (!out) return weft__tensor_error(WEFT_EINVAL, "NULL out");
    *out = NULL;
    char *data = NULL;
    weft_status_t st = weft__tensor_view_check(base, ndim, shape, strides, offset, &data);
    if (st != WEFT_OK) return st;
    *out = weft__tensor_view_unchecked(base, ndim, shape, strides, data);
    if (!*out)
        return weft__tensor_error(WEFT_ENOMEM, "cannot allocate a tensor handle: out of memory");
    return WEFT_OK;
}

/* ---- recycled view handles ------------------------------------------------------ */

weft_tensor_t *weft__tensor_view_at(weft_tensor_t *raw, weft_tensor_t *base, int ndim,
                                    const int64_t *shape, const int64_t *strides, char *data)
{
    assert(!raw || (raw->ndim == ndim && !raw->buf));
    if (!raw) return weft__tensor_view_unchecked(base, ndim, shape, strides, data);
    buffer_retain(base->buf);
    return tensor_handle_init(raw, base->buf, base->dtype, ndim, shape, strides, data);
}

bool weft__tensor_handle_alone(const weft_tensor_t *t)
{
    /* acquire: every other holder's release of the handle happens before the
     * caller rewrites or detaches it; pairs with weft_tensor_release */
    return t && !weft__tensor_is_block_base(t) &&
           atomic_load_explicit(&t->refs, memory_order_acquire) == 1;
}

void weft__tensor_repoint(weft_tensor_t *t, weft_tensor_t *base, const int64_t *shape,
                          const int64_t *strides, char *data)
{
    assert(weft__tensor_handle_alone(t) && t != base);
    weft_buffer_t *old = t->buf;
    buffer_retain(base->buf); /* first: old may be base's buffer */
    t->buf = base->buf;
    t->data = data;
    t->dtype = base->dtype;
    if (t->ndim > 0) {
        memcpy(t->shape, shape, (size_t)t->ndim * sizeof *shape);
        memcpy(t->strides, strides, (size_t)t->ndim * sizeof *strides);
    }
    buffer_release(old);
}

weft_tensor_t *weft__tensor_detach(weft_tensor_t *t)
{
    if (!weft__tensor_handle_alone(t)) return NULL;
    weft_buffer_t *buf = t->buf;
    t->buf = NULL;
    t->data = NULL;
    buffer_release(buf);
    return t;
}

void weft__tensor_handle_free(weft_tensor_t *raw)
{
    assert(!raw || !raw->buf);
    free(raw);
}

weft_tensor_t *weft_tensor_retain(weft_tensor_t *t)
{
    /* relaxed: the caller holds a reference, so t stays alive; see buffer_retain */
    if (t) atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
    return t;
}

void weft_tensor_release(weft_tensor_t *t)
{
    if (!t) return;
    /* acq_rel: release publishes this holder's use of the handle; acquire (on
     * the decrement to zero) pairs with the other holders' releases before
     * the handle is freed. See buffer_release. */
    if (atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) != 1) return;
    weft_buffer_t *buf = t->buf;
    /* an owned tensor's base handle lives in its buffer's block: freed with it */
    if ((void *)t != buf->block) free(t);
    buffer_release(buf);
}

size_t weft_tensor_refcount(const weft_tensor_t *t)
{
    /* relaxed: a diagnostic snapshot */
    return t ? atomic_load_explicit(&t->refs, memory_order_relaxed) : 0;
}

size_t weft_tensor_buffer_refcount(const weft_tensor_t *t)
{
    /* relaxed: a diagnostic snapshot */
    return t ? atomic_load_explicit(&t->buf->refs, memory_order_relaxed) : 0;
}

bool weft_tensor_is_exclusive(const weft_tensor_t *t)
{
    /* acquire (both loads): a holder that just dropped its reference did its
     * element accesses before we overwrite them; pairs with the release
     * decrements in weft_tensor_release / buffer_release */
    return t && atomic_load_explicit(&t->refs, memory_order_acquire) == 1 &&
           atomic_load_explicit(&t->buf->refs, memory_order_acquire) == 1;
}

bool weft_tensor_shares_buffer(const weft_tensor_t *a, const weft_tensor_t *b)
{
    return a && b && a->buf == b->buf;
}

weft_dtype_t weft_tensor_dtype(const weft_tensor_t *t)
{
    return t ? t->dtype : WEFT_BOOL;
}

int weft_tensor_ndim(const weft_tensor_t *t)
{
    return t ? t->ndim : 0;
}

int64_t weft_tensor_dim(const weft_tensor_t *t, int i)
{
    return t && i >= 0 && i < t->ndim ? t->shape[i] : 0;
}

int64_t weft_tensor_stride(const weft_tensor_t *t, int i)
{
    return t && i >= 0 && i < t->ndim ? t->strides[i] : 0;
}

const int64_t *weft_tensor_shape(const weft_tensor_t *t)
{
    return t ? t->shape : NULL;
}

const int64_t *weft_tensor_strides(const weft_tensor_t *t)
{
    return t ? t->strides : NULL;
}

void *weft_tensor_data(const weft_tensor_t *t)
{
    return t ? t->data : NULL;
}

size_t weft_tensor_size(const weft_tensor_t *t)
{
    if (!t) return 0;
    size_t n = 1;
    for (int d = 0; d < t->ndim; d++) n *= (size_t)t->shape[d];
    return n;
}

bool weft_tensor_is_contiguous(const weft_tensor_t *t)
{
    if (!t) return false;
    int64_t s = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
        if (t->shape[d] == 0) return true;
        if (t->shape[d] != 1 && t->strides[d] != s) return false;
        s *= t->shape[d];
    }
    return true;
}

bool weft_tensor_same_shape(const weft_tensor_t *a, const weft_tensor_t *b)
{
    if (!a || !b || a->dtype != b->dtype || a->ndim != b->ndim) return false;
    return a->ndim == 0 || memcmp(a->shape, b->shape, (size_t)a->ndim * sizeof(int64_t)) == 0;
}

int weft_tensor_print_type(const weft_tensor_t *t, char *buf, size_t cap)
{
    if (!t) return snprintf(buf, cap, "(null)");
    return print_type(t->dtype, t->ndim, t->shape, buf, cap);
}
