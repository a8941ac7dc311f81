/* Elementwise row-kernel generators (private to the kernel files
 * elemwise_kernels.c, elemwise_int_kernels.c and elemwise_math_kernels.c):
 * UNARY_KERNEL and BINARY_KERNEL define one row kernel for an expression of x (and y), with
 * the fast paths and streaming stores described in elemwise_kernels.c's
 * comment, compiled in ISA clones (KERNEL_CLONES). A file including this
 * must be built with -O3 -ffp-contract=off and WEFT_STREAM_STORE_HEADER
 * defined (lib/ops/CMakeLists.txt). */
#ifndef WEFT_OPS_EW_KERNEL_GEN_H
#define WEFT_OPS_EW_KERNEL_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "base/dtype_list.h"
#include "ops_int.h"
#include "tensor/tensor_int.h"
#include WEFT_STREAM_STORE_HEADER

typedef unsigned char bool_el;

/* Runtime ISA dispatch: each kernel is also compiled for x86-64-v3 (AVX2
 * with FMA, which every AVX2 processor has) and x86-64-v4 (AVX-512), and the
 * loader picks the widest the processor has (an ifunc per kernel, resolved
 * once at load). The baseline x86-64 build has only SSE2's 2-double vectors:
 * a cache-resident 64x256 Composite (i0*(1-i2^2)) node took 36 us with
 * them, 30 us with AVX-512 (a hand-fused loop: 8). Every kind computes one
 * IEEE operation per element (or calls libm, or fma(), exactly rounded in
 * every clone: ew_vmath.h), so the clones give bit-identical results; the
 * files are built with -ffp-contract=off so no clone fuses a multiply-add
 * itself. Needs glibc's ifunc. Not in sanitizer builds (WEFT_SANITIZED, set
 * by CMake for GCC and clang alike): their instrumented resolvers would run
 * before the runtime is set up (every TSan test crashed at load). */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__GLIBC__) && defined(__has_attribute)
#if __has_attribute(target_clones) && !defined(WEFT_SANITIZED)
#define KERNEL_CLONES \
    __attribute__((target_clones("default", "arch=x86-64-v3", "arch=x86-64-v4")))
#endif
#endif
#ifndef KERNEL_CLONES
#define KERNEL_CLONES
#endif

/* Rows at least this large stream their output: half the 32 MB L3 of the
 * machines measured (docs/performance-notes.md §2), so smaller results stay
 * cache-resident for the node that reads them next. */
#define STREAM_MIN_BYTES ((size_t)16 << 20)
#define LINE(TO) (64 / sizeof(TO))
#define STREAM_OK(arg, n, TO) (WEFT__STREAM_STORES && (arg) && (n) * sizeof(TO) >= STREAM_MIN_BYTES)

/* Software prefetch of the inputs EW_PREFETCH_LINES lines ahead, for
 * kernels whose arithmetic per element is long enough that the hardware
 * prefetcher falls behind (from memory, 10^7 float64 through perform here:
 * Expm1 24 -> 14..17 ms, Arctan2 50 -> 21..23 ms). A file sets EW_PREFETCH_LINES
 * before including this header; 0 (the default) emits nothing. */
#ifndef EW_PREFETCH_LINES
#define EW_PREFETCH_LINES 0
#endif
/* (the address is formed as an integer: it may lie past the operand's end,
 * where a pointer may not point; a prefetch never faults) */
#define EW_PREFETCH(p, i)                                                        \
    do {                                                                         \
        if (EW_PREFETCH_LINES)                                                   \
            __builtin_prefetch(                                                  \
                (const void *)((uintptr_t)((p) + (i)) + EW_PREFETCH_LINES * 64)); \
    } while (0)
#define PREFETCH_A(i) EW_PREFETCH(a, i)
#define PREFETCH_AB(i) \
    EW_PREFETCH(a, i); \
    EW_PREFETCH(b, i)

/* With EW_PREFETCH_LINES set, the plain contiguous loop (an in-place or
 * cache-sized result, not streamed) also goes a line at a time with the
 * prefetch; otherwise this is nothing (a constant condition). The inner
 * loop counts 0..LINE: GCC then sees a constant trip count and emits one
 * straight vector body (with e_ < i + LINE it kept a peeled scalar
 * fallback per line and reloaded the constants: Expm1 10% slower). */
#define PREFETCHED_LINES(T, TO, LOAD, PREFETCH, EXPR)              \
    if (EW_PREFETCH_LINES)                                         \
        for (; i + LINE(TO) <= n; i += LINE(TO)) {                 \
            PREFETCH(i);                                           \
            WEFT_IVDEP for (size_t j_ = 0; j_ < LINE(TO); j_++)    \
            {                                                      \
                size_t e_ = i + j_;                                \
                LOAD(T, e_);                                       \
                o[e_] = (TO)(EXPR);                                \
            }                                                      \
        }

/* The streaming part of a contiguous loop (see the file comment): aligns o
 * with plain stores, then streams whole lines of results computed as
 * t_[j_] = EXPR for element i + j_ (LOAD declares the operands x, y there),
 * and leaves i at the first element of the tail, which plain stores finish. */
#define STREAM_LINES(T, TO, LOAD, PREFETCH, EXPR)                          \
    for (; i < n && ((uintptr_t)(o + i) & 63); i++) {                      \
        size_t e_ = i;                                                     \
        LOAD(T, e_);                                                       \
        o[i] = (TO)(EXPR);                                                 \
    }                                                                      \
    for (; i + LINE(TO) <= n; i += LINE(TO)) {                             \
        _Alignas(64) TO t_[LINE(TO)];                                      \
        PREFETCH(i);                                                       \
        for (size_t j_ = 0; j_ < LINE(TO); j_++) {                         \
            size_t e_ = i + j_;                                            \
            LOAD(T, e_);                                                   \
            t_[j_] = (TO)(EXPR);                                           \
        }                                                                  \
        weft__stream_line(o + i, t_);                                      \
    }                                                                      \
    weft__stream_fence();

#define LOAD_A(T, e) T x = a[e]
#define LOAD_AB(T, e) \
    T x = a[e];       \
    T y = b[e]

/* ---- generators ---------------------------------------------------------------- */

#define UNARY_KERNEL(name, T, TO, EXPR)                                     \
    KERNEL_CLONES static void name(size_t n, char *const *p, const int64_t *s, void *arg) \
    {                                                                       \
        TO *o = (TO *)p[0];                                                 \
        const T *a = (const T *)p[1];                                       \
        if (s[0] == 1 && s[1] == 1) {                                       \
            size_t i = 0;                                                   \
            if (STREAM_OK(arg, n, TO)) {                                    \
                STREAM_LINES(T, TO, LOAD_A, PREFETCH_A, EXPR)               \
            }                                                               \
            PREFETCHED_LINES(T, TO, LOAD_A, PREFETCH_A, EXPR)               \
            WEFT_IVDEP for (; i < n; i++)                                   \
            {                                                               \
                T x = a[i];                                                 \
                o[i] = (TO)(EXPR);                                          \
            }                                                               \
            return;                                                         \
        }                                                                   \
        for (size_t i = 0; i < n; i++) {                                    \
            T x = a[(int64_t)i * s[1]];                                     \
            o[(int64_t)i * s[0]] = (TO)(EXPR);                              \
        }                                                                   \
    }

#define BINARY_KERNEL(name, T, TO, EXPR)                                    \
    KERNEL_CLONES static void name(size_t n, char *const *p, const int64_t *s, void *arg) \
    {                                                                       \
        TO *o = (TO *)p[0];                                                 \
        const T *a = (const T *)p[1], *b = (const T *)p[2];                 \
        if (s[0] == 1 && s[1] == 1 && s[2] == 1) {                          \
            size_t i = 0;                                                   \
            if (STREAM_OK(arg, n, TO)) {                                    \
                STREAM_LINES(T, TO, LOAD_AB, PREFETCH_AB, EXPR)             \
            }                                                               \
            PREFETCHED_LINES(T, TO, LOAD_AB, PREFETCH_AB, EXPR)             \
            WEFT_IVDEP for (; i < n; i++)                                   \
            {                                                               \
                T x = a[i], y = b[i];                                       \
                o[i] = (TO)(EXPR);                                          \
            }                                                               \
            return;                                                         \
        }                                                                   \
        if (s[0] == 1 && s[1] == 1 && s[2] == 0) {                          \
            const T y = b[0];                                               \
            WEFT_IVDEP for (size_t i = 0; i < n; i++)                       \
            {                                                               \
                T x = a[i];                                                 \
                o[i] = (TO)(EXPR);                                          \
            }                                                               \
            return;                                                         \
        }                                                                   \
        if (s[0] == 1 && s[1] == 0 && s[2] == 1) {                          \
            const T x = a[0];                                               \
            WEFT_IVDEP for (size_t i = 0; i < n; i++)                       \
            {                                                               \
                T y = b[i];                                                 \
                o[i] = (TO)(EXPR);                                          \
            }                                                               \
            return;                                                         \
        }                                                                   \
        for (size_t i = 0; i < n; i++) {                                    \
            T x = a[(int64_t)i * s[1]], y = b[(int64_t)i * s[2]];           \
            o[(int64_t)i * s[0]] = (TO)(EXPR);                              \
        }                                                                   \
    }

/* c ? a : b, c bool */
#define SWITCH_KERNEL(name, T)                                                      \
    KERNEL_CLONES static void name(size_t n, char *const *p, const int64_t *s, void *arg)         \
    {                                                                               \
        (void)arg;                                                                  \
        T *o = (T *)p[0];                                                           \
        const bool_el *c = (const bool_el *)p[1];                                   \
        const T *a = (const T *)p[2], *b = (const T *)p[3];                         \
        if (s[0] == 1 && s[1] == 1 && s[2] == 1 && s[3] == 1) {                     \
            WEFT_IVDEP for (size_t i = 0; i < n; i++) o[i] = c[i] ? a[i] : b[i];    \
            return;                                                                 \
        }                                                                           \
        for (size_t i = 0; i < n; i++)                                              \
            o[(int64_t)i * s[0]] =                                                  \
                c[(int64_t)i * s[1]] ? a[(int64_t)i * s[2]] : b[(int64_t)i * s[3]]; \
    }

/* float16: the float32 kernel through float32 scratch (weft__half_rows,
 * docs/dtypes.md §4). */
#define HALF_UNARY(name)                                                           \
    static void name##_f16(size_t n, char *const *p, const int64_t *s, void *arg)  \
    {                                                                              \
        weft__half_rows(n, p, s, arg, 2, 3u, name##_f32);                          \
    }
#define HALF_BINARY_VIA(name, f32)                                                 \
    static void name##_f16(size_t n, char *const *p, const int64_t *s, void *arg)  \
    {                                                                              \
        weft__half_rows(n, p, s, arg, 3, 7u, f32);                                 \
    }
#define HALF_BINARY(name) HALF_BINARY_VIA(name, name##_f32)

/* float-only kinds: name_f32 / name_f64, and name_f16 through float32 */
#define FLOAT_UNARY(name, EF, ED)                \
    UNARY_KERNEL(name##_f32, float, float, EF)   \
    UNARY_KERNEL(name##_f64, double, double, ED) \
    HALF_UNARY(name)
#define FLOAT_BINARY(name, EF, ED)                \
    BINARY_KERNEL(name##_f32, float, float, EF)   \
    BINARY_KERNEL(name##_f64, double, double, ED) \
    HALF_BINARY(name)

/* dispatch-table cells over the float list (base/dtype_list.h) and float16;
 * ROW_F: a float-only kind's row */
#define CELL_F(A, B, T, sn, D) [D] = A##_##sn,
#define CELLS_F(k) WEFT__FLOAT_DTYPES(CELL_F, k, ~)[WEFT_FLOAT16] = k##_f16,
#define ROW_F(k) {CELLS_F(k)}

#endif /* WEFT_OPS_EW_KERNEL_GEN_H */
