/* Compiled functions with shared variables (weft/shared.h): compile-time
 * expansion of the arguments and the call wrapper.
 *
 * Expansion: the shared variables the outputs and update values depend on
 * become extra inputs after the caller's (never mutable: weft does not write
 * a shared value), and each update of a shared variable becomes an extra
 * output after the caller's outputs instead of an update pair. Updates of
 * ordinary inputs stay update pairs.
 *
 * Call: take the locks of every storage the function uses in serial order,
 * pass the current values as the extra inputs and a NULL slot for each
 * extra output, run the plain call, and only when it returned WEFT_OK make
 * each handed-over result the new value (the function made it for this
 * slot: it shares memory with no input or other output, and the function
 * never writes it again). The old value goes to the function's buffer pool
 * when nobody else holds it (weft__bufpool_put checks), where the next
 * call's producer of the update finds it: no copy, and warm calls allocate
 * nothing. A failed call commits nothing and the values are as before.
 * The argument arrays live in the function: every call holds all of its
 * storages' locks, so one call of the function at a time uses them. */
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"
#include "state/shared_int.h"

struct weft__fn_shared {
    size_t n_user_in, n_user_out;
    size_t n_read, n_write, n_locks;
    weft__shared_t **read;  /* storage of extra input k */
    weft__shared_t **write; /* storage updated by extra output k */
    weft__shared_t **locks; /* distinct storages, by serial */
    weft_tensor_t **args, **outs; /* call-time arrays (under the locks) */
};

void weft__fn_shared_free(weft__fn_shared_t *sh)
{
    if (!sh) return;
    for (size_t k = 0; k < sh->n_locks; k++) weft__shared_release(sh->locks[k]);
    free(sh->read);
    free(sh->write);
    free(sh->locks);
    free(sh->args);
    free(sh->outs);
    free(sh);
}

size_t weft__fn_shared_n_inputs(const weft__fn_shared_t *sh)
{
    return sh->n_user_in;
}

size_t weft__fn_shared_n_outputs(const weft__fn_shared_t *sh)
{
    return sh->n_user_out;
}

/* ---- compile: finding the shared variables ------------------------------------ */

typedef struct walk {
    weft_graph_t *g;
    uint8_t *seen; /* by variable id */
    size_t n_seen;
    weft_var_t **found; /* shared roots, in the order met */
    size_t n_found, cap;
} walk_t;

static bool walk_push(weft_var_t ***stack, size_t *n, size_t *cap, weft_var_t *v)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 64;
        weft_var_t **s = realloc(*stack, c * sizeof *s);
        if (!s) return false;
        *stack = s;
        *cap = c;
    }
    (*stack)[(*n)++] = v;
    return true;
}

/* Depth-first from v over owners' inputs; records shared roots once. */
static weft_status_t walk_from(walk_t *w, weft_var_t *v)
{
    weft_var_t **stack = NULL;
    size_t n = 0, cap = 0;
    bool ok = walk_push(&stack, &n, &cap, v);
    while (ok && n) {
        weft_var_t *x = stack[--n];
        uint64_t id = weft_var_id(x);
        if (weft_var_graph(x) != w->g || id >= w->n_seen || w->seen[id]) continue;
        w->seen[id] = 1;
        weft_apply_t *a = weft_var_owner(x);
        if (!a) {
            if (weft_var_is_shared(x)) ok = walk_push(&w->found, &w->n_found, &w->cap, x);
            continue;
        }
        for (size_t i = 0; ok && i < weft_apply_n_inputs(a); i++)
            ok = walk_push(&stack, &n, &cap, weft_apply_input(a, i));
    }
    free(stack);
    return ok ? WEFT_OK : weft__fn_error(NULL, WEFT_ENOMEM, "out of memory");
}

static weft_status_t find_shared(const weft__compile_in_t *in, walk_t *w)
{
    w->g = in->n_out ? weft_var_graph(in->outputs[0]) : weft_var_graph(in->updates[0].value);
    w->n_seen = weft_graph_n_vars(w->g);
    w->seen = calloc(w->n_seen + 1, 1);
    if (!w->seen) return weft__fn_error(NULL, WEFT_ENOMEM, "out of memory");
    weft_status_t st = WEFT_OK;
    for (size_t k = 0; st == WEFT_OK && k < in->n_out; k++) st = walk_from(w, in->outputs[k]);
    for (size_t u = 0; st == WEFT_OK && u < in->n_upd; u++)
        st = walk_from(w, in->updates[u].value);
    return st;
}

static weft_status_t refuse_shared_inputs(const weft__compile_in_t *in)
{
    for (size_t k = 0; k < in->n_in; k++) {
        if (!weft_var_is_shared(in->inputs[k])) continue;
        char d[160];
        weft_var_print(in->inputs[k], d, sizeof d);
        return weft__fn_error(NULL, WEFT_EINVAL, "input %zu: %s is a shared variable; a "
                              "function reads its value itself, do not list it among the "
                              "inputs", k, d);
    }
    return WEFT_OK;
}

static size_t count_shared_updates(const weft__compile_in_t *in)
{
    size_t n = 0;
    for (size_t u = 0; u < in->n_upd; u++) n += weft_var_is_shared(in->updates[u].var);
    return n;
}

/* ---- compile: the expanded arguments ---------------------------------------- */

static int by_serial(const void *a, const void *b)
{
    uint64_t x = weft__shared_serial(*(weft__shared_t *const *)a);
    uint64_t y = weft__shared_serial(*(weft__shared_t *const *)b);
    return x < y ? -1 : x > y;
}

/* The distinct storages of read and write, sorted, one reference each. */
static weft_status_t collect_locks(weft__fn_shared_t *sh)
{
    sh->locks = calloc(sh->n_read + sh->n_write + 1, sizeof *sh->locks);
    if (!sh->locks) return WEFT_ENOMEM;
    for (size_t k = 0; k < sh->n_read + sh->n_write; k++) {
        weft__shared_t *s = k < sh->n_read ? sh->read[k] : sh->write[k - sh->n_read];
        size_t j = 0;
        while (j < sh->n_locks && sh->locks[j] != s) j++;
        if (j < sh->n_locks) continue;
        weft__shared_retain(s);
        sh->locks[sh->n_locks++] = s;
    }
    qsort(sh->locks, sh->n_locks, sizeof *sh->locks, by_serial);
    return WEFT_OK;
}

static weft_status_t alloc_expanded(const weft__compile_in_t *in, const walk_t *w,
                                    size_t n_write, weft__compile_in_t *ex, weft__fn_shared_t *sh)
{
    sh->n_user_in = in->n_in;
    sh->n_user_out = in->n_out;
    sh->n_read = w->n_found;
    sh->n_write = n_write;
    sh->read = calloc(w->n_found + 1, sizeof *sh->read);
    sh->write = calloc(n_write + 1, sizeof *sh->write);
    sh->args = calloc(in->n_in + w->n_found + 1, sizeof *sh->args);
    sh->outs = calloc(in->n_out + n_write + 1, sizeof *sh->outs);
    weft_var_t **ins = calloc(in->n_in + w->n_found + 1, sizeof *ins);
    weft_var_t **outs = calloc(in->n_out + n_write + 1, sizeof *outs);
    weft_update_t *ups = calloc(in->n_upd - n_write + 1, sizeof *ups);
    *ex = (weft__compile_in_t){in->n_in + w->n_found, in->n_out + n_write, in->n_upd - n_write,
                               ins, outs, ups};
    return sh->read && sh->write && sh->args && sh->outs && ins && outs && ups ? WEFT_OK
                                                                               : WEFT_ENOMEM;
}

static weft_status_t check_shared_update(const weft__compile_in_t *in, size_t u)
{
    const weft_update_t *up = &in->updates[u];
    char name[160];
    weft_var_print(up->var, name, sizeof name);
    for (size_t v = 0; v < u; v++)
        if (in->updates[v].var == up->var)
            return weft__fn_error(NULL, WEFT_EINVAL, "update %zu: %s is updated twice", u, name);
    if (weft_type_equal(weft_var_type(up->var), weft_var_type(up->value))) return WEFT_OK;
    char t1[96], t2[96];
    weft_type_print(weft_var_type(up->var), t1, sizeof t1);
    weft_type_print(weft_var_type(up->value), t2, sizeof t2);
    return weft__fn_error(NULL, WEFT_ETYPE, "update %zu: %s is %s but its value is %s", u, name,
                          t1, t2);
}

static weft_status_t fill_expanded(const weft__compile_in_t *in, const walk_t *w,
                                   weft__compile_in_t *ex, weft__fn_shared_t *sh)
{
    weft_var_t **ins = (weft_var_t **)ex->inputs, **outs = (weft_var_t **)ex->outputs;
    weft_update_t *ups = (weft_update_t *)ex->updates;
    if (in->n_in) memcpy(ins, in->inputs, in->n_in * sizeof *ins);
    if (in->n_out) memcpy(outs, in->outputs, in->n_out * sizeof *outs);
    for (size_t k = 0; k < w->n_found; k++) {
        ins[in->n_in + k] = w->found[k];
        sh->read[k] = weft__shared_of(w->found[k]);
    }
    size_t nw = 0, np = 0;
    for (size_t u = 0; u < in->n_upd; u++) {
        if (!weft_var_is_shared(in->updates[u].var)) {
            ups[np++] = in->updates[u];
            continue;
        }
        weft_status_t st = check_shared_update(in, u);
        if (st != WEFT_OK) return st;
        outs[in->n_out + nw] = in->updates[u].value;
        sh->write[nw++] = weft__shared_of(in->updates[u].var);
    }
    return collect_locks(sh) == WEFT_OK ? WEFT_OK
                                        : weft__fn_error(NULL, WEFT_ENOMEM, "out of memory");
}

void weft__compile_in_free(weft__compile_in_t *ex)
{
    free((void *)ex->inputs);
    free((void *)ex->outputs);
    free((void *)ex->updates);
    memset(ex, 0, sizeof *ex);
}

weft_status_t weft__shared_expand(const weft__compile_in_t *in, weft__compile_in_t *ex,
                                  weft__fn_shared_t **out)
{
    *out = NULL;
    memset(ex, 0, sizeof *ex);
    walk_t w = {0};
    weft_status_t st = refuse_shared_inputs(in);
    if (st == WEFT_OK) st = find_shared(in, &w);
    size_t n_write = count_shared_updates(in);
    if (st != WEFT_OK || (w.n_found == 0 && n_write == 0)) {
        free(w.seen);
        free(w.found);
        return st;
    }
    weft__fn_shared_t *sh = calloc(1, sizeof *sh);
    st = sh ? alloc_expanded(in, &w, n_write, ex, sh) : WEFT_ENOMEM;
    if (st != WEFT_OK) weft__fn_error(NULL, st, "out of memory");
    else st = fill_expanded(in, &w, ex, sh);
    free(w.seen);
    free(w.found);
    if (st != WEFT_OK) {
        weft__fn_shared_free(sh);
        weft__compile_in_free(ex);
        return st;
    }
    *out = sh;
    return WEFT_OK;
}

/* ---- call ----------------------------------------------------------------------- */

static void prepare_args(weft__fn_shared_t *sh, weft_tensor_t *const *inputs,
                         weft_tensor_t **outputs)
{
    if (sh->n_user_in) memcpy(sh->args, inputs, sh->n_user_in * sizeof *sh->args);
    if (sh->n_user_out) memcpy(sh->outs, outputs, sh->n_user_out * sizeof *sh->outs);
    for (size_t k = 0; k < sh->n_read; k++)
        sh->args[sh->n_user_in + k] = weft__shared_value_locked(sh->read[k]);
    for (size_t k = 0; k < sh->n_write; k++) sh->outs[sh->n_user_out + k] = NULL;
}

static weft_status_t call_locked(weft_function_t *f, weft__fn_shared_t *sh,
                                 weft_tensor_t *const *inputs, weft_tensor_t **outputs,
                                 const weft_call_options_t *opts)
{
    prepare_args(sh, inputs, outputs);
    weft_status_t st = weft__function_call_plain(f, sh->n_user_in + sh->n_read, sh->args,
                                                 sh->n_user_out + sh->n_write, sh->outs, opts);
    /* NULL output slots were filled by the call (or stay NULL on failure) */
    if (sh->n_user_out) memcpy(outputs, sh->outs, sh->n_user_out * sizeof *outputs);
    for (size_t k = 0; k < sh->n_write; k++) {
        weft_tensor_t *next = sh->outs[sh->n_user_out + k];
        sh->outs[sh->n_user_out + k] = NULL;
        if (st != WEFT_OK) {
            weft_tensor_release(next); /* NULL: a failed call hands nothing over */
            continue;
        }
        weft__bufpool_put(&f->bufpool, weft__shared_replace_locked(sh->write[k], next));
    }
    return st;
}

weft_status_t weft__shared_call(weft_function_t *f, size_t n_in, weft_tensor_t *const *inputs,
                                size_t n_out, weft_tensor_t **outputs,
                                const weft_call_options_t *opts)
{
    weft__fn_shared_t *sh = f->shared;
    weft__fn_clear_error(f);
    if (n_in != sh->n_user_in || (n_in && !inputs))
        return weft__fn_error(f, WEFT_EINVAL, "%s takes %zu inputs, got %zu%s", f->name,
                              sh->n_user_in, n_in, n_in && !inputs ? " (NULL array)" : "");
    if (n_out != sh->n_user_out || (n_out && !outputs))
        return weft__fn_error(f, WEFT_EINVAL, "%s has %zu outputs, got %zu%s", f->name,
                              sh->n_user_out, n_out, n_out && !outputs ? " (NULL array)" : "");
    for (size_t k = 0; k < sh->n_locks; k++) weft__shared_lock(sh->locks[k]);
    weft_status_t st = call_locked(f, sh, inputs, outputs, opts);
    for (size_t k = sh->n_locks; k-- > 0;) weft__shared_unlock(sh->locks[k]);
    return st;
}
