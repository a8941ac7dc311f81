/* Critical path first across ranks (docs/distributed.md §3.5). Each rank's
 * local function runs its ready nodes longest path first
 * (weft_function_options_t.critical_path_first), by bottom levels of its
 * local graph. There a send node is a sink: by its own cost it would weigh
 * nothing, and the rank would send - and so free its peer - last. So a send
 * node's cost (the MpiSend class's cost_ns hook, ops.c) stands for the work
 * its message feeds: the bottom level, over the whole partitioned graph
 * that every rank holds alike, of the value's readers, plus the transfer.
 * A collective start likewise (a gradient's allreduce starts as soon as the
 * gradient is ready, beside the rest of the backward pass). */
#include <stdlib.h>

#include "mpi_int.h"
#include "weft/node_cost.h"

/* A transfer's estimate: a shared-memory or network round of latency plus
 * the bytes at about 5 GB/s (docs/distributed.md §9 has measured figures). */
#define TAIL_LATENCY_NS 5000.0
#define TAIL_NS_PER_BYTE 0.2

static void raise_to(double *x, double v)
{
    if (v > *x) *x = v;
}

/* A value's bytes (a length unknown statically counts as 1). */
static double value_bytes(const weft_var_t *v)
{
    const weft_type_t *t = weft_var_type(v);
    return (double)weft_dtype_size(weft_type_dtype(t)) * wm__type_elements(t);
}

/* The collectives' count and each one's tail, in creation order (local.c
 * lower_coll's index). */
static weft_status_t collective_tails(wm_part_t *p, const double *var_bl)
{
    int root;
    p->n_colls = 0;
    for (size_t j = 0; j < p->n_applies; j++)
        p->n_colls += wm__coll_kind(weft_apply_op(p->applies[j]), &root) >= 0;
    p->coll_tail = malloc((p->n_colls + 1) * sizeof *p->coll_tail);
    if (!p->coll_tail) return wm__error(WEFT_ENOMEM, "partition: out of memory");
    for (size_t j = 0, k = 0; j < p->n_applies; j++) {
        const weft_apply_t *a = p->applies[j];
        if (wm__coll_kind(weft_apply_op(a), &root) < 0) continue;
        weft_var_t *y = weft_apply_output(a, 0);
        size_t pos = wm__var_pos(p, y);
        p->coll_tail[k++] = (pos < p->n_vars ? var_bl[pos] : 0) + TAIL_LATENCY_NS +
                            TAIL_NS_PER_BYTE * value_bytes(y);
    }
    return WEFT_OK;
}

weft_status_t wm__message_tails(wm_part_t *p)
{
    double *var_bl = calloc(p->n_vars + 1, sizeof *var_bl);
    if (!var_bl) return wm__error(WEFT_ENOMEM, "partition: out of memory");
    /* creation order is topological: readers are seen before producers */
    for (size_t j = p->n_applies; j-- > 0;) {
        const weft_apply_t *a = p->applies[j];
        double below = 0;
        for (size_t i = 0; i < weft_apply_n_outputs(a); i++) {
            size_t pos = wm__var_pos(p, weft_apply_output(a, i));
            if (pos < p->n_vars) raise_to(&below, var_bl[pos]);
        }
        double bl = weft_node_cost_estimate(a) + below;
        for (size_t i = 0; i < weft_apply_n_inputs(a); i++) {
            size_t pos = wm__var_pos(p, weft_apply_input(a, i));
            if (pos < p->n_vars) raise_to(&var_bl[pos], bl);
        }
    }
    for (size_t m = 0; m < p->n_msgs; m++) {
        wm_msg_t *g = &p->msgs[m];
        g->tail_ns = var_bl[g->var_pos] + TAIL_LATENCY_NS + TAIL_NS_PER_BYTE * (double)g->bytes;
    }
    weft_status_t st = collective_tails(p, var_bl);
    free(var_bl);
    return st;
}
