/* Calls into lib/fgraph: links only in a module whose dependency closure
 * holds weft_fgraph (tests/layering). */
#include "weft/fgraph.h"

size_t weft_probe_call(const weft_fgraph_t *fg);
size_t weft_probe_call(const weft_fgraph_t *fg)
{
    return weft_fgraph_n_inputs(fg);
}
