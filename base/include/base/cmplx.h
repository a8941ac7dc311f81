/* <complex.h> with C11's CMPLX / CMPLXF everywhere weft is built. glibc
 * defines them only for compilers that claim GCC >= 4.7 (clang claims 4.2),
 * so with clang they are missing; clang has the __builtin_complex that
 * glibc's definition uses (it keeps a NaN or infinite part as given, which
 * x + I * y does not). Not part of the API. */
#ifndef WEFT_BASE_CMPLX_H
#define WEFT_BASE_CMPLX_H

#include <complex.h>

#ifndef CMPLX
#define CMPLX(x, y) __builtin_complex((double)(x), (double)(y))
#endif
#ifndef CMPLXF
#define CMPLXF(x, y) __builtin_complex((float)(x), (float)(y))
#endif

#endif /* WEFT_BASE_CMPLX_H */
