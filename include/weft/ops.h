/* The list of weft's built-in op classes, by class name ("Add",
 * "DimShuffle", "Subtensor", ...). All of them are also in the op class
 * registry (weft_op_class_find, weft/op.h), which is what the graph loader
 * uses; this list is for enumerating the built-ins.
 *
 * Thread: read-only static data; any thread. */
#ifndef WEFT_OPS_H
#define WEFT_OPS_H

#include <stddef.h>

#include "weft/export.h"
#include "weft/op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The built-in op class named `name` (exact, case-sensitive), or NULL when
 * there is none (or name is NULL). Returns static. */
WEFT_API const weft_op_class_t *weft_ops_find_class(const char *name);
/* Number of built-in classes and the i-th one (NULL for i out of range), in a
 * fixed order: for listing and round-trip tests. Returns static. */
WEFT_API size_t weft_ops_n_classes(void);
WEFT_API const weft_op_class_t *weft_ops_class_at(size_t i);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_OPS_H */
