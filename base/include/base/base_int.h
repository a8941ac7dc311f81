/* Internal helpers shared by every module: invariant assertions, cache-line
 * alignment, branch hints and allocator shorthands. Not part of the API. */
#ifndef WEFT_BASE_INT_H
#define WEFT_BASE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/alloc.h"
#include "weft/export.h"
#include "weft/status.h"

#define WEFT_CACHELINE 64
#define WEFT_CACHELINE_ALIGNED _Alignas(WEFT_CACHELINE)

#define WEFT_LIKELY(x) __builtin_expect(!!(x), 1)
#define WEFT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define WEFT_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* WEFT_ASSERT is for weft's own invariants only (a failure is a bug in weft),
 * never for checking user input. Module objects are shared by libweft and the
 * tests, so it always aborts with file:line:msg (the tests never provoke it:
 * every user-reachable failure is a status). */
void weft__assert_fail(const char *file, int line, const char *msg) __attribute__((noreturn));
#define WEFT_ASSERT(cond, msg)                                                  \
    do {                                                                        \
        if (WEFT_UNLIKELY(!(cond))) weft__assert_fail(__FILE__, __LINE__, msg); \
    } while (0)

/* Formats an error message into buf (a module's thread-local "last error"
 * text, read back by its *_last_error function) and returns st. */
weft_status_t weft__error_to(char *buf, size_t cap, weft_status_t st, const char *fmt, ...)
    WEFT_PRINTF(4, 5);

/* Allocation through a weft_allocator_t (never NULL here: callers resolve the
 * default at object creation). */
static inline void *weft__alloc(const weft_allocator_t *a, size_t n)
{
    return a->resize(a->user, NULL, 0, n);
}
static inline void *weft__realloc(const weft_allocator_t *a, void *p, size_t old_n, size_t n)
{
    return a->resize(a->user, p, old_n, n);
}
static inline void weft__free(const weft_allocator_t *a, void *p, size_t n)
{
    if (p) a->resize(a->user, p, n, 0);
}

/* Overflow-checked size arithmetic: returns 0 (false) on overflow. */
static inline int weft__mul_size(size_t a, size_t b, size_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}

/* NumPy's size rule for a shape: the product of its positive lengths times
 * the item size isz must fit in int64, even when another length is 0
 * (NumPy refuses shape (2^40, 0, 2^40): "array is too big"). Negative
 * lengths (unknown in a static type, -1 in a reshape target) are skipped.
 * Returns false when the shape is too big; else *count is the element count
 * of the lengths not skipped (0 when one is 0). */
static inline bool weft__shape_fits(int ndim, const int64_t *shape, int64_t isz, int64_t *count)
{
    int64_t n = 1, bytes;
    bool empty = false;
    for (int d = 0; d < ndim; d++) {
        empty |= shape[d] == 0;
        if (shape[d] > 0 && __builtin_mul_overflow(n, shape[d], &n)) return false;
    }
    if (__builtin_mul_overflow(n, isz, &bytes)) return false;
    *count = empty ? 0 : n;
    return true;
}

#endif /* WEFT_BASE_INT_H */
