/* The inline_ofg_expansion rewrite (docs/rewrites.md): replaces each node
 * whose OpFromGraph has the inline flag by a copy of its inner graph bound to
 * the node's inputs. lib/catalog lists it in the default rewrite database;
 * weft_ofg_register_rewrites adds it to any other database. */

#include "ofg_int.h"
#include "weft/rewrite.h"
#include "weft/rewrite_db.h"

static weft_status_t inline_transform(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                      weft_rewrite_result_t *res)
{
    (void)user;
    const weft__ofg_t *d = weft__ofg_get(weft_apply_op(node));
    if (!d || !d->inline_expand) return WEFT_OK;
    weft_var_t *outs[WEFT_OP_MAX_OUTPUTS];
    weft_status_t s = weft_ofg_expand(weft_fgraph_graph(fg), node, outs);
    if (s != WEFT_OK) return s;
    return weft_rewrite_result_outputs(res, d->n_out, outs);
}

weft_status_t weft_ofg_register_rewrites(weft_rewrite_db_t *db)
{
    if (!db) return WEFT_EINVAL;
    if (weft_rewrite_db_has(db, WEFT_OFG_INLINE_REWRITE)) return WEFT_OK;
    const weft_op_class_t *cls[1] = {weft_ofg_class()};
    weft_node_rewriter_desc_t nd = WEFT_NODE_REWRITER_DESC_INIT;
    nd.name = "local_inline_ofg";
    nd.transform = inline_transform;
    nd.n_classes = 1;
    nd.classes = cls;
    weft_rewriter_t *node = NULL, *walk = NULL;
    weft_status_t s = weft_rewriter_node_create(&nd, &node);
    if (s != WEFT_OK) return s;
    /* in2out: producers first, so an expansion that yields inline nodes
     * (nested OpFromGraphs) has them queued and expanded in the same walk. */
    s = weft_rewriter_walk_create(WEFT_OFG_INLINE_REWRITE, WEFT_WALK_IN2OUT, false, 1, &node,
                                  &walk);
    if (s != WEFT_OK) return s;
    const char *tags[3] = {"fast_run", "fast_compile", "inline"};
    s = weft_rewrite_db_register(db, WEFT_OFG_INLINE_REWRITE, walk, -0.01, 3, tags);
    return s == WEFT_EDUPLICATE ? WEFT_OK : s; /* registered concurrently: fine */
}
