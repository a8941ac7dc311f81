/* Proof by execution of the DestroyHandler (stress, seeded: set WEFT_SEED to
 * replay; the seed is printed).
 *
 * Random graphs over three input vectors mix pure ops, a reversed-stride view
 * and in-place ops destroying input 0 or 1, on real buffers (plain double
 * arrays of L elements). Each graph gets a DestroyHandler and - since a
 * compiled function always carries one - a Supervisor protecting its outputs
 * (inputs are declared mutable: they are re-copied before every run).
 *
 * Accepted graphs: the physical execution (views share memory, in-place ops
 * overwrite their input) is run as a task DAG on the work-stealing pool
 * (weft/sched.h) with one edge per data dependency plus one per DH ordering,
 * at T = 1, 2 and 8, many times, and must give outputs bit-identical to the
 * pure reference (every op reads copies and writes fresh arrays). Also the
 * sequential physical execution in fgraph toposort order must match.
 *
 * Rejected graphs must really be unsafe: in several random orders that respect
 * the data edges (the only constraints left without the DH), the physical
 * execution must compute some value that differs from the pure reference (a
 * node output when it is produced, or a graph output at the end) in every
 * one, so no schedule a DH-less compiler could pick is correct:
 *   - D1 (two destroyers of one root): whichever destroyer runs second reads
 *     the root already overwritten by the first;
 *   - D3 (input aliasing): the in-place kernels read input j at index i+1
 *     while writing input d at index i, so an aliased j reads elements the
 *     kernel already overwrote (the kernel is correct only without aliasing);
 *   - D5 (cycle of data edges and orderings): some reader of a destroyed
 *     region depends on its destroyer, so in every order it reads the
 *     overwritten value;
 *   - D6 (protected output destroyed): the destroyer always runs, and the
 *     output's memory ends up holding the destroyer's result.
 * The test fails if any of these outcomes is not observed, or if one of the
 * rules D1, D3, D5, D6 and the accept path are never exercised.
 *
 * On accepted graphs it also checks that weft_dh_can_destroy predicts
 * exactly what replace_validate does for every pure node and input. On every
 * graph, after random unvalidated edits, the incrementally maintained DH must
 * agree (verdict, rule, orderings) with a DH attached afresh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "weft/destroy.h"
#include "weft/fgraph.h"
#include "weft/graph.h"
#include "weft/op.h"
#include "weft/sched.h"

#define L 8
#define N_INPUTS 3

#ifdef WEFT_SANITIZED
#define N_GRAPHS 200
#define N_RUNS 4
#else
#define N_GRAPHS 400
#define N_RUNS 25
#endif

/* ---- ops ------------------------------------------------------------------- */

typedef enum kind { K_U, K_B, K_V, K_I1, K_I2A, K_I2B, K_M, K_COUNT } kind_t;

typedef struct kprops {
    int kind, arity, n_out;
} kprops_t;

static weft_status_t k_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                 weft_var_t *const *inputs, size_t *n_out,
                                 const weft_type_t **out_types)
{
    const kprops_t *p = weft_op_props(op);
    if ((int)n_in != p->arity) return weft_graph_set_error(g, WEFT_EINVAL, "arity");
    *n_out = (size_t)p->n_out;
    for (int k = 0; k < p->n_out; k++) out_types[k] = weft_var_type(inputs[0]);
    return WEFT_OK;
}

static size_t k_fill(weft_op_alias_t *out, size_t cap, uint32_t o, uint32_t i)
{
    if (cap > 0) out[0] = (weft_op_alias_t){o, i};
    return 1;
}
static size_t k_map00(const weft_op_t *op, weft_op_alias_t *out, size_t cap)
{
    (void)op;
    return k_fill(out, cap, 0, 0);
}
static size_t k_map01(const weft_op_t *op, weft_op_alias_t *out, size_t cap)
{
    (void)op;
    return k_fill(out, cap, 0, 1);
}

#define K_CLASS(id, NAME, DM, VM)                                                            \
    static const weft_op_class_t id = {.size = sizeof(weft_op_class_t), .name = NAME,        \
                                       .props_size = sizeof(kprops_t),                       \
                                       .make_node = k_make_node, .destroy_map = DM,          \
                                       .view_map = VM}
K_CLASS(k_u, "Unary", NULL, NULL);
K_CLASS(k_b, "Binary", NULL, NULL);
K_CLASS(k_v, "ReverseView", NULL, k_map00);
K_CLASS(k_i1, "UnaryInPlace", k_map00, NULL);
K_CLASS(k_i2a, "BinaryInPlace0", k_map00, NULL);
K_CLASS(k_i2b, "BinaryInPlace1", k_map01, NULL); /* output 0 overwrites input 1 */
K_CLASS(k_m, "TwoOutInPlace0", k_map00, NULL);

/* ---- buffers and kernels ---------------------------------------------------------
 * A vector is (mem, off, stride): element i is mem[off + i * stride]. */

typedef struct vec {
    double *mem;
    long off, stride;
} vec_t;

static double *at(vec_t v, int i)
{
    return &v.mem[v.off + (long)i * v.stride];
}

/* The kernels: in-place ones write input d element by element, reading the
 * other input at i+1 (correct only when the inputs do not alias). None is an
 * involution (x -> a - x would be: applied twice it restores x and could hide
 * a hazard), and inputs are not dyadic, so exact cancellations are unlikely. outs[k] are
 * where outputs live; for in-place outputs that is the destroyed input. */
static void kernel(int kind, const vec_t *in, const vec_t *out)
{
    switch (kind) {
    case K_U:
        for (int i = 0; i < L; i++) *at(out[0], i) = 0.5 * *at(in[0], i) + 1.0;
        break;
    case K_B:
        for (int i = 0; i < L; i++) *at(out[0], i) = *at(in[0], i) + 2.0 * *at(in[1], (i + 1) % L);
        break;
    case K_V:
        break; /* a view computes nothing */
    case K_I1:
        for (int i = 0; i < L; i++) *at(in[0], i) = 1.5 * *at(in[0], i) - 1.0;
        break;
    case K_I2A:
        for (int i = 0; i < L; i++) *at(in[0], i) = *at(in[0], i) + 3.0 * *at(in[1], (i + 1) % L);
        break;
    case K_I2B:
        for (int i = 0; i < L; i++)
            *at(in[1], i) = *at(in[0], (i + 1) % L) - 0.5 * *at(in[1], i);
        break;
    case K_M:
        for (int i = 0; i < L; i++) *at(out[1], i) = *at(in[0], i) * *at(in[1], i);
        for (int i = 0; i < L; i++) *at(in[0], i) = *at(in[0], i) - *at(in[1], (i + 1) % L);
        break;
    }
}

/* ---- an execution context per graph ------------------------------------------------- */

typedef struct ex {
    weft_graph_t *g;
    const weft_op_t *ops[K_COUNT];
    weft_var_t *inputs[N_INPUTS];
    double init[N_INPUTS][L];
    weft_fgraph_t *fg;
    vec_t *desc;        /* per var id: where its value lives (physical) */
    double *pure;       /* per var id: L values (pure reference) */
    double *arena;      /* fresh buffers for inputs and pure outputs */
    size_t n_vars, arena_used, arena_cap;
} ex_t;

static int op_kind(const weft_apply_t *a)
{
    return ((const kprops_t *)weft_op_props(weft_apply_op(a)))->kind;
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void ex_ops(ex_t *e)
{
    static const kprops_t p[K_COUNT] = {{K_U, 1, 1},   {K_B, 2, 1},   {K_V, 1, 1},
                                        {K_I1, 1, 1},  {K_I2A, 2, 1}, {K_I2B, 2, 1},
                                        {K_M, 2, 2}};
    static const weft_op_class_t *c[K_COUNT] = {&k_u, &k_b, &k_v, &k_i1, &k_i2a, &k_i2b, &k_m};
    for (int k = 0; k < K_COUNT; k++) {
        assert_int_equal(weft_op_create(e->g, c[k], &p[k], &e->ops[k]), WEFT_OK);
    }
}

/* Random DAG of n nodes; returns the outputs (1-3). */
static size_t ex_random_graph(ex_t *e, uint64_t *rs, int n, weft_var_t **outs)
{
    static const int weight[K_COUNT] = {20, 22, 16, 10, 12, 10, 10};
    weft_var_t *pool[128];
    size_t np = 0;
    for (int k = 0; k < N_INPUTS; k++) pool[np++] = e->inputs[k];
    for (int j = 0; j < n; j++) {
        int r = (int)(rng_next(rs) % 100), kind = 0;
        while (r >= weight[kind]) r -= weight[kind++];
        const kprops_t *p = weft_op_props(e->ops[kind]);
        weft_var_t *in[2];
        for (int a = 0; a < p->arity; a++) {
            size_t back = rng_next(rs) % (np < 6 ? np : 6);
            in[a] = (rng_next(rs) % 3 == 0) ? pool[rng_next(rs) % np] : pool[np - 1 - back];
        }
        weft_apply_t *node;
        assert_non_null(node = weft_apply_create(e->g, e->ops[kind], (size_t)p->arity, in));
        for (size_t o = 0; o < weft_apply_n_outputs(node); o++)
            pool[np++] = weft_apply_output(node, o);
    }
    size_t n_out = 1;
    outs[0] = pool[np - 1];
    for (size_t k = 1 + rng_next(rs) % 3; k > 1; k--) {
        weft_var_t *v = pool[N_INPUTS + rng_next(rs) % (np - N_INPUTS)];
        bool dup = false;
        for (size_t q = 0; q < n_out; q++) dup |= outs[q] == v;
        if (!dup) outs[n_out++] = v;
    }
    return n_out;
}

static double *ex_fresh(ex_t *e)
{
    assert_true(e->arena_used + L <= e->arena_cap);
    double *p = e->arena + e->arena_used;
    e->arena_used += L;
    return p;
}

/* Where every variable lives, from the graph structure (any data order). */
static void ex_layout(ex_t *e, weft_apply_t *const *order, size_t n)
{
    e->arena_used = 0;
    for (int k = 0; k < N_INPUTS; k++)
        e->desc[weft_var_id(e->inputs[k])] = (vec_t){ex_fresh(e), 0, 1};
    for (size_t j = 0; j < n; j++) {
        weft_apply_t *a = order[j];
        int kind = op_kind(a);
        vec_t in0 = e->desc[weft_var_id(weft_apply_input(a, 0))];
        uint64_t o0 = weft_var_id(weft_apply_output(a, 0));
        if (kind == K_V)
            e->desc[o0] = (vec_t){in0.mem, in0.off + (L - 1) * in0.stride, -in0.stride};
        else if (kind == K_I1 || kind == K_I2A || kind == K_M) e->desc[o0] = in0;
        else if (kind == K_I2B) e->desc[o0] = e->desc[weft_var_id(weft_apply_input(a, 1))];
        else e->desc[o0] = (vec_t){ex_fresh(e), 0, 1};
        if (kind == K_M) e->desc[weft_var_id(weft_apply_output(a, 1))] = (vec_t){ex_fresh(e), 0, 1};
    }
}

static void ex_reset_inputs(ex_t *e)
{
    for (int k = 0; k < N_INPUTS; k++) {
        vec_t v = e->desc[weft_var_id(e->inputs[k])];
        memcpy(v.mem, e->init[k], sizeof e->init[k]);
    }
}

static void ex_run_node(ex_t *e, const weft_apply_t *a)
{
    vec_t in[2], out[2];
    for (size_t k = 0; k < weft_apply_n_inputs(a); k++)
        in[k] = e->desc[weft_var_id(weft_apply_input(a, k))];
    for (size_t k = 0; k < weft_apply_n_outputs(a); k++)
        out[k] = e->desc[weft_var_id(weft_apply_output(a, k))];
    kernel(op_kind(a), in, out);
}

/* Pure reference: copies of the inputs, fresh outputs, any data order. */
static void ex_pure(ex_t *e, weft_apply_t *const *order, size_t n)
{
    for (int k = 0; k < N_INPUTS; k++)
        memcpy(&e->pure[weft_var_id(e->inputs[k]) * L], e->init[k], sizeof e->init[k]);
    for (size_t j = 0; j < n; j++) {
        const weft_apply_t *a = order[j];
        double cin[2][L];
        vec_t in[2], out[2];
        for (size_t k = 0; k < weft_apply_n_inputs(a); k++) {
            memcpy(cin[k], &e->pure[weft_var_id(weft_apply_input(a, k)) * L], sizeof cin[k]);
            in[k] = (vec_t){cin[k], 0, 1};
        }
        int kind = op_kind(a);
        double *o0 = &e->pure[weft_var_id(weft_apply_output(a, 0)) * L];
        out[0] = (vec_t){o0, 0, 1};
        if (kind == K_M) out[1] = (vec_t){&e->pure[weft_var_id(weft_apply_output(a, 1)) * L], 0, 1};
        kernel(kind, in, out);
        if (kind == K_V) for (int i = 0; i < L; i++) o0[i] = cin[0][L - 1 - i];
        if (kind == K_I1 || kind == K_I2A || kind == K_M) memcpy(o0, cin[0], sizeof cin[0]);
        if (kind == K_I2B) memcpy(o0, cin[1], sizeof cin[1]);
    }
}

/* Does v's physical value equal its pure one now, bit for bit? */
static bool ex_var_matches(ex_t *e, const weft_var_t *v)
{
    vec_t d = e->desc[weft_var_id(v)];
    const double *p = &e->pure[weft_var_id(v) * L];
    for (int i = 0; i < L; i++) {
        if (memcmp(at(d, i), &p[i], sizeof(double)) != 0) return false;
    }
    return true;
}

static bool ex_outputs_match(ex_t *e)
{
    for (size_t k = 0; k < weft_fgraph_n_outputs(e->fg); k++) {
        if (!ex_var_matches(e, weft_fgraph_output(e->fg, k))) return false;
    }
    return true;
}

/* Sequential physical run in `order`: correct iff every node output holds its
 * pure value when produced and every graph output still holds it at the end. */
static bool ex_run_checked(ex_t *e, weft_apply_t *const *order, size_t n)
{
    ex_reset_inputs(e);
    bool ok = true;
    for (size_t k = 0; k < n; k++) {
        ex_run_node(e, order[k]);
        for (size_t o = 0; o < weft_apply_n_outputs(order[k]); o++)
            ok &= ex_var_matches(e, weft_apply_output(order[k], o));
    }
    return ok && ex_outputs_match(e);
}

/* A random order of the fgraph's nodes respecting data edges only. */
static size_t ex_data_order(ex_t *e, uint64_t *rs, weft_apply_t **out)
{
    weft_apply_t *const *nodes;
    size_t n;
    assert_int_equal(weft_fgraph_applies(e->fg, &nodes, &n), WEFT_OK);
    bool *done = calloc(n, 1);
    assert_non_null(done);
    for (size_t placed = 0; placed < n; placed++) {
        size_t ready[128], nr = 0;
        for (size_t j = 0; j < n; j++) {
            if (done[j]) continue;
            bool ok = true;
            for (size_t k = 0; k < weft_apply_n_inputs(nodes[j]) && ok; k++) {
                weft_apply_t *ow = weft_var_owner(weft_apply_input(nodes[j], k));
                for (size_t q = 0; ow && q < n; q++) ok &= !(nodes[q] == ow && !done[q]);
            }
            if (ok) ready[nr++] = j;
        }
        assert_true(nr > 0);
        size_t pick = ready[rng_next(rs) % nr];
        done[pick] = true;
        out[placed] = nodes[pick];
    }
    free(done);
    return n;
}

/* ---- parallel execution on the scheduler ---------------------------------------------- */

typedef struct task {
    ex_t *e;
    const weft_apply_t *node;
} task_t;

static weft_status_t task_body(void *arg, const weft_task_ctx_t *ctx)
{
    (void)ctx;
    task_t *t = arg;
    ex_run_node(t->e, t->node);
    return WEFT_OK;
}

static uint32_t index_of(weft_apply_t *const *order, size_t n, const weft_apply_t *a)
{
    for (size_t k = 0; k < n; k++) {
        if (order[k] == a) return (uint32_t)k;
    }
    return UINT32_MAX;
}

static void add_edge_once(weft_dag_t *dag, uint8_t *seen, size_t n, uint32_t from, uint32_t to)
{
    if (from == UINT32_MAX || seen[(size_t)from * n + to]) return;
    seen[(size_t)from * n + to] = 1;
    assert_int_equal(weft_dag_add_edge(dag, from, to), WEFT_OK);
}

/* One DAG node per apply, data edges plus the DH orderings (no data). */
static weft_dag_t *ex_build_dag(ex_t *e, weft_apply_t *const *order, size_t n, task_t *tasks)
{
    weft_dag_t *dag;
    assert_int_equal(weft_dag_create(NULL, &dag), WEFT_OK);
    uint8_t *seen = calloc(n * n + 1, 1);
    assert_non_null(seen);
    for (size_t k = 0; k < n; k++) {
        tasks[k] = (task_t){e, order[k]};
        assert_int_equal(weft_dag_add_node(dag, task_body, &tasks[k], NULL, NULL), WEFT_OK);
    }
    for (size_t k = 0; k < n; k++) {
        for (size_t i = 0; i < weft_apply_n_inputs(order[k]); i++) {
            weft_apply_t *ow = weft_var_owner(weft_apply_input(order[k], i));
            if (ow) add_edge_once(dag, seen, n, index_of(order, n, ow), (uint32_t)k);
        }
    }
    weft_apply_t *const *b, *const *a;
    size_t np;
    assert_int_equal(weft_dh_orderings(e->fg, &b, &a, &np), WEFT_OK);
    for (size_t k = 0; k < np; k++) {
        add_edge_once(dag, seen, n, index_of(order, n, b[k]), index_of(order, n, a[k]));
    }
    free(seen);
    assert_int_equal(weft_dag_finalize(dag), WEFT_OK);
    return dag;
}

static weft_pool_t *g_pools[3];
static const int g_threads[3] = {1, 2, 8};

static void ex_check_accepted(ex_t *e)
{
    weft_apply_t *const *topo;
    size_t n;
    assert_int_equal(weft_fgraph_toposort(e->fg, &topo, &n), WEFT_OK);
    weft_apply_t **order = malloc((n ? n : 1) * sizeof *order);
    task_t *tasks = malloc((n ? n : 1) * sizeof *tasks);
    assert_non_null(order);
    assert_non_null(tasks);
    memcpy(order, topo, n * sizeof *order);
    ex_layout(e, order, n);
    ex_pure(e, order, n);
    assert_true(ex_run_checked(e, order, n));
    weft_dag_t *dag = ex_build_dag(e, order, n, tasks);
    for (int p = 0; p < 3; p++) {
        weft_dag_run_t *run;
        assert_int_equal(weft_dag_run_create(dag, g_pools[p], NULL, &run), WEFT_OK);
        for (int r = 0; r < N_RUNS; r++) {
            ex_reset_inputs(e);
            assert_int_equal(weft_dag_run_execute(run, NULL), WEFT_OK);
            if (!ex_outputs_match(e)) {
                fprintf(stderr, "mismatch at T=%d run %d\n", g_threads[p], r);
                fail();
            }
        }
        assert_int_equal(weft_dag_run_destroy(run), WEFT_OK);
    }
    assert_int_equal(weft_dag_destroy(dag), WEFT_OK);
    free(order);
    free(tasks);
}

/* weft_dh_can_destroy must predict replace_validate exactly for pure
 * nodes: each pure node is tentatively swapped for its in-place variant on
 * each input; an accepted swap is undone with a plain replace. */
static void ex_check_can_destroy(ex_t *e, int *agree)
{
    weft_apply_t *const *nodes;
    size_t n;
    assert_int_equal(weft_fgraph_applies(e->fg, &nodes, &n), WEFT_OK);
    weft_apply_t *list[128];
    memcpy(list, nodes, n * sizeof *list);
    for (size_t j = 0; j < n; j++) {
        int kind = op_kind(list[j]);
        if (kind != K_U && kind != K_B) continue;
        for (size_t i = 0; i < weft_apply_n_inputs(list[j]); i++) {
            const weft_op_t *variant = e->ops[kind == K_U ? K_I1 : i == 0 ? K_I2A : K_I2B];
            bool ok;
            assert_int_equal(weft_dh_can_destroy(e->fg, list[j], i, variant, &ok), WEFT_OK);
            weft_var_t *in[2] = {weft_apply_input(list[j], 0), weft_apply_input(list[j], 1)};
            weft_var_t *old = weft_apply_output(list[j], 0), *nv;
            assert_non_null(nv = weft_op_call(e->g, variant, weft_apply_n_inputs(list[j]), in));
            weft_status_t s = weft_fgraph_replace_validate(e->fg, old, nv, "inplace");
            if ((s == WEFT_OK) != ok) {
                fprintf(stderr, "can_destroy said %d, replace_validate %d: %s\n", ok, s,
                        weft_fgraph_last_error(e->fg));
                fail();
            }
            if (s == WEFT_OK) {
                assert_int_equal(weft_fgraph_replace(e->fg, nv, old, "undo"), WEFT_OK);
                assert_int_equal(weft_fgraph_validate(e->fg), WEFT_OK);
            } else {
                assert_int_equal(s, WEFT_EINCONSISTENT);
            }
            (*agree)++;
        }
    }
}

/* The DH's own verdict (D0-D5), its rule word and its orderings as sorted
 * "before id * 2^32 + after id" keys. */
typedef struct dh_view {
    weft_status_t verdict, ord_status;
    char rule[48];
    uint64_t keys[512];
    size_t n_keys;
} dh_view_t;

static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void dh_view_take(ex_t *e, dh_view_t *v)
{
    weft_feature_t *f = weft_fgraph_find_feature(e->fg, &weft_dh_class);
    assert_non_null(f);
    memset(v, 0, sizeof *v);
    v->verdict = f->cls->on_validate(f, e->fg);
    if (v->verdict != WEFT_OK) {
        const char *m = weft_fgraph_last_error(e->fg);
        size_t len = strcspn(m, ":(");
        memcpy(v->rule, m, len < sizeof v->rule - 1 ? len : sizeof v->rule - 1);
    }
    weft_apply_t *const *b, *const *a;
    v->ord_status = weft_dh_orderings(e->fg, &b, &a, &v->n_keys);
    if (v->ord_status != WEFT_OK) {
        v->n_keys = 0;
        return;
    }
    assert_true(v->n_keys <= 512);
    for (size_t k = 0; k < v->n_keys; k++)
        v->keys[k] = (weft_apply_id(b[k]) << 32) | weft_apply_id(a[k]);
    qsort(v->keys, v->n_keys, sizeof *v->keys, u64_cmp);
}

/* The incremental DH must agree with a DH attached afresh to the same graph. */
static void ex_compare_fresh(ex_t *e)
{
    dh_view_t inc, fresh;
    dh_view_take(e, &inc);
    weft_feature_t *f = weft_fgraph_find_feature(e->fg, &weft_dh_class);
    assert_int_equal(weft_fgraph_remove_feature(e->fg, f), WEFT_OK);
    assert_int_equal(weft_dh_attach(e->fg, NULL), WEFT_OK);
    dh_view_take(e, &fresh);
    assert_int_equal(inc.verdict, fresh.verdict);
    assert_int_equal(inc.ord_status, fresh.ord_status);
    assert_string_equal(inc.rule, fresh.rule);
    assert_int_equal(inc.n_keys, fresh.n_keys);
    assert_memory_equal(inc.keys, fresh.keys, inc.n_keys * sizeof *inc.keys);
}

/* Random unvalidated edits (a node replaced by a random pure, view or
 * in-place node on inputs that precede it, so no data cycle): after each,
 * incremental state == fresh state. */
static void ex_check_incremental(ex_t *e, uint64_t *rs, int *edits)
{
    for (int step = 0; step < 6; step++) {
        weft_apply_t *order[128];
        size_t n = ex_data_order(e, rs, order);
        size_t j = rng_next(rs) % n, nc = 0;
        weft_var_t *cand[256];
        for (int k = 0; k < N_INPUTS; k++) cand[nc++] = e->inputs[k];
        for (size_t q = 0; q < j; q++) {
            for (size_t o = 0; o < weft_apply_n_outputs(order[q]); o++)
                cand[nc++] = weft_apply_output(order[q], o);
        }
        int kind = (int)(rng_next(rs) % K_COUNT);
        const kprops_t *p = weft_op_props(e->ops[kind]);
        weft_var_t *in[2] = {cand[rng_next(rs) % nc], cand[rng_next(rs) % nc]};
        weft_apply_t *a;
        assert_non_null(a = weft_apply_create(e->g, e->ops[kind], (size_t)p->arity, in));
        weft_var_t *old = weft_apply_output(order[j], 0);
        assert_int_equal(weft_fgraph_replace(e->fg, old, weft_apply_output(a, 0), "edit"),
                         WEFT_OK);
        ex_compare_fresh(e);
        (*edits)++;
    }
}

enum { R_D1, R_D3, R_D5, R_D6, R_COUNT };

static int ex_rule(const char *msg)
{
    if (strstr(msg, "Multiple destroyers of")) return R_D1;
    if (strstr(msg, "Input aliasing:")) return R_D3;
    if (strstr(msg, "Dependency graph contains cycles")) return R_D5;
    if (strstr(msg, "Trying to destroy a protected variable")) return R_D6;
    fprintf(stderr, "unexpected rejection: %s\n", msg);
    fail();
    return -1;
}

/* Every data-respecting order tried must compute a wrong value: a node output
 * that differs from its pure value when produced (e.g. an aliased in-place
 * kernel, a reader of an overwritten root) or a graph output overwritten
 * later. */
static void ex_check_rejected(ex_t *e, uint64_t *rs)
{
    weft_apply_t *order[128];
    for (int t = 0; t < 4; t++) {
        size_t n = ex_data_order(e, rs, order);
        ex_layout(e, order, n);
        ex_pure(e, order, n);
        if (ex_run_checked(e, order, n)) {
            fprintf(stderr, "rejected graph ran correctly: %s\n", weft_fgraph_last_error(e->fg));
            weft_fgraph_dprint(e->fg, stderr);
            fail();
        }
    }
}

static void ex_one_graph(uint64_t *rs, int counts[R_COUNT + 3])
{
    ex_t e = {0};
    assert_int_equal(weft_graph_create(NULL, &e.g), WEFT_OK);
    ex_ops(&e);
    const weft_type_t *t;
    int64_t shape[1] = {L};
    assert_int_equal(weft_type_tensor(e.g, WEFT_FLOAT64, 1, shape, &t), WEFT_OK);
    for (int k = 0; k < N_INPUTS; k++) {
        assert_non_null(e.inputs[k] = weft_var_create(e.g, t, NULL));
        for (int i = 0; i < L; i++)
            e.init[k][i] = ((double)(rng_next(rs) % 2000) + 0.37) / 7.3 - 15.0;
    }
    weft_var_t *outs[4];
    size_t n_out = ex_random_graph(&e, rs, 4 + (int)(rng_next(rs) % 14), outs);
    weft_feature_t *dh;
    assert_int_equal(weft_dh_create(NULL, &dh), WEFT_OK);
    static const bool mut[N_INPUTS] = {true, true, true};
    weft_fgraph_options_t o = WEFT_FGRAPH_OPTIONS_INIT;
    o.clone = false;
    o.n_features = 1;
    o.features = &dh;
    o.input_mutable = mut;
    assert_int_equal(weft_fgraph_create(e.g, N_INPUTS, e.inputs, n_out, outs, &o, NULL, &e.fg),
                     WEFT_OK);
    e.n_vars = weft_graph_n_vars(e.g);
    e.desc = calloc(e.n_vars, sizeof *e.desc);
    e.pure = calloc(e.n_vars * L, sizeof *e.pure);
    e.arena_cap = (e.n_vars + N_INPUTS) * L;
    e.arena = calloc(e.arena_cap, sizeof *e.arena);
    assert_true(e.desc && e.pure && e.arena);
    weft_status_t s = weft_fgraph_validate(e.fg);
    if (s == WEFT_OK) {
        counts[R_COUNT]++;
        ex_check_accepted(&e);
        ex_check_can_destroy(&e, &counts[R_COUNT + 1]);
    } else {
        assert_int_equal(s, WEFT_EINCONSISTENT);
        counts[ex_rule(weft_fgraph_last_error(e.fg))]++;
        ex_check_rejected(&e, rs);
    }
    ex_compare_fresh(&e);
    ex_check_incremental(&e, rs, &counts[R_COUNT + 2]);
    free(e.desc);
    free(e.pure);
    free(e.arena);
    weft_fgraph_destroy(e.fg);
    weft_graph_destroy(e.g);
}

static void test_destroy_exec_random_graphs_match_pure_semantics(void **state)
{
    (void)state;
    const char *env = getenv("WEFT_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);
    printf("test_destroy_exec: seed=%llu (set WEFT_SEED to replay)\n", (unsigned long long)seed);
    uint64_t rs = seed * 2654435761u + 0x9e3779b97f4a7c15ull;
    for (int p = 0; p < 3; p++) {
        weft_pool_options_t po = WEFT_POOL_OPTIONS_INIT;
        po.pin = WEFT_PIN_NONE;
        assert_int_equal(weft_pool_create(g_threads[p], &po, &g_pools[p]), WEFT_OK);
    }
    int counts[R_COUNT + 3] = {0};
    for (int k = 0; k < N_GRAPHS; k++) ex_one_graph(&rs, counts);
    printf("test_destroy_exec: accepted=%d D1=%d D3=%d D5=%d D6=%d can_destroy_checks=%d "
           "incremental_edits=%d\n",
           counts[R_COUNT], counts[R_D1], counts[R_D3], counts[R_D5], counts[R_D6],
           counts[R_COUNT + 1], counts[R_COUNT + 2]);
    for (int k = 0; k < R_COUNT + 3; k++) assert_true(counts[k] > 0);
    for (int p = 0; p < 3; p++) assert_int_equal(weft_pool_destroy(g_pools[p]), WEFT_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_destroy_exec_random_graphs_match_pure_semantics),
    };
    return cmocka_run_group_tests_name("destroy_exec", tests, NULL, NULL);
}
