/* Recognizing IfElse nodes (lib/graph/ifelse_id.c) where the op library is
 * out of reach: the lazy runtimes (lib/compile's guards, lib/eval) and the
 * rewrites ask through here. The class lives in lib/ops (weft/ifelse.h);
 * the one registered under "IfElse" is it (the registry refuses a second
 * class of a built-in's name), so a user's class of that name that was never
 * registered is not taken for it. Interface of weft_graph. */
#ifndef WEFT_GRAPH_IFELSE_ID_H
#define WEFT_GRAPH_IFELSE_ID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/graph.h"

/* IfElse's props (lib/ops/control/ifelse.c), here so that the rewrites can
 * make an IfElse a view (ifelse_inplace, lib/rewrite/ifelse_rewrites.c). No
 * padding: compared and hashed bytewise. */
typedef struct weft__ifelse_props {
    uint32_t n;      /* (then, else) pairs, 1..WEFT_IFELSE_MAX */
    int32_t as_view; /* 1: output i views then_i when taken (view_map) */
} weft__ifelse_props_t;

/* The number of (then, else) pairs when a is an IfElse node, else 0. Its
 * inputs are (cond, then_0..then_{n-1}, else_0..else_{n-1}). */
size_t weft__ifelse_pairs(const weft_apply_t *a);

/* Which input positions of an IfElse node of n pairs the branch `taken`
 * needs: position k > 0 belongs to the then side for k <= n. */
static inline bool weft__ifelse_is_then(size_t n, size_t k)
{
    return k >= 1 && k <= n;
}
static inline bool weft__ifelse_is_else(size_t n, size_t k)
{
    return k > n && k <= 2 * n;
}

/* A condition value read as a double is true when nonzero (NaN included). */
static inline bool weft__ifelse_cond_true(double v)
{
    return v != 0.0;
}

#endif /* WEFT_GRAPH_IFELSE_ID_H */
