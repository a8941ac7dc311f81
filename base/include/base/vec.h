/* Growable arrays and overflow-checked array sizes: the one growth rule every
 * module uses (capacity starts at 8 and doubles), through a weft_allocator_t.
 * The objects weft/alloc.h lists as using the C library grow with a NULL
 * allocator and free with free(). Not part of the API. */
#ifndef WEFT_BASE_VEC_H
#define WEFT_BASE_VEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

#include "base/base_int.h"

/* Ensures the array *p (elements of elem bytes, capacity *cap elements) holds
 * at least need elements; the new space is zeroed. The capacity doubles from 8
 * until it covers need, and *p is resized through al (NULL: the C library's
 * realloc) from *cap * elem bytes to the new capacity's. Returns false, with
 * *p and *cap unchanged, on OOM or when the byte count does not fit a size_t
 * (callers report WEFT_ENOMEM). */
bool weft__vec_grow(const weft_allocator_t *al, void **p, size_t *cap, size_t need, size_t elem);
/* As weft__vec_grow, but the new space is left uninitialized: for arrays
 * the caller fills in order right away (a DAG's edge and name tables, built
 * a million entries at a time, where zeroing was an extra pass over them). */
bool weft__vec_reserve(const weft_allocator_t *al, void **p, size_t *cap, size_t need,
                       size_t elem);

/* n elements of elem bytes through al; NULL on OOM or when n * elem
 * overflows. Free with weft__free(al, p, n * elem). */
static inline void *weft__vec_alloc(const weft_allocator_t *al, size_t n, size_t elem)
{
    size_t bytes;
    return weft__mul_size(n, elem, &bytes) ? weft__alloc(al, bytes) : NULL;
}

/* n elements of elem bytes from the C library (malloc, uninitialized); NULL on
 * OOM or when n * elem overflows. Free with free(). calloc checks its product
 * itself. */
static inline void *weft__vec_malloc(size_t n, size_t elem)
{
    size_t bytes;
    return weft__mul_size(n, elem, &bytes) ? malloc(bytes) : NULL;
}

#endif /* WEFT_BASE_VEC_H */
