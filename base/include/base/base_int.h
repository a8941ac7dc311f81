/* Internal helpers shared by every module: invariant assertions, cache-line
 * alignment, branch hints and allocator shorthands. Not part of the API. */
#ifndef WEFT_BASE_INT_H
#define WEFT_BASE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "weft/alloc.h"
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

#endif /* WEFT_BASE_INT_H */
