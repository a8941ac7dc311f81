/* Read-only queries on a compiled function: shape, pool, statistics and the
 * printed program. */
#include <stdio.h>

#include "compile_int.h"

size_t weft_function_n_inputs(const weft_function_t *f)
{
    return !f ? 0 : f->shared ? weft__fn_shared_n_inputs(f->shared) : f->n_in;
}

size_t weft_function_n_outputs(const weft_function_t *f)
{
    return !f ? 0 : f->shared ? weft__fn_shared_n_outputs(f->shared) : f->n_out;
}

weft_var_t *weft_function_input(const weft_function_t *f, size_t k)
{
    return k < weft_function_n_inputs(f) ? f->in_vars[k] : NULL;
}

weft_var_t *weft_function_output(const weft_function_t *f, size_t k)
{
    return k < weft_function_n_outputs(f) ? f->out_vars[k] : NULL;
}

size_t weft_function_n_nodes(const weft_function_t *f)
{
    return f ? f->n_nodes : 0;
}

weft_pool_t *weft_function_pool(const weft_function_t *f)
{
    return f ? f->pool : NULL;
}

weft_status_t weft_function_print(const weft_function_t *f, FILE *out)
{
    if (!f || !out) return WEFT_EINVAL;
    char buf[512];
    for (uint32_t i = 0; i < f->n_nodes; i++) {
        weft_apply_print(f->nodes[i].apply, buf, sizeof buf);
        fprintf(out, "%u: %s\n", i, buf);
    }
    return ferror(out) ? WEFT_EIO : WEFT_OK;
}

weft_status_t weft_function_stats(const weft_function_t *f, weft_function_stats_t *out)
{
    if (!f || !out || out->size < sizeof *out) return WEFT_EINVAL;
    weft_function_t *mf = (weft_function_t *)(uintptr_t)f; /* the locks only */
    pthread_mutex_lock(&mf->prof_lock);
    out->calls = f->calls;
    out->peak_live_buffers = f->peak_live_buffers;
    pthread_mutex_unlock(&mf->prof_lock);
    pthread_mutex_lock(&mf->bufpool.lock);
    out->buffers_allocated = f->bufpool.allocated;
    out->buffers_reused = f->bufpool.reused;
    pthread_mutex_unlock(&mf->bufpool.lock);
    pthread_mutex_lock(&mf->state_lock);
    out->call_states = f->n_states;
    pthread_mutex_unlock(&mf->state_lock);
    return WEFT_OK;
}
