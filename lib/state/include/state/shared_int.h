/* lib/shared's internal interface: the storage behind a shared variable,
 * for the modules that compile functions using it and save / load it. */
#ifndef WEFT_SHARED_INT_H
#define WEFT_SHARED_INT_H

#include <stdint.h>

#include "weft/shared.h"

typedef struct weft__shared weft__shared_t;

/* v's storage; NULL when v is not a shared variable. Returns borrowed. */
weft__shared_t *weft__shared_of(const weft_var_t *v);
/* Reference counting (a compiled function holds one per variable it uses). */
void weft__shared_retain(weft__shared_t *s);
void weft__shared_release(weft__shared_t *s);
/* Creation order, process-wide: the order calls take the locks in. */
uint64_t weft__shared_serial(const weft__shared_t *s);

void weft__shared_lock(weft__shared_t *s);
void weft__shared_unlock(weft__shared_t *s);
/* Under the lock: the current value (borrowed; never written). */
weft_tensor_t *weft__shared_value_locked(weft__shared_t *s);
/* Under the lock: a tensor of the value's dtype and shape that nobody else
 * holds, to compute the next value into (borrowed; kept by the storage).
 * Errors: WEFT_ENOMEM. */
weft_status_t weft__shared_spare_locked(weft__shared_t *s, weft_tensor_t **out);
/* Under the lock: the spare becomes the value; the old value becomes the
 * spare when nobody else holds it, else it is released. */
void weft__shared_commit_locked(weft__shared_t *s);

#endif /* WEFT_SHARED_INT_H */
