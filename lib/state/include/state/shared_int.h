/* lib/state's internal interface: the storage behind a shared variable,
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
/* Under the lock: value (taken) becomes the value; returns the old value
 * (the caller's reference now: release it, or recycle it when it is
 * exclusive). value must have the variable's dtype and shape. */
weft_tensor_t *weft__shared_replace_locked(weft__shared_t *s, weft_tensor_t *value);

#endif /* WEFT_SHARED_INT_H */
