/* The built-in pipeline (docs/rewrites.md §6.3 order) registered into a
 * database, and built-in rewriters by name. */
#include <string.h>

#include "rewrite_int.h"

static weft_status_t node_builtin(const weft__builtin_node_t *b, weft_rewriter_t **out)
{
    const weft_op_class_t *cls[4];
    size_t n = 0;
    for (size_t i = 0; i < 4 && b->track[i]; i++)
        if ((cls[n] = weft__class(b->track[i])) != NULL) n++;
    weft_node_rewriter_desc_t d = WEFT_NODE_REWRITER_DESC_INIT;
    d.name = b->name;
    d.transform = b->fn;
    d.n_classes = n;
    d.classes = n ? cls : NULL;
    if (n == 0 && b->track[0]) return WEFT_ENOTFOUND; /* none of its ops is built in */
    return weft_rewriter_node_create(&d, out);
}

weft_status_t weft_rewriter_builtin_create(const char *name, weft_rewriter_t **out)
{
    if (out) *out = NULL;
    if (!name || !out) return WEFT_EINVAL;
    for (size_t i = 0; i < weft__n_builtin_nodes; i++)
        if (strcmp(weft__builtin_nodes[i].name, name) == 0)
            return node_builtin(&weft__builtin_nodes[i], out);
    for (size_t i = 0; i < weft__n_ifelse_nodes; i++)
        if (strcmp(weft__ifelse_nodes[i].name, name) == 0)
            return node_builtin(&weft__ifelse_nodes[i], out);
    for (size_t i = 0; i < weft__n_shape_nodes; i++)
        if (strcmp(weft__shape_nodes[i].name, name) == 0)
            return node_builtin(&weft__shape_nodes[i], out);
    if (weft__pattern_builtin_exists(name)) return weft__pattern_builtin_create(name, out);
    if (weft__stabilize_create(name, out) == WEFT_OK) return WEFT_OK;
    if (strcmp(name, "constant_folding") == 0)
        return weft_rewriter_constant_folding_create(name, out);
    if (strcmp(name, "constant_dimshuffle") == 0)
        return weft__constant_dimshuffle_create(name, out);
    if (strcmp(name, "merge") == 0) return weft_rewriter_merge_create(name, out);
    if (strcmp(name, "inplace") == 0) return weft_rewriter_inplace_create(name, out);
    if (strcmp(name, "update_inplace") == 0) return weft_rewriter_update_inplace_create(name, out);
    if (strcmp(name, "add_destroy_handler") == 0)
        return weft_rewriter_add_destroy_handler_create(name, out);
    return WEFT_ENOTFOUND;
}

#define TAGS(...) (sizeof((const char *[]){__VA_ARGS__}) / sizeof(const char *)), \
                  ((const char *const[]){__VA_ARGS__})

static weft_status_t reg_merge(weft_rewrite_db_t *db, const char *name, double pos)
{
    weft_rewriter_t *rw;
    weft_status_t st = weft_rewriter_merge_create(name, &rw);
    if (st != WEFT_OK) return st;
    const char *const fc[] = {"fast_run", "fast_compile", "merge"};
    return weft_rewrite_db_register(db, name, rw, pos, pos == 0 ? 3 : 2,
                                    pos == 0 ? fc : (const char *const[]){"fast_run", "merge"});
}

/* The tag of every rewrite that may change a result's bits under IEEE
 * arithmetic (NaN, inf, signed zero, overflow, rounding): part of fast_run
 * as in PyTensor, and excluding it gives mode none's bits
 * (docs/rewrites.md §6.5). Never for a change of shape. */
#define FAST_MATH "fast_math"

/* A group member: a built-in by name and the tags it carries besides
 * fast_run and its group's name (NULL-padded). */
typedef struct member {
    const char *name;
    const char *tags[3];
} member_t;

/* Registers member m (a built-in) into group with fast_run, the group's
 * tag, m's tags and `extra` (may be NULL); finals and cleanups also run in
 * fast_compile. */
static weft_status_t reg_member(weft_rewrite_db_t *db, const char *group, const member_t *m,
                                weft_rewrite_role_t role, double pos, const char *extra)
{
    weft_rewriter_t *rw;
    weft_status_t st = weft_rewriter_builtin_create(m->name, &rw);
    if (st == WEFT_ENOTFOUND) return WEFT_OK; /* its ops are not built in */
    if (st != WEFT_OK) return st;
    const char *tags[7] = {"fast_run", group};
    size_t n = 2;
    for (size_t i = 0; i < 3 && m->tags[i]; i++) tags[n++] = m->tags[i];
    if (extra) tags[n++] = extra;
    if (role == WEFT_REWRITE_ROLE_FINAL || role == WEFT_REWRITE_ROLE_CLEANUP)
        tags[n++] = "fast_compile";
    return weft_rewrite_db_register_in(db, group, m->name, rw, role, pos, n, tags);
}

/* What each fast_math member may change: docs/rewrites.md §6.5. */
static const member_t useless[] = {
    {"local_add_zero", {FAST_MATH}}, /* -0.0 + 0 is +0.0 */
    {"local_mul_one", {NULL}},
    {"local_neg_neg", {NULL}},
    {"local_useless_cast", {NULL}},
    {"local_dimshuffle_dimshuffle", {NULL}},
};
static const member_t canonical[] = {
    {"local_mul_zero", {FAST_MATH}},                         /* NaN * 0, inf * 0, -x * 0 */
    {"local_sub_self", {FAST_MATH}},                         /* inf - inf, NaN - NaN */
    {"local_exp_log", {FAST_MATH}},                          /* x < 0, rounding */
    {"local_log_exp", {FAST_MATH}},                          /* overflow, rounding, -0.0 */
    {"local_div_mul_cancel", {FAST_MATH, "shape_unsafe"}},   /* y = 0, inf, NaN; rounding */
    {"local_mul_div_cancel", {FAST_MATH, "shape_unsafe"}},   /* as above */
    {"local_sum_broadcastable", {FAST_MATH}},                /* a sum of -0.0 is +0.0 */
    {"local_reduce_grad_sink", {NULL}},
    /* IfElse (docs/control-flow.md §3): no value changes */
    {"ifelse_constant_cond", {NULL}},
    {"ifelse_same_branches", {NULL}},
    {"ifelse_merge", {NULL}},
    {"ifelse_lift_elemwise", {NULL}},
};
/* BLAS adds z into the product block by block: another summation order */
static const member_t gemm = {"local_gemm", {"gemm", FAST_MATH}};
/* Dot sums in another order than the Einsum kernel */
static const member_t einsum = {"local_einsum_lower", {FAST_MATH}};
static const member_t folding = {"constant_folding", {"constant_folding"}};
static const member_t merge = {"merge", {"merge"}};
static const member_t fusion = {"local_elemwise_fusion", {NULL}};
static const member_t ifelse_view = {"ifelse_inplace", {NULL}};

/* An equilibrium group's final constant folding and cleanup merge. */
static weft_status_t reg_fold_merge(weft_rewrite_db_t *db, const char *group)
{
    weft_status_t st = reg_member(db, group, &folding, WEFT_REWRITE_ROLE_FINAL, 0, NULL);
    return st == WEFT_OK ? reg_member(db, group, &merge, WEFT_REWRITE_ROLE_CLEANUP, 0, NULL) : st;
}

static weft_status_t reg_useless(weft_rewrite_db_t *db)
{
    weft_status_t st = weft_rewrite_db_register_group(db, "useless", WEFT_REWRITE_GROUP_IN2OUT,
                                                      0.6, 0, TAGS("fast_run"));
    for (size_t i = 0; st == WEFT_OK && i < sizeof useless / sizeof *useless; i++)
        st = reg_member(db, "useless", &useless[i], WEFT_REWRITE_ROLE_NODE, (double)i, NULL);
    return st;
}

static weft_status_t reg_canonicalize(weft_rewrite_db_t *db)
{
    weft_status_t st = weft_rewrite_db_register_group(
        db, "canonicalize", WEFT_REWRITE_GROUP_EQUILIBRIUM, 1, 0, TAGS("fast_run"));
    double pos = 0;
    for (size_t i = 0; st == WEFT_OK && i < sizeof useless / sizeof *useless; i++)
        st = reg_member(db, "canonicalize", &useless[i], WEFT_REWRITE_ROLE_NODE, pos++, "useless");
    for (size_t i = 0; st == WEFT_OK && i < sizeof canonical / sizeof *canonical; i++)
        st = reg_member(db, "canonicalize", &canonical[i], WEFT_REWRITE_ROLE_NODE, pos++, NULL);
    for (size_t i = 0; st == WEFT_OK && i < weft__n_shape_nodes; i++) {
        member_t m = {weft__shape_nodes[i].name, {"shape"}}; /* docs/shapes.md §3 */
        st = reg_member(db, "canonicalize", &m, WEFT_REWRITE_ROLE_NODE, pos++, NULL);
    }
    return st == WEFT_OK ? reg_fold_merge(db, "canonicalize") : st;
}

static weft_status_t reg_specialize(weft_rewrite_db_t *db)
{
    weft_status_t st = weft_rewrite_db_register_group(
        db, "specialize", WEFT_REWRITE_GROUP_EQUILIBRIUM, 2, 0, TAGS("fast_run"));
    if (st == WEFT_OK)
        st = reg_member(db, "specialize", &gemm, WEFT_REWRITE_ROLE_NODE, 0, NULL);
    return st == WEFT_OK ? reg_fold_merge(db, "specialize") : st;
}

/* Before canonicalize, which then tidies the DimShuffles and Reshapes
 * of the lowered einsums (docs/linalg.md). */
static weft_status_t reg_einsum(weft_rewrite_db_t *db)
{
    weft_status_t st = weft_rewrite_db_register_group(db, "einsum", WEFT_REWRITE_GROUP_IN2OUT,
                                                      0.8, 0, TAGS("fast_run"));
    return st == WEFT_OK ? reg_member(db, "einsum", &einsum, WEFT_REWRITE_ROLE_NODE, 0, NULL) : st;
}

/* Between canonicalize and specialize (PyTensor's stabilize position): the
 * stable forms (stabilize.c), each changing results (§6.5). */
static weft_status_t reg_stabilize(weft_rewrite_db_t *db)
{
    weft_status_t st = weft_rewrite_db_register_group(
        db, "stabilize", WEFT_REWRITE_GROUP_EQUILIBRIUM, 1.5, 0, TAGS("fast_run"));
    for (size_t i = 0; st == WEFT_OK && i < weft__stabilize_count(); i++) {
        member_t m = {weft__stabilize_name(i), {FAST_MATH}};
        st = reg_member(db, "stabilize", &m, WEFT_REWRITE_ROLE_NODE, (double)i, NULL);
    }
    return st == WEFT_OK ? reg_fold_merge(db, "stabilize") : st;
}

/* Elementwise fusion after the algebraic rewrites (which match single
 * elementwise nodes, local_gemm included) and before inplace (which then
 * picks in-place Composites), walked output to input so each chain is fused
 * from its last node. */
static weft_status_t reg_fusion(weft_rewrite_db_t *db)
{
    weft_status_t st = weft_rewrite_db_register_group(
        db, "elemwise_fusion", WEFT_REWRITE_GROUP_OUT2IN, 48, 0, TAGS("fast_run", "fusion"));
    if (st == WEFT_OK)
        st = reg_member(db, "elemwise_fusion", &fusion, WEFT_REWRITE_ROLE_NODE, 0, NULL);
    return st;
}

/* The DestroyHandler, then the updates' own in-place pass (an update takes
 * its state's buffer first), then inplace for the rest of the graph, then
 * IfElses viewing their then side where the in-place nodes allow it
 * (PyTensor's cond_make_inplace, after its inplace rewrites as well). */
static weft_status_t reg_inplace(weft_rewrite_db_t *db)
{
    weft_rewriter_t *rw;
    weft_status_t st = weft_rewriter_add_destroy_handler_create("add_destroy_handler", &rw);
    if (st == WEFT_OK)
        st = weft_rewrite_db_register(db, "add_destroy_handler", rw, 49.5,
                                      TAGS("fast_run", "inplace"));
    if (st == WEFT_OK) st = weft_rewriter_update_inplace_create("update_inplace", &rw);
    if (st == WEFT_OK)
        st = weft_rewrite_db_register(db, "update_inplace", rw, 50.4,
                                      TAGS("fast_run", "inplace"));
    if (st == WEFT_OK) st = weft_rewriter_inplace_create("inplace", &rw);
    if (st == WEFT_OK)
        st = weft_rewrite_db_register(db, "inplace", rw, 50.5, TAGS("fast_run", "inplace"));
    if (st == WEFT_OK)
        st = weft_rewrite_db_register_group(db, "ifelse_view", WEFT_REWRITE_GROUP_IN2OUT, 50.6,
                                            0, TAGS("fast_run", "inplace"));
    if (st == WEFT_OK) st = reg_member(db, "ifelse_view", &ifelse_view, WEFT_REWRITE_ROLE_NODE, 0,
                                       "inplace");
    return st;
}

weft_status_t weft_rewrite_db_add_builtins(weft_rewrite_db_t *db)
{
    if (!db) return WEFT_EINVAL;
    if (weft_rewrite_db_has(db, "merge1")) return WEFT_EDUPLICATE;
    weft_rewriter_t *cds;
    weft_status_t st = weft__constant_dimshuffle_create("constant_dimshuffle", &cds);
    if (st == WEFT_OK) /* before merge1: the folded nodes never reach a merge */
        st = weft_rewrite_db_register(db, "constant_dimshuffle", cds, -0.005,
                                      TAGS("fast_run", "constant_folding"));
    if (st == WEFT_OK) st = reg_merge(db, "merge1", 0);
    if (st == WEFT_OK) st = reg_useless(db);
    if (st == WEFT_OK) st = reg_merge(db, "merge_useless", 0.65);
    if (st == WEFT_OK) st = reg_einsum(db);
    if (st == WEFT_OK) st = reg_canonicalize(db);
    if (st == WEFT_OK) st = reg_merge(db, "merge_canon", 1.2);
    if (st == WEFT_OK) st = reg_stabilize(db);
    if (st == WEFT_OK) st = reg_specialize(db);
    if (st == WEFT_OK) st = reg_fusion(db);
    if (st == WEFT_OK) st = reg_merge(db, "merge2", 49);
    if (st == WEFT_OK) st = reg_inplace(db);
    if (st == WEFT_OK) st = reg_merge(db, "merge3", 100);
    return st;
}
