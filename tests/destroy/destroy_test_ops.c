/* Graph-level test ops for the destroy tests (see destroy_test_ops.h). */
#include "destroy/destroy_test_ops.h"

typedef struct dt_props {
    int arity;
    int n_out;
} dt_props_t;

static weft_status_t dt_make_node(weft_graph_t *g, const weft_op_t *op, size_t n_in,
                                  weft_var_t *const *inputs, size_t *n_out,
                                  const weft_type_t **out_types)
{
    const dt_props_t *p = weft_op_props(op);
    if ((int)n_in != p->arity) {
        return weft_graph_set_error(g, WEFT_EINVAL, "%s takes %d inputs, got %zu",
                                    weft_op_name(op), p->arity, n_in);
    }
    *n_out = (size_t)p->n_out;
    for (int k = 0; k < p->n_out; k++) out_types[k] = weft_var_type(inputs[0]);
    return WEFT_OK;
}

static size_t dt_fill(weft_op_alias_t *out, size_t cap, const weft_op_alias_t *e, size_t n)
{
    for (size_t k = 0; k < n && k < cap; k++) out[k] = e[k];
    return n;
}

static size_t dt_map00(const weft_op_t *op, weft_op_alias_t *out, size_t cap)
{
    (void)op;
    static const weft_op_alias_t e[] = {{0, 0}};
    return dt_fill(out, cap, e, 1);
}

static size_t dt_map11(const weft_op_t *op, weft_op_alias_t *out, size_t cap)
{
    (void)op;
    static const weft_op_alias_t e[] = {{1, 1}};
    return dt_fill(out, cap, e, 1);
}

static size_t dt_map01(const weft_op_t *op, weft_op_alias_t *out, size_t cap)
{
    (void)op;
    static const weft_op_alias_t e[] = {{0, 0}, {1, 1}};
    return dt_fill(out, cap, e, 2);
}

/* tolerate pairs {d = 0, j = 1} */
static size_t dt_pair01(const weft_op_t *op, weft_op_alias_t *out, size_t cap)
{
    (void)op;
    static const weft_op_alias_t e[] = {{0, 1}};
    return dt_fill(out, cap, e, 1);
}

/* output 0 listed with two inputs: rule D0 */
static size_t dt_map_twice(const weft_op_t *op, weft_op_alias_t *out, size_t cap)
{
    (void)op;
    static const weft_op_alias_t e[] = {{0, 0}, {0, 1}};
    return dt_fill(out, cap, e, 2);
}

/* a view of each of two outputs on input 0 */
static size_t dt_map_two_views(const weft_op_t *op, weft_op_alias_t *out, size_t cap)
{
    (void)op;
    static const weft_op_alias_t e[] = {{0, 0}, {1, 0}};
    return dt_fill(out, cap, e, 2);
}

#define DT_CLASS(id, NAME, DM, VM, TS, TA)                                               \
    static const weft_op_class_t id = {.size = sizeof(weft_op_class_t),                \
                                       .name = NAME,                                   \
                                       .props_size = sizeof(dt_props_t),               \
                                       .make_node = dt_make_node,                      \
                                       .destroy_map = DM,                              \
                                       .view_map = VM,                                 \
                                       .tolerate_same = TS,                            \
                                       .tolerate_aliased = TA}

DT_CLASS(dt_sig, "Sigmoid", NULL, NULL, NULL, NULL);
DT_CLASS(dt_dot, "Dot", NULL, NULL, NULL, NULL);
DT_CLASS(dt_add, "Add", NULL, NULL, NULL, NULL);
DT_CLASS(dt_tv, "TransposeView", NULL, dt_map00, NULL, NULL);
DT_CLASS(dt_tv2, "SplitView", NULL, dt_map_two_views, NULL, NULL);
DT_CLASS(dt_aip, "AddInPlace", dt_map00, NULL, NULL, NULL);
DT_CLASS(dt_aip_same, "AddInPlaceS", dt_map00, NULL, dt_pair01, NULL);
DT_CLASS(dt_aip_aliased, "AddInPlaceA", dt_map00, NULL, NULL, dt_pair01);
DT_CLASS(dt_mip0, "MultiInPlace0", dt_map00, NULL, NULL, NULL);
DT_CLASS(dt_mip1, "MultiInPlace1", dt_map11, NULL, NULL, NULL);
DT_CLASS(dt_mip01, "MultiInPlace01", dt_map01, NULL, NULL, NULL);
DT_CLASS(dt_bad_destroy, "BadDestroy", dt_map_twice, NULL, NULL, NULL);
DT_CLASS(dt_bad_view, "BadView", NULL, dt_map_twice, NULL, NULL);

weft_status_t dt_ops_create(weft_graph_t *g, dt_ops_t *ops)
{
    static const dt_props_t one = {1, 1}, two = {2, 1}, two2 = {2, 2}, one2 = {1, 2};
    struct {
        const weft_op_class_t *cls;
        const dt_props_t *p;
        const weft_op_t **out;
    } t[] = {
        {&dt_sig, &one, &ops->sig},           {&dt_dot, &two, &ops->dot},
        {&dt_add, &two, &ops->add},           {&dt_tv, &one, &ops->tv},
        {&dt_aip, &two, &ops->aip},           {&dt_aip_same, &two, &ops->aip_same},
        {&dt_aip_aliased, &two, &ops->aip_aliased},
        {&dt_mip0, &two2, &ops->mip0},        {&dt_mip1, &two2, &ops->mip1},
        {&dt_mip01, &two2, &ops->mip01},      {&dt_bad_destroy, &two, &ops->bad_destroy},
        {&dt_bad_view, &two, &ops->bad_view}, {&dt_tv2, &one2, &ops->tv2},
    };
    for (size_t k = 0; k < sizeof t / sizeof t[0]; k++) {
        weft_status_t s = weft_op_create(g, t[k].cls, t[k].p, t[k].out);
        if (s != WEFT_OK) return s;
    }
    return WEFT_OK;
}
