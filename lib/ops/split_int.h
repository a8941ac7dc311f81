/* The fixed split rule shared by the kernels that cut one axis of their
 * iteration space into ranges (the elementwise loops, the reductions): the
 * ranges depend on the shape alone, never on the worker count
 * (docs/execution.md §5). */
#ifndef WEFT_OPS_SPLIT_INT_H
#define WEFT_OPS_SPLIT_INT_H

#include <stddef.h>
#include <stdint.h>

/* At most this many ranges per split axis (more give stealing nothing to
 * balance on 2-16 workers and cost a wake-up each). */
#define WEFT__SPLIT_BLOCKS 16

/* Indices per range of an axis of length len in a loop of count elements:
 * about len / WEFT__SPLIT_BLOCKS, but at least min_split / 2 elements' worth,
 * so a loop just above its threshold min_split still makes 2 ranges and none
 * is too small to pay for its wake-up. */
static inline size_t weft__split_grain(size_t len, size_t count, int64_t min_split)
{
    size_t inner = count / len, by_blocks = (len + WEFT__SPLIT_BLOCKS - 1) / WEFT__SPLIT_BLOCKS;
    size_t by_size = ((size_t)min_split / 2 + inner - 1) / inner;
    return by_blocks > by_size ? by_blocks : by_size;
}

#endif /* WEFT_OPS_SPLIT_INT_H */
