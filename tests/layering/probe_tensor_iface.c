/* Includes lib/tensor's interface header: builds only in a module that
 * declares weft_tensor (tests/layering). */
#include "tensor/kernel_int.h"

int weft_probe_tensor_iface(void);
int weft_probe_tensor_iface(void)
{
    return (int)sizeof(weft_kernel_ctx_t);
}
