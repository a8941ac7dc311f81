/* Brute-force checks of the static memory plan: see memplan_check.h. */
#include "compile/memplan_check.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"

static void dfs_from(uint32_t a, const uint32_t *start, const uint32_t *succ, uint8_t *row,
                     uint32_t *stack)
{
    size_t top = 0;
    for (uint32_t k = start[a]; k < start[a + 1]; k++) stack[top++] = succ[k];
    while (top) {
        uint32_t x = stack[--top];
        if (row[x]) continue;
        row[x] = 1;
        for (uint32_t k = start[x]; k < start[x + 1]; k++)
            if (!row[succ[k]]) stack[top++] = succ[k];
    }
}

void memplan_check_reach(uint32_t n, const uint64_t *edges, size_t ne, uint8_t *reach)
{
    uint32_t *start = calloc(n + 2, sizeof *start), *succ = malloc((ne + 1) * sizeof *succ);
    uint32_t *stack = malloc((ne + n + 1) * sizeof *stack), *fill = calloc(n + 1, sizeof *fill);
    memset(reach, 0, (size_t)n * n);
    for (size_t k = 0; k < ne; k++) start[(edges[k] >> 32) + 1]++;
    for (uint32_t x = 0; x < n; x++) start[x + 1] += start[x];
    for (size_t k = 0; k < ne; k++) {
        uint32_t a = (uint32_t)(edges[k] >> 32);
        succ[start[a] + fill[a]++] = (uint32_t)edges[k];
    }
    for (uint32_t a = 0; a < n; a++) dfs_from(a, start, succ, reach + (size_t)a * n, stack);
    free(start);
    free(succ);
    free(stack);
    free(fill);
}

/* Whether slot x's value lives in slot v's memory: x is v, or x is an
 * output that some view_map / destroy_map entry ties to an input whose value
 * lives there (every entry followed, not only the first). */
static bool lives_in(const weft_function_t *f, const uint32_t *producer, uint32_t x, uint32_t v)
{
    if (x == v) return true;
    uint32_t i = producer[x];
    if (i == UINT32_MAX) return false;
    const weft__cnode_t *n = &f->nodes[i];
    const weft__node_slots_t *ns = weft__cnode_slots(f, n);
    const weft_op_alias_t *e[2];
    size_t cnt[2];
    weft_op_view_map(weft_apply_op(n->apply), &e[0], &cnt[0]);
    weft_op_destroy_map(weft_apply_op(n->apply), &e[1], &cnt[1]);
    for (int m = 0; m < 2; m++)
        for (size_t k = 0; k < cnt[m]; k++)
            if (e[m][k].output == x - n->out_base &&
                lives_in(f, producer, weft__node_slots_in(ns)[e[m][k].input], v))
                return true;
    return false;
}

static bool is_reader(const weft__mp_value_t *val, uint32_t node)
{
    for (uint32_t r = 0; r < val->n_readers; r++)
        if (val->readers[r] == node) return true;
    return false;
}

/* The slot after s in its value's chain (slot reuse), or UINT32_MAX. */
static uint32_t next_slot(const weft__memplan_t *mp, uint32_t s)
{
    return mp->next_member ? mp->next_member[s] : UINT32_MAX;
}

/* Whether node i reads slot s's memory (through s or an alias of it). */
static bool uses(const weft_function_t *f, const uint32_t *producer, uint32_t i, uint32_t s)
{
    const weft__node_slots_t *ns = weft__cnode_slots(f, &f->nodes[i]);
    for (uint32_t k = 0; k < ns->n_in; k++)
        if (lives_in(f, producer, weft__node_slots_in(ns)[k], s)) return true;
    return false;
}

/* Violations: a node using the memory of one of value v's slots that v's
 * reader list lacks. */
static size_t check_readers(const weft_function_t *f, const uint32_t *producer, uint32_t v)
{
    size_t bad = 0;
    const weft__memplan_t *mp = &f->mp;
    for (uint32_t s = mp->slot[v]; s != UINT32_MAX; s = next_slot(mp, s))
        for (uint32_t i = 0; i < f->n_nodes; i++)
            bad += uses(f, producer, i, s) && !is_reader(&mp->vals[v], i);
    return bad;
}

/* Violations of slot reuse in value v's chain: slot m written over slot p
 * by node w, which must read p itself (no other alias of p), have p's
 * exact type, and be the last user of p's memory: every other node using
 * it reaches w. */
static size_t check_chain(const weft_function_t *f, const uint32_t *producer, const uint8_t *reach,
                          uint32_t v)
{
    size_t bad = 0;
    const weft__memplan_t *mp = &f->mp;
    for (uint32_t p = mp->slot[v], m; (m = next_slot(mp, p)) != UINT32_MAX; p = m) {
        uint32_t w = producer[m];
        const weft__node_slots_t *ns = weft__cnode_slots(f, &f->nodes[w]);
        const weft_apply_t *a = f->nodes[w].apply;
        bool reads_p = false;
        for (uint32_t k = 0; k < ns->n_in; k++) {
            uint32_t s = weft__node_slots_in(ns)[k];
            if (s == p)
                reads_p = weft_type_equal(weft_var_type(weft_apply_input(a, k)),
                                          f->node_out[w].out_types[m - f->nodes[w].out_base]);
            else
                bad += lives_in(f, producer, s, p);
        }
        bad += !reads_p;
        for (uint32_t i = 0; i < f->n_nodes; i++)
            bad += i != w && uses(f, producer, i, p) && !reach[(size_t)i * f->n_nodes + w];
    }
    return bad;
}

/* The arena handle of state cs for value v (NULL: none); the slots of a
 * chain must hold handles on one range (else *bad grows). */
static const weft_tensor_t *value_handle(const weft__call_state_t *cs, uint32_t v, size_t *bad)
{
    const weft__memplan_t *mp = &cs->f->mp;
    const weft_tensor_t *h = cs->arena_h[mp->slot[v]];
    for (uint32_t s = next_slot(mp, mp->slot[v]); s != UINT32_MAX; s = next_slot(mp, s)) {
        const weft_tensor_t *t = cs->arena_h[s];
        *bad += t && (!h || weft_tensor_data(t) != weft_tensor_data(h) ||
                      weft_tensor_size(t) != weft_tensor_size(h));
    }
    return h;
}

/* Every node using a's memory finishes before b's writer starts. */
static bool ordered(const weft_function_t *f, const uint8_t *reach, uint32_t a, uint32_t b)
{
    const weft__mp_value_t *va = &f->mp.vals[a], *vb = &f->mp.vals[b];
    for (uint32_t r = 0; r < va->n_readers; r++)
        if (!reach[(size_t)va->readers[r] * f->n_nodes + vb->writer]) return false;
    return true;
}

static bool overlap(const weft_tensor_t *a, const weft_tensor_t *b)
{
    const char *pa = weft_tensor_data(a), *pb = weft_tensor_data(b);
    size_t na = weft_tensor_size(a) * weft_dtype_size(weft_tensor_dtype(a));
    size_t nb = weft_tensor_size(b) * weft_dtype_size(weft_tensor_dtype(b));
    return na && nb && pa < pb + nb && pb < pa + na;
}

size_t memplan_check_reuses(const weft_function_t *f)
{
    size_t n = 0;
    for (uint32_t i = 0; f->mp.reuse_in && i < f->n_nodes; i++) n += f->mp.reuse_in[i] != UINT32_MAX;
    return n;
}

size_t memplan_check_function(const weft_function_t *f, size_t *pairs_out)
{
    const weft__memplan_t *mp = &f->mp;
    uint32_t n = f->n_nodes;
    size_t bad = 0, pairs = 0, cw = weft__memplan_words(mp->n);
    uint8_t *reach = malloc((size_t)n * n + 1);
    uint32_t *producer = malloc((f->n_slots + 1) * sizeof *producer);
    memset(producer, 0xff, (f->n_slots + 1) * sizeof *producer);
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t k = 0; k < f->node_out[i].n_out; k++) producer[f->nodes[i].out_base + k] = i;
    memplan_check_reach(n, f->edges, f->n_edges, reach);
    if (weft_pool_thread_count(f->pool) == 1) /* one schedule: node id order */
        for (uint32_t a = 0; a < n; a++)
            for (uint32_t b = 0; b < n; b++) reach[(size_t)a * n + b] = a < b;
    for (uint32_t a = 0; a < mp->n; a++) {
        bad += check_readers(f, producer, a) + check_chain(f, producer, reach, a);
        for (uint32_t b = 0; b < mp->n; b++) {
            if (a == b) continue;
            bool conflict = (mp->conflict[a * cw + b / 64] >> (b % 64)) & 1;
            bad += conflict == (ordered(f, reach, a, b) || ordered(f, reach, b, a));
        }
    }
    const weft_tensor_t **h = malloc((mp->n + 1) * sizeof *h);
    for (const weft__call_state_t *cs = f->all_states; cs; cs = cs->next_all) {
        for (uint32_t a = 0; a < mp->n; a++) h[a] = value_handle(cs, a, &bad);
        for (uint32_t a = 0; a < mp->n; a++)
            for (uint32_t b = a + 1; b < mp->n; b++) {
                if (!h[a] || !h[b] || !overlap(h[a], h[b])) continue;
                pairs++;
                if (!ordered(f, reach, a, b) && !ordered(f, reach, b, a)) bad++;
            }
    }
    free(h);
    free(reach);
    free(producer);
    if (pairs_out) *pairs_out = pairs;
    return bad;
}
