/* The per-call reset plan (docs/control-flow.md §2, "Cost"): what a call
 * must restore after it ran, so that its cost is that of the nodes that ran
 * and not of the function's size.
 *
 * A countdown is restored to its reader count by the reader that brings it
 * to 0 (call.c, count_down and weft__slot_release): a call in which every
 * node ran leaves every countdown as it found it. Only nodes that did not
 * run leave countdowns partly counted and cells filled, and those are the
 * members of guards that did not hold. Per guard (memo id) k, reset_slots
 * lists the countdown slots a call must restore when k did not hold:
 *   - slots a node of guard k reads that another guard (or none) makes:
 *     the node did not count them down (skipped nodes do, but a one-worker
 *     run jumps over a branch's nodes, weft_task_ctx_t.skip_to);
 *   - slots a node of guard k makes that a node of another guard reads:
 *     that reader counted down a value that was never made.
 * A slot both made and read under guard k only is untouched when k does not
 * hold. Each listed cell is emptied too (it may still hold a value its
 * jumped readers did not release). owned_out lists the owned slots without
 * a countdown (graph outputs), which every call empties. A failed or
 * canceled call restores everything instead (call.c). */
#include <stdlib.h>

#include "compile_int.h"

/* The (memo id, slot) pairs, packed as weft__edge_pack(memo, slot) (sorted:
 * by memo, then slot); returns their count. */
static size_t reset_pairs(const weft_function_t *f, uint64_t *pairs)
{
    size_t np = 0;
    for (uint32_t i = 0; i < f->n_nodes; i++) {
        uint32_t g = f->nodes[i].guard;
        const weft__node_slots_t *ns = weft__cnode_slots(f, &f->nodes[i]);
        const uint32_t *dec = weft__node_slots_dec(ns);
        for (uint32_t k = 0; k < ns->n_dec; k++) {
            uint32_t s = dec[k], sg = f->slot_guard[s];
            if (sg == g) continue;
            if (g) pairs[np++] = weft__edge_pack(f->guards[g], s);
            if (sg) pairs[np++] = weft__edge_pack(f->guards[sg], s);
        }
    }
    return np;
}

static weft_status_t reset_lists(weft_function_t *f)
{
    size_t total = 0;
    for (uint32_t i = 0; i < f->n_nodes; i++) total += weft__cnode_slots(f, &f->nodes[i])->n_dec;
    uint64_t *pairs = malloc((2 * total + 1) * sizeof *pairs);
    f->reset_off = calloc((size_t)f->n_guard_memo + 1, sizeof *f->reset_off);
    f->reset_slots = malloc((2 * total + 1) * sizeof *f->reset_slots);
    if (!pairs || !f->reset_off || !f->reset_slots) {
        free(pairs);
        return weft__fn_error(NULL, WEFT_ENOMEM, "lowering: out of memory");
    }
    size_t np = reset_pairs(f, pairs), n = 0;
    qsort(pairs, np, sizeof *pairs, weft__cmp_u64);
    for (size_t k = 0; k < np; k++) {
        if (k && pairs[k] == pairs[k - 1]) continue;
        f->reset_slots[n++] = weft__edge_to(pairs[k]);
        f->reset_off[weft__edge_from(pairs[k]) + 1] = (uint32_t)n;
    }
    for (uint32_t k = 1; k <= f->n_guard_memo; k++)
        if (f->reset_off[k] < f->reset_off[k - 1]) f->reset_off[k] = f->reset_off[k - 1];
    free(pairs);
    return WEFT_OK;
}

weft_status_t weft__reset_plan(weft_function_t *f)
{
    f->owned_out = malloc(((size_t)f->n_owned + 1) * sizeof *f->owned_out);
    if (!f->owned_out) return weft__fn_error(NULL, WEFT_ENOMEM, "lowering: out of memory");
    f->n_owned_out = 0;
    for (uint32_t i = 0; i < f->n_owned; i++)
        if (f->countdown_init[f->owned_slots[i]] == 0)
            f->owned_out[f->n_owned_out++] = f->owned_slots[i];
    return f->n_guard_memo ? reset_lists(f) : WEFT_OK;
}

void weft__reset_plan_free(weft_function_t *f)
{
    free(f->owned_out);
    free(f->reset_off);
    free(f->reset_slots);
    f->owned_out = f->reset_off = f->reset_slots = NULL;
}
