/* Listing a FunctionGraph's variable set (PyTensor's fgraph.variables) in a
 * deterministic order: by increasing variable id, i.e. creation order in the
 * context. The clients of each come from weft_fgraph_clients. */
#include <stdlib.h>

#include "base/vec.h"
#include "fgraph_int.h"

static int by_id(const void *a, const void *b)
{
    const weft_var_t *x = *(const weft_var_t *const *)a, *y = *(const weft_var_t *const *)b;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* Appends v once (vmarks dedupe), if it is in the variable set. */
static bool collect(weft_fgraph_t *fg, weft_var_t *v, uint32_t epoch)
{
    if (!weft__fg_has_var(fg, v) || weft__marks_has(&fg->vmarks, v->id, epoch)) return true;
    fg->vmarks.v[v->id] = epoch;
    return weft__pvec_push(fg->alloc, &fg->vars, v);
}

static bool collect_all(weft_fgraph_t *fg)
{
    if (!weft__marks_begin(fg->alloc, &fg->vmarks, (size_t)fg->g->n_vars)) return false;
    const uint32_t epoch = fg->vmarks.epoch;
    fg->vars.n = 0;
    for (size_t k = 0; k < fg->n_in; k++)
        if (!collect(fg, fg->inputs[k], epoch)) return false;
    for (size_t k = 0; k < fg->n_applies; k++) {
        weft_apply_t *a = fg->applies[k];
        for (uint32_t i = 0; i < a->n_in; i++)
            if (!collect(fg, a->inputs[i], epoch)) return false;
        for (uint32_t o = 0; o < a->n_out; o++)
            if (!collect(fg, a->outputs[o], epoch)) return false;
    }
    for (size_t k = 0; k < fg->n_out; k++)
        if (!collect(fg, fg->outputs[k], epoch)) return false;
    return true;
}

weft_status_t weft_fgraph_variables(weft_fgraph_t *fg, weft_var_t *const **vars, size_t *n)
{
    if (!fg || !vars || !n) return fg ? weft__fg_err(fg, WEFT_EINVAL, "variables: NULL") : WEFT_EINVAL;
    if (!collect_all(fg)) return weft__fg_err(fg, WEFT_ENOMEM, "variables: out of memory");
    if (fg->vars.n > 1) qsort(fg->vars.p, fg->vars.n, sizeof(void *), by_id);
    *vars = (weft_var_t *const *)fg->vars.p;
    *n = fg->vars.n;
    return WEFT_OK;
}

size_t weft_fgraph_n_variables(const weft_fgraph_t *fg)
{
    return fg ? fg->n_vars_in : 0;
}
