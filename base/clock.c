/* The external definition of weft__now_ns (base/clock.h), for the files that
 * do not see POSIX clocks and so cannot inline it. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "base/clock.h"

extern inline uint64_t weft__now_ns(void);
