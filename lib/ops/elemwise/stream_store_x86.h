/* Non-temporal stores of whole 64-byte lines on x86-64 (SSE2, baseline on
 * every x86-64 processor). Selected by lib/ops/CMakeLists.txt as
 * WEFT_STREAM_STORE_HEADER; see elemwise_kernels.c for why and when. */
#ifndef WEFT_STREAM_STORE_X86_H
#define WEFT_STREAM_STORE_X86_H

#include <emmintrin.h>

/* Streaming pays off only where it is real. */
#define WEFT__STREAM_STORES 1

/* Writes the 64 bytes at src (64-aligned) to dst (64-aligned) without first
 * reading dst's line into the cache. */
static inline void weft__stream_line(void *dst, const void *src)
{
    const __m128i *s = (const __m128i *)src;
    __m128i *d = (__m128i *)dst;
    _mm_stream_si128(d + 0, _mm_load_si128(s + 0));
    _mm_stream_si128(d + 1, _mm_load_si128(s + 1));
    _mm_stream_si128(d + 2, _mm_load_si128(s + 2));
    _mm_stream_si128(d + 3, _mm_load_si128(s + 3));
}

/* Streaming stores are weakly ordered: fence them before the node completes
 * (the scheduler's release of the node's completion then publishes them). */
static inline void weft__stream_fence(void)
{
    _mm_sfence();
}

#endif /* WEFT_STREAM_STORE_X86_H */
