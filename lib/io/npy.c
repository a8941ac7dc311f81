/* NumPy .npy reader: the magic string, the version 1.0 / 2.0 header length,
 * the Python-dict header ('descr', 'fortran_order', 'shape') and the raw
 * little-endian C-order data. The header's length and the data's size are
 * checked against the bytes the file holds before anything is allocated for
 * them, so a short file cannot make the reader ask for gigabytes. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base_int.h"
#include "weft/npy.h"

static weft_status_t npy_err(char *msg, size_t cap, weft_status_t s, const char *path,
                             const char *fmt, ...) WEFT_PRINTF(5, 6);
static weft_status_t npy_err(char *msg, size_t cap, weft_status_t s, const char *path,
                             const char *fmt, ...)
{
    if (!msg || !cap) return s;
    char tail[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tail, sizeof(tail), fmt, ap);
    va_end(ap);
    snprintf(msg, cap, "%s: %s", path, tail);
    return s;
}

/* The value text following 'key': in the header dict, or NULL. */
static const char *dict_value(const char *hdr, const char *key)
{
    char pat[32];
    snprintf(pat, sizeof(pat), "'%s'", key);
    const char *p = strstr(hdr, pat);
    if (!p) return NULL;
    p += strlen(pat);
    while (*p == ' ') p++;
    if (*p != ':') return NULL;
    p++;
    while (*p == ' ') p++;
    return p;
}

/* NumPy's little-endian descr of each dtype (bool's byte order is "|";
 * "<b1" is also read; complex: pairs of floats, real part first). */
static const struct {
    const char *text;
    weft_dtype_t dt;
} npy_descrs[] = {{"|b1", WEFT_BOOL},   {"|i1", WEFT_INT8},     {"<i2", WEFT_INT16},
                  {"<i4", WEFT_INT32},  {"<i8", WEFT_INT64},    {"|u1", WEFT_UINT8},
                  {"<u2", WEFT_UINT16}, {"<u4", WEFT_UINT32},   {"<u8", WEFT_UINT64},
                  {"<f2", WEFT_FLOAT16}, {"<f4", WEFT_FLOAT32}, {"<f8", WEFT_FLOAT64},
                  {"<c8", WEFT_COMPLEX64}, {"<c16", WEFT_COMPLEX128},
                  {"<b1", WEFT_BOOL},   {"<i1", WEFT_INT8},     {"<u1", WEFT_UINT8}};

static bool parse_descr(const char *v, weft_dtype_t *dt)
{
    for (size_t i = 0; i < sizeof(npy_descrs) / sizeof(npy_descrs[0]); i++) {
        size_t n = strlen(npy_descrs[i].text);
        if (v[0] == '\'' && strncmp(v + 1, npy_descrs[i].text, n) == 0 && v[n + 1] == '\'') {
            *dt = npy_descrs[i].dt;
            return true;
        }
    }
    return false;
}

/* "(3, 4)", "(5,)", "()" -> ndim and lengths; -1 when malformed, -2 when too
 * many dimensions. */
static int parse_shape(const char *v, int64_t *shape)
{
    if (*v++ != '(') return -1;
    int n = 0;
    for (;;) {
        while (*v == ' ') v++;
        if (*v == ')') return n;
        char *e;
        long long x = strtoll(v, &e, 10);
        if (e == v || x < 0) return -1;
        if (n == WEFT_MAX_NDIM) return -2;
        shape[n++] = x;
        v = e;
        while (*v == ' ') v++;
        if (*v == ',')
            v++;
        else if (*v != ')')
            return -1;
    }
}

/* Bytes from f's position to its end; -1 when f cannot seek (not a
 * regular file). */
static long long bytes_left(FILE *f)
{
    long here = ftell(f), end;
    if (here < 0 || fseek(f, 0, SEEK_END) != 0) return -1;
    end = ftell(f);
    if (end < 0 || fseek(f, here, SEEK_SET) != 0) return -1;
    return (long long)end - here;
}

/* Checks that f holds at least `need` more bytes (`what`: "header", "data"). */
static weft_status_t check_left(FILE *f, const char *path, const char *what, size_t need,
                                char *msg, size_t cap)
{
    long long left = bytes_left(f);
    if (left < 0) return npy_err(msg, cap, WEFT_EIO, path, "cannot find the file's size");
    if ((unsigned long long)left < need)
        return npy_err(msg, cap, WEFT_EIO, path,
                       "truncated %s: %zu bytes declared, %lld left in the file", what, need,
                       left);
    return WEFT_OK;
}

typedef struct npy_header {
    weft_dtype_t dt;
    int ndim;
    int64_t shape[WEFT_MAX_NDIM];
} npy_header_t;

static weft_status_t read_header(FILE *f, const char *path, npy_header_t *h, char *msg, size_t cap)
{
    unsigned char pre[12];
    if (fread(pre, 1, 8, f) != 8 || memcmp(pre, "\x93NUMPY", 6) != 0)
        return npy_err(msg, cap, WEFT_EPARSE, path, "not an .npy file (bad magic string)");
    if ((pre[6] != 1 && pre[6] != 2) || pre[7] != 0)
        return npy_err(msg, cap, WEFT_ENOTIMPL, path, "format version %d.%d (1.0 and 2.0 read)",
                       pre[6], pre[7]);
    size_t lb = pre[6] == 1 ? 2 : 4;
    if (fread(pre + 8, 1, lb, f) != lb)
        return npy_err(msg, cap, WEFT_EIO, path, "truncated header");
    size_t hl = pre[8] | (size_t)pre[9] << 8;
    if (lb == 4) hl |= (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
    weft_status_t left = check_left(f, path, "header", hl, msg, cap);
    if (left != WEFT_OK) return left;
    char *hdr = malloc(hl + 1);
    if (!hdr) return npy_err(msg, cap, WEFT_ENOMEM, path, "out of memory");
    weft_status_t s = WEFT_OK;
    if (fread(hdr, 1, hl, f) != hl) s = npy_err(msg, cap, WEFT_EIO, path, "truncated header");
    hdr[hl] = '\0';
    const char *d = dict_value(hdr, "descr"), *fo = dict_value(hdr, "fortran_order"),
               *sh = dict_value(hdr, "shape");
    if (s == WEFT_OK && (!d || !fo || !sh))
        s = npy_err(msg, cap, WEFT_EPARSE, path, "header lacks descr, fortran_order or shape");
    if (s == WEFT_OK && !parse_descr(d, &h->dt))
        s = npy_err(msg, cap, WEFT_ENOTIMPL, path, "dtype %.12s (read: |b1 |i1 <i2 <i4 <i8 |u1 <u2 <u4 <u8 <f2 <f4 <f8 <c8 <c16)", d);
    if (s == WEFT_OK && strncmp(fo, "False", 5) != 0)
        s = npy_err(msg, cap, WEFT_ENOTIMPL, path, "Fortran-order array (only C order is read)");
    if (s == WEFT_OK && (h->ndim = parse_shape(sh, h->shape)) < 0)
        s = h->ndim == -2
                ? npy_err(msg, cap, WEFT_ENOTIMPL, path, "more than %d dimensions", WEFT_MAX_NDIM)
                : npy_err(msg, cap, WEFT_EPARSE, path, "malformed shape %.32s", sh);
    free(hdr);
    return s;
}

/* The data's byte count; WEFT_EOVERFLOW when the shape is too big (NumPy's
 * rule, base/base_int.h). */
static weft_status_t data_bytes(const npy_header_t *h, const char *path, size_t *n, char *msg,
                                size_t cap)
{
    int64_t isz = (int64_t)weft_dtype_size(h->dt), count;
    if (!weft__shape_fits(h->ndim, h->shape, isz, &count))
        return npy_err(msg, cap, WEFT_EOVERFLOW, path,
                       "the shape's byte size does not fit in int64");
    *n = (size_t)(count * isz);
    return WEFT_OK;
}

weft_status_t weft_npy_load(const char *path, weft_tensor_t **out, char *msg, size_t msg_cap)
{
    if (!path || !out) return WEFT_EINVAL;
    *out = NULL;
    if (msg && msg_cap) msg[0] = '\0';
    FILE *f = fopen(path, "rb");
    if (!f) return npy_err(msg, msg_cap, WEFT_EIO, path, "cannot open");
    npy_header_t h;
    weft_status_t s = read_header(f, path, &h, msg, msg_cap);
    weft_tensor_t *t = NULL;
    size_t n = 0;
    if (s == WEFT_OK) s = data_bytes(&h, path, &n, msg, msg_cap);
    if (s == WEFT_OK) s = check_left(f, path, "data", n, msg, msg_cap);
    if (s == WEFT_OK && (s = weft_tensor_empty(h.dt, h.ndim, h.shape, &t)) != WEFT_OK)
        npy_err(msg, msg_cap, s, path, "%s", weft_tensor_last_error());
    if (s == WEFT_OK && fread(weft_tensor_data(t), 1, n, f) != n)
        s = npy_err(msg, msg_cap, WEFT_EIO, path, "truncated data (%zu bytes expected)", n);
    fclose(f);
    if (s != WEFT_OK) {
        weft_tensor_release(t);
        return s;
    }
    *out = t;
    return WEFT_OK;
}

/* ---- writing ------------------------------------------------------------------ */

static const char *npy_descr(weft_dtype_t dt)
{
    for (size_t i = 0; i < sizeof(npy_descrs) / sizeof(npy_descrs[0]); i++)
        if (npy_descrs[i].dt == dt) return npy_descrs[i].text;
    return NULL;
}

/* The version 1.0 header, padded with spaces and a newline so the data
 * starts at a multiple of 64 bytes (the format's alignment). */
static size_t npy_header(const weft_tensor_t *t, char *h, size_t cap)
{
    /* magic, version 1.0, then the header length's two bytes (set below) */
    int n = snprintf(h, cap, "\x93NUMPY\x01%c%c%c{'descr': '%s', 'fortran_order': False, 'shape': (",
                     0, 0, 0, npy_descr(weft_tensor_dtype(t)));
    for (int d = 0; d < weft_tensor_ndim(t); d++)
        n += snprintf(h + n, cap - (size_t)n, "%lld%s", (long long)weft_tensor_shape(t)[d],
                      weft_tensor_ndim(t) == 1 || d + 1 < weft_tensor_ndim(t) ? ", " : "");
    n += snprintf(h + n, cap - (size_t)n, "), }");
    while ((n + 1) % 64) h[n++] = ' ';
    h[n++] = '\n';
    size_t hl = (size_t)n - 10;
    h[8] = (char)(hl & 0xff);
    h[9] = (char)(hl >> 8);
    return (size_t)n;
}

weft_status_t weft_npy_save(const char *path, weft_tensor_t *t, char *msg, size_t msg_cap)
{
    if (!path || !t) return WEFT_EINVAL;
    if (!npy_descr(weft_tensor_dtype(t)))
        return npy_err(msg, msg_cap, WEFT_ETYPE, path, "%s is not supported by the npy writer",
                       weft_dtype_name(weft_tensor_dtype(t)));
    weft_tensor_t *c = NULL;
    if (weft_tensor_contiguous(t, &c) != WEFT_OK)
        return npy_err(msg, msg_cap, WEFT_ENOMEM, path, "out of memory");
    char h[512];
    size_t hn = npy_header(c, h, sizeof h), bytes = weft_tensor_size(c) *
                                                    weft_dtype_size(weft_tensor_dtype(c));
    FILE *f = fopen(path, "wb");
    bool ok = f && fwrite(h, 1, hn, f) == hn &&
              (bytes == 0 || fwrite(weft_tensor_data(c), 1, bytes, f) == bytes);
    if (f && fclose(f) != 0) ok = false;
    weft_tensor_release(c);
    return ok ? WEFT_OK : npy_err(msg, msg_cap, WEFT_EIO, path, "cannot write the file");
}
