/* Outputs written straight into the caller's tensors (docs/execution.md
 * §4.7): when the caller supplies output k and it may safely hold the value
 * while the graph runs, the tensor is put in the output's cell before the
 * run and its producer writes there (weft_kernel_alloc_output keeps a tensor
 * of the right geometry found in the cell), so delivering it copies nothing.
 *
 * Compile time (weft__direct_plan): output k qualifies when its variable is
 * output 0 of the node producing it, a fresh value (no view, no destroy
 * output, not a small kept slot), nothing views or destroys it, and no
 * other output nor any update is the same variable (shared variables'
 * updates are outputs of the expanded call, function_shared.c). Inputs and constants
 * given as outputs are copied by DeepCopy nodes (output_aliasing.c), whose
 * fresh result qualifies.
 *
 * Per call (weft__direct_place): the supplied tensor must have the output
 * variable's dtype and ndim and its static lengths, be C-contiguous, and its
 * memory must not overlap any input's (shared variables and updated states
 * included) nor another supplied output's. Cancelable calls (a token) keep
 * the copy: a call canceled before it commits leaves supplied outputs
 * unchanged (weft/function.h). The state holds one reference while the
 * tensor sits in the cell, so a kernel that replaces the cell's tensor
 * (another geometry, its own allocation) only drops that reference; the
 * value is then copied as before, and a wrong shape fails as before. */
#include <stdlib.h>

#include "compile_int.h"
#include "graph/ifelse_id.h"

/* Output 0 of an IfElse viewing its then side (as_view): the op copies the
 * side taken into the caller's tensor when the runtime placed one there
 * (lib/ops/control/ifelse.c), as delivering the view would, so a supplied
 * output costs one copy of the value whichever side is taken instead of
 * two for the else side (docs/control-flow.md §1.3). */
static bool ifelse_view_output(const weft__cnode_t *n)
{
    const weft_op_alias_t *e;
    size_t nv = 0;
    if (!weft__ifelse_pairs(n->apply)) return false;
    weft_op_view_map(weft_apply_op(n->apply), &e, &nv);
    return nv > 0;
}

/* The node writing slot s (NULL: none), when s is its output 0 and a fresh
 * value (fresh_mask: no view, destroy output or kept slot) or an IfElse's
 * view output. */
static weft__cnode_t *fresh_first_output(weft_function_t *f, uint32_t s)
{
    for (uint32_t i = 0; i < f->n_nodes; i++) {
        weft__cnode_t *n = &f->nodes[i];
        const weft__cnode_out_t *no = &f->node_out[i];
        if (s < n->out_base || s >= n->out_base + no->n_out) continue;
        bool fresh = (no->fresh_mask & 1u) || ifelse_view_output(n);
        return s == n->out_base && fresh && !n->own ? n : NULL;
    }
    return NULL;
}

/* Another output or update is the same variable (DeepCopy nodes make that
 * rare, output_aliasing.c): a later NULL slot or a shared variable's update
 * would receive the caller's tensor itself. */
static bool slot_shared(const weft_function_t *f, size_t k)
{
    for (size_t j = 0; j < f->n_out + f->n_upd; j++)
        if (j != k && f->out_slot[j] == f->out_slot[k]) return true;
    return false;
}

weft_status_t weft__direct_plan(weft_function_t *f, const bool *aliased)
{
    for (size_t k = 0; k < f->n_out; k++) {
        uint32_t s = f->out_slot[k];
        if (f->slot_kind[s] != WEFT__SLOT_OWNED || aliased[s] || slot_shared(f, k)) continue;
        weft__cnode_t *prod = fresh_first_output(f, s);
        if (!prod) continue;
        if (!f->direct_out && !(f->direct_out = calloc(f->n_out, 1)))
            return weft__fn_error(NULL, WEFT_ENOMEM, "out of memory planning the outputs");
        f->direct_out[k] = 1;
        prod->direct = 1;
    }
    return WEFT_OK;
}

/* [*lo, *hi): the bytes t's elements occupy (empty for no elements). */
static void byte_range(const weft_tensor_t *t, uintptr_t *lo, uintptr_t *hi)
{
    intptr_t a = 0, b = 0, esz = (intptr_t)weft_dtype_size(weft_tensor_dtype(t));
    for (int d = 0; d < weft_tensor_ndim(t); d++) {
        int64_t len = weft_tensor_dim(t, d), st = weft_tensor_stride(t, d);
        if (len == 0) {
            *lo = *hi = 0;
            return;
        }
        if (st < 0) a += (intptr_t)((len - 1) * st) * esz;
        else b += (intptr_t)((len - 1) * st) * esz;
    }
    uintptr_t base = (uintptr_t)weft_tensor_data(t);
    *lo = base + (uintptr_t)a;
    *hi = base + (uintptr_t)b + (uintptr_t)esz;
}

static bool overlap(const weft_tensor_t *x, const weft_tensor_t *y)
{
    uintptr_t xl, xh, yl, yh;
    byte_range(x, &xl, &xh);
    byte_range(y, &yl, &yh);
    return xl < xh && yl < yh && xl < yh && yl < xh;
}

/* o fits output k's type and may hold its value during the run. */
static bool may_hold(const weft_function_t *f, size_t k, const weft_tensor_t *o,
                     weft_tensor_t *const *inputs, weft_tensor_t *const *outputs)
{
    const weft_type_t *ty = weft_var_type(f->out_vars[k]);
    if (weft_tensor_dtype(o) != weft_type_dtype(ty) || weft_tensor_ndim(o) != weft_type_ndim(ty) ||
        !weft_tensor_is_contiguous(o))
        return false;
    for (int d = 0; d < weft_type_ndim(ty); d++)
        if (weft_type_dim(ty, d) >= 0 && weft_type_dim(ty, d) != weft_tensor_dim(o, d)) return false;
    for (size_t j = 0; j < f->n_in; j++)
        if (overlap(o, inputs[j])) return false;
    for (size_t j = 0; j < f->n_out; j++)
        if (j != k && outputs[j] && overlap(o, outputs[j])) return false;
    return true;
}

void weft__direct_place(weft__call_state_t *cs, weft_tensor_t *const *inputs,
                        weft_tensor_t *const *outputs)
{
    const weft_function_t *f = cs->f;
    if (!f->direct_out || cs->token) return;
    for (size_t k = 0; k < f->n_out; k++) {
        uint32_t s = f->out_slot[k];
        weft_tensor_t *o = outputs[k];
        /* an output cell is empty between calls (cleanup, hand-over) */
        if (!f->direct_out[k] || !o || cs->cells[s] || !may_hold(f, k, o, inputs, outputs))
            continue;
        cs->direct[k] = cs->cells[s] = weft_tensor_retain(o);
        cs->own[s] = 1; /* the producer takes the own path: kctx.own_cell */
    }
}

bool weft__direct_written(const weft__call_state_t *cs, size_t k, const weft_tensor_t *o)
{
    return cs->direct[k] == o && cs->cells[cs->f->out_slot[k]] == o;
}

void weft__direct_clear(weft__call_state_t *cs)
{
    const weft_function_t *f = cs->f;
    if (!f->direct_out) return;
    for (size_t k = 0; k < f->n_out; k++) {
        weft_tensor_t *o = cs->direct[k];
        if (!o) continue;
        uint32_t s = f->out_slot[k];
        cs->direct[k] = NULL;
        cs->own[s] = 0;
        /* a kernel that replaced the cell's tensor released our reference */
        if (cs->cells[s] != o) continue;
        cs->cells[s] = NULL;
        weft_tensor_release(o);
    }
}
