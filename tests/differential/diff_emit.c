/* The differential runner's output stream: growing buffers, JSON strings,
 * array records and the framing ("#case {header}\n" + payload bytes) that
 * check_numpy.py reads. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"

static bool buf_reserve(diff_buf_t *b, size_t extra)
{
    if (b->failed) return false;
    if (b->len + extra + 1 <= b->cap) return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1) cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) {
        b->failed = true;
        return false;
    }
    b->data = p;
    b->cap = cap;
    return true;
}

void diff_buf_append(diff_buf_t *b, const void *data, size_t n)
{
    if (!buf_reserve(b, n)) return;
    if (n) memcpy(b->data + b->len, data, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void diff_buf_printf(diff_buf_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !buf_reserve(b, (size_t)n)) return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void diff_buf_json_string(diff_buf_t *b, const char *s)
{
    diff_buf_append(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\') diff_buf_printf(b, "\\%c", *p);
        else if (*p < 0x20 || *p >= 0x7f) diff_buf_printf(b, "\\u%04x", *p);
        else diff_buf_append(b, p, 1);
    }
    diff_buf_append(b, "\"", 1);
}

void diff_buf_free(diff_buf_t *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

void diff_record_array(diff_record_t *r, weft_dtype_t dt, int nd, const int64_t *shape,
                       const void *data)
{
    size_t n = 1;
    diff_buf_printf(&r->head, "\"dtype\":\"%s\",\"shape\":[", weft_dtype_name(dt));
    for (int d = 0; d < nd; d++) {
        diff_buf_printf(&r->head, "%s%lld", d ? "," : "", (long long)shape[d]);
        n *= (size_t)shape[d];
    }
    size_t bytes = n * weft_dtype_size(dt);
    diff_buf_printf(&r->head, "],\"off\":%zu,\"nbytes\":%zu", r->payload.len, bytes);
    diff_buf_append(&r->payload, data, bytes);
}

bool diff_record_flush(diff_record_t *r, FILE *out)
{
    diff_buf_printf(&r->head, ",\"payload\":%zu}", r->payload.len);
    if (r->head.failed || r->payload.failed) return false;
    bool ok = fputs("#case ", out) >= 0 &&
              fwrite(r->head.data, 1, r->head.len, out) == r->head.len && fputc('\n', out) != EOF &&
              fwrite(r->payload.data ? r->payload.data : "", 1, r->payload.len, out) ==
                  r->payload.len;
    r->head.len = r->payload.len = 0;
    return ok;
}

void diff_record_free(diff_record_t *r)
{
    diff_buf_free(&r->head);
    diff_buf_free(&r->payload);
}
