/* A program built against the installed weft package. */
#include <stdio.h>
#include <string.h>

#include <weft/weft.h>

int main(void)
{
    if (strcmp(weft_status_name(WEFT_EINVAL), "WEFT_EINVAL") != 0) return 1;
    /* The built-in classes are registered at load, static link included
     * (lib/catalog): a graph file naming them can be loaded. */
    if (!weft_op_class_find("Add") || !weft_op_class_find("OpFromGraph")) return 2;
    puts("consumer ok");
    return 0;
}
