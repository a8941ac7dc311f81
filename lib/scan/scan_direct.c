/* One-node inner graphs run their kernel directly (scan_direct.h). */
#include "scan_direct.h"

#include <string.h>

#include "weft/fgraph.h"
#include "weft/tensor.h"

static bool inner_input_index(const weft_fgraph_t *fg, const weft_var_t *v, uint32_t *k)
{
    for (size_t j = 0; j < weft_fgraph_n_inputs(fg); j++)
        if (weft_fgraph_input(fg, j) == v) {
            *k = (uint32_t)j;
            return true;
        }
    return false;
}

void weft__scan_direct_init(weft__scan_direct_t *d, const weft__scan_core_t *core)
{
    memset(d, 0, sizeof *d);
    const weft_fgraph_t *fg = core->fg;
    if (core->lay.has_until || weft_fgraph_n_outputs(fg) != 1) return;
    const weft_apply_t *a = weft_var_owner(weft_fgraph_output(fg, 0));
    if (!a || weft_apply_n_outputs(a) != 1 || weft_apply_n_inputs(a) > WEFT__SCAN_DIRECT_MAX_IN)
        return;
    const weft_op_t *op = weft_apply_op(a);
    const weft_op_class_t *cls = weft_op_class(op);
    weft_op_alias_t al[WEFT_OP_MAX_ALIAS];
    /* an output aliasing an input would be a view of the previous state or
     * overwrite it: such nodes go through the compiled function */
    if (!cls || !cls->perform ||
        (cls->destroy_map && cls->destroy_map(op, al, WEFT_OP_MAX_ALIAS)) ||
        (cls->view_map && cls->view_map(op, al, WEFT_OP_MAX_ALIAS)))
        return;
    /* every input an inner input: the graph has no other node */
    for (size_t i = 0; i < weft_apply_n_inputs(a); i++)
        if (!inner_input_index(fg, weft_apply_input(a, i), &d->in_map[i])) return;
    d->n_in = weft_apply_n_inputs(a);
    d->perform = cls->perform;
    d->node = a;
}

void weft__scan_direct_begin(weft__scan_direct_t *d, const weft_kernel_ctx_t *outer)
{
    /* the outer node's hooks, pool and parallelism; the node-specific
     * fields its own (kernel_int.h) */
    weft_kernel_ctx_t *k = &d->k;
    *k = *outer;
    k->own_cell = NULL;
    k->out_cells = k->stash = NULL;
    k->n_out = 0;
    k->plan = &d->plan;
    k->plan_builds = &d->plan_builds;
    k->out_typed = false;
    weft__kernel_ctx_reset(k);
}

weft_status_t weft__scan_direct_step(weft__scan_direct_t *d, weft_tensor_t *const *args,
                                     weft_tensor_t **cell)
{
    weft_tensor_t *in[WEFT__SCAN_DIRECT_MAX_IN];
    for (size_t i = 0; i < d->n_in; i++) in[i] = args[d->in_map[i]];
    weft__kernel_ctx_reset(&d->k);
    /* the step's storage is written by nobody else during the step, so the
     * kernel may take it as its own cell when it is C-contiguous
     * (kernel_int.h); otherwise it checks and may replace it */
    d->k.own_cell = weft_tensor_is_contiguous(*cell) ? cell : NULL;
    weft_status_t s = d->perform(d->node, in, cell, &d->k);
    if (s == WEFT_OK && d->k.status != WEFT_OK) s = d->k.status;
    return s;
}

void weft__scan_direct_fini(weft__scan_direct_t *d)
{
    weft__kernel_plan_free(d->plan);
    d->plan = NULL;
}
