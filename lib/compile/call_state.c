/* Per-call states: the storage cells, countdowns, input-pointer scratch and
 * the weft_dag_run_t of one call, preallocated and reused. A small free list
 * (under a mutex) hands one to each concurrent call; a new one is created only
 * when every existing state is in use, so the number of states equals the
 * highest number of concurrent calls seen. */
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"
#include "tensor/tensor_int.h" /* weft__tensor_handle_free */

static void state_free(weft__call_state_t *cs)
{
    if (!cs) return;
    weft_dag_run_destroy(cs->run);
    weft__arena_state_fini(cs); /* before the cells: the arena's handles sit in them */
    for (uint32_t s = 0; cs->cells && s < cs->f->n_slots; s++)
        if (cs->f->slot_kind[s] == WEFT__SLOT_KEPT) weft_tensor_release(cs->cells[s]);
    for (uint32_t s = 0; cs->stash && s < cs->f->n_slots; s++)
        weft__tensor_handle_free(cs->stash[s]);
    for (uint32_t i = 0; cs->plans && i < cs->f->n_nodes; i++)
        weft__kernel_plan_free(cs->plans[i]);
    free(cs->plans);
    free(cs->cells);
    free(cs->stash);
    free(cs->countdown);
    free(cs->argv);
    free(cs->own);
    free(cs->direct);
    free(cs->slot_bytes);
    free(cs->deferred);
    free(cs->skipped);
    free((void *)cs->guard_memo);
    pthread_mutex_destroy(&cs->err_lock);
    free(cs);
}

static weft_status_t state_create(weft_function_t *f, weft__call_state_t **out)
{
    weft__call_state_t *cs = calloc(1, sizeof *cs);
    if (!cs) return WEFT_ENOMEM;
    if (pthread_mutex_init(&cs->err_lock, NULL) != 0) {
        free(cs);
        return WEFT_ESYSTEM;
    }
    cs->f = f;
    cs->cells = calloc(f->n_slots + 1, sizeof *cs->cells);
    cs->stash = calloc(f->n_slots + 1, sizeof *cs->stash);
    cs->countdown = calloc(f->n_slots + 1, sizeof *cs->countdown);
    cs->argv = calloc(f->n_argv + 1, sizeof *cs->argv);
    cs->plans = calloc(f->n_nodes + 1, sizeof *cs->plans);
    cs->own = calloc(f->n_slots + 1, sizeof *cs->own);
    cs->direct = calloc(f->n_out + 1, sizeof *cs->direct);
    cs->slot_bytes = calloc(f->n_slots + 1, sizeof *cs->slot_bytes);
    cs->deferred = calloc(f->n_slots + 1, sizeof *cs->deferred);
    cs->skipped = f->guards ? calloc(f->n_nodes + 1, 1) : NULL;
    cs->guard_memo = f->guards ? calloc(f->n_guard_memo + 1, sizeof *cs->guard_memo) : NULL;
    atomic_init(&cs->n_deferred, 0);
    atomic_init(&cs->phase, WEFT__PHASE_OPEN);
    weft_dag_run_options_t ro = WEFT_DAG_RUN_OPTIONS_INIT;
    ro.profile = f->profile;
    ro.deferrable = f->deferrable;
    weft_status_t st = (!cs->cells || !cs->stash || !cs->countdown || !cs->argv || !cs->plans || !cs->own || !cs->direct || !cs->slot_bytes ||
                            !cs->deferred || (f->guards && (!cs->skipped || !cs->guard_memo)))
                           ? WEFT_ENOMEM
                           : weft__arena_state_init(cs);
    if (st == WEFT_OK) st = weft_dag_run_create(f->dag, f->pool, &ro, &cs->run);
    if (st != WEFT_OK) {
        state_free(cs);
        return st;
    }
    /* from here on each countdown's last reader restores it (reset_plan.c) */
    memcpy((void *)cs->countdown, f->countdown_init, f->n_slots * sizeof *f->countdown_init);
    /* constant cells are set once: they are never emptied */
    for (uint32_t s = 0; s < f->n_slots; s++)
        if (f->slot_kind[s] == WEFT__SLOT_CONST) cs->cells[s] = f->const_cells[s];
    *out = cs;
    return WEFT_OK;
}

weft_status_t weft__state_acquire(weft_function_t *f, weft__call_state_t **out)
{
    pthread_mutex_lock(&f->state_lock);
    weft__call_state_t *cs = f->free_states;
    if (cs) f->free_states = cs->next_free;
    pthread_mutex_unlock(&f->state_lock);
    if (cs) {
        *out = cs;
        return WEFT_OK;
    }
    weft_status_t st = state_create(f, &cs);
    if (st != WEFT_OK) return st;
    pthread_mutex_lock(&f->state_lock);
    cs->next_all = f->all_states;
    f->all_states = cs;
    f->n_states++;
    pthread_mutex_unlock(&f->state_lock);
    *out = cs;
    return WEFT_OK;
}

void weft__state_release(weft_function_t *f, weft__call_state_t *cs)
{
    pthread_mutex_lock(&f->state_lock);
    cs->next_free = f->free_states;
    f->free_states = cs;
    pthread_mutex_unlock(&f->state_lock);
}

void weft__states_free(weft_function_t *f)
{
    weft__call_state_t *cs = f->all_states;
    while (cs) {
        weft__call_state_t *next = cs->next_all;
        state_free(cs);
        cs = next;
    }
    f->all_states = f->free_states = NULL;
}
