/* The input preparation hook of the JSON graph loader: builds a node's
 * inputs the way the C constructors would for its op, so a stored graph
 * means what the same call in C means (docs/graph-format.md §5: elementwise
 * nodes left-pad lower-rank inputs with DimShuffles, as weft_add does).
 * lib/io cannot know which classes broadcast (it does not know ops,
 * docs/architecture.md), so lib/catalog, which knows both, sets the hook at
 * load. Internal: not part of the API. */
#ifndef WEFT_GRAPH_INPUT_PREP_H
#define WEFT_GRAPH_INPUT_PREP_H

#include <stddef.h>

#include "weft/graph.h"
#include "weft/op.h"
#include "weft/status.h"

/* Writes in[0..n_in) or their prepared replacements to out[0..n_in); an
 * error is recorded on g. file/line: the node's creation site. */
typedef weft_status_t (*weft__input_prep_fn)(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                              weft_var_t *const *in, const char *file, int line,
                                              weft_var_t **out);

/* Set once, from a load-time constructor, before any thread can load a
 * graph; NULL (the default) leaves inputs as they are. */
void weft__input_prep_set(weft__input_prep_fn fn);
weft__input_prep_fn weft__input_prep_get(void);

#endif /* WEFT_GRAPH_INPUT_PREP_H */
