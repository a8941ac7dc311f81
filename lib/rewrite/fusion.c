/* local_elemwise_fusion (weft/composite.h): an out-of-place elementwise node
 * and the chain of elementwise producers only it consumes become one
 * Composite node, so the expression runs in one pass over memory with no
 * intermediate buffers (PyTensor's FusionOptimizer).
 *
 * Walked output to input: the last node of a chain is visited first and
 * absorbs every producer that (a) is an out-of-place elementwise node or
 * Composite of an allowed kind whose inputs all have its output dtype,
 * (b) has exactly one client (this expression; an output or a value read
 * elsewhere must stay materialized), and (c) has the root's output type, so
 * no value is recomputed per broadcast element. The program is capped at
 * WEFT_COMPOSITE_MAX_INPUTS inputs and WEFT_COMPOSITE_MAX_STEPS steps: a
 * producer that does not fit stays an input. */
#include "graph/ctor_int.h"
#include "rewrite_int.h"
#include "weft/composite.h"
#include "weft/elemwise.h"

typedef struct fusion {
    weft_fgraph_t *fg;
    const weft_type_t *type;  /* the root's output type */
    size_t n_in, n_steps;
    weft_var_t *in[WEFT_COMPOSITE_MAX_INPUTS];
    weft_composite_step_t steps[WEFT_COMPOSITE_MAX_STEPS];
    size_t reserved; /* steps promised to the nodes being compiled above */
    size_t n_absorbed;
} fusion_t;

static bool kind_fusable(weft_elemwise_kind_t k)
{
    return k != WEFT_ELEMWISE_CAST && !(k >= WEFT_ELEMWISE_LT && k <= WEFT_ELEMWISE_NE) &&
           k != WEFT_ELEMWISE_SWITCH; /* bool-valued kinds fail node_fusable's dtype test */
}

/* An out-of-place elementwise node or Composite computing in its output's
 * dtype (no input conversion). */
static bool node_fusable(const weft_apply_t *node)
{
    const weft_op_t *op = weft_apply_op(node);
    weft_elemwise_kind_t k;
    int ip = 0;
    bool ew = weft_elemwise_op_info(op, &k, &ip);
    if (!(ew && ip < 0 && kind_fusable(k)) && !(weft_composite_op_info(op, NULL, NULL, NULL, &ip)
                                              && ip < 0))
        return false;
    weft_dtype_t dt = weft_type_dtype(weft_var_type(weft_apply_output(node, 0)));
    /* Composite refuses bool, complex (docs/dtypes.md) and integer Pow
     * (weft/composite.h) */
    if (dt == WEFT_BOOL || weft_dtype_kind(dt) == WEFT_KIND_COMPLEX) return false;
    if (ew && k == WEFT_ELEMWISE_POW && weft_dtype_kind(dt) != WEFT_KIND_FLOAT) return false;
    for (size_t i = 0; i < weft_apply_n_inputs(node); i++)
        if (weft_type_dtype(weft_var_type(weft_apply_input(node, i))) != dt) return false;
    return true;
}

static bool absorbable(const fusion_t *fu, const weft_var_t *v)
{
    weft_apply_t *a = weft_var_owner(v);
    return a && node_fusable(a) && weft_fgraph_n_clients(fu->fg, v) == 1 &&
           weft_type_equal(weft_var_type(v), fu->type);
}

/* The register of input variable v (added when new); false when full. */
static bool input_reg(fusion_t *fu, weft_var_t *v, uint8_t *reg)
{
    for (size_t i = 0; i < fu->n_in; i++)
        if (fu->in[i] == v) {
            *reg = (uint8_t)i;
            return true;
        }
    if (fu->n_in == WEFT_COMPOSITE_MAX_INPUTS) return false;
    fu->in[fu->n_in] = v;
    *reg = (uint8_t)fu->n_in++;
    return true;
}

static bool add_step(fusion_t *fu, weft_elemwise_kind_t k, const uint8_t *args, uint8_t *reg)
{
    if (fu->n_steps == WEFT_COMPOSITE_MAX_STEPS) return false;
    fu->steps[fu->n_steps] = (weft_composite_step_t){k, {args[0], args[1], args[2]}};
    *reg = (uint8_t)(0x80 | fu->n_steps++); /* step registers are renumbered at the end */
    return true;
}

static bool compile_var(fusion_t *fu, weft_var_t *v, uint8_t *reg);

/* Appends node's computation; its inputs compiled first. */
static bool compile_node(fusion_t *fu, weft_apply_t *node, uint8_t *reg)
{
    uint8_t args[WEFT_COMPOSITE_MAX_INPUTS] = {0};
    size_t n = weft_apply_n_inputs(node);
    for (size_t i = 0; i < n; i++)
        if (!compile_var(fu, weft_apply_input(node, i), &args[i])) return false;
    weft_elemwise_kind_t k;
    if (weft_elemwise_op_info(weft_apply_op(node), &k, NULL)) return add_step(fu, k, args, reg);
    /* a Composite: its steps, with its registers mapped onto ours */
    size_t c_in, c_steps;
    weft_composite_step_t cs[WEFT_COMPOSITE_MAX_STEPS];
    uint8_t map[WEFT_COMPOSITE_MAX_INPUTS + WEFT_COMPOSITE_MAX_STEPS];
    weft_composite_op_info(weft_apply_op(node), &c_in, &c_steps, cs, NULL);
    memcpy(map, args, c_in);
    for (size_t s = 0; s < c_steps; s++) {
        uint8_t a[3] = {map[cs[s].arg[0]], map[cs[s].arg[1]], map[cs[s].arg[2]]};
        if (!add_step(fu, cs[s].kind, a, &map[c_in + s])) return false;
    }
    *reg = map[c_in + c_steps - 1];
    return true;
}

/* Steps node contributes: 1, or a Composite's program length. */
static size_t node_steps(const weft_apply_t *node)
{
    size_t n = 1;
    weft_composite_op_info(weft_apply_op(node), NULL, &n, NULL, NULL);
    return n;
}

/* The register holding v: its producer's steps when absorbable and they fit,
 * else an input. The producer's steps are reserved before its own inputs
 * are compiled, so producers nearest the root take the budget first and the
 * cap cuts the chain at its far end. */
static bool compile_var(fusion_t *fu, weft_var_t *v, uint8_t *reg)
{
    if (absorbable(fu, v)) {
        weft_apply_t *owner = weft_var_owner(v);
        size_t need = node_steps(owner);
        if (fu->n_steps + fu->reserved + need <= WEFT_COMPOSITE_MAX_STEPS) {
            fusion_t saved = *fu;
            fu->reserved += need;
            bool ok = compile_node(fu, owner, reg);
            if (ok) {
                fu->reserved -= need;
                fu->n_absorbed++;
                return true;
            }
            *fu = saved; /* an input did not fit: keep v materialized */
        }
    }
    return input_reg(fu, v, reg);
}

/* Step registers were tagged 0x80 | step while the input count grew; now
 * inputs take 0..n_in-1 and steps follow. */
static void renumber(fusion_t *fu)
{
    for (size_t s = 0; s < fu->n_steps; s++)
        for (int j = 0; j < 3; j++) {
            uint8_t *r = &fu->steps[s].arg[j];
            if (*r & 0x80) *r = (uint8_t)(fu->n_in + (*r & 0x7f));
        }
}

weft_status_t weft__local_elemwise_fusion(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                          weft_rewrite_result_t *res)
{
    (void)user;
    if (weft_apply_n_outputs(node) != 1 || !node_fusable(node)) return WEFT_OK;
    weft_var_t *out = weft_apply_output(node, 0);
    fusion_t fu = {.fg = fg, .type = weft_var_type(out), .reserved = node_steps(node)};
    uint8_t root;
    if (!compile_node(&fu, node, &root) || fu.n_absorbed == 0) return WEFT_OK;
    renumber(&fu);
    const char *file;
    int line;
    weft_var_trace(out, &file, &line);
    weft_var_t *fused;
    weft_status_t st = weft__got(weft_fgraph_graph(fg),
                                 fused = weft_composite_at(weft_fgraph_graph(fg), fu.n_in, fu.in,
                                                           fu.n_steps, fu.steps, file, line));
    if (st == WEFT_ENOMEM) return st;
    if (st != WEFT_OK || !weft__can_replace(out, fused)) return WEFT_OK;
    return weft_rewrite_result_replace(res, out, fused);
}
