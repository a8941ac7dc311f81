/* FunctionGraph update pairs (weft_fgraph_set_update): output slot k holds
 * the new value of input i. A short list in the order set; removing an input
 * or an output slot drops the pair naming it and renumbers the later
 * positions, so the pairs always name live slots. */
#include <stdint.h>
#include <string.h>

#include "fgraph_int.h"

/* Index of output's pair in fg->upd, or fg->n_upd. */
static size_t update_find_output(const weft_fgraph_t *fg, size_t output)
{
    size_t j = 0;
    while (j < fg->n_upd && fg->upd[j].out != output) j++;
    return j;
}

static void update_drop(weft_fgraph_t *fg, size_t j)
{
    memmove(fg->upd + j, fg->upd + j + 1, (fg->n_upd - j - 1) * sizeof(*fg->upd));
    fg->n_upd--;
}

/* Argument checks of set_update for a valid output (nothing changed on error). */
static weft_status_t update_check(weft_fgraph_t *fg, size_t output, size_t input)
{
    if (input >= fg->n_in)
        return weft__fg_err(fg, WEFT_EINVAL, "set_update: no input %zu (%zu inputs)", input,
                            fg->n_in);
    for (size_t j = 0; j < fg->n_upd; j++) {
        const weft__fg_update_t *u = &fg->upd[j];
        if (u->out == output && u->in == input) return WEFT_OK; /* set again */
        if (u->out == output)
            return weft__fg_err(fg, WEFT_EDUPLICATE,
                                "set_update: output %zu already updates input %zu", output, u->in);
        if (u->in == input)
            return weft__fg_err(fg, WEFT_EDUPLICATE,
                                "set_update: input %zu is already updated by output %zu", input,
                                u->out);
    }
    const weft_var_t *ov = fg->outputs[output], *iv = fg->inputs[input];
    if (weft_type_is_super(iv->type, ov->type)) return WEFT_OK;
    char ob[512], ib[512];
    weft__var_describe(ov, ob, sizeof(ob));
    weft__var_describe(iv, ib, sizeof(ib));
    return weft__fg_err(fg, WEFT_ETYPE, "set_update: output %zu, %s, cannot update input %zu, %s",
                        output, ob, input, ib);
}

weft_status_t weft_fgraph_set_update(weft_fgraph_t *fg, size_t output, size_t input)
{
    if (!fg) return WEFT_EINVAL;
    if (output >= fg->n_out)
        return weft__fg_err(fg, WEFT_EINVAL, "set_update: no output %zu (%zu outputs)", output,
                            fg->n_out);
    if (input == SIZE_MAX) {
        size_t j = update_find_output(fg, output);
        if (j < fg->n_upd) update_drop(fg, j);
        return WEFT_OK;
    }
    weft_status_t s = update_check(fg, output, input);
    if (s != WEFT_OK || update_find_output(fg, output) < fg->n_upd) return s;
    if (!weft__vec_grow(fg->alloc, (void **)&fg->upd, &fg->upd_cap, fg->n_upd + 1, sizeof(*fg->upd)))
        return weft__fg_err(fg, WEFT_ENOMEM, "set_update: out of memory");
    fg->upd[fg->n_upd++] = (weft__fg_update_t){output, input};
    return WEFT_OK;
}

size_t weft_fgraph_update_input(const weft_fgraph_t *fg, size_t output)
{
    if (!fg) return SIZE_MAX;
    size_t j = update_find_output(fg, output);
    return j < fg->n_upd ? fg->upd[j].in : SIZE_MAX;
}

size_t weft_fgraph_n_updates(const weft_fgraph_t *fg)
{
    return fg ? fg->n_upd : 0;
}

void weft__fg_updates_drop(weft_fgraph_t *fg, size_t k, bool input)
{
    for (size_t j = fg->n_upd; j-- > 0;) {
        size_t *pos = input ? &fg->upd[j].in : &fg->upd[j].out;
        if (*pos == k)
            update_drop(fg, j);
        else if (*pos > k)
            (*pos)--;
    }
}

weft_status_t weft__fg_updates_copy(const weft_fgraph_t *src, weft_fgraph_t *dst)
{
    if (src->n_upd == 0) return WEFT_OK;
    if (!weft__vec_grow(dst->alloc, (void **)&dst->upd, &dst->upd_cap, src->n_upd, sizeof(*dst->upd)))
        return weft__fg_err(dst, WEFT_ENOMEM, "clone: out of memory");
    memcpy(dst->upd, src->upd, src->n_upd * sizeof(*dst->upd));
    dst->n_upd = src->n_upd;
    return WEFT_OK;
}
