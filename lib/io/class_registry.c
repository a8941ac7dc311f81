/* Op classes by name for the graph loader: OpFromGraph and the built-ins
 * (weft_ops_find_class), then the user classes registered at run time (a
 * small list under a mutex). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "io_int.h"
#include "weft/opfromgraph.h"
#include "weft/ops.h"

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static const weft_op_class_t **reg_classes; /* guarded by reg_lock */
static size_t reg_n, reg_cap;

static const weft_op_class_t *find_registered_locked(const char *name)
{
    for (size_t i = 0; i < reg_n; i++)
        if (strcmp(reg_classes[i]->name, name) == 0) return reg_classes[i];
    return NULL;
}

static const weft_op_class_t *find_builtin(const char *name)
{
    if (strcmp(name, weft_ofg_class()->name) == 0) return weft_ofg_class();
    return weft_ops_find_class(name);
}

weft_status_t weft_graph_io_register_class(const weft_op_class_t *cls)
{
    if (!cls || !cls->name) return WEFT_EINVAL;
    const weft_op_class_t *b = find_builtin(cls->name);
    if (b) return b == cls ? WEFT_OK : WEFT_EALREADY;
    weft_status_t s = WEFT_OK;
    pthread_mutex_lock(&reg_lock);
    const weft_op_class_t *old = find_registered_locked(cls->name);
    if (old) {
        s = old == cls ? WEFT_OK : WEFT_EALREADY;
    } else {
        if (reg_n == reg_cap) {
            size_t cap = reg_cap ? 2 * reg_cap : 16;
            const weft_op_class_t **nc = realloc(reg_classes, cap * sizeof(*nc));
            if (nc) {
                reg_classes = nc;
                reg_cap = cap;
            }
        }
        if (reg_n < reg_cap)
            reg_classes[reg_n++] = cls;
        else
            s = WEFT_ENOMEM;
    }
    pthread_mutex_unlock(&reg_lock);
    return s;
}

const weft_op_class_t *weft_graph_io_find_class(const char *name)
{
    if (!name) return NULL;
    const weft_op_class_t *c = find_builtin(name);
    if (c) return c;
    pthread_mutex_lock(&reg_lock);
    c = find_registered_locked(name);
    pthread_mutex_unlock(&reg_lock);
    return c;
}
