/* The status table's name and text lookups (include/weft/status.h). */
#include <stdarg.h>
#include <stdio.h>

#include "base/base_int.h"
#include "weft/status.h"

const char *weft_status_name(weft_status_t s)
{
    switch (s) {
#define WEFT_STATUS_NAME_(name, value, text) \
    case name: return #name;
        WEFT_STATUS_TABLE(WEFT_STATUS_NAME_)
#undef WEFT_STATUS_NAME_
    }
    return "WEFT_UNKNOWN";
}

const char *weft_status_str(weft_status_t s)
{
    switch (s) {
#define WEFT_STATUS_STR_(name, value, text) \
    case name: return text;
        WEFT_STATUS_TABLE(WEFT_STATUS_STR_)
#undef WEFT_STATUS_STR_
    }
    return "unknown status";
}

weft_status_t weft__error_to(char *buf, size_t cap, weft_status_t st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
    return st;
}
