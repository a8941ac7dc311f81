/* The default allocator: the C library's realloc/free behind weft_allocator_t. */
#include <stdlib.h>

#include "weft/alloc.h"

static void *default_realloc(void *user, void *ptr, size_t old_size, size_t new_size)
{
    (void)user;
    (void)old_size;
    if (new_size == 0) {
        free(ptr);
        return NULL;
    }
    return realloc(ptr, new_size);
}

static const weft_allocator_t default_allocator = {default_realloc, NULL};

const weft_allocator_t *weft_allocator_default(void)
{
    return &default_allocator;
}
