/* Constructors of weft/symshape.h over Alloc's symbolic form (alloc.c) and
 * ARange (ranges_sym.c): alloc / broadcast_to, full / zeros / ones and eye
 * with sizes that are graph variables. */
#include <string.h>

#include "array_int.h"
#include "graph/ctor_int.h"
#include "ops_int.h"
#include "symshape_int.h"
#include "weft/elemwise.h"
#include "weft/shape_ops.h"
#include "weft/symshape.h"

static weft_status_t alloc_sym_build(weft_graph_t *g, const char *name, weft_var_t *v, int n,
                                     weft_var_t *const *shape, const char *file, int line,
                                     weft_var_t **out)
{
    if (n > 0 && !shape)
        return weft_graph_set_error(g, WEFT_EINVAL, "%s (at %s:%d): NULL shape", name, file,
                                    line);
    return weft__alloc_build(g, name, v, n, NULL, shape, file, line, out);
}

weft_var_t *weft_alloc_sym_at(weft_graph_t *g, weft_var_t *value, int n, weft_var_t *const *shape,
                              const char *file, int line)
{
    weft_var_t *out = NULL;
    if (!g) return NULL;
    weft__ctor_begin(g);
    weft_status_t st = alloc_sym_build(g, "alloc_sym", value, n, shape, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_alloc_sym", file, line);
}

weft_var_t *weft_full_sym_at(weft_graph_t *g, int n, weft_var_t *const *shape, double value,
                             weft_dtype_t dtype, const char *file, int line)
{
    weft_var_t *out = NULL, *c = NULL;
    if (!g) return NULL;
    weft__ctor_begin(g);
    weft_status_t st = weft__got(g, c = weft_constant_scalar_at(g, dtype, value, file, line));
    if (st == WEFT_OK) st = alloc_sym_build(g, "full_sym", c, n, shape, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_full_sym", file, line);
}

/* arange(0, n) as int64, with axis new_axis (0 or 1) of a 2-d result
 * broadcast. */
static weft_status_t index_axis(weft_graph_t *g, weft_var_t *n, int new_axis, const char *file,
                                int line, weft_var_t **out)
{
    weft_var_t *zero, *one, *r;
    weft_status_t st = weft__got(g, zero = weft_constant_scalar_at(g, WEFT_INT64, 0, file, line));
    if (st == WEFT_OK)
        st = weft__got(g, one = weft_constant_scalar_at(g, WEFT_INT64, 1, file, line));
    if (st == WEFT_OK)
        st = weft__got(g, r = weft_arange_sym_at(g, zero, n, one, WEFT_INT64, file, line));
    int order[2] = {0, 0};
    order[new_axis] = WEFT_DIMSHUFFLE_NEW;
    if (st == WEFT_OK) st = weft__got(g, *out = weft_dimshuffle_at(g, r, 2, order, file, line));
    return st;
}

static weft_status_t eye_sym_build(weft_graph_t *g, weft_var_t *n, weft_var_t *m, weft_var_t *k,
                                   weft_dtype_t dtype, const char *file, int line,
                                   weft_var_t **out)
{
    weft_var_t *in[3] = {n, m, k}, *rows, *cols, *eq;
    for (size_t i = 0; i < 3; i++) {
        weft_status_t st = weft__check_size_input(g, "eye_sym", i, in[i], true, file, line);
        if (st != WEFT_OK) return st;
    }
    if (weft_dtype_kind(dtype) < 0 || weft_dtype_kind(dtype) == WEFT_KIND_COMPLEX)
        return weft_graph_set_error(g, WEFT_ETYPE, "eye_sym (at %s:%d): dtype %d is not a real "
                                    "dtype", file, line, (int)dtype);
    weft_status_t st = index_axis(g, n, 1, file, line, &rows);
    if (st == WEFT_OK) st = index_axis(g, m, 0, file, line, &cols);
    if (st == WEFT_OK)
        st = weft__got(g, rows = weft_binary_at(g, WEFT_ELEMWISE_ADD, rows, k, file, line));
    if (st == WEFT_OK)
        st = weft__got(g, eq = weft_binary_at(g, WEFT_ELEMWISE_EQ, rows, cols, file, line));
    if (st == WEFT_OK) st = weft__got(g, *out = weft_cast_at(g, eq, dtype, file, line));
    return st;
}

weft_var_t *weft_eye_sym_at(weft_graph_t *g, weft_var_t *n, weft_var_t *m, weft_var_t *k,
                            weft_dtype_t dtype, const char *file, int line)
{
    weft_var_t *out = NULL;
    if (!g) return NULL;
    weft__ctor_begin(g);
    weft_status_t st = eye_sym_build(g, n, m, k, dtype, file, line, &out);
    return weft__ctor_end(g, st, out, "weft_eye_sym", file, line);
}
