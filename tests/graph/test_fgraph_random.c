/* Randomized stress of the FunctionGraph (label stress): random graphs and
 * random sequences of replace, transactional replace (accepted or rejected),
 * import, remove_node, change_node_input, add/remove outputs and inputs, and
 * replace / change_node_input with any variable, refused with WEFT_ECYCLE
 * exactly when a brute-force search finds the cycle it would close. After
 * every step: check_integrity passes, toposort is a valid order, and the
 * recording feature's view (imports minus prunes) equals the apply set with
 * no protocol error. Seeded (WEFT_SEED overrides) and the seed is printed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "graph_fixture.h"

#ifdef WEFT_SANITIZED
#define ROUNDS 100
#else
#define ROUNDS 300
#endif
#define STEPS 60

static uint64_t rng_state;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static size_t below(size_t n)
{
    return n ? (size_t)(rnd() % n) : 0;
}

typedef struct pool {
    weft_var_t *v[4096];
    size_t n;
} pool_t;

/* Variables currently in fg: inputs (used or not) and every node output. */
static void collect(weft_fgraph_t *fg, pool_t *p)
{
    p->n = 0;
    for (size_t k = 0; k < weft_fgraph_n_inputs(fg) && p->n < 4096; k++)
        p->v[p->n++] = weft_fgraph_input(fg, k);
    weft_apply_t *const *nodes;
    size_t n;
    assert_int_equal(weft_fgraph_applies(fg, &nodes, &n), WEFT_OK);
    for (size_t k = 0; k < n; k++)
        for (size_t o = 0; o < weft_apply_n_outputs(nodes[k]) && p->n < 4096; o++)
            p->v[p->n++] = weft_apply_output(nodes[k], o);
}

static weft_var_t *random_node(fx_t *f, weft_var_t *a, weft_var_t *b)
{
    switch (below(5)) {
    case 0:
        return fx_un(f, f->exp, a);
    case 1:
        return fx_un(f, f->neg, a);
    case 2:
        return fx_bin(f, f->add, a, b);
    case 3:
        return fx_bin(f, f->mul, a, b);
    default: {
        weft_apply_t *s;
        assert_non_null(s = weft_apply_create(f->g, f->split, 1, &a));
        return weft_apply_output(s, below(2));
    }
    }
}

/* A random DAG over n_in inputs; returns its outputs in outs. */
static size_t random_graph(fx_t *f, weft_var_t **in, size_t n_in, weft_var_t **outs)
{
    weft_var_t *vs[128];
    size_t n = 0;
    for (size_t k = 0; k < n_in; k++) vs[n++] = in[k];
    size_t nodes = 5 + below(40);
    for (size_t k = 0; k < nodes; k++) {
        weft_var_t *v = random_node(f, vs[below(n)], vs[below(n)]);
        vs[n++] = v;
    }
    size_t n_out = 1 + below(3);
    for (size_t k = 0; k < n_out; k++) outs[k] = vs[n_in + below(n - n_in)];
    return n_out;
}

/* A variable built only from fg's inputs and the ancestors of v (so using it
 * to replace v cannot close a cycle). */
static weft_var_t *safe_replacement(fx_t *f, weft_fgraph_t *fg, weft_var_t *v)
{
    weft_apply_t *o = weft_var_owner(v);
    weft_var_t *a = weft_fgraph_input(fg, below(weft_fgraph_n_inputs(fg)));
    weft_var_t *b =
        o && weft_apply_n_inputs(o) ? weft_apply_input(o, below(weft_apply_n_inputs(o))) : a;
    if (below(4) == 0) return b;
    return random_node(f, b, a);
}

/* Whether making w an input of the marked nodes closes a cycle: a marked node
 * among w's owner's ancestors (or the owner itself), by brute force. */
static bool reaches_marked(weft_graph_t *g, const weft_var_t *w, const uint8_t *marked)
{
    static weft_apply_t *stack[1 << 16];
    static uint8_t seen[1 << 16];
    size_t na = weft_graph_n_applies(g), sp = 0;
    assert_true(na <= (1u << 16));
    memset(seen, 0, na);
    if (weft_var_owner(w)) stack[sp++] = weft_var_owner(w);
    while (sp > 0) {
        weft_apply_t *a = stack[--sp];
        uint64_t id = weft_apply_id(a);
        if (marked[id]) return true;
        if (seen[id]) continue;
        seen[id] = 1;
        for (size_t i = 0; i < weft_apply_n_inputs(a); i++)
            if (weft_var_owner(weft_apply_input(a, i)))
                stack[sp++] = weft_var_owner(weft_apply_input(a, i));
    }
    return false;
}

static size_t n_refused; /* edits refused as cycles: the rounds must meet some */

/* replace(v, w) or change_node_input with any w of the graph (or a new node
 * on two of them): WEFT_ECYCLE exactly when it would close a cycle. */
static weft_status_t any_edit(fx_t *f, weft_fgraph_t *fg, pool_t *p, weft_var_t *v, bool replace)
{
    static uint8_t marked[1 << 16];
    weft_var_t *w = p->v[below(p->n)];
    if (below(2)) w = random_node(f, w, p->v[below(p->n)]);
    weft_apply_t *o = weft_var_owner(v);
    if (!replace && (!o || !weft_fgraph_contains_apply(fg, o))) return WEFT_OK;
    memset(marked, 0, weft_graph_n_applies(f->g));
    const weft_client_t *c = NULL;
    size_t n = 0, i = below(o ? weft_apply_n_inputs(o) : 0);
    if (replace) assert_int_equal(weft_fgraph_clients(fg, v, &c, &n), WEFT_OK);
    for (size_t k = 0; k < n; k++)
        if (!weft_apply_is_output_slot(c[k].node)) marked[weft_apply_id(c[k].node)] = 1;
    if (!replace) marked[weft_apply_id(o)] = 1;
    bool cycle = (!replace || v != w) && reaches_marked(f->g, w, marked);
    if (!replace && weft_apply_input(o, i) == w) cycle = false; /* no change */
    weft_status_t s = replace ? weft_fgraph_replace(fg, v, w, "any")
                              : weft_fgraph_change_node_input(fg, o, i, w, "any");
    if (s == WEFT_ETYPE) return WEFT_OK; /* Split outputs against Add inputs etc. */
    if (cycle != (s == WEFT_ECYCLE))
        fail_msg("%s: cycle %d, status %d: %s", replace ? "replace" : "change_node_input", cycle, s,
                 weft_fgraph_last_error(fg));
    n_refused += cycle;
    return cycle ? WEFT_OK : s;
}

static void check_all(weft_fgraph_t *fg, const rec_t *r, uint64_t seed, int step)
{
    weft_status_t s = weft_fgraph_check_integrity(fg);
    if (s != WEFT_OK)
        fail_msg("seed %llu step %d: %s", (unsigned long long)seed, step,
                 weft_fgraph_last_error(fg));
    weft_apply_t *const *order;
    size_t n;
    assert_int_equal(weft_fgraph_toposort(fg, &order, &n), WEFT_OK);
    assert_int_equal(n, weft_fgraph_n_applies(fg));
    assert_int_equal(rec_n_live(r), weft_fgraph_n_applies(fg));
    assert_int_equal(r->protocol_errors, 0);
}

static void step_once(fx_t *f, weft_fgraph_t *fg, rec_t *r, pool_t *p)
{
    collect(fg, p);
    weft_var_t *v = p->v[below(p->n)];
    weft_status_t s = WEFT_OK;
    switch (below(11)) {
    case 0:
    case 1:
        s = weft_fgraph_replace(fg, v, safe_replacement(f, fg, v), "rnd");
        break;
    case 2: {
        r->reject_validate = below(2);
        weft_var_t *nv = safe_replacement(f, fg, v);
        s = weft_fgraph_replace_validate(fg, v, nv, "rv");
        assert_int_equal(s, r->reject_validate ? WEFT_EINCONSISTENT : WEFT_OK);
        r->reject_validate = false;
        s = WEFT_OK;
        break;
    }
    case 3: {
        weft_var_t *nv = random_node(f, v, p->v[below(p->n)]);
        s = weft_fgraph_import_node(fg, weft_var_owner(nv), false, "imp");
        if (s == WEFT_OK) s = weft_fgraph_add_output(fg, nv, "imp");
        break;
    }
    case 4: {
        weft_apply_t *const *nodes;
        size_t n;
        weft_fgraph_applies(fg, &nodes, &n);
        if (n) s = weft_fgraph_remove_node(fg, nodes[below(n)], "rm");
        break;
    }
    case 5:
        s = weft_fgraph_add_output(fg, v, "out");
        break;
    case 6:
        if (weft_fgraph_n_outputs(fg) > 1)
            s = weft_fgraph_remove_output(fg, below(weft_fgraph_n_outputs(fg)), "rmout");
        break;
    case 7: {
        weft_apply_t *o = weft_var_owner(v);
        weft_var_t *in = weft_fgraph_input(fg, below(weft_fgraph_n_inputs(fg)));
        if (o && weft_fgraph_contains_apply(fg, o))
            s = weft_fgraph_change_node_input(fg, o, below(weft_apply_n_inputs(o)), in, "chg");
        break;
    }
    case 9:
        s = any_edit(f, fg, p, v, true);
        break;
    case 10:
        s = any_edit(f, fg, p, v, false);
        break;
    default:
        if (below(2) && weft_fgraph_n_inputs(fg) > 2)
            s = weft_fgraph_remove_input(fg, below(weft_fgraph_n_inputs(fg)), "rmin");
        else
            s = weft_fgraph_add_input(fg, fx_var(f, "fresh"));
        break;
    }
    if (s != WEFT_OK) fail_msg("step failed: %s", weft_fgraph_last_error(fg));
}

static void test_fgraph_random_edits_keep_integrity(void **state)
{
    fx_t *f = *state;
    const char *env = getenv("WEFT_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
    printf("test_fgraph_random: seed %llu (set WEFT_SEED to replay)\n", (unsigned long long)seed);
    rng_state = seed * 2654435761u + 1;
    static pool_t pool;
    for (int round = 0; round < ROUNDS; round++) {
        weft_var_t *in[3] = {fx_var(f, "a"), fx_var(f, "b"), fx_var(f, "c")}, *outs[3];
        size_t n_out = random_graph(f, in, 3, outs);
        rec_t *r = rec_new();
        weft_feature_t *feats[1] = {&r->base};
        weft_fgraph_t *fg = fx_fgraph(f, 3, in, n_out, outs, below(2), 1, feats);
        check_all(fg, r, seed, -1);
        for (int step = 0; step < STEPS; step++) {
            step_once(f, fg, r, &pool);
            check_all(fg, r, seed, step);
        }
        weft_fgraph_destroy(fg);
    }
    printf("test_fgraph_random: %zu edits refused as cycles\n", n_refused);
    assert_true(n_refused > ROUNDS / 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_fgraph_random_edits_keep_integrity, fx_setup,
                                        fx_teardown),
    };
    return cmocka_run_group_tests_name("fgraph_random", tests, NULL, NULL);
}
