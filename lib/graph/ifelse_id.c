/* Recognizing IfElse nodes by their registered class (graph/ifelse_id.h). */
#include <string.h>

#include "graph/ifelse_id.h"
#include "weft/op.h"

size_t weft__ifelse_pairs(const weft_apply_t *a)
{
    const weft_op_class_t *cls = weft_op_class(weft_apply_op(a));
    /* the name test keeps the registry's lock off every other node */
    if (strcmp(cls->name, "IfElse") != 0 || weft_op_class_find("IfElse") != cls) return 0;
    return (weft_apply_n_inputs(a) - 1) / 2;
}
