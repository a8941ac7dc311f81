/* Includes a private header of lib/destroy: builds in no other module, even
 * one that declares weft_destroy (tests/layering). */
#include "destroy_int.h"

int weft_probe_private(void);
int weft_probe_private(void)
{
    return 0;
}
