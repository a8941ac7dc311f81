/* The stages of a pipelined Scan (scan_pipe.h, docs/control-flow.md §5.2).
 *
 * On a private copy of the inner graph, each node gets the set of carried
 * outputs its value depends on (a bit mask). Carried outputs that depend on
 * each other (the closure of "o's update reads o2's state") form one group;
 * groups are ordered so that a group comes after every group it reads (by
 * the size of the closure, then the lowest output). A node then runs in:
 *   - the pre stage when it depends on no carried state;
 *   - when some carried update needs it, the earliest stage that reads it,
 *     at least the latest group's stage among the carries it depends on
 *     (so a value only ever flows to a later stage, and a group's own
 *     accumulation dW + x_t^T @ dz_t runs in its stage, not in the chain's);
 *   - the post stage otherwise (only pure outputs need it).
 * A view of inner inputs only (x_t^T) belongs to no stage: every stage that
 * reads it computes it (stored per step it would copy the sequence). A
 * value read by a later stage is a crossing value: a stage result stored in
 * row t of its own (n, ...) storage, or of the Scan's output when it is an
 * inner output. Each stage is compiled on its inner inputs and the crossing
 * values it reads, with the options of the whole inner function. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/ctor_int.h"
#include "scan_pipe.h"

typedef struct part {
    const weft__scan_core_t *c;
    const weft__scan_layout_t *l;
    weft_graph_t *g; /* private context of the copy */
    weft_fgraph_t *fg;
    weft_var_t *ph[WEFT__SCAN_MAX_INNER_IN], *out[WEFT_OP_MAX_OUTPUTS + 1];
    int64_t ph_carry[WEFT__SCAN_MAX_INNER_IN]; /* carried output of an inner input, or -1 */
    weft_apply_t *const *order;
    size_t n;
    size_t *idx_of_id; /* apply id in g -> position in order (SIZE_MAX: not in it) */
    size_t n_ids;
    uint32_t *mask; /* per node: carried outputs it depends on */
    int *stage;     /* per node: its stage, -1 for a free view */
    bool *needed;   /* per node: some carried update reads it */
    bool *reads_input; /* per node: not computed from constants alone */
    int carry_stage[WEFT_OP_MAX_OUTPUTS];
    size_t n_groups; /* stages 1..n_groups; 0 pre, n_groups + 1 post */
    weft_var_t *x[WEFT__PIPE_MAX_X];
    int x_stage[WEFT__PIPE_MAX_X];
    size_t n_x;
} part_t;

static size_t node_idx(const part_t *p, const weft_apply_t *a)
{
    uint64_t id = weft_apply_id(a);
    return weft_apply_graph(a) == p->g && id < p->n_ids ? p->idx_of_id[id] : SIZE_MAX;
}

static int64_t input_idx(const part_t *p, const weft_var_t *v)
{
    for (size_t k = 0; k < p->c->n_in; k++)
        if (p->ph[k] == v) return (int64_t)k;
    return -1;
}

static int64_t output_idx(const part_t *p, const weft_var_t *v)
{
    for (uint32_t o = 0; o < p->l->n_out; o++)
        if (p->out[o] == v) return o;
    return -1;
}

static uint32_t var_mask(const part_t *p, const weft_var_t *v)
{
    weft_apply_t *a = weft_var_owner(v);
    if (a) {
        size_t j = node_idx(p, a);
        return j == SIZE_MAX ? 0 : p->mask[j];
    }
    int64_t k = input_idx(p, v);
    return k >= 0 && p->ph_carry[k] >= 0 ? 1u << p->ph_carry[k] : 0;
}

/* The copy on fresh placeholders, its FunctionGraph and toposort. */
static weft_status_t part_copy(part_t *p)
{
    weft_status_t s = weft_graph_create(NULL, &p->g);
    size_t a = weft__scan_n_seq_taps(p->l);
    for (size_t k = 0; k < p->c->n_in; k++) p->ph_carry[k] = -1;
    for (uint32_t o = 0; o < p->l->n_out; o++)
        for (uint32_t k = 0; k < p->l->out_ntaps[o]; k++) p->ph_carry[a++] = o;
    for (size_t k = 0; k < p->c->n_in && s == WEFT_OK; k++) {
        const weft_var_t *v = weft_fgraph_input(p->c->fg, k);
        s = weft__got(p->g, p->ph[k] = weft__scan_placeholder_like(p->g, v, weft_var_name(v),
                                                                    __FILE__, __LINE__));
    }
    if (s == WEFT_OK) s = weft__scan_expand(p->g, p->c, p->ph, p->out, __FILE__, __LINE__);
    weft_fgraph_options_t fo = WEFT_FGRAPH_OPTIONS_INIT;
    fo.clone = false;
    if (s == WEFT_OK)
        s = weft_fgraph_create(p->g, p->c->n_in, p->ph, p->c->n_inner_out, p->out, &fo, NULL,
                               &p->fg);
    if (s == WEFT_OK) s = weft_fgraph_toposort(p->fg, &p->order, &p->n);
    if (s != WEFT_OK) return s;
    p->mask = calloc(p->n + 1, sizeof *p->mask);
    p->stage = calloc(p->n + 1, sizeof *p->stage);
    p->needed = calloc(p->n + 1, sizeof *p->needed);
    p->reads_input = calloc(p->n + 1, sizeof *p->reads_input);
    p->n_ids = weft_graph_n_applies(p->g);
    p->idx_of_id = malloc((p->n_ids + 1) * sizeof *p->idx_of_id);
    if (!p->mask || !p->stage || !p->needed || !p->reads_input || !p->idx_of_id)
        return WEFT_ENOMEM;
    for (size_t i = 0; i < p->n_ids; i++) p->idx_of_id[i] = SIZE_MAX;
    for (size_t j = 0; j < p->n; j++) {
        uint64_t id = weft_apply_id(p->order[j]);
        if (id < p->n_ids) p->idx_of_id[id] = j;
    }
    return WEFT_OK;
}

/* Computed by every stage that reads it rather than stored per step: a
 * one-output view whose inputs are all inner inputs (x_t^T), or a node of
 * constants only (a broadcast of a literal), when it is no inner output. */
static bool is_free(const part_t *p, size_t j)
{
    const weft_apply_t *a = p->order[j];
    bool consts = true, inputs = true;
    for (size_t i = 0; i < weft_apply_n_outputs(a); i++)
        if (output_idx(p, weft_apply_output(a, i)) >= 0) return false;
    for (size_t i = 0; i < weft_apply_n_inputs(a); i++) {
        const weft_var_t *v = weft_apply_input(a, i);
        const weft_apply_t *o = weft_var_owner(v);
        consts = consts && (o ? p->stage[node_idx(p, o)] < 0 && !p->mask[node_idx(p, o)] &&
                                    !p->reads_input[node_idx(p, o)]
                              : weft_var_is_constant(v));
        inputs = inputs && input_idx(p, v) >= 0;
    }
    p->reads_input[j] = !consts;
    return consts || (inputs && weft_apply_n_outputs(a) == 1 && weft_op_is_view(weft_apply_op(a)));
}

/* Masks forward, "needed by a carried update" backward. */
static void part_masks(part_t *p)
{
    for (size_t j = 0; j < p->n; j++)
        for (size_t i = 0; i < weft_apply_n_inputs(p->order[j]); i++)
            p->mask[j] |= var_mask(p, weft_apply_input(p->order[j], i));
    for (uint32_t o = 0; o < p->l->n_out; o++) {
        weft_apply_t *a = p->l->out_ntaps[o] ? weft_var_owner(p->out[o]) : NULL;
        if (a) p->needed[node_idx(p, a)] = true;
    }
    for (size_t j = p->n; j-- > 0;)
        for (size_t i = 0; p->needed[j] && i < weft_apply_n_inputs(p->order[j]); i++) {
            weft_apply_t *a = weft_var_owner(weft_apply_input(p->order[j], i));
            if (a) p->needed[node_idx(p, a)] = true;
        }
}

/* Groups of carried outputs (closures of "reads the state of"), ordered so
 * that a group follows every group it reads: carry_stage[o] in 1.. */
static void part_groups(part_t *p)
{
    uint32_t r[WEFT_OP_MAX_OUTPUTS] = {0}, carried = 0;
    for (uint32_t o = 0; o < p->l->n_out; o++)
        if (p->l->out_ntaps[o]) {
            carried |= 1u << o;
            r[o] = (var_mask(p, p->out[o]) | 1u << o);
        }
    for (bool grew = true; grew;) {
        grew = false;
        for (uint32_t o = 0; o < p->l->n_out; o++)
            for (uint32_t b = 0; b < p->l->n_out; b++)
                if ((r[o] >> b & 1) && (r[o] | r[b]) != r[o]) {
                    r[o] |= r[b];
                    grew = true;
                }
    }
    for (uint32_t o = 0; o < WEFT_OP_MAX_OUTPUTS; o++) p->carry_stage[o] = 0;
    for (uint32_t left = carried; left;) {
        uint32_t best = 0;
        for (uint32_t o = 0; o < p->l->n_out; o++) /* fewest carries reached, then lowest */
            if ((left >> o & 1) && (!(left >> best & 1) || __builtin_popcount(r[o]) <
                                                               __builtin_popcount(r[best])))
                best = o;
        p->n_groups++;
        for (uint32_t o = 0; o < p->l->n_out; o++)
            if ((left >> o & 1) && r[o] == r[best]) {
                p->carry_stage[o] = (int)p->n_groups;
                left &= ~(1u << o);
            }
    }
}

/* The earliest stage of node j among those that read it (a carried update
 * counts as read by its group's stage; the post stage does not count). */
static int first_reader_stage(const part_t *p, size_t j)
{
    int s = INT_MAX;
    for (size_t k = 0; k < weft_apply_n_outputs(p->order[j]); k++) {
        weft_var_t *v = weft_apply_output(p->order[j], k);
        int64_t o = output_idx(p, v);
        if (o >= 0 && p->l->out_ntaps[o] && p->carry_stage[o] < s) s = p->carry_stage[o];
        const weft_client_t *cl = NULL;
        size_t n = 0;
        if (weft_fgraph_clients(p->fg, v, &cl, &n) != WEFT_OK) continue;
        for (size_t i = 0; i < n; i++) {
            if (weft_apply_is_output_slot(cl[i].node)) continue;
            int cs = p->stage[node_idx(p, cl[i].node)];
            if (cs >= 0 && cs <= (int)p->n_groups && cs < s) s = cs;
        }
    }
    return s;
}

/* Forward: free nodes, the pre stage (no carry), the post stage (not
 * needed by a carried update), else the earliest group stage that can run
 * the node (the latest group among its carries). Backward: a needed node
 * moves down to the earliest stage that reads it, so that a group's
 * accumulation (dW + x_t^T @ dz_t) runs whole in its own stage, beside
 * the chain it reads, rather than its product in that chain. */
static void part_stages(part_t *p)
{
    for (size_t j = 0; j < p->n; j++) {
        uint32_t m = p->mask[j];
        int s = 0;
        if (is_free(p, j)) {
            p->stage[j] = -1;
            continue;
        }
        if (m && !p->needed[j]) s = (int)p->n_groups + 1;
        for (uint32_t o = 0; m && p->needed[j] && o < p->l->n_out; o++)
            if ((m >> o & 1) && p->carry_stage[o] > s) s = p->carry_stage[o];
        p->stage[j] = s;
    }
    for (size_t j = p->n; j-- > 0;) {
        if (p->stage[j] <= 0 || !p->needed[j]) continue;
        int s = first_reader_stage(p, j);
        if (s != INT_MAX && s > p->stage[j]) p->stage[j] = s;
    }
}

static int var_stage(const part_t *p, const weft_var_t *v)
{
    weft_apply_t *a = weft_var_owner(v);
    return a ? p->stage[node_idx(p, a)] : -1;
}

/* Node outputs read by another stage's node that are no inner output. */
static bool part_crossing(part_t *p)
{
    for (size_t j = 0; j < p->n; j++) {
        if (p->stage[j] < 0) continue;
        for (size_t i = 0; i < weft_apply_n_inputs(p->order[j]); i++) {
            weft_var_t *v = weft_apply_input(p->order[j], i);
            int s = var_stage(p, v);
            if (s < 0 || s == p->stage[j] || output_idx(p, v) >= 0) continue;
            bool known = false;
            for (size_t x = 0; x < p->n_x; x++) known = known || p->x[x] == v;
            if (known) continue;
            if (p->n_x == WEFT__PIPE_MAX_X) return false;
            p->x_stage[p->n_x] = s;
            p->x[p->n_x++] = v;
        }
    }
    return true;
}

/* Whether the split applies (see weft__scan_pipe_build). */
static bool part_usable(const part_t *p)
{
    bool used[WEFT__PIPE_MAX_STAGES] = {false};
    size_t n_used = 0;
    for (uint32_t o = 0; o < p->l->n_out; o++) {
        if (!weft_var_owner(p->out[o]) || var_stage(p, p->out[o]) < 0) return false;
        for (uint32_t o2 = 0; o2 < o; o2++)
            if (p->out[o2] == p->out[o]) return false;
    }
    for (size_t j = 0; j < p->n; j++)
        if (p->stage[j] >= 0 && !used[p->stage[j]]) {
            used[p->stage[j]] = true;
            n_used++;
        }
    return n_used >= 2;
}

/* ---- one stage's function -------------------------------------------------- */

typedef struct stage_build {
    part_t *p;
    weft__scan_pipe_t *pp;
    int s;
    weft_var_t *k[WEFT__PIPE_MAX_ARGS], *v[WEFT__PIPE_MAX_ARGS]; /* crossing var -> placeholder */
    size_t n_map;
    weft_var_t **node_map; /* per node output: its copy in the stage (or the original) */
} stage_build_t;

static weft_var_t *mapped(const stage_build_t *b, weft_var_t *v)
{
    for (size_t i = 0; i < b->n_map; i++)
        if (b->k[i] == v) return b->v[i];
    weft_apply_t *a = weft_var_owner(v);
    if (!a) return v;
    weft_var_t *m = b->node_map[node_idx(b->p, a) * WEFT_OP_MAX_OUTPUTS + weft_var_index(v)];
    return m ? m : v;
}

static bool has_arg(const weft__pipe_stage_t *st, uint32_t kind, uint32_t idx)
{
    for (size_t i = 0; i < st->n_args; i++)
        if (st->args[i].kind == kind && st->args[i].idx == idx) return true;
    return false;
}

/* v, read by a node of stage b->s: an argument of the stage when it is an
 * inner input or another stage's value. */
static weft_status_t note_arg(stage_build_t *b, weft__pipe_stage_t *st, weft_var_t *v)
{
    part_t *p = b->p;
    int64_t k = input_idx(p, v), o = output_idx(p, v);
    int vs = var_stage(p, v);
    if (k >= 0) {
        if (!has_arg(st, WEFT__PIPE_IN, (uint32_t)k))
            st->args[st->n_args++] = (weft__pipe_src_t){WEFT__PIPE_IN, (uint32_t)k};
        return WEFT_OK;
    }
    if (vs < 0 || vs == b->s) return WEFT_OK;
    weft__pipe_src_t src = {WEFT__PIPE_OUT, (uint32_t)o};
    for (uint32_t x = 0; o < 0 && x < p->n_x; x++)
        if (p->x[x] == v) src = (weft__pipe_src_t){WEFT__PIPE_X, x};
    if (has_arg(st, src.kind, src.idx)) return WEFT_OK;
    weft_var_t *q = weft__scan_placeholder_like(p->g, v, weft_var_name(v), __FILE__, __LINE__);
    if (!q) return weft_graph_error(p->g);
    b->k[b->n_map] = v;
    b->v[b->n_map++] = q;
    st->args[st->n_args++] = src;
    return WEFT_OK;
}

/* The free nodes stage b->s reads, directly or through other free nodes. */
static void free_needed(const stage_build_t *b, bool *need)
{
    const part_t *p = b->p;
    for (size_t j = p->n; j-- > 0;) {
        if (p->stage[j] != b->s && !need[j]) continue;
        for (size_t i = 0; i < weft_apply_n_inputs(p->order[j]); i++) {
            weft_apply_t *a = weft_var_owner(weft_apply_input(p->order[j], i));
            size_t k = a ? node_idx(p, a) : SIZE_MAX;
            if (k != SIZE_MAX && p->stage[k] < 0) need[k] = true;
        }
    }
}

/* Nodes of stage b->s and the free nodes it needs, in order, rebuilt on
 * the stage's arguments (listed as they are met). */
static weft_status_t stage_rebuild(stage_build_t *b, weft__pipe_stage_t *st, const bool *need)
{
    part_t *p = b->p;
    for (size_t j = 0; j < p->n; j++) {
        weft_apply_t *a = p->order[j];
        if (p->stage[j] != b->s && !need[j]) continue;
        size_t n_in = weft_apply_n_inputs(a);
        weft_var_t *in[64];
        bool changed = false;
        if (n_in > 64) return WEFT_ENOTIMPL;
        for (size_t i = 0; i < n_in; i++) {
            weft_status_t s = note_arg(b, st, weft_apply_input(a, i));
            if (s != WEFT_OK) return s;
            in[i] = mapped(b, weft_apply_input(a, i));
            changed = changed || in[i] != weft_apply_input(a, i);
        }
        if (!changed) continue;
        weft_apply_t *na = NULL;
        weft_status_t s = weft_apply_clone_with_new_inputs(p->g, a, n_in, in, false, &na);
        if (s != WEFT_OK) return s;
        for (size_t o = 0; o < weft_apply_n_outputs(a); o++)
            b->node_map[j * WEFT_OP_MAX_OUTPUTS + o] = weft_apply_output(na, o);
    }
    return WEFT_OK;
}

/* The stage's nodes (and the free nodes they read) rebuilt on its
 * arguments, in order; arguments listed as they are met. */
static weft_status_t stage_nodes(stage_build_t *b, weft__pipe_stage_t *st)
{
    part_t *p = b->p;
    bool *need = calloc(p->n + 1, sizeof *need);
    if (!need) return WEFT_ENOMEM;
    free_needed(b, need);
    weft_status_t s = stage_rebuild(b, st, need);
    free(need);
    return s;
}

static weft_status_t stage_compile(stage_build_t *b, weft__pipe_stage_t *st,
                                   const weft_function_options_t *opts)
{
    part_t *p = b->p;
    weft_var_t *in[WEFT__PIPE_MAX_ARGS], *out[WEFT_OP_MAX_OUTPUTS + WEFT__PIPE_MAX_X];
    size_t m = 0;
    for (size_t i = 0; i < st->n_args; i++)
        in[i] = st->args[i].kind == WEFT__PIPE_IN ? p->ph[st->args[i].idx] : b->v[m++];
    for (uint32_t o = 0; o < p->l->n_out; o++)
        if (var_stage(p, p->out[o]) == b->s) {
            st->res[st->n_res] = (weft__pipe_src_t){WEFT__PIPE_OUT, o};
            out[st->n_res++] = mapped(b, p->out[o]);
        }
    for (uint32_t x = 0; x < p->n_x; x++)
        if (p->x_stage[x] == b->s) {
            st->res[st->n_res] = (weft__pipe_src_t){WEFT__PIPE_X, x};
            out[st->n_res++] = mapped(b, p->x[x]);
        }
    weft_function_options_t o = *opts;
    o.name = st->name;
    return weft_function_compile(st->n_args, in, st->n_res, out, 0, NULL, &o, &st->f);
}

static weft_status_t build_stage(part_t *p, weft__scan_pipe_t *pp, int s,
                                 const weft_function_options_t *opts)
{
    weft__pipe_stage_t *st = &pp->st[pp->n_stages];
    stage_build_t b = {.p = p, .pp = pp, .s = s};
    b.node_map = calloc(p->n * WEFT_OP_MAX_OUTPUTS + 1, sizeof *b.node_map);
    if (!b.node_map) return WEFT_ENOMEM;
    st->carried = s > 0 && s <= (int)p->n_groups;
    const char *base = opts->name ? opts->name : "scan";
    if (s == 0) snprintf(st->name, sizeof st->name, "%s/pre", base);
    else if (st->carried) snprintf(st->name, sizeof st->name, "%s/carry%d", base, s);
    else snprintf(st->name, sizeof st->name, "%s/post", base);
    weft_status_t r = stage_nodes(&b, st);
    if (r == WEFT_OK) r = stage_compile(&b, st, opts);
    free(b.node_map);
    if (r == WEFT_OK) pp->n_stages++;
    return r;
}

/* ---- successors -------------------------------------------------------------- */

static void add_succ(weft__pipe_stage_t *st, uint32_t stage, int64_t dt)
{
    for (size_t i = 0; i < st->n_succ; i++)
        if (st->succ[i].stage == stage && st->succ[i].dt == dt) return;
    st->succ[st->n_succ++] = (weft__pipe_succ_t){stage, dt};
}

/* Who waits for stage s's step t: its own step t + 1 first (the chain
 * continues on the same worker; a stage without carries keeps its steps in
 * order too, so that its function never runs twice at once - one call
 * state, warm calls allocate nothing - and the chain's inputs come in step
 * order), then the stages reading its
 * values at step t and its carried states at later steps, and last the
 * producers of the crossing values it reads at step t + WEFT__PIPE_RING,
 * which write the same row of the ring. */
static void pipe_succ(weft__scan_pipe_t *pp, const part_t *p, const int *stage_of, size_t s)
{
    weft__pipe_stage_t *st = &pp->st[s];
    add_succ(st, (uint32_t)s, 1);
    for (size_t s2 = 0; s2 < pp->n_stages; s2++)
        for (size_t i = 0; i < pp->st[s2].n_args; i++) {
            weft__pipe_src_t a = pp->st[s2].args[i];
            if (a.kind == WEFT__PIPE_X && stage_of[p->x_stage[a.idx]] == (int)s)
                add_succ(st, (uint32_t)s2, 0);
            if (a.kind == WEFT__PIPE_OUT && stage_of[var_stage(p, p->out[a.idx])] == (int)s)
                add_succ(st, (uint32_t)s2, 0);
            if (a.kind != WEFT__PIPE_IN || p->ph_carry[a.idx] < 0) continue;
            int64_t o = p->ph_carry[a.idx];
            if (stage_of[var_stage(p, p->out[o])] != (int)s) continue; /* its writer */
            size_t first = weft__scan_n_seq_taps(p->l);
            for (uint32_t q = 0; q < (uint32_t)o; q++) first += p->l->out_ntaps[q];
            add_succ(st, (uint32_t)s2, -p->l->out_taps[o][a.idx - first]);
        }
    /* the producer reuses the row after us; a chunk stage reads the rows of
     * steps t - t mod C .. t at its task of step t ending the chunk, whose
     * first row the producer's step t - t mod C + ring rewrites: an edge
     * from every step t to step t + ring - C + 1 orders it (from the other
     * steps, it orders the rows of an earlier chunk, already read) */
    int64_t dt = st->chunk ? pp->ring - WEFT__PIPE_CHUNK + 1 : pp->ring;
    for (size_t i = 0; i < st->n_args; i++)
        if (st->args[i].kind == WEFT__PIPE_X)
            add_succ(st, (uint32_t)stage_of[p->x_stage[st->args[i].idx]], dt);
}

static weft_status_t pipe_fill(part_t *p, weft__scan_pipe_t *pp, const weft__scan_props_t *sp,
                               const weft_function_options_t *opts)
{
    int stage_of[WEFT__PIPE_MAX_STAGES]; /* partition stage -> index in pp->st */
    for (size_t s = 0; s < WEFT__PIPE_MAX_STAGES; s++) stage_of[s] = -1;
    weft_status_t r = WEFT_OK;
    for (int s = 0; s <= (int)p->n_groups + 1 && r == WEFT_OK; s++) {
        bool any = false;
        for (size_t j = 0; j < p->n; j++) any = any || p->stage[j] == s;
        if (!any) continue;
        stage_of[s] = (int)pp->n_stages;
        r = build_stage(p, pp, s, opts);
    }
    pp->n_x = p->n_x;
    if (r == WEFT_OK) r = weft__pipe_chunk_stages(pp, p->g, sp, p->ph, p->out, p->x, opts);
    for (size_t s = 0; s < pp->n_stages && r == WEFT_OK; s++) pipe_succ(pp, p, stage_of, s);
    for (size_t x = 0; x < p->n_x; x++) {
        const weft_type_t *t = weft_var_type(p->x[x]);
        pp->x_dt[x] = weft_type_dtype(t);
        pp->x_nd[x] = weft_type_ndim(t);
        for (int d = 0; d < pp->x_nd[x]; d++) pp->x_shape[x][d] = weft_type_dim(t, d);
    }
    return r;
}

static bool x_static(const part_t *p)
{
    for (size_t x = 0; x < p->n_x; x++) {
        const weft_type_t *t = weft_var_type(p->x[x]);
        if (weft_type_ndim(t) < 0 || weft_type_ndim(t) >= WEFT_MAX_NDIM) return false;
        for (int d = 0; d < weft_type_ndim(t); d++)
            if (weft_type_dim(t, d) < 0) return false;
    }
    return true;
}

static bool writes_output(const weft__pipe_stage_t *st, uint32_t o)
{
    for (size_t i = 0; i < st->n_res; i++)
        if (st->res[i].kind == WEFT__PIPE_OUT && st->res[i].idx == o) return true;
    return false;
}

/* A last-state output keeps only lag + 1 states, overwritten in turn: the
 * stage writing it (which runs its steps in order) must be its only
 * reader. */
static bool rings_ok(const part_t *p, const weft__scan_pipe_t *pp, uint32_t last_mask)
{
    for (size_t s = 0; s < pp->n_stages; s++) {
        const weft__pipe_stage_t *st = &pp->st[s];
        for (size_t i = 0; i < st->n_args; i++) {
            weft__pipe_src_t a = st->args[i];
            int64_t o = a.kind == WEFT__PIPE_IN ? p->ph_carry[a.idx]
                        : a.kind == WEFT__PIPE_OUT ? (int64_t)a.idx : -1;
            if (o >= 0 && (last_mask >> o & 1) && !writes_output(st, (uint32_t)o)) return false;
        }
    }
    return true;
}

static void part_free(part_t *p)
{
    free(p->mask);
    free(p->stage);
    free(p->needed);
    free(p->reads_input);
    free(p->idx_of_id);
    weft_fgraph_destroy(p->fg);
    weft_graph_destroy(p->g);
}

weft_status_t weft__scan_pipe_build(const weft__scan_props_t *sp,
                                    const weft_function_options_t *opts,
                                    weft__scan_pipe_t **out)
{
    *out = NULL;
    const weft__scan_layout_t *l = &sp->core->lay;
    if (l->has_until || !sp->core->n_carry) return WEFT_OK;
    part_t p = {.c = sp->core, .l = l};
    weft_status_t s = part_copy(&p);
    if (s == WEFT_OK) {
        part_masks(&p);
        part_groups(&p);
        part_stages(&p);
    }
    if (s != WEFT_OK || !part_crossing(&p) || !part_usable(&p) || !x_static(&p)) {
        part_free(&p);
        return s;
    }
    weft__scan_pipe_t *pp = calloc(1, sizeof *pp);
    if (pp && pthread_mutex_init(&pp->lock, NULL) != 0) {
        free(pp);
        pp = NULL;
    }
    s = pp ? pipe_fill(&p, pp, sp, opts) : WEFT_ENOMEM;
    bool rings = s == WEFT_OK && rings_ok(&p, pp, sp->last_mask);
    part_free(&p);
    if (s != WEFT_OK || !rings) {
        weft__scan_pipe_destroy(pp);
        return s;
    }
    *out = pp;
    return WEFT_OK;
}
