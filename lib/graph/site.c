/* Creation sites as text (graph/site.h): one rule for every message that
 * names where a variable or node was built. */
#include <stdio.h>

#include "graph/site.h"

const char *weft__site_str(char *buf, size_t cap, const char *file, int line)
{
    if (!file) file = "?";
    if (line) snprintf(buf, cap, "%s:%d", file, line);
    else snprintf(buf, cap, "%s", file);
    return buf;
}
