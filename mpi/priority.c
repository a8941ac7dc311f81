/* Critical path first across ranks (docs/distributed.md §3.5). Each rank's
 * local function runs its ready nodes longest path first
 * (weft_function_options_t.critical_path_first), by bottom levels of its
 * local graph. There a send node is a sink: by its own cost it would weigh
 * nothing, and the rank would send - and so free its peer - last. So a send
 * node's cost (the MpiSend class's cost_ns hook, ops.c) stands for the work
 * its message feeds: the bottom level, over the whole partitioned graph
 * that every rank holds alike, of the value's readers, plus the transfer. */
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
    free(var_bl);
    return WEFT_OK;
}
