/* The History feature (weft/history.h): checkpoints, revert to any of them,
 * redo, the exact event log, and its interplay with ReplaceValidate, the
 * DestroyHandler and the Supervisor. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "graph_fixture.h"
#include "weft/destroy.h"
#include "weft/history.h"

static const char *str_of(weft_fgraph_t *fg)
{
    static char buf[256];
    assert_int_equal(weft_fgraph_str(fg, buf, sizeof(buf), NULL), WEFT_OK);
    return buf;
}

/* x, y inputs; out = Neg(Exp(x)); a History and a recorder attached. */
typedef struct hx {
    weft_var_t *x, *y, *e, *out;
    weft_fgraph_t *fg;
    rec_t *rec;
} hx_t;

static hx_t hx_make(fx_t *f)
{
    hx_t h;
    h.x = fx_var(f, "x");
    h.y = fx_var(f, "y");
    h.e = fx_un(f, f->exp, h.x);
    h.out = fx_un(f, f->neg, h.e);
    h.rec = rec_new();
    weft_var_t *in[] = {h.x, h.y};
    weft_feature_t *feats[] = {&h.rec->base};
    h.fg = fx_fgraph(f, 2, in, 1, &h.out, false, 1, feats);
    assert_int_equal(weft_history_attach(h.fg), WEFT_OK);
    assert_int_equal(weft_history_attach(h.fg), WEFT_OK); /* kept, not doubled */
    return h;
}

static void rec_clear(rec_t *r)
{
    r->len = 0;
    r->log[0] = '\0';
}

/* The log as "kind node.index" words, e.g. "I:Add P:Exp C:Neg.0". */
static const char *entries_of(weft_fgraph_t *fg)
{
    static char buf[512];
    size_t len = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < weft_history_n_entries(fg); k++) {
        weft_history_entry_t e;
        assert_int_equal(weft_history_entry(fg, k, &e), WEFT_OK);
        const char *op = weft_apply_is_output_slot(e.node) ? "Output"
                                                           : weft_op_name(weft_apply_op(e.node));
        if (e.kind == WEFT_HISTORY_CHANGE)
            len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%sC:%s.%zu", k ? " " : "", op,
                                    e.index);
        else
            len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s:%s%s", k ? " " : "",
                                    e.kind == WEFT_HISTORY_IMPORT ? "I" : "P", op,
                                    e.by_change ? "" : "!");
    }
    return buf;
}

static void test_history_revert_then_redo_walks_both_ways(void **state)
{
    fx_t *f = *state;
    hx_t h = hx_make(f);
    weft_apply_t *exp_node = weft_var_owner(h.e);
    uint64_t t0, t1, t2;
    assert_int_equal(weft_history_checkpoint(h.fg, &t0), WEFT_OK);
    weft_var_t *a = fx_bin(f, f->add, h.x, h.y);
    assert_int_equal(weft_fgraph_replace(h.fg, h.e, a, "r1"), WEFT_OK);
    assert_int_equal(weft_history_checkpoint(h.fg, &t1), WEFT_OK);
    weft_var_t *m = fx_bin(f, f->mul, h.x, h.y);
    assert_int_equal(weft_fgraph_replace(h.fg, a, m, "r2"), WEFT_OK);
    assert_int_equal(weft_history_checkpoint(h.fg, &t2), WEFT_OK);
    assert_int_equal(t0, 0);
    assert_int_equal(t1, 3);
    assert_int_equal(t2, 6);
    assert_string_equal(entries_of(h.fg), "I:Add P:Exp C:Neg.0 I:Mul P:Add C:Neg.0");
    assert_string_equal(str_of(h.fg), "FunctionGraph(Neg(Mul(x, y)))");

    rec_clear(h.rec);
    assert_int_equal(weft_history_revert(h.fg, t0), WEFT_OK);
    assert_string_equal(str_of(h.fg), "FunctionGraph(Neg(Exp(x)))");
    assert_true(weft_fgraph_contains_apply(h.fg, exp_node)); /* the same node object */
    assert_string_equal(h.rec->log, "import Add:History.revert;prune Mul;"
                                    "change Neg.0:History.revert;import Exp:History.revert;"
                                    "prune Add;change Neg.0:History.revert;");
    assert_int_equal(weft_history_position(h.fg), 0);
    assert_int_equal(weft_history_n_entries(h.fg), 6);

    rec_clear(h.rec);
    assert_int_equal(weft_history_redo(h.fg, t2), WEFT_OK);
    assert_string_equal(str_of(h.fg), "FunctionGraph(Neg(Mul(x, y)))");
    assert_string_equal(h.rec->log, "import Add:History.redo;prune Exp;"
                                    "change Neg.0:History.redo;import Mul:History.redo;"
                                    "prune Add;change Neg.0:History.redo;");
    assert_int_equal(weft_history_revert(h.fg, t1), WEFT_OK);
    assert_string_equal(str_of(h.fg), "FunctionGraph(Neg(Add(x, y)))");
    assert_int_equal(weft_history_revert(h.fg, t1), WEFT_OK); /* already there */
    assert_int_equal(weft_history_position(h.fg), 3);
    assert_int_equal(weft_fgraph_check_integrity(h.fg), WEFT_OK);
    assert_int_equal(h.rec->protocol_errors, 0);
    weft_fgraph_destroy(h.fg);
}

static void test_history_revert_restores_client_order(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *y = fx_var(f, "y");
    weft_var_t *in[] = {x, y};
    weft_var_t *out[] = {fx_un(f, f->exp, x), fx_un(f, f->neg, x), fx_un(f, f->exp, y)};
    weft_fgraph_t *fg = fx_fgraph(f, 2, in, 3, out, false, 0, NULL);
    assert_int_equal(weft_history_attach(fg), WEFT_OK);
    /* x's clients: Exp, Neg. Moving Exp to y and back must keep Exp first. */
    assert_int_equal(weft_fgraph_change_node_input(fg, weft_var_owner(out[0]), 0, y, "t"),
                     WEFT_OK);
    assert_int_equal(weft_history_revert(fg, 0), WEFT_OK);
    const weft_client_t *c;
    size_t n;
    assert_int_equal(weft_fgraph_clients(fg, x, &c, &n), WEFT_OK);
    assert_int_equal(n, 2);
    assert_ptr_equal(c[0].node, weft_var_owner(out[0]));
    assert_ptr_equal(c[1].node, weft_var_owner(out[1]));
    assert_int_equal(weft_history_redo(fg, 1), WEFT_OK);
    assert_int_equal(weft_history_revert(fg, 0), WEFT_OK);
    assert_int_equal(weft_fgraph_clients(fg, y, &c, &n), WEFT_OK);
    assert_int_equal(n, 1);
    assert_ptr_equal(c[0].node, weft_var_owner(out[2]));
    weft_fgraph_destroy(fg);
}

static void test_history_change_after_revert_drops_redo(void **state)
{
    fx_t *f = *state;
    hx_t h = hx_make(f);
    weft_var_t *a = fx_bin(f, f->add, h.x, h.y);
    assert_int_equal(weft_fgraph_replace(h.fg, h.e, a, "r1"), WEFT_OK);
    assert_int_equal(weft_history_revert(h.fg, 0), WEFT_OK);
    weft_var_t *n = fx_un(f, f->neg, h.y);
    assert_int_equal(weft_fgraph_replace(h.fg, h.e, n, "r2"), WEFT_OK);
    assert_string_equal(entries_of(h.fg), "I:Neg P:Exp C:Neg.0");
    assert_int_equal(weft_history_n_entries(h.fg), 3);
    assert_int_equal(weft_history_redo(h.fg, 3), WEFT_ESTATE);
    assert_string_equal(weft_fgraph_last_error(h.fg),
                        "weft_history_redo: token 3 is stale (not in the log)");
    uint64_t t;
    assert_int_equal(weft_history_checkpoint(h.fg, &t), WEFT_OK);
    assert_int_equal(t, 6);
    assert_int_equal(weft_history_revert(h.fg, 0), WEFT_OK);
    assert_string_equal(str_of(h.fg), "FunctionGraph(Neg(Exp(x)))");
    weft_fgraph_destroy(h.fg);
}

static void test_history_bad_moves_are_refused_unchanged(void **state)
{
    fx_t *f = *state;
    hx_t h = hx_make(f);
    weft_var_t *a = fx_bin(f, f->add, h.x, h.y);
    assert_int_equal(weft_fgraph_replace(h.fg, h.e, a, "r1"), WEFT_OK);
    assert_int_equal(weft_history_redo(h.fg, 0), WEFT_ESTATE);
    assert_string_equal(weft_fgraph_last_error(h.fg),
                        "weft_history_redo: token 0 is behind the current position (use "
                        "weft_history_revert)");
    assert_int_equal(weft_history_revert(h.fg, 0), WEFT_OK);
    assert_int_equal(weft_history_revert(h.fg, 3), WEFT_ESTATE);
    assert_string_equal(weft_fgraph_last_error(h.fg),
                        "weft_history_revert: token 3 is ahead of the current position (use "
                        "weft_history_redo)");
    assert_int_equal(weft_history_revert(h.fg, 99), WEFT_ESTATE);
    assert_int_equal(weft_history_revert(NULL, 0), WEFT_EINVAL);
    assert_int_equal(weft_history_checkpoint(h.fg, NULL), WEFT_EINVAL);
    weft_history_entry_t e;
    assert_int_equal(weft_history_entry(h.fg, 3, &e), WEFT_EINVAL);
    assert_string_equal(str_of(h.fg), "FunctionGraph(Neg(Exp(x)))");
    weft_fgraph_destroy(h.fg);
}

static void test_history_structural_edit_cannot_be_reverted(void **state)
{
    fx_t *f = *state;
    hx_t h = hx_make(f);
    weft_var_t *ey = fx_un(f, f->exp, h.y);
    assert_int_equal(weft_fgraph_add_output(h.fg, ey, "more"), WEFT_OK);
    weft_var_t *a = fx_bin(f, f->add, h.x, h.y);
    assert_int_equal(weft_fgraph_replace(h.fg, h.e, a, "r1"), WEFT_OK);
    assert_string_equal(entries_of(h.fg), "I:Exp! I:Add P:Exp C:Neg.0");
    assert_int_equal(weft_history_revert(h.fg, 1), WEFT_OK);
    assert_string_equal(str_of(h.fg), "FunctionGraph(Neg(Exp(x)), Exp(y))");
    assert_int_equal(weft_history_revert(h.fg, 0), WEFT_ESTATE);
    char ab[256], want[512];
    weft_apply_describe(weft_var_owner(ey), ab, sizeof(ab));
    snprintf(want, sizeof(want),
             "weft_history_revert: entry 0 (import of %s) is structural, not an input change: "
             "it cannot be undone",
             ab);
    assert_string_equal(weft_fgraph_last_error(h.fg), want);
    assert_int_equal(weft_history_position(h.fg), 1);
    weft_fgraph_destroy(h.fg);
}

static void test_history_without_feature_is_not_found(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x");
    weft_var_t *y = fx_un(f, f->exp, x);
    weft_fgraph_t *fg = fx_fgraph(f, 1, &x, 1, &y, false, 0, NULL);
    uint64_t t;
    assert_int_equal(weft_history_checkpoint(fg, &t), WEFT_ENOTFOUND);
    assert_string_equal(weft_fgraph_last_error(fg),
                        "weft_history_checkpoint: no History is attached (weft_history_attach)");
    assert_int_equal(weft_history_revert(fg, 0), WEFT_ENOTFOUND);
    assert_int_equal(weft_history_n_entries(fg), 0);
    assert_int_equal(weft_history_position(NULL), 0);
    assert_int_equal(weft_history_attach(NULL), WEFT_EINVAL);
    /* Detached like any feature: the log goes with it. */
    assert_int_equal(weft_history_attach(fg), WEFT_OK);
    weft_feature_t *h = weft_fgraph_find_feature(fg, weft_history_class());
    assert_non_null(h);
    assert_int_equal(weft_fgraph_remove_feature(fg, h), WEFT_OK);
    assert_null(weft_fgraph_find_feature(fg, weft_history_class()));
    weft_fgraph_destroy(fg);
}

/* A rejected replace_validate rolls back through ordinary changes: History
 * logs both directions, and reverting across them is a no-op on the graph. */
static void test_history_records_replace_validate_rollback(void **state)
{
    fx_t *f = *state;
    hx_t h = hx_make(f);
    weft_var_t *a = fx_bin(f, f->add, h.x, h.y);
    h.rec->reject_validate = true;
    assert_int_equal(weft_fgraph_replace_validate(h.fg, h.e, a, "rv"), WEFT_EINCONSISTENT);
    h.rec->reject_validate = false;
    assert_string_equal(str_of(h.fg), "FunctionGraph(Neg(Exp(x)))");
    assert_string_equal(entries_of(h.fg), "I:Add P:Exp C:Neg.0 I:Exp P:Add C:Neg.0");
    rec_clear(h.rec);
    assert_int_equal(weft_history_revert(h.fg, 0), WEFT_OK);
    assert_string_equal(str_of(h.fg), "FunctionGraph(Neg(Exp(x)))");
    assert_string_equal(h.rec->log, "import Add:History.revert;prune Exp;"
                                    "change Neg.0:History.revert;import Exp:History.revert;"
                                    "prune Add;change Neg.0:History.revert;");
    /* A transaction that passes is one more forward change. */
    assert_int_equal(weft_fgraph_replace_validate(h.fg, h.e, a, "rv"), WEFT_OK);
    assert_string_equal(entries_of(h.fg), "I:Add P:Exp C:Neg.0");
    uint64_t t;
    assert_int_equal(weft_history_checkpoint(h.fg, &t), WEFT_OK);
    assert_int_equal(t, 9); /* tokens are never reused */
    assert_int_equal(weft_history_revert(h.fg, 0), WEFT_OK);
    assert_int_equal(weft_fgraph_validate(h.fg), WEFT_OK);
    assert_int_equal(weft_history_redo(h.fg, t), WEFT_OK);
    assert_string_equal(str_of(h.fg), "FunctionGraph(Neg(Add(x, y)))");
    weft_fgraph_destroy(h.fg);
}

/* The DestroyHandler and the Supervisor follow a revert and a redo. */
static void test_history_keeps_destroy_handler_and_supervisor_consistent(void **state)
{
    fx_t *f = *state;
    weft_var_t *x = fx_var(f, "x"), *y = fx_var(f, "y");
    weft_var_t *in[] = {x, y};
    weft_var_t *e = fx_un(f, f->exp, x);
    weft_var_t *out = fx_un(f, f->neg, e);
    bool mut[] = {false, true};
    weft_fgraph_options_t o = WEFT_FGRAPH_OPTIONS_INIT;
    o.clone = false;
    o.input_mutable = mut;
    weft_fgraph_t *fg;
    assert_int_equal(weft_fgraph_create(f->g, 2, in, 1, &out, &o, NULL, &fg), WEFT_OK);
    assert_int_equal(weft_dh_attach(fg, NULL), WEFT_OK);
    assert_int_equal(weft_history_attach(fg), WEFT_OK);
    /* Destroying protected x is refused by the Supervisor and rolled back. */
    weft_var_t *bad = fx_bin(f, f->add_inplace, x, y);
    assert_int_equal(weft_fgraph_replace_validate(fg, e, bad, "rv"), WEFT_EINCONSISTENT);
    weft_var_t *good = fx_bin(f, f->add_inplace, y, x);
    assert_int_equal(weft_fgraph_replace_validate(fg, e, good, "rv"), WEFT_OK);
    size_t n_dest = 0;
    assert_int_equal(weft_dh_n_destroyers(fg, &n_dest), WEFT_OK);
    assert_int_equal(n_dest, 1);
    assert_int_equal(weft_history_revert(fg, 0), WEFT_OK);
    assert_int_equal(weft_dh_n_destroyers(fg, &n_dest), WEFT_OK);
    assert_int_equal(n_dest, 0);
    assert_int_equal(weft_fgraph_validate(fg), WEFT_OK);
    assert_string_equal(str_of(fg), "FunctionGraph(Neg(Exp(x)))");
    /* Redo to the end: the good replacement, not the refused one. */
    weft_history_entry_t last;
    assert_int_equal(weft_history_entry(fg, weft_history_n_entries(fg) - 1, &last), WEFT_OK);
    assert_int_equal(weft_history_redo(fg, last.token), WEFT_OK);
    assert_int_equal(weft_dh_n_destroyers(fg, &n_dest), WEFT_OK);
    assert_int_equal(n_dest, 1);
    assert_int_equal(weft_fgraph_validate(fg), WEFT_OK);
    assert_string_equal(str_of(fg), "FunctionGraph(Neg(AddInplace(y, x)))");
    /* Redoing the refused pair too (revert to its middle) is what validate
     * then reports: the graph holds the destroyer of x again. */
    assert_int_equal(weft_history_revert(fg, 3), WEFT_OK);
    assert_string_equal(str_of(fg), "FunctionGraph(Neg(AddInplace(x, y)))");
    assert_int_equal(weft_fgraph_validate(fg), WEFT_EINCONSISTENT);
    assert_int_equal(weft_history_revert(fg, 0), WEFT_OK);
    assert_int_equal(weft_fgraph_validate(fg), WEFT_OK);
    assert_int_equal(weft_fgraph_check_integrity(fg), WEFT_OK);
    weft_fgraph_destroy(fg);
}

/* Removing an output slot fires no event for the slot: the changes before
 * it (here one of that very slot) can no longer be undone or redone. */
static void test_history_removed_output_slot_blocks_older_entries(void **state)
{
    fx_t *f = *state;
    hx_t h = hx_make(f);
    weft_var_t *ey = fx_un(f, f->exp, h.y);
    assert_int_equal(weft_fgraph_add_output(h.fg, h.x, "more"), WEFT_OK);
    uint64_t t;
    assert_int_equal(weft_history_checkpoint(h.fg, &t), WEFT_OK);
    weft_apply_t *slot = NULL;
    const weft_client_t *c;
    size_t n;
    assert_int_equal(weft_fgraph_clients(h.fg, h.x, &c, &n), WEFT_OK);
    for (size_t k = 0; k < n; k++)
        if (weft_apply_is_output_slot(c[k].node)) slot = c[k].node;
    assert_non_null(slot);
    assert_int_equal(weft_fgraph_change_node_input(h.fg, slot, 0, ey, "t"), WEFT_OK);
    assert_int_equal(weft_fgraph_remove_output(h.fg, 1, "drop"), WEFT_OK);
    assert_int_equal(weft_history_revert(h.fg, t), WEFT_ESTATE);
    assert_string_equal(weft_fgraph_last_error(h.fg),
                        "weft_history_revert: an input or output slot was removed after entry 0: "
                        "it cannot be undone");
    assert_string_equal(str_of(h.fg), "FunctionGraph(Neg(Exp(x)))");
    assert_int_equal(weft_fgraph_check_integrity(h.fg), WEFT_OK);
    weft_fgraph_destroy(h.fg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, fx_setup, fx_teardown)
        T(test_history_revert_then_redo_walks_both_ways),
        T(test_history_revert_restores_client_order),
        T(test_history_change_after_revert_drops_redo),
        T(test_history_bad_moves_are_refused_unchanged),
        T(test_history_structural_edit_cannot_be_reverted),
        T(test_history_removed_output_slot_blocks_older_entries),
        T(test_history_without_feature_is_not_found),
        T(test_history_records_replace_validate_rollback),
        T(test_history_keeps_destroy_handler_and_supervisor_consistent),
#undef T
    };
    return cmocka_run_group_tests_name("history", tests, NULL, NULL);
}
