/* Umbrella header: includes every public weft header. */
#ifndef WEFT_WEFT_H
#define WEFT_WEFT_H

#include "weft/alloc.h"
#include "weft/export.h"
#include "weft/feature.h"
#include "weft/fgraph.h"
#include "weft/graph.h"
#include "weft/op.h"
#include "weft/status.h"
#include "weft/type.h"

#endif /* WEFT_WEFT_H */
