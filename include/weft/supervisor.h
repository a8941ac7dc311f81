/* The Supervisor feature (rule D6, docs/destroy.md): a FunctionGraph feature
 * that makes validation fail when a protected variable - an explicitly listed
 * input, an input the fgraph declares immutable, or a current output - is
 * destroyed by an in-place node or is a view of a destroyed value. It belongs
 * to the FunctionGraph module: weft_fgraph_create attaches one when
 * options.input_mutable is given, and weft_function_compile always does. It
 * needs no DestroyHandler (it derives destroyed values from the graph).
 *
 * Thread: as the FunctionGraph it serves. */
#ifndef WEFT_SUPERVISOR_H
#define WEFT_SUPERVISOR_H

#include <stddef.h>

#include "weft/alloc.h"
#include "weft/export.h"
#include "weft/feature.h"
#include "weft/graph.h"
#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

WEFT_API extern const weft_feature_class_t weft_supervisor_class;

/* A new, unattached Supervisor protecting the n given variables (borrowed;
 * they must be inputs of the fgraph it will serve, so a cloned fgraph's copy
 * protects the same input positions), plus, dynamically, every input the
 * fgraph declares immutable (weft_fgraph_input_is_mutable) and every current
 * output. Its on_validate fails with WEFT_EINCONSISTENT "Trying to destroy a
 * protected variable: v" (naming v and its destroyer) when a protected
 * variable is a destroyed root or a view of one. Attached to an fgraph that
 * already has a Supervisor (e.g. the one weft_fgraph_create attached), it adds
 * its list to that one and is freed (on_attach says WEFT_EALREADY). Attaching
 * fails with WEFT_EINVAL if a listed variable is not an input of the fgraph,
 * WEFT_EBUSY if the instance serves another fgraph.
 * Ownership: returns new; attaching gives it to the fgraph (which frees it
 * when it is removed or the fgraph is destroyed); an unattached Supervisor is
 * freed with f->cls->destroy(f). alloc may be NULL.
 * Errors: WEFT_EINVAL (NULL out, NULL vars with n > 0, a NULL entry),
 * WEFT_ENOMEM. */
WEFT_API weft_status_t weft_supervisor_create(size_t n, weft_var_t *const *vars,
                                              const weft_allocator_t *alloc,
                                              weft_feature_t **out);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_SUPERVISOR_H */
