/* Node costs (weft/node_cost.h, docs/rewrites.md §6.6): the size-based
 * estimate per op family, structural node keys, and the measured-cost table
 * kept on an fgraph as a feature. */
#include <stdlib.h>
#include <string.h>

#include "graph/graph_int.h"
#include "rewrite_int.h"
#include "weft/composite.h"
#include "weft/elemwise.h"
#include "weft/node_cost.h"
#include "weft/op_info.h"

#define COST_FIXED_NS 100.0   /* per node: dispatch, checks, allocation */

static double n_elems(const weft_var_t *v)
{
    const weft_type_t *t = weft_var_type(v);
    double s = 1;
    for (int d = 0; d < weft_type_ndim(t); d++) {
        int64_t n = weft_type_dim(t, d);
        s *= n < 0 ? WEFT_COST_UNKNOWN_LEN : (double)n;
    }
    return s;
}

static double dim_or_unknown(const weft_var_t *v, int d)
{
    const weft_type_t *t = weft_var_type(v);
    if (d < 0) d += weft_type_ndim(t);
    if (d < 0 || d >= weft_type_ndim(t)) return 1;
    int64_t n = weft_type_dim(t, d);
    return n < 0 ? WEFT_COST_UNKNOWN_LEN : (double)n;
}

/* Nanoseconds per element of one elementwise step. */
static double kind_rate(weft_elemwise_kind_t k)
{
    switch (k) {
    case WEFT_ELEMWISE_EXP:
    case WEFT_ELEMWISE_LOG:
    case WEFT_ELEMWISE_LOG1P:
    case WEFT_ELEMWISE_TANH:
    case WEFT_ELEMWISE_SIGMOID:
    case WEFT_ELEMWISE_SIN:
    case WEFT_ELEMWISE_COS:
    case WEFT_ELEMWISE_POW: return 8.0;
    case WEFT_ELEMWISE_SQRT:
    case WEFT_ELEMWISE_DIV: return 2.0;
    case WEFT_ELEMWISE_COPYSIGN:
    case WEFT_ELEMWISE_NEXTAFTER: return 1.0;
    default: /* the float math block (weft/elemwise.h): libm-like calls */
        return k >= WEFT_ELEMWISE_TAN && k <= WEFT_ELEMWISE_NEXTAFTER ? 8.0 : 1.0;
    }
}

/* Per output element: the elementwise rate, or the Composite's summed steps
 * (negative: not elementwise). */
static double elemwise_rate(const weft_op_t *op)
{
    weft_elemwise_kind_t k;
    if (weft_elemwise_op_info(op, &k, NULL)) return kind_rate(k);
    weft_composite_step_t steps[WEFT_COMPOSITE_MAX_STEPS];
    size_t n_steps = 0;
    if (!weft_composite_op_info(op, NULL, &n_steps, steps, NULL)) return -1;
    double r = 0;
    for (size_t s = 0; s < n_steps; s++) r += kind_rate(steps[s].kind);
    return r;
}

/* The inner length of a product-like op (multiply-adds per output element),
 * or 0 when op is not one. */
static double inner_length(const weft_apply_t *node)
{
    const char *c = weft_op_name(weft_apply_op(node));
    size_t n_in = weft_apply_n_inputs(node);
    if (!strcmp(c, "Dot") && n_in >= 1) return dim_or_unknown(weft_apply_input(node, 0), -1);
    if ((!strcmp(c, "Gemm") || !strcmp(c, "Gemv")) && n_in >= 2)
        return dim_or_unknown(weft_apply_input(node, 1), -1);
    if ((!strcmp(c, "Cholesky") || !strcmp(c, "Trsm") || !strcmp(c, "Syrk")) && n_in >= 1)
        return dim_or_unknown(weft_apply_input(node, 0), 0);
    return 0;
}

static bool is_reduction(const weft_apply_t *node)
{
    const weft_op_t *op = weft_apply_op(node);
    weft_reduce_kind_t kind;
    int axes[WEFT_MAX_NDIM], n_axes;
    bool keep;
    const char *c = weft_op_name(op);
    return weft_reduce_op_info(op, &kind, axes, &n_axes, &keep) == WEFT_OK ||
           !strcmp(c, "SumAxes") || !strcmp(c, "Argmax");
}

double weft_node_cost_estimate(const weft_apply_t *node)
{
    if (!node) return 0;
    const weft_op_t *op = weft_apply_op(node);
    double (*hook)(const weft_apply_t *) = WEFT__OP_HOOK(weft_op_class(op), cost_ns);
    double own = hook ? hook(node) : -1;
    if (own >= 0) return own;
    const weft_op_alias_t *vm;
    size_t nv;
    weft_op_view_map(op, &vm, &nv);
    if (nv > 0 || weft_apply_n_outputs(node) == 0) return COST_FIXED_NS;
    double out = n_elems(weft_apply_output(node, 0));
    double rate = elemwise_rate(op), k = inner_length(node);
    if (rate >= 0) return COST_FIXED_NS + out * rate;
    if (k > 0) return COST_FIXED_NS + out * k * WEFT_COST_MULADD_NS;
    if (is_reduction(node) && weft_apply_n_inputs(node) > 0)
        return COST_FIXED_NS + n_elems(weft_apply_input(node, 0));
    return COST_FIXED_NS + out;
}

/* ---- keys --------------------------------------------------------------------------- */

static uint64_t mix(uint64_t h, uint64_t x)
{
    h = (h ^ x) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

static uint64_t str_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

typedef struct in_pos {
    const weft_var_t *v;
    size_t pos;
} in_pos_t;

static int by_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const in_pos_t *)a)->v, y = (uintptr_t)((const in_pos_t *)b)->v;
    return x < y ? -1 : x > y;
}

/* An input variable's contribution: its producer's key and position, an
 * fgraph input's position, or a constant's value. */
static uint64_t input_key(const weft_var_t *v, const uint64_t *keys, const in_pos_t *ins,
                          size_t n_in)
{
    const weft_apply_t *p = weft_var_owner(v);
    if (p) return mix(keys[weft_apply_id(p)], weft_var_index(v));
    if (weft_var_is_constant(v)) return mix(weft_constant_hash(v), 0xc0);
    in_pos_t probe = {v, 0};
    const in_pos_t *hit = n_in ? bsearch(&probe, ins, n_in, sizeof *ins, by_ptr) : NULL;
    return hit ? mix(0x1a, hit->pos) : mix(0x2b, weft_type_hash(weft_var_type(v)));
}

static uint64_t node_key(const weft_apply_t *a, const uint64_t *keys, const in_pos_t *ins,
                         size_t n_in)
{
    uint64_t h = str_hash(weft_op_name(weft_apply_op(a)));
    for (size_t o = 0; o < weft_apply_n_outputs(a); o++)
        h = mix(h, weft_type_hash(weft_var_type(weft_apply_output(a, o))));
    for (size_t i = 0; i < weft_apply_n_inputs(a); i++)
        h = mix(h, input_key(weft_apply_input(a, i), keys, ins, n_in));
    return h;
}

weft_status_t weft_fgraph_node_keys(weft_fgraph_t *fg, size_t cap, uint64_t *keys)
{
    if (!fg || !keys || cap < weft_graph_n_applies(weft_fgraph_graph(fg))) return WEFT_EINVAL;
    weft_apply_t *const *order;
    size_t n;
    weft_status_t st = weft_fgraph_toposort(fg, &order, &n);
    if (st != WEFT_OK) return st;
    size_t n_in = weft_fgraph_n_inputs(fg);
    in_pos_t *ins = weft__vec_malloc(n_in + 1, sizeof *ins);
    if (!ins) return WEFT_ENOMEM;
    for (size_t k = 0; k < n_in; k++) ins[k] = (in_pos_t){weft_fgraph_input(fg, k), k};
    qsort(ins, n_in, sizeof *ins, by_ptr);
    for (size_t i = 0; i < n; i++) keys[weft_apply_id(order[i])] = node_key(order[i], keys, ins,
                                                                            n_in);
    free(ins);
    return WEFT_OK;
}

/* ---- the measured-cost table -------------------------------------------------------- */

typedef struct cost_entry {
    uint64_t key;
    double ns;
} cost_entry_t;

typedef struct cost_table {
    weft_feature_t base; /* first: the feature is the table */
    cost_entry_t *e;
    size_t n;
} cost_table_t;

static void table_destroy(weft_feature_t *f)
{
    cost_table_t *t = (cost_table_t *)f;
    free(t->e);
    free(t);
}

static const weft_feature_class_t cost_table_class = {
    .size = sizeof(weft_feature_class_t),
    .name = "NodeCosts",
    .destroy = table_destroy,
};

static int by_key(const void *a, const void *b)
{
    const cost_entry_t *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key;
}

/* Sorts by key and folds repeated keys into their mean. */
static size_t fold_repeats(cost_entry_t *e, size_t n)
{
    qsort(e, n, sizeof *e, by_key);
    size_t w = 0;
    for (size_t r = 0; r < n;) {
        size_t s = r;
        double sum = 0;
        for (; r < n && e[r].key == e[s].key; r++) sum += e[r].ns;
        e[w++] = (cost_entry_t){e[s].key, sum / (double)(r - s)};
    }
    return w;
}

static weft_status_t table_build(weft_fgraph_t *fg, size_t n, const uint64_t *keys,
                                 const double *ns, cost_table_t **out)
{
    for (size_t k = 0; k < n; k++)
        if (!(ns[k] >= 0))
            return weft_fgraph_set_error(fg, WEFT_EINVAL,
                                         "node costs: cost %zu is negative or NaN", k);
    cost_table_t *t = calloc(1, sizeof *t);
    if (t) t->e = weft__vec_malloc(n, sizeof *t->e);
    if (!t || !t->e) {
        free(t);
        return weft_fgraph_set_error(fg, WEFT_ENOMEM, "node costs: out of memory");
    }
    for (size_t k = 0; k < n; k++) t->e[k] = (cost_entry_t){keys[k], ns[k]};
    t->n = fold_repeats(t->e, n);
    t->base = (weft_feature_t){&cost_table_class, t};
    *out = t;
    return WEFT_OK;
}

weft_status_t weft_fgraph_set_node_costs(weft_fgraph_t *fg, size_t n, const uint64_t *keys,
                                         const double *ns)
{
    if (!fg || (n && (!keys || !ns))) return WEFT_EINVAL;
    cost_table_t *t = NULL;
    if (n) {
        weft_status_t st = table_build(fg, n, keys, ns, &t);
        if (st != WEFT_OK) return st;
    }
    weft_feature_t *old = weft_fgraph_find_feature(fg, &cost_table_class);
    if (old) {
        weft_status_t st = weft_fgraph_remove_feature(fg, old);
        if (st != WEFT_OK) {
            if (t) table_destroy(&t->base);
            return st;
        }
    }
    return t ? weft_fgraph_attach_feature(fg, &t->base) : WEFT_OK;
}

double weft_fgraph_node_cost(const weft_fgraph_t *fg, const weft_apply_t *node, uint64_t key)
{
    const cost_table_t *t =
        fg ? (const cost_table_t *)weft_fgraph_find_feature(fg, &cost_table_class) : NULL;
    if (t) {
        cost_entry_t probe = {key, 0};
        const cost_entry_t *hit = bsearch(&probe, t->e, t->n, sizeof *t->e, by_key);
        if (hit) return hit->ns;
    }
    return weft_node_cost_estimate(node);
}
