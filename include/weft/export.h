/* WEFT_API: the one place export attributes appear. libweft is built with
 * -fvisibility=hidden; only declarations marked WEFT_API are exported. */
#ifndef WEFT_EXPORT_H
#define WEFT_EXPORT_H

#if defined(WEFT_BUILDING) && defined(__GNUC__)
#define WEFT_API __attribute__((visibility("default")))
#elif defined(__GNUC__)
#define WEFT_API __attribute__((visibility("default")))
#else
#define WEFT_API
#endif

/* printf-style format checking on functions that take a format string. */
#if defined(__GNUC__)
#define WEFT_PRINTF(fmt_idx, args_idx) __attribute__((format(printf, fmt_idx, args_idx)))
#else
#define WEFT_PRINTF(fmt_idx, args_idx)
#endif

#endif /* WEFT_EXPORT_H */
