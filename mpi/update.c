/* Updates of a distributed function (docs/distributed.md §2, item 5): the
 * local function computes each update this rank holds as a hidden output; after
 * the ranks agreed on the call's outcome, a successful call makes them the
 * new values (weft_shared_set, or a copy into the updated input's tensor),
 * so a call that fails on any rank changes no state on any rank. */
#include "mpi_int.h"
#include "weft/shared.h"

static weft_status_t commit_one(weft_mpi_function_t *f, size_t k, weft_tensor_t *const *inputs,
                                weft_tensor_t *value)
{
    weft_var_t *v = f->part.upd[k].var;
    if (f->upd_input[k] < 0) {
        weft_status_t st = weft_shared_set(v, value);
        return st == WEFT_OK ? st : wm__error(st, "rank %d: update %zu: %s", f->rank, k,
                                              weft_shared_last_error());
    }
    weft_status_t st = weft_tensor_copy(inputs[f->upd_input[k]], value);
    return st == WEFT_OK ? st : wm__error(st, "rank %d: update %zu of input %d: %s", f->rank, k,
                                          f->upd_input[k], weft_tensor_last_error());
}

weft_status_t wm__commit_updates(weft_mpi_function_t *f, weft_tensor_t *const *inputs, bool ok)
{
    weft_status_t st = WEFT_OK;
    for (size_t k = 0; k < f->part.n_upd; k++) {
        int l = f->upd_local[k];
        if (l < 0) continue;
        if (ok && st == WEFT_OK) st = commit_one(f, k, inputs, f->lout[l]);
        weft_tensor_release(f->lout[l]);
        f->lout[l] = NULL;
    }
    return st;
}
