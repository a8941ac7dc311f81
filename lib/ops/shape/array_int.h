/* The array-building op classes (weft/array_ops.h), for the built-in class
 * list and their constructors. Not part of the API. */
#ifndef WEFT_OPS_SHAPE_ARRAY_INT_H
#define WEFT_OPS_SHAPE_ARRAY_INT_H

#include <stdbool.h>

#include "weft/array_ops.h"
#include "weft/graph.h"
#include "weft/op.h"

extern const weft_op_class_t weft__join_class;
extern const weft_op_class_t weft__alloc_class;

/* Alloc's props: the target shape (zeroed past ndim: props compare bytes),
 * or, when sym is 1, ndim alone: the sizes are inputs 1..ndim (integer 0-d
 * tensors, weft/symshape.h) and shape is all zeros. */
typedef struct weft__alloc_props {
    int32_t ndim;
    int32_t sym;
    int64_t shape[WEFT_MAX_NDIM];
} weft__alloc_props_t;

/* axis (negative from the end) normalized into *out in [0, ndim), else
 * WEFT_EINVAL "NAME (at FILE:LINE): axis A out of range for N dims". */
weft_status_t weft__array_norm_axis(weft_graph_t *g, const char *name, int axis, int ndim,
                                    const char *file, int line, int *out);

/* Checks that each xs[i] is a tensor of g with at least min_ndim axes and
 * the ndim of xs[0]; sets *ndim and the promoted *dt. A NULL xs[i] returns
 * the kept error's status (an earlier constructor's failure). */
weft_status_t weft__array_check_inputs(weft_graph_t *g, const char *name, size_t n,
                                       weft_var_t *const *xs, int min_ndim, const char *file,
                                       int line, int *ndim, weft_dtype_t *dt);

/* x[..., from:to:step, ...] with the slice on axis a (to < 0: past the
 * axis's start, for a negative step), a Subtensor view. */
weft_status_t weft__array_axis_slice(weft_graph_t *g, weft_var_t *x, int a, int64_t from,
                                     int64_t to, int64_t step, const char *file, int line,
                                     weft_var_t **out);

/* Alloc of v to shape[0..ndim) (static form; sizes NULL) or to the size
 * variables sizes[0..ndim) (symbolic form, shape unused), with the
 * constructor's checks; name and the site go into the messages. */
weft_status_t weft__alloc_build(weft_graph_t *g, const char *name, weft_var_t *v, int ndim,
                                const int64_t *shape, weft_var_t *const *sizes,
                                const char *file, int line, weft_var_t **out);

/* The same constructions over axes without static lengths (symshape_ops.c,
 * docs/shapes.md §4), for tile / repeat / pad / roll when x has an unknown
 * length. Arguments are validated by the callers: tile's r[0..d_out) per
 * output axis (x left-padded to d_out), pad's widths wd[step * d + 0/1]. */
bool weft__has_unknown_dim(const weft_var_t *x);
weft_status_t weft__tile_dyn(weft_graph_t *g, weft_var_t *x, int d_out, const int64_t *r,
                             const char *file, int line, weft_var_t **out);
weft_status_t weft__repeat_dyn(weft_graph_t *g, weft_var_t *x, int64_t repeats, int a,
                               const char *file, int line, weft_var_t **out);
weft_status_t weft__roll_dyn(weft_graph_t *g, weft_var_t *x, int64_t shift, int a,
                             const char *file, int line, weft_var_t **out);
weft_status_t weft__pad_dyn(weft_graph_t *g, weft_var_t *x, int nd, const int64_t *wd, int step,
                            weft_pad_mode_t mode, double value, const char *file, int line,
                            weft_var_t **out);
/* Reflect padding of axis a by (before, after) through AxisIndex + Take, for
 * any widths (NumPy's repeated reflection): the static path's route for
 * widths at or above a static length. */
weft_status_t weft__reflect_axis(weft_graph_t *g, weft_var_t *x, int a, int64_t before,
                                 int64_t after, const char *file, int line, weft_var_t **out);

#endif /* WEFT_OPS_SHAPE_ARRAY_INT_H */
