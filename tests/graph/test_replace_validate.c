/* ReplaceValidate with History: checkpoint / revert, validate, and the
 * transactional replace_all_validate[_remove]. A rejected transaction must
 * leave the graph exactly as before: same toposort, same apply set, same
 * client sets, same node objects, same features' state. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "graph_fixture.h"

typedef struct snap {
    weft_apply_t **topo;
    size_t n_topo;
    uintptr_t *applies; /* sorted */
    size_t n_applies;
    char *clients; /* text: per variable of every node, its sorted client set */
    size_t n_live;
    weft_var_t *outputs[8];
    size_t n_out;
} snap_t;

static int cmp_uptr(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

static void clients_text(weft_fgraph_t *fg, weft_var_t *v, char *buf, size_t cap, size_t *len)
{
    const weft_client_t *c;
    size_t n;
    if (weft_fgraph_clients(fg, v, &c, &n) != WEFT_OK) return;
    uintptr_t keys[64];
    assert_true(n <= 64);
    for (size_t k = 0; k < n; k++) keys[k] = (uintptr_t)c[k].node * 8 + c[k].index;
    qsort(keys, n, sizeof(*keys), cmp_uptr);
    *len += (size_t)snprintf(buf + *len, cap - *len, "v%llu:", (unsigned long long)weft_var_id(v));
    for (size_t k = 0; k < n; k++)
        *len += (size_t)snprintf(buf + *len, cap - *len, "%llx,", (unsigned long long)keys[k]);
    *len += (size_t)snprintf(buf + *len, cap - *len, ";");
}

static snap_t take(weft_fgraph_t *fg, const rec_t *r)
{
    snap_t s = {0};
    weft_apply_t *const *order;
    assert_int_equal(weft_fgraph_toposort(fg, &order, &s.n_topo), WEFT_OK);
    s.topo = malloc((s.n_topo + 1) * sizeof(*s.topo));
    memcpy(s.topo, order, s.n_topo * sizeof(*order));
    weft_apply_t *const *nodes;
    assert_int_equal(weft_fgraph_applies(fg, &nodes, &s.n_applies), WEFT_OK);
    s.applies = malloc((s.n_applies + 1) * sizeof(uintptr_t));
    for (size_t k = 0; k < s.n_applies; k++) s.applies[k] = (uintptr_t)nodes[k];
    qsort(s.applies, s.n_applies, sizeof(uintptr_t), cmp_uptr);
    size_t cap = 65536, len = 0;
    s.clients = calloc(1, cap);
    for (size_t k = 0; k < s.n_topo; k++) {
        weft_apply_t *a = s.topo[k];
        for (size_t i = 0; i < weft_apply_n_inputs(a); i++)
            clients_text(fg, weft_apply_input(a, i), s.clients, cap, &len);
        for (size_t o = 0; o < weft_apply_n_outputs(a); o++)
            clients_text(fg, weft_apply_output(a, o), s.clients, cap, &len);
    }
    s.n_out = weft_fgraph_n_outputs(fg);
    for (size_t k = 0; k < s.n_out; k++) s.outputs[k] = weft_fgraph_output(fg, k);
    s.n_live = r ? rec_n_live(r) : 0;
    return s;
}

static void assert_same(const snap_t *a, const snap_t *b)
{
    assert_int_equal(a->n_topo, b->n_topo);
    assert_memory_equal(a->topo, b->topo, a->n_topo * sizeof(*a->topo));
    assert_int_equal(a->n_applies, b->n_applies);
    assert_memory_equal(a->applies, b->applies, a->n_applies * sizeof(uintptr_t));
    assert_string_equal(a->clients, b->clients);
    assert_int_equal(a->n_out, b->n_out);
    assert_memory_equal(a->outputs, b->outputs, a->n_out * sizeof(weft_var_t *));
    assert_int_equal(a->n_live, b->n_live);
}

static void snap_free(snap_t *s)
{
    free(s->topo);
    free(s->applies);
    free(s->clients);
}

typedef struct world {
    weft_var_t *x, *y, *e, *a, *z;
    weft_fgraph_t *fg;
    rec_t *r;
} world_t;

/* z = Mul(Add(Exp(x), y), Exp(x)); outputs z and a; a recording validator. */
static world_t build(fx_t *f)
{
    world_t w;
    w.x = fx_var(f, "x");
    w.y = fx_var(f, "y");
    w.e = fx_un(f, f->exp, w.x);
    w.a = fx_bin(f, f->add, w.e, w.y);
    w.z = fx_bin(f, f->mul, w.a, w.e);
    w.r = rec_new();
    weft_feature_t *feats[1] = {&w.r->base};
    weft_var_t *in[2] = {w.x, w.y}, *outs[2] = {w.z, w.a};
    w.fg = fx_fgraph(f, 2, in, 2, outs, false, 1, feats);
    return w;
}

static void test_replace_validate_success_keeps_changes(void **state)
{
    fx_t *f = *state;
    world_t w = build(f);
    weft_var_t *n = fx_un(f, f->neg, w.x);
    assert_int_equal(weft_fgraph_replace_validate(w.fg, w.e, n, "ok"), WEFT_OK);
    assert_false(weft_fgraph_contains_var(w.fg, w.e));
    assert_int_equal(weft_fgraph_n_clients(w.fg, n), 2);
    assert_int_equal(weft_fgraph_check_integrity(w.fg), WEFT_OK);
    assert_int_equal(w.r->protocol_errors, 0);
    weft_fgraph_destroy(w.fg);
}

static void test_replace_validate_rejected_restores_graph_exactly(void **state)
{
    fx_t *f = *state;
    world_t w = build(f);
    snap_t before = take(w.fg, w.r);
    weft_apply_t *exp_node = weft_var_owner(w.e);
    weft_var_t *n = fx_un(f, f->neg, fx_un(f, f->exp, w.y));
    weft_var_t *olds[2] = {w.e, w.y}, *news[2] = {n, fx_un(f, f->neg, w.x)};
    w.r->reject_validate = true;
    w.r->len = 0;
    assert_int_equal(weft_fgraph_replace_all_validate(w.fg, 2, olds, news, "try"),
                     WEFT_EINCONSISTENT);
    assert_string_equal(weft_fgraph_last_error(w.fg), "rec: validation rejected");
    snap_t after = take(w.fg, w.r);
    assert_same(&before, &after);
    assert_true(weft_fgraph_contains_apply(w.fg, exp_node)); /* the same object re-imported */
    assert_ptr_equal(weft_apply_input(weft_var_owner(w.z), 1), w.e);
    assert_int_equal(weft_fgraph_check_integrity(w.fg), WEFT_OK);
    assert_int_equal(w.r->protocol_errors, 0);
    /* the revert fired the callbacks of the undo too */
    assert_non_null(strstr(w.r->log, "import Exp:Revert;"));
    assert_non_null(strstr(w.r->log, ":Revert;"));
    snap_free(&before);
    snap_free(&after);
    weft_fgraph_destroy(w.fg);
}

static void test_replace_validate_failing_replace_reverts_earlier_pairs(void **state)
{
    fx_t *f = *state;
    world_t w = build(f);
    snap_t before = take(w.fg, w.r);
    weft_var_t *iv, *q = fx_var(f, "q");
    iv = weft_var_create(f->g, f->ivec, "iv");
    weft_var_t *olds[2] = {w.e, w.a}, *news[2] = {fx_un(f, f->neg, w.x), iv};
    assert_int_equal(weft_fgraph_replace_all_validate(w.fg, 2, olds, news, "t"), WEFT_ETYPE);
    assert_non_null(strstr(weft_fgraph_last_error(w.fg), "'iv'"));
    snap_t after = take(w.fg, w.r);
    assert_same(&before, &after);
    news[1] = fx_un(f, f->exp, q); /* undeclared input */
    assert_int_equal(weft_fgraph_replace_all_validate(w.fg, 2, olds, news, "t"),
                     WEFT_EMISSING_INPUT);
    assert_non_null(strstr(weft_fgraph_last_error(w.fg), "'q'"));
    snap_t after2 = take(w.fg, w.r);
    assert_same(&before, &after2);
    assert_int_equal(w.r->protocol_errors, 0);
    snap_free(&before);
    snap_free(&after);
    snap_free(&after2);
    weft_fgraph_destroy(w.fg);
}

static void test_replace_validate_forbidden_node_rejected(void **state)
{
    fx_t *f = *state;
    world_t w = build(f);
    snap_t before = take(w.fg, w.r);
    weft_var_t *bad = fx_un(f, f->neg, w.x);
    w.r->reject_if_present = weft_var_owner(bad);
    assert_int_equal(weft_fgraph_replace_validate(w.fg, w.e, bad, "t"), WEFT_EINCONSISTENT);
    assert_string_equal(weft_fgraph_last_error(w.fg), "rec: forbidden node present");
    snap_t after = take(w.fg, w.r);
    assert_same(&before, &after);
    assert_int_equal(weft_fgraph_replace_validate(w.fg, w.e, fx_un(f, f->exp, w.x), "t"), WEFT_OK);
    snap_free(&before);
    snap_free(&after);
    weft_fgraph_destroy(w.fg);
}

static void test_replace_validate_manual_checkpoint_and_stale_token(void **state)
{
    fx_t *f = *state;
    world_t w = build(f);
    snap_t before = take(w.fg, w.r);
    uint64_t t1, t2;
    assert_int_equal(weft_fgraph_checkpoint(w.fg, &t1), WEFT_OK);
    assert_int_equal(weft_fgraph_replace(w.fg, w.e, fx_un(f, f->neg, w.y), "m"), WEFT_OK);
    assert_int_equal(weft_fgraph_replace(w.fg, w.a, w.y, "m"), WEFT_OK);
    assert_int_equal(weft_fgraph_revert(w.fg, t1), WEFT_OK);
    snap_t after = take(w.fg, w.r);
    assert_same(&before, &after);
    assert_int_equal(weft_fgraph_checkpoint(w.fg, &t2), WEFT_OK);
    assert_int_equal(weft_fgraph_revert(w.fg, t1), WEFT_ESTATE);
    assert_non_null(strstr(weft_fgraph_last_error(w.fg), "not the newest checkpoint"));
    assert_int_equal(weft_fgraph_revert(w.fg, 0), WEFT_ESTATE);
    assert_int_equal(weft_fgraph_checkpoint(w.fg, NULL), WEFT_EINVAL);
    assert_int_equal(w.r->protocol_errors, 0);
    snap_free(&before);
    snap_free(&after);
    weft_fgraph_destroy(w.fg);
}

static void test_replace_validate_remove_checks_and_remembers(void **state)
{
    fx_t *f = *state;
    world_t w = build(f);
    snap_t before = take(w.fg, w.r);
    weft_apply_t *exp_node = weft_var_owner(w.e), *add_node = weft_var_owner(w.a);
    weft_var_t *n = fx_un(f, f->neg, w.x);
    /* replacing a's use in z only... a is also output 1, so Add stays: refused */
    weft_apply_t *rm[1] = {add_node};
    weft_var_t *olds[1] = {w.e}, *news[1] = {n};
    assert_int_equal(weft_fgraph_replace_all_validate_remove(w.fg, 1, olds, news, 1, rm, "t"),
                     WEFT_EINCONSISTENT);
    assert_non_null(strstr(weft_fgraph_last_error(w.fg), "replacement did not remove apply"));
    assert_non_null(strstr(weft_fgraph_last_error(w.fg), "(Add, built at"));
    snap_t after = take(w.fg, w.r);
    assert_same(&before, &after);
    rm[0] = exp_node;
    assert_int_equal(weft_fgraph_replace_all_validate_remove(w.fg, 1, olds, news, 1, rm, "t"),
                     WEFT_OK);
    assert_false(weft_fgraph_contains_apply(w.fg, exp_node));
    /* re-importing the removed node makes the next validate fail */
    assert_int_equal(weft_fgraph_replace(w.fg, n, w.e, "back"), WEFT_OK);
    assert_int_equal(weft_fgraph_validate(w.fg), WEFT_EINCONSISTENT);
    assert_non_null(strstr(weft_fgraph_last_error(w.fg), "Trying to reintroduce a removed node"));
    assert_int_equal(weft_fgraph_validate(w.fg), WEFT_OK); /* reported once */
    snap_free(&before);
    snap_free(&after);
    weft_fgraph_destroy(w.fg);
}

static void test_replace_validate_bad_arguments(void **state)
{
    fx_t *f = *state;
    world_t w = build(f);
    assert_int_equal(weft_fgraph_replace_all_validate(NULL, 0, NULL, NULL, NULL), WEFT_EINVAL);
    assert_int_equal(weft_fgraph_replace_all_validate(w.fg, 1, NULL, NULL, NULL), WEFT_EINVAL);
    assert_int_equal(weft_fgraph_replace_all_validate_remove(w.fg, 0, NULL, NULL, 1, NULL, NULL),
                     WEFT_EINVAL);
    assert_int_equal(weft_fgraph_validate(NULL), WEFT_EINVAL);
    assert_int_equal(weft_fgraph_revert(NULL, 1), WEFT_EINVAL);
    assert_int_equal(weft_fgraph_replace_validate(w.fg, w.e, NULL, "t"), WEFT_EINVAL);
    weft_fgraph_destroy(w.fg);
}


/* x feeds 48 Exp nodes (summed by a chain of Adds). Moving most of them to y
 * and back inside one transaction compacts x's client vector several times
 * (and weft_fgraph_clients compacts it too); the revert must still put every
 * entry back at its exact old place. */
#define FAN 48

static void fan_graph(fx_t *f, weft_var_t **x, weft_var_t **y, weft_var_t **sum,
                      weft_apply_t **exps)
{
    *x = fx_var(f, "x");
    *y = fx_var(f, "y");
    weft_var_t *acc = NULL;
    for (size_t k = 0; k < FAN; k++) {
        weft_var_t *e = fx_un(f, f->exp, *x);
        exps[k] = weft_var_owner(e);
        acc = acc ? fx_bin(f, f->add, acc, e) : e;
    }
    *sum = acc;
}

static void test_replace_validate_revert_restores_client_order_after_compaction(void **state)
{
    fx_t *f = *state;
    weft_var_t *x, *y, *sum;
    weft_apply_t *exps[FAN];
    fan_graph(f, &x, &y, &sum, exps);
    weft_var_t *ins[2];
    ins[0] = x;
    ins[1] = y;
    weft_fgraph_t *fg = fx_fgraph(f, 2, ins, 1, &sum, false, 0, NULL);
    const weft_client_t *c;
    size_t n;
    weft_client_t orig[FAN + 2];
    assert_int_equal(weft_fgraph_clients(fg, x, &c, &n), WEFT_OK);
    assert_int_equal(n, FAN);
    memcpy(orig, c, n * sizeof(*c));
    for (size_t k = 0; k < FAN; k++) assert_ptr_equal(orig[k].node, exps[k]);
    uint64_t token;
    assert_int_equal(weft_fgraph_checkpoint(fg, &token), WEFT_OK);
    /* stride 7 visits every node once (gcd(7, 48) = 1), in scrambled order */
    for (size_t j = 0; j < FAN - 3; j++) {
        size_t k = (j * 7) % FAN;
        assert_int_equal(weft_fgraph_change_node_input(fg, exps[k], 0, y, "t"), WEFT_OK);
        if (j % 5 == 0) assert_int_equal(weft_fgraph_clients(fg, x, &c, &n), WEFT_OK);
        if (j % 9 == 0) { /* move one back and out again: a new key, later reverted */
            assert_int_equal(weft_fgraph_change_node_input(fg, exps[k], 0, x, "t"), WEFT_OK);
            assert_int_equal(weft_fgraph_change_node_input(fg, exps[k], 0, y, "t"), WEFT_OK);
        }
    }
    assert_int_equal(weft_fgraph_n_clients(fg, x), 3);
    assert_int_equal(weft_fgraph_n_clients(fg, y), FAN - 3);
    assert_int_equal(weft_fgraph_check_integrity(fg), WEFT_OK);
    assert_int_equal(weft_fgraph_revert(fg, token), WEFT_OK);
    assert_int_equal(weft_fgraph_clients(fg, x, &c, &n), WEFT_OK);
    assert_int_equal(n, FAN);
    for (size_t k = 0; k < FAN; k++) {
        assert_ptr_equal(c[k].node, orig[k].node);
        assert_int_equal(c[k].index, 0);
    }
    assert_int_equal(weft_fgraph_n_clients(fg, y), 0);
    assert_int_equal(weft_fgraph_check_integrity(fg), WEFT_OK);
    weft_fgraph_destroy(fg);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_replace_validate_success_keeps_changes),
        T(test_replace_validate_rejected_restores_graph_exactly),
        T(test_replace_validate_failing_replace_reverts_earlier_pairs),
        T(test_replace_validate_forbidden_node_rejected),
        T(test_replace_validate_manual_checkpoint_and_stale_token),
        T(test_replace_validate_remove_checks_and_remembers),
        T(test_replace_validate_bad_arguments),
        T(test_replace_validate_revert_restores_client_order_after_compaction),
    };
    return cmocka_run_group_tests_name("replace_validate", tests, NULL, NULL);
}
