/* Helpers shared by the built-in algebraic rewrites: op kind tests, constant
 * value tests, the type guard every replacement passes, the registry classes
 * the rewrites compare against (looked up once) and a DimShuffle's order
 * (weft/op_info.h). */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/dtype_list.h"
#include "graph/ctor_int.h"
#include "rewrite_int.h"
#include "weft/elemwise.h"
#include "weft/op_info.h"
#include "weft/ops.h"
#include "weft/shape_ops.h"

const weft_op_class_t *weft__class(const char *name)
{
    return weft_ops_find_class(name);
}

static weft__classes_t classes;
static pthread_once_t classes_once = PTHREAD_ONCE_INIT;

static void classes_init(void)
{
    classes.dimshuffle = weft_ops_find_class("DimShuffle");
    classes.sum = weft_ops_find_class("Sum");
    classes.sum_axes = weft_ops_find_class("SumAxes");
    classes.dot = weft_ops_find_class("Dot");
    classes.gemm = weft_ops_find_class("Gemm");
    classes.reduce_grad = weft_ops_find_class("ReduceGrad");
}

const weft__classes_t *weft__classes(void)
{
    pthread_once(&classes_once, classes_init);
    return &classes;
}

#define ELEM_INT(A_, B_, T, UT, sn, D) \
    case D: return (double)((const T *)data)[i];
#define ELEM_FLOAT(A_, B_, T, sn, D) ELEM_INT(A_, B_, T, T, sn, D)

/* Element i as a double (exact for every dtype but 64-bit integers beyond
 * 2^53); NaN for a dtype without a real value. */
static double elem_at(const void *data, weft_dtype_t dt, size_t i)
{
    switch (dt) {
    case WEFT_BOOL: return ((const unsigned char *)data)[i] != 0;
    WEFT__SINT_DTYPES(ELEM_INT, ~, ~)
    WEFT__UINT_DTYPES(ELEM_INT, ~, ~)
    WEFT__FLOAT_DTYPES(ELEM_FLOAT, ~, ~)
    ELEM_FLOAT(~, ~, weft__f16, f16, WEFT_FLOAT16)
    /* complex: the real part when the imaginary part is 0, else NaN (equal
     * to no real value) */
    case WEFT_COMPLEX64: {
        const float *z = (const float *)data + 2 * i;
        return z[1] == 0 ? z[0] : NAN;
    }
    case WEFT_COMPLEX128: {
        const double *z = (const double *)data + 2 * i;
        return z[1] == 0 ? z[0] : NAN;
    }
    default: return NAN;
    }
}

bool weft__is_const_value(const weft_var_t *v, double value)
{
    const void *data;
    size_t nbytes;
    if (!weft_var_is_constant(v) || weft_constant_data(v, &data, &nbytes) != WEFT_OK) return false;
    weft_dtype_t dt = weft_type_dtype(weft_var_type(v));
    size_t n = nbytes / weft_dtype_size(dt);
    if (n == 0) return false;
    for (size_t i = 0; i < n; i++)
        if (elem_at(data, dt, i) != value) return false;
    return true;
}

/* new's static length 1 where old's may be longer: the replacement would
 * shrink a broadcast result (x[?] * 0 -> the constant 0 of type [1]). */
static bool drops_broadcast(const weft_type_t *old_t, const weft_type_t *new_t)
{
    for (int d = 0; d < weft_type_ndim(old_t) && d < weft_type_ndim(new_t); d++)
        if (weft_type_dim(new_t, d) == 1 && weft_type_dim(old_t, d) != 1) return true;
    return false;
}

bool weft__can_replace(const weft_var_t *old_var, const weft_var_t *new_var)
{
    if (!new_var) return false;
    const weft_type_t *a = weft_var_type(old_var), *b = weft_var_type(new_var);
    return weft_type_is_super(a, b) && weft_type_dtype(a) == weft_type_dtype(b) &&
           !drops_broadcast(a, b);
}

bool weft__ew_kind(const weft_apply_t *node, int *kind)
{
    weft_elemwise_kind_t k;
    int ip;
    if (!node || !weft_elemwise_op_info(weft_apply_op(node), &k, &ip) || ip != -1) return false;
    *kind = (int)k;
    return true;
}

weft_apply_t *weft__ew_owner(const weft_var_t *v, int kind)
{
    weft_apply_t *a = weft_var_owner(v);
    int k;
    return a && weft__ew_kind(a, &k) && k == kind ? a : NULL;
}

bool weft__dimshuffle_order(const weft_op_t *op, int *order, int *n)
{
    return weft_dimshuffle_op_info(op, order, n) == WEFT_OK;
}

weft_status_t weft__scalar(weft_graph_t *g, weft_dtype_t dtype, double value, weft_var_t **out)
{
    return weft__got(g, *out = weft_constant_scalar_at(g, dtype, value, __FILE__, __LINE__));
}
