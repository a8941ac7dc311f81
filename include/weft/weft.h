/* Umbrella header: includes every public weft header. */
#ifndef WEFT_WEFT_H
#define WEFT_WEFT_H

#include "weft/alloc.h"
#include "weft/destroy.h"
#include "weft/elemwise.h"
#include "weft/eval.h"
#include "weft/export.h"
#include "weft/feature.h"
#include "weft/fgraph.h"
#include "weft/function.h"
#include "weft/grad.h"
#include "weft/graph.h"
#include "weft/graph_io.h"
#include "weft/json_props.h"
#include "weft/kernel.h"
#include "weft/linalg.h"
#include "weft/npy.h"
#include "weft/op.h"
#include "weft/opfromgraph.h"
#include "weft/ops.h"
#include "weft/profile.h"
#include "weft/reduce.h"
#include "weft/rewrite.h"
#include "weft/rewrite_db.h"
#include "weft/rewrite_pattern.h"
#include "weft/sched.h"
#include "weft/shape_ops.h"
#include "weft/status.h"
#include "weft/tensor.h"
#include "weft/type.h"

#endif /* WEFT_WEFT_H */
