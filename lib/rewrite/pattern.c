/* Pattern rewriters (docs/rewrites.md §4): the s-expression parser, the matcher
 * (consistent token bindings, constraints, commutative backtracking, the
 * interior single-client rule) and the out-pattern builder. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base_int.h"
#include "graph/ctor_int.h"
#include "rewrite_int.h"
#include "weft/elemwise.h"

#define PAT_MAX_TOKENS 32
#define PAT_MAX_KIDS 8

typedef enum pkind { P_OP, P_TOKEN, P_NUM, P_BUILDER } pkind_t;

typedef struct pnode {
    pkind_t kind;
    const weft_op_class_t *cls;
    void *props; /* copy, cls->props_size bytes; NULL: any non-destroying op */
    bool (*pred)(const weft_op_t *op, void *user);
    void *pred_user;
    size_t n_kids;
    struct pnode *kids[PAT_MAX_KIDS];
    int index; /* token or builder index */
    double num;
} pnode_t;

typedef struct pattern {
    pnode_t *in, *out;
    size_t n_tokens;
    char *tokens[PAT_MAX_TOKENS];
    weft_pattern_constraint_t cons[PAT_MAX_TOKENS]; /* per token (fn NULL: none) */
    weft_pattern_builder_t *builders;
    size_t n_builders;
    const weft_op_class_t **comm;
    size_t n_comm;
    bool allow_multiple;
} pattern_t;

struct weft_pattern_bindings {
    const pattern_t *p;
    weft_var_t *v[PAT_MAX_TOKENS];
};

static _Thread_local char pat_err[256];

const char *weft_rewrite_pattern_last_error(void)
{
    return pat_err;
}

#define perr(st, ...) weft__error_to(pat_err, sizeof pat_err, (st), __VA_ARGS__)

static void pnode_free(pnode_t *n)
{
    if (!n) return;
    for (size_t i = 0; i < n->n_kids; i++) pnode_free(n->kids[i]);
    free(n->props);
    free(n);
}

static void pattern_free(void *user)
{
    pattern_t *p = user;
    pnode_free(p->in);
    pnode_free(p->out);
    for (size_t i = 0; i < p->n_tokens; i++) free(p->tokens[i]);
    free(p->builders);
    free(p->comm);
    free(p);
}

/* ---- parser ------------------------------------------------------------------- */

typedef struct parser {
    const char *s, *p;
    const weft_pattern_desc_t *d;
    pattern_t *pat;
    bool out;  /* parsing the out-pattern */
    int depth; /* ops open around the current position */
} parser_t;

static void skip_ws(parser_t *ps)
{
    while (isspace((unsigned char)*ps->p)) ps->p++;
}

static size_t ident_len(const char *p)
{
    size_t n = 0;
    while (isalnum((unsigned char)p[n]) || p[n] == '_') n++;
    return n;
}

static weft_status_t resolve_op(parser_t *ps, const char *name, pnode_t *n)
{
    for (size_t i = 0; i < ps->d->n_ops; i++)
        if (ps->d->ops[i].name && strcmp(ps->d->ops[i].name, name) == 0) {
            const weft_pattern_op_t *o = &ps->d->ops[i];
            if (!o->cls) return perr(WEFT_EINVAL, "op matcher %s has no class", name);
            n->cls = o->cls;
            n->pred = o->pred;
            n->pred_user = o->user;
            if (o->props && o->cls->props_size) {
                n->props = malloc(o->cls->props_size);
                if (!n->props) return WEFT_ENOMEM;
                memcpy(n->props, o->props, o->cls->props_size);
            }
            return WEFT_OK;
        }
    n->cls = weft__class(name);
    return n->cls ? WEFT_OK : perr(WEFT_ENOTFOUND, "unknown op %s in pattern", name);
}

static int token_index(pattern_t *pat, const char *name, size_t len, bool add)
{
    for (size_t i = 0; i < pat->n_tokens; i++)
        if (strlen(pat->tokens[i]) == len && strncmp(pat->tokens[i], name, len) == 0)
            return (int)i;
    if (!add || pat->n_tokens >= PAT_MAX_TOKENS) return -1;
    char *t = malloc(len + 1);
    if (!t) return -2;
    memcpy(t, name, len);
    t[len] = '\0';
    pat->tokens[pat->n_tokens] = t;
    return (int)pat->n_tokens++;
}

static weft_status_t parse(parser_t *ps, pnode_t **out);

static weft_status_t parse_op(parser_t *ps, pnode_t *n)
{
    /* the parser, the builder and pnode_free recurse once per level: the
     * limit keeps hostile text from overflowing the C stack */
    if (ps->depth == WEFT_PATTERN_MAX_DEPTH)
        return perr(WEFT_EPARSE, "offset %zu: ops nested deeper than %d levels",
                    (size_t)(ps->p - ps->s), WEFT_PATTERN_MAX_DEPTH);
    ps->p++; /* '(' */
    skip_ws(ps);
    size_t len = ident_len(ps->p);
    if (len == 0 || len > 63)
        return perr(WEFT_EPARSE, "offset %zu: expected an op name", (size_t)(ps->p - ps->s));
    char name[64];
    memcpy(name, ps->p, len);
    name[len] = '\0';
    ps->p += len;
    n->kind = P_OP;
    weft_status_t st = resolve_op(ps, name, n);
    for (skip_ws(ps); st == WEFT_OK && *ps->p != ')'; skip_ws(ps)) {
        if (!*ps->p || n->n_kids == PAT_MAX_KIDS)
            return perr(WEFT_EPARSE, "offset %zu: missing ')' or too many inputs",
                        (size_t)(ps->p - ps->s));
        ps->depth++;
        st = parse(ps, &n->kids[n->n_kids]);
        ps->depth--;
        if (st == WEFT_OK) n->n_kids++;
    }
    if (st == WEFT_OK) ps->p++;
    return st;
}

static weft_status_t parse_atom(parser_t *ps, pnode_t *n)
{
    const char *p = ps->p;
    size_t off = (size_t)(p - ps->s);
    if (*p == '@') {
        size_t len = ident_len(p + 1);
        n->kind = P_BUILDER;
        for (size_t i = 0; ps->out && i < ps->d->n_builders; i++)
            if (strlen(ps->d->builders[i].name) == len &&
                strncmp(ps->d->builders[i].name, p + 1, len) == 0) {
                n->index = (int)i;
                ps->p += len + 1;
                return WEFT_OK;
            }
        return perr(ps->out ? WEFT_ENOTFOUND : WEFT_EPARSE, "offset %zu: unknown builder", off);
    }
    if (islower((unsigned char)*p) || *p == '_') {
        size_t len = ident_len(p);
        n->kind = P_TOKEN;
        n->index = token_index(ps->pat, p, len, !ps->out);
        ps->p += len;
        if (n->index == -2) return WEFT_ENOMEM;
        if (n->index < 0)
            return perr(WEFT_ENOTFOUND, "offset %zu: token %.*s not bound by the in-pattern", off,
                        (int)len, p);
        return WEFT_OK;
    }
    char *end;
    n->num = strtod(p, &end);
    if (end == p) return perr(WEFT_EPARSE, "offset %zu: unexpected '%c'", off, *p ? *p : '?');
    n->kind = P_NUM;
    ps->p = end;
    return WEFT_OK;
}

static weft_status_t parse(parser_t *ps, pnode_t **out)
{
    skip_ws(ps);
    pnode_t *n = calloc(1, sizeof *n);
    if (!n) return WEFT_ENOMEM;
    weft_status_t st = *ps->p == '(' ? parse_op(ps, n) : parse_atom(ps, n);
    if (st != WEFT_OK) {
        pnode_free(n);
        return st;
    }
    *out = n;
    return WEFT_OK;
}

static weft_status_t parse_all(parser_t *ps, const char *text, bool outp, pnode_t **out)
{
    ps->s = ps->p = text;
    ps->out = outp;
    ps->depth = 0;
    weft_status_t st = parse(ps, out);
    if (st != WEFT_OK) return st;
    skip_ws(ps);
    if (*ps->p)
        return perr(WEFT_EPARSE, "offset %zu: trailing text after the pattern",
                    (size_t)(ps->p - ps->s));
    return WEFT_OK;
}

/* ---- matcher ------------------------------------------------------------------ */

static bool is_commutative(const pattern_t *p, const weft_op_class_t *cls)
{
    static const char *const names[] = {"Add", "Mul", "Maximum", "Minimum", "Eq", "Ne"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(cls->name, names[i]) == 0) return true;
    for (size_t i = 0; i < p->n_comm; i++)
        if (p->comm[i] == cls) return true;
    return false;
}

static bool op_matches(const pnode_t *n, const weft_op_t *op)
{
    if (weft_op_class(op) != n->cls) return false;
    if (n->props) {
        const weft_op_class_t *c = n->cls;
        bool eq = c->props_equal ? c->props_equal(n->props, weft_op_props(op))
                                 : memcmp(n->props, weft_op_props(op), c->props_size) == 0;
        if (!eq) return false;
    } else if (weft_op_is_destructive(op)) {
        return false;
    }
    return !n->pred || n->pred(op, n->pred_user);
}

typedef struct mctx {
    weft_fgraph_t *fg;
    const pattern_t *p;
    weft_pattern_bindings_t *b;
} mctx_t;

/* A pending sub-match: pattern node against variable. */
typedef struct goal {
    const pnode_t *n;
    weft_var_t *v;
    bool root;
} goal_t;

#define PAT_MAX_GOALS 64

static bool solve(mctx_t *m, const goal_t *goals, size_t n_goals);

static bool bind(mctx_t *m, const pnode_t *n, weft_var_t *v)
{
    weft_var_t *old = m->b->v[n->index];
    if (old) return old == v || weft_constant_equal(old, v);
    const weft_pattern_constraint_t *c = &m->p->cons[n->index];
    if (c->fn && !c->fn(m->fg, v, c->user)) return false;
    m->b->v[n->index] = v;
    return true;
}

/* Tries every assignment of the op's kids to its inputs (only the identity
 * unless commutative): pushes them as goals after `rest` and solves; the
 * bindings are restored between attempts (full backtracking: a later sibling
 * failing makes an earlier commutative node try its next order). */
static bool try_perms(mctx_t *m, const pnode_t *n, const weft_apply_t *a, bool comm,
                      goal_t *goals, size_t n_rest, size_t k, unsigned used)
{
    if (k == n->n_kids) {
        weft_pattern_bindings_t save = *m->b;
        if (solve(m, goals, n_rest + n->n_kids)) return true;
        *m->b = save;
        return false;
    }
    for (size_t i = comm ? 0 : k; i < (comm ? n->n_kids : k + 1); i++) {
        if (used & (1u << i)) continue;
        goals[n_rest + k] = (goal_t){n->kids[k], weft_apply_input(a, i), false};
        if (try_perms(m, n, a, comm, goals, n_rest, k + 1, used | (1u << i))) return true;
    }
    return false;
}

static bool solve(mctx_t *m, const goal_t *goals, size_t n_goals)
{
    if (n_goals == 0) return true;
    goal_t g = goals[n_goals - 1];
    const pnode_t *n = g.n;
    if (n->kind != P_OP) {
        weft_pattern_bindings_t save = *m->b;
        bool ok = n->kind == P_TOKEN ? bind(m, n, g.v)
                                     : n->kind == P_NUM && weft__is_const_value(g.v, n->num);
        if (ok && solve(m, goals, n_goals - 1)) return true;
        *m->b = save;
        return false;
    }
    weft_apply_t *a = weft_var_owner(g.v);
    if (!a || weft_apply_n_outputs(a) != 1 || weft_apply_n_inputs(a) != n->n_kids) return false;
    if (!op_matches(n, weft_apply_op(a))) return false;
    if (!g.root && !m->p->allow_multiple && weft_fgraph_n_clients(m->fg, g.v) > 1) return false;
    if (n_goals - 1 + n->n_kids > PAT_MAX_GOALS) return false;
    goal_t next[PAT_MAX_GOALS];
    memcpy(next, goals, (n_goals - 1) * sizeof *goals);
    return try_perms(m, n, a, is_commutative(m->p, n->cls), next, n_goals - 1, 0, 0);
}

static bool match(mctx_t *m, const pnode_t *n, weft_var_t *v, bool root)
{
    goal_t g = {n, v, root};
    return solve(m, &g, 1);
}

weft_var_t *weft_pattern_binding(const weft_pattern_bindings_t *b, const char *token)
{
    if (!b || !token) return NULL;
    int i = token_index((pattern_t *)b->p, token, strlen(token), false);
    return i >= 0 ? b->v[i] : NULL;
}

/* ---- builder -------------------------------------------------------------------- */

static int elemwise_kind_of(const weft_op_class_t *cls)
{
    for (int k = 0; k < WEFT_ELEMWISE_KIND_COUNT; k++)
        if (strcmp(weft_elemwise_name((weft_elemwise_kind_t)k), cls->name) == 0 &&
            weft__class(cls->name) == cls)
            return k;
    return -1;
}

static weft_status_t build(mctx_t *m, weft_apply_t *node, const pnode_t *n, weft_var_t **out)
{
    weft_graph_t *g = weft_fgraph_graph(m->fg);
    weft_dtype_t dt = weft_type_dtype(weft_var_type(weft_apply_output(node, 0)));
    *out = NULL;
    if (n->kind == P_TOKEN) return (*out = m->b->v[n->index]) ? WEFT_OK : WEFT_EINVAL;
    if (n->kind == P_NUM) return weft__scalar(g, dt, n->num, out);
    if (n->kind == P_BUILDER) {
        const weft_pattern_builder_t *bd = &m->p->builders[n->index];
        /* NULL without a kept error: the rewrite does not apply. The rewriter
         * runs with the graph's kept error set aside (rewriter.c), so one
         * kept now is the builder's own. */
        *out = bd->fn(m->fg, node, m->b, bd->user);
        return *out ? WEFT_OK : weft_graph_error(g);
    }
    weft_var_t *kids[PAT_MAX_KIDS];
    for (size_t i = 0; i < n->n_kids; i++) {
        weft_status_t st = build(m, node, n->kids[i], &kids[i]);
        if (st != WEFT_OK || !kids[i]) return st;
    }
    int k = elemwise_kind_of(n->cls);
    if (k >= 0 && k != WEFT_ELEMWISE_CAST)
        return weft__got(g, *out = weft_elemwise(g, (weft_elemwise_kind_t)k, n->n_kids, kids));
    const weft_op_t *op;
    weft_status_t st = weft_op_create(g, n->cls, n->props, &op);
    return st == WEFT_OK ? weft__got(g, *out = weft_op_call(g, op, n->n_kids, kids)) : st;
}

static weft_status_t pattern_transform(weft_fgraph_t *fg, weft_apply_t *node, void *user,
                                       weft_rewrite_result_t *res)
{
    pattern_t *p = user;
    if (weft_apply_n_outputs(node) != 1) return WEFT_OK;
    weft_pattern_bindings_t b;
    memset(&b, 0, sizeof b);
    b.p = p;
    mctx_t m = {fg, p, &b};
    weft_var_t *old = weft_apply_output(node, 0), *r;
    if (!match(&m, p->in, old, true)) return WEFT_OK;
    weft_status_t st = build(&m, node, p->out, &r);
    if (st != WEFT_OK || !r) return st;
    weft_dtype_t dt = weft_type_dtype(weft_var_type(old));
    if (weft_type_dtype(weft_var_type(r)) != dt &&
        weft_type_ndim(weft_var_type(r)) == weft_type_ndim(weft_var_type(old))) {
        st = weft__got(weft_fgraph_graph(fg), r = weft_cast(weft_fgraph_graph(fg), r, dt));
        if (st != WEFT_OK) return st;
    }
    if (!weft__can_replace(old, r)) return WEFT_OK;
    return weft_rewrite_result_replace(res, old, r);
}

/* ---- creation --------------------------------------------------------------------- */

static bool out_ops_buildable(const pnode_t *n)
{
    if (n->kind != P_OP) return true;
    bool ok = elemwise_kind_of(n->cls) >= 0 || n->props || n->cls->props_size == 0;
    for (size_t i = 0; ok && i < n->n_kids; i++) ok = out_ops_buildable(n->kids[i]);
    return ok;
}

static weft_status_t setup_extras(pattern_t *pat, const weft_pattern_desc_t *d)
{
    for (size_t i = 0; i < d->n_constraints; i++) {
        const weft_pattern_constraint_t *c = &d->constraints[i];
        int t = c->token ? token_index(pat, c->token, strlen(c->token), false) : -1;
        if (t < 0 || !c->fn)
            return perr(WEFT_ENOTFOUND, "constraint on unknown token %s",
                        c->token ? c->token : "(null)");
        pat->cons[t] = *c;
    }
    if (d->n_builders) {
        pat->builders = weft__vec_malloc(d->n_builders, sizeof *pat->builders);
        if (!pat->builders) return WEFT_ENOMEM;
        memcpy(pat->builders, d->builders, d->n_builders * sizeof *pat->builders);
        pat->n_builders = d->n_builders;
    }
    if (d->n_commutative) {
        pat->comm = weft__vec_malloc(d->n_commutative, sizeof *pat->comm);
        if (!pat->comm) return WEFT_ENOMEM;
        memcpy(pat->comm, d->commutative, d->n_commutative * sizeof *pat->comm);
        pat->n_comm = d->n_commutative;
    }
    pat->allow_multiple = d->allow_multiple_clients;
    return WEFT_OK;
}

static bool desc_valid(const weft_pattern_desc_t *d)
{
    if (!d || d->size < sizeof *d || !d->name || !d->in_pattern || !d->out_pattern) return false;
    if ((d->n_ops && !d->ops) || (d->n_constraints && !d->constraints)) return false;
    if ((d->n_builders && !d->builders) || (d->n_commutative && !d->commutative)) return false;
    for (size_t i = 0; i < d->n_builders; i++)
        if (!d->builders[i].name || !d->builders[i].fn) return false;
    return true;
}

static weft_status_t pattern_build(const weft_pattern_desc_t *d, pattern_t *pat)
{
    parser_t ps = {NULL, NULL, d, pat, false, 0};
    weft_status_t st = parse_all(&ps, d->in_pattern, false, &pat->in);
    if (st == WEFT_OK && pat->in->kind != P_OP)
        st = perr(WEFT_EPARSE, "the in-pattern's root must be an op");
    if (st == WEFT_OK) st = parse_all(&ps, d->out_pattern, true, &pat->out);
    if (st == WEFT_OK && !out_ops_buildable(pat->out))
        st =
            perr(WEFT_EINVAL, "an out-pattern op of a class with props needs a matcher with props");
    if (st == WEFT_OK) st = setup_extras(pat, d);
    return st;
}

weft_status_t weft_rewriter_pattern_create(const weft_pattern_desc_t *d, weft_rewriter_t **out)
{
    if (out) *out = NULL;
    pat_err[0] = '\0';
    if (!out || !desc_valid(d)) return perr(WEFT_EINVAL, "invalid pattern description");
    pattern_t *pat = calloc(1, sizeof *pat);
    if (!pat) return WEFT_ENOMEM;
    weft_status_t st = pattern_build(d, pat);
    if (st != WEFT_OK) {
        pattern_free(pat);
        return st;
    }
    const weft_op_class_t *root = pat->in->cls;
    weft_node_rewriter_desc_t nd = WEFT_NODE_REWRITER_DESC_INIT;
    nd.name = d->name;
    nd.transform = pattern_transform;
    nd.user = pat;
    nd.user_free = pattern_free;
    nd.n_classes = 1;
    nd.classes = &root;
    return weft_rewriter_node_create(&nd, out);
}
