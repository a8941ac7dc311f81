/* The growable-array rule of base/vec.h: doubling capacity, zeroed new space,
 * every byte count overflow-checked. */
#include "base/vec.h"

#include <string.h>

/* The capacity that covers need: doubling from *cap (8 when empty), or
 * exactly need where doubling would wrap. */
static size_t grown_capacity(size_t cap, size_t need)
{
    size_t ncap = cap ? cap : 8;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2) return need;
        ncap *= 2;
    }
    return ncap;
}

bool weft__vec_reserve(const weft_allocator_t *al, void **p, size_t *cap, size_t need,
                       size_t elem)
{
    if (need <= *cap) return true;
    if (!al) al = weft_allocator_default();
    size_t ncap = grown_capacity(*cap, need), oldb, newb;
    if (!weft__mul_size(ncap, elem, &newb) || !weft__mul_size(*cap, elem, &oldb)) return false;
    void *np = weft__realloc(al, *p, oldb, newb);
    if (!np) return false;
    *p = np;
    *cap = ncap;
    return true;
}

bool weft__vec_grow(const weft_allocator_t *al, void **p, size_t *cap, size_t need, size_t elem)
{
    size_t old = *cap;
    if (!weft__vec_reserve(al, p, cap, need, elem)) return false;
    if (*cap > old) /* sizes were checked by reserve */
        memset((char *)*p + old * elem, 0, (*cap - old) * elem);
    return true;
}
