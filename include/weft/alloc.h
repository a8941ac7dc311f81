/* Allocator hook. Every weft object that owns memory takes an optional
 * allocator at creation; NULL means the C library's malloc/realloc/free.
 * There is no hidden global allocator. */
#ifndef WEFT_ALLOC_H
#define WEFT_ALLOC_H

#include <stddef.h>

#include "weft/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_allocator {
    /* realloc semantics: (NULL, 0 -> n) allocates, (p, n -> 0) frees and
     * returns NULL, otherwise resizes. Must be thread-safe if the objects
     * using it are used from several threads. */
    void *(*resize)(void *user, void *ptr, size_t old_size, size_t new_size);
    void *user;
} weft_allocator_t;

/* The default allocator (malloc/realloc/free). Returns a static object. */
WEFT_API const weft_allocator_t *weft_allocator_default(void);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_ALLOC_H */
