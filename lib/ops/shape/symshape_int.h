/* Helpers of the symbolic-shape ops (weft/symshape.h): integer sizes read
 * from graph constants at construction and from tensors at run time, and
 * the size-input checks. Not part of the API. */
#ifndef WEFT_OPS_SHAPE_SYMSHAPE_INT_H
#define WEFT_OPS_SHAPE_SYMSHAPE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "weft/graph.h"
#include "weft/op.h"
#include "weft/tensor.h"

extern const weft_op_class_t weft__shape_class;
extern const weft_op_class_t weft__shape_i_class;
extern const weft_op_class_t weft__arange_class;
extern const weft_op_class_t weft__linspace_class;
extern const weft_op_class_t weft__axis_index_class;

/* AxisIndex's modes and props (axis_index.c; no padding: compared bytewise). */
typedef enum weft__axis_index_mode {
    WEFT__AXIS_ROLL = 0,
    WEFT__AXIS_EDGE = 1,
    WEFT__AXIS_REFLECT = 2,
    WEFT__AXIS_TILE = 3,
    WEFT__AXIS_REPEAT = 4,
    WEFT__AXIS_REPEAT_VEC = 5,
} weft__axis_index_mode_t;
#define WEFT__AXIS_INDEX_MODES 6
typedef struct weft__axis_index_props {
    int64_t mode;
    int64_t a, b;
} weft__axis_index_props_t;
/* Why props p are invalid, or NULL. */
const char *weft__axis_index_check(const weft__axis_index_props_t *p);

/* arange's and linspace's values (ranges.c, NumPy's rules as weft/array_ops.h
 * states them): the length of arange(start, stop, step) (0 when negative;
 * may exceed int64), and elements from..from+n of each into v (float64, to
 * be converted to dtype). */
double weft__arange_len(double start, double stop, double step);
void weft__arange_fill(double start, double step, weft_dtype_t dtype, int64_t from, int64_t n,
                       double *v);
void weft__linspace_fill(double start, double stop, int64_t num, bool endpoint, int64_t from,
                         int64_t n, double *v);
/* The most elements arange / linspace / eye build (2^31). */
#define WEFT__RANGE_MAX_LEN ((int64_t)1 << 31)

/* Whether dt is a signed or unsigned integer dtype (not bool). */
bool weft__dtype_is_int(weft_dtype_t dt);
/* Element k (in elements from data) of an integer dtype dt as int64; a
 * uint64 above INT64_MAX reads as INT64_MAX (too big for any size). */
int64_t weft__int_at(const void *data, weft_dtype_t dt, int64_t k);
/* Element i of the 0-d or 1-d integer tensor t (strided). */
int64_t weft__tensor_int_at(const weft_tensor_t *t, int64_t i);
/* Whether v is a constant of an integer dtype with at least i + 1
 * elements; *out its element i (C order). */
bool weft__const_int_at(const weft_var_t *v, int64_t i, int64_t *out);
/* The static value of size variable v (an integer 0-d): a constant's value,
 * Shape_i's static length, else WEFT_DIM_UNKNOWN (also for a negative
 * constant, which the kernel rejects). */
int64_t weft__size_static(const weft_var_t *v);
/* Entry d of shape vector v (weft_reshape_sym) when the graph fixes it: an
 * element of a constant v, or of a v built by weft_stack from 0-d sizes the
 * size's static value (a constant, possibly -1, or a static Shape_i). */
bool weft__shape_entry_static(const weft_var_t *v, int64_t d, int64_t *out);
/* Checks that v is a 0-d tensor of g (integer dtype when ints, else any real
 * dtype): WEFT_ETYPE / WEFT_EFOREIGN "NAME (at FILE:LINE): input I V is ...";
 * a NULL v returns the kept error's status. */
weft_status_t weft__check_size_input(weft_graph_t *g, const char *name, size_t i, weft_var_t *v,
                                     bool ints, const char *file, int line);

#endif /* WEFT_OPS_SHAPE_SYMSHAPE_INT_H */
