/* Umbrella header: includes every public weft header. */
#ifndef WEFT_WEFT_H
#define WEFT_WEFT_H

#include "weft/alloc.h"
#include "weft/export.h"
#include "weft/status.h"

#endif /* WEFT_WEFT_H */
