/* Test ops, the context fixture and the recording feature shared by the
 * graph core tests (see graph_fixture.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "graph_fixture.h"

/* ---- ops ------------------------------------------------------------------ */

static weft_status_t want_inputs(weft_graph_t *g, const weft_op_t *op, size_t n_in, size_t want)
{
    if (n_in == want) return WEFT_OK;
    return weft_graph_set_error(g, WEFT_EINVAL, "%s takes %zu inputs, got %zu", weft_op_name(op),
                                want, n_in);
}

/* Output length of one dimension under broadcasting; -2 when incompatible. */
static int64_t bcast(int64_t a, int64_t b)
{
    if (a == b) return a;
    if (a == 1) return b;
    if (b == 1) return a;
    if (a == WEFT_DIM_UNKNOWN || b == WEFT_DIM_UNKNOWN) return WEFT_DIM_UNKNOWN;
    return -2;
}

static weft_status_t binary_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                      weft_var_t *const *in, size_t *n_out, const weft_type_t **out)
{
    weft_status_t s = want_inputs(g, op, n_in, 2);
    if (s != WEFT_OK) return s;
    const weft_type_t *a = weft_var_type(in[0]), *b = weft_var_type(in[1]);
    char ta[64], tb[64];
    weft_type_print(a, ta, sizeof(ta));
    weft_type_print(b, tb, sizeof(tb));
    if (!weft_type_in_same_class(a, b))
        return weft_graph_set_error(g, WEFT_ETYPE, "input 1 type %s vs %s", tb, ta);
    int64_t dims[WEFT_MAX_NDIM];
    for (int i = 0; i < weft_type_ndim(a); i++) {
        dims[i] = bcast(weft_type_dim(a, i), weft_type_dim(b, i));
        if (dims[i] == -2)
            return weft_graph_set_error(g, WEFT_ETYPE, "input 1 type %s vs %s", tb, ta);
    }
    *n_out = 1;
    return weft_type_tensor(g, weft_type_dtype(a), weft_type_ndim(a), dims, &out[0]);
}

static weft_status_t unary_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                     weft_var_t *const *in, size_t *n_out, const weft_type_t **out)
{
    weft_status_t s = want_inputs(g, op, n_in, 1);
    if (s != WEFT_OK) return s;
    *n_out = 1;
    out[0] = weft_var_type(in[0]);
    return WEFT_OK;
}

static weft_status_t split_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                     weft_var_t *const *in, size_t *n_out, const weft_type_t **out)
{
    weft_status_t s = want_inputs(g, op, n_in, 1);
    if (s != WEFT_OK) return s;
    *n_out = 2;
    out[0] = out[1] = weft_var_type(in[0]);
    return WEFT_OK;
}

static int default_one(const weft_op_t *op)
{
    (void)op;
    return 1;
}

static size_t alias_00(const weft_op_t *op, weft_op_alias_t *out, size_t cap)
{
    (void)op;
    if (cap < 1) return 0;
    out[0] = (weft_op_alias_t){0, 0};
    return 1;
}

#define FX_CLASS(var, nm, mk, ...)                                                                 \
    const weft_op_class_t var = {                                                                  \
        .size = sizeof(weft_op_class_t), .name = nm, .make_node = mk, __VA_ARGS__}

FX_CLASS(fx_add_class, "Add", binary_make_node, .props_size = 0);
FX_CLASS(fx_mul_class, "Mul", binary_make_node, .props_size = 0);
FX_CLASS(fx_neg_class, "Neg", unary_make_node, .props_size = 0);
FX_CLASS(fx_exp_class, "Exp", unary_make_node, .props_size = 0);
FX_CLASS(fx_split_class, "Split", split_make_node, .props_size = 0);
FX_CLASS(fx_split_d_class, "SplitD", split_make_node, .default_output = default_one);
FX_CLASS(fx_add_inplace_class, "AddInplace", binary_make_node, .destroy_map = alias_00);
FX_CLASS(fx_view_class, "View", unary_make_node, .view_map = alias_00);

/* ---- fixture ------------------------------------------------------------------ */

int fx_setup(void **state)
{
    fx_t *f = calloc(1, sizeof(*f));
    if (!f || weft_graph_create(NULL, &f->g) != WEFT_OK) return -1;
    int64_t three = 3;
    int ok = weft_type_tensor(f->g, WEFT_FLOAT64, 1, NULL, &f->vec) == WEFT_OK &&
             weft_type_tensor(f->g, WEFT_FLOAT64, 1, &three, &f->vec3) == WEFT_OK &&
             weft_type_tensor(f->g, WEFT_FLOAT64, 0, NULL, &f->scalar) == WEFT_OK &&
             weft_type_tensor(f->g, WEFT_INT32, 1, NULL, &f->ivec) == WEFT_OK &&
             weft_op_create(f->g, &fx_add_class, NULL, &f->add) == WEFT_OK &&
             weft_op_create(f->g, &fx_mul_class, NULL, &f->mul) == WEFT_OK &&
             weft_op_create(f->g, &fx_neg_class, NULL, &f->neg) == WEFT_OK &&
             weft_op_create(f->g, &fx_exp_class, NULL, &f->exp) == WEFT_OK &&
             weft_op_create(f->g, &fx_split_class, NULL, &f->split) == WEFT_OK &&
             weft_op_create(f->g, &fx_split_d_class, NULL, &f->split_d) == WEFT_OK &&
             weft_op_create(f->g, &fx_add_inplace_class, NULL, &f->add_inplace) == WEFT_OK &&
             weft_op_create(f->g, &fx_view_class, NULL, &f->view) == WEFT_OK;
    *state = f;
    return ok ? 0 : -1;
}

int fx_teardown(void **state)
{
    fx_t *f = *state;
    if (f) weft_graph_destroy(f->g);
    free(f);
    return 0;
}

weft_var_t *fx_var(fx_t *f, const char *name)
{
    weft_var_t *v = NULL;
    assert_non_null(v = weft_var_create(f->g, f->vec, name));
    return v;
}

weft_var_t *fx_un(fx_t *f, const weft_op_t *op, weft_var_t *a)
{
    weft_var_t *v = NULL;
    assert_non_null(v = weft_op_call(f->g, op, 1, &a));
    return v;
}

weft_var_t *fx_bin(fx_t *f, const weft_op_t *op, weft_var_t *a, weft_var_t *b)
{
    weft_var_t *in[2] = {a, b}, *v = NULL;
    assert_non_null(v = weft_op_call(f->g, op, 2, in));
    return v;
}

weft_fgraph_t *fx_fgraph(fx_t *f, size_t n_in, weft_var_t *const *in, size_t n_out,
                         weft_var_t *const *out, bool clone, size_t n_feat,
                         weft_feature_t *const *feats)
{
    weft_fgraph_options_t o = WEFT_FGRAPH_OPTIONS_INIT;
    o.clone = clone;
    o.n_features = n_feat;
    o.features = feats;
    weft_fgraph_t *fg = NULL;
    weft_status_t s = weft_fgraph_create(f->g, n_in, in, n_out, out, &o, NULL, &fg);
    if (s != WEFT_OK) fprintf(stderr, "fgraph_create: %s\n", weft_graph_last_error(f->g));
    assert_int_equal(s, WEFT_OK);
    return fg;
}

/* ---- recording feature ------------------------------------------------------ */

static void rec_log(rec_t *r, const char *fmt, ...) WEFT_PRINTF(2, 3);
static void rec_log(rec_t *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(r->log + r->len, sizeof(r->log) - r->len, fmt, ap);
    va_end(ap);
    if (n > 0 && r->len + (size_t)n < sizeof(r->log)) r->len += (size_t)n;
}

static void rec_set_live(rec_t *r, const weft_apply_t *a, int val, const char *what)
{
    size_t id = (size_t)weft_apply_id(a);
    if (id >= r->live_cap) {
        size_t nc = (id + 1) * 2;
        r->live = realloc(r->live, nc * sizeof(int));
        memset(r->live + r->live_cap, 0, (nc - r->live_cap) * sizeof(int));
        r->live_cap = nc;
    }
    if (r->live[id] == val) {
        r->protocol_errors++;
        if (r->strict) fprintf(stderr, "rec: protocol error: %s of apply %zu\n", what, id);
    }
    r->live[id] = val;
}

static weft_status_t rec_on_attach(weft_feature_t *self, weft_fgraph_t *fg)
{
    rec_t *r = (rec_t *)self;
    (void)fg;
    if (r->refuse_attach) return WEFT_EALREADY;
    rec_log(r, "attach;");
    return WEFT_OK;
}

static void rec_on_detach(weft_feature_t *self, weft_fgraph_t *fg)
{
    (void)fg;
    rec_log((rec_t *)self, "detach;");
}

static weft_status_t rec_on_import(weft_feature_t *self, weft_fgraph_t *fg, weft_apply_t *node,
                                   const char *reason)
{
    rec_t *r = (rec_t *)self;
    (void)fg;
    rec_set_live(r, node, 1, "double import");
    rec_log(r, "import %s:%s;", weft_op_name(weft_apply_op(node)), reason ? reason : "");
    return WEFT_OK;
}

static weft_status_t rec_on_prune(weft_feature_t *self, weft_fgraph_t *fg, weft_apply_t *node,
                                  const char *reason)
{
    rec_t *r = (rec_t *)self;
    (void)fg;
    (void)reason;
    rec_set_live(r, node, 0, "unknown prune");
    rec_log(r, "prune %s;", weft_op_name(weft_apply_op(node)));
    return WEFT_OK;
}

static weft_status_t rec_on_change(weft_feature_t *self, weft_fgraph_t *fg, weft_apply_t *node,
                                   size_t i, weft_var_t *old_var, weft_var_t *new_var,
                                   const char *reason)
{
    rec_t *r = (rec_t *)self;
    (void)fg;
    (void)old_var;
    (void)new_var;
    if (weft_apply_is_output_slot(node))
        rec_log(r, "change Output(%zu).%zu:%s;", weft_apply_output_slot(node), i,
                reason ? reason : "");
    else
        rec_log(r, "change %s.%zu:%s;", weft_op_name(weft_apply_op(node)), i, reason ? reason : "");
    return WEFT_OK;
}

static weft_status_t rec_on_validate(weft_feature_t *self, weft_fgraph_t *fg)
{
    rec_t *r = (rec_t *)self;
    if (r->reject_validate)
        return weft_fgraph_set_error(fg, WEFT_EINCONSISTENT, "rec: validation rejected");
    if (r->reject_if_present && weft_fgraph_contains_apply(fg, r->reject_if_present))
        return weft_fgraph_set_error(fg, WEFT_EINCONSISTENT, "rec: forbidden node present");
    return WEFT_OK;
}

static weft_status_t rec_orderings(weft_feature_t *self, weft_fgraph_t *fg, weft_orderings_t *o)
{
    rec_t *r = (rec_t *)self;
    for (size_t k = 0; k < r->n_ord; k++) {
        if (!weft_fgraph_contains_apply(fg, r->ord_before[k]) ||
            !weft_fgraph_contains_apply(fg, r->ord_after[k]))
            continue;
        weft_status_t s = weft_orderings_add(o, r->ord_before[k], r->ord_after[k]);
        if (s != WEFT_OK) return s;
    }
    return WEFT_OK;
}

static weft_status_t rec_clone(const weft_feature_t *self, weft_feature_t **out)
{
    (void)self;
    rec_t *c = rec_new();
    if (!c) return WEFT_ENOMEM;
    *out = &c->base;
    return WEFT_OK;
}

static void rec_destroy(weft_feature_t *self)
{
    rec_t *r = (rec_t *)self;
    if (r->destroyed) *r->destroyed = 1;
    free(r->live);
    free(r);
}

const weft_feature_class_t rec_class = {
    .size = sizeof(weft_feature_class_t),
    .name = "Recorder",
    .on_attach = rec_on_attach,
    .on_detach = rec_on_detach,
    .on_import = rec_on_import,
    .on_prune = rec_on_prune,
    .on_change_input = rec_on_change,
    .on_validate = rec_on_validate,
    .orderings = rec_orderings,
    .clone = rec_clone,
    .destroy = rec_destroy,
};

rec_t *rec_new(void)
{
    rec_t *r = calloc(1, sizeof(*r));
    if (!r) return NULL;
    r->base.cls = &rec_class;
    r->base.data = r;
    r->strict = true;
    return r;
}

size_t rec_n_live(const rec_t *r)
{
    size_t n = 0;
    for (size_t k = 0; k < r->live_cap; k++) n += r->live[k] == 1;
    return n;
}
