/* Slot reuse in the static memory plan (docs/execution.md §4.6, "The last
 * reader writes over its input"): an elementwise node that is, in every
 * schedule the plan covers, the last node using a planned value's memory
 * writes its own output there, element for element, as its in-place
 * variant would - without the DestroyHandler's ordering edges, so the
 * parallelism of the DAG is untouched.
 *
 * Which nodes may: an elementwise op or Composite, not in place, with one
 * output; the input is a planned value read through its own slot (not a
 * view), of exactly the output's static type (dtype and shape, so no
 * broadcasting and equal byte sizes; both arena handles are contiguous, so
 * equal strides), and the node reads no other alias of it. The kernels
 * compute element i of the output from element i of each input only and
 * already run with the output being an input (their in-place variants).
 *
 * A chain of such values (x, y written over x, z over y, ...) becomes one
 * planned value: its writer is x's, its readers the union of theirs. The
 * plan's rule then keeps the chain's memory apart from every value it is
 * not ordered with, exactly as for one value whose readers write it. */
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"
#include "weft/composite.h"
#include "weft/elemwise.h"

#define NONE32 UINT32_MAX

/* Every reader of a other than node finishes before node starts. */
static bool others_before(const weft__mp_value_t *a, uint32_t node, bool sequential,
                          const weft__mp_reach_t *r)
{
    for (uint32_t k = 0; k < a->n_readers; k++) {
        uint32_t x = a->readers[k];
        if (x == node) continue;
        if (sequential ? x > node : !weft__mp_reach_before(r, x, node)) return false;
    }
    return true;
}

weft_status_t weft__memplan_reuse(uint32_t n_nodes, const uint64_t *edges, size_t ne, size_t n,
                                  const weft__mp_value_t *v, bool sequential, size_t nc,
                                  const weft__mp_reuse_t *c, uint32_t *prev)
{
    for (size_t i = 0; i < n; i++) prev[i] = WEFT__MP_NO_PREV;
    if (nc == 0) return WEFT_OK;
    if (n > WEFT__MP_MAX_VALUES) return WEFT_ERANGE;
    weft__mp_reach_t r = {NULL, NULL, 0};
    weft_status_t st = sequential ? WEFT_OK : weft__memplan_reach(n_nodes, edges, ne, n, v, &r);
    bool *taken = st == WEFT_OK ? calloc(n + 1, sizeof *taken) : NULL;
    if (st == WEFT_OK && !taken) st = WEFT_ENOMEM;
    for (size_t k = 0; st == WEFT_OK && k < nc; k++) {
        /* one value written over each, one value over which each is written */
        if (prev[c[k].out] != WEFT__MP_NO_PREV || taken[c[k].in]) continue;
        if (!others_before(&v[c[k].in], c[k].node, sequential, &r)) continue;
        prev[c[k].out] = c[k].in;
        taken[c[k].in] = true;
    }
    free(taken);
    weft__memplan_reach_free(&r);
    return st;
}

/* ---- candidates ------------------------------------------------------------------- */

/* The op's kernel computes each output element from the same element of
 * input `input` and tolerates the output being that input (what its
 * in-place variant does): elementwise kinds (Switch's condition excepted,
 * as for the in-place variant) and Composite, not already in place. */
static bool overwrites_ok(const weft_op_t *op, size_t input)
{
    weft_elemwise_kind_t k;
    int ip = 0;
    if (weft_elemwise_op_info(op, &k, &ip))
        return ip < 0 && !(k == WEFT_ELEMWISE_SWITCH && input == 0);
    return weft_composite_op_info(op, NULL, NULL, NULL, &ip) && ip < 0;
}

static bool same_static_tensor(const weft_type_t *a, const weft_type_t *b)
{
    return weft_type_kind(a) == WEFT_TYPE_TENSOR && weft_type_is_static(a) &&
           weft_type_is_static(b) && weft_type_equal(a, b);
}

/* Node i's input k is a candidate for its output u: planned, read through
 * its own slot, of u's type, and no other input of i aliases it. */
static bool candidate_input(const weft_function_t *f, const uint32_t *root, uint32_t i,
                            uint32_t k)
{
    const weft__node_slots_t *ns = weft__cnode_slots(f, &f->nodes[i]);
    const uint32_t *in = weft__node_slots_in(ns);
    const weft_apply_t *a = f->nodes[i].apply;
    uint32_t s = in[k];
    if (f->mp.value_of_slot[s] == NONE32 || !overwrites_ok(weft_apply_op(a), k) ||
        !same_static_tensor(weft_var_type(weft_apply_input(a, k)), f->node_out[i].out_types[0]))
        return false;
    for (uint32_t j = 0; j < ns->n_in; j++)
        if (in[j] != s && root[in[j]] == s) return false;
    return true;
}

/* The candidates of every one-output node with a planned output, in node
 * id order (*nc of them, *out the caller's to free). */
static weft_status_t candidates(const weft_function_t *f, const uint32_t *root,
                                weft__mp_reuse_t **out, size_t *nc)
{
    size_t cap = 0;
    for (uint32_t i = 0; i < f->n_nodes; i++) cap += weft__cnode_slots(f, &f->nodes[i])->n_in;
    weft__mp_reuse_t *c = malloc((cap + 1) * sizeof *c);
    if (!c) return WEFT_ENOMEM;
    *nc = 0;
    for (uint32_t i = 0; i < f->n_nodes; i++) {
        const weft__node_slots_t *ns = weft__cnode_slots(f, &f->nodes[i]);
        uint32_t u = f->mp.value_of_slot[f->nodes[i].out_base];
        if (ns->n_out != 1 || u == NONE32) continue;
        for (uint32_t k = 0; k < ns->n_in; k++)
            if (candidate_input(f, root, i, k))
                c[(*nc)++] = (weft__mp_reuse_t){i, f->mp.value_of_slot[weft__node_slots_in(ns)[k]], u};
    }
    *out = c;
    return WEFT_OK;
}

/* ---- folding chains into values ----------------------------------------------------- */

/* Node i's input index reading slot s. */
static uint32_t input_index(const weft_function_t *f, uint32_t i, uint32_t s)
{
    const weft__node_slots_t *ns = weft__cnode_slots(f, &f->nodes[i]);
    uint32_t k = 0;
    while (weft__node_slots_in(ns)[k] != s) k++;
    return k;
}

/* A later member's readers; its writer stands for "no readers" only (it
 * is among the readers of the member before it already). */
static uint32_t member_readers(const weft__mp_value_t *m, bool first)
{
    bool placeholder = m->n_readers == 1 && m->readers[0] == m->writer;
    return first || !placeholder ? m->n_readers : 0;
}

typedef struct fold {
    weft__mp_value_t *vals;
    uint32_t *slot, *storage, *next;
} fold_t;

static void fold_free(fold_t *fo)
{
    free(fo->vals);
    free(fo->slot);
    free(fo->storage);
    free(fo->next);
}

/* Replaces mp's values by one per chain (prev: weft__memplan_reuse's). */
static weft_status_t fold(weft_function_t *f, const uint32_t *prev)
{
    weft__memplan_t *mp = &f->mp;
    fold_t fo = {malloc((mp->n + 1) * sizeof *fo.vals), malloc((mp->n + 1) * sizeof *fo.slot),
                 NULL, malloc((mp->n + 1) * sizeof *fo.next)};
    size_t total = 0;
    for (uint32_t v = 0; v < mp->n; v++) total += mp->vals[v].n_readers;
    fo.storage = malloc((total + 1) * sizeof *fo.storage);
    mp->next_member = malloc((f->n_slots + 1) * sizeof *mp->next_member);
    mp->reuse_in = malloc((f->n_nodes + 1) * sizeof *mp->reuse_in);
    if (!fo.vals || !fo.slot || !fo.storage || !fo.next || !mp->next_member || !mp->reuse_in) {
        fold_free(&fo);
        return WEFT_ENOMEM;
    }
    memset(fo.next, 0xff, (mp->n + 1) * sizeof *fo.next);
    memset(mp->next_member, 0xff, (f->n_slots + 1) * sizeof *mp->next_member);
    memset(mp->reuse_in, 0xff, (f->n_nodes + 1) * sizeof *mp->reuse_in);
    for (uint32_t v = 0; v < mp->n; v++)
        if (prev[v] != WEFT__MP_NO_PREV) fo.next[prev[v]] = v;
    uint32_t ng = 0, at = 0;
    /* values are in writer order, so a chain's head comes first */
    for (uint32_t v = 0; v < mp->n; v++) {
        if (prev[v] != WEFT__MP_NO_PREV) continue;
        weft__mp_value_t *g = &fo.vals[ng];
        *g = (weft__mp_value_t){mp->vals[v].writer, 0, fo.storage + at};
        fo.slot[ng] = mp->slot[v];
        for (uint32_t m = v; m != NONE32; m = fo.next[m]) {
            const weft__mp_value_t *mv = &mp->vals[m];
            uint32_t nr = member_readers(mv, m == v);
            memcpy(fo.storage + at, mv->readers, nr * sizeof *fo.storage);
            at += nr;
            g->n_readers += nr;
            mp->value_of_slot[mp->slot[m]] = ng;
            if (m == v) continue;
            mp->next_member[mp->slot[prev[m]]] = mp->slot[m];
            mp->reuse_in[mv->writer] = input_index(f, mv->writer, mp->slot[prev[m]]);
        }
        ng++;
    }
    free(mp->vals);
    free(mp->slot);
    free(mp->reader_storage);
    free(fo.next);
    mp->vals = fo.vals;
    mp->slot = fo.slot;
    mp->reader_storage = fo.storage;
    mp->n = ng;
    return WEFT_OK;
}

weft_status_t weft__arena_reuse(weft_function_t *f, const uint32_t *root, bool sequential)
{
    weft__memplan_t *mp = &f->mp;
    weft__mp_reuse_t *c = NULL;
    size_t nc = 0;
    uint32_t *prev = malloc((mp->n + 1) * sizeof *prev);
    weft_status_t st = prev ? candidates(f, root, &c, &nc) : WEFT_ENOMEM;
    if (st == WEFT_OK)
        st = weft__memplan_reuse(f->n_nodes, f->edges, f->n_edges, mp->n, mp->vals, sequential,
                                 nc, c, prev);
    bool any = false;
    for (uint32_t v = 0; st == WEFT_OK && v < mp->n; v++) any |= prev[v] != WEFT__MP_NO_PREV;
    if (st == WEFT_ERANGE) st = WEFT_OK; /* too large to plan: no reuse (nor plan) */
    if (st == WEFT_OK && any) st = fold(f, prev);
    free(c);
    free(prev);
    return st;
}
