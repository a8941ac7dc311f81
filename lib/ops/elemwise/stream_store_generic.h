/* Line stores for processors without a streaming-store path written for them:
 * WEFT__STREAM_STORES is 0, so the kernels never take their streaming branch
 * (see elemwise_kernels.c); the functions exist so the code compiles. */
#ifndef WEFT_STREAM_STORE_GENERIC_H
#define WEFT_STREAM_STORE_GENERIC_H

#include <string.h>

#define WEFT__STREAM_STORES 0

static inline void weft__stream_line(void *dst, const void *src)
{
    memcpy(dst, src, 64);
}

static inline void weft__stream_fence(void)
{
}

#endif /* WEFT_STREAM_STORE_GENERIC_H */
