/* The partition of a graph over ranks (docs/distributed.md §2): which rank
 * runs each apply node, where each variable lives, and the messages that
 * implies. Computed from the graph alone (creation order, the placement,
 * METIS with a fixed seed), so every rank computes the same one. */
#include <stdlib.h>
#include <string.h>

#include "mpi_int.h"
#include "weft/shared.h"

static int cmp_var(const void *a, const void *b)
{
    uint64_t x = weft_var_id(*(weft_var_t *const *)a), y = weft_var_id(*(weft_var_t *const *)b);
    return x < y ? -1 : x > y;
}

static int cmp_apply(const void *a, const void *b)
{
    uint64_t x = weft_apply_id(*(weft_apply_t *const *)a);
    uint64_t y = weft_apply_id(*(weft_apply_t *const *)b);
    return x < y ? -1 : x > y;
}

int wm__input_index(size_t n_in, weft_var_t *const *inputs, const weft_var_t *v)
{
    for (size_t k = 0; k < n_in; k++)
        if (inputs[k] == v) return (int)k;
    return -1;
}

static bool is_input(size_t n_in, weft_var_t *const *inputs, const weft_var_t *v)
{
    return wm__input_index(n_in, inputs, v) >= 0;
}

/* Every variable and apply the outputs reach (inputs stop the walk). */
static weft_status_t collect(weft_graph_t *g, size_t n_in, weft_var_t *const *inputs, size_t n_out,
                             weft_var_t *const *outputs, wm_part_t *p)
{
    size_t nv = weft_graph_n_vars(g), na = weft_graph_n_applies(g);
    uint8_t *seen_v = calloc(nv + 1, 1), *seen_a = calloc(na + 1, 1);
    weft_var_t **stack = malloc((nv + 1) * sizeof *stack);
    p->vars = malloc((nv + 1) * sizeof *p->vars);
    p->applies = malloc((na + 1) * sizeof *p->applies);
    weft_status_t st = WEFT_OK;
    if (!seen_v || !seen_a || !stack || !p->vars || !p->applies) {
        st = wm__error(WEFT_ENOMEM, "partition: out of memory");
        goto out;
    }
    size_t top = 0;
    /* marked when pushed, so each variable is pushed once: nv slots suffice */
#define PUSH(v)                                    \
    do {                                           \
        weft_var_t *v_ = (v);                      \
        if (!seen_v[weft_var_id(v_)]) {            \
            seen_v[weft_var_id(v_)] = 1;           \
            stack[top++] = v_;                     \
            p->vars[p->n_vars++] = v_;             \
        }                                          \
    } while (0)
    for (size_t k = 0; k < n_in; k++) PUSH(inputs[k]);
    for (size_t k = 0; k < n_out; k++) PUSH(outputs[k]);
    while (top) {
        weft_var_t *v = stack[--top];
        weft_apply_t *a = weft_var_owner(v);
        if (!a || is_input(n_in, inputs, v) || seen_a[weft_apply_id(a)]) continue;
        seen_a[weft_apply_id(a)] = 1;
        p->applies[p->n_applies++] = a;
        for (size_t i = 0; i < weft_apply_n_outputs(a); i++) PUSH(weft_apply_output(a, i));
        for (size_t i = 0; i < weft_apply_n_inputs(a); i++) PUSH(weft_apply_input(a, i));
    }
#undef PUSH
    qsort(p->vars, p->n_vars, sizeof *p->vars, cmp_var);
    qsort(p->applies, p->n_applies, sizeof *p->applies, cmp_apply);
out:
    free(seen_v);
    free(seen_a);
    free(stack);
    return st;
}

size_t wm__var_pos(const wm_part_t *p, const weft_var_t *v)
{
    size_t lo = 0, hi = p->n_vars;
    uint64_t id = weft_var_id(v);
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        uint64_t m = weft_var_id(p->vars[mid]);
        if (m == id) return p->vars[mid] == v ? mid : p->n_vars;
        if (m < id) lo = mid + 1;
        else hi = mid;
    }
    return p->n_vars;
}

static void describe_var(const weft_var_t *v, char *buf, size_t cap)
{
    const char *file = NULL, *name = weft_var_name(v);
    int line = 0;
    weft_var_trace(v, &file, &line);
    if (name) snprintf(buf, cap, "variable '%s' (built at %s:%d)", name, file ? file : "?", line);
    else snprintf(buf, cap, "variable #%llu (built at %s:%d)", (unsigned long long)weft_var_id(v),
                  file ? file : "?", line);
}

static int call_owner(const weft_mpi_options_t *o, const weft_var_t *v)
{
    return o->owner ? o->owner(o->owner_user, v) : WEFT_MPI_FOLLOW;
}

static weft_status_t check_owner(int r, int n_ranks, const weft_var_t *v)
{
    if (r == WEFT_MPI_REPLICATED || r == WEFT_MPI_FOLLOW || (r >= 0 && r < n_ranks))
        return WEFT_OK;
    char d[200];
    describe_var(v, d, sizeof d);
    return wm__error(WEFT_EINVAL, "placement: owner %d of %s is not a rank of %d", r, d, n_ranks);
}

/* The first non-constant input's owner (replicated when there is none). */
static int follow_owner(const wm_part_t *p, const weft_apply_t *a)
{
    for (size_t i = 0; i < weft_apply_n_inputs(a); i++) {
        weft_var_t *v = weft_apply_input(a, i);
        if (!weft_var_is_constant(v)) return p->owner[wm__var_pos(p, v)];
    }
    return WEFT_MPI_REPLICATED;
}

static void set_outputs(wm_part_t *p, const weft_apply_t *a, int r)
{
    for (size_t i = 0; i < weft_apply_n_outputs(a); i++) {
        size_t pos = wm__var_pos(p, weft_apply_output(a, i));
        if (pos < p->n_vars) p->owner[pos] = r;
    }
}


/* Roots: constants and shared variables are replicated; inputs per the
 * options (FOLLOW: decided after the nodes); anything else is missing. */
static weft_status_t place_roots(size_t n_in, weft_var_t *const *inputs,
                                 const weft_mpi_options_t *o, wm_part_t *p)
{
    for (size_t k = 0; k < p->n_vars; k++) {
        weft_var_t *v = p->vars[k];
        if (weft_var_owner(v) && !is_input(n_in, inputs, v)) continue;
        if (weft_var_is_constant(v) || weft_var_is_shared(v)) {
            p->owner[k] = WEFT_MPI_REPLICATED;
        } else if (!is_input(n_in, inputs, v)) {
            char d[200];
            describe_var(v, d, sizeof d);
            return wm__error(WEFT_EMISSING_INPUT, "partition: %s is needed but not an input", d);
        } else {
            int r = o->inputs_on_root ? 0 : call_owner(o, v);
            weft_status_t st = check_owner(r, p->n_ranks, v);
            if (st != WEFT_OK) return st;
            p->owner[k] = r;
        }
    }
    return WEFT_OK;
}

/* An input left to FOLLOW lives with its first reader (rank 0 when that
 * reader is replicated or there is none). */
static void place_follow_inputs(wm_part_t *p)
{
    for (size_t k = 0; k < p->n_vars; k++) {
        if (p->owner[k] != WEFT_MPI_FOLLOW) continue;
        p->owner[k] = 0;
        for (size_t j = 0; j < p->n_applies; j++) {
            const weft_apply_t *a = p->applies[j];
            bool reads = false;
            for (size_t i = 0; i < weft_apply_n_inputs(a); i++)
                reads |= weft_apply_input(a, i) == p->vars[k];
            if (!reads) continue;
            if (p->node_rank[j] >= 0) p->owner[k] = p->node_rank[j];
            break;
        }
    }
}

static int coll_rank(const weft_apply_t *a, int *kind)
{
    int root = 0;
    *kind = wm__coll_kind(weft_apply_op(a), &root);
    if (*kind < 0) return WEFT_MPI_FOLLOW;
    return *kind == WM_GATHER ? root : WEFT_MPI_REPLICATED;
}

/* Nodes: collectives where they must be, then the owner function (or
 * METIS), then FOLLOW in creation order. */
static weft_status_t place_nodes(const weft_mpi_options_t *o, wm_part_t *p)
{
    bool *fixed = calloc(p->n_applies + 1, sizeof *fixed);
    if (!fixed) return wm__error(WEFT_ENOMEM, "partition: out of memory");
    weft_status_t st = WEFT_OK;
    for (size_t j = 0; j < p->n_applies && st == WEFT_OK; j++) {
        int kind, r = coll_rank(p->applies[j], &kind);
        if (kind < 0) r = call_owner(o, weft_apply_output(p->applies[j], 0));
        st = check_owner(r, p->n_ranks, weft_apply_output(p->applies[j], 0));
        p->node_rank[j] = r;
        fixed[j] = r != WEFT_MPI_FOLLOW;
    }
    if (st == WEFT_OK && o->placement == WEFT_MPI_PLACE_METIS)
        st = wm__metis(p, o, fixed, p->node_rank);
    for (size_t j = 0; j < p->n_applies && st == WEFT_OK; j++) {
        if (p->node_rank[j] == WEFT_MPI_FOLLOW) {
            int r = follow_owner(p, p->applies[j]);
            p->node_rank[j] = r == WEFT_MPI_FOLLOW ? 0 : r;
        }
        set_outputs(p, p->applies[j], p->node_rank[j]);
    }
    free(fixed);
    return st;
}

/* A collective's input must be where the collective reads it. */
static weft_status_t check_collectives(const wm_part_t *p)
{
    for (size_t j = 0; j < p->n_applies; j++) {
        const weft_apply_t *a = p->applies[j];
        int root = 0, kind = wm__coll_kind(weft_apply_op(a), &root);
        if (kind < 0) continue;
        weft_var_t *x = weft_apply_input(a, 0);
        int ox = p->owner[wm__var_pos(p, x)];
        char d[320];
        weft_apply_describe(a, d, sizeof d);
        if (root >= p->n_ranks)
            return wm__error(WEFT_EINVAL, "partition: %s: root %d is not a rank of %d", d, root,
                             p->n_ranks);
        if (!weft_type_is_static(weft_var_type(x)))
            return wm__error(WEFT_ENOTIMPL, "partition: %s: a collective's input needs a static "
                             "shape", d);
        /* gather's output and scatter's input have an axis of the ranks */
        weft_var_t *ranked = kind == WM_GATHER ? weft_apply_output(a, 0) : x;
        int64_t nr = weft_type_dim(weft_var_type(ranked), 0);
        if ((kind == WM_GATHER || kind == WM_SCATTER) && nr != p->n_ranks)
            return wm__error(WEFT_EINVAL, "partition: %s %s %lld ranks, the communicator has %d",
                             d, kind == WM_GATHER ? "gathers" : "scatters", (long long)nr,
                             p->n_ranks);
        bool from_root = kind == WM_BCAST || kind == WM_SCATTER;
        if (!from_root && ox != WEFT_MPI_REPLICATED)
            return wm__error(WEFT_EINVAL, "partition: %s: its input lives on rank %d, not on "
                             "every rank (replicated)", d, ox);
        if (from_root && ox != WEFT_MPI_REPLICATED && ox != root)
            return wm__error(WEFT_EINVAL, "partition: %s: its input lives on rank %d, not on "
                             "the root %d", d, ox, root);
    }
    return WEFT_OK;
}

double wm__type_elements(const weft_type_t *t)
{
    double e = 1;
    for (int d = 0; d < weft_type_ndim(t); d++)
        if (weft_type_dim(t, d) > 0) e *= (double)weft_type_dim(t, d);
    return e;
}

/* A view is computed where it is read, from its input (a transpose, a
 * reshape): as many elements as the value it views, so the input costs the
 * same bytes as the view would, and nothing when that rank receives the
 * input anyway; its other inputs (a shape) must be on every rank. A slice
 * is sent itself (its base is larger). A replicated view runs everywhere. */
static bool on_demand(const wm_part_t *p, size_t j)
{
    const weft_apply_t *a = p->applies[j];
    const weft_op_t *op = weft_apply_op(a);
    const weft_op_alias_t *vm, *dm;
    size_t nv, nd;
    int root;
    weft_op_view_map(op, &vm, &nv);
    weft_op_destroy_map(op, &dm, &nd);
    if (nv != 1 || nd != 0 || weft_apply_n_outputs(a) != 1 || wm__coll_kind(op, &root) >= 0 ||
        p->node_rank[j] == WEFT_MPI_REPLICATED)
        return false;
    for (size_t i = 0; i < weft_apply_n_inputs(a); i++) {
        size_t u = wm__var_pos(p, weft_apply_input(a, i));
        if (i != vm[0].input && (u == p->n_vars || p->owner[u] != WEFT_MPI_REPLICATED))
            return false;
    }
    const weft_type_t *y = weft_var_type(weft_apply_output(a, 0));
    const weft_type_t *x = weft_var_type(weft_apply_input(a, vm[0].input));
    return weft_type_kind(y) == WEFT_TYPE_TENSOR && weft_type_kind(x) == WEFT_TYPE_TENSOR &&
           weft_type_is_static(y) && weft_type_is_static(x) &&
           wm__type_elements(y) == wm__type_elements(x);
}

bool wm__runs_on(const wm_part_t *p, size_t j, int r)
{
    if (p->node_rank[j] == WEFT_MPI_REPLICATED) return true;
    return p->on_demand[j] ? p->runs[j * (size_t)p->n_ranks + (size_t)r] != 0
                           : p->node_rank[j] == r;
}

/* mark_needs' state: need[v * n_ranks + r] (value v must reach rank r),
 * producer[v] (the reached apply computing v, or n_applies), and need_on's
 * worklist. */
typedef struct needs {
    uint8_t *need;
    size_t *producer, *work;
} needs_t;

/* Value v must be on rank d: computed there by an on-demand view (and, in
 * turn, the view's inputs on d: a worklist, for chains of views), else a
 * message unless it lives there. */
static void need_on(wm_part_t *p, needs_t *nd, size_t v, int d)
{
    size_t n = (size_t)p->n_ranks, top = 0, *work = nd->work;
    work[top++] = v;
    while (top) {
        size_t x = work[--top], j = nd->producer[x];
        int ox = p->owner[x];
        if (ox == WEFT_MPI_REPLICATED) continue;
        if (j == p->n_applies || !p->on_demand[j]) {
            if (ox != d) nd->need[x * n + (size_t)d] = 1;
            continue;
        }
        if (p->runs[j * n + (size_t)d]) continue;
        p->runs[j * n + (size_t)d] = 1;
        const weft_apply_t *a = p->applies[j];
        for (size_t i = 0; i < weft_apply_n_inputs(a); i++) {
            size_t u = wm__var_pos(p, weft_apply_input(a, i));
            if (u < p->n_vars) work[top++] = u; /* at most 1 + all inputs (work_len) */
        }
    }
}

/* need_on's worklist: one entry, plus each input of each apply once (an
 * on-demand view is made to run on a rank once). */
static size_t work_len(const wm_part_t *p)
{
    size_t len = 1;
    for (size_t j = 0; j < p->n_applies; j++) len += weft_apply_n_inputs(p->applies[j]);
    return len;
}

static weft_status_t needs_init(const wm_part_t *p, needs_t *nd)
{
    nd->need = calloc(p->n_vars * (size_t)p->n_ranks + 1, 1);
    nd->producer = malloc((p->n_vars + 1) * sizeof *nd->producer);
    nd->work = malloc(work_len(p) * sizeof *nd->work);
    if (!nd->need || !nd->producer || !nd->work)
        return wm__error(WEFT_ENOMEM, "partition: out of memory");
    for (size_t k = 0; k < p->n_vars; k++) nd->producer[k] = p->n_applies;
    for (size_t j = 0; j < p->n_applies; j++)
        for (size_t i = 0; i < weft_apply_n_outputs(p->applies[j]); i++) {
            size_t pos = wm__var_pos(p, weft_apply_output(p->applies[j], i));
            if (pos < p->n_vars) nd->producer[pos] = j;
        }
    return WEFT_OK;
}

static void needs_free(needs_t *nd)
{
    free(nd->need);
    free(nd->producer);
    free(nd->work);
}

/* need[v * n_ranks + r]: value v must reach rank r; p->runs: where the
 * on-demand views run. Every reader asks for its inputs on its rank (an
 * on-demand view asks when it is made to run); every output on the rank
 * that gets it, every update's value on each rank holding its variable. */
static void mark_needs(wm_part_t *p, size_t n_out, weft_var_t *const *outputs,
                       const weft_mpi_options_t *o, needs_t *nd)
{
    int n = p->n_ranks;
    for (size_t j = 0; j < p->n_applies; j++) {
        const weft_apply_t *a = p->applies[j];
        int root, r = p->node_rank[j];
        int kind = wm__coll_kind(weft_apply_op(a), &root);
        if (p->on_demand[j]) continue;
        if (kind == WM_BCAST || kind == WM_SCATTER) { /* read on the root */
            need_on(p, nd, wm__var_pos(p, weft_apply_input(a, 0)), root);
            continue;
        }
        int d0 = r == WEFT_MPI_REPLICATED ? 0 : r, d1 = r == WEFT_MPI_REPLICATED ? n : r + 1;
        for (int d = d0; d < d1; d++) /* the ranks it runs on */
            for (size_t i = 0; i < weft_apply_n_inputs(a); i++)
                need_on(p, nd, wm__var_pos(p, weft_apply_input(a, i)), d);
    }
    for (size_t k = 0; k < n_out; k++) {
        size_t v = wm__var_pos(p, outputs[k]);
        if (p->owner[v] >= 0) need_on(p, nd, v, p->owner[v]);
        if (o->outputs_to_root) need_on(p, nd, v, 0);
    }
    /* an update's value goes to every rank holding its variable
     * (docs/distributed.md §2, item 5) */
    for (size_t k = 0; k < p->n_upd; k++)
        for (int d = 0; d < n; d++)
            if (wm__holds_update(p, k, d)) need_on(p, nd, wm__var_pos(p, p->upd[k].value), d);
}

bool wm__holds_update(const wm_part_t *p, size_t k, int r)
{
    const weft_var_t *v = p->upd[k].var;
    if (weft_var_is_shared(v)) return true;
    int ow = p->owner[wm__var_pos(p, v)];
    return ow == r || ow == WEFT_MPI_REPLICATED;
}

/* Each update names a shared variable or an input, once, with a value of its
 * type: checked here, on every rank alike, since a rank that does not hold
 * the variable never compiles the update. */
static weft_status_t check_updates(size_t n_in, weft_var_t *const *inputs, size_t n_upd,
                                   const weft_update_t *upd)
{
    char d[200], e[200];
    for (size_t k = 0; k < n_upd; k++) {
        describe_var(upd[k].var, d, sizeof d);
        if (!weft_var_is_shared(upd[k].var) && !is_input(n_in, inputs, upd[k].var))
            return wm__error(WEFT_EINVAL, "update %zu: %s is neither a shared variable nor an "
                             "input", k, d);
        for (size_t j = 0; j < k; j++)
            if (upd[j].var == upd[k].var)
                return wm__error(WEFT_EINVAL, "updates %zu and %zu both update %s", j, k, d);
        if (!weft_type_equal(weft_var_type(upd[k].var), weft_var_type(upd[k].value))) {
            describe_var(upd[k].value, e, sizeof e);
            return wm__error(WEFT_ETYPE, "update %zu: the value %s does not have the type of %s",
                             k, e, d);
        }
    }
    return WEFT_OK;
}

/* The variables the partition must reach: the outputs, then the update
 * values. */
static weft_var_t **reach_set(size_t n_out, weft_var_t *const *outputs, size_t n_upd,
                              const weft_update_t *upd)
{
    weft_var_t **r = malloc((n_out + n_upd + 1) * sizeof *r);
    if (!r) return NULL;
    if (n_out) memcpy(r, outputs, n_out * sizeof *r); /* outputs may be NULL when 0 */
    for (size_t k = 0; k < n_upd; k++) r[n_out + k] = upd[k].value;
    return r;
}

static weft_status_t fill_msg(wm_msg_t *m, const weft_var_t *v)
{
    const weft_type_t *t = weft_var_type(v);
    describe_var(v, m->name, sizeof m->name);
    const char *d = m->name;
    if (weft_type_kind(t) != WEFT_TYPE_TENSOR)
        return wm__error(WEFT_ENOTIMPL, "partition: %s goes from rank %d to rank %d but is not "
                         "a tensor", d, m->src, m->dst);
    m->dtype = weft_type_dtype(t);
    m->ndim = weft_type_ndim(t);
    m->dynamic = !weft_type_is_static(t); /* sized per call (dynmsg.c) */
    m->bytes = m->dynamic ? 0 : weft_dtype_size(m->dtype);
    for (int i = 0; i < m->ndim; i++) {
        m->shape[i] = weft_type_dim(t, i);
        if (!m->dynamic) m->bytes *= (size_t)m->shape[i];
    }
    return WEFT_OK;
}

static weft_status_t make_msgs(wm_part_t *p, size_t n_out, weft_var_t *const *outputs,
                               const weft_mpi_options_t *o)
{
    size_t n = (size_t)p->n_ranks;
    needs_t nd = {NULL, NULL, NULL};
    p->runs = calloc(p->n_applies * n + 1, 1);
    p->on_demand = calloc(p->n_applies + 1, 1);
    weft_status_t st = p->runs && p->on_demand
                           ? needs_init(p, &nd)
                           : wm__error(WEFT_ENOMEM, "partition: out of memory");
    for (size_t j = 0; st == WEFT_OK && j < p->n_applies; j++) p->on_demand[j] = on_demand(p, j);
    if (st != WEFT_OK) {
        needs_free(&nd);
        return st;
    }
    mark_needs(p, n_out, outputs, o, &nd);
    uint8_t *need = nd.need;
    size_t count = 0;
    for (size_t i = 0; i < p->n_vars * n; i++) count += need[i];
    p->msgs = calloc(count + 1, sizeof *p->msgs);
    if (!p->msgs) st = wm__error(WEFT_ENOMEM, "partition: out of memory");
    for (size_t i = 0; i < p->n_vars * n && st == WEFT_OK; i++) {
        if (!need[i]) continue;
        wm_msg_t *m = &p->msgs[p->n_msgs++];
        m->var_pos = (uint32_t)(i / n);
        m->src = p->owner[i / n];
        m->dst = (int)(i % n);
        st = fill_msg(m, p->vars[i / n]);
    }
    needs_free(&nd);
    return st;
}

weft_status_t wm__partition(size_t n_in, weft_var_t *const *inputs, size_t n_out,
                            weft_var_t *const *outputs, size_t n_upd, const weft_update_t *upd,
                            const weft_mpi_options_t *o, int n_ranks, wm_part_t *p)
{
    memset(p, 0, sizeof *p);
    p->n_ranks = n_ranks;
    weft_graph_t *g = weft_var_graph(n_out ? outputs[0] : upd[0].value);
    weft_status_t st = check_updates(n_in, inputs, n_upd, upd);
    if (st != WEFT_OK) return st;
    weft_var_t **reach = reach_set(n_out, outputs, n_upd, upd);
    p->upd = malloc((n_upd + 1) * sizeof *p->upd);
    if (!reach || !p->upd) st = wm__error(WEFT_ENOMEM, "partition: out of memory");
    else if (n_upd) memcpy(p->upd, upd, n_upd * sizeof *p->upd), p->n_upd = n_upd;
    if (st == WEFT_OK) st = collect(g, n_in, inputs, n_out + n_upd, reach, p);
    free(reach);
    if (st == WEFT_OK) {
        p->owner = malloc((p->n_vars + 1) * sizeof *p->owner);
        p->node_rank = malloc((p->n_applies + 1) * sizeof *p->node_rank);
        if (!p->owner || !p->node_rank) st = wm__error(WEFT_ENOMEM, "partition: out of memory");
    }
    for (size_t k = 0; st == WEFT_OK && k < p->n_vars; k++) p->owner[k] = WEFT_MPI_FOLLOW;
    if (st == WEFT_OK) st = place_roots(n_in, inputs, o, p);
    if (st == WEFT_OK) st = place_nodes(o, p);
    if (st == WEFT_OK) place_follow_inputs(p);
    if (st == WEFT_OK) st = check_collectives(p);
    if (st == WEFT_OK) st = make_msgs(p, n_out, outputs, o);
    if (st == WEFT_OK) st = wm__message_tails(p);
    if (st != WEFT_OK) wm__part_free(p);
    return st;
}

void wm__part_free(wm_part_t *p)
{
    free(p->vars);
    free(p->owner);
    free(p->applies);
    free(p->node_rank);
    free(p->runs);
    free(p->on_demand);
    free(p->msgs);
    free(p->upd);
    free(p->coll_tail);
    memset(p, 0, sizeof *p);
}
