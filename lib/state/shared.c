/* Shared variables (weft/shared.h): the storage (value, lock, reference
 * count), the variable that points at it, and get / set.
 *
 * Lifetime: the graph context holds one reference to each storage it made
 * (its list, released by weft_graph_destroy through release_shared) and each
 * compiled function one per shared variable it uses; the last release frees
 * the value and the storage. */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/base_int.h"
#include "graph/ctor_int.h"
#include "graph/graph_int.h"
#include "state/shared_int.h"

struct weft__shared {
    pthread_mutex_t lock;
    atomic_size_t refs;
    uint64_t serial;
    weft_tensor_t *value; /* guarded by lock; never written once here */
    weft__shared_t *next; /* the context's list (the context's thread) */
};

static atomic_uint_fast64_t shared_serial;
static _Thread_local char shared_err[256];

const char *weft_shared_last_error(void)
{
    return shared_err;
}

#define shared_error(st, ...) weft__error_to(shared_err, sizeof shared_err, (st), __VA_ARGS__)

/* ---- the storage ---------------------------------------------------------------- */

weft__shared_t *weft__shared_of(const weft_var_t *v)
{
    return v && (v->flags & WEFT__VAR_SHARED) ? (weft__shared_t *)v->data : NULL;
}

void weft__shared_retain(weft__shared_t *s)
{
    /* relaxed: taking a reference needs no ordering, the caller holds one */
    atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
}

void weft__shared_release(weft__shared_t *s)
{
    if (!s) return;
    /* acq_rel: the last release sees every other holder's writes (pairs with
     * the release part of their fetch_sub) before freeing */
    if (atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1) return;
    weft_tensor_release(s->value);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

uint64_t weft__shared_serial(const weft__shared_t *s)
{
    return s->serial;
}

void weft__shared_lock(weft__shared_t *s)
{
    pthread_mutex_lock(&s->lock);
}

void weft__shared_unlock(weft__shared_t *s)
{
    pthread_mutex_unlock(&s->lock);
}

weft_tensor_t *weft__shared_value_locked(weft__shared_t *s)
{
    return s->value;
}

weft_tensor_t *weft__shared_replace_locked(weft__shared_t *s, weft_tensor_t *value)
{
    weft_tensor_t *old = s->value;
    s->value = value;
    return old;
}

/* ---- the variable --------------------------------------------------------------- */

static void release_all(weft_graph_t *g)
{
    for (weft__shared_t *s = g->shared, *next; s; s = next) {
        next = s->next;
        weft__shared_release(s);
    }
    g->shared = NULL;
}

static weft_status_t storage_new(const weft_tensor_t *value, weft__shared_t **out)
{
    weft__shared_t *s = calloc(1, sizeof *s);
    if (!s) return WEFT_ENOMEM;
    weft_status_t st = weft_tensor_clone(value, &s->value);
    if (st != WEFT_OK) {
        free(s);
        return st;
    }
    pthread_mutex_init(&s->lock, NULL);
    /* relaxed: only the storage's creator sees it yet */
    atomic_store_explicit(&s->refs, 1, memory_order_relaxed);
    /* relaxed: a unique number is all that is needed */
    s->serial = atomic_fetch_add_explicit(&shared_serial, 1, memory_order_relaxed);
    *out = s;
    return WEFT_OK;
}

static weft_status_t shared_new(weft_graph_t *g, const weft_tensor_t *value, const char *name,
                                const char *file, int line, weft_var_t **out)
{
    if (!value) return weft_graph_set_error(g, WEFT_EINVAL, "weft_shared: NULL value");
    const weft_type_t *t;
    weft_var_t *v = NULL;
    weft__shared_t *s = NULL;
    weft_status_t st = weft_type_tensor(g, weft_tensor_dtype(value), weft_tensor_ndim(value),
                                        weft_tensor_shape(value), &t);
    if (st == WEFT_OK) st = weft__got(g, v = weft_var_create_at(g, t, name, file, line));
    if (st != WEFT_OK) return st;
    st = storage_new(value, &s);
    if (st != WEFT_OK)
        return weft_graph_set_error(g, st, "weft_shared: cannot make %s: %s",
                                    name ? name : "a variable", weft_status_str(st));
    v->data = s;
    v->flags |= WEFT__VAR_SHARED;
    s->next = g->shared;
    g->shared = s;
    g->release_shared = release_all;
    *out = v;
    return WEFT_OK;
}

weft_var_t *weft_shared_at(weft_graph_t *g, const weft_tensor_t *value, const char *name,
                           const char *file, int line)
{
    weft_var_t *out = NULL;
    weft__ctor_begin(g);
    weft_status_t st = g ? shared_new(g, value, name, file, line, &out) : WEFT_EINVAL;
    return weft__ctor_end(g, st, out, "weft_shared", file, line);
}

bool weft_var_is_shared(const weft_var_t *v)
{
    return weft__shared_of(v) != NULL;
}

static weft_status_t storage_arg(const weft_var_t *v, const char *fn, weft__shared_t **s)
{
    *s = weft__shared_of(v);
    if (*s) return WEFT_OK;
    if (!v) return shared_error(WEFT_EINVAL, "%s: NULL variable", fn);
    char d[160];
    weft_var_print(v, d, sizeof d);
    return shared_error(WEFT_EINVAL, "%s: %s is not a shared variable", fn, d);
}

weft_status_t weft_shared_get(const weft_var_t *v, weft_tensor_t **out)
{
    shared_err[0] = '\0';
    if (out) *out = NULL;
    weft__shared_t *s;
    weft_status_t st = storage_arg(v, "weft_shared_get", &s);
    if (st != WEFT_OK) return st;
    if (!out) return shared_error(WEFT_EINVAL, "weft_shared_get: NULL out");
    weft__shared_lock(s);
    *out = weft_tensor_retain(s->value);
    weft__shared_unlock(s);
    return WEFT_OK;
}

static weft_status_t check_value(const weft_var_t *v, const weft_tensor_t *value)
{
    const weft_type_t *t = weft_var_type(v);
    char want[96], got[96], d[160];
    weft_type_print(t, want, sizeof want);
    weft_tensor_print_type(value, got, sizeof got);
    weft_var_print(v, d, sizeof d);
    if (weft_tensor_dtype(value) != weft_type_dtype(t) ||
        weft_tensor_ndim(value) != weft_type_ndim(t))
        return shared_error(WEFT_ETYPE, "weft_shared_set: %s is %s, the value %s", d, want, got);
    for (int i = 0; i < weft_type_ndim(t); i++)
        if (weft_tensor_dim(value, i) != weft_type_dim(t, i))
            return shared_error(WEFT_ESHAPE, "weft_shared_set: %s is %s, the value %s", d, want,
                                got);
    return WEFT_OK;
}

weft_status_t weft_shared_set(weft_var_t *v, const weft_tensor_t *value)
{
    shared_err[0] = '\0';
    weft__shared_t *s;
    weft_status_t st = storage_arg(v, "weft_shared_set", &s);
    if (st != WEFT_OK) return st;
    if (!value) return shared_error(WEFT_EINVAL, "weft_shared_set: NULL value");
    st = check_value(v, value);
    weft_tensor_t *copy = NULL;
    if (st == WEFT_OK) st = weft_tensor_clone(value, &copy); /* outside the lock */
    if (st != WEFT_OK)
        return shared_err[0] ? st : shared_error(st, "weft_shared_set: out of memory");
    weft__shared_lock(s);
    weft_tensor_t *old = weft__shared_replace_locked(s, copy);
    weft__shared_unlock(s);
    weft_tensor_release(old);
    return WEFT_OK;
}
