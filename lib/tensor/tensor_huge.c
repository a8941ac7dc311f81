/* Transparent huge pages for large tensor blocks, as NumPy asks for its
 * arrays of 4 MiB or more (its hugepage setting, on by default on Linux):
 * with the kernel's THP mode "madvise", only advised memory gets 2 MiB
 * pages, and a large copy or elementwise pass over 4 KiB pages spends time
 * in TLB misses that NumPy's does not (docs/performance-notes.md). */
#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE */
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tensor/tensor_int.h"

void weft__tensor_advise_huge(void *block, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    if (bytes < WEFT__TENSOR_HUGE_MIN) {
        return;
    }
    long ps = sysconf(_SC_PAGESIZE);
    if (ps <= 0) {
        return;
    }
    /* madvise takes whole pages: the pages inside the block */
    uintptr_t lo = ((uintptr_t)block + (uintptr_t)ps - 1) / (uintptr_t)ps * (uintptr_t)ps;
    uintptr_t hi = ((uintptr_t)block + bytes) / (uintptr_t)ps * (uintptr_t)ps;
    if (hi > lo) {
        (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE); /* advice only: failure is harmless */
    }
#else
    (void)block;
    (void)bytes;
#endif
}
