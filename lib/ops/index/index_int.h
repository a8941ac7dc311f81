/* Internal interface of the advanced indexing ops (take.c, take_update.c;
 * weft/index_ops.h): the classes, their props, and the run-time pieces both
 * files use. Not part of the API. */
#ifndef WEFT_OPS_INDEX_INT_H
#define WEFT_OPS_INDEX_INT_H

#include <stddef.h>
#include <stdint.h>

#include "weft/index_ops.h"
#include "weft/kernel.h"
#include "weft/op.h"

/* Props of Take and its updates (no padding: compared bytewise). axis is
 * non-negative (resolved against x's rank at construction). */
typedef struct weft__take_props {
    int32_t axis;
    int32_t inplace; /* the updates: 1 = destroys x; Take: 0 */
    int32_t last;    /* Take: 1 = only each destination's last index copies, the
                      * other positions get 0 (set_at's y gradient); updates: 0 */
} weft__take_props_t;

/* Take{last}: take(x, indices, axis) with the positions whose index is
 * repeated later zeroed (set_at's y gradient: those writes are overwritten).
 * Errors: as weft_take. */
weft_var_t *weft__take_last_at(weft_graph_t *g, weft_var_t *x, weft_var_t *indices, int axis,
                               const char *file, int line);

extern const weft_op_class_t weft__take_class;
extern const weft_op_class_t weft__adv_set_class;
extern const weft_op_class_t weft__adv_inc_class;
extern const weft_op_class_t weft__nonzero_class; /* mask.c */

/* "axis=1" (+ ", inplace"): the printed props of all three classes. */
int weft__take_props_print(const void *props, char *buf, size_t cap);

/* x's geometry around axis: outer = prod(shape[:axis]), len = shape[axis],
 * inner = prod(shape[axis+1:]) (elements). */
typedef struct weft__take_geom {
    int64_t outer, len, inner;
} weft__take_geom_t;
weft__take_geom_t weft__take_geom(const weft_tensor_t *x, int axis);

/* The index tensor idx (any integer dtype, any strides) as n =
 * weft_tensor_size(idx) int64 entries in [0, len) (negative ones wrapped) in
 * scratch *out (give it back with weft_kernel_scratch_done). Errors
 * (recorded on ctx, naming op): WEFT_ERANGE "<op>: index I is out of bounds
 * for axis A with size N", WEFT_ETYPE (not an integer dtype), WEFT_ENOMEM. */
weft_status_t weft__take_indices(weft_kernel_ctx_t *ctx, const char *op, const weft_tensor_t *idx,
                                 int axis, int64_t len, weft_tensor_t **out);

/* The output shape x.shape[:axis] + idx.shape + x.shape[axis+1:] from the
 * two shapes (ranks xnd, ind); returns its rank, or -1 beyond WEFT_MAX_NDIM. */
int weft__take_shape(int xnd, const int64_t *xs, int ind, const int64_t *is, int axis,
                     int64_t *out);

/* Checks the constructor's x / indices / axis for op name; *axis_out is the
 * resolved axis. Errors on g naming the input and the site. */
weft_status_t weft__take_args(weft_graph_t *g, const char *name, weft_var_t *x, weft_var_t *idx,
                              int axis, const char *file, int line, int *axis_out);

/* Rows of at least this many bytes per pool task: fixed by the shape, never
 * by the worker count, so the blocking (and the bits) never change. */
#define WEFT__TAKE_GRAIN_BYTES 65536

/* Rows per pool task for rows of row_bytes (at least 1). */
size_t weft__take_grain(size_t row_bytes);

#endif /* WEFT_OPS_INDEX_INT_H */
