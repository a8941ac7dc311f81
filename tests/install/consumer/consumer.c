/* A program built against the installed weft package. */
#include <stdio.h>
#include <string.h>

#include <weft/weft.h>

int main(void)
{
    if (strcmp(weft_status_name(WEFT_EINVAL), "WEFT_EINVAL") != 0) return 1;
    puts("consumer ok");
    return 0;
}
