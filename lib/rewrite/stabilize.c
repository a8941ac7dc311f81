/* The stabilization rewrites (docs/rewrites.md §5.1, group `stabilize`):
 * expressions that overflow, underflow or lose their digits replaced by the
 * stable op computing the same real function. They change results (finite
 * where the original overflowed, exact where it rounded), so they carry the
 * tag fast_math (§6.5) besides stabilize. */
#include <string.h>

#include "graph/ctor_int.h"
#include "rewrite_int.h"
#include "weft/elemwise.h"
#include "weft/nn.h"
#include "weft/op_info.h"
#include "weft/reduce.h"

static weft_var_t *in(const weft_apply_t *n, size_t i)
{
    return weft_apply_input(n, i);
}

/* Records node's output -> v (built by the constructors: NULL is their
 * failure) when v may replace it. */
static weft_status_t give(weft_fgraph_t *fg, weft_rewrite_result_t *res, const weft_apply_t *node,
                          weft_var_t *v)
{
    weft_status_t st = weft__got(weft_fgraph_graph(fg), v);
    weft_var_t *old = weft_apply_output(node, 0);
    if (st != WEFT_OK || !weft__can_replace(old, v)) return st;
    return weft_rewrite_result_replace(res, old, v);
}

/* The input of the Log node `node` when it is the output of a kind node. */
static weft_apply_t *log_of(const weft_apply_t *node, int kind)
{
    int k;
    if (!weft__ew_kind(node, &k) || k != WEFT_ELEMWISE_LOG) return NULL;
    return weft__ew_owner(in(node, 0), kind);
}

/* The operand of a + c or c + a (Add node a) that is not the constant c;
 * NULL when neither is. */
static weft_var_t *add_const_operand(const weft_apply_t *a, double c)
{
    if (weft__is_const_value(in(a, 0), c)) return in(a, 1);
    if (weft__is_const_value(in(a, 1), c)) return in(a, 0);
    return NULL;
}

/* log(1 + x), log(x + 1) -> log1p(x) */
static weft_status_t local_log1p(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                 weft_rewrite_result_t *res)
{
    (void)user;
    weft_apply_t *a = log_of(node, WEFT_ELEMWISE_ADD);
    weft_var_t *x = a ? add_const_operand(a, 1.0) : NULL;
    return x ? give(fg, res, node, weft_log1p(weft_fgraph_graph(fg), x)) : WEFT_OK;
}

/* The elementwise kind named `name` in this build: Expm1 comes with the float
 * math kinds; looked up by name, this rewrite activates once they exist. */
static bool ew_kind_named(const char *name, int *kind)
{
    for (int k = 0; k < WEFT_ELEMWISE_KIND_COUNT; k++) {
        if (strcmp(weft_elemwise_name((weft_elemwise_kind_t)k), name) == 0) {
            *kind = k;
            return true;
        }
    }
    return false;
}

/* exp(x) - 1 -> expm1(x) (when the Expm1 kind exists) */
static weft_status_t local_expm1(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                 weft_rewrite_result_t *res)
{
    (void)user;
    int k, expm1;
    if (!weft__ew_kind(node, &k) || k != WEFT_ELEMWISE_SUB || !ew_kind_named("Expm1", &expm1) ||
        !weft__is_const_value(in(node, 1), 1.0))
        return WEFT_OK;
    weft_apply_t *e = weft__ew_owner(in(node, 0), WEFT_ELEMWISE_EXP);
    if (!e) return WEFT_OK;
    weft_graph_t *g = weft_fgraph_graph(fg);
    return give(fg, res, node, weft_unary(g, (weft_elemwise_kind_t)expm1, in(e, 0)));
}

/* log(sigmoid(x)) -> -softplus(-x) */
static weft_status_t local_log_sigmoid(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                       weft_rewrite_result_t *res)
{
    (void)user;
    weft_apply_t *s = log_of(node, WEFT_ELEMWISE_SIGMOID);
    return s ? give(fg, res, node, weft_log_sigmoid(weft_fgraph_graph(fg), in(s, 0))) : WEFT_OK;
}

/* log(softmax(x, axis)) -> log_softmax(x, axis) */
static weft_status_t local_log_softmax(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                       weft_rewrite_result_t *res)
{
    (void)user;
    int k, axis;
    bool is_log;
    weft_apply_t *s = weft__ew_kind(node, &k) && k == WEFT_ELEMWISE_LOG
                          ? weft_var_owner(in(node, 0))
                          : NULL;
    if (!s || !weft_softmax_op_info(weft_apply_op(s), &is_log, &axis) || is_log) return WEFT_OK;
    return give(fg, res, node, weft_log_softmax(weft_fgraph_graph(fg), in(s, 0), axis));
}

/* The Sum node owning v, with its axes and keepdims. */
static weft_apply_t *sum_owner(const weft_var_t *v, int *axes, int *n_axes, bool *keepdims)
{
    weft_apply_t *a = weft_var_owner(v);
    weft_reduce_kind_t kind;
    if (!a || weft_reduce_op_info(weft_apply_op(a), &kind, axes, n_axes, keepdims) != WEFT_OK ||
        kind != WEFT_REDUCE_SUM)
        return NULL;
    return a;
}

/* log(sum(exp(x), axes, keepdims)) -> logsumexp(x, axes, keepdims) */
static weft_status_t local_log_sum_exp(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                       weft_rewrite_result_t *res)
{
    (void)user;
    int k, axes[WEFT_MAX_NDIM], n;
    bool keep;
    weft_apply_t *s = weft__ew_kind(node, &k) && k == WEFT_ELEMWISE_LOG
                          ? sum_owner(in(node, 0), axes, &n, &keep)
                          : NULL;
    weft_apply_t *e = s ? weft__ew_owner(in(s, 0), WEFT_ELEMWISE_EXP) : NULL;
    if (!e) return WEFT_OK;
    weft_graph_t *g = weft_fgraph_graph(fg);
    return give(fg, res, node, weft_logsumexp(g, in(e, 0), (size_t)n, axes, keep));
}

/* The max-shifted form m + log(sum(exp(x - m), axes, keepdims=True)), m =
 * max(x, axes, keepdims=True) (either operand order) -> logsumexp(x, axes,
 * keepdims=True): LogSumExp shifts by the maximum itself. */
static weft_status_t local_log_sum_exp_shifted(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                               weft_rewrite_result_t *res)
{
    (void)user;
    int k;
    if (!weft__ew_kind(node, &k) || k != WEFT_ELEMWISE_ADD) return WEFT_OK;
    for (size_t i = 0; i < 2; i++) {
        weft_var_t *m = in(node, 1 - i);
        int axes[WEFT_MAX_NDIM], n, maxes[WEFT_MAX_NDIM], mn;
        bool keep, mkeep;
        weft_apply_t *lg = weft__ew_owner(in(node, i), WEFT_ELEMWISE_LOG);
        weft_apply_t *s = lg ? sum_owner(in(lg, 0), axes, &n, &keep) : NULL;
        weft_apply_t *e = s ? weft__ew_owner(in(s, 0), WEFT_ELEMWISE_EXP) : NULL;
        weft_apply_t *d = e ? weft__ew_owner(in(e, 0), WEFT_ELEMWISE_SUB) : NULL;
        weft_apply_t *mx = d && in(d, 1) == m ? weft_var_owner(m) : NULL;
        weft_reduce_kind_t mk;
        if (!mx || !keep ||
            weft_reduce_op_info(weft_apply_op(mx), &mk, maxes, &mn, &mkeep) != WEFT_OK ||
            mk != WEFT_REDUCE_MAX || !mkeep || mn != n || in(mx, 0) != in(d, 0) ||
            memcmp(axes, maxes, (size_t)n * sizeof *axes) != 0)
            continue;
        weft_graph_t *g = weft_fgraph_graph(fg);
        return give(fg, res, node, weft_logsumexp(g, in(d, 0), (size_t)n, axes, true));
    }
    return WEFT_OK;
}

typedef struct stab {
    const char *name;
    weft_node_rewrite_fn fn;
    const char *track;
} stab_t;

static const stab_t stabs[] = {
    {"local_log1p", local_log1p, "Log"},
    {"local_expm1", local_expm1, "Sub"},
    {"local_log_sigmoid", local_log_sigmoid, "Log"},
    {"local_log_softmax", local_log_softmax, "Log"},
    {"local_log_sum_exp", local_log_sum_exp, "Log"},
    {"local_log_sum_exp_shifted", local_log_sum_exp_shifted, "Add"},
};

size_t weft__stabilize_count(void)
{
    return sizeof stabs / sizeof stabs[0];
}

const char *weft__stabilize_name(size_t i)
{
    return i < weft__stabilize_count() ? stabs[i].name : NULL;
}

weft_status_t weft__stabilize_create(const char *name, weft_rewriter_t **out)
{
    for (size_t i = 0; i < weft__stabilize_count(); i++) {
        if (strcmp(stabs[i].name, name) != 0) continue;
        const weft_op_class_t *cls = weft__class(stabs[i].track);
        weft_node_rewriter_desc_t d = WEFT_NODE_REWRITER_DESC_INIT;
        d.name = stabs[i].name;
        d.transform = stabs[i].fn;
        d.n_classes = 1;
        d.classes = &cls;
        return weft_rewriter_node_create(&d, out);
    }
    return WEFT_ENOTFOUND;
}
