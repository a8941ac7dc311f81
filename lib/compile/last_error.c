/* Per-thread error text of compiled functions: weft_function_last_error.
 * Concurrent calls on other threads never clobber a thread's text; the text
 * is tagged with the function it concerns (serial 0: compile). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "compile_int.h"

static _Thread_local struct {
    uint64_t serial; /* function serial, 0 for compile */
    char msg[2048];
} tls_err;

/* An out-of-memory failure says so, whatever step reported it: the text of
 * WEFT_ENOMEM is appended to a message that does not already say it. */
static void say_nomem(char *msg, size_t cap)
{
    if (strstr(msg, "out of memory")) return;
    size_t n = strlen(msg);
    bool sep = n > 0 && !(n >= 2 && msg[n - 2] == ':' && msg[n - 1] == ' ');
    snprintf(msg + n, cap - n, "%s%s", sep ? ": " : "", weft_status_str(WEFT_ENOMEM));
}

weft_status_t weft__fn_error(const weft_function_t *f, weft_status_t st, const char *fmt, ...)
{
    tls_err.serial = f ? f->serial : 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tls_err.msg, sizeof tls_err.msg, fmt, ap);
    va_end(ap);
    if (st == WEFT_ENOMEM) say_nomem(tls_err.msg, sizeof tls_err.msg);
    return st;
}

void weft__fn_clear_error(const weft_function_t *f)
{
    tls_err.serial = f ? f->serial : 0;
    tls_err.msg[0] = '\0';
}

const char *weft_function_last_error(const weft_function_t *f)
{
    uint64_t want = f ? f->serial : 0;
    return tls_err.serial == want ? tls_err.msg : "";
}
