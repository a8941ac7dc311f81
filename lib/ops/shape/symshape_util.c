/* Integer sizes for the symbolic-shape ops (symshape_int.h): every integer
 * dtype is read through one switch generated from the dtype lists, so a
 * size may be an int8 constant or a uint64 computation as well as Shape_i's
 * int64. */
#include "symshape_int.h"

#include "base/dtype_list.h"
#include "array_int.h"
#include "graph/ctor_int.h"
#include "weft/op_info.h"
#include "weft/shape_ops.h"
#include "weft/symshape.h"

bool weft__dtype_is_int(weft_dtype_t dt)
{
    int k = weft_dtype_kind(dt);
    return k == WEFT_KIND_INT || k == WEFT_KIND_UINT;
}

#define SINT_CASE(A_, B_, T, UT, sn, D) \
    case D: return (int64_t)((const T *)data)[k];
#define UINT_CASE(A_, B_, T, UT, sn, D) \
    case D: return ((const T *)data)[k] > (T)INT64_MAX ? INT64_MAX : (int64_t)((const T *)data)[k];

int64_t weft__int_at(const void *data, weft_dtype_t dt, int64_t k)
{
    switch (dt) {
        WEFT__SINT_DTYPES(SINT_CASE, ~, ~)
        WEFT__UINT_DTYPES(UINT_CASE, ~, ~)
    default: return 0; /* not an integer: the make_node checks exclude it */
    }
}

int64_t weft__tensor_int_at(const weft_tensor_t *t, int64_t i)
{
    int64_t off = weft_tensor_ndim(t) == 0 ? 0 : i * weft_tensor_stride(t, 0);
    return weft__int_at(weft_tensor_data(t), weft_tensor_dtype(t), off);
}

bool weft__const_int_at(const weft_var_t *v, int64_t i, int64_t *out)
{
    const void *data;
    size_t nbytes;
    if (!v || !weft_var_is_constant(v)) return false;
    weft_dtype_t dt = weft_type_dtype(weft_var_type(v));
    if (!weft__dtype_is_int(dt) || weft_constant_data(v, &data, &nbytes) != WEFT_OK) return false;
    if ((uint64_t)(i + 1) * weft_dtype_size(dt) > nbytes) return false;
    *out = weft__int_at(data, dt, i);
    return true;
}

int64_t weft__size_static(const weft_var_t *v)
{
    int64_t c;
    int i;
    if (weft__const_int_at(v, 0, &c)) return c >= 0 ? c : WEFT_DIM_UNKNOWN;
    weft_apply_t *own = weft_var_owner(v);
    if (own && weft_shape_op_info(weft_apply_op(own), &i) && i >= 0)
        return weft_type_dim(weft_var_type(weft_apply_input(own, 0)), i);
    return WEFT_DIM_UNKNOWN;
}

/* The 0-d size stacked as entry d of v when v is weft_stack's Join of
 * DimShuffle{(-1)}s of 0-d sizes; NULL otherwise. */
static const weft_var_t *stacked_size(const weft_var_t *v, int64_t d)
{
    weft_apply_t *own = weft_var_owner(v);
    if (!own || weft_op_class(weft_apply_op(own)) != &weft__join_class ||
        (int64_t)weft_apply_n_inputs(own) != weft_type_dim(weft_var_type(v), 0))
        return NULL;
    weft_var_t *e = weft_apply_input(own, (size_t)d);
    weft_apply_t *ds = weft_var_owner(e);
    int order[WEFT_MAX_NDIM], n = 0;
    if (!ds || weft_dimshuffle_op_info(weft_apply_op(ds), order, &n) != WEFT_OK || n != 1 ||
        order[0] != WEFT_DIMSHUFFLE_NEW)
        return NULL;
    return weft_apply_input(ds, 0);
}

bool weft__shape_entry_static(const weft_var_t *v, int64_t d, int64_t *out)
{
    if (weft__const_int_at(v, d, out)) return true;
    const weft_var_t *s = stacked_size(v, d);
    if (!s) return false;
    if (weft__const_int_at(s, 0, out)) return true;
    return (*out = weft__size_static(s)) >= 0;
}

weft_status_t weft__check_size_input(weft_graph_t *g, const char *name, size_t i, weft_var_t *v,
                                     bool ints, const char *file, int line)
{
    if (!v) return weft__ctor_status(g) != WEFT_OK ? weft__ctor_status(g) : WEFT_EINVAL;
    char vb[256];
    weft_var_print(v, vb, sizeof vb);
    if (weft_var_graph(v) != g)
        return weft_graph_set_error(g, WEFT_EFOREIGN, "%s (at %s:%d): input %zu %s belongs to "
                                    "another graph context", name, file, line, i, vb);
    const weft_type_t *t = weft_var_type(v);
    int kind = weft_dtype_kind(weft_type_dtype(t));
    bool ok = weft_type_kind(t) == WEFT_TYPE_TENSOR && weft_type_ndim(t) == 0 &&
              (ints ? weft__dtype_is_int(weft_type_dtype(t))
                    : kind != WEFT_KIND_COMPLEX && kind != WEFT_KIND_BOOL);
    if (!ok)
        return weft_graph_set_error(g, WEFT_ETYPE, "%s (at %s:%d): input %zu %s is not a 0-d %s "
                                    "tensor", name, file, line, i, vb,
                                    ints ? "integer" : "integer or float");
    return WEFT_OK;
}
