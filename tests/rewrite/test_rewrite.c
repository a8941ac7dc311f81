/* The rewrite framework and database: node rewriter creation, walk orders,
 * imported nodes being queued, the equilibrium bound, reverted rejections
 * counted as failures, sequences, statistics, pattern rewriters, database
 * positions/tags/modes, and every documented bad input with its status. */
#define _POSIX_C_SOURCE 200809L /* fmemopen */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rw_fixture.h"
#include "support/alloc_count.h"
#include "support/counting_alloc.h"

static weft_var_t *un(rfx_t *f, weft_elemwise_kind_t k, weft_var_t *a)
{
    weft_var_t *r;
    assert_non_null(r = weft_unary(f->g, k, a));
    return r;
}

static weft_var_t *bin(rfx_t *f, weft_elemwise_kind_t k, weft_var_t *a, weft_var_t *b)
{
    weft_var_t *r;
    assert_non_null(r = weft_binary(f->g, k, a, b));
    return r;
}

static void expect(weft_fgraph_t *fg, const char *s)
{
    char buf[512];
    rfx_fg_expr(fg, buf, sizeof buf);
    assert_string_equal(buf, s);
}

/* ---- test rewriters ------------------------------------------------------------ */

typedef struct rec {
    char log[256];
    int freed;
} rec_t;

static weft_status_t record_fn(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                               weft_rewrite_result_t *res)
{
    (void)fg;
    (void)res;
    rec_t *r = user;
    size_t n = strlen(r->log);
    snprintf(r->log + n, sizeof r->log - n, "%s%s", n ? " " : "",
             weft_op_name(weft_apply_op(node)));
    return WEFT_OK;
}

static void rec_free(void *user)
{
    ((rec_t *)user)->freed++;
}

/* kind a -> kind b on the same input (user: int[2]) */
static weft_status_t swap_fn(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                             weft_rewrite_result_t *res)
{
    const int *k = user;
    weft_elemwise_kind_t kind;
    int ip;
    if (!weft_elemwise_op_info(weft_apply_op(node), &kind, &ip) || (int)kind != k[0])
        return WEFT_OK;
    weft_var_t *r;
    weft_status_t st = ((r = weft_unary(weft_fgraph_graph(fg), (weft_elemwise_kind_t)k[1],
                                        weft_apply_input(node, 0)))
                            ? WEFT_OK
                            : weft_graph_error(weft_fgraph_graph(fg)));
    if (st != WEFT_OK) return st;
    weft_var_t *outs[1] = {r};
    return weft_rewrite_result_outputs(res, 1, outs);
}

/* Exp(x) -> Neg(Neg(x)) */
static weft_status_t exp_to_negneg(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                   weft_rewrite_result_t *res)
{
    (void)user;
    weft_elemwise_kind_t kind;
    if (!weft_elemwise_op_info(weft_apply_op(node), &kind, NULL) || kind != WEFT_ELEMWISE_EXP)
        return WEFT_OK;
    weft_var_t *a, *b;
    weft_status_t st = ((a = weft_neg(weft_fgraph_graph(fg), weft_apply_input(node, 0)))
                            ? WEFT_OK
                            : weft_graph_error(weft_fgraph_graph(fg)));
    if (st == WEFT_OK)
        st = ((b = weft_neg(weft_fgraph_graph(fg), a)) ? WEFT_OK
                                                       : weft_graph_error(weft_fgraph_graph(fg)));
    return st == WEFT_OK ? weft_rewrite_result_replace(res, weft_apply_output(node, 0), b) : st;
}

static weft_status_t fail_fn(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                             weft_rewrite_result_t *res)
{
    (void)fg;
    (void)node;
    (void)res;
    return *(weft_status_t *)user;
}

static weft_rewriter_t *node_rw(const char *name, weft_node_rewrite_fn fn, void *user)
{
    weft_node_rewriter_desc_t d = WEFT_NODE_REWRITER_DESC_INIT;
    d.name = name;
    d.transform = fn;
    d.user = user;
    weft_rewriter_t *rw;
    assert_int_equal(weft_rewriter_node_create(&d, &rw), WEFT_OK);
    return rw;
}

/* ---- node rewriters and walks --------------------------------------------------- */

static void test_rewrite_node_create_bad_args_are_einval(void **state)
{
    (void)state;
    rec_t r = {"", 0};
    weft_node_rewriter_desc_t d = WEFT_NODE_REWRITER_DESC_INIT;
    weft_rewriter_t *rw = (weft_rewriter_t *)&r;
    assert_int_equal(weft_rewriter_node_create(NULL, &rw), WEFT_EINVAL);
    assert_null(rw);
    d.transform = record_fn;
    assert_int_equal(weft_rewriter_node_create(&d, &rw), WEFT_EINVAL); /* no name */
    d.name = "r";
    const weft_op_class_t *empty[1] = {NULL};
    d.classes = empty; /* an explicitly empty tracks list */
    d.user = &r;
    d.user_free = rec_free;
    assert_int_equal(weft_rewriter_node_create(&d, &rw), WEFT_EINVAL);
    assert_int_equal(r.freed, 1); /* user taken on failure too */
    d.n_classes = 1;               /* a NULL entry */
    assert_int_equal(weft_rewriter_node_create(&d, &rw), WEFT_EINVAL);
    assert_int_equal(weft_rewriter_node_create(&d, NULL), WEFT_EINVAL);
    d.classes = NULL;
    d.n_classes = 0;
    d.size = 4;
    assert_int_equal(weft_rewriter_node_create(&d, &rw), WEFT_EINVAL);
    assert_int_equal(weft_rewriter_graph_create(NULL, NULL, NULL, NULL, &rw), WEFT_EINVAL);
    assert_int_equal(weft_rewriter_walk_create("w", WEFT_WALK_IN2OUT, false, 0, NULL, &rw),
                     WEFT_EINVAL);
    assert_int_equal(weft_rewriter_apply(NULL, NULL, NULL), WEFT_EINVAL);
    assert_null(weft_rewriter_name(NULL));
    weft_rewriter_release(NULL);
}

static void test_rewrite_walk_orders_in2out_and_out2in(void **state)
{
    rfx_t *f = *state;
    weft_var_t *x = rfx_var(f, f->m34, "x");
    weft_var_t *y =
        un(f, WEFT_ELEMWISE_TANH, un(f, WEFT_ELEMWISE_EXP, un(f, WEFT_ELEMWISE_NEG, x)));
    weft_fgraph_t *fg = rfx_fgraph(f, 1, &x, 1, &y, false);
    rec_t r1 = {"", 0}, r2 = {"", 0};
    weft_rewriter_t *a = node_rw("rec", record_fn, &r1), *w;
    assert_int_equal(weft_rewriter_walk_create("in2out", WEFT_WALK_IN2OUT, false, 1, &a, &w),
                     WEFT_OK);
    assert_int_equal(weft_rewriter_apply(w, fg, NULL), WEFT_OK);
    weft_rewriter_release(w);
    assert_string_equal(r1.log, "Neg Exp Tanh");
    weft_rewriter_t *b = node_rw("rec", record_fn, &r2);
    assert_int_equal(weft_rewriter_walk_create("out2in", WEFT_WALK_OUT2IN, false, 1, &b, &w),
                     WEFT_OK);
    assert_int_equal(weft_rewriter_apply(w, fg, NULL), WEFT_OK);
    weft_rewriter_release(w);
    assert_string_equal(r2.log, "Tanh Exp Neg");
    weft_fgraph_destroy(fg);
}

/* Trying a node: rewriters tracking its class first, then those tracking its
 * op instance, then untracked ones, each group in list order. */
typedef struct tag_user {
    char *log;
    const char *tag;
} tag_user_t;

static weft_status_t tag_fn(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                            weft_rewrite_result_t *res)
{
    (void)fg;
    (void)res;
    tag_user_t *t = user;
    size_t n = strlen(t->log);
    snprintf(t->log + n, 256 - n, "%s%s:%s", n ? " " : "", t->tag,
             weft_op_name(weft_apply_op(node)));
    return WEFT_OK;
}

static weft_rewriter_t *tag_rw(tag_user_t *t, const weft_op_class_t *cls, const weft_op_t *op)
{
    weft_node_rewriter_desc_t d = WEFT_NODE_REWRITER_DESC_INIT;
    d.name = t->tag;
    d.transform = tag_fn;
    d.user = t;
    d.n_classes = cls ? 1 : 0;
    d.classes = cls ? &cls : NULL;
    d.n_ops = op ? 1 : 0;
    d.ops = op ? &op : NULL;
    weft_rewriter_t *rw;
    assert_int_equal(weft_rewriter_node_create(&d, &rw), WEFT_OK);
    return rw;
}

static void test_rewrite_try_order_class_then_instance_then_untracked(void **state)
{
    rfx_t *f = *state;
    weft_var_t *x = rfx_var(f, f->m34, "x");
    weft_var_t *y = un(f, WEFT_ELEMWISE_TANH, un(f, WEFT_ELEMWISE_EXP, x));
    weft_fgraph_t *fg = rfx_fgraph(f, 1, &x, 1, &y, false);
    const weft_op_t *exp_op = weft_apply_op(weft_var_owner(weft_apply_input(
        weft_var_owner(weft_fgraph_output(fg, 0)), 0)));
    const weft_op_class_t *exp_cls = weft_op_class(exp_op);
    const weft_op_class_t *tanh_cls = weft_op_class(weft_apply_op(
        weft_var_owner(weft_fgraph_output(fg, 0))));
    char log[256] = "";
    tag_user_t u = {log, "U"}, c = {log, "C"}, d = {log, "D"}, i = {log, "I"};
    /* classes and untracked only (the indexed dispatch) */
    weft_rewriter_t *rws[3] = {tag_rw(&u, NULL, NULL), tag_rw(&c, exp_cls, NULL),
                               tag_rw(&d, tanh_cls, NULL)}, *w;
    assert_int_equal(weft_rewriter_walk_create("w", WEFT_WALK_IN2OUT, false, 3, rws, &w),
                     WEFT_OK);
    assert_int_equal(weft_rewriter_apply(w, fg, NULL), WEFT_OK);
    weft_rewriter_release(w);
    assert_string_equal(log, "C:Exp U:Exp D:Tanh U:Tanh");
    /* with an instance tracker (the tier scan) */
    log[0] = '\0';
    weft_rewriter_t *rws2[3] = {tag_rw(&u, NULL, NULL), tag_rw(&i, NULL, exp_op),
                                tag_rw(&c, exp_cls, NULL)};
    assert_int_equal(weft_rewriter_walk_create("w2", WEFT_WALK_IN2OUT, false, 3, rws2, &w),
                     WEFT_OK);
    assert_int_equal(weft_rewriter_apply(w, fg, NULL), WEFT_OK);
    weft_rewriter_release(w);
    assert_string_equal(log, "C:Exp I:Exp U:Exp U:Tanh");
    weft_fgraph_destroy(fg);
}

static void test_rewrite_walk_queues_imported_nodes_unless_ignored(void **state)
{
    rfx_t *f = *state;
    for (int ignore = 0; ignore < 2; ignore++) {
        weft_var_t *x = rfx_var(f, f->m34, "x");
        weft_var_t *y = un(f, WEFT_ELEMWISE_TANH, un(f, WEFT_ELEMWISE_EXP, x));
        weft_fgraph_t *fg = rfx_fgraph(f, 1, &x, 1, &y, false);
        weft_rewriter_t *rs[2] = {node_rw("exp_to_negneg", exp_to_negneg, NULL), NULL}, *w;
        assert_int_equal(weft_rewriter_builtin_create("local_neg_neg", &rs[1]), WEFT_OK);
        assert_int_equal(weft_rewriter_walk_create("w", WEFT_WALK_IN2OUT, ignore, 2, rs, &w),
                         WEFT_OK);
        assert_int_equal(weft_rewriter_apply(w, fg, NULL), WEFT_OK);
        weft_rewriter_release(w);
        expect(fg, ignore ? "Tanh(Neg(Neg(x)))" : "Tanh(x)");
        weft_fgraph_destroy(fg);
    }
}

static void test_rewrite_equilibrium_without_fixpoint_is_enoconverge(void **state)
{
    rfx_t *f = *state;
    weft_var_t *x = rfx_var(f, f->m34, "x");
    weft_var_t *y = un(f, WEFT_ELEMWISE_EXP, x);
    weft_fgraph_t *fg = rfx_fgraph(f, 1, &x, 1, &y, false);
    int es[2] = {WEFT_ELEMWISE_EXP, WEFT_ELEMWISE_SIN},
        se[2] = {WEFT_ELEMWISE_SIN, WEFT_ELEMWISE_EXP};
    weft_rewriter_t *rs[2] = {node_rw("exp_to_sin", swap_fn, es),
                              node_rw("sin_to_exp", swap_fn, se)};
    weft_equilibrium_desc_t d = WEFT_EQUILIBRIUM_DESC_INIT;
    d.name = "flip";
    d.n_node = 2;
    d.node = rs;
    d.max_use_ratio = 3;
    weft_rewriter_t *eq;
    assert_int_equal(weft_rewriter_equilibrium_create(&d, &eq), WEFT_OK);
    assert_int_equal(weft_rewriter_apply(eq, fg, NULL), WEFT_ENOCONVERGE);
    assert_non_null(
        strstr(weft_fgraph_last_error(fg), "flip: rewriter exp_to_sin applied 4 times"));
    assert_int_equal(weft_fgraph_check_integrity(fg), WEFT_OK);
    weft_rewriter_release(eq);
    d.max_use_ratio = -1;
    d.n_node = 0; /* the rewriters were taken by the first call */
    d.node = NULL;
    assert_int_equal(weft_rewriter_equilibrium_create(&d, &eq), WEFT_EINVAL);
    weft_fgraph_destroy(fg);
}

/* A feature refusing any graph that contains a Sin node. */
static weft_status_t no_sin_validate(weft_feature_t *self, weft_fgraph_t *fg)
{
    (void)self;
    weft_apply_t *const *nodes;
    size_t n;
    weft_fgraph_applies(fg, &nodes, &n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(weft_op_name(weft_apply_op(nodes[i])), "Sin") == 0)
            return weft_fgraph_set_error(fg, WEFT_EINCONSISTENT, "no Sin allowed");
    return WEFT_OK;
}
static void free_feature(weft_feature_t *self)
{
    free(self);
}
static const weft_feature_class_t no_sin_class = {.size = sizeof(weft_feature_class_t),
                                                  .name = "NoSin",
                                                  .on_validate = no_sin_validate,
                                                  .destroy = free_feature};

static void test_rewrite_rejected_replacement_is_reverted_and_counted(void **state)
{
    rfx_t *f = *state;
    weft_var_t *x = rfx_var(f, f->m34, "x");
    weft_var_t *y = un(f, WEFT_ELEMWISE_TANH, un(f, WEFT_ELEMWISE_EXP, x));
    weft_fgraph_t *fg = rfx_fgraph(f, 1, &x, 1, &y, false);
    weft_feature_t *feat = malloc(sizeof *feat);
    feat->cls = &no_sin_class;
    feat->data = NULL;
    assert_int_equal(weft_fgraph_attach_feature(fg, feat), WEFT_OK);
    int es[2] = {WEFT_ELEMWISE_EXP, WEFT_ELEMWISE_SIN};
    weft_rewriter_t *rw = node_rw("exp_to_sin", swap_fn, es);
    weft_rewrite_stats_t *st;
    assert_int_equal(weft_rewrite_stats_create(&st), WEFT_OK);
    assert_int_equal(weft_rewriter_apply(rw, fg, st), WEFT_OK);
    expect(fg, "Tanh(Exp(x))");
    uint64_t applied, failed;
    assert_int_equal(weft_rewrite_stats_get(st, "exp_to_sin", &applied, &failed, NULL), WEFT_OK);
    assert_int_equal(applied, 0);
    assert_int_equal(failed, 1);
    assert_int_equal(weft_fgraph_check_integrity(fg), WEFT_OK);
    /* a transform error is a failure too; ENOMEM aborts */
    weft_status_t e = WEFT_ETYPE;
    weft_rewriter_t *bad = node_rw("bad", fail_fn, &e);
    assert_int_equal(weft_rewriter_apply(bad, fg, st), WEFT_OK);
    assert_int_equal(weft_rewrite_stats_get(st, "bad", &applied, &failed, NULL), WEFT_OK);
    assert_int_equal(failed, 2); /* Exp and Tanh */
    e = WEFT_ENOMEM;
    assert_int_equal(weft_rewriter_apply(bad, fg, st), WEFT_ENOMEM);
    bool ok;
    weft_apply_t *tanh_node = weft_var_owner(weft_fgraph_output(fg, 0));
    assert_int_equal(weft_rewriter_apply_node(rw, fg, tanh_node, st, &ok), WEFT_OK);
    assert_false(ok); /* not tracked... it is untracked but does not apply to Tanh */
    assert_int_equal(weft_rewriter_apply_node(rw, NULL, tanh_node, st, &ok), WEFT_EINVAL);
    weft_rewriter_t *merge;
    assert_int_equal(weft_rewriter_merge_create(NULL, &merge), WEFT_OK);
    assert_int_equal(weft_rewriter_apply_node(merge, fg, tanh_node, st, &ok), WEFT_EINVAL);
    weft_rewriter_release(merge);
    char buf[4096];
    FILE *mf = fmemopen(buf, sizeof buf, "w");
    assert_int_equal(weft_rewrite_stats_print(st, mf), WEFT_OK);
    fclose(mf);
    assert_non_null(strstr(buf, "0 applied - 1 failed - exp_to_sin"));
    assert_non_null(strstr(buf, "Rewrite profile"));
    assert_int_equal(weft_rewrite_stats_print(NULL, stdout), WEFT_EINVAL);
    assert_int_equal(weft_rewrite_stats_get(st, "nope", NULL, NULL, NULL), WEFT_ENOTFOUND);
    assert_int_equal(weft_rewrite_stats_get(NULL, "x", NULL, NULL, NULL), WEFT_EINVAL);
    assert_int_equal(weft_rewrite_stats_create(NULL), WEFT_EINVAL);
    weft_rewrite_stats_destroy(st);
    weft_rewriter_release(bad);
    weft_rewriter_release(rw);
    weft_fgraph_destroy(fg);
}

/* ---- database ------------------------------------------------------------------- */

typedef struct named_rec {
    rec_t *r;
    const char *name;
} named_rec_t;

static weft_status_t graph_named(weft_fgraph_t *fg, void *user, weft_rewrite_stats_t *stats,
                                 size_t *n_changes)
{
    (void)fg;
    (void)stats;
    named_rec_t *nr = user;
    size_t n = strlen(nr->r->log);
    snprintf(nr->r->log + n, sizeof nr->r->log - n, "%s%s", n ? " " : "", nr->name);
    *n_changes = 0;
    return WEFT_OK;
}

static void reg(weft_rewrite_db_t *db, named_rec_t *nr, double pos, const char *tag)
{
    weft_rewriter_t *rw;
    assert_int_equal(weft_rewriter_graph_create(nr->name, graph_named, nr, NULL, &rw), WEFT_OK);
    const char *tags[] = {tag};
    assert_int_equal(weft_rewrite_db_register(db, nr->name, rw, pos, 1, tags), WEFT_OK);
}

static void test_rewrite_db_positions_tags_include_exclude(void **state)
{
    rfx_t *f = *state;
    weft_var_t *x = rfx_var(f, f->m34, "x");
    weft_var_t *y = un(f, WEFT_ELEMWISE_EXP, x);
    weft_fgraph_t *fg = rfx_fgraph(f, 1, &x, 1, &y, false);
    weft_rewrite_db_t *db;
    assert_int_equal(weft_rewrite_db_create(&db), WEFT_OK);
    rec_t r = {"", 0};
    named_rec_t a = {&r, "late"}, b = {&r, "early"}, c = {&r, "debug_only"}, d = {&r, "tie"};
    reg(db, &a, 2, "fast_run");
    reg(db, &b, -0.01, "fast_run");
    reg(db, &c, 1, "debug");
    reg(db, &d, 2, "fast_run");
    assert_int_equal(weft_rewrite_db_apply(db, fg, "fast_run", 0, NULL, 0, NULL, NULL), WEFT_OK);
    assert_string_equal(r.log, "early late tie");
    r.log[0] = '\0';
    const char *inc[] = {"debug_only"}, *exc[] = {"late"};
    assert_int_equal(weft_rewrite_db_apply(db, fg, "fast_run", 1, inc, 1, exc, NULL), WEFT_OK);
    assert_string_equal(r.log, "early debug_only tie");
    r.log[0] = '\0';
    const char *inc2[] = {"debug"}, *exc2[] = {"fast_run"}; /* exclude wins over the mode */
    assert_int_equal(weft_rewrite_db_apply(db, fg, "none", 1, inc2, 0, NULL, NULL), WEFT_OK);
    assert_string_equal(r.log, "debug_only");
    r.log[0] = '\0';
    assert_int_equal(weft_rewrite_db_apply(db, fg, "fast_run", 0, NULL, 1, exc2, NULL), WEFT_OK);
    assert_string_equal(r.log, "");
    /* bad inputs */
    weft_rewriter_t *rw;
    assert_int_equal(weft_rewriter_graph_create("late", graph_named, &a, NULL, &rw), WEFT_OK);
    assert_int_equal(weft_rewrite_db_register(db, "late", rw, 0, 0, NULL), WEFT_EDUPLICATE);
    assert_int_equal(weft_rewriter_graph_create("x", graph_named, &a, NULL, &rw), WEFT_OK);
    const char *badtags[] = {""};
    assert_int_equal(weft_rewrite_db_register(db, "x", rw, 0, 1, badtags), WEFT_EINVAL);
    assert_int_equal(weft_rewrite_db_register(db, "x", NULL, 0, 0, NULL), WEFT_EINVAL);
    assert_int_equal(weft_rewriter_graph_create("x", graph_named, &a, NULL, &rw), WEFT_OK);
    assert_int_equal(weft_rewrite_db_register_in(db, "nogroup", "x", rw, WEFT_REWRITE_ROLE_NODE,
                                                 0, 0, NULL),
                     WEFT_EINVAL); /* a graph rewriter as a NODE member */
    rw = node_rw("n", record_fn, &r);
    assert_int_equal(weft_rewrite_db_register_in(db, "nogroup", "n", rw, WEFT_REWRITE_ROLE_NODE,
                                                 0, 0, NULL),
                     WEFT_ENOTFOUND);
    assert_int_equal(weft_rewrite_db_register_group(db, "g", WEFT_REWRITE_GROUP_IN2OUT, 3, 0, 0,
                                                    NULL),
                     WEFT_OK);
    assert_int_equal(weft_rewrite_db_register_group(db, "g2", (weft_rewrite_group_kind_t)7, 3, 0,
                                                    0, NULL),
                     WEFT_EINVAL);
    assert_int_equal(weft_rewriter_merge_create(NULL, &rw), WEFT_OK);
    assert_int_equal(weft_rewrite_db_register_in(db, "g", "m", rw, WEFT_REWRITE_ROLE_CLEANUP, 0,
                                                 0, NULL),
                     WEFT_EINVAL); /* roles other than NODE need an equilibrium group */
    weft_rewriter_t *q;
    assert_int_equal(weft_rewrite_db_query(db, "fast_runn", 0, NULL, 0, NULL, &q), WEFT_ENOTFOUND);
    assert_null(q);
    const char *unk[] = {"nope"}, *nul[] = {NULL};
    assert_int_equal(weft_rewrite_db_query(db, "none", 1, unk, 0, NULL, &q), WEFT_ENOTFOUND);
    assert_int_equal(weft_rewrite_db_query(db, "none", 0, NULL, 1, unk, &q), WEFT_ENOTFOUND);
    assert_int_equal(weft_rewrite_db_query(db, "none", 1, nul, 0, NULL, &q), WEFT_EINVAL);
    assert_int_equal(weft_rewrite_db_query(db, "none", 1, NULL, 0, NULL, &q), WEFT_EINVAL);
    assert_int_equal(weft_rewrite_db_query(NULL, "none", 0, NULL, 0, NULL, &q), WEFT_EINVAL);
    assert_true(weft_rewrite_db_has(db, "debug"));
    assert_false(weft_rewrite_db_has(db, "nope"));
    weft_rewrite_db_destroy(db);
    weft_fgraph_destroy(fg);
}

static void test_rewrite_ofg_style_rewriter_registered_first_runs_first(void **state)
{
    rfx_t *f = *state;
    weft_var_t *x = rfx_var(f, f->m34, "x");
    /* two equal Exp nodes: merge1 (position 0) would leave one */
    weft_var_t *y = bin(f, WEFT_ELEMWISE_ADD, un(f, WEFT_ELEMWISE_EXP, x),
                        un(f, WEFT_ELEMWISE_EXP, x));
    weft_fgraph_t *fg = rfx_fgraph(f, 1, &x, 1, &y, false);
    weft_rewrite_db_t *db;
    assert_int_equal(weft_rewrite_db_create(&db), WEFT_OK);
    assert_int_equal(weft_rewrite_db_add_builtins(db), WEFT_OK);
    assert_int_equal(weft_rewrite_db_add_builtins(db), WEFT_EDUPLICATE);
    assert_int_equal(weft_rewrite_db_add_builtins(NULL), WEFT_EINVAL);
    rec_t r = {"", 0};
    weft_rewriter_t *rw = node_rw("inline_ofg_expansion", record_fn, &r);
    const char *tags[] = {"fast_run", "fast_compile", "inline"};
    assert_int_equal(weft_rewrite_db_register(db, "inline_ofg_expansion", rw, -0.01, 3, tags),
                     WEFT_OK);
    weft_rewrite_stats_t *st;
    assert_int_equal(weft_rewrite_stats_create(&st), WEFT_OK);
    assert_int_equal(weft_rewrite_db_apply(db, fg, "fast_run", 0, NULL, 0, NULL, st), WEFT_OK);
    /* it saw both Exp nodes (before any merge), inputs first */
    assert_string_equal(r.log, "Exp Exp Add");
    assert_int_equal(rfx_count_op(fg, "Exp"), 1); /* the rest of fast_run (merge) ran after */
    assert_true(weft_rewrite_stats_n_entries(st) > 3);
    r.log[0] = '\0';
    const char *ex[] = {"inline"};
    assert_int_equal(weft_rewrite_db_apply(db, fg, "fast_compile", 0, NULL, 1, ex, st), WEFT_OK);
    assert_string_equal(r.log, ""); /* excluded by its tag */
    char buf[8192];
    FILE *mf = fmemopen(buf, sizeof buf, "w");
    assert_int_equal(weft_rewrite_db_print(db, mf), WEFT_OK);
    fclose(mf);
    assert_non_null(strstr(buf, "-0.01 inline_ofg_expansion [fast_run fast_compile inline]"));
    assert_non_null(strstr(buf, "1 canonicalize [fast_run] (equilibrium)"));
    weft_rewrite_stats_destroy(st);
    weft_rewrite_db_destroy(db);
    weft_fgraph_destroy(fg);
}

static void test_rewrite_mode_bad_inputs_have_exact_statuses(void **state)
{
    rfx_t *f = *state;
    weft_var_t *x = rfx_var(f, f->m34, "x");
    weft_var_t *y = un(f, WEFT_ELEMWISE_EXP, x);
    weft_fgraph_t *fg = rfx_fgraph(f, 1, &x, 1, &y, false);
    assert_int_equal(weft_rewrite_mode(NULL, "fast_run", 0, NULL, 0, NULL, NULL), WEFT_EINVAL);
    assert_int_equal(weft_rewrite_mode(fg, NULL, 0, NULL, 0, NULL, NULL), WEFT_EINVAL);
    assert_int_equal(weft_rewrite_mode(fg, "fastrun", 0, NULL, 0, NULL, NULL), WEFT_ENOTFOUND);
    assert_non_null(strstr(weft_fgraph_last_error(fg), "unknown mode \"fastrun\""));
    const char *unk[] = {"local_no_such"}, *nul[] = {NULL};
    assert_int_equal(weft_rewrite_mode(fg, "fast_run", 1, unk, 0, NULL, NULL), WEFT_ENOTFOUND);
    assert_non_null(strstr(weft_fgraph_last_error(fg), "local_no_such"));
    assert_int_equal(weft_rewrite_mode(fg, "fast_run", 0, NULL, 1, unk, NULL), WEFT_ENOTFOUND);
    assert_int_equal(weft_rewrite_mode(fg, "fast_run", 1, NULL, 0, NULL, NULL), WEFT_EINVAL);
    assert_int_equal(weft_rewrite_mode(fg, "fast_run", 0, NULL, 1, nul, NULL), WEFT_EINVAL);
    expect(fg, "Exp(x)"); /* nothing ran */
    assert_int_equal(weft_rewrite_mode(fg, "none", 0, NULL, 0, NULL, NULL), WEFT_OK);
    expect(fg, "Exp(x)");
    weft_fgraph_destroy(fg);
}

/* ---- patterns ------------------------------------------------------------------- */

static bool is_positive_const(weft_fgraph_t *fg, weft_var_t *v, void *user)
{
    (void)fg;
    (void)user;
    return weft_var_is_constant(v);
}

static void test_rewrite_pattern_tokens_numbers_constraints(void **state)
{
    rfx_t *f = *state;
    weft_pattern_desc_t d = WEFT_PATTERN_DESC_INIT;
    weft_rewriter_t *rw;
    d.name = "p";
    d.in_pattern = "(Mul x 1)";
    d.out_pattern = "x";
    assert_int_equal(weft_rewriter_pattern_create(&d, &rw), WEFT_OK);
    weft_var_t *x = rfx_var(f, f->m34, "x"), *c1;
    double ones[12] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    assert_non_null(c1 = weft_constant_create(f->g, f->m34, ones, sizeof ones));
    weft_var_t *y = bin(f, WEFT_ELEMWISE_MUL, c1, x); /* commutative: 1*x matches too */
    weft_fgraph_t *fg = rfx_fgraph(f, 1, &x, 1, &y, false);
    assert_int_equal(weft_rewriter_apply(rw, fg, NULL), WEFT_OK);
    expect(fg, "x");
    weft_fgraph_destroy(fg);
    weft_rewriter_release(rw);
    /* a token bound twice must bind the same variable; constraints hold */
    weft_pattern_constraint_t con = {"c", is_positive_const, NULL};
    d.in_pattern = "(Add (Mul a c) (Mul b c))";
    d.out_pattern = "(Mul (Add a b) c)";
    d.n_constraints = 1;
    d.constraints = &con;
    assert_int_equal(weft_rewriter_pattern_create(&d, &rw), WEFT_OK);
    weft_var_t *in[2] = {rfx_var(f, f->m34, "a"), rfx_var(f, f->m34, "b")}, *k;
    double twos[12] = {2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2};
    assert_non_null(k = weft_constant_create(f->g, f->m34, twos, sizeof twos));
    y = bin(f, WEFT_ELEMWISE_ADD, bin(f, WEFT_ELEMWISE_MUL, in[0], k),
            bin(f, WEFT_ELEMWISE_MUL, k, in[1]));
    weft_var_t *y2 = bin(f, WEFT_ELEMWISE_ADD, bin(f, WEFT_ELEMWISE_MUL, in[0], in[1]),
                         bin(f, WEFT_ELEMWISE_MUL, in[1], in[1]));
    weft_var_t *outs[2] = {y, y2};
    fg = rfx_fgraph(f, 2, in, 2, outs, false);
    weft_tensor_t *vals[2], *ref[2], *got[2];
    rfx_random_inputs(f, 2, in, vals, -1, 1);
    rfx_eval(f, 2, in, vals, 2, outs, ref);
    assert_int_equal(weft_rewriter_apply(rw, fg, NULL), WEFT_OK);
    expect(fg, "Mul(Add(a, b), Constant{float64[3,4]}); Add(Mul(a, b), Mul(b, b))");
    weft_var_t *o2[2] = {weft_fgraph_output(fg, 0), weft_fgraph_output(fg, 1)};
    rfx_eval(f, 2, in, vals, 2, o2, got);
    rfx_assert_close(got[0], ref[0], 1e-12, 1e-12);
    rfx_assert_close(got[1], ref[1], 1e-12, 1e-12);
    rfx_release(2, ref);
    rfx_release(2, got);
    rfx_release(2, vals);
    weft_fgraph_destroy(fg);
    weft_rewriter_release(rw);
}

static void test_rewrite_pattern_interior_client_rule(void **state)
{
    rfx_t *f = *state;
    weft_pattern_desc_t d = WEFT_PATTERN_DESC_INIT;
    weft_rewriter_t *rw;
    d.name = "negneg";
    d.in_pattern = "(Neg (Neg x))";
    d.out_pattern = "x";
    assert_int_equal(weft_rewriter_pattern_create(&d, &rw), WEFT_OK);
    weft_var_t *x = rfx_var(f, f->m34, "x");
    weft_var_t *n1 = un(f, WEFT_ELEMWISE_NEG, x);
    weft_var_t *outs[2] = {un(f, WEFT_ELEMWISE_NEG, n1), n1};
    weft_fgraph_t *fg = rfx_fgraph(f, 1, &x, 2, outs, false);
    assert_int_equal(weft_rewriter_apply(rw, fg, NULL), WEFT_OK);
    expect(fg, "Neg(Neg(x)); Neg(x)"); /* the inner Neg has another client */
    weft_rewriter_release(rw);
    d.allow_multiple_clients = true;
    assert_int_equal(weft_rewriter_pattern_create(&d, &rw), WEFT_OK);
    assert_int_equal(weft_rewriter_apply(rw, fg, NULL), WEFT_OK);
    expect(fg, "x; Neg(x)");
    weft_rewriter_release(rw);
    weft_fgraph_destroy(fg);
}

static void test_rewrite_pattern_bad_text_statuses(void **state)
{
    (void)state;
    weft_pattern_desc_t d = WEFT_PATTERN_DESC_INIT;
    weft_rewriter_t *rw = NULL;
    d.name = "p";
    d.in_pattern = "(Div (Mul x y) y";
    d.out_pattern = "x";
    assert_int_equal(weft_rewriter_pattern_create(&d, &rw), WEFT_EPARSE);
    assert_non_null(strstr(weft_rewrite_pattern_last_error(), "offset"));
    d.in_pattern = "(NoSuchOp x)";
    assert_int_equal(weft_rewriter_pattern_create(&d, &rw), WEFT_ENOTFOUND);
    d.in_pattern = "(Neg x)";
    d.out_pattern = "z";
    assert_int_equal(weft_rewriter_pattern_create(&d, &rw), WEFT_ENOTFOUND);
    d.out_pattern = "@nobuilder";
    assert_int_equal(weft_rewriter_pattern_create(&d, &rw), WEFT_ENOTFOUND);
    d.in_pattern = "x";
    d.out_pattern = "x";
    assert_int_equal(weft_rewriter_pattern_create(&d, &rw), WEFT_EPARSE);
    d.in_pattern = "(Neg x) y";
    assert_int_equal(weft_rewriter_pattern_create(&d, &rw), WEFT_EPARSE);
    d.in_pattern = "(Neg x)";
    weft_pattern_constraint_t con = {"q", is_positive_const, NULL};
    d.n_constraints = 1;
    d.constraints = &con;
    assert_int_equal(weft_rewriter_pattern_create(&d, &rw), WEFT_ENOTFOUND);
    d.constraints = NULL;
    assert_int_equal(weft_rewriter_pattern_create(&d, &rw), WEFT_EINVAL);
    assert_int_equal(weft_rewriter_pattern_create(NULL, &rw), WEFT_EINVAL);
    assert_null(rw);
}

/* "(Neg (Neg ... x))" nested `depth` levels deep, in new memory. */
static char *nested_negs(size_t depth)
{
    char *s = malloc(depth * 6 + 2), *p = s;
    assert_non_null(s);
    for (size_t i = 0; i < depth; i++, p += 5) memcpy(p, "(Neg ", 5);
    *p++ = 'x';
    memset(p, ')', depth);
    p[depth] = '\0';
    return s;
}

/* Pattern text nests at most WEFT_PATTERN_MAX_DEPTH ops deep: deeper text is
 * refused with a message naming the limit, however deep (200,000 levels
 * used to overflow the C stack). */
static void test_rewrite_pattern_nesting_beyond_the_limit_is_refused(void **state)
{
    (void)state;
    weft_pattern_desc_t d = WEFT_PATTERN_DESC_INIT;
    weft_rewriter_t *rw = NULL;
    char *at_limit = nested_negs(WEFT_PATTERN_MAX_DEPTH);
    char *over = nested_negs(WEFT_PATTERN_MAX_DEPTH + 1), *huge = nested_negs(200000);
    d.name = "deep";
    d.in_pattern = at_limit;
    d.out_pattern = at_limit;
    assert_int_equal(weft_rewriter_pattern_create(&d, &rw), WEFT_OK);
    weft_rewriter_release(rw);
    /* in-pattern, then out-pattern: the 257th "(" is at offset 256 * 5 */
    const char *texts[][2] = {{over, "x"}, {huge, "x"}, {"(Neg x)", huge}};
    for (size_t i = 0; i < 3; i++) {
        d.in_pattern = texts[i][0];
        d.out_pattern = texts[i][1];
        rw = NULL;
        assert_int_equal(weft_rewriter_pattern_create(&d, &rw), WEFT_EPARSE);
        assert_null(rw);
        assert_string_equal(weft_rewrite_pattern_last_error(),
                            "offset 1280: ops nested deeper than 256 levels");
    }
    free(at_limit);
    free(over);
    free(huge);
}

/* The MergeFeature a merge pass attaches belongs to the fgraph: it takes its
 * memory from the context's allocator (weft/alloc.h), frees it with the sizes
 * it allocated, and a pass that merges without a rejection allocates nothing
 * from the C library. */
static void test_rewrite_merge_feature_uses_the_context_allocator(void **state)
{
    (void)state;
    counting_alloc_reset();
    rfx_t f = {0};
    assert_int_equal(weft_graph_create(counting_alloc(), &f.g), WEFT_OK);
    int64_t s4[] = {4};
    assert_int_equal(weft_type_tensor(f.g, WEFT_FLOAT64, 1, s4, &f.v4), WEFT_OK);
    weft_var_t *x = rfx_var(&f, f.v4, "x"), *y = rfx_var(&f, f.v4, "y"), *acc = x;
    for (int i = 0; i < 200; i++) /* each step's two Exp(y) are one after merging */
        acc = rfx_bin(&f, WEFT_ELEMWISE_ADD, acc,
                      rfx_bin(&f, WEFT_ELEMWISE_MUL, rfx_un(&f, WEFT_ELEMWISE_EXP, y),
                              rfx_un(&f, WEFT_ELEMWISE_EXP, y)));
    weft_var_t *in[2] = {x, y};
    weft_fgraph_t *fg = rfx_fgraph(&f, 2, in, 1, &acc, true);
    weft_rewriter_t *merge;
    assert_int_equal(weft_rewriter_merge_create(NULL, &merge), WEFT_OK);
    alloc_count_start();
    weft_status_t st = weft_rewriter_apply(merge, fg, NULL);
    long libc = alloc_count_stop();
    assert_int_equal(st, WEFT_OK);
    assert_int_equal(libc, 0);
    assert_int_equal(rfx_count_op(fg, "Exp"), 1);
    weft_rewriter_release(merge);
    weft_graph_destroy(f.g);
    counting_alloc_stats_t s = counting_alloc_stats();
    assert_int_equal(s.size_mismatches, 0);
    assert_int_equal(s.unknown, 0);
    assert_int_equal(s.live_blocks, 0);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, rfx_setup, rfx_teardown)
    const struct CMUnitTest tests[] = {
        T(test_rewrite_node_create_bad_args_are_einval),
        T(test_rewrite_walk_orders_in2out_and_out2in),
        T(test_rewrite_try_order_class_then_instance_then_untracked),
        T(test_rewrite_walk_queues_imported_nodes_unless_ignored),
        T(test_rewrite_equilibrium_without_fixpoint_is_enoconverge),
        T(test_rewrite_rejected_replacement_is_reverted_and_counted),
        T(test_rewrite_db_positions_tags_include_exclude),
        T(test_rewrite_ofg_style_rewriter_registered_first_runs_first),
        T(test_rewrite_mode_bad_inputs_have_exact_statuses),
        T(test_rewrite_pattern_tokens_numbers_constraints),
        T(test_rewrite_pattern_interior_client_rule),
        T(test_rewrite_pattern_bad_text_statuses),
        T(test_rewrite_pattern_nesting_beyond_the_limit_is_refused),
        cmocka_unit_test(test_rewrite_merge_feature_uses_the_context_allocator),
    };
    return cmocka_run_group_tests_name("rewrite", tests, NULL, NULL);
}
