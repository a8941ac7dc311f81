/* The op class registry (weft/op.h): one process-wide table of classes by
 * name. lib/catalog fills it with weft's own classes before main runs; users
 * add theirs at any time. A small growable array under a mutex: lookups
 * happen per loaded node, never on a compiled function's call path. */
#include <pthread.h>
#include <string.h>

#include "base/base_int.h"
#include "graph/input_prep.h"
#include "weft/op.h"

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static const weft_op_class_t **reg_classes; /* guarded by reg_lock */
static size_t reg_n, reg_cap;

static const weft_op_class_t *find_locked(const char *name)
{
    for (size_t i = 0; i < reg_n; i++)
        if (strcmp(reg_classes[i]->name, name) == 0) return reg_classes[i];
    return NULL;
}

static weft_status_t append_locked(const weft_op_class_t *cls)
{
    if (reg_n == reg_cap) {
        const weft_allocator_t *al = weft_allocator_default();
        size_t cap = reg_cap ? 2 * reg_cap : 64, bytes;
        if (!weft__mul_size(cap, sizeof *reg_classes, &bytes)) return WEFT_ENOMEM;
        const weft_op_class_t **nc =
            weft__realloc(al, reg_classes, reg_cap * sizeof *reg_classes, bytes);
        if (!nc) return WEFT_ENOMEM;
        reg_classes = nc;
        reg_cap = cap;
    }
    reg_classes[reg_n++] = cls;
    return WEFT_OK;
}

weft_status_t weft_op_class_register(const weft_op_class_t *cls)
{
    if (!cls || !cls->name) return WEFT_EINVAL;
    pthread_mutex_lock(&reg_lock);
    const weft_op_class_t *old = find_locked(cls->name);
    weft_status_t s = old ? (old == cls ? WEFT_OK : WEFT_EALREADY) : append_locked(cls);
    pthread_mutex_unlock(&reg_lock);
    return s;
}

const weft_op_class_t *weft_op_class_find(const char *name)
{
    if (!name) return NULL;
    pthread_mutex_lock(&reg_lock);
    const weft_op_class_t *c = find_locked(name);
    pthread_mutex_unlock(&reg_lock);
    return c;
}

/* ---- the loader's input preparation hook (graph/input_prep.h) ------------------ */

/* Written once by lib/catalog's load-time constructor, before main and any
 * thread, and only read afterwards: no lock or atomic needed. */
static weft__input_prep_fn input_prep;

void weft__input_prep_set(weft__input_prep_fn fn)
{
    input_prep = fn;
}

weft__input_prep_fn weft__input_prep_get(void)
{
    return input_prep;
}
