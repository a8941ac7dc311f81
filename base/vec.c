/* The growable-array rule of base/vec.h: doubling capacity, zeroed new space,
 * every byte count overflow-checked. */
#include "base/vec.h"

#include <string.h>

bool weft__vec_grow(const weft_allocator_t *al, void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return true;
    if (!al) al = weft_allocator_default();
    size_t ncap = *cap ? *cap : 8;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2) {
            ncap = need; /* doubling would wrap: take exactly what is needed */
            break;
        }
        ncap *= 2;
    }
    size_t oldb, newb;
    if (!weft__mul_size(ncap, elem, &newb) || !weft__mul_size(*cap, elem, &oldb)) return false;
    void *np = weft__realloc(al, *p, oldb, newb);
    if (!np) return false;
    memset((char *)np + oldb, 0, newb - oldb);
    *p = np;
    *cap = ncap;
    return true;
}
