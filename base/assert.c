/* Invariant failure: print file:line:msg and abort. Only reached through
 * WEFT_ASSERT, i.e. on a bug in weft itself. */
#include <stdio.h>
#include <stdlib.h>

#include "base/base_int.h"

void weft__assert_fail(const char *file, int line, const char *msg)
{
    fprintf(stderr, "weft: internal invariant failed at %s:%d: %s\n", file, line, msg);
    abort();
}
