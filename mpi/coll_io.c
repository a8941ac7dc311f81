/* The user-level collectives' gradients (the SPMD view: the cost is the sum
 * of every rank's cost; docs/distributed.md §5) and their JSON props codec
 * (docs/graph-format.md, op "MpiCollective"). */
#include <string.h>

#include "mpi_int.h"
#include "weft/json_props.h"

/* Each kind's gradient kind: allreduce <-> allreduce, broadcast <-> reduce,
 * gather <-> scatter. */
static const int grad_kind[5] = {WM_ALLREDUCE, WM_REDUCE, WM_SCATTER, WM_BCAST, WM_GATHER};

weft_status_t wm__coll_grad(weft_graph_t *g, const weft_apply_t *node,
                            weft_var_t *const *output_grads, weft_var_t **input_grads)
{
    const wm_coll_props_t *p = weft_op_props(weft_apply_op(node));
    if (!output_grads[0]) return WEFT_OK; /* the output does not reach the cost */
    const char *file = NULL;
    int line = 0;
    weft_var_trace(weft_apply_output(node, 0), &file, &line);
    wm_coll_props_t q = {grad_kind[p->kind], p->root, p->n_ranks};
    input_grads[0] = wm__coll_call(g, output_grads[0], q, file ? file : "?", line);
    return input_grads[0] ? WEFT_OK : weft_graph_error(g);
}

static const char *const kind_names[5] = {"allreduce", "broadcast", "gather", "reduce",
                                          "scatter"};

weft_status_t wm__coll_to_json(const weft_op_t *op, weft_json_props_t *out)
{
    const wm_coll_props_t *p = weft_op_props(op);
    weft_status_t st = weft_json_props_put_string(out, "kind", kind_names[p->kind]);
    if (st == WEFT_OK) st = weft_json_props_put_int(out, "root", p->root);
    if (st == WEFT_OK) st = weft_json_props_put_int(out, "n_ranks", p->n_ranks);
    return st;
}

weft_status_t wm__coll_from_json(weft_graph_t *g, const weft_op_class_t *cls,
                                 const weft_json_props_t *in, const weft_op_t **out)
{
    const char *kind = NULL;
    int64_t root = 0, n = 0;
    weft_status_t st = weft_json_props_get_string(in, "kind", &kind);
    if (st == WEFT_OK) st = weft_json_props_get_int(in, "root", &root);
    if (st == WEFT_OK) st = weft_json_props_get_int(in, "n_ranks", &n);
    if (st != WEFT_OK) return st;
    wm_coll_props_t p = {-1, (int32_t)root, (int32_t)n};
    for (int k = 0; k < 5; k++)
        if (strcmp(kind, kind_names[k]) == 0) p.kind = k;
    if (p.kind < 0)
        return weft_json_props_error(in, WEFT_EPARSE, "kind '%s' is not allreduce, broadcast, "
                                     "gather, reduce or scatter", kind);
    bool rooted = p.kind == WM_GATHER || p.kind == WM_SCATTER;
    if (n < 1 || n > INT32_MAX || root < 0 || root > INT32_MAX || (rooted && root >= n) ||
        (!rooted && n != 1) || (p.kind == WM_ALLREDUCE && root != 0))
        return weft_json_props_error(in, WEFT_EPARSE, "root %lld and n_ranks %lld do not fit "
                                     "an %s", (long long)root, (long long)n, kind);
    return weft_op_create(g, cls, &p, out);
}
