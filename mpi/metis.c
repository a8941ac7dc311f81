/* Automatic placement with METIS (docs/distributed.md §2.2): the apply nodes
 * not fixed by the caller's owner function or by being collectives form an
 * undirected graph, vertex weight = the node's estimated cost
 * (weft/node_cost.h), edge weight = the bytes of the values between them;
 * METIS_PartGraphKway cuts it into one part per rank, balancing the cost and
 * minimizing the bytes cut. Its seed is fixed, and its input is the same on
 * every rank, so every rank gets the same parts. */
#include <metis.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_int.h"
#include "weft/node_cost.h"

typedef struct edge {
    idx_t a, b, w;
} edge_t;

static int cmp_edge(const void *x, const void *y)
{
    const edge_t *e = x, *f = y;
    if (e->a != f->a) return e->a < f->a ? -1 : 1;
    return e->b < f->b ? -1 : e->b > f->b;
}

/* Bytes of v's value (a non-static length counts as 256, as the cost
 * estimate does), in units of 64 bytes, at least 1, at most 10^7. */
static idx_t var_weight(const weft_var_t *v)
{
    const weft_type_t *t = weft_var_type(v);
    if (weft_type_kind(t) != WEFT_TYPE_TENSOR) return 1;
    double b = (double)weft_dtype_size(weft_type_dtype(t));
    for (int i = 0; i < weft_type_ndim(t); i++) {
        int64_t d = weft_type_dim(t, i);
        b *= d < 0 ? 256.0 : (double)d;
    }
    b = b / 64.0 + 1.0;
    return (idx_t)(b > 1e7 ? 1e7 : b);
}

/* Cost in microseconds, at least 1, at most 10^6. */
static idx_t node_weight(const weft_apply_t *a)
{
    double us = weft_node_cost_estimate(a) / 1000.0 + 1.0;
    return (idx_t)(us > 1e6 ? 1e6 : us);
}

/* Both directions of every producer-consumer pair among free nodes. */
static size_t list_edges(const wm_part_t *p, const idx_t *vid, edge_t *e)
{
    size_t n = 0;
    for (size_t j = 0; j < p->n_applies; j++) {
        if (vid[j] < 0) continue;
        const weft_apply_t *a = p->applies[j];
        for (size_t i = 0; i < weft_apply_n_inputs(a); i++) {
            weft_var_t *v = weft_apply_input(a, i);
            weft_apply_t *src = weft_var_owner(v);
            if (!src) continue;
            size_t lo = 0, hi = j; /* the producer comes earlier in creation order */
            while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (weft_apply_id(p->applies[mid]) < weft_apply_id(src)) lo = mid + 1;
                else hi = mid;
            }
            if (lo >= j || p->applies[lo] != src || vid[lo] < 0) continue;
            idx_t w = var_weight(v);
            e[n++] = (edge_t){vid[j], vid[lo], w};
            e[n++] = (edge_t){vid[lo], vid[j], w};
        }
    }
    return n;
}

/* CSR of the merged edges (duplicates summed). */
static void build_csr(idx_t nv, edge_t *e, size_t ne, idx_t *xadj, idx_t *adj, idx_t *w)
{
    qsort(e, ne, sizeof *e, cmp_edge);
    size_t k = 0;
    memset(xadj, 0, (size_t)(nv + 1) * sizeof *xadj);
    for (size_t i = 0; i < ne; i++) {
        if (k > 0 && e[i].a == e[i - 1].a && e[i].b == adj[k - 1]) {
            w[k - 1] += e[i].w;
            continue;
        }
        adj[k] = e[i].b;
        w[k] = e[i].w;
        xadj[e[i].a + 1]++;
        k++;
    }
    for (idx_t v = 0; v < nv; v++) xadj[v + 1] += xadj[v];
}

static weft_status_t run_metis(idx_t nv, idx_t *xadj, idx_t *adj, idx_t *vw, idx_t *ew,
                               const weft_mpi_options_t *o, int n_ranks, idx_t *part)
{
    idx_t ncon = 1, nparts = n_ranks, objval = 0;
    idx_t options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_SEED] = (idx_t)o->metis_seed;
    options[METIS_OPTION_NUMBERING] = 0;
    int rc = METIS_PartGraphKway(&nv, &ncon, xadj, adj, vw, NULL, ew, &nparts, NULL, NULL,
                                 options, &objval, part);
    if (rc != METIS_OK)
        return wm__error(WEFT_ESYSTEM, "placement: METIS_PartGraphKway failed (%d) on %ld nodes",
                         rc, (long)nv);
    return WEFT_OK;
}

weft_status_t wm__metis(const wm_part_t *p, const weft_mpi_options_t *o, const bool *fixed,
                        int *node_rank)
{
    size_t n = p->n_applies, ne_max = 0;
    for (size_t j = 0; j < n; j++) ne_max += 2 * weft_apply_n_inputs(p->applies[j]);
    idx_t *vid = malloc((n + 1) * sizeof *vid), *vw = malloc((n + 1) * sizeof *vw);
    idx_t *xadj = malloc((n + 2) * sizeof *xadj), *part = malloc((n + 1) * sizeof *part);
    edge_t *e = malloc((ne_max + 1) * sizeof *e);
    idx_t *adj = malloc((ne_max + 1) * sizeof *adj), *ew = malloc((ne_max + 1) * sizeof *ew);
    weft_status_t st = WEFT_OK;
    if (!vid || !vw || !xadj || !part || !e || !adj || !ew) {
        st = wm__error(WEFT_ENOMEM, "placement: out of memory");
        goto out;
    }
    idx_t nv = 0;
    for (size_t j = 0; j < n; j++) {
        vid[j] = fixed[j] ? -1 : nv;
        if (!fixed[j]) vw[nv++] = node_weight(p->applies[j]);
    }
    if (nv == 0) goto out;
    build_csr(nv, e, list_edges(p, vid, e), xadj, adj, ew);
    if (p->n_ranks == 1) memset(part, 0, (size_t)nv * sizeof *part);
    else st = run_metis(nv, xadj, adj, vw, ew, o, p->n_ranks, part);
    for (size_t j = 0; j < n && st == WEFT_OK; j++)
        if (vid[j] >= 0) node_rank[j] = (int)part[vid[j]];
out:
    free(vid);
    free(vw);
    free(xadj);
    free(part);
    free(e);
    free(adj);
    free(ew);
    return st;
}
