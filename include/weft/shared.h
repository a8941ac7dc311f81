/* Shared variables (PyTensor's `shared`): state that lives with the graph and
 * the functions compiled from it, instead of being passed on every call.
 *
 * A shared variable is a root variable of a graph context with a value: a
 * tensor held in a storage that weft owns. Build expressions with it like
 * any variable; compile functions without listing it among the inputs
 * (weft_function_compile finds every shared variable the outputs and update
 * values depend on); update it with an update pair {var, value} as for an
 * input. docs/shared.md has the rules in full.
 *
 *     weft_var_t *W = weft_shared(g, w0, "W");         // takes a copy of w0
 *     ... cost, grads, W_new = W - lr * gW ...
 *     weft_update_t up = {W, W_new};
 *     weft_function_compile(1, &x, 1, &cost, 1, &up, NULL, &f);
 *     weft_function_call(f, 1, &x_value, 1, &cost_value);   // W updated
 *     weft_tensor_t *w;
 *     weft_shared_get(W, &w);                          // the current value
 *
 * By reference: a compiled function holds the storage, not a copy of the
 * value. Each call reads the value current when the call starts, so a
 * weft_shared_set between calls is seen by the next call of every function
 * using the variable; the function keeps the storage alive even after the
 * graph context that made the variable is destroyed.
 *
 * Values are immutable: weft never writes into a tensor once it is a shared
 * variable's value. An update computes the new value into another buffer
 * and, when the call succeeds, makes it the value (the old value's buffer
 * goes back to the function's buffer pool when nobody else holds it, so
 * steady-state calls allocate nothing and copy nothing). So a tensor
 * returned by weft_shared_get keeps its elements; the caller must not write
 * into it either (use weft_shared_set). A value may be a strided view (when
 * the update's expression ends in a view op).
 *
 * Atomic updates: the updates of a call are applied all together, and only
 * when the call returns WEFT_OK. A failed or canceled call leaves every
 * shared value as it was.
 *
 * Concurrency: a call of a function that uses shared variables (reads or
 * updates them) holds their storages' locks from its start to its end,
 * taken in one global order (creation order), so calls that use a common
 * shared variable run one after the other and never deadlock; calls of
 * functions with no shared variable in common run concurrently.
 * weft_shared_get and weft_shared_set take the same lock: they wait for a
 * running call and see a value from before or after it, never a mix. Do not
 * call them from a kernel of a function using that variable (deadlock).
 *
 * Ownership: the graph context owns the variable; the storage is reference
 * counted between the context and the functions compiled from it.
 * Thread: creation as any constructor (the context from one thread);
 * weft_shared_get / set from any thread while the context lives. */
#ifndef WEFT_SHARED_H
#define WEFT_SHARED_H

#include <stdbool.h>

#include "weft/export.h"
#include "weft/graph.h"
#include "weft/status.h"
#include "weft/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A new shared variable of g holding a copy of value: its type has value's
 * dtype, ndim and lengths (all static; weft_shared_set keeps them). name may
 * be NULL (copied). The creation site is recorded; use the macro.
 * Ownership: borrows g, value, name; returns borrowed, owned by g.
 * Errors: a constructor (weft/graph.h "Errors"): returns NULL and keeps the
 * first error on g (weft_graph_error, weft_graph_error_message):
 * WEFT_EINVAL (NULL value), WEFT_ENOMEM; NULL g: NULL. */
#define weft_shared(g, value, name) weft_shared_at((g), (value), (name), __FILE__, __LINE__)
WEFT_API weft_var_t *weft_shared_at(weft_graph_t *g, const weft_tensor_t *value,
                                    const char *name, const char *file, int line);

/* True when v is a shared variable (false for NULL). */
WEFT_API bool weft_var_is_shared(const weft_var_t *v);

/* The current value: a new reference to the value tensor (release with
 * weft_tensor_release), whose elements weft never changes (see above).
 * Ownership: borrows v; returns new.
 * Errors (message: weft_shared_last_error): WEFT_EINVAL (NULL args, v not a
 * shared variable: named). Thread: any. */
WEFT_API weft_status_t weft_shared_get(const weft_var_t *v, weft_tensor_t **out);

/* Replaces the value with a copy of value (any strides; same dtype and
 * shape as the variable's type). Functions see it from their next call.
 * Ownership: borrows v and value.
 * Errors (message: weft_shared_last_error): WEFT_EINVAL (NULL args, v not
 * shared), WEFT_ETYPE (another dtype or ndim), WEFT_ESHAPE (another length),
 * WEFT_ENOMEM; the value is unchanged on error. Thread: any. */
WEFT_API weft_status_t weft_shared_set(weft_var_t *v, const weft_tensor_t *value);

/* Text of the calling thread's last failed weft_shared_get / set ("" when
 * none). Returns borrowed, valid until that thread's next such call. */
WEFT_API const char *weft_shared_last_error(void);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_SHARED_H */
