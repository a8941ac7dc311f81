/* The array-building op classes (weft/array_ops.h), for the built-in class
 * list and their constructors. Not part of the API. */
#ifndef WEFT_OPS_SHAPE_ARRAY_INT_H
#define WEFT_OPS_SHAPE_ARRAY_INT_H

#include "weft/op.h"

extern const weft_op_class_t weft__join_class;

#endif /* WEFT_OPS_SHAPE_ARRAY_INT_H */
