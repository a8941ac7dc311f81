/* The one monotonic clock of every module (profiles, rewrite statistics, the
 * pool's idle accounting): nanoseconds of CLOCK_MONOTONIC. Not part of the API.
 *
 * A file that defines _POSIX_C_SOURCE (so <time.h> declares clock_gettime)
 * gets the C11 inline definition below and may inline it at its call sites
 * (the scheduler's hot paths do); every other file calls the one external
 * definition that base/clock.c emits from the same body. */
#ifndef WEFT_BASE_CLOCK_H
#define WEFT_BASE_CLOCK_H

#include <stdint.h>
#include <time.h>

#if defined(CLOCK_MONOTONIC)
inline uint64_t weft__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#else
uint64_t weft__now_ns(void);
#endif

/* Seconds elapsed since t0_ns (a weft__now_ns value). */
static inline double weft__seconds_since(uint64_t t0_ns)
{
    return (double)(weft__now_ns() - t0_ns) * 1e-9;
}

#endif /* WEFT_BASE_CLOCK_H */
