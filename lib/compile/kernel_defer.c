/* weft_kernel_defer: a node of a compiled function whose completion comes
 * from outside its perform (weft/kernel.h), through the scheduler's deferred
 * nodes (weft/sched.h); the function's runs are deferrable when it was
 * compiled with deferrable_nodes. */
#include "compile_int.h"
#include "tensor/kernel_int.h"

weft_status_t weft_kernel_defer(weft_kernel_ctx_t *ctx, weft_dag_deferred_t *out)
{
    if (!ctx || !out) return ctx ? weft_kernel_error(ctx, WEFT_EINVAL, "defer: out is NULL")
                                 : WEFT_EINVAL;
    if (!ctx->task)
        return weft_kernel_error(ctx, WEFT_ESTATE, "defer: not a compiled function's call");
    weft_status_t st = weft_dag_run_defer(ctx->task, out);
    if (st != WEFT_OK)
        return weft_kernel_error(ctx, st, "defer: the function was not compiled with "
                                          "deferrable_nodes");
    return WEFT_OK;
}
